//! # ferrokey
//!
//! A Valkey-compatible in-memory key-value server. One thread owns the keyspace and executes
//! every command; optional I/O threads read, parse and write.
//!
//! # Layout
//!
//! - [`config`]: valkey.conf and `--option` parsing into a typed [`config::Config`]; the
//!   directive table behind CONFIG GET / SET / REWRITE.
//! - [`resp`]: the RESP2/RESP3 and inline request parser, and the reply encoder. Knows
//!   nothing of the keyspace or commands.
//! - [`server`]: the mio event loop, listeners, connections, the client table, dispatch and
//!   the time events. The only module that knows about mio.
//! - [`commands`]: the declarative command table and the handlers, one file per family.
//! - [`keyspace`]: databases, the hashtable, entries, expiry. No connections, no RESP.
//! - [`types`]: value types and their rules (strings now). No I/O, no RESP.
//! - [`memory`]: the counting global allocator and allocator statistics.
//! - [`io_threads`]: the I/O thread pool (generic jobs; the server defines read and write).

pub mod commands;
pub mod config;
pub mod io_threads;
pub mod keyspace;
pub mod memory;
pub mod resp;
pub mod server;
pub mod types;
