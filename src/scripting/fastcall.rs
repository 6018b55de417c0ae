//! `server.call` and `server.pcall` as C functions on the raw Lua stack.
//!
//! These two run for every command a script calls, so they skip mlua's conveniences: the
//! arguments are read straight off the stack (no handle per argument), the command runs
//! through the running script's [`Host`](super::Host), and its reply is pushed onto the
//! stack as it is parsed (no handle per element): what mlua would do in about as many steps
//! as the command itself takes. The values are those of `convert`'s rules (see there):
//! integers are numbers, bulk strings strings, nulls `false` (RESP3's null `nil`), a status
//! `{ok = s}`, an error `{err = s}` (marked `ignore_error_stats_update`: the command counted
//! it), RESP3's types their tables, attributes dropped.
//!
//! In a debugging session that is stepping, the command is logged before it runs
//! (`ldb::log_command`); the host logs its reply.
//!
//! Errors: `call` raises the error table (the handler adds the script's line), `pcall`
//! returns it. A C function may only raise when no Rust value with a destructor is alive in
//! its frame: all Rust work happens in [`run_command`], which returns before anything is
//! raised. Pushing values cannot raise: the interpreter's allocator aborts on failure
//! rather than returning null (mlua's), new tables have no metamethods, and each level of
//! a reply checks the stack room it needs first.
//!
//! This is one of the places with `unsafe` code in the scripting engine (the others are
//! `cfunc`, `interrupt`, and the main state's pointer taken in `Vm::with_api`).

use std::os::raw::{c_char, c_int};

use bytes::Bytes;
use mlua::ffi::{self, lua_State};

use super::reply_reader::ReplyReader;
use super::RunCtx;

/// Deepest reply nesting pushed (replies of this server never come near it).
const DEPTH_MAX: usize = 256;

/// `server.call`.
///
/// # Safety
/// Called only by Lua, as a C function (registered with `create_c_function`).
pub unsafe extern "C-unwind" fn server_call(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua as a C function; `run_command` leaves one value pushed and no
    // Rust value alive when it returns, so raising that value here unwinds nothing of Rust's.
    unsafe {
        if run_command(l) {
            ffi::lua_error(l);
        }
    }
    1
}

/// `server.pcall`.
///
/// # Safety
/// As [`server_call`].
pub unsafe extern "C-unwind" fn server_pcall(l: *mut lua_State) -> c_int {
    // SAFETY: as in `server_call`; nothing is raised.
    unsafe {
        run_command(l);
    }
    1
}

/// Runs the command the arguments on the stack name and pushes its reply (or the error
/// table of a refusal); returns whether what it pushed is an error table.
///
/// # Safety
/// `l` is the state of a running C function call.
unsafe fn run_command(l: *mut lua_State) -> bool {
    // SAFETY (whole function): only Lua's C API on `l`, within the stack room checked.
    unsafe {
        let argv = match read_argv(l) {
            Ok(argv) => argv,
            Err(msg) => {
                if super::ldb::logging() {
                    super::ldb::log_error(msg.strip_prefix("ERR ").unwrap_or(msg).as_bytes());
                }
                push_err(l, msg.as_bytes(), false);
                return true;
            }
        };
        if super::ldb::logging() {
            super::ldb::log_command(&argv);
        }
        let pushed = RunCtx::current(|ctx| {
            let resp3 = ctx.resp3;
            let reply = ctx.host.call(&argv, resp3);
            push_reply(l, reply)
        });
        match pushed {
            Some(is_err) => is_err,
            None => {
                push_err(l, b"ERR This function can only be called from a running script", false);
                true
            }
        }
    }
}

