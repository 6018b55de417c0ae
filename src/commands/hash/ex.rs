//! HSETEX, HGETEX and HGETDEL: set or read fields and change their TTLs in one command, as
//! Valkey 9.1 does.
//!
//! Parsing follows Valkey's order: the `FIELDS` word is found first (none: the numfields
//! error), the options in front of it are read (an unknown word or two clashing ones: a
//! syntax error; a time that is no integer: not an integer), then the block's count. The
//! key's type is checked before the time's range, so a negative time on a string key is
//! WRONGTYPE.
//!
//! What they log: relative times become `PXAT` (HSETEX) or `HPEXPIREAT` (HGETEX), a time
//! already past becomes `HDEL` of the fields that were there, HGETEX PERSIST becomes
//! `HPERSIST` of the fields that had a TTL; HGETDEL and the rest as sent.

use bytes::Bytes;

use super::fields::{fields_block, fields_word, number, word, TimeArg};
use super::reply_elem;
use crate::commands::args::{int_arg, is};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::types::hash::{FieldTtl, HashObj, Limits, TtlWrite};

/// HSETEX's FNX / FXX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Presence {
    Any,
    /// Only if no field exists.
    Fnx,
    /// Only if every field exists.
    Fxx,
}

/// The TTL option of HSETEX and HGETEX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TtlOpt {
    None,
    /// HSETEX KEEPTTL.
    Keep,
    /// HGETEX PERSIST.
    Persist,
    /// EX / PX / EXAT / PXAT with its number, and where the word is in argv.
    Time {
        unit: TimeArg,
        n: i64,
        at: usize,
    },
}

impl TtlOpt {
    /// Sets `self` to `next`, refusing a different option already given (the same one
    /// twice is accepted, the last value winning, as Valkey does).
    fn merge(&mut self, next: TtlOpt) -> Result<(), CmdError> {
        let same = match (*self, next) {
            (TtlOpt::None, _) => true,
            (TtlOpt::Time { unit: a, .. }, TtlOpt::Time { unit: b, .. }) => a == b,
            (a, b) => a == b,
        };
        if !same {
            return Err(CmdError::Syntax);
        }
        *self = next;
        Ok(())
    }
}

/// Reads the options in `opts` (starting at argv index `base`); `setex` admits FNX, FXX
/// and KEEPTTL, otherwise PERSIST.
fn parse_options(opts: &[Bytes], base: usize, setex: bool) -> Result<(Presence, TtlOpt), CmdError> {
    let (mut presence, mut ttl) = (Presence::Any, TtlOpt::None);
    let mut i = 0;
    while i < opts.len() {
        let a = &opts[i];
        if let Some(unit) = TimeArg::option(a) {
            let n = int_arg(opts.get(i + 1).ok_or(CmdError::Syntax)?)?;
            ttl.merge(TtlOpt::Time { unit, n, at: base + i })?;
            i += 2;
            continue;
        }
        let p = if setex && is(a, "fnx") {
            Presence::Fnx
        } else if setex && is(a, "fxx") {
            Presence::Fxx
        } else {
            let t = if setex && is(a, "keepttl") {
                TtlOpt::Keep
            } else if !setex && is(a, "persist") {
                TtlOpt::Persist
            } else {
                return Err(CmdError::Syntax);
            };
            ttl.merge(t)?;
            i += 1;
            continue;
        };
        if presence != Presence::Any && presence != p {
            return Err(CmdError::Syntax);
        }
        presence = p;
        i += 1;
    }
    Ok((presence, ttl))
}

/// The absolute time of a time option, checked (after the key's type, as Valkey).
fn resolve(ttl: TtlOpt, now_ms: i64, cmd: &str) -> Result<Option<i64>, CmdError> {
    match ttl {
        TtlOpt::Time { unit, n, .. } => unit.resolve(n, now_ms, cmd).map(Some),
        _ => Ok(None),
    }
}

