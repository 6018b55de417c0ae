//! Unit tests of stream payloads with consumer groups: DUMP payloads recorded from
//! redis-server 7.0 (type 19, written byte for byte) and valkey-server 9.1.2 (type 21, read),
//! round trips through DUMP/RESTORE, hand-built type 15 and 21 payloads, every corruption the
//! reader refuses, and damaged payloads (cut anywhere, bytes flipped) that never panic.

use super::*;
use crate::config::Config;
use crate::keyspace::value::{Value, ValueRef};
use crate::persist::rdb::dump;
use crate::persist::rdb::value::LoadLimits;
use crate::types::agg::{Agg, AggRef};
use crate::types::stream::NodeLimits;
use crate::util::rng::Rng;

/// redis-server 7.0.15, `rdbcompression no`: DUMP of `s` after
/// `XADD s 1-1 a 1`, `XADD s 2-1 b 2`, `XADD s 3-1 c 3`, `XGROUP CREATE s g1 0`,
/// `XREADGROUP GROUP g1 alice COUNT 2 STREAMS s >`, `XGROUP CREATECONSUMER s g1 bob`,
/// `XGROUP CREATE s g0 $`, `XGROUP SETID s g0 $` (entries read: unknown).
const REDIS_7_0_DUMP: &[u8] = &[
    0x13, 0x01, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x3a, 0x3a, 0x00, 0x00, 0x00, 0x18, 0x00, 0x03, 0x01, 0x00, 0x01, 0x01, 0x01,
    0x81, 0x61, 0x02, 0x00, 0x01, 0x02, 0x01, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x04, 0x01, 0x00,
    0x01, 0x01, 0x01, 0x00, 0x01, 0x01, 0x01, 0x81, 0x62, 0x02, 0x02, 0x01, 0x06, 0x01, 0x00, 0x01,
    0x02, 0x01, 0x00, 0x01, 0x01, 0x01, 0x81, 0x63, 0x02, 0x03, 0x01, 0x06, 0x01, 0xff, 0x03, 0x03,
    0x01, 0x01, 0x01, 0x00, 0x00, 0x03, 0x02, 0x02, 0x67, 0x30, 0x03, 0x01, 0x81, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x02, 0x67, 0x31, 0x02, 0x01, 0x02, 0x02, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xe1, 0xa6,
    0x04, 0x3a, 0xa2, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xe1, 0xa6, 0x04, 0x3a, 0xa2, 0x01, 0x00, 0x00, 0x01,
    0x02, 0x05, 0x61, 0x6c, 0x69, 0x63, 0x65, 0xe1, 0xa6, 0x04, 0x3a, 0xa2, 0x01, 0x00, 0x00, 0x02,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x03, 0x62, 0x6f, 0x62, 0xe9, 0xa6, 0x04, 0x3a, 0xa2, 0x01, 0x00, 0x00, 0x00, 0x0a, 0x00, 0xa0,
    0x79, 0xe9, 0xf1, 0xe8, 0xf1, 0x5c, 0x45,
];
/// The times in it: alice's deliveries and last sight, bob's creation.
const REDIS_ALICE_MS: i64 = 0x01a2_3a04_a6e1;
const REDIS_BOB_MS: i64 = 0x01a2_3a04_a6e9;

/// valkey-server 9.1.2, `rdbcompression no`: DUMP of `s` after the same commands, but
/// `XGROUP CREATE s g0 $ ENTRIESREAD -1` for g0. Type 21: each consumer has an active time
/// (bob's is -1, never), and the footer says RDB 80.
const VALKEY_9_1_DUMP: &[u8] = &[
    0x15, 0x01, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x3a, 0x3a, 0x00, 0x00, 0x00, 0x18, 0x00, 0x03, 0x01, 0x00, 0x01, 0x01, 0x01,
    0x81, 0x61, 0x02, 0x00, 0x01, 0x02, 0x01, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x04, 0x01, 0x00,
    0x01, 0x01, 0x01, 0x00, 0x01, 0x01, 0x01, 0x81, 0x62, 0x02, 0x02, 0x01, 0x06, 0x01, 0x00, 0x01,
    0x02, 0x01, 0x00, 0x01, 0x01, 0x01, 0x81, 0x63, 0x02, 0x03, 0x01, 0x06, 0x01, 0xff, 0x03, 0x03,
    0x01, 0x01, 0x01, 0x00, 0x00, 0x03, 0x02, 0x02, 0x67, 0x30, 0x03, 0x01, 0x81, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x02, 0x67, 0x31, 0x02, 0x01, 0x02, 0x02, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xce, 0xc6,
    0x04, 0x3a, 0xa2, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xce, 0xc6, 0x04, 0x3a, 0xa2, 0x01, 0x00, 0x00, 0x01,
    0x02, 0x05, 0x61, 0x6c, 0x69, 0x63, 0x65, 0xce, 0xc6, 0x04, 0x3a, 0xa2, 0x01, 0x00, 0x00, 0xce,
    0xc6, 0x04, 0x3a, 0xa2, 0x01, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x03, 0x62, 0x6f, 0x62, 0xd1, 0xc6, 0x04, 0x3a,
    0xa2, 0x01, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x50, 0x00, 0xce,
    0xe2, 0x7a, 0x63, 0x7b, 0x92, 0x11, 0x6e,
];
const VALKEY_ALICE_MS: i64 = 0x01a2_3a04_c6ce;
const VALKEY_BOB_MS: i64 = 0x01a2_3a04_c6d1;

