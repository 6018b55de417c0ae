//! Client-side caching (CLIENT TRACKING): which clients may hold which keys in a local cache,
//! and the invalidation messages that tell them to drop a key.
//!
//! # Modes
//!
//! A tracking client is in one of four modes ([`Mode`]). In the default mode every key a
//! read-only command of the client names is remembered in the *tracking table*; OPTIN
//! remembers only the keys of the command right after `CLIENT CACHING YES`, OPTOUT all but
//! those of the command right after `CLIENT CACHING NO`. When a remembered key changes
//! (a write, FLUSHDB/FLUSHALL, expiry, eviction) every client listed for it gets one
//! invalidation and the key leaves the table: it is remembered again when read again.
//! BCAST clients remember nothing: they register prefixes, and every changed key under one
//! of them is announced, batched per prefix, once per event-loop turn.
//!
//! ```text
//!   Tracking (server-wide; keys of every db together, as in Valkey)
//!   table     "user:1" -> [id 7, id 12]        sorted client ids, per key read
//!             keys ["user:1", "cfg", ...]      the same keys again, for random eviction
//!   prefixes  "user:" -> clients {9}, keys {"user:3" -> last changed by id 4}
//!   clients   id 7 -> {slot 3, mode, redirect, noloop, ...}   every tracking client's settings
//! ```
//!
//! Ids in the table are dropped lazily, as in Valkey: a client that turns tracking off or
//! disconnects leaves its ids behind, and an invalidation for a client that is not tracking
//! any more is skipped. `tracking-table-max-keys` bounds the table: before each command,
//! while it is over the limit, random keys are invalidated as if they had changed.
//!
//! # Delivery
//!
//! A RESP3 client gets `>2 invalidate [keys]` (or `_` for "everything", after a flush). A
//! client with `REDIRECT id` has its messages sent to that client instead: as a push when the
//! target speaks RESP3, as a `message` on `__redis__:invalidate` when it is a RESP2 client in
//! pub/sub mode, and not at all otherwise. When the target is gone the tracking client is
//! flagged `broken_redirect` and, in RESP3, told with `>2 tracking-redir-broken id`.
//!
//! Messages are written into the receiving client's outbox (`obuf::Fanout`), so delivery
//! needs nothing of the client but its seat: the settings that route a message live here, in
//! the registry, not in the client's state (which is lent out while it runs a command). What a
//! client is sent while it runs a command follows its reply, as Valkey sends a client's own
//! invalidations after its reply; those of the table limit, which runs before the command,
//! go before it ([`begin`]). BCAST announcements go out from the event loop before it writes
//! ([`before_sleep`]).
//!
//! This module owns the tables and the delivery; the commands are in
//! `commands::tracking_cmd`. It never touches sockets.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use bytes::Bytes;

use crate::resp::reply::Reply;
use crate::server::client::Client;
use crate::server::obuf::Fanout;
use crate::server::pubsub::PubSub;
use crate::server::state::{Clients, ServerState, Slot};
use crate::spec::table::{flag, key_positions, Command, KeyBuf};

/// The channel a RESP2 redirect target receives invalidations on.
pub const INVALIDATE_CHANNEL: &[u8] = b"__redis__:invalidate";

/// Random keys invalidated per command and per earlier round that did not reach
/// tracking-table-max-keys (Valkey's effort).
const LIMIT_EFFORT_PER_ROUND: u32 = 100;

/// What a tracking client remembers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Every key its read-only commands name.
    #[default]
    Default,
    /// Only the keys of the command right after `CLIENT CACHING YES`.
    OptIn,
    /// Every key but those of the command right after `CLIENT CACHING NO`.
    OptOut,
    /// Nothing: changed keys under its prefixes are announced.
    Bcast,
}

/// One client's tracking settings, kept in the registry ([`Tracking::settings`]) while its
/// tracking is on (`Client::tracking` says it is).
#[derive(Debug, Default)]
pub struct ClientTracking {
    /// The tracking client's token.
    pub token: usize,
    pub mode: Mode,
    /// No invalidations for keys this client changed itself.
    pub noloop: bool,
    /// `CLIENT CACHING` was given for the next command (YES in OPTIN, NO in OPTOUT mode).
    pub caching: bool,
    /// Client id that receives this client's invalidations; 0: this client.
    pub redirect: u64,
    /// The slot of `redirect` when it was set (checked against the id before each use).
    pub redirect_slot: usize,
    /// A message could not be redirected: the target is gone.
    pub broken_redirect: bool,
    /// BCAST prefixes, in byte order.
    pub prefixes: BTreeSet<Bytes>,
}

