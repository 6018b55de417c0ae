//! Seeded pseudo-random numbers: the one generator of the crate (xorshift64*), for sampling
//! (RANDOMKEY, eviction and expiry samples, the random-member commands, the LFU counter) and
//! for seeded model tests. The caller owns the seed, so nothing reads global state and a test
//! that fails replays from its seed. Fast and small, not for anything secret.
//!
//! Also here: [`splitmix64`], a bijective mixer that spreads a seed (even 0, 1, 2 ...) over
//! all 64 bits, and [`random_hex`] for the run ids.

/// xorshift64* (Vigna): a 64-bit xorshift state whose output is multiplied by an odd
/// constant, which makes the high bits good; [`Rng::below`] uses the high bits.
#[derive(Clone, Debug)]
pub struct Rng {
    /// Never 0: xorshift keeps a zero state at zero.
    state: u64,
}

/// The state used for a zero seed (any non-zero constant would do).
const ZERO_SEED_STATE: u64 = 0x9E37_79B9_7F4A_7C15;

impl Rng {
    /// A generator started at `seed` (a zero seed, which xorshift cannot leave, starts at a
    /// fixed non-zero state instead).
    pub fn new(seed: u64) -> Rng {
        Rng { state: if seed == 0 { ZERO_SEED_STATE } else { seed } }
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A uniform value in `0..n`; `n` must not be 0.
    pub fn below(&mut self, n: usize) -> usize {
        below(self.next_u64(), n)
    }

    /// A uniform value in [0, 1), from the top 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl Default for Rng {
    /// The generator of a zero seed.
    fn default() -> Rng {
        Rng::new(0)
    }
}

/// A value in `0..n` from 64 random bits, by multiply-shift (the high bits decide, and no
/// division is needed); `n` must not be 0.
pub fn below(bits: u64, n: usize) -> usize {
    assert!(n > 0, "random index in an empty range");
    ((u128::from(bits) * n as u128) >> 64) as usize
}

/// SplitMix64's finalizer: a bijection of the 64-bit values that spreads any input over all
/// bits, so that consecutive seeds give unrelated results.
pub fn splitmix64(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `n` lower-case hex digits from a seed (run ids, replication ids).
pub fn random_hex(seed: u64, n: usize) -> String {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| char::from_digit((rng.next_u64() >> 60) as u32, 16).expect("a hex digit"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first outputs of xorshift64* from state 1, as the reference algorithm gives them.
    #[test]
    fn sequence_is_xorshift64_star() {
        let mut rng = Rng::new(1);
        let mut x: u64 = 1;
        for _ in 0..100 {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            assert_eq!(rng.next_u64(), x.wrapping_mul(0x2545F4914F6CDD1D));
        }
        assert_eq!(Rng::new(1).next_u64(), 0x47E4_CE4B_896C_DD1D);
    }

    #[test]
    fn zero_seed_still_moves() {
        let mut rng = Rng::new(0);
        let a = rng.next_u64();
        let b = rng.next_u64();
        assert!(a != 0 && b != 0 && a != b);
        assert_eq!(Rng::default().next_u64(), a);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut rng = Rng::new(42);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let v = rng.below(7);
            assert!(v < 7);
            seen[v] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(below(u64::MAX, 10), 9);
        assert_eq!(below(0, 10), 0);
    }

    #[test]
    fn floats_are_in_the_unit_interval() {
        let mut rng = Rng::new(7);
        let draws: Vec<f64> = (0..10_000).map(|_| rng.next_f64()).collect();
        assert!(draws.iter().all(|&d| (0.0..1.0).contains(&d)));
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((mean - 0.5).abs() < 0.02, "{mean}");
    }

    #[test]
    fn splitmix64_spreads_small_seeds() {
        // The first output of the reference SplitMix64 seeded with 0.
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
        let ones: Vec<u32> = (0..64).map(|s| splitmix64(s).count_ones()).collect();
        assert!(ones.iter().all(|&n| (16..=48).contains(&n)), "{ones:?}");
    }

    #[test]
    fn hex_digits() {
        let id = random_hex(12345, 40);
        assert_eq!(id.len(), 40);
        assert!(id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        assert_eq!(id, random_hex(12345, 40));
        assert_ne!(id, random_hex(12346, 40));
    }
}
