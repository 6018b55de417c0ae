//! Functions that fail the way Lua's C functions fail.
//!
//! A function of Lua's C API raises its errors as Lua values: `luaL_error` gives a string
//! prefixed with the caller's position (`user_script:3: ...`), `luaL_argerror` gives `bad
//! argument #1 to 'tobit' (number expected, got no value)` with the name the function was
//! called by, and `redis.call` raises a table (`{err = ...}`). Scripts see those values: they
//! `pcall` a library function and print or return the message, and Valkey's error replies
//! carry them. mlua raises a Rust callback's error as a userdata of its own instead, so every
//! function this module hands to Lua goes through [`lua_style`]: a small C closure that calls
//! the mlua function in protected mode and, when it fails, raises what a C function would
//! have raised:
//!
//! ```text
//!   Err(RuntimeError(msg))                       -> "<where>msg"          (luaL_error)
//!   Err(BadArgument { pos, FromLuaConversion })  -> "<where>bad argument #pos to 'name'
//!                                                    (number expected, got nil)" (luaL_argerror)
//!   Ok((RAISE, value))                           -> value, as is          (lua_error)
//!   a Lua error passing through (a callback the function called failed) -> re-raised as is
//! ```
//!
//! The closure is a real C function, so a call to it in tail position keeps the calling
//! Lua frame (Lua 5.1 runs C functions without a tail call) and the position it reports is
//! the script's line, as in Valkey. The protected call costs a `setjmp` per call.
//!
//! This is one of the places with `unsafe` code in the scripting engine: the C closure
//! works on the raw `lua_State` with Lua's C API, as mlua's own trampolines do.

use std::os::raw::c_int;

use mlua::{ffi, Error, Function, IntoLuaMulti, LightUserData, Lua, MultiValue, Value};

/// The marker a function returns first to raise the value that follows it (see [`raise`]).
static RAISE_MARK: u8 = 0;

fn raise_mark_ptr() -> *mut std::ffi::c_void {
    std::ptr::addr_of!(RAISE_MARK) as *mut std::ffi::c_void
}

/// What a function returns to raise `value` as the Lua error, unchanged (a table such as
/// `{err = "..."}`, or a string without a position).
pub fn raise(lua: &Lua, value: impl mlua::IntoLua) -> mlua::Result<MultiValue> {
    (Value::LightUserData(LightUserData(raise_mark_ptr())), value).into_lua_multi(lua)
}

/// `f`, failing as a function of Lua's C API does (see the module comment).
pub fn lua_style(lua: &Lua, f: Function) -> mlua::Result<Function> {
    let explain = explainer(lua)?;
    // SAFETY: `exec_raw` runs the closure in protected mode with `f` and `explain` pushed
    // on the stack; `lua_pushcclosure` pops both as the upvalues of `trampoline` and leaves
    // the new function, which `exec_raw` returns.
    unsafe { lua.exec_raw((f, explain), |l| ffi::lua_pushcclosure(l, trampoline, 2)) }
}

/// The C function behind [`lua_style`]: upvalue 1 is the wrapped function, upvalue 2 the
/// explainer that turns an mlua error into (argument number or 0, message).
unsafe extern "C-unwind" fn trampoline(l: *mut ffi::lua_State) -> c_int {
    // SAFETY (whole function): called by Lua as a C function with its two upvalues set by
    // `lua_style`; it uses only Lua's C API on `l`, keeps within the stack space Lua
    // guarantees a C function (LUA_MINSTACK = 20 slots; at most 3 are pushed beyond the
    // arguments), and holds no Rust value with a destructor when `lua_error` or
    // `luaL_argerror` unwinds out of it.
    let nargs = ffi::lua_gettop(l);
    ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
    ffi::lua_insert(l, 1);
    if ffi::lua_pcall(l, nargs, ffi::LUA_MULTRET, 0) == 0 {
        let n = ffi::lua_gettop(l);
        if n >= 2
            && ffi::lua_type(l, 1) == ffi::LUA_TLIGHTUSERDATA
            && ffi::lua_touserdata(l, 1) == raise_mark_ptr()
        {
            ffi::lua_settop(l, 2);
            ffi::lua_error(l);
        }
        return n;
    }
    // The error object is alone on the stack: explain(error, nargs) -> (kind, message).
    ffi::lua_pushvalue(l, ffi::lua_upvalueindex(2));
    ffi::lua_insert(l, -2);
    ffi::lua_pushinteger(l, nargs as ffi::lua_Integer);
    if ffi::lua_pcall(l, 2, 2, 0) != 0 {
        ffi::lua_error(l);
    }
    match ffi::lua_tointeger(l, -2) {
        // A Lua value passing through: raised again as it was.
        -1 => ffi::lua_error(l),
        0 => {
            ffi::luaL_where(l, 1);
            ffi::lua_insert(l, -2);
            ffi::lua_concat(l, 2);
            ffi::lua_error(l)
        }
        pos => {
            let msg = ffi::lua_tostring(l, -1);
            ffi::luaL_argerror(l, pos as c_int, msg)
        }
    }
}

/// The explainer of [`trampoline`], made once per interpreter.
fn explainer(lua: &Lua) -> mlua::Result<Function> {
    const KEY: &str = "ferrokey.cfunc.explain";
    if let Ok(f) = lua.named_registry_value::<Function>(KEY) {
        return Ok(f);
    }
    let f = lua.create_function(|lua, (err, nargs): (Value, i64)| {
        let Value::Error(e) = err else {
            return Ok((-1, err));
        };
        let (pos, msg) = explain(&e, nargs);
        Ok((pos, Value::String(lua.create_string(msg)?)))
    })?;
    lua.set_named_registry_value(KEY, &f)?;
    Ok(f)
}

