//! The primary's side of replication: the handshake (`REPLCONF`), attaching replicas with
//! `SYNC`/`PSYNC`, moving the feed into the backlog and the replicas' output, their
//! acknowledgements, `WAIT`, the pings that keep idle links alive, and the timeouts.
//!
//! Commands only record what they ask for (a sync request, an acknowledgement); the event
//! loop calls [`before_replies`] after each batch of commands, when every client is back in
//! the client table, and that is where replicas are attached, fed and answered.

use crate::replication::{
    fullsync, installed, state, Replica, ReplicaState, Replication, SyncRequest, Waiter, NO_REPLID,
};
use crate::resp::reply::Reply;
use crate::server::client::{Client, ClientKind, ReplyMode};
use crate::server::obuf::Fanout;
use crate::server::state::ServerState;
use crate::spec::error::CmdError;
use crate::util::rng::random_hex;

/// What REPLCONF answers.
#[derive(Debug, PartialEq, Eq)]
pub enum ReplconfReply {
    Ok,
    /// ACK and GETACK are not answered.
    Nothing,
}

/// `REPLCONF <option> <value> ...` from the client of `token`.
pub fn replconf(
    srv: &mut ServerState,
    token: usize,
    client: &Client,
    argv: &[bytes::Bytes],
    now_ms: i64,
) -> Result<ReplconfReply, CmdError> {
    if argv.len().is_multiple_of(2) {
        return Err(CmdError::Syntax);
    }
    let r = state(&mut srv.repl);
    let mut i = 1;
    while i < argv.len() {
        let (opt, val) = (&argv[i], &argv[i + 1]);
        i += 2;
        let opt_is = |name: &str| opt.eq_ignore_ascii_case(name.as_bytes());
        if opt_is("ack") {
            // From an attached replica only; never answered.
            let Some(rep) = r.replica_mut(token) else { return Ok(ReplconfReply::Nothing) };
            let number = |v: &[u8]| std::str::from_utf8(v).ok().and_then(|v| v.parse::<i64>().ok());
            if let Some(off) = number(val) {
                if off > rep.ack_offset {
                    rep.ack_offset = off;
                }
                rep.ack_ms = now_ms;
            }
            // `ACK <offset> FACK <aof offset>`: how much its AOF holds on disk.
            if let [fack, off, ..] = &argv[i..] {
                if fack.eq_ignore_ascii_case(b"fack") {
                    if let Some(off) = number(off) {
                        rep.aof_ack_offset = rep.aof_ack_offset.max(off);
                    }
                }
            }
            return Ok(ReplconfReply::Nothing);
        }
        if opt_is("getack") {
            // From our primary: acknowledge before the next sleep. A primary ignores it.
            if client.kind == ClientKind::Primary {
                if let Some(link) = r.link.as_mut() {
                    link.ack_wanted = true;
                }
            }
            return Ok(ReplconfReply::Nothing);
        }
        let rep = handshake_entry(r, token, client);
        if opt_is("listening-port") {
            let port = std::str::from_utf8(val).ok().and_then(|v| v.parse::<i64>().ok());
            let port = port.ok_or(CmdError::NotInteger)?;
            rep.listening_port = u16::try_from(port).map_err(|_| CmdError::NotInteger)?;
        } else if opt_is("ip-address") {
            let ip = String::from_utf8_lossy(val).into_owned();
            if ip.len() >= 46 {
                return Err(CmdError::Raw(
                    format!("ERR REPLCONF ip-address provided by replica instance is too long: {} bytes", ip.len())
                        .into_bytes(),
                ));
            }
            rep.announced_ip = Some(ip);
        } else if opt_is("capa") {
            if val.eq_ignore_ascii_case(b"eof") {
                rep.capa_eof = true;
            } else if val.eq_ignore_ascii_case(b"psync2") {
                rep.capa_psync2 = true;
            }
            // Other capabilities (dual-channel replication, ...) are not ours: ignored.
        } else if opt_is("version")
            || opt_is("rdb-only")
            || opt_is("rdb-filter-only")
            || opt_is("rdb-channel")
            || opt_is("fack")
        {
            // Accepted as Valkey accepts them; nothing here depends on them.
        } else {
            let mut text = b"ERR Unrecognized REPLCONF option: ".to_vec();
            text.extend_from_slice(opt);
            return Err(CmdError::Raw(text));
        }
    }
    Ok(ReplconfReply::Ok)
}

