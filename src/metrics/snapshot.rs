//! The figures one scrape exports: a plain struct of numbers (and command and error names),
//! filled by the main thread from what INFO reports (`commands::metrics`), completed by
//! the endpoint thread with what any thread can read ([`ProcessFigures`]) and its own
//! counters ([`EndpointFigures`]), then rendered by [`super::exposition`].

/// Everything a scrape exports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    pub uptime_secs: i64,
    /// Unix time of the server's start.
    pub start_time_secs: i64,
    pub connected_clients: u64,
    pub max_clients: u64,
    /// Clients blocked on a command or held by CLIENT PAUSE (INFO's `blocked_clients`).
    pub blocked_clients: u64,
    pub pubsub_clients: u64,
    pub tracking_clients: u64,
    pub memory_used_bytes: u64,
    pub memory_peak_bytes: u64,
    /// `maxmemory`; 0 when unlimited.
    pub memory_max_bytes: u64,
    pub commands_processed: u64,
    pub connections_received: u64,
    pub rejected_connections: u64,
    pub net_input_bytes: u64,
    pub net_output_bytes: u64,
    pub keyspace_hits: u64,
    pub keyspace_misses: u64,
    pub expired_keys: u64,
    pub evicted_keys: u64,
    pub error_replies: u64,
    pub pubsub_channels: u64,
    pub pubsub_patterns: u64,
    pub pubsub_shard_channels: u64,
    /// Databases with keys, and always db 0.
    pub dbs: Vec<DbFigures>,
    /// Commands called, rejected or failed at least once.
    pub commands: Vec<CommandFigures>,
    /// Error replies by their first word (`ERR`, `WRONGTYPE`, ...), INFO's errorstats.
    pub errors: Vec<(String, u64)>,
    /// Per-command latency histograms (`latency-tracking yes`).
    pub command_histograms: Vec<CommandHistogram>,
    pub replication: ReplicationFigures,
    pub persistence: PersistenceFigures,
    pub process: ProcessFigures,
    pub endpoint: EndpointFigures,
}

/// One database.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DbFigures {
    pub index: u32,
    pub keys: u64,
    /// Keys with a time to live.
    pub keys_expiring: u64,
    /// Keys holding a hash with a field that has a TTL (INFO `keys_with_volatile_items`).
    pub keys_with_volatile_items: u64,
}

/// One command's counters (INFO commandstats).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CommandFigures {
    /// As INFO commandstats names it: `get`, `config|set`.
    pub name: &'static str,
    pub calls: u64,
    pub usec: u64,
    pub rejected_calls: u64,
    pub failed_calls: u64,
}

/// One command's latency histogram, exported as a Prometheus histogram
/// (`ferrokey_command_latency_seconds{cmd=...}`) by
/// [`super::exposition::command_histograms`].
///
/// `commands::metrics::snapshot` copies them from the server's own (LATENCY HISTOGRAM's
/// power-of-two levels).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommandHistogram {
    pub name: &'static str,
    /// (upper bound in seconds, calls in this bucket: longer than the previous bound and
    /// at most this one), in increasing order of bound, all finite; the `+Inf` bucket
    /// (the calls longer than the last bound) is derived from `count`.
    pub buckets: Vec<(f64, u64)>,
    pub sum_secs: f64,
    pub count: u64,
}

/// Replication, as INFO replication reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReplicationFigures {
    /// A replica (follows a primary) rather than a primary.
    pub is_replica: bool,
    /// On a replica: whether the link to its primary is up.
    pub link_up: bool,
    pub connected_replicas: u64,
    /// `master_repl_offset`.
    pub offset: i64,
}

/// RDB and AOF, as INFO persistence reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PersistenceFigures {
    pub changes_since_last_save: u64,
    /// Unix time of the last successful save.
    pub last_save_time_secs: i64,
    pub bgsave_in_progress: bool,
    pub last_bgsave_ok: bool,
    pub rdb_saves: u64,
    pub aof_enabled: bool,
    pub aof_rewrite_in_progress: bool,
    pub aof_last_write_ok: bool,
    pub aof_rewrites: u64,
}

/// What the endpoint thread reads itself: process-wide, from any thread.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcessFigures {
    pub cpu_user_secs: f64,
    pub cpu_sys_secs: f64,
    pub rss_bytes: u64,
}

/// The endpoint's own counters, kept by its thread.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EndpointFigures {
    /// `GET /metrics` answered with the figures, this one included.
    pub scrapes: u64,
    /// Connections refused (503) because `metrics-max-clients` were open.
    pub refused_connections: u64,
}
