//! The storage of one database: the cache-line hashtable of [`KeyEntry`]s plus the expire
//! index of the entries that have a TTL, kept in step.
//!
//! Every mutation that can move, replace or drop an entry goes through here, because the
//! expire index points at entries by address (see `expire_index`). Lookups take the key's
//! hash, computed once per command by the caller with [`hash_key`].
//!
//! For the same reason this is where the count of keys with volatile items (hashes with a
//! field that has a TTL; INFO keyspace `keys_with_volatile_items`) is kept. The count
//! cannot drift, because it is never told of a change, it sees each one:
//! - a hash carries a mark saying whether it is counted (`HashObj::volatile_mark`); an
//!   entry that comes in ([`AbsentKey::insert`], [`FoundKey::replace`]) has its hash marked
//!   from what it holds and counted; one that leaves (any removal, a replacement, a detach)
//!   is uncounted by its mark, whatever was done to the hash since;
//! - a hash changed in place is marked again by [`FoundKey::sync_volatile`], which the
//!   database's write handle for aggregates calls when it is dropped (`db::AggMut`), as
//!   active field expiry does after each hash it reclaims from.
//!
//! So the count always equals the number of marked hashes, and `check_invariants` checks
//! that every mark says what its hash holds.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::keyspace::entry::{KeyEntry, NewValue};
use crate::keyspace::expire_index::ExpireIndex;
use crate::table::{hash_key, Absent, Drained, Found, Probe, Table};
use crate::types::agg::Typed;
use crate::types::hash::HashObj;
use crate::util::rng::Rng;

/// `DEBUG DICT-RESIZING`: whether the databases' tables may grow and shrink (process-wide,
/// as Valkey's `dict_resizing`; on at start). Off, a table keeps its bucket array and chains
/// instead, which tests use to build long chains or to hold a table still.
static RESIZING: AtomicBool = AtomicBool::new(true);

pub fn set_resizing(enabled: bool) {
    RESIZING.store(enabled, Ordering::Relaxed);
}

/// Whether the databases' tables may resize (see [`set_resizing`]).
pub fn resizing_enabled() -> bool {
    RESIZING.load(Ordering::Relaxed)
}

#[derive(Default)]
pub struct Keys {
    table: Table<KeyEntry>,
    expires: ExpireIndex,
    /// Entries whose hash is marked as having volatile fields (see the module documentation).
    volatile: usize,
}

/// The contents of a database taken out whole, to be dropped elsewhere (lazy free).
pub struct Detached {
    _entries: Drained<KeyEntry>,
    _expires: ExpireIndex,
}

/// A set of keys eviction can draw from: every key (allkeys-* policies) or the keys with a
/// TTL (volatile-* policies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeySet {
    All,
    Volatile,
}

/// What the table will do to memory when it next grows (see [`Keys::table_growth`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableGrowth {
    /// New keys that still fit before an insert starts a resize.
    pub inserts_left: usize,
    /// Bytes of the bucket array that resize allocates (the old one lives on until the
    /// rehash ends).
    pub bytes: usize,
}

/// The hashtable's growth rule, restated for [`Keys::table_growth`] (hashtable/mod.rs:
/// 7 slots per 64-byte bucket, grow past 77% fill, to a power of two of buckets at 50% fill or
/// less). `table_growth_matches_the_table` pins these to what the table really does.
const BUCKET_SLOTS: usize = 7;
const BUCKET_BYTES: usize = 64;
const GROW_FILL_PERCENT: usize = 77;
const GROWN_FILL_PERCENT: usize = 50;

impl Keys {
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    pub fn expires_len(&self) -> usize {
        self.expires.len()
    }

    /// Keys holding a hash with a field that has a TTL, expired or not (INFO keyspace
    /// `keys_with_volatile_items`).
    pub fn volatile_len(&self) -> usize {
        self.volatile
    }

    pub fn get(&self, hash: u64, key: &[u8]) -> Option<&KeyEntry> {
        self.table.find(hash, key)
    }

