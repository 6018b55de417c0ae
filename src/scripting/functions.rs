//! FUNCTION libraries: loading, the functions they register, and their payloads.
//!
//! A library is Lua code that starts with `#!lua name=<library>` and calls
//! `server.register_function` while it loads. It runs in an interpreter of its own (not the
//! EVAL one), in a load-time environment as bare as Valkey's: the globals hold only
//! `server`/`redis`, and those only `register_function`, `log` and the version and log
//! constants; anything else is "nonexistent". The globals' proxy reads through to that
//! environment while the code loads and to the full one afterwards, so the registered
//! callbacks see the usual globals (without KEYS and ARGV, which a function gets as
//! arguments) when FCALL runs them.
//!
//! Loading is all or nothing: the library's functions are checked (names, duplicates,
//! clashes with other libraries) after its code ran and before anything changes.
//! `FUNCTION DUMP` writes each library as an RDB function record (`0xF5` and the code as an
//! RDB string) followed by the RDB version and a CRC-64, as Valkey does, so payloads and RDB
//! files move between the two.

use std::cell::RefCell;
use std::collections::BTreeMap;

use bytes::Bytes;
use mlua::{Function, Lua, MultiValue, Table, Value, Variadic};

use super::eval::{without_shebang, Flags};
use super::{api, cfunc, sandbox, Vm};

/// How long a library's code may run while it loads (Valkey's `LOAD_TIMEOUT_MS`).
const LOAD_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);
/// Instructions between two checks of [`LOAD_TIMEOUT`].
const LOAD_HOOK_INSTRUCTIONS: u32 = 100_000;

/// A registered function.
pub struct FunctionDef {
    pub name: String,
    pub library: String,
    pub func: Function,
    pub flags: Flags,
    pub description: Option<Bytes>,
}

/// A loaded library.
pub struct Library {
    pub name: String,
    pub code: Bytes,
    /// Its functions' names, in registration order.
    pub functions: Vec<String>,
}

/// What `register_function` collects while a library loads (interpreter app data).
#[derive(Default)]
struct Registering(RefCell<Vec<Registered>>);

struct Registered {
    name: String,
    func: Function,
    flags: Flags,
    description: Option<Bytes>,
}

/// Every library and function of the server, and their interpreter.
pub struct Functions {
    pub vm: Vm,
    libraries: BTreeMap<String, Library>,
    functions: BTreeMap<String, FunctionDef>,
    /// The environment library code loads in (see the module comment).
    load_env: Table,
}

/// How FUNCTION RESTORE treats libraries that exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestorePolicy {
    Flush,
    Append,
    Replace,
}

fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

fn err(msg: &str) -> String {
    format!("ERR {msg}")
}

/// The library name of `code`'s shebang, or Valkey's error.
pub fn library_name(code: &[u8]) -> Result<String, String> {
    let Some(rest) = code.strip_prefix(b"#!") else {
        return Err(err("Missing library metadata"));
    };
    let line = &rest[..rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len())];
    let mut parts = line.split(|&c| c == b' ').filter(|p| !p.is_empty());
    let engine = parts.next().unwrap_or(b"");
    if !engine.eq_ignore_ascii_case(b"lua") {
        return Err(format!("ERR Engine '{}' not found", String::from_utf8_lossy(engine)));
    }
    let mut name = None;
    for part in parts {
        match part.strip_prefix(b"name=") {
            Some(_) if name.is_some() => {
                return Err(err("Invalid metadata value, name argument was given multiple times"))
            }
            Some(n) => name = Some(n),
            None => {
                return Err(format!(
                    "ERR Invalid metadata value given: {}",
                    String::from_utf8_lossy(part)
                ))
            }
        }
    }
    let name = name.ok_or_else(|| err("Library name was not given"))?;
    if !valid_name(name) {
        return Err(err("Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"));
    }
    Ok(String::from_utf8_lossy(name).into_owned())
}

