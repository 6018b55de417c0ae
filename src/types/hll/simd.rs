//! The vector forms of the two hot loops of counting: unpacking dense registers into one
//! byte each (with the running maximum of a union), and the histogram of those bytes. They
//! are chosen at run time when the CPU has AVX2 ([`available`]); the scalar forms in
//! `dense` are the reference, and the tests below hold these to them on random registers.
//!
//! # Unpacking with AVX-512 VBMI: one instruction does the bit work
//!
//! Where the CPU has AVX-512 VBMI (Ice Lake and later), `vpmultishiftqb` does in one
//! instruction what takes seven below: it gathers, for every output byte, the 8 bits that
//! start at any bit offset of its 64-bit lane. A byte permute (`vpermb`) gives each lane
//! 6 bytes (8 registers), offsets 0, 6, ..., 42 pick the registers, a mask drops the bits
//! above the sixth: about 7 instructions for 32 registers instead of 14. It runs on 256-bit
//! vectors (the VL forms), so the core's clock is not lowered for 512-bit work.
//!
//! # Unpacking: 24 bytes to 32 registers
//!
//! Each 128-bit lane is loaded so that its last 12 bytes are 4 groups of 3 bytes (the
//! low lane from 4 bytes before the block, the high lane from 8 bytes into it, so that no
//! load leaves the value: the header lies before the first block). One byte shuffle puts
//! each group in a 32-bit lane, `x = b0 | b1 << 8 | b2 << 16`, and the four registers of
//! `x` are moved into its four bytes by three shifts and four masks:
//!
//! ```text
//!   x:    ........ 33333322 22221111 11000000      (register k at bits 6k..6k+5)
//!   out:  00333333 00222222 00111111 00000000 + register 0
//!         = x & 0x3f | (x << 2) & 0x3f00 | (x << 4) & 0x3f0000 | (x << 6) & 0x3f000000
//! ```
//!
//! The bytes come out in register order, so a byte-wise maximum with the union so far
//! finishes the step: about 14 instructions for 32 registers.
//!
//! # Histogram: one compare a value, 32 registers at a time
//!
//! A histogram of 16384 bytes by increments costs a load, an add and a store per register,
//! and runs of equal values (an HLL's registers mostly hold a few values) wait on each
//! other's stores. Instead, the range of values present is found first (a minimum and a
//! maximum over the array), and each value of the range but the smallest is counted with
//! a byte compare and a subtract into byte counters, 32 registers an instruction, summed
//! with `vpsadbw` every 128 vectors (before a byte counter can wrap). The smallest value's
//! count is what the others leave of 16384. A typical union spans about 20 values: some
//! 20 x 512 compares, a few times fewer cycles than 16384 increments.

use std::arch::x86_64::{
    __m256i, _mm256_add_epi64, _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256,
    _mm256_max_epu8, _mm256_min_epu8, _mm256_multishift_epi64_epi8, _mm256_or_si256,
    _mm256_permutexvar_epi8, _mm256_sad_epu8, _mm256_set1_epi32, _mm256_set1_epi64x,
    _mm256_set1_epi8, _mm256_set_m128i, _mm256_setr_epi8, _mm256_setzero_si256,
    _mm256_shuffle_epi8, _mm256_slli_epi32, _mm256_storeu_si256, _mm256_sub_epi8, _mm_loadu_si128,
};

use super::dense::Histogram;
use super::{DENSE_BYTES, HEADER_BYTES, REGISTERS, REGISTER_MAX};

/// Whether the CPU runs AVX2 (detected once by the standard library, then a cached load).
#[inline]
pub fn available() -> bool {
    std::is_x86_feature_detected!("avx2")
}

/// Whether the CPU runs the 256-bit forms of AVX-512 VBMI.
#[inline]
fn vbmi_available() -> bool {
    std::is_x86_feature_detected!("avx512vbmi") && std::is_x86_feature_detected!("avx512vl")
}

/// `dense::unpack_max`: `dense` is a whole dense value, header included.
pub fn unpack_max(dense: &[u8], max: &mut [u8; REGISTERS]) {
    assert!(available(), "AVX2 unpacking on a CPU without AVX2");
    assert_eq!(dense.len(), DENSE_BYTES);
    if vbmi_available() {
        // SAFETY: VBMI and VL are present (checked just above); the function reads only
        // inside `dense` (its length is checked above, see the bounds in its body) and
        // writes only `max`.
        return unsafe { unpack_max_vbmi(dense, max) };
    }
    // SAFETY: AVX2 is present (checked above); the function reads only inside `dense`
    // (its length is checked above, see the bounds in its body) and writes only `max`.
    unsafe { unpack_max_avx2(dense, max) }
}

