//! The hash type: a map from field to value, both binary strings, in one of Valkey's two
//! encodings. This module owns the representation, the conversion between encodings and
//! random sampling; it knows nothing of RESP, commands or the keyspace (the thresholds come
//! in as [`Limits`], read from the configuration by the caller at write time).
//!
//! # Encodings
//!
//! - `listpack`: fields and values alternate in one [`Listpack`], in insertion order, exactly
//!   as Valkey lays them out (`f1 v1 f2 v2 ...`). Lookups walk it, comparing fields only. Used
//!   while the hash has at most `hash-max-listpack-entries` fields and no field or value is
//!   longer than `hash-max-listpack-value` bytes.
//! - `hashtable`: the keyspace's cache-line [`Table`] of [`HashEntry`] elements, each one thin
//!   pointer to one allocation holding the field and its value (layout in `entry.rs`).
//!
//! A hash with a field that has a TTL (hash field expiration) is always a hashtable, as in
//! Valkey 9.1: giving a listpack field a TTL converts the hash first. Expired fields stay
//! stored until active expiry reclaims them ([`HashObj::reclaim`]) and are hidden from
//! every read that takes `now_ms`; the stored count ([`AggType::len`], HLEN) still counts
//! them, as Valkey's does. Design of the per-field expiry in `volatile.rs`.
//!
//! A write converts listpack -> hashtable when it would break a limit, as Valkey does: before
//! writing, when one of its fields or values is too long (or the listpack would pass the 1 GiB
//! safety size), and after inserting, when the field count passed the entry limit. A hash
//! never converts back.
//!
//! # Layout
//! - `mod.rs`: [`HashObj`], reads, writes and conversion.
//! - `entry.rs`: [`HashEntry`], the one-allocation field + value.
//! - `random.rs`: HRANDFIELD's sampling.
//! - `volatile.rs`: per-hash bookkeeping of fields with a TTL and its design essay.
//! - `ttl.rs`: reads and writes of field expire times, and the reclaim step.
//! - `tests.rs`: seeded model tests of both encodings against `HashMap`.

mod entry;
mod random;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_ttl;
mod ttl;
mod volatile;

pub use entry::HashEntry;
pub use ttl::{FieldTtl, TtlWrite};
pub use volatile::field_expired;

use volatile::Volatile;

use crate::config::Config;
use crate::table::{hash_key, Table};
use crate::types::agg::{AggType, Kind};
use crate::types::listpack::{self, Listpack, LpEntry};

/// Valkey's `LISTPACK_MAX_SAFETY_SIZE`: a write that could take a listpack past this many
/// bytes converts the hash first.
const LISTPACK_BYTES_SAFE_MAX: usize = 1 << 30;

/// The conversion thresholds, read from the configuration at write time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `hash-max-listpack-entries`: most fields a listpack hash holds.
    pub entries_max: usize,
    /// `hash-max-listpack-value`: longest field or value (bytes) a listpack hash holds.
    pub value_bytes_max: usize,
}

impl Limits {
    pub fn from_config(c: &Config) -> Limits {
        Limits {
            entries_max: usize::try_from(c.hash_max_listpack_entries).unwrap_or(usize::MAX),
            value_bytes_max: usize::try_from(c.hash_max_listpack_value_bytes).unwrap_or(usize::MAX),
        }
    }
}

/// Head buckets a write to a hash's table moves, on top of the table's own step, while the
/// table is resizing. The keyspace's tables are also rehashed by a time event; a hash's table
/// is rehashed only by its writes, so they do a little more and a resize (during which both
/// bucket arrays are allocated) ends within about a quarter of the writes it would otherwise
/// take. Bounded work per write, like the table's own step.
const REHASH_BUCKETS_PER_WRITE: usize = 3;

/// The hashtable encoding: the table and the bytes its entries take, kept up to date on every
/// write so that MEMORY USAGE is O(1).
#[derive(Debug, Default)]
struct Big {
    table: Table<HashEntry>,
    /// Sum of `alloc_bytes` of every entry.
    entry_bytes: usize,
    /// The fields with a TTL (see `volatile.rs`).
    vol: Volatile,
}

