//! Reads the command stream of an AOF file: RESP arrays of bulk strings, one per command,
//! with Valkey's `#` annotation lines (`#TS:<unix-time>\r\n`) between them.
//!
//! Owns: framing, limits and the three ways a stream can end (see [`ReadError`]). It knows
//! nothing of commands, MULTI, files or truncation: [`super::load`] does that.
//!
//! ```text
//!   #TS:1700000000\r\n                   annotation: skipped (at most 1024 bytes)
//!   *3\r\n                               argc >= 1, at most ReadLimits::argc_max
//!   $3\r\nSET\r\n                        bulk: length, bytes, CRLF
//!   $1\r\nk\r\n                          (length at most ReadLimits::bulk_len_max)
//!   $1\r\nv\r\n                          <- position() after this: end of the command
//! ```
//!
//! Where Valkey's reader is looser than this one (it reads counts with `atoi`/`strtol`,
//! accepting trailing junk, and never checks the two bytes after a bulk), a file Valkey would
//! load without complaint but that is not well formed is reported as [`ReadError::BadFormat`]:
//! such bytes only come from corruption, and loading around them would replay garbage.
//!
//! Memory is bounded before anything is allocated: counts and lengths are checked against
//! [`ReadLimits`], the argument vector grows as arguments actually arrive, and a bulk is only
//! reserved in full when the input is known to hold it (`input_len`); otherwise it grows as
//! bytes arrive, so a corrupt length on a short file never allocates its claimed size.

use std::io::{self, BufRead};

use bytes::Bytes;

/// Valkey's `AOF_ANNOTATION_LINE_MAX_LEN`: the longest annotation line, newline included.
pub const ANNOTATION_LINE_BYTES_MAX: usize = 1024;

/// The longest `*<argc>` or `$<len>` line accepted: a 20-digit count and its CRLF fit.
const HEADER_LINE_BYTES_MAX: usize = 32;

/// A bulk is reserved in full up to this size even when the input's length is unknown.
const BULK_RESERVE_BYTES_MAX: usize = 1 << 20;

/// Bounds on what one command may claim, checked before allocating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    /// Arguments per command (Valkey's protocol limit for clients is `INT_MAX`).
    pub argc_max: u64,
    /// Bytes per argument: pass `proto-max-bulk-len` (at least 512 MiB is safest, as values
    /// written under a larger earlier setting must still load).
    pub bulk_len_max: u64,
}

impl Default for ReadLimits {
    fn default() -> ReadLimits {
        ReadLimits { argc_max: i32::MAX as u64, bulk_len_max: 512 << 20 }
    }
}

/// Why the stream stopped somewhere other than a clean end between commands.
#[derive(Debug)]
pub enum ReadError {
    /// The input ended inside a command (Valkey's "unexpected end of file"): what came before
    /// the command is whole, so `aof-load-truncated` may cut the file back to it.
    Truncated,
    /// Bytes that are not the format (Valkey's "bad file format"); the reason is for logs.
    BadFormat(&'static str),
    /// The operating system failed to read.
    Io(io::Error),
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> ReadError {
        ReadError::Io(e)
    }
}

/// How a bounded line read ended.
enum Line {
    /// A whole line, newline included, is in `self.line`.
    Complete,
    /// The input ended first; `self.line` holds what there was (maybe nothing).
    Eof,
    /// No newline within the bound.
    TooLong,
}

/// Reads commands one at a time from `R`, keeping the byte offset of what it consumed.
pub struct CommandReader<R: BufRead> {
    input: R,
    /// Offset of the next unread byte (the start offset plus what was consumed).
    pos: u64,
    /// Total length of the input (offset of its end), when known.
    input_len: Option<u64>,
    limits: ReadLimits,
    line: Vec<u8>,
    /// Where an annotation line cut by the end of the input starts.
    partial_annotation_at: Option<u64>,
}

impl<R: BufRead> CommandReader<R> {
    /// `start_offset` is the offset of the input's first byte in its file (non-zero after an
    /// RDB preamble); `input_len`, when known, is the file's length (an offset, not a count).
    pub fn new(input: R, start_offset: u64, input_len: Option<u64>, limits: ReadLimits) -> Self {
        CommandReader {
            input,
            pos: start_offset,
            input_len,
            limits,
            line: Vec::with_capacity(64),
            partial_annotation_at: None,
        }
    }

    /// Offset just past what was consumed: after `Ok(Some(_))`, the end of that command.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// After `Ok(None)`: where an annotation line cut short by the end of the input starts.
    /// Valkey ignores such a line and ends cleanly; an append after it would glue the next
    /// command onto the annotation, so the loader trims it from the file it appends to.
    pub fn partial_annotation_at(&self) -> Option<u64> {
        self.partial_annotation_at
    }

