//! The commands as ACL sees them: every command and subcommand gets a small id, its bit in a
//! selector's bitmap of allowed commands, and is found by its full name (`get`,
//! `config|get`) the way `ACL SETUSER +name` spells it.
//!
//! The catalog is built once from the static command table. Dispatch holds the table entry
//! (`&'static Command`), not an id, so the catalog also maps an entry's address to its id:
//! one hash probe on a pointer, and only for users whose rules are not "everything".

use std::collections::HashMap;

use crate::spec::keys::{single_key, SingleKey};
use crate::spec::table::{acl as cat, ks, Command};

/// A command's index in the catalog and its bit in a selector's bitmap.
pub type CmdId = u16;

/// Bits in a selector's bitmap (Valkey's `USER_COMMAND_BITS_COUNT`).
pub const BITS: usize = 1024;

/// What ACL needs to know of one command or subcommand.
#[derive(Debug)]
pub struct Entry {
    /// Lower case; a subcommand is `parent|sub` (Valkey's `fullname`).
    pub name: &'static str,
    /// ACL categories (`spec::table::acl`).
    pub categories: u64,
    /// Command flags (`spec::table::flag`).
    pub flags: u64,
    pub parent: Option<CmdId>,
    pub subs: Vec<CmdId>,
    /// Where its keys are, worked out once from the key specs for the key check.
    pub keys: KeyPlan,
}

/// The keys of a command, as the ACL key check looks for them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyPlan {
    /// No key spec names a key.
    None,
    /// One key at a fixed position: checked without the spec machinery.
    Single(SingleKey),
    /// Anything else: the key specs are applied to each call.
    Specs,
}

impl KeyPlan {
    fn of<H: Copy>(cmd: &Command<H>) -> KeyPlan {
        if cmd.key_specs.iter().all(|k| k.flags & ks::NOT_KEY != 0) {
            KeyPlan::None
        } else if let Some(one) = single_key(cmd) {
            KeyPlan::Single(one)
        } else {
            KeyPlan::Specs
        }
    }
}

/// Every command and subcommand of the table, with its id.
pub struct Catalog {
    entries: Vec<Entry>,
    by_name: HashMap<&'static str, CmdId>,
    by_addr: AddrMap,
}

/// Table entry address -> id: open addressing over a power-of-two array at most a quarter
/// full, hashed by one multiplication. This is the lookup of every command a restricted
/// user runs, so it is kept to a few instructions and one cache line.
struct AddrMap {
    slots: Vec<(usize, CmdId)>,
    shift: u32,
}

impl AddrMap {
    fn with_capacity(n: usize) -> AddrMap {
        let size = (n * 4).next_power_of_two().max(16);
        AddrMap { slots: vec![(0, 0); size], shift: 64 - size.trailing_zeros() }
    }

    fn slot(&self, addr: usize) -> usize {
        ((addr as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    fn insert(&mut self, addr: usize, id: CmdId) {
        let mask = self.slots.len() - 1;
        let mut i = self.slot(addr);
        while self.slots[i].0 != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = (addr, id);
    }

    fn get(&self, addr: usize) -> Option<CmdId> {
        let mask = self.slots.len() - 1;
        let mut i = self.slot(addr);
        loop {
            match self.slots[i] {
                (0, _) => return None,
                (a, id) if a == addr => return Some(id),
                _ => i = (i + 1) & mask,
            }
        }
    }
}

impl Catalog {
    /// Numbers `top` (the top-level commands) and their subcommands in table order.
    pub fn build<H: Copy + 'static>(top: impl IntoIterator<Item = &'static Command<H>>) -> Catalog {
        let top: Vec<&'static Command<H>> = top.into_iter().collect();
        let n = top.iter().map(|c| 1 + c.subcommands.len()).sum();
        let mut c = Catalog {
            entries: Vec::new(),
            by_name: HashMap::new(),
            by_addr: AddrMap::with_capacity(n),
        };
        for cmd in top {
            let id = c.add(cmd, None);
            for sub in cmd.subcommands {
                let sid = c.add(sub, Some(id));
                c.entries[id as usize].subs.push(sid);
            }
        }
        assert!(c.entries.len() < BITS, "more commands than ACL bitmap bits");
        c
    }

    fn add<H: Copy + 'static>(&mut self, cmd: &'static Command<H>, parent: Option<CmdId>) -> CmdId {
        let id = self.entries.len() as CmdId;
        self.entries.push(Entry {
            name: cmd.name,
            categories: cmd.acl,
            flags: cmd.flags,
            parent,
            subs: Vec::new(),
            keys: KeyPlan::of(cmd),
        });
        self.by_name.insert(cmd.name, id);
        self.by_addr.insert(cmd as *const Command<H> as usize, id);
        id
    }

    /// The id of a table entry (a command or subcommand of the table this was built from).
    pub fn id_of<H>(&self, cmd: &'static Command<H>) -> Option<CmdId> {
        self.by_addr.get(cmd as *const Command<H> as usize)
    }

    pub fn get(&self, id: CmdId) -> &Entry {
        &self.entries[id as usize]
    }

    /// Every id, in table order.
    pub fn ids(&self) -> impl Iterator<Item = CmdId> {
        0..self.entries.len() as CmdId
    }

    /// A command by the name ACL rules use, case-insensitively: `get`, or `config|get` for a
    /// subcommand (a `|` after a command without subcommands, or two of them, find
    /// nothing), as Valkey's `ACLLookupCommand`.
    pub fn find(&self, name: &[u8]) -> Option<CmdId> {
        let lower = String::from_utf8(name.to_ascii_lowercase()).ok()?;
        let mut parts = lower.split('|');
        let top = parts.next()?;
        let id = *self.by_name.get(top)?;
        match (parts.next(), parts.next()) {
            (None, _) => Some(id),
            (Some(sub), None) => {
                let e = self.get(id);
                if e.parent.is_some() {
                    return None;
                }
                e.subs.iter().copied().find(|&s| self.get(s).name.rsplit('|').next() == Some(sub))
            }
            _ => None,
        }
    }
}

/// A category by name, case-insensitively (`read`, `keyspace`...): its flag.
pub fn category(name: &[u8]) -> Option<u64> {
    cat::NAMES.iter().find(|(_, n)| n.as_bytes().eq_ignore_ascii_case(name)).map(|&(f, _)| f)
}
