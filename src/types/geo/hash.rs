//! The geohash: a cell of a recursive 2 x 2 split of the longitude/latitude rectangle, as
//! Valkey computes it. Pure integer and floating point arithmetic, nothing else.
//!
//! ```text
//!  step 1:   lat  +-----+-----+      bits = ... lon1 lat1 lon0 lat0   (one pair per step)
//!            hi   | 0,1 | 1,1 |      lat bits in the even positions, lon bits in the odd
//!                 +-----+-----+      ones: the most significant pair is the first split
//!            lo   | 0,0 | 1,0 |
//!                 +-----+-----+      a score is the 26-step hash: 52 bits, exact in a double
//!                   lo    hi  lon
//! ```
//!
//! The latitude range is the Mercator one (EPSG:900913), so the poles cannot be indexed;
//! GEOHASH re-encodes with -90..90 to print standard geohash strings.

/// The steps of a member's score: 26 pairs, 52 bits.
pub const STEP_MAX: u8 = 26;
pub const LON_MIN: f64 = -180.0;
pub const LON_MAX: f64 = 180.0;
pub const LAT_MIN: f64 = -85.05112878;
pub const LAT_MAX: f64 = 85.05112878;

/// A closed interval of one coordinate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub min: f64,
    pub max: f64,
}

/// The ranges a score encodes.
pub const LON_RANGE: Range = Range { min: LON_MIN, max: LON_MAX };
pub const LAT_RANGE: Range = Range { min: LAT_MIN, max: LAT_MAX };

/// A cell: `step` pairs of bits, the first split in the highest pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GeoHash {
    pub bits: u64,
    pub step: u8,
}

/// The rectangle a cell covers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    pub lon: Range,
    pub lat: Range,
}

