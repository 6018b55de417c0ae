//! Streams (issue 18): the entries of one stream key, stored as Valkey stores them, so that
//! RDB nodes are written and read without conversion. This module owns the entries and the
//! stream's metadata (length, first/last id, max deleted id, entries added); it knows nothing
//! of RESP, commands, the keyspace, consumer groups or the configuration (node limits come
//! in as [`NodeLimits`], trim requests as [`TrimSpec`]).
//!
//! # Layout
//!
//! The entries live in *nodes*: listpacks (`types::listpack`) in Valkey's stream layout,
//! each keyed by its *master id*, the id of the entry that opened it. The nodes sit in a
//! `VecDeque<(StreamId, Listpack)>` sorted by master id:
//!
//! ```text
//!   Stream (96 bytes)
//!   +---------------------------+
//!   | nodes: VecDeque ----------+--> [ (1-1, lp) | (5-0, lp) | ... | (9-3, lp) | free ]
//!   | length, entries_added     |        24 bytes a slot: 16-byte key + 8-byte listpack
//!   | last_id, first_id,        |             |
//!   | max_deleted_id            |             v
//!   +---------------------------+      one node (every element a listpack element):
//!
//!   master entry:  | count | deleted | nf | field_1 ... field_nf | 0 |
//!   entry:         | flags | ms-diff | seq-diff | nf | f_1 v_1 ... f_nf v_nf | lp-count |
//!   entry with SAMEFIELDS (flags bit 1):
//!                  | flags | ms-diff | seq-diff | v_1 ... v_nf | lp-count |
//! ```
//!
//! - `count` and `deleted` count the node's live entries and tombstones; `nf` and the
//!   fields of the master entry are those of the entry that opened the node.
//! - `flags`: 0 none, 1 DELETED (a tombstone: XDEL or an exact trim; entries are never
//!   removed from the middle of a node), 2 SAMEFIELDS (the entry's fields are the master's,
//!   same count and order; only the values are stored).
//! - The id is stored as differences from the master id, each a u64 difference written as
//!   an i64 (a later millisecond with a smaller sequence gives a negative seq-diff).
//! - `lp-count` is the number of elements of the entry before it: 3 + nf with SAMEFIELDS,
//!   else 3 + 1 + 2 nf. A reader at the end of an entry steps back `lp-count` elements to
//!   its flags; the master entry's closing 0 plays the same role and stops a backward walk.
//! - Numbers are listpack integers; fields and values are listpack strings (or integers
//!   when they are canonical decimals, as the listpack decides).
//!
//! # Why a sorted deque of listpacks
//!
//! Valkey indexes the nodes with a rax keyed by the 128-bit big-endian master id. Streams
//! are appended at the new end and trimmed at the old end, and a lookup (XRANGE start,
//! XDEL) needs "the last node whose key is at most this id": a deque sorted by key does all
//! three, the ends in O(1) and the lookup by binary search, with 24 bytes a node in one
//! buffer. A `BTreeMap` would cost a ~280-byte leaf even for the one node most streams have;
//! the rax costs a few dozen bytes of nodes per key (measured below). Removing a node from
//! the middle (XDEL of its last live entry) shifts the shorter side of the deque: a memmove
//! of up to half the slots (about 0.2 MB for a million entries in 70-entry nodes), where the
//! rax pays O(key length). XDEL usually removes old entries, near the front, where the move
//! is short; a node is removed only when its last live entry goes.
//!
//! # Byte budget
//!
//! An entry of 5 fields of 2 bytes and values of 8 bytes, with the master's fields and
//! ids in the same millisecond range (deltas below 128): flags 2 + ms-diff 2 + seq-diff 2 +
//! 5 values 10 each + lp-count 2 = **58 bytes** (80 without SAMEFIELDS: nf 2 + 5 fields of
//! 4). A node's fixed part is the listpack header 6 and terminator 1 plus the master entry
//! 2 + 2 + 2 + 5 x 4 + 2 = 35 bytes. The listpack is byte for byte Valkey's, so the
//! difference lies in what surrounds it:
//!
//! | stream of such entries        | ferrokey                    | Valkey 9.1.2 (measured) |
//! |-------------------------------|-----------------------------|-------------------------|
//! | 1 entry                       | 96 + 24 + 96 = 216 B        | ~4300 B                 |
//! | 10 entries                    | 96 + 24 + 640 = 760 B, 76/e | ~4300 B, 430/e          |
//! | 50 000 entries, default limits| ~59 B/entry                 | 59.5 B/entry            |
//!
//! ferrokey: the `Stream` struct, the deque's buffer and the listpacks' size classes (the
//! key and its table slot not counted). Valkey: growth of `used_memory`, less what a string
//! key costs. Valkey opens every node with 4 KiB preallocated
//! (`STREAM_LISTPACK_MAX_PRE_ALLOCATE`) and shrinks it only when the node is closed, so a
//! small stream pays 4 KiB; besides, its `stream` struct is 80 bytes, the `rax` struct 32,
//! and the rax nodes 35 to 70 bytes per listpack (measured with one-entry nodes: 165 bytes
//! a node, 96 of them the listpack). Here a listpack is always exactly its bytes (the
//! listpack module's design), and a node costs a 24-byte deque slot (twice that at most in
//! growth slack). With the default limits a node of these entries closes at 70 entries and
//! 4095 bytes (see below), so in a long stream both pay ~58.5 bytes of listpack per entry
//! and less than one byte of index.
//!
//! # Node limits
//!
//! `stream-node-max-bytes` (default 4096) and `stream-node-max-entries` (default 100), 0
//! meaning no limit, decide when an append opens a new node, exactly as Valkey's
//! `streamAppendItem`: the tail node is closed when its listpack bytes plus the *raw* bytes
//! of the new entry's fields and values reach the byte limit (`>=`; "no limit" is 1 GiB,
//! Valkey's `STREAM_LISTPACK_MAX_SIZE`), or when its entries, tombstones included, have
//! reached the entry limit. Limits are read at each append, so a CONFIG SET applies to the
//! next append of every stream; existing nodes are never split or merged, and tombstones
//! are never collected (Valkey does neither).
//!
//! # Files
//! - `mod.rs`: [`Stream`], its metadata, append, lookup and delete.
//! - `node.rs`: the node layout: building, appending, reading and marking entries.
//! - `range.rs`: [`Range`] and [`EntryRef`], zero-allocation reads in both directions.
//! - `trim.rs`: [`TrimSpec`] and `Stream::trim` (Valkey's `streamTrim`).
//! - `validate.rs`: checking nodes from outside ([`StreamError`]).
//! - `id.rs`: [`StreamId`].
//! - `group.rs`: consumer groups, their pending entries and consumers.
//! - `obj.rs`: [`StreamObj`], a stream key's value (entries and groups).

