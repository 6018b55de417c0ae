//! Time events, run `hz` times a second: active expiry, idle-client timeouts, eviction
//! (maxmemory, maxmemory-clients), the tracking table's limit, the instantaneous metrics,
//! the peak-memory mark, and the end of CLIENT PAUSE.

use tracing::info;

use crate::server::client::ClientKind;
use crate::server::latency::{Event, Timer};
use crate::server::state::ServerState;

/// Keys sampled per db per active-expire loop (Valkey's ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP).
const EXPIRE_KEYS_PER_LOOP: usize = 20;
/// Share of a sample that must be expired to repeat the loop (percent).
const EXPIRE_ACCEPTABLE_STALE_PCT: usize = 10;
/// CPU share of a cron tick active expiry may use (percent).
const EXPIRE_CPU_PCT: u64 = 25;

pub fn run(srv: &mut ServerState, now_ms: i64) {
    // DEBUG PAUSE-CRON 1: none of the time events run, as in Valkey.
    if srv.cron_paused {
        return;
    }
    srv.cron_loops += 1;
    crate::persist::fork::reap_detached(&mut srv.ldb_children);
    if let Some(name) = crate::runtime::signals::take() {
        tracing::warn!("Received {name} scheduling shutdown...");
        // As a plain SHUTDOWN (replicas waited for); a failed final save is logged and the
        // server keeps running, as Valkey does. A shutdown already waiting goes on.
        if !crate::replication::shutdown::waiting(srv) {
            let mode = crate::server::state::ShutdownMode::Default;
            let on_error = crate::persist::save::OnSaveError::Refuse;
            let _ = crate::replication::shutdown::begin(srv, mode, on_error, false, None, now_ms);
        }
    }
    if srv.pause.kind.is_some() && now_ms >= srv.pause.until_ms {
        srv.pause.kind = None;
    }
    // A replica waits for its primary's deletions; in import mode the sync tool's writes
    // decide.
    if srv.active_expire_enabled && !srv.is_replica && !srv.config.general.import_mode {
        active_expire(srv, now_ms, ExpireCycle::Slow);
    }
    if srv.config.activerehashing {
        rehash_dbs(srv);
    }
    refresh_filters(srv);
    close_idle_clients(srv, now_ms);
    srv.migrate_conns.close_idle(now_ms);
    crate::server::tracking::cron(srv);
    // maxmemory-clients, then key eviction while over maxmemory (server::evict).
    crate::server::evict::time_event(srv, now_ms);
    let store = &mut crate::persist::store(srv);
    let finished = crate::persist::bgsave::check_child(store, now_ms);
    crate::persist::bgsave::check_save_points(store, now_ms);
    crate::persist::aof::cron(store, now_ms);
    if let Some(f) = finished {
        crate::replication::fullsync::child_done(srv, f, now_ms);
    }
    crate::replication::primary::cron(srv, now_ms);
    srv.drain_key_events(None);
    sample_metrics(srv, now_ms);
    let used = crate::memory::used_memory();
    if used > srv.stats.peak_memory {
        srv.stats.peak_memory = used;
    }
    srv.hz = srv.config.hz;
}

/// Buckets moved per rehash step in the time events, and the time one cron may spend.
const REHASH_BUCKETS_PER_STEP: usize = 100;
const REHASH_BUDGET_US: u128 = 1000;

/// Move resizing tables forward a bounded amount (Valkey's `activerehashing`), so a table
/// that stopped receiving writes still finishes its resize.
fn rehash_dbs(srv: &mut ServerState) {
    let started = std::time::Instant::now();
    for db in srv.dbs.iter_mut() {
        while db.rehash_step(REHASH_BUCKETS_PER_STEP) {
            if started.elapsed().as_micros() >= REHASH_BUDGET_US {
                return;
            }
        }
    }
}

/// Head buckets whose miss-filter words each time event rebuilds per database: at the default
/// `hz` 10 a table of 2^18 heads (about 1M keys) is swept every 6.4 s, for about 50 µs a run.
const FILTER_HEADS_PER_CRON: usize = 4096;

/// Rebuild a slice of every database's miss-filter words (deleted keys leave their bits).
fn refresh_filters(srv: &mut ServerState) {
    for db in srv.dbs.iter_mut() {
        db.refresh_filters(FILTER_HEADS_PER_CRON);
    }
}

/// Which expire cycle runs: the slow one from the time events, or the fast one from
/// before-sleep when the last slow cycle ran out of time with many keys still stale.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ExpireCycle {
    Slow,
    Fast,
}

/// Budget of one fast cycle, and the minimum gap between two (Valkey's 1000 µs and 2 ms).
const FAST_CYCLE_US: u64 = 1000;
const FAST_CYCLE_GAP_MS: i64 = 2;

/// The fast expire cycle, called before the event loop sleeps.
pub fn before_sleep_expire(srv: &mut ServerState, now_ms: i64) {
    if !srv.active_expire_enabled
        || !srv.expire_fast_wanted
        || srv.is_replica
        || srv.config.general.import_mode
    {
        return;
    }
    if now_ms - srv.expire_fast_last_ms < FAST_CYCLE_GAP_MS {
        return;
    }
    srv.expire_fast_last_ms = now_ms;
    active_expire(srv, now_ms, ExpireCycle::Fast);
    srv.drain_key_events(None);
}

