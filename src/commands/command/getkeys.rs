//! COMMAND GETKEYS and COMMAND GETKEYSANDFLAGS: the keys of a full command line, found
//! through the same key specs (`table::key_positions`) that dispatch and ACL use.

use bytes::Bytes;

use crate::commands::table::{flag, ks, Command};
use crate::commands::{lookup, CmdError, CmdResult, ServerCtx};
use crate::spec::keys::keys_with_flags;

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
