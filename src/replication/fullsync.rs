//! Full syncs: a fork child writes a snapshot of the dataset for the replicas waiting for
//! one, to the RDB file (then the parent sends the file, `$<length>` and its bytes) or, with
//! `repl-diskless-sync yes` and replicas that can take it (`capa eof`), straight to their
//! sockets, framed as `$EOF:<40 random characters>\r\n<rdb><the same 40 characters>`.
//!
//! ```text
//!  PSYNC ─► WaitBgsave ── (delay over, no child) ─► +FULLRESYNC <replid> <offset>, fork
//!                                                   Transfer(Disk | Sockets): output held
//!  child ok ─► Disk: SendFile (the file, then the held stream) ─► Online
//!          └─► Sockets: Online (the held stream goes out)
//!  child failed ─► the replicas are disconnected; they retry
//! ```
//!
//! The `+FULLRESYNC` line is written to the socket directly, right before the fork, as
//! Valkey does: from that moment the client's output buffer collects the stream, held back
//! until the snapshot has gone out. While the diskless child writes to a replica's socket
//! the parent writes nothing to it.

use std::io::{self, Write};

use crate::persist::bgsave::{self, Finished, Target};
use crate::replication::{installed, primary, state, ReplicaState};
use crate::server::state::{Preamble, ServerState, Slot};
use crate::util::rng::random_hex;

/// Starts a full sync for the replicas waiting for one when none runs and its moment has
/// come: at once to disk; after `repl-diskless-sync-delay` seconds (or as soon as
/// `repl-diskless-sync-max-replicas` wait) when diskless.
pub fn start_if_due(srv: &mut ServerState, now_ms: i64) {
    let Some(r) = installed(srv) else { return };
    let waiting: Vec<&crate::replication::Replica> =
        r.replicas.iter().filter(|x| x.state == ReplicaState::WaitBgsave).collect();
    if waiting.is_empty() {
        return;
    }
    let all_eof = waiting.iter().all(|x| x.capa_eof);
    // When the first of them asked (`ack_ms` is set when a replica starts waiting).
    let oldest_ms = waiting.iter().map(|x| x.ack_ms).min().unwrap_or(now_ms);
    let waiting: Vec<usize> = waiting.iter().map(|x| x.token).collect();
    if crate::persist::peek(&*srv.persist).is_some_and(crate::persist::aof::any_child) {
        return;
    }
    let cfg = &srv.config.replication;
    let target = if cfg.repl_diskless_sync && all_eof { Target::Sockets } else { Target::Disk };
    if target == Target::Sockets {
        let max = cfg.repl_diskless_sync_max_replicas as usize;
        let delay_ms = cfg.repl_diskless_sync_delay_secs as i64 * 1000;
        let enough = max > 0 && waiting.len() >= max;
        if !enough && now_ms - oldest_ms < delay_ms {
            return;
        }
    }
    start(srv, target, &waiting, now_ms);
}

