//! The replica's side: `REPLICAOF host port` links this server to a primary. A thread does
//! the blocking part, off the event loop: it connects, runs the handshake (`PING`, `AUTH`,
//! `REPLCONF listening-port`, `REPLCONF capa eof capa psync2`, `PSYNC`), and on
//! `+FULLRESYNC` downloads the snapshot (`$<length>` or `$EOF:<mark>` framing) into the RDB
//! file. The main thread then loads the file into fresh databases and installs them, and the
//! runtime registers the socket as the primary's client: the stream runs through dispatch
//! like any client's commands, its replies dropped.
//!
//! ```text
//!  REPLICAOF ─► Connecting (thread: handshake, download) ─► channel ─► load, install
//!                  ▲                                                   │ primary client
//!                  └──── link lost: PSYNC <replid> <offset+1> ◄─── Connected (ACK each s)
//! ```
//!
//! The stream bytes are proxied, as received, into this server's own backlog (and to its
//! own replicas): its offsets are the primary's, so after a promotion (`REPLICAOF NO ONE`)
//! its replicas, and its old primary, can continue with a partial resync.

use std::io::{self, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender, TryRecvError};

use crate::replication::load::{self, Loaded};
use crate::replication::wire::{Transfer, Wire};
use crate::replication::{backlog::Backlog, installed, state, Replication, NO_REPLID};
use crate::server::state::ServerState;
use crate::util::rng::random_hex;

/// Where the link to the primary stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// Waiting to try (again).
    Connect,
    /// The handshake thread runs.
    Connecting,
    /// The stream flows from the primary's client.
    Connected,
}

/// The link to the primary.
#[derive(Debug)]
pub struct Link {
    pub host: String,
    pub port: u16,
    pub state: LinkState,
    pub primary_token: Option<usize>,
    rx: Option<Receiver<FromThread>>,
    pub retry_at_ms: i64,
    /// When the link went down (INFO `master_link_down_since_seconds`).
    pub down_since_ms: i64,
    /// An acknowledgement was asked for (`REPLCONF GETACK`).
    pub ack_wanted: bool,
    /// This link is a FAILOVER's: PSYNC asks the target to take over.
    pub failover: bool,
    pub last_ack_ms: i64,
    /// What this replica's AOF holds on disk, for `REPLCONF ACK .. FACK`: pairs of (local
    /// AOF stream position, primary offset it had reached then) not yet known synced, oldest
    /// first (at most [`FACK_MARKS_MAX`]), and the last offset known synced.
    fack_marks: std::collections::VecDeque<(u64, i64)>,
    fack: i64,
    /// The running full sync's transfer (INFO `master_sync_*`), a new one per attempt.
    pub transfer: Arc<Transfer>,
    /// This attempt loads a snapshot from the socket while the dataset is served (INFO
    /// `async_loading`).
    pub diskless: bool,
}

/// Most (AOF position, offset) pairs a link keeps for FACK: when more are pending (the
/// disk far behind), the oldest go and FACK only lags further.
const FACK_MARKS_MAX: usize = 64;

impl Link {
    /// The primary offset this replica's AOF holds on disk, given that the AOF stream is fed
    /// up to `fed` now (everything up to `offset` applied) and on disk up to `on_disk`.
    fn fsynced_offset(&mut self, offset: i64, fed: u64, on_disk: u64) -> i64 {
        if self.fack_marks.back().is_none_or(|&(pos, _)| pos < fed) {
            if self.fack_marks.len() == FACK_MARKS_MAX {
                self.fack_marks.pop_front();
            }
            self.fack_marks.push_back((fed, offset));
        }
        while let Some(&(pos, off)) = self.fack_marks.front() {
            if pos > on_disk {
                break;
            }
            self.fack = self.fack.max(off);
            self.fack_marks.pop_front();
        }
        if on_disk >= fed {
            self.fack = self.fack.max(offset);
        }
        self.fack
    }
}

/// What the handshake thread tells the main thread.
enum FromThread {
    /// The primary announced a full sync, loaded diskless with `flush-before-load`: the
    /// dataset goes now.
    FlushNow,
    Done(Result<Synced, String>),
}

