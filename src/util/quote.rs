//! Valkey's quoting of byte strings as text: `sdssplitargs` (split a line into arguments,
//! honouring quotes and escapes) and its inverse `sdscatrepr` (write bytes double-quoted with
//! escapes), with `sdsneedsrepr`. Used by the config file and its rewrite, the AOF manifest,
//! MONITOR lines and inline commands, so that all of them read and write the same syntax.
//!
//! The syntax: blanks (C's `isspace`) separate arguments; `"double quotes"` understand
//! `\n \r \t \b \a \\ \" \xHH` (any other escaped byte stands for itself); `'single quotes'`
//! understand only `\'`; an unquoted prefix joins the quoted part (`a"b c"` is `ab c`); a
//! closing quote must be followed by a blank or the end of the line.

use std::ops::Range;

/// One argument found by [`split_args_each`].
#[derive(Debug, PartialEq, Eq)]
pub enum Arg {
    /// Unquoted: this range of the line, as it is (callers can slice instead of copying).
    Plain(Range<usize>),
    /// With quotes: the decoded bytes.
    Quoted(Vec<u8>),
}

/// A quote left open, or a closing quote followed by something other than a blank.
#[derive(Debug, PartialEq, Eq)]
pub struct Unbalanced;

/// Splits a line into arguments as Valkey's `sdssplitargs`. `None` on unbalanced quotes.
/// Like C, it stops at a NUL byte.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let line = &line[..line.iter().position(|&b| b == 0).unwrap_or(line.len())];
    let mut args = Vec::new();
    let split = split_args_each(line, |arg| {
        args.push(match arg {
            Arg::Plain(range) => line[range].to_vec(),
            Arg::Quoted(bytes) => bytes,
        })
    });
    split.ok().map(|()| args)
}

/// The `sdssplitargs` tokenizer: calls `each` with every argument of `line` in order (all of
/// them before it fails on unbalanced quotes). NUL bytes are ordinary bytes here: callers
/// that must stop at one, as C does, cut the line first ([`split_args`] does).
pub fn split_args_each(line: &[u8], mut each: impl FnMut(Arg)) -> Result<(), Unbalanced> {
    let mut at = 0;
    loop {
        while at < line.len() && is_c_space(line[at]) {
            at += 1;
        }
        if at == line.len() {
            return Ok(());
        }
        let start = at;
        while at < line.len() && !ends_unquoted(line[at]) && !matches!(line[at], b'"' | b'\'') {
            at += 1;
        }
        match line.get(at) {
            Some(&quote @ (b'"' | b'\'')) => {
                let mut arg = line[start..at].to_vec();
                at = if quote == b'"' {
                    double_quoted(line, at + 1, &mut arg)?
                } else {
                    single_quoted(line, at + 1, &mut arg)?
                };
                each(Arg::Quoted(arg));
            }
            _ => each(Arg::Plain(start..at)),
        }
    }
}

