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
//! - [`util`]: small helpers that use nothing of the crate: the wall clock, the seeded generator,
//!   `sdssplitargs` / `sdscatrepr` quoting, integer formatting, `strerror`.
//! - [`table`]: the generic cache-line hashtable (the keyspace's, and large hashes', sets'
//!   and sorted sets'); knows nothing of what it holds.
//! - [`server`]: the mio event loop, listeners, connections, the client table, dispatch,
//!   eviction (`evict`) and the time events; blocked clients (`blocking`, `unblock`) and the key-event hub that
//!   feeds WATCH, client tracking and keyspace notifications (`events`); the pub/sub
//!   registry and message delivery (`pubsub`). The only module that knows about mio.
//! - [`commands`]: the declarative command table and the handlers, one file (or directory)
//!   per family: strings, keyspace, hashes, lists, sets, sorted sets, SORT, connection,
//!   pub/sub, server, CLIENT, CONFIG, COMMAND, INFO.
//! - [`keyspace`]: databases, entries, expiry, on [`table`]. No connections, no RESP.
//! - [`types`]: value types and their rules: strings, the compact encodings in Valkey's byte
//!   formats (`listpack`, `intset`), and the aggregates (`hash`, `list`, `set`, `zset`, held
//!   by the keyspace through `agg`). No I/O, no RESP.
//! - [`memory`]: the counting global allocator and allocator statistics.
//! - [`persist`]: the RDB format's building blocks (CRC-64, LZF, length and string
//!   encodings); saving and loading land with issue 8.
//! - [`io_threads`]: the I/O thread pool (generic jobs; the server defines read and write).

pub mod commands;
pub mod config;
pub mod io_threads;
pub mod keyspace;
pub mod memory;
pub mod persist;
pub mod resp;
pub mod server;
pub mod table;
pub mod types;
pub mod util;
