//! One logical database: keys to values, their expire times, lazy expiry on access, access
//! clocks, and the sampling that active expiry and RANDOMKEY need.
//!
//! This is the API the command code sees. The storage is [`Keys`] (the cache-line hashtable
//! of one-allocation entries plus the expire index). A key is hashed once per call.
//! Time is passed in (`now_ms`), never read here, so expiry is deterministic under test.

use crate::keyspace::clock::{accessed_clock, new_clock};
pub use crate::keyspace::clock::{idle_ms, lfu_decayed, lru_clock, AccessClock, LFU_INIT_VAL};
pub use crate::keyspace::entry::StrEdit;
use crate::keyspace::entry::{KeyEntry, NewValue, Rebuild, RebuiltValue};
use crate::keyspace::field_expiry::FieldExpiryQueue;
use crate::keyspace::keys::{Detached, FoundKey, KeyProbe, Keys};
pub use crate::keyspace::keys::{KeySet, TableGrowth};
pub use crate::keyspace::value::{is_expired, Obj, ObjView, Value, ValueRef, WrongType};
use crate::table::hash_key;
use crate::types::agg::Typed;
use crate::types::string::{StrRef, StrValue};
use crate::util::rng::Rng;
pub use hash_fields::{FieldsExpired, FieldsStep};

/// What to do with an existing TTL when a key is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ttl {
    /// Drop any TTL (plain SET).
    Clear,
    /// Keep the TTL the key had (KEEPTTL, APPEND, INCR, SETRANGE...).
    Keep,
    /// Expire at this unix time in milliseconds.
    At(i64),
}

/// What happened to a key, in the database's event log: a change a command made (reported
/// through [`Db::changed`]), a key the keyspace removed on its own (not by a command's
/// request), or, for the two notes only keyspace notifications ask for, that a key was
/// created or missed. They share one log because Valkey raises them in the order they
/// happen (a lazily expired key's `expired` before the `new` and the `set` of the SET that
/// replaces it); the server turns each into its effects after the command (`server::events`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyEvent {
    /// A command changed the key: keyspace event `event` of `class` (a `KeyspaceEvents`
    /// bit). Logged while `log_changes` is set.
    Changed { class: u32, event: &'static str },
    /// Its TTL passed (lazily on access, or by active expiry).
    Expired,
    /// maxmemory eviction.
    Evicted,
    /// A change to a stream's consumer groups (XGROUP, XREADGROUP, XACK, XCLAIM...): Valkey
    /// publishes its event, if any, and wakes blocked readers only where told to, and fails
    /// WATCH and tells tracking clients only when the key itself was made (XGROUP CREATE
    /// MKSTREAM): a group change alone does neither.
    Group { event: Option<&'static str>, wake: bool, modified: bool },
    /// Not a removal: the key was just created (Valkey's `new` event, raised by `dbAdd`).
    /// Logged while `log_created` is set.
    Created,
    /// Not a removal: a read lookup (one that counts a keyspace miss) found nothing
    /// (Valkey's `keymiss` event). Logged while `log_misses` is set.
    Missed,
}

/// A database's log of [`KeyEvent`]s, each stamped with its place in one sequence shared by
/// every database, so that the events of a command that touched two (MOVE, COPY ... DB)
/// are drained in the order they happened.
#[derive(Default, Debug)]
pub struct EventLog(Vec<(u64, Box<[u8]>, KeyEvent)>);

/// The shared sequence of [`EventLog`] stamps (only ever compared, never reset).
static EVENT_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl EventLog {
    pub fn push(&mut self, key: &[u8], what: KeyEvent) {
        let seq = EVENT_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.0.push((seq, key.into(), what));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The events, oldest first, each with its stamp.
    pub fn iter(&self) -> impl Iterator<Item = &(u64, Box<[u8]>, KeyEvent)> {
        self.0.iter()
    }

    /// Takes every event out, oldest first.
    pub fn take(&mut self) -> Vec<(u64, Box<[u8]>, KeyEvent)> {
        std::mem::take(&mut self.0)
    }
}

/// Changes counted since the server last drained a database's event log.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pending {
    /// Toward the save points (`dirty`).
    pub dirty: u64,
    /// Change events (a command that made any is propagated).
    pub changes: u64,
    /// A command run in this database changed another one too (MOVE, COPY ... DB): every
    /// database's log is to be drained.
    pub others: bool,
}

impl Pending {
    pub fn is_empty(&self) -> bool {
        self.changes == 0 && self.dirty == 0 && !self.others
    }
}

/// Counters a database keeps for INFO.
#[derive(Default, Debug, Clone, Copy)]
pub struct DbStats {
    pub expired_keys: u64,
    /// Hash fields removed by active field expiry.
    pub expired_fields: u64,
    pub expired_stale_samples: u64,
    pub expired_samples: u64,
    pub keyspace_hits: u64,
    pub keyspace_misses: u64,
    /// Keys deleted by maxmemory eviction (INFO `evicted_keys` sums them over the dbs).
    pub evicted_keys: u64,
}

/// Whether a read counts toward the hit/miss statistics and touches the access clock.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    /// GET-like: counts, touches.
    Read,
    /// EXISTS/TYPE/TTL-like: counts, does not touch.
    ReadNoTouch,
    /// OBJECT: counts, does not touch, and a miss raises no `keymiss` (Valkey's
    /// `LOOKUP_NOTOUCH | LOOKUP_NONOTIFY`).
    ReadNoNotify,
    /// Internal or write lookups: neither.
    Quiet,
}

#[derive(Default)]
pub struct Db {
    keys: Keys,
    /// Hashes with volatile fields, for active field expiry (see `hash_fields`).
    field_queue: FieldExpiryQueue,
    pub stats: DbStats,
    access: AccessClock,
    /// The generator behind the LFU counter's probabilistic increment.
    lfu_rng: Rng,
    /// While true, keys the keyspace removes on its own are recorded in `events` for the
    /// server (WATCH, client tracking, keyspace notifications and the propagation feed need
    /// them); the server sets it and drains the log after every command and time event.
    pub log_removals: bool,
    /// While true, the changes commands report ([`Db::changed`]) are recorded in `events`
    /// (for keyspace notifications, WATCH, tracking and blocked clients).
    pub log_changes: bool,
    pub events: EventLog,
    /// What the changes since the server last drained the log count (always kept).
    pub pending: Pending,
    /// While true, keys created are logged as [`KeyEvent::Created`] (the `n` event class).
    pub log_created: bool,
    /// While true, read misses are logged as [`KeyEvent::Missed`] (the `m` event class).
    pub log_misses: bool,
    /// How keys past their expire time are met (see [`Expiry`]); the server sets it per
    /// command.
    pub expiry: Expiry,
    /// The hashes of the running command's keys, computed when it was parsed (on an I/O
    /// thread where there are some): dispatch sets them before the handler and clears them
    /// after, so that a key is hashed once per command.
    pub hashed: HashedKeys,
}

