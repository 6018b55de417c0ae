//! A generic open hashtable of 64-byte, cache-line buckets.
//!
//! This module owns the bucket memory layout, chaining, incremental rehashing, the SCAN cursor,
//! random sampling, iteration and prefetching. It knows nothing about values, types or expiry:
//! an element is an opaque pointer-sized [`Entry`] that can show its key. It must not allocate
//! anything but bucket arrays and child buckets, and it never reads a clock.
//!
//! # Design
//!
//! ## The bucket
//!
//! A bucket is one cache line: a metadata word and seven pointer-sized slots.
//!
//! ```text
//!  byte 0        8        16       24       32       40       48       56       64
//!       +--------+--------+--------+--------+--------+--------+--------+--------+
//!       |  meta  | slot 0 | slot 1 | slot 2 | slot 3 | slot 4 | slot 5 | slot 6 |
//!       +--------+--------+--------+--------+--------+--------+--------+--------+
//!                                                                   ^ child pointer when
//!                                                                     the "chained" bit is set
//! ```
//!
//! The meta word, least significant byte first (as it sits in memory on little endian):
//!
//! ```text
//!  byte:  0                        1     2     3     4     5     6     7
//!       +------------------------+-----+-----+-----+-----+-----+-----+-----+
//!       | p6 p5 p4 p3 p2 p1 p0 c | h0  | h1  | h2  | h3  | h4  | h5  | h6  |
//!       +------------------------+-----+-----+-----+-----+-----+-----+-----+
//!   c  (bit 0):      the bucket is chained; slot 6 holds a pointer to a child bucket
//!   pi (bit 1 + i):  slot i holds an element
//!   hi (byte 1 + i): secondary hash of the element in slot i (top 8 bits of its hash);
//!                    zero when the slot is empty, so an empty bucket has meta == 0
//! ```
//!
//! A lookup hashes the key once ([`hash_key`]: ahash with a per-process random seed). The low
//! bits of the hash pick the bucket, the top 8 bits are the secondary hash. The secondary hash is
//! compared against all seven bytes at once with SWAR arithmetic on the meta word
//! (`Bucket::matches`); only slots whose byte matches are dereferenced. A lookup that gets past
//! the miss filter (below) therefore touches one bucket line in the common case and, with 7
//! present elements, dereferences a wrong element with probability 7/256 ≈ 2.7%.
//!
//! ## The miss filter
//!
//! Beside each array of head buckets lies an array of 32-bit filter words, one per head, index
//! for index (`filter.rs`). Sixteen heads share one line of filter words:
//!
//! ```text
//!  head buckets   [ head 0 (64 B) ][ head 1 (64 B) ] ... [ head 15 ][ head 16 ] ...
//!  filter words   [ f0 | f1 | ... | f15 ] [ f16 | ... ]      4 B each, 64 B per 16 heads
//!
//!  f (bit 31 ... bit 0): for every element of the chain (head and children) with secondary
//!                        hash h, bits lo = h mod 32 and (lo + 1 + h / 32) mod 32 are set
//! ```
//!
//! A lookup reads the filter word first. If either of the two bits of its secondary hash is
//! clear, no element of the chain can have that secondary hash, and the key is absent: the
//! bucket line is never read. Why this pays:
//!
//! - At 1M keys the head buckets are 16 MiB and the filter words 1 MiB. A bucket line is a
//!   miss to memory (and a TLB miss) for almost every lookup; the filter words are 16 times
//!   denser and mostly stay in the L2 and L3 caches. Without the filter a plain miss cost about
//!   45 ns (level with std's `HashMap`, which hashes with SipHash but finds its 2 MiB of control
//!   bytes in cache); with it, about 19 ns (`benches/hashtable.rs`).
//! - With λ elements per head (λ = 7 × fill), the filter lets through this share of lookups
//!   for absent keys (simulated; the floor is the chance that some element has the same
//!   secondary hash, which the bucket check would find anyway):
//!
//!   ```text
//!    fill   λ     passed    (one bit)   (16-bit word, two bits)
//!    38.5%  2.7    3.2%       8.1%        10%
//!    55%    3.85   5.5%      11.4%        17%
//!    69%    4.8    7.8%      13.9%        22%
//!    77%    5.4    9.3%      15.5%        26%
//!   ```
//!
//!   A pass is a mispredicted branch followed by the bucket load it tried to avoid, which is why
//!   a 16-bit word did worse than no filter in a trial; 32 bits pass few enough.
//! - The bits come from the secondary hash only, so that a word can be rebuilt from the chain's
//!   meta words without reading any key (`filter::chain_filter`). The 256 secondary hashes map
//!   to 256 different pairs of bits (see `filter_bits`). Two bits pass half as many lookups as
//!   one; a third chosen from the same eight bits gains little.
//! - An insert sets its element's bits. A removal leaves them (other elements may share them, so
//!   they cannot just be cleared): a stale bit only lets more absent keys through, never turns a
//!   present one away. Rebuilding the word in the removal measured 1.3 to 1.7 times the delete
//!   time (the removal otherwise never touches the filter line, and the write to it stalled the
//!   loop), so the words are rebuilt elsewhere: a resize writes fresh words for every head it
//!   fills, and [`Table::refresh_filters`] rebuilds a slice of them per call, from a cursor
//!   that wraps around (the server's time events sweep each keyspace table every few seconds;
//!   the tables inside hashes, sets and sorted sets are refreshed by their resizes only).
//! - Cost: 4 bytes per head, 0.83 bytes per key at the 632,000-key benchmark (2^17 heads);
//!   one more load for a hit, which the CPU issues in parallel with the bucket load since the
//!   branch predicts "maybe present" for hits (hits measured 3–5% slower); and for an insert
//!   the write of the word, whose line the insert prefetches first (inserts about 10% slower).
//! - Writes look the key up without the filter: they need the bucket line anyway.
//! - A batch prefetches each key's filter word together with its bucket line (step 1 below).
//!
//! ## Chaining
//!
//! A bucket whose seven slots are full and which must take one more element gets a child bucket:
//! the element in slot 6 moves to the child's slot 0, the new element goes to the child's slot
//! 1, slot 6 now points to the child and the chained bit is set. A chain of `c` buckets holds at
//! most `6c + 1` elements.
//!
//! ```text
//!  head [m|e|e|e|e|e|e|*]--> child [m|e|e|e|e|e|e|*]--> child [m|e|e|.|.|.|.]
//! ```
//!
//! Invariants of a chain (checked by [`Table::check_invariants`]): every bucket but the last is
//! full (slots 0..=5 present); the last bucket of a chain of two or more holds at least two
//! elements. KeyEvent keeps them: a hole in an inner bucket is filled from the last bucket, and a
//! last bucket left with one element is folded back into its parent's slot 6. So no empty child
//! buckets exist, a chain never grows longer than needed, and an empty head has `meta == 0`.
//!
//! ## Incremental rehashing
//!
//! There are two bucket arrays: `tables[0]`, and during a resize the new `tables[1]`. Head
//! buckets `0..rehash_idx` of table 0 have been moved and are empty; new elements always go to
//! table 1. Each insert or remove first does one rehash step: it moves one non-empty head
//! bucket with its chain (re-hashing each key with [`Entry::key_hash`]), or skips up to
//! `REHASH_EMPTY_VISITS` empty heads, whichever comes first. The server's time event calls
//! [`Table::rehash_step`] for more. A resize is never done at once. Lookups take `&self` and do
//! not rehash; they check table 0 only if the head bucket there is not yet moved.
//!
//! Rehashing finishes as soon as table 0 holds no element (a shrinking table skips the empty
//! tail of its old array). A resize is not started while one is in progress. If table 1 goes past
//! its own grow limit during a resize (only possible after a shrink followed by a burst of
//! inserts), every write moves `REHASH_CATCHUP` times more buckets until the resize is done,
//! and the next resize starts from there.
//!
//! ## Fill limits and memory
//!
//! Fill = elements / (7 × head buckets). Elements per head bucket are Poisson(7 × fill):
//!
//! ```text
//!  fill   chained heads  child buckets/head  bucket lines per      table bytes per element
//!                                             unfiltered miss        buckets   + filter words
//!  12.5%       0.00%          0.000                1.00               73.1         77.7
//!  25%         0.05%          0.000                1.00               36.6         38.9
//!  38.5%       0.66%          0.007                1.01               23.9         25.4
//!  50%         2.67%          0.027                1.03               18.8         19.9
//!  77%        17.71%          0.179                1.18               14.0         14.7
//!  100%       40.13%          0.414                1.41               12.9         13.5
//! ```
//!
//! - Grow when `len > 77%` of the slots, to the smallest power of two that brings the fill to
//!   50% or less; from 77% that is double the buckets, at 38.5%. At 77% a miss that the filter
//!   lets through reads 1.18 bucket lines on average, and the table costs 64 / 5.39 = 11.9 bytes
//!   per element in head buckets, 14.0 with child buckets, 14.7 with the filter words; right
//!   after growing it costs 25.4. Going up to 100% (as chained tables may) would save only 1 byte
//!   per element but make 40% of the heads chain.
//! - Shrink when `len < 12.5%` of the slots (`len < buckets × 7 / 8`), to the smallest power of
//!   two that brings the fill to 50% or less (so between 25% and 50%). The gap between 12.5% and
//!   77% means a table does not resize back and forth around one size.
//! - An empty table frees its arrays (0 bytes); it allocates one bucket on the first insert.
//!
//! For the benchmark target (632,000 keys) the table has 2^17 buckets at 68.9% fill: 8 MiB of
//! head buckets plus about 11.6% child buckets, about 14.8 bytes per key, and 512 KiB of filter
//! words, 0.83 bytes per key: 15.6 in all.
//!
//! ## SCAN
//!
//! [`Table::scan`] uses Redis's reverse-binary cursor: the cursor's low bits, read in reverse,
//! count up, so a bucket at index `i` of a table of `2^n` buckets is visited before or after all
//! the buckets `i + k·2^n` it splits into in a larger table, in the same cursor order. An element
//! present for the whole scan is returned at least once however often the table grows or shrinks
//! between calls; an element may be returned more than once. During a resize the call visits
//! the smaller table's bucket and then every bucket of the larger table that it expands to.
//!
//! ## Random sampling
//!
//! [`Table::random`] draws uniformly random live head buckets until it finds a non-empty one (at
//! most 8 draws, then it walks forward from the last one), and returns a uniformly random
//! element of that chain, like Redis's `dictGetRandomKey`. Rejecting empty heads rather than
//! walking past them matters during a resize: the new table's filled heads are clustered (the
//! moved heads `0..rehash_idx` map to `i` and `i + old size`), and walking would give the first
//! element after a run of 200 empty heads 200 times its share. With rejection an element's
//! chance is proportional to `1 / k`, `k` being the number of elements in its chain; relative to
//! the fair rate that is `λ / (k · P(head non-empty))` with `k` Poisson(λ = 7 × fill). At
//! 38.5%–77% fill 80%–92% of the elements are drawn within a factor of 2 of the fair rate and
//! 99% within a factor of 3; the luckiest (alone in their bucket) 2.9–5.4 times. Eight draws
//! all miss with probability 0.09% even at the 12.5% shrink limit. The bias does not depend on
//! the key, its age or its TTL, and reshuffles at every resize, so it is good enough for
//! RANDOMKEY and for the eviction and active-expire samples, which need random keys, not a
//! uniform draw. [`Table::sample`] returns `n` elements from consecutive buckets after a random
//! start, which is cache-friendly.
//!
//! ## Iteration, prefetching and batched lookups
//!
//! [`Table::iter`] runs a software pipeline over head buckets: when it enters head `p` it
//! prefetches the bucket line of head `p + 3`, the entries of head `p + 2` (whose line arrived
//! one step earlier) and, in [`Table::iter_prefetch_values`], calls a hook on the entries of head
//! `p + 1` (whose entries arrived one step earlier) so the caller can prefetch their values.
//!
//! A batch of lookups with precomputed hashes (hashed on the I/O threads with [`hash_key`]):
//!
//! 1. call [`Table::prefetch_bucket`] for every key of the batch: it prefetches the head bucket
//!    line and the filter word;
//! 2. call [`Table::prefetch_matches`] for every key: it reads the (now cached) filter word and,
//!    if the filter lets the key through, the head bucket, and prefetches the entries whose
//!    secondary hash matches;
//! 3. execute the commands.
//!
//! Each phase issues independent loads for the whole batch, so their latencies overlap. A stale
//! prefetch (the table changed in between) is only a wasted load.
//!
//! ## Entries
//!
//! The table stores each element by value in a slot, so an element must be at most 8 bytes with
//! an alignment of at most 8 (checked at compile time when a `Table<E>` is created): a `Box<T>` of
//! a sized type, a custom one-allocation entry pointer, or a `Copy` handle. The table drops its
//! elements on `remove` (returning them), `clear` and drop, by dropping the `E`: a `Box` frees, a
//! non-owning handle (such as the expire index's pointer to an entry owned by the keyspace)
//! does nothing.

