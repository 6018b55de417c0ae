//! COMMAND GETKEYS and COMMAND GETKEYSANDFLAGS: the keys of a full command line, found
//! through the same key specs (`table::key_positions`) that dispatch and ACL use.

use bytes::Bytes;

use crate::commands::table::{flag, key_positions, ks, Command, KeyBuf, KeySpec};
use crate::commands::{lookup, CmdError, CmdResult, ServerCtx};

use super::info::reply_names;

/// The command an argv names: a subcommand when the command is a container and a
/// subcommand name follows.
fn resolve(argv: &[Bytes]) -> Result<&'static Command, CmdError> {
    let cmd = lookup(&argv[0]).ok_or(CmdError::GetKeysUnknownCommand)?;
    match argv.get(1) {
        Some(sub) if !cmd.subcommands.is_empty() => {
            cmd.subcommand(sub).ok_or(CmdError::GetKeysUnknownCommand)
        }
        _ => Ok(cmd),
    }
}

/// Checks shared by both subcommands, in Valkey's order: known command, has key
/// arguments at all, arity.
fn checked(argv: &[Bytes]) -> Result<&'static Command, CmdError> {
    let cmd = resolve(argv)?;
    if !cmd.key_specs.iter().any(|s| s.flags & ks::NOT_KEY == 0) {
        return Err(CmdError::GetKeysNoKeyArgs);
    }
    if !cmd.arity_ok(argv.len()) {
        return Err(CmdError::GetKeysWrongArity);
    }
    Ok(cmd)
}

/// No keys found: an empty reply for commands whose keys are optional, else an error.
fn no_keys(ctx: &mut ServerCtx, cmd: &Command) -> CmdResult {
    if cmd.flags & flag::NO_MANDATORY_KEYS == 0 {
        return Err(CmdError::GetKeysInvalidArgs);
    }
    ctx.out.array(0);
    Ok(())
}

/// `COMMAND GETKEYS cmd arg...`: the key arguments.
pub fn getkeys(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let target = &argv[2..];
    let cmd = checked(target)?;
    let found = match keys_with_flags(cmd, target) {
        Some(found) if !found.is_empty() => found,
        _ => return no_keys(ctx, cmd),
    };
    ctx.out.array(found.len());
    for (pos, _) in found {
        ctx.out.bulk(&target[pos as usize]);
    }
    Ok(())
}

/// `COMMAND GETKEYSANDFLAGS cmd arg...`: each key with the flags of the key spec that
/// found it.
pub fn getkeys_and_flags(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let target = &argv[2..];
    let cmd = checked(target)?;
    let found = match keys_with_flags(cmd, target) {
        Some(found) if !found.is_empty() => found,
        _ => return no_keys(ctx, cmd),
    };
    ctx.out.array(found.len());
    for (pos, flags) in found {
        ctx.out.array(2);
        ctx.out.bulk(&target[pos as usize]);
        reply_names(ctx.out, ks::NAMES, flags, "");
    }
    Ok(())
}

/// Key positions with their spec's flags, spec by spec; `None` when a spec cannot be
/// applied to these arguments (as `key_positions` reports for the whole command).
fn keys_with_flags(cmd: &'static Command, argv: &[Bytes]) -> Option<Vec<(u32, u32)>> {
    if matches!(cmd.name, "georadius" | "georadiusbymember") {
        return Some(georadius_keys(argv));
    }
    let mut found = Vec::new();
    let mut keys = KeyBuf::new();
    for spec in cmd.key_specs {
        let one: &'static [KeySpec] = std::slice::from_ref(spec);
        let single = Command { key_specs: one, ..*cmd };
        if !key_positions(&single, argv, &mut keys) {
            return None;
        }
        let flags = resolve_variable_flags(cmd, argv, spec.flags);
        found.extend(keys.iter().map(|pos| (pos, flags)));
    }
    Some(found)
}

/// The flags a `VARIABLE_FLAGS` key spec has for these arguments, as Valkey's per-command
/// key procedures report them: SET reads the old value only with GET; BITFIELD writes
/// only with SET or INCRBY (or arguments it cannot parse).
fn resolve_variable_flags(cmd: &Command, argv: &[Bytes], flags: u32) -> u32 {
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
        let set = Command::new("set", -3, 0, 0, crate::commands::table::Data(|_, _| Ok(())));
        let spec = ks::RW | ks::ACCESS | ks::UPDATE | ks::VARIABLE_FLAGS;
        assert_eq!(resolve_variable_flags(&set, &args("set k v"), spec), ks::OW | ks::UPDATE);
        let with_get = resolve_variable_flags(&set, &args("set k v nx Get"), spec);
        assert_eq!(with_get, ks::RW | ks::ACCESS | ks::UPDATE);
        // Without VARIABLE_FLAGS the spec's flags stand.
        assert_eq!(resolve_variable_flags(&set, &args("set k v"), ks::RO), ks::RO);
    }
}
