//! Dispatch: from argv to a handler. Looks the command up in the table, checks arity,
//! authentication and pause, runs the handler, renders its error, and keeps the per-command
//! statistics, the slow log and the MONITOR feed. Handlers never repeat these checks.

use std::time::Instant;

use bytes::Bytes;

use crate::acl::log::Context;
use crate::commands::acl_cmd::perm;
use crate::commands::error::MultiError;
use crate::commands::{self, table::flag, CmdError, Command};
use crate::keyspace::db::{Expiry, HashedKeys};
use crate::server::blocking::Blocked;
use crate::server::calls::{record_call, reply_error_text, CallOf};
use crate::server::client::{ClientKind, ReplyMode};
use crate::server::multi;
use crate::server::obuf::Fanout;
use crate::server::state::{ServerState, Slot};

/// What the caller should do after a command.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// The command was not run because clients are paused; retry it later.
    Paused,
    /// The command blocked its client (BLPOP and friends): run nothing more for it until it
    /// is served or times out (`server::unblock`).
    Blocked,
}

/// Longest piece of an argument quoted in the unknown-command error.
const ERR_ARG_CHARS_MAX: usize = 128;

/// Valkey's text, with the name and the first arguments echoed raw (not UTF-8-checked).
pub(crate) fn unknown_command_error(argv: &[Bytes]) -> Vec<u8> {
    let mut text = b"ERR unknown command '".to_vec();
    text.extend_from_slice(trunc(&argv[0], ERR_ARG_CHARS_MAX));
    text.extend_from_slice(b"', with args beginning with: ");
    let mut args_len = 0;
    for a in &argv[1..] {
        if args_len >= ERR_ARG_CHARS_MAX {
            break;
        }
        let a = trunc(a, ERR_ARG_CHARS_MAX - args_len);
        args_len += a.len() + 3;
        text.push(b'\'');
        text.extend_from_slice(a);
        text.extend_from_slice(b"' ");
    }
    text
}

/// `a` as Valkey's `%.<n>s` prints it: at most `n` bytes, and a NUL ends it.
fn trunc(a: &[u8], n: usize) -> &[u8] {
    let a = &a[..a.iter().position(|&c| c == 0).unwrap_or(a.len())];
    &a[..a.len().min(n)]
}

/// Resolves `argv` to the command (or subcommand) to run, or the error to reply, from
/// `argv[0]`'s entry (`top`, looked up where the command was parsed).
fn resolve_from(
    top: Option<&'static Command>,
    argv: &[Bytes],
) -> Result<&'static Command, (Option<&'static Command>, CmdError)> {
    let Some(cmd) = top else {
        return Err((None, CmdError::Raw(unknown_command_error(argv))));
    };
    if cmd.subcommands.is_empty() {
        if !cmd.arity_ok(argv.len()) {
            return Err((Some(cmd), CmdError::WrongArity(cmd.name.to_string())));
        }
        return Ok(cmd);
    }
    if argv.len() == 1 {
        // A container with a handler of its own (COMMAND) runs bare.
        if cmd.handler.is_some() && cmd.arity_ok(1) {
            return Ok(cmd);
        }
        return Err((Some(cmd), CmdError::WrongArity(cmd.name.to_string())));
    }
    let Some(sub) = cmd.subcommand(&argv[1]) else {
        let sub = trunc(&argv[1], ERR_ARG_CHARS_MAX).to_vec();
        return Err((
            Some(cmd),
            CmdError::UnknownSubcommand { sub, cmd: cmd.name.to_ascii_uppercase() },
        ));
    };
    if !sub.arity_ok(argv.len()) {
        return Err((Some(sub), CmdError::WrongArity(sub.name.to_string())));
    }
    Ok(sub)
}

fn reply_error(srv: &mut ServerState, slot: &mut Slot, e: &CmdError) {
    reply_error_text(srv, slot, &e.to_bytes());
}

