//! Field TTLs of the hash type: hiding, HSET/HINCRBY's rules for a field's TTL, the lower
//! bound, and the reclaim sweep against a model, including sweeps cut by their budget.

use std::collections::HashMap;

use super::*;
use crate::util::rng::Rng;

const T0: i64 = 1_700_000_000_000;
const SMALL: Limits = Limits { entries_max: 128, value_bytes_max: 64 };

#[test]
fn a_ttl_converts_and_expired_fields_are_hidden_but_counted() {
    let mut h = HashObj::new();
    h.set(b"a", b"1", SMALL);
    h.set(b"b", b"2", SMALL);
    assert!(h.is_listpack());
    assert_eq!(h.field_ttl(b"a", T0), FieldTtl::Persistent);
    assert!(h.set_field_expire(b"a", Some(T0 + 10)));
    assert!(!h.is_listpack());
    assert_eq!(h.field_ttl(b"a", T0), FieldTtl::At(T0 + 10));
    assert_eq!(h.next_expire_bound(), Some(T0 + 10));
    // Alive up to and including its millisecond.
    assert!(h.contains(b"a", T0 + 10));
    assert!(!h.contains(b"a", T0 + 11));
    assert_eq!(h.get(b"a", T0 + 11), None);
    assert_eq!(h.field_ttl(b"a", T0 + 11), FieldTtl::Missing);
    assert_eq!(h.len(), 2, "stored until reclaimed");
    assert_eq!(h.live_len(T0 + 11), 1);
    assert_eq!(h.iter_live(T0 + 11).count(), 1);
    assert!(!h.remove_live(b"a", T0 + 11), "an expired field cannot be deleted");
    let copy = h.without_expired(T0 + 11).expect("one field expired");
    assert_eq!(copy.len(), 1);
    assert!(h.without_expired(T0).is_none());
}

#[test]
fn writes_keep_or_clear_ttls_as_valkey() {
    let mut h = HashObj::new();
    h.set_with(b"a", b"1", TtlWrite::At(T0 + 100), SMALL, T0);
    h.set_with(b"b", b"1", TtlWrite::At(T0 + 100), SMALL, T0);
    // HINCRBY keeps the TTL of a live field.
    assert!(!h.set_int(b"a", 5, SMALL, T0));
    assert_eq!(h.field_ttl(b"a", T0), FieldTtl::At(T0 + 100));
    // HSET clears it.
    assert!(!h.set_with(b"b", b"x", TtlWrite::Clear, SMALL, T0));
    assert_eq!(h.field_ttl(b"b", T0), FieldTtl::Persistent);
    assert_eq!(h.volatile_count(), 1);
    // Over an expired field: new, and KEEPTTL keeps nothing of the dead field.
    assert!(h.set_with(b"a", b"2", TtlWrite::Keep, SMALL, T0 + 200));
    assert_eq!(h.field_ttl(b"a", T0 + 200), FieldTtl::Persistent);
    assert_eq!(h.volatile_count(), 0);
    // A time changed in place, and removed.
    h.set_field_expire(b"a", Some(T0 + 5));
    h.set_field_expire(b"a", Some(T0 + 1));
    assert_eq!(h.next_expire_bound(), Some(T0 + 1));
    h.set_field_expire(b"a", None);
    assert_eq!((h.volatile_count(), h.next_expire_bound()), (0, None));
}

#[test]
fn reclaim_sweeps_match_a_model_with_small_budgets() {
    let mut rng = Rng::new(7);
    for round in 0..20 {
        let mut h = HashObj::new();
        let mut model: HashMap<Vec<u8>, Option<i64>> = HashMap::new();
        let n = 50 + rng.below(400);
        for i in 0..n {
            let f = format!("f{i}").into_bytes();
            let ttl = match rng.below(3) {
                0 => None,
                _ => Some(T0 + rng.below(1000) as i64),
            };
            h.set_with(&f, b"v", ttl.map_or(TtlWrite::Clear, TtlWrite::At), SMALL, T0);
            model.insert(f, ttl);
        }
        let mut now = T0;
        while now < T0 + 1100 {
            now += 1 + rng.below(200) as i64;
            // Some TTL writes between steps, lowering the bound mid-sweep.
            for _ in 0..3 {
                let f = format!("f{}", rng.below(n)).into_bytes();
                if h.contains(&f, now) {
                    let at = now + rng.below(300) as i64;
                    h.set_field_expire(&f, Some(at));
                    model.insert(f, Some(at));
                }
            }
            let mut out = Vec::new();
            loop {
                h.reclaim(now, 1 + round % 4, &mut out);
                if !h.sweeping() {
                    break;
                }
            }
            for f in &out {
                let at = model.remove(f).flatten().expect("only volatile fields go");
                assert!(field_expired(at, now), "{} went early", f.escape_ascii());
            }
            // Nothing expired is left once a sweep ends, and the bound is true.
            for (f, at) in &model {
                if let Some(at) = at {
                    assert!(!field_expired(*at, now), "{} left", f.escape_ascii());
                    assert!(h.next_expire_bound().unwrap() <= *at);
                }
            }
            assert_eq!(h.len(), model.len());
            assert_eq!(h.volatile_count(), model.values().filter(|t| t.is_some()).count());
        }
    }
}
