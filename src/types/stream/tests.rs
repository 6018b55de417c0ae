//! Tests of the stream: the node bytes against Valkey's (two DUMPs and a differential
//! fixture from Valkey 9.1.2), node limits, lookups, deletes, trims and their quirks, the
//! checks on loaded nodes, and a seeded model test against a `BTreeMap`.

use std::collections::BTreeMap;

use super::fixture::{self, Op};
use super::node::{Head, Master};
use super::*;
use crate::types::listpack::LpEntry;
use crate::util::rng::Rng;

type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

fn id(ms: u64, seq: u64) -> StreamId {
    StreamId::new(ms, seq)
}

fn hex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2));
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

/// The elements of a listpack, integers as `Int` and strings as `Str`.
fn elements(lp: &Listpack) -> Vec<LpEntry<'_>> {
    lp.iter().collect()
}

fn pairs_of(e: &EntryRef<'_>) -> Pairs {
    e.fields().map(|(f, v)| (f.to_vec(), v.to_vec())).collect()
}

fn all(s: &Stream, rev: bool) -> Vec<(StreamId, Pairs)> {
    s.range(StreamId::MIN, StreamId::MAX, rev).map(|e| (e.id(), pairs_of(&e))).collect()
}

/// Every entry of a node, tombstones included: (id, live).
fn node_entries(key: StreamId, lp: &Listpack) -> Vec<(StreamId, bool)> {
    let master = Master::read(lp);
    let mut out = Vec::new();
    let mut at = master.first_entry(lp);
    while let Some(p) = at {
        let head = Head::read(lp, key, &master, p);
        out.push((head.id, !head.is_deleted()));
        at = head.next(lp);
    }
    out
}

const UNLIMITED: NodeLimits = NodeLimits { max_bytes: 0, max_entries: 0 };

// ----- layout ------------------------------------------------------------------------------

/// XADD s 1-1 name alice age 30; 1-2 name bob age 25; 2-5 city paris; 3-0 name carol age
/// -7000, then XDEL s 1-2: the node bytes Valkey 9.1.2 DUMPs after each step.
const VALKEY_NODE: &str = "650000001f00040100010201846e616d65058361676504000102010001000185616c696365061e01050102010001010183626f620419010501000101010401010184636974790585706172697306060102010201dfff02856361726f6c06f1a8e4030501ff";
const VALKEY_NODE_AFTER_XDEL: &str = "650000001f00030101010201846e616d65058361676504000102010001000185616c696365061e01050103010001010183626f620419010501000101010401010184636974790585706172697306060102010201dfff02856361726f6c06f1a8e4030501ff";

fn people() -> Stream {
    let mut s = Stream::new();
    s.append(id(1, 1), &["name", "alice", "age", "30"], NodeLimits::DEFAULT).unwrap();
    s.append(id(1, 2), &["name", "bob", "age", "25"], NodeLimits::DEFAULT).unwrap();
    s.append(id(2, 5), &["city", "paris"], NodeLimits::DEFAULT).unwrap();
    s.append(id(3, 0), &["name", "carol", "age", "-7000"], NodeLimits::DEFAULT).unwrap();
    s
}

#[test]
fn node_elements_follow_valkeys_layout() {
    use LpEntry::{Int, Str};
    let s = people();
    assert_eq!(s.node_count(), 1);
    let (key, lp) = s.nodes().next().unwrap();
    assert_eq!(key, id(1, 1));
    #[rustfmt::skip]
    let want = vec![
        // master: count, deleted, field count, fields, terminator
        Int(4), Int(0), Int(2), Str(b"name"), Str(b"age"), Int(0),
        // 1-1: SAMEFIELDS, delta 0-0, values, lp-count 3 + 2
        Int(2), Int(0), Int(0), Str(b"alice"), Int(30), Int(5),
        // 1-2: SAMEFIELDS, delta 0-1
        Int(2), Int(0), Int(1), Str(b"bob"), Int(25), Int(5),
        // 2-5: other fields: flags 0, delta 1-4, field count, field, value, lp-count 3+1+2
        Int(0), Int(1), Int(4), Int(1), Str(b"city"), Str(b"paris"), Int(6),
        // 3-0: SAMEFIELDS, delta 2-(-1): the seq difference wraps below zero
        Int(2), Int(2), Int(-1), Str(b"carol"), Int(-7000), Int(5),
    ];
    assert_eq!(elements(lp), want);
    assert_eq!(lp.as_bytes(), hex(VALKEY_NODE));
}

