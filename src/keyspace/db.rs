//! One logical database: keys to values, their expire times, lazy expiry on access and the
//! sampling that active expiry and RANDOMKEY need.
//!
//! This is the API the command code sees; the storage behind it is private so that it can be
//! swapped (the cache-line hashtable of `keyspace::hashtable`) without touching any command.
//! Time is passed in (`now_ms`), never read here, so expiry is deterministic under test.

use crate::keyspace::store::Store;
pub use crate::keyspace::store::{Obj, Value, ValueRef};
use crate::types::string::StrValue;

/// What to do with an existing TTL when a key is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ttl {
    /// Drop any TTL (plain SET).
    Clear,
    /// Keep the TTL the key had (KEEPTTL, APPEND, INCR, SETRANGE...).
    Keep,
    /// Expire at this unix time in milliseconds.
    At(i64),
}

/// Counters a database keeps for INFO.
#[derive(Default, Debug, Clone, Copy)]
pub struct DbStats {
    pub expired_keys: u64,
    pub expired_stale_samples: u64,
    pub expired_samples: u64,
    pub keyspace_hits: u64,
    pub keyspace_misses: u64,
}

#[derive(Default)]
pub struct Db {
    store: Store,
    pub stats: DbStats,
}

/// The LRU clock: seconds resolution, 24 bits, as Valkey's `LRU_CLOCK`.
pub fn lru_clock(now_ms: i64) -> u32 {
    ((now_ms / 1000) as u64 & ((1 << 24) - 1)) as u32
}

impl Db {
    pub fn new() -> Db {
        Db::default()
    }

