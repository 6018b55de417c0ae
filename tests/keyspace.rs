//! Keyspace commands over TCP: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, RANDOMKEY, RENAME,
//! RENAMENX, COPY, MOVE, SWAPDB, DBSIZE, FLUSHDB, FLUSHALL, SELECT, the EXPIRE and TTL
//! families, PERSIST, TOUCH and OBJECT; MIGRATE and RESTORE-ASKING (`keyspace/migrate.rs`);
//! binary keys; lazy and active expiry; and
//! differential checks against a real Valkey 9.1 (RESP2 and RESP3, errors included).
//!
//! Replies whose order is unspecified (KEYS, SCAN, RANDOMKEY) are compared as sets. Expire
//! times are compared only where they cannot race: large TTLs read with TTL (whole seconds),
//! absolute times read with EXPIRETIME / PEXPIRETIME.

mod common;
#[path = "keyspace/diff.rs"]
mod diff;
#[path = "keyspace/import.rs"]
mod import;
#[path = "keyspace/migrate.rs"]
mod migrate;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use common::diff::{same_as_valkey, same_as_valkey_with, Pair};
use common::{bulk, err, int, simple, start, Client, Val};

const NOT_INT: &str = "ERR value is not an integer or out of range";
const INT_RANGE: &str = "ERR value is out of range, value must between -2147483648 and 2147483647";
const DB_RANGE: &str = "ERR DB index is out of range";
const SAME: &str = "ERR source and destination objects are the same";
const SYNTAX: &str = "ERR syntax error";

/// Every key a full SCAN returns (cursor loop until 0), with extra options.
fn scan_all(c: &mut Client, opts: &[&str]) -> HashSet<Vec<u8>> {
    let mut seen = HashSet::new();
    let mut cursor = "0".to_string();
    for _ in 0..100_000 {
        let mut argv = vec!["SCAN", cursor.as_str()];
        argv.extend_from_slice(opts);
        let reply = c.cmd(&argv).as_array();
        let [Val::Bulk(next), Val::Array(keys)] = &reply[..] else {
            panic!("bad SCAN reply {reply:?}");
        };
        for k in keys {
            let Val::Bulk(k) = k else { panic!("bad key {k:?}") };
            seen.insert(k.clone());
        }
        cursor = String::from_utf8(next.clone()).expect("cursor text");
        if cursor == "0" {
            return seen;
        }
    }
    panic!("SCAN did not finish");
}

fn keys_set(v: Val) -> HashSet<Vec<u8>> {
    v.as_array()
        .into_iter()
        .map(|k| match k {
            Val::Bulk(b) => b,
            other => panic!("not a key: {other:?}"),
        })
        .collect()
}

fn set_of(keys: &[&str]) -> HashSet<Vec<u8>> {
    keys.iter().map(|k| k.as_bytes().to_vec()).collect()
}

// ---------------------------------------------------------------------------------------
// Against ferrokey alone.
// ---------------------------------------------------------------------------------------

#[test]
fn del_unlink_exists_type_touch() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for k in ["a", "b", "c"] {
        assert_eq!(c.cmd(&["SET", k, "1"]), Val::ok());
    }
    assert_eq!(c.cmd(&["EXISTS", "a", "a", "b", "nokey"]), int(3));
    assert_eq!(c.cmd(&["TOUCH", "a", "a", "nokey"]), int(2));
    assert_eq!(c.cmd(&["TYPE", "a"]), simple("string"));
    assert_eq!(c.cmd(&["TYPE", "nokey"]), simple("none"));
    assert_eq!(c.cmd(&["DEL", "a", "a", "nokey"]), int(1));
    assert_eq!(c.cmd(&["UNLINK", "b", "c", "b"]), int(2));
    assert_eq!(c.cmd(&["EXISTS", "a", "b", "c"]), int(0));
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    assert_eq!(c.cmd(&["DEL"]), err("ERR wrong number of arguments for 'del' command"));
    assert_eq!(c.cmd(&["TYPE", "a", "b"]), err("ERR wrong number of arguments for 'type' command"));
}

#[test]
fn del_with_lazyfree_user_del_behaves_the_same() {
    let s = start(&["--lazyfree-lazy-user-del", "yes"]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["SET", "a", "1"]), Val::ok());
    assert_eq!(c.cmd(&["DEL", "a", "a"]), int(1));
    assert_eq!(c.cmd(&["EXISTS", "a"]), int(0));
}

