//! Sorted set commands over TCP: differential checks against a real redis-server 7.0 (RESP2
//! and RESP3, errors included) in both encodings, score formatting, ranges (exclusive,
//! infinite, lex, LIMIT), set operations, OBJECT ENCODING thresholds, ZRANDMEMBER by its
//! properties, and blocking pops with two clients. Behaviour that Valkey changed on purpose
//! after 7.0 (ZRANK WITHSCORE, the timeout range check) is tested against ferrokey alone.

mod common;
#[path = "zset/geo.rs"]
mod geo;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use common::diff::{same_as_valkey, same_as_valkey_with, Pair};
use common::{bulk, err, int, start, Client, Val};

/// Runs `lines` against both servers in both protocols, once with the default (listpack)
/// encoding and once with every sorted set in the large encoding.
fn same_in_both_encodings(lines: &[&str]) {
    same_as_valkey(lines);
    for proto in [2, 3] {
        same_as_valkey_with(proto, &["--zset-max-listpack-entries", "0"], lines);
    }
}

#[test]
fn zadd_options_and_errors_match_redis() {
    same_in_both_encodings(&[
        "ZADD z 1 a 2 b 3 c",
        "ZADD z 1 a",
        "ZADD z CH 5 a 2 b 9 d",
        "ZADD z NX 100 a 7 e",
        "ZADD z XX 100 a 7 f",
        "ZADD z XX CH 100 a 7 f",
        "ZADD z GT CH 50 a 200 b",
        "ZADD z LT CH 60 a 1 b",
        "ZADD z INCR 5 a",
        "ZADD z INCR -5 a",
        "ZADD z INCR 0 a",
        "ZADD z NX INCR 1 a",
        "ZADD z XX INCR 1 nosuch",
        "ZADD z GT INCR -1 a",
        "ZADD z LT INCR -1 a",
        "ZADD nokey XX 1 a",
        "ZADD nokey XX INCR 1 a",
        "EXISTS nokey",
        "ZADD z XX NX 1 a",
        "ZADD z GT LT 1 a",
        "ZADD z NX GT 1 a",
        "ZADD z NX LT 1 a",
        "ZADD z INCR 1 a 2 b",
        "ZADD z 1 a 2",
        "ZADD z CH 1",
        "ZADD z nan a",
        "ZADD z 1 a x b",
        "ZADD z abc a",
        "ZADD z \"\" a",
        "ZADD z 1e400 a",
        "ZADD z 0x10 hex",
        "ZADD z inf i -inf j +inf k",
        "ZADD z INCR -inf i",
        "ZINCRBY z -inf i",
        "ZINCRBY z +inf j",
        "ZINCRBY z 2.5 a",
        "ZINCRBY z x a",
        "ZINCRBY z nan a",
        "ZINCRBY new 3 m",
        "ZRANGE z 0 -1 WITHSCORES",
        "ZCARD z",
        "ZCARD nokey",
        "ZADD",
        "ZADD z",
        "ZADD z 1",
    ]);
}

#[test]
fn point_reads_and_removal_match_redis() {
    same_in_both_encodings(&[
        "ZADD z 1 a 2 b 3 c 4 d",
        "ZSCORE z a",
        "ZSCORE z nosuch",
        "ZSCORE nokey a",
        "ZMSCORE z a nosuch d",
        "ZMSCORE nokey a b",
        "ZRANK z a",
        "ZRANK z d",
        "ZREVRANK z a",
        "ZREVRANK z nosuch",
        "ZRANK nokey a",
        "ZREM z a nosuch b",
        "ZREM z nosuch",
        "ZREM nokey a",
        "ZREM z c d",
        "EXISTS z",
        "SET s x",
        "ZADD s 1 a",
        "ZSCORE s a",
        "ZMSCORE s a",
        "ZRANK s a",
        "ZCARD s",
        "ZREM s a",
        "ZINCRBY s 1 a",
        "ZRANGE s 0 -1",
        "ZCOUNT s 0 1",
        "ZLEXCOUNT s - +",
        "ZPOPMIN s",
        "ZPOPMIN s 0",
        "ZPOPMAX s 0",
        "ZRANDMEMBER s",
        "ZSCAN s 0",
        "ZUNION 1 s",
        "ZUNIONSTORE d 1 s",
        "ZRANGESTORE d s 0 -1",
        "ZREMRANGEBYRANK s 0 1",
        "ZSCORE z",
        "ZMSCORE z",
        "ZRANK z",
        "ZRANK z a b c",
        "ZREVRANK z a b c",
    ]);
}

