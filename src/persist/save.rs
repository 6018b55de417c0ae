//! SAVE and loading at start-up: the RDB file in `dir` (the working directory, which the
//! `dir` directive enters) named by `dbfilename`.
//!
//! A save writes `temp-<pid>.rdb` next to it, syncs it to disk and renames it over the old
//! file, so a crash mid-save leaves the previous file whole.

use std::fs::{self, File};
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use super::rdb::encoding::{RdbError, RdbReader, RdbWriter};
use super::rdb::file::{load_rdb, write_rdb, AccessMeta, LoadStats, SaveInfo};
use super::rdb::value::LoadLimits;
use crate::server::state::{ServerState, ShutdownMode};

/// Buffer between the encoder and the file.
const IO_BUF_BYTES: usize = 1 << 20;

fn rdb_path(srv: &ServerState) -> PathBuf {
    PathBuf::from(&srv.config.dbfilename)
}

/// Writes the whole dataset to the RDB file (SAVE, SHUTDOWN SAVE). On success the dirty
/// counter restarts and LASTSAVE moves.
pub fn save(srv: &mut ServerState, now_ms: i64) -> std::io::Result<()> {
    let tmp = format!("temp-{}.rdb", std::process::id());
    let result = write_file(srv, &tmp, now_ms);
    match &result {
        Ok(()) => {
            tracing::info!("DB saved on disk");
            srv.dirty = 0;
            srv.lastsave_s = now_ms / 1000;
            srv.bgsave.saves += 1;
        }
        Err(e) => tracing::warn!("Failed saving the DB: {e}"),
    }
    result
}

/// Writes the dataset to `tmp`, syncs it and renames it over the RDB file (SAVE, and the
/// BGSAVE child). Removes `tmp` on failure.
pub fn write_file(srv: &ServerState, tmp: &str, now_ms: i64) -> std::io::Result<()> {
    let result = (|| {
        let file = File::create(tmp)?;
        let out = BufWriter::with_capacity(IO_BUF_BYTES, file);
        let mut w = RdbWriter::new(out, srv.config.rdbcompression);
        let info = SaveInfo {
            now_ms,
            used_memory: crate::memory::used_memory(),
            meta: AccessMeta::for_policy(srv.config.maxmemory_policy),
            prefetch: true,
        };
        write_rdb(&mut w, &srv.dbs, &info)?;
        let mut out = w.into_inner();
        out.flush()?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        fs::rename(tmp, rdb_path(srv))
    })();
    if result.is_err() {
        let _ = fs::remove_file(tmp);
    }
    result
}

/// Loads the RDB file at start-up, if there is one. `Ok(None)` when there is no file.
pub fn load_at_startup(srv: &mut ServerState, now_ms: i64) -> Result<Option<LoadStats>, String> {
    let path = rdb_path(srv);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(format!("Fatal error loading the DB, check server logs. Exiting.: {e}"))
        }
    };
    let started = Instant::now();
    let lim = LoadLimits::from_config(&srv.config);
    let max_len = srv.config.proto_max_bulk_len.max(512 << 20);
    let mut r = RdbReader::new(BufReader::with_capacity(IO_BUF_BYTES, file), max_len);
    match load_rdb(&mut r, &mut srv.dbs, &lim, now_ms) {
        Ok(stats) => {
            tracing::info!(
                "Done loading RDB, keys loaded: {}, keys expired: {}.",
                stats.keys_loaded,
                stats.keys_expired
            );
            tracing::info!(
                "DB loaded from disk: {:.3} seconds",
                started.elapsed().as_secs_f64()
            );
            Ok(Some(stats))
        }
        Err(RdbError::Corrupt(why)) => Err(format!(
            "Short read or corrupt data loading DB ({why}) at offset {}. Unrecoverable error, aborting now.",
            r.position()
        )),
        Err(RdbError::Io(e)) => Err(format!("Fatal error loading the DB: {e}. Exiting.")),
    }
}

/// SHUTDOWN: waits for a background save to end, then saves when asked to (SAVE) or, by
/// default, when save points are configured; NOSAVE skips it. A failed save is logged and
/// the server still exits (the previous file stays whole).
pub fn on_shutdown(srv: &mut ServerState, mode: ShutdownMode, now_ms: i64) {
    if let Some(child) = srv.bgsave.child.take() {
        tracing::warn!("There is a child saving an .rdb. Killing it!");
        // SAFETY: signalling and reaping our own child; the status pointer may be null.
        unsafe {
            libc::kill(child.pid, libc::SIGUSR1);
            libc::waitpid(child.pid, std::ptr::null_mut(), 0);
        }
        let _ = fs::remove_file(format!("temp-{}.rdb", child.pid));
    }
    let wanted = match mode {
        ShutdownMode::Save => true,
        ShutdownMode::NoSave => false,
        ShutdownMode::Default => !srv.config.save.is_empty(),
    };
    if wanted {
        tracing::info!("Saving the final RDB snapshot before exiting.");
        let _ = save(srv, now_ms);
    }
}
