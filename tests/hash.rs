//! Hash commands over TCP: differential checks of every command against a real redis-server
//! 7.0 (RESP2 and RESP3, errors, binary fields, WRONGTYPE), OBJECT ENCODING on both sides of
//! each conversion threshold (default and CONFIG SET), HRANDFIELD checked by its properties
//! (it is random), HSCAN's coverage of a large hash, and the output-limit cut-off of a
//! repeating HRANDFIELD.
//!
//! Replies of a listpack hash are in insertion order on both servers, so they are compared
//! byte for byte. A hashtable's order is its own on each server: those replies are compared
//! after sorting their pairs ([`pairs_sorted`]).

mod common;
#[path = "hash/ttl.rs"]
mod ttl;

use std::collections::{HashMap, HashSet};

use common::diff::{same_as_valkey, words, Pair};
use common::{bulk, int, start, Client, Val};

// ---------------------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------------------

/// Sorts an unordered reply: a map's pairs, a flat array of field/value pairs (when `flat`),
/// an array of items, or the items array of a scan reply; recursively.
fn sort_val(v: Val, flat_pairs: bool) -> Val {
    let key = |v: &Val| format!("{v:?}");
    match v {
        Val::Map(mut pairs) => {
            pairs.sort_by_key(|(k, v)| (key(k), key(v)));
            Val::Map(pairs)
        }
        Val::Array(items) if flat_pairs && items.len().is_multiple_of(2) => {
            let mut pairs: Vec<Vec<Val>> = items.chunks(2).map(<[Val]>::to_vec).collect();
            pairs.sort_by_key(|p| format!("{p:?}"));
            Val::Array(pairs.concat())
        }
        Val::Array(mut items) => {
            items.sort_by_key(key);
            Val::Array(items)
        }
        other => other,
    }
}

/// Normalizer for replies made of field/value pairs (HGETALL, HRANDFIELD WITHVALUES).
fn pairs_sorted(v: Val) -> Val {
    sort_val(v, true)
}

/// Normalizer for arrays of single items (HKEYS, HVALS).
fn items_sorted(v: Val) -> Val {
    sort_val(v, false)
}

/// `HSET key f0 v0 ... f<n-1> v<n-1>` as words, with `value(i)`.
fn hset_words(key: &str, n: usize, value: impl Fn(usize) -> String) -> Vec<String> {
    let mut w = vec!["HSET".to_string(), key.to_string()];
    for i in 0..n {
        w.push(format!("f{i}"));
        w.push(value(i));
    }
    w
}

fn both_protocols(args: &[&str], f: impl Fn(&mut Pair)) {
    for proto in [2u8, 3] {
        let mut p = Pair::start(proto, args);
        f(&mut p);
    }
}

// ---------------------------------------------------------------------------------------
// Differential: every command, small (listpack) hashes, errors.
// ---------------------------------------------------------------------------------------

#[test]
fn differential_set_get_and_friends() {
    same_as_valkey(&[
        "HSET h a 1",
        "HSET h a 2 b 3 c 4",
        "HSET h a",
        "HSET h a 1 b",
        "HSET h",
        "HMSET h d 5 e 6",
        "HMSET h d",
        "HMSET h",
        "HSETNX h a 100",
        "HSETNX h n 100",
        "HSETNX h n",
        "HGET h a",
        "HGET h nosuch",
        "HGET nokey a",
        "HGET h",
        "HMGET h a nosuch b c",
        "HMGET nokey a b",
        "HMGET h",
        "HLEN h",
        "HLEN nokey",
        "HSTRLEN h a",
        "HSTRLEN h nosuch",
        "HSTRLEN nokey a",
        "HEXISTS h a",
        "HEXISTS h nosuch",
        "HEXISTS nokey a",
        "HKEYS h",
        "HVALS h",
        "HGETALL h",
        "HKEYS nokey",
        "HVALS nokey",
        "HGETALL nokey",
        "HGETALL h extra",
        "HDEL h a nosuch b a",
        "HGETALL h",
        "HDEL h",
        "HDEL nokey a",
        "HDEL h c d e n",
        "EXISTS h",
        "HLEN h",
        "hset H f v",
        "hmset H g w",
        "OBJECT ENCODING H",
        "TYPE H",
    ]);
}

