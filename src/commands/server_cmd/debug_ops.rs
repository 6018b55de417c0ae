//! DEBUG subcommands that act on the server rather than inspect one key: reloading the
//! AOF (`LOADAOF`), testing knobs (`SET-SKIP-CHECKSUM-VALIDATION`, `PAUSE-CRON`),
//! `REPLICATE` (a command sent to the replicas only, to make them diverge on purpose),
//! `STRINGMATCH-TEST` (a fuzz run of the glob matcher), `LEAK`, the deliberate crashes
//! (`ASSERT`, `PANIC`, `SEGFAULT`, `OOM`) that Valkey's test suite uses to check that a
//! supervisor notices a dead server, `RESTART` / `CRASH-AND-RECOVER` (the server execs
//! itself anew), `CONFIG-REWRITE-FORCE-ALL` and `FORCE-TLS-WRITE-ERROR`. Replies and errors
//! are Valkey 9.1's.

use bytes::Bytes;

use crate::commands::{CmdError, CmdResult, ServerCtx};

/// `DEBUG LOADAOF`: the AOF's buffer written and synced, the dataset emptied and the AOF
/// directory replayed from disk, as Valkey does. When that fails (no AOF directory, a
/// corrupt file) the dataset stays empty and the error says so. The function libraries go
/// too, since the AOF holds them; a script in the file (only Redis 6 and older wrote EVAL
/// there; ferrokey logs scripts' effects) is refused.
pub fn loadaof(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    use crate::persist::aof::startup;
    let now = ctx.now_ms;
    crate::persist::aof::write_and_sync(&mut crate::persist::store(ctx.srv));
    for db in ctx.srv.dbs.iter_mut() {
        db.flush(false);
    }
    if let Err(e) = ctx.srv.functions.flush() {
        tracing::warn!("Could not drop the function libraries before DEBUG LOADAOF: {e}");
    }
    let settings = startup::LoadSettings::new(&ctx.srv.config);
    ctx.srv.set_loading(true);
    let loaded = {
        let mut replayer = crate::commands::aof_replay::Replayer::new(ctx.srv, now, refuse_script);
        startup::load(&settings, &mut replayer, now)
    };
    ctx.srv.set_loading(false);
    ctx.srv.refresh_removal_log();
    // As Valkey: a load that found no AOF, or had to cut a truncated one, is an error too.
    use crate::persist::aof::load::AofStatus;
    let loaded = loaded.and_then(|l| match l.status {
        AofStatus::Ok | AofStatus::Empty => Ok(()),
        other => Err(format!("DEBUG LOADAOF: the AOF load ended with {other:?}")),
    });
    match loaded {
        Ok(()) => {
            tracing::info!("Append Only File loaded by DEBUG LOADAOF");
            ctx.out.ok();
            Ok(())
        }
        Err(e) => {
            tracing::warn!("{e}");
            Err(CmdError::Raw(
                b"ERR Error trying to load the AOF files, check server logs.".to_vec(),
            ))
        }
    }
}

/// The script runner of DEBUG LOADAOF's replay: EVAL in the file is an error reply.
fn refuse_script(
    _srv: &mut crate::server::state::ServerState,
    _token: usize,
    slot: &mut crate::server::state::Slot,
    _req: &crate::scripting::Request,
    _argv: &[Bytes],
    _now_ms: i64,
) -> bool {
    slot.out.error("ERR scripts in the AOF cannot be replayed by DEBUG LOADAOF");
    true
}

/// `DEBUG SET-SKIP-CHECKSUM-VALIDATION <0|1>`: RDB files and RESTORE payloads load without
/// their CRC-64 checked.
pub fn set_skip_checksum_validation(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    crate::persist::rdb::set_skip_checksum_validation(super::leading_i64(&argv[2]) != 0);
    ctx.out.ok();
    Ok(())
}

/// `DEBUG PAUSE-CRON <0|1>`: the time events (active expiry, rehashing, persistence
/// schedules, replication pings...) stop until it is set back to 0.
pub fn pause_cron(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    ctx.srv.cron_paused = super::leading_i64(&argv[2]) != 0;
    ctx.out.ok();
    Ok(())
}

/// `DEBUG REPLICATE <command> [arg ...]`: the command goes to the replicas only (not to the
/// AOF, not run here), in whatever database they have selected.
pub fn replicate(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if ctx.srv.feed.repl_gets_commands() {
        crate::server::propagate::append_command(&mut ctx.srv.feed.repl, &argv[2..]);
    }
    ctx.out.ok();
    Ok(())
}

/// Patterns STRINGMATCH-TEST tries.
const STRINGMATCH_ROUNDS: usize = 100_000;

/// `DEBUG STRINGMATCH-TEST`: random patterns (stars, classes, escapes, in any order and
/// unbalanced) against random strings, through the matcher KEYS, SCAN and the ACL use; a
/// match that never returns or overruns would crash the server.
pub fn stringmatch_test(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    const ALPHABET: &[u8] = b"ab*?[]^-\\";
    let mut rng = crate::util::rng::Rng::new(ctx.srv.random());
    let mut pattern = Vec::new();
    let mut text = Vec::new();
    for _ in 0..STRINGMATCH_ROUNDS {
        pattern.clear();
        text.clear();
        for _ in 0..rng.below(32) {
            pattern.push(ALPHABET[rng.below(ALPHABET.len())]);
        }
        for _ in 0..rng.below(32) {
            text.push(ALPHABET[rng.below(ALPHABET.len())]);
        }
        std::hint::black_box(crate::config::glob::glob_match(&pattern, &text, false));
    }
    ctx.out.simple("Apparently the server did not crash: test passed");
    Ok(())
}