    /// The next command's arguments, `Ok(None)` at a clean end of the input (between
    /// commands), or why the stream is not whole. The arguments share one buffer.
    pub fn next_command(&mut self) -> Result<Option<Vec<Bytes>>, ReadError> {
        let argc = loop {
            let start = self.pos;
            let ended = self.read_line(ANNOTATION_LINE_BYTES_MAX)?;
            match (ended, self.line.first()) {
                (Line::Eof, None) => return Ok(None),
                (Line::Eof, Some(b'#')) => {
                    self.partial_annotation_at = Some(start);
                    return Ok(None);
                }
                (Line::Eof, Some(_)) => return Err(partial_header(&self.line, b'*')),
                (Line::TooLong, _) => return Err(ReadError::BadFormat("line too long")),
                (Line::Complete, Some(b'#')) => continue,
                (Line::Complete, Some(b'*')) => break count(&self.line[1..])?,
                (Line::Complete, _) => return Err(ReadError::BadFormat("expected '*'")),
            }
        };
        if argc == 0 {
            return Err(ReadError::BadFormat("argument count below 1"));
        }
        if argc > self.limits.argc_max {
            return Err(ReadError::BadFormat("argument count over the limit"));
        }
        let mut spans: Vec<(usize, usize)> = Vec::with_capacity(argc.min(1024) as usize);
        let mut data: Vec<u8> = Vec::with_capacity(64);
        for _ in 0..argc {
            let len = self.bulk_len()?;
            let start = data.len();
            self.read_bulk(&mut data, len)?;
            spans.push((start, data.len()));
        }
        let buf = Bytes::from(data);
        Ok(Some(spans.into_iter().map(|(s, e)| buf.slice(s..e)).collect()))
    }

    /// Reads a `$<len>` line and checks the length.
    fn bulk_len(&mut self) -> Result<u64, ReadError> {
        match self.read_line(HEADER_LINE_BYTES_MAX)? {
            Line::Eof => Err(partial_header(&self.line, b'$')),
            Line::TooLong => Err(ReadError::BadFormat("bulk length line too long")),
            Line::Complete if self.line[0] != b'$' => Err(ReadError::BadFormat("expected '$'")),
            Line::Complete => {
                let len = count(&self.line[1..])?;
                if len > self.limits.bulk_len_max {
                    return Err(ReadError::BadFormat("bulk length over the limit"));
                }
                Ok(len)
            }
        }
    }

    /// Appends `len` bytes to `data`, then checks and consumes the CRLF that follows.
    fn read_bulk(&mut self, data: &mut Vec<u8>, len: u64) -> Result<(), ReadError> {
        let fits = self.input_len.is_some_and(|end| self.pos.saturating_add(len) <= end);
        if !fits && self.input_len.is_some() {
            // The input ends inside this bulk: the same verdict reading would reach.
            return Err(ReadError::Truncated);
        }
        let reserve = if fits { len } else { len.min(BULK_RESERVE_BYTES_MAX as u64) };
        data.reserve(reserve as usize);
        let mut left = len;
        while left > 0 {
            let avail = fill(&mut self.input)?;
            if avail.is_empty() {
                return Err(ReadError::Truncated);
            }
            let n = avail.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            data.extend_from_slice(&avail[..n]);
            self.consume(n);
            left -= n as u64;
        }
        let mut crlf = [0u8; 2];
        let mut got = 0;
        while got < 2 {
            let avail = fill(&mut self.input)?;
            if avail.is_empty() {
                return Err(ReadError::Truncated);
            }
            let n = avail.len().min(2 - got);
            crlf[got..got + n].copy_from_slice(&avail[..n]);
            self.consume(n);
            got += n;
        }
        if &crlf != b"\r\n" {
            return Err(ReadError::BadFormat("bulk not followed by CRLF"));
        }
        Ok(())
    }

    /// Reads into `self.line` through the next newline, at most `max` bytes.
    fn read_line(&mut self, max: usize) -> io::Result<Line> {
        self.line.clear();
        loop {
            let avail = fill(&mut self.input)?;
            if avail.is_empty() {
                return Ok(Line::Eof);
            }
            let window = &avail[..avail.len().min(max - self.line.len())];
            if let Some(i) = window.iter().position(|&b| b == b'\n') {
                self.line.extend_from_slice(&window[..=i]);
                self.consume(i + 1);
                return Ok(Line::Complete);
            }
            let n = window.len();
            self.line.extend_from_slice(window);
            self.consume(n);
            if self.line.len() >= max {
                return Ok(Line::TooLong);
            }
        }
    }

    fn consume(&mut self, n: usize) {
        self.input.consume(n);
        self.pos += n as u64;
    }
}

/// `fill_buf`, retrying on `Interrupted`. (The retry loop only checks; the buffer is then
/// taken from a second call, which returns what the first one filled.)
fn fill<R: BufRead>(input: &mut R) -> io::Result<&[u8]> {
    loop {
        match input.fill_buf() {
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    input.fill_buf()
}

/// The decimal count of a complete `*`/`$` line (prefix already removed): digits, then `\r\n`
/// or `\n`.
fn count(rest: &[u8]) -> Result<u64, ReadError> {
    let digits = rest.strip_suffix(b"\n").unwrap_or(rest);
    let digits = digits.strip_suffix(b"\r").unwrap_or(digits);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(ReadError::BadFormat("invalid count"));
    }
    digits
        .iter()
        .try_fold(0u64, |n, d| n.checked_mul(10)?.checked_add(u64::from(d - b'0')))
        .ok_or(ReadError::BadFormat("count overflows"))
}

/// A header line cut by the end of the input: a prefix of a valid header is a truncated
/// command, anything else was never the format.
fn partial_header(line: &[u8], prefix: u8) -> ReadError {
    let Some((&first, rest)) = line.split_first() else {
        return ReadError::Truncated;
    };
    let rest = rest.strip_suffix(b"\r").unwrap_or(rest);
    if first == prefix && rest.iter().all(u8::is_ascii_digit) {
        ReadError::Truncated
    } else {
        ReadError::BadFormat("garbage at the end of the input")
    }
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;
