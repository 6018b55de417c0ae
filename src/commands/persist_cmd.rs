//! Persistence commands: SAVE and BGSAVE (the AOF, DEBUG RELOAD and the rest of issue 8 build
//! on `persist`).

use bytes::Bytes;

use crate::commands::table::{acl, flag, Command};
use crate::commands::{CmdError, CmdResult, Ctx};
use crate::persist::bgsave::{self, StartError};

pub static COMMANDS: &[Command] = &[
    Command::new(
        "bgsave",
        -1,
        flag::ADMIN | flag::NOSCRIPT | flag::NO_ASYNC_LOADING,
        acl::ADMIN | acl::SLOW | acl::DANGEROUS,
        bgsave,
    )
    .doc("server", "1.0.0", "Asynchronously saves the database(s) to disk.", "O(1)"),
    Command::new(
        "save",
        1,
        flag::ADMIN | flag::NOSCRIPT | flag::NO_ASYNC_LOADING | flag::NO_MULTI,
        acl::ADMIN | acl::SLOW | acl::DANGEROUS,
        save,
    )
    .doc(
        "server",
        "1.0.0",
        "Synchronously saves the database(s) to disk.",
        "O(N) where N is the total number of keys in all databases",
    ),
];

fn save(ctx: &mut Ctx, _argv: &[Bytes]) -> CmdResult {
    if ctx.srv.bgsave.child.is_some() {
        return Err(CmdError::err("Background save already in progress"));
    }
    let now = ctx.now_ms;
    match crate::persist::save::save(ctx.srv, now) {
        Ok(()) => {
            ctx.out.ok();
            Ok(())
        }
        Err(_) => Err(CmdError::Other("ERR".into())),
    }
}

/// BGSAVE [SCHEDULE]. With nothing else running in the background, SCHEDULE starts at once.
fn bgsave(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    match argv.get(1) {
        None => {}
        Some(a) if crate::commands::args::is(a, "schedule") && argv.len() == 2 => {}
        Some(_) => return Err(CmdError::Syntax),
    }
    let now = ctx.now_ms;
    match bgsave::start(ctx.srv, now) {
        Ok(()) => ctx.out.simple("Background saving started"),
        Err(StartError::InProgress) => {
            return Err(CmdError::err("Background save already in progress"))
        }
        Err(StartError::Fork(e)) => {
            return Err(CmdError::err(format!("Background save failed: {e}")))
        }
    }
    Ok(())
}
