//! Transactions and optimistic locking: the queue of a client inside MULTI, running it for
//! EXEC, and the watched-keys registry behind WATCH.
//!
//! # Transactions
//!
//! A client in MULTI owns a [`Transaction`] (`Client::multi`). Dispatch checks every command
//! as usual (existence, arity, authentication, no-multi, OOM for `denyoom` commands); a refused command flags the
//! transaction ([`rejected`]), so that EXEC answers EXECABORT; an accepted one is queued
//! ([`queue`]) and answered `+QUEUED`, except the few that act on the transaction itself
//! ([`runs_in_multi`]). EXEC's handler (`commands::multi`) decides whether the transaction
//! runs; if it does, dispatch (in the runtime) runs the queued commands right after the
//! handler, one by one through `dispatch::call` (statistics, slow log, MONITOR feed,
//! keyspace events: everything but the checks, as Valkey's `call()`), with `in_exec` set so
//! that blocking commands answer their timeout reply at once. A queued command keeps only its
//! arguments: it is looked up again when it runs (the table is static, so it finds the same
//! command).
//!
//! The queue is bounded: its arguments are copied out of the query buffer and counted
//! ([`Transaction::bytes`]), and a client whose queue outgrows `client-query-buffer-limit`
//! is closed as one whose query buffer did (Valkey counts the queue in the client's memory).
//!
//! # WATCH
//!
//! ```text
//!   Watches.dbs[db]: key ──> [Watcher { slot, expired }, ...]    who watches a key
//!   Watches.clients: slot ──> ClientWatch { keys: [(db, key)], dirty }
//! ```
//!
//! Both sides live here, in the server state, because the client running a command is lent
//! out of the client table while it runs: a write can dirty its own watches (WATCH k; SET k;
//! MULTI; EXEC fails), so the "dirty CAS" flag cannot live in `Client`.
//!
//! A watch goes dirty when its key is modified (`ServerState::key_modified`: any write that
//! changed it, expiry and eviction included), when FLUSHDB / FLUSHALL remove it, when SWAPDB
//! changes what the key names, or when it expires before EXEC. As in Valkey 7.0, a key that
//! had already expired (but was still stored) when it was watched is not dirtied by its
//! deletion — logically nothing changed — and not by EXEC finding it still expired; a write
//! that brings it back does dirty it. A dirty client's keys are unwatched at once (nothing
//! can undo the flag); the flag stays until EXEC, DISCARD, UNWATCH or RESET.
//!
//! While any key is watched the registry counts as one of `removal_listeners`, so the
//! keyspace logs the keys it expires or evicts; nothing here costs more than one check while
//! nobody watches.

use std::collections::HashMap;

use bytes::Bytes;

use crate::keyspace::db::Db;
use crate::server::client::Client;
use crate::server::state::{ServerState, Slot};
use crate::spec::error::MultiError;
use crate::spec::table::flag;
use crate::spec::table::Command;
use crate::spec::CmdError;

/// Per queued command: the argument vector and the queue entry, counted against the limit.
const QUEUED_OVERHEAD_BYTES: usize = 64;
/// Per argument of a queued command.
const ARG_OVERHEAD_BYTES: usize = std::mem::size_of::<Bytes>();

type Map<K, V> = HashMap<K, V, ahash::RandomState>;

/// One queued command.
#[derive(Debug)]
pub struct Queued {
    /// The command's table entry, found when it was queued (EXEC runs it without another
    /// lookup). This layer knows the table's shape but not its handler type, so the entry
    /// is kept as `Any`; dispatch downcasts it back.
    pub cmd: &'static (dyn std::any::Any + Send + Sync),
    pub argv: Vec<Bytes>,
}

/// The state of a client between MULTI and EXEC/DISCARD.
#[derive(Default, Debug)]
pub struct Transaction {
    pub commands: Vec<Queued>,
    /// Bytes held by the queue (arguments plus per-entry overhead).
    pub bytes: usize,
    /// The union of the queued commands' flags: EXEC is a write (for pause) or may grow
    /// memory (for OOM) when one of its commands is.
    pub flags: u64,
    /// A command was refused while queuing: EXEC answers EXECABORT (Valkey's DIRTY_EXEC).
    pub aborted: bool,
    /// Set by EXEC's handler once the transaction is to run: dispatch runs the queue.
    pub exec_ready: bool,
}

