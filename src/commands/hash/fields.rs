//! The `FIELDS numfields field ...` block of the hash field expiration commands, and the
//! time options they share, parsed as Valkey 9.1 parses them.

use bytes::Bytes;

use crate::commands::args::{int_arg, is};
use crate::commands::CmdError;

/// The index of the first `FIELDS` word at or after `from` that has an argument after it;
/// `NumFields` without one (Valkey looks for the word before it reads the options in front
/// of it).
pub(super) fn fields_word(argv: &[Bytes], from: usize) -> Result<usize, CmdError> {
    let last = argv.len().saturating_sub(1);
    (from..last).find(|&i| is(&argv[i], "fields")).ok_or(CmdError::NumFields)
}

/// The fields after `FIELDS` at `at`: `numfields` must be an integer, positive, and equal
/// to the number of arguments left divided by `per_field` (2 for HSETEX's field/value).
pub(super) fn fields_block(
    argv: &[Bytes],
    at: usize,
    per_field: usize,
) -> Result<&[Bytes], CmdError> {
    let n = int_arg(argv.get(at + 1).ok_or(CmdError::NumFields)?)?;
    let rest = &argv[at + 2..];
    if n <= 0 || (n as u64).checked_mul(per_field as u64) != Some(rest.len() as u64) {
        return Err(CmdError::NumFields);
    }
    Ok(rest)
}

/// The unit and base of a time argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TimeArg {
    /// EX / HEXPIRE: seconds from now.
    Seconds,
    /// PX / HPEXPIRE: milliseconds from now.
    Millis,
    /// EXAT / HEXPIREAT: unix seconds.
    UnixSeconds,
    /// PXAT / HPEXPIREAT: unix milliseconds.
    UnixMillis,
}

impl TimeArg {
    /// The option word (EX, PX, EXAT, PXAT), if `a` is one.
    pub(super) fn option(a: &[u8]) -> Option<TimeArg> {
        [
            ("ex", TimeArg::Seconds),
            ("px", TimeArg::Millis),
            ("exat", TimeArg::UnixSeconds),
            ("pxat", TimeArg::UnixMillis),
        ]
        .into_iter()
        .find(|(w, _)| is(a, w))
        .map(|(_, t)| t)
    }

    /// The absolute unix time in ms of `n`: negative times and overflows are refused with
    /// `InvalidExpire(cmd)` (0 is accepted: it expires at once).
    pub(super) fn resolve(self, n: i64, now_ms: i64, cmd: &str) -> Result<i64, CmdError> {
        let invalid = || CmdError::InvalidExpire(cmd.to_string());
        if n < 0 {
            return Err(invalid());
        }
        let at = match self {
            TimeArg::Seconds => n.checked_mul(1000).and_then(|ms| ms.checked_add(now_ms)),
            TimeArg::Millis => n.checked_add(now_ms),
            TimeArg::UnixSeconds => n.checked_mul(1000),
            TimeArg::UnixMillis => Some(n),
        };
        at.ok_or_else(invalid)
    }
}

/// `Bytes` of a static word or a number, for the forms a command propagates as.
pub(super) fn word(w: &'static str) -> Bytes {
    Bytes::from_static(w.as_bytes())
}

pub(super) fn number(n: i64) -> Bytes {
    Bytes::from(n.to_string())
}
