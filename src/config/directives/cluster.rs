//! Cluster directives. ferrokey has no cluster mode yet: `cluster-enabled` accepts only
//! `no`; the rest are validated and stored.

use super::*;
#[allow(unused_imports)]
use crate::config::kind::any_string;
#[allow(unused_imports)]
use crate::config::special;
#[allow(unused_imports)]
use crate::config::values::*;

/// The cluster settings added for Valkey 9.1; the older ones are fields of `Config`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    pub cluster_config_file: String,
    pub cluster_port: u16,
    pub cluster_databases: u32,
    pub cluster_node_timeout_ms: u64,
    pub cluster_replica_validity_factor: u32,
    pub cluster_migration_barrier: u32,
    pub cluster_allow_replica_migration: bool,
    pub cluster_require_full_coverage: bool,
    pub cluster_replica_no_failover: bool,
    pub cluster_allow_reads_when_down: bool,
    pub cluster_allow_pubsubshard_when_down: bool,
    pub cluster_link_sendbuf_limit_bytes: u64,
    pub cluster_announce_hostname: String,
    pub cluster_announce_human_nodename: String,
    pub cluster_announce_ip: String,
    pub cluster_announce_client_ipv4: String,
    pub cluster_announce_client_ipv6: String,
    pub cluster_announce_port: u16,
    pub cluster_announce_bus_port: u16,
    pub cluster_announce_tls_port: u16,
    pub cluster_announce_client_port: u16,
    pub cluster_announce_client_tls_port: u16,
    pub cluster_preferred_endpoint_type: ClusterPreferredEndpointType,
    pub cluster_config_save_behavior: ClusterConfigSaveBehavior,
    pub cluster_blacklist_ttl_secs: i64,
    pub cluster_manual_failover_timeout_ms: u32,
    pub cluster_slot_stats_enabled: bool,
    pub cluster_slot_migration_log_max_len: u64,
    pub slot_migration_max_failover_repl_bytes: i64,
}

impl Default for Cluster {
    fn default() -> Self {
        Cluster {
            cluster_config_file: "nodes.conf".to_string(),
            cluster_port: 0,
            cluster_databases: 1,
            cluster_node_timeout_ms: 15000,
            cluster_replica_validity_factor: 10,
            cluster_migration_barrier: 1,
            cluster_allow_replica_migration: true,
            cluster_require_full_coverage: true,
            cluster_replica_no_failover: false,
            cluster_allow_reads_when_down: false,
            cluster_allow_pubsubshard_when_down: true,
            cluster_link_sendbuf_limit_bytes: 0,
            cluster_announce_hostname: String::new(),
            cluster_announce_human_nodename: String::new(),
            cluster_announce_ip: String::new(),
            cluster_announce_client_ipv4: String::new(),
            cluster_announce_client_ipv6: String::new(),
            cluster_announce_port: 0,
            cluster_announce_bus_port: 0,
            cluster_announce_tls_port: 0,
            cluster_announce_client_port: 0,
            cluster_announce_client_tls_port: 0,
            cluster_preferred_endpoint_type: ClusterPreferredEndpointType::Ip,
            cluster_config_save_behavior: ClusterConfigSaveBehavior::Sync,
            cluster_blacklist_ttl_secs: 60,
            cluster_manual_failover_timeout_ms: 5000,
            cluster_slot_stats_enabled: false,
            cluster_slot_migration_log_max_len: 1000,
            slot_migration_max_failover_repl_bytes: 0,
        }
    }
}

