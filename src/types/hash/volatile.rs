//! Hash field expiration: what a `hashtable`-encoded hash keeps about its fields with a TTL
//! ("volatile" fields), and the bounded reclaim step active expiry runs on it. The expire
//! time itself lives in the field's entry (`entry.rs`); this module owns the per-hash
//! bookkeeping and knows nothing of the keyspace, which tracks the hashes that have volatile
//! fields (`keyspace::field_expiry`).
//!
//! # Design: a lower bound and a resumable sweep, no per-field index
//!
//! Valkey 9 keeps, per hash, a "volatile set" of its fields ordered by expire time, and
//! counts 16 to 29 bytes per volatile field for it. Here a volatile field costs the 8 bytes
//! of its expire time in its own entry (plus the allocator's rounding), and the hash as a
//! whole a fixed [`Volatile`] of 40 bytes:
//!
//! ```text
//!  Volatile = | count: u64 | next_at_ms: i64 | cursor: u64 | pass_min_ms: i64 | marked |
//!              fields with   no volatile field  where the     least expire time  counted by
//!              a TTL         expires before     sweep stands  seen by this sweep the owner
//! ```
//!
//! `marked` is not this module's to interpret: the owner of the hash (the keyspace) keeps
//! in it whether it counts the hash among its keys with volatile items, so that its count
//! follows the hash wherever the hash moves (see `keyspace::keys`).
//!
//! - Reads need nothing more: a field is hidden once its own time has passed, checked on
//!   the entry a lookup finds anyway (lazy, as Valkey: reads never delete).
//! - Active expiry needs to find the expired fields without visiting every hash and every
//!   field each cycle. `next_at_ms` is a lower bound of the hash's expire times: nothing in
//!   the hash can have expired before it, so a hash whose bound is in the future costs one
//!   comparison. Once it has passed, [`Volatile`]'s sweep walks the table with a SCAN cursor
//!   a bounded number of buckets at a time (the caller's budget), removing the expired
//!   fields it meets; a sweep that reaches the end sets the bound to the least expire time
//!   it saw (`pass_min_ms`). A TTL set while a sweep runs lowers both, so the bound stays a
//!   true lower bound whatever the sweep missed behind its cursor.
//! - The cost is walking non-volatile fields of a hash that has a few volatile ones, once
//!   per time one of them is due: bounded per step, and paid only by hashes that mix both.
//!   Valkey pays for its ordered set on every TTL write instead; here a TTL write is an O(1)
//!   store into the entry.

/// Per-hash bookkeeping of volatile fields (see the module documentation).
#[derive(Clone, Debug)]
pub(super) struct Volatile {
    /// Fields with an expire time, expired or not, until they are removed.
    pub count: usize,
    /// No volatile field of the hash expires before this (unix ms); `i64::MAX` with none.
    pub next_at_ms: i64,
    /// The reclaim sweep's SCAN cursor; 0 between sweeps.
    pub cursor: u64,
    /// The least expire time the running sweep saw or was told of.
    pub pass_min_ms: i64,
    /// The owner's mark (see the module documentation).
    pub marked: bool,
}

impl Default for Volatile {
    fn default() -> Volatile {
        Volatile { count: 0, next_at_ms: i64::MAX, cursor: 0, pass_min_ms: i64::MAX, marked: false }
    }
}

impl Volatile {
    /// A field got the expire time `at_ms` (new or changed).
    pub fn lowered_to(&mut self, at_ms: i64) {
        self.next_at_ms = self.next_at_ms.min(at_ms);
        self.pass_min_ms = self.pass_min_ms.min(at_ms);
    }

    /// Whether a field may have expired at `now_ms` (one comparison).
    pub fn may_have_expired(&self, now_ms: i64) -> bool {
        self.count > 0 && self.next_at_ms < now_ms
    }

    /// A sweep reached the end of the table: the bound becomes the least time it saw.
    pub fn sweep_done(&mut self) {
        self.next_at_ms = if self.count == 0 { i64::MAX } else { self.pass_min_ms };
        self.pass_min_ms = i64::MAX;
        self.cursor = 0;
    }
}

/// Whether a field with expire time `at_ms` is expired at `now_ms`: strictly after its
/// time, as a key's (`keyspace::value::is_expired`).
#[inline]
pub fn field_expired(at_ms: i64, now_ms: i64) -> bool {
    now_ms > at_ms
}
