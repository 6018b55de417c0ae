//! C `printf("%.<p>g")` formatting of `f64` without libc.
//!
//! Valkey's Lua prints numbers with glibc's `%.14g` (`tostring`, `..`), lua-cjson with
//! `%.<precision>g`, and other parts of the server with `%.17g`. [`fmt_g`] produces the same
//! bytes as glibc for every value: the significant digits come from `core::fmt`'s exact
//! scientific formatting (`{:.N$e}`), which, like glibc, rounds the exact binary value and breaks
//! exact ties to even; this module only lays those digits out the way `%g` does: scientific
//! notation when the exponent is below -4 or not below the precision, fixed notation otherwise,
//! trailing zeros (and a trailing decimal point) removed, and at least two exponent digits.
//! Infinities print as `inf` / `-inf` and NaNs as `nan` / `-nan` after their sign bit, as glibc
//! prints them. Precision 0 means 1, as in C.

use std::fmt::Write as _;

/// Appends `x` formatted as C's `printf("%.<precision>g", x)` (glibc) to `out`.
pub fn fmt_g(x: f64, precision: usize, out: &mut Vec<u8>) {
    if x.is_nan() {
        out.extend_from_slice(if x.is_sign_negative() { b"-nan" } else { b"nan" });
        return;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x < 0.0 { b"-inf" } else { b"inf" });
        return;
    }
    let precision = precision.max(1);
    let sci = scientific(x, precision);
    let (negative, digits, exp) = split_scientific(&sci);
    if negative {
        out.push(b'-');
    }
    // `precision` is at most usize::MAX; an exponent is always within +-400.
    let fixed = exp >= -4 && (exp < 0 || (exp as usize) < precision);
    if fixed {
        push_fixed(digits, exp, out);
    } else {
        push_exponential(digits, exp, out);
    }
}

/// `x` in Rust's scientific form with at most `precision` significant digits, rounded like
/// glibc, e.g. `-1.5e3`.
///
/// The shortest form that reads back as `x` is cheap and, when `x` is normal (or zero) and the
/// form has at most `precision <= 15` digits, is also the correctly rounded one: `x` lies within
/// half an ulp (< 1.2e-16 relative) of it, well inside half a unit of the 15th digit (>= 5e-16
/// relative). Otherwise the exact digits are generated.
fn scientific(x: f64, precision: usize) -> String {
    let mut sci = String::with_capacity(precision + 8);
    // Writing into a String cannot fail.
    if precision <= 15 && (x.is_normal() || x == 0.0) {
        let _ = write!(sci, "{x:e}");
        let digits =
            sci.split('e').next().map_or(0, |m| m.bytes().filter(u8::is_ascii_digit).count());
        if digits <= precision {
            return sci;
        }
        sci.clear();
    }
    let _ = write!(sci, "{:.*e}", precision - 1, x);
    sci
}

/// Splits Rust's `-d.ddde-N` form into the sign, the digits without the point, and the exponent.
fn split_scientific(sci: &str) -> (bool, &[u8], i32) {
    let (negative, rest) = match sci.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, sci),
    };
    let (mantissa, exp) = rest.split_once('e').unwrap_or((rest, "0"));
    let exp = exp.parse::<i32>().unwrap_or(0);
    (negative, mantissa.as_bytes(), exp)
}

/// The significant digits without the point and without trailing zeros (at least one digit).
fn significant(mantissa: &[u8]) -> Vec<u8> {
    let mut digits: Vec<u8> = mantissa.iter().copied().filter(|b| b.is_ascii_digit()).collect();
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    digits
}

/// `%f`-style layout: the digits placed around the decimal point for exponent `exp` (-4..p).
fn push_fixed(mantissa: &[u8], exp: i32, out: &mut Vec<u8>) {
    let digits = significant(mantissa);
    if exp < 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-exp - 1) as usize));
        out.extend_from_slice(&digits);
        return;
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        out.extend_from_slice(&digits);
        out.extend(std::iter::repeat_n(b'0', int_len - digits.len()));
        return;
    }
    out.extend_from_slice(&digits[..int_len]);
    out.push(b'.');
    out.extend_from_slice(&digits[int_len..]);
}

/// `%e`-style layout: `d[.ddd]e±XX`.
fn push_exponential(mantissa: &[u8], exp: i32, out: &mut Vec<u8>) {
    let digits = significant(mantissa);
    out.push(digits[0]);
    if digits.len() > 1 {
        out.push(b'.');
        out.extend_from_slice(&digits[1..]);
    }
    out.push(b'e');
    out.push(if exp < 0 { b'-' } else { b'+' });
    let magnitude = exp.unsigned_abs();
    if magnitude < 10 {
        out.push(b'0');
    }
    out.extend_from_slice(magnitude.to_string().as_bytes());
}

#[cfg(test)]
mod tests {
    use super::fmt_g;

