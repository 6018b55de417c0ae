//! Set commands over TCP: differential checks against a real redis-server 7.0 for every
//! command (RESP2 and RESP3, errors, WRONGTYPE on every key position, binary members, the
//! intset and hashtable encodings around their limits), the listpack encoding against
//! ferrokey alone (redis 7.0 has none for sets: Valkey 7.2+ behaviour), SPOP and SRANDMEMBER
//! by their properties, and SSCAN's coverage of a large set.
//!
//! Lines starting with `~` are compared sorted (unordered replies); such a comparison does
//! not see the aggregate type, so the `~` (RESP3 set) versus `*` shape is checked on replies
//! of zero or one member, compared byte for byte.

mod common;

use std::collections::{BTreeSet, HashMap};

use common::diff::{same_as_valkey, same_as_valkey_with, Pair};
use common::{bulk, err, int, start, Client, Val};

// ---------------------------------------------------------------------------------------
// Against redis-server 7.0.
// ---------------------------------------------------------------------------------------

#[test]
fn single_set_commands_match_redis() {
    same_as_valkey(&[
        "SADD s a b c a",
        "SADD s d",
        "~SMEMBERS s",
        "SCARD s",
        "SISMEMBER s a",
        "SISMEMBER s z",
        "SISMEMBER nokey a",
        "SMISMEMBER s a z b a",
        "SMISMEMBER nokey a b",
        "SCARD nokey",
        "SMEMBERS nokey",
        "SREM s a z a",
        "SREM s b c d",
        "EXISTS s",
        "SREM nokey a",
        "SADD one x",
        "SMEMBERS one",
        "SADD one x",
        "SADD ints 3 1 2 -5 9223372036854775807 -9223372036854775808",
        "SMEMBERS ints",
        "SADD ints 9223372036854775808 007 -0 +1 \"\"",
        "~SMEMBERS ints",
        "SISMEMBER ints 007",
        "SISMEMBER ints 7",
        "SISMEMBER ints \"\"",
        "SREM ints 007 7 -5",
        "SCARD ints",
        "SADD",
        "SADD s",
        "SREM s",
        "SISMEMBER s",
        "SISMEMBER s a b",
        "SMISMEMBER s",
        "SCARD",
        "SCARD a b",
        "SMEMBERS",
        "SMEMBERS a b",
    ]);
}

#[test]
fn smove_matches_redis() {
    same_as_valkey(&[
        "SADD src 1 2 3 x",
        "SMOVE src dst 1",
        "OBJECT ENCODING dst",
        "SMOVE src dst 9",
        "SMOVE src src 2",
        "SMOVE src src 9",
        "SMOVE nokey dst 1",
        "SMOVE nokey2 nokey3 1",
        "EXISTS nokey3",
        "SADD dst 2",
        "SMOVE src dst 2",
        "SCARD dst",
        "SMOVE src dst 3",
        "SMOVE src dst x",
        "EXISTS src",
        "~SMEMBERS dst",
        "SMOVE dst newdst x",
        "SMEMBERS newdst",
        "SMOVE",
        "SMOVE a b",
        "SMOVE a b c d",
    ]);
}

#[test]
fn intersections_match_redis() {
    same_as_valkey(&[
        "SADD a 1 2 3 4 x y",
        "SADD b 2 3 x z",
        "SADD c 3 x q",
        "SADD ia 1 2 3 4 5",
        "SADD ib 4 5 6",
        "~SINTER a b c",
        "~SINTER a b",
        "~SINTER c",
        "SINTER ia ib",
        "SINTER a nokey",
        "SINTER nokey a",
        "~SINTER a a",
        "SINTER a b c ia",
        "SINTERCARD 3 a b c",
        "SINTERCARD 2 a b LIMIT 1",
        "SINTERCARD 2 a b LIMIT 0",
        "SINTERCARD 2 a b LIMIT 10",
        "SINTERCARD 2 a b limit 2 LIMIT 3",
        "SINTERCARD 1 nokey",
        "SINTERCARD 1 a",
        "SINTERCARD 1 a LIMIT 9223372036854775807",
        "SINTERCARD abc a",
        "SINTERCARD 0 a",
        "SINTERCARD -1 a",
        "SINTERCARD 9223372036854775808 a",
        "SINTERCARD 3 a b",
        "SINTERCARD 1 a LIMIT",
        "SINTERCARD 1 a LIMIT abc",
        "SINTERCARD 1 a LIMIT -1",
        "SINTERCARD 1 a FOO 1",
        "SINTERCARD 1 a b",
        "SINTERCARD 1",
        "SINTERSTORE dest a b c",
        "~SMEMBERS dest",
        "SINTERSTORE dest ia ib",
        "SMEMBERS dest",
        "OBJECT ENCODING dest",
        "SINTERSTORE dest a nokey",
        "EXISTS dest",
        "SINTERSTORE dest ia c",
        "SINTERSTORE dest ia",
        "SMEMBERS dest",
        "SINTER",
        "SINTERSTORE dest",
    ]);
}

