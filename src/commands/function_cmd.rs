//! FCALL, FCALL_RO and FUNCTION.
//!
//! FCALL finds the function, checks its flags as EVAL checks a script's shebang
//! (`script_cmd::check_flags`) and leaves the run to the runtime. FUNCTION LOAD, DELETE,
//! FLUSH and RESTORE change the dataset: they count as writes, so they reach the AOF and
//! replicas as they were sent, as in Valkey. DUMP and RESTORE use Valkey's payload: each
//! library as an RDB function record, then the RDB version and a CRC-64.

use bytes::Bytes;

use crate::commands::error::ScriptError;
use crate::commands::script_cmd::{check_flags, keys_and_args, RO_KEYS, RW_KEYS};
use crate::commands::table::{acl, flag, Server};
use crate::commands::{CmdError, CmdResult, Command, ServerCtx};
use crate::persist::rdb::dump;
use crate::persist::rdb::encoding::{RdbReader, RdbWriter};
use crate::persist::rdb::file::OP_FUNCTION2;
use crate::scripting::functions::RestorePolicy;
use crate::scripting::Request;

const G: &str = "scripting";
const FCALL_FLAGS: u64 = flag::NOSCRIPT
    | flag::STALE
    | flag::SKIP_MONITOR
    | flag::NO_MANDATORY_KEYS
    | flag::MOVABLE_KEYS;
const SCRIPTING: u64 = acl::SLOW | acl::SCRIPTING;
const WRITING: u64 = acl::WRITE | acl::SLOW | acl::SCRIPTING;

const FUNCTION_SUBCOMMANDS: &[Command] = &[
    Command::new(
        "function|load",
        -3,
        flag::WRITE | flag::DENYOOM | flag::NOSCRIPT,
        WRITING,
        Server(function_load),
    )
    .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
    .doc(G, "7.0.0", "Creates a library.", "O(1) (considering compilation time is redundant)"),
    Command::new(
        "function|delete",
        3,
        flag::WRITE | flag::NOSCRIPT,
        WRITING,
        Server(function_delete),
    )
    .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
    .doc(G, "7.0.0", "Deletes a library and its functions.", "O(1)"),
    Command::new(
        "function|flush",
        -2,
        flag::WRITE | flag::NOSCRIPT,
        WRITING,
        Server(function_flush),
    )
    .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
    .doc(
        G,
        "7.0.0",
        "Deletes all libraries and functions.",
        "O(N) where N is the number of functions deleted",
    ),
    Command::new("function|list", -2, flag::NOSCRIPT, SCRIPTING, Server(function_list))
        .tips(&["nondeterministic_output_order"])
        .doc(
            G,
            "7.0.0",
            "Returns information about all libraries.",
            "O(N) where N is the number of functions",
        ),
    Command::new("function|dump", 2, flag::NOSCRIPT, SCRIPTING, Server(function_dump)).doc(
        G,
        "7.0.0",
        "Dumps all libraries into a serialized binary payload.",
        "O(N) where N is the number of functions",
    ),
    Command::new(
        "function|restore",
        -3,
        flag::WRITE | flag::DENYOOM | flag::NOSCRIPT,
        WRITING,
        Server(function_restore),
    )
    .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
    .doc(
        G,
        "7.0.0",
        "Restores all libraries from a payload.",
        "O(N) where N is the number of functions on the payload",
    ),
    Command::new(
        "function|stats",
        2,
        flag::NOSCRIPT | flag::ALLOW_BUSY,
        SCRIPTING,
        Server(function_stats),
    )
    .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"])
    .doc(G, "7.0.0", "Returns information about a function during execution.", "O(1)"),
    Command::new(
        "function|kill",
        2,
        flag::NOSCRIPT | flag::ALLOW_BUSY,
        SCRIPTING,
        Server(function_kill),
    )
    .tips(&["request_policy:all_shards", "response_policy:one_succeeded"])
    .doc(G, "7.0.0", "Terminates a function during execution.", "O(1)"),
    Command::new("function|help", 2, flag::LOADING | flag::STALE, SCRIPTING, Server(function_help))
        .doc(G, "7.0.0", "Returns helpful text about the different subcommands.", "O(1)"),
];

