//! SAVE, the final save of SHUTDOWN, DEBUG RELOAD and loading at start-up: the RDB file in
//! `dir` (the working directory, which the `dir` directive enters) named by `dbfilename`.
//!
//! A save writes `temp-<pid>.rdb` next to it, syncs it to disk and renames it over the old
//! file, so a crash mid-save leaves the previous file whole. A load reads through a byte
//! counter that logs its progress every few seconds, so a long start-up is not silent.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::rdb::encoding::{RdbError, RdbReader, RdbWriter};
use super::rdb::file::{load_rdb, write_rdb, LoadStats, SaveInfo};
use super::rdb::value::LoadLimits;
use crate::keyspace::db::Db;
use crate::persist::Store;
use crate::server::state::ShutdownMode;
use crate::util::strerror;

/// Buffer between the encoder and the file.
const IO_BUF_BYTES: usize = 1 << 20;
/// How often a load logs how far it got.
const LOAD_PROGRESS_INTERVAL: Duration = Duration::from_secs(2);

fn rdb_path(srv: &Store<'_>) -> PathBuf {
    PathBuf::from(&srv.config.dbfilename)
}

fn server_root() -> String {
    std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_else(|_| "unknown".into())
}

/// Where a save failed; displays as Valkey's log line for it.
#[derive(Debug)]
pub enum SaveError {
    Open { tmp: String, err: io::Error },
    Write(io::Error),
    Rename { tmp: String, dest: String, err: io::Error },
}

impl fmt::Display for SaveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SaveError::Open { tmp, err } => write!(
                f,
                "Failed opening the temp RDB file {tmp} (in server root dir {}) for saving: {}",
                server_root(),
                strerror(err)
            ),
            SaveError::Write(err) => write!(f, "Write error saving DB on disk: {}", strerror(err)),
            SaveError::Rename { tmp, dest, err } => write!(
                f,
                "Error moving temp DB file {tmp} on the final destination {dest} (in server root \
                 dir {}): {}",
                server_root(),
                strerror(err)
            ),
        }
    }
}

/// Writes the whole dataset to the RDB file (SAVE, SHUTDOWN, DEBUG RELOAD). On success the
/// dirty counter restarts, LASTSAVE moves and the last save counts as good (lifting
/// stop-writes-on-bgsave-error).
pub fn save(srv: &mut Store<'_>, now_ms: i64) -> Result<(), SaveError> {
    let tmp = super::bgsave::temp_name(std::process::id() as libc::pid_t);
    let result = write_file(srv, &tmp, now_ms);
    match &result {
        Ok(()) => {
            tracing::info!("DB saved on disk");
            srv.dirty.clear();
            *srv.lastsave_s = now_ms / 1000;
            srv.persist.bgsave.last_ok = true;
        }
        Err(e) => tracing::warn!("{e}"),
    }
    result
}

/// Writes the whole dataset as an RDB stream into `out` (a file, or a replica's socket) and
/// hands `out` back.
pub fn write_to<W: Write>(srv: &Store<'_>, out: W, now_ms: i64) -> io::Result<W> {
    let mut w = RdbWriter::new(out, srv.config.rdbcompression);
    let mut info = SaveInfo::for_config(srv.config, now_ms);
    info.functions = srv.functions.codes();
    write_rdb(&mut w, srv.dbs, &info)?;
    Ok(w.into_inner())
}

/// Writes the dataset to `tmp`, syncs it and renames it over the RDB file (SAVE, and the
/// BGSAVE child, which must not log: the caller reports the error). Removes `tmp` on
/// failure.
pub fn write_file(srv: &Store<'_>, tmp: &str, now_ms: i64) -> Result<(), SaveError> {
    let file = File::create(tmp).map_err(|err| SaveError::Open { tmp: tmp.to_string(), err })?;
    let written = (|| {
        let mut out = write_to(srv, BufWriter::with_capacity(IO_BUF_BYTES, file), now_ms)?;
        out.flush()?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()
    })();
    let dest = rdb_path(srv);
    let result = match written {
        Err(err) => Err(SaveError::Write(err)),
        Ok(()) => fs::rename(tmp, &dest).map_err(|err| SaveError::Rename {
            tmp: tmp.to_string(),
            dest: dest.display().to_string(),
            err,
        }),
    };
    if result.is_err() {
        let _ = fs::remove_file(tmp);
    }
    result
}

// ---------------------------------------------------------------------------------------
// Loading

/// Why a load did not complete.
#[derive(Debug)]
pub enum LoadError {
    /// There is no file.
    Missing,
    /// The text to log (and, at start-up, to exit with).
    Failed(String),
}

