//! Random elements for RANDOMKEY, eviction and active expiry (module essay: "Random sampling").
//!
//! The caller supplies the randomness as a seed, so the table reads no global RNG and tests are
//! deterministic.

use super::{Entry, Table};
use crate::util::rng::{below, splitmix64};

/// Random head buckets `random` draws before it settles for walking forward from the last one.
/// Rejecting empty heads (rather than walking past them) keeps runs of empty heads from
/// favouring the element after them; such runs are long in the half-filled new table of a
/// resize (its filled heads are clustered) and in the sparse old table of a shrink.
const RANDOM_HEAD_TRIES: usize = 8;

impl<E: Entry> Table<E> {
    /// A random element, or `None` if the table is empty: the first non-empty one of up to
    /// `RANDOM_HEAD_TRIES` uniformly random live head buckets (if all are empty, the first
    /// non-empty head after the last one), then a uniformly random element of its chain.
    /// Not exactly uniform; see the module essay for how far off and why that is fine.
    pub fn random(&self, rng_seed: u64) -> Option<&E> {
        if self.is_empty() {
            return None;
        }
        let heads = self.live_heads();
        let mut state = rng_seed;
        let mut start = 0;
        for _ in 0..RANDOM_HEAD_TRIES {
            state = splitmix64(state);
            start = below(state, heads);
            if !self.head_at(start).is_empty() {
                break;
            }
        }
        // Terminates: some live head holds an element.
        let head = (0..heads)
            .map(|step| self.head_at((start + step) % heads))
            .find(|head| !head.is_empty())
            .expect("a non-empty table has a non-empty live head");
        let mut nth = below(splitmix64(state ^ 0x5851_F42D_4C95_7F2D), head.chain_count());
        let mut chosen = None;
        head.for_each_in_chain(|e| {
            if nth == 0 {
                chosen = Some(e);
            }
            nth = nth.wrapping_sub(1);
        });
        chosen
    }

    /// Appends up to `n` distinct elements to `out` (fewer only if the table has fewer): all the
    /// elements of consecutive head buckets from a random start, wrapping around once. For
    /// eviction and active-expire sampling.
    pub fn sample<'a>(&'a self, rng_seed: u64, n: usize, out: &mut Vec<&'a E>) {
        if n == 0 || self.is_empty() {
            return;
        }
        let wanted = n.min(self.len());
        let heads = self.live_heads();
        let start = below(splitmix64(rng_seed), heads);
        // The first chain is read from a random element on (wrapping around inside the chain),
        // so that a small `n` does not always favour the first slots of a bucket.
        let first = self.head_at(start);
        let first_count = first.chain_count();
        let offset = below(splitmix64(rng_seed ^ 0x5851_F42D_4C95_7F2D), first_count.max(1));
        let target = out.len() + wanted;
        for pass in [offset..first_count, 0..offset] {
            let mut i = 0;
            first.for_each_in_chain(|e| {
                if pass.contains(&i) && out.len() < target {
                    out.push(e);
                }
                i += 1;
            });
        }
        for step in 1..heads {
            if out.len() == target {
                return;
            }
            self.head_at((start + step) % heads).for_each_in_chain(|e| {
                if out.len() < target {
                    out.push(e);
                }
            });
        }
    }
}
