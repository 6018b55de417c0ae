//! The machinery behind the directive table: what a directive is ([`Directive`]), the kinds
//! of value it can hold ([`Kind`]), and the generic parse / apply / show / rewrite steps that
//! every kind shares, with Valkey's exact error texts (config.c).
//!
//! Parsing never touches the `Config`: it turns argument strings into a [`Value`], so that
//! CONFIG SET can validate every pair before it changes anything. Applying a `Value` can only
//! fail for directives with side effects (`dir` changes the working directory).

use std::path::PathBuf;

use super::units;
use super::values::{KeyspaceEvents, MaxmemoryClients, ObufClass, ObufLimit, ShutdownFlags};
use super::Config;
use crate::util::quote::repr;

/// Whether CONFIG SET may change a directive while the server runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutability {
    Mutable,
    /// Settable by CONFIG SET only where `enable-protected-configs` allows it: directives
    /// that decide where the server writes files.
    Protected,
    /// Only settable in the config file or on the command line.
    Immutable,
}

/// How many arguments a directive takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    /// Exactly one argument.
    Single,
    /// Any number (`save`, `bind`, `client-output-buffer-limit`). A single argument is split
    /// again, so `save "900 1 300 10"` equals `save 900 1 300 10`.
    Multi,
}

/// How an integer directive is written and read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    Decimal,
    /// `unixsocketperm`: parsed and shown in octal, without a leading zero.
    Octal,
}

/// A parsed, validated directive value, not yet applied.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Bool(bool),
    Int(i64),
    Memory(u64),
    Enum(usize),
    Str(String),
    Save(Vec<(u64, u64)>),
    Bind(Vec<String>),
    Obuf(Vec<(ObufClass, ObufLimit)>),
    Events(KeyspaceEvents),
    Dir(PathBuf),
    MemOrPercent(MaxmemoryClients),
    Words(Vec<String>),
    Oom([i32; 3]),
    Shutdown(ShutdownFlags),
    Percentiles(Vec<f64>),
}

/// A directive whose parsing, display and rewriting do not fit a generic kind.
pub(crate) struct Special {
    pub arity: Arity,
    pub parse: fn(&[String]) -> Result<Value, String>,
    pub apply: fn(&mut Config, Value) -> Result<(), String>,
    /// The CONFIG GET text.
    pub show: fn(&Config) -> String,
    /// The argument text of each line CONFIG REWRITE writes (one line per element).
    pub rewrite: fn(&Config) -> Vec<String>,
}

/// The kind of value a directive holds, with its accessors into `Config`.
pub(crate) enum Kind {
    Bool {
        get: fn(&Config) -> bool,
        set: fn(&mut Config, bool),
    },
    Int {
        min: i64,
        max: i64,
        base: Base,
        get: fn(&Config) -> i64,
        set: fn(&mut Config, i64),
    },
    /// Bytes, written with optional units (`k`, `kb`, `m`, `mb`, `g`, `gb`).
    Memory {
        min: u64,
        max: u64,
        get: fn(&Config) -> u64,
        set: fn(&mut Config, u64),
    },
    /// One of `names` (case-insensitive); the index is the variant.
    Enum {
        names: &'static [&'static str],
        get: fn(&Config) -> usize,
        set: fn(&mut Config, usize),
    },
    Str {
        check: fn(&str) -> Result<(), &'static str>,
        get: fn(&Config) -> &str,
        set: fn(&mut Config, String),
    },
    Special(&'static Special),
}

/// A feature of Valkey that ferrokey does not have yet. Its name ends the error text that
/// refuses a directive turning it on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    Replication,
    Tls,
    Cluster,
    Rdma,
    Mptcp,
    Syslog,
    UnixSocketGroup,
    AofTimestamps,
    HyperLogLog,
    Streams,
}