#[test]
fn scores_are_formatted_like_redis() {
    same_in_both_encodings(&[
        "ZADD z 1.5 a 0.1 b 1e20 c -0 d 3.0000000000000004 e inf f -inf g 1e-5 h",
        "ZADD z 123456789012345678 i -2.5e-300 j 5e-324 k 1.7976931348623157e308 l",
        "ZRANGE z 0 -1 WITHSCORES",
        "ZSCORE z b",
        "ZSCORE z d",
        "ZMSCORE z a c e f g",
        "ZINCRBY z 0.2 b",
        "ZADD z INCR 1e20 c",
        "ZRANGEBYSCORE z -inf +inf WITHSCORES",
        "ZPOPMIN z 2",
        "ZPOPMAX z",
        "ZMPOP 1 z MAX COUNT 2",
    ]);
}

/// Sorts the (member, score) pairs of a ZSCAN reply: a large set's order is its table's.
fn sort_scan_pairs(v: Val) -> Val {
    let mut top = v.as_array();
    let mut pairs: Vec<Vec<Val>> = top[1].as_array().chunks(2).map(<[Val]>::to_vec).collect();
    pairs.sort_by_key(|p| format!("{p:?}"));
    top[1] = Val::Array(pairs.into_iter().flatten().collect());
    Val::Array(top)
}

#[test]
fn zscan_scores_are_formatted_like_redis() {
    let adds = "ZADD z 1.5 a 0.1 b -0 d 3.0000000000000004 e 1e-5 h 123456789012345678 i 5e-324 k inf p -inf n 1e20 t";
    for args in [&[][..], &["--zset-max-listpack-entries", "0"][..]] {
        for proto in [2, 3] {
            let mut p = Pair::start(proto, args);
            p.same_line(adds);
            p.same_line("ZINCRBY z 0.2 b");
            p.same_normalized("ZSCAN z 0 COUNT 100", sort_scan_pairs);
        }
    }
}

#[test]
fn score_ranges_match_redis() {
    same_in_both_encodings(&[
        "ZADD z 1 a 2 b 3 c 4 d 5 e -inf ninf inf pinf 2 bb",
        "ZRANGEBYSCORE z 2 4",
        "ZRANGEBYSCORE z (2 4 WITHSCORES",
        "ZRANGEBYSCORE z 2 (4",
        "ZRANGEBYSCORE z (2 (2",
        "ZRANGEBYSCORE z 2 2",
        "ZRANGEBYSCORE z 4 2",
        "ZRANGEBYSCORE z -inf +inf",
        "ZRANGEBYSCORE z (-inf (+inf",
        "ZRANGEBYSCORE z -inf -inf",
        "ZRANGEBYSCORE z +inf +inf WITHSCORES",
        "ZRANGEBYSCORE z \"\" 3",
        "ZRANGEBYSCORE z ( 3",
        "ZRANGEBYSCORE z 1e400 +inf",
        "ZRANGEBYSCORE z -inf 0x2",
        "ZRANGEBYSCORE z a b",
        "ZRANGEBYSCORE z nan 1",
        "ZRANGEBYSCORE z 1 (nan",
        "ZRANGEBYSCORE z 1 2 foo",
        "ZRANGEBYSCORE z 1 2 LIMIT 0",
        "ZRANGEBYSCORE z -inf +inf LIMIT 1 2",
        "ZRANGEBYSCORE z -inf +inf LIMIT 1 -1",
        "ZRANGEBYSCORE z -inf +inf LIMIT 1 0",
        "ZRANGEBYSCORE z -inf +inf LIMIT -1 2",
        "ZRANGEBYSCORE z -inf +inf LIMIT 100 2",
        "ZRANGEBYSCORE z -inf +inf LIMIT 0 9223372036854775807",
        "ZRANGEBYSCORE z -inf +inf WITHSCORES LIMIT 2 3",
        "ZRANGEBYSCORE z -inf +inf LIMIT x 3",
        "ZREVRANGEBYSCORE z 4 2",
        "ZREVRANGEBYSCORE z 2 4",
        "ZREVRANGEBYSCORE z (4 (1 WITHSCORES LIMIT 1 2",
        "ZREVRANGEBYSCORE z +inf -inf LIMIT 0 3",
        "ZCOUNT z 2 4",
        "ZCOUNT z (2 (4",
        "ZCOUNT z -inf +inf",
        "ZCOUNT z 5 1",
        "ZCOUNT z x 1",
        "ZCOUNT nokey 0 1",
        "ZRANGEBYSCORE nokey 0 1",
    ]);
}

