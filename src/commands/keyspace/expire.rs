//! Expire times: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with NX, XX, GT, LT), TTL, PTTL,
//! EXPIRETIME, PEXPIRETIME and PERSIST.
//!
//! Expire times are absolute unix milliseconds. A time already past deletes the key.

use crate::keyspace::db::ObjView;
use bytes::Bytes;

use crate::commands::args::int_arg;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;

/// The unit of a time argument or reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Seconds,
    Millis,
}

/// What a time argument counts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Base {
    /// Relative to now (EXPIRE, PEXPIRE; TTL, PTTL replies).
    Now,
    /// Unix time (EXPIREAT, PEXPIREAT; EXPIRETIME, PEXPIRETIME replies).
    Epoch,
}

/// NX / XX: whether the key must have no expire time or one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Presence {
    Any,
    /// Only when the key has no expire time.
    Nx,
    /// Only when the key has an expire time.
    Xx,
}

/// GT / LT: how the new time must compare with the current one (no expire time counts as
/// infinite).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compare {
    Any,
    Gt,
    Lt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Condition {
    presence: Presence,
    compare: Compare,
}

impl Condition {
    /// Whether a new expire time `when_ms` may replace `current_ms` (None: no expire time).
    pub(crate) fn allows(&self, current_ms: Option<i64>, when_ms: i64) -> bool {
        let presence_ok = match self.presence {
            Presence::Any => true,
            Presence::Nx => current_ms.is_none(),
            Presence::Xx => current_ms.is_some(),
        };
        let compare_ok = match (self.compare, current_ms) {
            (Compare::Any, _) => true,
            (Compare::Gt, None) => false,
            (Compare::Gt, Some(cur)) => when_ms > cur,
            (Compare::Lt, None) => true,
            (Compare::Lt, Some(cur)) => when_ms < cur,
        };
        presence_ok && compare_ok
    }
}

/// Parse NX, XX, GT, LT (any order, repeats allowed), then reject the combinations Valkey
/// rejects. An unknown word is reported before any combination error.
pub(crate) fn parse_condition(opts: &[Bytes]) -> Result<Condition, CmdError> {
    const NX: u8 = 1;
    const XX: u8 = 2;
    const GT: u8 = 4;
    const LT: u8 = 8;
    let mut seen = 0u8;
    for opt in opts {
        seen |= match opt.to_ascii_lowercase().as_slice() {
            b"nx" => NX,
            b"xx" => XX,
            b"gt" => GT,
            b"lt" => LT,
            _ => return Err(CmdError::UnsupportedOption(c_text(opt))),
        };
    }
    if seen & NX != 0 && seen & (XX | GT | LT) != 0 {
        return Err(CmdError::ExpireNxConflict);
    }
    if seen & (GT | LT) == GT | LT {
        return Err(CmdError::ExpireGtLtConflict);
    }
    let presence = match seen & (NX | XX) {
        NX => Presence::Nx,
        XX => Presence::Xx,
        _ => Presence::Any,
    };
    let compare = match seen & (GT | LT) {
        GT => Compare::Gt,
        LT => Compare::Lt,
        _ => Compare::Any,
    };
    Ok(Condition { presence, compare })
}

/// An argument as Valkey's `%s` prints it: up to the first NUL byte.
fn c_text(a: &[u8]) -> String {
    let end = a.iter().position(|&b| b == 0).unwrap_or(a.len());
    String::from_utf8_lossy(&a[..end]).into_owned()
}

pub fn expire(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    set_expire(ctx, argv, Unit::Seconds, Base::Now, "expire")
}

pub fn pexpire(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    set_expire(ctx, argv, Unit::Millis, Base::Now, "pexpire")
}

pub fn expireat(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    set_expire(ctx, argv, Unit::Seconds, Base::Epoch, "expireat")
}

pub fn pexpireat(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    set_expire(ctx, argv, Unit::Millis, Base::Epoch, "pexpireat")
}

/// The absolute expire time in ms for time argument `n`, or None when it overflows.
fn absolute_ms(n: i64, unit: Unit, base: Base, now_ms: i64) -> Option<i64> {
    let ms = match unit {
        Unit::Seconds => n.checked_mul(1000)?,
        Unit::Millis => n,
    };
    let base_ms = match base {
        Base::Now => now_ms,
        Base::Epoch => 0,
    };
    ms.checked_add(base_ms)
}