/// How a lookup meets a key past its expire time.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// Deleted there and then (lazy expiry), and reported missing.
    #[default]
    Live,
    /// Still present, TTL and all: replaying the AOF at start-up (a logged write to a key
    /// that expired while the server was down must find it), and a replica applying its
    /// primary's stream (the primary decides when a key expires, and sends its DEL).
    Paused,
    /// Reported missing to reads but left in place: a replica's own clients. The key goes
    /// when the primary's DEL comes, so the replica stays the primary's copy; reads still
    /// see what they would see on the primary. Writes (only a writable replica's own clients
    /// send any) delete it as under `Live`, as Valkey does.
    Hidden,
}

/// Up to [`HASHED_KEYS_MAX`] keys of the running command with their hashes.
///
/// A key is known by the address and length of its bytes: the command's arguments, which
/// stay alive and unchanged while it runs (and until dispatch clears this), so a slice with
/// the same address and length while they do is those same bytes, and has that hash. (Two
/// empty slices may share an address and differ in nothing.) Nothing is dereferenced: a
/// mistake here would cost a lookup its key, never memory safety, and the debug builds'
/// check in the table (`hash does not match key`) would catch it.
#[derive(Clone, Copy, Default, Debug)]
pub struct HashedKeys {
    len: usize,
    keys: [(usize, usize, u64); HASHED_KEYS_MAX],
}

/// Keys a [`HashedKeys`] holds.
pub const HASHED_KEYS_MAX: usize = 4;

impl HashedKeys {
    /// Adds `key` (one of the running command's arguments) with its hash; beyond
    /// [`HASHED_KEYS_MAX`] keys, the rest are hashed where they are looked up.
    #[inline]
    pub fn push(&mut self, key: &[u8], hash: u64) {
        if self.len < HASHED_KEYS_MAX {
            self.keys[self.len] = (key.as_ptr() as usize, key.len(), hash);
            self.len += 1;
        }
    }

    /// The hash of `key` when it is one of these keys.
    #[inline]
    pub fn hash_of(&self, key: &[u8]) -> Option<u64> {
        let addr = key.as_ptr() as usize;
        self.keys[..self.len]
            .iter()
            .find(|&&(a, n, _)| a == addr && n == key.len())
            .map(|&(_, _, h)| h)
    }
}

impl Db {
    pub fn new() -> Db {
        Db::default()
    }

    /// Choose how reads update access clocks (from maxmemory-policy, lfu-log-factor and
    /// lfu-decay-time). Objects keep their clock bits; as in Valkey, they read oddly for a
    /// while after a switch between LRU and LFU.
    pub fn set_access_clock(&mut self, access: AccessClock) {
        self.access = access;
    }

    pub fn access_clock(&self) -> AccessClock {
        self.access
    }

    /// Number of keys, including those logically expired but not yet reclaimed.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Number of keys with a TTL.
    pub fn expires_len(&self) -> usize {
        self.keys.expires_len()
    }

    /// Number of keys holding a hash with a field that has a TTL, expired or not (INFO
    /// keyspace `keys_with_volatile_items`; kept exact by the storage, see `keys`).
    pub fn volatile_items_len(&self) -> usize {
        self.keys.volatile_len()
    }

    /// The keys, apart from what a probe's bookkeeping updates beside them, so that a
    /// probe's borrow of the keys leaves the rest free.
    #[inline]
    fn split(&mut self) -> (&mut Keys, Beside<'_>) {
        let beside = Beside {
            expiry: self.expiry,
            log_removals: self.log_removals,
            log_created: self.log_created,
            log_misses: self.log_misses,
            stats: &mut self.stats,
            events: &mut self.events,
            lfu_rng: &mut self.lfu_rng,
        };
        (&mut self.keys, beside)
    }

    /// The live entry of `key`, expiring it lazily first; counts and touches per `access`.
    /// One table probe.
    fn lookup(&mut self, h: u64, key: &[u8], now_ms: i64, access: Access) -> Option<&mut KeyEntry> {
        let clock = self.access;
        let (keys, mut b) = self.split();
        let found = if b.expiry == Expiry::Hidden {
            keys.get_mut(h, key).filter(|e| e.is_live(now_ms))
        } else {
            match probe_live(keys, &mut b, h, key, now_ms) {
                KeyProbe::Found(f) => Some(f.into_mut()),
                KeyProbe::Absent(_) => None,
            }
        };
        if access != Access::Quiet {
            if found.is_some() {
                b.stats.keyspace_hits += 1;
            } else {
                b.stats.keyspace_misses += 1;
                if b.log_misses && access != Access::ReadNoNotify {
                    b.events.push(key, KeyEvent::Missed);
                }
            }
        }
        let e = found?;
        if access == Access::Read {
            let draw = match clock {
                AccessClock::Lru => 0.0,
                AccessClock::Lfu { .. } => b.lfu_rng.next_f64(),
            };
            e.set_lru(accessed_clock(clock, e.lru(), now_ms, draw));
        }
        Some(e)
    }

    /// Writes a new value at `key` (replacing any), one table probe: the expire time per
    /// `ttl`, the `raw` encoding flag when asked; logged as created unless it replaced a live
    /// key.
    fn write(&mut self, key: &[u8], value: NewValue<'_>, ttl: Ttl, raw: bool, now_ms: i64) {
        let h = self.hash(key);
        let lru = new_clock(self.access, now_ms);
        let (keys, mut b) = self.split();
        let (probe, kept) = match probe_live(keys, &mut b, h, key, now_ms) {
            KeyProbe::Found(f) => {
                let kept = f.get().expire_at();
                (KeyProbe::Found(f), kept)
            }
            absent => (absent, None),
        };
        let expire = match ttl {
            Ttl::Clear => None,
            Ttl::At(at) => Some(at),
            Ttl::Keep => kept,
        };
        let mut e = KeyEntry::new(key, value, expire, lru);
        if raw {
            e.set_raw();
        }
        match probe {
            KeyProbe::Found(f) => f.replace(e),
            KeyProbe::Absent(a) => {
                a.insert(e);
                b.created(key);
            }
        }
    }

