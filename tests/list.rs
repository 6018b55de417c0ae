//! List commands over TCP: differential checks of every command against a real redis-server
//! 7.0 (RESP2 and RESP3, errors, WRONGTYPE, binary elements, negative and out-of-range
//! indexes, huge counts, lists long enough to be quicklists); the encodings and their
//! conversions, checked against ferrokey alone because Valkey 8 (whose behaviour ferrokey
//! follows) reports `listpack` for small lists where Redis 7.0 always says `quicklist`; the
//! few Valkey-only error cases; and the blocking commands with several clients.

mod common;

use std::time::{Duration, Instant};

use common::diff::{same_as_valkey, same_as_valkey_with, Pair};
use common::{bulk, err, info_int, int, start, Client, Val};

fn b(s: &str) -> &[u8] {
    s.as_bytes()
}

fn bulks(items: &[&str]) -> Val {
    Val::Array(items.iter().map(|s| bulk(s)).collect())
}

fn popped(key: &str, v: &str) -> Val {
    Val::Array(vec![bulk(key), bulk(v)])
}

// ---------------------------------------------------------------------------------------
// Differential: against redis-server 7.0, RESP2 and RESP3.
// ---------------------------------------------------------------------------------------

#[test]
fn pushes_and_pops_match_redis() {
    same_as_valkey(&[
        "RPUSH k a b c d e",
        "LPUSH k 1 2 3",
        "LLEN k",
        "LRANGE k 0 -1",
        "LPOP k",
        "RPOP k",
        "LPOP k 2",
        "RPOP k 2",
        "LPOP k 0",
        "RPOP k 0",
        "LPOP k -1",
        "RPOP k -9223372036854775808",
        "LPOP k x",
        "LPOP k 9223372036854775808",
        "LPOP k 1 2",
        "RPOP k 1 2 3",
        "LPOP nokey",
        "RPOP nokey",
        "LPOP nokey 0",
        "LPOP nokey 5",
        "RPOP nokey -1",
        "RPOP k 9223372036854775807",
        "EXISTS k",
        "RPUSH k x",
        "LPOP k",
        "EXISTS k",
        "LPUSHX nokey a",
        "RPUSHX nokey a b",
        "EXISTS nokey",
        "RPUSH k2 a",
        "LPUSHX k2 b c",
        "RPUSHX k2 d e",
        "LRANGE k2 0 -1",
        "RPUSH n 9223372036854775807 -9223372036854775808 9223372036854775808 007 -0 +1 1.5 \"\" 0 -1",
        "LRANGE n 0 -1",
        "LPOP n 3",
        "RPOP n 4",
        "LLEN n",
        "LLEN nokey",
        "LPUSH",
        "LPUSH k",
        "RPUSH k",
        "LPUSHX k",
        "LPOP",
        "LLEN k k",
    ]);
}

#[test]
fn wrong_types_are_refused() {
    same_as_valkey(&[
        "SET s str",
        "LPUSH s a",
        "RPUSH s a",
        "LPUSHX s a",
        "RPUSHX s a",
        "LPOP s",
        "RPOP s 1",
        "LPOP s 0",
        "LLEN s",
        "LINDEX s 0",
        "LINDEX s x",
        "LSET s 0 a",
        "LRANGE s 0 1",
        "LTRIM s 0 1",
        "LREM s 0 a",
        "LINSERT s BEFORE a b",
        "LPOS s a",
        "LPOS s a COUNT 0",
        "RPUSH l a",
        "LMOVE s l LEFT LEFT",
        "LMOVE l s LEFT LEFT",
        "LMOVE nokey s LEFT LEFT",
        "RPOPLPUSH s l",
        "RPOPLPUSH l s",
        "LMPOP 1 s LEFT",
        "LMPOP 2 nokey s LEFT",
        "LMPOP 2 l s LEFT",
        "LMPOP 2 s l LEFT",
        "RPUSH l a",
        "BLPOP s 0",
        "BLPOP nokey s 0",
        "BLPOP l s 0",
        "RPUSH l a",
        "BRPOP s 0",
        "BLMOVE s l LEFT LEFT 0",
        "BLMOVE l s LEFT LEFT 0",
        "BRPOPLPUSH s l 0",
        "BLMPOP 0 1 s LEFT",
        "HSET h f v",
        "LRANGE h 0 -1",
        "GET l",
        "TYPE l",
    ]);
}

