//! The debugger's line hook and its command loop.
//!
//! While a session is on, the script runs with [`Armed`]: Lua calls [`line_hook`] before
//! every line, and every [`HOOK_INSTRUCTIONS`] instructions. The hook stops on the lines of
//! the script (`user_script`) that are to stop, sends the logs, and serves the debugger's
//! commands ([`repl`]) until one resumes the script. Commands are matched as Valkey 9.1
//! matches them: by full name or by their short prefix (`s`, `max`...), and only with the
//! number of arguments they take; anything else answers `<error> Unknown debugger command
//! or wrong number of arguments.`.
//!
//! Lua runs hooks with hooks off, so what the commands run (`eval`'s chunk, `server.call`
//! for `redis`) does not stop again. A command that fails the script (`abort`, malformed
//! input) raises Valkey's error table from the hook's own frame, after every Rust value of
//! the hook is gone, as `interrupt` does.
//!
//! Like `interrupt`, `cfunc` and `fastcall`, this works on the raw `lua_State` with Lua's C
//! API.

use std::ffi::CStr;
use std::os::raw::c_int;
use std::time::Instant;

use mlua::ffi::{self, lua_Debug, lua_State};

use super::session::Input;
use super::{repr, with};

/// Instructions between two time checks of a run that does not stop (Valkey's period).
pub const HOOK_INSTRUCTIONS: c_int = 100_000;

const ABORTED: &[u8] = b"ERR script aborted for user request";
const TIMEOUT_GONE: &[u8] = b"ERR timeout during Lua debugging with client closing connection";

/// The help, as Valkey 9.1 words and wraps it.
const HELP: &[&str] = &[
    "LUA debugger help:",
    "[h]elp               Show this help.",
    "[max]len [len]       Trim logged replies to len. Specifying zero as",
    "                     <len> means unlimited. If no <len> is specified,",
    "                     the current value is shown. Usage: maxlen [len]",
    "[s]tep               Run current line and stop again.",
    "[n]ext               Alias for step.",
    "[c]ontinue           Run till next breakpoint.",
    "[l]ist [line] [ctx]  List source code around a specific line. If no",
    "                     line is specified the list is printed around the",
    "                     current line. [ctx] specifies how many lines to",
    "                     show before/after [line].",
    "[w]hole              List all source code. Alias for 'list 1 1000000'.",
    "[p]rint [var]        Show the value of the specified variable [var].",
    "                     Can also show global vars KEYS and ARGV. If no",
    "                     [var] is specidied, shows the value of all local",
    "                     variables.",
    "[b]reak [line|-line] Add/Remove a breakpoint to the specified line.",
    "                     If no [line] is specified, it shows all",
    "                     breakpoints. When line = 0, it removes all",
    "                     breakpoints.",
    "[t]race              Show a backtrace.",
    "[e]val <code>        Execute some Lua code (in a different callframe).",
    "[v]alkey <cmd>       Execute a command.",
    "[a]bort              Stop the execution of the script. In sync mode",
    "                     dataset changes will be retained.",
];

#[derive(Clone, Copy)]
enum Cmd {
    Help,
    Maxlen,
    Step,
    Continue,
    List,
    Whole,
    Print,
    Break,
    Trace,
    Eval,
    Server,
    Abort,
}

/// A debugger command: its name, how many of its first letters also name it (0: only the
/// full name), and how many arguments it takes.
struct Def {
    name: &'static str,
    prefix: usize,
    args_min: usize,
    args_max: usize,
    cmd: Cmd,
}

const fn def(name: &'static str, prefix: usize, args: (usize, usize), cmd: Cmd) -> Def {
    Def { name, prefix, args_min: args.0, args_max: args.1, cmd }
}

/// Valkey's order: the engine-neutral commands first, then Lua's.
const COMMANDS: &[Def] = &[
    def("help", 1, (0, 0), Cmd::Help),
    def("maxlen", 3, (0, 1), Cmd::Maxlen),
    def("step", 1, (0, 0), Cmd::Step),
    def("next", 1, (0, 0), Cmd::Step),
    def("continue", 1, (0, 0), Cmd::Continue),
    def("list", 1, (0, 2), Cmd::List),
    def("whole", 1, (0, 0), Cmd::Whole),
    def("print", 1, (0, 1), Cmd::Print),
    def("break", 1, (0, 1), Cmd::Break),
    def("trace", 1, (0, 0), Cmd::Trace),
    def("eval", 1, (1, usize::MAX), Cmd::Eval),
    def("valkey", 1, (1, usize::MAX), Cmd::Server),
    def("redis", 1, (1, usize::MAX), Cmd::Server),
    def("server", 0, (1, usize::MAX), Cmd::Server),
    def("abort", 1, (0, 0), Cmd::Abort),
];