/// A validated `CLIENT TRACKING ON`.
#[derive(Debug)]
pub struct Enable {
    pub mode: Mode,
    pub noloop: bool,
    /// (client id, its slot).
    pub redirect: Option<(u64, usize)>,
    /// BCAST prefixes (none: the empty prefix, every key).
    pub prefixes: Vec<Bytes>,
}

/// The body of an invalidation.
#[derive(Clone, Debug)]
enum Payload {
    Keys(Arc<[Bytes]>),
    /// Every key (after FLUSHDB / FLUSHALL): a null.
    All,
}

impl Payload {
    fn write(&self, out: &mut Reply) {
        match self {
            Payload::Keys(keys) => {
                out.array(keys.len());
                for k in keys.iter() {
                    out.bulk(k);
                }
            }
            Payload::All => out.null(),
        }
    }
}

/// Why an invalidation is sent, which decides the checks it gets at the tracking client.
#[derive(Clone, Copy, Debug)]
enum Origin {
    /// A key of the tracking table: BCAST clients skip it, and a NOLOOP client skips it
    /// when it is the client running the command (`by_target`).
    Table { by_target: bool },
    /// A flush or a BCAST announcement: sent as is.
    Direct,
}

/// Who a message is written to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    /// The tracking client itself.
    Own,
    /// The tracking client's redirect target.
    Redirected,
}

/// Keys being announced to the BCAST clients of one prefix.
#[derive(Debug, Default)]
struct Bcast {
    clients: BTreeSet<u64>,
    /// Changed keys since the last announcement, each with the id of the client that
    /// changed it last (0: none), for NOLOOP.
    keys: BTreeMap<Bytes, u64>,
}

/// The tracking table: key -> ids of clients that may have it cached.
#[derive(Debug, Default)]
struct KeyTable {
    entries: HashMap<Bytes, Entry, ahash::RandomState>,
    /// Every key of `entries` (the same allocation), for picking one at random;
    /// `Entry::pos` is its index here.
    keys: Vec<Bytes>,
    /// Ids over all entries (INFO `tracking_total_items`).
    items: u64,
}

#[derive(Debug)]
struct Entry {
    pos: usize,
    /// Sorted, without duplicates.
    ids: Vec<u64>,
}

impl KeyTable {
    fn len(&self) -> usize {
        self.keys.len()
    }

    fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Remembers that client `id` may cache `key`.
    fn add(&mut self, key: &[u8], id: u64) {
        if let Some(e) = self.entries.get_mut(key) {
            if let Err(i) = e.ids.binary_search(&id) {
                e.ids.insert(i, id);
                self.items += 1;
            }
            return;
        }
        let key = Bytes::copy_from_slice(key);
        self.keys.push(key.clone());
        self.entries.insert(key, Entry { pos: self.keys.len() - 1, ids: vec![id] });
        self.items += 1;
    }

    /// Takes `key` out of the table; the ids that had it.
    fn remove(&mut self, key: &[u8]) -> Option<Vec<u64>> {
        let e = self.entries.remove(key)?;
        self.keys.swap_remove(e.pos);
        if let Some(moved) = self.keys.get(e.pos) {
            self.entries.get_mut(moved).expect("every listed key has an entry").pos = e.pos;
        }
        self.items -= e.ids.len() as u64;
        Some(e.ids)
    }

    fn random_key(&self, r: u64) -> Option<Bytes> {
        let n = self.keys.len() as u64;
        (n > 0).then(|| self.keys[(r % n) as usize].clone())
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.keys.clear();
        self.items = 0;
    }

    #[cfg(test)]
    fn check_invariants(&self) {
        assert_eq!(self.entries.len(), self.keys.len());
        let mut items = 0;
        for (i, k) in self.keys.iter().enumerate() {
            let e = &self.entries[k];
            assert_eq!(e.pos, i);
            assert!(!e.ids.is_empty());
            assert!(e.ids.windows(2).all(|w| w[0] < w[1]));
            items += e.ids.len() as u64;
        }
        assert_eq!(items, self.items);
    }
}

