//! Out-of-line string values: the growable buffer a key entry points to when its string is
//! too long to live inline (see `entry`). Owns the allocation; knows nothing of keys.
//!
//! # Layout
//!
//! ```text
//!   8-aligned, one allocation of HEADER_BYTES + cap bytes
//!   +-----------+-----------+---------------------------+- - - - - - - - - -+
//!   | len: u64  | cap: u64  | bytes[0..len]             | spare [len..cap]  |
//!   +-----------+-----------+---------------------------+- - - - - - - - - -+
//! ```
//!
//! # Why a capacity, and how it grows
//!
//! Editing a big string must cost what the edit changes, not what the value holds. Without
//! spare room every APPEND reallocates to the exact new size, and since a growing
//! allocation usually moves, building a value of n bytes from k-byte appends copies
//! O(n^2 / k) bytes. So growth is greedy, as Valkey's `sdsMakeRoomFor`: when an edit needs
//! `new_len` bytes beyond the capacity, the capacity becomes `2 * new_len` below
//! [`PREALLOC_LIMIT_BYTES`] (1 MiB) and `new_len + 1 MiB` above it, then is rounded up to the
//! allocator's size class (the rounding is free: the allocator hands out the class anyway).
//! Below 1 MiB that is O(log n) reallocations; above, one per MiB appended, each a `realloc`
//! that jemalloc usually satisfies by extending the mapping in place. Either way the bytes
//! copied per appended byte are bounded by a constant: amortised O(appended bytes).
//!
//! A value written whole (SET, RESTORE, a file load) gets no spare room (`cap == len`), as
//! Valkey's `sdsnewlen`: most values are never edited, and spare bytes on every big value
//! would cost memory for nothing. The spare room is real memory: the allocator wrapper counts
//! the whole allocation in `used_memory`, and [`HeapStr::alloc_bytes`] reports it to MEMORY
//! USAGE.
//!
//! Edits that fail (a length limit, a non-integer) are decided by the caller from the length
//! and a borrowed view before anything here is called, so they touch nothing.
//!
//! # Shared for replies, copied on write
//!
//! A GET of a big value does not copy it into the client's output buffer: the reply holds a
//! [`SharedStr`], a counted reference to this same allocation, and the socket is written
//! from it (Valkey 9's reply copy avoidance, `min-string-size-avoid-copy-reply`). Copying
//! 512 MiB into fresh reply memory costs the event loop most of a second in page faults and
//! `memcpy`, during which every other client waits; a reference costs two atomic operations.
//!
//! The count of owners lives in the top 16 bits of the capacity word, so that a string
//! nobody shares (almost all of them) pays no byte for it:
//!
//! ```text
//!   capacity word:  | extra owners: u16 | capacity: 48 bits |
//! ```
//!
//! `extra owners` is the number of owners beyond the first: 0 for the usual, unique string.
//! The key entry is one owner (a [`HeapStr`]); each reply in flight is another (a
//! [`SharedStr`]). Shares are only made by the main thread, from the entry; they are dropped
//! by whichever thread finishes the write (the main thread, or an I/O thread that wrote the
//! reply), or the lazyfree thread may drop the entry's own reference. So the word is only
//! ever changed with atomic operations, in the manner of `Arc`: a drop subtracts one owner
//! with `Release`, and the owner that finds no extra owner left before its subtraction frees
//! the allocation after an `Acquire` fence. When the count is saturated no share is made and
//! the caller copies instead.
//!
//! While a string is shared its bytes and length never change: every edit first makes the
//! entry's buffer unique ([`HeapStr::make_unique`]), copying it when a reply still holds it,
//! as Valkey unshares a string object whose reference count is above one before SETRANGE or
//! APPEND. The copy is what the edit would cost with no sharing at all plus one copy of the
//! value, and only when a reply of that very value is still being written. The capacity bits
//! and the length are written only while the writer is the sole owner, when no other thread
//! can hold a reference to them.

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicU64, Ordering};

/// Length and capacity words before the bytes.
pub const HEADER_BYTES: usize = 16;

/// Below this length growth doubles; above, it adds this much (Valkey's `SDS_MAX_PREALLOC`).
pub const PREALLOC_LIMIT_BYTES: usize = 1 << 20;

/// Bits of the capacity word that hold the capacity; the rest count extra owners.
const CAP_BITS: u32 = 48;
const CAP_MASK: u64 = (1 << CAP_BITS) - 1;
/// One extra owner, in the capacity word.
const ONE_OWNER: u64 = 1 << CAP_BITS;
/// The most extra owners the word can count.
const MAX_EXTRA_OWNERS: u64 = u16::MAX as u64;

