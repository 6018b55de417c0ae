//! INFO [section ...]: the server's state as `field:value` lines under `# Section` headers,
//! with Valkey 8's section and field names, CRLF line endings and a blank line between
//! sections. The reply is verbatim text (a bulk string in RESP2).
//!
//! Each section is one function that only reads `ServerState`; fields this server has no
//! counterpart for (replication backlog, forks, defrag, tracking) report Valkey's idle
//! values so that tools parsing INFO find every field they expect.

use std::fmt::Write as _;

use bytes::Bytes;

use crate::commands::server_cmd::{REDIS_COMPAT_VERSION, SERVER_VERSION};
use crate::commands::table::Server;
use crate::commands::table::{acl, flag, Command};
use crate::commands::{CmdResult, ServerCtx};
use crate::keyspace::db::lru_clock;
use crate::keyspace::lazyfree;
use crate::server::evict;
use crate::server::pubsub::Kind;
use crate::server::state::rate;
use crate::server::state::ServerState;

pub static COMMANDS: &[Command] = &[Command::new(
    "info",
    -1,
    flag::LOADING | flag::STALE,
    acl::SLOW | acl::DANGEROUS,
    Server(info),
)
.history(&[("7.0.0", "Added support for taking multiple section arguments.")])
.doc("server", "1.0.0", "Returns information and statistics about the server.", "O(1)")
.tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"])];

/// Every section, in output order: name, whether `INFO` / `INFO default` includes it, and
/// the function that writes its lines.
type SectionFn = fn(&mut String, &ServerState, &Now);
const SECTIONS: &[(&str, bool, SectionFn)] = &[
    ("server", true, server_section),
    ("tls", false, tls_section),
    ("clients", true, clients_section),
    ("memory", true, memory_section),
    ("persistence", true, persistence_section),
    ("stats", true, stats_section),
    ("replication", true, replication_section),
    ("cpu", true, cpu_section),
    ("modules", true, modules_section),
    ("commandstats", false, commandstats_section),
    ("errorstats", true, errorstats_section),
    ("latencystats", false, latencystats_section),
    ("cluster", true, cluster_section),
    ("cluster_info", false, cluster_info_section),
    ("scripting_engines", false, scripting_engines_section),
    ("keyspace", true, keyspace_section),
];

/// Which sections a request asked for.
#[derive(Default)]
struct Selection {
    all: bool,
    defaults: bool,
    /// Lower-cased names of sections asked for by name.
    named: Vec<String>,
}

impl Selection {
    fn parse(args: &[Bytes]) -> Selection {
        let mut sel = Selection { defaults: args.is_empty(), ..Selection::default() };
        for a in args {
            let name = String::from_utf8_lossy(a).to_ascii_lowercase();
            match name.as_str() {
                "default" => sel.defaults = true,
                "all" | "everything" => sel.all = true,
                _ => sel.named.push(name),
            }
        }
        sel
    }

    fn wants(&self, name: &str, in_default: bool) -> bool {
        self.all
            || (self.defaults && in_default)
            || self.named.iter().any(|n| n == name || (name == "modules" && n == "module_list"))
    }
}

/// What INFO reads besides the server state: the time (the command's ms clock plus the
/// precise µs one), and the executing client's buffers, which the client table cannot show
/// while that client is lent out of it.
struct Now {
    ms: i64,
    us: i64,
    own_qbuf: usize,
    own_out: usize,
    /// What the executing client holds (`evict::client_memory_bytes`).
    own_mem: usize,
}

fn info(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let sel = Selection::parse(&argv[1..]);
    let now = Now {
        ms: ctx.now_ms,
        us: crate::util::clock::now_us(),
        own_qbuf: ctx.client.qbuf_len,
        own_out: ctx.out.len(),
        own_mem: evict::client_memory_bytes(ctx.client, ctx.out),
    };
    let text = render(ctx.srv, &sel, &now);
    ctx.out.verbatim("txt", text.as_bytes());
    Ok(())
}

fn render(srv: &ServerState, sel: &Selection, now: &Now) -> String {
    let mut s = String::with_capacity(4096);
    for &(name, in_default, write) in SECTIONS {
        if !sel.wants(name, in_default) {
            continue;
        }
        if !s.is_empty() {
            s.push_str("\r\n");
        }
        write(&mut s, srv, now);
    }
    s
}

/// Append `field:value\r\n` lines.
macro_rules! fields {
    ($s:expr, $( $name:literal => $value:expr ),* $(,)?) => {
        $( let _ = write!($s, concat!($name, ":{}\r\n"), $value); )*
    };
}

/// A first line of a file under /proc, trimmed ("" when unreadable).
fn proc_line(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|t| t.lines().next().unwrap_or("").trim().to_string())
        .unwrap_or_default()
}

