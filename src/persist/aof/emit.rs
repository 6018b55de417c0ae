//! The dataset as commands: the base file of a rewrite when `aof-use-rdb-preamble` is no.
//!
//! Per non-empty database a `SELECT`, then per live key the commands that rebuild it:
//! `SET`, or `RPUSH` / `SADD` / `ZADD` / `HSET` with at most 64 elements each (Valkey's
//! `AOF_REWRITE_ITEMS_PER_CMD`, so no single command is huge), then `PEXPIREAT` for a key
//! with an expire time. Scores are written as `%.17g`, which reads back to the same double.
//! A stream is rebuilt with XADD and XSETID, its consumer groups with XGROUP and XCLAIM
//! (Valkey's `rewriteStreamObject`).

use std::io::{self, Write};

use crate::keyspace::db::{Db, ObjView};
use crate::keyspace::value::ValueRef;
use crate::resp::reply::format_double;
use crate::types::agg::AggRef;
use crate::types::stream::group::ConsumerGroup;
use crate::types::stream::{StreamId, StreamObj};
use crate::types::string::StrRef;

use crate::server::propagate::append_command;

/// Elements per rebuilding command.
const ITEMS_PER_CMD: usize = 64;

/// Writes every live key of `dbs` as commands.
pub fn write_commands<W: Write>(out: &mut W, dbs: &[Db], now_ms: i64) -> io::Result<()> {
    let mut buf = Vec::with_capacity(1 << 16);
    for (n, db) in dbs.iter().enumerate() {
        if db.is_empty() {
            continue;
        }
        append_command(&mut buf, &[b"SELECT".as_slice(), n.to_string().as_bytes()]);
        let mut result = Ok(());
        db.for_each_with_values(|key, e| {
            if result.is_err() || !Db::is_live(e, now_ms) {
                return;
            }
            key_commands(&mut buf, key, e.value_ref());
            if let Some(at) = e.expire_at_ms() {
                append_command(
                    &mut buf,
                    &[b"PEXPIREAT".as_slice(), key, at.to_string().as_bytes()],
                );
            }
            if buf.len() >= 1 << 16 {
                result = out.write_all(&buf);
                buf.clear();
            }
        });
        result?;
    }
    out.write_all(&buf)
}

/// The commands that rebuild one key.
fn key_commands(buf: &mut Vec<u8>, key: &[u8], v: ValueRef<'_>) {
    match v {
        ValueRef::Str(StrRef::Raw(b)) => append_command(buf, &[b"SET".as_slice(), key, b]),
        ValueRef::Str(StrRef::Int(n)) => {
            append_command(buf, &[b"SET".as_slice(), key, n.to_string().as_bytes()])
        }
        ValueRef::Agg(AggRef::List(l)) => batched(buf, b"RPUSH", key, l.iter().map(|e| e.to_vec())),
        ValueRef::Agg(AggRef::Set(s)) => batched(buf, b"SADD", key, s.iter().map(|e| e.to_vec())),
        ValueRef::Agg(AggRef::Hash(h)) if h.has_volatile() => {
            // As Valkey 9.1 rewrites them: `HSETEX key PXAT <unix-ms> FIELDS 1 field value`
            // per field with a TTL, the others batched as usual.
            let persistent = h
                .iter_with_expire()
                .filter(|(_, at)| at.is_none())
                .flat_map(|((f, v), _)| [f.to_vec(), v.to_vec()]);
            batched_by(buf, b"HSET", key, persistent, 2);
            for ((f, v), at) in h.iter_with_expire() {
                let Some(at) = at else { continue };
                let (at, f, v) = (at.to_string(), f.to_vec(), v.to_vec());
                let argv: [&[u8]; 8] =
                    [b"HSETEX", key, b"PXAT", at.as_bytes(), b"FIELDS", b"1", &f, &v];
                append_command(buf, &argv);
            }
        }
        ValueRef::Agg(AggRef::Hash(h)) => {
            let pairs = h.iter().flat_map(|(f, v)| [f.to_vec(), v.to_vec()]);
            batched_by(buf, b"HSET", key, pairs, 2)
        }
        ValueRef::Agg(AggRef::ZSet(z)) => {
            let mut items = Vec::with_capacity(z.len().min(ITEMS_PER_CMD) * 2);
            z.for_each(|m, score| {
                items.push(format_double(score).into_bytes());
                items.push(m.to_vec());
            });
            batched_by(buf, b"ZADD", key, items.into_iter(), 2)
        }
        ValueRef::Agg(AggRef::Stream(st)) => stream_commands(buf, key, st),
    }
}