/// Whether `cmd` acts on the transaction (or the connection) itself instead of being queued.
pub fn runs_in_multi<H: Copy>(cmd: &Command<H>) -> bool {
    matches!(cmd.name, "exec" | "discard" | "multi" | "watch" | "quit" | "reset")
}

/// Inside MULTI, when memory is over maxmemory, Valkey 9.1 refuses what it refuses outside
/// (the `denyoom` commands, checked by the caller) and queues the rest; EXEC, itself not
/// `denyoom`, is refused when one of its queued commands is.
pub fn refused_when_oom<H: Copy>(client: &Client, cmd: &Command<H>) -> bool {
    let Some(t) = client.multi.as_deref() else { return false };
    cmd.name == "exec" && t.flags & flag::DENYOOM != 0
}

/// Whether EXEC counts as a write for CLIENT PAUSE WRITE (one of its commands is).
pub fn exec_is_write<H: Copy>(client: &Client, cmd: &Command<H>) -> bool {
    cmd.name == "exec"
        && client.multi.as_deref().is_some_and(|t| {
            t.flags & (flag::WRITE | flag::MAY_REPLICATE | flag::MAY_REPLICATE_UNPRINTED) != 0
        })
}

/// A command refused before it ran (unknown, wrong arity, not authenticated, no-multi,
/// OOM). Inside MULTI the transaction is flagged so that EXEC aborts; a refused EXEC aborts
/// the transaction at once. Returns the error to reply.
pub fn rejected<H: Copy>(
    srv: &mut ServerState,
    token: usize,
    client: &mut Client,
    cmd: Option<&Command<H>>,
    e: CmdError,
) -> CmdError {
    // EXEC refused is EXECABORT, in a transaction or not (as Valkey's `rejectCommand`).
    if cmd.is_some_and(|c| c.name == "exec") {
        if client.multi.is_some() {
            discard(srv, token, client);
        }
        let text = e.to_string();
        let why = text.strip_prefix("ERR ").unwrap_or(&text);
        return CmdError::Multi(MultiError::ExecAbortBecause(why.to_string()));
    }
    if client.multi.is_none() {
        return e;
    }
    if let Some(t) = client.multi.as_deref_mut() {
        t.aborted = true;
    }
    e
}

/// Queue `argv` (an accepted command inside MULTI) and answer `+QUEUED`. A queue that
/// outgrows `client-query-buffer-limit` closes the client instead.
pub fn queue<H: Copy + Send + Sync + 'static>(
    srv: &mut ServerState,
    token: usize,
    slot: &mut Slot,
    cmd: &'static Command<H>,
    argv: &[Bytes],
) {
    let t = slot.client.multi.as_deref_mut().expect("queue() outside MULTI");
    // Copied, so the queue holds only its own bytes, not the query buffer's chunks.
    let argv: Vec<Bytes> = argv.iter().map(|a| Bytes::copy_from_slice(a)).collect();
    t.bytes +=
        QUEUED_OVERHEAD_BYTES + argv.iter().map(|a| a.len() + ARG_OVERHEAD_BYTES).sum::<usize>();
    t.flags |= cmd.flags;
    t.commands.push(Queued { cmd, argv });
    let limit = (srv.config.client_query_buffer_limit as usize).max(1);
    if t.bytes + slot.client.qbuf_len > limit {
        tracing::warn!(
            "Closing client that reached max query buffer length: id={} addr={} (transaction of {} bytes)",
            slot.client.id,
            slot.client.addr,
            t.bytes
        );
        srv.stats.client_qbuf_limit_disconnections += 1;
        slot.client.multi = None;
        slot.client.close_asap = true;
        srv.to_close.push(token);
        return;
    }
    slot.out.simple("QUEUED");
}

/// Leave MULTI (DISCARD, EXEC, RESET): drop the queue and every watch of the client.
pub fn discard(srv: &mut ServerState, token: usize, client: &mut Client) {
    client.multi = None;
    unwatch_all(srv, token);
}

