//! The set type: unordered, distinct, binary-safe members in one of Valkey's three encodings.
//! This module owns the encodings, the conversions between them and the element operations
//! (membership, add, remove, iteration, SSCAN steps, random picks); it knows nothing of RESP,
//! keys or commands. The size limits come from the caller ([`SetLimits`], read from the
//! configuration at each write), so a CONFIG SET takes effect on the next write.
//!
//! # Encodings
//!
//! ```text
//!  intset     every member is the canonical decimal form of an i64, at most
//!             set-max-intset-entries of them: a sorted array of 2-, 4- or 8-byte integers
//!             (`types::intset`), one allocation.
//!  listpack   at most set-max-listpack-entries members of at most set-max-listpack-value
//!             bytes each: Valkey's listpack (`types::listpack`), one allocation, unsorted.
//!  hashtable  anything else: the keyspace's cache-line `Table<Member>`, each member one
//!             thin pointer to one allocation of length + bytes (`member.rs`).
//! ```
//!
//! A write converts intset -> listpack, intset -> hashtable or listpack -> hashtable when it
//! would cross a limit, and never the other way, as Valkey does. Two commands build a new
//! value instead and so may pick a smaller encoding: SPOP with a count close to the set's size
//! keeps the few remaining members in a fresh set, and the *STORE commands build their result
//! from scratch (SINTERSTORE ends with an intset when every member is an integer).
//!
//! # Memory
//!
//! `SetObj` is 16 bytes (a tag and a thin pointer), boxed by the keyspace. A small set is that
//! box plus one intset or listpack allocation. A large one adds a boxed [`MemberTable`] (the
//! table header and a running count of member bytes, so [`AggType::alloc_bytes`] is O(1)),
//! the table's buckets (14-24 bytes per member) and one allocation per member (length byte +
//! bytes, in its size class).

mod member;
mod random;
#[cfg(test)]
mod tests;

use std::fmt;

use crate::config::Config;
use crate::table::{self, hash_key, Table};
use crate::types::agg::{AggType, Kind};
use crate::types::intset::{Intset, IntsetIter};
use crate::types::listpack::{
    self, entry_size_for, parse_canonical_int, Listpack, LpEntry, INT_DECIMAL_BYTES_MAX,
};
pub use member::Member;
pub use random::Popped;

/// A member as a set hands it out: an integer (intset, listpack integer entries) or bytes.
/// Integers stand for their canonical decimal form.
pub type Elem<'a> = LpEntry<'a>;

/// Valkey refuses to grow a listpack past 1 GiB (`LISTPACK_MAX_SAFETY_SIZE`).
const LISTPACK_SAFETY_BYTES: usize = 1 << 30;
/// Valkey caps set-max-intset-entries at 2^30 (an intset's length is a u32 of elements).
const INTSET_ENTRIES_CAP: usize = 1 << 30;

/// The configured encoding limits, read when a command writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetLimits {
    /// `set-max-intset-entries` (capped at 2^30).
    pub intset_entries: usize,
    /// `set-max-listpack-entries`.
    pub listpack_entries: usize,
    /// `set-max-listpack-value`.
    pub listpack_value_bytes: usize,
}

impl SetLimits {
    pub fn from_config(c: &Config) -> SetLimits {
        let size = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        SetLimits {
            intset_entries: size(c.set_max_intset_entries).min(INTSET_ENTRIES_CAP),
            listpack_entries: size(c.set_max_listpack_entries),
            listpack_value_bytes: size(c.set_max_listpack_value_bytes),
        }
    }
}

impl Default for SetLimits {
    /// Valkey's defaults: 512, 128, 64.
    fn default() -> SetLimits {
        SetLimits { intset_entries: 512, listpack_entries: 128, listpack_value_bytes: 64 }
    }
}

/// A set value (see the module documentation).
#[derive(Clone, Debug)]
pub struct SetObj {
    repr: Repr,
}

const _: () = assert!(std::mem::size_of::<SetObj>() == 16);

#[derive(Clone, Debug)]
enum Repr {
    Intset(Intset),
    Listpack(Listpack),
    Table(Box<MemberTable>),
}

/// The hashtable encoding: the table and the bytes its members' allocations take.
pub struct MemberTable {
    table: Table<Member>,
    /// Sum of `Member::alloc_bytes` over the members, kept in step by every insert/remove.
    member_bytes: usize,
}

impl MemberTable {
    fn with_capacity(capacity: usize) -> MemberTable {
        MemberTable { table: Table::with_capacity(capacity), member_bytes: 0 }
    }

    fn contains(&self, m: &[u8]) -> bool {
        self.table.find(hash_key(m), m).is_some()
    }

