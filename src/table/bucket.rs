//! The 64-byte bucket: meta word, slots, child pointer, and the bucket-array allocation.
//!
//! Everything here is about one bucket (and the child buckets chained from it); nothing here
//! knows about tables, hashing of keys or rehashing. The accessors are safe: each one asserts the
//! presence bit or chained bit that makes its union read sound.

use std::mem::ManuallyDrop;

use super::{Entry, SLOTS};

/// The slot that holds the child pointer of a chained bucket.
pub(super) const CHILD_SLOT: usize = SLOTS - 1;

/// Meta bit 0: the bucket is chained.
const CHAINED_BIT: u64 = 1;
/// Bytes 1..=7 of the meta word (the secondary hashes).
const HASH_BYTES: u64 = 0xFFFF_FFFF_FFFF_FF00;
/// 0x01 in each of the 7 low bytes.
const LOW_ONES: u64 = 0x0001_0101_0101_0101;
/// The high bit of each of the 7 low bytes.
const LOW_HIGHS: u64 = 0x0080_8080_8080_8080;
/// Bits 0..=6 of each byte.
const SEVEN_BITS: u64 = 0x7F7F_7F7F_7F7F_7F7F;
/// Multiplier gathering bit `8k` to bit `56 + k` for k in 0..7. The partial products land on
/// distinct bit positions (8j - 7k is unique for j, k < 7), so nothing carries into the top byte.
const GATHER: u64 =
    (1 << 56) | (1 << 49) | (1 << 42) | (1 << 35) | (1 << 28) | (1 << 21) | (1 << 14);

/// One slot: an element, the child pointer (slot 6 of a chained bucket), or nothing.
/// Which one is recorded in the bucket's meta word.
#[repr(C)]
pub(super) union Slot<E> {
    elem: ManuallyDrop<E>,
    child: *mut Bucket<E>,
    vacant: usize,
}

/// A cache line: meta word and seven slots. See the module essay for the byte layout.
#[repr(C, align(64))]
pub(super) struct Bucket<E> {
    meta: u64,
    slots: [Slot<E>; SLOTS],
}

const _: () = assert!(std::mem::size_of::<Bucket<Box<u64>>>() == super::BUCKET_BYTES);
const _: () = assert!(std::mem::align_of::<Bucket<Box<u64>>>() == 64);

impl<E> Slot<E> {
    const VACANT: Slot<E> = Slot { vacant: 0 };
}

impl<E> Bucket<E> {
    /// Referenced by `Table::new`: fails to compile for an `E` that does not fit a slot.
    pub(super) const LAYOUT_OK: () = {
        assert!(std::mem::size_of::<E>() <= 8, "an Entry must be at most 8 bytes");
        assert!(std::mem::align_of::<E>() <= 8, "an Entry must be at most 8-byte aligned");
        assert!(std::mem::size_of::<Bucket<E>>() == 64);
        assert!(std::mem::align_of::<Bucket<E>>() == 64);
    };

    pub(super) const EMPTY: Bucket<E> = Bucket { meta: 0, slots: [Slot::VACANT; SLOTS] };

    /// The raw meta word (for the invariant checker).
    pub(super) fn meta(&self) -> u64 {
        self.meta
    }

    /// No element and no child.
    pub(super) fn is_empty(&self) -> bool {
        self.meta == 0
    }

    pub(super) fn is_chained(&self) -> bool {
        self.meta & CHAINED_BIT != 0
    }

    /// Presence bits: bit `i` set when slot `i` holds an element.
    pub(super) fn presence(&self) -> u32 {
        ((self.meta >> 1) & 0x7F) as u32
    }

    /// Elements in this bucket (not counting its children).
    pub(super) fn count(&self) -> usize {
        self.presence().count_ones() as usize
    }

    /// Slots that may hold elements: 6 when chained, else 7.
    fn capacity_mask(&self) -> u32 {
        if self.is_chained() {
            (1 << CHILD_SLOT) - 1
        } else {
            (1 << SLOTS) - 1
        }
    }

