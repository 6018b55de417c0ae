//! The shape of the command table: what a command is (name, arity, flags, ACL categories,
//! key specs, subcommands, documentation) and how its keys are found in an argv.
//!
//! Everything that needs to know about a command reads one table: dispatch (arity, flags,
//! handler), COMMAND INFO / DOCS / LIST / GETKEYS, key extraction for prefetching, the AOF's
//! and the transaction's checks. The entries themselves, with their handlers, live in the
//! command layer (`commands/defs.rs`); this layer below it knows a handler only as a type
//! parameter `H`, so that the layers between (the server core, persistence) can read the
//! table's facts without knowing what a handler is.

use bytes::Bytes;

/// A command's own key finder, for its key specs whose search is [`BeginSearch::Unknown`]
/// (Valkey's `getkeys_proc`, e.g. SORT's `STORE destination`, which may appear anywhere).
/// Called once per such spec with the full argv; it appends the argument indexes of the keys
/// *that spec* covers to `out` (so each key keeps the flags of its spec), and returns false
/// when the arguments do not allow extraction.
pub type GetKeys = fn(argv: &[Bytes], spec: &KeySpec, out: &mut KeyBuf) -> bool;

/// Command flags, as COMMAND INFO reports them.
pub mod flag {
    pub const WRITE: u64 = 1 << 0;
    pub const READONLY: u64 = 1 << 1;
    pub const DENYOOM: u64 = 1 << 2;
    pub const ADMIN: u64 = 1 << 3;
    pub const PUBSUB: u64 = 1 << 4;
    pub const NOSCRIPT: u64 = 1 << 5;
    pub const BLOCKING: u64 = 1 << 6;
    pub const LOADING: u64 = 1 << 7;
    pub const STALE: u64 = 1 << 8;
    pub const SKIP_MONITOR: u64 = 1 << 9;
    pub const SKIP_COMMANDLOG: u64 = 1 << 10;
    pub const FAST: u64 = 1 << 11;
    pub const NO_AUTH: u64 = 1 << 12;
    pub const MAY_REPLICATE: u64 = 1 << 13;
    pub const NO_MANDATORY_KEYS: u64 = 1 << 14;
    pub const NO_ASYNC_LOADING: u64 = 1 << 15;
    pub const NO_MULTI: u64 = 1 << 16;
    pub const MOVABLE_KEYS: u64 = 1 << 17;
    pub const ALLOW_BUSY: u64 = 1 << 18;
    /// Refused unless an `enable-*-command` setting allows the client (DEBUG): checked
    /// before authentication, as Valkey's `CMD_PROTECTED`. Not printed by COMMAND INFO.
    pub const PROTECTED: u64 = 1 << 19;
    /// May reach replicas, as `MAY_REPLICATE`, but Valkey 9.1's COMMAND INFO does not print
    /// it: PUBLISH, SPUBLISH, and PFCOUNT (which can rewrite its key's cached count).
    pub const MAY_REPLICATE_UNPRINTED: u64 = 1 << 20;
    /// Accepted in cluster mode on a slot being imported after ASKING (RESTORE-ASKING);
    /// printed only, as this server has no cluster mode.
    pub const ASKING: u64 = 1 << 21;