    /// Adds `m`; false if it was there.
    fn insert(&mut self, m: &[u8]) -> bool {
        let hash = hash_key(m);
        if self.table.find(hash, m).is_some() {
            return false;
        }
        self.insert_new_hashed(hash, Member::new(m));
        true
    }

    /// Adds a member known to be absent.
    fn insert_new(&mut self, member: Member) {
        self.insert_new_hashed(hash_key(member.bytes()), member);
    }

    fn insert_new_hashed(&mut self, hash: u64, member: Member) {
        self.member_bytes += member.alloc_bytes();
        self.table.insert_new(hash, member);
    }

    fn remove(&mut self, m: &[u8]) -> Option<Member> {
        let member = self.table.remove(hash_key(m), m)?;
        self.member_bytes -= member.alloc_bytes();
        Some(member)
    }
}

impl Clone for MemberTable {
    fn clone(&self) -> MemberTable {
        let mut copy = MemberTable::with_capacity(self.table.len());
        for m in self.table.iter() {
            copy.insert_new(m.clone());
        }
        copy
    }
}

impl fmt::Debug for MemberTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.table.iter()).finish()
    }
}

/// The decimal form of an integer member, on the stack.
fn int_bytes(v: i64, buf: &mut [u8; INT_DECIMAL_BYTES_MAX]) -> &[u8] {
    Elem::Int(v).write_to(buf)
}

impl SetObj {
    /// An empty intset-encoded set (it must not be stored empty).
    pub fn new_intset() -> SetObj {
        SetObj { repr: Repr::Intset(Intset::new()) }
    }

    /// An empty listpack-encoded set.
    pub fn new_listpack() -> SetObj {
        SetObj { repr: Repr::Listpack(Listpack::new()) }
    }

    /// An empty hashtable-encoded set with room for `capacity` members.
    pub fn new_table(capacity: usize) -> SetObj {
        SetObj { repr: Repr::Table(Box::new(MemberTable::with_capacity(capacity))) }
    }

    /// The empty set a write creates for `first` when about `size_hint` members are coming
    /// (Valkey's `setTypeCreate`): an intset if `first` is an integer and the hint fits one,
    /// else a listpack if the hint fits one, else a table sized for the hint.
    pub fn for_first_member(first: &[u8], size_hint: usize, lim: &SetLimits) -> SetObj {
        if parse_canonical_int(first).is_some() && size_hint <= lim.intset_entries {
            SetObj::new_intset()
        } else if size_hint <= lim.listpack_entries {
            SetObj::new_listpack()
        } else {
            SetObj::new_table(size_hint)
        }
    }

    /// Converts to a table up front when `size_hint` more members would not fit the current
    /// compact encoding anyway (Valkey's `setTypeMaybeConvert`, before SADD's loop).
    pub fn prepare_for(&mut self, size_hint: usize, lim: &SetLimits) {
        let too_many = match &self.repr {
            Repr::Intset(_) => size_hint > lim.intset_entries,
            Repr::Listpack(_) => size_hint > lim.listpack_entries,
            Repr::Table(_) => false,
        };
        if too_many {
            self.convert_to_table(size_hint);
        }
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Intset(is) => is.len(),
            Repr::Listpack(lp) => lp.len(),
            Repr::Table(t) => t.table.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// OBJECT ENCODING's name.
    pub fn encoding_name(&self) -> &'static str {
        match &self.repr {
            Repr::Intset(_) => "intset",
            Repr::Listpack(_) => "listpack",
            Repr::Table(_) => "hashtable",
        }
    }

    pub fn contains(&self, m: &[u8]) -> bool {
        match &self.repr {
            Repr::Intset(is) => parse_canonical_int(m).is_some_and(|v| is.contains(v)),
            Repr::Listpack(lp) => lp.first().is_some_and(|p| lp.find(p, m, 0).is_some()),
            Repr::Table(t) => t.contains(m),
        }
    }

    /// [`SetObj::contains`] for an element of another set (integers stay integers for an
    /// intset).
    pub fn contains_elem(&self, e: Elem<'_>) -> bool {
        match (&self.repr, e) {
            (Repr::Intset(is), Elem::Int(v)) => is.contains(v),
            (_, Elem::Int(v)) => self.contains(int_bytes(v, &mut [0; INT_DECIMAL_BYTES_MAX])),
            (_, Elem::Str(s)) => self.contains(s),
        }
    }