impl Big {
    /// Inserts `e`; the entry it replaced, if any.
    fn replace(&mut self, e: HashEntry) -> Option<HashEntry> {
        self.entry_bytes += e.alloc_bytes();
        if let Some(at) = e.expire_at() {
            self.vol.count += 1;
            self.vol.lowered_to(at);
        }
        let old = self.table.insert(hash_key(e.field()), e);
        if let Some(old) = &old {
            self.forget(old);
        }
        self.rehash_more();
        old
    }

    /// Accounts for an entry leaving the table.
    fn forget(&mut self, old: &HashEntry) {
        self.entry_bytes -= old.alloc_bytes();
        if old.expire_at().is_some() {
            self.vol.count -= 1;
        }
    }

    fn remove(&mut self, field: &[u8]) -> bool {
        let removed = match self.table.remove(hash_key(field), field) {
            Some(old) => {
                self.forget(&old);
                true
            }
            None => false,
        };
        self.rehash_more();
        removed
    }

    fn rehash_more(&mut self) {
        if self.table.is_rehashing() {
            self.table.rehash_step(REHASH_BUCKETS_PER_WRITE);
        }
    }

    fn get(&self, field: &[u8]) -> Option<&HashEntry> {
        self.table.find(hash_key(field), field)
    }
}

impl Clone for Big {
    fn clone(&self) -> Big {
        let mut table = Table::with_capacity(self.table.len());
        for e in self.table.iter() {
            table.insert_new(hash_key(e.field()), e.clone());
        }
        Big { table, entry_bytes: self.entry_bytes, vol: self.vol.clone() }
    }
}

#[derive(Clone, Debug)]
enum Repr {
    Listpack(Listpack),
    /// Boxed: a small hash (the common case) then costs 16 bytes plus its listpack.
    Table(Box<Big>),
}

/// A hash value (see the module documentation). Never empty in the keyspace.
#[derive(Clone, Debug)]
pub struct HashObj {
    repr: Repr,
}

const _: () = assert!(std::mem::size_of::<HashObj>() == 16);

impl Default for HashObj {
    fn default() -> Self {
        HashObj::new()
    }
}

/// One field and its value, as read from either encoding (a listpack stores canonical
/// integers as integers; the hashtable stores integer values as integers).
pub type Pair<'a> = (LpEntry<'a>, LpEntry<'a>);

impl HashObj {
    /// An empty hash in the listpack encoding.
    pub fn new() -> HashObj {
        HashObj { repr: Repr::Listpack(Listpack::new()) }
    }

    pub fn is_listpack(&self) -> bool {
        matches!(self.repr, Repr::Listpack(_))
    }

    /// The listpack itself, in the listpack encoding (RDB and DUMP store its bytes).
    pub fn listpack(&self) -> Option<&Listpack> {
        match &self.repr {
            Repr::Listpack(lp) => Some(lp),
            Repr::Table(_) => None,
        }
    }

    /// The table's shape in the hashtable encoding (DEBUG HTSTATS-KEY).
    pub fn table_stats(&self, walk_chains: bool) -> Option<crate::table::TableStats> {
        match &self.repr {
            Repr::Listpack(_) => None,
            Repr::Table(big) => Some(big.table.stats(walk_chains)),
        }
    }

    /// The listpack position of `field`'s value.
    fn lp_value_pos(lp: &Listpack, field: &[u8]) -> Option<listpack::Pos> {
        let at = lp.find(lp.first()?, field, 1)?;
        Some(lp.next(at).expect("a hash listpack holds whole pairs"))
    }

