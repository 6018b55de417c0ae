//! The full invariant check, for tests (and for a DEBUG command if one wants it).
//!
//! Linear in the table size; it re-hashes every key. Never called on a hot path.

use super::bucket::{Bucket, CHILD_SLOT};
use super::filter::chain_filter;
use super::{bucket_index, secondary_hash, Entry, Table, SLOTS};

impl<E: Entry> Table<E> {
    /// Panics with a description if any structural invariant is broken: array sizes, the rehash
    /// index, meta words (presence vs. slots, secondary hashes, zeroed bytes of empty slots),
    /// chain shape, every element in the right bucket of its table, no key twice, and the
    /// element and child-bucket counts.
    pub fn check_invariants(&self) {
        for (t, buckets) in self.tables.iter().enumerate() {
            assert!(
                buckets.is_empty() || buckets.len().is_power_of_two(),
                "table {t} has {} buckets",
                buckets.len()
            );
        }
        if self.is_rehashing() {
            assert!(!self.tables[0].is_empty(), "rehashing from an empty table");
            assert!(self.rehash_idx < self.tables[0].len(), "rehash_idx past table 0");
            assert!(self.used[0] > 0, "rehashing with nothing left to move");
            assert_ne!(self.tables[0].len(), self.tables[1].len(), "resize to the same size");
        } else {
            assert_eq!(self.rehash_idx, 0, "rehash_idx set while not rehashing");
        }
        for idx in 0..self.rehash_idx {
            assert!(self.tables[0][idx].is_empty(), "moved head {idx} of table 0 not empty");
        }
        let mut children = 0;
        for t in 0..2 {
            let mut count = 0;
            for idx in self.live_range(t) {
                let head = &self.tables[t][idx];
                children += head.chain_len() - 1;
                count += self.check_chain(t, idx, head);
            }
            assert_eq!(count, self.used[t], "table {t} element count");
            for idx in 0..self.tables[t].len() {
                let word = self.tables[t].filter_word(idx);
                let needed = chain_filter(&self.tables[t][idx]);
                assert_eq!(word & needed, needed, "table {t} head {idx}: filter word {word:#x}");
            }
        }
        assert_eq!(children, self.child_buckets, "child bucket count");
    }

    /// Checks one chain; returns its element count.
    fn check_chain(&self, t: usize, idx: usize, head: &Bucket<E>) -> usize {
        let where_ = |depth: usize| format!("table {t} head {idx} depth {depth}");
        let chain_len = head.chain_len();
        let mut keys: Vec<&[u8]> = Vec::new();
        let mut depth = 0;
        let mut b = head;
        loop {
            assert!(b.vacant_hashes_are_zero(), "{}: meta {:#x}", where_(depth), b.meta());
            if b.is_chained() {
                assert_eq!(
                    b.presence(),
                    (1 << CHILD_SLOT) - 1,
                    "{}: inner not full",
                    where_(depth)
                );
            } else if depth > 0 {
                assert!(b.count() >= 2, "{}: last child holds {}", where_(depth), b.count());
            }
            let mut bits = b.presence();
            while bits != 0 {
                let slot = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let key = b.elem(slot).key();
                let hash = E::key_hash(key);
                assert_eq!(
                    bucket_index(hash, self.tables[t].len()),
                    idx,
                    "{}: element in the wrong bucket",
                    where_(depth)
                );
                assert_eq!(b.secondary_hash(slot), secondary_hash(hash), "{}", where_(depth));
                assert!(!keys.contains(&key), "{}: key twice in one chain", where_(depth));
                if t == 0 && self.is_rehashing() {
                    let other = &self.tables[1][bucket_index(hash, self.tables[1].len())];
                    let mut twice = false;
                    other.for_each_in_chain(|e| twice |= e.key() == key);
                    assert!(!twice, "{}: key also in table 1", where_(depth));
                }
                keys.push(key);
            }
            match b.child() {
                Some(child) => b = child,
                None => break,
            }
            depth += 1;
        }
        assert_eq!(depth + 1, chain_len);
        assert!(keys.len() <= 6 * chain_len + 1 && keys.len() <= SLOTS * chain_len);
        keys.len()
    }
}
