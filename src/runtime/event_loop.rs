//! The event loop: one mio `Poll` owned by the main thread. Each turn ("epoch") accepts new
//! connections, reads and parses what every ready client sent, executes the commands in
//! arrival order (each client's strictly in order), writes all replies with one write per
//! client, closes what must be closed, runs the time events, and publishes the memory
//! counters before it polls again.

use std::collections::VecDeque;
use std::io;

use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};
use tracing::{info, warn};

use crate::io_threads::{Pool, Worker};
use crate::resp::parse::ParseLimits;
use crate::resp::parse::ProtoError;
use crate::resp::reply::{Proto, Reply};
use crate::runtime::batch::{Batcher, Ran, CMDS_PER_TURN_MAX};
use crate::runtime::conn::{Conn, ReadOutcome, Sock, IOBUF_LEN};
use crate::runtime::cron;
use crate::runtime::io_slots::{IoSlot, IoSlots};
use crate::runtime::listener::{Accepted, Listeners};
use crate::runtime::parsed::Parsed;
use crate::runtime::protected_mode;
use crate::server::client::Client;
use crate::server::state::{ServerState, Slot};
use crate::spec::table::KeyBuf;
use crate::util::clock::now_ms;

/// Reads of the primary's stream per readable event on a replica (64 x 16 KiB): the stream
/// is applied as fast as it comes, as Valkey applies its primary's whole query buffer, so
/// that a replica's reads lag as little as Valkey's (benches/repl-lag.sh).
const PRIMARY_READS_PER_EVENT: usize = 64;
/// Events handled per poll.
const EVENTS_MAX: usize = 1024;
/// Events handled per turn served while a script keeps the server busy.
const BUSY_EVENTS_MAX: usize = 256;

/// How long a busy loop may hold the replicas' small stream writes back (see
/// [`EventLoop::order_replica_writes`]).
const REPLICA_HOLD_US: u64 = 500;

/// Replica output at least this big is written at once.
const REPLICA_HOLD_BYTES: usize = 8192;
/// Parsed commands a client may have waiting; parsing stops there until they run.
const PENDING_CMDS_MAX: usize = CMDS_PER_TURN_MAX;

pub struct EventLoop {
    pub srv: ServerState,
    net: Net,
    next_cron_ms: i64,
    batcher: Batcher,
}

/// Everything of the event loop but the server state: the poll, the connections and the
/// lists of clients in each stage of a turn. Kept apart from [`ServerState`] so that while
/// a batch runs (and borrows the server state), a script that takes long can still serve
/// other clients through it (`runtime::busy`).
pub(crate) struct Net {
    poll: Poll,
    scratch: Vec<u8>,
    /// Clients to read again next turn without waiting for an event: their socket was not
    /// drained (fairness cap, or their parsed-command queue was full).
    again: Vec<usize>,
    /// Replicas whose small stream output waits for the next turn (see
    /// [`Net::order_replica_writes`]).
    held_replicas: Vec<usize>,
    /// This turn brought events (a busy loop), so the next turn comes at once.
    turn_busy: bool,
    /// When the replicas' stream was last written.
    last_replica_write: Instant,
    /// Clients with parsed commands to execute this turn.
    ready: Vec<usize>,
    /// Clients with commands held back by CLIENT PAUSE.
    paused: Vec<usize>,
    /// The I/O threads (io-threads > 1).
    io: Option<Pool<IoJob, IoDone>>,
    /// Each client's connection and parsed commands, by token.
    pub(crate) conns: IoSlots,
    /// Clients with commands in the batch now running (`runtime::batch`): while a script
    /// keeps the server busy they are left alone (their commands run in order, after it).
    pub(crate) in_flight: Vec<usize>,
    /// Clients left unread while a script kept the server busy: read next turn.
    pub(crate) deferred: Vec<usize>,
    /// The metrics endpoint's requests for figures (`metrics-port`), served when its
    /// waker fires, in busy turns too.
    metrics: Option<crate::runtime::metrics::MainLink>,
}