#[test]
fn differential_wrongtype() {
    same_as_valkey(&[
        "SET s text",
        "RPUSH l x",
        "HSET s a 1",
        "HSET s a",
        "HMSET s a 1",
        "HSETNX s a 1",
        "HGET s a",
        "HMGET s a",
        "HDEL s a",
        "HLEN s",
        "HSTRLEN s a",
        "HEXISTS s a",
        "HKEYS s",
        "HVALS s",
        "HGETALL l",
        "HINCRBY s a 1",
        "HINCRBY s a x",
        "HINCRBYFLOAT s a 1",
        "HINCRBYFLOAT s a x",
        "HRANDFIELD s",
        "HRANDFIELD s 2",
        "HRANDFIELD s 0",
        "HRANDFIELD s -2 WITHVALUES",
        "HRANDFIELD s x",
        "HSCAN s 0",
        "HSCAN s x",
        "HSCAN s 0 COUNT 0",
        "GET s",
        "HSET h a 1",
        "GET h",
        "INCR h",
        "LPUSH h x",
    ]);
}

#[test]
fn differential_binary_fields_and_values() {
    let cases: &[&[&[u8]]] = &[
        &[b"HSET", b"b\0in", b"f\0", b"\0\r\n", b"\r\n", b"\0", b"", b"empty-field", b"e", b""],
        &[b"HGET", b"b\0in", b"f\0"],
        &[b"HGET", b"b\0in", b"\r\n"],
        &[b"HGET", b"b\0in", b""],
        &[b"HGET", b"b\0in", b"e"],
        &[b"HSTRLEN", b"b\0in", b"f\0"],
        &[b"HEXISTS", b"b\0in", b""],
        &[b"HMGET", b"b\0in", b"f", b"f\0", b""],
        &[b"HGETALL", b"b\0in"],
        &[b"HSCAN", b"b\0in", b"0"],
        &[b"HSCAN", b"b\0in", b"0", b"MATCH", b"*"],
        &[b"HSCAN", b"b\0in", b"0", b"MATCH", b"**"],
        &[b"HSCAN", b"b\0in", b"0", b"MATCH", b"f?"],
        &[b"HRANDFIELD", b"b\0in", b"10", b"WITHVALUES"],
        &[b"HDEL", b"b\0in", b"f", b"f\0"],
        &[b"HKEYS", b"b\0in"],
        // Numbers in every form a listpack might store as an integer, or must not.
        &[
            b"HSET",
            b"n",
            b"0",
            b"0",
            b"-1",
            b"-1",
            b"007",
            b"007",
            b"-0",
            b"-0",
            b"1.5",
            b"1.5",
            b"9223372036854775807",
            b"9223372036854775807",
            b"9223372036854775808",
            b"9223372036854775808",
            b"-9223372036854775808",
            b"-9223372036854775808",
            b"+1",
            b"+1",
            b" 1",
            b" 1",
        ],
        &[b"HGETALL", b"n"],
        &[b"HSTRLEN", b"n", b"-9223372036854775808"],
        &[b"HGET", b"n", b"007"],
        &[b"HGET", b"n", b"7"],
        &[b"HEXISTS", b"n", b"0"],
        &[b"HINCRBY", b"n", b"0", b"1"],
        &[b"HINCRBY", b"n", b"007", b"1"],
        &[b"HINCRBY", b"n", b"-0", b"1"],
        &[b"HINCRBY", b"n", b"+1", b"1"],
        &[b"HINCRBY", b"n", b" 1", b"1"],
        &[b"HINCRBYFLOAT", b"n", b"007", b"1"],
        &[b"HINCRBYFLOAT", b"n", b" 1", b"1"],
        &[b"HINCRBYFLOAT", b"n", b"+1", b"1"],
        &[b"HGETALL", b"n"],
        &[b"OBJECT", b"ENCODING", b"n"],
    ];
    both_protocols(&[], |p| {
        for cmd in cases {
            p.same(cmd);
        }
    });
}

#[test]
fn differential_hincrby() {
    same_as_valkey(&[
        "HINCRBY h a 5",
        "HINCRBY h a -15",
        "HINCRBY h a 9223372036854775807",
        "HINCRBY h b 9223372036854775807",
        "HINCRBY h b 1",
        "HINCRBY h b -9223372036854775807",
        "HINCRBY h b -1",
        "HINCRBY h b -1",
        "HINCRBY h b -1",
        "HINCRBY h b 9223372036854775807",
        "HINCRBY h b 0",
        "HINCRBY h a 9223372036854775808",
        "HINCRBY h a 1.5",
        "HINCRBY h a x",
        "HINCRBY h a \"\"",
        "HINCRBY h a",
        "HSET h s text f 1.5 e \"\"",
        "HINCRBY h s 1",
        "HINCRBY h f 1",
        "HINCRBY h e 1",
        "HINCRBY nokey a x",
        "EXISTS nokey",
        "HINCRBY new a -3",
        "HGETALL h",
        "HGETALL new",
        "OBJECT ENCODING h",
    ]);
}