#[test]
fn keys_matches_glob_patterns() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for k in ["hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", ""] {
        assert_eq!(c.cmd(&["SET", k, "v"]), Val::ok());
    }
    let keys = |c: &mut Client, p: &str| keys_set(c.cmd(&["KEYS", p]));
    assert_eq!(
        keys(&mut c, "*"),
        set_of(&["hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", ""])
    );
    // `*` alone is special: any other pattern never matches the empty key.
    assert!(!keys(&mut c, "**").contains(&b""[..]));
    assert_eq!(keys(&mut c, "h?llo"), set_of(&["hello", "hallo", "hxllo", "h*llo"]));
    assert_eq!(
        keys(&mut c, "h*llo"),
        set_of(&["hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo"])
    );
    assert_eq!(keys(&mut c, "h[ae]llo"), set_of(&["hello", "hallo"]));
    assert_eq!(keys(&mut c, "h[^e]llo"), set_of(&["hallo", "hxllo", "h*llo"]));
    assert_eq!(keys(&mut c, "h[a-b]llo"), set_of(&["hallo"]));
    assert_eq!(keys(&mut c, "h\\*llo"), set_of(&["h*llo"]));
    assert_eq!(keys(&mut c, "nomatch*"), set_of(&[]));
    assert_eq!(c.cmd_raw(&["KEYS", "nomatch"]), b"*0\r\n");
}

#[test]
fn scan_returns_every_key_once_the_cursor_is_back_to_zero() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let mut expected = HashSet::new();
    for i in 0..1000 {
        let k = format!("key:{i}");
        assert_eq!(c.cmd(&["SET", &k, "v"]), Val::ok());
        expected.insert(k.into_bytes());
    }
    assert_eq!(scan_all(&mut c, &[]), expected);
    assert_eq!(scan_all(&mut c, &["COUNT", "1"]), expected);
    assert_eq!(scan_all(&mut c, &["COUNT", "97"]), expected);
    assert_eq!(scan_all(&mut c, &["count", "100000"]), expected);
    let tens: HashSet<Vec<u8>> =
        expected.iter().filter(|k| k.ends_with(b"0") && k.len() == 6).cloned().collect();
    assert_eq!(scan_all(&mut c, &["MATCH", "key:?0"]), tens);
    assert_eq!(scan_all(&mut c, &["TYPE", "string", "COUNT", "50"]), expected);
    assert_eq!(scan_all(&mut c, &["TYPE", "STRING"]), expected);
    assert!(scan_all(&mut c, &["TYPE", "list"]).is_empty());
}

#[test]
fn scan_survives_deletions_during_the_iteration() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for i in 0..500 {
        assert_eq!(c.cmd(&["SET", &format!("k{i}"), "v"]), Val::ok());
    }
    let mut seen = HashSet::new();
    let mut deleted = HashSet::new();
    let mut cursor = "0".to_string();
    let mut step = 0;
    loop {
        let reply = c.cmd(&["SCAN", &cursor, "COUNT", "20"]).as_array();
        for k in reply[1].as_array() {
            seen.insert(k.as_str());
        }
        // Delete keys with a step-dependent number, seen or not.
        for i in (step % 7..500).step_by(37) {
            let k = format!("k{i}");
            if c.cmd(&["DEL", &k]) == int(1) {
                deleted.insert(k);
            }
        }
        step += 1;
        cursor = reply[0].as_str();
        if cursor == "0" {
            break;
        }
    }
    for i in 0..500 {
        let k = format!("k{i}");
        assert!(deleted.contains(&k) || seen.contains(&k), "{k} never returned");
    }
}

/// Cursors and options of every scan, byte for byte with Valkey 9.1 (the cursor rules of
/// `string2ull`, TYPE names, NOVALUES / NOSCORES), in both protocols.
#[test]
fn scan_cursors_and_options_as_valkey_9() {
    same_as_valkey(&[
        "SET s v",
        "HSET h f v g w",
        "ZADD z 1 a 2 b",
        "SADD set m",
        "SCAN -1",
        "SCAN \"\"",
        "SCAN +0",
        "SCAN -0",
        "SCAN 007",
        "SCAN 18446744073709551615",
        "SCAN 18446744073709551616",
        "SCAN 0 TYPE nosuchtype",
        "SCAN 0 TYPE nosuchtype COUNT 0",
        "SCAN 0 COUNT 0 TYPE nosuchtype",
        "SCAN 0 TYPE vectorset",
        "SCAN 0 TYPE STRING",
        "SCAN 0 TYPE zset MATCH q*",
        "SCAN 0 NOVALUES",
        "SCAN 0 NOSCORES",
        "SSCAN set 0 NOVALUES",
        "SSCAN set 0 NOSCORES",
        "HSCAN h 0 NOSCORES",
        "HSCAN h 0 NOVALUES COUNT",
        "HSCAN h 0 NOVALUES NOVALUES",
        "HSCAN h 0 NOVALUES MATCH g",
        "HSCAN h -1 NOVALUES",
        "ZSCAN z 0 NOVALUES",
        "ZSCAN z 0 NOSCORES",
        "ZSCAN z 0 noscores MATCH b",
        "ZSCAN h 0 NOSCORES",
        "HSCAN z 0 NOVALUES",
        "HSCAN nokey 0 NOVALUES foo",
    ]);
}

