//! A parsed command waiting to run: its arguments, its entry in the command table and the
//! hashes of its first keys, found where it was parsed (an I/O thread when there are some):
//! the batch prefetches the keys' buckets, and dispatch runs the entry without looking the
//! name up again.

use bytes::Bytes;

use crate::commands::Command;

/// Key hashes computed with a parsed command (up to this many keys; the rest are hashed
/// when prefetched).
pub const PARSED_HASHES_MAX: usize = crate::keyspace::db::HASHED_KEYS_MAX;

/// A parsed command: its arguments (slices of the query buffer) and the hashes of its first
/// keys, computed where it was parsed (an I/O thread, with io-threads > 1) for prefetching.
pub struct Parsed {
    pub argv: Vec<Bytes>,
    /// The table's entry for `argv[0]` (None: no such command); its subcommand and arity
    /// are dispatch's to check.
    pub cmd: Option<&'static Command>,
    pub key_hashes: [u64; PARSED_HASHES_MAX],
    /// Argument index of each hashed key.
    pub key_args: [u32; PARSED_HASHES_MAX],
    /// Hashes set in `key_hashes`.
    pub key_hashes_len: u8,
    /// The command has more keys than `key_hashes` holds.
    pub more_keys: bool,
}

impl Parsed {
    /// Parse-time work beyond the RESP parser: find the keys from the command table's key
    /// specs and hash the first few with the keyspace's hasher (a pure function).
    pub fn new(argv: Vec<Bytes>, keys: &mut crate::spec::table::KeyBuf) -> Parsed {
        let cmd = crate::commands::lookup(&argv[0]);
        let mut p = Parsed {
            argv,
            cmd,
            key_hashes: [0; PARSED_HASHES_MAX],
            key_args: [0; PARSED_HASHES_MAX],
            key_hashes_len: 0,
            more_keys: false,
        };
        let Some(cmd) = cmd else { return p };
        if cmd.key_specs.is_empty() || !cmd.arity_ok(p.argv.len()) {
            return p;
        }
        if !crate::spec::table::key_positions(cmd, &p.argv, keys) {
            return p;
        }
        for (n, i) in keys.iter().enumerate() {
            if n == PARSED_HASHES_MAX {
                p.more_keys = true;
                break;
            }
            p.key_hashes[n] = crate::table::hash_key(&p.argv[i as usize]);
            p.key_args[n] = i;
            p.key_hashes_len += 1;
        }
        p
    }

    /// The hashed keys for the database's lookups (see `HashedKeys`). Built where the
    /// command runs: a `Parsed` stays small, as it moves between threads and queues.
    #[inline]
    pub fn hashed(&self) -> crate::keyspace::db::HashedKeys {
        let mut h = crate::keyspace::db::HashedKeys::default();
        for n in 0..self.key_hashes_len as usize {
            h.push(&self.argv[self.key_args[n] as usize], self.key_hashes[n]);
        }
        h
    }

    pub fn hashes(&self) -> &[u64] {
        &self.key_hashes[..self.key_hashes_len as usize]
    }

    /// (hash, key) of each hashed key.
    pub fn hashed_keys(&self) -> impl Iterator<Item = (u64, &[u8])> {
        (0..self.key_hashes_len as usize)
            .map(|n| (self.key_hashes[n], &self.argv[self.key_args[n] as usize][..]))
    }
}