/// A reader that counts bytes and logs the share of the file read every
/// `LOAD_PROGRESS_INTERVAL` (checked once per buffer refill, so it costs nothing).
struct Progress<R> {
    inner: R,
    read: u64,
    total: u64,
    interval: Duration,
    last_report: Instant,
    reports: u32,
}

impl<R> Progress<R> {
    fn new(inner: R, total: u64, interval: Duration) -> Progress<R> {
        Progress { inner, read: 0, total, interval, last_report: Instant::now(), reports: 0 }
    }
}

impl<R: Read> Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.last_report.elapsed() >= self.interval {
            self.last_report = Instant::now();
            self.reports += 1;
            let pct = self.read as f64 * 100.0 / self.total.max(1) as f64;
            tracing::info!(
                "Loading RDB: {:.2} MB of {:.2} MB read ({pct:.0}%)",
                self.read as f64 / (1 << 20) as f64,
                self.total as f64 / (1 << 20) as f64
            );
        }
        Ok(n)
    }
}

/// Loads the RDB file at `path` into `dbs` (empty databases: see `load_rdb`).
fn load_file(
    srv: &Store<'_>,
    path: &Path,
    dbs: &mut [Db],
    now_ms: i64,
) -> Result<LoadStats, LoadError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(LoadError::Missing),
        Err(e) => {
            return Err(LoadError::Failed(format!(
                "Fatal error loading the DB, check server logs. Exiting.: {}",
                strerror(&e)
            )))
        }
    };
    let total = file.metadata().map_or(0, |m| m.len());
    let counted = Progress::new(file, total, LOAD_PROGRESS_INTERVAL);
    let lim = LoadLimits::from_config(srv.config);
    let max_len = LoadLimits::max_string_len(srv.config);
    let mut r = RdbReader::new(BufReader::with_capacity(IO_BUF_BYTES, counted), max_len);
    match load_rdb(&mut r, dbs, &lim, now_ms) {
        Ok(stats) => Ok(stats),
        Err(RdbError::Corrupt(why)) => Err(LoadError::Failed(format!(
            "Short read or corrupt data loading DB ({why}) at offset {}. Unrecoverable error, \
             aborting now.",
            r.position()
        ))),
        Err(RdbError::Io(e)) => Err(LoadError::Failed(format!(
            "Fatal error loading the DB: {}. Exiting.",
            strerror(&e)
        ))),
    }
}

/// Installs the function libraries of a loaded file in place of the server's (a file
/// without functions leaves none), as Valkey's load does.
pub fn install_functions(srv: &mut Store<'_>, stats: &LoadStats) -> Result<(), String> {
    let codes = stats.functions.iter().map(|c| bytes::Bytes::copy_from_slice(c)).collect();
    srv.functions
        .restore(codes, crate::scripting::functions::RestorePolicy::Flush)
        .map_err(|e| format!("Failed loading the functions of the RDB file: {e}"))
}

/// Logs a finished load and keeps its counts (INFO `rdb_last_load_keys_loaded`...);
/// `source` is where it came from (`disk`, `the primary's socket`).
pub fn log_loaded(srv: &mut Store<'_>, stats: &LoadStats, started: Instant, source: &str) {
    tracing::info!(
        "Done loading RDB, keys loaded: {}, keys expired: {}.",
        stats.keys_loaded,
        stats.keys_expired
    );
    tracing::info!("DB loaded from {source}: {:.3} seconds", started.elapsed().as_secs_f64());
    srv.persist.bgsave.last_load_keys_loaded = stats.keys_loaded;
    srv.persist.bgsave.last_load_keys_expired = stats.keys_expired;
}

/// Loads the RDB file at start-up, if there is one. `Ok(None)` when there is no file.
pub fn load_at_startup(srv: &mut Store<'_>, now_ms: i64) -> Result<Option<LoadStats>, String> {
    let started = Instant::now();
    let path = rdb_path(srv);
    let mut dbs = std::mem::take(srv.dbs);
    let loaded = load_file(srv, &path, &mut dbs, now_ms);
    *srv.dbs = dbs;
    match loaded {
        Ok(stats) => {
            install_functions(srv, &stats)?;
            log_loaded(srv, &stats, started, "disk");
            Ok(Some(stats))
        }
        Err(LoadError::Missing) => Ok(None),
        Err(LoadError::Failed(e)) => Err(e),
    }
}

// ---------------------------------------------------------------------------------------
// DEBUG RELOAD

/// DEBUG RELOAD's options: MERGE, NOFLUSH and NOSAVE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reload {
    pub save_first: SaveFirst,
    pub flush: Flush,
    pub duplicates: Duplicates,
}

/// Whether DEBUG RELOAD saves before loading (NOSAVE: load the file as it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveFirst {
    Yes,
    No,
}