impl EventLoop {
    pub fn new(srv: ServerState) -> io::Result<EventLoop> {
        let poll = Poll::new()?;
        let mut srv = srv;
        // The listeners live in the server state, so that CONFIG SET bind/port can reopen them.
        let listeners = Listeners::bind(&srv.config, poll.registry().try_clone()?)?;
        srv.tcp_port = listeners.tcp_port.unwrap_or(srv.config.port);
        srv.listeners = Box::new(listeners);
        let threads = srv.config.io_threads.max(1) as usize - 1;
        let io = (threads > 0).then(|| Pool::new(threads, IOBUF_LEN, io_work));
        let metrics = crate::runtime::metrics::start(&srv.config.metrics, poll.registry())?;
        srv.io_threads_active = threads > 0;
        // `replicaof <host> <port>` in the configuration: follow that primary from the start.
        let words: Vec<String> =
            srv.config.replication.replicaof.split_whitespace().map(str::to_string).collect();
        if let [host, port] = &words[..] {
            if let Ok(port) = port.parse::<u16>() {
                crate::replication::replica::set_primary(&mut srv, host, port, now_ms());
            }
        }
        let net = Net {
            poll,
            scratch: vec![0; IOBUF_LEN],
            again: Vec::new(),
            held_replicas: Vec::new(),
            turn_busy: false,
            last_replica_write: Instant::now(),
            ready: Vec::new(),
            paused: Vec::new(),
            io,
            conns: IoSlots::default(),
            in_flight: Vec::new(),
            deferred: Vec::new(),
            metrics,
        };
        Ok(EventLoop { srv, net, next_cron_ms: 0, batcher: Batcher::default() })
    }

    /// Run until SHUTDOWN.
    pub fn run(&mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(EVENTS_MAX);
        let mut readable: Vec<usize> = Vec::new();
        let mut writable: Vec<usize> = Vec::new();
        // When the turn under way began (its events arrived); None before the first.
        let mut turn_from: Option<Instant> = None;
        loop {
            let (srv, net) = (&mut self.srv, &mut self.net);
            cron::before_sleep_expire(srv, now_ms());
            // Invalidations of keys changed by time events (BCAST announcements too) go out
            // next turn without sleeping first (they are queued for writing).
            crate::server::tracking::before_sleep(srv);
            crate::memory::publish();
            let now = now_ms();
            let wake_ms = match srv.blocking.next_timeout() {
                Some(t) => t.min(self.next_cron_ms),
                None => self.next_cron_ms,
            };
            let timeout_ms =
                if net.has_pending_work(srv) { 0 } else { (wake_ms - now).clamp(0, 1000) as u64 };
            // A turn ends where the loop waits again (INFO's eventloop_* figures).
            if let Some(from) = turn_from {
                srv.stats.eventloop_cycles += 1;
                srv.stats.eventloop_us += from.elapsed().as_micros() as u64;
            }
            match net.poll.poll(&mut events, Some(Duration::from_millis(timeout_ms))) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            turn_from = Some(Instant::now());
            readable.clear();
            writable.clear();
            readable.append(&mut net.again);
            net.turn_busy = !events.is_empty() || !readable.is_empty();
            net.sort_events(srv, &events, &mut readable, &mut writable);
            for &t in &writable {
                net.write_client(srv, t);
            }
            net.read_clients(srv, &readable);
            net.resume_paused(srv);
            // WAITs first: their time-out answers the replicas that acknowledged.
            crate::replication::primary::serve_waiters(srv, now_ms());
            crate::server::unblock::expire_timeouts(srv, now_ms());
            net.ready.append(&mut srv.unblocked);
            self.execute_ready();
            let (srv, net) = (&mut self.srv, &mut self.net);
            net.ready.append(&mut srv.unblocked);
            crate::server::tracking::before_sleep(srv);
            crate::replication::primary::before_replies(srv, now_ms());
            if let Some(a) = crate::replication::replica::poll(srv, now_ms()) {
                net.attach_primary(srv, a);
            }
            crate::persist::aof::before_replies(&mut crate::persist::store(srv));
            net.flush_writes(srv);
            net.close_pending(srv);
            let now = now_ms();
            if now >= self.next_cron_ms {
                cron::run(srv, now);
                // What the time events fed (expired keys' removals, pings) reaches the
                // replicas this turn.
                crate::replication::primary::before_replies(srv, now);
                self.next_cron_ms = now + 1000 / srv.hz.max(1) as i64;
                net.close_pending(srv);
            }
            if let Some(_mode) = srv.shutdown {
                // Forked debugging sessions end with the server, as in Valkey.
                crate::persist::fork::kill_detached(&mut srv.ldb_children);
                // SHUTDOWN has stopped the RDB child and made the final save
                // (`persist::save::prepare_shutdown`), where a failure could still be
                // answered; the AOF's last writes reach the disk here.
                crate::persist::aof::on_shutdown(&mut crate::persist::store(srv));
                net.flush_writes(srv);
                return Ok(());
            }
        }
    }