#[cfg(test)]
mod fixture;
pub mod group;
pub mod id;
mod node;
mod obj;
mod range;
#[cfg(test)]
mod tests;
mod trim;
mod validate;

use std::collections::VecDeque;
use std::fmt;

pub use id::StreamId;
pub use obj::StreamObj;
pub use range::{EntryRef, Fields, Range};
pub use trim::{TrimSpec, TrimStrategy};
pub use validate::StreamError;

use crate::types::listpack::Listpack;
use node::{Head, Master};

/// Valkey's `STREAM_LISTPACK_MAX_SIZE`: a node never grows past 1 GiB whatever the limit,
/// and one entry's raw bytes may not exceed it.
pub const NODE_BYTES_MAX: usize = 1 << 30;

/// When an append opens a new node (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeLimits {
    /// `stream-node-max-bytes`; 0 for no limit.
    pub max_bytes: usize,
    /// `stream-node-max-entries`; 0 for no limit.
    pub max_entries: usize,
}

impl NodeLimits {
    /// Valkey's defaults.
    pub const DEFAULT: NodeLimits = NodeLimits { max_bytes: 4096, max_entries: 100 };

    /// The LIMIT of an approximate trim given without one: `100 * stream-node-max-entries`
    /// (0, no limit, when the entries are not limited).
    pub fn approx_trim_limit(&self) -> u64 {
        (self.max_entries as u64).saturating_mul(100)
    }

