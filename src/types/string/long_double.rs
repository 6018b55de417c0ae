//! The x87 80-bit extended precision number ("long double" on x86-64), in software, with just
//! what INCRBYFLOAT needs: parse text the way glibc's `strtold` does, add with
//! round-to-nearest-even, and print as `%.17Lf`.
//!
//! Why not f64: Valkey computes INCRBYFLOAT in long double and prints 17 fractional digits.
//! The 64-bit mantissa hides the binary noise that an f64 shows (1.1 + 2.2 prints as `3.3`,
//! where f64 gives 3.3000000000000003), and large values print every digit of the exact
//! binary value (1e300 prints as 1000000000000000000008997...). Replies only match byte for
//! byte when the arithmetic is the same, so it is emulated exactly.
//!
//! ```text
//!  value = (-1)^neg * mant * 2^exp      mant: u64
//!  normal:    mant >= 2^63, EXP_MIN <= exp <= EXP_MAX
//!  subnormal: mant <  2^63, exp == EXP_MIN
//! ```
//!
//! Exact intermediate values use a small unsigned big integer ([`Big`]); the largest one is a
//! sum of two values 2^32765 apart, or a power of ten of about 10^10000 when parsing: a few
//! hundred 64-bit limbs.

use std::cmp::Ordering;

/// Binary exponent of the smallest values (mant * 2^EXP_MIN; x87: 2^-16382 with 63 more bits).
const EXP_MIN: i64 = -16445;
/// Binary exponent of the largest finite values (x87: 2^16383 with the 63 fraction bits).
const EXP_MAX: i64 = 16320;
/// Decimal exponents beyond which a parsed number surely overflows or rounds to zero: the
/// largest finite value is about 1.19e4932, half the smallest subnormal about 1.8e-4951.
const DEC_EXP_OVERFLOW: i64 = 4933;
const DEC_EXP_UNDERFLOW: i64 = -4952;
/// Bits of quotient kept when dividing while parsing: 64 for the mantissa, guard bits for
/// rounding (the remainder supplies the sticky bit).
const QUOTIENT_BITS: i64 = 66;
/// Valkey refuses number texts of this many bytes or more (`MAX_LONG_DOUBLE_CHARS`).
pub const TEXT_LEN_MAX: usize = 5 * 1024;
/// Fractional digits printed (`%.17Lf`).
const FRAC_DIGITS: u32 = 17;
const FRAC_SCALE: u128 = 10u128.pow(FRAC_DIGITS);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mag {
    Zero,
    Finite { mant: u64, exp: i64 },
    Inf,
}

/// An 80-bit extended precision number (never NaN: operations that would produce one fail).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LongDouble {
    neg: bool,
    mag: Mag,
}

impl LongDouble {
    pub const ZERO: LongDouble = LongDouble { neg: false, mag: Mag::Zero };

    /// The exact value of an integer (a 64-bit mantissa holds every i64).
    pub fn from_i64(n: i64) -> LongDouble {
        if n == 0 {
            return LongDouble::ZERO;
        }
        let m = n.unsigned_abs();
        let shift = m.leading_zeros();
        LongDouble { neg: n < 0, mag: Mag::Finite { mant: m << shift, exp: -(shift as i64) } }
    }

    pub fn is_finite(&self) -> bool {
        !matches!(self.mag, Mag::Inf)
    }