    /// Names in the order Valkey prints them.
    pub const NAMES: &[(u64, &str)] = &[
        (WRITE, "write"),
        (READONLY, "readonly"),
        (DENYOOM, "denyoom"),
        (ADMIN, "admin"),
        (PUBSUB, "pubsub"),
        (NOSCRIPT, "noscript"),
        (BLOCKING, "blocking"),
        (LOADING, "loading"),
        (STALE, "stale"),
        (SKIP_MONITOR, "skip_monitor"),
        (SKIP_COMMANDLOG, "skip_commandlog"),
        (ASKING, "asking"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        (MAY_REPLICATE, "may_replicate"),
        (NO_MANDATORY_KEYS, "no_mandatory_keys"),
        (NO_ASYNC_LOADING, "no_async_loading"),
        (NO_MULTI, "no_multi"),
        (MOVABLE_KEYS, "movablekeys"),
        (ALLOW_BUSY, "allow_busy"),
    ];
}

/// ACL categories.
pub mod acl {
    pub const KEYSPACE: u64 = 1 << 0;
    pub const READ: u64 = 1 << 1;
    pub const WRITE: u64 = 1 << 2;
    pub const SET: u64 = 1 << 3;
    pub const SORTEDSET: u64 = 1 << 4;
    pub const LIST: u64 = 1 << 5;
    pub const HASH: u64 = 1 << 6;
    pub const STRING: u64 = 1 << 7;
    pub const BITMAP: u64 = 1 << 8;
    pub const HYPERLOGLOG: u64 = 1 << 9;
    pub const GEO: u64 = 1 << 10;
    pub const STREAM: u64 = 1 << 11;
    pub const PUBSUB: u64 = 1 << 12;
    pub const ADMIN: u64 = 1 << 13;
    pub const FAST: u64 = 1 << 14;
    pub const SLOW: u64 = 1 << 15;
    pub const BLOCKING: u64 = 1 << 16;
    pub const DANGEROUS: u64 = 1 << 17;
    pub const CONNECTION: u64 = 1 << 18;
    pub const TRANSACTION: u64 = 1 << 19;
    pub const SCRIPTING: u64 = 1 << 20;

    pub const NAMES: &[(u64, &str)] = &[
        (KEYSPACE, "keyspace"),
        (READ, "read"),
        (WRITE, "write"),
        (SET, "set"),
        (SORTEDSET, "sortedset"),
        (LIST, "list"),
        (HASH, "hash"),
        (STRING, "string"),
        (BITMAP, "bitmap"),
        (HYPERLOGLOG, "hyperloglog"),
        (GEO, "geo"),
        (STREAM, "stream"),
        (PUBSUB, "pubsub"),
        (ADMIN, "admin"),
        (FAST, "fast"),
        (SLOW, "slow"),
        (BLOCKING, "blocking"),
        (DANGEROUS, "dangerous"),
        (CONNECTION, "connection"),
        (TRANSACTION, "transaction"),
        (SCRIPTING, "scripting"),
    ];
}

/// Key-spec flags, as COMMAND INFO prints them.
pub mod ks {
    pub const RO: u32 = 1 << 0;
    pub const RW: u32 = 1 << 1;
    pub const OW: u32 = 1 << 2;
    pub const RM: u32 = 1 << 3;
    pub const ACCESS: u32 = 1 << 4;
    pub const UPDATE: u32 = 1 << 5;
    pub const INSERT: u32 = 1 << 6;
    pub const DELETE: u32 = 1 << 7;
    pub const NOT_KEY: u32 = 1 << 8;
    pub const INCOMPLETE: u32 = 1 << 9;
    pub const VARIABLE_FLAGS: u32 = 1 << 10;

