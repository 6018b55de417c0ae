//! PFDEBUG (GETREG, DECODE, ENCODING, TODENSE) and PFSELFTEST: Valkey's internal commands
//! for looking inside HLL values and testing the implementation.

use bytes::Bytes;

use super::{apply, changed_silently, hll_of, is_raw, Store};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::types::hll;

/// The PFDEBUG subcommands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sub {
    GetReg,
    Decode,
    Encoding,
    ToDense,
}

impl Sub {
    fn parse(word: &[u8]) -> Option<Sub> {
        let subs = [
            ("getreg", Sub::GetReg),
            ("decode", Sub::Decode),
            ("encoding", Sub::Encoding),
            ("todense", Sub::ToDense),
        ];
        subs.iter().find(|(name, _)| word.eq_ignore_ascii_case(name.as_bytes())).map(|&(_, s)| s)
    }
}

/// `ERR Unknown PFDEBUG subcommand '<word>'`: the word as sent, up to a NUL (Valkey
/// formats it as a C string).
fn unknown_subcommand(word: &[u8]) -> CmdError {
    let word = &word[..word.iter().position(|&c| c == 0).unwrap_or(word.len())];
    CmdError::Raw([b"ERR Unknown PFDEBUG subcommand '", word, b"'"].concat())
}

/// PFDEBUG <subcommand> <key>. As in Valkey, the key is looked up (for writing) and
/// checked before the subcommand is: a missing key or a non-HLL fails first.
pub(super) fn pfdebug(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (word, key) = (&argv[1], &argv[2]);
    let now_ms = ctx.now_ms;
    let db = ctx.db();
    // A copy: a debugging command can afford 12 KiB, and the keyspace is free meanwhile.
    let (value, raw) = match db.object(key, now_ms) {
        None => return Err(CmdError::err("The specified key does not exist")),
        Some(e) => (hll_of(e)?.to_vec(), is_raw(e)),
    };
    let encoding = hll::check(&value)?;
    let sub = Sub::parse(word);
    // GETREG and TODENSE convert a sparse HLL to dense, and store it.
    let mut dense = value.clone();
    let converted = match sub {
        Some(Sub::GetReg | Sub::ToDense) => hll::to_dense(&mut dense),
        _ => Ok(false),
    };
    // Every subcommand gets the value for writing, which makes it `raw`, failing or not.
    let store = match converted {
        Ok(true) => Store::between(&value, dense.clone()),
        _ => None,
    };
    apply(db, key, now_ms, store, raw)?;
    if converted? {
        changed_silently(ctx, key);
    }
    match sub {
        None => return Err(unknown_subcommand(word)),
        Some(Sub::GetReg) => {
            let registers = hll::dense_registers(&dense);
            ctx.out.array(registers.len());
            for &r in registers.iter() {
                ctx.out.int(i64::from(r));
            }
        }
        Some(Sub::Decode) if encoding == hll::Encoding::Sparse => {
            ctx.out.bulk(hll::decode(&value).as_bytes())
        }
        Some(Sub::Decode) => return Err(CmdError::err("HLL encoding is not sparse")),
        Some(Sub::Encoding) => ctx.out.simple(encoding.name()),
        Some(Sub::ToDense) => ctx.out.int(converted? as i64),
    }
    Ok(())
}

/// PFSELFTEST: `+OK`, or the first failure (`TESTFAILED ...`).
pub(super) fn pfselftest(ctx: &mut Ctx, _argv: &[Bytes]) -> CmdResult {
    let sparse_max_bytes = ctx.config.memory.hll_sparse_max_bytes;
    match hll::selftest(&mut || ctx.random(), sparse_max_bytes) {
        Ok(()) => {
            ctx.out.ok();
            Ok(())
        }
        Err(text) => Err(CmdError::Other(format!("ERR {text}"))),
    }
}
