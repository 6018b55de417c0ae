//! ZUNION, ZINTER, ZDIFF, their *STORE forms and ZINTERCARD. Plain sets are accepted as
//! inputs, every member with score 1, as in Valkey.

use std::collections::HashMap;

use bytes::Bytes;

use super::range::store_sorted;
use super::{member_reply, members_header};
use crate::commands::args::{int_arg, is};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::keyspace::db::Db;
use crate::types::agg::AggRef;
use crate::types::listpack::INT_DECIMAL_BYTES_MAX;
use crate::types::set::SetObj;
use crate::types::zset::range::{cmp_pair, parse_score};
use crate::types::zset::ZSetObj;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Union,
    Inter,
    Diff,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

impl Aggregate {
    fn apply(self, acc: &mut f64, v: f64) {
        match self {
            Aggregate::Sum => {
                *acc += v;
                // inf + -inf: 0, as Valkey.
                if acc.is_nan() {
                    *acc = 0.0;
                }
            }
            Aggregate::Min => *acc = acc.min(v),
            Aggregate::Max => *acc = acc.max(v),
        }
    }
}

/// One input: a sorted set, a plain set (scores 1) or a missing key (empty).
#[derive(Clone, Copy)]
enum Src<'a> {
    Missing,
    Z(&'a ZSetObj),
    S(&'a SetObj),
}

impl Src<'_> {
    fn len(&self) -> usize {
        match self {
            Src::Missing => 0,
            Src::Z(z) => z.len(),
            Src::S(s) => s.len(),
        }
    }

    fn score(&self, m: &[u8]) -> Option<f64> {
        match self {
            Src::Missing => None,
            Src::Z(z) => z.score(m),
            Src::S(s) => s.contains(m).then_some(1.0),
        }
    }

    fn for_each(&self, mut f: impl FnMut(&[u8], f64)) {
        match self {
            Src::Missing => {}
            Src::Z(z) => z.for_each(f),
            Src::S(s) => {
                let mut buf = [0u8; INT_DECIMAL_BYTES_MAX];
                for e in s.iter() {
                    f(e.write_to(&mut buf), 1.0);
                }
            }
        }
    }
}

/// The weighted score, NaN (0 * inf) read as 0.
fn weighted(w: f64, s: f64) -> f64 {
    let v = w * s;
    if v.is_nan() {
        0.0
    } else {
        v
    }
}

/// The parsed command.
struct Request<'a> {
    keys: &'a [Bytes],
    weights: Vec<f64>,
    aggregate: Aggregate,
    withscores: bool,
    /// ZINTERCARD's LIMIT (0: none).
    limit: usize,
}

/// Checks every input key's type (WRONGTYPE before any option error, as Valkey), counting
/// a read for each.
fn check_types(db: &mut Db, keys: &[Bytes], now: i64) -> Result<(), CmdError> {
    for k in keys {
        if let Some(e) = db.read_obj(k, now) {
            match e.agg() {
                Some(AggRef::ZSet(_) | AggRef::Set(_)) => {}
                _ => return Err(CmdError::WrongType),
            }
        }
    }
    Ok(())
}

/// The inputs, once [`check_types`] has run (and dropped expired keys) in this command.
fn sources<'a>(db: &'a Db, keys: &[Bytes]) -> Vec<Src<'a>> {
    keys.iter()
        .map(|k| match db.stored(k).and_then(|e| e.agg()) {
            Some(AggRef::ZSet(z)) => Src::Z(z),
            Some(AggRef::Set(s)) => Src::S(s),
            _ => Src::Missing,
        })
        .collect()
}

