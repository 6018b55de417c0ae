//! The list type: a sequence of binary strings, in one of Valkey 8's two encodings. This module
//! owns the representation, the conversions between the encodings and every edit a list
//! command makes; it knows nothing of RESP, commands or the keyspace (the node limit comes in
//! as a [`NodeLimit`], read from the configuration by the caller at each command).
//!
//! # Encodings
//!
//! - `listpack`: the whole list is one [`Listpack`], as long as it fits one node of
//!   `list-max-listpack-size` (below).
//! - `quicklist`: a deque of listpack *nodes*, each within that limit (`quick.rs`).
//!
//! ```text
//!   ListObj (16 bytes: tag + pointer)
//!   +---------------------------+
//!   | Packed(Listpack) ---------+--> [ total | count | e0 e1 ... en | FF ]
//!   +---------------------------+
//!   | Quick(Box<QuickList>) ----+--> QuickList { len, body_bytes, alloc_bytes,
//!   +---------------------------+                nodes: VecDeque<Listpack> }
//!                                                        |
//!              ring buffer of 8-byte thin pointers:      v
//!              [ lp0 | lp1 | lp2 | ... | lpN-1 | (free slots) ]
//!                 |     |
//!                 v     v
//!          [hdr e e e FF] [hdr e e FF] ...   each node: one allocation, <= the limit
//! ```
//!
//! # The node limit
//!
//! `list-max-listpack-size` (`fill`) is Valkey's: a negative value -1..-5 caps a node at
//! 4, 8, 16, 32 or 64 KiB (anything below -5 means 64 KiB); a positive value caps the number
//! of elements, and then Valkey's 8 KiB "safety" size applies too; 0 means one element. One
//! element larger than the limit gets a node of its own (Valkey calls it a "plain" node and
//! stores the bare string; here it is a one-entry listpack, a handful of header bytes more).
//!
//! # Conversions
//!
//! They follow Valkey 8's `listTypeTryConversion*`, so OBJECT ENCODING reports what Valkey
//! reports:
//! - *growing*: before a command adds elements (LPUSH & co., LINSERT, LSET, the target of
//!   LMOVE), a listpack whose bytes plus the raw bytes of the new elements, or whose count plus
//!   their count, would exceed the limit becomes a quicklist of one node (the listpack itself,
//!   not a copy; or, when the listpack is itself over the limit, because the check counts raw
//!   bytes and not their encoding or after CONFIG SET lowered the limit, nodes cut from it).
//!   A quicklist never converts when growing.
//! - *shrinking*: after a command removed elements, a quicklist whose elements would fit a
//!   listpack under *half* the limit (half the bytes, or half the count for a positive fill)
//!   becomes a listpack again; the half keeps a list that hovers at the limit from converting
//!   back and forth. Valkey only converts a quicklist that has shrunk to a single node; this
//!   implementation converts whenever the whole list fits (which includes that case), by
//!   concatenating the nodes: at most half a node of bytes to copy, so still O(limit).
//!
//! # Quicklist design
//!
//! The nodes sit in a `VecDeque` of thin listpack pointers: 8 bytes per node (Valkey's
//! doubly-linked `quicklistNode` costs 32 bytes plus an allocation), O(1) access to the node
//! at either end and to the i-th node, and no per-node allocation besides the listpack.
//! - LPUSH/RPUSH edit the end node while it has room for the element, else start a new node:
//!   O(1) node operations plus a memmove of at most one node.
//! - LPOP/RPOP delete from the end node, dropping it when it empties: O(1).
//! - LINDEX/LSET/LINSERT/LRANGE locate an index by walking the node deque from the nearer
//!   end, subtracting each node's element count (read from its listpack header, never by
//!   decoding elements), then seek inside one node: O(nodes + limit).
//! - An insertion into a full node goes into a neighbour with room when it lands at the
//!   node's edge, else the node is split at the insertion point; LSET of a longer value that
//!   no longer fits is a delete plus such an insertion (as Valkey's `quicklistReplaceEntry`).
//! - After deleting (pops, LREM, LTRIM, LSET), a node that has fallen to half the limit or
//!   less is merged with a neighbour when the two fit one node. So two neighbours are never
//!   both under half full, which keeps memory within ~2x of the elements even after heavy
//!   deletion; merges copy at most one node, and each removes a node that a push or split
//!   created, so their cost is amortized.
//! - LLEN is O(1): the quicklist caches its element count; it also caches the sum of its
//!   nodes' bytes (for the shrinking check) and of their allocator size classes (MEMORY
//!   USAGE is O(1)).
//!
//! Node sizing reads the limit of the current command, so CONFIG SET list-max-listpack-size
//! applies to new nodes of existing lists as well (Valkey keeps the fill a quicklist was
//! created with); nodes already larger than a lowered limit are left as they are until edited.
//!
//! `list-compress-depth` is accepted by CONFIG but not implemented: nodes are never
//! LZF-compressed. Every node stays a plain listpack, so reads never decompress.
//!
//! # Layout
//! - `mod.rs`: [`ListObj`], [`NodeLimit`], conversions, reads ([`Walk`]) and dispatch of edits.
//! - `quick.rs`: the quicklist: node accounting, split, merge, and the edits on many nodes.
//! - `tests.rs`: a seeded model test of both encodings against `VecDeque<Vec<u8>>`.