fn layout(cap: usize) -> Layout {
    Layout::from_size_align(HEADER_BYTES + cap, 8).expect("string size fits a layout")
}

/// The capacity greedy growth picks for a string about to hold `new_len` bytes, before
/// rounding to the size class.
pub fn greedy_capacity(new_len: usize) -> usize {
    if new_len < PREALLOC_LIMIT_BYTES {
        new_len.saturating_mul(2)
    } else {
        new_len.saturating_add(PREALLOC_LIMIT_BYTES)
    }
}

/// The capacity that fills the allocator's size class for at least `cap` bytes.
fn class_capacity(cap: usize) -> usize {
    crate::memory::size_class(HEADER_BYTES + cap) - HEADER_BYTES
}

/// An owned out-of-line string with spare capacity.
#[derive(Debug)]
pub struct HeapStr {
    ptr: NonNull<u8>,
}

// SAFETY: a HeapStr uniquely owns its allocation.
unsafe impl Send for HeapStr {}
// SAFETY: shared access only reads.
unsafe impl Sync for HeapStr {}

impl HeapStr {
    /// An empty string with room for exactly `cap` bytes.
    fn with_capacity(cap: usize) -> HeapStr {
        let layout = layout(cap);
        // SAFETY: the layout is at least HEADER_BYTES long.
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = NonNull::new(raw) else { std::alloc::handle_alloc_error(layout) };
        let mut s = HeapStr { ptr };
        s.set_cap(cap);
        s.set_len(0);
        s
    }

    /// A copy of `b` with no spare room (a value written whole).
    pub fn from_slice(b: &[u8]) -> HeapStr {
        let mut s = HeapStr::with_capacity(b.len());
        s.push_within(b);
        s
    }

    /// `offset` zero bytes then `bytes`, with no spare room (SETRANGE creating a key).
    pub fn from_range(offset: usize, bytes: &[u8]) -> HeapStr {
        let end = offset + bytes.len();
        let mut s = HeapStr::with_capacity(end);
        s.set_range(offset, bytes);
        s
    }

    /// A copy of `head` with greedy room for `len` bytes: a value that an edit is moving out
    /// of the entry (an inline string growing past the inline limit to `len` bytes).
    pub fn grown(head: &[u8], len: usize) -> HeapStr {
        let mut s = HeapStr::with_capacity(class_capacity(greedy_capacity(len.max(head.len()))));
        s.push_within(head);
        s
    }