/// Valkey's active expire cycle: per db, sample keys with a TTL, delete the expired ones,
/// and repeat while more than 10% of a sample was stale, within a time budget (25% of a
/// cron tick for the slow cycle, 1 ms for the fast one). When the slow cycle runs out of
/// time, a fast cycle is wanted before the loop sleeps.
pub fn active_expire(srv: &mut ServerState, now_ms: i64, cycle: ExpireCycle) {
    let started = std::time::Instant::now();
    let effort = srv.config.active_expire_effort.clamp(1, 10) as usize;
    let per_loop = EXPIRE_KEYS_PER_LOOP + EXPIRE_KEYS_PER_LOOP / 4 * (effort - 1);
    let budget_us = match cycle {
        ExpireCycle::Slow => 1_000_000 * EXPIRE_CPU_PCT / 100 / srv.config.hz.max(1) as u64,
        ExpireCycle::Fast => FAST_CYCLE_US,
    };
    let mut timed_out = false;
    let stale_pct = EXPIRE_ACCEPTABLE_STALE_PCT.saturating_sub(effort - 1);
    let ndb = srv.dbs.len();
    'dbs: for i in 0..ndb {
        loop {
            if srv.dbs[i].expires_len() == 0 {
                break;
            }
            let seed = srv.random();
            let (db, latency) = (&mut srv.dbs[i], &mut srv.latency);
            // Each key's deletion is timed apart (Valkey's `expire-del`), the clock read
            // only while the monitor is on.
            let threshold_ms = srv.config.latency_monitor_threshold_ms;
            let (sampled, expired) = db.expire_sample(seed, per_loop, now_ms, |entry| {
                let timer = Timer::start(threshold_ms);
                drop(entry);
                latency.add_if_needed(threshold_ms, Event::ExpireDel, timer.elapsed_ms());
            });
            db.stats.expired_samples += sampled as u64;
            db.stats.expired_stale_samples += expired as u64;
            if started.elapsed().as_micros() as u64 > budget_us {
                timed_out = true;
                break 'dbs;
            }
            if sampled == 0 || expired * 100 <= sampled * stale_pct {
                break;
            }
        }
    }
    // Hash fields get what is left of the slow cycle only, and never ask for a fast one: a
    // fast cycle every 2 ms with fields to reclaim kept a probe client's p99 at 1 ms while
    // 5M fields expired at once (Valkey's: 54 us); at 25% of the loop the same 5M fields
    // are still reclaimed faster than Valkey reclaims them (benches/hfe-compare.sh).
    if !timed_out && cycle == ExpireCycle::Slow {
        active_expire_fields(srv, now_ms, started, budget_us);
    }
    let elapsed_us = started.elapsed().as_micros() as u64;
    srv.stats.expire_cycle_cpu_us += elapsed_us;
    let threshold_ms = srv.config.latency_monitor_threshold_ms;
    srv.latency.add_if_needed(threshold_ms, Event::ExpireCycle, elapsed_us / 1000);
    if cycle == ExpireCycle::Slow {
        srv.expire_fast_wanted = timed_out;
    }
}

/// Queue entries (hashes) one field-expiry step takes, and buckets it sweeps per hash.
const FIELD_EXPIRE_HASHES_PER_STEP: usize = 32;
const FIELD_EXPIRE_BUCKETS_PER_HASH: usize = 64;

/// Active expiry of hash fields, in what is left of the cycle's time budget: per db, steps
/// over the hashes due (see `keyspace::field_expiry`) until none is or time is up; each
/// hash that lost fields gets its effects (`hexpired`, `HDEL` in the feed, `del` and the
/// key's removal when it was emptied). What is left when time is up waits for the next
/// slow cycle.
fn active_expire_fields(
    srv: &mut ServerState,
    now_ms: i64,
    started: std::time::Instant,
    budget_us: u64,
) {
    for i in 0..srv.dbs.len() {
        loop {
            let step = srv.dbs[i].expire_fields_step(
                now_ms,
                FIELD_EXPIRE_HASHES_PER_STEP,
                FIELD_EXPIRE_BUCKETS_PER_HASH,
            );
            for gone in &step.expired {
                crate::server::events::hash_fields_expired(srv, i, gone);
            }
            if !step.more {
                break;
            }
            if started.elapsed().as_micros() as u64 > budget_us {
                return;
            }
        }
    }
}

fn close_idle_clients(srv: &mut ServerState, now_ms: i64) {
    let timeout_ms = srv.config.timeout_secs as i64 * 1000;
    if timeout_ms == 0 {
        return;
    }
    let mut idle = Vec::new();
    for (t, s) in srv.clients.iter() {
        // A client blocked on keys waits as long as its own timeout says, as in Valkey.
        // Nor do subscribers, which may listen quietly for as long as they like.
        if s.client.kind == ClientKind::Normal
            && s.client.subs.total() == 0
            && now_ms - s.client.last_interaction_ms > timeout_ms
            && !srv.blocking.is_blocked(t)
        {
            idle.push(t);
        }
    }
    for t in idle {
        info!("Closing idle client");
        srv.to_close.push(t);
    }
}

fn sample_metrics(srv: &mut ServerState, now_ms: i64) {
    let st = &mut srv.stats;
    let i = st.ops_sample_idx % st.ops_samples.len();
    st.ops_samples[i] = (now_ms, st.total_commands_processed);
    st.net_in_samples[i] = (now_ms, st.net_input_bytes);
    st.net_out_samples[i] = (now_ms, st.net_output_bytes);
    st.cycle_samples[i] = (now_ms, st.eventloop_cycles);
    st.cycle_us_samples[i] = (now_ms, st.eventloop_us);
    st.ops_sample_idx += 1;
}