#[test]
fn differential_hincrbyfloat() {
    same_as_valkey(&[
        "HINCRBYFLOAT h f 10.5",
        "HINCRBYFLOAT h f 0.1",
        "HINCRBYFLOAT h f -5",
        "HSET h g 5.0e3 i 1.1 big 9223372036854775807 txt abc e \"\"",
        "HINCRBYFLOAT h g 2.0e2",
        "HINCRBYFLOAT h i 2.2",
        "HINCRBYFLOAT h big 1",
        "HINCRBYFLOAT h big 0.5",
        "HINCRBYFLOAT h f 1e300",
        "HINCRBYFLOAT h f -1e300",
        "HINCRBYFLOAT h z 0x1.8p-1",
        "HINCRBYFLOAT h z -0.0",
        "HINCRBYFLOAT h y 1e4932",
        "HINCRBYFLOAT h y 1e4932",
        "HINCRBYFLOAT h txt 1",
        "HINCRBYFLOAT h e 1",
        "HINCRBYFLOAT h f inf",
        "HINCRBYFLOAT h f -infinity",
        "HINCRBYFLOAT nokey f inf",
        "EXISTS nokey",
        "HINCRBYFLOAT h f nan",
        "HINCRBYFLOAT h f abc",
        "HINCRBYFLOAT h f 1e",
        "HINCRBYFLOAT h f \"\"",
        "HINCRBYFLOAT h f 1.5\0x",
        "HINCRBYFLOAT h f",
        "OBJECT ENCODING h",
        "HMGET h f g i big txt e z y",
        "HINCRBYFLOAT small f 1.5",
        "HINCRBYFLOAT small g 2",
        "HINCRBYFLOAT small g 0.5",
        "HGETALL small",
        "OBJECT ENCODING small",
        // A result longer than hash-max-listpack-value converts the hash.
        "HINCRBYFLOAT h2 f 1e100",
        "OBJECT ENCODING h2",
        "HGET h2 f",
    ]);
}

#[test]
fn differential_hrandfield_deterministic_cases() {
    same_as_valkey(&[
        "HRANDFIELD nokey",
        "HRANDFIELD nokey 5",
        "HRANDFIELD nokey -5 WITHVALUES",
        "HRANDFIELD nokey 0",
        "HRANDFIELD nokey x",
        "HRANDFIELD nokey 1 withvalue",
        "HSET h a 1 b 2 c 3",
        // A count of at least the size gives the whole hash in order.
        "HRANDFIELD h 3",
        "HRANDFIELD h 100",
        "HRANDFIELD h 100 WITHVALUES",
        "HRANDFIELD h 100 withvalues",
        "HRANDFIELD h 0",
        "HRANDFIELD h 0 WITHVALUES",
        "HRANDFIELD h -0",
        "HRANDFIELD h 1 WITHVALUES extra",
        "HRANDFIELD h 1 VALUES",
        "HRANDFIELD h 1.5",
        "HRANDFIELD h -9223372036854775808",
        "HRANDFIELD h -9223372036854775808 WITHVALUES",
        "HRANDFIELD h 9223372036854775807 WITHVALUES",
        "HRANDFIELD h -9223372036854775807 WITHVALUES",
        "HRANDFIELD h 4611686018427387904 WITHVALUES",
        "HRANDFIELD h -4611686018427387904 WITHVALUES",
        "HRANDFIELD h 4611686018427387903 WITHVALUES",
        "HRANDFIELD h 9223372036854775807",
        "HSET one only 1",
        "HRANDFIELD one",
        "HRANDFIELD one 1",
        "HRANDFIELD one -3",
        "HRANDFIELD one -3 WITHVALUES",
        "HRANDFIELD one 1 WITHVALUES",
    ]);
}

#[test]
fn differential_hscan_small_and_errors() {
    same_as_valkey(&[
        "HSCAN nokey 0",
        "HSCAN nokey 0 COUNT 0",
        "HSCAN nokey 0 BADOPTION",
        "HSCAN nokey x",
        "HSET h a 1 b 2 ab 3 ba 4 10 x",
        "HSCAN h 0",
        "HSCAN h 12345",
        "HSCAN h 0 COUNT 1",
        "HSCAN h 0 MATCH a*",
        "HSCAN h 0 MATCH *a COUNT 100",
        "HSCAN h 0 MATCH 1*",
        "HSCAN h 0 match [ab] count 2",
        "HSCAN h 0 COUNT 0",
        "HSCAN h 0 COUNT -1",
        "HSCAN h 0 COUNT x",
        "HSCAN h 0 MATCH",
        "HSCAN h 0 TYPE hash",
        "HSCAN h 0 NOVALUES",
        "HSCAN h -1",
        "HSCAN h 18446744073709551616",
        "HSCAN h \"\"",
        "HSCAN h",
    ]);
}

// ---------------------------------------------------------------------------------------
// Differential: encodings and conversion thresholds.
// ---------------------------------------------------------------------------------------

