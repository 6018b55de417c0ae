//! maxmemory enforcement: key eviction by `maxmemory-policy`, and client eviction by
//! `maxmemory-clients`.
//!
//! # When it runs
//!
//! - Before every command while `maxmemory` is set (dispatch calls [`perform_evictions`]). If
//!   the result is [`Outcome::Failed`] (over the limit and nothing may be evicted: noeviction,
//!   or a volatile policy with no TTL keys left), a command flagged DENYOOM is refused with
//!   `-OOM command not allowed when used memory > 'maxmemory'.`; other commands run. A
//!   DENYOOM command that runs gets [`hold_back_table_growth`] first ("Table growth").
//! - In the time events ([`time_event`]): while over the limit, calls repeat for up to a
//!   quarter of a tick (Valkey runs its eviction time proc on every loop turn while a call
//!   ran out of time; the time events are where this server's loop gives time away). Client
//!   eviction runs here too.
//!
//! # One call
//!
//! ```text
//!   publish(); used = used_memory()          the main thread's count is current
//!   used <= maxmemory          -> WithinLimit
//!   noeviction                 -> Failed
//!   loop until freed >= used - maxmemory:
//!       select a victim        (pool or random, below)
//!       delete it, freed += what this thread's count went down by
//!       every 16 keys: out of time (maxmemory-eviction-tenacity) -> Running
//!   nothing left to select     -> Failed (after a short wait for pending lazy frees)
//! ```
//!
//! The time budget per call is Valkey's: 50 µs per tenacity step up to 10 (500 µs, the
//! default), then 15% more per step, unlimited at 100.
//!
//! # Choosing a victim
//!
//! LRU, LFU and TTL policies sample `maxmemory-samples` keys of every database (the whole
//! table for allkeys-*, the expire index for volatile-*) into the [`EvictionPool`] of the 16
//! best candidates seen so far, scored as in Valkey (idle ms; 255 minus the decayed LFU
//! counter; `u64::MAX` minus the expire time), then evict the best pooled candidate that still
//! exists and still qualifies. A candidate whose score dropped since it was pooled (the key
//! was read) is dropped from the pool rather than evicted, so a hot key is not evicted on the
//! strength of an old sample (Valkey only checks that the key still exists). Random policies
//! take a random key of the next non-empty database in turn.
//!
//! Freed bytes are measured, not estimated: the main thread's jemalloc count before and after
//! the delete. With `lazyfree-lazy-eviction` big values are freed on the lazyfree thread, so
//! the loop also re-reads `used_memory` every 16 keys.
//!
//! # Table growth
//!
//! A write grows memory by a few bytes, except the one write that makes a database's table
//! grow: it allocates the new bucket array at once (16 MiB for a table of 2^17 buckets) and
//! keeps the old one until the rehash ends. Under a limit, that takes used memory 16% past
//! it in one step, and the next commands then spend their whole time budget evicting (a
//! stall of most of a second under redis-benchmark). Valkey avoids this by refusing the
//! resize when it would pass maxmemory (`dictExpandAllowed`) and letting the table fill up
//! instead. This hashtable has no such hook, so eviction does it from the other side: when a
//! table is one insert away from growing and the growth would not fit under the limit, a
//! key of that database is evicted first (by the same policy), so the table stays at its
//! grow threshold and used memory under the limit. The cost is capacity: the database holds
//! at most the threshold's keys (about 96 MiB of a 100 MiB budget in the README figure) where
//! Valkey would fill its table further. Only evicting policies do this; noeviction lets the
//! table grow and refuses writes once over. A command that adds many keys at once can still
//! cross the threshold.
//!
//! # State
//!
//! Eviction runs only on the main thread; its state between calls (the pool, the random
//! policies' next database, the exceeded-time and client-eviction statistics) is kept in a
//! main-thread `thread_local`, [`Evictor`].

mod clients;
mod policy;
mod pool;

use std::cell::RefCell;
use std::time::{Duration, Instant};

use tracing::warn;

pub use clients::{client_memory_bytes, clients_memory_bytes, evict_clients};
pub use policy::{Order, Rule};
pub use pool::{EvictionPool, POOL_SIZE};

