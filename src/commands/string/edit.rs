//! In-place edits and partial reads of string values: APPEND, SETRANGE, GETRANGE (and its
//! old name SUBSTR), STRLEN, and the counters INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT.
//!
//! Edits keep the key's TTL (they change the value in place); a missing key is created
//! without one. Growth is bounded by `proto-max-bulk-len` before anything is allocated.
//!
//! Every check (length limits, integer and float syntax) reads the stored value through a
//! borrowed view and is decided before the edit, so a refused command copies and changes
//! nothing; an accepted edit costs what it changes (see `keyspace::heap_str`).

use std::ops::Range;

use bytes::Bytes;

use super::read_str;
use crate::commands::args::int_arg;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::keyspace::db::{StrEdit, Ttl, ValueRef};
use crate::keyspace::entry::{NewValue, INLINE_VALUE_MAX};
use crate::keyspace::heap_str::HeapStr;
use crate::types::string::{LongDouble, StrRef, StrValue};

/// Refuse a string of `len + extra` bytes beyond `proto-max-bulk-len` (or beyond u64).
fn check_len(len: u64, extra: u64, max_bytes: u64) -> Result<(), CmdError> {
    match len.checked_add(extra) {
        Some(total) if total <= max_bytes => Ok(()),
        _ => Err(CmdError::StringTooLong),
    }
}

pub(super) fn append(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (key, tail) = (&argv[1], &argv[2]);
    let now_ms = ctx.now_ms;
    let max_bytes = ctx.config.proto_max_bulk_len;
    let db = &mut ctx.dbs[ctx.client.db];
    let appended = db.update_str(key, now_ms, |s| {
        check_len(s.len() as u64, tail.len() as u64, max_bytes)?;
        Ok::<_, CmdError>((StrEdit::Append(tail), s.len() + tail.len()))
    })?;
    let len = match appended {
        Some(len) => len,
        None => {
            db.set_str_ref(key, StrRef::from_bytes(tail), Ttl::Clear, now_ms);
            tail.len()
        }
    };
    ctx.changed(key, 1, KeyspaceEvents::STRING, "append");
    ctx.out.int(len as i64);
    Ok(())
}

pub(super) fn setrange(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (key, bytes) = (&argv[1], &argv[3]);
    let offset = int_arg(&argv[2])?;
    if offset < 0 {
        return Err(CmdError::OffsetOutOfRange);
    }
    let now_ms = ctx.now_ms;
    let max_bytes = ctx.config.proto_max_bulk_len;
    let db = &mut ctx.dbs[ctx.client.db];
    if bytes.is_empty() {
        // Writing nothing changes nothing (and creates no key).
        let len = match db.peek(key, now_ms) {
            None => 0,
            Some(ValueRef::Str(s)) => s.len(),
            Some(ValueRef::Agg(_)) => return Err(CmdError::WrongType),
        };
        ctx.out.int(len as i64);
        return Ok(());
    }
    check_len(offset as u64, bytes.len() as u64, max_bytes)?;
    let (offset, end) = (offset as usize, offset as usize + bytes.len());
    let edited = db.update_str(key, now_ms, |s| {
        Ok::<_, CmdError>((StrEdit::SetRange { offset, bytes }, s.len().max(end)))
    })?;
    let len = match edited {
        Some(len) => len,
        None => {
            // A new value: exactly `end` bytes, zeros then the argument, as Valkey's
            // `sdsnewlen` (no spare room; later edits grow it greedily).
            if end <= INLINE_VALUE_MAX {
                let mut value = vec![0u8; end];
                value[offset..].copy_from_slice(bytes);
                db.set_str_edited(key, NewValue::Str(&value), now_ms);
            } else {
                let value = HeapStr::from_range(offset, bytes);
                db.set_str_edited(key, NewValue::Heap(value), now_ms);
            }
            end
        }
    };
    ctx.changed(key, 1, KeyspaceEvents::STRING, "setrange");
    ctx.out.int(len as i64);
    Ok(())
}

/// GETRANGE and SUBSTR.
pub(super) fn getrange(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let start = int_arg(&argv[2])?;
    let end = int_arg(&argv[3])?;
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(s) = read_str(db, &argv[1], ctx.now_ms)? else {
        ctx.out.bulk(b"");
        return Ok(());
    };
    let mut scratch = [0u8; 20];
    let bytes = s.bytes(&mut scratch);
    match byte_range(bytes.len(), start, end) {
        Some(r) => ctx.out.bulk(&bytes[r]),
        None => ctx.out.bulk(b""),
    }
    Ok(())
}

