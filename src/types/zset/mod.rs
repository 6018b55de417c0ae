//! The sorted set type: members (binary strings) with a score each, ordered by score and
//! then by member bytes. This module owns the two encodings, the conversion between them and
//! the score/range grammar (`range`); commands (`commands::zset`) only use [`ZSetObj`]'s
//! methods and never see an encoding.
//!
//! # Encodings
//!
//! - `listpack` (`lp`): member and score entries alternating in one [`Listpack`], in order,
//!   as Valkey lays them out, while the set has at most `zset-max-listpack-entries` members
//!   of at most `zset-max-listpack-value` bytes each. Integral scores are stored as listpack
//!   integers, others as their shortest exact decimal text.
//! - `skiplist` (`big`): the name OBJECT ENCODING reports, as Valkey, for the large form. A
//!   set converts to it when an insertion crosses either limit, and never converts back
//!   (a set built whole, by a *STORE command, starts in the encoding its size calls for).
//!
//! # Why an order-statistics B+tree and not a skiplist
//!
//! The large form needs member -> score lookups (the keyspace `Table` of one-allocation
//! entries, `entry`; `crate::table::Table`) and an ordered index with ranks. Valkey's skiplist node holds the score,
//! the member pointer, a backward pointer and 1.33 levels of (forward, span) on average:
//! about 45 bytes, a 48-byte allocation per member, and a lookup follows ~2 log2(n) pointers
//! to nodes scattered over the heap, a likely cache miss each.
//!
//! The B+tree (`tree`) stores only the 8-byte handle of each entry in leaves of 63, and per
//! child of an inner node its element count and last element. At the usual 50-100% leaf fill
//! that is about 11 bytes per member plus under 1 of inner nodes: a quarter of the skiplist's
//! node memory. A rank or a range start is one descent of log64(n) nodes (4 for a million
//! members) with binary searches inside each, ranges are then read leaf by leaf
//! sequentially, and nodes never rebalance more than one sibling pair per level. Its cost is
//! that comparing against a separator dereferences an entry (the score is not copied into
//! the tree, to keep the 8 bytes per member), and an insertion moves up to 63 handles inside
//! a leaf: a `memmove` of half a kilobyte, cheap next to the cache misses it saves.
//!
//! # Ownership
//!
//! The table owns the entries (one allocation each: score, then member); the tree holds
//! non-owning copies of the same pointers, so each member is stored once. `big::BigZSet`
//! keeps the two in step and is the only code that dereferences a tree handle.

mod big;
mod entry;
mod lp;
pub mod range;
#[cfg(test)]
mod tests;
pub mod tree;

use crate::memory::size_class;
use crate::types::agg::{AggType, Kind};
use crate::types::listpack::{entry_size_for, Listpack};
pub use big::BigZSet;
pub use range::{LexBound, LexRange, ScoreRange};

/// The listpack limits (`zset-max-listpack-entries`, `zset-max-listpack-value`), read from
/// the config at each command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_entries: usize,
    pub max_value_bytes: usize,
}

impl Limits {
    /// Whether a set of `len` members, the longest `max_member` bytes, fits a listpack.
    pub fn fits_listpack(&self, len: usize, max_member: usize) -> bool {
        len <= self.max_entries && max_member <= self.max_value_bytes
    }
}

/// A sorted set value.
#[derive(Clone, Debug)]
pub struct ZSetObj {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    Listpack(Listpack),
    Skiplist(Box<BigZSet>),
}

/// Which end ZPOPMIN/ZPOPMAX and friends take from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Min,
    Max,
}

