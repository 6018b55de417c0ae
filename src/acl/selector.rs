//! A selector: one set of permissions (commands, key patterns, channel patterns, databases)
//! and the rules that change it. A user has a root selector and any number of others in
//! parentheses; a command runs when one of them allows all of it.
//!
//! Commands are a bitmap over the catalog's ids plus, for the display, the ordered list of
//! the `+`/`-` rules that built it (Valkey's `command_rules`): a later rule naming the same
//! command or category replaces the earlier one (and `+config` replaces `-config|set`), and
//! `+@all` / `-@all` start over. `ACL LIST` prints `+@all` or `-@all` and then those rules,
//! which rebuild exactly the same bitmap.

use super::catalog::{category, Catalog, CmdId, BITS};
use super::SetError;

/// A key pattern may be used to read keys.
pub const READ: u8 = 1;
/// A key pattern may be used to write keys.
pub const WRITE: u8 = 2;
const READ_WRITE: u8 = READ | WRITE;

/// The largest database id a `db=` rule accepts.
const DB_ID_MAX: i64 = i32::MAX as i64;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPattern {
    pub pattern: Vec<u8>,
    /// [`READ`], [`WRITE`] or both.
    pub perms: u8,
    /// The pattern is `prefix*` with no other special character: matched by comparing the
    /// prefix, without the glob machine (the common `~app:*`).
    pub prefix_only: bool,
    /// The prefix's first (up to) eight bytes, little-endian, and the mask of those bytes:
    /// a key of eight bytes or more is compared with one load (see [`Self::matches`]).
    head: u64,
    head_mask: u64,
}

impl KeyPattern {
    pub(super) fn new(pattern: &[u8], perms: u8) -> KeyPattern {
        let prefix_only = pattern.len() > 1
            && pattern.last() == Some(&b'*')
            && !pattern[..pattern.len() - 1]
                .iter()
                .any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'));
        let (mut head, mut head_mask) = (0, 0);
        if prefix_only {
            for (i, &b) in pattern[..pattern.len() - 1].iter().take(8).enumerate() {
                head |= u64::from(b) << (8 * i);
                head_mask |= 0xFF << (8 * i);
            }
        }
        KeyPattern { pattern: pattern.to_vec(), perms, prefix_only, head, head_mask }
    }

    /// Whether `key` matches the pattern (Valkey's `stringmatchlen`, case-sensitive).
    #[inline(always)]
    pub fn matches(&self, key: &[u8]) -> bool {
        if !self.prefix_only {
            return self.matches_glob(key);
        }
        // `prefix*` matches a key that starts with the prefix, the empty remainder included
        // (the prefix is never empty, so neither is a key that matches).
        let prefix = &self.pattern[..self.pattern.len() - 1];
        if key.len() < prefix.len() {
            return false;
        }
        if let Some(word) = key.first_chunk::<8>() {
            if (u64::from_le_bytes(*word) ^ self.head) & self.head_mask != 0 {
                return false;
            }
            return prefix.len() <= 8 || key[8..prefix.len()] == prefix[8..];
        }
        key[..prefix.len()] == *prefix
    }

    #[inline(never)]
    fn matches_glob(&self, key: &[u8]) -> bool {
        crate::config::glob::glob_match(&self.pattern, key, false)
    }
}

/// The databases a selector may use (Valkey 9.1's `db=` rules).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dbs {
    All,
    /// Sorted, without duplicates; empty after `resetdbs`.
    Only(Vec<u32>),
}

impl Dbs {
    pub fn allows_all(&self) -> bool {
        matches!(self, Dbs::All)
    }

    pub fn allows(&self, db: usize) -> bool {
        match self {
            Dbs::All => true,
            Dbs::Only(ids) => ids.binary_search(&(db as u32)).is_ok(),
        }
    }
}

/// One `+name` or `-name` rule as it is displayed (`name` lower case: a command, a
/// `command|sub`, a `command|first-arg` or an `@category`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Rule {
    allow: bool,
    name: Vec<u8>,
}