#[test]
fn unions_and_differences_match_redis() {
    same_as_valkey(&[
        "SADD a 1 2 3 4 x y",
        "SADD b 2 3 x z",
        "SADD c 3 x q",
        "SADD ia 1 2 3 4 5",
        "SADD ib 4 5 6",
        "~SUNION a b c nokey",
        "SUNION nokey",
        "SUNION nokey nokey2",
        "SUNION ia ib",
        "SUNIONSTORE dest a b",
        "~SMEMBERS dest",
        "SUNIONSTORE dest ia ib",
        "SMEMBERS dest",
        "OBJECT ENCODING dest",
        "SUNIONSTORE dest nokey",
        "EXISTS dest",
        "~SDIFF a b c",
        "~SDIFF a nokey",
        "SDIFF ia ib",
        "SDIFF nokey a",
        "SDIFF a a",
        "SDIFF a b a",
        "~SDIFF a b b nokey",
        "SDIFF c a",
        "SDIFFSTORE dest a b c",
        "~SMEMBERS dest",
        "SDIFFSTORE dest ia ib",
        "SMEMBERS dest",
        "OBJECT ENCODING dest",
        "SDIFFSTORE dest a a",
        "EXISTS dest",
        "SUNION",
        "SDIFF",
        "SUNIONSTORE dest",
        "SDIFFSTORE dest",
    ]);
}

#[test]
fn store_commands_replace_any_destination() {
    same_as_valkey(&[
        "SADD a 1 2",
        "SADD b 2 3",
        "SET str v",
        "SET list x",
        "SET ttl v EX 1000",
        "SUNIONSTORE str a b",
        "TYPE str",
        "SMEMBERS str",
        "SINTERSTORE list a b",
        "TYPE list",
        "SMEMBERS list",
        "SDIFFSTORE ttl a b",
        "TTL ttl",
        "SMEMBERS ttl",
        "SET str2 v",
        "SINTERSTORE str2 a nokey",
        "EXISTS str2",
        "SET str3 v",
        "SDIFFSTORE str3 a a",
        "EXISTS str3",
        "SUNIONSTORE a a b",
        "SMEMBERS a",
        "SDIFFSTORE b b a",
        "EXISTS b",
    ]);
}

#[test]
fn random_commands_match_redis_where_deterministic() {
    same_as_valkey(&[
        "SADD one x",
        "SADD a 1 2 3 x y",
        "SRANDMEMBER nokey",
        "SRANDMEMBER nokey 5",
        "SRANDMEMBER nokey -5",
        "SRANDMEMBER nokey 0",
        "SRANDMEMBER one",
        "SRANDMEMBER one 5",
        "SRANDMEMBER one -3",
        "SRANDMEMBER one 1",
        "SRANDMEMBER one -1",
        "SRANDMEMBER one 0",
        "SRANDMEMBER a 0",
        "~SRANDMEMBER a 100",
        "~SRANDMEMBER a 5",
        "SRANDMEMBER a -9223372036854775808",
        "SRANDMEMBER nokey -9223372036854775808",
        "SRANDMEMBER a abc",
        "SRANDMEMBER a 1.5",
        "SRANDMEMBER a 1 2",
        "SRANDMEMBER",
        "SPOP nokey",
        "SPOP nokey 3",
        "SPOP nokey 0",
        "SPOP one 0",
        "EXISTS one",
        "SPOP one 5",
        "EXISTS one",
        "SADD one x",
        "SPOP one",
        "EXISTS one",
        "SADD one x",
        "SPOP one 1",
        "EXISTS one",
        "~SPOP a 100",
        "EXISTS a",
        "SADD a 1",
        "SPOP a -1",
        "SPOP nokey -1",
        "SPOP a abc",
        "SPOP a 9223372036854775808",
        "SPOP a 1 2",
        "SPOP",
    ]);
}