    pub fn len(&self) -> usize {
        len_at(self.ptr)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn set_len(&mut self, len: usize) {
        debug_assert!(len <= self.capacity());
        debug_assert!(self.is_unique());
        // SAFETY: the length word lies at offset 0 of the 8-aligned allocation; this is its
        // only owner (no share can read it meanwhile).
        unsafe { (self.ptr.as_ptr() as *mut u64).write(len as u64) }
    }

    /// Bytes the buffer can hold without reallocating.
    pub fn capacity(&self) -> usize {
        (counts(self.ptr).load(Ordering::Relaxed) & CAP_MASK) as usize
    }

    /// Sets the capacity of a string with a single owner.
    fn set_cap(&mut self, cap: usize) {
        assert!(cap as u64 <= CAP_MASK, "string capacity beyond 2^48 bytes");
        counts(self.ptr).store(cap as u64, Ordering::Relaxed);
    }

    /// Whether this is the only owner of the allocation (no reply shares it).
    fn is_unique(&self) -> bool {
        counts(self.ptr).load(Ordering::Acquire) >> CAP_BITS == 0
    }

    /// A counted reference to these bytes for a reply, or None when the count is saturated
    /// (the caller then copies). The bytes stay unchanged while it lives: edits copy first.
    pub fn share(&self) -> Option<SharedStr> {
        let word = counts(self.ptr);
        // Only the main thread, through the entry, makes shares; other threads only drop
        // them, so the count cannot rise between this check and the add.
        if word.load(Ordering::Relaxed) >> CAP_BITS >= MAX_EXTRA_OWNERS {
            return None;
        }
        word.fetch_add(ONE_OWNER, Ordering::Relaxed);
        Some(SharedStr { ptr: self.ptr })
    }

    /// Before an edit: when a reply still shares the buffer, give this owner its own copy
    /// (same length and capacity) and let the shares keep the old one.
    fn make_unique(&mut self) {
        if self.is_unique() {
            return;
        }
        let mut own = HeapStr::with_capacity(self.capacity());
        own.push_within(self.as_slice());
        let old = std::mem::replace(self, own);
        // Gives up this owner's part of the old buffer; frees it if the last share went away
        // meanwhile.
        drop(old);
    }

    fn data(&self) -> *mut u8 {
        // SAFETY: the bytes start right after the header, inside the allocation.
        unsafe { self.ptr.as_ptr().add(HEADER_BYTES) }
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: bytes [0, len) are initialised and inside the allocation; the borrow of
        // `self` keeps them alive and unchanged.
        unsafe { std::slice::from_raw_parts(self.data(), self.len()) }
    }

    /// Bytes this string occupies in the allocator, spare room included (MEMORY USAGE).
    pub fn alloc_bytes(&self) -> usize {
        crate::memory::size_class(HEADER_BYTES + self.capacity())
    }

    /// Make room for `new_len` bytes: nothing when it fits, else greedy growth (a `realloc`,
    /// which keeps the bytes). Returns whether it reallocated.
    fn reserve_total(&mut self, new_len: usize) -> bool {
        let cap = self.capacity();
        if new_len <= cap {
            return false;
        }
        let new_cap = class_capacity(greedy_capacity(new_len));
        let new_layout = layout(new_cap);
        // SAFETY: `ptr` was allocated with `layout(cap)` by the global allocator; the new size
        // is non-zero and fits a layout (`layout` checked it).
        let raw = unsafe { std::alloc::realloc(self.ptr.as_ptr(), layout(cap), new_layout.size()) };
        let Some(ptr) = NonNull::new(raw) else { std::alloc::handle_alloc_error(new_layout) };
        self.ptr = ptr;
        self.set_cap(new_cap);
        true
    }

    /// Copy `b` after the current bytes; the capacity must already allow it.
    fn push_within(&mut self, b: &[u8]) {
        let len = self.len();
        assert!(len + b.len() <= self.capacity(), "push beyond the capacity");
        // SAFETY: [len, len + b.len()) lies inside the capacity (asserted) and `b` cannot
        // alias this uniquely owned buffer.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), self.data().add(len), b.len()) };
        self.set_len(len + b.len());
    }

    /// APPEND: amortised O(`tail.len()`). Returns the new length.
    pub fn append(&mut self, tail: &[u8]) -> usize {
        self.make_unique();
        self.reserve_total(self.len() + tail.len());
        self.push_within(tail);
        self.len()
    }

    /// SETRANGE: overwrite from `offset` with `bytes`, zero-filling any gap past the end.
    /// O(`bytes.len()`) (plus the gap) when the result fits the capacity; a string that grows
    /// beyond it reallocates greedily. Returns the new length.
    pub fn set_range(&mut self, offset: usize, bytes: &[u8]) -> usize {
        self.make_unique();
        let len = self.len();
        let end = offset + bytes.len();
        self.reserve_total(end);
        if offset > len {
            // SAFETY: [len, offset) lies inside the capacity (end <= capacity after reserve).
            unsafe { std::ptr::write_bytes(self.data().add(len), 0, offset - len) };
        }
        // SAFETY: [offset, end) lies inside the capacity; `bytes` cannot alias the buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.data().add(offset), bytes.len())
        };
        if end > len {
            self.set_len(end);
        }
        self.len()
    }

    /// Give the allocation up to a raw pointer (stored in a key entry).
    pub fn into_raw(self) -> NonNull<u8> {
        let p = self.ptr;
        std::mem::forget(self);
        p
    }

    /// Take back ownership of a pointer from [`HeapStr::into_raw`].
    ///
    /// # Safety
    /// `p` must come from `into_raw` and not be owned by anything else any more.
    pub unsafe fn from_raw(p: NonNull<u8>) -> HeapStr {
        HeapStr { ptr: p }
    }

    /// The bytes of the string at `p`, borrowed for `'a`.
    ///
    /// # Safety
    /// `p` must come from `into_raw`, and its owner must keep it alive and unchanged for `'a`.
    pub unsafe fn slice_at<'a>(p: NonNull<u8>) -> &'a [u8] {
        let s = std::mem::ManuallyDrop::new(HeapStr { ptr: p });
        // SAFETY: as in `as_slice`; the caller ties 'a to the owner's lifetime.
        unsafe { std::slice::from_raw_parts(s.data(), s.len()) }
    }
}

