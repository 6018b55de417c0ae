//! Number parsing and formatting with Valkey's exact rules: memory values with units
//! (`memtoull`), strict integers (`string2ll`), lenient `strtoll`, octal, and the memory
//! format CONFIG REWRITE writes back (`512mb`, `1gb`).
//!
//! Pure functions over strings: no knowledge of directives or of the `Config` struct.

const KB: u64 = 1024;
const MB: u64 = 1024 * 1024;
const GB: u64 = 1024 * 1024 * 1024;

/// Longest digit run `memtoull` copies into its 128-byte buffer; longer inputs are errors.
const MEMORY_DIGITS_MAX: usize = 127;

/// Parses a memory value as Valkey's `memtoull`: digits followed by an optional unit,
/// case-insensitive: `b` (1), `k` (1000), `kb` (1024), `m`, `mb`, `g`, `gb`.
/// Negative numbers, unknown units and overflow are errors. An empty digit run reads as 0
/// (`""`, `kb`): `memtoull` hands it to `strtoull`, which returns 0 without an error.
pub fn parse_memory(s: &str) -> Option<u64> {
    let digits_len = s.bytes().take_while(u8::is_ascii_digit).count();
    let (digits, unit) = s.split_at(digits_len);
    let mul: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => KB,
        "m" => 1000 * 1000,
        "mb" => MB,
        "g" => 1000 * 1000 * 1000,
        "gb" => GB,
        _ => return None,
    };
    if digits.len() > MEMORY_DIGITS_MAX {
        return None;
    }
    if digits.is_empty() {
        return Some(0);
    }
    digits.parse::<u64>().ok()?.checked_mul(mul)
}

/// Formats bytes as CONFIG REWRITE writes them: the largest of `gb`, `mb`, `kb` that divides
/// the value exactly, else plain bytes (`rewriteConfigFormatMemory`).
pub fn format_memory(bytes: u64) -> String {
    if bytes != 0 && bytes.is_multiple_of(GB) {
        format!("{}gb", bytes / GB)
    } else if bytes != 0 && bytes.is_multiple_of(MB) {
        format!("{}mb", bytes / MB)
    } else if bytes != 0 && bytes.is_multiple_of(KB) {
        format!("{}kb", bytes / KB)
    } else {
        bytes.to_string()
    }
}

/// Strict integer parsing as Valkey's `string2ll`: an optional `-`, then `0` alone or a
/// digit run without leading zeros; no `+`, no spaces, no `-0`, no overflow.
pub fn parse_strict_i64(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b == b"0" {
        return Some(0);
    }
    let digits = b.strip_prefix(b"-").unwrap_or(b);
    match digits.first() {
        Some(b'1'..=b'9') if digits.iter().all(u8::is_ascii_digit) => s.parse().ok(),
        _ => None,
    }
}

/// Lenient parsing as C's `strtoll(s, &end, 10)` followed by a check that `*end == '\0'`:
/// optional sign, leading zeros allowed, an empty digit run reads as 0, overflow saturates.
/// Used where Valkey itself uses `strtoll` (save points, soft seconds).
pub fn parse_strtoll(s: &str) -> Option<i64> {
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut value: i64 = 0;
    for c in digits.bytes() {
        let d = i64::from(c - b'0');
        value = value.saturating_mul(10).saturating_add(d);
    }
    Some(if negative { value.saturating_neg() } else { value })
}

/// Octal parsing as `strtoll(s, &end, 8)` with a full-consumption check (`unixsocketperm`).
/// An optional leading `0` is simply another digit. Empty input is rejected.
pub fn parse_octal(s: &str) -> Option<i64> {
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|c| (b'0'..=b'7').contains(&c)) {
        return None;
    }
    let value = i64::from_str_radix(digits, 8).ok()?;
    Some(if negative { -value } else { value })
}

