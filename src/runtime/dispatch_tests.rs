//! What a command costs in the keyspace: each key hashed once (where the command is parsed)
//! and looked up once, counted by the table's test counters over parse and execution.
//!
//! The commands listed are the everyday reads and writes. A few others still look a key up
//! twice: those that read a value before deleting or replacing it (GETDEL, GETSET, SET GET)
//! those that move an element between two keys (LMOVE, SMOVE), which check both keys'
//! types before they change either, and ZPOPMIN/ZPOPMAX, which find the first sorted set of
//! their keys (shared with ZMPOP and BZPOPMIN) before they pop from it.

use bytes::Bytes;

use super::*;
use crate::config::Config;
use crate::resp::reply::{Proto, Reply};
use crate::runtime::parsed::Parsed;
use crate::server::client::Client;
use crate::spec::table::KeyBuf;
use crate::table::counters;

/// Parses and runs `line` (split on spaces) as the batch does; returns (hashes, probes).
fn cost(srv: &mut ServerState, token: usize, line: &str) -> (u64, u64) {
    let argv: Vec<Bytes> = line.split(' ').map(|a| Bytes::copy_from_slice(a.as_bytes())).collect();
    counters::take();
    crate::commands::lookups::take();
    let parsed = Parsed::new(argv, &mut KeyBuf::default());
    let hashed = parsed.hashed();
    let mut slot = srv.clients.lend(token).expect("the test client");
    let flow = execute_looked_up(srv, token, &mut slot, parsed.cmd, &parsed.argv, hashed, 0);
    assert_eq!(flow, Flow::Continue, "{line}");
    assert!(!slot.out.stream_bytes().starts_with(b"-"), "{line} failed");
    slot.out = Reply::new(Proto::Resp2);
    srv.clients.put_back(token, slot);
    assert_eq!(crate::commands::lookups::take(), 1, "{line}: looked up once, when parsed");
    counters::take()
}

fn server_with_a_client() -> (ServerState, usize) {
    let mut srv = ServerState::new(Config::default(), None, 0);
    let client = Client::new(1, String::new(), String::new(), -1, false, 0);
    let token = srv.clients.insert(Box::new(Slot::new(client, Reply::new(Proto::Resp2))));
    (srv, token)
}

#[test]
fn a_queued_command_is_looked_up_once_when_parsed_not_again_by_exec() {
    let (mut srv, token) = server_with_a_client();
    for line in ["MULTI", "SET a 1", "INCR a", "CONFIG GET hz", "EXEC", "GET a"] {
        cost(&mut srv, token, line);
    }
    assert!(srv.dbs[0].contains(b"a", 0), "EXEC ran the queued writes");
}

#[test]
fn a_command_hashes_each_key_once_and_probes_it_once() {
    let (mut srv, token) = server_with_a_client();
    let one = (1, 1);
    let mut wrong = Vec::new();
    for (line, expected) in [
        ("SET k v", one),
        ("GET k", one),
        ("SET k w", one),
        ("GET nokey", one),
        ("SET n 1", one),
        ("INCR n", one),
        ("APPEND k x", one),
        ("EXPIRE k 100", one),
        ("TTL k", one),
        ("EXISTS k", one),
        ("LPUSH l a", one),
        ("RPUSH l b", one),
        ("LPOP l", one),
        ("HSET h f v", one),
        ("HGET h f", one),
        ("SADD s m", one),
        ("ZADD z 1 m", one),
        ("PERSIST k", one),
        ("SETEX e 100 v", one),
        ("INCRBYFLOAT n 1.5", one),
        ("SETRANGE k 1 yy", one),
        ("HINCRBY h c 1", one),
        ("HDEL h f", one),
        ("SREM s m", one),
        ("ZINCRBY z 1 m", one),
        ("ZREM z m", one),
        ("ZADD z 1 a 2 b", one),
        ("DEL k", one),
        ("MSET a 1 b 2 c 3", (3, 3)),
        ("MGET a b c", (3, 3)),
    ] {
        let got = cost(&mut srv, token, line);
        if got != expected {
            wrong.push(format!("{line}: (hashes, probes) {got:?}, not {expected:?}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
