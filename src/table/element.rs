//! Lookup, insertion and removal of single elements.
//!
//! Every method takes the key's hash from the caller (`E::key_hash(key)`, usually computed on an
//! I/O thread); debug builds check it. Writes do one bounded rehash step first (see rehash.rs).

use super::bucket::Bucket;
use super::prefetch::prefetch_read;
use super::{bucket_index, secondary_hash, Entry, Table};

/// Where an element sits: table, head bucket, depth in the chain, slot.
#[derive(Clone, Copy, Debug)]
pub(super) struct Loc {
    table: usize,
    head: usize,
    depth: usize,
    slot: usize,
}

/// Finds `key` in the chain starting at `head`: (depth, slot, element). Inlined into every
/// lookup: most of a lookup's instructions are here, and a batch of lookups overlaps only as
/// many cache misses as the CPU's reorder window holds lookups.
#[inline(always)]
fn find_in_chain<'a, E: Entry>(
    head: &'a Bucket<E>,
    h2: u8,
    key: &[u8],
) -> Option<(usize, usize, &'a E)> {
    let mut b = head;
    let mut depth = 0;
    loop {
        let mut bits = b.matches(h2);
        while bits != 0 {
            let slot = bits.trailing_zeros() as usize;
            // SAFETY: `matches` only returns bits of present slots.
            let e = unsafe { b.elem_unchecked(slot) };
            if e.key() == key {
                return Some((depth, slot, e));
            }
            bits &= bits - 1;
        }
        b = b.child()?;
        depth += 1;
    }
}

impl<E: Entry> Table<E> {
    /// The element with this key, if any.
    #[inline]
    pub fn find(&self, hash: u64, key: &[u8]) -> Option<&E> {
        debug_assert_eq!(hash, E::key_hash(key), "hash does not match key");
        #[cfg(test)]
        super::counters::count(&super::counters::PROBES);
        match self.single_head(hash) {
            Ok(head) => find_in_chain(head?, secondary_hash(hash), key).map(|(_, _, e)| e),
            Err(()) => self.find_rehashing(hash, key),
        }
    }

    #[inline(never)]
    fn find_rehashing(&self, hash: u64, key: &[u8]) -> Option<&E> {
        let h2 = secondary_hash(hash);
        self.candidate_heads(hash)
            .into_iter()
            .flatten()
            .find_map(|head| find_in_chain(head, h2, key))
            .map(|(_, _, e)| e)
    }

    /// The element with this key, mutably. The caller must not change its key.
    pub fn find_mut(&mut self, hash: u64, key: &[u8]) -> Option<&mut E> {
        debug_assert_eq!(hash, E::key_hash(key), "hash does not match key");
        let loc = self.locate(hash, key)?;
        Some(self.bucket_mut(loc).elem_mut(loc.slot))
    }

    /// Inserts `e` (whose key hashes to `hash`); if an element with the same key was present, it
    /// is replaced in place and returned.
    pub fn insert(&mut self, hash: u64, e: E) -> Option<E> {
        debug_assert_eq!(hash, E::key_hash(e.key()), "hash does not match key");
        self.prefetch_filter_words(hash);
        self.rehash_step_for_write();
        if let Some(loc) = self.locate(hash, e.key()) {
            return Some(std::mem::replace(self.bucket_mut(loc).elem_mut(loc.slot), e));
        }
        self.insert_absent(hash, e);
        None
    }

    /// Inserts `e`, whose key the caller knows is absent (checked in debug builds). Saves the
    /// lookup that [`Table::insert`] does.
    pub fn insert_new(&mut self, hash: u64, e: E) {
        debug_assert_eq!(hash, E::key_hash(e.key()), "hash does not match key");
        debug_assert!(self.find(hash, e.key()).is_none(), "insert_new of a present key");
        self.prefetch_filter_words(hash);
        self.rehash_step_for_write();
        self.insert_absent(hash, e);
    }

    /// Removes and returns the element with this key, if any.
    pub fn remove(&mut self, hash: u64, key: &[u8]) -> Option<E> {
        debug_assert_eq!(hash, E::key_hash(key), "hash does not match key");
        self.rehash_step_for_write();
        let loc = self.locate(hash, key)?;
        Some(self.remove_at(loc))
    }