/// (argument number, message) for an error of a Rust function; argument 0 means a plain
/// `luaL_error`.
fn explain(e: &Error, nargs: i64) -> (i64, String) {
    match root(e) {
        Error::RuntimeError(msg) => (0, msg.clone()),
        Error::BadArgument { pos, cause, .. } => {
            let msg = match root(cause) {
                Error::FromLuaConversionError { from, to, .. } => {
                    let got = if *pos as i64 > nargs { "no value" } else { from };
                    format!("{} expected, got {got}", lua_type_name(to))
                }
                Error::RuntimeError(msg) => msg.clone(),
                other => other.to_string(),
            };
            (*pos as i64, msg)
        }
        other => (0, other.to_string()),
    }
}

/// The error `luaL_argerror` raises for argument `pos`: `bad argument #pos to 'name' (msg)`.
/// It is an `mlua::Error::BadArgument` whose cause is `msg`; [`lua_style`] raises it through
/// Lua's own `luaL_argerror`, which names the function as the caller called it (and says
/// `calling 'f' on bad self` for a method's `self`). `to` carries the name the callback was
/// called by, when Lua knows it, for a function used without the wrapper.
// mlua's `BadArgument` holds its cause in an `Arc` whatever its `Send`-ness; the error stays
// on the interpreter's thread.
#[allow(clippy::arc_with_non_send_sync)]
pub fn arg_error(lua: &Lua, pos: usize, msg: impl Into<String>) -> Error {
    let to = lua.inspect_stack(0, |frame| frame.names().name.map(|n| n.into_owned())).flatten();
    Error::BadArgument {
        to,
        pos,
        name: None,
        cause: std::sync::Arc::new(Error::RuntimeError(msg.into())),
    }
}

/// The type name `luaL_typename` gives an argument, "no value" for a missing one.
pub fn type_name(value: Option<&Value>) -> &'static str {
    match value {
        None => "no value",
        Some(Value::Nil) => "nil",
        Some(Value::Boolean(_)) => "boolean",
        Some(Value::Integer(_) | Value::Number(_)) => "number",
        Some(Value::String(_)) => "string",
        Some(Value::Table(_)) => "table",
        Some(Value::Function(_)) => "function",
        Some(Value::Thread(_)) => "thread",
        Some(_) => "userdata",
    }
}

fn root(mut e: &Error) -> &Error {
    while let Error::CallbackError { cause, .. } = e {
        e = cause;
    }
    e
}

/// The Lua type a Rust argument type stands for, as Lua's messages name it.
fn lua_type_name(rust: &str) -> &str {
    match rust {
        "f64" | "f32" | "i64" | "i32" | "i16" | "i8" | "u64" | "u32" | "u16" | "u8" | "isize"
        | "usize" | "Integer" | "Number" => "number",
        "String" | "string" | "BString" | "LuaString" | "Vec<u8>" => "string",
        "Table" | "table" => "table",
        "Function" | "function" => "function",
        "bool" | "boolean" => "boolean",
        other => other,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The message of an error as Lua's C API would raise it (without the position):
    /// `luaL_argerror`'s form for argument errors, named as the callback saw its caller name
    /// it (method calls are checked separately).
    pub(crate) fn root_message(e: &mlua::Error) -> String {
        match e {
            mlua::Error::CallbackError { cause, .. } => root_message(cause),
            mlua::Error::BadArgument { to, pos, cause, .. } => {
                let to = to.as_deref().unwrap_or("?");
                format!("bad argument #{pos} to '{to}' ({})", root_message(cause))
            }
            mlua::Error::RuntimeError(m) => m.clone(),
            other => other.to_string(),
        }
    }

    fn run(lua: &Lua, src: &str) -> String {
        let f = lua.load(src).set_name("@user_script").into_function().unwrap();
        match f.call::<Value>(()) {
            Ok(v) => format!("ok {}", v.to_string().unwrap_or_default()),
            // mlua appends a traceback to an error leaving Lua: the message is the first line.
            Err(Error::RuntimeError(m)) => format!("err {}", m.lines().next().unwrap_or("")),
            Err(e) => format!("other {e}"),
        }
    }

    #[test]
    fn errors_look_like_c_api_errors() {
        let lua = Lua::new();
        let f = lua
            .create_function(|lua, x: f64| {
                if x < 0.0 {
                    return Err(Error::RuntimeError("negative".into()));
                }
                if x == 7.0 {
                    let t = lua.create_table()?;
                    t.set("err", "as a table")?;
                    return raise(lua, t);
                }
                (x * 2.0).into_lua_multi(lua)
            })
            .unwrap();
        let t = lua.create_table().unwrap();
        t.set("dbl", lua_style(&lua, f).unwrap()).unwrap();
        lua.globals().set("m", t).unwrap();
        assert_eq!(run(&lua, "return m.dbl(2)"), "ok 4");
        assert_eq!(run(&lua, "\n\nreturn m.dbl(-1)"), "err user_script:3: negative");
        assert_eq!(
            run(&lua, "return m.dbl()"),
            "err user_script:1: bad argument #1 to 'dbl' (number expected, got no value)"
        );
        assert_eq!(
            run(&lua, "return m.dbl({})"),
            "err user_script:1: bad argument #1 to 'dbl' (number expected, got table)"
        );
        assert_eq!(run(&lua, "local ok, e = pcall(m.dbl, 7) return e.err"), "ok as a table");
        assert_eq!(
            run(&lua, "local ok, e = pcall(m.dbl) return e"),
            "ok bad argument #1 to '?' (number expected, got no value)"
        );
    }
}
