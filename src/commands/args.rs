//! A cursor over a command's arguments: typed accessors that return the right `CmdError`,
//! so option parsing in handlers reads as a small grammar; and the argument grammars that
//! several families share, so each is written once:
//! - scans: the cursor and options of SCAN, HSCAN, SSCAN and ZSCAN, and the order in which
//!   the element scans check their arguments ([`scan_elements`]);
//! - blocking timeouts of the list and sorted set commands ([`parse_timeout`]);
//! - `numkeys key... <end> [COUNT count]` of LMPOP, BLMPOP, ZMPOP and BZMPOP
//!   ([`parse_mpop`]).

use bytes::Bytes;

use crate::commands::error::CmdError;
use crate::commands::{CmdResult, Ctx};
use crate::config::glob_match;
use crate::resp::reply::Reply;
use crate::types::agg::Typed;
use crate::types::string::{parse_f64, parse_i64, LongDouble};

pub struct Args<'a> {
    argv: &'a [Bytes],
    pos: usize,
}

impl<'a> Args<'a> {
    /// A cursor starting at argument `pos` (1 skips the command name).
    pub fn new(argv: &'a [Bytes], pos: usize) -> Args<'a> {
        Args { argv, pos }
    }

    pub fn remaining(&self) -> usize {
        self.argv.len().saturating_sub(self.pos)
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub fn peek(&self) -> Option<&'a Bytes> {
        self.argv.get(self.pos)
    }

    /// The next argument, or a syntax error.
    pub fn next_bytes(&mut self) -> Result<&'a Bytes, CmdError> {
        let a = self.argv.get(self.pos).ok_or(CmdError::Syntax)?;
        self.pos += 1;
        Ok(a)
    }

    pub fn next_opt(&mut self) -> Option<&'a Bytes> {
        let a = self.argv.get(self.pos)?;
        self.pos += 1;
        Some(a)
    }

    /// The next argument as an integer (`value is not an integer or out of range`).
    pub fn next_i64(&mut self) -> Result<i64, CmdError> {
        int_arg(self.next_bytes()?)
    }

    pub fn next_f64(&mut self) -> Result<f64, CmdError> {
        parse_f64(self.next_bytes()?).ok_or(CmdError::NotFloat)
    }

    /// True (and advance) when the next argument equals `word` case-insensitively.
    pub fn eat(&mut self, word: &str) -> bool {
        match self.peek() {
            Some(a) if a.eq_ignore_ascii_case(word.as_bytes()) => {
                self.pos += 1;
                true
            }
            _ => false,
        }
    }

    /// Fails with a syntax error when arguments are left.
    pub fn finish(&self) -> Result<(), CmdError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(CmdError::Syntax)
        }
    }
}

/// Parse an integer argument.
pub fn int_arg(a: &[u8]) -> Result<i64, CmdError> {
    parse_i64(a).ok_or(CmdError::NotInteger)
}

/// An integer whose negation fits too, as Valkey reads counts and ranks that may be
/// negative (`-LONG_MAX..=LONG_MAX`): `i64::MIN` is refused with the range error.
pub fn negatable_int_arg(a: &[u8]) -> Result<i64, CmdError> {
    match int_arg(a)? {
        i64::MIN => Err(CmdError::OutOfRangeBetween { min: -i64::MAX, max: i64::MAX }),
        n => Ok(n),
    }
}

/// The count of LPOP, RPOP, SPOP, ZPOPMIN and ZPOPMAX: not negative; a negative count and
/// one that is no integer get the same `value is out of range, must be positive`.
pub fn pop_count_arg(a: &[u8]) -> Result<usize, CmdError> {
    int_arg(a).ok().and_then(|n| usize::try_from(n).ok()).ok_or(CmdError::OutOfRangePositive)
}

/// True when `a` equals `word`, ignoring ASCII case.
pub fn is(a: &[u8], word: &str) -> bool {
    a.eq_ignore_ascii_case(word.as_bytes())
}

