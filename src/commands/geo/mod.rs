//! Geospatial commands on sorted sets (issue 19): GEOADD, GEODIST, GEOHASH, GEOPOS,
//! GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and their _RO forms.
//!
//! A geo index is an ordinary sorted set whose scores are 52-bit geohashes: these
//! handlers parse coordinates, units and shapes into a
//! [`Query`](crate::types::geo::Query), let `types::geo` find and order the points, and
//! format distances and coordinates the way Valkey prints them. They never see an encoding
//! and touch the keyspace only through the sorted set's methods.
//!
//! # Layout
//! - `mod.rs`: the table, the error texts of the family, argument and reply helpers.
//! - `add.rs`: GEOADD (a ZADD of computed scores, and logged as that ZADD).
//! - `point.rs`: GEODIST, GEOHASH, GEOPOS.
//! - `search.rs`: GEOSEARCH, GEOSEARCHSTORE, GEORADIUS[BYMEMBER][_RO].

mod add;
mod point;
mod search;

use std::fmt;

use crate::commands::table::ks::{ACCESS, OW, RO, RW, UPDATE, VARIABLE_FLAGS};
use crate::commands::table::{acl, flag, range, BeginSearch, Command, Data, FindKeys, KeySpec};
use crate::commands::{CmdError, Ctx};
use crate::resp::reply::Reply;
use crate::types::geo::hash::indexable;
use crate::types::geo::LonLat;
use crate::types::zset::range::parse_score;
use crate::types::zset::Limits;

const READ: (u64, u64) = (flag::READONLY, acl::READ | acl::GEO | acl::SLOW);
const WRITE: (u64, u64) = (flag::WRITE | flag::DENYOOM, acl::WRITE | acl::GEO | acl::SLOW);
/// GEORADIUS and GEORADIUSBYMEMBER: the STORE keys are found by keyword.
const WRITE_MOVABLE: (u64, u64) = (WRITE.0 | flag::MOVABLE_KEYS, WRITE.1);

const READ1: &[KeySpec] = &[range(RO | ACCESS, 1, 0, 1)];
const RW_UPDATE: &[KeySpec] = &[range(RW | UPDATE, 1, 0, 1)];
const SEARCHSTORE_KEYS: &[KeySpec] = &[range(OW | UPDATE, 1, 0, 1), range(RO | ACCESS, 2, 0, 1)];

/// The destination after `STORE` or `STOREDIST`, searched from the first option.
const fn store_after(keyword: &'static str, start_from: i32) -> KeySpec {
    KeySpec {
        flags: OW | UPDATE | VARIABLE_FLAGS,
        begin: BeginSearch::Keyword { keyword, start_from },
        find: FindKeys::Range { last_key: 0, step: 1, limit: 0 },
    }
}

const GEORADIUS_KEYS: &[KeySpec] =
    &[range(RO | ACCESS, 1, 0, 1), store_after("STORE", 6), store_after("STOREDIST", 6)];
const GEORADIUSBYMEMBER_KEYS: &[KeySpec] =
    &[range(RO | ACCESS, 1, 0, 1), store_after("STORE", 5), store_after("STOREDIST", 5)];

const G: &str = "geo";
const RADIUS_COMPLEXITY: &str = "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.";
const SEARCH_COMPLEXITY: &str = "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape";
const RADIUS_HISTORY: &[(&str, &str)] = &[
    ("6.2.0", "Added the `ANY` option for `COUNT`."),
    ("7.0.0", "Added support for uppercase unit names."),
];
const SEARCH_HISTORY: &[(&str, &str)] = &[
    ("7.0.0", "Added support for uppercase unit names."),
    ("9.0.0", "Added support for the BYPOLYGON option."),
];