/// Sends `HSET key f0 v0 ...` to both servers; the replies must match.
fn hset_both(p: &mut Pair, key: &str, n: usize, value: impl Fn(usize) -> String) {
    let w = hset_words(key, n, value);
    p.same(&w);
}

#[test]
fn differential_encoding_by_entry_count() {
    both_protocols(&[], |p| {
        // 512 fields (the default limit) stay a listpack; the 513th converts.
        hset_both(p, "h", 512, |i| format!("v{i}"));
        p.same_lines(&["OBJECT ENCODING h", "HLEN h", "HGET h f511", "HRANDFIELD h 600"]);
        p.same_lines(&[
            "HSET h f0 again",
            "OBJECT ENCODING h",
            "HSET h f512 v",
            "OBJECT ENCODING h",
        ]);
        p.same_lines(&["HLEN h", "HGET h f512", "HGET h f0", "HMGET h f1 f600 f512"]);
        p.same_normalized("HGETALL h", pairs_sorted);
        p.same_normalized("HKEYS h", items_sorted);
        p.same_normalized("HVALS h", items_sorted);
        p.same_normalized("HRANDFIELD h 1000 WITHVALUES", pairs_sorted);
        // Never back: delete down to one field.
        let mut del = vec!["HDEL".to_string(), "h".to_string()];
        del.extend((1..=512).map(|i| format!("f{i}")));
        p.same(&del);
        p.same_lines(&["HGETALL h", "OBJECT ENCODING h", "HDEL h f0", "EXISTS h"]);
        // HMSET and HSETNX cross the same line.
        hset_both(p, "m", 511, |i| i.to_string());
        p.same_lines(&["HMSET m x 1 y 2", "OBJECT ENCODING m", "HLEN m"]);
        hset_both(p, "n", 512, |i| i.to_string());
        p.same_lines(&[
            "HSETNX n f0 1",
            "OBJECT ENCODING n",
            "HSETNX n new 1",
            "OBJECT ENCODING n",
        ]);
        // HINCRBY and HINCRBYFLOAT adding a field.
        hset_both(p, "i", 512, |i| i.to_string());
        p.same_lines(&[
            "HINCRBY i f0 1",
            "OBJECT ENCODING i",
            "HINCRBY i new 1",
            "OBJECT ENCODING i",
        ]);
        hset_both(p, "j", 512, |i| i.to_string());
        p.same_lines(&["HINCRBYFLOAT j new 1.5", "OBJECT ENCODING j", "HGET j new"]);
    });
}

