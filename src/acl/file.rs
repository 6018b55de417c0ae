//! The ACL file (`aclfile`): one `user <name> <rules...>` line per user, as `ACL SAVE`
//! writes it and `ACL LOAD` (or start-up) reads it, and the `user` directives of the
//! configuration file, which are the same lines in another place.
//!
//! Loading is all or nothing: every line is checked and every problem collected, in
//! Valkey's words, into one message; the users change only when there was none.

use super::catalog::Catalog;
use super::user::{merge_selector_args, valid_name, User};
use super::{Acl, SetError};

/// The users of an ACL file's text, or the message listing every problem (`filename` is
/// named in it, as Valkey names its `aclfile`).
pub fn parse(
    text: &[u8],
    filename: &str,
    cat: &Catalog,
    all_channels: bool,
) -> Result<Vec<User>, String> {
    let mut errors = String::new();
    let mut users: Vec<User> = Vec::new();
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        let line = trim(line, b" \t\r\n");
        if line.is_empty() {
            continue;
        }
        let argv: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        if argv[0] != b"user" || argv.len() < 2 {
            errors += &format!(
                "{filename}:{n} should start with user keyword followed by the username. "
            );
            continue;
        }
        let name = argv[1];
        if !valid_name(name) {
            errors += &format!(
                "'{filename}:{n}: username '{}' contains invalid characters. ",
                String::from_utf8_lossy(name)
            );
            continue;
        }
        if users.iter().any(|u| u.name == name) {
            errors += &format!(
                "WARNING: Duplicate user '{}' found on line {n}. ",
                String::from_utf8_lossy(name)
            );
            continue;
        }
        let mut user = User::new(name, all_channels);
        let rules = match merge_selector_args(&argv[2..]) {
            Ok(rules) => rules,
            Err(_) => {
                errors += &format!("{filename}:{n}: Unmatched parenthesis in selector definition.");
                Vec::new()
            }
        };
        let mut syntax_error = false;
        for rule in &rules {
            let rule = trim(rule, b"\t\r\n");
            match user.apply(rule, cat, all_channels) {
                Ok(()) => {}
                Err(SetError::Unknown) => {
                    errors += &format!(
                        "{filename}:{n}: Error in applying operation '{}': {}. ",
                        String::from_utf8_lossy(rule),
                        SetError::Unknown.text()
                    );
                }
                Err(e) if !syntax_error => {
                    errors += &format!("{filename}:{n}: {}. ", e.text());
                    syntax_error = true;
                }
                Err(_) => {}
            }
        }
        users.push(user);
    }
    if errors.is_empty() {
        Ok(users)
    } else {
        errors += "WARNING: ACL errors detected, no change to the previously active ACL rules \
                   was performed";
        Err(errors)
    }
}

/// The text `ACL SAVE` writes: every user, in name order.
pub fn render(acl: &Acl) -> Vec<u8> {
    let mut out = Vec::new();
    for (_, u) in acl.users() {
        out.extend_from_slice(b"user ");
        out.extend_from_slice(&u.name);
        out.push(b' ');
        out.extend_from_slice(&u.describe());
        out.push(b'\n');
    }
    out
}

/// Apply the `user` directives of the configuration file (each the words after `user`) at
/// start-up, in order; a directive for `default` resets it first. The error is the line to
/// log before exiting, in Valkey's words.
pub fn apply_directives(
    acl: &mut Acl,
    directives: &[Vec<Vec<u8>>],
    cat: &Catalog,
    all_channels: bool,
) -> Result<(), String> {
    for words in directives {
        let Some((name, rules)) = words.split_first() else { continue };
        if !valid_name(name) {
            return Err("Spaces not allowed in ACL usernames".into());
        }
        let rules: Vec<&[u8]> = rules.iter().map(Vec::as_slice).collect();
        let merged = merge_selector_args(&rules).map_err(|at| {
            format!(
                "Unmatched parenthesis in acl selector starting at '{}'.",
                String::from_utf8_lossy(rules[at])
            )
        })?;
        // A directive for an existing user (only `default` can be one) starts it afresh.
        let mut staged = match acl.find(name) {
            Some(id) => {
                let mut u = acl.user(id).clone();
                u.apply(b"reset", cat, all_channels).expect("reset is valid");
                u
            }
            None => User::new(name, all_channels),
        };
        for rule in &merged {
            if let Err(e) = staged.apply(rule, cat, all_channels) {
                return Err(format!(
                    "Error loading ACL rule '{}' for the user named '{}': {}",
                    String::from_utf8_lossy(rule),
                    String::from_utf8_lossy(name),
                    e.text()
                ));
            }
        }
        acl.put(staged);
    }
    Ok(())
}

fn trim<'a>(s: &'a [u8], set: &[u8]) -> &'a [u8] {
    let start = s.iter().position(|b| !set.contains(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !set.contains(b)).map_or(start, |e| e + 1);
    &s[start..end]
}
