//! The effects of writes: the one place where the server learns that the dataset changed,
//! and does everything that follows from it.
//!
//! A command reports each change with [`ServerState::changed`] (through `Ctx::changed`), once
//! per keyspace event, after the change, with Valkey's event name (`set`, `lpush`, `del`,
//! `rename_from`...). That one call does all of the change's consequences: the dirty counter
//! that save points read, keyspace notifications, WATCH invalidation, client-side caching
//! (tracking) invalidation, waking clients blocked on the key, and the count of changes that
//! makes dispatch record the command in the propagation feed (`propagate`). Commands reach
//! none of these on their own: the dirty counter only grows in here ([`Dirty`]), and the
//! other registries are not theirs to call. A write command that forgot its call would show
//! no effect at all, and the test that runs every write command of the table
//! (`every_write_command_has_all_the_effects_of_a_write`) would fail.
//!
//! Commands that change whole databases (FLUSHDB, FLUSHALL, SWAPDB) call
//! [`ServerState::dbs_changed`] instead, before the change. The keyspace itself logs keys it
//! removes on its own (expired, evicted) and, for notifications, keys created and read
//! misses, while [`ServerState::refresh_removal_log`] says someone listens;
//! [`ServerState::drain_removals`] turns them into the same effects.

use crate::config::KeyspaceEvents;
use crate::keyspace::db::Removal;
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
    /// The effects call: `key` of `db` changed, as keyspace event `event` of `class` (a
    /// `KeyspaceEvents` bit: GENERIC, STRING, LIST, SET, HASH, ZSET...), counting `dirty`
    /// changes toward the save points (Valkey's `server.dirty`: one per element a command
    /// adds or removes; 0 for a second event of the same change). Does everything that
    /// follows: see the module documentation.
    pub fn changed(&mut self, db: usize, key: &[u8], dirty: u64, class: u32, event: &str) {
        self.dirty.0 += dirty;
        self.blocking.signal(db, key);
        self.notify(db, class, event, key);
    }

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

    /// `key` of `db` expired at once, by a command that gave it an expire time already
    /// past: removed, counted as a change, and reported as an expiry (Valkey 9.1). True when
    /// the key existed.
    pub fn expire_now(&mut self, db: usize, key: &[u8], now_ms: i64) -> bool {
        if !self.dbs[db].expire_now(key, now_ms) {
            return false;
        }
        self.dirty.0 += 1;
        if !self.dbs[db].log_removals {
            // Nothing drains this removal: WATCH and tracking still hear of it.
            self.key_modified(db, key);
        }
        true
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

    /// Whether anything needs the keyspace's own removals (expired and evicted keys).
    fn wants_removals(&self) -> bool {
        let ev = self.config.notify_keyspace_events.0;
        let channels = ev & (KeyspaceEvents::KEYSPACE | KeyspaceEvents::KEYEVENT) != 0;
        let classes = ev & (KeyspaceEvents::EXPIRED | KeyspaceEvents::EVICTED) != 0;
        (channels && classes) || self.removal_listeners > 0 || self.feed.on
    }

    /// Turns the removal log of every db on or off; call when notify-keyspace-events changes
    /// or when `removal_listeners` changes.
    pub fn refresh_removal_log(&mut self) {
        let on = self.wants_removals();
        let created = self.notifies(KeyspaceEvents::NEW);
        let misses = self.notifies(KeyspaceEvents::KEY_MISS);
        for db in &mut self.dbs {
            db.log_removals = on;
            db.log_created = created;
            db.log_misses = misses;
            if !on && !created && !misses {
                db.removals.clear();
            }
        }
    }

    /// Whether events of `class` are published at all (the class and K or E are selected).
    pub fn notifies(&self, class: u32) -> bool {
        let ev = self.config.notify_keyspace_events.0;
        let channels = ev & (KeyspaceEvents::KEYSPACE | KeyspaceEvents::KEYEVENT) != 0;
        channels && ev & class != 0
    }

    /// Raises the events of keys the keyspace removed on its own since the last call.
    pub fn drain_removals(&mut self) {
        for db in 0..self.dbs.len() {
            if self.dbs[db].removals.is_empty() {
                continue;
            }
            for (key, why) in std::mem::take(&mut self.dbs[db].removals) {
                let (class, event) = match why {
                    Removal::Expired => (KeyspaceEvents::EXPIRED, "expired"),
                    Removal::Evicted => (KeyspaceEvents::EVICTED, "evicted"),
                    // Notes for notifications only: the command reports its own writes.
                    Removal::Created => (KeyspaceEvents::NEW, "new"),
                    Removal::Missed => (KeyspaceEvents::KEY_MISS, "keymiss"),
                };
                if matches!(why, Removal::Expired | Removal::Evicted) {
                    self.key_modified(db, &key);
                    if self.feed.on {
                        crate::server::propagate::removed(
                            self,
                            db,
                            &key,
                            matches!(why, Removal::Evicted),
                        );
                    }
                }
                self.notify(db, class, event, &key);
            }
        }
    }

    /// A keyspace event of `class` (a `KeyspaceEvents` bit): published on
    /// `__keyspace@<db>__:<key>` (message: the event) and `__keyevent@<db>__:<event>`
    /// (message: the key) as notify-keyspace-events selects.
    fn notify(&mut self, db: usize, class: u32, event: &str, key: &[u8]) {
        // A command's event is also its report that it changed the key (Valkey pairs
        // signalModifiedKey with notifyKeyspaceEvent the same way); the keyspace's own
        // removals were reported by `drain_removals`, and `new`/`keymiss` change nothing.
        let removal_notes = KeyspaceEvents::EXPIRED
            | KeyspaceEvents::EVICTED
            | KeyspaceEvents::NEW
            | KeyspaceEvents::KEY_MISS;
        if class & removal_notes == 0 {
            self.changes += 1;
            self.key_modified(db, key);
        }
        let ev = self.config.notify_keyspace_events.0;
        if ev & class == 0 {
            return;
        }
        // Removals logged earlier in this command come first, as Valkey raises them first.
        if self.dbs.iter().any(|d| !d.removals.is_empty()) {
            self.drain_removals();
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
