//! The blocking list commands: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH and BLMPOP. Their timeout
//! argument is read by [`parse_timeout`], which the blocking sorted set commands share.
//!
//! A handler serves at once when one of its lists has elements, exactly as the non-blocking
//! command would. Otherwise it blocks its client on the keys (`ctx.block`) and replies
//! nothing; the server runs the whole command again when a key is signaled ready, so the
//! handler never needs to know whether it runs for the first time. A client that may not
//! block (inside MULTI) gets a null reply at once, as Valkey does.

use bytes::Bytes;

use super::{move_element, mpop, notify_pop, parse_end, parse_mpop, pop_one};
use crate::commands::args::parse_timeout;
use crate::commands::{CmdResult, Ctx};
use crate::server::blocking::{BlockRequest, TimeoutReply};
use crate::types::agg::AggType;
use crate::types::list::{End, ListObj};

/// Nothing to serve: block on `keys`, or, when the client may not block, answer at once with
/// `now` (Valkey: the null array for the pops, a null bulk string for BLMOVE/BRPOPLPUSH).
///
/// A real timeout answers the null array for every list command, BLMOVE and BRPOPLPUSH
/// included: Valkey (as Redis 7.0) replies by block type, not by command, so BRPOPLPUSH that
/// times out sends `*-1` in RESP2, and only the non-blocking path sends `$-1`.
fn block_or_reply(ctx: &mut Ctx, keys: &[Bytes], timeout_at_ms: Option<i64>, now: TimeoutReply) {
    if ctx.can_block() {
        let on_timeout = TimeoutReply::NullArray;
        ctx.block(BlockRequest { keys: keys.to_vec(), timeout_at_ms, on_timeout, argv: None });
        return;
    }
    match now {
        TimeoutReply::NullArray => ctx.out.null_array(),
        TimeoutReply::NullBulk => ctx.out.null(),
    }
}

/// BLPOP and BRPOP: `key [key ...] timeout`.
fn bpop(ctx: &mut Ctx, argv: &[Bytes], end: End) -> CmdResult {
    let timeout_at_ms = parse_timeout(&argv[argv.len() - 1], ctx.now_ms)?;
    let keys = &argv[1..argv.len() - 1];
    let limit = super::limit(ctx);
    let db = &mut ctx.dbs[ctx.client.db];
    for key in keys {
        let Some(mut list) = db.agg_existing::<ListObj>(key, ctx.now_ms)? else { continue };
        debug_assert!(!list.get().is_empty());
        ctx.out.array(2);
        ctx.out.bulk(key);
        pop_one(ctx.out, list.get(), end, limit);
        let emptied = list.remove_if_empty();
        notify_pop(ctx, key, 1, end, emptied);
        // Propagated as the plain pop it did, as Valkey propagates it.
        ctx.propagate_as(|| vec![vec![super::pop_word(end), key.clone()]]);
        return Ok(());
    }
    block_or_reply(ctx, keys, timeout_at_ms, TimeoutReply::NullArray);
    Ok(())
}

pub fn blpop(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    bpop(ctx, argv, End::Head)
}

pub fn brpop(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    bpop(ctx, argv, End::Tail)
}

/// BLMOVE and BRPOPLPUSH once their arguments are parsed.
fn bmove(
    ctx: &mut Ctx,
    argv: &[Bytes],
    from: End,
    to: End,
    timeout_at_ms: Option<i64>,
) -> CmdResult {
    let db = &mut ctx.dbs[ctx.client.db];
    if db.write_agg::<ListObj>(&argv[1], ctx.now_ms)?.is_some() {
        return move_element(ctx, &argv[1], &argv[2], from, to);
    }
    block_or_reply(ctx, &argv[1..2], timeout_at_ms, TimeoutReply::NullBulk);
    Ok(())
}

/// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
pub fn blmove(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let from = parse_end(&argv[3])?;
    let to = parse_end(&argv[4])?;
    let timeout_at_ms = parse_timeout(&argv[5], ctx.now_ms)?;
    bmove(ctx, argv, from, to, timeout_at_ms)
}

/// BRPOPLPUSH source destination timeout
pub fn brpoplpush(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let timeout_at_ms = parse_timeout(&argv[3], ctx.now_ms)?;
    bmove(ctx, argv, End::Tail, End::Head, timeout_at_ms)
}

/// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]: the other arguments are
/// checked before the timeout.
pub fn blmpop(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (keys, end, count) = parse_mpop(argv, 2)?;
    let timeout_at_ms = parse_timeout(&argv[1], ctx.now_ms)?;
    if !mpop(ctx, keys, end, count)? {
        block_or_reply(ctx, keys, timeout_at_ms, TimeoutReply::NullArray);
    }
    Ok(())
}
