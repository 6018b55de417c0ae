//! Persistence commands: SAVE and BGSAVE (DEBUG RELOAD is in `server_cmd`, the AOF's in
//! `aof_cmd`).

use bytes::Bytes;

use crate::commands::table::Server;
use crate::commands::table::{acl, flag, Command};
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::persist::bgsave::{self, StartError};

pub static COMMANDS: &[Command] = &[
    Command::new(
        "bgsave",
        -1,
        flag::ADMIN | flag::NOSCRIPT | flag::NO_ASYNC_LOADING,
        acl::ADMIN | acl::SLOW | acl::DANGEROUS,
        Server(bgsave),
    )
    .history(&[("3.2.2", "Added the `SCHEDULE` option."), ("8.1.0", "Added the `CANCEL` option.")])
    .doc("server", "1.0.0", "Asynchronously saves the database(s) to disk.", "O(1)"),
    Command::new(
        "save",
        1,
        flag::ADMIN | flag::NOSCRIPT | flag::NO_ASYNC_LOADING | flag::NO_MULTI,
        acl::ADMIN | acl::SLOW | acl::DANGEROUS,
        Server(save),
    )
    .doc(
        "server",
        "1.0.0",
        "Synchronously saves the database(s) to disk.",
        "O(N) where N is the total number of keys in all databases",
    ),
];

fn save(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let store = &mut crate::persist::store(ctx.srv);
    if store.persist.bgsave.child.is_some() {
        return Err(CmdError::BgsaveInProgress);
    }
    store.persist.bgsave.saves += 1;
    crate::persist::save::save(store, ctx.now_ms).map_err(|_| CmdError::SaveFailed)?;
    ctx.out.ok();
    Ok(())
}

/// When BGSAVE starts its child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum When {
    Now,
    /// SCHEDULE: if another child runs, start when it ends.
    Schedule,
}

/// BGSAVE [SCHEDULE]. Inside a transaction it is scheduled, as in Valkey (the fork waits
/// for the time events).
fn bgsave(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let when = match argv {
        [_] => When::Now,
        [_, a] if crate::commands::args::is(a, "schedule") => When::Schedule,
        _ => return Err(CmdError::Syntax),
    };
    let store = &mut crate::persist::store(ctx.srv);
    if store.persist.bgsave.child.is_some() {
        return Err(CmdError::BgsaveInProgress);
    }
    let busy = crate::persist::aof::any_child(store.persist) || ctx.client.in_exec;
    if busy {
        if when == When::Schedule || ctx.client.in_exec {
            store.persist.bgsave.scheduled = true;
            ctx.out.simple("Background saving scheduled");
            return Ok(());
        }
        return Err(CmdError::BgsaveChildActive);
    }
    match bgsave::start(store, ctx.now_ms) {
        Ok(()) => ctx.out.simple("Background saving started"),
        Err(StartError::InProgress) => return Err(CmdError::BgsaveInProgress),
        Err(StartError::ChildActive) => return Err(CmdError::BgsaveChildActive),
        Err(StartError::Fork(_)) => return Err(CmdError::SaveFailed),
    }
    Ok(())
}
