//! Distances on a sphere of Valkey's earth radius (the haversine formula, with Valkey's
//! shortcut for points on one meridian), and the polygon tests of BYPOLYGON. Every
//! operation is written in Valkey's order, so that results are equal to the last bit: the
//! replies print them, and a STOREDIST score keeps all 17 digits.

use std::f64::consts::PI;

/// Valkey's earth radius: the quadratic mean radius of WGS-84, in meters.
pub const EARTH_RADIUS_M: f64 = 6372797.560856;

const DEG_TO_RAD: f64 = PI / 180.0;

pub fn deg_rad(deg: f64) -> f64 {
    deg * DEG_TO_RAD
}

pub fn rad_deg(rad: f64) -> f64 {
    rad / DEG_TO_RAD
}

/// The distance between two latitudes on one meridian, in meters.
pub fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS_M * (deg_rad(lat2) - deg_rad(lat1)).abs()
}

/// The great-circle distance between two points, in meters (haversine).
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let lon1r = deg_rad(lon1);
    let lon2r = deg_rad(lon2);
    let v = ((lon2r - lon1r) / 2.0).sin();
    // The same longitude: only the latitudes differ, and asin(sin(x)) is x.
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let lat1r = deg_rad(lat1);
    let lat2r = deg_rad(lat2);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_M * a.sqrt().asin()
}

/// A vertex or a point: (longitude, latitude) in degrees.
pub type LonLat = (f64, f64);

/// Whether a point is inside a polygon, by the even-odd rule on the plane of longitudes and
/// latitudes: a ray from the point towards growing longitudes crosses its edges an odd
/// number of times. The last vertex joins the first.
pub fn polygon_contains(vertices: &[LonLat], (x, y): LonLat) -> bool {
    let mut inside = false;
    let mut j = vertices.len() - 1;
    for (i, &(xi, yi)) in vertices.iter().enumerate() {
        let (xj, yj) = vertices[j];
        if (yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi {
            inside = !inside;
        }
        j = i;
    }
    inside
}

/// The center BYPOLYGON measures distances from: the direction of the sum of the vertices'
/// unit vectors (their mean on the sphere), as (lon, lat).
pub fn polygon_center(vertices: &[LonLat]) -> LonLat {
    let (mut x, mut y, mut z) = (0.0, 0.0, 0.0);
    for &(lon, lat) in vertices {
        let (lon, lat) = (deg_rad(lon), deg_rad(lat));
        x += lat.cos() * lon.cos();
        y += lat.cos() * lon.sin();
        z += lat.sin();
    }
    (rad_deg(y.atan2(x)), rad_deg(z.atan2((x * x + y * y).sqrt())))
}

// The literals are Valkey's replies, digit for digit.
#[cfg(test)]
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;

    const PALERMO: LonLat = (13.36138933897018433, 38.11555639549629859);
    const CATANIA: LonLat = (15.08726745843887329, 37.50266842333162032);

    #[test]
    fn distances_match_valkey() {
        // GEODIST Sicily Palermo Catania: "166274.1516".
        let d = distance(PALERMO.0, PALERMO.1, CATANIA.0, CATANIA.1);
        assert_eq!(format!("{d:.4}"), "166274.1516");
        assert_eq!(distance(PALERMO.0, PALERMO.1, PALERMO.0, PALERMO.1), 0.0);
        // One meridian: the shortcut.
        assert_eq!(distance(10.0, 1.0, 10.0, 2.0), lat_distance(1.0, 2.0));
        assert_eq!(lat_distance(0.0, 1.0), 111226.30000000089);
    }

    #[test]
    fn polygon_test_is_even_odd() {
        let square = [(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (0.0, 2.0)];
        assert!(polygon_contains(&square, (1.0, 1.0)));
        assert!(!polygon_contains(&square, (3.0, 1.0)));
        assert!(!polygon_contains(&square, (1.0, -0.5)));
        // A bow tie: the crossing halves are both inside.
        let bow = [(0.0, 0.0), (2.0, 2.0), (2.0, 0.0), (0.0, 2.0)];
        assert!(polygon_contains(&bow, (0.5, 1.0)));
        assert!(!polygon_contains(&bow, (1.0, 0.2)));
        // Degenerate polygons hold nothing.
        assert!(!polygon_contains(&[(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)], (1.0, 1.0)));
    }

    #[test]
    fn polygon_center_is_the_spherical_mean() {
        // The example of Valkey's GEOSEARCH BYPOLYGON documentation: distances 166482.0159
        // to Palermo and 180861.7725 to (17.24151045083999634, 38.78813451624225195).
        let v = [
            (12.41098696654226, 38.05033923003755),
            (15.107936245794182, 38.00616649901906),
            (18.148439288534455, 38.63804787603499),
            (17.80831874257693, 39.50316813110968),
            (12.458468633214036, 38.57719533463012),
        ];
        let (lon, lat) = polygon_center(&v);
        let d = distance(lon, lat, PALERMO.0, PALERMO.1);
        assert_eq!(format!("{d:.4}"), "166482.0159");
        let d = distance(lon, lat, 17.24151045083999634, 38.78813451624225195);
        assert_eq!(format!("{d:.4}"), "180861.7725");
        assert_eq!(polygon_center(&[(0.0, 0.0), (0.0, 0.0), (0.0, 0.0)]), (0.0, 0.0));
    }
}
