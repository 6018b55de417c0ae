//! The `skiplist` encoding of a large sorted set: the keyspace's hashtable maps each member
//! to its entry (member -> score in O(1)), and an order-statistics B+tree (`tree`) keeps
//! handles to the same entries in (score, member) order with subtree counts (ranks and
//! ranges in O(log n)).
//!
//! Ownership: the table owns every [`ZEntry`]; the tree holds [`ZRef`] handles to them.
//! Every method here keeps the two in step (each member is in both or in neither), removes
//! a handle from the tree before the table drops its entry, and writes a score in place only
//! while `&mut self` is held. Those are the facts every `unsafe` read below relies on.

use crate::memory::size_class;
use crate::table::{hash_key, Table};
use crate::types::zset::entry::{ZEntry, ZRef};
use crate::types::zset::range::{cmp_pair, LexRange, ScoreRange};
use crate::types::zset::tree::{OsTree, INNER_CAP, LEAF_CAP};

pub struct BigZSet {
    table: Table<ZEntry>,
    tree: OsTree<ZRef>,
    /// Sum of the entries' allocation sizes.
    entry_bytes: usize,
}

impl std::fmt::Debug for BigZSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut l = f.debug_list();
        self.visit(0, self.len(), false, |m, s| {
            l.entry(&(m.escape_ascii().to_string(), s));
            true
        });
        l.finish()
    }
}

impl Clone for BigZSet {
    fn clone(&self) -> BigZSet {
        let mut out = BigZSet::new();
        self.visit(0, self.len(), false, |m, s| {
            out.push_greatest(m, s);
            true
        });
        out
    }
}

impl Default for BigZSet {
    fn default() -> Self {
        BigZSet::new()
    }
}

/// Reads a handle's pair.
///
/// # Safety
/// The handle must be in the set's tree, with the set borrowed for `'a`.
unsafe fn read<'a>(r: ZRef) -> (&'a [u8], f64) {
    // SAFETY: per the contract the entry is alive for 'a.
    unsafe { (r.member(), r.score()) }
}

impl BigZSet {
    /// The member table's shape (DEBUG HTSTATS-KEY).
    pub fn table_stats(&self, walk_chains: bool) -> crate::table::TableStats {
        self.table.stats(walk_chains)
    }

    pub fn new() -> BigZSet {
        BigZSet { table: Table::new(), tree: OsTree::new(), entry_bytes: 0 }
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the allocator charges for the table, the tree and the entries.
    pub fn alloc_bytes(&self) -> usize {
        let nodes = self.tree.node_counts();
        let node_box = size_class(std::mem::size_of::<usize>() * 4);
        self.table.memory_bytes()
            + self.entry_bytes
            + nodes.leaves * (size_class(LEAF_CAP * 8) + node_box)
            + nodes.inners * (size_class(INNER_CAP * 24) + node_box)
    }

    pub fn score(&self, member: &[u8]) -> Option<f64> {
        self.table.find(hash_key(member), member).map(ZEntry::score)
    }

    /// The rank a (score, member) pair has or would have.
    fn rank_for(&self, score: f64, member: &[u8]) -> usize {
        self.tree.partition_point(|r| {
            // SAFETY: handles in the tree are alive while self is borrowed.
            let (m, s) = unsafe { read(r) };
            cmp_pair(s, m, score, member).is_lt()
        })
    }

    /// The rank and score of `member`.
    pub fn rank(&self, member: &[u8]) -> Option<(usize, f64)> {
        let score = self.score(member)?;
        Some((self.rank_for(score, member), score))
    }

    /// Adds a member that is not present.
    pub fn insert_new(&mut self, member: &[u8], score: f64) {
        let rank = self.rank_for(score, member);
        let e = ZEntry::new(member, score);
        self.entry_bytes += e.alloc_bytes();
        self.tree.insert(rank, e.handle());
        self.table.insert_new(hash_key(member), e);
    }

    /// Appends a member greater than every present one (building from sorted input).
    pub fn push_greatest(&mut self, member: &[u8], score: f64) {
        let e = ZEntry::new(member, score);
        debug_assert!(
            self.tree.is_empty() || {
                // SAFETY: the last handle is alive while self is borrowed.
                let (m, s) = unsafe { read(self.tree.get(self.tree.len() - 1)) };
                cmp_pair(s, m, score, member).is_lt()
            }
        );
        self.entry_bytes += e.alloc_bytes();
        self.tree.push(e.handle());
        self.table.insert_new(hash_key(member), e);
    }

    /// Changes the score of a present member; returns the old one.
    pub fn update(&mut self, member: &[u8], score: f64) -> f64 {
        let h = self.table.find(hash_key(member), member).expect("member present").handle();
        // SAFETY: the entry is in the table; self is borrowed mutably.
        let old = unsafe { h.score() };
        let rank = self.rank_for(old, member);
        debug_assert_eq!(self.tree.get(rank), h);
        // Stays in place when it still sorts between its neighbours.
        let after_prev = rank == 0 || {
            // SAFETY: as above.
            let (m, s) = unsafe { read(self.tree.get(rank - 1)) };
            cmp_pair(s, m, score, member).is_lt()
        };
        let before_next = rank + 1 == self.tree.len() || {
            // SAFETY: as above.
            let (m, s) = unsafe { read(self.tree.get(rank + 1)) };
            cmp_pair(score, member, s, m).is_lt()
        };
        if after_prev && before_next {
            // SAFETY: the entry is alive and nothing borrows it (self is &mut).
            unsafe { h.set_score(score) };
            return old;
        }
        self.tree.remove(rank);
        // SAFETY: as above.
        unsafe { h.set_score(score) };
        let to = self.rank_for(score, member);
        self.tree.insert(to, h);
        old
    }

    /// Removes `member`; returns its score.
    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        let (rank, score) = self.rank(member)?;
        self.tree.remove(rank);
        let e = self.table.remove(hash_key(member), member).expect("in the table");
        self.entry_bytes -= e.alloc_bytes();
        Some(score)
    }