/// What the handshake thread hands back.
pub struct Synced {
    pub stream: TcpStream,
    pub outcome: Outcome,
    /// Stream bytes read past the snapshot.
    pub leftover: Vec<u8>,
}

pub enum Outcome {
    /// The snapshot is in the RDB file, or in `loaded` (a diskless load); the stream starts
    /// at `offset`.
    Full { replid: String, offset: i64, loaded: Option<Loaded> },
    /// `+CONTINUE [new replid]`: the stream goes on from our offset.
    Continue { replid: Option<String> },
}

/// A primary socket for the runtime to register as the primary's client.
pub struct Attach {
    pub stream: TcpStream,
    pub leftover: Vec<u8>,
}

/// `REPLICAOF host port`: follow a new primary. Its own history is offered for a partial
/// resync (`PSYNC <our replid> <our offset + 1>`), as Valkey does.
pub fn set_primary(srv: &mut ServerState, host: &str, port: u16, now_ms: i64) {
    let old_token = installed(srv).and_then(|r| r.link.as_ref()).and_then(|l| l.primary_token);
    if let Some(t) = old_token {
        srv.to_close.push(t);
    }
    let r = state(&mut srv.repl);
    // Valkey's `master_link_down_since_seconds`: -1 (0 here) until a link was up and lost;
    // leaving a connected primary counts as losing it.
    let down_since_ms = match &r.link {
        Some(l) if l.state == LinkState::Connected => now_ms,
        Some(l) => l.down_since_ms,
        None => 0,
    };
    if r.link.is_none() {
        tracing::info!(
            "Before turning into a replica, using my own primary parameters to synthesize a \
             cached primary: I may be able to synchronize with the new primary with just a \
             partial transfer."
        );
    }
    r.link = Some(Link {
        host: host.to_string(),
        port,
        state: LinkState::Connect,
        primary_token: None,
        rx: None,
        retry_at_ms: now_ms,
        down_since_ms,
        ack_wanted: false,
        failover: false,
        last_ack_ms: 0,
        fack_marks: Default::default(),
        fack: 0,
        transfer: Arc::default(),
        diskless: false,
    });
    // Our own replicas resync with us, and learn of the new history.
    let replicas: Vec<usize> = r.attached().map(|x| x.token).collect();
    srv.to_close.extend(replicas);
    srv.is_replica = true;
    crate::server::log::set_replica(true);
    srv.feed.repl_proxy = true;
    // CONFIG GET replicaof and CONFIG REWRITE show the primary followed now.
    srv.config.replication.replicaof = format!("{host} {port}");
    tracing::info!("Connecting to PRIMARY {host}:{port}");
}

/// FAILOVER's last step: follow the target, asking it to take over.
pub fn set_primary_for_failover(srv: &mut ServerState, host: &str, port: u16, now_ms: i64) {
    set_primary(srv, host, port, now_ms);
    if let Some(link) = state(&mut srv.repl).link.as_mut() {
        link.failover = true;
    }
}

/// `REPLICAOF NO ONE`: a primary again. The history so far stays ours under a new id, the
/// old one kept as `replid2` up to the current offset, so that replicas of the old primary
/// can continue from us (PSYNC2).
pub fn promote(srv: &mut ServerState, now_ms: i64) {
    let Some(r) = installed(srv) else { return };
    let Some(link) = r.link.take() else { return };
    if let Some(t) = link.primary_token {
        srv.to_close.push(t);
    }
    let r = state(&mut srv.repl);
    r.replid2 = srv.replid.clone();
    r.second_offset = r.offset + 1;
    srv.replid = random_hex(srv.rng.next_u64() ^ now_ms as u64, 40);
    srv.is_replica = false;
    crate::server::log::set_replica(false);
    srv.feed.repl_proxy = false;
    srv.feed.reselect();
    srv.config.replication.replicaof.clear();
    let r = state(&mut srv.repl);
    tracing::info!(
        "Setting secondary replication ID to {}, valid up to offset: {}. New replication ID \
         is {}",
        r.replid2,
        r.second_offset,
        srv.replid
    );
    tracing::info!("MASTER MODE enabled");
}

