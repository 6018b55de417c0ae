//! Replication, the primary's side: replicas attach with `SYNC` or `PSYNC`, get the whole
//! dataset once (a full sync, from a fork child), then the replication stream: every write
//! in the propagation feed's form (`server::propagate`), the same bytes the AOF logs.
//!
//! - `backlog`: the last bytes of the stream, for partial resyncs (`+CONTINUE`).
//! - `primary`: the replica registry, the handshake (`REPLCONF`), `SYNC`/`PSYNC`, moving the
//!   feed into the backlog and the replicas' output, acknowledgements, `WAIT`, pings and
//!   timeouts.
//! - `fullsync`: the fork children of full syncs, to disk (then the file is sent) or
//!   straight to the replicas' sockets (diskless, `$EOF:` framing).
//!
//! # The stream and its offsets
//!
//! The stream exists while a backlog does: from the first replica on (a primary that never had
//! one encodes nothing), until `repl-backlog-ttl` seconds after the last replica left.
//! `master_repl_offset` counts its bytes. A replica that attaches is given the offset of the
//! moment its snapshot is taken (`+FULLRESYNC <replid> <offset>`); everything fed after
//! that moment is appended to its output, held back until its snapshot has been sent.
//!
//! ```text
//!  command ─► feed.repl ─► (before replies) ─► backlog ring        master_repl_offset += n
//!                                          └─► each replica's out  (held during its full sync)
//! ```
//!
//! Replication's state lives in an opaque slot of the server state (`ServerState::repl`)
//! that the core never reads; [`state`] reaches it.

pub mod backlog;
pub mod failover;
pub mod fullsync;
pub mod load;
pub mod primary;
pub mod replica;
pub mod shutdown;
pub mod wire;

use std::any::Any;

use crate::persist::bgsave::Target;
use crate::server::state::ServerState;

use backlog::Backlog;

/// Where a replica stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaState {
    /// It sent REPLCONF but no SYNC/PSYNC yet.
    Handshake,
    /// It asked for a full sync; no child writes its snapshot yet (Valkey's
    /// `wait_bgsave`, as INFO shows it).
    WaitBgsave,
    /// A fork child writes its snapshot, to the RDB file or to its socket.
    Transfer(Target),
    /// The RDB file is being sent (`send_bulk`).
    SendFile,
    /// It gets the stream.
    Online,
}

impl ReplicaState {
    /// The name INFO's `slaveN:` lines use.
    pub fn name(self) -> &'static str {
        match self {
            ReplicaState::Handshake | ReplicaState::WaitBgsave | ReplicaState::Transfer(_) => {
                "wait_bgsave"
            }
            ReplicaState::SendFile => "send_bulk",
            ReplicaState::Online => "online",
        }
    }

    /// Whether stream bytes are appended to its output (its snapshot's offset is fixed).
    pub fn gets_stream(self) -> bool {
        matches!(self, ReplicaState::Transfer(_) | ReplicaState::SendFile | ReplicaState::Online)
    }
}

/// One replica (or a client in its handshake), by client token.
#[derive(Debug, Clone)]
pub struct Replica {
    pub token: usize,
    /// The peer's address as the connection shows it (`ip:port`).
    pub addr: String,
    /// The port it listens on (`REPLCONF listening-port`), 0 if it did not say.
    pub listening_port: u16,
    /// The address it announced (`REPLCONF ip-address`).
    pub announced_ip: Option<String>,
    /// It can load a diskless transfer (`REPLCONF capa eof`).
    pub capa_eof: bool,
    /// It understands `+CONTINUE <replid>` (`REPLCONF capa psync2`).
    pub capa_psync2: bool,
    pub state: ReplicaState,
    /// The stream offset it acknowledged last (`REPLCONF ACK`), and when (ms).
    pub ack_offset: i64,
    pub ack_ms: i64,
    /// The stream offset its AOF holds on disk, as it last said (`REPLCONF ACK .. FACK
    /// <offset>`; a replica without an AOF never says): what WAITAOF counts.
    pub aof_ack_offset: i64,
    /// It attached with the old `SYNC`: no `+FULLRESYNC` line, and it never acknowledges.
    pub pre_psync: bool,
}

impl Replica {
    /// The IP INFO and ROLE show: the announced one, else the connection's.
    pub fn ip(&self) -> &str {
        if let Some(ip) = &self.announced_ip {
            return ip;
        }
        match self.addr.rfind(':') {
            Some(i) => self.addr[..i].trim_start_matches('[').trim_end_matches(']'),
            None => &self.addr,
        }
    }

    /// `ip:port` as Valkey's log lines name a replica.
    pub fn name(&self) -> String {
        format!("{}:{}", self.ip(), self.listening_port)
    }
}

/// A client blocked in WAIT or WAITAOF.
#[derive(Debug, Clone, Copy)]
pub struct Waiter {
    pub token: usize,
    /// The offset its writes reached.
    pub offset: i64,
    pub numreplicas: usize,
    /// When it gives up (ms), or never.
    pub deadline_ms: Option<i64>,
    /// WAITAOF's: replicas count by what their AOF holds on disk, and the local AOF must
    /// hold the client's writes too when asked.
    pub aof: Option<AofWait>,
}