#[test]
fn lex_ranges_match_redis() {
    same_in_both_encodings(&[
        "ZADD z 0 a 0 b 0 c 0 d 0 e 0 aa 0 \"\" 0 a\0b 0 b\r\nx",
        "ZRANGEBYLEX z - +",
        "ZRANGEBYLEX z [a [c",
        "ZRANGEBYLEX z (a (c",
        "ZRANGEBYLEX z [aa +",
        "ZRANGEBYLEX z - (b",
        "ZRANGEBYLEX z [ +",
        "ZRANGEBYLEX z ( +",
        "ZRANGEBYLEX z + -",
        "ZRANGEBYLEX z - -",
        "ZRANGEBYLEX z [c [a",
        "ZRANGEBYLEX z [b [b",
        "ZRANGEBYLEX z (b [b",
        "ZRANGEBYLEX z - + LIMIT 2 3",
        "ZRANGEBYLEX z - + LIMIT 2 -1",
        "ZRANGEBYLEX z - + LIMIT -2 3",
        "ZRANGEBYLEX z a c",
        "ZRANGEBYLEX z [a c",
        "ZRANGEBYLEX z - + WITHSCORES",
        "ZREVRANGEBYLEX z + -",
        "ZREVRANGEBYLEX z [c (a",
        "ZREVRANGEBYLEX z + - LIMIT 1 2",
        "ZREVRANGEBYLEX z - +",
        "ZLEXCOUNT z - +",
        "ZLEXCOUNT z [a (c",
        "ZLEXCOUNT z x +",
        "ZLEXCOUNT nokey - +",
        "ZREMRANGEBYLEX z [a [aa",
        "ZREMRANGEBYLEX z x y",
        "ZRANGE z 0 -1",
        "ZREMRANGEBYLEX z - +",
        "EXISTS z",
    ]);
}

#[test]
fn zrange_forms_match_redis() {
    same_in_both_encodings(&[
        "ZADD z 1 a 2 b 3 c 4 d 5 e",
        "ZRANGE z 0 -1",
        "ZRANGE z 1 3 WITHSCORES",
        "ZRANGE z -2 -1",
        "ZRANGE z -100 100",
        "ZRANGE z 3 1",
        "ZRANGE z 5 10",
        "ZRANGE z 0 -1 REV",
        "ZRANGE z 0 1 REV WITHSCORES",
        "ZRANGE z -9223372036854775808 9223372036854775807",
        "ZRANGE z x 1",
        "ZRANGE z 0 1 LIMIT 0 1",
        "ZRANGE z 0 1 LIMIT 0 -1",
        "ZRANGE z 0 -1 WITHSCORES WITHSCORES",
        "ZRANGE z 2 4 BYSCORE",
        "ZRANGE z 4 2 BYSCORE REV WITHSCORES",
        "ZRANGE z (1 +inf BYSCORE LIMIT 1 2",
        "ZRANGE z +inf (1 BYSCORE REV LIMIT 0 -1 WITHSCORES",
        "ZRANGE z - + BYLEX",
        "ZRANGE z + - BYLEX REV LIMIT 1 1",
        "ZRANGE z - + BYLEX WITHSCORES",
        "ZRANGE z 0 -1 BYLEX",
        "ZRANGE z 0 -1 BYSCORE BYLEX",
        "ZRANGE z 0 -1 BYSCORE BYSCORE",
        "ZRANGE z 0 -1 REV REV",
        "ZRANGE z 0 -1 LIMIT 1",
        "ZRANGE z 0 -1 foo",
        "ZRANGE nokey 0 -1",
        "ZREVRANGE z 0 1",
        "ZREVRANGE z 0 -1 WITHSCORES",
        "ZREVRANGE z 0 1 REV",
        "ZREVRANGE z 0 1 BYSCORE",
        "ZREVRANGE z 0 1 LIMIT 0 1",
        "ZRANGESTORE d z 1 3",
        "ZRANGE d 0 -1 WITHSCORES",
        "ZRANGESTORE d z 4 2 BYSCORE REV LIMIT 1 5",
        "ZRANGE d 0 -1 WITHSCORES",
        "ZRANGESTORE d z [a [c BYLEX",
        "ZRANGESTORE d z 10 20",
        "EXISTS d",
        "ZRANGESTORE d nokey 0 -1",
        "ZRANGESTORE d z 0 -1 WITHSCORES",
        "ZRANGESTORE d z 0",
        "SET str x",
        "ZRANGESTORE str z 0 0",
        "TYPE str",
    ]);
}

