//! Scores and ranges as the wire gives them: Valkey's `valkey_strtod` rules for numbers, `(` for an
//! exclusive score bound, `[`/`(`/`-`/`+` for lex bounds, and the score text a listpack
//! stores. Pure functions; no error text (the commands map `None` to their error).

use std::cmp::Ordering;

/// A score interval (ZRANGEBYSCORE, ZCOUNT, ZREMRANGEBYSCORE).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreRange {
    pub min: f64,
    pub max: f64,
    pub min_ex: bool,
    pub max_ex: bool,
}

impl ScoreRange {
    /// Whether `s` is above the lower bound.
    pub fn gte_min(&self, s: f64) -> bool {
        if self.min_ex {
            s > self.min
        } else {
            s >= self.min
        }
    }

    /// Whether `s` is below the upper bound.
    pub fn lte_max(&self, s: f64) -> bool {
        if self.max_ex {
            s < self.max
        } else {
            s <= self.max
        }
    }
}

/// One end of a lex interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LexBound<'a> {
    NegInf,
    PosInf,
    Incl(&'a [u8]),
    Excl(&'a [u8]),
}

/// A member interval (ZRANGEBYLEX, ZLEXCOUNT, ZREMRANGEBYLEX).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LexRange<'a> {
    pub min: LexBound<'a>,
    pub max: LexBound<'a>,
}

impl LexRange<'_> {
    pub fn gte_min(&self, m: &[u8]) -> bool {
        match self.min {
            LexBound::NegInf => true,
            LexBound::PosInf => false,
            LexBound::Incl(b) => m >= b,
            LexBound::Excl(b) => m > b,
        }
    }

    pub fn lte_max(&self, m: &[u8]) -> bool {
        match self.max {
            LexBound::NegInf => false,
            LexBound::PosInf => true,
            LexBound::Incl(b) => m <= b,
            LexBound::Excl(b) => m < b,
        }
    }
}

/// A lex bound: `-`, `+`, `[member` or `(member`.
pub fn parse_lex_bound(a: &[u8]) -> Option<LexBound<'_>> {
    match a.first()? {
        b'-' if a.len() == 1 => Some(LexBound::NegInf),
        b'+' if a.len() == 1 => Some(LexBound::PosInf),
        b'[' => Some(LexBound::Incl(&a[1..])),
        b'(' => Some(LexBound::Excl(&a[1..])),
        _ => None,
    }
}

/// A score bound: `(` makes it exclusive; the number follows [`strtod`] (no white space, no
/// hex, overflow to infinity) and must use every byte up to the end or a NUL. An empty
/// number is 0, as Valkey leaves it. NaN is refused.
pub fn parse_score_bound(a: &[u8]) -> Option<(f64, bool)> {
    let (text, ex) = match a.first() {
        Some(b'(') => (&a[1..], true),
        _ => (a, false),
    };
    let text = match text.iter().position(|&c| c == 0) {
        Some(nul) => &text[..nul],
        None => text,
    };
    let v = if text.is_empty() {
        0.0
    } else {
        let p = strtod(text)?;
        if p.end != text.len() {
            return None;
        }
        p.value
    };
    (!v.is_nan()).then_some((v, ex))
}

/// A score argument (ZADD, ZINCRBY, WEIGHTS): the whole argument is one number, not NaN,
/// and not out of range (overflow to infinity or underflow to zero is refused; `inf`
/// written out is fine). Valkey's `getDoubleFromObject`.
pub fn parse_score(a: &[u8]) -> Option<f64> {
    let p = strtod(a)?;
    (p.end == a.len() && !p.out_of_range && !p.value.is_nan()).then_some(p.value)
}

/// What [`strtod`] read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Strtod {
    pub value: f64,
    /// Bytes consumed.
    pub end: usize,
    /// `errno == ERANGE`: a finite decimal that rounds to ±infinity, or nonzero digits that
    /// round to 0. Subnormal results are in range.
    pub out_of_range: bool,
}

