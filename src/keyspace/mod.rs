//! The keyspace: databases of keys with their values and expire times.
//!
//! A library with no knowledge of connections, clients or RESP; tests drive it directly.

pub mod db;
pub mod lazyfree;
pub mod store;
