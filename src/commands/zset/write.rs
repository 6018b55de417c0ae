//! ZADD, ZINCRBY, ZREM and the point reads: ZCARD, ZSCORE, ZMSCORE, ZRANK, ZREVRANK,
//! ZCOUNT, ZLEXCOUNT.

use bytes::Bytes;

use super::{lex_range, limits, score_range};
use crate::commands::args::is;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::types::zset::range::parse_score;
use crate::types::zset::ZSetObj;

/// Which members ZADD (and GEOADD) may touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Presence {
    Any,
    /// NX: only add new members.
    OnlyNew,
    /// XX: only update existing members.
    OnlyExisting,
}

/// Which score changes ZADD accepts for existing members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compare {
    Any,
    /// GT: only raise.
    Greater,
    /// LT: only lower.
    Less,
}

/// What ZADD answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    /// The number of members added.
    Added,
    /// CH: added plus changed.
    Changed,
    /// INCR: the new score (nil when the update was refused).
    NewScore,
}

#[derive(Clone, Copy, Debug)]
struct ZaddOptions {
    presence: Presence,
    compare: Compare,
    answer: Answer,
}

/// The outcome of one ZADD element.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Outcome {
    Added(f64),
    Updated(f64),
    /// The score stayed (an equal score, or INCR by 0).
    Same(f64),
    /// NX/XX/GT/LT refused it.
    Refused,
}

/// Adds or updates one member under ZADD's rules.
fn add_one(
    z: &mut ZSetObj,
    member: &[u8],
    score: f64,
    incr: bool,
    o: &ZaddOptions,
    limits: crate::types::zset::Limits,
) -> Result<Outcome, CmdError> {
    match z.score(member) {
        Some(cur) => {
            if o.presence == Presence::OnlyNew {
                return Ok(Outcome::Refused);
            }
            let new = if incr { cur + score } else { score };
            if new.is_nan() {
                return Err(CmdError::ZScoreNan);
            }
            let refused = match o.compare {
                Compare::Any => false,
                Compare::Greater => new <= cur,
                Compare::Less => new >= cur,
            };
            if refused {
                return Ok(Outcome::Refused);
            }
            if new == cur {
                return Ok(Outcome::Same(cur));
            }
            z.set(member, new, limits);
            Ok(Outcome::Updated(new))
        }
        None if o.presence == Presence::OnlyExisting => Ok(Outcome::Refused),
        None => {
            z.set(member, score, limits);
            Ok(Outcome::Added(score))
        }
    }
}

/// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
pub fn zadd(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let mut nx = false;
    let mut xx = false;
    let mut gt = false;
    let mut lt = false;
    let mut ch = false;
    let mut incr = false;
    let mut i = 2;
    while i < argv.len() {
        let a = &argv[i];
        match () {
            _ if is(a, "nx") => nx = true,
            _ if is(a, "xx") => xx = true,
            _ if is(a, "gt") => gt = true,
            _ if is(a, "lt") => lt = true,
            _ if is(a, "ch") => ch = true,
            _ if is(a, "incr") => incr = true,
            _ => break,
        }
        i += 1;
    }
    let pairs = &argv[i..];
    if pairs.is_empty() || !pairs.len().is_multiple_of(2) {
        return Err(CmdError::Syntax);
    }
    if nx && xx {
        return Err(CmdError::ZXxNx);
    }
    // At most one of GT, LT and NX.
    if [gt, lt, nx].iter().filter(|&&b| b).count() > 1 {
        return Err(CmdError::ZGtLtNx);
    }
    if incr && pairs.len() > 2 {
        return Err(CmdError::ZIncrPair);
    }
    let mut scores = Vec::with_capacity(pairs.len() / 2);
    for p in pairs.chunks(2) {
        scores.push(parse_score(&p[0]).ok_or(CmdError::NotFloat)?);
    }
    let opts = ZaddOptions {
        presence: if nx {
            Presence::OnlyNew
        } else if xx {
            Presence::OnlyExisting
        } else {
            Presence::Any
        },
        compare: if gt {
            Compare::Greater
        } else if lt {
            Compare::Less
        } else {
            Compare::Any
        },
        answer: if incr {
            Answer::NewScore
        } else if ch {
            Answer::Changed
        } else {
            Answer::Added
        },
    };
    let members: Vec<&[u8]> = pairs.chunks(2).map(|p| &p[1][..]).collect();
    add_generic(ctx, &argv[1], &scores, &members, incr, &opts)
}

