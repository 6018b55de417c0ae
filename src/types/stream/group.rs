//! Consumer groups of one stream: each group's last delivered id and read counter, its pending
//! entries list (PEL) and its consumers, with the operations of XGROUP, XREADGROUP, XACK,
//! XPENDING, XCLAIM and XAUTOCLAIM on them, as Valkey 9.1 performs them. This module owns the
//! group state only: it never reads the stream's entries (the caller answers "does this entry
//! still exist" through a closure, and describes the stream's counters in a [`StreamInfo`]),
//! never reads a clock (every operation takes `now_ms`, the command's time snapshot) and never
//! builds a reply, error text or notification (results are plain values and the command layer
//! renders them).
//!
//! # What a group holds
//!
//! ```text
//!   ConsumerGroup
//!   |- last_id, entries_read            where `>` reads continue; the lag bookkeeping
//!   |- pel: BTreeMap<StreamId, Nack>    every delivered, unacknowledged id
//!   |        id -> Nack { delivery_time_ms, delivery_count, owner: u32 } ----.
//!   |                                                                          |
//!   |- slots: Vec<Option<Consumer>>     [0] [1] [2] ...  <--------------------'
//!   |        Consumer { name, seen_time_ms, active_time_ms, pel: BTreeSet<StreamId> }
//!   |- free: Vec<u32>                   empty slots, reused by the next consumer
//!   '- by_name: BTreeMap<Box<[u8]>, u32>   name -> slot, in byte order (XINFO CONSUMERS,
//!                                          the XPENDING summary)
//! ```
//!
//! The two PELs must agree, and [`ConsumerGroup::check_invariants`] says so: every id of the
//! group PEL is in the PEL of exactly one consumer, the one in the slot its NACK names, and
//! every id of a consumer's PEL is in the group PEL with a NACK naming that consumer. Valkey
//! shares one `streamNACK` between the two raxes and points from it at the consumer; here the
//! NACK lives once, in the group PEL, and names its consumer by slot number (4 bytes instead of
//! a pointer), and a consumer's PEL is a plain set of ids. Every operation that moves a NACK
//! (delivery to another consumer, a claim, an ack, deleting a consumer, an entry found deleted)
//! updates both sides before it returns. A slot is freed only with its consumer, whose NACKs go
//! with it, so no NACK ever names a free or reused slot.
//!
//! Consumer names are stored twice (the `by_name` key and the slot's own copy, which the
//! XPENDING rows need when they go from a NACK to its consumer's name): a consumer costs two
//! small allocations more than in Valkey, which is nothing next to its pending entries.
//!
//! # Bytes per pending entry
//!
//! Valkey: the 16-byte big-endian id is a key of the group rax and again of the consumer's
//! rax, and the two share one `streamNACK` (time, count, consumer pointer: 24 bytes, a 24-byte
//! jemalloc class). Measured on the valkey-server 9.1.2 oracle as `used_memory` before and
//! after one XREADGROUP of 100 000 entries into one consumer: 122 bytes per pending entry for
//! `*` ids, 171 for ids `1-0, 2-0, ...`.
//!
//! Here: a std B-tree leaf holds 11 slots of key and value; appending ids in order (the normal
//! case: deliveries come in id order) leaves each leaf with 6 entries and sends 1 to the
//! parent, so a leaf serves about 7 entries. Group PEL: a leaf of 11 x (16 + 24) bytes + 12 of
//! header is a 512-byte class, 73 bytes per entry, plus about 15 of inner nodes. Consumer PEL:
//! 11 x 16 + 12 is a 192-byte class, 27 per entry, plus about 8. Measured through jemalloc's
//! counters (`alloc_bytes_tracks_measured_allocations` in the tests): 123 bytes per pending
//! entry, as Valkey's for `*` ids. A B+tree with 64-entry leaves would bring this near 60; the
//! std maps do for now, PELs being usually short.
//!
//! # Times a command sets (Valkey 7.2+, checked on the 9.1.2 oracle)
//!
//! A consumer's `seen_time` is its last attempt, `active_time` its last success (XINFO
//! CONSUMERS shows `idle` and `inactive` from them). Every command below that names a consumer
//! creates it if missing, with `active_time` -1 (never), except XPENDING, which only looks.
//!
//! - XGROUP CREATECONSUMER: seen now.
//! - XREADGROUP `>`: seen now; each delivered entry gets time now and count 1 (also when it was
//!   pending already, for another consumer or this one) and makes the consumer active now.
//!   With NOACK nothing enters the PEL and the consumer does not become active.
//! - XREADGROUP with an id (history): seen now; each entry of the consumer's PEL still in the
//!   stream gets time now and count + 1; `active_time` does not change.
//! - XCLAIM: seen now; each claimed id gets the IDLE/TIME time (now if neither, or if out of
//!   0..=now) and RETRYCOUNT, else count + 1 unless JUSTID; active now per claimed id.
//! - XAUTOCLAIM: seen now; each claimed id gets time now and count + 1 unless JUSTID; active
//!   now per claimed id.
//! - XACK, XPENDING, XINFO: no time changes.
//!
//! # Lag
//!
//! `entries_read` counts the entries delivered to the group since the stream began, when it is
//! known (`None` is Valkey's invalid marker -1, shown as a null). Deliveries keep it up to date
//! and [`ConsumerGroup::lag`] subtracts it from the stream's `entries_added`, falling back to an
//! estimate from the stream's first id when tombstones or an arbitrary `XGROUP SETID` make the
//! counter unusable; [`StreamInfo`] says what the caller supplies.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use super::id::StreamId;
use crate::memory::size_class;