#[test]
fn remrange_and_pops_match_redis() {
    same_in_both_encodings(&[
        "ZADD z 1 a 2 b 3 c 4 d 5 e 6 f 7 g",
        "ZREMRANGEBYRANK z 0 0",
        "ZREMRANGEBYRANK z -1 -1",
        "ZREMRANGEBYRANK z 5 1",
        "ZREMRANGEBYRANK z x 1",
        "ZREMRANGEBYSCORE z (2 3",
        "ZREMRANGEBYSCORE z a 3",
        "ZREMRANGEBYSCORE nokey 0 1",
        "ZRANGE z 0 -1 WITHSCORES",
        "ZADD z 10 h 11 i 12 j",
        "ZPOPMIN z",
        "ZPOPMAX z",
        "ZPOPMIN z 2",
        "ZPOPMAX z 1",
        "ZPOPMIN z 0",
        "ZPOPMIN z -1",
        "ZPOPMIN z x",
        "ZPOPMIN z 1 2",
        "ZPOPMIN nokey",
        "ZPOPMIN nokey 3",
        "ZPOPMAX z 100",
        "EXISTS z",
        "ZADD z 1 a 2 b 3 c",
        "ZMPOP 1 z MIN",
        "ZMPOP 2 nokey z MAX COUNT 5",
        "ZMPOP 1 z MIN",
        "ZMPOP 0 z MIN",
        "ZMPOP x z MIN",
        "ZMPOP 2 z MIN",
        "ZMPOP 1 z foo",
        "ZMPOP 1 z MIN COUNT 0",
        "ZMPOP 1 z MIN COUNT x",
        "ZMPOP 1 z MIN COUNT 1 COUNT 1",
        "ZMPOP 1 z MIN foo",
        "ZMPOP 9223372036854775807 z MIN",
        "SET s x",
        "ZMPOP 2 nokey s MIN",
        "BZPOPMIN nokey s 0",
        "BZMPOP 0 2 s nokey MAX",
    ]);
}

#[test]
fn set_operations_match_redis() {
    same_in_both_encodings(&[
        "ZADD a 1 x 2 y 3 z",
        "ZADD b 10 y 20 z 30 w",
        "ZADD c inf x -inf y",
        "ZUNION 2 a b",
        "ZUNION 2 a b WITHSCORES",
        "ZUNION 2 a b WEIGHTS 2 0.5 WITHSCORES",
        "ZUNION 2 a b AGGREGATE MIN WITHSCORES",
        "ZUNION 2 a b AGGREGATE max WITHSCORES",
        "ZUNION 3 a b nokey WITHSCORES",
        "ZUNION 2 a c WITHSCORES",
        "ZUNION 2 c c WEIGHTS 1 -1 WITHSCORES",
        "ZUNION 2 a c WEIGHTS 0 1 WITHSCORES",
        "ZINTER 2 a b WITHSCORES",
        "ZINTER 2 a b WEIGHTS 1 -1 AGGREGATE MAX WITHSCORES",
        "ZINTER 3 a b c WITHSCORES",
        "ZINTER 2 a nokey",
        "ZDIFF 2 a b WITHSCORES",
        "ZDIFF 1 a",
        "ZDIFF 2 nokey a",
        "ZDIFF 3 b a c WITHSCORES",
        "ZUNIONSTORE d 2 a b WEIGHTS 1 2",
        "ZRANGE d 0 -1 WITHSCORES",
        "ZINTERSTORE d 2 a b AGGREGATE MIN",
        "ZRANGE d 0 -1 WITHSCORES",
        "ZDIFFSTORE d 2 a b",
        "ZRANGE d 0 -1 WITHSCORES",
        "ZINTERSTORE d 2 a nokey",
        "EXISTS d",
        "ZINTERCARD 2 a b",
        "ZINTERCARD 2 a b LIMIT 1",
        "ZINTERCARD 2 a b LIMIT 0",
        "ZINTERCARD 1 a LIMIT 2",
        "ZINTERCARD 2 a nokey",
        "ZINTERCARD 0 a",
        "ZINTERCARD -1 a",
        "ZINTERCARD x a",
        "ZINTERCARD 2 a",
        "ZINTERCARD 1 a LIMIT -1",
        "ZINTERCARD 1 a LIMIT x",
        "ZINTERCARD 1 a LIMIT",
        "ZINTERCARD 1 a foo",
        "ZINTERCARD 1 a WITHSCORES",
        "ZUNIONSTORE d 0 a",
        "ZUNIONSTORE d -1 a",
        "ZUNIONSTORE d 3 a",
        "ZUNIONSTORE d x a",
        "ZUNION 0 a",
        "ZUNION 1 a WEIGHTS",
        "ZUNION 1 a WEIGHTS x",
        "ZUNION 1 a WEIGHTS nan",
        "ZUNION 1 a WEIGHTS 1 2",
        "ZUNION 1 a AGGREGATE foo",
        "ZUNION 1 a AGGREGATE",
        "ZUNIONSTORE d 1 a WITHSCORES",
        "ZDIFF 1 a WEIGHTS 1",
        "ZDIFF 1 a AGGREGATE SUM",
        "ZINTER 0 a",
        "ZDIFFSTORE d 0 a",
        "SET s x",
        "ZUNION 2 a s",
        "ZUNION 2 a s WEIGHTS x",
        "ZINTERCARD 2 a s",
        "ZUNIONSTORE s 1 a",
        "TYPE s",
    ]);
}

