//! # ferrokey
//!
//! A Valkey-compatible in-memory key-value server. One thread owns the keyspace and executes
//! every command; optional I/O threads read, parse and write.
//!
//! # Layers
//!
//! Each module uses only modules listed above it here, never one below; the import graph
//! has no cycle (`../shared/tools/modgraph.py src --cycles` checks it). From the bottom:
//!
//! - [`util`]: small helpers that use nothing of the crate (clock, PRNG, quoting, integer
//!   formatting, `strerror`, blocking outgoing connections with timeouts, the latency
//!   histogram, ASCII sparklines).
//! - [`resp`]: the RESP2/RESP3 and inline request parser, and the reply encoder (with
//!   referenced big values). Knows nothing of the keyspace or commands.
//! - [`memory`]: the counting global allocator and allocator statistics.
//! - [`metrics`]: the Prometheus endpoint's parts without server or socket: the snapshot
//!   of figures (plain numbers), its exposition as Prometheus or OpenMetrics text, the
//!   small HTTP/1.x request parser. Uses nothing of the crate.
//! - [`table`]: the generic cache-line hashtable (the keyspace's, and large hashes', sets'
//!   and sorted sets'); knows nothing of what it holds. A `probe` finds a key once for a
//!   read-modify-write.
//! - [`config`]: valkey.conf and `--option` parsing into a typed [`config::Config`]; the
//!   directive table behind CONFIG GET / SET / REWRITE.
//! - [`types`]: value types and their rules: strings, the compact encodings in Valkey's byte
//!   formats (`listpack`, `intset`), and the aggregates (`hash`, `list`, `set`, `zset`, held
//!   by the keyspace through `agg`). No I/O, no RESP.
//! - [`keyspace`]: databases, entries (out-of-line strings shared with replies, copied on
//!   write), expiry, on [`table`]: one hash per key per command (the parser's, handed down
//!   as `HashedKeys`) and one probe per lookup or write. Each database counts and logs the
//!   changes commands report to it (`Db::changed`), in one event log with the keys it
//!   expires or evicts on its own. No connections, no RESP.
//! - [`spec`]: the command table's shape (flags, ACL categories, key specs, key extraction)
//!   and every error reply, with the handler as a type parameter, so that the layers below
//!   the handlers can read the table.
//! - [`acl`]: access control: users, their rules and selectors, the command catalog that
//!   numbers the table's entries for the permission bitmaps, the permission check, the ACL
//!   log and file. Knows commands by their table entries only.
//! - [`scripting`]: Lua 5.1 for EVAL scripts and FUNCTION libraries: the sandboxed
//!   interpreters, the script cache, the `server.*` API, the values between RESP and Lua, and
//!   Valkey's bundled libraries (`cjson`, `cmsgpack`, `bit`, `struct`). What a script asks of
//!   the server goes through a `Host` the runtime provides, so it knows nothing above it.
//! - [`server`]: the core state without I/O: databases, the client table (each client's
//!   reply stream and write progress, under generational tokens, with the outbox that
//!   fan-out writes into while the client runs a command), pub/sub, WATCH, client
//!   tracking, blocked clients, the effects of writes (`events`: the databases' event logs
//!   drained into every consequence after each command), the propagation feed of every
//!   write (`propagate`), eviction, statistics of calls (with each command's latency
//!   histogram), the latency monitor, output buffer limits. No mio, no
//!   sockets, no handlers.
//! - [`persist`]: RDB and AOF, working on a `Store` (their own state, the keyspace, the
//!   settings, the save counters and the feed) and nothing else of the server; the AOF is a
//!   consumer of the feed; AOF commands run at start-up through a `Replay` the command
//!   layer provides.
//! - [`commands`]: the table's entries and their handlers, one file (or directory) per
//!   family: strings, keyspace, hashes, lists, sets, sorted sets, SORT, connection, pub/sub,
//!   server, CLIENT, CONFIG, COMMAND, INFO; the AOF replayer. A data command's handler gets
//!   a narrow `Ctx` (the keyspace, the settings, its client, its reply); a server-wide
//!   command's a `ServerCtx` (the server state, named).
//! - [`io_threads`]: the I/O thread pool (generic jobs; the runtime defines read and write).
//! - [`runtime`]: the top: the mio event loop, listeners, connections (and the parsed
//!   commands waiting), I/O-thread jobs, the batch with its prefetch, dispatch (with EXEC's
//!   queue and the re-run of served blocked clients), the time events, signals, logging.
//!   The only module that knows about mio.

pub mod acl;
pub mod commands;
pub mod config;
pub mod io_threads;
pub mod keyspace;
pub mod memory;
pub mod metrics;
pub mod persist;
pub mod replication;
pub mod resp;
pub mod runtime;
pub mod scripting;
pub mod server;
pub mod spec;
pub mod table;
pub mod types;
pub mod util;