impl Feature {
    /// What the feature is, for messages and the README.
    pub fn name(self) -> &'static str {
        match self {
            Feature::Replication => {
                "dual-channel replication and the Sentinel and shutdown parts of replication"
            }
            Feature::Tls => "TLS",
            Feature::Cluster => "cluster mode",
            Feature::Rdma => "RDMA",
            Feature::Mptcp => "MPTCP",
            Feature::Syslog => "logging to syslog",
            Feature::UnixSocketGroup => "setting the unix socket's group",
            Feature::AofTimestamps => "AOF timestamp annotations",
            Feature::HyperLogLog => "HyperLogLog",
            Feature::Streams => "streams",
        }
    }
}

/// What ferrokey does with a directive it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// It acts as in Valkey.
    Acts,
    /// It turns on a feature ferrokey lacks: only its default (off) value is accepted; any
    /// other is refused with an error naming the feature.
    Gate(Feature),
    /// It tunes a feature ferrokey lacks: validated and stored (CONFIG GET shows it), so
    /// that it acts once the feature lands.
    Tunes(Feature),
    /// It means nothing in ferrokey's design (the reason says why): validated and stored,
    /// and a non-default value is logged once at start-up and on CONFIG SET.
    NoEffect(&'static str),
}

/// One row of the directive table.
pub struct Directive {
    /// Canonical name, lowercase.
    pub name: &'static str,
    /// Older names that are accepted everywhere and map to this directive.
    pub aliases: &'static [&'static str],
    pub mutability: Mutability,
    /// The default as it would be written in valkey.conf.
    pub default: &'static str,
    pub(crate) kind: Kind,
    pub support: Support,
}

/// Accepts any string.
pub(crate) fn any_string(_: &str) -> Result<(), &'static str> {
    Ok(())
}

impl Directive {
    /// Adds aliases to a table row.
    pub(crate) const fn aliases(mut self, aliases: &'static [&'static str]) -> Directive {
        self.aliases = aliases;
        self
    }

    /// Sets what ferrokey does with a table row.
    pub(crate) const fn support(mut self, support: Support) -> Directive {
        self.support = support;
        self
    }

    /// Whether `value` is this directive's default.
    pub(crate) fn is_default(&self, value: &Value) -> bool {
        let default = super::file::default_args(self);
        self.parse_value(&default).is_ok_and(|d| d == *value)
    }

    /// Whether `config` holds a value other than this directive's default.
    pub fn differs_from_default(&self, config: &Config) -> bool {
        self.show(config) != self.show(&Config::default())
    }

    /// Whether `name` (any case) is this directive's name or one of its aliases.
    pub fn is_named(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
            || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    }

    /// The table's spelling of `name` (any case): the canonical name or one of the aliases.
    /// `name` must be one of them.
    pub(crate) fn spelling(&self, name: &str) -> &'static str {
        let names = std::iter::once(&self.name).chain(self.aliases);
        let found = names.into_iter().find(|n| n.eq_ignore_ascii_case(name));
        found.copied().unwrap_or_else(|| panic!("{name:?} does not name {}", self.name))
    }

    pub fn arity(&self) -> Arity {
        match &self.kind {
            Kind::Special(special) => special.arity,
            _ => Arity::Single,
        }
    }

    /// Parses and validates arguments; `args` has exactly one element for `Arity::Single`.
    /// A directive that turns on a missing feature accepts only its default.
    pub(crate) fn parse(&self, args: &[String]) -> Result<Value, String> {
        let value = self.parse_value(args)?;
        match self.support {
            Support::Gate(feature) if !self.is_default(&value) => Err(format!(
                "{} does not support {} yet: {} accepts only its default, {}",
                env!("CARGO_PKG_NAME"),
                feature.name(),
                self.name,
                self.default
            )),
            _ => Ok(value),
        }
    }

    fn parse_value(&self, args: &[String]) -> Result<Value, String> {
        let first = || args.first().map(String::as_str).unwrap_or("");
        match &self.kind {
            Kind::Bool { .. } => parse_bool(first()).map(Value::Bool),
            Kind::Int { min, max, base, .. } => parse_int(first(), *min, *max, *base),
            Kind::Memory { min, max, .. } => parse_memory_in(first(), *min, *max),
            Kind::Enum { names, .. } => parse_enum(first(), names),
            Kind::Str { check, .. } => {
                check(first()).map_err(str::to_string)?;
                Ok(Value::Str(first().to_string()))
            }
            Kind::Special(special) => (special.parse)(args),
        }
    }

    /// Stores a value produced by [`Directive::parse`] of this same directive.
    pub(crate) fn apply(&self, config: &mut Config, value: Value) -> Result<(), String> {
        match (&self.kind, value) {
            (Kind::Bool { set, .. }, Value::Bool(v)) => set(config, v),
            (Kind::Int { set, .. }, Value::Int(v)) => set(config, v),
            (Kind::Memory { set, .. }, Value::Memory(v)) => set(config, v),
            (Kind::Enum { set, .. }, Value::Enum(v)) => set(config, v),
            (Kind::Str { set, .. }, Value::Str(v)) => set(config, v),
            (Kind::Special(special), v) => return (special.apply)(config, v),
            (_, v) => unreachable!("{}: value {v:?} of another directive", self.name),
        }
        Ok(())
    }

    /// The value as CONFIG GET shows it.
    pub fn show(&self, config: &Config) -> String {
        match &self.kind {
            Kind::Bool { get, .. } => yes_no(get(config)).to_string(),
            Kind::Int { base: Base::Decimal, get, .. } => get(config).to_string(),
            Kind::Int { base: Base::Octal, get, .. } => format!("{:o}", get(config)),
            Kind::Memory { get, .. } => get(config).to_string(),
            Kind::Enum { names, get, .. } => names[get(config)].to_string(),
            Kind::Str { get, .. } => get(config).to_string(),
            Kind::Special(special) => (special.show)(config),
        }
    }

    /// The lines CONFIG REWRITE writes for this directive, name included.
    pub(crate) fn rewrite_lines(&self, config: &Config) -> Vec<String> {
        let args = match &self.kind {
            Kind::Memory { get, .. } => vec![units::format_memory(get(config))],
            Kind::Str { get, .. } => vec![repr(get(config).as_bytes())],
            Kind::Special(special) => (special.rewrite)(config),
            _ => vec![self.show(config)],
        };
        args.into_iter().map(|a| format!("{} {a}", self.name)).collect()
    }
}

