//! RESP: the request parser (RESP multibulk and inline, checked against the configured
//! limits before anything is allocated) and the reply encoder (RESP2 and RESP3).
//!
//! This module knows nothing of the keyspace, commands or sockets.

pub mod parse;
pub mod reply;
