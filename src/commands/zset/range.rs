//! ZRANGE and its older forms (ZREVRANGE, Z[REV]RANGEBYSCORE, Z[REV]RANGEBYLEX),
//! ZRANGESTORE, and ZREMRANGEBYRANK/SCORE/LEX.
//!
//! Every range becomes a span of ranks first (`ZSetObj::score_bounds`, `lex_bounds`, or the
//! rank arguments), then LIMIT and the direction cut it; the members are read once.

use bytes::Bytes;

use super::{lex_range, limits, member_reply, members_header, score_range};
use crate::commands::args::{int_arg, is};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::keyspace::db::{Ttl, Value};
use crate::types::agg::Typed;
use crate::types::zset::ZSetObj;

/// How the two bounds are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum By {
    Rank,
    Score,
    Lex,
}

/// A parsed range request.
#[derive(Clone, Copy, Debug)]
struct RangeRequest {
    by: By,
    rev: bool,
    withscores: bool,
    /// LIMIT offset count (count -1: no limit).
    offset: i64,
    count: i64,
}

/// Normalizes rank arguments as Valkey does: the span `lo..hi` of ranks, or None.
fn rank_span(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let mut start = if start < 0 { start.saturating_add(len) } else { start };
    let mut end = if end < 0 { end.saturating_add(len) } else { end };
    if start < 0 {
        start = 0;
    }
    if start > end || start >= len {
        return None;
    }
    if end >= len {
        end = len - 1;
    }
    Some((start as usize, end as usize + 1))
}

/// The ranks to read, in reading order: `(first, n, rev)`.
fn select(
    z: &ZSetObj,
    req: &RangeRequest,
    min: &[u8],
    max: &[u8],
) -> Result<Option<(usize, usize)>, CmdError> {
    let (lo, hi) = match req.by {
        By::Rank => {
            let (start, end) = (int_arg(min)?, int_arg(max)?);
            let Some((a, b)) = rank_span(start, end, z.len()) else { return Ok(None) };
            // REV ranks count from the top.
            return Ok(Some(if req.rev { (z.len() - b, z.len() - a) } else { (a, b) }));
        }
        By::Score => z.score_bounds(&score_range(min, max)?),
        By::Lex => z.lex_bounds(&lex_range(min, max)?),
    };
    let span = hi - lo;
    // A negative offset counts back from the end of the range, but only in Valkey 9.1's
    // skiplist walk; its listpack walk skips nothing and answers empty.
    let offset = match usize::try_from(req.offset) {
        Ok(offset) => offset,
        Err(_) if z.is_listpack() => return Ok(None),
        Err(_) => {
            match span.checked_sub(req.offset.unsigned_abs().try_into().unwrap_or(usize::MAX)) {
                Some(offset) => offset,
                None => return Ok(None),
            }
        }
    };
    if offset >= span {
        return Ok(None);
    }
    let n = if req.count < 0 { span - offset } else { (span - offset).min(req.count as usize) };
    Ok(Some(if req.rev { (hi - offset - n, hi - offset) } else { (lo + offset, lo + offset + n) }))
}

/// Parses the range bounds early (errors come before the key lookup, as in Valkey).
fn check_bounds(req: &RangeRequest, min: &[u8], max: &[u8]) -> Result<(), CmdError> {
    match req.by {
        By::Rank => {
            int_arg(min)?;
            int_arg(max)?;
        }
        By::Score => {
            score_range(min, max)?;
        }
        By::Lex => {
            lex_range(min, max)?;
        }
    }
    Ok(())
}