/// Every turn: starts the handshake thread when due, and takes its result: the snapshot
/// loaded and installed (or the partial resync accepted), the socket handed back for the
/// runtime to register.
pub fn poll(srv: &mut ServerState, now_ms: i64) -> Option<Attach> {
    let r = installed(srv)?;
    let link = r.link.as_mut()?;
    match link.state {
        LinkState::Connected => None,
        LinkState::Connect => {
            if now_ms >= link.retry_at_ms {
                start_thread(srv, now_ms);
            }
            None
        }
        LinkState::Connecting => {
            let rx = link.rx.as_ref()?;
            let got = match rx.try_recv() {
                Ok(FromThread::Done(got)) => got,
                Ok(FromThread::FlushNow) => {
                    load::flush_before_load(srv);
                    return None;
                }
                Err(TryRecvError::Empty) => return None,
                Err(TryRecvError::Disconnected) => Err("the sync thread ended".to_string()),
            };
            link.rx = None;
            let failover = link.failover;
            link.failover = false;
            match got {
                Ok(synced) => {
                    if failover {
                        crate::replication::failover::finished(srv);
                    }
                    finish_sync(srv, synced, now_ms)
                }
                Err(e) => {
                    tracing::warn!("Replication with PRIMARY failed: {e}");
                    link.state = LinkState::Connect;
                    link.retry_at_ms = now_ms + 1000;
                    if failover {
                        crate::replication::failover::abort(
                            srv,
                            "Failover target rejected psync request",
                            now_ms,
                        );
                    }
                    None
                }
            }
        }
    }
}

fn start_thread(srv: &mut ServerState, now_ms: i64) {
    let own_offset = installed(srv).map_or(0, |r| r.offset);
    let has_history = installed(srv).is_some_and(|r| r.backlog.is_some());
    let psync =
        if has_history { (srv.replid.clone(), own_offset + 1) } else { ("?".to_string(), -1) };
    let cfg = &srv.config;
    let transfer = Arc::<Transfer>::default();
    let mut job = Handshake {
        failover: false,
        transfer: transfer.clone(),
        listening_port: if cfg.replication.replica_announce_port != 0 {
            cfg.replication.replica_announce_port
        } else {
            srv.tcp_port
        },
        announce_ip: cfg.replication.replica_announce_ip.clone(),
        user: cfg.replication.primaryuser.clone(),
        pass: cfg.replication.primaryauth.clone(),
        psync,
        timeout: Duration::from_secs(cfg.replication.repl_timeout_secs.max(1) as u64),
        rdb_path: cfg.dbfilename.clone(),
        diskless: load::plan(srv),
    };
    let r = state(&mut srv.repl);
    let link = r.link.as_mut().expect("a link");
    let (host, port) = (link.host.clone(), link.port);
    link.transfer = transfer;
    link.diskless = job.diskless.is_some();
    job.failover = link.failover;
    // Room for both messages: the thread never waits for the loop.
    let (tx, rx) = crossbeam_channel::bounded(2);
    link.rx = Some(rx);
    link.state = LinkState::Connecting;
    link.retry_at_ms = now_ms + 1000;
    tracing::info!("PRIMARY <-> REPLICA sync started");
    let spawned = std::thread::Builder::new().name("repl-sync".into()).spawn(move || {
        let done = job.run(&host, port, &tx);
        let _ = tx.send(FromThread::Done(done));
    });
    if let Err(e) = spawned {
        tracing::warn!("Can't start the replication thread: {e}");
        link.state = LinkState::Connect;
        link.rx = None;
    }
}