#[test]
fn differential_encoding_by_value_size() {
    let v64 = "v".repeat(64);
    let v65 = "v".repeat(65);
    let f65 = "f".repeat(65);
    let lines = [
        format!("HSET a f {v64}"),
        "OBJECT ENCODING a".into(),
        format!("HSET a f {v65}"),
        "OBJECT ENCODING a".into(),
        format!("HSET b {f65} 1"),
        "OBJECT ENCODING b".into(),
        // One long value among many short pairs converts before any is written.
        format!("HSET c x 1 y 2 z {v65}"),
        "OBJECT ENCODING c".into(),
        "HMGET c x y z".into(),
        // HSETNX of an existing field looks at nothing: no conversion.
        "HSET d f 1".into(),
        format!("HSETNX d f {v65}"),
        "OBJECT ENCODING d".into(),
        format!("HSETNX d g {v65}"),
        "OBJECT ENCODING d".into(),
        // HINCRBY / HINCRBYFLOAT with a long field convert too.
        "HSET e f 1".into(),
        format!("HINCRBY e {f65} 1"),
        "OBJECT ENCODING e".into(),
        "HSET g f 1".into(),
        format!("HINCRBYFLOAT g {f65} 1"),
        "OBJECT ENCODING g".into(),
        // A 64-digit-plus number is still a 65-byte value.
        format!("HSET k n 1{}", "0".repeat(64)),
        "OBJECT ENCODING k".into(),
        // A failed write does not convert (it never writes).
        "HSET m f 1".into(),
        "OBJECT ENCODING m".into(),
        format!("HGET m {f65}"),
        format!("HDEL m {f65}"),
        format!("HEXISTS m {f65}"),
        "OBJECT ENCODING m".into(),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    same_as_valkey(&lines);
}

#[test]
fn differential_encoding_after_config_set() {
    same_as_valkey(&[
        "CONFIG SET hash-max-listpack-entries 2",
        "HSET h a 1 b 2",
        "OBJECT ENCODING h",
        "HSET h c 3",
        "OBJECT ENCODING h",
        "CONFIG SET hash-max-listpack-entries 0",
        "HSET z a 1",
        "OBJECT ENCODING z",
        "CONFIG SET hash-max-listpack-entries 10",
        "CONFIG SET hash-max-listpack-value 3",
        "HSET v a abc",
        "OBJECT ENCODING v",
        "HSET v b abcd",
        "OBJECT ENCODING v",
        "HSET w abcd 1",
        "OBJECT ENCODING w",
        "HSET x 1234 1",
        "OBJECT ENCODING x",
        "CONFIG SET hash-max-listpack-value 0",
        "HSET e \"\" \"\"",
        "OBJECT ENCODING e",
        "HSET e a \"\"",
        "OBJECT ENCODING e",
        // The old names are aliases.
        "CONFIG SET hash-max-ziplist-entries 5",
        "CONFIG SET hash-max-ziplist-value 5",
        "CONFIG GET hash-max-listpack-entries",
        "CONFIG GET hash-max-listpack-value",
        "HSET y a 1 b 2 c 3 d 4 e 5",
        "OBJECT ENCODING y",
        "HSET y f 6",
        "OBJECT ENCODING y",
        // Existing listpacks convert only on their next write.
        "HSET s a 1",
        "CONFIG SET hash-max-listpack-entries 0",
        "OBJECT ENCODING s",
        "HSET s a 2",
        "OBJECT ENCODING s",
    ]);
}

#[test]
fn differential_hashtable_commands() {
    both_protocols(&["--hash-max-listpack-entries", "4"], |p| {
        hset_both(
            p,
            "h",
            100,
            |i| if i.is_multiple_of(3) { i.to_string() } else { format!("v{i}") },
        );
        p.same_lines(&[
            "OBJECT ENCODING h",
            "HLEN h",
            "HGET h f0",
            "HGET h f1",
            "HGET h nosuch",
            "HMGET h f3 f4 nosuch f99",
            "HSTRLEN h f99",
            "HSTRLEN h f98",
            "HEXISTS h f50",
            "HSETNX h f50 x",
            "HSETNX h new x",
            "HINCRBY h f3 10",
            "HINCRBY h f4 10",
            "HINCRBY h fresh 10",
            "HINCRBYFLOAT h f6 0.5",
            "HINCRBYFLOAT h f7 0.5",
            "HINCRBYFLOAT h fresh2 -0.25",
            "HSET h f0 changed new changed2",
            "HDEL h f1 f2 nosuch",
            "HLEN h",
        ]);
        p.same_normalized("HGETALL h", pairs_sorted);
        p.same_normalized("HKEYS h", items_sorted);
        p.same_normalized("HVALS h", items_sorted);
        p.same_normalized("HRANDFIELD h 1000", items_sorted);
        p.same_normalized("HRANDFIELD h 1000 WITHVALUES", |v| {
            // RESP3: an array of [field, value] arrays; RESP2: a flat array of pairs.
            match v {
                Val::Array(items) if items.iter().all(|i| matches!(i, Val::Array(_))) => {
                    items_sorted(Val::Array(items))
                }
                other => pairs_sorted(other),
            }
        });
        let mut del = vec!["HDEL".to_string(), "h".to_string()];
        del.extend((0..100).map(|i| format!("f{i}")));
        del.extend(["new", "fresh", "fresh2"].map(String::from));
        p.same(&del);
        p.same_lines(&["EXISTS h", "HLEN h", "HGETALL h"]);
    });
}

// ---------------------------------------------------------------------------------------
// HRANDFIELD by properties (against ferrokey alone: the draws are random).
// ---------------------------------------------------------------------------------------

fn fields_of(c: &mut Client, key: &str) -> HashMap<Vec<u8>, Vec<u8>> {
    let pairs: Vec<(Val, Val)> = match c.cmd(&["HGETALL", key]) {
        Val::Map(pairs) => pairs,
        Val::Array(items) => items.chunks(2).map(|p| (p[0].clone(), p[1].clone())).collect(),
        other => panic!("HGETALL: {other:?}"),
    };
    pairs
        .into_iter()
        .map(|p| match p {
            (Val::Bulk(f), Val::Bulk(v)) => (f, v),
            other => panic!("not a pair: {other:?}"),
        })
        .collect()
}

fn bulks(v: &Val) -> Vec<Vec<u8>> {
    v.as_array()
        .into_iter()
        .map(|x| match x {
            Val::Bulk(b) => b,
            other => panic!("not a bulk: {other:?}"),
        })
        .collect()
}

/// Field/value pairs of a WITHVALUES reply in either protocol.
fn reply_pairs(v: &Val, resp3: bool) -> Vec<FieldValue> {
    if resp3 {
        v.as_array()
            .iter()
            .map(|p| match &p.as_array()[..] {
                [Val::Bulk(f), Val::Bulk(v)] => (f.clone(), v.clone()),
                other => panic!("not a pair: {other:?}"),
            })
            .collect()
    } else {
        bulks(v).chunks(2).map(|p| (p[0].clone(), p[1].clone())).collect()
    }
}

fn check_hrandfield(c: &mut Client, key: &str, resp3: bool) {
    let all = fields_of(c, key);
    let n = all.len() as i64;
    // No count: one member.
    for _ in 0..20 {
        let Val::Bulk(f) = c.cmd(&["HRANDFIELD", key]) else { panic!("a bulk") };
        assert!(all.contains_key(&f));
    }
    for count in [1, 2, 5, n / 3, n / 3 + 1, n / 2, n - 1, n, n + 1, 10 * n] {
        // Positive: distinct members, min(count, n) of them.
        let got = bulks(&c.cmd(&["HRANDFIELD", key, &count.to_string()]));
        assert_eq!(got.len() as i64, count.min(n), "count {count}");
        let distinct: HashSet<_> = got.iter().collect();
        assert_eq!(distinct.len(), got.len(), "distinct for count {count}");
        assert!(got.iter().all(|f| all.contains_key(f)));
        let pairs =
            reply_pairs(&c.cmd(&["HRANDFIELD", key, &count.to_string(), "WITHVALUES"]), resp3);
        assert_eq!(pairs.len() as i64, count.min(n));
        let distinct: HashSet<_> = pairs.iter().map(|(f, _)| f).collect();
        assert_eq!(distinct.len(), pairs.len());
        assert!(pairs.iter().all(|(f, v)| all.get(f) == Some(v)));
        // Negative: exactly |count| members, repetitions allowed.
        let got = bulks(&c.cmd(&["HRANDFIELD", key, &(-count).to_string()]));
        assert_eq!(got.len() as i64, count);
        assert!(got.iter().all(|f| all.contains_key(f)));
        let pairs =
            reply_pairs(&c.cmd(&["HRANDFIELD", key, &(-count).to_string(), "WITHVALUES"]), resp3);
        assert_eq!(pairs.len() as i64, count);
        assert!(pairs.iter().all(|(f, v)| all.get(f) == Some(v)));
    }
    // A long repeating draw reaches (nearly) every field and repeats some.
    let got = bulks(&c.cmd(&["HRANDFIELD", key, &(-20 * n).to_string()]));
    let seen: HashSet<_> = got.iter().collect();
    assert!(seen.len() as i64 * 10 >= n * 9, "{} of {n} fields drawn", seen.len());
    assert!(seen.len() < got.len());
    // Small distinct draws vary between calls.
    let draws: HashSet<Vec<Vec<u8>>> =
        (0..20).map(|_| bulks(&c.cmd(&["HRANDFIELD", key, "2"]))).collect();
    assert!(draws.len() > 1, "HRANDFIELD is random");
}

#[test]
fn hrandfield_properties_both_encodings() {
    let s = start(&[]);
    for resp3 in [false, true] {
        let mut c = Client::connect(s.port);
        if resp3 {
            assert!(matches!(c.cmd(&["HELLO", "3"]), Val::Map(_)));
        }
        let small = hset_words("small", 60, |i| format!("v{i}"));
        let small: Vec<&str> = small.iter().map(String::as_str).collect();
        assert_eq!(c.cmd(&small), int(60));
        assert_eq!(c.cmd(&["OBJECT", "ENCODING", "small"]), bulk("listpack"));
        check_hrandfield(&mut c, "small", resp3);
        let big = hset_words("big", 2000, |i| format!("v{i}"));
        let big: Vec<&str> = big.iter().map(String::as_str).collect();
        assert_eq!(c.cmd(&big), int(2000));
        assert_eq!(c.cmd(&["OBJECT", "ENCODING", "big"]), bulk("hashtable"));
        check_hrandfield(&mut c, "big", resp3);
        c.cmd(&["DEL", "small", "big"]);
    }
}

#[test]
fn hrandfield_huge_negative_count_stops_at_the_output_limit() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0"]),
        Val::ok()
    );
    assert_eq!(c.cmd(&["HSET", "h", "a", "1", "b", "2"]), int(2));
    c.send(&[b"HRANDFIELD", b"h", b"-9223372036854775807"]);
    // The header promises the whole count; the body is cut off and the connection closed
    // (what was written before the close may or may not reach the client).
    let mut got = Vec::new();
    let _ = std::io::Read::read_to_end(&mut c.stream, &mut got);
    assert!(got.len() < 64 << 20, "the reply stopped ({} bytes)", got.len());
    let header = b"*9223372036854775807\r\n";
    assert!(got.is_empty() || got.starts_with(header) || header.starts_with(&got));
    // The server is fine.
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["HLEN", "h"]), int(2));
}

