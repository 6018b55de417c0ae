//! The parser of the argument notation described in the parent module: records split out of
//! the text, then each record's arguments read by recursive descent, one character of
//! lookahead. Names, tokens and versions borrow from the text; only a lower-cased token name
//! or quoted text with escapes is copied. It reports the first error with its record's name
//! and byte offset and never panics on bad input.

use std::borrow::Cow;
use std::fmt;

use super::{arg_flag, Arg, ArgType};

/// Where and why a record does not parse.
#[derive(Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The record's name (its first word).
    pub record: String,
    /// The byte offset in the record's text.
    pub offset: usize,
    pub message: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "record {:?}, byte {}: {}", self.record, self.offset, self.message)
    }
}

/// Every record of `text`: (full name, arguments), in the order written.
pub fn parse_records(text: &'static str) -> Result<Vec<(&'static str, Vec<Arg>)>, ParseError> {
    parse_records_where(text, |_| true)
}

/// The records of `text` whose full name `wanted` accepts (the others are only split out,
/// not parsed).
pub fn parse_records_where(
    text: &'static str,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<(&'static str, Vec<Arg>)>, ParseError> {
    let name = |record: &'static str| record.split(char::is_whitespace).next().unwrap_or("");
    split_records(text).filter(|r| wanted(name(r))).map(parse_record).collect()
}

/// The text of each record: a line that starts with neither whitespace nor `#`, with the
/// lines after it that start with whitespace and are not blank. Comments and blank lines
/// between records are skipped; a continuation line with no record above it becomes a
/// record of its own, which then fails to parse.
fn split_records(text: &'static str) -> impl Iterator<Item = &'static str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        while !rest.is_empty() {
            let line = &rest[..line_end_at(rest, 0)];
            if !line.starts_with('#') && !line.trim().is_empty() {
                break;
            }
            rest = &rest[line.len()..];
        }
        if rest.is_empty() {
            return None;
        }
        let mut end = line_end_at(rest, 0);
        while rest[end..].starts_with([' ', '\t'])
            && !rest[end..line_end_at(rest, end)].trim().is_empty()
        {
            end = line_end_at(rest, end);
        }
        let (record, after) = rest.split_at(end);
        rest = after;
        Some(record)
    })
}

/// The offset just past the line that starts at `at`.
fn line_end_at(s: &str, at: usize) -> usize {
    s[at..].find('\n').map_or(s.len(), |i| at + i + 1)
}

fn parse_record(record: &'static str) -> Result<(&'static str, Vec<Arg>), ParseError> {
    let mut p = Parser { s: record, pos: 0 };
    let name_len = record.find(char::is_whitespace).unwrap_or(record.len());
    if record.starts_with(char::is_whitespace) || name_len == 0 {
        return Err(p.error("a record must start with its command name"));
    }
    p.pos = name_len;
    let (args, kind) = p.group(None)?;
    if kind == ArgType::Oneof {
        return Err(p.error("`|` between top-level arguments"));
    }
    Ok((&record[..name_len], args))
}

struct Parser {
    s: &'static str,
    pos: usize,
}

type Parsed<T> = Result<T, ParseError>;

impl Parser {
    fn error(&self, message: &'static str) -> ParseError {
        let record = self.s.split(char::is_whitespace).next().unwrap_or("").to_string();
        ParseError { record, offset: self.pos, message }
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let found = self.peek() == Some(b);
        self.pos += usize::from(found);
        found
    }

    fn eat_str(&mut self, prefix: &str) -> bool {
        let found = self.s[self.pos..].starts_with(prefix);
        if found {
            self.pos += prefix.len();
        }
        found
    }

    fn expect(&mut self, b: u8, message: &'static str) -> Parsed<()> {
        if self.eat(b) {
            Ok(())
        } else {
            Err(self.error(message))
        }
    }

    fn skip_whitespace(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    /// The longest run of bytes from here that satisfy `ok`.
    fn word(&mut self, ok: impl Fn(u8) -> bool) -> &'static str {
        let start = self.pos;
        while self.peek().is_some_and(&ok) {
            self.pos += 1;
        }
        &self.s[start..self.pos]
    }

