//! HRANDFIELD key [count [WITHVALUES]].
//!
//! Without a count: one random field, or nil. A positive count gives distinct fields, at most
//! the whole hash (all of it, in iteration order, when the count reaches its size). A
//! negative count gives exactly `|count|` fields that may repeat; the client asked for that
//! many, but the reply is cut off and the client disconnected once it passes the output
//! buffer's hard limit (as Valkey's CLIENT_CLOSE_ASAP check in the same loop does), or
//! [`REPLY_BYTES_CEILING`] when no limit is configured.
//!
//! Reply shapes (Valkey 7): a flat array of fields, or with WITHVALUES a flat array of
//! field, value in RESP2 and an array of [field, value] pairs in RESP3.

use bytes::Bytes;

use crate::commands::args::{int_arg, is};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::ObufClass;
use crate::resp::reply::Reply;
use crate::types::agg::AggType;
use crate::types::hash::{HashObj, Pair, Rng};

use super::reply_elem;

/// Where a repeating reply stops when no hard output limit is set: a reply this large is
/// already more than any client can use, and Valkey would grow it until the server runs out
/// of memory.
const REPLY_BYTES_CEILING: usize = 1 << 30;
/// Pairs written between two checks of the reply size.
const CHECK_EVERY: u64 = 1024;

/// What the count argument asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Count {
    /// No count: one field or nil.
    One,
    /// Up to this many distinct fields.
    Distinct(u64),
    /// Exactly this many fields, repetitions allowed.
    Repeating(u64),
}

/// Parses the arguments after the key; Valkey checks them all before the key is looked up.
fn parse(argv: &[Bytes]) -> Result<(Count, bool), CmdError> {
    let Some(count_arg) = argv.get(2) else { return Ok((Count::One, false)) };
    let n = int_arg(count_arg)?;
    if n == i64::MIN {
        return Err(CmdError::OutOfRangeBetween { min: -i64::MAX, max: i64::MAX });
    }
    let with_values = match &argv[3..] {
        [] => false,
        [w] if is(w, "withvalues") => true,
        _ => return Err(CmdError::Syntax),
    };
    // The reply has two items a field: a count whose double overflows is refused.
    if with_values && !(-i64::MAX / 2..=i64::MAX / 2).contains(&n) {
        return Err(CmdError::Overflow);
    }
    let count = if n >= 0 { Count::Distinct(n as u64) } else { Count::Repeating(n.unsigned_abs()) };
    Ok((count, with_values))
}

pub(super) fn hrandfield(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (count, with_values) = parse(argv)?;
    let mut rng = Rng::new(ctx.srv.random());
    let reply_limit = reply_limit(ctx);
    let db = &mut ctx.srv.dbs[ctx.client.db];
    let h = db.read_agg::<HashObj>(&argv[1], ctx.now_ms)?;
    let out = &mut *ctx.out;
    let Some(h) = h else {
        match count {
            Count::One => out.null(),
            _ => out.array(0),
        }
        return Ok(());
    };
    let mut writer = PairWriter { out, with_values };
    match count {
        Count::One => {
            let (field, _) = h.random_pair(&mut rng).expect("a stored hash is not empty");
            reply_elem(writer.out, field);
        }
        Count::Distinct(0) | Count::Repeating(0) => writer.out.array(0),
        // One field: a random draw (Valkey serves a count of 1 as a repeating draw).
        Count::Distinct(1) | Count::Repeating(_) => {
            let n = match count {
                Count::Repeating(n) => n,
                _ => 1,
            };
            let cut_off = writer.repeating(h, n, rng, reply_limit.bytes);
            // Past a configured hard limit the dispatcher closes the client itself.
            if cut_off && reply_limit.close_here {
                ctx.client.close_asap = true;
                ctx.srv.to_close.push(ctx.slot);
            }
        }
        Count::Distinct(n) if n >= h.len() as u64 => {
            writer.header(h.len() as u64);
            h.iter().for_each(|pair| writer.pair(pair));
        }
        Count::Distinct(n) => {
            let pairs = h.random_distinct(n as usize, &mut rng);
            writer.header(n);
            pairs.into_iter().for_each(|pair| writer.pair(pair));
        }
    }
    Ok(())
}

