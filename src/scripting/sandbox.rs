//! The interpreter and its sandbox: which libraries a script sees, and how the globals are
//! kept read-only.
//!
//! Valkey patches Lua's VM with a read-only flag on tables; ferrokey runs an unpatched Lua
//! 5.1, so the same guarantees come from proxies. Every table a script can reach through the
//! globals (the globals themselves and each library: `string`, `math`, `table`, `os`,
//! `coroutine`, `server`/`redis`, `cjson`, `cmsgpack`, `bit`, `struct`) is an empty proxy
//! whose metatable reads through to the real table and refuses writes:
//!
//! ```text
//!   _G (proxy, empty) --__index--> backing (KEYS, ARGV, string (proxy) ...) --__index--> error
//!        \__newindex: "Attempt to modify a readonly table"            "Script attempted to
//!                                                                      access nonexistent
//!                                                                      global variable 'x'"
//! ```
//!
//! What reads or writes a table raw (`rawset`, `rawget`, `next`, `pairs`, `setmetatable`,
//! `table.insert`, `table.remove`, `table.sort`) is replaced by a version that sees through a
//! proxy and refuses to change one, so that no script leaves anything behind for the next.
//! `getmetatable` of a proxy gives a read-only stand-in. Reading an existing global costs
//! one extra table step, done inside the VM.
//!
//! The libraries are those of Valkey's build: base (without `print`, `dofile`, `loadfile`,
//! `getfenv`, `setfenv`, `require`, `module`, `newproxy`), `string`, `table`, `math` (with
//! Valkey's deterministic `random`), `os` with only `clock`, `coroutine`, and `cjson`,
//! `cmsgpack`, `bit`, `struct`. `debug` is loaded only for the error handler, which keeps a
//! private reference to `debug.getinfo`, and then removed.

use mlua::{Function, Lua, LuaOptions, StdLib, Table, Value};

use super::{cfunc, lib_bit, lib_cjson, lib_cmsgpack, lib_struct, random};

/// Chunk name of the sandbox's own Lua code (the error handler skips its frames).
pub const INTERNAL_CHUNK: &str = "=ferrokey";

/// Globals of Lua's base library a script keeps.
const BASE_KEPT: &[&str] = &[
    "_VERSION",
    "assert",
    "collectgarbage",
    "error",
    "gcinfo",
    "getmetatable",
    "ipairs",
    "load",
    "loadstring",
    "next",
    "pairs",
    "pcall",
    "rawequal",
    "rawget",
    "rawset",
    "select",
    "setmetatable",
    "tonumber",
    "tostring",
    "type",
    "unpack",
    "xpcall",
];

/// The protections, the error handler and the raw-access replacements, in Lua. Run once,
/// before the globals are locked; gets the backing table and the real `debug.getinfo`.
const PRELUDE: &str = r#"
local backing, getinfo = ...
local rawget, rawset, next, type, tostring, error = rawget, rawset, next, type, tostring, error
local setmetatable, getmetatable = setmetatable, getmetatable
local tinsert, tremove, tsort = table.insert, table.remove, table.sort
local pcall, smatch = pcall, string.match
-- proxy -> the table it stands for (weak keys: nothing here outlives its proxy)
local real = setmetatable({}, {__mode = 'k'})

local function readonly()
  error('Attempt to modify a readonly table', 2)
end

local function protect(t)
  local proxy = {}
  local stand_in = setmetatable({}, {__index = t, __newindex = readonly, __metatable = false})
  setmetatable(proxy, {__index = t, __newindex = readonly, __metatable = stand_in})
  real[proxy] = t
  return proxy
end

-- Level 0: Valkey's refusals come from C functions, whose errors carry no position.
local function refuse_proxy(t)
  if real[t] then error('Attempt to modify a readonly table', 0) end
end

local function seen(t)
  return real[t] or t
end

local lib = {}
lib.rawset = function(t, k, v) refuse_proxy(t) return rawset(t, k, v) end
lib.rawget = function(t, k) return rawget(seen(t), k) end
lib.next = function(t, k) return next(seen(t), k) end
lib.pairs = function(t) return lib.next, t, nil end
lib.setmetatable = function(t, mt) refuse_proxy(t) return setmetatable(t, mt) end
lib.table_insert = function(t, ...) refuse_proxy(t) return tinsert(t, ...) end
-- Removing from or sorting a table with no elements writes nothing, and is allowed on a
-- read-only table in Valkey too.
lib.table_remove = function(t, ...)
  if #seen(t) > 0 then refuse_proxy(t) end
  return tremove(seen(t), ...)
end
lib.table_sort = function(t, ...)
  if #seen(t) > 1 then refuse_proxy(t) end
  return tsort(seen(t), ...)
end

-- Valkey's pcall: an error table with an `err` string (or number) is caught as that
-- value, as before Redis 7 where errors were strings.
local function caught(ok, ...)
  if ok then return ok, ... end
  local e = ...
  if type(e) == 'table' then
    local m = e.err
    if type(m) == 'string' or type(m) == 'number' then e = m end
  end
  return false, e
end
lib.pcall = function(...) return caught(pcall(...)) end

