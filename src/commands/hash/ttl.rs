//! Field expire times: HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT (with NX, XX, GT, LT),
//! HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME and HPERSIST, as Valkey 9.1 answers them: one
//! integer per field (-2: no such field, or expired; -1: no TTL; 0: the condition refused;
//! 1: set or removed; 2: deleted, its time being already past).
//!
//! What they log: a TTL set is propagated as `HPEXPIREAT key <unix-ms> [cond] FIELDS ...`
//! (the relative forms made absolute, the rest of the arguments as sent), fields a past time
//! deleted as `HDEL key field...`, and HPERSIST as sent.

use bytes::Bytes;

use super::fields::{fields_block, fields_word, number, word, TimeArg};
use crate::commands::args::int_arg;
use crate::commands::keyspace::expire::parse_condition;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::types::hash::{FieldTtl, HashObj};

pub(super) fn hexpire(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    set_ttls(ctx, argv, TimeArg::Seconds, "hexpire")
}

pub(super) fn hpexpire(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    set_ttls(ctx, argv, TimeArg::Millis, "hpexpire")
}

pub(super) fn hexpireat(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    set_ttls(ctx, argv, TimeArg::UnixSeconds, "hexpireat")
}

pub(super) fn hpexpireat(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    set_ttls(ctx, argv, TimeArg::UnixMillis, "hpexpireat")
}

/// The per-field reply codes of the TTL writes.
const NO_FIELD: i64 = -2;

/// The reply for `n` fields of a key that does not exist: -2 for each.
fn no_such_fields(out: &mut crate::resp::reply::Reply, n: usize) -> CmdResult {
    out.array(n);
    (0..n).for_each(|_| out.int(NO_FIELD));
    Ok(())
}
const NO_TTL: i64 = -1;
const REFUSED: i64 = 0;
const DONE: i64 = 1;
const DELETED: i64 = 2;

fn set_ttls(ctx: &mut Ctx, argv: &[Bytes], time: TimeArg, name: &str) -> CmdResult {
    let n = int_arg(&argv[2])?;
    let at = fields_word(argv, 3)?;
    let condition = parse_condition(&argv[3..at])?;
    let fields = fields_block(argv, at, 1)?;
    let now = ctx.now_ms;
    let when = time.resolve(n, now, name)?;
    let key = &argv[1];
    let past = when <= now && !ctx.keep_past_expiry;
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(mut entry) = db.agg_existing::<HashObj>(key, now)? else {
        return no_such_fields(ctx.out, fields.len());
    };
    let h = entry.get();
    let before = h.next_expire_bound();
    let mut codes = Vec::with_capacity(fields.len());
    let mut deleted = Vec::new();
    for f in fields {
        let code = match h.field_ttl(f, now) {
            FieldTtl::Missing => NO_FIELD,
            FieldTtl::Persistent if condition.allows(None, when) => DONE,
            FieldTtl::At(cur) if condition.allows(Some(cur), when) => DONE,
            _ => REFUSED,
        };
        let code = match code {
            DONE if past => {
                h.remove(f);
                deleted.push(f.clone());
                DELETED
            }
            DONE => {
                h.set_field_expire(f, Some(when));
                DONE
            }
            other => other,
        };
        codes.push(code);
    }
    let after = h.next_expire_bound();
    let emptied = entry.remove_if_empty();
    let updated = codes.contains(&DONE);
    let db = &mut ctx.dbs[ctx.client.db];
    db.hash_ttls_changed(key, before, after);
    db.stats.expired_fields += deleted.len() as u64;
    if updated {
        ctx.changed(
            key,
            codes.iter().filter(|&&c| c == DONE).count() as u64,
            KeyspaceEvents::HASH,
            "hexpire",
        );
    }
    if !deleted.is_empty() {
        ctx.changed(key, deleted.len() as u64, KeyspaceEvents::HASH, "hexpired");
    }
    if emptied {
        ctx.changed(key, 0, KeyspaceEvents::GENERIC, "del");
    }
    // HPEXPIREAT that set times is logged as sent.
    let as_sent = time == TimeArg::UnixMillis && deleted.is_empty();
    if as_sent {
        ctx.out.array(codes.len());
        codes.into_iter().for_each(|c| ctx.out.int(c));
        return Ok(());
    }
    ctx.propagate_as(|| {
        let mut cmds = Vec::new();
        if updated {
            let mut form = vec![word("HPEXPIREAT"), key.clone(), number(when)];
            form.extend_from_slice(&argv[3..]);
            cmds.push(form);
        }
        if !deleted.is_empty() {
            let mut form = vec![word("HDEL"), key.clone()];
            form.extend(deleted);
            cmds.push(form);
        }
        cmds
    });
    ctx.out.array(codes.len());
    codes.into_iter().for_each(|c| ctx.out.int(c));
    Ok(())
}

