//! The command specification, below everything that runs commands: the table's shape
//! ([`table`]: flags, ACL categories, key specs, key extraction) and the error replies
//! ([`error`]: every error a command can answer, with Valkey's exact text), and the argument
//! lists of COMMAND DOCS ([`docs`]). The table's entries and their handlers are in `commands`.

pub mod docs;
pub mod error;
pub mod keys;
pub mod table;

pub use error::{CmdError, CmdResult};