    /// The arguments up to `close` (or the end of the record for None), and whether they
    /// are a block (separated by whitespace) or a oneof (separated by `|`).
    fn group(&mut self, close: Option<u8>) -> Parsed<(Vec<Arg>, ArgType)> {
        let mut args = Vec::new();
        let mut kind = None;
        loop {
            self.skip_whitespace();
            if self.peek() == close {
                self.pos += usize::from(close.is_some());
                return Ok((args, kind.unwrap_or(ArgType::Block)));
            }
            if self.peek().is_none() {
                return Err(self.error("a group is not closed"));
            }
            if !args.is_empty() {
                let this = if self.eat(b'|') { ArgType::Oneof } else { ArgType::Block };
                if kind.is_some_and(|k| k != this) {
                    return Err(self.error("a group mixes `|` and whitespace"));
                }
                kind = Some(this);
                self.skip_whitespace();
            }
            args.push(self.argument()?);
        }
    }

    /// An argument, optional when in square brackets.
    fn argument(&mut self) -> Parsed<Arg> {
        let optional = self.eat(b'[');
        let mut arg = self.form()?;
        self.attributes(&mut arg)?;
        if optional {
            self.expect(b']', "`[` without `]`")?;
            arg.flags |= arg_flag::OPTIONAL;
        }
        Ok(arg)
    }

    /// `TOKEN`, `name=TOKEN`, or `[TOKEN/]name:type`, `[TOKEN/]name(group)`.
    fn form(&mut self) -> Parsed<Arg> {
        let mut token = None;
        if self.peek().is_some_and(|b| b.is_ascii_uppercase() || b == b'\'') {
            let quoted = self.peek() == Some(b'\'');
            let t = self.token()?;
            if !self.eat(b'/') {
                if quoted {
                    return Err(self.error("a quoted token needs a name (`name='token'`)"));
                }
                let name = Cow::Owned(t.to_ascii_lowercase());
                return Ok(pure_token(name, t));
            }
            token = Some(t);
        }
        let name =
            self.word(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_".contains(&b));
        if name.is_empty() {
            return Err(self.error("expected a name or a token"));
        }
        let name = Cow::Borrowed(name);
        match self.peek() {
            Some(b'=') if token.is_none() => {
                self.pos += 1;
                let t = self.token()?;
                Ok(pure_token(name, t))
            }
            Some(b':') => {
                self.pos += 1;
                let ty = self.word(|b| b.is_ascii_lowercase() || b == b'-');
                let kind = ArgType::value_type(ty).ok_or_else(|| self.error("unknown type"))?;
                let mut arg = leaf(name, kind);
                arg.token = token;
                Ok(arg)
            }
            Some(b'(') => {
                self.pos += 1;
                let (children, kind) = self.group(Some(b')'))?;
                if children.is_empty() {
                    return Err(self.error("an empty group"));
                }
                let mut arg = leaf(name, kind);
                arg.display_text = None;
                arg.token = token;
                arg.children = children;
                Ok(arg)
            }
            _ => Err(self.error("expected `:type`, `(`, or `=TOKEN` after a name")),
        }
    }

    /// An upper-case word or a quoted text.
    fn token(&mut self) -> Parsed<Cow<'static, str>> {
        if self.peek() == Some(b'\'') {
            return self.quoted(b'\'');
        }
        let start = self.pos;
        if !self.peek().is_some_and(|b| b.is_ascii_uppercase()) {
            return Err(self.error("expected a token"));
        }
        self.word(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b"-_".contains(&b));
        Ok(Cow::Borrowed(&self.s[start..self.pos]))
    }

