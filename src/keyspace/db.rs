//! One logical database: keys to values, their expire times, lazy expiry on access and the
//! sampling that active expiry and RANDOMKEY need.
//!
//! This is the API the command code sees; the storage behind it is private so that it can be
//! swapped (the cache-line hashtable of `keyspace::hashtable`) without touching any command.
//! Time is passed in (`now_ms`), never read here, so expiry is deterministic under test.

use crate::keyspace::store::{is_expired, Store};
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

/// How a read updates an object's access clock (`Obj::lru`). It follows maxmemory-policy:
/// the server sets it on every db when the policy (or an lfu-* setting) changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AccessClock {
    /// The LRU clock of the last access (every policy but the LFU ones).
    #[default]
    Lru,
    /// Valkey's LFU: a logarithmic access counter that decays with time.
    Lfu { log_factor: u32, decay_time_mins: u32 },
}

#[derive(Default)]
pub struct Db {
    store: Store,
    pub stats: DbStats,
    access: AccessClock,
    /// State of the generator behind the LFU counter's probabilistic increment.
    lfu_rng: u64,
}

/// Largest value of the 24-bit LRU clock.
const LRU_CLOCK_MAX: u32 = (1 << 24) - 1;
/// The LRU clock ticks once a second.
const LRU_CLOCK_RESOLUTION_MS: i64 = 1000;
/// The counter a new object starts with under LFU, so it is not evicted at once.
pub const LFU_INIT_VAL: u32 = 5;
/// Largest LFU counter (8 bits).
const LFU_COUNTER_MAX: u32 = 255;

/// The LRU clock: seconds resolution, 24 bits, as Valkey's `LRU_CLOCK`.
pub fn lru_clock(now_ms: i64) -> u32 {
    ((now_ms / LRU_CLOCK_RESOLUTION_MS) as u64 & LRU_CLOCK_MAX as u64) as u32
}

/// Milliseconds since the last access recorded in an LRU clock value (wrapping as Valkey's
/// `estimateObjectIdleTime`; resolution one second).
pub fn idle_ms(lru: u32, now_ms: i64) -> i64 {
    let now = lru_clock(now_ms);
    let ticks = if now >= lru { now - lru } else { now + (LRU_CLOCK_MAX - lru) };
    ticks as i64 * LRU_CLOCK_RESOLUTION_MS
}

/// Minutes since the epoch, 16 bits: the time part of an LFU clock value.
fn lfu_minutes(now_ms: i64) -> u32 {
    ((now_ms / 60_000) as u64 & 0xffff) as u32
}

/// The LFU counter of a clock value after decay: one step per `decay_time_mins` elapsed
/// since its time part (0 disables decay). This is what OBJECT FREQ reports.
pub fn lfu_decayed(lru: u32, now_ms: i64, decay_time_mins: u32) -> u32 {
    let last = lru >> 8;
    let counter = lru & 0xff;
    let now = lfu_minutes(now_ms);
    let elapsed = if now >= last { now - last } else { 0xffff - last + now };
    let periods = elapsed.checked_div(decay_time_mins).unwrap_or(0);
    counter.saturating_sub(periods)
}

impl Db {
    pub fn new() -> Db {
        Db::default()
    }

    /// Choose how reads update access clocks (from maxmemory-policy, lfu-log-factor and
    /// lfu-decay-time). Objects keep their clock bits; as in Valkey, they read oddly for a
    /// while after a switch between LRU and LFU.
    pub fn set_access_clock(&mut self, access: AccessClock) {
        self.access = access;
    }

    pub fn access_clock(&self) -> AccessClock {
        self.access
    }

    /// The clock value of an object created now.
    fn new_clock(&self, now_ms: i64) -> u32 {
        match self.access {
            AccessClock::Lru => lru_clock(now_ms),
            AccessClock::Lfu { .. } => (lfu_minutes(now_ms) << 8) | LFU_INIT_VAL,
        }
    }