use crate::keyspace::db::{Db, ObjView};
use crate::keyspace::entry::KeyEntry;
use crate::keyspace::lazyfree::{self, LAZYFREE_THRESHOLD};
use crate::memory::{publish, thread_allocated, used_memory};
use crate::server::latency::{Event, LatencyMonitor, Timer};
use crate::server::state::ServerState;
use crate::util::rng::Rng;

/// What a call concluded (Valkey's `EVICT_OK`, `EVICT_RUNNING`, `EVICT_FAIL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// At or under `maxmemory` (or no limit).
    WithinLimit,
    /// Still over, out of time for this call; eviction goes on at the next call.
    Running,
    /// Over, and nothing may be evicted: DENYOOM commands are refused.
    Failed,
}

/// Keys evicted between two checks of the clock (and of `used_memory` under lazy eviction).
const KEYS_PER_CHECK: u64 = 16;

/// The time one call may spend, from `maxmemory-eviction-tenacity` (0..=100); None: no limit.
pub fn time_limit(tenacity: u32) -> Option<Duration> {
    match tenacity {
        0..=10 => Some(Duration::from_micros(50 * u64::from(tenacity))),
        11..=99 => {
            let us = 500.0 * 1.15f64.powi(tenacity as i32 - 10);
            Some(Duration::from_micros(us as u64))
        }
        _ => None,
    }
}

/// Where evicted values are freed (`lazyfree-lazy-eviction`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FreeOn {
    /// Here, before the next eviction.
    MainThread,
    /// Big values on the lazyfree thread (small ones still here).
    LazyfreeThread,
}

impl FreeOn {
    fn of(lazyfree_lazy_eviction: bool) -> FreeOn {
        if lazyfree_lazy_eviction {
            FreeOn::LazyfreeThread
        } else {
            FreeOn::MainThread
        }
    }
}

/// What one call is asked to do.
#[derive(Clone, Copy, Debug)]
struct Budget {
    bytes_to_free: usize,
    samples: usize,
    free_on: FreeOn,
    time_limit: Option<Duration>,
    /// `maxmemory`.
    limit_bytes: u64,
    /// `latency-monitor-threshold` (0: each deletion is not timed).
    latency_threshold_ms: u64,
}

/// How the eviction loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Progress {
    Freed,
    OutOfTime,
    NothingLeft,
}

/// Eviction's state between calls. See the module documentation, "State".
#[derive(Debug)]
pub struct Evictor {
    pool: EvictionPool,
    /// The rule the pooled scores were computed under; another rule empties the pool.
    pool_rule: Option<Rule>,
    /// The key selected for eviction (a reused buffer).
    victim: Vec<u8>,
    /// The random policies' last database.
    next_db: usize,
    /// Since when evictions have not kept used memory within the limit (ms), if they have not.
    exceeded_since_ms: Option<i64>,
    /// Milliseconds spent over the limit in earlier, finished episodes.
    exceeded_total_ms: u64,
    /// Clients disconnected by maxmemory-clients.
    evicted_clients: u64,
}

thread_local! {
    static EVICTOR: RefCell<Evictor> = const { RefCell::new(Evictor::new()) };
}

/// The eviction figures INFO stats shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EvictionStats {
    pub evicted_clients: u64,
    /// `total_eviction_exceeded_time` (ms, the current episode included).
    pub exceeded_total_ms: u64,
    /// `current_eviction_exceeded_time` (ms, 0 when within the limit).
    pub exceeded_current_ms: u64,
}

/// The main thread's eviction statistics at `now_ms`.
pub fn stats(now_ms: i64) -> EvictionStats {
    EVICTOR.with_borrow(|ev| {
        let current = ev.exceeded_since_ms.map_or(0, |since| (now_ms - since).max(0) as u64);
        EvictionStats {
            evicted_clients: ev.evicted_clients,
            exceeded_total_ms: ev.exceeded_total_ms + current,
            exceeded_current_ms: current,
        }
    })
}

/// CONFIG RESETSTAT: the client-eviction count and the exceeded time start again from zero
/// (Valkey resets the current episode too). Evicted keys are counted per database.
pub fn reset_stats() {
    EVICTOR.with_borrow_mut(|ev| {
        ev.evicted_clients = 0;
        ev.exceeded_total_ms = 0;
        ev.exceeded_since_ms = None;
    });
}

