//! The ACL command: SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI, CAT, GENPASS, DRYRUN,
//! LOG, LOAD, SAVE, HELP, with Valkey 9.1's replies and errors. The users and their rules
//! are `crate::acl`'s; this layer adds the effects on connected clients (a deleted user's
//! clients are closed, a subscriber that lost a channel is closed) and the ACL file I/O.
//!
//! `perm.rs` is the permission check as dispatch, EXEC and scripts run it.

pub mod perm;

use std::sync::OnceLock;

use bytes::Bytes;

use crate::acl::{Catalog, User, UserId};
use crate::commands::command::reply_help;
use crate::commands::server_cmd::subcommand_syntax;
use crate::commands::table::{acl, flag, Command, Server};
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::config::AclPubsubDefault;
use crate::server::pubsub::Kind;
use crate::server::state::ServerState;
use crate::types::string::parse_i64;

const FLAGS: u64 = flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE;
const ADMIN: u64 = acl::ADMIN | acl::SLOW | acl::DANGEROUS;
const OPEN: u64 = flag::NOSCRIPT | flag::LOADING | flag::STALE;
const G: &str = "server";
const ALL_NODES: &[&str] = &["request_policy:all_nodes", "response_policy:all_succeeded"];
const USERS_COMPLEXITY: &str = "O(N). Where N is the number of configured users.";
/// ACL GENPASS's largest password, in bits.
const GENPASS_MAX_BITS: i64 = 4096;

static SUBCOMMANDS: &[Command] = &[
    Command::new("acl|cat", -2, OPEN, acl::SLOW, Server(cat))
        .doc(G, "6.0.0", "Lists the ACL categories, or the commands inside a category.", "O(1) since the categories and commands are a fixed set."),
    Command::new("acl|deluser", -3, FLAGS, ADMIN, Server(deluser))
        .doc(G, "6.0.0", "Deletes ACL users, and terminates their connections.", "O(1) amortized time considering the typical user.")
        .tips(ALL_NODES),
    Command::new("acl|dryrun", -4, FLAGS, ADMIN, Server(dryrun))
        .doc(G, "7.0.0", "Simulates the execution of a command by a user, without executing the command.", "O(1)."),
    Command::new("acl|genpass", -2, OPEN, acl::SLOW, Server(genpass))
        .doc(G, "6.0.0", "Generates a pseudorandom, secure password that can be used to identify ACL users.", "O(1)"),
    Command::new("acl|getuser", 3, FLAGS, ADMIN, Server(getuser))
        .history(&[
            ("6.2.0", "Added Pub/Sub channel patterns."),
            ("7.0.0", "Added selectors and changed the format of key and channel patterns from a list to their rule representation."),
            ("9.1.0", "Added database permission rules."),
        ])
        .doc(G, "6.0.0", "Lists the ACL rules of a user.", "O(N). Where N is the number of password, command and pattern rules that the user has."),
    Command::new("acl|help", 2, flag::LOADING | flag::STALE, acl::SLOW, Server(help))
        .doc(G, "6.0.0", "Returns helpful text about the different subcommands.", "O(1)"),
    Command::new("acl|list", 2, FLAGS, ADMIN, Server(list))
        .doc(G, "6.0.0", "Dumps the effective rules in ACL file format.", USERS_COMPLEXITY),
    Command::new("acl|load", 2, FLAGS, ADMIN, Server(load))
        .doc(G, "6.0.0", "Reloads the rules from the configured ACL file.", USERS_COMPLEXITY),
    Command::new("acl|log", -2, FLAGS, ADMIN, Server(log))
        .history(&[("7.2.0", "Added entry ID, timestamp created, and timestamp last updated.")])
        .doc(G, "6.0.0", "Lists recent security events generated due to ACL rules.", "O(N) with N being the number of entries shown."),
    Command::new("acl|save", 2, FLAGS, ADMIN, Server(save))
        .doc(G, "6.0.0", "Saves the effective ACL rules in the configured ACL file.", USERS_COMPLEXITY)
        .tips(ALL_NODES),
    Command::new("acl|setuser", -3, FLAGS, ADMIN, Server(setuser))
        .history(&[
            ("6.2.0", "Added Pub/Sub channel patterns."),
            ("7.0.0", "Added selectors and key based permissions."),
            ("9.1.0", "Added database permission rules."),
        ])
        .doc(G, "6.0.0", "Creates and modifies an ACL user and its rules.", "O(N). Where N is the number of rules provided.")
        .tips(ALL_NODES),
    Command::new("acl|users", 2, FLAGS, ADMIN, Server(users))
        .doc(G, "6.0.0", "Lists all ACL users.", USERS_COMPLEXITY),
    Command::new("acl|whoami", 2, OPEN, acl::SLOW, Server(whoami))
        .doc(G, "6.0.0", "Returns the authenticated username of the current connection.", "O(1)"),
];