#[test]
fn index_range_and_trim_match_redis() {
    same_as_valkey(&[
        "RPUSH l a b c d e f g",
        "LINDEX l 0",
        "LINDEX l -1",
        "LINDEX l -7",
        "LINDEX l -8",
        "LINDEX l 6",
        "LINDEX l 7",
        "LINDEX l 9223372036854775807",
        "LINDEX l -9223372036854775808",
        "LINDEX l 9223372036854775808",
        "LINDEX l x",
        "LINDEX l 1.5",
        "LINDEX nokey x",
        "LINDEX nokey 0",
        "LSET l 0 A",
        "LSET l -1 G",
        "LSET l 3 12345",
        "LSET l 7 z",
        "LSET l -8 z",
        "LSET l x z",
        "LSET l 9223372036854775807 z",
        "LRANGE l 0 -1",
        "LSET l -9223372036854775808 y",
        "LSET l 4294967298 x",
        "LSET l 2147483648 w",
        "LSET l -2147483649 w",
        "LRANGE l 0 -1",
        "LSET nokey 0 a",
        "LSET nokey x a",
        "LRANGE l 0 -1",
        "LRANGE l 2 4",
        "LRANGE l -3 -1",
        "LRANGE l 5 2",
        "LRANGE l -100 100",
        "LRANGE l 7 10",
        "LRANGE l 0 -8",
        "LRANGE l 0 0",
        "LRANGE l -1 -1",
        "LRANGE l x 1",
        "LRANGE l 1 x",
        "LRANGE l 9223372036854775807 -9223372036854775808",
        "LRANGE l -9223372036854775808 9223372036854775807",
        "LRANGE nokey 0 -1",
        "LRANGE nokey x 1",
        "LTRIM l 1 -2",
        "LRANGE l 0 -1",
        "LTRIM l -100 100",
        "LRANGE l 0 -1",
        "LTRIM l -9223372036854775808 9223372036854775807",
        "LTRIM l x 1",
        "LTRIM l 1 x",
        "LTRIM nokey 0 1",
        "LTRIM nokey x 1",
        "LTRIM l 1 1",
        "LRANGE l 0 -1",
        "LTRIM l 2 1",
        "EXISTS l",
        "RPUSH l a b c",
        "LTRIM l 5 10",
        "EXISTS l",
        "RPUSH l a b c",
        "LTRIM l 0 -4",
        "EXISTS l",
    ]);
}

#[test]
fn lrem_and_linsert_match_redis() {
    same_as_valkey(&[
        "RPUSH r a b a c a b a 1 01 1",
        "LREM r 2 a",
        "LRANGE r 0 -1",
        "LREM r -1 a",
        "LRANGE r 0 -1",
        "LREM r 0 b",
        "LREM r 0 zz",
        "LREM r 1 1",
        "LREM r 5 01",
        "LRANGE r 0 -1",
        "LREM r 9223372036854775807 zz",
        "LREM r -9223372036854775807 zz",
        "LREM nokey 1 a",
        "LREM r x a",
        "LREM nokey x a",
        "LREM r 0 a",
        "LREM r 0 c",
        "LREM r 0 1",
        "EXISTS r",
        "RPUSH i a b c 10",
        "LINSERT i BEFORE c X",
        "LINSERT i AFTER c Y",
        "LINSERT i after a A2",
        "LINSERT i before a A0",
        "LINSERT i AFTER 10 11",
        "LINSERT i BEFORE 010 9",
        "LINSERT i BEFORE nosuch Z",
        "LRANGE i 0 -1",
        "LINSERT nokey BEFORE a b",
        "LINSERT i MIDDLE c d",
        "LINSERT nokey MIDDLE a b",
        "LINSERT i BEFORE",
        "EXISTS nokey",
    ]);
}

#[test]
fn lpos_matches_redis() {
    same_as_valkey(&[
        "RPUSH p a b c 1 2 3 c b a 1",
        "LPOS p c",
        "LPOS p c RANK 2",
        "LPOS p c RANK 3",
        "LPOS p c RANK -1",
        "LPOS p c RANK -2",
        "LPOS p c RANK -3",
        "LPOS p a COUNT 0",
        "LPOS p a COUNT 1",
        "LPOS p a COUNT 5",
        "LPOS p a COUNT 2 RANK -1",
        "LPOS p a COUNT 0 RANK 2",
        "LPOS p a RANK 2 COUNT 0 MAXLEN 5",
        "LPOS p a MAXLEN 5",
        "LPOS p a MAXLEN 9",
        "LPOS p a MAXLEN 0",
        "LPOS p a RANK -1 MAXLEN 1",
        "LPOS p a RANK -1 MAXLEN 2",
        "LPOS p 1",
        "LPOS p 01",
        "LPOS p 1 COUNT 0",
        "LPOS p zz",
        "LPOS p zz COUNT 0",
        "LPOS p a RANK 9223372036854775807",
        "LPOS p a RANK -9223372036854775807",
        "LPOS p a COUNT 9223372036854775807",
        "LPOS p a MAXLEN 9223372036854775807",
        "lpos p a rank 1 count 1 maxlen 1",
        "LPOS p a RANK 1 RANK 2",
        "LPOS p a RANK 0",
        "LPOS p a RANK x",
        "LPOS p a COUNT -1",
        "LPOS p a COUNT x",
        "LPOS p a MAXLEN -5",
        "LPOS p a MAXLEN x",
        "LPOS p a FOO",
        "LPOS p a FOO 1",
        "LPOS p a RANK",
        "LPOS p a RANK 1 COUNT",
        "LPOS nokey a",
        "LPOS nokey a COUNT 1",
        "LPOS nokey a RANK 0",
        "LPOS p",
    ]);
}

