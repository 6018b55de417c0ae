//! Loading the AOF directory at start-up, with Valkey's rules, results and log texts.
//!
//! Owns: finding the manifest, the upgrade of an old single-file AOF, replaying the base and
//! incr files in order through two callbacks (one for an RDB base, one per command), the
//! MULTI/EXEC and truncated-tail rules, and cutting a truncated last file back to its last
//! whole command. It never touches the keyspace: the callbacks do.
//!
//! # What Valkey does at start-up (facts, for wiring this in)
//!
//! Order in `main`: read the manifest, load data, open the AOF for appending, delete history.
//!
//! 1. **Manifest** (always, even with `appendonly no`): when `<dir>/<appenddirname>` or the
//!    manifest in it is missing, the manifest is taken as empty, silently. Any error reading
//!    or parsing it is fatal (exit 1) with the `*** FATAL AOF MANIFEST FILE ERROR ***` report.
//! 2. **Load** (only with `appendonly yes`; with `no`, the RDB file is loaded instead):
//!    - Upgrade path: when a regular file `<dir>/<appendfilename>` exists (an AOF of Redis
//!      before 7) and either the manifest lists no base and no incr, or it lists only a base
//!      named exactly `<appendfilename>` that is not yet inside the AOF directory (an upgrade
//!      that crashed between its two steps), Valkey creates the AOF directory, writes a
//!      manifest whose base is `<appendfilename>` with seq 1 (`curr_base_seq` 1), renames the
//!      old file into the directory, logs `Successfully migrated an old-style AOF file (..)
//!      into the AOF directory (..).`, then loads it as the base (it may be an RDB preamble
//!      followed by commands). Any failure there is fatal; a crash in between is retried at
//!      the next start. [`needs_upgrade`] and [`upgrade`] do this; [`load_dir`] calls them.
//!    - Nothing listed (no base, no incr): result `AOF_NOT_EXIST`, nothing is loaded, and
//!      **the RDB file is not loaded either**: the server starts empty.
//!    - A listed base or incr missing on disk is fatal; all listed files empty gives
//!      `AOF_EMPTY` (fine, nothing loaded). `AOF_FAILED` / `AOF_OPEN_ERR` exit 1;
//!      `AOF_TRUNCATED` starts normally (warnings logged); otherwise Valkey logs
//!      `DB loaded from append only file: %.3f seconds`.
//!    - `aof_current_size` becomes the total size of base and incrs, `aof_rewrite_base_size`
//!      the base's size (the first automatic rewrite may thus come early).
//! 3. **Open** (only with `appendonly yes`): create the AOF directory if missing (`Can't open
//!    or create append-only dir %s: %s`, exit 1). If the manifest still lists no base and no
//!    incr (a fresh start), write a base right away by a synchronous rewrite of the (empty)
//!    dataset, named by `Manifest::next_base(appendfilename, aof-use-rdb-preamble)`, and log
//!    `Creating AOF base file %s on server start`. Then open `last_incr_or_new` with
//!    `O_WRONLY|O_APPEND|O_CREAT`, mode 0644 (`Can't open the append-only file %s: %s`, exit
//!    1), persist the manifest (exit 1 on failure), take the incr's size as the last incr
//!    size, and log `Opening AOF incr file %s on server start` (it was listed) or `Creating
//!    AOF incr file %s on server start` (it is new).
//! 4. **History** (always): unless `aof-disable-auto-gc` is yes or there is none, each history
//!    file is unlinked in the background after `Removing the history file %s in the
//!    background`, the list is emptied (`Manifest::take_history`) and the manifest persisted.
//!
//! # Rules while replaying a file (Valkey's `loadSingleAppendOnlyFile`)
//!
//! - A file of size 0 is `AOF_EMPTY` (an empty incr counts as `AOF_OK`).
//! - A file starting with `REDIS` or `VALKEY` is an RDB (a `.base.rdb`, or an old AOF's RDB preamble):
//!   it goes to `load_rdb`, then commands are read from where the RDB ended, if any.
//! - Each command goes to `exec`, MULTI and EXEC included, a transaction only once its EXEC
//!   is read (see [`Exec`]). A file whose commands end inside a MULTI is treated like a
//!   truncated one, whose last valid offset is the one before the MULTI.
//! - A truncated tail: with `aof-load-truncated yes`, tolerated in the last file only, which
//!   is cut back (`ftruncate`) to its last whole command; otherwise fatal. Bad format in any
//!   file is fatal. Each outcome logs Valkey's texts, and the fatal one is the error returned.
//!
//! # Where this differs from Valkey, on purpose
//!
//! - The valid offset after an RDB preamble is the RDB's end (Valkey keeps 0, so a truncated
//!   command right after a preamble would have it cut the whole file).
//! - A file truncated in the middle of a command inside MULTI is cut back to before the MULTI
//!   (Valkey cuts after the last whole queued command, leaving an open MULTI in the file that
//!   would swallow the commands appended after the restart).
//! - A truncated file that is not the last is left untouched before the fatal error (Valkey
//!   truncates it first, so a second start would succeed with its tail silently missing).
//! - An annotation line cut by the end of the last file is trimmed (Valkey ignores it and
//!   then appends after it, gluing the next command onto the annotation).
//! - A listed file that vanishes between the size check and the open is fatal (Valkey goes on
//!   without it).
//! - The sizes reported are taken after any truncation.
//! - An unknown command inside a transaction is found when its EXEC is read (Valkey finds it
//!   when the command is read, so an unfinished transaction holding one is fatal there, and
//!   reverted here).
//! - Redis 8's `aof-load-broken` (`AOF_BROKEN_RECOVERED`) is not a Valkey feature: absent.

