//! SETBIT and GETBIT: one bit of a string, at a bit offset (see `types::bitmap` for the
//! numbering).
//!
//! SETBIT edits the value where it lies (`StrEdit::SetRange` of the one byte): in place
//! inside the string, and when the offset lies past its end the value grows once, zero
//! filled, with the greedy room of every growing string edit. As in Valkey, the value is
//! made `raw` even when the bit already had the value asked for, but only a change (the bit,
//! or the length) counts as a write: the `setbit` event, the dirty counter, propagation.

use bytes::Bytes;

use super::{bit_offset, create_zeroed, read_string, BitError};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::keyspace::db::StrEdit;
use crate::types::string::parse_i64;

/// Every byte value, so that a one-byte edit can borrow its byte for as long as it likes.
static BYTE_VALUES: [u8; 256] = {
    let mut all = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        all[i] = i as u8;
        i += 1;
    }
    all
};

fn one_byte(b: u8) -> &'static [u8] {
    &BYTE_VALUES[b as usize..b as usize + 1]
}

/// The byte holding bit `offset`, and the bit's mask in it.
fn byte_and_mask(offset: u64) -> (usize, u8) {
    let byte = usize::try_from(offset / 8).expect("a bit offset's byte fits in memory");
    (byte, 0x80 >> (offset % 8))
}

/// SETBIT key offset value: replies the bit's previous value.
pub(super) fn setbit(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let key = &argv[1];
    let offset = bit_offset(ctx, &argv[2], None)?;
    let on = match parse_i64(&argv[3]) {
        Some(0) => false,
        Some(1) => true,
        _ => return Err(BitError::SetbitValue.into()),
    };
    let (byte, mask) = byte_and_mask(offset);
    let now_ms = ctx.now_ms;
    let db = ctx.db();
    let edited = db.update_str(key, now_ms, |s| {
        let mut scratch = [0u8; 20];
        let old = s.bytes(&mut scratch).get(byte).copied();
        let current = old.unwrap_or(0);
        let new = if on { current | mask } else { current & !mask };
        // A change when the bit flips or the string grows to reach it.
        let changed = old != Some(new);
        let edit = StrEdit::SetRange { offset: byte, bytes: one_byte(new) };
        Ok::<_, CmdError>((edit, (current & mask != 0, changed)))
    })?;
    let (was_set, changed) = edited.unwrap_or_else(|| {
        let new = if on { mask } else { 0 };
        create_zeroed(db, key, byte + 1, &[(byte, new)], now_ms);
        (false, true)
    });
    if changed {
        ctx.changed(key, 1, KeyspaceEvents::STRING, "setbit");
    }
    ctx.out.int(was_set as i64);
    Ok(())
}

/// GETBIT key offset: 0 past the end of the string, or for a missing key.
pub(super) fn getbit(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let offset = bit_offset(ctx, &argv[2], None)?;
    let (byte, mask) = byte_and_mask(offset);
    let now_ms = ctx.now_ms;
    let set = match read_string(ctx.db(), &argv[1], now_ms)? {
        None => false,
        Some(s) => {
            let mut scratch = [0u8; 20];
            s.bytes(&mut scratch).get(byte).is_some_and(|b| b & mask != 0)
        }
    };
    ctx.out.int(set as i64);
    Ok(())
}
