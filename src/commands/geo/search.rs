//! GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and the _RO forms: one parser
//! and one flow, as in Valkey, whose order of checks the errors follow:
//!
//! 1. the source key is looked up (WRONGTYPE first);
//! 2. GEORADIUS's center and radius, GEORADIUSBYMEMBER's member and radius (not when the
//!    key is missing);
//! 3. the options, left to right, each parsed (and a FROMMEMBER looked up) where it stands;
//! 4. what the options say together: STORE with WITH*, no center, no shape, ANY alone;
//! 5. a missing key answers empty (a STORE deletes its destination);
//! 6. the cells are scanned, the points sorted, then answered or stored.

use bytes::Bytes;

use super::{lon_lat, number, reply_distance, reply_point, unit, zset_limits, GeoError};
use crate::commands::args::{int_arg, is};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::keyspace::db::{Ttl, Value};
use crate::types::agg::Typed;
use crate::types::geo::hash::decode_score;
use crate::types::geo::{search, Found, LonLat, Order, Query, Shape};
use crate::types::zset::range::cmp_pair;
use crate::types::zset::ZSetObj;

/// Where the center comes from and how the fixed arguments read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// GEORADIUS[_RO] key longitude latitude radius unit ...
    Radius,
    /// GEORADIUSBYMEMBER[_RO] key member radius unit ...
    RadiusByMember,
    /// GEOSEARCH key ... / GEOSEARCHSTORE destination source ...
    Search,
}

/// Whether and how a command stores its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Storing {
    /// The _RO forms and GEOSEARCH.
    Never,
    /// GEORADIUS[BYMEMBER]: `STORE key` or `STOREDIST key` among the options.
    OnRequest,
    /// GEOSEARCHSTORE: always, into its first key.
    Always,
}

/// The score a stored member gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stored {
    /// Its own (the geohash): the result is a geo index again.
    Hash,
    /// Its distance to the center, in the request's unit (STOREDIST).
    Distance,
}

/// What each answered point carries besides its member (WITHDIST, WITHHASH, WITHCOORD).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Extras(u8);

impl Extras {
    const DIST: u8 = 1;
    const HASH: u8 = 2;
    const COORD: u8 = 4;

    fn has(self, what: u8) -> bool {
        self.0 & what != 0
    }

    fn count(self) -> usize {
        self.0.count_ones() as usize
    }
}

/// How many points to answer, and whether the scan may stop early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Count {
    All,
    /// COUNT n: the n nearest (sorted ascending unless DESC is given).
    First(usize),
    /// COUNT n ANY: the first n found.
    Any(usize),
}

/// The request once every argument is read.
#[derive(Debug)]
struct Request<'a> {
    /// None when the source key is missing (FROMMEMBER and GEORADIUSBYMEMBER could not be
    /// resolved, and there is nothing to search).
    query: Option<Query>,
    order: Order,
    count: Count,
    extras: Extras,
    store: Option<(&'a [u8], Stored)>,
}

/// What the option loop accumulates, as Valkey's locals: the checks between options read it.
#[derive(Default)]
struct Seen {
    center: Option<LonLat>,
    from_member: bool,
    from_lonlat: bool,
    /// The shape and the meters of its unit (1 for a polygon).
    shape: Option<(Shape, f64)>,
    extras: Extras,
    order: Option<Order>,
    count: usize,
    any: bool,
}

impl Seen {
    fn by_radius(&self) -> bool {
        matches!(self.shape, Some((Shape::Circle { .. }, _)))
    }

    fn by_box(&self) -> bool {
        matches!(self.shape, Some((Shape::Rect { .. }, _)))
    }

    fn by_polygon(&self) -> bool {
        matches!(self.shape, Some((Shape::Polygon(_), _)))
    }
}

/// GEORADIUS key longitude latitude radius unit [options] [STORE key | STOREDIST key]
pub fn georadius(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    generic(ctx, argv, Form::Radius, Storing::OnRequest)
}

/// GEORADIUS_RO key longitude latitude radius unit [options]
pub fn georadius_ro(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    generic(ctx, argv, Form::Radius, Storing::Never)
}

