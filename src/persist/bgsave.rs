//! BGSAVE: a forked child writes the RDB file from its copy-on-write snapshot of the
//! dataset, then exits; the time events reap it and record the outcome. Save points
//! (`save <seconds> <changes> ...`) start one from the time events.
//!
//! The child only iterates and writes: it allocates what the encoder needs, logs nothing
//! (the parent's logger may have been mid-write when it forked) and leaves with `_exit`, so
//! no destructor or atexit handler of the parent runs twice.

use crate::server::state::ServerState;

/// Seconds to wait after a failed background save before a save point tries again.
const RETRY_DELAY_MS: i64 = 5000;

/// The background save in progress and how the last one ended.
#[derive(Debug)]
pub struct BgSave {
    /// The child and when it started, with the dirty count it saw.
    pub child: Option<Child>,
    pub last_ok: bool,
    /// Duration of the last background save, seconds (-1: none yet).
    pub last_time_secs: i64,
    /// When the last one was started (for the retry delay after a failure).
    pub last_try_ms: i64,
    /// Number of saves done (INFO `rdb_saves`).
    pub saves: u64,
}

#[derive(Debug, Clone, Copy)]
pub struct Child {
    pub pid: libc::pid_t,
    pub started_ms: i64,
    pub dirty_at_start: u64,
}

impl Default for BgSave {
    fn default() -> BgSave {
        BgSave { child: None, last_ok: true, last_time_secs: -1, last_try_ms: 0, saves: 0 }
    }
}

/// Why BGSAVE did not start.
#[derive(Debug, PartialEq, Eq)]
pub enum StartError {
    InProgress,
    Fork(String),
}

/// Forks a child that saves the dataset.
pub fn start(srv: &mut ServerState, now_ms: i64) -> Result<(), StartError> {
    if srv.bgsave.child.is_some() {
        return Err(StartError::InProgress);
    }
    srv.bgsave.last_try_ms = now_ms;
    // SAFETY: fork has no memory-safety preconditions of its own. The child runs only
    // `child_main`, which reads the (copied) dataset, writes a file and calls `_exit`; it
    // never returns into the parent's code, unwinds or runs destructors. jemalloc installs
    // fork handlers, so allocating in the child is safe.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let e = std::io::Error::last_os_error();
        srv.bgsave.last_ok = false;
        return Err(StartError::Fork(e.to_string()));
    }
    if pid == 0 {
        child_main(srv, now_ms);
    }
    tracing::info!("Background saving started by pid {pid}");
    srv.bgsave.child = Some(Child { pid, started_ms: now_ms, dirty_at_start: srv.dirty });
    Ok(())
}

fn child_main(srv: &ServerState, now_ms: i64) -> ! {
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let ok = super::save::write_file(srv, &format!("temp-{pid}.rdb"), now_ms).is_ok();
    // SAFETY: `_exit` ends the process at once, without running the parent's handlers.
    unsafe { libc::_exit(if ok { 0 } else { 1 }) }
}

/// Reaps a finished child (time events). Returns whether one finished.
pub fn check_child(srv: &mut ServerState, now_ms: i64) -> bool {
    let Some(child) = srv.bgsave.child else { return false };
    let mut status: libc::c_int = 0;
    // SAFETY: waitpid on our own child with a valid out-pointer.
    let r = unsafe { libc::waitpid(child.pid, &mut status, libc::WNOHANG) };
    if r == 0 {
        return false;
    }
    srv.bgsave.child = None;
    srv.bgsave.last_time_secs = (now_ms - child.started_ms) / 1000;
    let ok = r == child.pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    srv.bgsave.last_ok = ok;
    if ok {
        tracing::info!("Background saving terminated with success");
        srv.dirty = srv.dirty.saturating_sub(child.dirty_at_start);
        srv.lastsave_s = child.started_ms / 1000;
        srv.bgsave.saves += 1;
    } else {
        tracing::warn!("Background saving error");
    }
    true
}

/// Starts a background save when a save point is reached (time events).
pub fn check_save_points(srv: &mut ServerState, now_ms: i64) {
    if srv.bgsave.child.is_some() || srv.config.save.is_empty() {
        return;
    }
    if !srv.bgsave.last_ok && now_ms - srv.bgsave.last_try_ms < RETRY_DELAY_MS {
        return;
    }
    let since_s = now_ms / 1000 - srv.lastsave_s;
    let due = srv
        .config
        .save
        .iter()
        .find(|&&(secs, changes)| srv.dirty >= changes && since_s >= secs as i64);
    if let Some(&(secs, changes)) = due {
        tracing::info!("{changes} changes in {secs} seconds. Saving...");
        let _ = start(srv, now_ms);
    }
}