/// Server-wide tracking state (`ServerState::tracking`).
#[derive(Debug, Default)]
pub struct Tracking {
    table: KeyTable,
    prefixes: BTreeMap<Bytes, Bcast>,
    /// Every client with tracking on: id -> its settings.
    clients: HashMap<u64, ClientTracking, ahash::RandomState>,
    /// Clients running a command, outermost first: (slot, id). The last one is Valkey's
    /// "current client".
    executing: Vec<(usize, u64)>,
    /// Rounds in a row that ended over tracking-table-max-keys.
    limit_rounds: u32,
    /// Some prefix has keys to announce.
    bcast_pending: bool,
    /// FLUSHDB / FLUSHALL / SWAPDB reported a whole-db change during the running command.
    db_change_pending: bool,
}

impl Tracking {
    /// INFO `tracking_clients`.
    pub fn clients(&self) -> usize {
        self.clients.len()
    }

    /// The tracking settings of client `id` (None while its tracking is off).
    pub fn settings(&self, id: u64) -> Option<&ClientTracking> {
        self.clients.get(&id)
    }

    pub fn settings_mut(&mut self, id: u64) -> Option<&mut ClientTracking> {
        self.clients.get_mut(&id)
    }

    /// INFO `tracking_total_keys`.
    pub fn total_keys(&self) -> usize {
        self.table.len()
    }

    /// INFO `tracking_total_items`.
    pub fn total_items(&self) -> u64 {
        self.table.items
    }

    /// INFO `tracking_total_prefixes`.
    pub fn total_prefixes(&self) -> usize {
        self.prefixes.len()
    }

    /// Whether a changed key can concern anyone (the check `key_modified` starts with).
    #[inline]
    pub fn watches_keys(&self) -> bool {
        !self.table.is_empty() || !self.prefixes.is_empty()
    }

    /// A whole db is about to change (FLUSHDB, FLUSHALL, SWAPDB; see `events`). Handled
    /// after the command, which tells a flush from a swap (Valkey invalidates everything
    /// on a flush only).
    pub fn db_modified(&mut self) {
        if !self.clients.is_empty() || !self.table.is_empty() {
            self.db_change_pending = true;
        }
    }
}

/// What delivery needs of the server state, borrowed apart from the tables.
struct Io<'a> {
    clients: &'a mut Clients,
    fanout: Fanout<'a>,
    index: &'a mut HashMap<u64, ClientTracking, ahash::RandomState>,
    pubsub: &'a PubSub,
}

fn split(srv: &mut ServerState) -> (Io<'_>, &mut KeyTable, &mut BTreeMap<Bytes, Bcast>) {
    let ServerState { clients, to_write, to_close, config, stats, tracking, pubsub, .. } = srv;
    let Tracking { table, prefixes, clients: index, .. } = tracking;
    let fanout = Fanout::new(to_write, to_close, config, stats);
    (Io { clients, fanout, index, pubsub }, table, prefixes)
}

/// Writes one invalidation for the client whose outbox `out` is, as Valkey does: a RESP3
/// push; for a RESP2 redirect target in pub/sub mode (`subscriber`) a `message` on
/// `__redis__:invalidate`; else nothing (RESP2 has no way to push on a normal connection).
/// True when written.
fn write_invalidation(out: &mut Reply, subscriber: bool, payload: &Payload, route: Route) -> bool {
    if out.is_resp3() {
        out.push(2);
        out.bulk(b"invalidate");
    } else if route == Route::Redirected && subscriber {
        out.push(3);
        out.bulk(b"message");
        out.bulk(INVALIDATE_CHANNEL);
    } else {
        return false;
    }
    payload.write(out);
    true
}

/// Sends an invalidation of tracking client `id` where its settings say: Valkey's
/// `sendTrackingMessage`, with the mode checks of `origin` first. A client that stopped
/// tracking is skipped (its ids leave the table lazily).
fn send_from(io: &mut Io, id: u64, payload: &Payload, origin: Origin) {
    let Some(t) = io.index.get_mut(&id) else { return };
    if let Origin::Table { by_target } = origin {
        if t.mode == Mode::Bcast || (by_target && t.noloop) {
            return;
        }
    }
    if t.redirect == 0 {
        io.fanout
            .send(io.clients, t.token, |out| write_invalidation(out, false, payload, Route::Own));
        return;
    }
    // The redirect target's token is stale once it has gone, whoever took its seat.
    let target = t.redirect_slot;
    if io.clients.is_current(target) {
        let subscriber = io.pubsub.is_subscriber(target);
        io.fanout.send(io.clients, target, |out| {
            write_invalidation(out, subscriber, payload, Route::Redirected)
        });
        return;
    }
    t.broken_redirect = true;
    let redirect = t.redirect;
    io.fanout.send(io.clients, t.token, |out| {
        if !out.is_resp3() {
            return false;
        }
        out.push(2);
        out.bulk(b"tracking-redir-broken");
        out.int(redirect as i64);
        true
    });
}

