//! Geospatial commands on sorted sets (issue 19): GEOADD, GEODIST, GEOHASH, GEOPOS,
//! GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and their _RO forms.

use crate::commands::table::Command;

/// Filled by issue 19.
pub static COMMANDS: &[Command] = &[];
