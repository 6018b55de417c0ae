//! Geospatial commands against a real Valkey 9.1 (issue 19): every command, option and error
//! in RESP2 and RESP3 and in both sorted set encodings; seeded random points near the poles
//! and the antimeridian searched by radius, box, polygon and member, sorted, counted and
//! stored; ties under COUNT (Valkey's unstable partial sort); keyspace events, the AOF forms
//! (GEOADD is logged as ZADD), COMMAND GETKEYS and commandstats.
//!
//! Stored distances are compared as numbers: Valkey prints some doubles with a 17th digit
//! that the shortest form does not need (its grisu2 `fpconv_dtoa`), for any sorted set.

use crate::common::diff::{same_as_valkey_with, words, Pair};
use crate::common::{aof_commands, parse_val, start, start_valkey, Client, Val};

/// Runs `lines` against both servers in both protocols, with the listpack encoding and with
/// every sorted set in the large encoding.
fn same_everywhere(lines: &[&str]) {
    for proto in [2, 3] {
        same_as_valkey_with(proto, &[], lines);
        same_as_valkey_with(proto, &["--zset-max-listpack-entries", "0"], lines);
    }
}

#[test]
fn geoadd_and_point_reads_match_valkey() {
    same_everywhere(&[
        "GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania 0 0 zero",
        "GEOADD g -180 -85.05112878 sw 180 85.05112878 ne -0 -0 negzero",
        "GEOPOS g Palermo zero sw ne negzero nosuch",
        "GEOHASH g Palermo zero sw ne negzero nosuch",
        "ZRANGE g 0 -1 WITHSCORES",
        "GEODIST g Palermo Catania",
        "GEODIST g Palermo Palermo",
        "GEODIST g Palermo Catania km",
        "GEODIST g Palermo Catania KM",
        "GEODIST g Palermo Catania mi",
        "GEODIST g Palermo Catania ft",
        "GEODIST g Palermo Catania Ft",
        "GEODIST g Palermo Catania yd",
        "GEODIST g Palermo Catania km extra",
        "GEODIST g Palermo nosuch",
        "GEODIST nokey a b",
        "GEODIST nokey a b yd",
        "GEODIST g sw ne",
        "GEODIST g sw ne mi",
        "GEOPOS nokey a b",
        "GEOHASH nokey a b",
        "GEOPOS g",
        "GEOHASH g",
        "GEOADD g 180.0000001 0 x",
        "GEOADD g 0 85.06 x",
        "GEOADD g 0 -85.06 x",
        "GEOADD g abc 0 x",
        "GEOADD g 0 abc x",
        "GEOADD g inf 0 x",
        "GEOADD g -inf 0 x",
        "GEOADD g 0 inf x",
        "GEOADD g nan 0 x",
        "GEOADD g 1e-400 0 x",
        "GEOADD g 1e400 0 x",
        "GEOADD g \"\" 0 x",
        "GEOADD g 0x10 0 x",
        "GEOADD g 1 2 x 1000 0 y",
        "EXISTS x",
        "ZSCORE g x",
        "GEOADD g 0 0",
        "GEOADD g NX XX 0 0 x",
        "GEOADD g XX NX 0 0 x",
        "GEOADD g GT 0 0 x",
        "GEOADD g INCR 0 0 x",
        "GEOADD g CH NX NX",
        "GEOADD g CH CH CH",
        "GEOADD g CH NX XX",
        "GEOADD g CH 1 1 zero 2 2 new",
        "GEOADD g ch 1 1 zero 2 2 new",
        "GEOADD g XX CH 1 1 zero 3 3 new 4 4 new2",
        "GEOADD g NX 5 5 zero 6 6 new3",
        "GEOADD g nx ch xx 5 5 zero",
        "GEOADD g 7 7 dup 8 8 dup",
        "GEOPOS g dup zero new new2 new3",
        "GEOADD nokey XX 1 1 a",
        "EXISTS nokey",
        "SET str x",
        "GEOADD str 1 1 a",
        "GEOADD str 1000 1 a",
        "GEOPOS str a",
        "GEOHASH str a",
        "GEODIST str a b",
        "GEODIST str a b yd",
        "GEOPOS",
        "GEOADD g 1 1",
        "GEODIST g a",
        "OBJECT ENCODING g",
    ]);
}

/// Scores no GEOADD writes decode as Valkey casts them to 64 bits.
#[test]
fn odd_scores_decode_as_valkey() {
    same_everywhere(&[
        "ZADD w inf pinf -inf ninf -1 m1 0.5 half 1e300 big 18446744073709551616 two64",
        "ZADD w 9223372036854775808 two63 -9223372036854775808 mtwo63 -1e300 mbig",
        "ZADD w 4503599627370495 max52 13510798882111487 x3 -0.7 mhalf 3.5 frac",
        "GEOPOS w pinf ninf m1 half big two64 two63 mtwo63 mbig max52 x3 mhalf frac",
        "GEOHASH w pinf ninf m1 half big two64 two63 mtwo63 mbig max52 x3 mhalf frac",
        "GEODIST w pinf ninf",
        "GEODIST w m1 half km",
        "GEOSEARCH w FROMMEMBER half BYRADIUS 100 km WITHDIST WITHHASH WITHCOORD",
        "GEOSEARCH w FROMMEMBER m1 BYBOX 100 100 km WITHDIST WITHHASH WITHCOORD",
        "GEORADIUSBYMEMBER w frac 500 km WITHDIST WITHHASH ASC",
    ]);
}

