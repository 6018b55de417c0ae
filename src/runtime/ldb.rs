//! Running an EVAL in a debugging session (`SCRIPT DEBUG YES|SYNC`, see `scripting::ldb`):
//! the client's socket becomes the session's channel, and the session's mode decides who
//! runs it.
//!
//! ```text
//!   SYNC  the server itself: the socket is made blocking (writes time out after 5 s), the
//!         event loop waits in the session on purpose (as Valkey's does), the script's
//!         changes stay; then the socket is non-blocking again, the reply goes out as any
//!         reply, and the client is closed after it.
//!   YES   a forked child (persist::fork::spawn_detached) runs the session on its copy of
//!         the socket and of the dataset, writes the reply itself and exits: what the
//!         script changed dies with it. The parent drops the client at once without a
//!         word: closing its descriptor does not end the connection, which the child holds
//!         (no shutdown(2) is made), and the event loop deregisters it first, so the parent
//!         never sees the socket again.
//! ```
//!
//! A client that goes away during a session ends it: the script runs on without stopping
//! and its reply goes nowhere. Malformed input or more than 1 MiB of it fails the script
//! (`scripting::ldb::session`). The socket is borrowed for the session while the client's
//! command runs on the main thread, where its connection is (no I/O thread holds it while
//! commands run), so nothing else reads or writes it meanwhile.

use std::io::{Read, Write};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::time::Duration;

use bytes::Bytes;

use crate::scripting::ldb::{self, Channel, DebugRun, Mode};
use crate::server::state::{ServerState, Slot};

/// Writes to the debugging client give up after this long (Valkey's send timeout).
const SEND_TIMEOUT: Duration = Duration::from_millis(5000);
/// A run without a stop this long stops by itself when `busy-reply-threshold` is 0.
const TIMEOUT_DEFAULT_MS: u64 = 5000;

/// The client's socket, as a blocking stream of its own (a duplicate descriptor of the same
/// connection).
enum Stream {
    Tcp(std::net::TcpStream),
    Unix(std::os::unix::net::UnixStream),
}

impl Stream {
    /// A duplicate of the client socket `fd`, made blocking with Valkey's send timeout.
    fn open(fd: i32, unix: bool) -> std::io::Result<Stream> {
        // SAFETY: `fd` is the socket of the client whose command runs now: it stays open
        // at least until the command returns, and the duplicate made here lives on its own.
        let owned: OwnedFd = unsafe { BorrowedFd::borrow_raw(fd) }.try_clone_to_owned()?;
        let stream = if unix {
            Stream::Unix(std::os::unix::net::UnixStream::from(owned))
        } else {
            Stream::Tcp(std::net::TcpStream::from(owned))
        };
        stream.set_blocking(true)?;
        Ok(stream)
    }

    /// Blocking with the send timeout, or back to what the event loop needs.
    fn set_blocking(&self, on: bool) -> std::io::Result<()> {
        let timeout = on.then_some(SEND_TIMEOUT);
        match self {
            Stream::Tcp(s) => {
                s.set_nonblocking(!on)?;
                s.set_write_timeout(timeout)
            }
            Stream::Unix(s) => {
                s.set_nonblocking(!on)?;
                s.set_write_timeout(timeout)
            }
        }
    }
}

impl Channel for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let r = match self {
                Stream::Tcp(s) => s.read(buf),
                Stream::Unix(s) => s.read(buf),
            };
            match r {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                other => return other,
            }
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        let _ = match self {
            Stream::Tcp(s) => s.write_all(bytes),
            Stream::Unix(s) => s.write_all(bytes),
        };
    }
}

/// Runs the debugging session of an EVAL for the client in `slot`; returns whether its
/// reply is an error (as `runtime::script::run`).
pub fn run(
    srv: &mut ServerState,
    token: usize,
    slot: &mut Slot,
    run: DebugRun,
    argv: &[Bytes],
    now_ms: i64,
) -> bool {
    // The session is this client's last command: it is closed after it either way.
    slot.client.ldb = None;
    match run.mode {
        Mode::Sync => sync_session(srv, token, slot, &run, argv, now_ms),
        Mode::Forked => forked_session(srv, token, slot, &run, argv, now_ms),
    }
}

