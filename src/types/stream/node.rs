//! One node of a stream: a listpack in Valkey's stream layout (drawn in the module essay).
//! This file owns the layout: building a node, appending an entry, reading the master entry
//! and the entry headers, stepping from entry to entry in both directions, and the in-place
//! edits (flags, counters). It knows nothing of the other nodes, of the stream's metadata or
//! of node limits.
//!
//! Every function here takes a node that is known to be well formed (built here, or checked
//! by `validate.rs` before it was accepted); a malformed node is a broken invariant and
//! panics. Positions ([`Pos`]) are invalidated by any edit, as in the listpack.

use super::id::StreamId;
use crate::types::listpack::{Listpack, LpEntry, Pos, INT_DECIMAL_BYTES_MAX};

/// Entry flags (an integer element at the start of each entry).
pub const FLAG_NONE: i64 = 0;
/// The entry is a tombstone: XDEL or an exact trim removed it.
pub const FLAG_DELETED: i64 = 1;
/// The entry has the master entry's fields: it stores only its values.
pub const FLAG_SAMEFIELDS: i64 = 2;

/// Elements of every entry besides its fields and values: flags, ms-diff, seq-diff.
pub const ENTRY_FIXED_ELEMENTS: usize = 3;

/// The integer at `p` of a node known to be well formed.
pub fn int_at(lp: &Listpack, p: Pos) -> i64 {
    lp.get(p).as_int().expect("stream node: an integer element was expected")
}

/// The element after `p`, which a well-formed node always has.
fn after(lp: &Listpack, p: Pos) -> Pos {
    lp.next(p).expect("stream node ends inside an entry")
}

/// A count from a well-formed node (never negative there).
fn count_at(lp: &Listpack, p: Pos) -> u64 {
    u64::try_from(int_at(lp, p)).expect("stream node: negative count")
}

/// Replace the integer at `p` by `v`; returns `p`. Later positions move if the width
/// changes (e.g. 127 to 128).
fn set_int(lp: &mut Listpack, p: Pos, v: i64) -> Pos {
    let mut buf = [0u8; INT_DECIMAL_BYTES_MAX];
    let digits = LpEntry::Int(v).write_to(&mut buf);
    lp.replace(p, digits)
}

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).expect("stream entry element count fits i64")
}

/// The master entry of a node: its counters and where its fields are.
#[derive(Clone, Copy, Debug)]
pub struct Master {
    /// Live entries in the node.
    pub count: u64,
    /// Entries in the node marked deleted.
    pub deleted: u64,
    /// Number of master fields.
    pub field_count: usize,
    /// The first master field, or the terminating 0 when there are none.
    pub fields: Pos,
}

impl Master {
    pub fn read(lp: &Listpack) -> Master {
        let p = lp.first().expect("stream node is empty");
        let count = count_at(lp, p);
        let p = after(lp, p);
        let deleted = count_at(lp, p);
        let p = after(lp, p);
        let field_count = usize::try_from(count_at(lp, p)).expect("field count fits usize");
        Master { count, deleted, field_count, fields: after(lp, p) }
    }

    /// Entries in the node, tombstones included.
    pub fn entries(&self) -> u64 {
        self.count + self.deleted
    }

    /// The terminating 0 of the master entry.
    fn terminator(&self, lp: &Listpack) -> Pos {
        (0..self.field_count).fold(self.fields, |p, _| after(lp, p))
    }

    /// The flags of the node's first entry (None if the node has no entries).
    pub fn first_entry(&self, lp: &Listpack) -> Option<Pos> {
        lp.next(self.terminator(lp))
    }
}

/// The flags of the node's last entry (None if it has none).
pub fn last_entry(lp: &Listpack) -> Option<Pos> {
    entry_ending_at(lp, lp.last().expect("stream node is empty"))
}

/// The flags of the entry whose lp-count is at `lp_count` (None when `lp_count` is the
/// master entry's terminating 0). The lp-count says how many elements precede it in its
/// entry, so the walk back is exact.
fn entry_ending_at(lp: &Listpack, lp_count: Pos) -> Option<Pos> {
    let n = count_at(lp, lp_count);
    if n == 0 {
        return None;
    }
    let mut p = lp_count;
    for _ in 0..n {
        p = lp.prev(p).expect("stream entry's lp-count reaches before the node");
    }
    Some(p)
}

/// An entry's header, read from its flags element.
#[derive(Clone, Copy, Debug)]
pub struct Head {
    pub flags: i64,
    pub id: StreamId,
    /// Number of field-value pairs.
    pub field_count: usize,
    /// The flags element.
    pub at: Pos,
    /// The first element after the header: the first field (or, with SAMEFIELDS, the first
    /// value); the lp-count when the entry has no fields.
    pub body: Pos,
}