    /// Parse as Valkey's `string2ld`: `strtold` must consume the whole text, no leading
    /// space, not NaN, and a finite text must not overflow or round to zero. Decimal and
    /// hexadecimal (`0x1.8p3`) forms and `inf`/`infinity` are accepted, as glibc does.
    pub fn parse(text: &[u8]) -> Option<LongDouble> {
        if text.is_empty() || text.len() >= TEXT_LEN_MAX {
            return None;
        }
        let (neg, body) = match text[0] {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
            return Some(LongDouble { neg, mag: Mag::Inf });
        }
        let parsed = match body {
            [b'0', b'x' | b'X', rest @ ..] => parse_hex(rest)?,
            _ => parse_decimal(body)?,
        };
        let value = match parsed {
            Exact::Zero => return Some(LongDouble { neg, mag: Mag::Zero }),
            Exact::Overflow | Exact::Underflow => return None,
            Exact::Value { mag, exp2, sticky } => round(neg, &mag, exp2, sticky),
        };
        // Out of range: glibc reports ERANGE with HUGE_VAL or zero, which Valkey refuses.
        match value.mag {
            Mag::Finite { .. } => Some(value),
            Mag::Zero | Mag::Inf => None,
        }
    }

    /// The correctly rounded sum, or None when it is infinite or NaN.
    pub fn checked_add(self, other: LongDouble) -> Option<LongDouble> {
        let sum = match (self.mag, other.mag) {
            (Mag::Inf, _) | (_, Mag::Inf) => return None,
            (Mag::Zero, Mag::Zero) => LongDouble { neg: self.neg && other.neg, mag: Mag::Zero },
            (Mag::Zero, _) => other,
            (_, Mag::Zero) => self,
            (Mag::Finite { mant: ma, exp: ea }, Mag::Finite { mant: mb, exp: eb }) => {
                let exp = ea.min(eb);
                let a = Big::from_u64(ma).shl((ea - exp) as usize);
                let b = Big::from_u64(mb).shl((eb - exp) as usize);
                if self.neg == other.neg {
                    round(self.neg, &a.add(&b), exp, false)
                } else {
                    match a.cmp(&b) {
                        Ordering::Equal => LongDouble::ZERO,
                        Ordering::Greater => round(self.neg, &a.sub(&b), exp, false),
                        Ordering::Less => round(other.neg, &b.sub(&a), exp, false),
                    }
                }
            }
        };
        sum.is_finite().then_some(sum)
    }

    /// Valkey's human-friendly long double text: `%.17Lf` with trailing zeros (and then a
    /// trailing dot) removed, and `-0` written `0`.
    pub fn to_human_string(&self) -> String {
        let (mant, exp) = match self.mag {
            Mag::Zero => return "0".to_string(),
            Mag::Inf => return if self.neg { "-inf" } else { "inf" }.to_string(),
            Mag::Finite { mant, exp } => (mant, exp),
        };
        let sign = if self.neg { "-" } else { "" };
        if exp >= 0 {
            return format!("{sign}{}", Big::from_u64(mant).shl(exp as usize).to_decimal());
        }
        let (int_part, frac) = split_fraction(mant, (-exp) as u32);
        let text = format!("{sign}{int_part}.{frac:017}");
        let text = text.trim_end_matches('0').trim_end_matches('.');
        if text == "-0" {
            "0".to_string()
        } else {
            text.to_string()
        }
    }
}

/// `mant / 2^shift` as an integer part and 17 fractional digits, rounded to nearest with
/// ties to even on the last digit (as glibc's printf does on the exact binary value).
fn split_fraction(mant: u64, shift: u32) -> (u64, u64) {
    let (mut int_part, frac) =
        if shift < 64 { (mant >> shift, mant & ((1u64 << shift) - 1)) } else { (0, mant) };
    // frac < 2^64, so frac * 10^17 < 2^121: below half of 2^shift when shift > 121.
    let scaled = frac as u128 * FRAC_SCALE;
    if shift > 121 {
        return (int_part, 0);
    }
    let mut digits = scaled >> shift;
    let rest = scaled & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    if rest > half || (rest == half && digits & 1 == 1) {
        digits += 1;
        if digits == FRAC_SCALE {
            int_part += 1;
            digits = 0;
        }
    }
    (int_part, digits as u64)
}

/// An exact parsed magnitude: `mag * 2^exp2`, plus whether nonzero bits were cut below it.
enum Exact {
    Zero,
    Overflow,
    Underflow,
    Value { mag: Big, exp2: i64, sticky: bool },
}