    /// Whether every slot that may hold an element does.
    pub(super) fn is_full(&self) -> bool {
        self.presence() == self.capacity_mask()
    }

    /// The first free element slot, if any.
    pub(super) fn free_slot(&self) -> Option<usize> {
        let free = !self.presence() & self.capacity_mask();
        (free != 0).then(|| free.trailing_zeros() as usize)
    }

    /// Secondary hash stored for slot `i`.
    pub(super) fn secondary_hash(&self, i: usize) -> u8 {
        (self.meta >> (8 * (i + 1))) as u8
    }

    /// Presence bits of the elements whose secondary hash equals `h2`: one SSE2 byte compare of
    /// the meta word on x86_64 (SSE2 is part of the base x86_64 instruction set).
    #[inline(always)]
    #[cfg(target_arch = "x86_64")]
    pub(super) fn matches(&self, h2: u8) -> u32 {
        use std::arch::x86_64::{
            _mm_cmpeq_epi8, _mm_cvtsi64_si128, _mm_movemask_epi8, _mm_set1_epi8,
        };
        // Byte k of the meta word equal to `h2` sets bit k of the mask; bit 0 (the flags byte)
        // is shifted out and the bits of absent slots are masked off.
        // SAFETY: SSE2 is always available on x86_64; these intrinsics only touch registers.
        let eq = unsafe {
            let meta = _mm_cvtsi64_si128(self.meta as i64);
            _mm_movemask_epi8(_mm_cmpeq_epi8(meta, _mm_set1_epi8(h2 as i8))) as u32
        };
        (eq >> 1) & self.presence()
    }

    /// Presence bits of the elements whose secondary hash equals `h2`.
    #[inline(always)]
    #[cfg(not(target_arch = "x86_64"))]
    pub(super) fn matches(&self, h2: u8) -> u32 {
        self.matches_swar(h2)
    }

    /// `matches` by SWAR over the seven hash bytes: XOR makes matching bytes zero, then a
    /// carry-free add finds the zero bytes. The portable form, and the reference the x86_64
    /// form is tested against.
    #[inline(always)]
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    pub(super) fn matches_swar(&self, h2: u8) -> u32 {
        let x = (self.meta >> 8) ^ (LOW_ONES * u64::from(h2));
        // High bit of each byte of `nonzero` is set iff that byte of `x` is non-zero. The add
        // cannot carry across bytes: (b & 0x7F) + 0x7F <= 0xFE.
        let nonzero = ((x & SEVEN_BITS) + SEVEN_BITS) | x;
        let zero_highs = !nonzero & LOW_HIGHS;
        let gathered = ((zero_highs >> 7).wrapping_mul(GATHER) >> 56) as u32;
        gathered & self.presence()
    }

    /// The element in slot `i`. Panics if the slot is empty.
    pub(super) fn elem(&self, i: usize) -> &E {
        assert!(self.presence() & (1 << i) != 0, "slot {i} is empty");
        // SAFETY: the presence bit says slot `i` holds an initialized `E`.
        unsafe { &self.slots[i].elem }
    }

    /// The element in slot `i`, without checking its presence bit (hot lookup path).
    ///
    /// # Safety
    /// Slot `i` must hold an element (its presence bit is set).
    #[inline(always)]
    pub(super) unsafe fn elem_unchecked(&self, i: usize) -> &E {
        debug_assert!(self.presence() & (1 << i) != 0, "slot {i} is empty");
        // SAFETY: the caller guarantees the presence bit of slot `i`.
        unsafe { &self.slots.get_unchecked(i).elem }
    }

    /// The element in slot `i`, mutably. Panics if the slot is empty.
    pub(super) fn elem_mut(&mut self, i: usize) -> &mut E {
        assert!(self.presence() & (1 << i) != 0, "slot {i} is empty");
        // SAFETY: the presence bit says slot `i` holds an initialized `E`.
        unsafe { &mut self.slots[i].elem }
    }

