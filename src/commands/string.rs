//! String commands: GET and the SET family (SET, SETNX, SETEX, PSETEX, GETSET, GETEX,
//! GETDEL), MGET / MSET / MSETNX here; in-place edits, counters and ranges in `edit`; LCS in
//! `lcs`. Values are binary safe throughout, and canonical integers are stored as integers.
//!
//! Every command that writes one string value runs [`set_generic`] with a parsed
//! [`SetOptions`]. SET and GETEX share one option grammar ([`parse_options`]), checked as
//! Valkey checks it; the expire time is validated afterwards, separately ([`resolve_expiry`]),
//! because Valkey reports a syntax error before a bad time, and GETEX on a missing key never
//! looks at the time at all.
//!
//! # Layout
//! - `string.rs`: the command table, shared helpers, the SET/GET family and MGET/MSET.
//! - `string/edit.rs`: APPEND, SETRANGE, GETRANGE/SUBSTR, STRLEN, INCR and friends.
//! - `string/lcs.rs`: LCS.

mod cond;
mod edit;
mod lcs;

use bytes::Bytes;

use crate::commands::args::{int_arg, is, Args};
use crate::commands::table::ks::{ACCESS, DELETE, INSERT, OW, RM, RO, RW, UPDATE, VARIABLE_FLAGS};
use crate::commands::table::Data;
use crate::commands::table::{acl, flag, range, specs, BeginSearch, Command, FindKeys, KeySpec};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::keyspace::db::{Db, Ttl};
use crate::keyspace::entry::KeyEntry;
use crate::resp::reply::Reply;
use crate::types::string::StrRef;

/// SET: RW and ACCESS because of the optional GET argument.
const SET_KEYS: &[KeySpec] = &[range(RW | ACCESS | UPDATE | VARIABLE_FLAGS, 1, 0, 1)];
/// SETNX: the key is only ever created.
const SETNX_KEYS: &[KeySpec] = &[range(OW | INSERT, 1, 0, 1)];
/// GETDEL: read, then deleted.
const GETDEL_KEYS: &[KeySpec] = &[range(RW | ACCESS | DELETE, 1, 0, 1)];
/// MSET: every other argument from 1 is a key, overwritten.
const MSET_KEYS: &[KeySpec] = &[range(OW | UPDATE, 1, -1, 2)];
/// MSETNX: as MSET, but keys are only ever created.
const MSETNX_KEYS: &[KeySpec] = &[range(OW | INSERT, 1, -1, 2)];
/// MSETEX: a key count, then the pairs.
const MSETEX_KEYS: &[KeySpec] = &[KeySpec {
    flags: OW | UPDATE,
    begin: BeginSearch::Index(1),
    find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, step: 2 },
}];
/// DELIFEQ: removes its key.
const DELIFEQ_KEYS: &[KeySpec] = &[range(RM | DELETE, 1, 0, 1)];
/// APPEND: read-modify-write that only adds data.
const APPEND_KEYS: &[KeySpec] = &[range(RW | INSERT, 1, 0, 1)];
/// LCS: two keys, read.
const LCS_KEYS: &[KeySpec] = &[range(RO | ACCESS, 1, 1, 1)];

/// Command tips, as COMMAND INFO prints them.
const MULTI_SHARD: &[&str] = &["request_policy:multi_shard"];
const MULTI_SHARD_ALL_SUCCEEDED: &[&str] =
    &["request_policy:multi_shard", "response_policy:all_succeeded"];

const READ_FAST: (u64, u64) = (flag::READONLY | flag::FAST, acl::READ | acl::STRING | acl::FAST);
const READ_SLOW: (u64, u64) = (flag::READONLY, acl::READ | acl::STRING | acl::SLOW);
const WRITE_FAST: (u64, u64) =
    (flag::WRITE | flag::DENYOOM | flag::FAST, acl::WRITE | acl::STRING | acl::FAST);
const WRITE_SLOW: (u64, u64) = (flag::WRITE | flag::DENYOOM, acl::WRITE | acl::STRING | acl::SLOW);
/// GETDEL and GETEX never grow memory: no DENYOOM.
const WRITE_FAST_NO_OOM: (u64, u64) =
    (flag::WRITE | flag::FAST, acl::WRITE | acl::STRING | acl::FAST);

const O1: &str = "O(1)";
const RANGE_COMPLEXITY: &str = "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.";