#[test]
fn sscan_matches_redis_on_intsets_and_errors() {
    same_as_valkey(&[
        "SADD ints 50 3 1 20 2 -7",
        "SSCAN ints 0",
        "SSCAN ints 0 MATCH 2*",
        "SSCAN ints 0 MATCH -*",
        "SSCAN ints 0 COUNT 1",
        "SSCAN ints 12345",
        "SSCAN ints 0 match 1* MATCH 5*",
        "SSCAN nokey 0",
        "SSCAN nokey 0 COUNT 0",
        "SSCAN nokey x",
        "SSCAN ints x",
        "SSCAN ints -1",
        "SSCAN ints 18446744073709551616",
        "SSCAN ints 0 COUNT 0",
        "SSCAN ints 0 COUNT -1",
        "SSCAN ints 0 COUNT x",
        "SSCAN ints 0 COUNT",
        "SSCAN ints 0 MATCH",
        "SSCAN ints 0 TYPE set",
        "SSCAN ints 0 NOVALUES",
        "SADD e \"\" a",
        "SSCAN e 0 MATCH **",
        "SREM e a",
        "SSCAN e 0 MATCH *",
        "SSCAN e 0 MATCH **",
        "SET str v",
        "SSCAN str 0",
        "SSCAN str 0 COUNT x",
        "SSCAN str x",
        "SSCAN",
        "SSCAN ints",
    ]);
}

#[test]
fn wrongtype_on_every_key_position() {
    same_as_valkey(&[
        "SET str v",
        "SADD s a b",
        "SADD str a",
        "SREM str a",
        "SISMEMBER str a",
        "SMISMEMBER str a",
        "SCARD str",
        "SMEMBERS str",
        "SRANDMEMBER str",
        "SRANDMEMBER str 3",
        "SRANDMEMBER str -3",
        "SRANDMEMBER str 0",
        "SPOP str",
        "SPOP str 2",
        "SPOP str 0",
        "SMOVE str s a",
        "SMOVE s str a",
        "SMOVE nokey str a",
        "SMOVE str nokey a",
        "SMOVE s str zzz",
        "SISMEMBER s a",
        "SINTER str s",
        "SINTER s str",
        "SINTER nokey str",
        "SINTERCARD 2 s str",
        "SINTERCARD 2 nokey str",
        "SINTERSTORE s str s",
        "SINTERSTORE s s str",
        "SUNION s str",
        "SUNION str nokey",
        "SUNIONSTORE d s str",
        "SDIFF s str",
        "SDIFF nokey str",
        "SDIFF str s",
        "SDIFFSTORE d nokey str",
        "SSCAN str 0",
        "EXISTS d",
        "~SMEMBERS s",
        "SINTERSTORE str s s",
        "TYPE str",
    ]);
}

#[test]
fn binary_members_match_redis() {
    same_as_valkey(&[
        "SADD b a\0b \r\n \0 \"\" a\r\nb",
        "SCARD b",
        "SISMEMBER b a\0b",
        "SISMEMBER b a",
        "SMISMEMBER b \0 \r\n \"\" x",
        "~SMEMBERS b",
        "SADD c \0 zz",
        "SINTER b c",
        "~SUNION b c",
        "~SDIFF b c",
        "SREM b \0 \r\n",
        "~SMEMBERS b",
        "SMOVE b c a\0b",
        "SISMEMBER c a\0b",
        "SREM c zz \0",
        "SSCAN c 0 COUNT 100",
        "SMEMBERS c",
    ]);
}

/// The script lines that add `from..to` as integers in batches of 100.
fn sadd_range(key: &str, from: i64, to: i64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut n = from;
    while n < to {
        let end = (n + 100).min(to);
        let members: Vec<String> = (n..end).map(|v| v.to_string()).collect();
        lines.push(format!("SADD {key} {}", members.join(" ")));
        n = end;
    }
    lines
}