/// Runs one command for the client in `slot` (lent out of the client table at index
/// `token`), with `argv[0]` already looked up in the command table (`top`) and the first
/// keys hashed (`hashed`) where it was parsed: the name is looked up once and each key hashed
/// once per command.
pub fn execute_looked_up(
    srv: &mut ServerState,
    token: usize,
    slot: &mut Slot,
    top: Option<&'static Command>,
    argv: &[Bytes],
    hashed: HashedKeys,
    now_ms: i64,
) -> Flow {
    debug_assert!(!argv.is_empty());
    let reply_mark = slot.out.len();
    let from_primary = slot.client.kind == ClientKind::Primary;
    if from_primary {
        // The primary's stream, every byte of it, goes on to our backlog and replicas.
        crate::replication::replica::applied(srv, argv);
    }
    let cmd = match resolve_from(top, argv) {
        Ok(cmd) => cmd,
        Err((cmd, e)) => {
            if let Some(c) = cmd {
                srv.stats.cmd.entry(c.name).or_default().rejected_calls += 1;
            }
            let e = multi::rejected(srv, token, &mut slot.client, cmd, e);
            reply_error(srv, slot, &e);
            finish_reply_mode(slot, reply_mark);
            return Flow::Continue;
        }
    };
    // Protected commands (`enable-debug-command`) come before authentication, as in Valkey.
    if cmd.flags & flag::PROTECTED != 0
        && !crate::commands::server_cmd::debug_allowed(&srv.config, &slot.client)
    {
        return reject(srv, token, slot, cmd, CmdError::DebugNotAllowed, reply_mark);
    }
    let needs_auth = srv.acl.auth_required() && !slot.client.authenticated;
    if needs_auth && cmd.flags & flag::NO_AUTH == 0 {
        return reject(srv, token, slot, cmd, CmdError::NoAuth, reply_mark);
    }
    // Inside MULTI, commands flagged no-multi are refused (and fail the transaction).
    if slot.client.multi.is_some() && cmd.flags & flag::NO_MULTI != 0 {
        let e = CmdError::Multi(MultiError::NotAllowed(cmd.name));
        return reject(srv, token, slot, cmd, e, reply_mark);
    }
    // ACL: the user's rules allow this command on these keys, channels and databases
    // (the primary's stream runs as no user, as in Valkey).
    if !from_primary {
        if let Err(d) = perm::allowed(srv, slot.client.user, cmd, argv, slot.client.db) {
            let context =
                if slot.client.multi.is_some() { Context::Multi } else { Context::Toplevel };
            refuse_by_acl(srv, token, slot, cmd, argv, d, context, now_ms);
            let e = CmdError::Raw(perm::noperm(srv, slot.client.user, cmd, argv, d));
            return reject(srv, token, slot, cmd, e, reply_mark);
        }
    }
    // A replica sends a client that claimed CLIENT CAPA REDIRECT to its primary for every
    // read or write, as Valkey 8+ does in standalone mode.
    if slot.client.capa_redirect
        && !from_primary
        && (cmd.is_write() || cmd.flags & flag::READONLY != 0)
    {
        if let Some(e) = redirect_to_primary(srv) {
            return reject(srv, token, slot, cmd, e, reply_mark);
        }
    }
    // maxmemory (server::evict): evict before every command while a limit is set; when
    // nothing more can be evicted, refuse the commands that may grow memory.
    // (Not while a script keeps the server busy, as in Valkey: its allow-busy commands
    // run as they are.)
    if srv.config.maxmemory_bytes != 0 && srv.busy_error().is_none() {
        use crate::server::evict;
        let outcome = evict::perform_evictions(srv, now_ms);
        srv.pre_command_oom = outcome == evict::Outcome::Failed;
        // Inside MULTI queuing takes memory too: see `multi::refused_when_oom`.
        let may_grow = cmd.flags & flag::DENYOOM != 0 || multi::refused_when_oom(&slot.client, cmd);
        // The primary's writes are never refused: the replica must follow them.
        let refused = may_grow && outcome == evict::Outcome::Failed && !from_primary;
        if may_grow && !refused {
            evict::hold_back_table_growth(srv, now_ms);
        }
        // Keys evicted in any database are propagated (and announced) before the command.
        srv.drain_key_events(None);
        if refused {
            return reject(srv, token, slot, cmd, CmdError::Oom, reply_mark);
        }
    }
    // Persistence failing (stop-writes-on-bgsave-error, AOF write errors): writes and PING
    // are refused, after the OOM check as in Valkey.
    if let Some(e) =
        crate::persist::deny::write_denied(crate::persist::peek(&*srv.persist), &srv.config)
    {
        if crate::persist::deny::applies_to(cmd, &slot.client) && !from_primary {
            return reject(srv, token, slot, cmd, e, reply_mark);
        }
    }
    // min-replicas-to-write: writes need enough replicas that acknowledged lately.
    if srv.config.replication.min_replicas_to_write > 0
        && !srv.is_replica
        && (cmd.is_write() || multi::exec_is_write(&slot.client, cmd))
        && crate::replication::primary::too_few_replicas(srv, now_ms)
    {
        return reject(srv, token, slot, cmd, CmdError::NoReplicas, reply_mark);
    }
    // A replica: its own clients do not write (replica-read-only), nor, while the link is
    // down, read stale data when replica-serve-stale-data is no.
    if srv.is_replica && !from_primary {
        let write = cmd.is_write() || multi::exec_is_write(&slot.client, cmd);
        let refusal = if write && srv.config.replication.replica_read_only {
            Some(CmdError::ReadOnlyReplica)
        } else if !srv.config.replication.replica_serve_stale_data
            && cmd.flags & flag::STALE == 0
            && !crate::replication::replica::link_up(srv)
        {
            Some(CmdError::MasterDown)
        } else {
            None
        };
        if let Some(e) = refusal {
            return reject(srv, token, slot, cmd, e, reply_mark);
        }
    }
    // RESP2 subscriber mode (RESP3 has no limits): after the OOM check, as Valkey.
    if slot.client.subs.total() > 0
        && !slot.out.is_resp3()
        && !crate::server::pubsub::allowed_in_subscriber_mode(cmd.name)
    {
        srv.stats.cmd.entry(cmd.name).or_default().rejected_calls += 1;
        reply_error(srv, slot, &CmdError::PubSubContext(cmd.name.to_string()));
        finish_reply_mode(slot, reply_mark);
        return Flow::Continue;
    }
    // A script past busy-reply-threshold (`server::script_run`): only the commands
    // flagged allow-busy run meanwhile.
    if let Some(e) = srv.busy_error() {
        if cmd.flags & flag::ALLOW_BUSY == 0 {
            return reject(srv, token, slot, cmd, CmdError::Script(e), reply_mark);
        }
    }
    // The primary's stream is never paused (CLIENT PAUSE, FAILOVER).
    if srv.pause.any() && !from_primary {
        // EXEC is a write when one of its queued commands is.
        let write =
            cmd.is_write() || cmd.may_replicate() || multi::exec_is_write(&slot.client, cmd);
        if srv.paused(write, now_ms) {
            return Flow::Paused;
        }
    }
    // Inside MULTI: queue, except the commands acting on the transaction itself.
    if slot.client.multi.is_some() && !multi::runs_in_multi(cmd) {
        multi::queue(srv, token, slot, cmd, argv);
        finish_reply_mode(slot, reply_mark);
        return Flow::Continue;
    }
    call(srv, token, slot, cmd, argv, hashed, now_ms, reply_mark)
}