fn sync_session(
    srv: &mut ServerState,
    token: usize,
    slot: &mut Slot,
    run: &DebugRun,
    argv: &[Bytes],
    now_ms: i64,
) -> bool {
    slot.client.close_after_reply = true;
    let stream = match Stream::open(slot.client.fd, slot.client.unix) {
        Ok(s) => s,
        Err(e) => return session_failed(srv, slot, &e),
    };
    let event_loop_side = stream.try_clone_channel();
    tracing::info!("Valkey synchronous debugging eval session started");
    let failed = session(srv, token, slot, run, argv, now_ms, stream);
    tracing::info!("Valkey synchronous debugging eval session ended");
    // The reply goes out through the event loop, which needs the socket non-blocking.
    if let Some(s) = event_loop_side {
        let _ = s.set_blocking(false);
    }
    failed
}

fn forked_session(
    srv: &mut ServerState,
    token: usize,
    slot: &mut Slot,
    run: &DebugRun,
    argv: &[Bytes],
    now_ms: i64,
) -> bool {
    let (fd, unix) = (slot.client.fd, slot.client.unix);
    let spawned = crate::persist::fork::spawn_detached(|| {
        // The child: no logging here (the logger's lock may be another thread's at the
        // fork); the reply is written straight to the socket before `_exit`.
        let Ok(stream) = Stream::open(fd, unix) else { return false };
        let mut reply_to = match stream.try_clone_channel() {
            Some(s) => s,
            None => return false,
        };
        session(srv, token, slot, run, argv, now_ms, stream);
        let mut bytes = Vec::new();
        slot.out.copy_stream_into(&mut bytes);
        reply_to.write(&bytes[slot.sent.min(bytes.len())..]);
        true
    });
    match spawned {
        Ok(pid) => {
            tracing::info!("Valkey forked for debugging eval");
            srv.ldb_children.push(pid);
            // The child answers; the parent lets the client go without a word.
            slot.client.close_asap = true;
            srv.to_close.push(token);
            false
        }
        Err(e) => {
            let text = format!(
                "ERR Fork() failed: can't run EVAL in debugging mode: {}",
                crate::util::strerror(&e)
            );
            crate::server::calls::reply_error_text(srv, slot, text.as_bytes());
            true
        }
    }
}

impl Stream {
    /// A second handle on the same connection (for the reply after the session).
    fn try_clone_channel(&self) -> Option<Stream> {
        match self {
            Stream::Tcp(s) => s.try_clone().ok().map(Stream::Tcp),
            Stream::Unix(s) => s.try_clone().ok().map(Stream::Unix),
        }
    }
}

/// The session itself: begins with the script stopped before its first line, runs it (or
/// replies the call's own error), ends with `<endsession>`.
fn session(
    srv: &mut ServerState,
    token: usize,
    slot: &mut Slot,
    run: &DebugRun,
    argv: &[Bytes],
    now_ms: i64,
    stream: Stream,
) -> bool {
    let threshold = srv.config.busy_reply_threshold_ms;
    let timeout_ms = if threshold > 0 { threshold } else { TIMEOUT_DEFAULT_MS };
    ldb::begin(&run.source, Box::new(stream), timeout_ms);
    let failed = match &run.prepared {
        Ok(req) => crate::runtime::script::run(srv, token, slot, req, argv, now_ms),
        Err(text) => {
            crate::server::calls::reply_error_text(srv, slot, text);
            true
        }
    };
    ldb::end();
    failed
}

/// The socket could not be taken for the session: the EVAL fails with the OS's reason.
fn session_failed(srv: &mut ServerState, slot: &mut Slot, e: &std::io::Error) -> bool {
    let text = format!("ERR can't run EVAL in debugging mode: {}", crate::util::strerror(e));
    crate::server::calls::reply_error_text(srv, slot, text.as_bytes());
    true
}