pub static COMMANDS: &[Command] = &[
    Command::new("get", 2, READ_FAST.0, READ_FAST.1, Data(get))
        .keys(specs::READ1)
        .doc("string", "1.0.0", "Returns the string value of a key.", O1),
    Command::new("set", -3, WRITE_SLOW.0, WRITE_SLOW.1, Data(set))
        .history(&[
            ("2.6.12", "Added the `EX`, `PX`, `NX` and `XX` options."),
            ("6.0.0", "Added the `KEEPTTL` option."),
            ("6.2.0", "Added the `GET`, `EXAT` and `PXAT` option."),
            ("7.0.0", "Allowed the `NX` and `GET` options to be used together."),
            ("8.1.0", "Added the `IFEQ` option."),
        ])
        .keys(SET_KEYS)
        .key_notes(&["RW and ACCESS due to the optional `GET` argument"])
        .doc("string", "1.0.0", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", O1),
    Command::new("setnx", 3, WRITE_FAST.0, WRITE_FAST.1, Data(setnx))
        .keys(SETNX_KEYS)
        .doc("string", "1.0.0", "Sets the string value of a key only when the key doesn't exist.", O1),
    Command::new("setex", 4, WRITE_SLOW.0, WRITE_SLOW.1, Data(setex))
        .keys(specs::OVERWRITE1)
        .doc("string", "2.0.0", "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", O1),
    Command::new("psetex", 4, WRITE_SLOW.0, WRITE_SLOW.1, Data(psetex))
        .keys(specs::OVERWRITE1)
        .doc("string", "2.6.0", "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", O1),
    Command::new("getset", 3, WRITE_FAST.0, WRITE_FAST.1, Data(getset))
        .keys(specs::RW1_UPDATE)
        .doc("string", "1.0.0", "Returns the previous string value of a key after setting it to a new value.", O1),
    Command::new("getdel", 2, WRITE_FAST_NO_OOM.0, WRITE_FAST_NO_OOM.1, Data(getdel))
        .keys(GETDEL_KEYS)
        .doc("string", "6.2.0", "Returns the string value of a key after deleting the key.", O1),
    Command::new("getex", -2, WRITE_FAST_NO_OOM.0, WRITE_FAST_NO_OOM.1, Data(getex))
        .keys(specs::RW1_UPDATE)
        .key_notes(&["RW and UPDATE because it changes the TTL"])
        .doc("string", "6.2.0", "Returns the string value of a key after setting its expiration time.", O1),
    Command::new("mget", -2, READ_FAST.0, READ_FAST.1, Data(mget))
        .keys(specs::READ_ALL)
        .tips(MULTI_SHARD)
        .doc("string", "1.0.0", "Atomically returns the string values of one or more keys.", "O(N) where N is the number of keys to retrieve."),
    Command::new("mset", -3, WRITE_SLOW.0, WRITE_SLOW.1, Data(mset))
        .keys(MSET_KEYS)
        .tips(MULTI_SHARD_ALL_SUCCEEDED)
        .doc("string", "1.0.1", "Atomically creates or modifies the string values of one or more keys.", "O(N) where N is the number of keys to set."),
    Command::new("msetnx", -3, WRITE_SLOW.0, WRITE_SLOW.1, Data(msetnx))
        .keys(MSETNX_KEYS)
        .doc("string", "1.0.1", "Atomically modifies the string values of one or more keys only when all keys don't exist.", "O(N) where N is the number of keys to set."),
    Command::new("msetex", -4, WRITE_SLOW.0 | flag::MOVABLE_KEYS, WRITE_SLOW.1, Data(cond::msetex))
        .keys(MSETEX_KEYS)
        .tips(MULTI_SHARD_ALL_SUCCEEDED)
        .doc("string", "9.1.0", "Atomically creates or modifies the string values of one or more keys, and optionally set their expiration.", "O(N) where N is the number of keys to set."),
    Command::new("delifeq", 3, flag::WRITE | flag::FAST, acl::WRITE | acl::STRING | acl::FAST, Data(cond::delifeq))
        .keys(DELIFEQ_KEYS)
        .doc("string", "9.0.0", "Delete key if value matches string.", O1),
    Command::new("append", 3, WRITE_FAST.0, WRITE_FAST.1, Data(edit::append))
        .keys(APPEND_KEYS)
        .doc("string", "2.0.0", "Appends a string to the value of a key. Creates the key if it doesn't exist.", "O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by the server will double the free space available on every reallocation."),
    Command::new("strlen", 2, READ_FAST.0, READ_FAST.1, Data(edit::strlen))
        .keys(specs::READ1_META)
        .doc("string", "2.2.0", "Returns the length of a string value.", O1),
    Command::new("incr", 2, WRITE_FAST.0, WRITE_FAST.1, Data(edit::incr))
        .keys(specs::RW1_UPDATE)
        .doc("string", "1.0.0", "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", O1),
    Command::new("decr", 2, WRITE_FAST.0, WRITE_FAST.1, Data(edit::decr))
        .keys(specs::RW1_UPDATE)
        .doc("string", "1.0.0", "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", O1),
    Command::new("incrby", 3, WRITE_FAST.0, WRITE_FAST.1, Data(edit::incrby))
        .keys(specs::RW1_UPDATE)
        .doc("string", "1.0.0", "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", O1),
    Command::new("decrby", 3, WRITE_FAST.0, WRITE_FAST.1, Data(edit::decrby))
        .keys(specs::RW1_UPDATE)
        .doc("string", "1.0.0", "Decrements the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", O1),
    Command::new("incrbyfloat", 3, WRITE_FAST.0, WRITE_FAST.1, Data(edit::incrbyfloat))
        .keys(specs::RW1_UPDATE)
        .doc("string", "2.6.0", "Increments the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", O1),
    Command::new("getrange", 4, READ_SLOW.0, READ_SLOW.1, Data(edit::getrange))
        .keys(specs::READ1)
        .doc("string", "2.4.0", "Returns a substring of the string stored at a key.", RANGE_COMPLEXITY),
    Command::new("setrange", 4, WRITE_SLOW.0, WRITE_SLOW.1, Data(edit::setrange))
        .keys(specs::RW1_META)
        .doc("string", "2.2.0", "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", "O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument."),
    Command::new("substr", 4, READ_SLOW.0, READ_SLOW.1, Data(edit::getrange))
        .keys(specs::READ1)
        .doc("string", "1.0.0", "Returns a substring from a string value.", RANGE_COMPLEXITY),
    Command::new("lcs", -3, READ_SLOW.0, READ_SLOW.1, Data(lcs::lcs))
        .keys(LCS_KEYS)
        .doc("string", "7.0.0", "Finds the longest common substring.", "O(N*M) where N and M are the lengths of s1 and s2, respectively"),
];

/// Reply with a string value.
pub fn reply_str(out: &mut Reply, s: StrRef<'_>) {
    match s {
        StrRef::Int(n) => out.bulk_int(n),
        StrRef::Raw(b) => out.bulk(b),
    }
}

/// Reply with the string value of `e`: a long out-of-line value (at least `share_from`
/// bytes) is referenced by the reply instead of copied into it (see `resp::reply`), so a big
/// GET costs the event loop neither the copy nor the page faults of a fresh reply buffer.
pub fn reply_stored(out: &mut Reply, e: &KeyEntry, share_from: usize) {
    let value = e.value();
    if let StrRef::Raw(b) = value {
        if b.len() >= share_from {
            if let Some(share) = e.share_str() {
                out.bulk_shared(Bytes::from_owner(share));
                return;
            }
        }
    }
    reply_str(out, value);
}

/// The value length from which replies reference string values instead of copying them.
fn share_from(ctx: &Ctx) -> usize {
    let config = &ctx.config;
    config.network.avoid_copy_min_len(config.io_threads)
}

/// As [`read_str`], the entry itself (for [`reply_stored`]).
fn read_str_entry<'d>(
    db: &'d mut Db,
    key: &[u8],
    now_ms: i64,
) -> Result<Option<&'d KeyEntry>, CmdError> {
    match db.read_obj(key, now_ms) {
        None => Ok(None),
        Some(e) if e.is_str() => Ok(Some(e)),
        Some(_) => Err(CmdError::WrongType),
    }
}

