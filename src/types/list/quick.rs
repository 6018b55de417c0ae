//! The quicklist encoding: a deque of listpack nodes (design in the module documentation of
//! `list`). This file owns the node bookkeeping (element count, bytes and allocator bytes,
//! kept exact on every edit through [`QuickList::edit`], [`QuickList::insert_node`] and
//! [`QuickList::remove_node`]), node split and merge, and the edits that span nodes. It never
//! decides the list's encoding.
//!
//! Invariants (checked by [`QuickList::check_invariants`]):
//! - no node is empty;
//! - `len`, `body_bytes` and `alloc_bytes` are the sums over the nodes;
//! - under a fixed limit, a node of two or more elements is within it.

use std::collections::VecDeque;

use super::{remove_in_node, End, Needle, NodeLimit, Place, LP_EMPTY_BYTES, LP_HEADER_BYTES};
use crate::types::listpack::{Listpack, Pos};

#[derive(Clone, Debug, Default)]
pub(super) struct QuickList {
    nodes: VecDeque<Listpack>,
    /// Elements in all nodes.
    len: usize,
    /// Sum over the nodes of their bytes less the header and terminator: the size of the
    /// listpack the whole list would make is `body_bytes + LP_EMPTY_BYTES`.
    body_bytes: usize,
    /// Sum over the nodes of the allocator size class of their listpack.
    alloc_bytes: usize,
}

/// A listpack holding exactly the entry bytes `body` (whole entries cut from valid
/// listpacks). The count is found while validating.
fn listpack_from_body(body: &[u8]) -> Listpack {
    let total = body.len() + LP_EMPTY_BYTES;
    let total32 = u32::try_from(total).expect("a list node fits u32 bytes");
    let mut b = Vec::with_capacity(total);
    b.extend_from_slice(&total32.to_le_bytes());
    // 65535: "count unknown", replaced by the real count when validated.
    b.extend_from_slice(&u16::MAX.to_le_bytes());
    b.extend_from_slice(body);
    b.push(0xFF);
    Listpack::from_bytes(&b).expect("entries cut from valid listpacks")
}

/// The entry bytes of a listpack (without header and terminator).
fn body(lp: &Listpack) -> &[u8] {
    let b = lp.as_bytes();
    &b[LP_HEADER_BYTES..b.len() - 1]
}

fn single(v: &[u8]) -> Listpack {
    let mut lp = Listpack::new();
    lp.push_back(v);
    lp
}

impl QuickList {
    /// The nodes, head to tail.
    pub fn nodes(&self) -> impl Iterator<Item = &Listpack> {
        self.nodes.iter()
    }

    /// A quicklist of the elements of `lp`: one node, `lp` itself, when it is within the
    /// limit (it can be a little over: the growing check counts raw element bytes, not their
    /// encoding), else cut into nodes filled up to the limit.
    pub fn from_listpack(lp: Listpack, limit: NodeLimit) -> QuickList {
        let mut q = QuickList::default();
        if lp.is_empty() {
            return q;
        }
        if !limit.exceeds(lp.total_bytes(), lp.len()) {
            q.insert_node(0, lp);
            return q;
        }
        let all = body(&lp);
        let (mut from, mut bytes, mut count) = (0, LP_EMPTY_BYTES, 0);
        let mut at = lp.first();
        while let Some(p) = at {
            let size = lp.entry_bytes(p);
            if count > 0 && limit.exceeds(bytes + size, count + 1) {
                let cut = p.offset() - LP_HEADER_BYTES;
                q.insert_node(q.nodes.len(), listpack_from_body(&all[from..cut]));
                (from, bytes, count) = (cut, LP_EMPTY_BYTES, 0);
            }
            bytes += size;
            count += 1;
            at = lp.next(p);
        }
        q.insert_node(q.nodes.len(), listpack_from_body(&all[from..]));
        q
    }

