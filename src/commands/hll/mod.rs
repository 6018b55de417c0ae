//! HyperLogLog commands (issue 19): PFADD, PFCOUNT, PFMERGE, PFSELFTEST and PFDEBUG.

use crate::commands::table::Command;

/// Filled by issue 19.
pub static COMMANDS: &[Command] = &[];
