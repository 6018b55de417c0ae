//! Running a script for a client: the [`Host`] that lets `server.call` run commands.
//!
//! A script's commands run as the *script client* (Valkey's "lua" client): a client of
//! its own, kept in the server between runs, that starts each run in the caller's
//! database, speaks the protocol the script chose with `setresp`, never blocks (a blocking
//! command answers as it would inside MULTI) and is seen by MONITOR as `lua`. Each command
//! goes through the same [`dispatch::call`] as a client's, under the caller's token, so
//! statistics, keyspace events, propagation, the slow log and client tracking treat it as
//! Valkey does; the checks that only scripts make (the command exists and may run from a
//! script, its arity, writes from read-only scripts, the OOM state before the script) come
//! first, with Valkey's texts.
//!
//! The writes a script makes are propagated, not the script: the feed wraps them in
//! `MULTI`/`EXEC` when there is more than one (as EXEC's are), unless the script runs
//! inside a transaction that already wraps them. `server.set_repl` narrows where they go.

use bytes::Bytes;

use crate::acl::log::Context;
use crate::commands::acl_cmd::perm;
use crate::commands::error::ScriptError;
use crate::commands::table::flag;
use crate::commands::{CmdError, Command};
use crate::keyspace::db::HashedKeys;
use crate::resp::reply::{Proto, Reply};
use crate::runtime::dispatch;
use crate::scripting::{self, Call, Host, Request};
use crate::server::client::Client;
use crate::server::script_run::ScriptRun;
use crate::server::state::{ServerState, Slot};

/// The script client's id until its first run (it is in no client table); each run gives it
/// its caller's id, under which client tracking remembers the keys the script reads.
const SCRIPT_CLIENT_ID: u64 = u64::MAX;

/// The script client, made once.
fn script_client(now_ms: i64) -> Box<Slot> {
    let mut client = Client::new(SCRIPT_CLIENT_ID, "lua".into(), "lua".into(), -1, false, now_ms);
    client.authenticated = true;
    client.lua = true;
    // Blocking commands answer at once, as inside EXEC; SHUTDOWN and WAIT behave as there.
    client.in_exec = true;
    Box::new(Slot::new(client, Reply::new(Proto::Resp2)))
}

struct ScriptHost<'a> {
    srv: &'a mut ServerState,
    /// The caller's token (tracking, MONITOR's "not to itself").
    token: usize,
    slot: &'a mut Slot,
    now_ms: i64,
    read_only: bool,
    /// A script without a shebang: OOM is checked per command (with the state before the
    /// script), not before the script.
    oom_per_command: bool,
    reply: Vec<u8>,
    /// The command running the script.
    argv: &'a [Bytes],
    /// The caller's CLIENT INFO line, for the ACL log (made only for a restricted user).
    caller_info: Option<Vec<u8>>,
}

