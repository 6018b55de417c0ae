//! Network directives: listening sockets, client connections and I/O threads, and the
//! transports ferrokey does not have (RDMA, MPTCP).

use super::*;
#[allow(unused_imports)]
use crate::config::kind::any_string;
#[allow(unused_imports)]
use crate::config::special;
#[allow(unused_imports)]
use crate::config::values::*;

/// The network settings added for Valkey 9.1; the older ones are fields of `Config`.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    pub unixsocketgroup: String,
    pub bind_source_addr: String,
    pub socket_mark_id: u32,
    pub mptcp: bool,
    pub max_new_connections_per_cycle: u32,
    pub max_new_tls_connections_per_cycle: u32,
    pub rdma_bind: Vec<String>,
    pub rdma_port: u16,
    pub rdma_rx_size_bytes: u32,
    pub rdma_completion_vector: i32,
    /// Reply copy avoidance (hidden in Valkey 9.1; see `HIDDEN`): string values at least
    /// this long are referenced by replies, not copied, when there are no I/O threads...
    pub min_string_size_avoid_copy_reply: u32,
    /// ... and at least this long when there are I/O threads ...
    pub min_string_size_avoid_copy_reply_threaded: u32,
    /// ... and of any length once there are at least this many I/O threads.
    pub min_io_threads_avoid_copy_reply: u32,
}

impl Default for Network {
    fn default() -> Self {
        Network {
            unixsocketgroup: String::new(),
            bind_source_addr: String::new(),
            socket_mark_id: 0,
            mptcp: false,
            max_new_connections_per_cycle: 10,
            max_new_tls_connections_per_cycle: 1,
            rdma_bind: Vec::new(),
            rdma_port: 0,
            rdma_rx_size_bytes: 1048576,
            rdma_completion_vector: -1,
            min_string_size_avoid_copy_reply: 16384,
            min_string_size_avoid_copy_reply_threaded: 65536,
            min_io_threads_avoid_copy_reply: 7,
        }
    }
}

impl Network {
    /// The shortest string value a reply references instead of copying, with `io_threads`
    /// threads (counting the main one, as `io-threads` does). Valkey 9.1's rule, with its
    /// three hidden settings.
    pub fn avoid_copy_min_len(&self, io_threads: u32) -> usize {
        if io_threads > 1 && io_threads >= self.min_io_threads_avoid_copy_reply {
            0
        } else if io_threads > 1 {
            self.min_string_size_avoid_copy_reply_threaded as usize
        } else {
            self.min_string_size_avoid_copy_reply as usize
        }
    }
}

/// Directives Valkey 9.1 keeps out of `CONFIG GET` with a pattern: they are listed only when
/// asked for by their exact name.
pub const HIDDEN: &[&str] = &[
    "min-io-threads-avoid-copy-reply",
    "min-string-size-avoid-copy-reply",
    "min-string-size-avoid-copy-reply-threaded",
];

pub(super) static ROWS: &[Directive] = &[
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
        support: Support::Acts,
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
    int(
        "min-io-threads-avoid-copy-reply",
        Mutable,
        0,
        INT_MAX,
        "7",
        |c| c.network.min_io_threads_avoid_copy_reply.into(),
        |c, v| c.network.min_io_threads_avoid_copy_reply = v as u32,
    ),
    int(
        "min-string-size-avoid-copy-reply",
        Mutable,
        0,
        INT_MAX,
        "16384",
        |c| c.network.min_string_size_avoid_copy_reply.into(),
        |c, v| c.network.min_string_size_avoid_copy_reply = v as u32,
    ),
    int(
        "min-string-size-avoid-copy-reply-threaded",
        Mutable,
        0,
        INT_MAX,
        "65536",
        |c| c.network.min_string_size_avoid_copy_reply_threaded.into(),
        |c, v| c.network.min_string_size_avoid_copy_reply_threaded = v as u32,
    ),
    // Added for Valkey 9.1.
    string(
        "unixsocketgroup",
        Immutable,
        "\"\"",
        any_string,
        |c| &c.network.unixsocketgroup,
        |c, v| c.network.unixsocketgroup = v,
    )
    .support(Gate(Feature::UnixSocketGroup)),
    string(
        "bind-source-addr",
        Mutable,
        "\"\"",
        any_string,
        |c| &c.network.bind_source_addr,
        |c, v| c.network.bind_source_addr = v,
    )
    .support(Tunes(Feature::Replication)),
    int(
        "socket-mark-id",
        Immutable,
        0,
        UINT_MAX,
        "0",
        |c| c.network.socket_mark_id.into(),
        |c, v| c.network.socket_mark_id = v as u32,
    )
    .support(NoEffect("ferrokey does not mark its sockets (SO_MARK)")),
    boolean("mptcp", Immutable, "no", |c| c.network.mptcp, |c, v| c.network.mptcp = v)
        .support(Gate(Feature::Mptcp)),
    int(
        "max-new-connections-per-cycle",
        Mutable,
        1,
        1000,
        "10",
        |c| c.network.max_new_connections_per_cycle.into(),
        |c, v| c.network.max_new_connections_per_cycle = v as u32,
    )
    .support(NoEffect(
        "ferrokey's listener does not cap the connections accepted per event-loop cycle",
    )),
    int(
        "max-new-tls-connections-per-cycle",
        Mutable,
        1,
        1000,
        "1",
        |c| c.network.max_new_tls_connections_per_cycle.into(),
        |c, v| c.network.max_new_tls_connections_per_cycle = v as u32,
    )
    .support(Tunes(Feature::Tls)),
    special("rdma-bind", Mutable, "\"\"", &special::RDMA_BIND).support(Gate(Feature::Rdma)),
    int(
        "rdma-port",
        Mutable,
        0,
        65535,
        "0",
        |c| c.network.rdma_port.into(),
        |c, v| c.network.rdma_port = v as u16,
    )
    .support(Gate(Feature::Rdma)),
    int(
        "rdma-rx-size",
        Immutable,
        65536,
        16777216,
        "1048576",
        |c| c.network.rdma_rx_size_bytes.into(),
        |c, v| c.network.rdma_rx_size_bytes = v as u32,
    )
    .support(Tunes(Feature::Rdma)),
    int(
        "rdma-completion-vector",
        Immutable,
        -1,
        1024,
        "-1",
        |c| c.network.rdma_completion_vector.into(),
        |c, v| c.network.rdma_completion_vector = v as i32,
    )
    .support(Tunes(Feature::Rdma)),
];