/// The command line on the stack: strings as they are, numbers as Valkey writes them.
unsafe fn read_argv(l: *mut lua_State) -> Result<Vec<Bytes>, &'static str> {
    // SAFETY: reads arguments 1..=top of the running call.
    unsafe {
        let n = ffi::lua_gettop(l);
        if n == 0 {
            return Err("ERR Please specify at least one argument for this call");
        }
        let mut argv = Vec::with_capacity(n as usize);
        for i in 1..=n {
            match ffi::lua_type(l, i) {
                ffi::LUA_TSTRING => {
                    let mut len = 0usize;
                    let p = ffi::lua_tolstring(l, i, &mut len);
                    argv.push(Bytes::copy_from_slice(std::slice::from_raw_parts(
                        p as *const u8,
                        len,
                    )));
                }
                ffi::LUA_TNUMBER => {
                    argv.push(Bytes::from(super::api::number_text(ffi::lua_tonumber(l, i))))
                }
                _ => return Err("ERR Command arguments must be strings or integers"),
            }
        }
        Ok(argv)
    }
}

unsafe fn push_bytes(l: *mut lua_State, b: &[u8]) {
    // SAFETY: the caller checked room for one value.
    unsafe {
        ffi::lua_pushlstring(l, b.as_ptr() as *const c_char, b.len());
    }
}

/// Pushes `{err = msg}`, marked as counted when `counted`.
unsafe fn push_err(l: *mut lua_State, msg: &[u8], counted: bool) {
    // SAFETY: a table and a string at most are on the stack above the caller's values.
    unsafe {
        ffi::lua_checkstack(l, 3);
        ffi::lua_createtable(l, 0, 2);
        push_bytes(l, msg);
        ffi::lua_setfield(l, -2, c"err".as_ptr());
        if counted {
            ffi::lua_pushboolean(l, 1);
            ffi::lua_setfield(l, -2, c"ignore_error_stats_update".as_ptr());
        }
    }
}

/// Pushes `{tag = <the value on top>}` in place of that value.
unsafe fn wrap_top(l: *mut lua_State, tag: &std::ffi::CStr) {
    // SAFETY: one value is on top; the table goes below it, then takes it.
    unsafe {
        ffi::lua_createtable(l, 0, 1);
        ffi::lua_insert(l, -2);
        ffi::lua_setfield(l, -2, tag.as_ptr());
    }
}

/// Pushes the Lua value of one complete reply; returns whether it is an error.
///
/// # Safety
/// `l` is the state of a running C function call.
pub unsafe fn push_reply(l: *mut lua_State, bytes: &[u8]) -> bool {
    let mut r = ReplyReader::new(bytes);
    let is_err = bytes.first() == Some(&b'-');
    // SAFETY: passed on.
    let ok = unsafe { push_value(l, &mut r, 0) };
    if ok.is_none() {
        // Not a reply this server writes: say so rather than guess.
        // SAFETY: as above; whatever the parse pushed is dropped first.
        unsafe {
            push_err(l, b"ERR malformed reply from a command", false);
        }
        return true;
    }
    is_err
}

fn parse_double(s: &[u8]) -> Option<f64> {
    match s {
        b"inf" => Some(f64::INFINITY),
        b"-inf" => Some(f64::NEG_INFINITY),
        b"nan" | b"-nan" => Some(f64::NAN),
        _ => std::str::from_utf8(s).ok()?.parse().ok(),
    }
}

