//! Command errors: one enum, rendered to Valkey's exact error text in one place.
//!
//! Handlers return `Err(CmdError::...)`; dispatch writes the text and counts it in
//! errorstats under its code (the first word).

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CmdError {
    /// `-ERR syntax error`
    Syntax,
    WrongType,
    NotInteger,
    NotFloat,
    Overflow,
    /// `-ERR increment or decrement would overflow`
    IncrOverflow,
    /// `-ERR increment would produce NaN or Infinity`
    NanOrInfinity,
    NoSuchKey,
    /// `-ERR DB index is out of range`
    DbIndexOutOfRange,
    /// `-ERR invalid expire time in '<cmd>' command`
    InvalidExpire(String),
    /// `-ERR value is out of range, must be positive`
    OutOfRangePositive,
    /// `-ERR string exceeds maximum allowed size (proto-max-bulk-len)`
    StringTooLong,
    /// `-ERR wrong number of arguments for '<cmd>' command`
    WrongArity(String),
    /// `-ERR unknown subcommand '<sub>'. Try <CMD> HELP.`
    UnknownSubcommand { sub: String, cmd: String },
    /// `-NOAUTH Authentication required.`
    NoAuth,
    /// `-ERR Invalid command specified` (COMMAND GETKEYS of an unknown command)
    GetKeysUnknownCommand,
    /// `-ERR The command has no key arguments`
    GetKeysNoKeyArgs,
    /// `-ERR Invalid number of arguments specified for command`
    GetKeysWrongArity,
    /// `-ERR Invalid arguments specified for command`
    GetKeysInvalidArgs,
    /// `-ERR The server is running without a config file`
    NoConfigFile,
    /// Any other text, verbatim (must start with its code, e.g. `ERR ...`).
    Other(String),
}

impl CmdError {
    /// `ERR <text>`.
    pub fn err(text: impl Into<String>) -> CmdError {
        let t = text.into();
        CmdError::Other(format!("ERR {t}"))
    }

    /// The error code (first word) for errorstats.
    pub fn code(&self) -> String {
        let s = self.to_string();
        s.split(' ').next().unwrap_or("ERR").to_string()
    }
}

impl fmt::Display for CmdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CmdError::Syntax => f.write_str("ERR syntax error"),
            CmdError::WrongType => {
                f.write_str("WRONGTYPE Operation against a key holding the wrong kind of value")
            }
            CmdError::NotInteger => f.write_str("ERR value is not an integer or out of range"),
            CmdError::NotFloat => f.write_str("ERR value is not a valid float"),
            CmdError::Overflow => f.write_str("ERR value is out of range"),
            CmdError::IncrOverflow => f.write_str("ERR increment or decrement would overflow"),
            CmdError::NanOrInfinity => f.write_str("ERR increment would produce NaN or Infinity"),
            CmdError::NoSuchKey => f.write_str("ERR no such key"),
            CmdError::DbIndexOutOfRange => f.write_str("ERR DB index is out of range"),
            CmdError::InvalidExpire(cmd) => write!(f, "ERR invalid expire time in '{cmd}' command"),
            CmdError::OutOfRangePositive => f.write_str("ERR value is out of range, must be positive"),
            CmdError::StringTooLong => {
                f.write_str("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
            }
            CmdError::WrongArity(cmd) => {
                write!(f, "ERR wrong number of arguments for '{cmd}' command")
            }
            CmdError::UnknownSubcommand { sub, cmd } => {
                write!(f, "ERR unknown subcommand '{sub}'. Try {cmd} HELP.")
            }
            CmdError::NoAuth => f.write_str("NOAUTH Authentication required."),
            CmdError::GetKeysUnknownCommand => f.write_str("ERR Invalid command specified"),
            CmdError::GetKeysNoKeyArgs => f.write_str("ERR The command has no key arguments"),
            CmdError::GetKeysWrongArity => {
                f.write_str("ERR Invalid number of arguments specified for command")
            }
            CmdError::GetKeysInvalidArgs => f.write_str("ERR Invalid arguments specified for command"),
            CmdError::NoConfigFile => f.write_str("ERR The server is running without a config file"),
            CmdError::Other(s) => f.write_str(s),
        }
    }
}

pub type CmdResult = Result<(), CmdError>;