#[test]
fn xdel_marks_the_entry_and_the_counters_as_valkey_does() {
    let mut s = people();
    assert!(s.delete(id(1, 2)));
    assert!(!s.delete(id(1, 2)));
    let (_, lp) = s.nodes().next().unwrap();
    assert_eq!(lp.as_bytes(), hex(VALKEY_NODE_AFTER_XDEL));
    let meta = s.meta();
    assert_eq!(meta.length, 3);
    assert_eq!((meta.first_id, meta.last_id, meta.max_deleted_id), (id(1, 1), id(3, 0), id(1, 2)));
    assert_eq!(meta.entries_added, 4);
    s.check_invariants();
}

#[test]
fn replays_valkeys_commands_to_the_same_nodes() {
    let limits = NodeLimits { max_bytes: fixture::MAX_BYTES, max_entries: fixture::MAX_ENTRIES };
    let mut s = Stream::new();
    for (step, op) in fixture::OPS.iter().enumerate() {
        match *op {
            Op::Add(ms, seq, pairs) => s.append(id(ms, seq), pairs, limits).unwrap(),
            Op::Del(ms, seq, deleted) => assert_eq!(s.delete(id(ms, seq)), deleted, "step {step}"),
            Op::Trim(strategy, approx, limit, removed) => {
                let spec = TrimSpec { strategy, approx, limit };
                assert_eq!(s.trim(spec), removed, "step {step}");
            }
        }
        s.check_invariants();
    }
    let got: Vec<(u64, u64, Vec<u8>)> =
        s.nodes().map(|(k, lp)| (k.ms, k.seq, lp.as_bytes().to_vec())).collect();
    let want: Vec<(u64, u64, Vec<u8>)> =
        fixture::NODES.iter().map(|&(ms, seq, lp)| (ms, seq, hex(lp))).collect();
    assert_eq!(got, want);
    let m = fixture::META;
    let want_meta = StreamMeta {
        length: m[0],
        last_id: id(m[1], m[2]),
        first_id: id(m[3], m[4]),
        max_deleted_id: id(m[5], m[6]),
        entries_added: m[7],
    };
    assert_eq!(s.meta(), want_meta);
}

#[test]
fn entries_without_the_master_fields_are_written_whole() {
    let mut s = Stream::new();
    s.append(id(5, 0), &["a", "1", "b", "2"], UNLIMITED).unwrap();
    // Same fields in another order, fewer fields, more fields, no fields.
    s.append(id(5, 1), &["b", "2", "a", "1"], UNLIMITED).unwrap();
    s.append(id(5, 2), &["a", "1"], UNLIMITED).unwrap();
    s.append(id(6, 0), &["a", "1", "b", "2", "c", "3"], UNLIMITED).unwrap();
    s.append(id(6, 1), &[] as &[&str], UNLIMITED).unwrap();
    s.append(id(7, 7), &["a", "x", "b", "y"], UNLIMITED).unwrap();
    use LpEntry::{Int, Str};
    let (_, lp) = s.nodes().next().unwrap();
    #[rustfmt::skip]
    let want = vec![
        Int(6), Int(0), Int(2), Str(b"a"), Str(b"b"), Int(0),
        Int(2), Int(0), Int(0), Int(1), Int(2), Int(5),
        Int(0), Int(0), Int(1), Int(2), Str(b"b"), Int(2), Str(b"a"), Int(1), Int(8),
        Int(0), Int(0), Int(2), Int(1), Str(b"a"), Int(1), Int(6),
        Int(0), Int(1), Int(0), Int(3), Str(b"a"), Int(1), Str(b"b"), Int(2), Str(b"c"), Int(3),
        Int(10),
        Int(0), Int(1), Int(1), Int(0), Int(4),
        Int(2), Int(2), Int(7), Str(b"x"), Str(b"y"), Int(5),
    ];
    assert_eq!(elements(lp), want);
    let back: Vec<StreamId> = s.range(StreamId::MIN, StreamId::MAX, true).map(|e| e.id()).collect();
    assert_eq!(back, [id(7, 7), id(6, 1), id(6, 0), id(5, 2), id(5, 1), id(5, 0)]);
    let empty = s.range(id(6, 1), id(6, 1), false).next().unwrap();
    assert!(empty.is_empty() && empty.fields().next().is_none());
    s.check_invariants();
}

