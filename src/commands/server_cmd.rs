//! Server commands: TIME, LASTSAVE, SHUTDOWN, DEBUG, MONITOR, SLOWLOG and COMMANDLOG (in
//! `commandlog`), MEMORY (in `memory`) and LATENCY (in `latency` and `latency_doctor`).
//! INFO lives in `info.rs` and CLIENT in `client_cmd.rs`.
//!
//! Also the server's name and version as HELLO and INFO report them.

use std::time::Duration;

use bytes::Bytes;

use crate::commands::args::{is, text};
use crate::commands::command::reply_help;
use crate::commands::table::Server;
use crate::commands::table::{acl, flag, Command};
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::config::EnableDebugCommand;
use crate::keyspace::db::{lru_clock, ObjView, Ttl, ValueRef};
use crate::keyspace::entry::KeyEntry;
use crate::persist::save::{Duplicates, Flush, OnSaveError, Reload, ReloadError, SaveFirst};
use crate::server::blocking::{BlockRequest, TimeoutReply};
use crate::server::client::ClientKind;
use crate::server::state::ShutdownMode;
use crate::types::string::parse_i64;
use crate::types::string::{StrRef, StrValue};

mod commandlog;
mod debug_inspect;
mod debug_knobs;
mod debug_ops;
mod digest;
pub mod latency;
mod latency_doctor;
mod lolwut;
mod memory;
use crate::util::sha1::hex;
use commandlog::{COMMANDLOG_SUBCOMMANDS, SLOWLOG_SUBCOMMANDS};
use latency::LATENCY_SUBCOMMANDS;
use memory::MEMORY_SUBCOMMANDS;

/// The server name and version that HELLO and INFO report: the Valkey release whose
/// behaviour ferrokey follows (the differential tests' oracle is Valkey 9.1.2).
pub const SERVER_NAME: &str = "valkey";
pub const SERVER_VERSION: &str = "9.1.2";
/// The Redis version Valkey 9 claims compatibility with (INFO `redis_version`).
pub const REDIS_COMPAT_VERSION: &str = "7.2.4";

const ADMIN_FLAGS: u64 = flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE;
const ACL_ADMIN: u64 = acl::ADMIN | acl::SLOW | acl::DANGEROUS;
pub static COMMANDS: &[Command] = &[
    Command::new("lolwut", -1, flag::READONLY | flag::FAST, acl::READ | acl::FAST, Server(lolwut::lolwut))
        .doc("server", "5.0.0", "Displays computer art and the server version.", ""),
    Command::new("time", 1, flag::LOADING | flag::STALE | flag::FAST, acl::FAST, Server(time))
        .doc("server", "2.6.0", "Returns the server time.", "O(1)")
        .tips(&["nondeterministic_output"]),
    Command::new("lastsave", 1, flag::LOADING | flag::STALE | flag::FAST, acl::ADMIN | acl::FAST | acl::DANGEROUS, Server(lastsave))
        .doc("server", "1.0.0", "Returns the Unix timestamp of the last successful save to disk.", "O(1)")
        .tips(&["nondeterministic_output"]),
    Command::new("shutdown", -1, ADMIN_FLAGS | flag::NO_MULTI | flag::ALLOW_BUSY, ACL_ADMIN, Server(shutdown))
        .history(&[
            ("7.0.0", "Added the `NOW`, `FORCE` and `ABORT` modifiers."),
            ("9.0.0", "Added the `SAFE` and `FAILOVER` modifiers."),
        ])
        .doc(
            "server",
            "1.0.0",
            "Synchronously saves the database(s) to disk and shuts down the server.",
            "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
        ),
    Command::new("debug", -2, ADMIN_FLAGS | flag::PROTECTED, ACL_ADMIN, Server(debug))
        .doc_flags(&["syscmd"])
        .doc("server", "1.0.0", "A container for debugging commands.", "Depends on subcommand."),
    Command::container("slowlog", -2, 0, acl::SLOW, SLOWLOG_SUBCOMMANDS)
        .doc("server", "2.2.12", "A container for slow log commands.", "Depends on subcommand."),
    Command::container("commandlog", -2, 0, acl::SLOW, COMMANDLOG_SUBCOMMANDS)
        .doc("server", "8.1.0", "A container for command log commands.", "Depends on subcommand."),
    Command::new("monitor", 1, ADMIN_FLAGS, ACL_ADMIN, Server(monitor))
        .doc("server", "1.0.0", "Listens for all requests received by the server in real-time.", ""),
    Command::container("memory", -2, 0, acl::SLOW, MEMORY_SUBCOMMANDS)
        .doc("server", "4.0.0", "A container for memory diagnostics commands.", "Depends on subcommand."),
    Command::container("latency", -2, 0, acl::SLOW, LATENCY_SUBCOMMANDS)
        .doc("server", "2.8.13", "A container for latency diagnostics commands.", "Depends on subcommand."),
];