/// The registry entry of a client in its handshake, made on its first REPLCONF.
fn handshake_entry<'a>(r: &'a mut Replication, token: usize, client: &Client) -> &'a mut Replica {
    if let Some(i) = r.replicas.iter().position(|x| x.token == token) {
        return &mut r.replicas[i];
    }
    r.replicas.push(Replica {
        token,
        addr: client.addr.clone(),
        listening_port: 0,
        announced_ip: None,
        capa_eof: false,
        capa_psync2: false,
        state: ReplicaState::Handshake,
        ack_offset: 0,
        aof_ack_offset: 0,
        ack_ms: 0,
        pre_psync: false,
    });
    r.replicas.last_mut().expect("pushed above")
}

/// `SYNC` (psync None) or `PSYNC replid offset` from the client of `token`: recorded, and
/// handled by [`before_replies`] once the command is over. A replica asking again is
/// ignored, as in Valkey.
pub fn request_sync(
    srv: &mut ServerState,
    token: usize,
    client: &Client,
    psync: Option<(String, i64)>,
) {
    if client.kind == ClientKind::Replica {
        return;
    }
    let r = state(&mut srv.repl);
    handshake_entry(r, token, client);
    r.requests.push(SyncRequest { token, psync });
}

/// After a batch of commands, before replies are written: attach the replicas that asked,
/// move the feed into the backlog and to the replicas, start full syncs that are due and
/// answer the WAITs that can be answered.
pub fn before_replies(srv: &mut ServerState, now_ms: i64) {
    let Some(r) = installed(srv) else { return };
    let requests = std::mem::take(&mut r.requests);
    let getack = std::mem::take(&mut r.getack_wanted);
    drain_feed(srv);
    for req in requests {
        attach(srv, req, now_ms);
    }
    fullsync::start_if_due(srv, now_ms);
    if getack {
        srv.feed.repl_only(&[b"REPLCONF".as_slice(), b"GETACK", b"*"]);
        drain_feed(srv);
    }
    serve_waiters(srv, now_ms);
    crate::replication::shutdown::update(srv, now_ms);
    crate::replication::replica::send_ack(srv, now_ms, false);
}

/// Moves what the feed holds for replication into the backlog and the output of every
/// replica whose snapshot's offset is fixed.
pub fn drain_feed(srv: &mut ServerState) {
    if srv.feed.repl.is_empty() {
        return;
    }
    let ServerState { repl, feed, clients, to_write, to_close, config, stats, .. } = srv;
    let Some(r) = repl.downcast_mut::<Replication>() else {
        feed.repl.clear();
        return;
    };
    let bytes = &feed.repl;
    if let Some(b) = r.backlog.as_mut() {
        b.append(bytes);
    }
    r.offset += bytes.len() as i64;
    let mut fanout = Fanout::new(to_write, to_close, config, stats);
    for rep in r.replicas.iter().filter(|x| x.state.gets_stream()) {
        fanout.send(clients, rep.token, |out| {
            out.raw(bytes);
            true
        });
        r.stats.repl_output_bytes += bytes.len() as u64;
    }
    feed.repl.clear();
}

/// Makes the client of `req` a replica: at once with the backlog's tail when PSYNC can
/// continue, else queued for a full sync.
fn attach(srv: &mut ServerState, req: SyncRequest, now_ms: i64) {
    let Some(slot) = srv.clients.get_mut(req.token) else { return };
    if slot.client.kind == ClientKind::Replica || slot.client.close_asap {
        return;
    }
    let r = state(&mut srv.repl);
    let Some(rep) = r.replica(req.token) else { return };
    tracing::info!("Replica {} asks for synchronization", rep.name());
    if let Some((id, offset)) = &req.psync {
        if try_partial(srv, req.token, id, *offset, now_ms) {
            return;
        }
        if !id.starts_with('?') {
            state(&mut srv.repl).stats.partial_err += 1;
        }
    }
    if state(&mut srv.repl).backlog.is_none() {
        create_backlog(srv, now_ms);
    }
    let slot = srv.clients.get_mut(req.token).expect("checked above");
    slot.client.kind = ClientKind::Replica;
    slot.client.reply_mode = ReplyMode::Off;
    let r = state(&mut srv.repl);
    r.stats.full += 1;
    let rep = r.replica_mut(req.token).expect("checked above");
    rep.state = ReplicaState::WaitBgsave;
    rep.pre_psync = req.psync.is_none();
    rep.ack_ms = now_ms;
}

