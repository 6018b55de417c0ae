//! The set type against a `BTreeSet<Vec<u8>>` model: seeded random operations under several
//! encoding limits, checking members, encodings and invariants after every step.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use super::*;
use crate::util::rng::Rng;

/// Encodings in the order a set may move through them.
fn rank(s: &SetObj) -> u8 {
    match s.encoding_name() {
        "intset" => 0,
        "listpack" => 1,
        _ => 2,
    }
}

fn members(s: &SetObj) -> BTreeSet<Vec<u8>> {
    s.iter().map(|e| e.to_vec()).collect()
}

/// The encoding a set may have given its members and the limits it was built under.
fn check_encoding(s: &SetObj, lim: &SetLimits) {
    match s.encoding_name() {
        "intset" => {
            assert!(s.len() <= lim.intset_entries, "intset over its limit");
            assert!(s.iter().all(|e| matches!(e, Elem::Int(_))));
        }
        "listpack" => {
            assert!(s.len() <= lim.listpack_entries, "listpack over its limit");
            assert!(s.iter().all(|e| e.to_vec().len() <= lim.listpack_value_bytes));
        }
        "hashtable" => {}
        other => panic!("unknown encoding {other}"),
    }
}

/// A member drawn from a pool mixing small and wide integers, non-canonical integer
/// strings, short and long strings and binary bytes, so every conversion happens.
fn random_member(rng: &mut Rng) -> Vec<u8> {
    match rng.below(10) {
        0..=3 => (rng.below(40) as i64 - 20).to_string().into_bytes(),
        4 => [i64::MIN, i64::MAX, 70_000, -70_000, 1 << 40][rng.below(5)].to_string().into_bytes(),
        5 => [&b"007"[..], b"-0", b"+1", b" 1", b"1.0", b""][rng.below(6)].to_vec(),
        6 | 7 => format!("m{}", rng.below(30)).into_bytes(),
        8 => vec![b'x'; 60 + rng.below(10)],
        _ => vec![0, b'\r', b'\n', rng.below(4) as u8],
    }
}

fn run_model(seed: u64, lim: SetLimits, steps: usize) {
    let mut rng = Rng::new(seed);
    let mut set: Option<SetObj> = None;
    let mut model: BTreeSet<Vec<u8>> = BTreeSet::new();
    for step in 0..steps {
        let m = random_member(&mut rng);
        let before = set.as_ref().map(rank);
        let mut may_shrink_encoding = false;
        match rng.below(12) {
            0..=4 => {
                let s = set.get_or_insert_with(|| SetObj::for_first_member(&m, 1, &lim));
                assert_eq!(s.add(&m, &lim), model.insert(m.clone()), "step {step}: add");
            }
            5 | 6 => {
                if let Some(s) = set.as_mut() {
                    assert_eq!(s.remove(&m), model.remove(&m), "step {step}: remove");
                }
            }
            7 => {
                if let Some(s) = set.as_ref() {
                    assert_eq!(s.contains(&m), model.contains(&m), "step {step}: contains");
                    if let Some(v) = parse_canonical_int(&m) {
                        assert_eq!(s.contains_elem(Elem::Int(v)), model.contains(&m));
                    }
                }
            }
            8 => {
                if let Some(s) = set.as_mut() {
                    let p = s.pop_random(&mut rng);
                    assert!(
                        model.remove(&p.as_elem().to_vec()),
                        "step {step}: popped a non-member"
                    );
                }
            }
            9 => {
                if let Some(s) = set.as_mut().filter(|s| s.len() > 1) {
                    let count = 1 + rng.below(s.len() - 1);
                    let mut popped = BTreeSet::new();
                    s.pop_many(count, &mut rng, &lim, |e| assert!(popped.insert(e.to_vec())));
                    assert_eq!(popped.len(), count, "step {step}: pop_many count");
                    for p in &popped {
                        assert!(model.remove(p), "step {step}: popped a non-member");
                    }
                    may_shrink_encoding = true;
                }
            }
            10 => {
                if let Some(s) = set.as_ref().filter(|s| s.len() > 1) {
                    let count = 1 + rng.below(s.len() - 1);
                    let mut picked = BTreeSet::new();
                    s.pick_distinct(count, &mut rng, |e| assert!(picked.insert(e.to_vec())));
                    assert_eq!(picked.len(), count, "step {step}: distinct picks");
                    assert!(picked.is_subset(&model));
                    let mut n = 0;
                    s.for_each_random(count + 3, &mut rng, |e| {
                        assert!(model.contains(&e.to_vec()));
                        n += 1;
                        ControlFlow::Continue(())
                    });
                    assert_eq!(n, count + 3);
                }
            }
            _ => {
                // Several members at once, as SADD does (the size hint converts up front).
                let batch: Vec<Vec<u8>> =
                    (0..1 + rng.below(6)).map(|_| random_member(&mut rng)).collect();
                let s = set
                    .get_or_insert_with(|| SetObj::for_first_member(&batch[0], batch.len(), &lim));
                s.prepare_for(batch.len(), &lim);
                for b in &batch {
                    assert_eq!(s.add(b, &lim), model.insert(b.clone()));
                }
            }
        }
        if set.as_ref().is_some_and(SetObj::is_empty) {
            set = None;
        }
        let Some(s) = set.as_ref() else {
            assert!(model.is_empty(), "step {step}: the set emptied but the model did not");
            continue;
        };
        s.check_invariants();
        check_encoding(s, &lim);
        assert_eq!(members(s), model, "step {step}: members differ");
        assert_eq!(s.len(), model.len());
        if let (Some(before), false) = (before, may_shrink_encoding) {
            assert!(rank(s) >= before, "step {step}: the encoding went back");
        }
        let copy = s.clone();
        assert_eq!(members(&copy), model);
        assert_eq!(copy.encoding_name(), s.encoding_name());
    }
}