fn set_expire(ctx: &mut Ctx, argv: &[Bytes], unit: Unit, base: Base, name: &str) -> CmdResult {
    let condition = parse_condition(&argv[3..])?;
    let n = int_arg(&argv[2])?;
    let now = ctx.now_ms;
    let when_ms =
        absolute_ms(n, unit, base, now).ok_or_else(|| CmdError::InvalidExpire(name.into()))?;
    let key = &argv[1];
    let past = when_ms <= now && !ctx.keep_past_expiry;
    let Some(live) = ctx.dbs[ctx.client.db].live(key, now) else {
        ctx.out.int(0);
        return Ok(());
    };
    if !condition.allows(live.expire_at(), when_ms) {
        ctx.out.int(0);
        return Ok(());
    }
    if past {
        // A time already past expires the key at once (Valkey 9.1: `expired`, not `del`).
        ctx.expire_now(key);
    } else {
        live.set_expire(key, Some(when_ms));
        ctx.changed(key, 1, KeyspaceEvents::GENERIC, "expire");
    }
    ctx.out.int(1);
    Ok(())
}

pub fn ttl(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    reply_expire(ctx, &argv[1], Unit::Seconds, Base::Now)
}

pub fn pttl(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    reply_expire(ctx, &argv[1], Unit::Millis, Base::Now)
}

pub fn expiretime(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    reply_expire(ctx, &argv[1], Unit::Seconds, Base::Epoch)
}

pub fn pexpiretime(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    reply_expire(ctx, &argv[1], Unit::Millis, Base::Epoch)
}

/// -2 for a missing key, -1 for no expire time, else the time left (or the unix time),
/// never negative; seconds are rounded to the nearest.
fn reply_expire(ctx: &mut Ctx, key: &[u8], unit: Unit, base: Base) -> CmdResult {
    let now = ctx.now_ms;
    let reply = match ctx.db().read_obj_notouch(key, now) {
        None => -2,
        Some(obj) => match obj.expire_at_ms() {
            None => -1,
            Some(at) => {
                let ms = match base {
                    Base::Now => at.saturating_sub(now),
                    Base::Epoch => at,
                }
                .max(0);
                match unit {
                    Unit::Millis => ms,
                    // Widened: the rounding must not overflow near i64::MAX.
                    Unit::Seconds => ((ms as i128 + 500) / 1000) as i64,
                }
            }
        },
    };
    ctx.out.int(reply);
    Ok(())
}

pub fn persist(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now = ctx.now_ms;
    let live = ctx.db().live(&argv[1], now);
    let had_ttl = live.as_ref().is_some_and(|l| l.expire_at().is_some());
    if let Some(live) = live.filter(|_| had_ttl) {
        live.set_expire(&argv[1], None);
        ctx.changed(&argv[1], 1, KeyspaceEvents::GENERIC, "persist");
    }
    ctx.out.int(had_ttl as i64);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cond(words: &[&str]) -> Result<Condition, CmdError> {
        let v: Vec<Bytes> = words.iter().map(|w| Bytes::copy_from_slice(w.as_bytes())).collect();
        parse_condition(&v)
    }

    #[test]
    fn conditions_parse_and_conflict_as_valkey() {
        assert_eq!(cond(&["nx", "NX"]).unwrap().presence, Presence::Nx);
        assert_eq!(
            cond(&["xx", "gt"]).unwrap(),
            Condition { presence: Presence::Xx, compare: Compare::Gt }
        );
        assert_eq!(cond(&["nx", "xx"]), Err(CmdError::ExpireNxConflict));
        assert_eq!(cond(&["lt", "nx"]), Err(CmdError::ExpireNxConflict));
        assert_eq!(cond(&["gt", "lt"]), Err(CmdError::ExpireGtLtConflict));
        assert_eq!(cond(&["nx", "xx", "foo"]), Err(CmdError::UnsupportedOption("foo".into())));
    }

    #[test]
    fn conditions_treat_no_ttl_as_infinite() {
        let gt = Condition { presence: Presence::Any, compare: Compare::Gt };
        let lt = Condition { presence: Presence::Any, compare: Compare::Lt };
        assert!(!gt.allows(None, 10));
        assert!(lt.allows(None, 10));
        assert!(gt.allows(Some(5), 10) && !gt.allows(Some(10), 10));
        assert!(lt.allows(Some(11), 10) && !lt.allows(Some(10), 10));
    }

    #[test]
    fn absolute_time_overflow() {
        assert_eq!(absolute_ms(i64::MAX, Unit::Millis, Base::Epoch, 5), Some(i64::MAX));
        assert_eq!(absolute_ms(i64::MAX, Unit::Millis, Base::Now, 5), None);
        assert_eq!(absolute_ms(i64::MAX / 1000 + 1, Unit::Seconds, Base::Epoch, 0), None);
        assert_eq!(absolute_ms(i64::MIN, Unit::Millis, Base::Now, 5), Some(i64::MIN + 5));
        assert_eq!(absolute_ms(i64::MIN / 1000 - 1, Unit::Seconds, Base::Now, 0), None);
    }
}