/// Invalidates `key` of the tracking table for every client listed for it. `current` is
/// the id of the client running the command (for NOLOOP).
fn invalidate_table_key(srv: &mut ServerState, key: &[u8], current: Option<u64>) {
    let (mut io, table, _) = split(srv);
    let Some(ids) = table.remove(key) else { return };
    let payload = Payload::Keys(Arc::from([Bytes::copy_from_slice(key)]));
    for id in ids {
        let origin = Origin::Table { by_target: current == Some(id) };
        send_from(&mut io, id, &payload, origin);
    }
}

/// `key` (of any db) changed or was removed: called from `ServerState::key_modified`.
pub fn key_modified(srv: &mut ServerState, key: &[u8]) {
    if !srv.tracking.watches_keys() {
        return;
    }
    let current = srv.tracking.executing.last().map(|&(_, id)| id);
    if !srv.tracking.prefixes.is_empty() {
        remember_for_broadcast(&mut srv.tracking, key, current.unwrap_or(0));
    }
    invalidate_table_key(srv, key, current);
}

/// Notes a changed key for every prefix it falls under.
fn remember_for_broadcast(tr: &mut Tracking, key: &[u8], changed_by: u64) {
    let mut owned: Option<Bytes> = None;
    for (prefix, bs) in tr.prefixes.iter_mut() {
        if !key.starts_with(prefix) {
            continue;
        }
        let k = owned.get_or_insert_with(|| Bytes::copy_from_slice(key)).clone();
        bs.keys.insert(k, changed_by);
        tr.bcast_pending = true;
    }
}

/// FLUSHDB / FLUSHALL: every tracking client (BCAST ones too) is told that all its keys are
/// invalid, and the table is emptied.
fn invalidate_all(srv: &mut ServerState) {
    let (mut io, table, _) = split(srv);
    table.clear();
    let ids: Vec<u64> = io.index.keys().copied().collect();
    for id in ids {
        send_from(&mut io, id, &Payload::All, Origin::Direct);
    }
}

/// Announces the keys changed under each prefix to its BCAST clients: one message per
/// prefix, keys in byte order; a NOLOOP client does not hear of its own changes.
fn broadcast(srv: &mut ServerState) {
    let (mut io, _, prefixes) = split(srv);
    for bs in prefixes.values_mut() {
        if bs.keys.is_empty() {
            continue;
        }
        let keys = std::mem::take(&mut bs.keys);
        let all = Payload::Keys(keys.keys().cloned().collect());
        for &id in &bs.clients {
            let Some(t) = io.index.get(&id) else { continue };
            if !t.noloop {
                send_from(&mut io, id, &all, Origin::Direct);
                continue;
            }
            let others: Arc<[Bytes]> =
                keys.iter().filter(|&(_, &by)| by != id).map(|(k, _)| k.clone()).collect();
            if !others.is_empty() {
                send_from(&mut io, id, &Payload::Keys(others), Origin::Direct);
            }
        }
    }
}

/// Keeps the tracking table within tracking-table-max-keys, before a command runs: random
/// keys are invalidated, and what the running client got goes out before its reply.
#[inline(never)]
fn limit_table(srv: &mut ServerState, token: usize, slot: &mut Slot) {
    limit_table_for(srv, Some(slot.client.id));
    srv.clients.deliver_waiting(token, &mut slot.out);
}

/// The time events' share of the limit, as Valkey's cron: a `CONFIG SET
/// tracking-table-max-keys` that lowered the limit is acted on even when no command follows.
pub fn cron(srv: &mut ServerState) {
    if !srv.tracking.clients.is_empty() {
        limit_table_for(srv, None);
    }
}

