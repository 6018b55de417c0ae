//! COMMANDLOG (Valkey 8.1) and SLOWLOG, its older view of the `slow` log alone: GET, LEN,
//! RESET and HELP over the logs of `server::commandlog`.

use bytes::Bytes;

use crate::commands::command::reply_help;
use crate::commands::table::Server;
use crate::commands::table::{acl, flag, Command};
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::server::commandlog::{Log, LogKind};
use crate::types::string::parse_i64;

const LOG_FLAGS: u64 = flag::ADMIN | flag::LOADING | flag::STALE;
const ACL_ADMIN: u64 = acl::ADMIN | acl::SLOW | acl::DANGEROUS;
const GET_TIPS: &[&str] = &["request_policy:all_nodes", "nondeterministic_output"];
const LEN_TIPS: &[&str] =
    &["request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"];
const RESET_TIPS: &[&str] = &["request_policy:all_nodes", "response_policy:all_succeeded"];

pub static SLOWLOG_SUBCOMMANDS: &[Command] = &[
    Command::new("slowlog|get", -2, LOG_FLAGS, ACL_ADMIN, Server(slowlog_get))
        .history(&[("4.0.0", "Added client IP address, port and name to the reply.")])
        .doc(
            "server",
            "2.2.12",
            "Returns the slow log's entries.",
            "O(N) where N is the number of entries returned",
        )
        .tips(GET_TIPS),
    Command::new("slowlog|len", 2, LOG_FLAGS, ACL_ADMIN, Server(slowlog_len))
        .doc("server", "2.2.12", "Returns the number of entries in the slow log.", "O(1)")
        .tips(LEN_TIPS),
    Command::new("slowlog|reset", 2, LOG_FLAGS, ACL_ADMIN, Server(slowlog_reset))
        .doc(
            "server",
            "2.2.12",
            "Clears all entries from the slow log.",
            "O(N) where N is the number of entries in the slowlog",
        )
        .tips(RESET_TIPS),
    Command::new("slowlog|help", 2, flag::LOADING | flag::STALE, acl::SLOW, Server(slowlog_help))
        .doc("server", "6.2.0", "Shows helpful text about the different subcommands.", "O(1)"),
];

pub static COMMANDLOG_SUBCOMMANDS: &[Command] = &[
    Command::new("commandlog|get", 4, LOG_FLAGS, ACL_ADMIN, Server(commandlog_get))
        .doc(
            "server",
            "8.1.0",
            "Returns the specified command log's entries.",
            "O(N) where N is the number of entries returned",
        )
        .tips(GET_TIPS),
    Command::new("commandlog|len", 3, LOG_FLAGS, ACL_ADMIN, Server(commandlog_len))
        .doc(
            "server",
            "8.1.0",
            "Returns the number of entries in the specified type of command log.",
            "O(1)",
        )
        .tips(LEN_TIPS),
    Command::new("commandlog|reset", 3, LOG_FLAGS, ACL_ADMIN, Server(commandlog_reset))
        .doc(
            "server",
            "8.1.0",
            "Clears all entries from the specified type of command log.",
            "O(N) where N is the number of entries in the commandlog",
        )
        .tips(RESET_TIPS),
    Command::new(
        "commandlog|help",
        2,
        flag::LOADING | flag::STALE,
        acl::SLOW,
        Server(commandlog_help),
    )
    .doc("server", "8.1.0", "Shows helpful text about the different subcommands.", "O(1)"),
];

/// Entries SLOWLOG GET returns without a count.
const SLOWLOG_GET_DEFAULT: usize = 10;

/// A GET count: -1 for all, else at least 0.
fn parse_count(a: &[u8]) -> Result<usize, CmdError> {
    match parse_i64(a) {
        Some(-1) => Ok(usize::MAX),
        Some(n) if n >= 0 => Ok(n as usize),
        _ => Err(CmdError::SlowlogCount),
    }
}

/// A log's type name, or Valkey's error naming the three.
fn parse_kind(a: &[u8]) -> Result<LogKind, CmdError> {
    LogKind::from_name(a).ok_or(CmdError::CommandLogType)
}

/// The newest `count` entries of `log`: id, unix time, value (microseconds or bytes), the
/// arguments, the client's address and its name.
fn reply_entries(ctx: &mut ServerCtx, log: LogKind, count: usize) {
    let Log { entries, .. } = ctx.srv.commandlog.get(log);
    let n = count.min(entries.len());
    ctx.out.array(n);
    for e in entries.iter().take(n) {
        ctx.out.array(6);
        ctx.out.int(e.id as i64);
        ctx.out.int(e.time_s);
        ctx.out.int(e.value as i64);
        ctx.out.array(e.argv.len());
        for a in &e.argv {
            ctx.out.bulk(a);
        }
        ctx.out.bulk(e.peer.as_bytes());
        ctx.out.bulk(e.name.as_bytes());
    }
}

fn slowlog_get(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let count = match argv.get(2) {
        None => SLOWLOG_GET_DEFAULT,
        Some(a) if argv.len() == 3 => parse_count(a)?,
        Some(_) => return Err(super::subcommand_syntax(argv)),
    };
    reply_entries(ctx, LogKind::Slow, count);
    Ok(())
}

fn slowlog_len(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    ctx.out.int(ctx.srv.commandlog.slow.entries.len() as i64);
    Ok(())
}

fn slowlog_reset(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    ctx.srv.commandlog.slow.entries.clear();
    ctx.out.ok();
    Ok(())
}

fn slowlog_help(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    reply_help(
        ctx.out,
        "SLOWLOG",
        &[
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
        ],
    );
    Ok(())
}

/// COMMANDLOG GET <count> <type>: the count is checked first, as in Valkey.
fn commandlog_get(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let count = parse_count(&argv[2])?;
    let kind = parse_kind(&argv[3])?;
    reply_entries(ctx, kind, count);
    Ok(())
}

fn commandlog_len(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let kind = parse_kind(&argv[2])?;
    ctx.out.int(ctx.srv.commandlog.get(kind).entries.len() as i64);
    Ok(())
}

fn commandlog_reset(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let kind = parse_kind(&argv[2])?;
    ctx.srv.commandlog.get_mut(kind).entries.clear();
    ctx.out.ok();
    Ok(())
}

fn commandlog_help(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    reply_help(
        ctx.out,
        "COMMANDLOG",
        &[
            "GET <count> <type>",
            "    Return top <count> entries of the specified <type> from the commandlog (-1 mean all).",
            "    Entries are made of:",
            "    id, timestamp,",
            "        time in microseconds for type of slow,",
            "        or size in bytes for type of large-request,",
            "        or size in bytes for type of large-reply",
            "    arguments array, client IP and port,",
            "    client name",
            "LEN <type>",
            "    Return the length of the specified type of commandlog.",
            "RESET <type>",
            "    Reset the specified type of commandlog.",
        ],
    );
    Ok(())
}
