//! Clients blocked on keys (BLPOP, BLMOVE, BZPOPMIN and friends): who waits on which key, in
//! arrival order, until when, and which keys became ready since the last pass.
//!
//! A handler that finds nothing to serve and may block calls [`Ctx::block`]
//! (`commands::Ctx`) instead of replying. Dispatch then parks the client: it stops reading the
//! client's further commands and records it here under each key. A write that adds elements
//! to a list or sorted set calls [`Ctx::signal_ready`]; after each command the event loop takes
//! the ready keys and re-runs each waiting client's command, first come first served, until a
//! run blocks again (the key is empty once more). A client whose timeout passes gets its
//! command's null reply from the time event. This module holds the bookkeeping only; it never
//! runs a command and never touches a socket.

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;

/// What a timed-out blocked command replies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutReply {
    /// BLPOP, BRPOP, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP: a null array (`*-1`, RESP3 `_`).
    NullArray,
    /// A null bulk string (`$-1`, RESP3 `_`). Valkey times every list and sorted-set block
    /// out with the null array, BLMOVE and BRPOPLPUSH included; this is for commands that
    /// differ.
    NullBulk,
}

/// A handler's request to block its client.
#[derive(Clone, Debug)]
pub struct BlockRequest {
    /// The keys to wait on (in the client's selected database).
    pub keys: Vec<Bytes>,
    /// Unix time in ms at which to give up; None waits forever (timeout 0).
    pub timeout_at_ms: Option<i64>,
    pub on_timeout: TimeoutReply,
    /// The command to run again when a key is ready, if not the one that blocked (XREAD
    /// replaces its `$` ids by what they stood for).
    pub argv: Option<Vec<Bytes>>,
}

/// A parked client.
#[derive(Clone, Debug)]
pub struct Blocked {
    /// The blocked command (for its statistics when it ends unserved).
    pub cmd: crate::server::calls::CallOf,
    /// Its table entry, to run it again without another lookup (kept as `Any`: this layer
    /// does not know the handler type; dispatch downcasts it back).
    pub entry: &'static (dyn std::any::Any + Send + Sync),
    pub db: usize,
    pub keys: Vec<Bytes>,
    pub timeout_at_ms: Option<i64>,
    pub on_timeout: TimeoutReply,
    /// The command to run again when a key is ready.
    pub argv: Vec<Bytes>,
}

/// Every blocked client, by key and by slot.
#[derive(Default, Debug)]
pub struct Blocking {
    /// (db, key) -> slots of the clients waiting on it, in arrival order.
    by_key: HashMap<(usize, Bytes), VecDeque<usize>>,
    /// slot -> what it waits for.
    by_slot: HashMap<usize, Blocked>,
    /// Keys signaled ready since the last pass (deduplicated), in signal order.
    ready: Vec<(usize, Bytes)>,
}

impl Blocking {
    /// Number of blocked clients (INFO `blocked_clients`).
    pub fn len(&self) -> usize {
        self.by_slot.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_slot.is_empty()
    }

    /// Whether the client in `slot` is blocked.
    pub fn is_blocked(&self, slot: usize) -> bool {
        self.by_slot.contains_key(&slot)
    }

    /// Number of distinct keys clients wait on (INFO `blocked_keys`... not in 7.0; for tests).
    pub fn keys_len(&self) -> usize {
        self.by_key.len()
    }

    /// Parks the client in `slot`.
    pub fn block(&mut self, slot: usize, b: Blocked) {
        assert!(!self.is_blocked(slot), "client {slot} blocked twice");
        for key in &b.keys {
            let waiters = self.by_key.entry((b.db, key.clone())).or_default();
            if !waiters.contains(&slot) {
                waiters.push_back(slot);
            }
        }
        self.by_slot.insert(slot, b);
    }

    /// Unparks the client in `slot` (served, timed out, unblocked or disconnected).
    pub fn unblock(&mut self, slot: usize) -> Option<Blocked> {
        let b = self.by_slot.remove(&slot)?;
        for key in &b.keys {
            let k = (b.db, key.clone());
            if let Some(waiters) = self.by_key.get_mut(&k) {
                waiters.retain(|&s| s != slot);
                if waiters.is_empty() {
                    self.by_key.remove(&k);
                }
            }
        }
        Some(b)
    }

