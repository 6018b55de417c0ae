//! SRANDMEMBER and SPOP.
//!
//! SRANDMEMBER with a positive count gives that many distinct members (the whole set when it
//! has no more); with a negative count exactly `|count|` members that may repeat, cut off as
//! [`crate::commands::reply_limit`] says. SPOP with a count pops
//! distinct members and deletes the key when the count reaches its size.
//!
//! Reply shapes (Valkey 7): SRANDMEMBER's count form is an array, SPOP's a set (`~` in
//! RESP3); without a count both reply a bulk string or null.

use std::ops::ControlFlow;

use bytes::Bytes;

use crate::commands::args::{negatable_int_arg, pop_count_arg};
use crate::commands::reply_limit::ReplyLimit;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::types::set::SetObj;
use crate::util::rng::Rng;

use super::{limits, notify_removed, reply_elem};

/// SRANDMEMBER key [count].
pub fn srandmember(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    match argv.len() {
        2 => srandmember_one(ctx, &argv[1]),
        3 => srandmember_count(ctx, &argv[1], &argv[2]),
        _ => Err(CmdError::Syntax),
    }
}

fn srandmember_one(ctx: &mut Ctx, key: &[u8]) -> CmdResult {
    let mut rng = Rng::new(ctx.random());
    let now = ctx.now_ms;
    let Some(set) = ctx.dbs[ctx.client.db].read_agg::<SetObj>(key, now)? else {
        ctx.out.null();
        return Ok(());
    };
    let out = &mut *ctx.out;
    set.for_each_random(1, &mut rng, |e| {
        reply_elem(out, e);
        ControlFlow::Break(())
    });
    Ok(())
}

fn srandmember_count(ctx: &mut Ctx, key: &[u8], count: &[u8]) -> CmdResult {
    let count = negatable_int_arg(count)?;
    let (n, distinct) = (count.unsigned_abs(), count >= 0);
    let mut rng = Rng::new(ctx.random());
    let mut limit = ReplyLimit::new(ctx);
    let now = ctx.now_ms;
    let Some(set) = ctx.dbs[ctx.client.db].read_agg::<SetObj>(key, now)? else {
        ctx.out.array(0);
        return Ok(());
    };
    let out = &mut *ctx.out;
    let len = set.len() as u64;
    if n == 0 {
        out.array(0);
    } else if !distinct || n == 1 {
        out.array(n as usize);
        let mut cut_off = false;
        set.for_each_random(n as usize, &mut rng, |e| {
            reply_elem(out, e);
            cut_off = limit.passed_after_one(out);
            if cut_off {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        if cut_off {
            limit.cut_off(ctx);
        }
    } else if n >= len {
        out.array(len as usize);
        set.iter().for_each(|e| reply_elem(out, e));
    } else {
        out.array(n as usize);
        set.pick_distinct(n as usize, &mut rng, |e| reply_elem(out, e));
    }
    Ok(())
}

/// SPOP key [count].
pub fn spop(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    match argv.len() {
        2 => spop_one(ctx, &argv[1]),
        3 => spop_count(ctx, &argv[1], &argv[2]),
        _ => Err(CmdError::Syntax),
    }
}

fn spop_one(ctx: &mut Ctx, key: &[u8]) -> CmdResult {
    let mut rng = Rng::new(ctx.random());
    let now = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(mut set) = db.agg_existing::<SetObj>(key, now)? else {
        ctx.out.null();
        return Ok(());
    };
    let popped = set.get().pop_random(&mut rng);
    let emptied = set.remove_if_empty();
    reply_elem(ctx.out, popped.as_elem());
    // The AOF logs what was popped, not another random pick.
    ctx.propagate_as(|| vec![srem(key, vec![popped.as_elem().to_vec()])]);
    notify_removed(ctx, "spop", 1, key, emptied);
    Ok(())
}

fn spop_count(ctx: &mut Ctx, key: &[u8], count: &[u8]) -> CmdResult {
    let n = pop_count_arg(count)?;
    let mut rng = Rng::new(ctx.random());
    let lim = limits(ctx);
    let now = ctx.now_ms;
    let logging = ctx.propagating();
    let db = &mut ctx.dbs[ctx.client.db];
    let out = &mut *ctx.out;
    let Some(set) = db.write_agg::<SetObj>(key, now)? else {
        out.set(0);
        return Ok(());
    };
    if n == 0 {
        out.set(0);
        return Ok(());
    }
    let len = set.len();
    if n >= len {
        out.set(len);
        set.iter().for_each(|e| reply_elem(out, e));
        db.remove(key, now);
        ctx.propagate_as(|| vec![vec![Bytes::from_static(b"DEL"), Bytes::copy_from_slice(key)]]);
        notify_removed(ctx, "spop", len as u64, key, true);
        return Ok(());
    }
    out.set(n);
    let mut popped = Vec::new();
    set.pop_many(n, &mut rng, &lim, |e| {
        reply_elem(out, e);
        if logging {
            popped.push(e.to_vec());
        }
    });
    ctx.propagate_as(|| vec![srem(key, popped)]);
    notify_removed(ctx, "spop", n as u64, key, false);
    Ok(())
}

/// `SREM key member...`: how the AOF logs a pop.
fn srem(key: &[u8], members: Vec<Vec<u8>>) -> Vec<Bytes> {
    let mut argv = vec![Bytes::from_static(b"SREM"), Bytes::copy_from_slice(key)];
    argv.extend(members.into_iter().map(Bytes::from));
    argv
}
