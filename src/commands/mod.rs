//! Commands: the declarative table (`table`, entries in `defs`), the contexts handed to
//! handlers, and the handlers grouped by family.
//!
//! Handlers never check arity or authentication (dispatch does, from the table), never invent
//! error text (they return a [`CmdError`](error::CmdError)), and never touch the clients'
//! sockets (MIGRATE's own connection to its target goes through `util::sync_conn`). A data
//! command's handler (strings, hashes, lists, sets, sorted sets, keys, SORT, DUMP/RESTORE)
//! gets a [`Ctx`]: the keyspace, the settings, its client and its reply as separate borrows,
//! and reports every change through [`Ctx::changed`]; it cannot reach the client table, the
//! registries or persistence. A server-wide command's handler (CONFIG, CLIENT, INFO, DEBUG,
//! SAVE, pub/sub, transactions, FLUSHALL...) gets a [`ServerCtx`], whose one capability is
//! the whole server state. The table says which is which (`table::Handler`).

pub mod acl_cmd;
pub mod aof_cmd;
pub mod aof_replay;
pub mod args;
pub mod bitmap;
pub mod client_cmd;
mod client_filter;
pub mod command;
pub mod config_cmd;
pub mod connection;
pub mod defs;
pub mod dump;
pub mod function_cmd;
pub mod geo;
pub mod hash;
pub mod hll;
pub mod info;
pub mod keyspace;
pub mod list;
pub mod metrics;
pub mod migrate;
pub mod multi;
mod names;
pub mod persist_cmd;
pub mod pubsub;
pub mod repl_cmd;
pub mod reply_limit;
pub mod script_cmd;
pub mod server_cmd;
pub mod set;
pub mod sort;
pub mod stream;
pub mod string;
pub mod tracking_cmd;
pub mod zset;

use bytes::Bytes;
use std::sync::OnceLock;

use crate::config::Config;
use crate::keyspace::db::Db;
use crate::resp::reply::Reply;
use crate::server::blocking::BlockRequest;
use crate::server::client::Client;
use crate::server::propagate::Feed;
use crate::server::state::ServerState;
pub use crate::spec::error;
pub use crate::spec::error::{CmdError, CmdResult};
use crate::util::rng::Rng;
pub use table::Command;

/// The command table's shape from `spec`, with this layer's handler type filled in.
pub mod table {
    pub use crate::spec::table::*;

    use bytes::Bytes;

    use crate::commands::{CmdResult, Ctx, ServerCtx};

    /// What runs a command: a data command's handler works on a [`Ctx`] (the keyspace, the
    /// settings, its client and its reply); a server-wide command's (CONFIG, CLIENT, INFO,
    /// DEBUG, persistence, pub/sub, transactions, FLUSHALL...) on a [`ServerCtx`], which
    /// holds the whole server state as its one named capability.
    #[derive(Clone, Copy)]
    pub enum Handler {
        Data(fn(&mut Ctx, &[Bytes]) -> CmdResult),
        Server(fn(&mut ServerCtx, &[Bytes]) -> CmdResult),
    }
    pub use Handler::{Data, Server};

    /// A command of this server's table.
    pub type Command = crate::spec::table::Command<Handler>;
}

/// What a data command's handler works with: separate borrows of the keyspace, the
/// settings, the calling client and its reply, and nothing else of the server. Every effect
/// of a write goes through [`Ctx::changed`] into the key's database (`server::events`).
pub struct Ctx<'a> {
    /// Every database; the client's is `dbs[client.db]` ([`Ctx::db`]).
    pub dbs: &'a mut [Db],
    /// The settings, read only.
    pub config: &'a Config,
    pub client: &'a mut Client,
    pub out: &'a mut Reply,
    /// Unix time in milliseconds, fixed for the duration of the command.
    pub now_ms: i64,
    /// The client's slot in the client table (its token).
    pub slot: usize,
    /// Expire times already past are set, not acted on: while replaying the AOF at
    /// start-up, and on a replica (its primary decides when keys expire), as Valkey's
    /// `checkAlreadyExpired`.
    pub keep_past_expiry: bool,
    /// The command comes from our primary or from the AOF (Valkey's `mustObeyClient`):
    /// what it says was already decided (stream trims apply no work limit).
    pub obeyed: bool,
    /// The server's generator, for random choices (SPOP, SRANDMEMBER, RANDOMKEY...).
    pub rng: &'a mut Rng,
    /// The propagation feed, for [`Ctx::propagate_as`].
    feed: &'a mut Feed,
    /// Clients to close at the end of the tick, for [`Ctx::close_asap`].
    to_close: &'a mut Vec<usize>,
    /// The ACL users, read only (SORT's BY and GET patterns need every key readable).
    pub acl: &'a crate::acl::Acl,
}