/// Spreads the 32 bits of `lat` over the even bit positions and those of `lon` over the odd
/// ones (the "binary magic numbers" interleave).
fn interleave(lat: u32, lon: u32) -> u64 {
    fn spread(v: u32) -> u64 {
        let mut v = u64::from(v);
        v = (v | (v << 16)) & 0x0000_FFFF_0000_FFFF;
        v = (v | (v << 8)) & 0x00FF_00FF_00FF_00FF;
        v = (v | (v << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
        v = (v | (v << 2)) & 0x3333_3333_3333_3333;
        (v | (v << 1)) & 0x5555_5555_5555_5555
    }
    spread(lat) | (spread(lon) << 1)
}

/// The inverse of [`interleave`]: (lat, lon).
fn deinterleave(bits: u64) -> (u32, u32) {
    fn squash(v: u64) -> u32 {
        let mut v = v & 0x5555_5555_5555_5555;
        v = (v | (v >> 1)) & 0x3333_3333_3333_3333;
        v = (v | (v >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
        v = (v | (v >> 4)) & 0x00FF_00FF_00FF_00FF;
        v = (v | (v >> 8)) & 0x0000_FFFF_0000_FFFF;
        v = (v | (v >> 16)) & 0x0000_0000_FFFF_FFFF;
        v as u32
    }
    (squash(bits), squash(bits >> 1))
}

/// Whether a point is inside the indexable (Mercator) limits.
pub fn indexable(lon: f64, lat: f64) -> bool {
    (LON_MIN..=LON_MAX).contains(&lon) && (LAT_MIN..=LAT_MAX).contains(&lat)
}

/// The cell of `step` steps (1..=32) holding the point, in the given ranges; None outside
/// the Mercator limits (whatever the ranges) or outside the ranges.
pub fn encode_in(
    lon_range: Range,
    lat_range: Range,
    lon: f64,
    lat: f64,
    step: u8,
) -> Option<GeoHash> {
    assert!((1..=32).contains(&step), "geohash step {step}");
    if !indexable(lon, lat) {
        return None;
    }
    if lat < lat_range.min || lat > lat_range.max || lon < lon_range.min || lon > lon_range.max {
        return None;
    }
    let cells = (1u64 << step) as f64;
    let lat_offset = (lat - lat_range.min) / (lat_range.max - lat_range.min) * cells;
    let lon_offset = (lon - lon_range.min) / (lon_range.max - lon_range.min) * cells;
    // At the upper edge an offset is `cells` itself: one bit above the step's, as in Valkey.
    Some(GeoHash { bits: interleave(lat_offset as u32, lon_offset as u32), step })
}

/// [`encode_in`] with the score ranges.
pub fn encode(lon: f64, lat: f64, step: u8) -> Option<GeoHash> {
    encode_in(LON_RANGE, LAT_RANGE, lon, lat, step)
}

/// The rectangle of a cell, in the given ranges.
pub fn decode_in(lon_range: Range, lat_range: Range, hash: GeoHash) -> Area {
    let (ilat, ilon) = deinterleave(hash.bits);
    let cells = (1u64 << hash.step) as f64;
    let lat_scale = lat_range.max - lat_range.min;
    let lon_scale = lon_range.max - lon_range.min;
    // `+ 1` wraps in 32 bits as Valkey's `uint32_t` does (only garbage scores reach it).
    let edge = |i: u32, min: f64, scale: f64| min + (f64::from(i) / cells) * scale;
    Area {
        lat: Range {
            min: edge(ilat, lat_range.min, lat_scale),
            max: edge(ilat.wrapping_add(1), lat_range.min, lat_scale),
        },
        lon: Range {
            min: edge(ilon, lon_range.min, lon_scale),
            max: edge(ilon.wrapping_add(1), lon_range.min, lon_scale),
        },
    }
}

/// [`decode_in`] with the score ranges.
pub fn decode(hash: GeoHash) -> Area {
    decode_in(LON_RANGE, LAT_RANGE, hash)
}

impl Area {
    /// The middle of the cell, clamped to the Mercator limits: (lon, lat).
    pub fn center(&self) -> (f64, f64) {
        let lon = ((self.lon.min + self.lon.max) / 2.0).clamp(LON_MIN, LON_MAX);
        let lat = ((self.lat.min + self.lat.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
        (lon, lat)
    }
}

/// A sorted set score as the 52-bit hash it stands for: C's `(uint64_t)score` as gcc
/// compiles it on x86-64, so that scores no GEOADD wrote (negative, fractional, huge)
/// decode to the same place as in Valkey: truncation, negative values wrapping to two's
/// complement, and x86's "integer indefinite" (2^63) for values out of the signed range,
/// which turns into 0 at and above 2^64.
pub fn score_bits(score: f64) -> u64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    // `cvttsd2si`: truncation, or i64::MIN when out of range (NaN included).
    let cvtt =
        |x: f64| if x.is_nan() || !(-TWO_63..TWO_63).contains(&x) { i64::MIN } else { x as i64 };
    if score >= TWO_63 {
        (cvtt(score - TWO_63) as u64) ^ (1 << 63)
    } else {
        cvtt(score) as u64
    }
}

/// The point a member's score stands for: the middle of its 26-step cell, (lon, lat).
pub fn decode_score(score: f64) -> (f64, f64) {
    decode(GeoHash { bits: score_bits(score), step: STEP_MAX }).center()
}

/// The score GEOADD gives a point (inside the Mercator limits).
pub fn score_of(lon: f64, lat: f64) -> Option<u64> {
    encode(lon, lat, STEP_MAX).map(align52)
}

/// The hash's bits moved to the top of 52 (the score of the cell's lowest corner).
pub fn align52(hash: GeoHash) -> u64 {
    hash.bits << (52 - 2 * u32::from(hash.step))
}

/// The scores of the members inside a cell: `min..max`, `max` excluded.
pub fn score_span(hash: GeoHash) -> (u64, u64) {
    let next = GeoHash { bits: hash.bits + 1, step: hash.step };
    (align52(hash), align52(next))
}

/// The cell `dx` columns east (1) or west (-1) and `dy` rows north or south, wrapping
/// around, by adding to the interleaved bits of one coordinate only.
pub fn moved(hash: GeoHash, dx: i8, dy: i8) -> GeoHash {
    const ODD: u64 = 0xAAAA_AAAA_AAAA_AAAA;
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let shift = 64 - 2 * u32::from(hash.step);
    // Adding through the other coordinate's bits: fill them with ones so that carries
    // pass over them (or, for a subtraction, borrows), then mask them off again.
    let step_bits = |v: u64, own: u64, other: u64, d: i8| {
        let filler = other >> shift;
        let moved =
            if d > 0 { v.wrapping_add(filler + 1) } else { (v | filler).wrapping_sub(filler + 1) };
        moved & (own >> shift)
    };
    let mut lon = hash.bits & ODD;
    let mut lat = hash.bits & EVEN;
    if dx != 0 {
        lon = step_bits(lon, ODD, EVEN, dx);
    }
    if dy != 0 {
        lat = step_bits(lat, EVEN, ODD, dy);
    }
    GeoHash { bits: lon | lat, step: hash.step }
}

/// The 11-character standard geohash (base 32, -90..90 latitudes) of a score's point.
pub fn geohash_string(score: f64) -> [u8; 11] {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let (lon, lat) = decode_score(score);
    let standard = Range { min: -90.0, max: 90.0 };
    let bits = encode_in(LON_RANGE, standard, lon, lat, STEP_MAX).map_or(0, |h| h.bits);
    let mut out = [b'0'; 11];
    // 52 bits make 10 characters and two bits; the 11th is '0', as Valkey prints it.
    for (i, c) in out.iter_mut().take(10).enumerate() {
        let idx = (bits >> (52 - (i + 1) * 5)) & 0x1f;
        *c = ALPHABET[idx as usize];
    }
    out
}

// The literals are Valkey's replies, digit for digit.
#[cfg(test)]
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;
    use crate::util::rng::Rng;

    #[test]
    fn interleave_round_trips_and_puts_latitude_in_even_bits() {
        assert_eq!(interleave(1, 0), 1);
        assert_eq!(interleave(0, 1), 2);
        assert_eq!(interleave(u32::MAX, 0), 0x5555_5555_5555_5555);
        let mut rng = Rng::new(19);
        for _ in 0..1000 {
            let (a, b) = (rng.next_u64() as u32, rng.next_u64() as u32);
            assert_eq!(deinterleave(interleave(a, b)), (a, b));
        }
    }

    #[test]
    fn scores_match_valkey() {
        // GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania
        assert_eq!(score_of(13.361389, 38.115556), Some(3479099956230698));
        assert_eq!(score_of(15.087269, 37.502669), Some(3479447370796909));
        assert_eq!(score_of(0.0, 0.0), Some(3377699720527872));
        assert_eq!(score_of(-180.0, LAT_MIN), Some(0));
        // The upper corner carries past 52 bits, as in Valkey.
        assert_eq!(score_of(180.0, LAT_MAX), Some(13510798882111488));
        assert_eq!(score_of(180.000001, 0.0), None);
        assert_eq!(score_of(0.0, 85.06), None);
    }

    #[test]
    fn decoding_gives_the_cell_middle() {
        let (lon, lat) = decode_score(3479099956230698.0);
        assert_eq!(format!("{lon:.17} {lat:.17}"), "13.36138933897018433 38.11555639549629859");
        assert_eq!(decode_score(13510798882111488.0), (180.0, 85.0511287799999991));
        let (lon, lat) = decode_score(0.0);
        assert_eq!(format!("{lon:.17} {lat:.17}"), "-179.99999731779098511 -85.05112751263942528");
    }

    #[test]
    fn odd_scores_decode_as_valkey_casts_them() {
        assert_eq!(score_bits(0.5), 0);
        assert_eq!(score_bits(-1.0), u64::MAX);
        assert_eq!(score_bits(f64::INFINITY), 0);
        assert_eq!(score_bits(1e300), 0);
        assert_eq!(score_bits(f64::NEG_INFINITY), 1 << 63);
        assert_eq!(score_bits(-1e300), 1 << 63);
        assert_eq!(score_bits(9223372036854775808.0), 1 << 63);
        assert_eq!(score_bits(-9223372036854775808.0), 1 << 63);
        assert_eq!(decode_score(-1.0), (180.0, LAT_MAX));
        assert_eq!(decode_score(f64::NEG_INFINITY).0, 180.0);
    }

    #[test]
    fn geohash_strings_match_valkey() {
        let s = |score: f64| String::from_utf8(geohash_string(score).to_vec()).unwrap();
        assert_eq!(s(3479099956230698.0), "sqc8b49rny0");
        assert_eq!(s(3377699720527872.0), "s0000000000");
        assert_eq!(s(0.0), "00bh0hbj200");
        assert_eq!(s(13510798882111488.0), "bp05b5048p0");
        assert_eq!(s(4503599627370495.0), "zzpgzgpfxz0");
    }

    /// Moving a cell agrees with re-encoding the point one cell away, and wraps around.
    #[test]
    fn neighbours_are_the_adjacent_cells() {
        let mut rng = Rng::new(7);
        for _ in 0..2000 {
            let step = 1 + rng.below(26) as u8;
            let lon = rng.next_f64() * 360.0 - 180.0;
            let lat = rng.next_f64() * (LAT_MAX - LAT_MIN) + LAT_MIN;
            let h = encode(lon, lat, step).unwrap();
            let (ilat, ilon) = deinterleave(h.bits);
            let n = 1u64 << step;
            for (dx, dy) in
                [(1i8, 0i8), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)]
            {
                let m = moved(h, dx, dy);
                let (mlat, mlon) = deinterleave(m.bits);
                let wrap =
                    |i: u32, d: i8| ((i64::from(i) + i64::from(d)).rem_euclid(n as i64)) as u32;
                assert_eq!((mlat, mlon), (wrap(ilat, dy), wrap(ilon, dx)), "step {step}");
                assert_eq!(m.step, step);
            }
        }
    }

    #[test]
    fn score_spans_cover_the_cell() {
        let h = encode(13.361389, 38.115556, 10).unwrap();
        let (min, max) = score_span(h);
        assert!(min <= 3479099956230698 && 3479099956230698 < max);
        assert_eq!(max - min, 1 << 32);
    }
}
