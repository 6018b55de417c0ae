//! MIGRATE and RESTORE-ASKING: keys moved to another server as DUMP payloads.
//!
//! MIGRATE is synchronous, as in Valkey: the event loop waits on the target, each step
//! (connect, write, each reply line) bounded by the command's timeout. It sends `AUTH` or
//! `AUTH2`'s `AUTH user password` when asked, `SELECT` when the connection's database is
//! not the destination, then one `RESTORE key ttl payload [REPLACE]` per live key (the
//! remaining TTL; standalone Valkey sends `RESTORE`, `RESTORE-ASKING` being its cluster
//! mode's), all in one write, and reads the replies in order. A key whose RESTORE the target
//! acknowledged is deleted here unless `COPY` (keyspace event `del`), and the command is
//! propagated as `DEL` of those keys. Connections stay in the server's cache
//! (`util::sync_conn::ConnCache`) for reuse; a connection error before any key was
//! acknowledged, other than a timeout, is retried once on a fresh connection (the cached one
//! may have died meanwhile). This module owns the option parsing and the exchange; the
//! blocking I/O is `util::sync_conn`'s.
//!
//! RESTORE-ASKING is RESTORE (cluster mode sends it to a slot being imported).

use std::time::Duration;

use bytes::Bytes;

use crate::commands::args::is;
use crate::commands::table::ks::{ACCESS, DELETE, INCOMPLETE, OW, RW, UPDATE};
use crate::commands::table::{acl, flag, range, BeginSearch, Command, Data, FindKeys};
use crate::commands::table::{KeySpec, Server};
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::config::KeyspaceEvents;
use crate::keyspace::db::ObjView;
use crate::persist::rdb::dump;
use crate::server::propagate::append_command;
use crate::types::string::parse_i64;
use crate::util::sync_conn::{is_timeout, ConnCache, SyncConn};

const MIGRATE_KEYS: &[KeySpec] = &[
    range(RW | ACCESS | DELETE, 3, 0, 1),
    KeySpec {
        flags: RW | ACCESS | DELETE | INCOMPLETE,
        begin: BeginSearch::Keyword { keyword: "KEYS", start_from: -2 },
        find: FindKeys::Range { last_key: -1, step: 1, limit: 0 },
    },
];
const RESTORE_KEYS: &[KeySpec] = &[range(OW | UPDATE, 1, 0, 1)];

pub static COMMANDS: &[Command] = &[
    Command::new(
        "migrate",
        -6,
        flag::WRITE | flag::MOVABLE_KEYS,
        acl::KEYSPACE | acl::WRITE | acl::SLOW | acl::DANGEROUS,
        Server(migrate),
    )
    .keys(MIGRATE_KEYS)
    .tips(&["nondeterministic_output"])
    .history(&[
        ("3.0.0", "Added the `COPY` and `REPLACE` options."),
        ("3.0.6", "Added the `KEYS` option."),
        ("4.0.7", "Added the `AUTH` option."),
        ("6.0.0", "Added the `AUTH2` option."),
    ])
    .doc(
        "generic",
        "2.6.0",
        "Atomically transfers a key from one instance to another.",
        "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the target instance. See the pages of these commands for time complexity. Also an O(N) data transfer between the two instances is performed.",
    ),
    Command::new(
        "restore-asking",
        -4,
        flag::WRITE | flag::DENYOOM | flag::ASKING,
        acl::KEYSPACE | acl::WRITE | acl::SLOW | acl::DANGEROUS,
        Data(crate::commands::dump::restore),
    )
    .keys(RESTORE_KEYS)
    .history(&[
        ("3.0.0", "Added the `REPLACE` modifier."),
        ("5.0.0", "Added the `ABSTTL` modifier."),
        ("5.0.0", "Added the `IDLETIME` and `FREQ` options."),
    ])
    .doc_flags(&["syscmd"])
    .doc(
        "server",
        "3.0.0",
        "An internal command for migrating keys in a cluster.",
        "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).",
    ),
];

/// Credentials sent to the target before anything else.
enum Auth<'a> {
    None,
    /// `AUTH password`
    Password(&'a Bytes),
    /// `AUTH2 username password`
    User(&'a Bytes, &'a Bytes),
}

/// Whether the local keys stay (`COPY`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Delete,
    Keep,
}

/// Whether RESTORE may overwrite the target's key (`REPLACE`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Create,
    Replace,
}

/// MIGRATE's arguments.
struct Request<'a> {
    keys: &'a [Bytes],
    source: Source,
    target: Target,
    auth: Auth<'a>,
    dest_db: i64,
    timeout: Duration,
}