/// Why a group operation failed (the command layer renders the text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupError {
    /// A group of that name already exists (`-BUSYGROUP`).
    Exists,
    /// No group of that name (`-NOGROUP`).
    NoGroup,
}

/// The stream counters that the read counter and the lag depend on: the fields of Valkey's
/// `stream` struct of the same names, read at the moment of the operation.
///
/// - `length`: live entries (XLEN).
/// - `first_id`: the id of the first live entry, `0-0` when the stream is empty (XINFO
///   STREAM's `recorded-first-entry-id`); trimming and deleting the first entry move it.
/// - `last_id`: the last id ever generated or set by XSETID (`last-generated-id`), not the
///   last live entry.
/// - `max_deleted_entry_id`: the greatest id ever removed by XDEL (or set by XSETID
///   MAXDELETEDID), `0-0` if none. Trimming does not change it.
/// - `entries_added`: entries ever added (XADD count, or XSETID ENTRIESADDED).
///
/// Nothing else is needed: Valkey decides "are there tombstones after this id" from
/// `max_deleted_entry_id` alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamInfo {
    pub length: u64,
    pub first_id: StreamId,
    pub last_id: StreamId,
    pub max_deleted_entry_id: StreamId,
    pub entries_added: u64,
}

impl StreamInfo {
    /// Whether a tombstone may lie at or after `from` (Valkey's `streamRangeHasTombstones` with
    /// no end): the stream is non-empty, something was deleted, and not before `from`.
    /// Valkey 9.1 has no shortcut for a maximal tombstone before the first entry here.
    pub fn has_tombstones_from(&self, from: StreamId) -> bool {
        self.length != 0
            && self.max_deleted_entry_id != StreamId::MIN
            && from <= self.max_deleted_entry_id
    }

    /// The number of entries added up to and including `id`, when it can be known (Valkey's
    /// `streamEstimateDistanceFromFirstEverEntry`); None for Valkey's invalid marker.
    pub fn entries_read_at(&self, id: StreamId) -> Option<u64> {
        debug_assert!(self.entries_added >= self.length, "more live entries than added");
        if self.entries_added == 0 {
            return Some(0);
        }
        if self.length == 0 && id <= self.last_id {
            return Some(self.entries_added);
        }
        if id != StreamId::MIN && id < self.max_deleted_entry_id {
            return None; // a tombstone lies ahead of `id`
        }
        if id == self.last_id {
            return Some(self.entries_added);
        }
        if id > self.last_id {
            return None; // a future id
        }
        let unfragmented =
            self.max_deleted_entry_id == StreamId::MIN || self.max_deleted_entry_id < self.first_id;
        let before_first = self.entries_added.saturating_sub(self.length);
        match id.cmp(&self.first_id) {
            std::cmp::Ordering::Less if unfragmented => Some(before_first),
            std::cmp::Ordering::Equal if unfragmented => Some(before_first + 1),
            _ => None,
        }
    }
}

/// A pending entry's delivery record: the group PEL's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nack {
    /// When it was last delivered (or the time XCLAIM set), ms since the epoch.
    pub delivery_time_ms: i64,
    /// How many times it was delivered (or the count XCLAIM RETRYCOUNT set).
    pub delivery_count: u64,
    /// The slot of the consumer that owns it.
    owner: u32,
}

const _: () = assert!(size_of::<Nack>() == 24);

/// `active_time_ms` of a consumer that never read or claimed (Valkey's -1).
const NEVER_ACTIVE: i64 = -1;

/// One consumer of a group.
#[derive(Clone, Debug)]
pub struct Consumer {
    name: Box<[u8]>,
    seen_time_ms: i64,
    /// [`NEVER_ACTIVE`] until its first successful read or claim.
    active_time_ms: i64,
    pel: BTreeSet<StreamId>,
}

impl Consumer {
    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// When it last tried to read or claim.
    pub fn seen_time_ms(&self) -> i64 {
        self.seen_time_ms
    }

    /// When it last read or claimed something; None if it never did.
    pub fn active_time_ms(&self) -> Option<i64> {
        (self.active_time_ms != NEVER_ACTIVE).then_some(self.active_time_ms)
    }

