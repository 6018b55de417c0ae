//! The database's side of hash field expiration: filing hashes that gain volatile fields in
//! the [`FieldExpiryQueue`], and active expiry's bounded step over the due ones. The hash
//! type does the per-field work (`types::hash`); this file only finds the hashes, deletes
//! a hash its last field left empty, and reports what it removed for the server's effects
//! (the `hexpired` event, `HDEL` in the propagation feed).

use super::Db;
use crate::keyspace::entry::KeyEntry;
use crate::keyspace::keys::KeyProbe;
use crate::keyspace::value::{is_expired, Value};
use crate::table::hash_key;
use crate::types::agg::{Agg, AggType, Typed};
use crate::types::hash::HashObj;

/// Fields active expiry removed from one hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldsExpired {
    pub key: Vec<u8>,
    pub fields: Vec<Vec<u8>>,
    /// The hash was left empty and deleted.
    pub deleted: bool,
}

/// What one [`Db::expire_fields_step`] did.
#[derive(Debug, Default)]
pub struct FieldsStep {
    /// Queue entries looked at.
    pub visited: usize,
    /// Hashes that lost fields.
    pub expired: Vec<FieldsExpired>,
    /// Due entries remain (the step stopped at its limit, or a sweep is unfinished).
    pub more: bool,
}

/// The field-expiry lower bound of `v` when it is a hash with volatile fields.
pub(super) fn expire_bound(v: &Value) -> Option<i64> {
    match v {
        Value::Agg(Agg::Hash(h)) => h.next_expire_bound(),
        _ => None,
    }
}

/// [`expire_bound`] of the value an entry holds.
pub(super) fn entry_expire_bound(e: &KeyEntry) -> Option<i64> {
    e.agg().and_then(HashObj::from_ref).and_then(HashObj::next_expire_bound)
}

impl Db {
    /// A write changed the expire times of the hash at `key`: its lower bound went from
    /// `before` to `after` (None: no volatile field). Files the hash for active expiry when
    /// the bound came down (see `keyspace::field_expiry`).
    pub fn hash_ttls_changed(&mut self, key: &[u8], before: Option<i64>, after: Option<i64>) {
        if let Some(after) = after {
            if before.is_none_or(|b| after < b) {
                self.field_queue.file(key, after);
            }
        }
    }

    /// A value was stored whole at `key` (RENAME, MOVE, RESTORE, a load): files it when it
    /// is a hash with volatile fields, whose lower bound ([`expire_bound`]) the caller took
    /// before storing it.
    pub(super) fn file_hash(&mut self, key: &[u8], bound: Option<i64>) {
        if let Some(bound) = bound {
            self.field_queue.file(key, bound);
        }
    }

    /// Hashes filed for field expiry, stale entries included (about
    /// `keys_with_volatile_items`).
    pub fn field_queue_len(&self) -> usize {
        self.field_queue.len()
    }