/// GEORADIUSBYMEMBER key member radius unit [options] [STORE key | STOREDIST key]
pub fn georadiusbymember(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    generic(ctx, argv, Form::RadiusByMember, Storing::OnRequest)
}

/// GEORADIUSBYMEMBER_RO key member radius unit [options]
pub fn georadiusbymember_ro(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    generic(ctx, argv, Form::RadiusByMember, Storing::Never)
}

/// GEOSEARCH key FROMMEMBER m | FROMLONLAT lon lat  BYRADIUS r unit | BYBOX w h unit |
/// BYPOLYGON n lon lat ...  [ASC|DESC] [COUNT n [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]
pub fn geosearch(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    generic(ctx, argv, Form::Search, Storing::Never)
}

/// GEOSEARCHSTORE destination source (GEOSEARCH's options) [STOREDIST]
pub fn geosearchstore(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    generic(ctx, argv, Form::Search, Storing::Always)
}

fn generic(ctx: &mut Ctx, argv: &[Bytes], form: Form, storing: Storing) -> CmdResult {
    let src = if storing == Storing::Always { 2 } else { 1 };
    let now = ctx.now_ms;
    let z = ctx.dbs[ctx.client.db].read_agg::<ZSetObj>(&argv[src], now)?;
    let req = parse(argv, form, storing, z)?;
    let (Some(z), Some(query)) = (z, &req.query) else {
        // A missing key: nothing found.
        return match req.store {
            Some((dst, _)) => store(ctx, dst, &Found::default(), 0, &req, form),
            None => {
                ctx.out.array(0);
                Ok(())
            }
        };
    };
    let mut found = Found::default();
    let limit = match req.count {
        Count::Any(n) => Some(n),
        Count::All | Count::First(_) => None,
    };
    search(z, query, limit, &mut found);
    if found.is_empty() && req.store.is_none() {
        ctx.out.array(0);
        return Ok(());
    }
    let wanted = match req.count {
        Count::All => found.len(),
        Count::First(n) | Count::Any(n) => n.min(found.len()),
    };
    found.sort(req.order, wanted);
    match req.store {
        Some((dst, _)) => store(ctx, dst, &found, wanted, &req, form),
        None => {
            answer(ctx, &found, wanted, &req, query.to_m);
            Ok(())
        }
    }
}