/// The handshake's result, on the main thread.
fn finish_sync(srv: &mut ServerState, synced: Synced, now_ms: i64) -> Option<Attach> {
    match synced.outcome {
        Outcome::Full { replid, offset, loaded } => {
            if let Some(loaded) = loaded {
                load::install(srv, loaded);
            } else if !load_snapshot(srv, now_ms) {
                let link = state(&mut srv.repl).link.as_mut().expect("a link");
                link.state = LinkState::Connect;
                link.retry_at_ms = now_ms + 1000;
                return None;
            }
            srv.replid = replid;
            let r = state(&mut srv.repl);
            r.offset = offset;
            r.replid2 = NO_REPLID.to_string();
            r.second_offset = -1;
            let size = srv.config.replication.repl_backlog_size_bytes as usize;
            r.backlog = Some(Backlog::new(size, offset + 1));
            tracing::info!("PRIMARY <-> REPLICA sync: Finished with success");
        }
        Outcome::Continue { replid } => {
            if let Some(new) = replid.filter(|id| *id != srv.replid) {
                let r = state(&mut srv.repl);
                r.replid2 = std::mem::replace(&mut srv.replid, new);
                r.second_offset = r.offset + 1;
            }
            let r = state(&mut srv.repl);
            if r.backlog.is_none() {
                let size = srv.config.replication.repl_backlog_size_bytes as usize;
                r.backlog = Some(Backlog::new(size, r.offset + 1));
            }
            tracing::info!("Successful partial resynchronization with primary.");
        }
    }
    srv.feed.set_repl(true);
    srv.refresh_removal_log();
    let link = state(&mut srv.repl).link.as_mut().expect("a link");
    link.state = LinkState::Connected;
    link.last_ack_ms = 0;
    Some(Attach { stream: synced.stream, leftover: synced.leftover })
}

/// Replaces the dataset with the downloaded snapshot.
fn load_snapshot(srv: &mut ServerState, now_ms: i64) -> bool {
    tracing::info!("PRIMARY <-> REPLICA sync: Loading DB in memory");
    use crate::persist::save::{self, Duplicates, Flush, Reload, SaveFirst};
    let opts =
        Reload { save_first: SaveFirst::No, flush: Flush::Yes, duplicates: Duplicates::Fail };
    let read = save::reload(&mut crate::persist::store(srv), opts, now_ms);
    let Ok(r) = read else {
        tracing::warn!("Failed trying to load the PRIMARY synchronization DB from disk");
        return false;
    };
    srv.db_modified(None);
    save::install_reloaded(&mut crate::persist::store(srv), r, now_ms).is_ok()
}

/// Whether a snapshot is being loaded from the primary's socket (INFO `async_loading`).
pub fn loading_async(srv: &ServerState) -> bool {
    let link = crate::replication::peek(&*srv.repl).and_then(|r| r.link.as_ref());
    link.is_some_and(|l| {
        l.state == LinkState::Connecting && l.diskless && l.transfer.figures().is_some()
    })
}

/// The runtime registered the primary's client under `token`.
pub fn attached(srv: &mut ServerState, token: usize) {
    if let Some(link) = installed(srv).and_then(|r| r.link.as_mut()) {
        link.primary_token = Some(token);
    }
}

/// Whether the link to the primary is up (the stream flows).
pub fn link_up(srv: &ServerState) -> bool {
    crate::replication::peek(&*srv.repl)
        .and_then(|r| r.link.as_ref())
        .is_some_and(|l| l.state == LinkState::Connected)
}

/// The primary's client of this server, if connected.
pub fn primary_token(srv: &ServerState) -> Option<usize> {
    crate::replication::peek(&*srv.repl)?.link.as_ref()?.primary_token
}

/// A command from the primary ran: its bytes, as received, go to our backlog and replicas.
pub fn applied(srv: &mut ServerState, argv: &[bytes::Bytes]) {
    srv.feed.proxy(argv);
}

/// The primary's client left: try again, asking to continue from our offset.
pub fn primary_lost(r: &mut Replication, token: usize, now_ms: i64) {
    let Some(link) = r.link.as_mut() else { return };
    if link.primary_token != Some(token) {
        return;
    }
    tracing::info!("Connection with primary lost.");
    link.primary_token = None;
    link.state = LinkState::Connect;
    link.retry_at_ms = now_ms;
    link.down_since_ms = now_ms;
}