mod quick;
#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::types::agg::{AggType, Kind};
use crate::types::listpack::{parse_canonical_int, Listpack, LpEntry, Pos};
use quick::QuickList;

/// A listpack's header: total bytes (u32) and element count (u16).
const LP_HEADER_BYTES: usize = 6;
/// Bytes of an empty listpack: the header and the terminator. Concatenating listpacks keeps
/// one header and one terminator.
const LP_EMPTY_BYTES: usize = LP_HEADER_BYTES + 1;
/// `DEBUG QUICKLIST-PACKED-THRESHOLD`: elements of this many bytes or more get a node of
/// their own, that nothing joins, even when they fit the node limit (0: off). Valkey stores
/// such an element as a "plain" node, a bare string; ferrokey has no plain nodes, and its
/// nearest true equivalent is what it does for an element larger than the node limit: a
/// one-entry listpack node that no other element is added to and no merge takes in.
/// Valkey's default, 1 GB, is always larger than a node limit (at most 64 KiB), so off and
/// the default behave alike. Process-wide, as Valkey's; a testing knob (lists with long
/// elements without building them that long).
static PACKED_THRESHOLD: AtomicUsize = AtomicUsize::new(0);

/// The largest threshold Valkey accepts: not even close to 4 GB.
pub const PACKED_THRESHOLD_MAX: u64 = (1 << 32) - (1 << 20);

/// Sets the packed threshold in bytes (0: off); false (and no change) above
/// [`PACKED_THRESHOLD_MAX`].
pub fn set_packed_threshold(bytes: u64) -> bool {
    if bytes > PACKED_THRESHOLD_MAX {
        return false;
    }
    PACKED_THRESHOLD.store(bytes as usize, Ordering::Relaxed);
    true
}

/// Whether an element of `len` bytes must have a node of its own (the packed threshold).
fn is_large(len: usize) -> bool {
    let t = PACKED_THRESHOLD.load(Ordering::Relaxed);
    t != 0 && len >= t
}

/// Whether `lp` is a node of one large element (see [`is_large`]), closed to others.
fn is_plain(lp: &Listpack) -> bool {
    lp.len() == 1
        && lp.first().is_some_and(|p| matches!(lp.get(p), LpEntry::Str(s) if is_large(s.len())))
}

/// Valkey's `SIZE_SAFETY_LIMIT`: the size cap of a node when `fill` counts elements.
const SAFETY_BYTES: usize = 8192;
/// Valkey's `optimization_level`: node byte caps for fill -1..-5.
const FILL_BYTES: [usize; 5] = [4096, 8192, 16384, 32768, 65536];

/// The cap on one node (and on a listpack-encoded list), from `list-max-listpack-size`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeLimit {
    bytes_max: usize,
    count_max: usize,
    /// A positive fill: the count is the limit, and the shrinking threshold halves only the
    /// count (Valkey's size limit is then "none", the safety size aside).
    by_count: bool,
}

impl NodeLimit {
    /// The limit for `list-max-listpack-size` = `fill`.
    pub fn from_fill(fill: i32) -> NodeLimit {
        if fill >= 0 {
            let count_max = usize::try_from(fill).unwrap_or(usize::MAX).max(1);
            NodeLimit { bytes_max: SAFETY_BYTES, count_max, by_count: true }
        } else {
            let level = usize::try_from(fill.unsigned_abs()).unwrap_or(usize::MAX);
            let bytes_max = FILL_BYTES[level.min(FILL_BYTES.len()) - 1];
            NodeLimit { bytes_max, count_max: usize::MAX, by_count: false }
        }
    }

    /// A byte cap of any size (tests use tiny nodes).
    #[cfg(test)]
    pub fn bytes(bytes_max: usize) -> NodeLimit {
        NodeLimit { bytes_max, count_max: usize::MAX, by_count: false }
    }

