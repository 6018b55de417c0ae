//! Replication directives. ferrokey is a primary only so far: `replicaof` accepts only its
//! default; the primary's settings act, and the replica's are validated and stored for when
//! the replica side lands.

use super::*;
#[allow(unused_imports)]
use crate::config::kind::any_string;
#[allow(unused_imports)]
use crate::config::special;
#[allow(unused_imports)]
use crate::config::values::*;

/// The replication settings added for Valkey 9.1; the older ones are fields of `Config`.
#[derive(Debug, Clone, PartialEq)]
pub struct Replication {
    pub replicaof: String,
    pub primaryauth: String,
    pub primaryuser: String,
    pub replica_serve_stale_data: bool,
    pub replica_read_only: bool,
    pub repl_diskless_sync: bool,
    pub repl_diskless_sync_delay_secs: u32,
    pub repl_diskless_sync_max_replicas: u32,
    pub repl_diskless_load: ReplDisklessLoad,
    pub dual_channel_replication_enabled: bool,
    pub repl_ping_replica_period_secs: u32,
    pub repl_timeout_secs: u32,
    pub repl_disable_tcp_nodelay: bool,
    pub repl_backlog_size_bytes: u64,
    pub repl_backlog_ttl_secs: u64,
    pub repl_mptcp: bool,
    pub replica_priority: u32,
    pub replica_announced: bool,
    pub replica_announce_ip: String,
    pub replica_announce_port: u16,
    pub replica_ignore_maxmemory: bool,
    pub replica_ignore_disk_write_errors: bool,
    pub replica_lazy_flush: bool,
    pub min_replicas_to_write: u32,
    pub min_replicas_max_lag_secs: u32,
}

impl Default for Replication {
    fn default() -> Self {
        Replication {
            replicaof: String::new(),
            primaryauth: String::new(),
            primaryuser: String::new(),
            replica_serve_stale_data: true,
            replica_read_only: true,
            repl_diskless_sync: true,
            repl_diskless_sync_delay_secs: 5,
            repl_diskless_sync_max_replicas: 0,
            repl_diskless_load: ReplDisklessLoad::Disabled,
            dual_channel_replication_enabled: false,
            repl_ping_replica_period_secs: 10,
            repl_timeout_secs: 60,
            repl_disable_tcp_nodelay: false,
            repl_backlog_size_bytes: 10 * MB,
            repl_backlog_ttl_secs: 3600,
            repl_mptcp: false,
            replica_priority: 100,
            replica_announced: true,
            replica_announce_ip: String::new(),
            replica_announce_port: 0,
            replica_ignore_maxmemory: true,
            replica_ignore_disk_write_errors: false,
            replica_lazy_flush: true,
            min_replicas_to_write: 0,
            min_replicas_max_lag_secs: 10,
        }
    }
}

