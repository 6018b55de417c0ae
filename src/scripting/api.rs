//! The `server` table (also reachable as `redis`): what a script calls.
//!
//! Everything that needs the server (`call`, `pcall`, `set_repl`, `acl_check_cmd`, `log`)
//! goes through the [`Host`](super::Host) of the running script: the functions here are
//! made once per interpreter, and each run puts its host within their reach for its
//! duration (`super::run`). The rest (`error_reply`, `status_reply`, `sha1hex`, `setresp`,
//! the constants) needs nothing but Lua. Error texts are Valkey's; errors that Valkey raises
//! as tables (`{err = "ERR ..."}`) are raised as tables here too, through `cfunc::raise`.

use bytes::Bytes;
use mlua::{Function, Lua, MultiValue, Table, Value, Variadic};

use super::cfunc::{self, raise};
use super::RunCtx;

/// `REPL_*`: where a script's writes are propagated (`set_repl`).
pub const REPL_NONE: u8 = 0;
pub const REPL_AOF: u8 = 1;
pub const REPL_REPLICA: u8 = 2;
pub const REPL_ALL: u8 = 3;

/// `LOG_*` levels of `server.log`, as Valkey numbers them.
pub const LOG_DEBUG: u8 = 0;
pub const LOG_VERBOSE: u8 = 1;
pub const LOG_NOTICE: u8 = 2;
pub const LOG_WARNING: u8 = 3;

/// The Valkey version a script sees, and the Redis version Valkey claims for compatibility.
pub const VALKEY_VERSION: &str = "9.1.2";
pub const VALKEY_VERSION_NUM: i64 = 0x09_01_02;
pub const REDIS_VERSION: &str = "7.2.4";
pub const REDIS_VERSION_NUM: i64 = 0x07_02_04;

/// `{err = msg}`.
pub fn err_table(lua: &Lua, msg: &[u8]) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(0, 1)?;
    t.raw_set("err", lua.create_string(msg)?)?;
    Ok(t)
}

/// Raises `{err = msg}` (Valkey's `luaPushError` + `luaError`).
fn raise_err(lua: &Lua, msg: &str) -> mlua::Result<MultiValue> {
    raise(lua, err_table(lua, msg.as_bytes())?)
}

/// A command argument from a Lua value: strings as they are, numbers as Valkey 9.1 writes
/// them (integral values as integers, others in their shortest round-trip digits).
fn arg_bytes(v: &Value) -> Option<Bytes> {
    match v {
        Value::String(s) => Some(Bytes::copy_from_slice(&s.as_bytes())),
        // mlua hands a whole Lua 5.1 number as an Integer; it is still a double for Valkey.
        Value::Integer(n) => Some(Bytes::from(number_text(*n as f64))),
        Value::Number(n) => Some(Bytes::from(number_text(*n))),
        _ => None,
    }
}

/// A Lua number as a command argument: an integer when Valkey's `double2ll` takes it (whole
/// and within +-2^62, LLONG_MAX / 2), else the shortest round-trip digits.
pub fn number_text(n: f64) -> String {
    if n.is_nan() {
        return if n.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    const HALF_RANGE: f64 = (i64::MAX / 2) as f64;
    if n.trunc() == n && (-HALF_RANGE..=HALF_RANGE).contains(&n) {
        return (n as i64).to_string();
    }
    crate::resp::reply::format_double(n)
}

/// The arguments of `call`/`pcall`/`acl_check_cmd` as a command line, or the error text.
fn argv_of(args: &[Value]) -> Result<Vec<Bytes>, &'static str> {
    if args.is_empty() {
        return Err("ERR Please specify at least one argument for this call");
    }
    args.iter()
        .map(arg_bytes)
        .collect::<Option<Vec<_>>>()
        .ok_or("ERR Command arguments must be strings or integers")
}

