//! Per-client state that commands read and change: selected db, authentication, name,
//! protocol, reply mode, flags, and the counters CLIENT LIST shows.
//!
//! It lives on the main thread only. The socket and the query buffer are in `conn`; the reply
//! buffer is beside this struct in the client slot, so a handler can borrow both.

use bytes::Bytes;

/// CLIENT REPLY mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyMode {
    On,
    Off,
    /// Skip the reply of the next command only.
    SkipNext,
    /// Skipping the reply of the current command (after SKIP).
    Skip,
}

/// What kind of client this is for CLIENT LIST TYPE and output limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientKind {
    Normal,
    Monitor,
    /// A replica attached with SYNC or PSYNC: it is sent the replication stream, and its
    /// own commands (REPLCONF ACK) get no reply.
    Replica,
    /// This replica's primary: its commands are the replication stream, never answered.
    Primary,
}

#[derive(Debug)]
pub struct Client {
    pub id: u64,
    pub db: usize,
    pub name: Option<Bytes>,
    pub lib_name: Option<Bytes>,
    pub lib_ver: Option<Bytes>,
    pub authenticated: bool,
    /// The ACL user this connection runs as (the default user until AUTH or HELLO AUTH).
    pub user: crate::acl::UserId,
    pub kind: ClientKind,
    pub reply_mode: ReplyMode,
    pub no_evict: bool,
    pub no_touch: bool,
    /// CLIENT IMPORT-SOURCE ON (with `import-mode yes`): a sync tool's connection, which
    /// sees keys past their expire time as they were (CLIENT LIST flag `I`).
    pub import_source: bool,
    /// CLIENT CAPA REDIRECT: on a replica, this client's data commands are answered with
    /// `-REDIRECT host:port` of the primary (CLIENT LIST `capa=r`).
    pub capa_redirect: bool,
    /// Close once the pending replies are written (QUIT, protocol error, CLIENT KILL).
    pub close_after_reply: bool,
    /// Close now without writing more (output buffer limit).
    pub close_asap: bool,
    pub addr: String,
    pub laddr: String,
    pub fd: i32,
    pub unix: bool,
    pub created_ms: i64,
    pub last_interaction_ms: i64,
    /// Name of the last command executed (CLIENT LIST `cmd=`).
    pub last_cmd: &'static str,
    /// The replication offset just after this client's last write that reached the stream
    /// (Valkey's `woff`): what its WAIT waits for replicas to acknowledge.
    pub woff: i64,
    /// The AOF stream position just after this client's last write that reached the AOF
    /// (`persist::aof::Aof::written_total` counts the same bytes): what its WAITAOF waits
    /// for the local disk to hold.
    pub aof_woff: u64,
    /// Bytes in the query buffer, as last seen (CLIENT LIST `qbuf=`).
    pub qbuf_len: usize,
    pub qbuf_cap: usize,
    /// When the output buffer first went over the soft limit (ms), or 0.
    pub obuf_soft_since_ms: i64,
    pub tot_net_in: u64,
    pub tot_net_out: u64,
    pub tot_cmds: u64,
    /// Set by a handler that wants its client blocked (see `server::blocking`); dispatch
    /// takes it right after the handler returns.
    pub block_request: Option<crate::server::blocking::BlockRequest>,
    /// The command is being re-run for a blocked client (it may block again).
    pub unblocking: bool,
    /// Execution time of a blocked command's runs so far (µs): counted, with its last run,
    /// as one call in commandstats and the slow log once it is served, times out or is
    /// unblocked, as Valkey counts it.
    pub blocked_run_us: u64,
    /// Blocked on keys (CLIENT LIST flag `b`); `ServerState::blocking` has the details.
    pub blocked: bool,
    /// Commands run inside EXEC (MULTI lands with issue 7): blocking commands do not block.
    pub in_exec: bool,
    /// Pub/sub subscriptions (see `server::pubsub`).
    pub subs: crate::server::pubsub::ClientSubs,
    /// Client-side caching is on; its settings are in the tracking registry (see
    /// `server::tracking`), where delivery finds them while this client is lent out.
    pub tracking: bool,
    /// The transaction between MULTI and EXEC/DISCARD (see `server::multi`); None outside.
    pub multi: Option<Box<crate::server::multi::Transaction>>,
    /// A script EVAL or FCALL prepared, for the runtime to run after the handler (as EXEC's
    /// queue is run); None otherwise.
    pub script: Option<Box<crate::scripting::Request>>,
    /// `SCRIPT DEBUG YES|SYNC`: the next EVAL runs in a debugging session.
    pub ldb: Option<crate::scripting::ldb::Mode>,
    /// An EVAL prepared for a debugging session, for the runtime to run after the handler
    /// (`runtime::ldb`); None otherwise.
    pub debug_run: Option<Box<crate::scripting::ldb::DebugRun>>,
    /// The client scripts run their commands as (`runtime::script`): MONITOR shows it as
    /// `lua`; the slow log, as Valkey, shows its caller's address and name.
    pub lua: bool,
}

