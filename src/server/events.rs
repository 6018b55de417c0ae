//! Key events: the one place where the server learns that a key changed or was removed, and
//! fans it out to WATCH (transactions), client-side caching (tracking) and keyspace
//! notifications (pub/sub).
//!
//! Commands report through `Ctx::notify` (a keyspace event of a class, such as `set` or
//! `lpush`); dispatch reports every key a write command may have changed when the command
//! made the dataset dirty ([`ServerState::key_modified`]); the keyspace itself logs keys it
//! removes on its own (expired, evicted) while [`ServerState::refresh_removal_log`] says
//! someone listens, and [`ServerState::drain_removals`] turns them into the same events.

use crate::config::KeyspaceEvents;
use crate::keyspace::db::Removal;
use crate::server::state::ServerState;

impl ServerState {
    /// `key` of `db` was (or may have been) changed: WATCH and tracking hook in here.
    pub fn key_modified(&mut self, db: usize, key: &[u8]) {
        let _ = (db, key);
    }

    /// Every key of `db` (None: every db) is about to change (FLUSHDB, FLUSHALL, SWAPDB):
    /// called before the change, so listeners can still see which of their keys exist.
    pub fn db_modified(&mut self, db: Option<usize>) {
        let _ = db;
    }

    /// Whether anything needs the keyspace's own removals (expired and evicted keys).
    fn wants_removals(&self) -> bool {
        let ev = self.config.notify_keyspace_events.0;
        let channels = ev & (KeyspaceEvents::KEYSPACE | KeyspaceEvents::KEYEVENT) != 0;
        let classes = ev & (KeyspaceEvents::EXPIRED | KeyspaceEvents::EVICTED) != 0;
        (channels && classes) || self.removal_listeners > 0
    }

    /// Turns the removal log of every db on or off; call when notify-keyspace-events changes
    /// or when `removal_listeners` changes.
    pub fn refresh_removal_log(&mut self) {
        let on = self.wants_removals();
        for db in &mut self.dbs {
            db.log_removals = on;
            if !on {
                db.removals.clear();
            }
        }
    }

    /// Raises the events of keys the keyspace removed on its own since the last call.
    pub fn drain_removals(&mut self) {
        for db in 0..self.dbs.len() {
            if self.dbs[db].removals.is_empty() {
                continue;
            }
            for (key, why) in std::mem::take(&mut self.dbs[db].removals) {
                self.key_modified(db, &key);
                let (class, event) = match why {
                    Removal::Expired => (KeyspaceEvents::EXPIRED, "expired"),
                    Removal::Evicted => (KeyspaceEvents::EVICTED, "evicted"),
                };
                self.notify(db, class, event, &key);
            }
        }
    }

    /// A keyspace event of `class` (a `KeyspaceEvents` bit): published on
    /// `__keyspace@<db>__:<key>` (message: the event) and `__keyevent@<db>__:<event>`
    /// (message: the key) as notify-keyspace-events selects.
    pub fn notify(&mut self, db: usize, class: u32, event: &str, key: &[u8]) {
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
        let _ = (channel, message);
        0
    }
}