    /// Stores `e` in the free slot `i` with secondary hash `h2`.
    pub(super) fn put(&mut self, i: usize, h2: u8, e: E) {
        assert!(self.capacity_mask() & !self.presence() & (1 << i) != 0, "slot {i} not free");
        self.slots[i] = Slot { elem: ManuallyDrop::new(e) };
        self.meta |= (1 << (i + 1)) | (u64::from(h2) << (8 * (i + 1)));
    }

    /// Takes the element out of slot `i`, returning its secondary hash and itself.
    pub(super) fn take(&mut self, i: usize) -> (u8, E) {
        assert!(self.presence() & (1 << i) != 0, "slot {i} is empty");
        let h2 = self.secondary_hash(i);
        self.meta &= !((1 << (i + 1)) | (0xFF << (8 * (i + 1))));
        let slot = std::mem::replace(&mut self.slots[i], Slot::VACANT);
        // SAFETY: the presence bit said slot `i` held an initialized `E`; the bit is now clear,
        // so this is its only owner.
        (h2, ManuallyDrop::into_inner(unsafe { slot.elem }))
    }

    /// The child bucket, if chained.
    #[inline(always)]
    pub(super) fn child(&self) -> Option<&Bucket<E>> {
        if !self.is_chained() {
            return None;
        }
        // SAFETY: a chained bucket's slot 6 holds a pointer from `Box::into_raw` that only this
        // bucket owns; the returned borrow is tied to `&self`.
        Some(unsafe { &*self.slots[CHILD_SLOT].child })
    }

    /// The child bucket mutably, if chained.
    pub(super) fn child_mut(&mut self) -> Option<&mut Bucket<E>> {
        if !self.is_chained() {
            return None;
        }
        // SAFETY: as in `child`; `&mut self` makes the access unique.
        Some(unsafe { &mut *self.slots[CHILD_SLOT].child })
    }

    /// Chains `child` through slot 6, which must be free in an unchained bucket.
    pub(super) fn set_child(&mut self, child: Box<Bucket<E>>) {
        assert!(!self.is_chained() && self.presence() & (1 << CHILD_SLOT) == 0);
        self.slots[CHILD_SLOT] = Slot { child: Box::into_raw(child) };
        self.meta |= CHAINED_BIT;
    }

    /// Unchains and returns the child bucket. Panics if not chained.
    pub(super) fn take_child(&mut self) -> Box<Bucket<E>> {
        assert!(self.is_chained(), "bucket is not chained");
        self.meta &= !CHAINED_BIT;
        let slot = std::mem::replace(&mut self.slots[CHILD_SLOT], Slot::VACANT);
        // SAFETY: the chained bit said slot 6 held a pointer from `Box::into_raw` owned only by
        // this bucket; the bit is now clear, so ownership moves back into the box.
        unsafe { Box::from_raw(slot.child) }
    }

    /// Whether the secondary-hash bytes of empty slots are zero (an invariant).
    pub(super) fn vacant_hashes_are_zero(&self) -> bool {
        let mut present_bytes = 0u64;
        for i in 0..SLOTS {
            if self.presence() & (1 << i) != 0 {
                present_bytes |= 0xFF << (8 * (i + 1));
            }
        }
        self.meta & HASH_BYTES & !present_bytes == 0
    }
}

impl<E: Entry> Bucket<E> {
    /// Number of buckets in the chain starting here (1 if not chained).
    pub(super) fn chain_len(&self) -> usize {
        let mut len = 1;
        let mut b = self;
        while let Some(child) = b.child() {
            len += 1;
            b = child;
        }
        len
    }

    /// Elements in the whole chain starting here.
    pub(super) fn chain_count(&self) -> usize {
        let mut count = self.count();
        let mut b = self;
        while let Some(child) = b.child() {
            count += child.count();
            b = child;
        }
        count
    }