// ---------------------------------------------------------------------------------------
// HSCAN over a large hash.
// ---------------------------------------------------------------------------------------

/// A field and its value.
type FieldValue = (Vec<u8>, Vec<u8>);

/// Runs a full HSCAN of `key`; returns every pair seen and the number of calls.
fn full_hscan(c: &mut Client, key: &str, opts: &[&str]) -> (Vec<FieldValue>, usize) {
    let mut cursor = "0".to_string();
    let mut pairs = Vec::new();
    let mut calls = 0;
    loop {
        let mut args = vec!["HSCAN", key, &cursor];
        args.extend_from_slice(opts);
        let reply = c.cmd(&args).as_array();
        let [Val::Bulk(next), items] = &reply[..] else { panic!("scan reply: {reply:?}") };
        let items = bulks(items);
        assert!(items.len().is_multiple_of(2));
        pairs.extend(items.chunks(2).map(|p| (p[0].clone(), p[1].clone())));
        calls += 1;
        assert!(calls < 100_000, "scan does not end");
        cursor = String::from_utf8(next.clone()).unwrap();
        if cursor == "0" {
            return (pairs, calls);
        }
    }
}

#[test]
fn hscan_covers_a_large_hash() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for chunk in 0..10 {
        let w = hset_words("h", 1000, |i| format!("v{i}"));
        let w: Vec<String> = w
            .into_iter()
            .enumerate()
            .map(|(i, x)| if i >= 2 && i.is_multiple_of(2) { format!("{x}-{chunk}") } else { x })
            .collect();
        let w: Vec<&str> = w.iter().map(String::as_str).collect();
        assert_eq!(c.cmd(&w), int(1000));
    }
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "h"]), bulk("hashtable"));
    let all = fields_of(&mut c, "h");
    assert_eq!(all.len(), 10_000);
    for opts in [&[][..], &["COUNT", "1"], &["COUNT", "100"], &["COUNT", "100000"]] {
        let (pairs, calls) = full_hscan(&mut c, "h", opts);
        let seen: HashMap<_, _> = pairs.into_iter().collect();
        assert_eq!(seen, all, "every pair, with its value ({opts:?})");
        if opts.is_empty() {
            assert!(calls > 100, "COUNT 10 takes many calls ({calls})");
        }
    }
    // MATCH filters on the field; the cursor still walks the whole table.
    let (pairs, _) = full_hscan(&mut c, "h", &["MATCH", "f1?-3", "COUNT", "50"]);
    let fields: HashSet<_> = pairs.iter().map(|(f, _)| f.clone()).collect();
    let want: HashSet<_> = (10..20).map(|i| format!("f{i}-3").into_bytes()).collect();
    assert_eq!(fields, want);
    // Fields added during the scan do not stop it from seeing the old ones.
    let mut cursor = "0".to_string();
    let mut seen = HashSet::new();
    let mut added = 0;
    loop {
        let reply = c.cmd(&["HSCAN", "h", &cursor, "COUNT", "200"]).as_array();
        let items = bulks(&reply[1]);
        seen.extend(items.chunks(2).map(|p| p[0].clone()));
        for _ in 0..50 {
            assert_eq!(c.cmd(&["HSET", "h", &format!("added{added}"), "x"]), int(1));
            added += 1;
        }
        cursor = reply[0].as_str();
        if cursor == "0" {
            break;
        }
    }
    assert!(all.keys().all(|f| seen.contains(f)), "old fields are all seen");
}

