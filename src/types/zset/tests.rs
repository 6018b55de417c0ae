//! Seeded random model tests of both encodings (and the conversion between them) against a
//! `BTreeMap` reference, the rank tree against a `Vec`, and the number grammar.

use std::collections::BTreeMap;

use super::range::{parse_score, parse_score_bound, score_from_text, score_text, strtod};
use super::tree::OsTree;
use super::*;
use crate::util::rng::Rng;

/// The reference: member -> score, and the sorted view derived from it.
#[derive(Default)]
struct Model {
    scores: BTreeMap<Vec<u8>, f64>,
}

impl Model {
    fn sorted(&self) -> Vec<(Vec<u8>, f64)> {
        let mut v: Vec<(Vec<u8>, f64)> = self.scores.iter().map(|(m, s)| (m.clone(), *s)).collect();
        v.sort_by(|a, b| range::cmp_pair(a.1, &a.0, b.1, &b.0));
        v
    }
}

fn contents(z: &ZSetObj) -> Vec<(Vec<u8>, f64)> {
    let mut v = Vec::new();
    z.for_each(|m, s| v.push((m.to_vec(), s)));
    v
}

fn member(rng: &mut Rng, universe: u64) -> Vec<u8> {
    let i = rng.below(universe as usize);
    match i % 4 {
        0 => i.to_string().into_bytes(), // integer-looking: listpack integers
        1 => format!("m{i}\0\r\n").into_bytes(), // binary
        2 => format!("member-{i:05}").into_bytes(),
        _ => vec![b'x'; i % 70], // long ones cross the value limit
    }
}

fn score(rng: &mut Rng) -> f64 {
    match rng.below(6) {
        0 => f64::INFINITY,
        1 => f64::NEG_INFINITY,
        2 => (rng.below(5) as f64) - 2.0, // many ties
        3 => rng.below(1000) as f64 / 7.0,
        4 => -0.0,
        _ => (rng.next_u64() as i64 as f64) * 1e-3,
    }
}

fn check_against(z: &ZSetObj, model: &Model, rng: &mut Rng) {
    z.check_invariants();
    let sorted = model.sorted();
    assert_eq!(z.len(), sorted.len());
    let got = contents(z);
    assert_eq!(got.len(), sorted.len());
    for (g, w) in got.iter().zip(&sorted) {
        assert_eq!(g.0, w.0);
        assert!(g.1 == w.1, "score of {:?}: {} vs {}", w.0, g.1, w.1);
    }
    // Ranks and scores of a few members, and of an absent one.
    for _ in 0..5 {
        if sorted.is_empty() {
            break;
        }
        let r = rng.below(sorted.len());
        let (m, s) = &sorted[r];
        assert_eq!(z.rank(m), Some((r, *s)));
        assert_eq!(z.score(m), Some(*s));
        let mut rev = Vec::new();
        z.visit(r, sorted.len(), true, |m, _| {
            rev.push(m.to_vec());
            rev.len() < 3
        });
        let want: Vec<Vec<u8>> = sorted[r..].iter().rev().take(3).map(|p| p.0.clone()).collect();
        assert_eq!(rev, want);
    }
    assert_eq!(z.rank(b"absent member"), None);
    // Score ranges, inclusive and exclusive.
    for _ in 0..3 {
        let (a, b) = (score(rng), score(rng));
        let r = ScoreRange {
            min: a.min(b),
            max: a.max(b),
            min_ex: rng.below(2) == 0,
            max_ex: rng.below(2) == 0,
        };
        let want: Vec<usize> = (0..sorted.len())
            .filter(|&i| r.gte_min(sorted[i].1) && r.lte_max(sorted[i].1))
            .collect();
        let (lo, hi) = z.score_bounds(&r);
        let empty = r.min > r.max || (r.min == r.max && (r.min_ex || r.max_ex));
        if empty || want.is_empty() {
            assert_eq!(hi - lo, 0, "range {r:?}");
        } else {
            assert_eq!((lo, hi), (want[0], want[want.len() - 1] + 1), "range {r:?}");
        }
    }
}