    /// XINFO CONSUMERS `idle`: ms since it was last seen, never negative.
    pub fn idle_ms(&self, now_ms: i64) -> i64 {
        now_ms.saturating_sub(self.seen_time_ms).max(0)
    }

    /// XINFO CONSUMERS `inactive`: ms since it was last active (not clamped, as Valkey), None
    /// (the reply's -1) if it never was.
    pub fn inactive_ms(&self, now_ms: i64) -> Option<i64> {
        self.active_time_ms().map(|t| now_ms.saturating_sub(t))
    }

    pub fn pending_len(&self) -> usize {
        self.pel.len()
    }

    /// Its pending ids in order (XINFO STREAM FULL).
    pub fn pending_ids(&self) -> impl DoubleEndedIterator<Item = StreamId> + '_ {
        self.pel.iter().copied()
    }
}

/// A consumer found or created for one command (XREADGROUP), valid until a consumer of the
/// group is deleted. Using it afterwards is a programmer error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConsumerHandle(u32);

/// Whether a `>` delivery enters the PEL (XREADGROUP without / with NOACK).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tracking {
    Pending,
    NoAck,
}

/// One entry of a history read (XREADGROUP with an id): the id, and whether the entry is
/// still in the stream (a deleted one is replied as the id with a null body, and its NACK is
/// left untouched).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistoryEntry {
    pub id: StreamId,
    pub exists: bool,
}

/// A pending entry as XPENDING and XINFO STREAM FULL show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingEntry<'a> {
    pub id: StreamId,
    pub consumer: &'a [u8],
    pub delivery_time_ms: i64,
    pub delivery_count: u64,
}

impl PendingEntry<'_> {
    /// ms since the last delivery, never negative (XPENDING's third field).
    pub fn idle_ms(&self, now_ms: i64) -> i64 {
        now_ms.saturating_sub(self.delivery_time_ms).max(0)
    }
}

/// XPENDING without a range: None from [`ConsumerGroup::pending_summary`] when nothing is
/// pending (replied as nulls).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingSummary<'a> {
    pub count: usize,
    pub smallest: StreamId,
    pub greatest: StreamId,
    /// Consumers with at least one pending entry, in name order, with their counts.
    pub consumers: Vec<(&'a [u8], usize)>,
}

/// XPENDING with a range: ids in `start..=end` (the command turns exclusive bounds into
/// inclusive ones), at most `count` rows, of one consumer if given, idle at least
/// `min_idle_ms` if that is not 0 (IDLE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingQuery<'a> {
    pub start: StreamId,
    pub end: StreamId,
    pub count: usize,
    pub consumer: Option<&'a [u8]>,
    pub min_idle_ms: i64,
}

/// The delivery time XCLAIM sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimTime {
    /// Neither IDLE nor TIME: now.
    Now,
    /// IDLE ms: now minus ms.
    IdleMs(i64),
    /// TIME ms: that unix time.
    UnixMs(i64),
}

/// XCLAIM's options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClaimOptions {
    /// Claim only NACKs idle at least this long; 0 (or less) claims regardless.
    pub min_idle_ms: i64,
    /// The last of IDLE / TIME given.
    pub time: ClaimTime,
    /// RETRYCOUNT; a negative argument is as if it were not given (None), as in Valkey.
    pub retry_count: Option<u64>,
    /// FORCE: create a NACK for an id of the stream that is not pending.
    pub force: bool,
    /// JUSTID: keep the delivery count (unless RETRYCOUNT sets it).
    pub just_id: bool,
    /// LASTID: raise the group's last id to this if it is greater.
    pub last_id: Option<StreamId>,
}

/// What XCLAIM did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClaimOutcome {
    /// The consumer did not exist and was created (a keyspace event).
    pub consumer_created: bool,
    /// LASTID raised the group's last id.
    pub last_id_raised: bool,
    /// Ids now owned by the consumer, in argument order (repeats included), for the reply.
    pub claimed: Vec<StreamId>,
    /// Ids that were pending but whose entry is gone: their NACKs were dropped (not replied,
    /// but propagated).
    pub deleted: Vec<StreamId>,
}

/// XAUTOCLAIM's arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoClaimOptions {
    /// Claim only NACKs idle at least this long; 0 (or less) claims regardless.
    pub min_idle_ms: i64,
    /// The first id to examine (the command turns an exclusive start into the next id).
    pub start: StreamId,
    /// COUNT, at least 1 (the command rejects less; 100 when not given).
    pub count: usize,
    /// JUSTID: keep the delivery counts.
    pub just_id: bool,
}