fn server_section(s: &mut String, srv: &ServerState, now: &Now) {
    let uptime_s = (now.ms - srv.start_ms) / 1000;
    let os_type = proc_line("/proc/sys/kernel/ostype");
    let os = format!(
        "{} {} {}",
        if os_type.is_empty() { std::env::consts::OS } else { &os_type },
        proc_line("/proc/sys/kernel/osrelease"),
        std::env::consts::ARCH
    );
    let config_file = srv.config_file.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
    s.push_str("# Server\r\n");
    fields!(s,
        "redis_version" => REDIS_COMPAT_VERSION,
        "server_name" => "valkey",
        "valkey_version" => SERVER_VERSION,
        "valkey_release_stage" => "ga",
        "redis_git_sha1" => "00000000",
        "redis_git_dirty" => 0,
        "redis_build_id" => "0",
        "server_mode" => if srv.config.cluster_enabled { "cluster" } else { "standalone" },
        "os" => os,
        "arch_bits" => usize::BITS,
        "monotonic_clock" => "POSIX clock_gettime",
        "multiplexing_api" => "epoll",
        "gcc_version" => "0.0.0",
        "process_id" => std::process::id(),
        "process_supervised" => "no",
        "run_id" => srv.run_id,
        "tcp_port" => srv.tcp_port,
        "server_time_usec" => now.us,
        "uptime_in_seconds" => uptime_s,
        "uptime_in_days" => uptime_s / 86400,
        "hz" => srv.hz,
        "configured_hz" => srv.config.hz,
        // Client timeouts and buffer checks run in the time events, at `hz`.
        "clients_hz" => srv.hz,
        "lru_clock" => lru_clock(now.ms),
        "executable" => srv.executable,
        "config_file" => config_file,
        "io_threads_active" => u8::from(srv.io_threads_active),
        "availability_zone" => srv.config.general.availability_zone,
    );
    let mut n = 0;
    if srv.tcp_port != 0 {
        let binds: Vec<String> = srv.config.bind.iter().map(|b| format!("bind={b}")).collect();
        let _ = write!(s, "listener{n}:name=tcp,{},port={}\r\n", binds.join(","), srv.tcp_port);
        n += 1;
    }
    if !srv.config.unixsocket.is_empty() {
        let _ = write!(s, "listener{n}:name=unix,bind={}\r\n", srv.config.unixsocket);
    }
}

fn clients_section(s: &mut String, srv: &ServerState, now: &Now) {
    let others = srv.clients.iter().map(|(_, slot)| (slot.client.qbuf_len, slot.out.len()));
    let (max_in, max_out) =
        others.fold((now.own_qbuf, now.own_out), |(i, o), (qi, qo)| (i.max(qi), o.max(qo)));
    s.push_str("# Clients\r\n");
    fields!(s,
        "connected_clients" => srv.clients.count,
        "cluster_connections" => 0,
        "maxclients" => srv.config.maxclients,
        "client_recent_max_input_buffer" => max_in,
        "client_recent_max_output_buffer" => max_out,
        "blocked_clients" => srv.blocking.len() + srv.pause.held_clients,
        "tracking_clients" => srv.tracking.clients(),
        "pubsub_clients" => srv.pubsub.clients(),
        "watching_clients" => srv.watches.watching_clients(),
        "clients_in_timeout_table" => 0,
        "total_watched_keys" => srv.watches.keys_len(),
        "total_blocking_keys" => srv.blocking.keys_len(),
        "total_blocking_keys_on_nokey" => 0,
    );
    let (reason, actions, timeout_ms) = pause_figures(&srv.pause, now.ms);
    fields!(s,
        "paused_reason" => reason,
        "paused_actions" => actions,
        "paused_timeout_milliseconds" => timeout_ms,
    );
}

/// INFO's view of the pauses in force at `now_ms`: why (Valkey's purposes: a shutdown
/// waiting for its replicas, a failover, CLIENT PAUSE), what they hold back (`write` or
/// `all`), and the milliseconds left of CLIENT PAUSE's timeout.
fn pause_figures(
    p: &crate::server::state::Pause,
    now_ms: i64,
) -> (&'static str, &'static str, i64) {
    use crate::server::state::PauseKind;
    let client_pause = p.kind.filter(|_| now_ms < p.until_ms);
    let reason = if p.shutdown {
        "shutdown_in_progress"
    } else if p.failover {
        "failover_in_progress"
    } else if client_pause.is_some() {
        "client_pause"
    } else {
        "none"
    };
    let actions = match client_pause {
        Some(PauseKind::All) => "all",
        Some(PauseKind::Write) => "write",
        None if p.shutdown || p.failover => "write",
        None => "none",
    };
    let timeout_ms = client_pause.map_or(0, |_| p.until_ms - now_ms);
    (reason, actions, timeout_ms)
}

/// TLS is not built into ferrokey: no certificate is loaded, which Valkey reports so.
fn tls_section(s: &mut String, _srv: &ServerState, _now: &Now) {
    s.push_str("# TLS\r\n");
    fields!(s,
        "tls_server_cert_serial" => "none",
        "tls_server_cert_expires_in_seconds" => 0,
        "tls_client_cert_serial" => "none",
        "tls_client_cert_expires_in_seconds" => 0,
        "tls_ca_cert_serial" => "none",
        "tls_ca_cert_expires_in_seconds" => 0,
    );
}