pub static COMMANDS: &[Command] = &[Command::container("acl", -2, 0, acl::SLOW, SUBCOMMANDS).doc(
    G,
    "6.0.0",
    "A container for Access List Control commands.",
    "Depends on subcommand.",
)];

/// The catalog of the command table: every command's id in the ACL bitmaps.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::build(crate::commands::all()))
}

/// Whether new users and selectors start with every channel (`acl-pubsub-default`).
pub fn pubsub_default_all(srv: &ServerState) -> bool {
    srv.config.general.acl_pubsub_default == AclPubsubDefault::Allchannels
}

/// An ERR reply with Valkey's `addReplyErrorSdsSafe` treatment: line breaks become spaces.
fn err_safe(text: &[u8]) -> CmdError {
    let mut e = b"ERR ".to_vec();
    e.extend(text.iter().map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }));
    CmdError::Raw(e)
}

fn setuser(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let name = &argv[2];
    if !crate::acl::user::valid_name(name) {
        return Err(CmdError::Raw(
            b"ERR Usernames can't contain spaces or null characters".to_vec(),
        ));
    }
    let rules: Vec<&[u8]> = argv[3..].iter().map(|a| &a[..]).collect();
    let all = pubsub_default_all(ctx.srv);
    let (id, old) = ctx.srv.acl.set_user(name, &rules, catalog(), all).map_err(|e| err_safe(&e))?;
    if let Some(old) = old {
        close_lost_subscribers(ctx, id, &old);
    }
    ctx.out.ok();
    Ok(())
}

/// After a user's channels changed, close its subscribers to a channel or pattern it may no
/// longer use (Valkey's `ACLKillPubsubClientsIfNeeded`).
fn close_lost_subscribers(ctx: &mut ServerCtx, id: UserId, old: &User) {
    let Some(upcoming) = lost_channels(old, ctx.srv.acl.user(id)) else { return };
    for (token, slot) in ctx.srv.clients.iter_mut() {
        if slot.client.user == id
            && !slot.client.close_asap
            && subscribed_outside(&slot.client, &upcoming)
        {
            slot.client.close_asap = true;
            ctx.srv.to_close.push(token);
        }
    }
    if ctx.client.user == id && subscribed_outside(ctx.client, &upcoming) {
        ctx.client.close_after_reply = true;
    }
}

/// The channel patterns of `new` when it lost some channel `old` had (Valkey's
/// `getUpcomingChannelList`); None when the new channels include every old one.
fn lost_channels(old: &User, new: &User) -> Option<Vec<Vec<u8>>> {
    if new.selectors.iter().any(|s| s.all_channels) {
        return None;
    }
    let upcoming: Vec<Vec<u8>> =
        new.selectors.iter().flat_map(|s| s.channels.iter().cloned()).collect();
    let kept = old
        .selectors
        .iter()
        .all(|s| !s.all_channels && s.channels.iter().all(|c| upcoming.contains(c)));
    (!kept).then_some(upcoming)
}

/// Whether a client is subscribed to a channel or pattern outside `allowed`.
fn subscribed_outside(c: &crate::server::client::Client, allowed: &[Vec<u8>]) -> bool {
    use crate::acl::check::channel_allowed;
    c.subs.names(Kind::Pattern).iter().any(|p| !channel_allowed(allowed, p, true))
        || c.subs.names(Kind::Channel).iter().any(|p| !channel_allowed(allowed, p, false))
        || c.subs.names(Kind::Shard).iter().any(|p| !channel_allowed(allowed, p, false))
}

fn deluser(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if argv[2..].iter().any(|n| &n[..] == b"default") {
        return Err(CmdError::Raw(b"ERR The 'default' user cannot be removed".to_vec()));
    }
    let mut deleted = 0;
    for name in &argv[2..] {
        let Some(id) = ctx.srv.acl.delete(name) else { continue };
        deleted += 1;
        close_clients_of(ctx, id);
    }
    ctx.out.int(deleted);
    Ok(())
}