#[test]
fn random_operations_match_the_model_with_default_limits() {
    for seed in 0..6 {
        run_model(seed, SetLimits::default(), 3000);
    }
}

#[test]
fn random_operations_match_the_model_with_small_limits() {
    let lim = SetLimits { intset_entries: 8, listpack_entries: 5, listpack_value_bytes: 6 };
    for seed in 10..20 {
        run_model(seed, lim, 2000);
    }
}

#[test]
fn random_operations_match_the_model_with_zero_limits() {
    let lim = SetLimits { intset_entries: 0, listpack_entries: 0, listpack_value_bytes: 0 };
    for seed in 20..24 {
        run_model(seed, lim, 1000);
    }
}

#[test]
fn random_operations_match_the_model_with_a_large_listpack() {
    let lim = SetLimits { intset_entries: 16, listpack_entries: 300, listpack_value_bytes: 100 };
    for seed in 30..34 {
        run_model(seed, lim, 3000);
    }
}

fn fill_ints(lim: &SetLimits, n: i64) -> SetObj {
    let mut s = SetObj::for_first_member(b"0", 1, lim);
    for v in 0..n {
        s.add(v.to_string().as_bytes(), lim);
    }
    s
}

#[test]
fn intset_converts_to_a_table_past_its_limit() {
    let lim = SetLimits::default();
    let mut s = fill_ints(&lim, 512);
    assert_eq!(s.encoding_name(), "intset");
    assert!(s.add(b"512", &lim));
    assert_eq!(s.encoding_name(), "hashtable");
    assert!(s.remove(b"512") && s.remove(b"0"));
    assert_eq!(s.encoding_name(), "hashtable", "never back");
    assert_eq!(s.len(), 511);
}

#[test]
fn intset_takes_a_string_as_a_listpack_or_a_table() {
    let lim = SetLimits::default();
    let mut s = fill_ints(&lim, 10);
    assert!(s.add(b"abc", &lim));
    assert_eq!(s.encoding_name(), "listpack");
    // Too many integers for a listpack.
    let mut s = fill_ints(&lim, 128);
    assert!(s.add(b"abc", &lim));
    assert_eq!(s.encoding_name(), "hashtable");
    // The string itself too long.
    let mut s = fill_ints(&lim, 3);
    assert!(s.add(&[b'a'; 65], &lim));
    assert_eq!(s.encoding_name(), "hashtable");
    // An integer wider (in decimal) than the value limit.
    let small = SetLimits { listpack_value_bytes: 4, ..lim };
    let mut s = fill_ints(&small, 3);
    s.add(b"12345", &small);
    assert!(s.add(b"ab", &small));
    assert_eq!(s.encoding_name(), "hashtable");
}

#[test]
fn listpack_converts_on_count_and_on_length() {
    let lim = SetLimits::default();
    let mut s = SetObj::for_first_member(b"a", 1, &lim);
    for i in 0..128 {
        s.add(format!("m{i}").as_bytes(), &lim);
    }
    assert_eq!(s.encoding_name(), "listpack");
    assert!(!s.add(b"m3", &lim), "a present member does not convert");
    assert_eq!(s.encoding_name(), "listpack");
    assert!(s.add(b"one more", &lim));
    assert_eq!(s.encoding_name(), "hashtable");
    let mut s = SetObj::for_first_member(b"a", 1, &lim);
    assert!(s.add(&[b'v'; 64], &lim));
    assert_eq!(s.encoding_name(), "listpack");
    assert!(s.add(&[b'v'; 65], &lim));
    assert_eq!(s.encoding_name(), "hashtable");
}

#[test]
fn size_hints_pick_the_first_encoding() {
    let lim = SetLimits::default();
    assert_eq!(SetObj::for_first_member(b"1", 512, &lim).encoding_name(), "intset");
    assert_eq!(SetObj::for_first_member(b"1", 513, &lim).encoding_name(), "hashtable");
    assert_eq!(SetObj::for_first_member(b"a", 128, &lim).encoding_name(), "listpack");
    assert_eq!(SetObj::for_first_member(b"a", 129, &lim).encoding_name(), "hashtable");
    assert_eq!(SetObj::for_first_member(b"01", 1, &lim).encoding_name(), "listpack");
    let mut s = SetObj::for_first_member(b"a", 1, &lim);
    s.add(b"a", &lim);
    s.prepare_for(129, &lim);
    assert_eq!(s.encoding_name(), "hashtable");
    assert_eq!(members(&s), BTreeSet::from([b"a".to_vec()]));
}

