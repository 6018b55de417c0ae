//! Connection commands: PING, ECHO, QUIT, ...
use bytes::Bytes;

use crate::commands::table::{acl, flag, Command};
use crate::commands::{CmdResult, Ctx};

pub static COMMANDS: &[Command] = &[Command::new(
    "ping",
    -1,
    flag::FAST,
    acl::FAST | acl::CONNECTION,
    ping,
)
.doc("connection", "1.0.0", "Returns the server's liveliness response.", "O(1)")];

fn ping(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    match argv.len() {
        1 => ctx.out.simple("PONG"),
        2 => ctx.out.bulk(&argv[1]),
        _ => return Err(crate::commands::CmdError::WrongArity("ping".into())),
    }
    Ok(())
}