    /// Mutable access for in-place changes that keep the layout (LRU clock, raw flag,
    /// an expire time that fits), and not the fields of a hash (they go through
    /// [`Keys::probe`] and [`FoundKey::sync_volatile`]). Use [`Keys::insert`] or
    /// [`Keys::set_expire`] for the rest.
    pub fn get_mut(&mut self, hash: u64, key: &[u8]) -> Option<&mut KeyEntry> {
        self.table.find_mut(hash, key)
    }

    /// Inserts a key known to be new, unless it exists: then nothing changes and the answer
    /// is false. One lookup (a load's duplicate check and insert in one).
    pub fn insert_absent(
        &mut self,
        hash: u64,
        key: &[u8],
        value: NewValue<'_>,
        expire_at_ms: Option<i64>,
        lru: u32,
    ) -> bool {
        match self.probe(hash, key) {
            KeyProbe::Found(_) => false,
            KeyProbe::Absent(a) => {
                a.insert(KeyEntry::new(key, value, expire_at_ms, lru));
                true
            }
        }
    }

    /// Room for `n` keys at once in an empty keyspace (see `Table::reserve_empty`).
    pub fn reserve_empty(&mut self, n: usize) {
        self.table.reserve_empty(n);
    }

    /// Insert or replace the entry for `key`.
    pub fn insert(
        &mut self,
        hash: u64,
        key: &[u8],
        value: NewValue<'_>,
        expire_at_ms: Option<i64>,
        lru: u32,
    ) {
        self.insert_entry(hash, key, KeyEntry::new(key, value, expire_at_ms, lru));
    }

    /// Insert or replace the entry for `key` with `e`, already built for `key` (and not in
    /// the expire index: fresh from `KeyEntry::new` or `rebuilt`).
    pub fn insert_entry(&mut self, hash: u64, key: &[u8], e: KeyEntry) {
        match self.probe(hash, key) {
            KeyProbe::Found(f) => f.replace(e),
            KeyProbe::Absent(a) => {
                a.insert(e);
            }
        }
    }

