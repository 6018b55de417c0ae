//! set commands (issue 6, in progress).

use crate::commands::Command;

pub static COMMANDS: &[Command] = &[];