/// Parses the options, then the timeout and the database (Valkey's order of errors). A
/// timeout of 0 or less means 1000 ms.
fn parse(argv: &[Bytes]) -> Result<Request<'_>, CmdError> {
    let mut req = Request {
        keys: &argv[3..4],
        source: Source::Delete,
        target: Target::Create,
        auth: Auth::None,
        dest_db: 0,
        timeout: Duration::ZERO,
    };
    let mut i = 6;
    while i < argv.len() {
        let (a, more) = (&argv[i], argv.len() - 1 - i);
        if is(a, "copy") {
            req.source = Source::Keep;
        } else if is(a, "replace") {
            req.target = Target::Replace;
        } else if is(a, "auth") && more >= 1 {
            req.auth = Auth::Password(&argv[i + 1]);
            i += 1;
        } else if is(a, "auth2") && more >= 2 {
            req.auth = Auth::User(&argv[i + 1], &argv[i + 2]);
            i += 2;
        } else if is(a, "keys") {
            if !argv[3].is_empty() {
                return Err(CmdError::MigrateKeysWithKey);
            }
            req.keys = &argv[i + 1..];
            break;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    let timeout_ms = parse_i64(&argv[5]).ok_or(CmdError::NotInteger)?;
    req.dest_db = parse_i64(&argv[4]).ok_or(CmdError::NotInteger)?;
    req.timeout = Duration::from_millis(if timeout_ms <= 0 { 1000 } else { timeout_ms as u64 });
    Ok(req)
}

/// A key to send: its name, the TTL left in ms (0: none) and its DUMP payload.
struct Outgoing {
    key: Bytes,
    ttl_ms: i64,
    payload: Vec<u8>,
}

/// The live keys of `keys` in database `db`, with their payloads.
fn collect(ctx: &mut ServerCtx, keys: &[Bytes]) -> Vec<Outgoing> {
    let (now, compress) = (ctx.now_ms, ctx.srv.config.rdbcompression);
    let db = &mut ctx.srv.dbs[ctx.client.db];
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        let Some(e) = db.read_obj(key, now) else { continue };
        let ttl_ms = match e.expire_at() {
            None => 0,
            Some(at) if at - now < 0 => continue,
            Some(at) => (at - now).max(1),
        };
        let payload = dump::payload(e.value_ref(), compress);
        out.push(Outgoing { key: key.clone(), ttl_ms, payload });
    }
    out
}