    /// The value of `field`, unless it is missing or expired at `now_ms`.
    pub fn get(&self, field: &[u8], now_ms: i64) -> Option<LpEntry<'_>> {
        match &self.repr {
            Repr::Listpack(lp) => Self::lp_value_pos(lp, field).map(|p| lp.get(p)),
            Repr::Table(big) => big.get(field).filter(|e| live(e, now_ms)).map(HashEntry::value),
        }
    }

    /// Whether `field` is there and not expired at `now_ms`.
    pub fn contains(&self, field: &[u8], now_ms: i64) -> bool {
        match &self.repr {
            Repr::Listpack(lp) => lp.first().and_then(|p| lp.find(p, field, 1)).is_some(),
            Repr::Table(big) => big.get(field).is_some_and(|e| live(e, now_ms)),
        }
    }

    /// Converts to a hashtable first if writing these fields and values (HSET's arguments)
    /// would break the value limit or the listpack safety size (Valkey's
    /// `hashTypeTryConversion`). The entry limit is checked after each insert by [`set`].
    ///
    /// [`set`]: HashObj::set
    pub fn prepare_write<A: AsRef<[u8]>>(&mut self, items: &[A], limits: Limits) {
        let Repr::Listpack(lp) = &self.repr else { return };
        let mut total = lp.total_bytes();
        for item in items {
            let len = item.as_ref().len();
            if len > limits.value_bytes_max {
                self.convert();
                return;
            }
            total = total.saturating_add(len);
        }
        if total > LISTPACK_BYTES_SAFE_MAX {
            self.convert();
        }
    }

    /// Sets `field` to `value` (dropping any TTL it had, as HSET does); true when the field
    /// is new (or was expired). Converts to a hashtable when the field or value is too long
    /// for a listpack (HINCRBY* can write long values without [`HashObj::prepare_write`]) or
    /// when the field count is above the entry limit after the write.
    pub fn set(&mut self, field: &[u8], value: &[u8], limits: Limits) -> bool {
        self.set_with(field, value, TtlWrite::Clear, limits, i64::MIN)
    }

    /// Sets `field` to `value` with its TTL as `ttl` says (`now_ms` tells whether a field
    /// being kept is alive); true when the field is new or was expired.
    pub fn set_with(
        &mut self,
        field: &[u8],
        value: &[u8],
        ttl: TtlWrite,
        limits: Limits,
        now_ms: i64,
    ) -> bool {
        if let Repr::Listpack(_) = self.repr {
            if field.len() > limits.value_bytes_max
                || value.len() > limits.value_bytes_max
                || matches!(ttl, TtlWrite::At(_))
            {
                self.convert();
            }
        }
        let lp = match &mut self.repr {
            Repr::Listpack(lp) => lp,
            Repr::Table(big) => return ttl::table_set(big, field, value, ttl, now_ms),
        };
        let created = match Self::lp_value_pos(lp, field) {
            Some(p) => {
                lp.replace(p, value);
                false
            }
            None => {
                lp.push_back(field);
                lp.push_back(value);
                true
            }
        };
        // Checked after an update too (as Valkey does), so a lowered limit applies at the
        // next write of any kind.
        if lp.len() / 2 > limits.entries_max {
            self.convert();
        }
        created
    }

    /// Sets `field` to the integer `value`, keeping the TTL of a field alive at `now_ms`
    /// (HINCRBY); true when the field is new.
    pub fn set_int(&mut self, field: &[u8], value: i64, limits: Limits, now_ms: i64) -> bool {
        let mut buf = [0u8; listpack::INT_DECIMAL_BYTES_MAX];
        let text = LpEntry::Int(value).write_to(&mut buf);
        self.set_with(field, text, TtlWrite::Keep, limits, now_ms)
    }

    /// Removes `field` unless it is expired at `now_ms` (HDEL cannot delete an expired
    /// field: it is already gone to the client, and active expiry reclaims it); true when
    /// it removed a live field.
    pub fn remove_live(&mut self, field: &[u8], now_ms: i64) -> bool {
        if let Repr::Table(big) = &self.repr {
            if !big.get(field).is_some_and(|e| live(e, now_ms)) {
                return false;
            }
        }
        self.remove(field)
    }

    /// Removes `field`, expired or not; true when it was there.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match &mut self.repr {
            Repr::Listpack(lp) => {
                let Some(at) = lp.first().and_then(|p| lp.find(p, field, 1)) else {
                    return false;
                };
                let value_at = lp.delete(at).expect("a hash listpack holds whole pairs");
                lp.delete(value_at);
                true
            }
            Repr::Table(big) => big.remove(field),
        }
    }

    /// Every stored field with its value, expired ones included (persistence reads them with
    /// [`HashObj::iter_with_expire`]): insertion order for a listpack, bucket order for a
    /// table.
    pub fn iter(&self) -> Iter<'_> {
        match &self.repr {
            Repr::Listpack(lp) => Iter::Listpack(lp.iter()),
            Repr::Table(big) => Iter::Table(big.table.iter()),
        }
    }

    /// One step of HSCAN from `cursor`: calls `f` on some pairs and returns the next cursor
    /// (0 when done). A listpack hash gives every pair at once and cursor 0, as Valkey does.
    /// A table visits buckets until `f` has seen at least `count` items (a pair counts
    /// twice, field and value, as Valkey 7 counts its reply list) or `10 * count` buckets
    /// were visited, so a sparse table cannot make one call run long.
    /// Fields expired at `now_ms` are skipped.
    pub fn scan(&self, cursor: u64, count: usize, now_ms: i64, mut f: impl FnMut(Pair<'_>)) -> u64 {
        let big = match &self.repr {
            Repr::Listpack(_) => {
                self.iter().for_each(f);
                return 0;
            }
            Repr::Table(big) => big,
        };
        let mut cursor = cursor;
        let mut items = 0usize;
        let mut buckets_left = count.max(1).saturating_mul(10);
        loop {
            cursor = big.table.scan(cursor, |e| {
                if live(e, now_ms) {
                    items += 2;
                    f((LpEntry::Str(e.field()), e.value()));
                }
            });
            buckets_left -= 1;
            if cursor == 0 || items >= count || buckets_left == 0 {
                return cursor;
            }
        }
    }

    /// Converts a listpack hash to a hashtable (a no-op for a table).
    fn convert(&mut self) {
        let Repr::Listpack(lp) = &self.repr else { return };
        let mut big = Big {
            table: Table::with_capacity(lp.len() / 2),
            entry_bytes: 0,
            vol: Volatile::default(),
        };
        let mut entries = lp.iter();
        while let (Some(field), Some(value)) = (entries.next(), entries.next()) {
            let mut fbuf = [0u8; listpack::INT_DECIMAL_BYTES_MAX];
            let mut vbuf = [0u8; listpack::INT_DECIMAL_BYTES_MAX];
            let e = HashEntry::new(field.write_to(&mut fbuf), value.write_to(&mut vbuf));
            big.entry_bytes += e.alloc_bytes();
            big.table.insert_new(hash_key(e.field()), e);
        }
        self.repr = Repr::Table(Box::new(big));
    }
}