fn start(srv: &mut ServerState, target: Target, tokens: &[usize], now_ms: i64) {
    primary::drain_feed(srv);
    let offset = state(&mut srv.repl).offset;
    let line = format!("+FULLRESYNC {} {offset}\r\n", srv.replid);
    let timeout_ms = srv.config.replication.repl_timeout_secs.max(1) as i64 * 1000;
    let mut fds = Vec::new();
    let mut started = Vec::new();
    for &t in tokens {
        let pre_psync = state(&mut srv.repl).replica(t).is_some_and(|x| x.pre_psync);
        let Some(slot) = srv.clients.get_mut(t) else { continue };
        let fd = slot.client.fd;
        let written = flush_now(slot, timeout_ms).and_then(|()| {
            if pre_psync {
                Ok(())
            } else {
                write_fd_all(fd, line.as_bytes(), timeout_ms)
            }
        });
        if let Err(e) = written {
            tracing::warn!("Can't start a full sync with replica {}: {e}", slot.client.addr);
            srv.to_close.push(t);
            continue;
        }
        fds.push(fd);
        started.push(t);
    }
    if started.is_empty() {
        return;
    }
    let what = match target {
        Target::Disk => "disk",
        Target::Sockets => "replicas sockets",
    };
    tracing::info!("Starting BGSAVE for SYNC with target: {what}");
    let result = {
        let store = &mut crate::persist::store(srv);
        match target {
            Target::Disk => bgsave::start(store, now_ms),
            Target::Sockets => {
                let mark = random_hex(now_ms as u64 ^ offset as u64 ^ 0x5bd1_e995, 40);
                bgsave::start_child(store, Target::Sockets, now_ms, |snapshot| {
                    write_to_sockets(snapshot, &fds, &mark, now_ms, timeout_ms).is_ok()
                })
            }
        }
    };
    if let Err(e) = result {
        tracing::warn!("BGSAVE for replication failed: {e:?}");
        srv.to_close.extend(started);
        return;
    }
    // The stream after the snapshot starts with a SELECT.
    srv.feed.reselect();
    for &t in &started {
        if let Some(slot) = srv.clients.get_mut(t) {
            slot.held = true;
        }
        if let Some(rep) = state(&mut srv.repl).replica_mut(t) {
            rep.state = ReplicaState::Transfer(target);
        }
    }
}

/// Writes what the client's output holds, now, to its socket (before `+FULLRESYNC`).
fn flush_now(slot: &mut Slot, timeout_ms: i64) -> io::Result<()> {
    let mut slices = [io::IoSlice::new(&[]); 16];
    loop {
        let n = slot.out.gather(slot.sent, usize::MAX, &mut slices);
        if n == 0 {
            break;
        }
        for s in &slices[..n] {
            write_fd_all(slot.client.fd, s, timeout_ms)?;
            slot.sent += s.len();
        }
    }
    slot.out.clear();
    slot.sent = 0;
    Ok(())
}

/// The fork child's work for a diskless sync: the framed snapshot to every socket. A
/// replica that fails (gone, or not reading for `repl-timeout`) is dropped and the others
/// go on; the child fails when none is left.
fn write_to_sockets(
    snapshot: &crate::persist::Store<'_>,
    fds: &[i32],
    mark: &str,
    now_ms: i64,
    timeout_ms: i64,
) -> io::Result<()> {
    let sockets = Sockets { fds: fds.iter().map(|&fd| (fd, true)).collect(), timeout_ms };
    let mut out = io::BufWriter::with_capacity(64 * 1024, sockets);
    out.write_all(format!("$EOF:{mark}\r\n").as_bytes())?;
    let mut out = crate::persist::save::write_to(snapshot, out, now_ms)?;
    out.write_all(mark.as_bytes())?;
    out.flush()
}

/// Every replica socket of a diskless transfer, as one writer.
struct Sockets {
    fds: Vec<(i32, bool)>,
    timeout_ms: i64,
}

impl Write for Sockets {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for (fd, alive) in self.fds.iter_mut().filter(|(_, a)| *a) {
            if write_fd_all(*fd, buf, self.timeout_ms).is_err() {
                *alive = false;
            }
        }
        if self.fds.iter().any(|&(_, a)| a) {
            Ok(buf.len())
        } else {
            Err(io::ErrorKind::BrokenPipe.into())
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes all of `buf` to the (non-blocking) socket `fd`, waiting up to `timeout_ms` each
/// time it is full.
fn write_fd_all(fd: i32, mut buf: &[u8], timeout_ms: i64) -> io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: sending from a live slice to a descriptor this process holds open;
        // MSG_NOSIGNAL turns a closed peer into EPIPE instead of a signal.
        let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) };
        if n >= 0 {
            buf = &buf[n as usize..];
            continue;
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::Interrupted => {}
            io::ErrorKind::WouldBlock => {
                let mut pfd = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
                let wait = timeout_ms.clamp(1, i32::MAX as i64) as i32;
                // SAFETY: polling one valid pollfd.
                let r = unsafe { libc::poll(&mut pfd, 1, wait) };
                if r == 0 {
                    return Err(io::ErrorKind::TimedOut.into());
                }
                if r < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                    return Err(io::Error::last_os_error());
                }
            }
            _ => return Err(err),
        }
    }
    Ok(())
}

