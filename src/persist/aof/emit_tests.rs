//! Unit tests of the rewrite's commands for streams with consumer groups: the exact command
//! list Valkey's `rewriteStreamObject` writes for the same data.

use super::*;
use crate::persist::aof::reader::{CommandReader, ReadLimits};
use crate::types::stream::NodeLimits;

fn id(ms: u64, seq: u64) -> StreamId {
    StreamId::new(ms, seq)
}

/// The commands of `stream_commands` for `st` under the key `s`, one string per command
/// with its arguments separated by spaces.
fn commands(st: &StreamObj) -> Vec<String> {
    let mut buf = Vec::new();
    stream_commands(&mut buf, b"s", st);
    let mut reader = CommandReader::new(&buf[..], 0, Some(buf.len() as u64), ReadLimits::default());
    let mut out = Vec::new();
    while let Some(argv) = reader.next_command().expect("well-formed commands") {
        let args: Vec<String> = argv.iter().map(|a| String::from_utf8_lossy(a).into()).collect();
        out.push(args.join(" "));
    }
    out
}

/// Two groups on entries 1-1, 2-1, 3-1 (2-1 deleted): `g1` with an unknown read counter, a
/// consumer without pending entries between two with some; `g0` read to the end.
fn fixture(entries: bool) -> StreamObj {
    let mut st = StreamObj::new();
    if entries {
        for ms in 1..=3 {
            st.stream.append(id(ms, 1), &["f", "v"], NodeLimits::DEFAULT).unwrap();
        }
        assert!(st.stream.delete(id(2, 1)));
    }
    let groups = st.groups_mut();
    let g1 = groups.create(b"g1", id(2, 1), None).unwrap();
    let bob = g1.restore_consumer(b"bob", 50, Some(60)).unwrap();
    assert!(g1.restore_nack(bob, id(2, 1), 1_700_000_000_001, 1));
    assert!(g1.restore_nack(bob, id(1, 1), 1_700_000_000_000, 3));
    g1.restore_consumer(b"carol", 70, None).unwrap();
    let alice = g1.restore_consumer(b"alice", 80, Some(80)).unwrap();
    assert!(g1.restore_nack(alice, id(3, 1), 1_700_000_000_002, u64::MAX));
    groups.create(b"g0", id(3, 1), Some(3)).unwrap();
    st
}

#[test]
fn groups_are_rewritten_as_valkey_rewrites_them() {
    assert_eq!(
        commands(&fixture(true)),
        [
            "XADD s 1-1 f v",
            "XADD s 3-1 f v",
            "XSETID s 3-1 ENTRIESADDED 3 MAXDELETEDID 2-1",
            "XGROUP CREATE s g0 3-1 ENTRIESREAD 3",
            "XGROUP CREATE s g1 2-1 ENTRIESREAD -1",
            "XCLAIM s g1 alice 0 3-1 TIME 1700000000002 RETRYCOUNT 9223372036854775807 JUSTID FORCE",
            "XCLAIM s g1 bob 0 1-1 TIME 1700000000000 RETRYCOUNT 3 JUSTID FORCE",
            "XCLAIM s g1 bob 0 2-1 TIME 1700000000001 RETRYCOUNT 1 JUSTID FORCE",
            "XGROUP CREATECONSUMER s g1 carol",
        ]
    );
}

#[test]
fn groups_of_an_empty_stream_follow_the_maxlen_0_trick() {
    assert_eq!(
        commands(&fixture(false)),
        [
            "XADD s MAXLEN 0 0-1 x y",
            "XSETID s 0-0 ENTRIESADDED 0 MAXDELETEDID 0-0",
            "XGROUP CREATE s g0 3-1 ENTRIESREAD 3",
            "XGROUP CREATE s g1 2-1 ENTRIESREAD -1",
            "XCLAIM s g1 alice 0 3-1 TIME 1700000000002 RETRYCOUNT 9223372036854775807 JUSTID FORCE",
            "XCLAIM s g1 bob 0 1-1 TIME 1700000000000 RETRYCOUNT 3 JUSTID FORCE",
            "XCLAIM s g1 bob 0 2-1 TIME 1700000000001 RETRYCOUNT 1 JUSTID FORCE",
            "XGROUP CREATECONSUMER s g1 carol",
        ]
    );
    // Without groups (or with all destroyed), nothing follows XSETID.
    let mut st = StreamObj::new();
    st.groups_mut().create(b"g", StreamId::MIN, None).unwrap();
    assert!(st.groups_mut().destroy(b"g"));
    assert_eq!(
        commands(&st),
        ["XADD s MAXLEN 0 0-1 x y", "XSETID s 0-0 ENTRIESADDED 0 MAXDELETEDID 0-0"]
    );
}