pub static COMMANDS: &[Command] = &[
    Command::new("fcall", -3, FCALL_FLAGS, SCRIPTING, Server(fcall))
        .keys(RW_KEYS)
        .key_notes(&[
            "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE",
        ])
        .doc(G, "7.0.0", "Invokes a function.", "Depends on the function that is executed."),
    Command::new("fcall_ro", -3, FCALL_FLAGS | flag::READONLY, SCRIPTING, Server(fcall_ro))
        .keys(RO_KEYS)
        .key_notes(&[
            "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS",
        ])
        .doc(
            G,
            "7.0.0",
            "Invokes a read-only function.",
            "Depends on the function that is executed.",
        ),
    Command::container("function", -2, 0, acl::SLOW, FUNCTION_SUBCOMMANDS).doc(
        G,
        "7.0.0",
        "A container for function commands.",
        "Depends on subcommand.",
    ),
];

fn fcall(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    prepare(ctx, argv, false)
}

fn fcall_ro(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    prepare(ctx, argv, true)
}

fn prepare(ctx: &mut ServerCtx, argv: &[Bytes], ro: bool) -> CmdResult {
    let (keys, args) = keys_and_args(argv)?;
    let f = ctx
        .srv
        .functions
        .function(&argv[1])
        .ok_or(CmdError::Script(ScriptError::FunctionNotFound))?;
    let (func, flags) = (f.func.clone(), f.flags);
    let read_only = check_flags(ctx.srv, flags, ro, ctx.client.kind)?;
    ctx.client.script =
        Some(Box::new(Request { func, is_function: true, keys, args, flags, read_only }));
    Ok(())
}

fn function_load(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let (replace, code) = match argv {
        [_, _, code] => (false, code),
        [_, _, opt, code] if opt.eq_ignore_ascii_case(b"replace") => (true, code),
        [_, _, opt, _] => {
            return Err(CmdError::Other(format!(
                "ERR Unknown option given: {}",
                String::from_utf8_lossy(opt)
            )))
        }
        _ => return Err(CmdError::WrongArity("function|load".into())),
    };
    let name = ctx.srv.functions.load(code, replace).map_err(CmdError::Other)?;
    ctx.srv.changes += 1;
    ctx.out.bulk(name.as_bytes());
    Ok(())
}

fn function_delete(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let name = String::from_utf8_lossy(&argv[2]);
    if !ctx.srv.functions.delete(&name) {
        return Err(CmdError::Other("ERR Library not found".into()));
    }
    ctx.srv.changes += 1;
    ctx.out.ok();
    Ok(())
}

fn function_flush(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let ok = match argv.get(2) {
        None => true,
        Some(a) => {
            argv.len() == 3 && (a.eq_ignore_ascii_case(b"sync") || a.eq_ignore_ascii_case(b"async"))
        }
    };
    if !ok {
        return Err(CmdError::Other("ERR FUNCTION FLUSH only supports SYNC|ASYNC option".into()));
    }
    ctx.srv.functions.flush().map_err(|e| CmdError::Other(format!("ERR {e}")))?;
    ctx.srv.changes += 1;
    ctx.out.ok();
    Ok(())
}

fn function_list(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let mut pattern: Option<&[u8]> = None;
    let mut with_code = false;
    let mut i = 2;
    while i < argv.len() {
        let a = &argv[i];
        if a.eq_ignore_ascii_case(b"withcode") {
            if with_code {
                return Err(CmdError::Other("ERR Unknown argument withcode".into()));
            }
            with_code = true;
        } else if a.eq_ignore_ascii_case(b"libraryname") {
            if pattern.is_some() {
                return Err(CmdError::Other("ERR library name argument was already given".into()));
            }
            let Some(p) = argv.get(i + 1) else {
                return Err(CmdError::Other("ERR library name argument was not given".into()));
            };
            pattern = Some(p);
            i += 1;
        } else {
            return Err(CmdError::Other(format!(
                "ERR Unknown argument {}",
                String::from_utf8_lossy(a)
            )));
        }
        i += 1;
    }
    let functions = &ctx.srv.functions;
    let libs: Vec<_> = functions
        .libraries()
        .filter(|l| {
            pattern.is_none_or(|p| crate::config::glob::glob_match(p, l.name.as_bytes(), false))
        })
        .collect();
    let out = &mut *ctx.out;
    out.array(libs.len());
    for lib in libs {
        out.map(if with_code { 4 } else { 3 });
        out.bulk(b"library_name");
        out.bulk(lib.name.as_bytes());
        out.bulk(b"engine");
        out.bulk(b"LUA");
        out.bulk(b"functions");
        let fns: Vec<_> = functions.functions_of(lib).collect();
        out.array(fns.len());
        for f in fns {
            out.map(3);
            out.bulk(b"name");
            out.bulk(f.name.as_bytes());
            out.bulk(b"description");
            match &f.description {
                Some(d) => out.bulk(d),
                None => out.null(),
            }
            out.bulk(b"flags");
            let names = f.flags.names();
            out.set(names.len());
            for n in names {
                out.simple(n);
            }
        }
        if with_code {
            out.bulk(b"library_code");
            out.bulk(&lib.code);
        }
    }
    Ok(())
}

