//! One member of a large sorted set: a single allocation holding the score and the member,
//! owned by the set's hashtable and pointed to, without ownership, by its rank tree.
//!
//! # Layout
//!
//! ```text
//!  byte 0                 8                  8+k
//!       +-----------------+------------------+------------------------+
//!       | score (f64, LE) | member length    | member bytes           |
//!       |                 | (LEB128, k=1..10)|                        |
//!       +-----------------+------------------+------------------------+
//! ```
//!
//! A 16-byte member takes 8 + 1 + 16 = 25 bytes, the 32-byte jemalloc class. The score
//! comes first so that it is 8-byte aligned (the allocation's alignment).
//!
//! [`ZEntry`] owns the allocation (dropping it frees it); [`ZRef`] is a `Copy` handle to the
//! same bytes for the rank tree. A `ZRef` is only valid while its `ZEntry` lives: the sorted
//! set (`big`) removes a handle from the tree before it drops the entry, and every read
//! through a `ZRef` is `unsafe` with that contract.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

use crate::table::Entry;

const SCORE_BYTES: usize = 8;

/// An owned member with its score.
pub struct ZEntry {
    ptr: NonNull<u8>,
}

// SAFETY: a ZEntry owns its allocation exclusively (like a Box<[u8]>); nothing in it is
// tied to a thread.
unsafe impl Send for ZEntry {}
// SAFETY: shared access only reads.
unsafe impl Sync for ZEntry {}

const _: () = assert!(std::mem::size_of::<ZEntry>() == 8);

/// A non-owning handle to a [`ZEntry`]'s bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZRef {
    ptr: NonNull<u8>,
}

// SAFETY: a handle is only dereferenced under the owning set's borrow (see the module
// documentation), so it follows the set's Send/Sync, which are those of ZEntry.
unsafe impl Send for ZRef {}
// SAFETY: as above.
unsafe impl Sync for ZRef {}

fn varint_len(mut n: usize) -> usize {
    let mut k = 1;
    while n >= 0x80 {
        n >>= 7;
        k += 1;
    }
    k
}

fn layout(member_len: usize) -> Layout {
    let size = SCORE_BYTES + varint_len(member_len) + member_len;
    Layout::from_size_align(size, 8).expect("member length fits a layout")
}

/// Reads the member of the allocation at `ptr`.
///
/// # Safety
/// `ptr` must point to a live entry allocation; the slice must not outlive it.
unsafe fn member_at<'a>(ptr: NonNull<u8>) -> &'a [u8] {
    let p = ptr.as_ptr();
    let mut len = 0usize;
    let mut shift = 0;
    let mut at = SCORE_BYTES;
    loop {
        // SAFETY: the varint lies inside the allocation, which the caller keeps alive.
        let b = unsafe { *p.add(at) };
        len |= usize::from(b & 0x7f) << shift;
        at += 1;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    // SAFETY: the member's `len` bytes follow the varint inside the same allocation.
    unsafe { std::slice::from_raw_parts(p.add(at), len) }
}

/// # Safety
/// `ptr` must point to a live entry allocation.
unsafe fn score_at(ptr: NonNull<u8>) -> f64 {
    // SAFETY: the first 8 bytes of a live allocation, aligned to 8.
    unsafe { *ptr.as_ptr().cast::<f64>() }
}

impl ZEntry {
    pub fn new(member: &[u8], score: f64) -> ZEntry {
        let lay = layout(member.len());
        // SAFETY: the layout is non-zero sized (at least 9 bytes).
        let raw = unsafe { alloc(lay) };
        let Some(ptr) = NonNull::new(raw) else { handle_alloc_error(lay) };
        // SAFETY: all writes stay inside the `lay.size()` bytes just allocated; the score
        // slot is 8-byte aligned.
        unsafe {
            *raw.cast::<f64>() = score;
            let mut at = SCORE_BYTES;
            let mut n = member.len();
            loop {
                let more = n >= 0x80;
                *raw.add(at) = (n as u8 & 0x7f) | if more { 0x80 } else { 0 };
                at += 1;
                n >>= 7;
                if !more {
                    break;
                }
            }
            std::ptr::copy_nonoverlapping(member.as_ptr(), raw.add(at), member.len());
        }
        ZEntry { ptr }
    }

    pub fn member(&self) -> &[u8] {
        // SAFETY: self owns the allocation; the slice borrows self.
        unsafe { member_at(self.ptr) }
    }

    pub fn score(&self) -> f64 {
        // SAFETY: self owns the allocation.
        unsafe { score_at(self.ptr) }
    }

    pub fn handle(&self) -> ZRef {
        ZRef { ptr: self.ptr }
    }

    /// Bytes the allocator charges for this entry.
    pub fn alloc_bytes(&self) -> usize {
        crate::memory::size_class(layout(self.member().len()).size())
    }
}

impl Drop for ZEntry {
    fn drop(&mut self) {
        let lay = layout(self.member().len());
        // SAFETY: allocated in `new` with this same layout; self is never used again.
        unsafe { dealloc(self.ptr.as_ptr(), lay) };
    }
}

impl std::fmt::Debug for ZEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.member().escape_ascii(), self.score())
    }
}

impl Entry for ZEntry {
    fn key(&self) -> &[u8] {
        self.member()
    }

    fn prefetch_addr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }
}

impl ZRef {
    /// The member.
    ///
    /// # Safety
    /// The entry must be alive for `'a` (it is in the set's table and the set is borrowed).
    pub unsafe fn member<'a>(self) -> &'a [u8] {
        // SAFETY: per the contract.
        unsafe { member_at(self.ptr) }
    }

    /// The score.
    ///
    /// # Safety
    /// The entry must be alive.
    pub unsafe fn score(self) -> f64 {
        // SAFETY: per the contract.
        unsafe { score_at(self.ptr) }
    }

    /// Overwrites the score in place.
    ///
    /// # Safety
    /// The entry must be alive and no reference into it may be in use (the set is
    /// borrowed mutably).
    pub unsafe fn set_score(self, score: f64) {
        // SAFETY: per the contract; the slot is the aligned first 8 bytes.
        unsafe { *self.ptr.as_ptr().cast::<f64>() = score }
    }
}
