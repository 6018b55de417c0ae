//! Serving the other clients while a script runs past `busy-reply-threshold`.
//!
//! A script runs inside its caller's command, in the middle of a batch, with the server
//! state borrowed all the way down to the script's [`Host`](crate::scripting::Host). When
//! it has run too long, Valkey's clients expect to be answered meanwhile: `BUSY` to most
//! commands, and `SCRIPT KILL`, `FUNCTION KILL` or `SHUTDOWN NOSAVE` obeyed. So the batch
//! runner lends the event loop's [`Net`] (poll, connections, client lists) for the length
//! of each batch's execution ([`Lent`]), and the script's host, holding the server state,
//! calls [`serve`] every 100,000 instructions once the script has timed out: one turn of
//! the event loop on the lent `Net` with that server state (`Net::serve_busy`).
//!
//! ```text
//!   Batcher::run(srv, net)           commands popped from net.conns into the batch
//!     Batcher::flush
//!       net.in_flight = the batch's clients
//!       Lent::new(net)  ------------------------------------+
//!       execute_one(srv, ...) for each command               |
//!         ... EVAL -> Lua -> hook -> Host::interrupt(srv)    |
//!                      -> busy::serve(srv) -> Net::serve_busy(srv)
//!       drop(Lent)      ------------------------------------+
//!       held-back commands back into net.conns
//! ```
//!
//! The `Net` is not otherwise touched while it is lent: the commands run on the server
//! state alone. The turn served while busy leaves alone the clients with commands in the
//! batch (they run in order, after the script: a client whose command was read in the same
//! turn as the script waits for it rather than getting `BUSY`), blocked and paused clients,
//! and the primary's stream; it writes only the replies of the clients it served.

use std::cell::Cell;
use std::marker::PhantomData;

use crate::runtime::event_loop::Net;
use crate::server::state::ServerState;

thread_local! {
    /// The lent `Net`, while a batch runs on the main thread.
    static LENT: Cell<*mut Net> = const { Cell::new(std::ptr::null_mut()) };
}

/// The event loop's `Net`, lent to [`serve`] while it lives.
pub struct Lent<'a> {
    _net: PhantomData<&'a mut Net>,
}

impl<'a> Lent<'a> {
    pub(crate) fn new(net: &'a mut Net) -> Lent<'a> {
        let p: *mut Net = net;
        LENT.with(|c| c.set(p));
        Lent { _net: PhantomData }
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        LENT.with(|c| c.set(std::ptr::null_mut()));
    }
}

/// One turn of the event loop for the other clients while a script keeps the server busy;
/// nothing when no `Net` is lent (a script replayed from the AOF at start-up).
pub fn serve(srv: &mut ServerState) {
    let p = LENT.with(|c| c.replace(std::ptr::null_mut()));
    if p.is_null() {
        return;
    }
    // SAFETY: `p` was published by `Lent::new` from a `&mut Net` whose borrow lasts as long
    // as the `Lent`, which is alive (it resets the cell when dropped), and the event loop
    // does not use the `Net` while it is lent. The pointer is out of the cell while this
    // reference lives, so a nested call finds none: this is the only reference.
    let net = unsafe { &mut *p };
    let errors_before = srv.stats.total_error_replies;
    net.serve_busy(srv);
    LENT.with(|c| c.set(p));
    let errors = srv.stats.total_error_replies - errors_before;
    if let Some(run) = srv.script_run.as_mut() {
        run.errors_of_others += errors;
    }
}

/// Ends the process at once for `SHUTDOWN NOSAVE` sent while a script keeps the server
/// busy: the script cannot be unwound, so what `main` does after the event loop returns
/// (the pid file, the Unix socket) is done here.
pub fn exit_now(srv: &mut ServerState) -> ! {
    if !srv.config.pidfile.is_empty() {
        let _ = std::fs::remove_file(&srv.config.pidfile);
    }
    let listeners =
        std::mem::replace(&mut srv.listeners, Box::new(crate::server::state::NotListening));
    drop(listeners);
    tracing::warn!("ferrokey is now ready to exit, bye bye...");
    std::process::exit(0)
}