/// FUNCTION DUMP's payload of the libraries' code.
pub fn dump_payload(codes: &[Bytes], compress: bool) -> Vec<u8> {
    let mut w = RdbWriter::new(Vec::new(), compress);
    for code in codes {
        w.byte(OP_FUNCTION2).expect("writing to memory cannot fail");
        w.string(code).expect("writing to memory cannot fail");
    }
    dump::seal(w)
}

fn function_dump(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let payload = dump_payload(&ctx.srv.functions.codes(), ctx.srv.config.rdbcompression);
    ctx.out.bulk(&payload);
    Ok(())
}

/// The libraries' code in a FUNCTION DUMP payload, or Valkey's error.
pub fn parse_payload(bytes: &[u8], relaxed: bool, max_len: u64) -> Result<Vec<Bytes>, CmdError> {
    let wrong = || CmdError::Other("ERR DUMP payload version or checksum are wrong".into());
    let data = dump::unseal(bytes, relaxed).map_err(|_| wrong())?;
    // Compressed code may unpack to more than the payload's length: bounded as any string.
    let mut r = RdbReader::new(data, max_len);
    let mut codes = Vec::new();
    while r.position() < data.len() as u64 {
        let op = r.byte().map_err(|_| wrong())?;
        if op != OP_FUNCTION2 {
            return Err(CmdError::Other("ERR given type is not a function".into()));
        }
        let code = r.string().map_err(|_| CmdError::Other("ERR Failed loading library".into()))?;
        codes.push(Bytes::from(code));
    }
    Ok(codes)
}

fn function_restore(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let policy = match argv.get(3) {
        None => RestorePolicy::Append,
        Some(p) if argv.len() == 4 && p.eq_ignore_ascii_case(b"flush") => RestorePolicy::Flush,
        Some(p) if argv.len() == 4 && p.eq_ignore_ascii_case(b"append") => RestorePolicy::Append,
        Some(p) if argv.len() == 4 && p.eq_ignore_ascii_case(b"replace") => RestorePolicy::Replace,
        Some(_) => {
            return Err(CmdError::Other(
                "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE."
                    .into(),
            ))
        }
    };
    let relaxed =
        ctx.srv.config.persistence.rdb_version_check == crate::config::RdbVersionCheck::Relaxed;
    let max_len = crate::persist::rdb::value::LoadLimits::max_string_len(&ctx.srv.config);
    let codes = parse_payload(&argv[2], relaxed, max_len)?;
    ctx.srv.functions.restore(codes, policy).map_err(CmdError::Other)?;
    ctx.srv.changes += 1;
    ctx.out.ok();
    Ok(())
}

fn function_stats(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let run = ctx.srv.script_run.as_ref();
    if let Some(run) = run.filter(|r| r.eval) {
        return Err(CmdError::Script(run.busy_error()));
    }
    let out = &mut *ctx.out;
    out.map(2);
    out.bulk(b"running_script");
    match run {
        None => out.null(),
        Some(run) => {
            out.map(3);
            out.bulk(b"name");
            out.bulk(run.argv.get(1).map_or(&b""[..], |n| &n[..]));
            out.bulk(b"command");
            out.array(run.argv.len());
            for a in &run.argv {
                out.bulk(a);
            }
            out.bulk(b"duration_ms");
            out.int(run.duration_ms() as i64);
        }
    }
    out.bulk(b"engines");
    out.map(1);
    out.bulk(b"LUA");
    out.map(2);
    out.bulk(b"libraries_count");
    out.int(ctx.srv.functions.library_count() as i64);
    out.bulk(b"functions_count");
    out.int(ctx.srv.functions.function_count() as i64);
    Ok(())
}

fn function_kill(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    super::script_cmd::kill(ctx, false)
}

const FUNCTION_HELP: &[&str] = &[
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
];

fn function_help(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    crate::commands::command::reply_help(ctx.out, "FUNCTION", FUNCTION_HELP);
    Ok(())
}
