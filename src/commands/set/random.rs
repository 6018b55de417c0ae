//! SRANDMEMBER and SPOP.
//!
//! SRANDMEMBER with a positive count gives that many distinct members (the whole set when it
//! has no more); with a negative count exactly `|count|` members that may repeat. The client
//! asked for that many, but the reply is cut off and the client disconnected once it passes
//! the output buffer's hard limit (as Valkey's CLIENT_CLOSE_ASAP check in the same loop
//! does), or [`REPLY_BYTES_CEILING`] when no limit is configured. SPOP with a count pops
//! distinct members and deletes the key when the count reaches its size.
//!
//! Reply shapes (Valkey 7): SRANDMEMBER's count form is an array, SPOP's a set (`~` in
//! RESP3); without a count both reply a bulk string or null.

use std::ops::ControlFlow;

use bytes::Bytes;

use crate::commands::args::int_arg;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::ObufClass;
use crate::types::set::{SetObj, SetRng};

use super::{limits, reply_elem};

/// Where a repeating reply stops when no hard output limit is set: a reply this large is
/// already more than any client can use, and Valkey would grow it until the server runs out
/// of memory.
const REPLY_BYTES_CEILING: usize = 1 << 30;
/// Members written between two checks of the reply size.
const CHECK_EVERY: u64 = 1024;

/// SRANDMEMBER key [count].
pub fn srandmember(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    match argv.len() {
        2 => srandmember_one(ctx, &argv[1]),
        3 => srandmember_count(ctx, &argv[1], &argv[2]),
        _ => Err(CmdError::Syntax),
    }
}

fn srandmember_one(ctx: &mut Ctx, key: &[u8]) -> CmdResult {
    let mut rng = SetRng::new(ctx.srv.random());
    let now = ctx.now_ms;
    let Some(set) = ctx.srv.dbs[ctx.client.db].read_agg::<SetObj>(key, now)? else {
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

/// The reply size at which a repeating reply stops, and whether this command must close the
/// client itself (no hard limit configured) or leaves it to the dispatcher's limit check.
struct ReplyLimit {
    bytes: usize,
    close_here: bool,
}

fn reply_limit(ctx: &Ctx) -> ReplyLimit {
    let hard = ctx.srv.config.client_output_buffer_limit[ObufClass::Normal as usize].hard_bytes;
    match usize::try_from(hard) {
        Ok(0) | Err(_) => ReplyLimit { bytes: REPLY_BYTES_CEILING, close_here: true },
        // The dispatcher ignores the first 16 KiB (Valkey's static reply buffer); passing
        // the limit by a whole check interval more is enough for it to act.
        Ok(hard) => ReplyLimit { bytes: hard.saturating_add(64 * 1024), close_here: false },
    }
}

fn srandmember_count(ctx: &mut Ctx, key: &[u8], count: &[u8]) -> CmdResult {
    let count = int_arg(count)?;
    if count == i64::MIN {
        return Err(CmdError::OutOfRangeBetween { min: -i64::MAX, max: i64::MAX });
    }
    let (n, distinct) = (count.unsigned_abs(), count >= 0);
    let mut rng = SetRng::new(ctx.srv.random());
    let limit = reply_limit(ctx);
    let now = ctx.now_ms;
    let Some(set) = ctx.srv.dbs[ctx.client.db].read_agg::<SetObj>(key, now)? else {
        ctx.out.array(0);
        return Ok(());
    };
    let out = &mut *ctx.out;
    let len = set.len() as u64;
    if n == 0 {
        out.array(0);
    } else if !distinct || n == 1 {
        out.array(n as usize);
        let mut written = 0u64;
        let mut cut_off = false;
        set.for_each_random(n as usize, &mut rng, |e| {
            reply_elem(out, e);
            written += 1;
            if written.is_multiple_of(CHECK_EVERY) && out.len() > limit.bytes {
                cut_off = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        if cut_off && limit.close_here {
            ctx.client.close_asap = true;
            ctx.srv.to_close.push(ctx.slot);
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
    let mut rng = SetRng::new(ctx.srv.random());
    let now = ctx.now_ms;
    let db = &mut ctx.srv.dbs[ctx.client.db];
    let Some(set) = db.write_agg::<SetObj>(key, now)? else {
        ctx.out.null();
        return Ok(());
    };
    let popped = set.pop_random(&mut rng);
    db.remove_if_empty(key);
    reply_elem(ctx.out, popped.as_elem());
    ctx.srv.dirty += 1;
    Ok(())
}

fn spop_count(ctx: &mut Ctx, key: &[u8], count: &[u8]) -> CmdResult {
    // Valkey answers the same error for a negative count and for one that is no integer.
    let n = int_arg(count)
        .ok()
        .and_then(|c| u64::try_from(c).ok())
        .ok_or(CmdError::OutOfRangePositive)?;
    let mut rng = SetRng::new(ctx.srv.random());
    let lim = limits(ctx);
    let now = ctx.now_ms;
    let db = &mut ctx.srv.dbs[ctx.client.db];
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
    if n >= len as u64 {
        out.set(len);
        set.iter().for_each(|e| reply_elem(out, e));
        db.remove(key, now);
        ctx.srv.dirty += len as u64;
        return Ok(());
    }
    out.set(n as usize);
    set.pop_many(n as usize, &mut rng, &lim, |e| reply_elem(out, e));
    ctx.srv.dirty += n;
    Ok(())
}
