//! Bit-level algorithms on byte strings, for the bitmap commands: population count over a
//! bit range, the first set or clear bit of a range, the bitwise combination of several
//! strings (BITOP), and fixed-width integers at any bit offset with Valkey's overflow rules
//! (BITFIELD). Pure functions over slices: they know nothing of keys, RESP or the keyspace,
//! allocate nothing (the caller owns every buffer), and are measured by `benches/bitops.rs`.
//!
//! # Bit numbering
//!
//! A string is a row of bits, numbered from the most significant bit of its first byte, as
//! SETBIT, GETBIT, BITPOS and BITFIELD (and Valkey's RDB bytes) see it:
//!
//! ```text
//!   byte      0                               1
//!           +---+---+---+---+---+---+---+---+---+---+---+- - -
//!   bit     | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 |10 |
//!           +---+---+---+---+---+---+---+---+---+---+---+- - -
//!            0x80                        0x01 0x80
//! ```
//!
//! Bit `n` is `0x80 >> (n % 8)` of byte `n / 8`. A field of up to 64 bits starting at bit
//! `n` is a big-endian integer spread over at most 9 bytes from `n / 8` (its *window*): a
//! field at bit 7 of 64 bits touches one bit of byte 0, all of bytes 1 to 7, and 7 bits of
//! byte 8. Bits past the end of a string read as zero.
//!
//! # Speed
//!
//! Counting, searching and combining run over whole 8-byte words or over byte slices in
//! loops the compiler vectorises (`count_ones` of each word, a word-wide "any bit differs"
//! test, element-wise AND/OR/XOR/NOT). The baseline x86-64 target has 16-byte vectors and
//! no POPCNT instruction, so on x86-64 the hot loops are also compiled for AVX2 (32-byte
//! vectors; the population count through byte lookups, `vpshufb`), and the count once more
//! for AVX-512 with VPOPCNTDQ (one `vpopcntq` per 64 bytes: about four times the AVX2 copy
//! on a 1 MiB value in cache, `benches/bitops.rs`); the widest copy the CPU has is chosen
//! at run time ([`std::is_x86_feature_detected`], a cached load). That call is this module's
//! one use of `unsafe`: running code compiled for features the CPU was just checked to
//! have. Every copy computes the same thing from the same source; the tests run each one
//! the CPU can. Past the cache the loops run at memory speed whichever copy runs.

/// Population count of `bytes`.
pub fn count_ones(bytes: &[u8]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if has_avx512_popcount() {
        // SAFETY: the CPU has AVX-512 F, VL and VPOPCNTDQ (checked at run time), all that
        // calling a function compiled for them requires.
        return unsafe { count_ones_avx512(bytes) };
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU has AVX2 and POPCNT (checked at run time), all that calling a
        // function compiled for them requires.
        return unsafe { count_ones_avx2(bytes) };
    }
    count_ones_words(bytes)
}

/// Whether this CPU runs the AVX2 copies of the hot loops.
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx2() -> bool {
    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt")
}