/// Lossy text of an argument, for error messages.
pub fn text(a: &[u8]) -> String {
    String::from_utf8_lossy(a).into_owned()
}

// ----- scans -----------------------------------------------------------------------------

/// Items SCAN, HSCAN, SSCAN and ZSCAN look at per call unless COUNT says otherwise.
const SCAN_COUNT_DEFAULT: usize = 10;

/// A key (or field, member) pattern; `*` alone matches everything, the empty string
/// included (the glob matcher, like Valkey's, never matches an empty string).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern<'a> {
    All,
    Glob(&'a [u8]),
}

impl<'a> Pattern<'a> {
    pub fn new(p: &'a [u8]) -> Pattern<'a> {
        if p == b"*" {
            Pattern::All
        } else {
            Pattern::Glob(p)
        }
    }

    pub fn matches(&self, key: &[u8]) -> bool {
        match self {
            Pattern::All => true,
            Pattern::Glob(p) => glob_match(p, key, false),
        }
    }
}

/// The options of SCAN and of the element scans.
#[derive(Debug)]
pub struct ScanOpts<'a> {
    pub pattern: Pattern<'a>,
    pub count: usize,
    /// Only keys whose TYPE reply equals this, ignoring case (SCAN only).
    pub type_name: Option<&'a [u8]>,
    /// What a pair scan (HSCAN, ZSCAN) replies for each pair.
    pub items: ScanItems,
}

/// What HSCAN and ZSCAN reply for each pair: field and value (member and score), or, with
/// Valkey 8's `NOVALUES` / `NOSCORES`, the field (member) alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanItems {
    Pairs,
    KeysOnly,
}

/// Which scan is parsing its options: `TYPE` is SCAN's alone (a syntax error elsewhere),
/// `NOVALUES` HSCAN's and `NOSCORES` ZSCAN's (each an error of its own elsewhere), as in
/// Valkey 9.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanKind {
    Keys,
    Hash,
    Set,
    Zset,
}

/// The names SCAN's `TYPE` accepts (any case): the types Valkey 9.1 has without modules.
const SCAN_TYPE_NAMES: [&str; 6] = ["string", "list", "set", "zset", "hash", "stream"];

/// `[MATCH pattern] [COUNT count] [TYPE type] [NOVALUES] [NOSCORES]`, in any order, read
/// from left to right (the first bad one answers), the last of each winning.
pub fn parse_scan_opts(opts: &[Bytes], kind: ScanKind) -> Result<ScanOpts<'_>, CmdError> {
    let mut out = ScanOpts {
        pattern: Pattern::All,
        count: SCAN_COUNT_DEFAULT,
        type_name: None,
        items: ScanItems::Pairs,
    };
    let mut rest = opts;
    while let [word, tail @ ..] = rest {
        if word.eq_ignore_ascii_case(b"novalues") {
            if kind != ScanKind::Hash {
                return Err(CmdError::ScanOptionOnlyIn("NOVALUES", "HSCAN"));
            }
            out.items = ScanItems::KeysOnly;
            rest = tail;
            continue;
        }
        if word.eq_ignore_ascii_case(b"noscores") {
            if kind != ScanKind::Zset {
                return Err(CmdError::ScanOptionOnlyIn("NOSCORES", "ZSCAN"));
            }
            out.items = ScanItems::KeysOnly;
            rest = tail;
            continue;
        }
        let [value, tail @ ..] = tail else {
            return Err(CmdError::Syntax);
        };
        if word.eq_ignore_ascii_case(b"count") {
            let n = int_arg(value)?;
            out.count = usize::try_from(n).ok().filter(|&n| n >= 1).ok_or(CmdError::Syntax)?;
        } else if word.eq_ignore_ascii_case(b"match") {
            out.pattern = Pattern::new(value);
        } else if kind == ScanKind::Keys && word.eq_ignore_ascii_case(b"type") {
            if !SCAN_TYPE_NAMES.iter().any(|t| value.eq_ignore_ascii_case(t.as_bytes())) {
                return Err(CmdError::UnknownTypeName(value.to_vec()));
            }
            out.type_name = Some(value);
        } else {
            return Err(CmdError::Syntax);
        }
        rest = tail;
    }
    Ok(out)
}