mod bucket;
mod element;
mod filter;
mod invariants;
mod iter;
mod prefetch;
mod probe;
mod random;
mod rehash;
mod scan;
mod stats;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_scan;

use std::marker::PhantomData;
use std::sync::OnceLock;

use bucket::Bucket;
use filter::Heads;
pub use iter::{Drained, Iter};
pub use prefetch::prefetch_read;
pub use probe::{Absent, Found, Probe};
pub use stats::{ArrayStats, ChainStats, TableStats, CHAIN_LENGTHS};

/// An element of a [`Table`]: a pointer-sized handle that can show its key.
///
/// The table stores the value itself in an 8-byte slot (so `size_of::<E>() <= 8` and
/// `align_of::<E>() <= 8`, checked at compile time) and drops it when the element leaves the table
/// without being returned. `Box<T>` and custom one-allocation entries own their memory; a `Copy`
/// handle can point to an entry owned elsewhere.
pub trait Entry: Sized {
    /// The bytes that identify this element. Must not change while the element is in a table.
    fn key(&self) -> &[u8];

    /// The hash of `key` as this table stores it. Callers pass `E::key_hash(key)` as `hash` to
    /// every method; the table calls it when it rehashes. The default is [`hash_key`]; tests
    /// override it to force collisions.
    fn key_hash(key: &[u8]) -> u64 {
        hash_uncounted(key)
    }