/// Look `key` up for reading (counts a hit or a miss): None when missing, WRONGTYPE when it
/// holds another type.
fn read_str<'d>(db: &'d mut Db, key: &[u8], now_ms: i64) -> Result<Option<StrRef<'d>>, CmdError> {
    Ok(read_str_entry(db, key, now_ms)?.map(KeyEntry::value))
}

/// When a SET-like write happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Condition {
    Always,
    /// Only when the key does not exist.
    Nx,
    /// Only when the key exists.
    Xx,
}

/// What happens to the key's expire time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// SET: drop any TTL. GETEX: leave it alone.
    None,
    /// KEEPTTL (SET).
    Keep,
    /// PERSIST (GETEX).
    Persist,
    /// Expire at this unix time in milliseconds.
    At(i64),
}

/// Whether the old value is replied (SET ... GET, GETSET).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OldValue {
    Discard,
    Reply,
}

/// A parsed SET-like command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetOptions {
    pub condition: Condition,
    pub expiry: Expiry,
    pub old_value: OldValue,
}

/// How a SET-like command acknowledges (when the old value is not replied instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ack {
    /// `+OK` when written, null when the condition failed (SET).
    OkOrNull,
    /// `:1` when written, `:0` when the condition failed (SETNX).
    OneOrZero,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimeUnit {
    Seconds,
    Millis,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimeBase {
    /// EX / PX: from now.
    Relative,
    /// EXAT / PXAT: a unix time.
    Absolute,
}

/// An expiry option as written, before its number is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ExpiryArg<'a> {
    None,
    KeepTtl,
    Persist,
    Timed { unit: TimeUnit, base: TimeBase, value: &'a [u8] },
}

impl ExpiryArg<'_> {
    /// Same option, ignoring the number (`EX 1 EX 2` is allowed, `EX 1 PX 2` is not).
    fn same_option(&self, other: &ExpiryArg<'_>) -> bool {
        match (self, other) {
            (
                ExpiryArg::Timed { unit: u1, base: b1, .. },
                ExpiryArg::Timed { unit: u2, base: b2, .. },
            ) => u1 == u2 && b1 == b2,
            _ => std::mem::discriminant(self) == std::mem::discriminant(other),
        }
    }
}