    fn g(x: f64, precision: usize) -> String {
        let mut out = Vec::new();
        fmt_g(x, precision, &mut out);
        String::from_utf8(out).expect("ASCII output")
    }

    /// (value, glibc `%.14g`, glibc `%.17g`), produced with python's `'%.14g' % x`.
    const CASES: &[(f64, &str, &str)] = &[
        (0.0, "0", "0"),
        (-0.0, "-0", "-0"),
        (1.0, "1", "1"),
        (-1.0, "-1", "-1"),
        (100.0, "100", "100"),
        (0.1, "0.1", "0.10000000000000001"),
        (0.2, "0.2", "0.20000000000000001"),
        (0.3, "0.3", "0.29999999999999999"),
        (1.0 / 3.0, "0.33333333333333", "0.33333333333333331"),
        (2.0 / 3.0, "0.66666666666667", "0.66666666666666663"),
        (1e-5, "1e-05", "1.0000000000000001e-05"),
        (1e-4, "0.0001", "0.0001"),
        (1.5e-4, "0.00015", "0.00014999999999999999"),
        (0.00012345678901234567, "0.00012345678901235", "0.00012345678901234567"),
        (1e14, "1e+14", "100000000000000"),
        (99999999999999.0, "99999999999999", "99999999999999"),
        (999999999999999.0, "1e+15", "999999999999999"),
        (1e15, "1e+15", "1000000000000000"),
        (1e16, "1e+16", "10000000000000000"),
        (1e17, "1e+17", "1e+17"),
        (123456789012345678.0, "1.2345678901235e+17", "1.2345678901234568e+17"),
        (12345678901234.0, "12345678901234", "12345678901234"),
        (123456789012345.0, "1.2345678901234e+14", "123456789012345"),
        (1e21, "1e+21", "1e+21"),
        (1e100, "1e+100", "1e+100"),
        (5e-324, "4.9406564584125e-324", "4.9406564584124654e-324"),
        (2.2250738585072014e-308, "2.2250738585072e-308", "2.2250738585072014e-308"),
        (1.7976931348623157e308, "1.7976931348623e+308", "1.7976931348623157e+308"),
        (-1.7976931348623157e308, "-1.7976931348623e+308", "-1.7976931348623157e+308"),
        (1.23456, "1.23456", "1.2345600000000001"),
        (std::f64::consts::PI, "3.1415926535898", "3.1415926535897931"),
        (-2.5, "-2.5", "-2.5"),
        (0.5, "0.5", "0.5"),
        (1234567.0, "1234567", "1234567"),
        (9007199254740993.0, "9.007199254741e+15", "9007199254740992"),
        (4294967296.0, "4294967296", "4294967296"),
        (-123.456, "-123.456", "-123.456"),
        (1e-10, "1e-10", "1e-10"),
        (123e-20, "1.23e-18", "1.23e-18"),
        (9.999999999999999e-5, "0.0001", "9.9999999999999991e-05"),
        (99999999999999.99, "1e+14", "99999999999999.984"),
        (0.1 + 0.2, "0.3", "0.30000000000000004"),
        (1e300 * 10.0, "1e+301", "1.0000000000000001e+301"),
        (2.5e-5, "2.5e-05", "2.5000000000000001e-05"),
    ];

    #[test]
    fn matches_glibc_at_14_and_17() {
        for &(x, g14, g17) in CASES {
            assert_eq!(g(x, 14), g14, "%.14g of {x:e}");
            assert_eq!(g(x, 17), g17, "%.17g of {x:e}");
        }
    }

    #[test]
    fn other_precisions() {
        // python: '%.<p>g' % x
        assert_eq!(g(31.4159, 3), "31.4");
        assert_eq!(g(1234567.0, 3), "1.23e+06");
        assert_eq!(g(0.0001234, 3), "0.000123");
        assert_eq!(g(0.5, 0), "0.5");
        assert_eq!(g(2.5, 1), "2");
        assert_eq!(g(3.5, 1), "4");
        assert_eq!(g(0.125, 2), "0.12");
        assert_eq!(g(0.375, 2), "0.38");
        assert_eq!(g(9.5, 1), "1e+01");
        assert_eq!(g(100.0, 1), "1e+02");
        assert_eq!(g(100.0, 3), "100");
        assert_eq!(g(0.1, 20), "0.10000000000000000555");
        assert_eq!(g(1e22, 30), "10000000000000000000000");
        assert_eq!(g(5e-324, 6), "4.94066e-324");
        assert_eq!(g(123456.0, 6), "123456");
        assert_eq!(g(1234567.0, 6), "1.23457e+06");
    }

    #[test]
    fn non_finite() {
        assert_eq!(g(f64::INFINITY, 14), "inf");
        assert_eq!(g(f64::NEG_INFINITY, 17), "-inf");
        assert_eq!(g(f64::NAN, 14), "nan");
        assert_eq!(g(-f64::NAN, 14), "-nan");
    }
}