// ----- node limits -------------------------------------------------------------------------

#[test]
fn a_node_closes_at_valkeys_thresholds() {
    // By entries, tombstones included.
    let limits = NodeLimits { max_bytes: 0, max_entries: 3 };
    let mut s = Stream::new();
    for seq in 1..=3 {
        s.append(id(1, seq), &["f", "v"], limits).unwrap();
    }
    assert!(s.delete(id(1, 2)));
    assert_eq!(s.node_count(), 1);
    s.append(id(1, 4), &["f", "v"], limits).unwrap();
    assert_eq!(s.node_count(), 2);
    assert_eq!(s.nodes().nth(1).unwrap().0, id(1, 4));

    // By bytes: closed when listpack bytes + raw bytes of the entry reach the limit.
    let mut s = Stream::new();
    s.append(id(1, 1), &["f", "v"], UNLIMITED).unwrap();
    let bytes = s.nodes().next().unwrap().1.total_bytes();
    let at = |max_bytes| NodeLimits { max_bytes, max_entries: 0 };
    let mut t = s.clone();
    t.append(id(1, 2), &["f", "v"], at(bytes + 3)).unwrap();
    assert_eq!(t.node_count(), 1, "bytes + 2 < limit: same node");
    let mut t = s.clone();
    t.append(id(1, 2), &["f", "v"], at(bytes + 2)).unwrap();
    assert_eq!(t.node_count(), 2, "bytes + 2 >= limit: new node");
}

#[test]
fn oversized_entries_are_refused_without_change() {
    let mut s = Stream::new();
    let big = vec![b'x'; NODE_BYTES_MAX / 2 + 1];
    let pairs: [&[u8]; 2] = [&big, &big];
    assert_eq!(s.append(id(1, 1), &pairs, NodeLimits::DEFAULT), Err(EntryTooLarge));
    assert_eq!(s, Stream::new());
}

// ----- reads and deletes -------------------------------------------------------------------

fn numbered(n: u64, limits: NodeLimits) -> Stream {
    let mut s = Stream::new();
    for i in 1..=n {
        s.append(id(i, 0), &["n", &i.to_string()], limits).unwrap();
    }
    s
}

#[test]
fn ranges_are_inclusive_in_both_directions() {
    let s = numbered(20, NodeLimits { max_bytes: 0, max_entries: 3 });
    let ids =
        |start, end, rev| -> Vec<u64> { s.range(start, end, rev).map(|e| e.id().ms).collect() };
    assert_eq!(ids(id(4, 0), id(7, 0), false), [4, 5, 6, 7]);
    assert_eq!(ids(id(4, 0), id(7, 0), true), [7, 6, 5, 4]);
    assert_eq!(ids(id(3, 1), id(6, 9), false), [4, 5, 6]);
    assert_eq!(ids(id(3, 1), id(6, 9), true), [6, 5, 4]);
    assert_eq!(ids(id(0, 0), id(2, 0), true), [2, 1]);
    assert_eq!(ids(id(19, 5), StreamId::MAX, false), [20]);
    assert!(ids(id(7, 0), id(4, 0), false).is_empty());
    assert!(ids(id(7, 0), id(4, 0), true).is_empty());
    assert!(ids(id(0, 0), id(0, 5), true).is_empty());
    assert!(ids(id(21, 0), StreamId::MAX, false).is_empty());
    assert!(s.contains(id(9, 0)) && !s.contains(id(9, 1)) && !s.contains(id(0, 1)));
    let e = s.range(id(9, 0), id(9, 0), false).next().unwrap();
    assert_eq!(pairs_of(&e), [(b"n".to_vec(), b"9".to_vec())]);
}

