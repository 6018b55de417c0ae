//! One probe per key for read-modify-write: [`Table::probe`] finds where a key is (or that it
//! is absent) once, and the answer acts on that place without looking again: read or change
//! the element, replace it, remove it, or insert into the gap it left.
//!
//! A [`Found`] holds the element's location (table, head, depth, slot) and the table's
//! mutable borrow, so nothing can move the element between the probe and the action. The
//! incremental rehash step that every write owes (see rehash.rs) is paid after the action,
//! when the location is no longer needed; an [`Absent`] pays it before it inserts, as
//! [`Table::insert_new`] does.

use super::element::Loc;
use super::{Entry, Table};

/// Where a key stands in a table: present (with its place) or absent.
pub enum Probe<'a, E: Entry> {
    Found(Found<'a, E>),
    Absent(Absent<'a, E>),
}

/// A present element, located.
pub struct Found<'a, E: Entry> {
    table: &'a mut Table<E>,
    loc: Loc,
    hash: u64,
}

/// An absent key: inserting its element takes no second lookup.
pub struct Absent<'a, E: Entry> {
    table: &'a mut Table<E>,
    hash: u64,
}

impl<E: Entry> Table<E> {
    /// Looks `key` up once for whatever comes next (see the module documentation).
    #[inline]
    pub fn probe(&mut self, hash: u64, key: &[u8]) -> Probe<'_, E> {
        debug_assert_eq!(hash, E::key_hash(key), "hash does not match key");
        match self.locate_filtered(hash, key) {
            Some(loc) => Probe::Found(Found { table: self, loc, hash }),
            None => Probe::Absent(Absent { table: self, hash }),
        }
    }
}

impl<'a, E: Entry> Found<'a, E> {
    #[inline]
    pub fn get(&self) -> &E {
        self.table.elem_at(self.loc)
    }

    /// The element, mutably. The caller must not change its key.
    #[inline]
    pub fn get_mut(&mut self) -> &mut E {
        self.table.elem_at_mut(self.loc)
    }

    /// The element, mutably, for as long as the table's borrow lasts.
    #[inline]
    pub fn into_mut(self) -> &'a mut E {
        self.table.elem_at_mut(self.loc)
    }

    /// Puts `e` (with the same key) in the element's place; returns the old one.
    pub fn replace(self, e: E) -> E {
        debug_assert!(e.key() == self.get().key(), "replace with another key");
        let old = std::mem::replace(self.table.elem_at_mut(self.loc), e);
        self.table.rehash_step_for_write();
        old
    }

    /// Removes the element and returns it.
    pub fn remove(self) -> E {
        let e = self.table.remove_at(self.loc);
        self.table.rehash_step_for_write();
        e
    }

    /// Removes the element and returns it with the gap it leaves, so that a new element for
    /// the same key can go in without another lookup (a lazily expired key being rewritten).
    pub fn remove_leaving_gap(self) -> (E, Absent<'a, E>) {
        let e = self.table.remove_at(self.loc);
        (e, Absent { table: self.table, hash: self.hash })
    }
}

impl<'a, E: Entry> Absent<'a, E> {
    /// Inserts `e`, whose key must be the probed one; returns it, located.
    #[inline]
    pub fn insert(self, e: E) -> Found<'a, E> {
        debug_assert_eq!(self.hash, E::key_hash(e.key()), "insert of another key");
        let loc = self.table.insert_new_located(self.hash, e);
        Found { table: self.table, loc, hash: self.hash }
    }
}
