//! Keyspace behaviour that every aggregate type shares, over TCP: TYPE, SCAN TYPE, OBJECT
//! ENCODING, MEMORY USAGE, expiry, RENAME/MOVE/COPY (which move or deep-copy the object),
//! DEL/UNLINK of large values, WRONGTYPE across families, and eviction of aggregates; with
//! differential checks against a real redis-server 7.0 where both agree by design.

mod common;

use std::collections::HashSet;

use common::diff::same_as_valkey;
use common::{bulk, info_int, int, start, Client, Val};

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

fn fill_one_of_each(c: &mut Client) {
    assert_eq!(c.cmd(&["HSET", "h", "f", "v"]), int(1));
    assert_eq!(c.cmd(&["RPUSH", "l", "a", "b"]), int(2));
    assert_eq!(c.cmd(&["SADD", "s", "1", "2"]), int(2));
    assert_eq!(c.cmd(&["SADD", "ss", "x", "y"]), int(2));
    assert_eq!(c.cmd(&["ZADD", "z", "1", "m"]), int(1));
    assert_eq!(c.cmd(&["SET", "str", "v"]), Val::ok());
}

fn scan_type(c: &mut Client, t: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut cursor = "0".to_string();
    loop {
        let reply = c.cmd(&["SCAN", &cursor, "TYPE", t, "COUNT", "100"]).as_array();
        let [Val::Bulk(next), Val::Array(keys)] = &reply[..] else { panic!("{reply:?}") };
        seen.extend(keys.iter().map(Val::as_str));
        cursor = String::from_utf8(next.clone()).unwrap();
        if cursor == "0" {
            return seen;
        }
    }
}

#[test]
fn type_scan_type_and_small_encodings() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    fill_one_of_each(&mut c);
    for (k, t, enc) in [
        ("h", "hash", "listpack"),
        ("l", "list", "listpack"),
        ("s", "set", "intset"),
        ("ss", "set", "listpack"),
        ("z", "zset", "listpack"),
        ("str", "string", "embstr"),
    ] {
        assert_eq!(c.cmd(&["TYPE", k]), Val::Simple(t.into()), "TYPE {k}");
        assert_eq!(c.cmd(&["OBJECT", "ENCODING", k]), bulk(enc), "OBJECT ENCODING {k}");
    }
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<HashSet<_>>();
    assert_eq!(scan_type(&mut c, "set"), set(&["s", "ss"]));
    assert_eq!(scan_type(&mut c, "HASH"), set(&["h"]));
    assert_eq!(scan_type(&mut c, "zset"), set(&["z"]));
    assert_eq!(scan_type(&mut c, "list"), set(&["l"]));
    // Against redis 7.0, for the types whose small encoding both servers share.
    same_as_valkey(&[
        "HSET h a 1 b 2",
        "ZADD z 1 a 2 b",
        "SADD s 1 2 3",
        "TYPE h",
        "TYPE z",
        "TYPE s",
        "OBJECT ENCODING h",
        "OBJECT ENCODING z",
        "OBJECT ENCODING s",
        "GET h",
        "APPEND z x",
        "INCR s",
        "SETRANGE h 0 x",
        "STRLEN z",
        "GETRANGE s 0 1",
        "GETDEL h",
        "HGET z a",
        "SADD h x",
        "ZADD s 1 x",
        "RPUSH h x",
        "LLEN z",
        "SCARD h",
        "ZCARD s",
        "HLEN s",
    ]);
}

#[test]
fn wrongtype_across_families() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    fill_one_of_each(&mut c);
    for cmd in [
        &["GET", "h"][..],
        &["INCR", "l"],
        &["APPEND", "s", "x"],
        &["HGET", "l", "f"],
        &["HSET", "z", "f", "v"],
        &["LPUSH", "h", "x"],
        &["LRANGE", "s", "0", "-1"],
        &["SADD", "z", "x"],
        &["SMEMBERS", "str"],
        &["ZADD", "l", "1", "x"],
        &["ZRANGE", "h", "0", "-1"],
    ] {
        assert_eq!(c.cmd(cmd), Val::Err(WRONGTYPE.into()), "{cmd:?}");
    }
    // Overwriting with SET is always allowed, and replaces the type.
    assert_eq!(c.cmd(&["SET", "h", "now a string"]), Val::ok());
    assert_eq!(c.cmd(&["TYPE", "h"]), Val::Simple("string".into()));
}