/// A scan cursor, parsed as Valkey 9's `string2ull`: the argument is read as a C string
/// (up to its first NUL byte); a strict integer (`string2ll`'s form) is refused when negative;
/// anything else goes to `strtoull`, which skips leading white space, takes an optional sign
/// (a minus negates modulo 2^64) and decimal digits, and must end the string without
/// overflow. So `-1` and the empty cursor are invalid, while ` -1`, `+5` and `-0` are not.
pub fn parse_cursor(arg: &[u8]) -> Option<u64> {
    let s = &arg[..arg.iter().position(|&c| c == 0).unwrap_or(arg.len())];
    if let Some(n) = crate::types::string::parse_i64(s) {
        return u64::try_from(n).ok();
    }
    let is_space = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let body = &s[s.iter().take_while(|c| is_space(c)).count()..];
    let (negative, digits) = match body.first() {
        Some(b'-') => (true, &body[1..]),
        Some(b'+') => (false, &body[1..]),
        _ => (false, body),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut n: u64 = 0;
    for &c in digits {
        n = n.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(if negative { n.wrapping_neg() } else { n })
}

/// `[cursor, [items...]]`, the reply of every scan.
pub fn scan_reply(out: &mut Reply, next: u64, items: &[Vec<u8>]) {
    out.array(2);
    out.bulk(next.to_string().as_bytes());
    out.array(items.len());
    for item in items {
        out.bulk(item);
    }
}

/// HSCAN, SSCAN and ZSCAN: `key cursor [MATCH pattern] [COUNT count]`, as Valkey 7 answers
/// them. The cursor is checked first (`invalid cursor`), then the key (a missing key
/// answers an empty scan before the options are even read), then the options.
///
/// `scan(obj, cursor, opts, items)` visits about `opts.count` items of `obj` from `cursor`,
/// pushes the reply items of those whose field or member `opts.pattern` matches (a pair is
/// two items), and returns the next cursor.
pub fn scan_elements<T: Typed>(
    ctx: &mut Ctx,
    argv: &[Bytes],
    kind: ScanKind,
    scan: impl FnOnce(&T, u64, &ScanOpts<'_>, &mut Vec<Vec<u8>>) -> u64,
) -> CmdResult {
    let cursor = parse_cursor(&argv[2]).ok_or(CmdError::InvalidCursor)?;
    let now = ctx.now_ms;
    let Some(obj) = ctx.dbs[ctx.client.db].read_agg::<T>(&argv[1], now)? else {
        scan_reply(ctx.out, 0, &[]);
        return Ok(());
    };
    let opts = parse_scan_opts(&argv[3..], kind)?;
    let mut items = Vec::new();
    let next = scan(obj, cursor, &opts, &mut items);
    scan_reply(ctx.out, next, &items);
    Ok(())
}

// ----- blocking timeouts -----------------------------------------------------------------

/// A blocking timeout in seconds (BLPOP, BZPOPMIN and the other blocking list and sorted
/// set commands), parsed as Valkey's `getTimeoutFromObjectOrReply`: any number `strtold`
/// reads whole (decimal, hexadecimal, `inf`; no overflow or underflow of a long double),
/// turned into milliseconds rounded up; 0 (or anything that rounds up to 0) waits forever.
/// Returns the unix time in ms to give up at, or None for forever.
///
/// Valkey computes in long double; here the milliseconds are an f64, which differs only in
/// the rounding of values that no client could tell apart by a millisecond.
pub fn parse_timeout(arg: &[u8], now_ms: i64) -> Result<Option<i64>, CmdError> {
    let value = LongDouble::parse(arg).ok_or(CmdError::TimeoutNotFloat)?;
    let secs: f64 = value.to_human_string().parse().map_err(|_| CmdError::TimeoutNotFloat)?;
    let ms = secs * 1000.0;
    // Valkey 8 refuses +inf and huge values here; Redis 7.0 called them negative.
    if ms > i64::MAX as f64 {
        return Err(CmdError::TimeoutOutOfRange);
    }
    // A positive value too small for the decimal text still rounds up to 1 ms.
    let tiny = secs == 0.0 && value != LongDouble::ZERO && arg.first() != Some(&b'-');
    // `as` saturates: -inf becomes i64::MIN, which is negative as in Valkey.
    let timeout_ms = if tiny { 1 } else { ms.ceil() as i64 };
    if timeout_ms < 0 {
        return Err(CmdError::TimeoutNegative);
    }
    if timeout_ms == 0 {
        return Ok(None);
    }
    if timeout_ms > i64::MAX - now_ms {
        return Err(CmdError::TimeoutOutOfRange);
    }
    Ok(Some(now_ms + timeout_ms))
}

// ----- LMPOP and ZMPOP -------------------------------------------------------------------

/// `numkeys key [key ...] <end> [COUNT count]` of LMPOP, BLMPOP, ZMPOP and BZMPOP, from
/// `argv[at]`, checked in Valkey's order. `end` reads the end word (LEFT|RIGHT or MIN|MAX)
/// or fails. Returns the keys, the end and the count (1 without COUNT).
pub fn parse_mpop<E>(
    argv: &[Bytes],
    at: usize,
    end: impl FnOnce(&[u8]) -> Result<E, CmdError>,
) -> Result<(&[Bytes], E, usize), CmdError> {
    let numkeys = int_arg(&argv[at]).map_err(|_| CmdError::NumkeysNotPositive)?;
    if numkeys < 1 {
        return Err(CmdError::NumkeysNotPositive);
    }
    let end_at = usize::try_from(numkeys)
        .ok()
        .and_then(|n| n.checked_add(at + 1))
        .filter(|&i| i < argv.len())
        .ok_or(CmdError::Syntax)?;
    let end = end(&argv[end_at])?;
    let mut count = None;
    let mut args = Args::new(argv, end_at + 1);
    while let Some(opt) = args.next_opt() {
        if count.is_none() && is(opt, "count") && !args.is_empty() {
            let n = int_arg(args.next_bytes()?).map_err(|_| CmdError::CountNotPositive)?;
            if n < 1 {
                return Err(CmdError::CountNotPositive);
            }
            count = Some(usize::try_from(n).unwrap_or(usize::MAX));
        } else {
            return Err(CmdError::Syntax);
        }
    }
    Ok((&argv[at + 1..end_at], end, count.unwrap_or(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_parse_as_valkey_9() {
        assert_eq!(parse_cursor(b"0"), Some(0));
        assert_eq!(parse_cursor(b"+5"), Some(5));
        assert_eq!(parse_cursor(b"007"), Some(7));
        assert_eq!(parse_cursor(b"-0"), Some(0));
        assert_eq!(parse_cursor(b" -1"), Some(u64::MAX));
        assert_eq!(parse_cursor(b"\t1"), Some(1));
        assert_eq!(parse_cursor(b"  +3"), Some(3));
        assert_eq!(parse_cursor(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_cursor(b"-18446744073709551615"), Some(1));
        assert_eq!(parse_cursor(b"7\0junk"), Some(7));
        assert_eq!(parse_cursor(b"-1"), None);
        assert_eq!(parse_cursor(b"-5"), None);
        assert_eq!(parse_cursor(b""), None);
        assert_eq!(parse_cursor(b"\0junk"), None);
        assert_eq!(parse_cursor(b" "), None);
        assert_eq!(parse_cursor(b"18446744073709551616"), None);
        assert_eq!(parse_cursor(b"1 "), None);
        assert_eq!(parse_cursor(b"0x10"), None);
        assert_eq!(parse_cursor(b"-"), None);
        assert_eq!(parse_cursor(b"+"), None);
        assert_eq!(parse_cursor(b"5x"), None);
    }

    fn v(words: &[&str]) -> Vec<Bytes> {
        words.iter().map(|s| Bytes::copy_from_slice(s.as_bytes())).collect()
    }

    #[test]
    fn scan_options() {
        for kind in [ScanKind::Keys, ScanKind::Hash, ScanKind::Set, ScanKind::Zset] {
            // The pattern as owned bytes, None for "everything".
            let p = |w: &[&str]| {
                parse_scan_opts(&v(w), kind).map(|o| match o.pattern {
                    Pattern::All => (None, o.count),
                    Pattern::Glob(g) => (Some(g.to_vec()), o.count),
                })
            };
            assert_eq!(p(&["COUNT", "0"]).err(), Some(CmdError::Syntax));
            assert_eq!(p(&["COUNT", "-1"]).err(), Some(CmdError::Syntax));
            assert_eq!(p(&["count", "x"]).err(), Some(CmdError::NotInteger));
            assert_eq!(p(&["match"]).err(), Some(CmdError::Syntax));
            assert_eq!(p(&["count", "5", "match"]).err(), Some(CmdError::Syntax));
            assert_eq!(p(&["bogus", "1"]).err(), Some(CmdError::Syntax));
            let last_wins = p(&["count", "5", "MATCH", "a*", "COUNT", "7", "match", "b*"]);
            assert_eq!(last_wins, Ok((Some(b"b*".to_vec()), 7)));
            assert_eq!(p(&["MATCH", "*"]), Ok((None, SCAN_COUNT_DEFAULT)));
        }
        let args = v(&["count", "5", "TYPE", "string", "match", "a*"]);
        let o = parse_scan_opts(&args, ScanKind::Keys).unwrap();
        assert_eq!(o.count, 5);
        assert_eq!(o.type_name, Some(&b"string"[..]));
        assert!(o.pattern.matches(b"ab") && !o.pattern.matches(b"b"));
        assert!(Pattern::new(b"*").matches(b""));
        // TYPE is SCAN's alone, and names a type Valkey knows.
        assert_eq!(
            parse_scan_opts(&v(&["type", "hash"]), ScanKind::Hash).err(),
            Some(CmdError::Syntax)
        );
        assert_eq!(
            parse_scan_opts(&v(&["type", "nosuch", "count", "0"]), ScanKind::Keys).err(),
            Some(CmdError::UnknownTypeName(b"nosuch".to_vec()))
        );
        // NOVALUES is HSCAN's, NOSCORES ZSCAN's; each a word alone.
        let items = |w: &[&str], kind| parse_scan_opts(&v(w), kind).map(|o| o.items);
        assert_eq!(items(&["novalues"], ScanKind::Hash), Ok(ScanItems::KeysOnly));
        assert_eq!(items(&["NOSCORES", "count", "3"], ScanKind::Zset), Ok(ScanItems::KeysOnly));
        assert_eq!(items(&["count", "3"], ScanKind::Zset), Ok(ScanItems::Pairs));
        assert_eq!(
            items(&["novalues"], ScanKind::Set),
            Err(CmdError::ScanOptionOnlyIn("NOVALUES", "HSCAN"))
        );
        assert_eq!(
            items(&["noscores"], ScanKind::Keys),
            Err(CmdError::ScanOptionOnlyIn("NOSCORES", "ZSCAN"))
        );
        assert_eq!(items(&["novalues", "count"], ScanKind::Hash), Err(CmdError::Syntax));
    }

    #[test]
    fn counts() {
        assert_eq!(negatable_int_arg(b"-9223372036854775807"), Ok(-i64::MAX));
        assert_eq!(
            negatable_int_arg(b"-9223372036854775808"),
            Err(CmdError::OutOfRangeBetween { min: -i64::MAX, max: i64::MAX })
        );
        assert_eq!(negatable_int_arg(b"x"), Err(CmdError::NotInteger));
        assert_eq!(pop_count_arg(b"0"), Ok(0));
        assert_eq!(pop_count_arg(b"9223372036854775807"), Ok(i64::MAX as usize));
        for bad in ["-1", "x", "1.5", "9223372036854775808"] {
            assert_eq!(pop_count_arg(bad.as_bytes()), Err(CmdError::OutOfRangePositive), "{bad}");
        }
    }

    #[test]
    fn timeouts_parse_as_valkey() {
        let t = |s: &str| parse_timeout(s.as_bytes(), 1_000);
        assert_eq!(t("0"), Ok(None));
        assert_eq!(t("0.0"), Ok(None));
        assert_eq!(t("1"), Ok(Some(2_000)));
        assert_eq!(t("0.1"), Ok(Some(1_100)));
        assert_eq!(t("0.0001"), Ok(Some(1_001)));
        assert_eq!(t("1e-30"), Ok(Some(1_001)));
        // Below f64's range but within a long double's, as Valkey reads it.
        assert_eq!(t("1e-400"), Ok(Some(1_001)));
        assert_eq!(t("0x10"), Ok(Some(17_000)));
        assert_eq!(t("1e3"), Ok(Some(1_001_000)));
        // Rounds up towards zero for tiny negatives: waits forever, as Valkey does.
        assert_eq!(t("-0.0001"), Ok(None));
        assert_eq!(t("-1e-400"), Ok(None));
        assert_eq!(t("-0"), Ok(None));
        assert_eq!(t("-1"), Err(CmdError::TimeoutNegative));
        assert_eq!(t("-inf"), Err(CmdError::TimeoutNegative));
        assert_eq!(t("inf"), Err(CmdError::TimeoutOutOfRange));
        assert_eq!(t("1e400"), Err(CmdError::TimeoutOutOfRange));
        assert_eq!(t("9223372036854775"), Err(CmdError::TimeoutOutOfRange));
        // Past a long double's range: strtold overflows or underflows, which Valkey refuses.
        for bad in ["", "x", "nan", " 1", "1 ", "1e", "0x", "--1", "1e5000", "1e-5000"] {
            assert_eq!(t(bad), Err(CmdError::TimeoutNotFloat), "{bad:?}");
        }
    }

    #[test]
    fn mpop_arguments() {
        let end = |a: &[u8]| if is(a, "left") { Ok(0) } else { Err(CmdError::Syntax) };
        let p = |w: &[&str]| {
            let argv = v(w);
            parse_mpop(&argv, 1, end).map(|(keys, e, count)| (keys.len(), e, count))
        };
        assert_eq!(p(&["lmpop", "2", "a", "b", "LEFT"]), Ok((2, 0, 1)));
        assert_eq!(p(&["lmpop", "1", "a", "left", "COUNT", "9"]), Ok((1, 0, 9)));
        assert_eq!(p(&["lmpop", "0", "a", "LEFT"]), Err(CmdError::NumkeysNotPositive));
        assert_eq!(p(&["lmpop", "x", "a", "LEFT"]), Err(CmdError::NumkeysNotPositive));
        assert_eq!(p(&["lmpop", "2", "a", "LEFT"]), Err(CmdError::Syntax));
        assert_eq!(p(&["lmpop", "9223372036854775807", "a", "LEFT"]), Err(CmdError::Syntax));
        assert_eq!(p(&["lmpop", "1", "a", "up"]), Err(CmdError::Syntax));
        assert_eq!(p(&["lmpop", "1", "a", "LEFT", "COUNT", "0"]), Err(CmdError::CountNotPositive));
        assert_eq!(p(&["lmpop", "1", "a", "LEFT", "COUNT", "x"]), Err(CmdError::CountNotPositive));
        assert_eq!(p(&["lmpop", "1", "a", "LEFT", "COUNT"]), Err(CmdError::Syntax));
        assert_eq!(
            p(&["lmpop", "1", "a", "LEFT", "COUNT", "1", "COUNT", "2"]),
            Err(CmdError::Syntax)
        );
        let huge = p(&["lmpop", "1", "a", "LEFT", "COUNT", "9223372036854775807"]);
        assert_eq!(huge, Ok((1, 0, i64::MAX as usize)));
    }
}