    /// Looks `key` up once for a read-modify-write (see `table::probe`): the answer reads,
    /// changes, replaces or removes the entry, or inserts the absent key, keeping the expire
    /// index in step, without a second lookup.
    #[inline]
    pub fn probe(&mut self, hash: u64, key: &[u8]) -> KeyProbe<'_> {
        let Keys { table, expires, volatile } = self;
        match table.probe(hash, key) {
            Probe::Found(at) => KeyProbe::Found(FoundKey { at, expires, volatile }),
            Probe::Absent(at) => KeyProbe::Absent(AbsentKey { at, expires, volatile }),
        }
    }

    /// Remove `key`; the entry is returned (and leaves the expire index).
    pub fn remove(&mut self, hash: u64, key: &[u8]) -> Option<KeyEntry> {
        let e = self.table.remove(hash, key)?;
        if e.expire_at().is_some() {
            self.expires.remove(e.expire_slot());
        }
        self.volatile -= marked(&e);
        Some(e)
    }

    /// Set or clear the expire time of an existing key. False when the key is absent.
    pub fn set_expire(&mut self, hash: u64, key: &[u8], at: Option<i64>) -> bool {
        match self.probe(hash, key) {
            KeyProbe::Found(f) => {
                f.set_expire(key, at);
                true
            }
            KeyProbe::Absent(_) => false,
        }
    }

    /// One step of a SCAN over the table.
    pub fn scan(&self, cursor: u64, f: impl FnMut(&KeyEntry)) -> u64 {
        self.table.scan(cursor, f)
    }

    pub fn iter(&self) -> impl Iterator<Item = &KeyEntry> {
        self.table.iter()
    }

    /// Every entry, with no prefetching (to measure what the prefetch gains).
    pub fn iter_unprefetched(&self) -> impl Iterator<Item = &KeyEntry> {
        self.table.iter_unprefetched()
    }

    /// Every entry, prefetching each entry's out-of-line value (a heap string or an
    /// aggregate's object) about one bucket before it is yielded: for walks that read every
    /// value, such as a save.
    pub fn iter_with_values(&self) -> impl Iterator<Item = &KeyEntry> {
        self.table.iter_prefetch_values(|e: &KeyEntry| {
            if let Some(addr) = e.value_addr() {
                crate::table::prefetch_read(addr);
            }
        })
    }

    pub fn random(&self, seed: u64) -> Option<&KeyEntry> {
        self.table.random(seed)
    }

    /// Draw `n` uniform samples from the keys with a TTL; returns how many were drawn and
    /// the keys among them expired at `now_ms` (each once).
    pub fn sample_expired(&self, seed: u64, n: usize, now_ms: i64) -> (usize, Vec<Vec<u8>>) {
        let mut out: Vec<Vec<u8>> = Vec::new();
        let len = self.expires.len();
        if len == 0 {
            return (0, out);
        }
        let draws = n.min(len);
        let mut rng = Rng::new(seed);
        for _ in 0..draws {
            let p = self.expires.random(rng.next_u64()).expect("index is not empty");
            // SAFETY: every pointer in the index is a live entry of this table, and `&self`
            // keeps the table from changing while the view is used.
            let e = unsafe { KeyEntry::view(p) };
            if e.expire_at().is_some_and(|at| at <= now_ms) {
                let k = e.key();
                if !out.iter().any(|x| x.as_slice() == k) {
                    out.push(k.to_vec());
                }
            }
        }
        (draws, out)
    }

    /// When the table grows next, and what that costs: the one large allocation a write can
    /// make, which maxmemory eviction must see coming (a table of 2^17 buckets allocates 16
    /// MiB at once when it grows). None while a resize is running (no other starts then) and
    /// for an empty table.
    pub fn table_growth(&self) -> Option<TableGrowth> {
        let heads = self.table.head_buckets();
        if heads == 0 || self.table.is_rehashing() {
            return None;
        }
        let fits = heads * BUCKET_SLOTS * GROW_FILL_PERCENT / 100;
        let wanted = (fits + 1) * 100;
        let buckets = wanted.div_ceil(BUCKET_SLOTS * GROWN_FILL_PERCENT).next_power_of_two();
        Some(TableGrowth {
            inserts_left: fits.saturating_sub(self.table.len()),
            bytes: buckets * BUCKET_BYTES,
        })
    }

    /// How many keys `set` holds.
    pub fn count(&self, set: KeySet) -> usize {
        match set {
            KeySet::All => self.table.len(),
            KeySet::Volatile => self.expires.len(),
        }
    }

    /// Calls `f` on up to `n` entries of `set`, for eviction's candidate pool. From the whole
    /// table: the entries of consecutive buckets after a random start (Valkey's
    /// `dictGetSomeKeys`: cache-friendly, distinct). From the expire index: `n` uniform draws
    /// of its dense array (a key may come twice; the pool keeps one copy).
    pub fn sample(&self, set: KeySet, seed: u64, n: usize, mut f: impl FnMut(&KeyEntry)) {
        match set {
            KeySet::All => {
                let mut picked: Vec<&KeyEntry> = Vec::with_capacity(n.min(self.table.len()));
                self.table.sample(seed, n, &mut picked);
                picked.into_iter().for_each(f);
            }
            KeySet::Volatile => {
                let mut rng = Rng::new(seed);
                for _ in 0..n.min(self.expires.len()) {
                    let p = self.expires.random(rng.next_u64()).expect("index is not empty");
                    // SAFETY: every pointer in the index is a live entry of this table, and
                    // `&self` keeps the table from changing while the view is used.
                    f(&*unsafe { KeyEntry::view(p) });
                }
            }
        }
    }

    /// Calls `f` on one random entry of `set` (the random eviction policies); None when `set`
    /// is empty.
    pub fn with_random<R>(
        &self,
        set: KeySet,
        seed: u64,
        f: impl FnOnce(&KeyEntry) -> R,
    ) -> Option<R> {
        match set {
            KeySet::All => self.table.random(seed).map(f),
            KeySet::Volatile => {
                let p = self.expires.random(Rng::new(seed).next_u64())?;
                // SAFETY: as in `sample`.
                Some(f(&*unsafe { KeyEntry::view(p) }))
            }
        }
    }

    /// Average remaining TTL in ms over (up to) the first 1024 keys of the expire index.
    pub fn avg_ttl_ms(&self, now_ms: i64) -> i64 {
        let n = self.expires.len().min(1024);
        if n == 0 {
            return 0;
        }
        let mut sum = 0i64;
        for i in 0..n {
            let p = self.expires.at(i).expect("slot below len");
            // SAFETY: as in sample_expired.
            let e = unsafe { KeyEntry::view(p) };
            sum = sum.saturating_add((e.expire_at().unwrap_or(now_ms) - now_ms).max(0));
        }
        sum / n as i64
    }

    /// Whether the key table is in a resize.
    pub fn is_rehashing(&self) -> bool {
        self.table.is_rehashing()
    }

    /// One incremental rehash step (time events); true while a resize is in progress.
    pub fn rehash_step(&mut self, buckets: usize) -> bool {
        self.table.rehash_step(buckets)
    }

    /// The key table's shape (DEBUG HTSTATS); `walk_chains` walks every head for the chain
    /// figures.
    pub fn table_stats(&self, walk_chains: bool) -> crate::table::TableStats {
        self.table.stats(walk_chains)
    }

    /// Rebuilds the miss-filter words of up to `heads` head buckets (time events).
    pub fn refresh_filters(&mut self, heads: usize) {
        self.table.refresh_filters(heads);
    }

    /// Bytes of the table and index structures (not the entries).
    pub fn overhead_bytes(&self) -> usize {
        self.table_bytes() + self.expires_bytes()
    }

    /// Bytes of the old table while a resize empties it.
    pub fn rehashing_bytes(&self) -> usize {
        self.table.rehashing_bytes()
    }

    /// Bytes of the hashtable's buckets (head arrays and child buckets).
    pub fn table_bytes(&self) -> usize {
        self.table.memory_bytes()
    }

    /// Bytes of the expire index's chunks.
    pub fn expires_bytes(&self) -> usize {
        self.expires.memory_bytes()
    }

    /// Prefetch the bucket of `hash` (batched lookups).
    pub fn prefetch_bucket(&self, hash: u64) {
        self.table.prefetch_bucket(hash);
    }

    /// Prefetch the entries whose secondary hash matches (after `prefetch_bucket`).
    pub fn prefetch_matches(&self, hash: u64) {
        self.table.prefetch_matches(hash);
    }

    /// Take everything out, leaving this empty, for dropping on another thread.
    pub fn detach(&mut self) -> Detached {
        let expires = std::mem::take(&mut self.expires);
        self.volatile = 0;
        Detached { _entries: self.table.take_all(), _expires: expires }
    }

    /// Check the table's and the index's invariants (tests).
    pub fn check_invariants(&self) {
        self.table.check_invariants();
        assert_eq!(
            self.expires.len(),
            self.table.iter().filter(|e| e.expire_at().is_some()).count(),
            "expire index size"
        );
        for i in 0..self.expires.len() {
            let p = self.expires.at(i).expect("slot below len");
            // SAFETY: as in sample_expired.
            let e = unsafe { KeyEntry::view(p) };
            assert_eq!(e.expire_slot() as usize, i, "entry records its slot");
            let found = self.table.find(hash_key(e.key()), e.key()).expect("indexed key in table");
            assert_eq!(found.addr(), p, "index points at the live entry");
        }
        let mut marked_hashes = 0;
        for e in self.table.iter() {
            let Some(h) = e.agg().and_then(HashObj::from_ref) else { continue };
            assert_eq!(h.volatile_mark(), h.has_volatile(), "mark of {:?}", e.key());
            marked_hashes += usize::from(h.volatile_mark());
        }
        assert_eq!(self.volatile, marked_hashes, "keys with volatile items");
    }
}