    pub const NAMES: &[(u32, &str)] = &[
        (RO, "RO"),
        (RW, "RW"),
        (OW, "OW"),
        (RM, "RM"),
        (ACCESS, "access"),
        (UPDATE, "update"),
        (INSERT, "insert"),
        (DELETE, "delete"),
        (NOT_KEY, "not_key"),
        (INCOMPLETE, "incomplete"),
        (VARIABLE_FLAGS, "variable_flags"),
    ];
}

/// Where the search for keys begins.
#[derive(Clone, Copy, Debug)]
pub enum BeginSearch {
    /// At this argument index.
    Index(i32),
    /// After the first (or, with a negative start, last) occurrence of a keyword.
    Keyword { keyword: &'static str, start_from: i32 },
    /// Not describable by a spec: the command's [`GetKeys`] finds the keys (COMMAND INFO
    /// prints `unknown` with an empty spec, as Valkey does).
    Unknown,
}

/// How keys are found from the beginning.
#[derive(Clone, Copy, Debug)]
pub enum FindKeys {
    /// `lastkey` relative to begin (-1 = last argument), every `step`, `limit` as in Valkey.
    Range { last_key: i32, step: i32, limit: i32 },
    /// The number of keys is at `keynum_idx`, keys start at `first_key`, every `step`.
    Keynum { keynum_idx: i32, first_key: i32, step: i32 },
    /// Goes with [`BeginSearch::Unknown`].
    Unknown,
}

#[derive(Clone, Copy, Debug)]
pub struct KeySpec {
    pub flags: u32,
    pub begin: BeginSearch,
    pub find: FindKeys,
}

/// One command (or subcommand).
#[derive(Debug)]
pub struct Command<H: 'static> {
    /// Lower case; subcommands are `parent|sub`.
    pub name: &'static str,
    pub arity: i32,
    pub flags: u64,
    pub acl: u64,
    pub key_specs: &'static [KeySpec],
    /// Valkey's `notes` text of key spec `i` (COMMAND INFO prints it first in the spec's
    /// map), or `""` for none; may be shorter than `key_specs`. Kept here rather than in
    /// [`KeySpec`] so that the specs stay plain three-field values.
    pub key_notes: &'static [&'static str],
    /// Finds the keys of the [`BeginSearch::Unknown`] specs; None when there are none.
    pub getkeys: Option<GetKeys>,
    pub subcommands: &'static [Command<H>],
    /// None for container commands whose work is done by subcommands.
    pub handler: Option<H>,
    pub group: &'static str,
    pub since: &'static str,
    pub summary: &'static str,
    pub complexity: &'static str,
    pub tips: &'static [&'static str],
    /// COMMAND DOCS `history`: (version, what changed), in the order Valkey lists them.
    pub history: &'static [(&'static str, &'static str)],
    /// COMMAND DOCS `doc_flags` (`syscmd`, `deprecated`).
    pub doc_flags: &'static [&'static str],
    /// COMMAND DOCS `deprecated_since` and `replaced_by` of a deprecated command.
    pub deprecated: Option<(&'static str, &'static str)>,
}

impl<H: Copy + 'static> Command<H> {
    /// Legacy (first, last, step) key positions derived from the key specs, as Valkey does.
    pub fn legacy_range(&self) -> (i32, i32, i32) {
        let mut first = 0;
        let mut last = 0;
        let mut step = 0;
        for (i, spec) in self.key_specs.iter().enumerate() {
            let BeginSearch::Index(b) = spec.begin else { break };
            let FindKeys::Range { last_key, step: s, limit: _ } = spec.find else { break };
            let this_last = if last_key < 0 { last_key } else { b + last_key };
            if i == 0 {
                first = b;
                last = this_last;
                step = s;
            } else if step == s && last >= 0 && b == last + step {
                last = this_last;
            } else {
                break;
            }
        }
        (first, last, step)
    }

    pub fn is_write(&self) -> bool {
        self.flags & flag::WRITE != 0
    }

    /// Whether the command may reach replicas without being a write (printed or not): it
    /// waits out CLIENT PAUSE WRITE and is refused in read-only scripts.
    pub fn may_replicate(&self) -> bool {
        self.flags & (flag::MAY_REPLICATE | flag::MAY_REPLICATE_UNPRINTED) != 0
    }

    /// Find a subcommand by (case-insensitive) name.
    pub fn subcommand(&self, name: &[u8]) -> Option<&'static Command<H>> {
        self.subcommands.iter().find(|c| {
            let short = c.name.rsplit('|').next().unwrap_or(c.name);
            short.as_bytes().eq_ignore_ascii_case(name)
        })
    }

    /// Whether `argc` arguments satisfy the arity.
    pub fn arity_ok(&self, argc: usize) -> bool {
        let a = self.arity;
        (a > 0 && argc == a as usize) || (a < 0 && argc >= (-a) as usize)
    }
}

/// Extract key positions of `argv` for `cmd` into `out` (argument indexes). Returns false
/// when the arguments do not allow extraction (e.g. a bad numkeys), leaving `out` empty.
pub fn key_positions<H: Copy>(cmd: &Command<H>, argv: &[Bytes], out: &mut KeyBuf) -> bool {
    key_positions_of(cmd, argv, out, u32::MAX)
}

