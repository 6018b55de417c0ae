//! Seeded random-operation model tests of both encodings against `HashMap<Vec<u8>, Vec<u8>>`
//! (and, for the listpack, against the insertion order), including the conversion between
//! them, plus the sampling and scanning helpers.

use std::collections::{HashMap, HashSet};

use super::*;
use crate::util::rng::Rng;

/// Limits that keep a hash a listpack for everything the tests write.
const ROOMY: Limits = Limits { entries_max: 100_000, value_bytes_max: 100_000 };

fn bytes(e: LpEntry<'_>) -> Vec<u8> {
    e.to_vec()
}

fn contents(h: &HashObj) -> Vec<(Vec<u8>, Vec<u8>)> {
    h.iter().map(|(f, v)| (bytes(f), bytes(v))).collect()
}

/// Every read of `h` agrees with the model, and the table's own invariants hold.
fn check(h: &HashObj, model: &HashMap<Vec<u8>, Vec<u8>>) {
    assert_eq!(h.len(), model.len());
    let got = contents(h);
    assert_eq!(got.len(), model.len(), "iteration yields each field once");
    for (f, v) in &got {
        assert_eq!(model.get(f), Some(v), "field {:?}", f.escape_ascii().to_string());
        assert_eq!(h.get(f, 0).map(bytes).as_ref(), Some(v));
        assert!(h.contains(f, 0));
    }
    if let Repr::Table(big) = &h.repr {
        big.table.check_invariants();
        let sum: usize = big.table.iter().map(HashEntry::alloc_bytes).sum();
        assert_eq!(big.entry_bytes, sum, "entry bytes are kept up to date");
    }
}

/// A value of one of the shapes that matter: small and large integers (stored as integers),
/// non-canonical numbers (stored as strings), binary strings, empty, and long.
fn value(rng: &mut Rng, long_max: usize) -> Vec<u8> {
    match rng.below(8) {
        0 => (rng.next_u64() % 300).to_string().into_bytes(),
        1 => (rng.next_u64() as i64).to_string().into_bytes(),
        2 => format!("0{}", rng.below(100)).into_bytes(),
        3 => Vec::new(),
        4 => b"\0\r\n".to_vec(),
        5 => vec![b'x'; rng.below(long_max + 1)],
        _ => format!("v{}", rng.next_u64()).into_bytes(),
    }
}

fn field(rng: &mut Rng, pool: usize) -> Vec<u8> {
    match rng.below(4) {
        // Numeric fields: stored as integers in a listpack.
        0 => rng.below(pool).to_string().into_bytes(),
        _ => format!("f\0{}", rng.below(pool)).into_bytes(),
    }
}

#[test]
fn listpack_model_keeps_insertion_order() {
    for seed in 0..20 {
        let mut rng = Rng::new(seed);
        let mut h = HashObj::new();
        let mut order: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for _ in 0..600 {
            let f = field(&mut rng, 40);
            match rng.below(10) {
                0..=4 => {
                    let v = value(&mut rng, 64);
                    let pos = order.iter().position(|(of, _)| *of == f);
                    assert_eq!(h.set(&f, &v, ROOMY), pos.is_none());
                    match pos {
                        Some(i) => order[i].1 = v,
                        None => order.push((f, v)),
                    }
                }
                5 => {
                    let n = rng.next_u64() as i64 >> 3;
                    let pos = order.iter().position(|(of, _)| *of == f);
                    assert_eq!(h.set_int(&f, n, ROOMY, 0), pos.is_none());
                    let v = n.to_string().into_bytes();
                    match pos {
                        Some(i) => order[i].1 = v,
                        None => order.push((f, v)),
                    }
                }
                6..=8 => {
                    let pos = order.iter().position(|(of, _)| *of == f);
                    assert_eq!(h.remove(&f), pos.is_some());
                    if let Some(i) = pos {
                        order.remove(i);
                    }
                }
                _ => {
                    let want = order.iter().find(|(of, _)| *of == f).map(|(_, v)| v.clone());
                    assert_eq!(h.get(&f, 0).map(bytes), want);
                }
            }
            assert!(h.is_listpack());
            assert_eq!(contents(&h), order, "listpack order (seed {seed})");
        }
        check(&h, &order.into_iter().collect());
    }
}