pub(super) static ROWS: &[Directive] = &[
    // Added for Valkey 9.1.
    special("replicaof", Immutable, "\"\"", &special::REPLICAOF).aliases(&["slaveof"]),
    string(
        "primaryauth",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.replication.primaryauth,
        |c, v| c.replication.primaryauth = v,
    )
    .aliases(&["masterauth"]),
    string(
        "primaryuser",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.replication.primaryuser,
        |c, v| c.replication.primaryuser = v,
    )
    .aliases(&["masteruser"]),
    boolean(
        "replica-serve-stale-data",
        Mutable,
        "yes",
        |c| c.replication.replica_serve_stale_data,
        |c, v| c.replication.replica_serve_stale_data = v,
    )
    .aliases(&["slave-serve-stale-data"]),
    boolean(
        "replica-read-only",
        Mutable,
        "yes",
        |c| c.replication.replica_read_only,
        |c, v| c.replication.replica_read_only = v,
    )
    .aliases(&["slave-read-only"]),
    boolean(
        "repl-diskless-sync",
        Mutable,
        "yes",
        |c| c.replication.repl_diskless_sync,
        |c, v| c.replication.repl_diskless_sync = v,
    ),
    int(
        "repl-diskless-sync-delay",
        Mutable,
        0,
        INT_MAX,
        "5",
        |c| c.replication.repl_diskless_sync_delay_secs.into(),
        |c, v| c.replication.repl_diskless_sync_delay_secs = v as u32,
    ),
    int(
        "repl-diskless-sync-max-replicas",
        Mutable,
        0,
        INT_MAX,
        "0",
        |c| c.replication.repl_diskless_sync_max_replicas.into(),
        |c, v| c.replication.repl_diskless_sync_max_replicas = v as u32,
    ),
    choice(
        "repl-diskless-load",
        Mutable,
        ReplDisklessLoad::NAMES,
        "disabled",
        |c| c.replication.repl_diskless_load as usize,
        |c, i| c.replication.repl_diskless_load = ReplDisklessLoad::ALL[i],
    ),
    boolean(
        "dual-channel-replication-enabled",
        Mutable,
        "no",
        |c| c.replication.dual_channel_replication_enabled,
        |c, v| c.replication.dual_channel_replication_enabled = v,
    )
    .support(Tunes(Feature::Replication)),
    int(
        "repl-ping-replica-period",
        Mutable,
        1,
        INT_MAX,
        "10",
        |c| c.replication.repl_ping_replica_period_secs.into(),
        |c, v| c.replication.repl_ping_replica_period_secs = v as u32,
    )
    .aliases(&["repl-ping-slave-period"]),
    int(
        "repl-timeout",
        Mutable,
        1,
        INT_MAX,
        "60",
        |c| c.replication.repl_timeout_secs.into(),
        |c, v| c.replication.repl_timeout_secs = v as u32,
    ),
    boolean(
        "repl-disable-tcp-nodelay",
        Mutable,
        "no",
        |c| c.replication.repl_disable_tcp_nodelay,
        |c, v| c.replication.repl_disable_tcp_nodelay = v,
    )
    .support(Tunes(Feature::Replication)),
    memory(
        "repl-backlog-size",
        1,
        LONG_MAX as u64,
        "10mb",
        |c| c.replication.repl_backlog_size_bytes,
        |c, v| c.replication.repl_backlog_size_bytes = v,
    ),
    int(
        "repl-backlog-ttl",
        Mutable,
        0,
        LONG_MAX,
        "3600",
        |c| c.replication.repl_backlog_ttl_secs as i64,
        |c, v| c.replication.repl_backlog_ttl_secs = v as u64,
    ),
    boolean(
        "repl-mptcp",
        Immutable,
        "no",
        |c| c.replication.repl_mptcp,
        |c, v| c.replication.repl_mptcp = v,
    )
    .support(Gate(Feature::Mptcp)),
    int(
        "replica-priority",
        Mutable,
        0,
        INT_MAX,
        "100",
        |c| c.replication.replica_priority.into(),
        |c, v| c.replication.replica_priority = v as u32,
    )
    .aliases(&["slave-priority"])
    .support(Tunes(Feature::Replication)),
    boolean(
        "replica-announced",
        Mutable,
        "yes",
        |c| c.replication.replica_announced,
        |c, v| c.replication.replica_announced = v,
    )
    .support(Tunes(Feature::Replication)),
    string(
        "replica-announce-ip",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.replication.replica_announce_ip,
        |c, v| c.replication.replica_announce_ip = v,
    )
    .aliases(&["slave-announce-ip"]),
    int(
        "replica-announce-port",
        Mutable,
        0,
        65535,
        "0",
        |c| c.replication.replica_announce_port.into(),
        |c, v| c.replication.replica_announce_port = v as u16,
    )
    .aliases(&["slave-announce-port"]),
    boolean(
        "replica-ignore-maxmemory",
        Mutable,
        "yes",
        |c| c.replication.replica_ignore_maxmemory,
        |c, v| c.replication.replica_ignore_maxmemory = v,
    )
    .aliases(&["slave-ignore-maxmemory"]),
    boolean(
        "replica-ignore-disk-write-errors",
        Mutable,
        "no",
        |c| c.replication.replica_ignore_disk_write_errors,
        |c, v| c.replication.replica_ignore_disk_write_errors = v,
    )
    .support(Tunes(Feature::Replication)),
    boolean(
        "replica-lazy-flush",
        Mutable,
        "yes",
        |c| c.replication.replica_lazy_flush,
        |c, v| c.replication.replica_lazy_flush = v,
    )
    .aliases(&["slave-lazy-flush"]),
    int(
        "min-replicas-to-write",
        Mutable,
        0,
        INT_MAX,
        "0",
        |c| c.replication.min_replicas_to_write.into(),
        |c, v| c.replication.min_replicas_to_write = v as u32,
    )
    .aliases(&["min-slaves-to-write"]),
    int(
        "min-replicas-max-lag",
        Mutable,
        0,
        INT_MAX,
        "10",
        |c| c.replication.min_replicas_max_lag_secs.into(),
        |c, v| c.replication.min_replicas_max_lag_secs = v as u32,
    )
    .aliases(&["min-slaves-max-lag"]),
];
