//! Values in the encodings older Redis versions wrote and no current server writes: the
//! plain list, the zipmap hash (Redis 2.0 to 2.4), the ziplist list, hash and sorted set
//! (up to Redis 6.2) and the quicklist whose nodes are ziplists (Redis 3.2 to 6.2). Valkey
//! still loads them all; so does ferrokey. Nothing here writes them.
//!
//! | type byte              | payload                                                    |
//! |------------------------|------------------------------------------------------------|
//! | 1 LIST                 | count, then that many strings                              |
//! | 9 HASH_ZIPMAP          | a zipmap blob as a string                                  |
//! | 10 LIST_ZIPLIST        | a ziplist blob as a string                                 |
//! | 12 ZSET_ZIPLIST        | a ziplist of member, score, member, score... as a string   |
//! | 13 HASH_ZIPLIST        | a ziplist of field, value, field, value... as a string     |
//! | 14 LIST_QUICKLIST      | node count, then per node a ziplist blob as a string       |
//!
//! A ziplist (all integers little endian unless said otherwise):
//!
//! ```text
//!  zlbytes:4  zltail:4  zllen:2  entry ...  FF
//!  entry:     prevlen (1 byte < 254, or FE + 4 bytes)  encoding  payload
//!  encoding:  00pppppp                     string of up to 63 bytes
//!             01pppppp qqqqqqqq            string, 14-bit length (big endian)
//!             10______ + 4 bytes           string, 32-bit length (big endian)
//!             C0 int16 | D0 int32 | E0 int64 | F0 int24 | FE int8
//!             F1..FD                       the integer 0..12 (low nibble - 1), no payload
//! ```
//!
//! A zipmap:
//!
//! ```text
//!  zmlen:1 (254: count it)  { len key  len free:1 value <free bytes> } ...  FF
//!  len:       one byte 0..253, or FE + 4 bytes (little endian)
//! ```
//!
//! Every blob is checked the way Valkey's deep integrity checks do before anything is built
//! from it: the recorded sizes, offsets and counts must match what is there, every entry
//! must lie inside the blob and record its predecessor's true size, hash fields and sorted
//! set members must not repeat, scores must not be NaN. A failed check is a corrupt-data
//! error naming the check; the value is then built through the types' own insertion APIs,
//! so it lands in the encoding its size calls for. An empty value is `None` (Valkey skips
//! such a key in a file and refuses it in a RESTORE payload).

use std::io::Read;

use super::encoding::{corrupt, RdbError, RdbReader};
use super::value::{build_hash, build_zset, parse_score, LoadLimits};
use crate::keyspace::value::Value;
use crate::types::agg::{AggType, Typed};
use crate::types::list::{End as ListEnd, ListObj};

pub const TYPE_LIST: u8 = 1;
pub const TYPE_HASH_ZIPMAP: u8 = 9;
pub const TYPE_LIST_ZIPLIST: u8 = 10;
pub const TYPE_ZSET_ZIPLIST: u8 = 12;
pub const TYPE_HASH_ZIPLIST: u8 = 13;
pub const TYPE_LIST_QUICKLIST: u8 = 14;

/// Whether `ty` is one of the types this module reads.
pub fn is_legacy(ty: u8) -> bool {
    matches!(
        ty,
        TYPE_LIST
            | TYPE_HASH_ZIPMAP
            | TYPE_LIST_ZIPLIST
            | TYPE_ZSET_ZIPLIST
            | TYPE_HASH_ZIPLIST
            | TYPE_LIST_QUICKLIST
    )
}