use std::ffi::OsStr;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Instant;

use bytes::Bytes;

use super::manifest::{AofFileType, AofInfo, Manifest};
use super::reader::{CommandReader, ReadError, ReadLimits};
use crate::util::strerror;

/// Read buffer for AOF files.
const READ_BUF_BYTES: usize = 1 << 20;

/// Valkey's result codes (`AOF_OK` ... `AOF_TRUNCATED`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AofStatus {
    Ok,
    NotExist,
    Empty,
    OpenErr,
    Failed,
    Truncated,
}

/// Options of a load.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadOpts {
    /// `aof-load-truncated`.
    pub load_truncated: bool,
    pub limits: ReadLimits,
}

/// Why `exec` refused a command. Errors a command replies with (WRONGTYPE, ...) are not
/// refusals: Valkey ignores them during a load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecError {
    /// `argv[0]` names no command: `Unknown command '<name>' reading the append only file
    /// <file>`, fatal.
    UnknownCommand,
    /// Any other fatal condition, returned as is.
    Fatal(String),
}

/// A successful load (`AOF_OK`, `AOF_NOT_EXIST`, `AOF_EMPTY` or `AOF_TRUNCATED`).
#[derive(Debug)]
pub struct LoadOutcome {
    pub status: AofStatus,
    /// The manifest as on disk now (after an upgrade, if one ran).
    pub manifest: Manifest,
    /// Size of the base and incr files (`aof_current_size`).
    pub total_size: u64,
    /// Size of the base file (`aof_rewrite_base_size`).
    pub base_size: u64,
    /// Commands passed to `exec`.
    pub commands: u64,
    /// An old single-file AOF was moved into the directory.
    pub upgraded: bool,
}

/// A failed load (`AOF_OPEN_ERR` or `AOF_FAILED`): log `message` (earlier warnings are
/// already logged) and exit with status 1.
#[derive(Debug, PartialEq, Eq)]
pub struct LoadError {
    pub status: AofStatus,
    pub message: String,
}

