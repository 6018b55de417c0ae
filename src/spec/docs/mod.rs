//! The argument lists that COMMAND DOCS prints (`arguments`: names, types, tokens, flags,
//! nested `oneof`/`block` groups), kept out of the command table's entries in a text file of
//! our own notation, `arguments.txt`, parsed into [`Arg`] trees when COMMAND DOCS asks for them
//! ([`ArgumentLists`]). Nothing here is on the request path, and the trees are dropped once
//! the reply is written: the text itself is static data, so the lists cost no heap between
//! COMMAND DOCS calls. This module owns only the argument
//! descriptions; the rest of a command's documentation (summary, since, history...) stays in
//! its table entry, and the reply is written by the command layer.
//!
//! # The notation
//!
//! One record per command or subcommand (full name, `set` or `config|get`), in any order,
//! for every command Valkey 9.1 has, so that a command prints its arguments as soon as it is
//! in ferrokey's table. A record is the name, then the arguments separated by whitespace. A
//! line that starts with whitespace continues the record above it (a record may be wrapped at
//! any whitespace, or after a `|`); a line that starts with `#` is a comment. A command
//! without arguments (`lastsave`, or a container such as `config`) is its bare name.
//!
//! ```text
//! set key:key#0 value:string [condition(NX@2.6.12|XX@2.6.12|
//!     IFEQ/comparison-value:string"Sets the key's value only if ..."@8.1.0)] [GET@6.2.0] ...
//! ```
//!
//! An argument is one of:
//!
//! | form                  | meaning                                                          |
//! |-----------------------|------------------------------------------------------------------|
//! | `name:type`           | a value; type is `key`, `string`, `integer`, `double`, `pattern` or `unix-time` |
//! | `TOKEN`               | a `pure-token` named by its token in lower case (`NX` is `nx`)   |
//! | `name=TOKEN`          | a `pure-token` with another name (`change=CH`)                   |
//! | `name(a b c)`         | a `block`: its arguments, in order                               |
//! | `name(a\|b\|c)`       | a `oneof`: its alternatives (a group of one is a block)          |
//! | `TOKEN/` before a value or group | the token that introduces it (`EX/seconds:integer`, `LIMIT/limit(offset:integer count:integer)`) |
//!
//! A token is an upper-case word (`A-Z`, digits, `-`, `_`) or any text in single quotes
//! (`equal='='`, `empty-string=''`); a name is a lower-case word. After the form come, in any
//! order, its attributes:
//!
//! | attribute      | field                                                              |
//! |----------------|--------------------------------------------------------------------|
//! | `#N`           | `key_spec_index` N                                                 |
//! | `~'text'`      | `display_text`, when it is not the name (values and tokens only: groups have none) |
//! | `"text"`       | `summary`                                                          |
//! | `@version`     | `since`                                                            |
//! | `!version`     | `deprecated_since`                                                 |
//! | `...`          | flag `multiple`; `...+`: `multiple` and `multiple_token` (the token repeats with each value) |
//!
//! and square brackets around the whole (`[GET@6.2.0]`) make it `optional`. A value or pure
//! token has a `display_text`, its name unless `~` gives another. Quoted text takes `\\` and
//! `\'` (or `\"`) escapes. The parser is in `parse.rs`. This module's tests parse the whole
//! text (one record for each of the 399 names); `tests/command_table.rs` compares every
//! record with the oracle's COMMAND DOCS, and the lint in `commands/command/lint.rs` checks
//! that each command of the table has its record and that its `key_spec_index`es exist.

mod parse;

use std::borrow::Cow;
use std::collections::HashMap;

pub use parse::{parse_records, parse_records_where, ParseError};

/// The text of every argument list.
const ARGUMENTS: &str = include_str!("arguments.txt");

/// What kind of argument, with the name COMMAND DOCS prints as its `type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgType {
    Key,
    String,
    Integer,
    Double,
    Pattern,
    UnixTime,
    PureToken,
    Oneof,
    Block,
}

impl ArgType {
    /// The value types, by the name the notation and COMMAND DOCS give them.
    const VALUES: &'static [(ArgType, &'static str)] = &[
        (ArgType::Key, "key"),
        (ArgType::String, "string"),
        (ArgType::Integer, "integer"),
        (ArgType::Double, "double"),
        (ArgType::Pattern, "pattern"),
        (ArgType::UnixTime, "unix-time"),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ArgType::PureToken => "pure-token",
            ArgType::Oneof => "oneof",
            ArgType::Block => "block",
            value => ArgType::VALUES.iter().find(|(t, _)| *t == value).map_or("", |(_, n)| n),
        }
    }

    /// A value type by name (`key`, `unix-time`...); None for anything else.
    fn value_type(name: &str) -> Option<ArgType> {
        ArgType::VALUES.iter().find(|(_, n)| *n == name).map(|(t, _)| *t)
    }

    /// Whether the argument holds other arguments.
    pub fn is_group(self) -> bool {
        matches!(self, ArgType::Oneof | ArgType::Block)
    }
}