/// [`key_positions`] restricted to key specs with one of the `flags`.
fn key_positions_of<H: Copy>(
    cmd: &Command<H>,
    argv: &[Bytes],
    out: &mut KeyBuf,
    flags: u32,
) -> bool {
    out.clear();
    if cmd.name == "migrate" {
        // Its KEYS spec is incomplete: its own procedure decides (see `keys::migrate_keys`).
        let Some(keys) = super::keys::migrate_keys(argv) else { return false };
        keys.for_each(|pos| out.push(pos));
        return true;
    }
    for spec in cmd.key_specs {
        if spec.flags & ks::NOT_KEY != 0 || spec.flags & flags == 0 {
            continue;
        }
        if !spec_key_positions(cmd, spec, argv, out) {
            out.clear();
            return false;
        }
    }
    true
}

/// Appends to `out` the argument indexes of the keys that one key spec of `cmd` finds in
/// `argv`. Returns false when the arguments do not allow extraction (a bad numkeys, or the
/// command's own finder refusing them); `out` may then hold part of the keys.
pub fn spec_key_positions<H: Copy>(
    cmd: &Command<H>,
    spec: &KeySpec,
    argv: &[Bytes],
    out: &mut KeyBuf,
) -> bool {
    let argc = argv.len() as i32;
    let begin = match spec.begin {
        BeginSearch::Index(i) => i,
        BeginSearch::Keyword { keyword, start_from } => {
            let found = if start_from >= 0 {
                (start_from..argc)
                    .find(|&i| argv[i as usize].eq_ignore_ascii_case(keyword.as_bytes()))
            } else {
                let start = argc + start_from;
                (1..=start)
                    .rev()
                    .find(|&i| argv[i as usize].eq_ignore_ascii_case(keyword.as_bytes()))
            };
            match found {
                Some(i) => i + 1,
                None => return true,
            }
        }
        BeginSearch::Unknown => return cmd.getkeys.is_none_or(|find| find(argv, spec, out)),
    };
    if begin >= argc {
        // A keyword that ends the line has no keys after it; a fixed position past the end
        // is a call the spec cannot apply to, as Valkey's `getKeysUsingKeySpecs` judges it
        // (`PFMERGE dest` without source keys: GETKEYS answers "Invalid arguments").
        return matches!(spec.begin, BeginSearch::Keyword { .. });
    }
    let (first, last, step) = match spec.find {
        FindKeys::Range { last_key, step, limit } => {
            let last = if last_key >= 0 {
                begin + last_key
            } else if limit <= 1 {
                argc + last_key
            } else {
                begin + (argc - begin) / limit - 1
            };
            (begin, last.min(argc - 1), step.max(1))
        }
        FindKeys::Keynum { keynum_idx, first_key, step } => {
            let idx = (begin + keynum_idx) as usize;
            let Some(n) = argv.get(idx).and_then(|a| crate::types::string::parse_i64(a)) else {
                return false;
            };
            // No keys is no match either, as Valkey's key procedures judge a count below 1:
            // EVAL with numkeys 0 has no keys at all (its NO_MANDATORY_KEYS lets GETKEYS
            // answer an empty list), ZUNIONSTORE's destination is not returned alone.
            if n < 1 || n > (argc as i64) {
                return false;
            }
            let first = begin + first_key;
            let last = first + (n as i32 - 1) * step;
            if last >= argc {
                return false;
            }
            (first, last, step.max(1))
        }
        // Only an Unknown begin goes with an Unknown find (the lint checks it), and that
        // was handled above.
        FindKeys::Unknown => return true,
    };
    let mut i = first;
    while i <= last {
        out.push(i as u32);
        i += step;
    }
    true
}

/// Argument indexes of keys (`u32`: a command may have more than 65,535 keys): a small
/// inline buffer, spilling to the heap only for many keys.
pub struct KeyBuf {
    inline: [std::mem::MaybeUninit<u32>; 16],
    len: usize,
    heap: Vec<u32>,
}

impl Default for KeyBuf {
    fn default() -> Self {
        KeyBuf::new()
    }
}

impl KeyBuf {
    pub fn new() -> KeyBuf {
        // Only `len` is initialised: slots are written before they are read.
        KeyBuf { inline: [std::mem::MaybeUninit::uninit(); 16], len: 0, heap: Vec::new() }
    }

    pub fn clear(&mut self) {
        self.len = 0;
        self.heap.clear();
    }

