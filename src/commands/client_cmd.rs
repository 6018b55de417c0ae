//! CLIENT: the connection's own settings (SETNAME, SETINFO, REPLY, NO-EVICT, NO-TOUCH),
//! introspection of every connection (ID, INFO, LIST), and acting on others (KILL, PAUSE,
//! UNPAUSE).
//!
//! The executing client is lent out of the client table while its command runs (its seat
//! keeps only its outbox), so every walk over "all clients" is `ctx.client` plus
//! `ctx.srv.clients`. Killing another client
//! only marks it and queues its slot; the event loop closes it at the end of the tick.

use crate::server::tracking::ClientTracking;
use std::fmt::Write as _;

use bytes::Bytes;

use crate::commands::args::{is, text};
use crate::commands::client_filter::{Candidate, ClientFilter};
use crate::commands::command::reply_help;
use crate::commands::server_cmd::parse_timeout_ms;
use crate::commands::table::Server;
use crate::commands::table::{acl, flag, Command};
use crate::commands::tracking_cmd;
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::resp::reply::{Proto, Reply};
use crate::server::client::{Client, ReplyMode};
use crate::server::pubsub::Kind;
use crate::server::state::{Pause, PauseKind, ServerState};
use crate::types::string::parse_i64;

const OWN: u64 = flag::NOSCRIPT | flag::LOADING | flag::STALE;
const OTHERS: u64 = flag::ADMIN | OWN;
/// Subcommands that may run while the server is busy (Valkey's `allow_busy`).
const OWN_BUSY: u64 = OWN | flag::ALLOW_BUSY;
const ACL_OWN: u64 = acl::SLOW | acl::CONNECTION;
const ACL_OTHERS: u64 = acl::ADMIN | acl::SLOW | acl::DANGEROUS | acl::CONNECTION;

