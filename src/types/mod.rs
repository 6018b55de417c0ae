//! Value types and their rules, independent of RESP and connections.

pub mod agg;
pub mod hash;
pub mod list;
pub mod set;
pub mod string;
pub mod zset;
