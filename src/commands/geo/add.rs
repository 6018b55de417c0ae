//! GEOADD: the points become scores (their 52-bit hashes), then it is ZADD with NX/XX/CH.
//! Valkey runs it as that ZADD (same reply, same `zadd` event) and logs that ZADD, with the
//! options as the client wrote them and the scores as integers; so does this.

use bytes::Bytes;

use super::{lon_lat, zset_limits};
use crate::commands::args::is;
use crate::commands::zset::Presence;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::types::geo::hash::score_of;
use crate::types::zset::ZSetObj;

/// What GEOADD answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    /// The number of members added.
    Added,
    /// CH: added plus moved.
    Changed,
}

/// GEOADD key [NX|XX] [CH] longitude latitude member [longitude latitude member ...]
pub fn geoadd(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (mut nx, mut xx) = (false, false);
    let mut answer = Answer::Added;
    let mut first = 2;
    while let Some(a) = argv.get(first) {
        match () {
            _ if is(a, "nx") => nx = true,
            _ if is(a, "xx") => xx = true,
            _ if is(a, "ch") => answer = Answer::Changed,
            _ => break,
        }
        first += 1;
    }
    let triples = &argv[first..];
    if !triples.len().is_multiple_of(3) || (nx && xx) {
        return Err(CmdError::Syntax);
    }
    let presence = match (nx, xx) {
        (true, _) => Presence::OnlyNew,
        (_, true) => Presence::OnlyExisting,
        _ => Presence::Any,
    };
    let mut points = Vec::with_capacity(triples.len() / 3);
    for t in triples.chunks(3) {
        let (lon, lat) = lon_lat(&t[0], &t[1])?;
        let score = score_of(lon, lat).expect("checked inside the limits");
        points.push((score, &t[2][..]));
    }
    // Options alone (`GEOADD k CH NX`) leave ZADD without elements: its syntax error.
    if points.is_empty() {
        return Err(CmdError::Syntax);
    }
    let (added, moved) = add(ctx, &argv[1], &points, presence)?;
    if added + moved > 0 {
        ctx.changed(&argv[1], (added + moved) as u64, KeyspaceEvents::ZSET, "zadd");
        ctx.propagate_as(|| vec![as_zadd(argv, first, &points)]);
    }
    ctx.out.int(match answer {
        Answer::Added => added,
        Answer::Changed => added + moved,
    });
    Ok(())
}

/// Adds or moves the members; (added, moved).
fn add(
    ctx: &mut Ctx,
    key: &[u8],
    points: &[(u64, &[u8])],
    presence: Presence,
) -> Result<(i64, i64), CmdError> {
    let limits = zset_limits(ctx);
    let now = ctx.now_ms;
    let max_member = points.iter().map(|(_, m)| m.len()).max().unwrap_or(0);
    let create = (presence != Presence::OnlyExisting)
        .then_some(|| ZSetObj::with_hint(limits, points.len(), max_member));
    let Some(mut entry) = ctx.dbs[ctx.client.db].agg_entry(key, now, create)? else {
        return Ok((0, 0));
    };
    let z = entry.get();
    let (mut added, mut moved) = (0, 0);
    for &(score, member) in points {
        let score = score as f64;
        match (z.score(member), presence) {
            (Some(_), Presence::OnlyNew) | (None, Presence::OnlyExisting) => {}
            (Some(old), _) if old == score => {}
            (Some(_), _) => {
                z.set(member, score, limits);
                moved += 1;
            }
            (None, _) => {
                z.set(member, score, limits);
                added += 1;
            }
        }
    }
    entry.remove_if_empty();
    Ok((added, moved))
}

/// The ZADD that GEOADD is logged as: its options as written, then `score member` pairs.
fn as_zadd(argv: &[Bytes], first: usize, points: &[(u64, &[u8])]) -> Vec<Bytes> {
    let mut zadd = Vec::with_capacity(first + 2 * points.len());
    zadd.push(Bytes::from_static(b"ZADD"));
    zadd.extend(argv[1..first].iter().cloned());
    for &(score, member) in points {
        zadd.push(Bytes::from(score.to_string()));
        zadd.push(Bytes::copy_from_slice(member));
    }
    zadd
}
