//! BGREWRITEAOF: a forked child writes the dataset as a new base file while the parent
//! keeps logging to a fresh incremental file.
//!
//! ```text
//!  start:  flush + sync the current incr file
//!          open incr N+1 (On: named and added to the manifest, which is persisted;
//!          WaitRewrite: a temporary incr outside the manifest)
//!          fork: the child writes temp-rewriteaof-bg-<pid>.aof (RDB preamble or commands)
//!  done:   rename the child's file to base M+1 inside the directory
//!          (WaitRewrite: rename the temporary incr to incr N+1)
//!          the old base and every incr but the current one become history
//!          persist the manifest, then delete the history files
//! ```
//!
//! Until the manifest is persisted at the end, it names the old base and every incr
//! including N+1, which replay to the full dataset; after, the new base and N+1 do. A crash
//! in between leaves at worst an unreferenced temporary file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter};

use super::manifest;
use super::writer::IncrFile;
use super::{dir_path, file_size, AofState};
use crate::persist::fork::{self, ChildKind, ForkChild, Reaped};
use crate::persist::rdb::encoding::RdbWriter;
use crate::persist::rdb::file::{write_rdb, SaveInfo};
use crate::persist::Store;
use crate::server::latency::Event;

/// Seconds between tries of a rewrite that failed while the AOF waits for its first base.
const RETRY_DELAY_MS: i64 = 5000;

/// The rewrite in progress and how the last one went (INFO persistence).
#[derive(Debug)]
pub struct RewriteState {
    child: Option<Job>,
    /// BGREWRITEAOF arrived while a BGSAVE ran: start when it ends.
    pub scheduled: bool,
    pub last_ok: bool,
    /// Duration of the last rewrite, seconds (-1: none yet).
    pub last_time_secs: i64,
    pub started_ms: i64,
    pub rewrites: u64,
    pub consecutive_failures: u64,
    pub last_cow_size: u64,
    last_try_ms: i64,
}

impl Default for RewriteState {
    fn default() -> RewriteState {
        RewriteState {
            child: None,
            scheduled: false,
            last_ok: true,
            last_time_secs: -1,
            started_ms: 0,
            rewrites: 0,
            consecutive_failures: 0,
            last_cow_size: 0,
            last_try_ms: 0,
        }
    }
}

#[derive(Debug)]
struct Job {
    child: ForkChild,
    /// The child's output, in the working directory.
    temp: String,
    rdb_preamble: bool,
}

impl RewriteState {
    pub fn in_progress(&self) -> bool {
        self.child.is_some()
    }

    /// Seconds the current rewrite has run (-1: none).
    pub fn current_secs(&self, now_ms: i64) -> i64 {
        match &self.child {
            Some(_) => (now_ms - self.started_ms) / 1000,
            None => -1,
        }
    }
}

/// Why a rewrite did not start.
#[derive(Debug, PartialEq, Eq)]
pub enum StartError {
    InProgress,
    /// A BGSAVE child runs (the caller may schedule the rewrite).
    ChildActive,
    Failed(String),
}

/// The name of the temporary incremental file used while the AOF waits for its first base.
fn temp_incr_name(srv: &Store<'_>) -> String {
    manifest::temp_incr_name(&srv.config.appendfilename)
}

fn name_of(info: &manifest::AofInfo) -> String {
    info.name.to_string_lossy().into_owned()
}