#[test]
fn plain_sets_count_as_score_one() {
    same_as_valkey(&[
        "SADD s x y q",
        "ZADD a 5 x 2 y",
        "ZUNION 2 a s WITHSCORES",
        "ZINTER 2 a s WEIGHTS 1 10 WITHSCORES",
        "ZDIFF 2 s a WITHSCORES",
        "ZINTERCARD 2 s a",
        "ZUNIONSTORE d 1 s",
        "ZRANGE d 0 -1 WITHSCORES",
    ]);
}

#[test]
fn zscan_matches_redis_on_small_sets() {
    same_as_valkey(&[
        "ZADD z 1 a 2 b 3 ab 0.5 c",
        "ZSCAN z 0",
        "ZSCAN z 0 MATCH a*",
        "ZSCAN z 0 COUNT 1",
        "ZSCAN z 0 MATCH * COUNT 100",
        "ZSCAN z x",
        "ZSCAN z 0 COUNT 0",
        "ZSCAN z 0 COUNT x",
        "ZSCAN z 0 MATCH",
        "ZSCAN z 0 foo bar",
        "ZSCAN nokey 0",
        "ZSCAN nokey 0 COUNT 0",
        "SET s x",
        "ZSCAN s 0",
    ]);
}

#[test]
fn zscan_walks_a_large_set_completely() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for i in 0..1000 {
        c.cmd(&["ZADD", "z", &i.to_string(), &format!("m{i}")]);
    }
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "z"]), bulk("skiplist"));
    let mut cursor = "0".to_string();
    let mut seen = HashSet::new();
    let mut calls = 0;
    loop {
        let r = c.cmd(&["ZSCAN", "z", &cursor, "COUNT", "50"]).as_array();
        cursor = r[0].as_str();
        let items = r[1].as_array();
        for pair in items.chunks(2) {
            let (m, s) = (pair[0].as_str(), pair[1].as_str());
            assert_eq!(format!("m{s}"), m);
            seen.insert(m);
        }
        calls += 1;
        if cursor == "0" {
            break;
        }
        assert!(calls < 1000);
    }
    assert_eq!(seen.len(), 1000);
    assert!(calls > 2, "COUNT bounds each call");
}

#[test]
fn zrandmember_errors_match_redis() {
    same_as_valkey(&[
        "ZADD z 1 a",
        "ZRANDMEMBER z",
        "ZRANDMEMBER z 1",
        "ZRANDMEMBER z -3 WITHSCORES",
        "ZRANDMEMBER z 5 WITHSCORES",
        "ZRANDMEMBER z 0",
        "ZRANDMEMBER z x",
        "ZRANDMEMBER z -9223372036854775808",
        "ZRANDMEMBER z 9223372036854775807 WITHSCORES",
        "ZRANDMEMBER z -9223372036854775807 WITHSCORES",
        "ZRANDMEMBER z 4611686018427387904 WITHSCORES",
        "ZRANDMEMBER z 1 foo",
        "ZRANDMEMBER z 1 WITHSCORES x",
        "ZRANDMEMBER nokey",
        "ZRANDMEMBER nokey 5",
        "ZRANDMEMBER nokey -5 WITHSCORES",
    ]);
}

