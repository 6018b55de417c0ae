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
//!   clients   id 7 -> slot 3, id 9 -> slot 5   every client with tracking on
//!   lent      [slot 3: key "user:1"]           messages for clients running a command
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
//! The client running a command is lent out of the client table ([`Slot`]), so messages for
//! it (as the tracking client, or as the redirect target) wait in `lent` until dispatch hands
//! the slot back ([`after_command`], [`end`]): they follow the command's reply, as Valkey
//! sends a client's own invalidations after its reply. Leftovers, and BCAST announcements,
//! go out from the event loop before it writes ([`before_sleep`]).
//!
//! This module owns the tables and the delivery; the commands are in
//! `commands::tracking_cmd`. It never touches sockets.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use bytes::Bytes;

use crate::config::Config;
use crate::resp::reply::Reply;
use crate::server::client::Client;
use crate::server::obuf;
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

/// One client's tracking settings; `Client::tracking` is `None` while tracking is off.
#[derive(Debug, Default)]
pub struct ClientTracking {
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

/// Work for a client that is lent out (running a command).
#[derive(Debug)]
struct Lent {
    slot: usize,
    id: u64,
    item: Item,
}

#[derive(Debug)]
enum Item {
    /// An invalidation for this tracking client: its checks run when it is back.
    Source(Payload, Origin),
    /// A message already checked at its tracking client: write it.
    Deliver(Payload, Route),
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
    /// Every client with tracking on: id -> slot.
    clients: HashMap<u64, usize, ahash::RandomState>,
    lent: Vec<Lent>,
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
    sink: Sink<'a>,
    index: &'a HashMap<u64, usize, ahash::RandomState>,
    lent: &'a mut Vec<Lent>,
    executing: &'a [(usize, u64)],
}

/// Where written clients are queued for writing (or closing, past their output limit).
struct Sink<'a> {
    to_write: &'a mut Vec<usize>,
    to_close: &'a mut Vec<usize>,
    config: &'a Config,
    outbuf_disconnections: &'a mut u64,
}

/// The client running a command, lent out of the table, where the caller has it.
type Cur<'s> = Option<(usize, &'s mut Slot)>;

fn split(srv: &mut ServerState) -> (Io<'_>, &mut KeyTable, &mut BTreeMap<Bytes, Bcast>) {
    let ServerState { clients, to_write, to_close, config, stats, tracking, .. } = srv;
    let Tracking { table, prefixes, clients: index, lent, executing, .. } = tracking;
    let sink = Sink {
        to_write,
        to_close,
        config,
        outbuf_disconnections: &mut stats.client_outbuf_limit_disconnections,
    };
    (Io { clients, sink, index, lent, executing }, table, prefixes)
}

/// The slot of `slot`: the lent-out one in `cur`, else the table's. The flag says it is
/// `cur`'s.
fn slot_in<'b>(
    clients: &'b mut Clients,
    cur: &'b mut Cur<'_>,
    slot: usize,
) -> Option<(&'b mut Slot, bool)> {
    match cur {
        Some((t, s)) if *t == slot => Some((&mut **s, true)),
        _ => clients.get_mut(slot).map(|s| (s, false)),
    }
}

impl Sink<'_> {
    /// `slot` got output: queue it for writing and enforce its output buffer limit. The
    /// running client (`is_cur`) is written and checked after its command, as usual.
    fn written(&mut self, token: usize, slot: &mut Slot, is_cur: bool) {
        if is_cur {
            return;
        }
        self.to_write.push(token);
        let sent = slot.sent;
        let pending = slot.out.len().saturating_sub(sent);
        if pending <= obuf::REPLY_STATIC_BYTES {
            slot.client.obuf_soft_since_ms = 0;
            return;
        }
        let now = crate::util::clock::now_ms();
        if obuf::output_over_limit(self.config, &mut slot.client, pending, now) {
            tracing::warn!(
                "Client id={} addr={} scheduled to be closed ASAP for overcoming of output \
                 buffer limits.",
                slot.client.id,
                slot.client.addr
            );
            slot.client.close_asap = true;
            self.to_close.push(token);
            *self.outbuf_disconnections += 1;
        }
    }
}