/// Starts a background rewrite.
pub fn start(srv: &mut Store<'_>, now_ms: i64) -> Result<(), StartError> {
    if srv.persist.aof.rewrite.child.is_some() {
        return Err(StartError::InProgress);
    }
    if srv.persist.bgsave.child.is_some() {
        return Err(StartError::ChildActive);
    }
    srv.persist.aof.rewrite.last_try_ms = now_ms;
    let result = open_next_incr(srv, now_ms).and_then(|()| {
        let rdb_preamble = srv.config.aof_use_rdb_preamble;
        let dbs = &srv.dbs;
        let mut info = SaveInfo::for_config(srv.config, now_ms);
        info.functions = srv.functions.codes();
        let child = fork::spawn(ChildKind::Aof, now_ms, || {
            // SAFETY: getpid has no preconditions.
            let pid = unsafe { libc::getpid() };
            write_base_file(&manifest::temp_rewrite_bg_name(pid), dbs, &info, rdb_preamble).is_ok()
        })?;
        Ok((child, rdb_preamble))
    });
    match result {
        Ok((child, rdb_preamble)) => {
            srv.latency_event(Event::Fork, child.fork_usec / 1000);
            tracing::info!("Background append only file rewriting started by pid {}", child.pid);
            let temp = manifest::temp_rewrite_bg_name(child.pid);
            srv.persist.aof.rewrite.started_ms = now_ms;
            srv.persist.aof.rewrite.scheduled = false;
            // Counted when started, as Valkey's `aof_rewrites`.
            srv.persist.aof.rewrite.rewrites += 1;
            srv.persist.aof.rewrite.child = Some(Job { child, temp, rdb_preamble });
            Ok(())
        }
        Err(e) => {
            tracing::warn!("Can't rewrite append only file in background: {e}");
            // aof_rewrites_consecutive_failures counts children that failed (as Valkey's);
            // a rewrite that never started is only aof_last_bgrewrite_status:err.
            srv.persist.aof.rewrite.last_ok = false;
            Err(StartError::Failed(e.to_string()))
        }
    }
}

/// The child's work (and a start-up on an empty directory's): the whole dataset into
/// `path`, synced.
pub fn write_base_file(
    path: &str,
    dbs: &[crate::keyspace::db::Db],
    info: &SaveInfo,
    rdb_preamble: bool,
) -> io::Result<()> {
    let file = File::create(path)?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    if rdb_preamble {
        let mut w = RdbWriter::new(&mut out, true);
        write_rdb(&mut w, dbs, info)?;
    } else {
        let mut buf = Vec::new();
        for code in &info.functions {
            crate::server::propagate::append_command(
                &mut buf,
                &[b"FUNCTION".as_slice(), b"LOAD", code],
            );
        }
        std::io::Write::write_all(&mut out, &buf)?;
        super::emit::write_commands(&mut out, dbs, info.now_ms)?;
    }
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()
}

/// Flushes the current incremental file and opens the next one, where the parent logs
/// while the child writes.
fn open_next_incr(srv: &mut Store<'_>, now_ms: i64) -> io::Result<()> {
    super::flush(srv, now_ms);
    super::sync(srv, now_ms, true);
    let dir = dir_path(srv);
    fs::create_dir_all(&dir)?;
    let name = match srv.persist.aof.state {
        AofState::Off => return Ok(()),
        AofState::WaitRewrite => temp_incr_name(srv),
        AofState::On => {
            let mut m = srv.persist.aof.manifest.clone();
            let name = name_of(m.next_incr(&srv.config.appendfilename));
            let file = OpenOptions::new().create(true).append(true).open(dir.join(&name))?;
            m.persist(&dir, &srv.config.appendfilename).map_err(io::Error::other)?;
            srv.persist.aof.manifest = m;
            srv.persist.aof.incr = Some(IncrFile::new(file, name)?);
            srv.feed.reselect();
            return Ok(());
        }
    };
    let file = OpenOptions::new().create(true).write(true).truncate(true).open(dir.join(&name))?;
    srv.persist.aof.incr = Some(IncrFile::new(file, name)?);
    srv.feed.reselect();
    Ok(())
}

/// Reaps a finished rewrite child (time events) and installs its base.
pub fn check_child(srv: &mut Store<'_>, now_ms: i64) {
    let Some(job) = srv.persist.aof.rewrite.child.as_mut() else { return };
    let Some(reaped) = job.child.try_reap(now_ms) else { return };
    let job = srv.persist.aof.rewrite.child.take().expect("checked above");
    srv.persist.aof.rewrite.last_time_secs = (now_ms - srv.persist.aof.rewrite.started_ms) / 1000;
    let result = match reaped.ok {
        true => {
            // The renames and the manifest's write: Valkey's `aof-rename` event.
            let timer = srv.latency_timer();
            let installed = install(srv, &job).map_err(|e| e.to_string());
            srv.latency_event(Event::AofRename, timer.elapsed_ms());
            installed
        }
        false => Err(failure(&reaped)),
    };
    match result {
        Ok(()) => {
            tracing::info!("Background AOF rewrite finished successfully");
            srv.persist.aof.rewrite.last_ok = true;
            srv.persist.aof.rewrite.consecutive_failures = 0;
            srv.persist.aof.rewrite.last_cow_size = reaped.cow_bytes;
        }
        Err(e) => {
            tracing::warn!("Background AOF rewrite failed: {e}");
            let _ = fs::remove_file(&job.temp);
            srv.persist.aof.rewrite.last_ok = false;
            srv.persist.aof.rewrite.consecutive_failures += 1;
        }
    }
}