#[test]
fn memory_usage_grows_with_the_value() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    fill_one_of_each(&mut c);
    let mut small = Vec::new();
    for k in ["h", "l", "s", "ss", "z"] {
        let n = c.cmd(&["MEMORY", "USAGE", k]).as_int();
        assert!(n > 0, "MEMORY USAGE {k} = {n}");
        small.push(n);
    }
    for i in 0..1000 {
        let i = i.to_string();
        c.cmd(&["HSET", "h", &format!("field{i}"), &i]);
        c.cmd(&["RPUSH", "l", &i]);
        c.cmd(&["SADD", "s", &i]);
        c.cmd(&["SADD", "ss", &format!("member{i}")]);
        c.cmd(&["ZADD", "z", &i, &format!("m{i}")]);
    }
    for (k, before) in ["h", "l", "s", "ss", "z"].iter().zip(small) {
        let n = c.cmd(&["MEMORY", "USAGE", k]).as_int();
        assert!(n > before + 2000, "MEMORY USAGE {k}: {before} -> {n}");
    }
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "h"]), bulk("hashtable"));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "s"]), bulk("hashtable"));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "z"]), bulk("skiplist"));
}

#[test]
fn expiry_applies_to_aggregates() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    fill_one_of_each(&mut c);
    for k in ["h", "l", "s", "z"] {
        assert_eq!(c.cmd(&["EXPIRE", k, "1000"]), int(1));
        assert!(c.cmd(&["TTL", k]).as_int() > 990);
        assert_eq!(c.cmd(&["PERSIST", k]), int(1));
        assert_eq!(c.cmd(&["TTL", k]), int(-1));
        // A time in the past deletes the key at once.
        assert_eq!(c.cmd(&["PEXPIREAT", k, "1"]), int(1));
        assert_eq!(c.cmd(&["EXISTS", k]), int(0));
    }
    // The value survives the TTL change that rebuilds its entry.
    assert_eq!(c.cmd(&["HSET", "h2", "a", "1", "b", "2"]), int(2));
    assert_eq!(c.cmd(&["EXPIRE", "h2", "100"]), int(1));
    assert_eq!(c.cmd(&["HGET", "h2", "b"]), bulk("2"));
    assert_eq!(c.cmd(&["PERSIST", "h2"]), int(1));
    assert_eq!(c.cmd(&["HLEN", "h2"]), int(2));
}

#[test]
fn rename_move_copy_and_unlink() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    fill_one_of_each(&mut c);
    assert_eq!(c.cmd(&["RENAME", "h", "h2"]), Val::ok());
    assert_eq!(c.cmd(&["HGET", "h2", "f"]), bulk("v"));
    assert_eq!(c.cmd(&["MOVE", "l", "1"]), int(1));
    assert_eq!(c.cmd(&["SELECT", "1"]), Val::ok());
    assert_eq!(c.cmd(&["LRANGE", "l", "0", "-1"]), Val::Array(vec![bulk("a"), bulk("b")]));
    assert_eq!(c.cmd(&["SELECT", "0"]), Val::ok());
    // COPY is deep: changing the copy leaves the source alone.
    assert_eq!(c.cmd(&["COPY", "z", "z2"]), int(1));
    assert_eq!(c.cmd(&["ZADD", "z2", "2", "n"]), int(1));
    assert_eq!(c.cmd(&["ZCARD", "z"]), int(1));
    assert_eq!(c.cmd(&["ZCARD", "z2"]), int(2));
    // A large value goes to the lazyfree thread on UNLINK.
    let members: Vec<String> = (0..2000).map(|i| format!("m{i}")).collect();
    let mut argv = vec!["SADD", "big"];
    argv.extend(members.iter().map(String::as_str));
    assert_eq!(c.cmd(&argv), int(2000));
    let before = info_int(&mut c, "memory", "lazyfreed_objects");
    assert_eq!(c.cmd(&["UNLINK", "big"]), int(1));
    let mut freed = before;
    for _ in 0..100 {
        freed = info_int(&mut c, "memory", "lazyfreed_objects");
        if freed > before {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(freed, before + 1);
    assert_eq!(c.cmd(&["DEL", "s", "ss", "z2"]), int(3));
    assert_eq!(c.cmd(&["DBSIZE"]), int(3)); // h2, z, str
}

#[test]
fn eviction_removes_aggregates_within_the_limit() {
    let s = start(&["--maxmemory", "8mb", "--maxmemory-policy", "allkeys-lru"]);
    let mut c = Client::connect(s.port);
    let fields: Vec<String> = (0..20).map(|i| format!("field-{i:04}")).collect();
    for k in 0..20_000 {
        let key = format!("hash:{k}");
        let mut argv = vec!["HSET", key.as_str()];
        for f in &fields {
            argv.push(f);
            argv.push("a-value-of-some-length");
        }
        let r = c.cmd(&argv);
        assert!(matches!(r, Val::Int(_)), "HSET {k}: {r:?}");
    }
    assert!(info_int(&mut c, "stats", "evicted_keys") > 0);
    let used = info_int(&mut c, "memory", "used_memory");
    assert!(used <= 9 * 1024 * 1024, "used_memory {used}");
}
