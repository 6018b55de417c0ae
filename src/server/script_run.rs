//! The script running now, as the rest of the server sees it.
//!
//! A script runs inside its caller's command, so while it runs nothing else does, until it
//! passes `busy-reply-threshold`. From then on it is *timed out*: every 100,000 Lua
//! instructions the runtime serves the other clients for a moment (`runtime::busy`), and
//! what they may do depends on this record: commands flagged allow-busy run (`SCRIPT KILL`,
//! `FUNCTION KILL`, `FUNCTION STATS`, `SHUTDOWN NOSAVE`, `AUTH`, `SELECT`...), every other
//! command is answered `BUSY`. `SCRIPT KILL` and `FUNCTION KILL` set [`ScriptRun::killed`],
//! unless the script has written (it would leave half its writes behind) or came from our
//! primary (a replica must apply what its primary applied); the next instruction check
//! then stops the script with an error.

use std::time::Instant;

use bytes::Bytes;

use crate::spec::error::ScriptError;

pub struct ScriptRun {
    /// An EVAL script (else a function): which KILL stops it, and which BUSY text others get.
    pub eval: bool,
    /// The command that runs it (`FUNCTION STATS` shows it), copied when it times out.
    pub argv: Vec<Bytes>,
    pub started: Instant,
    /// Past `busy-reply-threshold`: other clients are being served.
    pub timed_out: bool,
    /// Stopped by SCRIPT KILL or FUNCTION KILL.
    pub killed: bool,
    /// The script has run a write command: it cannot be killed.
    pub wrote: bool,
    /// Sent by our primary.
    pub from_primary: bool,
    /// Error replies other clients got while this script kept the server busy (they are
    /// not the script's: see `runtime::script::run`).
    pub errors_of_others: u64,
    /// How much the AOF's feed held when the script started: SHUTDOWN NOSAVE during the
    /// script cuts what the script fed (Valkey logs a script's writes after it).
    pub aof_mark: usize,
}

impl ScriptRun {
    pub fn new(eval: bool, from_primary: bool, aof_mark: usize) -> ScriptRun {
        ScriptRun {
            eval,
            argv: Vec::new(),
            started: Instant::now(),
            timed_out: false,
            killed: false,
            wrote: false,
            from_primary,
            errors_of_others: 0,
            aof_mark,
        }
    }

    /// The error other clients get while this script keeps the server busy.
    pub fn busy_error(&self) -> ScriptError {
        if self.eval {
            ScriptError::BusyEval
        } else {
            ScriptError::BusyFunction
        }
    }

    /// `SCRIPT KILL` (`eval`) or `FUNCTION KILL`: marks the script killed, or says why not,
    /// with Valkey's checks in Valkey's order.
    pub fn kill(&mut self, eval: bool) -> Result<(), ScriptError> {
        if self.from_primary {
            return Err(ScriptError::UnkillableFromPrimary);
        }
        if self.wrote {
            return Err(ScriptError::UnkillableWrote);
        }
        if eval != self.eval {
            // The other KILL: the reply names the one that works.
            return Err(self.busy_error());
        }
        self.killed = true;
        Ok(())
    }

    /// How long it has run, in milliseconds.
    pub fn duration_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }
}