    /// Whether an entry of `raw_bytes` (fields and values, unencoded) goes into a new node
    /// rather than the tail node `lp`.
    fn closes(&self, lp: &Listpack, raw_bytes: usize) -> bool {
        let max_bytes = match self.max_bytes {
            0 => NODE_BYTES_MAX,
            n => n.min(NODE_BYTES_MAX),
        };
        if lp.total_bytes() + raw_bytes >= max_bytes {
            return true;
        }
        self.max_entries != 0 && Master::read(lp).entries() >= self.max_entries as u64
    }
}

impl Default for NodeLimits {
    fn default() -> NodeLimits {
        NodeLimits::DEFAULT
    }
}

/// An entry's fields and values together exceed [`NODE_BYTES_MAX`] (Valkey replies
/// "Elements are too large to be stored").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryTooLarge;

impl fmt::Display for EntryTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Elements are too large to be stored")
    }
}

impl std::error::Error for EntryTooLarge {}

/// A stream's metadata, as Valkey's `stream` struct holds it and RDB files store it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamMeta {
    /// Live entries.
    pub length: u64,
    /// The greatest id ever added (or set by XSETID); 0-0 before any.
    pub last_id: StreamId,
    /// The first live entry's id; 0-0 when there is none.
    pub first_id: StreamId,
    /// The greatest id XDEL removed (or XSETID set); 0-0 before any.
    pub max_deleted_id: StreamId,
    /// Entries ever added.
    pub entries_added: u64,
}

/// The entries of one stream (module documentation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stream {
    /// Sorted by key; every node holds at least one entry (tombstones count), and each
    /// entry id is at or above its node's key and below the next node's.
    nodes: VecDeque<(StreamId, Listpack)>,
    length: u64,
    last_id: StreamId,
    first_id: StreamId,
    max_deleted_id: StreamId,
    entries_added: u64,
}

const _: () = assert!(std::mem::size_of::<Stream>() == 96);
const _: () = assert!(std::mem::size_of::<(StreamId, Listpack)>() == 24);

impl Stream {
    pub fn new() -> Stream {
        Stream::default()
    }

    /// A stream from nodes and metadata read from outside (RDB, RESTORE), after checking
    /// every node's layout, the order of nodes and entries, that `length` is the nodes'
    /// live count and that `last_id` is not below any entry. `first_id`, `max_deleted_id`
    /// and `entries_added` are taken as given (Valkey checks none of them).
    pub fn from_parts(
        nodes: Vec<(StreamId, Listpack)>,
        meta: StreamMeta,
    ) -> Result<Stream, StreamError> {
        validate::check_stream(nodes.iter().map(|(k, lp)| (*k, lp)), meta.length, meta.last_id)?;
        let mut nodes = VecDeque::from(nodes);
        nodes.shrink_to_fit();
        Ok(Stream {
            nodes,
            length: meta.length,
            last_id: meta.last_id,
            first_id: meta.first_id,
            max_deleted_id: meta.max_deleted_id,
            entries_added: meta.entries_added,
        })
    }

    /// The metadata, for RDB and XINFO.
    pub fn meta(&self) -> StreamMeta {
        StreamMeta {
            length: self.length,
            last_id: self.last_id,
            first_id: self.first_id,
            max_deleted_id: self.max_deleted_id,
            entries_added: self.entries_added,
        }
    }

    /// The number of live entries (XLEN).
    pub fn len(&self) -> u64 {
        self.length
    }

