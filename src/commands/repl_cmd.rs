//! Replication commands of a primary: SYNC and PSYNC (a replica attaches), REPLCONF (its
//! handshake and acknowledgements), WAIT (a client waits for replicas to acknowledge its
//! writes) and ROLE. The work is the replication layer's (`replication::primary`); these
//! handlers parse and answer.

use bytes::Bytes;

use crate::commands::server_cmd::parse_timeout_ms;
use crate::commands::table::Server;
use crate::commands::table::{acl, flag, Command};
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::replication::primary::{self, ReplconfReply};
use crate::replication::{failover, replica};
use crate::replication::{AofWait, Waiter};
use crate::server::blocking::{BlockRequest, TimeoutReply};
use crate::server::client::ClientKind;
use crate::types::string::parse_i64;

const SYNC_FLAGS: u64 = flag::ADMIN | flag::NOSCRIPT | flag::NO_ASYNC_LOADING | flag::NO_MULTI;
const ACL_ADMIN: u64 = acl::ADMIN | acl::SLOW | acl::DANGEROUS;

pub static COMMANDS: &[Command] = &[
    Command::new("sync", 1, SYNC_FLAGS, ACL_ADMIN, Server(sync))
        .doc("server", "1.0.0", "An internal command used in replication.", ""),
    Command::new("psync", -3, SYNC_FLAGS, ACL_ADMIN, Server(sync))
        .doc("server", "2.8.0", "An internal command used in replication.", ""),
    Command::new("waitaof", 4, flag::BLOCKING, acl::SLOW | acl::CONNECTION | acl::BLOCKING, Server(waitaof))
        .doc(
            "generic",
            "7.2.0",
            "Blocks until all of the preceding write commands sent by the connection are written to the append-only file of the primary and/or replicas.",
            "O(1)",
        )
        .tips(&["request_policy:all_shards", "response_policy:agg_min"]),
    Command::new(
        "replconf",
        -1,
        flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::ALLOW_BUSY,
        ACL_ADMIN,
        Server(replconf),
    )
    .doc_flags(&["syscmd"])
    .doc("server", "3.0.0", "An internal command for configuring the replication stream.", "O(1)"),
    Command::new("wait", 3, flag::BLOCKING, acl::SLOW | acl::CONNECTION | acl::BLOCKING, Server(wait))
        .doc(
            "generic",
            "3.0.0",
            "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.",
            "O(1)",
        )
        .tips(&["request_policy:all_shards", "response_policy:agg_min"]),
    Command::new(
        "role",
        1,
        flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::FAST,
        acl::ADMIN | acl::FAST | acl::DANGEROUS,
        Server(role),
    )
    .doc("server", "2.8.12", "Returns the replication role.", "O(1)"),
    Command::new("replicaof", 3, REPLICAOF_FLAGS, ACL_ADMIN, Server(replicaof))
        .doc("server", "5.0.0", "Configures a server as replica of another, or promotes it to a primary.", "O(1)"),
    Command::new("failover", -1, flag::ADMIN | flag::NOSCRIPT | flag::STALE, ACL_ADMIN, Server(failover_cmd))
        .doc("server", "6.2.0", "Starts a coordinated failover from a server to one of its replicas.", "O(1)"),
    Command::new("slaveof", 3, REPLICAOF_FLAGS, ACL_ADMIN, Server(replicaof))
        .doc_flags(&["deprecated"])
        .deprecated("5.0.0", "`REPLICAOF`")
        .doc("server", "1.0.0", "Sets a server as a replica of another, or promotes it to being a primary.", "O(1)"),
];

