//! The AOF manifest: the small text file that lists the files of a multi-part AOF directory,
//! in Valkey's format, byte for byte, so Valkey (7.0+) and ferrokey read each other's.
//!
//! Owns: the manifest model ([`Manifest`], [`AofInfo`]), its text form (parse and write), the
//! file-name rules (`<appendfilename>.<seq>.base.rdb`, `.incr.aof`, `.manifest`, temp names)
//! and the crash-safe write (temp file, fsync, rename, fsync of the directory). It never opens
//! an AOF data file and holds no server state.
//!
//! # Format
//!
//! One line per file, `\n`-terminated, base first, then history, then incrs:
//!
//! ```text
//! file appendonly.aof.2.base.rdb seq 2 type b
//! file appendonly.aof.1.incr.aof seq 1 type h
//! file appendonly.aof.2.incr.aof seq 2 type i
//! ```
//!
//! Reading follows Valkey's rules: the file is read in chunks of at most 1024 bytes ending at a
//! newline (a chunk without one is "too long", which includes a last line with no newline); a
//! chunk starting with `#` is a comment; a blank line is an error; each line is split like
//! `sdssplitargs` (double quotes with `\n \r \t \b \a \\ \" \xHH` escapes, single quotes with
//! `\'`); keys come in pairs in any order, case-insensitive, unknown keys are ignored (forward
//! compatibility), at least six words; `seq` is read like C's `atoll`; `type` is the first byte
//! of its value. A name that needs quoting (spaces, quotes, backslashes, control or non-ASCII
//! bytes) is written quoted with `sdscatrepr`'s escapes.

use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use crate::util::quote::{is_c_space, needs_repr, repr, split_args};
use crate::util::strerror;

/// Valkey's `MANIFEST_MAX_LINE`: the longest manifest line read, newline included.
pub const MANIFEST_LINE_BYTES_MAX: usize = 1024;

/// What a file of the AOF directory holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AofFileType {
    /// `b`: the snapshot written by the last rewrite (an RDB file or a command log).
    Base,
    /// `h`: a base or incr made obsolete by a rewrite, waiting to be deleted.
    History,
    /// `i`: commands written since the base, replayed in order after it.
    Incr,
}

impl AofFileType {
    pub fn as_byte(self) -> u8 {
        match self {
            AofFileType::Base => b'b',
            AofFileType::History => b'h',
            AofFileType::Incr => b'i',
        }
    }

    fn from_byte(b: u8) -> Option<AofFileType> {
        match b {
            b'b' => Some(AofFileType::Base),
            b'h' => Some(AofFileType::History),
            b'i' => Some(AofFileType::Incr),
            _ => None,
        }
    }
}

/// One line of the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AofInfo {
    /// A bare file name (no `/` or `\`), relative to the AOF directory.
    pub name: OsString,
    pub seq: i64,
    pub kind: AofFileType,
}

impl AofInfo {
    fn new(name: String, seq: i64, kind: AofFileType) -> AofInfo {
        AofInfo { name: name.into(), seq, kind }
    }
}

/// The manifest in memory (Valkey's `aofManifest`, without its `dirty` flag: callers persist
/// after each change they make).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    pub base: Option<AofInfo>,
    /// In replay order; sequence numbers strictly increase.
    pub incrs: Vec<AofInfo>,
    pub history: Vec<AofInfo>,
    /// The sequence number of the current base (0 before the first one).
    pub curr_base_seq: i64,
    /// The sequence number of the last incr (0 before the first one).
    pub curr_incr_seq: i64,
}

/// A manifest Valkey would refuse, with the line it refused (when there is one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestError {
    /// Valkey's text: `Invalid AOF manifest file format`, `Found duplicate base file
    /// information`, ...
    pub reason: String,
    /// 1-based line number and the line (trimmed), as Valkey reports them.
    pub line: Option<(usize, String)>,
}

impl ManifestError {
    fn bare(reason: &str) -> ManifestError {
        ManifestError { reason: reason.to_string(), line: None }
    }

