//! Hash commands: HSET, HSETNX, HMSET, HGET, HMGET, HDEL, HLEN, HSTRLEN, HEXISTS, HKEYS,
//! HVALS, HGETALL, HINCRBY, HINCRBYFLOAT here; HRANDFIELD in `random`; HSCAN in `scan`;
//! the field TTL commands (HEXPIRE..., HTTL..., HPERSIST) in `ttl`; HSETEX, HGETEX and
//! HGETDEL in `ex`, with their shared `FIELDS` block and time options in `fields`.
//!
//! Fields whose TTL has passed are invisible to every read here (each takes the command's
//! `now_ms`), though HLEN still counts them until active expiry reclaims them, as Valkey
//! 9.1 does.
//!
//! Handlers parse and check every argument before they look the key up or create it, so a
//! failed command never leaves an empty hash behind. The listpack thresholds are read from
//! the configuration at each write ([`Limits::from_config`]), so CONFIG SET applies to the
//! next write; the encoding itself lives in `types::hash`.

mod ex;
mod fields;
mod random;
mod scan;
mod ttl;

use bytes::Bytes;

use crate::commands::args::int_arg;
use crate::commands::table::ks::{ACCESS, DELETE, INSERT, RO, RW, UPDATE};
use crate::commands::table::Data;
use crate::commands::table::{acl, flag, range, specs, Command, KeySpec};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::resp::reply::Reply;
use crate::types::agg::AggType;
use crate::types::hash::{HashObj, Limits, TtlWrite};
use crate::types::listpack::{LpEntry, INT_DECIMAL_BYTES_MAX};
use crate::types::string::LongDouble;

const RW_UPDATE: &[KeySpec] = &[range(RW | UPDATE, 1, 0, 1)];
const RW_INSERT: &[KeySpec] = &[range(RW | INSERT, 1, 0, 1)];
const RW_DELETE: &[KeySpec] = &[range(RW | DELETE, 1, 0, 1)];
const RW_ACCESS_UPDATE: &[KeySpec] = &[range(RW | ACCESS | UPDATE, 1, 0, 1)];
const RO_ACCESS: &[KeySpec] = &[range(RO | ACCESS, 1, 0, 1)];

const READ_FAST: (u64, u64) = (flag::READONLY | flag::FAST, acl::READ | acl::HASH | acl::FAST);
const READ_SLOW: (u64, u64) = (flag::READONLY, acl::READ | acl::HASH | acl::SLOW);
const WRITE_FAST: (u64, u64) =
    (flag::WRITE | flag::DENYOOM | flag::FAST, acl::WRITE | acl::HASH | acl::FAST);
/// HDEL never grows memory: no DENYOOM.
const DELETE_FAST: (u64, u64) = (flag::WRITE | flag::FAST, acl::WRITE | acl::HASH | acl::FAST);

const ORDER_TIP: &[&str] = &["nondeterministic_output_order"];
const OUTPUT_TIP: &[&str] = &["nondeterministic_output"];

const RW_ACCESS_DELETE: &[KeySpec] = &[range(RW | ACCESS | DELETE, 1, 0, 1)];
/// The TTL writes never grow memory much: no DENYOOM (as Valkey).
const TTL_WRITE: (u64, u64) = (flag::WRITE | flag::FAST, acl::WRITE | acl::HASH | acl::FAST);
const ON_FIELDS: &str = "O(N) where N is the number of specified fields.";

const O1: &str = "O(1)";
const ON_SIZE: &str = "O(N) where N is the size of the hash.";