/// Once a second, and when the primary asked: `REPLCONF ACK <offset>` to the primary; and
/// the primary's silence past `repl-timeout` drops the link.
pub fn send_ack(srv: &mut ServerState, now_ms: i64, forced: bool) {
    // With an AOF: how far its stream is fed and how far it is on disk.
    let aof = crate::replication::primary::local_aof_on_disk(srv).map(|on_disk| {
        let written = crate::persist::peek(&*srv.persist).map_or(0, |p| p.aof.written_total);
        (written + srv.feed.buf.len() as u64, on_disk)
    });
    let Some(r) = installed(srv) else { return };
    let offset = r.offset;
    let Some(link) = r.link.as_mut() else { return };
    let Some(t) = link.primary_token else { return };
    if !forced && !link.ack_wanted && now_ms - link.last_ack_ms < 1000 {
        return;
    }
    link.ack_wanted = false;
    link.last_ack_ms = now_ms;
    let fack = aof.map(|(fed, on_disk)| link.fsynced_offset(offset, fed, on_disk).to_string());
    let timeout_ms = srv.config.replication.repl_timeout_secs.max(1) as i64 * 1000;
    let Some(slot) = srv.clients.get_mut(t) else { return };
    if now_ms - slot.client.last_interaction_ms > timeout_ms {
        tracing::warn!("MASTER timeout: no data nor PING received...");
        srv.to_close.push(t);
        return;
    }
    let mut buf = Vec::new();
    let off = offset.to_string();
    let mut ack = vec![b"REPLCONF".as_slice(), b"ACK", off.as_bytes()];
    if let Some(fack) = &fack {
        ack.extend([b"FACK".as_slice(), fack.as_bytes()]);
    }
    crate::server::propagate::append_command(&mut buf, &ack);
    let was_empty = slot.out.is_empty();
    slot.out.raw(&buf);
    if was_empty {
        srv.to_write.push(t);
    }
}

// ---------------------------------------------------------------------------------------
// The handshake thread

struct Handshake {
    /// Ask the primary to hand over (`PSYNC ... FAILOVER`).
    failover: bool,
    /// The snapshot's progress, for INFO.
    transfer: Arc<Transfer>,
    listening_port: u16,
    announce_ip: String,
    user: String,
    pass: String,
    psync: (String, i64),
    timeout: Duration,
    rdb_path: String,
    /// Load the snapshot from the socket (`repl-diskless-load`), not from the file.
    diskless: Option<load::Plan>,
}