#[test]
fn hashtable_model() {
    // An entry limit of 0 converts the hash on its first insert.
    let limits = Limits { entries_max: 0, value_bytes_max: 64 };
    for seed in 0..4 {
        let mut rng = Rng::new(seed);
        let mut h = HashObj::new();
        let mut model: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
        for step in 0..20_000u32 {
            let f = field(&mut rng, 3000);
            // Grow for the first half, then mostly delete, so the table grows and shrinks.
            let remove_weight = if step < 10_000 { 3 } else { 7 };
            if rng.below(10) < remove_weight {
                assert_eq!(h.remove(&f), model.remove(&f).is_some());
            } else if rng.below(4) == 0 {
                let n = rng.next_u64() as i64;
                assert_eq!(h.set_int(&f, n, limits, 0), !model.contains_key(&f));
                model.insert(f, n.to_string().into_bytes());
            } else {
                let v = value(&mut rng, 300);
                assert_eq!(h.set(&f, &v, limits), !model.contains_key(&f));
                model.insert(f, v);
            }
            if !model.is_empty() {
                assert_eq!(h.encoding(), "hashtable");
            }
            assert_eq!(h.len(), model.len());
            if step.is_multiple_of(1000) {
                check(&h, &model);
            }
        }
        check(&h, &model);
        // A clone is sized for its contents, so its table may be smaller; `check` compares
        // its entry bytes with a recount.
        let copy = h.clone();
        check(&copy, &model);
        assert!(copy.alloc_bytes() <= h.alloc_bytes() || model.is_empty());
    }
}

#[test]
fn conversion_happens_exactly_when_a_limit_breaks() {
    let limits = Limits { entries_max: 16, value_bytes_max: 8 };
    for seed in 0..200 {
        let mut rng = Rng::new(seed);
        let mut h = HashObj::new();
        let mut model: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
        let mut converted = false;
        for _ in 0..100 {
            let f = if rng.below(20) == 0 {
                vec![b'F'; 9]
            } else {
                format!("f{}", rng.below(24)).into_bytes()
            };
            if rng.below(4) == 0 {
                assert_eq!(h.remove(&f), model.remove(&f).is_some());
            } else {
                let v = value(&mut rng, 9);
                // HSET's order: the length check first, then the insert and the count check.
                h.prepare_write(&[&f, &v], limits);
                converted |= f.len() > 8 || v.len() > 8;
                assert_eq!(h.set(&f, &v, limits), !model.contains_key(&f));
                model.insert(f, v);
                converted |= model.len() > 16;
            }
            assert_eq!(h.is_listpack(), !converted, "seed {seed}");
            check(&h, &model);
        }
    }
}

#[test]
fn set_converts_for_long_values_without_prepare() {
    // HINCRBYFLOAT can write a long value: `set` converts on its own.
    let limits = Limits { entries_max: 10, value_bytes_max: 4 };
    let mut h = HashObj::new();
    h.set(b"a", b"1", limits);
    assert!(h.is_listpack());
    h.set(b"a", b"123456", limits);
    assert_eq!(h.encoding(), "hashtable");
    assert_eq!(h.get(b"a", 0), Some(LpEntry::Int(123456)));
    let mut h = HashObj::new();
    h.set_int(b"long-field", 1, limits, 0);
    assert_eq!(h.encoding(), "hashtable");
    // Never back, even when emptied to one small field.
    h.set(b"b", b"2", limits);
    h.remove(b"long-field");
    assert_eq!(h.encoding(), "hashtable");
}

#[test]
fn a_lowered_entry_limit_applies_at_the_next_update() {
    let mut h = HashObj::new();
    h.set(b"a", b"1", ROOMY);
    h.set(b"b", b"2", ROOMY);
    h.remove(b"nosuch");
    assert!(h.is_listpack(), "a removal converts nothing");
    let lowered = Limits { entries_max: 1, value_bytes_max: 64 };
    assert!(!h.set(b"a", b"3", lowered));
    assert_eq!(h.encoding(), "hashtable");
    assert_eq!(contents(&h).len(), 2);
}

