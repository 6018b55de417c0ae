//! Set algebra: SMEMBERS, SINTER, SINTERCARD, SINTERSTORE, SUNION, SUNIONSTORE, SDIFF and
//! SDIFFSTORE.
//!
//! A missing key is an empty set. Every key is looked up (and type-checked, in order) before
//! any work. The *STORE commands replace the destination whatever it held and delete it when
//! the result is empty; their result is built member by member with the usual conversions,
//! from the encoding Valkey starts with, so it ends in the encoding Valkey gives it.

use bytes::Bytes;

use crate::commands::args::int_arg;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::keyspace::db::{Db, Ttl, Value};
use crate::resp::reply::AggKind;
use crate::types::agg::Typed;
use crate::types::set::{Elem, SetLimits, SetObj};

use super::{limits, read_sets, reply_elem};

/// What an intersection does with its members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum InterOut {
    /// Reply them (SINTER, SMEMBERS).
    Reply,
    /// Count them, stopping at `limit` (0: no limit) (SINTERCARD).
    Count { limit: u64 },
    /// Store them (SINTERSTORE).
    Store,
}

/// Union or difference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Union,
    Diff,
}

/// DIFF's first algorithm (test each member of the first set against the others) gets this
/// much of an advantage over the second (copy the first set, remove the others' members):
/// it does less work per member and stops early on common members (Valkey halves its cost).
const DIFF_ALGO_ONE_DISCOUNT: usize = 2;

pub fn smembers(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    intersect(ctx, &argv[1..2], InterOut::Reply, None)
}

pub fn sinter(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    intersect(ctx, &argv[1..], InterOut::Reply, None)
}

pub fn sinterstore(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    intersect(ctx, &argv[2..], InterOut::Store, Some(&argv[1]))
}

/// SINTERCARD numkeys key [key ...] [LIMIT limit].
pub fn sintercard(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let numkeys = int_arg(&argv[1]).ok().filter(|&n| n >= 1).ok_or(CmdError::NumkeysNotPositive)?;
    if numkeys > (argv.len() - 2) as i64 {
        return Err(CmdError::NumkeysOverArgs);
    }
    let keys_end = 2 + numkeys as usize;
    let mut limit = 0u64;
    let mut rest = &argv[keys_end..];
    while let [word, tail @ ..] = rest {
        match tail {
            [value, tail @ ..] if word.eq_ignore_ascii_case(b"limit") => {
                let n = int_arg(value).ok().filter(|&n| n >= 0).ok_or(CmdError::LimitNegative)?;
                limit = n as u64;
                rest = tail;
            }
            _ => return Err(CmdError::Syntax),
        }
    }
    intersect(ctx, &argv[2..keys_end], InterOut::Count { limit }, None)
}

fn intersect(ctx: &mut Ctx, keys: &[Bytes], mode: InterOut, dst: Option<&Bytes>) -> CmdResult {
    let lim = limits(ctx);
    let now = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let out = &mut *ctx.out;
    let sets = read_sets(db, keys, now)?;
    let Some(mut sets) = sets.into_iter().collect::<Option<Vec<&SetObj>>>() else {
        // An empty set makes the intersection empty.
        match mode {
            InterOut::Reply => out.set(0),
            InterOut::Count { .. } => out.int(0),
            InterOut::Store => {}
        }
        return match dst {
            Some(dst) => store(ctx, dst, None, "sinterstore"),
            None => Ok(()),
        };
    };
    sets.sort_by_key(|s| s.len());
    let (first, others) = sets.split_first().expect("at least one key");
    let in_all =
        |e: Elem<'_>| others.iter().all(|s| std::ptr::eq(*s, *first) || s.contains_elem(e));
    match mode {
        InterOut::Reply => {
            let header = out.begin_deferred(AggKind::Set);
            let mut n = 0;
            for e in first.iter().filter(|&e| in_all(e)) {
                reply_elem(out, e);
                n += 1;
            }
            out.end_deferred(header, n);
            Ok(())
        }
        InterOut::Count { limit } => {
            let mut n = 0u64;
            for _ in first.iter().filter(|&e| in_all(e)) {
                n += 1;
                if n == limit {
                    break;
                }
            }
            out.int(n as i64);
            Ok(())
        }
        InterOut::Store => {
            let result = inter_result(first, first.iter().filter(|&e| in_all(e)), &lim);
            let dst = dst.expect("SINTERSTORE has a destination");
            store(ctx, dst, Some(result), "sinterstore")
        }
    }
}