/// Dispatch's hook right after every handler: a pending FLUSHDB's watch check.
pub fn after_handler(srv: &mut ServerState) {
    if srv.watches.pending_flush.is_some() {
        finish_flush(srv);
    }
}

/// A watched key in the registry.
struct Watcher {
    slot: usize,
    /// The key was stored but already expired when it was watched.
    expired: bool,
}

/// What one client watches.
#[derive(Default)]
struct ClientWatch {
    keys: Vec<(usize, Bytes)>,
    /// A watched key was modified: EXEC will fail (Valkey's DIRTY_CAS).
    dirty: bool,
}

/// The watched-keys registry (see the module documentation).
#[derive(Default)]
pub struct Watches {
    /// Per database (grown on demand): who watches each key.
    dbs: Vec<Map<Bytes, Vec<Watcher>>>,
    clients: Map<usize, ClientWatch>,
    /// Distinct (db, key) pairs watched.
    keys_len: usize,
    /// Clients watching at least one key.
    watching: usize,
    /// FLUSHDB (or the first half of SWAPDB) announced for this db: its watched keys that
    /// exist, checked after the handler unless SWAPDB's second half comes first.
    pending_flush: Option<(usize, Vec<Bytes>)>,
}

impl Watches {
    /// Whether any key is watched: the one check paid by every key event while none is.
    #[inline]
    pub fn any(&self) -> bool {
        self.keys_len != 0
    }

    /// INFO `watching_clients`.
    pub fn watching_clients(&self) -> usize {
        self.watching
    }

    /// INFO `total_watched_keys`.
    pub fn keys_len(&self) -> usize {
        self.keys_len
    }

    /// How many keys the client in `slot` watches (CLIENT LIST `watch=`).
    pub fn client_keys(&self, slot: usize) -> usize {
        self.clients.get(&slot).map_or(0, |c| c.keys.len())
    }

    /// Whether a watched key of the client in `slot` was modified (CLIENT LIST flag `d`).
    pub fn is_dirty(&self, slot: usize) -> bool {
        self.clients.get(&slot).is_some_and(|c| c.dirty)
    }

    fn mark_dirty(&mut self, slot: usize) {
        if let Some(c) = self.clients.get_mut(&slot) {
            c.dirty = true;
        }
    }
}

/// WATCH `key` of `db` for the client in `slot`.
pub fn watch(srv: &mut ServerState, slot: usize, db: usize, key: &[u8], now_ms: i64) {
    let w = &mut srv.watches;
    let c = w.clients.entry(slot).or_default();
    if c.keys.iter().any(|(d, k)| *d == db && k[..] == *key) {
        return;
    }
    let key = Bytes::copy_from_slice(key);
    let expired = srv.dbs[db].stored(&key).is_some_and(|e| !Db::is_live(e, now_ms));
    if c.keys.is_empty() {
        w.watching += 1;
    }
    c.keys.push((db, key.clone()));
    if w.dbs.len() <= db {
        w.dbs.resize_with(db + 1, Map::default);
    }
    let watchers = w.dbs[db].entry(key).or_default();
    let new_key = watchers.is_empty();
    watchers.push(Watcher { slot, expired });
    if new_key {
        w.keys_len += 1;
        if w.keys_len == 1 {
            srv.removal_listeners += 1;
            srv.refresh_removal_log();
        }
    }
}

/// Stop watching every key of the client in `slot`; its dirty flag stays.
fn unwatch_keys(srv: &mut ServerState, slot: usize) {
    let w = &mut srv.watches;
    let Some(c) = w.clients.get_mut(&slot) else { return };
    if c.keys.is_empty() {
        return;
    }
    w.watching -= 1;
    let had_keys = w.keys_len > 0;
    for (db, key) in std::mem::take(&mut c.keys) {
        let map = &mut w.dbs[db];
        let watchers = map.get_mut(&key).expect("a client's watched key is registered");
        watchers.retain(|x| x.slot != slot);
        if watchers.is_empty() {
            map.remove(&key);
            w.keys_len -= 1;
        }
    }
    if had_keys && w.keys_len == 0 {
        srv.removal_listeners -= 1;
        srv.refresh_removal_log();
    }
}

