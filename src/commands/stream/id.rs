//! Stream ids as command arguments, parsed as Valkey parses them: `<ms>-<seq>`, `<ms>` (the
//! sequence then defaults to what the command says: 0 for a start, the maximum for an end),
//! `-` and `+` (the smallest and greatest ids, refused where the form is *strict*), and
//! `<ms>-*` (XADD: the sequence is to be chosen). Each part is an unsigned 64-bit decimal as
//! Valkey's `string2ull` reads it, as a scan cursor is (`args::parse_cursor`: `strtoull`'s
//! leniency included, leading blanks and a sign).

use crate::commands::args::parse_cursor;
use crate::commands::CmdError;
use crate::types::stream::StreamId;

/// An id argument, and whether its sequence was given (false for `<ms>-*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdArg {
    pub id: StreamId,
    pub seq_given: bool,
}

/// Longest id argument Valkey reads (its 128-byte buffer).
const ID_ARG_MAX: usize = 127;

fn invalid() -> CmdError {
    CmdError::Other("ERR Invalid stream ID specified as stream command argument".into())
}

/// An id where `-` and `+` are allowed (`<ms>-*` is not).
pub fn parse_id(a: &[u8], missing_seq: u64) -> Result<IdArg, CmdError> {
    parse(a, missing_seq, false).and_then(full)
}

/// An id where `-`, `+` and `<ms>-*` are refused.
pub fn parse_strict_id(a: &[u8], missing_seq: u64) -> Result<IdArg, CmdError> {
    parse(a, missing_seq, true).and_then(full)
}

/// XADD's id: as [`parse_strict_id`], and `<ms>-*` is allowed.
pub fn parse_add_id(a: &[u8]) -> Result<IdArg, CmdError> {
    parse(a, 0, true)
}

fn full(arg: IdArg) -> Result<IdArg, CmdError> {
    if arg.seq_given {
        Ok(arg)
    } else {
        Err(invalid())
    }
}

fn parse(a: &[u8], missing_seq: u64, strict: bool) -> Result<IdArg, CmdError> {
    if a.len() > ID_ARG_MAX {
        return Err(invalid());
    }
    // Valkey reads the argument as a C string: a NUL ends it.
    let a = &a[..a.iter().position(|&c| c == 0).unwrap_or(a.len())];
    match a {
        b"-" | b"+" if strict => return Err(invalid()),
        b"-" => return Ok(IdArg { id: StreamId::MIN, seq_given: true }),
        b"+" => return Ok(IdArg { id: StreamId::MAX, seq_given: true }),
        _ => {}
    }
    let (ms, seq) = match a.iter().position(|&c| c == b'-') {
        Some(dash) => (&a[..dash], Some(&a[dash + 1..])),
        None => (a, None),
    };
    let ms = parse_cursor(ms).ok_or_else(invalid)?;
    Ok(match seq {
        Some(b"*") => IdArg { id: StreamId::new(ms, 0), seq_given: false },
        Some(seq) => {
            IdArg { id: StreamId::new(ms, parse_cursor(seq).ok_or_else(invalid)?), seq_given: true }
        }
        None => IdArg { id: StreamId::new(ms, missing_seq), seq_given: true },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(ms: u64, seq: u64) -> StreamId {
        StreamId::new(ms, seq)
    }

    #[test]
    fn forms() {
        assert_eq!(parse_id(b"1-2", 0).unwrap().id, id(1, 2));
        assert_eq!(parse_id(b"5", u64::MAX).unwrap().id, id(5, u64::MAX));
        assert_eq!(parse_id(b"-", 0).unwrap().id, StreamId::MIN);
        assert_eq!(parse_id(b"+", 0).unwrap().id, StreamId::MAX);
        assert!(parse_strict_id(b"+", 0).is_err());
        assert_eq!(parse_add_id(b"7-*").unwrap(), IdArg { id: id(7, 0), seq_given: false });
        assert!(parse_strict_id(b"7-*", 0).is_err());
        assert!(parse_id(b"7-*", 0).is_err());
        assert_eq!(parse_id(b"18446744073709551615-0", 0).unwrap().id, id(u64::MAX, 0));
        for bad in [&b"x"[..], b"1-", b"-1", b"1-x", b"18446744073709551616", b"1-2-3", b""] {
            assert!(parse_id(bad, 0).is_err(), "{bad:?}");
        }
        // strtoull's leniency, as Valkey's string2ull falls back on it.
        assert_eq!(parse_id(b"01-02", 0).unwrap().id, id(1, 2));
        assert_eq!(parse_id(b" 3", 0).unwrap().id, id(3, 0));
    }
}
