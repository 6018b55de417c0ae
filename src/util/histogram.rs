//! A latency histogram with Valkey's range and precision: every value from 1 ns to 1 s is
//! counted in a bucket no wider than 1/128 of the value (two significant decimal digits),
//! so that the percentiles of INFO latencystats and the buckets of LATENCY HISTOGRAM come
//! out exactly as Valkey's (which uses the HdrHistogram C library with
//! `lowest 1, highest 1_000_000_000, 2 significant figures`). It owns counting and reading
//! back; it knows nothing of commands or of the clock.
//!
//! # Layout
//!
//! Two significant decimal digits need 200 distinguishable steps per power of ten; the
//! next power of two is 256 "sub-buckets". Values below 256 are counted exactly, one
//! counter each. Above, the range is cut at the powers of two: the values in
//! `[128 * 2^b, 256 * 2^b)` ("bucket" `b`) go into 128 counters each `2^b` wide. The
//! relative error is then at most `2^b / (128 * 2^b)` = 1/128 everywhere:
//!
//! ```text
//!  counter index   0 ........ 255 | 256 ...... 383 | 384 ...... 511 | ... | 2944 ..... 3071
//!  values          0 ........ 255 | 256 ...... 510 | 512 ..... 1020 | ... | 2^29 .. 2^30-1
//!  width           1              | 2              | 4              |     | 2^22
//!  bucket b        0 (256 wide)   | 1              | 2              |     | 22
//! ```
//!
//! 1 s (1e9 ns) is in bucket 22 (`[2^29, 2^30)`), so 24 groups of 128 counters, 3,072 in
//! all, cover the range: 24 KiB per histogram, allocated when a command is first counted
//! (as Valkey creates its histogram on a command's first call), never again.
//!
//! # Recording
//!
//! The bucket is the position of the value's highest bit (one `leading_zeros`), the
//! counter a shift and an add: O(1), no branch on the data but the clamp, no allocation.
//! A value is clamped into `[1 ns, 1 s]` first, as Valkey clamps it.
//!
//! # Reading
//!
//! A counter stands for every value of its range; like HdrHistogram, a percentile reports
//! the highest value of the range where the cumulative count reaches it ("highest
//! equivalent value"): one command of 1,000 ns reads back as 1,003 ns (`p50=1.003`).
//! [`Histogram::cumulative_pow2`] walks the counters at the power-of-two reporting levels
//! 1,024 ns, 2,048 ns, ... as HdrHistogram's logarithmic iterator does (base 2, first
//! bucket 1,024), which is what LATENCY HISTOGRAM prints.

/// The smallest value counted; smaller ones count as this.
pub const MIN_VALUE: u64 = 1;
/// The largest value counted (1 s in nanoseconds); larger ones count as this.
pub const MAX_VALUE: u64 = 1_000_000_000;
/// log2 of the counters per bucket (after the first): 128.
const HALF_MAG: u32 = 7;
const HALF: usize = 1 << HALF_MAG;
/// Values below this (256) are counted exactly.
const SUB_MASK: u64 = (2 * HALF as u64) - 1;
/// Buckets after the first needed to reach `MAX_VALUE`: 2^30 > 1e9 = 256 << 22.
const BUCKETS: usize = 23;
/// Counters in all.
const COUNTS: usize = (BUCKETS + 1) * HALF;
/// The first power-of-two reporting level of [`Histogram::cumulative_pow2`] (Valkey asks
/// HdrHistogram for 1,024 ns).
const FIRST_LEVEL: u64 = 1024;

const _: () = assert!(COUNTS == 3072);
const _: () = assert!(index_of(MAX_VALUE) < COUNTS);

/// The bucket of `value` (0 for values below 256).
const fn bucket_of(value: u64) -> u32 {
    (64 - (value | SUB_MASK).leading_zeros()) - (HALF_MAG + 1)
}

/// The counter of `value`.
const fn index_of(value: u64) -> usize {
    let b = bucket_of(value);
    let sub = (value >> b) as usize;
    ((b as usize + 1) << HALF_MAG) + sub - HALF
}

/// The lowest value counted by counter `idx`.
const fn value_at(idx: usize) -> u64 {
    let group = idx >> HALF_MAG;
    let sub = (idx & (HALF - 1)) + HALF;
    if group == 0 {
        (sub - HALF) as u64
    } else {
        (sub as u64) << (group - 1)
    }
}

/// The highest value counted in the same counter as `value`.
const fn highest_equivalent(value: u64) -> u64 {
    let b = bucket_of(value);
    ((value >> b) << b) + (1 << b) - 1
}

/// Counts of values (nanoseconds) in HdrHistogram's layout; see the module essay.
pub struct Histogram {
    total: u64,
    counts: Box<[u64; COUNTS]>,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram").field("total", &self.total).finish_non_exhaustive()
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    pub fn new() -> Histogram {
        let counts: Box<[u64]> = vec![0; COUNTS].into_boxed_slice();
        Histogram { total: 0, counts: counts.try_into().expect("COUNTS counters") }
    }

    /// Counts one value (clamped into `[MIN_VALUE, MAX_VALUE]`).
    #[inline]
    pub fn record(&mut self, value: u64) {
        let v = value.clamp(MIN_VALUE, MAX_VALUE);
        self.counts[index_of(v)] += 1;
        self.total += 1;
    }

