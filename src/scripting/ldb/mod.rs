//! The Lua debugger (LDB): `SCRIPT DEBUG YES|SYNC` and the session the next EVAL runs in,
//! as Valkey 9.1 has them.
//!
//! # A session
//!
//! ```text
//!   SCRIPT DEBUG YES|SYNC     the client is marked (server::client::Client::ldb)
//!   EVAL body numkeys ...     runtime::ldb: fork (YES) or not (SYNC), then begin() with the
//!                             client's socket as the Channel, made blocking
//!     -> the script runs with the line hook (repl): at each line of `user_script` that is
//!        to stop (stepping, a breakpoint, server.breakpoint(), a run past the time limit)
//!        the hook logs "* Stopped at N, stop reason = ..." and the line, sends the logs as
//!        one array of simple strings, then reads the debugger's commands off the socket
//!        (RESP arrays) and answers each until one resumes the script (step, continue)
//!   end()                     "<endsession>", sent; then the EVAL reply; the client closes
//! ```
//!
//! While stepping, `server.call` logs each command, its reply and its error
//! ([`log_command`], [`log_reply`], [`log_error`]); `server.debug(...)` logs its arguments
//! and `server.breakpoint()` stops at the next line.
//!
//! The session lives in a thread-local, like the running script's context (one script
//! runs at a time, on the main thread, or in the forked child); every access borrows it for
//! a short step and never across a call into Lua, so that the debugger's `redis` command
//! can run `server.call`, which logs into the same session. This module knows nothing of
//! sockets or forks: the runtime hands it a [`Channel`].

pub mod repl;
pub mod repr;
pub mod session;

use std::cell::RefCell;

use session::Session;

/// How the client asked to debug (`SCRIPT DEBUG YES` or `SYNC`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A forked child runs the session; what the script changes is thrown away.
    Forked,
    /// The server itself runs the session, blocked; what the script changes is kept.
    Sync,
}

/// An EVAL to run in a debugging session, prepared by its handler: the session starts
/// before anything of the call is checked, so the call's own error (a bad number of keys,
/// a script that does not compile) is the session's reply.
#[derive(Debug)]
pub struct DebugRun {
    pub mode: Mode,
    /// The script's body, as sent: the lines the debugger shows.
    pub source: bytes::Bytes,
    /// The script to run, or the error text to reply.
    pub prepared: Result<Box<super::Request>, Vec<u8>>,
}

/// The debugging client's connection, blocking.
pub trait Channel {
    /// Reads what arrived (waits for something); 0 when the peer closed.
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize>;
    /// Writes all of `bytes`; a failure is left for the next read to notice.
    fn write(&mut self, bytes: &[u8]);
}

thread_local! {
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
}

/// Runs `f` on the session, if one is on.
fn with<R>(f: impl FnOnce(&mut Session) -> R) -> Option<R> {
    SESSION.with(|s| s.borrow_mut().as_mut().map(f))
}

/// Starts a session over the script `source`, talking through `chan`; a run without a
/// stop lasting `timeout_ms` stops as if stepped.
pub fn begin(source: &[u8], chan: Box<dyn Channel>, timeout_ms: u64) {
    let session = Session::new(source, chan, timeout_ms);
    SESSION.with(|s| *s.borrow_mut() = Some(session));
}

/// Ends the session: logs `<endsession>` and sends what is left of the logs.
pub fn end() {
    let session = SESSION.with(|s| s.borrow_mut().take());
    if let Some(mut s) = session {
        s.log("<endsession>");
        s.flush();
    }
}

/// A session is on (the running script is being debugged).
pub fn active() -> bool {
    SESSION.with(|s| s.borrow().is_some())
}

/// The commands a script runs are logged now (a session is on and stepping).
pub fn logging() -> bool {
    with(|s| s.step).unwrap_or(false)
}

/// Logs `<command> arg...` (at most ten arguments written).
pub fn log_command(argv: &[bytes::Bytes]) {
    with(|s| {
        let mut line = b"<command>".to_vec();
        for (i, a) in argv.iter().enumerate() {
            if i == 10 {
                line.extend_from_slice(format!(" ... ({} more)", argv.len() - i - 1).as_bytes());
                break;
            }
            line.push(b' ');
            line.extend_from_slice(a);
        }
        s.log(line);
    });
}

/// Logs `<reply> ...`, the RESP reply `reply` in the debugger's words, trimmed to `maxlen`.
pub fn log_reply(reply: &[u8]) {
    with(|s| {
        let mut line = b"<reply> ".to_vec();
        repr::reply(&mut line, reply);
        s.log_trimmed(line);
    });
}

/// Logs `<error> text`.
pub fn log_error(text: &[u8]) {
    with(|s| {
        let mut line = b"<error> ".to_vec();
        line.extend_from_slice(text);
        s.log(line);
    });
}

/// `server.breakpoint()`: stop at the next line; false outside a session.
pub fn lua_breakpoint() -> bool {
    with(|s| s.lua_breakpoint = true).is_some()
}

/// `server.debug(...)` as a C function: logs `<debug> line N: a, b` in a session, does
/// nothing outside one.
///
/// # Safety
/// Called only by Lua, as a C function.
pub unsafe extern "C-unwind" fn lua_debug(l: *mut mlua::ffi::lua_State) -> std::os::raw::c_int {
    if !active() {
        return 0;
    }
    // SAFETY: reads the call's own arguments (1..=top); nothing is raised.
    unsafe {
        let n = mlua::ffi::lua_gettop(l);
        let line = with(|s| s.current_line).unwrap_or(-1);
        let mut out = format!("<debug> line {line}: ").into_bytes();
        for i in 1..=n {
            repr::stack_value(&mut out, l, i);
            if i != n {
                out.extend_from_slice(b", ");
            }
        }
        with(|s| s.log(out));
    }
    0
}