/// C's `isspace` in the "C" locale: what `sdssplitargs` skips between arguments and accepts
/// after a closing quote.
pub fn is_c_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// What ends an unquoted part of an argument in `sdssplitargs` (note: not `\v` or `\f`).
fn ends_unquoted(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// A closing quote must be followed by a blank or the end of the line; returns the index after
/// the quote at `at`.
fn after_closing_quote(line: &[u8], at: usize) -> Result<usize, Unbalanced> {
    match line.get(at + 1) {
        Some(&next) if !is_c_space(next) => Err(Unbalanced),
        _ => Ok(at + 1),
    }
}

/// Appends the body of a "double quoted" argument that starts at `at` (after the quote) to
/// `arg`, decoding the escapes; returns the index after the closing quote.
fn double_quoted(line: &[u8], mut at: usize, arg: &mut Vec<u8>) -> Result<usize, Unbalanced> {
    loop {
        match line.get(at) {
            None => return Err(Unbalanced),
            Some(b'"') => return after_closing_quote(line, at),
            Some(b'\\') => {
                if let (Some(b'x'), Some(high), Some(low)) = (
                    line.get(at + 1),
                    line.get(at + 2).and_then(|&b| hex_value(b)),
                    line.get(at + 3).and_then(|&b| hex_value(b)),
                ) {
                    arg.push(high * 16 + low);
                    at += 4;
                } else if let Some(&escaped) = line.get(at + 1) {
                    arg.push(match escaped {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    });
                    at += 2;
                } else {
                    // A backslash at the end leaves the quote open.
                    return Err(Unbalanced);
                }
            }
            Some(&byte) => {
                arg.push(byte);
                at += 1;
            }
        }
    }
}

/// Appends the body of a 'single quoted' argument that starts at `at` (after the quote) to
/// `arg`; only `\'` is an escape. Returns the index after the closing quote.
fn single_quoted(line: &[u8], mut at: usize, arg: &mut Vec<u8>) -> Result<usize, Unbalanced> {
    loop {
        match line.get(at) {
            None => return Err(Unbalanced),
            Some(b'\\') if line.get(at + 1) == Some(&b'\'') => {
                arg.push(b'\'');
                at += 2;
            }
            Some(b'\'') => return after_closing_quote(line, at),
            Some(&byte) => {
                arg.push(byte);
                at += 1;
            }
        }
    }
}

fn hex_value(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

/// Quotes bytes as Valkey's `sdscatrepr`, so that [`split_args`] reads them back unchanged:
/// printable ASCII (C's `isprint`: 0x20..=0x7e) as is, `\\ \" \n \r \t \a \b` escaped, any
/// other byte as `\xHH`.
pub fn repr(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

/// Valkey's `sdsneedsrepr`: whether bytes must be written with [`repr`] to survive
/// [`split_args`] (they hold a quote, a backslash, a blank or an unprintable byte).
pub fn needs_repr(bytes: &[u8]) -> bool {
    bytes.iter().any(|&b| matches!(b, b'\\' | b'"') || !(0x20..=0x7e).contains(&b) || is_c_space(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Option<Vec<String>> {
        split_args(line.as_bytes())
            .map(|args| args.into_iter().map(|a| String::from_utf8(a).unwrap()).collect())
    }

    fn strings(items: &[&str]) -> Option<Vec<String>> {
        Some(items.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn plain_arguments_are_ranges_of_the_line() {
        let mut args = Vec::new();
        assert_eq!(split_args_each(b" ab \"c d\" e'f' g", |a| args.push(a)), Ok(()));
        let want = [
            Arg::Plain(1..3),
            Arg::Quoted(b"c d".to_vec()),
            Arg::Quoted(b"ef".to_vec()),
            Arg::Plain(15..16),
        ];
        assert_eq!(args, want);
        // The arguments before the fault are handed over; NUL is an ordinary byte here.
        let mut args = Vec::new();
        assert_eq!(split_args_each(b"a\0b \"c", |a| args.push(a)), Err(Unbalanced));
        assert_eq!(args, [Arg::Plain(0..3)]);
    }

    #[test]
    fn tokenizer_plain_words() {
        assert_eq!(split(""), strings(&[]));
        assert_eq!(split("   \t "), strings(&[]));
        assert_eq!(split("port 6379"), strings(&["port", "6379"]));
        assert_eq!(split("  save\t900   1 \r\n"), strings(&["save", "900", "1"]));
        assert_eq!(split("\x0bport 1"), strings(&["port", "1"]));
        assert_eq!(split("a\0b c"), strings(&["a"]));
    }

    #[test]
    fn tokenizer_double_quotes() {
        assert_eq!(split(r#"requirepass "a b""#), strings(&["requirepass", "a b"]));
        assert_eq!(split(r#"x """#), strings(&["x", ""]));
        assert_eq!(split(r#""\n\r\t\b\a\\\"\q""#), strings(&["\n\r\t\x08\x07\\\"q"]));
        assert_eq!(split(r#""\x41\x7a""#), strings(&["Az"]));
        // `\x` without two hex digits is a plain escaped `x`.
        assert_eq!(split(r#""\xZZ""#), strings(&["xZZ"]));
        assert_eq!(split(r#"foo"bar baz" next"#), strings(&["foobar baz", "next"]));
        assert_eq!(split_args(br#""\xff""#), Some(vec![vec![0xff]]));
    }

    #[test]
    fn tokenizer_single_quotes() {
        assert_eq!(split(r"'a b' 'it\'s'"), strings(&["a b", "it's"]));
        assert_eq!(split(r"'no\nescape'"), strings(&[r"no\nescape"]));
        assert_eq!(split("''"), strings(&[""]));
    }

    #[test]
    fn tokenizer_unbalanced() {
        for bad in [r#""abc"#, "'abc", r#""abc"def"#, "'abc'def", r#""abc\"#, r#"a "b"#] {
            assert_eq!(split(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn repr_round_trips() {
        let samples: [&[u8]; 5] =
            [b"", b"plain", b"a \"quoted\" \\ path", b"\n\r\t\x07\x08", b"\x00\xff\x7f"];
        for bytes in samples {
            let quoted = repr(bytes);
            assert_eq!(split_args(quoted.as_bytes()), Some(vec![bytes.to_vec()]), "{quoted}");
        }
        assert_eq!(repr(b"dump.rdb"), "\"dump.rdb\"");
        assert_eq!(repr(b"\x01"), "\"\\x01\"");
    }

    #[test]
    fn repr_matches_sdscatrepr() {
        assert_eq!(repr(b"\x07\n\x00foo\r"), "\"\\a\\n\\x00foo\\r\"");
        assert_eq!(repr(b"a\"b\\c\td\x08\xAB"), "\"a\\\"b\\\\c\\td\\b\\xab\"");
        assert!(!needs_repr(b"appendonly.aof.1.incr.aof"));
        for s in [&b" "[..], b"\"", b"\\", b"\x7f", b"\x80", b"\x0b"] {
            assert!(needs_repr(s), "{s:?}");
        }
    }

    #[test]
    fn split_args_follows_sdssplitargs() {
        let words = |s: &str| {
            split_args(s.as_bytes()).map(|v| {
                v.into_iter().map(|w| String::from_utf8_lossy(&w).into_owned()).collect::<Vec<_>>()
            })
        };
        assert_eq!(words("  a  b\tc "), Some(vec!["a".into(), "b".into(), "c".into()]));
        assert_eq!(words("\"a b\" 'c d'"), Some(vec!["a b".into(), "c d".into()]));
        assert_eq!(words("\"\\x41\\n\\q\""), Some(vec!["A\nq".into()]));
        assert_eq!(words("'it\\'s' '\\n'"), Some(vec!["it's".into(), "\\n".into()]));
        assert_eq!(words("ab\"cd\" e"), Some(vec!["abcd".into(), "e".into()]));
        assert_eq!(words("\"\""), Some(vec![String::new()]));
        assert_eq!(words(""), Some(vec![]));
        assert_eq!(words("\"abc"), None);
        assert_eq!(words("'abc"), None);
        assert_eq!(words("\"a\"b"), None);
        assert_eq!(words("'a'b"), None);
        assert_eq!(words("\"\\x4\""), Some(vec!["x4".into()]));
    }
}