/// Close every client logged in as a user that is gone; they run as the default user,
/// unauthenticated, until they are closed (the caller's own connection after its reply).
fn close_clients_of(ctx: &mut ServerCtx, id: UserId) {
    for (token, slot) in ctx.srv.clients.iter_mut() {
        if slot.client.user == id {
            slot.client.user = crate::acl::DEFAULT_USER;
            slot.client.authenticated = false;
            if !slot.client.close_asap {
                slot.client.close_asap = true;
                ctx.srv.to_close.push(token);
            }
        }
    }
    if ctx.client.user == id {
        ctx.client.user = crate::acl::DEFAULT_USER;
        ctx.client.authenticated = false;
        ctx.client.close_after_reply = true;
    }
}

fn getuser(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let Some(id) = ctx.srv.acl.find(&argv[2]) else {
        ctx.out.null();
        return Ok(());
    };
    let u = ctx.srv.acl.user(id);
    let out = &mut *ctx.out;
    out.map(7);
    out.bulk(b"flags");
    out.set(1 + usize::from(u.nopass));
    out.bulk(if u.enabled { b"on" } else { b"off" });
    if u.nopass {
        out.bulk(b"nopass");
    }
    out.bulk(b"passwords");
    out.array(u.passwords.len());
    for p in &u.passwords {
        out.bulk(p.as_bytes());
    }
    describe_selector(out, u.root());
    out.bulk(b"selectors");
    out.array(u.selectors.len() - 1);
    for s in &u.selectors[1..] {
        out.map(4);
        describe_selector(out, s);
    }
    Ok(())
}

fn describe_selector(out: &mut crate::resp::reply::Reply, s: &crate::acl::Selector) {
    out.bulk(b"commands");
    out.bulk(&s.describe_commands());
    out.bulk(b"keys");
    out.bulk(&s.describe_keys());
    out.bulk(b"channels");
    out.bulk(&s.describe_channels());
    out.bulk(b"databases");
    out.bulk(&s.describe_dbs());
}

fn list(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let lines: Vec<Vec<u8>> = ctx
        .srv
        .acl
        .users()
        .map(|(_, u)| {
            let mut line = b"user ".to_vec();
            line.extend_from_slice(&u.name);
            line.push(b' ');
            line.extend_from_slice(&u.describe());
            line
        })
        .collect();
    ctx.out.array(lines.len());
    for l in &lines {
        ctx.out.bulk(l);
    }
    Ok(())
}

fn users(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let names: Vec<Vec<u8>> = ctx.srv.acl.users().map(|(_, u)| u.name.clone()).collect();
    ctx.out.array(names.len());
    for n in &names {
        ctx.out.bulk(n);
    }
    Ok(())
}

fn whoami(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let name = ctx.srv.acl.user(ctx.client.user).name.clone();
    ctx.out.bulk(&name);
    Ok(())
}

fn cat(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if argv.len() > 3 {
        return Err(subcommand_syntax(argv));
    }
    let names = crate::spec::table::acl::NAMES;
    match argv.get(2) {
        None => {
            ctx.out.array(names.len());
            for (_, n) in names {
                ctx.out.bulk(n.as_bytes());
            }
        }
        Some(c) => {
            let Some(flag) = crate::acl::catalog::category(c) else {
                let shown = &c[..c.len().min(128)];
                let mut e = b"ERR Unknown category '".to_vec();
                e.extend_from_slice(shown);
                e.push(b'\'');
                return Err(CmdError::Raw(e));
            };
            let cat = catalog();
            let found: Vec<&str> = cat
                .ids()
                .map(|id| cat.get(id))
                .filter(|e| e.categories & flag != 0)
                .map(|e| e.name)
                .collect();
            ctx.out.array(found.len());
            for n in found {
                ctx.out.bulk(n.as_bytes());
            }
        }
    }
    Ok(())
}

fn genpass(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if argv.len() > 3 {
        return Err(subcommand_syntax(argv));
    }
    let bits = match argv.get(2) {
        None => 256,
        Some(b) => parse_i64(b).ok_or(CmdError::NotInteger)?,
    };
    if bits <= 0 || bits > GENPASS_MAX_BITS {
        return Err(CmdError::Raw(
            format!(
                "ERR ACL GENPASS argument must be the number of bits for the output password, \
                 a positive number up to {GENPASS_MAX_BITS}"
            )
            .into_bytes(),
        ));
    }
    let chars = ((bits + 3) / 4) as usize;
    let pass = random_hex(chars).map_err(|e| CmdError::Other(format!("ERR {e}")))?;
    ctx.out.bulk(pass.as_bytes());
    Ok(())
}