/// Valkey's `bytesToHuman`: `123B`, `1.50K`, `2.00M`, ...
pub fn bytes_to_human(n: u64) -> String {
    const UNITS: &[(u64, char)] =
        &[(1 << 50, 'P'), (1 << 40, 'T'), (1 << 30, 'G'), (1 << 20, 'M'), (1 << 10, 'K')];
    if n >= 1 << 60 {
        return format!("{n}B");
    }
    match UNITS.iter().find(|&&(size, _)| n >= size) {
        Some(&(size, unit)) => format!("{:.2}{unit}", n as f64 / size as f64),
        None => format!("{n}B"),
    }
}

/// `a / b` for ratios, 0 when `b` is 0.
fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Where the memory goes, as INFO memory and MEMORY STATS break it down.
pub struct MemoryBreakdown {
    pub used: usize,
    pub peak: usize,
    pub startup: usize,
    /// Every client's struct and buffers (`mem_clients_normal`).
    pub clients_normal: usize,
    /// Per database: bytes of the hashtable and of the expire index.
    pub dbs: Vec<(usize, usize)>,
    /// startup + clients + the databases' tables and indexes.
    pub overhead: usize,
    /// used - overhead: keys and values.
    pub dataset: usize,
}

impl MemoryBreakdown {
    /// `own_client_bytes`: the executing client, lent out of the client table.
    pub fn now(srv: &ServerState, own_client_bytes: usize) -> MemoryBreakdown {
        crate::memory::publish();
        let used = crate::memory::used_memory();
        let startup = srv.used_memory_startup.min(used);
        let clients_normal = evict::clients_memory_bytes(srv) + own_client_bytes;
        let dbs: Vec<(usize, usize)> =
            srv.dbs.iter().map(|db| (db.table_bytes(), db.expires_bytes())).collect();
        let overhead = startup + clients_normal + dbs.iter().map(|(t, e)| t + e).sum::<usize>();
        MemoryBreakdown {
            used,
            peak: srv.stats.peak_memory.max(used),
            startup,
            clients_normal,
            dbs,
            overhead,
            dataset: used.saturating_sub(overhead),
        }
    }

    /// The dataset as a share of what was allocated since start-up (percent).
    pub fn dataset_perc(&self) -> f64 {
        ratio(self.dataset, self.used.saturating_sub(self.startup).max(1)) * 100.0
    }

    /// Used memory as a share of the peak (percent).
    pub fn peak_perc(&self) -> f64 {
        ratio(self.used, self.peak) * 100.0
    }
}

/// What scripting holds: the two interpreters' heaps (EVAL's and the functions'), and the
/// script cache and the libraries besides them (their code and bookkeeping).
struct ScriptMemory {
    vm_eval: usize,
    vm_functions: usize,
    scripts_eval: usize,
    functions: usize,
}

impl ScriptMemory {
    fn of(srv: &ServerState) -> ScriptMemory {
        ScriptMemory {
            vm_eval: srv.scripts.vm.used_memory(),
            vm_functions: srv.functions.vm.used_memory(),
            scripts_eval: srv.scripts.memory_bytes(),
            functions: srv.functions.memory_bytes(),
        }
    }

    fn vm_total(&self) -> usize {
        self.vm_eval + self.vm_functions
    }
}

