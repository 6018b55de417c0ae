//! BGSAVE: a forked child (`persist::fork`) writes the RDB file from its copy-on-write
//! snapshot of the dataset, then exits; the time events reap it and record the outcome.
//! Save points (`save <seconds> <changes> ...`) and BGSAVE SCHEDULE start one from the time
//! events.
//!
//! The child only iterates and writes: it allocates what the encoder needs, logs nothing
//! (the parent's logger may have been mid-write when it forked) and leaves with `_exit`.
//! The parent logs for it when it reaps it.

use crate::persist::fork::{self, ChildKind, ForkChild, Reaped};
use crate::persist::Store;
use crate::server::latency::Event;

/// Delay after a failed background save before a save point or a scheduled BGSAVE tries
/// again (Valkey's CONFIG_BGSAVE_RETRY_DELAY, 5 seconds).
const RETRY_DELAY_MS: i64 = 5000;

/// The background save in progress and how the last save and load went (INFO
/// persistence).
#[derive(Debug)]
pub struct BgSave {
    /// The child, with the dirty count it saw.
    pub child: Option<Child>,
    /// How the last save ended (SAVE and BGSAVE; a failure with save points configured
    /// refuses writes, see `persist::deny`).
    pub last_ok: bool,
    /// Duration of the last background save, seconds (-1: none yet).
    pub last_time_secs: i64,
    /// When the last one was started (for the retry delay after a failure).
    pub last_try_ms: i64,
    /// Saves attempted by SAVE and BGSAVE (INFO `rdb_saves`).
    pub saves: u64,
    /// BGSAVE SCHEDULE (or BGSAVE inside a transaction) while another child ran: start one
    /// as soon as none runs.
    pub scheduled: bool,
    /// Copy-on-write memory of the last successful child, bytes (`rdb_last_cow_size`).
    pub last_cow_bytes: u64,
    /// Keys loaded and dropped as expired by the last load (start-up, DEBUG RELOAD).
    pub last_load_keys_loaded: u64,
    pub last_load_keys_expired: u64,
}

#[derive(Debug)]
pub struct Child {
    pub fork: ForkChild,
    /// Where the child writes the RDB.
    pub target: Target,
    pub dirty_at_start: u64,
    /// Keys in the dataset at the fork (INFO `current_save_keys_total`).
    pub keys_total: u64,
}

impl Default for BgSave {
    fn default() -> BgSave {
        BgSave {
            child: None,
            last_ok: true,
            last_time_secs: -1,
            last_try_ms: 0,
            saves: 0,
            scheduled: false,
            last_cow_bytes: 0,
            last_load_keys_loaded: 0,
            last_load_keys_expired: 0,
        }
    }
}

/// Where a child writes the RDB: the RDB file (BGSAVE, save points, and a disk-backed full
/// sync, which then sends the file), or replicas' sockets (a diskless full sync).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Disk,
    Sockets,
}

/// A child that ended, for the replication layer to act on (`check_child`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    pub target: Target,
    pub ok: bool,
}

/// Why BGSAVE did not start.
#[derive(Debug, PartialEq, Eq)]
pub enum StartError {
    InProgress,
    /// Another child (an AOF rewrite) runs.
    ChildActive,
    Fork(String),
}

/// The file a child writes before renaming it over the RDB file.
pub fn temp_name(pid: libc::pid_t) -> String {
    format!("temp-{pid}.rdb")
}

/// Forks a child that saves the dataset.
pub fn start(srv: &mut Store<'_>, now_ms: i64) -> Result<(), StartError> {
    start_child(srv, Target::Disk, now_ms, |snapshot| {
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() };
        super::save::write_file(snapshot, &temp_name(pid), now_ms).is_ok()
    })
}