/// Checks ZRANDMEMBER's replies by their properties on a set of `n` members `m<i>` with
/// score `i`.
fn zrandmember_properties(c: &mut Client, n: usize) {
    let all: HashSet<String> = (0..n).map(|i| format!("m{i}")).collect();
    // Positive count: distinct members, min(count, n) of them.
    for count in [1, 2, n / 2, n - 1, n, n + 5] {
        let r = c.cmd(&["ZRANDMEMBER", "z", &count.to_string()]).as_array();
        let got: HashSet<String> = r.iter().map(Val::as_str).collect();
        assert_eq!(r.len(), count.min(n));
        assert_eq!(got.len(), r.len(), "distinct for count {count}");
        assert!(got.is_subset(&all));
    }
    // Negative count: exactly |count|, repetitions allowed, all members reachable.
    let r = c.cmd(&["ZRANDMEMBER", "z", &format!("-{}", n * 40)]).as_array();
    assert_eq!(r.len(), n * 40);
    let got: HashSet<String> = r.iter().map(Val::as_str).collect();
    assert_eq!(got, all, "every member drawn at least once in 40n draws");
    // WITHSCORES pairs each member with its score.
    let r = c.cmd(&["ZRANDMEMBER", "z", "-20", "WITHSCORES"]).as_array();
    assert_eq!(r.len(), 40);
    for pair in r.chunks(2) {
        assert_eq!(pair[0].as_str(), format!("m{}", pair[1].as_str()));
    }
    // No count: one member.
    assert!(all.contains(&c.cmd(&["ZRANDMEMBER", "z"]).as_str()));
}

#[test]
fn zrandmember_has_its_properties_in_both_encodings() {
    for (n, encoding) in [(20usize, "listpack"), (300, "skiplist")] {
        let s = start(&[]);
        let mut c = Client::connect(s.port);
        for i in 0..n {
            c.cmd(&["ZADD", "z", &i.to_string(), &format!("m{i}")]);
        }
        assert_eq!(c.cmd(&["OBJECT", "ENCODING", "z"]), bulk(encoding));
        zrandmember_properties(&mut c, n);
        // RESP3 WITHSCORES: [member, score] pairs.
        c.cmd(&["HELLO", "3"]);
        let r = c.cmd(&["ZRANDMEMBER", "z", "3", "WITHSCORES"]).as_array();
        assert_eq!(r.len(), 3);
        for pair in r {
            let p = pair.as_array();
            assert_eq!(p.len(), 2);
        }
    }
}

#[test]
fn encoding_follows_the_thresholds() {
    let mut p = Pair::start(2, &[]);
    p.same_lines(&[
        "CONFIG SET zset-max-listpack-entries 4",
        "CONFIG SET zset-max-listpack-value 8",
        "ZADD z 1 a 2 b 3 c 4 d",
        "OBJECT ENCODING z",
        "ZADD z 5 e",
        "OBJECT ENCODING z",
        "ZREM z a b c d",
        "OBJECT ENCODING z",
        "ZADD v 1 aaaaaaaa",
        "OBJECT ENCODING v",
        "ZADD v 1 aaaaaaaaa",
        "OBJECT ENCODING v",
        "ZADD big 1 a 2 b 3 c 4 d 5 e",
        "OBJECT ENCODING big",
        "ZUNIONSTORE small 1 big",
        "OBJECT ENCODING small",
        "ZRANGESTORE small z 0 0",
        "OBJECT ENCODING small",
        "ZADD w 1 a",
        "CONFIG SET zset-max-listpack-entries 0",
        "OBJECT ENCODING w",
        "ZADD w 2 b",
        "OBJECT ENCODING w",
        "ZADD x 1 a",
        "OBJECT ENCODING x",
        "CONFIG SET zset-max-listpack-entries 128",
        "ZINCRBY y 1 a",
        "OBJECT ENCODING y",
    ]);
}