/// Reads the arguments after the key(s), in Valkey's order of checks. `z` is the source
/// set (None: missing), for FROMMEMBER and GEORADIUSBYMEMBER.
fn parse<'a>(
    argv: &'a [Bytes],
    form: Form,
    storing: Storing,
    z: Option<&ZSetObj>,
) -> Result<Request<'a>, CmdError> {
    let mut seen = Seen::default();
    let mut store: Option<(&'a [u8], Stored)> = None;
    let first_option = match form {
        Form::Radius => {
            seen.center = Some(lon_lat(&argv[2], &argv[3])?);
            seen.shape = Some(radius(&argv[4], &argv[5])?);
            6
        }
        Form::RadiusByMember => {
            // A missing key: the options are still checked, then the answer is empty.
            if let Some(z) = z {
                seen.center = Some(member_point(z, &argv[2])?);
                seen.shape = Some(radius(&argv[3], &argv[4])?);
            }
            5
        }
        Form::Search if storing == Storing::Always => {
            store = Some((&argv[1][..], Stored::Hash));
            3
        }
        Form::Search => 2,
    };
    let opts = &argv[first_option..];
    let n = opts.len();
    let searching = form == Form::Search;
    let may_store = storing == Storing::OnRequest;
    let mut i = 0;
    while i < n {
        let a = &opts[i];
        if is(a, "withdist") {
            seen.extras.0 |= Extras::DIST;
        } else if is(a, "withhash") {
            seen.extras.0 |= Extras::HASH;
        } else if is(a, "withcoord") {
            seen.extras.0 |= Extras::COORD;
        } else if is(a, "any") {
            seen.any = true;
        } else if is(a, "asc") {
            seen.order = Some(Order::Asc);
        } else if is(a, "desc") {
            seen.order = Some(Order::Desc);
        } else if is(a, "count") && i + 1 < n {
            let count = int_arg(&opts[i + 1])?;
            seen.count =
                usize::try_from(count).ok().filter(|&c| c > 0).ok_or(GeoError::CountNotPositive)?;
            i += 1;
        } else if is(a, "store") && i + 1 < n && may_store {
            store = Some((&opts[i + 1][..], Stored::Hash));
            i += 1;
        } else if is(a, "storedist") && i + 1 < n && may_store {
            store = Some((&opts[i + 1][..], Stored::Distance));
            i += 1;
        } else if is(a, "storedist") && storing == Storing::Always {
            store = store.map(|(dst, _)| (dst, Stored::Distance));
        } else if is(a, "frommember")
            && i + 1 < n
            && searching
            && !seen.from_lonlat
            && !seen.by_polygon()
        {
            if let Some(z) = z {
                seen.center = Some(member_point(z, &opts[i + 1])?);
            }
            seen.from_member = true;
            i += 1;
        } else if is(a, "fromlonlat")
            && i + 2 < n
            && searching
            && !seen.from_member
            && !seen.by_polygon()
        {
            seen.center = Some(lon_lat(&opts[i + 1], &opts[i + 2])?);
            seen.from_lonlat = true;
            i += 2;
        } else if is(a, "byradius")
            && i + 2 < n
            && searching
            && !seen.by_box()
            && !seen.by_polygon()
        {
            seen.shape = Some(radius(&opts[i + 1], &opts[i + 2])?);
            i += 2;
        } else if is(a, "bybox")
            && i + 3 < n
            && searching
            && !seen.by_radius()
            && !seen.by_polygon()
        {
            seen.shape = Some(rect(&opts[i + 1], &opts[i + 2], &opts[i + 3])?);
            i += 3;
        } else if is(a, "bypolygon")
            && i + 1 < n
            && searching
            && !seen.by_radius()
            && !seen.by_box()
            && !seen.from_member
            && !seen.from_lonlat
        {
            let (vertices, used) = polygon(&opts[i + 1..])?;
            seen.shape = Some((Shape::Polygon(vertices), 1.0));
            i += used;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    finish(argv, seen, store, form, storing, z.is_some())
}

/// The checks of the options together, and the request.
fn finish<'a>(
    argv: &'a [Bytes],
    seen: Seen,
    store: Option<(&'a [u8], Stored)>,
    form: Form,
    storing: Storing,
    key_exists: bool,
) -> Result<Request<'a>, CmdError> {
    if store.is_some() && seen.extras.count() > 0 {
        let what =
            if storing == Storing::Always { "GEOSEARCHSTORE" } else { "STORE option in GEORADIUS" };
        return Err(GeoError::StoreWithExtras(what).into());
    }
    let name = || String::from_utf8_lossy(&argv[0]).into_owned();
    if form == Form::Search && !(seen.from_member || seen.from_lonlat) && !seen.by_polygon() {
        return Err(GeoError::NoCenter(name()).into());
    }
    if form == Form::Search && seen.shape.is_none() {
        return Err(GeoError::NoShape(name()).into());
    }
    if seen.any && seen.count == 0 {
        return Err(GeoError::AnyWithoutCount.into());
    }
    let count = match (seen.count, seen.any) {
        (0, _) => Count::All,
        (n, true) => Count::Any(n),
        (n, false) => Count::First(n),
    };
    // COUNT alone means the nearest: sorted ascending (not so for ANY).
    let order = match (seen.order, count) {
        (Some(order), _) => order,
        (None, Count::First(_)) => Order::Asc,
        (None, _) => Order::Unsorted,
    };
    let query = match (key_exists, seen.shape) {
        (false, _) | (true, None) => None,
        (true, Some((Shape::Polygon(vertices), _))) => Some(Query::polygon(vertices)),
        (true, Some((shape, to_m))) => {
            let center = seen.center.expect("a center comes with the key and the options");
            Some(Query { center, shape, to_m })
        }
    };
    Ok(Request { query, order, count, extras: seen.extras, store })
}

/// A member's point (FROMMEMBER, GEORADIUSBYMEMBER).
fn member_point(z: &ZSetObj, member: &[u8]) -> Result<LonLat, CmdError> {
    match z.score(member) {
        Some(score) => Ok(decode_score(score)),
        None => Err(GeoError::NoSuchMember(member.to_vec()).into()),
    }
}

/// `radius unit`.
fn radius(r: &[u8], u: &[u8]) -> Result<(Shape, f64), CmdError> {
    let radius = number(r).ok_or(GeoError::NeedNumeric("radius"))?;
    if radius < 0.0 {
        return Err(GeoError::NegativeRadius.into());
    }
    Ok((Shape::Circle { radius }, unit(u)?))
}

/// `width height unit`.
fn rect(w: &[u8], h: &[u8], u: &[u8]) -> Result<(Shape, f64), CmdError> {
    let width = number(w).ok_or(GeoError::NeedNumeric("width"))?;
    let height = number(h).ok_or(GeoError::NeedNumeric("height"))?;
    if height < 0.0 || width < 0.0 {
        return Err(GeoError::NegativeBox.into());
    }
    Ok((Shape::Rect { width, height }, unit(u)?))
}

/// `num-vertices longitude latitude ...` (at least three, within the limits), and how many
/// arguments that was.
fn polygon(args: &[Bytes]) -> Result<(Vec<LonLat>, usize), CmdError> {
    let n = int_arg(&args[0])
        .ok()
        .and_then(|n| i32::try_from(n).ok())
        .ok_or(GeoError::PolygonVertexCount)?;
    // The vertices must be there: a short list is "too few vertices" too.
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n >= 3 && 2 * n < args.len())
        .ok_or(GeoError::PolygonTooFewVertices)?;
    let vertices =
        args[1..=2 * n].chunks(2).map(|v| lon_lat(&v[0], &v[1])).collect::<Result<_, _>>()?;
    Ok((vertices, 1 + 2 * n))
}