static SUBCOMMANDS: &[Command] = &[
    Command::new("client|id", 2, OWN_BUSY, ACL_OWN, Server(client_id)).doc(
        "connection",
        "5.0.0",
        "Returns the unique client ID of the connection.",
        "O(1)",
    ),
    Command::new("client|info", 2, OWN, ACL_OWN, Server(client_info))
        .doc("connection", "6.2.0", "Returns information about the connection.", "O(1)")
        .tips(&["nondeterministic_output"]),
    Command::new("client|list", -2, OTHERS, ACL_OTHERS, Server(client_list))
        .history(&[
            ("2.8.12", "Added unique client `id` field."),
            ("5.0.0", "Added optional `TYPE` filter."),
            ("6.0.0", "Added `user` field."),
            ("6.2.0", "Added `argv-mem`, `tot-mem`, `laddr` and `redir` fields and the optional `ID` filter."),
            ("7.0.0", "Added `resp`, `multi-mem`, `rbs` and `rbp` fields."),
            ("7.0.3", "Added `ssub` field."),
            ("8.0.0", "Replaced `master` `TYPE` with `primary`. `master` still supported for backward compatibility."),
            ("8.1.0", "Added filters USER, ADDR, LADDR, SKIPME, and MAXAGE."),
            ("9.0.0", "Added filters NAME, IDLE, FLAGS, LIB-NAME, LIB-VER, DB, CAPA, and IP. And negative filters NOT-ID, NOT-TYPE, NOT-ADDR, NOT-LADDR, NOT-USER, NOT-FLAGS, NOT-NAME, NOT-LIB-NAME, NOT-LIB-VER, NOT-DB, NOT-CAPA, NOT-IP."),
        ])
        .doc(
            "connection",
            "2.4.0",
            "Lists open connections.",
            "O(N) where N is the number of client connections",
        )
        .tips(&["nondeterministic_output"]),
    Command::new("client|kill", -3, OTHERS, ACL_OTHERS, Server(client_kill))
        .history(&[
            ("2.8.12", "Added new filter format."),
            ("2.8.12", "`ID` option."),
            ("3.2.0", "Added `master` type in for `TYPE` option."),
            ("5.0.0", "Replaced `slave` `TYPE` with `replica`. `slave` still supported for backward compatibility."),
            ("6.2.0", "`LADDR` option."),
            ("8.0.0", "`MAXAGE` option."),
            ("8.0.0", "Replaced `master` `TYPE` with `primary`. `master` still supported for backward compatibility."),
            ("8.1.0", "`ID` option accepts multiple IDs."),
            ("9.0.0", "Added filters NAME, IDLE, FLAGS, LIB-NAME, LIB-VER, DB, CAPA, and IP. And negative filters NOT-ID, NOT-TYPE, NOT-ADDR, NOT-LADDR, NOT-USER, NOT-FLAGS, NOT-NAME, NOT-LIB-NAME, NOT-LIB-VER, NOT-DB, NOT-CAPA, NOT-IP."),
        ])
        .doc(
            "connection",
            "2.4.0",
            "Terminates open connections.",
            "O(N) where N is the number of client connections",
        ),
    Command::new("client|setname", 3, OWN_BUSY, ACL_OWN, Server(client_setname))
        .doc("connection", "2.6.9", "Sets the connection name.", "O(1)")
        .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
    Command::new("client|getname", 2, OWN_BUSY, ACL_OWN, Server(client_getname)).doc(
        "connection",
        "2.6.9",
        "Returns the name of the connection.",
        "O(1)",
    ),
    Command::new("client|setinfo", 4, OWN_BUSY, ACL_OWN, Server(client_setinfo))
        .doc(
            "connection",
            "7.2.0",
            "Sets information specific to the client or connection.",
            "O(1)",
        )
        .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
    Command::new("client|pause", -3, OTHERS, ACL_OTHERS, Server(client_pause))
        .history(&[("6.2.0", "`CLIENT PAUSE WRITE` mode added along with the `mode` option.")])
        .doc(
            "connection",
            "3.0.0",
            "Suspends commands processing.",
            "O(1)",
        ),
    Command::new("client|unpause", 2, OTHERS, ACL_OTHERS, Server(client_unpause)).doc(
        "connection",
        "6.2.0",
        "Resumes processing commands from paused clients.",
        "O(N) Where N is the number of paused clients",
    ),
    Command::new("client|unblock", -3, OTHERS, ACL_OTHERS, Server(client_unblock)).doc(
        "connection",
        "5.0.0",
        "Unblocks a client blocked by a blocking command from a different connection.",
        "O(log N) where N is the number of client connections",
    ),
    Command::new("client|reply", 3, OWN_BUSY | flag::NO_MULTI, ACL_OWN, Server(client_reply)).doc(
        "connection",
        "3.2.0",
        "Instructs the server whether to reply to commands.",
        "O(1)",
    ),
    Command::new("client|no-evict", 3, OTHERS | flag::ALLOW_BUSY, ACL_OTHERS, Server(client_no_evict)).doc(
        "connection",
        "7.0.0",
        "Sets the client eviction mode of the connection.",
        "O(1)",
    ),
    Command::new("client|import-source", 3, OWN, ACL_OWN, Server(client_import_source)).doc(
        "connection",
        "8.1.0",
        "Marks this client as an import source when the server is in import mode.",
        "O(1)",
    ),
    Command::new("client|capa", -3, OWN_BUSY, ACL_OWN, Server(client_capa)).doc(
        "connection",
        "8.0.0",
        "A client claims its capability.",
        "O(1)",
    ),
    Command::new("client|no-touch", 3, OWN_BUSY, ACL_OWN, Server(client_no_touch)).doc(
        "connection",
        "7.2.0",
        "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.",
        "O(1)",
    ),
    Command::new("client|tracking", -3, OWN, ACL_OWN, Server(tracking_cmd::client_tracking)).doc(
        "connection",
        "6.0.0",
        "Controls server-assisted client-side caching for the connection.",
        "O(1). Some options may introduce additional complexity.",
    ),
    Command::new("client|caching", 3, OWN_BUSY, ACL_OWN, Server(tracking_cmd::client_caching)).doc(
        "connection",
        "6.0.0",
        "Instructs the server whether to track the keys in the next request.",
        "O(1)",
    ),
    Command::new("client|getredir", 2, OWN_BUSY, ACL_OWN, Server(tracking_cmd::client_getredir)).doc(
        "connection",
        "6.0.0",
        "Returns the client ID to which the connection's tracking notifications are redirected.",
        "O(1)",
    ),
    Command::new("client|trackinginfo", 2, OWN, ACL_OWN, Server(tracking_cmd::client_trackinginfo)).doc(
        "connection",
        "6.2.0",
        "Returns information about server-assisted client-side caching for the connection.",
        "O(1)",
    ),
    Command::new("client|help", 2, flag::LOADING | flag::STALE, ACL_OWN, Server(client_help)).doc(
        "connection",
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        "O(1)",
    ),
];

