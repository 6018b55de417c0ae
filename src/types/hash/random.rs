//! Random fields for HRANDFIELD: one pair, a stream of pairs that may repeat (negative
//! count), or distinct pairs (positive count smaller than the hash).
//!
//! The caller passes an [`Rng`] seeded from the server's generator, so this module reads no
//! global state and tests are deterministic. Sampling a listpack first collects its pairs
//! (the listpack is bounded by `hash-max-listpack-entries`) so each draw is O(1) rather than
//! a walk; a table draws with [`Table::random`](crate::table::Table::random),
//! which is close to, but not exactly, uniform (see the hashtable's essay).

use std::collections::HashSet;

use super::{HashObj, Pair, Repr};

use crate::util::rng::Rng;

/// An endless stream of random pairs, repetitions allowed (see [`HashObj::random_pairs`]).
pub struct RandomPairs<'a> {
    source: Source<'a>,
    rng: Rng,
}

enum Source<'a> {
    Pairs(Vec<Pair<'a>>),
    Table(&'a HashObj),
}

impl<'a> Iterator for RandomPairs<'a> {
    type Item = Pair<'a>;

    fn next(&mut self) -> Option<Pair<'a>> {
        match &self.source {
            Source::Pairs(pairs) if pairs.is_empty() => None,
            Source::Pairs(pairs) => Some(pairs[self.rng.below(pairs.len())]),
            Source::Table(h) => h.random_pair(&mut self.rng),
        }
    }
}

impl HashObj {
    /// A random field with its value; None only for an empty hash.
    pub fn random_pair(&self, rng: &mut Rng) -> Option<Pair<'_>> {
        match &self.repr {
            Repr::Listpack(lp) => {
                let pairs = lp.len() / 2;
                if pairs == 0 {
                    return None;
                }
                let at = lp.seek(2 * rng.below(pairs) as i64)?;
                let value_at = lp.next(at).expect("a hash listpack holds whole pairs");
                Some((lp.get(at), lp.get(value_at)))
            }
            Repr::Table(big) => {
                let e = big.table.random(rng.next_u64())?;
                Some((super::LpEntry::Str(e.field()), e.value()))
            }
        }
    }

    /// Random pairs, each drawn independently (the same pair may come more than once); the
    /// stream never ends unless the hash is empty. The caller takes as many as it needs.
    pub fn random_pairs(&self, rng: Rng) -> RandomPairs<'_> {
        let source = match &self.repr {
            Repr::Listpack(_) => Source::Pairs(self.iter().collect()),
            Repr::Table(_) => Source::Table(self),
        };
        RandomPairs { source, rng }
    }

    /// `count` distinct random pairs, `count` smaller than the hash. A listpack picks them
    /// in one pass (selection sampling, in listpack order). A table draws random elements
    /// until it has `count` distinct ones when that is cheap (`count * 3 <= len`, as
    /// Valkey's `HRANDFIELD_SUB_STRATEGY_MUL`); otherwise it shuffles all the elements and
    /// keeps the first `count`, so it never spends long collecting the last few.
    pub fn random_distinct(&self, count: usize, rng: &mut Rng) -> Vec<Pair<'_>> {
        use crate::types::agg::AggType;
        let len = self.len();
        assert!(count < len, "random_distinct wants fewer pairs than the hash holds");
        let big = match &self.repr {
            Repr::Listpack(_) => {
                let mut out = Vec::with_capacity(count);
                for (seen, pair) in self.iter().enumerate() {
                    // Take this pair with probability (still needed) / (still left).
                    if rng.below(len - seen) < count - out.len() {
                        out.push(pair);
                    }
                }
                return out;
            }
            Repr::Table(big) => big,
        };
        if count.saturating_mul(3) > len {
            let mut all: Vec<Pair<'_>> = self.iter().collect();
            for i in 0..count {
                let j = i + rng.below(len - i);
                all.swap(i, j);
            }
            all.truncate(count);
            return all;
        }
        let mut seen = HashSet::with_capacity(count);
        let mut out = Vec::with_capacity(count);
        while out.len() < count {
            let e = big.table.random(rng.next_u64()).expect("the hash is not empty");
            if seen.insert(e as *const super::HashEntry) {
                out.push((super::LpEntry::Str(e.field()), e.value()));
            }
        }
        out
    }
}