fn failure(r: &Reaped) -> String {
    match r.by_signal {
        Some(sig) => format!("Background AOF rewrite terminated by signal {sig}"),
        None => "Background AOF rewrite terminated with error".to_string(),
    }
}

/// The child succeeded: its file becomes the base, and the manifest says so.
fn install(srv: &mut Store<'_>, job: &Job) -> io::Result<()> {
    let dir = dir_path(srv);
    fs::create_dir_all(&dir)?;
    let appendfilename = srv.config.appendfilename.clone();
    let mut m = srv.persist.aof.manifest.clone();
    let base = name_of(m.next_base(&appendfilename, job.rdb_preamble));
    fs::rename(&job.temp, dir.join(&base))?;
    if srv.persist.aof.state == AofState::WaitRewrite {
        let name = name_of(m.next_incr(&appendfilename));
        fs::rename(dir.join(temp_incr_name(srv)), dir.join(&name))?;
        if let Some(incr) = srv.persist.aof.incr.as_mut() {
            incr.name = name;
        }
    }
    // While on, the last incr is the one written since the fork: it stays.
    m.mark_incrs_as_history(srv.persist.aof.state != AofState::Off);
    m.persist(&dir, &appendfilename).map_err(io::Error::other)?;
    // `aof-disable-auto-gc yes` keeps the history files (listed as such) until it is off.
    let history =
        if srv.config.testing.aof_disable_auto_gc { Vec::new() } else { m.take_history() };
    srv.persist.aof.manifest = m;
    for h in &history {
        let name = name_of(h);
        tracing::info!("Removing the history file {name} in the background");
        if let Err(e) = fs::remove_file(dir.join(&h.name)) {
            tracing::warn!("Failed to remove history AOF file {name}: {e}");
        }
    }
    if !history.is_empty() {
        if let Err(e) = srv.persist.aof.manifest.persist(&dir, &appendfilename) {
            tracing::warn!("{e}");
        }
    }
    if srv.persist.aof.state == AofState::WaitRewrite {
        super::set_state(srv, AofState::On);
        tracing::info!("Background AOF rewrite finished; the AOF is on");
    }
    srv.persist.aof.base_size = file_size(&dir, &base);
    let incr_size = srv.persist.aof.incr.as_ref().map_or(0, |i| i.size);
    srv.persist.aof.current_size = srv.persist.aof.base_size + incr_size;
    srv.persist.aof.rewrite_base_size = srv.persist.aof.current_size;
    Ok(())
}

/// Starts a scheduled rewrite once no child runs, retries the first base of an AOF turned
/// on at run time, and starts automatic rewrites (auto-aof-rewrite-percentage/min-size).
pub fn check_scheduled(srv: &mut Store<'_>, now_ms: i64) {
    if super::any_child(srv.persist) {
        return;
    }
    let waiting = srv.persist.aof.state == AofState::WaitRewrite
        && now_ms - srv.persist.aof.rewrite.last_try_ms >= RETRY_DELAY_MS;
    if srv.persist.aof.rewrite.scheduled || waiting {
        let _ = start(srv, now_ms);
        return;
    }
    let pct = u64::from(srv.config.auto_aof_rewrite_percentage);
    if srv.persist.aof.state != AofState::On || pct == 0 {
        return;
    }
    let size = srv.persist.aof.current_size;
    if size < srv.config.auto_aof_rewrite_min_size_bytes {
        return;
    }
    let base = srv.persist.aof.rewrite_base_size.max(1);
    let growth = (size.saturating_sub(base)) * 100 / base;
    if growth >= pct {
        tracing::info!("Starting automatic rewriting of AOF on {growth}% growth");
        let _ = start(srv, now_ms);
    }
}

/// Stops a rewrite in progress (AOF turned off, shutdown) and removes its output.
pub fn kill_child(srv: &mut Store<'_>) {
    if let Some(job) = srv.persist.aof.rewrite.child.take() {
        tracing::info!("Killing running AOF rewrite child: {}", job.child.pid);
        job.child.kill_and_reap();
        let _ = fs::remove_file(&job.temp);
    }
}