    /// Number of keys, including those logically expired but not yet reclaimed.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    pub fn is_empty(&self) -> bool {
        self.store.len() == 0
    }

    /// Number of keys with a TTL.
    pub fn expires_len(&self) -> usize {
        self.store.expires_len()
    }

    /// Delete `key` if it has expired at `now_ms`; true when it was deleted.
    fn expire_if_needed(&mut self, key: &[u8], now_ms: i64) -> bool {
        match self.store.expire_at(key) {
            Some(at) if at <= now_ms => {
                self.store.remove(key);
                self.stats.expired_keys += 1;
                true
            }
            _ => false,
        }
    }

    /// Look a key up for reading: counts a hit or miss and updates its access clock.
    pub fn get(&mut self, key: &[u8], now_ms: i64) -> Option<ValueRef<'_>> {
        self.expire_if_needed(key, now_ms);
        match self.store.get_mut(key) {
            Some(obj) => {
                obj.lru = lru_clock(now_ms);
                self.stats.keyspace_hits += 1;
                Some(obj.value.as_ref())
            }
            None => {
                self.stats.keyspace_misses += 1;
                None
            }
        }
    }

    /// Look a key up without counting a hit or touching its access clock (writes, TYPE...).
    pub fn peek(&mut self, key: &[u8], now_ms: i64) -> Option<ValueRef<'_>> {
        self.expire_if_needed(key, now_ms);
        self.store.get_mut(key).map(|o| o.value.as_ref())
    }

    /// The stored object, for OBJECT and DEBUG OBJECT; does not touch the access clock.
    pub fn object(&mut self, key: &[u8], now_ms: i64) -> Option<&Obj> {
        self.expire_if_needed(key, now_ms);
        self.store.get_mut(key).map(|o| &*o)
    }

    /// Mutable access to a stored value (aggregate types modify in place).
    pub fn get_mut(&mut self, key: &[u8], now_ms: i64) -> Option<&mut Value> {
        self.expire_if_needed(key, now_ms);
        self.store.get_mut(key).map(|o| {
            o.lru = lru_clock(now_ms);
            &mut o.value
        })
    }

    pub fn contains(&mut self, key: &[u8], now_ms: i64) -> bool {
        self.expire_if_needed(key, now_ms);
        self.store.get_mut(key).is_some()
    }

    /// Write `value` at `key` with the given TTL rule.
    pub fn set(&mut self, key: &[u8], value: Value, ttl: Ttl, now_ms: i64) {
        self.expire_if_needed(key, now_ms);
        let expire_at_ms = match ttl {
            Ttl::Clear => None,
            Ttl::Keep => self.store.expire_at(key),
            Ttl::At(at) => Some(at),
        };
        self.store.insert(key, Obj { value, expire_at_ms, lru: lru_clock(now_ms) });
    }

    /// Write a string value.
    pub fn set_str(&mut self, key: &[u8], value: StrValue, ttl: Ttl, now_ms: i64) {
        self.set(key, Value::Str(value), ttl, now_ms);
    }

    /// Remove a key; true when it existed (and had not expired).
    pub fn remove(&mut self, key: &[u8], now_ms: i64) -> bool {
        if self.expire_if_needed(key, now_ms) {
            return false;
        }
        self.store.remove(key).is_some()
    }

    /// Remove a key and hand its object over (RENAME, MOVE, GETDEL).
    pub fn take(&mut self, key: &[u8], now_ms: i64) -> Option<Obj> {
        if self.expire_if_needed(key, now_ms) {
            return None;
        }
        self.store.remove(key)
    }

    /// Insert a whole object as it is (RENAME, MOVE, COPY).
    pub fn put(&mut self, key: &[u8], obj: Obj) {
        self.store.insert(key, obj);
    }

    /// The key's expire time, if it exists and has one.
    pub fn expire_at(&mut self, key: &[u8], now_ms: i64) -> Option<i64> {
        self.expire_if_needed(key, now_ms);
        self.store.expire_at(key)
    }

    /// Set or clear the expire time of an existing key; false when the key does not exist.
    pub fn set_expire(&mut self, key: &[u8], at: Option<i64>, now_ms: i64) -> bool {
        self.expire_if_needed(key, now_ms);
        self.store.set_expire(key, at)
    }

    /// Drop every key; returns how many there were.
    pub fn clear(&mut self) -> usize {
        let n = self.store.len();
        self.store = Store::default();
        n
    }

    /// Take the whole contents out, for freeing on another thread (lazyfree).
    pub fn take_all(&mut self) -> Store {
        std::mem::take(&mut self.store)
    }

    /// One step of a SCAN: calls `f` for some keys, returns the next cursor (0 when done).
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&[u8], &Obj)) -> u64 {
        self.store.scan(cursor, count, &mut f)
    }

    /// Every key, in storage order (KEYS).
    pub fn for_each(&self, mut f: impl FnMut(&[u8], &Obj)) {
        self.store.for_each(&mut f)
    }

    /// A random key that has not expired, or None when the db is empty or (after some
    /// tries) only expired keys were found, as Valkey does.
    pub fn random_key(&mut self, seed: u64, now_ms: i64) -> Option<Vec<u8>> {
        let mut seed = seed;
        for _ in 0..100 {
            let (key, expired) = {
                let (k, o) = self.store.random(seed)?;
                (k.to_vec(), o.expire_at_ms.is_some_and(|at| at <= now_ms))
            };
            if !expired {
                return Some(key);
            }
            self.store.remove(&key);
            self.stats.expired_keys += 1;
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        }
        None
    }

    /// Sample up to `n` keys with a TTL and delete those expired at `now_ms`.
    /// Returns (sampled, expired).
    pub fn expire_sample(&mut self, seed: u64, n: usize, now_ms: i64) -> (usize, usize) {
        let victims = self.store.sample_expired(seed, n, now_ms);
        let (sampled, keys) = victims;
        let expired = keys.len();
        for k in keys {
            self.store.remove(&k);
        }
        self.stats.expired_keys += expired as u64;
        (sampled, expired)
    }

    /// Average TTL in ms of the keys with one (for INFO keyspace), estimated on a sample.
    pub fn avg_ttl_ms(&self, now_ms: i64) -> i64 {
        self.store.avg_ttl_ms(now_ms)
    }
}