/// `-ERR unknown subcommand or wrong number of arguments for '<sub>'. Try <CMD> HELP.`,
/// with both names as the client typed them (the command upper-cased).
pub fn subcommand_syntax(argv: &[Bytes]) -> CmdError {
    CmdError::SubcommandSyntax { sub: text(&argv[1]), cmd: text(&argv[0]).to_ascii_uppercase() }
}

/// TIME reads the clock itself: it needs microseconds, and `ctx.now_ms` has milliseconds.
fn time(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let now = crate::util::clock::since_epoch();
    ctx.out.array(2);
    ctx.out.bulk_int(now.as_secs() as i64);
    ctx.out.bulk_int(now.subsec_micros() as i64);
    Ok(())
}

fn lastsave(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    ctx.out.int(ctx.srv.lastsave_s);
    Ok(())
}

/// SHUTDOWN's options, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ShutdownOpts {
    mode: ShutdownMode,
    /// FORCE: exit even when the final save fails.
    on_save_error: OnSaveError,
    /// NOW: do not wait for lagging replicas.
    now: bool,
    /// ABORT: end a shutdown that waits for replicas.
    abort: bool,
}

/// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]. Lagging replicas get up to
/// `shutdown-timeout` seconds to catch up first, writes paused and the caller blocked
/// (`replication::shutdown`; NOW skips the wait, ABORT ends it). The final save runs where
/// its failure can still be answered: without FORCE the server keeps running and replies
/// `-ERR Errors trying to SHUTDOWN. Check logs.`
fn shutdown(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    use crate::replication::shutdown;
    let opts = parse_shutdown(argv)?;
    let now_ms = ctx.now_ms;
    if opts.abort {
        if !shutdown::abort(ctx.srv, now_ms) {
            return Err(CmdError::NoShutdownInProgress);
        }
        ctx.out.ok();
        return Ok(());
    }
    // While a script keeps the server busy, only SHUTDOWN NOSAVE, and at once.
    let busy = ctx.srv.busy_error();
    if let Some(e) = busy.clone().filter(|_| opts.mode != ShutdownMode::NoSave) {
        return Err(CmdError::Script(e));
    }
    if shutdown::waiting(ctx.srv) {
        // Valkey refuses a second SHUTDOWN while one waits for replicas.
        return Err(CmdError::ShutdownFailed);
    }
    if busy.is_some() {
        // What the busy script has written so far goes in no file: in Valkey its writes
        // reach the AOF after it ends.
        if let Some(mark) = ctx.srv.script_run.as_ref().map(|r| r.aof_mark) {
            ctx.srv.feed.buf.truncate(mark);
        }
    }
    // Inside MULTI the caller cannot block: no wait.
    let now = opts.now || ctx.client.in_exec || busy.is_some();
    let client = (!now).then_some(ctx.slot);
    let exits = shutdown::begin(ctx.srv, opts.mode, opts.on_save_error, now, client, now_ms)
        .map_err(|_| CmdError::ShutdownFailed)?;
    if !exits {
        // No reply until the shutdown fails or is aborted (on success the server exits).
        ctx.client.block_request = Some(BlockRequest {
            keys: Vec::new(),
            timeout_at_ms: None,
            on_timeout: TimeoutReply::NullArray,
            argv: None,
        });
    }
    Ok(())
}

