//! The AOF's replayer: runs the commands persistence reads from the append-only file at
//! start-up, through their handlers, as Valkey's loader does with its fake client. It lives
//! here, with the handlers; persistence only calls it (`persist::aof::startup::Replay`).

use bytes::Bytes;

use crate::commands::run_handler;
use crate::config::PropagationErrorBehavior;
use crate::keyspace::db::Db;
use crate::persist::aof::load::ExecError;
use crate::persist::aof::startup::Replay;
use crate::resp::reply::{Proto, Reply};
use crate::scripting::Request;
use crate::server::client::Client;
use crate::server::state::{ServerState, Slot};

/// Runs commands read from the AOF at start-up, as Valkey's loader does with its fake
/// client: no checks but the command's existence and arity, replies discarded, MULTI/EXEC
/// skipped (the commands between them simply run in order), and blocking commands answer
/// at once instead of blocking (the fake client counts as inside EXEC).
pub struct Replayer<'a> {
    srv: &'a mut ServerState,
    slot: Slot,
    /// Runs a script an EVAL or FCALL of the file prepared (the runtime's runner: scripts
    /// call commands through the runtime, above this layer). Files that Redis 6 and older
    /// wrote hold EVAL itself.
    run_script: ScriptRunner,
    pub commands: u64,
}

/// What runs a prepared script for a client (`runtime::script::run`); returns whether its
/// reply is an error.
pub type ScriptRunner = fn(&mut ServerState, usize, &mut Slot, &Request, &[Bytes], i64) -> bool;

impl Replayer<'_> {
    pub fn new(srv: &mut ServerState, now_ms: i64, run_script: ScriptRunner) -> Replayer<'_> {
        let mut client = Client::new(0, String::new(), String::new(), -1, false, now_ms);
        client.in_exec = true;
        Replayer { srv, slot: Slot::new(client, Reply::new(Proto::Resp2)), run_script, commands: 0 }
    }
}

impl Replay for Replayer<'_> {
    fn file_start(&mut self) {
        self.slot.client.db = 0;
    }

    fn dbs(&mut self) -> &mut [Db] {
        &mut self.srv.dbs
    }

    fn functions(&mut self, codes: Vec<Vec<u8>>) -> Result<(), String> {
        let codes = codes.into_iter().map(bytes::Bytes::from).collect();
        self.srv
            .functions
            .restore(codes, crate::scripting::functions::RestorePolicy::Append)
            .map_err(|e| format!("Failed loading the functions of the AOF's RDB preamble: {e}"))
    }

    /// Runs one command. An unknown command or a wrong argument count is fatal, with
    /// Valkey's texts; an error reply from the command itself is not.
    fn run(&mut self, argv: &[bytes::Bytes], now_ms: i64) -> Result<(), ExecError> {
        let srv = &mut *self.srv;
        let Some(first) = argv.first() else {
            return Err(ExecError::Fatal("Empty command in the append only file".into()));
        };
        let name = String::from_utf8_lossy(first);
        if first.eq_ignore_ascii_case(b"MULTI") || first.eq_ignore_ascii_case(b"EXEC") {
            return Ok(());
        }
        let Some(mut cmd) = crate::commands::lookup(first) else {
            return Err(ExecError::UnknownCommand);
        };
        if !cmd.subcommands.is_empty() {
            cmd = argv.get(1).and_then(|s| cmd.subcommand(s)).unwrap_or(cmd);
        }
        if !cmd.arity_ok(argv.len()) {
            return Err(ExecError::Fatal(format!(
                "Wrong number of arguments for '{name}' reading the append only file"
            )));
        }
        let Some(handler) = cmd.handler else { return Ok(()) };
        let slot = &mut self.slot;
        let mut ran =
            run_handler(handler, srv, &mut slot.client, &mut slot.out, argv, now_ms, usize::MAX);
        if let Some(req) = slot.client.script.take() {
            if ran.is_ok() {
                (self.run_script)(srv, usize::MAX, slot, &req, argv, now_ms);
            }
            ran = Ok(());
        }
        let error = match ran {
            Err(e) => Some(e.to_string()),
            Ok(()) => error_reply_text(&slot.out.buf),
        };
        slot.out.clear();
        if let Some(error) = error {
            replay_error(srv.config.general.propagation_error_behavior, cmd.name, &error)?;
        }
        self.slot.client.block_request = None;
        self.commands += 1;
        srv.drain_key_events(None);
        Ok(())
    }
}

/// The text of an error reply (`-ERR text\r\n` gives `ERR text`), if `reply` is one.
fn error_reply_text(reply: &[u8]) -> Option<String> {
    let line = reply.strip_prefix(b"-")?;
    let end = line.windows(2).position(|w| w == b"\r\n").unwrap_or(line.len());
    Some(String::from_utf8_lossy(&line[..end]).into_owned())
}

/// A replayed command replied with an error: logged as Valkey logs it; then
/// `propagation-error-behavior` decides. `panic` stops the load (Valkey aborts the process;
/// here start-up fails with its message); `ignore` and `panic-on-replicas` (this server is
/// never a replica) go on.
fn replay_error(
    behavior: PropagationErrorBehavior,
    command: &str,
    error: &str,
) -> Result<(), ExecError> {
    let text = error.strip_prefix("ERR ").unwrap_or(error);
    let command = command.to_ascii_lowercase();
    tracing::warn!(
        "== CRITICAL == This server is sending an error to its AOF-loading-client: '{text}' \
         after processing the command '{command}'"
    );
    match behavior {
        PropagationErrorBehavior::Panic => Err(ExecError::Fatal(format!(
            "This server panicked sending an error to its AOF-loading-client after processing \
             the command '{command}'"
        ))),
        PropagationErrorBehavior::Ignore | PropagationErrorBehavior::PanicOnReplicas => Ok(()),
    }
}

#[cfg(test)]
mod replay_error_tests {
    use super::*;

    #[test]
    fn error_replies_are_recognised() {
        assert_eq!(error_reply_text(b"-ERR bad\r\n").as_deref(), Some("ERR bad"));
        assert_eq!(error_reply_text(b"-WRONGTYPE x\r\n").as_deref(), Some("WRONGTYPE x"));
        assert_eq!(error_reply_text(b"+OK\r\n"), None);
        assert_eq!(error_reply_text(b""), None);
    }

    #[test]
    fn behavior_decides_whether_replay_stops() {
        let err = "ERR value is not an integer or out of range";
        assert_eq!(replay_error(PropagationErrorBehavior::Ignore, "INCR", err), Ok(()));
        assert_eq!(replay_error(PropagationErrorBehavior::PanicOnReplicas, "incr", err), Ok(()));
        assert_eq!(
            replay_error(PropagationErrorBehavior::Panic, "INCR", err),
            Err(ExecError::Fatal(
                "This server panicked sending an error to its AOF-loading-client after \
                 processing the command 'incr'"
                    .to_string()
            ))
        );
    }
}
