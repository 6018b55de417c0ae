//! Borrowing iteration with a prefetch pipeline, and draining (module essay: "Iteration,
//! prefetching and batched lookups").
//!
//! `Iter` borrows the table, so the table cannot change while it runs. `Drained` owns the
//! elements taken out of a table; it is `Send` when `E` is, so a large table can be freed on a
//! background thread (the way Valkey's lazyfree does).

use std::iter::FusedIterator;

use super::bucket::Bucket;
use super::prefetch::prefetch_read;
use super::{Entry, Table};

/// How many head buckets ahead of the one being yielded the iterator prefetches bucket lines.
const BUCKET_LINES_AHEAD: usize = 3;
/// ... prefetches the entries (their bucket line arrived one step earlier).
const ENTRIES_AHEAD: usize = 2;
/// ... calls the value hook (the entries arrived one step earlier).
const HOOK_AHEAD: usize = 1;

/// An iterator over `&E` in bucket order. Created by [`Table::iter`] and
/// [`Table::iter_prefetch_values`].
pub struct Iter<'a, E: Entry, H: FnMut(&E) = fn(&E)> {
    table: &'a Table<E>,
    /// Live head buckets (positions `0..heads`).
    heads: usize,
    /// The next head position to enter.
    next_pos: usize,
    /// The bucket (head or child) being yielded from, and its slots not yet yielded.
    bucket: Option<&'a Bucket<E>>,
    bits: u32,
    remaining: usize,
    hook: Option<H>,
    /// Whether the pipeline prefetches at all ([`Table::iter_unprefetched`] turns it off).
    prefetch: bool,
}

impl<E: Entry> Table<E> {
    /// Iterates over all elements. Prefetches bucket lines and entries ahead.
    pub fn iter(&self) -> Iter<'_, E> {
        Iter::new(self, None, true)
    }

    /// Iterates over all elements without prefetching anything: the baseline the prefetching
    /// iterators are measured against (`benches/rdb_save.rs`).
    pub fn iter_unprefetched(&self) -> Iter<'_, E> {
        Iter::new(self, None, false)
    }

    /// Like [`Table::iter`], and also calls `hook` on each element about one head bucket before
    /// it is yielded, so the caller can prefetch the element's out-of-line data (a value's
    /// allocation). A hint only: elements in child buckets are not passed to the hook.
    pub fn iter_prefetch_values<H: FnMut(&E)>(&self, hook: H) -> Iter<'_, E, H> {
        Iter::new(self, Some(hook), true)
    }

    /// Takes every element out, leaving the table empty and unallocated, in O(1). Dropping the
    /// result drops the elements; iterating it yields them by value.
    pub fn take_all(&mut self) -> Drained<E> {
        Drained { table: std::mem::take(self), pos: 0 }
    }
}

impl<'a, E: Entry, H: FnMut(&E)> Iter<'a, E, H> {
    fn new(table: &'a Table<E>, hook: Option<H>, prefetch: bool) -> Self {
        let mut iter = Iter {
            table,
            heads: table.live_heads(),
            next_pos: 0,
            bucket: None,
            bits: 0,
            remaining: table.len(),
            hook,
            prefetch,
        };
        if iter.remaining > 0 && prefetch {
            // Prime the pipeline for head 0; `enter(0)` does the rest.
            for pos in 0..BUCKET_LINES_AHEAD.min(iter.heads) {
                prefetch_read(table.head_at(pos));
            }
            for pos in 0..ENTRIES_AHEAD.min(iter.heads) {
                prefetch_entries(table.head_at(pos));
            }
            if let Some(hook) = iter.hook.as_mut() {
                for pos in 0..HOOK_AHEAD.min(iter.heads) {
                    call_hook(table.head_at(pos), hook);
                }
            }
        }
        iter
    }

