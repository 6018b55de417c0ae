//! Commands on named keys of any type: DEL, UNLINK, EXISTS, TYPE, TOUCH, RENAME, RENAMENX,
//! COPY, MOVE.

use crate::keyspace::db::ObjView;
use bytes::Bytes;

use super::{db_index_arg, db_position, two_dbs};
use crate::commands::args::Args;
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::config::KeyspaceEvents;
use crate::keyspace::db::{Db, Ttl, Value, ValueRef};
use crate::keyspace::lazyfree;
use crate::types::agg::{Agg, AggRef};

/// How a deleted value is freed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FreeMode {
    /// Here and now (DEL).
    Sync,
    /// Big values on the lazyfree thread (UNLINK, or DEL with lazyfree-lazy-user-del).
    Lazy,
}

pub fn del(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let mode = if ctx.config.lazyfree_lazy_user_del { FreeMode::Lazy } else { FreeMode::Sync };
    delete_keys(ctx, &argv[1..], mode)
}

pub fn unlink(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    delete_keys(ctx, &argv[1..], FreeMode::Lazy)
}

fn delete_keys(ctx: &mut Ctx, keys: &[Bytes], mode: FreeMode) -> CmdResult {
    let now = ctx.now_ms;
    let mut deleted = 0;
    for key in keys {
        let Some(obj) = ctx.dbs[ctx.client.db].take_raw(key, now) else { continue };
        deleted += 1;
        if mode == FreeMode::Lazy && obj.free_effort() > lazyfree::LAZYFREE_THRESHOLD {
            lazyfree::free_async(obj, 1);
        }
        ctx.changed(key, 1, KeyspaceEvents::GENERIC, "del");
    }
    ctx.out.int(deleted as i64);
    Ok(())
}

/// EXISTS counts a key once per time it is named.
pub fn exists(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now = ctx.now_ms;
    let db = ctx.db();
    let found = argv[1..].iter().filter(|k| db.read_obj_notouch(k, now).is_some()).count();
    ctx.out.int(found as i64);
    Ok(())
}

pub fn type_cmd(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now = ctx.now_ms;
    let name = match ctx.db().read_obj_notouch(&argv[1], now) {
        Some(obj) => obj.value_ref().type_name(),
        None => "none",
    };
    ctx.out.simple(name);
    Ok(())
}

/// TOUCH records an access to each key and counts those that exist (repeats included).
pub fn touch(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now = ctx.now_ms;
    let db = ctx.db();
    let found = argv[1..].iter().filter(|k| db.read_obj(k, now).is_some()).count();
    ctx.out.int(found as i64);
    Ok(())
}

/// What RENAME does when the destination exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Overwrite {
    Replace,
    /// Leave it and reply 0 (RENAMENX, COPY without REPLACE).
    Keep,
}

pub fn rename(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    rename_key(ctx, &argv[1], &argv[2], Overwrite::Replace)
}

pub fn renamenx(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    rename_key(ctx, &argv[1], &argv[2], Overwrite::Keep)
}

/// RENAME and RENAMENX: the object moves as it is, with its expire time and access clock.
fn rename_key(ctx: &mut Ctx, src: &[u8], dst: &[u8], overwrite: Overwrite) -> CmdResult {
    let now = ctx.now_ms;
    let db = &mut ctx.dbs[ctx.client.db];
    if !db.contains(src, now) {
        return Err(CmdError::NoSuchKey);
    }
    let renamed = if src == dst {
        // Nothing moves; RENAMENX still reports that the destination exists.
        false
    } else if overwrite == Overwrite::Keep && db.contains(dst, now) {
        false
    } else {
        // Drop an expired destination first (counted as expired, as Valkey does); `put`
        // then replaces a live one.
        let _ = db.contains(dst, now);
        let entry = db.take_raw(src, now).expect("source checked above");
        db.put_entry(dst, entry);
        ctx.changed(src, 1, KeyspaceEvents::GENERIC, "rename_from");
        ctx.changed(dst, 0, KeyspaceEvents::GENERIC, "rename_to");
        true
    };
    match overwrite {
        Overwrite::Replace => ctx.out.ok(),
        Overwrite::Keep => ctx.out.int(renamed as i64),
    }
    Ok(())
}

