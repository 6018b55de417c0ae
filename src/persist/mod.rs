//! Persistence: the RDB file format (issue 8, in progress).
//!
//! So far this holds the format's building blocks, with no I/O and no server state: the
//! CRC-64 that closes every RDB file and DUMP payload, LZF compression of strings, and the
//! length and string encodings. SAVE/BGSAVE, loading and the AOF build on them.

pub mod aof;
pub mod bgsave;
pub mod deny;
pub mod fork;
pub mod rdb;
pub mod save;