const SEARCH_SETUP: &[&str] = &[
    "GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania",
    "GEOADD g 12.758489 38.788135 edge1 17.241510 38.788135 edge2 1 1 one",
];

const SEARCH: &[&str] = &[
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 200 km",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 200 km ASC",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 200 km DESC WITHDIST",
    "GEOSEARCH g FROMLONLAT 15 37 BYBOX 400 400 km ASC WITHCOORD WITHDIST WITHHASH",
    "GEOSEARCH g FROMLONLAT 15 37 BYBOX 400 400 KM withcoord withdist withhash desc",
    "GEOSEARCH g FROMMEMBER Palermo BYRADIUS 200 mi WITHDIST",
    "GEOSEARCH g FROMMEMBER Palermo BYBOX 200 100 ft WITHDIST",
    "GEOSEARCH g FROMMEMBER Palermo BYRADIUS 0 m WITHDIST",
    "GEOSEARCH g FROMMEMBER Palermo BYBOX 0 0 m WITHDIST",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 0 m",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 500 km COUNT 2",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 500 km COUNT 2 DESC",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 500 km COUNT 2 ANY",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 500 km COUNT 2 ANY ASC WITHHASH",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 500 km ANY COUNT 9 DESC",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 500 km COUNT 1 COUNT 3",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 500 km ASC DESC ASC",
    "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km FROMLONLAT 15 37",
    "GEOSEARCH g FROMMEMBER Palermo FROMMEMBER Catania BYRADIUS 1 km",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 1 km BYRADIUS 300 km",
    "GEOSEARCH g FROMLONLAT 15 37 BYBOX 1 1 km BYBOX 600 600 km",
    "GEOSEARCH g FROMLONLAT 0 0 BYRADIUS inf km WITHDIST",
    "GEOSEARCH g FROMLONLAT 0 0 BYBOX inf inf km WITHDIST",
    "GEOSEARCH g FROMLONLAT 0 0 BYRADIUS 20000 km WITHDIST",
    "GEOSEARCH g FROMLONLAT 179 -85 BYRADIUS 30000 km WITHDIST",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 1e-300 m",
    "GEOSEARCH g BYPOLYGON 5 12.41098696654226 38.05033923003755 15.107936245794182 38.00616649901906 18.148439288534455 38.63804787603499 17.80831874257693 39.50316813110968 12.458468633214036 38.57719533463012",
    "GEOSEARCH g BYPOLYGON 5 12.41098696654226 38.05033923003755 15.107936245794182 38.00616649901906 18.148439288534455 38.63804787603499 17.80831874257693 39.50316813110968 12.458468633214036 38.57719533463012 ASC WITHCOORD WITHDIST WITHHASH",
    "GEOSEARCH g BYPOLYGON 3 -1 -1 3 -1 -1 3 WITHDIST WITHCOORD",
    "GEOSEARCH g BYPOLYGON 3 -1 -1 -1 3 3 -1 WITHDIST COUNT 1 ANY",
    "GEOSEARCH g BYPOLYGON 4 0 0 2 0 2 2 0 2 BYPOLYGON 3 10 35 20 35 15 40 WITHDIST",
    "GEOSEARCH g BYPOLYGON 3 0 0 0 0 0 0",
    "GEOSEARCH g BYPOLYGON 3 0 80 120 85 -120 85",
    "GEOSEARCH g BYPOLYGON 4 -180 -85 180 -85 180 85 -180 85 WITHDIST",
    "GEORADIUS g 15 37 200 km",
    "GEORADIUS g 15 37 200 km WITHDIST WITHCOORD WITHHASH ASC COUNT 1",
    "GEORADIUS g 15 37 200 km COUNT 1 ANY",
    "GEORADIUS_RO g 15 37 200 km WITHDIST DESC",
    "GEORADIUSBYMEMBER g Palermo 200 km WITHDIST",
    "GEORADIUSBYMEMBER g Palermo 200 km COUNT 1 DESC",
    "GEORADIUSBYMEMBER_RO g Palermo 2000 km WITHCOORD",
    "GEOSEARCH nokey FROMLONLAT 15 37 BYRADIUS 200 km",
    "GEOSEARCH nokey FROMMEMBER x BYRADIUS 200 km",
    "GEOSEARCH nokey BYPOLYGON 3 0 0 1 1 2 0",
    "GEORADIUS nokey 15 37 200 km",
    "GEORADIUSBYMEMBER nokey x 200 km",
    "GEORADIUSBYMEMBER nokey x bad km",
    "GEORADIUSBYMEMBER_RO nokey x 200 yd",
];