impl LoadError {
    fn failed(message: String) -> LoadError {
        LoadError { status: AofStatus::Failed, message }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Receives an RDB (base or preamble). It must read from the given reader directly, never
/// through a buffer of its own: the commands after the RDB are read from where it stopped.
pub type LoadRdb<'a> = dyn FnMut(&mut dyn Read) -> Result<(), String> + 'a;
/// Receives each command. A transaction arrives whole: `MULTI` when it is read, then its
/// commands and `EXEC` only once the `EXEC` is read; a transaction whose `EXEC` never comes
/// (the file ends inside it) passes its `MULTI` and nothing more. So `exec` may either queue
/// between `MULTI` and `EXEC` as Valkey's AOF client does, or ignore both and run commands
/// as they come.
pub type Exec<'a> = dyn FnMut(Vec<Bytes>) -> Result<(), ExecError> + 'a;

/// Loads `<dir>/<appenddirname>` at start-up (with `appendonly yes`): reads the manifest,
/// upgrades an old single-file AOF, and replays the base and incr files.
pub fn load_dir(
    dir: &Path,
    appenddirname: &str,
    appendfilename: &str,
    opts: LoadOpts,
    load_rdb: &mut LoadRdb<'_>,
    exec: &mut Exec<'_>,
) -> Result<LoadOutcome, LoadError> {
    load_dir_with(dir, appenddirname, appendfilename, opts, load_rdb, exec, &mut || {})
}

/// As [`load_dir`], calling `file_start` before each file is replayed: Valkey replays each
/// file through a fresh client, so each starts in database 0 whatever the last one selected.
pub fn load_dir_with(
    dir: &Path,
    appenddirname: &str,
    appendfilename: &str,
    opts: LoadOpts,
    load_rdb: &mut LoadRdb<'_>,
    exec: &mut Exec<'_>,
    file_start: &mut dyn FnMut(),
) -> Result<LoadOutcome, LoadError> {
    let aof_dir = dir.join(appenddirname);
    let mut manifest = match Manifest::load(&aof_dir, appendfilename) {
        Ok(m) => m.unwrap_or_default(),
        Err(e) => {
            e.log_context();
            return Err(LoadError::failed(e.reason));
        }
    };
    let upgraded = needs_upgrade(dir, &aof_dir, appendfilename, &manifest);
    if upgraded {
        upgrade(dir, appenddirname, appendfilename, &mut manifest).map_err(LoadError::failed)?;
    }
    let mut outcome = LoadOutcome {
        status: AofStatus::NotExist,
        manifest,
        total_size: 0,
        base_size: 0,
        commands: 0,
        upgraded,
    };
    if outcome.manifest.is_empty() {
        return Ok(outcome);
    }
    let files: Vec<AofInfo> =
        outcome.manifest.base.iter().chain(&outcome.manifest.incrs).cloned().collect();
    let mut total = 0u64;
    for info in &files {
        total += file_size(&aof_dir, &info.name)?;
    }
    if total == 0 {
        outcome.status = AofStatus::Empty;
        return Ok(outcome);
    }
    let mut ctx = FileLoad { opts, load_rdb, exec, commands: 0, appendfilename };
    let mut status = AofStatus::Ok;
    for (i, info) in files.iter().enumerate() {
        let last = i + 1 == files.len();
        let started = Instant::now();
        file_start();
        status = ctx.load_file(&aof_dir, &info.name, last)?;
        let kind = if info.kind == AofFileType::Base { "base" } else { "incr" };
        if matches!(status, AofStatus::Ok | AofStatus::Truncated) {
            tracing::info!(
                "DB loaded from {kind} file {}: {:.3} seconds",
                info.name.to_string_lossy(),
                started.elapsed().as_secs_f64()
            );
        }
        if info.kind == AofFileType::Incr && status == AofStatus::Empty {
            status = AofStatus::Ok;
        }
    }
    outcome.status = status;
    outcome.commands = ctx.commands;
    for info in &files {
        let size = file_size(&aof_dir, &info.name)?;
        outcome.total_size += size;
        if info.kind == AofFileType::Base {
            outcome.base_size = size;
        }
    }
    Ok(outcome)
}

/// Whether an old single-file AOF (`<dir>/<appendfilename>`, Redis before 7) must be moved
/// into the AOF directory before loading (see the module documentation for the rule).
pub fn needs_upgrade(
    dir: &Path,
    aof_dir: &Path,
    appendfilename: &str,
    manifest: &Manifest,
) -> bool {
    if !dir.join(appendfilename).is_file() {
        return false;
    }
    if !aof_dir.is_dir() || manifest.is_empty() {
        return true;
    }
    let base_is_old_file = manifest.base.as_ref().is_some_and(|b| b.name == *appendfilename);
    manifest.incrs.is_empty() && base_is_old_file && !aof_dir.join(appendfilename).is_file()
}

/// Moves `<dir>/<appendfilename>` into `<dir>/<appenddirname>` as the base (seq 1), writing
/// the manifest first, as Valkey does. The error is Valkey's log line for the failed step.
pub fn upgrade(
    dir: &Path,
    appenddirname: &str,
    appendfilename: &str,
    manifest: &mut Manifest,
) -> Result<(), String> {
    let aof_dir = dir.join(appenddirname);
    if let Err(e) = fs::create_dir(&aof_dir) {
        if e.kind() != io::ErrorKind::AlreadyExists {
            return Err(format!(
                "Can't open or create append-only dir {appenddirname}: {}",
                strerror(&e)
            ));
        }
    }
    manifest.base = Some(AofInfo { name: appendfilename.into(), seq: 1, kind: AofFileType::Base });
    manifest.curr_base_seq = 1;
    manifest.persist(&aof_dir, appendfilename)?;
    fs::rename(dir.join(appendfilename), aof_dir.join(appendfilename)).map_err(|e| {
        format!(
            "Error trying to move the old AOF file {appendfilename} into dir {appenddirname}: {}",
            strerror(&e)
        )
    })?;
    tracing::info!(
        "Successfully migrated an old-style AOF file ({appendfilename}) into the AOF directory ({appenddirname})."
    );
    Ok(())
}

/// A listed file's size; missing or unreadable is fatal before anything loads.
fn file_size(aof_dir: &Path, name: &OsStr) -> Result<u64, LoadError> {
    fs::metadata(aof_dir.join(name)).map(|m| m.len()).map_err(|e| {
        let status = if e.kind() == io::ErrorKind::NotFound {
            AofStatus::Failed
        } else {
            AofStatus::OpenErr
        };
        let message = format!(
            "Unable to obtain the AOF file {} length. stat: {}",
            name.to_string_lossy(),
            strerror(&e)
        );
        LoadError { status, message }
    })
}

/// Counts what an RDB loader reads, to know where the commands after it start.
struct CountingReader<'r, R: Read> {
    inner: &'r mut R,
    read: u64,
}

impl<R: Read> Read for CountingReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// The state shared by the files of one load.
struct FileLoad<'c, 'r, 'e> {
    opts: LoadOpts,
    load_rdb: &'c mut LoadRdb<'r>,
    exec: &'c mut Exec<'e>,
    commands: u64,
    appendfilename: &'c str,
}