/// What a TTL read replies for a field with an expire time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TtlReply {
    /// HTTL: seconds left, rounded.
    Seconds,
    /// HPTTL: milliseconds left.
    Millis,
    /// HEXPIRETIME: unix seconds, rounded.
    UnixSeconds,
    /// HPEXPIRETIME: unix milliseconds.
    UnixMillis,
}

pub(super) fn httl(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    get_ttls(ctx, argv, TtlReply::Seconds)
}

pub(super) fn hpttl(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    get_ttls(ctx, argv, TtlReply::Millis)
}

pub(super) fn hexpiretime(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    get_ttls(ctx, argv, TtlReply::UnixSeconds)
}

pub(super) fn hpexpiretime(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    get_ttls(ctx, argv, TtlReply::UnixMillis)
}

/// `FIELDS numfields field...` right after the key (HTTL's family and HPERSIST): a missing
/// word is a syntax error here, a bad count as `count_error` says (Valkey's TTL reads call
/// every error in the block a syntax error).
fn fields_after_key(argv: &[Bytes], count_error: CmdError) -> Result<&[Bytes], CmdError> {
    if !crate::commands::args::is(&argv[2], "fields") {
        return Err(CmdError::Syntax);
    }
    fields_block(argv, 2, 1).map_err(|e| match e {
        CmdError::NumFields => count_error,
        other => other,
    })
}

fn get_ttls(ctx: &mut Ctx, argv: &[Bytes], unit: TtlReply) -> CmdResult {
    let fields = fields_after_key(argv, CmdError::Syntax)?;
    let now = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let h = db.read_agg::<HashObj>(&argv[1], now)?;
    ctx.out.array(fields.len());
    for f in fields {
        let reply = match h.map_or(FieldTtl::Missing, |h| h.field_ttl(f, now)) {
            FieldTtl::Missing => NO_FIELD,
            FieldTtl::Persistent => NO_TTL,
            FieldTtl::At(at) => match unit {
                TtlReply::Seconds => (at.saturating_sub(now).max(0) + 500) / 1000,
                TtlReply::Millis => at.saturating_sub(now).max(0),
                TtlReply::UnixSeconds => (at + 500) / 1000,
                TtlReply::UnixMillis => at,
            },
        };
        ctx.out.int(reply);
    }
    Ok(())
}

pub(super) fn hpersist(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let fields = fields_after_key(argv, CmdError::NumFields)?;
    let (key, now) = (&argv[1], ctx.now_ms);
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(mut entry) = db.agg_existing::<HashObj>(key, now)? else {
        return no_such_fields(ctx.out, fields.len());
    };
    let h = entry.get();
    let codes: Vec<i64> = fields
        .iter()
        .map(|f| match h.field_ttl(f, now) {
            FieldTtl::Missing => NO_FIELD,
            FieldTtl::Persistent => NO_TTL,
            FieldTtl::At(_) => {
                h.set_field_expire(f, None);
                DONE
            }
        })
        .collect();
    drop(entry);
    let persisted = codes.iter().filter(|&&c| c == DONE).count();
    if persisted > 0 {
        ctx.changed(key, persisted as u64, KeyspaceEvents::HASH, "hpersist");
    }
    ctx.out.array(codes.len());
    codes.into_iter().for_each(|c| ctx.out.int(c));
    Ok(())
}