#[test]
fn scan_reply_shape_and_errors() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd_raw(&["SCAN", "0"]), b"*2\r\n$1\r\n0\r\n*0\r\n");
    assert_eq!(c.cmd(&["SET", "a", "1"]), Val::ok());
    assert_eq!(c.cmd_raw(&["SCAN", "0"]), b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n");
    for cursor in ["abc", "-", "1 ", "18446744073709551616", "0x10", "", "-1", "-5"] {
        assert_eq!(c.cmd(&["SCAN", cursor]), err("ERR invalid cursor"), "{cursor:?}");
    }
    // Valkey 9's string2ull: a strict negative integer is refused; strtoull reads the rest.
    for cursor in ["+0", " 1", "-0", "007"] {
        assert_eq!(c.cmd(&["SCAN", cursor]).as_array()[0], bulk("0"), "{cursor:?}");
    }
    assert_eq!(
        c.cmd(&["SCAN", "0", "TYPE", "nosuchtype"]),
        err("ERR unknown type name 'nosuchtype'")
    );
    assert_eq!(c.cmd(&["SCAN", "0", "COUNT", "0"]), err(SYNTAX));
    assert_eq!(c.cmd(&["SCAN", "0", "COUNT", "-1"]), err(SYNTAX));
    assert_eq!(c.cmd(&["SCAN", "0", "COUNT", "x"]), err(NOT_INT));
    assert_eq!(c.cmd(&["SCAN", "0", "MATCH"]), err(SYNTAX));
    assert_eq!(c.cmd(&["SCAN", "0", "FOO", "bar"]), err(SYNTAX));
    assert_eq!(c.cmd(&["SCAN", "x", "COUNT", "0"]), err("ERR invalid cursor"));
    assert_eq!(c.cmd(&["SCAN"]), err("ERR wrong number of arguments for 'scan' command"));
}

#[test]
fn randomkey_returns_live_keys() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["RANDOMKEY"]), Val::Nil);
    for k in ["a", "b", "c"] {
        assert_eq!(c.cmd(&["SET", k, "1"]), Val::ok());
    }
    let all = set_of(&["a", "b", "c"]);
    let mut seen = HashSet::new();
    for _ in 0..200 {
        let Val::Bulk(k) = c.cmd(&["RANDOMKEY"]) else { panic!("no key") };
        assert!(all.contains(&k));
        seen.insert(k);
    }
    assert_eq!(seen, all, "RANDOMKEY should reach every key");
    assert_eq!(c.cmd(&["FLUSHDB"]), Val::ok());
    assert_eq!(c.cmd(&["SET", "gone", "1", "PX", "1"]), Val::ok());
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(c.cmd(&["RANDOMKEY"]), Val::Nil);
}

#[test]
fn rename_and_renamenx() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["RENAME", "nokey", "x"]), err("ERR no such key"));
    assert_eq!(c.cmd(&["RENAME", "nokey", "nokey"]), err("ERR no such key"));
    assert_eq!(c.cmd(&["RENAMENX", "nokey", "x"]), err("ERR no such key"));
    assert_eq!(c.cmd(&["SET", "a", "1"]), Val::ok());
    assert_eq!(c.cmd(&["EXPIRE", "a", "1000"]), int(1));
    assert_eq!(c.cmd(&["RENAME", "a", "b"]), Val::ok());
    assert_eq!(c.cmd(&["EXISTS", "a"]), int(0));
    assert_eq!(c.cmd(&["GET", "b"]), bulk("1"));
    assert_eq!(c.cmd(&["TTL", "b"]), int(1000), "RENAME keeps the TTL");
    assert_eq!(c.cmd(&["RENAME", "b", "b"]), Val::ok());
    assert_eq!(c.cmd(&["RENAMENX", "b", "b"]), int(0));
    assert_eq!(c.cmd(&["SET", "c", "3"]), Val::ok());
    assert_eq!(c.cmd(&["RENAMENX", "b", "c"]), int(0));
    assert_eq!(c.cmd(&["GET", "c"]), bulk("3"));
    assert_eq!(c.cmd(&["RENAME", "b", "c"]), Val::ok());
    assert_eq!(c.cmd(&["GET", "c"]), bulk("1"));
    assert_eq!(c.cmd(&["TTL", "c"]), int(1000));
    assert_eq!(c.cmd(&["RENAMENX", "c", "d"]), int(1));
    assert_eq!(c.cmd(&["TTL", "d"]), int(1000));
    assert_eq!(c.cmd(&["SET", "e", "x"]), Val::ok());
    assert_eq!(c.cmd(&["RENAME", "e", "d"]), Val::ok());
    assert_eq!(c.cmd(&["TTL", "d"]), int(-1), "the source had no TTL");
    assert_eq!(c.cmd(&["DBSIZE"]), int(1));
}

