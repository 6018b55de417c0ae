//! The Prometheus metrics endpoint (`metrics-port`): one small thread with its own mio
//! `Poll` that accepts HTTP connections, parses requests (`metrics::http`), asks the main
//! event loop for a snapshot of the figures, renders them (`metrics::exposition`) and writes
//! the response. It never touches the keyspace or the server state.
//!
//! # The link with the main loop
//!
//! ```text
//!   endpoint thread                                   main thread (event loop)
//!   ---------------                                   ------------------------
//!   (reply_tx, reply_rx) = bounded(1)
//!   requests.try_send(reply_tx)   --- bounded(1) -->  poll wakes on WAKER_TOKEN
//!   waker.wake()                                      MainLink::serve: for each request,
//!   reply_rx.recv_timeout(2 s)    <-- Snapshot ----    commands::metrics::snapshot (copies)
//! ```
//!
//! Everything is bounded: one request in flight (a second scrape while the main loop has
//! not taken the first, say during a long script, is answered 503 at once), the wait for
//! the snapshot ([`SNAPSHOT_WAIT`]; then 503), the open connections
//! (`metrics-max-clients`; one more is answered 503 and closed), the request head
//! (`metrics::http::REQUEST_BYTES_MAX`), and the time a connection may stay without
//! completing a request ([`conn::IDLE_TIMEOUT`]).

mod conn;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Registry, Token, Waker};

use crate::config::Metrics;
use crate::metrics::exposition;
use crate::metrics::http::{self, Scrape, Status};
use crate::metrics::snapshot::{EndpointFigures, Snapshot};
use crate::server::state::ServerState;

use conn::HttpConn;

/// The main loop's token for the endpoint's wake-ups, below the listeners' tokens
/// (`runtime::listener`), far above any client's.
pub const WAKER_TOKEN: usize = usize::MAX - 65;

/// How long the endpoint waits for the main loop's snapshot before answering 503.
pub const SNAPSHOT_WAIT: Duration = Duration::from_secs(2);

/// The endpoint thread's token for its listener (connections are numbered from 0).
const LISTENER: Token = Token(usize::MAX);

/// The reply channel of one snapshot request.
type Request = Sender<Snapshot>;

/// The main loop's end of the link: requests to answer when [`WAKER_TOKEN`] fires.
pub struct MainLink {
    requests: Receiver<Request>,
}

impl MainLink {
    /// Answers every waiting request with a copy of the figures.
    pub fn serve(&self, srv: &ServerState) {
        while let Ok(reply) = self.requests.try_recv() {
            // The endpoint may have given up waiting (it then dropped the receiver).
            let _ =
                reply.send(crate::commands::metrics::snapshot(srv, crate::util::clock::now_ms()));
        }
    }
}

/// Starts the endpoint when `metrics-port` is set: binds its listener (an error stops
/// start-up, as for the RESP port), registers the waker in the main loop's `registry`,
/// spawns the thread. None when the endpoint is off.
pub fn start(config: &Metrics, registry: &Registry) -> io::Result<Option<MainLink>> {
    if config.port == 0 {
        return Ok(None);
    }
    let ip: std::net::IpAddr = config.bind.parse().map_err(|_| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("bad metrics-bind {}", config.bind))
    })?;
    let addr = SocketAddr::new(ip, config.port);
    let listener = TcpListener::bind(addr).map_err(|e| {
        io::Error::new(e.kind(), format!("Failed listening on metrics port {addr}: {e}"))
    })?;
    let waker = Arc::new(Waker::new(registry, Token(WAKER_TOKEN))?);
    let (requests_tx, requests_rx) = crossbeam_channel::bounded(1);
    let poll = Poll::new()?;
    let mut endpoint = Endpoint {
        poll,
        listener,
        conns: Vec::new(),
        open: 0,
        max_clients: config.max_clients.max(1) as usize,
        requests: requests_tx,
        waker,
        figures: EndpointFigures::default(),
    };
    endpoint.poll.registry().register(&mut endpoint.listener, LISTENER, Interest::READABLE)?;
    std::thread::Builder::new().name("metrics".into()).spawn(move || endpoint.run())?;
    tracing::info!("Serving Prometheus metrics on http://{addr}/metrics");
    Ok(Some(MainLink { requests: requests_rx }))
}