/// Writes one invalidation to the client that receives it, as Valkey does: a RESP3 push;
/// for a RESP2 redirect target in pub/sub mode a `message` on `__redis__:invalidate`; else
/// nothing (RESP2 has no way to push on a normal connection). True when written.
fn write_invalidation(slot: &mut Slot, payload: &Payload, route: Route) -> bool {
    if slot.client.close_asap {
        return false;
    }
    let out = &mut slot.out;
    if out.is_resp3() {
        out.push(2);
        out.bulk(b"invalidate");
    } else if route == Route::Redirected && slot.client.subs.total() > 0 {
        out.push(3);
        out.bulk(b"message");
        out.bulk(INVALIDATE_CHANNEL);
    } else {
        return false;
    }
    payload.write(out);
    true
}

/// Sends an invalidation of tracking client `id` (in `token`) where its settings say:
/// Valkey's `sendTrackingMessage`, with the mode checks of `origin` first.
fn send_from(io: &mut Io, cur: &mut Cur, token: usize, id: u64, payload: &Payload, origin: Origin) {
    let (redirect, rslot) = {
        let Some((slot, is_cur)) = slot_in(io.clients, cur, token) else {
            // A tracking client missing from the table is running a command.
            io.lent.push(Lent { slot: token, id, item: Item::Source(payload.clone(), origin) });
            return;
        };
        if slot.client.id != id {
            return;
        }
        let Some(t) = slot.client.tracking.as_deref() else { return };
        if let Origin::Table { by_target } = origin {
            if t.mode == Mode::Bcast || (by_target && t.noloop) {
                return;
            }
        }
        if t.redirect == 0 {
            if write_invalidation(slot, payload, Route::Own) {
                io.sink.written(token, slot, is_cur);
            }
            return;
        }
        (t.redirect, t.redirect_slot)
    };
    match slot_in(io.clients, cur, rslot) {
        Some((target, is_cur)) if target.client.id == redirect => {
            if write_invalidation(target, payload, Route::Redirected) {
                io.sink.written(rslot, target, is_cur);
            }
            return;
        }
        None if io.executing.iter().any(|&(s, i)| s == rslot && i == redirect) => {
            let item = Item::Deliver(payload.clone(), Route::Redirected);
            io.lent.push(Lent { slot: rslot, id: redirect, item });
            return;
        }
        _ => {}
    }
    // The target is gone.
    let Some((slot, is_cur)) = slot_in(io.clients, cur, token) else { return };
    let t = slot.client.tracking.as_deref_mut().expect("checked above");
    t.broken_redirect = true;
    if slot.out.is_resp3() && !slot.client.close_asap {
        slot.out.push(2);
        slot.out.bulk(b"tracking-redir-broken");
        slot.out.int(redirect as i64);
        io.sink.written(token, slot, is_cur);
    }
}

/// Invalidates `key` of the tracking table for every client listed for it. `current` is
/// the id of the client running the command (for NOLOOP).
fn invalidate_table_key(srv: &mut ServerState, cur: &mut Cur, key: &[u8], current: Option<u64>) {
    let (mut io, table, _) = split(srv);
    let Some(ids) = table.remove(key) else { return };
    let payload = Payload::Keys(Arc::from([Bytes::copy_from_slice(key)]));
    for id in ids {
        // Ids of clients that stopped tracking are dropped here, lazily.
        let Some(&token) = io.index.get(&id) else { continue };
        let origin = Origin::Table { by_target: current == Some(id) };
        send_from(&mut io, cur, token, id, &payload, origin);
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
    invalidate_table_key(srv, &mut None, key, current);
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
    let targets: Vec<(u64, usize)> = io.index.iter().map(|(&id, &slot)| (id, slot)).collect();
    for (id, token) in targets {
        send_from(&mut io, &mut None, token, id, &Payload::All, Origin::Direct);
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
            let Some(&token) = io.index.get(&id) else { continue };
            let noloop = io
                .clients
                .get_mut(token)
                .and_then(|s| s.client.tracking.as_deref())
                .is_some_and(|t| t.noloop);
            if !noloop {
                send_from(&mut io, &mut None, token, id, &all, Origin::Direct);
                continue;
            }
            let others: Arc<[Bytes]> =
                keys.iter().filter(|&(_, &by)| by != id).map(|(k, _)| k.clone()).collect();
            if !others.is_empty() {
                send_from(&mut io, &mut None, token, id, &Payload::Keys(others), Origin::Direct);
            }
        }
    }
}