    pub fn push(&mut self, v: u32) {
        if self.len < self.inline.len() {
            self.inline[self.len].write(v);
        } else {
            if self.heap.is_empty() {
                self.heap.extend(self.as_slice_inline());
            }
            self.heap.push(v);
        }
        self.len += 1;
    }

    fn as_slice_inline(&self) -> Vec<u32> {
        (0..self.len.min(self.inline.len()))
            // SAFETY: slots below `len` (capped at the inline size) were written by `push`.
            .map(|i| unsafe { self.inline[i].assume_init() })
            .collect()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn get(&self, i: usize) -> u32 {
        assert!(i < self.len);
        if self.len > self.inline.len() {
            self.heap[i]
        } else {
            // SAFETY: i < len <= inline size, and slots below `len` were written by `push`.
            unsafe { self.inline[i].assume_init() }
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len).map(move |i| self.get(i))
    }
}

impl<H: Copy + 'static> Command<H> {
    /// A command with a handler; documentation and key specs are added with the builders.
    pub const fn new(
        name: &'static str,
        arity: i32,
        flags: u64,
        acl: u64,
        handler: H,
    ) -> Command<H> {
        Command {
            name,
            arity,
            flags,
            acl,
            key_specs: &[],
            key_notes: &[],
            getkeys: None,
            subcommands: &[],
            handler: Some(handler),
            group: "generic",
            since: "1.0.0",
            summary: "",
            complexity: "",
            tips: &[],
            history: &[],
            doc_flags: &[],
            deprecated: None,
        }
    }

    /// A container command whose subcommands do the work (CONFIG, CLIENT, ...).
    pub const fn container(
        name: &'static str,
        arity: i32,
        flags: u64,
        acl: u64,
        subcommands: &'static [Command<H>],
    ) -> Command<H> {
        Command {
            name,
            arity,
            flags,
            acl,
            key_specs: &[],
            key_notes: &[],
            getkeys: None,
            subcommands,
            handler: None,
            group: "generic",
            since: "1.0.0",
            summary: "",
            complexity: "",
            tips: &[],
            history: &[],
            doc_flags: &[],
            deprecated: None,
        }
    }

    pub const fn keys(mut self, key_specs: &'static [KeySpec]) -> Command<H> {
        self.key_specs = key_specs;
        self
    }

    /// Key-spec notes, by spec index (see [`Command::key_notes`]).
    pub const fn key_notes(mut self, notes: &'static [&'static str]) -> Command<H> {
        self.key_notes = notes;
        self
    }

    /// The finder of the keys of the `Unknown` key specs.
    pub const fn getkeys(mut self, f: GetKeys) -> Command<H> {
        self.getkeys = Some(f);
        self
    }

    /// The notes of key spec `i`, if it has any.
    pub fn key_spec_notes(&self, i: usize) -> Option<&'static str> {
        self.key_notes.get(i).copied().filter(|n| !n.is_empty())
    }

    pub const fn doc(
        mut self,
        group: &'static str,
        since: &'static str,
        summary: &'static str,
        complexity: &'static str,
    ) -> Command<H> {
        self.group = group;
        self.since = since;
        self.summary = summary;
        self.complexity = complexity;
        self
    }

    pub const fn tips(mut self, tips: &'static [&'static str]) -> Command<H> {
        self.tips = tips;
        self
    }

    /// The documented changes of the command, as (version, description).
    pub const fn history(mut self, history: &'static [(&'static str, &'static str)]) -> Command<H> {
        self.history = history;
        self
    }

    /// A deprecated command: since which version, and what replaces it (as COMMAND DOCS
    /// writes it, with its backquotes).
    pub const fn deprecated(mut self, since: &'static str, by: &'static str) -> Command<H> {
        self.deprecated = Some((since, by));
        self
    }

    pub const fn doc_flags(mut self, doc_flags: &'static [&'static str]) -> Command<H> {
        self.doc_flags = doc_flags;
        self
    }
}

/// A key spec starting at argument `begin`, with keys up to `last_key` (relative; -1 means
/// the last argument) every `step`.
pub const fn range(flags: u32, begin: i32, last_key: i32, step: i32) -> KeySpec {
    KeySpec {
        flags,
        begin: BeginSearch::Index(begin),
        find: FindKeys::Range { last_key, step, limit: 0 },
    }
}

