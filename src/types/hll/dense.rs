//! Dense registers: 16384 six-bit fields, least significant bits first (diagram in the
//! module essay). Single registers are read and written at any bit offset of a byte slice
//! (so a PFADD can edit a copy of just the bytes it changes); whole arrays are unpacked to
//! one byte a register, 3 bytes giving 4 registers, by the AVX2 path where the CPU has it
//! (`simd`) and by the scalar loop here otherwise, which is also the reference the vector
//! path is tested against.

use super::{BITS, DENSE_BYTES, HEADER_BYTES, REGISTERS, REGISTER_BYTES, REGISTER_MAX};

/// Register counts by value (0..=63): the estimator's input.
pub type Histogram = [u32; 64];

/// The 6-bit field that starts at bit `bit` of `bytes`; a second byte past the end of
/// `bytes` reads as zero (Valkey reads the string's terminating NUL there).
#[inline]
pub fn get_at(bytes: &[u8], bit: usize) -> u8 {
    let (byte, shift) = (bit / 8, bit % 8);
    let lo = u16::from(bytes[byte]);
    let hi = u16::from(bytes.get(byte + 1).copied().unwrap_or(0));
    ((lo | hi << 8) >> shift) as u8 & REGISTER_MAX
}

/// Writes `value` (at most 63) into the 6-bit field at bit `bit` of `bytes`. When the
/// field ends inside its first byte, the second byte is left alone (and may be past the
/// end of `bytes`).
#[inline]
pub fn set_at(bytes: &mut [u8], bit: usize, value: u8) {
    debug_assert!(value <= REGISTER_MAX);
    let (byte, shift) = (bit / 8, bit % 8);
    let field = u16::from(REGISTER_MAX) << shift;
    let new = u16::from(value) << shift;
    bytes[byte] = (u16::from(bytes[byte]) & !field | new) as u8;
    if shift + BITS > 8 {
        let b = &mut bytes[byte + 1];
        *b = ((u16::from(*b) << 8 & !field | new) >> 8) as u8;
    }
}

/// Register `index` of the dense registers `regs`.
#[inline]
pub fn get(regs: &[u8], index: usize) -> u8 {
    get_at(regs, index * BITS)
}

/// Sets register `index` of `regs` to `value`.
#[inline]
pub fn set(regs: &mut [u8], index: usize, value: u8) {
    set_at(regs, index * BITS, value)
}

/// Raises every byte of `max` to the register it stands for in the dense HLL `dense` (a
/// whole value, header included): `max[i] = max(max[i], register i)`, the union step of
/// PFCOUNT and PFMERGE, and, into zeros, plain unpacking.
pub fn unpack_max(dense: &[u8], max: &mut [u8; REGISTERS]) {
    assert_eq!(dense.len(), DENSE_BYTES);
    #[cfg(target_arch = "x86_64")]
    if super::simd::available() {
        super::simd::unpack_max(dense, max);
        return;
    }
    unpack_max_scalar(&dense[HEADER_BYTES..], max);
}

/// [`unpack_max`] of the registers `regs` (the value past its header), three bytes (four
/// registers) at a time.
pub fn unpack_max_scalar(regs: &[u8], max: &mut [u8; REGISTERS]) {
    assert_eq!(regs.len(), REGISTER_BYTES);
    for (src, dst) in regs.chunks_exact(3).zip(max.chunks_exact_mut(4)) {
        let x = u32::from(src[0]) | u32::from(src[1]) << 8 | u32::from(src[2]) << 16;
        for (k, d) in dst.iter_mut().enumerate() {
            *d = (*d).max((x >> (BITS * k)) as u8 & REGISTER_MAX);
        }
    }
}

/// The dense registers holding `registers` (each at most 63).
pub fn pack(registers: &[u8; REGISTERS]) -> Vec<u8> {
    let mut out = Vec::with_capacity(REGISTER_BYTES);
    for r in registers.chunks_exact(4) {
        let x =
            u32::from(r[0]) | u32::from(r[1]) << 6 | u32::from(r[2]) << 12 | u32::from(r[3]) << 18;
        out.extend_from_slice(&x.to_le_bytes()[..3]);
    }
    out
}