#[test]
fn moves_match_redis() {
    same_as_valkey(&[
        "RPUSH src a b c d",
        "LMOVE src dst LEFT RIGHT",
        "LMOVE src dst RIGHT LEFT",
        "LMOVE src dst left left",
        "LRANGE src 0 -1",
        "LRANGE dst 0 -1",
        "LMOVE src dst UP LEFT",
        "LMOVE src dst LEFT DOWN",
        "LMOVE nokey dst LEFT LEFT",
        "LMOVE nokey nokey UP LEFT",
        "RPOPLPUSH src dst",
        "EXISTS src",
        "RPOPLPUSH src dst",
        "RPUSH rot 1 2 3",
        "RPOPLPUSH rot rot",
        "LMOVE rot rot LEFT RIGHT",
        "LMOVE rot rot RIGHT RIGHT",
        "LMOVE rot rot LEFT LEFT",
        "LRANGE rot 0 -1",
        "RPUSH one x",
        "LMOVE one one LEFT RIGHT",
        "LRANGE one 0 -1",
        "LMOVE one two RIGHT LEFT",
        "EXISTS one",
        "LRANGE two 0 -1",
        "LMOVE",
        "RPOPLPUSH a",
    ]);
}

#[test]
fn lmpop_matches_redis() {
    same_as_valkey(&[
        "RPUSH a 1 2 3 4 5",
        "RPUSH b x y",
        "LMPOP 1 a LEFT",
        "LMPOP 1 a RIGHT",
        "LMPOP 2 nokey a LEFT COUNT 2",
        "LMPOP 2 a b RIGHT COUNT 10",
        "LMPOP 2 a b left count 1",
        "LMPOP 3 nokey a b RIGHT COUNT 9223372036854775807",
        "LMPOP 2 nokey a LEFT",
        "EXISTS a b",
        "LMPOP 0 a LEFT",
        "LMPOP -1 a LEFT",
        "LMPOP x a LEFT",
        "LMPOP 9223372036854775808 a LEFT",
        "LMPOP 9223372036854775807 a LEFT",
        "LMPOP 2 a LEFT",
        "LMPOP 1 a MID",
        "LMPOP 1 a LEFT COUNT 0",
        "LMPOP 1 a LEFT COUNT -1",
        "LMPOP 1 a LEFT COUNT x",
        "LMPOP 1 a LEFT COUNT 9223372036854775808",
        "LMPOP 1 a LEFT COUNT 1 COUNT 2",
        "LMPOP 1 a LEFT COUNT",
        "LMPOP 1 a LEFT FOO",
        "LMPOP 1 a",
        "LMPOP 1",
    ]);
}

#[test]
fn blocking_commands_without_waiting_match_redis() {
    // Served at once, argument errors, and timeouts of empty keys.
    same_as_valkey(&[
        "RPUSH a 1 2 3",
        "RPUSH b x y z",
        "BLPOP nokey a 0",
        "BRPOP nokey a 0.5",
        "BLPOP a b 1",
        "BRPOP b 0",
        "BLPOP b a 0x10",
        "BLMOVE b a RIGHT LEFT 0",
        "BLMOVE b a RIGHT LEFT 0.25",
        "BRPOPLPUSH a a 0",
        "LRANGE a 0 -1",
        "BLMPOP 0 2 nokey a RIGHT COUNT 2",
        "BLMPOP 0.1 1 a LEFT",
        "RPUSH c 1",
        "BLMPOP 1 1 c LEFT COUNT 5",
        "BLPOP nokey 0.01",
        "BRPOP nokey1 nokey2 0.01",
        "BLMOVE nokey dst LEFT LEFT 0.01",
        "BRPOPLPUSH nokey dst 0.01",
        "BLMPOP 0.01 2 nokey1 nokey2 LEFT COUNT 3",
        "BLPOP k x",
        "BLPOP k -1",
        "BLPOP k -0.5",
        "BLPOP k nan",
        "BLPOP k \"\"",
        "BLPOP k 1x",
        "BRPOP k  1",
        "BLMOVE a b UP LEFT x",
        "BLMOVE a b LEFT LEFT x",
        "BLMOVE a b LEFT LEFT -1",
        "BRPOPLPUSH a b x",
        "BLMPOP x 0 k LEFT",
        "BLMPOP x 1 k MID",
        "BLMPOP x 1 k LEFT",
        "BLMPOP -1 1 k LEFT",
        "BLMPOP 0 1 k LEFT COUNT 0",
        "BLPOP k",
        "BLMOVE a b LEFT LEFT",
        "BLMPOP 0 1 k",
    ]);
}

