//! One member of a large set: the element type of the set's hashtable. A thin pointer (8
//! bytes, one table slot) to one allocation holding the member's length and bytes; nothing
//! else. Its only `unsafe` is four calls into `ThinBuf` (the listpack's owned buffer), which
//! owns the allocation code.
//!
//! # Layout
//!
//! ```text
//!  short member (len < 255):          long member (len >= 255):
//!  +-----+---------------+            +------+-------------+---------------+
//!  | len |    bytes      |            | 0xFF | len: u64 LE |    bytes      |
//!  +-----+---------------+            +------+-------------+---------------+
//!     1        len                       1          8             len
//! ```
//!
//! A 10-byte member costs 11 bytes, the 16-byte size class; Valkey's sds for the same member
//! takes 3 header bytes and a NUL (14, also the 16-byte class). The allocation has alignment 1,
//! so the allocator's size class is the only slack.

use std::fmt;

use crate::table::Entry;
use crate::types::listpack::raw::ThinBuf;

/// The first byte of a long member's header.
const LONG_MARK: u8 = 0xFF;
const LONG_HEADER_BYTES: usize = 1 + 8;
/// Members shorter than this are built on the stack before they are copied to the heap.
const STACK_BUILD_BYTES: usize = 128;

/// A set member in its own allocation (see the module documentation).
pub struct Member {
    buf: ThinBuf,
}

const _: () = assert!(std::mem::size_of::<Member>() == 8);

fn header_bytes(len: usize) -> usize {
    if len < usize::from(LONG_MARK) {
        1
    } else {
        LONG_HEADER_BYTES
    }
}

impl Member {
    pub fn new(bytes: &[u8]) -> Member {
        let len = bytes.len();
        let header = header_bytes(len);
        let total = header + len;
        let mut stack = [0u8; STACK_BUILD_BYTES];
        let mut heap = Vec::new();
        let out: &mut [u8] = if total <= STACK_BUILD_BYTES {
            &mut stack[..total]
        } else {
            heap.resize(total, 0);
            &mut heap
        };
        if header == 1 {
            out[0] = len as u8;
        } else {
            out[0] = LONG_MARK;
            out[1..LONG_HEADER_BYTES].copy_from_slice(&(len as u64).to_le_bytes());
        }
        out[header..].copy_from_slice(bytes);
        Member { buf: ThinBuf::from_slice(out) }
    }

    /// (header bytes, member length), read from the header.
    fn shape(&self) -> (usize, usize) {
        // SAFETY: every member allocation is at least one byte (the header's first byte).
        let first = unsafe { self.buf.as_slice(1) }[0];
        if first != LONG_MARK {
            return (1, usize::from(first));
        }
        // SAFETY: a first byte of LONG_MARK means the full 9-byte header was written.
        let h = unsafe { self.buf.as_slice(LONG_HEADER_BYTES) };
        let len = u64::from_le_bytes(h[1..].try_into().expect("8 length bytes"));
        (LONG_HEADER_BYTES, usize::try_from(len).expect("a member this long was allocated"))
    }

    /// The member's bytes.
    pub fn bytes(&self) -> &[u8] {
        let (header, len) = self.shape();
        // SAFETY: the allocation is exactly `header + len` bytes, as `new` made it.
        let all = unsafe { self.buf.as_slice(header + len) };
        &all[header..]
    }

    /// The bytes the allocator charges for this member.
    pub fn alloc_bytes(&self) -> usize {
        let (header, len) = self.shape();
        crate::memory::size_class(header + len)
    }

    /// What a member of `len` bytes will cost, before it is built.
    pub fn alloc_bytes_for(len: usize) -> usize {
        crate::memory::size_class(header_bytes(len) + len)
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let (header, len) = self.shape();
        // SAFETY: `header + len` is the allocation's length, and `self` is never used again.
        unsafe { self.buf.free(header + len) };
    }
}

impl Clone for Member {
    fn clone(&self) -> Member {
        Member::new(self.bytes())
    }
}

impl fmt::Debug for Member {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", self.bytes().escape_ascii())
    }
}

impl Entry for Member {
    fn key(&self) -> &[u8] {
        self.bytes()
    }

    fn prefetch_addr(&self) -> *const u8 {
        // SAFETY: every member allocation is at least one byte long.
        unsafe { self.buf.as_slice(1) }.as_ptr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_members_round_trip() {
        for len in [0usize, 1, 10, 127, 128, 254, 255, 256, 1000, 70_000] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let m = Member::new(&bytes);
            assert_eq!(m.bytes(), &bytes[..], "length {len}");
            assert_eq!(m.clone().bytes(), &bytes[..]);
            assert_eq!(m.alloc_bytes(), Member::alloc_bytes_for(len));
            assert!(m.alloc_bytes() > len);
        }
    }

    #[test]
    fn binary_bytes_are_kept() {
        let m = Member::new(b"\0\r\n\xFF\0");
        assert_eq!(m.key(), b"\0\r\n\xFF\0");
        assert_eq!(format!("{m:?}"), "\"\\x00\\r\\n\\xff\\x00\"");
    }
}