fn run_model(seed: u64, limits: Limits, ops: usize, universe: u64) -> ZSetObj {
    let mut rng = Rng::new(seed);
    let mut z = ZSetObj::with_hint(limits, 1, 1);
    let mut model = Model::default();
    for step in 0..ops {
        match rng.below(10) {
            0..=5 => {
                let m = member(&mut rng, universe);
                let s = score(&mut rng);
                let old = z.set(&m, s, limits);
                let prev = model.scores.get(&m).copied();
                assert_eq!(old.is_some(), prev.is_some());
                // -0 and 0 compare equal: an equal score leaves the stored one.
                if prev.is_none_or(|p| p != s) {
                    model.scores.insert(m, s);
                }
            }
            6 | 7 => {
                let m = member(&mut rng, universe);
                assert_eq!(z.remove(&m).is_some(), model.scores.remove(&m).is_some());
            }
            8 => {
                let n = z.len();
                if n > 0 {
                    let lo = rng.below(n);
                    let hi = (lo + 1 + rng.below(4)).min(n);
                    let sorted = model.sorted();
                    for (m, _) in &sorted[lo..hi] {
                        model.scores.remove(m);
                    }
                    z.remove_ranks(lo, hi);
                }
            }
            _ => {
                // Move a present member by an increment (in-place or re-sorted).
                if let Some((m, s)) = model.scores.iter().next().map(|(m, s)| (m.clone(), *s)) {
                    let new = s + (rng.below(3) as f64 - 1.0) * 0.5;
                    if !new.is_nan() {
                        z.set(&m, new, limits);
                        if new != s {
                            model.scores.insert(m, new);
                        }
                    }
                }
            }
        }
        if step % 16 == 0 || step + 1 == ops {
            check_against(&z, &model, &mut rng);
        }
    }
    z
}

#[test]
fn listpack_encoding_matches_the_model() {
    let big = Limits { max_entries: usize::MAX, max_value_bytes: usize::MAX };
    for seed in 1..=4 {
        let z = run_model(seed, big, 1500, 60);
        assert!(z.is_listpack());
    }
}

#[test]
fn skiplist_encoding_matches_the_model() {
    let none = Limits { max_entries: 0, max_value_bytes: 0 };
    for seed in 10..=12 {
        let z = run_model(seed, none, 6000, 3000);
        assert!(!z.is_listpack());
    }
}

#[test]
fn conversion_happens_once_and_keeps_contents() {
    let small = Limits { max_entries: 16, max_value_bytes: 64 };
    let mut converted = 0;
    for seed in 20..=30 {
        let z = run_model(seed, small, 400, 40);
        converted += usize::from(!z.is_listpack());
    }
    assert!(converted > 0, "some runs must cross a limit");
    // Entries: the 17th member converts; removing back below never converts back.
    let mut z = ZSetObj::with_hint(small, 1, 1);
    for i in 0..16 {
        z.set(format!("m{i}").as_bytes(), i as f64, small);
    }
    assert!(z.is_listpack());
    z.set(b"m16", 16.0, small);
    assert!(!z.is_listpack());
    z.remove(b"m16");
    z.remove(b"m15");
    assert!(!z.is_listpack());
    // Value length: one long member converts.
    let mut z = ZSetObj::with_hint(small, 1, 1);
    z.set(b"a", 1.0, small);
    z.set(&[b'v'; 65], 2.0, small);
    assert!(!z.is_listpack());
    assert_eq!(contents(&z), vec![(b"a".to_vec(), 1.0), (vec![b'v'; 65], 2.0)]);
}

#[test]
fn lex_bounds_agree_between_encodings() {
    let big = Limits { max_entries: usize::MAX, max_value_bytes: usize::MAX };
    let none = Limits { max_entries: 0, max_value_bytes: 0 };
    let mut lp = ZSetObj::with_hint(big, 1, 1);
    let mut sk = ZSetObj::with_hint(none, 1, 1);
    let words: Vec<&[u8]> = vec![b"", b"a", b"aa", b"ab", b"b", b"ba", b"c", b"\0", b"\xff"];
    for w in &words {
        lp.set(w, 0.0, big);
        sk.set(w, 0.0, none);
    }
    let bounds: Vec<LexBound<'_>> = [LexBound::NegInf, LexBound::PosInf]
        .into_iter()
        .chain(words.iter().flat_map(|w| [LexBound::Incl(w), LexBound::Excl(w)]))
        .collect();
    let mut sorted: Vec<&[u8]> = words.clone();
    sorted.sort();
    for &min in &bounds {
        for &max in &bounds {
            let r = LexRange { min, max };
            let want = sorted.iter().filter(|m| r.gte_min(m) && r.lte_max(m)).count();
            let (a, b) = lp.lex_bounds(&r);
            let (c, d) = sk.lex_bounds(&r);
            assert_eq!(b - a, want, "listpack {r:?}");
            assert_eq!(d - c, want, "skiplist {r:?}");
            if want > 0 {
                assert_eq!((a, b), (c, d), "encodings differ on {r:?}");
            }
        }
    }
}