    /// An address worth prefetching before `key()` is called (usually the entry's allocation),
    /// or null for nothing.
    fn prefetch_addr(&self) -> *const u8 {
        std::ptr::null()
    }

    /// Whether tables of this element may start a resize now. The default is always; the
    /// keyspace answers from its `DEBUG DICT-RESIZING` switch. A table that may not resize
    /// still gets its first bucket array, and then chains (lookups slow down, nothing is lost).
    fn resize_allowed() -> bool {
        true
    }
}

/// The process-wide key hash: ahash with a random seed chosen once per process. A pure function
/// of the key within one process, so the I/O threads can hash keys off the main thread.
#[inline]
pub fn hash_key(key: &[u8]) -> u64 {
    #[cfg(test)]
    counters::count(&counters::HASHES);
    hash_uncounted(key)
}

/// [`hash_key`], not counted by the tests' [`counters`] (the table's own rehashing and
/// checks).
#[inline]
fn hash_uncounted(key: &[u8]) -> u64 {
    static STATE: OnceLock<ahash::RandomState> = OnceLock::new();
    STATE.get_or_init(ahash::RandomState::new).hash_one(key)
}

/// Bytes of one bucket, head or child: one cache line (pinned in `bucket.rs`).
pub const BUCKET_BYTES: usize = 64;