/// Which command's options are being parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Grammar {
    /// NX | XX | IFEQ value, GET, EX | PX | EXAT | PXAT | KEEPTTL.
    Set,
    /// NX | XX, EX | PX | EXAT | PXAT | KEEPTTL.
    Msetex,
    /// EX | PX | EXAT | PXAT | PERSIST.
    GetEx,
}

/// Options as written (Valkey's `parseExtendedStringArgumentsOrReply`).
#[derive(Clone, Copy, Debug)]
struct ParsedOptions<'a> {
    condition: Condition,
    expiry: ExpiryArg<'a>,
    old_value: OldValue,
    /// SET's IFEQ: write only over a string equal to this.
    if_eq: Option<&'a [u8]>,
}

fn timed_option(word: &[u8]) -> Option<(TimeUnit, TimeBase)> {
    let options = [
        ("EX", TimeUnit::Seconds, TimeBase::Relative),
        ("PX", TimeUnit::Millis, TimeBase::Relative),
        ("EXAT", TimeUnit::Seconds, TimeBase::Absolute),
        ("PXAT", TimeUnit::Millis, TimeBase::Absolute),
    ];
    options.iter().find(|(name, _, _)| is(word, name)).map(|&(_, unit, base)| (unit, base))
}

/// Parse the options; any repeated-but-conflicting, misplaced or unknown option, or a
/// missing time, is a syntax error.
fn parse_options<'a>(grammar: Grammar, args: &mut Args<'a>) -> Result<ParsedOptions<'a>, CmdError> {
    let mut opts = ParsedOptions {
        condition: Condition::Always,
        expiry: ExpiryArg::None,
        old_value: OldValue::Discard,
        if_eq: None,
    };
    let set = grammar != Grammar::GetEx;
    // NX, XX and IFEQ exclude one another.
    let free = |o: &ParsedOptions, c: Condition| {
        o.if_eq.is_none() && (o.condition == Condition::Always || o.condition == c)
    };
    while let Some(word) = args.next_opt() {
        let expiry = if is(word, "NX") && set && free(&opts, Condition::Nx) {
            opts.condition = Condition::Nx;
            continue;
        } else if is(word, "XX") && set && free(&opts, Condition::Xx) {
            opts.condition = Condition::Xx;
            continue;
        } else if is(word, "IFEQ") && grammar == Grammar::Set && free(&opts, Condition::Always) {
            opts.if_eq = Some(&args.next_bytes()?[..]);
            continue;
        } else if is(word, "GET") && grammar == Grammar::Set {
            opts.old_value = OldValue::Reply;
            continue;
        } else if is(word, "KEEPTTL") && set {
            ExpiryArg::KeepTtl
        } else if is(word, "PERSIST") && !set {
            ExpiryArg::Persist
        } else if let Some((unit, base)) = timed_option(word) {
            ExpiryArg::Timed { unit, base, value: args.next_bytes()? }
        } else {
            return Err(CmdError::Syntax);
        };
        if opts.expiry != ExpiryArg::None && !opts.expiry.same_option(&expiry) {
            return Err(CmdError::Syntax);
        }
        opts.expiry = expiry;
    }
    Ok(opts)
}