/// UNWATCH, EXEC, DISCARD, RESET and a closed connection: no keys, no dirty flag.
pub fn unwatch_all(srv: &mut ServerState, slot: usize) {
    unwatch_keys(srv, slot);
    srv.watches.clients.remove(&slot);
}

/// The client in `slot` disconnected.
pub fn client_closed(srv: &mut ServerState, slot: usize, client: &mut Client) {
    discard(srv, slot, client);
}

/// For EXEC: whether the client's watches went dirty, or one of its keys has expired since
/// it was watched.
pub fn watches_failed(srv: &ServerState, slot: usize, now_ms: i64) -> bool {
    let Some(c) = srv.watches.clients.get(&slot) else { return false };
    if c.dirty {
        return true;
    }
    c.keys.iter().any(|(db, key)| {
        let expired_at_watch = srv.watches.dbs[*db]
            .get(key)
            .and_then(|ws| ws.iter().find(|x| x.slot == slot))
            .is_some_and(|x| x.expired);
        !expired_at_watch && srv.dbs[*db].stored(key).is_some_and(|e| !Db::is_live(e, now_ms))
    })
}

/// `key` of `db` was modified: its watchers go dirty (and stop watching), except those that
/// watched it already expired and now see it deleted.
pub fn key_modified(srv: &mut ServerState, db: usize, key: &[u8]) {
    let Some(watchers) = srv.watches.dbs.get_mut(db).and_then(|m| m.get_mut(key)) else {
        return;
    };
    let exists = srv.dbs[db].stored(key).is_some();
    let mut dirty = Vec::new();
    for w in watchers.iter_mut() {
        if w.expired && !exists {
            w.expired = false; // Deleted: logically unchanged, and no longer expired.
        } else {
            dirty.push(w.slot);
        }
    }
    for slot in dirty {
        srv.watches.mark_dirty(slot);
        unwatch_keys(srv, slot);
    }
}

/// FLUSHDB / FLUSHALL / SWAPDB announce (before changing anything) that every key of `db`
/// (None: of every db) changes. FLUSHALL is checked now; a single db is remembered until
/// the handler returns ([`after_handler`]), because SWAPDB announces its two dbs one after
/// the other and a watched key is dirtied by a swap when it exists in either.
pub fn db_modified(srv: &mut ServerState, db: Option<usize>) {
    if !srv.watches.any() {
        return;
    }
    let Some(db) = db else {
        finish_flush(srv);
        for db in 0..srv.watches.dbs.len() {
            let existing = existing_watched(srv, db);
            flush_watched(srv, db, existing);
        }
        return;
    };
    match srv.watches.pending_flush.take() {
        Some((first, _)) if first != db => {
            let now_ms = crate::util::clock::now_ms();
            swap_watched(srv, first, db, now_ms);
            swap_watched(srv, db, first, now_ms);
        }
        pending => {
            srv.watches.pending_flush = pending;
            finish_flush(srv);
            let existing = existing_watched(srv, db);
            srv.watches.pending_flush = Some((db, existing));
        }
    }
}

/// The watched keys of `db` that are stored there (expired or not).
fn existing_watched(srv: &ServerState, db: usize) -> Vec<Bytes> {
    let Some(map) = srv.watches.dbs.get(db) else { return Vec::new() };
    map.keys().filter(|k| srv.dbs[db].stored(k).is_some()).cloned().collect()
}

/// Apply the pending single-db flush, if any.
fn finish_flush(srv: &mut ServerState) {
    if let Some((db, existing)) = srv.watches.pending_flush.take() {
        flush_watched(srv, db, existing);
    }
}

/// `db` was emptied; `existing` were its watched keys that were stored. Their watchers go
/// dirty, except those that watched an already expired key (deleted now: no change).
fn flush_watched(srv: &mut ServerState, db: usize, existing: Vec<Bytes>) {
    let w = &mut srv.watches;
    let mut dirty = Vec::new();
    for key in existing {
        let Some(watchers) = w.dbs[db].get_mut(&key) else { continue };
        for x in watchers.iter_mut() {
            if x.expired {
                x.expired = false;
            } else {
                dirty.push(x.slot);
            }
        }
    }
    for slot in dirty {
        w.mark_dirty(slot);
    }
}