    /// Logs the lines Valkey writes before the reason: the banner and, when there is one,
    /// the line refused. The caller then logs `reason` (the [`fmt::Display`] form) and exits.
    pub fn log_context(&self) {
        tracing::warn!("\n*** FATAL AOF MANIFEST FILE ERROR ***\n");
        if let Some((n, text)) = &self.line {
            tracing::warn!("Reading the manifest file, at line {n}\n");
            tracing::warn!(">>> '{text}'\n");
        }
    }
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

// ---------------------------------------------------------------------------------------------
// File names
// ---------------------------------------------------------------------------------------------

/// `<appendfilename>.<seq>.base.rdb` (RDB preamble) or `<appendfilename>.<seq>.base.aof`.
pub fn base_name(appendfilename: &str, seq: i64, rdb: bool) -> String {
    let format = if rdb { "rdb" } else { "aof" };
    format!("{appendfilename}.{seq}.base.{format}")
}

/// `<appendfilename>.<seq>.incr.aof`.
pub fn incr_name(appendfilename: &str, seq: i64) -> String {
    format!("{appendfilename}.{seq}.incr.aof")
}

/// `<appendfilename>.manifest`.
pub fn manifest_name(appendfilename: &str) -> String {
    format!("{appendfilename}.manifest")
}

/// `temp-<appendfilename>.manifest`: written first, then renamed over the manifest.
pub fn temp_manifest_name(appendfilename: &str) -> String {
    format!("temp-{appendfilename}.manifest")
}

/// `temp-<appendfilename>.incr`: the incr file that collects writes while `appendonly` was
/// just switched on and the first rewrite runs; renamed to the next incr name when it ends.
pub fn temp_incr_name(appendfilename: &str) -> String {
    format!("temp-{appendfilename}.incr")
}

/// `temp-rewriteaof-<pid>.aof`: the file a rewrite child writes (in `dir`, not in the AOF
/// directory), `pid` being the child's own.
pub fn temp_rewrite_name(child_pid: i32) -> String {
    format!("temp-rewriteaof-{child_pid}.aof")
}

/// `temp-rewriteaof-bg-<pid>.aof`: the name a background rewrite child gives its finished
/// file (in `dir`); the parent then renames it into the AOF directory as the new base.
pub fn temp_rewrite_bg_name(child_pid: i32) -> String {
    format!("temp-rewriteaof-bg-{child_pid}.aof")
}

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

impl Manifest {
    /// Parses a manifest's bytes with Valkey's rules and error texts.
    pub fn parse(text: &[u8]) -> Result<Manifest, ManifestError> {
        let mut m = Manifest::default();
        let mut incr_seq_max = 0i64;
        let mut line_no = 0usize;
        let mut rest = text;
        while !rest.is_empty() {
            let take = chunk_len(rest);
            let chunk = &rest[..take];
            rest = &rest[take..];
            line_no += 1;
            if chunk[0] == b'#' {
                continue;
            }
            let chunk = c_str(chunk);
            if !chunk.contains(&b'\n') {
                return Err(ManifestError::bare("The AOF manifest file contains too long line"));
            }
            let line = trim(chunk);
            let fail = |reason: &str| ManifestError {
                reason: reason.to_string(),
                line: Some((line_no, String::from_utf8_lossy(line).into_owned())),
            };
            let info = parse_line(line).map_err(fail)?;
            match info.kind {
                AofFileType::Base => {
                    if m.base.is_some() {
                        return Err(fail("Found duplicate base file information"));
                    }
                    m.curr_base_seq = info.seq;
                    m.base = Some(info);
                }
                AofFileType::History => m.history.push(info),
                AofFileType::Incr => {
                    if info.seq <= incr_seq_max {
                        return Err(fail("Found a non-monotonic sequence number"));
                    }
                    incr_seq_max = info.seq;
                    m.curr_incr_seq = info.seq;
                    m.incrs.push(info);
                }
            }
        }
        if line_no == 0 {
            return Err(ManifestError::bare("Found an empty AOF manifest"));
        }
        Ok(m)
    }

    /// The manifest's text: base, then history, then incrs.
    pub fn to_text(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let all = self.base.iter().chain(&self.history).chain(&self.incrs);
        for info in all {
            out.extend_from_slice(b"file ");
            let name = info.name.as_bytes();
            if needs_repr(name) {
                out.extend_from_slice(repr(name).as_bytes());
            } else {
                out.extend_from_slice(name);
            }
            out.extend_from_slice(format!(" seq {} type ", info.seq).as_bytes());
            out.push(info.kind.as_byte());
            out.push(b'\n');
        }
        out
    }

    /// True when the manifest lists no base and no incr (nothing to load).
    pub fn is_empty(&self) -> bool {
        self.base.is_none() && self.incrs.is_empty()
    }