/// Check the time of an expiry option and make it absolute. Non-positive times, and times
/// that overflow in milliseconds (or once `now` is added), are refused as Valkey does.
fn resolve_expiry(arg: ExpiryArg<'_>, now_ms: i64, cmd: &str) -> Result<Expiry, CmdError> {
    let (unit, base, value) = match arg {
        ExpiryArg::None => return Ok(Expiry::None),
        ExpiryArg::KeepTtl => return Ok(Expiry::Keep),
        ExpiryArg::Persist => return Ok(Expiry::Persist),
        ExpiryArg::Timed { unit, base, value } => (unit, base, value),
    };
    let invalid = || CmdError::InvalidExpire(cmd.to_string());
    let n = int_arg(value)?;
    if n <= 0 {
        return Err(invalid());
    }
    let ms = match unit {
        TimeUnit::Seconds => n.checked_mul(1000).ok_or_else(invalid)?,
        TimeUnit::Millis => n,
    };
    let at_ms = match base {
        TimeBase::Relative => ms.checked_add(now_ms).ok_or_else(invalid)?,
        TimeBase::Absolute => ms,
    };
    Ok(Expiry::At(at_ms))
}

/// The one write path of SET, SETNX, SETEX, PSETEX and GETSET; `if_eq` is SET's IFEQ.
fn set_generic(
    ctx: &mut Ctx,
    key: &[u8],
    value: &[u8],
    opts: SetOptions,
    ack: Ack,
    if_eq: Option<&[u8]>,
) -> CmdResult {
    let now_ms = ctx.now_ms;
    let share = share_from(ctx);
    let db = &mut ctx.dbs[ctx.client.db];
    // Whether the key exists, known early only when the old value is replied.
    let old_exists = match opts.old_value {
        OldValue::Reply => {
            // Checked and replied first: a non-string aborts the whole command.
            let old = read_str_entry(db, key, now_ms)?;
            match old {
                Some(e) => reply_stored(ctx.out, e, share),
                None => ctx.out.null(),
            }
            Some(old.is_some())
        }
        OldValue::Discard => None,
    };
    let allowed = match opts.condition {
        // IFEQ: only over a string equal to the value given (WRONGTYPE over another type).
        Condition::Always if if_eq.is_some() => match read_str_entry(db, key, now_ms)? {
            Some(e) => e.value().bytes(&mut [0; 20]) == if_eq.expect("checked"),
            None => false,
        },
        // A plain SET needs no lookup before the write.
        Condition::Always => true,
        Condition::Nx => !old_exists.unwrap_or_else(|| db.contains(key, now_ms)),
        Condition::Xx => old_exists.unwrap_or_else(|| db.contains(key, now_ms)),
    };
    let ack_with = |out: &mut Reply, written: bool| match (opts.old_value, ack, written) {
        (OldValue::Reply, _, _) => {}
        (OldValue::Discard, Ack::OkOrNull, true) => out.ok(),
        (OldValue::Discard, Ack::OkOrNull, false) => out.null(),
        (OldValue::Discard, Ack::OneOrZero, written) => out.int(written as i64),
    };
    if !allowed {
        ack_with(ctx.out, false);
        return Ok(());
    }
    let ttl = match opts.expiry {
        Expiry::None | Expiry::Persist => Ttl::Clear,
        Expiry::Keep => Ttl::Keep,
        Expiry::At(at_ms) => Ttl::At(at_ms),
    };
    // A time already past (EXAT/PXAT) writes nothing in Valkey 9.1: an existing key (of any
    // type) expires at once, with its `expired` event only; a missing one stays missing.
    // While loading, and on a replica, the time is kept as written.
    if let Ttl::At(at_ms) = ttl {
        if at_ms <= now_ms && !ctx.keep_past_expiry {
            ctx.expire_now(key);
            ack_with(ctx.out, true);
            return Ok(());
        }
    }
    let db = &mut ctx.dbs[ctx.client.db];
    db.set_str_ref(key, StrRef::from_bytes(value), ttl, now_ms);
    ctx.changed(key, 1, KeyspaceEvents::STRING, "set");
    if let Ttl::At(_) = ttl {
        ctx.changed(key, 0, KeyspaceEvents::GENERIC, "expire");
    }
    ack_with(ctx.out, true);
    Ok(())
}