/// A newline to a replica waiting for its snapshot, so that its link does not time out
/// (Valkey's replicas skip newlines where a reply or a payload header is expected).
pub fn keepalive(fd: i32) {
    // SAFETY: a one-byte send on a descriptor this process holds open; the result only
    // matters to the peer.
    unsafe { libc::send(fd, b"\n".as_ptr().cast(), 1, libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
}

/// A fork child of full syncs ended (from the time events): its replicas get their file or
/// their held stream, or are disconnected when it failed.
pub fn child_done(srv: &mut ServerState, finished: Finished, now_ms: i64) {
    let Some(r) = installed(srv) else { return };
    let tokens: Vec<usize> = r
        .replicas
        .iter()
        .filter(|x| x.state == ReplicaState::Transfer(finished.target))
        .map(|x| x.token)
        .collect();
    if tokens.is_empty() {
        start_if_due(srv, now_ms);
        return;
    }
    let file = match (finished.ok, finished.target) {
        (true, Target::Disk) => open_rdb(srv).map(Some),
        (true, Target::Sockets) => Ok(None),
        (false, _) => Err(io::Error::other("the child failed")),
    };
    for t in tokens {
        let outcome = match &file {
            Ok(f) => go_on(srv, t, f.as_ref(), now_ms),
            Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
        };
        if let Err(e) = outcome {
            let name = state(&mut srv.repl).replica(t).map(|x| x.name()).unwrap_or_default();
            tracing::warn!("Full sync with replica {name} failed: {e}");
            srv.to_close.push(t);
        }
    }
    start_if_due(srv, now_ms);
}

fn open_rdb(srv: &ServerState) -> io::Result<(std::fs::File, u64)> {
    let f = std::fs::File::open(&srv.config.dbfilename)?;
    let len = f.metadata()?.len();
    Ok((f, len))
}

/// After the child: the file to send first (disk), or nothing (diskless); the output is
/// released.
fn go_on(
    srv: &mut ServerState,
    t: usize,
    file: Option<&(std::fs::File, u64)>,
    now_ms: i64,
) -> io::Result<()> {
    let Some(slot) = srv.clients.get_mut(t) else { return Ok(()) };
    slot.held = false;
    let online = match file {
        Some((f, len)) => {
            slot.preamble = Some(Box::new(Preamble::new(f.try_clone()?, *len)));
            false
        }
        None => true,
    };
    if slot.has_output() {
        srv.to_write.push(t);
    }
    let rep = state(&mut srv.repl).replica_mut(t).expect("a replica in transfer");
    rep.ack_ms = now_ms;
    if online {
        rep.state = ReplicaState::Online;
        tracing::info!("Synchronization with replica {} succeeded", rep.name());
    } else {
        rep.state = ReplicaState::SendFile;
    }
    Ok(())
}

/// Replicas whose RDB file has been sent are online (from the time events).
pub fn files_sent(srv: &mut ServerState) {
    let ServerState { repl, clients, .. } = srv;
    let Some(r) = repl.downcast_mut::<crate::replication::Replication>() else { return };
    for rep in r.replicas.iter_mut().filter(|x| x.state == ReplicaState::SendFile) {
        if clients.get_mut(rep.token).is_some_and(|s| s.preamble.is_none()) {
            rep.state = ReplicaState::Online;
            tracing::info!("Synchronization with replica {} succeeded", rep.name());
        }
    }
}
