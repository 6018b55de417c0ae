//! The dataset as commands: the base file of a rewrite when `aof-use-rdb-preamble` is no.
//!
//! Per non-empty database a `SELECT`, then per live key the commands that rebuild it:
//! `SET`, or `RPUSH` / `SADD` / `ZADD` / `HSET` with at most 64 elements each (Valkey's
//! `AOF_REWRITE_ITEMS_PER_CMD`, so no single command is huge), then `PEXPIREAT` for a key
//! with an expire time. Scores are written as `%.17g`, which reads back to the same double.

use std::io::{self, Write};

use crate::keyspace::db::{Db, ObjView};
use crate::keyspace::value::ValueRef;
use crate::resp::reply::format_double;
use crate::types::agg::AggRef;
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

/// A stream as Valkey rewrites it: an XADD per entry (an empty stream: `XADD key MAXLEN 0
/// 0-1 x y`), then XSETID with the last id, the entries added and the max deleted id.
fn stream_commands(buf: &mut Vec<u8>, key: &[u8], st: &crate::types::stream::StreamObj) {
    use crate::types::stream::StreamId;
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
    // No group can exist before the group commands (a file with groups is refused).
    debug_assert!(st.groups().is_none_or(|g| g.is_empty()));
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