#[test]
fn copy_with_db_and_replace() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["SET", "a", "hello"]), Val::ok());
    assert_eq!(c.cmd(&["PEXPIRE", "a", "1000000"]), int(1));
    assert_eq!(c.cmd(&["COPY", "a", "b"]), int(1));
    assert_eq!(c.cmd(&["GET", "b"]), bulk("hello"));
    assert_eq!(c.cmd(&["TTL", "b"]), int(1000), "COPY keeps the TTL");
    assert_eq!(c.cmd(&["SET", "b", "other"]), Val::ok());
    assert_eq!(c.cmd(&["COPY", "a", "b"]), int(0));
    assert_eq!(c.cmd(&["GET", "b"]), bulk("other"));
    assert_eq!(c.cmd(&["COPY", "a", "b", "REPLACE"]), int(1));
    assert_eq!(c.cmd(&["GET", "b"]), bulk("hello"));
    assert_eq!(c.cmd(&["COPY", "a", "a"]), err(SAME));
    assert_eq!(c.cmd(&["COPY", "a", "a", "DB", "0"]), err(SAME));
    assert_eq!(c.cmd(&["COPY", "a", "a", "db", "3"]), int(1));
    assert_eq!(c.cmd(&["COPY", "nokey", "x"]), int(0));
    assert_eq!(c.cmd(&["COPY", "a", "x", "DB", "16"]), err(DB_RANGE));
    assert_eq!(c.cmd(&["COPY", "a", "x", "DB", "-1"]), err(DB_RANGE));
    assert_eq!(c.cmd(&["COPY", "a", "x", "DB", "x"]), err(NOT_INT));
    assert_eq!(c.cmd(&["COPY", "a", "x", "DB", "4294967296"]), err(INT_RANGE));
    assert_eq!(c.cmd(&["COPY", "a", "x", "DB"]), err(SYNTAX));
    assert_eq!(c.cmd(&["COPY", "a", "x", "NOPE"]), err(SYNTAX));
    assert_eq!(c.cmd(&["SELECT", "3"]), Val::ok());
    assert_eq!(c.cmd(&["GET", "a"]), bulk("hello"));
    assert_eq!(c.cmd(&["TTL", "a"]), int(1000));
    // The copy is independent of the source.
    assert_eq!(c.cmd(&["APPEND", "a", "!"]), int(6));
    assert_eq!(c.cmd(&["SELECT", "0"]), Val::ok());
    assert_eq!(c.cmd(&["GET", "a"]), bulk("hello"));
}

#[test]
fn move_between_databases() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["SET", "a", "1"]), Val::ok());
    assert_eq!(c.cmd(&["EXPIRE", "a", "500"]), int(1));
    assert_eq!(c.cmd(&["MOVE", "a", "0"]), err(SAME));
    assert_eq!(c.cmd(&["MOVE", "nokey", "0"]), err(SAME));
    assert_eq!(c.cmd(&["MOVE", "a", "16"]), err(DB_RANGE));
    assert_eq!(c.cmd(&["MOVE", "a", "x"]), err(NOT_INT));
    assert_eq!(c.cmd(&["MOVE", "a", "-2147483649"]), err(INT_RANGE));
    assert_eq!(c.cmd(&["MOVE", "nokey", "1"]), int(0));
    assert_eq!(c.cmd(&["MOVE", "a", "1"]), int(1));
    assert_eq!(c.cmd(&["EXISTS", "a"]), int(0));
    assert_eq!(c.cmd(&["SET", "a", "2"]), Val::ok());
    assert_eq!(c.cmd(&["MOVE", "a", "1"]), int(0), "the key exists in the target");
    assert_eq!(c.cmd(&["GET", "a"]), bulk("2"));
    assert_eq!(c.cmd(&["SELECT", "1"]), Val::ok());
    assert_eq!(c.cmd(&["GET", "a"]), bulk("1"));
    assert_eq!(c.cmd(&["TTL", "a"]), int(500), "MOVE keeps the TTL");
}