/// Keeps the tracking table within tracking-table-max-keys, before a command runs: random
/// keys are invalidated (sent at once, so the running client sees them before its reply).
fn limit_table(srv: &mut ServerState, token: usize, slot: &mut Slot) {
    let id = slot.client.id;
    limit_table_for(srv, &mut Some((token, slot)), Some(id));
}

/// The time events' share of the limit, as Valkey's cron: a `CONFIG SET
/// tracking-table-max-keys` that lowered the limit is acted on even when no command follows.
pub fn cron(srv: &mut ServerState) {
    if !srv.tracking.clients.is_empty() {
        limit_table_for(srv, &mut None, None);
    }
}

/// Invalidates random keys of the table until it is within its limit, with an effort that
/// grows each time a round ends above it. `cur` is the client running a command (lent out
/// of the client table), if any.
fn limit_table_for(srv: &mut ServerState, cur: &mut Cur, current: Option<u64>) {
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
        invalidate_table_key(srv, cur, &key, current);
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
pub fn begin(srv: &mut ServerState, token: usize, slot: &mut Slot) {
    if !srv.tracking.clients.is_empty() && !slot.client.in_exec {
        limit_table(srv, token, slot);
    }
    srv.tracking.executing.push((token, slot.client.id));
}

/// After a command's reply (dispatch): a flush invalidates everything, the keys a
/// read-only command named are remembered, the one-command CLIENT CACHING setting ends,
/// and the messages that waited for this client follow its reply (after EXEC as a whole,
/// not between the replies inside it).
pub fn after_command<H: Copy>(
    srv: &mut ServerState,
    token: usize,
    slot: &mut Slot,
    cmd: &Command<H>,
    argv: &[Bytes],
) {
    if std::mem::take(&mut srv.tracking.db_change_pending) && cmd.name != "swapdb" {
        invalidate_all(srv);
    }
    if slot.client.tracking.is_some() {
        remember_keys(srv, &mut slot.client, cmd, argv);
        let in_transaction = slot.client.in_exec || slot.client.multi.is_some();
        let t = slot.client.tracking.as_deref_mut().expect("checked above");
        // Valkey keeps the flag across CLIENT subcommands and inside a transaction.
        if !cmd.name.starts_with("client|") && !in_transaction {
            t.caching = false;
        }
    }
    if !srv.tracking.lent.is_empty() && !slot.client.in_exec {
        flush_lent(srv, token, slot);
    }
}

/// When dispatch is done with a command (after blocked clients it woke were served): what
/// they sent this client is written, and the client stops being the current one.
pub fn end(srv: &mut ServerState, token: usize, slot: &mut Slot) {
    if !srv.tracking.lent.is_empty() && !slot.client.in_exec {
        flush_lent(srv, token, slot);
    }
    let popped = srv.tracking.executing.pop();
    debug_assert_eq!(popped.map(|(s, _)| s), Some(token), "begin/end out of step");
}

/// Remembers the keys of a read-only command for a tracking client (not BCAST), as its
/// OPTIN/OPTOUT setting allows.
fn remember_keys<H: Copy>(
    srv: &mut ServerState,
    client: &mut Client,
    cmd: &Command<H>,
    argv: &[Bytes],
) {
    let Some(t) = client.tracking.as_deref() else { return };
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

/// Writes (or runs the checks of) what waited for the client in `token`, in order.
fn flush_lent(srv: &mut ServerState, token: usize, slot: &mut Slot) {
    if !srv.tracking.lent.iter().any(|l| l.slot == token) {
        return;
    }
    let all = std::mem::take(&mut srv.tracking.lent);
    let (mine, rest): (Vec<Lent>, Vec<Lent>) = all.into_iter().partition(|l| l.slot == token);
    srv.tracking.lent = rest;
    let id = slot.client.id;
    let (mut io, _, _) = split(srv);
    let mut cur: Cur = Some((token, slot));
    for l in mine.into_iter().filter(|l| l.id == id) {
        match l.item {
            Item::Source(payload, origin) => {
                send_from(&mut io, &mut cur, token, id, &payload, origin);
            }
            Item::Deliver(payload, route) => {
                let (s, _) = slot_in(io.clients, &mut cur, token).expect("cur holds it");
                write_invalidation(s, &payload, route);
            }
        }
    }
}

/// Before the event loop writes (and before it sleeps): BCAST announcements, and messages
/// for clients that were lent out when they were sent.
pub fn before_sleep(srv: &mut ServerState) {
    if std::mem::take(&mut srv.tracking.bcast_pending) {
        broadcast(srv);
    }
    if srv.tracking.lent.is_empty() {
        return;
    }
    let all = std::mem::take(&mut srv.tracking.lent);
    let (mut io, _, _) = split(srv);
    for l in all {
        // Nothing is lent out here: a missing client has disconnected.
        if io.clients.get_mut(l.slot).is_none_or(|s| s.client.id != l.id) {
            continue;
        }
        match l.item {
            Item::Source(payload, origin) => {
                send_from(&mut io, &mut None, l.slot, l.id, &payload, origin);
            }
            Item::Deliver(payload, route) => {
                let s = io.clients.get_mut(l.slot).expect("checked above");
                if write_invalidation(s, &payload, route) {
                    io.sink.written(l.slot, s, false);
                }
            }
        }
    }
}

/// CLIENT TRACKING ON with validated options (an already tracking client keeps its
/// CLIENT CACHING setting and its prefixes, and adds the new ones).
pub fn enable(srv: &mut ServerState, client: &mut Client, token: usize, e: Enable) {
    let id = client.id;
    let newly = client.tracking.is_none();
    let t = client.tracking.get_or_insert_with(Default::default);
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
    if newly {
        srv.tracking.clients.insert(id, token);
        if srv.tracking.clients.len() == 1 {
            // Expired and evicted keys invalidate too: the keyspace must log them.
            srv.removal_listeners += 1;
            srv.refresh_removal_log();
        }
    }
}

/// CLIENT TRACKING OFF, RESET, and a closing connection. The client's ids stay in the
/// table until their keys change.
pub fn disable(srv: &mut ServerState, client: &mut Client) {
    let Some(t) = client.tracking.take() else { return };
    for p in &t.prefixes {
        let Some(bs) = srv.tracking.prefixes.get_mut(p) else { continue };
        bs.clients.remove(&client.id);
        if bs.clients.is_empty() {
            srv.tracking.prefixes.remove(p);
        }
    }
    srv.tracking.clients.remove(&client.id);
    if srv.tracking.clients.is_empty() {
        srv.removal_listeners -= 1;
        srv.refresh_removal_log();
    }
}

/// A connection closed: its tracking ends and nothing more waits for it. Clients that
/// redirect to it find out at their next invalidation (`broken_redirect`).
pub fn client_closed(srv: &mut ServerState, token: usize, client: &mut Client) {
    disable(srv, client);
    if !srv.tracking.lent.is_empty() {
        srv.tracking.lent.retain(|l| l.slot != token);
    }
}

/// CLIENT LIST `redir=`: the redirect id while tracking (0: none), else -1.
pub fn list_redirect(client: &Client) -> i64 {
    client.tracking.as_deref().map_or(-1, |t| t.redirect as i64)
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