fn lim() -> LoadLimits {
    LoadLimits::from_config(&Config::default())
}

fn id(ms: u64, seq: u64) -> StreamId {
    StreamId::new(ms, seq)
}

/// The entries of the recorded sessions: 1-1 a 1, 2-1 b 2, 3-1 c 3.
fn three_entries() -> StreamObj {
    let mut obj = StreamObj::new();
    for (ms, f, v) in [(1, "a", "1"), (2, "b", "2"), (3, "c", "3")] {
        obj.stream.append(id(ms, 1), &[f, v], NodeLimits::DEFAULT).unwrap();
    }
    obj
}

/// The recorded sessions' groups, with alice's and bob's times.
fn recorded_groups(alice_ms: i64, bob_ms: i64) -> StreamObj {
    let mut obj = three_entries();
    let groups = obj.groups_mut();
    groups.create(b"g0", id(3, 1), None).unwrap();
    let g1 = groups.create(b"g1", id(2, 1), Some(2)).unwrap();
    let alice = g1.restore_consumer(b"alice", alice_ms, Some(alice_ms)).unwrap();
    assert!(g1.restore_nack(alice, id(1, 1), alice_ms, 1));
    assert!(g1.restore_nack(alice, id(2, 1), alice_ms, 1));
    g1.restore_consumer(b"bob", bob_ms, None).unwrap();
    obj
}

/// Everything a stream's groups hold, one line per group, NACK and consumer.
fn describe(obj: &StreamObj) -> Vec<String> {
    let mut out = Vec::new();
    let Some(groups) = obj.groups() else { return out };
    for (name, g) in groups.iter() {
        g.check_invariants();
        let name = String::from_utf8_lossy(name);
        out.push(format!("group {name} last {} read {:?}", g.last_id(), g.entries_read()));
        for p in g.pending() {
            let owner = String::from_utf8_lossy(p.consumer);
            out.push(format!(
                "  nack {} {owner} {} {}",
                p.id, p.delivery_time_ms, p.delivery_count
            ));
        }
        for c in g.consumers() {
            let ids: Vec<String> = c.pending_ids().map(|i| i.to_string()).collect();
            out.push(format!(
                "  consumer {} seen {} active {:?} pel {ids:?}",
                String::from_utf8_lossy(c.name()),
                c.seen_time_ms(),
                c.active_time_ms()
            ));
        }
    }
    out
}

fn dump_of(obj: &StreamObj, compress: bool) -> Vec<u8> {
    dump::payload(ValueRef::Agg(AggRef::Stream(obj)), compress)
}

fn restored(payload: &[u8]) -> Box<StreamObj> {
    match dump::parse(payload, &lim(), 1 << 20) {
        Ok(Value::Agg(Agg::Stream(obj))) => obj,
        Ok(_) => panic!("not a stream"),
        Err(e) => panic!("payload refused: {e:?}"),
    }
}

/// The stream type's payload (no type byte) read alone.
fn read(ty: u8, payload: &[u8]) -> Result<StreamObj, RdbError> {
    let mut r = RdbReader::new(payload, 1 << 20);
    let obj = read_stream(&mut r, ty)?;
    assert_eq!(r.position(), payload.len() as u64, "bytes left after the stream");
    Ok(obj)
}