/// Parses the options after `key min max` (at `argv[opts..]`). `by`/`rev` are fixed for the
/// older commands (None lets the options choose).
fn parse_request(
    argv: &[Bytes],
    opts: usize,
    by: Option<By>,
    rev: Option<bool>,
    store: bool,
) -> Result<RangeRequest, CmdError> {
    let mut req = RangeRequest {
        by: by.unwrap_or(By::Rank),
        rev: rev.unwrap_or(false),
        withscores: false,
        offset: 0,
        count: -1,
    };
    let mut by_set = by.is_some();
    let mut rev_set = rev.is_some();
    let mut j = opts;
    while j < argv.len() {
        let a = &argv[j];
        let left = argv.len() - j - 1;
        if !store && is(a, "withscores") {
            req.withscores = true;
        } else if is(a, "limit") && left >= 2 {
            req.offset = int_arg(&argv[j + 1])?;
            req.count = int_arg(&argv[j + 2])?;
            j += 2;
        } else if !rev_set && is(a, "rev") {
            req.rev = true;
            rev_set = true;
        } else if !by_set && is(a, "bylex") {
            req.by = By::Lex;
            by_set = true;
        } else if !by_set && is(a, "byscore") {
            req.by = By::Score;
            by_set = true;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    if req.count != -1 && req.by == By::Rank {
        return Err(CmdError::ZLimitNeedsBy);
    }
    if req.withscores && req.by == By::Lex {
        return Err(CmdError::ZWithscoresBylex);
    }
    Ok(req)
}

/// The (min, max) arguments in the order the range reads them: reversed score and lex
/// ranges are written `max min`.
fn bounds<'a>(req: &RangeRequest, a: &'a [u8], b: &'a [u8]) -> (&'a [u8], &'a [u8]) {
    if req.rev && req.by != By::Rank {
        (b, a)
    } else {
        (a, b)
    }
}

fn range_reply(ctx: &mut Ctx, argv: &[Bytes], req: RangeRequest) -> CmdResult {
    let (min, max) = bounds(&req, &argv[2], &argv[3]);
    check_bounds(&req, min, max)?;
    let now = ctx.now_ms;
    let Some(z) = ctx.dbs[ctx.client.db].read_agg::<ZSetObj>(&argv[1], now)? else {
        ctx.out.array(0);
        return Ok(());
    };
    let Some((lo, hi)) = select(z, &req, min, max)? else {
        ctx.out.array(0);
        return Ok(());
    };
    let out = &mut *ctx.out;
    members_header(out, hi - lo, req.withscores);
    z.visit(lo, hi, req.rev, |m, s| {
        member_reply(out, m, s, req.withscores);
        true
    });
    Ok(())
}

/// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
pub fn zrange(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let req = parse_request(argv, 4, None, None, false)?;
    range_reply(ctx, argv, req)
}

/// ZREVRANGE key start stop [WITHSCORES]
pub fn zrevrange(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let req = parse_request(argv, 4, Some(By::Rank), Some(true), false)?;
    range_reply(ctx, argv, req)
}

/// ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]
pub fn zrangebyscore(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let req = parse_request(argv, 4, Some(By::Score), Some(false), false)?;
    range_reply(ctx, argv, req)
}

/// ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]
pub fn zrevrangebyscore(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let req = parse_request(argv, 4, Some(By::Score), Some(true), false)?;
    range_reply(ctx, argv, req)
}

/// ZRANGEBYLEX key min max [LIMIT offset count]
pub fn zrangebylex(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let req = parse_request(argv, 4, Some(By::Lex), Some(false), false)?;
    range_reply(ctx, argv, req)
}

/// ZREVRANGEBYLEX key max min [LIMIT offset count]
pub fn zrevrangebylex(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let req = parse_request(argv, 4, Some(By::Lex), Some(true), false)?;
    range_reply(ctx, argv, req)
}

/// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
pub fn zrangestore(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let req = parse_request(argv, 5, None, None, true)?;
    let (min, max) = bounds(&req, &argv[3], &argv[4]);
    check_bounds(&req, min, max)?;
    let now = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let mut picked: Vec<(Vec<u8>, f64)> = Vec::new();
    if let Some(z) = db.read_agg::<ZSetObj>(&argv[2], now)? {
        if let Some((lo, hi)) = select(z, &req, min, max)? {
            picked.reserve(hi - lo);
            // Read in ascending order whatever the direction: the stored set is sorted.
            z.visit(lo, hi, false, |m, s| {
                picked.push((m.to_vec(), s));
                true
            });
        }
    }
    let n = picked.len();
    store_sorted(ctx, &argv[1], picked, "zrangestore");
    ctx.out.int(n as i64);
    Ok(())
}

/// Stores `members` (sorted ascending, distinct) at `dst` as a new sorted set and raises
/// `event`, or deletes `dst` (raising `del` if it existed) when there are none. Shared by
/// ZRANGESTORE and the *STORE set operations.
pub(super) fn store_sorted(
    ctx: &mut Ctx,
    dst: &[u8],
    members: Vec<(Vec<u8>, f64)>,
    event: &'static str,
) {
    let now = ctx.now_ms;
    if members.is_empty() {
        if ctx.dbs[ctx.client.db].remove(dst, now) {
            ctx.changed(dst, 1, KeyspaceEvents::GENERIC, "del");
        }
        return;
    }
    let max_member = members.iter().map(|(m, _)| m.len()).max().unwrap_or(0);
    let mut z = ZSetObj::with_hint(limits(ctx), members.len(), max_member);
    for (m, s) in &members {
        z.push_greatest(m, *s);
    }
    ctx.dbs[ctx.client.db].set(dst, Value::Agg(z.wrap()), Ttl::Clear, now);
    ctx.changed(dst, 1, KeyspaceEvents::ZSET, event);
}

/// ZREMRANGEBYRANK key start stop
pub fn zremrangebyrank(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (start, end) = (int_arg(&argv[2])?, int_arg(&argv[3])?);
    remove_span(ctx, &argv[1], "zremrangebyrank", |z| {
        rank_span(start, end, z.len()).unwrap_or((0, 0))
    })
}

/// ZREMRANGEBYSCORE key min max
pub fn zremrangebyscore(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let r = score_range(&argv[2], &argv[3])?;
    remove_span(ctx, &argv[1], "zremrangebyscore", |z| z.score_bounds(&r))
}

/// ZREMRANGEBYLEX key min max
pub fn zremrangebylex(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let r = lex_range(&argv[2], &argv[3])?;
    remove_span(ctx, &argv[1], "zremrangebylex", |z| z.lex_bounds(&r))
}

fn remove_span(
    ctx: &mut Ctx,
    key: &[u8],
    event: &'static str,
    span: impl FnOnce(&ZSetObj) -> (usize, usize),
) -> CmdResult {
    let now = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(mut z) = db.agg_existing::<ZSetObj>(key, now)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let (lo, hi) = span(z.get());
    z.get().remove_ranks(lo, hi);
    let emptied = z.remove_if_empty();
    let n = hi - lo;
    if n > 0 {
        super::notify_removed(ctx, event, n as u64, key, emptied);
    }
    ctx.out.int(n as i64);
    Ok(())
}
