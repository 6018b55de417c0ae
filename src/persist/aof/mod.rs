//! The append-only file (AOF), in Valkey's multi-part layout: a directory (`appenddirname`)
//! holding a manifest, one base file (an RDB snapshot, or a command log when
//! `aof-use-rdb-preamble` is no) and the incremental command logs written since that base.
//!
//! ```text
//!  appendonlydir/
//!    appendonly.aof.manifest        file appendonly.aof.3.base.rdb seq 3 type b
//!                                   file appendonly.aof.7.incr.aof seq 7 type i
//!    appendonly.aof.3.base.rdb      the dataset when the last rewrite started
//!    appendonly.aof.7.incr.aof      every write since, as RESP commands
//! ```
//!
//! - the propagation feed it consumes (`server::propagate`): which commands are logged, in
//!   which form (absolute times, explicit effects).
//! - `writer`: the buffer reaches the incremental file before replies go out; the
//!   `appendfsync` policies.
//! - `rewrite`: BGREWRITEAOF. A new incremental file is opened and the parent keeps
//!   appending to it while a forked child writes the new base; when the child is done, the
//!   manifest swaps in the new base and the old files become history and are deleted. A crash
//!   at any point leaves a manifest whose files replay to the full dataset.
//! - `manifest`, `reader`, `load`: the file formats and loading at start-up.
//!
//! States follow Valkey's: `Off`; `On`; and `WaitRewrite` after `CONFIG SET appendonly yes`,
//! while the first base is written (commands go to a temporary incremental file that joins
//! the manifest with that base).

pub mod emit;
pub mod load;
pub mod manifest;
pub mod reader;
pub mod rewrite;
pub mod startup;
pub mod writer;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::config::Appendfsync;
use crate::persist::Store;
use crate::server::latency::{Event, Timer};

use manifest::Manifest;
use writer::{IncrFile, Syncer};

/// Whether the AOF is on (`aof_enabled` in INFO is `state != Off`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AofState {
    #[default]
    Off,
    On,
    /// Turned on at run time: logging to a temporary incremental file until the first
    /// rewrite completes.
    WaitRewrite,
}

/// The AOF's run-time state (`ServerState::aof`).
#[derive(Debug, Default)]
pub struct Aof {
    pub state: AofState,
    /// The file commands are appended to (None while off).
    pub incr: Option<IncrFile>,
    /// The manifest as last persisted.
    pub manifest: Manifest,
    syncer: Option<Syncer>,
    last_fsync_ms: i64,
    /// The last write or fsync error of the AOF, while it lasts: writes are refused with
    /// `-MISCONF Errors writing to the AOF file: <error>` meanwhile.
    pub write_error: Option<String>,
    pub rewrite: rewrite::RewriteState,
    /// Size of the base plus the incremental files, and of the files at the last rewrite
    /// (auto-aof-rewrite-percentage grows from it).
    pub current_size: u64,
    pub base_size: u64,
    pub rewrite_base_size: u64,
    pub delayed_fsync: u64,
    /// Bytes written to the incremental files since start-up, over every file: a position
    /// in the AOF stream that only grows. A client's writes end at some position
    /// (`Client::aof_woff`); WAITAOF's local acknowledgement is [`Aof::fsynced_upto`]
    /// reaching it.
    pub written_total: u64,
    /// The position the last sync made in this thread covered.
    fsynced_total: u64,
}

/// Sets the AOF's state; the propagation feed is on while the AOF logs.
pub fn set_state(srv: &mut Store<'_>, state: AofState) {
    srv.persist.aof.state = state;
    srv.feed.set_aof(state != AofState::Off);
}

impl Aof {
    /// Whether commands are being logged.
    pub fn logging(&self) -> bool {
        self.state != AofState::Off
    }

    /// Whether the incremental file has writes not yet synced.
    fn unsynced(&self) -> bool {
        self.incr.as_ref().is_some_and(|i| i.unsynced)
    }