/// Evict keys until used memory is within `maxmemory`, within the call's time budget.
/// Called before every command while `maxmemory` is set, and from the time events.
pub fn perform_evictions(srv: &mut ServerState, now_ms: i64) -> Outcome {
    let limit_bytes = srv.config.maxmemory_bytes;
    // A replica keeps its primary's dataset: it evicts nothing of its own, and refuses
    // nothing for memory, unless told to (replica-ignore-maxmemory, as Valkey).
    if limit_bytes == 0 || (srv.is_replica && srv.config.replication.replica_ignore_maxmemory) {
        return Outcome::WithinLimit;
    }
    publish();
    let used = used_memory() as u64;
    let outcome = match Rule::of(srv.config.maxmemory_policy, srv.config.lfu_decay_time_mins) {
        _ if used <= limit_bytes => Outcome::WithinLimit,
        None => Outcome::Failed,
        Some(rule) => {
            let budget = Budget {
                bytes_to_free: (used - limit_bytes) as usize,
                samples: srv.config.maxmemory_samples.max(1) as usize,
                free_on: FreeOn::of(srv.config.lazyfree_lazy_eviction),
                time_limit: time_limit(srv.config.maxmemory_eviction_tenacity),
                limit_bytes,
                latency_threshold_ms: srv.config.latency_monitor_threshold_ms,
            };
            let seed = srv.random();
            let threshold_ms = budget.latency_threshold_ms;
            let timer = Timer::start(threshold_ms);
            let (dbs, latency) = (&mut srv.dbs, &mut srv.latency);
            let progress =
                EVICTOR.with_borrow_mut(|ev| ev.evict(dbs, latency, rule, &budget, seed, now_ms));
            publish();
            let outcome = match progress {
                Progress::Freed => Outcome::WithinLimit,
                Progress::OutOfTime => Outcome::Running,
                Progress::NothingLeft => {
                    let wait = Timer::start(threshold_ms);
                    let outcome = wait_for_lazy_frees(limit_bytes, budget.time_limit);
                    let wait_ms = wait.elapsed_ms();
                    srv.latency.add_if_needed(threshold_ms, Event::EvictionLazyfree, wait_ms);
                    outcome
                }
            };
            // As Valkey's, the cycle's figure includes the wait for the lazyfree thread.
            srv.latency.add_if_needed(threshold_ms, Event::EvictionCycle, timer.elapsed_ms());
            outcome
        }
    };
    EVICTOR.with_borrow_mut(|ev| ev.record(outcome, now_ms));
    outcome
}

/// Before a command that may add keys (DENYOOM), once [`perform_evictions`] let it run:
/// evict a key from every database whose table would otherwise grow past `maxmemory` at its
/// next insert (module documentation, "Table growth").
pub fn hold_back_table_growth(srv: &mut ServerState, now_ms: i64) {
    let limit_bytes = srv.config.maxmemory_bytes;
    let Some(rule) = Rule::of(srv.config.maxmemory_policy, srv.config.lfu_decay_time_mins) else {
        return;
    };
    let at_threshold = |db: &Db| db.table_growth().is_some_and(|g| g.inserts_left == 0);
    if limit_bytes == 0 || !srv.dbs.iter().any(at_threshold) {
        return;
    }
    let budget = Budget {
        bytes_to_free: 0,
        samples: srv.config.maxmemory_samples.max(1) as usize,
        free_on: FreeOn::of(srv.config.lazyfree_lazy_eviction),
        time_limit: None,
        limit_bytes,
        latency_threshold_ms: srv.config.latency_monitor_threshold_ms,
    };
    let seed = srv.random();
    let (dbs, latency) = (&mut srv.dbs, &mut srv.latency);
    EVICTOR.with_borrow_mut(|ev| ev.hold_back_growth(dbs, latency, rule, &budget, seed, now_ms));
}

/// Nothing is left to evict, but the lazyfree thread may still be freeing what earlier
/// evictions handed it: wait for it a little (at most one call's time budget).
fn wait_for_lazy_frees(limit_bytes: u64, time_limit: Option<Duration>) -> Outcome {
    let started = Instant::now();
    let step = time_limit.map_or(Duration::from_millis(1), |t| t.min(Duration::from_millis(1)));
    while lazyfree::pending_objects() > 0 && time_limit.is_none_or(|t| started.elapsed() < t) {
        if used_memory() as u64 <= limit_bytes {
            return Outcome::WithinLimit;
        }
        std::thread::sleep(step);
    }
    Outcome::Failed
}