/// PSYNC's partial resync: the id is ours (or our previous one, up to where it was ours)
/// and the backlog still holds the offset asked for. Answers `+CONTINUE` and the backlog
/// from there; the replica is online.
fn try_partial(srv: &mut ServerState, token: usize, id: &str, offset: i64, now_ms: i64) -> bool {
    let ServerState { repl, replid, clients, to_write, .. } = srv;
    let r = state(repl);
    let ours = id.eq_ignore_ascii_case(replid)
        || (id.eq_ignore_ascii_case(&r.replid2) && offset <= r.second_offset);
    if !ours {
        if !id.starts_with('?') {
            tracing::info!(
                "Partial resynchronization not accepted: Replication ID mismatch (Replica asked \
                 for '{id}', my replication IDs are '{replid}' and '{}')",
                r.replid2
            );
        } else {
            tracing::info!("Full resync requested by replica {}", name_of(r, token));
        }
        return false;
    }
    let Some(backlog) = r.backlog.as_ref().filter(|b| b.covers(offset)) else {
        tracing::info!(
            "Unable to partial resync with replica {} for lack of backlog (Replica request \
             was: {offset}).",
            name_of(r, token)
        );
        return false;
    };
    let Some(slot) = clients.get_mut(token) else { return false };
    let psync2 = r.replica(token).is_some_and(|x| x.capa_psync2);
    if psync2 {
        slot.out.raw(format!("+CONTINUE {replid}\r\n").as_bytes());
    } else {
        slot.out.raw(b"+CONTINUE\r\n");
    }
    let mut sent = 0;
    backlog.read_from(offset, |s| {
        slot.out.raw(s);
        sent += s.len();
    });
    slot.client.kind = ClientKind::Replica;
    slot.client.reply_mode = ReplyMode::Off;
    to_write.push(token);
    r.stats.partial_ok += 1;
    r.stats.repl_output_bytes += sent as u64;
    let rep = r.replica_mut(token).expect("in the registry");
    rep.state = ReplicaState::Online;
    rep.ack_ms = now_ms;
    rep.ack_offset = offset - 1;
    tracing::info!(
        "Partial resynchronization request from {} accepted. Sending {sent} bytes of backlog \
         starting from offset {offset}.",
        rep.name()
    );
    true
}

fn name_of(r: &Replication, token: usize) -> String {
    r.replica(token).map(Replica::name).unwrap_or_default()
}

/// The first replica makes the backlog, under a new replication id (the stream it starts
/// is a new history).
fn create_backlog(srv: &mut ServerState, now_ms: i64) {
    let seed = srv.random() ^ now_ms as u64;
    srv.replid = random_hex(seed, 40);
    let r = state(&mut srv.repl);
    r.replid2 = NO_REPLID.to_string();
    r.second_offset = -1;
    let size = srv.config.replication.repl_backlog_size_bytes as usize;
    r.backlog = Some(crate::replication::backlog::Backlog::new(size, r.offset + 1));
    tracing::info!(
        "Replication backlog created, my new replication IDs are '{}' and '{}'",
        srv.replid,
        NO_REPLID
    );
    srv.feed.set_repl(true);
    srv.refresh_removal_log();
}

/// A client left: if it was a replica (or a WAIT), forget it.
pub fn client_closed(srv: &mut ServerState, token: usize, now_ms: i64) {
    let Some(r) = installed(srv) else { return };
    r.waiters.retain(|w| w.token != token);
    crate::replication::replica::primary_lost(r, token, now_ms);
    let Some(i) = r.replicas.iter().position(|x| x.token == token) else { return };
    let rep = r.replicas.swap_remove(i);
    if rep.state != ReplicaState::Handshake {
        tracing::info!("Connection with replica {} lost.", rep.name());
    }
    if r.attached().next().is_none() {
        r.no_replicas_since_ms = now_ms;
    }
}

// ---------------------------------------------------------------------------------------
// WAIT

