//! Software prefetching: the CPU hint, and the two batch-lookup steps of [`Table`].
//!
//! A prefetch never faults and never changes program state, so a stale or wrong address only
//! wastes a load. See the module essay ("Iteration, prefetching and batched lookups") for the
//! order in which a batch calls these.

use super::bucket::Bucket;
use super::{secondary_hash, Entry, Table};

/// Hints the CPU to load the cache line holding `addr` into all cache levels. Null is ignored.
#[inline(always)]
pub fn prefetch_read<T>(addr: *const T) {
    if addr.is_null() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` is only a hint: it does not dereference the pointer in the Rust
    // sense and cannot fault, whatever the address. SSE is part of the x86_64 baseline.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(addr.cast::<i8>());
    }
}

impl<E: Entry> Table<E> {
    /// Batch step 1: prefetches the head bucket(s) that may hold `hash` (both tables while
    /// rehashing) and their miss-filter words.
    #[inline]
    pub fn prefetch_bucket(&self, hash: u64) {
        for (t, idx) in self.head_indices(hash).into_iter().enumerate() {
            if let Some(idx) = idx {
                prefetch_read(&self.tables[t][idx]);
                prefetch_read(self.tables[t].filter_addr(idx));
            }
        }
    }

    /// Batch step 2: reads the head bucket(s) of `hash` (prefetched by step 1) that the miss
    /// filter lets through and prefetches the entries whose secondary hash matches, through [`Entry::prefetch_addr`]. Child buckets are
    /// not followed: they are rare and the lookup itself will load them.
    #[inline]
    pub fn prefetch_matches(&self, hash: u64) {
        let h2 = secondary_hash(hash);
        match self.single_head(hash) {
            Ok(head) => head.into_iter().for_each(|h| prefetch_matching_entries(h, h2)),
            Err(()) => self
                .candidate_heads(hash)
                .into_iter()
                .flatten()
                .for_each(|h| prefetch_matching_entries(h, h2)),
        }
    }
}

/// Prefetches the entries of one bucket whose secondary hash is `h2`.
#[inline(always)]
fn prefetch_matching_entries<E: Entry>(head: &Bucket<E>, h2: u8) {
    let mut bits = head.matches(h2);
    while bits != 0 {
        // SAFETY: `matches` only returns bits of present slots.
        prefetch_read(
            unsafe { head.elem_unchecked(bits.trailing_zeros() as usize) }.prefetch_addr(),
        );
        bits &= bits - 1;
    }
}
