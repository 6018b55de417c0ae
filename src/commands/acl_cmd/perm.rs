//! The ACL permission check as the server runs it: before a command (dispatch), again for
//! each queued command at EXEC, and for each `server.call` of a script. A refusal is
//! counted for INFO, written to the ACL log with the client's CLIENT INFO line, and turned
//! into Valkey's NOPERM text; ACL DRYRUN asks the same question without the log.

use bytes::Bytes;

use crate::acl::check::{check, Denied, Reason, Request};
use crate::acl::log::{Context, Refusal};
use crate::acl::UserId;
use crate::commands::table::Command;
use crate::server::client::Client;
use crate::server::state::ServerState;

/// Whether `user` may run `cmd argv` in database `db`.
pub fn allowed(
    srv: &ServerState,
    user: UserId,
    cmd: &'static Command,
    argv: &[Bytes],
    db: usize,
) -> Result<(), Denied> {
    let u = srv.acl.user(user);
    if u.unrestricted() {
        return Ok(());
    }
    let cat = super::catalog();
    let Some(id) = cat.id_of(cmd) else { return Ok(()) };
    check(u, cat, &Request { cmd, id, argv, db, databases: srv.dbs.len() })
}

/// Count a refusal and log it (with `client_info`, the refused client's CLIENT INFO line).
#[allow(clippy::too_many_arguments)]
pub fn record(
    srv: &mut ServerState,
    client: &Client,
    client_info: Vec<u8>,
    cmd: &'static Command,
    argv: &[Bytes],
    denied: Denied,
    context: Context,
    now_ms: i64,
) {
    let d = &mut srv.acl.denied;
    match denied.reason {
        Reason::Database => d.db += 1,
        Reason::Command => d.cmd += 1,
        Reason::Key => d.key += 1,
        Reason::Channel => d.channel += 1,
    }
    let object = match denied.reason {
        Reason::Command => cmd.name.as_bytes().to_vec(),
        Reason::Database if denied.pos == 0 => cmd.name.as_bytes().to_vec(),
        _ => argv[denied.pos].to_vec(),
    };
    let refusal = Refusal {
        reason: denied.reason.log_name(),
        context,
        object,
        username: srv.acl.user(client.user).name.clone(),
        client_info,
    };
    let max = srv.config.general.acllog_max_len as usize;
    srv.acl.log.add(refusal, now_ms, max);
}

/// A failed AUTH or HELLO AUTH: counted and logged under the user name tried.
pub fn record_auth_failure(
    srv: &mut ServerState,
    client: &Client,
    client_info: Vec<u8>,
    command: &[u8],
    username: &[u8],
    now_ms: i64,
) {
    srv.acl.denied.auth += 1;
    let refusal = Refusal {
        reason: "auth",
        context: if client.in_exec { Context::Multi } else { Context::Toplevel },
        object: command.to_vec(),
        username: username.to_vec(),
        client_info,
    };
    let max = srv.config.general.acllog_max_len as usize;
    srv.acl.log.add(refusal, now_ms, max);
}

/// The refusal in Valkey's words (`getAclErrorMessage`): ACL DRYRUN's `verbose` form names
/// the key, channel or database argument; the NOPERM reply does not.
pub fn message(
    srv: &ServerState,
    user: UserId,
    cmd: &Command,
    argv: &[Bytes],
    denied: Denied,
    verbose: bool,
) -> Vec<u8> {
    let name = &srv.acl.user(user).name;
    let arg = &argv[denied.pos];
    let mut m = Vec::new();
    let user_has_no = |m: &mut Vec<u8>| {
        m.extend_from_slice(b"User ");
        m.extend_from_slice(name);
        m.extend_from_slice(b" has no permissions to ");
    };
    match (denied.reason, verbose) {
        (Reason::Command, _) => {
            user_has_no(&mut m);
            m.extend_from_slice(format!("run the '{}' command", cmd.name).as_bytes());
        }
        (Reason::Key, false) => m.extend_from_slice(b"No permissions to access a key"),
        (Reason::Channel, false) => m.extend_from_slice(b"No permissions to access a channel"),
        (Reason::Database, false) => m.extend_from_slice(b"No permissions to access database"),
        (Reason::Key | Reason::Channel, true) => {
            user_has_no(&mut m);
            m.extend_from_slice(b"access the '");
            m.extend_from_slice(arg);
            m.extend_from_slice(if denied.reason == Reason::Key { b"' key" } else { b"' channel" });
        }
        (Reason::Database, true) => {
            user_has_no(&mut m);
            m.extend_from_slice(b"access database ");
            m.extend_from_slice(arg);
        }
    }
    m
}

/// The NOPERM error reply for a refusal.
pub fn noperm(
    srv: &ServerState,
    user: UserId,
    cmd: &Command,
    argv: &[Bytes],
    d: Denied,
) -> Vec<u8> {
    let mut e = b"NOPERM ".to_vec();
    e.extend_from_slice(&message(srv, user, cmd, argv, d, false));
    e
}

/// EXEC's reply for a queued command the user may no longer run.
pub fn changed_since_queued(d: Denied) -> Vec<u8> {
    let reason = match d.reason {
        Reason::Command => "no permission to execute the command or subcommand",
        Reason::Key => "no permission to touch the specified keys",
        Reason::Channel => "no permission to access one of the channels used as arguments",
        Reason::Database => "no permission",
    };
    format!(
        "NOPERM ACLs rules changed between the moment the transaction was accumulated and the \
         EXEC call. This command is no longer allowed for the following reason: {reason}"
    )
    .into_bytes()
}