    /// One bounded step of active field expiry at `now_ms`: takes up to `entries_max` due
    /// queue entries and sweeps each due hash at most `buckets_per_hash` buckets, removing
    /// the expired fields (and a hash left empty). Keys that have expired themselves are
    /// left to key expiry.
    pub fn expire_fields_step(
        &mut self,
        now_ms: i64,
        entries_max: usize,
        buckets_per_hash: usize,
    ) -> FieldsStep {
        let mut step = FieldsStep::default();
        let mut refile = Vec::new();
        let mut due_again = Vec::new();
        while step.visited < entries_max {
            let Some(key) = self.field_queue.take_due(now_ms) else { break };
            step.visited += 1;
            let KeyProbe::Found(mut at) = self.keys.probe(hash_key(&key), &key) else { continue };
            if at.get().expire_at().is_some_and(|at| is_expired(at, now_ms)) {
                continue;
            }
            let Some(hash) = at.get_mut().agg_mut().and_then(HashObj::from_mut) else { continue };
            let Some(bound) = hash.next_expire_bound() else { continue };
            if !hash.may_have_expired(now_ms) && !hash.sweeping() {
                refile.push((key, bound));
                continue;
            }
            let mut fields = Vec::new();
            hash.reclaim(now_ms, buckets_per_hash, &mut fields);
            let emptied = hash.is_empty();
            let (next, sweeping) = (hash.next_expire_bound(), hash.sweeping());
            if emptied {
                at.remove();
            } else {
                // The hash may have lost its last volatile field (see `keys`).
                at.sync_volatile();
                if sweeping {
                    step.more = true;
                    due_again.push(key.clone());
                } else if let Some(next) = next {
                    refile.push((key.clone(), next));
                }
            }
            if !fields.is_empty() {
                self.stats.expired_fields += fields.len() as u64;
                step.expired.push(FieldsExpired { key: key.into_vec(), fields, deleted: emptied });
            }
        }
        step.more |= step.visited == entries_max;
        for (key, at) in refile {
            self.field_queue.file(&key, at);
        }
        for key in due_again {
            self.field_queue.file_due(&key, now_ms);
        }
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::hash::{Limits, TtlWrite};

    const T0: i64 = 1_700_000_000_000;
    const LIMITS: Limits = Limits { entries_max: 128, value_bytes_max: 64 };

    /// A hash at `key` with `n` fields, those of index below `volatile` expiring at `at`.
    fn volatile_hash(db: &mut Db, key: &[u8], n: usize, volatile: usize, at: i64) {
        let mut entry = db.agg_entry(key, T0, Some(HashObj::new)).unwrap().unwrap();
        let h = entry.get();
        let before = h.next_expire_bound();
        for i in 0..n {
            let ttl = if i < volatile { TtlWrite::At(at + i as i64) } else { TtlWrite::Clear };
            h.set_with(format!("f{i}").as_bytes(), b"v", ttl, LIMITS, T0);
        }
        let after = h.next_expire_bound();
        drop(entry);
        db.hash_ttls_changed(key, before, after);
    }

    fn step_until_done(db: &mut Db, now: i64) -> Vec<FieldsExpired> {
        let mut all = Vec::new();
        loop {
            let step = db.expire_fields_step(now, 2, 1);
            all.extend(step.expired);
            if !step.more {
                return all;
            }
        }
    }

    #[test]
    fn due_fields_go_in_bounded_steps_and_an_emptied_hash_with_them() {
        let mut db = Db::new();
        volatile_hash(&mut db, b"mixed", 300, 100, T0 + 1000);
        volatile_hash(&mut db, b"all", 3, 3, T0 + 1000);
        volatile_hash(&mut db, b"later", 3, 3, T0 + 60_000);
        assert_eq!(db.field_queue_len(), 3);
        // Nothing is due yet: the entries stay filed, nothing is removed.
        assert!(step_until_done(&mut db, T0).is_empty());
        assert_eq!(db.field_queue_len(), 3);
        let mut gone = step_until_done(&mut db, T0 + 2000);
        gone.sort_by(|a, b| a.key.cmp(&b.key));
        let fields: usize = gone.iter().map(|g| g.fields.len()).sum();
        assert_eq!(fields, 103);
        // A sweep cut by its one-bucket budget reports in pieces, each bounded.
        let mut hashes: Vec<(&[u8], bool)> = gone.iter().map(|g| (&g.key[..], g.deleted)).collect();
        hashes.dedup();
        assert_eq!(hashes, [(&b"all"[..], true), (b"mixed", false)]);
        assert!(!db.contains(b"all", T0 + 2000));
        let mixed = db.read_agg::<HashObj>(b"mixed", T0 + 2000).unwrap().unwrap();
        assert_eq!((mixed.len(), mixed.volatile_count()), (200, 0));
        assert_eq!(db.stats.expired_fields, 103);
        // The later hash is still filed, and goes when its time comes.
        assert_eq!(db.field_queue_len(), 1);
        let gone = step_until_done(&mut db, T0 + 70_000);
        assert_eq!((gone.len(), gone[0].deleted), (1, true));
        assert_eq!(db.field_queue_len(), 0);
        db.check_invariants();
    }

    #[test]
    fn stale_entries_are_dropped_and_moved_hashes_follow_their_key() {
        let mut db = Db::new();
        volatile_hash(&mut db, b"h", 2, 1, T0 + 10);
        volatile_hash(&mut db, b"moved", 2, 1, T0 + 10);
        // Overwritten with a string: its entry is stale.
        db.set_str(b"h", crate::types::string::StrValue::Int(1), super::super::Ttl::Clear, T0);
        // Renamed: the new name is filed when the value is put back.
        let obj = db.take(b"moved", T0).unwrap();
        db.put(b"renamed", obj);
        let gone = step_until_done(&mut db, T0 + 1000);
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].key, b"renamed");
        assert_eq!(db.field_queue_len(), 0);
        // SWAPDB takes the queue along.
        let mut other = Db::new();
        volatile_hash(&mut db, b"s", 1, 1, T0 + 10);
        Db::swap_contents(&mut db, &mut other);
        assert_eq!((db.field_queue_len(), other.field_queue_len()), (0, 1));
        assert_eq!(step_until_done(&mut other, T0 + 1000).len(), 1);
    }

    /// The count of keys with volatile items, checked against a scan (`check_invariants`)
    /// after every way a hash gains or loses its volatile fields in place or a key comes or
    /// goes: it cannot drift.
    #[test]
    fn keys_with_volatile_items_follow_every_change() {
        use super::super::Ttl;
        use crate::types::string::StrValue;
        let check = |db: &Db, want: usize| {
            db.check_invariants();
            assert_eq!(db.volatile_items_len(), want);
        };
        let mut db = Db::new();
        volatile_hash(&mut db, b"a", 3, 1, T0 + 1000);
        volatile_hash(&mut db, b"b", 2, 2, T0 + 1000);
        volatile_hash(&mut db, b"plain", 2, 0, T0 + 1000);
        check(&db, 2);
        // The last volatile field loses its TTL in place, then gets one back.
        let mut h = db.agg_existing::<HashObj>(b"a", T0).unwrap().unwrap();
        assert!(h.get().set_field_expire(b"f0", None));
        drop(h);
        check(&db, 1);
        let mut h = db.agg_existing::<HashObj>(b"a", T0).unwrap().unwrap();
        assert!(h.get().set_field_expire(b"f1", Some(T0 + 50)));
        drop(h);
        check(&db, 2);
        // A key TTL rebuilds the entry; the hash moves to the new one, counted once.
        assert!(db.set_expire(b"a", Some(T0 + 10_000), T0));
        assert!(db.set_expire(b"a", Some(i64::MAX), T0));
        assert!(db.set_expire(b"a", None, T0));
        check(&db, 2);
        // Renamed (both ways of moving), overwritten, deleted.
        let obj = db.take(b"a", T0).unwrap();
        check(&db, 1);
        db.put(b"a2", obj);
        let e = db.take_raw(b"b", T0).unwrap();
        db.put_entry(b"b2", e);
        check(&db, 2);
        let obj = db.take(b"plain", T0).unwrap();
        db.put(b"a2", obj);
        check(&db, 1);
        db.set_str(b"b2", StrValue::Int(1), Ttl::Clear, T0);
        check(&db, 0);
        // Emptied by removing its fields: removed with its mark.
        volatile_hash(&mut db, b"c", 1, 1, T0 + 1000);
        let mut h = db.agg_existing::<HashObj>(b"c", T0).unwrap().unwrap();
        h.get().remove(b"f0");
        assert!(h.remove_if_empty());
        check(&db, 0);
        // Lazy key expiry, active key expiry, eviction.
        for key in [&b"d"[..], b"e", b"f"] {
            volatile_hash(&mut db, key, 2, 1, T0 + 1000);
        }
        assert!(db.set_expire(b"d", Some(T0 + 5), T0));
        assert!(db.set_expire(b"e", Some(T0 + 5), T0));
        check(&db, 3);
        assert!(!db.contains(b"d", T0 + 10));
        check(&db, 2);
        let mut seed = 1;
        while db.expires_len() > 0 {
            db.expire_sample(seed, 20, T0 + 10, drop);
            seed += 1;
        }
        check(&db, 1);
        drop(db.evict(b"f"));
        check(&db, 0);
        // Active field expiry: one loses its last volatile field, one is emptied.
        volatile_hash(&mut db, b"g", 3, 1, T0 + 1000);
        volatile_hash(&mut db, b"h", 1, 1, T0 + 1000);
        check(&db, 2);
        step_until_done(&mut db, T0 + 5000);
        check(&db, 0);
        assert!(db.contains(b"g", T0 + 5000) && !db.contains(b"h", T0 + 5000));
        // SWAPDB, FLUSHDB (now and lazily), a copy stored whole.
        volatile_hash(&mut db, b"i", 1, 1, T0 + 1000);
        let copy = db.read_obj(b"i", T0).map(|e| e.agg().unwrap().to_owned()).unwrap();
        db.set(b"j", crate::keyspace::value::Value::Agg(copy), Ttl::Clear, T0);
        check(&db, 2);
        let mut other = Db::new();
        Db::swap_contents(&mut db, &mut other);
        check(&db, 0);
        check(&other, 2);
        other.flush(true);
        check(&other, 0);
        volatile_hash(&mut db, b"k", 1, 1, T0 + 1000);
        db.clear();
        check(&db, 0);
    }
}
