//! Persistence: restarting without losing data, and moving data to and from Valkey/Redis.
//!
//! - `rdb`: the RDB format (values, whole files, DUMP payloads; CRC-64, LZF), no I/O policy.
//! - `save`: SAVE, loading at start-up, SHUTDOWN's save; `bgsave`: BGSAVE and save points;
//!   `fork`: the fork children both BGSAVE and the AOF rewrite run in.
//! - `aof`: the append-only file in Valkey's multi-part layout.
//! - `deny`: refusing writes while persistence is failing (MISCONF).

pub mod aof;
pub mod bgsave;
pub mod deny;
pub mod fork;
pub mod rdb;
pub mod save;
