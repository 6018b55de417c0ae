//! BITCOUNT and BITPOS: count, or find, bits of a string over an optional range
//! `start [end [BYTE|BIT]]`.
//!
//! The range follows Valkey's index rules: negative indexes count from the end, both ends
//! are clamped into the string, an inverted range is empty; in BYTE units (the default) it
//! covers whole bytes. The arguments are parsed in Valkey's order (BITPOS's bit; start; the
//! unit before the end) and all of them before the key is looked up, so a syntax error
//! wins over WRONGTYPE.

use bytes::Bytes;

use super::{is_word, read_string, BitError};
use crate::commands::args::int_arg;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::types::bitmap::{count_ones, count_range, find_bit};

/// What the range's indexes count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Byte,
    Bit,
}

/// A range as given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    start: i64,
    /// None: to the end of the string.
    end: Option<i64>,
    unit: Unit,
}

impl Span {
    /// The whole string.
    const ALL: Span = Span { start: 0, end: None, unit: Unit::Byte };

    /// `start [end [BYTE|BIT]]` (at most three arguments; the caller refuses more).
    fn parse(args: &[Bytes]) -> Result<Span, CmdError> {
        let Some(first) = args.first() else { return Ok(Span::ALL) };
        let start = int_arg(first)?;
        let unit = match args.get(2) {
            None => Unit::Byte,
            Some(u) if is_word(u, "bit") => Unit::Bit,
            Some(u) if is_word(u, "byte") => Unit::Byte,
            Some(_) => return Err(CmdError::Syntax),
        };
        let end = args.get(1).map(|e| int_arg(e)).transpose()?;
        Ok(Span { start, end, unit })
    }

    /// The bits `first..=last` the range covers in a string of `len` bytes, or None when it
    /// covers none.
    fn bits(self, len: usize) -> Option<(u64, u64)> {
        let bytes = len as i64;
        let total = if self.unit == Unit::Bit { bytes * 8 } else { bytes };
        let from_end = |i: i64| if i < 0 { (total + i).max(0) } else { i };
        let start = from_end(self.start);
        let end = from_end(self.end.unwrap_or(bytes - 1)).min(total - 1);
        if start > end {
            return None;
        }
        let (start, end) = (start as u64, end as u64);
        Some(match self.unit {
            Unit::Bit => (start, end),
            Unit::Byte => (start * 8, end * 8 + 7),
        })
    }
}

/// BITCOUNT key [start [end [BYTE|BIT]]].
pub(super) fn bitcount(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    if argv.len() > 5 {
        return Err(CmdError::Syntax);
    }
    let span = Span::parse(&argv[2..])?;
    let now_ms = ctx.now_ms;
    let count = match read_string(ctx.db(), &argv[1], now_ms)? {
        None => 0,
        // Two negative indexes in the wrong order count nothing, before any clamping
        // (Valkey's rule; BITPOS has no such rule).
        Some(_) if matches!(span.end, Some(end) if span.start < 0 && end < 0 && span.start > end) => {
            0
        }
        Some(s) => {
            let mut scratch = [0u8; 20];
            let bytes = s.bytes(&mut scratch);
            match (span == Span::ALL, span.bits(bytes.len())) {
                (true, _) => count_ones(bytes),
                (false, Some((first, last))) => count_range(bytes, first, last),
                (false, None) => 0,
            }
        }
    };
    ctx.out.int(count as i64);
    Ok(())
}

/// BITPOS key bit [start [end [BYTE|BIT]]].
pub(super) fn bitpos(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let bit = match int_arg(&argv[2])? {
        0 => false,
        1 => true,
        _ => return Err(BitError::BitposBit.into()),
    };
    if argv.len() > 6 {
        return Err(CmdError::Syntax);
    }
    let span = Span::parse(&argv[3..])?;
    let now_ms = ctx.now_ms;
    let pos = match read_string(ctx.db(), &argv[1], now_ms)? {
        // A missing key is an endless run of zeros.
        None => {
            if bit {
                -1
            } else {
                0
            }
        }
        Some(s) => {
            let mut scratch = [0u8; 20];
            let bytes = s.bytes(&mut scratch);
            match span.bits(bytes.len()) {
                None => -1,
                Some((first, last)) => match find_bit(bytes, bit, first, last) {
                    Some(pos) => pos as i64,
                    // With no end given the string reads as followed by zeros: the first
                    // clear bit is the one just past it.
                    None if !bit && span.end.is_none() => last as i64 + 1,
                    None => -1,
                },
            }
        }
    };
    ctx.out.int(pos);
    Ok(())
}