/// `dense::histogram_of_bytes`; every byte of `registers` at most 63.
pub fn histogram(registers: &[u8; REGISTERS]) -> Histogram {
    assert!(available(), "AVX2 histogram on a CPU without AVX2");
    // SAFETY: AVX2 is present (checked above); the loads stay inside `registers`.
    unsafe { histogram_avx2(registers) }
}

/// Vectors of 32 registers in 16384.
const VECTORS: usize = REGISTERS / 32;

#[target_feature(enable = "avx2")]
unsafe fn unpack_max_avx2(dense: &[u8], max: &mut [u8; REGISTERS]) {
    // Bytes 4..16 of each lane: four groups of three, each to a 32-bit lane (-1: zero).
    let spread = _mm256_setr_epi8(
        4, 5, 6, -1, 7, 8, 9, -1, 10, 11, 12, -1, 13, 14, 15, -1, //
        4, 5, 6, -1, 7, 8, 9, -1, 10, 11, 12, -1, 13, 14, 15, -1,
    );
    let m0 = _mm256_set1_epi32(0x3f);
    let m1 = _mm256_set1_epi32(0x3f00);
    let m2 = _mm256_set1_epi32(0x3f_0000);
    let m3 = _mm256_set1_epi32(0x3f00_0000);
    let base = dense.as_ptr();
    for i in 0..VECTORS {
        let block = HEADER_BYTES + 24 * i;
        // SAFETY: the low lane reads [block - 4, block + 12) and the high lane
        // [block + 8, block + 24): block - 4 >= 12, and block + 24 <= 16 + 24 * 512 =
        // DENSE_BYTES, the length of `dense` (checked by the caller).
        let lo = _mm_loadu_si128(base.add(block - 4).cast());
        let hi = _mm_loadu_si128(base.add(block + 8).cast());
        let x = _mm256_shuffle_epi8(_mm256_set_m128i(hi, lo), spread);
        let r0 = _mm256_and_si256(x, m0);
        let r1 = _mm256_and_si256(_mm256_slli_epi32::<2>(x), m1);
        let r2 = _mm256_and_si256(_mm256_slli_epi32::<4>(x), m2);
        let r3 = _mm256_and_si256(_mm256_slli_epi32::<6>(x), m3);
        let regs = _mm256_or_si256(_mm256_or_si256(r0, r1), _mm256_or_si256(r2, r3));
        // SAFETY: 32 * i + 32 <= REGISTERS, the length of `max`.
        let at = max.as_mut_ptr().add(32 * i).cast::<__m256i>();
        _mm256_storeu_si256(at, _mm256_max_epu8(_mm256_loadu_si256(at), regs));
    }
}

#[target_feature(enable = "avx512vbmi,avx512vl")]
unsafe fn unpack_max_vbmi(dense: &[u8], max: &mut [u8; REGISTERS]) {
    // Lane j (8 bytes) of the permuted vector: bytes 8 + 6j .. 8 + 6j + 8 of the load (the
    // last two of each are never used, so lane 3 may repeat byte 31).
    let mut idx = [0i8; 32];
    for (k, i) in idx.iter_mut().enumerate() {
        *i = (8 + 6 * (k / 8) + k % 8).min(31) as i8;
    }
    let permute = _mm256_loadu_si256(idx.as_ptr().cast());
    // Output byte k of a lane: the 8 bits from bit 6k of the lane (register k, and 2 more).
    let shifts = _mm256_set1_epi64x(i64::from_le_bytes([0, 6, 12, 18, 24, 30, 36, 42]));
    let m = _mm256_set1_epi8(REGISTER_MAX as i8);
    let base = dense.as_ptr();
    for i in 0..VECTORS {
        let block = HEADER_BYTES + 24 * i;
        // SAFETY: the load reads [block - 8, block + 24): block - 8 >= 8, and block + 24 <=
        // 16 + 24 * 512 = DENSE_BYTES, the length of `dense` (checked by the caller).
        let bytes = _mm256_loadu_si256(base.add(block - 8).cast());
        let lanes = _mm256_permutexvar_epi8(permute, bytes);
        let regs = _mm256_and_si256(_mm256_multishift_epi64_epi8(shifts, lanes), m);
        // SAFETY: 32 * i + 32 <= REGISTERS, the length of `max`.
        let at = max.as_mut_ptr().add(32 * i).cast::<__m256i>();
        _mm256_storeu_si256(at, _mm256_max_epu8(_mm256_loadu_si256(at), regs));
    }
}

