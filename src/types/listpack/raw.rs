//! The one owned allocation behind a thin pointer, shared by the listpack and the intset.
//!
//! A [`ThinBuf`] is a bare `NonNull<u8>` to exactly as many bytes as its owner's header says;
//! it stores no length and no capacity (that is the point: 8 bytes per value, and the
//! allocator's size class is the only slack). Because it does not know its own length, every
//! method takes it, and the owner is responsible for passing the length it last gave. This
//! file owns every `unsafe` block of both encodings; nothing here knows a format.

use std::alloc::{self, Layout};
use std::ptr::{self, NonNull};

/// An owned heap allocation of `len` bytes, `len` kept by the owner. Bytes only (alignment 1).
pub(crate) struct ThinBuf {
    ptr: NonNull<u8>,
}

// SAFETY: a ThinBuf uniquely owns its allocation (no sharing, no interior mutability): moving
// it to another thread moves the ownership, and `&ThinBuf` only ever gives out `&[u8]`.
unsafe impl Send for ThinBuf {}
// SAFETY: see above; shared references allow reads only.
unsafe impl Sync for ThinBuf {}

fn layout(len: usize) -> Layout {
    assert!(len > 0, "a thin buffer always holds at least a header");
    Layout::from_size_align(len, 1).expect("buffer length overflows isize")
}

impl ThinBuf {
    /// A new allocation holding a copy of `bytes` (which must not be empty).
    pub fn from_slice(bytes: &[u8]) -> ThinBuf {
        let layout = layout(bytes.len());
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc::alloc(layout) };
        let Some(ptr) = NonNull::new(raw) else { alloc::handle_alloc_error(layout) };
        // SAFETY: `ptr` is a fresh allocation of `bytes.len()` bytes, so it cannot overlap
        // `bytes`, and both are valid for that many bytes.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), ptr.as_ptr(), bytes.len()) };
        ThinBuf { ptr }
    }

    /// The bytes.
    ///
    /// # Safety
    /// `len` is at most the length this buffer was created or last spliced to.
    pub unsafe fn as_slice(&self, len: usize) -> &[u8] {
        // SAFETY: by the contract, `len` bytes (or more) are allocated and all are initialized
        // (`from_slice` copies every byte, `splice` writes every byte of its gap).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), len) }
    }

    /// The bytes, writable.
    ///
    /// # Safety
    /// As for [`ThinBuf::as_slice`].
    pub unsafe fn as_mut_slice(&mut self, len: usize) -> &mut [u8] {
        // SAFETY: as in `as_slice`; `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), len) }
    }

    /// Replace bytes `at..at + remove` of the buffer (now `len` bytes) by the concatenation of
    /// `parts`, moving the tail and reallocating to the new exact length, which it returns.
    /// Grows by realloc-then-move and shrinks by move-then-realloc, so the tail is never cut.
    ///
    /// # Safety
    /// `len` is the current length (as for [`ThinBuf::as_slice`]).
    pub unsafe fn splice(
        &mut self,
        len: usize,
        at: usize,
        remove: usize,
        parts: &[&[u8]],
    ) -> usize {
        assert!(at <= len && remove <= len - at, "splice range outside the buffer");
        let insert: usize = parts.iter().map(|p| p.len()).sum();
        let tail_from = at + remove;
        let tail_len = len - tail_from;
        let new_len = len - remove + insert;
        if insert > remove {
            // SAFETY: `len` is the current size by the contract and `new_len` is larger.
            unsafe { self.realloc(len, new_len) };
        }
        if insert != remove {
            // SAFETY: both ranges lie within the allocation, which is now at least
            // max(len, new_len) bytes: the source ends at `len`, the destination at
            // `new_len`. `ptr::copy` allows them to overlap.
            unsafe {
                let base = self.ptr.as_ptr();
                ptr::copy(base.add(tail_from), base.add(at + insert), tail_len);
            }
        }
        if insert < remove {
            // SAFETY: `len` is the current size and `new_len` is smaller (and non-zero,
            // asserted by `layout`).
            unsafe { self.realloc(len, new_len) };
        }
        let mut to = at;
        for part in parts {
            // SAFETY: the gap `at..at + insert` lies within the `new_len` bytes; `part` cannot
            // overlap it, because `&mut self` excludes any borrow of this buffer.
            unsafe {
                ptr::copy_nonoverlapping(part.as_ptr(), self.ptr.as_ptr().add(to), part.len())
            };
            to += part.len();
        }
        new_len
    }

    /// # Safety
    /// `old_len` is the current size of the allocation.
    unsafe fn realloc(&mut self, old_len: usize, new_len: usize) {
        let new_layout = layout(new_len);
        // SAFETY: `ptr` was allocated by the global allocator with `layout(old_len)` (by the
        // contract), and `new_len` is non-zero and fits a Layout (checked by `layout`).
        let raw = unsafe { alloc::realloc(self.ptr.as_ptr(), layout(old_len), new_len) };
        let Some(ptr) = NonNull::new(raw) else { alloc::handle_alloc_error(new_layout) };
        self.ptr = ptr;
    }

    /// Give the allocation back. The buffer must not be used afterwards (owners call this only
    /// from `Drop`).
    ///
    /// # Safety
    /// `len` is the current length, and the buffer is never used again.
    pub unsafe fn free(&mut self, len: usize) {
        // SAFETY: `ptr` came from the global allocator with `layout(len)` by the contract.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), layout(len)) };
    }
}
