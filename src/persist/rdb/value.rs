//! Values in RDB: the object type byte and the payload of every type ferrokey stores.
//!
//! Written (RDB version 10, which redis-server 7.0 and every Valkey load):
//!
//! | value                          | type byte              | payload                         |
//! |--------------------------------|------------------------|---------------------------------|
//! | string                         | 0 STRING               | string                          |
//! | list (either encoding)         | 18 LIST_QUICKLIST_2    | node count, then per node the   |
//! |                                |                        | container (2 = packed) and the  |
//! |                                |                        | node's listpack as a string     |
//! | set, intset                    | 11 SET_INTSET          | the intset bytes as a string    |
//! | set, listpack or hashtable     | 2 SET                  | count, members                  |
//! | hash, listpack                 | 16 HASH_LISTPACK       | the listpack bytes as a string  |
//! | hash, hashtable                | 4 HASH                 | count, field/value pairs        |
//! | sorted set, listpack           | 17 ZSET_LISTPACK       | the listpack bytes as a string  |
//! | sorted set, skiplist           | 5 ZSET_2               | count, member + binary double   |
//! | stream                         | 19 STREAM_LISTPACKS_2  | node count, per node its master |
//! |                                |                        | id (16 bytes) and listpack as   |
//! |                                |                        | strings; length, last, first    |
//! |                                |                        | and max deleted ids, entries    |
//! |                                |                        | added; the consumer groups      |
//!
//! A listpack set is written as a plain set: type 20 (SET_LISTPACK) would force RDB 11,
//! which redis-server 7.0 refuses.
//!
//! A stream is written as type 19, the one RDB 10 has (type 21 adds each consumer's active
//! time and needs RDB 11); its payload, consumer groups included, is `stream`'s.
//!
//! Read: those types, plus 20 (SET_LISTPACK), 3 (ZSET, scores as strings), streams of types
//! 15 and 21, and the encodings
//! older versions wrote (types 1, 9, 10, 12, 13, 14: see `legacy`). Every value read is
//! rebuilt through the type's own insertion API under the configured limits, so a value
//! lands in the encoding its size calls for and duplicates or malformed data are refused
//! instead of trusted. A value with no element is an empty key: a file load skips it (as
//! Valkey does, since old versions could write one), a RESTORE payload is refused.

use std::io::{self, Read, Write};

use super::encoding::{corrupt, RdbError, RdbReader, RdbWriter};
use super::legacy;
use super::stream;
use crate::config::Config;
use crate::keyspace::value::{Value, ValueRef};
use crate::types::agg::{AggRef, AggType, Typed};
use crate::types::hash::{self, HashObj};
use crate::types::intset::Intset;
use crate::types::list::{End as ListEnd, ListObj, NodeLimit};
use crate::types::listpack::{Listpack, LpEntry};
use crate::types::set::{SetLimits, SetObj};
use crate::types::string::{StrRef, StrValue};
use crate::types::zset::{self, ZSetObj};

pub const TYPE_STRING: u8 = 0;
pub const TYPE_SET: u8 = 2;
pub const TYPE_ZSET: u8 = 3;
pub const TYPE_HASH: u8 = 4;
pub const TYPE_ZSET_2: u8 = 5;
pub const TYPE_SET_INTSET: u8 = 11;
pub const TYPE_HASH_LISTPACK: u8 = 16;
pub const TYPE_ZSET_LISTPACK: u8 = 17;
pub const TYPE_LIST_QUICKLIST_2: u8 = 18;
pub const TYPE_SET_LISTPACK: u8 = 20;
/// Streams: Redis 5's, 7.0's (first and max deleted ids, entries added, groups' entries
/// read) and 7.2's (consumers' active time).
pub const TYPE_STREAM_LISTPACKS: u8 = 15;
pub const TYPE_STREAM_LISTPACKS_2: u8 = 19;
pub const TYPE_STREAM_LISTPACKS_3: u8 = 21;
/// Valkey 9's hash with per-field expire times: fields, values and expire times (ms, -1 for
/// none).
pub const TYPE_HASH_2: u8 = 22;

/// Quicklist node containers.
const CONTAINER_PLAIN: u64 = 1;
const CONTAINER_PACKED: u64 = 2;

fn entry_bytes(e: LpEntry<'_>) -> Vec<u8> {
    e.to_vec()
}

/// Writes `v`'s type byte and payload.
pub fn write_value<W: Write>(w: &mut RdbWriter<W>, v: ValueRef<'_>) -> io::Result<()> {
    write_keyed_value(w, None, v)
}

