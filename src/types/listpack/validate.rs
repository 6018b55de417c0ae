//! Full validation of listpack bytes from outside (an RDB payload, RESTORE): the header, every
//! entry's encoding and backlen, the terminator and the count. It reads only through
//! bounds-checked slices, so no input can make it panic or read out of bounds; it allocates
//! nothing.
//!
//! It is as strict as Valkey's deep integrity check (`lpValidateIntegrity`) and a little
//! stricter where Valkey's is lenient without purpose: the backlen bytes must be exactly the
//! canonical ones, and the first 0xFF met where an entry could start must be the last byte.

use std::fmt;

use super::encoding::{self, COUNT_UNKNOWN, EOF, HEADER_BYTES};

/// Why bytes are not a valid listpack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListpackError {
    /// Shorter than header + terminator, or longer than the u32 header can say.
    BadSize,
    /// The header's total-bytes field is not the length given.
    TotalBytesMismatch,
    /// The last byte is not 0xFF, or 0xFF appears where an entry should start.
    BadTerminator,
    /// An entry's first byte is no encoding, or its data runs past the terminator.
    BadEntry { offset: usize },
    /// An entry's backlen is not the canonical encoding of its length.
    BadBacklen { offset: usize },
    /// The header's element count is neither the real count nor 65535 ("unknown").
    CountMismatch,
}

impl fmt::Display for ListpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListpackError::BadSize => f.write_str("listpack size out of range"),
            ListpackError::TotalBytesMismatch => f.write_str("listpack total bytes mismatch"),
            ListpackError::BadTerminator => f.write_str("listpack terminator misplaced"),
            ListpackError::BadEntry { offset } => write!(f, "bad listpack entry at {offset}"),
            ListpackError::BadBacklen { offset } => write!(f, "bad listpack backlen at {offset}"),
            ListpackError::CountMismatch => f.write_str("listpack element count mismatch"),
        }
    }
}

impl std::error::Error for ListpackError {}

/// Check `b` and return its real element count.
pub fn validate(b: &[u8]) -> Result<usize, ListpackError> {
    if b.len() < HEADER_BYTES + 1 || u32::try_from(b.len()).is_err() {
        return Err(ListpackError::BadSize);
    }
    let total = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
    if total != b.len() {
        return Err(ListpackError::TotalBytesMismatch);
    }
    if b[b.len() - 1] != EOF {
        return Err(ListpackError::BadTerminator);
    }
    // The entries must tile `HEADER_BYTES..len - 1` exactly; none may touch the terminator.
    let body = &b[..b.len() - 1];
    let mut at = HEADER_BYTES;
    let mut count = 0usize;
    while at < body.len() {
        if body[at] == EOF {
            return Err(ListpackError::BadTerminator);
        }
        let (_, encoded_len) =
            encoding::decode(body, at).ok_or(ListpackError::BadEntry { offset: at })?;
        let mut want = [0u8; 5];
        let back_len = encoding::encode_backlen(encoded_len, &mut want);
        let back_at = at + encoded_len;
        match body.get(back_at..back_at + back_len) {
            Some(got) if got == &want[..back_len] => {}
            Some(_) => return Err(ListpackError::BadBacklen { offset: at }),
            None => return Err(ListpackError::BadEntry { offset: at }),
        }
        at = back_at + back_len;
        count += 1;
    }
    let header_count = u16::from_le_bytes([b[4], b[5]]);
    if header_count != COUNT_UNKNOWN && usize::from(header_count) != count {
        return Err(ListpackError::CountMismatch);
    }
    Ok(count)
}