    /// Values counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The value at `percentile` (0..=100): the highest value of the counter where the
    /// cumulative count reaches `percentile`% of the total, rounded as HdrHistogram rounds
    /// (the lowest value of the counter for the 0th percentile). 0 when nothing was counted.
    pub fn value_at_percentile(&self, percentile: f64) -> u64 {
        let p = percentile.min(100.0);
        let wanted = ((p / 100.0) * self.total as f64 + 0.5) as u64;
        let wanted = wanted.max(1);
        let mut seen = 0;
        for (idx, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= wanted {
                let v = value_at(idx);
                return if percentile == 0.0 { v } else { highest_equivalent(v) };
            }
        }
        0
    }

    /// The cumulative counts at the power-of-two levels 1,024 ns, 2,048 ns, ..., as
    /// (the level's highest equivalent value in whole microseconds, values counted up to
    /// it), only where the count grew: LATENCY HISTOGRAM's `histogram_usec`. Values beyond
    /// the last level that fits (2^29 ns) are reported at the end of the range (1,073,741
    /// µs), as HdrHistogram's iterator reports them when it runs out of counters.
    pub fn cumulative_pow2(&self) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut seen = 0;
        let mut next = 0;
        let mut level = FIRST_LEVEL;
        while index_of(level) < COUNTS {
            let upto = index_of(level);
            seen += self.counts[next..=upto].iter().sum::<u64>();
            next = upto + 1;
            if out.last().map_or(0, |&(_, c)| c) < seen {
                out.push((highest_equivalent(level) / 1000, seen));
            }
            if seen >= self.total {
                return out;
            }
            level *= 2;
        }
        if seen < self.total {
            out.push((highest_equivalent(value_at(COUNTS - 1)) / 1000, self.total));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_matches_hdr_histogram() {
        // Exact below 256, then 2^b wide.
        assert_eq!(index_of(0), 0);
        assert_eq!(index_of(255), 255);
        assert_eq!(index_of(256), 256);
        assert_eq!(index_of(257), 256);
        assert_eq!(value_at(256), 256);
        assert_eq!(value_at(384), 512);
        assert_eq!(highest_equivalent(1000), 1003);
        assert_eq!(highest_equivalent(5000), 5023);
        assert_eq!(highest_equivalent(1), 1);
        assert_eq!(value_at(COUNTS - 1), 255 << 22);
        assert_eq!(highest_equivalent(value_at(COUNTS - 1)), (1 << 30) - 1);
        // Every counter's range starts where the previous one's ended.
        for idx in 1..COUNTS {
            assert_eq!(highest_equivalent(value_at(idx - 1)) + 1, value_at(idx), "at {idx}");
            assert_eq!(index_of(value_at(idx)), idx);
            assert_eq!(index_of(highest_equivalent(value_at(idx))), idx);
        }
    }

    #[test]
    fn the_error_stays_under_one_part_in_128() {
        let mut v = 1u64;
        while v <= MAX_VALUE {
            let hi = highest_equivalent(v);
            assert!((hi - v) as f64 <= v as f64 / 128.0, "{v} -> {hi}");
            v = v * 3 / 2 + 1;
        }
    }

    #[test]
    fn percentiles_read_back_as_valkey_prints_them() {
        let mut h = Histogram::new();
        h.record(0); // clamped to 1 ns: p50=0.001
        assert_eq!(h.value_at_percentile(50.0), 1);
        let mut h = Histogram::new();
        h.record(1000);
        assert_eq!(h.value_at_percentile(50.0), 1003);
        h.record(5000);
        h.record(5000);
        assert_eq!(h.value_at_percentile(50.0), 5023);
        assert_eq!(h.value_at_percentile(0.0), 1000);
        assert_eq!(h.value_at_percentile(33.0), 1003);
        assert_eq!(h.value_at_percentile(100.0), 5023);
        assert_eq!(Histogram::new().value_at_percentile(50.0), 0);
    }

    #[test]
    fn values_beyond_a_second_count_as_a_second() {
        let mut h = Histogram::new();
        h.record(u64::MAX);
        h.record(5_000_000_000);
        assert_eq!(h.total(), 2);
        assert_eq!(h.value_at_percentile(99.0), highest_equivalent(MAX_VALUE));
    }

    #[test]
    fn cumulative_buckets_are_the_oracles() {
        // What Valkey 9.1 printed for DEBUG SLEEPs of 0 s .. 1.2 s (in ns of duration).
        let mut h = Histogram::new();
        for us in [70, 80, 100, 150, 600, 2_200, 10_100, 50_100, 300_100, 1_200_000] {
            h.record(us * 1000);
        }
        assert_eq!(
            h.cumulative_pow2(),
            vec![
                (132, 3),
                (264, 4),
                (1056, 5),
                (4227, 6),
                (16908, 7),
                (67633, 8),
                (541065, 9),
                (1073741, 10)
            ]
        );
        let mut h = Histogram::new();
        h.record(500);
        h.record(1031);
        h.record(1032);
        assert_eq!(h.cumulative_pow2(), vec![(1, 2), (2, 3)]);
        let mut h = Histogram::new();
        h.record(30_000);
        assert_eq!(h.cumulative_pow2(), vec![(33, 1)]);
    }

    #[test]
    fn a_value_past_the_last_level_is_reported_at_the_end() {
        let mut h = Histogram::new();
        h.record(600_000_000);
        assert_eq!(h.cumulative_pow2(), vec![(1073741, 1)]);
        let mut h = Histogram::new();
        h.record(536_870_912);
        assert_eq!(h.cumulative_pow2(), vec![(541065, 1)]);
    }
}
