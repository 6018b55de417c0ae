//! The server configuration: valkey.conf files, `--name value` command-line options, and the
//! logic behind CONFIG GET / SET / REWRITE.
//!
//! # Layout
//!
//! - [`Config`] (here): one typed, public field per directive; `Default` is Valkey 9.1's.
//! - `directives/`: the one static table ([`directives::all`]), split by area, of name,
//!   aliases, kind, bounds, mutability, default text, accessors and [`Support`] (what
//!   ferrokey does with the directive). File parsing, the command line, CONFIG GET,
//!   CONFIG SET and CONFIG REWRITE all read this table and nothing else.
//! - `kind.rs`: what a table row is, and the generic parse / show / rewrite per value kind.
//! - `special.rs`: directives that fit no generic kind (`save`, `bind`, `dir`, ...).
//! - `file.rs`: line rules, `include`, command-line merging, fatal errors (the `sdssplitargs`
//!   tokenizer and `sdscatrepr` quoting are `util::quote`'s).
//! - `command.rs`: CONFIG GET (glob patterns) and CONFIG SET (all-or-nothing).
//! - `rewrite.rs`: CONFIG REWRITE, keeping comments and order, written atomically.
//! - `glob.rs`: Valkey's `stringmatchlen`, shared with KEYS / SCAN MATCH.
//! - `units.rs`, `values.rs`: number formats and the typed values of enum-like directives.
//!
//! This module owns configuration only. It knows nothing of connections, the keyspace or
//! RESP: it returns Valkey's error texts as strings, and the server decides how to react to
//! a changed directive (CONFIG SET returns the names it changed).

mod command;
mod directives;
mod file;
pub mod glob;
mod kind;
mod rewrite;
mod special;
pub mod units;
mod values;

use std::path::PathBuf;
use std::sync::OnceLock;

/// Whether a name is a command of the table (as the table spells it, lower case): given by
/// the program at start-up (`set_command_names`), so that `rename-command` lines are
/// checked as they are read without this layer knowing the command table.
static COMMAND_NAMES: OnceLock<fn(&str) -> bool> = OnceLock::new();

/// Tell the configuration which command names exist (for `rename-command`).
pub fn set_command_names(known: fn(&str) -> bool) {
    let _ = COMMAND_NAMES.set(known);
}

/// Whether `name` is a command of the table; every name is when no table was given.
pub(crate) fn is_command(name: &str) -> bool {
    COMMAND_NAMES.get().is_none_or(|known| known(name))
}

pub use command::Caller;
pub use directives::{
    all as all_directives, lookup, Cluster, General, Memory, Metrics, Network, Persistence,
    Replication, Testing, Tls,
};
pub use file::{from_args, ConfigError, Origin};
pub use glob::glob_match;
pub use kind::{Arity, Base, Directive, Feature, Mutability, Support};
pub use rewrite::Written;
pub use values::{
    AclPubsubDefault, Appendfsync, EnableDebugCommand, EnableProtectedConfigs, KeyspaceEvents,
    LogFormat, LogLevel, LogTimestampFormat, MaxmemoryClients, MaxmemoryPolicy, ObufClass,
    ObufLimit, PropagationErrorBehavior, RdbVersionCheck, ReplDisklessLoad, ShutdownFlags,
    Supervised,
};

const MB: u64 = 1024 * 1024;

