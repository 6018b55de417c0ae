//! Values between RESP and Lua, both ways, with Valkey's rules.
//!
//! A command's reply becomes a Lua value (`fastcall::push_reply`, on the raw stack): integers are numbers, bulk
//! strings strings, arrays tables, a null bulk or null array `false` (RESP2's nulls), RESP3's
//! null `nil`, a status `{ok = s}`, an error `{err = s}`, and RESP3's own types `true`/`false`,
//! `{double = n}`, `{big_number = s}`, `{map = {k = v}}`, `{set = {m = true}}` and
//! `{verbatim_string = {format = f, string = s}}`; attributes are dropped.
//!
//! A script's result becomes a reply ([`lua_to_reply`]): strings are bulk strings, numbers
//! integers (truncated toward zero), `true` `:1` (or RESP3's `#t` once the script asked for
//! RESP3 with `setresp(3)`), `false` and `nil` a null, a table with `err`, `ok`, `double`,
//! `big_number`, `map`, `set` or `verbatim_string` that type, and any other table an array of
//! its elements `1..n`, cut at the first `nil`. Other Lua values (functions, userdata) are nulls.
//! Nesting is bounded ([`DEPTH_MAX`]) so that a self-referencing table cannot recurse forever.

use mlua::{Table, Value};

use crate::resp::reply::Reply;

/// Deepest nesting converted, either way.
pub const DEPTH_MAX: usize = 256;

/// How a script's result is written: the caller's reply, and the protocol the script chose
/// with `setresp` (it decides how booleans come out).
pub struct ReplyTo<'a> {
    pub out: &'a mut Reply,
    pub script_resp3: bool,
    /// The error replies written that count in the error statistics (an error table a
    /// failed `server.call` made was counted when the command replied).
    pub errors: Vec<Vec<u8>>,
}

/// Writes the Lua value `v` as the reply (see the module comment).
pub fn lua_to_reply(to: &mut ReplyTo, v: &Value) {
    write_value(to, v, 0)
}

fn write_value(to: &mut ReplyTo, v: &Value, depth: usize) {
    match v {
        Value::String(s) => to.out.bulk(&s.as_bytes()),
        Value::Integer(n) => to.out.int(*n),
        Value::Number(n) => to.out.int(truncate(*n)),
        Value::Boolean(b) => {
            if to.script_resp3 {
                to.out.boolean(*b);
            } else if *b {
                to.out.int(1);
            } else {
                to.out.null();
            }
        }
        Value::Table(t) if depth < DEPTH_MAX => write_table(to, t, depth),
        Value::Table(_) => to.out.error("ERR reached lua stack limit"),
        _ => to.out.null(),
    }
}

/// `(long long)` of a Lua number, as Valkey's C cast converts it on x86-64 (the oracle's
/// platform): toward zero, and NaN or anything out of range (infinities included) becomes
/// the "integer indefinite" value `i64::MIN` that `cvttsd2si` yields, where Rust's `as`
/// would saturate.
pub fn truncate(n: f64) -> i64 {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if n.is_nan() || !(-TWO_POW_63..TWO_POW_63).contains(&n) {
        return i64::MIN;
    }
    n as i64
}

/// The bytes of a Lua string up to its first NUL: what Valkey's C string functions
/// (`sdsnew(lua_tostring(...))`) keep of it.
fn c_string(s: &[u8]) -> &[u8] {
    &s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())]
}