#[test]
fn binary_elements_match_redis() {
    same_as_valkey(&[
        "RPUSH bin a\0b c\r\nd \0 \r\n \u{ff}\u{fe}",
        "LRANGE bin 0 -1",
        "LINDEX bin 1",
        "LPOS bin \0",
        "LPOS bin c\r\nd",
        "LINSERT bin AFTER \0 x\0y",
        "LREM bin 0 \r\n",
        "LSET bin 0 \0\0\0",
        "LRANGE bin 0 -1",
        "LMOVE bin k\0ey LEFT RIGHT",
        "LRANGE k\0ey 0 -1",
        "RPOP bin 10",
    ]);
}

/// A script that builds lists long enough to be quicklists under `fill` and reads and edits
/// them everywhere: heads, tails and middles of nodes.
fn long_list_script() -> Vec<String> {
    let mut lines = Vec::new();
    let mut push = String::from("RPUSH big");
    for i in 0..600 {
        let e = match i % 5 {
            0 => i.to_string(),
            1 => format!("elem-{i}"),
            2 => "x".repeat(i % 97 + 1),
            3 => format!("-{}", i * 1_000_003),
            _ => "dup".to_string(),
        };
        push.push(' ');
        push.push_str(&e);
    }
    lines.push(push);
    lines.push("LPUSH big h1 h2 h3".into());
    lines.push("LLEN big".into());
    for i in [0, 1, 2, 99, 100, 301, 302, 599, 600, 602, 603, -1, -2, -300, -603, -604] {
        lines.push(format!("LINDEX big {i}"));
    }
    for (a, z) in [(0, 10), (95, 130), (-50, -1), (280, 340), (0, -1), (600, 700)] {
        lines.push(format!("LRANGE big {a} {z}"));
    }
    for i in [0, 150, 300, 450, -1] {
        lines.push(format!("LSET big {i} {}", "S".repeat(200)));
        lines.push(format!("LINDEX big {i}"));
    }
    lines.push("LSET big 200 short".into());
    lines.push("LINSERT big BEFORE elem-301 ins1".into());
    lines.push("LINSERT big AFTER elem-301 ins2".into());
    lines.push(format!("LINSERT big AFTER dup {}", "I".repeat(300)));
    lines.push("LINSERT big BEFORE h3 first".into());
    lines.push("LPOS big dup RANK 50".into());
    lines.push("LPOS big dup RANK -7 COUNT 3".into());
    lines.push("LPOS big dup COUNT 0 MAXLEN 100".into());
    lines.push("LREM big 10 dup".into());
    lines.push("LREM big -10 dup".into());
    lines.push("LRANGE big 0 -1".into());
    lines.push("LTRIM big 7 -9".into());
    lines.push("LRANGE big 0 -1".into());
    lines.push("LREM big 0 dup".into());
    lines.push("LPOP big 100".into());
    lines.push("RPOP big 100".into());
    lines.push("LMOVE big other RIGHT LEFT".into());
    lines.push("LMPOP 1 big LEFT COUNT 50".into());
    lines.push("LRANGE big 0 -1".into());
    lines.push("LTRIM big 0 4".into());
    lines.push("LRANGE big 0 -1".into());
    lines
}

#[test]
fn long_lists_match_redis_at_several_node_sizes() {
    let script = long_list_script();
    let lines: Vec<&str> = script.iter().map(String::as_str).collect();
    for fill in ["-2", "-1", "4", "1"] {
        same_as_valkey_with(2, &["--list-max-listpack-size", fill], &lines);
    }
    same_as_valkey_with(3, &["--list-max-listpack-size", "3"], &lines);
}

#[test]
fn command_info_matches_redis() {
    for proto in [2, 3] {
        let mut p = Pair::start(proto, &[]);
        for name in [
            "lpush",
            "rpush",
            "lpushx",
            "rpushx",
            "lpop",
            "rpop",
            "llen",
            "lindex",
            "lset",
            "lrange",
            "ltrim",
            "lrem",
            "linsert",
            "lpos",
            "lmove",
            "rpoplpush",
            "lmpop",
            "blpop",
            "brpop",
            "blmove",
            "brpoplpush",
            "blmpop",
        ] {
            p.same(&["COMMAND", "INFO", name]);
        }
        p.same_lines(&[
            "COMMAND GETKEYS LMPOP 2 a b LEFT",
            "COMMAND GETKEYS BLMPOP 0 2 a b LEFT COUNT 1",
            "COMMAND GETKEYS BLPOP a b c 0",
            "COMMAND GETKEYS LMOVE a b LEFT RIGHT",
        ]);
    }
}

// ---------------------------------------------------------------------------------------
// Against ferrokey alone: encodings (Valkey 8 reports listpack for small lists, Redis 7.0
// always quicklist) and the cases where Valkey 8 deliberately differs from Redis 7.0.
// ---------------------------------------------------------------------------------------