/// Round `mag * 2^exp2` (+ a nonzero tail below it when `sticky`) to the nearest
/// representable value, ties to even, with gradual underflow and overflow to infinity.
fn round(neg: bool, mag: &Big, exp2: i64, sticky: bool) -> LongDouble {
    let bits = mag.bit_len() as i64;
    if bits == 0 {
        return LongDouble { neg, mag: Mag::Zero };
    }
    // Drop `shift` low bits to keep 64, or fewer when the result is subnormal.
    let shift = (bits - 64).max(EXP_MIN - exp2);
    let mut exp = exp2 + shift;
    let mut mant;
    if shift <= 0 {
        // At most 64 significant bits: exact.
        mant = mag.bits_from(0) << (-shift);
    } else {
        let s = shift as usize;
        mant = mag.bits_from(s);
        let half = mag.bit(s - 1);
        let below = sticky || mag.any_below(s - 1);
        if half && (below || mant & 1 == 1) {
            mant = mant.wrapping_add(1);
            if mant == 0 {
                // Carried out of 64 bits: 2^64 is 2^63 one binade up.
                mant = 1 << 63;
                exp += 1;
            }
        }
    }
    if mant == 0 {
        return LongDouble { neg, mag: Mag::Zero };
    }
    if exp > EXP_MAX {
        return LongDouble { neg, mag: Mag::Inf };
    }
    LongDouble { neg, mag: Mag::Finite { mant, exp } }
}