const STORE: &[&str] = &[
    "GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 200 km",
    "ZRANGE d 0 -1 WITHSCORES",
    "OBJECT ENCODING d",
    "GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 200 km STOREDIST",
    "ZRANGE d 0 -1 WITHSCORES",
    "GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 200 km COUNT 1 storedist",
    "ZRANGE d 0 -1 WITHSCORES",
    "GEOSEARCHSTORE d g BYPOLYGON 3 -1 -1 -1 3 3 -1 STOREDIST",
    "ZRANGE d 0 -1 WITHSCORES",
    "GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 1 m",
    "EXISTS d",
    "GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 1 m",
    "SET d x",
    "GEOSEARCHSTORE d nokey FROMLONLAT 15 37 BYRADIUS 1 m",
    "EXISTS d",
    "SET d x",
    "GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 200 km",
    "TYPE d",
    "GEOSEARCHSTORE g g FROMLONLAT 15 37 BYRADIUS 200 km",
    "ZRANGE g 0 -1",
    "GEOADD g 12.758489 38.788135 edge1 17.241510 38.788135 edge2 1 1 one",
    "GEORADIUS g 15 37 200 km STORE d3",
    "ZRANGE d3 0 -1 WITHSCORES",
    "GEORADIUS g 15 37 200 km STOREDIST d4 COUNT 1",
    "ZRANGE d4 0 -1 WITHSCORES",
    "GEORADIUS g 15 37 200 mi STORE d5 STOREDIST d6",
    "EXISTS d5 d6",
    "ZRANGE d6 0 -1 WITHSCORES",
    "GEORADIUSBYMEMBER g Palermo 200 km STORE d7",
    "ZRANGE d7 0 -1 WITHSCORES",
    "GEORADIUSBYMEMBER g Palermo 200 km STOREDIST d7 DESC",
    "ZRANGE d7 0 -1 WITHSCORES",
    "GEORADIUS nokey 15 37 200 km STORE d7",
    "EXISTS d7",
    "GEORADIUSBYMEMBER nokey x 200 km STORE d3",
    "EXISTS d3",
    "GEORADIUS g 15 37 200 km STORE",
    "GEORADIUS g 15 37 200 km STOREDIST",
    "GEORADIUS_RO g 15 37 200 km STORE x",
    "GEORADIUSBYMEMBER_RO g Palermo 200 km STOREDIST x",
];