    /// No live entry (a stream key may be empty: XDEL and XTRIM do not delete the key).
    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    pub fn first_id(&self) -> StreamId {
        self.first_id
    }

    pub fn last_id(&self) -> StreamId {
        self.last_id
    }

    pub fn max_deleted_id(&self) -> StreamId {
        self.max_deleted_id
    }

    pub fn entries_added(&self) -> u64 {
        self.entries_added
    }

    /// XSETID's last id. The caller checks it is at least [`Stream::tail_id`]: Valkey
    /// checks only the last *live* entry, which lets a later XADD write an id at or below a
    /// trailing tombstone; this type requires every append to be above all entries.
    pub fn set_last_id(&mut self, id: StreamId) {
        debug_assert!(self.tail_id().is_none_or(|tail| tail <= id), "last id below an entry");
        self.last_id = id;
    }

    /// The first live entry's id as RDB files of type `STREAM_LISTPACKS` (version 1) lack
    /// it; see [`Stream::first_live_id`].
    pub fn set_first_id(&mut self, id: StreamId) {
        self.first_id = id;
    }

    pub fn set_max_deleted_id(&mut self, id: StreamId) {
        self.max_deleted_id = id;
    }

    pub fn set_entries_added(&mut self, n: u64) {
        self.entries_added = n;
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The nodes in order, each with its key (the master id), as RDB files store them.
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = (StreamId, &Listpack)> + '_ {
        self.nodes.iter().map(|(key, lp)| (*key, lp))
    }

    /// The bytes the allocator charges for what the stream owns (not the struct itself):
    /// the deque's buffer and every listpack. O(nodes).
    pub fn alloc_bytes(&self) -> usize {
        let slots = self.nodes.capacity() * std::mem::size_of::<(StreamId, Listpack)>();
        let lps: usize = self.nodes.iter().map(|(_, lp)| lp.alloc_bytes()).sum();
        crate::memory::size_class(slots) + lps
    }

