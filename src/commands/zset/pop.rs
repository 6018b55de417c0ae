//! ZPOPMIN, ZPOPMAX, ZMPOP, the blocking BZPOPMIN, BZPOPMAX and BZMPOP, ZRANDMEMBER and
//! ZSCAN.

use std::collections::HashSet;

use bytes::Bytes;

use super::{member_reply, members_header};
use crate::commands::args::{
    self, is, negatable_int_arg, parse_timeout, pop_count_arg, scan_elements, ScanItems, ScanKind,
};
use crate::commands::reply_limit::ReplyLimit;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::resp::reply::{format_double, format_g17};
use crate::server::blocking::{BlockRequest, TimeoutReply};
use crate::types::zset::{End, ZSetObj};
use crate::util::rng::Rng;

/// How a pop answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PopShape {
    /// ZPOPMIN/ZPOPMAX: `[m, s, ...]` flat, or nested pairs in RESP3 when COUNT was given.
    Plain { count_given: bool },
    /// BZPOPMIN/BZPOPMAX: `[key, m, s]`.
    KeyFlat,
    /// ZMPOP/BZMPOP: `[key, [[m, s], ...]]`.
    KeyNested,
}

/// Pops up to `count` members from `key`'s end and writes the reply. The key must hold a
/// non-empty sorted set.
fn pop_from(ctx: &mut Ctx, key: &[u8], end: End, count: usize, shape: PopShape) {
    let now = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let mut entry = db.agg_existing::<ZSetObj>(key, now).ok().flatten().expect("a sorted set");
    let z = entry.get();
    let len = z.len();
    let n = count.min(len);
    let (lo, hi) = match end {
        End::Min => (0, n),
        End::Max => (len - n, len),
    };
    let rev = end == End::Max;
    let out = &mut *ctx.out;
    match shape {
        PopShape::Plain { count_given } => {
            let nested = count_given && out.is_resp3();
            if nested {
                out.array(n);
            } else {
                out.array(2 * n);
            }
            z.visit(lo, hi, rev, |m, s| {
                if nested {
                    out.array(2);
                }
                out.bulk(m);
                out.double(s);
                true
            });
        }
        PopShape::KeyFlat => {
            out.array(3);
            out.bulk(key);
            z.visit(lo, hi, rev, |m, s| {
                out.bulk(m);
                out.double(s);
                true
            });
        }
        PopShape::KeyNested => {
            out.array(2);
            out.bulk(key);
            out.array(n);
            z.visit(lo, hi, rev, |m, s| {
                out.array(2);
                out.bulk(m);
                out.double(s);
                true
            });
        }
    }
    z.remove_ranks(lo, hi);
    let emptied = entry.remove_if_empty();
    let event = match end {
        End::Min => "zpopmin",
        End::Max => "zpopmax",
    };
    super::notify_removed(ctx, event, n as u64, key, emptied);
    // The blocking and multi-key pops propagate as ZPOPMIN/ZPOPMAX of the key served (with
    // the count asked for ZMPOP and BZMPOP), as Valkey propagates them.
    let word = Bytes::from_static(if end == End::Min { b"ZPOPMIN" } else { b"ZPOPMAX" });
    let key = Bytes::copy_from_slice(key);
    match shape {
        PopShape::Plain { .. } => {}
        PopShape::KeyFlat => ctx.propagate_as(|| vec![vec![word, key]]),
        PopShape::KeyNested => {
            let n = Bytes::from(count.to_string());
            ctx.propagate_as(|| vec![vec![word, key, n]])
        }
    }
}

/// The first of `keys` holding a sorted set (WRONGTYPE for the first holding another type).
fn first_nonempty(ctx: &mut Ctx, keys: &[Bytes]) -> Result<Option<Bytes>, CmdError> {
    let now = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    for k in keys {
        if db.write_agg::<ZSetObj>(k, now)?.is_some() {
            return Ok(Some(k.clone()));
        }
    }
    Ok(None)
}

/// ZPOPMIN key [count]
pub fn zpopmin(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    zpop(ctx, argv, End::Min)
}

/// ZPOPMAX key [count]
pub fn zpopmax(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    zpop(ctx, argv, End::Max)
}

fn zpop(ctx: &mut Ctx, argv: &[Bytes], end: End) -> CmdResult {
    if argv.len() > 3 {
        return Err(CmdError::Syntax);
    }
    let count = argv.get(2).map_or(Ok(1), |a| pop_count_arg(a))?;
    // The key's type is checked before a zero count answers (Valkey 9: WRONGTYPE).
    let key = first_nonempty(ctx, &argv[1..2])?;
    if count == 0 {
        ctx.out.array(0);
        return Ok(());
    }
    match key {
        Some(key) => {
            pop_from(ctx, &key, end, count, PopShape::Plain { count_given: argv.len() == 3 })
        }
        None => ctx.out.array(0),
    }
    Ok(())
}

/// `numkeys key... MIN|MAX [COUNT count]` of ZMPOP and BZMPOP, from `argv[at]`.
fn parse_mpop(argv: &[Bytes], at: usize) -> Result<(&[Bytes], End, usize), CmdError> {
    args::parse_mpop(argv, at, |a| match a {
        a if is(a, "min") => Ok(End::Min),
        a if is(a, "max") => Ok(End::Max),
        _ => Err(CmdError::Syntax),
    })
}

/// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
pub fn zmpop(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (keys, end, count) = parse_mpop(argv, 1)?;
    match first_nonempty(ctx, keys)? {
        Some(key) => pop_from(ctx, &key, end, count, PopShape::KeyNested),
        None => ctx.out.null_array(),
    }
    Ok(())
}