impl Head {
    /// Read the entry whose flags are at `at`, in a node keyed `master_id` with `master`.
    pub fn read(lp: &Listpack, master_id: StreamId, master: &Master, at: Pos) -> Head {
        let flags = int_at(lp, at);
        let p = after(lp, at);
        let ms = master_id.ms.wrapping_add(int_at(lp, p) as u64);
        let p = after(lp, p);
        let seq = master_id.seq.wrapping_add(int_at(lp, p) as u64);
        let mut body = after(lp, p);
        let field_count = if flags & FLAG_SAMEFIELDS != 0 {
            master.field_count
        } else {
            let n = usize::try_from(count_at(lp, body)).expect("field count fits usize");
            body = after(lp, body);
            n
        };
        Head { flags, id: StreamId::new(ms, seq), field_count, at, body }
    }

    pub fn is_deleted(&self) -> bool {
        self.flags & FLAG_DELETED != 0
    }

    pub fn same_fields(&self) -> bool {
        self.flags & FLAG_SAMEFIELDS != 0
    }

    /// Elements between the header and the lp-count.
    fn body_elements(&self) -> usize {
        if self.same_fields() {
            self.field_count
        } else {
            self.field_count * 2
        }
    }

    /// The entry's lp-count element.
    pub fn lp_count(&self, lp: &Listpack) -> Pos {
        (0..self.body_elements()).fold(self.body, |p, _| after(lp, p))
    }

    /// The flags of the next entry in the node.
    pub fn next(&self, lp: &Listpack) -> Option<Pos> {
        lp.next(self.lp_count(lp))
    }

    /// The flags of the previous entry in the node.
    pub fn prev(&self, lp: &Listpack) -> Option<Pos> {
        let before = lp.prev(self.at).expect("stream entry without a master entry before it");
        entry_ending_at(lp, before)
    }
}

/// The value of an entry's lp-count: the elements before it in the entry.
pub fn lp_count_for(field_count: usize, same_fields: bool) -> usize {
    if same_fields {
        ENTRY_FIXED_ELEMENTS + field_count
    } else {
        ENTRY_FIXED_ELEMENTS + 1 + field_count * 2
    }
}

/// A new node for the entry `id` with `pairs` (field, value, ...): the master entry takes
/// the entry's fields, and the entry (delta 0-0 from the node's key, which is `id`) is
/// written with SAMEFIELDS.
pub fn new_node<V: AsRef<[u8]>>(id: StreamId, pairs: &[V]) -> Listpack {
    let mut lp = Listpack::new();
    lp.push_back_int(1);
    lp.push_back_int(0);
    lp.push_back_int(to_i64(pairs.len() / 2));
    for field in pairs.iter().step_by(2) {
        lp.push_back(field.as_ref());
    }
    lp.push_back_int(0);
    push_entry(&mut lp, id, id, pairs, true);
    lp
}

/// Append the entry `id` with `pairs` to a node keyed `master_id`, counting it in the
/// master entry; SAMEFIELDS when its fields are the master's, in the same order.
pub fn append<V: AsRef<[u8]>>(lp: &mut Listpack, master_id: StreamId, id: StreamId, pairs: &[V]) {
    let master = Master::read(lp);
    let same = master.field_count * 2 == pairs.len() && {
        let mut p = master.fields;
        pairs.iter().step_by(2).all(|field| {
            let hit = lp.get(p).eq_bytes(field.as_ref());
            p = after(lp, p);
            hit
        })
    };
    let first = lp.first().expect("stream node is empty");
    set_int(lp, first, count_i64(master.count + 1));
    push_entry(lp, master_id, id, pairs, same);
}

/// Write one entry at the end of the node (see the essay for its elements).
fn push_entry<V: AsRef<[u8]>>(
    lp: &mut Listpack,
    master_id: StreamId,
    id: StreamId,
    pairs: &[V],
    same_fields: bool,
) {
    let field_count = pairs.len() / 2;
    lp.push_back_int(if same_fields { FLAG_SAMEFIELDS } else { FLAG_NONE });
    // The deltas are u64 differences kept as i64 two's complement: a seq below the
    // master's (a later millisecond) is stored negative, as Valkey stores it.
    lp.push_back_int(id.ms.wrapping_sub(master_id.ms) as i64);
    lp.push_back_int(id.seq.wrapping_sub(master_id.seq) as i64);
    if !same_fields {
        lp.push_back_int(to_i64(field_count));
    }
    for pair in pairs.chunks_exact(2) {
        if !same_fields {
            lp.push_back(pair[0].as_ref());
        }
        lp.push_back(pair[1].as_ref());
    }
    lp.push_back_int(to_i64(lp_count_for(field_count, same_fields)));
}

fn count_i64(n: u64) -> i64 {
    i64::try_from(n).expect("stream node count fits i64")
}

/// Write the master entry's live and deleted counters.
pub fn set_counts(lp: &mut Listpack, count: u64, deleted: u64) {
    let first = lp.first().expect("stream node is empty");
    let p = set_int(lp, first, count_i64(count));
    let p = after(lp, p);
    set_int(lp, p, count_i64(deleted));
}

/// Mark the entry whose flags are at `at` deleted (the counters are the caller's).
pub fn mark_deleted(lp: &mut Listpack, at: Pos) {
    let flags = int_at(lp, at);
    debug_assert!(flags & FLAG_DELETED == 0, "stream entry deleted twice");
    set_int(lp, at, flags | FLAG_DELETED);
}
