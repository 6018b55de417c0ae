//! The figures of the Prometheus endpoint (`runtime::metrics`): [`snapshot`] copies what
//! INFO reports, through the same accessors INFO's sections use, into a
//! [`metrics::snapshot::Snapshot`] of plain numbers. It runs on the main thread once per
//! scrape and does nothing but copy: no text, no allocation beyond the snapshot's lists.
//! [`process_figures`] is what any thread can read (CPU time, RSS), so the endpoint's
//! thread reads it itself.

use crate::commands::info::{cpu, KeyspaceTotals};
use crate::metrics::snapshot::{
    CommandFigures, CommandHistogram, DbFigures, PersistenceFigures, ProcessFigures,
    ReplicationFigures, Snapshot,
};
use crate::server::pubsub::Kind;
use crate::server::state::ServerState;

/// The server's figures at `now_ms`. The endpoint's own ([`Snapshot::process`],
/// [`Snapshot::endpoint`]) are left at zero for its thread to fill.
pub fn snapshot(srv: &ServerState, now_ms: i64) -> Snapshot {
    crate::memory::publish();
    let used = crate::memory::used_memory();
    let st = &srv.stats;
    let totals = KeyspaceTotals::of(srv);
    Snapshot {
        uptime_secs: (now_ms - srv.start_ms) / 1000,
        start_time_secs: srv.start_ms / 1000,
        connected_clients: srv.clients.count as u64,
        max_clients: srv.config.maxclients.into(),
        blocked_clients: (srv.blocking.len() + srv.pause.held_clients) as u64,
        pubsub_clients: srv.pubsub.clients() as u64,
        tracking_clients: srv.tracking.clients() as u64,
        memory_used_bytes: used as u64,
        memory_peak_bytes: st.peak_memory.max(used) as u64,
        memory_max_bytes: srv.config.maxmemory_bytes,
        commands_processed: st.total_commands_processed,
        connections_received: st.total_connections_received,
        rejected_connections: st.rejected_connections,
        net_input_bytes: st.net_input_bytes,
        net_output_bytes: st.net_output_bytes,
        keyspace_hits: totals.hits,
        keyspace_misses: totals.misses,
        expired_keys: totals.expired,
        evicted_keys: totals.evicted,
        error_replies: st.total_error_replies,
        pubsub_channels: srv.pubsub.len(Kind::Channel) as u64,
        pubsub_patterns: srv.pubsub.len(Kind::Pattern) as u64,
        pubsub_shard_channels: srv.pubsub.len(Kind::Shard) as u64,
        dbs: dbs(srv),
        commands: commands(srv),
        errors: errors(srv),
        command_histograms: command_histograms(srv),
        replication: replication(srv),
        persistence: persistence(srv),
        process: ProcessFigures::default(),
        endpoint: Default::default(),
    }
}

/// Databases with keys (as INFO keyspace lists them), and db 0 always, so that the
/// family has a series from the start.
fn dbs(srv: &ServerState) -> Vec<DbFigures> {
    let shown = srv
        .dbs
        .iter()
        .enumerate()
        .filter(|(i, db)| *i == 0 || !db.is_empty() || db.expires_len() > 0);
    shown
        .map(|(i, db)| DbFigures {
            index: i as u32,
            keys: db.len() as u64,
            keys_expiring: db.expires_len() as u64,
            keys_with_volatile_items: db.volatile_items_len() as u64,
        })
        .collect()
}

/// Commands with a count (as INFO commandstats lists them), by name.
fn commands(srv: &ServerState) -> Vec<CommandFigures> {
    let mut out: Vec<CommandFigures> = srv
        .stats
        .cmd
        .iter()
        .filter(|(_, c)| c.calls > 0 || c.failed_calls > 0 || c.rejected_calls > 0)
        .map(|(&name, c)| CommandFigures {
            name,
            calls: c.calls,
            usec: c.usec,
            rejected_calls: c.rejected_calls,
            failed_calls: c.failed_calls,
        })
        .collect();
    out.sort_unstable_by_key(|c| c.name);
    out
}

/// Every command's latency histogram (kept while `latency-tracking` is on), at the
/// power-of-two bounds LATENCY HISTOGRAM reports, in seconds, as per-bucket counts.
fn command_histograms(srv: &ServerState) -> Vec<CommandHistogram> {
    let mut out: Vec<CommandHistogram> = srv
        .stats
        .cmd
        .iter()
        .filter_map(|(&name, c)| {
            let h = c.latency.as_deref()?;
            let mut below = 0;
            let buckets = h
                .cumulative_pow2()
                .into_iter()
                .map(|(upto_us, cumulative)| {
                    let n = cumulative - below;
                    below = cumulative;
                    (upto_us as f64 / 1e6, n)
                })
                .collect();
            Some(CommandHistogram {
                name,
                buckets,
                sum_secs: c.usec as f64 / 1e6,
                count: h.total(),
            })
        })
        .collect();
    out.sort_unstable_by_key(|h| h.name);
    out
}

fn errors(srv: &ServerState) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> =
        srv.stats.errors.iter().map(|(code, n)| (code.clone(), *n)).collect();
    out.sort_unstable();
    out
}

fn replication(srv: &ServerState) -> ReplicationFigures {
    use crate::replication::replica::LinkState;
    let r = crate::replication::peek(&*srv.repl);
    let link = r.and_then(|r| r.link.as_ref());
    ReplicationFigures {
        is_replica: link.is_some(),
        link_up: link.is_some_and(|l| l.state == LinkState::Connected),
        connected_replicas: r.map_or(0, |r| r.attached().count() as u64),
        offset: crate::replication::primary::write_offset(srv),
    }
}

fn persistence(srv: &ServerState) -> PersistenceFigures {
    crate::persist::with_figures(&*srv.persist, |p| persistence_of(srv, p))
}

fn persistence_of(srv: &ServerState, p: &crate::persist::Persistence) -> PersistenceFigures {
    let (aof, bgsave) = (&p.aof, &p.bgsave);
    PersistenceFigures {
        changes_since_last_save: srv.dirty.count(),
        last_save_time_secs: srv.lastsave_s,
        bgsave_in_progress: bgsave.child.is_some(),
        last_bgsave_ok: bgsave.last_ok,
        rdb_saves: bgsave.saves,
        aof_enabled: aof.logging(),
        aof_rewrite_in_progress: aof.rewrite.in_progress(),
        aof_last_write_ok: aof.write_error.is_none(),
        aof_rewrites: aof.rewrite.rewrites,
    }
}

/// The process's CPU time and resident memory: any thread may read them.
pub fn process_figures() -> ProcessFigures {
    let (user, sys) = cpu::process_seconds();
    ProcessFigures {
        cpu_user_secs: user,
        cpu_sys_secs: sys,
        rss_bytes: crate::memory::stats::rss_bytes() as u64,
    }
}