    /// Whether a listpack of `bytes` bytes and `count` entries is over the limit (Valkey's
    /// `quicklistNodeExceedsLimit`).
    pub fn exceeds(&self, bytes: usize, count: usize) -> bool {
        bytes > self.bytes_max || count > self.count_max
    }

    /// Whether a node of `bytes` and `count` is at most half full.
    fn at_most_half(&self, bytes: usize, count: usize) -> bool {
        !self.exceeds(bytes.saturating_mul(2), count.saturating_mul(2))
    }

    /// Whether a listpack of `bytes` and `count` entries is small enough to convert a shrunk
    /// quicklist back to (Valkey's `listTypeTryConvertQuicklist` with `shrinking`).
    fn fits_shrunk(&self, bytes: usize, count: usize) -> bool {
        if self.by_count {
            count <= self.count_max / 2 && bytes <= self.bytes_max
        } else {
            bytes <= self.bytes_max / 2
        }
    }

    /// Whether `lp` has room for one more entry `v` (never when either is over the packed
    /// threshold).
    fn allows(&self, lp: &Listpack, v: &[u8]) -> bool {
        if is_large(v.len()) || is_plain(lp) {
            return false;
        }
        let bytes = lp.total_bytes() + crate::types::listpack::entry_size_for(v);
        !self.exceeds(bytes, lp.len() + 1)
    }
}

/// An end of the list: LEFT is the head, RIGHT the tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Head,
    Tail,
}

/// Which side of a pivot LINSERT puts the new element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Before,
    After,
}

/// Which way a [`Walk`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Head to tail.
    Forward,
    /// Tail to head.
    Backward,
}

/// A list value (see the module documentation).
#[derive(Clone, Debug)]
pub struct ListObj {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    Packed(Listpack),
    Quick(Box<QuickList>),
}

const _: () = assert!(std::mem::size_of::<ListObj>() == 16);

impl AggType for ListObj {
    const KIND: Kind = Kind::List;

    fn len(&self) -> usize {
        match &self.repr {
            Repr::Packed(lp) => lp.len(),
            Repr::Quick(q) => q.len(),
        }
    }

    fn encoding(&self) -> &'static str {
        match &self.repr {
            Repr::Packed(_) => "listpack",
            Repr::Quick(_) => "quicklist",
        }
    }

    fn alloc_bytes(&self) -> usize {
        match &self.repr {
            Repr::Packed(lp) => lp.alloc_bytes(),
            Repr::Quick(q) => {
                crate::memory::size_class(std::mem::size_of::<QuickList>()) + q.alloc_bytes()
            }
        }
    }

    fn free_effort(&self) -> usize {
        match &self.repr {
            Repr::Packed(_) => 1,
            Repr::Quick(q) => q.node_count().max(1),
        }
    }
}

impl Default for ListObj {
    fn default() -> ListObj {
        ListObj::new()
    }
}

/// Compares list entries with one element, parsing the element as an integer once (LPOS,
/// LREM, LINSERT's pivot).
#[derive(Clone, Copy, Debug)]
pub struct Needle<'a> {
    bytes: &'a [u8],
    int: Option<i64>,
}

impl<'a> Needle<'a> {
    pub fn new(bytes: &'a [u8]) -> Needle<'a> {
        Needle { bytes, int: parse_canonical_int(bytes) }
    }

    /// Whether entry `e` is the element (an integer entry equals its canonical decimal).
    pub fn matches(&self, e: LpEntry<'_>) -> bool {
        match e {
            LpEntry::Int(i) => self.int == Some(i),
            LpEntry::Str(s) => s == self.bytes,
        }
    }
}

impl ListObj {
    /// An empty list, listpack-encoded (a key never holds one for long: the command that
    /// creates it pushes at once).
    pub fn new() -> ListObj {
        ListObj { repr: Repr::Packed(Listpack::new()) }
    }

    /// The listpack itself, in the listpack encoding (DEBUG LISTPACK).
    pub fn listpack(&self) -> Option<&Listpack> {
        match &self.repr {
            Repr::Packed(lp) => Some(lp),
            Repr::Quick(_) => None,
        }
    }

    /// Whether the list is quicklist-encoded.
    pub fn is_quicklist(&self) -> bool {
        matches!(self.repr, Repr::Quick(_))
    }

    /// Number of nodes a walk visits (1 for a listpack).
    fn node_count(&self) -> usize {
        match &self.repr {
            Repr::Packed(_) => 1,
            Repr::Quick(q) => q.node_count(),
        }
    }

