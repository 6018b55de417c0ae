//! String commands over TCP: GET/SET and every option, SETNX/SETEX/PSETEX/GETSET/GETEX/
//! GETDEL, MGET/MSET/MSETNX, APPEND/SETRANGE/GETRANGE/SUBSTR/STRLEN, the counters,
//! INCRBYFLOAT's long double arithmetic and LCS; binary keys and values; and differential
//! checks against a real redis-server 7.0 (RESP2 and RESP3, errors included).
//!
//! Expire times are compared only where they cannot race: large TTLs read with TTL (whole
//! seconds), absolute times read with EXPIRETIME / PEXPIRETIME.

#[path = "strings/bitmap.rs"]
mod bitmap;
mod common;
#[path = "strings/hll.rs"]
mod hll;

use common::diff::{same_as_valkey, same_as_valkey_with, Pair};
use common::{bulk, err, int, start, Client, Val};

// ---------------------------------------------------------------------------------------
// Against ferrokey alone.
// ---------------------------------------------------------------------------------------

#[test]
fn binary_keys_and_values_round_trip() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let key: &[u8] = b"k\0ey\r\n";
    let value: &[u8] = b"\0\r\nval\r\n\0";
    assert_eq!(c.cmd_b(&[b"SET", key, value]), Val::ok());
    assert_eq!(c.cmd_b(&[b"GET", key]), Val::Bulk(value.to_vec()));
    assert_eq!(c.cmd_b(&[b"GET", b"k\0ey"]), Val::Nil);
    assert_eq!(c.cmd_b(&[b"STRLEN", key]), int(value.len() as i64));
    assert_eq!(c.cmd_b(&[b"APPEND", key, b"\r\n\0"]), int(value.len() as i64 + 3));
    assert_eq!(c.cmd_b(&[b"GETRANGE", key, b"0", b"2"]), Val::Bulk(b"\0\r\n".to_vec()));
    assert_eq!(c.cmd_b(&[b"SETRANGE", key, b"1", b"\0\0"]), int(value.len() as i64 + 3));
    assert_eq!(c.cmd_b(&[b"GETRANGE", key, b"0", b"3"]), Val::Bulk(b"\0\0\0v".to_vec()));
    assert_eq!(c.cmd_b(&[b"MSET", b"a\0", b"1\r\n", b"b\0", b"\0"]), Val::ok());
    assert_eq!(
        c.cmd_b(&[b"MGET", b"a\0", b"b\0", b"a"]),
        Val::Array(vec![Val::Bulk(b"1\r\n".to_vec()), Val::Bulk(b"\0".to_vec()), Val::Nil])
    );
    assert_eq!(c.cmd_b(&[b"GETDEL", b"b\0"]), Val::Bulk(b"\0".to_vec()));
    assert_eq!(c.cmd_b(&[b"SET", b"x", b"ab\0cd", b"GET"]), Val::Nil);
    assert_eq!(c.cmd_b(&[b"GETSET", b"x", b"\r\n"]), Val::Bulk(b"ab\0cd".to_vec()));
    assert_eq!(c.cmd_b(&[b"SET", b"l1", b"a\0b\0c"]), Val::ok());
    assert_eq!(c.cmd_b(&[b"SET", b"l2", b"\0\0c"]), Val::ok());
    assert_eq!(c.cmd_b(&[b"LCS", b"l1", b"l2"]), Val::Bulk(b"\0\0c".to_vec()));
    // Exact bytes of a binary bulk reply.
    assert_eq!(c.cmd_raw(&["GET", "x"]), b"$2\r\n\r\n\r\n");
}

