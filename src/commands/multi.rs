//! Transactions: MULTI, EXEC, DISCARD, WATCH and UNWATCH.
//!
//! The handlers only change the calling client's transaction and watches; queuing, running
//! the queue and the watched-keys registry are `server::multi`'s. EXEC's handler decides the
//! outcome (EXECABORT, a null reply for a failed WATCH, or the array header) and leaves the
//! queued commands for dispatch to run right after it returns.

use bytes::Bytes;

use crate::commands::error::MultiError;
use crate::commands::table::Server;
use crate::commands::table::{acl, flag, specs, Command};
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::server::multi;

/// Flags of the commands that act on the transaction itself (Valkey's).
const TX_FLAGS: u64 = flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::FAST | flag::ALLOW_BUSY;
/// MULTI and WATCH are refused inside a transaction by dispatch (no-multi, as Valkey 9).
const TX_START_FLAGS: u64 = TX_FLAGS | flag::NO_MULTI;
const ACL_TX: u64 = acl::FAST | acl::TRANSACTION;
const GROUP: &str = "transactions";

pub static COMMANDS: &[Command] = &[
    Command::new("multi", 1, TX_START_FLAGS, ACL_TX, Server(multi)).doc(
        GROUP,
        "1.2.0",
        "Starts a transaction.",
        "O(1)",
    ),
    Command::new(
        "exec",
        1,
        flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::SKIP_COMMANDLOG,
        acl::SLOW | acl::TRANSACTION,
        Server(exec),
    )
    .doc(
        GROUP,
        "1.2.0",
        "Executes all commands in a transaction.",
        "Depends on commands in the transaction",
    ),
    Command::new("discard", 1, TX_FLAGS, ACL_TX, Server(discard)).doc(
        GROUP,
        "2.0.0",
        "Discards a transaction.",
        "O(N), when N is the number of queued commands",
    ),
    Command::new("watch", -2, TX_START_FLAGS, ACL_TX, Server(watch))
        .keys(specs::READ_ALL_META)
        .doc(
            GROUP,
            "2.2.0",
            "Monitors changes to keys to determine the execution of a transaction.",
            "O(1) for every key.",
        ),
    Command::new("unwatch", 1, TX_FLAGS, ACL_TX, Server(unwatch)).doc(
        GROUP,
        "2.2.0",
        "Forgets about watched keys of a transaction.",
        "O(1)",
    ),
];

fn multi(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    debug_assert!(ctx.client.multi.is_none(), "dispatch refuses a nested MULTI");
    ctx.client.multi = Some(Box::default());
    ctx.out.ok();
    Ok(())
}

/// EXEC: EXECABORT when a command was refused while queuing (that check comes first), a
/// null array when a watched key changed or expired, else the array of the queued
/// commands' replies (written by dispatch after this returns, see `server::multi`).
fn exec(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let Some(t) = ctx.client.multi.as_deref() else {
        return Err(CmdError::Multi(MultiError::ExecWithoutMulti));
    };
    let aborted = t.aborted;
    let n = t.commands.len();
    let watch_failed = multi::watches_failed(ctx.srv, ctx.slot, ctx.now_ms);
    if aborted || watch_failed {
        multi::discard(ctx.srv, ctx.slot, ctx.client);
        if aborted {
            return Err(CmdError::Multi(MultiError::ExecAbort));
        }
        ctx.out.null_array();
        return Ok(());
    }
    // Unwatched before the commands run: their own writes must not matter.
    multi::unwatch_all(ctx.srv, ctx.slot);
    ctx.out.array(n);
    if let Some(t) = ctx.client.multi.as_deref_mut() {
        t.exec_ready = true;
    }
    Ok(())
}

fn discard(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    if ctx.client.multi.is_none() {
        return Err(CmdError::Multi(MultiError::DiscardWithoutMulti));
    }
    multi::discard(ctx.srv, ctx.slot, ctx.client);
    ctx.out.ok();
    Ok(())
}

fn watch(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    debug_assert!(ctx.client.multi.is_none(), "dispatch refuses WATCH inside MULTI");
    let db = ctx.client.db;
    for key in &argv[1..] {
        multi::watch(ctx.srv, ctx.slot, db, key, ctx.now_ms);
    }
    ctx.out.ok();
    Ok(())
}

fn unwatch(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    multi::unwatch_all(ctx.srv, ctx.slot);
    ctx.out.ok();
    Ok(())
}
