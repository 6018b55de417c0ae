//! The directive table: every supported directive, once, in valkey.conf's order. The config
//! file, the command line, CONFIG GET, CONFIG SET and CONFIG REWRITE all read this table.
//!
//! Bounds and defaults are Valkey 8's (`standardConfig static_configs[]` in config.c). The
//! `default` column is the valkey.conf text; a unit test checks that it parses to exactly
//! `Config::default()`.

use super::kind::{any_string, Base, Directive, Kind, Mutability, Special};
use super::special;
use super::values::{
    Appendfsync, EnableDebugCommand, EnableProtectedConfigs, LogLevel, MaxmemoryPolicy, Supervised,
};
use super::Config;

use Mutability::{Immutable, Mutable, Protected};

const INT_MAX: i64 = i32::MAX as i64;
const UINT_MAX: i64 = u32::MAX as i64;
const LONG_MAX: i64 = i64::MAX;
const MB: u64 = 1024 * 1024;

const fn boolean(
    name: &'static str,
    mutability: Mutability,
    default: &'static str,
    get: fn(&Config) -> bool,
    set: fn(&mut Config, bool),
) -> Directive {
    Directive { name, aliases: &[], mutability, default, kind: Kind::Bool { get, set } }
}

const fn int(
    name: &'static str,
    mutability: Mutability,
    min: i64,
    max: i64,
    default: &'static str,
    get: fn(&Config) -> i64,
    set: fn(&mut Config, i64),
) -> Directive {
    let kind = Kind::Int { min, max, base: Base::Decimal, get, set };
    Directive { name, aliases: &[], mutability, default, kind }
}

const fn memory(
    name: &'static str,
    min: u64,
    max: u64,
    default: &'static str,
    get: fn(&Config) -> u64,
    set: fn(&mut Config, u64),
) -> Directive {
    let kind = Kind::Memory { min, max, get, set };
    Directive { name, aliases: &[], mutability: Mutable, default, kind }
}

const fn choice(
    name: &'static str,
    mutability: Mutability,
    names: &'static [&'static str],
    default: &'static str,
    get: fn(&Config) -> usize,
    set: fn(&mut Config, usize),
) -> Directive {
    Directive { name, aliases: &[], mutability, default, kind: Kind::Enum { names, get, set } }
}

const fn string(
    name: &'static str,
    mutability: Mutability,
    default: &'static str,
    check: fn(&str) -> Result<(), &'static str>,
    get: fn(&Config) -> &str,
    set: fn(&mut Config, String),
) -> Directive {
    Directive { name, aliases: &[], mutability, default, kind: Kind::Str { check, get, set } }
}

const fn special(
    name: &'static str,
    mutability: Mutability,
    default: &'static str,
    special: &'static Special,
) -> Directive {
    Directive { name, aliases: &[], mutability, default, kind: Kind::Special(special) }
}