/// What XAUTOCLAIM did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AutoClaimOutcome {
    pub consumer_created: bool,
    /// Where the next call starts, `0-0` when the scan reached the end of the PEL.
    pub next: StreamId,
    pub claimed: Vec<StreamId>,
    /// Ids whose entries were gone, removed from the PEL (the reply's third element).
    pub deleted: Vec<StreamId>,
}

/// XAUTOCLAIM examines at most this many PEL entries per id it may return.
pub const AUTOCLAIM_ATTEMPTS_FACTOR: usize = 10;

/// The consumers of a group: slots that NACKs refer to, and the name index.
#[derive(Clone, Debug, Default)]
struct Consumers {
    by_name: BTreeMap<Box<[u8]>, u32>,
    slots: Vec<Option<Consumer>>,
    free: Vec<u32>,
}

impl Consumers {
    fn get(&self, slot: u32) -> &Consumer {
        self.slots[slot as usize].as_ref().expect("a NACK or handle names a live consumer")
    }

    fn get_mut(&mut self, slot: u32) -> &mut Consumer {
        self.slots[slot as usize].as_mut().expect("a NACK or handle names a live consumer")
    }

    fn find(&self, name: &[u8]) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    /// Adds a consumer that is not there yet.
    fn insert(&mut self, name: &[u8], now_ms: i64) -> u32 {
        let consumer = Consumer {
            name: name.into(),
            seen_time_ms: now_ms,
            active_time_ms: NEVER_ACTIVE,
            pel: BTreeSet::new(),
        };
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(consumer);
                slot
            }
            None => {
                let slot = u32::try_from(self.slots.len()).expect("under 2^32 consumers");
                self.slots.push(Some(consumer));
                slot
            }
        };
        let old = self.by_name.insert(name.into(), slot);
        assert!(old.is_none(), "consumer inserted twice");
        slot
    }
}

/// One consumer group. See the module documentation.
#[derive(Clone, Debug)]
pub struct ConsumerGroup {
    last_id: StreamId,
    /// None: Valkey's `SCG_INVALID_ENTRIES_READ` (-1). Values come from ENTRIESREAD (at most
    /// i64::MAX) or from counting; the count saturates where Valkey's would overflow.
    entries_read: Option<u64>,
    pel: BTreeMap<StreamId, Nack>,
    consumers: Consumers,
}

impl ConsumerGroup {
    /// A group with no consumers, as XGROUP CREATE makes it.
    pub fn new(last_id: StreamId, entries_read: Option<u64>) -> ConsumerGroup {
        ConsumerGroup {
            last_id,
            entries_read,
            pel: BTreeMap::new(),
            consumers: Consumers::default(),
        }
    }

    /// The last id delivered by a `>` read (XINFO `last-delivered-id`).
    pub fn last_id(&self) -> StreamId {
        self.last_id
    }

    /// XINFO `entries-read`: None is shown as a null.
    pub fn entries_read(&self) -> Option<u64> {
        self.entries_read
    }

    /// XGROUP SETID: both values as given (no ENTRIESREAD, or ENTRIESREAD -1, is None).
    pub fn set_last_id(&mut self, last_id: StreamId, entries_read: Option<u64>) {
        self.last_id = last_id;
        self.entries_read = entries_read;
    }

    pub fn pending_len(&self) -> usize {
        self.pel.len()
    }

    pub fn consumers_len(&self) -> usize {
        self.consumers.by_name.len()
    }

    /// The NACK of a pending id.
    pub fn nack(&self, id: StreamId) -> Option<&Nack> {
        self.pel.get(&id)
    }

    pub fn consumer(&self, name: &[u8]) -> Option<&Consumer> {
        self.consumers.find(name).map(|slot| self.consumers.get(slot))
    }

    pub fn consumer_by_handle(&self, handle: ConsumerHandle) -> &Consumer {
        self.consumers.get(handle.0)
    }