    /// How far the AOF stream is known to be on disk: what the last sync covered (under
    /// `appendfsync no` only the forced ones, at a rewrite or when the AOF is turned off,
    /// so WAITAOF's local acknowledgement waits, as in Valkey).
    pub fn fsynced_upto(&self) -> u64 {
        let background = self.syncer.as_ref().map_or(0, Syncer::done);
        self.fsynced_total.max(background)
    }

    /// Whether a background fsync is running (`aof_pending_bio_fsync`).
    pub fn fsync_pending(&self) -> bool {
        self.syncer.as_ref().is_some_and(Syncer::busy)
    }
}

/// The AOF directory (relative to `dir`, the working directory).
pub fn dir_path(srv: &Store<'_>) -> PathBuf {
    PathBuf::from(&srv.config.appenddirname)
}

/// Called by the event loop right before it writes replies to clients: commands' effects
/// reach the AOF (and, under `appendfsync always`, the disk) before they are acknowledged.
pub fn before_replies(srv: &mut Store<'_>) {
    if srv.feed.buf.is_empty() {
        return;
    }
    flush(srv, crate::util::clock::now_ms());
}

/// `DEBUG AOF-FLUSH-SLEEP <microsec>`: each write of the fed commands to the AOF first sleeps
/// this long (process-wide, as Valkey's `aof_flush_sleep`; 0, the default, is off). Tests
/// use it to hold writes in the buffer, where a crash or a kill would find them.
static FLUSH_SLEEP_US: AtomicU64 = AtomicU64::new(0);

pub fn set_flush_sleep_us(us: u64) {
    FLUSH_SLEEP_US.store(us, Ordering::Relaxed);
}

/// Writes the buffer and syncs as the policy says.
fn flush(srv: &mut Store<'_>, now_ms: i64) {
    let aof = &mut srv.persist.aof;
    let Some(incr) = aof.incr.as_mut() else {
        // Off (a rewrite of an AOF that is off logs nothing).
        srv.feed.buf.clear();
        return;
    };
    if !srv.feed.buf.is_empty() {
        let sleep_us = FLUSH_SLEEP_US.load(Ordering::Relaxed);
        if sleep_us > 0 {
            std::thread::sleep(std::time::Duration::from_micros(sleep_us));
        }
        let timer = Timer::start(srv.config.latency_monitor_threshold_ms);
        let written = incr.append(&srv.feed.buf);
        let latency_ms = timer.elapsed_ms();
        // Valkey's events for a slow write: by what else was going on, and all of them.
        let event = if aof.syncer.as_ref().is_some_and(Syncer::busy) {
            Event::AofWritePendingFsync
        } else if any_child(srv.persist) {
            Event::AofWriteActiveChild
        } else {
            Event::AofWriteAlone
        };
        srv.latency_event(event, latency_ms);
        srv.latency_event(Event::AofWrite, latency_ms);
        let aof = &mut srv.persist.aof;
        if let Err(e) = written {
            if srv.config.appendfsync == Appendfsync::Always {
                tracing::warn!(
                    "Can't recover from AOF write error when the AOF fsync policy is 'always'. \
                     Exiting...: {e}"
                );
                std::process::exit(1);
            }
            if aof.write_error.is_none() {
                tracing::warn!("Error writing to the AOF file: {e}");
            }
            aof.write_error = Some(crate::util::strerror(&e));
            return;
        }
        aof.current_size += srv.feed.buf.len() as u64;
        aof.written_total += srv.feed.buf.len() as u64;
        srv.feed.buf.clear();
        if aof.write_error.take().is_some() {
            tracing::info!("AOF write error looks solved, Valkey can write again.");
        }
    }
    sync(srv, now_ms, false);
}