/// The `server` API of a function's run: EVAL's, less what only EVAL scripts have.
fn runtime_api(lua: &Lua, t: &Table) -> mlua::Result<()> {
    api::install(lua, t)?;
    for name in ["breakpoint", "debug", "replicate_commands"] {
        t.raw_set(name, Value::Nil)?;
    }
    Ok(())
}

fn lua_string(v: &Value, lua: &Lua) -> mlua::Result<Option<Bytes>> {
    Ok(match v {
        Value::String(s) => Some(Bytes::copy_from_slice(&s.as_bytes())),
        Value::Integer(_) | Value::Number(_) => {
            lua.coerce_string(v.clone())?.map(|s| Bytes::copy_from_slice(&s.as_bytes()))
        }
        _ => None,
    })
}

/// `server.register_function(name, callback)` or `server.register_function{...}`.
fn register(lua: &Lua, args: Variadic<Value>) -> mlua::Result<MultiValue> {
    let fail = |msg: &str| cfunc::raise(lua, api::err_table(lua, format!("ERR {msg}").as_bytes())?);
    let (name, callback, flags, description) = match args.len() {
        1 => {
            let Value::Table(t) = &args[0] else {
                return fail("calling server.register_function with a single argument is only applicable to Lua table (representing named arguments).");
            };
            let (mut name, mut callback, mut flags, mut description) = (None, None, None, None);
            for pair in t.pairs::<Value, Value>() {
                let (k, v) = pair?;
                let key =
                    match &k {
                        Value::String(s) => s.as_bytes().to_vec(),
                        _ => return fail(
                            "named argument key given to server.register_function is not a string",
                        ),
                    };
                match key.as_slice() {
                    b"function_name" => name = Some(v),
                    b"callback" => callback = Some(v),
                    b"flags" => flags = Some(v),
                    b"description" => description = Some(v),
                    _ => return fail("unknown argument given to server.register_function"),
                }
            }
            let Some(name) = name else {
                return fail("server.register_function must get a function name argument");
            };
            let Some(callback) = callback else {
                return fail("server.register_function must get a callback argument");
            };
            let Value::Function(callback) = callback else {
                return fail(
                    "callback argument given to server.register_function must be a function",
                );
            };
            (name, callback, flags, description)
        }
        2 => {
            let Value::Function(callback) = args[1].clone() else {
                return fail("second argument to server.register_function must be a function");
            };
            (args[0].clone(), callback, None, None)
        }
        _ => return fail("wrong number of arguments to server.register_function"),
    };
    let Some(name) = lua_string(&name, lua)? else {
        return fail("function_name argument given to server.register_function must be a string");
    };
    let mut parsed = Flags::default();
    match flags {
        None | Some(Value::Nil) => {}
        Some(Value::Table(t)) => {
            for v in t.sequence_values::<Value>() {
                let ok = match v? {
                    Value::String(s) => parsed.set(&s.as_bytes()),
                    _ => false,
                };
                if !ok {
                    return fail("unknown flag given");
                }
            }
        }
        Some(_) => {
            return fail("flags argument to server.register_function must be a table representing function flags")
        }
    }
    let description = match description {
        None | Some(Value::Nil) => None,
        Some(v) => match lua_string(&v, lua)? {
            Some(d) => Some(d),
            None => {
                return fail(
                    "description argument given to server.register_function must be a string",
                )
            }
        },
    };
    let reg = lua.app_data_ref::<Registering>().ok_or_else(|| {
        mlua::Error::RuntimeError("register_function called outside a library load".into())
    })?;
    reg.0.borrow_mut().push(Registered {
        name: String::from_utf8_lossy(&name).into_owned(),
        func: callback,
        flags: parsed,
        description,
    });
    Ok(MultiValue::new())
}

