//! One HTTP connection of the metrics endpoint: a small state machine over a non-blocking
//! socket, driven on every readiness event (edge-triggered, so each step runs until the
//! socket would block).
//!
//! ```text
//!   Reading --request complete--> Writing --sent, keep-alive--> Reading (pipelined ones too)
//!      |                             |
//!      +--refused (400/404/...)-->   +--sent, closing--> Draining --EOF/deadline--> closed
//! ```
//!
//! Draining reads and drops what the client still sends after the response that closes
//! the connection (the rest of an oversized request, say): closing a socket with unread
//! input resets it, and the client could lose the response.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::time::{Duration, Instant};

use mio::net::TcpStream;

use crate::metrics::http::{self, Parsed, Scrape, REQUEST_BYTES_MAX};

/// How long a connection may take to send a complete request (or stay idle between
/// requests with keep-alive), and to take a response.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a closing connection is drained.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(1);

enum Phase {
    Reading,
    Writing { keep_alive: bool },
    Draining,
}

pub struct HttpConn {
    pub sock: TcpStream,
    /// Received bytes not yet taken by a request (at most `REQUEST_BYTES_MAX`).
    buf: Vec<u8>,
    out: Vec<u8>,
    sent: usize,
    phase: Phase,
    /// When the connection is closed unless it moves on.
    pub deadline: Instant,
}

/// What a socket operation left.
enum Step {
    /// Go on with the (maybe new) phase.
    Again,
    /// Wait for the next readiness event.
    Wait,
    Close,
}

impl HttpConn {
    pub fn new(sock: TcpStream, now: Instant) -> HttpConn {
        HttpConn {
            sock,
            buf: Vec::new(),
            out: Vec::new(),
            sent: 0,
            phase: Phase::Reading,
            deadline: now + IDLE_TIMEOUT,
        }
    }

    /// Runs the connection until it waits for the socket. `answer` gives a scrape's
    /// response and whether the connection stays open after it. False: close it.
    pub fn drive(
        &mut self,
        now: Instant,
        mut answer: impl FnMut(Scrape) -> (Vec<u8>, bool),
    ) -> bool {
        loop {
            let step = match self.phase {
                Phase::Reading => self.read_request(now, &mut answer),
                Phase::Writing { keep_alive } => self.write_response(now, keep_alive),
                Phase::Draining => self.drain(),
            };
            match step {
                Step::Again => {}
                Step::Wait => return true,
                Step::Close => return false,
            }
        }
    }

    fn read_request(
        &mut self,
        now: Instant,
        answer: &mut impl FnMut(Scrape) -> (Vec<u8>, bool),
    ) -> Step {
        match http::parse(&self.buf) {
            Parsed::Incomplete => self.fill(),
            Parsed::Scrape(scrape) => {
                self.buf.drain(..scrape.consumed);
                let (out, keep_alive) = answer(scrape);
                self.respond(now, out, keep_alive);
                Step::Again
            }
            Parsed::Refuse(status) => {
                self.respond(now, http::error_response(status), false);
                Step::Again
            }
        }
    }

    fn respond(&mut self, now: Instant, out: Vec<u8>, keep_alive: bool) {
        self.deadline = now + IDLE_TIMEOUT;
        self.out = out;
        self.sent = 0;
        self.phase = Phase::Writing { keep_alive };
    }

    /// Reads what fits below the request bound.
    fn fill(&mut self) -> Step {
        let mut chunk = [0u8; 4096];
        let room = REQUEST_BYTES_MAX.saturating_sub(self.buf.len()).min(chunk.len());
        debug_assert!(room > 0, "a full buffer parses as complete or refused");
        match self.sock.read(&mut chunk[..room]) {
            Ok(0) => Step::Close,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Step::Again
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Step::Wait,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Step::Again,
            Err(_) => Step::Close,
        }
    }

    fn write_response(&mut self, now: Instant, keep_alive: bool) -> Step {
        while self.sent < self.out.len() {
            match self.sock.write(&self.out[self.sent..]) {
                Ok(0) => return Step::Close,
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Wait,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Step::Close,
            }
        }
        self.out = Vec::new();
        if keep_alive {
            self.phase = Phase::Reading;
            self.deadline = now + IDLE_TIMEOUT;
        } else {
            let _ = self.sock.shutdown(Shutdown::Write);
            self.buf = Vec::new();
            self.phase = Phase::Draining;
            self.deadline = now + DRAIN_TIMEOUT;
        }
        Step::Again
    }

    fn drain(&mut self) -> Step {
        let mut chunk = [0u8; 4096];
        loop {
            match self.sock.read(&mut chunk) {
                Ok(0) => return Step::Close,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Wait,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Step::Close,
            }
        }
    }
}

/// A connection over the limit: the 503 response, written once without waiting (a
/// fresh socket's send buffer takes it), then closed.
pub fn refuse(mut sock: TcpStream, response: &[u8]) {
    let _ = sock.write(response);
    let _ = sock.shutdown(Shutdown::Write);
}