fn memory_section(s: &mut String, srv: &ServerState, now: &Now) {
    let mem = MemoryBreakdown::now(srv, now.own_mem);
    let (used, peak, startup, clients_normal) =
        (mem.used, mem.peak, mem.startup, mem.clients_normal);
    let (overhead, dataset) = (mem.overhead, mem.dataset);
    let alloc = mem_source::allocator_stats();
    let rss = mem_source::rss_bytes();
    let total_system = mem_source::total_system_memory();
    let maxmemory = srv.config.maxmemory_bytes;
    let lua = ScriptMemory::of(srv);
    s.push_str("# Memory\r\n");
    fields!(s,
        "used_memory" => used,
        "used_memory_human" => bytes_to_human(used as u64),
        "used_memory_rss" => rss,
        "used_memory_rss_human" => bytes_to_human(rss as u64),
        "used_memory_peak" => peak,
        "used_memory_peak_human" => bytes_to_human(peak as u64),
        "used_memory_peak_perc" => format!("{:.2}%", mem.peak_perc()),
        "used_memory_overhead" => overhead,
        "used_memory_startup" => startup,
        "used_memory_dataset" => dataset,
        "used_memory_dataset_perc" => format!("{:.2}%", mem.dataset_perc()),
        "allocator_allocated" => alloc.allocated,
        "allocator_active" => alloc.active,
        "allocator_resident" => alloc.resident,
        "allocator_muzzy" => alloc.muzzy,
        "total_system_memory" => total_system,
        "total_system_memory_human" => bytes_to_human(total_system as u64),
        "used_memory_lua" => lua.vm_eval,
        "used_memory_vm_eval" => lua.vm_eval,
        "used_memory_lua_human" => bytes_to_human(lua.vm_eval as u64),
        "used_memory_scripts_eval" => lua.scripts_eval,
        "number_of_cached_scripts" => srv.scripts.len(),
        "number_of_functions" => srv.functions.function_count(),
        "number_of_libraries" => srv.functions.library_count(),
        "used_memory_vm_functions" => lua.vm_functions,
        "used_memory_vm_total" => lua.vm_total(),
        "used_memory_vm_total_human" => bytes_to_human(lua.vm_total() as u64),
        "used_memory_functions" => lua.functions,
        "used_memory_scripts" => lua.scripts_eval + lua.functions,
        "used_memory_scripts_human" => bytes_to_human((lua.scripts_eval + lua.functions) as u64),
        "maxmemory" => maxmemory,
        "maxmemory_human" => bytes_to_human(maxmemory),
        "maxmemory_policy" => srv.config.maxmemory_policy.name(),
        "allocator_frag_ratio" => format!("{:.2}", ratio(alloc.active, alloc.allocated)),
        "allocator_frag_bytes" => alloc.active.saturating_sub(alloc.allocated),
        "allocator_rss_ratio" => format!("{:.2}", ratio(alloc.resident, alloc.active)),
        "allocator_rss_bytes" => alloc.resident as i64 - alloc.active as i64,
        "rss_overhead_ratio" => format!("{:.2}", ratio(rss, alloc.resident)),
        "rss_overhead_bytes" => rss as i64 - alloc.resident as i64,
        "mem_fragmentation_ratio" => format!("{:.2}", ratio(rss, used)),
        "mem_fragmentation_bytes" => rss as i64 - used as i64,
        "mem_not_counted_for_evict" => 0,
        "mem_replication_backlog" => crate::replication::peek(&*srv.repl)
            .and_then(|r| r.backlog.as_ref())
            .map_or(0, |b| b.allocated()),
        "mem_total_replication_buffers" => 0,
        "mem_replicas_repl_buffer" => 0,
        "mem_clients_slaves" => 0,
        "mem_clients_normal" => clients_normal,
        "mem_cluster_links" => 0,
        "mem_cluster_slot_import" => 0,
        "mem_cluster_slot_export" => 0,
        "mem_aof_buffer" => srv.feed.buf.capacity(),
        "mem_allocator" => "jemalloc-5.3.0",
        "mem_overhead_db_hashtable_rehashing" =>
            srv.dbs.iter().map(|db| db.rehashing_bytes()).sum::<usize>(),
        "active_defrag_running" => 0,
        "lazyfree_pending_objects" => lazyfree::pending_objects(),
        "lazyfreed_objects" => lazyfree::freed_objects(),
    );
}

fn persistence_section(s: &mut String, srv: &ServerState, _now: &Now) {
    // Persistence that never ran has its default figures.
    crate::persist::with_figures(&*srv.persist, |p| persistence_lines(s, srv, p));
}

fn persistence_lines(s: &mut String, srv: &ServerState, p: &crate::persist::Persistence) {
    let (aof, bgsave) = (&p.aof, &p.bgsave);
    s.push_str("# Persistence\r\n");
    fields!(s,
        "loading" => 0,
        // A diskless load runs on the sync thread while the dataset is served.
        "async_loading" => u8::from(crate::replication::replica::loading_async(srv)),
        // The child reports its copy-on-write size when it ends (`rdb_last_cow_size`),
        // not while it runs.
        "current_cow_peak" => 0,
        "current_cow_size" => 0,
        "current_cow_size_age" => 0,
        "current_fork_perc" => "0.00",
        "current_save_keys_processed" => 0,
        "current_save_keys_total" => bgsave.child.as_ref().map_or(0, |c| c.keys_total),
        "rdb_changes_since_last_save" => srv.dirty.count(),
        "rdb_bgsave_in_progress" => u8::from(bgsave.child.is_some()),
        "rdb_last_save_time" => srv.lastsave_s,
        "rdb_last_bgsave_status" => if bgsave.last_ok { "ok" } else { "err" },
        "rdb_last_bgsave_time_sec" => bgsave.last_time_secs,
        "rdb_current_bgsave_time_sec" => bgsave
            .child
            .as_ref()
            .map_or(-1, |c| (crate::util::clock::now_ms() - c.fork.started_ms) / 1000),
        "rdb_saves" => bgsave.saves,
        "rdb_last_cow_size" => bgsave.last_cow_bytes,
        "rdb_last_load_keys_expired" => bgsave.last_load_keys_expired,
        "rdb_last_load_keys_loaded" => bgsave.last_load_keys_loaded,
        "aof_enabled" => u8::from(aof.logging()),
        "aof_rewrite_in_progress" => u8::from(aof.rewrite.in_progress()),
        "aof_rewrite_scheduled" => u8::from(aof.rewrite.scheduled),
        "aof_last_rewrite_time_sec" => aof.rewrite.last_time_secs,
        "aof_current_rewrite_time_sec" => aof.rewrite.current_secs(crate::util::clock::now_ms()),
        "aof_last_bgrewrite_status" => if aof.rewrite.last_ok { "ok" } else { "err" },
        "aof_rewrites" => aof.rewrite.rewrites,
        "aof_rewrites_consecutive_failures" => aof.rewrite.consecutive_failures,
        "aof_last_write_status" => if aof.write_error.is_none() { "ok" } else { "err" },
        "aof_last_cow_size" => aof.rewrite.last_cow_size,
        "module_fork_in_progress" => 0,
        "module_fork_last_cow_size" => 0,
        "slot_migration_fork_in_progress" => 0,
    );
    if aof.logging() {
        fields!(s,
            "aof_current_size" => aof.current_size,
            "aof_base_size" => aof.base_size,
            "aof_pending_rewrite" => u8::from(aof.rewrite.scheduled),
            "aof_buffer_length" => srv.feed.buf.len(),
            "aof_pending_bio_fsync" => u8::from(aof.fsync_pending()),
            "aof_delayed_fsync" => aof.delayed_fsync,
        );
    }
}