/// The length word of the string at `p`.
fn len_at(p: NonNull<u8>) -> usize {
    // SAFETY: the length word lies at offset 0 of the 8-aligned allocation, which the caller's
    // ownership keeps alive; it is only written by a sole owner, so no one writes it while a
    // second owner can read it.
    unsafe { (p.as_ptr() as *const u64).read() as usize }
}

/// The capacity-and-owners word of the string at `p`.
fn counts<'a>(p: NonNull<u8>) -> &'a AtomicU64 {
    // SAFETY: the word lies at offset 8 of the 8-aligned allocation, which outlives every
    // owner's use of it; it is only ever accessed atomically once a string exists.
    unsafe { AtomicU64::from_ptr(p.as_ptr().add(8) as *mut u64) }
}

/// Give up one owner's part of the allocation at `p`, freeing it when that was the last.
fn release(p: NonNull<u8>) {
    let word = counts(p);
    // A sole owner frees at once: no one else can hold or make a reference.
    let seen = word.load(Ordering::Acquire);
    if seen >> CAP_BITS == 0 {
        dealloc(p, seen);
        return;
    }
    let before = word.fetch_sub(ONE_OWNER, Ordering::Release);
    if before >> CAP_BITS == 0 {
        // The last owner: every other owner's use of the bytes happened before its own
        // Release subtraction, which this fence orders before the free.
        fence(Ordering::Acquire);
        dealloc(p, before);
    }
}

fn dealloc(p: NonNull<u8>, word: u64) {
    // SAFETY: the allocation was made with `layout(capacity)` (alloc or realloc), and the
    // caller is its last owner.
    unsafe { std::alloc::dealloc(p.as_ptr(), layout((word & CAP_MASK) as usize)) };
}

impl Drop for HeapStr {
    fn drop(&mut self) {
        release(self.ptr);
    }
}

/// A counted reference to the bytes of a [`HeapStr`], held by a reply until it is written
/// (see "Shared for replies" above). The bytes never change while it lives.
#[derive(Debug)]
pub struct SharedStr {
    ptr: NonNull<u8>,
}

// SAFETY: a share only reads bytes that no one writes while it lives, and releases its part
// with atomic operations, from any thread.
unsafe impl Send for SharedStr {}
// SAFETY: as above; `&SharedStr` only reads.
unsafe impl Sync for SharedStr {}

impl AsRef<[u8]> for SharedStr {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: bytes [0, len) are initialised and stay unchanged and alive while this
        // share lives (edits copy first; the last owner frees).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(HEADER_BYTES), len_at(self.ptr)) }
    }
}