/// The time events' share: client eviction, then key eviction while over the limit, for up
/// to a quarter of a tick (all it takes when tenacity is 100).
pub fn time_event(srv: &mut ServerState, now_ms: i64) {
    let evicted = evict_clients(srv);
    EVICTOR.with_borrow_mut(|ev| ev.evicted_clients += evicted);
    if srv.config.maxmemory_bytes == 0 {
        EVICTOR.with_borrow_mut(|ev| ev.record(Outcome::WithinLimit, now_ms));
        return;
    }
    let unlimited = time_limit(srv.config.maxmemory_eviction_tenacity).is_none();
    let share = Duration::from_micros(250_000 / u64::from(srv.config.hz.max(1)));
    let started = Instant::now();
    while perform_evictions(srv, now_ms) == Outcome::Running {
        if !unlimited && started.elapsed() >= share {
            break;
        }
    }
}

/// CONFIG SET maxmemory: warn when the new limit is below what is in use (as Valkey does);
/// the next command and the time events evict down to it.
pub fn maxmemory_changed(srv: &ServerState) {
    let limit_bytes = srv.config.maxmemory_bytes;
    if limit_bytes == 0 {
        return;
    }
    publish();
    let used = used_memory();
    if limit_bytes < used as u64 {
        warn!(
            "WARNING: the new maxmemory value set via CONFIG SET ({limit_bytes}) is smaller \
             than the current memory usage ({used}). This will result in key eviction and/or \
             the inability to accept new write commands depending on the maxmemory-policy."
        );
    }
}

impl Evictor {
    pub const fn new() -> Evictor {
        Evictor {
            pool: EvictionPool::new(),
            pool_rule: None,
            victim: Vec::new(),
            next_db: 0,
            exceeded_since_ms: None,
            exceeded_total_ms: 0,
            evicted_clients: 0,
        }
    }

    /// Track the time spent over the limit (INFO `*_eviction_exceeded_time`).
    fn record(&mut self, outcome: Outcome, now_ms: i64) {
        match outcome {
            Outcome::Running | Outcome::Failed => {
                self.exceeded_since_ms.get_or_insert(now_ms);
            }
            Outcome::WithinLimit => {
                if let Some(since) = self.exceeded_since_ms.take() {
                    self.exceeded_total_ms += (now_ms - since).max(0) as u64;
                }
            }
        }
    }

    /// The eviction loop: evict victims until `budget.bytes_to_free` bytes were freed, time
    /// ran out, or nothing is left to evict.
    fn evict(
        &mut self,
        dbs: &mut [Db],
        latency: &mut LatencyMonitor,
        rule: Rule,
        budget: &Budget,
        seed: u64,
        now_ms: i64,
    ) -> Progress {
        if self.pool_rule != Some(rule) {
            self.pool.clear();
            self.pool_rule = Some(rule);
        }
        let started = Instant::now();
        let mut rng = Rng::new(seed);
        let mut freed = 0usize;
        let mut evicted = 0u64;
        while freed < budget.bytes_to_free {
            let Some(db) = self.select(dbs, rule, budget.samples, &mut rng, now_ms, None) else {
                return Progress::NothingLeft;
            };
            let before = thread_allocated();
            self.delete_victim(&mut dbs[db], latency, budget);
            freed += before.wrapping_sub(thread_allocated()).max(0) as usize;
            evicted += 1;
            if evicted.is_multiple_of(KEYS_PER_CHECK) {
                if budget.free_on == FreeOn::LazyfreeThread {
                    publish();
                    if used_memory() as u64 <= budget.limit_bytes {
                        break;
                    }
                }
                if budget.time_limit.is_some_and(|t| started.elapsed() > t) {
                    return Progress::OutOfTime;
                }
            }
        }
        Progress::Freed
    }

    /// Deletes the selected victim from `db` and frees it (or hands it to the lazyfree
    /// thread), timed as Valkey's `eviction-del` while the latency monitor is on. Whether
    /// the key existed.
    fn delete_victim(&self, db: &mut Db, latency: &mut LatencyMonitor, budget: &Budget) -> bool {
        let threshold_ms = budget.latency_threshold_ms;
        let timer = Timer::start(threshold_ms);
        let Some(entry) = db.evict(&self.victim) else { return false };
        free_evicted(entry, budget.free_on);
        latency.add_if_needed(threshold_ms, Event::EvictionDel, timer.elapsed_ms());
        true
    }