    /// The key's hash: the one computed with the running command (see [`HashedKeys`]) when
    /// `key` is one of its keys, else computed here.
    #[inline]
    fn hash(&self, key: &[u8]) -> u64 {
        self.hashed.hash_of(key).unwrap_or_else(|| hash_key(key))
    }

    /// Look a key up for reading: counts a hit or miss and updates its access clock.
    pub fn get(&mut self, key: &[u8], now_ms: i64) -> Option<ValueRef<'_>> {
        self.lookup(self.hash(key), key, now_ms, Access::Read).map(|e| e.value_ref())
    }

    /// Look an entry up for reading: counts a hit or miss and records the access (TOUCH,
    /// the source of COPY).
    pub fn read_obj(&mut self, key: &[u8], now_ms: i64) -> Option<&KeyEntry> {
        self.lookup(self.hash(key), key, now_ms, Access::Read).map(|e| &*e)
    }

    /// Look an entry up for its metadata: counts a hit or miss but leaves its access clock
    /// alone (EXISTS, TYPE, TTL, OBJECT, as Valkey's `LOOKUP_NOTOUCH`).
    pub fn read_obj_notouch(&mut self, key: &[u8], now_ms: i64) -> Option<&KeyEntry> {
        self.lookup(self.hash(key), key, now_ms, Access::ReadNoTouch).map(|e| &*e)
    }

    /// As [`Db::read_obj_notouch`], but a miss raises no `keymiss` event (OBJECT).
    pub fn read_obj_nonotify(&mut self, key: &[u8], now_ms: i64) -> Option<&KeyEntry> {
        self.lookup(self.hash(key), key, now_ms, Access::ReadNoNotify).map(|e| &*e)
    }

    /// Look a key up without counting a hit or touching its access clock (writes).
    pub fn peek(&mut self, key: &[u8], now_ms: i64) -> Option<ValueRef<'_>> {
        self.lookup(self.hash(key), key, now_ms, Access::Quiet).map(|e| e.value_ref())
    }

    /// The stored entry, for OBJECT and DEBUG OBJECT; counts nothing, touches nothing.
    pub fn object(&mut self, key: &[u8], now_ms: i64) -> Option<&KeyEntry> {
        self.lookup(self.hash(key), key, now_ms, Access::Quiet).map(|e| &*e)
    }

    pub fn contains(&mut self, key: &[u8], now_ms: i64) -> bool {
        self.lookup(self.hash(key), key, now_ms, Access::Quiet).is_some()
    }

    /// Edit the string at `key`: `f` reads the current value (borrowed, never copied) and
    /// either refuses (`Err`, which leaves the entry untouched: no copy, no clock change) or
    /// says what to change and what to return. The edit is made in place where the entry's
    /// layout allows (see [`KeyEntry::edit_str`]), so it costs what it changes; the TTL is
    /// kept. `Ok(None)` when the key does not exist (`f` is not called).
    pub fn update_str<'a, R, E: From<WrongType>>(
        &mut self,
        key: &[u8],
        now_ms: i64,
        f: impl FnOnce(StrRef<'_>) -> Result<(StrEdit<'a>, R), E>,
    ) -> Result<Option<R>, E> {
        let (h, access) = (self.hash(key), self.access);
        let (keys, mut b) = self.split();
        let KeyProbe::Found(mut at) = probe_live(keys, &mut b, h, key, now_ms) else {
            return Ok(None);
        };
        let ValueRef::Str(current) = at.get().value_ref() else { return Err(WrongType.into()) };
        let (edit, r) = f(current)?;
        let e = at.get_mut();
        let clock = accessed_clock(access, e.lru(), now_ms, 0.0);
        e.set_lru(clock);
        if let Err(Rebuild { value, raw }) = e.edit_str(edit) {
            let expire = e.expire_at();
            let mut n = match value {
                RebuiltValue::Str(v) => KeyEntry::new(key, NewValue::from(&v), expire, clock),
                RebuiltValue::Heap(v) => KeyEntry::new(key, NewValue::Heap(v), expire, clock),
            };
            if raw {
                n.set_raw();
            }
            at.replace(n);
        }
        Ok(Some(r))
    }

    /// Write `value` at `key` with the given TTL rule.
    pub fn set(&mut self, key: &[u8], mut value: Value, ttl: Ttl, now_ms: i64) {
        let bound = hash_fields::expire_bound(&value);
        self.write(key, Obj::new_value(&mut value), ttl, false, now_ms);
        self.file_hash(key, bound);
    }

    /// The aggregate of type `T` at `key`, for reading: counts a hit or miss and touches the
    /// access clock. `Err(WrongType)` when the key holds another type.
    pub fn read_agg<T: Typed>(&mut self, key: &[u8], now_ms: i64) -> Result<Option<&T>, WrongType> {
        match self.lookup(self.hash(key), key, now_ms, Access::Read) {
            None => Ok(None),
            Some(e) => e.agg().and_then(T::from_ref).map(Some).ok_or(WrongType),
        }
    }

    /// As [`Db::read_agg`] for a write that reads first (no hit/miss counting, no touch).
    pub fn read_agg_quiet<T: Typed>(
        &mut self,
        key: &[u8],
        now_ms: i64,
    ) -> Result<Option<&T>, WrongType> {
        match self.lookup(self.hash(key), key, now_ms, Access::Quiet) {
            None => Ok(None),
            Some(e) => e.agg().and_then(T::from_ref).map(Some).ok_or(WrongType),
        }
    }

    /// The aggregate of type `T` at `key`, for writing (no hit/miss counting). The caller
    /// must call [`Db::remove_if_empty`] after removing elements. Not for hashes, whose
    /// changes the storage must see ([`Db::agg_entry`]'s handle shows them).
    pub fn write_agg<T: Typed>(
        &mut self,
        key: &[u8],
        now_ms: i64,
    ) -> Result<Option<&mut T>, WrongType> {
        Ok(self.agg_existing(key, now_ms)?.map(AggMut::into_mut))
    }

    /// As [`Db::write_agg`], creating the key with `create()` when it does not exist.
    pub fn write_agg_or_create<T: Typed>(
        &mut self,
        key: &[u8],
        now_ms: i64,
        create: impl FnOnce() -> T,
    ) -> Result<&mut T, WrongType> {
        Ok(self.agg_entry(key, now_ms, Some(create))?.expect("created").into_mut())
    }

    /// The aggregate of type `T` at `key` for a write that may create it (`create`) and may
    /// leave it empty, found with one probe: the handle changes it and removes the key if
    /// the write emptied it ([`AggMut::remove_if_empty`]) without another lookup. `None`
    /// when the key does not exist and there is nothing to create it with.
    pub fn agg_entry<T: Typed>(
        &mut self,
        key: &[u8],
        now_ms: i64,
        create: Option<impl FnOnce() -> T>,
    ) -> Result<Option<AggMut<'_, T>>, WrongType> {
        let h = self.hash(key);
        let lru = new_clock(self.access, now_ms);
        let (keys, mut b) = self.split();
        let at = match (probe_live(keys, &mut b, h, key, now_ms), create) {
            (KeyProbe::Found(f), _) => f,
            (KeyProbe::Absent(_), None) => return Ok(None),
            (KeyProbe::Absent(a), Some(create)) => {
                b.created(key);
                a.insert(KeyEntry::new(key, NewValue::Agg(create().wrap()), None, lru))
            }
        };
        if at.get().agg().and_then(T::from_ref).is_none() {
            return Err(WrongType);
        }
        Ok(Some(AggMut { at: Some(at), _type: std::marker::PhantomData }))
    }

    /// [`Db::agg_entry`] for a write that creates nothing (it removes elements or changes
    /// them in place): `None` when the key does not exist.
    pub fn agg_existing<T: Typed>(
        &mut self,
        key: &[u8],
        now_ms: i64,
    ) -> Result<Option<AggMut<'_, T>>, WrongType> {
        self.agg_entry(key, now_ms, None::<fn() -> T>)
    }

    /// The live entry of `key` for a write that reads it first, found with one probe (no
    /// hit or miss counted: a write's lookup).
    pub fn live(&mut self, key: &[u8], now_ms: i64) -> Option<LiveKey<'_>> {
        let h = self.hash(key);
        let (keys, mut b) = self.split();
        match probe_live(keys, &mut b, h, key, now_ms) {
            KeyProbe::Found(at) => Some(LiveKey { at }),
            KeyProbe::Absent(_) => None,
        }
    }

    /// Deletes `key` if it holds an empty aggregate (after a command removed elements).
    /// Returns whether it did.
    pub fn remove_if_empty(&mut self, key: &[u8]) -> bool {
        match self.keys.probe(self.hash(key), key) {
            KeyProbe::Found(f) => remove_if_empty_agg(f),
            KeyProbe::Absent(_) => false,
        }
    }

    /// Write a string value.
    pub fn set_str(&mut self, key: &[u8], value: StrValue, ttl: Ttl, now_ms: i64) {
        self.set_str_ref(key, value.as_ref(), ttl, now_ms);
    }

    /// Write a string value from a borrowed one (SET: the argument is copied once, into the
    /// entry).
    pub fn set_str_ref(&mut self, key: &[u8], value: StrRef<'_>, ttl: Ttl, now_ms: i64) {
        self.write(key, NewValue::from(value), ttl, false, now_ms);
    }

    /// Write a string built by an edit (SETRANGE on a missing key): `raw` for OBJECT ENCODING.
    pub fn set_str_edited(&mut self, key: &[u8], value: NewValue<'_>, now_ms: i64) {
        let raw = matches!(value, NewValue::Str(_) | NewValue::Heap(_));
        self.write(key, value, Ttl::Clear, raw, now_ms);
    }

    /// Remove a key; true when it existed (and had not expired).
    pub fn remove(&mut self, key: &[u8], now_ms: i64) -> bool {
        self.take_entry(key, now_ms).is_some()
    }

    fn take_entry(&mut self, key: &[u8], now_ms: i64) -> Option<KeyEntry> {
        let h = self.hash(key);
        let e = self.keys.remove(h, key)?;
        if self.expiry != Expiry::Paused && e.expire_at().is_some_and(|at| is_expired(at, now_ms)) {
            self.stats.expired_keys += 1;
            self.log_removal(key, KeyEvent::Expired);
            return None;
        }
        Some(e)
    }

    /// The effects call: a command changed `key`, as keyspace event `event` of `class` (a
    /// `KeyspaceEvents` bit: GENERIC, STRING, LIST, SET, HASH, ZSET...), counting `dirty`
    /// changes toward the save points (Valkey's `server.dirty`: one per element a command
    /// adds or removes; 0 for a second event of the same change). Counted here, and logged
    /// while someone listens; the server does the rest after the command (`server::events`).
    #[inline]
    pub fn changed(&mut self, key: &[u8], dirty: u64, class: u32, event: &'static str) {
        self.pending.dirty += dirty;
        self.pending.changes += 1;
        if self.log_changes {
            self.events.push(key, KeyEvent::Changed { class, event });
        }
    }

    /// A change to the consumer groups of the stream at `key` (see [`KeyEvent::Group`]):
    /// counted as [`Db::changed`] counts (save points, propagation), with the stream event
    /// `event` if Valkey raises one, waking readers blocked on the key if `wake`, as a
    /// change of the key itself for WATCH and tracking if `modified`.
    #[inline]
    pub fn group_changed(
        &mut self,
        key: &[u8],
        dirty: u64,
        event: Option<&'static str>,
        wake: bool,
        modified: bool,
    ) {
        self.pending.dirty += dirty;
        self.pending.changes += 1;
        if self.log_changes && (event.is_some() || wake || modified) {
            self.events.push(key, KeyEvent::Group { event, wake, modified });
        }
    }

    /// Remove a key because a command gave it an expire time already past (EXPIRE with a
    /// past time, SET or GETEX with a past EXAT/PXAT): Valkey 9.1 counts it and reports it as
    /// expired (the `expired` event and an `UNLINK`/`DEL` in the log, raised where lazy
    /// expiry's are), not as a deletion. True when the key existed.
    pub fn expire_now(&mut self, key: &[u8], now_ms: i64) -> bool {
        if self.take_entry(key, now_ms).is_none() {
            return false;
        }
        self.pending.dirty += 1;
        self.stats.expired_keys += 1;
        self.log_removal(key, KeyEvent::Expired);
        true
    }

    /// Remove a key and hand its object over (RENAME, MOVE, GETDEL). An aggregate moves,
    /// it is not copied.
    pub fn take(&mut self, key: &[u8], now_ms: i64) -> Option<Obj> {
        self.take_entry(key, now_ms).map(Obj::from_removed)
    }

    /// Remove a key and hand the entry itself over, to be dropped elsewhere (UNLINK).
    pub fn take_raw(&mut self, key: &[u8], now_ms: i64) -> Option<KeyEntry> {
        self.take_entry(key, now_ms)
    }

    /// Insert a whole object as it is (RENAME, MOVE). Logged as created even when it
    /// replaces a key: Valkey deletes the destination first, then adds the key.
    pub fn put(&mut self, key: &[u8], mut obj: Obj) {
        let h = hash_key(key);
        let bound = hash_fields::expire_bound(&obj.value);
        self.keys.insert(h, key, Obj::new_value(&mut obj.value), obj.expire_at_ms, obj.lru);
        self.log_created(key);
        if obj.raw {
            if let Some(e) = self.keys.get_mut(h, key) {
                e.set_raw();
            }
        }
        self.file_hash(key, bound);
    }

    /// Insert an entry removed from a database ([`Db::take_raw`]) under `key` (RENAME, MOVE),
    /// with its value, expire time, clock and encoding. The value moves: only the entry's own
    /// allocation (header and key) is rebuilt, so a big string is not copied.
    pub fn put_entry(&mut self, key: &[u8], mut e: KeyEntry) {
        let h = hash_key(key);
        let bound = hash_fields::entry_expire_bound(&e);
        let moved = e.rebuilt(key, e.expire_at());
        self.keys.insert_entry(h, key, moved);
        self.log_created(key);
        self.file_hash(key, bound);
    }

    /// As [`Db::put`] for a key that must not exist (loading a file): false, and nothing
    /// stored, when it does (expired or not).
    pub fn put_absent(&mut self, key: &[u8], mut obj: Obj) -> bool {
        let h = hash_key(key);
        let bound = hash_fields::expire_bound(&obj.value);
        let value = Obj::new_value(&mut obj.value);
        if !self.keys.insert_absent(h, key, value, obj.expire_at_ms, obj.lru) {
            return false;
        }
        self.log_created(key);
        if obj.raw {
            if let Some(e) = self.keys.get_mut(h, key) {
                e.set_raw();
            }
        }
        self.file_hash(key, bound);
        true
    }

    /// Room for `n` keys at once while the database is empty (a load's resize hint).
    pub fn reserve_empty(&mut self, n: usize) {
        self.keys.reserve_empty(n);
    }

    /// The key's expire time, if it exists and has one.
    pub fn expire_at(&mut self, key: &[u8], now_ms: i64) -> Option<i64> {
        self.lookup(self.hash(key), key, now_ms, Access::Quiet).and_then(|e| e.expire_at())
    }

    /// Set or clear the expire time of an existing key; false when the key does not exist.
    pub fn set_expire(&mut self, key: &[u8], at: Option<i64>, now_ms: i64) -> bool {
        self.live(key, now_ms).map(|l| l.set_expire(key, at)).is_some()
    }

    /// Drop every key; returns how many there were.
    pub fn clear(&mut self) -> usize {
        let n = self.keys.len();
        self.keys = Keys::default();
        self.field_queue.clear();
        n
    }

    /// Drop every key, on the lazyfree thread when `lazily` and there is anything to free
    /// (FLUSHDB ASYNC, replica-lazy-flush); returns how many there were.
    pub fn flush(&mut self, lazily: bool) -> usize {
        let n = self.keys.len();
        if lazily && n > 0 {
            crate::keyspace::lazyfree::free_async(self.take_all(), n as u64);
        } else {
            self.clear();
        }
        n
    }

    /// An empty database with this one's settings (its access clock), to load into.
    pub fn empty_like(&self) -> Db {
        let mut db = Db::new();
        db.set_access_clock(self.access);
        db
    }

    /// Take the whole contents out, for freeing on another thread (lazyfree).
    pub fn take_all(&mut self) -> Detached {
        self.field_queue.clear();
        self.keys.detach()
    }

    /// One step of a SCAN: calls `f` for about `count` keys, returns the next cursor (0 when
    /// done). Every key present for the whole scan is visited at least once, across resizes;
    /// a key may be visited twice. Expired keys are visited too (the caller filters them,
    /// see `ObjView::is_live`).
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&[u8], &KeyEntry)) -> u64 {
        let mut cursor = cursor;
        let mut visited = 0usize;
        // As Valkey: at most 10 buckets per requested element, so a sparse table cannot
        // make one call run long.
        let mut buckets_left = count.max(1).saturating_mul(10);
        loop {
            cursor = self.keys.scan(cursor, |e| {
                visited += 1;
                f(e.key(), e);
            });
            buckets_left -= 1;
            if cursor == 0 || visited >= count || buckets_left == 0 {
                return cursor;
            }
        }
    }

    /// Whether an object visited by `scan` or `for_each` is alive (not expired) at `now_ms`.
    pub fn is_live(obj: &impl ObjView, now_ms: i64) -> bool {
        obj.is_live(now_ms)
    }

    /// Whether a key visited by `for_each` counts for this database's lookups at `now_ms`:
    /// alive, or past its time while expiry is paused (the primary's stream, an import
    /// source), as lookups find it.
    pub fn shows(&self, obj: &impl ObjView, now_ms: i64) -> bool {
        self.expiry == Expiry::Paused || obj.is_live(now_ms)
    }

    /// Swap the contents (keys, values, expire times) of two databases (SWAPDB). Counters
    /// and settings stay with their database.
    pub fn swap_contents(a: &mut Db, b: &mut Db) {
        std::mem::swap(&mut a.keys, &mut b.keys);
        std::mem::swap(&mut a.field_queue, &mut b.field_queue);
    }

    /// Every key, in storage order (KEYS).
    pub fn for_each(&self, mut f: impl FnMut(&[u8], &KeyEntry)) {
        for e in self.keys.iter() {
            f(e.key(), e);
        }
    }

    /// As [`Db::for_each`], prefetching the values too (the RDB save reads every value).
    pub fn for_each_with_values(&self, mut f: impl FnMut(&[u8], &KeyEntry)) {
        for e in self.keys.iter_with_values() {
            f(e.key(), e);
        }
    }

    /// As [`Db::for_each`], prefetching nothing (the baseline for the prefetching walks).
    pub fn for_each_unprefetched(&self, mut f: impl FnMut(&[u8], &KeyEntry)) {
        for e in self.keys.iter_unprefetched() {
            f(e.key(), e);
        }
    }

    /// A random key that has not expired, or None when the db is empty or (after some
    /// tries) only expired keys were found, as Valkey does.
    pub fn random_key(&mut self, seed: u64, now_ms: i64) -> Option<Vec<u8>> {
        let mut rng = Rng::new(seed);
        for _ in 0..100 {
            let (key, expired) = {
                let e = self.keys.random(rng.next_u64())?;
                (e.key().to_vec(), !e.is_live(now_ms))
            };
            if !expired || self.expiry == Expiry::Paused {
                return Some(key);
            }
            if self.expiry == Expiry::Hidden {
                continue;
            }
            self.keys.remove(hash_key(&key), &key);
            self.stats.expired_keys += 1;
            self.log_removal(&key, KeyEvent::Expired);
        }
        None
    }

    /// Sample up to `n` keys with a TTL and delete those expired at `now_ms`, handing each
    /// removed entry to `dispose` (which frees it, and may time that: the latency monitor's
    /// `expire-del`). Returns (sampled, expired).
    pub fn expire_sample(
        &mut self,
        seed: u64,
        n: usize,
        now_ms: i64,
        mut dispose: impl FnMut(KeyEntry),
    ) -> (usize, usize) {
        let (sampled, keys) = self.keys.sample_expired(seed, n, now_ms);
        let expired = keys.len();
        for k in keys {
            if let Some(e) = self.keys.remove(hash_key(&k), &k) {
                dispose(e);
            }
            self.log_removal(&k, KeyEvent::Expired);
        }
        self.stats.expired_keys += expired as u64;
        (sampled, expired)
    }

    fn log_created(&mut self, key: &[u8]) {
        self.split().1.created(key);
    }

    fn log_removal(&mut self, key: &[u8], why: KeyEvent) {
        self.split().1.removed(key, why);
    }

    /// How many keys eviction could draw from `set`.
    pub fn count(&self, set: KeySet) -> usize {
        self.keys.count(set)
    }

    /// Calls `f` on up to `n` sampled entries of `set` (eviction's candidates; see
    /// [`Keys::sample`]). Expired keys are included: evicting one frees memory all the same.
    pub fn eviction_sample(&self, set: KeySet, seed: u64, n: usize, f: impl FnMut(&KeyEntry)) {
        self.keys.sample(set, seed, n, f);
    }

    /// Calls `f` on a random entry of `set` (the random eviction policies).
    pub fn eviction_random<R>(
        &self,
        set: KeySet,
        seed: u64,
        f: impl FnOnce(&KeyEntry) -> R,
    ) -> Option<R> {
        self.keys.with_random(set, seed, f)
    }

    /// When this database's table grows next and what it will allocate (see
    /// [`Keys::table_growth`]).
    pub fn table_growth(&self) -> Option<TableGrowth> {
        self.keys.table_growth()
    }

    /// The stored entry of `key` as it is: no lazy expiry, no statistics, no clock update.
    /// For eviction, to check that a pooled candidate still exists and still qualifies, and
    /// DEBUG DIGEST-VALUE.
    pub fn stored(&self, key: &[u8]) -> Option<&KeyEntry> {
        self.keys.get(hash_key(key), key)
    }

    /// Delete `key` for maxmemory (counted in `evicted_keys`) and hand its entry over, for
    /// the caller to free here or on the lazyfree thread. None when it does not exist.
    pub fn evict(&mut self, key: &[u8]) -> Option<KeyEntry> {
        let e = self.keys.remove(hash_key(key), key)?;
        self.stats.evicted_keys += 1;
        self.log_removal(key, KeyEvent::Evicted);
        Some(e)
    }

    /// Average TTL in ms of the keys with one (for INFO keyspace), estimated on a sample.
    pub fn avg_ttl_ms(&self, now_ms: i64) -> i64 {
        self.keys.avg_ttl_ms(now_ms)
    }

    /// One incremental rehash step (time events); true while a resize is in progress.
    pub fn rehash_step(&mut self, buckets: usize) -> bool {
        self.keys.rehash_step(buckets)
    }

    /// The key table's shape (DEBUG HTSTATS); `walk_chains` adds the chain figures.
    pub fn table_stats(&self, walk_chains: bool) -> crate::table::TableStats {
        self.keys.table_stats(walk_chains)
    }

    /// Whether the key table is in a resize (MEMORY STATS `db.dict.rehashing.count`).
    pub fn is_rehashing(&self) -> bool {
        self.keys.is_rehashing()
    }

    /// Rebuilds the miss-filter words of up to `heads` head buckets of the key table, so that
    /// the bits of deleted keys do not pile up (time events).
    pub fn refresh_filters(&mut self, heads: usize) {
        self.keys.refresh_filters(heads);
    }

    /// Bytes of the table and the expire index (INFO memory overhead).
    pub fn overhead_bytes(&self) -> usize {
        self.keys.overhead_bytes() + self.field_queue.memory_bytes()
    }

    /// Entries of the field-expiry queue that are due at `now_ms`, and all of them (INFO
    /// `expired_keys_with_volatile_items_stale_perc`).
    pub fn field_expiry_backlog(&self, now_ms: i64) -> (usize, usize) {
        (self.field_queue.due_len(now_ms), self.field_queue.len())
    }

    /// Bytes of the old key table while a resize empties it (INFO
    /// `mem_overhead_db_hashtable_rehashing`).
    pub fn rehashing_bytes(&self) -> usize {
        self.keys.rehashing_bytes()
    }

    /// Bytes of the hashtable alone (MEMORY STATS `overhead.hashtable.main`).
    pub fn table_bytes(&self) -> usize {
        self.keys.table_bytes()
    }

    /// Bytes of the expire index alone (MEMORY STATS `overhead.hashtable.expires`).
    pub fn expires_bytes(&self) -> usize {
        self.keys.expires_bytes()
    }

    /// Prefetch what a lookup of `hash` will touch: first call for every key of a batch,
    /// then [`Db::prefetch_entries`] for every key.
    pub fn prefetch_bucket(&self, hash: u64) {
        self.keys.prefetch_bucket(hash);
    }

    pub fn prefetch_entries(&self, hash: u64) {
        self.keys.prefetch_matches(hash);
    }

    /// Prefetch the out-of-line value of `key` (after `prefetch_entries`: the entry is in
    /// cache by now, so finding it is cheap). Nothing for inline values.
    pub fn prefetch_value(&self, hash: u64, key: &[u8]) {
        if let Some(addr) = self.keys.get(hash, key).and_then(|e| e.value_addr()) {
            crate::table::prefetch_read(addr);
        }
    }

    /// Check the storage invariants (tests).
    pub fn check_invariants(&self) {
        self.keys.check_invariants();
    }
}

