//! Connection commands: PING, ECHO, QUIT, RESET, HELLO and AUTH.
//!
//! They change only the calling client's own state (protocol, name, authentication, reply
//! mode) and never touch the keyspace. AUTH and HELLO AUTH log in as an ACL user
//! (`crate::acl`): `AUTH password` as `default`, whose password `requirepass` sets; a
//! failure is counted and written to the ACL log.

use bytes::Bytes;

use crate::commands::args::{is, text};
use crate::commands::client_cmd::valid_client_attr;
use crate::commands::server_cmd::{REDIS_COMPAT_VERSION, SERVER_NAME, SERVER_VERSION};
use crate::commands::table::Server;
use crate::commands::table::{acl, flag, Command};
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::resp::reply::Proto;
use crate::types::string::parse_i64;

/// Flags of the commands a client may send before it authenticates.
const HANDSHAKE: u64 =
    flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::FAST | flag::NO_AUTH | flag::ALLOW_BUSY;
const ACL_CONN: u64 = acl::FAST | acl::CONNECTION;

pub static COMMANDS: &[Command] = &[
    Command::new("ping", -1, flag::FAST, ACL_CONN, Server(ping))
        .doc("connection", "1.0.0", "Returns the server's liveliness response.", "O(1)")
        .tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    Command::new("echo", 2, flag::LOADING | flag::STALE | flag::FAST, ACL_CONN, Server(echo)).doc(
        "connection",
        "1.0.0",
        "Returns the given string.",
        "O(1)",
    ),
    Command::new("quit", -1, HANDSHAKE, ACL_CONN, Server(quit)).doc(
        "connection",
        "1.0.0",
        "Closes the connection.",
        "O(1)",
    ),
    Command::new("reset", 1, HANDSHAKE, ACL_CONN, Server(reset)).doc(
        "connection",
        "6.2.0",
        "Resets the connection.",
        "O(1)",
    ),
    Command::new("hello", -1, HANDSHAKE, ACL_CONN, Server(hello))
        .history(&[
            ("8.1.0", "A new `availability_zone` field is added to the response if the `availability-zone` config is set."),
            ("6.2.0", "`protover` made optional; when called without arguments the command reports the current connection's context."),
        ])
        .doc(
            "connection",
            "6.0.0",
            "Handshakes with the server.",
            "O(1)",
        ),
    Command::new("auth", -2, HANDSHAKE, ACL_CONN, Server(auth))
        .history(&[("6.0.0", "Added ACL style (username and password).")])
        .doc(
            "connection",
            "1.0.0",
            "Authenticates the connection.",
            "O(N) where N is the number of passwords defined for the user",
        ),
];

/// The only user.
const DEFAULT_USER: &[u8] = b"default";

fn ping(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if argv.len() <= 2 && ctx.client.subs.total() > 0 && !ctx.out.is_resp3() {
        // RESP2 subscriber mode: `["pong", message or ""]`, as a pub/sub message would be.
        ctx.out.array(2);
        ctx.out.bulk(b"pong");
        ctx.out.bulk(argv.get(1).map_or(&b""[..], |m| &m[..]));
        return Ok(());
    }
    match argv.len() {
        1 => ctx.out.simple("PONG"),
        2 => ctx.out.bulk(&argv[1]),
        _ => return Err(CmdError::WrongArity("ping".into())),
    }
    Ok(())
}

fn echo(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    ctx.out.bulk(&argv[1]);
    Ok(())
}

/// QUIT: reply, then close once the reply is written. Extra arguments are ignored.
fn quit(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    ctx.out.ok();
    ctx.client.close_after_reply = true;
    Ok(())
}

fn reset(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let slot = ctx.slot;
    ctx.srv.monitors.retain(|&m| m != slot);
    ctx.srv.pubsub.remove_client(slot, &mut ctx.client.subs);
    crate::server::tracking::disable(ctx.srv, ctx.client);
    crate::server::multi::discard(ctx.srv, slot, ctx.client);
    let password_required = ctx.srv.acl.auth_required();
    ctx.client.reset_connection_state(password_required);
    ctx.out.proto = Proto::Resp2;
    ctx.srv.clients.running_protocol(slot, Proto::Resp2);
    ctx.out.simple("RESET");
    Ok(())
}

/// Authenticate the client as `user`; a failure is logged (ACL LOG, INFO) and leaves its
/// current state unchanged.
fn authenticate(ctx: &mut ServerCtx, argv: &[Bytes], user: &[u8], pass: &[u8]) -> CmdResult {
    match ctx.srv.acl.authenticate(user, pass) {
        Some(id) => {
            ctx.client.authenticated = true;
            ctx.client.user = id;
            Ok(())
        }
        None => {
            let info = crate::commands::client_cmd::info_line(ctx, argv);
            let now = ctx.now_ms;
            crate::commands::acl_cmd::perm::record_auth_failure(
                ctx.srv, ctx.client, info, &argv[0], user, now,
            );
            Err(CmdError::WrongPass)
        }
    }
}

