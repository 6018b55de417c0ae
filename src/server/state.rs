//! The state every command can reach: configuration, databases, statistics, the client table
//! and the server-wide switches (pause, shutdown, monitors).
//!
//! It is owned by the main thread and handed to handlers as `&mut` through `Ctx`; nothing in
//! here is shared with other threads.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::config::Config;
use crate::keyspace::db::{Db, Expiry};
use crate::resp::reply::{Proto, Reply};
use crate::server::client::Client;
use crate::server::commandlog::CommandLogs;
use crate::util::rng::{random_hex, Rng};

/// Per-command counters for INFO commandstats, and the command's latency histogram (INFO
/// latencystats, LATENCY HISTOGRAM) from its first call with `latency-tracking yes`.
#[derive(Default, Debug)]
pub struct CmdStat {
    pub calls: u64,
    pub usec: u64,
    pub rejected_calls: u64,
    pub failed_calls: u64,
    pub latency: Option<Box<crate::util::histogram::Histogram>>,
}

#[derive(Default, Debug)]
pub struct Stats {
    pub total_connections_received: u64,
    pub total_commands_processed: u64,
    pub rejected_connections: u64,
    pub net_input_bytes: u64,
    pub net_output_bytes: u64,
    pub total_error_replies: u64,
    pub unexpected_error_replies: u64,
    pub client_qbuf_limit_disconnections: u64,
    pub client_outbuf_limit_disconnections: u64,
    pub prefetch_batches: u64,
    pub io_threaded_reads: u64,
    pub io_threaded_writes: u64,
    pub prefetch_keys: u64,
    pub expire_cycle_cpu_us: u64,
    /// Reads from and writes to client sockets (each read or write call's turn).
    pub total_reads: u64,
    pub total_writes: u64,
    /// Event-loop turns, and the time they took: the whole turn but the wait for events,
    /// and the commands' share of it.
    pub eventloop_cycles: u64,
    pub eventloop_us: u64,
    pub eventloop_cmd_us: u64,
    /// Per-command figures, by table name: looked up on every call, so with ahash rather
    /// than the default SipHash (which showed at 2% of a GET's CPU).
    pub cmd: HashMap<&'static str, CmdStat, ahash::RandomState>,
    pub errors: HashMap<String, u64>,
    /// Ring of (ms, commands processed) samples for instantaneous_ops_per_sec.
    pub ops_samples: [(i64, u64); 16],
    pub ops_sample_idx: usize,
    pub net_in_samples: [(i64, u64); 16],
    pub net_out_samples: [(i64, u64); 16],
    /// Rings of (ms, event-loop turns) and (ms, event-loop µs) samples.
    pub cycle_samples: [(i64, u64); 16],
    pub cycle_us_samples: [(i64, u64); 16],
    pub peak_memory: usize,
}

impl Stats {
    pub fn reset(&mut self) {
        let peak = self.peak_memory;
        *self = Stats::default();
        self.peak_memory = peak;
    }
}

/// CLIENT PAUSE state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseKind {
    Write,
    All,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Pause {
    pub kind: Option<PauseKind>,
    pub until_ms: i64,
    /// Clients whose commands the pause holds back: counted in INFO `blocked_clients`, as
    /// Valkey counts its postponed clients.
    pub held_clients: usize,
    /// A FAILOVER holds writes back until it ends: a pause of its own, which CLIENT PAUSE
    /// and CLIENT UNPAUSE neither end nor are ended by (Valkey's pause purposes).
    pub failover: bool,
    /// So does a shutdown waiting for its replicas to catch up.
    pub shutdown: bool,
}

impl Pause {
    /// Whether some pause is set (it may have run out: see [`Pause::holds`]).
    pub fn any(&self) -> bool {
        self.kind.is_some() || self.failover || self.shutdown
    }

