//! A head-bucket array with its miss filter: one 32-bit word per head bucket that answers
//! "certainly absent" for most keys that are not in the chain, without reading the bucket line
//! (module essay: "The miss filter").
//!
//! Each element sets two bits of its head's word, chosen by its secondary hash alone. So a word
//! can be rebuilt from the chain's meta words without reading a key ([`chain_filter`]); a
//! removal leaves the element's bits set (the word may then let more absent keys through, never
//! fewer present ones), and rehashing and [`Table::refresh_filters`] rebuild the words.
//! [`Table::check_invariants`] checks that every word holds at least the bits of its chain.

use std::ops::{Deref, DerefMut};

use super::bucket::{self, Bucket};
use super::SLOTS;

/// The two filter bits of secondary hash `h2`: bit `lo = h2 % 32` and bit
/// `(lo + 1 + h2 / 32) % 32`, 1 to 8 places above it (wrapping). The 256 secondary hashes get 256
/// different pairs: `lo` and the distance give back `h2`, and a pair cannot be read the other way
/// round (that would need two distances adding up to 32).
#[inline(always)]
pub(super) fn filter_bits(h2: u8) -> u32 {
    let lo = u32::from(h2 & 31);
    let hi = (lo + 1 + u32::from(h2 >> 5)) & 31;
    (1u32 << lo) | (1u32 << hi)
}

/// The head buckets of one table and their filter words, index for index.
///
/// Derefs to the bucket slice: reading buckets is free, but whoever adds an element through
/// [`DerefMut`] must call [`Heads::note_added`]; [`Heads::refilter`] drops the bits of elements
/// that have left.
pub(super) struct Heads<E> {
    buckets: Box<[Bucket<E>]>,
    filter: Box<[u32]>,
}

impl<E> Heads<E> {
    /// `n` empty heads (all filter words 0); no allocation for `n == 0`.
    pub(super) fn new(n: usize) -> Self {
        Heads { buckets: bucket::alloc_buckets(n), filter: vec![0u32; n].into_boxed_slice() }
    }

    /// Bytes of bucket and filter memory.
    pub(super) fn memory_bytes(&self) -> usize {
        self.buckets.len() * (std::mem::size_of::<Bucket<E>>() + std::mem::size_of::<u32>())
    }

    /// Whether the chain at head `idx` may hold an element with secondary hash `h2` (`false`:
    /// certainly not).
    #[inline(always)]
    pub(super) fn may_hold(&self, idx: usize, h2: u8) -> bool {
        let want = filter_bits(h2);
        self.filter[idx] & want == want
    }

    /// The head bucket at `idx` when its chain may hold secondary hash `h2`; `None` when it
    /// certainly does not or when the array is empty. `idx` is masked to the array's size, so
    /// no bounds check remains in the lookup path.
    #[inline(always)]
    pub(super) fn candidate(&self, hash_bits: usize, h2: u8) -> Option<&Bucket<E>> {
        let mask = self.buckets.len().wrapping_sub(1);
        let idx = hash_bits & mask;
        // An empty array has length 0: the mask wraps to usize::MAX and `get` answers None.
        let word = *self.filter.get(idx)?;
        let want = filter_bits(h2);
        if word & want != want {
            return None;
        }
        // SAFETY: `filter` and `buckets` have the same length, and `idx` was in range of `filter`.
        Some(unsafe { self.buckets.get_unchecked(idx) })
    }

    /// The address of the filter word of head `idx`, for prefetching.
    #[inline(always)]
    pub(super) fn filter_addr(&self, idx: usize) -> *const u32 {
        self.filter.get(idx).map_or(std::ptr::null(), |w| w as *const u32)
    }

    /// Records that an element with secondary hash `h2` joined the chain at head `idx`.
    #[inline]
    pub(super) fn note_added(&mut self, idx: usize, h2: u8) {
        self.filter[idx] |= filter_bits(h2);
    }

    /// Rebuilds the filter word of head `idx` from its chain, dropping the bits of elements that
    /// have left it.
    pub(super) fn refilter(&mut self, idx: usize) {
        self.filter[idx] = chain_filter(&self.buckets[idx]);
    }

    /// The stored filter word of head `idx` (for the invariant checker).
    pub(super) fn filter_word(&self, idx: usize) -> u32 {
        self.filter[idx]
    }
}

/// The filter word a chain should have: the bits of every secondary hash in it.
pub(super) fn chain_filter<E>(head: &Bucket<E>) -> u32 {
    let mut word = bucket_filter(head.meta());
    let mut b = head;
    while let Some(child) = b.child() {
        word |= bucket_filter(child.meta());
        b = child;
    }
    word
}

/// The filter bits of the present slots of one bucket, from its meta word: straight-line code
/// (an absent slot's bits are masked off), without a mispredicted loop exit per bucket.
#[inline(always)]
fn bucket_filter(meta: u64) -> u32 {
    let mut word = 0;
    for slot in 0..SLOTS {
        let h2 = (meta >> (8 * (slot + 1))) as u8;
        let present = ((meta >> (1 + slot)) & 1) as u32;
        word |= filter_bits(h2) & present.wrapping_neg();
    }
    word
}

impl<E> Deref for Heads<E> {
    type Target = [Bucket<E>];

    fn deref(&self) -> &[Bucket<E>] {
        &self.buckets
    }
}

impl<E> DerefMut for Heads<E> {
    fn deref_mut(&mut self) -> &mut [Bucket<E>] {
        &mut self.buckets
    }
}
