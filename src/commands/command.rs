//! (family being written)
use crate::commands::table::Command;

pub static COMMANDS: &[Command] = &[];