/// What a probe's bookkeeping updates beside the keys (see `Db::split`).
struct Beside<'a> {
    expiry: Expiry,
    log_removals: bool,
    log_created: bool,
    log_misses: bool,
    stats: &'a mut DbStats,
    events: &'a mut EventLog,
    lfu_rng: &'a mut Rng,
}

impl Beside<'_> {
    /// Logs `key` as created, while creations are logged.
    fn created(&mut self, key: &[u8]) {
        if self.log_created {
            self.events.push(key, KeyEvent::Created);
        }
    }

    /// Logs `key` as removed by the keyspace itself (`why`: expired or evicted), while
    /// removals are logged.
    fn removed(&mut self, key: &[u8], why: KeyEvent) {
        if self.log_removals {
            self.events.push(key, why);
        }
    }
}

/// Removes the located key when it holds an empty aggregate (a write removed its last
/// elements); returns whether it did.
fn remove_if_empty_agg(at: FoundKey<'_>) -> bool {
    let empty = at.get().agg().is_some_and(|a| a.is_empty());
    if empty {
        at.remove();
    }
    empty
}

/// Where `key` stands, in one table probe: a key past its expire time is removed first (lazy
/// expiry: counted, and logged for the server), leaving it absent.
#[inline]
fn probe_live<'k>(
    keys: &'k mut Keys,
    b: &mut Beside<'_>,
    h: u64,
    key: &[u8],
    now_ms: i64,
) -> KeyProbe<'k> {
    match keys.probe(h, key) {
        KeyProbe::Found(f)
            if b.expiry != Expiry::Paused
                && f.get().expire_at().is_some_and(|at| is_expired(at, now_ms)) =>
        {
            let (_expired, gap) = f.remove_leaving_gap();
            b.stats.expired_keys += 1;
            b.removed(key, KeyEvent::Expired);
            KeyProbe::Absent(gap)
        }
        p => p,
    }
}