    /// A new base after the current one (the end of a rewrite, or the first base of an empty
    /// directory): the old base, if any, becomes history (at the head of the history list),
    /// and the new one takes the next base sequence number.
    pub fn next_base(&mut self, appendfilename: &str, rdb: bool) -> &AofInfo {
        if let Some(mut old) = self.base.take() {
            old.kind = AofFileType::History;
            self.history.insert(0, old);
        }
        self.curr_base_seq += 1;
        let name = base_name(appendfilename, self.curr_base_seq, rdb);
        self.base.insert(AofInfo::new(name, self.curr_base_seq, AofFileType::Base))
    }

    /// A new incr file at the end of the list, with the next incr sequence number.
    pub fn next_incr(&mut self, appendfilename: &str) -> &AofInfo {
        self.curr_incr_seq += 1;
        let name = incr_name(appendfilename, self.curr_incr_seq);
        self.incrs.push(AofInfo::new(name, self.curr_incr_seq, AofFileType::Incr));
        self.incrs.last().expect("just pushed")
    }

    /// The incr file to append to: the last one, or a new one when there is none (what
    /// Valkey opens at start-up).
    pub fn last_incr_or_new(&mut self, appendfilename: &str) -> &AofInfo {
        if self.incrs.is_empty() {
            return self.next_incr(appendfilename);
        }
        self.incrs.last().expect("not empty")
    }

    /// Turns the incr files a finished rewrite covers into history. With `keep_last` (the AOF
    /// is on, so the last incr is the one being written and postdates the rewrite's fork) the
    /// last incr stays. Each moved file goes to the head of the history list, last first,
    /// which leaves them in sequence order ahead of the older history.
    pub fn mark_incrs_as_history(&mut self, keep_last: bool) {
        let keep = usize::from(keep_last).min(self.incrs.len());
        let moved: Vec<AofInfo> = self.incrs.drain(..self.incrs.len() - keep).collect();
        for mut info in moved.into_iter().rev() {
            info.kind = AofFileType::History;
            self.history.insert(0, info);
        }
    }

    /// The end of a successful rewrite while the AOF is on: a new base (the old one turns
    /// history) and every incr but the one being written turned history. Valkey's order is
    /// `next_base`, then (only when `appendonly` was just switched on) `next_incr` for the
    /// renamed temp incr, then `mark_incrs_as_history`; call those three yourself for that case.
    pub fn mark_rewritten(&mut self, appendfilename: &str, rdb: bool) -> AofInfo {
        let base = self.next_base(appendfilename, rdb).clone();
        self.mark_incrs_as_history(true);
        base
    }

    /// Empties the history list and returns it: the files to delete (Valkey removes them in
    /// the background, logging `Removing the history file <name> in the background`, then
    /// persists the manifest). Nothing when `aof-disable-auto-gc` is yes: don't call it then.
    pub fn take_history(&mut self) -> Vec<AofInfo> {
        std::mem::take(&mut self.history)
    }

    /// Reads `<aof_dir>/<appendfilename>.manifest`. `Ok(None)` when the directory or the
    /// manifest does not exist (a fresh start, or an old single-file AOF to upgrade).
    pub fn load(aof_dir: &Path, appendfilename: &str) -> Result<Option<Manifest>, ManifestError> {
        if !aof_dir.is_dir() {
            tracing::debug!("The AOF directory {} doesn't exist", aof_dir.display());
            return Ok(None);
        }
        let name = manifest_name(appendfilename);
        let path = aof_dir.join(&name);
        if !path.is_file() {
            tracing::debug!("The AOF manifest file {name} doesn't exist");
            return Ok(None);
        }
        let mut text = Vec::new();
        let mut file = File::open(&path).map_err(|e| {
            ManifestError::bare(&format!(
                "Fatal error: can't open the AOF manifest file {} for reading: {}",
                path.display(),
                strerror(&e)
            ))
        })?;
        file.read_to_end(&mut text).map_err(|_| ManifestError::bare("Read AOF manifest failed"))?;
        Manifest::parse(&text).map(Some)
    }