/// Writes `v`'s type byte, then `key` when given (a file's key record puts the key between
/// the two), then the payload.
pub fn write_keyed_value<W: Write>(
    w: &mut RdbWriter<W>,
    key: Option<&[u8]>,
    v: ValueRef<'_>,
) -> io::Result<()> {
    match v {
        ValueRef::Str(StrRef::Int(n)) => {
            head(w, TYPE_STRING, key)?;
            if !w.int_string(n)? {
                w.string(n.to_string().as_bytes())?;
            }
            Ok(())
        }
        ValueRef::Str(StrRef::Raw(b)) => {
            head(w, TYPE_STRING, key)?;
            w.string(b)
        }
        ValueRef::Agg(AggRef::List(l)) => {
            head(w, TYPE_LIST_QUICKLIST_2, key)?;
            let nodes = l.nodes();
            w.length(nodes.len() as u64)?;
            for node in nodes {
                w.length(CONTAINER_PACKED)?;
                w.string(node.as_bytes())?;
            }
            Ok(())
        }
        ValueRef::Agg(AggRef::Set(s)) => match s.intset() {
            Some(is) => {
                head(w, TYPE_SET_INTSET, key)?;
                w.string(is.as_bytes())
            }
            None => {
                head(w, TYPE_SET, key)?;
                w.length(s.len() as u64)?;
                for m in s.iter() {
                    w.string(&entry_bytes(m))?;
                }
                Ok(())
            }
        },
        ValueRef::Agg(AggRef::Hash(h)) => match h.listpack() {
            Some(lp) => {
                head(w, TYPE_HASH_LISTPACK, key)?;
                w.string(lp.as_bytes())
            }
            None if h.has_volatile() => {
                // Valkey 9's HASH_2: each field's expire time after its value (-1: none),
                // expired fields included (the loader decides).
                head(w, TYPE_HASH_2, key)?;
                w.length(h.len() as u64)?;
                for ((f, v), at) in h.iter_with_expire() {
                    w.string(&entry_bytes(f))?;
                    w.string(&entry_bytes(v))?;
                    w.raw(&at.unwrap_or(-1).to_le_bytes())?;
                }
                Ok(())
            }
            None => {
                head(w, TYPE_HASH, key)?;
                w.length(h.len() as u64)?;
                for (f, v) in h.iter() {
                    w.string(&entry_bytes(f))?;
                    w.string(&entry_bytes(v))?;
                }
                Ok(())
            }
        },
        ValueRef::Agg(AggRef::ZSet(z)) => match z.listpack() {
            Some(lp) => {
                head(w, TYPE_ZSET_LISTPACK, key)?;
                w.string(lp.as_bytes())
            }
            None => {
                head(w, TYPE_ZSET_2, key)?;
                w.length(z.len() as u64)?;
                let mut result = Ok(());
                z.for_each(|m, score| {
                    if result.is_ok() {
                        result = w.string(m).and_then(|()| w.raw(&score.to_le_bytes()));
                    }
                });
                result
            }
        },
        ValueRef::Agg(AggRef::Stream(st)) => {
            head(w, TYPE_STREAM_LISTPACKS_2, key)?;
            stream::write_stream(w, st)
        }
    }
}

/// A value's type byte and, for a file's key record, the key.
fn head<W: Write>(w: &mut RdbWriter<W>, ty: u8, key: Option<&[u8]>) -> io::Result<()> {
    w.byte(ty)?;
    match key {
        Some(k) => w.string(k),
        None => Ok(()),
    }
}

/// The limits a loaded value is built under (the running configuration's thresholds).
pub struct LoadLimits {
    pub hash: hash::Limits,
    pub set: SetLimits,
    pub zset: zset::Limits,
    pub list: NodeLimit,
    /// Keep keys whose expire time has passed (an AOF's RDB preamble, as Valkey); a plain
    /// RDB load drops them.
    pub keep_expired: bool,
    /// Verify the file's CRC-64 (`rdbchecksum`; a stored zero is never checked).
    pub check_crc: bool,
    /// `rdb-version-check relaxed`: read foreign and future RDB versions as far as their
    /// types and opcodes are known.
    pub relaxed_version_check: bool,
    /// `key-load-delay`: a pause after each key (a testing knob).
    pub key_delay: i32,
}

impl LoadLimits {
    /// The longest string a load accepts: `proto-max-bulk-len`, and never less than 512 MiB
    /// (what Valkey writes is loadable whatever the setting).
    pub fn max_string_len(c: &Config) -> u64 {
        c.proto_max_bulk_len.max(512 << 20)
    }

    pub fn from_config(c: &Config) -> LoadLimits {
        let size = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        LoadLimits {
            hash: hash::Limits::from_config(c),
            set: SetLimits::from_config(c),
            zset: zset::Limits {
                max_entries: size(c.zset_max_listpack_entries),
                max_value_bytes: size(c.zset_max_listpack_value_bytes),
            },
            list: NodeLimit::from_fill(c.list_max_listpack_size),
            keep_expired: false,
            check_crc: c.rdbchecksum,
            relaxed_version_check: c.persistence.rdb_version_check
                == crate::config::RdbVersionCheck::Relaxed,
            key_delay: c.testing.key_load_delay,
        }
    }
}