const SEARCH_ERRORS: &[&str] = &[
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS abc km",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS nan km",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS -1 km",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS -0 km",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 1 yd",
    "GEOSEARCH g FROMLONLAT 15 37 BYBOX a 1 km",
    "GEOSEARCH g FROMLONLAT 15 37 BYBOX 1 a km",
    "GEOSEARCH g FROMLONLAT 15 37 BYBOX a a yd",
    "GEOSEARCH g FROMLONLAT 15 37 BYBOX -1 1 km",
    "GEOSEARCH g FROMLONLAT 15 37 BYBOX 1 -1 yd",
    "GEOSEARCH g FROMLONLAT 15 37 BYBOX 1 1 yd",
    "GEOSEARCH g FROMLONLAT 15 37",
    "GEOSEARCH g BYRADIUS 1 km",
    "GEOSEARCH g FROMMEMBER nosuch BYRADIUS 1 km",
    "GEOSEARCH g FROMMEMBER nosuch BYRADIUS x km",
    "GEOSEARCH g BYRADIUS x km FROMMEMBER nosuch",
    "GEOSEARCH g FROMMEMBER a\r\nb\0c BYRADIUS 1 km",
    "GEOSEARCH g FROMMEMBER \"\" BYRADIUS 1 km",
    "GEOSEARCH g FROMMEMBER Palermo FROMLONLAT 1 1 BYRADIUS 1 km",
    "GEOSEARCH g FROMLONLAT 1 1 FROMMEMBER Palermo BYRADIUS 1 km",
    "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km BYBOX 1 1 km",
    "GEOSEARCH g FROMLONLAT 1 1 BYBOX 1 1 km BYRADIUS 1 km",
    "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km COUNT 0",
    "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km COUNT -1",
    "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km COUNT x",
    "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km COUNT 1.5",
    "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km COUNT 99999999999999999999",
    "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km ANY",
    "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km STORE x",
    "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km STOREDIST",
    "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km COUNT",
    "GEOSEARCH g FROMLONLAT 200 1 BYRADIUS 1 km",
    "GEOSEARCH g FROMLONLAT 1 -86 BYRADIUS 1 km",
    "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1",
    "GEOSEARCH g FROMLONLAT 1 BYRADIUS 1 km",
    "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS 1 km BOGUS",
    "GEOSEARCH g FROMLONLAT 1 1 WITHDIST WITHHASH",
    "GEOSEARCH g WITHDIST WITHHASH BYRADIUS 1 km",
    "GEOSEARCH g WITHDIST WITHHASH WITHCOORD ASC DESC",
    "geosearch g FROMLONLAT 1 1 WITHDIST WITHHASH",
    "GeoSearch g WITHDIST WITHHASH BYRADIUS 1 km",
    "geosearchstore d g FROMLONLAT 1 1 ASC DESC",
    "geosearchstore d g ASC DESC BYRADIUS 1 km",
    "GEOSEARCHSTORE d g FROMLONLAT 1 1 BYRADIUS 1 km WITHDIST",
    "GEOSEARCHSTORE d g WITHHASH ASC DESC",
    "GEOSEARCHSTORE d g FROMLONLAT 1 1 BYRADIUS 1 km STORE x",
    "GEOSEARCHSTORE d g BYRADIUS 1 km",
    "GEOSEARCHSTORE d g FROMLONLAT 1 1",
    "GEOSEARCH g FROMMEMBER Palermo BYPOLYGON 3 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON 3 0 0 1 1 2 0 FROMMEMBER Palermo",
    "GEOSEARCH g BYPOLYGON 3 0 0 1 1 200 0 FROMMEMBER Palermo",
    "GEOSEARCH g BYPOLYGON 3 0 0 1 1 2 0 FROMLONLAT 1 1",
    "GEOSEARCH g FROMLONLAT 1 1 BYPOLYGON 3 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON 3 0 0 1 1 2 0 BYBOX a 1 km",
    "GEOSEARCH g BYBOX 1 1 km BYPOLYGON 3 0 0 1 1 2 0",
    "GEOSEARCH g BYRADIUS 1 km BYPOLYGON 3 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON 3 0 0 1 1 2 0 0 0 0",
    "GEOSEARCH g BYPOLYGON 3 0 0 1 1 2 0 km",
    "GEOSEARCH g WITHDIST WITHHASH WITHCOORD ASC BYPOLYGON",
    "GEOSEARCH g BYPOLYGON 3 0 0 1 1",
    "GEOSEARCH g BYPOLYGON 3 0 0 1 1 2",
    "GEOSEARCH g BYPOLYGON 2 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON 4 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON 4 0 0 1 1 2 0 1 ASC",
    "GEOSEARCH g BYPOLYGON -1 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON x 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON 3.0 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON +3 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON 03 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON 1000000000 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON 2147483647 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON 2147483648 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON -2147483648 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON -2147483649 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON 9223372036854775807 0 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON 3 a 0 1 1 2 0",
    "GEOSEARCH g BYPOLYGON 3 0 90 1 1 2 0",
    "GEOSEARCH g BYPOLYGON 3 200 0 1 x 2 0",
    "GEOSEARCH g BYPOLYGON 3 0 0 0 0 0 0 COUNT 0",
    "GEOSEARCH g BYPOLYGON 3 0 0 0 0 0 0 ANY",
    "GEOSEARCHSTORE d g BYPOLYGON 3 0 0 0 0 0 0 WITHDIST",
    "geosearchstore d g BYPOLYGON 3 0 0 1 1 2",
    "GEORADIUS g 15 37 200 km WITHDIST STORE x",
    "GEORADIUS g 15 37 200 km STOREDIST x WITHCOORD",
    "GEORADIUS g 15 37 200 km FROMLONLAT 1 1",
    "GEORADIUS g 15 37 200 km BYRADIUS 1 km",
    "GEORADIUS g 15 37 200 km BYPOLYGON 3 0 0 1 1 2 0",
    "GEORADIUS g 200 37 200 km",
    "GEORADIUS g 15 37 x km",
    "GEORADIUS g 15 37 -5 km",
    "GEORADIUS g 15 37 1 x",
    "GEORADIUS g 15 37 200 km BOGUS",
    "GEORADIUS nokey 200 37 200 km",
    "GEORADIUS_RO g 15 37 200 km STORE",
    "GEORADIUSBYMEMBER g nosuch 200 km",
    "GEORADIUSBYMEMBER g Palermo x km",
    "GEORADIUSBYMEMBER g Palermo 1 x",
    "GEORADIUSBYMEMBER g Palermo 1 km BOGUS",
    "GEORADIUSBYMEMBER nokey nosuch 200 km WITHDIST STORE x",
    "GEORADIUSBYMEMBER nokey nosuch 1 km COUNT 0",
    "GEORADIUSBYMEMBER nokey nosuch 1 km ANY",
    "GEORADIUSBYMEMBER nokey nosuch 1 km BOGUS",
    "SET str x",
    "GEOSEARCH str BYPOLYGON 3 x",
    "GEOSEARCH str FROMLONLAT 1 1 BYRADIUS 1 km",
    "GEOSEARCH str FROMLONLAT 1000 1 BYRADIUS 1 km",
    "GEOSEARCHSTORE d str FROMLONLAT 1 1 BYRADIUS 1 km",
    "GEORADIUS str 1000 1 1 km",
    "GEORADIUSBYMEMBER str a 1 km",
    "GEOSEARCH",
    "GEOSEARCH g FROMLONLAT 1 1 BYRADIUS",
    "GEOSEARCHSTORE d g FROMLONLAT 1 1 km",
    "GEORADIUS g 1 1 1",
    "GEORADIUSBYMEMBER g a 1",
];