fn encoding(c: &mut Client, key: &str) -> String {
    c.cmd(&["OBJECT", "ENCODING", key]).as_str()
}

#[test]
fn encodings_convert_by_count_both_ways() {
    let s = start(&["--list-max-listpack-size", "4"]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["RPUSH", "l", "a", "b", "c"]), int(3));
    assert_eq!(encoding(&mut c, "l"), "listpack");
    assert_eq!(c.cmd(&["RPUSH", "l", "d"]), int(4));
    assert_eq!(encoding(&mut c, "l"), "listpack");
    assert_eq!(c.cmd(&["RPUSH", "l", "e"]), int(5));
    assert_eq!(encoding(&mut c, "l"), "quicklist");
    // Shrinks back only at half the limit.
    assert_eq!(c.cmd(&["RPOP", "l", "2"]), bulks(&["e", "d"]));
    assert_eq!(encoding(&mut c, "l"), "quicklist");
    assert_eq!(c.cmd(&["RPOP", "l"]), bulk("c"));
    assert_eq!(encoding(&mut c, "l"), "listpack");
    assert_eq!(c.cmd(&["LRANGE", "l", "0", "-1"]), bulks(&["a", "b"]));

    // Every removing command converts back; every adding one converts forward.
    let make_quick = |c: &mut Client, items: &[&str]| {
        c.cmd(&["DEL", "q"]);
        let mut args = vec!["RPUSH", "q"];
        args.extend_from_slice(items);
        c.cmd(&args);
        assert_eq!(encoding(c, "q"), "quicklist");
    };
    make_quick(&mut c, &["a", "a", "a", "d", "e"]);
    assert_eq!(c.cmd(&["LREM", "q", "3", "a"]), int(3));
    assert_eq!(encoding(&mut c, "q"), "listpack");
    make_quick(&mut c, &["a", "b", "c", "d", "e"]);
    assert_eq!(c.cmd(&["LTRIM", "q", "1", "1"]), Val::ok());
    assert_eq!(encoding(&mut c, "q"), "listpack");
    make_quick(&mut c, &["a", "b", "c", "d", "e"]);
    assert_eq!(c.cmd(&["LMPOP", "1", "q", "LEFT", "COUNT", "3"]).as_array().len(), 2);
    assert_eq!(encoding(&mut c, "q"), "listpack");
    make_quick(&mut c, &["a", "b", "c", "d", "e"]);
    c.cmd(&["LPOP", "q", "3"]);
    assert_eq!(encoding(&mut c, "q"), "listpack");
    make_quick(&mut c, &["a", "b", "c", "d", "e"]);
    c.cmd(&["BLPOP", "q", "0"]);
    c.cmd(&["BRPOP", "q", "0"]);
    c.cmd(&["LMOVE", "q", "elsewhere", "LEFT", "LEFT"]);
    assert_eq!(encoding(&mut c, "q"), "listpack");
    // LMOVE within one list pushes before the shrinking check, as Valkey: 3 stay quicklist.
    make_quick(&mut c, &["a", "b", "c", "d", "e"]);
    c.cmd(&["RPOP", "q", "2"]);
    assert_eq!(encoding(&mut c, "q"), "quicklist");
    c.cmd(&["LMOVE", "q", "q", "LEFT", "RIGHT"]);
    assert_eq!(encoding(&mut c, "q"), "quicklist");

    c.cmd(&["DEL", "p"]);
    c.cmd(&["RPUSH", "p", "a", "b", "c", "d"]);
    assert_eq!(encoding(&mut c, "p"), "listpack");
    // LINSERT converts before it knows whether the pivot exists (as Valkey).
    assert_eq!(c.cmd(&["LINSERT", "p", "BEFORE", "nosuch", "x"]), int(-1));
    assert_eq!(encoding(&mut c, "p"), "quicklist");
    c.cmd(&["DEL", "p"]);
    c.cmd(&["RPUSH", "p", "a", "b", "c", "d"]);
    assert_eq!(c.cmd(&["LSET", "p", "0", "z"]), Val::ok());
    assert_eq!(encoding(&mut c, "p"), "quicklist");
    c.cmd(&["DEL", "p"]);
    c.cmd(&["RPUSH", "p", "a", "b", "c", "d"]);
    c.cmd(&["RPUSH", "src", "s"]);
    c.cmd(&["LMOVE", "src", "p", "LEFT", "LEFT"]);
    assert_eq!(encoding(&mut c, "p"), "quicklist");
    assert_eq!(c.cmd(&["LRANGE", "p", "0", "-1"]), bulks(&["s", "a", "b", "c", "d"]));
}