/// `DEBUG LEAK <string>`: a copy of the string that is never freed (to test memory
/// reporting).
pub fn leak(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    std::mem::forget(argv[2].to_vec());
    ctx.out.ok();
    Ok(())
}

/// `DEBUG ASSERT | PANIC | SEGFAULT | OOM`: the server dies on purpose, after logging why,
/// with an abort (a core dump where the system keeps them), as Valkey does after its crash
/// report (a plain exit with status 1 under `use-exit-on-panic`). Nothing is saved.
pub fn crash(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let what = String::from_utf8_lossy(&argv[1]).to_ascii_uppercase();
    let context = &ctx.srv.config.testing.debug_context;
    if !context.is_empty() {
        tracing::error!("debug-context: {context}");
    }
    match what.as_str() {
        "ASSERT" => tracing::error!("=== ASSERTION FAILED === DEBUG ASSERT: 1 == 2"),
        "OOM" => tracing::error!("Out Of Memory allocating (DEBUG OOM)"),
        "SEGFAULT" => tracing::error!("Crashed by DEBUG SEGFAULT"),
        _ => tracing::error!("Guru Meditation: DEBUG PANIC called"),
    }
    // `use-exit-on-panic`: a plain exit, for supervisors and tools that treat an abort as
    // a failure of their own.
    if ctx.srv.config.testing.use_exit_on_panic {
        std::process::exit(1);
    }
    std::process::abort()
}

/// `DEBUG CONFIG-REWRITE-FORCE-ALL`: CONFIG REWRITE that writes every directive, defaults
/// included. Without a config file Valkey's rewrite fails on its null path (`EFAULT`); the
/// same error comes back here.
pub fn config_rewrite_force_all(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let written = match ctx.srv.config_file.as_deref() {
        Some(path) => crate::commands::config_cmd::config_to_write(ctx.srv)
            .rewrite_file(path, crate::config::Written::All),
        None => Err(std::io::Error::from_raw_os_error(libc::EFAULT)),
    };
    match written {
        Ok(()) => {
            ctx.out.ok();
            Ok(())
        }
        Err(e) => Err(CmdError::err(format!(
            "CONFIG-REWRITE-FORCE-ALL failed: {}",
            crate::util::strerror(&e)
        ))),
    }
}

/// How DEBUG RESTART and CRASH-AND-RECOVER end the running server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Restart {
    /// RESTART: the config file rewritten, then the shutdown's persistence (the AOF synced,
    /// the final RDB when save points are set), as SHUTDOWN NOW does.
    Graceful,
    /// CRASH-AND-RECOVER: nothing saved, as after a crash.
    Crash,
}

/// `DEBUG RESTART [<ms>]` and `DEBUG CRASH-AND-RECOVER [<ms>]`: the server replaces itself
/// with a new run of its executable and command line (the config file by its absolute path,
/// since the server may have changed directory), after a delay (negative is 0). Sockets and
/// files are opened close-on-exec, so the new process starts with none of them and binds
/// the same ports; clients see their connections close. When something fails before the
/// exec the server keeps running and says so; an exec that fails ends the process, as
/// Valkey's does.
pub fn restart(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let delay_ms = match argv.get(2) {
        Some(a) => crate::types::string::parse_i64(a).ok_or(CmdError::NotInteger)?.max(0),
        None => 0,
    };
    let how = if super::is(&argv[1], "restart") { Restart::Graceful } else { Restart::Crash };
    let failed = Err(CmdError::Debug(crate::commands::error::DebugError::RestartFailed));
    let exe = std::path::PathBuf::from(&ctx.srv.executable);
    if exe.as_os_str().is_empty() || !exe.is_file() {
        tracing::warn!(
            "Can't restart: this process has no permissions to execute {}",
            exe.display()
        );
        return failed;
    }
    if how == Restart::Graceful {
        if let Some(path) = ctx.srv.config_file.as_deref() {
            let rewrite = crate::commands::config_cmd::config_to_write(ctx.srv).rewrite(path);
            if let Err(e) = rewrite {
                tracing::warn!("Can't restart: configuration rewrite process failed: {e}");
                return failed;
            }
        }
        let mode = crate::server::state::ShutdownMode::Default;
        let store = &mut crate::persist::store(ctx.srv);
        let refuse = crate::persist::save::OnSaveError::Refuse;
        if crate::persist::save::prepare_shutdown(store, mode, refuse, ctx.now_ms).is_err() {
            tracing::warn!("Can't restart: error preparing for shutdown");
            return failed;
        }
    }
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let (Some(first), Some(path)) = (args.get_mut(1), ctx.srv.config_file.as_deref()) {
        if !first.to_string_lossy().starts_with('-') {
            *first = path.as_os_str().to_owned();
        }
    }
    if delay_ms > 0 {
        std::thread::sleep(std::time::Duration::from_millis(delay_ms as u64));
    }
    tracing::warn!("Restarting the server by DEBUG {}", String::from_utf8_lossy(&argv[1]));
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(&exe);
    if let Some(arg0) = args.first() {
        cmd.arg0(arg0);
    }
    let e = cmd.args(args.iter().skip(1)).exec();
    tracing::warn!("Can't restart: exec of {} failed: {e}", exe.display());
    std::process::exit(1)
}

/// `DEBUG FORCE-TLS-WRITE-ERROR <0|1>`: ferrokey serves no TLS, so there is no TLS write to
/// make fail; the reply is Valkey's for a server without TLS.
pub fn no_tls(_ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    Err(CmdError::err("TLS is not enabled"))
}