/// Elements per bucket when the bucket is not chained.
const SLOTS: usize = 7;

/// Grow when the fill (elements / slots of the head buckets) goes above this.
const FILL_GROW_PERCENT: usize = 77;
/// Shrink when the fill drops below 1 / this.
const FILL_SHRINK_DIVISOR: usize = 8;
/// A resize picks the smallest power of two of buckets that has at most this fill.
const FILL_TARGET_PERCENT: usize = 50;

/// The bucket index: low bits of the hash.
fn bucket_index(hash: u64, buckets: usize) -> usize {
    debug_assert!(buckets.is_power_of_two());
    (hash as usize) & (buckets - 1)
}

/// The secondary hash: top 8 bits of the hash.
fn secondary_hash(hash: u64) -> u8 {
    (hash >> 56) as u8
}

/// A hashtable of [`Entry`] elements in 64-byte buckets. See the module documentation.
pub struct Table<E: Entry> {
    /// `tables[0]` is the main array; `tables[1]` is non-empty only while rehashing into it.
    /// Each has a power-of-two length or is empty.
    tables: [Heads<E>; 2],
    /// Elements in each table.
    used: [usize; 2],
    /// While rehashing: head buckets `0..rehash_idx` of table 0 have been moved. Otherwise 0.
    rehash_idx: usize,
    /// Child buckets allocated in both tables.
    child_buckets: usize,
    /// The next head of table 0 whose filter word [`Table::refresh_filters`] rebuilds.
    filter_sweep: usize,
    _owns: PhantomData<E>,
}