pub(crate) fn yes_no(v: bool) -> &'static str {
    if v {
        "yes"
    } else {
        "no"
    }
}

fn parse_bool(arg: &str) -> Result<bool, String> {
    if arg.eq_ignore_ascii_case("yes") {
        Ok(true)
    } else if arg.eq_ignore_ascii_case("no") {
        Ok(false)
    } else {
        Err("argument must be 'yes' or 'no'".to_string())
    }
}

fn parse_int(arg: &str, min: i64, max: i64, base: Base) -> Result<Value, String> {
    let parsed = match base {
        Base::Decimal => units::parse_strict_i64(arg),
        Base::Octal => units::parse_octal(arg),
    };
    let v = parsed.ok_or_else(|| match base {
        Base::Decimal => "argument couldn't be parsed into an integer".to_string(),
        Base::Octal => "argument couldn't be parsed as an octal number".to_string(),
    })?;
    if (min..=max).contains(&v) {
        return Ok(Value::Int(v));
    }
    Err(match base {
        Base::Decimal => format!("argument must be between {min} and {max} inclusive"),
        Base::Octal => format!("argument must be between {min:o} and {max:o} inclusive"),
    })
}

/// Parses a memory value and checks it against `min..=max`.
pub(crate) fn parse_memory_in(arg: &str, min: u64, max: u64) -> Result<Value, String> {
    let v = units::parse_memory(arg).ok_or("argument must be a memory value")?;
    if (min..=max).contains(&v) {
        Ok(Value::Memory(v))
    } else {
        Err(format!("argument must be between {min} and {max} inclusive"))
    }
}

fn parse_enum(arg: &str, names: &[&str]) -> Result<Value, String> {
    match names.iter().position(|n| n.eq_ignore_ascii_case(arg)) {
        Some(index) => Ok(Value::Enum(index)),
        None => Err(format!("argument(s) must be one of the following: {}", names.join(", "))),
    }
}
