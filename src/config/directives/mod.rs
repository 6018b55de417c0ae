//! The directive table: every directive Valkey 9.1 knows, once, split by area (one file
//! each, in valkey.conf's order within it). The config file, the command line, CONFIG GET,
//! CONFIG SET and CONFIG REWRITE all read this table through [`all`] and [`lookup`].
//!
//! Bounds, defaults and mutability are Valkey 9.1's, taken from its documentation and from
//! what a running Valkey 9.1 answers. The `default` column is the valkey.conf text; a unit
//! test checks that it parses to exactly `Config::default()`. Each row also says what
//! ferrokey does with the directive ([`Support`]): acts on it, refuses any value but the
//! default because the feature it turns on is missing, stores it for a missing feature, or
//! accepts it without effect.
//!
//! The settings added for Valkey 9.1 live in one struct per area ([`Network`], [`General`],
//! ...), a field of `Config` each, defined next to their rows; so do ferrokey's own
//! ([`Metrics`]: the Prometheus endpoint), which Valkey does not have.

mod cluster;
mod general;
mod memory;
mod metrics;
mod network;
mod persistence;
mod replication;
mod testing;
mod tls;

pub use cluster::Cluster;
pub use general::General;
pub use memory::Memory;
pub use metrics::Metrics;
pub use network::Network;
pub use persistence::Persistence;
pub use replication::Replication;
pub use testing::Testing;
pub use tls::Tls;

use super::kind::{Base, Directive, Feature, Kind, Mutability, Special, Support};
use super::Config;

use Mutability::{Immutable, Mutable, Protected};
use Support::{Gate, NoEffect, Tunes};

const INT_MAX: i64 = i32::MAX as i64;
const UINT_MAX: i64 = u32::MAX as i64;
const LONG_MAX: i64 = i64::MAX;
const MB: u64 = 1024 * 1024;
const KB: u64 = 1024;

const fn boolean(
    name: &'static str,
    mutability: Mutability,
    default: &'static str,
    get: fn(&Config) -> bool,
    set: fn(&mut Config, bool),
) -> Directive {
    Directive {
        name,
        aliases: &[],
        mutability,
        default,
        kind: Kind::Bool { get, set },
        support: Support::Acts,
    }
}

const fn int(
    name: &'static str,
    mutability: Mutability,
    min: i64,
    max: i64,
    default: &'static str,
    get: fn(&Config) -> i64,
    set: fn(&mut Config, i64),
) -> Directive {
    let kind = Kind::Int { min, max, base: Base::Decimal, get, set };
    Directive { name, aliases: &[], mutability, default, kind, support: Support::Acts }
}

const fn memory(
    name: &'static str,
    min: u64,
    max: u64,
    default: &'static str,
    get: fn(&Config) -> u64,
    set: fn(&mut Config, u64),
) -> Directive {
    let kind = Kind::Memory { min, max, get, set };
    Directive { name, aliases: &[], mutability: Mutable, default, kind, support: Support::Acts }
}

const fn choice(
    name: &'static str,
    mutability: Mutability,
    names: &'static [&'static str],
    default: &'static str,
    get: fn(&Config) -> usize,
    set: fn(&mut Config, usize),
) -> Directive {
    Directive {
        name,
        aliases: &[],
        mutability,
        default,
        kind: Kind::Enum { names, get, set },
        support: Support::Acts,
    }
}

const fn string(
    name: &'static str,
    mutability: Mutability,
    default: &'static str,
    check: fn(&str) -> Result<(), &'static str>,
    get: fn(&Config) -> &str,
    set: fn(&mut Config, String),
) -> Directive {
    Directive {
        name,
        aliases: &[],
        mutability,
        default,
        kind: Kind::Str { check, get, set },
        support: Support::Acts,
    }
}

const fn special(
    name: &'static str,
    mutability: Mutability,
    default: &'static str,
    special: &'static Special,
) -> Directive {
    Directive {
        name,
        aliases: &[],
        mutability,
        default,
        kind: Kind::Special(special),
        support: Support::Acts,
    }
}

/// Whether Valkey 9.1 keeps directive `name` out of `CONFIG GET` with a pattern (it is
/// listed only when asked for by its exact name).
pub fn is_hidden(name: &str) -> bool {
    network::HIDDEN.contains(&name) || testing::HIDDEN.contains(&name)
}

/// The table, area by area.
static AREAS: &[&[Directive]] = &[
    network::ROWS,
    general::ROWS,
    persistence::ROWS,
    memory::ROWS,
    replication::ROWS,
    tls::ROWS,
    cluster::ROWS,
    testing::ROWS,
    metrics::ROWS,
];

/// Every directive, area by area.
pub fn all() -> impl Iterator<Item = &'static Directive> {
    AREAS.iter().flat_map(|rows| rows.iter())
}

/// Finds a directive by name or alias, case-insensitively.
pub fn lookup(name: &str) -> Option<&'static Directive> {
    all().find(|d| d.is_named(name))
}

/// Directives Valkey 9.1 reads from a config file but that are no settings (CONFIG GET does
/// not list them), with what ferrokey does with them: `Ok(())` to accept the line as it is,
/// or the reason it is refused. `None` for any other name.
pub(crate) fn file_only(name: &str, args: &[String]) -> Option<Result<(), String>> {
    let us = env!("CARGO_PKG_NAME");
    Some(match (name, args.len()) {
        // Dropped by Valkey, still accepted and ignored there, as here.
        ("list-max-ziplist-entries" | "list-max-ziplist-value" | "lua-replicate-commands", 1) => {
            Ok(())
        }
        ("io-threads-do-reads", 1) => Ok(()),
        ("user", n) if n >= 1 => Ok(()),
        ("loadmodule", _) => Err(format!("{us} does not support modules yet")),
        ("rename-command", 2) => Ok(()),
        ("sentinel", _) => Err(format!("{us} does not support sentinel mode yet")),
        _ => return None,
    })
}

/// Whether `name` is a directive that only the file parser knows (it is not in the table):
/// `include` and the names of [`file_only`]. CONFIG REWRITE keeps their lines.
pub(crate) fn is_file_only(name: &str) -> bool {
    name.eq_ignore_ascii_case("include")
        || file_only(&name.to_ascii_lowercase(), &[String::new()]).is_some()
}