impl Handshake {
    fn run(self, host: &str, port: u16, tx: &Sender<FromThread>) -> Result<Synced, String> {
        let addr = (host, port)
            .to_socket_addrs()
            .map_err(|e| format!("resolving {host}: {e}"))?
            .next()
            .ok_or_else(|| format!("no address for {host}"))?;
        let s = TcpStream::connect_timeout(&addr, self.timeout).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(self.timeout)).map_err(|e| e.to_string())?;
        let _ = s.set_nodelay(true);
        let mut w = Wire::new(s, self.transfer.clone());
        let e = |e: io::Error| e.to_string();
        let pong = w.command(&["PING"]).map_err(e)?;
        if pong.starts_with('-') && !pong.starts_with("-NOAUTH") {
            return Err(format!("Error reply to PING from primary: '{pong}'"));
        }
        if !self.pass.is_empty() {
            let reply = if self.user.is_empty() {
                w.command(&["AUTH", &self.pass])
            } else {
                w.command(&["AUTH", &self.user, &self.pass])
            }
            .map_err(e)?;
            if reply.starts_with('-') {
                return Err(format!("Unable to AUTH to PRIMARY: {reply}"));
            }
        }
        let port = self.listening_port.to_string();
        let reply = w.command(&["REPLCONF", "listening-port", &port]).map_err(e)?;
        if reply.starts_with('-') {
            tracing::info!(
                "(Non critical) Primary does not understand REPLCONF listening-port: {reply}"
            );
        }
        if !self.announce_ip.is_empty() {
            let reply = w.command(&["REPLCONF", "ip-address", &self.announce_ip]).map_err(e)?;
            if reply.starts_with('-') {
                tracing::info!(
                    "(Non critical) Primary does not understand REPLCONF ip-address: {reply}"
                );
            }
        }
        let reply = w.command(&["REPLCONF", "capa", "eof", "capa", "psync2"]).map_err(e)?;
        if reply.starts_with('-') {
            tracing::info!("(Non critical) Primary does not understand REPLCONF capa: {reply}");
        }
        let (id, off) = &self.psync;
        tracing::info!("Trying a partial resynchronization (request {id}:{off}).");
        let off = off.to_string();
        let reply = if self.failover {
            w.command(&["PSYNC", id, &off, "FAILOVER"])
        } else {
            w.command(&["PSYNC", id, &off])
        }
        .map_err(e)?;
        if let Some(rest) = reply.strip_prefix("+CONTINUE") {
            let replid = rest.trim();
            let replid = (!replid.is_empty()).then(|| replid.to_string());
            let leftover = w.leftover();
            w.s.set_read_timeout(None).map_err(|e| e.to_string())?;
            return Ok(Synced { stream: w.s, outcome: Outcome::Continue { replid }, leftover });
        }
        let Some(rest) = reply.strip_prefix("+FULLRESYNC ") else {
            return Err(format!("Unexpected reply to PSYNC from primary: {reply}"));
        };
        let mut parts = rest.split(' ');
        let replid = parts.next().unwrap_or_default().to_string();
        let offset: i64 = parts.next().and_then(|o| o.parse().ok()).ok_or("bad FULLRESYNC")?;
        tracing::info!("Full resync from primary: {replid}:{offset}");
        // `$<length>` or `$EOF:<mark>`, after keep-alive newlines.
        let head = w.reply().map_err(e)?;
        w.start_transfer(head.strip_prefix('$').and_then(|n| n.parse().ok()).unwrap_or(0));
        let loaded = match self.diskless {
            Some(plan) => {
                if plan.flush_first {
                    let _ = tx.send(FromThread::FlushNow);
                }
                Some(load::load(&mut w, &head, plan)?)
            }
            None => {
                self.download(&mut w, &head)?;
                None
            }
        };
        let leftover = w.leftover();
        w.s.set_read_timeout(None).map_err(|e| e.to_string())?;
        Ok(Synced { stream: w.s, outcome: Outcome::Full { replid, offset, loaded }, leftover })
    }

    /// The snapshot into a temporary file, renamed over the RDB file once complete.
    fn download(self, w: &mut Wire, head: &str) -> Result<(), String> {
        let e = |e: io::Error| e.to_string();
        let tmp = format!("temp-{}-{}.rdb", std::process::id(), crate::util::clock::now_ms());
        let mut file = std::fs::File::create(&tmp).map_err(|e| format!("{tmp}: {e}"))?;
        let result = (|| -> Result<(), String> {
            if let Some(mark) = head.strip_prefix("$EOF:") {
                let mark = mark.as_bytes().to_vec();
                if mark.len() != 40 {
                    return Err(format!("bad EOF mark {head}"));
                }
                tracing::info!("PRIMARY <-> REPLICA sync: receiving streamed RDB from primary with EOF to disk");
                // Everything up to the mark is the RDB; the last 40 bytes are kept back until
                // more arrives, in case they are the mark.
                let mut pending: Vec<u8> = Vec::new();
                loop {
                    if w.pos == w.buf.len() {
                        w.fill().map_err(e)?;
                    }
                    pending.extend_from_slice(&w.buf[w.pos..]);
                    w.pos = w.buf.len();
                    if let Some(i) = find(&pending, &mark) {
                        file.write_all(&pending[..i]).map_err(e)?;
                        // Whatever followed the mark is stream.
                        let after = pending[i + mark.len()..].to_vec();
                        w.buf = after;
                        w.pos = 0;
                        break;
                    }
                    let keep = pending.len().saturating_sub(mark.len());
                    file.write_all(&pending[..keep]).map_err(e)?;
                    pending.drain(..keep);
                }
            } else {
                let len: u64 =
                    head.strip_prefix('$').and_then(|n| n.parse().ok()).ok_or_else(|| {
                        format!("Bad protocol from PRIMARY, the first byte is not '$': {head}")
                    })?;
                tracing::info!(
                    "PRIMARY <-> REPLICA sync: receiving {len} bytes from primary to disk"
                );
                let mut left = len;
                while left > 0 {
                    if w.pos == w.buf.len() {
                        w.fill().map_err(e)?;
                    }
                    let take = (w.buf.len() - w.pos).min(left as usize);
                    file.write_all(&w.buf[w.pos..w.pos + take]).map_err(e)?;
                    w.pos += take;
                    left -= take as u64;
                }
            }
            file.sync_all().map_err(e)?;
            std::fs::rename(&tmp, &self.rdb_path).map_err(e)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