    /// Writes the manifest crash-safely into `aof_dir`: `temp-<appendfilename>.manifest`,
    /// fsync, rename over `<appendfilename>.manifest`, fsync of the directory. The error is
    /// Valkey's log line for the step that failed (log it; the old manifest is still whole).
    pub fn persist(&self, aof_dir: &Path, appendfilename: &str) -> Result<(), String> {
        let name = manifest_name(appendfilename);
        let tmp_name = temp_manifest_name(appendfilename);
        let path = aof_dir.join(&name);
        let tmp_path = aof_dir.join(&tmp_name);
        let os = strerror;
        let mut file =
            OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&tmp_path)
                .map_err(|e| format!("Can't open the AOF manifest file {tmp_name}: {}", os(&e)))?;
        file.write_all(&self.to_text()).map_err(|e| {
            format!("Error trying to write the temporary AOF manifest file {tmp_name}: {}", os(&e))
        })?;
        file.sync_all()
            .map_err(|e| format!("Fail to fsync the temp AOF file {tmp_name}: {}.", os(&e)))?;
        drop(file);
        fs::rename(&tmp_path, &path).map_err(|e| {
            format!(
                "Error trying to rename the temporary AOF manifest file {tmp_name} into {name}: {}",
                os(&e)
            )
        })?;
        sync_dir(aof_dir)
            .map_err(|e| format!("Fail to fsync AOF directory {}: {}.", path.display(), os(&e)))
    }
}

/// fsyncs a directory, so that a rename or a new file in it survives a crash.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

// ---------------------------------------------------------------------------------------------
// Line parsing (Valkey's fgets / sdstrim / sdssplitargs / atoll rules)
// ---------------------------------------------------------------------------------------------

/// Length of the next `fgets` chunk: through the first newline, at most 1024 bytes.
fn chunk_len(rest: &[u8]) -> usize {
    let window = &rest[..rest.len().min(MANIFEST_LINE_BYTES_MAX)];
    match window.iter().position(|&b| b == b'\n') {
        Some(i) => i + 1,
        None => window.len(),
    }
}

/// The bytes a C string function would see: up to the first NUL.
fn c_str(bytes: &[u8]) -> &[u8] {
    match bytes.iter().position(|&b| b == 0) {
        Some(i) => &bytes[..i],
        None => bytes,
    }
}

fn trim(mut s: &[u8]) -> &[u8] {
    let strip = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    while s.first().is_some_and(strip) {
        s = &s[1..];
    }
    while s.last().is_some_and(strip) {
        s = &s[..s.len() - 1];
    }
    s
}

/// One trimmed, non-comment line into an entry, or Valkey's reason for refusing it.
fn parse_line(line: &[u8]) -> Result<AofInfo, &'static str> {
    const INVALID: &str = "Invalid AOF manifest file format";
    if line.is_empty() {
        return Err(INVALID);
    }
    let words = split_args(line).ok_or(INVALID)?;
    if words.len() < 6 || words.len() % 2 != 0 {
        return Err(INVALID);
    }
    let (mut name, mut seq, mut kind) = (None, 0i64, 0u8);
    for pair in words.chunks_exact(2) {
        let (key, value) = (c_str(&pair[0]), c_str(&pair[1]));
        if key.eq_ignore_ascii_case(b"file") {
            if value.contains(&b'/') || value.contains(&b'\\') {
                return Err("File can't be a path, just a filename");
            }
            name = Some(value.to_vec());
        } else if key.eq_ignore_ascii_case(b"seq") {
            seq = atoll(value);
        } else if key.eq_ignore_ascii_case(b"type") {
            kind = value.first().copied().unwrap_or(0);
        }
    }
    let (Some(name), true, true) = (name, seq != 0, kind != 0) else {
        return Err(INVALID);
    };
    let kind = AofFileType::from_byte(kind).ok_or("Unknown AOF file type")?;
    Ok(AofInfo { name: OsString::from_vec(name), seq, kind })
}

/// C's `atoll` (as glibc's `strtoll`): leading white space, a sign, digits up to the first
/// non-digit; saturates on overflow; 0 when there are no digits.
fn atoll(s: &[u8]) -> i64 {
    let mut i = 0;
    while i < s.len() && is_c_space(s[i]) {
        i += 1;
    }
    let negative = s.get(i) == Some(&b'-');
    if matches!(s.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let mut n: i64 = 0;
    while let Some(d) = s.get(i).filter(|b| b.is_ascii_digit()) {
        let d = i64::from(d - b'0');
        n = if negative {
            n.saturating_mul(10).saturating_sub(d)
        } else {
            n.saturating_mul(10).saturating_add(d)
        };
        i += 1;
    }
    n
}

#[cfg(test)]
#[path = "manifest_tests.rs"]
mod tests;