/// Every supported directive. Aliases are older names Valkey still accepts.
pub static DIRECTIVES: &[Directive] = &[
    // NETWORK
    special("bind", Mutable, "* -::*", &special::BIND),
    boolean("protected-mode", Mutable, "yes", |c| c.protected_mode, |c, v| c.protected_mode = v),
    int("port", Mutable, 0, 65535, "6379", |c| c.port.into(), |c, v| c.port = v as u16),
    int(
        "tcp-backlog",
        Immutable,
        0,
        INT_MAX,
        "511",
        |c| c.tcp_backlog.into(),
        |c, v| c.tcp_backlog = v as u32,
    ),
    string("unixsocket", Immutable, "\"\"", any_string, |c| &c.unixsocket, |c, v| c.unixsocket = v),
    Directive {
        name: "unixsocketperm",
        aliases: &[],
        mutability: Immutable,
        default: "0",
        kind: Kind::Int {
            min: 0,
            max: 0o777,
            base: Base::Octal,
            get: |c| c.unixsocketperm.into(),
            set: |c, v| c.unixsocketperm = v as u32,
        },
    },
    int(
        "timeout",
        Mutable,
        0,
        INT_MAX,
        "0",
        |c| c.timeout_secs as i64,
        |c, v| c.timeout_secs = v as u64,
    ),
    int(
        "tcp-keepalive",
        Mutable,
        0,
        INT_MAX,
        "300",
        |c| c.tcp_keepalive_secs as i64,
        |c, v| c.tcp_keepalive_secs = v as u64,
    ),
    // GENERAL
    boolean("daemonize", Immutable, "no", |c| c.daemonize, |c, v| c.daemonize = v),
    choice(
        "supervised",
        Immutable,
        Supervised::NAMES,
        "no",
        |c| c.supervised as usize,
        |c, i| c.supervised = Supervised::ALL[i],
    ),
    string("pidfile", Immutable, "\"\"", any_string, |c| &c.pidfile, |c, v| c.pidfile = v),
    choice(
        "loglevel",
        Mutable,
        LogLevel::NAMES,
        "notice",
        |c| c.loglevel as usize,
        |c, i| c.loglevel = LogLevel::ALL[i],
    ),
    string("logfile", Immutable, "\"\"", any_string, |c| &c.logfile, |c, v| c.logfile = v),
    int(
        "databases",
        Immutable,
        1,
        INT_MAX,
        "16",
        |c| c.databases.into(),
        |c, v| c.databases = v as u32,
    ),
    boolean(
        "always-show-logo",
        Immutable,
        "no",
        |c| c.always_show_logo,
        |c, v| c.always_show_logo = v,
    ),
    boolean("set-proc-title", Immutable, "yes", |c| c.set_proc_title, |c, v| c.set_proc_title = v),
    choice(
        "enable-protected-configs",
        Immutable,
        EnableProtectedConfigs::NAMES,
        "no",
        |c| c.enable_protected_configs as usize,
        |c, i| c.enable_protected_configs = EnableProtectedConfigs::ALL[i],
    ),
    choice(
        "enable-debug-command",
        Immutable,
        EnableDebugCommand::NAMES,
        "no",
        |c| c.enable_debug_command as usize,
        |c, i| c.enable_debug_command = EnableDebugCommand::ALL[i],
    ),
    // SNAPSHOTTING
    special("save", Mutable, "3600 1 300 100 60 10000", &special::SAVE),
    boolean(
        "stop-writes-on-bgsave-error",
        Mutable,
        "yes",
        |c| c.stop_writes_on_bgsave_error,
        |c, v| c.stop_writes_on_bgsave_error = v,
    ),
    boolean("rdbcompression", Mutable, "yes", |c| c.rdbcompression, |c, v| c.rdbcompression = v),
    boolean("rdbchecksum", Immutable, "yes", |c| c.rdbchecksum, |c, v| c.rdbchecksum = v),
    string(
        "dbfilename",
        Protected,
        "dump.rdb",
        special::check_dbfilename,
        |c| &c.dbfilename,
        |c, v| c.dbfilename = v,
    ),
    special("dir", Protected, "./", &special::DIR),
    // SECURITY
    string(
        "requirepass",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.requirepass,
        |c, v| c.requirepass = v,
    ),
    // CLIENTS
    int(
        "maxclients",
        Mutable,
        1,
        UINT_MAX,
        "10000",
        |c| c.maxclients.into(),
        |c, v| c.maxclients = v as u32,
    ),
    // MEMORY MANAGEMENT
    memory("maxmemory", 0, u64::MAX, "0", |c| c.maxmemory_bytes, |c, v| c.maxmemory_bytes = v),
    choice(
        "maxmemory-policy",
        Mutable,
        MaxmemoryPolicy::NAMES,
        "noeviction",
        |c| c.maxmemory_policy as usize,
        |c, i| c.maxmemory_policy = MaxmemoryPolicy::ALL[i],
    ),
    int(
        "maxmemory-samples",
        Mutable,
        1,
        64,
        "5",
        |c| c.maxmemory_samples.into(),
        |c, v| c.maxmemory_samples = v as u32,
    ),
    int(
        "maxmemory-eviction-tenacity",
        Mutable,
        0,
        100,
        "10",
        |c| c.maxmemory_eviction_tenacity.into(),
        |c, v| c.maxmemory_eviction_tenacity = v as u32,
    ),
    special("maxmemory-clients", Mutable, "0", &special::MAXMEMORY_CLIENTS),
    // LAZY FREEING
    boolean(
        "lazyfree-lazy-eviction",
        Mutable,
        "no",
        |c| c.lazyfree_lazy_eviction,
        |c, v| c.lazyfree_lazy_eviction = v,
    ),
    boolean(
        "lazyfree-lazy-expire",
        Mutable,
        "no",
        |c| c.lazyfree_lazy_expire,
        |c, v| c.lazyfree_lazy_expire = v,
    ),
    boolean(
        "lazyfree-lazy-server-del",
        Mutable,
        "no",
        |c| c.lazyfree_lazy_server_del,
        |c, v| c.lazyfree_lazy_server_del = v,
    ),
    boolean(
        "lazyfree-lazy-user-del",
        Mutable,
        "no",
        |c| c.lazyfree_lazy_user_del,
        |c, v| c.lazyfree_lazy_user_del = v,
    ),
    boolean(
        "lazyfree-lazy-user-flush",
        Mutable,
        "no",
        |c| c.lazyfree_lazy_user_flush,
        |c, v| c.lazyfree_lazy_user_flush = v,
    ),
    // THREADED I/O
    int(
        "io-threads",
        Immutable,
        1,
        128,
        "1",
        |c| c.io_threads.into(),
        |c, v| c.io_threads = v as u32,
    ),
    int(
        "prefetch-batch-max-size",
        Mutable,
        0,
        128,
        "16",
        |c| c.prefetch_batch_max_size.into(),
        |c, v| c.prefetch_batch_max_size = v as u32,
    ),
    // APPEND ONLY MODE
    boolean("appendonly", Mutable, "no", |c| c.appendonly, |c, v| c.appendonly = v),
    string(
        "appendfilename",
        Immutable,
        "appendonly.aof",
        special::check_appendfilename,
        |c| &c.appendfilename,
        |c, v| c.appendfilename = v,
    ),
    string(
        "appenddirname",
        Immutable,
        "appendonlydir",
        special::check_appenddirname,
        |c| &c.appenddirname,
        |c, v| c.appenddirname = v,
    ),
    choice(
        "appendfsync",
        Mutable,
        Appendfsync::NAMES,
        "everysec",
        |c| c.appendfsync as usize,
        |c, i| c.appendfsync = Appendfsync::ALL[i],
    ),
    int(
        "auto-aof-rewrite-percentage",
        Mutable,
        0,
        INT_MAX,
        "100",
        |c| c.auto_aof_rewrite_percentage.into(),
        |c, v| c.auto_aof_rewrite_percentage = v as u32,
    ),
    memory(
        "auto-aof-rewrite-min-size",
        0,
        LONG_MAX as u64,
        "64mb",
        |c| c.auto_aof_rewrite_min_size_bytes,
        |c, v| c.auto_aof_rewrite_min_size_bytes = v,
    ),
    boolean(
        "aof-load-truncated",
        Mutable,
        "yes",
        |c| c.aof_load_truncated,
        |c, v| c.aof_load_truncated = v,
    ),
    boolean(
        "aof-use-rdb-preamble",
        Mutable,
        "yes",
        |c| c.aof_use_rdb_preamble,
        |c, v| c.aof_use_rdb_preamble = v,
    ),
    // CLUSTER
    boolean(
        "cluster-enabled",
        Immutable,
        "no",
        |c| c.cluster_enabled,
        |c, v| c.cluster_enabled = v,
    ),
    // SLOW LOG, LATENCY MONITOR, EVENT NOTIFICATION
    int(
        "busy-reply-threshold",
        Mutable,
        0,
        LONG_MAX,
        "5000",
        |c| c.busy_reply_threshold_ms as i64,
        |c, v| c.busy_reply_threshold_ms = v as u64,
    )
    .aliases(&["lua-time-limit"]),
    int(
        "slowlog-log-slower-than",
        Mutable,
        -1,
        LONG_MAX,
        "10000",
        |c| c.slowlog_log_slower_than,
        |c, v| c.slowlog_log_slower_than = v,
    ),
    int(
        "slowlog-max-len",
        Mutable,
        0,
        LONG_MAX,
        "128",
        |c| c.slowlog_max_len as i64,
        |c, v| c.slowlog_max_len = v as u64,
    ),
    int(
        "latency-monitor-threshold",
        Mutable,
        0,
        LONG_MAX,
        "0",
        |c| c.latency_monitor_threshold_ms as i64,
        |c, v| c.latency_monitor_threshold_ms = v as u64,
    ),
    special("notify-keyspace-events", Mutable, "\"\"", &special::NOTIFY_KEYSPACE_EVENTS),
    // ADVANCED CONFIG
    int(
        "hash-max-listpack-entries",
        Mutable,
        0,
        LONG_MAX,
        "512",
        |c| c.hash_max_listpack_entries as i64,
        |c, v| c.hash_max_listpack_entries = v as u64,
    )
    .aliases(&["hash-max-ziplist-entries"]),
    memory(
        "hash-max-listpack-value",
        0,
        LONG_MAX as u64,
        "64",
        |c| c.hash_max_listpack_value_bytes,
        |c, v| c.hash_max_listpack_value_bytes = v,
    )
    .aliases(&["hash-max-ziplist-value"]),
    int(
        "list-max-listpack-size",
        Mutable,
        i32::MIN as i64,
        INT_MAX,
        "-2",
        |c| c.list_max_listpack_size.into(),
        |c, v| c.list_max_listpack_size = v as i32,
    )
    .aliases(&["list-max-ziplist-size"]),
    int(
        "list-compress-depth",
        Mutable,
        0,
        INT_MAX,
        "0",
        |c| c.list_compress_depth.into(),
        |c, v| c.list_compress_depth = v as u32,
    ),
    int(
        "set-max-intset-entries",
        Mutable,
        0,
        LONG_MAX,
        "512",
        |c| c.set_max_intset_entries as i64,
        |c, v| c.set_max_intset_entries = v as u64,
    ),
    int(
        "set-max-listpack-entries",
        Mutable,
        0,
        LONG_MAX,
        "128",
        |c| c.set_max_listpack_entries as i64,
        |c, v| c.set_max_listpack_entries = v as u64,
    ),
    int(
        "set-max-listpack-value",
        Mutable,
        0,
        LONG_MAX,
        "64",
        |c| c.set_max_listpack_value_bytes as i64,
        |c, v| c.set_max_listpack_value_bytes = v as u64,
    ),
    int(
        "zset-max-listpack-entries",
        Mutable,
        0,
        LONG_MAX,
        "128",
        |c| c.zset_max_listpack_entries as i64,
        |c, v| c.zset_max_listpack_entries = v as u64,
    )
    .aliases(&["zset-max-ziplist-entries"]),
    memory(
        "zset-max-listpack-value",
        0,
        LONG_MAX as u64,
        "64",
        |c| c.zset_max_listpack_value_bytes,
        |c, v| c.zset_max_listpack_value_bytes = v,
    )
    .aliases(&["zset-max-ziplist-value"]),
    boolean("activerehashing", Mutable, "yes", |c| c.activerehashing, |c, v| c.activerehashing = v),
    special(
        "client-output-buffer-limit",
        Mutable,
        "normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60",
        &special::CLIENT_OUTPUT_BUFFER_LIMIT,
    ),
    memory(
        "client-query-buffer-limit",
        MB,
        LONG_MAX as u64,
        "1gb",
        |c| c.client_query_buffer_limit,
        |c, v| c.client_query_buffer_limit = v,
    ),
    memory(
        "proto-max-bulk-len",
        MB,
        LONG_MAX as u64,
        "512mb",
        |c| c.proto_max_bulk_len,
        |c, v| c.proto_max_bulk_len = v,
    ),
    // Valkey accepts any non-negative hz and clamps it: hz is a hint.
    int("hz", Mutable, 0, INT_MAX, "10", |c| c.hz.into(), |c, v| c.hz = v.clamp(1, 500) as u32),
    boolean("dynamic-hz", Mutable, "yes", |c| c.dynamic_hz, |c, v| c.dynamic_hz = v),
    int(
        "tracking-table-max-keys",
        Mutable,
        0,
        LONG_MAX,
        "1000000",
        |c| c.tracking_table_max_keys as i64,
        |c, v| c.tracking_table_max_keys = v as u64,
    ),
    int(
        "lfu-log-factor",
        Mutable,
        0,
        INT_MAX,
        "10",
        |c| c.lfu_log_factor.into(),
        |c, v| c.lfu_log_factor = v as u32,
    ),
    int(
        "lfu-decay-time",
        Mutable,
        0,
        INT_MAX,
        "1",
        |c| c.lfu_decay_time_mins.into(),
        |c, v| c.lfu_decay_time_mins = v as u32,
    ),
    int(
        "active-expire-effort",
        Mutable,
        1,
        10,
        "1",
        |c| c.active_expire_effort.into(),
        |c, v| c.active_expire_effort = v as u32,
    ),
];

