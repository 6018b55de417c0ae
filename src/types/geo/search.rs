//! Finding the members of a sorted set inside a search's shape: each cell of
//! [`Query::cells`] is a range of scores, read in score order; every member in it is decoded
//! and kept when the shape holds it. Then the ordering by distance that the commands ask
//! for.
//!
//! Members are copied into one arena (`Found::names`) rather than one allocation each: a
//! search over a large set touches many members and keeps only a few.

use std::cmp::Ordering;
use std::ops::Range;

use super::area::Query;
use super::hash::{decode_score, score_span};
use super::partial_sort::partial_sort;
use crate::types::zset::{ScoreRange, ZSetObj};

/// One member found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Distance to the search's center, in meters.
    pub dist_m: f64,
    /// The member's score (its 52-bit hash).
    pub score: f64,
    pub lon: f64,
    pub lat: f64,
    /// Where the member's bytes are in `Found::names`.
    name_at: u32,
    name_len: u32,
}

/// The members a search found, in the order it found them until sorted.
#[derive(Debug, Default)]
pub struct Found {
    names: Vec<u8>,
    pub points: Vec<Point>,
}

/// The order of the results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// As found: cell by cell, by score within a cell.
    Unsorted,
    /// Nearest first.
    Asc,
    /// Farthest first.
    Desc,
}

impl Found {
    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The member of a point.
    pub fn name(&self, p: &Point) -> &[u8] {
        let at = p.name_at as usize;
        &self.names[at..at + p.name_len as usize]
    }

    fn push(&mut self, name: &[u8], score: f64, (lon, lat): (f64, f64), dist_m: f64) {
        let name_at = u32::try_from(self.names.len()).expect("names arena under 4 GiB");
        let name_len = u32::try_from(name.len()).expect("member under 4 GiB");
        self.names.extend_from_slice(name);
        self.points.push(Point { dist_m, score, lon, lat, name_at, name_len });
    }

    /// The members of the points in `range`, in order.
    pub fn names_of(&self, range: Range<usize>) -> impl Iterator<Item = &[u8]> {
        self.points[range].iter().map(|p| self.name(p))
    }

    /// Orders the points by distance so that the first `wanted` are the ones to answer:
    /// all of them by a stable sort (glibc's `qsort`, a merge sort, keeps ties in the order
    /// found), or only the first `wanted` by Valkey's partial quicksort.
    pub fn sort(&mut self, order: Order, wanted: usize) {
        let asc = |a: &Point, b: &Point| {
            if a.dist_m > b.dist_m {
                Ordering::Greater
            } else if a.dist_m == b.dist_m {
                Ordering::Equal
            } else {
                Ordering::Less
            }
        };
        let desc = |a: &Point, b: &Point| asc(a, b).reverse();
        let all = wanted >= self.points.len();
        match order {
            Order::Unsorted => {}
            Order::Asc if all => self.points.sort_by(asc),
            Order::Desc if all => self.points.sort_by(desc),
            Order::Asc => partial_sort(&mut self.points, wanted - 1, &asc),
            Order::Desc => partial_sort(&mut self.points, wanted - 1, &desc),
        }
    }
}

/// Adds to `found` the members of `z` inside the query's shape, cell by cell, stopping once
/// `found` holds `limit` points (COUNT ... ANY).
pub fn search(z: &ZSetObj, q: &Query, limit: Option<usize>, found: &mut Found) {
    let Some(cells) = q.cells() else { return };
    let full = |found: &Found| limit.is_some_and(|l| found.len() >= l);
    let mut last: Option<usize> = None;
    for (i, cell) in cells.cells.iter().enumerate() {
        let Some(cell) = *cell else { continue };
        // A huge radius makes adjacent neighbours the same cell: skip a repeat of the one
        // scanned last (Valkey compares with the last one scanned, unless that was the
        // center).
        if let Some(prev) = last.filter(|&p| p > 0) {
            if cells.cells[prev] == Some(cell) {
                continue;
            }
        }
        if full(found) {
            break;
        }
        scan_cell(z, q, cell, limit, found);
        last = Some(i);
    }
}