    /// Execute every ready client's pending commands in batches, then answer protocol
    /// errors whose preceding commands have all run, and keep leftovers for the next turn.
    fn execute_ready(&mut self) {
        let (srv, net) = (&mut self.srv, &mut self.net);
        if net.ready.is_empty() {
            return;
        }
        let mut ready = std::mem::take(&mut net.ready);
        ready.sort_unstable();
        ready.dedup();
        // On a replica the primary's stream runs first: what clients read in this batch is
        // as up to date as what has arrived.
        if let Some(p) = crate::replication::replica::primary_token(srv) {
            if let Some(i) = ready.iter().position(|&t| t == p) {
                ready[..=i].rotate_right(1);
            }
        }
        self.batcher.run(srv, net, &ready);
        // Clients left unread while a script kept the server busy.
        net.again.append(&mut net.deferred);
        for &t in &ready {
            if srv.blocking.is_blocked(t) {
                continue; // Its queued commands wait until it is served or times out.
            }
            let Some(slot) = srv.clients.get_mut(t) else { continue };
            let Some(io) = net.conns.get_mut(t) else { continue };
            if io.pending.is_empty() {
                if io.proto_error.is_some() {
                    net.answer_protocol_error(srv, t);
                }
                // The queue drained: parse what may be left in the query buffer (it was
                // full), from the next turn's read.
                continue;
            }
            if slot.client.close_after_reply || slot.client.close_asap {
                io.pending.clear();
            } else if srv.pause.any() {
                net.paused.push(t);
            } else {
                net.ready.push(t);
            }
        }
        ready.clear();
        if !net.paused.is_empty() {
            net.paused.sort_unstable();
            net.paused.dedup();
            srv.pause.held_clients = net.paused.len();
        }
        if net.ready.is_empty() {
            net.ready = ready;
        }
    }
}

impl Net {
    /// One turn of the event loop while a script keeps the server busy (see
    /// `runtime::busy`): new connections are accepted, and the clients that have nothing in
    /// the running batch are read and answered (dispatch runs the allow-busy commands and
    /// answers BUSY to the others). Clients with commands in the batch, blocked and paused
    /// clients and the primary's stream are read after the batch.
    pub(crate) fn serve_busy(&mut self, srv: &mut ServerState) {
        let mut events = Events::with_capacity(BUSY_EVENTS_MAX);
        match self.poll.poll(&mut events, Some(Duration::ZERO)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
        let mut readable = std::mem::take(&mut self.again);
        let mut writable = Vec::new();
        self.sort_events(srv, &events, &mut readable, &mut writable);
        let primary = crate::replication::replica::primary_token(srv);
        let (in_flight, paused, deferred) = (&self.in_flight, &self.paused, &mut self.deferred);
        readable.retain(|&t| {
            let later = in_flight.contains(&t)
                || paused.contains(&t)
                || srv.blocking.is_blocked(t)
                || Some(t) == primary;
            if later {
                deferred.push(t);
            }
            !later
        });
        for &t in &writable {
            self.write_client(srv, t);
        }
        self.read_clients(srv, &readable);
        let ready = std::mem::take(&mut self.ready);
        for &t in &ready {
            self.run_pending(srv, t);
        }
        if !self.paused.is_empty() {
            self.paused.sort_unstable();
            self.paused.dedup();
            srv.pause.held_clients = self.paused.len();
        }
        if srv.shutdown.is_some() {
            // SHUTDOWN NOSAVE (which left the script's writes out of the AOF's feed).
            crate::persist::aof::on_shutdown(&mut crate::persist::store(srv));
            crate::runtime::busy::exit_now(srv);
        }
        // Replies and closes of the batch's clients wait for the batch.
        let mut later_writes = set_aside(&mut srv.to_write, &self.in_flight);
        let mut later_closes = set_aside(&mut srv.to_close, &self.in_flight);
        self.flush_writes(srv);
        self.close_pending(srv);
        srv.to_write.append(&mut later_writes);
        srv.to_close.append(&mut later_closes);
    }

    /// Runs every parsed command of client `t` (while busy: see [`Net::serve_busy`]).
    fn run_pending(&mut self, srv: &mut ServerState, t: usize) {
        loop {
            let Some(io) = self.conns.get_mut(t) else { return };
            let Some(cmd) = io.pending.pop_front() else {
                if io.proto_error.is_some() {
                    self.answer_protocol_error(srv, t);
                }
                return;
            };
            match crate::runtime::batch::execute_one(srv, t, cmd) {
                Ran::Next => {}
                Ran::Stop => {
                    let closing = srv
                        .clients
                        .get(t)
                        .is_some_and(|s| s.client.close_after_reply || s.client.close_asap);
                    if closing {
                        if let Some(io) = self.conns.get_mut(t) {
                            io.pending.clear();
                        }
                    }
                    return;
                }
                Ran::Held(cmd) => {
                    if let Some(io) = self.conns.get_mut(t) {
                        io.pending.push_front(cmd);
                    }
                    self.paused.push(t);
                    return;
                }
            }
        }
    }

    /// Sorts a poll's events: new connections are accepted at once, clients' sockets go to
    /// `readable` and `writable`.
    fn sort_events(
        &mut self,
        srv: &mut ServerState,
        events: &Events,
        readable: &mut Vec<usize>,
        writable: &mut Vec<usize>,
    ) {
        for ev in events.iter() {
            let Token(t) = ev.token();
            if t == crate::runtime::metrics::WAKER_TOKEN {
                if let Some(m) = &self.metrics {
                    m.serve(srv);
                }
                continue;
            }
            if let Some(which) = crate::runtime::listener::of(srv).which(t) {
                self.accept_all(srv, which);
                continue;
            }
            if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                readable.push(t);
            }
            if ev.is_writable() {
                writable.push(t);
            }
        }
    }