/// Reads the payload of a value of legacy type `ty` (its type byte already read); `None`
/// when the value holds no element.
pub fn read_legacy<R: Read>(
    r: &mut RdbReader<R>,
    ty: u8,
    lim: &LoadLimits,
) -> Result<Option<Value>, RdbError> {
    let value = match ty {
        TYPE_LIST => {
            let n = r.length()?;
            let mut items = Vec::new();
            for _ in 0..n {
                items.push(r.string()?);
            }
            build_list(&[items], lim).map(|l| Value::Agg(l.wrap()))
        }
        TYPE_HASH_ZIPMAP => {
            let blob = r.string()?;
            let pairs = zipmap_pairs(&blob)
                .map_err(|why| corrupt(format!("Zipmap integrity check failed: {why}")))?;
            let pairs: Vec<(Vec<u8>, Vec<u8>)> =
                pairs.into_iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect();
            Some(Value::Agg(build_hash(&pairs, lim)?.wrap()))
        }
        TYPE_LIST_ZIPLIST => {
            let blob = r.string()?;
            let items = ziplist_entries(&blob)
                .map_err(|why| corrupt(format!("List ziplist integrity check failed: {why}")))?;
            let items: Vec<Vec<u8>> = items.into_iter().map(ZlEntry::to_vec).collect();
            build_list(&[items], lim).map(|l| Value::Agg(l.wrap()))
        }
        TYPE_HASH_ZIPLIST => {
            let blob = r.string()?;
            let items = ziplist_pairs(&blob)
                .map_err(|why| corrupt(format!("Hash ziplist integrity check failed: {why}")))?;
            if items.is_empty() {
                return Ok(None);
            }
            let pairs: Vec<(Vec<u8>, Vec<u8>)> =
                items.chunks(2).map(|p| (p[0].to_vec(), p[1].to_vec())).collect();
            Some(Value::Agg(build_hash(&pairs, lim)?.wrap()))
        }
        TYPE_ZSET_ZIPLIST => {
            let blob = r.string()?;
            let items = ziplist_pairs(&blob)
                .map_err(|why| corrupt(format!("Zset ziplist integrity check failed: {why}")))?;
            if items.is_empty() {
                return Ok(None);
            }
            let mut pairs = Vec::with_capacity(items.len() / 2);
            for p in items.chunks(2) {
                let score = match p[1] {
                    ZlEntry::Int(n) => n as f64,
                    ZlEntry::Str(s) => parse_score(s)
                        .map_err(|_| corrupt("Zset ziplist with a NaN or unreadable score"))?,
                };
                pairs.push((p[0].to_vec(), score));
            }
            Some(Value::Agg(build_zset(pairs, lim)?.wrap()))
        }
        TYPE_LIST_QUICKLIST => {
            let n = r.length()?;
            let mut nodes = Vec::new();
            for _ in 0..n {
                let blob = r.string()?;
                if blob.is_empty() {
                    return Err(corrupt("Quicklist node of zero bytes"));
                }
                let items = ziplist_entries(&blob)
                    .map_err(|why| corrupt(format!("Ziplist integrity check failed: {why}")))?;
                // Valkey skips an empty node; a list of nothing but empty nodes is empty.
                if !items.is_empty() {
                    nodes.push(items.into_iter().map(ZlEntry::to_vec).collect());
                }
            }
            build_list(&nodes, lim).map(|l| Value::Agg(l.wrap()))
        }
        other => return Err(corrupt(format!("unsupported object type {other}"))),
    };
    Ok(value)
}

/// A list of `nodes`' elements in order, under the list limit (`None` when there are none).
fn build_list(nodes: &[Vec<Vec<u8>>], lim: &LoadLimits) -> Option<ListObj> {
    let mut list = ListObj::new();
    for node in nodes {
        let bytes: usize = node.iter().map(Vec::len).sum();
        list.grow_check(bytes, node.len(), lim.list);
        for e in node {
            list.push(ListEnd::Tail, e, lim.list);
        }
    }
    (!list.is_empty()).then_some(list)
}

// ----- ziplists --------------------------------------------------------------------------

/// One ziplist element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZlEntry<'a> {
    Str(&'a [u8]),
    Int(i64),
}

impl ZlEntry<'_> {
    /// The element as a string (an integer in decimal).
    pub fn to_vec(self) -> Vec<u8> {
        match self {
            ZlEntry::Str(s) => s.to_vec(),
            ZlEntry::Int(n) => n.to_string().into_bytes(),
        }
    }
}