    /// The bucket `depth` links down the chain. Panics if the chain is shorter.
    pub(super) fn chain_at(&self, depth: usize) -> &Bucket<E> {
        let mut b = self;
        for _ in 0..depth {
            b = b.child().expect("chain shorter than depth");
        }
        b
    }

    /// The bucket `depth` links down the chain, mutably. Panics if the chain is shorter.
    pub(super) fn chain_at_mut(&mut self, depth: usize) -> &mut Bucket<E> {
        let mut b = self;
        for _ in 0..depth {
            b = b.child_mut().expect("chain shorter than depth");
        }
        b
    }

    /// Calls `f` on every element of the chain, in chain order.
    pub(super) fn for_each_in_chain<'a>(&'a self, mut f: impl FnMut(&'a E)) {
        let mut b = self;
        loop {
            let mut bits = b.presence();
            while bits != 0 {
                f(b.elem(bits.trailing_zeros() as usize));
                bits &= bits - 1;
            }
            match b.child() {
                Some(child) => b = child,
                None => return,
            }
        }
    }

    /// Appends `e` at the end of the chain (no duplicate check). Returns whether a child
    /// bucket was allocated.
    pub(super) fn push(&mut self, h2: u8, e: E) -> bool {
        self.push_at(h2, e).0
    }

    /// As [`Bucket::push`], also saying where the element went: (depth in the chain, slot).
    pub(super) fn push_at(&mut self, h2: u8, e: E) -> (bool, (usize, usize)) {
        let mut b = self;
        let mut depth = 0;
        while b.is_full() && b.is_chained() {
            b = b.child_mut().expect("chained");
            depth += 1;
        }
        if let Some(i) = b.free_slot() {
            b.put(i, h2, e);
            return (false, (depth, i));
        }
        // `b` is the full, unchained last bucket: move its slot 6 into a new child.
        let mut child = Box::new(Bucket::EMPTY);
        let (moved_h2, moved) = b.take(CHILD_SLOT);
        child.put(0, moved_h2, moved);
        child.put(1, h2, e);
        b.set_child(child);
        (true, (depth + 1, 1))
    }

    /// Takes every element out of the chain, handing each to `f`, and frees the children.
    /// Returns the number of child buckets freed. Leaves `self` empty.
    pub(super) fn drain_chain(&mut self, mut f: impl FnMut(u8, E)) -> usize {
        let mut freed = 0;
        take_all_in(self, &mut f);
        let mut next = self.is_chained().then(|| self.take_child());
        while let Some(mut child) = next {
            take_all_in(&mut child, &mut f);
            next = child.is_chained().then(|| child.take_child());
            freed += 1;
        }
        freed
    }

    /// After slot `hole_slot` of the bucket at `hole_depth` was emptied, restores the chain
    /// invariants: refills an inner hole from the last bucket, and folds a last bucket left
    /// with at most one element into its parent. Returns the number of child buckets freed.
    pub(super) fn repair_chain(&mut self, hole_depth: usize, hole_slot: usize) -> usize {
        let last_depth = self.chain_len() - 1;
        if hole_depth < last_depth {
            let last = self.chain_at_mut(last_depth);
            let j = 31 - last.presence().leading_zeros() as usize;
            let (h2, e) = last.take(j);
            self.chain_at_mut(hole_depth).put(hole_slot, h2, e);
        }
        if last_depth == 0 || self.chain_at(last_depth).count() > 1 {
            return 0;
        }
        let parent = self.chain_at_mut(last_depth - 1);
        let mut child = parent.take_child();
        if let Some(j) = (child.presence() != 0).then(|| child.presence().trailing_zeros()) {
            let (h2, e) = child.take(j as usize);
            parent.put(CHILD_SLOT, h2, e);
        }
        1
    }