#[test]
fn deleting_a_nodes_last_live_entry_drops_the_node() {
    let mut s = numbered(9, NodeLimits { max_bytes: 0, max_entries: 3 });
    assert_eq!(s.node_count(), 3);
    assert!(s.delete(id(4, 0)) && s.delete(id(6, 0)));
    assert_eq!(s.node_count(), 3);
    assert!(s.delete(id(5, 0)));
    assert_eq!(s.node_count(), 2);
    assert_eq!(s.max_deleted_id(), id(6, 0));
    // The first id follows deletes of the first entry.
    assert!(s.delete(id(1, 0)));
    assert_eq!(s.first_id(), id(2, 0));
    assert!(s.delete(id(3, 0)));
    assert_eq!(s.first_id(), id(2, 0));
    for i in [2, 7, 8, 9] {
        assert!(s.delete(id(i, 0)));
    }
    assert!(s.is_empty() && s.node_count() == 0);
    assert_eq!(
        (s.first_id(), s.last_id(), s.max_deleted_id()),
        (StreamId::MIN, id(9, 0), id(9, 0))
    );
    assert_eq!(s.alloc_bytes(), 0);
    s.check_invariants();
}

#[test]
fn head_and_tail_ids_include_tombstones() {
    let mut s = numbered(5, UNLIMITED);
    assert!(s.delete(id(1, 0)) && s.delete(id(5, 0)));
    assert_eq!((s.head_id(), s.tail_id()), (Some(id(1, 0)), Some(id(5, 0))));
    assert_eq!(s.first_live_id(), Some(id(2, 0)));
    assert_eq!(Stream::new().head_id(), None);
}

// ----- trims -------------------------------------------------------------------------------

fn trim(s: &mut Stream, strategy: TrimStrategy, approx: bool, limit: u64) -> u64 {
    let removed = s.trim(TrimSpec { strategy, approx, limit });
    s.check_invariants();
    removed
}

#[test]
fn trims_follow_valkeys_rules() {
    let limits = NodeLimits { max_bytes: 0, max_entries: 4 };
    let mut s = numbered(20, limits);
    // Approximate: whole nodes only, as many as keep at least 10.
    assert_eq!(trim(&mut s, TrimStrategy::MaxLen(10), true, 0), 8);
    assert_eq!((s.len(), s.first_id()), (12, id(9, 0)));
    // The limit counts whole nodes: 4 + 4 > 5 stops after the first.
    assert_eq!(trim(&mut s, TrimStrategy::MaxLen(0), true, 5), 4);
    // Exact: marks inside the first node.
    assert_eq!(trim(&mut s, TrimStrategy::MaxLen(6), false, 0), 2);
    assert_eq!((s.len(), s.first_id(), s.node_count()), (6, id(15, 0), 2));
    assert_eq!(trim(&mut s, TrimStrategy::MinId(id(18, 0)), false, 0), 3);
    assert_eq!(s.first_id(), id(18, 0));
    assert_eq!(trim(&mut s, TrimStrategy::MinId(id(18, 0)), false, 0), 0);
    // Trims leave max_deleted_id alone.
    assert_eq!(s.max_deleted_id(), StreamId::MIN);
    assert_eq!(trim(&mut s, TrimStrategy::MaxLen(0), false, 0), 3);
    assert!(s.is_empty() && s.node_count() == 0 && s.first_id() == StreamId::MIN);
}

#[test]
fn an_exact_minid_trim_can_leave_a_node_of_tombstones() {
    // As in Valkey: the node's last entry (a tombstone) is not below the MINID, so the node
    // stays, with no live entry; the next append still goes to it.
    let mut s = numbered(3, UNLIMITED);
    assert!(s.delete(id(3, 0)));
    assert_eq!(trim(&mut s, TrimStrategy::MinId(id(3, 0)), false, 0), 2);
    assert!(s.is_empty() && s.node_count() == 1);
    let (_, lp) = s.nodes().next().unwrap();
    assert_eq!(Master::read(lp).count, 0);
    assert_eq!(Master::read(lp).deleted, 3);
    s.append(id(4, 0), &["n", "4"], UNLIMITED).unwrap();
    assert_eq!((s.node_count(), s.first_id(), s.len()), (1, id(4, 0), 1));
    s.check_invariants();
    // An approximate MINID trim past its tombstones removes the node whole.
    assert_eq!(trim(&mut s, TrimStrategy::MinId(id(5, 0)), true, 0), 1);
    assert_eq!(s.node_count(), 0);
}

// ----- loading -----------------------------------------------------------------------------

fn parts(s: &Stream) -> Vec<(StreamId, Listpack)> {
    s.nodes().map(|(k, lp)| (k, lp.clone())).collect()
}