    /// Whether a pause still holds commands back at `now_ms`.
    pub fn holds(&self, now_ms: i64) -> bool {
        self.failover || self.shutdown || (self.kind.is_some() && now_ms < self.until_ms)
    }
}

/// A pending SHUTDOWN request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownMode {
    Default,
    Save,
    NoSave,
}

/// One client: its state and its reply buffer (its connection is the runtime's, under the
/// same token). While it runs a command it is lent out of [`Clients`], and its seat keeps
/// its outbox.
pub struct Slot {
    pub client: Client,
    pub out: Reply,
    /// Bytes of `out` already written to the socket (a stream position, see `resp::reply`).
    pub sent: usize,
    /// The connection waits for writability (WRITABLE interest is registered): a write left
    /// replies pending (CLIENT LIST's `events=rw`). The runtime keeps it.
    pub want_write: bool,
    /// Nothing may be written to the socket for now: a replica whose full sync a fork child
    /// writes to its socket, or whose RDB file is not ready yet. `out` fills meanwhile.
    pub held: bool,
    /// Bytes to send before `out` (a replica's RDB file, see [`Preamble`]).
    pub preamble: Option<Box<Preamble>>,
}

impl Slot {
    pub fn new(client: Client, out: Reply) -> Slot {
        Slot { client, out, sent: 0, want_write: false, held: false, preamble: None }
    }

    /// Whether anything waits to be written (and may be).
    pub fn has_output(&self) -> bool {
        !self.held && (self.preamble.is_some() || self.sent < self.out.len())
    }
}

/// A file sent to a client ahead of its reply stream: the RDB a disk-backed full sync wrote,
/// preceded by its `$<length>` header. The runtime writes it from the file in chunks as the
/// socket takes them, so the file is never held in memory.
#[derive(Debug)]
pub struct Preamble {
    pub header: Vec<u8>,
    pub file: std::fs::File,
    /// Bytes of header and file already sent.
    pub sent: u64,
    /// File bytes to send.
    pub file_len: u64,
}

impl Preamble {
    pub fn new(file: std::fs::File, file_len: u64) -> Preamble {
        Preamble { header: format!("${file_len}\r\n").into_bytes(), file, sent: 0, file_len }
    }

    /// Whether everything was sent.
    pub fn done(&self) -> bool {
        self.sent >= self.header.len() as u64 + self.file_len
    }
}

/// The client table, indexed by token. A token is a slot index (low 32 bits) and the
/// slot's generation (high bits): the generation moves on when a client leaves, so a token
/// kept by anything after its client is gone (a pub/sub registry, a blocked-clients list, a
/// queued write) no longer finds the client that reuses the slot, and is refused.
///
/// # Outboxes
///
/// A client that runs a command is lent out of the table ([`Clients::lend`]): the command
/// needs its state and its reply buffer beside `&mut ServerState`. It keeps its seat, and
/// with it an *outbox*: a reply buffer in the client's protocol that fan-out (pub/sub
/// messages, tracking invalidations, MONITOR lines, the effects of blocked clients its
/// command served) writes into through [`Clients::outbox`], as it writes into an idle
/// client's buffer. [`Clients::put_back`] appends the outbox to the reply, which gives
/// Valkey's order: what a command sends to its own client follows the command's reply
/// (after EXEC's whole reply inside a transaction). The outbox is made by the first message,
/// so lending a client and putting it back costs a few stores when nothing was sent.
///
/// ```text
///   seats:    [ Here(slot 0) | Lent(RESP3) | Free | Lent(RESP2) | Here(slot 4) ]
///   gens:     [ 4            | 1           | 7    | 0           | 2            ]
///   waiting:  [ (seat 1, ">3 message ch m") ]       seat 3 was sent nothing yet
///   token of seat 1 = 1 | 1 << 32: a token of generation 0 for seat 1 is stale
/// ```
#[derive(Default)]
pub struct Clients {
    seats: Vec<Seat>,
    gens: Vec<u32>,
    free: Vec<usize>,
    /// The outboxes of lent clients that were sent something, by seat index (a few at most:
    /// the running client, and those whose commands run a served blocked client's).
    waiting: Vec<(usize, Reply)>,
    pub count: usize,
}