pub(super) static ROWS: &[Directive] = &[
    // CLUSTER
    boolean(
        "cluster-enabled",
        Immutable,
        "no",
        |c| c.cluster_enabled,
        |c, v| c.cluster_enabled = v,
    )
    .support(Gate(Feature::Cluster)),
    // Added for Valkey 9.1.
    string(
        "cluster-config-file",
        Immutable,
        "nodes.conf",
        any_string,
        |c| &c.cluster.cluster_config_file,
        |c, v| c.cluster.cluster_config_file = v,
    )
    .support(Tunes(Feature::Cluster)),
    int(
        "cluster-port",
        Immutable,
        0,
        65535,
        "0",
        |c| c.cluster.cluster_port.into(),
        |c, v| c.cluster.cluster_port = v as u16,
    )
    .support(Tunes(Feature::Cluster)),
    int(
        "cluster-databases",
        Immutable,
        1,
        INT_MAX,
        "1",
        |c| c.cluster.cluster_databases.into(),
        |c, v| c.cluster.cluster_databases = v as u32,
    )
    .support(Tunes(Feature::Cluster)),
    int(
        "cluster-node-timeout",
        Mutable,
        0,
        LONG_MAX,
        "15000",
        |c| c.cluster.cluster_node_timeout_ms as i64,
        |c, v| c.cluster.cluster_node_timeout_ms = v as u64,
    )
    .support(Tunes(Feature::Cluster)),
    int(
        "cluster-replica-validity-factor",
        Mutable,
        0,
        INT_MAX,
        "10",
        |c| c.cluster.cluster_replica_validity_factor.into(),
        |c, v| c.cluster.cluster_replica_validity_factor = v as u32,
    )
    .aliases(&["cluster-slave-validity-factor"])
    .support(Tunes(Feature::Cluster)),
    int(
        "cluster-migration-barrier",
        Mutable,
        0,
        INT_MAX,
        "1",
        |c| c.cluster.cluster_migration_barrier.into(),
        |c, v| c.cluster.cluster_migration_barrier = v as u32,
    )
    .support(Tunes(Feature::Cluster)),
    boolean(
        "cluster-allow-replica-migration",
        Mutable,
        "yes",
        |c| c.cluster.cluster_allow_replica_migration,
        |c, v| c.cluster.cluster_allow_replica_migration = v,
    )
    .support(Tunes(Feature::Cluster)),
    boolean(
        "cluster-require-full-coverage",
        Mutable,
        "yes",
        |c| c.cluster.cluster_require_full_coverage,
        |c, v| c.cluster.cluster_require_full_coverage = v,
    )
    .support(Tunes(Feature::Cluster)),
    boolean(
        "cluster-replica-no-failover",
        Mutable,
        "no",
        |c| c.cluster.cluster_replica_no_failover,
        |c, v| c.cluster.cluster_replica_no_failover = v,
    )
    .aliases(&["cluster-slave-no-failover"])
    .support(Tunes(Feature::Cluster)),
    boolean(
        "cluster-allow-reads-when-down",
        Mutable,
        "no",
        |c| c.cluster.cluster_allow_reads_when_down,
        |c, v| c.cluster.cluster_allow_reads_when_down = v,
    )
    .support(Tunes(Feature::Cluster)),
    boolean(
        "cluster-allow-pubsubshard-when-down",
        Mutable,
        "yes",
        |c| c.cluster.cluster_allow_pubsubshard_when_down,
        |c, v| c.cluster.cluster_allow_pubsubshard_when_down = v,
    )
    .support(Tunes(Feature::Cluster)),
    memory(
        "cluster-link-sendbuf-limit",
        0,
        u64::MAX,
        "0",
        |c| c.cluster.cluster_link_sendbuf_limit_bytes,
        |c, v| c.cluster.cluster_link_sendbuf_limit_bytes = v,
    )
    .support(Tunes(Feature::Cluster)),
    string(
        "cluster-announce-hostname",
        Mutable,
        "\"\"",
        special::check_hostname,
        |c| &c.cluster.cluster_announce_hostname,
        |c, v| c.cluster.cluster_announce_hostname = v,
    )
    .support(Tunes(Feature::Cluster)),
    string(
        "cluster-announce-human-nodename",
        Mutable,
        "\"\"",
        special::check_human_nodename,
        |c| &c.cluster.cluster_announce_human_nodename,
        |c, v| c.cluster.cluster_announce_human_nodename = v,
    )
    .support(Tunes(Feature::Cluster)),
    string(
        "cluster-announce-ip",
        Mutable,
        "\"\"",
        special::check_announce_ip,
        |c| &c.cluster.cluster_announce_ip,
        |c, v| c.cluster.cluster_announce_ip = v,
    )
    .support(Tunes(Feature::Cluster)),
    string(
        "cluster-announce-client-ipv4",
        Mutable,
        "\"\"",
        special::check_ipv4,
        |c| &c.cluster.cluster_announce_client_ipv4,
        |c, v| c.cluster.cluster_announce_client_ipv4 = v,
    )
    .support(Tunes(Feature::Cluster)),
    string(
        "cluster-announce-client-ipv6",
        Mutable,
        "\"\"",
        special::check_ipv6,
        |c| &c.cluster.cluster_announce_client_ipv6,
        |c, v| c.cluster.cluster_announce_client_ipv6 = v,
    )
    .support(Tunes(Feature::Cluster)),
    int(
        "cluster-announce-port",
        Mutable,
        0,
        65535,
        "0",
        |c| c.cluster.cluster_announce_port.into(),
        |c, v| c.cluster.cluster_announce_port = v as u16,
    )
    .support(Tunes(Feature::Cluster)),
    int(
        "cluster-announce-bus-port",
        Mutable,
        0,
        65535,
        "0",
        |c| c.cluster.cluster_announce_bus_port.into(),
        |c, v| c.cluster.cluster_announce_bus_port = v as u16,
    )
    .support(Tunes(Feature::Cluster)),
    int(
        "cluster-announce-tls-port",
        Mutable,
        0,
        65535,
        "0",
        |c| c.cluster.cluster_announce_tls_port.into(),
        |c, v| c.cluster.cluster_announce_tls_port = v as u16,
    )
    .support(Tunes(Feature::Cluster)),
    int(
        "cluster-announce-client-port",
        Mutable,
        0,
        65535,
        "0",
        |c| c.cluster.cluster_announce_client_port.into(),
        |c, v| c.cluster.cluster_announce_client_port = v as u16,
    )
    .support(Tunes(Feature::Cluster)),
    int(
        "cluster-announce-client-tls-port",
        Mutable,
        0,
        65535,
        "0",
        |c| c.cluster.cluster_announce_client_tls_port.into(),
        |c, v| c.cluster.cluster_announce_client_tls_port = v as u16,
    )
    .support(Tunes(Feature::Cluster)),
    choice(
        "cluster-preferred-endpoint-type",
        Mutable,
        ClusterPreferredEndpointType::NAMES,
        "ip",
        |c| c.cluster.cluster_preferred_endpoint_type as usize,
        |c, i| c.cluster.cluster_preferred_endpoint_type = ClusterPreferredEndpointType::ALL[i],
    )
    .support(Tunes(Feature::Cluster)),
    choice(
        "cluster-config-save-behavior",
        Mutable,
        ClusterConfigSaveBehavior::NAMES,
        "sync",
        |c| c.cluster.cluster_config_save_behavior as usize,
        |c, i| c.cluster.cluster_config_save_behavior = ClusterConfigSaveBehavior::ALL[i],
    )
    .support(Tunes(Feature::Cluster)),
    int(
        "cluster-blacklist-ttl",
        Mutable,
        i64::MIN,
        LONG_MAX,
        "60",
        |c| c.cluster.cluster_blacklist_ttl_secs,
        |c, v| c.cluster.cluster_blacklist_ttl_secs = v,
    )
    .support(Tunes(Feature::Cluster)),
    int(
        "cluster-manual-failover-timeout",
        Mutable,
        1,
        INT_MAX,
        "5000",
        |c| c.cluster.cluster_manual_failover_timeout_ms.into(),
        |c, v| c.cluster.cluster_manual_failover_timeout_ms = v as u32,
    )
    .support(Tunes(Feature::Cluster)),
    boolean(
        "cluster-slot-stats-enabled",
        Mutable,
        "no",
        |c| c.cluster.cluster_slot_stats_enabled,
        |c, v| c.cluster.cluster_slot_stats_enabled = v,
    )
    .support(Tunes(Feature::Cluster)),
    int(
        "cluster-slot-migration-log-max-len",
        Mutable,
        0,
        LONG_MAX,
        "1000",
        |c| c.cluster.cluster_slot_migration_log_max_len as i64,
        |c, v| c.cluster.cluster_slot_migration_log_max_len = v as u64,
    )
    .support(Tunes(Feature::Cluster)),
    special(
        "slot-migration-max-failover-repl-bytes",
        Mutable,
        "0",
        &special::SIGNED_MEMORY_SLOT_MIGRATION,
    )
    .support(Tunes(Feature::Cluster)),
];