#[test]
fn from_parts_round_trips_and_checks_the_metadata() {
    let s = numbered(10, NodeLimits { max_bytes: 0, max_entries: 3 });
    let back = Stream::from_parts(parts(&s), s.meta()).unwrap();
    assert_eq!(back, s);
    let bad_len = StreamMeta { length: 9, ..s.meta() };
    assert!(matches!(
        Stream::from_parts(parts(&s), bad_len),
        Err(StreamError::LengthMismatch { .. })
    ));
    let bad_last = StreamMeta { last_id: id(9, 0), ..s.meta() };
    assert_eq!(Stream::from_parts(parts(&s), bad_last), Err(StreamError::LastIdBelowEntries));
    let mut swapped = parts(&s);
    swapped.swap(0, 1);
    assert_eq!(Stream::from_parts(swapped, s.meta()), Err(StreamError::Unordered { node: 1 }));
    // Entries are deltas from the key: a node keyed 5-0 instead of 4-0 holds 5, 6 and 7,
    // and the next node (7, 8, 9) no longer follows it.
    let mut rekeyed = parts(&s);
    rekeyed[1].0 = id(5, 0);
    assert_eq!(Stream::from_parts(rekeyed, s.meta()), Err(StreamError::Unordered { node: 2 }));
}

/// A listpack of these elements (integers as decimal strings, which the listpack stores as
/// integers).
fn lp_of(elements: &[&str]) -> Listpack {
    let mut lp = Listpack::new();
    for e in elements {
        lp.push_back(e.as_bytes());
    }
    lp
}

#[test]
fn malformed_nodes_are_errors() {
    let meta = |length| StreamMeta { length, last_id: id(9, 9), ..StreamMeta::default() };
    let check =
        |els: &[&str], length| Stream::from_parts(vec![(id(1, 0), lp_of(els))], meta(length));
    assert!(check(&["1", "0", "1", "f", "0", "2", "0", "0", "v", "4"], 1).is_ok());
    let bad: &[&[&str]] = &[
        &[],
        &["1"],
        &["1", "0", "1", "f", "0"],                          // no entry
        &["0", "0", "1", "f", "0"],                          // no entry, counts agree
        &["1", "0", "1", "f", "1", "2", "0", "0", "v", "4"], // master not terminated by 0
        &["1", "0", "1", "f", "0", "2", "0", "0", "v", "5"], // wrong lp-count
        &["1", "0", "1", "f", "0", "2", "0", "0", "v"],      // truncated
        &["1", "0", "1", "f", "0", "6", "0", "0", "v", "4"], // unknown flag
        &["1", "0", "1", "f", "0", "2", "0", "0", "v", "4", "x"], // trailing element
        &["1", "0", "1", "f", "0", "0", "0", "0", "-1", "4"], // negative field count
        &["2", "0", "1", "f", "0", "2", "0", "0", "v", "4"], // count above the entries
        &["1", "0", "1", "f", "0", "3", "0", "0", "v", "4"], // count 1 but a tombstone
        &["1", "0", "9", "f", "0", "2", "0", "0", "v", "4"], // master field count too big
        &["1", "0", "1", "f", "0", "x", "0", "0", "v", "4"], // flags not an integer
        &["1", "0", "1", "f", "0", "2", "-1", "0", "v", "4"], // id below the node key
        &["2", "0", "1", "f", "0", "2", "0", "1", "v", "4", "2", "0", "1", "v", "4"], // repeated id
    ];
    for (i, els) in bad.iter().enumerate() {
        assert!(check(els, 1).is_err(), "case {i}: {els:?}");
    }
}

#[test]
fn damaged_node_bytes_never_panic() {
    let s = numbered(6, UNLIMITED);
    let good = s.nodes().next().unwrap().1.as_bytes().to_vec();
    let mut rng = Rng::new(7);
    let mut accepted = 0;
    for _ in 0..3000 {
        let mut b = good.clone();
        for _ in 0..1 + rng.below(3) {
            let i = 6 + rng.below(b.len() - 7);
            b[i] = rng.next_u64() as u8;
        }
        let Ok(lp) = Listpack::from_bytes(&b) else { continue };
        let Ok(t) = Stream::from_parts(
            vec![(id(1, 0), lp)],
            StreamMeta { last_id: StreamId::MAX, ..s.meta() },
        ) else {
            continue;
        };
        // Whatever was accepted must be fully usable.
        accepted += 1;
        let mut t = t;
        let _ = all(&t, false).len() + all(&t, true).len();
        t.delete(id(3, 0));
        t.trim(TrimSpec { strategy: TrimStrategy::MaxLen(2), approx: false, limit: 0 });
        t.check_invariants_but_first_id();
    }
    assert!(accepted > 0);
}