fn write_table(to: &mut ReplyTo, t: &Table, depth: usize) {
    if let Ok(Value::String(e)) = t.raw_get::<Value>("err") {
        // Valkey formats "-%s" (a C string: cut at NUL), trims CR and LF at the end, and
        // maps the ones left to spaces (`error_bytes`).
        let e = e.as_bytes();
        let mut e = c_string(&e);
        while let [rest @ .., b'\r' | b'\n'] = e {
            e = rest;
        }
        to.out.error_bytes(e);
        if !matches!(t.raw_get::<Value>("ignore_error_stats_update"), Ok(Value::Boolean(true))) {
            to.errors.push(e.to_vec());
        }
        return;
    }
    if let Ok(Value::String(s)) = t.raw_get::<Value>("ok") {
        let s: Vec<u8> = c_string(&s.as_bytes())
            .iter()
            .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c })
            .collect();
        to.out.raw(b"+");
        to.out.raw(&s);
        to.out.raw(b"\r\n");
        return;
    }
    if let Ok(Value::Number(d)) = t.raw_get::<Value>("double") {
        to.out.double(d);
        return;
    }
    if let Ok(Value::Integer(d)) = t.raw_get::<Value>("double") {
        to.out.double(d as f64);
        return;
    }
    if let Ok(Value::String(s)) = t.raw_get::<Value>("big_number") {
        let s = s.to_string_lossy();
        let s: String = s.chars().map(|c| if c == '\r' || c == '\n' { ' ' } else { c }).collect();
        to.out.big_number(&s);
        return;
    }
    if let Ok(Value::Table(m)) = t.raw_get::<Value>("map") {
        let pairs: Vec<(Value, Value)> = m.pairs::<Value, Value>().filter_map(Result::ok).collect();
        to.out.map(pairs.len());
        for (k, v) in &pairs {
            write_value(to, k, depth + 1);
            write_value(to, v, depth + 1);
        }
        return;
    }
    if let Ok(Value::Table(s)) = t.raw_get::<Value>("set") {
        let members: Vec<Value> =
            s.pairs::<Value, Value>().filter_map(Result::ok).map(|(k, _)| k).collect();
        to.out.set(members.len());
        for k in &members {
            write_value(to, k, depth + 1);
        }
        return;
    }
    if let Ok(Value::Table(vs)) = t.raw_get::<Value>("verbatim_string") {
        let format = vs.raw_get::<Value>("format");
        let string = vs.raw_get::<Value>("string");
        if let (Ok(Value::String(f)), Ok(Value::String(s))) = (format, string) {
            let f = f.as_bytes();
            if f.len() == 3 {
                to.out.verbatim(std::str::from_utf8(&f).unwrap_or("txt"), &s.as_bytes());
                return;
            }
        }
    }
    // An array: elements 1.. up to the first nil.
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(v),
        }
    }
    to.out.array(items.len());
    for v in &items {
        write_value(to, v, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::reply::Proto;
    use mlua::Lua;

    fn lua_of(bytes: &[u8]) -> String {
        let lua = Lua::new();
        // SAFETY: exec_raw gives the closure a protected call; push_reply leaves one value.
        let v: Value = unsafe {
            lua.exec_raw((), |l| {
                super::super::fastcall::push_reply(l, bytes);
            })
        }
        .unwrap();
        let f: mlua::Function = lua
            .load(
                r#"local function show(v)
                     if type(v) ~= 'table' then return type(v) .. ':' .. tostring(v) end
                     local keys = {}
                     for k in pairs(v) do keys[#keys + 1] = tostring(k) end
                     table.sort(keys)
                     local out = {}
                     for _, k in ipairs(keys) do
                       local val = v[k]
                       if val == nil then val = v[tonumber(k)] end
                       out[#out + 1] = k .. '=' .. show(val)
                     end
                     return '{' .. table.concat(out, ',') .. '}'
                   end
                   return show"#,
            )
            .eval()
            .unwrap();
        f.call(v).unwrap()
    }

    #[test]
    fn replies_become_lua_values() {
        assert_eq!(lua_of(b":42\r\n"), "number:42");
        assert_eq!(lua_of(b"$3\r\nabc\r\n"), "string:abc");
        assert_eq!(lua_of(b"$-1\r\n"), "boolean:false");
        assert_eq!(lua_of(b"*-1\r\n"), "boolean:false");
        assert_eq!(lua_of(b"_\r\n"), "nil:nil");
        assert_eq!(lua_of(b"+OK\r\n"), "{ok=string:OK}");
        assert_eq!(
            lua_of(b"-ERR x\r\n"),
            "{err=string:ERR x,ignore_error_stats_update=boolean:true}"
        );
        assert_eq!(lua_of(b"*2\r\n:1\r\n$1\r\na\r\n"), "{1=number:1,2=string:a}");
        assert_eq!(lua_of(b"%1\r\n$1\r\nk\r\n:2\r\n"), "{map={k=number:2}}");
        assert_eq!(lua_of(b"~1\r\n$1\r\nm\r\n"), "{set={m=boolean:true}}");
        assert_eq!(lua_of(b",1.5\r\n"), "{double=number:1.5}");
        assert_eq!(lua_of(b"(123\r\n"), "{big_number=string:123}");
        assert_eq!(lua_of(b"#t\r\n"), "boolean:true");
        assert_eq!(
            lua_of(b"=7\r\ntxt:abc\r\n"),
            "{verbatim_string={format=string:txt,string=string:abc}}"
        );
        assert_eq!(lua_of(b"|1\r\n$1\r\na\r\n:1\r\n:5\r\n"), "number:5");
    }

    fn reply_of(src: &str, resp3: bool) -> Vec<u8> {
        let lua = Lua::new();
        let v: Value = lua.load(src).eval().unwrap();
        let mut out = Reply::new(if resp3 { Proto::Resp3 } else { Proto::Resp2 });
        lua_to_reply(&mut ReplyTo { out: &mut out, script_resp3: resp3, errors: Vec::new() }, &v);
        out.stream_bytes()
    }

    #[test]
    fn lua_values_become_replies() {
        assert_eq!(reply_of("return 3.99", false), b":3\r\n");
        assert_eq!(reply_of("return -3.99", false), b":-3\r\n");
        assert_eq!(reply_of("return {1, 2, nil, 4}", false), b"*2\r\n:1\r\n:2\r\n");
        assert_eq!(reply_of("return true", false), b":1\r\n");
        assert_eq!(reply_of("return false", false), b"$-1\r\n");
        assert_eq!(reply_of("return true", true), b"#t\r\n");
        assert_eq!(reply_of("return nil", true), b"_\r\n");
        assert_eq!(reply_of("return {ok='fine'}", false), b"+fine\r\n");
        assert_eq!(reply_of("return {err='boom'}", false), b"-boom\r\n");
        assert_eq!(reply_of("return {double=3.5}", true), b",3.5\r\n");
        assert_eq!(reply_of("return {map={a=1}}", true), b"%1\r\n$1\r\na\r\n:1\r\n");
        assert_eq!(reply_of("return {set={a=true}}", true), b"~1\r\n$1\r\na\r\n");
        assert_eq!(reply_of("return {big_number='123'}", true), b"(123\r\n");
        assert!(reply_of("local t = {} t[1] = t return t", false).len() > 1000);
    }
}