/// An aggregate of type `T` in the keyspace, located (see [`Db::agg_entry`]): the write
/// handle. When it goes (dropped, or [`AggMut::remove_if_empty`]), the storage looks at what
/// the write did to a hash's volatile fields (see `keys`: `keys_with_volatile_items`).
pub struct AggMut<'a, T: Typed> {
    /// Always Some until the handle goes.
    at: Option<FoundKey<'a>>,
    _type: std::marker::PhantomData<fn() -> T>,
}

impl<'a, T: Typed> AggMut<'a, T> {
    /// The aggregate.
    pub fn get(&mut self) -> &mut T {
        let at = self.at.as_mut().expect("present until the handle goes");
        at.get_mut().agg_mut().and_then(T::from_mut).expect("type checked when found")
    }

    /// The aggregate, for as long as the keyspace's borrow lasts. Not for a hash: the
    /// storage would not see what is done to it after the handle went.
    pub fn into_mut(mut self) -> &'a mut T {
        const { assert!(!T::VOLATILE_ITEMS, "a hash is written through its AggMut handle") };
        let at = self.at.take().expect("present until the handle goes");
        at.into_mut().agg_mut().and_then(T::from_mut).expect("type checked when found")
    }

    /// Removes the key when its aggregate is empty (after a write removed elements); returns
    /// whether it did.
    pub fn remove_if_empty(mut self) -> bool {
        let mut at = self.at.take().expect("present until the handle goes");
        if T::VOLATILE_ITEMS {
            at.sync_volatile();
        }
        remove_if_empty_agg(at)
    }
}