/// Run a command that passed the checks (Valkey's `call()`): the handler, then key events,
/// statistics, the slow log, the MONITOR feed, CLIENT REPLY modes and blocking. EXEC runs
/// its queued commands through here (`server::multi`); `reply_mark` is where the command's
/// reply starts in the client's output. `hashed`: hashes of keys of `argv` computed ahead.
#[allow(clippy::too_many_arguments)]
pub fn call(
    srv: &mut ServerState,
    token: usize,
    slot: &mut Slot,
    cmd: &'static Command,
    argv: &[Bytes],
    hashed: HashedKeys,
    now_ms: i64,
    reply_mark: usize,
) -> Flow {
    // Expired keys: the primary's stream sees them (it sends the DELs), a replica's reads
    // do not, and nobody deletes them on a replica but a writable replica's own writes. In
    // `import-mode` the same: the import source (a sync tool) sees them, others' reads
    // do not, and only writes delete them.
    let import_mode = srv.config.general.import_mode;
    srv.set_expiry(
        if srv.loading
            || slot.client.kind == ClientKind::Primary
            || (import_mode && slot.client.import_source)
        {
            Expiry::Paused
        } else if (srv.is_replica || import_mode) && !cmd.is_write() {
            Expiry::Hidden
        } else {
            Expiry::Live
        },
    );
    // Client tracking: the current client, and tracking-table-max-keys.
    crate::server::tracking::begin(srv, token, slot);
    srv.sync_event_logs();
    let (db_before, changes_before) = (slot.client.db, srv.changes);
    let (fed, fed_aof) = (srv.feed.repl.len(), srv.feed.buf.len());
    let started = Instant::now();
    // The keys' hashes serve the handler's lookups in its database while `argv` lives.
    srv.dbs[db_before].hashed = hashed;
    let result = match cmd.handler {
        Some(h) => {
            commands::run_handler(h, srv, &mut slot.client, &mut slot.out, argv, now_ms, token)
        }
        None => Err(CmdError::WrongArity(cmd.name.to_string())),
    };
    srv.dbs[db_before].hashed = HashedKeys::default();
    // EXEC's queued commands run here, inside its reply and its duration.
    multi::after_handler(srv);
    if slot.client.multi.as_deref().is_some_and(|t| t.exec_ready) {
        run_queued(srv, token, slot, now_ms);
    }
    // So does a script (EVAL, FCALL), after MONITOR saw the command that runs it.
    let mut script_failed = false;
    if let Some(req) = slot.client.script.take() {
        if !srv.monitors.is_empty() && !slot.client.unblocking {
            feed_monitors(srv, token, slot, argv, now_ms);
        }
        script_failed = crate::runtime::script::run(srv, token, slot, &req, argv, now_ms);
    }
    // An EVAL of a client in debugging mode runs in a session (`runtime::ldb`).
    if let Some(run) = slot.client.debug_run.take() {
        if !srv.monitors.is_empty() && !slot.client.unblocking {
            feed_monitors(srv, token, slot, argv, now_ms);
        }
        script_failed = crate::runtime::ldb::run(srv, token, slot, *run, argv, now_ms);
    }
    let duration_us = started.elapsed().as_micros() as u64;
    srv.stats.eventloop_cmd_us += duration_us;

    let block = slot.client.block_request.take();
    // A data command's events are in its database (it marks when it changed another).
    let data = matches!(cmd.handler, Some(commands::table::Handler::Data(_)));
    srv.drain_key_events(data.then_some(db_before));
    if srv.feed.on {
        crate::server::propagate::after_command(srv, cmd, argv, db_before, changes_before, now_ms);
        if srv.feed.repl.len() != fed {
            slot.client.woff = crate::replication::primary::write_offset(srv);
        }
        if srv.feed.buf.len() != fed_aof {
            let written = crate::persist::peek(&*srv.persist).map_or(0, |p| p.aof.written_total);
            slot.client.aof_woff = written + srv.feed.buf.len() as u64;
        }
    }
    if let Err(e) = &result {
        reply_error(srv, slot, e);
    }
    // What the handler wrote is all pushes for the (un)subscribe commands: their
    // confirmations get through CLIENT REPLY OFF / SKIP, as Valkey's "pushing" replies do.
    // (Messages this client's command sent to itself are in its outbox: they follow the
    // reply, whatever the mode.) Only asked when the reply is silenced.
    let reply_end = slot.out.len();
    let pushes_from = if slot.client.reply_mode != ReplyMode::On
        && result.is_ok()
        && is_subscription_command(cmd)
    {
        reply_mark
    } else {
        reply_end
    };
    let pushes = pushes_from..reply_end;
    let blocks = block.is_some() && result.is_ok();
    slot.client.blocked_run_us += duration_us;
    crate::server::calls::record_run(srv, cmd.flags, duration_us);
    if !blocks {
        // A blocking command counts once, when it is served (with all its runs' time).
        record_call(
            srv,
            slot,
            CallOf { name: cmd.name, flags: cmd.flags },
            argv,
            result.is_err() || script_failed,
            reply_end.saturating_sub(reply_mark) as u64,
            now_ms,
        );
    }
    slot.client.last_cmd = cmd.name;
    slot.client.last_interaction_ms = now_ms;
    // MONITOR sees a blocking command once, when it first runs (not when it is served).
    if !srv.monitors.is_empty()
        && !slot.client.unblocking
        && cmd.flags & (flag::SKIP_MONITOR | flag::ADMIN) == 0
    {
        feed_monitors(srv, token, slot, &crate::server::redact::redact(cmd.name, argv), now_ms);
    }
    finish_reply_mode_keeping(slot, reply_mark, pushes);
    // Keys read by a tracking client; invalidations for this client follow its reply.
    crate::server::tracking::after_command(srv, &slot.client, cmd, argv);
    match block {
        Some(req) if result.is_ok() => {
            let blocked = Blocked {
                cmd: CallOf { name: cmd.name, flags: cmd.flags },
                entry: cmd,
                db: slot.client.db,
                keys: req.keys,
                timeout_at_ms: req.timeout_at_ms,
                on_timeout: req.on_timeout,
                argv: req.argv.unwrap_or_else(|| argv.to_vec()),
            };
            srv.blocking.block(token, blocked);
            slot.client.blocked = true;
            crate::server::tracking::end(srv, token);
            Flow::Blocked
        }
        _ => {
            if srv.blocking.has_ready()
                && !slot.client.unblocking
                && !slot.client.in_exec
                && srv.busy_error().is_none()
            {
                // After the outermost command only (serving runs commands itself). This
                // client is lent out of the table meanwhile (what the served clients send it
                // waits in its outbox); it is not blocked, so no waiter needs it.
                crate::runtime::unblock::serve_ready(srv, now_ms);
            }
            crate::server::tracking::end(srv, token);
            Flow::Continue
        }
    }
}