    /// Text between `quote`s, with `\` escaping the next character.
    fn quoted(&mut self, quote: u8) -> Parsed<Cow<'static, str>> {
        self.expect(quote, "expected a quote")?;
        let start = self.pos;
        let mut owned: Option<String> = None;
        loop {
            let Some(b) = self.peek() else {
                return Err(self.error("a quote is not closed"));
            };
            if b == quote {
                let text = match owned {
                    Some(s) => Cow::Owned(s),
                    None => Cow::Borrowed(&self.s[start..self.pos]),
                };
                self.pos += 1;
                return Ok(text);
            }
            if b == b'\\' {
                let s = owned.get_or_insert_with(|| self.s[start..self.pos].to_string());
                self.pos += 1;
                let Some(c) = self.s[self.pos..].chars().next() else {
                    return Err(self.error("a quote is not closed"));
                };
                s.push(c);
                self.pos += c.len_utf8();
            } else {
                let c = self.s[self.pos..].chars().next().unwrap_or_default();
                if let Some(s) = owned.as_mut() {
                    s.push(c);
                }
                self.pos += c.len_utf8();
            }
        }
    }

    /// Numbers joined by dots (`2.6.12`): a dot not followed by a digit ends it, so that
    /// `@6.2.0...` is a version and the `multiple` flag.
    fn version(&mut self) -> Parsed<&'static str> {
        let start = self.pos;
        loop {
            if self.word(|b| b.is_ascii_digit()).is_empty() {
                return Err(self.error("expected a version"));
            }
            let next = self.s.as_bytes().get(self.pos + 1);
            if self.peek() != Some(b'.') || !next.is_some_and(u8::is_ascii_digit) {
                return Ok(&self.s[start..self.pos]);
            }
            self.pos += 1;
        }
    }

    /// The attributes after a form, in any order, each at most once.
    fn attributes(&mut self, arg: &mut Arg) -> Parsed<()> {
        loop {
            let at = self.pos;
            let duplicate = match self.peek() {
                Some(b'#') => {
                    self.pos += 1;
                    let digits = self.word(|b| b.is_ascii_digit());
                    let index = digits.parse().map_err(|_| self.error("expected a number"))?;
                    arg.key_spec_index.replace(index).is_some()
                }
                Some(b'~') => {
                    self.pos += 1;
                    if arg.kind.is_group() {
                        return Err(self.error("a group has no display text"));
                    }
                    let text = self.quoted(b'\'')?;
                    arg.display_text.replace(text) != Some(arg.name.clone())
                }
                Some(b'"') => arg.summary.replace(self.quoted(b'"')?).is_some(),
                Some(b'@') => {
                    self.pos += 1;
                    arg.since.replace(self.version()?).is_some()
                }
                Some(b'!') => {
                    self.pos += 1;
                    arg.deprecated_since.replace(self.version()?).is_some()
                }
                Some(b'.') if self.eat_str("...") => {
                    let mut flags = arg_flag::MULTIPLE;
                    if self.eat(b'+') {
                        flags |= arg_flag::MULTIPLE_TOKEN;
                    }
                    let had = arg.flags & arg_flag::MULTIPLE != 0;
                    arg.flags |= flags;
                    had
                }
                _ => return Ok(()),
            };
            if duplicate {
                self.pos = at;
                return Err(self.error("an attribute given twice"));
            }
        }
    }
}

/// A value or group named `name` with no attributes yet (display text: its name).
fn leaf(name: Cow<'static, str>, kind: ArgType) -> Arg {
    Arg {
        display_text: Some(name.clone()),
        name,
        kind,
        key_spec_index: None,
        token: None,
        summary: None,
        since: None,
        deprecated_since: None,
        flags: 0,
        children: Vec::new(),
    }
}