fn get(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let share = share_from(ctx);
    let db = &mut ctx.dbs[ctx.client.db];
    match read_str_entry(db, &argv[1], ctx.now_ms)? {
        Some(e) => reply_stored(ctx.out, e, share),
        None => ctx.out.null(),
    }
    Ok(())
}

fn set(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let parsed = parse_options(Grammar::Set, &mut Args::new(argv, 3))?;
    let opts = SetOptions {
        condition: parsed.condition,
        expiry: resolve_expiry(parsed.expiry, ctx.now_ms, "set")?,
        old_value: parsed.old_value,
    };
    set_generic(ctx, &argv[1], &argv[2], opts, Ack::OkOrNull, parsed.if_eq)
}

fn setnx(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let opts =
        SetOptions { condition: Condition::Nx, expiry: Expiry::None, old_value: OldValue::Discard };
    set_generic(ctx, &argv[1], &argv[2], opts, Ack::OneOrZero, None)
}

/// SETEX and PSETEX: `key time value`.
fn set_with_time(ctx: &mut Ctx, argv: &[Bytes], unit: TimeUnit, cmd: &str) -> CmdResult {
    let arg = ExpiryArg::Timed { unit, base: TimeBase::Relative, value: &argv[2] };
    let opts = SetOptions {
        condition: Condition::Always,
        expiry: resolve_expiry(arg, ctx.now_ms, cmd)?,
        old_value: OldValue::Discard,
    };
    set_generic(ctx, &argv[1], &argv[3], opts, Ack::OkOrNull, None)
}

fn setex(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    set_with_time(ctx, argv, TimeUnit::Seconds, "setex")
}

fn psetex(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    set_with_time(ctx, argv, TimeUnit::Millis, "psetex")
}

fn getset(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let opts = SetOptions {
        condition: Condition::Always,
        expiry: Expiry::None,
        old_value: OldValue::Reply,
    };
    set_generic(ctx, &argv[1], &argv[2], opts, Ack::OkOrNull, None)
}

fn getdel(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now_ms = ctx.now_ms;
    let share = share_from(ctx);
    let db = &mut ctx.dbs[ctx.client.db];
    match read_str_entry(db, &argv[1], now_ms)? {
        None => ctx.out.null(),
        Some(e) => {
            // A referenced value outlives the key's deletion until the reply is written.
            reply_stored(ctx.out, e, share);
            db.remove(&argv[1], now_ms);
            ctx.changed(&argv[1], 1, KeyspaceEvents::GENERIC, "del");
        }
    }
    Ok(())
}

fn getex(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let parsed = parse_options(Grammar::GetEx, &mut Args::new(argv, 2))?;
    let now_ms = ctx.now_ms;
    let keep_past = ctx.keep_past_expiry;
    let key = &argv[1];
    // Valkey 9.1 checks the time before the key: an invalid one fails even on a missing key.
    let expiry = resolve_expiry(parsed.expiry, now_ms, "getex")?;
    let share = share_from(ctx);
    let db = &mut ctx.dbs[ctx.client.db];
    match read_str_entry(db, key, now_ms)? {
        None => {
            ctx.out.null();
            return Ok(());
        }
        Some(e) => reply_stored(ctx.out, e, share),
    }
    if matches!(expiry, Expiry::At(at_ms) if at_ms <= now_ms && !keep_past) {
        // Valkey 9.1 expires it (`expired`), as EXPIRE with a past time does.
        ctx.expire_now(key);
        return Ok(());
    }
    let db = &mut ctx.dbs[ctx.client.db];
    let event = match expiry {
        Expiry::None | Expiry::Keep => None,
        Expiry::Persist => (db.expire_at(key, now_ms).is_some()
            && db.set_expire(key, None, now_ms))
        .then_some("persist"),
        Expiry::At(at_ms) => db.set_expire(key, Some(at_ms), now_ms).then_some("expire"),
    };
    if let Some(event) = event {
        ctx.changed(key, 1, KeyspaceEvents::GENERIC, event);
    }
    Ok(())
}

