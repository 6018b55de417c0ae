//! Seeded model tests: random edits applied to a [`ListObj`] and to a `VecDeque<Vec<u8>>`,
//! compared after every step, with node limits small enough that nodes split, merge and the
//! encoding converts both ways all the time.

use std::collections::VecDeque;

use super::*;
use crate::util::rng::Rng;

/// Elements: a small pool (so LREM and LINSERT find matches), integers in every listpack
/// width and non-canonical ones, binary bytes, and now and then a long string.
fn element(rng: &mut Rng) -> Vec<u8> {
    match rng.below(10) {
        0..=3 => format!("v{}", rng.below(6)).into_bytes(),
        4 => rng.below(4).to_string().into_bytes(),
        5 => {
            ["-1", "127", "4095", "-4096", "32767", "8388607", "2147483648", "-9223372036854775808"]
                [rng.below(8)]
            .as_bytes()
            .to_vec()
        }
        6 => ["007", "-0", "+1", "1.5", " 1", ""][rng.below(6)].as_bytes().to_vec(),
        7 => vec![0, b'\r', b'\n', 0xFF, rng.below(3) as u8],
        8 => vec![b'x'; 1 + rng.below(30)],
        _ => vec![b'L'; 40 + rng.below(200)],
    }
}

fn to_vec(e: LpEntry<'_>) -> Vec<u8> {
    e.to_vec()
}

fn contents(l: &ListObj) -> Vec<Vec<u8>> {
    l.iter().map(to_vec).collect()
}

fn end(rng: &mut Rng) -> End {
    if rng.below(2) == 0 {
        End::Head
    } else {
        End::Tail
    }
}

/// One random edit or read on both; `limit` is the node limit of this step.
fn step(rng: &mut Rng, l: &mut ListObj, m: &mut VecDeque<Vec<u8>>, limit: NodeLimit) {
    let len = m.len();
    match rng.below(12) {
        0..=2 => {
            let n = 1 + rng.below(4);
            let vs: Vec<Vec<u8>> = (0..n).map(|_| element(rng)).collect();
            let e = end(rng);
            l.grow_check(vs.iter().map(Vec::len).sum(), n, limit);
            for v in &vs {
                l.push(e, v, limit);
                match e {
                    End::Head => m.push_front(v.clone()),
                    End::Tail => m.push_back(v.clone()),
                }
            }
        }
        3 | 4 => {
            let e = end(rng);
            let got = l.pop(e, limit);
            let want = match e {
                End::Head => m.pop_front(),
                End::Tail => m.pop_back(),
            };
            assert_eq!(got, want, "pop {e:?}");
            l.shrink_check(limit);
        }
        5 => {
            let i = rng.below(2 * len + 4) as i64 - (len as i64 + 2);
            let want = match i {
                i if i >= 0 => m.get(i as usize),
                i if i >= -(len as i64) => m.get((len as i64 + i) as usize),
                _ => None,
            };
            assert_eq!(l.get(i).map(to_vec).as_ref(), want, "get {i}");
        }
        6 => {
            let i = rng.below(len + 2) as i64 - 1;
            let v = element(rng);
            l.grow_check(v.len(), 1, limit);
            let ok = l.set(i, &v, limit);
            let target = if i < 0 { len.checked_sub(1) } else { Some(i as usize) };
            match target.filter(|&t| t < len) {
                Some(t) => {
                    assert!(ok, "set {i}");
                    m[t] = v;
                }
                None => assert!(!ok, "set {i} out of range"),
            }
            l.shrink_check(limit);
        }
        7 => {
            let pivot = element(rng);
            let v = element(rng);
            let place = if rng.below(2) == 0 { Place::Before } else { Place::After };
            l.grow_check(v.len(), 1, limit);
            let ok = l.insert(&pivot, &v, place, limit);
            match m.iter().position(|x| *x == pivot) {
                Some(at) => {
                    assert!(ok, "insert at pivot {pivot:?}");
                    m.insert(if place == Place::Before { at } else { at + 1 }, v);
                }
                None => assert!(!ok, "no pivot {pivot:?}"),
            }
        }
        8 => {
            let v = element(rng);
            let count = rng.below(4);
            let from = end(rng);
            let removed = l.remove(&v, count, from, limit);
            let want = if count == 0 { usize::MAX } else { count };
            let mut n = 0;
            match from {
                End::Head => m.retain(|x| {
                    let drop = *x == v && n < want;
                    n += usize::from(drop);
                    !drop
                }),
                End::Tail => {
                    let mut kept: Vec<Vec<u8>> = m.drain(..).rev().collect();
                    kept.retain(|x| {
                        let drop = *x == v && n < want;
                        n += usize::from(drop);
                        !drop
                    });
                    m.extend(kept.into_iter().rev());
                }
            }
            assert_eq!(removed, n, "remove {v:?} x{count} from {from:?}");
            l.shrink_check(limit);
        }
        9 => {
            let start = rng.below(len + 2);
            let count = rng.below(len / 2 + 3);
            l.delete_range(start, count, limit);
            if start < len {
                let stop = (start + count).min(len);
                m.drain(start..stop);
            }
            l.shrink_check(limit);
        }
        _ => {
            let start = rng.below(len + 1);
            let dir = if rng.below(2) == 0 { Dir::Forward } else { Dir::Backward };
            let k = rng.below(len + 2);
            let got: Vec<Vec<u8>> = l.walk(start, dir).take(k).map(to_vec).collect();
            let want: Vec<Vec<u8>> = match dir {
                _ if start >= len => vec![],
                Dir::Forward => m.iter().skip(start).take(k).cloned().collect(),
                Dir::Backward => m.iter().take(start + 1).rev().take(k).cloned().collect(),
            };
            assert_eq!(got, want, "walk from {start} {dir:?} x{k}");
        }
    }
}

