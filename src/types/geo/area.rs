//! What a search looks at: the shape around its center, the shape's bounding box, and the
//! nine cells (the center's and its eight neighbours) that cover the box, chosen as Valkey
//! chooses them: their order decides the order of unsorted results, and which cells are
//! dropped decides where a `COUNT ... ANY` search stops.
//!
//! ```text
//!     +----+----+----+     cells of one step, large enough that the box fits in the
//!     | NW | N  | NE |     3 x 3 block around the center's cell; a neighbour is dropped
//!     +----+----+----+     when the center cell already reaches past the box on its side;
//!     | W  | C  | E  |     scanned C, N, S, E, W, NE, NW, SE, SW
//!     +----+----+----+
//!     | SW | S  | SE |
//!     +----+----+----+
//! ```

use super::distance::{deg_rad, distance, lat_distance, polygon_center, polygon_contains, rad_deg};
use super::distance::{LonLat, EARTH_RADIUS_M};
use super::hash::{decode, encode, moved, GeoHash, STEP_MAX};

/// Valkey's bound of the Mercator projection, in meters: radii are doubled up to it to
/// estimate a cell size.
const MERCATOR_MAX: f64 = 20037726.37;

/// How much farther than the radius, in latitude alone, a point must be for a circle search
/// to drop it before computing its distance (see [`Query::distance_within`]).
const LAT_PREFILTER_MARGIN: f64 = 1.0 + 1e-6;

/// The shape of a search, in the unit of the request (`to_m` converts it to meters).
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// BYRADIUS: within `radius` of the center.
    Circle { radius: f64 },
    /// BYBOX: within `width / 2` east or west and `height / 2` north or south.
    Rect { width: f64, height: f64 },
    /// BYPOLYGON (meters): inside the polygon; the center is the vertices' mean.
    Polygon(Vec<LonLat>),
}

/// A search: a center, a shape, and the meters of the shape's unit.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    pub center: LonLat,
    pub shape: Shape,
    /// Meters per unit: 1 (m), 1000 (km), 0.3048 (ft), 1609.34 (mi).
    pub to_m: f64,
}

/// The smallest and largest longitudes and latitudes a search may find points at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub min_lon: f64,
    pub min_lat: f64,
    pub max_lon: f64,
    pub max_lat: f64,
}

/// The cells to scan, in scanning order (center, N, S, E, W, NE, NW, SE, SW); None for a
/// neighbour that the box does not reach.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cells {
    pub step: u8,
    pub cells: [Option<GeoHash>; 9],
}

impl Query {
    /// A polygon search: its center is the vertices' mean, distances are in meters.
    pub fn polygon(vertices: Vec<LonLat>) -> Query {
        Query { center: polygon_center(&vertices), shape: Shape::Polygon(vertices), to_m: 1.0 }
    }

    /// Whether the point is inside the shape; if so, its distance to the center in meters.
    pub fn distance_within(&self, point: LonLat) -> Option<f64> {
        let (x1, y1) = self.center;
        let (x2, y2) = point;
        match &self.shape {
            Shape::Circle { radius } => {
                let radius_m = radius * self.to_m;
                // Not Valkey's step, and it changes no answer: a point farther away in
                // latitude alone is outside, so most of the cells' points are dropped
                // without the trigonometry. The margin is far above the haversine's
                // rounding (its asin loses digits near antipodes, to about 1e-8), so no
                // point that Valkey's test keeps is dropped.
                if lat_distance(y1, y2) > radius_m * LAT_PREFILTER_MARGIN {
                    return None;
                }
                let d = distance(x1, y1, x2, y2);
                (d <= radius_m).then_some(d)
            }
            Shape::Rect { width, height } => {
                // The latitude distance is cheaper: checked first.
                if lat_distance(y2, y1) > height * self.to_m / 2.0 {
                    return None;
                }
                if distance(x2, y2, x1, y2) > width * self.to_m / 2.0 {
                    return None;
                }
                Some(distance(x1, y1, x2, y2))
            }
            Shape::Polygon(vertices) => {
                polygon_contains(vertices, point).then(|| distance(x1, y1, x2, y2))
            }
        }
    }