/// Whether this CPU counts bits of 64-byte vectors in one instruction (VPOPCNTQ).
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx512_popcount() -> bool {
    std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512vl")
        && std::is_x86_feature_detected!("avx512vpopcntdq")
        && std::is_x86_feature_detected!("popcnt")
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
fn count_ones_avx2(bytes: &[u8]) -> u64 {
    count_ones_words(bytes)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512vpopcntdq,popcnt")]
fn count_ones_avx512(bytes: &[u8]) -> u64 {
    count_ones_words(bytes)
}

/// The word-wide population count both copies are compiled from.
#[inline(always)]
fn count_ones_words(bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(8);
    let mut n = 0u64;
    for w in &mut words {
        n += u64::from_ne_bytes(w.try_into().expect("8 bytes")).count_ones() as u64;
    }
    n + words.remainder().iter().map(|b| b.count_ones() as u64).sum::<u64>()
}

/// The bits of a byte at and after bit `n % 8` of it.
fn from_bit_mask(n: u64) -> u8 {
    0xff >> (n % 8)
}

/// The bits of a byte up to and including bit `n % 8` of it.
fn through_bit_mask(n: u64) -> u8 {
    !((0xffu32 >> (n % 8 + 1)) as u8)
}

/// Set bits among bits `first..=last` of `bytes` (BITCOUNT). The range must lie inside the
/// string.
pub fn count_range(bytes: &[u8], first: u64, last: u64) -> u64 {
    assert!(first <= last && last / 8 < bytes.len() as u64, "bit range outside the string");
    let (head, tail) = ((first / 8) as usize, (last / 8) as usize);
    let all = count_ones(&bytes[head..=tail]);
    let before = (bytes[head] & !from_bit_mask(first)).count_ones() as u64;
    let after = (bytes[tail] & !through_bit_mask(last)).count_ones() as u64;
    all - before - after
}

/// The first bit equal to `bit` among bits `first..=last` of `bytes` (BITPOS), or None. The
/// range must lie inside the string.
pub fn find_bit(bytes: &[u8], bit: bool, first: u64, last: u64) -> Option<u64> {
    assert!(first <= last && last / 8 < bytes.len() as u64, "bit range outside the string");
    let (head, tail) = ((first / 8) as usize, (last / 8) as usize);
    // A byte with ones where the bits sought are: looking for a 0 means looking at !byte.
    let sought = |i: usize| if bit { bytes[i] } else { !bytes[i] };
    let at = |i: usize, m: u8| (m != 0).then(|| i as u64 * 8 + m.leading_zeros() as u64);
    if head == tail {
        return at(head, sought(head) & from_bit_mask(first) & through_bit_mask(last));
    }
    if let Some(pos) = at(head, sought(head) & from_bit_mask(first)) {
        return Some(pos);
    }
    let skip = if bit { 0x00 } else { 0xff };
    if let Some(i) = first_byte_not(&bytes[head + 1..tail], skip) {
        return at(head + 1 + i, sought(head + 1 + i));
    }
    at(tail, sought(tail) & through_bit_mask(last))
}

/// Bytes tested at once by [`first_byte_not`] before it looks closer: four cache lines, so
/// that each block's horizontal OR and branch are paid once per 256 bytes (twice as fast as
/// 64-byte blocks on a 1 MiB value in cache, `benches/bitops.rs`); the block that differs
/// costs at most 256 byte comparisons, once.
const SCAN_BLOCK_BYTES: usize = 256;

/// Index of the first byte of `bytes` other than `skip`.
fn first_byte_not(bytes: &[u8], skip: u8) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU has AVX2 (checked at run time), all that calling a function
        // compiled for it requires.
        return unsafe { first_byte_not_avx2(bytes, skip) };
    }
    first_byte_not_blocks(bytes, skip)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn first_byte_not_avx2(bytes: &[u8], skip: u8) -> Option<usize> {
    first_byte_not_blocks(bytes, skip)
}

/// The search both copies are compiled from: whole blocks are tested with one OR of their
/// words XOR the skipped pattern (vectorised), then the block that differs is looked at
/// byte by byte.
#[inline(always)]
fn first_byte_not_blocks(bytes: &[u8], skip: u8) -> Option<usize> {
    let pattern = u64::from_ne_bytes([skip; 8]);
    let mut start = 0;
    for block in bytes.chunks_exact(SCAN_BLOCK_BYTES) {
        let differs = block
            .chunks_exact(8)
            .fold(0, |acc, w| acc | (u64::from_ne_bytes(w.try_into().expect("8 bytes")) ^ pattern));
        if differs != 0 {
            break;
        }
        start += SCAN_BLOCK_BYTES;
    }
    bytes[start..].iter().position(|&b| b != skip).map(|i| start + i)
}

/// A BITOP operator (Valkey 9.1 has these four; no DIFF, ONE or ANDOR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOp {
    And,
    Or,
    Xor,
    /// Takes exactly one source.
    Not,
}

/// Bytes `at..at + out.len()` of `op` applied to `sources`, each read as zeros past its end
/// (BITOP's rule), written to `out`. The caller produces a long result piece by piece, with
/// `out` small enough to stay in the first-level cache while every source passes over it.
pub fn combine(op: BitOp, sources: &[&[u8]], at: usize, out: &mut [u8]) {
    assert!(!sources.is_empty(), "BITOP needs a source");
    assert!(op != BitOp::Not || sources.len() == 1, "BITOP NOT takes one source");
    let first = under(sources[0], at, out.len());
    out[..first.len()].copy_from_slice(first);
    out[first.len()..].fill(0);
    for s in &sources[1..] {
        let s = under(s, at, out.len());
        combine_into(op, &mut out[..s.len()], s);
        if op == BitOp::And {
            out[s.len()..].fill(0);
        }
    }
    if op == BitOp::Not {
        combine_into(op, out, &[]);
    }
}