/// Pushes one value (an attribute is skipped: the value it annotates is pushed); None when
/// the bytes are not a reply (the stack is then restored to where it was).
unsafe fn push_value(l: *mut lua_State, r: &mut ReplyReader, depth: usize) -> Option<()> {
    // SAFETY (whole function): Lua's C API on `l`; `lua_checkstack` secures the three slots
    // a level uses (its table, a key, a value) before anything is pushed at that level.
    unsafe {
        let base = ffi::lua_gettop(l);
        let fail = |l| {
            ffi::lua_settop(l, base);
            None
        };
        if depth > DEPTH_MAX || ffi::lua_checkstack(l, 4) == 0 {
            return fail(l);
        }
        let Some((kind, head)) = r.header() else { return fail(l) };
        match kind {
            b':' => {
                let Some(n) = ReplyReader::int(head) else { return fail(l) };
                ffi::lua_pushnumber(l, n as f64);
            }
            b'$' | b'=' => {
                let Some(n) = ReplyReader::int(head) else { return fail(l) };
                if n < 0 {
                    ffi::lua_pushboolean(l, 0);
                    return Some(());
                }
                let Some(body) = r.body(n as usize) else { return fail(l) };
                if kind == b'$' {
                    push_bytes(l, body);
                } else {
                    ffi::lua_createtable(l, 0, 2);
                    push_bytes(l, body.get(..3).unwrap_or(b""));
                    ffi::lua_setfield(l, -2, c"format".as_ptr());
                    push_bytes(l, body.get(4..).unwrap_or(b""));
                    ffi::lua_setfield(l, -2, c"string".as_ptr());
                    wrap_top(l, c"verbatim_string");
                }
            }
            b'+' => {
                push_bytes(l, head);
                wrap_top(l, c"ok");
            }
            b'-' => {
                let head = head.to_vec();
                push_err(l, &head, true);
            }
            b'_' => ffi::lua_pushnil(l),
            b'#' => ffi::lua_pushboolean(l, (head == b"t") as c_int),
            b',' => {
                let Some(d) = parse_double(head) else { return fail(l) };
                ffi::lua_pushnumber(l, d);
                wrap_top(l, c"double");
            }
            b'(' => {
                push_bytes(l, head);
                wrap_top(l, c"big_number");
            }
            b'*' | b'>' => {
                let Some(n) = ReplyReader::int(head) else { return fail(l) };
                if n < 0 {
                    ffi::lua_pushboolean(l, 0);
                    return Some(());
                }
                ffi::lua_createtable(l, n.min(1 << 20) as c_int, 0);
                for i in 1..=n {
                    push_element(l, r, depth)?;
                    ffi::lua_rawseti(l, -2, i as _);
                }
            }
            b'~' => {
                let Some(n) = ReplyReader::int(head) else { return fail(l) };
                // Grown one member at a time, as Valkey's: the layout of the hash part, and
                // so the order `pairs` sees, is then the same.
                ffi::lua_createtable(l, 0, 0);
                for _ in 0..n {
                    push_key(l, r, depth)?;
                    ffi::lua_pushboolean(l, 1);
                    ffi::lua_rawset(l, -3);
                }
                wrap_top(l, c"set");
            }
            b'%' | b'|' => {
                let Some(n) = ReplyReader::int(head) else { return fail(l) };
                ffi::lua_createtable(l, 0, 0);
                for _ in 0..n {
                    push_key(l, r, depth)?;
                    push_element(l, r, depth)?;
                    ffi::lua_rawset(l, -3);
                }
                if kind == b'|' {
                    // An attribute: dropped; the value it annotates follows.
                    ffi::lua_settop(l, base);
                    return push_value(l, r, depth);
                }
                wrap_top(l, c"map");
            }
            _ => return fail(l),
        }
        Some(())
    }
}

/// Pushes an element of an aggregate.
unsafe fn push_element(l: *mut lua_State, r: &mut ReplyReader, depth: usize) -> Option<()> {
    // SAFETY: passed on to `push_value`, which checks its own room.
    unsafe { push_value(l, r, depth + 1) }
}

/// Pushes a key of a map or a member of a set: a RESP3 null there (which no command of
/// this server replies) becomes `false`, since `lua_rawset` would raise on a nil key.
unsafe fn push_key(l: *mut lua_State, r: &mut ReplyReader, depth: usize) -> Option<()> {
    // SAFETY: as `push_element`; the nil is replaced in the slot it took.
    unsafe {
        push_value(l, r, depth + 1)?;
        if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
            ffi::lua_pop(l, 1);
            ffi::lua_pushboolean(l, 0);
        }
        Some(())
    }
}
