//! The cardinality from a register histogram: Ertl's improved raw estimator ("New
//! cardinality estimation algorithms for HyperLogLog sketches", arXiv:1702.01284), which
//! needs no bias tables and no switch between linear counting and the raw estimate.
//!
//! With `c[k]` registers at value `k`, `m = 16384` and `q = 50`:
//!
//! ```text
//!   z = m tau(1 - c[q+1]/m);  for k = q down to 1: z = (z + c[k]) / 2
//!   z = z + m sigma(c[0]/m);  estimate = round(alpha_inf m^2 / z),  alpha_inf = 1 / (2 ln 2)
//! ```
//!
//! The operations are Valkey's, in Valkey's order and in double precision (its build folds
//! `pow(1 - x, 2)` into one multiplication, and `alpha_inf m m` into one constant: exact, m
//! being a power of two), so the rounding of every step, and therefore the count, is the
//! same. Registers above `q + 1` (possible only in a hand-made dense value) are ignored.

use super::dense::Histogram;
use super::{Q, REGISTERS};

/// 1 / (2 ln 2), as Valkey writes it.
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// The estimated number of distinct elements behind the histogram `h`.
pub fn cardinality(h: &Histogram) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - f64::from(h[Q + 1])) / m);
    for k in (1..=Q).rev() {
        z += f64::from(h[k]);
        z *= 0.5;
    }
    z += m * sigma(f64::from(h[0]) / m);
    (ALPHA_INF * m * m / z).round() as u64
}

/// sigma(x) = x + sum over k >= 1 of x^(2^k) 2^(k-1), summed until it stops changing.
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let (mut y, mut z) = (1.0, x);
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if z == before {
            return z;
        }
    }
}

/// tau(x) = (1 - x - sum over k >= 1 of (1 - x^(2^-k))^2 2^-k) / 3, summed until it stops
/// changing.
fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let (mut y, mut z) = (1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        let d = 1.0 - x;
        z -= d * d * y;
        if z == before {
            return z / 3.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_histograms() {
        let mut h = [0u32; 64];
        h[0] = REGISTERS as u32;
        assert_eq!(cardinality(&h), 0, "an empty HLL");
        // One register at 1: about one element.
        h[0] -= 1;
        h[1] = 1;
        assert_eq!(cardinality(&h), 1);
        // Every register at the cap: the largest estimate there is, and finite.
        let mut full = [0u32; 64];
        full[Q + 1] = REGISTERS as u32;
        assert!(cardinality(&full) > 1 << 60);
    }

    #[test]
    fn estimates_grow_with_the_registers() {
        let mut last = 0;
        for zeros in (0..REGISTERS as u32).rev().step_by(512) {
            let mut h = [0u32; 64];
            h[0] = zeros;
            h[3] = REGISTERS as u32 - zeros;
            let c = cardinality(&h);
            assert!(c >= last, "{zeros} zeros: {c} after {last}");
            last = c;
        }
    }
}