#[test]
fn set_conditions_and_get() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["SET", "k", "v", "XX"]), Val::Nil);
    assert_eq!(c.cmd(&["SET", "k", "v1", "NX"]), Val::ok());
    assert_eq!(c.cmd(&["SET", "k", "v2", "NX"]), Val::Nil);
    assert_eq!(c.cmd(&["SET", "k", "v3", "XX", "GET"]), bulk("v1"));
    assert_eq!(c.cmd(&["SET", "k", "v4", "NX", "GET"]), bulk("v3"));
    assert_eq!(c.cmd(&["GET", "k"]), bulk("v3"));
    assert_eq!(c.cmd(&["SET", "new", "v", "NX", "GET"]), Val::Nil);
    assert_eq!(c.cmd(&["GET", "new"]), bulk("v"));
    assert_eq!(c.cmd(&["SET", "gone", "v", "XX", "GET"]), Val::Nil);
    assert_eq!(c.cmd(&["EXISTS", "gone"]), int(0));
    assert_eq!(c.cmd(&["set", "k", "v5", "nx", "nx"]), Val::Nil);
    assert_eq!(c.cmd(&["SET", "k", "v5", "get", "GET"]), bulk("v3"));
    assert_eq!(c.cmd(&["SET", "k", "v", "NX", "XX"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["SET", "k", "v", "XX", "NX"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["SET", "k", "v", "PERSIST"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["SET", "k", "v", "EX"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["SET", "k"]), err("ERR wrong number of arguments for 'set' command"));
    assert_eq!(c.cmd(&["GET", "k"]), bulk("v5"));
    assert_eq!(c.cmd(&["GET"]), err("ERR wrong number of arguments for 'get' command"));
}

#[test]
fn set_expiry_options() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["SET", "k", "v", "EX", "1000"]), Val::ok());
    assert_eq!(c.cmd(&["TTL", "k"]), int(1000));
    assert_eq!(c.cmd(&["SET", "k", "v", "KEEPTTL"]), Val::ok());
    assert_eq!(c.cmd(&["TTL", "k"]), int(1000));
    assert_eq!(c.cmd(&["SET", "k", "v"]), Val::ok());
    assert_eq!(c.cmd(&["TTL", "k"]), int(-1));
    assert_eq!(c.cmd(&["SET", "k", "v", "PX", "2000000"]), Val::ok());
    assert_eq!(c.cmd(&["TTL", "k"]), int(2000));
    assert_eq!(c.cmd(&["SET", "k", "v", "EX", "10", "ex", "3000"]), Val::ok());
    assert_eq!(c.cmd(&["TTL", "k"]), int(3000));
    assert_eq!(c.cmd(&["SET", "k", "v", "EXAT", "99999999999"]), Val::ok());
    assert_eq!(c.cmd(&["EXPIRETIME", "k"]), int(99999999999));
    assert_eq!(c.cmd(&["SET", "k", "v", "PXAT", "99999999999123"]), Val::ok());
    assert_eq!(c.cmd(&["PEXPIRETIME", "k"]), int(99999999999123));
    // An absolute time already past: the write happens and the key expires at once.
    assert_eq!(c.cmd(&["SET", "k", "v2", "EXAT", "1", "GET"]), bulk("v"));
    assert_eq!(c.cmd(&["EXISTS", "k"]), int(0));
    assert_eq!(c.cmd(&["SET", "k", "v", "PXAT", "1"]), Val::ok());
    assert_eq!(c.cmd(&["GET", "k"]), Val::Nil);
    // Conflicting expiry options.
    for opts in [
        &["EX", "1", "PX", "1"][..],
        &["KEEPTTL", "EX", "1"],
        &["PXAT", "1", "KEEPTTL"],
        &["EXAT", "1", "PXAT", "1"],
    ] {
        let mut cmd = vec!["SET", "k", "v"];
        cmd.extend_from_slice(opts);
        assert_eq!(c.cmd(&cmd), err("ERR syntax error"), "{opts:?}");
    }
    let invalid = err("ERR invalid expire time in 'set' command");
    for (opt, n) in [
        ("EX", "0"),
        ("EX", "-5"),
        ("PX", "0"),
        ("EXAT", "0"),
        ("PXAT", "-1"),
        ("EX", "9223372036854775"),
        ("EX", "9223372036854776"),
        ("PX", "9223372036854775807"),
    ] {
        assert_eq!(c.cmd(&["SET", "k", "v", opt, n]), invalid, "{opt} {n}");
    }
    assert_eq!(
        c.cmd(&["SET", "k", "v", "EX", "1.5"]),
        err("ERR value is not an integer or out of range")
    );
    // A syntax error wins over a bad time, which wins over the GET of a missing key.
    assert_eq!(c.cmd(&["SET", "k", "v", "EX", "0", "FOO"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["SET", "k", "v", "EX", "0", "GET"]), invalid);
    assert_eq!(c.cmd(&["EXISTS", "k"]), int(0));
    assert_eq!(c.cmd(&["SET", "k", "v", "PXAT", "9223372036854775807"]), Val::ok());
    assert_eq!(c.cmd(&["PEXPIRETIME", "k"]), int(i64::MAX));
}

#[test]
fn setnx_setex_psetex_getset() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["SETNX", "k", "1"]), int(1));
    assert_eq!(c.cmd(&["SETNX", "k", "2"]), int(0));
    assert_eq!(c.cmd(&["GET", "k"]), bulk("1"));
    assert_eq!(c.cmd(&["SETEX", "k", "1000", "v"]), Val::ok());
    assert_eq!(c.cmd(&["TTL", "k"]), int(1000));
    assert_eq!(c.cmd(&["PSETEX", "k", "2000000", "w"]), Val::ok());
    assert_eq!(c.cmd(&["TTL", "k"]), int(2000));
    assert_eq!(c.cmd(&["SETEX", "k", "0", "v"]), err("ERR invalid expire time in 'setex' command"));
    assert_eq!(
        c.cmd(&["PSETEX", "k", "-1", "v"]),
        err("ERR invalid expire time in 'psetex' command")
    );
    assert_eq!(
        c.cmd(&["SETEX", "k", "x", "v"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(c.cmd(&["GETSET", "k", "new"]), bulk("w"));
    assert_eq!(c.cmd(&["TTL", "k"]), int(-1));
    assert_eq!(c.cmd(&["GETSET", "missing", "v"]), Val::Nil);
    assert_eq!(c.cmd(&["GET", "missing"]), bulk("v"));
    assert_eq!(
        c.cmd(&["SETEX", "k", "1"]),
        err("ERR wrong number of arguments for 'setex' command")
    );
}

#[test]
fn getex_and_getdel() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["GETEX", "k"]), Val::Nil);
    // The time is checked before the key (Valkey 9.1).
    assert_eq!(
        c.cmd(&["GETEX", "k", "EX", "-1"]),
        err("ERR invalid expire time in 'getex' command")
    );
    assert_eq!(c.cmd(&["GETEX", "k", "EX", "1", "PX", "1"]), err("ERR syntax error"));
    c.cmd(&["SET", "k", "v"]);
    assert_eq!(c.cmd(&["GETEX", "k", "EX", "1000"]), bulk("v"));
    assert_eq!(c.cmd(&["TTL", "k"]), int(1000));
    assert_eq!(c.cmd(&["GETEX", "k"]), bulk("v"));
    assert_eq!(c.cmd(&["TTL", "k"]), int(1000));
    assert_eq!(c.cmd(&["GETEX", "k", "PERSIST"]), bulk("v"));
    assert_eq!(c.cmd(&["TTL", "k"]), int(-1));
    assert_eq!(c.cmd(&["GETEX", "k", "PX", "3000000"]), bulk("v"));
    assert_eq!(c.cmd(&["TTL", "k"]), int(3000));
    assert_eq!(c.cmd(&["GETEX", "k", "EXAT", "99999999999"]), bulk("v"));
    assert_eq!(c.cmd(&["EXPIRETIME", "k"]), int(99999999999));
    assert_eq!(c.cmd(&["GETEX", "k", "PXAT", "99999999999555"]), bulk("v"));
    assert_eq!(c.cmd(&["PEXPIRETIME", "k"]), int(99999999999555));
    assert_eq!(
        c.cmd(&["GETEX", "k", "EX", "0"]),
        err("ERR invalid expire time in 'getex' command")
    );
    for bad in [&["NX"][..], &["GET"], &["KEEPTTL"], &["PERSIST", "EX", "1"], &["EX"], &["FOO"]] {
        let mut cmd = vec!["GETEX", "k"];
        cmd.extend_from_slice(bad);
        assert_eq!(c.cmd(&cmd), err("ERR syntax error"), "{bad:?}");
    }
    // A past absolute time deletes the key after replying its value.
    assert_eq!(c.cmd(&["GETEX", "k", "EXAT", "1"]), bulk("v"));
    assert_eq!(c.cmd(&["EXISTS", "k"]), int(0));
    c.cmd(&["SET", "k", "42"]);
    assert_eq!(c.cmd(&["GETDEL", "k"]), bulk("42"));
    assert_eq!(c.cmd(&["GETDEL", "k"]), Val::Nil);
    assert_eq!(c.cmd(&["EXISTS", "k"]), int(0));
}