/// Whether DEBUG RELOAD empties the dataset before loading (NOFLUSH: keep it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flush {
    Yes,
    No,
}

/// A loaded key that already exists (only with NOFLUSH): an error, or (MERGE) it replaces
/// the existing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duplicates {
    Fail,
    Replace,
}

impl Default for Reload {
    fn default() -> Reload {
        Reload { save_first: SaveFirst::Yes, flush: Flush::Yes, duplicates: Duplicates::Fail }
    }
}

/// Why DEBUG RELOAD failed.
#[derive(Debug, PartialEq, Eq)]
pub enum ReloadError {
    Save,
    Load,
}

/// Whether the file at `path` opens and starts with an RDB header this server can read
/// (`relaxed`: under `rdb-version-check relaxed`).
fn header_readable(path: &Path, relaxed: bool) -> bool {
    let mut header = [0u8; 9];
    let read = File::open(path).and_then(|mut f| io::Read::read_exact(&mut f, &mut header));
    read.is_ok() && crate::persist::rdb::file::check_header(&header, relaxed).is_ok()
}

/// DEBUG RELOAD read back, not yet installed: see [`reload`].
pub struct Reloaded {
    opts: Reload,
    fresh: Vec<Db>,
    loaded: Result<LoadStats, LoadError>,
    started: Instant,
}

impl Reloaded {
    /// Whether installing it changes the dataset (the caller tells WATCH and tracking first,
    /// while they can still see which keys exist).
    pub fn changes_dataset(&self) -> bool {
        self.opts.flush == Flush::Yes || self.loaded.is_ok()
    }
}

/// DEBUG RELOAD, first half: saves (unless NOSAVE) and reads the file into fresh databases,
/// leaving the dataset as it is. Valkey 9.1 changes nothing when the file is missing or
/// foreign; without MERGE, a NOFLUSH load whose keys exist already fails here too.
pub fn reload(srv: &mut Store<'_>, opts: Reload, now_ms: i64) -> Result<Reloaded, ReloadError> {
    if opts.save_first == SaveFirst::Yes {
        save(srv, now_ms).map_err(|_| ReloadError::Save)?;
    }
    let started = Instant::now();
    let mut fresh: Vec<Db> = srv.dbs.iter().map(Db::empty_like).collect();
    let path = rdb_path(srv);
    let relaxed =
        srv.config.persistence.rdb_version_check == crate::config::RdbVersionCheck::Relaxed;
    if !header_readable(&path, relaxed) {
        tracing::warn!("Error trying to load the RDB dump: no readable RDB header");
        return Err(ReloadError::Load);
    }
    let loaded = load_file(srv, &path, &mut fresh, now_ms);
    if opts.flush == Flush::No && loaded.is_ok() && opts.duplicates == Duplicates::Fail {
        if let Err(e) = check_duplicates(srv, &fresh, now_ms) {
            tracing::warn!("{e}");
            return Err(ReloadError::Load);
        }
    }
    Ok(Reloaded { opts, fresh, loaded, started })
}

/// DEBUG RELOAD, second half: installs what [`reload`] read. Without NOFLUSH the dataset is
/// replaced, even by a load that failed part way (with what was read before the error), as
/// Valkey does; with NOFLUSH a failed load changes nothing.
pub fn install_reloaded(
    srv: &mut Store<'_>,
    mut r: Reloaded,
    now_ms: i64,
) -> Result<(), ReloadError> {
    if r.opts.flush == Flush::Yes {
        for (db, new) in srv.dbs.iter_mut().zip(r.fresh.iter_mut()) {
            Db::swap_contents(db, new);
        }
        // The old contents are dropped with `fresh`.
    }
    let stats = match r.loaded {
        Ok(stats) => stats,
        Err(LoadError::Missing) => {
            tracing::warn!("Error trying to load the RDB dump: there is no file");
            return Err(ReloadError::Load);
        }
        Err(LoadError::Failed(e)) => {
            tracing::warn!("{e}");
            return Err(ReloadError::Load);
        }
    };
    if r.opts.flush == Flush::No {
        merge(srv, &mut r.fresh, now_ms);
    }
    if let Err(e) = install_functions(srv, &stats) {
        tracing::warn!("{e}");
        return Err(ReloadError::Load);
    }
    log_loaded(srv, &stats, r.started, "disk");
    Ok(())
}