    /// Module documentation, "Table growth": evict a key from every database whose table
    /// would grow at its next insert past the limit. Returns how many keys went.
    fn hold_back_growth(
        &mut self,
        dbs: &mut [Db],
        latency: &mut LatencyMonitor,
        rule: Rule,
        budget: &Budget,
        seed: u64,
        now_ms: i64,
    ) -> usize {
        let mut rng = Rng::new(seed);
        let mut evicted = 0;
        for i in 0..dbs.len() {
            let Some(growth) = dbs[i].table_growth() else { continue };
            if growth.inserts_left > 0 {
                continue;
            }
            publish();
            if used_memory() as u64 + growth.bytes as u64 <= budget.limit_bytes {
                continue;
            }
            if self.pool_rule != Some(rule) {
                self.pool.clear();
                self.pool_rule = Some(rule);
            }
            let Some(db) = self.select(dbs, rule, budget.samples, &mut rng, now_ms, Some(i)) else {
                continue;
            };
            if self.delete_victim(&mut dbs[db], latency, budget) {
                evicted += 1;
            }
        }
        if evicted > 0 {
            publish();
        }
        evicted
    }

    /// Choose the next victim (from database `only` when given): its key is left in
    /// `self.victim`, its database is returned. None when no database (in scope) holds a key
    /// the rule may evict.
    fn select(
        &mut self,
        dbs: &[Db],
        rule: Rule,
        samples: usize,
        rng: &mut Rng,
        now_ms: i64,
        only: Option<usize>,
    ) -> Option<usize> {
        if rule.order == Order::Random {
            return self.select_random(dbs, rule, rng, only);
        }
        loop {
            let mut candidates = 0;
            for (i, db) in dbs.iter().enumerate() {
                if only.is_some_and(|only| only != i) {
                    continue;
                }
                let n = db.count(rule.from);
                if n == 0 {
                    continue;
                }
                candidates += n;
                let pool = &mut self.pool;
                db.eviction_sample(rule.from, rng.next_u64(), samples, |e| {
                    pool.offer(rule.score(e, now_ms), i, e.key());
                });
            }
            if candidates == 0 {
                return None;
            }
            // Best first. Ghosts (deleted, or no longer qualifying) are dropped, and so are
            // candidates that became less evictable since they were pooled (read since): the
            // pool's order no longer holds for them, and a sample finds them again if they
            // are still worth evicting. When the pool runs dry this way, sample again: the
            // samples just taken are scored as of now, so the next round ends.
            while let Some(best) = self.pool.pop_best_in(only, &mut self.victim) {
                let Some(e) = dbs.get(best.db).and_then(|db| db.stored(&self.victim)) else {
                    continue;
                };
                if !rule.admits(e) {
                    continue;
                }
                if rule.score(e, now_ms) < best.score {
                    continue;
                }
                return Some(best.db);
            }
        }
    }

    /// allkeys-random / volatile-random: a random key of the next database that has one (or
    /// of database `only`).
    fn select_random(
        &mut self,
        dbs: &[Db],
        rule: Rule,
        rng: &mut Rng,
        only: Option<usize>,
    ) -> Option<usize> {
        let mut pick = |i: usize, victim: &mut Vec<u8>| {
            let found = dbs[i].eviction_random(rule.from, rng.next_u64(), |e| {
                victim.clear();
                victim.extend_from_slice(e.key());
            });
            found.map(|()| i)
        };
        if let Some(i) = only {
            return pick(i, &mut self.victim);
        }
        for _ in 0..dbs.len() {
            self.next_db = (self.next_db + 1) % dbs.len();
            if let Some(i) = pick(self.next_db, &mut self.victim) {
                return Some(i);
            }
        }
        None
    }
}

impl Default for Evictor {
    fn default() -> Self {
        Evictor::new()
    }
}

/// Free an evicted entry: here, or on the lazyfree thread when lazy eviction is on and the
/// value is worth it.
fn free_evicted(entry: KeyEntry, free_on: FreeOn) {
    if free_on == FreeOn::LazyfreeThread && entry.free_effort() > LAZYFREE_THRESHOLD {
        lazyfree::free_async(entry, 1);
    } else {
        drop(entry);
    }
}

#[cfg(test)]
mod tests;