impl ScriptHost<'_> {
    /// The command `argv` names, if a script may run it now. A refusal of a known command
    /// counts as its rejected call, as in Valkey.
    fn admit(&mut self, argv: &[Bytes]) -> Result<&'static Command, CmdError> {
        let cmd = resolve(argv)?;
        let refusal = self.early_refusal(cmd, argv).or_else(|| self.acl_refusal(cmd, argv));
        let refusal = refusal.or_else(|| self.refusal(cmd));
        if let Some(e) = refusal {
            self.srv.stats.cmd.entry(cmd.name).or_default().rejected_calls += 1;
            return Err(e);
        }
        Ok(cmd)
    }

    /// The checks before ACL's, in Valkey's order: arity, then scripts' forbidden commands.
    fn early_refusal(&self, cmd: &'static Command, argv: &[Bytes]) -> Option<CmdError> {
        if !cmd.arity_ok(argv.len()) {
            return Some(CmdError::Script(ScriptError::WrongArity));
        }
        if cmd.flags & flag::NOSCRIPT != 0 {
            return Some(CmdError::Script(ScriptError::NotAllowed));
        }
        None
    }

    /// The caller's user may not run this (counted and logged in the `lua` context, with
    /// the caller's CLIENT INFO line).
    fn acl_refusal(&mut self, cmd: &'static Command, argv: &[Bytes]) -> Option<CmdError> {
        let client = &self.slot.client;
        let d = perm::allowed(self.srv, client.user, cmd, argv, client.db).err()?;
        let info = self.caller_info.clone().unwrap_or_default();
        perm::record(self.srv, client, info, cmd, argv, d, Context::Lua, self.now_ms);
        let mut e = b"ERR ACL failure in script: ".to_vec();
        e.extend_from_slice(&perm::message(self.srv, client.user, cmd, argv, d, false));
        Some(CmdError::Raw(e))
    }

    fn refusal(&self, cmd: &'static Command) -> Option<CmdError> {
        if self.read_only && (cmd.is_write() || cmd.may_replicate()) {
            return Some(CmdError::Script(ScriptError::WriteFromReadOnly));
        }
        // Once the script has written, the checks on the server's state no longer refuse
        // its writes (it cannot be stopped half-way), as in Valkey; nor are the primary's.
        let run = self.srv.script_run.as_ref();
        let unchecked = run.is_some_and(|r| r.wrote || r.from_primary);
        if cmd.is_write()
            && !unchecked
            && self.srv.is_replica
            && self.srv.config.replication.replica_read_only
        {
            return Some(CmdError::ReadOnlyReplica);
        }
        if self.oom_per_command
            && !unchecked
            && self.srv.config.maxmemory_bytes != 0
            && cmd.flags & flag::DENYOOM != 0
            && self.srv.pre_command_oom
        {
            return Some(CmdError::Oom);
        }
        None
    }
}

/// The command (or subcommand) `argv` names, or the refusal a script gets: an unknown name,
/// or a container's unknown subcommand (answered as the container answers it).
fn resolve(argv: &[Bytes]) -> Result<&'static Command, CmdError> {
    let Some(cmd) = crate::commands::lookup(&argv[0]) else {
        return Err(CmdError::Script(ScriptError::UnknownCommand));
    };
    if cmd.subcommands.is_empty() || argv.len() < 2 {
        return Ok(cmd);
    }
    cmd.subcommand(&argv[1]).ok_or_else(|| CmdError::UnknownSubcommand {
        sub: argv[1].to_vec(),
        cmd: cmd.name.to_ascii_uppercase(),
    })
}