// ---------------------------------------------------------------------------------------
// Against ferrokey alone.
// ---------------------------------------------------------------------------------------

#[test]
fn empty_hashes_never_stay_in_the_keyspace() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for cmd in [
        &["HINCRBY", "k", "f", "x"][..],
        &["HINCRBYFLOAT", "k", "f", "x"],
        &["HINCRBYFLOAT", "k", "f", "inf"],
        &["HSET", "k", "f"],
        &["HDEL", "k", "f"],
    ] {
        assert!(matches!(c.cmd(cmd), Val::Err(_) | Val::Int(0)), "{cmd:?}");
        assert_eq!(c.cmd(&["EXISTS", "k"]), int(0), "{cmd:?}");
    }
    assert_eq!(c.cmd(&["HSET", "k", "a", "1", "b", "2"]), int(2));
    assert_eq!(c.cmd(&["HDEL", "k", "a", "b"]), int(2));
    assert_eq!(c.cmd(&["EXISTS", "k"]), int(0));
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
}

#[test]
fn hashes_work_with_generic_commands() {
    let s = start(&["--hash-max-listpack-entries", "8"]);
    let mut c = Client::connect(s.port);
    for (key, n) in [("small", 4usize), ("big", 100)] {
        let w = hset_words(key, n, |i| format!("value-{i}"));
        let w: Vec<&str> = w.iter().map(String::as_str).collect();
        assert_eq!(c.cmd(&w), int(n as i64));
        assert_eq!(c.cmd(&["TYPE", key]), Val::Simple("hash".into()));
        let copy = format!("{key}-copy");
        assert_eq!(c.cmd(&["COPY", key, &copy]), int(1));
        assert_eq!(fields_of(&mut c, &copy), fields_of(&mut c, key));
        assert_eq!(c.cmd(&["OBJECT", "ENCODING", &copy]), c.cmd(&["OBJECT", "ENCODING", key]));
        let usage = c.cmd(&["MEMORY", "USAGE", key]).as_int();
        assert!(usage > 0);
        assert_eq!(c.cmd(&["RENAME", &copy, "renamed"]), Val::ok());
        assert_eq!(c.cmd(&["HLEN", "renamed"]), int(n as i64));
        assert_eq!(c.cmd(&["UNLINK", "renamed"]), int(1));
    }
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "small"]), bulk("listpack"));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "big"]), bulk("hashtable"));
}