fn run(seed: u64, steps: usize, limits: &[NodeLimit], fixed: bool, shrinks: bool) {
    let mut rng = Rng::new(seed);
    let mut l = ListObj::new();
    let mut m: VecDeque<Vec<u8>> = VecDeque::new();
    let mut saw_quicklist = false;
    let mut saw_listpack_again = false;
    // Whether the current object (since the last reset) was a quicklist.
    let mut this_was_quick = false;
    for n in 0..steps {
        let limit = limits[(n / 97) % limits.len()];
        step(&mut rng, &mut l, &mut m, limit);
        l.check_invariants(fixed.then_some(limit));
        assert_eq!(l.len(), m.len(), "seed {seed} step {n}: length");
        if n % 16 == 0 || m.len() < 8 {
            let want: Vec<Vec<u8>> = m.iter().cloned().collect();
            assert_eq!(contents(&l), want, "seed {seed} step {n}: contents");
        }
        if l.is_quicklist() {
            saw_quicklist = true;
            this_was_quick = true;
        } else if this_was_quick {
            saw_listpack_again = true;
        }
        if m.is_empty() {
            // As the keyspace would: an emptied list is deleted, a new one starts packed.
            l = ListObj::new();
            this_was_quick = false;
        }
    }
    assert!(saw_quicklist, "seed {seed}: converts to a quicklist");
    assert_eq!(saw_listpack_again, shrinks, "seed {seed}: converts back to a listpack");
}

#[test]
fn model_with_tiny_byte_limits() {
    for seed in 0..12 {
        run(seed, 3000, &[NodeLimit::bytes(96)], true, true);
    }
}

#[test]
fn model_with_count_limits() {
    for seed in 100..108 {
        run(seed, 3000, &[NodeLimit::from_fill(4)], true, true);
    }
    for seed in 200..204 {
        // One element per node: half of 1 is 0, so it never converts back.
        run(seed, 2000, &[NodeLimit::from_fill(1)], true, false);
    }
}

#[test]
fn model_with_changing_limits() {
    // As CONFIG SET between commands: nodes made under one limit live on under another.
    let limits = [
        NodeLimit::bytes(64),
        NodeLimit::from_fill(3),
        NodeLimit::bytes(300),
        NodeLimit::from_fill(-1),
    ];
    for seed in 300..306 {
        run(seed, 4000, &limits, false, true);
    }
}

