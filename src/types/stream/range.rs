//! Reading a stream: [`Range`] walks the live entries between two ids, in either direction,
//! and [`EntryRef`] gives an entry's id and its field-value pairs, borrowed from the node, so
//! a read allocates nothing. This file only reads; it owns the walk across nodes (where to
//! start, when to stop) and leaves the layout of one node to `node.rs`.
//!
//! The walk is Valkey's `streamIteratorGetID`: forward it starts in the last node whose key
//! is at most `start` and steps entry by entry; backward it starts in the last node whose
//! key is at most `end`, at its last entry, and steps back with each entry's lp-count.
//! Tombstones are skipped. Unlike Valkey, a backward walk whose `end` is below every node
//! key stops at once instead of visiting every node.

use std::collections::VecDeque;

use super::id::StreamId;
use super::node::{self, Head, Master};
use crate::types::listpack::{Listpack, LpEntry, Pos};

/// The live entries with ids in `start..=end`, oldest first or (rev) newest first.
pub struct Range<'a> {
    nodes: &'a VecDeque<(StreamId, Listpack)>,
    start: StreamId,
    end: StreamId,
    rev: bool,
    /// The node being walked (or to enter next when `cur` is None).
    node: usize,
    cur: Option<Cursor>,
    done: bool,
}

/// Where a walk stands inside one node.
struct Cursor {
    master: Master,
    /// The flags of the next entry to look at; None when the node is exhausted.
    at: Option<Pos>,
}

impl<'a> Range<'a> {
    pub(super) fn new(
        nodes: &'a VecDeque<(StreamId, Listpack)>,
        start: StreamId,
        end: StreamId,
        rev: bool,
    ) -> Range<'a> {
        // The last node whose key is at most the bound the walk starts from.
        let from = if rev { end } else { start };
        let at_most = nodes.partition_point(|(key, _)| *key <= from).checked_sub(1);
        let (node, done) = match at_most {
            Some(i) => (i, start > end),
            // Forward: every entry is above `start`, begin with the first node. Backward:
            // every entry is above `end`, nothing to give.
            None => (0, rev || start > end || nodes.is_empty()),
        };
        Range { nodes, start, end, rev, node, cur: None, done }
    }

    /// Step to the next node in the walk's direction, or finish.
    fn leave_node(&mut self) {
        self.cur = None;
        if self.rev {
            match self.node.checked_sub(1) {
                Some(i) => self.node = i,
                None => self.done = true,
            }
        } else {
            self.node += 1;
            self.done = self.node >= self.nodes.len();
        }
    }
}

impl<'a> Iterator for Range<'a> {
    type Item = EntryRef<'a>;

    fn next(&mut self) -> Option<EntryRef<'a>> {
        let nodes = self.nodes;
        loop {
            if self.done {
                return None;
            }
            let (key, lp) = &nodes[self.node];
            let cur = match &mut self.cur {
                Some(cur) => cur,
                None => {
                    // Every entry of a node is at or above its key.
                    if !self.rev && *key > self.end {
                        self.done = true;
                        return None;
                    }
                    let master = Master::read(lp);
                    let at = if self.rev { node::last_entry(lp) } else { master.first_entry(lp) };
                    self.cur.insert(Cursor { master, at })
                }
            };
            let Some(at) = cur.at else {
                self.leave_node();
                continue;
            };
            let head = Head::read(lp, *key, &cur.master, at);
            cur.at = if self.rev { head.prev(lp) } else { head.next(lp) };
            let (passed, before) = if self.rev {
                (head.id < self.start, head.id > self.end)
            } else {
                (head.id > self.end, head.id < self.start)
            };
            if passed {
                self.done = true;
                return None;
            }
            if before || head.is_deleted() {
                continue;
            }
            let master_fields = head.same_fields().then_some(cur.master.fields);
            return Some(EntryRef { lp, head, master_fields });
        }
    }
}

impl std::iter::FusedIterator for Range<'_> {}

/// One live entry, borrowed from its node.
#[derive(Clone, Copy, Debug)]
pub struct EntryRef<'a> {
    lp: &'a Listpack,
    head: Head,
    /// The master entry's first field, when the entry has the master's fields.
    master_fields: Option<Pos>,
}

impl<'a> EntryRef<'a> {
    pub fn id(&self) -> StreamId {
        self.head.id
    }

    /// The number of field-value pairs.
    pub fn len(&self) -> usize {
        self.head.field_count
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The field-value pairs, in the order they were added.
    pub fn fields(&self) -> Fields<'a> {
        Fields {
            lp: self.lp,
            master: self.master_fields,
            at: self.head.body,
            left: self.head.field_count,
        }
    }
}

/// The field-value pairs of an entry (see [`EntryRef::fields`]).
pub struct Fields<'a> {
    lp: &'a Listpack,
    /// The next master field (SAMEFIELDS entries), else None and fields come from `at`.
    master: Option<Pos>,
    /// The next element of the entry.
    at: Pos,
    left: usize,
}

impl<'a> Iterator for Fields<'a> {
    type Item = (LpEntry<'a>, LpEntry<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // Neither walk can run off the node: the master fields end with the master's 0,
        // the entry's values with its lp-count.
        let lp = self.lp;
        let step = |p: Pos| lp.next(p).expect("stream entry ends early");
        let field = match self.master {
            Some(m) => {
                self.master = Some(step(m));
                lp.get(m)
            }
            None => {
                let f = lp.get(self.at);
                self.at = step(self.at);
                f
            }
        };
        let value = lp.get(self.at);
        self.at = step(self.at);
        Some((field, value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Fields<'_> {}