/// A stream as Valkey's `rewriteStreamObject` writes it: an XADD per entry (an empty stream:
/// `XADD key MAXLEN 0 0-1 x y`), then XSETID with the last id, the entries added and the max
/// deleted id, then its consumer groups (see [`group_commands`]).
fn stream_commands(buf: &mut Vec<u8>, key: &[u8], st: &StreamObj) {
    let s = &st.stream;
    if s.is_empty() {
        append_command(buf, &[&b"XADD"[..], key, b"MAXLEN", b"0", b"0-1", b"x", b"y"]);
    }
    for e in s.range(StreamId::MIN, StreamId::MAX, false) {
        let mut argv: Vec<Vec<u8>> = vec![b"XADD".to_vec(), key.to_vec()];
        argv.push(e.id().to_string().into_bytes());
        for (f, v) in e.fields() {
            argv.push(f.to_vec());
            argv.push(v.to_vec());
        }
        append_command(buf, &argv);
    }
    let m = s.meta();
    append_command(
        buf,
        &[
            b"XSETID".to_vec(),
            key.to_vec(),
            m.last_id.to_string().into_bytes(),
            b"ENTRIESADDED".to_vec(),
            m.entries_added.to_string().into_bytes(),
            b"MAXDELETEDID".to_vec(),
            m.max_deleted_id.to_string().into_bytes(),
        ],
    );
    if let Some(groups) = st.groups() {
        for (name, group) in groups.iter() {
            group_commands(buf, key, name, group);
        }
    }
}

/// One consumer group, as Valkey rewrites it:
///
/// ```text
///   XGROUP CREATE key group last-id ENTRIESREAD n        n = -1 when unknown
///   per consumer, in name order:
///     no pending entry:  XGROUP CREATECONSUMER key group consumer
///     else, per pending id in id order:
///       XCLAIM key group consumer 0 id TIME delivery-ms RETRYCOUNT count JUSTID FORCE
/// ```
///
/// XCLAIM with FORCE creates the consumer and the NACK; JUSTID keeps the count RETRYCOUNT
/// set. What the replay cannot restore, as in Valkey: seen and active times (the replay's
/// now), a delivery time in the future (XCLAIM takes now instead), and NACKs of entries no
/// longer in the stream (XCLAIM drops them).
fn group_commands(buf: &mut Vec<u8>, key: &[u8], name: &[u8], group: &ConsumerGroup) {
    let entries_read = group.entries_read().map_or_else(|| "-1".to_string(), |n| n.to_string());
    let last_id = group.last_id().to_string();
    append_command(
        buf,
        &[
            &b"XGROUP"[..],
            b"CREATE",
            key,
            name,
            last_id.as_bytes(),
            b"ENTRIESREAD",
            entries_read.as_bytes(),
        ],
    );
    for consumer in group.consumers() {
        if consumer.pending_len() == 0 {
            append_command(buf, &[&b"XGROUP"[..], b"CREATECONSUMER", key, name, consumer.name()]);
            continue;
        }
        for id in consumer.pending_ids() {
            let nack = group.nack(id).expect("a consumer's pending id is in the group PEL");
            // Valkey writes the count as a signed 64-bit number; past i64::MAX (which no
            // command makes) it would wrap, and XCLAIM would ignore it: clamped instead.
            let count = nack.delivery_count.min(i64::MAX as u64).to_string();
            append_command(
                buf,
                &[
                    &b"XCLAIM"[..],
                    key,
                    name,
                    consumer.name(),
                    b"0",
                    id.to_string().as_bytes(),
                    b"TIME",
                    nack.delivery_time_ms.to_string().as_bytes(),
                    b"RETRYCOUNT",
                    count.as_bytes(),
                    b"JUSTID",
                    b"FORCE",
                ],
            );
        }
    }
}

fn batched(buf: &mut Vec<u8>, cmd: &[u8], key: &[u8], items: impl Iterator<Item = Vec<u8>>) {
    batched_by(buf, cmd, key, items, 1)
}

/// `cmd key item...` with up to `ITEMS_PER_CMD` groups of `group` items per command.
fn batched_by(
    buf: &mut Vec<u8>,
    cmd: &[u8],
    key: &[u8],
    items: impl Iterator<Item = Vec<u8>>,
    group: usize,
) {
    let mut argv: Vec<Vec<u8>> = vec![cmd.to_vec(), key.to_vec()];
    for item in items {
        argv.push(item);
        if argv.len() - 2 == ITEMS_PER_CMD * group {
            append_command(buf, &argv);
            argv.truncate(2);
        }
    }
    if argv.len() > 2 {
        append_command(buf, &argv);
    }
}

#[cfg(test)]
#[path = "emit_tests.rs"]
mod tests;