/// Where a key stands in a database's storage (see [`Keys::probe`]).
pub enum KeyProbe<'a> {
    Found(FoundKey<'a>),
    Absent(AbsentKey<'a>),
}

/// A present key, located.
pub struct FoundKey<'a> {
    at: Found<'a, KeyEntry>,
    expires: &'a mut ExpireIndex,
    volatile: &'a mut usize,
}

/// An absent key, ready to be inserted.
pub struct AbsentKey<'a> {
    at: Absent<'a, KeyEntry>,
    expires: &'a mut ExpireIndex,
    volatile: &'a mut usize,
}

/// 1 when `e` holds a hash marked as counted (see the module documentation), else 0.
#[inline]
fn marked(e: &KeyEntry) -> usize {
    usize::from(e.agg().and_then(HashObj::from_ref).is_some_and(HashObj::volatile_mark))
}

/// Marks the hash of an entry that comes in by what it holds: 1 when it counts, else 0.
#[inline]
fn mark_entering(e: &mut KeyEntry) -> usize {
    let Some(h) = e.agg_mut().and_then(HashObj::from_mut) else { return 0 };
    let volatile = h.has_volatile();
    h.set_volatile_mark(volatile);
    usize::from(volatile)
}

impl<'a> FoundKey<'a> {
    #[inline]
    pub fn get(&self) -> &KeyEntry {
        self.at.get()
    }