#[test]
fn encodings_convert_by_size_and_config_set() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    // Default -2: 8 KiB. The raw bytes of the new elements are what counts.
    let big = "x".repeat(8000);
    c.cmd(&["RPUSH", "l", &big]);
    assert_eq!(encoding(&mut c, "l"), "listpack");
    c.cmd(&["RPUSH", "l", &"y".repeat(300)]);
    assert_eq!(encoding(&mut c, "l"), "quicklist");
    assert_eq!(c.cmd(&["RPOP", "l"]), bulk(&"y".repeat(300)));
    // 8000 bytes is over half of 8 KiB: stays a quicklist.
    assert_eq!(encoding(&mut c, "l"), "quicklist");
    assert_eq!(c.cmd(&["LSET", "l", "0", "small"]), Val::ok());
    assert_eq!(encoding(&mut c, "l"), "listpack");

    // One element bigger than any node.
    c.cmd(&["RPUSH", "huge", &"h".repeat(100_000)]);
    assert_eq!(encoding(&mut c, "huge"), "quicklist");
    assert_eq!(c.cmd(&["LINDEX", "huge", "0"]), bulk(&"h".repeat(100_000)));

    assert_eq!(c.cmd(&["CONFIG", "SET", "list-max-listpack-size", "2"]), Val::ok());
    c.cmd(&["RPUSH", "k", "a", "b"]);
    assert_eq!(encoding(&mut c, "k"), "listpack");
    c.cmd(&["RPUSH", "k", "c"]);
    assert_eq!(encoding(&mut c, "k"), "quicklist");
    assert_eq!(c.cmd(&["CONFIG", "SET", "list-max-listpack-size", "-1"]), Val::ok());
    c.cmd(&["RPUSH", "m", &"z".repeat(4000)]);
    assert_eq!(encoding(&mut c, "m"), "listpack");
    c.cmd(&["RPUSH", "m", &"z".repeat(100)]);
    assert_eq!(encoding(&mut c, "m"), "quicklist");
    // A list made under the old limit keeps working under the new one.
    c.cmd(&["RPUSH", "k", "d", "e", "f"]);
    assert_eq!(c.cmd(&["LRANGE", "k", "0", "-1"]), bulks(&["a", "b", "c", "d", "e", "f"]));
    c.cmd(&["LPOP", "k", "5"]);
    assert_eq!(encoding(&mut c, "k"), "listpack");
    assert_eq!(c.cmd(&["CONFIG", "SET", "list-compress-depth", "1"]), Val::ok());
    c.cmd(&["RPUSH", "k", "g"]);
    assert_eq!(c.cmd(&["LRANGE", "k", "0", "-1"]), bulks(&["f", "g"]));
}

#[test]
fn memory_usage_follows_the_list() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    c.cmd(&["RPUSH", "l", "a"]);
    let small = c.cmd(&["MEMORY", "USAGE", "l"]).as_int();
    let mut args = vec!["RPUSH".to_string(), "l".to_string()];
    args.extend((0..20_000).map(|i| format!("element-{i}")));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(c.cmd(&refs), int(20_001));
    assert_eq!(encoding(&mut c, "l"), "quicklist");
    let big = c.cmd(&["MEMORY", "USAGE", "l"]).as_int();
    // About 15 bytes an element in listpack nodes; the node deque adds little.
    assert!(big > 20_000 * 12 && big < 20_000 * 20, "{small} then {big}");
    c.cmd(&["LTRIM", "l", "0", "9"]);
    let trimmed = c.cmd(&["MEMORY", "USAGE", "l"]).as_int();
    assert!(trimmed < 400, "{trimmed}");
    assert_eq!(encoding(&mut c, "l"), "listpack");
}

#[test]
fn valkey_only_error_cases() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    c.cmd(&["RPUSH", "l", "a", "b", "a"]);
    // Redis 7.0 negates LONG_MIN and overflows; Valkey refuses it.
    let range = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
    assert_eq!(c.cmd(&["LPOS", "l", "a", "RANK", "-9223372036854775808"]), err(range));
    assert_eq!(c.cmd(&["LREM", "l", "-9223372036854775808", "a"]), err(range));
    // Redis 7.0 calls an infinite timeout negative; Valkey says it is out of range.
    for t in ["inf", "1e400", "+infinity"] {
        assert_eq!(c.cmd(&["BLPOP", "l", t]), err("ERR timeout is out of range"), "{t}");
    }
    assert_eq!(c.cmd(&["BLPOP", "l", "-inf"]), err("ERR timeout is negative"));
    assert_eq!(c.cmd(&["LLEN", "l"]), int(3));
}

// ---------------------------------------------------------------------------------------
// Blocking, with several clients (ferrokey alone: redis-server 7.0 serves blocked clients
// by a different mechanism, and the timing is ours to check).
// ---------------------------------------------------------------------------------------