/// `n` hex characters from the kernel's random source.
fn random_hex(n: usize) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = vec![0u8; n.div_ceil(2)];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    let mut hex = crate::util::sha1::hex(&bytes);
    hex.truncate(n);
    Ok(hex)
}

fn log(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if argv.len() > 3 {
        return Err(subcommand_syntax(argv));
    }
    let mut count = 10usize;
    if let Some(a) = argv.get(2) {
        if a.eq_ignore_ascii_case(b"reset") {
            ctx.srv.acl.log.reset();
            ctx.out.ok();
            return Ok(());
        }
        count = parse_i64(a).ok_or(CmdError::NotInteger)?.max(0) as usize;
    }
    let count = count.min(ctx.srv.acl.log.len());
    let now = ctx.now_ms;
    let out = &mut *ctx.out;
    out.array(count);
    for e in ctx.srv.acl.log.newest(count) {
        out.map(10);
        out.bulk(b"count");
        out.int(e.count as i64);
        out.bulk(b"reason");
        out.bulk(e.reason.as_bytes());
        out.bulk(b"context");
        out.bulk(e.context.name().as_bytes());
        out.bulk(b"object");
        out.bulk(&e.object);
        out.bulk(b"username");
        out.bulk(&e.username);
        out.bulk(b"age-seconds");
        out.double((now - e.updated_ms) as f64 / 1000.0);
        out.bulk(b"client-info");
        out.bulk(&e.client_info);
        out.bulk(b"entry-id");
        out.int(e.entry_id as i64);
        out.bulk(b"timestamp-created");
        out.int(e.created_ms);
        out.bulk(b"timestamp-last-updated");
        out.int(e.updated_ms);
    }
    Ok(())
}

fn dryrun(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let Some(user) = ctx.srv.acl.find(&argv[2]) else {
        let mut e = b"ERR User '".to_vec();
        e.extend_from_slice(&argv[2]);
        e.extend_from_slice(b"' not found");
        return Err(CmdError::Raw(e));
    };
    let target = &argv[3..];
    let cmd = crate::commands::lookup(&target[0]).and_then(|c| {
        if c.subcommands.is_empty() || target.len() < 2 {
            Some(c)
        } else {
            c.subcommand(&target[1])
        }
    });
    let Some(cmd) = cmd else {
        let mut e = b"ERR Command '".to_vec();
        e.extend_from_slice(&target[0]);
        e.extend_from_slice(b"' not found");
        return Err(CmdError::Raw(e));
    };
    if !cmd.arity_ok(target.len()) {
        return Err(CmdError::WrongArity(cmd.name.to_string()));
    }
    match perm::allowed(ctx.srv, user, cmd, target, ctx.client.db) {
        Ok(()) => ctx.out.ok(),
        Err(d) => {
            let m = perm::message(ctx.srv, user, cmd, target, d, true);
            ctx.out.bulk(&m);
        }
    }
    Ok(())
}

fn no_aclfile() -> CmdError {
    CmdError::Raw(
        b"ERR This instance is not configured to use an ACL file. You may want to specify users \
          via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a \
          configuration file set) in order to store users in the configuration."
            .to_vec(),
    )
}

fn load(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    if ctx.srv.config.general.aclfile.is_empty() {
        return Err(no_aclfile());
    }
    let moved = load_file(ctx.srv).map_err(|e| err_safe(e.as_bytes()))?;
    match moved.iter().find(|(o, _)| *o == ctx.client.user).and_then(|(_, n)| *n) {
        Some(n) => ctx.client.user = n,
        None => {
            ctx.client.user = crate::acl::DEFAULT_USER;
            ctx.client.close_after_reply = true;
        }
    }
    ctx.out.ok();
    Ok(())
}