fn parse<'a>(
    ctx: &mut Ctx,
    argv: &'a [Bytes],
    numkeys_at: usize,
    name: &str,
    op: Op,
    store: bool,
    card_only: bool,
) -> Result<Request<'a>, CmdError> {
    let numkeys = int_arg(&argv[numkeys_at])?;
    if numkeys < 1 {
        return Err(CmdError::ZNeedsInputKey(name.to_string()));
    }
    let avail = argv.len() - numkeys_at - 1;
    let n = usize::try_from(numkeys).ok().filter(|&n| n <= avail).ok_or(CmdError::Syntax)?;
    let keys = &argv[numkeys_at + 1..numkeys_at + 1 + n];
    let now = ctx.now_ms;
    check_types(&mut ctx.dbs[ctx.client.db], keys, now)?;
    let mut req = Request {
        keys,
        weights: vec![1.0; n],
        aggregate: Aggregate::Sum,
        withscores: false,
        limit: 0,
    };
    let mut j = numkeys_at + 1 + n;
    while j < argv.len() {
        let left = argv.len() - j;
        let a = &argv[j];
        if card_only && left >= 2 && is(a, "limit") {
            let l = int_arg(&argv[j + 1]).map_err(|_| CmdError::LimitNegative)?;
            req.limit = usize::try_from(l).map_err(|_| CmdError::LimitNegative)?;
            j += 2;
        } else if !card_only && op != Op::Diff && left > n && is(a, "weights") {
            for (i, w) in argv[j + 1..j + 1 + n].iter().enumerate() {
                req.weights[i] = parse_score(w).ok_or(CmdError::ZWeightNotFloat)?;
            }
            j += 1 + n;
        } else if !card_only && op != Op::Diff && left >= 2 && is(a, "aggregate") {
            let v = &argv[j + 1];
            req.aggregate = match () {
                _ if is(v, "sum") => Aggregate::Sum,
                _ if is(v, "min") => Aggregate::Min,
                _ if is(v, "max") => Aggregate::Max,
                _ => return Err(CmdError::Syntax),
            };
            j += 2;
        } else if !card_only && !store && is(a, "withscores") {
            req.withscores = true;
            j += 1;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    Ok(req)
}

/// Computes the result, sorted by (score, member).
fn compute(srcs: &[Src<'_>], req: &Request<'_>, op: Op) -> Vec<(Vec<u8>, f64)> {
    let mut out: Vec<(Vec<u8>, f64)> = Vec::new();
    match op {
        Op::Union => {
            let mut order: Vec<usize> = (0..srcs.len()).collect();
            order.sort_by_key(|&i| srcs[i].len());
            let mut acc: HashMap<Vec<u8>, f64> = HashMap::new();
            for &i in &order {
                let w = req.weights[i];
                srcs[i].for_each(|m, s| {
                    let v = weighted(w, s);
                    match acc.get_mut(m) {
                        Some(a) => req.aggregate.apply(a, v),
                        None => {
                            acc.insert(m.to_vec(), v);
                        }
                    }
                });
            }
            out.extend(acc);
        }
        Op::Inter => {
            let mut order: Vec<usize> = (0..srcs.len()).collect();
            order.sort_by_key(|&i| srcs[i].len());
            let (first, rest) = order.split_first().expect("at least one key");
            srcs[*first].for_each(|m, s| {
                let mut acc = weighted(req.weights[*first], s);
                for &j in rest {
                    match srcs[j].score(m) {
                        Some(s2) => req.aggregate.apply(&mut acc, weighted(req.weights[j], s2)),
                        None => return,
                    }
                }
                out.push((m.to_vec(), acc));
            });
        }
        Op::Diff => {
            srcs[0].for_each(|m, s| {
                if srcs[1..].iter().all(|o| o.score(m).is_none()) {
                    out.push((m.to_vec(), s));
                }
            });
        }
    }
    out.sort_by(|a, b| cmp_pair(a.1, &a.0, b.1, &b.0));
    out
}

fn generic(ctx: &mut Ctx, argv: &[Bytes], op: Op, store: bool, name: &'static str) -> CmdResult {
    let numkeys_at = if store { 2 } else { 1 };
    let req = parse(ctx, argv, numkeys_at, name, op, store, false)?;
    let result = {
        let db = &ctx.dbs[ctx.client.db];
        compute(&sources(db, req.keys), &req, op)
    };
    if store {
        let n = result.len();
        store_sorted(ctx, &argv[1], result, name);
        ctx.out.int(n as i64);
        return Ok(());
    }
    let out = &mut *ctx.out;
    members_header(out, result.len(), req.withscores);
    for (m, s) in &result {
        member_reply(out, m, *s, req.withscores);
    }
    Ok(())
}

/// ZUNION numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
pub fn zunion(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    generic(ctx, argv, Op::Union, false, "zunion")
}

/// ZINTER numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
pub fn zinter(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    generic(ctx, argv, Op::Inter, false, "zinter")
}

/// ZDIFF numkeys key [key ...] [WITHSCORES]
pub fn zdiff(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    generic(ctx, argv, Op::Diff, false, "zdiff")
}

/// ZUNIONSTORE dst numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX]
pub fn zunionstore(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    generic(ctx, argv, Op::Union, true, "zunionstore")
}

/// ZINTERSTORE dst numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX]
pub fn zinterstore(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    generic(ctx, argv, Op::Inter, true, "zinterstore")
}

/// ZDIFFSTORE dst numkeys key [key ...]
pub fn zdiffstore(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    generic(ctx, argv, Op::Diff, true, "zdiffstore")
}

/// ZINTERCARD numkeys key [key ...] [LIMIT limit]
pub fn zintercard(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let req = parse(ctx, argv, 1, "zintercard", Op::Inter, false, true)?;
    let db = &ctx.dbs[ctx.client.db];
    let srcs = sources(db, req.keys);
    let mut order: Vec<usize> = (0..srcs.len()).collect();
    order.sort_by_key(|&i| srcs[i].len());
    let (first, rest) = order.split_first().expect("at least one key");
    let mut n = 0usize;
    // Counting stops at the limit; members are visited until then (a bounded walk).
    let limit = if req.limit == 0 { usize::MAX } else { req.limit };
    if let Src::Z(z) = srcs[*first] {
        z.visit(0, z.len(), false, |m, _| {
            if rest.iter().all(|&j| srcs[j].score(m).is_some()) {
                n += 1;
            }
            n < limit
        });
    } else {
        srcs[*first].for_each(|m, _| {
            if n < limit && rest.iter().all(|&j| srcs[j].score(m).is_some()) {
                n += 1;
            }
        });
    }
    ctx.out.int(n as i64);
    Ok(())
}
