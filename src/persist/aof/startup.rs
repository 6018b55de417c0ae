//! Turning the AOF on: at start-up (after loading it) and by `CONFIG SET appendonly yes`.

use std::fs::{self, OpenOptions};
use std::io;
use std::path::Path;

use super::load::{load_dir_with, AofStatus, ExecError, LoadOpts};
use super::manifest;
use super::reader::ReadLimits;
use super::writer::IncrFile;
use super::{dir_path, file_size, rewrite, AofState};
use crate::config::Config;
use crate::keyspace::db::Db;
use crate::persist::rdb::encoding::{RdbError, RdbReader};
use crate::persist::rdb::file::load_rdb;
use crate::persist::rdb::file::SaveInfo;
use crate::persist::rdb::value::LoadLimits;
use crate::persist::Store;

/// After the start-up load with `appendonly yes`: makes sure there is a base (a server
/// starting on an empty directory writes one from the loaded dataset at once, so the
/// manifest always names one) and opens the last incremental file for appending, or a new
/// one.
pub fn open_at_start(srv: &mut Store<'_>, now_ms: i64) -> io::Result<()> {
    let dir = dir_path(srv);
    fs::create_dir_all(&dir)?;
    let appendfilename = srv.config.appendfilename.clone();
    let mut m = srv.persist.aof.manifest.clone();
    let mut changed = false;
    if m.base.is_none() && m.incrs.is_empty() {
        let rdb = srv.config.aof_use_rdb_preamble;
        let base = m.next_base(&appendfilename, rdb).name.clone();
        let temp = manifest::temp_rewrite_name(std::process::id() as i32);
        let mut info = SaveInfo::for_config(srv.config, now_ms);
        info.functions = srv.functions.codes();
        rewrite::write_base_file(&temp, srv.dbs, &info, rdb)?;
        fs::rename(&temp, dir.join(&base))?;
        srv.persist.aof.base_size = std::fs::metadata(dir.join(&base)).map_or(0, |m| m.len());
        changed = true;
    }
    changed |= m.incrs.is_empty();
    let name = m.last_incr_or_new(&appendfilename).name.to_string_lossy().into_owned();
    let file = OpenOptions::new().create(true).append(true).open(dir.join(&name))?;
    if changed {
        m.persist(&dir, &appendfilename).map_err(io::Error::other)?;
    }
    srv.persist.aof.manifest = m;
    srv.persist.aof.incr = Some(IncrFile::new(file, name)?);
    srv.feed.reset();
    super::set_state(srv, AofState::On);
    srv.persist.aof.current_size = total_size(srv);
    // Automatic rewrites measure growth from the base, as Valkey after a load.
    srv.persist.aof.rewrite_base_size = srv.persist.aof.base_size;
    Ok(())
}

/// Runs the commands read from the AOF at start-up, on the server it holds. The command
/// layer implements it: persistence reads and checks the files, and knows nothing of command
/// handlers or of the server beyond its keyspace.
pub trait Replay {
    /// Runs one command (`MULTI` and `EXEC` included, for the replayer to skip or honour).
    fn run(&mut self, argv: &[bytes::Bytes], now_ms: i64) -> Result<(), ExecError>;
    /// A new file starts: Valkey replays each file through a fresh client, so each starts
    /// in database 0 whatever the last one selected.
    fn file_start(&mut self);
    /// The databases an RDB preamble loads into.
    fn dbs(&mut self) -> &mut [Db];
    /// Installs the function libraries an RDB preamble holds.
    fn functions(&mut self, codes: Vec<Vec<u8>>) -> Result<(), String>;
}

/// What start-up reads of the settings (taken before the replayer borrows the server).
pub struct LoadSettings {
    appenddirname: String,
    appendfilename: String,
    opts: LoadOpts,
    limits: LoadLimits,
    max_len: u64,
}

impl LoadSettings {
    pub fn new(config: &Config) -> LoadSettings {
        let max_len = LoadLimits::max_string_len(config);
        LoadSettings {
            appenddirname: config.appenddirname.clone(),
            appendfilename: config.appendfilename.clone(),
            opts: LoadOpts {
                load_truncated: config.aof_load_truncated,
                limits: ReadLimits { argc_max: i32::MAX as u64, bulk_len_max: max_len },
            },
            // An RDB preamble keeps keys already expired, as the commands after it expect.
            limits: LoadLimits { keep_expired: true, ..LoadLimits::from_config(config) },
            max_len,
        }
    }
}

/// The AOF directory as loaded, for [`open_loaded`].
pub struct Loaded {
    manifest: manifest::Manifest,
    base_size: u64,
    /// How the load went (`NotExist`, `Empty`, `Truncated`... are not errors at start-up).
    pub status: AofStatus,
}