// ----- memory ------------------------------------------------------------------------------

#[test]
fn alloc_bytes_counts_the_deque_and_the_listpacks() {
    use crate::memory::size_class;
    let s = people();
    let lp = s.nodes().next().unwrap().1;
    assert_eq!(s.alloc_bytes(), size_class(24) + size_class(lp.total_bytes()));
    let s = numbered(30, NodeLimits { max_bytes: 0, max_entries: 5 });
    let lps: usize = s.nodes().map(|(_, lp)| size_class(lp.total_bytes())).sum();
    assert_eq!(s.nodes.capacity(), 8);
    assert_eq!(s.alloc_bytes(), size_class(8 * 24) + lps);
}

#[test]
fn essay_byte_figures_hold() {
    use crate::memory::size_class;
    let pairs =
        ["f1", "value001", "f2", "value002", "f3", "value003", "f4", "value004", "f5", "value005"];
    let mut s = Stream::new();
    s.append(id(1000, 0), &pairs, NodeLimits::DEFAULT).unwrap();
    assert_eq!(s.nodes().next().unwrap().1.total_bytes(), 35 + 58);
    for ms in 1001..1010 {
        s.append(id(ms, 0), &pairs, NodeLimits::DEFAULT).unwrap();
    }
    assert_eq!(s.nodes().next().unwrap().1.total_bytes(), 35 + 10 * 58);
    assert_eq!(size_of::<Stream>() + s.alloc_bytes(), 96 + 24 + 640);
    let mut other = pairs;
    other[0] = "g1";
    s.append(id(1010, 0), &other, NodeLimits::DEFAULT).unwrap();
    assert_eq!(s.nodes().next().unwrap().1.total_bytes(), 35 + 10 * 58 + 80);
    // With the default limits a node of such entries closes at 70 entries, 4095 bytes.
    let mut s = Stream::new();
    for ms in 1000..1071 {
        s.append(id(ms, 0), &pairs, NodeLimits::DEFAULT).unwrap();
    }
    let (_, lp) = s.nodes().next().unwrap();
    assert_eq!((s.node_count(), Master::read(lp).count, lp.total_bytes()), (2, 70, 4095));
    assert_eq!(size_class(lp.total_bytes()), 4096);
}

// ----- model test --------------------------------------------------------------------------

impl Stream {
    /// The invariants, except that `first_id` is the first live entry (loaded metadata is
    /// taken as given).
    fn check_invariants_but_first_id(&self) {
        let checked = validate::check_stream(self.nodes(), self.length, self.last_id);
        assert_eq!(checked, Ok(()));
    }
}

struct Model {
    s: Stream,
    entries: BTreeMap<StreamId, Pairs>,
    limits: NodeLimits,
    max_deleted: StreamId,
    added: u64,
    field_sets: Vec<Vec<Vec<u8>>>,
    rng: Rng,
    stats: Stats,
}

/// What the model test went through, so that a change that stops exercising a case fails.
#[derive(Default, Debug)]
struct Stats {
    nodes_max: usize,
    approx_removed: u64,
    exact_marked_inside: u64,
    limit_stops: u64,
    deletes: u64,
    nodes_without_live: u64,
}

const FIELDS: &[&str] = &["a", "name", "12", "-3", "temperature", "x", "", "9223372036854775807"];

impl Model {
    fn new(seed: u64) -> Model {
        let mut rng = Rng::new(seed);
        let max_entries = [0, 3, 4, 5, 7, 10][rng.below(6)];
        let max_bytes = [0, 100, 150, 200, 300][rng.below(5)];
        Model {
            s: Stream::new(),
            entries: BTreeMap::new(),
            limits: NodeLimits { max_bytes, max_entries },
            max_deleted: StreamId::MIN,
            added: 0,
            field_sets: Vec::new(),
            rng,
            stats: Stats::default(),
        }
    }