    /// The live entries with ids in `start..=end`, oldest first, or newest first when
    /// `rev`. Exclusive bounds are the caller's (`StreamId::next`/`prev`).
    pub fn range(&self, start: StreamId, end: StreamId, rev: bool) -> Range<'_> {
        Range::new(&self.nodes, start, end, rev)
    }

    /// The counters consumer groups read (see [`group::StreamInfo`]).
    pub fn info(&self) -> group::StreamInfo {
        group::StreamInfo {
            length: self.length,
            first_id: self.first_id,
            last_id: self.last_id,
            max_deleted_entry_id: self.max_deleted_id,
            entries_added: self.entries_added,
        }
    }

    /// Whether a live entry has this id.
    pub fn contains(&self, id: StreamId) -> bool {
        self.range(id, id, false).next().is_some()
    }

    /// The first live entry's id (what `first_id` should be).
    pub fn first_live_id(&self) -> Option<StreamId> {
        self.range(StreamId::MIN, StreamId::MAX, false).next().map(|e| e.id())
    }

    /// The first entry's id, tombstones included (the MINID that an approximate trim is
    /// propagated with: Valkey's `streamGetEdgeID(s, 1, 0, ..)`).
    pub fn head_id(&self) -> Option<StreamId> {
        let (key, lp) = self.nodes.front()?;
        let master = Master::read(lp);
        let at = master.first_entry(lp).expect("stream node without entries");
        Some(Head::read(lp, *key, &master, at).id)
    }

    /// The last entry's id, tombstones included.
    pub fn tail_id(&self) -> Option<StreamId> {
        self.nodes.len().checked_sub(1).map(|i| self.node_tail_id(i))
    }

    /// The last entry's id in node `i`, tombstones included.
    fn node_tail_id(&self, i: usize) -> StreamId {
        let (key, lp) = &self.nodes[i];
        let at = node::last_entry(lp).expect("stream node without entries");
        Head::read(lp, *key, &Master::read(lp), at).id
    }

    /// Add the entry `id` with `pairs` = field, value, field, value ... (XADD). The caller
    /// has checked that `id` is above `last_id` (and so above every entry).
    pub fn append<V: AsRef<[u8]>>(
        &mut self,
        id: StreamId,
        pairs: &[V],
        limits: NodeLimits,
    ) -> Result<(), EntryTooLarge> {
        assert!(pairs.len().is_multiple_of(2), "stream entry with a field without a value");
        assert!(id > self.last_id, "stream append of {id} after {}", self.last_id);
        debug_assert!(self.tail_id().is_none_or(|tail| tail < id));
        let raw_bytes = pairs.iter().fold(0usize, |n, v| n.saturating_add(v.as_ref().len()));
        if raw_bytes > NODE_BYTES_MAX {
            return Err(EntryTooLarge);
        }
        match self.nodes.back_mut() {
            Some((key, lp)) if !limits.closes(lp, raw_bytes) => node::append(lp, *key, id, pairs),
            _ => self.push_node(id, node::new_node(id, pairs)),
        }
        self.length += 1;
        self.entries_added += 1;
        self.last_id = id;
        if self.length == 1 {
            self.first_id = id;
        }
        Ok(())
    }

    /// Add a node at the new end; a stream's first node gets a buffer of exactly one slot.
    fn push_node(&mut self, key: StreamId, lp: Listpack) {
        if self.nodes.capacity() == 0 {
            self.nodes.reserve_exact(1);
        }
        self.nodes.push_back((key, lp));
    }

    /// Drop node `i`, and give back most of the deque's buffer once it is mostly empty.
    fn remove_node(&mut self, i: usize) {
        self.nodes.remove(i).expect("stream node index in range");
        let (len, cap) = (self.nodes.len(), self.nodes.capacity());
        if len == 0 {
            self.nodes.shrink_to_fit();
        } else if cap >= 8 && len * 4 <= cap {
            self.nodes.shrink_to(len * 2);
        }
    }

    /// The node holding `id` and the entry's header, if it is a live entry.
    fn find_live(&self, id: StreamId) -> Option<(usize, Head)> {
        let i = self.nodes.partition_point(|(key, _)| *key <= id).checked_sub(1)?;
        let (key, lp) = &self.nodes[i];
        let master = Master::read(lp);
        let mut at = master.first_entry(lp);
        while let Some(p) = at {
            let head = Head::read(lp, *key, &master, p);
            if head.id >= id {
                return (head.id == id && !head.is_deleted()).then_some((i, head));
            }
            at = head.next(lp);
        }
        None
    }

    /// XDEL of one id: mark the entry deleted (or drop its node when it was the node's last
    /// live entry), and bring `length`, `max_deleted_id` and `first_id` up to date as XDEL
    /// does. Returns whether a live entry had the id.
    pub fn delete(&mut self, id: StreamId) -> bool {
        let Some((i, head)) = self.find_live(id) else { return false };
        let lp = &mut self.nodes[i].1;
        let master = Master::read(lp);
        if master.count == 1 {
            self.remove_node(i);
        } else {
            node::mark_deleted(lp, head.at);
            node::set_counts(lp, master.count - 1, master.deleted + 1);
        }
        self.length -= 1;
        self.max_deleted_id = self.max_deleted_id.max(id);
        if self.length == 0 {
            self.first_id = StreamId::MIN;
        } else if id == self.first_id {
            self.first_id = self.first_live_id().expect("a stream with entries has a first one");
        }
        true
    }

    /// Check every invariant (tests).
    #[cfg(test)]
    fn check_invariants(&self) {
        let checked = validate::check_stream(self.nodes(), self.length, self.last_id);
        assert_eq!(checked, Ok(()));
        let first = self.first_live_id().unwrap_or(StreamId::MIN);
        assert_eq!(self.first_id, first, "first id");
        assert!(self.nodes.capacity() <= 4 || self.nodes.capacity() <= self.nodes.len() * 8);
    }
}
