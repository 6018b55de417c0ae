//! HyperLogLog commands (issue 19): PFADD, PFCOUNT, PFMERGE here; PFDEBUG and PFSELFTEST in
//! `debug`. The representation (header, encodings, estimator, union) is `types::hll`'s;
//! this layer looks the keys up as Valkey does, stores the results in the keyspace (in
//! place where it can: a PFADD to a dense HLL rewrites the few bytes it changed, a PFCOUNT
//! the 8 bytes of its cached count), and reports the effects.
//!
//! # Effects, as Valkey 9.1 has them
//!
//! - PFADD: one change per element that raised a register, plus one for creating the key;
//!   event `pfadd`. PFMERGE: one change, event `pfadd` (a merge is a mass add).
//! - PFCOUNT of one key whose cached count was stale: the value changes (the count is
//!   cached), so WATCH and client tracking hear of the key and the command is propagated
//!   (PFCOUNT is flagged read-only, so it is propagated explicitly); no event.
//! - PFDEBUG GETREG / TODENSE of a sparse HLL: converted to dense; one change and
//!   propagation, but neither an event nor a WATCH or tracking signal (Valkey counts the
//!   change and nothing else).
//! - Every command that gets hold of an HLL value for writing (all but PFCOUNT of several
//!   keys) makes it a `raw` string for OBJECT ENCODING, as Valkey's `dbUnshareStringValue`.
//!
//! Valkey also flags PFCOUNT may-replicate, though COMMAND INFO does not show it (the
//! table here matches COMMAND INFO, so it leaves the flag out): read-only scripts refuse
//! PFCOUNT and CLIENT PAUSE WRITE holds it. Dispatch and the script runner name such
//! commands in their own lists (`publish`, `spublish`), where `pfcount` is still missing.

mod debug;

use bytes::Bytes;

use crate::commands::table::ks::{ACCESS, INSERT, RO, RW};
use crate::commands::table::{acl, flag, range, Command, Data, KeySpec};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::keyspace::db::{Db, StrEdit};
use crate::keyspace::entry::{KeyEntry, NewValue};
use crate::types::hll::{self, Edit, Registers, Write};
use crate::types::string::{StrRef, StrValue};

const PFADD_KEYS: &[KeySpec] = &[range(RW | INSERT, 1, 0, 1)];
const PFCOUNT_KEYS: &[KeySpec] = &[range(RW | ACCESS, 1, -1, 1)];
const PFMERGE_KEYS: &[KeySpec] =
    &[range(RW | ACCESS | INSERT, 1, 0, 1), range(RO | ACCESS, 2, -1, 1)];
const PFDEBUG_KEYS: &[KeySpec] = &[range(RW | ACCESS, 2, 0, 1)];

const G: &str = "hyperloglog";
const SINCE: &str = "2.8.9";
const HLL: u64 = acl::HYPERLOGLOG;

pub static COMMANDS: &[Command] = &[
    Command::new("pfadd", -2, flag::WRITE | flag::DENYOOM | flag::FAST, acl::WRITE | HLL | acl::FAST, Data(pfadd))
        .keys(PFADD_KEYS)
        .doc(G, SINCE, "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.", "O(1) to add every element."),
    Command::new("pfcount", -2, flag::READONLY | flag::MAY_REPLICATE_UNPRINTED, acl::READ | HLL | acl::SLOW, Data(pfcount))
        .keys(PFCOUNT_KEYS)
        .key_notes(&["RW because it may change the internal representation of the key, and propagate to replicas"])
        .doc(G, SINCE, "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).", "O(1) with a very small average constant time when called with a single key. O(N) with N being the number of keys, and much bigger constant times, when called with multiple keys."),
    Command::new("pfmerge", -2, flag::WRITE | flag::DENYOOM, acl::WRITE | HLL | acl::SLOW, Data(pfmerge))
        .keys(PFMERGE_KEYS)
        .doc(G, SINCE, "Merges one or more HyperLogLog values into a single key.", "O(N) to merge N HyperLogLogs, but with high constant times."),
    Command::new("pfselftest", 1, flag::ADMIN, HLL | acl::ADMIN | acl::SLOW | acl::DANGEROUS, Data(debug::pfselftest))
        .doc(G, SINCE, "An internal command for testing HyperLogLog values.", "N/A")
        .doc_flags(&["syscmd"]),
    Command::new("pfdebug", 3, flag::WRITE | flag::DENYOOM | flag::ADMIN, acl::WRITE | HLL | acl::ADMIN | acl::SLOW | acl::DANGEROUS, Data(debug::pfdebug))
        .keys(PFDEBUG_KEYS)
        .doc(G, SINCE, "Internal commands for debugging HyperLogLog values.", "N/A")
        .doc_flags(&["syscmd"]),
];

/// The errors of the HLL commands, with Valkey's texts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HllError {
    /// A string that is not an HLL.
    NotHll,
    /// A sparse HLL whose opcodes do not add up.
    Corrupt,
}

