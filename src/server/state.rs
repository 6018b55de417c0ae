//! The state every command can reach: configuration, databases, statistics, the client table
//! and the server-wide switches (pause, shutdown, monitors).
//!
//! It is owned by the main thread and handed to handlers as `&mut` through `Ctx`; nothing in
//! here is shared with other threads.

use std::collections::HashMap;
use std::path::PathBuf;

use bytes::Bytes;

use crate::config::Config;
use crate::keyspace::db::Db;
use crate::resp::reply::Reply;
use crate::server::client::Client;
use crate::server::conn::Conn;
use crate::server::slowlog::SlowLog;
use crate::util::rng::{random_hex, Rng};

/// Per-command counters for INFO commandstats.
#[derive(Default, Debug, Clone, Copy)]
pub struct CmdStat {
    pub calls: u64,
    pub usec: u64,
    pub rejected_calls: u64,
    pub failed_calls: u64,
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
    pub cmd: HashMap<&'static str, CmdStat>,
    pub errors: HashMap<String, u64>,
    /// Ring of (ms, commands processed) samples for instantaneous_ops_per_sec.
    pub ops_samples: [(i64, u64); 16],
    pub ops_sample_idx: usize,
    pub net_in_samples: [(i64, u64); 16],
    pub net_out_samples: [(i64, u64); 16],
    pub peak_memory: usize,
    /// Failed AUTH / HELLO AUTH attempts (INFO `acl_access_denied_auth`).
    pub acl_denied_auth: u64,
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
}

/// A pending SHUTDOWN request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownMode {
    Default,
    Save,
    NoSave,
}

/// Key hashes computed with a parsed command (up to this many keys; the rest are hashed
/// when prefetched).
pub const PARSED_HASHES_MAX: usize = 4;

/// A parsed command: its arguments (slices of the query buffer) and the hashes of its first
/// keys, computed where it was parsed (an I/O thread, with io-threads > 1) for prefetching.
pub struct Parsed {
    pub argv: Vec<Bytes>,
    pub key_hashes: [u64; PARSED_HASHES_MAX],
    /// Argument index of each hashed key.
    pub key_args: [u32; PARSED_HASHES_MAX],
    /// Hashes set in `key_hashes`.
    pub key_hashes_len: u8,
    /// The command has more keys than `key_hashes` holds.
    pub more_keys: bool,
}

impl Parsed {
    /// Parse-time work beyond the RESP parser: find the keys from the command table's key
    /// specs and hash the first few with the keyspace's hasher (a pure function).
    pub fn new(argv: Vec<Bytes>, keys: &mut crate::commands::table::KeyBuf) -> Parsed {
        let mut p = Parsed {
            argv,
            key_hashes: [0; PARSED_HASHES_MAX],
            key_args: [0; PARSED_HASHES_MAX],
            key_hashes_len: 0,
            more_keys: false,
        };
        let Some(cmd) = crate::commands::lookup(&p.argv[0]) else { return p };
        if cmd.key_specs.is_empty() || !cmd.arity_ok(p.argv.len()) {
            return p;
        }
        if !crate::commands::table::key_positions(cmd, &p.argv, keys) {
            return p;
        }
        for (n, i) in keys.iter().enumerate() {
            if n == PARSED_HASHES_MAX {
                p.more_keys = true;
                break;
            }
            p.key_hashes[n] = crate::table::hash_key(&p.argv[i as usize]);
            p.key_args[n] = i;
            p.key_hashes_len += 1;
        }
        p
    }

    pub fn hashes(&self) -> &[u64] {
        &self.key_hashes[..self.key_hashes_len as usize]
    }

    /// (hash, key) of each hashed key.
    pub fn hashed_keys(&self) -> impl Iterator<Item = (u64, &[u8])> {
        (0..self.key_hashes_len as usize)
            .map(|n| (self.key_hashes[n], &self.argv[self.key_args[n] as usize][..]))
    }
}

/// One client: its state, its reply buffer, and its connection.
pub struct Slot {
    pub client: Client,
    pub out: Reply,
    /// None while the connection is away (on an I/O thread).
    pub conn: Option<Conn>,
    /// Parsed commands not executed yet, in order.
    pub pending: std::collections::VecDeque<Parsed>,
    /// A protocol error met after the pending commands: answered, then the client closes.
    pub proto_error: Option<crate::resp::parse::ProtoError>,
}

/// The client table: slots indexed by mio token. A slot is `None` when free or while its
/// client is executing (the executing client is lent to the handler).
#[derive(Default)]
pub struct Clients {
    pub slots: Vec<Option<Box<Slot>>>,
    pub free: Vec<usize>,
    pub count: usize,
}