#[test]
fn writes_redis_7_0_type_19_byte_for_byte() {
    let obj = recorded_groups(REDIS_ALICE_MS, REDIS_BOB_MS);
    assert_eq!(dump_of(&obj, false), REDIS_7_0_DUMP);
}

#[test]
fn reads_redis_7_0_type_19_consumers_active_when_last_seen() {
    let obj = restored(REDIS_7_0_DUMP);
    assert_eq!(obj.stream, three_entries().stream);
    // Type 19 has no active time: bob, never active, loads as active when last seen.
    let expected = recorded_groups(REDIS_ALICE_MS, REDIS_BOB_MS);
    let mut expected = describe(&expected);
    expected[5] = format!("  consumer bob seen {REDIS_BOB_MS} active Some({REDIS_BOB_MS}) pel []");
    assert_eq!(describe(&obj), expected);
}

#[test]
fn reads_valkey_9_1_type_21() {
    let obj = restored(VALKEY_9_1_DUMP);
    assert_eq!(obj.stream, three_entries().stream);
    let a = VALKEY_ALICE_MS;
    assert_eq!(
        describe(&obj),
        [
            "group g0 last 3-1 read None".to_string(),
            "group g1 last 2-1 read Some(2)".into(),
            format!("  nack 1-1 alice {a} 1"),
            format!("  nack 2-1 alice {a} 1"),
            format!("  consumer alice seen {a} active Some({a}) pel [\"1-1\", \"2-1\"]"),
            format!("  consumer bob seen {VALKEY_BOB_MS} active None pel []"),
        ]
    );
    assert_eq!(describe(&obj), describe(&recorded_groups(a, VALKEY_BOB_MS)));
}

/// Groups that exercise every encoding: names stored as integers and LZF-compressed, a
/// consumer without pending entries, NACKs of deleted entries, extreme counts, times and
/// ids, an empty group, a stream without entries; then `more` groups `g000`, `g001`...
/// with 0, 1, 2... pending entries.
fn varied_groups(entries: bool, more: u64) -> StreamObj {
    let mut obj = if entries { three_entries() } else { StreamObj::new() };
    if entries {
        assert!(obj.stream.delete(id(2, 1)));
    }
    let groups = obj.groups_mut();
    let long_name = [b'x'; 300];
    groups.create(&long_name, StreamId::MAX, Some(i64::MAX as u64)).unwrap();
    let numeric = groups.create(b"12345", id(1, 1), Some(1)).unwrap();
    // Active when last seen: type 19 stores no active time (see the recorded payloads).
    let c = numeric.restore_consumer(b"-7", 0, Some(0)).unwrap();
    assert!(numeric.restore_nack(c, id(2, 1), -5, u64::MAX));
    assert!(numeric.restore_nack(c, StreamId::MAX, i64::MAX, 0));
    let d = numeric.restore_consumer(&long_name, i64::MIN, Some(i64::MIN)).unwrap();
    assert!(numeric.restore_nack(d, id(1, 1), 1, 2));
    numeric.restore_consumer(b"", 7, Some(7)).unwrap();
    for n in 0..more {
        let g = groups.create(format!("g{n:03}").as_bytes(), id(n, n), None).unwrap();
        let c = g.restore_consumer(format!("c{n}").as_bytes(), n as i64, Some(n as i64)).unwrap();
        for k in 0..n {
            assert!(g.restore_nack(c, id(k, 1 << 40), 1_700_000_000_000, k));
        }
    }
    obj
}

#[test]
fn groups_round_trip_through_dump_and_restore() {
    for entries in [true, false] {
        let obj = varied_groups(entries, 100);
        for compress in [false, true] {
            let back = restored(&dump_of(&obj, compress));
            assert_eq!(back.stream, obj.stream);
            assert_eq!(describe(&back), describe(&obj), "entries {entries} lzf {compress}");
        }
    }
    // A stream whose groups were all destroyed writes no group and loads without any.
    let mut obj = three_entries();
    obj.groups_mut().create(b"g", StreamId::MIN, Some(0)).unwrap();
    assert!(obj.groups_mut().destroy(b"g"));
    assert!(restored(&dump_of(&obj, false)).groups().is_none());
}

/// A group as a hand-built payload spells it.
struct G<'a> {
    name: &'a [u8],
    last: StreamId,
    /// Written as is (u64::MAX for unknown); not written for type 15.
    entries_read: u64,
    pel: Vec<(StreamId, i64, u64)>,
    consumers: Vec<C<'a>>,
}

