//! Streams (issue 18): under construction. Entry ids for now.

pub mod id;