    /// The bounding box of the shape. A circle's or a rectangle's sides are curved on the
    /// sphere: the box takes the wider of its top and bottom edges (the one nearer the
    /// equator).
    pub fn bounds(&self) -> Bounds {
        let (lon, lat) = self.center;
        let (half_height, half_width) = match &self.shape {
            Shape::Circle { radius } => (self.to_m * radius, self.to_m * radius),
            Shape::Rect { width, height } => {
                (self.to_m * (height / 2.0), self.to_m * (width / 2.0))
            }
            Shape::Polygon(vertices) => {
                let mut b = Bounds {
                    min_lon: f64::INFINITY,
                    min_lat: f64::INFINITY,
                    max_lon: f64::NEG_INFINITY,
                    max_lat: f64::NEG_INFINITY,
                };
                for &(x, y) in vertices {
                    b.min_lon = b.min_lon.min(x);
                    b.min_lat = b.min_lat.min(y);
                    b.max_lon = b.max_lon.max(x);
                    b.max_lat = b.max_lat.max(y);
                }
                return b;
            }
        };
        let lat_delta = rad_deg(half_height / EARTH_RADIUS_M);
        let lon_delta_top = rad_deg(half_width / EARTH_RADIUS_M / deg_rad(lat + lat_delta).cos());
        let lon_delta_bottom =
            rad_deg(half_width / EARTH_RADIUS_M / deg_rad(lat - lat_delta).cos());
        let lon_delta = if lat < 0.0 { lon_delta_bottom } else { lon_delta_top };
        Bounds {
            min_lon: lon - lon_delta,
            min_lat: lat - lat_delta,
            max_lon: lon + lon_delta,
            max_lat: lat + lat_delta,
        }
    }

    /// The distance from the center that the cells must cover, in meters: the radius, the
    /// half diagonal of a rectangle, or the farthest corner of a polygon's bounding box.
    fn reach_m(&self, bounds: &Bounds) -> f64 {
        match &self.shape {
            Shape::Circle { radius } => radius * self.to_m,
            Shape::Rect { width, height } => {
                let (w, h) = (width / 2.0, height / 2.0);
                (w * w + h * h).sqrt() * self.to_m
            }
            Shape::Polygon(_) => {
                let (x, y) = self.center;
                [
                    (bounds.min_lon, bounds.min_lat),
                    (bounds.min_lon, bounds.max_lat),
                    (bounds.max_lon, bounds.min_lat),
                    (bounds.max_lon, bounds.max_lat),
                ]
                .into_iter()
                .map(|(cx, cy)| distance(x, y, cx, cy))
                .fold(0.0, f64::max)
            }
        }
    }

    /// The cells to scan; None when the center cannot be encoded (a polygon whose mean is
    /// beyond the Mercator limits): nothing is found then.
    pub fn cells(&self) -> Option<Cells> {
        let b = self.bounds();
        let (lon, lat) = self.center;
        let mut step = estimate_step(self.reach_m(&b), lat);
        let mut center = encode(lon, lat, step)?;
        // Near the edges of the center cell the estimate can be one step too fine for a
        // neighbour to reach the box: then one step coarser.
        let falls_short = |h: GeoHash| {
            let area = |dx, dy| decode(moved(h, dx, dy));
            area(0, 1).lat.max < b.max_lat
                || area(0, -1).lat.min > b.min_lat
                || area(1, 0).lon.max < b.max_lon
                || area(-1, 0).lon.min > b.min_lon
        };
        if step > 1 && falls_short(center) {
            step -= 1;
            center = encode(lon, lat, step)?;
        }
        let area = decode(center);
        // Neighbours beyond the box's side are dropped (not at step 1, where they wrap).
        let keep = |beyond: bool| step < 2 || !beyond;
        let north = keep(area.lat.max > b.max_lat);
        let south = keep(area.lat.min < b.min_lat);
        let east = keep(area.lon.max > b.max_lon);
        let west = keep(area.lon.min < b.min_lon);
        let cell = |ok: bool, dx: i8, dy: i8| ok.then(|| moved(center, dx, dy));
        Some(Cells {
            step,
            cells: [
                Some(center),
                cell(north, 0, 1),
                cell(south, 0, -1),
                cell(east, 1, 0),
                cell(west, -1, 0),
                cell(north && east, 1, 1),
                cell(north && west, -1, 1),
                cell(south && east, 1, -1),
                cell(south && west, -1, -1),
            ],
        })
    }
}