pub static COMMANDS: &[Command] = &[Command::container("client", -2, 0, acl::SLOW, SUBCOMMANDS)
    .doc(
        "connection",
        "2.4.0",
        "A container for client connection commands.",
        "Depends on subcommand.",
    )];

/// Whether a client name or library attribute is acceptable: printable ASCII without
/// spaces, so that a CLIENT LIST line can always be split on spaces. Empty is allowed (it
/// clears the value).
pub fn valid_client_attr(v: &[u8]) -> bool {
    v.iter().all(|&c| (b'!'..=b'~').contains(&c))
}

fn client_id(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    ctx.out.int(ctx.client.id as i64);
    Ok(())
}

/// How CLIENT UNBLOCK ends the wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UnblockAs {
    /// As if the timeout had passed (the default).
    Timeout,
    /// With an `-UNBLOCKED` error.
    Error,
}

/// CLIENT UNBLOCK client-id [TIMEOUT | ERROR]: 1 when that client was blocked on keys.
fn client_unblock(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let id = parse_i64(&argv[2]).ok_or(CmdError::NotInteger)?;
    let how = match argv.get(3) {
        None => UnblockAs::Timeout,
        Some(a) if is(a, "timeout") => UnblockAs::Timeout,
        Some(a) if is(a, "error") => UnblockAs::Error,
        Some(_) => return Err(CmdError::UnblockReason),
    };
    if argv.len() > 4 {
        return Err(CmdError::Syntax);
    }
    let target = ctx.srv.clients.iter().find(|(_, s)| s.client.id as i64 == id).map(|(t, _)| t);
    let blocked = target.and_then(|t| ctx.srv.blocking.unblock(t).map(|b| (t, b)));
    let Some((t, b)) = blocked else {
        ctx.out.int(0);
        return Ok(());
    };
    match how {
        UnblockAs::Timeout => crate::server::unblock::answer_timeout(ctx.srv, t, &b, ctx.now_ms),
        UnblockAs::Error => crate::server::unblock::answer_error(
            ctx.srv,
            t,
            &b,
            "UNBLOCKED client unblocked via CLIENT UNBLOCK",
            ctx.now_ms,
        ),
    }
    ctx.out.int(1);
    Ok(())
}

fn client_setname(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let name = &argv[2];
    if !valid_client_attr(name) {
        return Err(CmdError::BadClientName);
    }
    ctx.client.name = (!name.is_empty()).then(|| name.clone());
    ctx.out.ok();
    Ok(())
}

fn client_getname(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    match &ctx.client.name {
        Some(n) => ctx.out.bulk(n),
        None => ctx.out.null(),
    }
    Ok(())
}

/// CLIENT SETINFO LIB-NAME|LIB-VER value.
fn client_setinfo(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let (attr, value) = (&argv[2], &argv[3]);
    let slot = if is(attr, "LIB-NAME") {
        &mut ctx.client.lib_name
    } else if is(attr, "LIB-VER") {
        &mut ctx.client.lib_ver
    } else {
        return Err(CmdError::UnrecognizedOption(text(attr)));
    };
    if !valid_client_attr(value) {
        return Err(CmdError::BadClientAttr(text(attr)));
    }
    *slot = (!value.is_empty()).then(|| value.clone());
    ctx.out.ok();
    Ok(())
}

/// An ON|OFF argument.
fn on_off(a: &[u8]) -> Result<bool, CmdError> {
    if is(a, "ON") {
        Ok(true)
    } else if is(a, "OFF") {
        Ok(false)
    } else {
        Err(CmdError::Syntax)
    }
}

fn client_no_evict(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    ctx.client.no_evict = on_off(&argv[2])?;
    ctx.out.ok();
    Ok(())
}

/// CLIENT IMPORT-SOURCE ON|OFF: a sync tool's connection sees keys past their expire time
/// while the server is in `import-mode` (turning it on outside import mode is refused).
fn client_import_source(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let on = on_off(&argv[2])?;
    if on && !ctx.srv.config.general.import_mode {
        return Err(CmdError::Raw(b"ERR Server is not in import mode".to_vec()));
    }
    ctx.client.import_source = on;
    ctx.out.ok();
    Ok(())
}

/// CLIENT CAPA capability...: REDIRECT is known; other names are accepted and ignored,
/// as Valkey ignores them.
fn client_capa(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if argv[2..].iter().any(|a| is(a, "REDIRECT")) {
        ctx.client.capa_redirect = true;
    }
    ctx.out.ok();
    Ok(())
}