/// Valkey 9's `valkey_strtod` (fast_float's grammar, not libc's) on a byte string: an
/// optional sign, then `inf`, `infinity` or `nan` (any case) or a decimal `digits [.
/// digits] [e [sign] digits]` with at least one mantissa digit. Unlike C's `strtod` it
/// skips no leading white space and reads no hex floats. `None` when nothing could be
/// converted.
pub fn strtod(s: &[u8]) -> Option<Strtod> {
    let (neg, i) = match s.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let sign = if neg { -1.0 } else { 1.0 };
    let rest = &s[i..];
    let lower = |n: usize| rest.get(..n).map(|p| p.to_ascii_lowercase());
    if lower(8).as_deref() == Some(b"infinity") {
        return Some(Strtod { value: sign * f64::INFINITY, end: i + 8, out_of_range: false });
    }
    if lower(3).as_deref() == Some(b"inf") {
        return Some(Strtod { value: sign * f64::INFINITY, end: i + 3, out_of_range: false });
    }
    if lower(3).as_deref() == Some(b"nan") {
        let mut end = i + 3;
        if s.get(end) == Some(&b'(') {
            let body = s[end + 1..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_');
            let close = end + 1 + body.count();
            if s.get(close) == Some(&b')') {
                end = close + 1;
            }
        }
        return Some(Strtod { value: f64::NAN, end, out_of_range: false });
    }
    // Decimal: digits [. digits] [e [sign] digits], at least one mantissa digit.
    let int_digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    let mut n = int_digits;
    let mut frac_digits = 0;
    if rest.get(n) == Some(&b'.') {
        frac_digits = rest[n + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if int_digits + frac_digits > 0 {
            n += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    if matches!(rest.get(n), Some(b'e' | b'E')) {
        let mut e = n + 1;
        if matches!(rest.get(e), Some(b'+' | b'-')) {
            e += 1;
        }
        let exp_digits =
            rest[e.min(rest.len())..].iter().take_while(|c| c.is_ascii_digit()).count();
        if exp_digits > 0 {
            n = e + exp_digits;
        }
    }
    let text = std::str::from_utf8(&rest[..n]).expect("ASCII");
    let magnitude: f64 = text.parse().unwrap_or(0.0);
    let nonzero_digit = rest[..n]
        .iter()
        .take_while(|c| !matches!(c, b'e' | b'E'))
        .any(|c| (b'1'..=b'9').contains(c));
    let out_of_range = magnitude.is_infinite() || (magnitude == 0.0 && nonzero_digit);
    Some(Strtod { value: sign * magnitude, end: i + n, out_of_range })
}

/// Orders (score, member) pairs as a sorted set does: by score, then by member bytes.
pub fn cmp_pair(s1: f64, m1: &[u8], s2: f64, m2: &[u8]) -> Ordering {
    s1.partial_cmp(&s2).expect("scores are never NaN").then_with(|| m1.cmp(m2))
}

/// The text a listpack stores for a score: integers in decimal (so the listpack keeps them
/// as integers; -0 becomes 0, as in Valkey 7.0), others in the shortest form that reads back
/// exactly.
pub fn score_text(score: f64, buf: &mut String) {
    use std::fmt::Write;
    buf.clear();
    if score == score.trunc() && score.abs() < 9.0e18 {
        write!(buf, "{}", score as i64).expect("write to String");
        return;
    }
    if score.is_infinite() {
        buf.push_str(if score > 0.0 { "inf" } else { "-inf" });
        return;
    }
    write!(buf, "{score}").expect("write to String");
    if buf.len() > 12 {
        let mut e = String::new();
        write!(e, "{score:e}").expect("write to String");
        if e.len() < buf.len() {
            *buf = e;
        }
    }
}

/// Reads a score back from a listpack entry's text.
pub fn score_from_text(s: &[u8]) -> f64 {
    let text = std::str::from_utf8(s).expect("listpack score is ASCII");
    text.parse().expect("listpack score reads back")
}
