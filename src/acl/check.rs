//! Whether a user may run one command line: Valkey's `ACLCheckAllUserCommandPerm`.
//!
//! Each selector checks, in this order: the databases (the ids SELECT, MOVE, SWAPDB and
//! COPY ... DB name; then the current one, for a command that has keys or is in
//! `@keyspace`, SWAPDB aside; every database for FLUSHALL), the command's bit (or an allowed first argument), each key
//! against the patterns with the read/write flags of its key spec, and the channels of
//! PUBLISH and the SUBSCRIBE family. The first selector that passes allows the command.
//! When none does, the reported denial is the most specific one over all selectors
//! (database < command < key < channel), and among equals the one at the latest argument.
//!
//! This runs before every command of a restricted user, so the common case has a quick
//! path: a selector with every database, the command's bit set and a command with at most
//! one key at a fixed position (the catalog's [`KeyPlan`], worked out once) is judged by one
//! bit test and one prefix comparison. A unit test holds the quick path to the full one.

use bytes::Bytes;

use super::catalog::{Catalog, CmdId, KeyPlan};
use super::selector::{Selector, READ, WRITE};
use super::user::User;
use crate::config::glob::glob_match;
use crate::spec::keys::for_each_key;
use crate::spec::table::{acl as cat, flag, ks, Command};

/// Why a command was refused, from the least to the most specific.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reason {
    Database,
    Command,
    Key,
    Channel,
}

impl Reason {
    /// The `reason` field of an ACL LOG entry.
    pub fn log_name(self) -> &'static str {
        match self {
            Reason::Database => "database",
            Reason::Command => "command",
            Reason::Key => "key",
            Reason::Channel => "channel",
        }
    }
}

/// A refusal: its reason and the argument it is about (0: the command itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Denied {
    pub reason: Reason,
    pub pos: usize,
}

/// What is being checked: a resolved command (or subcommand) and its arguments, run in
/// database `db` of `databases`.
pub struct Request<'a, H: 'static> {
    pub cmd: &'static Command<H>,
    pub id: CmdId,
    pub argv: &'a [Bytes],
    pub db: usize,
    pub databases: usize,
}

/// Whether `user` may run `req`.
#[inline(always)]
pub fn check<H: Copy>(user: &User, cat: &Catalog, req: &Request<'_, H>) -> Result<(), Denied> {
    if let [only] = user.selectors.as_slice() {
        return check_selector(only, cat, req);
    }
    let mut worst: Option<Denied> = None;
    for s in &user.selectors {
        match check_selector(s, cat, req) {
            Ok(()) => return Ok(()),
            Err(d) => {
                let worse = worst
                    .is_none_or(|w| d.reason > w.reason || (d.reason == w.reason && d.pos > w.pos));
                if worse {
                    worst = Some(d);
                }
            }
        }
    }
    Err(worst.unwrap_or(Denied { reason: Reason::Database, pos: 0 }))
}

/// One selector's verdict. The common case (every database, the command's bit set, at
/// most one key at a fixed position, no channels) is decided here in a few instructions;
/// everything else goes through [`check_selector_fully`], which reaches the same verdict
/// for the common case too.
#[inline(always)]
fn check_selector<H: Copy>(
    s: &Selector,
    cat: &Catalog,
    req: &Request<'_, H>,
) -> Result<(), Denied> {
    let entry = cat.get(req.id);
    let simple = s.dbs.allows_all()
        && req.cmd.flags & flag::PUBSUB == 0
        && (s.all_commands || s.allows_command(req.id));
    if simple {
        match entry.keys {
            KeyPlan::None => return Ok(()),
            KeyPlan::Single(one) => {
                let Some(key) = req.argv.get(one.pos as usize) else { return Ok(()) };
                if key_allowed(s, key, one.flags_for(req.cmd, req.argv)) {
                    return Ok(());
                }
                return Err(Denied { reason: Reason::Key, pos: one.pos as usize });
            }
            KeyPlan::Specs => {}
        }
    }
    check_selector_fully(s, cat, req)
}

/// Both ways of judging one selector, for the tests that they agree.
#[cfg(test)]
pub(super) fn both_ways<H: Copy>(
    s: &Selector,
    cat: &Catalog,
    req: &Request<'_, H>,
) -> (Result<(), Denied>, Result<(), Denied>) {
    (check_selector(s, cat, req), check_selector_fully(s, cat, req))
}

