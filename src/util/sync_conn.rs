//! Blocking outgoing connections that the server opens itself (MIGRATE's to its target), and
//! the bounded cache that keeps them between commands.
//!
//! [`SyncConn`] connects, writes and reads reply lines, each step bounded by a timeout, as
//! Valkey's `syncWrite` and `syncReadLine` do: the calling thread blocks, and when it is the
//! event loop's that is the design (MIGRATE is synchronous in Valkey too). It knows RESP only
//! as far as a command array and a reply line go, and nothing of the keyspace or commands.
//!
//! [`ConnCache`] keeps at most [`CACHE_ITEMS`] idle connections by `host:port` name, each
//! with the database its last `SELECT` chose, and closes those idle for
//! [`CACHE_IDLE_MS`] when the time events ask ([`ConnCache::close_idle`]), as Valkey's
//! `migrate_cached_sockets`.

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Longest reply line kept (Valkey reads target replies into 1024-byte buffers); the rest of
/// a longer line is read and dropped.
pub const LINE_BYTES_MAX: usize = 1023;

/// Bytes written per timed write (Valkey writes MIGRATE's buffer in 64 KiB steps, each with
/// the full timeout).
const WRITE_CHUNK_BYTES: usize = 64 * 1024;

/// A connection that blocks its caller, with a timeout on every step.
pub struct SyncConn {
    stream: TcpStream,
    /// Bytes read ahead of the current line: `rbuf[rpos..]`.
    rbuf: Vec<u8>,
    rpos: usize,
}

/// Whether an I/O error is a timeout (Valkey's `ETIMEDOUT`: MIGRATE does not retry then).
pub fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock)
}

fn timed_out() -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, "timed out")
}

/// What is left of `timeout` since `start`, or a timeout error.
fn left(start: Instant, timeout: Duration) -> io::Result<Duration> {
    match timeout.checked_sub(start.elapsed()) {
        Some(d) if !d.is_zero() => Ok(d),
        _ => Err(timed_out()),
    }
}