/// Invalidates random keys of the table until it is within its limit, with an effort that
/// grows each time a round ends above it. `current`: the id of the client about to run a
/// command, if any.
fn limit_table_for(srv: &mut ServerState, current: Option<u64>) {
    let max = srv.config.tracking_table_max_keys as usize;
    if max == 0 || srv.tracking.table.len() <= max {
        srv.tracking.limit_rounds = 0;
        return;
    }
    let mut effort = LIMIT_EFFORT_PER_ROUND.saturating_mul(srv.tracking.limit_rounds + 1);
    while effort > 0 {
        effort -= 1;
        let r = srv.random();
        let Some(key) = srv.tracking.table.random_key(r) else { break };
        invalidate_table_key(srv, &key, current);
        if srv.tracking.table.len() <= max {
            srv.tracking.limit_rounds = 0;
            return;
        }
    }
    srv.tracking.limit_rounds = srv.tracking.limit_rounds.saturating_add(1);
}

/// Before a command's handler runs (dispatch): the client becomes the current one, and the
/// table is brought within its limit (before the command as a whole: not inside EXEC, where
/// a message would land inside EXEC's reply).
#[inline]
pub fn begin(srv: &mut ServerState, token: usize, slot: &mut Slot) {
    if !srv.tracking.clients.is_empty() && !slot.client.in_exec {
        limit_table(srv, token, slot);
    }
    srv.tracking.executing.push((token, slot.client.id));
}

/// After a command's reply (dispatch): a flush invalidates everything, the keys a
/// read-only command named are remembered, and the one-command CLIENT CACHING setting ends.
#[inline]
pub fn after_command<H: Copy>(
    srv: &mut ServerState,
    client: &Client,
    cmd: &Command<H>,
    argv: &[Bytes],
) {
    if srv.tracking.db_change_pending || client.tracking {
        after_command_tracked(srv, client, cmd, argv);
    }
}

#[inline(never)]
fn after_command_tracked<H: Copy>(
    srv: &mut ServerState,
    client: &Client,
    cmd: &Command<H>,
    argv: &[Bytes],
) {
    if std::mem::take(&mut srv.tracking.db_change_pending) && cmd.name != "swapdb" {
        invalidate_all(srv);
    }
    if client.tracking {
        remember_keys(srv, client, cmd, argv);
        let in_transaction = client.in_exec || client.multi.is_some();
        // Valkey keeps the flag across CLIENT subcommands and inside a transaction.
        if !cmd.name.starts_with("client|") && !in_transaction {
            if let Some(t) = srv.tracking.clients.get_mut(&client.id) {
                t.caching = false;
            }
        }
    }
}

/// When dispatch is done with a command (after blocked clients it woke were served): the
/// client stops being the current one.
pub fn end(srv: &mut ServerState, token: usize) {
    let popped = srv.tracking.executing.pop();
    debug_assert_eq!(popped.map(|(s, _)| s), Some(token), "begin/end out of step");
}

/// Remembers the keys of a read-only command for a tracking client (not BCAST), as its
/// OPTIN/OPTOUT setting allows.
fn remember_keys<H: Copy>(
    srv: &mut ServerState,
    client: &Client,
    cmd: &Command<H>,
    argv: &[Bytes],
) {
    let Some(t) = srv.tracking.clients.get(&client.id) else { return };
    // Shard channels are keys for cluster routing only: not cached data.
    if cmd.flags & flag::READONLY == 0 || cmd.flags & flag::PUBSUB != 0 {
        return;
    }
    let wanted = match t.mode {
        Mode::Default => true,
        Mode::OptIn => t.caching,
        Mode::OptOut => !t.caching,
        Mode::Bcast => false,
    };
    if !wanted {
        return;
    }
    let mut keys = KeyBuf::new();
    if !key_positions(cmd, argv, &mut keys) {
        return;
    }
    for i in keys.iter() {
        srv.tracking.table.add(&argv[i as usize], client.id);
    }
}

/// Before the event loop writes (and before it sleeps): BCAST announcements.
pub fn before_sleep(srv: &mut ServerState) {
    if std::mem::take(&mut srv.tracking.bcast_pending) {
        broadcast(srv);
    }
}

/// CLIENT TRACKING ON with validated options (an already tracking client keeps its
/// CLIENT CACHING setting and its prefixes, and adds the new ones).
pub fn enable(srv: &mut ServerState, client: &mut Client, token: usize, e: Enable) {
    let id = client.id;
    let newly = !client.tracking;
    client.tracking = true;
    let t = srv.tracking.clients.entry(id).or_default();
    t.token = token;
    t.mode = e.mode;
    t.noloop = e.noloop;
    t.broken_redirect = false;
    (t.redirect, t.redirect_slot) = e.redirect.unwrap_or((0, 0));
    if e.mode == Mode::Bcast {
        let prefixes = if e.prefixes.is_empty() { vec![Bytes::new()] } else { e.prefixes };
        for p in prefixes {
            let bs = srv.tracking.prefixes.entry(p.clone()).or_default();
            if bs.clients.insert(id) {
                t.prefixes.insert(p);
            }
        }
    }
    if newly && srv.tracking.clients.len() == 1 {
        // Expired and evicted keys invalidate too: the keyspace must log them.
        srv.removal_listeners += 1;
        srv.refresh_removal_log();
    }
}