#[test]
fn binary_members_round_trip() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for cfg in ["128", "0"] {
        c.cmd(&["CONFIG", "SET", "zset-max-listpack-entries", cfg]);
        c.cmd(&["DEL", "z"]);
        let members: [&[u8]; 4] = [b"a\0b", b"\r\n", b"", b"\xff\x00"];
        for (i, m) in members.iter().enumerate() {
            assert_eq!(c.cmd_b(&[b"ZADD", b"z", i.to_string().as_bytes(), m]), int(1));
        }
        for (i, m) in members.iter().enumerate() {
            assert_eq!(c.cmd_b(&[b"ZSCORE", b"z", m]), Val::Bulk(i.to_string().into_bytes()));
            assert_eq!(c.cmd_b(&[b"ZRANK", b"z", m]), int(i as i64));
        }
        let r = c.cmd(&["ZRANGE", "z", "0", "-1"]);
        assert_eq!(r, Val::Array(members.iter().map(|m| Val::Bulk(m.to_vec())).collect()));
        assert_eq!(c.cmd_b(&[b"ZREM", b"z", b"a\0b", b"a"]), int(1));
    }
}

/// ZRANK/ZREVRANK WITHSCORE are Valkey 7.2+ (redis 7.0 refuses the extra argument).
#[test]
fn zrank_withscore_as_valkey() {
    for args in [&[][..], &["--zset-max-listpack-entries", "0"][..]] {
        let s = start(args);
        let mut c = Client::connect(s.port);
        c.cmd(&["ZADD", "z", "1.5", "a", "2", "b", "3", "c"]);
        let both = |r: i64, s: &str| Val::Array(vec![int(r), bulk(s)]);
        assert_eq!(c.cmd(&["ZRANK", "z", "b", "WITHSCORE"]), both(1, "2"));
        assert_eq!(c.cmd(&["ZREVRANK", "z", "a", "withscore"]), both(2, "1.5"));
        assert_eq!(c.cmd(&["ZRANK", "z", "nosuch", "WITHSCORE"]), Val::NilArray);
        assert_eq!(c.cmd(&["ZRANK", "nokey", "a", "WITHSCORE"]), Val::NilArray);
        assert_eq!(c.cmd(&["ZRANK", "z", "a", "foo"]), err("ERR syntax error"));
        let arity = err("ERR wrong number of arguments for 'zrank' command");
        assert_eq!(c.cmd(&["ZRANK", "z", "a", "WITHSCORE", "x"]), arity);
        c.cmd(&["HELLO", "3"]);
        assert_eq!(c.cmd_raw(&["ZRANK", "z", "c", "WITHSCORE"]), b"*2\r\n:2\r\n,3\r\n");
        assert_eq!(c.cmd_raw(&["ZRANK", "z", "x", "WITHSCORE"]), b"_\r\n");
    }
}

#[test]
fn blocking_timeout_errors_match_redis() {
    same_as_valkey(&[
        "BZPOPMIN z -1",
        "BZPOPMIN z x",
        "BZPOPMIN z nan",
        "BZPOPMIN z \"\"",
        "BZMPOP 0 0 z MIN",
        "BZMPOP x 1 z MIN",
        "BZMPOP -1 1 z MIN",
        "BZMPOP 0 1 z foo",
        "BZMPOP 0 1 z MIN COUNT 0",
        "ZADD z 1 a 2 b 3 c",
        "BZPOPMIN z 0",
        "BZPOPMAX nokey z 0.5",
        "BZMPOP 0 2 nokey z MIN COUNT 5",
    ]);
}

/// Valkey refuses a timeout past the millisecond range ("timeout is out of range"); redis
/// 7.0 converted it to a negative number and said "timeout is negative".
#[test]
fn huge_timeouts_are_out_of_range_as_valkey() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for t in ["inf", "1e400", "9223372036854775807"] {
        assert_eq!(c.cmd(&["BZPOPMIN", "z", t]), err("ERR timeout is out of range"));
    }
    assert_eq!(c.cmd(&["BZPOPMIN", "z", "-inf"]), err("ERR timeout is negative"));
}