fn parse_shutdown(argv: &[Bytes]) -> Result<ShutdownOpts, CmdError> {
    let mut save: Option<ShutdownMode> = None;
    let mut conflict = false;
    let mut modifiers = 0;
    let mut aborts = 0;
    let mut on_save_error = OnSaveError::Refuse;
    for a in &argv[1..] {
        let wanted = if is(a, "NOSAVE") {
            ShutdownMode::NoSave
        } else if is(a, "SAVE") {
            ShutdownMode::Save
        } else if is(a, "NOW") || is(a, "FORCE") {
            if is(a, "FORCE") {
                on_save_error = OnSaveError::ExitAnyway;
            }
            modifiers += 1;
            continue;
        } else if is(a, "ABORT") {
            aborts += 1;
            continue;
        } else {
            return Err(CmdError::Syntax);
        };
        conflict |= save.is_some_and(|s| s != wanted);
        save = Some(wanted);
    }
    if conflict || (aborts > 0 && (save.is_some() || modifiers > 0)) {
        return Err(CmdError::Syntax);
    }
    Ok(ShutdownOpts {
        mode: save.unwrap_or(ShutdownMode::Default),
        on_save_error,
        now: argv[1..].iter().any(|a| is(a, "NOW")),
        abort: aborts > 0,
    })
}

/// MONITOR: from now on the client receives every command other clients run. Sent again,
/// it is ignored without a reply, as in Valkey.
fn monitor(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    if ctx.client.in_exec {
        // It would stop the client's replies from being one per command (Valkey 7.0).
        return Err(CmdError::Multi(crate::commands::error::MultiError::MonitorInExec));
    }
    if ctx.client.kind == ClientKind::Monitor {
        return Ok(());
    }
    ctx.client.kind = ClientKind::Monitor;
    ctx.srv.monitors.push(ctx.slot);
    ctx.out.ok();
    Ok(())
}

/// Parse a millisecond timeout as Valkey's `getTimeoutFromObjectOrReply` does; returns the
/// absolute deadline (ms), or 0 for "no timeout".
pub fn parse_timeout_ms(arg: &[u8], now_ms: i64) -> Result<i64, CmdError> {
    let t = parse_i64(arg).ok_or(CmdError::TimeoutNotInteger)?;
    if t < 0 {
        return Err(CmdError::TimeoutNegative);
    }
    if t == 0 {
        return Ok(0);
    }
    t.checked_add(now_ms).ok_or(CmdError::TimeoutOutOfRange)
}

// ---------------------------------------------------------------------------------------
// DEBUG

/// One DEBUG subcommand: its name and arity counted from DEBUG itself (negative = at least).
struct DebugSub {
    name: &'static str,
    arity: i32,
    handler: fn(&mut ServerCtx, &[Bytes]) -> CmdResult,
}

/// The DEBUG subcommands. Families that own a debugging feature (RELOAD, DIGEST, ...) add
/// their entries here.
static DEBUG_SUBCOMMANDS: &[DebugSub] = &[
    DebugSub { name: "help", arity: 2, handler: debug_help },
    DebugSub { name: "sleep", arity: 3, handler: debug_sleep },
    DebugSub { name: "set-active-expire", arity: 3, handler: debug_set_active_expire },
    // Valkey 9.1 ignores words after the key.
    DebugSub { name: "object", arity: -3, handler: debug_object },
    DebugSub { name: "reload", arity: -2, handler: debug_reload },
    DebugSub { name: "populate", arity: -3, handler: debug_populate },
    DebugSub { name: "digest", arity: 2, handler: debug_digest },
    DebugSub { name: "digest-value", arity: -2, handler: debug_digest_value },
    DebugSub { name: "change-repl-id", arity: 2, handler: debug_change_repl_id },
    DebugSub { name: "log", arity: 3, handler: debug_log },
    DebugSub { name: "error", arity: 3, handler: debug_error },
    DebugSub { name: "protocol", arity: 3, handler: debug_protocol },
    DebugSub { name: "loadaof", arity: -2, handler: debug_ops::loadaof },
    DebugSub {
        name: "set-skip-checksum-validation",
        arity: 3,
        handler: debug_ops::set_skip_checksum_validation,
    },
    DebugSub { name: "pause-cron", arity: 3, handler: debug_ops::pause_cron },
    DebugSub { name: "replicate", arity: -3, handler: debug_ops::replicate },
    DebugSub { name: "stringmatch-test", arity: 2, handler: debug_ops::stringmatch_test },
    DebugSub { name: "leak", arity: 3, handler: debug_ops::leak },
    DebugSub { name: "assert", arity: -2, handler: debug_ops::crash },
    DebugSub { name: "panic", arity: -2, handler: debug_ops::crash },
    DebugSub { name: "segfault", arity: -2, handler: debug_ops::crash },
    DebugSub { name: "oom", arity: -2, handler: debug_ops::crash },
    DebugSub { name: "restart", arity: -2, handler: debug_ops::restart },
    DebugSub { name: "crash-and-recover", arity: -2, handler: debug_ops::restart },
    DebugSub {
        name: "config-rewrite-force-all",
        arity: 2,
        handler: debug_ops::config_rewrite_force_all,
    },
    DebugSub { name: "listpack", arity: 3, handler: debug_inspect::listpack },
    // At most one word after the key (the handler checks).
    DebugSub { name: "quicklist", arity: -3, handler: debug_inspect::quicklist },
    DebugSub { name: "htstats", arity: -3, handler: debug_inspect::htstats },
    DebugSub { name: "htstats-key", arity: -3, handler: debug_inspect::htstats_key },
    DebugSub { name: "sdslen", arity: 3, handler: debug_inspect::sdslen },
    DebugSub { name: "structsize", arity: 2, handler: debug_inspect::structsize },
    DebugSub { name: "client-eviction", arity: 2, handler: debug_inspect::client_eviction },
    DebugSub {
        name: "quicklist-packed-threshold",
        arity: 3,
        handler: debug_knobs::quicklist_packed_threshold,
    },
    DebugSub { name: "aof-flush-sleep", arity: 3, handler: debug_knobs::aof_flush_sleep },
    DebugSub { name: "dict-resizing", arity: 3, handler: debug_knobs::dict_resizing },
    DebugSub { name: "replybuffer", arity: 4, handler: debug_knobs::replybuffer },
    DebugSub { name: "mallctl", arity: -3, handler: debug_knobs::mallctl_int },
    DebugSub { name: "mallctl-str", arity: -3, handler: debug_knobs::mallctl_str },
    DebugSub { name: "force-tls-write-error", arity: 3, handler: debug_ops::no_tls },
];