/// CLIENT TRACKING OFF, RESET, and a closing connection. The client's ids stay in the
/// table until their keys change.
pub fn disable(srv: &mut ServerState, client: &mut Client) {
    if !std::mem::take(&mut client.tracking) {
        return;
    }
    let t = srv.tracking.clients.remove(&client.id).expect("a tracking client is registered");
    for p in &t.prefixes {
        let Some(bs) = srv.tracking.prefixes.get_mut(p) else { continue };
        bs.clients.remove(&client.id);
        if bs.clients.is_empty() {
            srv.tracking.prefixes.remove(p);
        }
    }
    if srv.tracking.clients.is_empty() {
        srv.removal_listeners -= 1;
        srv.refresh_removal_log();
    }
}

/// A connection closed: its tracking ends. Clients that redirect to it find out at their
/// next invalidation (`broken_redirect`).
pub fn client_closed(srv: &mut ServerState, client: &mut Client) {
    disable(srv, client);
}

/// CLIENT LIST `redir=`: the redirect id while tracking (0: none), else -1.
pub fn list_redirect(settings: Option<&ClientTracking>) -> i64 {
    settings.map_or(-1, |t| t.redirect as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_table_model() {
        let mut t = KeyTable::default();
        let mut model: HashMap<Vec<u8>, BTreeSet<u64>> = HashMap::new();
        let mut rng = crate::util::rng::Rng::new(0x9e37_79b9_7f4a_7c15);
        for step in 0..20_000u32 {
            let x = rng.next_u64();
            let key = format!("k{}", x % 97).into_bytes();
            match x % 5 {
                0..=2 => {
                    let id = (x >> 8) % 13 + 1;
                    t.add(&key, id);
                    model.entry(key).or_default().insert(id);
                }
                3 => {
                    let got = t.remove(&key);
                    let want = model.remove(&key).map(|s| s.into_iter().collect::<Vec<_>>());
                    assert_eq!(got, want);
                }
                _ => {
                    if let Some(k) = t.random_key(x) {
                        assert!(model.contains_key(&k[..]));
                    } else {
                        assert!(model.is_empty());
                    }
                }
            }
            if step.is_multiple_of(1000) {
                t.check_invariants();
            }
        }
        t.check_invariants();
        assert_eq!(t.len(), model.len());
        assert_eq!(t.items, model.values().map(|s| s.len() as u64).sum::<u64>());
        t.clear();
        t.check_invariants();
        assert!(t.is_empty());
    }

    #[test]
    fn payloads_encode_per_protocol() {
        use crate::resp::reply::Proto;
        let keys = Payload::Keys(Arc::from([Bytes::from_static(b"a"), Bytes::from_static(b"bc")]));
        let mut r3 = Reply::new(Proto::Resp3);
        keys.write(&mut r3);
        Payload::All.write(&mut r3);
        assert_eq!(r3.buf, b"*2\r\n$1\r\na\r\n$2\r\nbc\r\n_\r\n");
        let mut r2 = Reply::new(Proto::Resp2);
        Payload::All.write(&mut r2);
        assert_eq!(r2.buf, b"$-1\r\n");
    }

    #[test]
    fn broadcast_keys_collect_per_prefix() {
        let mut tr = Tracking::default();
        tr.prefixes.entry(Bytes::from_static(b"user:")).or_default().clients.insert(1);
        tr.prefixes.entry(Bytes::new()).or_default().clients.insert(2);
        remember_for_broadcast(&mut tr, b"user:1", 7);
        remember_for_broadcast(&mut tr, b"obj", 0);
        remember_for_broadcast(&mut tr, b"user:1", 9);
        assert!(tr.bcast_pending);
        let user = &tr.prefixes[&b"user:"[..]].keys;
        assert_eq!(user.iter().collect::<Vec<_>>(), [(&Bytes::from_static(b"user:1"), &9)]);
        assert_eq!(tr.prefixes[&b""[..]].keys.len(), 2);
    }
}