    fn node(&self, i: usize) -> &Listpack {
        match &self.repr {
            Repr::Packed(lp) => {
                debug_assert_eq!(i, 0);
                lp
            }
            Repr::Quick(q) => q.node(i),
        }
    }

    /// Node and position of the element at `index` (< len).
    fn locate(&self, index: usize) -> (usize, Pos) {
        let (node, offset) = match &self.repr {
            Repr::Packed(_) => (0, index),
            Repr::Quick(q) => q.locate(index),
        };
        let pos = self.node(node).seek(offset as i64).expect("located entry exists");
        (node, pos)
    }

    /// Turns a signed index (negative counts from the tail) into an offset, if in range.
    pub fn resolve(&self, index: i64) -> Option<usize> {
        let len = i64::try_from(self.len()).expect("list length fits i64");
        let i = if index < 0 { index.checked_add(len)? } else { index };
        (0..len).contains(&i).then_some(i as usize)
    }

    // ----- conversions -------------------------------------------------------------------

    /// Before adding `add_count` elements of `add_bytes` raw bytes in all: converts a listpack
    /// that would exceed the limit into a quicklist (Valkey's growing conversion).
    pub fn grow_check(&mut self, add_bytes: usize, add_count: usize, limit: NodeLimit) {
        let Repr::Packed(lp) = &mut self.repr else { return };
        let bytes = lp.total_bytes().saturating_add(add_bytes);
        if limit.exceeds(bytes, lp.len().saturating_add(add_count)) {
            let lp = std::mem::take(lp);
            self.repr = Repr::Quick(Box::new(QuickList::from_listpack(lp, limit)));
        }
    }

    /// After removing elements: converts a quicklist that fits a listpack under half the
    /// limit back into one (Valkey's shrinking conversion).
    pub fn shrink_check(&mut self, limit: NodeLimit) {
        let Repr::Quick(q) = &mut self.repr else { return };
        if q.len() == 0 || !limit.fits_shrunk(q.body_bytes() + LP_EMPTY_BYTES, q.len()) {
            return;
        }
        let q = std::mem::take(&mut **q);
        self.repr = Repr::Packed(q.into_listpack());
    }

    // ----- reads -------------------------------------------------------------------------

    /// The element at `index` (negative counts from the tail).
    pub fn get(&self, index: i64) -> Option<LpEntry<'_>> {
        let i = self.resolve(index)?;
        let (node, pos) = self.locate(i);
        Some(self.node(node).get(pos))
    }