/// The databases' counters, summed (INFO stats; the metrics endpoint's snapshot).
#[derive(Default)]
pub(crate) struct KeyspaceTotals {
    pub expired: u64,
    pub expired_fields: u64,
    pub evicted: u64,
    pub hits: u64,
    pub misses: u64,
    /// Active expiry's samples that had expired, and all it sampled.
    pub stale: u64,
    pub sampled: u64,
}

impl KeyspaceTotals {
    pub(crate) fn of(srv: &ServerState) -> KeyspaceTotals {
        let mut t = KeyspaceTotals::default();
        for db in &srv.dbs {
            let st = &db.stats;
            t.evicted += st.evicted_keys;
            t.expired_fields += st.expired_fields;
            t.expired += st.expired_keys;
            t.hits += st.keyspace_hits;
            t.misses += st.keyspace_misses;
            t.stale += st.expired_stale_samples;
            t.sampled += st.expired_samples;
        }
        t
    }
}

fn stats_section(s: &mut String, srv: &ServerState, now: &Now) {
    let st = &srv.stats;
    let repl_stats = crate::replication::peek(&*srv.repl).map(|r| r.stats).unwrap_or_default();
    let eviction = evict::stats(now.ms);
    let KeyspaceTotals { expired, expired_fields, evicted, hits, misses, stale, sampled } =
        KeyspaceTotals::of(srv);
    let idx = st.ops_sample_idx;
    let kbps = |samples| format!("{:.2}", rate(samples, idx) / 1024.0);
    s.push_str("# Stats\r\n");
    fields!(s,
        "total_connections_received" => st.total_connections_received,
        "total_commands_processed" => st.total_commands_processed,
        "instantaneous_ops_per_sec" => rate(&st.ops_samples, idx) as i64,
        "total_net_input_bytes" => st.net_input_bytes,
        "total_net_output_bytes" => st.net_output_bytes,
        "total_net_repl_input_bytes" => 0,
        "total_net_repl_output_bytes" => repl_stats.repl_output_bytes,
        "total_net_cluster_slot_import_bytes" => 0,
        "total_net_cluster_slot_export_bytes" => 0,
        "instantaneous_input_kbps" => kbps(&st.net_in_samples),
        "instantaneous_output_kbps" => kbps(&st.net_out_samples),
        "instantaneous_input_repl_kbps" => "0.00",
        "instantaneous_output_repl_kbps" => "0.00",
        "rejected_connections" => st.rejected_connections,
        "sync_full" => repl_stats.full,
        "sync_partial_ok" => repl_stats.partial_ok,
        "sync_partial_err" => repl_stats.partial_err,
        "expired_keys" => expired,
        "expired_fields" => expired_fields,
        "expired_stale_perc" => format!("{:.2}", ratio(stale as usize, sampled as usize) * 100.0),
        "expired_keys_with_volatile_items_stale_perc" => format!("{:.2}", volatile_stale_perc(srv, now.ms)),
        "expired_time_cap_reached_count" => 0,
        "expire_cycle_cpu_milliseconds" => st.expire_cycle_cpu_us / 1000,
        "evicted_keys" => evicted,
        "evicted_clients" => eviction.evicted_clients,
        "evicted_scripts" => srv.scripts.evicted,
        "total_eviction_exceeded_time" => eviction.exceeded_total_ms,
        "current_eviction_exceeded_time" => eviction.exceeded_current_ms,
        "keyspace_hits" => hits,
        "keyspace_misses" => misses,
        "pubsub_channels" => srv.pubsub.len(Kind::Channel),
        "pubsub_patterns" => srv.pubsub.len(Kind::Pattern),
        "pubsubshard_channels" => srv.pubsub.len(Kind::Shard),
        "latest_fork_usec" => crate::persist::fork::latest_fork_usec(),
        "total_forks" => crate::persist::fork::total_forks(),
        "migrate_cached_sockets" => 0,
        "slave_expires_tracked_keys" => 0,
        "active_defrag_hits" => 0,
        "active_defrag_misses" => 0,
        "active_defrag_key_hits" => 0,
        "active_defrag_key_misses" => 0,
        "total_active_defrag_time" => 0,
        "current_active_defrag_time" => 0,
        "tracking_total_keys" => srv.tracking.total_keys(),
        "tracking_total_items" => srv.tracking.total_items(),
        "tracking_total_prefixes" => srv.tracking.total_prefixes(),
        "unexpected_error_replies" => st.unexpected_error_replies,
        "total_error_replies" => st.total_error_replies,
        "dump_payload_sanitizations" => 0,
        "total_reads_processed" => st.total_reads,
        "total_writes_processed" => st.total_writes,
        "io_threaded_reads_processed" => st.io_threaded_reads,
        "io_threaded_writes_processed" => st.io_threaded_writes,
        // ferrokey's I/O threads free nothing of the main thread's and accept nothing:
        // the main thread accepts and polls every socket.
        "io_threaded_freed_objects" => 0,
        "io_threaded_accept_processed" => 0,
        "io_threaded_poll_processed" => 0,
        "io_threaded_total_prefetch_batches" => st.prefetch_batches,
        "io_threaded_total_prefetch_entries" => st.prefetch_keys,
        "client_query_buffer_limit_disconnections" => st.client_qbuf_limit_disconnections,
        "client_output_buffer_limit_disconnections" => st.client_outbuf_limit_disconnections,
        "reply_buffer_shrinks" => 0,
        "reply_buffer_expands" => 0,
        "eventloop_cycles" => st.eventloop_cycles,
        "eventloop_duration_sum" => st.eventloop_us,
        "eventloop_duration_cmd_sum" => st.eventloop_cmd_us,
        "instantaneous_eventloop_cycles_per_sec" => rate(&st.cycle_samples, idx) as i64,
        "instantaneous_eventloop_duration_usec" => per_turn_us(st, idx),
        "acl_access_denied_auth" => srv.acl.denied.auth,
        "acl_access_denied_cmd" => srv.acl.denied.cmd,
        "acl_access_denied_key" => srv.acl.denied.key,
        "acl_access_denied_channel" => srv.acl.denied.channel,
        "acl_access_denied_tls_cert" => 0,
        "acl_access_denied_db" => srv.acl.denied.db,
    );
}