pub static COMMANDS: &[Command] = &[
    Command::new("geoadd", -5, WRITE.0, WRITE.1, Data(add::geoadd))
        .history(&[("6.2.0", "Added the `CH`, `NX` and `XX` options.")])
        .keys(RW_UPDATE)
        .doc(G, "3.2.0", "Adds one or more members to a geospatial index. The key is created if it doesn't exist.", "O(log(N)) for each item added, where N is the number of elements in the sorted set."),
    Command::new("geodist", -4, READ.0, READ.1, Data(point::geodist))
        .keys(READ1)
        .doc(G, "3.2.0", "Returns the distance between two members of a geospatial index.", "O(1)"),
    Command::new("geohash", -2, READ.0, READ.1, Data(point::geohash))
        .keys(READ1)
        .doc(G, "3.2.0", "Returns members from a geospatial index as geohash strings.", "O(1) for each member requested."),
    Command::new("geopos", -2, READ.0, READ.1, Data(point::geopos))
        .keys(READ1)
        .doc(G, "3.2.0", "Returns the longitude and latitude of members from a geospatial index.", "O(1) for each member requested."),
    Command::new("georadius", -6, WRITE_MOVABLE.0, WRITE_MOVABLE.1, Data(search::georadius))
        .history(RADIUS_HISTORY)
        .keys(GEORADIUS_KEYS)
        .doc(G, "3.2.0", "Queries a geospatial index for members within a distance from a coordinate, optionally stores the result.", RADIUS_COMPLEXITY),
    Command::new("georadius_ro", -6, READ.0, READ.1, Data(search::georadius_ro))
        .history(RADIUS_HISTORY)
        .keys(READ1)
        .doc(G, "3.2.10", "Returns members from a geospatial index that are within a distance from a coordinate.", RADIUS_COMPLEXITY),
    Command::new("georadiusbymember", -5, WRITE_MOVABLE.0, WRITE_MOVABLE.1, Data(search::georadiusbymember))
        .history(RADIUS_HISTORY)
        .keys(GEORADIUSBYMEMBER_KEYS)
        .doc(G, "3.2.0", "Queries a geospatial index for members within a distance from a member, optionally stores the result.", RADIUS_COMPLEXITY),
    Command::new("georadiusbymember_ro", -5, READ.0, READ.1, Data(search::georadiusbymember_ro))
        .history(RADIUS_HISTORY)
        .keys(READ1)
        .doc(G, "3.2.10", "Returns members from a geospatial index that are within a distance from a member.", RADIUS_COMPLEXITY),
    Command::new("geosearch", -7, READ.0, READ.1, Data(search::geosearch))
        .history(SEARCH_HISTORY)
        .keys(READ1)
        .doc(G, "6.2.0", "Queries a geospatial index for members inside an area of a box, circle, or a polygon.", SEARCH_COMPLEXITY),
    Command::new("geosearchstore", -8, WRITE.0, WRITE.1, Data(search::geosearchstore))
        .history(SEARCH_HISTORY)
        .keys(SEARCHSTORE_KEYS)
        .doc(G, "6.2.0", "Queries a geospatial index for members inside an area of a box, a circle, or a polygon, optionally stores the result.", SEARCH_COMPLEXITY),
];

// ----- errors ------------------------------------------------------------------------------