/// Syncs the incremental file per `appendfsync` (`force`: now, whatever the policy).
fn sync(srv: &mut Store<'_>, now_ms: i64, force: bool) {
    let aof = &mut srv.persist.aof;
    let Some(incr) = aof.incr.as_mut() else { return };
    if !incr.unsynced {
        return;
    }
    let policy = srv.config.appendfsync;
    if force || policy == Appendfsync::Always {
        let timer = Timer::start(srv.config.latency_monitor_threshold_ms);
        let synced = incr.file.sync_data();
        if policy == Appendfsync::Always {
            let latency_ms = timer.elapsed_ms();
            srv.latency_event(Event::AofFsyncAlways, latency_ms);
        }
        let aof = &mut srv.persist.aof;
        let Some(incr) = aof.incr.as_mut() else { return };
        if let Err(e) = synced {
            tracing::warn!(
                "Can't persist AOF for fsync error when the AOF fsync policy is 'always': {e}. \
                 Exiting..."
            );
            std::process::exit(1);
        }
        incr.unsynced = false;
        aof.last_fsync_ms = now_ms;
        aof.fsynced_total = aof.written_total;
    } else if policy == Appendfsync::Everysec && now_ms - aof.last_fsync_ms >= 1000 {
        if aof.syncer.is_none() {
            match Syncer::start() {
                Ok(s) => aof.syncer = Some(s),
                Err(e) => {
                    tracing::warn!("Can't start the AOF fsync thread: {e}");
                    return;
                }
            }
        }
        let syncer = aof.syncer.as_ref().expect("started above");
        if syncer.request(&incr.file, aof.written_total) {
            incr.unsynced = false;
            aof.last_fsync_ms = now_ms;
        } else {
            aof.delayed_fsync += 1;
        }
    }
}

/// Time events: reaps the rewrite child, starts scheduled and automatic rewrites, and keeps
/// `everysec` syncing while the server is idle.
pub fn cron(srv: &mut Store<'_>, now_ms: i64) {
    rewrite::check_child(srv, now_ms);
    rewrite::check_scheduled(srv, now_ms);
    if srv.persist.aof.logging() {
        flush(srv, now_ms);
    }
}

/// Whether a fork child of either kind (BGSAVE, AOF rewrite) runs.
pub fn any_child(p: &crate::persist::Persistence) -> bool {
    p.bgsave.child.is_some() || p.aof.rewrite.in_progress()
}

/// `CONFIG SET appendonly`: turning it on starts a rewrite that writes the first base;
/// turning it off closes the files (they stay on disk). The propagation feed follows: the
/// caller refreshes the keyspace's removal logs after (`ServerState::refresh_removal_log`). When the AOF cannot start (no
/// directory, no incremental file, no fork) it stays off and the error says why, so that
/// CONFIG SET refuses instead of acknowledging writes that no file keeps.
pub fn config_changed(srv: &mut Store<'_>, now_ms: i64) -> Result<(), String> {
    let want = srv.config.appendonly;
    match (want, srv.persist.aof.state) {
        (true, AofState::Off) => startup::turn_on(srv, now_ms),
        (false, AofState::On | AofState::WaitRewrite) => {
            turn_off(srv, now_ms);
            Ok(())
        }
        _ => Ok(()),
    }
}

fn turn_off(srv: &mut Store<'_>, now_ms: i64) {
    flush(srv, now_ms);
    sync(srv, now_ms, true);
    rewrite::kill_child(srv);
    srv.persist.aof.incr = None;
    srv.feed.reset();
    set_state(srv, AofState::Off);
    srv.persist.aof.write_error = None;
    tracing::info!("Background append only file rewriting turned off");
}

/// What was fed is written and synced, whatever the policy (shutdown, DEBUG LOADAOF).
pub fn write_and_sync(srv: &mut Store<'_>) {
    if srv.persist.aof.logging() {
        let now = crate::util::clock::now_ms();
        flush(srv, now);
        sync(srv, now, true);
    }
}

/// Called once when the server shuts down: the last writes reach the file and the disk.
pub fn on_shutdown(srv: &mut Store<'_>) {
    rewrite::kill_child(srv);
    if srv.persist.aof.logging() && (!srv.feed.buf.is_empty() || srv.persist.aof.unsynced()) {
        tracing::info!("Calling fsync() on the AOF file.");
        write_and_sync(srv);
    }
}

/// The size of a file in the AOF directory (0 when it cannot be read).
fn file_size(dir: &Path, name: impl AsRef<Path>) -> u64 {
    std::fs::metadata(dir.join(name)).map_or(0, |m| m.len())
}