pub static COMMANDS: &[Command] = &[
    Command::new("hset", -4, WRITE_FAST.0, WRITE_FAST.1, Data(hset))
        .history(&[("4.0.0", "Accepts multiple `field` and `value` arguments.")])
        .keys(RW_UPDATE)
        .doc("hash", "2.0.0", "Creates or modifies the value of a field in a hash.", "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs."),
    Command::new("hsetnx", 4, WRITE_FAST.0, WRITE_FAST.1, Data(hsetnx))
        .keys(RW_INSERT)
        .doc("hash", "2.0.0", "Sets the value of a field in a hash only when the field doesn't exist.", O1),
    Command::new("hmset", -4, WRITE_FAST.0, WRITE_FAST.1, Data(hmset))
        .keys(RW_UPDATE)
        .doc("hash", "2.0.0", "Sets the values of multiple fields.", "O(N) where N is the number of fields being set."),
    Command::new("hget", 3, READ_FAST.0, READ_FAST.1, Data(hget))
        .keys(RO_ACCESS)
        .doc("hash", "2.0.0", "Returns the value of a field in a hash.", O1),
    Command::new("hmget", -3, READ_FAST.0, READ_FAST.1, Data(hmget))
        .keys(RO_ACCESS)
        .doc("hash", "2.0.0", "Returns the values of all fields in a hash.", "O(N) where N is the number of fields being requested."),
    Command::new("hdel", -3, DELETE_FAST.0, DELETE_FAST.1, Data(hdel))
        .history(&[("2.4.0", "Accepts multiple `field` arguments.")])
        .keys(RW_DELETE)
        .doc("hash", "2.0.0", "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", "O(N) where N is the number of fields to be removed."),
    Command::new("hlen", 2, READ_FAST.0, READ_FAST.1, Data(hlen))
        .keys(specs::READ1_META)
        .doc("hash", "2.0.0", "Returns the number of fields in a hash.", O1),
    Command::new("hstrlen", 3, READ_FAST.0, READ_FAST.1, Data(hstrlen))
        .keys(specs::READ1_META)
        .doc("hash", "3.2.0", "Returns the length of the value of a field.", O1),
    Command::new("hexists", 3, READ_FAST.0, READ_FAST.1, Data(hexists))
        .keys(specs::READ1_META)
        .doc("hash", "2.0.0", "Determines whether a field exists in a hash.", O1),
    Command::new("hkeys", 2, READ_SLOW.0, READ_SLOW.1, Data(hkeys))
        .keys(RO_ACCESS)
        .tips(ORDER_TIP)
        .doc("hash", "2.0.0", "Returns all fields in a hash.", ON_SIZE),
    Command::new("hvals", 2, READ_SLOW.0, READ_SLOW.1, Data(hvals))
        .keys(RO_ACCESS)
        .tips(ORDER_TIP)
        .doc("hash", "2.0.0", "Returns all values in a hash.", ON_SIZE),
    Command::new("hgetall", 2, READ_SLOW.0, READ_SLOW.1, Data(hgetall))
        .keys(RO_ACCESS)
        .tips(ORDER_TIP)
        .doc("hash", "2.0.0", "Returns all fields and values in a hash.", ON_SIZE),
    Command::new("hincrby", 4, WRITE_FAST.0, WRITE_FAST.1, Data(hincrby))
        .keys(RW_ACCESS_UPDATE)
        .doc("hash", "2.0.0", "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.", O1),
    Command::new("hincrbyfloat", 4, WRITE_FAST.0, WRITE_FAST.1, Data(hincrbyfloat))
        .keys(RW_ACCESS_UPDATE)
        .doc("hash", "2.6.0", "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.", O1),
    Command::new("hrandfield", -2, READ_SLOW.0, READ_SLOW.1, Data(random::hrandfield))
        .keys(RO_ACCESS)
        .tips(OUTPUT_TIP)
        .doc("hash", "6.2.0", "Returns one or more random fields from a hash.", "O(N) where N is the number of fields returned"),
    Command::new("hscan", -3, READ_SLOW.0, READ_SLOW.1, Data(scan::hscan))
        .keys(RO_ACCESS)
        .tips(OUTPUT_TIP)
        .doc("hash", "2.8.0", "Iterates over fields and values of a hash.", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection."),
    Command::new("hexpire", -6, TTL_WRITE.0, TTL_WRITE.1, Data(ttl::hexpire))
        .keys(RW_UPDATE)
        .doc("hash", "9.0.0", "Sets expiry time on hash fields.", ON_FIELDS),
    Command::new("hpexpire", -6, TTL_WRITE.0, TTL_WRITE.1, Data(ttl::hpexpire))
        .keys(RW_UPDATE)
        .doc("hash", "9.0.0", "Sets expiry time on hash object.", ON_FIELDS),
    Command::new("hexpireat", -6, TTL_WRITE.0, TTL_WRITE.1, Data(ttl::hexpireat))
        .keys(RW_UPDATE)
        .doc("hash", "9.0.0", "Sets expiry time on hash fields.", ON_FIELDS),
    Command::new("hpexpireat", -6, TTL_WRITE.0, TTL_WRITE.1, Data(ttl::hpexpireat))
        .keys(RW_UPDATE)
        .doc("hash", "9.0.0", "Sets expiration time on hash field.", ON_FIELDS),
    Command::new("httl", -5, READ_FAST.0, READ_FAST.1, Data(ttl::httl))
        .keys(RO_ACCESS)
        .doc("hash", "9.0.0", "Returns the remaining time to live (in seconds) of a hash key's field(s) that have an associated expiration.", ON_FIELDS),
    Command::new("hpttl", -5, READ_FAST.0, READ_FAST.1, Data(ttl::hpttl))
        .keys(RO_ACCESS)
        .doc("hash", "9.0.0", "Returns the remaining time to live in milliseconds of a hash key's field(s) that have an associated expiration.", ON_FIELDS),
    Command::new("hexpiretime", -5, READ_FAST.0, READ_FAST.1, Data(ttl::hexpiretime))
        .keys(RO_ACCESS)
        .doc("hash", "9.0.0", "Returns Unix timestamps in seconds since the epoch at which the given key's field(s) will expire.", ON_FIELDS),
    Command::new("hpexpiretime", -5, READ_FAST.0, READ_FAST.1, Data(ttl::hpexpiretime))
        .keys(RO_ACCESS)
        .doc("hash", "9.0.0", "Returns the Unix timestamp in milliseconds since Unix epoch at which the given key's field(s) will expire.", ON_FIELDS),
    Command::new("hpersist", -5, TTL_WRITE.0, TTL_WRITE.1, Data(ttl::hpersist))
        .keys(RW_UPDATE)
        .doc("hash", "9.0.0", "Remove the existing expiration on a hash key's field(s).", ON_FIELDS),
    Command::new("hsetex", -6, WRITE_FAST.0, WRITE_FAST.1, Data(ex::hsetex))
        .keys(RW_INSERT)
        .doc("hash", "9.0.0", "Sets the value of one or more fields of a given hash key, and optionally sets their expiration time.", ON_FIELDS),
    Command::new("hgetex", -5, TTL_WRITE.0, TTL_WRITE.1, Data(ex::hgetex))
        .keys(RW_ACCESS_UPDATE)
        .doc("hash", "9.0.0", "Gets the value of one or more fields of a given hash key, and optionally sets their expiration time or time-to-live (TTL).", ON_FIELDS),
    Command::new("hgetdel", -5, DELETE_FAST.0, DELETE_FAST.1, Data(ex::hgetdel))
        .keys(RW_ACCESS_DELETE)
        .doc("hash", "9.1.0", "Returns the values of one or more fields and deletes them from a hash.", "O(N) where N is the number of fields to be retrieved and deleted."),
];

/// Reply with a field or value as a bulk string (integers in decimal).
fn reply_elem(out: &mut Reply, e: LpEntry<'_>) {
    match e {
        LpEntry::Int(n) => out.bulk_int(n),
        LpEntry::Str(s) => out.bulk(s),
    }
}

/// HSET and HMSET: field/value pairs after the key; the number of new fields.
fn set_pairs(ctx: &mut Ctx, argv: &[Bytes]) -> Result<i64, CmdError> {
    if argv.len() % 2 == 1 {
        let name = String::from_utf8_lossy(&argv[0]).to_ascii_lowercase();
        return Err(CmdError::WrongArity(name));
    }
    let limits = Limits::from_config(ctx.config);
    let db = &mut ctx.dbs[ctx.client.db];
    let mut entry = db.agg_entry(&argv[1], ctx.now_ms, Some(HashObj::new))?.expect("created");
    let h = entry.get();
    let pairs = &argv[2..];
    h.prepare_write(pairs, limits);
    let now = ctx.now_ms;
    let created = pairs
        .chunks_exact(2)
        .filter(|p| h.set_with(&p[0], &p[1], TtlWrite::Clear, limits, now))
        .count();
    drop(entry);
    // Raised even when no value changed, as Valkey does.
    ctx.changed(&argv[1], (pairs.len() / 2) as u64, KeyspaceEvents::HASH, "hset");
    Ok(created as i64)
}

fn hset(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let created = set_pairs(ctx, argv)?;
    ctx.out.int(created);
    Ok(())
}

fn hmset(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    set_pairs(ctx, argv)?;
    ctx.out.ok();
    Ok(())
}

fn hsetnx(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (key, field, value) = (&argv[1], &argv[2], &argv[3]);
    let limits = Limits::from_config(ctx.config);
    let db = &mut ctx.dbs[ctx.client.db];
    let mut entry = db.agg_entry(key, ctx.now_ms, Some(HashObj::new))?.expect("created");
    let h = entry.get();
    // As Valkey: an existing field changes nothing, not even the encoding.
    let set = !h.contains(field, ctx.now_ms);
    if set {
        h.prepare_write(&argv[2..4], limits);
        h.set_with(field, value, TtlWrite::Clear, limits, ctx.now_ms);
    }
    drop(entry);
    if set {
        ctx.changed(key, 1, KeyspaceEvents::HASH, "hset");
    }
    ctx.out.int(i64::from(set));
    Ok(())
}

fn hget(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let db = &mut ctx.dbs[ctx.client.db];
    match db.read_agg::<HashObj>(&argv[1], ctx.now_ms)?.and_then(|h| h.get(&argv[2], ctx.now_ms)) {
        Some(v) => reply_elem(ctx.out, v),
        None => ctx.out.null(),
    }
    Ok(())
}

fn hmget(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let db = &mut ctx.dbs[ctx.client.db];
    let h = db.read_agg::<HashObj>(&argv[1], ctx.now_ms)?;
    let fields = &argv[2..];
    ctx.out.array(fields.len());
    for field in fields {
        match h.and_then(|h| h.get(field, ctx.now_ms)) {
            Some(v) => reply_elem(ctx.out, v),
            None => ctx.out.null(),
        }
    }
    Ok(())
}

fn hdel(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let key = &argv[1];
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(mut h) = db.agg_existing::<HashObj>(key, ctx.now_ms)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let fields = h.get();
    let now = ctx.now_ms;
    let deleted = argv[2..].iter().filter(|f| fields.remove_live(f, now)).count();
    let emptied = h.remove_if_empty();
    if deleted > 0 {
        ctx.changed(key, deleted as u64, KeyspaceEvents::HASH, "hdel");
    }
    if emptied {
        ctx.changed(key, 0, KeyspaceEvents::GENERIC, "del");
    }
    ctx.out.int(deleted as i64);
    Ok(())
}

fn hlen(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let db = &mut ctx.dbs[ctx.client.db];
    let len = db.read_agg::<HashObj>(&argv[1], ctx.now_ms)?.map_or(0, |h| h.len());
    ctx.out.int(len as i64);
    Ok(())
}

fn hstrlen(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let db = &mut ctx.dbs[ctx.client.db];
    let value =
        db.read_agg::<HashObj>(&argv[1], ctx.now_ms)?.and_then(|h| h.get(&argv[2], ctx.now_ms));
    let len = value.map_or(0, |v| v.write_to(&mut [0u8; INT_DECIMAL_BYTES_MAX]).len());
    ctx.out.int(len as i64);
    Ok(())
}

fn hexists(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let db = &mut ctx.dbs[ctx.client.db];
    let found = db
        .read_agg::<HashObj>(&argv[1], ctx.now_ms)?
        .is_some_and(|h| h.contains(&argv[2], ctx.now_ms));
    ctx.out.int(i64::from(found));
    Ok(())
}

/// What HKEYS, HVALS and HGETALL return of each pair.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Fields,
    Values,
    Both,
}

