//! Value types and their rules, independent of RESP and connections.

pub mod agg;
pub mod bitmap;
pub mod geo;
pub mod hash;
pub mod hll;
pub mod intset;
pub mod list;
pub mod listpack;
pub mod set;
pub mod stream;
pub mod string;
pub mod zset;
