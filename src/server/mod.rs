//! The server's core state, without I/O: the client table, pub/sub, WATCH, client tracking,
//! blocked clients, the key-event hub, eviction, the slow log and the latency monitor. Nothing here knows about
//! mio, sockets or threads (that is `runtime/`).
//!
//! It must not contain command logic (that is `commands/`) nor storage logic (`keyspace/`).

pub mod blocking;
pub mod calls;
pub mod client;
pub mod commandlog;
pub mod events;
pub mod evict;
pub mod latency;
pub mod log;
pub mod multi;
pub mod obuf;
pub mod propagate;
pub mod pubsub;
pub mod redact;
pub mod script_run;
pub mod state;
pub mod tracking;
pub mod unblock;