/// The stream offset as of the last command: what was fed this turn counts, though it is
/// moved into the backlog only before replies (Valkey's offsets move per command). On a
/// replica the feed holds only the primary's stream, so this is the offset it processed.
pub fn write_offset(srv: &ServerState) -> i64 {
    let base = crate::replication::peek(&*srv.repl).map_or(0, |r| r.offset);
    base + srv.feed.repl.len() as i64
}

/// Online replicas that acknowledged `offset`.
pub fn acked(srv: &ServerState, offset: i64) -> usize {
    crate::replication::peek(&*srv.repl).map_or(0, |r| r.acked(offset))
}

/// Records a client blocked in WAIT; the replicas are asked to acknowledge before the loop
/// sleeps.
pub fn wait_for(srv: &mut ServerState, w: Waiter) {
    let r = state(&mut srv.repl);
    r.waiters.push(w);
    r.getack_wanted = true;
}

/// WAITAOF's refusal when `numlocal` is asked of a server whose AOF is off.
pub const WAITAOF_AOF_OFF: &str =
    "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.";

/// How far the local AOF stream is on disk, or None when the AOF is off.
pub fn local_aof_on_disk(srv: &ServerState) -> Option<u64> {
    let p = crate::persist::peek(&*srv.persist)?;
    p.aof.logging().then(|| p.aof.fsynced_upto())
}

/// Online replicas whose AOF holds `offset` on disk.
pub fn aof_acked(srv: &ServerState, offset: i64) -> usize {
    crate::replication::peek(&*srv.repl).map_or(0, |r| r.aof_acked(offset))
}

/// How a blocked WAIT or WAITAOF is answered.
#[derive(Debug, Clone, Copy)]
enum WaitAnswer {
    Replicas(usize),
    /// WAITAOF: whether the local AOF holds the writes, and the replicas whose AOF does.
    Aof(bool, usize),
    AofOff,
}

/// Answers the WAITs whose replicas acknowledged, or whose time is up, with the number of
/// replicas that acknowledged. Called every turn before blocked clients' timeouts.
pub fn serve_waiters(srv: &mut ServerState, now_ms: i64) {
    let local_aof = local_aof_on_disk(srv);
    let Some(r) = installed(srv) else { return };
    if r.waiters.is_empty() {
        return;
    }
    let mut done = Vec::new();
    let mut waiters = std::mem::take(&mut r.waiters);
    waiters.retain(|w| {
        let timed_out = w.deadline_ms.is_some_and(|d| d <= now_ms);
        let answer = match w.aof {
            None => {
                let n = r.acked(w.offset);
                (n >= w.numreplicas || timed_out).then_some(WaitAnswer::Replicas(n))
            }
            // The AOF was turned off while a WAITAOF waited for it.
            Some(a) if a.numlocal && local_aof.is_none() => Some(WaitAnswer::AofOff),
            Some(a) => {
                let n = r.aof_acked(w.offset);
                let local = local_aof.is_some_and(|on_disk| on_disk >= a.local_pos);
                let met = n >= w.numreplicas && (local || !a.numlocal);
                (met || timed_out).then_some(WaitAnswer::Aof(local, n))
            }
        };
        if let Some(answer) = answer {
            done.push((w.token, answer));
        }
        answer.is_none()
    });
    r.waiters = waiters;
    for (t, answer) in done {
        let Some(b) = srv.blocking.unblock(t) else { continue };
        let Some(mut slot) = srv.clients.lend(t) else { continue };
        slot.client.blocked = false;
        let mark = slot.out.len();
        match answer {
            WaitAnswer::Replicas(n) => slot.out.int(n as i64),
            WaitAnswer::Aof(local, n) => {
                slot.out.array(2);
                slot.out.int(local as i64);
                slot.out.int(n as i64);
            }
            WaitAnswer::AofOff => slot.out.error(WAITAOF_AOF_OFF),
        }
        let failed = matches!(answer, WaitAnswer::AofOff);
        let reply_bytes = slot.out.len().saturating_sub(mark) as u64;
        crate::server::calls::record_call(
            srv,
            &mut slot,
            b.cmd,
            &b.argv,
            failed,
            reply_bytes,
            now_ms,
        );
        srv.clients.put_back(t, slot);
        srv.to_write.push(t);
        srv.unblocked.push(t);
    }
}