    /// Consumers in name order (XINFO CONSUMERS).
    pub fn consumers(&self) -> impl Iterator<Item = &Consumer> + '_ {
        self.consumers.by_name.values().map(|&slot| self.consumers.get(slot))
    }

    /// The pending entry of `id`, with its consumer's name.
    pub fn pending_entry(&self, id: StreamId) -> Option<PendingEntry<'_>> {
        self.pel.get(&id).map(|nack| self.entry(id, nack))
    }

    /// The group PEL in id order (XINFO STREAM FULL).
    pub fn pending(&self) -> impl Iterator<Item = PendingEntry<'_>> + '_ {
        self.pel.iter().map(|(&id, nack)| self.entry(id, nack))
    }

    fn entry(&self, id: StreamId, nack: &Nack) -> PendingEntry<'_> {
        PendingEntry {
            id,
            consumer: &self.consumers.get(nack.owner).name,
            delivery_time_ms: nack.delivery_time_ms,
            delivery_count: nack.delivery_count,
        }
    }

    /// XGROUP CREATECONSUMER: whether it was created (seen now, never active).
    pub fn create_consumer(&mut self, name: &[u8], now_ms: i64) -> bool {
        if self.consumers.find(name).is_some() {
            return false;
        }
        self.consumers.insert(name, now_ms);
        true
    }

    /// The consumer of an XREADGROUP / XCLAIM / XAUTOCLAIM, created if missing, marked seen
    /// now. Returns it and whether it was created.
    pub fn touch_consumer(&mut self, name: &[u8], now_ms: i64) -> (ConsumerHandle, bool) {
        let (slot, created) = match self.consumers.find(name) {
            Some(slot) => (slot, false),
            None => (self.consumers.insert(name, now_ms), true),
        };
        self.consumers.get_mut(slot).seen_time_ms = now_ms;
        (ConsumerHandle(slot), created)
    }

    /// XGROUP DELCONSUMER: removes the consumer and its pending entries from the group PEL.
    /// Returns how many it had, or None if there is no such consumer.
    pub fn delete_consumer(&mut self, name: &[u8]) -> Option<usize> {
        let slot = self.consumers.by_name.remove(name)?;
        let consumer = self.consumers.slots[slot as usize].take().expect("indexed slot is live");
        for id in &consumer.pel {
            let nack = self.pel.remove(id);
            debug_assert_eq!(nack.map(|n| n.owner), Some(slot));
        }
        self.consumers.free.push(slot);
        Some(consumer.pel.len())
    }

    /// XREADGROUP `>`: `id`, the next entry of the stream after the group's last id, goes to
    /// `consumer`. The group's last id and read counter advance; with [`Tracking::Pending`]
    /// the entry becomes pending for the consumer, taken from whoever had it (a re-delivery
    /// after XGROUP SETID), with delivery time now and count 1, and the consumer is active.
    pub fn deliver(
        &mut self,
        consumer: ConsumerHandle,
        id: StreamId,
        tracking: Tracking,
        now_ms: i64,
        stream: &StreamInfo,
    ) {
        if id > self.last_id {
            self.advance_read_counter(id, stream);
            self.last_id = id;
        }
        if tracking == Tracking::NoAck {
            return;
        }
        let nack = Nack { delivery_time_ms: now_ms, delivery_count: 1, owner: consumer.0 };
        if let Some(old) = self.pel.insert(id, nack) {
            self.consumers.get_mut(old.owner).pel.remove(&id);
        }
        let owner = self.consumers.get_mut(consumer.0);
        owner.pel.insert(id);
        owner.active_time_ms = now_ms;
    }

    /// The read counter as of delivering `id` (Valkey 9.1): counted on while it is valid, the
    /// group has not fallen behind the stream's first entry, and no tombstone lies after the
    /// group's last id; otherwise estimated afresh.
    fn advance_read_counter(&mut self, id: StreamId, stream: &StreamInfo) {
        match self.entries_read {
            Some(n)
                if self.last_id >= stream.first_id && !stream.has_tombstones_from(self.last_id) =>
            {
                self.entries_read = Some(n.saturating_add(1));
            }
            _ if stream.entries_added != 0 => self.entries_read = stream.entries_read_at(id),
            _ => {}
        }
    }

    /// XINFO GROUPS `lag`: entries not yet delivered to the group, None (a null) when it cannot
    /// be known. Negative when ENTRIESREAD claimed more reads than entries were added, as in
    /// Valkey.
    pub fn lag(&self, stream: &StreamInfo) -> Option<i64> {
        if stream.entries_added == 0 {
            return Some(0);
        }
        let added = i64::try_from(stream.entries_added).unwrap_or(i64::MAX);
        let read = match self.entries_read {
            Some(n) if !stream.has_tombstones_from(self.last_id) => n,
            _ => stream.entries_read_at(self.last_id)?,
        };
        Some(added.saturating_sub(i64::try_from(read).unwrap_or(i64::MAX)))
    }

    /// XREADGROUP with an id: the consumer's own pending ids after `after`, at most `limit`
    /// (None: all; the command's COUNT 0). Each one whose entry still exists is delivered again
    /// (time now, count + 1). The consumer's active time does not change.
    pub fn read_history(
        &mut self,
        consumer: ConsumerHandle,
        after: StreamId,
        limit: Option<usize>,
        now_ms: i64,
        mut exists: impl FnMut(StreamId) -> bool,
    ) -> Vec<HistoryEntry> {
        let owner = self.consumers.get(consumer.0);
        let ids = owner.pel.range((Bound::Excluded(after), Bound::Unbounded));
        let ids: Vec<StreamId> = ids.take(limit.unwrap_or(usize::MAX)).copied().collect();
        ids.into_iter()
            .map(|id| {
                let exists = exists(id);
                if exists {
                    let nack = self.pel.get_mut(&id).expect("a consumer's id is in the group PEL");
                    nack.delivery_time_ms = now_ms;
                    nack.delivery_count = nack.delivery_count.saturating_add(1);
                }
                HistoryEntry { id, exists }
            })
            .collect()
    }

    /// XACK: how many of `ids` were pending (and no longer are).
    pub fn ack(&mut self, ids: &[StreamId]) -> usize {
        ids.iter().filter(|id| self.remove_nack(**id)).count()
    }

    /// Drops a pending id from both PELs; false if it was not pending.
    fn remove_nack(&mut self, id: StreamId) -> bool {
        match self.pel.remove(&id) {
            Some(nack) => {
                let removed = self.consumers.get_mut(nack.owner).pel.remove(&id);
                debug_assert!(removed, "NACK owner's PEL lacks the id");
                true
            }
            None => false,
        }
    }

    /// Gives the pending `id` to `slot` (moving it between consumer PELs if the owner
    /// changes), with a new delivery time and count.
    fn transfer(&mut self, id: StreamId, slot: u32, delivery_time_ms: i64, count: CountUpdate) {
        let nack = self.pel.get_mut(&id).expect("transfer of a pending id");
        let old = nack.owner;
        nack.owner = slot;
        nack.delivery_time_ms = delivery_time_ms;
        nack.delivery_count = match count {
            CountUpdate::Set(n) => n,
            CountUpdate::Increment => nack.delivery_count.saturating_add(1),
            CountUpdate::Keep => nack.delivery_count,
        };
        if old != slot {
            self.consumers.get_mut(old).pel.remove(&id);
            self.consumers.get_mut(slot).pel.insert(id);
        }
    }

    /// XPENDING without a range.
    pub fn pending_summary(&self) -> Option<PendingSummary<'_>> {
        let (&smallest, _) = self.pel.first_key_value()?;
        let (&greatest, _) = self.pel.last_key_value()?;
        let consumers = self
            .consumers()
            .filter(|c| !c.pel.is_empty())
            .map(|c| (c.name(), c.pel.len()))
            .collect();
        Some(PendingSummary { count: self.pel.len(), smallest, greatest, consumers })
    }

    /// XPENDING with a range, at `now_ms`. Entries below the minimum idle time are skipped
    /// without counting against `count`.
    pub fn pending_range(&self, query: &PendingQuery<'_>, now_ms: i64) -> Vec<PendingEntry<'_>> {
        if query.count == 0 || query.start > query.end {
            return Vec::new();
        }
        let idle_enough = |nack: &Nack| {
            query.min_idle_ms == 0
                || now_ms.saturating_sub(nack.delivery_time_ms) >= query.min_idle_ms
        };
        let range = query.start..=query.end;
        let rows: Box<dyn Iterator<Item = (StreamId, &Nack)>> = match query.consumer {
            None => Box::new(self.pel.range(range).map(|(&id, nack)| (id, nack))),
            Some(name) => {
                let Some(slot) = self.consumers.find(name) else { return Vec::new() };
                let ids = self.consumers.get(slot).pel.range(range);
                Box::new(ids.map(|id| (*id, self.pel.get(id).expect("consumer id is pending"))))
            }
        };
        rows.filter(|(_, nack)| idle_enough(nack))
            .take(query.count)
            .map(|(id, nack)| self.entry(id, nack))
            .collect()
    }

    /// XCLAIM of `ids` by the consumer `name` at `now_ms`. `exists` says whether an entry is
    /// still in the stream; it is asked once per id, in order.
    pub fn claim(
        &mut self,
        name: &[u8],
        ids: &[StreamId],
        options: &ClaimOptions,
        now_ms: i64,
        mut exists: impl FnMut(StreamId) -> bool,
    ) -> ClaimOutcome {
        let mut outcome = ClaimOutcome::default();
        if let Some(last_id) = options.last_id {
            if last_id > self.last_id {
                self.last_id = last_id;
                outcome.last_id_raised = true;
            }
        }
        let delivery_time_ms = match options.time {
            ClaimTime::Now => now_ms,
            ClaimTime::IdleMs(idle) => now_ms.saturating_sub(idle),
            ClaimTime::UnixMs(time) => time,
        };
        let delivery_time_ms =
            if (0..=now_ms).contains(&delivery_time_ms) { delivery_time_ms } else { now_ms };
        let count = match (options.retry_count, options.just_id) {
            (Some(n), _) => CountUpdate::Set(n),
            (None, false) => CountUpdate::Increment,
            (None, true) => CountUpdate::Keep,
        };
        let min_idle_ms = options.min_idle_ms.max(0);
        let (consumer, created) = self.touch_consumer(name, now_ms);
        outcome.consumer_created = created;
        for &id in ids {
            if !exists(id) {
                if self.remove_nack(id) {
                    outcome.deleted.push(id);
                }
                continue;
            }
            match self.pel.get(&id) {
                // A NACK made by FORCE skips the idle test (Valkey creates it ownerless).
                None if options.force => {
                    let nack =
                        Nack { delivery_time_ms: now_ms, delivery_count: 1, owner: consumer.0 };
                    self.pel.insert(id, nack);
                    self.consumers.get_mut(consumer.0).pel.insert(id);
                }
                None => continue,
                Some(nack) => {
                    if min_idle_ms != 0
                        && now_ms.saturating_sub(nack.delivery_time_ms) < min_idle_ms
                    {
                        continue;
                    }
                }
            }
            self.transfer(id, consumer.0, delivery_time_ms, count);
            self.consumers.get_mut(consumer.0).active_time_ms = now_ms;
            outcome.claimed.push(id);
        }
        outcome
    }

    /// XAUTOCLAIM by the consumer `name`: scans the group PEL from `options.start`, claiming
    /// entries idle at least `min_idle_ms` and dropping those whose entry is gone, until
    /// `count` ids were claimed or dropped, `count * 10` NACKs were examined, or the PEL ends.
    pub fn autoclaim(
        &mut self,
        name: &[u8],
        options: &AutoClaimOptions,
        now_ms: i64,
        mut exists: impl FnMut(StreamId) -> bool,
    ) -> AutoClaimOutcome {
        let AutoClaimOptions { min_idle_ms, start, count, just_id } = *options;
        assert!(count > 0, "XAUTOCLAIM COUNT is at least 1");
        let min_idle_ms = min_idle_ms.max(0);
        let update = if just_id { CountUpdate::Keep } else { CountUpdate::Increment };
        let (consumer, created) = self.touch_consumer(name, now_ms);
        let mut outcome = AutoClaimOutcome { consumer_created: created, ..Default::default() };
        let mut attempts = count.saturating_mul(AUTOCLAIM_ATTEMPTS_FACTOR);
        let mut left = count;
        // None: the scan passed StreamId::MAX.
        let mut cursor = Some(start);
        while attempts > 0 && left > 0 {
            attempts -= 1;
            let Some((id, nack)) = cursor.and_then(|c| self.pel.range(c..).next()) else {
                break;
            };
            let (id, delivery_time_ms) = (*id, nack.delivery_time_ms);
            cursor = id.next();
            if !exists(id) {
                self.remove_nack(id);
                outcome.deleted.push(id);
                left -= 1;
                continue;
            }
            if min_idle_ms != 0 && now_ms.saturating_sub(delivery_time_ms) < min_idle_ms {
                continue;
            }
            self.transfer(id, consumer.0, now_ms, update);
            self.consumers.get_mut(consumer.0).active_time_ms = now_ms;
            outcome.claimed.push(id);
            left -= 1;
        }
        let next = cursor.and_then(|c| self.pel.range(c..).next().map(|(id, _)| *id));
        outcome.next = next.unwrap_or(StreamId::MIN);
        outcome
    }

    /// Loading (RDB, RESTORE): adds a consumer with its saved times; None (the reply's -1
    /// `active-time`) if never active. Returns None if the name is taken.
    pub fn restore_consumer(
        &mut self,
        name: &[u8],
        seen_time_ms: i64,
        active_time_ms: Option<i64>,
    ) -> Option<ConsumerHandle> {
        if self.consumers.find(name).is_some() {
            return None;
        }
        let slot = self.consumers.insert(name, seen_time_ms);
        self.consumers.get_mut(slot).active_time_ms = active_time_ms.unwrap_or(NEVER_ACTIVE);
        Some(ConsumerHandle(slot))
    }

    /// Loading: adds a pending entry owned by `consumer`; false if the id is already pending.
    pub fn restore_nack(
        &mut self,
        consumer: ConsumerHandle,
        id: StreamId,
        delivery_time_ms: i64,
        delivery_count: u64,
    ) -> bool {
        if self.pel.contains_key(&id) {
            return false;
        }
        self.pel.insert(id, Nack { delivery_time_ms, delivery_count, owner: consumer.0 });
        self.consumers.get_mut(consumer.0).pel.insert(id);
        true
    }

    /// Bytes allocated for the group's PEL and consumers (not the group struct itself):
    /// exact for names and the slot vectors, an estimate for the B-tree nodes (see
    /// `btree_bytes`).
    pub fn alloc_bytes(&self) -> usize {
        let c = &self.consumers;
        let consumers = c.slots.iter().flatten().map(|consumer| {
            2 * size_class(consumer.name.len())
                + btree_bytes(consumer.pel.len(), size_of::<StreamId>(), 8)
        });
        btree_bytes(self.pel.len(), size_of::<StreamId>() + size_of::<Nack>(), 8)
            + btree_bytes(c.by_name.len(), size_of::<Box<[u8]>>() + size_of::<u32>(), 8)
            + size_class(c.slots.capacity() * size_of::<Option<Consumer>>())
            + size_class(c.free.capacity() * size_of::<u32>())
            + consumers.sum::<usize>()
    }

    /// Asserts the agreement of the group PEL, the consumer PELs and the name index.
    pub fn check_invariants(&self) {
        let c = &self.consumers;
        let mut owned = 0;
        for (name, &slot) in &c.by_name {
            let consumer = c.get(slot);
            assert_eq!(&consumer.name, name, "slot {slot} under another name");
            for id in &consumer.pel {
                let nack = self.pel.get(id).expect("consumer's id missing from the group PEL");
                assert_eq!(nack.owner, slot, "{id} owned by another slot");
            }
            owned += consumer.pel.len();
        }
        assert_eq!(owned, self.pel.len(), "group PEL ids not owned by any consumer");
        let live = c.slots.iter().filter(|s| s.is_some()).count();
        assert_eq!(live, c.by_name.len(), "slots and name index disagree");
        for &slot in &c.free {
            assert!(c.slots[slot as usize].is_none(), "free slot {slot} in use");
        }
        assert_eq!(live + c.free.len(), c.slots.len(), "slot neither live nor free");
    }
}