/// MEMORY USAGE of the same hashes, ours and redis-server's: ours is never larger.
#[test]
fn memory_usage_is_at_most_redis() {
    let mut p = Pair::start_redis(2, &["--hash-max-listpack-entries", "64"]);
    for (key, n, width) in [("s", 10, 5), ("m", 60, 20), ("b", 1000, 10), ("w", 200, 60)] {
        hset_both(&mut p, key, n, |i| format!("{i:0width$}"));
        p.same_line(&format!("OBJECT ENCODING {key}"));
        let (ours, theirs) = p.both(&["MEMORY", "USAGE", key, "SAMPLES", "0"]);
        let usage = |raw: &[u8]| parse_int_reply(raw);
        let (ours, theirs) = (usage(&ours), usage(&theirs));
        assert!(ours <= theirs, "MEMORY USAGE {key}: ours {ours}, redis {theirs}");
    }
}

fn parse_int_reply(raw: &[u8]) -> i64 {
    let text = String::from_utf8_lossy(raw);
    text.trim().trim_start_matches(':').parse().unwrap_or_else(|_| panic!("{text}"))
}

#[test]
fn arity_errors_name_the_command() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for name in ["HSET", "HMSET"] {
        assert_eq!(
            c.cmd(&[name, "h", "a", "1", "b"]),
            Val::Err(format!(
                "ERR wrong number of arguments for '{}' command",
                name.to_lowercase()
            ))
        );
    }
    assert_eq!(c.cmd(&["EXISTS", "h"]), int(0));
}

// ---------------------------------------------------------------------------------------
// The command table.
// ---------------------------------------------------------------------------------------

#[test]
fn differential_command_info() {
    let names = [
        "hset",
        "hsetnx",
        "hmset",
        "hget",
        "hmget",
        "hdel",
        "hlen",
        "hstrlen",
        "hexists",
        "hkeys",
        "hvals",
        "hgetall",
        "hincrby",
        "hincrbyfloat",
        "hrandfield",
        "hscan",
    ];
    both_protocols(&[], |p| {
        for name in names {
            p.same_line(&format!("COMMAND INFO {name}"));
        }
        // The documentation texts (argument lists are not carried).
        for name in names {
            let line = format!("COMMAND DOCS {name}");
            let (ours, theirs) = p.both(&words(&line));
            let texts = |raw: &[u8]| -> Vec<String> {
                let text = String::from_utf8_lossy(raw).into_owned();
                ["summary", "since", "group", "complexity"]
                    .iter()
                    .map(|k| {
                        let at = text
                            .find(&format!("\r\n{k}\r\n"))
                            .unwrap_or_else(|| panic!("no {k} in COMMAND DOCS {name}: {text}"));
                        text[at..].lines().nth(3).unwrap_or_default().to_string()
                    })
                    .collect()
            };
            p.assert_equal(&line, texts(&ours), texts(&theirs));
        }
    });
}

/// The differential helpers above only see RESP; this checks the exact RESP3 shapes once.
#[test]
fn resp3_shapes() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert!(matches!(c.cmd(&["HELLO", "3"]), Val::Map(_)));
    c.cmd(&["HSET", "h", "a", "1"]);
    assert_eq!(c.cmd_raw(&["HGETALL", "h"]), b"%1\r\n$1\r\na\r\n$1\r\n1\r\n");
    assert_eq!(c.cmd_raw(&["HGETALL", "nokey"]), b"%0\r\n");
    assert_eq!(c.cmd_raw(&["HGET", "h", "x"]), b"_\r\n");
    assert_eq!(c.cmd_raw(&["HRANDFIELD", "nokey"]), b"_\r\n");
    assert_eq!(
        c.cmd_raw(&["HRANDFIELD", "h", "-2", "WITHVALUES"]),
        b"*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"
    );
    assert_eq!(c.cmd_raw(&["HSCAN", "h", "0"]), b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n");
}