/// Forks a child that runs `work` on its snapshot (which returns success): the RDB file's
/// writer for [`Target::Disk`], the replication layer's socket writer for
/// [`Target::Sockets`].
pub fn start_child(
    srv: &mut Store<'_>,
    target: Target,
    now_ms: i64,
    work: impl FnOnce(&Store<'_>) -> bool,
) -> Result<(), StartError> {
    if srv.persist.bgsave.child.is_some() {
        return Err(StartError::InProgress);
    }
    if crate::persist::aof::any_child(srv.persist) {
        return Err(StartError::ChildActive);
    }
    if target == Target::Disk {
        srv.persist.bgsave.saves += 1;
        srv.persist.bgsave.last_try_ms = now_ms;
    }
    let snapshot: &Store<'_> = srv;
    let spawned = fork::spawn(ChildKind::Rdb, now_ms, || work(snapshot));
    match spawned {
        Ok(fork) => {
            srv.latency_event(Event::Fork, fork.fork_usec / 1000);
            match target {
                Target::Disk => tracing::info!("Background saving started by pid {}", fork.pid),
                Target::Sockets => {
                    tracing::info!("Background RDB transfer started by pid {}", fork.pid)
                }
            }
            let keys_total = srv.dbs.iter().map(|d| d.len() as u64).sum();
            srv.persist.bgsave.child =
                Some(Child { fork, target, dirty_at_start: srv.dirty.count(), keys_total });
            Ok(())
        }
        Err(e) => {
            if target == Target::Disk {
                srv.persist.bgsave.last_ok = false;
            }
            tracing::warn!("Can't save in background: fork: {e}");
            Err(StartError::Fork(e.to_string()))
        }
    }
}

/// Reaps a finished child (time events). Returns how it ended, if it did.
pub fn check_child(srv: &mut Store<'_>, now_ms: i64) -> Option<Finished> {
    let child = srv.persist.bgsave.child.as_mut()?;
    let reaped = child.fork.try_reap(now_ms)?;
    let child = srv.persist.bgsave.child.take().expect("checked above");
    let ok = reaped.ok && reaped.by_signal.is_none();
    match child.target {
        Target::Disk => finished(srv, &child, &reaped, now_ms),
        Target::Sockets if ok => tracing::info!("Background RDB transfer terminated with success"),
        Target::Sockets => match reaped.by_signal {
            Some(sig) => tracing::warn!("Background transfer terminated by signal {sig}"),
            None => tracing::warn!("Background transfer error"),
        },
    }
    Some(Finished { target: child.target, ok })
}

fn finished(srv: &mut Store<'_>, child: &Child, r: &Reaped, now_ms: i64) {
    let bg = &mut srv.persist.bgsave;
    bg.last_time_secs = r.elapsed_ms / 1000;
    match r.by_signal {
        None if r.ok => {
            tracing::info!("DB saved on disk");
            if r.cow_bytes > 0 {
                let mb = r.cow_bytes >> 20;
                tracing::info!("Fork CoW for RDB: current {mb} MB, peak {mb} MB, average {mb} MB");
            }
            tracing::info!("Background saving terminated with success");
            bg.last_ok = true;
            bg.last_cow_bytes = r.cow_bytes;
            srv.dirty.saved(child.dirty_at_start);
            *srv.lastsave_s = now_ms / 1000;
        }
        None => {
            tracing::warn!("Background saving error");
            bg.last_ok = false;
        }
        Some(sig) => {
            tracing::warn!("Background saving terminated by signal {sig}");
            // SIGUSR1 is how the server itself stops a child: not a failure.
            if sig != libc::SIGUSR1 {
                bg.last_ok = false;
            }
            let timer = srv.latency_timer();
            let _ = std::fs::remove_file(temp_name(child.fork.pid));
            srv.latency_event(Event::RdbUnlinkTempFile, timer.elapsed_ms());
        }
    }
}

/// Stops a background save in progress (SHUTDOWN) and removes its temporary file.
pub fn kill_child(srv: &mut Store<'_>) {
    if let Some(child) = srv.persist.bgsave.child.take() {
        tracing::warn!("There is a child saving an .rdb. Killing it!");
        let pid = child.fork.pid;
        child.fork.kill_and_reap();
        if child.target == Target::Disk {
            let _ = std::fs::remove_file(temp_name(pid));
        }
    }
}

/// Starts a background save when a save point is reached or one was scheduled (time
/// events).
pub fn check_save_points(srv: &mut Store<'_>, now_ms: i64) {
    if crate::persist::aof::any_child(srv.persist) {
        return;
    }
    let retry_ok =
        srv.persist.bgsave.last_ok || now_ms - srv.persist.bgsave.last_try_ms > RETRY_DELAY_MS;
    let since_s = now_ms / 1000 - *srv.lastsave_s;
    let due = srv
        .config
        .save
        .iter()
        .find(|&&(secs, changes)| srv.dirty.count() >= changes && since_s > secs as i64);
    if let (Some(&(secs, changes)), true) = (due, retry_ok) {
        tracing::info!("{changes} changes in {secs} seconds. Saving...");
        let _ = start(srv, now_ms);
        return;
    }
    if srv.persist.bgsave.scheduled && retry_ok && start(srv, now_ms).is_ok() {
        srv.persist.bgsave.scheduled = false;
    }
}
