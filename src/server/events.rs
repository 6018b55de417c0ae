//! The effects of writes: the one place where the server learns that the dataset changed,
//! and does everything that follows from it.
//!
//! A command reports each change with one call, `Ctx::changed` ([`Db::changed`]), once per
//! keyspace event, after the change, with Valkey's event name (`set`, `lpush`, `del`,
//! `rename_from`...). The database counts it (the dirty counter that save points read, and
//! the count of changes that makes dispatch record the command in the propagation feed) and,
//! while anything listens, logs it with the key, in one log with the keys the keyspace
//! removed on its own (expired, evicted) and the `new` / `keymiss` notes. After the command
//! (and after each time event), [`ServerState::drain_key_events`] does every consequence,
//! event by event in the order they happened: WATCH invalidation, client-side caching
//! (tracking) invalidation, waking clients blocked on the key, the propagation of removals,
//! and keyspace notifications. So a handler needs nothing but its database to have all the
//! effects of a write, and has no other way to have them: the dirty counter only grows in
//! here ([`Dirty`]). A write command that forgot its call would show no effect at all, and
//! the test that runs every write command of the table
//! (`every_write_command_has_all_the_effects_of_a_write`) would fail.
//!
//! [`ServerState::refresh_removal_log`] turns the logs on while someone listens
//! (notifications of a class, WATCH, tracking, blocked clients, the AOF); when nobody does, a
//! write costs two counter increments here. Commands that change whole databases (FLUSHDB,
//! FLUSHALL, SWAPDB) call [`ServerState::dbs_changed`] instead, before the change.
//!
//! [`Db::changed`]: crate::keyspace::db::Db::changed

use crate::config::KeyspaceEvents;
use crate::keyspace::db::KeyEvent;
use crate::server::state::ServerState;

/// Changes since the last save, for the save points (`save` / INFO
/// `rdb_changes_since_last_save`). Only the effects call adds to it.
#[derive(Default, Debug)]
pub struct Dirty(u64);

impl Dirty {
    pub fn count(&self) -> u64 {
        self.0
    }

    /// A save of everything succeeded.
    pub fn clear(&mut self) {
        self.0 = 0;
    }

    /// A save that started when the count was `at_start` succeeded: the changes made since
    /// still count.
    pub fn saved(&mut self, at_start: u64) {
        self.0 = self.0.saturating_sub(at_start);
    }
}

impl ServerState {
    /// Every key of `db` (None: every db) is about to change (FLUSHDB, FLUSHALL, SWAPDB):
    /// called before the change, so that listeners can still see which of their keys exist,
    /// with the `dirty` count of the change.
    pub fn dbs_changed(&mut self, db: Option<usize>, dirty: u64) {
        self.dirty.0 += dirty;
        self.db_modified(db);
    }

    /// SWAPDB: the contents of databases `a` and `b` trade places, with the effects of a
    /// change to every key of both.
    pub fn swap_dbs(&mut self, a: usize, b: usize) {
        // Before the swap, while watchers can still see which of their keys exist.
        self.dbs_changed(Some(a), 1);
        self.dbs_changed(Some(b), 0);
        let (lo, hi) = (a.min(b), a.max(b));
        let (left, right) = self.dbs.split_at_mut(hi);
        crate::keyspace::db::Db::swap_contents(&mut left[lo], &mut right[0]);
        // Blocked clients stay in their db (as in Valkey); a key that now has data there
        // wakes them.
        self.blocking.signal_all(&[a, b]);
    }

    /// `key` of `db` was changed: WATCH and tracking hook in here.
    pub fn key_modified(&mut self, db: usize, key: &[u8]) {
        if self.watches.any() {
            crate::server::multi::key_modified(self, db, key);
        }
        if self.tracking.watches_keys() {
            crate::server::tracking::key_modified(self, key);
        }
    }

    /// Every key of `db` (None: every db) is about to change, without a change to count
    /// (a load replacing the dataset): WATCH and tracking.
    pub fn db_modified(&mut self, db: Option<usize>) {
        self.changes += 1;
        crate::server::multi::db_modified(self, db);
        self.tracking.db_modified();
    }