    /// Adds `m`, converting the encoding first when it would cross a limit. False if `m` was
    /// already a member.
    pub fn add(&mut self, m: &[u8], lim: &SetLimits) -> bool {
        let lp_len = match &mut self.repr {
            Repr::Table(t) => return t.insert(m),
            Repr::Intset(_) => {
                return match parse_canonical_int(m) {
                    Some(v) => self.add_int(v, lim),
                    None => self.add_string_to_intset(m, lim),
                }
            }
            Repr::Listpack(lp) => {
                if lp.first().is_some_and(|p| lp.find(p, m, 0).is_some()) {
                    return false;
                }
                let len = lp.len();
                if len < lim.listpack_entries
                    && m.len() <= lim.listpack_value_bytes
                    && lp.total_bytes() + m.len() <= LISTPACK_SAFETY_BYTES
                {
                    lp.push_back(m);
                    return true;
                }
                len
            }
        };
        self.convert_to_table(lp_len + 1);
        self.table_mut().insert_new(Member::new(m));
        true
    }

    /// Adds an integer member (as [`SetObj::add`] of its decimal form).
    pub fn add_int(&mut self, v: i64, lim: &SetLimits) -> bool {
        let Repr::Intset(is) = &mut self.repr else {
            return self.add(int_bytes(v, &mut [0; INT_DECIMAL_BYTES_MAX]), lim);
        };
        if !is.insert(v) {
            return false;
        }
        if is.len() > lim.intset_entries {
            self.convert_to_table(self.len());
        }
        true
    }

    /// Adds an element of another set.
    pub fn add_elem(&mut self, e: Elem<'_>, lim: &SetLimits) -> bool {
        match e {
            Elem::Int(v) => self.add_int(v, lim),
            Elem::Str(s) => self.add(s, lim),
        }
    }

    /// An intset takes a member that is not an integer: it becomes a listpack if every
    /// member, the new one included, fits one (judged on the longest integer, as Valkey
    /// does), else a table.
    fn add_string_to_intset(&mut self, m: &[u8], lim: &SetLimits) -> bool {
        let Repr::Intset(is) = &self.repr else { unreachable!("called on an intset") };
        let n = is.len();
        let (mut widest_digits, mut estimate_bytes) = (0, 0);
        let mut buf = [0; INT_DECIMAL_BYTES_MAX];
        for v in [is.min(), is.max()].into_iter().flatten() {
            let digits = int_bytes(v, &mut buf);
            widest_digits = widest_digits.max(digits.len());
            estimate_bytes = estimate_bytes.max(entry_size_for(digits).saturating_mul(n));
        }
        let fits_listpack = n < lim.listpack_entries
            && m.len() <= lim.listpack_value_bytes
            && widest_digits <= lim.listpack_value_bytes
            && estimate_bytes.saturating_add(m.len()) <= LISTPACK_SAFETY_BYTES;
        if fits_listpack {
            let mut lp = Listpack::new();
            for v in is.iter() {
                lp.push_back_int(v);
            }
            lp.push_back(m);
            self.repr = Repr::Listpack(lp);
        } else {
            self.convert_to_table(n + 1);
            self.table_mut().insert_new(Member::new(m));
        }
        true
    }

    /// Removes `m`; false if it was not a member. The encoding never changes.
    pub fn remove(&mut self, m: &[u8]) -> bool {
        match &mut self.repr {
            Repr::Intset(is) => parse_canonical_int(m).is_some_and(|v| is.remove(v)),
            Repr::Listpack(lp) => match lp.first().and_then(|p| lp.find(p, m, 0)) {
                Some(p) => {
                    lp.delete(p);
                    true
                }
                None => false,
            },
            Repr::Table(t) => t.remove(m).is_some(),
        }
    }

    /// [`SetObj::remove`] for an element of another set.
    pub fn remove_elem(&mut self, e: Elem<'_>) -> bool {
        match (&mut self.repr, e) {
            (Repr::Intset(is), Elem::Int(v)) => is.remove(v),
            (_, Elem::Int(v)) => self.remove(int_bytes(v, &mut [0; INT_DECIMAL_BYTES_MAX])),
            (_, Elem::Str(s)) => self.remove(s),
        }
    }

    /// Every member once, in the encoding's order (ascending for an intset, insertion order
    /// for a listpack, bucket order for a table).
    /// The listpack itself, in the listpack encoding (DEBUG LISTPACK).
    pub fn listpack(&self) -> Option<&Listpack> {
        match &self.repr {
            Repr::Listpack(lp) => Some(lp),
            _ => None,
        }
    }

    /// The table's shape in the hashtable encoding (DEBUG HTSTATS-KEY).
    pub fn table_stats(&self, walk_chains: bool) -> Option<crate::table::TableStats> {
        match &self.repr {
            Repr::Table(t) => Some(t.table.stats(walk_chains)),
            _ => None,
        }
    }

    /// The intset itself, in the intset encoding (RDB and DUMP store its bytes).
    pub fn intset(&self) -> Option<&Intset> {
        match &self.repr {
            Repr::Intset(is) => Some(is),
            _ => None,
        }
    }