/// Whether this client may run DEBUG under `enable-debug-command` (dispatch checks it
/// before authentication and ACL, as Valkey checks its protected commands).
pub fn debug_allowed(
    config: &crate::config::Config,
    client: &crate::server::client::Client,
) -> bool {
    match config.enable_debug_command {
        EnableDebugCommand::Yes => true,
        EnableDebugCommand::Local => client.is_local(),
        EnableDebugCommand::No => false,
    }
}

fn debug(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let sub = DEBUG_SUBCOMMANDS.iter().find(|s| is(&argv[1], s.name));
    match sub {
        Some(s) if arity_ok(s.arity, argv.len()) => (s.handler)(ctx, argv),
        _ => Err(subcommand_syntax(argv)),
    }
}

fn arity_ok(arity: i32, argc: usize) -> bool {
    (arity > 0 && argc == arity as usize) || (arity < 0 && argc >= arity.unsigned_abs() as usize)
}

/// DEBUG HELP: Valkey 9.1's entries, word for word and in its order, for the subcommands
/// ferrokey has. Left out, and answered as unknown subcommands: the cluster bus knobs
/// (DROP-CLUSTER-PACKET-FILTER, CLOSE-CLUSTER-LINK-ON-PACKET-DROP,
/// DISABLE-CLUSTER-RANDOM-PING, DISABLE-CLUSTER-RECONNECTION, SLOTMIGRATION, CLUSTERLINK:
/// no cluster mode), REPLYBUFFER PEAK-RESET-TIME (no peak tracking), PAUSE-AFTER-FORK,
/// DELAY-RDB-CLIENT-FREE-SECOND (no dual-channel replication), HASHTABLE-CAN-ABORT-SHRINK
/// (a shrink here is never aborted), CLIENT-ENFORCE-REPLY-LIST (one reply buffer, no static
/// buffer beside a list), FORCE-FREE-PRIMARY-ASYNC and PROTECT-CLIENT (clients are freed
/// where they close, with no deferred path to force).
fn debug_help(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    reply_help(
        ctx.out,
        "DEBUG",
        &[
            "AOF-FLUSH-SLEEP <microsec>",
            "    Server will sleep before flushing the AOF, this is used for testing.",
            "ASSERT",
            "    Crash by assertion failed.",
            "CHANGE-REPL-ID",
            "    Change the replication IDs of the instance.",
            "    Dangerous: should be used only for testing the replication subsystem.",
            "CONFIG-REWRITE-FORCE-ALL",
            "    Like CONFIG REWRITE but writes all configuration options, including",
            "    keywords not listed in original configuration file or default values.",
            "CRASH-AND-RECOVER [<milliseconds>]",
            "    Hard crash and restart after a <milliseconds> delay (default 0).",
            "DIGEST",
            "    Output a hex signature representing the current DB content.",
            "DIGEST-VALUE <key> [<key> ...]",
            "    Output a hex signature of the values of all the specified keys.",
            "ERROR <string>",
            "    Return a RESP protocol error with <string> as message. Useful for clients",
            "    unit tests to simulate error replies.",
            "LEAK <string>",
            "    Create a memory leak of the input string.",
            "LOG <message>",
            "    Write <message> to the server log.",
            "HTSTATS <dbid> [full]",
            "    Return hash table statistics of the specified database.",
            "HTSTATS-KEY <key> [full]",
            "    Like HTSTATS but for the hash table stored at <key>'s value.",
            "LOADAOF",
            "    Flush the AOF buffers on disk and reload the AOF in memory.",
            "REPLICATE <string>",
            "    Replicates the provided string to replicas, allowing data divergence.",
            "OBJECT <key> [fast]",
            "    Show low level info about `key` and associated value.",
            "    Some fields of the default behavior may be time consuming to fetch,",
            "    and `fast` can be passed to avoid fetching them.",
            "OOM",
            "    Crash the server simulating an out-of-memory error.",
            "PANIC",
            "    Crash the server simulating a panic.",
            "POPULATE <count> [<prefix>] [<size>]",
            "    Create <count> string keys named key:<num>. If <prefix> is specified then",
            "    it is used instead of the 'key' prefix. These are not propagated to",
            "    replicas. Cluster slots are not respected so keys not belonging to the",
            "    current node can be created in cluster mode.",
            "PROTOCOL <type>",
            "    Reply with a test value of the specified type. <type> can be: string,",
            "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
            "    true, false.",
            "RELOAD [option ...]",
            "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
            "    * MERGE: conflicting keys will be loaded from RDB.",
            "    * NOFLUSH: the existing database will not be removed before load, but",
            "      conflicting keys will generate an exception and kill the server.",
            "    * NOSAVE: the database will be loaded from an existing RDB file.",
            "    Examples:",
            "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
            "      the database.",
            "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
            "      existing RDB file.",
            "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
            "      file to the database.",
            "RESTART [<milliseconds>]",
            "    Graceful restart: save config, db, restart after a <milliseconds> delay (default 0).",
            "SDSLEN <key>",
            "    Show low level SDS string info representing `key` and value.",
            "SEGFAULT",
            "    Crash the server with sigsegv.",
            "SET-ACTIVE-EXPIRE <0|1>",
            "    Setting it to 0 disables expiring keys in background when they are not",
            "    accessed (otherwise the behavior). Setting it to 1 reenables back the",
            "    default.",
            "QUICKLIST-PACKED-THRESHOLD <size>",
            "    Sets the threshold for elements to be inserted as plain vs packed nodes",
            "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
            "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
            "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
            "SLEEP <seconds>",
            "    Stop the server for <seconds>. Decimals allowed.",
            "STRINGMATCH-TEST",
            "    Run a fuzz tester against the stringmatchlen() function.",
            "STRUCTSIZE",
            "    Return the size of different core C structures.",
            "LISTPACK <key>",
            "    Show low level info about the listpack encoding of <key>.",
            "QUICKLIST <key> [<0|1>]",
            "    Show low level info about the quicklist encoding of <key>.",
            "    The optional argument (0 by default) sets the level of detail",
            "CLIENT-EVICTION",
            "    Show low level client eviction pools info (maxmemory-clients).",
            "PAUSE-CRON <0|1>",
            "    Stop periodic cron job processing.",
            "REPLYBUFFER RESIZING <0|1>",
            "    Enable or disable the reply buffer resize cron job",
            "DICT-RESIZING <0|1>",
            "    Enable or disable the main dict and expire dict resizing.",
            "FORCE-TLS-WRITE-ERROR <0|1>",
            "    Force TLS write error for testing.",
        ],
    );
    Ok(())
}