/// Serves a blocking pop at once, or blocks the client, or (when it cannot block) answers
/// the timeout reply.
fn block_or_serve(
    ctx: &mut Ctx,
    keys: &[Bytes],
    timeout_at_ms: Option<i64>,
    end: End,
    count: usize,
    shape: PopShape,
) -> CmdResult {
    if let Some(key) = first_nonempty(ctx, keys)? {
        pop_from(ctx, &key, end, count, shape);
        return Ok(());
    }
    if !ctx.can_block() {
        ctx.out.null_array();
        return Ok(());
    }
    ctx.block(BlockRequest {
        keys: keys.to_vec(),
        timeout_at_ms,
        on_timeout: TimeoutReply::NullArray,
        argv: None,
    });
    Ok(())
}

/// BZPOPMIN key [key ...] timeout
pub fn bzpopmin(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    bzpop(ctx, argv, End::Min)
}

/// BZPOPMAX key [key ...] timeout
pub fn bzpopmax(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    bzpop(ctx, argv, End::Max)
}

fn bzpop(ctx: &mut Ctx, argv: &[Bytes], end: End) -> CmdResult {
    let timeout = parse_timeout(&argv[argv.len() - 1], ctx.now_ms)?;
    block_or_serve(ctx, &argv[1..argv.len() - 1], timeout, end, 1, PopShape::KeyFlat)
}

/// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
pub fn bzmpop(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (keys, end, count) = parse_mpop(argv, 2)?;
    let timeout = parse_timeout(&argv[1], ctx.now_ms)?;
    block_or_serve(ctx, keys, timeout, end, count, PopShape::KeyNested)
}

/// ZRANDMEMBER key [count [WITHSCORES]]. A negative count's reply stops where
/// [`ReplyLimit`] says, like HRANDFIELD's and SRANDMEMBER's.
pub fn zrandmember(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let mut rng = Rng::new(ctx.random());
    let mut limit = ReplyLimit::new(ctx);
    if argv.len() == 2 {
        let now = ctx.now_ms;
        let z = ctx.dbs[ctx.client.db].read_agg::<ZSetObj>(&argv[1], now)?;
        let out = &mut *ctx.out;
        match z {
            None => out.null(),
            Some(z) => {
                let r = rng.below(z.len());
                z.visit(r, r + 1, false, |m, _| {
                    out.bulk(m);
                    true
                });
            }
        }
        return Ok(());
    }
    let count = negatable_int_arg(&argv[2])?;
    let withscores = match argv.len() {
        3 => false,
        4 if is(&argv[3], "withscores") => true,
        _ => return Err(CmdError::Syntax),
    };
    if withscores && !(-i64::MAX / 2..=i64::MAX / 2).contains(&count) {
        return Err(CmdError::Overflow);
    }
    let now = ctx.now_ms;
    let Some(z) = ctx.dbs[ctx.client.db].read_agg::<ZSetObj>(&argv[1], now)? else {
        ctx.out.array(0);
        return Ok(());
    };
    let out = &mut *ctx.out;
    if count == 0 {
        out.array(0);
        return Ok(());
    }
    let len = z.len();
    let one = |out: &mut crate::resp::reply::Reply, r: usize| {
        z.visit(r, r + 1, false, |m, s| {
            member_reply(out, m, s, withscores);
            true
        });
    };
    if count < 0 || count == 1 {
        // With repetitions: as many as asked for, cut off as `reply_limit` says.
        let n = count.unsigned_abs() as usize;
        members_header(out, n, withscores);
        for _ in 0..n {
            one(out, rng.below(len));
            if limit.passed_after_one(out) {
                limit.cut_off(ctx);
                break;
            }
        }
        return Ok(());
    }
    let n = count as usize;
    if n >= len {
        members_header(out, len, withscores);
        z.visit(0, len, false, |m, s| {
            member_reply(out, m, s, withscores);
            true
        });
        return Ok(());
    }
    // Distinct ranks: a partial shuffle when asking for much of the set, else rejection.
    let ranks: Vec<usize> = if n * 3 > len {
        let mut all: Vec<usize> = (0..len).collect();
        for i in 0..n {
            let j = i + rng.below(len - i);
            all.swap(i, j);
        }
        all.truncate(n);
        all
    } else {
        let mut seen = HashSet::with_capacity(n);
        let mut picked = Vec::with_capacity(n);
        while picked.len() < n {
            let r = rng.below(len);
            if seen.insert(r) {
                picked.push(r);
            }
        }
        picked
    };
    members_header(out, n, withscores);
    for r in ranks {
        one(out, r);
    }
    Ok(())
}

/// A score as ZSCAN shows it in Valkey 9.1: a listpack's entry as stored (`d2string`:
/// integers within ±2^62 in integer form, so -0 is `0`, else the shortest form), a large
/// set's score as C's `%.17g` (`0.1` shows as `0.10000000000000001`), infinities as `inf`.
fn scan_score_text(s: f64, listpack: bool) -> String {
    const LIMIT: f64 = (i64::MAX / 2) as f64;
    if listpack && s.trunc() == s && (-LIMIT..=LIMIT).contains(&s) {
        return (s as i64).to_string();
    }
    if listpack || s.is_infinite() {
        return format_double(s);
    }
    format_g17(s)
}

/// ZSCAN key cursor [MATCH pattern] [COUNT count] [NOSCORES]
pub fn zscan(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    scan_elements::<ZSetObj>(ctx, argv, ScanKind::Zset, |z, cursor, opts, items| {
        let listpack = z.is_listpack();
        z.scan(cursor, opts.count, |m, s| {
            if opts.pattern.matches(m) {
                items.push(m.to_vec());
                if opts.items == ScanItems::Pairs {
                    items.push(scan_score_text(s, listpack).into_bytes());
                }
            }
        })
    })
}