// ---------------------------------------------------------------------------------------
// Time events

/// Once a second: pings, keep-alive newlines for replicas waiting for their snapshot,
/// timeouts, replicas whose file was sent going online, and the backlog's time to live.
pub fn cron(srv: &mut ServerState, now_ms: i64) {
    crate::replication::failover::update(srv, now_ms);
    let Some(r) = installed(srv) else { return };
    if now_ms / 1000 == r.last_cron_s {
        return;
    }
    r.last_cron_s = now_ms / 1000;
    fullsync::files_sent(srv);
    crate::replication::replica::send_ack(srv, now_ms, true);
    let period_ms = srv.config.replication.repl_ping_replica_period_secs.max(1) as i64 * 1000;
    let timeout_ms = srv.config.replication.repl_timeout_secs.max(1) as i64 * 1000;
    let r = state(&mut srv.repl);
    if !srv.is_replica && r.attached().next().is_some() && now_ms - r.last_ping_ms >= period_ms {
        r.last_ping_ms = now_ms;
        srv.feed.repl_only(&[b"ping".as_slice()]);
        drain_feed(srv);
    }
    let r = state(&mut srv.repl);
    let mut timed_out = Vec::new();
    for rep in &r.replicas {
        match rep.state {
            ReplicaState::WaitBgsave
            | ReplicaState::Transfer(crate::persist::bgsave::Target::Disk) => {
                if let Some(slot) = srv.clients.get_mut(rep.token) {
                    fullsync::keepalive(slot.client.fd);
                }
            }
            ReplicaState::Online if !rep.pre_psync && now_ms - rep.ack_ms > timeout_ms => {
                tracing::warn!("Disconnecting timedout replica (streaming sync): {}", rep.name());
                timed_out.push(rep.token);
            }
            _ => {}
        }
    }
    srv.to_close.extend(timed_out);
    let r = state(&mut srv.repl);
    let ttl_ms = srv.config.replication.repl_backlog_ttl_secs.saturating_mul(1000) as i64;
    if r.backlog.is_some()
        && ttl_ms > 0
        && r.attached().next().is_none()
        && now_ms - r.no_replicas_since_ms > ttl_ms
    {
        r.backlog = None;
        r.replid2 = NO_REPLID.to_string();
        r.second_offset = -1;
        srv.replid = random_hex(srv.rng.next_u64(), 40);
        srv.feed.set_repl(false);
        srv.refresh_removal_log();
        tracing::info!(
            "Replication backlog freed after {} seconds without connected replicas.",
            ttl_ms / 1000
        );
    }
    if let Some(b) = state(&mut srv.repl).backlog.as_mut() {
        let size = srv.config.replication.repl_backlog_size_bytes as usize;
        b.resize(size);
    }
    fullsync::start_if_due(srv, now_ms);
}

/// Replicas that acknowledged within `min-replicas-max-lag` seconds.
pub fn good_replicas(srv: &ServerState, now_ms: i64) -> usize {
    let max_lag_ms = srv.config.replication.min_replicas_max_lag_secs as i64 * 1000;
    crate::replication::peek(&*srv.repl).map_or(0, |r| {
        r.replicas
            .iter()
            .filter(|x| x.state == ReplicaState::Online && now_ms - x.ack_ms <= max_lag_ms)
            .count()
    })
}

/// Writes must be refused: fewer good replicas than `min-replicas-to-write`.
pub fn too_few_replicas(srv: &ServerState, now_ms: i64) -> bool {
    let min = srv.config.replication.min_replicas_to_write as usize;
    min > 0
        && srv.config.replication.min_replicas_max_lag_secs > 0
        && good_replicas(srv, now_ms) < min
}

/// Writes a reply line for ROLE: `[ip, port, offset]` per attached replica.
pub fn role_replicas(srv: &ServerState, out: &mut Reply) {
    let Some(r) = crate::replication::peek(&*srv.repl) else {
        out.array(0);
        return;
    };
    let online: Vec<&Replica> = r.attached().filter(|x| x.state == ReplicaState::Online).collect();
    out.array(online.len());
    for rep in online {
        out.array(3);
        out.bulk(rep.ip().as_bytes());
        out.bulk(rep.listening_port.to_string().as_bytes());
        out.bulk(rep.ack_offset.to_string().as_bytes());
    }
}
