//! SHUTDOWN with replicas: as in Valkey, a shutdown (SHUTDOWN without NOW, or SIGTERM) first
//! gives lagging replicas up to `shutdown-timeout` seconds to acknowledge the whole stream,
//! with writes paused meanwhile, so that a replica promoted after it has every write the
//! primary acknowledged. Then the final save runs and the server exits; a save that fails
//! keeps it running, and the SHUTDOWN caller (blocked while it waits) gets the error.
//! `SHUTDOWN ABORT` ends the wait and resumes writes.

use crate::persist::save::{self, OnSaveError};
use crate::replication::{installed, state};
use crate::server::state::{ServerState, ShutdownMode};

/// A shutdown waiting for replicas.
#[derive(Debug, Clone, Copy)]
pub struct Waiting {
    mode: ShutdownMode,
    on_save_error: OnSaveError,
    deadline_ms: i64,
    /// The SHUTDOWN caller, blocked until the end (None for a signal).
    client: Option<usize>,
}

/// Whether every replica has acknowledged the whole stream (true without replicas).
fn replicas_caught_up(srv: &mut ServerState) -> bool {
    let offset = crate::replication::primary::write_offset(srv);
    let Some(r) = installed(srv) else { return true };
    r.acked(offset) == r.attached().count()
}

/// Starts a shutdown: the wait for replicas when some lag (and `now` is false and a
/// timeout is set), else the final save at once. `Ok(true)`: the server exits now
/// (`ServerState::shutdown` is set); `Ok(false)`: it waits, and `client` stays blocked;
/// `Err`: the save failed and the server keeps running.
pub fn begin(
    srv: &mut ServerState,
    mode: ShutdownMode,
    on_save_error: OnSaveError,
    now: bool,
    client: Option<usize>,
    now_ms: i64,
) -> Result<bool, save::ShutdownRefused> {
    let timeout_ms = i64::from(srv.config.general.shutdown_timeout_secs) * 1000;
    if !now && timeout_ms > 0 && !replicas_caught_up(srv) {
        tracing::warn!("Waiting for replicas before shutting down.");
        let r = state(&mut srv.repl);
        r.getack_wanted = true;
        r.shutdown =
            Some(Waiting { mode, on_save_error, deadline_ms: now_ms + timeout_ms, client });
        srv.pause.shutdown = true;
        return Ok(false);
    }
    finish(srv, mode, on_save_error, now_ms)?;
    Ok(true)
}

fn finish(
    srv: &mut ServerState,
    mode: ShutdownMode,
    on_save_error: OnSaveError,
    now_ms: i64,
) -> Result<(), save::ShutdownRefused> {
    save::prepare_shutdown(&mut crate::persist::store(srv), mode, on_save_error, now_ms)?;
    srv.shutdown = Some(mode);
    Ok(())
}

/// Whether a shutdown waits for replicas.
pub fn waiting(srv: &ServerState) -> bool {
    crate::replication::peek(&*srv.repl).is_some_and(|r| r.shutdown.is_some())
}

/// Each turn: once the replicas caught up, or the time is up, the shutdown goes on.
pub fn update(srv: &mut ServerState, now_ms: i64) {
    let Some(w) = installed(srv).and_then(|r| r.shutdown) else { return };
    let caught_up = replicas_caught_up(srv);
    if !caught_up && now_ms < w.deadline_ms {
        return;
    }
    if !caught_up {
        tracing::warn!("Lagging replica(s) after shutdown-timeout; shutting down anyway.");
    }
    state(&mut srv.repl).shutdown = None;
    srv.pause.shutdown = false;
    if finish(srv, w.mode, w.on_save_error, now_ms).is_err() {
        // The server keeps running; the caller learns why.
        answer(srv, w.client, now_ms);
    }
}

/// SHUTDOWN ABORT: ends the wait, writes resume; false when no shutdown waits.
pub fn abort(srv: &mut ServerState, now_ms: i64) -> bool {
    let Some(w) = installed(srv).and_then(|r| r.shutdown.take()) else { return false };
    srv.pause.shutdown = false;
    tracing::warn!("Shutdown manually aborted.");
    answer(srv, w.client, now_ms);
    true
}

/// The blocked SHUTDOWN caller gets Valkey's error: its shutdown did not happen.
fn answer(srv: &mut ServerState, client: Option<usize>, now_ms: i64) {
    let Some(t) = client else { return };
    let Some(b) = srv.blocking.unblock(t) else { return };
    let text = crate::spec::error::CmdError::ShutdownFailed.to_string();
    crate::server::unblock::answer_error(srv, t, &b, &text, now_ms);
}
