//! Which hashes of a database have fields with a TTL, by when one may be due: the queue
//! active expiry of hash fields takes its work from. It holds key names only; the hashes
//! themselves keep the expire times (`types::hash`, design essay in its `volatile.rs`).
//!
//! # Design: a coarse timing wheel of key names, stale entries allowed
//!
//! ```text
//!  slots: BTreeMap<slot, VecDeque<key>>     slot = bound_ms >> SLOT_SHIFT (128 ms)
//!         [13281250000] -> [k1, k7, k2]
//!         [13281250003] -> [k9]
//! ```
//!
//! A slot is handed out once it has ended (its last millisecond is past), so every hash
//! taken whose bound is still the one it was filed under is due: a hash never comes back
//! in the same cycle without work to do, at the price of up to 128 ms of delay (Valkey's
//! own field expiry takes longer than that to get to a field).
//!
//! A hash is filed under the slot of its lower bound (`HashObj::next_expire_bound`) when it
//! gains its first volatile field and whenever a write lowers that bound; nothing is done
//! when the bound rises or the key goes away. So the queue may hold a key twice, or a key
//! that is gone, renamed or no longer volatile: an entry is only a hint that the hash may
//! have something due at that slot. Active expiry takes the entries of the due slots one
//! by one and looks each key up ([`crate::keyspace::db::Db::expire_fields_step`]): a key
//! with nothing volatile is dropped, a hash not yet due is filed again under its real
//! bound, a due one is swept a bounded amount and filed again while it keeps volatile
//! fields. Every entry costs one lookup once, so the work per cycle is what the caller
//! bounds it to, and a hash whose fields are all in the future costs nothing until then.
//!
//! Cost: one boxed key name per volatile hash (16 bytes of box plus the name's allocation)
//! and the map's nodes per slot, shared by every hash due in that second.

use std::collections::{BTreeMap, VecDeque};

/// Slots are 128 ms wide.
const SLOT_SHIFT: u32 = 7;

/// The queue of hashes with volatile fields (see the module documentation).
#[derive(Default, Debug)]
pub struct FieldExpiryQueue {
    slots: BTreeMap<i64, VecDeque<Box<[u8]>>>,
    len: usize,
}

impl FieldExpiryQueue {
    /// Files `key` under the slot of `bound_ms` (a time before which none of its fields
    /// expires).
    pub fn file(&mut self, key: &[u8], bound_ms: i64) {
        self.slots.entry(bound_ms >> SLOT_SHIFT).or_default().push_back(key.into());
        self.len += 1;
    }

    /// Files `key` as due at once (a hash whose sweep stopped at its step's limit).
    pub fn file_due(&mut self, key: &[u8], now_ms: i64) {
        self.file(key, now_ms - (1 << SLOT_SHIFT));
    }

    /// Takes one entry of a slot that ended before `now_ms`; None when there is none.
    pub fn take_due(&mut self, now_ms: i64) -> Option<Box<[u8]>> {
        let mut first = self.slots.first_entry()?;
        if *first.key() >= now_ms >> SLOT_SHIFT {
            return None;
        }
        // First filed, first taken: hashes due in the same slot go in the order they were
        // filed, about the order of their times.
        let key = first.get_mut().pop_front().expect("no slot is left empty");
        if first.get().is_empty() {
            first.remove();
        }
        self.len -= 1;
        Some(key)
    }

    /// Entries in slots that have ended by `now_ms` (due, or stale hints), without
    /// walking the slots still to come.
    pub fn due_len(&self, now_ms: i64) -> usize {
        self.slots.range(..now_ms >> SLOT_SHIFT).map(|(_, keys)| keys.len()).sum()
    }

    /// Entries, stale ones included.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Drops everything (FLUSHDB, a database emptied or detached).
    pub fn clear(&mut self) {
        self.slots.clear();
        self.len = 0;
    }

    /// Bytes of the queue's own allocations, about (INFO memory overhead).
    pub fn memory_bytes(&self) -> usize {
        let names: usize = self
            .slots
            .values()
            .flat_map(|v| v.iter())
            .map(|k| crate::memory::size_class(k.len().max(1)))
            .sum();
        let vecs: usize = self.slots.values().map(|v| v.capacity() * 16).sum();
        names + vecs + self.slots.len() * 64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_entries_come_out_by_slot_and_only_when_due() {
        let mut q = FieldExpiryQueue::default();
        let t0 = 1_700_000_000_000i64;
        q.file(b"late", t0 + 10_000);
        q.file(b"a", t0);
        q.file(b"b", t0 + 5);
        assert_eq!(q.len(), 3);
        assert_eq!(q.take_due(t0 - 5_000), None);
        assert_eq!(q.due_len(t0 + 300), 2);
        assert_eq!(q.due_len(t0), 0);
        assert_eq!(q.take_due(t0), None, "a slot is due once it has ended");
        let due = vec![q.take_due(t0 + 300).unwrap(), q.take_due(t0 + 300).unwrap()];
        assert_eq!(due, [b"a"[..].into(), b"b"[..].into()], "in filing order");
        assert_eq!(q.take_due(t0 + 300), None, "the late slot is not due");
        assert_eq!(q.take_due(t0 + 20_000).as_deref(), Some(&b"late"[..]));
        assert!(q.is_empty());
        q.file(b"x", 5);
        q.clear();
        assert_eq!(q.take_due(i64::MAX), None);
    }

    #[test]
    fn a_key_may_be_filed_twice() {
        let mut q = FieldExpiryQueue::default();
        q.file(b"k", 100_000);
        q.file(b"k", 1_000);
        assert_eq!(q.take_due(2_000).as_deref(), Some(&b"k"[..]));
        assert_eq!(q.take_due(2_000), None);
        assert_eq!(q.take_due(200_000).as_deref(), Some(&b"k"[..]));
    }
}