/// SWAPDB, for the watched keys of `emptied` (which gets `replaced`'s contents); both dbs
/// are still as before the swap. Valkey 7.0's `touchAllWatchedKeysInDb`.
fn swap_watched(srv: &mut ServerState, emptied: usize, replaced: usize, now_ms: i64) {
    let w = &mut srv.watches;
    let Some(map) = w.dbs.get_mut(emptied) else { return };
    let mut dirty = Vec::new();
    for (key, watchers) in map.iter_mut() {
        let in_emptied = srv.dbs[emptied].stored(key).is_some();
        let in_replaced = srv.dbs[replaced].stored(key);
        if !in_emptied && in_replaced.is_none() {
            continue;
        }
        let expired_in_replaced = in_replaced.is_some_and(|e| !Db::is_live(e, now_ms));
        for x in watchers.iter_mut() {
            if x.expired {
                if in_replaced.is_none() {
                    x.expired = false; // Deleted: no logical change.
                    continue;
                }
                if expired_in_replaced {
                    continue; // Still expired.
                }
            } else if !in_emptied && expired_in_replaced {
                x.expired = true; // A missing key replaced by an expired one.
                continue;
            }
            dirty.push(x.slot);
        }
    }
    for slot in dirty {
        w.mark_dirty(slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn server() -> ServerState {
        ServerState::new(Config::default(), None, 0)
    }

    #[test]
    fn the_registry_is_one_removal_listener_while_any_key_is_watched() {
        let mut srv = server();
        let base = srv.removal_listeners;
        watch(&mut srv, 1, 0, b"a", 0);
        watch(&mut srv, 1, 0, b"a", 0); // Already watched: no change.
        watch(&mut srv, 2, 0, b"a", 0);
        watch(&mut srv, 2, 3, b"a", 0);
        assert_eq!(srv.removal_listeners, base + 1);
        assert!(srv.dbs.iter().all(|d| d.log_removals));
        assert_eq!((srv.watches.watching_clients(), srv.watches.keys_len()), (2, 2));
        assert_eq!(srv.watches.client_keys(2), 2);
        unwatch_all(&mut srv, 1);
        assert_eq!((srv.watches.watching_clients(), srv.watches.keys_len()), (1, 2));
        unwatch_all(&mut srv, 2);
        assert_eq!((srv.watches.watching_clients(), srv.watches.keys_len()), (0, 0));
        assert_eq!(srv.removal_listeners, base);
        assert!(!srv.watches.any());
    }

    #[test]
    fn a_modified_key_dirties_its_watchers_in_its_db_only() {
        let mut srv = server();
        watch(&mut srv, 1, 0, b"k", 0);
        watch(&mut srv, 1, 0, b"other", 0);
        watch(&mut srv, 2, 1, b"k", 0);
        srv.key_modified(0, b"k");
        assert!(srv.watches.is_dirty(1) && !srv.watches.is_dirty(2));
        // The dirty client stopped watching; the flag stays until UNWATCH / EXEC / DISCARD.
        assert_eq!(srv.watches.client_keys(1), 0);
        assert!(watches_failed(&srv, 1, 0) && !watches_failed(&srv, 2, 0));
        unwatch_all(&mut srv, 1);
        assert!(!watches_failed(&srv, 1, 0));
    }

    #[test]
    fn flushing_or_swapping_dbs_without_the_watched_key_changes_nothing() {
        let mut srv = server();
        watch(&mut srv, 1, 0, b"k", 0);
        srv.db_modified(Some(0)); // FLUSHDB of a db without k.
        finish_flush(&mut srv);
        srv.db_modified(Some(0)); // SWAPDB 0 1, neither holding k.
        srv.db_modified(Some(1));
        assert!(srv.watches.pending_flush.is_none());
        srv.db_modified(None); // FLUSHALL.
        assert!(!srv.watches.is_dirty(1));
    }
}