fn pure_token(name: Cow<'static, str>, token: Cow<'static, str>) -> Arg {
    Arg { token: Some(token), ..leaf(name, ArgType::PureToken) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &'static str) -> Vec<Arg> {
        let mut records = parse_records(text).unwrap();
        assert_eq!(records.len(), 1);
        records.pop().unwrap().1
    }

    fn err(text: &'static str) -> &'static str {
        parse_records(text).unwrap_err().message
    }

    #[test]
    fn values_tokens_and_attributes() {
        let args = one("x key:key#0 EX/seconds:integer@2.6.12 [NX] change=CH \
            [GET/p:pattern#1~'pattern'...+] m:string@1.0...!3.0.0");
        assert_eq!(args.len(), 6);
        assert_eq!(args[0], Arg { key_spec_index: Some(0), ..leaf("key".into(), ArgType::Key) });
        assert_eq!(args[1].token.as_deref(), Some("EX"));
        assert_eq!((args[1].name.as_ref(), args[1].since), ("seconds", Some("2.6.12")));
        assert_eq!(
            args[2],
            Arg { flags: arg_flag::OPTIONAL, ..pure_token("nx".into(), "NX".into()) }
        );
        assert_eq!(args[2].display_text.as_deref(), Some("nx"));
        assert_eq!(args[3], pure_token("change".into(), "CH".into()));
        let p = &args[4];
        assert_eq!(
            (p.kind, p.key_spec_index, p.token.as_deref()),
            (ArgType::Pattern, Some(1), Some("GET"))
        );
        assert_eq!(p.display_text.as_deref(), Some("pattern"));
        let all = arg_flag::OPTIONAL | arg_flag::MULTIPLE | arg_flag::MULTIPLE_TOKEN;
        assert_eq!(p.flags, all);
        assert_eq!((args[5].flags, args[5].deprecated_since), (arg_flag::MULTIPLE, Some("3.0.0")));
        assert_eq!(args[5].since, Some("1.0"));
    }

    #[test]
    fn groups_nest_and_wrap_across_lines() {
        let args = one("x [cond(NX|\n    XX|LIMIT/lim(a:integer\n b:integer)@6.2.0)] d(f:string v:string)...\n");
        assert_eq!(args.len(), 2);
        let cond = &args[0];
        assert_eq!(
            (cond.kind, cond.flags, cond.display_text.as_ref()),
            (ArgType::Oneof, arg_flag::OPTIONAL, None)
        );
        assert_eq!(cond.children.len(), 3);
        let lim = &cond.children[2];
        assert_eq!(
            (lim.kind, lim.token.as_deref(), lim.since),
            (ArgType::Block, Some("LIMIT"), Some("6.2.0"))
        );
        assert_eq!(lim.children.iter().map(|a| a.name.as_ref()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!((args[1].kind, args[1].flags), (ArgType::Block, arg_flag::MULTIPLE));
    }

    #[test]
    fn quoted_tokens_texts_and_escapes() {
        let args = one("x op(equal='='|approx='~'|empty='') s:string\"it's a \\\"summary\\\"\" t:string~'a\\'b'");
        let ops: Vec<_> = args[0].children.iter().map(|a| a.token.as_deref().unwrap()).collect();
        assert_eq!(ops, ["=", "~", ""]);
        assert_eq!(args[1].summary.as_deref(), Some("it's a \"summary\""));
        assert_eq!(args[2].display_text.as_deref(), Some("a'b"));
    }

    #[test]
    fn records_comments_and_bare_names() {
        let text = "# a comment\nlastsave\n\nconfig|get parameter:pattern...\n  \n# x\nping [message:string]\n";
        let records = parse_records(text).unwrap();
        let names: Vec<&str> = records.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["lastsave", "config|get", "ping"]);
        assert!(records[0].1.is_empty());
        assert_eq!(records[1].1[0].kind, ArgType::Pattern);
    }

    #[test]
    fn errors_are_reported_not_panicked() {
        assert_eq!(err("x a:nosuch"), "unknown type");
        assert_eq!(err("x [NX"), "`[` without `]`");
        assert_eq!(err("x g(a:key b:key|c:key)"), "a group mixes `|` and whitespace");
        assert_eq!(err("x a:key | b:key"), "`|` between top-level arguments");
        assert_eq!(err("x g(a:key"), "a group is not closed");
        assert_eq!(err("x g()"), "an empty group");
        assert_eq!(err("x a:key@1@2"), "an attribute given twice");
        assert_eq!(err("x a:key#0#1"), "an attribute given twice");
        assert_eq!(err("x '='"), "a quoted token needs a name (`name='token'`)");
        assert_eq!(err("x a:key\"open"), "a quote is not closed");
        assert_eq!(err("x g(a:key b:key)~'t'"), "a group has no display text");
        assert_eq!(err("x a"), "expected `:type`, `(`, or `=TOKEN` after a name");
        assert_eq!(err("x a:key@"), "expected a version");
        assert_eq!(err("x a:key@1."), "expected a name or a token");
        assert_eq!(err("x ?"), "expected a name or a token");
        assert_eq!(err("  x a:key"), "a record must start with its command name");
        let e = parse_records("ok\nbad a:key#\n").unwrap_err();
        assert_eq!((e.record.as_str(), e.offset), ("bad", 10));
        assert_eq!(e.message, "expected a number");
    }
}