    fn value(&mut self) -> Vec<u8> {
        match self.rng.below(6) {
            0 => (self.rng.next_u64() as i64 >> self.rng.below(64)).to_string().into_bytes(),
            1 => self.rng.below(200).to_string().into_bytes(),
            2 => vec![b'z'; 60 + self.rng.below(20)],
            _ => (0..self.rng.below(12)).map(|_| b'a' + self.rng.below(26) as u8).collect(),
        }
    }

    fn next_id(&mut self) -> StreamId {
        let last = self.s.last_id();
        match self.rng.below(10) {
            0..=4 => last.next().expect("ids left"),
            5 => StreamId::new(last.ms, last.seq + 1 + self.rng.below(1000) as u64),
            6 => StreamId::new(last.ms + (1 << 40), self.rng.below(3) as u64),
            _ => StreamId::new(last.ms + 1 + self.rng.below(3000) as u64, self.rng.below(5) as u64),
        }
    }

    fn append(&mut self) {
        let id = self.next_id();
        let fields: Vec<Vec<u8>> = if !self.field_sets.is_empty() && self.rng.below(2) == 0 {
            self.field_sets[self.rng.below(self.field_sets.len())].clone()
        } else {
            let n = 1 + self.rng.below(6);
            (0..n).map(|_| FIELDS[self.rng.below(FIELDS.len())].as_bytes().to_vec()).collect()
        };
        if self.field_sets.len() < 4 {
            self.field_sets.push(fields.clone());
        } else {
            let i = self.rng.below(4);
            self.field_sets[i] = fields.clone();
        }
        let pairs: Pairs = fields.into_iter().map(|f| (f, self.value())).collect();
        let flat: Vec<&[u8]> = pairs.iter().flat_map(|(f, v)| [&f[..], &v[..]]).collect();
        self.s.append(id, &flat, self.limits).unwrap();
        self.entries.insert(id, pairs);
        self.added += 1;
    }

    fn delete(&mut self) {
        let id = if !self.entries.is_empty() && self.rng.below(5) != 0 {
            *self.entries.keys().nth(self.rng.below(self.entries.len())).unwrap()
        } else {
            self.random_id()
        };
        let had = self.entries.remove(&id).is_some();
        assert_eq!(self.s.delete(id), had, "delete {id}");
        if had {
            self.max_deleted = self.max_deleted.max(id);
            self.stats.deletes += 1;
        }
    }

    /// An id near the stream's: an entry's id, a neighbour of one, or an end.
    fn random_id(&mut self) -> StreamId {
        let ids: Vec<StreamId> = self.entries.keys().copied().collect();
        let base = match ids.len() {
            0 => self.s.last_id(),
            n => ids[self.rng.below(n)],
        };
        match self.rng.below(6) {
            0 => base.prev().unwrap_or(base),
            1 => base.next().unwrap_or(base),
            2 => StreamId::MIN,
            3 => StreamId::MAX,
            _ => base,
        }
    }

    /// What Valkey's trim removes, computed from the node boundaries and the model: the
    /// ids, and whether the limit stopped it.
    fn expected_trim(&self, spec: &TrimSpec) -> (Vec<StreamId>, bool) {
        let mut removed = Vec::new();
        let mut length = self.entries.len() as u64;
        for (key, lp) in self.s.nodes() {
            let entries = node_entries(key, lp);
            let live: Vec<StreamId> = entries.iter().filter(|e| e.1).map(|e| e.0).collect();
            let count = live.len() as u64;
            if let TrimStrategy::MaxLen(n) = spec.strategy {
                if length <= n {
                    break;
                }
            }
            if spec.limit != 0 && removed.len() as u64 + count > spec.limit {
                return (removed, true);
            }
            let whole = match spec.strategy {
                TrimStrategy::MaxLen(n) => length - count >= n,
                TrimStrategy::MinId(min) => entries.last().unwrap().0 < min,
            };
            if whole {
                removed.extend(live);
                length -= count;
                continue;
            }
            if !spec.approx {
                for (id, is_live) in entries {
                    let stop = match spec.strategy {
                        TrimStrategy::MaxLen(n) => length <= n,
                        TrimStrategy::MinId(min) => id >= min,
                    };
                    if stop {
                        break;
                    }
                    if is_live {
                        removed.push(id);
                        length -= 1;
                    }
                }
            }
            break;
        }
        (removed, false)
    }