#[test]
fn intersections_end_as_an_intset_when_they_can() {
    let lim = SetLimits::default();
    let mut s = SetObj::new_listpack();
    for v in ["1", "2", "-3"] {
        s.add(v.as_bytes(), &lim);
    }
    s.to_intset_if_fits(&lim);
    assert_eq!(s.encoding_name(), "intset");
    let mut t = SetObj::new_listpack();
    t.add(b"1", &lim);
    t.add(b"x", &lim);
    t.to_intset_if_fits(&lim);
    assert_eq!(t.encoding_name(), "listpack");
    assert_eq!(members(&t), BTreeSet::from([b"1".to_vec(), b"x".to_vec()]));
}

#[test]
fn scan_visits_every_member_of_a_table() {
    let lim = SetLimits::default();
    let mut s = SetObj::new_intset();
    for i in 0..5000 {
        s.add(format!("member:{i}").as_bytes(), &lim);
    }
    assert_eq!(s.encoding_name(), "hashtable");
    let mut seen = BTreeSet::new();
    let mut cursor = 0;
    let mut calls = 0;
    loop {
        let mut batch = 0;
        cursor = s.scan(cursor, 10, |e| {
            seen.insert(e.to_vec());
            batch += 1;
        });
        assert!(batch <= 10 + 7 * 4, "a call returns about COUNT members");
        calls += 1;
        if cursor == 0 {
            break;
        }
    }
    assert!(calls > 100);
    assert_eq!(seen, members(&s));
    // A compact set comes back whole, with cursor 0.
    let small = fill_ints(&lim, 20);
    let mut n = 0;
    assert_eq!(small.scan(12345, 1, |_| n += 1), 0);
    assert_eq!(n, 20);
}

#[test]
fn memory_is_accounted_per_encoding() {
    let lim = SetLimits::default();
    let ints = fill_ints(&lim, 100);
    // 100 two-byte integers and the 8-byte header.
    assert_eq!(ints.alloc_bytes(), crate::memory::size_class(208));
    assert_eq!(ints.free_effort(), 1);
    let mut big = SetObj::new_intset();
    for i in 0..1000 {
        big.add(format!("key:{i:06}").as_bytes(), &lim);
    }
    let members_bytes = 1000 * Member::alloc_bytes_for(10);
    assert!(big.alloc_bytes() > members_bytes);
    assert!(big.alloc_bytes() < members_bytes + 1000 * 40);
    assert_eq!(big.free_effort(), 1000);
    for i in 0..1000 {
        assert!(big.remove(format!("key:{i:06}").as_bytes()));
    }
    big.check_invariants();
}

#[test]
fn random_picks_cover_a_table_and_respect_distinctness() {
    let lim = SetLimits::default();
    let mut s = SetObj::new_intset();
    for i in 0..300 {
        s.add(format!("e{i}").as_bytes(), &lim);
    }
    let mut rng = Rng::new(7);
    let mut hits = std::collections::HashMap::new();
    s.for_each_random(60_000, &mut rng, |e| {
        *hits.entry(e.to_vec()).or_insert(0usize) += 1;
        ControlFlow::Continue(())
    });
    assert_eq!(hits.len(), 300, "every member is drawn");
    // Uniform: each member gets 200 +- 14 draws; 7 standard deviations of slack.
    assert!(hits.values().all(|&n| (100..300).contains(&n)), "{hits:?}");
    for count in [1, 5, 99, 100, 101, 299] {
        let mut distinct = BTreeSet::new();
        s.pick_distinct(count, &mut rng, |e| assert!(distinct.insert(e.to_vec())));
        assert_eq!(distinct.len(), count);
    }
}

#[test]
fn random_picks_stay_uniform_while_the_table_resizes() {
    let lim = SetLimits::default();
    let mut s = SetObj::new_intset();
    let mut i = 0;
    let resizing = |s: &SetObj| matches!(&s.repr, Repr::Table(t) if t.table.is_rehashing());
    while s.len() < 200 || !resizing(&s) {
        s.add(format!("e{i}").as_bytes(), &lim);
        i += 1;
        assert!(i < 100_000, "no resize caught");
    }
    let n = s.len();
    let mut rng = Rng::new(99);
    let mut hits = std::collections::HashMap::new();
    s.for_each_random(n * 200, &mut rng, |e| {
        *hits.entry(e.to_vec()).or_insert(0usize) += 1;
        ControlFlow::Continue(())
    });
    assert!(resizing(&s), "reads do not move buckets");
    assert_eq!(hits.len(), n);
    assert!(hits.values().all(|&k| (100..300).contains(&k)), "{hits:?}");
}
