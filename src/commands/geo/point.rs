//! The point reads: GEODIST, GEOHASH, GEOPOS. A member's point is the middle of the cell
//! its score names; a member that is missing (or a missing key) answers nil.

use bytes::Bytes;

use super::{reply_distance, reply_point, unit};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::resp::reply::Reply;
use crate::types::geo::distance::distance;
use crate::types::geo::hash::{decode_score, geohash_string};
use crate::types::zset::ZSetObj;

/// GEODIST key member1 member2 [M|KM|FT|MI]
pub fn geodist(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    // The unit is checked before the key is looked up.
    let to_m = match argv.len() {
        4 => 1.0,
        5 => unit(&argv[4])?,
        _ => return Err(CmdError::Syntax),
    };
    let now = ctx.now_ms;
    let z = ctx.dbs[ctx.client.db].read_agg::<ZSetObj>(&argv[1], now)?;
    let scores = z.and_then(|z| Some((z.score(&argv[2])?, z.score(&argv[3])?)));
    match scores {
        Some((s1, s2)) => {
            let ((lon1, lat1), (lon2, lat2)) = (decode_score(s1), decode_score(s2));
            reply_distance(ctx.out, distance(lon1, lat1, lon2, lat2) / to_m);
        }
        None => ctx.out.null(),
    }
    Ok(())
}

/// GEOHASH key [member ...]
pub fn geohash(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    per_member(ctx, argv, |out, score| match score {
        Some(score) => out.bulk(&geohash_string(score)),
        None => out.null(),
    })
}

/// GEOPOS key [member ...]
pub fn geopos(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    per_member(ctx, argv, |out, score| match score {
        Some(score) => reply_point(out, decode_score(score)),
        None => out.null_array(),
    })
}

/// One reply per member of `argv[2..]`, made by `reply` from its score (None: a missing
/// member, or a missing key).
fn per_member(ctx: &mut Ctx, argv: &[Bytes], reply: impl Fn(&mut Reply, Option<f64>)) -> CmdResult {
    let now = ctx.now_ms;
    let z = ctx.dbs[ctx.client.db].read_agg::<ZSetObj>(&argv[1], now)?;
    let out = &mut *ctx.out;
    out.array(argv.len() - 2);
    for m in &argv[2..] {
        reply(out, z.and_then(|z| z.score(m)));
    }
    Ok(())
}