impl Clients {
    pub fn insert(&mut self, slot: Box<Slot>) -> usize {
        self.count += 1;
        match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(slot);
                i
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        }
    }

    pub fn remove(&mut self, i: usize) -> Option<Box<Slot>> {
        let s = self.slots.get_mut(i)?.take()?;
        self.count -= 1;
        self.free.push(i);
        Some(s)
    }

    pub fn iter(&self) -> impl Iterator<Item = (usize, &Slot)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| s.as_deref().map(|s| (i, s)))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (usize, &mut Slot)> {
        self.slots.iter_mut().enumerate().filter_map(|(i, s)| s.as_deref_mut().map(|s| (i, s)))
    }

    pub fn get_mut(&mut self, i: usize) -> Option<&mut Slot> {
        self.slots.get_mut(i).and_then(|s| s.as_deref_mut())
    }

    pub fn find_id(&mut self, id: u64) -> Option<usize> {
        self.iter().find(|(_, s)| s.client.id == id).map(|(i, _)| i)
    }
}

pub struct ServerState {
    pub config: Config,
    pub config_file: Option<PathBuf>,
    pub dbs: Vec<Db>,
    pub stats: Stats,
    pub clients: Clients,
    pub slowlog: SlowLog,
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
    /// The listening sockets (opened by the event loop; empty in a state without one).
    pub listeners: crate::server::listener::Listeners,
    pub executable: String,
    pub active_expire_enabled: bool,
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
    /// Clients served or timed out of a block since the event loop last looked: their queued
    /// commands can run again.
    pub unblocked: Vec<usize>,
    /// Slots to close at the end of this tick (CLIENT KILL of other clients).
    pub to_close: Vec<usize>,
    /// Slots with output to write at the end of this tick.
    pub to_write: Vec<usize>,
    pub lastsave_s: i64,
    /// BGSAVE: the child in progress and how the last one ended.
    pub bgsave: crate::persist::bgsave::BgSave,
    /// The append-only file (`persist::aof`).
    pub aof: crate::persist::aof::Aof,
    pub dirty: u64,
    /// Counts changes to the dataset (key events raised by commands, databases emptied or
    /// swapped): a command that moved it is logged to the AOF (`persist::aof`).
    pub changes: u64,
    /// Replaying the AOF at start-up: expire times already past are set, not acted on.
    pub loading: bool,
    pub hz: u32,
    pub cron_loops: u64,
    /// The last slow expire cycle ran out of time: run fast cycles before sleeping.
    pub expire_fast_wanted: bool,
    pub expire_fast_last_ms: i64,
    /// Whether I/O threads run (io-threads > 1).
    pub io_threads_active: bool,
}

impl ServerState {
    pub fn new(config: Config, config_file: Option<PathBuf>, now_ms: i64) -> ServerState {
        let dbs = (0..config.databases.max(1)).map(|_| Db::new()).collect();
        let hz = config.hz;
        let seed = now_ms as u64 ^ (std::process::id() as u64) << 32;
        let mut srv = ServerState {
            config,
            config_file,
            dbs,
            stats: Stats::default(),
            clients: Clients::default(),
            slowlog: SlowLog::default(),
            run_id: random_hex(seed, 40),
            replid: random_hex(seed.rotate_left(17) ^ 0x9e37_79b9_7f4a_7c15, 40),
            start_ms: now_ms,
            used_memory_startup: crate::memory::used_memory(),
            next_client_id: 1,
            pause: Pause::default(),
            shutdown: None,
            rng: Rng::new(seed | 1),
            tcp_port: 0,
            listeners: Default::default(),
            executable: std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            active_expire_enabled: true,
            monitors: Vec::new(),
            blocking: Default::default(),
            pubsub: Default::default(),
            tracking: Default::default(),
            watches: Default::default(),
            unblocked: Vec::new(),
            removal_listeners: 0,
            to_close: Vec::new(),
            to_write: Vec::new(),
            lastsave_s: now_ms / 1000,
            bgsave: Default::default(),
            aof: Default::default(),
            dirty: 0,
            changes: 0,
            loading: false,
            hz,
            cron_loops: 0,
            expire_fast_wanted: false,
            expire_fast_last_ms: 0,
            io_threads_active: false,
        };
        srv.refresh_removal_log();
        srv
    }

    /// A pseudo-random number (xorshift64*), for sampling.
    pub fn random(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Whether commands of `is_write` kind are paused at `now_ms`.
    pub fn paused(&self, is_write: bool, now_ms: i64) -> bool {
        match self.pause.kind {
            Some(PauseKind::All) => now_ms < self.pause.until_ms,
            Some(PauseKind::Write) => is_write && now_ms < self.pause.until_ms,
            None => false,
        }
    }
}