    fn has_pending_work(&self, srv: &ServerState) -> bool {
        // Output queued by a time event (a keyspace notification of an expired key) is
        // written next turn without sleeping first.
        !self.again.is_empty()
            || !self.ready.is_empty()
            || !srv.to_write.is_empty()
            || !self.held_replicas.is_empty()
    }

    fn accept_all(&mut self, srv: &mut ServerState, which: usize) {
        loop {
            let now = now_ms();
            match crate::runtime::listener::of(&*srv).accept(which) {
                Ok(Some(acc)) => self.add_client(srv, acc, now),
                Ok(None) => break,
                Err(e) => {
                    warn!("Accepting client connection: {e}");
                    break;
                }
            }
        }
    }

    fn add_client(&mut self, srv: &mut ServerState, acc: Accepted, now: i64) {
        let srv = &mut *srv;
        // As Valkey: a refused connection counts in rejected_connections only.
        let refusal = if srv.clients.count >= srv.config.maxclients as usize {
            Some("-ERR max number of clients reached\r\n")
        } else if protected_mode::denies(
            srv.config.protected_mode,
            !srv.acl.default_user().nopass,
            acc.peer,
        ) {
            Some(protected_mode::DENIED)
        } else {
            None
        };
        let sock = acc.sock;
        if let Some(msg) = refusal {
            srv.stats.rejected_connections += 1;
            let mut conn = Conn::new(sock);
            let mut out = Reply::default();
            out.raw(msg.as_bytes());
            let _ = conn.write_pending(&out, &mut 0);
            conn.sock.shutdown();
            return;
        }
        srv.stats.total_connections_received += 1;
        if let Sock::Tcp(s) = &sock {
            let _ = s.set_nodelay(true);
            crate::runtime::listener::set_keepalive(s, srv.config.tcp_keepalive_secs);
        }
        let mut client = Client::new(0, acc.addr, acc.laddr, acc.fd, acc.unix, now);
        client.authenticated = !srv.acl.auth_required();
        self.register(srv, Conn::new(sock), client);
    }

    /// Puts a new client in the table under the next client id, and its connection under
    /// mio; its token, or None (logged) when mio refused it.
    fn register(
        &mut self,
        srv: &mut ServerState,
        mut conn: Conn,
        mut client: Client,
    ) -> Option<usize> {
        client.id = srv.next_client_id;
        srv.next_client_id += 1;
        let slot = Box::new(Slot::new(client, Reply::new(Proto::Resp2)));
        let token = srv.clients.insert(slot);
        if let Err(e) =
            self.poll.registry().register(conn.sock.source(), Token(token), Interest::READABLE)
        {
            warn!("Registering client: {e}");
            srv.clients.remove(token);
            return None;
        }
        self.conns.insert(token, IoSlot::new(conn));
        Some(token)
    }

    /// Registers the socket of our primary, after its handshake, as the primary's client:
    /// the stream it sends runs as its commands; bytes read past the snapshot are parsed
    /// first.
    fn attach_primary(&mut self, srv: &mut ServerState, a: crate::replication::replica::Attach) {
        use std::os::fd::AsRawFd;
        if let Err(e) = a.stream.set_nonblocking(true) {
            warn!("Primary link: {e}");
            return;
        }
        let addr = a.stream.peer_addr().map(|x| x.to_string()).unwrap_or_default();
        let laddr = a.stream.local_addr().map(|x| x.to_string()).unwrap_or_default();
        let fd = a.stream.as_raw_fd();
        let mut client = Client::new(0, addr, laddr, fd, false, now_ms());
        client.kind = crate::server::client::ClientKind::Primary;
        client.authenticated = true;
        client.reply_mode = crate::server::client::ReplyMode::Off;
        let mut conn = Conn::new(Sock::Tcp(mio::net::TcpStream::from_std(a.stream)));
        conn.reads_per_event = PRIMARY_READS_PER_EVENT;
        conn.qbuf.extend_from_slice(&a.leftover);
        let Some(token) = self.register(srv, conn, client) else { return };
        crate::replication::replica::attached(&mut *srv, token);
        self.again.push(token);
    }