#[test]
fn intset_and_hashtable_encodings_match_redis() {
    let long = "v".repeat(65);
    let mut lines: Vec<String> = Vec::new();
    lines.extend(sadd_range("i", 0, 512));
    lines.extend(
        ["OBJECT ENCODING i", "SCARD i", "SADD i 511", "OBJECT ENCODING i"].map(String::from),
    );
    lines.extend(
        ["SADD i 512", "OBJECT ENCODING i", "SREM i 512 0 1", "OBJECT ENCODING i"]
            .map(String::from),
    );
    // Wide integers stay in an intset.
    lines.extend(
        ["SADD w 1 70000 -9223372036854775808", "OBJECT ENCODING w", "SRANDMEMBER w 100"]
            .map(String::from),
    );
    // A string too long for a listpack turns an intset into a table in both servers.
    lines.extend(["SADD l 1 2", &format!("SADD l {long}"), "OBJECT ENCODING l"].map(String::from));
    // So does a string joining 128 or more integers.
    lines.extend(sadd_range("m", 0, 200));
    lines.extend(["SADD m abc", "OBJECT ENCODING m", "SCARD m"].map(String::from));
    // Many members at once.
    let many: Vec<String> = (0..600).map(|v| v.to_string()).collect();
    lines.push(format!("SADD k {}", many.join(" ")));
    lines.extend(["OBJECT ENCODING k", "SCARD k"].map(String::from));
    // Store results: all integers, within and past the limit.
    lines.extend(
        ["SUNIONSTORE u i", "OBJECT ENCODING u", "SINTERSTORE v i w", "OBJECT ENCODING v"]
            .map(String::from),
    );
    lines.extend(
        ["SUNIONSTORE u w", "OBJECT ENCODING u", "SDIFFSTORE u k i", "OBJECT ENCODING u"]
            .map(String::from),
    );
    lines.extend(["SMEMBERS u", "SUNIONSTORE u k", "OBJECT ENCODING u"].map(String::from));
    // The limit read at write time.
    lines.extend(
        [
            "CONFIG SET set-max-intset-entries 4",
            "SADD j 1 2 3 4",
            "OBJECT ENCODING j",
            "SADD j 4",
            "OBJECT ENCODING j",
            "SADD j 5",
            "OBJECT ENCODING j",
            "SADD w2 1",
            "SADD w2 2 3 4 5",
            "OBJECT ENCODING w2",
            "SUNIONSTORE u j",
            "OBJECT ENCODING u",
            "CONFIG SET set-max-intset-entries 512",
            "SADD j2 1 2 3 4 5",
            "OBJECT ENCODING j2",
            "OBJECT ENCODING j",
        ]
        .map(String::from),
    );
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    same_as_valkey(&lines);
}

#[test]
fn command_info_and_getkeys_match_redis() {
    let mut p = Pair::start(2, &[]);
    for name in [
        "sadd",
        "srem",
        "sismember",
        "smismember",
        "scard",
        "smembers",
        "srandmember",
        "spop",
        "smove",
        "sinter",
        "sintercard",
        "sunion",
        "sdiff",
        "sscan",
    ] {
        p.same_line(&format!("COMMAND INFO {name}"));
    }
    for line in [
        "COMMAND GETKEYS SINTERCARD 2 a b LIMIT 1",
        "COMMAND GETKEYS SINTERCARD 3 a b",
        "COMMAND GETKEYS SMOVE a b m",
        "COMMAND GETKEYS SINTERSTORE d a b",
        "COMMAND GETKEYS SDIFFSTORE d a b c",
        "COMMAND GETKEYSANDFLAGS SMOVE a b m",
        "COMMAND GETKEYSANDFLAGS SUNIONSTORE d a b",
        "COMMAND GETKEYSANDFLAGS SINTERSTORE d a b",
    ] {
        p.same_line(line);
    }
}

/// The legacy (first, last, step) of a command whose second key spec runs to the last
/// argument: redis-server reports (1, -1, 1).
#[test]
fn store_command_info_matches_redis() {
    let mut p = Pair::start(2, &[]);
    for name in ["sinterstore", "sunionstore", "sdiffstore"] {
        p.same_line(&format!("COMMAND INFO {name}"));
    }
}

#[test]
fn compact_sets_use_no_more_memory_than_redis() {
    let mut p = Pair::start_redis(2, &[]);
    let members: Vec<String> = (0..5000).map(|i| format!("member:{i:08}")).collect();
    for chunk in members.chunks(500) {
        let mut args = vec!["SADD", "big"];
        args.extend(chunk.iter().map(String::as_str));
        p.same(&args);
    }
    let mut ints = vec!["SADD", "ints"];
    let numbers: Vec<String> = (0..400).map(|i| (i * 3).to_string()).collect();
    ints.extend(numbers.iter().map(String::as_str));
    p.same(&ints);
    for key in ["big", "ints"] {
        let ours = p.a.cmd(&["MEMORY", "USAGE", key, "SAMPLES", "0"]).as_int();
        let theirs = p.b.cmd(&["MEMORY", "USAGE", key, "SAMPLES", "0"]).as_int();
        assert!(ours <= theirs, "{key}: ferrokey {ours} bytes, redis-server {theirs}");
    }
}

// ---------------------------------------------------------------------------------------
// Against ferrokey alone: Valkey 7.2+ behaviour that redis-server 7.0 does not have.
// ---------------------------------------------------------------------------------------