/// Whether a table entry is alive (not expired) at `now_ms`.
#[inline]
fn live(e: &HashEntry, now_ms: i64) -> bool {
    e.expire_at().is_none_or(|at| !field_expired(at, now_ms))
}

/// The pairs of a hash (see [`HashObj::iter`]).
pub enum Iter<'a> {
    Listpack(listpack::Iter<'a>),
    Table(crate::table::Iter<'a, HashEntry>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = Pair<'a>;

    fn next(&mut self) -> Option<Pair<'a>> {
        match self {
            Iter::Listpack(it) => Some((it.next()?, it.next()?)),
            Iter::Table(it) => it.next().map(|e| (LpEntry::Str(e.field()), e.value())),
        }
    }
}

impl AggType for HashObj {
    const KIND: Kind = Kind::Hash;

    fn len(&self) -> usize {
        match &self.repr {
            Repr::Listpack(lp) => lp.len() / 2,
            Repr::Table(big) => big.table.len(),
        }
    }

    fn encoding(&self) -> &'static str {
        match self.repr {
            Repr::Listpack(_) => "listpack",
            Repr::Table(_) => "hashtable",
        }
    }

    fn alloc_bytes(&self) -> usize {
        match &self.repr {
            Repr::Listpack(lp) => lp.alloc_bytes(),
            Repr::Table(big) => {
                crate::memory::size_class(std::mem::size_of::<Big>())
                    + big.table.memory_bytes()
                    + big.entry_bytes
            }
        }
    }

    fn free_effort(&self) -> usize {
        match &self.repr {
            Repr::Listpack(_) => 1,
            Repr::Table(big) => big.table.len(),
        }
    }
}