/// A place in the client table.
#[derive(Default)]
enum Seat {
    #[default]
    Free,
    /// The client, idle between commands.
    Here(Box<Slot>),
    /// The client is lent out running a command, in this protocol. What is sent to it
    /// meanwhile is in `Clients::waiting` (an entry made by the first message: most commands
    /// send their client nothing beside the reply, and lending must cost next to nothing).
    Lent(Proto),
}

/// Where fan-out writes for a client ([`Clients::outbox`]).
pub enum Outbox<'a> {
    /// An idle client: its reply buffer, beside its state (for the output-buffer limit).
    Idle(&'a mut Slot),
    /// A client running a command: what is written here follows that command's reply (it
    /// is held to its output limit with the reply, after the command).
    Running(&'a mut Reply),
}

impl Outbox<'_> {
    /// The buffer to write into.
    pub fn out(&mut self) -> &mut Reply {
        match self {
            Outbox::Idle(s) => &mut s.out,
            Outbox::Running(r) => r,
        }
    }

    /// The client is being closed without more writes (its output broke a limit).
    pub fn closing(&self) -> bool {
        match self {
            Outbox::Idle(s) => s.client.close_asap,
            Outbox::Running(_) => false,
        }
    }
}

/// Bits of a token that hold the slot index.
const INDEX_BITS: u32 = 32;
/// Generations wrap below this, so that a token stays clear of the listeners' tokens at the
/// top of the token space.
const GEN_LIMIT: u32 = 1 << 30;

/// The slot index of `token`.
pub fn slot_index(token: usize) -> usize {
    token & ((1 << INDEX_BITS) - 1)
}

fn make_token(index: usize, generation: u32) -> usize {
    index | (generation as usize) << INDEX_BITS
}

