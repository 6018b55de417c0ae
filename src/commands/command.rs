//! The COMMAND family: COMMAND, COMMAND COUNT / INFO / DOCS / LIST / GETKEYS /
//! GETKEYSANDFLAGS / HELP. Every reply is generated from the one command table
//! ([`commands::all`](crate::commands::all)); nothing here knows about a particular command.
//!
//! - `command/info.rs`: the COMMAND INFO and COMMAND DOCS shapes of one table entry.
//! - `command/getkeys.rs`: COMMAND GETKEYS and GETKEYSANDFLAGS over the key specs.
//! - `command/lint.rs` (tests only): consistency checks of the whole table, in the spirit
//!   of Valkey's command-JSON generator.
//!
//! This module only reads the table and writes replies: it changes no server state.

mod getkeys;
mod info;
#[cfg(test)]
mod lint;

use bytes::Bytes;

use crate::commands::table::Server;
use crate::commands::table::{acl, flag, Command};
use crate::commands::{all, lookup, CmdError, CmdResult, ServerCtx};
use crate::config::glob_match;
use crate::resp::reply::{AggKind, Reply};
use crate::spec::docs::ArgumentLists;

pub use info::{reply_docs, reply_info};

const FLAGS: u64 = flag::LOADING | flag::STALE;
const ACL: u64 = acl::SLOW | acl::CONNECTION;
const ORDER_TIP: &[&str] = &["nondeterministic_output_order"];
const LOOKUP_COMPLEXITY: &str = "O(N) where N is the number of commands to look up";
const ARGS_COMPLEXITY: &str = "O(N) where N is the number of arguments to the command";

static SUBCOMMANDS: &[Command] = &[
    Command::new("command|count", 2, FLAGS, ACL, Server(count)).doc(
        "server",
        "2.8.13",
        "Returns a count of commands.",
        "O(1)",
    ),
    Command::new("command|docs", -2, FLAGS, ACL, Server(docs))
        .doc(
            "server",
            "7.0.0",
            "Returns documentary information about one, multiple or all commands.",
            LOOKUP_COMPLEXITY,
        )
        .tips(ORDER_TIP),
    Command::new("command|getkeys", -3, FLAGS, ACL, Server(getkeys::getkeys)).doc(
        "server",
        "2.8.13",
        "Extracts the key names from an arbitrary command.",
        ARGS_COMPLEXITY,
    ),
    Command::new("command|getkeysandflags", -3, FLAGS, ACL, Server(getkeys::getkeys_and_flags))
        .doc(
            "server",
            "7.0.0",
            "Extracts the key names and access flags for an arbitrary command.",
            ARGS_COMPLEXITY,
        ),
    Command::new("command|help", 2, FLAGS, ACL, Server(help)).doc(
        "server",
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        "O(1)",
    ),
    Command::new("command|info", -2, FLAGS, ACL, Server(info))
        .history(&[("7.0.0", "Allowed to be called with no argument to get info on all commands.")])
        .doc(
            "server",
            "2.8.13",
            "Returns information about one, multiple or all commands.",
            LOOKUP_COMPLEXITY,
        )
        .tips(ORDER_TIP),
    Command::new("command|list", -2, FLAGS, ACL, Server(list))
        .doc(
            "server",
            "7.0.0",
            "Returns a list of command names.",
            "O(N) where N is the total number of commands",
        )
        .tips(ORDER_TIP),
];

pub static COMMANDS: &[Command] = &[
    // The one container that also runs on its own: bare COMMAND lists every command.
    Command {
        handler: Some(Server(all_commands)),
        ..Command::container("command", -1, FLAGS, ACL, SUBCOMMANDS)
    }
    .doc(
        "server",
        "2.8.13",
        "Returns detailed information about all commands.",
        "O(N) where N is the total number of commands",
    )
    .tips(ORDER_TIP),
];

/// Find a command by its full name (`get`, `config|get`), case-insensitively, as
/// COMMAND INFO and COMMAND DOCS name them. A subcommand of a leaf, or a deeper path, is
/// unknown.
pub fn find_by_full_name(name: &[u8]) -> Option<&'static Command> {
    let mut parts = name.splitn(3, |&b| b == b'|');
    let parent = lookup(parts.next()?)?;
    match (parts.next(), parts.next()) {
        (None, _) => Some(parent),
        (Some(sub), None) => parent.subcommand(sub),
        (Some(_), Some(_)) => None,
    }
}

/// The `<CMD> HELP` reply: the usage line, then `lines`, then the HELP entry, as status
/// strings (Valkey's `addReplyHelp`).
pub fn reply_help(out: &mut Reply, cmd_upper: &str, lines: &[&str]) {
    out.array(lines.len() + 3);
    out.simple(&format!("{cmd_upper} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"));
    for line in lines {
        out.simple(line);
    }
    out.simple("HELP");
    out.simple("    Print this help.");
}

