//! The instruction hook that lets a long script be interrupted.
//!
//! While a script runs with `busy-reply-threshold` set, Lua calls [`count_hook`] every
//! [`HOOK_INSTRUCTIONS`] instructions (Valkey's period). The hook asks the running script's
//! [`Host`](super::Host) whether to go on: the host checks the time, and once the script
//! has run past the threshold it serves the other clients for a moment each time (they may
//! send `SCRIPT KILL`). When the host says stop, the hook raises Valkey's error (`Script
//! killed by user with SCRIPT KILL.`, or `FUNCTION KILL.` for a function) as an error table,
//! to which the error handler adds the script's line; and it switches itself to fire on
//! every line, so that a script that catches the error with `pcall` meets it again at once
//! and cannot go on.
//!
//! The hook is set on the interpreter's main state for the length of one run and removed
//! after it ([`Armed`]); coroutines a script creates inherit it.
//!
//! Like `cfunc` and `fastcall`, this works on the raw `lua_State` with Lua's C API.

use std::os::raw::c_int;

use mlua::ffi::{self, lua_Debug, lua_State};

use super::RunCtx;

/// Instructions between two calls of the hook.
pub const HOOK_INSTRUCTIONS: c_int = 100_000;

/// The hook, set on `main` while it lives.
pub struct Armed {
    main: *mut lua_State,
}

impl Armed {
    /// Sets the hook on `main` (the interpreter's main state).
    ///
    /// # Safety
    /// `main` is the main state of a live interpreter that outlives the returned value.
    pub unsafe fn new(main: *mut lua_State) -> Armed {
        // SAFETY: `main` is a live state (the caller's promise); setting a hook only stores
        // the function and counts in it.
        unsafe {
            ffi::lua_sethook(main, Some(count_hook), ffi::LUA_MASKCOUNT, HOOK_INSTRUCTIONS);
        }
        Armed { main }
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        // SAFETY: `main` outlives this value (see `Armed::new`).
        unsafe {
            ffi::lua_sethook(self.main, None, 0, 0);
        }
    }
}

/// Lua's hook: asks the host whether to go on; raises the kill error when not.
unsafe extern "C-unwind" fn count_hook(l: *mut lua_State, _ar: *mut lua_Debug) {
    // The Rust part ends here, before anything is raised: no value with a destructor is
    // alive in this frame when `lua_error` unwinds out of it.
    let stop = RunCtx::current(|ctx| ctx.host.interrupt().then_some(ctx.is_function)).flatten();
    let Some(is_function) = stop else { return };
    let msg: &[u8] = if is_function {
        b"ERR Script killed by user with FUNCTION KILL."
    } else {
        b"ERR Script killed by user with SCRIPT KILL."
    };
    // SAFETY: called by Lua as a hook on the running state `l`, which guarantees a hook
    // LUA_MINSTACK free stack slots (three are used); only Lua's C API is used, and the
    // error is raised the way Lua's own C functions raise theirs.
    unsafe {
        ffi::lua_sethook(l, Some(count_hook), ffi::LUA_MASKLINE, 0);
        ffi::lua_createtable(l, 0, 1);
        ffi::lua_pushstring(l, c"err".as_ptr());
        ffi::lua_pushlstring(l, msg.as_ptr().cast(), msg.len());
        ffi::lua_rawset(l, -3);
        ffi::lua_error(l);
    }
}