impl Host for ScriptHost<'_> {
    fn call(&mut self, argv: &[Bytes], resp3: bool) -> &[u8] {
        self.reply.clear();
        let cmd = match self.admit(argv) {
            Ok(cmd) => cmd,
            Err(e) => {
                let text = e.to_bytes();
                if scripting::ldb::logging() {
                    log_refusal(&e, &text, argv);
                }
                crate::server::calls::count_error(self.srv, &text);
                self.reply.push(b'-');
                self.reply.extend_from_slice(&text);
                self.reply.extend_from_slice(b"\r\n");
                return &self.reply;
            }
        };
        if cmd.is_write() {
            if let Some(run) = self.srv.script_run.as_mut() {
                run.wrote = true;
            }
        }
        self.slot.out.clear();
        self.slot.out.proto = if resp3 { Proto::Resp3 } else { Proto::Resp2 };
        let flow = dispatch::call(
            self.srv,
            self.token,
            self.slot,
            cmd,
            argv,
            HashedKeys::default(),
            self.now_ms,
            0,
        );
        debug_assert_eq!(flow, dispatch::Flow::Continue, "a script's command blocked");
        let reply = if self.slot.out.shared_bytes() == 0 {
            &self.slot.out.buf
        } else {
            self.slot.out.copy_stream_into(&mut self.reply);
            &self.reply
        };
        if scripting::ldb::logging() {
            log_reply(reply);
        }
        reply
    }

    fn set_repl(&mut self, flags: u8) {
        use crate::scripting::api::{REPL_AOF, REPL_REPLICA};
        use crate::server::propagate::{MUTE_AOF, MUTE_REPL};
        let mut muted = 0;
        if flags & REPL_AOF == 0 {
            muted |= MUTE_AOF;
        }
        if flags & REPL_REPLICA == 0 {
            muted |= MUTE_REPL;
        }
        self.srv.feed.muted = muted;
    }

    fn acl_check(&mut self, argv: &[Bytes]) -> Option<bool> {
        let cmd = resolve(argv).ok()?;
        let client = &self.slot.client;
        Some(perm::allowed(self.srv, client.user, cmd, argv, client.db).is_ok())
    }

    fn log(&mut self, level: u8, msg: &[u8]) {
        scripting::log_line(level, msg);
    }

    fn interrupts(&self) -> bool {
        self.srv.config.busy_reply_threshold_ms > 0
    }

    fn interrupt(&mut self) -> bool {
        let threshold = self.srv.config.busy_reply_threshold_ms;
        let Some(run) = self.srv.script_run.as_mut() else { return false };
        if run.killed {
            return killed(run);
        }
        if !run.timed_out {
            let elapsed = run.duration_ms();
            if elapsed < threshold {
                return false;
            }
            run.timed_out = true;
            run.argv = self.argv.to_vec();
            let kill = if run.eval { "SCRIPT KILL" } else { "FUNCTION KILL" };
            tracing::warn!(
                "Slow script detected: still in execution after {elapsed} milliseconds. You \
                 can try killing the script using the {kill} command. Script name is: {}.",
                script_name(run)
            );
        }
        crate::runtime::busy::serve(self.srv);
        self.srv.script_run.as_ref().is_some_and(|r| r.killed && killed(r))
    }
}

/// In a debugging session that is stepping: a command's reply, and its error as the
/// script sees it (`<error> -ERR ...`).
fn log_reply(reply: &[u8]) {
    scripting::ldb::log_reply(reply);
    if reply.first() == Some(&b'-') {
        scripting::ldb::log_error(reply);
    }
}

/// In a debugging session that is stepping: a command the script may not run, logged as
/// Valkey 9.1 logs it: the reply a client would have had, then the script's error (in
/// Valkey's short words for an unknown command, a wrong arity, a command scripts may not
/// run and an ACL refusal; as the reply, `-` and all, for the others).
fn log_refusal(e: &CmdError, text: &[u8], argv: &[Bytes]) {
    let name = || resolve(argv).map_or(String::new(), |c| c.name.to_string());
    let acl = text.strip_prefix(b"ERR ACL failure in script: ");
    let (reply, short): (Vec<u8>, Option<Vec<u8>>) = match e {
        CmdError::Script(ScriptError::UnknownCommand) => (
            dispatch::unknown_command_error(argv),
            Some(b"Unknown command called from script".to_vec()),
        ),
        CmdError::Script(ScriptError::WrongArity) => (
            format!("ERR wrong number of arguments for '{}' command", name()).into_bytes(),
            Some(b"Wrong number of args calling command from script".to_vec()),
        ),
        CmdError::Script(ScriptError::NotAllowed) => (
            format!("ERR command '{}' is not allowed on script mode", name()).into_bytes(),
            Some(b"This Valkey command is not allowed from script".to_vec()),
        ),
        _ => match acl {
            Some(why) => ([b"NOPERM ", why].concat(), Some(text[4..].to_vec())),
            None => (text.to_vec(), None),
        },
    };
    let wire = |t: &[u8]| [b"-", t, b"\r\n"].concat();
    scripting::ldb::log_reply(&wire(&reply));
    scripting::ldb::log_error(&short.unwrap_or_else(|| wire(text)));
}

