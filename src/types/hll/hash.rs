//! The hash of an element and what it does to the registers: MurmurHash64A (Austin
//! Appleby's MurmurHash2, 64-bit, in Valkey's endian-neutral form: 8-byte blocks read
//! little endian) with Valkey's seed, split into a register index and a run length.

use super::{P, Q, REGISTERS};

/// Valkey's seed for HLL hashing.
const SEED: u64 = 0xadc8_3b19;

/// MurmurHash64A of `key` with `seed`, as Valkey computes it.
pub fn murmur64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut blocks = key.chunks_exact(8);
    for block in &mut blocks {
        let mut k = u64::from_le_bytes(block.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        // The switch with fall-through: byte i of the tail at bits 8 i, then one multiply.
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register `element` falls in and the value it offers there: 1 + the trailing zeros
/// of the hash bits above the index, at most `Q + 1` (Valkey's `hllPatLen`).
#[inline]
pub fn pattern(element: &[u8]) -> (usize, u8) {
    let hash = murmur64a(element, SEED);
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    // A guard bit at Q caps the run at Q zeros.
    let rest = (hash >> P) | (1 << Q);
    (index, 1 + rest.trailing_zeros() as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (register, value) of the prefixes of `0123456789abcdefg`, every tail length and two
    /// whole blocks, as Valkey 9.1 places them (PFADD of each alone, then PFDEBUG DECODE).
    #[test]
    fn pattern_matches_valkey() {
        let want: [(usize, u8); 18] = [
            (5938, 2),
            (13225, 4),
            (10237, 1),
            (2874, 1),
            (13495, 1),
            (14243, 2),
            (14197, 3),
            (8436, 1),
            (594, 2),
            (7667, 3),
            (1021, 2),
            (13543, 1),
            (10985, 2),
            (8624, 1),
            (11294, 2),
            (15725, 4),
            (5949, 1),
            (14057, 2),
        ];
        let key = b"0123456789abcdefg";
        for (n, w) in want.iter().enumerate() {
            assert_eq!(pattern(&key[..n]), *w, "prefix of {n} bytes");
        }
        assert_eq!(murmur64a(b"", 0), 0, "nothing mixed into a zero seed stays zero");
    }

    #[test]
    fn pattern_is_bounded() {
        for i in 0..100_000u32 {
            let (index, count) = pattern(&i.to_le_bytes());
            assert!(index < REGISTERS);
            assert!((1..=Q as u8 + 1).contains(&count));
        }
    }
}