/// EXEC's body: every queued command in order, each answered inside EXEC's array (its
/// header was written by the handler). Errors do not stop the rest.
fn run_queued(srv: &mut ServerState, token: usize, slot: &mut Slot, now_ms: i64) {
    let t = slot.client.multi.take().expect("checked by the caller");
    let was_in_exec = slot.client.in_exec;
    slot.client.in_exec = true;
    // The feed wraps the transaction's writes in MULTI ... EXEC.
    srv.feed.exec_begin();
    let from_primary = slot.client.kind == ClientKind::Primary;
    for q in &t.commands {
        let mark = slot.out.len();
        let cmd: &'static Command = q.cmd.downcast_ref().expect("queued from this table");
        // The rules may have changed since the command was queued.
        if !from_primary {
            if let Err(d) = perm::allowed(srv, slot.client.user, cmd, &q.argv, slot.client.db) {
                refuse_by_acl(srv, token, slot, cmd, &q.argv, d, Context::Multi, now_ms);
                reply_error_text(srv, slot, &perm::changed_since_queued(d));
                continue;
            }
        }
        let flow = call(srv, token, slot, cmd, &q.argv, HashedKeys::default(), now_ms, mark);
        debug_assert_eq!(flow, Flow::Continue, "blocked inside EXEC");
    }
    srv.feed.exec_end();
    slot.client.in_exec = was_in_exec;
}

