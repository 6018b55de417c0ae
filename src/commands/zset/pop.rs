//! ZPOPMIN, ZPOPMAX, ZMPOP, the blocking BZPOPMIN, BZPOPMAX and BZMPOP, ZRANDMEMBER and
//! ZSCAN.

use std::collections::HashSet;

use bytes::Bytes;

use super::{member_reply, members_header};
use crate::commands::args::{int_arg, is};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::glob_match;
use crate::resp::reply::format_double;
use crate::server::blocking::{BlockRequest, TimeoutReply};
use crate::types::zset::range::strtod;
use crate::types::zset::{End, ZSetObj};

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
    let db = &mut ctx.srv.dbs[ctx.client.db];
    let z = db.write_agg::<ZSetObj>(key, now).ok().flatten().expect("a non-empty sorted set");
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
    db.remove_if_empty(key);
    ctx.srv.dirty += n as u64;
}

/// The first of `keys` holding a sorted set (WRONGTYPE for the first holding another type).
fn first_nonempty(ctx: &mut Ctx, keys: &[Bytes]) -> Result<Option<Bytes>, CmdError> {
    let now = ctx.now_ms;
    let db = &mut ctx.srv.dbs[ctx.client.db];
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
    let count = match argv.get(2) {
        None => 1,
        Some(a) => {
            let n = int_arg(a).map_err(|_| CmdError::OutOfRangePositive)?;
            usize::try_from(n).map_err(|_| CmdError::OutOfRangePositive)?
        }
    };
    if count == 0 {
        ctx.out.array(0);
        return Ok(());
    }
    match first_nonempty(ctx, &argv[1..2])? {
        Some(key) => {
            pop_from(ctx, &key, end, count, PopShape::Plain { count_given: argv.len() == 3 })
        }
        None => ctx.out.array(0),
    }
    Ok(())
}