/// The family's error texts, in one place. They reach the client as `CmdError`s (`ERR`
/// class); the texts that echo the client's bytes go raw, as Valkey formats them.
#[derive(Clone, Debug, PartialEq)]
enum GeoError {
    /// A coordinate pair outside the Mercator limits, printed with `%f`.
    BadLonLat(LonLat),
    UnsupportedUnit,
    /// A radius, width or height that is not a number.
    NeedNumeric(&'static str),
    NegativeRadius,
    NegativeBox,
    CountNotPositive,
    AnyWithoutCount,
    /// STORE / STOREDIST / GEOSEARCHSTORE with WITHDIST, WITHHASH or WITHCOORD: what is
    /// named is `GEOSEARCHSTORE` or `STORE option in GEORADIUS`.
    StoreWithExtras(&'static str),
    /// GEOSEARCH without a center: the command name as the client wrote it.
    NoCenter(String),
    /// GEOSEARCH without a shape: the command name as the client wrote it.
    NoShape(String),
    /// FROMMEMBER or GEORADIUSBYMEMBER of a member the set lacks.
    NoSuchMember(Vec<u8>),
    PolygonVertexCount,
    PolygonTooFewVertices,
}

impl fmt::Display for GeoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GeoError::BadLonLat((lon, lat)) => {
                write!(f, "ERR invalid longitude,latitude pair {lon:.6},{lat:.6}")
            }
            GeoError::UnsupportedUnit => {
                f.write_str("ERR unsupported unit provided. please use M, KM, FT, MI")
            }
            GeoError::NeedNumeric(what) => write!(f, "ERR need numeric {what}"),
            GeoError::NegativeRadius => f.write_str("ERR radius cannot be negative"),
            GeoError::NegativeBox => f.write_str("ERR height or width cannot be negative"),
            GeoError::CountNotPositive => f.write_str("ERR COUNT must be > 0"),
            GeoError::AnyWithoutCount => {
                f.write_str("ERR the ANY argument requires COUNT argument")
            }
            GeoError::StoreWithExtras(what) => write!(
                f,
                "ERR {what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
            ),
            GeoError::NoCenter(cmd) => {
                write!(f, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {cmd}")
            }
            GeoError::NoShape(cmd) => write!(
                f,
                "ERR exactly one of BYRADIUS, BYBOX and BYPOLYGON can be specified for {cmd}"
            ),
            GeoError::NoSuchMember(m) => {
                write!(f, "ERR member {} does not exist", String::from_utf8_lossy(m))
            }
            GeoError::PolygonVertexCount => f.write_str("ERR invalid number of vertices"),
            GeoError::PolygonTooFewVertices => {
                f.write_str("ERR GEOSEARCH BYPOLYGON must have at least 3 vertices")
            }
        }
    }
}

impl From<GeoError> for CmdError {
    fn from(e: GeoError) -> CmdError {
        match e {
            // Valkey formats the member as a C string (a NUL ends it) and turns line breaks
            // into spaces; the rest of its bytes go as they came.
            GeoError::NoSuchMember(m) => {
                let m = &m[..m.iter().position(|&c| c == 0).unwrap_or(m.len())];
                let m = m.iter().map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c });
                let mut text = b"ERR member ".to_vec();
                text.extend(m);
                text.extend_from_slice(b" does not exist");
                CmdError::Raw(text)
            }
            other => CmdError::Other(other.to_string()),
        }
    }
}

// ----- arguments ---------------------------------------------------------------------------

/// The sorted set listpack limits from the config (a stored result or a new index starts
/// in the encoding its size calls for).
fn zset_limits(ctx: &Ctx) -> Limits {
    let c = &ctx.config;
    Limits {
        max_entries: usize::try_from(c.zset_max_listpack_entries).unwrap_or(usize::MAX),
        max_value_bytes: usize::try_from(c.zset_max_listpack_value_bytes).unwrap_or(usize::MAX),
    }
}

/// A coordinate or a distance: a number by Valkey's `getDoubleFromObject` rules.
fn number(a: &[u8]) -> Option<f64> {
    parse_score(a)
}

/// `longitude latitude`: numbers (`value is not a valid float`) inside the Mercator limits.
fn lon_lat(lon: &[u8], lat: &[u8]) -> Result<LonLat, CmdError> {
    let lon = number(lon).ok_or(CmdError::NotFloat)?;
    let lat = number(lat).ok_or(CmdError::NotFloat)?;
    if !indexable(lon, lat) {
        return Err(GeoError::BadLonLat((lon, lat)).into());
    }
    Ok((lon, lat))
}

