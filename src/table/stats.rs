//! Shape figures of a table for DEBUG HTSTATS: head buckets, elements, child buckets and the
//! distribution of chain lengths, per bucket array (the main one, and the rehash target
//! during a resize).
//!
//! Counting chains walks every live head bucket (linear in the table size); the cheap figures
//! come from the counters the table keeps. Nothing here changes the table.

use super::{Entry, Table, SLOTS};

/// Chain lengths counted one by one; longer chains all count in the last entry (Valkey's
/// `DICT_STATS_VECTLEN`, whose last entry its report leaves out).
pub const CHAIN_LENGTHS: usize = 50;

/// The figures of one bucket array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayStats {
    /// Head buckets allocated.
    pub head_buckets: usize,
    /// Element slots in the head buckets (`head_buckets` × 7).
    pub slots: usize,
    /// Elements stored in this array.
    pub elements: usize,
    /// The chain walk, when it was asked for.
    pub chains: Option<ChainStats>,
}

/// How the elements spread over chains, from walking every live head bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainStats {
    /// Child buckets hanging off this array's heads.
    pub child_buckets: usize,
    /// The most child buckets under one head.
    pub max_children: usize,
    /// `by_children[n]`: heads with `n` child buckets (the last entry: that many or more).
    pub by_children: [usize; CHAIN_LENGTHS],
}

/// The figures of a whole table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableStats {
    /// During a resize: how many head buckets of the main array have been moved.
    pub rehash_idx: Option<usize>,
    /// The main array, then the rehash target during a resize; empty for an empty table that
    /// holds no bucket array.
    pub arrays: Vec<ArrayStats>,
}

impl<E: Entry> Table<E> {
    /// The table's shape; `walk_chains` adds the chain figures (a walk of every head).
    pub fn stats(&self, walk_chains: bool) -> TableStats {
        let arrays = (0..2)
            .filter(|&t| !self.tables[t].is_empty())
            .map(|t| ArrayStats {
                head_buckets: self.tables[t].len(),
                slots: self.tables[t].len() * SLOTS,
                elements: self.used[t],
                chains: walk_chains.then(|| self.chain_stats(t)),
            })
            .collect();
        TableStats { rehash_idx: self.is_rehashing().then_some(self.rehash_idx), arrays }
    }

    fn chain_stats(&self, t: usize) -> ChainStats {
        let mut stats =
            ChainStats { child_buckets: 0, max_children: 0, by_children: [0; CHAIN_LENGTHS] };
        // Every head, moved ones too (empty, no children), so the counts add up to the heads.
        for idx in 0..self.tables[t].len() {
            let children = self.tables[t][idx].chain_len() - 1;
            stats.child_buckets += children;
            stats.max_children = stats.max_children.max(children);
            stats.by_children[children.min(CHAIN_LENGTHS - 1)] += 1;
        }
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{hash_of, item, Plain};
    use super::*;

    #[test]
    fn stats_follow_the_table() {
        let mut t: Table<Plain> = Table::new();
        assert!(t.stats(true).arrays.is_empty());
        for n in 0..1000 {
            t.insert(hash_of::<false>(n), item(n, n));
        }
        let s = t.stats(true);
        assert_eq!(s.arrays.iter().map(|a| a.elements).sum::<usize>(), 1000);
        let children = |a: &ArrayStats| a.chains.as_ref().unwrap().child_buckets;
        assert_eq!(s.arrays.iter().map(children).sum::<usize>(), t.child_buckets);
        let heads: usize = s.arrays[0].chains.as_ref().unwrap().by_children.iter().sum();
        assert_eq!(heads, s.arrays[0].head_buckets);
        assert_eq!(s.arrays[0].slots, s.arrays[0].head_buckets * SLOTS);
        assert!(t.stats(false).arrays[0].chains.is_none());
    }
}
