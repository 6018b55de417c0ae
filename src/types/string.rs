//! String values: the owned form a command builds, the borrowed view a lookup returns, and
//! the number parsing and formatting rules Valkey applies to them.
//!
//! Nothing here knows about connections or RESP; the rules (what counts as an integer, how
//! INCRBYFLOAT adds and prints, which subsequence LCS picks) are Valkey's, so replies match
//! byte for byte. Submodules: `long_double` (INCRBYFLOAT's x87 arithmetic in software) and
//! `lcs` (the LCS table and walk).

mod lcs;
mod long_double;

pub use lcs::{lcs, lcs_len, table_bytes as lcs_table_bytes, Lcs, LcsMatch};
pub use long_double::LongDouble;

/// Whether Valkey 9.1 would store this string value as `embstr` (OBJECT ENCODING's name only;
/// ferrokey's own layout is `keyspace::entry`'s). Valkey 9.1 embeds the key, the expire time
/// and a short value in the object's one allocation of at most 128 bytes. Measured on the
/// oracle, the value embeds when `key + value` plus 15 bytes of headers fits those 128
/// bytes; a key of 32 bytes or more takes 2 header bytes more, and an expire time 8 more.
/// So a 1-byte key embeds values up to 112 bytes, and up to 104 with a TTL.
pub fn embeds_as_embstr(key_len: usize, value_len: usize, has_expire: bool) -> bool {
    const ALLOC_BYTES_MAX: usize = 128;
    let headers = 15 + if key_len >= 32 { 2 } else { 0 } + if has_expire { 8 } else { 0 };
    key_len + value_len + headers <= ALLOC_BYTES_MAX
}

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
    /// View `bytes` as they would be stored: as an integer when it is the canonical text of
    /// one ([`StrValue::from_bytes`] without the copy).
    pub fn from_bytes(bytes: &'a [u8]) -> StrRef<'a> {
        match parse_canonical_i64(bytes) {
            Some(n) => StrRef::Int(n),
            None => StrRef::Raw(bytes),
        }
    }

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
            StrRef::Int(n) => crate::util::fmt::fmt_i64(scratch, n),
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

    /// The value as a long double (Valkey's `getLongDoubleFromObject`): integers exactly,
    /// text by `strtold`'s rules.
    pub fn as_long_double(&self) -> Option<LongDouble> {
        match *self {
            StrRef::Int(n) => Some(LongDouble::from_i64(n)),
            StrRef::Raw(b) => LongDouble::parse(b),
        }
    }
}

/// Number of bytes of the decimal text of `n`.
pub fn int_len(n: i64) -> usize {
    let mut b = [0u8; 20];
    crate::util::fmt::fmt_i64(&mut b, n).len()
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

/// Float argument parsing (no spaces, not empty, "nan" refused, infinities allowed), for
/// commands that take a double. INCRBYFLOAT uses [`LongDouble::parse`] instead.
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
    fn borrowed_views_pick_the_stored_form() {
        assert_eq!(StrRef::from_bytes(b"-12"), StrRef::Int(-12));
        assert_eq!(StrRef::from_bytes(b"012"), StrRef::Raw(b"012"));
        assert_eq!(StrRef::from_bytes(b"12").to_owned(), StrValue::from_bytes(b"12"));
        assert_eq!(StrRef::Int(-7).as_long_double(), Some(LongDouble::from_i64(-7)));
        assert_eq!(StrRef::Raw(b"x").as_long_double(), None);
    }

    #[test]
    fn float_text_rules() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"5.0e3"), Some(5000.0));
        assert_eq!(parse_f64(b" 1"), None);
        assert_eq!(parse_f64(b"nan"), None);
        assert_eq!(parse_f64(b"abc"), None);
    }
}