/// Argument flags, as COMMAND DOCS prints them.
pub mod arg_flag {
    pub const OPTIONAL: u8 = 1 << 0;
    pub const MULTIPLE: u8 = 1 << 1;
    pub const MULTIPLE_TOKEN: u8 = 1 << 2;

    /// Names in the order Valkey prints them.
    pub const NAMES: &[(u8, &str)] =
        &[(OPTIONAL, "optional"), (MULTIPLE, "multiple"), (MULTIPLE_TOKEN, "multiple_token")];
}

/// One argument of a command, or of a group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    pub name: Cow<'static, str>,
    pub kind: ArgType,
    /// None for a group (Valkey prints no `display_text` for one).
    pub display_text: Option<Cow<'static, str>>,
    pub key_spec_index: Option<u32>,
    pub token: Option<Cow<'static, str>>,
    pub summary: Option<Cow<'static, str>>,
    pub since: Option<&'static str>,
    pub deprecated_since: Option<&'static str>,
    /// [`arg_flag`] bits.
    pub flags: u8,
    /// The arguments of a group; empty otherwise.
    pub children: Vec<Arg>,
}

/// Argument lists parsed from the text, for one COMMAND DOCS reply: built when the reply is
/// written and dropped after it, so that the trees hold memory (and count in `used_memory`,
/// which Valkey's static tables do not) only while a reply is being written. Parsing every
/// record takes well under a millisecond.
#[derive(Debug, Default)]
pub struct ArgumentLists {
    by_name: HashMap<&'static str, Vec<Arg>>,
}

impl ArgumentLists {
    /// The lists of the records whose full name `wanted` accepts.
    pub fn parse(wanted: impl Fn(&str) -> bool) -> ArgumentLists {
        match parse_records_where(ARGUMENTS, wanted) {
            Ok(records) => ArgumentLists { by_name: records.into_iter().collect() },
            // The text is checked by this module's tests: a bad record is a programmer error.
            Err(e) => panic!("arguments.txt: {e}"),
        }
    }

    /// Every list.
    pub fn all() -> ArgumentLists {
        ArgumentLists::parse(|_| true)
    }

    /// The argument list of the command or subcommand `full_name` (lower case,
    /// `config|get`); None for a name that has no record or was not parsed.
    pub fn get(&self, full_name: &str) -> Option<&[Arg]> {
        self.by_name.get(full_name).map(Vec::as_slice)
    }
}

/// The argument list of one command or subcommand, parsed from its record alone.
pub fn arguments(full_name: &str) -> Option<Vec<Arg>> {
    ArgumentLists::parse(|name| name == full_name).by_name.remove(full_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_text_parses_into_one_record_per_name() {
        let records = parse_records(ARGUMENTS).unwrap();
        let mut names: Vec<&str> = records.iter().map(|(n, _)| *n).collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "a name has two records");
        // Valkey 9.1 has 399 commands and subcommands.
        assert_eq!(count, 399);
    }

    #[test]
    fn lookup_finds_commands_and_subcommands() {
        let set = arguments("set").unwrap();
        let set = &set[..];
        assert_eq!(set[0].name, "key");
        assert_eq!(set[0].kind, ArgType::Key);
        assert_eq!(set[0].key_spec_index, Some(0));
        let expiration = set.iter().find(|a| a.name == "expiration").unwrap();
        assert_eq!(expiration.kind, ArgType::Oneof);
        assert_eq!(expiration.flags, arg_flag::OPTIONAL);
        assert_eq!(expiration.children[0].token.as_deref(), Some("EX"));
        assert_eq!(arguments("config|get").unwrap()[0].flags, arg_flag::MULTIPLE);
        assert_eq!(arguments("lastsave"), Some(Vec::new()));
        assert_eq!(arguments("nosuch"), None);
        let lists = ArgumentLists::parse(|n| n.starts_with("config|"));
        assert!(lists.get("config|set").is_some() && lists.get("config|get").is_some());
        assert_eq!(lists.get("set"), None);
        assert_eq!(ArgumentLists::all().by_name.len(), 399);
    }

    #[test]
    fn type_names() {
        assert_eq!(ArgType::UnixTime.as_str(), "unix-time");
        assert_eq!(ArgType::PureToken.as_str(), "pure-token");
        assert_eq!(ArgType::value_type("double"), Some(ArgType::Double));
        assert_eq!(ArgType::value_type("oneof"), None);
        assert!(ArgType::Block.is_group() && !ArgType::Key.is_group());
    }
}