/// How a claim changes the delivery count.
#[derive(Clone, Copy, Debug)]
enum CountUpdate {
    Set(u64),
    Increment,
    Keep,
}

/// An estimate of the bytes of a std `BTreeMap` of `len` entries of `slot_bytes` (key and
/// value together), aligned to `align`. Its nodes hold 11 slots whatever their fill (an
/// inner node adds 12 child pointers) behind a 12-byte header (parent pointer, index, length);
/// this mirrors std's layout, which is not a stable API, so it is an estimate. One node up to
/// 11 entries; beyond, about 7 entries per leaf (6 after a split under in-order appends, plus
/// 1 in the parent; 5 to 11 otherwise) and an inner node per 6 leaves.
fn btree_bytes(len: usize, slot_bytes: usize, align: usize) -> usize {
    const CAPACITY: usize = 11;
    let leaf = (12 + CAPACITY * slot_bytes).next_multiple_of(align);
    let inner = leaf + (CAPACITY + 1) * size_of::<usize>();
    match len {
        0 => 0,
        1..=CAPACITY => size_class(leaf),
        _ => {
            let leaves = len.div_ceil(7);
            leaves * size_class(leaf) + leaves.div_ceil(6) * size_class(inner)
        }
    }
}

/// The groups of one stream by name, in byte order (XINFO GROUPS lists them so).
#[derive(Clone, Debug, Default)]
pub struct ConsumerGroups {
    /// Boxed: a B-tree node holds 11 values whatever its fill, and streams usually have one
    /// or two groups.
    groups: BTreeMap<Box<[u8]>, Box<ConsumerGroup>>,
}