fn client_no_touch(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    ctx.client.no_touch = on_off(&argv[2])?;
    ctx.out.ok();
    Ok(())
}

/// CLIENT REPLY ON|OFF|SKIP. Dispatch applies the mode to the replies that follow; OFF and
/// SKIP have no reply of their own.
fn client_reply(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let a = &argv[2];
    if is(a, "ON") {
        ctx.client.reply_mode = ReplyMode::On;
        ctx.out.ok();
    } else if is(a, "OFF") {
        ctx.client.reply_mode = ReplyMode::Off;
    } else if is(a, "SKIP") {
        if ctx.client.reply_mode != ReplyMode::Off {
            ctx.client.reply_mode = ReplyMode::SkipNext;
        }
    } else {
        return Err(CmdError::Syntax);
    }
    Ok(())
}

/// CLIENT PAUSE timeout [WRITE|ALL]. A pause only ever extends an earlier one, and a WRITE
/// pause does not weaken a running ALL pause.
fn client_pause(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    // Valkey 9.1 reads a mode only when it is the last word (and before the timeout); with
    // more words after it, the mode is not read at all and the pause is ALL.
    let kind = match argv.len() {
        4 if is(&argv[3], "WRITE") => PauseKind::Write,
        4 if is(&argv[3], "ALL") => PauseKind::All,
        4 => return Err(CmdError::PauseMode),
        _ => PauseKind::All,
    };
    let until_ms = parse_timeout_ms(&argv[2], ctx.now_ms)?;
    let now = ctx.now_ms;
    let current = ctx.srv.pause;
    let running = current.kind.filter(|_| now < current.until_ms);
    let kind = if running == Some(PauseKind::All) { PauseKind::All } else { kind };
    let until_ms = if running.is_some() { until_ms.max(current.until_ms) } else { until_ms };
    ctx.srv.pause = Pause { kind: Some(kind), until_ms, ..current };
    ctx.out.ok();
    Ok(())
}

fn client_unpause(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let Pause { held_clients, failover, shutdown, .. } = ctx.srv.pause;
    ctx.srv.pause = Pause { held_clients, failover, shutdown, ..Pause::default() };
    ctx.out.ok();
    Ok(())
}

// ---------------------------------------------------------------------------------------
// CLIENT INFO / LIST

/// Bytes of reply Valkey keeps in a client's static buffer before it chains blocks; the
/// `obl=`, `oll=` and `omem=` fields split our single buffer the same way.
const REPLY_CHUNK_BYTES: usize = 16 * 1024;

/// What a CLIENT LIST line shows of one client.
struct ClientView<'a> {
    client: &'a Client,
    out: &'a Reply,
    /// A write is pending (`events=rw`).
    want_write: bool,
    /// For the executing client: the command running now and its argument bytes.
    running: Option<(&'static str, usize)>,
    /// Keys it WATCHes.
    watched: usize,
    /// Its tracking settings (from the registry).
    tracking: Option<&'a ClientTracking>,
    /// The name of its ACL user.
    user: &'a [u8],
}

/// An optional attribute as CLIENT LIST shows it (empty when unset).
fn attr_text(b: &Option<Bytes>) -> std::borrow::Cow<'_, str> {
    b.as_deref().map(String::from_utf8_lossy).unwrap_or_default()
}