/// COMMAND: the INFO of every top-level command.
fn all_commands(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    reply_all_info(ctx.out);
    Ok(())
}

fn reply_all_info(out: &mut Reply) {
    out.array(all().count());
    for cmd in all() {
        reply_info(out, cmd);
    }
}

fn count(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    ctx.out.int(all().count() as i64);
    Ok(())
}

/// COMMAND INFO [name ...]: every command without names; a null for each unknown name.
fn info(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let names = &argv[2..];
    if names.is_empty() {
        reply_all_info(ctx.out);
        return Ok(());
    }
    ctx.out.array(names.len());
    for name in names {
        match find_by_full_name(name) {
            Some(cmd) => reply_info(ctx.out, cmd),
            None => ctx.out.null(),
        }
    }
    Ok(())
}

/// COMMAND DOCS [name ...]: a map of name to documentation; unknown names are left out. The
/// argument lists of the commands named (with their subcommands') are parsed for this reply.
fn docs(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let names = &argv[2..];
    if names.is_empty() {
        let lists = ArgumentLists::all();
        ctx.out.map(all().count());
        for cmd in all() {
            ctx.out.bulk(cmd.name.as_bytes());
            reply_docs(ctx.out, cmd, &lists);
        }
        return Ok(());
    }
    let found: Vec<&Command> = names.iter().filter_map(|n| find_by_full_name(n)).collect();
    let lists = ArgumentLists::parse(|name| {
        let parent = name.split('|').next().unwrap_or(name);
        found.iter().any(|cmd| cmd.name == name || cmd.name == parent)
    });
    ctx.out.map(found.len());
    for cmd in found {
        ctx.out.bulk(cmd.name.as_bytes());
        reply_docs(ctx.out, cmd, &lists);
    }
    Ok(())
}

/// Which commands COMMAND LIST returns.
#[derive(Clone, Copy, Debug)]
enum ListFilter<'a> {
    All,
    /// Commands of a module: none, there are no modules.
    Module,
    /// Commands in an ACL category; `None` for an unknown category (matches nothing).
    AclCategory(Option<u64>),
    /// Full names matching a glob, case-insensitively.
    Pattern(&'a [u8]),
}

impl<'a> ListFilter<'a> {
    /// `COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN glob]`.
    fn parse(argv: &'a [Bytes]) -> Result<ListFilter<'a>, CmdError> {
        match argv {
            [_, _] => Ok(ListFilter::All),
            [_, _, by, kind, arg] if by.eq_ignore_ascii_case(b"FILTERBY") => {
                if kind.eq_ignore_ascii_case(b"MODULE") {
                    Ok(ListFilter::Module)
                } else if kind.eq_ignore_ascii_case(b"ACLCAT") {
                    Ok(ListFilter::AclCategory(acl_category(arg)))
                } else if kind.eq_ignore_ascii_case(b"PATTERN") {
                    Ok(ListFilter::Pattern(arg))
                } else {
                    Err(CmdError::Syntax)
                }
            }
            _ => Err(CmdError::Syntax),
        }
    }

    fn matches(self, cmd: &Command) -> bool {
        match self {
            ListFilter::All => true,
            ListFilter::Module => false,
            ListFilter::AclCategory(Some(bit)) => cmd.acl & bit != 0,
            ListFilter::AclCategory(None) => false,
            ListFilter::Pattern(glob) => glob_match(glob, cmd.name.as_bytes(), true),
        }
    }
}

/// The bit of an ACL category name (without `@`, any case).
fn acl_category(name: &[u8]) -> Option<u64> {
    acl::NAMES.iter().find(|(_, n)| n.as_bytes().eq_ignore_ascii_case(name)).map(|(bit, _)| *bit)
}

/// COMMAND LIST: full names of commands and subcommands that pass the filter, each
/// container followed by its subcommands.
fn list(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let filter = ListFilter::parse(argv)?;
    let header = ctx.out.begin_deferred(AggKind::Array);
    let mut n = 0;
    for cmd in all() {
        for c in std::iter::once(cmd).chain(cmd.subcommands) {
            if filter.matches(c) {
                ctx.out.bulk(c.name.as_bytes());
                n += 1;
            }
        }
    }
    ctx.out.end_deferred(header, n);
    Ok(())
}

const HELP_LINES: &[&str] = &[
    "(no subcommand)",
    "    Return details about all commands.",
    "COUNT",
    "    Return the total number of commands in this server.",
    "LIST",
    "    Return a list of all commands in this server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full command.",
];

fn help(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    reply_help(ctx.out, "COMMAND", HELP_LINES);
    Ok(())
}