    /// The random draw the next access needs (only LFU's increment uses one).
    fn access_draw(&mut self) -> f64 {
        match self.access {
            AccessClock::Lru => 0.0,
            AccessClock::Lfu { .. } => self.lfu_random(),
        }
    }

    /// A uniform number in [0, 1) (splitmix64), for the LFU counter's increment.
    fn lfu_random(&mut self) -> f64 {
        self.lfu_rng = self.lfu_rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.lfu_rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
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
            Some(at) if is_expired(at, now_ms) => {
                self.store.remove(key);
                self.stats.expired_keys += 1;
                true
            }
            _ => false,
        }
    }

    /// Look a key up for reading: counts a hit or miss and updates its access clock.
    pub fn get(&mut self, key: &[u8], now_ms: i64) -> Option<ValueRef<'_>> {
        self.read_obj(key, now_ms).map(|o| o.value.as_ref())
    }

    /// Look an object up for reading: counts a hit or miss and records the access (TOUCH,
    /// the source of COPY).
    pub fn read_obj(&mut self, key: &[u8], now_ms: i64) -> Option<&Obj> {
        self.expire_if_needed(key, now_ms);
        let (access, draw) = (self.access, self.access_draw());
        match self.store.get_mut(key) {
            Some(obj) => {
                obj.lru = accessed_clock(access, obj.lru, now_ms, draw);
                self.stats.keyspace_hits += 1;
                Some(&*obj)
            }
            None => {
                self.stats.keyspace_misses += 1;
                None
            }
        }
    }

    /// Look an object up for reading its metadata: counts a hit or miss but leaves its
    /// access clock alone (EXISTS, TYPE, TTL, OBJECT, as Valkey's `LOOKUP_NOTOUCH`).
    pub fn read_obj_notouch(&mut self, key: &[u8], now_ms: i64) -> Option<&Obj> {
        self.expire_if_needed(key, now_ms);
        match self.store.get_mut(key) {
            Some(obj) => {
                self.stats.keyspace_hits += 1;
                Some(&*obj)
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
        let (access, draw) = (self.access, self.access_draw());
        self.store.get_mut(key).map(|o| {
            o.lru = accessed_clock(access, o.lru, now_ms, draw);
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
        let lru = self.new_clock(now_ms);
        self.store.insert(key, Obj { value, expire_at_ms, lru });
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

    /// One step of a SCAN: calls `f` for about `count` keys, returns the next cursor (0 when
    /// done). Every key present for the whole scan is visited at least once; keys added or
    /// removed meanwhile may or may not be; a key may be visited twice. Expired keys are
    /// visited too (the caller filters them, see `is_live`).
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&[u8], &Obj)) -> u64 {
        self.store.scan(cursor, count, &mut f)
    }

    /// Whether an object visited by `scan` or `for_each` is alive (not expired) at `now_ms`.
    pub fn is_live(obj: &Obj, now_ms: i64) -> bool {
        !obj.expire_at_ms.is_some_and(|at| is_expired(at, now_ms))
    }

    /// Swap the contents (keys, values, expire times) of two databases (SWAPDB). Counters
    /// and settings stay with their database.
    pub fn swap_contents(a: &mut Db, b: &mut Db) {
        std::mem::swap(&mut a.store, &mut b.store);
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
                (k.to_vec(), o.expire_at_ms.is_some_and(|at| is_expired(at, now_ms)))
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

/// An object's access clock after an access at `now_ms` (Valkey's LRU stamp, or
/// `updateLFU`: decay, then a probabilistic increment using `draw`).
fn accessed_clock(access: AccessClock, lru: u32, now_ms: i64, draw: f64) -> u32 {
    match access {
        AccessClock::Lru => lru_clock(now_ms),
        AccessClock::Lfu { log_factor, decay_time_mins } => {
            let counter = lfu_decayed(lru, now_ms, decay_time_mins);
            (lfu_minutes(now_ms) << 8) | lfu_log_incr(counter, log_factor, draw)
        }
    }
}

/// Valkey's `LFULogIncr`: the counter grows with probability 1 / ((counter - init) *
/// log_factor + 1), so it tracks the logarithm of the access count. `r` is uniform in [0, 1).
fn lfu_log_incr(counter: u32, log_factor: u32, r: f64) -> u32 {
    if counter >= LFU_COUNTER_MAX {
        return LFU_COUNTER_MAX;
    }
    let base = counter.saturating_sub(LFU_INIT_VAL) as f64;
    let p = 1.0 / (base * log_factor as f64 + 1.0);
    if r < p {
        counter + 1
    } else {
        counter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_700_000_000_000;

    #[test]
    fn expiry_is_lazy_and_exclusive_of_the_expire_millisecond() {
        let mut db = Db::new();
        db.set_str(b"k", StrValue::Int(1), Ttl::At(T0 + 10), T0);
        assert!(db.contains(b"k", T0 + 10));
        assert!(!db.contains(b"k", T0 + 11));
        assert_eq!(db.len(), 0);
        assert_eq!(db.stats.expired_keys, 1);
    }

    #[test]
    fn scan_visits_every_key_despite_removals() {
        let mut db = Db::new();
        for i in 0..100 {
            db.set_str(format!("k{i}").as_bytes(), StrValue::Int(i), Ttl::Clear, T0);
        }
        let mut seen = std::collections::HashSet::new();
        let mut cursor = 0;
        let mut step = 0;
        loop {
            let mut batch = Vec::new();
            cursor = db.scan(cursor, 7, |k, _| batch.push(k.to_vec()));
            // Every other step, delete a key the scan has already returned.
            for k in &batch {
                seen.insert(k.clone());
            }
            if step % 2 == 0 {
                if let Some(k) = batch.first() {
                    db.remove(k, T0);
                }
            }
            step += 1;
            if cursor == 0 {
                break;
            }
        }
        assert_eq!(seen.len(), 100);
    }

    #[test]
    fn read_counts_hits_and_touch_follows_the_clock() {
        let mut db = Db::new();
        db.set_str(b"k", StrValue::Int(1), Ttl::Clear, T0);
        assert!(db.read_obj_notouch(b"k", T0 + 5000).is_some());
        assert!(db.read_obj_notouch(b"x", T0).is_none());
        assert_eq!((db.stats.keyspace_hits, db.stats.keyspace_misses), (1, 1));
        assert_eq!(idle_ms(db.object(b"k", T0).unwrap().lru, T0 + 5000), 5000);
        db.read_obj(b"k", T0 + 5000);
        assert_eq!(idle_ms(db.object(b"k", T0).unwrap().lru, T0 + 5000), 0);
    }

    #[test]
    fn lfu_counter_starts_at_init_grows_and_decays() {
        let mut db = Db::new();
        db.set_access_clock(AccessClock::Lfu { log_factor: 10, decay_time_mins: 1 });
        db.set_str(b"k", StrValue::Int(1), Ttl::Clear, T0);
        let lru = db.object(b"k", T0).unwrap().lru;
        assert_eq!(lfu_decayed(lru, T0, 1), LFU_INIT_VAL);
        // From the initial value the first increment is certain.
        db.read_obj(b"k", T0);
        let lru = db.object(b"k", T0).unwrap().lru;
        assert_eq!(lfu_decayed(lru, T0, 1), LFU_INIT_VAL + 1);
        for _ in 0..1000 {
            db.read_obj(b"k", T0);
        }
        let lru = db.object(b"k", T0).unwrap().lru;
        let c = lfu_decayed(lru, T0, 1);
        assert!(c > LFU_INIT_VAL + 1 && c < 40, "{c}");
        // Three minutes later, with one step per minute, three steps were lost.
        assert_eq!(lfu_decayed(lru, T0 + 3 * 60_000, 1), c - 3);
        assert_eq!(lfu_decayed(lru, T0 + 3 * 60_000, 0), c);
        assert_eq!(lfu_log_incr(255, 10, 0.0), 255);
    }

    #[test]
    fn idle_time_wraps_with_the_clock() {
        assert_eq!(idle_ms(LRU_CLOCK_MAX - 1, 0), 1000);
    }
}
