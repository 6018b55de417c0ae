//! Streams in RDB: the entries, the metadata and the consumer groups of one stream value, as
//! Valkey's `rdbSaveObject` / `rdbLoadObject` lay them out. This module owns the payload of
//! the three stream types only; the type byte, the key and the dispatch by type stay in
//! `value`. It reads no clock and no configuration: times are the ones stored.
//!
//! # Layout (lengths are RDB lengths, ids 16 raw big-endian bytes, times 8-byte LE ms)
//!
//! ```text
//!   nodes        count, then per node: master id (a 16-byte string), listpack (a string)
//!   metadata     length, last id (ms, seq)
//!                [19, 21] first id (ms, seq), max deleted id (ms, seq), entries added
//!   groups       count, then per group, in name byte order:
//!     name         string
//!     last id      ms, seq
//!     [19, 21]     entries read (a length; the unknown -1 is written as u64::MAX, the
//!                  9-byte length 81 ff ff ff ff ff ff ff ff)
//!     group PEL    count, then per pending id in id order: id, delivery time, count
//!     consumers    count, then per consumer, in name byte order:
//!       name         string
//!       seen time    time
//!       [21]         active time (-1: never active)
//!       own PEL      count, then its ids (raw, in id order; no NACK: it is the group's)
//! ```
//!
//! Written: type 19, which RDB 10 has and redis-server 7.0 loads. It has no active time;
//! Valkey loads a type 19 consumer as active when it was last seen, and so does `read`.
//!
//! Read: 15 (Redis 5: no first id, max deleted id, entries added or entries read; those are
//! derived as Valkey derives them), 19 and 21. A NACK is first read into a map of ids with
//! no owner; each consumer's PEL then takes its ids out of the map into the group. Refused
//! as corrupt: a duplicate group, consumer or group PEL id; a consumer's id missing from the
//! group PEL, or owned by an earlier consumer; a group PEL id that no consumer owns (Valkey
//! refuses it only under deep sanitization: here a NACK always names its owner); an entries
//! read counter past i64::MAX other than the unknown marker (XGROUP refuses such values).

use std::collections::BTreeMap;
use std::io::{self, Read, Write};

use super::encoding::{corrupt, RdbError, RdbReader, RdbWriter};
use super::value::{
    read_listpack, TYPE_STREAM_LISTPACKS, TYPE_STREAM_LISTPACKS_2, TYPE_STREAM_LISTPACKS_3,
};
use crate::types::stream::group::{ConsumerGroup, ConsumerGroups, StreamInfo};
use crate::types::stream::{Stream, StreamId, StreamMeta, StreamObj};

/// Valkey's `SCG_INVALID_ENTRIES_READ` (-1) as `rdbSaveLen` writes it: cast to u64.
const ENTRIES_READ_UNKNOWN: u64 = u64::MAX;

/// A stored active time that means "never active" (Valkey's -1).
const NEVER_ACTIVE: i64 = -1;

/// A stream's payload, type 19.
pub fn write_stream<W: Write>(w: &mut RdbWriter<W>, st: &StreamObj) -> io::Result<()> {
    let s = &st.stream;
    w.length(s.node_count() as u64)?;
    for (master, lp) in s.nodes() {
        w.string(&master.to_be_bytes())?;
        w.string(lp.as_bytes())?;
    }
    let m = s.meta();
    w.length(m.length)?;
    for id in [m.last_id, m.first_id, m.max_deleted_id] {
        write_id(w, id)?;
    }
    w.length(m.entries_added)?;
    match st.groups() {
        Some(groups) => write_groups(w, groups),
        None => w.length(0),
    }
}

/// An id as two lengths (ms, seq): the stream's and the groups' last ids.
fn write_id<W: Write>(w: &mut RdbWriter<W>, id: StreamId) -> io::Result<()> {
    w.length(id.ms)?;
    w.length(id.seq)
}

/// The groups of a type 19 payload (no active times).
fn write_groups<W: Write>(w: &mut RdbWriter<W>, groups: &ConsumerGroups) -> io::Result<()> {
    w.length(groups.len() as u64)?;
    for (name, group) in groups.iter() {
        w.string(name)?;
        write_id(w, group.last_id())?;
        w.length(group.entries_read().unwrap_or(ENTRIES_READ_UNKNOWN))?;
        w.length(group.pending_len() as u64)?;
        for nack in group.pending() {
            w.raw(&nack.id.to_be_bytes())?;
            w.raw(&nack.delivery_time_ms.to_le_bytes())?;
            w.length(nack.delivery_count)?;
        }
        w.length(group.consumers_len() as u64)?;
        for consumer in group.consumers() {
            w.string(consumer.name())?;
            w.raw(&consumer.seen_time_ms().to_le_bytes())?;
            w.length(consumer.pending_len() as u64)?;
            for id in consumer.pending_ids() {
                w.raw(&id.to_be_bytes())?;
            }
        }
    }
    Ok(())
}

/// A stream's payload (types 15, 19 and 21), its nodes checked as Valkey checks them.
pub fn read_stream<R: Read>(r: &mut RdbReader<R>, ty: u8) -> Result<StreamObj, RdbError> {
    debug_assert!(
        [TYPE_STREAM_LISTPACKS, TYPE_STREAM_LISTPACKS_2, TYPE_STREAM_LISTPACKS_3].contains(&ty)
    );
    let mut obj = StreamObj::new();
    obj.stream = read_entries(r, ty)?;
    read_groups(r, ty, &mut obj)?;
    Ok(obj)
}