impl<T: Typed> Drop for AggMut<'_, T> {
    fn drop(&mut self) {
        // Only a type with volatile items has a mark to keep (decided at compile time).
        if let Some(at) = self.at.as_mut().filter(|_| T::VOLATILE_ITEMS) {
            at.sync_volatile();
        }
    }
}

/// A live key, located (see [`Db::live`]).
pub struct LiveKey<'a> {
    at: FoundKey<'a>,
}

impl LiveKey<'_> {
    /// The key's expire time, if it has one.
    pub fn expire_at(&self) -> Option<i64> {
        self.at.get().expire_at()
    }

    /// Sets or clears the expire time of the key (`key`, the one looked up).
    pub fn set_expire(self, key: &[u8], at: Option<i64>) {
        self.at.set_expire(key, at);
    }
}

mod hash_fields;

#[cfg(test)]
mod edit_tests;

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_700_000_000_000;

    #[test]
    fn expiry_is_lazy_and_exclusive_of_the_expire_millisecond() {
        let mut db = Db::new();
        db.set_str(b"k", StrValue::Int(1), Ttl::At(T0 + 10), T0);
        assert!(db.contains(b"k", T0 + 10));
        assert!(!db.contains(b"k", T0 + 11));
        assert_eq!(db.len(), 0);
        assert_eq!(db.stats.expired_keys, 1);
        db.check_invariants();
    }

    #[test]
    fn scan_visits_every_key_despite_removals_and_resizes() {
        let mut db = Db::new();
        for i in 0..1000 {
            db.set_str(format!("k{i}").as_bytes(), StrValue::Int(i), Ttl::Clear, T0);
        }
        let mut seen = std::collections::HashSet::new();
        let mut cursor = 0;
        let mut step = 0;
        loop {
            let mut batch = Vec::new();
            cursor = db.scan(cursor, 7, |k, _| batch.push(k.to_vec()));
            for k in &batch {
                seen.insert(k.clone());
            }
            // Delete keys already returned (shrinks the table) and add new ones.
            for k in batch.iter().take(5) {
                db.remove(k, T0);
            }
            if step % 3 == 0 {
                db.set_str(format!("new{step}").as_bytes(), StrValue::Int(0), Ttl::Clear, T0);
            }
            step += 1;
            if cursor == 0 {
                break;
            }
        }
        for i in 0..1000 {
            assert!(seen.contains(format!("k{i}").as_bytes()), "k{i} missed");
        }
        db.check_invariants();
    }

    #[test]
    fn read_counts_hits_and_touch_follows_the_clock() {
        let mut db = Db::new();
        db.set_str(b"k", StrValue::Int(1), Ttl::Clear, T0);
        assert!(db.read_obj_notouch(b"k", T0 + 5000).is_some());
        assert!(db.read_obj_notouch(b"x", T0).is_none());
        assert_eq!((db.stats.keyspace_hits, db.stats.keyspace_misses), (1, 1));
        assert_eq!(idle_ms(db.object(b"k", T0).unwrap().lru(), T0 + 5000), 5000);
        db.read_obj(b"k", T0 + 5000);
        assert_eq!(idle_ms(db.object(b"k", T0).unwrap().lru(), T0 + 5000), 0);
    }

    #[test]
    fn lfu_counter_starts_at_init_grows_and_decays() {
        let mut db = Db::new();
        db.set_access_clock(AccessClock::Lfu { log_factor: 10, decay_time_mins: 1 });
        db.set_str(b"k", StrValue::Int(1), Ttl::Clear, T0);
        let lru = db.object(b"k", T0).unwrap().lru();
        assert_eq!(lfu_decayed(lru, T0, 1), LFU_INIT_VAL);
        db.read_obj(b"k", T0);
        let lru = db.object(b"k", T0).unwrap().lru();
        assert_eq!(lfu_decayed(lru, T0, 1), LFU_INIT_VAL + 1);
        for _ in 0..1000 {
            db.read_obj(b"k", T0);
        }
        let lru = db.object(b"k", T0).unwrap().lru();
        let c = lfu_decayed(lru, T0, 1);
        assert!(c > LFU_INIT_VAL + 1 && c < 40, "{c}");
        assert_eq!(lfu_decayed(lru, T0 + 3 * 60_000, 1), c - 3);
        assert_eq!(lfu_decayed(lru, T0 + 3 * 60_000, 0), c);
    }

    #[test]
    fn ttl_changes_keep_the_value_and_the_index_in_step() {
        let mut db = Db::new();
        db.set_str(b"k", StrValue::Raw(b"hello"[..].into()), Ttl::Clear, T0);
        assert!(db.set_expire(b"k", Some(T0 + 100), T0));
        assert_eq!(db.expires_len(), 1);
        assert!(db.set_expire(b"k", Some(i64::MAX), T0));
        assert!(db.set_expire(b"k", None, T0));
        assert_eq!(db.expires_len(), 0);
        assert_eq!(
            db.get(b"k", T0).and_then(ValueRef::as_str),
            Some(crate::types::string::StrRef::Raw(b"hello"))
        );
        let r: Result<_, WrongType> = db
            .update_str(b"k", T0, |s| Ok((StrEdit::SetRange { offset: 0, bytes: b"hi" }, s.len())));
        assert_eq!(r, Ok(Some(5)));
        assert_eq!(db.object(b"k", T0).unwrap().encoding(), "raw");
        assert_eq!(db.get(b"k", T0).and_then(ValueRef::as_str), Some(StrRef::Raw(b"hillo")));
        db.check_invariants();
    }

    #[test]
    fn created_and_missed_keys_are_logged_in_order_while_asked() {
        let mut db = Db::new();
        db.set_str(b"quiet", StrValue::Int(1), Ttl::Clear, T0);
        assert!(db.get(b"nokey", T0).is_none());
        assert!(db.events.is_empty(), "nothing logged while off");
        (db.log_created, db.log_misses, db.log_removals) = (true, true, true);
        db.set_str(b"k", StrValue::Int(1), Ttl::At(T0 + 1), T0);
        db.set_str(b"k", StrValue::Int(2), Ttl::Keep, T0);
        assert!(db.get(b"nokey", T0).is_none());
        assert!(db.read_obj_nonotify(b"nokey", T0).is_none());
        // Expired when overwritten: its expiry comes before the new key.
        db.set_str(b"k", StrValue::Int(3), Ttl::Clear, T0 + 2);
        let obj = db.take(b"quiet", T0).expect("exists");
        db.put(b"k", obj);
        let log: Vec<(&[u8], KeyEvent)> = db.events.iter().map(|(_, k, r)| (&k[..], *r)).collect();
        assert_eq!(
            log,
            [
                (&b"k"[..], KeyEvent::Created),
                (b"nokey", KeyEvent::Missed),
                (b"k", KeyEvent::Expired),
                (b"k", KeyEvent::Created),
                (b"k", KeyEvent::Created),
            ]
        );
        assert_eq!(db.stats.keyspace_misses, 3);
    }

    #[test]
    fn active_expiry_samples_only_keys_with_a_ttl() {
        let mut db = Db::new();
        for i in 0..100 {
            let ttl = if i % 2 == 0 { Ttl::At(T0 + 1) } else { Ttl::Clear };
            db.set_str(format!("k{i}").as_bytes(), StrValue::Int(i), ttl, T0);
        }
        let mut seed = 1;
        while db.expires_len() > 0 {
            db.expire_sample(seed, 20, T0 + 2, drop);
            seed += 1;
        }
        assert_eq!(db.len(), 50);
        assert_eq!(db.stats.expired_keys, 50);
        db.check_invariants();
    }
}