/// `DEBUG ERROR <string>`: the string as an error reply, as given (client libraries test
/// how they parse `LOADING`, `READONLY`, `NOAUTH`... with it); line breaks become spaces.
fn debug_error(_ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let text = argv[2].iter().map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }).collect();
    Err(CmdError::Raw(text))
}

/// `DEBUG PROTOCOL <type>`: a test value of each reply type, in the client's protocol (what
/// RESP2 cannot say, it says as Valkey does: a push is refused, an attribute left out).
fn debug_protocol(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let out = &mut *ctx.out;
    let t = &argv[2];
    if is(t, "string") {
        out.bulk(b"Hello World");
    } else if is(t, "integer") {
        out.int(12345);
    } else if is(t, "double") {
        // Valkey's test value, not an approximation of pi.
        #[allow(clippy::approx_constant)]
        out.double(3.141);
    } else if is(t, "bignum") {
        out.big_number("1234567999999999999999999999999999999");
    } else if is(t, "null") {
        out.null();
    } else if is(t, "array") || is(t, "set") {
        if is(t, "array") {
            out.array(3);
        } else {
            out.set(3);
        }
        (0..3).for_each(|i| out.int(i));
    } else if is(t, "map") {
        out.map(3);
        for i in 0..3 {
            out.int(i);
            out.boolean(i == 1);
        }
    } else if is(t, "attrib") {
        if out.is_resp3() {
            out.raw(b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n");
        }
        out.bulk(b"Some real reply following the attribute");
    } else if is(t, "push") {
        if !out.is_resp3() {
            return Err(CmdError::Other("ERR RESP2 is not supported by this command".into()));
        }
        out.bulk(b"Some real reply following the push reply");
        out.push(2);
        out.bulk(b"server-cpu-usage");
        out.int(42);
    } else if is(t, "verbatim") {
        out.verbatim("txt", b"This is a verbatim\nstring");
    } else if is(t, "true") || is(t, "false") {
        out.boolean(is(t, "true"));
    } else {
        return Err(CmdError::Other(
            "ERR Wrong protocol type name. Please use one of the following: \
             string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false"
                .into(),
        ));
    }
    Ok(())
}

/// The number at the start of `a`, as C's `strtod` reads it (0 when there is none).
fn leading_f64(a: &[u8]) -> f64 {
    let s = String::from_utf8_lossy(a);
    let s = s.trim_start();
    let end = s
        .char_indices()
        .take_while(|&(_, c)| c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | 'e' | 'E'))
        .last()
        .map_or(0, |(i, c)| i + c.len_utf8());
    (1..=end).rev().find_map(|n| s[..n].parse::<f64>().ok()).unwrap_or(0.0)
}