/// The optional exponent suffix (`e[+-]digits` or `p[+-]digits`): its value (saturated) when
/// the rest of the text is exactly one, 0 when the rest is empty, None otherwise (strtold
/// would stop before it and leave text unconsumed, which Valkey refuses).
fn parse_exponent(rest: &[u8], marker: u8) -> Option<i64> {
    let Some((&first, tail)) = rest.split_first() else { return Some(0) };
    if !first.eq_ignore_ascii_case(&marker) {
        return None;
    }
    let (neg, digits) = match tail.first() {
        Some(b'-') => (true, &tail[1..]),
        Some(b'+') => (false, &tail[1..]),
        _ => (false, tail),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // Saturate far beyond any representable exponent.
    let v = digits.iter().fold(0i64, |acc, &d| (acc * 10 + (d - b'0') as i64).min(1 << 40));
    Some(if neg { -v } else { v })
}

/// Split `digits[.digits]` (one digit at least) from the text; returns (integer digits,
/// fraction digits, rest).
fn split_mantissa(text: &[u8], is_digit: fn(&u8) -> bool) -> Option<(&[u8], &[u8], &[u8])> {
    let int_len = text.iter().take_while(|c| is_digit(c)).count();
    let (int_digits, rest) = text.split_at(int_len);
    let (frac_digits, rest) = match rest.split_first() {
        Some((b'.', after)) => {
            let n = after.iter().take_while(|c| is_digit(c)).count();
            after.split_at(n)
        }
        _ => (&rest[..0], rest),
    };
    if int_digits.is_empty() && frac_digits.is_empty() {
        return None;
    }
    Some((int_digits, frac_digits, rest))
}

fn parse_decimal(text: &[u8]) -> Option<Exact> {
    let (int_digits, frac_digits, rest) = split_mantissa(text, u8::is_ascii_digit)?;
    let exp10 = parse_exponent(rest, b'e')? - frac_digits.len() as i64;
    let all = int_digits.iter().chain(frac_digits.iter());
    let significant: Vec<u8> = all.skip_while(|&&d| d == b'0').map(|d| d - b'0').collect();
    if significant.is_empty() {
        return Some(Exact::Zero);
    }
    // 10^(n-1+e) <= value < 10^(n+e) with n significant digits.
    let n = significant.len() as i64;
    if n - 1 + exp10 > DEC_EXP_OVERFLOW {
        return Some(Exact::Overflow);
    }
    if n + exp10 < DEC_EXP_UNDERFLOW {
        return Some(Exact::Underflow);
    }
    let mut digits = Big::default();
    for chunk in significant.chunks(19) {
        let v = chunk.iter().fold(0u64, |acc, &d| acc * 10 + d as u64);
        digits.mul_small(10u64.pow(chunk.len() as u32));
        digits.add_small(v);
    }
    if exp10 >= 0 {
        let mut mag = digits;
        mag.mul_pow10(exp10 as u32);
        return Some(Exact::Value { mag, exp2: 0, sticky: false });
    }
    // digits / 10^-exp10: scale so the quotient has QUOTIENT_BITS bits, the remainder
    // becomes the sticky bit.
    let mut divisor = Big::from_u64(1);
    divisor.mul_pow10((-exp10) as u32);
    let scale = divisor.bit_len() as i64 - digits.bit_len() as i64 + QUOTIENT_BITS;
    let numerator = digits.shl(scale.max(0) as usize);
    let divisor = divisor.shl((-scale).max(0) as usize);
    let (quotient, rem_nonzero) = numerator.div_small_quotient(&divisor);
    Some(Exact::Value { mag: Big::from_u128(quotient), exp2: -scale, sticky: rem_nonzero })
}

fn parse_hex(text: &[u8]) -> Option<Exact> {
    let (int_digits, frac_digits, rest) = split_mantissa(text, u8::is_ascii_hexdigit)?;
    let exp2 = parse_exponent(rest, b'p')? - 4 * frac_digits.len() as i64;
    let mut mag = Big::default();
    for &d in int_digits.iter().chain(frac_digits.iter()) {
        let v = (d as char).to_digit(16).expect("hex digit") as u64;
        mag.mul_small(16);
        mag.add_small(v);
    }
    if mag.bit_len() == 0 {
        return Some(Exact::Zero);
    }
    let top = exp2 + mag.bit_len() as i64;
    if top > EXP_MAX + 65 {
        return Some(Exact::Overflow);
    }
    if top < EXP_MIN - 2 {
        return Some(Exact::Underflow);
    }
    Some(Exact::Value { mag, exp2, sticky: false })
}

/// An unsigned big integer, little-endian 64-bit limbs, no high zero limbs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Big(Vec<u64>);

impl Big {
    fn from_u64(v: u64) -> Big {
        let mut b = Big(vec![v]);
        b.trim();
        b
    }

    fn from_u128(v: u128) -> Big {
        let mut b = Big(vec![v as u64, (v >> 64) as u64]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn bit_len(&self) -> usize {
        match self.0.last() {
            None => 0,
            Some(&top) => self.0.len() * 64 - top.leading_zeros() as usize,
        }
    }

    fn limb(&self, i: usize) -> u64 {
        self.0.get(i).copied().unwrap_or(0)
    }

    fn bit(&self, i: usize) -> bool {
        self.limb(i / 64) >> (i % 64) & 1 == 1
    }

    /// Whether any bit below position `i` is set.
    fn any_below(&self, i: usize) -> bool {
        let (whole, part) = (i / 64, i % 64);
        self.0.iter().take(whole).any(|&l| l != 0)
            || (part > 0 && self.limb(whole) << (64 - part) != 0)
    }

    /// The 64 bits starting at bit `lo`.
    fn bits_from(&self, lo: usize) -> u64 {
        let (i, s) = (lo / 64, lo % 64);
        if s == 0 {
            self.limb(i)
        } else {
            self.limb(i) >> s | self.limb(i + 1) << (64 - s)
        }
    }

    fn mul_small(&mut self, m: u64) {
        let mut carry = 0u128;
        for l in self.0.iter_mut() {
            let v = *l as u128 * m as u128 + carry;
            *l = v as u64;
            carry = v >> 64;
        }
        if carry != 0 {
            self.0.push(carry as u64);
        }
        self.trim();
    }

    fn add_small(&mut self, a: u64) {
        let mut carry = a;
        for l in self.0.iter_mut() {
            if carry == 0 {
                break;
            }
            let (v, over) = l.overflowing_add(carry);
            *l = v;
            carry = over as u64;
        }
        if carry != 0 {
            self.0.push(carry);
        }
    }

    fn mul_pow10(&mut self, mut n: u32) {
        while n > 0 {
            let step = n.min(19);
            self.mul_small(10u64.pow(step));
            n -= step;
        }
    }

    fn shl(&self, n: usize) -> Big {
        if self.0.is_empty() {
            return Big::default();
        }
        let (whole, part) = (n / 64, n % 64);
        let mut out = vec![0u64; whole];
        out.reserve(self.0.len() + 1);
        if part == 0 {
            out.extend_from_slice(&self.0);
        } else {
            let mut carry = 0;
            for &l in &self.0 {
                out.push(l << part | carry);
                carry = l >> (64 - part);
            }
            out.push(carry);
        }
        let mut b = Big(out);
        b.trim();
        b
    }

    fn shr1(&mut self) {
        let mut carry = 0;
        for l in self.0.iter_mut().rev() {
            let next = *l << 63;
            *l = *l >> 1 | carry;
            carry = next;
        }
        self.trim();
    }

    fn add(&self, other: &Big) -> Big {
        let n = self.0.len().max(other.0.len());
        let mut out = Vec::with_capacity(n + 1);
        let mut carry = false;
        for i in 0..n {
            let (v, o1) = self.limb(i).overflowing_add(other.limb(i));
            let (v, o2) = v.overflowing_add(carry as u64);
            out.push(v);
            carry = o1 || o2;
        }
        out.push(carry as u64);
        let mut b = Big(out);
        b.trim();
        b
    }

    /// `self - other`; requires `self >= other`.
    fn sub(&self, other: &Big) -> Big {
        let mut out = self.clone();
        out.sub_assign(other);
        out
    }

    fn sub_assign(&mut self, other: &Big) {
        assert!(*self >= *other, "big integer subtraction would go negative");
        let mut borrow = false;
        for i in 0..self.0.len() {
            let (v, b1) = self.0[i].overflowing_sub(other.limb(i));
            let (v, b2) = v.overflowing_sub(borrow as u64);
            self.0[i] = v;
            borrow = b1 || b2;
        }
        self.trim();
    }

    /// Quotient (which must fit in 128 bits) and whether the remainder is nonzero.
    fn div_small_quotient(mut self, divisor: &Big) -> (u128, bool) {
        let span = self.bit_len() as i64 - divisor.bit_len() as i64;
        if span < 0 {
            return (0, self.bit_len() > 0);
        }
        assert!(span < 128, "quotient wider than 128 bits");
        let mut quotient = 0u128;
        let mut shifted = divisor.shl(span as usize);
        for i in (0..=span).rev() {
            if self >= shifted {
                self.sub_assign(&shifted);
                quotient |= 1 << i;
            }
            shifted.shr1();
        }
        (quotient, self.bit_len() > 0)
    }

    /// Remainder of dividing in place by a small divisor.
    fn div_rem_small(&mut self, d: u64) -> u64 {
        let mut rem = 0u128;
        for l in self.0.iter_mut().rev() {
            let cur = rem << 64 | *l as u128;
            *l = (cur / d as u128) as u64;
            rem = cur % d as u128;
        }
        self.trim();
        rem as u64
    }

    fn to_decimal(&self) -> String {
        const CHUNK: u64 = 10_000_000_000_000_000_000; // 10^19
        let mut n = self.clone();
        let mut chunks = Vec::new();
        while n.bit_len() > 0 {
            chunks.push(n.div_rem_small(CHUNK));
        }
        let Some((top, rest)) = chunks.split_last() else { return "0".to_string() };
        let mut s = top.to_string();
        for c in rest.iter().rev() {
            s.push_str(&format!("{c:019}"));
        }
        s
    }
}

impl PartialOrd for Big {
    fn partial_cmp(&self, other: &Big) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Big {
    fn cmp(&self, other: &Big) -> Ordering {
        self.0.len().cmp(&other.0.len()).then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incr(a: &str, b: &str) -> Option<String> {
        let x = LongDouble::parse(a.as_bytes()).expect("a parses");
        let y = LongDouble::parse(b.as_bytes()).expect("b parses");
        x.checked_add(y).map(|v| v.to_human_string())
    }

    #[test]
    fn sums_print_as_valkey_does() {
        // Expected texts were read from redis-server 7.0 on x86-64.
        assert_eq!(incr("10.5", "0.1").as_deref(), Some("10.6"));
        assert_eq!(incr("10.6", "-5").as_deref(), Some("5.6"));
        assert_eq!(incr("5.0e3", "2.0e2").as_deref(), Some("5200"));
        assert_eq!(incr("1.1", "2.2").as_deref(), Some("3.3"));
        assert_eq!(incr("12345678.9", "0.1").as_deref(), Some("12345679"));
        assert_eq!(incr("12345679", "0x10").as_deref(), Some("12345695"));
        assert_eq!(incr("0", "0.1e-20").as_deref(), Some("0"));
        assert_eq!(incr("0", "-0.0").as_deref(), Some("0"));
        assert_eq!(incr("9223372036854775807", "1").as_deref(), Some("9223372036854775808"));
        let big = incr("12345695", "1e300").expect("finite");
        assert!(big.starts_with("1000000000000000000008997324079559193870523944273290747938"));
        assert!(big.ends_with("424915104006144"));
        assert_eq!(incr("1e4932", "1.1e4932"), None);
    }

    #[test]
    fn parse_follows_strtold() {
        let p = |s: &str| LongDouble::parse(s.as_bytes()).map(|v| v.to_human_string());
        assert_eq!(p("0x1p3").as_deref(), Some("8"));
        assert_eq!(p("0x1.8p-1").as_deref(), Some("0.75"));
        assert_eq!(p("0x.8").as_deref(), Some("0.5"));
        assert_eq!(p(".5e1").as_deref(), Some("5"));
        assert_eq!(p("+.5").as_deref(), Some("0.5"));
        assert_eq!(p("-inf").as_deref(), Some("-inf"));
        assert_eq!(p("1e-4950").as_deref(), Some("0"));
        for bad in [
            "", " 1", "1 ", "1\t", ".", "-", "0x", "5.e", "5.e+", "nan", "1e-4951", "1.2e4932",
            "1.5\0x", "infin", "0xp1",
        ] {
            assert_eq!(p(bad), None, "{bad:?} must be refused");
        }
        assert_eq!(LongDouble::parse(&[b'1'; TEXT_LEN_MAX]), None);
    }

    #[test]
    fn integers_are_exact() {
        for n in [0, 1, -1, 42, i64::MAX, i64::MIN, 1 << 53 | 1] {
            assert_eq!(LongDouble::from_i64(n).to_human_string(), n.to_string());
            assert_eq!(LongDouble::parse(n.to_string().as_bytes()), Some(LongDouble::from_i64(n)));
        }
    }

    #[test]
    fn rounding_to_even_at_a_tie() {
        // 2^64 + 1 lies halfway between 2^64 and 2^64 + 2: ties go to the even mantissa.
        let v = LongDouble::parse(b"18446744073709551617").expect("parses");
        assert_eq!(v.to_human_string(), "18446744073709551616");
        let v = LongDouble::parse(b"18446744073709551619").expect("parses");
        assert_eq!(v.to_human_string(), "18446744073709551620");
    }
}