/// Start-up with `appendonly yes`, first half: loads the AOF directory (the RDB file is not
/// read, as in Valkey) through `replayer`, which holds the server (with nothing expiring
/// while the log replays: the caller sets the server loading). An error is fatal: the
/// message to log.
pub fn load(
    settings: &LoadSettings,
    replayer: &mut dyn Replay,
    now_ms: i64,
) -> Result<Loaded, String> {
    let started = std::time::Instant::now();
    let replayer = std::cell::RefCell::new(replayer);
    let mut rdb = |r: &mut dyn std::io::Read| -> Result<(), String> {
        let mut replayer = replayer.borrow_mut();
        let mut reader = RdbReader::new(r, settings.max_len);
        match load_rdb(&mut reader, replayer.dbs(), &settings.limits, now_ms) {
            Ok(stats) => replayer.functions(stats.functions),
            Err(RdbError::Corrupt(why)) => Err(format!(
                "Short read or corrupt data loading the AOF's RDB preamble ({why}) at offset {}",
                reader.position()
            )),
            Err(RdbError::Io(e)) => Err(format!("Error reading the AOF's RDB preamble: {e}")),
        }
    };
    let mut exec = |argv: Vec<bytes::Bytes>| -> Result<(), ExecError> {
        replayer.borrow_mut().run(&argv, now_ms)
    };
    let mut file_start = || replayer.borrow_mut().file_start();
    let loaded = load_dir_with(
        Path::new("."),
        &settings.appenddirname,
        &settings.appendfilename,
        settings.opts,
        &mut rdb,
        &mut exec,
        &mut file_start,
    );
    let outcome = loaded.map_err(|e| e.message)?;
    if matches!(outcome.status, AofStatus::Ok | AofStatus::Truncated) {
        tracing::info!(
            "DB loaded from append only file: {:.3} seconds",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(Loaded { manifest: outcome.manifest, base_size: outcome.base_size, status: outcome.status })
}

/// Start-up with `appendonly yes`, second half: opens the loaded directory for appending and
/// deletes its history files.
pub fn open_loaded(srv: &mut Store<'_>, loaded: Loaded, now_ms: i64) -> Result<(), String> {
    srv.persist.aof.manifest = loaded.manifest;
    srv.persist.aof.base_size = loaded.base_size;
    open_at_start(srv, now_ms).map_err(|e| format!("Can't open the append-only file: {e}"))?;
    delete_history(srv);
    Ok(())
}

/// Deletes the files the manifest lists as history, and persists it without them (not while
/// `aof-disable-auto-gc` is on; turning it off calls this).
pub fn delete_history(srv: &mut Store<'_>) {
    if srv.persist.aof.manifest.history.is_empty() || srv.config.testing.aof_disable_auto_gc {
        return;
    }
    let dir = dir_path(srv);
    let history = srv.persist.aof.manifest.take_history();
    for h in &history {
        tracing::info!("Removing the history file {} in the background", h.name.to_string_lossy());
        let _ = fs::remove_file(dir.join(&h.name));
    }
    if let Err(e) = srv.persist.aof.manifest.persist(&dir, &srv.config.appendfilename) {
        tracing::warn!("{e}");
    }
}

/// The size of every file the manifest names.
fn total_size(srv: &mut Store<'_>) -> u64 {
    let dir = dir_path(srv);
    let m = &srv.persist.aof.manifest;
    m.base.iter().chain(m.incrs.iter()).map(|f| file_size(&dir, &f.name)).sum()
}

/// `CONFIG SET appendonly yes` at run time: log to a temporary file until a rewrite has
/// written the first base (now, or when the running BGSAVE ends). A rewrite already running
/// (BGREWRITEAOF while off) is not accumulating the new writes, so it is stopped and started
/// again. When the rewrite cannot start, the AOF stays off and the error says why.
pub fn turn_on(srv: &mut Store<'_>, now_ms: i64) -> Result<(), String> {
    super::set_state(srv, AofState::WaitRewrite);
    srv.feed.reset();
    if srv.persist.aof.rewrite.in_progress() {
        tracing::info!(
            "AOF was enabled but there is already an AOF rewriting in background. Stopping \
             background AOF and starting a rewrite now."
        );
        rewrite::kill_child(srv);
    }
    match rewrite::start(srv, now_ms) {
        Ok(()) => Ok(()),
        Err(rewrite::StartError::ChildActive) => {
            tracing::info!(
                "AOF was enabled but there is already another background operation. An AOF \
                 background was scheduled to start when possible."
            );
            srv.persist.aof.rewrite.scheduled = true;
            Ok(())
        }
        Err(e) => {
            super::set_state(srv, AofState::Off);
            srv.persist.aof.incr = None;
            srv.feed.reset();
            tracing::warn!(
                "Valkey needs to enable the AOF but can't trigger a background AOF rewrite \
                 operation. Check the above logs for more info about the error."
            );
            Err(match e {
                rewrite::StartError::Failed(why) => why,
                other => format!("{other:?}"),
            })
        }
    }
}