    /// The elements from offset `start` (< len, or the walk is empty) towards `dir`.
    pub fn walk(&self, start: usize, dir: Dir) -> Walk<'_> {
        if start >= self.len() {
            return Walk { list: self, node: 0, pos: None, dir };
        }
        let (node, pos) = self.locate(start);
        Walk { list: self, node, pos: Some(pos), dir }
    }

    /// The listpack nodes, head to tail (one for the listpack encoding): RDB stores them as
    /// they are.
    pub fn nodes(&self) -> Vec<&Listpack> {
        match &self.repr {
            Repr::Packed(lp) => vec![lp],
            Repr::Quick(q) => q.nodes().collect(),
        }
    }

    /// Every element, head to tail.
    pub fn iter(&self) -> Walk<'_> {
        self.walk(0, Dir::Forward)
    }

    // ----- edits -------------------------------------------------------------------------

    /// Adds `v` at `end`. Call [`ListObj::grow_check`] first for the whole command.
    pub fn push(&mut self, end: End, v: &[u8], limit: NodeLimit) {
        match &mut self.repr {
            Repr::Packed(lp) => match end {
                End::Head => lp.push_front(v),
                End::Tail => lp.push_back(v),
            },
            Repr::Quick(q) => q.push(end, v, limit),
        }
    }

    /// Removes and returns the element at `end`. Call [`ListObj::shrink_check`] after.
    pub fn pop(&mut self, end: End, limit: NodeLimit) -> Option<Vec<u8>> {
        match &mut self.repr {
            Repr::Packed(lp) => {
                let p = match end {
                    End::Head => lp.first(),
                    End::Tail => lp.last(),
                }?;
                let v = lp.get(p).to_vec();
                lp.delete(p);
                Some(v)
            }
            Repr::Quick(q) => q.pop(end, limit),
        }
    }

    /// Replaces the element at `index` (negative counts from the tail); false when out of
    /// range. Call [`ListObj::grow_check`] before and [`ListObj::shrink_check`] after.
    pub fn set(&mut self, index: i64, v: &[u8], limit: NodeLimit) -> bool {
        let Some(i) = self.resolve(index) else { return false };
        match &mut self.repr {
            Repr::Packed(lp) => {
                let p = lp.seek(i as i64).expect("index in range");
                lp.replace(p, v);
            }
            Repr::Quick(q) => q.set(i, v, limit),
        }
        true
    }

    /// Inserts `v` before or after the first element equal to `pivot`; false when there is
    /// none. Call [`ListObj::grow_check`] first.
    pub fn insert(&mut self, pivot: &[u8], v: &[u8], place: Place, limit: NodeLimit) -> bool {
        let needle = Needle::new(pivot);
        let found = (0..self.node_count()).find_map(|i| {
            let lp = self.node(i);
            lp.first().and_then(|first| lp.find(first, needle.bytes, 0)).map(|p| (i, p))
        });
        let Some((node, pos)) = found else { return false };
        match &mut self.repr {
            Repr::Packed(lp) => {
                match place {
                    Place::Before => lp.insert_before(pos, v),
                    Place::After => lp.insert_after(pos, v),
                };
            }
            Repr::Quick(q) => q.insert_near(node, pos, place, v, limit),
        }
        true
    }

    /// Deletes `count` elements from offset `start` (clamped to the list). Call
    /// [`ListObj::shrink_check`] after.
    pub fn delete_range(&mut self, start: usize, count: usize, limit: NodeLimit) {
        let len = self.len();
        if start >= len {
            return;
        }
        let count = count.min(len - start);
        if count == 0 {
            return;
        }
        match &mut self.repr {
            Repr::Packed(lp) => lp.delete_range(start as i64, count),
            Repr::Quick(q) => q.delete_range(start, count, limit),
        }
    }

    /// LREM: removes up to `count` elements equal to `v` (0: all), scanning from `from`.
    /// Returns how many it removed. Call [`ListObj::shrink_check`] after.
    pub fn remove(&mut self, v: &[u8], count: usize, from: End, limit: NodeLimit) -> usize {
        let needle = Needle::new(v);
        let want = if count == 0 { usize::MAX } else { count };
        match &mut self.repr {
            Repr::Packed(lp) => remove_in_node(lp, needle, want, from),
            Repr::Quick(q) => q.remove(needle, want, from, limit),
        }
    }

    /// Checks the representation (tests): counts and sums, and with a `limit`, that nodes of
    /// two or more elements respect it.
    #[cfg(test)]
    pub fn check_invariants(&self, limit: Option<NodeLimit>) {
        if let Repr::Quick(q) = &self.repr {
            q.check_invariants(limit);
        }
    }
}

/// Removes up to `want` elements matching `needle` from one listpack, scanning from `from`.
fn remove_in_node(lp: &mut Listpack, needle: Needle<'_>, want: usize, from: End) -> usize {
    let mut removed = 0;
    match from {
        End::Head => {
            let mut at = lp.first();
            while removed < want {
                let Some(hit) = at.and_then(|p| lp.find(p, needle.bytes, 0)) else { break };
                at = lp.delete(hit);
                removed += 1;
            }
        }
        End::Tail => {
            // Deleting an entry moves only the entries after it, so the previous position
            // stays valid.
            let mut at = lp.last();
            while let Some(p) = at {
                if removed == want {
                    break;
                }
                at = lp.prev(p);
                if needle.matches(lp.get(p)) {
                    lp.delete(p);
                    removed += 1;
                }
            }
        }
    }
    removed
}

/// Elements from one position towards one end, across nodes.
pub struct Walk<'a> {
    list: &'a ListObj,
    node: usize,
    /// The next entry to yield, in `node`; None when done.
    pos: Option<Pos>,
    dir: Dir,
}

impl<'a> Iterator for Walk<'a> {
    type Item = LpEntry<'a>;

    fn next(&mut self) -> Option<LpEntry<'a>> {
        let p = self.pos?;
        let list: &'a ListObj = self.list;
        let lp = list.node(self.node);
        let entry = lp.get(p);
        self.pos = match self.dir {
            Dir::Forward => lp.next(p).or_else(|| {
                self.node += 1;
                (self.node < list.node_count()).then(|| list.node(self.node).first()).flatten()
            }),
            Dir::Backward => lp.prev(p).or_else(|| {
                let prev = self.node.checked_sub(1)?;
                self.node = prev;
                list.node(prev).last()
            }),
        };
        Some(entry)
    }
}