/// The step whose cells are about as wide as `reach_m` (so that the 3 x 3 block covers
/// it), one or two steps coarser near the poles where cells narrow.
fn estimate_step(reach_m: f64, lat: f64) -> u8 {
    if reach_m == 0.0 {
        return STEP_MAX;
    }
    let mut step: i32 = 1;
    let mut r = reach_m;
    while r < MERCATOR_MAX {
        r *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, i32::from(STEP_MAX)) as u8
}

// The literals are Valkey's replies, digit for digit.
#[cfg(test)]
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;

    #[test]
    fn steps_follow_the_radius_and_widen_near_the_poles() {
        assert_eq!(estimate_step(0.0, 0.0), 26);
        assert_eq!(estimate_step(1.0, 0.0), 24);
        assert_eq!(estimate_step(1000.0, 0.0), 14);
        assert_eq!(estimate_step(1000.0, 70.0), 13);
        assert_eq!(estimate_step(1000.0, -85.0), 12);
        assert_eq!(estimate_step(5e7, 0.0), 1);
        assert_eq!(estimate_step(f64::INFINITY, 0.0), 1);
        assert_eq!(estimate_step(1e-9, 0.0), 26);
    }

    #[test]
    fn a_small_circle_keeps_only_the_neighbours_it_reaches() {
        let q = Query { center: (13.36, 38.11), shape: Shape::Circle { radius: 1.0 }, to_m: 1.0 };
        let c = q.cells().unwrap();
        assert!(c.step >= 20);
        assert!(c.cells[0].is_some());
        let b = q.bounds();
        assert!(b.min_lat < 38.11 && 38.11 < b.max_lat && b.min_lon < 13.36 && 13.36 < b.max_lon);
        // A huge one covers the world at step 1, every neighbour kept.
        let q =
            Query { center: (0.0, 0.0), shape: Shape::Circle { radius: 30000.0 }, to_m: 1000.0 };
        let c = q.cells().unwrap();
        assert_eq!(c.step, 1);
        assert!(c.cells.iter().all(Option::is_some));
    }

    #[test]
    fn shapes_decide_membership() {
        let circle =
            Query { center: (0.0, 0.0), shape: Shape::Circle { radius: 112.0 }, to_m: 1000.0 };
        assert!(circle.distance_within((1.0, 0.0)).is_some());
        assert!(circle.distance_within((1.0, 1.0)).is_none());
        let rect = Query {
            center: (0.0, 0.0),
            shape: Shape::Rect { width: 250.0, height: 50.0 },
            to_m: 1000.0,
        };
        assert!(rect.distance_within((1.0, 0.0)).is_some());
        assert!(rect.distance_within((0.0, 1.0)).is_none());
        let poly = Query::polygon(vec![(-1.0, -1.0), (3.0, -1.0), (-1.0, 3.0)]);
        // Valkey's STOREDIST score for this member of this polygon: 1.0484233900896864e+5.
        let d = poly.distance_within((0.99999994039535522, 0.99999945914297683)).unwrap();
        assert_eq!(d, 1.0484233900896864e+5);
        assert!(poly.distance_within((2.5, 2.5)).is_none());
    }

    /// A polygon whose mean is past the Mercator limits finds nothing, as in Valkey.
    #[test]
    fn a_polygon_centered_beyond_the_limits_has_no_cells() {
        let q = Query::polygon(vec![(0.0, 80.0), (120.0, 85.0), (-120.0, 85.0)]);
        assert!(q.cells().is_none());
    }
}