#[test]
fn select_swapdb_dbsize() {
    let s = start(&["--databases", "4"]);
    let mut c = Client::connect(s.port);
    let mut other = Client::connect(s.port);
    assert_eq!(c.cmd(&["SELECT", "4"]), err(DB_RANGE));
    assert_eq!(c.cmd(&["SELECT", "-1"]), err(DB_RANGE));
    assert_eq!(c.cmd(&["SELECT", "x"]), err(NOT_INT));
    assert_eq!(c.cmd(&["SELECT", "99999999999"]), err(INT_RANGE));
    assert_eq!(c.cmd(&["SET", "in0", "a"]), Val::ok());
    assert_eq!(c.cmd(&["SELECT", "3"]), Val::ok());
    assert_eq!(c.cmd(&["MSET", "x", "1", "y", "2"]), Val::ok());
    assert_eq!(c.cmd(&["DBSIZE"]), int(2));
    assert_eq!(other.cmd(&["DBSIZE"]), int(1), "SELECT is per connection");
    assert_eq!(c.cmd(&["SWAPDB", "0", "3"]), Val::ok());
    assert_eq!(other.cmd(&["DBSIZE"]), int(2));
    assert_eq!(other.cmd(&["GET", "x"]), bulk("1"));
    assert_eq!(c.cmd(&["GET", "in0"]), bulk("a"));
    assert_eq!(c.cmd(&["SWAPDB", "1", "1"]), Val::ok());
    assert_eq!(c.cmd(&["SWAPDB", "x", "1"]), err("ERR invalid first DB index"));
    assert_eq!(c.cmd(&["SWAPDB", "x", "y"]), err("ERR invalid first DB index"));
    assert_eq!(c.cmd(&["SWAPDB", "1", "y"]), err("ERR invalid second DB index"));
    assert_eq!(c.cmd(&["SWAPDB", "99999999999", "1"]), err("ERR invalid first DB index"));
    assert_eq!(c.cmd(&["SWAPDB", "1", "4"]), err(DB_RANGE));
    assert_eq!(c.cmd(&["SWAPDB", "-1", "1"]), err(DB_RANGE));
}

#[test]
fn flushdb_and_flushall_sync_and_async() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let fill = |c: &mut Client, n: usize| {
        for i in 0..n {
            assert_eq!(c.cmd(&["SET", &format!("k{i}"), "v"]), Val::ok());
        }
    };
    fill(&mut c, 10);
    assert_eq!(c.cmd(&["SELECT", "1"]), Val::ok());
    fill(&mut c, 5);
    assert_eq!(c.cmd(&["FLUSHDB"]), Val::ok());
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    assert_eq!(c.cmd(&["SELECT", "0"]), Val::ok());
    assert_eq!(c.cmd(&["DBSIZE"]), int(10));
    assert_eq!(c.cmd(&["FLUSHDB", "async"]), Val::ok());
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    fill(&mut c, 3);
    assert_eq!(c.cmd(&["FLUSHALL", "SYNC"]), Val::ok());
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    assert_eq!(c.cmd(&["FLUSHDB", "foo"]), err(SYNTAX));
    assert_eq!(c.cmd(&["FLUSHALL", "ASYNC", "SYNC"]), err(SYNTAX));
    assert_eq!(c.cmd(&["FLUSHALL", "now"]), err(SYNTAX));
}

#[test]
fn flushall_async_empties_every_database_at_once() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for db in ["0", "7"] {
        assert_eq!(c.cmd(&["SELECT", db]), Val::ok());
        let mut pipeline = Vec::new();
        for i in 0..5000 {
            let k = format!("key:{i}");
            pipeline.extend(Client::encode(&[b"SET", k.as_bytes(), b"some value here"]));
        }
        c.send_raw(&pipeline);
        for _ in 0..5000 {
            assert_eq!(c.read(), Val::ok());
        }
        assert_eq!(c.cmd(&["DBSIZE"]), int(5000));
    }
    assert_eq!(c.cmd(&["FLUSHALL", "ASYNC"]), Val::ok());
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    assert_eq!(c.cmd(&["SELECT", "0"]), Val::ok());
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    // The server keeps serving while (and after) the old contents are freed.
    assert_eq!(c.cmd(&["SET", "key:1", "new"]), Val::ok());
    assert_eq!(c.cmd(&["GET", "key:1"]), bulk("new"));
    assert_eq!(c.cmd(&["PING"]), simple("PONG"));
}