    /// A write added elements at `key` of `db`: remember it if anyone waits on it.
    pub fn signal(&mut self, db: usize, key: &[u8]) {
        if self.by_key.is_empty() {
            return;
        }
        let k = (db, Bytes::copy_from_slice(key));
        if self.by_key.contains_key(&k) && !self.ready.contains(&k) {
            self.ready.push(k);
        }
    }

    /// Whether any client is blocked on keys.
    pub fn any(&self) -> bool {
        !self.by_key.is_empty()
    }

    /// Signals every key waited on in these dbs (SWAPDB: serving checks which hold data).
    pub fn signal_all(&mut self, dbs: &[usize]) {
        let keys: Vec<(usize, Bytes)> =
            self.by_key.keys().filter(|(d, _)| dbs.contains(d)).cloned().collect();
        for (db, key) in keys {
            self.signal(db, &key);
        }
    }

    /// Takes the keys signaled since the last call.
    pub fn take_ready(&mut self) -> Vec<(usize, Bytes)> {
        std::mem::take(&mut self.ready)
    }

    /// Whether any key is waiting to be served.
    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// The clients waiting on `key` of `db`, in arrival order.
    pub fn waiters(&self, db: usize, key: &Bytes) -> Vec<usize> {
        self.by_key.get(&(db, key.clone())).map(|w| w.iter().copied().collect()).unwrap_or_default()
    }

    /// What the client in `slot` waits for.
    pub fn get(&self, slot: usize) -> Option<&Blocked> {
        self.by_slot.get(&slot)
    }

    /// Replaces the deadline of the client in `slot`, if blocked.
    pub fn set_timeout(&mut self, slot: usize, timeout_at_ms: Option<i64>) {
        if let Some(b) = self.by_slot.get_mut(&slot) {
            b.timeout_at_ms = timeout_at_ms;
        }
    }

    /// The earliest timeout of any blocked client (the event loop wakes up for it).
    pub fn next_timeout(&self) -> Option<i64> {
        self.by_slot.values().filter_map(|b| b.timeout_at_ms).min()
    }

    /// Slots whose timeout is at or before `now_ms`.
    pub fn timed_out(&self, now_ms: i64) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .by_slot
            .iter()
            .filter(|(_, b)| b.timeout_at_ms.is_some_and(|t| t <= now_ms))
            .map(|(&s, _)| s)
            .collect();
        out.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked(keys: &[&str], timeout: Option<i64>) -> Blocked {
        Blocked {
            cmd: crate::server::calls::CallOf { name: "blpop", flags: 0 },
            entry: &(),
            db: 0,
            keys: keys.iter().map(|k| Bytes::copy_from_slice(k.as_bytes())).collect(),
            timeout_at_ms: timeout,
            on_timeout: TimeoutReply::NullArray,
            argv: vec![],
        }
    }

    #[test]
    fn waiters_keep_arrival_order_and_leave_cleanly() {
        let mut b = Blocking::default();
        b.block(3, blocked(&["a", "b"], None));
        b.block(1, blocked(&["a"], Some(100)));
        b.block(2, blocked(&["a", "a"], Some(50)));
        let a = Bytes::from_static(b"a");
        assert_eq!(b.waiters(0, &a), vec![3, 1, 2]);
        assert_eq!(b.timed_out(100), vec![1, 2]);
        assert_eq!(b.timed_out(99), vec![2]);
        assert_eq!(b.timed_out(49), Vec::<usize>::new());
        assert_eq!(b.next_timeout(), Some(50));
        b.signal(0, b"a");
        b.signal(0, b"a");
        b.signal(0, b"zzz"); // nobody waits: not recorded
        assert_eq!(b.take_ready(), vec![(0, a.clone())]);
        assert!(b.unblock(1).is_some());
        assert_eq!(b.waiters(0, &a), vec![3, 2]);
        b.unblock(3);
        b.unblock(2);
        assert!(b.is_empty());
        assert_eq!(b.keys_len(), 0);
    }
}