/// The answer: each point's member, with its distance (in the request's unit), score and
/// coordinates when asked.
fn answer(ctx: &mut Ctx, found: &Found, wanted: usize, req: &Request<'_>, to_m: f64) {
    let out = &mut *ctx.out;
    let extras = req.extras;
    out.array(wanted);
    for p in &found.points[..wanted] {
        if extras.count() > 0 {
            out.array(extras.count() + 1);
        }
        out.bulk(found.name(p));
        if extras.has(Extras::DIST) {
            reply_distance(out, p.dist_m / to_m);
        }
        if extras.has(Extras::HASH) {
            out.int(p.score as i64);
        }
        if extras.has(Extras::COORD) {
            reply_point(out, (p.lon, p.lat));
        }
    }
}

/// STORE, STOREDIST, GEOSEARCHSTORE: the first `wanted` points become the sorted set at
/// `dst` (replacing whatever it held), or `dst` is deleted when there are none.
fn store(
    ctx: &mut Ctx,
    dst: &[u8],
    found: &Found,
    wanted: usize,
    req: &Request<'_>,
    form: Form,
) -> CmdResult {
    let now = ctx.now_ms;
    if wanted == 0 {
        if ctx.dbs[ctx.client.db].remove(dst, now) {
            ctx.changed(dst, 1, KeyspaceEvents::GENERIC, "del");
        }
        ctx.out.int(0);
        return Ok(());
    }
    let to_m = req.query.as_ref().map_or(1.0, |q| q.to_m);
    let stored = req.store.map_or(Stored::Hash, |(_, s)| s);
    let mut members: Vec<(&[u8], f64)> = found.points[..wanted]
        .iter()
        .map(|p| {
            let score = match stored {
                Stored::Hash => p.score,
                Stored::Distance => p.dist_m / to_m,
            };
            (found.name(p), score)
        })
        .collect();
    members.sort_by(|a, b| cmp_pair(a.1, a.0, b.1, b.0));
    let max_member = members.iter().map(|(m, _)| m.len()).max().unwrap_or(0);
    let mut z = ZSetObj::with_hint(zset_limits(ctx), wanted, max_member);
    for (m, s) in &members {
        z.push_greatest(m, *s);
    }
    ctx.dbs[ctx.client.db].set(dst, Value::Agg(z.wrap()), Ttl::Clear, now);
    let event = if form == Form::Search { "geosearchstore" } else { "georadiusstore" };
    ctx.changed(dst, wanted as u64, KeyspaceEvents::ZSET, event);
    ctx.out.int(wanted as i64);
    Ok(())
}