    /// Removes the members of ranks `lo..hi`.
    pub fn remove_ranks(&mut self, lo: usize, hi: usize) {
        for _ in lo..hi.min(self.len()) {
            let h = self.tree.remove(lo);
            // SAFETY: the handle just left the tree but its entry is still in the table;
            // the slice is only used to find it there, before it is dropped.
            let member = unsafe { h.member() };
            let e = self.table.remove(hash_key(member), member).expect("in the table");
            self.entry_bytes -= e.alloc_bytes();
        }
    }

    /// Calls `f(member, score)` on ranks `start..end` (reversed when `rev`) until it returns
    /// false.
    pub fn visit(
        &self,
        start: usize,
        end: usize,
        rev: bool,
        mut f: impl FnMut(&[u8], f64) -> bool,
    ) {
        self.tree.visit(start, end, rev, |r| {
            // SAFETY: handles in the tree are alive while self is borrowed.
            let (m, s) = unsafe { read(r) };
            f(m, s)
        });
    }

    /// Ranks `lo..hi` of the members in the score range.
    pub fn score_bounds(&self, r: &ScoreRange) -> (usize, usize) {
        // SAFETY (both closures): handles in the tree are alive while self is borrowed.
        let lo = self.tree.partition_point(|h| !r.gte_min(unsafe { h.score() }));
        let hi = self.tree.partition_point(|h| r.lte_max(unsafe { h.score() }));
        (lo, hi.max(lo))
    }

    /// Ranks `lo..hi` of the members in the lex range (meaningful when all scores are
    /// equal, as in Valkey).
    pub fn lex_bounds(&self, r: &LexRange<'_>) -> (usize, usize) {
        // SAFETY (both closures): handles in the tree are alive while self is borrowed.
        let lo = self.tree.partition_point(|h| !r.gte_min(unsafe { h.member() }));
        let hi = self.tree.partition_point(|h| r.lte_max(unsafe { h.member() }));
        (lo, hi.max(lo))
    }

    /// One SCAN step over the table: calls `f` on the members of the visited buckets and
    /// returns the next cursor.
    pub fn scan(&self, cursor: u64, mut f: impl FnMut(&[u8], f64)) -> u64 {
        self.table.scan(cursor, |e| f(e.member(), e.score()))
    }

    /// Checks the table and tree agree. For tests.
    pub fn check_invariants(&self) {
        self.table.check_invariants();
        self.tree.check_invariants(|a, b| a == b);
        assert_eq!(self.table.len(), self.tree.len());
        let mut prev: Option<(Vec<u8>, f64)> = None;
        let mut bytes = 0;
        self.visit(0, self.len(), false, |m, s| {
            let e = self.table.find(hash_key(m), m).expect("tree member in the table");
            assert_eq!(e.score(), s);
            bytes += e.alloc_bytes();
            if let Some((pm, ps)) = &prev {
                assert!(cmp_pair(*ps, pm, s, m).is_lt(), "tree order");
            }
            prev = Some((m.to_vec(), s));
            true
        });
        assert_eq!(bytes, self.entry_bytes);
    }
}