/// Every supported directive, typed. Field names are the directive names in snake_case, with
/// the unit last where the directive has one.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    // NETWORK
    pub port: u16,
    /// Addresses to listen on; a leading `-` marks an address that may be unavailable.
    pub bind: Vec<String>,
    /// Unix socket path; empty means none.
    pub unixsocket: String,
    /// Mode bits of the unix socket (`0o700`); 0 leaves the umask's.
    pub unixsocketperm: u32,
    pub protected_mode: bool,
    pub tcp_backlog: u32,
    pub timeout_secs: u64,
    pub tcp_keepalive_secs: u64,
    // GENERAL
    pub daemonize: bool,
    pub supervised: Supervised,
    pub pidfile: String,
    pub loglevel: LogLevel,
    pub logfile: String,
    pub databases: u32,
    pub always_show_logo: bool,
    pub set_proc_title: bool,
    pub enable_protected_configs: EnableProtectedConfigs,
    pub enable_debug_command: EnableDebugCommand,
    /// The working directory (absolute); RDB and AOF files live here.
    pub dir: PathBuf,
    // SNAPSHOTTING
    /// Save points: (seconds, changes). Empty disables automatic snapshots.
    pub save: Vec<(u64, u64)>,
    pub stop_writes_on_bgsave_error: bool,
    pub rdbcompression: bool,
    pub rdbchecksum: bool,
    pub dbfilename: String,
    // SECURITY
    /// Password of the default user; empty means none.
    pub requirepass: String,
    // CLIENTS
    pub maxclients: u32,
    // MEMORY MANAGEMENT
    pub maxmemory_bytes: u64,
    pub maxmemory_policy: MaxmemoryPolicy,
    pub maxmemory_samples: u32,
    pub maxmemory_eviction_tenacity: u32,
    pub maxmemory_clients: MaxmemoryClients,
    // LAZY FREEING
    pub lazyfree_lazy_eviction: bool,
    pub lazyfree_lazy_expire: bool,
    pub lazyfree_lazy_server_del: bool,
    pub lazyfree_lazy_user_del: bool,
    pub lazyfree_lazy_user_flush: bool,
    // THREADED I/O
    pub io_threads: u32,
    pub prefetch_batch_max_size: u32,
    // APPEND ONLY MODE
    pub appendonly: bool,
    pub appendfilename: String,
    pub appenddirname: String,
    pub appendfsync: Appendfsync,
    pub auto_aof_rewrite_percentage: u32,
    pub auto_aof_rewrite_min_size_bytes: u64,
    pub aof_load_truncated: bool,
    pub aof_use_rdb_preamble: bool,
    // CLUSTER
    pub cluster_enabled: bool,
    // SLOW LOG, LATENCY MONITOR, EVENT NOTIFICATION
    pub busy_reply_threshold_ms: u64,
    /// Microseconds (the name predates the units-last rule and others read it); -1 turns
    /// the slow log off, 0 logs every command.
    pub slowlog_log_slower_than: i64,
    pub slowlog_max_len: u64,
    pub latency_monitor_threshold_ms: u64,
    pub notify_keyspace_events: KeyspaceEvents,
    // ADVANCED CONFIG
    pub hash_max_listpack_entries: u64,
    pub hash_max_listpack_value_bytes: u64,
    /// Positive: entries per list node; -1..-5: node size 4kb..64kb.
    pub list_max_listpack_size: i32,
    pub list_compress_depth: u32,
    pub set_max_intset_entries: u64,
    pub set_max_listpack_entries: u64,
    pub set_max_listpack_value_bytes: u64,
    pub zset_max_listpack_entries: u64,
    pub zset_max_listpack_value_bytes: u64,
    pub activerehashing: bool,
    /// Indexed by [`ObufClass`]: normal, replica, pubsub.
    pub client_output_buffer_limit: [ObufLimit; 3],
    pub client_query_buffer_limit: u64,
    pub proto_max_bulk_len: u64,
    /// Server cron frequency, clamped to 1..=500.
    pub hz: u32,
    pub dynamic_hz: bool,
    pub tracking_table_max_keys: u64,
    pub lfu_log_factor: u32,
    pub lfu_decay_time_mins: u32,
    pub active_expire_effort: u32,
    // ADDED FOR VALKEY 9.1, BY AREA
    pub network: Network,
    pub general: General,
    pub persistence: Persistence,
    pub memory: Memory,
    pub replication: Replication,
    pub tls: Tls,
    pub cluster: Cluster,
    pub testing: Testing,
    // FERROKEY'S OWN
    pub metrics: Metrics,
    // NOT DIRECTIVES
    /// One message per directive that the config text set to a value without effect here
    /// ([`Support::NoEffect`]) or for a feature not there yet ([`Support::Tunes`]). Loading
    /// happens before logging is set up, so the server logs these with
    /// [`Config::log_warnings`].
    pub warnings: Vec<String>,
}