#[inline(never)]
fn check_selector_fully<H: Copy>(
    s: &Selector,
    cat: &Catalog,
    req: &Request<'_, H>,
) -> Result<(), Denied> {
    let deny = |reason, pos| Err(Denied { reason, pos });
    let cmd = req.cmd;
    let entry = cat.get(req.id);
    let has_keys = entry.keys != KeyPlan::None;
    if !s.dbs.allows_all() {
        for pos in db_arguments(cmd.name, req.argv) {
            let id = crate::types::string::parse_i64(&req.argv[pos]);
            if let Some(id) = id.filter(|&id| id >= 0 && (id as usize) < req.databases) {
                if !s.dbs.allows(id as usize) {
                    return deny(Reason::Database, pos);
                }
            }
        }
        // The current database, for a command with keys or one of the keyspace's own
        // (SWAPDB, which names both of its databases, is not about the current one).
        let current = has_keys || (cmd.acl & cat::KEYSPACE != 0 && cmd.name != "swapdb");
        if current && !s.dbs.allows(req.db) {
            return deny(Reason::Database, 0);
        }
        if cmd.name == "flushall" {
            return deny(Reason::Database, 0);
        }
    }
    if !s.all_commands && cmd.flags & flag::NO_AUTH == 0 && !s.allows_command(req.id) {
        let arg_at = if entry.parent.is_some() { 2 } else { 1 };
        let allowed = req.argv.len() >= 2
            && req
                .argv
                .get(arg_at)
                .is_some_and(|a| s.first_args(req.id).iter().any(|f| f.eq_ignore_ascii_case(a)));
        if !allowed {
            return deny(Reason::Command, 0);
        }
    }
    if !s.all_keys && has_keys {
        // Keys are found again for each selector: cheaper than keeping them, for the one
        // or two keys of most commands.
        let mut refused = None;
        for_each_key(cmd, req.argv, |pos, flags| {
            let ok = key_allowed(s, &req.argv[pos as usize], flags);
            if !ok {
                refused = Some(pos as usize);
            }
            ok
        });
        if let Some(pos) = refused {
            return deny(Reason::Key, pos);
        }
    }
    if !s.all_channels && cmd.flags & flag::PUBSUB != 0 {
        for (pos, pattern) in channel_arguments(cmd.name, req.argv) {
            if !channel_allowed(&s.channels, &req.argv[pos], pattern) {
                return deny(Reason::Channel, pos);
            }
        }
    }
    Ok(())
}

/// Whether a selector's patterns let a key with key-spec `flags` be used.
#[inline(always)]
pub fn key_allowed(s: &Selector, key: &[u8], flags: u32) -> bool {
    if s.all_keys {
        return true;
    }
    let need = needed(flags);
    for p in &s.patterns {
        if p.perms & need == need && p.matches(key) {
            return true;
        }
    }
    false
}

/// The pattern permissions a key with key-spec `flags` needs: reading for ACCESS, writing
/// for INSERT, DELETE or UPDATE.
#[inline(always)]
fn needed(flags: u32) -> u8 {
    let mut need = 0;
    if flags & ks::ACCESS != 0 {
        need |= READ;
    }
    if flags & (ks::INSERT | ks::DELETE | ks::UPDATE) != 0 {
        need |= WRITE;
    }
    need
}

/// Whether a channel (or, for PSUBSCRIBE, a pattern, compared literally) is in the list.
pub fn channel_allowed(list: &[Vec<u8>], channel: &[u8], is_pattern: bool) -> bool {
    list.iter().any(|p| {
        if is_pattern {
            p.as_slice() == channel
        } else {
            glob_match(p, channel, false)
        }
    })
}

/// The arguments that name a database (SELECT, MOVE, SWAPDB, COPY ... DB).
fn db_arguments<'a>(name: &str, argv: &'a [Bytes]) -> impl Iterator<Item = usize> + 'a {
    let positions: Vec<usize> = match name {
        "select" => vec![1],
        "move" => vec![2],
        "swapdb" => vec![1, 2],
        "copy" => (3..argv.len().saturating_sub(1))
            .filter(|&i| argv[i].eq_ignore_ascii_case(b"DB"))
            .map(|i| i + 1)
            .take(1)
            .collect(),
        _ => Vec::new(),
    };
    positions.into_iter().filter(move |&p| p < argv.len())
}

/// The channels a command publishes or subscribes to, each with whether it is a pattern.
/// (Unsubscribing is never refused.)
fn channel_arguments(name: &str, argv: &[Bytes]) -> Vec<(usize, bool)> {
    match name {
        "publish" | "spublish" if argv.len() > 1 => vec![(1, false)],
        "subscribe" | "ssubscribe" => (1..argv.len()).map(|i| (i, false)).collect(),
        "psubscribe" => (1..argv.len()).map(|i| (i, true)).collect(),
        _ => Vec::new(),
    }
}

/// Whether some selector of `user` lets it read (or write) every key and run `req`: the
/// condition of SORT's BY and GET patterns and of other commands that touch keys they do
/// not name.
pub fn unrestricted_key_access<H: Copy>(
    user: &User,
    cat: &Catalog,
    req: &Request<'_, H>,
    flags: u32,
) -> bool {
    let need = needed(flags);
    user.selectors.iter().any(|s| {
        check_selector(s, cat, req).is_ok()
            && (s.all_keys
                || s.patterns.iter().any(|p| p.perms & need == need && p.pattern == b"*"))
    })
}