const ZL_HEADER_BYTES: usize = 10;
const ZL_END: u8 = 0xFF;
const ZL_BIG_PREVLEN: u8 = 0xFE;
/// `zllen` when the count did not fit 16 bits (the entries must be counted).
const ZL_COUNT_UNKNOWN: u16 = u16::MAX;

const ZL_INT16: u8 = 0xC0;
const ZL_INT32: u8 = 0xD0;
const ZL_INT64: u8 = 0xE0;
const ZL_INT24: u8 = 0xF0;
const ZL_INT8: u8 = 0xFE;
const ZL_IMM_MIN: u8 = 0xF1;
const ZL_IMM_MAX: u8 = 0xFD;

fn le_u32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// `zl[at..at + n]`, where the range must end before `limit` (the end marker's offset).
fn span(zl: &[u8], at: usize, n: usize, limit: usize) -> Result<&[u8], String> {
    match at.checked_add(n) {
        Some(stop) if stop <= limit => Ok(&zl[at..stop]),
        _ => Err(format!("entry at offset {at} reaches past the end")),
    }
}

/// Every element of the ziplist `zl`, after checking the whole blob.
pub fn ziplist_entries(zl: &[u8]) -> Result<Vec<ZlEntry<'_>>, String> {
    if zl.len() < ZL_HEADER_BYTES + 1 {
        return Err(format!("{} bytes, too short for a ziplist", zl.len()));
    }
    let zlbytes = le_u32(&zl[0..4]) as usize;
    if zlbytes != zl.len() {
        return Err(format!("zlbytes says {zlbytes} bytes, the blob holds {}", zl.len()));
    }
    let end = zl.len() - 1;
    if zl[end] != ZL_END {
        return Err("the last byte is not the end marker".into());
    }
    let tail = le_u32(&zl[4..8]) as usize;
    if tail > end {
        return Err(format!("zltail {tail} points past the end"));
    }
    let header_count = u16::from_le_bytes([zl[8], zl[9]]);
    let mut entries = Vec::new();
    let mut at = ZL_HEADER_BYTES;
    let mut prev_bytes = 0usize;
    let mut last = None;
    while zl[at] != ZL_END {
        let (entry, next) = ziplist_entry(zl, at, end, prev_bytes)?;
        entries.push(entry);
        prev_bytes = next - at;
        last = Some(at);
        at = next;
    }
    if at != end {
        return Err(format!("an end marker at offset {at}, before the last byte"));
    }
    if last.is_some_and(|last| last != tail) {
        return Err(format!("zltail {tail} is not the last entry's offset"));
    }
    if header_count != ZL_COUNT_UNKNOWN && usize::from(header_count) != entries.len() {
        return Err(format!("zllen says {header_count} entries, there are {}", entries.len()));
    }
    Ok(entries)
}

