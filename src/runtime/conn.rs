//! A connection: the socket, the query buffer and its parse state. This is the part of a
//! client that can move to an I/O thread; it holds no command state.

use std::io::{self, IoSlice, Read, Write};

use bytes::BytesMut;
use mio::net::{TcpStream, UnixStream};

use crate::resp::parse::Parser;
use crate::resp::reply::Reply;

/// Bytes read per `read(2)` at least (Valkey's PROTO_IOBUF_LEN).
pub const IOBUF_LEN: usize = 16 * 1024;
/// Reads per readable event before yielding to other clients (fairness).
const READS_PER_EVENT_MAX: usize = 16;
/// Bytes written per write attempt before yielding to other clients (fairness, as Valkey's
/// NET_MAX_WRITES_PER_EVENT): a peer that drains as fast as we write (a big GET over the
/// loopback) would otherwise hold the event loop for the whole reply, and so can a single
/// `write(2)` of a huge slice, which the kernel keeps feeding while the peer reads. Measured
/// with benches/bigstring-compare.sh (a 512 MiB GET): 64 KiB made the GET slower than
/// Valkey's by the cost of 8,192 loop turns; unbounded single writes let one call run for
/// most of a second; 256 KiB keeps both near Valkey's.
pub const WRITE_BYTES_PER_ATTEMPT_MAX: usize = 256 * 1024;
/// Slices per `writev(2)`: a reply of many referenced values goes out in steps of this many
/// pieces (buffer runs and values alternate).
const WRITE_SLICES_MAX: usize = 64;

pub enum Sock {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Sock {
    pub fn source(&mut self) -> &mut dyn mio::event::Source {
        match self {
            Sock::Tcp(s) => s,
            Sock::Unix(s) => s,
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.read(buf),
            Sock::Unix(s) => s.read(buf),
        }
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.write(buf),
            Sock::Unix(s) => s.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.write_vectored(bufs),
            Sock::Unix(s) => s.write_vectored(bufs),
        }
    }

    pub fn shutdown(&self) {
        let _ = match self {
            Sock::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
            Sock::Unix(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }
}

/// Outcome of reading what is available.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// Got `n` bytes (maybe 0 when the socket had nothing); `more` when reading stopped at
    /// the fairness cap or the limit before the socket was drained (edge-triggered polling
    /// will not report it again, so the caller must come back).
    Data { n: usize, more: bool },
    /// The peer closed the connection (after any bytes returned earlier).
    Closed(usize),
}

pub struct Conn {
    pub sock: Sock,
    pub qbuf: BytesMut,
    pub parser: Parser,
    /// The last write attempt stopped at [`WRITE_BYTES_PER_ATTEMPT_MAX`] with the socket still
    /// writable: no readiness event will come for it, so the caller retries next turn.
    pub write_yielded: bool,
    /// Reads per readable event (the fairness cap): [`READS_PER_EVENT_MAX`], or more for a
    /// replica's link to its primary, whose stream is applied as fast as it arrives.
    pub reads_per_event: usize,
}

impl Conn {
    pub fn new(sock: Sock) -> Conn {
        Conn {
            sock,
            qbuf: BytesMut::new(),
            parser: Parser::new(),
            write_yielded: false,
            reads_per_event: READS_PER_EVENT_MAX,
        }
    }

    /// Read what the socket has, up to a fairness cap, without letting the query buffer
    /// grow past `limit` bytes (the caller closes the client when it reaches it).
    /// `scratch` is the reading thread's buffer: bytes are read there and appended to the
    /// query buffer, so no per-read zeroing of spare capacity is needed.
    pub fn read_available(&mut self, scratch: &mut [u8], limit: usize) -> io::Result<ReadOutcome> {
        let mut total = 0;
        let hint = self.parser.bytes_needed_hint().min(limit);
        if hint > self.qbuf.capacity() - self.qbuf.len() {
            self.qbuf.reserve(hint);
        }
        for _ in 0..self.reads_per_event {
            if self.qbuf.len() >= limit {
                return Ok(ReadOutcome::Data { n: total, more: true });
            }
            let room = (limit - self.qbuf.len()).min(scratch.len());
            match self.sock.read(&mut scratch[..room]) {
                Ok(0) => return Ok(ReadOutcome::Closed(total)),
                Ok(got) => {
                    self.qbuf.extend_from_slice(&scratch[..got]);
                    total += got;
                    if got < room {
                        // A short read drained the socket: edge-triggered polling reports
                        // whatever arrives next, so no extra read(2) to see EAGAIN.
                        return Ok(ReadOutcome::Data { n: total, more: false });
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Ok(ReadOutcome::Data { n: total, more: false })
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(ReadOutcome::Data { n: total, more: true })
    }

    /// Writes the file sent ahead of the replies (a replica's RDB, with its header) from
    /// where it stands, reading it in chunks of `scratch`; returns bytes written. As
    /// [`Conn::write_pending`], at most [`WRITE_BYTES_PER_ATTEMPT_MAX`] bytes per call.
    pub fn write_preamble(
        &mut self,
        pre: &mut crate::server::state::Preamble,
        scratch: &mut [u8],
    ) -> io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let mut written = 0;
        self.write_yielded = false;
        let header = pre.header.len() as u64;
        while !pre.done() {
            if written >= WRITE_BYTES_PER_ATTEMPT_MAX {
                self.write_yielded = true;
                break;
            }
            let result = if pre.sent < header {
                self.sock.write(&pre.header[pre.sent as usize..])
            } else {
                let at = pre.sent - header;
                let want = ((pre.file_len - at) as usize).min(scratch.len());
                let got = pre.file.read_at(&mut scratch[..want], at)?;
                if got == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                self.sock.write(&scratch[..got])
            };
            match result {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    pre.sent += n as u64;
                    written += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(written)
    }

    /// Write the reply stream from position `sent` on, advancing it; returns bytes written. `Ok` with data left
    /// means the socket is full. At most [`WRITE_BYTES_PER_ATTEMPT_MAX`] bytes per call (see
    /// `write_yielded`). The buffer and any referenced values go out together, in one
    /// `writev(2)` per step.
    pub fn write_pending(&mut self, out: &Reply, sent: &mut usize) -> io::Result<usize> {
        let mut written = 0;
        self.write_yielded = false;
        let mut slices = [IoSlice::new(&[]); WRITE_SLICES_MAX];
        while *sent < out.len() {
            if written >= WRITE_BYTES_PER_ATTEMPT_MAX {
                self.write_yielded = true;
                break;
            }
            let n = out.gather(*sent, WRITE_BYTES_PER_ATTEMPT_MAX, &mut slices);
            // One piece (no referenced value: nearly every reply) goes out by write(2),
            // which costs the kernel less than writev(2) of one piece.
            let result = if n == 1 {
                self.sock.write(&slices[0])
            } else {
                self.sock.write_vectored(&slices[..n])
            };
            match result {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    *sent += n;
                    written += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(written)
    }
}
