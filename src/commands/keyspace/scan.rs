//! Iterating the keyspace: SCAN (cursor, MATCH, COUNT, TYPE), KEYS and RANDOMKEY.

use crate::keyspace::db::ObjView;
use bytes::Bytes;

use crate::commands::args::int_arg;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::glob_match;
use crate::keyspace::db::Db;
use crate::resp::reply::AggKind;

/// Keys SCAN looks at per call unless COUNT says otherwise.
const SCAN_COUNT_DEFAULT: usize = 10;

/// A key pattern; `*` alone matches every key, the empty one included (the glob matcher,
/// like Valkey's, never matches an empty key).
#[derive(Clone, Copy, Debug)]
enum Pattern<'a> {
    All,
    Glob(&'a [u8]),
}

impl<'a> Pattern<'a> {
    fn new(p: &'a [u8]) -> Pattern<'a> {
        if p == b"*" {
            Pattern::All
        } else {
            Pattern::Glob(p)
        }
    }

    fn matches(&self, key: &[u8]) -> bool {
        match self {
            Pattern::All => true,
            Pattern::Glob(p) => glob_match(p, key, false),
        }
    }
}

/// SCAN's options.
struct ScanOpts<'a> {
    pattern: Pattern<'a>,
    count: usize,
    /// Only keys whose TYPE reply equals this, ignoring case.
    type_name: Option<&'a [u8]>,
}

fn parse_scan_opts(opts: &[Bytes]) -> Result<ScanOpts<'_>, CmdError> {
    let mut out = ScanOpts { pattern: Pattern::All, count: SCAN_COUNT_DEFAULT, type_name: None };
    let mut rest = opts;
    while let [word, value, tail @ ..] = rest {
        if word.eq_ignore_ascii_case(b"count") {
            let n = int_arg(value)?;
            out.count = usize::try_from(n).ok().filter(|&n| n >= 1).ok_or(CmdError::Syntax)?;
        } else if word.eq_ignore_ascii_case(b"match") {
            out.pattern = Pattern::new(value);
        } else if word.eq_ignore_ascii_case(b"type") {
            out.type_name = Some(value);
        } else {
            return Err(CmdError::Syntax);
        }
        rest = tail;
    }
    if rest.is_empty() {
        Ok(out)
    } else {
        Err(CmdError::Syntax)
    }
}

/// A SCAN cursor, parsed as C's `strtoul` does in Valkey: no leading space, an optional sign
/// (a minus negates modulo 2^64), decimal digits, and nothing after them but a NUL byte. An
/// empty cursor is 0.
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
        // No conversion: the end pointer stays at the start of the argument.
        return (a.is_empty() || a[0] == 0).then_some(0);
    }
    if body.get(digits).is_some_and(|&c| c != 0) {
        return None;
    }
    let mut n: u64 = 0;
    for &c in &body[..digits] {
        n = n.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(if negative { n.wrapping_neg() } else { n })
}

pub fn scan(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let cursor = parse_cursor(&argv[1]).ok_or(CmdError::InvalidCursor)?;
    let opts = parse_scan_opts(&argv[2..])?;
    let now = ctx.now_ms;
    let db = &mut ctx.srv.dbs[ctx.client.db];
    let mut found: Vec<Vec<u8>> = Vec::new();
    let next = db.scan(cursor, opts.count, |key, _| {
        if opts.pattern.matches(key) {
            found.push(key.to_vec());
        }
    });
    // The type filter and expiry go through a lookup, as in Valkey: an expired key is
    // deleted here and not returned.
    found.retain(|key| match opts.type_name {
        None => db.contains(key, now),
        Some(t) => db
            .read_obj_notouch(key, now)
            .is_some_and(|obj| t.eq_ignore_ascii_case(obj.value_ref().type_name().as_bytes())),
    });
    ctx.out.array(2);
    ctx.out.bulk(next.to_string().as_bytes());
    ctx.out.array(found.len());
    for key in &found {
        ctx.out.bulk(key);
    }
    Ok(())
}

pub fn keys(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let pattern = Pattern::new(&argv[1]);
    let now = ctx.now_ms;
    let db = &ctx.srv.dbs[ctx.client.db];
    let out = &mut *ctx.out;
    let header = out.begin_deferred(AggKind::Array);
    let mut n = 0;
    db.for_each(|key, obj| {
        if Db::is_live(obj, now) && pattern.matches(key) {
            out.bulk(key);
            n += 1;
        }
    });
    out.end_deferred(header, n);
    Ok(())
}

pub fn randomkey(ctx: &mut Ctx, _argv: &[Bytes]) -> CmdResult {
    let seed = ctx.srv.random();
    let now = ctx.now_ms;
    match ctx.db().random_key(seed, now) {
        Some(key) => ctx.out.bulk(&key),
        None => ctx.out.null(),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_parse_as_strtoul() {
        assert_eq!(parse_cursor(b"0"), Some(0));
        assert_eq!(parse_cursor(b""), Some(0));
        assert_eq!(parse_cursor(b"+5"), Some(5));
        assert_eq!(parse_cursor(b"-1"), Some(u64::MAX));
        assert_eq!(parse_cursor(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_cursor(b"-18446744073709551615"), Some(1));
        assert_eq!(parse_cursor(b"7\0junk"), Some(7));
        assert_eq!(parse_cursor(b"18446744073709551616"), None);
        assert_eq!(parse_cursor(b" 5"), None);
        assert_eq!(parse_cursor(b"-"), None);
        assert_eq!(parse_cursor(b"5x"), None);
        assert_eq!(parse_cursor(b"abc"), None);
    }

    #[test]
    fn scan_options() {
        let v = |w: &[&str]| -> Vec<Bytes> {
            w.iter().map(|s| Bytes::copy_from_slice(s.as_bytes())).collect()
        };
        assert!(parse_scan_opts(&v(&["COUNT", "0"])).is_err());
        assert_eq!(parse_scan_opts(&v(&["count", "x"])).err(), Some(CmdError::NotInteger));
        assert_eq!(parse_scan_opts(&v(&["match"])).err(), Some(CmdError::Syntax));
        let args = v(&["count", "5", "TYPE", "string", "match", "a*"]);
        let o = parse_scan_opts(&args).unwrap();
        assert_eq!(o.count, 5);
        assert_eq!(o.type_name, Some(&b"string"[..]));
        assert!(o.pattern.matches(b"ab") && !o.pattern.matches(b"b"));
        assert!(Pattern::new(b"*").matches(b""));
    }
}
