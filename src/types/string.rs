//! String values: the owned form a command builds, the borrowed view a lookup returns, and
//! the number parsing and formatting rules Valkey applies to them.
//!
//! Nothing here knows about connections or RESP; the rules (what counts as an integer, how
//! INCRBYFLOAT prints its result) are Valkey's, so replies match byte for byte.

/// The longest string Valkey stores as `embstr`; longer ones are `raw`.
pub const EMBSTR_LEN_MAX: usize = 44;

/// An owned string value as it is stored: integers are kept as integers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StrValue {
    Int(i64),
    Raw(Box<[u8]>),
}

/// A borrowed view of a stored string value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrRef<'a> {
    Int(i64),
    Raw(&'a [u8]),
}

impl StrValue {
    /// Store `bytes`, as an integer when it is the canonical text of one (as Valkey's
    /// `tryObjectEncoding` does: no leading zeros or `+`, fits in an i64, at most 20 chars).
    pub fn from_bytes(bytes: &[u8]) -> StrValue {
        match parse_canonical_i64(bytes) {
            Some(n) => StrValue::Int(n),
            None => StrValue::Raw(bytes.into()),
        }
    }

    pub fn as_ref(&self) -> StrRef<'_> {
        match self {
            StrValue::Int(n) => StrRef::Int(*n),
            StrValue::Raw(b) => StrRef::Raw(b),
        }
    }
}

impl<'a> StrRef<'a> {
    /// Length of the string as the client sees it.
    pub fn len(&self) -> usize {
        match self {
            StrRef::Int(n) => int_len(*n),
            StrRef::Raw(b) => b.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes, formatting an integer into `scratch` when needed.
    pub fn bytes<'s>(&self, scratch: &'s mut [u8; 20]) -> &'s [u8]
    where
        'a: 's,
    {
        match *self {
            StrRef::Int(n) => crate::resp::reply::fmt_i64(scratch, n),
            StrRef::Raw(b) => b,
        }
    }

    pub fn to_vec(&self) -> Vec<u8> {
        let mut s = [0u8; 20];
        self.bytes(&mut s).to_vec()
    }

    pub fn to_owned(&self) -> StrValue {
        match *self {
            StrRef::Int(n) => StrValue::Int(n),
            StrRef::Raw(b) => StrValue::Raw(b.into()),
        }
    }

    /// The value as an integer, if it is the text of one (Valkey's `string2ll` rules).
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            StrRef::Int(n) => Some(n),
            StrRef::Raw(b) => parse_i64(b),
        }
    }
}

/// Number of bytes of the decimal text of `n`.
pub fn int_len(n: i64) -> usize {
    let mut b = [0u8; 20];
    crate::resp::reply::fmt_i64(&mut b, n).len()
}

/// Valkey's `string2ll`: optional '-', digits, no leading zeros (except "0"), no '+', no
/// spaces, no overflow. "-0" is rejected.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits[0] == b'0' {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    if neg {
        if v > i64::MAX as u64 + 1 {
            return None;
        }
        Some((v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

/// Like [`parse_i64`], used for deciding the storage encoding.
pub fn parse_canonical_i64(s: &[u8]) -> Option<i64> {
    parse_i64(s)
}

/// Valkey's `string2ld`-style float parsing for INCRBYFLOAT: no spaces, not empty, finite
/// result not required here (the caller rejects NaN/inf results), "nan" rejected.
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    if s.is_empty() || s.len() > 5000 {
        return None;
    }
    let text = std::str::from_utf8(s).ok()?;
    if text.starts_with(|c: char| c.is_ascii_whitespace())
        || text.ends_with(|c: char| c.is_ascii_whitespace())
    {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    let v: f64 = match lower.as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
        "-inf" | "-infinity" => f64::NEG_INFINITY,
        _ => {
            if lower.contains("nan") || lower.starts_with("0x") || lower.starts_with("-0x") {
                return None;
            }
            lower.parse().ok()?
        }
    };
    if v.is_nan() {
        return None;
    }
    Some(v)
}

/// Format the result of INCRBYFLOAT as Valkey does for long doubles (`%.17Lf` with
/// trailing zeros and a trailing dot removed; exponent form is never used).
pub fn format_incrbyfloat(v: f64) -> String {
    // Valkey formats a long double with 17 fractional digits; an f64 carries fewer
    // significant digits, so print with the shortest exact representation first and fall
    // back to a fixed 17-digit rendering trimmed, which gives the same text for values that
    // round-trip (the common case: 10.5, 3.0e3 -> "3000").
    let s = format!("{:.17}", v);
    let shortest = format!("{}", v);
    let fixed = trim_zeros(&s);
    if shortest.contains('e') {
        return fixed;
    }
    // Prefer the shortest form when it denotes the same double: Valkey's long double
    // arithmetic prints e.g. 10.1 + 0.1 as "10.2" where a 17-digit f64 print would show noise.
    shortest
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_text_rules() {
        assert_eq!(parse_i64(b"123"), Some(123));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"0123"), None);
        assert_eq!(parse_i64(b"+1"), None);
        assert_eq!(parse_i64(b" 1"), None);
        assert_eq!(parse_i64(b"-0"), None);
        assert_eq!(parse_i64(b""), None);
        assert_eq!(StrValue::from_bytes(b"42"), StrValue::Int(42));
        assert_eq!(StrValue::from_bytes(b"042"), StrValue::Raw(b"042"[..].into()));
    }

    #[test]
    fn float_text_rules() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"5.0e3"), Some(5000.0));
        assert_eq!(parse_f64(b" 1"), None);
        assert_eq!(parse_f64(b"nan"), None);
        assert_eq!(parse_f64(b"abc"), None);
        assert_eq!(format_incrbyfloat(10.5), "10.5");
        assert_eq!(format_incrbyfloat(5000.0), "5000");
        assert_eq!(format_incrbyfloat(3.0), "3");
    }
}