/// The integer at the start of `a`, as C's `atoi` reads it (0 when there is none).
fn leading_i64(a: &[u8]) -> i64 {
    let s = String::from_utf8_lossy(a);
    let s = s.trim_start();
    let sign_len = usize::from(s.starts_with(['+', '-']));
    let digits = s[sign_len..].bytes().take_while(u8::is_ascii_digit).count();
    s[..sign_len + digits].parse().unwrap_or(0)
}

/// DEBUG SLEEP seconds: block the whole server (decimals allowed; not a number or
/// negative means no sleep).
fn debug_sleep(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let secs = leading_f64(&argv[2]);
    if secs > 0.0 && secs.is_finite() {
        std::thread::sleep(Duration::from_secs_f64(secs));
    }
    ctx.out.ok();
    Ok(())
}

fn debug_set_active_expire(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    ctx.srv.active_expire_enabled = leading_i64(&argv[2]) != 0;
    ctx.out.ok();
    Ok(())
}

/// DEBUG DIGEST: the dataset's signature (see `digest`).
fn debug_digest(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    ctx.out.simple(&hex(&digest::dataset(&ctx.srv.dbs)));
    Ok(())
}

/// DEBUG DIGEST-VALUE key...: each value's signature, zeros for a missing key. Expired keys
/// not yet deleted count, as in Valkey (a debugging view, not a read).
fn debug_digest_value(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let db = &ctx.srv.dbs[ctx.client.db];
    ctx.out.array(argv.len() - 2);
    for key in &argv[2..] {
        let d = db.stored(key).map_or([0; 20], digest::of_value);
        ctx.out.simple(&hex(&d));
    }
    Ok(())
}

/// DEBUG LOG message: the message in the server's log, at warning level.
fn debug_log(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    tracing::warn!("DEBUG LOG: {}", String::from_utf8_lossy(&argv[2]));
    ctx.out.ok();
    Ok(())
}

/// DEBUG CHANGE-REPL-ID: a new replication id, the old one forgotten.
fn debug_change_repl_id(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    crate::replication::change_replid(ctx.srv);
    ctx.out.ok();
    Ok(())
}

/// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: save, empty the dataset, load the file back.
fn debug_reload(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let mut opts = Reload::default();
    for a in &argv[2..] {
        if is(a, "MERGE") {
            opts.duplicates = Duplicates::Replace;
        } else if is(a, "NOFLUSH") {
            opts.flush = Flush::No;
        } else if is(a, "NOSAVE") {
            opts.save_first = SaveFirst::No;
        } else {
            return Err(CmdError::DebugReloadOption);
        }
    }
    let now = ctx.now_ms;
    let read = crate::persist::save::reload(&mut crate::persist::store(ctx.srv), opts, now);
    let installed = read.and_then(|r| {
        if r.changes_dataset() {
            // Before the change, while WATCH and tracking can see which keys exist.
            ctx.srv.db_modified(None);
        }
        crate::persist::save::install_reloaded(&mut crate::persist::store(ctx.srv), r, now)
    });
    match installed {
        Ok(()) => {
            tracing::info!("DB reloaded by DEBUG RELOAD");
            ctx.out.ok()
        }
        Err(ReloadError::Save) => return Err(CmdError::SaveFailed),
        Err(ReloadError::Load) => return Err(CmdError::RdbLoadFailed),
    }
    Ok(())
}

/// Longest key DEBUG POPULATE writes (Valkey formats it into a 128-byte buffer).
const POPULATE_KEY_MAX: usize = 127;

/// A non-negative integer argument (Valkey's `getPositiveLongFromObjectOrReply`, whose one
/// error covers both a negative number and no number).
fn non_negative(a: &[u8]) -> Result<u64, CmdError> {
    parse_i64(a).and_then(|n| u64::try_from(n).ok()).ok_or(CmdError::OutOfRangePositive)
}

/// DEBUG POPULATE count [prefix] [size]: creates the string keys `<prefix>:<n>` (prefix
/// `key`) for n in 0..count with the value `value:<n>`, cut or padded with zero bytes to
/// `size` when one is given. Keys that exist are left alone.
fn debug_populate(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if argv.len() > 5 {
        return Err(subcommand_syntax(argv));
    }
    let count = non_negative(&argv[2])?;
    let size = argv.get(4).map(|a| non_negative(a)).transpose()?.unwrap_or(0) as usize;
    // The prefix is read as a C string: it ends at a zero byte.
    let prefix: &[u8] = match argv.get(3) {
        Some(p) => p.split(|&b| b == 0).next().unwrap_or_default(),
        None => b"key",
    };
    check_populate_bounds(ctx, count, prefix.len(), size)?;
    let (db, now) = (ctx.client.db, ctx.now_ms);
    let mut key = Vec::with_capacity(prefix.len() + 21);
    for n in 0..count {
        key.clear();
        key.extend_from_slice(prefix);
        key.push(b':');
        key.extend_from_slice(n.to_string().as_bytes());
        key.truncate(POPULATE_KEY_MAX);
        if ctx.srv.dbs[db].contains(&key, now) {
            continue;
        }
        let mut value = format!("value:{n}").into_bytes();
        if size > 0 {
            value.resize(size, 0);
        }
        ctx.srv.dbs[db].set_str(&key, StrValue::Raw(value.into_boxed_slice()), Ttl::Clear, now);
        ctx.srv.key_modified(db, &key);
    }
    ctx.out.ok();
    Ok(())
}

/// The fewest bytes a populated key costs besides its key and value bytes (entry header and
/// hashtable slot), for [`check_populate_bounds`].
const POPULATE_KEY_OVERHEAD_MIN: u64 = 16;

/// DEBUG POPULATE refuses, before it writes anything, what could only end with the process
/// out of memory (Valkey would abort there): a value longer than `proto-max-bulk-len`, or
/// more keys than `maxmemory` (else the machine's memory) could hold at their smallest.
fn check_populate_bounds(ctx: &ServerCtx, count: u64, prefix_len: usize, size: usize) -> CmdResult {
    if size as u64 > ctx.srv.config.proto_max_bulk_len {
        return Err(CmdError::StringTooLong);
    }
    let limit_bytes = match ctx.srv.config.maxmemory_bytes {
        0 => crate::commands::info::mem_source::total_system_memory() as u64,
        n => n,
    };
    let key_len = (prefix_len + 21).min(POPULATE_KEY_MAX) as u64;
    let per_key = POPULATE_KEY_OVERHEAD_MIN + key_len + (size as u64).max(6);
    if count.saturating_mul(per_key) > limit_bytes {
        return Err(CmdError::Other(format!(
            "ERR DEBUG POPULATE of {count} keys needs more memory than the server may use \
             ({limit_bytes} bytes)"
        )));
    }
    Ok(())
}