impl From<HllError> for CmdError {
    fn from(e: HllError) -> CmdError {
        CmdError::Other(
            match e {
                HllError::NotHll => "WRONGTYPE Key is not a valid HyperLogLog string value.",
                HllError::Corrupt => "INVALIDOBJ Corrupted HLL object detected",
            }
            .into(),
        )
    }
}

impl From<hll::NotHll> for CmdError {
    fn from(_: hll::NotHll) -> CmdError {
        HllError::NotHll.into()
    }
}

impl From<hll::Corrupt> for CmdError {
    fn from(_: hll::Corrupt) -> CmdError {
        HllError::Corrupt.into()
    }
}

/// The bytes of the HLL stored in `e`: WRONGTYPE for another type, and Valkey's
/// "not a valid HyperLogLog" for a string that fails its checks (an integer-encoded string
/// always does).
fn hll_of(e: &KeyEntry) -> Result<&[u8], CmdError> {
    if !e.is_str() {
        return Err(CmdError::WrongType);
    }
    match e.value() {
        StrRef::Int(_) => Err(HllError::NotHll.into()),
        StrRef::Raw(b) => {
            hll::check(b)?;
            Ok(b)
        }
    }
}

/// How the new value of an HLL that already exists is written.
enum Store {
    /// Overwrite these runs (the length grows if the last one runs past the end).
    Edits(Vec<Edit>),
    /// Put a new value in place of the old (a promotion to dense, or a shorter value).
    Replace(Vec<u8>),
}

impl Store {
    /// The cheapest way from `old` to `new`: the tail from the first byte that differs
    /// when `new` is no shorter; else the whole value. None when they are equal.
    fn between(old: &[u8], new: Vec<u8>) -> Option<Store> {
        let same = common_prefix(old, &new);
        if same == new.len() && new.len() == old.len() {
            return None;
        }
        if new.len() < old.len() || (new.len() == hll::DENSE_BYTES && old.len() != new.len()) {
            // A promotion moves the whole value anyway: one exact-sized copy.
            return Some(Store::Replace(new));
        }
        Some(Store::Edits(vec![Edit { offset: same, bytes: new[same..].to_vec() }]))
    }

    /// Of a PFADD's [`Write`] against the stored `old`.
    fn of(old: &[u8], write: Write) -> Option<Store> {
        match write {
            Write::Nothing => None,
            Write::Edits(edits) => Some(Store::Edits(edits)),
            Write::Value(new) => Store::between(old, new),
        }
    }
}

/// The length of the longest common prefix of `a` and `b`, compared 32 bytes at a time (a
/// sparse PFADD compares values of up to `hll-sparse-max-bytes` on every call).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 32;
    let n = a.len().min(b.len());
    let equal_chunks =
        a[..n].chunks(CHUNK).zip(b[..n].chunks(CHUNK)).take_while(|(x, y)| x == y).count();
    let from = (equal_chunks * CHUNK).min(n);
    from + a[from..n].iter().zip(&b[from..n]).take_while(|(x, y)| x == y).count()
}

/// Writes `store` to the HLL at `key` (an existing string, `raw` or not as `was_raw`
/// says), keeping its TTL, and leaves it a `raw` string.
fn apply(db: &mut Db, key: &[u8], now_ms: i64, store: Option<Store>, was_raw: bool) -> CmdResult {
    match store {
        None if was_raw => Ok(()),
        None => make_raw(db, key, now_ms),
        Some(Store::Edits(edits)) => {
            for Edit { offset, bytes } in &edits {
                set_range(db, key, now_ms, *offset, bytes)?;
            }
            Ok(())
        }
        Some(Store::Replace(new)) => {
            let value = StrValue::Raw(new.into_boxed_slice());
            db.update_str::<_, CmdError>(key, now_ms, |_| Ok((StrEdit::Replace(value), ())))?;
            make_raw(db, key, now_ms)
        }
    }
}

/// Overwrites `bytes` at `offset` of the string at `key`, in place where its layout allows.
fn set_range(db: &mut Db, key: &[u8], now_ms: i64, offset: usize, bytes: &[u8]) -> CmdResult {
    let edit = StrEdit::SetRange { offset, bytes };
    db.update_str::<_, CmdError>(key, now_ms, |_| Ok((edit, ())))?;
    Ok(())
}

/// Marks the string at `key` `raw` (an edit that writes its first byte again), unless it is.
fn make_raw(db: &mut Db, key: &[u8], now_ms: i64) -> CmdResult {
    if db.object(key, now_ms).is_some_and(is_raw) {
        return Ok(());
    }
    set_range(db, key, now_ms, 0, &hll::MAGIC[..1])
}

/// Whether OBJECT ENCODING says `raw` for `e`.
fn is_raw(e: &KeyEntry) -> bool {
    e.encoding() == "raw"
}

/// Reports a change Valkey counts (dirty, and so propagation for a write command) but
/// announces to nobody: no event, no WATCH or tracking signal, nothing woken. That is the
/// group-change call with no event, no wake-up and no modification of the key.
fn changed_silently(ctx: &mut Ctx, key: &[u8]) {
    ctx.db().group_changed(key, 1, None, false, false);
}