fn get_all(ctx: &mut Ctx, key: &[u8], part: Part) -> CmdResult {
    let db = &mut ctx.dbs[ctx.client.db];
    let now = ctx.now_ms;
    let h = db.read_agg::<HashObj>(key, now)?;
    let len = h.map_or(0, |h| h.live_len(now));
    match part {
        Part::Both => ctx.out.map(len),
        Part::Fields | Part::Values => ctx.out.array(len),
    }
    for (field, value) in h.into_iter().flat_map(|h| h.iter_live(now)) {
        if part != Part::Values {
            reply_elem(ctx.out, field);
        }
        if part != Part::Fields {
            reply_elem(ctx.out, value);
        }
    }
    Ok(())
}

fn hkeys(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    get_all(ctx, &argv[1], Part::Fields)
}

fn hvals(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    get_all(ctx, &argv[1], Part::Values)
}

fn hgetall(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    get_all(ctx, &argv[1], Part::Both)
}

fn hincrby(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (key, field) = (&argv[1], &argv[2]);
    let incr = int_arg(&argv[3])?;
    let limits = Limits::from_config(ctx.config);
    let db = &mut ctx.dbs[ctx.client.db];
    let mut entry = db.agg_entry(key, ctx.now_ms, Some(HashObj::new))?.expect("created");
    let h = entry.get();
    // Errors come only from an existing field, so the hash is not empty on an error.
    let current = match h.get(field, ctx.now_ms) {
        None => 0,
        Some(v) => v.as_int().ok_or(CmdError::HashValueNotInteger)?,
    };
    let next = current.checked_add(incr).ok_or(CmdError::IncrOverflow)?;
    h.set_int(field, next, limits, ctx.now_ms);
    drop(entry);
    ctx.changed(key, 1, KeyspaceEvents::HASH, "hincrby");
    ctx.out.int(next);
    Ok(())
}