/// The entry at `at` (< `end`, the end marker's offset) and the offset after it.
fn ziplist_entry(
    zl: &[u8],
    at: usize,
    end: usize,
    prev_bytes: usize,
) -> Result<(ZlEntry<'_>, usize), String> {
    let (prevlen, mut p) = if zl[at] < ZL_BIG_PREVLEN {
        (usize::from(zl[at]), at + 1)
    } else {
        (le_u32(span(zl, at + 1, 4, end)?) as usize, at + 5)
    };
    if prevlen != prev_bytes {
        return Err(format!(
            "entry at offset {at} records a previous entry of {prevlen} bytes, not {prev_bytes}"
        ));
    }
    let enc = span(zl, p, 1, end)?[0];
    p += 1;
    let entry = match enc >> 6 {
        0 => ZlEntry::Str(take(zl, &mut p, usize::from(enc & 0x3f), end)?),
        1 => {
            let low = span(zl, p, 1, end)?[0];
            p += 1;
            let n = usize::from(enc & 0x3f) << 8 | usize::from(low);
            ZlEntry::Str(take(zl, &mut p, n, end)?)
        }
        2 => {
            let b = span(zl, p, 4, end)?;
            p += 4;
            let n = u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize;
            ZlEntry::Str(take(zl, &mut p, n, end)?)
        }
        _ => ZlEntry::Int(match enc {
            ZL_INT8 => i64::from(take(zl, &mut p, 1, end)?[0] as i8),
            ZL_INT16 => {
                let b = take(zl, &mut p, 2, end)?;
                i64::from(i16::from_le_bytes([b[0], b[1]]))
            }
            ZL_INT24 => {
                let b = take(zl, &mut p, 3, end)?;
                i64::from(i32::from_le_bytes([0, b[0], b[1], b[2]]) >> 8)
            }
            ZL_INT32 => {
                let b = take(zl, &mut p, 4, end)?;
                i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            ZL_INT64 => {
                let b = take(zl, &mut p, 8, end)?;
                i64::from_le_bytes(b.try_into().expect("eight bytes"))
            }
            ZL_IMM_MIN..=ZL_IMM_MAX => i64::from(enc & 0x0f) - 1,
            other => return Err(format!("entry at offset {at} has encoding {other:#04x}")),
        }),
    };
    Ok((entry, p))
}

/// `n` bytes at `*p`, moving `*p` past them.
fn take<'a>(zl: &'a [u8], p: &mut usize, n: usize, end: usize) -> Result<&'a [u8], String> {
    let s = span(zl, *p, n, end)?;
    *p += n;
    Ok(s)
}

/// A ziplist of pairs (hash field/value, sorted set member/score): its elements, checked to
/// be an even number. Repeated fields or members are left to the builders, which refuse them.
fn ziplist_pairs(zl: &[u8]) -> Result<Vec<ZlEntry<'_>>, String> {
    let items = ziplist_entries(zl)?;
    if items.len() % 2 != 0 {
        return Err(format!("{} entries, not pairs", items.len()));
    }
    Ok(items)
}

// ----- zipmaps ---------------------------------------------------------------------------

/// A zipmap field and its value.
pub type ZmPair<'a> = (&'a [u8], &'a [u8]);

const ZM_BIGLEN: u8 = 254;
const ZM_END: u8 = 0xFF;

/// A zipmap length at `at`, which must leave at least one byte before `end`: the length and
/// the offset after it.
fn zipmap_len(zm: &[u8], at: usize, end: usize) -> Result<(usize, usize), String> {
    let b = zm[at];
    if b < ZM_BIGLEN {
        return Ok((usize::from(b), at + 1));
    }
    let n = le_u32(span(zm, at + 1, 4, end)?) as usize;
    if n < usize::from(ZM_BIGLEN) {
        return Err(format!("length {n} at offset {at} takes five bytes"));
    }
    Ok((n, at + 5))
}

/// Every field/value pair of the zipmap `zm`, after checking the whole blob.
pub fn zipmap_pairs(zm: &[u8]) -> Result<Vec<ZmPair<'_>>, String> {
    if zm.len() < 2 {
        return Err(format!("{} bytes, too short for a zipmap", zm.len()));
    }
    let end = zm.len() - 1;
    if zm[end] != ZM_END {
        return Err("the last byte is not the end marker".into());
    }
    let mut pairs = Vec::new();
    let mut at = 1;
    while zm[at] != ZM_END {
        let (klen, p) = zipmap_len(zm, at, end)?;
        let field = span(zm, p, klen, end)?;
        let p = p + klen;
        let (vlen, p) = zipmap_len(zm, p, end)?;
        let free = usize::from(span(zm, p, 1, end)?[0]);
        let value = span(zm, p + 1, vlen, end)?;
        span(zm, p + 1 + vlen, free, end)?;
        pairs.push((field, value));
        at = p + 1 + vlen + free;
    }
    if pairs.is_empty() {
        return Err("no entries".into());
    }
    if zm[0] != ZM_BIGLEN && usize::from(zm[0]) != pairs.len() {
        return Err(format!("zmlen says {} entries, there are {}", zm[0], pairs.len()));
    }
    Ok(pairs)
}

#[cfg(test)]
#[path = "legacy_tests.rs"]
mod tests;