struct C<'a> {
    name: &'a [u8],
    seen: i64,
    /// Written for type 21 only.
    active: i64,
    ids: Vec<StreamId>,
}

/// The payload of `entries`' nodes and metadata with `groups`, as type `ty` lays it out.
fn hand_built(ty: u8, entries: &StreamObj, groups: &[G<'_>]) -> Vec<u8> {
    let mut w = RdbWriter::new(Vec::new(), false);
    let s = &entries.stream;
    w.length(s.node_count() as u64).unwrap();
    for (master, lp) in s.nodes() {
        w.string(&master.to_be_bytes()).unwrap();
        w.string(lp.as_bytes()).unwrap();
    }
    let m = s.meta();
    w.length(m.length).unwrap();
    write_id(&mut w, m.last_id).unwrap();
    if ty != TYPE_STREAM_LISTPACKS {
        write_id(&mut w, m.first_id).unwrap();
        write_id(&mut w, m.max_deleted_id).unwrap();
        w.length(m.entries_added).unwrap();
    }
    w.length(groups.len() as u64).unwrap();
    for g in groups {
        w.string(g.name).unwrap();
        write_id(&mut w, g.last).unwrap();
        if ty != TYPE_STREAM_LISTPACKS {
            w.length(g.entries_read).unwrap();
        }
        w.length(g.pel.len() as u64).unwrap();
        for &(id, time, count) in &g.pel {
            w.raw(&id.to_be_bytes()).unwrap();
            w.raw(&time.to_le_bytes()).unwrap();
            w.length(count).unwrap();
        }
        w.length(g.consumers.len() as u64).unwrap();
        for c in &g.consumers {
            w.string(c.name).unwrap();
            w.raw(&c.seen.to_le_bytes()).unwrap();
            if ty == TYPE_STREAM_LISTPACKS_3 {
                w.raw(&c.active.to_le_bytes()).unwrap();
            }
            w.length(c.ids.len() as u64).unwrap();
            for id in &c.ids {
                w.raw(&id.to_be_bytes()).unwrap();
            }
        }
    }
    w.into_inner()
}

/// A group at `last` with one consumer "c" (seen 10, active 20) owning `ids`.
fn group_owning<'a>(name: &'a [u8], last: StreamId, ids: &[StreamId]) -> G<'a> {
    G {
        name,
        last,
        entries_read: 5,
        pel: ids.iter().map(|&i| (i, 100, 3)).collect(),
        consumers: vec![C { name: b"c", seen: 10, active: 20, ids: ids.to_vec() }],
    }
}

#[test]
fn reads_hand_built_type_21() {
    let mut never = group_owning(b"b", id(1, 1), &[]);
    never.consumers[0].active = -1;
    never.entries_read = u64::MAX;
    let groups = [group_owning(b"a", id(3, 1), &[id(1, 1), id(3, 1)]), never];
    let obj = read(TYPE_STREAM_LISTPACKS_3, &hand_built(21, &three_entries(), &groups)).unwrap();
    assert_eq!(
        describe(&obj),
        [
            "group a last 3-1 read Some(5)",
            "  nack 1-1 c 100 3",
            "  nack 3-1 c 100 3",
            "  consumer c seen 10 active Some(20) pel [\"1-1\", \"3-1\"]",
            "group b last 1-1 read None",
            "  consumer c seen 10 active None pel []",
        ]
    );
    // Type 19 of the same groups: no active time is stored, the seen time stands for it.
    let obj = read(TYPE_STREAM_LISTPACKS_2, &hand_built(19, &three_entries(), &groups)).unwrap();
    let lines = describe(&obj);
    assert_eq!(lines[3], "  consumer c seen 10 active Some(10) pel [\"1-1\", \"3-1\"]");
    assert_eq!(lines[5], "  consumer c seen 10 active Some(10) pel []");
}