/// C's `atoi` of the port argument, as Valkey reads it (`12ab` is 12, `ab` is 0); None
/// when it is no TCP port at all (the connection then fails, as Valkey's does).
fn port_of(arg: &[u8]) -> Option<u16> {
    let text = arg.trim_ascii_start();
    let (neg, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let n = digits
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .try_fold(0u32, |n, &c| n.checked_mul(10)?.checked_add(u32::from(c - b'0')))?;
    if neg && n != 0 {
        return None;
    }
    u16::try_from(n).ok()
}

/// A try whose connection failed before the target acknowledged any key (`writing`: while
/// connecting or writing; else reading): retried once unless it was a timeout.
struct Failure {
    writing: bool,
    timed_out: bool,
}

/// What the target answered to every RESTORE: `acked[i]` when the key `i` was restored;
/// the first error the target replied, if any.
struct Answers {
    acked: Vec<bool>,
    error: Option<Vec<u8>>,
    /// The connection failed while reading the RESTORE replies after some were read.
    broken: bool,
}

fn migrate(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let req = parse(argv)?;
    let keys = collect(ctx, req.keys);
    if keys.is_empty() {
        ctx.out.simple("NOKEY");
        return Ok(());
    }
    let name = [&argv[1][..], b":", &argv[2][..]].concat();
    let host = String::from_utf8_lossy(&argv[1]).into_owned();
    let port = port_of(&argv[2]);
    let mut may_retry = true;
    let answers = loop {
        match exchange(&mut ctx.srv.migrate_conns, &name, &host, port, &req, &keys, ctx.now_ms) {
            Ok(answers) => break answers,
            Err(Failure { writing, timed_out }) => {
                if may_retry && !timed_out {
                    may_retry = false;
                    continue;
                }
                return Err(CmdError::MigrateIo { writing });
            }
        }
    };
    if req.source == Source::Delete {
        delete_moved(ctx, &keys, &answers.acked);
    }
    match answers.error {
        Some(text) => Err(CmdError::MigrateTarget(text)),
        None if answers.broken => Err(CmdError::MigrateIo { writing: false }),
        None => {
            ctx.out.ok();
            Ok(())
        }
    }
}

/// One try: a connection (cached or new), the commands written at once, the replies read.
/// The connection goes back to the cache unless it failed.
fn exchange(
    cache: &mut ConnCache,
    name: &[u8],
    host: &str,
    port: Option<u16>,
    req: &Request,
    keys: &[Outgoing],
    now_ms: i64,
) -> Result<Answers, Failure> {
    let io_err = |writing: bool, e: &std::io::Error| Failure { writing, timed_out: is_timeout(e) };
    let (mut conn, last_db) = match cache.take(name) {
        Some(c) => (c.conn, c.last_db),
        None => {
            let refused = std::io::Error::from(std::io::ErrorKind::InvalidInput);
            let port = port.ok_or_else(|| io_err(true, &refused))?;
            let conn = SyncConn::connect(host, port, req.timeout).map_err(|e| io_err(true, &e))?;
            (conn, -1)
        }
    };
    let select = last_db != req.dest_db;
    let buf = commands(req, keys, select);
    conn.write_all(&buf, req.timeout).map_err(|e| io_err(true, &e))?;
    let auth_reply = match req.auth {
        Auth::None => None,
        _ => Some(conn.read_line(req.timeout).map_err(|e| io_err(false, &e))?),
    };
    let select_reply = if select {
        Some(conn.read_line(req.timeout).map_err(|e| io_err(false, &e))?)
    } else {
        None
    };
    let mut answers = Answers { acked: Vec::with_capacity(keys.len()), error: None, broken: false };
    let setup_error = [&auth_reply, &select_reply]
        .into_iter()
        .flatten()
        .find(|line| line.first() == Some(&b'-'))
        .cloned();
    for _ in keys {
        let line = match conn.read_line(req.timeout) {
            Ok(line) => line,
            // Nothing acknowledged yet: the whole try failed.
            Err(e) if answers.acked.is_empty() => return Err(io_err(false, &e)),
            Err(_) => {
                answers.broken = true;
                break;
            }
        };
        let failed = setup_error.as_ref().or((line.first() == Some(&b'-')).then_some(&line));
        match failed {
            Some(err) => {
                answers.error.get_or_insert_with(|| err[1..].to_vec());
                answers.acked.push(false);
            }
            None => answers.acked.push(true),
        }
    }
    if !answers.broken {
        // After an error the target's database is unknown: SELECT again next time.
        let db = if answers.error.is_some() { -1 } else { req.dest_db };
        cache.put(name, conn, db, now_ms);
    }
    Ok(answers)
}

/// The whole request: AUTH, SELECT when needed, one RESTORE per key.
fn commands(req: &Request, keys: &[Outgoing], select: bool) -> Vec<u8> {
    let mut buf = Vec::with_capacity(keys.iter().map(|k| k.payload.len() + 64).sum());
    match req.auth {
        Auth::None => {}
        Auth::Password(pw) => append_command(&mut buf, &[&b"AUTH"[..], pw]),
        Auth::User(user, pw) => append_command(&mut buf, &[&b"AUTH"[..], user, pw]),
    }
    if select {
        append_command(&mut buf, &[b"SELECT".to_vec(), req.dest_db.to_string().into_bytes()]);
    }
    for k in keys {
        let ttl = k.ttl_ms.to_string();
        let mut argv: Vec<&[u8]> = vec![b"RESTORE", &k.key, ttl.as_bytes(), &k.payload];
        if req.target == Target::Replace {
            argv.push(b"REPLACE");
        }
        append_command(&mut buf, &argv);
    }
    buf
}

/// Deletes the keys the target acknowledged, with their events, and logs `DEL` of them in
/// place of the MIGRATE.
fn delete_moved(ctx: &mut ServerCtx, keys: &[Outgoing], acked: &[bool]) {
    let (db, now) = (ctx.client.db, ctx.now_ms);
    let mut del = vec![Bytes::from_static(b"DEL")];
    for (k, _) in keys.iter().zip(acked).filter(|(_, &ok)| ok) {
        if ctx.srv.dbs[db].remove(&k.key, now) {
            ctx.srv.dbs[db].changed(&k.key, 1, KeyspaceEvents::GENERIC, "del");
        }
        del.push(k.key.clone());
    }
    if del.len() > 1 && ctx.srv.feed.on {
        ctx.srv.feed.replaced = Some(vec![del]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<Bytes> {
        words.iter().map(|w| Bytes::copy_from_slice(w.as_bytes())).collect()
    }

    #[test]
    fn ports_read_as_atoi() {
        assert_eq!(port_of(b"6379"), Some(6379));
        assert_eq!(port_of(b" 12ab"), Some(12));
        assert_eq!(port_of(b"ab"), Some(0));
        assert_eq!(port_of(b"-1"), None);
        assert_eq!(port_of(b"70000"), None);
        assert_eq!(port_of(b"99999999999999999999"), None);
    }

    #[test]
    fn options_and_their_errors() {
        let a = argv(&["MIGRATE", "h", "1", "", "2", "0", "copy", "AUTH2", "u", "p", "KEYS", "a"]);
        let r = parse(&a).unwrap();
        assert!(r.source == Source::Keep && r.target == Target::Create);
        assert!(matches!(r.auth, Auth::User(u, p) if &u[..] == b"u" && &p[..] == b"p"));
        assert_eq!((r.keys.len(), r.dest_db, r.timeout.as_millis()), (1, 2, 1000));
        let e = |w: &[&str]| parse(&argv(w)).err().map(|e| e.to_string());
        assert_eq!(e(&["MIGRATE", "h", "1", "k", "x", "y", "auth"]).unwrap(), "ERR syntax error");
        assert_eq!(
            e(&["MIGRATE", "h", "1", "k", "x", "y", "keys", "a"]).unwrap(),
            "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
        );
        assert_eq!(
            e(&["MIGRATE", "h", "1", "k", "0", "y"]).unwrap(),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(e(&["MIGRATE", "h", "1", "k", "0", "5", "replace"]), None);
    }
}