    /// Read and parse every readable client: on the I/O threads when there are some and
    /// more than one client to serve, else here.
    fn read_clients(&mut self, srv: &mut ServerState, tokens: &[usize]) {
        if self.io.is_some() && tokens.len() > 1 {
            self.read_clients_threaded(srv, tokens);
        } else {
            for &t in tokens {
                self.read_client(srv, t);
            }
        }
    }

    fn read_limits(srv: &ServerState, slot: &Slot) -> (usize, ParseLimits) {
        let qlimit = (srv.config.client_query_buffer_limit as usize).max(1);
        let plimits = ParseLimits {
            bulk_len_max: srv.config.proto_max_bulk_len as usize,
            authenticated: slot.client.authenticated,
        };
        (qlimit, plimits)
    }

    fn read_client(&mut self, srv: &mut ServerState, token: usize) {
        let Some(slot) = srv.clients.lend(token) else {
            return;
        };
        let Some(io) = self.conns.get_mut(token) else {
            srv.clients.put_back(token, slot);
            return;
        };
        let Some(mut conn) = io.conn.take() else {
            srv.clients.put_back(token, slot);
            return;
        };
        let (qlimit, plimits) = Net::read_limits(srv, &slot);
        let io = self.conns.get_mut(token).expect("checked above");
        let room = PENDING_CMDS_MAX.saturating_sub(io.pending.len());
        let outcome = read_some(&mut conn, &mut self.scratch, qlimit, room);
        let mut capped = false;
        if matches!(outcome, Ok(ReadOutcome::Data { .. })) {
            let room = PENDING_CMDS_MAX.saturating_sub(io.pending.len());
            capped = parse_into(&mut conn, &plimits, room, &mut io.pending, &mut io.proto_error);
        }
        self.finish_read(srv, token, slot, conn, outcome, capped);
    }

    /// Hand every readable connection to the I/O threads, then take the results back.
    fn read_clients_threaded(&mut self, srv: &mut ServerState, tokens: &[usize]) {
        let mut sent = 0;
        for &t in tokens {
            if srv.clients.get_mut(t).is_none() {
                continue;
            }
            let Some(io) = self.conns.get_mut(t) else { continue };
            let Some(conn) = io.conn.take() else { continue };
            let room = PENDING_CMDS_MAX.saturating_sub(io.pending.len());
            let (qlimit, plimits) = Net::read_limits(srv, srv.clients.get(t).expect("present"));
            let io = self.io.as_mut().expect("threaded path");
            io.submit(IoJob::Read { token: t, conn, qlimit, plimits, room });
            sent += 1;
        }
        for _ in 0..sent {
            let io = self.io.as_mut().expect("threaded path");
            let Some(IoDone::Read { token, conn, outcome, cmds, error, capped }) = io.recv() else {
                unreachable!("only read jobs are in flight");
            };
            srv.stats.io_threaded_reads += 1;
            let Some(slot) = srv.clients.lend(token) else {
                continue;
            };
            let io = self.conns.get_mut(token).expect("an I/O slot per client");
            io.pending.extend(cmds);
            if io.proto_error.is_none() {
                io.proto_error = error;
            }
            self.finish_read(srv, token, slot, conn, outcome, capped);
        }
    }

    /// Account for a read, queue the client for execution, enforce the query buffer limit,
    /// and put the connection back (or close it).
    fn finish_read(
        &mut self,
        srv: &mut ServerState,
        token: usize,
        mut slot: Box<Slot>,
        conn: Conn,
        outcome: io::Result<ReadOutcome>,
        capped: bool,
    ) {
        srv.stats.total_reads += 1;
        let qlimit = (srv.config.client_query_buffer_limit as usize).max(1);
        let mut closed = false;
        let mut again = capped;
        match outcome {
            Ok(ReadOutcome::Data { n, more }) => {
                self.account_input(srv, &mut slot, n);
                again |= more;
            }
            Ok(ReadOutcome::Closed(n)) => {
                self.account_input(srv, &mut slot, n);
                closed = true;
            }
            Err(_) => closed = true,
        }
        let io = self.conns.get_mut(token).expect("an I/O slot per client");
        if !closed {
            if !io.pending.is_empty() || io.proto_error.is_some() {
                self.ready.push(token);
            }
            if conn.qbuf.len() >= qlimit && !slot.client.close_after_reply {
                warn!(
                    "Closing client that reached max query buffer length: id={} addr={}",
                    slot.client.id, slot.client.addr
                );
                srv.stats.client_qbuf_limit_disconnections += 1;
                closed = true;
            }
        }
        slot.client.qbuf_len = conn.qbuf.len();
        slot.client.qbuf_cap = conn.qbuf.capacity();
        io.conn = Some(conn);
        srv.clients.put_back(token, slot);
        if closed {
            self.close_client(srv, token);
        } else if again {
            self.again.push(token);
        }
    }

