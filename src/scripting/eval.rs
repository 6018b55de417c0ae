//! EVAL scripts: the shebang and its flags, compiling, and the script cache.
//!
//! A script is cached under the SHA-1 of its body (hex, lower case) as a compiled Lua
//! function. Scripts added by `SCRIPT LOAD` stay until `SCRIPT FLUSH`; scripts added by
//! `EVAL` itself are also kept in arrival order and the oldest is dropped beyond
//! [`EVAL_SCRIPTS_MAX`], as Valkey 8 does, so that a client generating scripts cannot
//! grow the cache without bound (`evicted_scripts` counts them).
//!
//! A body starting with `#!` names its engine (`lua`) and flags (`flags=no-writes,...`);
//! the line is blanked before compiling so that line numbers stay those of the body.
//! Without a shebang a script runs in compatibility mode: it may write, and its OOM check
//! happens when it calls a command that may grow memory rather than before it starts.

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;
use mlua::Function;

use super::Vm;

/// At most this many scripts added by EVAL are kept (Valkey's LRU list length).
pub const EVAL_SCRIPTS_MAX: usize = 500;

/// The flags a script declares (shebang) or a function is registered with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    pub no_writes: bool,
    pub allow_oom: bool,
    pub allow_stale: bool,
    pub no_cluster: bool,
    pub allow_cross_slot_keys: bool,
    /// No shebang: a script as before Redis 7 (may write; OOM checked per command).
    pub eval_compat: bool,
}

impl Flags {
    /// Sets the flag named `name`; false when there is no such flag.
    pub fn set(&mut self, name: &[u8]) -> bool {
        match name {
            b"no-writes" => self.no_writes = true,
            b"allow-oom" => self.allow_oom = true,
            b"allow-stale" => self.allow_stale = true,
            b"no-cluster" => self.no_cluster = true,
            b"allow-cross-slot-keys" => self.allow_cross_slot_keys = true,
            _ => return false,
        }
        true
    }

    /// The flags' names, in Valkey's order (FUNCTION LIST).
    pub fn names(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for (on, name) in [
            (self.no_writes, "no-writes"),
            (self.allow_oom, "allow-oom"),
            (self.allow_stale, "allow-stale"),
            (self.no_cluster, "no-cluster"),
            (self.allow_cross_slot_keys, "allow-cross-slot-keys"),
        ] {
            if on {
                out.push(name);
            }
        }
        out
    }
}

/// A cached script.
pub struct Script {
    pub func: Function,
    pub body: Bytes,
    pub flags: Flags,
    /// Added by EVAL (may be evicted), not by SCRIPT LOAD.
    pub from_eval: bool,
}

/// The flags of a body's shebang, or Valkey's error.
pub fn parse_shebang(body: &[u8]) -> Result<Flags, String> {
    let Some(rest) = body.strip_prefix(b"#!") else {
        return Ok(Flags { eval_compat: true, ..Flags::default() });
    };
    let Some(end) = rest.iter().position(|&c| c == b'\n') else {
        return Err("ERR Invalid script shebang".into());
    };
    let line = &rest[..end];
    let mut parts = line.split(|&c| c == b' ').filter(|p| !p.is_empty());
    let engine = parts.next().unwrap_or(b"");
    if !engine.eq_ignore_ascii_case(b"lua") {
        return Err(format!(
            "ERR Could not find scripting engine '{}'",
            String::from_utf8_lossy(engine)
        ));
    }
    let mut flags = Flags::default();
    for part in parts {
        let Some(list) = part.strip_prefix(b"flags=") else {
            return Err(format!(
                "ERR Unknown lua shebang option: {}",
                String::from_utf8_lossy(part)
            ));
        };
        for name in list.split(|&c| c == b',').filter(|n| !n.is_empty()) {
            if !flags.set(name) {
                return Err(format!(
                    "ERR Unexpected flag in script shebang: {}",
                    String::from_utf8_lossy(name)
                ));
            }
        }
    }
    Ok(flags)
}

/// The body with its shebang line blanked (its newline kept, so lines keep their numbers).
pub fn without_shebang(body: &[u8]) -> &[u8] {
    if body.starts_with(b"#!") {
        &body[body.iter().position(|&c| c == b'\n').unwrap_or(body.len())..]
    } else {
        body
    }
}

