//! The keyspace: databases of keys with their values and expire times.
//!
//! A library with no knowledge of connections, clients or RESP; tests drive it directly.
//!
//! - the generic cache-line bucket hashtable lives in `crate::table` (design essay there).
//! - `entry`: the one-allocation key entry (byte layout and budget there); `heap_str`: the
//!   growable out-of-line buffer of a long string value (growth rule there).
//! - `expire_index`: the entries that have a TTL, for active expiry's sampling.
//! - `keys`: table plus expire index, kept in step.
//! - `field_expiry`: the queue of hashes with volatile fields, for active field expiry.
//! - `db`: the API commands use (lazy expiry, access clocks, statistics).
//! - `clock`: LRU/LFU access clocks. `value`: value and object views. `lazyfree`: freeing
//!   large values and whole databases off the main thread.

pub mod clock;
pub mod db;
pub mod entry;
pub mod expire_index;
pub mod field_expiry;
pub mod heap_str;
pub mod keys;
pub mod lazyfree;
pub mod value;