/// Reads the payload of a value of type `ty` (its type byte already read); an empty value
/// is an error.
pub fn read_value<R: Read>(
    r: &mut RdbReader<R>,
    ty: u8,
    lim: &LoadLimits,
) -> Result<Value, RdbError> {
    read_value_or_empty(r, ty, lim)?.ok_or_else(|| corrupt("empty key"))
}

/// Reads the payload of a value of type `ty` (its type byte already read); `None` for a
/// value with no element (its payload read whole).
pub fn read_value_or_empty<R: Read>(
    r: &mut RdbReader<R>,
    ty: u8,
    lim: &LoadLimits,
) -> Result<Option<Value>, RdbError> {
    if legacy::is_legacy(ty) {
        return legacy::read_legacy(r, ty, lim);
    }
    Ok(Some(match ty {
        TYPE_STRING => Value::Str(StrValue::from_bytes(&r.string()?)),
        TYPE_LIST_QUICKLIST_2 => match read_quicklist(r, lim)? {
            Some(list) => Value::Agg(list.wrap()),
            None => return Ok(None),
        },
        TYPE_SET => {
            let n = r.length()?;
            if n == 0 {
                return Ok(None);
            }
            let mut members = Vec::new();
            for _ in 0..n {
                members.push(r.string()?);
            }
            Value::Agg(build_set(members.iter().map(Vec::as_slice), n as usize, lim)?.wrap())
        }
        TYPE_SET_INTSET => {
            let is = Intset::from_bytes(&r.string()?)
                .map_err(|e| corrupt(format!("bad intset: {e:?}")))?;
            let members: Vec<Vec<u8>> = is.iter().map(|v| v.to_string().into_bytes()).collect();
            Value::Agg(build_set(members.iter().map(Vec::as_slice), members.len(), lim)?.wrap())
        }
        TYPE_SET_LISTPACK => {
            let lp = read_listpack(r)?;
            if lp.is_empty() {
                return Ok(None);
            }
            let members: Vec<Vec<u8>> = lp.iter().map(entry_bytes).collect();
            Value::Agg(build_set(members.iter().map(Vec::as_slice), members.len(), lim)?.wrap())
        }
        TYPE_HASH | TYPE_HASH_2 => {
            let n = r.length()?;
            if n == 0 {
                return Ok(None);
            }
            let mut pairs = Vec::new();
            let mut expiring = Vec::new();
            for _ in 0..n {
                let (field, value) = (r.string()?, r.string()?);
                // HASH_2 gives each field its expire time (-1: none).
                if ty == TYPE_HASH_2 {
                    let at = i64::from_le_bytes(r.exact()?);
                    if at != -1 {
                        expiring.push((pairs.len(), at));
                    }
                }
                pairs.push((field, value));
            }
            let mut h = build_hash(&pairs, lim)?;
            for (i, at) in expiring {
                h.set_field_expire(&pairs[i].0, Some(at));
            }
            Value::Agg(h.wrap())
        }
        TYPE_HASH_LISTPACK => {
            let lp = read_listpack(r)?;
            if lp.is_empty() {
                return Ok(None);
            }
            if lp.len() % 2 != 0 {
                return Err(corrupt("hash listpack with an odd number of entries"));
            }
            let items: Vec<Vec<u8>> = lp.iter().map(entry_bytes).collect();
            let pairs: Vec<(Vec<u8>, Vec<u8>)> =
                items.chunks(2).map(|p| (p[0].clone(), p[1].clone())).collect();
            Value::Agg(build_hash(&pairs, lim)?.wrap())
        }
        TYPE_ZSET_2 | TYPE_ZSET => {
            let n = r.length()?;
            if n == 0 {
                return Ok(None);
            }
            let mut pairs = Vec::new();
            for _ in 0..n {
                let member = r.string()?;
                let score = if ty == TYPE_ZSET_2 {
                    f64::from_le_bytes(r.exact()?)
                } else {
                    read_string_double(r)?
                };
                pairs.push((member, score));
            }
            Value::Agg(build_zset(pairs, lim)?.wrap())
        }
        TYPE_ZSET_LISTPACK => {
            let lp = read_listpack(r)?;
            if lp.is_empty() {
                return Ok(None);
            }
            if lp.len() % 2 != 0 {
                return Err(corrupt("sorted set listpack with an odd number of entries"));
            }
            let items: Vec<LpEntry<'_>> = lp.iter().collect();
            let mut pairs = Vec::new();
            for p in items.chunks(2) {
                let score = match p[1] {
                    LpEntry::Int(n) => n as f64,
                    LpEntry::Str(s) => parse_score(s)?,
                };
                pairs.push((entry_bytes(p[0]), score));
            }
            Value::Agg(build_zset(pairs, lim)?.wrap())
        }
        TYPE_STREAM_LISTPACKS | TYPE_STREAM_LISTPACKS_2 | TYPE_STREAM_LISTPACKS_3 => {
            Value::Agg(stream::read_stream(r, ty)?.wrap())
        }
        other => return Err(corrupt(format!("unsupported object type {other}"))),
    }))
}