    /// Whether anything needs the changes commands report, key by key.
    fn wants_changes(&self) -> bool {
        let own = KeyspaceEvents::EXPIRED
            | KeyspaceEvents::EVICTED
            | KeyspaceEvents::NEW
            | KeyspaceEvents::KEY_MISS;
        let ev = self.config.notify_keyspace_events.0;
        let channels = ev & (KeyspaceEvents::KEYSPACE | KeyspaceEvents::KEYEVENT) != 0;
        (channels && ev & !own & KeyspaceEvents::ALL != 0)
            || self.removal_listeners > 0
            || self.blocking.any()
    }

    /// Whether anything needs the keyspace's own removals (expired and evicted keys).
    fn wants_removals(&self) -> bool {
        let ev = self.config.notify_keyspace_events.0;
        let channels = ev & (KeyspaceEvents::KEYSPACE | KeyspaceEvents::KEYEVENT) != 0;
        let classes = ev & (KeyspaceEvents::EXPIRED | KeyspaceEvents::EVICTED) != 0;
        (channels && classes) || self.removal_listeners > 0 || self.feed.on
    }

    /// Turns the event logs of every db on or off; call when notify-keyspace-events, the
    /// AOF, `removal_listeners` or the presence of blocked clients change (dispatch checks
    /// the last before every command: [`ServerState::sync_event_logs`]).
    pub fn refresh_removal_log(&mut self) {
        let changes = self.wants_changes();
        let on = changes || self.wants_removals();
        let created = self.notifies(KeyspaceEvents::NEW);
        let misses = self.notifies(KeyspaceEvents::KEY_MISS);
        self.logging_for_blocked = self.blocking.any();
        for db in &mut self.dbs {
            db.log_changes = changes;
            db.log_removals = on;
            db.log_created = created;
            db.log_misses = misses;
        }
    }

    /// Keeps the event logs on while clients are blocked on keys (their keys' changes wake
    /// them): cheap enough to ask before every command.
    #[inline]
    pub fn sync_event_logs(&mut self) {
        if self.blocking.any() != self.logging_for_blocked {
            self.refresh_removal_log();
        }
    }

    /// Whether events of `class` are published at all (the class and K or E are selected).
    pub fn notifies(&self, class: u32) -> bool {
        let ev = self.config.notify_keyspace_events.0;
        let channels = ev & (KeyspaceEvents::KEYSPACE | KeyspaceEvents::KEYEVENT) != 0;
        channels && ev & class != 0
    }

    /// Does the effects of what the databases logged since the last call: the counts
    /// (dirty, changes for propagation) and, event by event in the order they happened,
    /// WATCH, tracking, blocked clients, the propagation of removals and keyspace
    /// notifications. `only`: the one database a data command ran in (its events are all
    /// there unless it changed another, which it then marked: `Pending::others`); None:
    /// every database (server-wide commands, time events).
    #[inline]
    pub fn drain_key_events(&mut self, only: Option<usize>) {
        if let Some(db) = only {
            let d = &self.dbs[db];
            if d.events.is_empty() && d.pending.is_empty() {
                return;
            }
            if !d.pending.others {
                self.drain_db(db);
                return;
            }
        }
        self.drain_all();
    }

    /// [`ServerState::drain_key_events`] of every database.
    fn drain_all(&mut self) {
        let mut logged = Vec::new();
        for db in 0..self.dbs.len() {
            self.count_pending(db);
            let d = &mut self.dbs[db];
            if !d.events.is_empty() {
                logged.extend(d.events.take().into_iter().map(|(seq, k, e)| (seq, db, k, e)));
            }
        }
        // In the order they happened, across databases (MOVE: `move_from`, then `move_to`).
        logged.sort_unstable_by_key(|&(seq, ..)| seq);
        for (_, db, key, what) in logged {
            self.key_event(db, &key, what);
        }
    }

    /// [`ServerState::drain_key_events`] of one database.
    fn drain_db(&mut self, db: usize) {
        self.count_pending(db);
        if self.dbs[db].events.is_empty() {
            return;
        }
        for (_, key, what) in self.dbs[db].events.take() {
            self.key_event(db, &key, what);
        }
    }