    /// All elements in one listpack.
    pub fn into_listpack(mut self) -> Listpack {
        if self.nodes.len() == 1 {
            return self.nodes.pop_front().expect("one node");
        }
        let mut b = Vec::with_capacity(self.body_bytes);
        for lp in &self.nodes {
            b.extend_from_slice(body(lp));
        }
        listpack_from_body(&b)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    pub fn node(&self, i: usize) -> &Listpack {
        &self.nodes[i]
    }

    pub fn body_bytes(&self) -> usize {
        self.body_bytes
    }

    /// The nodes and the deque's buffer.
    pub fn alloc_bytes(&self) -> usize {
        let slots = self.nodes.capacity() * std::mem::size_of::<Listpack>();
        crate::memory::size_class(slots) + self.alloc_bytes
    }

    // ----- accounting --------------------------------------------------------------------

    fn account_add(&mut self, lp: &Listpack) {
        self.len += lp.len();
        self.body_bytes += lp.total_bytes() - LP_EMPTY_BYTES;
        self.alloc_bytes += lp.alloc_bytes();
    }

    fn account_sub(&mut self, lp: &Listpack) {
        self.len -= lp.len();
        self.body_bytes -= lp.total_bytes() - LP_EMPTY_BYTES;
        self.alloc_bytes -= lp.alloc_bytes();
    }

    /// Runs `f` on node `i`, keeping the sums exact. The node may be left empty: the caller
    /// removes it.
    fn edit<R>(&mut self, i: usize, f: impl FnOnce(&mut Listpack) -> R) -> R {
        let mut lp = std::mem::take(&mut self.nodes[i]);
        self.account_sub(&lp);
        let r = f(&mut lp);
        self.account_add(&lp);
        self.nodes[i] = lp;
        r
    }

    fn insert_node(&mut self, i: usize, lp: Listpack) {
        debug_assert!(!lp.is_empty());
        self.account_add(&lp);
        self.nodes.insert(i, lp);
    }

    fn remove_node(&mut self, i: usize) -> Listpack {
        let lp = self.nodes.remove(i).expect("node index in range");
        self.account_sub(&lp);
        lp
    }

    /// Removes node `i` if it is empty; true if it did.
    fn drop_if_empty(&mut self, i: usize) -> bool {
        let empty = self.nodes[i].is_empty();
        if empty {
            self.remove_node(i);
        }
        empty
    }

    // ----- navigation --------------------------------------------------------------------

    /// The node holding element `index` (< len) and the element's offset in it, walking the
    /// node counts from the nearer end.
    pub fn locate(&self, index: usize) -> (usize, usize) {
        assert!(index < self.len, "index {index} out of a list of {}", self.len);
        if index < self.len / 2 {
            let mut rest = index;
            for (i, lp) in self.nodes.iter().enumerate() {
                let n = lp.len();
                if rest < n {
                    return (i, rest);
                }
                rest -= n;
            }
        } else {
            let mut rest = self.len - 1 - index;
            for (i, lp) in self.nodes.iter().enumerate().rev() {
                let n = lp.len();
                if rest < n {
                    return (i, n - 1 - rest);
                }
                rest -= n;
            }
        }
        unreachable!("node counts do not add up to the list length")
    }

    // ----- node split and merge ----------------------------------------------------------

    /// Splits node `i` before the entry at `at` (which must not be its first): node `i` keeps
    /// the entries before, a new node `i + 1` gets the rest.
    fn split(&mut self, i: usize, at: Pos) {
        let lp = self.remove_node(i);
        let cut = at.offset() - LP_HEADER_BYTES;
        let (left, right) = body(&lp).split_at(cut);
        assert!(!left.is_empty() && !right.is_empty(), "split at a node's edge");
        let (left, right) = (listpack_from_body(left), listpack_from_body(right));
        self.insert_node(i, left);
        self.insert_node(i + 1, right);
    }

    /// Whether nodes `i` and `i + 1` fit one node.
    fn fit_together(&self, i: usize, limit: NodeLimit) -> bool {
        let (a, b) = (&self.nodes[i], &self.nodes[i + 1]);
        !super::is_plain(a)
            && !super::is_plain(b)
            && !limit.exceeds(a.total_bytes() + b.total_bytes() - LP_EMPTY_BYTES, a.len() + b.len())
    }

    /// Merges node `i + 1` into node `i`.
    fn merge(&mut self, i: usize) {
        let right = self.remove_node(i + 1);
        let left = self.remove_node(i);
        let mut b = Vec::with_capacity(left.total_bytes() + right.total_bytes());
        b.extend_from_slice(body(&left));
        b.extend_from_slice(body(&right));
        self.insert_node(i, listpack_from_body(&b));
    }

    fn at_most_half(&self, i: usize, limit: NodeLimit) -> bool {
        let lp = &self.nodes[i];
        limit.at_most_half(lp.total_bytes(), lp.len())
    }

    /// After deletions in nodes `lo..=hi`: merges each pair of neighbours among them (and
    /// with the nodes just outside) where one is at most half full and both fit one node.
    fn compact(&mut self, lo: usize, hi: usize, limit: NodeLimit) {
        let mut j = lo.saturating_sub(1);
        let mut last = hi;
        while j + 1 < self.nodes.len() && j <= last {
            let sparse = self.at_most_half(j, limit) || self.at_most_half(j + 1, limit);
            if sparse && self.fit_together(j, limit) {
                self.merge(j);
                last = last.saturating_sub(1);
            } else {
                j += 1;
            }
        }
    }

    // ----- edits -------------------------------------------------------------------------

    pub fn push(&mut self, end: End, v: &[u8], limit: NodeLimit) {
        let n = self.nodes.len();
        match end {
            End::Head if n > 0 && limit.allows(&self.nodes[0], v) => {
                self.edit(0, |lp| lp.push_front(v))
            }
            End::Head => self.insert_node(0, single(v)),
            End::Tail if n > 0 && limit.allows(&self.nodes[n - 1], v) => {
                self.edit(n - 1, |lp| lp.push_back(v))
            }
            End::Tail => self.insert_node(n, single(v)),
        }
    }

    pub fn pop(&mut self, end: End, limit: NodeLimit) -> Option<Vec<u8>> {
        let i = match end {
            End::Head => 0,
            End::Tail => self.nodes.len().checked_sub(1)?,
        };
        let v = self.edit(i, |lp| {
            let p = match end {
                End::Head => lp.first(),
                End::Tail => lp.last(),
            }
            .expect("nodes are never empty");
            let v = lp.get(p).to_vec();
            lp.delete(p);
            v
        });
        if !self.drop_if_empty(i) {
            self.compact(i, i, limit);
        }
        Some(v)
    }

    /// Inserts `v` before or after the entry at `pos` of node `i`: into that node when it has
    /// room, else into a neighbour with room when `v` lands at the node's edge, else into a
    /// new node (splitting node `i` when `v` lands inside it).
    pub fn insert_near(&mut self, i: usize, pos: Pos, place: Place, v: &[u8], limit: NodeLimit) {
        if limit.allows(&self.nodes[i], v) {
            self.edit(i, |lp| match place {
                Place::Before => lp.insert_before(pos, v),
                Place::After => lp.insert_after(pos, v),
            });
            return;
        }
        let lp = &self.nodes[i];
        // The entry `v` goes before, if any.
        let next = match place {
            Place::Before => Some(pos),
            Place::After => lp.next(pos),
        };
        match next {
            // After the node's last entry.
            None => {
                if i + 1 < self.nodes.len() && limit.allows(&self.nodes[i + 1], v) {
                    self.edit(i + 1, |lp| lp.push_front(v));
                } else {
                    self.insert_node(i + 1, single(v));
                }
            }
            // Before the node's first entry.
            Some(p) if lp.prev(p).is_none() => {
                if i > 0 && limit.allows(&self.nodes[i - 1], v) {
                    self.edit(i - 1, |lp| lp.push_back(v));
                } else {
                    self.insert_node(i, single(v));
                }
            }
            Some(p) => {
                self.split(i, p);
                if limit.allows(&self.nodes[i], v) {
                    self.edit(i, |lp| lp.push_back(v));
                } else if limit.allows(&self.nodes[i + 1], v) {
                    self.edit(i + 1, |lp| lp.push_front(v));
                } else {
                    self.insert_node(i + 1, single(v));
                }
            }
        }
    }

    /// Replaces element `index` (< len) with `v`: in place when the node stays within the
    /// limit (or holds only this element), else as a delete and an insertion.
    pub fn set(&mut self, index: usize, v: &[u8], limit: NodeLimit) {
        let (i, offset) = self.locate(index);
        let lp = &self.nodes[i];
        let pos = lp.seek(offset as i64).expect("located entry exists");
        let bytes =
            lp.total_bytes() - lp.entry_bytes(pos) + crate::types::listpack::entry_size_for(v);
        if lp.len() == 1 || (!limit.exceeds(bytes, lp.len()) && !super::is_large(v.len())) {
            self.edit(i, |lp| lp.replace(pos, v));
            return;
        }
        // The node keeps at least one entry: insert next to a neighbour of the old one.
        let (anchor, place) = self.edit(i, |lp| match lp.delete(pos) {
            Some(next) => (next, Place::Before),
            None => (lp.last().expect("node not empty"), Place::After),
        });
        self.insert_near(i, anchor, place, v, limit);
    }

    /// Deletes `count` elements from `start` (the range must be in the list).
    pub fn delete_range(&mut self, start: usize, count: usize, limit: NodeLimit) {
        assert!(start + count <= self.len, "delete range past the end");
        if count == 0 {
            return;
        }
        let (first, mut offset) = self.locate(start);
        let mut i = first;
        let mut left = count;
        while left > 0 {
            let n = self.nodes[i].len();
            if offset == 0 && left >= n {
                self.remove_node(i);
                left -= n;
                continue;
            }
            let k = left.min(n - offset);
            self.edit(i, |lp| lp.delete_range(offset as i64, k));
            left -= k;
            offset = 0;
            i += 1;
        }
        // Partially emptied nodes are at most `first` and `first + 1` now.
        self.compact(first, first + 1, limit);
    }

    /// LREM over the nodes from `from`: removes up to `want` matches.
    pub fn remove(
        &mut self,
        needle: Needle<'_>,
        want: usize,
        from: End,
        limit: NodeLimit,
    ) -> usize {
        let mut removed = 0;
        // The touched nodes, as indexes once the loop ends (dropping a node shifts the ones
        // after it); `lo` stays usize::MAX while nothing was touched.
        let (mut lo, mut hi) = (usize::MAX, 0);
        match from {
            End::Head => {
                let mut i = 0;
                while removed < want && i < self.nodes.len() {
                    let got = self.edit(i, |lp| remove_in_node(lp, needle, want - removed, from));
                    removed += got;
                    if got > 0 {
                        (lo, hi) = (lo.min(i), i);
                        if self.drop_if_empty(i) {
                            continue;
                        }
                    }
                    i += 1;
                }
            }
            End::Tail => {
                let mut i = self.nodes.len();
                while removed < want && i > 0 {
                    i -= 1;
                    let got = self.edit(i, |lp| remove_in_node(lp, needle, want - removed, from));
                    removed += got;
                    if got > 0 {
                        let dropped = self.drop_if_empty(i);
                        if lo == usize::MAX {
                            hi = i;
                        } else if dropped {
                            hi -= 1;
                        }
                        lo = i;
                    }
                }
            }
        }
        let n = self.nodes.len();
        if lo != usize::MAX && n > 0 {
            self.compact(lo.min(n - 1), hi.min(n - 1), limit);
        }
        removed
    }

    #[cfg(test)]
    pub fn check_invariants(&self, limit: Option<NodeLimit>) {
        let mut len = 0;
        let mut body_bytes = 0;
        let mut alloc_bytes = 0;
        for (i, lp) in self.nodes.iter().enumerate() {
            assert!(!lp.is_empty(), "node {i} is empty");
            assert_eq!(lp.iter().count(), lp.len(), "node {i} header count");
            if let Some(limit) = limit {
                assert!(
                    lp.len() == 1 || !limit.exceeds(lp.total_bytes(), lp.len()),
                    "node {i} ({} bytes, {} entries) over {limit:?}",
                    lp.total_bytes(),
                    lp.len()
                );
            }
            len += lp.len();
            body_bytes += lp.total_bytes() - LP_EMPTY_BYTES;
            alloc_bytes += lp.alloc_bytes();
        }
        assert_eq!(len, self.len, "cached length");
        assert_eq!(body_bytes, self.body_bytes, "cached body bytes");
        assert_eq!(alloc_bytes, self.alloc_bytes, "cached alloc bytes");
    }
}