#[test]
fn tree_matches_a_vec_with_invariants() {
    let mut rng = Rng::new(99);
    let mut t: OsTree<u32> = OsTree::new();
    let mut v: Vec<u32> = Vec::new();
    for step in 0..20_000u32 {
        let grow = v.len() < 3000 && rng.below(10) < 6;
        if grow || v.is_empty() {
            let at = rng.below(v.len() + 1);
            t.insert(at, step);
            v.insert(at, step);
        } else {
            let at = rng.below(v.len());
            assert_eq!(t.remove(at), v.remove(at));
        }
        if step % 500 == 0 {
            t.check_invariants(|a, b| a == b);
            for _ in 0..20 {
                let r = rng.below(v.len());
                assert_eq!(t.get(r), v[r]);
            }
        }
    }
    t.check_invariants(|a, b| a == b);
    let mut all = Vec::new();
    t.visit(0, t.len(), false, |x| {
        all.push(x);
        true
    });
    assert_eq!(all, v);
    while !v.is_empty() {
        assert_eq!(t.remove(0), v.remove(0));
    }
    t.check_invariants(|a, b| a == b);
    assert_eq!(t.node_counts(), tree::NodeCounts::default());
}

#[test]
fn tree_partition_point_on_sorted_values() {
    let mut t: OsTree<u32> = OsTree::new();
    for i in 0..5000 {
        t.push(i * 2);
    }
    for probe in [0, 1, 2, 999, 1000, 5001, 9998, 9999, 20000] {
        let want = (0..5000).filter(|i| i * 2 < probe).count();
        assert_eq!(t.partition_point(|x| x < probe), want, "probe {probe}");
    }
}

#[test]
fn scores_parse_like_valkey_strtod() {
    assert_eq!(parse_score(b"1.5"), Some(1.5));
    assert_eq!(parse_score(b"inf"), Some(f64::INFINITY));
    assert_eq!(parse_score(b"+inf"), Some(f64::INFINITY));
    assert_eq!(parse_score(b"-Infinity"), Some(f64::NEG_INFINITY));
    assert_eq!(parse_score(b"0x10"), None);
    assert_eq!(parse_score(b"0x1p3"), None);
    assert_eq!(parse_score(b"+4"), Some(4.0));
    assert_eq!(parse_score(b"007"), Some(7.0));
    assert_eq!(parse_score(b"3e-324"), Some(5e-324));
    assert_eq!(parse_score(b"1e-324"), None);
    assert_eq!(parse_score(b"1e3"), Some(1000.0));
    assert_eq!(parse_score(b".5"), Some(0.5));
    assert_eq!(parse_score(b"5."), Some(5.0));
    assert_eq!(parse_score(b"nan"), None);
    assert_eq!(parse_score(b""), None);
    assert_eq!(parse_score(b" 1"), None);
    assert_eq!(parse_score(b"1 "), None);
    assert_eq!(parse_score(b"1e400"), None);
    assert_eq!(parse_score(b"1e-400"), None);
    assert_eq!(parse_score(b"1e"), None);
    assert_eq!(parse_score(b"abc"), None);
    assert_eq!(strtod(b"12abc").map(|p| p.end), Some(2));
    // Range bounds: exclusive marker, empty (0), overflow to infinity, NUL ends the text.
    assert_eq!(parse_score_bound(b"(1.5"), Some((1.5, true)));
    assert_eq!(parse_score_bound(b""), Some((0.0, false)));
    assert_eq!(parse_score_bound(b"("), Some((0.0, true)));
    assert_eq!(parse_score_bound(b"1e400"), Some((f64::INFINITY, false)));
    assert_eq!(parse_score_bound(b" 2"), None);
    assert_eq!(parse_score_bound(b"0x2"), None);
    assert_eq!(parse_score_bound(b"1e-400"), Some((0.0, false)));
    assert_eq!(parse_score_bound(b"3\0junk"), Some((3.0, false)));
    assert_eq!(parse_score_bound(b"nan"), None);
    assert_eq!(parse_score_bound(b"x"), None);
}

#[test]
fn listpack_score_text_round_trips() {
    let mut buf = String::new();
    for s in [
        0.1,
        1.5,
        1e20,
        3.0000000000000004,
        -2.0,
        1e300,
        5e-324,
        f64::INFINITY,
        f64::NEG_INFINITY,
        123456789.125,
    ] {
        score_text(s, &mut buf);
        assert_eq!(score_from_text(buf.as_bytes()), s, "{buf}");
    }
    score_text(-0.0, &mut buf);
    assert_eq!(buf, "0");
    score_text(1e20, &mut buf);
    assert_eq!(buf, "1e20");
}

#[test]
fn clone_is_deep_and_memory_is_counted() {
    let none = Limits { max_entries: 0, max_value_bytes: 0 };
    let mut z = ZSetObj::with_hint(none, 1, 1);
    for i in 0..1000 {
        z.set(format!("member:{i}").as_bytes(), f64::from(i), none);
    }
    let c = z.clone();
    z.remove(b"member:5");
    assert_eq!(c.score(b"member:5"), Some(5.0));
    c.check_invariants();
    assert_eq!(contents(&c).len(), 1000);
    // At least the entries and the leaves; well under Valkey's ~100 bytes per member.
    let bytes = c.alloc_bytes();
    assert!(bytes > 1000 * 24 && bytes < 1000 * 80, "{bytes}");
}