    pub fn iter(&self) -> Iter<'_> {
        match &self.repr {
            Repr::Intset(is) => Iter::Intset(is.iter()),
            Repr::Listpack(lp) => Iter::Listpack(lp.iter()),
            Repr::Table(t) => Iter::Table(t.table.iter()),
        }
    }

    /// Becomes an intset if every member is an integer and there are few enough of them
    /// (Valkey's `maybeConvertToIntset`, for SINTERSTORE's result).
    pub fn to_intset_if_fits(&mut self, lim: &SetLimits) {
        if matches!(self.repr, Repr::Intset(_)) || self.len() > lim.intset_entries {
            return;
        }
        let mut is = Intset::new();
        for e in self.iter() {
            let Some(v) = e.as_int() else { return };
            is.insert(v);
        }
        self.repr = Repr::Intset(is);
    }

    /// One step of SSCAN: calls `f` on about `count` members and returns the next cursor, 0
    /// when done. An intset or a listpack is returned whole at once (cursor 0), as in Valkey;
    /// a table is scanned with the keyspace's reverse-binary cursor, visiting at most
    /// `10 * count` buckets per call.
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(Elem<'_>)) -> u64 {
        let Repr::Table(t) = &self.repr else {
            self.iter().for_each(f);
            return 0;
        };
        let mut cursor = cursor;
        let mut visited = 0usize;
        let mut buckets_left = count.max(1).saturating_mul(10);
        loop {
            cursor = t.table.scan(cursor, |m| {
                visited += 1;
                f(Elem::Str(m.bytes()));
            });
            buckets_left -= 1;
            if cursor == 0 || visited >= count || buckets_left == 0 {
                return cursor;
            }
        }
    }

    /// Rebuilds the set as a table with room for `capacity` members.
    fn convert_to_table(&mut self, capacity: usize) {
        let mut t = MemberTable::with_capacity(capacity.max(self.len()));
        let mut buf = [0; INT_DECIMAL_BYTES_MAX];
        for e in self.iter() {
            t.insert_new(Member::new(e.write_to(&mut buf)));
        }
        self.repr = Repr::Table(Box::new(t));
    }

    fn table_mut(&mut self) -> &mut MemberTable {
        match &mut self.repr {
            Repr::Table(t) => t,
            _ => unreachable!("the set was just converted to a table"),
        }
    }

    /// Checks the encoding's invariants (tests): members distinct, counts in step.
    #[cfg(test)]
    pub fn check_invariants(&self) {
        let mut seen = std::collections::HashSet::new();
        for e in self.iter() {
            assert!(seen.insert(e.to_vec()), "duplicate member {e:?}");
        }
        assert_eq!(seen.len(), self.len());
        match &self.repr {
            Repr::Intset(is) => assert!(is.iter().zip(is.iter().skip(1)).all(|(a, b)| a < b)),
            Repr::Listpack(lp) => assert!(lp.iter().all(|e| match e {
                Elem::Str(s) => parse_canonical_int(s).is_none(),
                Elem::Int(_) => true,
            })),
            Repr::Table(t) => {
                let bytes: usize = t.table.iter().map(Member::alloc_bytes).sum();
                assert_eq!(bytes, t.member_bytes);
            }
        }
    }
}

impl AggType for SetObj {
    const KIND: Kind = Kind::Set;

    fn len(&self) -> usize {
        SetObj::len(self)
    }

    fn encoding(&self) -> &'static str {
        self.encoding_name()
    }

    fn alloc_bytes(&self) -> usize {
        match &self.repr {
            Repr::Intset(is) => is.alloc_bytes(),
            Repr::Listpack(lp) => lp.alloc_bytes(),
            Repr::Table(t) => {
                crate::memory::size_class(std::mem::size_of::<MemberTable>())
                    + t.table.memory_bytes()
                    + t.member_bytes
            }
        }
    }

    fn free_effort(&self) -> usize {
        match &self.repr {
            Repr::Table(t) => t.table.len(),
            _ => 1,
        }
    }
}

/// The members of a set (see [`SetObj::iter`]).
pub enum Iter<'a> {
    Intset(IntsetIter<'a>),
    Listpack(listpack::Iter<'a>),
    Table(table::Iter<'a, Member>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = Elem<'a>;

    fn next(&mut self) -> Option<Elem<'a>> {
        match self {
            Iter::Intset(it) => it.next().map(Elem::Int),
            Iter::Listpack(it) => it.next(),
            Iter::Table(it) => it.next().map(|m| Elem::Str(m.bytes())),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Iter::Intset(it) => it.size_hint(),
            Iter::Listpack(it) => it.size_hint(),
            Iter::Table(it) => it.size_hint(),
        }
    }
}