/// Waits until INFO says `n` clients are blocked.
fn wait_blocked(c: &mut Client, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while info_int(c, "clients", "blocked_clients") != n {
        assert!(Instant::now() < deadline, "blocked_clients never reached {n}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_push_from_another_client_wakes_blpop() {
    let s = start(&[]);
    let (mut w, mut c) = (Client::connect(s.port), Client::connect(s.port));
    w.send(&[b("BLPOP"), b("k"), b("0")]);
    wait_blocked(&mut c, 1);
    // LPUSH of several elements: the waiter gets the head once the whole push is done.
    assert_eq!(c.cmd(&["LPUSH", "k", "a", "b", "c"]), int(3));
    assert_eq!(w.read(), popped("k", "c"));
    assert_eq!(c.cmd(&["LRANGE", "k", "0", "-1"]), bulks(&["b", "a"]));
    wait_blocked(&mut c, 0);

    w.send(&[b("BRPOP"), b("k2"), b("0")]);
    wait_blocked(&mut c, 1);
    assert_eq!(c.cmd(&["RPUSH", "k2", "x", "y"]), int(2));
    assert_eq!(w.read(), popped("k2", "y"));
    // The waiter emptied nothing else: x stays.
    assert_eq!(c.cmd(&["LRANGE", "k2", "0", "-1"]), bulks(&["x"]));
}

#[test]
fn moves_wake_a_waiter_on_their_target() {
    // (LINSERT, LPUSHX and RPUSHX signal too, but only grow a list that exists, and a waiter
    // on a non-empty list is served at once: without MULTI they never find one waiting.)
    let s = start(&[]);
    let (mut w, mut c) = (Client::connect(s.port), Client::connect(s.port));
    c.cmd(&["RPUSH", "src", "m1", "m2", "m3"]);
    let movers: [&[&str]; 3] = [
        &["LMOVE", "src", "t", "LEFT", "RIGHT"],
        &["RPOPLPUSH", "src", "t"],
        &["BLMOVE", "src", "t", "LEFT", "LEFT", "0"],
    ];
    for (mover, got) in movers.iter().zip(["m1", "m3", "m2"]) {
        w.send(&[b("BLPOP"), b("t"), b("0")]);
        wait_blocked(&mut c, 1);
        assert_eq!(c.cmd(mover), bulk(got), "{mover:?}");
        assert_eq!(w.read(), popped("t", got), "{mover:?}");
        wait_blocked(&mut c, 0);
        assert_eq!(c.cmd(&["EXISTS", "t"]), int(0));
    }
}

#[test]
fn waiters_are_served_first_come_first_served() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let mut waiters: Vec<Client> = (0..3).map(|_| Client::connect(s.port)).collect();
    for (i, w) in waiters.iter_mut().enumerate() {
        w.send(&[b("BLPOP"), b("fifo"), b("0")]);
        wait_blocked(&mut c, i as i64 + 1);
    }
    assert_eq!(c.cmd(&["RPUSH", "fifo", "1", "2", "3", "4"]), int(4));
    for (i, w) in waiters.iter_mut().enumerate() {
        assert_eq!(w.read(), popped("fifo", &(i + 1).to_string()));
    }
    assert_eq!(c.cmd(&["LRANGE", "fifo", "0", "-1"]), bulks(&["4"]));
    wait_blocked(&mut c, 0);

    // One element at a time: only the first waiter is served.
    for (i, w) in waiters.iter_mut().enumerate() {
        w.send(&[b("BRPOP"), b("one"), b("0")]);
        wait_blocked(&mut c, i as i64 + 1);
    }
    c.cmd(&["RPUSH", "one", "a"]);
    assert_eq!(waiters[0].read(), popped("one", "a"));
    wait_blocked(&mut c, 2);
    c.cmd(&["RPUSH", "one", "b"]);
    assert_eq!(waiters[1].read(), popped("one", "b"));
    c.cmd(&["RPUSH", "one", "c"]);
    assert_eq!(waiters[2].read(), popped("one", "c"));
}

#[test]
fn timeouts_reply_null() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let t0 = Instant::now();
    assert_eq!(c.cmd_raw(&["BLPOP", "none", "0.1"]), b"*-1\r\n");
    assert!(t0.elapsed() >= Duration::from_millis(90), "{:?}", t0.elapsed());
    assert_eq!(c.cmd_raw(&["BRPOP", "a", "b", "0.05"]), b"*-1\r\n");
    // Valkey (and Redis 7.0) answer a timed-out BLMOVE and BRPOPLPUSH with the null array
    // too: the reply depends on the block type (list), not on the command.
    assert_eq!(c.cmd_raw(&["BLMOVE", "none", "d", "LEFT", "RIGHT", "0.05"]), b"*-1\r\n");
    assert_eq!(c.cmd_raw(&["BRPOPLPUSH", "none", "d", "0.05"]), b"*-1\r\n");
    assert_eq!(c.cmd_raw(&["BLMPOP", "0.05", "2", "a", "b", "LEFT", "COUNT", "2"]), b"*-1\r\n");
    assert!(matches!(c.cmd(&["HELLO", "3"]), Val::Map(_)));
    for cmd in [
        &["BLPOP", "none", "0.05"][..],
        &["BLMOVE", "none", "d", "LEFT", "RIGHT", "0.05"],
        &["BLMPOP", "0.05", "1", "a", "RIGHT"],
    ] {
        assert_eq!(c.cmd_raw(cmd), b"_\r\n", "{cmd:?}");
    }
    // A tiny timeout still waits (at least a millisecond), and the key stays absent.
    assert_eq!(c.cmd_raw(&["BLPOP", "none", "0.0001"]), b"_\r\n");
    assert_eq!(c.cmd(&["EXISTS", "none", "d"]), int(0));
}