impl Drop for SharedStr {
    fn drop(&mut self) {
        release(self.ptr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_whole_has_no_spare_room() {
        let s = HeapStr::from_slice(&[7u8; 1000]);
        assert_eq!((s.len(), s.capacity()), (1000, 1000));
        assert_eq!(s.as_slice(), &[7u8; 1000][..]);
        let empty = HeapStr::from_slice(b"");
        assert!(empty.is_empty());
        let r = HeapStr::from_range(300, b"ab");
        assert_eq!((r.len(), r.capacity()), (302, 302));
        assert_eq!(&r.as_slice()[298..], b"\0\0ab");
    }

    #[test]
    fn appends_reallocate_a_logarithmic_number_of_times() {
        let mut s = HeapStr::from_slice(b"");
        let mut expected = Vec::new();
        let mut reallocs = 0;
        // 2,048 appends of 4 KiB: 8 MiB, the issue's quadratic case.
        for i in 0..2048u32 {
            let chunk = [(i % 251) as u8; 4096];
            let before = s.capacity();
            s.append(&chunk);
            expected.extend_from_slice(&chunk);
            reallocs += (s.capacity() != before) as u32;
        }
        assert_eq!(s.as_slice(), &expected[..]);
        // Doubling to 1 MiB (about 9 steps from 4 KiB), then +1 MiB per step to 8 MiB (about
        // 7): bounded by log2 below the limit plus one per MiB above it.
        assert!(reallocs <= 9 + 1 + 8, "{reallocs} reallocations");
        assert!(s.capacity() >= s.len() && s.capacity() <= s.len() + PREALLOC_LIMIT_BYTES * 2);
    }

    #[test]
    fn growth_follows_valkeys_greedy_rule() {
        assert_eq!(greedy_capacity(1000), 2000);
        assert_eq!(greedy_capacity(PREALLOC_LIMIT_BYTES - 1), 2 * PREALLOC_LIMIT_BYTES - 2);
        assert_eq!(greedy_capacity(PREALLOC_LIMIT_BYTES), 2 * PREALLOC_LIMIT_BYTES);
        assert_eq!(greedy_capacity(5 * PREALLOC_LIMIT_BYTES), 6 * PREALLOC_LIMIT_BYTES);
        let g = HeapStr::grown(&[1u8; 300], 400);
        assert_eq!(g.as_slice(), &[1u8; 300][..]);
        assert!(g.capacity() >= 800);
        assert_eq!(g.alloc_bytes(), crate::memory::size_class(HEADER_BYTES + g.capacity()));
    }

    #[test]
    fn set_range_writes_in_place_within_the_capacity() {
        let mut s = HeapStr::from_slice(&[b'a'; 4096]);
        let p = s.ptr;
        assert_eq!(s.set_range(100, b"xyz"), 4096);
        assert_eq!(s.ptr, p, "no reallocation for a range inside the string");
        assert_eq!(&s.as_slice()[99..104], b"axyza");
        // Past the end: zero-filled gap, greedy growth, then appends fit without moving.
        assert_eq!(s.set_range(5000, b"\xff"), 5001);
        assert_eq!(&s.as_slice()[4096..4100], &[0u8; 4]);
        assert_eq!(s.as_slice()[5000], 0xff);
        let (p, cap) = (s.ptr, s.capacity());
        assert!(cap >= 10_002);
        assert_eq!(s.set_range(5001, b"\x01\x02"), 5003);
        assert_eq!(s.append(b"tail"), 5007);
        assert_eq!((s.ptr, s.capacity()), (p, cap));
        assert_eq!(&s.as_slice()[5000..], b"\xff\x01\x02tail");
    }

    #[test]
    fn a_shared_string_is_copied_before_an_edit_and_the_share_keeps_the_old_bytes() {
        let mut s = HeapStr::from_slice(&[b'a'; 5000]);
        let before = s.ptr;
        let share = s.share().expect("room in the count");
        assert!(!s.is_unique());
        assert_eq!(share.as_ref(), s.as_slice());
        assert_eq!(s.set_range(0, b"bb"), 5000);
        assert_ne!(s.ptr, before, "the edit copied the shared buffer");
        assert!(s.is_unique());
        assert_eq!(&s.as_slice()[..3], b"bba");
        assert_eq!(share.as_ref(), &[b'a'; 5000][..], "the reply still sees the old value");
        let again = s.share().expect("room");
        drop(s);
        assert_eq!(again.as_ref()[..2], *b"bb", "a share outlives the entry's owner");
        drop(again);
        drop(share);
    }

    #[test]
    fn an_unshared_string_is_edited_where_it_lies_once_its_shares_are_gone() {
        let mut s = HeapStr::from_slice(&[1u8; 4096]);
        let p = s.ptr;
        drop(s.share().expect("room"));
        assert!(s.is_unique());
        s.set_range(10, b"x");
        assert_eq!(s.ptr, p);
        assert_eq!(s.capacity(), 4096, "the count bits are not part of the capacity");
    }

    #[test]
    fn shares_dropped_on_other_threads_free_once() {
        let s = HeapStr::from_slice(&[7u8; 1 << 16]);
        let shares: Vec<SharedStr> = (0..64).map(|_| s.share().expect("room")).collect();
        let handles: Vec<_> = shares
            .into_iter()
            .map(|sh| {
                std::thread::spawn(move || {
                    assert!(sh.as_ref().iter().all(|&b| b == 7));
                    drop(sh);
                })
            })
            .collect();
        drop(s);
        for h in handles {
            h.join().expect("reader thread");
        }
    }

    #[test]
    fn a_saturated_count_refuses_to_share() {
        let s = HeapStr::from_slice(b"abc");
        counts(s.ptr).fetch_add(MAX_EXTRA_OWNERS * ONE_OWNER, Ordering::Relaxed);
        assert!(s.share().is_none());
        assert_eq!(s.capacity(), 3);
        counts(s.ptr).fetch_sub(MAX_EXTRA_OWNERS * ONE_OWNER, Ordering::Relaxed);
        assert!(s.share().is_some());
    }

    #[test]
    fn raw_round_trip() {
        let s = HeapStr::from_slice(b"abc");
        let p = s.into_raw();
        // SAFETY: `p` came from into_raw and is owned by nothing else.
        assert_eq!(unsafe { HeapStr::slice_at(p) }, b"abc");
        // SAFETY: as above; ownership comes back here and is dropped.
        drop(unsafe { HeapStr::from_raw(p) });
    }
}