#[derive(Clone, Debug)]
pub struct Selector {
    pub all_keys: bool,
    pub all_channels: bool,
    /// Every command is allowed: set by `+@all`, lost by any command taken away.
    pub all_commands: bool,
    /// The rules start from `+@all` (Valkey's reserved "future commands" bit).
    from_all: bool,
    bits: [u64; BITS / 64],
    /// The first arguments allowed for commands whose bit is not set (`+select|0`).
    first_args: Vec<(CmdId, Vec<Vec<u8>>)>,
    rules: Vec<Rule>,
    pub patterns: Vec<KeyPattern>,
    pub channels: Vec<Vec<u8>>,
    pub dbs: Dbs,
}

impl Selector {
    /// An empty selector: no commands, keys or databases restrictions lifted, except the
    /// channels when `acl-pubsub-default` is `allchannels`; every database.
    pub fn new(all_channels: bool) -> Selector {
        Selector {
            all_keys: false,
            all_channels,
            all_commands: false,
            from_all: false,
            bits: [0; BITS / 64],
            first_args: Vec::new(),
            rules: Vec::new(),
            patterns: Vec::new(),
            channels: Vec::new(),
            dbs: Dbs::All,
        }
    }

    /// A selector that allows everything: `~* &* +@all`, every database.
    pub fn everything() -> Selector {
        let mut s = Selector::new(true);
        s.all_keys = true;
        s.reset_commands(true);
        s
    }

    /// Whether the command's bit is set.
    #[inline(always)]
    pub fn allows_command(&self, id: CmdId) -> bool {
        self.bits[id as usize / 64] & (1 << (id % 64)) != 0
    }

    /// The first arguments allowed for `id` beyond its bit.
    pub fn first_args(&self, id: CmdId) -> &[Vec<u8>] {
        self.first_args.iter().find(|(c, _)| *c == id).map_or(&[], |(_, a)| a.as_slice())
    }

    /// Whether nothing is restricted (commands, keys, channels and databases).
    pub fn unrestricted(&self) -> bool {
        self.all_commands && self.all_keys && self.all_channels && self.dbs == Dbs::All
    }

    fn set_bit(&mut self, id: CmdId, allow: bool) {
        let (word, bit) = (id as usize / 64, 1u64 << (id % 64));
        if allow {
            self.bits[word] |= bit;
        } else {
            self.bits[word] &= !bit;
            self.all_commands = false;
        }
    }

    /// Allow or deny a command and, for a container, all its subcommands.
    fn change(&mut self, cat: &Catalog, id: CmdId, allow: bool) {
        self.set_bit(id, allow);
        self.first_args.retain(|(c, _)| *c != id);
        for &sub in &cat.get(id).subs {
            self.set_bit(sub, allow);
        }
    }

    /// Record `+name` / `-name` for display, replacing the rules it overrides.
    fn push_rule(&mut self, name: &[u8], allow: bool) {
        let name = name.to_ascii_lowercase();
        self.rules.retain(|r| {
            let same = r.name == name;
            let sub_of = r.name.len() > name.len()
                && r.name.starts_with(&name)
                && r.name[name.len()] == b'|';
            !(same || sub_of)
        });
        self.rules.push(Rule { allow, name });
    }

    fn reset_commands(&mut self, allow: bool) {
        self.bits = [if allow { u64::MAX } else { 0 }; BITS / 64];
        self.all_commands = allow;
        self.from_all = allow;
        self.rules.clear();
        self.first_args.clear();
    }