fn encoding(c: &mut Client, key: &str) -> String {
    c.cmd(&["OBJECT", "ENCODING", key]).as_str()
}

fn sadd_all(c: &mut Client, key: &str, members: &[String]) -> Val {
    let mut args = vec!["SADD", key];
    args.extend(members.iter().map(String::as_str));
    c.cmd(&args)
}

/// Redis 7.0 keeps small string sets in a hashtable; Valkey keeps them in a listpack up to
/// set-max-listpack-entries members of set-max-listpack-value bytes.
#[test]
fn small_string_sets_are_listpacks() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let names: Vec<String> = (0..128).map(|i| format!("m{i}")).collect();
    assert_eq!(sadd_all(&mut c, "s", &names), int(128));
    assert_eq!(encoding(&mut c, "s"), "listpack");
    assert_eq!(c.cmd(&["SADD", "s", "m0"]), int(0));
    assert_eq!(encoding(&mut c, "s"), "listpack");
    assert_eq!(c.cmd(&["SADD", "s", "m128"]), int(1));
    assert_eq!(encoding(&mut c, "s"), "hashtable");
    let rest: Vec<String> = (1..129).map(|i| format!("m{i}")).collect();
    let mut srem = vec!["SREM", "s"];
    srem.extend(rest.iter().map(String::as_str));
    assert_eq!(c.cmd(&srem), int(128));
    assert_eq!(encoding(&mut c, "s"), "hashtable", "never converted back");
    assert_eq!(c.cmd(&["SMEMBERS", "s"]), Val::Array(vec![bulk("m0")]));

    let v64 = "v".repeat(64);
    let v65 = "v".repeat(65);
    assert_eq!(c.cmd(&["SADD", "l", "a", &v64]), int(2));
    assert_eq!(encoding(&mut c, "l"), "listpack");
    assert_eq!(c.cmd(&["SADD", "l", &v65]), int(1));
    assert_eq!(encoding(&mut c, "l"), "hashtable");

    // An intset taking a string becomes a listpack when everything fits one.
    assert_eq!(c.cmd(&["SADD", "i", "1", "2", "-300"]), int(3));
    assert_eq!(encoding(&mut c, "i"), "intset");
    assert_eq!(c.cmd(&["SADD", "i", "x"]), int(1));
    assert_eq!(encoding(&mut c, "i"), "listpack");
    let mut members = BTreeSet::new();
    for v in c.cmd(&["SMEMBERS", "i"]).as_array() {
        members.insert(v.as_str());
    }
    assert_eq!(members, BTreeSet::from(["1", "2", "-300", "x"].map(String::from)));
    assert_eq!(c.cmd(&["SISMEMBER", "i", "-300"]), int(1));
    assert_eq!(c.cmd(&["SREM", "i", "x", "1"]), int(2));
    assert_eq!(encoding(&mut c, "i"), "listpack");
    // A non-canonical integer is a string.
    assert_eq!(c.cmd(&["SADD", "n", "007"]), int(1));
    assert_eq!(encoding(&mut c, "n"), "listpack");
    assert_eq!(c.cmd(&["SISMEMBER", "n", "7"]), int(0));
}

/// Valkey sizes a new set by the number of members SADD was given (duplicates included).
#[test]
fn sadd_picks_the_first_encoding_by_argument_count() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let ones: Vec<String> = (0..600).map(|_| "1".to_string()).collect();
    assert_eq!(sadd_all(&mut c, "a", &ones), int(1));
    assert_eq!(encoding(&mut c, "a"), "hashtable");
    let xs: Vec<String> = (0..129).map(|_| "x".to_string()).collect();
    assert_eq!(sadd_all(&mut c, "b", &xs), int(1));
    assert_eq!(encoding(&mut c, "b"), "hashtable");
    // An existing compact set converts up front too.
    assert_eq!(c.cmd(&["SADD", "c", "x"]), int(1));
    assert_eq!(encoding(&mut c, "c"), "listpack");
    assert_eq!(sadd_all(&mut c, "c", &xs), int(0));
    assert_eq!(encoding(&mut c, "c"), "hashtable");
    assert_eq!(c.cmd(&["SCARD", "c"]), int(1));
}

