//! Writes refused while the server cannot persist them (Valkey's
//! `writeCommandsDeniedByDiskError`): after a failed background save, when save points are
//! configured and `stop-writes-on-bgsave-error` is yes, and while the AOF cannot be written.
//!
//! Dispatch asks [`write_denied`] for the write commands, EXEC of a transaction holding one,
//! and PING (a client's health check then reports the problem), after the OOM check and
//! before the subscriber-mode check, as Valkey's `processCommand` does.

use crate::config::Config;
use crate::persist::Persistence;
use crate::server::client::Client;
use crate::spec::table::{flag, Command};
use crate::spec::CmdError;

/// The refusal for write commands while persistence is failing, if it is. `p`: the
/// persistence state (`persist::peek`); None when it never ran, with nothing failing.
pub fn write_denied(p: Option<&Persistence>, config: &Config) -> Option<CmdError> {
    let p = p?;
    if config.stop_writes_on_bgsave_error && !config.save.is_empty() && !p.bgsave.last_ok {
        return Some(CmdError::BgsaveMisconf);
    }
    if p.aof.logging() {
        if let Some(e) = &p.aof.write_error {
            return Some(CmdError::AofMisconf(e.clone()));
        }
    }
    None
}

/// Whether `cmd` is refused while persistence fails: a write, an EXEC whose transaction
/// queued one, or PING.
pub fn applies_to<H: Copy>(cmd: &Command<H>, client: &Client) -> bool {
    cmd.is_write()
        || cmd.name == "ping"
        || (cmd.name == "exec"
            && client.multi.as_deref().is_some_and(|t| t.flags & flag::WRITE != 0))
}
