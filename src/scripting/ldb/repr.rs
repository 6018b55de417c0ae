//! How the debugger writes values: a Lua value on the stack (`print`, `eval`,
//! `server.debug()`), and a command's RESP reply (`<reply> ...`), as Valkey 9.1 writes
//! them.
//!
//! A Lua value: strings as they are (no quotes), numbers with C's `%g`, tables as
//! `{1; 2; }` when their keys run 1, 2, 3... in iteration order, else `{[k]=v; }` (each
//! element followed by `; `, the last one too), other values as ` "function@0x..."`, and at
//! most [`DEPTH_MAX`] levels of nesting. A reply: integers as they are, strings and
//! statuses quoted as `sdscatrepr` quotes them (a status with its `+` or `-`), nulls as
//! `NULL` (RESP2) or `(null)` (RESP3), arrays as `[a,b]`, sets as `~(a,b)`, maps as
//! `{k => v,...}`, booleans `#true`, doubles `(double) 1.5`.
//!
//! The stack code works on the raw `lua_State` with Lua's C API (see `super::repl`).

use std::os::raw::c_int;

use mlua::ffi::{self, lua_State};

use crate::scripting::reply_reader::ReplyReader;

/// Tables nested deeper than this are not entered (`LUA_MINSTACK / 2`).
const DEPTH_MAX: u32 = 10;

/// Appends the value at `idx` of `l`'s stack to `out`. The stack is left as it was.
///
/// # Safety
/// `l` is a live state and `idx` a valid index of its stack.
pub unsafe fn stack_value(out: &mut Vec<u8>, l: *mut lua_State, idx: c_int) {
    // SAFETY: passed on; the index is made absolute so that pushing does not move it.
    unsafe {
        let idx = if idx < 0 { ffi::lua_gettop(l) + idx + 1 } else { idx };
        value_rec(out, l, idx, 0);
    }
}

unsafe fn value_rec(out: &mut Vec<u8>, l: *mut lua_State, idx: c_int, level: u32) {
    if level == DEPTH_MAX {
        out.extend_from_slice(b"<max recursion level reached! Nested table?>");
        return;
    }
    // SAFETY (whole function): `idx` is an absolute index of a live stack; each level
    // pushes at most a key and a value, with the room asked for first.
    unsafe {
        let t = ffi::lua_type(l, idx);
        match t {
            ffi::LUA_TSTRING => {
                let mut len = 0usize;
                let p = ffi::lua_tolstring(l, idx, &mut len);
                out.extend_from_slice(std::slice::from_raw_parts(p.cast::<u8>(), len));
            }
            ffi::LUA_TBOOLEAN => {
                let b = ffi::lua_toboolean(l, idx) != 0;
                out.extend_from_slice(if b { b"true" } else { b"false" });
            }
            ffi::LUA_TNUMBER => crate::util::fmt_g::fmt_g(ffi::lua_tonumber(l, idx), 6, out),
            ffi::LUA_TNIL => out.extend_from_slice(b"nil"),
            ffi::LUA_TTABLE => table(out, l, idx, level + 1),
            _ => {
                let name = match t {
                    ffi::LUA_TFUNCTION => "function",
                    ffi::LUA_TUSERDATA => "userdata",
                    ffi::LUA_TTHREAD => "thread",
                    ffi::LUA_TLIGHTUSERDATA => "light-userdata",
                    _ => {
                        out.extend_from_slice(b"\"<unknown-lua-type>\"");
                        return;
                    }
                };
                let p = ffi::lua_topointer(l, idx);
                out.extend_from_slice(format!(" \"{name}@{p:p}\"").as_bytes());
            }
        }
    }
}