impl Clients {
    /// Adds a client; returns its token.
    pub fn insert(&mut self, slot: Box<Slot>) -> usize {
        self.count += 1;
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.seats.push(Seat::Free);
                self.gens.push(0);
                self.seats.len() - 1
            }
        };
        assert!(i < 1 << INDEX_BITS, "too many client slots");
        self.seats[i] = Seat::Here(slot);
        make_token(i, self.gens[i])
    }

    /// The slot index of `token` while it is current (its client has not left).
    fn current(&self, token: usize) -> Option<usize> {
        let i = slot_index(token);
        (make_token(i, *self.gens.get(i)?) == token).then_some(i)
    }

    /// Removes the (idle) client of `token`; its token (and any copy of it) is stale from
    /// now on. None for a stale token and for a client lent out.
    pub fn remove(&mut self, token: usize) -> Option<Box<Slot>> {
        let i = self.current(token)?;
        let Seat::Here(_) = self.seats[i] else { return None };
        let Seat::Here(s) = std::mem::take(&mut self.seats[i]) else { unreachable!() };
        self.count -= 1;
        self.gens[i] = (self.gens[i] + 1) % GEN_LIMIT;
        self.free.push(i);
        Some(s)
    }

    /// Takes the client of `token` out of the table while it runs a command, leaving its
    /// outbox in its seat (None when the token is stale, or the client is already lent).
    pub fn lend(&mut self, token: usize) -> Option<Box<Slot>> {
        let i = self.current(token)?;
        let seat = &mut self.seats[i];
        let Seat::Here(s) = seat else { return None };
        let proto = s.out.proto;
        let Seat::Here(s) = std::mem::replace(seat, Seat::Lent(proto)) else { unreachable!() };
        Some(s)
    }

    /// Puts back a client taken out with [`Clients::lend`]; what its outbox got meanwhile
    /// follows its reply. Returns the client, back in its seat.
    #[inline]
    pub fn put_back(&mut self, token: usize, mut slot: Box<Slot>) -> &mut Slot {
        let i = self.current(token).expect("a lent client's token stays current");
        if !self.waiting.is_empty() {
            self.deliver_waiting_of(i, &mut slot.out);
        }
        let seat = &mut self.seats[i];
        assert!(matches!(seat, Seat::Lent(_)), "put back a client that was not lent");
        *seat = Seat::Here(slot);
        let Seat::Here(s) = seat else { unreachable!() };
        s
    }

    /// Appends what waits for the lent client in seat `i` to `out`.
    #[inline(never)]
    fn deliver_waiting_of(&mut self, i: usize, out: &mut Reply) {
        if let Some(at) = Clients::waiting_at(&self.waiting, i) {
            let (_, mut waiting) = self.waiting.swap_remove(at);
            out.append(&mut waiting);
        }
    }

    /// Whether the client of `token` is connected (idle or running a command).
    pub fn is_current(&self, token: usize) -> bool {
        self.current(token).is_some_and(|i| !matches!(self.seats[i], Seat::Free))
    }

    /// Where a message for the client of `token` goes: its reply buffer, or its outbox
    /// while it runs a command. None for a stale token: a message never reaches the client
    /// that took the seat of the one it was meant for.
    pub fn outbox(&mut self, token: usize) -> Option<Outbox<'_>> {
        let i = self.current(token)?;
        match &mut self.seats[i] {
            Seat::Free => None,
            Seat::Here(s) => Some(Outbox::Idle(s)),
            &mut Seat::Lent(proto) => {
                let at = match Clients::waiting_at(&self.waiting, i) {
                    Some(at) => at,
                    None => {
                        self.waiting.push((i, Reply::new(proto)));
                        self.waiting.len() - 1
                    }
                };
                Some(Outbox::Running(&mut self.waiting[at].1))
            }
        }
    }

    /// Moves what the running client of `token` was sent so far into `out` now (before its
    /// reply, where Valkey writes such messages at once: the tracking table's limit runs
    /// before the command).
    pub fn deliver_waiting(&mut self, token: usize, out: &mut Reply) {
        if let Some(i) = self.current(token).filter(|&i| matches!(self.seats[i], Seat::Lent(_))) {
            self.deliver_waiting_of(i, out);
        }
    }

    /// The running client of `token` switched protocol (HELLO, RESET): its outbox encodes
    /// what it is sent from now on in the new one.
    pub fn running_protocol(&mut self, token: usize, proto: Proto) {
        let Some(i) = self.current(token) else { return };
        if let Seat::Lent(p) = &mut self.seats[i] {
            *p = proto;
            if let Some(at) = Clients::waiting_at(&self.waiting, i) {
                self.waiting[at].1.proto = proto;
            }
        }
    }

    /// Where the outbox of the lent client in seat `i` is in `waiting`, if it has one.
    fn waiting_at(waiting: &[(usize, Reply)], i: usize) -> Option<usize> {
        waiting.iter().position(|(seat, _)| *seat == i)
    }

    fn here(seat: &Seat) -> Option<&Slot> {
        match seat {
            Seat::Here(s) => Some(s),
            _ => None,
        }
    }

    fn here_mut(seat: &mut Seat) -> Option<&mut Slot> {
        match seat {
            Seat::Here(s) => Some(s),
            _ => None,
        }
    }

    /// The idle clients (every client but those lent out).
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Slot)> {
        let gens = &self.gens;
        self.seats
            .iter()
            .enumerate()
            .filter_map(move |(i, s)| Clients::here(s).map(|s| (make_token(i, gens[i]), s)))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (usize, &mut Slot)> {
        let gens = &self.gens;
        self.seats
            .iter_mut()
            .enumerate()
            .filter_map(move |(i, s)| Clients::here_mut(s).map(|s| (make_token(i, gens[i]), s)))
    }

    /// The idle client of `token` (None when stale or lent out).
    pub fn get(&self, token: usize) -> Option<&Slot> {
        Clients::here(&self.seats[self.current(token)?])
    }

    pub fn get_mut(&mut self, token: usize) -> Option<&mut Slot> {
        let i = self.current(token)?;
        Clients::here_mut(&mut self.seats[i])
    }

    pub fn find_id(&mut self, id: u64) -> Option<usize> {
        self.iter().find(|(_, s)| s.client.id == id).map(|(t, _)| t)
    }
}