/// Load the `aclfile` into the server (ACL LOAD, and start-up): all users replaced, the
/// clients in the table moved to their user's new definition, closed when their user is
/// gone or lost a channel they are subscribed to. Returns each old user id with its new
/// one, for the caller's own client.
pub fn load_file(srv: &mut ServerState) -> Result<Vec<(UserId, Option<UserId>)>, String> {
    let path = srv.config.general.aclfile.clone();
    let text = std::fs::read(&path).map_err(|e| {
        format!("Error loading ACLs, opening file '{path}': {}", crate::util::strerror(&e))
    })?;
    let all = pubsub_default_all(srv);
    let users = crate::acl::file::parse(&text, &path, catalog(), all)?;
    let old: Vec<(UserId, User)> = srv.acl.users().map(|(id, u)| (id, u.clone())).collect();
    let moved = srv.acl.replace_all(users);
    // For each old user still there: the channels it keeps, when it lost some.
    let lost: Vec<(UserId, Vec<Vec<u8>>)> = old
        .iter()
        .filter_map(|(o, u)| {
            let n = moved.iter().find(|(id, _)| id == o).and_then(|(_, n)| *n)?;
            lost_channels(u, srv.acl.user(n)).map(|keep| (*o, keep))
        })
        .collect();
    let mut gone: Vec<usize> = Vec::new();
    for (token, slot) in srv.clients.iter_mut() {
        let c = &mut slot.client;
        let new = moved.iter().find(|(o, _)| *o == c.user).and_then(|(_, n)| *n);
        let loses = lost.iter().any(|(o, keep)| *o == c.user && subscribed_outside(c, keep));
        match new {
            Some(n) if !loses => c.user = n,
            _ => {
                c.user = crate::acl::DEFAULT_USER;
                if !c.close_asap {
                    c.close_asap = true;
                    gone.push(token);
                }
            }
        }
    }
    srv.to_close.extend(gone);
    Ok(moved)
}

/// The users of the configuration at start-up: the `user` directives, or the `aclfile`
/// (never both). The error is the line to log before exiting, in Valkey's words.
pub fn load_users_at_startup(srv: &mut ServerState) -> Result<(), String> {
    let directives = std::mem::take(&mut srv.config.general.users);
    if !srv.config.general.aclfile.is_empty() && !directives.is_empty() {
        return Err("Configuring Valkey with users defined in valkey.conf and at the same \
                    setting an ACL file path is invalid. This setup is very likely to lead to \
                    configuration errors and security holes, please define either an ACL file \
                    or declare users directly in your valkey.conf, but not both."
            .into());
    }
    let words: Vec<Vec<Vec<u8>>> =
        directives.iter().map(|d| d.iter().map(|w| w.as_bytes().to_vec()).collect()).collect();
    let all = pubsub_default_all(srv);
    crate::acl::file::apply_directives(&mut srv.acl, &words, catalog(), all).map_err(|e| {
        tracing::warn!("{e}");
        "Critical error while loading ACLs. Exiting.".to_string()
    })?;
    srv.config.general.users = directives;
    if !srv.config.general.aclfile.is_empty() {
        load_file(srv)
            .map_err(|e| format!("Aborting Valkey startup because of ACL errors: {e}"))?;
    }
    Ok(())
}

fn save(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    if ctx.srv.config.general.aclfile.is_empty() {
        return Err(no_aclfile());
    }
    save_file(ctx.srv).map_err(|e| {
        tracing::warn!("Writing ACL file for ACL SAVE: {e}");
        CmdError::Raw(
            b"ERR There was an error trying to save the ACLs. Please check the server logs for \
              more information"
                .to_vec(),
        )
    })?;
    ctx.out.ok();
    Ok(())
}

/// Write the users to the `aclfile`: a temporary file, synced, renamed over it.
fn save_file(srv: &ServerState) -> std::io::Result<()> {
    use std::io::Write;
    let path = std::path::Path::new(&srv.config.general.aclfile);
    let tmp = path.with_file_name(format!(
        "{}.tmp-{}-{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("aclfile"),
        std::process::id(),
        crate::util::clock::now_ms()
    ));
    let text = crate::acl::file::render(&srv.acl);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&text)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn help(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    reply_help(
        ctx.out,
        "ACL",
        &[
            "CAT [<category>]",
            "    List all commands that belong to <category>, or all command categories",
            "    when no category is specified.",
            "DELUSER <username> [<username> ...]",
            "    Delete a list of users.",
            "DRYRUN <username> <command> [<arg> ...]",
            "    Returns whether the user can execute the given command without executing the command.",
            "GETUSER <username>",
            "    Get the user's details.",
            "GENPASS [<bits>]",
            "    Generate a secure 256-bit user password. The optional `bits` argument can",
            "    be used to specify a different size.",
            "LIST",
            "    Show users details in config file format.",
            "LOAD",
            "    Reload users from the ACL file.",
            "LOG [<count> | RESET]",
            "    Show the ACL log entries.",
            "SAVE",
            "    Save the current config to the ACL file.",
            "SETUSER <username> <rule> [<rule> ...]",
            "    Create or modify a user with the specified rules.",
            "USERS",
            "    List all the registered usernames.",
            "WHOAMI",
            "    Return the current connection username.",
        ],
    );
    Ok(())
}