#[test]
fn searches_match_valkey() {
    same_everywhere(&[SEARCH_SETUP, SEARCH].concat());
}

#[test]
fn stores_match_valkey() {
    same_everywhere(&[SEARCH_SETUP, STORE].concat());
}

#[test]
fn search_errors_match_valkey() {
    same_everywhere(&[SEARCH_SETUP, SEARCH_ERRORS].concat());
}

// ----- seeded random points ----------------------------------------------------------------

/// A small seeded generator (xorshift64*), so that a failure replays.
struct Rand(u64);

impl Rand {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// A coordinate near `center`, wrapped around the antimeridian, kept off the poles.
fn near(r: &mut Rand, center: (f64, f64), spread: f64) -> (f64, f64) {
    let mut lon = center.0 + r.range(-spread, spread);
    if lon > 180.0 {
        lon -= 360.0;
    }
    if lon < -180.0 {
        lon += 360.0;
    }
    let lat = (center.1 + r.range(-spread, spread)).clamp(-85.05, 85.05);
    (lon, lat)
}

/// A reply with every number that is not a member (doubles, and bulk strings that read as
/// numbers) rewritten to the double it stands for (see the module comment).
fn as_numbers(v: Val) -> Val {
    let canonical = |s: &str| s.parse::<f64>().ok().map(|d| format!("{d:e}"));
    match v {
        Val::Double(s) => Val::Double(canonical(&s).unwrap_or(s)),
        Val::Bulk(b) => {
            let text = String::from_utf8_lossy(&b).into_owned();
            match canonical(&text) {
                Some(c) => Val::Bulk(c.into_bytes()),
                None => Val::Bulk(b),
            }
        }
        Val::Array(items) => Val::Array(items.into_iter().map(as_numbers).collect()),
        other => other,
    }
}

/// A session of random indexes and searches: points around a center near a pole, on the
/// antimeridian or anywhere, with repeated points (ties); searches by radius, box, polygon
/// and member with random options, through every command form; stored results read back.
fn random_session(proto: u8, args: &[&str], seed: u64) {
    let mut p = Pair::start(proto, args);
    let mut r = Rand(seed);
    for _ in 0..12 {
        p.both(&["FLUSHALL"]);
        let center = match r.below(3) {
            0 => (r.range(-180.0, 180.0), *r.pick(&[1.0, -1.0]) * r.range(78.0, 85.0)),
            1 => (*r.pick(&[180.0, -180.0, 179.95, -179.95]), r.range(-80.0, 80.0)),
            _ => (r.range(-180.0, 180.0), r.range(-85.0, 85.0)),
        };
        let spread = 10f64.powf(r.range(-3.0, 1.0));
        let mut points: Vec<(f64, f64)> = Vec::new();
        let mut add = vec!["GEOADD".to_string(), "k".to_string()];
        for i in 0..1 + r.below(250) {
            let pt = if !points.is_empty() && r.chance(0.2) {
                *r.pick(&points)
            } else {
                near(&mut r, center, spread)
            };
            points.push(pt);
            add.extend([format!("{:?}", pt.0), format!("{:?}", pt.1), format!("m{i}")]);
        }
        same(&mut p, &add);
        for _ in 0..15 {
            random_search(&mut p, &mut r, center, spread, points.len());
        }
    }
}

/// One random search, in its GEOSEARCH, GEORADIUS* and GEOSEARCHSTORE forms.
fn random_search(p: &mut Pair, r: &mut Rand, center: (f64, f64), spread: f64, n: usize) {
    let (lon, lat) = near(r, center, spread);
    let (lon, lat) = (format!("{lon:?}"), format!("{lat:?}"));
    let (unit, to_m) = *r.pick(&[("m", 1.0), ("km", 1000.0), ("ft", 0.3048), ("mi", 1609.34)]);
    let size = spread * 111_000.0 * 10f64.powf(r.range(-1.5, 0.5)) / to_m;
    let member = format!("m{}", r.below(n));
    let mut opts: Vec<String> = Vec::new();
    for o in ["WITHDIST", "WITHHASH", "WITHCOORD"] {
        if r.chance(0.4) {
            opts.push(o.into());
        }
    }
    if r.chance(0.5) {
        opts.push(r.pick(&["ASC", "DESC"]).to_string());
    }
    if r.chance(0.5) {
        opts.extend(["COUNT".to_string(), (1 + r.below(20)).to_string()]);
        if r.chance(0.4) {
            opts.push("ANY".into());
        }
    }
    let s = |v: &[&str]| v.iter().map(|w| w.to_string()).collect::<Vec<String>>();
    let (search, radius_form): (Vec<String>, Option<Vec<String>>) = match r.below(4) {
        0 => (
            s(&["FROMLONLAT", &lon, &lat, "BYRADIUS", &format!("{size:?}"), unit]),
            Some(s(&["GEORADIUS", "k", &lon, &lat, &format!("{size:?}"), unit])),
        ),
        1 => (
            s(&["FROMMEMBER", &member, "BYRADIUS", &format!("{size:?}"), unit]),
            Some(s(&["GEORADIUSBYMEMBER", "k", &member, &format!("{size:?}"), unit])),
        ),
        2 => {
            let width = format!("{:?}", size * r.range(0.2, 3.0));
            (s(&["FROMLONLAT", &lon, &lat, "BYBOX", &width, &format!("{size:?}"), unit]), None)
        }
        _ => {
            let corners = 3 + r.below(5);
            let mut v = s(&["BYPOLYGON", &corners.to_string()]);
            let reach = size * to_m / 111_000.0;
            let center: (f64, f64) = (lon.parse().unwrap(), lat.parse().unwrap());
            for k in 0..corners {
                let angle = std::f64::consts::TAU * (k as f64 + r.unit()) / corners as f64;
                let d = reach * r.range(0.3, 1.5);
                let x = (center.0 + angle.cos() * d).clamp(-180.0, 180.0);
                let y = (center.1 + angle.sin() * d).clamp(-85.05, 85.05);
                v.extend([format!("{x:?}"), format!("{y:?}")]);
            }
            (v, None)
        }
    };
    let mut cmd = s(&["GEOSEARCH", "k"]);
    cmd.extend(search.iter().cloned());
    cmd.extend(opts.iter().cloned());
    same(p, &cmd);
    if let Some(mut radius) = radius_form {
        radius.extend(opts.iter().cloned());
        same(p, &radius);
        radius[0].push_str("_RO");
        same(p, &radius);
    }
    let mut store = s(&["GEOSEARCHSTORE", "dst", "k"]);
    store.extend(search);
    store.extend(opts.into_iter().filter(|o| !o.starts_with("WITH")));
    if r.chance(0.5) {
        store.push("STOREDIST".into());
    }
    same(p, &store);
    let (ours, theirs) = p.both(&["ZRANGE", "dst", "0", "-1", "WITHSCORES"]);
    let (ours, theirs) = (parse_val(&mut &ours[..]), parse_val(&mut &theirs[..]));
    p.assert_equal("ZRANGE dst 0 -1 WITHSCORES", as_numbers(ours), as_numbers(theirs));
    same(p, &s(&["OBJECT", "ENCODING", "dst"]));
}

fn same(p: &mut Pair, args: &[String]) {
    p.same(args);
}

#[test]
fn random_points_near_the_poles_and_the_antimeridian_match_valkey() {
    for (proto, seed) in [(2, 19), (3, 91)] {
        random_session(proto, &[], seed);
        random_session(proto, &["--zset-max-listpack-entries", "0"], seed + 1);
    }
}

/// Many members at a few points: equal distances, ordered by Valkey's partial quicksort
/// under COUNT (not stable) and by a stable sort without it.
#[test]
fn ties_under_count_come_in_valkeys_order() {
    let mut add = vec!["GEOADD".to_string(), "t".to_string()];
    for i in 0..240 {
        let (lon, lat) = [(10.0, 10.0), (10.001, 10.0), (10.0, 10.002), (9.999, 9.999)][i % 4];
        add.extend([lon.to_string(), lat.to_string(), format!("p{i:03}")]);
    }
    for proto in [2, 3] {
        let mut p = Pair::start(proto, &[]);
        p.same(&add);
        for count in [1, 2, 5, 6, 7, 8, 40, 41, 59, 60, 61, 100, 239, 240, 500] {
            for order in ["ASC", "DESC"] {
                let c = count.to_string();
                p.same_line(&format!(
                    "GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 1 km {order} COUNT {c}"
                ));
                p.same_line(&format!("GEORADIUS t 10 10 1 km COUNT {c} {order} WITHDIST"));
            }
            p.same_line(&format!("GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 1 km COUNT {count} ANY"));
        }
        p.same_line("GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 1 km ASC");
        p.same_line("GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 1 km DESC");
        p.same_line("GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 1 km");
    }
}

// ----- events, propagation, key specs, stats -----------------------------------------------

/// What a `PSUBSCRIBE __key*__:*` connection received up to now: (channel, message) pairs.
fn drain_events(sub: &mut Client) -> Vec<(String, String)> {
    sub.send(&[b"PING"]);
    let mut got = Vec::new();
    loop {
        let msg = sub.read().as_array();
        if msg[0].as_str() == "pong" {
            return got;
        }
        got.push((msg[2].as_str(), msg[3].as_str()));
    }
}

const WRITES: &[&str] = &[
    "GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania",
    "GEOADD g CH NX 13.361389 38.115556 Palermo 1 1 x",
    "GEOADD g xx ch 2 2 x",
    "GEOADD g XX 3 3 nosuch",
    "GEOADD g 2 2 x",
    "GEOADD g CH XX NX 3 3 nosuch",
    "GEOADD g 500 0 bad",
    "GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 200 km",
    "GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 200 km STOREDIST",
    "GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 1 m",
    "GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 1 m",
    "GEOSEARCHSTORE d2 nokey FROMLONLAT 15 37 BYRADIUS 1 m",
    "GEOSEARCHSTORE d2 g BYPOLYGON 3 12 37 16 37 14 40",
    "GEORADIUS g 15 37 200 km STORE d3",
    "GEORADIUS g 15 37 200 km STOREDIST d4 COUNT 1",
    "GEORADIUS g 15 37 200 km",
    "GEORADIUS nokey 15 37 200 km STORE d3",
    "GEORADIUSBYMEMBER g Palermo 200 km STORE d5",
    "SET s x",
    "GEORADIUSBYMEMBER g Palermo 200 km STORE s",
    "GEOSEARCHSTORE s g FROMLONLAT 15 37 BYRADIUS 1 m",
    "GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 200 km",
    "GEORADIUS_RO g 15 37 200 km",
    "GEOADD g 1 1 x",
    "SET end 1",
];

#[test]
fn events_propagation_and_stats_match_valkey() {
    let args =
        ["--notify-keyspace-events", "KEA", "--appendonly", "yes", "--appendfsync", "always"];
    let servers = [start(&args), start_valkey(&args)];
    let mut results = Vec::new();
    for s in &servers {
        let mut c = Client::connect(s.port);
        let mut sub = Client::connect(s.port);
        sub.send(&[b"PSUBSCRIBE", b"__key*__:*"]);
        sub.read();
        c.cmd(&["CONFIG", "RESETSTAT"]);
        let replies: Vec<Val> = WRITES
            .iter()
            .map(|line| {
                let w = words(line);
                c.cmd_b(&w)
            })
            .collect();
        let events = drain_events(&mut sub);
        // The AOF holds the last write once `SET end` is in it.
        let mut aof = Vec::new();
        for _ in 0..500 {
            aof = aof_commands(s);
            if aof.last().is_some_and(|c| c[0] == "SET" && c[1] == "end") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let mut stats: Vec<String> = c
            .cmd(&["INFO", "commandstats"])
            .as_str()
            .lines()
            .filter(|l| l.starts_with("cmdstat_geo"))
            .map(|l| {
                // Times differ; calls, rejections and failures must not.
                let (name, fields) = l.split_once(':').unwrap();
                let kept: Vec<&str> =
                    fields.split(',').filter(|f| !f.starts_with("usec")).collect();
                format!("{name}:{}", kept.join(","))
            })
            .collect();
        stats.sort();
        let dirty = c.cmd(&["INFO", "persistence"]).as_str();
        let changes = dirty
            .lines()
            .find(|l| l.starts_with("rdb_changes_since_last_save"))
            .map(str::to_string);
        results.push((replies, events, aof, stats, changes));
    }
    let (ours, theirs) = (&results[0], &results[1]);
    assert_eq!(ours.0, theirs.0, "replies (left: ferrokey, right: valkey 9.1)");
    assert_eq!(ours.1, theirs.1, "keyspace events");
    assert_eq!(ours.2, theirs.2, "AOF commands");
    assert!(ours.2.iter().any(|c| c[0] == "ZADD"), "GEOADD is logged as ZADD");
    assert_eq!(ours.3, theirs.3, "commandstats");
    assert_eq!(ours.4, theirs.4, "changes since the last save");
}

#[test]
fn getkeys_and_command_info_match_valkey() {
    for proto in [2, 3] {
        let mut p = Pair::start(proto, &[]);
        p.same_lines(&[
            "COMMAND GETKEYS GEOADD k 1 1 m",
            "COMMAND GETKEYS GEODIST k a b",
            "COMMAND GETKEYS GEOSEARCH k FROMLONLAT 1 1 BYRADIUS 1 km",
            "COMMAND GETKEYS GEOSEARCHSTORE d k FROMLONLAT 1 1 BYRADIUS 1 km",
            "COMMAND GETKEYS GEORADIUS k 1 1 1 km",
            "COMMAND GETKEYS GEORADIUS k 1 1 1 km STORE d",
            "COMMAND GETKEYS GEORADIUS k 1 1 1 km WITHDIST STOREDIST d",
            "COMMAND GETKEYS GEORADIUS k 1 1 1 km COUNT 3 STORE",
            "COMMAND GETKEYS GEORADIUS_RO k 1 1 1 km STORE d",
            "COMMAND GETKEYS GEORADIUSBYMEMBER k m 1 km STORE d",
            "COMMAND GETKEYS GEORADIUSBYMEMBER k m 1 km ASC STOREDIST d",
            "COMMAND GETKEYS GEORADIUSBYMEMBER_RO k m 1 km",
            "COMMAND GETKEYSANDFLAGS GEOSEARCHSTORE d k FROMLONLAT 1 1 BYRADIUS 1 km",
            "COMMAND GETKEYSANDFLAGS GEOADD k 1 1 m",
            "COMMAND GETKEYSANDFLAGS GEORADIUS k 1 1 1 km",
            // Both destinations given: the last one is the key (and has no variable flags).
            "COMMAND GETKEYS GEORADIUS k 1 1 1 km STORE d STOREDIST d2",
            "COMMAND GETKEYS GEORADIUS k 1 1 1 km STOREDIST d2 STORE d",
            "COMMAND GETKEYS GEORADIUS k 1 1 1 STORE STORE d",
            "COMMAND GETKEYSANDFLAGS GEORADIUS k 1 1 1 km STORE d",
            "COMMAND GETKEYSANDFLAGS GEORADIUSBYMEMBER k m 1 km STOREDIST d",
            "COMMAND INFO geoadd geodist geohash geopos geosearch geosearchstore",
            "COMMAND INFO georadius georadius_ro georadiusbymember georadiusbymember_ro",
        ]);
    }
}

/// Geo sets (small and large encodings) and a bitmap written by one server are read the same
/// by the other, as DUMP payloads and in RDB files, both ways.
#[test]
fn geo_sets_and_bitmaps_move_between_ferrokey_and_valkey() {
    let ours = start(&[]);
    let theirs = start_valkey(&[]);
    let mut a = Client::connect(ours.port);
    let mut b = Client::connect(theirs.port);
    let mut r = Rand(19);
    for (c, side) in [(&mut a, "ours"), (&mut b, "theirs")] {
        for (name, n) in [("small", 20), ("large", 400)] {
            let key = format!("{side}:{name}");
            let mut add = vec!["GEOADD".to_string(), key];
            for i in 0..n {
                let (lon, lat) = near(&mut r, (179.9, 84.0), 2.0);
                add.extend([format!("{lon:?}"), format!("{lat:?}"), format!("m{i}")]);
            }
            let add: Vec<&str> = add.iter().map(String::as_str).collect();
            assert_eq!(c.cmd(&add), Val::Int(n));
        }
        let bits = format!("{side}:bits");
        c.cmd(&["SETBIT", &bits, "100003", "1"]);
        c.cmd(&["BITFIELD", &bits, "SET", "i13", "#7", "-1234"]);
    }
    let keys =
        ["ours:small", "ours:large", "ours:bits", "theirs:small", "theirs:large", "theirs:bits"];
    // What a reader sees of each key: encoding, members with positions, a search, bits.
    let view = |c: &mut Client, key: &str| -> Vec<Val> {
        if key.contains("bits") {
            return vec![
                c.cmd(&["GET", key]),
                c.cmd(&["BITCOUNT", key]),
                c.cmd(&["BITFIELD_RO", key, "GET", "i13", "#7"]),
            ];
        }
        let search = ["FROMLONLAT", "179.9", "84", "BYRADIUS", "150", "km", "WITHCOORD", "ASC"];
        vec![
            c.cmd(&["OBJECT", "ENCODING", key]),
            c.cmd(&["ZRANGE", key, "0", "-1", "WITHSCORES"]),
            c.cmd(&["GEOPOS", key, "m0", "m7", "m19"]),
            c.cmd(&[&["GEOSEARCH", key][..], &search].concat()),
        ]
    };
    // As DUMP payloads, both ways.
    for key in keys {
        let (from, to) = if key.starts_with("ours") { (&mut a, &mut b) } else { (&mut b, &mut a) };
        let Val::Bulk(payload) = from.cmd(&["DUMP", key]) else { panic!("DUMP {key}") };
        let copy = format!("{key}:restored");
        assert_eq!(to.cmd_b(&[b"RESTORE", copy.as_bytes(), b"0", &payload]), Val::ok());
        assert_eq!(view(to, &copy), view(from, key), "{key} restored");
    }
    // In RDB files, both ways: each server saves, the other starts from that file.
    for (saver, saver_dir, ferrokey_loads) in
        [(&mut a, &ours.dir, false), (&mut b, &theirs.dir, true)]
    {
        assert_eq!(saver.cmd(&["SAVE"]), Val::ok());
        let rdb = std::fs::read(saver_dir.join("dump.rdb")).expect("dump.rdb");
        let dir = crate::common::unique_dir("geo-rdb");
        std::fs::write(dir.join("dump.rdb"), rdb).expect("write dump.rdb");
        let args = ["--dir", dir.to_str().expect("utf-8")];
        let loaded = if ferrokey_loads { start(&args) } else { start_valkey(&args) };
        let mut l = Client::connect(loaded.port);
        for key in keys {
            assert_eq!(view(&mut l, key), view(saver, key), "{key} loaded from an RDB file");
        }
        drop(loaded);
        let _ = std::fs::remove_dir_all(dir);
    }
}