    /// Mutable access for in-place changes that keep the layout (LRU clock, raw flag, an
    /// expire time that fits): [`FoundKey::replace`] and [`FoundKey::set_expire`] do the rest.
    #[inline]
    pub fn get_mut(&mut self) -> &mut KeyEntry {
        self.at.get_mut()
    }

    /// As [`FoundKey::get_mut`], for as long as the storage's borrow lasts.
    #[inline]
    pub fn into_mut(self) -> &'a mut KeyEntry {
        self.at.into_mut()
    }

    /// Marks the hash of the entry again by what it holds now, counting or uncounting it (a
    /// change made in place: see the module documentation). Nothing for other values.
    #[inline]
    pub fn sync_volatile(&mut self) {
        let Some(h) = self.at.get_mut().agg_mut().and_then(HashObj::from_mut) else { return };
        let volatile = h.has_volatile();
        if volatile != h.volatile_mark() {
            h.set_volatile_mark(volatile);
            if volatile {
                *self.volatile += 1;
            } else {
                *self.volatile -= 1;
            }
        }
    }

    /// Puts `e` (built for this key, not in the expire index) in the entry's place.
    pub fn replace(mut self, mut e: KeyEntry) {
        *self.volatile += mark_entering(&mut e);
        let old = self.at.get_mut();
        *self.volatile -= marked(old);
        let old_slot = old.expire_at().map(|_| old.expire_slot());
        match (old_slot, e.expire_at().is_some()) {
            (Some(s), true) => {
                e.set_expire_slot(s);
                self.expires.replace(&e);
            }
            (Some(s), false) => self.expires.remove(s),
            (None, true) => self.expires.insert(&mut e),
            (None, false) => {}
        }
        // The old entry drops here, after the index stopped pointing at it.
        self.at.replace(e);
    }

    /// Removes the entry (it leaves the expire index) and returns it.
    pub fn remove(self) -> KeyEntry {
        let e = self.at.remove();
        if e.expire_at().is_some() {
            self.expires.remove(e.expire_slot());
        }
        *self.volatile -= marked(&e);
        e
    }

    /// Removes the entry and returns it with the gap it leaves (see
    /// `table::Found::remove_leaving_gap`).
    #[inline]
    pub fn remove_leaving_gap(self) -> (KeyEntry, AbsentKey<'a>) {
        let (e, at) = self.at.remove_leaving_gap();
        if e.expire_at().is_some() {
            self.expires.remove(e.expire_slot());
        }
        *self.volatile -= marked(&e);
        (e, AbsentKey { at, expires: self.expires, volatile: self.volatile })
    }

    /// Sets or clears the expire time of the entry (of `key`), rebuilding it when the layout
    /// must change.
    pub fn set_expire(mut self, key: &[u8], at: Option<i64>) {
        let e = self.at.get_mut();
        match (e.expire_at(), at) {
            (None, None) => {}
            (Some(_), Some(t)) if e.expire_fits(t) => e.write_expire(t),
            _ => {
                // The layout changes: rebuild the entry with the same key, value and clock.
                // The value (and a hash's mark) moves to the new entry, which `replace`
                // counts, so it is uncounted from the old one here.
                *self.volatile -= marked(e);
                let n = e.rebuilt(key, at);
                self.replace(n);
            }
        }
    }
}