#[test]
fn listpack_limits_follow_config_set() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["CONFIG", "SET", "set-max-listpack-entries", "2"]), Val::ok());
    assert_eq!(c.cmd(&["SADD", "p", "a", "b"]), int(2));
    assert_eq!(encoding(&mut c, "p"), "listpack");
    assert_eq!(c.cmd(&["SADD", "p", "c"]), int(1));
    assert_eq!(encoding(&mut c, "p"), "hashtable");
    assert_eq!(c.cmd(&["CONFIG", "SET", "set-max-listpack-entries", "128"]), Val::ok());
    assert_eq!(c.cmd(&["CONFIG", "SET", "set-max-listpack-value", "3"]), Val::ok());
    assert_eq!(c.cmd(&["SADD", "q", "abc"]), int(1));
    assert_eq!(encoding(&mut c, "q"), "listpack");
    assert_eq!(c.cmd(&["SADD", "q", "abcd"]), int(1));
    assert_eq!(encoding(&mut c, "q"), "hashtable");
    // An intset whose widest integer is longer than the value limit goes to a table.
    assert_eq!(c.cmd(&["SADD", "r", "12345"]), int(1));
    assert_eq!(c.cmd(&["SADD", "r", "ab"]), int(1));
    assert_eq!(encoding(&mut c, "r"), "hashtable");
    assert_eq!(c.cmd(&["CONFIG", "SET", "set-max-listpack-value", "64"]), Val::ok());
    // With no room for an intset, a single integer starts a listpack.
    assert_eq!(c.cmd(&["CONFIG", "SET", "set-max-intset-entries", "0"]), Val::ok());
    assert_eq!(c.cmd(&["SADD", "z", "1"]), int(1));
    assert_eq!(encoding(&mut c, "z"), "listpack");
}

#[test]
fn store_results_and_moves_use_compact_encodings() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["SADD", "a", "x", "y", "1", "2"]), int(4));
    assert_eq!(c.cmd(&["SADD", "b", "y", "x", "2", "3"]), int(4));
    assert_eq!(c.cmd(&["SINTERSTORE", "d", "a", "b"]), int(3));
    assert_eq!(encoding(&mut c, "d"), "listpack");
    assert_eq!(c.cmd(&["SUNIONSTORE", "d", "a", "b"]), int(5));
    assert_eq!(encoding(&mut c, "d"), "listpack");
    assert_eq!(c.cmd(&["SDIFFSTORE", "d", "a", "b"]), int(1));
    assert_eq!(encoding(&mut c, "d"), "intset", "{{1}} is all integers");
    // The integers common to two listpacks make an intset.
    assert_eq!(c.cmd(&["SREM", "b", "x", "y"]), int(2));
    assert_eq!(c.cmd(&["SINTERSTORE", "d", "a", "b"]), int(1));
    assert_eq!(encoding(&mut c, "d"), "intset");
    assert_eq!(c.cmd(&["SMOVE", "a", "m1", "x"]), int(1));
    assert_eq!(encoding(&mut c, "m1"), "listpack");
    assert_eq!(c.cmd(&["SMOVE", "a", "m2", "1"]), int(1));
    assert_eq!(encoding(&mut c, "m2"), "intset");
}

/// SPOP leaving few members keeps them in a fresh set, which may be smaller than the old
/// encoding (Valkey 7.2+: a listpack where redis 7.0 keeps a hashtable).
#[test]
fn spop_of_most_members_keeps_the_rest_compact() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let names: Vec<String> = (0..200).map(|i| format!("m{i}")).collect();
    sadd_all(&mut c, "big", &names);
    assert_eq!(encoding(&mut c, "big"), "hashtable");
    let popped = c.cmd(&["SPOP", "big", "190"]).as_array();
    assert_eq!(popped.len(), 190);
    assert_eq!(c.cmd(&["SCARD", "big"]), int(10));
    assert_eq!(encoding(&mut c, "big"), "listpack");
    let left: BTreeSet<String> =
        c.cmd(&["SMEMBERS", "big"]).as_array().iter().map(Val::as_str).collect();
    let taken: BTreeSet<String> = popped.iter().map(Val::as_str).collect();
    assert!(left.is_disjoint(&taken));
    assert_eq!(left.len() + taken.len(), 200);
    assert!(left.union(&taken).all(|m| names.contains(m)));
}

// ---------------------------------------------------------------------------------------
// SPOP and SRANDMEMBER by their properties, in each encoding.
// ---------------------------------------------------------------------------------------

/// Fills `key` with `n` members that make it an intset, a listpack or a table.
fn fill(c: &mut Client, key: &str, kind: &str, n: usize) -> BTreeSet<String> {
    let members: Vec<String> = (0..n)
        .map(|i| match kind {
            "intset" => (i as i64 * 7 - 50).to_string(),
            _ => format!("member-{i}"),
        })
        .collect();
    for chunk in members.chunks(100) {
        sadd_all(c, key, chunk);
    }
    assert_eq!(encoding(c, key), kind);
    members.into_iter().collect()
}

