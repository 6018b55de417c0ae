//! EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT.
//!
//! The handlers parse the call, find (or compile and cache) the script, check its flags
//! against the server's state as Valkey's `scriptPrepareForRun` does, and leave a
//! [`Request`](crate::scripting::Request) on the client: the runtime runs it right after the
//! handler returns (`runtime::script`), inside this command's call, so statistics, the slow
//! log and MONITOR see one EVAL with the commands it called.

use bytes::Bytes;

use crate::commands::error::ScriptError;
use crate::commands::table::{acl, flag, keynum, ks, KeySpec, Server};
use crate::commands::{CmdError, CmdResult, Command, ServerCtx};
use crate::scripting::eval::Flags;
use crate::scripting::ldb::{self, DebugRun};
use crate::scripting::Request;
use crate::server::state::ServerState;
use crate::types::string::parse_i64;

const G: &str = "scripting";
const EVAL_FLAGS: u64 = flag::NOSCRIPT
    | flag::STALE
    | flag::SKIP_MONITOR
    | flag::NO_MANDATORY_KEYS
    | flag::MOVABLE_KEYS;
const RW_NOTE: &[&str] =
    &["We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"];
const RO_NOTE: &[&str] =
    &["We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"];

/// The keys of `EVAL script numkeys key...` (also FCALL's).
pub const RW_KEYS: &[KeySpec] = &[keynum(ks::RW | ks::ACCESS | ks::UPDATE, 2)];
pub const RO_KEYS: &[KeySpec] = &[keynum(ks::RO | ks::ACCESS, 2)];

const SCRIPT_SUBCOMMANDS: &[Command] = &[
    Command::new("script|debug", -3, flag::NOSCRIPT, acl::SLOW | acl::SCRIPTING, Server(script_debug))
        .doc(G, "3.2.0", "Sets the debug mode of server-side Lua scripts.", "O(1)"),
    Command::new("script|load", 3, flag::NOSCRIPT | flag::STALE, acl::SLOW | acl::SCRIPTING, Server(script_load))
        .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
        .doc(G, "2.6.0", "Loads a server-side Lua script to the script cache.", "O(N) with N being the length in bytes of the script body."),
    Command::new("script|exists", -3, flag::NOSCRIPT | flag::STALE, acl::SLOW | acl::SCRIPTING, Server(script_exists))
        .tips(&["request_policy:all_shards", "response_policy:agg_logical_and"])
        .doc(G, "2.6.0", "Determines whether server-side Lua scripts exist in the script cache.", "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation)."),
    Command::new("script|flush", -2, flag::NOSCRIPT | flag::STALE, acl::SLOW | acl::SCRIPTING, Server(script_flush))
        .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
        .history(&[("6.2.0", "Added the `ASYNC` and `SYNC` flushing mode modifiers.")])
        .doc(G, "2.6.0", "Removes all server-side Lua scripts from the script cache.", "O(N) with N being the number of scripts in cache"),
    Command::new("script|kill", 2, flag::NOSCRIPT | flag::ALLOW_BUSY, acl::SLOW | acl::SCRIPTING, Server(script_kill))
        .tips(&["request_policy:all_shards", "response_policy:one_succeeded"])
        .doc(G, "2.6.0", "Terminates a server-side Lua script during execution.", "O(1)"),
    Command::new("script|show", 3, flag::NOSCRIPT | flag::STALE, acl::SLOW | acl::SCRIPTING, Server(script_show))
        .doc(G, "8.0.0", "Show server-side Lua script in the script cache.", "O(1)."),
    Command::new("script|help", 2, flag::LOADING | flag::STALE, acl::SLOW | acl::SCRIPTING, Server(script_help))
        .doc(G, "5.0.0", "Returns helpful text about the different subcommands.", "O(1)"),
];