    /// Takes one element out of the chain (from its last bucket), keeping the chain invariants.
    /// Returns the element and whether a child bucket was freed.
    pub(super) fn pop(&mut self) -> Option<(E, bool)> {
        let last_depth = self.chain_len() - 1;
        let last = self.chain_at_mut(last_depth);
        let bits = last.presence();
        if bits == 0 {
            return None;
        }
        let j = 31 - bits.leading_zeros() as usize;
        let (_, e) = last.take(j);
        Some((e, self.repair_chain(last_depth, j) > 0))
    }
}

/// Moves every element of one bucket (not its children) into `f`.
fn take_all_in<E>(b: &mut Bucket<E>, f: &mut impl FnMut(u8, E)) {
    let mut bits = b.presence();
    while bits != 0 {
        let (h2, e) = b.take(bits.trailing_zeros() as usize);
        f(h2, e);
        bits &= bits - 1;
    }
}

/// Drops every element of the chain starting at `head` and frees its children.
pub(super) fn drop_chain<E: Entry>(head: &mut Bucket<E>) -> usize {
    head.drain_chain(|_, e| drop(e))
}

/// A zeroed array of `n` buckets (all empty); no allocation for `n == 0`.
pub(super) fn alloc_buckets<E>(n: usize) -> Box<[Bucket<E>]> {
    if n == 0 {
        return Vec::new().into_boxed_slice();
    }
    let layout = std::alloc::Layout::array::<Bucket<E>>(n).expect("bucket array too large");
    // SAFETY: `layout` has a non-zero size (n > 0 and a bucket is 64 bytes).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<Bucket<E>>();
    if ptr.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    // SAFETY: `ptr` is a fresh allocation from the global allocator with the layout of
    // `[Bucket<E>; n]`, which is what `Box<[Bucket<E>]>` frees with. All-zero bytes are a valid
    // empty bucket: meta 0 (no element, not chained) and slots whose `vacant: usize` is 0.
    unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, n)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct K(Box<[u8; 1]>);
    impl Entry for K {
        fn key(&self) -> &[u8] {
            &self.0[..]
        }
    }

    #[test]
    fn matches_agrees_with_a_byte_loop() {
        let mut rng = crate::util::rng::Rng::new(0x1234_5678_9abc_def0);
        for _ in 0..20_000 {
            let state = rng.next_u64();
            let mut b: Bucket<K> = Bucket::EMPTY;
            // Random secondary hashes from a small alphabet, so bytes repeat and are often 0.
            for i in 0..SLOTS {
                if (state >> (i + 3)) & 1 == 1 {
                    b.put(i, ((state >> (8 * i + 11)) & 3) as u8, K(Box::new([i as u8])));
                }
            }
            for h2 in [0u8, 1, 2, 3, 0x80, 0xFF] {
                let naive = (0..SLOTS)
                    .filter(|&i| b.presence() & (1 << i) != 0 && b.secondary_hash(i) == h2)
                    .fold(0u32, |m, i| m | (1 << i));
                assert_eq!(b.matches(h2), naive, "meta {:#x} h2 {h2}", b.meta);
                assert_eq!(b.matches_swar(h2), naive, "meta {:#x} h2 {h2}", b.meta);
            }
            drop_chain(&mut b);
        }
    }

    #[test]
    fn push_chains_and_repair_folds_back() {
        let mut head: Bucket<K> = Bucket::EMPTY;
        for i in 0..20u64 {
            head.push(i as u8, K(Box::new([i as u8])));
        }
        // A chain of c buckets holds 6c + 1 elements: 20 take 4 buckets (6 + 6 + 6 + 2).
        assert_eq!(head.chain_len(), 4);
        assert_eq!(head.chain_count(), 20);
        while let Some((e, _)) = head.pop() {
            drop(e);
            let n = head.chain_count();
            assert!(head.chain_len() == 1 || n > 6 * (head.chain_len() - 1), "{n}");
        }
        assert!(head.is_empty());
    }
}