#[test]
fn zadd_wakes_a_blocked_bzpopmin() {
    let s = start(&[]);
    let mut blocked = Client::connect(s.port);
    let mut writer = Client::connect(s.port);
    blocked.send(&[b"BZPOPMIN", b"z1", b"z2", b"0"]);
    // The blocked client is registered once INFO counts it.
    let deadline = Instant::now() + Duration::from_secs(5);
    while common::info_int(&mut writer, "clients", "blocked_clients") != 1 {
        assert!(Instant::now() < deadline, "client never blocked");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(writer.cmd(&["ZADD", "z2", "5", "m", "7", "n"]), int(2));
    assert_eq!(blocked.read(), Val::Array(vec![bulk("z2"), bulk("m"), bulk("5")]));
    assert_eq!(writer.cmd(&["ZRANGE", "z2", "0", "-1"]), Val::Array(vec![bulk("n")]));
    // BZMPOP with a count, woken by a *STORE.
    blocked.send(&[b"BZMPOP", b"0", b"1", b"dst", b"MAX", b"COUNT", b"2"]);
    let deadline = Instant::now() + Duration::from_secs(5);
    while common::info_int(&mut writer, "clients", "blocked_clients") != 1 {
        assert!(Instant::now() < deadline, "client never blocked");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(writer.cmd(&["ZUNIONSTORE", "dst", "1", "z2"]), int(1));
    let pair = Val::Array(vec![bulk("n"), bulk("7")]);
    assert_eq!(blocked.read(), Val::Array(vec![bulk("dst"), Val::Array(vec![pair])]));
    assert_eq!(writer.cmd(&["EXISTS", "dst"]), int(0));
}

#[test]
fn bzpopmin_times_out_with_a_null_array() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let t0 = Instant::now();
    assert_eq!(c.cmd_raw(&["BZPOPMIN", "z", "0.1"]), b"*-1\r\n");
    assert!(t0.elapsed() >= Duration::from_millis(90));
    c.cmd(&["HELLO", "3"]);
    assert_eq!(c.cmd_raw(&["BZMPOP", "0.05", "1", "z", "MIN"]), b"_\r\n");
    // Still usable afterwards.
    assert_eq!(c.cmd(&["ZADD", "z", "1", "a"]), int(1));
}

/// Arity, flags, ACL categories and key specs as redis 7.0 declares them (ZRANK and
/// ZREVRANK take WITHSCORE since Valkey 7.2, so their arity is -3: checked alone).
#[test]
fn command_info_matches_redis() {
    let names = "zadd zincrby zrem zcard zcount zlexcount zscore zmscore zrange zrangestore \
        zrevrange zrangebyscore zrevrangebyscore zrangebylex zrevrangebylex zremrangebyrank \
        zremrangebyscore zremrangebylex zpopmin zpopmax zmpop zrandmember zunion zinter zdiff \
        zunionstore zinterstore zdiffstore zintercard zscan bzpopmin bzpopmax bzmpop";
    for proto in [2, 3] {
        let mut p = Pair::start(proto, &[]);
        for name in names.split_whitespace() {
            p.same_line(&format!("COMMAND INFO {name}"));
            p.same_line(&format!("COMMAND GETKEYS {}", getkeys_example(name)));
        }
    }
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let info = c.cmd(&["COMMAND", "INFO", "zrank"]).as_array()[0].as_array();
    assert_eq!(info[1], int(-3));
}

/// A valid call of `name`, for COMMAND GETKEYS.
fn getkeys_example(name: &str) -> String {
    match name {
        "zmpop" => "zmpop 2 a b MIN".into(),
        "bzmpop" => "bzmpop 0 2 a b MIN".into(),
        "zunion" | "zinter" | "zdiff" | "zintercard" => format!("{name} 2 a b"),
        "zunionstore" | "zinterstore" | "zdiffstore" => format!("{name} d 2 a b"),
        "zrangestore" => "zrangestore d s 0 1".into(),
        "bzpopmin" | "bzpopmax" => format!("{name} a b 0"),
        _ => "zadd k 1 m".into(),
    }
}

#[test]
fn zrandmember_huge_negative_count_stops_at_the_output_limit() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0"]),
        Val::ok()
    );
    c.cmd(&["ZADD", "z", "1", "a", "2", "b"]);
    for extra in [&[][..], &["WITHSCORES"][..]] {
        let mut victim = Client::connect(s.port);
        let mut argv = vec!["ZRANDMEMBER", "z", "-4611686018427387903"];
        argv.extend_from_slice(extra);
        victim.send(&argv.iter().map(|a| a.as_bytes()).collect::<Vec<_>>());
        assert!(victim.is_closed(), "{extra:?}: the client is disconnected");
    }
    assert_eq!(c.cmd(&["ZCARD", "z"]), int(2));
}