#[test]
fn prepare_write_converts_past_the_safety_size() {
    let limits = Limits { entries_max: 10, value_bytes_max: usize::MAX };
    let mut h = HashObj::new();
    h.set(b"a", b"b", limits);
    let huge = vec![0u8; LISTPACK_BYTES_SAFE_MAX / 2];
    h.prepare_write(&[&huge[..], &huge[..]], limits);
    assert_eq!(h.encoding(), "hashtable");
    assert_eq!(contents(&h), vec![(b"a".to_vec(), b"b".to_vec())]);
}

fn filled(n: usize, limits: Limits) -> HashObj {
    let mut h = HashObj::new();
    for i in 0..n {
        h.set(format!("f{i}").as_bytes(), format!("v{i}").as_bytes(), limits);
    }
    h
}

#[test]
fn random_sampling_properties() {
    let table = Limits { entries_max: 0, value_bytes_max: 64 };
    for h in [filled(50, ROOMY), filled(50, table), filled(3000, table)] {
        let all: HashMap<Vec<u8>, Vec<u8>> = contents(&h).into_iter().collect();
        let mut rng = Rng::new(7);
        for count in [1, 2, 10, 16, 17, 40, 49, h.len() - 1] {
            let got = h.random_distinct(count, &mut rng);
            assert_eq!(got.len(), count);
            let fields: HashSet<Vec<u8>> = got.iter().map(|(f, _)| bytes(*f)).collect();
            assert_eq!(fields.len(), count, "distinct");
            for (f, v) in got {
                assert_eq!(all.get(&bytes(f)), Some(&bytes(v)));
            }
        }
        // With repetitions: every draw is a member, and a long run sees most fields.
        let draws: Vec<_> = h.random_pairs(Rng::new(3)).take(20 * h.len()).collect();
        let mut seen = HashSet::new();
        for (f, v) in draws {
            assert_eq!(all.get(&bytes(f)), Some(&bytes(v)));
            seen.insert(bytes(f));
        }
        assert!(seen.len() * 10 >= h.len() * 9, "{} of {} seen", seen.len(), h.len());
        let (f, v) = h.random_pair(&mut rng).unwrap();
        assert_eq!(all.get(&bytes(f)), Some(&bytes(v)));
    }
    assert!(HashObj::new().random_pairs(Rng::new(1)).next().is_none());
    assert!(HashObj::new().random_pair(&mut Rng::new(1)).is_none());
}

#[test]
fn scan_covers_every_field() {
    let table = Limits { entries_max: 0, value_bytes_max: 64 };
    for h in [filled(100, ROOMY), filled(5000, table)] {
        let mut seen = HashSet::new();
        let mut cursor = 0;
        let mut calls = 0;
        loop {
            cursor = h.scan(cursor, 10, 0, |(f, v)| {
                assert_eq!(h.get(&bytes(f), 0), Some(v));
                seen.insert(bytes(f));
            });
            calls += 1;
            if cursor == 0 {
                break;
            }
        }
        assert_eq!(seen.len(), h.len());
        assert_eq!(calls == 1, h.is_listpack(), "a listpack is scanned in one call");
    }
}

#[test]
fn memory_and_effort() {
    let h = filled(10, ROOMY);
    let Repr::Listpack(lp) = &h.repr else { panic!("listpack") };
    assert_eq!(h.alloc_bytes(), lp.alloc_bytes());
    assert_eq!(h.free_effort(), 1);
    let t = filled(1000, Limits { entries_max: 0, value_bytes_max: 64 });
    assert_eq!(t.free_effort(), 1000);
    // Each pair is one allocation: "fNNN" + "vNNN" and two length bytes, at most 10 bytes,
    // the 16-byte class; the table adds 12 to 24 bytes a field (see the hashtable's fill
    // limits): under 40 bytes a field in all.
    assert!(t.alloc_bytes() < 40 * 1000, "{}", t.alloc_bytes());
}