pub(super) fn hsetex(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let at = fields_word(argv, 2)?;
    let (presence, ttl) = parse_options(&argv[2..at], 2, true)?;
    let pairs = fields_block(argv, at, 2)?;
    let (key, now) = (&argv[1], ctx.now_ms);
    let limits = Limits::from_config(ctx.config);
    let db = &mut ctx.dbs[ctx.client.db];
    // Type first, then the time, then the conditions; a key is created only to be written.
    let exists = db
        .read_agg_quiet::<HashObj>(key, now)?
        .map(|h| pairs.chunks_exact(2).filter(|p| h.contains(&p[0], now)).count());
    let when = resolve(ttl, now, "hsetex")?;
    let n = pairs.len() / 2;
    let allowed = match (presence, exists) {
        (Presence::Fxx, None) => false,
        (Presence::Fxx, Some(found)) => found == n,
        (Presence::Fnx, found) => found.unwrap_or(0) == 0,
        (Presence::Any, _) => true,
    };
    if !allowed {
        ctx.out.int(0);
        return Ok(());
    }
    let past = when.is_some_and(|w| w <= now) && !ctx.keep_past_expiry;
    let write = match (ttl, when) {
        (TtlOpt::Keep, _) => TtlWrite::Keep,
        (_, Some(w)) => TtlWrite::At(w),
        _ => TtlWrite::Clear,
    };
    let db = &mut ctx.dbs[ctx.client.db];
    let mut entry = db.agg_entry(key, now, Some(HashObj::new))?.expect("created");
    let h = entry.get();
    let before = h.next_expire_bound();
    h.prepare_write(pairs, limits);
    let mut existed = Vec::new();
    for p in pairs.chunks_exact(2) {
        if past {
            if h.contains(&p[0], now) {
                existed.push(p[0].clone());
            }
            // Set, then expired at once: whatever was stored under the field goes.
            h.remove(&p[0]);
        } else {
            h.set_with(&p[0], &p[1], write, limits, now);
        }
    }
    let after = h.next_expire_bound();
    let emptied = entry.remove_if_empty();
    let db = &mut ctx.dbs[ctx.client.db];
    db.hash_ttls_changed(key, before, after);
    ctx.changed(key, n as u64, KeyspaceEvents::HASH, "hset");
    if when.is_some() {
        ctx.changed(key, 0, KeyspaceEvents::HASH, "hexpire");
    }
    if past {
        ctx.dbs[ctx.client.db].stats.expired_fields += n as u64;
        ctx.changed(key, 0, KeyspaceEvents::HASH, "hexpired");
    }
    if emptied {
        ctx.changed(key, 0, KeyspaceEvents::GENERIC, "del");
    }
    if past {
        ctx.propagate_as(|| {
            if existed.is_empty() {
                return Vec::new();
            }
            let mut form = vec![word("HDEL"), key.clone()];
            form.extend(existed);
            vec![form]
        });
    } else if let (TtlOpt::Time { at, .. }, Some(w)) = (ttl, when) {
        ctx.propagate_as(|| {
            let mut form = argv.to_vec();
            form[at] = word("PXAT");
            form[at + 1] = number(w);
            vec![form]
        });
    }
    ctx.out.int(1);
    Ok(())
}

pub(super) fn hgetex(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let at = fields_word(argv, 2)?;
    let (_, ttl) = parse_options(&argv[2..at], 2, false)?;
    let fields = fields_block(argv, at, 1)?;
    let (key, now) = (&argv[1], ctx.now_ms);
    let db = &mut ctx.dbs[ctx.client.db];
    let found = db.read_agg_quiet::<HashObj>(key, now)?.is_some();
    let when = resolve(ttl, now, "hgetex")?;
    ctx.out.array(fields.len());
    if !found {
        fields.iter().for_each(|_| ctx.out.null());
        return Ok(());
    }
    let db = &mut ctx.dbs[ctx.client.db];
    let mut entry = db.agg_existing::<HashObj>(key, now)?.expect("found above");
    let h = entry.get();
    let before = h.next_expire_bound();
    let past = when.is_some_and(|w| w <= now) && !ctx.keep_past_expiry;
    let mut changed = Vec::new();
    for f in fields {
        match h.get(f, now) {
            Some(v) => reply_elem(ctx.out, v),
            None => {
                ctx.out.null();
                continue;
            }
        }
        match (ttl, when) {
            (_, Some(_)) if past => {
                h.remove(f);
                changed.push(f.clone());
            }
            (_, Some(w)) => {
                h.set_field_expire(f, Some(w));
                changed.push(f.clone());
            }
            (TtlOpt::Persist, _) if h.field_ttl(f, now) != FieldTtl::Persistent => {
                h.set_field_expire(f, None);
                changed.push(f.clone());
            }
            _ => {}
        }
    }
    let after = h.next_expire_bound();
    let emptied = entry.remove_if_empty();
    ctx.dbs[ctx.client.db].hash_ttls_changed(key, before, after);
    if changed.is_empty() {
        return Ok(());
    }
    let n = changed.len();
    let (event, form) = match when {
        Some(_) if past => {
            ctx.dbs[ctx.client.db].stats.expired_fields += n as u64;
            ("hexpired", vec![word("HDEL"), key.clone()])
        }
        Some(w) => (
            "hexpire",
            vec![word("HPEXPIREAT"), key.clone(), number(w), word("FIELDS"), number(n as i64)],
        ),
        None => ("hpersist", vec![word("HPERSIST"), key.clone(), word("FIELDS"), number(n as i64)]),
    };
    ctx.changed(key, n as u64, KeyspaceEvents::HASH, event);
    if emptied {
        ctx.changed(key, 0, KeyspaceEvents::GENERIC, "del");
    }
    ctx.propagate_as(|| {
        let mut form = form;
        form.extend(changed);
        vec![form]
    });
    Ok(())
}

pub(super) fn hgetdel(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    if !is(&argv[2], "fields") {
        return Err(CmdError::Syntax);
    }
    let fields = fields_block(argv, 2, 1)?;
    let (key, now) = (&argv[1], ctx.now_ms);
    let db = &mut ctx.dbs[ctx.client.db];
    let Some(mut entry) = db.agg_existing::<HashObj>(key, now)? else {
        ctx.out.array(fields.len());
        fields.iter().for_each(|_| ctx.out.null());
        return Ok(());
    };
    ctx.out.array(fields.len());
    let h = entry.get();
    let mut deleted = 0;
    for f in fields {
        match h.get(f, now).map(|v| v.to_vec()) {
            Some(v) => {
                ctx.out.bulk(&v);
                h.remove(f);
                deleted += 1;
            }
            None => ctx.out.null(),
        }
    }
    let emptied = entry.remove_if_empty();
    if deleted > 0 {
        ctx.changed(key, deleted, KeyspaceEvents::HASH, "hdel");
    }
    if emptied {
        ctx.changed(key, 0, KeyspaceEvents::GENERIC, "del");
    }
    Ok(())
}