/// What a server-wide command's handler works with: the whole server state, named.
pub struct ServerCtx<'a> {
    pub srv: &'a mut ServerState,
    pub client: &'a mut Client,
    pub out: &'a mut Reply,
    /// Unix time in milliseconds, fixed for the duration of the command.
    pub now_ms: i64,
    /// The client's slot in the client table (its token).
    pub slot: usize,
}

/// Runs `handler` for `client` on `srv`, with the context its kind takes.
pub fn run_handler(
    handler: table::Handler,
    srv: &mut ServerState,
    client: &mut Client,
    out: &mut Reply,
    argv: &[Bytes],
    now_ms: i64,
    slot: usize,
) -> CmdResult {
    match handler {
        table::Handler::Data(h) => with_ctx(srv, client, out, now_ms, slot, |ctx| h(ctx, argv)),
        table::Handler::Server(h) => h(&mut ServerCtx { srv, client, out, now_ms, slot }, argv),
    }
}

/// Runs `f` with the data context of `client` on `srv`.
pub fn with_ctx<R>(
    srv: &mut ServerState,
    client: &mut Client,
    out: &mut Reply,
    now_ms: i64,
    slot: usize,
    f: impl FnOnce(&mut Ctx) -> R,
) -> R {
    let ServerState { dbs, config, loading, is_replica, rng, feed, to_close, acl, .. } = srv;
    let keep_past_expiry = *loading || *is_replica;
    // While loading, only the AOF runs commands.
    let obeyed = *loading || client.kind == crate::server::client::ClientKind::Primary;
    f(&mut Ctx {
        dbs,
        config,
        client,
        out,
        now_ms,
        slot,
        keep_past_expiry,
        obeyed,
        rng,
        feed,
        to_close,
        acl,
    })
}

impl Ctx<'_> {
    /// The client's selected database.
    pub fn db(&mut self) -> &mut Db {
        &mut self.dbs[self.client.db]
    }

    /// A pseudo-random number (xorshift64*), for sampling.
    pub fn random(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Whether this command may block its client. False inside MULTI/EXEC and for clients
    /// that cannot wait (as in Valkey, such a command answers its timeout reply at once).
    pub fn can_block(&self) -> bool {
        !self.client.in_exec
    }

    /// Blocks the client on `req.keys` instead of replying: the command runs again, from the
    /// start, when one of the keys is signaled ready (see `server::blocking`), or answers
    /// `req.on_timeout` when the time comes. Only call when [`Ctx::can_block`] is true.
    pub fn block(&mut self, req: BlockRequest) {
        debug_assert!(self.can_block(), "block() where the client cannot block");
        self.client.block_request = Some(req);
    }

    /// Every change a command makes to the dataset is reported here, once per keyspace
    /// event, after the change: `key` of the client's database changed as event `event` of
    /// `class` (a `KeyspaceEvents` bit: GENERIC, STRING, LIST, SET, HASH, ZSET...; Valkey's
    /// event name: `set`, `del`, `expire`, `lpush`, `hset`, `zadd`, `rename_from`...), with
    /// `dirty` changes toward the save points (one per element added or removed, 0 for a
    /// second event of the same change). Every consequence follows from this one call
    /// (`server::events`): the dirty counter, notifications, WATCH, tracking, blocked
    /// clients and the propagation feed.
    pub fn changed(&mut self, key: &[u8], dirty: u64, class: u32, event: &'static str) {
        self.dbs[self.client.db].changed(key, dirty, class, event);
    }

    /// A change to the consumer groups of the stream at `key` (XGROUP, XREADGROUP, XACK,
    /// XCLAIM, XAUTOCLAIM): see [`Db::group_changed`]. Valkey fails no WATCH and tells no
    /// tracking client for these, and raises an event only for some (`xgroup-*`).
    pub fn group_changed(
        &mut self,
        key: &[u8],
        dirty: u64,
        event: Option<&'static str>,
        wake: bool,
    ) {
        self.dbs[self.client.db].group_changed(key, dirty, event, wake, false);
    }

    /// As [`Ctx::changed`], for a key of database `db` (COPY ... DB, MOVE).
    pub fn changed_in(
        &mut self,
        db: usize,
        key: &[u8],
        dirty: u64,
        class: u32,
        event: &'static str,
    ) {
        self.dbs[db].changed(key, dirty, class, event);
        if db != self.client.db {
            // Dispatch drains only the client's database after a data command, unless told.
            self.dbs[self.client.db].pending.others = true;
        }
    }

    /// Expires `key` (of the client's database) at once, for a command that set an expire
    /// time already past; see [`crate::keyspace::db::Db::expire_now`]. The command raises no
    /// event of its own, so it is not logged itself: the removal is. True when it existed.
    pub fn expire_now(&mut self, key: &[u8]) -> bool {
        self.dbs[self.client.db].expire_now(key, self.now_ms)
    }

    /// Whether the propagation feed records commands (the AOF is on).
    pub fn propagating(&self) -> bool {
        self.feed.on
    }

    /// Logs `cmds` to the AOF instead of the running command (for a command whose effect
    /// was random, such as SPOP: the log must say what happened). Nothing when the AOF is off.
    pub fn propagate_as(&mut self, cmds: impl FnOnce() -> Vec<Vec<Bytes>>) {
        if self.feed.on {
            self.feed.replaced = Some(cmds());
        }
    }

    /// Closes the client at the end of this tick, after its reply (a reply past its limit).
    pub fn close_asap(&mut self) {
        self.client.close_asap = true;
        self.to_close.push(self.slot);
    }
}