fn find(argv: &[Vec<u8>]) -> Option<Cmd> {
    let name = &argv[0];
    let args = argv.len() - 1;
    COMMANDS
        .iter()
        .find(|d| {
            let by_prefix =
                name.len() == d.prefix && d.name.as_bytes()[..d.prefix].eq_ignore_ascii_case(name);
            (by_prefix || d.name.as_bytes().eq_ignore_ascii_case(name))
                && (d.args_min..=d.args_max).contains(&args)
        })
        .map(|d| d.cmd)
}

/// The line hook, set on the interpreter's main state while it lives.
pub struct Armed {
    main: *mut lua_State,
}

impl Armed {
    /// Sets the hook on `main`.
    ///
    /// # Safety
    /// `main` is the main state of a live interpreter that outlives the returned value.
    pub unsafe fn new(main: *mut lua_State) -> Armed {
        // SAFETY: `main` is live (the caller's promise); setting a hook only stores it.
        unsafe {
            ffi::lua_sethook(
                main,
                Some(line_hook),
                ffi::LUA_MASKLINE | ffi::LUA_MASKCOUNT,
                HOOK_INSTRUCTIONS,
            );
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

/// Lua's hook: stops where the session says to, and raises the error that ends the
/// script when the debugger says so.
unsafe extern "C-unwind" fn line_hook(l: *mut lua_State, ar: *mut lua_Debug) {
    // The Rust part ends here, before anything is raised (see the module comment).
    // SAFETY: called by Lua as a hook with its activation record.
    let raise = unsafe { on_line(l, ar) };
    let Some(msg) = raise else { return };
    // SAFETY: a hook may use LUA_MINSTACK slots (three are used); the error is raised the
    // way Lua's own C functions raise theirs, with no Rust value alive in this frame.
    unsafe {
        ffi::lua_createtable(l, 0, 1);
        ffi::lua_pushstring(l, c"err".as_ptr());
        ffi::lua_pushlstring(l, msg.as_ptr().cast(), msg.len());
        ffi::lua_rawset(l, -3);
        ffi::lua_error(l);
    }
}

/// The hook's work; returns the error to raise, if the script is to end.
unsafe fn on_line(l: *mut lua_State, ar: *mut lua_Debug) -> Option<&'static [u8]> {
    // SAFETY: `ar` is the hook's record; getstack/getinfo fill it for the running function.
    let (event, line, in_script) = unsafe {
        let event = (*ar).event;
        ffi::lua_getstack(l, 0, ar);
        ffi::lua_getinfo(l, c"Sl".as_ptr(), ar);
        let src = CStr::from_ptr((*ar).short_src.as_ptr()).to_bytes();
        (event, (*ar).currentline, contains(src, b"user_script"))
    };
    let timeout = with(|s| {
        s.current_line = line;
        let at_breakpoint = s.should_break();
        if !in_script {
            return None;
        }
        let mut timeout = false;
        if event == ffi::LUA_HOOKCOUNT && !s.step && !at_breakpoint {
            if s.resumed.elapsed().as_millis() < u128::from(s.timeout_ms) {
                return None;
            }
            timeout = true;
            s.step = true;
        }
        if !s.step && !at_breakpoint {
            return None;
        }
        let reason = match (at_breakpoint, s.lua_breakpoint, timeout) {
            (true, true, _) => "server.breakpoint() called",
            (true, false, _) => "break point",
            (false, _, true) => "timeout reached, infinite loop?",
            (false, _, false) => "step over",
        };
        s.step = false;
        s.lua_breakpoint = false;
        s.log(format!("* Stopped at {line}, stop reason = {reason}"));
        s.log_source_line(line);
        s.flush();
        Some(timeout)
    })
    .flatten()?;
    // SAFETY: `l` is the running state, in its hook.
    match unsafe { repl(l) } {
        Resume::Go => {}
        Resume::Gone if timeout => return Some(TIMEOUT_GONE),
        Resume::Gone => {}
        Resume::Fail(msg) => return Some(msg),
    }
    with(|s| s.resumed = Instant::now());
    None
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

enum Resume {
    /// A command resumed the script.
    Go,
    /// The client is gone: the script runs on without stopping.
    Gone,
    /// The script is to fail with this error.
    Fail(&'static [u8]),
}

/// Serves the debugger's commands until one resumes the script.
unsafe fn repl(l: *mut lua_State) -> Resume {
    loop {
        let argv = match with(|s| s.read_command()) {
            Some(Input::Command(argv)) => argv,
            Some(Input::Error(msg)) => return Resume::Fail(msg),
            Some(Input::Disconnected) | None => {
                with(|s| s.detach());
                return Resume::Gone;
            }
        };
        let Some(cmd) = find(&argv) else {
            with(|s| s.log("<error> Unknown debugger command or wrong number of arguments."));
            with(|s| s.flush());
            continue;
        };
        match cmd {
            Cmd::Step => {
                with(|s| s.step = true);
                return Resume::Go;
            }
            Cmd::Continue => return Resume::Go,
            Cmd::Abort => return Resume::Fail(ABORTED),
            Cmd::Help => with(|s| HELP.iter().for_each(|line| s.log(*line))).unwrap_or(()),
            Cmd::Maxlen => with(|s| s.maxlen_command(&argv)).unwrap_or(()),
            Cmd::List => with(|s| s.list_command(&argv)).unwrap_or(()),
            Cmd::Whole => with(|s| s.list(1, 1_000_000)).unwrap_or(()),
            Cmd::Break => with(|s| s.break_command(&argv)).unwrap_or(()),
            // SAFETY (the four below): `l` is the running state, in its hook.
            Cmd::Print => unsafe { print(l, argv.get(1).map(Vec::as_slice)) },
            Cmd::Trace => unsafe { trace(l) },
            Cmd::Eval => unsafe { eval(l, &argv[1..]) },
            Cmd::Server => unsafe { server(l, &argv[1..]) },
        }
        with(|s| s.flush());
    }
}

/// Logs the value on top of the stack after `prefix`, trimmed to `maxlen`.
unsafe fn log_top(l: *mut lua_State, prefix: &[u8]) {
    let mut line = prefix.to_vec();
    // SAFETY: the caller pushed the value.
    unsafe { repr::stack_value(&mut line, l, -1) };
    with(|s| s.log_trimmed(line));
}

/// A fresh activation record for `lua_getstack` to fill.
fn record() -> lua_Debug {
    // SAFETY: lua_Debug is plain C data (integers, pointers, a char array), for which all
    // zeroes is a valid value; Lua fills it before reading it.
    unsafe { std::mem::zeroed() }
}

/// `print [var]`: one variable, looked for from the current frame outwards (and the globals
/// `KEYS` and `ARGV`), or every local of the current frame.
unsafe fn print(l: *mut lua_State, var: Option<&[u8]>) {
    let mut ar = record();
    // SAFETY (whole function): the debug API on the running state; each local pushed by
    // `lua_getlocal` is popped before the next.
    unsafe {
        ffi::lua_checkstack(l, 4);
        let Some(var) = var else {
            let mut shown = 0;
            if ffi::lua_getstack(l, 0, &mut ar) != 0 {
                let mut i = 1;
                loop {
                    let name = ffi::lua_getlocal(l, &ar, i);
                    if name.is_null() {
                        break;
                    }
                    i += 1;
                    let name = CStr::from_ptr(name).to_bytes();
                    if !contains(name, b"(*temporary)") {
                        let mut prefix = b"<value> ".to_vec();
                        prefix.extend_from_slice(name);
                        prefix.extend_from_slice(b" = ");
                        log_top(l, &prefix);
                        shown += 1;
                    }
                    ffi::lua_pop(l, 1);
                }
            }
            if shown == 0 {
                with(|s| s.log("No local variables in the current context."));
            }
            return;
        };
        let mut level = 0;
        while ffi::lua_getstack(l, level, &mut ar) != 0 {
            level += 1;
            let mut i = 1;
            loop {
                let name = ffi::lua_getlocal(l, &ar, i);
                if name.is_null() {
                    break;
                }
                i += 1;
                if CStr::from_ptr(name).to_bytes() == var {
                    log_top(l, b"<value> ");
                    ffi::lua_pop(l, 1);
                    return;
                }
                ffi::lua_pop(l, 1);
            }
        }
        if var == b"KEYS" || var == b"ARGV" {
            let name = if var == b"KEYS" { c"KEYS" } else { c"ARGV" };
            ffi::lua_getfield(l, ffi::LUA_GLOBALSINDEX, name.as_ptr());
            log_top(l, b"<value> ");
            ffi::lua_pop(l, 1);
        } else {
            with(|s| s.log("No such variable."));
        }
    }
}

/// `trace`: the frames of the script, innermost first.
unsafe fn trace(l: *mut lua_State) {
    let mut ar = record();
    let mut level = 0;
    // SAFETY: the debug API on the running state; nothing is pushed.
    unsafe {
        while ffi::lua_getstack(l, level, &mut ar) != 0 {
            ffi::lua_getinfo(l, c"Snl".as_ptr(), &mut ar);
            if contains(CStr::from_ptr(ar.short_src.as_ptr()).to_bytes(), b"user_script") {
                let name = if ar.name.is_null() {
                    "top level".to_string()
                } else {
                    CStr::from_ptr(ar.name).to_string_lossy().into_owned()
                };
                let at = if level == 0 { "In" } else { "From" };
                let line = ar.currentline;
                with(|s| {
                    s.log(format!("{at} {name}:"));
                    s.log_source_line(line);
                });
            }
            level += 1;
        }
    }
    if level == 0 {
        with(|s| s.log("<error> Can't retrieve Lua stack."));
    }
}

/// The message of the error on top of the stack (C's `%s` of `lua_tostring`).
unsafe fn top_message(l: *mut lua_State) -> Vec<u8> {
    // SAFETY: a value is on top.
    unsafe {
        let mut len = 0usize;
        let p = ffi::lua_tolstring(l, -1, &mut len);
        if p.is_null() {
            b"(null)".to_vec()
        } else {
            std::slice::from_raw_parts(p.cast::<u8>(), len).to_vec()
        }
    }
}

/// `eval <code>`: the words joined by spaces, compiled as an expression (`return ...`) or
/// else as statements, run in a frame of its own; logs what it returned, or its error.
unsafe fn eval(l: *mut lua_State, words: &[Vec<u8>]) {
    let code = words.join(&b' ');
    let mut expr = b"return ".to_vec();
    expr.extend_from_slice(&code);
    // SAFETY: loading and calling a chunk in protected mode on the running state; what is
    // pushed (the chunk, then its result or error) is popped.
    unsafe {
        ffi::lua_checkstack(l, 2);
        let name = c"@ldb_eval".as_ptr();
        if ffi::luaL_loadbuffer(l, expr.as_ptr().cast(), expr.len(), name) != 0 {
            ffi::lua_pop(l, 1);
            if ffi::luaL_loadbuffer(l, code.as_ptr().cast(), code.len(), name) != 0 {
                let mut line = b"Error compiling code: ".to_vec();
                line.extend_from_slice(&top_message(l));
                ffi::lua_pop(l, 1);
                with(|s| s.log(line));
                return;
            }
        }
        if ffi::lua_pcall(l, 0, 1, 0) != 0 {
            let mut line = b"<error> ".to_vec();
            line.extend_from_slice(&top_message(l));
            ffi::lua_pop(l, 1);
            with(|s| s.log(line));
            return;
        }
        log_top(l, b"<retval> ");
        ffi::lua_pop(l, 1);
    }
}

/// `valkey|redis|server <cmd>`: runs the command through `server.call` with logging on,
/// so that the command, its reply and its error are logged; the result is dropped.
unsafe fn server(l: *mut lua_State, argv: &[Vec<u8>]) {
    // SAFETY: the call's function and arguments are pushed with the room asked for, and
    // the protected call leaves one value, popped.
    unsafe {
        if ffi::lua_checkstack(l, argv.len() as c_int + 1) == 0 {
            super::log_reply(b"max lua stack reached");
            return;
        }
        ffi::lua_pushcfunction(l, crate::scripting::fastcall::server_call);
        for a in argv {
            ffi::lua_pushlstring(l, a.as_ptr().cast(), a.len());
        }
        with(|s| s.step = true);
        ffi::lua_pcall(l, argv.len() as c_int, 1, 0);
        with(|s| s.step = false);
        ffi::lua_pop(l, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<Vec<u8>> {
        a.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    #[test]
    fn commands_match_by_name_or_prefix_and_arity() {
        assert!(matches!(find(&argv(&["s"])), Some(Cmd::Step)));
        assert!(matches!(find(&argv(&["NEXT"])), Some(Cmd::Step)));
        assert!(find(&argv(&["s", "x"])).is_none());
        assert!(matches!(find(&argv(&["max"])), Some(Cmd::Maxlen)));
        assert!(find(&argv(&["m"])).is_none());
        assert!(find(&argv(&["b", "1", "2"])).is_none());
        assert!(matches!(find(&argv(&["server", "ping"])), Some(Cmd::Server)));
        assert!(find(&argv(&["r"])).is_none());
        assert!(matches!(find(&argv(&["e", "1", "+", "2"])), Some(Cmd::Eval)));
        assert!(find(&argv(&["PING"])).is_none());
    }
}