/// Refuse `cmd` before it runs (Valkey's `rejectCommand`): counted in its
/// `rejected_calls`, the transaction flagged (see `multi::rejected`), the error replied.
fn reject(
    srv: &mut ServerState,
    token: usize,
    slot: &mut Slot,
    cmd: &'static Command,
    e: CmdError,
    reply_mark: usize,
) -> Flow {
    srv.stats.cmd.entry(cmd.name).or_default().rejected_calls += 1;
    let e = multi::rejected(srv, token, &mut slot.client, Some(cmd), e);
    reply_error(srv, slot, &e);
    finish_reply_mode(slot, reply_mark);
    Flow::Continue
}

/// `-REDIRECT host:port` of our primary, when this server is a replica.
fn redirect_to_primary(srv: &ServerState) -> Option<CmdError> {
    let r = crate::replication::peek(&*srv.repl)?;
    let link = r.link.as_ref()?;
    Some(CmdError::Raw(format!("REDIRECT {}:{}", link.host, link.port).into_bytes()))
}

/// Count and log an ACL refusal of `cmd argv` for the client in `slot`.
#[allow(clippy::too_many_arguments)]
fn refuse_by_acl(
    srv: &mut ServerState,
    token: usize,
    slot: &Slot,
    cmd: &'static Command,
    argv: &[Bytes],
    d: crate::acl::check::Denied,
    context: Context,
    now_ms: i64,
) {
    let info = crate::commands::client_cmd::info_line_of(
        srv,
        token,
        &slot.client,
        &slot.out,
        cmd.name,
        argv,
        now_ms,
    );
    perm::record(srv, &slot.client, info, cmd, argv, d, context, now_ms);
}

