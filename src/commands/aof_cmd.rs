//! BGREWRITEAOF: rewrite the append-only file in the background (`persist::aof::rewrite`).

use bytes::Bytes;

use crate::commands::table::Server;
use crate::commands::table::{acl, flag, Command};
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::persist::aof::rewrite::{self, StartError};

pub static COMMANDS: &[Command] = &[Command::new(
    "bgrewriteaof",
    1,
    flag::ADMIN | flag::NOSCRIPT | flag::NO_ASYNC_LOADING,
    acl::ADMIN | acl::SLOW | acl::DANGEROUS,
    Server(bgrewriteaof),
)
.doc("server", "1.0.0", "Asynchronously rewrites the append-only file to disk.", "O(1)")];

/// Starts a rewrite now, or schedules it when a BGSAVE runs.
fn bgrewriteaof(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let now = ctx.now_ms;
    let store = &mut crate::persist::store(ctx.srv);
    match rewrite::start(store, now) {
        Ok(()) => ctx.out.simple("Background append only file rewriting started"),
        Err(StartError::InProgress) => {
            return Err(CmdError::err("Background append only file rewriting already in progress"))
        }
        Err(StartError::ChildActive) => {
            store.persist.aof.rewrite.scheduled = true;
            ctx.out.simple("Background append only file rewriting scheduled");
        }
        Err(StartError::Failed(_)) => {
            return Err(CmdError::err(
                "Can't execute an AOF background rewriting. Please check the server logs for more information.",
            ))
        }
    }
    Ok(())
}