fn pfadd(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (key, elements) = (&argv[1], &argv[2..]);
    let now_ms = ctx.now_ms;
    let sparse_max_bytes = ctx.config.memory.hll_sparse_max_bytes;
    let db = ctx.db();
    // Valkey's lookupKeyWrite: no hit or miss counted.
    let (updated, corrupt) = match db.object(key, now_ms) {
        None => {
            let (value, raised) = hll::new_with(elements, sparse_max_bytes);
            db.set_str_edited(key, NewValue::Str(&value), now_ms);
            // Creating the key counts as a change, with or without elements.
            (1 + raised, false)
        }
        Some(e) => {
            let (old, raw) = (hll_of(e)?, is_raw(e));
            let out = hll::add(old, elements, sparse_max_bytes);
            let store = Store::of(old, out.write);
            apply(db, key, now_ms, store, raw)?;
            (out.raised, out.corrupt)
        }
    };
    if corrupt {
        return Err(HllError::Corrupt.into());
    }
    if updated > 0 {
        ctx.changed(key, updated, KeyspaceEvents::STRING, "pfadd");
    }
    ctx.out.int((updated > 0) as i64);
    Ok(())
}

/// Where PFCOUNT of one key got its count.
enum Count {
    /// From the header.
    Cached(u64),
    /// From the registers: to be cached.
    Computed(u64),
}

fn pfcount(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    if argv.len() > 2 {
        return pfcount_union(ctx, &argv[1..]);
    }
    let key = &argv[1];
    let now_ms = ctx.now_ms;
    let db = ctx.db();
    // Valkey's lookupKeyRead: a hit or a miss is counted.
    let (cached, raw) = match db.read_obj(key, now_ms) {
        None => {
            ctx.out.int(0);
            return Ok(());
        }
        Some(e) => {
            let value = hll_of(e)?;
            match hll::cached_count(value) {
                Some(n) => (Count::Cached(n), is_raw(e)),
                None => (Count::Computed(hll::count(value)?), is_raw(e)),
            }
        }
    };
    let count = match cached {
        Count::Cached(n) => {
            apply(db, key, now_ms, None, raw)?;
            n
        }
        Count::Computed(n) => {
            // The count is cached in the value: a write of 8 bytes, which Valkey propagates.
            let (offset, bytes) = hll::cache_edit(n);
            set_range(db, key, now_ms, offset, &bytes)?;
            ctx.db().group_changed(key, 1, None, false, true);
            ctx.propagate_as(|| vec![argv.to_vec()]);
            n
        }
    };
    ctx.out.int(count as i64);
    Ok(())
}

/// PFCOUNT of several keys: the count of their union, computed on the side (nothing is
/// cached or written). Missing keys count as empty HLLs.
fn pfcount_union(ctx: &mut Ctx, keys: &[Bytes]) -> CmdResult {
    let now_ms = ctx.now_ms;
    let db = ctx.db();
    let mut union = Registers::new();
    for key in keys {
        if let Some(e) = db.read_obj(key, now_ms) {
            union.merge(hll_of(e)?)?;
        }
    }
    ctx.out.int(union.count() as i64);
    Ok(())
}

fn pfmerge(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let dest = &argv[1];
    let now_ms = ctx.now_ms;
    let sparse_max_bytes = ctx.config.memory.hll_sparse_max_bytes;
    let db = ctx.db();
    // The destination is merged too, first; every key is checked before anything changes.
    let mut union = Registers::new();
    for key in &argv[1..] {
        if let Some(e) = db.read_obj(key, now_ms) {
            union.merge(hll_of(e)?)?;
        }
    }
    match db.object(dest, now_ms) {
        None => {
            let value = union.merged(None, sparse_max_bytes)?;
            db.set_str_edited(dest, NewValue::Str(&value), now_ms);
        }
        Some(e) => {
            let (old, raw) = (hll_of(e)?, is_raw(e));
            let new = union.merged(Some(old), sparse_max_bytes)?;
            let store = Store::between(old, new);
            apply(db, dest, now_ms, store, raw)?;
        }
    }
    ctx.changed(dest, 1, KeyspaceEvents::STRING, "pfadd");
    ctx.out.ok();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_prefixes() {
        let a: Vec<u8> = (0..100u8).collect();
        for cut in [0, 1, 31, 32, 33, 64, 99] {
            let mut b = a.clone();
            b[cut] ^= 1;
            assert_eq!(common_prefix(&a, &b), cut);
            assert_eq!(common_prefix(&a[..cut], &b), cut);
        }
        assert_eq!(common_prefix(&a, &a), 100);
        assert_eq!(common_prefix(&a, &[]), 0);
    }

    #[test]
    fn stores_write_the_changed_tail_or_replace() {
        let old = b"HYLL-abcdef".to_vec();
        assert!(Store::between(&old, old.clone()).is_none());
        let Some(Store::Edits(edits)) = Store::between(&old, b"HYLL-abXdefgh".to_vec()) else {
            panic!("a tail edit");
        };
        assert_eq!(edits, [Edit { offset: 7, bytes: b"Xdefgh".to_vec() }]);
        assert!(matches!(Store::between(&old, b"HYLL-ab".to_vec()), Some(Store::Replace(_))));
    }
}