#[test]
fn mget_mset_msetnx() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["MSET", "a", "1", "b", "2", "a", "3"]), Val::ok());
    assert_eq!(c.cmd(&["MGET", "a", "b", "c"]), Val::Array(vec![bulk("3"), bulk("2"), Val::Nil]));
    assert_eq!(
        c.cmd(&["MSET", "a", "1", "b"]),
        err("ERR wrong number of arguments for 'mset' command")
    );
    assert_eq!(
        c.cmd(&["MSETNX", "a", "1", "b"]),
        err("ERR wrong number of arguments for 'msetnx' command")
    );
    assert_eq!(c.cmd(&["MSETNX", "c", "1", "a", "9"]), int(0));
    assert_eq!(c.cmd(&["EXISTS", "c"]), int(0));
    assert_eq!(c.cmd(&["MSETNX", "c", "1", "d", "2"]), int(1));
    assert_eq!(c.cmd(&["MGET", "c", "d"]), Val::Array(vec![bulk("1"), bulk("2")]));
    c.cmd(&["SET", "t", "v", "EX", "1000"]);
    assert_eq!(c.cmd(&["MSET", "t", "w"]), Val::ok());
    assert_eq!(c.cmd(&["TTL", "t"]), int(-1));
}

#[test]
fn append_setrange_and_their_limit() {
    let s = start(&["--proto-max-bulk-len", "1mb"]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["APPEND", "k", "Hello"]), int(5));
    assert_eq!(c.cmd(&["APPEND", "k", " World"]), int(11));
    assert_eq!(c.cmd(&["GET", "k"]), bulk("Hello World"));
    assert_eq!(c.cmd(&["SETRANGE", "k", "6", "Redis"]), int(11));
    assert_eq!(c.cmd(&["GET", "k"]), bulk("Hello Redis"));
    assert_eq!(c.cmd(&["SETRANGE", "k", "13", "!"]), int(14));
    assert_eq!(c.cmd(&["GET", "k"]), Val::Bulk(b"Hello Redis\0\0!".to_vec()));
    assert_eq!(c.cmd(&["SETRANGE", "k", "100", ""]), int(14));
    assert_eq!(c.cmd(&["SETRANGE", "new", "5", ""]), int(0));
    assert_eq!(c.cmd(&["EXISTS", "new"]), int(0));
    assert_eq!(c.cmd(&["SETRANGE", "new", "2", "x"]), int(3));
    assert_eq!(c.cmd(&["GET", "new"]), Val::Bulk(b"\0\0x".to_vec()));
    assert_eq!(c.cmd(&["SETRANGE", "k", "-1", "x"]), err("ERR offset is out of range"));
    assert_eq!(
        c.cmd(&["SETRANGE", "k", "x", "x"]),
        err("ERR value is not an integer or out of range")
    );
    // Integers turn into text when edited.
    c.cmd(&["SET", "n", "12"]);
    assert_eq!(c.cmd(&["APPEND", "n", "34"]), int(4));
    assert_eq!(c.cmd(&["INCR", "n"]), int(1235));
    assert_eq!(c.cmd(&["SETRANGE", "n", "0", "9"]), int(4));
    assert_eq!(c.cmd(&["GET", "n"]), bulk("9235"));
    // proto-max-bulk-len (1 MiB here) bounds the result, not the argument alone.
    let too_long = err("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
    assert_eq!(c.cmd(&["SETRANGE", "big", "1048576", "a"]), too_long);
    assert_eq!(c.cmd(&["SETRANGE", "big", "1048575", "a"]), int(1048576));
    assert_eq!(c.cmd(&["APPEND", "big", "b"]), too_long);
    assert_eq!(c.cmd(&["SETRANGE", "big", "1048570", "abcdefg"]), too_long);
    assert_eq!(c.cmd(&["STRLEN", "big"]), int(1048576));
    assert_eq!(c.cmd(&["SETRANGE", "k", "9223372036854775807", "x"]), too_long);
}

/// Replies of big values reference the stored value instead of copying it (Valkey 9's reply
/// copy avoidance): a client reads each value as it was when its command ran, whatever
/// happens to the key before the reply has been written, and the server stays whole.
#[test]
fn big_values_read_back_as_they_were_when_read() {
    let s = start(&[]);
    let mut reader = Client::connect(s.port);
    let mut writer = Client::connect(s.port);
    let value: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    assert_eq!(writer.cmd_b(&[b"SET", b"big", &value]), Val::ok());
    assert_eq!(writer.cmd_b(&[b"SET", b"big2", &value]), Val::ok());
    // About 4 MB of replies, sent before any is read: more than the sockets hold, so most
    // is still waiting in the server when the key changes.
    const GETS: usize = 10;
    let mut pipeline = Vec::new();
    for _ in 0..GETS {
        pipeline.extend(Client::encode(&[b"GET", b"big"]));
    }
    pipeline.extend(Client::encode(&[b"MGET", b"big", b"nosuch", b"big2"]));
    pipeline.extend(Client::encode(&[b"SET", b"big2", b"short", b"GET"]));
    pipeline.extend(Client::encode(&[b"GETDEL", b"big2"]));
    reader.send_raw(&pipeline);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !writer.cmd(&["INFO", "commandstats"]).as_str().contains("cmdstat_getdel:calls=1,") {
        assert!(std::time::Instant::now() < deadline, "the pipeline did not run");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // Edit the value in place, then replace and delete it, while the replies are pending.
    assert_eq!(writer.cmd(&["SETRANGE", "big", "0", "XXXX"]), int(300_000));
    assert_eq!(writer.cmd(&["APPEND", "big", "tail"]), int(300_004));
    let edited = writer.cmd(&["GET", "big"]);
    assert_eq!(edited, Val::Bulk([b"XXXX", &value[4..], b"tail"].concat()));
    assert_eq!(writer.cmd(&["DEL", "big"]), int(1));
    assert_eq!(writer.cmd(&["FLUSHALL"]), Val::ok());
    let original = Val::Bulk(value.clone());
    for i in 0..GETS {
        assert!(reader.read() == original, "GET {i} changed under its reply");
    }
    assert!(
        reader.read() == Val::Array(vec![original.clone(), Val::Nil, original.clone()]),
        "MGET"
    );
    assert!(reader.read() == original, "SET GET");
    assert_eq!(reader.read(), bulk("short"));
    assert_eq!(reader.cmd(&["PING"]), Val::Simple("PONG".into()));
}

#[test]
fn edits_keep_the_ttl_and_sets_clear_it() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for edit in [
        &["APPEND", "k", "x"][..],
        &["SETRANGE", "k", "0", "1"],
        &["INCR", "k"],
        &["INCRBYFLOAT", "k", "1.5"],
        &["DECRBY", "k", "1"],
    ] {
        c.cmd(&["SET", "k", "1", "EX", "1000"]);
        c.cmd(edit);
        assert_eq!(c.cmd(&["TTL", "k"]), int(1000), "{edit:?}");
    }
    for write in [
        &["SET", "k", "1"][..],
        &["GETSET", "k", "1"],
        &["MSET", "k", "1"],
        &["SETEX", "k", "5000", "1"],
    ] {
        c.cmd(&["SET", "k", "1", "EX", "1000"]);
        c.cmd(write);
        assert_ne!(c.cmd(&["TTL", "k"]), int(1000), "{write:?}");
    }
}