impl<'a> AbsentKey<'a> {
    /// Inserts `e`, built for the probed key (and indexes its expire time if it has one);
    /// returns it, located.
    #[inline]
    pub fn insert(self, mut e: KeyEntry) -> FoundKey<'a> {
        if e.expire_at().is_some() {
            self.expires.insert(&mut e);
        }
        *self.volatile += mark_entering(&mut e);
        FoundKey { at: self.at.insert(e), expires: self.expires, volatile: self.volatile }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::string::StrRef;

    /// `table_growth` restates the table's growth rule; this holds it to the table: the
    /// insert it predicts starts the resize it predicts, and no other insert starts one.
    #[test]
    fn table_growth_matches_the_table() {
        let mut keys = Keys::default();
        for i in 0..200_000u32 {
            let key = i.to_le_bytes();
            let before = keys.table_growth();
            let heads_before = keys.table.head_buckets();
            keys.insert(hash_key(&key), &key, NewValue::Int(1), None, 0);
            let Some(growth) = before else { continue };
            let started = keys.table.head_buckets() > heads_before;
            assert_eq!(started, growth.inserts_left == 0, "insert {i}: {growth:?}");
            if started {
                let allocated = (keys.table.head_buckets() - heads_before) * BUCKET_BYTES;
                assert_eq!(allocated, growth.bytes, "insert {i}");
            }
        }
    }

    /// A seeded random model test against a HashMap, with TTLs set, changed, cleared and
    /// removed, checking the table and the index after every step.
    #[test]
    fn random_operations_match_a_model() {
        let mut keys = Keys::default();
        let mut model: std::collections::HashMap<Vec<u8>, (i64, Option<i64>)> = Default::default();
        let mut rng = Rng::new(0x9E3779B97F4A7C15);
        for step in 0..20_000 {
            let k = format!("k{}", rng.next_u64() % 500).into_bytes();
            let h = hash_key(&k);
            match rng.next_u64() % 6 {
                0 | 1 => {
                    let v = (rng.next_u64() % 1000) as i64;
                    let exp = match rng.next_u64() % 3 {
                        0 => None,
                        1 => Some(v),
                        _ => Some(1i64 << 50),
                    };
                    keys.insert(h, &k, NewValue::Int(v), exp, 0);
                    model.insert(k, (v, exp));
                }
                2 => {
                    assert_eq!(keys.remove(h, &k).is_some(), model.remove(&k).is_some());
                }
                3 => {
                    let exp = match rng.next_u64() % 3 {
                        0 => None,
                        1 => Some(5),
                        _ => Some(i64::MAX),
                    };
                    let present = keys.set_expire(h, &k, exp);
                    assert_eq!(present, model.contains_key(&k));
                    if let Some(m) = model.get_mut(&k) {
                        m.1 = exp;
                    }
                }
                _ => {
                    let got = keys.get(h, &k).map(|e| (e.value(), e.expire_at()));
                    let want = model.get(&k).map(|(v, e)| (StrRef::Int(*v), *e));
                    assert_eq!(got, want);
                }
            }
            if step % 97 == 0 {
                keys.check_invariants();
            }
        }
        keys.check_invariants();
        let (sampled, expired) = keys.sample_expired(7, 50, 1000);
        assert!(sampled <= 50);
        for k in expired {
            let e = model.get(&k).expect("expired key exists");
            assert!(e.1.is_some_and(|t| t <= 1000));
        }
    }
}