#[test]
fn blocked_on_several_keys_takes_the_first_pushed() {
    let s = start(&[]);
    let (mut w, mut c) = (Client::connect(s.port), Client::connect(s.port));
    w.send(&[b("BLPOP"), b("k1"), b("k2"), b("k3"), b("0")]);
    wait_blocked(&mut c, 1);
    c.cmd(&["RPUSH", "k3", "three"]);
    assert_eq!(w.read(), popped("k3", "three"));
    wait_blocked(&mut c, 0);
    assert_eq!(c.cmd(&["EXISTS", "k3"]), int(0));

    // BLMPOP with COUNT takes up to COUNT from the key that became ready.
    w.send(&[b("BLMPOP"), b("0"), b("2"), b("m1"), b("m2"), b("RIGHT"), b("COUNT"), b("2")]);
    wait_blocked(&mut c, 1);
    c.cmd(&["RPUSH", "m2", "a", "b", "c"]);
    assert_eq!(w.read(), Val::Array(vec![bulk("m2"), bulks(&["c", "b"])]));
    assert_eq!(c.cmd(&["LRANGE", "m2", "0", "-1"]), bulks(&["a"]));
    // Keys with data are served in argument order without blocking.
    c.cmd(&["RPUSH", "m1", "z"]);
    assert_eq!(
        w.cmd(&["BLMPOP", "0", "2", "m2", "m1", "LEFT", "COUNT", "9"]),
        Val::Array(vec![bulk("m2"), bulks(&["a"])])
    );
}

#[test]
fn blmove_chains_pass_an_element_along() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let mut first = Client::connect(s.port);
    let mut second = Client::connect(s.port);
    let mut last = Client::connect(s.port);
    first.send(&[b("BLMOVE"), b("a"), b("b"), b("RIGHT"), b("LEFT"), b("0")]);
    wait_blocked(&mut c, 1);
    second.send(&[b("BRPOPLPUSH"), b("b"), b("c"), b("0")]);
    wait_blocked(&mut c, 2);
    last.send(&[b("BLPOP"), b("c"), b("0")]);
    wait_blocked(&mut c, 3);
    assert_eq!(c.cmd(&["RPUSH", "a", "x"]), int(1));
    assert_eq!(first.read(), bulk("x"));
    assert_eq!(second.read(), bulk("x"));
    assert_eq!(last.read(), popped("c", "x"));
    wait_blocked(&mut c, 0);
    assert_eq!(c.cmd(&["EXISTS", "a", "b", "c"]), int(0));

    // A BLMOVE to its own source rotates once data arrives.
    first.send(&[b("BLMOVE"), b("r"), b("r"), b("LEFT"), b("RIGHT"), b("0")]);
    wait_blocked(&mut c, 1);
    c.cmd(&["RPUSH", "r", "1", "2", "3"]);
    assert_eq!(first.read(), bulk("1"));
    assert_eq!(c.cmd(&["LRANGE", "r", "0", "-1"]), bulks(&["2", "3", "1"]));

    // A waiter whose target turned into another type gets WRONGTYPE when served.
    c.cmd(&["SET", "str", "v"]);
    first.send(&[b("BLMOVE"), b("src"), b("str"), b("LEFT"), b("LEFT"), b("0")]);
    wait_blocked(&mut c, 1);
    c.cmd(&["RPUSH", "src", "e"]);
    assert_eq!(
        first.read(),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
    assert_eq!(c.cmd(&["LRANGE", "src", "0", "-1"]), bulks(&["e"]));
}

#[test]
fn blocking_on_large_lists_serves_from_quicklists() {
    let s = start(&["--list-max-listpack-size", "2"]);
    let (mut w, mut c) = (Client::connect(s.port), Client::connect(s.port));
    w.send(&[b("BRPOP"), b("q"), b("0")]);
    wait_blocked(&mut c, 1);
    assert_eq!(c.cmd(&["RPUSH", "q", "1", "2", "3", "4", "5"]), int(5));
    assert_eq!(w.read(), popped("q", "5"));
    assert_eq!(encoding(&mut c, "q"), "quicklist");
    assert_eq!(
        w.cmd(&["BLMPOP", "0", "1", "q", "LEFT", "COUNT", "3"]).as_array()[1],
        bulks(&["1", "2", "3"])
    );
    assert_eq!(encoding(&mut c, "q"), "listpack");
}