-- The error handler of every script call: the error as a table {err=, source=, line=}
-- with the position of the innermost frame of the script itself.
lib.handler = function(err)
  local info
  for level = 2, 32 do
    local i = getinfo(level, 'Sl')
    if not i then break end
    if i.what ~= 'C' and i.what ~= 'tail' and i.source ~= '=ferrokey' then
      info = i
      break
    end
  end
  if type(err) ~= 'table' then
    err = {err = 'ERR ' .. tostring(err)}
  end
  -- What Valkey's reply takes of `err`: a string or a number, as a C string (cut at NUL).
  local m = rawget(err, 'err')
  if type(m) == 'number' then m = tostring(m) end
  if type(m) == 'string' then rawset(err, 'err', smatch(m, '^[^%z]*')) end
  if info then
    err.source = info.source
    err.line = info.currentline
  end
  return err
end

setmetatable(backing, {__index = function(_, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end})
lib.protect = protect
return lib
"#;

/// A new interpreter with the sandboxed environment; returns it with the error handler and
/// the function that puts a table behind a read-only proxy.
pub fn new_interpreter(
    server_api: &dyn Fn(&Lua, &Table) -> mlua::Result<()>,
) -> mlua::Result<(Lua, Function, Function)> {
    let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::OS;
    // SAFETY: `unsafe_new_with` is needed only to load `debug`, which no script ever sees:
    // the handler keeps `getinfo` and the global is removed below.
    let lua = unsafe { Lua::unsafe_new_with(libs | StdLib::DEBUG, LuaOptions::new()) };
    let g = lua.globals();
    let debug: Table = g.get("debug")?;
    let getinfo: Function = debug.get("getinfo")?;

    // The backing table of the globals: what Valkey's build leaves a script.
    let backing = lua.create_table()?;
    for name in BASE_KEPT {
        backing.raw_set(*name, g.raw_get::<Value>(*name)?)?;
    }
    for name in ["string", "table", "math", "coroutine"] {
        backing.raw_set(name, g.raw_get::<Value>(name)?)?;
    }
    let os = lua.create_table()?;
    os.raw_set("clock", g.get::<Table>("os")?.get::<Function>("clock")?)?;
    backing.raw_set("os", os)?;
    random::install(&lua, &backing.get::<Table>("math")?)?;

    // The extra libraries open themselves into the globals.
    // cjson wraps its functions itself (also those of the instances `cjson.new` makes).
    lib_cjson::open_with(&lua, cfunc::lua_style)?;
    // cmsgpack raises two errors without a position, as Valkey's does.
    lib_cmsgpack::open_with(&lua, cfunc::raise)?;
    lib_bit::open(&lua)?;
    lib_struct::open(&lua)?;
    for name in ["cjson", "cmsgpack", "bit", "struct"] {
        let t: Table = g.get(name)?;
        if name != "cjson" {
            wrap_functions(&lua, &t)?;
        }
        backing.raw_set(name, t)?;
    }

    let server = lua.create_table()?;
    server_api(&lua, &server)?;
    backing.raw_set("server", &server)?;
    backing.raw_set("redis", &server)?;

    let prelude: Function = lua.load(PRELUDE).set_name(INTERNAL_CHUNK).into_function()?;
    let lib: Table = prelude.call((&backing, getinfo))?;
    let handler: Function = lib.get("handler")?;
    backing.raw_set("__server__err__handler", &handler)?;
    backing.raw_set("__redis__err__handler", &handler)?;
    for name in ["rawset", "rawget", "next", "pairs", "setmetatable", "pcall"] {
        backing.raw_set(name, lib.get::<Function>(name)?)?;
    }
    let table: Table = backing.raw_get("table")?;
    for name in ["insert", "remove", "sort"] {
        table.raw_set(name, lib.get::<Function>(format!("table_{name}"))?)?;
    }

    // Lock: each library behind its proxy, then the globals.
    let protect: Function = lib.get("protect")?;
    for name in ["string", "table", "math", "coroutine", "os", "cjson", "cmsgpack", "bit", "struct"]
    {
        let t: Table = backing.raw_get(name)?;
        backing.raw_set(name, protect.call::<Table>(t)?)?;
    }
    let server_proxy: Table = protect.call(&server)?;
    backing.raw_set("server", &server_proxy)?;
    backing.raw_set("redis", &server_proxy)?;
    // The metatable of strings reads the proxy too; `getmetatable('')` gives a read-only
    // proxy of it, whose `__index` is `string` as in Valkey.
    let string_mt: Table = lua.load("return getmetatable('')").set_name(INTERNAL_CHUNK).eval()?;
    string_mt.raw_set("__index", backing.raw_get::<Table>("string")?)?;
    string_mt.raw_set("__metatable", protect.call::<Table>(&string_mt)?)?;

    let globals: Table = protect.call(&backing)?;
    backing.raw_set("_G", &globals)?;
    lua.set_globals(globals)?;
    Ok((lua, handler, protect))
}

/// Every function of a library table, failing as a C function does (`cfunc`).
fn wrap_functions(lua: &Lua, t: &Table) -> mlua::Result<()> {
    let mut fns = Vec::new();
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair?;
        if let Value::Function(f) = v {
            if f.info().what == "C" || f.info().what == "Rust" {
                fns.push((k, f));
            }
        }
    }
    for (k, f) in fns {
        t.raw_set(k, cfunc::lua_style(lua, f)?)?;
    }
    Ok(())
}

/// The backing table of the globals (where KEYS and ARGV are set).
pub fn backing(lua: &Lua) -> mlua::Result<Table> {
    let g = lua.globals();
    let mt = g.metatable().ok_or_else(|| mlua::Error::RuntimeError("globals unlocked".into()))?;
    mt.raw_get("__index")
}