/// What a WAITAOF waits for besides its replicas.
#[derive(Debug, Clone, Copy)]
pub struct AofWait {
    /// `numlocal` (0 or 1).
    pub numlocal: bool,
    /// The client's last write's end in the local AOF stream (`Client::aof_woff`).
    pub local_pos: u64,
}

/// A SYNC or PSYNC not handled yet: commands only record it; the event loop acts on it
/// before replies go out, when no client is lent out of the table.
#[derive(Debug, Clone)]
pub struct SyncRequest {
    pub token: usize,
    /// PSYNC's replication id and offset; None for SYNC.
    pub psync: Option<(String, i64)>,
}

/// Counters of INFO stats.
#[derive(Debug, Default, Clone, Copy)]
pub struct SyncStats {
    pub full: u64,
    pub partial_ok: u64,
    pub partial_err: u64,
    /// Stream bytes sent to replicas (`total_net_repl_output_bytes`).
    pub repl_output_bytes: u64,
}

/// The primary's replication state.
#[derive(Debug)]
pub struct Replication {
    /// The previous replication id and the first offset that is not its (a promoted replica
    /// still serves partial resyncs of its old primary's id up to there).
    pub replid2: String,
    pub second_offset: i64,
    /// `master_repl_offset`: stream bytes so far.
    pub offset: i64,
    pub backlog: Option<Backlog>,
    pub replicas: Vec<Replica>,
    /// Since when no replica is attached (ms), for `repl-backlog-ttl`.
    pub no_replicas_since_ms: i64,
    pub last_ping_ms: i64,
    pub last_cron_s: i64,
    pub requests: Vec<SyncRequest>,
    pub waiters: Vec<Waiter>,
    /// Ask the replicas for an acknowledgement before the next sleep (a WAIT is blocked).
    pub getack_wanted: bool,
    /// A shutdown waiting for the replicas to catch up (see `shutdown`).
    pub shutdown: Option<shutdown::Waiting>,
    pub stats: SyncStats,
    /// The link to our primary, when this server is a replica.
    pub link: Option<replica::Link>,
    /// A FAILOVER under way.
    pub failover: Option<failover::Failover>,
}

/// A replication id of zeros: none (`master_replid2` with no previous id).
pub const NO_REPLID: &str = "0000000000000000000000000000000000000000";

impl Default for Replication {
    fn default() -> Replication {
        Replication {
            replid2: NO_REPLID.to_string(),
            second_offset: -1,
            offset: 0,
            backlog: None,
            replicas: Vec::new(),
            no_replicas_since_ms: crate::util::clock::now_ms(),
            last_ping_ms: 0,
            last_cron_s: 0,
            requests: Vec::new(),
            waiters: Vec::new(),
            getack_wanted: false,
            shutdown: None,
            stats: SyncStats::default(),
            link: None,
            failover: None,
        }
    }
}

impl Replication {
    /// The replica of `token`, if it is one (or in its handshake).
    pub fn replica(&self, token: usize) -> Option<&Replica> {
        self.replicas.iter().find(|r| r.token == token)
    }

    pub fn replica_mut(&mut self, token: usize) -> Option<&mut Replica> {
        self.replicas.iter_mut().find(|r| r.token == token)
    }

    /// Replicas past their handshake (INFO `connected_slaves`, ROLE).
    pub fn attached(&self) -> impl Iterator<Item = &Replica> {
        self.replicas.iter().filter(|r| r.state != ReplicaState::Handshake)
    }

    /// Online replicas whose acknowledged offset reached `offset`.
    pub fn acked(&self, offset: i64) -> usize {
        self.replicas
            .iter()
            .filter(|r| r.state == ReplicaState::Online && r.ack_offset >= offset)
            .count()
    }

    /// Online replicas whose AOF holds `offset` on disk.
    pub fn aof_acked(&self, offset: i64) -> usize {
        self.replicas
            .iter()
            .filter(|r| r.state == ReplicaState::Online && r.aof_ack_offset >= offset)
            .count()
    }
}

/// DEBUG CHANGE-REPL-ID: a new replication id, the previous one forgotten (no `replid2`),
/// so that no replica can continue partially from before.
pub fn change_replid(srv: &mut ServerState) {
    srv.replid = crate::util::rng::random_hex(srv.rng.next_u64(), 40);
    let r = state(&mut srv.repl);
    r.replid2 = NO_REPLID.to_string();
    r.second_offset = -1;
}

/// The replication state in `slot` (`&mut srv.repl`), installed on first use.
pub fn state(slot: &mut Box<dyn Any>) -> &mut Replication {
    if !slot.is::<Replication>() {
        *slot = Box::new(Replication::default());
    }
    slot.downcast_mut().expect("installed above")
}

/// The replication state, if it was installed (None: no replica ever came, every figure is
/// the default).
pub fn peek(slot: &dyn Any) -> Option<&Replication> {
    slot.downcast_ref()
}

/// The state of `srv` if installed, mutably.
fn installed(srv: &mut ServerState) -> Option<&mut Replication> {
    srv.repl.downcast_mut()
}