    /// Returns head `pos` after advancing each pipeline stage by one head.
    fn enter(&mut self, pos: usize) -> &'a Bucket<E> {
        let table = self.table;
        if !self.prefetch {
            return table.head_at(pos);
        }
        if pos + BUCKET_LINES_AHEAD < self.heads {
            prefetch_read(table.head_at(pos + BUCKET_LINES_AHEAD));
        }
        if pos + ENTRIES_AHEAD < self.heads {
            prefetch_entries(table.head_at(pos + ENTRIES_AHEAD));
        }
        if let Some(hook) = self.hook.as_mut() {
            if pos + HOOK_AHEAD < self.heads {
                call_hook(table.head_at(pos + HOOK_AHEAD), hook);
            }
        }
        table.head_at(pos)
    }
}

/// Prefetches the entries of one bucket (not its children).
fn prefetch_entries<E: Entry>(b: &Bucket<E>) {
    let mut bits = b.presence();
    while bits != 0 {
        prefetch_read(b.elem(bits.trailing_zeros() as usize).prefetch_addr());
        bits &= bits - 1;
    }
}

fn call_hook<E: Entry>(b: &Bucket<E>, hook: &mut impl FnMut(&E)) {
    let mut bits = b.presence();
    while bits != 0 {
        hook(b.elem(bits.trailing_zeros() as usize));
        bits &= bits - 1;
    }
}

impl<'a, E: Entry, H: FnMut(&E)> Iterator for Iter<'a, E, H> {
    type Item = &'a E;

    fn next(&mut self) -> Option<&'a E> {
        loop {
            if self.remaining == 0 {
                return None;
            }
            if let Some(b) = self.bucket {
                if self.bits != 0 {
                    let slot = self.bits.trailing_zeros() as usize;
                    self.bits &= self.bits - 1;
                    self.remaining -= 1;
                    return Some(b.elem(slot));
                }
                if let Some(child) = b.child() {
                    self.bucket = Some(child);
                    self.bits = child.presence();
                    continue;
                }
            }
            // Elements remain, so some head at or after `next_pos` holds one.
            let head = self.enter(self.next_pos);
            self.next_pos += 1;
            self.bucket = Some(head);
            self.bits = head.presence();
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<E: Entry, H: FnMut(&E)> ExactSizeIterator for Iter<'_, E, H> {}
impl<E: Entry, H: FnMut(&E)> FusedIterator for Iter<'_, E, H> {}

impl<'a, E: Entry> IntoIterator for &'a Table<E> {
    type Item = &'a E;
    type IntoIter = Iter<'a, E>;

    fn into_iter(self) -> Iter<'a, E> {
        self.iter()
    }
}

/// Elements taken out of a table by [`Table::take_all`]. Yields them by value; dropping it drops
/// the rest and frees the buckets. `Send` when `E: Send`.
pub struct Drained<E: Entry> {
    /// The former table; emptied head by head, never resized. Its filter words are left as they
    /// were (nothing looks anything up in it again).
    table: Table<E>,
    /// The head position being emptied.
    pos: usize,
}

impl<E: Entry> Iterator for Drained<E> {
    type Item = E;

    fn next(&mut self) -> Option<E> {
        let table = &mut self.table;
        while !table.is_empty() {
            let live0 = table.live_range(0);
            let (t, idx) = match self.pos.checked_sub(live0.len()) {
                None => (0, live0.start + self.pos),
                Some(idx) => (1, idx),
            };
            if let Some((e, freed_child)) = table.tables[t][idx].pop() {
                table.used[t] -= 1;
                table.child_buckets -= usize::from(freed_child);
                return Some(e);
            }
            self.pos += 1;
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.table.len(), Some(self.table.len()))
    }
}

impl<E: Entry> ExactSizeIterator for Drained<E> {}
impl<E: Entry> FusedIterator for Drained<E> {}

impl<E: Entry> IntoIterator for Table<E> {
    type Item = E;
    type IntoIter = Drained<E>;

    fn into_iter(mut self) -> Drained<E> {
        self.take_all()
    }
}
