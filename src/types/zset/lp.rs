//! The listpack encoding of a small sorted set: member and score entries alternating, in
//! (score, member) order, exactly as Valkey lays them out. Every operation walks the pairs;
//! the set stays below `zset-max-listpack-entries` (128 by default), so a walk is short.

use std::cmp::Ordering;

use crate::types::listpack::{Listpack, LpEntry, Pos, INT_DECIMAL_BYTES_MAX};
use crate::types::zset::range::{cmp_pair, score_from_text, score_text, LexRange, ScoreRange};

/// The score an entry holds.
fn score_of(e: LpEntry<'_>) -> f64 {
    match e {
        LpEntry::Int(v) => v as f64,
        LpEntry::Str(s) => score_from_text(s),
    }
}

/// Calls `f(member, score)` for the pair whose member is at `p`.
fn pair<R>(lp: &Listpack, p: Pos, f: impl FnOnce(&[u8], f64) -> R) -> R {
    let sp = lp.next(p).expect("a member is followed by its score");
    let score = score_of(lp.get(sp));
    let mut buf = [0u8; INT_DECIMAL_BYTES_MAX];
    f(lp.get(p).write_to(&mut buf), score)
}

/// The member position and score of `member`.
pub fn find(lp: &Listpack, member: &[u8]) -> Option<(Pos, f64)> {
    let p = lp.find(lp.first()?, member, 1)?;
    Some((p, score_of(lp.get(lp.next(p).expect("score")))))
}

/// Inserts a pair that is not present, in order.
pub fn insert(lp: &mut Listpack, member: &[u8], score: f64) {
    let mut text = String::new();
    score_text(score, &mut text);
    let mut p = lp.first();
    while let Some(at) = p {
        if pair(lp, at, |m, s| cmp_pair(s, m, score, member)) == Ordering::Greater {
            let mp = lp.insert_before(at, member);
            lp.insert_after(mp, text.as_bytes());
            return;
        }
        p = lp.next(lp.next(at).expect("score"));
    }
    lp.push_back(member);
    lp.push_back(text.as_bytes());
}

/// Removes the pair whose member is at `p`.
pub fn delete_at(lp: &mut Listpack, p: Pos) {
    let next = lp.delete(p).expect("a member is followed by its score");
    lp.delete(next);
}

/// Calls `f(member, score)` on the pairs of ranks `start..end`, in order or reversed,
/// until `f` returns false.
pub fn visit(
    lp: &Listpack,
    start: usize,
    end: usize,
    rev: bool,
    mut f: impl FnMut(&[u8], f64) -> bool,
) {
    let n = lp.len() / 2;
    let end = end.min(n);
    if start >= end {
        return;
    }
    let step = |p: Pos| {
        if rev {
            lp.prev(p).and_then(|s| lp.prev(s))
        } else {
            lp.next(p).and_then(|s| lp.next(s))
        }
    };
    let first = if rev { end - 1 } else { start };
    let mut p = lp.seek(2 * first as i64);
    for _ in start..end {
        let at = p.expect("rank inside the listpack");
        if !pair(lp, at, &mut f) {
            return;
        }
        p = step(at);
    }
}

/// The ranks of the pairs inside the score range: `lo..hi`.
pub fn score_bounds(lp: &Listpack, r: &ScoreRange) -> (usize, usize) {
    bounds(lp, |lp, at| {
        let s = score_of(lp.get(lp.next(at).expect("score")));
        (r.gte_min(s), r.lte_max(s))
    })
}

/// The ranks of the pairs inside the lex range, walked as Valkey walks a listpack: from the
/// first member at or above the minimum, while members stay at or below the maximum.
pub fn lex_bounds(lp: &Listpack, r: &LexRange<'_>) -> (usize, usize) {
    let mut buf = [0u8; INT_DECIMAL_BYTES_MAX];
    bounds(lp, |lp, at| {
        let m = lp.get(at).write_to(&mut buf);
        (r.gte_min(m), r.lte_max(m))
    })
}

/// The ranks `lo..hi` of the pairs in a range, given for the pair at each member position
/// whether it is at or above the range's minimum and at or below its maximum: from the first
/// pair at or above the minimum, while pairs stay at or below the maximum.
fn bounds(lp: &Listpack, mut test: impl FnMut(&Listpack, Pos) -> (bool, bool)) -> (usize, usize) {
    let mut lo = None;
    let mut i = 0;
    let mut p = lp.first();
    while let Some(at) = p {
        let (above_min, below_max) = test(lp, at);
        if lo.is_none() {
            if above_min {
                if !below_max {
                    return (0, 0);
                }
                lo = Some(i);
            }
        } else if !below_max {
            break;
        }
        i += 1;
        p = lp.next(lp.next(at).expect("score"));
    }
    match lo {
        Some(lo) => (lo, i),
        None => (0, 0),
    }
}

/// The rank of the member at `p`.
pub fn rank_of(lp: &Listpack, p: Pos) -> usize {
    let mut rank = 0;
    let mut q = lp.first();
    while let Some(at) = q {
        if at == p {
            return rank;
        }
        rank += 1;
        q = lp.next(lp.next(at).expect("score"));
    }
    unreachable!("position inside the listpack")
}