#[test]
fn integer_counters() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["INCR", "n"]), int(1));
    assert_eq!(c.cmd(&["INCRBY", "n", "41"]), int(42));
    assert_eq!(c.cmd(&["DECR", "n"]), int(41));
    assert_eq!(c.cmd(&["DECRBY", "n", "-9"]), int(50));
    assert_eq!(c.cmd(&["DECRBY", "d", "5"]), int(-5));
    let overflow = err("ERR increment or decrement would overflow");
    c.cmd(&["SET", "max", "9223372036854775807"]);
    assert_eq!(c.cmd(&["INCR", "max"]), overflow);
    assert_eq!(c.cmd(&["DECRBY", "max", "-1"]), overflow);
    c.cmd(&["SET", "min", "-9223372036854775808"]);
    assert_eq!(c.cmd(&["DECR", "min"]), overflow);
    assert_eq!(c.cmd(&["INCRBY", "min", "-1"]), overflow);
    assert_eq!(c.cmd(&["INCRBY", "min", "9223372036854775807"]), int(-1));
    assert_eq!(
        c.cmd(&["DECRBY", "n", "-9223372036854775808"]),
        err("ERR decrement would overflow")
    );
    let not_int = err("ERR value is not an integer or out of range");
    for v in ["abc", "1.5", " 1", "01", "+1", "-0", "9223372036854775808", ""] {
        c.cmd(&["SET", "bad", v]);
        assert_eq!(c.cmd(&["INCR", "bad"]), not_int, "{v:?}");
    }
    assert_eq!(c.cmd(&["INCRBY", "n", "1.0"]), not_int);
    assert_eq!(c.cmd(&["INCRBY", "n", "99999999999999999999"]), not_int);
    assert_eq!(c.cmd(&["GET", "n"]), bulk("50"));
}

#[test]
fn incrbyfloat_prints_like_a_long_double() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "10.5"]), bulk("10.5"));
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "0.1"]), bulk("10.6"));
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "-5"]), bulk("5.6"));
    c.cmd(&["SET", "f", "5.0e3"]);
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "2.0e2"]), bulk("5200"));
    c.cmd(&["SET", "f", "1.1"]);
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "2.2"]), bulk("3.3"));
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "-3.3"]), bulk("0"));
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "0x10"]), bulk("16"));
    let not_float = err("ERR value is not a valid float");
    for bad in ["abc", " 1", "1 ", "nan", "1e", ""] {
        assert_eq!(c.cmd(&["INCRBYFLOAT", "f", bad]), not_float, "{bad:?}");
    }
    assert_eq!(c.cmd_b(&[b"INCRBYFLOAT", b"f", b"1.5\0x"]), not_float);
    let nan_inf = err("ERR increment would produce NaN or Infinity");
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "inf"]), nan_inf);
    c.cmd(&["SET", "h", "1e4932"]);
    assert_eq!(c.cmd(&["INCRBYFLOAT", "h", "1e4932"]), nan_inf);
    c.cmd(&["SET", "s", "text"]);
    assert_eq!(c.cmd(&["INCRBYFLOAT", "s", "1"]), not_float);
    assert_eq!(c.cmd(&["GET", "f"]), bulk("16"));
}

#[test]
fn getrange_substr_strlen() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    c.cmd(&["SET", "s", "This is a string"]);
    assert_eq!(c.cmd(&["GETRANGE", "s", "0", "3"]), bulk("This"));
    assert_eq!(c.cmd(&["GETRANGE", "s", "-3", "-1"]), bulk("ing"));
    assert_eq!(c.cmd(&["GETRANGE", "s", "0", "-1"]), bulk("This is a string"));
    assert_eq!(c.cmd(&["GETRANGE", "s", "10", "100"]), bulk("string"));
    assert_eq!(c.cmd(&["GETRANGE", "s", "-1", "-5"]), bulk(""));
    assert_eq!(c.cmd(&["SUBSTR", "s", "5", "6"]), bulk("is"));
    assert_eq!(c.cmd(&["GETRANGE", "missing", "0", "-1"]), bulk(""));
    assert_eq!(
        c.cmd(&["GETRANGE", "s", "a", "1"]),
        err("ERR value is not an integer or out of range")
    );
    c.cmd(&["SET", "n", "-12345"]);
    assert_eq!(c.cmd(&["GETRANGE", "n", "1", "2"]), bulk("12"));
    assert_eq!(c.cmd(&["STRLEN", "n"]), int(6));
    assert_eq!(c.cmd(&["STRLEN", "s"]), int(16));
    assert_eq!(c.cmd(&["STRLEN", "missing"]), int(0));
}