fn add_generic(
    ctx: &mut Ctx,
    key: &[u8],
    scores: &[f64],
    members: &[&[u8]],
    incr: bool,
    o: &ZaddOptions,
) -> CmdResult {
    let lim = limits(ctx);
    let now = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let max_member = members.iter().map(|m| m.len()).max().unwrap_or(0);
    let create = (o.presence != Presence::OnlyExisting)
        .then_some(|| ZSetObj::with_hint(lim, members.len(), max_member));
    let Some(mut entry) = db.agg_entry(key, now, create)? else {
        match o.answer {
            Answer::NewScore => ctx.out.null(),
            _ => ctx.out.int(0),
        }
        return Ok(());
    };
    let z = entry.get();
    let (mut added, mut updated) = (0, 0);
    let mut last = Outcome::Refused;
    let mut failed = None;
    for (m, &s) in members.iter().zip(scores) {
        match add_one(z, m, s, incr, o, lim) {
            Ok(out) => {
                match out {
                    Outcome::Added(_) => added += 1,
                    Outcome::Updated(_) => updated += 1,
                    _ => {}
                }
                last = out;
            }
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    entry.remove_if_empty();
    if added + updated > 0 {
        ctx.changed(
            key,
            (added + updated) as u64,
            KeyspaceEvents::ZSET,
            if incr { "zincr" } else { "zadd" },
        );
    }
    if let Some(e) = failed {
        return Err(e);
    }
    match o.answer {
        Answer::NewScore => match last {
            Outcome::Added(s) | Outcome::Updated(s) | Outcome::Same(s) => ctx.out.double(s),
            Outcome::Refused => ctx.out.null(),
        },
        Answer::Changed => ctx.out.int(added + updated),
        Answer::Added => ctx.out.int(added),
    }
    Ok(())
}

/// ZINCRBY key increment member
pub fn zincrby(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let incr = parse_score(&argv[2]).ok_or(CmdError::NotFloat)?;
    let opts =
        ZaddOptions { presence: Presence::Any, compare: Compare::Any, answer: Answer::NewScore };
    add_generic(ctx, &argv[1], &[incr], &[&argv[3][..]], true, &opts)
}

/// ZREM key member [member ...]
pub fn zrem(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(mut z) = db.agg_existing::<ZSetObj>(&argv[1], now)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let mut removed = 0;
    for m in &argv[2..] {
        if z.get().remove(m).is_some() {
            removed += 1;
            if z.get().is_empty() {
                break;
            }
        }
    }
    let emptied = z.remove_if_empty();
    if removed > 0 {
        super::notify_removed(ctx, "zrem", removed, &argv[1], emptied);
    }
    ctx.out.int(removed as i64);
    Ok(())
}

/// ZCARD key
pub fn zcard(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now = ctx.now_ms;
    let n = ctx.dbs[ctx.client.db].read_agg::<ZSetObj>(&argv[1], now)?.map_or(0, |z| z.len());
    ctx.out.int(n as i64);
    Ok(())
}

/// ZSCORE key member
pub fn zscore(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now = ctx.now_ms;
    let z = ctx.dbs[ctx.client.db].read_agg::<ZSetObj>(&argv[1], now)?;
    match z.and_then(|z| z.score(&argv[2])) {
        Some(s) => ctx.out.double(s),
        None => ctx.out.null(),
    }
    Ok(())
}

/// ZMSCORE key member [member ...]
pub fn zmscore(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now = ctx.now_ms;
    let z = ctx.dbs[ctx.client.db].read_agg::<ZSetObj>(&argv[1], now)?;
    ctx.out.array(argv.len() - 2);
    for m in &argv[2..] {
        match z.and_then(|z| z.score(m)) {
            Some(s) => ctx.out.double(s),
            None => ctx.out.null(),
        }
    }
    Ok(())
}

/// ZRANK key member [WITHSCORE]
pub fn zrank(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    rank_generic(ctx, argv, false)
}

/// ZREVRANK key member [WITHSCORE]
pub fn zrevrank(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    rank_generic(ctx, argv, true)
}

fn rank_generic(ctx: &mut Ctx, argv: &[Bytes], rev: bool) -> CmdResult {
    let withscore = match argv.len() {
        3 => false,
        4 if is(&argv[3], "withscore") => true,
        4 => return Err(CmdError::Syntax),
        _ => {
            let name = if rev { "zrevrank" } else { "zrank" };
            return Err(CmdError::WrongArity(name.to_string()));
        }
    };
    let now = ctx.now_ms;
    let z = ctx.dbs[ctx.client.db].read_agg::<ZSetObj>(&argv[1], now)?;
    let found = z.and_then(|z| z.rank(&argv[2]).map(|(r, s)| (r, s, z.len())));
    match found {
        Some((rank, score, len)) => {
            let rank = if rev { len - 1 - rank } else { rank };
            if withscore {
                ctx.out.array(2);
                ctx.out.int(rank as i64);
                ctx.out.double(score);
            } else {
                ctx.out.int(rank as i64);
            }
        }
        None if withscore => ctx.out.null_array(),
        None => ctx.out.null(),
    }
    Ok(())
}

/// ZCOUNT key min max
pub fn zcount(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let r = score_range(&argv[2], &argv[3])?;
    let now = ctx.now_ms;
    let z = ctx.dbs[ctx.client.db].read_agg::<ZSetObj>(&argv[1], now)?;
    let n = z.map_or(0, |z| {
        let (lo, hi) = z.score_bounds(&r);
        hi - lo
    });
    ctx.out.int(n as i64);
    Ok(())
}

/// ZLEXCOUNT key min max
pub fn zlexcount(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let r = lex_range(&argv[2], &argv[3])?;
    let now = ctx.now_ms;
    let z = ctx.dbs[ctx.client.db].read_agg::<ZSetObj>(&argv[1], now)?;
    let n = z.map_or(0, |z| {
        let (lo, hi) = z.lex_bounds(&r);
        hi - lo
    });
    ctx.out.int(n as i64);
    Ok(())
}