impl Default for Config {
    /// Valkey 9.1's defaults; `dir` is the current working directory.
    fn default() -> Self {
        Config {
            port: 6379,
            bind: vec!["*".to_string(), "-::*".to_string()],
            unixsocket: String::new(),
            unixsocketperm: 0,
            protected_mode: true,
            tcp_backlog: 511,
            timeout_secs: 0,
            tcp_keepalive_secs: 300,
            daemonize: false,
            supervised: Supervised::No,
            pidfile: String::new(),
            loglevel: LogLevel::Notice,
            logfile: String::new(),
            databases: 16,
            always_show_logo: false,
            set_proc_title: true,
            enable_protected_configs: EnableProtectedConfigs::No,
            enable_debug_command: EnableDebugCommand::No,
            dir: std::env::current_dir().unwrap_or_default(),
            save: vec![(3600, 1), (300, 100), (60, 10000)],
            stop_writes_on_bgsave_error: true,
            rdbcompression: true,
            rdbchecksum: true,
            dbfilename: "dump.rdb".to_string(),
            requirepass: String::new(),
            maxclients: 10000,
            maxmemory_bytes: 0,
            maxmemory_policy: MaxmemoryPolicy::Noeviction,
            maxmemory_samples: 5,
            maxmemory_eviction_tenacity: 10,
            maxmemory_clients: MaxmemoryClients::Bytes(0),
            lazyfree_lazy_eviction: true,
            lazyfree_lazy_expire: true,
            lazyfree_lazy_server_del: true,
            lazyfree_lazy_user_del: true,
            lazyfree_lazy_user_flush: true,
            io_threads: 1,
            prefetch_batch_max_size: 16,
            appendonly: false,
            appendfilename: "appendonly.aof".to_string(),
            appenddirname: "appendonlydir".to_string(),
            appendfsync: Appendfsync::Everysec,
            auto_aof_rewrite_percentage: 100,
            auto_aof_rewrite_min_size_bytes: 64 * MB,
            aof_load_truncated: true,
            aof_use_rdb_preamble: true,
            cluster_enabled: false,
            busy_reply_threshold_ms: 5000,
            slowlog_log_slower_than: 10000,
            slowlog_max_len: 128,
            latency_monitor_threshold_ms: 0,
            notify_keyspace_events: KeyspaceEvents(0),
            hash_max_listpack_entries: 512,
            hash_max_listpack_value_bytes: 64,
            list_max_listpack_size: -2,
            list_compress_depth: 0,
            set_max_intset_entries: 512,
            set_max_listpack_entries: 128,
            set_max_listpack_value_bytes: 64,
            zset_max_listpack_entries: 128,
            zset_max_listpack_value_bytes: 64,
            activerehashing: true,
            client_output_buffer_limit: [
                ObufLimit { hard_bytes: 0, soft_bytes: 0, soft_secs: 0 },
                ObufLimit { hard_bytes: 256 * MB, soft_bytes: 64 * MB, soft_secs: 60 },
                ObufLimit { hard_bytes: 32 * MB, soft_bytes: 8 * MB, soft_secs: 60 },
            ],
            client_query_buffer_limit: 1024 * MB,
            proto_max_bulk_len: 512 * MB,
            hz: 10,
            dynamic_hz: true,
            tracking_table_max_keys: 1_000_000,
            lfu_log_factor: 10,
            lfu_decay_time_mins: 1,
            active_expire_effort: 1,
            network: Network::default(),
            general: General::default(),
            persistence: Persistence::default(),
            memory: Memory::default(),
            replication: Replication::default(),
            tls: Tls::default(),
            cluster: Cluster::default(),
            testing: Testing::default(),
            metrics: Metrics::default(),
            warnings: Vec::new(),
        }
    }
}

impl Config {
    /// The output-buffer limit of one client class.
    pub fn obuf_limit(&self, class: ObufClass) -> ObufLimit {
        self.client_output_buffer_limit[class as usize]
    }

    /// Logs the warnings gathered while loading (see [`Config::warnings`]).
    pub fn log_warnings(&self) {
        for warning in &self.warnings {
            tracing::warn!("{warning}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_defaults_match_config_default() {
        let defaults = Config::default();
        for d in all_directives() {
            let mut fresh = Config::default();
            let loaded = Config::load_str(&format!("{} {}", d.name, d.default))
                .unwrap_or_else(|e| panic!("{}: {e}", d.name));
            assert_eq!(d.show(&loaded), d.show(&defaults), "{}", d.name);
            // Applying the default text on top of the defaults changes nothing.
            let value = d.parse(&split_for(d, d.default)).unwrap();
            d.apply(&mut fresh, value).unwrap();
            assert_eq!(fresh, defaults, "{}", d.name);
        }
    }

    fn split_for(d: &Directive, text: &str) -> Vec<String> {
        let args = crate::util::quote::split_args(text.as_bytes()).unwrap();
        let args: Vec<String> = args.into_iter().map(|a| String::from_utf8(a).unwrap()).collect();
        match d.arity() {
            Arity::Single => vec![args.into_iter().next().unwrap_or_default()],
            Arity::Multi => args,
        }
    }

    #[test]
    fn names_are_unique_lowercase_and_valid() {
        let mut seen = std::collections::HashSet::new();
        for d in all_directives() {
            for name in std::iter::once(&d.name).chain(d.aliases) {
                assert_eq!(*name, name.to_ascii_lowercase());
                assert!(seen.insert(*name), "duplicate {name}");
                assert!(std::ptr::eq(lookup(name).unwrap(), d));
            }
        }
        assert!(lookup("PORT").is_some());
        assert!(lookup("SLAVEOF").is_some_and(|d| d.name == "replicaof"));
        assert!(lookup("no-such-thing").is_none());
    }
}