/// The EVAL scripts of the server.
pub struct Scripts {
    pub vm: Vm,
    map: HashMap<String, Script>,
    /// EVAL-added scripts, oldest first (may hold shas already gone).
    eval_order: VecDeque<String>,
    /// Bytes of the cached bodies.
    pub body_bytes: usize,
    /// Scripts dropped because too many were added by EVAL.
    pub evicted: u64,
}

impl Scripts {
    pub fn new() -> mlua::Result<Scripts> {
        Ok(Scripts {
            vm: Vm::new()?,
            map: HashMap::new(),
            eval_order: VecDeque::new(),
            body_bytes: 0,
            evicted: 0,
        })
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Bytes the cache holds besides the interpreter: the bodies, and per script its
    /// entry, its sha and its place in the EVAL order.
    pub fn memory_bytes(&self) -> usize {
        let per_script =
            std::mem::size_of::<(String, Script)>() + 40 + std::mem::size_of::<String>();
        self.body_bytes + self.map.capacity() * per_script
    }

    pub fn get(&self, sha: &[u8]) -> Option<&Script> {
        let sha = std::str::from_utf8(sha).ok()?;
        if sha.len() != 40 {
            return None;
        }
        self.map.get(&sha.to_ascii_lowercase())
    }

    /// Compiles and caches `body` unless cached; returns its sha. `from_eval`: added by
    /// EVAL (evictable). A script SCRIPT LOAD adds again stops being evictable.
    pub fn add(&mut self, body: &Bytes, from_eval: bool) -> Result<String, String> {
        let sha = crate::util::sha1::hex(&crate::util::sha1::sha1(body));
        if let Some(s) = self.map.get_mut(&sha) {
            if !from_eval {
                s.from_eval = false;
            }
            return Ok(sha);
        }
        let flags = parse_shebang(body)?;
        let func = self
            .vm
            .lua
            .load(without_shebang(body))
            .set_name("@user_script")
            .into_function()
            .map_err(|e| {
                format!("ERR Error compiling script (new function): {}", compile_message(&e))
            })?;
        if from_eval {
            while self.eval_order.len() >= EVAL_SCRIPTS_MAX {
                let Some(old) = self.eval_order.pop_front() else { break };
                if self.map.get(&old).is_some_and(|s| s.from_eval) {
                    self.remove(&old);
                    self.evicted += 1;
                }
            }
            self.eval_order.push_back(sha.clone());
        }
        self.body_bytes += body.len();
        self.map.insert(sha.clone(), Script { func, body: body.clone(), flags, from_eval });
        Ok(sha)
    }

    fn remove(&mut self, sha: &str) {
        if let Some(s) = self.map.remove(sha) {
            self.body_bytes -= s.body.len();
        }
    }

    /// SCRIPT FLUSH: every script gone, and a fresh interpreter.
    pub fn flush(&mut self) -> mlua::Result<()> {
        *self = Scripts { evicted: self.evicted, ..Scripts::new()? };
        Ok(())
    }
}

/// Lua's message for a chunk that does not compile.
pub fn compile_message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shebangs_as_valkey_reads_them() {
        assert!(parse_shebang(b"return 1").unwrap().eval_compat);
        let f = parse_shebang(b"#!lua flags=no-writes,allow-oom\nreturn 1").unwrap();
        assert!(f.no_writes && f.allow_oom && !f.eval_compat);
        assert_eq!(parse_shebang(b"#!lua\nreturn 1").unwrap(), Flags::default());
        assert_eq!(
            parse_shebang(b"#!lua flags=bad\n").unwrap_err(),
            "ERR Unexpected flag in script shebang: bad"
        );
        assert_eq!(
            parse_shebang(b"#!lua name=x\n").unwrap_err(),
            "ERR Unknown lua shebang option: name=x"
        );
        assert_eq!(
            parse_shebang(b"#!python\n").unwrap_err(),
            "ERR Could not find scripting engine 'python'"
        );
        assert_eq!(without_shebang(b"#!lua\nreturn 1"), b"\nreturn 1");
    }
}