/// Where the replay of one file stopped.
enum Stop {
    /// A clean end between commands.
    End,
    /// The commands are not whole; the offset is where they last were.
    Truncated { valid_up_to: u64 },
}

impl FileLoad<'_, '_, '_> {
    /// Replays one file; `Ok` carries `Ok`, `Empty` or `Truncated`.
    fn load_file(
        &mut self,
        aof_dir: &Path,
        name: &OsStr,
        last: bool,
    ) -> Result<AofStatus, LoadError> {
        let shown = name.to_string_lossy();
        let path = aof_dir.join(name);
        let file = File::open(&path).map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                LoadError::failed(format!(
                    "The append log file {shown} doesn't exist: {}",
                    strerror(&e)
                ))
            } else {
                LoadError {
                    status: AofStatus::OpenErr,
                    message: format!(
                        "Fatal error: can't open the append log file {shown} for reading: {}",
                        strerror(&e)
                    ),
                }
            }
        })?;
        let file_len = file.metadata().map_err(|e| self.read_error(&shown, &e))?.len();
        if file_len == 0 {
            return Ok(AofStatus::Empty);
        }
        let mut input = BufReader::with_capacity(READ_BUF_BYTES, file);
        let start = self.read_preamble(&mut input, &shown, name == self.appendfilename)?;
        let mut reader = CommandReader::new(&mut input, start, Some(file_len), self.opts.limits);
        let stop = self.replay(&mut reader, &shown)?;
        let trim_at = reader.partial_annotation_at();
        drop(reader);
        match stop {
            Stop::End => {
                if let (true, Some(at)) = (last, trim_at) {
                    tracing::warn!("Trimming a cut annotation line at the end of the AOF {shown} at offset {at}");
                    truncate_file(&path, at).map_err(|e| self.truncate_error(&shown, &e))?;
                }
                Ok(AofStatus::Ok)
            }
            Stop::Truncated { valid_up_to } => self.truncated(&path, &shown, valid_up_to, last),
        }
    }

    /// Loads an RDB at the start of the file, if there is one; returns where commands start.
    fn read_preamble(
        &mut self,
        input: &mut BufReader<File>,
        shown: &str,
        old_style: bool,
    ) -> Result<u64, LoadError> {
        let mut sig = Vec::with_capacity(6);
        let is_rdb = match input.by_ref().take(6).read_to_end(&mut sig) {
            Ok(_) => crate::persist::rdb::file::starts_rdb(&sig),
            Err(e) => return Err(self.read_error(shown, &e)),
        };
        input.seek(SeekFrom::Start(0)).map_err(|e| self.read_error(shown, &e))?;
        if !is_rdb {
            return Ok(0);
        }
        if old_style {
            tracing::info!("Reading RDB preamble from AOF file...");
        } else {
            tracing::info!("Reading RDB base file on AOF loading...");
        }
        let mut counting = CountingReader { inner: input, read: 0 };
        if let Err(why) = (self.load_rdb)(&mut counting) {
            tracing::warn!("{why}");
            return Err(LoadError::failed(if old_style {
                format!(
                    "Error reading the RDB preamble of the AOF file {shown}, AOF loading aborted"
                )
            } else {
                format!("Error reading the RDB base file {shown}, AOF loading aborted")
            }));
        }
        if old_style {
            tracing::info!("Reading the remaining AOF tail...");
        }
        Ok(counting.read)
    }

    /// Feeds the commands to `exec` until the stream stops. A transaction is held back from
    /// `MULTI` to `EXEC` (Valkey's AOF client queues it the same way), so the commands of one
    /// whose `EXEC` never comes are never run.
    fn replay<R: io::BufRead>(
        &mut self,
        reader: &mut CommandReader<R>,
        shown: &str,
    ) -> Result<Stop, LoadError> {
        let mut valid_up_to = reader.position();
        // While a transaction is open: the offset before its MULTI, and its queued commands.
        let mut open: Option<(u64, Vec<Vec<Bytes>>)> = None;
        loop {
            let argv = match reader.next_command() {
                Ok(Some(argv)) => argv,
                Ok(None) => break,
                Err(ReadError::Truncated) => {
                    let at = open.map_or(valid_up_to, |(at, _)| at);
                    return Ok(Stop::Truncated { valid_up_to: at });
                }
                Err(ReadError::BadFormat(why)) => {
                    tracing::warn!("AOF {shown}: {why} at offset {}", reader.position());
                    return Err(LoadError::failed(format!(
                        "Bad file format reading the append only file {shown}: make a backup of your AOF file, then use ./valkey-check-aof --fix <filename.manifest>"
                    )));
                }
                Err(ReadError::Io(e)) => return Err(self.read_error(shown, &e)),
            };
            let is_exec = argv[0].eq_ignore_ascii_case(b"exec");
            match open.as_mut() {
                Some((_, queued)) if !is_exec => queued.push(argv),
                Some(_) => {
                    let (_, queued) = open.take().expect("matched Some");
                    for queued_argv in queued {
                        self.run(queued_argv, shown)?;
                    }
                    self.run(argv, shown)?;
                }
                None => {
                    let is_multi = argv[0].eq_ignore_ascii_case(b"multi");
                    self.run(argv, shown)?;
                    if is_multi {
                        open = Some((valid_up_to, Vec::new()));
                    }
                }
            }
            valid_up_to = reader.position();
        }
        match open {
            None => Ok(Stop::End),
            Some((at, _)) => {
                tracing::warn!("Revert incomplete MULTI/EXEC transaction in AOF file {shown}");
                Ok(Stop::Truncated { valid_up_to: at })
            }
        }
    }

    /// Passes one command to `exec`.
    fn run(&mut self, argv: Vec<Bytes>, shown: &str) -> Result<(), LoadError> {
        let name = argv[0].clone();
        match (self.exec)(argv) {
            Ok(()) => {
                self.commands += 1;
                Ok(())
            }
            Err(ExecError::UnknownCommand) => Err(LoadError::failed(format!(
                "Unknown command '{}' reading the append only file {shown}",
                String::from_utf8_lossy(&name)
            ))),
            Err(ExecError::Fatal(message)) => Err(LoadError::failed(message)),
        }
    }

    /// Valkey's "unexpected end of file" handling.
    fn truncated(
        &self,
        path: &Path,
        shown: &str,
        valid_up_to: u64,
        last: bool,
    ) -> Result<AofStatus, LoadError> {
        if self.opts.load_truncated {
            tracing::warn!("!!! Warning: short read while loading the AOF file {shown}!!!");
            if !last {
                return Err(LoadError::failed(
                    "Fatal error: the truncated file is not the last file".to_string(),
                ));
            }
            tracing::warn!("!!! Truncating the AOF {shown} at offset {valid_up_to} !!!");
            match truncate_file(path, valid_up_to) {
                Ok(()) => {
                    tracing::warn!(
                        "AOF {shown} loaded anyway because aof-load-truncated is enabled"
                    );
                    return Ok(AofStatus::Truncated);
                }
                Err(e) => tracing::warn!("Error truncating the AOF file {shown}: {}", strerror(&e)),
            }
        }
        Err(LoadError::failed(format!(
            "Unexpected end of file reading the append only file {shown}. You can: 1) Make a backup of your AOF file, then use ./valkey-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server."
        )))
    }

    fn read_error(&self, shown: &str, e: &io::Error) -> LoadError {
        LoadError::failed(format!(
            "Unrecoverable error reading the append only file {shown}: {}",
            strerror(e)
        ))
    }

    fn truncate_error(&self, shown: &str, e: &io::Error) -> LoadError {
        LoadError::failed(format!("Error truncating the AOF file {shown}: {}", strerror(e)))
    }
}

/// Cuts a file to `len` bytes and makes the new size durable.
fn truncate_file(path: &Path, len: u64) -> io::Result<()> {
    let file = OpenOptions::new().write(true).open(path)?;
    file.set_len(len)?;
    file.sync_all()
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