fn mget(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let share = share_from(ctx);
    let db = &mut ctx.dbs[ctx.client.db];
    let keys = &argv[1..];
    ctx.out.array(keys.len());
    for key in keys {
        // Values of other types read as null here, not as an error.
        match db.read_obj(key, ctx.now_ms) {
            Some(e) if e.is_str() => reply_stored(ctx.out, e, share),
            Some(_) | None => ctx.out.null(),
        }
    }
    Ok(())
}

/// The key/value pairs of MSET and MSETNX; an odd count is an arity error.
fn pairs<'a>(argv: &'a [Bytes]) -> Result<std::slice::ChunksExact<'a, Bytes>, CmdError> {
    if argv.len().is_multiple_of(2) {
        return Err(CmdError::WrongArity(String::from_utf8_lossy(&argv[0]).to_lowercase()));
    }
    Ok(argv[1..].chunks_exact(2))
}

fn mset(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let pairs = pairs(argv)?;
    set_pairs(ctx, pairs);
    ctx.out.ok();
    Ok(())
}

fn msetnx(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let pairs = pairs(argv)?;
    let now_ms = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    if pairs.clone().any(|pair| db.contains(&pair[0], now_ms)) {
        ctx.out.int(0);
        return Ok(());
    }
    set_pairs(ctx, pairs);
    ctx.out.int(1);
    Ok(())
}

