//! Set commands: the command table, the single-set commands (SADD, SREM, SISMEMBER,
//! SMISMEMBER, SCARD, SMOVE, SSCAN) and the helpers the other files share. The encodings and
//! their conversions belong to `types::set`; handlers only read the limits from the
//! configuration at each write and pass them in.
//!
//! # Layout
//! - `set/mod.rs`: the table, shared helpers, single-set commands and SSCAN.
//! - `set/algebra.rs`: SMEMBERS, SINTER, SINTERCARD, SINTERSTORE, SUNION(STORE), SDIFF(STORE).
//! - `set/random.rs`: SRANDMEMBER and SPOP.

mod algebra;
mod random;

use bytes::Bytes;

use crate::commands::args::{scan_elements, ScanKind};
use crate::commands::table::ks::{ACCESS, DELETE, INSERT, OW, RO, RW, UPDATE};
use crate::commands::table::Data;
use crate::commands::table::{acl, flag, keynum, range, specs, Command, KeySpec};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::keyspace::db::Db;
use crate::resp::reply::Reply;
use crate::types::agg::Typed;
use crate::types::set::{Elem, SetLimits, SetObj};

const SADD_KEYS: &[KeySpec] = &[range(RW | INSERT, 1, 0, 1)];
const SREM_KEYS: &[KeySpec] = &[range(RW | DELETE, 1, 0, 1)];
const SPOP_KEYS: &[KeySpec] = &[range(RW | ACCESS | DELETE, 1, 0, 1)];
const SMOVE_KEYS: &[KeySpec] = &[range(RW | ACCESS | DELETE, 1, 0, 1), range(RW | INSERT, 2, 0, 1)];
/// SINTERCARD: `numkeys` at argument 1, then that many keys.
const SINTERCARD_KEYS: &[KeySpec] = &[keynum(RO | ACCESS, 1)];
const STORE_KEYS: &[KeySpec] = &[range(OW | UPDATE, 1, 0, 1), range(RO | ACCESS, 2, -1, 1)];

const ORDER_TIP: &[&str] = &["nondeterministic_output_order"];
const OUTPUT_TIP: &[&str] = &["nondeterministic_output"];

const READ_FAST: (u64, u64) = (flag::READONLY | flag::FAST, acl::READ | acl::SET | acl::FAST);
const READ_SLOW: (u64, u64) = (flag::READONLY, acl::READ | acl::SET | acl::SLOW);
const WRITE_FAST: (u64, u64) =
    (flag::WRITE | flag::DENYOOM | flag::FAST, acl::WRITE | acl::SET | acl::FAST);
/// SREM, SPOP and SMOVE never grow memory: no DENYOOM.
const WRITE_FAST_NO_OOM: (u64, u64) = (flag::WRITE | flag::FAST, acl::WRITE | acl::SET | acl::FAST);
const WRITE_SLOW: (u64, u64) = (flag::WRITE | flag::DENYOOM, acl::WRITE | acl::SET | acl::SLOW);

const INTER_COMPLEXITY: &str =
    "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.";
const UNION_COMPLEXITY: &str = "O(N) where N is the total number of elements in all given sets.";