impl ZSetObj {
    /// An empty set in the encoding that `size_hint` members, the longest `max_member`
    /// bytes, call for.
    pub fn with_hint(limits: Limits, size_hint: usize, max_member: usize) -> ZSetObj {
        if limits.max_entries == 0 || !limits.fits_listpack(size_hint, max_member) {
            ZSetObj { repr: Repr::Skiplist(Box::default()) }
        } else {
            ZSetObj { repr: Repr::Listpack(Listpack::new()) }
        }
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Listpack(lp) => lp.len() / 2,
            Repr::Skiplist(b) => b.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The listpack itself, in the listpack encoding (RDB and DUMP store its bytes).
    pub fn listpack(&self) -> Option<&Listpack> {
        match &self.repr {
            Repr::Listpack(lp) => Some(lp),
            Repr::Skiplist(_) => None,
        }
    }

    /// The shape of the member table beside the skiplist (DEBUG HTSTATS-KEY).
    pub fn table_stats(&self, walk_chains: bool) -> Option<crate::table::TableStats> {
        match &self.repr {
            Repr::Listpack(_) => None,
            Repr::Skiplist(big) => Some(big.table_stats(walk_chains)),
        }
    }

    pub fn is_listpack(&self) -> bool {
        matches!(self.repr, Repr::Listpack(_))
    }

    pub fn score(&self, member: &[u8]) -> Option<f64> {
        match &self.repr {
            Repr::Listpack(l) => lp::find(l, member).map(|(_, s)| s),
            Repr::Skiplist(b) => b.score(member),
        }
    }

    /// Sets `member`'s score, adding it when absent (converting to the large encoding when
    /// the addition crosses a limit). Returns the old score.
    pub fn set(&mut self, member: &[u8], score: f64, limits: Limits) -> Option<f64> {
        if let Repr::Listpack(l) = &mut self.repr {
            match lp::find(l, member) {
                Some((p, old)) => {
                    if old != score {
                        lp::delete_at(l, p);
                        lp::insert(l, member, score);
                    }
                    return Some(old);
                }
                None => {
                    let n = l.len() / 2;
                    let fits = limits.fits_listpack(n + 1, member.len())
                        && l.total_bytes() + entry_size_for(member) + 32 < u32::MAX as usize / 2;
                    if fits {
                        lp::insert(l, member, score);
                        return None;
                    }
                    self.convert_to_skiplist();
                }
            }
        }
        let Repr::Skiplist(b) = &mut self.repr else { unreachable!("converted above") };
        match b.score(member) {
            Some(old) if old == score => Some(old),
            Some(_) => Some(b.update(member, score)),
            None => {
                b.insert_new(member, score);
                None
            }
        }
    }

    /// Appends a member that sorts after every present one (building a set from sorted
    /// input, as ZRANGESTORE does). The encoding must already be the final one.
    pub fn push_greatest(&mut self, member: &[u8], score: f64) {
        match &mut self.repr {
            Repr::Listpack(l) => lp::insert(l, member, score),
            Repr::Skiplist(b) => b.push_greatest(member, score),
        }
    }

    fn convert_to_skiplist(&mut self) {
        let Repr::Listpack(l) = &self.repr else { return };
        let mut b = BigZSet::new();
        lp::visit(l, 0, usize::MAX, false, |m, s| {
            b.push_greatest(m, s);
            true
        });
        self.repr = Repr::Skiplist(Box::new(b));
    }

    /// Removes `member`; returns its score.
    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        match &mut self.repr {
            Repr::Listpack(l) => {
                let (p, s) = lp::find(l, member)?;
                lp::delete_at(l, p);
                Some(s)
            }
            Repr::Skiplist(b) => b.remove(member),
        }
    }

    /// The rank (0 = lowest score) and score of `member`.
    pub fn rank(&self, member: &[u8]) -> Option<(usize, f64)> {
        match &self.repr {
            Repr::Listpack(l) => lp::find(l, member).map(|(p, s)| (lp::rank_of(l, p), s)),
            Repr::Skiplist(b) => b.rank(member),
        }
    }

    /// Calls `f(member, score)` on the members of ranks `start..end` (from `end - 1` down
    /// to `start` when `rev`) until `f` returns false.
    pub fn visit(&self, start: usize, end: usize, rev: bool, f: impl FnMut(&[u8], f64) -> bool) {
        match &self.repr {
            Repr::Listpack(l) => lp::visit(l, start, end, rev, f),
            Repr::Skiplist(b) => b.visit(start, end, rev, f),
        }
    }

    /// Calls `f` on every member in order.
    pub fn for_each(&self, mut f: impl FnMut(&[u8], f64)) {
        self.visit(0, self.len(), false, |m, s| {
            f(m, s);
            true
        });
    }