/// Append one CLIENT LIST line (without the newline), fields in Valkey 8's order.
fn write_info_line(s: &mut String, v: &ClientView, now_ms: i64) {
    let c = v.client;
    let now_s = now_ms / 1000;
    let (cmd, argv_mem) = v.running.unwrap_or((c.last_cmd, 0));
    let idle_s = idle_s(c, v.running.is_some(), now_ms);
    let len = v.out.len();
    let obl = len.min(REPLY_CHUNK_BYTES);
    let omem = len - obl;
    let oll = omem.div_ceil(REPLY_CHUNK_BYTES);
    let rbs = v.out.buf.capacity().clamp(1024, REPLY_CHUNK_BYTES);
    let tot_mem = std::mem::size_of::<Client>() + c.qbuf_cap + v.out.buf.capacity() + argv_mem;
    let _ = write!(
        s,
        "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} capa={} db={} sub={} psub={} ssub={} \
         multi={} watch={} qbuf={} qbuf-free={} argv-mem={} multi-mem={} rbs={} rbp={} obl={} \
         oll={} omem={} tot-mem={} events={} cmd={} user={} redir={} resp={} lib-name={} \
         lib-ver={} tot-net-in={} tot-net-out={} tot-cmds={}",
        c.id,
        c.peer_id(),
        c.sock_name(),
        c.fd,
        attr_text(&c.name),
        now_s - c.created_ms / 1000,
        idle_s,
        c.flag_letters(v.tracking),
        if c.capa_redirect { "r" } else { "" },
        c.db,
        c.subs.count(Kind::Channel),
        c.subs.count(Kind::Pattern),
        c.subs.count(Kind::Shard),
        c.multi.as_ref().map_or(-1, |m| m.commands.len() as i64),
        v.watched,
        c.qbuf_len,
        c.qbuf_cap.saturating_sub(c.qbuf_len),
        argv_mem,
        c.multi.as_ref().map_or(0, |m| m.bytes),
        rbs,
        rbs,
        obl,
        oll,
        omem,
        tot_mem,
        if v.want_write { "rw" } else { "r" },
        cmd,
        String::from_utf8_lossy(v.user),
        crate::server::tracking::list_redirect(v.tracking),
        if v.out.proto == Proto::Resp3 { 3 } else { 2 },
        attr_text(&c.lib_name),
        attr_text(&c.lib_ver),
        c.tot_net_in,
        c.tot_net_out,
        c.tot_cmds,
    );
}

/// The executing client's view, while `cmd` runs with `argv`.
fn own_view<'a>(ctx: &'a ServerCtx, cmd: &'static str, argv: &[Bytes]) -> ClientView<'a> {
    running_view(ctx.srv, ctx.slot, ctx.client, ctx.out, cmd, argv)
}

/// The view of a client lent out of the table to run `cmd` with `argv`.
fn running_view<'a>(
    srv: &'a ServerState,
    token: usize,
    client: &'a Client,
    out: &'a Reply,
    cmd: &'static str,
    argv: &[Bytes],
) -> ClientView<'a> {
    let argv_mem = argv.iter().map(|a| a.len()).sum();
    ClientView {
        client,
        out,
        want_write: false,
        running: Some((cmd, argv_mem)),
        watched: srv.watches.client_keys(token),
        tracking: srv.tracking.settings(client.id),
        user: &srv.acl.user(client.user).name,
    }
}

/// The CLIENT INFO line (without its newline) of a client lent out to run `cmd` with
/// `argv`: what the ACL log records of a refused client.
pub fn info_line_of(
    srv: &ServerState,
    token: usize,
    client: &Client,
    out: &Reply,
    cmd: &'static str,
    argv: &[Bytes],
    now_ms: i64,
) -> Vec<u8> {
    let mut s = String::new();
    write_info_line(&mut s, &running_view(srv, token, client, out, cmd, argv), now_ms);
    s.into_bytes()
}

/// [`info_line_of`] for the client running a handler, named by its `argv[0]`.
pub fn info_line(ctx: &ServerCtx, argv: &[Bytes]) -> Vec<u8> {
    let cmd = crate::commands::lookup(&argv[0]).map_or("", |c| c.name);
    info_line_of(ctx.srv, ctx.slot, ctx.client, ctx.out, cmd, argv, ctx.now_ms)
}

/// Every client, the executing one included, in connection order.
fn all_views<'a>(ctx: &'a ServerCtx, cmd: &'static str, argv: &[Bytes]) -> Vec<ClientView<'a>> {
    let mut views: Vec<ClientView> = ctx
        .srv
        .clients
        .iter()
        .map(|(t, slot)| ClientView {
            client: &slot.client,
            out: &slot.out,
            want_write: slot.want_write,
            running: None,
            watched: ctx.srv.watches.client_keys(t),
            tracking: ctx.srv.tracking.settings(slot.client.id),
            user: &ctx.srv.acl.user(slot.client.user).name,
        })
        .collect();
    views.push(own_view(ctx, cmd, argv));
    views.sort_by_key(|v| v.client.id);
    views
}

fn client_info(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let mut s = String::new();
    write_info_line(&mut s, &own_view(ctx, "client|info", argv), ctx.now_ms);
    s.push('\n');
    ctx.out.verbatim("txt", s.as_bytes());
    Ok(())
}