/// COPY's options.
struct CopyOpts {
    /// Destination database (the current one unless `DB n`).
    db: Option<i32>,
    overwrite: Overwrite,
}

fn parse_copy(args: &mut Args) -> Result<CopyOpts, CmdError> {
    let mut opts = CopyOpts { db: None, overwrite: Overwrite::Keep };
    while let Some(a) = args.next_opt() {
        if a.eq_ignore_ascii_case(b"replace") {
            opts.overwrite = Overwrite::Replace;
        } else if a.eq_ignore_ascii_case(b"db") && !args.is_empty() {
            opts.db = Some(db_index_arg(args.next_bytes()?)?);
        } else {
            return Err(CmdError::Syntax);
        }
    }
    Ok(opts)
}

/// COPY: a new object with the source's value and expire time (a fresh access clock).
pub fn copy(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let opts = parse_copy(&mut Args::new(argv, 3))?;
    let (src_key, dst_key) = (&argv[1], &argv[2]);
    let src_pos = ctx.client.db;
    let dst_pos = match opts.db {
        Some(index) => db_position(ctx.dbs, index)?,
        None => src_pos,
    };
    if src_pos == dst_pos && src_key == dst_key {
        return Err(CmdError::SameObject);
    }
    let now = ctx.now_ms;
    let Some((value, expire_at_ms)) = ctx.dbs[src_pos]
        .read_obj(src_key, now)
        .map(|o| (copy_value(o.value_ref(), now), o.expire_at_ms()))
    else {
        ctx.out.int(0);
        return Ok(());
    };
    let dst = &mut ctx.dbs[dst_pos];
    match opts.overwrite {
        Overwrite::Keep if dst.contains(dst_key, now) => {
            ctx.out.int(0);
            return Ok(());
        }
        Overwrite::Keep => {}
        // Deleted first, so the copy is a new key (Valkey raises `new` for it).
        Overwrite::Replace => {
            dst.remove(dst_key, now);
        }
    }
    let ttl = match expire_at_ms {
        Some(at) => Ttl::At(at),
        None => Ttl::Clear,
    };
    dst.set(dst_key, value, ttl, now);
    ctx.changed_in(dst_pos, dst_key, 1, KeyspaceEvents::GENERIC, "copy_to");
    ctx.out.int(1);
    Ok(())
}

/// A deep copy of a value for COPY: a hash leaves its expired fields behind, as Valkey's.
fn copy_value(v: ValueRef<'_>, now_ms: i64) -> Value {
    if let ValueRef::Agg(AggRef::Hash(h)) = v {
        if let Some(live) = h.without_expired(now_ms) {
            return Value::Agg(Agg::Hash(Box::new(live)));
        }
    }
    v.to_owned()
}

/// MOVE: the object moves to another database as it is, unless the key exists there.
pub fn move_cmd(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let key = &argv[1];
    let dst_pos = db_position(ctx.dbs, db_index_arg(&argv[2])?)?;
    let src_pos = ctx.client.db;
    if src_pos == dst_pos {
        return Err(CmdError::SameObject);
    }
    let now = ctx.now_ms;
    let (src, dst): (&mut Db, &mut Db) = two_dbs(ctx.dbs, src_pos, dst_pos);
    let moved = src.contains(key, now) && !dst.contains(key, now);
    if moved {
        let entry = src.take_raw(key, now).expect("source checked above");
        dst.put_entry(key, entry);
        ctx.changed_in(src_pos, key, 1, KeyspaceEvents::GENERIC, "move_from");
        ctx.changed_in(dst_pos, key, 0, KeyspaceEvents::GENERIC, "move_to");
    }
    ctx.out.int(moved as i64);
    Ok(())
}
