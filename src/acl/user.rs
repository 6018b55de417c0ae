//! A user: whether it may log in, its passwords (kept as SHA-256 hex only), and its
//! selectors, the first of which (the root) takes the rules written outside parentheses.
//!
//! `ACL SETUSER` applies its rules to a copy and keeps the copy only when every rule was
//! valid ([`User::with_rules`]), so a failed SETUSER changes nothing.

use super::catalog::Catalog;
use super::selector::{has_spaces, Selector};
use super::SetError;
use crate::util::sha256::sha256_hex;

#[derive(Clone, Debug)]
pub struct User {
    pub name: Vec<u8>,
    pub enabled: bool,
    /// Any password (or none) logs in.
    pub nopass: bool,
    /// SHA-256 of each password, as 64 lowercase hex characters.
    pub passwords: Vec<String>,
    /// The root selector first, then the ones added in parentheses.
    pub selectors: Vec<Selector>,
}

impl User {
    /// A new user as `ACL SETUSER name` creates it: off, no passwords, no commands, no
    /// keys; channels as `acl-pubsub-default` says; every database.
    pub fn new(name: &[u8], all_channels: bool) -> User {
        User {
            name: name.to_vec(),
            enabled: false,
            nopass: false,
            passwords: Vec::new(),
            selectors: vec![Selector::new(all_channels)],
        }
    }

    /// The default user before any configuration: `on nopass ~* &* +@all`.
    pub fn default_user() -> User {
        let mut u = User::new(b"default", true);
        u.enabled = true;
        u.nopass = true;
        u.selectors[0] = Selector::everything();
        u
    }

    pub fn root(&self) -> &Selector {
        &self.selectors[0]
    }

    /// Whether some selector allows everything (the check at dispatch is then skipped).
    pub fn unrestricted(&self) -> bool {
        self.selectors.iter().any(Selector::unrestricted)
    }

    /// Whether `password` logs in as this user (enabled, and nopass or a matching hash).
    pub fn accepts(&self, password: &[u8]) -> bool {
        if !self.enabled {
            return false;
        }
        if self.nopass {
            return true;
        }
        let hashed = sha256_hex(password);
        // Every stored hash is compared in full, whatever matched, as Valkey's
        // time_independent_strcmp compares each byte.
        self.passwords.iter().fold(false, |ok, p| ok | same_bytes(p.as_bytes(), hashed.as_bytes()))
    }

    /// Apply one rule; `all_channels` is `acl-pubsub-default` (for `reset`).
    pub fn apply(&mut self, op: &[u8], cat: &Catalog, all_channels: bool) -> Result<(), SetError> {
        let is = |word: &str| op.eq_ignore_ascii_case(word.as_bytes());
        if op.is_empty() {
            return Ok(());
        }
        if is("on") {
            self.enabled = true;
        } else if is("off") {
            self.enabled = false;
        } else if is("skip-sanitize-payload") || is("sanitize-payload") {
            // Accepted for compatibility; RESTORE payloads are always checked in full.
        } else if is("nopass") {
            self.nopass = true;
            self.passwords.clear();
        } else if is("resetpass") {
            self.nopass = false;
            self.passwords.clear();
        } else if op[0] == b'>' || op[0] == b'#' {
            let hash = if op[0] == b'>' { sha256_hex(&op[1..]) } else { checked_hash(&op[1..])? };
            if !self.passwords.contains(&hash) {
                self.passwords.push(hash);
            }
            self.nopass = false;
        } else if op[0] == b'<' || op[0] == b'!' {
            let hash = if op[0] == b'<' { sha256_hex(&op[1..]) } else { checked_hash(&op[1..])? };
            let before = self.passwords.len();
            self.passwords.retain(|p| *p != hash);
            if self.passwords.len() == before {
                return Err(SetError::NoSuchPassword);
            }
        } else if op[0] == b'(' && op[op.len() - 1] == b')' {
            let mut s = Selector::new(all_channels);
            let inner = &op[1..op.len() - 1];
            let words = crate::util::quote::split_args(inner).ok_or(SetError::Syntax)?;
            for w in &words {
                s.apply(w, cat)?;
            }
            self.selectors.push(s);
        } else if is("clearselectors") {
            self.selectors.truncate(1);
        } else if is("reset") {
            self.nopass = false;
            self.passwords.clear();
            let root = &mut self.selectors[0];
            root.apply(b"resetkeys", cat)?;
            root.apply(b"resetchannels", cat)?;
            if all_channels {
                root.apply(b"allchannels", cat)?;
            }
            root.apply(b"alldbs", cat)?;
            self.enabled = false;
            self.selectors.truncate(1);
            self.selectors[0].apply(b"-@all", cat)?;
        } else {
            self.selectors[0].apply(op, cat)?;
        }
        Ok(())
    }

