//! Fill limits, resizing and incremental rehashing (module essay: "Incremental rehashing" and
//! "Fill limits and memory").
//!
//! A resize allocates `tables[1]` and moves head buckets of `tables[0]` into it a few at a time;
//! no call does work proportional to the table size, except freeing an emptied table.

use super::{
    bucket_index, Entry, Heads, Table, FILL_GROW_PERCENT, FILL_SHRINK_DIVISOR, FILL_TARGET_PERCENT,
    SLOTS,
};

/// Empty head buckets a write may skip in its rehash step (they cost one sequential cache line
/// each) when it finds no non-empty one.
const REHASH_EMPTY_VISITS: usize = 8;
/// Work multiplier per write while table 1 is already past its own grow limit.
const REHASH_CATCHUP: usize = 16;

/// Whether `len` elements fit in `buckets` head buckets without passing the grow limit.
pub(super) fn fits_grow_limit(len: usize, buckets: usize) -> bool {
    len.saturating_mul(100) <= buckets.saturating_mul(SLOTS * FILL_GROW_PERCENT)
}

/// Whether `len` elements are too few for `buckets` head buckets.
fn below_shrink_limit(len: usize, buckets: usize) -> bool {
    len.saturating_mul(FILL_SHRINK_DIVISOR) < buckets.saturating_mul(SLOTS)
}

/// The smallest power of two of buckets that holds `len` elements at the target fill or less.
fn target_buckets(len: usize) -> usize {
    let per_bucket_percent = SLOTS * FILL_TARGET_PERCENT;
    let min = len.saturating_mul(100).div_ceil(per_bucket_percent).max(1);
    min.checked_next_power_of_two().expect("hashtable too large")
}

impl<E: Entry> Table<E> {
    /// Moves up to `max_buckets` head buckets (with their chains; empty ones count too) from the
    /// old table to the new one. For the server's time events. Returns whether a resize is still
    /// in progress.
    pub fn rehash_step(&mut self, max_buckets: usize) -> bool {
        self.rehash_work(max_buckets, max_buckets);
        self.is_rehashing()
    }

    /// The bounded rehash step every write does first: one non-empty head bucket or
    /// `REHASH_EMPTY_VISITS` empty ones, times `REHASH_CATCHUP` while falling behind.
    pub(super) fn rehash_step_for_write(&mut self) {
        if !self.is_rehashing() {
            return;
        }
        let pace =
            if fits_grow_limit(self.len(), self.tables[1].len()) { 1 } else { REHASH_CATCHUP };
        self.rehash_work(pace, pace * REHASH_EMPTY_VISITS);
    }

    /// Grows before adding an element if `new_len` would pass the grow limit. Does nothing
    /// during a resize (the write's rehash step catches up instead).
    pub(super) fn grow_if_needed(&mut self, new_len: usize) {
        let allowed = || self.tables[0].is_empty() || E::resize_allowed();
        if !self.is_rehashing() && !fits_grow_limit(new_len, self.tables[0].len()) && allowed() {
            self.start_resize(target_buckets(new_len));
        }
    }

    /// After an element left: frees everything when empty, or starts a shrink when sparse.
    pub(super) fn after_remove(&mut self) {
        if self.is_empty() {
            debug_assert_eq!(self.child_buckets, 0, "an empty table has no child buckets");
            self.tables = [Heads::new(0), Heads::new(0)];
            self.rehash_idx = 0;
        } else if self.is_rehashing() {
            if self.used[0] == 0 {
                self.finish_rehash();
            }
        } else if below_shrink_limit(self.len(), self.tables[0].len()) && E::resize_allowed() {
            self.start_resize(target_buckets(self.len()));
        }
    }

    /// Starts moving to a table of `buckets` head buckets. An empty table switches at once.
    fn start_resize(&mut self, buckets: usize) {
        assert!(!self.is_rehashing(), "resize while rehashing");
        if buckets == self.tables[0].len() {
            return;
        }
        if self.used[0] == 0 {
            debug_assert_eq!(self.child_buckets, 0);
            self.tables[0] = Heads::new(buckets);
            return;
        }
        self.tables[1] = Heads::new(buckets);
        self.rehash_idx = 0;
    }

    /// Moves up to `max_nonempty` non-empty head buckets, visiting at most `max_visits` heads.
    fn rehash_work(&mut self, max_nonempty: usize, max_visits: usize) {
        let mut nonempty = 0;
        let mut visits = 0;
        while self.is_rehashing() && nonempty < max_nonempty && visits < max_visits {
            if self.move_head(self.rehash_idx) {
                nonempty += 1;
            }
            self.rehash_idx += 1;
            visits += 1;
            if self.used[0] == 0 {
                self.finish_rehash();
            }
        }
    }

    /// Moves the chain at head `idx` of table 0 into table 1. Returns whether it had elements.
    fn move_head(&mut self, idx: usize) -> bool {
        let [old, new] = &mut self.tables;
        let head = &mut old[idx];
        if head.is_empty() {
            return false;
        }
        let mut moved = 0;
        let mut children_added = 0;
        let children_freed = head.drain_chain(|h2, e| {
            let hash = E::key_hash(e.key());
            debug_assert_eq!(h2, super::secondary_hash(hash), "element's hash changed");
            let new_idx = bucket_index(hash, new.len());
            if new[new_idx].push(h2, e) {
                children_added += 1;
            }
            new.note_added(new_idx, h2);
            moved += 1;
        });
        self.used[0] -= moved;
        self.used[1] += moved;
        self.child_buckets = self.child_buckets + children_added - children_freed;
        true
    }

    /// Table 0 is empty: table 1 becomes table 0. Then resizes again if still out of limits.
    fn finish_rehash(&mut self) {
        debug_assert_eq!(self.used[0], 0);
        self.tables.swap(0, 1);
        self.tables[1] = Heads::new(0);
        self.used = [self.used[1], 0];
        self.rehash_idx = 0;
        let (len, buckets) = (self.len(), self.tables[0].len());
        if !fits_grow_limit(len, buckets) || below_shrink_limit(len, buckets) {
            self.start_resize(target_buckets(len));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_give_hysteresis() {
        assert_eq!(target_buckets(0), 1);
        assert_eq!(target_buckets(1), 1);
        for buckets in (0..20).map(|s| 1usize << s) {
            // The first length past the grow limit doubles the table...
            let mut len = buckets * SLOTS * FILL_GROW_PERCENT / 100;
            while fits_grow_limit(len, buckets) {
                len += 1;
            }
            assert_eq!(target_buckets(len), buckets * 2, "grow from {buckets}");
            assert!(!below_shrink_limit(len, buckets * 2));
            // ...and the first length below the shrink limit lands between 25% and 50% fill.
            if buckets >= 4 {
                let len = (buckets * SLOTS).div_ceil(FILL_SHRINK_DIVISOR) - 1;
                assert!(below_shrink_limit(len, buckets));
                let target = target_buckets(len);
                assert!(target < buckets && fits_grow_limit(len, target));
                assert!(!below_shrink_limit(len, target), "shrink from {buckets}");
            }
        }
    }
}
