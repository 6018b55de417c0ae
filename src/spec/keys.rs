//! Keys with the flags of the key spec that found each, for COMMAND GETKEYSANDFLAGS and the
//! ACL key checks (which compare a key's read/write flags with `%R~` / `%W~` patterns).
//! Where a command's specs carry `VARIABLE_FLAGS`, the flags come from the arguments, as
//! Valkey's per-command key procedures give them (SET with or without GET, BITFIELD with or
//! without SET/INCRBY, GEORADIUS's last STORE).

use bytes::Bytes;

use super::table::{ks, spec_key_positions, BeginSearch, Command, FindKeys, KeyBuf};

/// Key positions with their spec's flags, spec by spec; `None` when a spec cannot be
/// applied to these arguments (as `key_positions` reports for the whole command).
pub fn keys_with_flags<H: Copy>(cmd: &Command<H>, argv: &[Bytes]) -> Option<Vec<(u32, u32)>> {
    let mut found = Vec::new();
    for_each_key(cmd, argv, |pos, flags| {
        found.push((pos, flags));
        true
    })?;
    Some(found)
}

/// Calls `f(position, flags)` for each key, spec by spec, in the order of
/// [`keys_with_flags`], without allocating for a few keys; `f` returns false to stop.
/// `None` when the arguments do not allow extraction, else whether every key was seen.
pub fn for_each_key<H: Copy>(
    cmd: &Command<H>,
    argv: &[Bytes],
    mut f: impl FnMut(u32, u32) -> bool,
) -> Option<bool> {
    // The common shape first: one key at a fixed position (GET, SET, HSET...).
    if let Some(one) = single_key(cmd) {
        if (one.pos as usize) >= argv.len() {
            return Some(true);
        }
        return Some(f(one.pos, one.flags_for(cmd, argv)));
    }
    if matches!(cmd.name, "georadius" | "georadiusbymember") {
        return Some(georadius_keys(argv).into_iter().all(|(pos, flags)| f(pos, flags)));
    }
    if cmd.name == "migrate" {
        let flags = cmd.key_specs.first().map_or(0, |s| s.flags);
        return Some(migrate_keys(argv)?.all(|pos| f(pos, flags)));
    }
    let mut keys = KeyBuf::new();
    for spec in cmd.key_specs {
        if spec.flags & ks::NOT_KEY != 0 {
            continue;
        }
        keys.clear();
        if !spec_key_positions(cmd, spec, argv, &mut keys) {
            return None;
        }
        let flags = resolve_variable_flags(cmd, argv, spec.flags);
        if !keys.iter().all(|pos| f(pos, flags)) {
            return Some(false);
        }
    }
    Some(true)
}

/// The one key of a command whose only key spec names a fixed position: the common shape
/// (GET, SET, HSET...), found without the spec machinery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SingleKey {
    pub pos: u32,
    /// The spec's flags; with `VARIABLE_FLAGS`, resolved per call by [`Self::flags_for`].
    pub flags: u32,
}

impl SingleKey {
    /// The key's flags for these arguments (SET's and BITFIELD's depend on them).
    #[inline(always)]
    pub fn flags_for<H: Copy>(self, cmd: &Command<H>, argv: &[Bytes]) -> u32 {
        if self.flags & ks::VARIABLE_FLAGS == 0 {
            self.flags
        } else {
            resolve_variable_flags(cmd, argv, self.flags)
        }
    }
}

/// The command's key when it has exactly one, at a fixed position.
pub fn single_key<H: Copy>(cmd: &Command<H>) -> Option<SingleKey> {
    let [spec] = cmd.key_specs else { return None };
    match (spec.begin, spec.find) {
        (BeginSearch::Index(i), FindKeys::Range { last_key: 0, .. })
            if spec.flags & ks::NOT_KEY == 0 =>
        {
            Some(SingleKey { pos: i as u32, flags: spec.flags })
        }
        _ => None,
    }
}