#[test]
fn expire_conditions_and_errors() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["EXPIRE", "nokey", "100"]), int(0));
    assert_eq!(c.cmd(&["SET", "k", "v"]), Val::ok());
    assert_eq!(c.cmd(&["EXPIRE", "k", "100", "GT"]), int(0), "no TTL counts as infinite");
    assert_eq!(c.cmd(&["EXPIRE", "k", "100", "XX"]), int(0));
    assert_eq!(c.cmd(&["EXPIRE", "k", "100", "NX"]), int(1));
    assert_eq!(c.cmd(&["EXPIRE", "k", "200", "NX"]), int(0));
    assert_eq!(c.cmd(&["TTL", "k"]), int(100));
    assert_eq!(c.cmd(&["EXPIRE", "k", "50", "GT"]), int(0));
    assert_eq!(c.cmd(&["EXPIRE", "k", "200", "gt"]), int(1));
    assert_eq!(c.cmd(&["EXPIRE", "k", "300", "LT"]), int(0));
    assert_eq!(c.cmd(&["EXPIRE", "k", "150", "xx", "lt"]), int(1));
    assert_eq!(c.cmd(&["TTL", "k"]), int(150));
    assert_eq!(c.cmd(&["PERSIST", "k"]), int(1));
    assert_eq!(c.cmd(&["PERSIST", "k"]), int(0));
    assert_eq!(c.cmd(&["PERSIST", "nokey"]), int(0));
    assert_eq!(c.cmd(&["EXPIRE", "k", "100", "LT"]), int(1), "no TTL counts as infinite");
    let nx = "ERR NX and XX, GT or LT options at the same time are not compatible";
    let gtlt = "ERR GT and LT options at the same time are not compatible";
    assert_eq!(c.cmd(&["EXPIRE", "k", "1", "NX", "XX"]), err(nx));
    assert_eq!(c.cmd(&["EXPIRE", "k", "1", "gt", "nx"]), err(nx));
    assert_eq!(c.cmd(&["EXPIRE", "k", "1", "GT", "LT"]), err(gtlt));
    assert_eq!(c.cmd(&["EXPIRE", "k", "1", "XX", "GT", "LT"]), err(gtlt));
    assert_eq!(c.cmd(&["EXPIRE", "k", "x", "foo"]), err("ERR Unsupported option foo"));
    assert_eq!(c.cmd(&["EXPIRE", "k", "x"]), err(NOT_INT));
    assert_eq!(c.cmd(&["EXPIRE", "k", "1.5"]), err(NOT_INT));
    let bad = |cmd: &str| format!("ERR invalid expire time in '{cmd}' command");
    assert_eq!(c.cmd(&["EXPIRE", "k", "9223372036854775807"]), err(&bad("expire")));
    assert_eq!(c.cmd(&["EXPIRE", "k", "9223372036854775"]), err(&bad("expire")));
    assert_eq!(c.cmd(&["EXPIRE", "k", "-9223372036854775808"]), err(&bad("expire")));
    assert_eq!(c.cmd(&["PEXPIRE", "k", "9223372036854775807"]), err(&bad("pexpire")));
    assert_eq!(c.cmd(&["EXPIREAT", "k", "9223372036854775807"]), err(&bad("expireat")));
    assert_eq!(c.cmd(&["PEXPIREAT", "k", "9223372036854775807"]), int(1));
    assert_eq!(c.cmd(&["PEXPIRETIME", "k"]), int(i64::MAX));
    assert_eq!(c.cmd(&["EXPIRETIME", "k"]), int(9223372036854776));
    assert_eq!(
        c.cmd(&["EXPIRE", "k", "1", "NX", "XX", "bogus"]),
        err("ERR Unsupported option bogus")
    );
    assert_eq!(c.cmd(&["EXPIRE", "k"]), err("ERR wrong number of arguments for 'expire' command"));
}

#[test]
fn expire_in_the_past_deletes_the_key() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for (cmd, t) in [
        ("EXPIRE", "0"),
        ("EXPIRE", "-5"),
        ("PEXPIRE", "-1"),
        ("EXPIREAT", "1"),
        ("PEXPIREAT", "0"),
    ] {
        assert_eq!(c.cmd(&["SET", "k", "v"]), Val::ok());
        assert_eq!(c.cmd(&[cmd, "k", t]), int(1), "{cmd} {t}");
        assert_eq!(c.cmd(&["EXISTS", "k"]), int(0), "{cmd} {t}");
    }
    assert_eq!(c.cmd(&["SET", "k", "v"]), Val::ok());
    assert_eq!(c.cmd(&["PEXPIRE", "k", "-9223372036854775808"]), int(1));
    assert_eq!(c.cmd(&["EXISTS", "k"]), int(0));
}