    fn trim(&mut self) {
        let strategy = if self.rng.below(2) == 0 {
            TrimStrategy::MaxLen(self.rng.below(self.entries.len() + 3) as u64)
        } else {
            TrimStrategy::MinId(self.random_id())
        };
        let approx = self.rng.below(2) == 0;
        let limit = [0, 0, 1, 5, 12, 40][self.rng.below(6)];
        let spec = TrimSpec { strategy, approx, limit };
        let (expected, limit_stop) = self.expected_trim(&spec);
        let nodes_before = self.s.node_count();
        if !approx && limit == 0 {
            // The plain meaning of an exact trim, independent of nodes.
            let plain: Vec<StreamId> = match strategy {
                TrimStrategy::MaxLen(n) => {
                    let excess = (self.entries.len() as u64).saturating_sub(n) as usize;
                    self.entries.keys().take(excess).copied().collect()
                }
                TrimStrategy::MinId(min) => self.entries.range(..min).map(|(k, _)| *k).collect(),
            };
            assert_eq!(expected, plain, "{spec:?}");
        }
        assert_eq!(self.s.trim(spec), expected.len() as u64, "{spec:?}");
        self.stats.limit_stops += u64::from(limit_stop);
        if approx {
            self.stats.approx_removed += expected.len() as u64;
        } else if self.s.node_count() == nodes_before && !expected.is_empty() {
            self.stats.exact_marked_inside += 1;
        }
        for id in expected {
            self.entries.remove(&id);
        }
    }

    fn check(&mut self) {
        let s = &self.s;
        s.check_invariants();
        self.stats.nodes_max = self.stats.nodes_max.max(s.node_count());
        let empty_nodes = s.nodes().filter(|(_, lp)| Master::read(lp).count == 0).count();
        self.stats.nodes_without_live += empty_nodes as u64;
        assert_eq!(s.len(), self.entries.len() as u64);
        assert_eq!(s.first_id(), self.entries.keys().next().copied().unwrap_or(StreamId::MIN));
        assert_eq!(s.max_deleted_id(), self.max_deleted);
        assert_eq!(s.entries_added(), self.added);
        let want: Vec<(StreamId, Pairs)> =
            self.entries.iter().map(|(k, v)| (*k, v.clone())).collect();
        assert_eq!(all(s, false), want);
        let mut back = all(s, true);
        back.reverse();
        assert_eq!(back, want);
        for _ in 0..2 {
            let (a, b) = (self.random_id(), self.random_id());
            let rev = self.rng.below(2) == 0;
            let got: Vec<StreamId> = self.s.range(a, b, rev).map(|e| e.id()).collect();
            let mut want: Vec<StreamId> = if a <= b {
                self.entries.range(a..=b).map(|(k, _)| *k).collect()
            } else {
                Vec::new()
            };
            if rev {
                want.reverse();
            }
            assert_eq!(got, want, "range {a} {b} rev {rev}");
            let probe = self.random_id();
            assert_eq!(self.s.contains(probe), self.entries.contains_key(&probe));
        }
    }
}

#[test]
fn model_test_against_a_btreemap() {
    let mut total = Stats::default();
    for seed in 0..16 {
        let mut m = Model::new(seed);
        for step in 0..2000 {
            match m.rng.below(20) {
                0..=10 => m.append(),
                11..=15 => m.delete(),
                _ => m.trim(),
            }
            m.check();
            if step % 250 == 0 {
                let back = Stream::from_parts(parts(&m.s), m.s.meta()).unwrap();
                assert_eq!(back, m.s);
            }
        }
        total.nodes_max = total.nodes_max.max(m.stats.nodes_max);
        total.approx_removed += m.stats.approx_removed;
        total.exact_marked_inside += m.stats.exact_marked_inside;
        total.limit_stops += m.stats.limit_stops;
        total.deletes += m.stats.deletes;
        total.nodes_without_live += m.stats.nodes_without_live;
    }
    eprintln!("{total:?}");
    assert!(total.nodes_max >= 10, "{total:?}");
    assert!(total.approx_removed >= 100 && total.exact_marked_inside >= 20, "{total:?}");
    assert!(total.limit_stops >= 20 && total.deletes >= 1000, "{total:?}");
    assert!(total.nodes_without_live > 0, "{total:?}");
}
