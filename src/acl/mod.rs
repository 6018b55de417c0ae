//! Access control (Valkey's ACL): users, the rules that shape their permissions, the checks
//! made before every command, and the log of refusals.
//!
//! # Model
//! A [`User`] has a flag (on/off), passwords kept only as SHA-256 hex (or `nopass`), and
//! selectors ([`Selector`]): the root one, which the rules outside parentheses change, and
//! any number added as `(...)`. A selector allows commands (a bitmap over the command
//! catalog's ids, [`catalog`]), keys (glob patterns, each for reading, writing or both),
//! pub/sub channels (glob patterns) and databases (Valkey 9.1's `db=` rules). A command
//! runs when one selector allows all of it ([`check`]).
//!
//! # Where things live
//! This layer sits on the command specification (`spec`): it knows a command by its table
//! entry and its key specs, never by its handler, and knows nothing of clients or sockets.
//! The server state owns one [`Acl`]; a client holds the [`UserId`] it authenticated as, an
//! index into the user table, so that changing a user changes what its connected clients
//! may do at once, and deleting it lets the server find and close them. Dispatch skips the
//! whole check for a user some selector of which allows everything (the default user's
//! case): a bool read per command.
//!
//! # Files
//! - `catalog.rs`: command ids and names for the bitmaps.
//! - `selector.rs`: one selector, its rules and how it is written back.
//! - `user.rs`: users, passwords, SETUSER's all-or-nothing staging.
//! - `check.rs`: the permission check.
//! - `log.rs`: ACL LOG.
//! - `file.rs`: the ACL file (`aclfile`) and `user` directives.

pub mod catalog;
pub mod check;
pub mod file;
pub mod log;
pub mod selector;
pub mod user;

use std::collections::BTreeMap;

#[cfg(test)]
mod tests;

pub use catalog::{Catalog, CmdId};
pub use selector::Selector;
pub use user::User;

/// A user's index in the table ([`Acl::user`]).
pub type UserId = u32;

/// The default user's id: every connection starts as it.
pub const DEFAULT_USER: UserId = 0;

/// Why one ACL rule was refused (Valkey's errno cases of `ACLSetUser`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetError {
    Syntax,
    Unknown,
    KeysAfterAll,
    ChannelsAfterAll,
    NoSuchPassword,
    BadHash,
    FirstArgOfSubcommand,
    DbOutOfRange,
}

impl SetError {
    /// Valkey's text for the error (`ACLSetUserStringError`).
    pub fn text(self) -> &'static str {
        match self {
            SetError::Syntax => "Syntax error",
            SetError::Unknown => "Unknown command or category name in ACL",
            SetError::KeysAfterAll => {
                "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and \
                 does not have any effect. Try 'resetkeys' to start with an empty list of patterns"
            }
            SetError::ChannelsAfterAll => {
                "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid \
                 and does not have any effect. Try 'resetchannels' to start with an empty list \
                 of channels"
            }
            SetError::NoSuchPassword => {
                "The password you are trying to remove from the user does not exist"
            }
            SetError::BadHash => {
                "The password hash must be exactly 64 characters and contain only lowercase \
                 hexadecimal characters"
            }
            SetError::FirstArgOfSubcommand => "Allowing first-arg of a subcommand is not supported",
            SetError::DbOutOfRange => "The provided database ID is out of range",
        }
    }
}

/// Refusals counted for INFO (`acl_access_denied_*`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Denials {
    pub auth: u64,
    pub cmd: u64,
    pub key: u64,
    pub channel: u64,
    pub db: u64,
}

/// The users, by name and by id, and the log of refusals.
#[derive(Debug)]
pub struct Acl {
    /// Slots by [`UserId`]; a deleted user's slot is empty until reused.
    users: Vec<Option<User>>,
    names: BTreeMap<Vec<u8>, UserId>,
    pub log: log::Log,
    pub denied: Denials,
}

impl Default for Acl {
    fn default() -> Acl {
        Acl::new()
    }
}

impl Acl {
    /// Only the default user, `on nopass ~* &* +@all`.
    pub fn new() -> Acl {
        let mut acl = Acl {
            users: Vec::new(),
            names: BTreeMap::new(),
            log: log::Log::default(),
            denied: Denials::default(),
        };
        acl.users.push(Some(User::default_user()));
        acl.names.insert(b"default".to_vec(), DEFAULT_USER);
        acl
    }