/// Parses a percentage `N%` with `N >= 0` (`maxmemory-clients 10%`).
pub fn parse_percent(s: &str) -> Option<i64> {
    let number = s.strip_suffix('%')?;
    parse_strict_i64(number).filter(|n| *n >= 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_units() {
        assert_eq!(parse_memory("0"), Some(0));
        assert_eq!(parse_memory("100"), Some(100));
        assert_eq!(parse_memory("100b"), Some(100));
        assert_eq!(parse_memory("1k"), Some(1000));
        assert_eq!(parse_memory("1kb"), Some(1024));
        assert_eq!(parse_memory("1K"), Some(1000));
        assert_eq!(parse_memory("1KB"), Some(1024));
        assert_eq!(parse_memory("1kB"), Some(1024));
        assert_eq!(parse_memory("2m"), Some(2_000_000));
        assert_eq!(parse_memory("2mb"), Some(2 * 1024 * 1024));
        assert_eq!(parse_memory("3g"), Some(3_000_000_000));
        assert_eq!(parse_memory("3Gb"), Some(3 * 1024 * 1024 * 1024));
        assert_eq!(parse_memory("18446744073709551615"), Some(u64::MAX));
    }

    #[test]
    fn memory_errors() {
        for bad in ["-1", "-1mb", "1tb", "1 mb", "1.5mb", "mb1", "+1", "1kbb", "%", " 1"] {
            assert_eq!(parse_memory(bad), None, "{bad:?}");
        }
        assert_eq!(parse_memory("18446744073709551616"), None);
        assert_eq!(parse_memory("18446744073709551615kb"), None);
        assert_eq!(parse_memory(&"1".repeat(200)), None);
        // No digits at all is 0, as in Valkey.
        for zero in ["", "b", "kb", "GB"] {
            assert_eq!(parse_memory(zero), Some(0), "{zero:?}");
        }
    }

    #[test]
    fn memory_format() {
        assert_eq!(format_memory(0), "0");
        assert_eq!(format_memory(1000), "1000");
        assert_eq!(format_memory(1024), "1kb");
        assert_eq!(format_memory(1536 * 1024), "1536kb");
        assert_eq!(format_memory(64 * MB), "64mb");
        assert_eq!(format_memory(512 * MB), "512mb");
        assert_eq!(format_memory(GB), "1gb");
        assert_eq!(format_memory(1025), "1025");
        for v in [0, 1, 1023, 1024, 5 * MB + 1, 3 * GB, 7 * KB] {
            assert_eq!(parse_memory(&format_memory(v)), Some(v));
        }
    }

    #[test]
    fn strict_integers() {
        assert_eq!(parse_strict_i64("0"), Some(0));
        assert_eq!(parse_strict_i64("42"), Some(42));
        assert_eq!(parse_strict_i64("-42"), Some(-42));
        assert_eq!(parse_strict_i64("9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_strict_i64("-9223372036854775808"), Some(i64::MIN));
        for bad in ["", "-", "-0", "01", "+1", " 1", "1 ", "1a", "9223372036854775808", "0x10"] {
            assert_eq!(parse_strict_i64(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn lenient_integers() {
        assert_eq!(parse_strtoll("007"), Some(7));
        assert_eq!(parse_strtoll("+5"), Some(5));
        assert_eq!(parse_strtoll("-5"), Some(-5));
        assert_eq!(parse_strtoll(""), Some(0));
        assert_eq!(parse_strtoll("99999999999999999999"), Some(i64::MAX));
        assert_eq!(parse_strtoll("1x"), None);
        assert_eq!(parse_strtoll("1 "), None);
    }

    #[test]
    fn octal_and_percent() {
        assert_eq!(parse_octal("0"), Some(0));
        assert_eq!(parse_octal("700"), Some(0o700));
        assert_eq!(parse_octal("0777"), Some(0o777));
        assert_eq!(parse_octal("-1"), Some(-1));
        for bad in ["", "8", "79", "7a", "0x7"] {
            assert_eq!(parse_octal(bad), None, "{bad:?}");
        }
        assert_eq!(parse_percent("10%"), Some(10));
        assert_eq!(parse_percent("0%"), Some(0));
        assert_eq!(parse_percent("-1%"), None);
        assert_eq!(parse_percent("10"), None);
        assert_eq!(parse_percent("%"), None);
    }
}