fn replication_section(s: &mut String, srv: &ServerState, now: &Now) {
    use crate::replication::ReplicaState;
    let r = crate::replication::peek(&*srv.repl);
    s.push_str("# Replication\r\n");
    let attached: Vec<&crate::replication::Replica> =
        r.map(|r| r.attached().collect()).unwrap_or_default();
    let link = r.and_then(|r| r.link.as_ref());
    match link {
        None => {
            fields!(s, "role" => "master");
        }
        Some(l) => {
            use crate::replication::replica::LinkState;
            let up = l.state == LinkState::Connected;
            // A full sync's snapshot on its way (Valkey's TRANSFER state).
            let transfer =
                if l.state == LinkState::Connecting { l.transfer.figures() } else { None };
            let offset = crate::replication::primary::write_offset(srv);
            let last_io = crate::replication::replica::primary_token(srv)
                .and_then(|t| srv.clients.get(t))
                .map_or(-1, |s| (now.ms - s.client.last_interaction_ms) / 1000);
            fields!(s,
                "role" => "slave",
                "master_host" => l.host,
                "master_port" => l.port,
                "master_link_status" => if up { "up" } else { "down" },
                "master_last_io_seconds_ago" => last_io,
                "master_sync_in_progress" => u8::from(transfer.is_some()),
                "slave_read_repl_offset" => offset,
                "slave_repl_offset" => offset,
                "replicas_repl_buffer_size" => 0,
                "replicas_repl_buffer_peak" => 0,
            );
            if let Some(t) = transfer {
                let perc = if t.total > 0 { t.read as f64 * 100.0 / t.total as f64 } else { 0.0 };
                fields!(s,
                    "master_sync_total_bytes" => t.total,
                    "master_sync_read_bytes" => t.read,
                    "master_sync_left_bytes" => t.total - t.read,
                    "master_sync_perc" => format!("{perc:.2}"),
                    "master_sync_last_io_seconds_ago" => (now.ms - t.last_io_ms) / 1000,
                );
            }
            if !up {
                let down =
                    if l.down_since_ms == 0 { -1 } else { (now.ms - l.down_since_ms) / 1000 };
                fields!(s, "master_link_down_since_seconds" => down);
            }
            fields!(s,
                "slave_priority" => srv.config.replication.replica_priority,
                "slave_read_only" => u8::from(srv.config.replication.replica_read_only),
                "replica_announced" => u8::from(srv.config.replication.replica_announced),
            );
        }
    }
    fields!(s, "connected_slaves" => attached.len());
    for (i, rep) in attached.iter().enumerate() {
        let lag = if rep.state == ReplicaState::Online { (now.ms - rep.ack_ms) / 1000 } else { 0 };
        s.push_str(&format!(
            "slave{i}:ip={},port={},state={},offset={},lag={lag},type=replica\r\n",
            rep.ip(),
            rep.listening_port,
            rep.state.name(),
            rep.ack_offset,
        ));
    }
    let backlog = r.and_then(|r| r.backlog.as_ref());
    fields!(s,
        "replicas_waiting_psync" => 0,
        "master_failover_state" => crate::replication::failover::state_name(srv),
        "master_replid" => srv.replid,
        "master_replid2" => r.map_or(crate::replication::NO_REPLID, |r| r.replid2.as_str()),
        "master_repl_offset" => crate::replication::primary::write_offset(srv),
        "second_repl_offset" => r.map_or(-1, |r| r.second_offset),
        "repl_backlog_active" => u8::from(backlog.is_some()),
        "repl_backlog_size" => srv.config.replication.repl_backlog_size_bytes,
        "repl_backlog_first_byte_offset" => backlog.map_or(0, |b| b.first_offset()),
        "repl_backlog_histlen" => backlog.map_or(0, |b| b.histlen()),
    );
}