#[test]
fn ttl_family() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for cmd in ["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"] {
        assert_eq!(c.cmd(&[cmd, "nokey"]), int(-2), "{cmd}");
    }
    assert_eq!(c.cmd(&["SET", "k", "v"]), Val::ok());
    for cmd in ["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"] {
        assert_eq!(c.cmd(&[cmd, "k"]), int(-1), "{cmd}");
    }
    assert_eq!(c.cmd(&["PEXPIRE", "k", "100000"]), int(1));
    let pttl = c.cmd(&["PTTL", "k"]).as_int();
    assert!((99_000..=100_000).contains(&pttl), "{pttl}");
    assert_eq!(c.cmd(&["TTL", "k"]), int(100));
    assert_eq!(c.cmd(&["EXPIREAT", "k", "4102444800"]), int(1));
    assert_eq!(c.cmd(&["EXPIRETIME", "k"]), int(4102444800));
    assert_eq!(c.cmd(&["PEXPIRETIME", "k"]), int(4102444800000));
    assert_eq!(c.cmd(&["PEXPIREAT", "k", "4102444800499"]), int(1));
    assert_eq!(c.cmd(&["EXPIRETIME", "k"]), int(4102444800));
    assert_eq!(c.cmd(&["PEXPIREAT", "k", "4102444800500"]), int(1));
    assert_eq!(c.cmd(&["EXPIRETIME", "k"]), int(4102444801), "seconds are rounded");
    assert_eq!(c.cmd(&["SET", "k", "v2"]), Val::ok());
    assert_eq!(c.cmd(&["TTL", "k"]), int(-1), "SET clears the TTL");
}

#[test]
fn object_subcommands() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    // Valkey 9.1 embeds a value with its key: a 4-byte key takes up to 109 bytes as embstr.
    let long = "x".repeat(110);
    let long44 = "x".repeat(109);
    for (k, v) in [
        ("i", "5"),
        ("big", "10000"),
        ("neg", "-1"),
        ("s", "hello"),
        ("long", long.as_str()),
        ("l44", long44.as_str()),
    ] {
        assert_eq!(c.cmd(&["SET", k, v]), Val::ok());
    }
    let enc = |c: &mut Client, k: &str| c.cmd(&["OBJECT", "ENCODING", k]);
    assert_eq!(enc(&mut c, "i"), bulk("int"));
    assert_eq!(enc(&mut c, "neg"), bulk("int"));
    assert_eq!(enc(&mut c, "s"), bulk("embstr"));
    assert_eq!(enc(&mut c, "l44"), bulk("embstr"));
    assert_eq!(enc(&mut c, "long"), bulk("raw"));
    assert_eq!(enc(&mut c, "nokey"), Val::Nil);
    assert_eq!(c.cmd(&["OBJECT", "REFCOUNT", "i"]), int(1));
    assert_eq!(c.cmd(&["OBJECT", "REFCOUNT", "big"]), int(1));
    assert_eq!(c.cmd(&["OBJECT", "REFCOUNT", "neg"]), int(1));
    assert_eq!(c.cmd(&["OBJECT", "REFCOUNT", "s"]), int(1));
    assert_eq!(c.cmd(&["OBJECT", "REFCOUNT", "nokey"]), Val::Nil);
    let idle = c.cmd(&["OBJECT", "IDLETIME", "s"]).as_int();
    assert!((0..=1).contains(&idle), "{idle}");
    assert_eq!(c.cmd(&["OBJECT", "IDLETIME", "nokey"]), Val::Nil);
    assert_eq!(
        c.cmd(&["OBJECT", "FREQ", "s"]),
        err("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
    );
    assert_eq!(c.cmd(&["OBJECT", "FREQ", "nokey"]), Val::Nil);
    let help = c.cmd(&["OBJECT", "HELP"]).as_array();
    assert_eq!(help.len(), 15);
    assert_eq!(help[0], simple("OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"));
    assert_eq!(help[14], simple("    Print this help."));
    assert_eq!(c.cmd(&["OBJECT", "foo"]), err("ERR unknown subcommand 'foo'. Try OBJECT HELP."));
    assert_eq!(
        c.cmd(&["OBJECT", "ENCODING"]),
        err("ERR wrong number of arguments for 'object|encoding' command")
    );
    assert_eq!(c.cmd(&["OBJECT"]), err("ERR wrong number of arguments for 'object' command"));
}

