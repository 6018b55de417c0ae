//! Commands on whole databases: SELECT, SWAPDB, DBSIZE, FLUSHDB, FLUSHALL.

use bytes::Bytes;

use super::{db_index_arg, db_position};
use crate::commands::error::DbIndexArg;
use crate::commands::{CmdError, CmdResult, Ctx, ServerCtx};
use crate::keyspace::db::Db;
use crate::server::state::ServerState;

pub fn select(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let index = db_index_arg(&argv[1])?;
    ctx.client.db = db_position(ctx.dbs, index)?;
    ctx.out.ok();
    Ok(())
}

/// SWAPDB: clients on either database see the other one's keys from now on.
pub fn swapdb(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let first = db_index_arg(&argv[1]).map_err(|_| CmdError::InvalidDbIndex(DbIndexArg::First))?;
    let second =
        db_index_arg(&argv[2]).map_err(|_| CmdError::InvalidDbIndex(DbIndexArg::Second))?;
    let a = db_position(&ctx.srv.dbs, first)?;
    let b = db_position(&ctx.srv.dbs, second)?;
    if a != b {
        ctx.srv.swap_dbs(a, b);
    }
    ctx.out.ok();
    Ok(())
}

pub fn dbsize(ctx: &mut Ctx, _argv: &[Bytes]) -> CmdResult {
    let n = ctx.db().len();
    ctx.out.int(n as i64);
    Ok(())
}

/// How FLUSHDB and FLUSHALL free what they remove.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FlushMode {
    Sync,
    /// Hand the contents to the lazyfree thread.
    Async,
}

/// `[SYNC|ASYNC]`; without it, lazyfree-lazy-user-flush decides.
fn parse_flush_mode(srv: &ServerState, argv: &[Bytes]) -> Result<FlushMode, CmdError> {
    match argv {
        [_] if srv.config.lazyfree_lazy_user_flush => Ok(FlushMode::Async),
        [_] => Ok(FlushMode::Sync),
        [_, m] if m.eq_ignore_ascii_case(b"sync") => Ok(FlushMode::Sync),
        [_, m] if m.eq_ignore_ascii_case(b"async") => Ok(FlushMode::Async),
        _ => Err(CmdError::Syntax),
    }
}

/// Empty one database; returns how many keys it held.
fn flush(db: &mut Db, mode: FlushMode) -> usize {
    db.flush(mode == FlushMode::Async)
}

pub fn flushdb(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let mode = parse_flush_mode(ctx.srv, argv)?;
    let db = ctx.client.db;
    let keys = ctx.db().len() as u64;
    ctx.srv.dbs_changed(Some(db), keys);
    flush(ctx.db(), mode);
    ctx.out.ok();
    Ok(())
}

pub fn flushall(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let mode = parse_flush_mode(ctx.srv, argv)?;
    // One more change than keys removed, as Valkey counts it, so a save point sees it even
    // when the server was empty.
    let keys: u64 = ctx.srv.dbs.iter().map(|db| db.len() as u64).sum();
    ctx.srv.dbs_changed(None, keys + 1);
    for db in ctx.srv.dbs.iter_mut() {
        flush(db, mode);
    }
    ctx.out.ok();
    Ok(())
}