/// The endpoint thread's state.
struct Endpoint {
    poll: Poll,
    listener: TcpListener,
    /// Open connections by token; a free slot is reused.
    conns: Vec<Option<HttpConn>>,
    open: usize,
    max_clients: usize,
    requests: Sender<Request>,
    waker: Arc<Waker>,
    figures: EndpointFigures,
}

impl Endpoint {
    fn run(mut self) {
        let mut events = Events::with_capacity(64);
        loop {
            let timeout = self.next_deadline().map(|d| d.saturating_duration_since(Instant::now()));
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                tracing::warn!("Metrics endpoint stopped: {e}");
                return;
            }
            for ev in events.iter() {
                match ev.token() {
                    LISTENER => self.accept_all(),
                    Token(t) => self.drive(t),
                }
            }
            self.close_expired(Instant::now());
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.conns.iter().flatten().map(|c| c.deadline).min()
    }

    fn accept_all(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((sock, _)) if self.open >= self.max_clients => {
                    self.figures.refused_connections += 1;
                    conn::refuse(sock, &http::error_response(Status::Unavailable));
                }
                Ok((sock, _)) => self.add(sock),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // Out of file descriptors, say: try again on the next event.
                    tracing::warn!("Accepting a metrics connection: {e}");
                    return;
                }
            }
        }
    }

    fn add(&mut self, sock: mio::net::TcpStream) {
        let t = match self.conns.iter().position(Option::is_none) {
            Some(t) => t,
            None => {
                self.conns.push(None);
                self.conns.len() - 1
            }
        };
        let mut c = HttpConn::new(sock, Instant::now());
        let interest = Interest::READABLE | Interest::WRITABLE;
        if self.poll.registry().register(&mut c.sock, Token(t), interest).is_err() {
            return;
        }
        self.conns[t] = Some(c);
        self.open += 1;
        // Whatever arrived with the connection is read on its first event.
    }

    fn drive(&mut self, t: usize) {
        let Some(mut c) = self.conns.get_mut(t).and_then(Option::take) else { return };
        let keep = c.drive(Instant::now(), |scrape| self.answer(scrape));
        if keep {
            self.conns[t] = Some(c);
        } else {
            self.close(c);
        }
    }

    fn close(&mut self, mut c: HttpConn) {
        let _ = self.poll.registry().deregister(&mut c.sock);
        self.open -= 1;
    }

    fn close_expired(&mut self, now: Instant) {
        for t in 0..self.conns.len() {
            if self.conns[t].as_ref().is_some_and(|c| c.deadline <= now) {
                let c = self.conns[t].take().expect("checked");
                self.close(c);
            }
        }
    }

    /// The response to a scrape: the figures, or 503 when the main loop did not give them.
    fn answer(&mut self, scrape: Scrape) -> (Vec<u8>, bool) {
        let Some(mut snapshot) = self.snapshot() else {
            return (http::error_response(Status::Unavailable), false);
        };
        self.figures.scrapes += 1;
        snapshot.process = crate::commands::metrics::process_figures();
        snapshot.endpoint = self.figures;
        let body = exposition::render(snapshot, scrape.format);
        let content_type = scrape.format.content_type();
        let response = http::response(
            Status::Ok,
            content_type,
            body.as_bytes(),
            scrape.keep_alive,
            scrape.head_only,
        );
        (response, scrape.keep_alive)
    }

    /// Asks the main loop for the figures (see the module's diagram).
    fn snapshot(&self) -> Option<Snapshot> {
        let (reply, figures) = crossbeam_channel::bounded(1);
        self.requests.try_send(reply).ok()?;
        self.waker.wake().ok()?;
        figures.recv_timeout(SNAPSHOT_WAIT).ok()
    }
}