#[test]
fn object_idletime_is_refused_under_lfu() {
    let s = start(&["--maxmemory-policy", "allkeys-lfu"]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["SET", "s", "v"]), Val::ok());
    assert_eq!(
        c.cmd(&["OBJECT", "IDLETIME", "s"]),
        err("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
    );
    assert_eq!(c.cmd(&["OBJECT", "IDLETIME", "nokey"]), Val::Nil);
    assert!(matches!(c.cmd(&["OBJECT", "FREQ", "s"]), Val::Int(_)));
}

#[test]
fn binary_keys_with_nul_and_crlf() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let k1: &[u8] = b"a\0b";
    let k2: &[u8] = b"\r\n";
    let k3: &[u8] = b"x\0\r\ny";
    for k in [k1, k2, k3] {
        assert_eq!(c.cmd_b(&[b"SET", k, b"v"]), Val::ok());
    }
    assert_eq!(c.cmd_b(&[b"EXISTS", k1, k2, k3, b"a"]), int(3));
    assert_eq!(c.cmd_b(&[b"TYPE", k3]), simple("string"));
    let all: HashSet<Vec<u8>> = [k1, k2, k3].iter().map(|k| k.to_vec()).collect();
    assert_eq!(keys_set(c.cmd(&["KEYS", "*"])), all);
    assert_eq!(keys_set(c.cmd_b(&[b"KEYS", b"a\0?"])), [k1.to_vec()].into_iter().collect());
    assert_eq!(scan_all(&mut c, &[]), all);
    assert_eq!(c.cmd_b(&[b"RENAME", k1, b"a\0c"]), Val::ok());
    assert_eq!(c.cmd_b(&[b"GET", b"a\0c"]), bulk("v"));
    assert_eq!(c.cmd_b(&[b"COPY", k2, b"\r\n\0"]), int(1));
    assert_eq!(c.cmd_b(&[b"MOVE", k3, b"1"]), int(1));
    assert_eq!(c.cmd_b(&[b"EXPIRE", k2, b"100"]), int(1));
    assert_eq!(c.cmd_b(&[b"TTL", k2]), int(100));
    assert_eq!(c.cmd_b(&[b"OBJECT", b"ENCODING", k2]), bulk("embstr"));
    assert_eq!(c.cmd_b(&[b"DEL", b"a\0c", k2, b"\r\n\0", b"a"]), int(3));
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    assert_eq!(c.cmd(&["SELECT", "1"]), Val::ok());
    assert_eq!(c.cmd(&["RANDOMKEY"]), Val::Bulk(k3.to_vec()));
}

#[test]
fn keys_expire_lazily_on_access() {
    let s = start(&["--enable-debug-command", "yes"]);
    let mut c = Client::connect(s.port);
    // Only lazy expiry may delete the keys here.
    assert_eq!(c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), Val::ok());
    assert_eq!(c.cmd(&["SET", "k", "v", "PX", "50"]), Val::ok());
    assert_eq!(c.cmd(&["SET", "k2", "v", "PX", "50"]), Val::ok());
    assert_eq!(c.cmd(&["SET", "stay", "v"]), Val::ok());
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(c.cmd(&["GET", "k"]), Val::Nil);
    assert_eq!(c.cmd(&["TTL", "k2"]), int(-2));
    assert_eq!(keys_set(c.cmd(&["KEYS", "*"])), set_of(&["stay"]));
    assert_eq!(c.cmd(&["EXISTS", "k", "k2", "stay"]), int(1));
}

#[test]
fn keys_expire_actively_without_access() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let mut pipeline = Vec::new();
    for i in 0..200 {
        let k = format!("volatile:{i}");
        pipeline.extend(Client::encode(&[b"SET", k.as_bytes(), b"v", b"PX", b"50"]));
    }
    c.send_raw(&pipeline);
    for _ in 0..200 {
        assert_eq!(c.read(), Val::ok());
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let n = c.cmd(&["DBSIZE"]).as_int();
        if n == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "{n} keys left after 2s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn resp3_null_replies() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert!(matches!(c.cmd(&["HELLO", "3"]), Val::Map(_)));
    assert_eq!(c.cmd_raw(&["RANDOMKEY"]), b"_\r\n");
    assert_eq!(c.cmd_raw(&["OBJECT", "ENCODING", "nokey"]), b"_\r\n");
    assert_eq!(c.cmd_raw(&["OBJECT", "REFCOUNT", "nokey"]), b"_\r\n");
    assert_eq!(c.cmd_raw(&["KEYS", "*"]), b"*0\r\n");
    assert_eq!(c.cmd_raw(&["TYPE", "nokey"]), b"+none\r\n");
}