/// The flags a `VARIABLE_FLAGS` key spec has for these arguments, as Valkey's per-command
/// key procedures report them: SET reads the old value only with GET; BITFIELD writes
/// only with SET or INCRBY (or arguments it cannot parse).
#[inline]
fn resolve_variable_flags<H: Copy>(cmd: &Command<H>, argv: &[Bytes], flags: u32) -> u32 {
    const READ: u32 = ks::RO | ks::ACCESS;
    const READ_WRITE: u32 = ks::RW | ks::ACCESS | ks::UPDATE;
    if flags & ks::VARIABLE_FLAGS == 0 {
        return flags;
    }
    match cmd.name {
        "set" if argv.iter().skip(3).any(|a| a.eq_ignore_ascii_case(b"GET")) => READ_WRITE,
        "set" => ks::OW | ks::UPDATE,
        "bitfield" if bitfield_writes(&argv[2..]) => READ_WRITE,
        "bitfield" => READ,
        _ => flags,
    }
}

/// GEORADIUS and GEORADIUSBYMEMBER, whose specs have variable flags: Valkey asks its own
/// key procedure rather than the specs, and that procedure scans from the sixth argument
/// and keeps only the last STORE or STOREDIST destination (the one the command writes).
fn georadius_keys(argv: &[Bytes]) -> Vec<(u32, u32)> {
    let mut found = vec![(1, ks::RO | ks::ACCESS)];
    let mut store = None;
    let mut i = 5;
    while i + 1 < argv.len() {
        let a = &argv[i];
        if a.eq_ignore_ascii_case(b"STORE") || a.eq_ignore_ascii_case(b"STOREDIST") {
            store = Some(i as u32 + 1);
            i += 1;
        }
        i += 1;
    }
    found.extend(store.map(|pos| (pos, ks::OW | ks::UPDATE)));
    found
}

/// MIGRATE's keys, as Valkey's own key procedure finds them (its `KEYS` spec is
/// incomplete): the key at 3, or, when a `KEYS` comes after the fixed arguments (an `AUTH`
/// password or `AUTH2` user and password skipped) and is not the last argument, every
/// argument after it. `KEYS` with a key at 3 is no match (None).
pub fn migrate_keys(argv: &[Bytes]) -> Option<std::ops::Range<u32>> {
    let end = argv.len() as u32;
    let mut i = 6;
    while i + 1 < argv.len() {
        let a = &argv[i];
        if a.eq_ignore_ascii_case(b"KEYS") {
            return argv[3].is_empty().then_some(i as u32 + 1..end);
        }
        if a.eq_ignore_ascii_case(b"AUTH") {
            i += 1;
        } else if a.eq_ignore_ascii_case(b"AUTH2") {
            i += 2;
        }
        i += 1;
    }
    Some(3..4.min(end))
}

/// Whether BITFIELD's operations may write: SET / INCRBY, or anything not understood.
fn bitfield_writes(ops: &[Bytes]) -> bool {
    let mut i = 0;
    while i < ops.len() {
        let op = &ops[i];
        let rest = ops.len() - i - 1;
        if op.eq_ignore_ascii_case(b"GET") && rest >= 2 {
            i += 3;
        } else if op.eq_ignore_ascii_case(b"OVERFLOW") && rest >= 1 {
            i += 2;
        } else {
            // SET / INCRBY with their arguments, or a syntax error: assume a write.
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &str) -> Vec<Bytes> {
        words
            .split(' ')
            .filter(|w| !w.is_empty())
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect()
    }

    #[test]
    fn bitfield_writes_only_with_set_incrby_or_garbage() {
        assert!(!bitfield_writes(&args("")));
        assert!(!bitfield_writes(&args("GET u8 0 overflow SAT get i4 8")));
        assert!(bitfield_writes(&args("GET u8 0 SET u8 0 1")));
        assert!(bitfield_writes(&args("incrby u8 0 1")));
        assert!(bitfield_writes(&args("GET u8")));
        assert!(bitfield_writes(&args("bogus")));
    }

    #[test]
    fn set_flags_depend_on_get() {
        let set: Command<()> = Command::new("set", -3, 0, 0, ());
        let spec = ks::RW | ks::ACCESS | ks::UPDATE | ks::VARIABLE_FLAGS;
        assert_eq!(resolve_variable_flags(&set, &args("set k v"), spec), ks::OW | ks::UPDATE);
        let with_get = resolve_variable_flags(&set, &args("set k v nx Get"), spec);
        assert_eq!(with_get, ks::RW | ks::ACCESS | ks::UPDATE);
        // Without VARIABLE_FLAGS the spec's flags stand.
        assert_eq!(resolve_variable_flags(&set, &args("set k v"), ks::RO), ks::RO);
    }
}
