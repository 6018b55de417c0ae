//! HRANDFIELD key [count [WITHVALUES]].
//!
//! Without a count: one random field, or nil. A positive count gives distinct fields, at most
//! the whole hash (all of it, in iteration order, when the count reaches its size). A
//! negative count gives exactly `|count|` fields that may repeat, cut off as
//! [`crate::commands::reply_limit`] says.
//!
//! Reply shapes (Valkey 7): a flat array of fields, or with WITHVALUES a flat array of
//! field, value in RESP2 and an array of [field, value] pairs in RESP3.

use bytes::Bytes;

use crate::commands::args::{is, negatable_int_arg};
use crate::commands::reply_limit::ReplyLimit;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::resp::reply::Reply;
use crate::types::agg::AggType;
use crate::types::hash::{HashObj, Pair};
use crate::util::rng::Rng;

use super::reply_elem;

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
    let n = negatable_int_arg(count_arg)?;
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
    let mut rng = Rng::new(ctx.random());
    let mut limit = ReplyLimit::new(ctx);
    let db = &mut ctx.dbs[ctx.client.db];
    let h = db.read_agg::<HashObj>(&argv[1], ctx.now_ms)?;
    // Fields past their TTL are not drawn: sample a copy without them while some remain.
    let live_copy = h.and_then(|h| h.without_expired(ctx.now_ms));
    let h = live_copy.as_ref().or(h).filter(|h| h.len() > 0);
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
            if writer.repeating(h, n, rng, &mut limit) {
                limit.cut_off(ctx);
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
    /// the reply passes `limit`.
    fn repeating(&mut self, h: &HashObj, n: u64, rng: Rng, limit: &mut ReplyLimit) -> bool {
        self.header(n);
        for pair in h.random_pairs(rng).take(usize::try_from(n).unwrap_or(usize::MAX)) {
            self.pair(pair);
            if limit.passed_after_one(self.out) {
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
