//! SIGTERM and SIGINT: a graceful shutdown, as Valkey does. The handler only records the
//! signal; the time events see it and run the same shutdown as SHUTDOWN (final save per
//! the save points, AOF flushed and synced), and a failed save keeps the server running.

use std::sync::atomic::{AtomicI32, Ordering};

/// The last shutdown signal received and not yet handled (0: none).
static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    PENDING.store(sig, Ordering::Relaxed);
}

/// Installs the handlers (once, at start-up).
pub fn install() {
    let handler: extern "C" fn(libc::c_int) = on_signal;
    for sig in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: installing a handler that only stores to an atomic, which is
        // async-signal-safe; `sigaction` gets a zeroed, valid struct.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = handler as usize;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(sig, &act, std::ptr::null_mut());
        }
    }
}

/// The signal received since the last call, if any.
pub fn take() -> Option<&'static str> {
    match PENDING.swap(0, Ordering::Relaxed) {
        0 => None,
        libc::SIGINT => Some("SIGINT"),
        _ => Some("SIGTERM"),
    }
}