/// AUTH password | AUTH username password.
fn auth(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let (user, pass): (&[u8], &[u8]) = match argv.len() {
        2 if ctx.srv.acl.default_user().nopass => return Err(CmdError::AuthNoPassword),
        2 => (DEFAULT_USER, &argv[1]),
        3 => (&argv[1], &argv[2]),
        _ => return Err(CmdError::Syntax),
    };
    authenticate(ctx, argv, user, pass)?;
    ctx.out.ok();
    Ok(())
}

/// HELLO's arguments.
struct HelloArgs<'a> {
    proto: Option<Proto>,
    credentials: Option<(&'a [u8], &'a [u8])>,
    name: Option<&'a Bytes>,
}

fn parse_hello(argv: &[Bytes]) -> Result<HelloArgs<'_>, CmdError> {
    let mut args = HelloArgs { proto: None, credentials: None, name: None };
    if let Some(ver) = argv.get(1) {
        args.proto = match parse_i64(ver).ok_or(CmdError::ProtoNotInteger)? {
            2 => Some(Proto::Resp2),
            3 => Some(Proto::Resp3),
            _ => return Err(CmdError::NoProto),
        };
    }
    let mut i = 2;
    while i < argv.len() {
        let more = argv.len() - 1 - i;
        if is(&argv[i], "AUTH") && more >= 2 {
            args.credentials = Some((&argv[i + 1], &argv[i + 2]));
            i += 3;
        } else if is(&argv[i], "SETNAME") && more >= 1 {
            args.name = Some(&argv[i + 1]);
            i += 2;
        } else {
            return Err(CmdError::HelloSyntax(text(&argv[i])));
        }
    }
    Ok(args)
}

/// HELLO [protover [AUTH username password] [SETNAME clientname]]. The checks run in
/// redis-server's order: options, credentials, name, then "must be authenticated".
fn hello(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let args = parse_hello(argv)?;
    if let Some((user, pass)) = args.credentials {
        authenticate(ctx, argv, user, pass)?;
    }
    if args.name.is_some_and(|n| !valid_client_attr(n)) {
        return Err(CmdError::BadClientName);
    }
    if !ctx.client.authenticated {
        return Err(CmdError::HelloNoAuth);
    }
    if let Some(name) = args.name {
        ctx.client.name = (!name.is_empty()).then(|| name.clone());
    }
    if let Some(proto) = args.proto {
        ctx.out.proto = proto;
        ctx.srv.clients.running_protocol(ctx.slot, proto);
    }
    let out = &mut *ctx.out;
    out.map(7);
    // `extended-redis-compatibility`: the Redis name and the version Valkey claims.
    let compat = crate::spec::error::redis_compat();
    out.bulk(b"server");
    out.bulk(if compat { b"redis".as_slice() } else { SERVER_NAME.as_bytes() });
    out.bulk(b"version");
    out.bulk(if compat { REDIS_COMPAT_VERSION } else { SERVER_VERSION }.as_bytes());
    out.bulk(b"proto");
    out.int(if out.is_resp3() { 3 } else { 2 });
    out.bulk(b"id");
    out.int(ctx.client.id as i64);
    out.bulk(b"mode");
    out.bulk(if ctx.srv.config.cluster_enabled { b"cluster" } else { b"standalone" });
    out.bulk(b"role");
    out.bulk(b"master");
    // Valkey 9.1 lists its Lua engine as a module; ferrokey has the same engine built in.
    out.bulk(b"modules");
    out.array(1);
    out.map(4);
    out.bulk(b"name");
    out.bulk(b"lua");
    out.bulk(b"ver");
    out.int(1);
    out.bulk(b"path");
    out.bulk(b"lua");
    out.bulk(b"args");
    out.array(0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<Bytes> {
        words.iter().map(|w| Bytes::copy_from_slice(w.as_bytes())).collect()
    }

    #[test]
    fn hello_options_parse_like_redis() {
        let a = argv(&["hello", "3", "auth", "u", "p", "setname", "n"]);
        let h = parse_hello(&a).unwrap();
        assert_eq!(h.proto, Some(Proto::Resp3));
        assert_eq!(h.credentials, Some((&b"u"[..], &b"p"[..])));
        assert_eq!(h.name.map(|n| &n[..]), Some(&b"n"[..]));
        let err = |w: &[&str]| parse_hello(&argv(w)).err().unwrap();
        assert_eq!(err(&["hello", "x"]), CmdError::ProtoNotInteger);
        assert_eq!(err(&["hello", "4"]), CmdError::NoProto);
        assert_eq!(err(&["hello", "2", "auth", "a"]), CmdError::HelloSyntax("auth".into()));
        assert_eq!(err(&["hello", "3", "setname", "a", "b"]), CmdError::HelloSyntax("b".into()));
    }
}