impl ConsumerGroups {
    pub fn new() -> ConsumerGroups {
        ConsumerGroups::default()
    }

    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// XGROUP CREATE.
    pub fn create(
        &mut self,
        name: &[u8],
        last_id: StreamId,
        entries_read: Option<u64>,
    ) -> Result<&mut ConsumerGroup, GroupError> {
        use std::collections::btree_map::Entry;
        match self.groups.entry(name.into()) {
            Entry::Occupied(_) => Err(GroupError::Exists),
            Entry::Vacant(slot) => {
                Ok(slot.insert(Box::new(ConsumerGroup::new(last_id, entries_read))))
            }
        }
    }

    /// XGROUP DESTROY: whether it existed.
    pub fn destroy(&mut self, name: &[u8]) -> bool {
        self.groups.remove(name).is_some()
    }

    pub fn get(&self, name: &[u8]) -> Option<&ConsumerGroup> {
        self.groups.get(name).map(|g| &**g)
    }

    pub fn get_mut(&mut self, name: &[u8]) -> Option<&mut ConsumerGroup> {
        self.groups.get_mut(name).map(|g| &mut **g)
    }

    /// The group, or [`GroupError::NoGroup`].
    pub fn require(&mut self, name: &[u8]) -> Result<&mut ConsumerGroup, GroupError> {
        self.get_mut(name).ok_or(GroupError::NoGroup)
    }

    /// Groups in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &ConsumerGroup)> + '_ {
        self.groups.iter().map(|(name, group)| (&**name, &**group))
    }

    /// Bytes allocated for the groups (not this struct): index nodes, names, groups.
    pub fn alloc_bytes(&self) -> usize {
        let slot_bytes = size_of::<Box<[u8]>>() + size_of::<Box<ConsumerGroup>>();
        let groups = self.groups.iter().map(|(name, group)| {
            size_class(name.len()) + size_class(size_of::<ConsumerGroup>()) + group.alloc_bytes()
        });
        btree_bytes(self.groups.len(), slot_bytes, 8) + groups.sum::<usize>()
    }
}

#[cfg(test)]
#[path = "group_tests.rs"]
mod tests;