/// HINCRBYFLOAT in x87 long double arithmetic, printed as INCRBYFLOAT prints (see
/// `types::string::LongDouble`); the field stores the text replied.
fn hincrbyfloat(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (key, field) = (&argv[1], &argv[2]);
    let incr = LongDouble::parse(&argv[3]).ok_or(CmdError::NotFloat)?;
    if !incr.is_finite() {
        return Err(CmdError::ValueNanOrInfinity);
    }
    let limits = Limits::from_config(ctx.config);
    let db = &mut ctx.dbs[ctx.client.db];
    let mut entry = db.agg_entry(key, ctx.now_ms, Some(HashObj::new))?.expect("created");
    let h = entry.get();
    // Errors come only from an existing field, so the hash is not empty on an error.
    let current = match h.get(field, ctx.now_ms) {
        None => LongDouble::ZERO,
        Some(LpEntry::Int(n)) => LongDouble::from_i64(n),
        Some(LpEntry::Str(s)) => LongDouble::parse(s).ok_or(CmdError::HashValueNotFloat)?,
    };
    let sum = current.checked_add(incr).ok_or(CmdError::NanOrInfinity)?;
    let text = sum.to_human_string();
    h.set_with(field, text.as_bytes(), TtlWrite::Keep, limits, ctx.now_ms);
    drop(entry);
    ctx.changed(key, 1, KeyspaceEvents::HASH, "hincrbyfloat");
    // Replayed as the value it stored, as Valkey propagates it.
    ctx.propagate_as(|| {
        let hset = [b"HSET".as_slice(), key, field, text.as_bytes()];
        vec![hset.iter().map(|a| Bytes::copy_from_slice(a)).collect()]
    });
    ctx.out.bulk(text.as_bytes());
    Ok(())
}
