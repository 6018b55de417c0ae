//! The sync thread's reader over the primary's socket: blocking, with a read-ahead buffer.
//! The handshake reads reply lines from it, the full sync reads the snapshot's bytes (to a
//! file, or through [`Read`] into the RDB loader), and what it read past them is the start
//! of the stream, handed to the event loop with the socket.

use std::io::{self, Read, Write};
use std::net::TcpStream;

/// Bytes asked of the socket per read.
const CHUNK_BYTES: usize = 64 * 1024;

/// A blocking reader over the primary's socket that keeps what it read ahead: `buf[pos..]`.
pub struct Wire {
    pub s: TcpStream,
    pub buf: Vec<u8>,
    pub pos: usize,
}

impl Wire {
    pub fn new(s: TcpStream) -> Wire {
        Wire { s, buf: Vec::new(), pos: 0 }
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