pub static COMMANDS: &[Command] = &[
    Command::new("eval", -3, EVAL_FLAGS, acl::SLOW | acl::SCRIPTING, Server(eval))
        .keys(RW_KEYS)
        .key_notes(RW_NOTE)
        .doc(
            G,
            "2.6.0",
            "Executes a server-side Lua script.",
            "Depends on the script that is executed.",
        ),
    Command::new("evalsha", -3, EVAL_FLAGS, acl::SLOW | acl::SCRIPTING, Server(evalsha))
        .keys(RW_KEYS)
        .doc(
            G,
            "2.6.0",
            "Executes a server-side Lua script by SHA1 digest.",
            "Depends on the script that is executed.",
        ),
    Command::new(
        "eval_ro",
        -3,
        EVAL_FLAGS | flag::READONLY,
        acl::SLOW | acl::SCRIPTING,
        Server(eval_ro),
    )
    .keys(RO_KEYS)
    .key_notes(RO_NOTE)
    .doc(
        G,
        "7.0.0",
        "Executes a read-only server-side Lua script.",
        "Depends on the script that is executed.",
    ),
    Command::new(
        "evalsha_ro",
        -3,
        EVAL_FLAGS | flag::READONLY,
        acl::SLOW | acl::SCRIPTING,
        Server(evalsha_ro),
    )
    .keys(RO_KEYS)
    .doc(
        G,
        "7.0.0",
        "Executes a read-only server-side Lua script by SHA1 digest.",
        "Depends on the script that is executed.",
    ),
    Command::container("script", -2, 0, acl::SLOW, SCRIPT_SUBCOMMANDS).doc(
        G,
        "2.6.0",
        "A container for Lua scripts management commands.",
        "Depends on subcommand.",
    ),
];

/// The keys and arguments of `<cmd> <script|sha|function> numkeys key... arg...`.
pub fn keys_and_args(argv: &[Bytes]) -> Result<(Vec<Bytes>, Vec<Bytes>), CmdError> {
    let n = parse_i64(&argv[2]).ok_or(CmdError::NotInteger)?;
    if n < 0 {
        return Err(CmdError::Script(ScriptError::NumKeysNegative));
    }
    if n as u64 > (argv.len() - 3) as u64 {
        return Err(CmdError::Script(ScriptError::NumKeysTooMany));
    }
    let split = 3 + n as usize;
    Ok((argv[3..split].to_vec(), argv[split..].to_vec()))
}

fn eval(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    prepare(ctx, argv, false, false)
}

fn evalsha(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    prepare(ctx, argv, true, false)
}

fn eval_ro(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    prepare(ctx, argv, false, true)
}

fn evalsha_ro(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    prepare(ctx, argv, true, true)
}

fn prepare(ctx: &mut ServerCtx, argv: &[Bytes], by_sha: bool, ro: bool) -> CmdResult {
    let Some(mode) = ctx.client.ldb else {
        ctx.client.script = Some(request(ctx, argv, by_sha, ro)?);
        return Ok(());
    };
    // A client in debugging mode: EVALSHA is refused (after a sha that cannot exist), and
    // EVAL runs in a session that starts before anything else is checked.
    if by_sha {
        if argv[1].len() != 40 {
            return Err(CmdError::Script(ScriptError::NoScript));
        }
        return Err(CmdError::Script(ScriptError::DebugEvalsha));
    }
    let prepared = request(ctx, argv, false, ro).map_err(|e| e.to_bytes());
    ctx.client.debug_run = Some(Box::new(DebugRun { mode, source: argv[1].clone(), prepared }));
    Ok(())
}

/// The script a call runs, found or compiled, with its flags checked.
fn request(
    ctx: &mut ServerCtx,
    argv: &[Bytes],
    by_sha: bool,
    ro: bool,
) -> Result<Box<Request>, CmdError> {
    let (keys, args) = keys_and_args(argv)?;
    let scripts = &mut ctx.srv.scripts;
    let script = if by_sha {
        scripts.get(&argv[1]).ok_or(CmdError::Script(ScriptError::NoScript))?
    } else {
        let sha = scripts.add(&argv[1], true).map_err(CmdError::Other)?;
        scripts.get(sha.as_bytes()).expect("just added")
    };
    let (func, flags) = (script.func.clone(), script.flags);
    let read_only = check_flags(ctx.srv, flags, ro, ctx.client.kind)?;
    Ok(Box::new(Request { func, is_function: false, keys, args, flags, read_only }))
}