/// The members of one cell's score span that the shape holds.
fn scan_cell(
    z: &ZSetObj,
    q: &Query,
    cell: super::hash::GeoHash,
    limit: Option<usize>,
    found: &mut Found,
) {
    let (min, max) = score_span(cell);
    let span = ScoreRange { min: min as f64, max: max as f64, min_ex: false, max_ex: true };
    let (lo, hi) = z.score_bounds(&span);
    z.visit(lo, hi, false, |name, score| {
        let point = decode_score(score);
        if let Some(d) = q.distance_within(point) {
            found.push(name, score, point, d);
        }
        limit.is_none_or(|l| found.len() < l)
    });
}

#[cfg(test)]
mod tests {
    use super::super::area::Shape;
    use super::super::hash::score_of;
    use super::*;
    use crate::types::zset::Limits;

    fn set(points: &[(f64, f64)], listpack: bool) -> ZSetObj {
        let limits = Limits { max_entries: if listpack { 1000 } else { 0 }, max_value_bytes: 64 };
        let mut z = ZSetObj::with_hint(limits, points.len(), 8);
        for (i, &(lon, lat)) in points.iter().enumerate() {
            z.set(format!("m{i}").as_bytes(), score_of(lon, lat).unwrap() as f64, limits);
        }
        z
    }

    fn names(f: &Found) -> Vec<String> {
        f.names_of(0..f.len()).map(|n| String::from_utf8(n.to_vec()).unwrap()).collect()
    }

    /// Every point within the radius is found, in both encodings, and nothing else: checked
    /// against a scan of every member.
    #[test]
    fn search_finds_what_a_full_scan_finds() {
        let mut rng = crate::util::rng::Rng::new(3);
        for listpack in [true, false] {
            for _ in 0..50 {
                let clon = rng.next_f64() * 360.0 - 180.0;
                let clat = rng.next_f64() * 170.0 - 85.0;
                let pts: Vec<(f64, f64)> = (0..200)
                    .map(|_| {
                        let lon = (clon + (rng.next_f64() - 0.5) * 6.0).clamp(-180.0, 180.0);
                        let lat = (clat + (rng.next_f64() - 0.5) * 6.0).clamp(-85.0, 85.0);
                        (lon, lat)
                    })
                    .collect();
                let z = set(&pts, listpack);
                let q = Query {
                    center: (clon, clat),
                    shape: Shape::Circle { radius: rng.next_f64() * 300.0 },
                    to_m: 1000.0,
                };
                let mut f = Found::default();
                search(&z, &q, None, &mut f);
                let mut got = names(&f);
                got.sort();
                let mut want = Vec::new();
                z.for_each(|m, s| {
                    if q.distance_within(decode_score(s)).is_some() {
                        want.push(String::from_utf8(m.to_vec()).unwrap());
                    }
                });
                want.sort();
                assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn limit_stops_the_scan_and_sorting_orders_by_distance() {
        let pts: Vec<(f64, f64)> = (0..30).map(|i| (f64::from(i) * 0.01, 0.0)).collect();
        let z = set(&pts, true);
        let q = Query { center: (0.0, 0.0), shape: Shape::Circle { radius: 100.0 }, to_m: 1000.0 };
        let mut f = Found::default();
        search(&z, &q, Some(4), &mut f);
        assert_eq!(f.len(), 4);
        let mut f = Found::default();
        search(&z, &q, None, &mut f);
        assert_eq!(f.len(), 30);
        f.sort(Order::Desc, 3);
        assert_eq!(names(&f)[..3], ["m29", "m28", "m27"]);
        f.sort(Order::Asc, 30);
        assert_eq!(names(&f)[..2], ["m0", "m1"]);
        assert!(f.points.windows(2).all(|w| w[0].dist_m <= w[1].dist_m));
    }
}