impl SyncConn {
    /// Connects to `host:port` (a name is resolved; each address is tried within what is
    /// left of `timeout`).
    pub fn connect(host: &str, port: u16, timeout: Duration) -> io::Result<SyncConn> {
        let start = Instant::now();
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
        for addr in (host, port).to_socket_addrs()? {
            match TcpStream::connect_timeout(&addr, left(start, timeout)?) {
                Ok(stream) => {
                    stream.set_nodelay(true)?;
                    return Ok(SyncConn { stream, rbuf: Vec::new(), rpos: 0 });
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Writes all of `buf`, each 64 KiB step within `timeout`.
    pub fn write_all(&mut self, buf: &[u8], timeout: Duration) -> io::Result<()> {
        for chunk in buf.chunks(WRITE_CHUNK_BYTES) {
            let start = Instant::now();
            let mut done = 0;
            while done < chunk.len() {
                self.stream.set_write_timeout(Some(left(start, timeout)?))?;
                match self.stream.write(&chunk[done..]) {
                    Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Ok(n) => done += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    /// Reads one reply line within `timeout`, without its `\r\n`, cut at
    /// [`LINE_BYTES_MAX`] bytes. A closed connection is an error.
    pub fn read_line(&mut self, timeout: Duration) -> io::Result<Vec<u8>> {
        let start = Instant::now();
        let mut line = Vec::new();
        loop {
            let ahead = &self.rbuf[self.rpos..];
            let end = ahead.iter().position(|&b| b == b'\n');
            let take = end.unwrap_or(ahead.len());
            let room = LINE_BYTES_MAX.saturating_sub(line.len());
            line.extend_from_slice(&ahead[..take.min(room)]);
            if let Some(end) = end {
                self.rpos += end + 1;
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(line);
            }
            self.rbuf.clear();
            self.rpos = 0;
            self.stream.set_read_timeout(Some(left(start, timeout)?))?;
            let mut chunk = [0u8; 4096];
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => self.rbuf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Most connections kept (Valkey's `MIGRATE_SOCKET_CACHE_ITEMS`).
pub const CACHE_ITEMS: usize = 64;

/// A cached connection idle this long is closed (Valkey's `MIGRATE_SOCKET_CACHE_TTL`).
pub const CACHE_IDLE_MS: i64 = 10_000;

/// An idle connection kept for reuse.
pub struct Cached {
    pub conn: SyncConn,
    /// The database the last `SELECT` sent on it chose; -1 for none yet (or unknown after
    /// an error).
    pub last_db: i64,
    last_use_ms: i64,
}

/// Idle connections by `host:port`, at most [`CACHE_ITEMS`].
#[derive(Default)]
pub struct ConnCache {
    entries: Vec<(Vec<u8>, Cached)>,
}

impl ConnCache {
    /// Takes the connection cached as `name` out of the cache (for the caller to use and
    /// put back).
    pub fn take(&mut self, name: &[u8]) -> Option<Cached> {
        let i = self.entries.iter().position(|(n, _)| n == name)?;
        Some(self.entries.swap_remove(i).1)
    }

    /// Keeps `conn` as `name`, used at `now_ms`. When the cache is full the connection
    /// idle the longest is closed first (Valkey closes a random one).
    pub fn put(&mut self, name: &[u8], conn: SyncConn, last_db: i64, now_ms: i64) {
        self.entries.retain(|(n, _)| n != name);
        if self.entries.len() >= CACHE_ITEMS {
            let oldest = (0..self.entries.len()).min_by_key(|&i| self.entries[i].1.last_use_ms);
            if let Some(i) = oldest {
                self.entries.swap_remove(i);
            }
        }
        self.entries.push((name.to_vec(), Cached { conn, last_db, last_use_ms: now_ms }));
    }

    /// Closes the connections idle for [`CACHE_IDLE_MS`] or more at `now_ms`.
    pub fn close_idle(&mut self, now_ms: i64) {
        self.entries.retain(|(_, c)| now_ms - c.last_use_ms < CACHE_IDLE_MS);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn pair() -> (SyncConn, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let c = SyncConn::connect("127.0.0.1", port, Duration::from_secs(5)).unwrap();
        (c, l.accept().unwrap().0)
    }

    #[test]
    fn lines_split_anywhere_and_long_lines_are_cut() {
        let (mut c, mut peer) = pair();
        let long = vec![b'x'; 3000];
        peer.write_all(b"+OK\r\n-ERR bad").unwrap();
        peer.write_all(b" thing\r\n-").unwrap();
        peer.write_all(&long).unwrap();
        peer.write_all(b"\r\n:1\r\n").unwrap();
        let t = Duration::from_secs(5);
        assert_eq!(c.read_line(t).unwrap(), b"+OK");
        assert_eq!(c.read_line(t).unwrap(), b"-ERR bad thing");
        let cut = c.read_line(t).unwrap();
        assert_eq!(cut.len(), LINE_BYTES_MAX);
        assert_eq!(cut[0], b'-');
        assert_eq!(c.read_line(t).unwrap(), b":1");
    }

    #[test]
    fn a_silent_peer_times_out_and_a_closed_one_fails() {
        let (mut c, peer) = pair();
        let e = c.read_line(Duration::from_millis(50)).unwrap_err();
        assert!(is_timeout(&e), "{e:?}");
        drop(peer);
        let e = c.read_line(Duration::from_secs(5)).unwrap_err();
        assert!(!is_timeout(&e));
    }

    #[test]
    fn writes_reach_the_peer_whole() {
        let buf = b"*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n".to_vec();
        let (mut c, mut peer) = pair();
        c.write_all(&buf, Duration::from_secs(5)).unwrap();
        let mut got = vec![0u8; buf.len()];
        peer.read_exact(&mut got).unwrap();
        assert_eq!(got, buf);
    }

    #[test]
    fn cache_is_bounded_and_closes_idle_connections() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let conn = || SyncConn::connect("127.0.0.1", port, Duration::from_secs(5)).unwrap();
        let mut cache = ConnCache::default();
        for i in 0..CACHE_ITEMS as i64 + 3 {
            cache.put(format!("h:{i}").as_bytes(), conn(), -1, i);
        }
        assert_eq!(cache.len(), CACHE_ITEMS);
        // The three used first went.
        assert!(cache.take(b"h:0").is_none());
        assert!(cache.take(b"h:2").is_none());
        let c = cache.take(b"h:3").unwrap();
        assert_eq!(cache.len(), CACHE_ITEMS - 1);
        cache.put(b"h:3", c.conn, 5, 20_000);
        cache.close_idle(CACHE_IDLE_MS + 60);
        assert_eq!(cache.len(), 7, "h:61 to h:66 and h:3 are not idle for 10 s yet");
        assert_eq!(cache.take(b"h:3").unwrap().last_db, 5);
        cache.close_idle(40_000);
        assert!(cache.is_empty());
    }
}
