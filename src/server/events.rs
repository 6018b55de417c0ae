//! Key events: the one place where the server learns that a key changed or was removed, and
//! fans it out to WATCH (transactions), client-side caching (tracking) and keyspace
//! notifications (pub/sub).
//!
//! Commands report through `Ctx::notify` (a keyspace event of a class, such as `set` or
//! `lpush`), raised exactly when they changed the key: each such event is also the key's
//! [`ServerState::key_modified`] report (as Valkey pairs `signalModifiedKey` with
//! `notifyKeyspaceEvent`), whether or not notify-keyspace-events publishes it. The keyspace
//! itself logs keys it removes on its own (expired, evicted) and, for notifications, keys
//! created and read misses, while [`ServerState::refresh_removal_log`] says someone listens;
//! [`ServerState::drain_removals`] turns them into the same events.

use crate::config::KeyspaceEvents;
use crate::keyspace::db::Removal;
use crate::server::state::ServerState;

impl ServerState {
    /// `key` of `db` was changed: WATCH and tracking hook in here.
    pub fn key_modified(&mut self, db: usize, key: &[u8]) {
        if self.watches.any() {
            crate::server::multi::key_modified(self, db, key);
        }
        if self.tracking.watches_keys() {
            crate::server::tracking::key_modified(self, key);
        }
    }

    /// Every key of `db` (None: every db) is about to change (FLUSHDB, FLUSHALL, SWAPDB):
    /// called before the change, so listeners can still see which of their keys exist.
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
    pub fn notify(&mut self, db: usize, class: u32, event: &str, key: &[u8]) {
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