    /// Apply one selector rule (everything but the user-level ones: on/off, passwords,
    /// selectors, reset).
    pub fn apply(&mut self, op: &[u8], cat: &Catalog) -> Result<(), SetError> {
        let is = |word: &str| op.eq_ignore_ascii_case(word.as_bytes());
        if op.is_empty() {
            return Err(SetError::Syntax);
        }
        if is("allkeys") || op == b"~*" {
            self.all_keys = true;
            self.patterns.clear();
        } else if is("resetkeys") {
            self.all_keys = false;
            self.patterns.clear();
        } else if is("allchannels") || op == b"&*" {
            self.all_channels = true;
            self.channels.clear();
        } else if is("resetchannels") {
            self.all_channels = false;
            self.channels.clear();
        } else if is("allcommands") || is("+@all") {
            self.reset_commands(true);
        } else if is("nocommands") || is("-@all") {
            self.reset_commands(false);
        } else if is("alldbs") {
            self.dbs = Dbs::All;
        } else if is("resetdbs") {
            self.dbs = Dbs::Only(Vec::new());
        } else if op.len() >= 3 && op[..3].eq_ignore_ascii_case(b"db=") {
            self.dbs = Dbs::Only(parse_dbs(&op[3..])?);
        } else if op[0] == b'~' || op[0] == b'%' {
            self.add_key_pattern(op)?;
        } else if op[0] == b'&' {
            if self.all_channels {
                return Err(SetError::ChannelsAfterAll);
            }
            let pattern = &op[1..];
            if has_spaces(pattern) {
                return Err(SetError::Syntax);
            }
            if !self.channels.iter().any(|c| c == pattern) {
                self.channels.push(pattern.to_vec());
            }
            self.all_channels = false;
        } else if op.len() > 1 && op[1] == b'@' && (op[0] == b'+' || op[0] == b'-') {
            let allow = op[0] == b'+';
            let flag = category(&op[2..]).ok_or(SetError::Unknown)?;
            self.push_rule(&op[1..], allow);
            for id in cat.ids() {
                if cat.get(id).categories & flag != 0 {
                    self.change(cat, id, allow);
                }
            }
        } else if op[0] == b'+' {
            self.allow_command(&op[1..], cat)?;
        } else if op[0] == b'-' {
            let id = cat.find(&op[1..]).ok_or(SetError::Unknown)?;
            self.change(cat, id, false);
            self.push_rule(cat.get(id).name.as_bytes(), false);
        } else {
            return Err(SetError::Syntax);
        }
        Ok(())
    }

    /// `+name`: a command, a container's subcommand (`config|get`), or a first argument of a
    /// command without subcommands (`select|0`, deprecated in Valkey but accepted).
    fn allow_command(&mut self, name: &[u8], cat: &Catalog) -> Result<(), SetError> {
        let Some(bar) = name.iter().rposition(|&b| b == b'|') else {
            let id = cat.find(name).ok_or(SetError::Unknown)?;
            self.change(cat, id, true);
            self.push_rule(cat.get(id).name.as_bytes(), true);
            return Ok(());
        };
        let (base, arg) = (&name[..bar], &name[bar + 1..]);
        let id = cat.find(base).ok_or(SetError::Unknown)?;
        if cat.get(id).parent.is_some() {
            return Err(SetError::FirstArgOfSubcommand);
        }
        if arg.is_empty() {
            return Err(SetError::Syntax);
        }
        if cat.get(id).subs.is_empty() {
            match self.first_args.iter_mut().find(|(c, _)| *c == id) {
                Some((_, args)) => {
                    if !args.iter().any(|a| a.eq_ignore_ascii_case(arg)) {
                        args.push(arg.to_vec());
                    }
                }
                None => self.first_args.push((id, vec![arg.to_vec()])),
            }
        } else {
            let sub = cat.find(name).ok_or(SetError::Unknown)?;
            self.change(cat, sub, true);
        }
        self.push_rule(name, true);
        Ok(())
    }

    /// `~pattern`, `%R~pattern`, `%W~pattern`, `%RW~pattern`.
    fn add_key_pattern(&mut self, op: &[u8]) -> Result<(), SetError> {
        if self.all_keys {
            return Err(SetError::KeysAfterAll);
        }
        let (perms, start) = if op[0] == b'%' {
            let mut perms = 0;
            let mut i = 1;
            while i < op.len() {
                match op[i].to_ascii_uppercase() {
                    b'R' if perms & READ == 0 => perms |= READ,
                    b'W' if perms & WRITE == 0 => perms |= WRITE,
                    b'~' if perms != 0 => {
                        i += 1;
                        break;
                    }
                    _ => return Err(SetError::Syntax),
                }
                i += 1;
            }
            if perms == 0 {
                return Err(SetError::Syntax);
            }
            (perms, i)
        } else {
            (READ_WRITE, 1)
        };
        let pattern = &op[start.min(op.len())..];
        if has_spaces(pattern) {
            return Err(SetError::Syntax);
        }
        match self.patterns.iter_mut().find(|p| p.pattern == pattern) {
            Some(p) => p.perms |= perms,
            None => self.patterns.push(KeyPattern::new(pattern, perms)),
        }
        self.all_keys = false;
        Ok(())
    }