/// The histogram of the registers of the dense HLL `dense` (header included).
pub fn histogram(dense: &[u8]) -> Histogram {
    let mut bytes = [0u8; REGISTERS];
    unpack_max(dense, &mut bytes);
    histogram_of_bytes(&bytes)
}

/// The histogram of registers kept one byte each (every byte at most 63).
pub fn histogram_of_bytes(registers: &[u8; REGISTERS]) -> Histogram {
    #[cfg(target_arch = "x86_64")]
    if super::simd::available() {
        return super::simd::histogram(registers);
    }
    histogram_scalar(registers)
}

/// [`histogram_of_bytes`] with four tables, so that runs of equal registers (common: most
/// registers of an HLL hold one of a few values) do not wait on each other's increments.
pub fn histogram_scalar(registers: &[u8; REGISTERS]) -> Histogram {
    let mut tables = [[0u32; 64]; 4];
    for quad in registers.chunks_exact(4) {
        for (table, &r) in tables.iter_mut().zip(quad) {
            table[usize::from(r & REGISTER_MAX)] += 1;
        }
    }
    let mut out = [0u32; 64];
    for table in &tables {
        for (o, t) in out.iter_mut().zip(table) {
            *o += t;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::rng::Rng;

    #[test]
    fn fields_round_trip_without_touching_neighbours() {
        let mut regs = vec![0u8; REGISTER_BYTES];
        let mut model = [0u8; REGISTERS];
        let mut rng = Rng::new(7);
        for _ in 0..3 {
            for (i, m) in model.iter_mut().enumerate() {
                let v = (rng.next_u64() % 64) as u8;
                *m = v;
                set(&mut regs, i, v);
            }
            for (i, m) in model.iter().enumerate() {
                assert_eq!(get(&regs, i), *m, "register {i}");
            }
        }
        // The layout: register 0 in the low bits of byte 0, register 1 across bytes 0-1.
        let mut b = vec![0u8; 3];
        set(&mut b, 1, 0b111111);
        assert_eq!(b, [0b1100_0000, 0b0000_1111, 0]);
        set(&mut b, 3, 0b100001);
        assert_eq!(b, [0b1100_0000, 0b0000_1111, 0b1000_0100]);
    }

    #[test]
    fn the_last_register_needs_no_byte_after_the_array() {
        let mut regs = vec![0u8; REGISTER_BYTES];
        set(&mut regs, REGISTERS - 1, 63);
        assert_eq!(get(&regs, REGISTERS - 1), 63);
        assert_eq!(regs[REGISTER_BYTES - 1], 0b1111_1100);
    }

    #[test]
    fn unpack_pack_and_histogram_agree_with_single_reads() {
        let mut rng = Rng::new(11);
        let mut regs = vec![0u8; REGISTER_BYTES];
        for i in 0..REGISTERS {
            set(&mut regs, i, (rng.next_u64() % 64) as u8);
        }
        let mut bytes = [0u8; REGISTERS];
        unpack_max_scalar(&regs, &mut bytes);
        for (i, b) in bytes.iter().enumerate() {
            assert_eq!(*b, get(&regs, i));
        }
        assert_eq!(pack(&bytes), regs);
        let mut want = [0u32; 64];
        for b in bytes {
            want[usize::from(b)] += 1;
        }
        assert_eq!(histogram_scalar(&bytes), want);
        let mut value = vec![0u8; HEADER_BYTES];
        value.extend_from_slice(&regs);
        assert_eq!(histogram(&value), want);
        // Unpacking into a non-zero array keeps the larger of the two.
        let mut max = [30u8; REGISTERS];
        unpack_max(&value, &mut max);
        for (i, m) in max.iter().enumerate() {
            assert_eq!(*m, get(&regs, i).max(30));
        }
    }
}
