//! The sync thread's reader over the primary's socket: blocking, with a read-ahead buffer.
//! The handshake reads reply lines from it, the full sync reads the snapshot's bytes (to a
//! file, or through [`Read`] into the RDB loader), and what it read past them is the start
//! of the stream, handed to the event loop with the socket.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;

/// Bytes asked of the socket per read.
const CHUNK_BYTES: usize = 64 * 1024;

/// How far a full sync's transfer has come: written by the sync thread, read by INFO
/// (`master_sync_total_bytes` and the rest).
#[derive(Debug, Default)]
pub struct Transfer {
    /// The primary announced its snapshot (`$<length>` or `$EOF:`).
    started: AtomicBool,
    /// The snapshot's length; 0 when it is `$EOF:`-framed (unknown until it ends), as
    /// Valkey reports it.
    total: AtomicI64,
    /// Bytes read from the socket since it started.
    read: AtomicI64,
    /// When the socket last gave bytes (Unix ms).
    last_io_ms: AtomicI64,
}

/// A [`Transfer`]'s figures, read together.
#[derive(Debug, Clone, Copy)]
pub struct TransferFigures {
    pub total: i64,
    pub read: i64,
    pub last_io_ms: i64,
}

impl Transfer {
    /// The snapshot is announced: `total` bytes, 0 when unknown.
    pub fn start(&self, total: i64) {
        self.total.store(total, Ordering::Relaxed);
        self.last_io_ms.store(crate::util::clock::now_ms(), Ordering::Relaxed);
        self.started.store(true, Ordering::Release);
    }

    /// The figures, once the transfer started.
    pub fn figures(&self) -> Option<TransferFigures> {
        self.started.load(Ordering::Acquire).then(|| TransferFigures {
            total: self.total.load(Ordering::Relaxed),
            read: self.read.load(Ordering::Relaxed),
            last_io_ms: self.last_io_ms.load(Ordering::Relaxed),
        })
    }

    fn count(&self, n: usize) {
        if self.started.load(Ordering::Relaxed) {
            self.read.fetch_add(n as i64, Ordering::Relaxed);
            self.last_io_ms.store(crate::util::clock::now_ms(), Ordering::Relaxed);
        }
    }
}

/// A blocking reader over the primary's socket that keeps what it read ahead: `buf[pos..]`.
pub struct Wire {
    pub s: TcpStream,
    pub buf: Vec<u8>,
    pub pos: usize,
    transfer: Arc<Transfer>,
}

impl Wire {
    pub fn new(s: TcpStream, transfer: Arc<Transfer>) -> Wire {
        Wire { s, buf: Vec::new(), pos: 0, transfer }
    }

    /// The snapshot is announced (see [`Transfer::start`]); what is buffered counts as read.
    pub fn start_transfer(&self, total: i64) {
        self.transfer.start(total);
        self.transfer.count(self.buf.len() - self.pos);
    }

    /// Reads more from the socket, after what is buffered (dropped first when all used).
    /// The end of the stream is an error: the primary has nothing to close the link for.
    pub fn fill(&mut self) -> io::Result<()> {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        let old = self.buf.len();
        self.buf.resize(old + CHUNK_BYTES, 0);
        let got = self.s.read(&mut self.buf[old..]);
        self.buf.truncate(old + *got.as_ref().unwrap_or(&0));
        self.transfer.count(*got.as_ref().unwrap_or(&0));
        match got? {
            0 => Err(io::ErrorKind::UnexpectedEof.into()),
            _ => Ok(()),
        }
    }

    /// What was read past everything consumed.
    pub fn leftover(&self) -> Vec<u8> {
        self.buf[self.pos..].to_vec()
    }

    /// One line, without its CRLF.
    pub fn line(&mut self) -> io::Result<String> {
        loop {
            if let Some(i) = self.buf[self.pos..].iter().position(|&b| b == b'\n') {
                let l = &self.buf[self.pos..self.pos + i];
                let l = l.strip_suffix(b"\r").unwrap_or(l);
                let text = String::from_utf8_lossy(l).into_owned();
                self.pos += i + 1;
                return Ok(text);
            }
            self.fill()?;
        }
    }

    /// A reply line, skipping the newlines a primary sends to keep the link alive.
    pub fn reply(&mut self) -> io::Result<String> {
        loop {
            let l = self.line()?;
            if !l.is_empty() {
                return Ok(l);
            }
        }
    }

    /// Sends a command and reads its reply line.
    pub fn command(&mut self, args: &[&str]) -> io::Result<String> {
        let mut buf = Vec::new();
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        crate::server::propagate::append_command(&mut buf, &a);
        self.s.write_all(&buf)?;
        self.reply()
    }
}

impl Read for Wire {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.buf.len() {
            match self.fill() {
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                r => r?,
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