/// SINTERSTORE's result, built as Valkey builds it: an intset when the smallest set is one,
/// else a listpack, converted on the way as members come; finally an intset if every
/// member is an integer and there are few enough.
fn inter_result<'a>(
    smallest: &SetObj,
    members: impl Iterator<Item = Elem<'a>>,
    lim: &SetLimits,
) -> SetObj {
    let mut result = match smallest.encoding_name() {
        "intset" => SetObj::new_intset(),
        _ => SetObj::new_listpack(),
    };
    let mut only_integers = true;
    for e in members {
        only_integers &= e.as_int().is_some();
        result.add_elem(e, lim);
    }
    if only_integers {
        result.to_intset_if_fits(lim);
    }
    result
}

pub fn sunion(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    union_diff(ctx, &argv[1..], Op::Union, None)
}

pub fn sunionstore(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    union_diff(ctx, &argv[2..], Op::Union, Some(&argv[1]))
}

pub fn sdiff(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    union_diff(ctx, &argv[1..], Op::Diff, None)
}

pub fn sdiffstore(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    union_diff(ctx, &argv[2..], Op::Diff, Some(&argv[1]))
}

fn union_diff(ctx: &mut Ctx, keys: &[Bytes], op: Op, dst: Option<&Bytes>) -> CmdResult {
    let lim = limits(ctx);
    let now = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let sets = read_sets(db, keys, now)?;
    // Built from an empty intset, converted as members come (as Valkey does).
    let mut result = SetObj::new_intset();
    match op {
        Op::Union => {
            for s in sets.iter().flatten() {
                s.iter().for_each(|e| {
                    result.add_elem(e, &lim);
                });
            }
        }
        Op::Diff => diff_into(&mut result, sets, &lim),
    }
    match dst {
        Some(dst) => {
            let event = match op {
                Op::Union => "sunionstore",
                Op::Diff => "sdiffstore",
            };
            store(ctx, dst, Some(result), event)
        }
        None => {
            let out = &mut *ctx.out;
            out.set(result.len());
            result.iter().for_each(|e| reply_elem(out, e));
            Ok(())
        }
    }
}

/// The members of the first set in none of the others, added to `result`, by whichever of
/// Valkey's two algorithms is estimated cheaper (the choice also decides the result's
/// encoding, since a set never converts back).
fn diff_into(result: &mut SetObj, mut sets: Vec<Option<&SetObj>>, lim: &SetLimits) {
    let Some(first) = sets[0] else { return };
    if sets[1..].iter().flatten().any(|s| std::ptr::eq(*s, first)) {
        return; // A key repeated as the first one: the difference is empty.
    }
    let present = sets.iter().flatten().count();
    let algo_one_work = present.saturating_mul(first.len()) / DIFF_ALGO_ONE_DISCOUNT;
    let algo_two_work: usize = sets.iter().flatten().map(|s| s.len()).sum();
    if algo_one_work <= algo_two_work {
        // Larger sets first: a member found in one is rejected sooner.
        sets[1..].sort_by_key(|s| std::cmp::Reverse(s.map_or(0, SetObj::len)));
        let others: Vec<&SetObj> = sets[1..].iter().flatten().copied().collect();
        for e in first.iter() {
            if !others.iter().any(|s| s.contains_elem(e)) {
                result.add_elem(e, lim);
            }
        }
        return;
    }
    first.iter().for_each(|e| {
        result.add_elem(e, lim);
    });
    for s in sets[1..].iter().flatten() {
        if result.is_empty() {
            break;
        }
        s.iter().for_each(|e| {
            result.remove_elem(e);
        });
    }
}

/// Writes a *STORE result to `dst` (replacing any value and TTL) and raises `event`, or
/// deletes `dst` (raising `del` if it existed) when the result is empty, and replies with
/// the result's size.
fn store(ctx: &mut Ctx, dst: &[u8], result: Option<SetObj>, event: &'static str) -> CmdResult {
    let now = ctx.now_ms;
    let result = result.filter(|r| !r.is_empty());
    let len = result.as_ref().map_or(0, SetObj::len);
    let db: &mut Db = ctx.db();
    match result {
        Some(set) => {
            db.set(dst, Value::Agg(set.wrap()), Ttl::Clear, now);
            ctx.changed(dst, 1, KeyspaceEvents::SET, event);
        }
        None => {
            if db.remove(dst, now) {
                ctx.changed(dst, 1, KeyspaceEvents::GENERIC, "del");
            }
        }
    }
    ctx.out.int(len as i64);
    Ok(())
}