/// Without MERGE, a loaded key that exists already fails the whole NOFLUSH load.
fn check_duplicates(srv: &mut Store<'_>, loaded: &[Db], now_ms: i64) -> Result<(), String> {
    for (i, db) in loaded.iter().enumerate() {
        let mut dup = None;
        db.for_each(|k, _| {
            if dup.is_none() && srv.dbs[i].contains(k, now_ms) {
                dup = Some(k.to_vec());
            }
        });
        if let Some(k) = dup {
            return Err(format!(
                "RDB has duplicated key '{}' in DB {i}",
                String::from_utf8_lossy(&k)
            ));
        }
    }
    Ok(())
}

/// Moves the keys of `loaded` into the dataset (NOFLUSH), replacing keys that exist.
fn merge(srv: &mut Store<'_>, loaded: &mut [Db], now_ms: i64) {
    for (i, db) in loaded.iter_mut().enumerate() {
        let mut names = Vec::with_capacity(db.len());
        db.for_each(|k, _| names.push(Box::<[u8]>::from(k)));
        for k in names {
            let Some(obj) = db.take(&k, now_ms) else { continue };
            let target = &mut srv.dbs[i];
            target.remove(&k, now_ms);
            target.put(&k, obj);
        }
    }
}

// ---------------------------------------------------------------------------------------
// SHUTDOWN

/// What a failed final save does to SHUTDOWN: stop it, or (FORCE) exit anyway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnSaveError {
    Refuse,
    ExitAnyway,
}

/// SHUTDOWN refused: the final save failed (the log says why).
#[derive(Debug, PartialEq, Eq)]
pub struct ShutdownRefused;

/// The persistence side of SHUTDOWN, run where a refusal can still be answered (the
/// SHUTDOWN command): stops a background save, then saves when asked to (SAVE) or, by
/// default, when save points are configured; NOSAVE skips it. A failed save keeps the
/// server running unless FORCE was given. On success the caller sets
/// `ServerState::shutdown` and the event loop finishes the exit.
pub fn prepare_shutdown(
    srv: &mut Store<'_>,
    mode: ShutdownMode,
    on_error: OnSaveError,
    now_ms: i64,
) -> Result<(), ShutdownRefused> {
    tracing::warn!("User requested shutdown...");
    super::bgsave::kill_child(srv);
    // The AOF first (as Valkey): it holds the whole dataset even while a rewrite runs,
    // except while it waits for its first base.
    if srv.persist.aof.rewrite.in_progress()
        && srv.persist.aof.state == super::aof::AofState::WaitRewrite
    {
        if on_error == OnSaveError::Refuse {
            tracing::warn!("Writing initial AOF, can't exit.");
            return Err(ShutdownRefused);
        }
        tracing::warn!("Writing initial AOF. Exit anyway.");
    }
    super::aof::on_shutdown(srv);
    let wanted = match mode {
        ShutdownMode::Save => true,
        ShutdownMode::NoSave => false,
        ShutdownMode::Default => !srv.config.save.is_empty(),
    };
    if !wanted {
        return Ok(());
    }
    tracing::info!("Saving the final RDB snapshot before exiting.");
    if save(srv, now_ms).is_ok() {
        return Ok(());
    }
    match on_error {
        OnSaveError::ExitAnyway => {
            tracing::warn!("Error trying to save the DB. Exit anyway.");
            Ok(())
        }
        OnSaveError::Refuse => {
            tracing::warn!("Error trying to save the DB, can't exit.");
            tracing::warn!(
                "Errors trying to shut down the server. Check the logs for more information."
            );
            Err(ShutdownRefused)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_counts_and_reports() {
        let data = vec![7u8; 10_000];
        let mut p = Progress::new(&data[..], data.len() as u64, Duration::ZERO);
        let mut out = Vec::new();
        let mut buf = [0u8; 1000];
        loop {
            let n = p.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        assert_eq!(out, data);
        assert_eq!(p.read, 10_000);
        assert!(p.reports >= 10);
        let mut quiet = Progress::new(&data[..], 1, Duration::from_secs(3600));
        assert_eq!(quiet.read(&mut buf).unwrap(), 1000);
        assert_eq!(quiet.reports, 0);
    }

    #[test]
    fn error_texts_as_strerror() {
        let e = io::Error::from_raw_os_error(libc::EISDIR);
        assert_eq!(strerror(&e), "Is a directory");
        let w = SaveError::Write(io::Error::from_raw_os_error(libc::ENOSPC));
        assert_eq!(w.to_string(), "Write error saving DB on disk: No space left on device");
        let r = SaveError::Rename {
            tmp: "temp-1.rdb".into(),
            dest: "dump.rdb".into(),
            err: io::Error::from_raw_os_error(libc::EISDIR),
        };
        let text = r.to_string();
        assert!(text.starts_with("Error moving temp DB file temp-1.rdb on the final destination dump.rdb (in server root dir "));
        assert!(text.ends_with("): Is a directory"));
    }
}
