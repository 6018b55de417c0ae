//! HSCAN key cursor [MATCH pattern] [COUNT count], as Valkey 7 answers it.
//!
//! The cursor is checked first (`invalid cursor`), then the key (a missing key answers an
//! empty scan before the options are even read), then the options. A listpack hash answers
//! every pair and cursor 0 whatever the cursor; a table visits about COUNT items (see
//! [`HashObj::scan`]). MATCH filters on the field. TYPE is SCAN's alone: here it is a
//! syntax error, as in Valkey.
//!
//! The cursor grammar and the pattern shortcut are SCAN's (`commands::keyspace::scan`),
//! restated here because that module keeps them private.

use bytes::Bytes;

use crate::commands::args::int_arg;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::glob_match;
use crate::types::hash::HashObj;
use crate::types::listpack::INT_DECIMAL_BYTES_MAX;

/// Items (a pair is two) HSCAN gathers per call unless COUNT says otherwise.
const COUNT_DEFAULT: usize = 10;

/// HSCAN's options.
#[derive(Debug)]
struct ScanOpts<'a> {
    /// None: every field (the pattern `*`, which also matches the empty field that the glob
    /// matcher, like Valkey's, never matches).
    pattern: Option<&'a [u8]>,
    count: usize,
}

fn parse_opts(opts: &[Bytes]) -> Result<ScanOpts<'_>, CmdError> {
    let mut out = ScanOpts { pattern: None, count: COUNT_DEFAULT };
    let mut rest = opts;
    while !rest.is_empty() {
        let [word, value, tail @ ..] = rest else { return Err(CmdError::Syntax) };
        if word.eq_ignore_ascii_case(b"count") {
            let n = int_arg(value)?;
            out.count = usize::try_from(n).ok().filter(|&n| n >= 1).ok_or(CmdError::Syntax)?;
        } else if word.eq_ignore_ascii_case(b"match") {
            out.pattern = (&value[..] != b"*").then_some(&value[..]);
        } else {
            return Err(CmdError::Syntax);
        }
        rest = tail;
    }
    Ok(out)
}

/// A cursor as C's `strtoul` reads it in Valkey: no leading space, an optional sign (a minus
/// negates modulo 2^64), digits, and nothing after them but a NUL byte; no digits at all is 0
/// only for an empty argument (or one starting with NUL).
fn parse_cursor(a: &[u8]) -> Option<u64> {
    if a.first().is_some_and(|&c| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')) {
        return None;
    }
    let (negative, body) = match a.first() {
        Some(b'-') => (true, &a[1..]),
        Some(b'+') => (false, &a[1..]),
        _ => (false, a),
    };
    let digits = body.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return (a.is_empty() || a[0] == 0).then_some(0);
    }
    if body.get(digits).is_some_and(|&c| c != 0) {
        return None;
    }
    let mut n: u64 = 0;
    for &c in &body[..digits] {
        n = n.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(if negative { n.wrapping_neg() } else { n })
}

pub(super) fn hscan(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let cursor = parse_cursor(&argv[2]).ok_or(CmdError::InvalidCursor)?;
    let db = &mut ctx.srv.dbs[ctx.client.db];
    let Some(h) = db.read_agg::<HashObj>(&argv[1], ctx.now_ms)? else {
        ctx.out.array(2);
        ctx.out.bulk(b"0");
        ctx.out.array(0);
        return Ok(());
    };
    let opts = parse_opts(&argv[3..])?;
    let mut found: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let next = h.scan(cursor, opts.count, |(field, value)| {
        let mut buf = [0u8; INT_DECIMAL_BYTES_MAX];
        let field = field.write_to(&mut buf);
        if opts.pattern.is_none_or(|p| glob_match(p, field, false)) {
            found.push((field.to_vec(), value.to_vec()));
        }
    });
    ctx.out.array(2);
    ctx.out.bulk(next.to_string().as_bytes());
    ctx.out.array(2 * found.len());
    for (field, value) in &found {
        ctx.out.bulk(field);
        ctx.out.bulk(value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Bytes> {
        words.iter().map(|w| Bytes::copy_from_slice(w.as_bytes())).collect()
    }

    #[test]
    fn cursors_parse_as_strtoul() {
        assert_eq!(parse_cursor(b"0"), Some(0));
        assert_eq!(parse_cursor(b""), Some(0));
        assert_eq!(parse_cursor(b"+5"), Some(5));
        assert_eq!(parse_cursor(b"-1"), Some(u64::MAX));
        assert_eq!(parse_cursor(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_cursor(b"18446744073709551616"), None);
        assert_eq!(parse_cursor(b"7\0junk"), Some(7));
        assert_eq!(parse_cursor(b" 5"), None);
        assert_eq!(parse_cursor(b"5x"), None);
        assert_eq!(parse_cursor(b"x"), None);
    }

    #[test]
    fn options() {
        assert_eq!(parse_opts(&args(&["COUNT", "0"])).err(), Some(CmdError::Syntax));
        assert_eq!(parse_opts(&args(&["COUNT", "-1"])).err(), Some(CmdError::Syntax));
        assert_eq!(parse_opts(&args(&["count", "x"])).err(), Some(CmdError::NotInteger));
        assert_eq!(parse_opts(&args(&["match"])).err(), Some(CmdError::Syntax));
        assert_eq!(parse_opts(&args(&["type", "hash"])).err(), Some(CmdError::Syntax));
        let a = args(&["count", "5", "MATCH", "a*", "COUNT", "7"]);
        let o = parse_opts(&a).unwrap();
        assert_eq!((o.count, o.pattern), (7, Some(&b"a*"[..])));
        assert_eq!(parse_opts(&args(&["match", "*"])).unwrap().pattern, None);
    }
}
