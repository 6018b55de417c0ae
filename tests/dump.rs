//! DUMP and RESTORE over TCP: payloads of every type and encoding move from ferrokey to a
//! real redis-server 7.0 and back, with the contents compared command by command; RESTORE's
//! options and errors are compared with redis-server byte for byte.

mod common;

use common::diff::Pair;
use common::{bulk, contents, int, start, start_redis, Client, Val};

/// Fills `c` with one key per type and encoding.
fn fill(c: &mut Client) {
    c.cmd(&["SET", "str:int", "12345"]);
    c.cmd(&["SET", "str:raw", "hello"]);
    c.cmd(&["SET", "str:long", &"abc".repeat(200)]);
    c.cmd(&["SET", "str:big-int", "-9223372036854775808"]);
    c.cmd(&["HSET", "hash:small", "a", "1", "b", "two", "c", "-3"]);
    for i in 0..600 {
        c.cmd(&["HSET", "hash:big", &format!("field:{i}"), &format!("value:{i}")]);
        c.cmd(&["SADD", "set:big", &format!("member:{i}")]);
        c.cmd(&["ZADD", "zset:big", &format!("{}.5", i % 37), &format!("m:{i}")]);
    }
    c.cmd(&["SADD", "set:ints", "1", "-2", "300000", "9223372036854775807"]);
    c.cmd(&["SADD", "set:small", "x", "y", "z"]);
    c.cmd(&["ZADD", "zset:small", "1", "a", "2.5", "b", "-inf", "c", "1e300", "d"]);
    c.cmd(&["RPUSH", "list:small", "a", "1", "b", "-42"]);
    let items: Vec<String> = (0..5000).map(|i| format!("item-{i}")).collect();
    let mut argv = vec!["RPUSH", "list:big"];
    argv.extend(items.iter().map(String::as_str));
    c.cmd(&argv);
}

const KEYS: &[&str] = &[
    "str:int",
    "str:raw",
    "str:long",
    "str:big-int",
    "hash:small",
    "hash:big",
    "set:ints",
    "set:small",
    "set:big",
    "zset:small",
    "zset:big",
    "list:small",
    "list:big",
];

fn copy_all(from: &mut Client, to: &mut Client, suffix: &str) {
    for k in KEYS {
        let Val::Bulk(payload) = from.cmd(&["DUMP", k]) else { panic!("DUMP {k}") };
        let dst = format!("{k}{suffix}");
        let r = to.cmd_b(&[b"RESTORE", dst.as_bytes(), b"0", &payload]);
        assert_eq!(r, Val::ok(), "RESTORE {k}");
    }
}

#[test]
fn payloads_move_between_ferrokey_and_redis_both_ways() {
    let ours = start(&[]);
    let theirs = start_redis(&[]);
    let mut a = Client::connect(ours.port);
    let mut b = Client::connect(theirs.port);
    fill(&mut a);
    fill(&mut b);
    copy_all(&mut a, &mut b, ":from-ferrokey");
    copy_all(&mut b, &mut a, ":from-redis");
    let mut a2 = Client::connect(ours.port);
    copy_all(&mut a, &mut a2, ":self");
    // Valkey 9.1 takes ferrokey's payloads too (version 10, which every server reads).
    let valkey = common::start_valkey(&[]);
    let mut v = Client::connect(valkey.port);
    copy_all(&mut a, &mut v, ":from-ferrokey");
    for k in KEYS {
        let original = contents(&mut a, k);
        assert_eq!(contents(&mut v, &format!("{k}:from-ferrokey")), original, "{k} in valkey");
        assert_eq!(contents(&mut b, &format!("{k}:from-ferrokey")), original, "{k} in redis");
        assert_eq!(contents(&mut a, &format!("{k}:from-redis")), original, "{k} from redis");
        assert_eq!(contents(&mut a, &format!("{k}:self")), original, "{k} round trip");
        for name in [format!("{k}:from-redis"), format!("{k}:self")] {
            let enc = a.cmd(&["OBJECT", "ENCODING", &name]);
            assert_eq!(enc, a.cmd(&["OBJECT", "ENCODING", k]), "{name} encoding");
        }
    }
}

#[test]
fn restore_options() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    c.cmd(&["RPUSH", "l", "a", "b"]);
    let Val::Bulk(p) = c.cmd(&["DUMP", "l"]) else { panic!() };
    assert_eq!(c.cmd_b(&[b"RESTORE", b"t", b"100000", &p]), Val::ok());
    let pttl = c.cmd(&["PTTL", "t"]).as_int();
    assert!(pttl > 90_000 && pttl <= 100_000, "{pttl}");
    // An absolute time in the past creates nothing (and replaces by deleting).
    assert_eq!(c.cmd_b(&[b"RESTORE", b"gone", b"1000", &p, b"ABSTTL"]), Val::ok());
    assert_eq!(c.cmd(&["EXISTS", "gone"]), int(0));
    assert_eq!(c.cmd_b(&[b"RESTORE", b"t", b"1", &p, b"ABSTTL", b"REPLACE"]), Val::ok());
    assert_eq!(c.cmd(&["EXISTS", "t"]), int(0));
    assert_eq!(c.cmd_b(&[b"RESTORE", b"idle", b"0", &p, b"IDLETIME", b"1000"]), Val::ok());
    assert!(c.cmd(&["OBJECT", "IDLETIME", "idle"]).as_int() >= 1000);
    assert_eq!(c.cmd(&["LRANGE", "idle", "0", "-1"]), Val::Array(vec![bulk("a"), bulk("b")]));
    assert_eq!(c.cmd(&["DUMP", "nokey"]), Val::Nil);
}

#[test]
fn restore_errors_match_redis() {
    // redis-server 7.0's DUMP of the string "12".
    let good: &[u8] = b"\x00\xc0\x0c\x0a\x00\x3c\x2a\xf8\x51\x5c\x04\xbc\xd5";
    let mut bad_crc = good.to_vec();
    *bad_crc.last_mut().unwrap() ^= 1;
    let mut newer = good.to_vec();
    newer[3] = 12; // RDB version 12
    let cases: Vec<Vec<&[u8]>> = vec![
        vec![b"SET", b"s", b"12"],
        vec![b"RESTORE", b"s", b"0", good],
        vec![b"RESTORE", b"s2", b"0", good],
        vec![b"GET", b"s2"],
        vec![b"RESTORE", b"s3", b"0", b"garbage"],
        vec![b"RESTORE", b"s3", b"0", &bad_crc],
        vec![b"RESTORE", b"s3", b"0", &newer],
        vec![b"RESTORE", b"s3", b"-1", good],
        vec![b"RESTORE", b"s3", b"x", good],
        vec![b"RESTORE", b"s3", b"0", good, b"IDLETIME", b"-1"],
        vec![b"RESTORE", b"s3", b"0", good, b"FREQ", b"256"],
        vec![b"RESTORE", b"s3", b"0", good, b"FREQ", b"x"],
        vec![b"RESTORE", b"s3", b"0", good, b"BOGUS"],
        vec![b"RESTORE", b"s3", b"0", good, b"IDLETIME", b"5", b"FREQ", b"5"],
        vec![b"RESTORE", b"s3", b"0", good, b"IDLETIME"],
        vec![b"RESTORE", b"s3", b"0", good, b"REPLACE", b"ABSTTL"],
        vec![b"GET", b"s3"],
        vec![b"DUMP", b"missing"],
    ];
    for proto in [2, 3] {
        let mut p = Pair::start(proto, &[]);
        for argv in &cases {
            p.same(argv);
        }
    }
}