/// The load-time environment: globals with only `server`/`redis`, each with only
/// `register_function`, `log` and the constants.
fn load_env(lua: &Lua, protect: &Function) -> mlua::Result<Table> {
    let missing: Table = lua
        .load(
            "local error, tostring = error, tostring
             return {__index = function(_, k)
               error(\"Script attempted to access nonexistent global variable '\" .. tostring(k) .. \"'\", 2)
             end}",
        )
        .set_name(sandbox::INTERNAL_CHUNK)
        .eval()?;
    let api_t = lua.create_table()?;
    api_t.raw_set("register_function", cfunc::lua_style(lua, lua.create_function(register)?)?)?;
    api_t.raw_set(
        "log",
        cfunc::lua_style(
            lua,
            lua.create_function(|lua, a: Variadic<Value>| api::log(lua, &a, false))?,
        )?,
    )?;
    api::install_constants(&api_t)?;
    for name in ["REPL_NONE", "REPL_AOF", "REPL_REPLICA", "REPL_SLAVE", "REPL_ALL"] {
        api_t.raw_set(name, Value::Nil)?;
    }
    api_t.set_metatable(Some(missing.clone()))?;
    let api_proxy: Table = protect.call(api_t)?;
    let env = lua.create_table()?;
    env.raw_set("server", &api_proxy)?;
    env.raw_set("redis", &api_proxy)?;
    env.set_metatable(Some(missing))?;
    Ok(env)
}

impl Functions {
    pub fn new() -> mlua::Result<Functions> {
        let vm = Vm::with_api(&runtime_api)?;
        vm.lua.set_app_data(Registering::default());
        let protect: Function = vm.protect.clone();
        let load_env = load_env(&vm.lua, &protect)?;
        Ok(Functions { vm, libraries: BTreeMap::new(), functions: BTreeMap::new(), load_env })
    }

    pub fn function(&self, name: &[u8]) -> Option<&FunctionDef> {
        self.functions.get(std::str::from_utf8(name).ok()?)
    }

    pub fn libraries(&self) -> impl Iterator<Item = &Library> {
        self.libraries.values()
    }

    pub fn library_count(&self) -> usize {
        self.libraries.len()
    }

    pub fn function_count(&self) -> usize {
        self.functions.len()
    }

    pub fn functions_of<'a>(&'a self, lib: &'a Library) -> impl Iterator<Item = &'a FunctionDef> {
        lib.functions.iter().filter_map(|f| self.functions.get(f))
    }

    /// Bytes the libraries hold besides the interpreter: their code, names and entries.
    pub fn memory_bytes(&self) -> usize {
        let libs: usize = self
            .libraries
            .values()
            .map(|l| l.code.len() + l.name.len() + std::mem::size_of::<Library>())
            .sum();
        let fns: usize = self
            .functions
            .values()
            .map(|f| {
                f.name.len()
                    + f.description.as_ref().map_or(0, |d| d.len())
                    + std::mem::size_of::<FunctionDef>()
            })
            .sum();
        libs + fns
    }

    /// Runs `code` in the load-time environment and returns what it registered.
    fn run_library(&self, code: &[u8]) -> Result<Vec<Registered>, String> {
        let lua = &self.vm.lua;
        let chunk =
            lua.load(without_shebang(code)).set_name("@user_function").into_function().map_err(
                |e| format!("ERR Error compiling function: {}", super::eval::compile_message(&e)),
            )?;
        let globals_mt = lua.globals().metatable().ok_or("ERR the function engine is not ready")?;
        let full: Value = globals_mt.raw_get("__index").map_err(|e| e.to_string())?;
        let _ = globals_mt.raw_set("__index", &self.load_env);
        if let Some(reg) = lua.app_data_ref::<Registering>() {
            reg.0.borrow_mut().clear();
        }
        // A library's code gets LOAD_TIMEOUT to register its functions, as in Valkey: a hook
        // every LOAD_HOOK_INSTRUCTIONS instructions stops it past that.
        let started = std::time::Instant::now();
        let timed_out = std::rc::Rc::new(std::cell::Cell::new(false));
        let flag = timed_out.clone();
        let hooked = lua.set_hook(
            mlua::HookTriggers::new().every_nth_instruction(LOAD_HOOK_INSTRUCTIONS),
            move |_, _| {
                if started.elapsed() > LOAD_TIMEOUT {
                    flag.set(true);
                    return Err(mlua::Error::RuntimeError("FUNCTION LOAD timeout".into()));
                }
                Ok(mlua::VmState::Continue)
            },
        );
        let outcome: mlua::Result<(bool, Value)> = self.vm.xpcall.call((&chunk, &self.vm.handler));
        if hooked.is_ok() {
            lua.remove_hook();
        }
        let _ = globals_mt.raw_set("__index", full);
        if timed_out.get() {
            return Err("ERR Error registering functions: ERR FUNCTION LOAD timeout".into());
        }
        let registered = lua.app_data_ref::<Registering>().map(|r| r.0.take()).unwrap_or_default();
        match outcome {
            Ok((true, _)) => Ok(registered),
            Ok((false, e)) => {
                let msg = match &e {
                    Value::Table(t) => match t.raw_get::<Value>("err") {
                        Ok(Value::String(s)) => s.to_string_lossy(),
                        _ => "ERR unknown error".into(),
                    },
                    other => other.to_string().unwrap_or_default(),
                };
                Err(format!("ERR Error registering functions: {msg}"))
            }
            Err(e) => Err(format!("ERR Error registering functions: {e}")),
        }
    }

    /// FUNCTION LOAD: the library's name, or Valkey's error. Nothing changes on an error.
    pub fn load(&mut self, code: &Bytes, replace: bool) -> Result<String, String> {
        let name = library_name(code)?;
        if self.libraries.contains_key(&name) && !replace {
            return Err(format!("ERR Library '{name}' already exists"));
        }
        let registered = self.run_library(code)?;
        if registered.is_empty() {
            return Err(err("No functions registered"));
        }
        let mut seen = std::collections::HashSet::new();
        for r in &registered {
            if !valid_name(r.name.as_bytes()) {
                return Err(err("Function names can only contain letters, numbers, or underscores(_) and must be at least one character long"));
            }
            if !seen.insert(r.name.as_str()) {
                return Err(err("Function already exists in the library"));
            }
            if let Some(f) = self.functions.get(&r.name) {
                if f.library != name {
                    return Err(format!("ERR Function {} already exists", r.name));
                }
            }
        }
        self.delete(&name);
        let functions = registered.iter().map(|r| r.name.clone()).collect();
        for r in registered {
            let def = FunctionDef {
                name: r.name.clone(),
                library: name.clone(),
                func: r.func,
                flags: r.flags,
                description: r.description,
            };
            self.functions.insert(r.name, def);
        }
        self.libraries
            .insert(name.clone(), Library { name: name.clone(), code: code.clone(), functions });
        Ok(name)
    }

    /// FUNCTION DELETE: whether the library existed.
    pub fn delete(&mut self, name: &str) -> bool {
        let Some(lib) = self.libraries.remove(name) else { return false };
        for f in &lib.functions {
            self.functions.remove(f);
        }
        true
    }

    /// FUNCTION FLUSH: every library gone, and a fresh interpreter.
    pub fn flush(&mut self) -> mlua::Result<()> {
        *self = Functions::new()?;
        Ok(())
    }

    /// The libraries' code, for FUNCTION DUMP and the RDB.
    pub fn codes(&self) -> Vec<Bytes> {
        self.libraries.values().map(|l| l.code.clone()).collect()
    }

    /// FUNCTION RESTORE of the libraries `codes` under `policy`: all or nothing.
    pub fn restore(&mut self, codes: Vec<Bytes>, policy: RestorePolicy) -> Result<(), String> {
        let mut staged = Functions::new().map_err(|e| format!("ERR {e}"))?;
        for code in &codes {
            staged.load(code, false)?;
        }
        let mut next = Functions::new().map_err(|e| format!("ERR {e}"))?;
        if policy != RestorePolicy::Flush {
            for lib in self.libraries.values() {
                if policy == RestorePolicy::Replace && staged.libraries.contains_key(&lib.name) {
                    continue;
                }
                if policy == RestorePolicy::Append && staged.libraries.contains_key(&lib.name) {
                    return Err(format!("ERR Library {} already exists", lib.name));
                }
                next.load(&lib.code, false)?;
            }
        }
        for code in &codes {
            next.load(code, false)?;
        }
        *self = next;
        Ok(())
    }
}