fn strings(v: &Val) -> Vec<String> {
    v.as_array().iter().map(Val::as_str).collect()
}

#[test]
fn srandmember_properties_in_every_encoding() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for (key, kind, n) in [("i", "intset", 300), ("l", "listpack", 40), ("h", "hashtable", 2000)] {
        let all = fill(&mut c, key, kind, n);
        let one = c.cmd(&["SRANDMEMBER", key]).as_str();
        assert!(all.contains(&one), "{kind}: {one}");
        for count in [1, 5, n / 3 - 1, n / 3 + 1, n / 2, n - 1, n, n + 10] {
            let got = strings(&c.cmd(&["SRANDMEMBER", key, &count.to_string()]));
            let distinct: BTreeSet<String> = got.iter().cloned().collect();
            assert_eq!(got.len(), count.min(n), "{kind} count {count}");
            assert_eq!(distinct.len(), got.len(), "{kind} count {count}: repeats");
            assert!(distinct.is_subset(&all));
        }
        let got = strings(&c.cmd(&["SRANDMEMBER", key, "-30"]));
        assert_eq!(got.len(), 30);
        assert!(got.iter().all(|m| all.contains(m)));
        // Repeats cover the whole set, each member within a factor of 4 of its share.
        let draws = n * 100;
        let mut hits: HashMap<String, usize> = HashMap::new();
        for m in strings(&c.cmd(&["SRANDMEMBER", key, &format!("-{draws}")])) {
            *hits.entry(m).or_default() += 1;
        }
        assert_eq!(hits.len(), n, "{kind}: every member drawn");
        assert!(hits.values().all(|&k| (25..400).contains(&k)), "{kind}: {hits:?}");
        assert_eq!(c.cmd(&["SCARD", key]), int(n as i64), "SRANDMEMBER removes nothing");
        assert_eq!(encoding(&mut c, key), kind);
    }
}

#[test]
fn spop_properties_in_every_encoding() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for (key, kind, n) in [("i", "intset", 300), ("l", "listpack", 60), ("h", "hashtable", 1000)] {
        let mut left = fill(&mut c, key, kind, n);
        let one = c.cmd(&["SPOP", key]).as_str();
        assert!(left.remove(&one), "{kind}: popped {one}");
        assert_eq!(c.cmd(&["SISMEMBER", key, &one]), int(0));
        // Few members (popped one by one), then most of the rest (the rest kept aside).
        for few_or_most in [true, false] {
            let count = if few_or_most { 5 } else { left.len() - 4 };
            let got = strings(&c.cmd(&["SPOP", key, &count.to_string()]));
            assert_eq!(got.len(), count, "{kind} count {count}");
            for m in &got {
                assert!(left.remove(m), "{kind}: popped {m} twice or a non-member");
            }
            assert_eq!(c.cmd(&["SCARD", key]), int(left.len() as i64));
        }
        let rest: BTreeSet<String> = strings(&c.cmd(&["SMEMBERS", key])).into_iter().collect();
        assert_eq!(rest, left);
        let got: BTreeSet<String> = strings(&c.cmd(&["SPOP", key, "10"])).into_iter().collect();
        assert_eq!(got, left, "a count past the size pops everything");
        assert_eq!(c.cmd(&["EXISTS", key]), int(0));
    }
}

#[test]
fn random_replies_have_the_resp3_shapes() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert!(matches!(c.cmd(&["HELLO", "3"]), Val::Map(_)));
    fill(&mut c, "h", "hashtable", 300);
    assert!(matches!(c.cmd(&["SPOP", "h", "3"]), Val::Set(v) if v.len() == 3));
    assert!(matches!(c.cmd(&["SRANDMEMBER", "h", "3"]), Val::Array(v) if v.len() == 3));
    assert!(matches!(c.cmd(&["SRANDMEMBER", "h", "-3"]), Val::Array(v) if v.len() == 3));
    assert!(matches!(c.cmd(&["SMEMBERS", "h"]), Val::Set(v) if v.len() == 297));
    assert!(matches!(c.cmd(&["SINTER", "h", "h"]), Val::Set(v) if v.len() == 297));
    assert!(matches!(c.cmd(&["SPOP", "h", "1000"]), Val::Set(v) if v.len() == 297));
    assert_eq!(c.cmd(&["SPOP", "h"]), Val::Nil);
}