/// The listening sockets as the core sees them: CONFIG SET bind/port reopens them. The
/// runtime implements it over its sockets (the core knows nothing of mio) and reaches its
/// own type back through `as_any`.
pub trait Listening: std::any::Any {
    /// Listens where `config`'s bind and port now say; on error the previous sockets stay.
    fn rebind_tcp(&mut self, config: &Config) -> std::io::Result<()>;
    /// The TCP port listened on, if any (the one the OS chose for `port 0`).
    fn tcp_port(&self) -> Option<u16>;
    fn as_any(&self) -> &dyn std::any::Any;
}

/// No sockets: a server state without an event loop (unit tests). Rebinding does nothing.
pub struct NotListening;

impl Listening for NotListening {
    fn rebind_tcp(&mut self, _: &Config) -> std::io::Result<()> {
        Ok(())
    }

    fn tcp_port(&self) -> Option<u16> {
        None
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

pub struct ServerState {
    pub config: Config,
    /// ACL users, their rules and the log of refusals.
    pub acl: crate::acl::Acl,
    pub config_file: Option<PathBuf>,
    pub dbs: Vec<Db>,
    pub stats: Stats,
    pub clients: Clients,
    pub commandlog: CommandLogs,
    /// The latency monitor's spikes (LATENCY).
    pub latency: crate::server::latency::LatencyMonitor,
    pub run_id: String,
    /// Replication ID (INFO `master_replid`); a primary without replicas still has one.
    pub replid: String,
    pub start_ms: i64,
    /// `used_memory` when the server state was created (INFO `used_memory_startup`).
    pub used_memory_startup: usize,
    pub next_client_id: u64,
    pub pause: Pause,
    pub shutdown: Option<ShutdownMode>,
    pub rng: Rng,
    /// The TCP port actually listened on (when `port 0` lets the OS choose, the chosen one).
    pub tcp_port: u16,
    /// The listening sockets (opened by the event loop, which owns them; [`NotListening`] in
    /// a state without one).
    pub listeners: Box<dyn Listening>,
    pub executable: String,
    pub active_expire_enabled: bool,
    /// DEBUG PAUSE-CRON: the time events are skipped while set.
    pub cron_paused: bool,
    /// Whether a drained reply buffer past 64 KiB is given back down to 16 KiB (on by
    /// default; `DEBUG REPLYBUFFER RESIZING 0` keeps buffers at their largest).
    pub reply_buffer_resizing: bool,
    /// Client slots (tokens) of MONITOR clients.
    pub monitors: Vec<usize>,
    /// Clients blocked on keys (BLPOP and friends).
    pub blocking: crate::server::blocking::Blocking,
    /// Pub/sub subscriptions, server-wide (`server::pubsub`).
    pub pubsub: crate::server::pubsub::PubSub,
    /// Client-side caching: tracked keys, BCAST prefixes, tracking clients (`server::tracking`).
    pub tracking: crate::server::tracking::Tracking,
    /// WATCH: who watches which keys, and whose watches went dirty (`server::multi`).
    pub watches: crate::server::multi::Watches,
    /// How many things need the keyspace's own removals besides notifications (watched keys,
    /// tracked keys): see `events`.
    pub removal_listeners: usize,
    /// The event logs are on because clients are blocked on keys (`events`).
    pub logging_for_blocked: bool,
    /// Clients served or timed out of a block since the event loop last looked: their queued
    /// commands can run again.
    pub unblocked: Vec<usize>,
    /// Slots to close at the end of this tick (CLIENT KILL of other clients).
    pub to_close: Vec<usize>,
    /// The children running forked debugging sessions (`runtime::ldb`), reaped by the time
    /// events and killed at shutdown.
    pub ldb_children: Vec<i32>,
    /// Slots with output to write at the end of this tick.
    pub to_write: Vec<usize>,
    pub lastsave_s: i64,
    /// Persistence's own state (the AOF, BGSAVE), kept here for that layer above the core,
    /// which alone reads it (`persist::state`).
    pub persist: Box<dyn std::any::Any>,
    /// Replication's state, opaque here for the same reason: the `replication` layer alone
    /// reads it (`replication::state`).
    pub repl: Box<dyn std::any::Any>,
    /// This server follows a primary (`REPLICAOF host port`): no active expiry, writes
    /// refused (`replica-read-only`), its feed proxies the primary's stream.
    pub is_replica: bool,
    /// The propagation feed: every write, in execution order (`propagate`).
    pub feed: crate::server::propagate::Feed,
    /// Changes since the last save (see `events`).
    pub dirty: crate::server::events::Dirty,
    /// Counts changes to the dataset (key events raised by commands, databases emptied or
    /// swapped): a command that moved it is logged to the AOF (`persist::aof`).
    pub changes: u64,
    /// Replaying the AOF at start-up: expire times already past are set, not acted on.
    pub loading: bool,
    /// What every database's `expiry` is (see [`ServerState::set_expiry`]).
    expiry: Expiry,
    pub hz: u32,
    pub cron_loops: u64,
    /// The last slow expire cycle ran out of time: run fast cycles before sleeping.
    pub expire_fast_wanted: bool,
    pub expire_fast_last_ms: i64,
    /// Whether I/O threads run (io-threads > 1).
    pub io_threads_active: bool,
    /// EVAL scripts: the interpreter and the script cache (`scripting::eval`).
    pub scripts: crate::scripting::eval::Scripts,
    /// FUNCTION libraries and their interpreter (`scripting::functions`).
    pub functions: crate::scripting::functions::Functions,
    /// The OOM state before the command now running (eviction could not get under
    /// maxmemory): scripts refuse commands that may grow memory on it, as Valkey's
    /// `pre_command_oom_state`.
    pub pre_command_oom: bool,
    /// The client scripts run their commands as (`runtime::script`), kept between runs.
    pub script_client: Option<Box<Slot>>,
    /// The script running now (see `server::script_run`); None between scripts.
    pub script_run: Option<crate::server::script_run::ScriptRun>,
    /// MIGRATE's idle connections to its targets, closed after 10 s idle by the time
    /// events (Valkey's `migrate_cached_sockets`).
    pub migrate_conns: crate::util::sync_conn::ConnCache,
}

impl ServerState {
    /// While a script keeps the server busy (past `busy-reply-threshold`), the error the
    /// commands not flagged allow-busy get.
    pub fn busy_error(&self) -> Option<crate::spec::error::ScriptError> {
        self.script_run.as_ref().filter(|r| r.timed_out).map(|r| r.busy_error())
    }

    pub fn new(config: Config, config_file: Option<PathBuf>, now_ms: i64) -> ServerState {
        let dbs = (0..config.databases.max(1)).map(|_| Db::new()).collect();
        let hz = config.hz;
        let seed = now_ms as u64 ^ (std::process::id() as u64) << 32;
        let mut acl = crate::acl::Acl::new();
        acl.set_default_password(config.requirepass.as_bytes());
        let mut srv = ServerState {
            acl,
            config,
            config_file,
            dbs,
            stats: Stats::default(),
            clients: Clients::default(),
            commandlog: CommandLogs::default(),
            latency: Default::default(),
            run_id: random_hex(seed, 40),
            replid: random_hex(seed.rotate_left(17) ^ 0x9e37_79b9_7f4a_7c15, 40),
            start_ms: now_ms,
            used_memory_startup: crate::memory::used_memory(),
            next_client_id: 1,
            pause: Pause::default(),
            shutdown: None,
            rng: Rng::new(seed | 1),
            tcp_port: 0,
            listeners: Box::new(NotListening),
            executable: std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            active_expire_enabled: true,
            cron_paused: false,
            reply_buffer_resizing: true,
            monitors: Vec::new(),
            blocking: Default::default(),
            pubsub: Default::default(),
            tracking: Default::default(),
            watches: Default::default(),
            unblocked: Vec::new(),
            removal_listeners: 0,
            logging_for_blocked: false,
            to_close: Vec::new(),
            ldb_children: Vec::new(),
            to_write: Vec::new(),
            lastsave_s: now_ms / 1000,
            persist: Box::new(()),
            repl: Box::new(()),
            is_replica: false,
            feed: Default::default(),
            dirty: Default::default(),
            changes: 0,
            loading: false,
            expiry: Expiry::Live,
            hz,
            cron_loops: 0,
            expire_fast_wanted: false,
            expire_fast_last_ms: 0,
            io_threads_active: false,
            scripts: crate::scripting::eval::Scripts::new().expect("the Lua interpreter starts"),
            functions: crate::scripting::functions::Functions::new()
                .expect("the Lua interpreter starts"),
            pre_command_oom: false,
            script_client: None,
            script_run: None,
            migrate_conns: Default::default(),
        };
        srv.refresh_removal_log();
        srv
    }

    /// Replaying the AOF at start-up (`on`) or done: while loading, expire times already
    /// past are kept as written and nothing expires (see `Expiry::Paused`).
    pub fn set_loading(&mut self, on: bool) {
        self.loading = on;
        self.set_expiry(if on { Expiry::Paused } else { Expiry::Live });
    }

    /// How every database's lookups meet expired keys from now on (see [`Expiry`]): set
    /// before each command; costs a comparison when it does not change.
    #[inline]
    pub fn set_expiry(&mut self, expiry: Expiry) {
        if self.expiry != expiry {
            self.expiry = expiry;
            for db in &mut self.dbs {
                db.expiry = expiry;
            }
        }
    }

    /// A pseudo-random number (xorshift64*), for sampling.
    pub fn random(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Whether commands of `is_write` kind are paused at `now_ms`.
    pub fn paused(&self, is_write: bool, now_ms: i64) -> bool {
        if (self.pause.failover || self.pause.shutdown) && is_write {
            return true;
        }
        match self.pause.kind {
            Some(PauseKind::All) => now_ms < self.pause.until_ms,
            Some(PauseKind::Write) => is_write && now_ms < self.pause.until_ms,
            None => false,
        }
    }
}

/// Per-second rate over the sample ring.
pub fn rate(samples: &[(i64, u64); 16], idx: usize) -> f64 {
    let n = samples.len();
    let newest = samples[(idx + n - 1) % n];
    let oldest = samples[idx % n];
    if oldest.0 == 0 || newest.0 <= oldest.0 {
        return 0.0;
    }
    (newest.1 - oldest.1) as f64 * 1000.0 / (newest.0 - oldest.0) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::reply::Proto;

    fn slot(id: u64) -> Box<Slot> {
        let client = Client::new(id, String::new(), String::new(), -1, false, 0);
        Box::new(Slot::new(client, Reply::new(Proto::Resp2)))
    }

    #[test]
    fn a_stale_token_is_refused_after_its_slot_is_reused() {
        let mut c = Clients::default();
        let first = c.insert(slot(1));
        assert_eq!(c.get_mut(first).map(|s| s.client.id), Some(1));
        assert!(c.remove(first).is_some());
        let second = c.insert(slot(2));
        assert_eq!(slot_index(second), slot_index(first), "the slot is reused");
        assert_ne!(second, first, "under a new generation");
        assert!(c.get_mut(first).is_none(), "the old token finds nothing");
        assert!(c.lend(first).is_none());
        assert!(c.remove(first).is_none());
        assert!(c.outbox(first).is_none(), "no message reaches the seat's new client");
        assert_eq!(c.get(second).map(|s| s.client.id), Some(2));
        let lent = c.lend(second).expect("current");
        assert!(c.get(second).is_none(), "lent out");
        assert!(c.outbox(first).is_none(), "not while the new client runs either");
        assert!(c.remove(second).is_none(), "a lent client stays");
        c.put_back(second, lent);
        assert_eq!(c.iter().map(|(t, s)| (t, s.client.id)).collect::<Vec<_>>(), [(second, 2)]);
        assert_eq!(c.find_id(2), Some(second));
        assert_eq!(c.count, 1);
    }

    /// Fan-out reaches a client through its outbox whether it is idle or running a
    /// command; a running client gets what it was sent after its reply.
    #[test]
    fn the_outbox_stays_reachable_while_the_client_runs() {
        let mut c = Clients::default();
        let t = c.insert(slot(1));
        match c.outbox(t) {
            Some(mut o @ Outbox::Idle(_)) => o.out().simple("before"),
            _ => panic!("an idle client's outbox is its reply buffer"),
        }
        let mut running = c.lend(t).expect("current");
        running.out.simple("reply-1");
        match c.outbox(t) {
            Some(mut o @ Outbox::Running(_)) => {
                assert!(!o.closing());
                o.out().simple("pushed");
            }
            _ => panic!("a running client's outbox stays in the table"),
        }
        c.deliver_waiting(t, &mut running.out);
        running.out.simple("reply-2");
        c.outbox(t).expect("current").out().simple("late");
        c.put_back(t, running);
        let out = &c.get(t).expect("back").out;
        assert_eq!(out.buf, b"+before\r\n+reply-1\r\n+pushed\r\n+reply-2\r\n+late\r\n");
        // The outbox speaks the protocol the client switched to while it ran.
        let running = c.lend(t).expect("current");
        c.running_protocol(t, Proto::Resp3);
        c.outbox(t).expect("current").out().null();
        c.put_back(t, running);
        assert!(c.get(t).expect("back").out.buf.ends_with(b"_\r\n"));
    }

    /// Two clients lent at once (a command that serves a blocked client runs the other's
    /// command meanwhile) keep their own outboxes, whatever order they come back in.
    #[test]
    fn outboxes_of_clients_lent_together_stay_apart() {
        let mut c = Clients::default();
        let (a, b) = (c.insert(slot(1)), c.insert(slot(2)));
        let (ra, rb) = (c.lend(a).expect("a"), c.lend(b).expect("b"));
        c.outbox(a).expect("a").out().simple("for-a");
        c.outbox(b).expect("b").out().simple("for-b");
        c.outbox(a).expect("a").out().simple("again-a");
        assert_eq!(c.put_back(b, rb).out.buf, b"+for-b\r\n");
        assert_eq!(c.put_back(a, ra).out.buf, b"+for-a\r\n+again-a\r\n");
        assert!(c.waiting.is_empty());
        let ra = c.lend(a).expect("a");
        assert!(c.put_back(a, ra).out.buf.ends_with(b"+again-a\r\n"), "nothing new");
    }

    #[test]
    fn generations_wrap_below_the_listener_tokens() {
        let mut c = Clients::default();
        let mut t = c.insert(slot(1));
        c.remove(t);
        c.gens[0] = GEN_LIMIT - 1;
        t = c.insert(slot(1));
        assert_eq!(t, make_token(0, GEN_LIMIT - 1));
        c.remove(t);
        assert_eq!(c.insert(slot(1)), 0, "the generation wrapped to 0");
        assert!(make_token(u32::MAX as usize, GEN_LIMIT - 1) < usize::MAX - 64);
    }
}
