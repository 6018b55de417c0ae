//! BITOP AND|OR|XOR|NOT destkey key [key ...]: combine strings bit by bit into a new value
//! as long as the longest source (shorter ones read as zeros past their end); an all-empty
//! result deletes the destination instead.
//!
//! The sources are held without copying: an out-of-line value by a counted reference to its
//! buffer (the same sharing a GET reply uses, so the destination may be one of the sources),
//! a short one copied (at most the inline limit). The result is computed piece by piece into
//! a buffer that stays in the first-level cache while every source streams past it, and each
//! piece is written once into the new value, allocated once at its exact size (Valkey's
//! `sdsnewlen`; the value is `raw`). The destination loses its TTL, as with SET.

use bytes::Bytes;

use super::{is_word, BitError};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::keyspace::db::Db;
use crate::keyspace::entry::{KeyEntry, NewValue, INLINE_VALUE_MAX};
use crate::keyspace::heap_str::HeapStr;
use crate::types::bitmap::{combine, BitOp};

/// Bytes of the result computed at a time: small enough for the first-level cache.
const PIECE_BYTES: usize = 16 * 1024;

fn parse_op(arg: &[u8]) -> Result<BitOp, CmdError> {
    [("and", BitOp::And), ("or", BitOp::Or), ("xor", BitOp::Xor), ("not", BitOp::Not)]
        .into_iter()
        .find(|(word, _)| is_word(arg, word))
        .map(|(_, op)| op)
        .ok_or(CmdError::Syntax)
}

pub(super) fn bitop(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let op = parse_op(&argv[1])?;
    if op == BitOp::Not && argv.len() != 4 {
        return Err(BitError::NotOneSource.into());
    }
    let dest = &argv[2];
    let now_ms = ctx.now_ms;
    let db = ctx.db();
    let sources = hold_sources(db, &argv[3..], now_ms)?;
    let len = sources.iter().map(Bytes::len).max().unwrap_or(0);
    if len == 0 {
        if db.remove(dest, now_ms) {
            ctx.changed(dest, 1, KeyspaceEvents::GENERIC, "del");
        }
        ctx.out.int(0);
        return Ok(());
    }
    let value = {
        let refs: Vec<&[u8]> = sources.iter().map(|s| &s[..]).collect();
        compute(op, &refs, len)
    };
    // Let go of the sources' buffers before the destination (maybe one of them) is replaced.
    drop(sources);
    match value {
        Computed::Short(v) => db.set_str_edited(dest, NewValue::Str(&v), now_ms),
        Computed::Long(h) => db.set_str_edited(dest, NewValue::Heap(h), now_ms),
    }
    ctx.changed(dest, 1, KeyspaceEvents::STRING, "set");
    ctx.out.int(len as i64);
    Ok(())
}

/// The value of each source key, in order (empty for a missing key), looked up for reading
/// (hits and misses counted); WRONGTYPE at the first that holds another type.
fn hold_sources(db: &mut Db, keys: &[Bytes], now_ms: i64) -> Result<Vec<Bytes>, CmdError> {
    let mut held = Vec::with_capacity(keys.len());
    for key in keys {
        held.push(match db.read_obj(key, now_ms) {
            None => Bytes::new(),
            Some(e) if !e.is_str() => return Err(CmdError::WrongType),
            Some(e) => hold(e),
        });
    }
    Ok(held)
}

/// A string entry's bytes, shared when out of line, else copied (short).
fn hold(e: &KeyEntry) -> Bytes {
    match e.share_str() {
        Some(shared) => Bytes::from_owner(shared),
        None => {
            let mut scratch = [0u8; 20];
            Bytes::copy_from_slice(e.value().bytes(&mut scratch))
        }
    }
}

/// A BITOP result, in the form the keyspace stores it.
enum Computed {
    Short(Vec<u8>),
    Long(HeapStr),
}

/// `op` over `sources` into a new value of `len` bytes (the longest source).
fn compute(op: BitOp, sources: &[&[u8]], len: usize) -> Computed {
    if len <= INLINE_VALUE_MAX {
        let mut v = vec![0u8; len];
        combine(op, sources, 0, &mut v);
        return Computed::Short(v);
    }
    let mut value = HeapStr::from_range(len - 1, &[0]);
    let mut piece = vec![0u8; PIECE_BYTES.min(len)];
    let mut at = 0;
    while at < len {
        let n = piece.len().min(len - at);
        combine(op, sources, at, &mut piece[..n]);
        value.set_range(at, &piece[..n]);
        at += n;
    }
    Computed::Long(value)
}