impl Client {
    pub fn new(id: u64, addr: String, laddr: String, fd: i32, unix: bool, now_ms: i64) -> Client {
        Client {
            id,
            db: 0,
            name: None,
            lib_name: None,
            lib_ver: None,
            authenticated: false,
            user: crate::acl::DEFAULT_USER,
            kind: ClientKind::Normal,
            reply_mode: ReplyMode::On,
            no_evict: false,
            no_touch: false,
            import_source: false,
            capa_redirect: false,
            close_after_reply: false,
            close_asap: false,
            addr,
            laddr,
            fd,
            unix,
            created_ms: now_ms,
            last_interaction_ms: now_ms,
            last_cmd: "NULL",
            woff: 0,
            aof_woff: 0,
            qbuf_len: 0,
            qbuf_cap: 0,
            obuf_soft_since_ms: 0,
            tot_net_in: 0,
            tot_net_out: 0,
            tot_cmds: 0,
            block_request: None,
            unblocking: false,
            blocked_run_us: 0,
            in_exec: false,
            blocked: false,
            subs: Default::default(),
            tracking: false,
            multi: None,
            ldb: None,
            debug_run: None,
            script: None,
            lua: false,
        }
    }

    /// The `flags=` letters of CLIENT LIST, in Valkey's order (O S M P x b t R B d c u A U r e
    /// T; only the states this server has are shown). `tracking`: the client's tracking
    /// settings, from the registry.
    pub fn flag_letters(
        &self,
        tracking: Option<&crate::server::tracking::ClientTracking>,
    ) -> String {
        let mut f = String::new();
        if self.kind == ClientKind::Monitor {
            f.push('O');
        }
        if self.kind == ClientKind::Replica {
            f.push('S');
        }
        if self.kind == ClientKind::Primary {
            f.push('M');
        }
        if self.subs.total() > 0 {
            f.push('P');
        }
        if self.multi.is_some() {
            f.push('x');
        }
        if self.close_after_reply {
            f.push('c');
        }
        if self.close_asap {
            f.push('A');
        }
        if self.blocked {
            f.push('b');
        }
        if let Some(t) = tracking {
            f.push('t');
            if t.broken_redirect {
                f.push('R');
            }
            if t.mode == crate::server::tracking::Mode::Bcast {
                f.push('B');
            }
        }
        if self.unix {
            f.push('U');
        }
        if self.no_evict {
            f.push('e');
        }
        if self.no_touch {
            f.push('T');
        }
        if self.import_source {
            f.push('I');
        }
        if f.is_empty() {
            f.push('N');
        }
        f
    }

    /// The client's type for CLIENT LIST / KILL `TYPE` and output-buffer classes. MONITOR
    /// clients count as normal, as in Valkey; a client with subscriptions is `pubsub`.
    pub fn client_type(&self) -> ClientType {
        if self.kind == ClientKind::Replica {
            return ClientType::Replica;
        }
        if self.kind == ClientKind::Primary {
            return ClientType::Primary;
        }
        if self.subs.total() > 0 {
            return ClientType::PubSub;
        }
        match self.kind {
            ClientKind::Normal | ClientKind::Monitor => ClientType::Normal,
            ClientKind::Replica => ClientType::Replica,
            ClientKind::Primary => ClientType::Primary,
        }
    }

    /// Whether the peer is on this host (loopback address or unix socket), for
    /// `enable-debug-command local`.
    pub fn is_local(&self) -> bool {
        self.unix
            || self.addr.starts_with("127.")
            || self.addr.starts_with("::1:")
            || self.addr.starts_with("[::1]:")
    }

    /// The peer address as CLIENT LIST and CLIENT KILL ADDR show it (`ip:port`, `path:0`).
    pub fn peer_id(&self) -> &str {
        &self.addr
    }

    /// The local address as CLIENT LIST and CLIENT KILL LADDR show it (`ip:port`, `path:0`).
    pub fn sock_name(&self) -> String {
        if self.unix {
            format!("{}:0", self.laddr)
        } else {
            self.laddr.clone()
        }
    }

    /// RESET: back to the state of a new connection (db 0, no name, replies on, default
    /// user authenticated only when no password is required). The library name and version
    /// stay: they still describe the client behind the connection. The caller resets the
    /// protocol (in the reply buffer) and removes the client from the MONITOR list.
    /// Families that add per-client state (MULTI, subscriptions, tracking) reset it here.
    pub fn reset_connection_state(&mut self, password_required: bool) {
        self.db = 0;
        self.name = None;
        self.authenticated = !password_required;
        self.user = crate::acl::DEFAULT_USER;
        self.kind = ClientKind::Normal;
        self.reply_mode = ReplyMode::On;
        self.no_evict = false;
        self.no_touch = false;
    }
}

/// Client types as CLIENT LIST / CLIENT KILL `TYPE` name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientType {
    Normal,
    Replica,
    PubSub,
    Primary,
}

impl ClientType {
    /// Parse a type name (`normal`, `slave`/`replica`, `pubsub`, `master`/`primary`),
    /// ignoring case.
    pub fn from_name(name: &[u8]) -> Option<ClientType> {
        const NAMES: &[(&str, ClientType)] = &[
            ("normal", ClientType::Normal),
            ("slave", ClientType::Replica),
            ("replica", ClientType::Replica),
            ("pubsub", ClientType::PubSub),
            ("master", ClientType::Primary),
            ("primary", ClientType::Primary),
        ];
        NAMES.iter().find(|(n, _)| name.eq_ignore_ascii_case(n.as_bytes())).map(|&(_, t)| t)
    }
}