/// Builds the `server` table into `t` (done once per interpreter).
pub fn install(lua: &Lua, t: &Table) -> mlua::Result<()> {
    let wrap = |f: Function| cfunc::lua_style(lua, f);
    // SAFETY: both are C functions of Lua's API that use nothing but their own stack
    // (`fastcall`).
    let (call, pcall) = unsafe {
        (
            lua.create_c_function(super::fastcall::server_call)?,
            lua.create_c_function(super::fastcall::server_pcall)?,
        )
    };
    t.raw_set("call", call)?;
    t.raw_set("pcall", pcall)?;
    t.raw_set(
        "error_reply",
        wrap(lua.create_function(|lua, args: Variadic<Value>| reply_table(lua, &args, "err"))?)?,
    )?;
    t.raw_set(
        "status_reply",
        wrap(lua.create_function(|lua, args: Variadic<Value>| reply_table(lua, &args, "ok"))?)?,
    )?;
    t.raw_set(
        "sha1hex",
        wrap(lua.create_function(|lua, args: Variadic<Value>| {
            if args.len() != 1 {
                return raise_err(lua, "ERR wrong number of arguments");
            }
            let data = match &args[0] {
                Value::String(s) => s.as_bytes().to_vec(),
                Value::Integer(n) => n.to_string().into_bytes(),
                Value::Number(n) => lua
                    .coerce_string(Value::Number(*n))?
                    .map(|s| s.as_bytes().to_vec())
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            let hex = crate::util::sha1::hex(&crate::util::sha1::sha1(&data));
            Ok(MultiValue::from_vec(vec![Value::String(lua.create_string(hex)?)]))
        })?)?,
    )?;
    t.raw_set(
        "setresp",
        wrap(lua.create_function(|lua, args: Variadic<Value>| {
            if args.len() != 1 {
                return raise_err(lua, "ERR server.setresp() requires one argument.");
            }
            let v = lua.coerce_integer(args[0].clone())?.unwrap_or(0);
            if v != 2 && v != 3 {
                return raise_err(lua, "ERR RESP version must be 2 or 3.");
            }
            RunCtx::with(|ctx| ctx.resp3 = v == 3)?;
            Ok(MultiValue::new())
        })?)?,
    )?;
    t.raw_set(
        "set_repl",
        wrap(lua.create_function(|lua, args: Variadic<Value>| {
            if args.len() != 1 {
                return raise_err(lua, "ERR server.set_repl() requires one argument.");
            }
            // C's `(int)lua_tonumber()`: what is not a number is 0 (REPL_NONE).
            let v = lua.coerce_number(args[0].clone())?.map_or(0, |n| n as i64);
            if !(0..=REPL_ALL as i64).contains(&v) {
                return raise_err(
                    lua,
                    "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
                );
            }
            RunCtx::with(|ctx| ctx.host.set_repl(v as u8))?;
            Ok(MultiValue::new())
        })?)?,
    )?;
    t.raw_set("replicate_commands", wrap(lua.create_function(|_, ()| Ok(true))?)?)?;
    t.raw_set(
        "breakpoint",
        wrap(lua.create_function(|_, _: Variadic<Value>| Ok(super::ldb::lua_breakpoint()))?)?,
    )?;
    // SAFETY: a C function of Lua's API that reads only its own arguments (`ldb`).
    t.raw_set("debug", unsafe { lua.create_c_function(super::ldb::lua_debug)? })?;
    t.raw_set(
        "acl_check_cmd",
        wrap(lua.create_function(|lua, args: Variadic<Value>| {
            let argv = match argv_of(&args) {
                Ok(argv) => argv,
                Err(msg) => return raise_err(lua, msg),
            };
            match RunCtx::with(|ctx| ctx.host.acl_check(&argv))? {
                Some(allowed) => Ok(MultiValue::from_vec(vec![Value::Boolean(allowed)])),
                None => raise_err(lua, "ERR Invalid command passed to server.acl_check_cmd()"),
            }
        })?)?,
    )?;
    t.raw_set(
        "log",
        wrap(lua.create_function(|lua, args: Variadic<Value>| log(lua, &args, true))?)?,
    )?;
    install_constants(t)
}

/// `server.log(level, msg...)`: the messages joined by spaces, at the level given. `running`
/// is false while a function library loads (logged straight to the server's log then).
pub fn log(lua: &Lua, args: &[Value], running: bool) -> mlua::Result<MultiValue> {
    if args.len() < 2 {
        return raise_err(lua, "ERR server.log() requires two arguments or more.");
    }
    // `lua_isnumber`: numbers and strings that convert to one.
    let level = match lua.coerce_number(args[0].clone())? {
        Some(n) => n as i64,
        None => return raise_err(lua, "ERR First argument must be a number (log level)."),
    };
    if !(LOG_DEBUG as i64..=LOG_WARNING as i64).contains(&level) {
        return raise_err(lua, "ERR Invalid log level.");
    }
    let mut msg = Vec::new();
    for (i, a) in args[1..].iter().enumerate() {
        if i > 0 {
            msg.push(b' ');
        }
        if let Some(s) = lua.coerce_string(a.clone())? {
            msg.extend_from_slice(&s.as_bytes());
        }
    }
    if running {
        RunCtx::with(|ctx| ctx.host.log(level as u8, &msg))?;
    } else {
        super::log_line(level as u8, &msg);
    }
    Ok(MultiValue::new())
}

/// `error_reply(msg)` / `status_reply(msg)`: `{err = "CODE msg"}` / `{ok = msg}`. Only one
/// string is taken (numbers too are refused); a wrong call returns (not raises) Valkey's
/// error table.
fn reply_table(lua: &Lua, args: &[Value], field: &str) -> mlua::Result<MultiValue> {
    let [Value::String(s)] = args else {
        let t = err_table(lua, b"ERR wrong number or type of arguments")?;
        return Ok(MultiValue::from_vec(vec![Value::Table(t)]));
    };
    let msg = s.as_bytes().to_vec();
    let msg = if field == "err" { error_text(&msg) } else { msg };
    let t = lua.create_table_with_capacity(0, 1)?;
    t.raw_set(field, lua.create_string(msg)?)?;
    Ok(MultiValue::from_vec(vec![Value::Table(t)]))
}

/// The `err` of `error_reply(msg)`, as Valkey's `luaPushErrorBuff` makes it of `-msg` (or
/// of `msg` when it starts with `-`), a C string cut at NUL: the first word is the error
/// code, or `ERR` when there is a single word; CR and LF are trimmed off both ends of the
/// rest.
fn error_text(msg: &[u8]) -> Vec<u8> {
    let msg = &msg[..msg.iter().position(|&c| c == 0).unwrap_or(msg.len())];
    let msg = msg.strip_prefix(b"-").unwrap_or(msg);
    let (code, rest) = match msg.iter().position(|&c| c == b' ') {
        Some(i) => (&msg[..i], &msg[i + 1..]),
        None => (&b"ERR"[..], msg),
    };
    let trim = |c: &u8| *c != b'\r' && *c != b'\n';
    let start = rest.iter().position(trim).unwrap_or(rest.len());
    let end = rest.iter().rposition(trim).map_or(start, |i| i + 1);
    let mut out = code.to_vec();
    out.push(b' ');
    out.extend_from_slice(&rest[start..end]);
    out
}

/// The constants of the `server` table.
pub fn install_constants(t: &Table) -> mlua::Result<()> {
    t.raw_set("REPL_NONE", REPL_NONE)?;
    t.raw_set("REPL_AOF", REPL_AOF)?;
    t.raw_set("REPL_REPLICA", REPL_REPLICA)?;
    t.raw_set("REPL_SLAVE", REPL_REPLICA)?;
    t.raw_set("REPL_ALL", REPL_ALL)?;
    t.raw_set("LOG_DEBUG", LOG_DEBUG)?;
    t.raw_set("LOG_VERBOSE", LOG_VERBOSE)?;
    t.raw_set("LOG_NOTICE", LOG_NOTICE)?;
    t.raw_set("LOG_WARNING", LOG_WARNING)?;
    t.raw_set("REDIS_VERSION", REDIS_VERSION)?;
    t.raw_set("REDIS_VERSION_NUM", REDIS_VERSION_NUM)?;
    t.raw_set("VALKEY_VERSION", VALKEY_VERSION)?;
    t.raw_set("VALKEY_VERSION_NUM", VALKEY_VERSION_NUM)?;
    t.raw_set("SERVER_NAME", "valkey")?;
    Ok(())
}