/// Length of an RDB length prefix.
fn rdb_len_bytes(n: usize) -> usize {
    match n {
        0..=63 => 1,
        64..=16383 => 2,
        _ if n <= u32::MAX as usize => 5,
        _ => 9,
    }
}

/// Bytes the value takes in an RDB file (strings without LZF compression).
fn serialized_len(value: ValueRef<'_>) -> usize {
    match value {
        ValueRef::Str(StrRef::Int(n)) => match n {
            n if i8::try_from(n).is_ok() => 2,
            n if i16::try_from(n).is_ok() => 3,
            n if i32::try_from(n).is_ok() => 5,
            n => {
                let digits = n.to_string().len();
                rdb_len_bytes(digits) + digits
            }
        },
        ValueRef::Str(StrRef::Raw(b)) => rdb_len_bytes(b.len()) + b.len(),
        // Until RDB serialization lands (issue 8), an aggregate reports its memory size.
        ValueRef::Agg(a) => a.alloc_bytes(),
    }
}

/// DEBUG OBJECT key, in Valkey's line format.
/// DEBUG OBJECT key [fast]: `fast` leaves out `serializedlength` (the one field that costs
/// a walk of the value); any other word there is ignored, and more arguments are refused, as
/// in Valkey 9.1.
fn debug_object(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if argv.len() > 4 {
        return Err(subcommand_syntax(argv));
    }
    let fast = argv.get(3).is_some_and(|a| is(a, "fast"));
    let now = ctx.now_ms;
    let obj = ctx.db().object(&argv[2], now).ok_or(CmdError::NoSuchKey)?;
    // No value is shared in Valkey 9.1 (each object embeds its key): the count is 1.
    let refcount = 1;
    let clock = lru_clock(now);
    let lru = obj.lru();
    let idle_s = if clock >= lru { clock - lru } else { clock + (1 << 24) - lru };
    let serialized = if fast {
        String::new()
    } else {
        format!(" serializedlength:{}", serialized_len(obj.value_ref()))
    };
    let line = format!(
        "Value at:{:p} refcount:{} encoding:{}{} lru:{} lru_seconds_idle:{}",
        obj as *const KeyEntry,
        refcount,
        obj.encoding(),
        serialized,
        lru,
        idle_s
    );
    ctx.out.simple(&line);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_style_number_prefixes() {
        assert_eq!(leading_f64(b"0.5"), 0.5);
        assert_eq!(leading_f64(b"1.5abc"), 1.5);
        assert_eq!(leading_f64(b"x"), 0.0);
        assert_eq!(leading_f64(b"-1"), -1.0);
        assert_eq!(leading_f64(b"2e"), 2.0);
        assert_eq!(leading_i64(b"12x"), 12);
        assert_eq!(leading_i64(b"x"), 0);
        assert_eq!(leading_i64(b" -3"), -3);
        assert_eq!(leading_i64(b"+"), 0);
    }

    #[test]
    fn rdb_lengths() {
        let s = |v: StrRef<'static>| ValueRef::Str(v);
        assert_eq!(serialized_len(s(StrRef::Int(123))), 2);
        assert_eq!(serialized_len(s(StrRef::Int(1000))), 3);
        assert_eq!(serialized_len(s(StrRef::Int(100_000))), 5);
        assert_eq!(serialized_len(s(StrRef::Raw(b"v"))), 2);
        assert_eq!(serialized_len(s(StrRef::Raw(&[b'a'; 100]))), 102);
    }

    #[test]
    fn timeouts() {
        assert_eq!(parse_timeout_ms(b"10", 1000), Ok(1010));
        assert_eq!(parse_timeout_ms(b"0", 1000), Ok(0));
        assert_eq!(parse_timeout_ms(b"-1", 1000), Err(CmdError::TimeoutNegative));
        assert_eq!(parse_timeout_ms(b"x", 1000), Err(CmdError::TimeoutNotInteger));
        assert_eq!(
            parse_timeout_ms(i64::MAX.to_string().as_bytes(), 1000),
            Err(CmdError::TimeoutOutOfRange)
        );
    }
}