/// A key spec whose key count is the argument at `begin`, the keys following it (ZUNION,
/// LMPOP, SINTERCARD, EVAL, FCALL...).
pub const fn keynum(flags: u32, begin: i32) -> KeySpec {
    KeySpec {
        flags,
        begin: BeginSearch::Index(begin),
        find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, step: 1 },
    }
}

/// Common key specs.
pub mod specs {
    use super::ks::*;
    use super::{range, KeySpec};

    /// One key at argv[1], read.
    pub const READ1: &[KeySpec] = &[range(RO | ACCESS, 1, 0, 1)];
    /// One key at argv[1], read without returning user data (EXISTS, TYPE, TTL...).
    pub const READ1_META: &[KeySpec] = &[range(RO, 1, 0, 1)];
    /// One key at argv[1], overwritten.
    pub const OVERWRITE1: &[KeySpec] = &[range(OW | UPDATE, 1, 0, 1)];
    /// One key at argv[1], read-modify-write.
    pub const RW1_UPDATE: &[KeySpec] = &[range(RW | ACCESS | UPDATE, 1, 0, 1)];
    /// One key at argv[1], updated without reading user data (EXPIRE, PERSIST).
    pub const RW1_META: &[KeySpec] = &[range(RW | UPDATE, 1, 0, 1)];
    /// Every argument from 1 is a key, read.
    pub const READ_ALL: &[KeySpec] = &[range(RO | ACCESS, 1, -1, 1)];
    /// Every argument from 1 is a key, read without data.
    pub const READ_ALL_META: &[KeySpec] = &[range(RO, 1, -1, 1)];
    /// Every argument from 1 is a key, deleted.
    pub const DELETE_ALL: &[KeySpec] = &[range(RM | DELETE, 1, -1, 1)];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<Bytes> {
        line.split(' ').map(|w| Bytes::copy_from_slice(w.as_bytes())).collect()
    }

    fn positions(cmd: &Command<()>, line: &str) -> Option<Vec<u32>> {
        let mut out = KeyBuf::new();
        key_positions(cmd, &argv(line), &mut out).then(|| out.iter().collect())
    }

    /// When a spec cannot be applied, as Valkey's `getKeysUsingKeySpecs` judges it: a fixed
    /// position past the end, a count below 1; a keyword that is absent only finds nothing.
    #[test]
    fn specs_that_do_not_apply() {
        const PFMERGE: &[KeySpec] = &[range(ks::RW, 1, 0, 1), range(ks::RO, 2, -1, 1)];
        let pfmerge = Command::new("pfmerge", -2, 0, 0, ()).keys(PFMERGE);
        assert_eq!(positions(&pfmerge, "pfmerge d a b"), Some(vec![1, 2, 3]));
        assert_eq!(positions(&pfmerge, "pfmerge d"), None);

        const ZUNIONSTORE: &[KeySpec] = &[range(ks::OW, 1, 0, 1), keynum(ks::RO, 2)];
        let zunionstore = Command::new("zunionstore", -4, 0, 0, ()).keys(ZUNIONSTORE);
        assert_eq!(positions(&zunionstore, "zunionstore d 2 a b"), Some(vec![1, 3, 4]));
        assert_eq!(positions(&zunionstore, "zunionstore d 0 a"), None);
        assert_eq!(positions(&zunionstore, "zunionstore d 3 a b"), None);
        assert_eq!(positions(&zunionstore, "zunionstore d x a"), None);

        const STREAMS: &[KeySpec] = &[KeySpec {
            flags: ks::RO,
            begin: BeginSearch::Keyword { keyword: "STREAMS", start_from: 1 },
            find: FindKeys::Range { last_key: -1, step: 1, limit: 2 },
        }];
        let xread = Command::new("xread", -4, 0, 0, ()).keys(STREAMS);
        assert_eq!(positions(&xread, "xread streams a b 0 0"), Some(vec![2, 3]));
        assert_eq!(positions(&xread, "xread count 1 block"), Some(vec![]));
    }
}