/// The bytes of `s` from `at`, at most `len` of them (none when `s` ends before `at`).
fn under(s: &[u8], at: usize, len: usize) -> &[u8] {
    let tail = s.get(at..).unwrap_or(&[]);
    &tail[..tail.len().min(len)]
}

/// `out = out op src` over `src.len()` bytes (`out = !out` for NOT, which ignores `src`).
fn combine_into(op: BitOp, out: &mut [u8], src: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU has AVX2 (checked at run time), all that calling a function
        // compiled for it requires.
        return unsafe { combine_into_avx2(op, out, src) };
    }
    combine_into_bytes(op, out, src);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn combine_into_avx2(op: BitOp, out: &mut [u8], src: &[u8]) {
    combine_into_bytes(op, out, src);
}

/// The element-wise loops both copies are compiled from: one branch per operator outside
/// the loop, so that each loop is a plain vectorisable zip.
#[inline(always)]
fn combine_into_bytes(op: BitOp, out: &mut [u8], src: &[u8]) {
    match op {
        BitOp::And => out.iter_mut().zip(src).for_each(|(o, s)| *o &= s),
        BitOp::Or => out.iter_mut().zip(src).for_each(|(o, s)| *o |= s),
        BitOp::Xor => out.iter_mut().zip(src).for_each(|(o, s)| *o ^= s),
        BitOp::Not => out.iter_mut().for_each(|o| *o = !*o),
    }
}

/// What BITFIELD does when a SET or INCRBY result does not fit its field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Keep the low bits (two's complement wrap for signed fields): the default.
    Wrap,
    /// Clamp to the field's minimum or maximum.
    Sat,
    /// Write nothing; the command replies nil for that operation.
    Fail,
}

/// Bytes a field window spans: enough for 64 bits starting at any bit of its first byte.
pub const WINDOW_BYTES: usize = 9;

/// A BITFIELD integer type: `i1` to `i64` or `u1` to `u63` (an unsigned 64-bit value would
/// not fit RESP's signed integer reply, so Valkey refuses `u64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    signed: bool,
    bits: u32,
}

impl Field {
    /// The type, or None for a width outside `i1..=i64` / `u1..=u63`.
    pub fn new(signed: bool, bits: u32) -> Option<Field> {
        let widest = if signed { 64 } else { 63 };
        (1..=widest).contains(&bits).then_some(Field { signed, bits })
    }

    pub fn bits(self) -> u32 {
        self.bits
    }

    fn mask(self) -> u64 {
        u64::MAX >> (64 - self.bits)
    }

    /// The smallest and largest values of the type.
    fn range(self) -> (i128, i128) {
        let span = 1i128 << self.bits;
        if self.signed {
            (-span / 2, span / 2 - 1)
        } else {
            (0, span - 1)
        }
    }

    /// The field at bit `shift` (0..8) of `window` (see the module's bit numbering): sign
    /// extended for a signed type.
    pub fn read(self, window: &[u8; WINDOW_BYTES], shift: u32) -> i64 {
        debug_assert!(shift < 8);
        let raw = (window_word(window) >> (72 - shift - self.bits)) as u64 & self.mask();
        if self.signed && self.bits < 64 && raw >> (self.bits - 1) != 0 {
            (raw | !self.mask()) as i64
        } else {
            raw as i64
        }
    }

    /// Store `value` (its low bits) as the field at bit `shift` (0..8) of `window`.
    pub fn write(self, window: &mut [u8; WINDOW_BYTES], shift: u32, value: i64) {
        debug_assert!(shift < 8);
        let at = 72 - shift - self.bits;
        let mask = (self.mask() as u128) << at;
        let word = (window_word(window) & !mask) | (((value as u64 & self.mask()) as u128) << at);
        window.copy_from_slice(&word.to_be_bytes()[16 - WINDOW_BYTES..]);
    }