    // ----- description ---------------------------------------------------------------

    /// The command rules as `ACL GETUSER` shows them: `+@all` or `-@all`, then the rules.
    pub fn describe_commands(&self) -> Vec<u8> {
        let mut out = if self.from_all { b"+@all".to_vec() } else { b"-@all".to_vec() };
        for r in &self.rules {
            out.push(b' ');
            out.push(if r.allow { b'+' } else { b'-' });
            out.extend_from_slice(&r.name);
        }
        out
    }

    /// The key patterns as `ACL GETUSER` shows them (`~*`, or the patterns, space separated).
    pub fn describe_keys(&self) -> Vec<u8> {
        if self.all_keys {
            return b"~*".to_vec();
        }
        let mut out = Vec::new();
        for (i, p) in self.patterns.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            push_pattern(&mut out, p);
        }
        out
    }

    /// The channel patterns as `ACL GETUSER` shows them.
    pub fn describe_channels(&self) -> Vec<u8> {
        if self.all_channels {
            return b"&*".to_vec();
        }
        let mut out = Vec::new();
        for (i, c) in self.channels.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            out.push(b'&');
            out.extend_from_slice(c);
        }
        out
    }

    /// The databases as `ACL GETUSER` shows them: `alldbs`, `db=0,1`, or nothing.
    pub fn describe_dbs(&self) -> Vec<u8> {
        match &self.dbs {
            Dbs::All => b"alldbs".to_vec(),
            Dbs::Only(ids) if ids.is_empty() => Vec::new(),
            Dbs::Only(ids) => db_rule(ids),
        }
    }

    /// The whole selector as `ACL LIST` and the ACL file write it: keys, channels,
    /// databases, then commands.
    pub fn describe(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.all_keys {
            out.extend_from_slice(b"~* ");
        } else {
            for p in &self.patterns {
                push_pattern(&mut out, p);
                out.push(b' ');
            }
        }
        if self.all_channels {
            out.extend_from_slice(b"&* ");
        } else {
            out.extend_from_slice(b"resetchannels ");
            for c in &self.channels {
                out.push(b'&');
                out.extend_from_slice(c);
                out.push(b' ');
            }
        }
        match &self.dbs {
            Dbs::All => {}
            Dbs::Only(ids) if ids.is_empty() => out.extend_from_slice(b"resetdbs "),
            Dbs::Only(ids) => {
                out.extend_from_slice(&db_rule(ids));
                out.push(b' ');
            }
        }
        out.extend_from_slice(&self.describe_commands());
        out
    }
}

fn push_pattern(out: &mut Vec<u8>, p: &KeyPattern) {
    out.extend_from_slice(match p.perms {
        READ => b"%R~",
        WRITE => b"%W~",
        _ => b"~",
    });
    out.extend_from_slice(&p.pattern);
}

fn db_rule(ids: &[u32]) -> Vec<u8> {
    let list: Vec<String> = ids.iter().map(u32::to_string).collect();
    format!("db={}", list.join(",")).into_bytes()
}

/// The list of a `db=` rule: comma-separated ids, each `0..=i32::MAX`.
fn parse_dbs(list: &[u8]) -> Result<Vec<u32>, SetError> {
    let mut ids = Vec::new();
    for part in list.split(|&b| b == b',') {
        let n = std::str::from_utf8(part)
            .ok()
            .filter(|s| !s.is_empty())
            .and_then(|s| s.parse::<i64>().ok())
            .ok_or(SetError::Syntax)?;
        if !(0..=DB_ID_MAX).contains(&n) {
            return Err(SetError::DbOutOfRange);
        }
        ids.push(n as u32);
    }
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

/// Whether a pattern or name holds a space-like byte or a NUL (Valkey refuses them).
pub fn has_spaces(s: &[u8]) -> bool {
    s.iter().any(|&b| b == 0 || b.is_ascii_whitespace() || b == 0x0b)
}