fn client_list(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let mut filter = ClientFilter::parse(&argv[2..], ctx.srv.config.databases as usize)?;
    filter.resolve_users(|name| ctx.srv.acl.find(name))?;
    // LIST shows the caller unless `SKIPME yes`.
    let skip_me = filter.skip_me.unwrap_or(false);
    let now = ctx.now_ms;
    let mut s = String::new();
    for v in all_views(ctx, "client|list", argv) {
        let me = v.running.is_some();
        if (me && skip_me) || !filter.matches(&candidate(&v, now), now) {
            continue;
        }
        write_info_line(&mut s, &v, now);
        s.push('\n');
    }
    ctx.out.verbatim("txt", s.as_bytes());
    Ok(())
}

/// What a filter sees of a listed client.
fn candidate<'a>(v: &ClientView<'a>, now_ms: i64) -> Candidate<'a> {
    Candidate {
        client: v.client,
        tracking: v.tracking,
        idle_s: idle_s(v.client, v.running.is_some(), now_ms),
    }
}

/// Seconds since the client's last command, as CLIENT LIST's `idle=` shows it (0 for the
/// client running one now).
fn idle_s(c: &Client, running: bool, now_ms: i64) -> i64 {
    if running {
        0
    } else {
        now_ms / 1000 - c.last_interaction_ms / 1000
    }
}

// ---------------------------------------------------------------------------------------
// CLIENT KILL

/// CLIENT KILL: the old form `CLIENT KILL addr` (may kill the caller; OK or `No such
/// client`), or filters (the caller is skipped unless `SKIPME no`; replies the number
/// killed).
fn client_kill(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let old_form = argv.len() == 3;
    let addr_only;
    let mut filter = if old_form {
        addr_only = [Bytes::from_static(b"ADDR"), argv[2].clone()];
        ClientFilter::parse(&addr_only, 1)?
    } else {
        ClientFilter::parse(&argv[2..], ctx.srv.config.databases as usize)?
    };
    filter.resolve_users(|name| ctx.srv.acl.find(name))?;
    let include_self = old_form || filter.skip_me == Some(false);
    let now = ctx.now_ms;
    let mut killed = 0;
    for (token, slot) in ctx.srv.clients.iter_mut() {
        let c = &slot.client;
        let tracking = ctx.srv.tracking.settings(c.id);
        let seen = Candidate { client: c, tracking, idle_s: idle_s(c, false, now) };
        if c.close_asap || !filter.matches(&seen, now) {
            continue;
        }
        slot.client.close_asap = true;
        ctx.srv.to_close.push(token);
        killed += 1;
    }
    let me = Candidate {
        client: ctx.client,
        tracking: ctx.srv.tracking.settings(ctx.client.id),
        idle_s: 0,
    };
    let kill_self = include_self && filter.matches(&me, now);
    killed += usize::from(kill_self);
    if old_form && killed == 0 {
        return Err(CmdError::NoSuchClient);
    } else if old_form {
        ctx.out.ok();
    } else {
        ctx.out.int(killed as i64);
    }
    // Flagged only after the reply is queued, so the reply is still written.
    if kill_self {
        ctx.client.close_after_reply = true;
    }
    Ok(())
}

/// CLIENT HELP: Valkey 9.1's entries, word for word, for the subcommands and the KILL /
/// LIST filters that ferrokey implements (IMPORT-SOURCE and the newer filters are left out
/// rather than advertised and then refused).
const HELP_LINES: &[&str] = &[
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "CAPA <option> [options...]",
    "    The client claims its some capability options. Options are:",
    "    * REDIRECT",
    "      The client can handle redirection during primary and replica failover in standalone mode.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address.",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to the specified local address.",
    "    * TYPE (NORMAL|PRIMARY|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "    * ID <client-id> [<client-id>...]",
    "      Kill connections by client IDs.",
    "    * MAXAGE <maxage>",
    "      Kill connections older than the specified age.",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|PRIMARY|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "    * ID <client-id> [<client-id>...]",
    "      Return clients with the specified IDs.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
];

fn client_help(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    reply_help(ctx.out, "CLIENT", HELP_LINES);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attrs_are_printable_without_spaces() {
        assert!(valid_client_attr(b""));
        assert!(valid_client_attr(b"redis-py(3.0)"));
        assert!(!valid_client_attr(b"a b"));
        assert!(!valid_client_attr(b"a\nb"));
        assert!(!valid_client_attr("é".as_bytes()));
    }
}
