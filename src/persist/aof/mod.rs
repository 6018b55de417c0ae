//! The append-only file (AOF), in Valkey's multi-part layout: a directory (`appenddirname`)
//! holding a manifest, one base file (an RDB snapshot or a command log) and the incremental
//! command logs written since that base.
//!
//! Work in progress (issue 8): the state lives here; `manifest`, `reader` and `load` hold the
//! file formats and the start-up load.

pub mod load;
pub mod manifest;
pub mod reader;

/// The AOF's run-time state (`ServerState::aof`).
#[derive(Debug, Default)]
pub struct Aof {
    /// The last write or fsync error of the AOF, while it lasts: writes are refused with
    /// `-MISCONF Errors writing to the AOF file: <error>` meanwhile.
    pub write_error: Option<String>,
    /// The pid of the AOF rewrite child, while one runs.
    pub rewrite_child: Option<libc::pid_t>,
}

use crate::server::state::ServerState;

/// Called by the event loop right before it writes replies to clients: commands' effects
/// reach the AOF (and, under `appendfsync always`, the disk) before they are acknowledged.
pub fn before_replies(srv: &mut ServerState) {
    let _ = srv;
}

/// Called once when the server shuts down: the last writes reach the file and the disk.
pub fn on_shutdown(srv: &mut ServerState) {
    let _ = srv;
}