    fn account_input(&mut self, srv: &mut ServerState, slot: &mut Slot, n: usize) {
        srv.stats.net_input_bytes += n as u64;
        slot.client.tot_net_in += n as u64;
    }

    /// Reply the client's protocol error (its earlier commands have all run) and close it
    /// once the reply is written.
    fn answer_protocol_error(&mut self, srv: &mut ServerState, t: usize) {
        let Some(mut slot) = srv.clients.lend(t) else { return };
        let error = self.conns.get_mut(t).and_then(|io| io.proto_error.take());
        if let Some(e) = error {
            let msg = e.message();
            info!(
                "Protocol error ({}) from client: id={} addr={}",
                String::from_utf8_lossy(&msg),
                slot.client.id,
                slot.client.addr
            );
            crate::server::calls::reply_error_text(&mut *srv, &mut slot, &msg);
            slot.client.close_after_reply = true;
            srv.to_write.push(t);
        }
        srv.clients.put_back(t, slot);
    }

    /// When CLIENT PAUSE has ended, run the commands it held back.
    fn resume_paused(&mut self, srv: &mut ServerState) {
        if self.paused.is_empty() {
            return;
        }
        if srv.pause.holds(now_ms()) {
            return;
        }
        self.ready.append(&mut self.paused);
        srv.pause.held_clients = 0;
    }

    fn write_client(&mut self, srv: &mut ServerState, token: usize) {
        if srv.clients.get_mut(token).is_some() {
            srv.to_write.push(token);
        }
    }

    /// Orders this turn's writes for the replicas' stream. Replicas go first: the stream
    /// leaves before this turn's replies (asked of the replication registry, so a server
    /// without replicas pays one type check).
    ///
    /// Under load, the replicas' stream goes out in fewer, bigger writes: while turns keep
    /// bringing events and the stream was written less than [`REPLICA_HOLD_US`] ago, a
    /// replica's output below [`REPLICA_HOLD_BYTES`] waits for the next turn, which comes
    /// at once (no sleep while something is held). A turn without events writes it, so the
    /// stream is never held when the loop would sleep, nor while a WAIT waits on it.
    ///
    /// Why: a fast primary otherwise sends a small write per turn, every few microseconds.
    /// That costs a syscall each, wakes the replica as often, and fills congestion windows
    /// counted in packets (BBR's on loopback is a handful) with small ones, after which the
    /// kernel holds the stream back until acknowledgements come: the replica falls behind by
    /// milliseconds at the tail. Measured in the README (issue 16).
    fn order_replica_writes(&mut self, srv: &mut ServerState, tokens: &mut Vec<usize>) {
        let Some(r) = crate::replication::peek(&srv.repl) else { return };
        if r.replicas.is_empty() {
            return;
        }
        let hold = self.turn_busy
            && r.waiters.is_empty()
            && self.last_replica_write.elapsed() < Duration::from_micros(REPLICA_HOLD_US);
        let (clients, held) = (&srv.clients, &mut self.held_replicas);
        let mut writes = false;
        tokens.retain(|&t| {
            if r.replica(t).is_none() {
                return true;
            }
            let small = clients.get(t).is_some_and(|s| {
                s.preamble.is_none() && s.out.len().saturating_sub(s.sent) < REPLICA_HOLD_BYTES
            });
            if hold && small {
                held.push(t);
                return false;
            }
            writes = true;
            true
        });
        if writes {
            self.last_replica_write = Instant::now();
        }
        tokens.sort_by_key(|&t| r.replica(t).is_none());
    }

