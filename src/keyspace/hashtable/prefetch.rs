//! Software prefetching: the CPU hint, and the two batch-lookup steps of [`Table`].
//!
//! A prefetch never faults and never changes program state, so a stale or wrong address only
//! wastes a load. See the module essay ("Iteration, prefetching and batched lookups") for the
//! order in which a batch calls these.

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
    /// rehashing).
    pub fn prefetch_bucket(&self, hash: u64) {
        for head in self.heads(hash).into_iter().flatten() {
            prefetch_read(head);
        }
    }

    /// Batch step 2: reads the head bucket(s) of `hash` (prefetched by step 1) and prefetches the
    /// entries whose secondary hash matches, through [`Entry::prefetch_addr`]. Child buckets are
    /// not followed: they are rare and the lookup itself will load them.
    pub fn prefetch_matches(&self, hash: u64) {
        let h2 = secondary_hash(hash);
        for head in self.heads(hash).into_iter().flatten() {
            let mut bits = head.matches(h2);
            while bits != 0 {
                prefetch_read(head.elem(bits.trailing_zeros() as usize).prefetch_addr());
                bits &= bits - 1;
            }
        }
    }
}