/// FAILOVER [TO host port [FORCE]] [TIMEOUT ms] | ABORT, parsed as Valkey parses it.
fn failover_cmd(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if argv.len() == 2 && argv[1].eq_ignore_ascii_case(b"abort") {
        if !failover::in_progress(ctx.srv) {
            return Err(CmdError::Raw(b"ERR No failover in progress.".to_vec()));
        }
        failover::abort(ctx.srv, "Failover manually aborted", ctx.now_ms);
        ctx.out.ok();
        return Ok(());
    }
    let (mut timeout_ms, mut force, mut target) = (0i64, false, None);
    let mut j = 1;
    while j < argv.len() {
        let a = &argv[j];
        if a.eq_ignore_ascii_case(b"timeout") && j + 1 < argv.len() && timeout_ms == 0 {
            timeout_ms = parse_i64(&argv[j + 1]).ok_or(CmdError::NotInteger)?;
            if timeout_ms <= 0 {
                return Err(CmdError::Raw(b"ERR FAILOVER timeout must be greater than 0".to_vec()));
            }
            j += 2;
        } else if a.eq_ignore_ascii_case(b"to") && j + 2 < argv.len() && target.is_none() {
            let port = parse_i64(&argv[j + 2]).ok_or(CmdError::NotInteger)?;
            let host = String::from_utf8_lossy(&argv[j + 1]).into_owned();
            // A port out of range matches no replica.
            target = Some((host, u16::try_from(port).unwrap_or(0)));
            j += 3;
        } else if a.eq_ignore_ascii_case(b"force") && !force {
            force = true;
            j += 1;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    failover::start(ctx.srv, target, force, timeout_ms, ctx.now_ms)
        .map_err(|e| CmdError::Raw(e.as_bytes().to_vec()))?;
    ctx.out.ok();
    Ok(())
}

const REPLICAOF_FLAGS: u64 = flag::ADMIN | flag::NOSCRIPT | flag::STALE | flag::NO_ASYNC_LOADING;

/// REPLICAOF host port | NO ONE (and SLAVEOF).
fn replicaof(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if failover::in_progress(ctx.srv) {
        return Err(CmdError::Raw(b"ERR REPLICAOF not allowed while failing over.".to_vec()));
    }
    if argv[1].eq_ignore_ascii_case(b"no") && argv[2].eq_ignore_ascii_case(b"one") {
        if ctx.srv.is_replica {
            replica::promote(ctx.srv, ctx.now_ms);
        }
        ctx.out.ok();
        return Ok(());
    }
    if ctx.client.kind == ClientKind::Replica {
        return Err(CmdError::Raw(b"ERR Command is not valid when client is a replica.".to_vec()));
    }
    let port = parse_i64(&argv[2])
        .and_then(|p| u16::try_from(p).ok())
        .ok_or_else(|| CmdError::Raw(b"ERR Invalid master port".to_vec()))?;
    let host = String::from_utf8_lossy(&argv[1]).into_owned();
    let same = crate::replication::peek(&*ctx.srv.repl)
        .and_then(|r| r.link.as_ref())
        .is_some_and(|l| l.host.eq_ignore_ascii_case(&host) && l.port == port);
    if same {
        ctx.out.simple("OK Already connected to specified master");
        return Ok(());
    }
    replica::set_primary(ctx.srv, &host, port, ctx.now_ms);
    ctx.out.ok();
    Ok(())
}

/// SYNC, or PSYNC replid offset: the client becomes a replica once the command is over
/// (`replication::primary::before_replies` answers it). A replica asking again is ignored.
fn sync(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if ctx.client.kind == ClientKind::Replica {
        return Ok(());
    }
    // PSYNC <our replid> <offset> FAILOVER: our primary hands its role over to us.
    if argv.len() > 3
        && argv[0].eq_ignore_ascii_case(b"psync")
        && argv[3].eq_ignore_ascii_case(b"failover")
    {
        tracing::info!(
            "Failover request received for replid {}.",
            String::from_utf8_lossy(&argv[1])
        );
        if !ctx.srv.is_replica {
            return Err(CmdError::Raw(b"ERR PSYNC FAILOVER can't be sent to a master.".to_vec()));
        }
        if !argv[1].eq_ignore_ascii_case(ctx.srv.replid.as_bytes()) {
            return Err(CmdError::Raw(b"ERR PSYNC FAILOVER replid must match my replid.".to_vec()));
        }
        replica::promote(ctx.srv, ctx.now_ms);
        tracing::info!("PRIMARY MODE enabled (failover request from '{}')", ctx.client.addr);
    }
    if failover::in_progress(ctx.srv) {
        return Err(CmdError::Raw(b"NOMASTERLINK Can't SYNC while failing over".to_vec()));
    }
    if ctx.srv.is_replica && !replica::link_up(ctx.srv) {
        return Err(CmdError::Raw(
            b"NOMASTERLINK Can't SYNC while not connected with my master".to_vec(),
        ));
    }
    let psync = if argv[0].eq_ignore_ascii_case(b"psync") {
        let offset = parse_i64(&argv[2]).ok_or(CmdError::NotInteger)?;
        Some((String::from_utf8_lossy(&argv[1]).into_owned(), offset))
    } else {
        None
    };
    primary::request_sync(ctx.srv, ctx.slot, ctx.client, psync);
    Ok(())
}

fn replconf(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    match primary::replconf(ctx.srv, ctx.slot, ctx.client, argv, ctx.now_ms)? {
        ReplconfReply::Ok => ctx.out.ok(),
        ReplconfReply::Nothing => {}
    }
    Ok(())
}

/// WAIT numreplicas timeout: the number of replicas that acknowledged this client's writes,
/// at once when enough have (or the client cannot block), else when enough do or the time
/// is up.
fn wait(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if ctx.srv.is_replica {
        return Err(CmdError::WaitOnReplica);
    }
    let wanted = parse_i64(&argv[1]).ok_or(CmdError::NotInteger)?;
    let deadline = parse_timeout_ms(&argv[2], ctx.now_ms)?;
    // This client's last write (as Valkey: a client that wrote nothing waits for nothing).
    let offset = ctx.client.woff;
    let acked = primary::acked(ctx.srv, offset);
    if wanted <= acked as i64 || ctx.client.in_exec {
        ctx.out.int(acked as i64);
        return Ok(());
    }
    block_for_acks(ctx, deadline, offset, wanted as usize, None);
    Ok(())
}

/// Blocks the client of a WAIT or WAITAOF until the replication layer answers it (enough
/// acknowledgements, or `deadline`, 0 for never).
fn block_for_acks(
    ctx: &mut ServerCtx,
    deadline: i64,
    offset: i64,
    numreplicas: usize,
    aof: Option<AofWait>,
) {
    let deadline_ms = (deadline != 0).then_some(deadline);
    ctx.client.block_request = Some(BlockRequest {
        keys: Vec::new(),
        timeout_at_ms: deadline_ms,
        on_timeout: TimeoutReply::NullArray,
        argv: None,
    });
    let w = Waiter { token: ctx.slot, offset, numreplicas, deadline_ms, aof };
    primary::wait_for(ctx.srv, w);
}

/// WAITAOF numlocal numreplicas timeout: whether the local AOF (numlocal 1) and how many
/// replicas' AOFs hold this client's writes on disk, `[local, replicas]`; at once when the
/// counts are met (or the client cannot block), else when they are or the time is up.
fn waitaof(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let numlocal = parse_i64(&argv[1]).ok_or(CmdError::NotInteger)?;
    if !(0..=1).contains(&numlocal) {
        return Err(CmdError::OutOfRangeBetween { min: 0, max: 1 });
    }
    // Valkey's positive-number parse: one message for "not a number" and "negative".
    let numreplicas =
        parse_i64(&argv[2]).filter(|&n| n >= 0).ok_or(CmdError::OutOfRangePositive)?;
    let deadline = parse_timeout_ms(&argv[3], ctx.now_ms)?;
    if ctx.srv.is_replica {
        return Err(CmdError::Raw(
            b"ERR WAITAOF cannot be used with replica instances. Please also note that writes \
              to replicas are just local and are not propagated."
                .to_vec(),
        ));
    }
    let on_disk = primary::local_aof_on_disk(ctx.srv);
    if numlocal == 1 && on_disk.is_none() {
        return Err(CmdError::Raw(primary::WAITAOF_AOF_OFF.as_bytes().to_vec()));
    }
    let (offset, local_pos) = (ctx.client.woff, ctx.client.aof_woff);
    let replicas = primary::aof_acked(ctx.srv, offset);
    let local = on_disk.is_some_and(|d| d >= local_pos);
    if (replicas as i64 >= numreplicas && (local || numlocal == 0)) || ctx.client.in_exec {
        ctx.out.array(2);
        ctx.out.int(local as i64);
        ctx.out.int(replicas as i64);
        return Ok(());
    }
    let aof = Some(AofWait { numlocal: numlocal == 1, local_pos });
    block_for_acks(ctx, deadline, offset, numreplicas as usize, aof);
    Ok(())
}

/// ROLE of a primary: `master`, its replication offset and its online replicas (ip, port,
/// acknowledged offset each).
fn role(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let r = crate::replication::peek(&*ctx.srv.repl);
    let offset = primary::write_offset(ctx.srv);
    if let Some(link) = r.and_then(|r| r.link.as_ref()) {
        // A replica: its primary, the link's state and the offset it processed.
        let out = &mut *ctx.out;
        out.array(5);
        out.bulk(b"slave");
        out.bulk(link.host.as_bytes());
        out.int(link.port as i64);
        out.bulk(match link.state {
            replica::LinkState::Connect => b"connect".as_slice(),
            replica::LinkState::Connecting => b"sync",
            replica::LinkState::Connected => b"connected",
        });
        out.int(if link.state == replica::LinkState::Connected { offset } else { -1 });
        return Ok(());
    }
    let out = &mut *ctx.out;
    out.array(3);
    out.bulk(b"master");
    out.int(offset);
    primary::role_replicas(ctx.srv, out);
    Ok(())
}