fn cpu_section(s: &mut String, srv: &ServerState, _now: &Now) {
    let own = cpu::usage(cpu::Who::Process);
    let children = cpu::usage(cpu::Who::Children);
    s.push_str("# CPU\r\n");
    fields!(s,
        "used_cpu_sys" => own.sys,
        "used_cpu_user" => own.user,
        "used_cpu_sys_children" => children.sys,
        "used_cpu_user_children" => children.user,
    );
    // INFO runs on the main thread, so the calling thread's usage is the main thread's.
    if let Some(main) = cpu::thread_usage() {
        fields!(s,
            "used_cpu_sys_main_thread" => main.sys,
            "used_cpu_user_main_thread" => main.user,
        );
    }
    // The main thread's time in event-loop turns, its waits for events left out.
    fields!(s,
        "used_active_time_main_thread" => format!("{:.6}", srv.stats.eventloop_us as f64 / 1e6),
    );
}

/// Valkey 9 lists its Lua engine as a built-in module; ferrokey's Lua engine is built in
/// the same way and listed the same way, with the one option it has (no cluster, so no
/// slot migration).
fn modules_section(s: &mut String, _srv: &ServerState, _now: &Now) {
    s.push_str("# Modules\r\n");
    s.push_str(
        "module:name=lua,ver=1,api=1,filters=0,usedby=[],using=[],\
         options=[handle-repl-async-load]\r\n",
    );
}

fn commandstats_section(s: &mut String, srv: &ServerState, _now: &Now) {
    s.push_str("# Commandstats\r\n");
    let mut names: Vec<&&str> = srv.stats.cmd.keys().collect();
    names.sort();
    for name in names {
        let st = &srv.stats.cmd[*name];
        if st.calls == 0 && st.failed_calls == 0 && st.rejected_calls == 0 {
            continue;
        }
        let per_call = if st.calls == 0 { 0.0 } else { st.usec as f64 / st.calls as f64 };
        let _ = write!(
            s,
            "cmdstat_{name}:calls={},usec={},usec_per_call={per_call:.2},rejected_calls={},failed_calls={}\r\n",
            st.calls, st.usec, st.rejected_calls, st.failed_calls
        );
    }
}

fn errorstats_section(s: &mut String, srv: &ServerState, _now: &Now) {
    s.push_str("# Errorstats\r\n");
    let mut codes: Vec<(&String, &u64)> = srv.stats.errors.iter().collect();
    codes.sort();
    for (code, count) in codes {
        let _ = write!(s, "errorstat_{code}:count={count}\r\n");
    }
}

/// Each command's latency percentiles (`server_cmd::latency` writes the lines).
fn latencystats_section(s: &mut String, srv: &ServerState, _now: &Now) {
    s.push_str("# Latencystats\r\n");
    crate::commands::server_cmd::latency::info_lines(s, srv);
}

/// Valkey 9's engines: Lua alone, with its interpreters' memory and the size of the
/// engine's own bookkeeping.
fn scripting_engines_section(s: &mut String, srv: &ServerState, _now: &Now) {
    let lua = ScriptMemory::of(srv);
    let overhead = std::mem::size_of::<crate::scripting::eval::Scripts>()
        + std::mem::size_of::<crate::scripting::functions::Functions>();
    s.push_str("# Scripting Engines\r\n");
    fields!(s,
        "engines_count" => 1,
        "engines_total_used_memory" => lua.vm_total(),
        "engines_total_memory_overhead" => overhead,
        "engine_0" => format!(
            "name=LUA,module=lua,abi_version=4,used_memory={},memory_overhead={overhead}",
            lua.vm_total()
        ),
    );
}

fn cluster_section(s: &mut String, srv: &ServerState, _now: &Now) {
    s.push_str("# Cluster\r\n");
    fields!(s, "cluster_enabled" => u8::from(srv.config.cluster_enabled));
}

/// Valkey 9's cluster details, empty when cluster mode is off (ferrokey's only mode).
fn cluster_info_section(s: &mut String, _srv: &ServerState, _now: &Now) {
    s.push_str("# Cluster Info\r\n");
}

/// Of the hashes with volatile fields, the share (percent) due for field expiry and not yet
/// swept: queue entries whose time has passed, over all entries (Valkey samples its
/// volatile-items keys for the same figure).
fn volatile_stale_perc(srv: &ServerState, now_ms: i64) -> f64 {
    let (due, all) = srv
        .dbs
        .iter()
        .map(|db| db.field_expiry_backlog(now_ms))
        .fold((0, 0), |(d, a), (dd, aa)| (d + dd, a + aa));
    ratio(due, all) * 100.0
}