    /// The field at bit `offset` of `bytes`, reading zeros past the end (BITFIELD GET).
    pub fn get(self, bytes: &[u8], offset: u64) -> i64 {
        let mut window = [0u8; WINDOW_BYTES];
        let start = usize::try_from(offset / 8).unwrap_or(usize::MAX).min(bytes.len());
        let end = bytes.len().min(start.saturating_add(WINDOW_BYTES));
        window[..end - start].copy_from_slice(&bytes[start..end]);
        self.read(&window, (offset % 8) as u32)
    }

    /// Bytes the field at bit `offset` covers, from its first: 1 to 9.
    pub fn span_bytes(self, offset: u64) -> usize {
        ((offset % 8 + self.bits as u64).div_ceil(8)) as usize
    }

    /// The value SET stores for `value`, or None when it does not fit and `overflow` is
    /// FAIL. An unsigned field reads `value` as its 64-bit two's complement pattern, so a
    /// negative value overflows upwards (Valkey's rule: `SET u8 0 -1` saturates to 255).
    ///
    /// One more rule of Valkey's: its signed check computes `max - value` in 64 bits, and for
    /// a value so far below the minimum that this wraps (below `max - i64::MAX`: `i8` from
    /// about `i64::MIN + 127`, any value under the minimum of `i63`) it reports an overflow
    /// upwards, so SAT stores the maximum.
    pub fn set_value(self, value: i64, overflow: Overflow) -> Option<i64> {
        let v = if self.signed { value as i128 } else { value as u64 as i128 };
        let (_, max) = self.range();
        let wrongly_up = self.signed && max - v > i64::MAX as i128;
        self.fit(v, overflow, wrongly_up)
    }

    /// The value INCRBY stores (and replies) for `old + incr`, or None when the sum does
    /// not fit and `overflow` is FAIL.
    pub fn incr_value(self, old: i64, incr: i64, overflow: Overflow) -> Option<i64> {
        self.fit(old as i128 + incr as i128, overflow, false)
    }

    /// `v` when the type holds it, else what `overflow` makes of it (`up`: saturate to the
    /// maximum whatever the side `v` lies on).
    fn fit(self, v: i128, overflow: Overflow, up: bool) -> Option<i64> {
        let (min, max) = self.range();
        if (min..=max).contains(&v) {
            return Some(v as i64);
        }
        match overflow {
            Overflow::Wrap => {
                let span = 1i128 << self.bits;
                let low = v.rem_euclid(span);
                Some(if low > max { low - span } else { low } as i64)
            }
            Overflow::Sat if up => Some(max as i64),
            Overflow::Sat => Some(v.clamp(min, max) as i64),
            Overflow::Fail => None,
        }
    }
}

