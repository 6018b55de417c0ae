//! Lua scripting: `EVAL` scripts and `FUNCTION` libraries, run by one Lua 5.1 interpreter
//! on the main thread, as in Valkey.
//!
//! # Where it sits
//!
//! This module owns the interpreters, the script cache and the function libraries, and
//! knows nothing of the command table or the client table. What a script asks of the
//! server (`server.call`, `set_repl`, `acl_check_cmd`, `log`) goes through a [`Host`] that
//! the runtime hands to [`run`] for one script's execution: the runtime resolves the command,
//! checks it against the script's flags and runs it like any client's command (statistics,
//! keyspace events, propagation, MONITOR, tracking), then gives back the reply bytes, which
//! become Lua values here ([`convert`]). So the layering stays downward: `runtime` and
//! `commands` call into `scripting`, never the other way.
//!
//! # A script's run
//!
//! ```text
//!   EVALSHA sha 1 k a                      (commands::script_cmd: parse, look up, flags)
//!     -> runtime: a script client (caller's db, RESP2), a Host over the server
//!     -> run(): KEYS/ARGV set in the globals, the current RunCtx published to the
//!        `server.*` functions, xpcall(script, error handler)
//!          server.call('SET', k, a) -> Host::call -> the command runs -> reply bytes
//!                                   -> Lua value (or a raised {err=...})
//!     -> the result (or the error, with the script's line) written as the caller's reply
//! ```
//!
//! EVAL scripts and function libraries live in two separate interpreters (as in Valkey),
//! each sandboxed the same way ([`sandbox`]). Errors look exactly like Valkey's: `ERR
//! user_script:1: <message> script: on @user_script:1.`

pub mod api;
pub mod cfunc;
pub mod convert;
pub mod eval;
pub mod fastcall;
pub mod functions;
pub mod interrupt;
pub mod ldb;

pub mod lib_bit;
pub mod lib_cjson;
pub mod lib_cmsgpack;
pub mod lib_struct;
pub mod random;
pub mod reply_reader;
pub mod sandbox;

use std::cell::Cell;

use bytes::Bytes;
use mlua::{Function, Lua, Table, Value};

use crate::resp::reply::Reply;

/// What a running script needs from the server.
pub trait Host {
    /// Runs `argv` as the script's command (`server.call` / `server.pcall`) and returns its
    /// reply, in RESP3 when `resp3` (else RESP2). Refusals (unknown command, not allowed
    /// from scripts, a write from a read-only script...) come back as error replies.
    fn call(&mut self, argv: &[Bytes], resp3: bool) -> &[u8];
    /// `server.set_repl(flags)` (`api::REPL_*`).
    fn set_repl(&mut self, flags: u8);
    /// `server.acl_check_cmd`: whether the caller's user may run `argv`; `None` when no such
    /// command exists.
    fn acl_check(&mut self, argv: &[Bytes]) -> Option<bool>;
    /// `server.log(level, msg)`.
    fn log(&mut self, level: u8, msg: &[u8]);
    /// Whether the run is to be interrupted now and then ([`interrupt`]): when
    /// `busy-reply-threshold` is set.
    fn interrupts(&self) -> bool;
    /// Called every [`interrupt::HOOK_INSTRUCTIONS`] instructions of a run that
    /// [`Host::interrupts`]: the host may serve other clients; true stops the script (it
    /// was killed).
    fn interrupt(&mut self) -> bool;
}

/// The state of the script now running, reachable from the `server.*` functions.
pub struct RunCtx<'a> {
    pub host: &'a mut dyn Host,
    /// `server.setresp(3)` was called: replies of `server.call` come as RESP3 values.
    pub resp3: bool,
    /// A function runs (else an EVAL script): the kill error names FUNCTION KILL.
    pub is_function: bool,
}

thread_local! {
    /// Where the `server.*` functions find the running script's context: one script runs at
    /// a time, on the main thread, whichever interpreter runs it.
    static CURRENT: Cell<*mut RunCtx<'static>> = const { Cell::new(std::ptr::null_mut()) };
}

