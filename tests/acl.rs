//! Access control (Valkey's ACL) against a real Valkey 9.1 (the oracle): the ACL SETUSER
//! rule grammar and how ACL GETUSER and ACL LIST render a user; every other ACL subcommand
//! and its errors; AUTH and HELLO AUTH; what a logged-in user may run, by command,
//! category, key pattern (read and write), channel and database, with selectors, inside
//! MULTI and inside scripts; the ACL LOG and the INFO counters of denials; the clients
//! dropped when their user goes or loses a channel; the aclfile (ACL LOAD, ACL SAVE,
//! start-up) and `user` directives; and the secrets hidden from SLOWLOG and MONITOR.
//!
//! Most checks send the same commands to both servers and compare the replies byte for
//! byte. Replies that carry times, ids, ports or random bytes (HELLO, ACL LOG, ACL
//! GENPASS, SLOWLOG, MONITOR) are compared after the helpers here blank those parts. A
//! second client on each server, logged in as the user under test, is a [`Duo`].

mod common;

#[path = "acl/auth.rs"]
mod auth;
#[path = "acl/clients.rs"]
mod clients;
#[path = "acl/enforce.rs"]
mod enforce;
#[path = "acl/files.rs"]
mod files;
#[path = "acl/log.rs"]
mod log;
#[path = "acl/multi.rs"]
mod multi;
#[path = "acl/redact.rs"]
mod redact;
#[path = "acl/scripts.rs"]
mod scripts;
#[path = "acl/setuser.rs"]
mod setuser;
#[path = "acl/subcommands.rs"]
mod subcommands;

use std::fmt::Debug;

use common::diff::{line_replies, words, Pair};
use common::{parse_val, start, start_valkey, Client, Server, Val};

/// The ferrokey binary, for the tests that run it themselves (start-up failures, config
/// files).
fn ours_bin() -> String {
    env!("CARGO_BIN_EXE_ferrokey-server").to_string()
}

/// Ferrokey started with `args` (see [`common::start`]).
fn start_ours(args: &[&str]) -> Server {
    start(args)
}

/// Ferrokey and the oracle, both started with `args`, one client on each speaking `proto`.
fn pair(proto: u8, args: &[&str]) -> Pair {
    Pair::connect(start_ours(args), start_valkey(args), proto)
}

/// One more client on each server of a pair: the same session, seen from ferrokey (`a`)
/// and from the oracle (`b`).
pub struct Duo {
    pub a: Client,
    pub b: Client,
    pub proto: u8,
}

impl Duo {
    /// New clients, not authenticated, speaking RESP2.
    pub fn connect(p: &Pair) -> Duo {
        Duo { a: Client::connect(p.ours.port), b: Client::connect(p.theirs.port), proto: 2 }
    }

    /// New clients logged in as `user` with `pass`, in the pair's protocol: `AUTH` under
    /// RESP2, `HELLO 3 AUTH` under RESP3. Both must accept.
    pub fn login(p: &Pair, user: &str, pass: &str) -> Duo {
        let mut d = Duo::connect(p);
        d.proto = p.proto;
        for c in [&mut d.a, &mut d.b] {
            if p.proto == 3 {
                let hello = c.cmd(&["HELLO", "3", "AUTH", user, pass]);
                assert!(matches!(hello, Val::Map(_)), "HELLO 3 AUTH {user}: {hello:?}");
            } else {
                assert_eq!(c.cmd(&["AUTH", user, pass]), Val::ok(), "AUTH {user}");
            }
        }
        d
    }

    /// Send one command to both; the raw replies (ours, theirs).
    pub fn both<A: AsRef<[u8]>>(&mut self, args: &[A]) -> (Vec<u8>, Vec<u8>) {
        let argv: Vec<&[u8]> = args.iter().map(AsRef::as_ref).collect();
        self.a.send(&argv);
        self.b.send(&argv);
        (self.a.read_raw(), self.b.read_raw())
    }

    /// The command `args` gets byte-identical replies.
    pub fn same<A: AsRef<[u8]> + Debug>(&mut self, args: &[A]) {
        let (ours, theirs) = self.both(args);
        same_raw(self.proto, args, &ours, &theirs);
    }

    /// The script line (see [`words`]) gets byte-identical replies, sorted first for a
    /// line that starts with `~`.
    pub fn same_line(&mut self, line: &str) {
        let (rest, ours, theirs) = line_replies(line, |argv| self.both(argv));
        same_raw(self.proto, rest, &ours, &theirs);
    }

    pub fn same_lines(&mut self, lines: &[&str]) {
        for line in lines {
            self.same_line(line);
        }
    }

    /// The script line gets equal replies once parsed and passed through `normalize`.
    pub fn same_normalized(&mut self, line: &str, normalize: impl Fn(Val) -> Val) -> Val {
        let (ours, theirs) = self.both(&words(line));
        let ours = normalize(parse_val(&mut &ours[..]));
        let theirs = normalize(parse_val(&mut &theirs[..]));
        assert_eq!(ours, theirs, "RESP{} {line:?} (left: ferrokey, right: valkey 9.1)", self.proto);
        theirs
    }
}

/// `line` on the first client of each server of `p`, both replies parsed and passed
/// through `normalize`, must be equal; the oracle's normalized reply.
fn same_normalized(p: &mut Pair, line: &str, normalize: impl Fn(Val) -> Val) -> Val {
    let (ours, theirs) = p.both(&words(line));
    let ours = normalize(parse_val(&mut &ours[..]));
    let theirs = normalize(parse_val(&mut &theirs[..]));
    p.assert_equal(line, &ours, &theirs);
    theirs
}

/// Assert two raw replies to `what` are byte-identical (shown as text when not).
fn same_raw(proto: u8, what: impl Debug, ours: &[u8], theirs: &[u8]) {
    assert_eq!(
        String::from_utf8_lossy(ours),
        String::from_utf8_lossy(theirs),
        "RESP{proto} reply to {what:?} differs (left: ferrokey, right: valkey 9.1)"
    );
}

/// A fresh pair in each protocol, each given the same `lines` (run on its first client).
fn same_in_both_protocols(args: &[&str], lines: &[&str]) {
    for proto in [2, 3] {
        pair(proto, args).same_lines(lines);
    }
}

/// The fields of a reply that is a map under RESP3 and a flat array of pairs under RESP2.
fn map_pairs(v: &Val) -> Vec<(String, Val)> {
    match v {
        Val::Map(pairs) => pairs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect(),
        Val::Array(flat) => {
            assert!(flat.len() % 2 == 0, "not a flat map: {v:?}");
            flat.chunks(2).map(|kv| (kv[0].as_str(), kv[1].clone())).collect()
        }
        other => panic!("not a map: {other:?}"),
    }
}

/// A map-shaped reply (either protocol) without the fields named in `drop`.
fn without_fields(v: Val, drop: &[&str]) -> Val {
    match v {
        Val::Map(pairs) => Val::Map(
            pairs.into_iter().filter(|(k, _)| !drop.contains(&k.as_str().as_str())).collect(),
        ),
        Val::Array(flat) => Val::Array(
            flat.chunks(2)
                .filter(|kv| !drop.contains(&kv[0].as_str().as_str()))
                .flat_map(|kv| kv.to_vec())
                .collect(),
        ),
        other => other,
    }
}

/// HELLO's reply without what legitimately differs: the client id, and the module list
/// (Valkey 9.1 lists its Lua engine as a module).
fn hello_shape(v: Val) -> Val {
    without_fields(v, &["id", "modules"])
}