pub(super) fn read_listpack<R: Read>(r: &mut RdbReader<R>) -> Result<Listpack, RdbError> {
    Listpack::from_bytes(&r.string()?).map_err(|e| corrupt(format!("bad listpack: {e:?}")))
}

/// A quicklist (`None` when no node holds an element: Valkey skips empty nodes).
fn read_quicklist<R: Read>(
    r: &mut RdbReader<R>,
    lim: &LoadLimits,
) -> Result<Option<ListObj>, RdbError> {
    let nodes = r.length()?;
    let mut list = ListObj::new();
    for _ in 0..nodes {
        let container = r.length()?;
        let blob = r.string()?;
        if blob.is_empty() {
            return Err(corrupt("quicklist node of zero bytes"));
        }
        let elements: Vec<Vec<u8>> = match container {
            CONTAINER_PLAIN => vec![blob],
            CONTAINER_PACKED => {
                let lp = Listpack::from_bytes(&blob)
                    .map_err(|e| corrupt(format!("bad quicklist node: {e:?}")))?;
                lp.iter().map(entry_bytes).collect()
            }
            other => return Err(corrupt(format!("unknown quicklist container {other}"))),
        };
        let bytes: usize = elements.iter().map(Vec::len).sum();
        list.grow_check(bytes, elements.len(), lim.list);
        for e in &elements {
            list.push(ListEnd::Tail, e, lim.list);
        }
    }
    Ok((!list.is_empty()).then_some(list))
}

fn build_set<'a>(
    mut members: impl Iterator<Item = &'a [u8]>,
    hint: usize,
    lim: &LoadLimits,
) -> Result<SetObj, RdbError> {
    let Some(first) = members.next() else { return Err(corrupt("empty set")) };
    let mut set = SetObj::for_first_member(first, hint, &lim.set);
    set.add(first, &lim.set);
    for m in members {
        if !set.add(m, &lim.set) {
            return Err(corrupt("duplicate set member"));
        }
    }
    Ok(set)
}

pub(super) fn build_hash(
    pairs: &[(Vec<u8>, Vec<u8>)],
    lim: &LoadLimits,
) -> Result<HashObj, RdbError> {
    if pairs.is_empty() {
        return Err(corrupt("empty hash"));
    }
    let mut h = HashObj::new();
    let items: Vec<&[u8]> = pairs.iter().flat_map(|(f, v)| [f.as_slice(), v.as_slice()]).collect();
    h.prepare_write(&items, lim.hash);
    for (f, v) in pairs {
        if !h.set(f, v, lim.hash) {
            return Err(corrupt("duplicate hash field"));
        }
    }
    Ok(h)
}

pub(super) fn build_zset(
    pairs: Vec<(Vec<u8>, f64)>,
    lim: &LoadLimits,
) -> Result<ZSetObj, RdbError> {
    if pairs.is_empty() {
        return Err(corrupt("empty sorted set"));
    }
    let longest = pairs.iter().map(|(m, _)| m.len()).max().unwrap_or(0);
    let mut z = ZSetObj::with_hint(lim.zset, pairs.len(), longest);
    for (m, score) in pairs {
        if score.is_nan() {
            return Err(corrupt("sorted set score is NaN"));
        }
        if z.set(&m, score, lim.zset).is_some() {
            return Err(corrupt("duplicate sorted set member"));
        }
    }
    Ok(z)
}

pub(super) fn parse_score(s: &[u8]) -> Result<f64, RdbError> {
    std::str::from_utf8(s)
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|v| !v.is_nan())
        .ok_or_else(|| corrupt("bad sorted set score"))
}

/// An old-style (ZSET, type 3) score: a length byte, with 253/254/255 for nan/+inf/-inf.
fn read_string_double<R: Read>(r: &mut RdbReader<R>) -> Result<f64, RdbError> {
    match r.byte()? {
        253 => Err(corrupt("sorted set score is NaN")),
        254 => Ok(f64::INFINITY),
        255 => Ok(f64::NEG_INFINITY),
        n => parse_score(&r.bytes(u64::from(n))?),
    }
}