/// The writes of MSET and MSETNX, each followed by its `set` event (as Valkey raises them:
/// `new a, set a, new b, set b`).
fn set_pairs(ctx: &mut Ctx, pairs: std::slice::ChunksExact<'_, Bytes>) {
    for pair in pairs {
        let db = &mut ctx.dbs[ctx.client.db];
        db.set_str_ref(&pair[0], StrRef::from_bytes(&pair[1]), Ttl::Clear, ctx.now_ms);
        ctx.changed(&pair[0], 1, KeyspaceEvents::STRING, "set");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::resp::reply::Proto;
    use crate::server::client::Client;
    use crate::server::state::ServerState;

    fn argv(words: &[&str]) -> Vec<Bytes> {
        words.iter().map(|w| Bytes::copy_from_slice(w.as_bytes())).collect()
    }

    /// Runs a command on `srv` into `out`; returns the bytes this thread allocated meanwhile
    /// (frees not subtracted).
    fn run_into(srv: &mut ServerState, out: &mut Reply, words: &[&str]) -> u64 {
        let argv = argv(words);
        let cmd = crate::commands::lookup(&argv[0]).expect("a known command");
        let handler = cmd.handler.expect("a command with a handler");
        let mut client = Client::new(1, "127.0.0.1:1".into(), "127.0.0.1:2".into(), -1, false, 0);
        let before = crate::memory::thread_allocated_gross();
        crate::commands::run_handler(handler, srv, &mut client, out, &argv, 0, 7)
            .expect("the command succeeds");
        crate::memory::thread_allocated_gross() - before
    }

    /// GET, MGET, GETEX, GETDEL and SET ... GET of a value from
    /// `min-string-size-avoid-copy-reply` bytes on reference it: the reply holds no copy
    /// (nothing near the value's size is allocated), and its stream is what a copy gives.
    #[test]
    fn big_values_are_referenced_not_copied() {
        let mut srv = ServerState::new(Config::default(), None, 0);
        let big = "v".repeat(1 << 20);
        let mut out = Reply::new(Proto::Resp2);
        run_into(&mut srv, &mut out, &["set", "big", &big]);
        run_into(&mut srv, &mut out, &["set", "big2", &big]);
        run_into(&mut srv, &mut out, &["set", "small", &"s".repeat(16383)]);
        // Above the threshold the value is copied, as before.
        srv.config.network.min_string_size_avoid_copy_reply = 2 << 20;
        let mut copy = Reply::new(Proto::Resp2);
        let allocated = run_into(&mut srv, &mut copy, &["get", "big"]);
        assert!(allocated >= 1 << 20 && copy.shared_bytes() == 0);
        srv.config.network.min_string_size_avoid_copy_reply = 16384;
        out.clear();
        for words in [
            &["get", "big"][..],
            &["mget", "big", "small", "nosuch", "big"],
            &["getex", "big", "persist"],
            &["set", "big", "new", "get"],
            &["getdel", "big2"],
        ] {
            let allocated = run_into(&mut srv, &mut out, words);
            assert!(allocated < 1 << 16, "{words:?} allocated {allocated} bytes");
        }
        assert_eq!(out.shared_bytes(), 6 << 20, "every big value referenced once");
        assert!(out.buf.len() < 16384 + 200, "only the small value was copied");
        // The stream reads back as copies would have made it.
        let mut want = Reply::new(Proto::Resp2);
        want.bulk(big.as_bytes());
        want.array(4);
        want.bulk(big.as_bytes());
        want.bulk("s".repeat(16383).as_bytes());
        want.null();
        want.bulk(big.as_bytes());
        for _ in 0..3 {
            want.bulk(big.as_bytes());
        }
        let got = out.stream_bytes();
        assert!(got == want.buf, "the referenced stream differs from the copied one");
    }

    fn parse(grammar: Grammar, words: &[&str]) -> Result<ParsedOptions<'static>, CmdError> {
        let v: &'static [Bytes] = Vec::leak(argv(words));
        parse_options(grammar, &mut Args::new(v, 0))
    }

    #[test]
    fn set_grammar_follows_valkey() {
        let ok = |w: &[&str]| parse(Grammar::Set, w).expect("accepted");
        assert_eq!(ok(&["nx", "NX"]).condition, Condition::Nx);
        assert_eq!(ok(&["GET", "get", "XX"]).old_value, OldValue::Reply);
        assert_eq!(ok(&["KEEPTTL", "keepttl"]).expiry, ExpiryArg::KeepTtl);
        let later = ok(&["EX", "1", "ex", "2"]).expiry;
        assert!(matches!(later, ExpiryArg::Timed { value: b"2", .. }));
        for bad in [
            &["NX", "XX"][..],
            &["XX", "NX"],
            &["EX", "1", "PX", "2"],
            &["KEEPTTL", "EX", "1"],
            &["PXAT", "1", "KEEPTTL"],
            &["EX"],
            &["PERSIST"],
            &["FOO"],
        ] {
            assert_eq!(parse(Grammar::Set, bad).unwrap_err(), CmdError::Syntax, "{bad:?}");
        }
    }

    #[test]
    fn getex_grammar_follows_valkey() {
        assert_eq!(parse(Grammar::GetEx, &["PERSIST"]).expect("ok").expiry, ExpiryArg::Persist);
        for bad in
            [&["NX"][..], &["GET"], &["KEEPTTL"], &["PERSIST", "EX", "1"], &["EX", "1", "PERSIST"]]
        {
            assert_eq!(parse(Grammar::GetEx, bad).unwrap_err(), CmdError::Syntax, "{bad:?}");
        }
    }

    #[test]
    fn expire_times_are_checked() {
        let t = |unit, base, v: &'static str| {
            resolve_expiry(ExpiryArg::Timed { unit, base, value: v.as_bytes() }, 1_000, "set")
        };
        let invalid = Err(CmdError::InvalidExpire("set".into()));
        assert_eq!(t(TimeUnit::Seconds, TimeBase::Relative, "5"), Ok(Expiry::At(6_000)));
        assert_eq!(t(TimeUnit::Millis, TimeBase::Absolute, "5"), Ok(Expiry::At(5)));
        assert_eq!(t(TimeUnit::Seconds, TimeBase::Relative, "0"), invalid);
        assert_eq!(t(TimeUnit::Millis, TimeBase::Relative, "-1"), invalid);
        assert_eq!(t(TimeUnit::Seconds, TimeBase::Absolute, "9223372036854776"), invalid);
        assert_eq!(t(TimeUnit::Millis, TimeBase::Relative, "9223372036854775807"), invalid);
        assert_eq!(
            t(TimeUnit::Millis, TimeBase::Absolute, "9223372036854775807"),
            Ok(Expiry::At(i64::MAX))
        );
        assert_eq!(t(TimeUnit::Seconds, TimeBase::Relative, "x"), Err(CmdError::NotInteger));
    }
}