// SAFETY: a table owns its elements (by value in the slots) and its child buckets (through
// pointers that nothing else holds). Moving it to another thread moves the elements, which is
// sound when `E: Send`.
unsafe impl<E: Entry + Send> Send for Table<E> {}
// SAFETY: `&Table` only gives out `&E` and reads bucket memory; no interior mutability.
unsafe impl<E: Entry + Sync> Sync for Table<E> {}

impl<E: Entry> Default for Table<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Entry> std::fmt::Debug for Table<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("len", &self.len())
            .field("buckets", &[self.tables[0].len(), self.tables[1].len()])
            .field("rehash_idx", &self.rehash_idx)
            .field("child_buckets", &self.child_buckets)
            .finish()
    }
}

impl<E: Entry> Table<E> {
    /// An empty table; allocates nothing.
    pub fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Bucket::<E>::LAYOUT_OK;
        Table {
            tables: [Heads::new(0), Heads::new(0)],
            used: [0, 0],
            rehash_idx: 0,
            child_buckets: 0,
            filter_sweep: 0,
            _owns: PhantomData,
        }
    }

    /// An empty table with room for `capacity` elements before it grows.
    pub fn with_capacity(capacity: usize) -> Self {
        let mut table = Self::new();
        if capacity > 0 {
            let mut buckets = 1usize;
            while !rehash::fits_grow_limit(capacity, buckets) {
                buckets *= 2;
            }
            table.tables[0] = Heads::new(buckets);
        }
        table
    }

    /// Makes room for `capacity` elements at once when the table is empty (a load that
    /// knows its size: RDB's resize hint), so it does not grow and rehash step by step.
    /// Does nothing to a table that holds elements.
    pub fn reserve_empty(&mut self, capacity: usize) {
        if self.is_empty() && !self.is_rehashing() && capacity > 0 {
            *self = Self::with_capacity(capacity);
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.used[0] + self.used[1]
    }

    /// Whether the table holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether a resize is in progress.
    pub fn is_rehashing(&self) -> bool {
        !self.tables[1].is_empty()
    }

    /// Bytes of the table a resize is moving elements out of (0 when none is under way).
    pub fn rehashing_bytes(&self) -> usize {
        if self.is_rehashing() {
            self.tables[0].memory_bytes()
        } else {
            0
        }
    }

    /// Head buckets allocated, both tables together.
    pub fn head_buckets(&self) -> usize {
        self.tables[0].len() + self.tables[1].len()
    }

    /// Bytes of bucket memory: head bucket arrays plus child buckets (for INFO).
    pub fn memory_bytes(&self) -> usize {
        self.tables[0].memory_bytes()
            + self.tables[1].memory_bytes()
            + self.child_buckets * std::mem::size_of::<Bucket<E>>()
    }

    /// Drops every element and frees all bucket memory.
    pub fn clear(&mut self) {
        *self = Self::new();
    }

    /// The range of head buckets of table `t` that may hold elements.
    fn live_range(&self, t: usize) -> std::ops::Range<usize> {
        let start = if t == 0 { self.rehash_idx } else { 0 };
        start..self.tables[t].len()
    }

    /// Number of live head buckets: table 0 from `rehash_idx`, then all of table 1. Random
    /// sampling and iteration number them 0.. in this order ("positions").
    fn live_heads(&self) -> usize {
        self.live_range(0).len() + self.tables[1].len()
    }

    /// The head bucket at position `pos < live_heads()`.
    fn head_at(&self, pos: usize) -> &Bucket<E> {
        let live0 = self.live_range(0);
        match pos.checked_sub(live0.len()) {
            None => &self.tables[0][live0.start + pos],
            Some(pos1) => &self.tables[1][pos1],
        }
    }

    /// The one head bucket that may hold this hash when the table is not resizing (`None`
    /// for an empty table, or when the head's miss filter rules the key out), or `Err` during a
    /// resize (use [`Table::heads`]). The lookup fast path: no bounds check, no second table.
    #[inline(always)]
    fn single_head(&self, hash: u64) -> Result<Option<&Bucket<E>>, ()> {
        if self.is_rehashing() {
            return Err(());
        }
        Ok(self.tables[0].candidate(hash as usize, secondary_hash(hash)))
    }

    /// The live head indices of `hash` in each table, table 0 first: `None` for a table that is
    /// empty or whose head was already moved.
    fn head_indices(&self, hash: u64) -> [Option<usize>; 2] {
        std::array::from_fn(|t| {
            let buckets = &self.tables[t];
            let idx = bucket_index(hash, buckets.len().max(1));
            (!buckets.is_empty() && (t == 1 || idx >= self.rehash_idx)).then_some(idx)
        })
    }

    /// The live head buckets of `hash`, table 0 first (for writes, which need the bucket
    /// whatever the miss filter says).
    fn heads(&self, hash: u64) -> [Option<&Bucket<E>>; 2] {
        let idx = self.head_indices(hash);
        std::array::from_fn(|t| idx[t].map(|i| &self.tables[t][i]))
    }

    /// The live head buckets of `hash` whose miss filter lets the key through (for lookups).
    fn candidate_heads(&self, hash: u64) -> [Option<&Bucket<E>>; 2] {
        let (idx, h2) = (self.head_indices(hash), secondary_hash(hash));
        std::array::from_fn(|t| {
            idx[t].filter(|&i| self.tables[t].may_hold(i, h2)).map(|i| &self.tables[t][i])
        })
    }
}

impl<E: Entry> Drop for Table<E> {
    fn drop(&mut self) {
        if self.child_buckets == 0 && (self.is_empty() || !std::mem::needs_drop::<E>()) {
            return; // Only the arrays to free, which their boxes do.
        }
        for t in 0..2 {
            for idx in self.live_range(t) {
                bucket::drop_chain(&mut self.tables[t][idx]);
            }
        }
    }
}

/// How many keys this thread hashed ([`hash_key`]) and looked up (one walk of a key's
/// chains: a find, a probe, the lookup of an insert or a removal), for tests that check what
/// a command costs.
#[cfg(test)]
pub mod counters {
    use std::cell::Cell;
    use std::thread::LocalKey;

    thread_local! {
        pub(super) static HASHES: Cell<u64> = const { Cell::new(0) };
        pub(super) static PROBES: Cell<u64> = const { Cell::new(0) };
    }

    pub(super) fn count(c: &'static LocalKey<Cell<u64>>) {
        c.with(|c| c.set(c.get() + 1));
    }

    /// (hashes, probes) since the last call, on this thread.
    pub fn take() -> (u64, u64) {
        (HASHES.with(|c| c.replace(0)), PROBES.with(|c| c.replace(0)))
    }
}