/// Valkey's checks before a script runs (`scriptPrepareForRun`), from its flags; returns
/// whether its writes are refused.
pub fn check_flags(
    srv: &ServerState,
    flags: Flags,
    ro_command: bool,
    caller: crate::server::client::ClientKind,
) -> Result<bool, CmdError> {
    let from_primary = caller == crate::server::client::ClientKind::Primary;
    if flags.eval_compat {
        return Ok(ro_command);
    }
    if ro_command && !flags.no_writes {
        return Err(CmdError::Script(ScriptError::WriteFlagWithRo));
    }
    if !flags.allow_stale
        && srv.is_replica
        && !from_primary
        && !srv.config.replication.replica_serve_stale_data
        && !crate::replication::replica::link_up(srv)
    {
        return Err(CmdError::MasterDown);
    }
    if !flags.no_writes {
        if srv.is_replica && srv.config.replication.replica_read_only && !from_primary {
            return Err(CmdError::ReadOnlyReplica);
        }
        if !flags.allow_oom && srv.pre_command_oom && !from_primary {
            return Err(CmdError::Oom);
        }
    }
    Ok(flags.no_writes)
}

fn script_load(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let sha = ctx.srv.scripts.add(&argv[2], false).map_err(CmdError::Other)?;
    ctx.out.bulk(sha.as_bytes());
    Ok(())
}

fn script_exists(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    ctx.out.array(argv.len() - 2);
    for sha in &argv[2..] {
        ctx.out.int(ctx.srv.scripts.get(sha).is_some() as i64);
    }
    Ok(())
}

fn script_flush(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let ok = match argv.get(2) {
        None => argv.len() == 2,
        Some(a) => {
            argv.len() == 3 && (a.eq_ignore_ascii_case(b"sync") || a.eq_ignore_ascii_case(b"async"))
        }
    };
    if !ok {
        return Err(CmdError::Other("ERR SCRIPT FLUSH only support SYNC|ASYNC option".into()));
    }
    ctx.srv.scripts.flush().map_err(|e| CmdError::Other(format!("ERR {e}")))?;
    ctx.out.ok();
    Ok(())
}

fn script_kill(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    kill(ctx, true)
}

/// `SCRIPT KILL` (`eval`) and `FUNCTION KILL`: a command can only be served while a script
/// runs when the script keeps the server busy (`server::script_run`); the script stops at
/// its next instruction check.
pub(crate) fn kill(ctx: &mut ServerCtx, eval: bool) -> CmdResult {
    let run = ctx.srv.script_run.as_mut().ok_or(CmdError::Script(ScriptError::NotBusy))?;
    run.kill(eval).map_err(CmdError::Script)?;
    ctx.out.ok();
    Ok(())
}

/// `SCRIPT DEBUG YES|SYNC|NO [engine]`, with Valkey's checks in Valkey's order.
fn script_debug(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if argv.len() > 4 {
        return Err(CmdError::SubcommandSyntax {
            sub: String::from_utf8_lossy(&argv[1]).into_owned(),
            cmd: "SCRIPT".into(),
        });
    }
    if !ctx.out.is_empty() {
        return Err(CmdError::Script(ScriptError::DebugInPipeline));
    }
    if let Some(engine) = argv.get(3) {
        if !engine.eq_ignore_ascii_case(b"lua") {
            return Err(CmdError::Other(format!(
                "ERR No scripting engine found with name '{}' to enable debug",
                String::from_utf8_lossy(engine)
            )));
        }
    }
    let mode = &argv[2];
    ctx.client.ldb = if mode.eq_ignore_ascii_case(b"no") {
        None
    } else if mode.eq_ignore_ascii_case(b"yes") {
        Some(ldb::Mode::Forked)
    } else if mode.eq_ignore_ascii_case(b"sync") {
        Some(ldb::Mode::Sync)
    } else {
        return Err(CmdError::Script(ScriptError::DebugMode));
    };
    ctx.out.ok();
    Ok(())
}

fn script_show(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let script = ctx.srv.scripts.get(&argv[2]).ok_or(CmdError::Script(ScriptError::NoScript))?;
    let body = script.body.clone();
    ctx.out.bulk(&body);
    Ok(())
}

const SCRIPT_HELP: &[&str] = &[
    "DEBUG (YES|SYNC|NO) [<engine_name>]",
    "    Set the debug mode for subsequent scripts executed of the specified engine.",
    "    Default engine name: 'lua'",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined",
    "     by the lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "SHOW <sha1>",
    "    Show a script from the scripts cache.",
];

fn script_help(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    crate::commands::command::reply_help(ctx.out, "SCRIPT", SCRIPT_HELP);
    Ok(())
}
