//! FAILOVER: a primary hands its role to one of its replicas without losing a write. Writes
//! are paused; once the target (or, without `TO`, any replica) has acknowledged the whole
//! stream, the primary becomes its replica and asks it, with `PSYNC <replid> <offset>
//! FAILOVER`, to take over; the target promotes itself and answers `+CONTINUE`, so neither
//! side loads anything. `TIMEOUT` bounds the wait (then the failover is aborted, or with
//! `FORCE` done anyway); `FAILOVER ABORT` cancels it.
//!
//! ```text
//!  FAILOVER ─► waiting-for-sync (writes paused, GETACK each second)
//!           ─► target acked everything (or FORCE at the timeout)
//!           ─► failover-in-progress: REPLICAOF target, PSYNC ... FAILOVER
//!           ─► the target accepted: no-failover, writes resume (we are a replica)
//! ```

use crate::replication::{installed, replica, state, ReplicaState};
use crate::server::state::ServerState;

/// Where a failover stands (INFO `master_failover_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    WaitForSync,
    InProgress,
}

/// A failover under way.
#[derive(Debug, Clone)]
pub struct Failover {
    pub stage: Stage,
    /// The replica to hand over to; without `TO`, the first that catches up.
    pub target: Option<(String, u16)>,
    pub force: bool,
    pub end_ms: Option<i64>,
}

/// INFO's name of the failover state.
pub fn state_name(srv: &ServerState) -> &'static str {
    match crate::replication::peek(&*srv.repl).and_then(|r| r.failover.as_ref()) {
        None => "no-failover",
        Some(f) if f.stage == Stage::WaitForSync => "waiting-for-sync",
        Some(_) => "failover-in-progress",
    }
}

/// Whether a failover is under way.
pub fn in_progress(srv: &ServerState) -> bool {
    crate::replication::peek(&*srv.repl).is_some_and(|r| r.failover.is_some())
}

/// Why FAILOVER was refused.
pub fn start(
    srv: &mut ServerState,
    target: Option<(String, u16)>,
    force: bool,
    timeout_ms: i64,
    now_ms: i64,
) -> Result<(), &'static str> {
    if in_progress(srv) {
        return Err("ERR FAILOVER already in progress.");
    }
    if srv.is_replica {
        return Err("ERR FAILOVER is not valid when server is a replica.");
    }
    let r = state(&mut srv.repl);
    if r.attached().next().is_none() {
        return Err("ERR FAILOVER requires connected replicas.");
    }
    if force && (timeout_ms == 0 || target.is_none()) {
        return Err(
            "ERR FAILOVER with force option requires both a timeout and target HOST and IP.",
        );
    }
    if let Some((host, port)) = &target {
        let Some(rep) =
            r.attached().find(|x| x.ip().eq_ignore_ascii_case(host) && x.listening_port == *port)
        else {
            return Err("ERR FAILOVER target HOST and PORT is not a replica.");
        };
        if rep.state != ReplicaState::Online {
            return Err("ERR FAILOVER target replica is not online.");
        }
        tracing::info!("FAILOVER requested to {host}:{port}.");
    } else {
        tracing::info!("FAILOVER requested to any replica.");
    }
    r.failover = Some(Failover {
        stage: Stage::WaitForSync,
        target,
        force,
        end_ms: (timeout_ms > 0).then(|| now_ms.saturating_add(timeout_ms)),
    });
    r.getack_wanted = true;
    srv.pause.failover = true;
    Ok(())
}

/// `FAILOVER ABORT`, a timeout, or a target that refused: back to a primary with writes.
pub fn abort(srv: &mut ServerState, why: &str, now_ms: i64) {
    let Some(f) = installed(srv).and_then(|r| r.failover.take()) else { return };
    match &f.target {
        Some((h, p)) => tracing::info!("FAILOVER to {h}:{p} aborted: {why}"),
        None => tracing::info!("FAILOVER to any replica aborted: {why}"),
    }
    if f.stage == Stage::InProgress {
        replica::promote(srv, now_ms);
    }
    end_pause(srv);
}

/// The failover is over: writes resume.
pub fn finished(srv: &mut ServerState) {
    if let Some(r) = installed(srv) {
        r.failover = None;
    }
    end_pause(srv);
}

fn end_pause(srv: &mut ServerState) {
    srv.pause.failover = false;
}

/// From the time events and after each batch: a failover waiting for its replica moves on
/// when the replica has acknowledged everything, or when its time is up.
pub fn update(srv: &mut ServerState, now_ms: i64) {
    let Some(r) = installed(srv) else { return };
    let Some(f) = r.failover.as_mut() else { return };
    if f.stage != Stage::WaitForSync {
        return;
    }
    if f.end_ms.is_some_and(|e| e <= now_ms) {
        if f.force {
            let (host, port) = f.target.clone().expect("FORCE needs a target");
            tracing::info!("FAILOVER to {host}:{port} time out exceeded, failing over.");
            f.stage = Stage::InProgress;
            replica::set_primary_for_failover(srv, &host, port, now_ms);
        } else {
            abort(srv, "Replica never caught up before timeout", now_ms);
        }
        return;
    }
    let offset = r.offset;
    let caught_up = r.replicas.iter().find(|x| {
        x.state == ReplicaState::Online
            && x.ack_offset == offset
            && match &f.target {
                Some((h, p)) => x.ip().eq_ignore_ascii_case(h) && x.listening_port == *p,
                None => true,
            }
    });
    let Some(rep) = caught_up else {
        // Ask again; the replicas answer with their offsets.
        r.getack_wanted = true;
        return;
    };
    let (host, port) = (rep.ip().to_string(), rep.listening_port);
    f.target = Some((host.clone(), port));
    f.stage = Stage::InProgress;
    tracing::info!("Failover target {host}:{port} is synced, failing over.");
    replica::set_primary_for_failover(srv, &host, port, now_ms);
}