/// Finds a directive by name or alias, case-insensitively.
pub fn lookup(name: &str) -> Option<&'static Directive> {
    DIRECTIVES.iter().find(|d| d.is_named(name))
}

/// Directives of redis-server 7.0 and Valkey 8 that tune what this server does not have
/// (replication, active defragmentation, kernel and allocator knobs, fsync pacing, crash
/// and shutdown behaviour) or encodings it does not expose. Stock config files set them,
/// so the file parser accepts them with any arguments, records a warning and ignores them;
/// CONFIG REWRITE keeps their lines; CONFIG GET and CONFIG SET do not know them.
///
/// Directives whose loss would change what clients see or weaken security (`replicaof`,
/// `masterauth`, `min-replicas-to-write`, `user`, `aclfile`, `tls-*`, `loadmodule`, ...)
/// are not listed: they stay fatal, as every other unknown name.
pub(crate) static IGNORED: &[&str] = &[
    // Replication.
    "repl-backlog-size",
    "repl-backlog-ttl",
    "repl-disable-tcp-nodelay",
    "repl-diskless-load",
    "repl-diskless-sync",
    "repl-diskless-sync-delay",
    "repl-diskless-sync-max-replicas",
    "repl-ping-replica-period",
    "repl-ping-slave-period",
    "repl-timeout",
    "replica-announced",
    "replica-announce-ip",
    "slave-announce-ip",
    "replica-announce-port",
    "slave-announce-port",
    "replica-ignore-disk-write-errors",
    "replica-ignore-maxmemory",
    "slave-ignore-maxmemory",
    "replica-lazy-flush",
    "slave-lazy-flush",
    "replica-priority",
    "slave-priority",
    "replica-read-only",
    "slave-read-only",
    "replica-serve-stale-data",
    "slave-serve-stale-data",
    "dual-channel-replication-enabled",
    // Memory, CPU and kernel.
    "activedefrag",
    "active-defrag-cycle-max",
    "active-defrag-cycle-min",
    "active-defrag-ignore-bytes",
    "active-defrag-max-scan-fields",
    "active-defrag-threshold-lower",
    "active-defrag-threshold-upper",
    "jemalloc-bg-thread",
    "oom-score-adj",
    "oom-score-adj-values",
    "disable-thp",
    "server_cpulist",
    "bio_cpulist",
    "aof_rewrite_cpulist",
    "bgsave_cpulist",
    "io-threads-do-reads",
    // Persistence pacing.
    "aof-rewrite-incremental-fsync",
    "rdb-save-incremental-fsync",
    "aof-timestamp-enabled",
    "aof-disable-auto-gc",
    "rdb-del-sync-files",
    "no-appendfsync-on-rewrite",
    // Encodings and sizes of types this server stores its own way.
    "hll-sparse-max-bytes",
    "stream-node-max-bytes",
    "stream-node-max-entries",
    // Diagnostics, process and shutdown.
    "acllog-max-len",
    "latency-tracking",
    "latency-tracking-info-percentiles",
    "proc-title-template",
    "crash-log-enabled",
    "crash-memcheck-enabled",
    "shutdown-on-sigint",
    "shutdown-on-sigterm",
    "shutdown-timeout",
    "ignore-warnings",
    "enable-module-command",
];

/// Whether `name` (any case) is accepted in a config file and ignored (see [`IGNORED`]).
pub(crate) fn is_ignored(name: &str) -> bool {
    IGNORED.iter().any(|n| n.eq_ignore_ascii_case(name))
}

/// Whether `name` is a directive that only the file parser knows (it is not in the table):
/// `include`, `rename-command` and the ignored directives.
pub(crate) fn is_file_only(name: &str) -> bool {
    ["include", "rename-command"].iter().any(|n| n.eq_ignore_ascii_case(name)) || is_ignored(name)
}