/// The nodes and the metadata.
fn read_entries<R: Read>(r: &mut RdbReader<R>, ty: u8) -> Result<Stream, RdbError> {
    let count = r.length()?;
    let mut nodes = Vec::new();
    for _ in 0..count {
        let key = r.string()?;
        let key: [u8; 16] = key
            .try_into()
            .map_err(|_| corrupt("Stream node key entry is not the size of a stream ID"))?;
        let lp = read_listpack(r)?;
        if lp.is_empty() {
            return Err(corrupt("Empty listpack inside stream"));
        }
        nodes.push((StreamId::from_be_bytes(key), lp));
    }
    let length = r.length()?;
    let last_id = read_id(r)?;
    let (first_id, max_deleted_id, entries_added, known_first) = if ty == TYPE_STREAM_LISTPACKS {
        (StreamId::MIN, StreamId::MIN, length, false)
    } else {
        (read_id(r)?, read_id(r)?, r.length()?, true)
    };
    let meta = StreamMeta { length, last_id, first_id, max_deleted_id, entries_added };
    let mut stream =
        Stream::from_parts(nodes, meta).map_err(|e| corrupt(format!("bad stream: {e}")))?;
    if !known_first {
        stream.set_first_id(stream.first_live_id().unwrap_or(StreamId::MIN));
    }
    Ok(stream)
}

fn read_id<R: Read>(r: &mut RdbReader<R>) -> Result<StreamId, RdbError> {
    Ok(StreamId::new(r.length()?, r.length()?))
}

fn read_raw_id<R: Read>(r: &mut RdbReader<R>) -> Result<StreamId, RdbError> {
    Ok(StreamId::from_be_bytes(r.exact()?))
}

fn read_time_ms<R: Read>(r: &mut RdbReader<R>) -> Result<i64, RdbError> {
    Ok(i64::from_le_bytes(r.exact()?))
}

/// The consumer groups into `obj` (whose entries are read). A stream without groups keeps
/// none (no empty group set is made).
fn read_groups<R: Read>(r: &mut RdbReader<R>, ty: u8, obj: &mut StreamObj) -> Result<(), RdbError> {
    let count = r.length()?;
    let info = obj.stream.info();
    for _ in 0..count {
        let name = r.string()?;
        let last_id = read_id(r)?;
        let entries_read = read_entries_read(r, ty, &info, last_id)?;
        let group = obj.groups_mut().create(&name, last_id, entries_read).map_err(|_| {
            corrupt(format!("Duplicated consumer group name {}", String::from_utf8_lossy(&name)))
        })?;
        read_group_pels(r, ty, group)?;
    }
    Ok(())
}

/// A group's entries read counter: stored in types 19 and 21, estimated from its last id
/// for type 15 (Valkey's `streamEstimateDistanceFromFirstEverEntry`).
fn read_entries_read<R: Read>(
    r: &mut RdbReader<R>,
    ty: u8,
    info: &StreamInfo,
    last_id: StreamId,
) -> Result<Option<u64>, RdbError> {
    if ty == TYPE_STREAM_LISTPACKS {
        return Ok(info.entries_read_at(last_id));
    }
    match r.length()? {
        ENTRIES_READ_UNKNOWN => Ok(None),
        n if i64::try_from(n).is_ok() => Ok(Some(n)),
        n => Err(corrupt(format!("Stream cgroup entries read {n} out of range"))),
    }
}

/// A group's PEL and consumers (with their PELs).
fn read_group_pels<R: Read>(
    r: &mut RdbReader<R>,
    ty: u8,
    group: &mut ConsumerGroup,
) -> Result<(), RdbError> {
    // id -> (delivery time, delivery count), until a consumer claims it.
    let mut unowned: BTreeMap<StreamId, (i64, u64)> = BTreeMap::new();
    for _ in 0..r.length()? {
        let id = read_raw_id(r)?;
        let nack = (read_time_ms(r)?, r.length()?);
        if unowned.insert(id, nack).is_some() {
            return Err(corrupt(format!(
                "Duplicated global PEL entry {id} loading stream consumer group"
            )));
        }
    }
    for _ in 0..r.length()? {
        let name = r.string()?;
        let seen_time_ms = read_time_ms(r)?;
        // Type 19 has no active time: Valkey takes the seen time as the best estimate.
        let active_time_ms =
            if ty == TYPE_STREAM_LISTPACKS_3 { read_time_ms(r)? } else { seen_time_ms };
        let active_time_ms = (active_time_ms != NEVER_ACTIVE).then_some(active_time_ms);
        let consumer = group
            .restore_consumer(&name, seen_time_ms, active_time_ms)
            .ok_or_else(|| corrupt("Duplicate stream consumer detected."))?;
        for _ in 0..r.length()? {
            let id = read_raw_id(r)?;
            let Some((delivery_time_ms, delivery_count)) = unowned.remove(&id) else {
                return Err(if group.nack(id).is_some() {
                    corrupt(format!("Stream consumer PEL entry {id} owned twice"))
                } else {
                    corrupt(format!("Consumer entry {id} not found in group global PEL"))
                });
            };
            let fresh = group.restore_nack(consumer, id, delivery_time_ms, delivery_count);
            assert!(fresh, "an id taken from the unowned map was already pending");
        }
    }
    match unowned.first_key_value() {
        Some((id, _)) => Err(corrupt(format!("Stream CG PEL entry {id} without consumer"))),
        None => Ok(()),
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