    /// Write every client's pending replies: one write attempt per client per turn, on the
    /// I/O threads when there are some and more than one client to write to.
    fn flush_writes(&mut self, srv: &mut ServerState) {
        let mut tokens = std::mem::take(&mut srv.to_write);
        tokens.append(&mut self.held_replicas);
        tokens.sort_unstable();
        tokens.dedup();
        self.order_replica_writes(srv, &mut tokens);
        let conns = &self.conns;
        tokens.retain(|&t| {
            srv.clients.get_mut(t).is_some_and(|s| {
                conns.get(t).is_some_and(|io| io.conn.is_some())
                    && !s.client.close_asap
                    && !s.held
                    && (!s.out.buf.is_empty() || s.preamble.is_some() || s.client.close_after_reply)
            })
        });
        // A file to send ahead of the replies (a replica's RDB) is read and written here.
        tokens.retain(|&t| {
            let slot = srv.clients.get_mut(t).expect("retained above");
            if slot.preamble.is_none() {
                return true;
            }
            let conn = self.conns.get_mut(t).and_then(|io| io.conn.as_mut()).expect("retained");
            let mut result =
                conn.write_preamble(slot.preamble.as_mut().expect("checked"), &mut self.scratch);
            if result.is_ok() && slot.preamble.as_ref().is_some_and(|p| p.done()) {
                slot.preamble = None;
                if !conn.write_yielded {
                    let more = conn.write_pending(&slot.out, &mut slot.sent);
                    result = match (result, more) {
                        (Ok(a), Ok(b)) => Ok(a + b),
                        (_, Err(e)) | (Err(e), _) => Err(e),
                    };
                }
            }
            self.finish_write(srv, t, result);
            false
        });
        if self.io.is_some() && tokens.len() > 1 {
            let mut sent = 0;
            for &t in &tokens {
                let slot = srv.clients.get_mut(t).expect("retained above");
                let conn = self.conns.get_mut(t).and_then(|io| io.conn.take());
                let conn = conn.expect("retained above");
                let out = std::mem::take(&mut slot.out);
                let job = IoJob::Write { token: t, conn, out, sent: slot.sent };
                self.io.as_mut().expect("threaded").submit(job);
                sent += 1;
            }
            for _ in 0..sent {
                let io = self.io.as_mut().expect("threaded path");
                let Some(IoDone::Write { token, conn, out, sent, result }) = io.recv() else {
                    unreachable!("only write jobs are in flight");
                };
                srv.stats.io_threaded_writes += 1;
                let slot = srv.clients.get_mut(token).expect("slots stay while writing");
                slot.out = out;
                slot.sent = sent;
                self.conns.get_mut(token).expect("an I/O slot per client").conn = Some(conn);
                self.finish_write(srv, token, result);
            }
        } else {
            for &t in &tokens {
                let slot = srv.clients.get_mut(t).expect("retained above");
                let io = self.conns.get_mut(t).expect("retained above");
                let conn = io.conn.as_mut().expect("retained above");
                let result = conn.write_pending(&slot.out, &mut slot.sent);
                self.finish_write(srv, t, result);
            }
        }
        tokens.clear();
        // Clients whose write yielded (finish_write queued them again) go first next turn.
        let again = std::mem::replace(&mut srv.to_write, tokens);
        srv.to_write.extend(again);
    }

