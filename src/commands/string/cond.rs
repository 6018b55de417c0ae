//! The conditional and multi-key string writes of Valkey 9.0 and 9.1: DELIFEQ (delete a key
//! only while it holds a given value) and MSETEX (MSET with NX/XX over all the keys and one
//! expire time for all of them). SET's IFEQ lives with SET's other options.

use bytes::Bytes;

use super::{parse_options, read_str_entry, resolve_expiry, Condition, Expiry, Grammar};
use crate::commands::args::Args;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::keyspace::db::Ttl;
use crate::types::string::{parse_i64, StrRef};

/// `DELIFEQ key value`: 1 when the key held exactly `value` and is now deleted, else 0;
/// WRONGTYPE over a value that is not a string.
pub(super) fn delifeq(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let (key, expected) = (&argv[1], &argv[2][..]);
    let now_ms = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    let equal = match read_str_entry(db, key, now_ms)? {
        Some(e) => e.value().bytes(&mut [0; 20]) == expected,
        None => false,
    };
    if equal {
        db.remove(key, now_ms);
        ctx.changed(key, 1, KeyspaceEvents::GENERIC, "del");
    }
    ctx.out.int(equal as i64);
    Ok(())
}

/// `MSETEX numkeys key value [key value ...] [NX | XX] [EX s | PX ms | EXAT s | PXAT ms |
/// KEEPTTL]`: 1 when every pair was written (any type replaced), 0 when NX found a key or
/// XX missed one (then nothing is written).
pub(super) fn msetex(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let numkeys = parse_i64(&argv[1])
        .filter(|&n| n > 0)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| CmdError::Other("ERR invalid numkeys value or out of range".into()))?;
    let options_at = numkeys.checked_mul(2).and_then(|n| n.checked_add(2));
    let options_at = options_at.filter(|&at| at <= argv.len()).ok_or(CmdError::Syntax)?;
    let parsed = parse_options(Grammar::Msetex, &mut Args::new(argv, options_at))?;
    let now_ms = ctx.now_ms;
    let expiry = resolve_expiry(parsed.expiry, now_ms, "msetex")?;
    let pairs = argv[2..options_at].chunks_exact(2);
    let db = &mut ctx.dbs[ctx.client.db];
    let blocked = match parsed.condition {
        Condition::Nx => pairs.clone().any(|p| db.contains(&p[0], now_ms)),
        Condition::Xx => pairs.clone().any(|p| !db.contains(&p[0], now_ms)),
        Condition::Always => false,
    };
    if blocked {
        ctx.out.int(0);
        return Ok(());
    }
    let ttl = match expiry {
        Expiry::None | Expiry::Persist => Ttl::Clear,
        Expiry::Keep => Ttl::Keep,
        Expiry::At(at_ms) => Ttl::At(at_ms),
    };
    for pair in pairs {
        let key = &pair[0];
        // A time already past writes nothing: an existing key expires at once (as SET).
        if matches!(ttl, Ttl::At(at) if at <= now_ms) && !ctx.keep_past_expiry {
            ctx.expire_now(key);
            continue;
        }
        let db = &mut ctx.dbs[ctx.client.db];
        db.set_str_ref(key, StrRef::from_bytes(&pair[1]), ttl, now_ms);
        ctx.changed(key, 1, KeyspaceEvents::STRING, "set");
        if let Ttl::At(_) = ttl {
            ctx.changed(key, 0, KeyspaceEvents::GENERIC, "expire");
        }
    }
    ctx.out.int(1);
    Ok(())
}
