//! DEBUG subcommands that turn testing knobs: `QUICKLIST-PACKED-THRESHOLD` (long list
//! elements get nodes of their own), `AOF-FLUSH-SLEEP` (each AOF write waits first),
//! `DICT-RESIZING` (the databases' tables stop resizing), `REPLYBUFFER RESIZING` (drained
//! reply buffers keep their size), and `MALLCTL` / `MALLCTL-STR` (jemalloc's settings by
//! name). Each knob belongs to the layer it changes; this module only parses and answers,
//! with Valkey 9.1's replies and errors.

use bytes::Bytes;

use crate::commands::args::is;
use crate::commands::error::DebugError;
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::memory::mallctl;

/// `DEBUG QUICKLIST-PACKED-THRESHOLD <size>`: a memory value (`1kb`, `10mb`...) up to just
/// under 4 GB; 0 turns the threshold off (see `types::list::set_packed_threshold`).
pub fn quicklist_packed_threshold(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let bytes = std::str::from_utf8(&argv[2]).ok().and_then(crate::config::units::parse_memory);
    match bytes {
        Some(n) if crate::types::list::set_packed_threshold(n) => {
            ctx.out.ok();
            Ok(())
        }
        _ => Err(CmdError::Debug(DebugError::PackedThreshold)),
    }
}

/// `DEBUG AOF-FLUSH-SLEEP <microsec>`: read as C's `atoi` (not a number is 0, off; so is a
/// negative number).
pub fn aof_flush_sleep(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let us = u64::try_from(super::leading_i64(&argv[2])).unwrap_or(0);
    crate::persist::aof::set_flush_sleep_us(us);
    ctx.out.ok();
    Ok(())
}

/// `DEBUG DICT-RESIZING <0|1>`: whether the databases' key tables may grow and shrink.
pub fn dict_resizing(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    crate::keyspace::keys::set_resizing(super::leading_i64(&argv[2]) != 0);
    ctx.out.ok();
    Ok(())
}

/// `DEBUG REPLYBUFFER RESIZING <0|1>`: whether a client's drained reply buffer is given back
/// down to 16 KiB when it grew past 64 KiB. Valkey's other option, `PEAK-RESET-TIME`, sets
/// how often its resizer forgets a buffer's peak use; ferrokey's resizing keeps no peak (it
/// shrinks a buffer once the buffer is drained), so that option is answered as an unknown
/// one, with the same error as any other.
pub fn replybuffer(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if argv.len() != 4 || !is(&argv[2], "resizing") {
        return Err(super::subcommand_syntax(argv));
    }
    ctx.srv.reply_buffer_resizing = super::leading_i64(&argv[3]) != 0;
    ctx.out.ok();
    Ok(())
}

/// An errno as Valkey's `addReplyErrorFormat(c, "%s", strerror(err))` sends it.
fn errno_error(errno: i32) -> CmdError {
    CmdError::err(crate::util::strerror(&std::io::Error::from_raw_os_error(errno)))
}

/// `DEBUG MALLCTL <name> [<value>]`: the number jemalloc's setting holds; with a value, the
/// setting is written and the old number comes back (`OK` for a write-only one).
pub fn mallctl_int(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let name = String::from_utf8_lossy(&argv[2]);
    let new = match argv.get(3) {
        Some(v) => Some(crate::types::string::parse_i64(v).ok_or(CmdError::NotInteger)?),
        None => None,
    };
    match mallctl::int(&name, new).map_err(errno_error)? {
        mallctl::IntReply::Old(n) => ctx.out.int(n),
        mallctl::IntReply::Written => ctx.out.ok(),
    }
    Ok(())
}

/// `DEBUG MALLCTL-STR <name> [<value>|VOID]`: the string jemalloc's setting holds; with a
/// value, the setting is written too.
pub fn mallctl_str(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let name = String::from_utf8_lossy(&argv[2]);
    match mallctl::string(&name, argv.get(3).map(|v| &v[..])).map_err(errno_error)? {
        mallctl::StrReply::Old(v) => ctx.out.bulk(&v),
        mallctl::StrReply::Written => ctx.out.ok(),
    }
    Ok(())
}