    /// This user (or a new one named `name` when `self` is None) with `rules` applied, all
    /// or nothing: the error names the rule that failed, in Valkey's words.
    pub fn with_rules(
        existing: Option<&User>,
        name: &[u8],
        rules: &[&[u8]],
        cat: &Catalog,
        all_channels: bool,
    ) -> Result<User, Vec<u8>> {
        let merged = merge_selector_args(rules).map_err(|at| {
            let mut e = b"Unmatched parenthesis in acl selector starting at '".to_vec();
            e.extend_from_slice(rules[at]);
            e.extend_from_slice(b"'.");
            e
        })?;
        let mut u = existing.cloned().unwrap_or_else(|| User::new(name, all_channels));
        for op in &merged {
            if let Err(e) = u.apply(op, cat, all_channels) {
                let mut text = b"Error in ACL SETUSER modifier '".to_vec();
                text.extend_from_slice(op);
                text.extend_from_slice(b"': ");
                text.extend_from_slice(e.text().as_bytes());
                return Err(text);
            }
        }
        Ok(u)
    }

    /// The rules that rebuild this user, as `ACL LIST` and the ACL file write them (without
    /// the leading `user <name> `).
    pub fn describe(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(if self.enabled { b"on " } else { b"off " });
        if self.nopass {
            out.extend_from_slice(b"nopass ");
        }
        for p in &self.passwords {
            out.push(b'#');
            out.extend_from_slice(p.as_bytes());
            out.push(b' ');
        }
        out.extend_from_slice(&self.selectors[0].describe());
        for s in &self.selectors[1..] {
            out.extend_from_slice(b" (");
            out.extend_from_slice(&s.describe());
            out.push(b')');
        }
        out
    }
}

/// A `#hash` / `!hash` argument: exactly 64 lowercase hex characters.
fn checked_hash(h: &[u8]) -> Result<String, SetError> {
    if h.len() != 64 || !h.iter().all(|&b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(SetError::BadHash);
    }
    Ok(String::from_utf8(h.to_vec()).expect("hex digits"))
}

/// Byte equality that looks at every byte (no early exit on the first difference).
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// Rules with a selector spread over several arguments (`(+get` `~k*)`) joined back into
/// one `(...)` rule. `Err(i)`: the parenthesis opened at argument `i` never closes.
pub fn merge_selector_args(args: &[&[u8]]) -> Result<Vec<Vec<u8>>, usize> {
    let mut out = Vec::with_capacity(args.len());
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (i, &a) in args.iter().enumerate() {
        match &mut open {
            None if a.first() == Some(&b'(') && a.last() != Some(&b')') => {
                open = Some((i, a.to_vec()));
            }
            None => out.push(a.to_vec()),
            Some((_, sel)) => {
                sel.push(b' ');
                sel.extend_from_slice(a);
                if a.last() == Some(&b')') {
                    out.push(open.take().expect("open selector").1);
                }
            }
        }
    }
    match open {
        Some((i, _)) => Err(i),
        None => Ok(out),
    }
}

/// Whether a user name is acceptable (no spaces, no NUL).
pub fn valid_name(name: &[u8]) -> bool {
    !has_spaces(name)
}