pub static COMMANDS: &[Command] = &[
    Command::new("sadd", -3, WRITE_FAST.0, WRITE_FAST.1, Data(sadd))
        .history(&[("2.4.0", "Accepts multiple `member` arguments.")])
        .keys(SADD_KEYS)
        .doc("set", "1.0.0", "Adds one or more members to a set. Creates the key if it doesn't exist.", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."),
    Command::new("srem", -3, WRITE_FAST_NO_OOM.0, WRITE_FAST_NO_OOM.1, Data(srem))
        .history(&[("2.4.0", "Accepts multiple `member` arguments.")])
        .keys(SREM_KEYS)
        .doc("set", "1.0.0", "Removes one or more members from a set. Deletes the set if the last member was removed.", "O(N) where N is the number of members to be removed."),
    Command::new("sismember", 3, READ_FAST.0, READ_FAST.1, Data(sismember))
        .keys(specs::READ1_META)
        .doc("set", "1.0.0", "Determines whether a member belongs to a set.", "O(1)"),
    Command::new("smismember", -3, READ_FAST.0, READ_FAST.1, Data(smismember))
        .keys(specs::READ1)
        .doc("set", "6.2.0", "Determines whether multiple members belong to a set.", "O(N) where N is the number of elements being checked for membership"),
    Command::new("scard", 2, READ_FAST.0, READ_FAST.1, Data(scard))
        .keys(specs::READ1_META)
        .doc("set", "1.0.0", "Returns the number of members in a set.", "O(1)"),
    Command::new("smembers", 2, READ_SLOW.0, READ_SLOW.1, Data(algebra::smembers))
        .keys(specs::READ1)
        .tips(ORDER_TIP)
        .doc("set", "1.0.0", "Returns all members of a set.", "O(N) where N is the set cardinality."),
    Command::new("srandmember", -2, READ_SLOW.0, READ_SLOW.1, Data(random::srandmember))
        .history(&[("2.6.0", "Added the optional `count` argument.")])
        .keys(specs::READ1)
        .tips(OUTPUT_TIP)
        .doc("set", "1.0.0", "Gets one or multiple random members from a set.", "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count."),
    Command::new("spop", -2, WRITE_FAST_NO_OOM.0, WRITE_FAST_NO_OOM.1, Data(random::spop))
        .history(&[("3.2.0", "Added the `count` argument.")])
        .keys(SPOP_KEYS)
        .tips(OUTPUT_TIP)
        .doc("set", "1.0.0", "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.", "Without the count argument O(1), otherwise O(N) where N is the value of the passed count."),
    Command::new("smove", 4, WRITE_FAST_NO_OOM.0, WRITE_FAST_NO_OOM.1, Data(smove))
        .keys(SMOVE_KEYS)
        .doc("set", "1.0.0", "Moves a member from one set to another.", "O(1)"),
    Command::new("sinter", -2, READ_SLOW.0, READ_SLOW.1, Data(algebra::sinter))
        .keys(specs::READ_ALL)
        .tips(ORDER_TIP)
        .doc("set", "1.0.0", "Returns the intersect of multiple sets.", INTER_COMPLEXITY),
    Command::new("sintercard", -3, READ_SLOW.0 | flag::MOVABLE_KEYS, READ_SLOW.1, Data(algebra::sintercard))
        .keys(SINTERCARD_KEYS)
        .doc("set", "7.0.0", "Returns the number of members of the intersect of multiple sets.", INTER_COMPLEXITY),
    Command::new("sinterstore", -3, WRITE_SLOW.0, WRITE_SLOW.1, Data(algebra::sinterstore))
        .keys(STORE_KEYS)
        .doc("set", "1.0.0", "Stores the intersect of multiple sets in a key.", INTER_COMPLEXITY),
    Command::new("sunion", -2, READ_SLOW.0, READ_SLOW.1, Data(algebra::sunion))
        .keys(specs::READ_ALL)
        .tips(ORDER_TIP)
        .doc("set", "1.0.0", "Returns the union of multiple sets.", UNION_COMPLEXITY),
    Command::new("sunionstore", -3, WRITE_SLOW.0, WRITE_SLOW.1, Data(algebra::sunionstore))
        .keys(STORE_KEYS)
        .doc("set", "1.0.0", "Stores the union of multiple sets in a key.", UNION_COMPLEXITY),
    Command::new("sdiff", -2, READ_SLOW.0, READ_SLOW.1, Data(algebra::sdiff))
        .keys(specs::READ_ALL)
        .tips(ORDER_TIP)
        .doc("set", "1.0.0", "Returns the difference of multiple sets.", UNION_COMPLEXITY),
    Command::new("sdiffstore", -3, WRITE_SLOW.0, WRITE_SLOW.1, Data(algebra::sdiffstore))
        .keys(STORE_KEYS)
        .doc("set", "1.0.0", "Stores the difference of multiple sets in a key.", UNION_COMPLEXITY),
    Command::new("sscan", -3, READ_SLOW.0, READ_SLOW.1, Data(sscan))
        .keys(specs::READ1)
        .tips(OUTPUT_TIP)
        .doc("set", "2.8.0", "Iterates over members of a set.", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection."),
];

/// The encoding limits as configured now.
fn limits(ctx: &Ctx) -> SetLimits {
    SetLimits::from_config(ctx.config)
}

/// A member as a bulk string (integers in decimal).
fn reply_elem(out: &mut Reply, e: Elem<'_>) {
    match e {
        Elem::Int(v) => out.bulk_int(v),
        Elem::Str(s) => out.bulk(s),
    }
}

/// Looks every key up for reading, in order (lazy expiry, hit/miss statistics, and
/// WRONGTYPE for the first key holding another type, as Valkey checks them), then borrows
/// all the sets at once. A missing key is `None`.
fn read_sets<'d>(
    db: &'d mut Db,
    keys: &[Bytes],
    now_ms: i64,
) -> Result<Vec<Option<&'d SetObj>>, CmdError> {
    for key in keys {
        db.read_agg::<SetObj>(key, now_ms)?;
    }
    let db: &'d Db = db;
    Ok(keys
        .iter()
        .map(|key| db.stored(key).and_then(|e| e.agg()).and_then(SetObj::from_ref))
        .collect())
}

