//! Bitmap commands on string values (issue 19): SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP,
//! BITFIELD and BITFIELD_RO.

use crate::commands::table::Command;

/// Filled by issue 19.
pub static COMMANDS: &[Command] = &[];