/// SUBSCRIBE and its kin, whose every reply is a push.
fn is_subscription_command(cmd: &Command) -> bool {
    matches!(
        cmd.name,
        "subscribe" | "psubscribe" | "ssubscribe" | "unsubscribe" | "punsubscribe" | "sunsubscribe"
    )
}

/// Apply CLIENT REPLY OFF / SKIP to the reply just written.
fn finish_reply_mode(slot: &mut Slot, mark: usize) {
    let end = slot.out.len();
    finish_reply_mode_keeping(slot, mark, end..end);
}

/// CLIENT REPLY OFF / SKIP drop what the command wrote after `mark`, except the pushes in
/// `pushes` (pub/sub confirmations and messages), which Valkey delivers whatever the mode.
fn finish_reply_mode_keeping(slot: &mut Slot, mark: usize, pushes: std::ops::Range<usize>) {
    match slot.client.reply_mode {
        ReplyMode::On => {}
        ReplyMode::Off => slot.out.drop_keeping(mark, pushes),
        ReplyMode::Skip => {
            slot.out.drop_keeping(mark, pushes);
            slot.client.reply_mode = ReplyMode::On;
        }
        // Set by CLIENT REPLY SKIP itself: the next command's reply is the one skipped.
        ReplyMode::SkipNext => slot.client.reply_mode = ReplyMode::Skip,
    }
}

/// Send the MONITOR line for a command to every monitor (other than the client itself).
fn feed_monitors(srv: &mut ServerState, token: usize, slot: &Slot, argv: &[Bytes], now_ms: i64) {
    let mut line = format!(
        "{}.{:06} [{} {}]",
        now_ms / 1000,
        (now_ms % 1000) * 1000,
        slot.client.db,
        if slot.client.lua {
            "lua".to_string()
        } else if slot.client.unix {
            format!("unix:{}", slot.client.laddr)
        } else {
            slot.client.addr.clone()
        }
    );
    for a in argv {
        line.push(' ');
        line.push_str(&crate::util::quote::repr(a));
    }
    let ServerState { monitors, clients, to_write, to_close, config, stats, .. } = srv;
    let mut fanout = Fanout::new(to_write, to_close, config, stats);
    for &m in monitors.iter().filter(|&&m| m != token) {
        fanout.send(clients, m, |out| {
            out.simple(&line);
            true
        });
    }
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