    /// Removes the element at `loc`.
    pub(super) fn remove_at(&mut self, loc: Loc) -> E {
        // The head's filter word keeps the removed element's bits (see "The miss filter").
        let head = &mut self.tables[loc.table][loc.head];
        let (_, e) = head.chain_at_mut(loc.depth).take(loc.slot);
        self.child_buckets -= head.repair_chain(loc.depth, loc.slot);
        self.used[loc.table] -= 1;
        self.after_remove();
        e
    }

    /// Inserts `e`, known absent (found so by a probe), and returns where it went.
    pub(super) fn insert_new_located(&mut self, hash: u64, e: E) -> Loc {
        self.prefetch_filter_words(hash);
        self.rehash_step_for_write();
        self.insert_absent(hash, e)
    }

    /// Rebuilds the miss-filter words of up to `max_heads` head buckets, continuing from where
    /// the last call stopped and wrapping around, so that the bits of removed elements do not
    /// pile up (removals leave them). For the server's time events. Does nothing during a
    /// resize, which rebuilds the words of every head it moves.
    pub fn refresh_filters(&mut self, max_heads: usize) {
        let heads = self.tables[0].len();
        if self.is_rehashing() || heads == 0 {
            return;
        }
        let mut idx = self.filter_sweep % heads;
        for _ in 0..max_heads.min(heads) {
            self.tables[0].refilter(idx);
            idx = (idx + 1) % heads;
        }
        self.filter_sweep = idx;
    }

    /// Places an element known to be absent, growing first if the table is full; returns
    /// where it went.
    fn insert_absent(&mut self, hash: u64, e: E) -> Loc {
        self.grow_if_needed(self.len() + 1);
        let t = usize::from(self.is_rehashing());
        let buckets = &mut self.tables[t];
        let idx = bucket_index(hash, buckets.len());
        let h2 = secondary_hash(hash);
        let (chained, (depth, slot)) = buckets[idx].push_at(h2, e);
        if chained {
            self.child_buckets += 1;
        }
        buckets.note_added(idx, h2);
        self.used[t] += 1;
        Loc { table: t, head: idx, depth, slot }
    }

    fn locate(&self, hash: u64, key: &[u8]) -> Option<Loc> {
        #[cfg(test)]
        super::counters::count(&super::counters::PROBES);
        let h2 = secondary_hash(hash);
        for (table, head) in self.heads(hash).into_iter().enumerate() {
            let Some(head) = head else { continue };
            if let Some((depth, slot, _)) = find_in_chain(head, h2, key) {
                let head = bucket_index(hash, self.tables[table].len());
                return Some(Loc { table, head, depth, slot });
            }
        }
        None
    }

    /// An insert sets bits in the filter word of the key's head after reading the bucket:
    /// asking for the word's line first lets the two cache misses overlap.
    #[inline(always)]
    fn prefetch_filter_words(&self, hash: u64) {
        for (t, idx) in self.head_indices(hash).into_iter().enumerate() {
            if let Some(idx) = idx {
                prefetch_read(self.tables[t].filter_addr(idx));
            }
        }
    }

    fn bucket_mut(&mut self, loc: Loc) -> &mut Bucket<E> {
        self.tables[loc.table][loc.head].chain_at_mut(loc.depth)
    }

    #[inline]
    pub(super) fn elem_at(&self, loc: Loc) -> &E {
        self.tables[loc.table][loc.head].chain_at(loc.depth).elem(loc.slot)
    }

    #[inline]
    pub(super) fn elem_at_mut(&mut self, loc: Loc) -> &mut E {
        self.bucket_mut(loc).elem_mut(loc.slot)
    }

    /// As `locate`, skipping heads whose miss filter rules the key out (a probe that is
    /// usually a read).
    #[inline(always)]
    pub(super) fn locate_filtered(&self, hash: u64, key: &[u8]) -> Option<Loc> {
        #[cfg(test)]
        super::counters::count(&super::counters::PROBES);
        let h2 = secondary_hash(hash);
        let heads = self.head_indices(hash);
        for (table, head) in heads.into_iter().enumerate() {
            let Some(head) = head else { continue };
            if !self.tables[table].may_hold(head, h2) {
                continue;
            }
            if let Some((depth, slot, _)) = find_in_chain(&self.tables[table][head], h2, key) {
                return Some(Loc { table, head, depth, slot });
            }
        }
        None
    }
}