/// Average microseconds of an event-loop turn over the sampling window.
fn per_turn_us(st: &crate::server::state::Stats, idx: usize) -> u64 {
    let turns = rate(&st.cycle_samples, idx);
    if turns <= 0.0 {
        return 0;
    }
    (rate(&st.cycle_us_samples, idx) / turns) as u64
}

fn keyspace_section(s: &mut String, srv: &ServerState, now: &Now) {
    s.push_str("# Keyspace\r\n");
    for (i, db) in srv.dbs.iter().enumerate() {
        let (keys, expires) = (db.len(), db.expires_len());
        if keys == 0 && expires == 0 {
            continue;
        }
        let (avg_ttl, volatile) = (db.avg_ttl_ms(now.ms), db.volatile_items_len());
        let _ = write!(
            s,
            "db{i}:keys={keys},expires={expires},avg_ttl={avg_ttl},\
             keys_with_volatile_items={volatile}\r\n"
        );
    }
}

/// CPU time from `getrusage(2)`, formatted as Valkey prints it (`seconds.micros`), or in
/// seconds for the metrics endpoint.
pub(crate) mod cpu {
    pub struct Usage {
        pub sys: String,
        pub user: String,
    }

    pub enum Who {
        Process,
        Children,
    }

    fn fmt(tv: libc::timeval) -> String {
        format!("{}.{:06}", tv.tv_sec, tv.tv_usec)
    }

    fn rusage(who: libc::c_int) -> Option<libc::rusage> {
        let mut ru = std::mem::MaybeUninit::<libc::rusage>::uninit();
        // SAFETY: `ru` is valid for writes of one `rusage`; getrusage fills it completely
        // when it returns 0, and it is read only in that case.
        let rc = unsafe { libc::getrusage(who, ru.as_mut_ptr()) };
        if rc != 0 {
            return None;
        }
        // SAFETY: initialised by the successful call above.
        Some(unsafe { ru.assume_init() })
    }

    fn raw(who: libc::c_int) -> Option<Usage> {
        let ru = rusage(who)?;
        Some(Usage { sys: fmt(ru.ru_stime), user: fmt(ru.ru_utime) })
    }

    /// The process's (user, system) CPU seconds; any thread may ask.
    pub fn process_seconds() -> (f64, f64) {
        let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        rusage(libc::RUSAGE_SELF).map_or((0.0, 0.0), |ru| (secs(ru.ru_utime), secs(ru.ru_stime)))
    }

    pub fn usage(who: Who) -> Usage {
        let w = match who {
            Who::Process => libc::RUSAGE_SELF,
            Who::Children => libc::RUSAGE_CHILDREN,
        };
        raw(w).unwrap_or(Usage { sys: "0.000000".into(), user: "0.000000".into() })
    }

    /// The calling thread's usage, where the OS reports it.
    pub fn thread_usage() -> Option<Usage> {
        #[cfg(target_os = "linux")]
        {
            raw(libc::RUSAGE_THREAD)
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }
}

/// Where INFO memory gets the allocator's and the OS's figures: the memory module, plus
/// the machine's total memory from /proc.
pub(crate) mod mem_source {
    pub use crate::memory::stats::{allocator_stats, rss_bytes};

    /// A `Name:  N kB` line of a /proc file, in bytes.
    fn proc_kb(path: &str, name: &str) -> usize {
        let Ok(text) = std::fs::read_to_string(path) else { return 0 };
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
            .map_or(0, |kb| kb * 1024)
    }

    pub fn total_system_memory() -> usize {
        proc_kb("/proc/meminfo", "MemTotal")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes_match_valkey() {
        assert_eq!(bytes_to_human(0), "0B");
        assert_eq!(bytes_to_human(1023), "1023B");
        assert_eq!(bytes_to_human(1024), "1.00K");
        assert_eq!(bytes_to_human(1015896), "992.09K");
        assert_eq!(bytes_to_human(12427264), "11.85M");
        assert_eq!(bytes_to_human(25276514304), "23.54G");
    }

    fn sel(words: &[&str]) -> Selection {
        let a: Vec<Bytes> = words.iter().map(|w| Bytes::copy_from_slice(w.as_bytes())).collect();
        Selection::parse(&a)
    }

    #[test]
    fn section_selection() {
        let s = sel(&[]);
        assert!(s.wants("server", true) && !s.wants("commandstats", false));
        let s = sel(&["CommandStats"]);
        assert!(s.wants("commandstats", false) && !s.wants("server", true));
        let s = sel(&["default", "commandstats"]);
        assert!(s.wants("server", true) && s.wants("commandstats", false));
        let s = sel(&["everything"]);
        assert!(s.wants("latencystats", false));
        let s = sel(&["nosuch"]);
        assert!(SECTIONS.iter().all(|&(n, d, _)| !s.wants(n, d)));
    }

    #[test]
    fn proc_values_are_read() {
        assert!(mem_source::rss_bytes() > 0);
        assert!(mem_source::total_system_memory() > 0);
    }
}