    /// After a write attempt: account, reset a drained buffer, follow writability.
    fn finish_write(&mut self, srv: &mut ServerState, t: usize, result: io::Result<usize>) {
        srv.stats.total_writes += 1;
        let slot = srv.clients.get_mut(t).expect("written client is present");
        let conn = self.conns.get_mut(t).and_then(|io| io.conn.as_mut());
        let conn = conn.expect("written connection is back");
        let mut close = false;
        match result {
            Ok(n) => {
                srv.stats.net_output_bytes += n as u64;
                slot.client.tot_net_out += n as u64;
            }
            Err(_) => close = true,
        }
        let done = slot.sent >= slot.out.len() && slot.preamble.is_none();
        if done {
            slot.sent = 0;
            slot.out.clear();
            if srv.reply_buffer_resizing && slot.out.buf.capacity() > 64 * 1024 {
                slot.out.buf.shrink_to(16 * 1024);
            }
            slot.client.obuf_soft_since_ms = 0;
            if slot.client.close_after_reply {
                close = true;
            }
        }
        if !done && !close && conn.write_yielded {
            // The socket is still writable, so no event will say so: retry next turn (the
            // loop does not sleep while writes are queued).
            srv.to_write.push(t);
        }
        // `Slot::want_write` says whether WRITABLE interest is registered (CLIENT LIST shows
        // it too).
        let want_write = !done && !close;
        if want_write != slot.want_write {
            slot.want_write = want_write;
            let interest = if want_write {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            let _ = self.poll.registry().reregister(conn.sock.source(), Token(t), interest);
        }
        if close {
            srv.to_close.push(t);
        }
    }

    fn close_pending(&mut self, srv: &mut ServerState) {
        while let Some(t) = srv.to_close.pop() {
            self.close_client(srv, t);
        }
    }

    fn close_client(&mut self, srv: &mut ServerState, token: usize) {
        let Some(mut slot) = srv.clients.remove(token) else { return };
        if let Some(mut conn) = self.conns.remove(token).and_then(|io| io.conn) {
            let _ = self.poll.registry().deregister(conn.sock.source());
        }
        srv.monitors.retain(|&m| m != token);
        srv.blocking.unblock(token);
        crate::server::multi::client_closed(&mut *srv, token, &mut slot.client);
        srv.pubsub.remove_client(token, &mut slot.client.subs);
        crate::server::tracking::client_closed(&mut *srv, &mut slot.client);
        crate::replication::primary::client_closed(&mut *srv, token, now_ms());
    }
}

/// Takes the tokens of `of` out of `list` and returns them.
fn set_aside(list: &mut Vec<usize>, of: &[usize]) -> Vec<usize> {
    let mut aside = Vec::new();
    list.retain(|t| {
        let later = of.contains(t);
        if later {
            aside.push(*t);
        }
        !later
    });
    aside
}

/// Parse what the connection's query buffer holds into `pending`, at most `room` commands.
/// Returns true when it stopped at `room` with bytes left to parse. A protocol error is
/// kept in `error` and parsing stops there.
fn parse_into(
    conn: &mut Conn,
    limits: &ParseLimits,
    room: usize,
    pending: &mut VecDeque<Parsed>,
    error: &mut Option<ProtoError>,
) -> bool {
    let mut keys = KeyBuf::new();
    let mut parsed = 0;
    while error.is_none() {
        if parsed >= room {
            return !conn.qbuf.is_empty();
        }
        match conn.parser.parse(&mut conn.qbuf, limits) {
            Ok(Some(argv)) => {
                pending.push_back(Parsed::new(argv, &mut keys));
                parsed += 1;
            }
            Ok(None) => return false,
            Err(e) => *error = Some(e),
        }
    }
    false
}

/// A job for an I/O thread: the connection travels inside it.
pub enum IoJob {
    Read { token: usize, conn: Conn, qlimit: usize, plimits: ParseLimits, room: usize },
    Write { token: usize, conn: Conn, out: Reply, sent: usize },
}

/// What comes back from an I/O thread.
pub enum IoDone {
    Read {
        token: usize,
        conn: Conn,
        outcome: io::Result<ReadOutcome>,
        cmds: VecDeque<Parsed>,
        error: Option<ProtoError>,
        capped: bool,
    },
    Write {
        token: usize,
        conn: Conn,
        out: Reply,
        sent: usize,
        result: io::Result<usize>,
    },
}

/// Reads what the socket has, unless the client is already ahead: commands parsed and not
/// yet run (`room` below the maximum) and more than `READ_AHEAD_MAX` bytes unparsed. Then
/// nothing is read this turn (the socket stays unread, so TCP flow control slows a
/// pipelining client down, as Valkey's 16 KiB reads do) and the client is looked at again
/// next turn. Without this, a client writing faster than its commands run (`redis-cli
/// --pipe` of a large file) would fill its query buffer up to the limit and be closed.
fn read_some(
    conn: &mut Conn,
    scratch: &mut [u8],
    qlimit: usize,
    room: usize,
) -> io::Result<ReadOutcome> {
    if room < PENDING_CMDS_MAX && conn.qbuf.len() >= READ_AHEAD_MAX.min(qlimit / 2) {
        return Ok(ReadOutcome::Data { n: 0, more: true });
    }
    conn.read_available(scratch, qlimit)
}

/// Unparsed bytes a client may have queued before reading from it pauses (see `read_some`);
/// at most half the query buffer limit, so one turn's reads cannot reach the limit.
const READ_AHEAD_MAX: usize = 1 << 20;

/// The I/O threads' work: read and parse, or write. Never touches the keyspace.
fn io_work(worker: &mut Worker, job: IoJob) -> IoDone {
    match job {
        IoJob::Read { token, mut conn, qlimit, plimits, room } => {
            let outcome = read_some(&mut conn, &mut worker.scratch, qlimit, room);
            let mut cmds = VecDeque::new();
            let mut error = None;
            let mut capped = false;
            if matches!(outcome, Ok(ReadOutcome::Data { .. })) {
                capped = parse_into(&mut conn, &plimits, room, &mut cmds, &mut error);
            }
            IoDone::Read { token, conn, outcome, cmds, error, capped }
        }
        IoJob::Write { token, mut conn, out, mut sent } => {
            let result = conn.write_pending(&out, &mut sent);
            IoDone::Write { token, conn, out, sent, result }
        }
    }
}