/// A table, written both ways while it is walked; the array form is kept when every key
/// was the next integer.
unsafe fn table(out: &mut Vec<u8>, l: *mut lua_State, idx: c_int, level: u32) {
    let mut as_array = Vec::new();
    let mut as_map = Vec::new();
    let mut is_array = true;
    let mut expected = 1.0;
    // SAFETY: the table is at `idx`; the key and value pushed by `lua_next` sit on top,
    // at absolute indexes read before anything else is pushed.
    unsafe {
        ffi::lua_checkstack(l, 3);
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, idx) != 0 {
            let top = ffi::lua_gettop(l);
            if is_array
                && (ffi::lua_type(l, top - 1) != ffi::LUA_TNUMBER
                    || ffi::lua_tonumber(l, top - 1) != expected)
            {
                is_array = false;
            }
            value_rec(&mut as_array, l, top, level);
            as_array.extend_from_slice(b"; ");
            as_map.push(b'[');
            value_rec(&mut as_map, l, top - 1, level);
            as_map.extend_from_slice(b"]=");
            value_rec(&mut as_map, l, top, level);
            as_map.extend_from_slice(b"; ");
            ffi::lua_settop(l, top - 1);
            expected += 1.0;
        }
    }
    out.push(b'{');
    out.extend_from_slice(if is_array { &as_array } else { &as_map });
    out.push(b'}');
}

/// Appends one RESP reply in the debugger's words to `out`; returns the bytes it took
/// (None when `reply` is not a whole reply).
pub fn reply(out: &mut Vec<u8>, reply: &[u8]) -> Option<usize> {
    let mut r = ReplyReader::new(reply);
    value(out, &mut r)?;
    Some(r.at())
}

fn value(out: &mut Vec<u8>, r: &mut ReplyReader) -> Option<()> {
    let (kind, head) = r.header()?;
    match kind {
        b':' => out.extend_from_slice(head),
        b'$' => match ReplyReader::int(head)? {
            n if n < 0 => out.extend_from_slice(b"NULL"),
            n => out.extend_from_slice(crate::util::quote::repr(r.body(n as usize)?).as_bytes()),
        },
        b'+' | b'-' => {
            // A status is quoted with its `+` or `-`.
            let status = [&[kind][..], head].concat();
            out.extend_from_slice(crate::util::quote::repr(&status).as_bytes());
        }
        b'*' => match ReplyReader::int(head)? {
            n if n < 0 => out.extend_from_slice(b"NULL"),
            n => items(out, r, n, b"[", b"]")?,
        },
        b'~' => items(out, r, ReplyReader::int(head)?, b"~(", b")")?,
        b'%' => {
            let n = ReplyReader::int(head)?;
            out.push(b'{');
            for i in 0..n {
                value(out, r)?;
                out.extend_from_slice(b" => ");
                value(out, r)?;
                if i != n - 1 {
                    out.push(b',');
                }
            }
            out.push(b'}');
        }
        b'_' => out.extend_from_slice(b"(null)"),
        b'#' => out.extend_from_slice(if head == b"t" { b"#true" } else { b"#false" }),
        b',' => {
            out.extend_from_slice(b"(double) ");
            out.extend_from_slice(head);
        }
        // Types Valkey's debugger does not write (big numbers, verbatim strings): skipped.
        b'(' => {}
        b'=' => {
            r.body(ReplyReader::int(head)?.max(0) as usize)?;
        }
        _ => return None,
    }
    Some(())
}

fn items(out: &mut Vec<u8>, r: &mut ReplyReader, n: i64, open: &[u8], close: &[u8]) -> Option<()> {
    out.extend_from_slice(open);
    for i in 0..n {
        value(out, r)?;
        if i != n - 1 {
            out.push(b',');
        }
    }
    out.extend_from_slice(close);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn human(r: &[u8]) -> String {
        let mut out = Vec::new();
        assert_eq!(reply(&mut out, r), Some(r.len()));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn replies_in_the_debuggers_words() {
        assert_eq!(human(b"+OK\r\n"), "\"+OK\"");
        assert_eq!(human(b"-ERR x\r\n"), "\"-ERR x\"");
        assert_eq!(human(b":12\r\n"), "12");
        assert_eq!(human(b"$-1\r\n"), "NULL");
        assert_eq!(human(b"$3\r\na\nb\r\n"), "\"a\\nb\"");
        assert_eq!(human(b"*2\r\n$1\r\na\r\n*0\r\n"), "[\"a\",[]]");
        assert_eq!(human(b"%1\r\n$1\r\na\r\n:1\r\n"), "{\"a\" => 1}");
        assert_eq!(human(b"~1\r\n$1\r\na\r\n"), "~(\"a\")");
        assert_eq!(human(b"_\r\n"), "(null)");
        assert_eq!(human(b"#t\r\n"), "#true");
        assert_eq!(human(b",1.5\r\n"), "(double) 1.5");
    }
}