impl ServerCtx<'_> {
    /// The client's selected database.
    pub fn db(&mut self) -> &mut Db {
        &mut self.srv.dbs[self.client.db]
    }
}

fn lookup_table() -> &'static names::NameTable<&'static Command> {
    static TABLE: OnceLock<names::NameTable<&'static Command>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let renames = RENAMES.get().map_or(&[][..], Vec::as_slice);
        let mut entries: Vec<(&'static [u8], &'static Command)> = Vec::new();
        for c in all() {
            match renames.iter().find(|(from, _)| from == c.name) {
                // Renamed to nothing: gone.
                Some((_, to)) if to.is_empty() => {}
                Some((_, to)) => {
                    let name: &'static str = Box::leak(to.to_ascii_lowercase().into_boxed_str());
                    entries.push((name.as_bytes(), c));
                }
                None => entries.push((c.name.as_bytes(), c)),
            }
        }
        names::NameTable::new(entries)
    })
}

/// `rename-command` (table name, new name; empty: removed), fixed at start-up before the
/// first lookup.
static RENAMES: OnceLock<Vec<(String, String)>> = OnceLock::new();

/// Apply the configuration's `rename-command` lines to every later lookup. ACL rules keep
/// using the table's names, as Valkey's keep using its original command table.
pub fn set_renames(renames: Vec<(String, String)>) {
    let _ = RENAMES.set(renames);
}

/// Whether `name` (lower case) is a command of the table, whatever the renames.
pub fn in_table(name: &str) -> bool {
    all().any(|c| c.name == name)
}

/// Find a top-level command by name, case-insensitively.
pub fn lookup(name: &[u8]) -> Option<&'static Command> {
    #[cfg(test)]
    lookups::COUNT.with(|c| c.set(c.get() + 1));
    lookup_table().get(name)
}

/// Every top-level command, family by family.
pub fn all() -> impl Iterator<Item = &'static Command> {
    defs::FAMILIES.iter().flat_map(|f| f.iter())
}

/// Lookups by name this thread made ([`lookup`]), for the tests that check that a command
/// is looked up once, where it is parsed.
#[cfg(test)]
pub mod lookups {
    use std::cell::Cell;

    thread_local! {
        pub(super) static COUNT: Cell<u64> = const { Cell::new(0) };
    }

    /// Lookups since the last call, on this thread.
    pub fn take() -> u64 {
        COUNT.with(|c| c.replace(0))
    }
}