/// The 32 bytes of `v`.
#[inline]
#[target_feature(enable = "avx2")]
fn bytes_of(v: __m256i) -> [u8; 32] {
    let mut out = [0u8; 32];
    // SAFETY: `out` is 32 writable bytes.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), v) };
    out
}

#[target_feature(enable = "avx2")]
unsafe fn histogram_avx2(registers: &[u8; REGISTERS]) -> Histogram {
    let at = |i: usize| registers[32 * i..32 * i + 32].as_ptr().cast::<__m256i>();
    let (mut lo, mut hi) = (_mm256_set1_epi8(-1), _mm256_setzero_si256());
    for i in 0..VECTORS {
        // SAFETY: `at` points to 32 bytes of `registers`, bounds-checked.
        let v = _mm256_loadu_si256(at(i));
        lo = _mm256_min_epu8(lo, v);
        hi = _mm256_max_epu8(hi, v);
    }
    let lo = bytes_of(lo).into_iter().min().expect("32 bytes");
    let hi = bytes_of(hi).into_iter().max().expect("32 bytes");
    assert!(hi <= REGISTER_MAX, "a register byte above 63");
    let mut out = [0u32; 64];
    let mut rest = REGISTERS as u32;
    for value in lo + 1..=hi {
        let target = _mm256_set1_epi8(value as i8);
        let mut sums = _mm256_setzero_si256();
        // Two byte counters, each taking 64 of every 128 vectors: at most 64 < 256.
        for chunk in 0..VECTORS / 128 {
            let (mut a, mut b) = (_mm256_setzero_si256(), _mm256_setzero_si256());
            for i in (chunk * 128..chunk * 128 + 128).step_by(2) {
                // SAFETY: `at` points to 32 bytes of `registers`, bounds-checked.
                let (x, y) = (_mm256_loadu_si256(at(i)), _mm256_loadu_si256(at(i + 1)));
                a = _mm256_sub_epi8(a, _mm256_cmpeq_epi8(x, target));
                b = _mm256_sub_epi8(b, _mm256_cmpeq_epi8(y, target));
            }
            let zero = _mm256_setzero_si256();
            sums = _mm256_add_epi64(sums, _mm256_sad_epu8(a, zero));
            sums = _mm256_add_epi64(sums, _mm256_sad_epu8(b, zero));
        }
        let s = bytes_of(sums);
        let n: u64 = s.chunks_exact(8).map(|q| u64::from_le_bytes(q.try_into().expect("8"))).sum();
        out[usize::from(value)] = n as u32;
        rest -= n as u32;
    }
    out[usize::from(lo)] = rest;
    out
}

#[cfg(test)]
mod tests {
    use super::super::dense;
    use super::*;
    use crate::util::rng::Rng;

    /// A dense value with random registers below `limit`, and its header bytes random too
    /// (the vector loads read into the header and must ignore it).
    fn random_dense(rng: &mut Rng, limit: u64) -> Vec<u8> {
        let mut v: Vec<u8> = (0..DENSE_BYTES).map(|_| rng.next_u64() as u8).collect();
        for i in 0..REGISTERS {
            dense::set(&mut v[HEADER_BYTES..], i, (rng.next_u64() % limit) as u8);
        }
        v
    }

    #[test]
    fn vector_paths_match_the_scalar_ones() {
        if !available() {
            return;
        }
        let mut rng = Rng::new(3);
        for limit in [1, 2, 7, 20, 64] {
            let v = random_dense(&mut rng, limit);
            let mut start = [0u8; REGISTERS];
            for s in start.iter_mut() {
                *s = (rng.next_u64() % 40) as u8;
            }
            let (mut a, mut b) = (start, start);
            // SAFETY: AVX2 is present (checked at the top).
            unsafe { unpack_max_avx2(&v, &mut a) };
            dense::unpack_max_scalar(&v[HEADER_BYTES..], &mut b);
            assert!(a == b, "AVX2 unpacking, registers below {limit}");
            if vbmi_available() {
                let mut c = start;
                // SAFETY: VBMI and VL are present (checked just above).
                unsafe { unpack_max_vbmi(&v, &mut c) };
                assert!(c == b, "VBMI unpacking, registers below {limit}");
            }
            assert_eq!(histogram(&a), dense::histogram_scalar(&a), "below {limit}");
        }
        // One value everywhere, and the extremes at the ends.
        let mut same = [5u8; REGISTERS];
        assert_eq!(histogram(&same), dense::histogram_scalar(&same));
        same[0] = 0;
        same[REGISTERS - 1] = 63;
        assert_eq!(histogram(&same), dense::histogram_scalar(&same));
    }
}