/// `numkeys key... MIN|MAX [COUNT count]` of ZMPOP and BZMPOP, from `argv[at]`.
fn parse_mpop(argv: &[Bytes], at: usize) -> Result<(&[Bytes], End, usize), CmdError> {
    let numkeys = int_arg(&argv[at]).map_err(|_| CmdError::ZNumkeysNotPositive)?;
    if numkeys < 1 {
        return Err(CmdError::ZNumkeysNotPositive);
    }
    let where_at = usize::try_from(numkeys)
        .ok()
        .and_then(|n| n.checked_add(at + 1))
        .filter(|&w| w < argv.len())
        .ok_or(CmdError::Syntax)?;
    let end = match &argv[where_at] {
        a if is(a, "min") => End::Min,
        a if is(a, "max") => End::Max,
        _ => return Err(CmdError::Syntax),
    };
    let mut count = None;
    let mut j = where_at + 1;
    while j < argv.len() {
        if count.is_none() && is(&argv[j], "count") && j + 1 < argv.len() {
            let n = int_arg(&argv[j + 1]).map_err(|_| CmdError::ZCountNotPositive)?;
            if n < 1 {
                return Err(CmdError::ZCountNotPositive);
            }
            count = Some(usize::try_from(n).unwrap_or(usize::MAX));
            j += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    Ok((&argv[at + 1..where_at], end, count.unwrap_or(1)))
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

/// A blocking timeout in seconds, as Valkey reads it: a float (long double there), in ms
/// rounded up; negative and too large values refused. Returns the absolute deadline in ms,
/// or None for 0 (wait forever).
fn parse_timeout(a: &[u8], now_ms: i64) -> Result<Option<i64>, CmdError> {
    let p = if a.first().is_some_and(|c| c.is_ascii_whitespace()) { None } else { strtod(a) };
    let secs = match p {
        // Overflow to infinity is kept (a long double holds it; the range check refuses
        // it below); underflow to 0 is refused as Valkey's strtold would.
        Some(p) if p.end == a.len() && !p.value.is_nan() && !(p.out_of_range && p.value == 0.0) => {
            p.value
        }
        _ => return Err(CmdError::ZTimeoutNotFloat),
    };
    let ms = secs * 1000.0;
    if ms > i64::MAX as f64 {
        return Err(CmdError::TimeoutOutOfRange);
    }
    let ms = ms.ceil();
    if ms < 0.0 {
        return Err(CmdError::TimeoutNegative);
    }
    let ms = ms as i64;
    if ms == 0 {
        return Ok(None);
    }
    now_ms.checked_add(ms).map(Some).ok_or(CmdError::TimeoutOutOfRange)
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

/// A small xorshift generator seeded from the server's.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((u128::from(self.0) * n as u128) >> 64) as usize
    }
}

/// ZRANDMEMBER key [count [WITHSCORES]]
pub fn zrandmember(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let mut rng = Rng(ctx.srv.random() | 1);
    if argv.len() == 2 {
        let now = ctx.now_ms;
        let z = ctx.srv.dbs[ctx.client.db].read_agg::<ZSetObj>(&argv[1], now)?;
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
    let count = int_arg(&argv[2])?;
    if count == i64::MIN {
        return Err(CmdError::OutOfRangeBetween { min: -i64::MAX, max: i64::MAX });
    }
    let withscores = match argv.len() {
        3 => false,
        4 if is(&argv[3], "withscores") => true,
        _ => return Err(CmdError::Syntax),
    };
    if withscores && !(-i64::MAX / 2..=i64::MAX / 2).contains(&count) {
        return Err(CmdError::Overflow);
    }
    let now = ctx.now_ms;
    let Some(z) = ctx.srv.dbs[ctx.client.db].read_agg::<ZSetObj>(&argv[1], now)? else {
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
        // With repetitions: as many as asked for.
        let n = count.unsigned_abs() as usize;
        members_header(out, n, withscores);
        for _ in 0..n {
            one(out, rng.below(len));
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

/// ZSCAN's cursor: C `strtoul` as Valkey reads it (see SCAN).
fn parse_cursor(a: &[u8]) -> Option<u64> {
    if a.first().is_some_and(|c| c.is_ascii_whitespace()) {
        return None;
    }
    let (neg, body) = match a.first() {
        Some(b'-') => (true, &a[1..]),
        Some(b'+') => (false, &a[1..]),
        _ => (false, a),
    };
    let digits = body.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return (a.is_empty() || a[0] == 0).then_some(0);
    }
    if body.get(digits).is_some_and(|&c| c != 0) {
        return None;
    }
    let mut n: u64 = 0;
    for &c in &body[..digits] {
        n = n.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(if neg { n.wrapping_neg() } else { n })
}

/// A score as ZSCAN shows it: a listpack's entry as Valkey stores it (`d2string`: integers
/// within ±2^62 in integer form), a large set's score as `%.17g`.
fn scan_score_text(s: f64, listpack: bool) -> String {
    const LIMIT: f64 = (i64::MAX / 2) as f64;
    if listpack && s.trunc() == s && (-LIMIT..=LIMIT).contains(&s) {
        return (s as i64).to_string();
    }
    format_double(s)
}

/// ZSCAN key cursor [MATCH pattern] [COUNT count]
pub fn zscan(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let cursor = parse_cursor(&argv[2]).ok_or(CmdError::InvalidCursor)?;
    let now = ctx.now_ms;
    let Some(z) = ctx.srv.dbs[ctx.client.db].read_agg::<ZSetObj>(&argv[1], now)? else {
        // A missing key answers an empty scan before the options are looked at.
        ctx.out.array(2);
        ctx.out.bulk(b"0");
        ctx.out.array(0);
        return Ok(());
    };
    let mut pattern: Option<&[u8]> = None;
    let mut count = 10usize;
    let mut rest = &argv[3..];
    while !rest.is_empty() {
        match rest {
            [w, v, tail @ ..] if is(w, "count") => {
                let n = int_arg(v)?;
                count = usize::try_from(n).ok().filter(|&n| n >= 1).ok_or(CmdError::Syntax)?;
                rest = tail;
            }
            [w, v, tail @ ..] if is(w, "match") => {
                pattern = (v.as_ref() != b"*").then_some(&v[..]);
                rest = tail;
            }
            _ => return Err(CmdError::Syntax),
        }
    }
    let mut found: Vec<(Vec<u8>, f64)> = Vec::new();
    let listpack = z.is_listpack();
    let next = z.scan(cursor, count, |m, s| {
        if pattern.is_none_or(|p| glob_match(p, m, false)) {
            found.push((m.to_vec(), s));
        }
    });
    let out = &mut *ctx.out;
    out.array(2);
    out.bulk(next.to_string().as_bytes());
    out.array(2 * found.len());
    for (m, s) in &found {
        out.bulk(m);
        out.bulk(scan_score_text(*s, listpack).as_bytes());
    }
    Ok(())
}