#[test]
fn reads_hand_built_type_15_estimating_entries_read() {
    // No entries read in type 15: Valkey estimates them from each group's last id (the
    // stream's entries added being its length, nothing deleted).
    let groups = [
        group_owning(b"at-start", StreamId::MIN, &[]),
        group_owning(b"at-first", id(1, 1), &[]),
        group_owning(b"inside", id(2, 1), &[id(1, 1)]),
        group_owning(b"at-last", id(3, 1), &[id(2, 1), id(3, 1)]),
        group_owning(b"past-last", id(9, 0), &[]),
    ];
    let obj = read(TYPE_STREAM_LISTPACKS, &hand_built(15, &three_entries(), &groups)).unwrap();
    let g = obj.groups().unwrap();
    let read_of = |name: &[u8]| g.get(name).unwrap().entries_read();
    assert_eq!(read_of(b"at-start"), Some(0));
    assert_eq!(read_of(b"at-first"), Some(1));
    assert_eq!(read_of(b"inside"), None);
    assert_eq!(read_of(b"at-last"), Some(3));
    assert_eq!(read_of(b"past-last"), None);
    let c = g.get(b"at-last").unwrap().consumer(b"c").unwrap();
    assert_eq!((c.seen_time_ms(), c.active_time_ms(), c.pending_len()), (10, Some(10), 2));
    assert_eq!(obj.stream.meta().first_id, id(1, 1));
}

/// `groups` as a type 21 payload must be refused with an error that mentions `why`.
fn assert_refused(groups: &[G<'_>], why: &str) {
    let payload = hand_built(21, &three_entries(), groups);
    match read(TYPE_STREAM_LISTPACKS_3, &payload) {
        Err(RdbError::Corrupt(text)) => assert!(text.contains(why), "{text:?} lacks {why:?}"),
        Err(e) => panic!("{why}: not a corruption: {e}"),
        Ok(_) => panic!("{why}: loaded"),
    }
}

#[test]
fn corrupt_groups_are_refused() {
    let (a, b) = (id(1, 1), id(2, 1));
    assert_refused(
        &[group_owning(b"g", a, &[a]), group_owning(b"g", a, &[])],
        "Duplicated consumer group name g",
    );

    let mut twin = group_owning(b"g", a, &[a]);
    twin.consumers.push(C { name: b"c", seen: 1, active: 1, ids: vec![] });
    assert_refused(&[twin], "Duplicate stream consumer");

    let mut stray = group_owning(b"g", a, &[a]);
    stray.consumers[0].ids.push(b);
    assert_refused(&[stray], "Consumer entry 2-1 not found in group global PEL");

    let mut orphan = group_owning(b"g", a, &[a]);
    orphan.pel.push((b, 1, 1));
    assert_refused(&[orphan], "Stream CG PEL entry 2-1 without consumer");

    let mut shared = group_owning(b"g", a, &[a, b]);
    shared.consumers.push(C { name: b"d", seen: 1, active: 1, ids: vec![b] });
    assert_refused(&[shared], "Stream consumer PEL entry 2-1 owned twice");

    let mut repeated = group_owning(b"g", a, &[a, b]);
    repeated.consumers[0].ids.push(a);
    assert_refused(&[repeated], "Stream consumer PEL entry 1-1 owned twice");

    let mut doubled = group_owning(b"g", a, &[a]);
    doubled.pel.push((a, 1, 1));
    assert_refused(&[doubled], "Duplicated global PEL entry 1-1");

    let mut overflow = group_owning(b"g", a, &[]);
    overflow.entries_read = i64::MAX as u64 + 1;
    assert_refused(&[overflow], "entries read 9223372036854775808 out of range");
}

#[test]
fn damaged_payloads_are_refused_or_consistent() {
    let mut payloads = vec![REDIS_7_0_DUMP.to_vec(), VALKEY_9_1_DUMP.to_vec()];
    payloads.push(dump_of(&varied_groups(true, 4), false));
    let mut rng = Rng::new(18);
    for payload in payloads {
        let body_len = payload.len() - 10;
        // Cut anywhere: refused. RESTORE's footer check would catch a cut first, so the
        // value reader is given the cut body alone.
        for cut in 0..body_len {
            let mut r = RdbReader::new(&payload[1..cut.max(1)], 1 << 20);
            assert!(read_stream(&mut r, payload[0]).is_err(), "cut at {cut}");
        }
        // Bytes flipped anywhere after the type byte (no checksum to stop them): an error,
        // or groups whose PELs agree.
        for _ in 0..3000 {
            let mut body = payload[1..body_len].to_vec();
            for _ in 0..=rng.below(3) {
                let at = rng.below(body.len());
                body[at] ^= 1 << rng.below(8);
            }
            let mut r = RdbReader::new(&body[..], 1 << 20);
            if let Ok(obj) = read_stream(&mut r, payload[0]) {
                describe(&obj);
            }
        }
    }
}
