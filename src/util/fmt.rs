//! Integer formatting into a stack buffer, for the hot paths that write decimal text (RESP
//! headers and integer replies, listpack and string values, AOF commands) without the
//! `core::fmt` machinery or an allocation.

/// The longest decimal text of an `i64` ("-9223372036854775808") or a `u64`
/// ("18446744073709551615").
pub const INT_DECIMAL_BYTES_MAX: usize = 20;

/// A stack buffer for [`fmt_i64`] and [`fmt_u64`].
pub fn itoa_buf() -> [u8; INT_DECIMAL_BYTES_MAX] {
    [0u8; INT_DECIMAL_BYTES_MAX]
}

/// Formats `n` in decimal at the end of `buf`, returning the used tail.
pub fn fmt_u64(buf: &mut [u8; INT_DECIMAL_BYTES_MAX], n: u64) -> &[u8] {
    let start = write_digits(buf, n);
    &buf[start..]
}

/// Formats `n` in decimal at the end of `buf` (a `-` before a negative one), returning the
/// used tail.
pub fn fmt_i64(buf: &mut [u8; INT_DECIMAL_BYTES_MAX], n: i64) -> &[u8] {
    let mut start = write_digits(buf, n.unsigned_abs());
    if n < 0 {
        // i64::MIN has 19 digits plus the sign: 20 bytes fit exactly.
        start -= 1;
        buf[start] = b'-';
    }
    &buf[start..]
}

/// Writes the digits of `v` at the end of `buf`; returns where they start.
fn write_digits(buf: &mut [u8; INT_DECIMAL_BYTES_MAX], mut v: u64) -> usize {
    let mut start = buf.len();
    loop {
        start -= 1;
        buf[start] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return start;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_format_like_c() {
        let mut b = itoa_buf();
        assert_eq!(fmt_i64(&mut b, 0), b"0");
        assert_eq!(fmt_i64(&mut b, -42), b"-42");
        assert_eq!(fmt_i64(&mut b, i64::MIN), b"-9223372036854775808");
        assert_eq!(fmt_i64(&mut b, i64::MAX), b"9223372036854775807");
        assert_eq!(fmt_u64(&mut b, 0), b"0");
        assert_eq!(fmt_u64(&mut b, 1_000), b"1000");
        assert_eq!(fmt_u64(&mut b, u64::MAX), b"18446744073709551615");
        for n in [-1_000_001i64, -10, -9, 9, 10, 99, 100, 123_456_789] {
            assert_eq!(fmt_i64(&mut b, n), n.to_string().as_bytes());
        }
    }
}