/// A negative count asks for that many members, however many; the reply stops at the
/// output buffer limit and the client is disconnected, as in Valkey, without the server
/// building the whole reply.
#[test]
fn huge_negative_counts_stop_at_the_output_limit() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    fill(&mut c, "h", "hashtable", 1000);
    fill(&mut c, "l", "listpack", 10);
    let limit = ["CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0"];
    assert_eq!(c.cmd(&limit), Val::ok());
    for key in ["h", "l"] {
        let mut victim = Client::connect(s.port);
        victim.send(&[b"SRANDMEMBER", key.as_bytes(), b"-9223372036854775807"]);
        assert!(victim.is_closed(), "{key}: the client is disconnected");
        assert_eq!(c.cmd(&["PING"]), Val::Simple("PONG".into()));
    }
    assert_eq!(c.cmd(&["SCARD", "h"]), int(1000));
}

// ---------------------------------------------------------------------------------------
// SSCAN.
// ---------------------------------------------------------------------------------------

/// Scans `key` to the end; returns every member seen and the number of calls.
fn sscan_all(c: &mut Client, key: &str, extra: &[&str]) -> (Vec<String>, usize) {
    let mut cursor = "0".to_string();
    let mut seen = Vec::new();
    let mut calls = 0;
    loop {
        let mut args = vec!["SSCAN", key, cursor.as_str()];
        args.extend_from_slice(extra);
        let reply = c.cmd(&args).as_array();
        calls += 1;
        assert!(calls < 100_000, "the scan does not end");
        seen.extend(strings(&reply[1]));
        cursor = reply[0].as_str();
        if cursor == "0" {
            return (seen, calls);
        }
    }
}

#[test]
fn sscan_covers_a_large_set() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let all = fill(&mut c, "h", "hashtable", 10_000);
    for (count, min_calls) in [("10", 500), ("100", 50), ("1000", 5)] {
        let (seen, calls) = sscan_all(&mut c, "h", &["COUNT", count]);
        let distinct: BTreeSet<String> = seen.iter().cloned().collect();
        assert_eq!(distinct, all, "COUNT {count}");
        assert!(calls >= min_calls, "COUNT {count}: {calls} calls");
    }
    let (seen, _) = sscan_all(&mut c, "h", &["MATCH", "member-1*"]);
    let expected: BTreeSet<String> =
        all.iter().filter(|m| m.starts_with("member-1")).cloned().collect();
    assert_eq!(seen.into_iter().collect::<BTreeSet<_>>(), expected);
    // Members present for the whole scan are returned even while the set grows.
    let mut cursor = "0".to_string();
    let mut seen = BTreeSet::new();
    let mut added = 0;
    loop {
        let reply = c.cmd(&["SSCAN", "h", cursor.as_str()]).as_array();
        seen.extend(strings(&reply[1]));
        cursor = reply[0].as_str();
        if cursor == "0" {
            break;
        }
        if added < 20_000 {
            let more: Vec<String> = (added..added + 50).map(|i| format!("new-{i}")).collect();
            sadd_all(&mut c, "h", &more);
            added += 50;
        }
    }
    assert!(all.is_subset(&seen), "a member present throughout was missed");
}

#[test]
fn sscan_returns_compact_sets_whole() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    fill(&mut c, "l", "listpack", 100);
    fill(&mut c, "i", "intset", 500);
    for key in ["l", "i"] {
        let reply = c.cmd(&["SSCAN", key, "777", "COUNT", "1"]).as_array();
        assert_eq!(reply[0], bulk("0"));
        let n = if key == "l" { 100 } else { 500 };
        assert_eq!(reply[1].as_array().len(), n);
    }
    let reply = c.cmd(&["SSCAN", "l", "0", "MATCH", "member-9?"]).as_array();
    assert_eq!(strings(&reply[1]).len(), 10);
    assert_eq!(c.cmd(&["SSCAN", "l", "0", "COUNT", "0"]), err("ERR syntax error"));
}

#[test]
fn empty_results_in_resp3_are_sets_or_arrays() {
    // Redis 7.0 answers these with the same shapes; checked here byte for byte in both
    // protocols with the arguments in several orders.
    same_as_valkey_with(
        3,
        &[],
        &[
            "SADD a x",
            "SINTER a nokey",
            "SUNION nokey",
            "SDIFF a a",
            "SPOP nokey 2",
            "SPOP a 0",
            "SRANDMEMBER nokey 2",
            "SRANDMEMBER a 0",
            "SMEMBERS nokey",
            "SSCAN nokey 0",
            "SPOP a 1",
        ],
    );
}