/// A unit: meters per unit.
fn unit(a: &[u8]) -> Result<f64, CmdError> {
    let is = |u: &str| a.eq_ignore_ascii_case(u.as_bytes());
    match () {
        _ if is("m") => Ok(1.0),
        _ if is("km") => Ok(1000.0),
        _ if is("ft") => Ok(0.3048),
        _ if is("mi") => Ok(1609.34),
        _ => Err(GeoError::UnsupportedUnit.into()),
    }
}

// ----- replies -----------------------------------------------------------------------------

/// A distance as Valkey prints it: rounded to four decimals (ties to even, as `llrint`),
/// always written with them.
fn distance_text(d: f64) -> String {
    if d == 0.0 {
        return "0.0000".to_string();
    }
    let scaled = (d * 10000.0).round_ties_even() as i64;
    let sign = if scaled < 0 { "-" } else { "" };
    let abs = scaled.unsigned_abs();
    format!("{sign}{}.{:04}", abs / 10000, abs % 10000)
}

/// A coordinate as Valkey prints it (its "human" long double text): 17 decimals, rounded
/// to nearest even on the exact binary value, trailing zeros and point removed, `-0` as `0`.
fn coordinate_text(x: f64) -> String {
    let text = format!("{x:.17}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

/// A distance reply: a bulk string in both protocols.
fn reply_distance(out: &mut Reply, d: f64) {
    out.bulk(distance_text(d).as_bytes());
}

/// A coordinate reply: a bulk string in RESP2, a double in RESP3.
fn reply_coordinate(out: &mut Reply, x: f64) {
    let text = coordinate_text(x);
    if out.is_resp3() {
        out.raw(b",");
        out.raw(text.as_bytes());
        out.raw(b"\r\n");
    } else {
        out.bulk(text.as_bytes());
    }
}

/// A `[longitude, latitude]` pair.
fn reply_point(out: &mut Reply, (lon, lat): LonLat) {
    out.array(2);
    reply_coordinate(out, lon);
    reply_coordinate(out, lat);
}

// The literals are Valkey's replies, digit for digit.
#[cfg(test)]
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;

    #[test]
    fn distances_print_with_four_decimals() {
        assert_eq!(distance_text(0.0), "0.0000");
        assert_eq!(distance_text(-0.0), "0.0000");
        assert_eq!(distance_text(166274.15156960039), "166274.1516");
        assert_eq!(distance_text(0.00004), "0.0000");
        assert_eq!(distance_text(0.00005), "0.0000"); // 0.5 rounds to even
                                                      // 0.00015 * 10000 is 1.4999999999999998 in binary: it rounds down, as in C.
        assert_eq!(distance_text(0.00015), "0.0001");
        assert_eq!(distance_text(0.00016), "0.0002");
        assert_eq!(distance_text(0.7750), "0.7750");
        assert_eq!(distance_text(12.3), "12.3000");
    }

    #[test]
    fn coordinates_print_as_valkey_does() {
        assert_eq!(coordinate_text(13.361389338970184), "13.36138933897018433");
        assert_eq!(coordinate_text(180.0), "180");
        assert_eq!(coordinate_text(85.05112878), "85.0511287799999991");
        assert_eq!(coordinate_text(-0.0), "0");
        assert_eq!(coordinate_text(-1e-20), "0");
        assert_eq!(coordinate_text(0.5), "0.5");
    }

    #[test]
    fn errors_echo_members_as_c_strings() {
        let e: CmdError = GeoError::NoSuchMember(b"a b\r\nc\0d".to_vec()).into();
        assert_eq!(e.to_bytes(), b"ERR member a b  c does not exist");
        let e: CmdError = GeoError::BadLonLat((200.0, f64::INFINITY)).into();
        assert_eq!(e.to_string(), "ERR invalid longitude,latitude pair 200.000000,inf");
        assert_eq!(unit(b"KM"), Ok(1000.0));
        assert!(unit(b"yd").is_err());
    }
}