/// The 9 window bytes as one big-endian 72-bit number.
fn window_word(window: &[u8; WINDOW_BYTES]) -> u128 {
    let mut word = [0u8; 16];
    word[16 - WINDOW_BYTES..].copy_from_slice(window);
    u128::from_be_bytes(word)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::rng::Rng;

    /// Random bytes, biased towards runs of 0x00 and 0xff (where the word-wide skips act).
    fn random_bytes(rng: &mut Rng, len: usize) -> Vec<u8> {
        let style = rng.below(3);
        (0..len)
            .map(|_| match (style, rng.below(64)) {
                (0, _) => rng.next_u64() as u8,
                (1, 0) | (2, 0) => rng.next_u64() as u8,
                (1, _) => 0x00,
                _ => 0xff,
            })
            .collect()
    }

    fn bit_at(bytes: &[u8], n: u64) -> bool {
        bytes.get((n / 8) as usize).is_some_and(|b| b & (0x80 >> (n % 8)) != 0)
    }

    #[test]
    fn popcount_matches_a_bit_loop_in_both_copies() {
        let mut rng = Rng::new(11);
        for len in (0..300).chain([4095, 4096, 65_537]) {
            let bytes = random_bytes(&mut rng, len);
            let expected: u64 = bytes.iter().map(|b| b.count_ones() as u64).sum();
            // Every alignment of the start, too.
            for skip in 0..len.min(9) {
                let naive: u64 = bytes[skip..].iter().map(|b| b.count_ones() as u64).sum();
                assert_eq!(count_ones(&bytes[skip..]), naive, "len {len} skip {skip}");
                assert_eq!(count_ones_words(&bytes[skip..]), naive);
                #[cfg(target_arch = "x86_64")]
                if has_avx2() {
                    // SAFETY: AVX2 and POPCNT were just detected.
                    assert_eq!(unsafe { count_ones_avx2(&bytes[skip..]) }, naive);
                }
                #[cfg(target_arch = "x86_64")]
                if has_avx512_popcount() {
                    // SAFETY: the AVX-512 features were just detected.
                    assert_eq!(unsafe { count_ones_avx512(&bytes[skip..]) }, naive);
                }
            }
            assert_eq!(count_ones(&bytes), expected);
        }
    }

    #[test]
    fn range_count_and_search_match_a_bit_loop() {
        let mut rng = Rng::new(12);
        for round in 0..3000 {
            let len = 1 + rng.below(if round % 10 == 0 { 600 } else { 40 });
            let bytes = random_bytes(&mut rng, len);
            let bits = len as u64 * 8;
            let a = rng.below(bits as usize) as u64;
            let b = rng.below(bits as usize) as u64;
            let (first, last) = (a.min(b), a.max(b));
            let ones = (first..=last).filter(|&n| bit_at(&bytes, n)).count() as u64;
            assert_eq!(count_range(&bytes, first, last), ones, "{bytes:?} {first}..={last}");
            for bit in [false, true] {
                let naive = (first..=last).find(|&n| bit_at(&bytes, n) == bit);
                assert_eq!(find_bit(&bytes, bit, first, last), naive, "{bit} {first}..={last}");
            }
        }
    }

    #[test]
    fn both_copies_of_the_byte_search_agree() {
        let mut rng = Rng::new(15);
        for len in 0..700 {
            for skip in [0x00u8, 0xff] {
                let mut bytes = vec![skip; len];
                if len > 0 && rng.below(4) != 0 {
                    let at = rng.below(len);
                    bytes[at] ^= 1 << rng.below(8);
                }
                let naive = bytes.iter().position(|&b| b != skip);
                assert_eq!(first_byte_not_blocks(&bytes, skip), naive);
                #[cfg(target_arch = "x86_64")]
                if has_avx2() {
                    // SAFETY: AVX2 was just detected.
                    assert_eq!(unsafe { first_byte_not_avx2(&bytes, skip) }, naive);
                }
            }
        }
    }

    #[test]
    fn long_runs_are_skipped_to_the_right_byte() {
        for (fill, bit) in [(0x00u8, true), (0xff, false)] {
            for at in [0usize, 1, 63, 64, 65, 200, 255, 256, 257, 767, 768, 1023] {
                let mut bytes = vec![fill; 1024];
                bytes[at] ^= 0x04;
                let found = find_bit(&bytes, bit, 0, 1024 * 8 - 1);
                assert_eq!(found, Some(at as u64 * 8 + 5), "fill {fill:#x} at {at}");
                assert_eq!(find_bit(&bytes, bit, at as u64 * 8 + 6, 1024 * 8 - 1), None);
            }
        }
    }

    fn naive_combine(op: BitOp, sources: &[&[u8]]) -> Vec<u8> {
        let len = sources.iter().map(|s| s.len()).max().unwrap_or(0);
        (0..len)
            .map(|i| {
                let byte = |s: &[u8]| s.get(i).copied().unwrap_or(0);
                let mut acc = byte(sources[0]);
                for s in &sources[1..] {
                    acc = match op {
                        BitOp::And => acc & byte(s),
                        BitOp::Or => acc | byte(s),
                        BitOp::Xor => acc ^ byte(s),
                        BitOp::Not => unreachable!(),
                    };
                }
                if op == BitOp::Not {
                    !acc
                } else {
                    acc
                }
            })
            .collect()
    }

    #[test]
    fn combining_piecewise_matches_a_byte_loop() {
        let mut rng = Rng::new(13);
        for round in 0..400 {
            let op = [BitOp::And, BitOp::Or, BitOp::Xor, BitOp::Not][round % 4];
            let n = if op == BitOp::Not { 1 } else { 1 + rng.below(5) };
            let sources: Vec<Vec<u8>> = (0..n)
                .map(|_| {
                    let len = rng.below(700);
                    random_bytes(&mut rng, len)
                })
                .collect();
            let refs: Vec<&[u8]> = sources.iter().map(Vec::as_slice).collect();
            let expected = naive_combine(op, &refs);
            let piece = 1 + rng.below(100);
            let mut got = vec![0x5a; expected.len()];
            for (i, out) in got.chunks_mut(piece).enumerate() {
                combine(op, &refs, i * piece, out);
            }
            assert_eq!(got, expected, "{op:?} of {n} sources, pieces of {piece}");
        }
    }

    fn naive_get(bytes: &[u8], offset: u64, bits: u32, signed: bool) -> i64 {
        let mut v: u64 = 0;
        for i in 0..bits as u64 {
            v = v << 1 | bit_at(bytes, offset + i) as u64;
        }
        if signed && bits < 64 && v >> (bits - 1) != 0 {
            v |= u64::MAX << bits;
        }
        v as i64
    }

    #[test]
    fn fields_read_and_write_any_width_at_any_offset() {
        let mut rng = Rng::new(14);
        for _ in 0..5000 {
            let signed = rng.below(2) == 0;
            let bits = 1 + rng.below(if signed { 64 } else { 63 }) as u32;
            let field = Field::new(signed, bits).expect("valid width");
            let bytes = random_bytes(&mut rng, 12);
            let offset = rng.below(12 * 8 + 20) as u64;
            assert_eq!(field.get(&bytes, offset), naive_get(&bytes, offset, bits, signed));
            let value = rng.next_u64() as i64;
            if offset + bits as u64 > 12 * 8 {
                continue;
            }
            let (start, shift) = ((offset / 8) as usize, (offset % 8) as u32);
            let mut window = [0u8; WINDOW_BYTES];
            let end = (start + WINDOW_BYTES).min(12);
            window[..end - start].copy_from_slice(&bytes[start..end]);
            field.write(&mut window, shift, value);
            let mut written = bytes.clone();
            written[start..end].copy_from_slice(&window[..end - start]);
            for n in 0..12 * 8 {
                let inside = (offset..offset + bits as u64).contains(&n);
                let expected = if inside {
                    value as u64 >> (offset + bits as u64 - 1 - n) & 1 == 1
                } else {
                    bit_at(&bytes, n)
                };
                assert_eq!(bit_at(&written, n), expected, "bit {n} of {field:?} at {offset}");
            }
            let (first_byte, last_byte) = (offset / 8, (offset + bits as u64 - 1) / 8);
            assert_eq!(field.span_bytes(offset), (last_byte - first_byte + 1) as usize);
            let back = field.get(&written, offset);
            assert_eq!(back, naive_get(&written, offset, bits, signed));
        }
    }

    #[test]
    fn widths_are_those_valkey_accepts() {
        assert_eq!(Field::new(true, 0), None);
        assert_eq!(Field::new(false, 0), None);
        assert!(Field::new(true, 64).is_some());
        assert_eq!(Field::new(false, 64), None);
        assert!(Field::new(false, 63).is_some());
        assert_eq!(Field::new(true, 65), None);
    }

    #[test]
    fn overflow_rules() {
        use Overflow::{Fail, Sat, Wrap};
        let u8_ = Field::new(false, 8).expect("u8");
        let i8_ = Field::new(true, 8).expect("i8");
        let i1 = Field::new(true, 1).expect("i1");
        let u63 = Field::new(false, 63).expect("u63");
        let i64_ = Field::new(true, 64).expect("i64");
        assert_eq!(u8_.set_value(255, Fail), Some(255));
        assert_eq!(u8_.set_value(256, Wrap), Some(0));
        assert_eq!(u8_.set_value(256, Sat), Some(255));
        assert_eq!(u8_.set_value(256, Fail), None);
        // A negative value is a huge unsigned one: it overflows upwards.
        assert_eq!(u8_.set_value(-1, Sat), Some(255));
        assert_eq!(u8_.set_value(-1, Wrap), Some(255));
        assert_eq!(u8_.set_value(-2, Wrap), Some(254));
        assert_eq!(u8_.incr_value(200, 100, Wrap), Some(44));
        assert_eq!(u8_.incr_value(200, 100, Sat), Some(255));
        assert_eq!(u8_.incr_value(5, -10, Sat), Some(0));
        assert_eq!(u8_.incr_value(5, -10, Wrap), Some(251));
        assert_eq!(u8_.incr_value(5, i64::MIN, Wrap), Some(5));
        assert_eq!(i8_.incr_value(127, 1, Wrap), Some(-128));
        assert_eq!(i8_.incr_value(127, 1, Sat), Some(127));
        assert_eq!(i8_.incr_value(-128, -1, Wrap), Some(127));
        assert_eq!(i8_.incr_value(-128, -1, Sat), Some(-128));
        assert_eq!(i8_.incr_value(-128, -1, Fail), None);
        assert_eq!(i8_.set_value(200, Wrap), Some(-56));
        assert_eq!(i1.set_value(1, Wrap), Some(-1));
        assert_eq!(i1.set_value(1, Sat), Some(0));
        assert_eq!(u63.set_value(-1, Wrap), Some(i64::MAX));
        assert_eq!(i64_.set_value(i64::MIN, Fail), Some(i64::MIN));
        assert_eq!(i64_.incr_value(i64::MAX, 1, Wrap), Some(i64::MIN));
        assert_eq!(i64_.incr_value(i64::MAX, 1, Sat), Some(i64::MAX));
        assert_eq!(i64_.incr_value(i64::MIN, i64::MIN, Wrap), Some(0));
        assert_eq!(i64_.incr_value(i64::MIN, i64::MIN, Sat), Some(i64::MIN));
        // Valkey's 64-bit `max - value` wraps for values far below the minimum: SAT then
        // stores the maximum (checked against Valkey 9.1).
        let i63 = Field::new(true, 63).expect("i63");
        assert_eq!(i8_.set_value(i64::MIN, Sat), Some(127));
        assert_eq!(i8_.set_value(-9_223_372_036_854_775_681, Sat), Some(127));
        assert_eq!(i8_.set_value(-9_223_372_036_854_775_680, Sat), Some(-128));
        assert_eq!(i8_.set_value(i64::MIN, Wrap), Some(0));
        assert_eq!(i63.set_value(-(1 << 62) - 1, Sat), Some((1 << 62) - 1));
        assert_eq!(i63.set_value(-(1 << 62), Sat), Some(-(1 << 62)));
        assert_eq!(i64_.set_value(i64::MIN, Sat), Some(i64::MIN));
    }

    /// BITFIELD's reads and writes against a model that keeps one bool per bit: random
    /// types, offsets (within a byte and across up to nine bytes) and values, and the
    /// overflow arithmetic against i128 sums.
    #[test]
    fn fields_match_a_bit_by_bit_model() {
        let mut rng = Rng::new(1919);
        let mut bytes = vec![0u8; 64];
        let mut model = vec![false; 64 * 8];
        for _ in 0..20_000 {
            let signed = rng.below(2) == 0;
            let bits = 1 + rng.below(if signed { 64 } else { 63 }) as u32;
            let f = Field::new(signed, bits).expect("a valid type");
            let offset = rng.below(64 * 8 - bits as usize) as u64;
            // Read: the model's bits, most significant first, sign-extended.
            let raw = (0..bits as u64)
                .fold(0u128, |acc, i| (acc << 1) | model[(offset + i) as usize] as u128);
            let want = if signed && raw >> (bits - 1) == 1 {
                (raw as i128 - (1i128 << bits)) as i64
            } else {
                raw as i64
            };
            assert_eq!(f.get(&bytes, offset), want, "{signed} {bits} at {offset}");
            // Write a random value through a window, as BITFIELD SET does.
            let value = rng.next_u64() as i64 >> rng.below(64);
            let start = (offset / 8) as usize;
            let mut window = [0u8; WINDOW_BYTES];
            let end = bytes.len().min(start + WINDOW_BYTES);
            window[..end - start].copy_from_slice(&bytes[start..end]);
            f.write(&mut window, (offset % 8) as u32, value);
            bytes[start..end].copy_from_slice(&window[..end - start]);
            for i in 0..bits as u64 {
                model[(offset + i) as usize] = (value as u64 >> (bits as u64 - 1 - i)) & 1 == 1;
            }
            for (n, &bit) in model.iter().enumerate() {
                assert_eq!(bytes[n / 8] >> (7 - n % 8) & 1 == 1, bit, "bit {n}");
            }
            // INCRBY wraps as arithmetic modulo 2^bits.
            let incr = rng.next_u64() as i64 >> rng.below(64);
            let old = f.get(&bytes, offset);
            let wrapped = f.incr_value(old, incr, Overflow::Wrap).expect("wrap always fits");
            let span = 1i128 << bits;
            assert_eq!(
                (wrapped as i128).rem_euclid(span),
                (old as i128 + incr as i128).rem_euclid(span)
            );
        }
    }
}