/// Logs that the script is being stopped, as Valkey logs it each time; true.
fn killed(run: &ScriptRun) -> bool {
    let kill = if run.eval { "SCRIPT KILL" } else { "FUNCTION KILL" };
    tracing::info!("Script killed by user with {kill}.");
    true
}

/// A script's name in the log: the function's, or the SHA1 of an EVAL script's body.
fn script_name(run: &ScriptRun) -> String {
    let Some(arg) = run.argv.get(1) else { return String::new() };
    if !run.eval {
        return String::from_utf8_lossy(arg).into_owned();
    }
    if run.argv[0].eq_ignore_ascii_case(b"evalsha")
        || run.argv[0].eq_ignore_ascii_case(b"evalsha_ro")
    {
        return String::from_utf8_lossy(arg).to_ascii_lowercase();
    }
    crate::util::sha1::hex(&crate::util::sha1::sha1(arg))
}

/// Runs the script `req` for the client in `slot` and writes its reply; returns whether
/// the reply is an error.
pub fn run(
    srv: &mut ServerState,
    token: usize,
    slot: &mut Slot,
    req: &Request,
    argv: &[Bytes],
    now_ms: i64,
) -> bool {
    let vm = if req.is_function { srv.functions.vm.clone() } else { srv.scripts.vm.clone() };
    let mut script_slot = srv.script_client.take().unwrap_or_else(|| script_client(now_ms));
    script_slot.client.db = slot.client.db;
    // The script's commands run as the caller's user.
    script_slot.client.user = slot.client.user;
    let caller_info = (!srv.acl.user(slot.client.user).unrestricted()).then(|| {
        let name = crate::commands::lookup(&argv[0]).map_or("", |c| c.name);
        crate::commands::client_cmd::info_line_of(
            srv,
            token,
            &slot.client,
            &slot.out,
            name,
            argv,
            now_ms,
        )
    });
    // Keys the script reads are tracked for its caller, as in Valkey.
    script_slot.client.id = slot.client.id;
    script_slot.client.tracking = slot.client.tracking;
    // The slow log names the caller for the commands of its script.
    script_slot.client.addr.clone_from(&slot.client.addr);
    script_slot.client.name.clone_from(&slot.client.name);
    let aof_mark = srv.feed.buf.len();
    let wrap = !srv.feed.wrapping();
    if wrap {
        srv.feed.exec_begin();
    }
    let errors_before = srv.stats.total_error_replies;
    let from_primary = slot.client.kind == crate::server::client::ClientKind::Primary;
    srv.script_run = Some(ScriptRun::new(!req.is_function, from_primary, aof_mark));
    let outcome = {
        let mut host = ScriptHost {
            srv,
            token,
            slot: &mut script_slot,
            now_ms,
            read_only: req.read_only,
            oom_per_command: req.flags.eval_compat,
            reply: Vec::new(),
            argv,
            caller_info,
        };
        let call = if req.is_function { Call::Function(&req.func) } else { Call::Eval(&req.func) };
        scripting::run(&vm, call, &req.keys, &req.args, &mut host, &mut slot.out)
    };
    srv.feed.muted = 0;
    let errors_of_others = srv.script_run.take().map_or(0, |r| r.errors_of_others);
    if wrap {
        srv.feed.exec_end();
    }
    script_slot.out.clear();
    srv.script_client = Some(script_slot);
    match outcome {
        scripting::Outcome::Replied { errors } => {
            for e in &errors {
                crate::server::calls::count_error(srv, e);
            }
        }
        scripting::Outcome::Failed(failure) if failure.counted => {
            // The command that failed inside the script was counted when it replied.
            slot.out.error_bytes(&failure.text);
        }
        scripting::Outcome::Failed(failure) => {
            crate::server::calls::reply_error_text(srv, slot, &failure.text)
        }
    }
    // Valkey's rule: a call that produced any error reply (its commands' included) failed.
    srv.stats.total_error_replies - errors_of_others != errors_before
}