    /// The user with this id. Ids of deleted users are not handed out (their clients are
    /// moved to the default user when the user goes).
    pub fn user(&self, id: UserId) -> &User {
        self.users
            .get(id as usize)
            .and_then(Option::as_ref)
            .unwrap_or_else(|| self.users[0].as_ref().expect("the default user"))
    }

    pub fn default_user(&self) -> &User {
        self.user(DEFAULT_USER)
    }

    pub fn find(&self, name: &[u8]) -> Option<UserId> {
        self.names.get(name).copied()
    }

    /// Whether a new connection must authenticate: the default user has passwords or is
    /// off (Valkey's `authRequired`).
    pub fn auth_required(&self) -> bool {
        let d = self.default_user();
        !d.nopass || !d.enabled
    }

    /// The user `name` logs in as with `password`, if the pair is valid.
    pub fn authenticate(&self, name: &[u8], password: &[u8]) -> Option<UserId> {
        let id = self.find(name)?;
        self.user(id).accepts(password).then_some(id)
    }

    /// Users by name, in byte order (as `ACL LIST`, `ACL USERS` and the ACL file list them).
    pub fn users(&self) -> impl Iterator<Item = (UserId, &User)> {
        self.names.values().map(|&id| (id, self.user(id)))
    }

    /// `ACL SETUSER name rules...`: the user changed or created, all rules or none. Returns
    /// its id and, for an existing user, what it was before.
    pub fn set_user(
        &mut self,
        name: &[u8],
        rules: &[&[u8]],
        cat: &Catalog,
        all_channels: bool,
    ) -> Result<(UserId, Option<User>), Vec<u8>> {
        let existing = self.find(name);
        let old = existing.map(|id| self.user(id).clone());
        let new = User::with_rules(old.as_ref(), name, rules, cat, all_channels)?;
        let id = match existing {
            Some(id) => {
                self.users[id as usize] = Some(new);
                id
            }
            None => self.insert(new),
        };
        Ok((id, old))
    }

    /// Store `user`, replacing the user of the same name if there is one.
    pub fn put(&mut self, user: User) -> UserId {
        match self.find(&user.name) {
            Some(id) => {
                self.users[id as usize] = Some(user);
                id
            }
            None => self.insert(user),
        }
    }

    fn insert(&mut self, user: User) -> UserId {
        let name = user.name.clone();
        let id = match self.users.iter().position(Option::is_none) {
            Some(free) => {
                self.users[free] = Some(user);
                free as UserId
            }
            None => {
                self.users.push(Some(user));
                (self.users.len() - 1) as UserId
            }
        };
        self.names.insert(name, id);
        id
    }

    /// Remove a user (never the default one); its id, for closing its clients.
    pub fn delete(&mut self, name: &[u8]) -> Option<UserId> {
        if name == b"default" {
            return None;
        }
        let id = self.names.remove(name)?;
        self.users[id as usize] = None;
        Some(id)
    }

    /// `requirepass`: the default user gets exactly this password, or `nopass` when it is
    /// empty.
    pub fn set_default_password(&mut self, password: &[u8]) {
        let d = self.users[0].as_mut().expect("the default user");
        d.passwords.clear();
        d.nopass = password.is_empty();
        if !password.is_empty() {
            d.passwords.push(crate::util::sha256::sha256_hex(password));
        }
    }

    /// Replace every user with `users` (ACL LOAD, the file at start-up); a missing default
    /// user is the built-in one. Returns, for each old id, the new id of the user with the
    /// same name, if any.
    pub fn replace_all(&mut self, users: Vec<User>) -> Vec<(UserId, Option<UserId>)> {
        let old: Vec<(UserId, Vec<u8>)> =
            self.names.iter().map(|(n, &id)| (id, n.clone())).collect();
        let mut default = None;
        let mut others = Vec::new();
        for u in users {
            if u.name == b"default" {
                default = Some(u);
            } else {
                others.push(u);
            }
        }
        self.users = vec![Some(default.unwrap_or_else(User::default_user))];
        self.names = BTreeMap::from([(b"default".to_vec(), DEFAULT_USER)]);
        for u in others {
            self.insert(u);
        }
        old.into_iter().map(|(id, name)| (id, self.find(&name))).collect()
    }
}