fn sadd(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let lim = limits(ctx);
    let now = ctx.now_ms;
    let members = &argv[2..];
    let mut created = false;
    let set = ctx.db().write_agg_or_create(&argv[1], now, || {
        created = true;
        SetObj::for_first_member(&members[0], members.len(), &lim)
    })?;
    if !created {
        set.prepare_for(members.len(), &lim);
    }
    let added = members.iter().filter(|m| set.add(m, &lim)).count();
    if added > 0 {
        ctx.changed(&argv[1], added as u64, KeyspaceEvents::SET, "sadd");
    }
    ctx.out.int(added as i64);
    Ok(())
}

fn srem(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now = ctx.now_ms;
    let db = ctx.db();
    let Some(mut set) = db.agg_existing::<SetObj>(&argv[1], now)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let mut removed = 0;
    let members = set.get();
    for m in &argv[2..] {
        if members.remove(m) {
            removed += 1;
            if members.is_empty() {
                break;
            }
        }
    }
    let emptied = set.remove_if_empty();
    if removed > 0 {
        notify_removed(ctx, "srem", removed, &argv[1], emptied);
    }
    ctx.out.int(removed as i64);
    Ok(())
}

fn sismember(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now = ctx.now_ms;
    let found = ctx.db().read_agg::<SetObj>(&argv[1], now)?.is_some_and(|s| s.contains(&argv[2]));
    ctx.out.int(i64::from(found));
    Ok(())
}

fn smismember(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now = ctx.now_ms;
    let set = ctx.dbs[ctx.client.db].read_agg::<SetObj>(&argv[1], now)?;
    let members = &argv[2..];
    ctx.out.array(members.len());
    for m in members {
        ctx.out.int(i64::from(set.is_some_and(|s| s.contains(m))));
    }
    Ok(())
}

fn scard(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now = ctx.now_ms;
    let len = ctx.db().read_agg::<SetObj>(&argv[1], now)?.map_or(0, SetObj::len);
    ctx.out.int(len as i64);
    Ok(())
}

/// SMOVE source destination member. A missing source answers 0 before any type check.
fn smove(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (src, dst, member) = (&argv[1], &argv[2], &argv[3]);
    let lim = limits(ctx);
    let now = ctx.now_ms;
    let db = ctx.db();
    let src_state = db.write_agg::<SetObj>(src, now).map(|s| s.is_some());
    let dst_state = db.write_agg::<SetObj>(dst, now).map(|s| s.is_some());
    match src_state {
        Ok(false) => {
            ctx.out.int(0);
            return Ok(());
        }
        Ok(true) => {}
        Err(e) => return Err(e.into()),
    }
    let dst_exists = dst_state?;
    if src == dst {
        let found = db.write_agg::<SetObj>(src, now)?.is_some_and(|s| s.contains(member));
        ctx.out.int(i64::from(found));
        return Ok(());
    }
    let removed = db.write_agg::<SetObj>(src, now)?.is_some_and(|s| s.remove(member));
    if !removed {
        ctx.out.int(0);
        return Ok(());
    }
    let emptied = db.remove_if_empty(src);
    notify_removed(ctx, "srem", 1, src, emptied);
    let db = ctx.db();
    let set = db.write_agg_or_create(dst, now, || SetObj::for_first_member(member, 1, &lim))?;
    let added = set.add(member, &lim);
    debug_assert!(added || dst_exists, "a new destination set takes the member");
    if added {
        ctx.changed(dst, 1, KeyspaceEvents::SET, "sadd");
    }
    ctx.out.int(1);
    Ok(())
}

/// `event` (`srem`, `spop`) of `key`, then `del` when the removal emptied (and so deleted)
/// the set.
fn notify_removed(ctx: &mut Ctx, event: &'static str, dirty: u64, key: &[u8], emptied: bool) {
    ctx.changed(key, dirty, KeyspaceEvents::SET, event);
    if emptied {
        ctx.changed(key, 0, KeyspaceEvents::GENERIC, "del");
    }
}

/// SSCAN key cursor [MATCH pattern] [COUNT count], in the argument order of every element
/// scan ([`scan_elements`]).
fn sscan(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    scan_elements::<SetObj>(ctx, argv, ScanKind::Set, |set, cursor, opts, items| {
        set.scan(cursor, opts.count, |e| {
            let member = e.to_vec();
            if opts.pattern.matches(&member) {
                items.push(member);
            }
        })
    })
}