#[test]
fn fill_maps_to_valkey_limits() {
    let l = NodeLimit::from_fill(-2);
    assert!(!l.exceeds(8192, 100_000) && l.exceeds(8193, 1));
    assert!(NodeLimit::from_fill(-1).exceeds(4097, 1));
    assert!(!NodeLimit::from_fill(-5).exceeds(65536, 1));
    assert_eq!(NodeLimit::from_fill(-100), NodeLimit::from_fill(-5));
    let c = NodeLimit::from_fill(4);
    assert!(!c.exceeds(100, 4) && c.exceeds(100, 5) && c.exceeds(8193, 1));
    assert_eq!(NodeLimit::from_fill(0), NodeLimit::from_fill(1));
    assert_eq!(Listpack::new().total_bytes(), LP_EMPTY_BYTES);
}

#[test]
fn conversions_follow_valkey_thresholds() {
    let limit = NodeLimit::from_fill(4);
    let mut l = ListObj::new();
    l.grow_check(3, 3, limit);
    for v in [b"a", b"b", b"c"] {
        l.push(End::Tail, v, limit);
    }
    assert_eq!(l.encoding(), "listpack");
    // 3 + 2 > 4: converts before pushing; the first node is the old listpack.
    l.grow_check(2, 2, limit);
    assert_eq!(l.encoding(), "quicklist");
    for v in [b"d", b"e"] {
        l.push(End::Tail, v, limit);
    }
    l.check_invariants(Some(limit));
    assert_eq!(l.free_effort(), 2);
    // Three left: more than half of 4.
    l.pop(End::Tail, limit);
    l.pop(End::Tail, limit);
    l.shrink_check(limit);
    assert_eq!(l.encoding(), "quicklist");
    l.pop(End::Tail, limit);
    l.shrink_check(limit);
    assert_eq!(l.encoding(), "listpack");
    assert_eq!(contents(&l), vec![b"a".to_vec(), b"b".to_vec()]);

    // Bytes: -1 is 4096 bytes; raw bytes of the new elements count, not their encoding.
    let limit = NodeLimit::from_fill(-1);
    let mut l = ListObj::new();
    l.grow_check(4096 - LP_EMPTY_BYTES, 1, limit);
    assert_eq!(l.encoding(), "listpack");
    l.grow_check(4096 - LP_EMPTY_BYTES + 1, 1, limit);
    assert_eq!(l.encoding(), "quicklist");
    assert_eq!(l.len(), 0);
}

#[test]
fn alloc_bytes_track_the_nodes() {
    let limit = NodeLimit::bytes(200);
    let mut l = ListObj::new();
    l.grow_check(10_000, 1, limit);
    for i in 0..500 {
        l.push(End::Tail, format!("element-{i}").as_bytes(), limit);
    }
    assert!(l.is_quicklist());
    l.check_invariants(Some(limit));
    let payload: usize = l.iter().map(|e| e.to_vec().len()).sum();
    assert!(l.alloc_bytes() > payload, "{} bytes for {payload} of payload", l.alloc_bytes());
    // Nodes stay reasonably full: fewer than twice the minimum node count.
    let Repr::Quick(q) = &l.repr else { unreachable!() };
    let min_nodes = (q.body_bytes() + 199) / (200 - LP_EMPTY_BYTES);
    assert!(q.node_count() < 2 * min_nodes + 1, "{} nodes", q.node_count());
}

#[test]
fn lset_of_a_big_value_splits_the_node() {
    let limit = NodeLimit::bytes(100);
    let mut l = ListObj::new();
    l.grow_check(1000, 1, limit);
    for i in 0..40 {
        l.push(End::Tail, i.to_string().as_bytes(), limit);
    }
    let big = vec![b'B'; 300];
    assert!(l.set(20, &big, limit));
    l.check_invariants(Some(limit));
    assert_eq!(l.get(20).map(to_vec), Some(big.clone()));
    assert_eq!(l.get(19).map(to_vec), Some(b"19".to_vec()));
    assert_eq!(l.get(21).map(to_vec), Some(b"21".to_vec()));
    assert!(l.set(20, b"x", limit));
    l.check_invariants(Some(limit));
    assert_eq!(l.len(), 40);
}