impl RunCtx<'_> {
    /// Runs `f` with the running script's context; None when no script runs (a function
    /// kept from a run and called outside it) or when the context is already in use.
    pub fn current<R>(f: impl FnOnce(&mut RunCtx) -> R) -> Option<R> {
        let p = CURRENT.with(|c| c.replace(std::ptr::null_mut()));
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` was published by `run` from a `&mut RunCtx` that lives on its stack
        // until after it resets the cell; the pointer is taken out of the cell while `f`
        // runs, so this is the only reference to the context until it is put back.
        let r = f(unsafe { &mut *p });
        CURRENT.with(|c| c.set(p));
        Some(r)
    }

    /// [`RunCtx::current`] for the `server.*` functions: an error outside a run.
    pub fn with<R>(f: impl FnOnce(&mut RunCtx) -> R) -> mlua::Result<R> {
        RunCtx::current(f).ok_or_else(|| {
            mlua::Error::RuntimeError(
                "This function can only be called from a running script".into(),
            )
        })
    }
}

/// Publishes a context for the duration of a run; unpublishes it when dropped.
struct Published;

impl Published {
    fn new(ctx: &mut RunCtx) -> Published {
        let p: *mut RunCtx = ctx;
        CURRENT.with(|c| c.set(p.cast()));
        Published
    }
}

impl Drop for Published {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(std::ptr::null_mut()));
    }
}

/// One interpreter with its error handler.
#[derive(Clone)]
pub struct Vm {
    pub lua: Lua,
    handler: Function,
    /// Puts a table behind a read-only proxy (`sandbox`).
    protect: Function,
    /// Runs `f(keys, args)` under xpcall with the handler (functions get their arguments).
    fcall: Function,
    /// Lua's own `xpcall`.
    xpcall: Function,
    calls: std::rc::Rc<Cell<u32>>,
    /// The interpreter's main state, where scripts run (for the hook of `interrupt`).
    main: *mut mlua::ffi::lua_State,
}

/// Valkey steps the collector every this many script calls.
const GC_PERIOD_CALLS: u32 = 50;

impl Vm {
    /// The interpreter of EVAL scripts.
    pub fn new() -> mlua::Result<Vm> {
        Vm::with_api(&api::install)
    }

    /// An interpreter whose `server` table `server_api` fills.
    pub fn with_api(server_api: &dyn Fn(&Lua, &Table) -> mlua::Result<()>) -> mlua::Result<Vm> {
        let (lua, handler, protect) = sandbox::new_interpreter(server_api)?;
        let fcall = lua
            .load(
                "local xpcall = xpcall
                 return function(f, h, k, a) return xpcall(function() return f(k, a) end, h) end",
            )
            .set_name(sandbox::INTERNAL_CHUNK)
            .eval()?;
        let xpcall = sandbox::backing(&lua)?.raw_get("xpcall")?;
        let mut main = std::ptr::null_mut();
        // SAFETY: the closure only records the state it runs on: outside any callback,
        // mlua runs it (and every call of a script) on the interpreter's main state, which
        // lives as long as `lua`.
        unsafe { lua.exec_raw::<()>((), |l| main = l)? };
        Ok(Vm { lua, handler, protect, fcall, xpcall, calls: Default::default(), main })
    }

    /// Bytes the interpreter holds.
    pub fn used_memory(&self) -> usize {
        self.lua.used_memory()
    }
}

/// A script to run, prepared by EVAL/EVALSHA/FCALL (and their `_RO` forms) for the runtime.
pub struct Request {
    pub func: Function,
    /// A function (KEYS and ARGV as arguments) rather than an EVAL script (as globals).
    pub is_function: bool,
    pub keys: Vec<Bytes>,
    pub args: Vec<Bytes>,
    pub flags: eval::Flags,
    /// Writes are refused: an `_RO` command, or a script declaring `no-writes`.
    pub read_only: bool,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request").field("keys", &self.keys).field("args", &self.args).finish()
    }
}

/// How a script is called.
pub enum Call<'a> {
    /// An EVAL script: KEYS and ARGV are globals.
    Eval(&'a Function),
    /// A function: KEYS and ARGV are its two arguments.
    Function(&'a Function),
}

/// The KEYS and ARGV tables of a run, built on the Lua stack in one protected call (mlua
/// would make a handle for every string otherwise, which costs more than the script's own
/// work for a short script).
fn keys_and_args(lua: &Lua, keys: &[Bytes], args: &[Bytes]) -> mlua::Result<(Table, Table)> {
    // SAFETY: `exec_raw` runs the closure in protected mode (a Lua error, here only out of
    // memory, is caught) with room for the values it pushes: `lua_checkstack` asks for the
    // three slots used at a time (two tables and a string); each string is popped into its
    // table at once. The closure leaves exactly the two tables, which `exec_raw` returns.
    unsafe {
        lua.exec_raw((), |l| {
            for items in [keys, args] {
                mlua::ffi::lua_checkstack(l, 3);
                mlua::ffi::lua_createtable(l, items.len() as i32, 0);
                for (i, b) in items.iter().enumerate() {
                    mlua::ffi::lua_pushlstring(l, b.as_ptr() as *const _, b.len());
                    mlua::ffi::lua_rawseti(l, -2, i as i64 + 1);
                }
            }
        })
    }
}

/// A script that failed: the error reply's text (after the `-`), and whether the command
/// whose error it passes on was already counted in the error statistics.
pub struct Failure {
    pub text: Vec<u8>,
    pub counted: bool,
}

/// How a run ended: the error replies its result holds that count in the error statistics
/// (a returned `{err = ...}`), or its failure, for the caller to reply.
pub enum Outcome {
    Replied { errors: Vec<Vec<u8>> },
    Failed(Failure),
}

/// Runs a script to completion and writes its result as the reply in `out`; a failure is
/// returned for the caller to reply.
pub fn run(
    vm: &Vm,
    call: Call,
    keys: &[Bytes],
    args: &[Bytes],
    host: &mut dyn Host,
    out: &mut Reply,
) -> Outcome {
    let result = run_inner(vm, call, keys, args, host);
    let n = vm.calls.get() + 1;
    if n >= GC_PERIOD_CALLS {
        vm.calls.set(0);
        let _ = vm.lua.gc_step();
    } else {
        vm.calls.set(n);
    }
    match result {
        Ok((true, value, resp3)) => {
            let mut to = convert::ReplyTo { out, script_resp3: resp3, errors: Vec::new() };
            convert::lua_to_reply(&mut to, &value);
            Outcome::Replied { errors: to.errors }
        }
        Ok((false, err, _)) => Outcome::Failed(failure(&err)),
        Err(e) => Outcome::Failed(Failure {
            text: format!("ERR Error running script: {e}").into_bytes(),
            counted: false,
        }),
    }
}

fn run_inner(
    vm: &Vm,
    call: Call,
    keys: &[Bytes],
    args: &[Bytes],
    host: &mut dyn Host,
) -> mlua::Result<(bool, Value, bool)> {
    let lua = &vm.lua;
    let (keys_t, args_t) = keys_and_args(lua, keys, args)?;
    let is_function = matches!(call, Call::Function(_));
    // In a debugging session the debugger's hook runs instead of the interrupt's (the
    // script is stopped at will, and the server is blocked on purpose, as in Valkey).
    let debugging = ldb::active();
    // SAFETY (both): `vm.main` is the main state of `vm.lua`, which outlives the guards.
    let _debugged = debugging.then(|| unsafe { ldb::repl::Armed::new(vm.main) });
    let _armed =
        (!debugging && host.interrupts()).then(|| unsafe { interrupt::Armed::new(vm.main) });
    let mut ctx = RunCtx { host, resp3: false, is_function };
    let (ok, value): (bool, Value) = {
        let _published = Published::new(&mut ctx);
        match call {
            Call::Eval(f) => {
                let backing = sandbox::backing(lua)?;
                backing.raw_set("KEYS", keys_t)?;
                backing.raw_set("ARGV", args_t)?;
                vm.xpcall.call((f, &vm.handler))?
            }
            Call::Function(f) => vm.fcall.call((f, &vm.handler, keys_t, args_t))?,
        }
    };
    Ok((ok, value, ctx.resp3))
}

/// The error reply for a failed script: the error table's `err`, then where it happened.
fn failure(err: &Value) -> Failure {
    let Value::Table(t) = err else {
        let mut text = b"ERR Error running script, ".to_vec();
        if let Value::String(s) = err {
            text.extend_from_slice(&s.as_bytes());
        }
        return Failure { text, counted: false };
    };
    let mut text = match t.raw_get::<Value>("err") {
        Ok(Value::String(s)) => s.as_bytes().to_vec(),
        _ => b"ERR unknown error".to_vec(),
    };
    let source = t.raw_get::<Value>("source");
    let line = t.raw_get::<Value>("line");
    if let (Ok(Value::String(source)), Ok(line @ (Value::Integer(_) | Value::Number(_)))) =
        (source, line)
    {
        let line = match line {
            Value::Integer(n) => n,
            Value::Number(n) => n as i64,
            _ => 0,
        };
        text.extend_from_slice(b" script: on ");
        text.extend_from_slice(&source.as_bytes());
        text.extend_from_slice(format!(":{line}.").as_bytes());
    }
    let counted =
        matches!(t.raw_get::<Value>("ignore_error_stats_update"), Ok(Value::Boolean(true)));
    Failure { text, counted }
}

/// A line of `server.log` in the server's log.
pub fn log_line(level: u8, msg: &[u8]) {
    let text = String::from_utf8_lossy(msg);
    match level {
        api::LOG_WARNING => tracing::warn!("{text}"),
        api::LOG_NOTICE => tracing::info!("{text}"),
        _ => tracing::debug!("{text}"),
    }
}