/// When a repeating reply must stop, and whether this command closes the client itself.
struct ReplyLimit {
    bytes: usize,
    close_here: bool,
}

fn reply_limit(ctx: &Ctx) -> ReplyLimit {
    let hard = ctx.srv.config.client_output_buffer_limit[ObufClass::Normal as usize].hard_bytes;
    match usize::try_from(hard) {
        Ok(0) | Err(_) => ReplyLimit { bytes: REPLY_BYTES_CEILING, close_here: true },
        // The dispatcher ignores the first 16 KiB (Valkey's static reply buffer); passing
        // the limit by a whole check interval more is enough for it to act.
        Ok(hard) => ReplyLimit { bytes: hard.saturating_add(64 * 1024), close_here: false },
    }
}

/// Writes HRANDFIELD's header and pairs in the client's protocol.
struct PairWriter<'o> {
    out: &'o mut Reply,
    with_values: bool,
}

impl PairWriter<'_> {
    fn header(&mut self, pairs: u64) {
        let items = if self.with_values && !self.out.is_resp3() { 2 * pairs } else { pairs };
        self.out.array(items as usize);
    }

    /// `n` random pairs that may repeat, header included; stops early (returning true) once
    /// the reply passes `bytes_max`.
    fn repeating(&mut self, h: &HashObj, n: u64, rng: Rng, bytes_max: usize) -> bool {
        self.header(n);
        let mut written: u64 = 0;
        for pair in h.random_pairs(rng).take(usize::try_from(n).unwrap_or(usize::MAX)) {
            self.pair(pair);
            written += 1;
            if written.is_multiple_of(CHECK_EVERY) && self.out.len() > bytes_max {
                return true;
            }
        }
        false
    }

    fn pair(&mut self, (field, value): Pair<'_>) {
        if self.with_values && self.out.is_resp3() {
            self.out.array(2);
        }
        reply_elem(self.out, field);
        if self.with_values {
            reply_elem(self.out, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Bytes> {
        words.iter().map(|w| Bytes::copy_from_slice(w.as_bytes())).collect()
    }

    #[test]
    fn counts_parse_as_valkey_7() {
        assert_eq!(parse(&args(&["hrandfield", "h"])), Ok((Count::One, false)));
        assert_eq!(parse(&args(&["hrandfield", "h", "3"])), Ok((Count::Distinct(3), false)));
        assert_eq!(
            parse(&args(&["hrandfield", "h", "-3", "WithValues"])),
            Ok((Count::Repeating(3), true))
        );
        assert_eq!(
            parse(&args(&["hrandfield", "h", "-9223372036854775808"])),
            Err(CmdError::OutOfRangeBetween { min: -i64::MAX, max: i64::MAX })
        );
        assert_eq!(
            parse(&args(&["hrandfield", "h", "-9223372036854775807"])),
            Ok((Count::Repeating(i64::MAX as u64), false))
        );
        assert_eq!(
            parse(&args(&["hrandfield", "h", "4611686018427387904", "withvalues"])),
            Err(CmdError::Overflow)
        );
        assert_eq!(
            parse(&args(&["hrandfield", "h", "-4611686018427387903", "withvalues"])),
            Ok((Count::Repeating(4611686018427387903), true))
        );
        assert_eq!(parse(&args(&["hrandfield", "h", "x"])), Err(CmdError::NotInteger));
        assert_eq!(parse(&args(&["hrandfield", "h", "1", "values"])), Err(CmdError::Syntax));
        assert_eq!(
            parse(&args(&["hrandfield", "h", "1", "withvalues", "x"])),
            Err(CmdError::Syntax)
        );
    }
}
