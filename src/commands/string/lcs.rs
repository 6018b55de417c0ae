//! LCS: the longest common subsequence of two string keys, as text, as a length (LEN) or as
//! the matching ranges (IDX, with MINMATCHLEN and WITHMATCHLEN).
//!
//! The dynamic programming table costs 4 bytes per pair of positions; like Valkey, a table
//! larger than `proto-max-bulk-len` is refused before anything is allocated.

use bytes::Bytes;

use super::read_str;
use crate::commands::args::{int_arg, is};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::keyspace::db::Db;
use crate::resp::reply::Reply;
use crate::types::string::{lcs as lcs_of, lcs_len, lcs_table_bytes, LcsMatch};

/// Strings this long or longer are refused (Valkey indexes the table with u32).
const INPUT_LEN_MAX: usize = u32::MAX as usize - 1;

/// What LCS replies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    Text,
    Len,
    Idx,
    /// LEN and IDX together: refused.
    LenAndIdx,
}

impl Want {
    fn with_len(self) -> Want {
        match self {
            Want::Text | Want::Len => Want::Len,
            Want::Idx | Want::LenAndIdx => Want::LenAndIdx,
        }
    }

    fn with_idx(self) -> Want {
        match self {
            Want::Text | Want::Idx => Want::Idx,
            Want::Len | Want::LenAndIdx => Want::LenAndIdx,
        }
    }
}

/// Whether each IDX match carries its length (WITHMATCHLEN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MatchLen {
    Omit,
    Include,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LcsOptions {
    want: Want,
    min_match_len: usize,
    match_len: MatchLen,
}

fn parse_options(argv: &[Bytes]) -> Result<LcsOptions, CmdError> {
    let mut opts = LcsOptions { want: Want::Text, min_match_len: 0, match_len: MatchLen::Omit };
    let mut rest = argv.iter();
    while let Some(word) = rest.next() {
        if is(word, "IDX") {
            opts.want = opts.want.with_idx();
        } else if is(word, "LEN") {
            opts.want = opts.want.with_len();
        } else if is(word, "WITHMATCHLEN") {
            opts.match_len = MatchLen::Include;
        } else if is(word, "MINMATCHLEN") && rest.len() > 0 {
            let n = int_arg(rest.next().expect("checked above"))?;
            opts.min_match_len = usize::try_from(n).unwrap_or(0);
        } else {
            return Err(CmdError::Syntax);
        }
    }
    Ok(opts)
}

/// Look a key up as LCS input (counts a hit or miss, touches it); its length, 0 when
/// missing.
fn input_len(db: &mut Db, key: &[u8], now_ms: i64) -> Result<usize, CmdError> {
    match read_str(db, key, now_ms) {
        Ok(v) => Ok(v.map_or(0, |s| s.len())),
        Err(_) => Err(CmdError::LcsNotStrings),
    }
}

/// The bytes of a key already looked up by [`input_len`] (an integer is formatted into
/// `scratch`): borrowed, never copied.
fn input<'a>(db: &'a Db, key: &[u8], scratch: &'a mut [u8; 20]) -> &'a [u8] {
    match db.stored(key).map(|e| e.value()) {
        Some(s) => s.bytes(scratch),
        None => b"",
    }
}

pub(super) fn lcs(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now_ms = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    // Lengths first: every refusal is decided before the values are read.
    let a_len = input_len(db, &argv[1], now_ms)?;
    let b_len = input_len(db, &argv[2], now_ms)?;
    let opts = parse_options(&argv[3..])?;
    if opts.want == Want::LenAndIdx {
        return Err(CmdError::LcsIdxAndLen);
    }
    if a_len >= INPUT_LEN_MAX || b_len >= INPUT_LEN_MAX {
        return Err(CmdError::LcsTooLong);
    }
    if lcs_table_bytes(a_len, b_len) > ctx.config.proto_max_bulk_len as u128 {
        return Err(CmdError::LcsTooMuchMemory);
    }
    let db = &ctx.dbs[ctx.client.db];
    let (mut a_scratch, mut b_scratch) = ([0u8; 20], [0u8; 20]);
    let a = input(db, &argv[1], &mut a_scratch);
    let b = input(db, &argv[2], &mut b_scratch);
    let out = &mut *ctx.out;
    let found = match opts.want {
        // The length alone needs no table walk, so it is computed in two rows.
        Want::Len => {
            out.int(lcs_len(a, b) as i64);
            return Ok(());
        }
        Want::Text | Want::Idx | Want::LenAndIdx => {
            lcs_of(a, b, opts.min_match_len).ok_or(CmdError::LcsTooMuchMemory)?
        }
    };
    if opts.want == Want::Text {
        out.bulk(&found.text);
        return Ok(());
    }
    out.map(2);
    out.bulk(b"matches");
    out.array(found.matches.len());
    for m in &found.matches {
        reply_match(out, m, opts.match_len);
    }
    out.bulk(b"len");
    out.int(found.text.len() as i64);
    Ok(())
}

fn reply_match(out: &mut Reply, m: &LcsMatch, match_len: MatchLen) {
    out.array(if match_len == MatchLen::Include { 3 } else { 2 });
    for (start, end) in [m.a, m.b] {
        out.array(2);
        out.int(start as i64);
        out.int(end as i64);
    }
    if match_len == MatchLen::Include {
        out.int(m.len as i64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> Result<LcsOptions, CmdError> {
        let v: Vec<Bytes> = words.iter().map(|w| Bytes::copy_from_slice(w.as_bytes())).collect();
        parse_options(&v)
    }

    #[test]
    fn options() {
        let o = parse(&["idx", "MINMATCHLEN", "-5", "withmatchlen"]).expect("ok");
        assert_eq!(
            o,
            LcsOptions { want: Want::Idx, min_match_len: 0, match_len: MatchLen::Include }
        );
        assert_eq!(parse(&["LEN", "IDX"]).expect("parsed").want, Want::LenAndIdx);
        assert_eq!(parse(&["MINMATCHLEN"]), Err(CmdError::Syntax));
        assert_eq!(parse(&["MINMATCHLEN", "x"]), Err(CmdError::NotInteger));
        assert_eq!(parse(&["FOO"]), Err(CmdError::Syntax));
    }
}