/// The bytes GETRANGE returns, by Valkey 7's rules: negative indexes count from the end,
/// both are clamped into the string, and an empty or inverted range gives nothing (so does
/// a pair of negative indexes with start after end, before any clamping).
fn byte_range(len: usize, start: i64, end: i64) -> Option<Range<usize>> {
    if start < 0 && end < 0 && start > end {
        return None;
    }
    let len = len as i64;
    let from_end = |i: i64| if i < 0 { (len + i).max(0) } else { i };
    let start = from_end(start);
    let end = from_end(end).min(len - 1);
    if len == 0 || start > end {
        return None;
    }
    Some(start as usize..end as usize + 1)
}

pub(super) fn strlen(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let db = &mut ctx.dbs[ctx.client.db];
    let len = read_str(db, &argv[1], ctx.now_ms)?.map_or(0, |s| s.len());
    ctx.out.int(len as i64);
    Ok(())
}

pub(super) fn incr(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    incr_by(ctx, &argv[1], 1)
}

pub(super) fn decr(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    incr_by(ctx, &argv[1], -1)
}

pub(super) fn incrby(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let delta = int_arg(&argv[2])?;
    incr_by(ctx, &argv[1], delta)
}

pub(super) fn decrby(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let delta = int_arg(&argv[2])?;
    let negated = delta.checked_neg().ok_or(CmdError::DecrementOverflow)?;
    incr_by(ctx, &argv[1], negated)
}

/// Add `delta` to the integer at `key` (0 when missing); the result is stored as an integer.
fn incr_by(ctx: &mut Ctx, key: &[u8], delta: i64) -> CmdResult {
    let now_ms = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let updated = db.update_str::<_, CmdError>(key, now_ms, |s| {
        // `as_i64` refuses a text longer than 20 bytes before reading it, as Valkey does.
        let current = s.as_i64().ok_or(CmdError::NotInteger)?;
        let next = current.checked_add(delta).ok_or(CmdError::IncrOverflow)?;
        Ok((StrEdit::Replace(StrValue::Int(next)), next))
    })?;
    let value = match updated {
        Some(v) => v,
        None => {
            db.set_str(key, StrValue::Int(delta), Ttl::Clear, now_ms);
            delta
        }
    };
    ctx.changed(key, 1, KeyspaceEvents::STRING, "incrby");
    ctx.out.int(value);
    Ok(())
}

/// INCRBYFLOAT in x87 long double arithmetic, as Valkey computes it; the result is stored as
/// the text replied.
pub(super) fn incrbyfloat(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let key = &argv[1];
    let now_ms = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let add = |current: LongDouble| -> Result<String, CmdError> {
        let incr = LongDouble::parse(&argv[2]).ok_or(CmdError::NotFloat)?;
        let sum = current.checked_add(incr).ok_or(CmdError::NanOrInfinity)?;
        Ok(sum.to_human_string())
    };
    let updated = db.update_str::<_, CmdError>(key, now_ms, |s| {
        // `as_long_double` refuses a text of 5 KiB or more before reading it, as Valkey does.
        let current = s.as_long_double().ok_or(CmdError::NotFloat)?;
        let text = add(current)?;
        Ok((StrEdit::Replace(StrValue::Raw(text.as_bytes().into())), text))
    })?;
    let text = match updated {
        Some(text) => text,
        None => {
            let text = add(LongDouble::ZERO)?;
            db.set_str(key, StrValue::Raw(text.as_bytes().into()), Ttl::Clear, now_ms);
            text
        }
    };
    ctx.changed(key, 1, KeyspaceEvents::STRING, "incrbyfloat");
    // Replayed as the value it stored (float arithmetic must not run twice), TTL kept.
    ctx.propagate_as(|| {
        let set = [b"SET".as_slice(), key, text.as_bytes(), b"KEEPTTL"];
        vec![set.iter().map(|a| Bytes::copy_from_slice(a)).collect()]
    });
    ctx.out.bulk(text.as_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_follow_valkey_7() {
        // "Hello World": 11 bytes.
        assert_eq!(byte_range(11, 0, -100), Some(0..1));
        assert_eq!(byte_range(11, -1, -5), None);
        assert_eq!(byte_range(11, -100, -100), Some(0..1));
        assert_eq!(byte_range(11, 5, 3), None);
        assert_eq!(byte_range(11, 0, 1000), Some(0..11));
        assert_eq!(byte_range(11, -3, -1), Some(8..11));
        assert_eq!(byte_range(11, 20, 30), None);
        assert_eq!(byte_range(0, 0, -1), None);
        assert_eq!(byte_range(11, i64::MIN, i64::MAX), Some(0..11));
    }

    #[test]
    fn length_limit() {
        assert_eq!(check_len(10, 5, 15), Ok(()));
        assert_eq!(check_len(10, 6, 15), Err(CmdError::StringTooLong));
        assert_eq!(check_len(u64::MAX, 1, u64::MAX), Err(CmdError::StringTooLong));
    }
}