#[test]
fn lcs_text_len_and_idx() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    c.cmd(&["MSET", "a", "ohmytext", "b", "mynewtext"]);
    assert_eq!(c.cmd(&["LCS", "a", "b"]), bulk("mytext"));
    assert_eq!(c.cmd(&["LCS", "a", "b", "LEN"]), int(6));
    let range = |x: i64, y: i64| Val::Array(vec![int(x), int(y)]);
    assert_eq!(
        c.cmd(&["LCS", "a", "b", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"]),
        Val::Array(vec![
            bulk("matches"),
            Val::Array(vec![Val::Array(vec![range(4, 7), range(5, 8), int(4)])]),
            bulk("len"),
            int(6),
        ])
    );
    assert_eq!(c.cmd(&["LCS", "a", "missing"]), bulk(""));
    assert_eq!(
        c.cmd(&["LCS", "a", "b", "LEN", "IDX"]),
        err("ERR If you want both the length and indexes, please just use IDX.")
    );
    assert_eq!(c.cmd(&["LCS", "a", "b", "MINMATCHLEN"]), err("ERR syntax error"));
    assert_eq!(
        c.cmd(&["LCS", "a", "b", "MINMATCHLEN", "x"]),
        err("ERR value is not an integer or out of range")
    );
    // RESP3: IDX replies a map.
    assert!(matches!(c.cmd(&["HELLO", "3"]), Val::Map(_)));
    let idx = c.cmd(&["LCS", "a", "b", "IDX"]);
    let Val::Map(pairs) = idx else { panic!("IDX in RESP3 must be a map: {idx:?}") };
    assert_eq!(pairs.len(), 2);
    assert_eq!(pairs[1], (bulk("len"), int(6)));
}

#[test]
fn lcs_table_is_bounded_by_proto_max_bulk_len() {
    let s = start(&["--proto-max-bulk-len", "1mb"]);
    let mut c = Client::connect(s.port);
    // (511 + 1)^2 * 4 bytes = 1 MiB: allowed; one more byte on each side is not.
    let a511 = "a".repeat(511);
    let a512 = "a".repeat(512);
    c.cmd(&["MSET", "x", &a511, "y", &a511, "z", &a512]);
    assert_eq!(c.cmd(&["LCS", "x", "y", "LEN"]), int(511));
    let too_big =
        err("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    assert_eq!(c.cmd(&["LCS", "z", "z", "LEN"]), too_big);
    assert_eq!(c.cmd(&["LCS", "z", "z"]), too_big);
    assert_eq!(c.cmd(&["LCS", "x", "missing"]), bulk(""));
}

#[test]
fn string_commands_in_resp3() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert!(matches!(c.cmd(&["HELLO", "3"]), Val::Map(_)));
    assert_eq!(c.cmd_raw(&["GET", "missing"]), b"_\r\n");
    assert_eq!(c.cmd_raw(&["MGET", "missing", "x"]), b"*2\r\n_\r\n_\r\n");
    assert_eq!(c.cmd_raw(&["SET", "k", "v", "XX"]), b"_\r\n");
    assert_eq!(c.cmd_raw(&["SET", "k", "12", "GET"]), b"_\r\n");
    assert_eq!(c.cmd_raw(&["GET", "k"]), b"$2\r\n12\r\n");
    assert_eq!(c.cmd_raw(&["INCRBYFLOAT", "k", "0.5"]), b"$4\r\n12.5\r\n");
}

// ---------------------------------------------------------------------------------------
// Differential: the same commands against redis-server 7.0.
// ---------------------------------------------------------------------------------------

#[test]
fn differential_set_and_get() {
    same_as_valkey(&[
        "GET k",
        "SET k v",
        "GET k",
        "SET k v XX",
        "SET k2 v XX",
        "SET k v NX",
        "SET k w XX GET",
        "SET k x NX GET",
        "SET k3 x NX GET",
        "SET k y GET GET",
        "set k z nx nx",
        "SET k v NX XX",
        "SET k v XX NX",
        "SET k v EX",
        "SET k v EX 1000",
        "TTL k",
        "SET k v KEEPTTL",
        "TTL k",
        "SET k v EX 10 EX 2000",
        "TTL k",
        "SET k v PX 3000000",
        "TTL k",
        "SET k v EX 1 PX 1",
        "SET k v KEEPTTL EX 1",
        "SET k v EX 1 KEEPTTL",
        "SET k v PXAT 1 EXAT 1",
        "SET k v PERSIST",
        "SET k v EX 0",
        "SET k v EX -1",
        "SET k v PX 0",
        "SET k v EXAT 0",
        "SET k v PXAT -5",
        "SET k v EX 9223372036854775",
        "SET k v EX 9223372036854776",
        "SET k v PX 9223372036854775807",
        "SET k v EX abc",
        "SET k v EX 1.5",
        "SET k v EX 0 FOO",
        "SET k v EX 0 GET",
        "SET k v EXAT 99999999999",
        "EXPIRETIME k",
        "SET k v PXAT 99999999999123",
        "PEXPIRETIME k",
        "SET k v EXAT 9223372036854775",
        "SET k v PXAT 9223372036854775807",
        "PEXPIRETIME k",
        "SET k v2 EXAT 1 GET",
        "EXISTS k",
        "SET k v PXAT 1",
        "GET k",
        "SET k",
        "SET",
        "GET",
        "GET a b",
        "SET 12 34",
        "GET 12",
        "SET n -0",
        "GET n",
        "SET bin a\0b\r\nc",
        "GET bin",
        "SET k\0\r\n x",
        "GET k\0\r\n",
        "SET foo bar extra",
    ]);
}

#[test]
fn differential_setnx_setex_psetex_getset_getex_getdel() {
    same_as_valkey(&[
        "SETNX k 1",
        "SETNX k 2",
        "GET k",
        "SETNX k",
        "SETEX k 1000 v",
        "TTL k",
        "PSETEX k 2000000 w",
        "TTL k",
        "SETEX k 0 v",
        "SETEX k -1 v",
        "PSETEX k 0 v",
        "SETEX k x v",
        "SETEX k 9223372036854776 v",
        "PSETEX k 9223372036854775807 v",
        "SETEX k 10",
        "GET k",
        "GETSET k new",
        "TTL k",
        "GETSET nokey v",
        "GET nokey",
        "GETSET k",
        "GETEX missing",
        "GETEX missing EX -1",
        "GETEX missing FOO",
        "GETEX k",
        "GETEX k EX 1000",
        "TTL k",
        "GETEX k PERSIST",
        "TTL k",
        "GETEX k PX 3000000",
        "TTL k",
        "GETEX k EXAT 99999999999",
        "EXPIRETIME k",
        "GETEX k PXAT 99999999999555",
        "PEXPIRETIME k",
        "GETEX k PERSIST PERSIST",
        "TTL k",
        "GETEX k EX 0",
        "GETEX k PX -1",
        "GETEX k EX x",
        "GETEX k EX 9223372036854776",
        "GETEX k NX",
        "GETEX k GET",
        "GETEX k KEEPTTL",
        "GETEX k PERSIST EX 1",
        "GETEX k EX 1 PERSIST",
        "GETEX k EX 1 PX 1",
        "GETEX k EX",
        "GETEX k EX 5 EX 1000",
        "TTL k",
        "GETEX k EXAT 1",
        "EXISTS k",
        "SET n 42",
        "GETDEL n",
        "GETDEL n",
        "EXISTS n",
        "GETDEL",
        "GETDEL a b",
    ]);
}

/// Valkey 9's conditional string writes: SET ... IFEQ (with GET, expiry options, and its
/// conflicts with NX/XX), DELIFEQ and MSETEX (NX/XX over every key, one expire time, the
/// numkeys and option errors).
#[test]
fn differential_ifeq_delifeq_msetex() {
    same_as_valkey(&[
        "SET k v",
        "DELIFEQ k x",
        "DELIFEQ k v",
        "EXISTS k",
        "DELIFEQ nokey v",
        "LPUSH l a",
        "DELIFEQ l a",
        "SET n 10",
        "DELIFEQ n 10",
        "DELIFEQ",
        "DELIFEQ a b c",
        "SET k v",
        "SET k v2 IFEQ v",
        "GET k",
        "SET k v3 IFEQ nope",
        "GET k",
        "SET k v3 IFEQ nope GET",
        "SET k v3 IFEQ v2 GET",
        "GET k",
        "SET nokey2 v IFEQ x",
        "EXISTS nokey2",
        "SET l x IFEQ a",
        "SET k v4 IFEQ v3 NX",
        "SET k v4 IFEQ v3 XX",
        "SET k v4 IFEQ v3 EX 100",
        "TTL k",
        "SET k v5 IFEQ v4 KEEPTTL",
        "TTL k",
        "SET k v6 IFEQ",
        "SET k v6 IFEQ a IFEQ v5",
        "SET k v6 IFEQ v5 IFEQ a",
        "MSETEX 2 a 1 b 2",
        "MGET a b",
        "MSETEX 2 a 1 b 2 EX 100",
        "TTL a",
        "MSETEX 2 a 1 b 2 NX",
        "MSETEX 2 a 1 c 2 NX",
        "EXISTS c",
        "MSETEX 2 x 1 y 2 XX",
        "EXISTS x",
        "MSETEX 2 a 1 b 2 XX PX 5000",
        "MSETEX 1 a 1 KEEPTTL",
        "TTL a",
        "MSETEX 0 a 1",
        "MSETEX -1 a 1",
        "MSETEX 2 a 1",
        "MSETEX 1 a 1 b",
        "MSETEX x a 1",
        "MSETEX 1 a 1 EX 0",
        "MSETEX 1 a 1 EX -1",
        "MSETEX 1 a 1 EX x",
        "MSETEX 1 a 1 EX 100 PX 100",
        "MSETEX 1 a 1 NX XX",
        "MSETEX 1 a 1 FOO",
        "MSETEX 1 a 1 EXAT 1",
        "EXISTS a",
        "MSETEX 1 a 1 PXAT 99999999999999",
        "MSETEX 1 l 1 XX",
        "TYPE l",
        "MSETEX 2 a 1 a 2",
        "GET a",
        "MSETEX 1 a 1 EX 9999999999999999",
        "COMMAND INFO delifeq msetex",
        "COMMAND GETKEYS MSETEX 2 a 1 b 2 EX 10",
        "COMMAND GETKEYSANDFLAGS DELIFEQ k v",
    ]);
}

#[test]
fn differential_mget_mset_msetnx() {
    same_as_valkey(&[
        "MSET a 1 b 2 a 3",
        "MGET a b c",
        "MGET c",
        "MSET a 1 b",
        "MSET a",
        "MSETNX a 1 b",
        "MSETNX c 1 a 9",
        "EXISTS c",
        "MSETNX c 1 d 2",
        "MGET c d a",
        "MSETNX c 1",
        "MSET x\0 \r\n y -17",
        "MGET x\0 y",
        "MGET",
    ]);
}

#[test]
fn differential_append_setrange_getrange_strlen() {
    same_as_valkey(&[
        "APPEND k Hello",
        "APPEND k _World",
        "GET k",
        "STRLEN k",
        "SETRANGE k 6 Redis",
        "GET k",
        "SETRANGE k 20 !",
        "GET k",
        "STRLEN k",
        "SETRANGE k 100 \"\"",
        "SETRANGE new 5 \"\"",
        "EXISTS new",
        "SETRANGE new 2 x",
        "GET new",
        "SETRANGE k -1 x",
        "SETRANGE k x x",
        "SETRANGE k 1.5 x",
        "SET n 12",
        "APPEND n 34",
        "INCR n",
        "SETRANGE n 0 9",
        "GET n",
        "SET n -12345",
        "GETRANGE n 1 2",
        "STRLEN n",
        "APPEND n 6",
        "GET n",
        "SET s This_is_a_string",
        "GETRANGE s 0 3",
        "GETRANGE s -3 -1",
        "GETRANGE s 0 -1",
        "GETRANGE s 10 100",
        "GETRANGE s -1 -5",
        "GETRANGE s 0 -100",
        "GETRANGE s -100 -100",
        "GETRANGE s 5 3",
        "GETRANGE s 100 200",
        "GETRANGE s -9223372036854775808 9223372036854775807",
        "GETRANGE s a 1",
        "GETRANGE s 1 b",
        "GETRANGE missing 0 -1",
        "SUBSTR s 5 6",
        "SUBSTR s -6 -1",
        "SUBSTR s 0",
        "GETRANGE s 0",
        "STRLEN missing",
        "STRLEN",
        "APPEND k",
        "SET e \"\"",
        "APPEND e \"\"",
        "STRLEN e",
        "GETRANGE e 0 -1",
        "SETRANGE e 0 \"\"",
        "APPEND b\0 \r\n\0",
        "APPEND b\0 x",
        "GETRANGE b\0 0 1",
        "SETRANGE b\0 1 \0",
        "GET b\0",
    ]);
}

#[test]
fn differential_proto_max_bulk_len_limits() {
    for proto in [2, 3] {
        same_as_valkey_with(
            proto,
            &["--proto-max-bulk-len", "1mb"],
            &[
                "SETRANGE big 1048576 a",
                "SETRANGE big 1048575 a",
                "APPEND big b",
                "SETRANGE big 1048570 abcdefg",
                "SETRANGE big 1048570 abcdef",
                "STRLEN big",
                "SETRANGE big 9223372036854775807 x",
                "SETRANGE other 9223372036854775807 x",
                "GETRANGE big 1048574 -1",
            ],
        );
    }
}

#[test]
fn differential_integer_counters() {
    same_as_valkey(&[
        "INCR n",
        "INCRBY n 41",
        "DECR n",
        "DECRBY n -9",
        "DECRBY d 5",
        "GET n",
        "SET max 9223372036854775807",
        "INCR max",
        "INCRBY max 0",
        "DECRBY max -1",
        "SET min -9223372036854775808",
        "DECR min",
        "INCRBY min -1",
        "INCRBY min 9223372036854775807",
        "DECRBY n -9223372036854775808",
        "DECRBY n 9223372036854775807",
        "SET bad abc",
        "INCR bad",
        "SET bad 1.5",
        "INCR bad",
        "SET bad 01",
        "INCR bad",
        "SET bad +1",
        "DECR bad",
        "SET bad -0",
        "INCRBY bad 1",
        "SET bad 9223372036854775808",
        "INCR bad",
        "SET bad \"\"",
        "INCR bad",
        "INCRBY n 1.0",
        "INCRBY n 99999999999999999999",
        "INCRBY n abc",
        "DECRBY n",
        "INCR",
        "INCR a b",
        "SET big 99999999999999999999",
        "INCRBY big abc",
        "SET s 007",
        "DECRBY s 1",
    ]);
}

#[test]
fn differential_incrbyfloat() {
    same_as_valkey(&[
        "INCRBYFLOAT f 10.5",
        "INCRBYFLOAT f 0.1",
        "INCRBYFLOAT f -5",
        "SET f 5.0e3",
        "INCRBYFLOAT f 2.0e2",
        "INCRBYFLOAT f -5",
        "SET f 1.1",
        "INCRBYFLOAT f 2.2",
        "INCRBYFLOAT f 3.0e3",
        "SET f 12345678.9",
        "INCRBYFLOAT f 0.1",
        "INCRBYFLOAT f 0x10",
        "INCRBYFLOAT f 1e300",
        "INCRBYFLOAT f -1e300",
        "INCRBYFLOAT g 0x1.8p-1",
        "INCRBYFLOAT g .5e1",
        "INCRBYFLOAT g +.5",
        "INCRBYFLOAT g 1e-4950",
        "INCRBYFLOAT g -0.0",
        "INCRBYFLOAT z 0",
        "INCRBYFLOAT z -0.0",
        "INCRBYFLOAT z 0.1e-20",
        "INCRBYFLOAT z -0.1e-20",
        "SET i 9223372036854775807",
        "INCRBYFLOAT i 1",
        "INCRBYFLOAT i 0.5",
        "SET i -9223372036854775808",
        "INCRBYFLOAT i -1",
        "SET h 1e4932",
        "INCRBYFLOAT h 1e4932",
        "INCRBYFLOAT h 1.1e4932",
        "INCRBYFLOAT h 1.2e4932",
        "INCRBYFLOAT h -1e4932",
        "INCRBYFLOAT f inf",
        "INCRBYFLOAT f -infinity",
        "INCRBYFLOAT f nan",
        "INCRBYFLOAT f abc",
        "INCRBYFLOAT f 1e",
        "INCRBYFLOAT f 5.e+",
        "INCRBYFLOAT f 0x",
        "INCRBYFLOAT f .",
        "INCRBYFLOAT f -",
        "INCRBYFLOAT f 1e-4951",
        "INCRBYFLOAT f 1e99999",
        "INCRBYFLOAT f 1.5\0x",
        "INCRBYFLOAT f 1\r\n",
        "INCRBYFLOAT f \"\"",
        "SET t text",
        "INCRBYFLOAT t 1",
        "INCRBYFLOAT t abc",
        "SET t 1e",
        "INCRBYFLOAT t 1",
        "GET f",
        "INCRBYFLOAT f",
        "SET p 3.0",
        "INCRBYFLOAT p 0.0000000000000000001",
        "INCRBYFLOAT p 0.00000000000000001",
        "INCRBYFLOAT p 0.000000000000000015",
        "SET q 0.1",
        "INCRBYFLOAT q 0.2",
        "INCRBYFLOAT q 1e17",
        "INCRBYFLOAT q 123456789012345678901234567890",
        "INCRBYFLOAT q -123456789012345678901234567890",
    ]);
}

/// A deterministic pseudo-random sequence for generated differential inputs.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

#[test]
fn differential_incrbyfloat_random_values() {
    let mut rng = Lcg(0x5eed);
    let mut lines = Vec::new();
    for key in 0..8 {
        for _ in 0..40 {
            let sign = if rng.next().is_multiple_of(3) { "-" } else { "" };
            let int_part = rng.next() % 10u64.pow((rng.next() % 12) as u32);
            let frac = rng.next() % 1_000_000;
            let text = match rng.next() % 4 {
                0 => format!("{sign}{int_part}"),
                1 => format!("{sign}{int_part}.{frac}"),
                2 => format!("{sign}{int_part}.{frac}e{}", rng.next() % 40),
                _ => format!("{sign}0.{frac}e-{}", rng.next() % 30),
            };
            lines.push(format!("INCRBYFLOAT f{key} {text}"));
        }
        lines.push(format!("GET f{key}"));
    }
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    same_as_valkey_with(2, &[], &lines);
}

#[test]
fn differential_lcs() {
    same_as_valkey(&[
        "MSET a ohmytext b mynewtext",
        "LCS a b",
        "LCS a b LEN",
        "LCS a b IDX",
        "LCS a b idx withmatchlen",
        "LCS a b IDX MINMATCHLEN 4 WITHMATCHLEN",
        "LCS a b IDX MINMATCHLEN -3",
        "LCS a b IDX MINMATCHLEN 100",
        "LCS a b LEN IDX",
        "LCS a b IDX LEN FOO",
        "LCS a b MINMATCHLEN",
        "LCS a b MINMATCHLEN x",
        "LCS a b FOO",
        "LCS a b LEN WITHMATCHLEN",
        "LCS a missing",
        "LCS missing missing IDX",
        "LCS missing missing LEN",
        "LCS a a",
        "SET n 12345",
        "SET m 2_4",
        "LCS n m IDX WITHMATCHLEN",
        "LCS a",
        "SET x a\0b\r\nc",
        "SET y \0\r\n",
        "LCS x y",
        "LCS x y IDX",
    ]);
}

#[test]
fn differential_lcs_random_strings() {
    let mut rng = Lcg(42);
    let mut lines = Vec::new();
    for (i, (la, lb)) in [(30, 40), (100, 90), (250, 300), (7, 200)].into_iter().enumerate() {
        let mut text = |n: usize| -> String {
            (0..n).map(|_| char::from(b'a' + (rng.next() % 3) as u8)).collect()
        };
        let (a, b) = (text(la), text(lb));
        lines.push(format!("MSET a{i} {a} b{i} {b}"));
        lines.push(format!("LCS a{i} b{i}"));
        lines.push(format!("LCS a{i} b{i} LEN"));
        lines.push(format!("LCS a{i} b{i} IDX WITHMATCHLEN"));
        lines.push(format!("LCS a{i} b{i} IDX MINMATCHLEN 3"));
        lines.push(format!("LCS b{i} a{i} IDX"));
    }
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    same_as_valkey(&lines);
}

#[test]
fn differential_lcs_memory_bound() {
    let a511 = "a".repeat(511);
    let a512 = "a".repeat(512);
    let lines = [
        format!("MSET x {a511} y {a511} z {a512}"),
        "LCS x y LEN".to_string(),
        "LCS z z LEN".to_string(),
        "LCS z z".to_string(),
        "LCS z z IDX".to_string(),
        "LCS z missing".to_string(),
        "LCS z y LEN IDX".to_string(),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    same_as_valkey_with(2, &["--proto-max-bulk-len", "1mb"], &lines);
}

#[test]
fn differential_encodings() {
    // OBJECT ENCODING where our storage agrees with Valkey's (APPEND/SETRANGE results that
    // Valkey reports `raw` are not compared).
    same_as_valkey_with(
        2,
        &[],
        &[
            "SET i 12345",
            "OBJECT ENCODING i",
            "SET s hello",
            "OBJECT ENCODING s",
            "SET l 0123456789012345678901234567890123456789012345678",
            "OBJECT ENCODING l",
            "INCR c",
            "OBJECT ENCODING c",
            "INCRBYFLOAT f 1.5",
            "OBJECT ENCODING f",
            "SET z 007",
            "OBJECT ENCODING z",
            "MSET m1 -5 m2 x",
            "OBJECT ENCODING m1",
            "OBJECT ENCODING m2",
        ],
    );
}

/// Drop the key-spec `notes` (documentation our table does not carry) from a COMMAND INFO
/// reply, in either protocol (a RESP2 map is a flat array).
fn without_notes(v: Val) -> Val {
    match v {
        Val::Array(items) => {
            let mut out = Vec::new();
            let mut it = items.into_iter().peekable();
            while let Some(x) = it.next() {
                if x == bulk("notes") {
                    it.next();
                    continue;
                }
                out.push(without_notes(x));
            }
            Val::Array(out)
        }
        Val::Set(items) => Val::Set(items.into_iter().map(without_notes).collect()),
        Val::Map(pairs) => Val::Map(
            pairs
                .into_iter()
                .filter(|(k, _)| *k != bulk("notes"))
                .map(|(k, v)| (k, without_notes(v)))
                .collect(),
        ),
        other => other,
    }
}

#[test]
fn differential_command_info() {
    let names = [
        "get",
        "set",
        "setnx",
        "setex",
        "psetex",
        "getset",
        "getdel",
        "getex",
        "mget",
        "mset",
        "msetnx",
        "append",
        "strlen",
        "incr",
        "decr",
        "incrby",
        "decrby",
        "incrbyfloat",
        "getrange",
        "setrange",
        "substr",
        "lcs",
    ];
    for proto in [2u8, 3] {
        let mut p = Pair::start(proto, &[]);
        for name in names {
            p.same_normalized(&format!("COMMAND INFO {name}"), without_notes);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Big and growing values (issue 14): edited in place, byte for byte against Valkey.
// ---------------------------------------------------------------------------------------

/// `n` binary bytes (every byte value, NUL and CR LF included), varied by `seed`.
fn binary(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

#[test]
fn differential_big_and_growing_values() {
    let mut p = Pair::start(2, &["--proto-max-bulk-len", "2mb"]);
    let len_of = |p: &mut Pair, key: &str| {
        let (ours, theirs) = p.both(&["STRLEN", key]);
        p.assert_same_raw(("STRLEN", key), &ours, &theirs);
        String::from_utf8(ours).unwrap().trim_start_matches(':').trim().parse::<usize>().unwrap()
    };
    // One value grown from nothing across the inline limit (255 bytes) and the 1 MiB
    // preallocation limit, checked after every append.
    let mut sizes = vec![1usize, 100, 154, 1, 2, 500];
    sizes.extend(std::iter::repeat_n(4099, 260));
    for (i, n) in sizes.into_iter().enumerate() {
        p.same(&[&b"APPEND"[..], b"g", &binary(n, i as u8)]);
        if i % 37 == 0 {
            p.same(&["GETRANGE", "g", "-300", "-1"]);
            p.same(&["OBJECT", "ENCODING", "g"]);
        }
    }
    let len = len_of(&mut p, "g");
    assert!(len > 1 << 20);
    // SETRANGE inside, across the end, and past it (a zero-filled gap).
    p.same(&[&b"SETRANGE"[..], b"g", b"5", &binary(10, 9)]);
    p.same(&[&b"SETRANGE"[..], b"g", (len - 3).to_string().as_bytes(), &binary(10, 8)[..]]);
    p.same(&[&b"SETRANGE"[..], b"g", (len + 1000).to_string().as_bytes(), b"\r\n"]);
    p.same(&["GET", "g"]);
    // Refused edits: the value is untouched.
    let before = len_of(&mut p, "g");
    for line in [
        "INCR g",
        "INCRBY g 5",
        "DECRBY g 5",
        "INCRBYFLOAT g 1.5",
        "SETRANGE g 2097150 xyz",
        "LCS g g LEN",
        "LCS g g",
    ] {
        p.same_line(line);
    }
    p.same(&[&b"APPEND"[..], b"g", &binary((2 << 20) - before + 1, 1)]);
    assert_eq!(len_of(&mut p, "g"), before);
    p.same(&["GET", "g"]);
    for range in [["0", "-1"], ["-5000", "-1"], ["1048570", "1048590"], ["200", "300"]] {
        p.same(&["GETRANGE", "g", range[0], range[1]]);
    }
    // LCS of a big value and a short one is small enough to compute.
    p.same(&[&b"SET"[..], b"s", &binary(9, 3)]);
    p.same(&["LCS", "g", "s", "LEN"]);
    // Short values: an integer appended to, an embstr edited inside, values moved out of
    // line by a SETRANGE gap, a missing key created past the inline limit, a TTL kept.
    p.same_lines(&[
        "SET n 12345",
        "APPEND n 678",
        "GET n",
        "OBJECT ENCODING n",
        "SETRANGE n 300 ab",
        "GET n",
        "SET e hello",
        "SETRANGE e 1 EL",
        "GET e",
        "OBJECT ENCODING e",
        "SETRANGE m 1000 tail",
        "GET m",
        "OBJECT ENCODING m",
        "SETRANGE m2 3 ab",
        "GET m2",
        "SET t abc EX 1000",
    ]);
    p.same(&[&b"APPEND"[..], b"t", &binary(70_000, 5)]);
    p.same_lines(&["TTL t", "GETRANGE t 0 10", "STRLEN t", "INCR n", "INCR e"]);
}
