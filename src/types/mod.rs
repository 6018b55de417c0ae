//! Value types and their rules, independent of RESP and connections.

pub mod string;