    /// The ranks `lo..hi` of the members whose score is in `r`.
    pub fn score_bounds(&self, r: &ScoreRange) -> (usize, usize) {
        if r.min > r.max || (r.min == r.max && (r.min_ex || r.max_ex)) {
            return (0, 0);
        }
        match &self.repr {
            Repr::Listpack(l) => lp::score_bounds(l, r),
            Repr::Skiplist(b) => b.score_bounds(r),
        }
    }

    /// The ranks `lo..hi` of the members in the lex range `r`.
    pub fn lex_bounds(&self, r: &LexRange<'_>) -> (usize, usize) {
        if lex_range_empty(r) {
            return (0, 0);
        }
        match &self.repr {
            Repr::Listpack(l) => lp::lex_bounds(l, r),
            Repr::Skiplist(b) => b.lex_bounds(r),
        }
    }

    /// Removes the members of ranks `lo..hi`.
    pub fn remove_ranks(&mut self, lo: usize, hi: usize) {
        let hi = hi.min(self.len());
        if lo >= hi {
            return;
        }
        match &mut self.repr {
            Repr::Listpack(l) => l.delete_range(2 * lo as i64, 2 * (hi - lo)),
            Repr::Skiplist(b) => b.remove_ranks(lo, hi),
        }
    }

    /// One ZSCAN step: a listpack is returned whole (cursor 0); a large set visits table
    /// buckets until about `count` members are seen or `count * 10` buckets were visited.
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&[u8], f64)) -> u64 {
        match &self.repr {
            Repr::Listpack(_) => {
                self.for_each(f);
                0
            }
            Repr::Skiplist(b) => {
                let mut seen = 0;
                let mut cursor = cursor;
                let mut visits = count.saturating_mul(10);
                loop {
                    cursor = b.scan(cursor, |m, s| {
                        seen += 1;
                        f(m, s)
                    });
                    visits -= 1;
                    if cursor == 0 || seen >= count || visits == 0 {
                        return cursor;
                    }
                }
            }
        }
    }

    /// Checks the structure. For tests.
    pub fn check_invariants(&self) {
        match &self.repr {
            Repr::Listpack(l) => {
                let mut prev: Option<(Vec<u8>, f64)> = None;
                self.for_each(|m, s| {
                    if let Some((pm, ps)) = &prev {
                        assert!(range::cmp_pair(*ps, pm, s, m).is_lt(), "listpack order");
                    }
                    prev = Some((m.to_vec(), s));
                });
                assert_eq!(l.len() % 2, 0);
            }
            Repr::Skiplist(b) => b.check_invariants(),
        }
    }
}

/// Whether a lex range is empty whatever the set holds (Valkey's `zslLexValue` checks).
fn lex_range_empty(r: &LexRange<'_>) -> bool {
    match (r.min, r.max) {
        (LexBound::PosInf, _) | (_, LexBound::NegInf) => true,
        (LexBound::NegInf, _) | (_, LexBound::PosInf) => false,
        (LexBound::Incl(a), LexBound::Incl(b)) => a > b,
        (LexBound::Incl(a), LexBound::Excl(b))
        | (LexBound::Excl(a), LexBound::Incl(b))
        | (LexBound::Excl(a), LexBound::Excl(b)) => a >= b,
    }
}

impl AggType for ZSetObj {
    const KIND: Kind = Kind::ZSet;

    fn len(&self) -> usize {
        ZSetObj::len(self)
    }

    fn encoding(&self) -> &'static str {
        match self.repr {
            Repr::Listpack(_) => "listpack",
            Repr::Skiplist(_) => "skiplist",
        }
    }

    fn alloc_bytes(&self) -> usize {
        match &self.repr {
            Repr::Listpack(l) => l.alloc_bytes(),
            Repr::Skiplist(b) => size_class(std::mem::size_of::<BigZSet>()) + b.alloc_bytes(),
        }
    }

    fn free_effort(&self) -> usize {
        match &self.repr {
            Repr::Listpack(_) => 1,
            Repr::Skiplist(b) => b.len(),
        }
    }
}