    /// Adds what database `db` counted since the last drain to the server's counters.
    fn count_pending(&mut self, db: usize) {
        let pending = std::mem::take(&mut self.dbs[db].pending);
        self.dirty.0 += pending.dirty;
        self.changes += pending.changes;
    }

    /// The effects of one logged event.
    fn key_event(&mut self, db: usize, key: &[u8], what: KeyEvent) {
        let (class, event) = match what {
            KeyEvent::Changed { class, event } => {
                self.blocking.signal(db, key);
                self.key_modified(db, key);
                (class, event)
            }
            KeyEvent::Expired | KeyEvent::Evicted => {
                let evicted = what == KeyEvent::Evicted;
                self.key_modified(db, key);
                if self.feed.on {
                    crate::server::propagate::removed(self, db, key, evicted);
                }
                if evicted {
                    (KeyspaceEvents::EVICTED, "evicted")
                } else {
                    (KeyspaceEvents::EXPIRED, "expired")
                }
            }
            KeyEvent::Group { event, wake, modified } => {
                if wake {
                    self.blocking.signal(db, key);
                }
                if modified {
                    self.key_modified(db, key);
                }
                match event {
                    Some(event) => (KeyspaceEvents::STREAM, event),
                    None => return,
                }
            }
            // Notes for notifications only.
            KeyEvent::Created => (KeyspaceEvents::NEW, "new"),
            KeyEvent::Missed => (KeyspaceEvents::KEY_MISS, "keymiss"),
        };
        self.notify(db, class, event, key);
    }

    /// A keyspace event of `class` (a `KeyspaceEvents` bit): published on
    /// `__keyspace@<db>__:<key>` (message: the event) and `__keyevent@<db>__:<event>`
    /// (message: the key) as notify-keyspace-events selects.
    fn notify(&mut self, db: usize, class: u32, event: &str, key: &[u8]) {
        let ev = self.config.notify_keyspace_events.0;
        if ev & class == 0 {
            return;
        }
        if ev & KeyspaceEvents::KEYSPACE != 0 {
            let mut channel = format!("__keyspace@{db}__:").into_bytes();
            channel.extend_from_slice(key);
            self.publish(&channel, event.as_bytes());
        }
        if ev & KeyspaceEvents::KEYEVENT != 0 {
            let channel = format!("__keyevent@{db}__:{event}").into_bytes();
            self.publish(&channel, key);
        }
    }

    /// Delivers `message` to the subscribers of `channel` (and matching patterns); returns
    /// how many received it.
    pub fn publish(&mut self, channel: &[u8], message: &[u8]) -> usize {
        crate::server::pubsub::publish(self, crate::server::pubsub::Scope::Global, channel, message)
    }
}

/// Active expiry removed fields of a hash (`Db::expire_fields_step`): the `hexpired` event,
/// WATCH and tracking, `HDEL key field...` in the feed, and when the hash was left empty
/// (and deleted) the `del` event with `UNLINK`/`DEL` after the `HDEL`, both in one
/// `MULTI`/`EXEC`, as Valkey 9.1 logs it.
pub fn hash_fields_expired(
    srv: &mut ServerState,
    db: usize,
    gone: &crate::keyspace::db::FieldsExpired,
) {
    srv.dirty.0 += gone.fields.len() as u64;
    srv.key_modified(db, &gone.key);
    if srv.feed.on {
        let mut hdel: Vec<&[u8]> = vec![b"HDEL", &gone.key];
        hdel.extend(gone.fields.iter().map(Vec::as_slice));
        if gone.deleted {
            srv.feed.exec_begin();
            srv.feed.command(db, &hdel);
            crate::server::propagate::removed(srv, db, &gone.key, false);
            srv.feed.exec_end();
        } else {
            srv.feed.command(db, &hdel);
        }
    }
    srv.notify(db, KeyspaceEvents::HASH, "hexpired", &gone.key);
    if gone.deleted {
        srv.notify(db, KeyspaceEvents::GENERIC, "del", &gone.key);
    }
}
