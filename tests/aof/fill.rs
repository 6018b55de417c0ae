//! Writes of every type and of every command form the AOF logs in a rewritten form.

use std::time::Duration;

use super::harness::{now_ms, served, w, wb};
use crate::common::{bulk, int, Client, Val};

/// Writes of every kind, keys prefixed by `p` (a second call with another prefix writes on
/// top of the first: FLUSHDB and SWAPDB then act on both).
pub fn fill(c: &mut Client, port: u16, p: &str) {
    let k = |s: &str| format!("{p}:{s}");
    // Strings.
    w(c, &["SET", &k("s:plain"), "hello"]);
    w(c, &["APPEND", &k("s:plain"), " world"]);
    wb(c, &[b"SET", k("s:bin").as_bytes(), b"a\0b\r\nc\xff\xfe*3\r\n"]);
    w(c, &["SET", &format!("{p}:weird key\r\n$3"), "v"]);
    w(c, &["SET", &k("s:empty"), ""]);
    let bin_key = [k("bin").as_bytes(), b"\xff\x00\r\n"].concat();
    wb(c, &[b"SET", &bin_key, b"\x00"]);
    let bin_hash = [k("h:bin").as_bytes(), b"\xfe"].concat();
    wb(c, &[b"HSET", &bin_hash, b"f\x00\xff", b"\r\n", b"", b"empty field"]);
    wb(c, &[b"SADD", &[k("set:bin").as_bytes(), b"\x80"].concat(), b"\x00", b"\xff\xff", b""]);
    wb(c, &[b"ZADD", k("z:bin").as_bytes(), b"1", b"\x00\x01", b"2", b""]);
    wb(c, &[b"RPUSH", k("l:bin").as_bytes(), b"", b"\x00", b"\r\n"]);
    w(c, &["SET", &k("s:int"), "-12345"]);
    w(c, &["INCR", &k("s:ctr")]);
    w(c, &["INCRBY", &k("s:ctr"), "41"]);
    w(c, &["DECRBY", &k("s:ctr"), "2"]);
    w(c, &["SETRANGE", &k("s:range"), "5", "xyz"]);
    w(c, &["SET", &k("s:long"), &"0123456789".repeat(2000)]);
    w(c, &["INCRBYFLOAT", &k("s:float"), "10.5"]);
    w(c, &["INCRBYFLOAT", &k("s:float"), "0.1"]);
    w(c, &["INCRBYFLOAT", &k("s:float"), "-3e2"]);
    w(c, &["SET", &k("s:getset"), "a"]);
    w(c, &["GETSET", &k("s:getset"), "b"]);
    w(c, &["SET", &k("s:getdel"), "a"]);
    w(c, &["GETDEL", &k("s:getdel")]);
    w(c, &["MSET", &k("s:m1"), "1", &k("s:m2"), "2"]);
    w(c, &["MSETNX", &k("s:m1"), "x", &k("s:m3"), "3"]);
    w(c, &["SETNX", &k("s:nx"), "first"]);
    w(c, &["SETNX", &k("s:nx"), "second"]);
    // Lists, small and beyond the listpack limits.
    w(c, &["RPUSH", &k("l:small"), "a", "b", "c", "d", "1", "2"]);
    w(c, &["LPUSH", &k("l:small"), "z"]);
    w(c, &["LINSERT", &k("l:small"), "BEFORE", "c", "bc"]);
    w(c, &["LSET", &k("l:small"), "0", "zz"]);
    w(c, &["LREM", &k("l:small"), "1", "d"]);
    w(c, &["LPOP", &k("l:small")]);
    w(c, &["RPOP", &k("l:small"), "1"]);
    let items: Vec<String> = (0..400).map(|i| format!("item-{i}-{}", "x".repeat(i % 90))).collect();
    let key = k("l:big");
    let mut argv = vec!["RPUSH", &key];
    argv.extend(items.iter().map(String::as_str));
    w(c, &argv);
    w(c, &["LTRIM", &k("l:big"), "1", "-2"]);
    w(c, &["LMOVE", &k("l:big"), &k("l:moved"), "LEFT", "RIGHT"]);
    w(c, &["LMPOP", "1", &k("l:big"), "RIGHT", "COUNT", "2"]);
    // Hashes.
    w(c, &["HSET", &k("h:small"), "a", "1", "b", "two", "c", "3"]);
    w(c, &["HDEL", &k("h:small"), "c"]);
    w(c, &["HSETNX", &k("h:small"), "d", "4"]);
    w(c, &["HINCRBY", &k("h:small"), "a", "10"]);
    w(c, &["HINCRBYFLOAT", &k("h:small"), "f", "1.25"]);
    w(c, &["HINCRBYFLOAT", &k("h:small"), "f", "0.1"]);
    for i in 0..300 {
        w(c, &["HSET", &k("h:big"), &format!("field-{i}"), &format!("{}", i * 7)]);
    }
    // Sets: an intset, one past the intset limit, strings.
    w(c, &["SADD", &k("set:int"), "1", "2", "3", "-5", "100000"]);
    let ints: Vec<String> = (0..600).map(|i| (i * 3).to_string()).collect();
    let key = k("set:bigint");
    let mut argv = vec!["SADD", &key];
    argv.extend(ints.iter().map(String::as_str));
    w(c, &argv);
    w(c, &["SADD", &k("set:str"), "a", "b", "c", "d"]);
    w(c, &["SREM", &k("set:str"), "d"]);
    w(c, &["SMOVE", &k("set:str"), &k("set:moved"), "a"]);
    w(c, &["SINTERSTORE", &k("set:inter"), &k("set:int"), &k("set:bigint")]);
    // SPOP: one member, a count, and a count past the size.
    let members: Vec<String> = (0..30).map(|i| format!("m{i}")).collect();
    let key = k("set:spop");
    let mut argv = vec!["SADD", &key];
    argv.extend(members.iter().map(String::as_str));
    w(c, &argv);
    w(c, &["SPOP", &k("set:spop")]);
    w(c, &["SPOP", &k("set:spop"), "5"]);
    w(c, &["SADD", &k("set:spopall"), "x", "y"]);
    w(c, &["SPOP", &k("set:spopall"), "10"]);
    w(c, &["SADD", &k("set:spopint"), "1", "2", "3", "4", "5", "6"]);
    w(c, &["SPOP", &k("set:spopint"), "2"]);
    // Sorted sets.
    w(c, &["ZADD", &k("z:small"), "1", "a", "2.5", "b", "-inf", "c", "inf", "d"]);
    w(c, &["ZINCRBY", &k("z:small"), "0.1", "a"]);
    w(c, &["ZREM", &k("z:small"), "b"]);
    for i in 0..200 {
        w(c, &["ZADD", &k("z:big"), &format!("{}.{}", i % 37, i), &format!("member-{i}")]);
    }
    w(c, &["ZPOPMIN", &k("z:big"), "2"]);
    w(c, &["ZRANGESTORE", &k("z:stored"), &k("z:big"), "0", "9"]);
    w(c, &["ZUNIONSTORE", &k("z:union"), "2", &k("z:small"), &k("z:stored"), "WEIGHTS", "2", "3"]);
    w(c, &["SORT", &k("set:int"), "STORE", &k("l:sorted")]);
    // Expire times, every form (long enough to outlive the test).
    let at_s = (now_ms() / 1000 + 5000).to_string();
    let at_ms = (now_ms() + 6_000_000).to_string();
    w(c, &["SET", &k("e:ex"), "v", "EX", "100000"]);
    w(c, &["SET", &k("e:px"), "v", "PX", "200000000"]);
    w(c, &["SET", &k("e:exat"), "v", "EXAT", &at_s]);
    w(c, &["SET", &k("e:pxat"), "v", "PXAT", &at_ms]);
    w(c, &["SET", &k("e:keepttl"), "v", "EX", "300000"]);
    w(c, &["SET", &k("e:keepttl"), "v2", "KEEPTTL"]);
    w(c, &["SET", &k("e:cleared"), "v", "EX", "300000"]);
    w(c, &["SET", &k("e:cleared"), "v2"]);
    w(c, &["SET", &k("e:getopt"), "v", "GET", "EX", "400000"]);
    w(c, &["SETEX", &k("e:setex"), "500000", "v"]);
    w(c, &["PSETEX", &k("e:psetex"), "600000000", "v"]);
    w(c, &["SET", &k("e:expire"), "v"]);
    w(c, &["EXPIRE", &k("e:expire"), "700000"]);
    w(c, &["EXPIRE", &k("e:expire"), "100", "GT"]);
    w(c, &["SET", &k("e:pexpire"), "v"]);
    w(c, &["PEXPIRE", &k("e:pexpire"), "800000000", "NX"]);
    w(c, &["SET", &k("e:expireat"), "v"]);
    w(c, &["EXPIREAT", &k("e:expireat"), &at_s]);
    w(c, &["SET", &k("e:pexpireat"), "v"]);
    w(c, &["PEXPIREAT", &k("e:pexpireat"), &at_ms]);
    w(c, &["SET", &k("e:getex"), "v"]);
    w(c, &["GETEX", &k("e:getex"), "EX", "900000"]);
    w(c, &["SET", &k("e:getexat"), "v"]);
    w(c, &["GETEX", &k("e:getexat"), "PXAT", &at_ms]);
    w(c, &["SET", &k("e:getexpersist"), "v", "EX", "1000"]);
    w(c, &["GETEX", &k("e:getexpersist"), "PERSIST"]);
    w(c, &["SET", &k("e:persist"), "v", "EX", "1000"]);
    w(c, &["PERSIST", &k("e:persist")]);
    w(c, &["RPUSH", &k("e:list"), "a", "b"]);
    w(c, &["EXPIRE", &k("e:list"), "123456"]);
    w(c, &["SET", &k("e:negative"), "v"]);
    w(c, &["EXPIRE", &k("e:negative"), "-1"]);
    // RESTORE: relative TTL, absolute TTL, none.
    let Val::Bulk(payload) = w(c, &["DUMP", &k("z:small")]) else { panic!("DUMP") };
    wb(c, &[b"RESTORE", k("r:ttl").as_bytes(), b"700000000", &payload]);
    wb(c, &[b"RESTORE", k("r:abs").as_bytes(), at_ms.as_bytes(), &payload, b"ABSTTL"]);
    wb(c, &[b"RESTORE", k("r:none").as_bytes(), b"0", &payload]);
    wb(c, &[b"RESTORE", k("r:none").as_bytes(), b"0", &payload, b"REPLACE"]);
    wb(c, &[b"RESTORE-ASKING", k("r:asking").as_bytes(), b"700000000", &payload]);
    // MIGRATE to another server: a copy stays (nothing logged), a move logs DEL.
    let target = crate::common::start(&[]);
    let to = target.port.to_string();
    w(c, &["SET", &k("m:copy"), "v"]);
    w(c, &["SET", &k("m:moved"), "v", "EX", "1000"]);
    w(c, &["MIGRATE", "127.0.0.1", &to, &k("m:copy"), "0", "5000", "COPY"]);
    w(c, &["MIGRATE", "127.0.0.1", &to, "", "0", "5000", "KEYS", &k("m:moved")]);
    drop(target);
    // Keys that expire: one read after (a DEL goes in), one never touched again.
    w(c, &["SET", &k("x:read"), "v", "PX", "50"]);
    w(c, &["SET", &k("x:untouched"), "v", "PX", "50"]);
    w(c, &["HSET", &k("x:hash"), "f", "v"]);
    w(c, &["PEXPIRE", &k("x:hash"), "50"]);
    std::thread::sleep(Duration::from_millis(120));
    assert_eq!(c.cmd(&["GET", &k("x:read")]), Val::Nil);
    assert_eq!(c.cmd(&["HGET", &k("x:hash"), "f"]), Val::Nil);
    // MULTI/EXEC, with a SELECT inside.
    assert_eq!(c.cmd(&["MULTI"]), Val::ok());
    let (ma, ml, mn) = (k("m:a"), k("m:l"), k("m:nosuch"));
    let ms = k("set:spop");
    for args in [
        &["SET", &ma, "1"][..],
        &["INCR", &ma],
        &["SELECT", "4"],
        &["RPUSH", &ml, "x", "y"],
        &["SPOP", &mn],
        &["SPOP", &ms, "2"],
        &["SELECT", "0"],
    ] {
        assert_eq!(c.cmd(args), Val::Simple("QUEUED".into()));
    }
    assert_eq!(c.cmd(&["EXEC"]).as_array().len(), 7);
    // Other databases, FLUSHDB, SWAPDB, MOVE, COPY, RENAME.
    w(c, &["SELECT", "2"]);
    w(c, &["SET", &k("db2"), "in two"]);
    w(c, &["SELECT", "5"]);
    w(c, &["SET", &k("flushed"), "v"]);
    w(c, &["FLUSHDB"]);
    w(c, &["SET", &k("after-flush"), "v"]);
    w(c, &["SELECT", "6"]);
    w(c, &["SET", &k("swapped"), "from six"]);
    w(c, &["SELECT", "0"]);
    w(c, &["SWAPDB", "6", "7"]);
    w(c, &["SET", &k("mv"), "moving"]);
    assert_eq!(w(c, &["MOVE", &k("mv"), "8"]), int(1));
    w(c, &["COPY", &k("l:small"), &k("l:copy")]);
    w(c, &["COPY", &k("h:small"), &k("h:copy"), "DB", "9"]);
    w(c, &["COPY", &k("s:plain"), &k("s:int"), "REPLACE"]);
    w(c, &["RENAME", &k("s:m1"), &k("s:renamed")]);
    w(c, &["RENAMENX", &k("s:m2"), &k("s:renamednx")]);
    w(c, &["DEL", &k("s:m3"), &k("nosuch")]);
    w(c, &["UNLINK", &k("s:empty")]);
    // Blocking pops served by a later push.
    let r = served(c, port, &["BLPOP", &k("b:list"), "5"], &["RPUSH", &k("b:list"), "p1", "p2"]);
    assert_eq!(r, Val::Array(vec![bulk(&k("b:list")), bulk("p1")]));
    let r = served(
        c,
        port,
        &["BLMOVE", &k("b:src"), &k("b:dst"), "LEFT", "RIGHT", "5"],
        &["RPUSH", &k("b:src"), "q1", "q2"],
    );
    assert_eq!(r, bulk("q1"));
    let r =
        served(c, port, &["BZPOPMIN", &k("b:z"), "5"], &["ZADD", &k("b:z"), "2", "b", "1", "a"]);
    assert_eq!(r.as_array()[1], bulk("a"));
}

/// The write commands `fill` leaves out, so that the two together run every write command
/// of the table (keys prefixed by `p`).
pub fn fill_rest(c: &mut Client, port: u16, p: &str) {
    let k = |s: &str| format!("{p}:{s}");
    w(c, &["SET", &k("r:ctr"), "10"]);
    assert_eq!(w(c, &["DECR", &k("r:ctr")]), int(9));
    w(c, &["HMSET", &k("r:h"), "a", "1", "b", "2"]);
    assert_eq!(w(c, &["LPUSHX", &k("r:nolist"), "x"]), int(0));
    w(c, &["RPUSH", &k("r:l"), "a", "b", "c", "d"]);
    assert_eq!(w(c, &["LPUSHX", &k("r:l"), "z"]), int(5));
    assert_eq!(w(c, &["RPUSHX", &k("r:l"), "y"]), int(6));
    assert_eq!(w(c, &["RPOPLPUSH", &k("r:l"), &k("r:l2")]), bulk("y"));
    w(c, &["SADD", &k("r:s1"), "a", "b", "c"]);
    w(c, &["SADD", &k("r:s2"), "b", "c", "d"]);
    assert_eq!(w(c, &["SDIFFSTORE", &k("r:sdiff"), &k("r:s1"), &k("r:s2")]), int(1));
    assert_eq!(w(c, &["SUNIONSTORE", &k("r:sunion"), &k("r:s1"), &k("r:s2")]), int(4));
    // HyperLogLogs: a PFCOUNT that caches its count is logged too, as in Valkey.
    assert_eq!(w(c, &["PFADD", &k("r:hll"), "a", "b", "c"]), int(1));
    assert_eq!(w(c, &["PFCOUNT", &k("r:hll")]), int(3));
    assert_eq!(w(c, &["PFMERGE", &k("r:hll2"), &k("r:hll")]), Val::ok());
    assert_eq!(w(c, &["PFDEBUG", "TODENSE", &k("r:hll2")]), int(1));
    w(c, &["ZADD", &k("r:z1"), "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"]);
    w(c, &["ZADD", &k("r:z2"), "1", "b", "2", "c"]);
    assert_eq!(w(c, &["ZDIFFSTORE", &k("r:zdiff"), "2", &k("r:z1"), &k("r:z2")]), int(3));
    assert_eq!(w(c, &["ZINTERSTORE", &k("r:zinter"), "2", &k("r:z1"), &k("r:z2")]), int(2));
    w(c, &["ZPOPMAX", &k("r:z1")]);
    w(c, &["ZMPOP", "1", &k("r:z1"), "MIN"]);
    w(c, &["ZADD", &k("r:z3"), "0", "a", "0", "b", "0", "c", "0", "d", "1", "x", "2", "y"]);
    assert_eq!(w(c, &["ZREMRANGEBYLEX", &k("r:z3"), "[a", "[b"]), int(2));
    assert_eq!(w(c, &["ZREMRANGEBYRANK", &k("r:z3"), "0", "0"]), int(1));
    assert_eq!(w(c, &["ZREMRANGEBYSCORE", &k("r:z3"), "2", "+inf"]), int(1));
    // Bitmaps.
    assert_eq!(w(c, &["SETBIT", &k("r:bits"), "77", "1"]), int(0));
    w(c, &["BITFIELD", &k("r:bits"), "SET", "u8", "#2", "200", "INCRBY", "i5", "3", "-7"]);
    assert_eq!(w(c, &["BITOP", "XOR", &k("r:bitop"), &k("r:bits"), &k("r:ctr")]), int(10));
    // Geo: GEOADD is logged as ZADD, the stores as sent.
    let geo = k("r:geo");
    w(
        c,
        &["GEOADD", &geo, "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"],
    );
    let near = ["FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STOREDIST"];
    assert_eq!(w(c, &[&["GEOSEARCHSTORE", &k("r:geos"), &geo][..], &near].concat()), int(2));
    assert_eq!(w(c, &["GEORADIUS", &geo, "15", "37", "200", "km", "STORE", &k("r:geor")]), int(2));
    let by_member = ["GEORADIUSBYMEMBER", &geo, "Palermo", "100", "km", "STOREDIST", &k("r:geom")];
    assert_eq!(w(c, &by_member), int(1));
    // Valkey 9's conditional writes: relative times made absolute, DELIFEQ as DEL.
    assert_eq!(w(c, &["SET", &k("r:ifeq"), "a"]), Val::ok());
    assert_eq!(w(c, &["SET", &k("r:ifeq"), "b", "IFEQ", "a", "EX", "1000"]), Val::ok());
    assert_eq!(w(c, &["SET", &k("r:ifeq"), "c", "IFEQ", "b", "GET"]), Val::bulk("b"));
    assert_eq!(w(c, &["DELIFEQ", &k("r:ifeq"), "c"]), int(1));
    let msetex = ["MSETEX", "2", &k("r:mx1"), "1", &k("r:mx2"), "2", "NX", "PX", "900000"];
    assert_eq!(w(c, &msetex), int(1));
    assert_eq!(w(c, &["MSETEX", "1", &k("r:mx1"), "3", "XX", "KEEPTTL"]), int(1));
    // Streams: generated ids and approximate trims are logged as what they did.
    for i in 0..30 {
        w(c, &["XADD", &k("r:x"), "MAXLEN", "~", "12", "*", "i", &i.to_string()]);
    }
    w(c, &["XADD", &k("r:x"), "9999999999999-*", "f", "v"]);
    let first =
        w(c, &["XRANGE", &k("r:x"), "-", "+", "COUNT", "1"]).as_array()[0].as_array()[0].as_str();
    assert_eq!(w(c, &["XDEL", &k("r:x"), &first]), int(1));
    w(c, &["XTRIM", &k("r:x"), "MINID", "~", "9999999999999"]);
    w(c, &["XSETID", &k("r:x"), "10000000000000-0", "ENTRIESADDED", "100"]);
    // Consumer groups: deliveries are logged as XCLAIM and XGROUP SETID.
    let x = k("r:xg");
    w(c, &["XGROUP", "CREATE", &x, "g", "$", "MKSTREAM"]);
    for i in 1..=4 {
        w(c, &["XADD", &x, &format!("{i}-1"), "f", "v"]);
    }
    w(c, &["XREADGROUP", "GROUP", "g", "c1", "COUNT", "3", "STREAMS", &x, ">"]);
    w(c, &["XREADGROUP", "GROUP", "g", "c2", "NOACK", "STREAMS", &x, ">"]);
    assert_eq!(w(c, &["XACK", &x, "g", "1-1"]), int(1));
    w(c, &["XCLAIM", &x, "g", "c3", "0", "2-1"]);
    w(c, &["XDEL", &x, "3-1"]);
    w(c, &["XAUTOCLAIM", &x, "g", "c4", "0", "0"]);
    w(c, &["XGROUP", "CREATECONSUMER", &x, "g", "c5"]);
    w(c, &["XGROUP", "SETID", &x, "g", "2-1"]);
    // Blocking forms served by a later push.
    let r = served(c, port, &["BRPOP", &k("r:bl"), "5"], &["RPUSH", &k("r:bl"), "x1", "x2"]);
    assert_eq!(r, Val::Array(vec![bulk(&k("r:bl")), bulk("x2")]));
    let r = served(
        c,
        port,
        &["BRPOPLPUSH", &k("r:bsrc"), &k("r:bdst"), "5"],
        &["RPUSH", &k("r:bsrc"), "y1"],
    );
    assert_eq!(r, bulk("y1"));
    let r = served(
        c,
        port,
        &["BLMPOP", "5", "1", &k("r:bm"), "LEFT", "COUNT", "2"],
        &["RPUSH", &k("r:bm"), "m1", "m2", "m3"],
    );
    assert_eq!(r.as_array()[0], bulk(&k("r:bm")));
    let r = served(
        c,
        port,
        &["BZPOPMAX", &k("r:bz"), "5"],
        &["ZADD", &k("r:bz"), "1", "lo", "2", "hi"],
    );
    assert_eq!(r.as_array()[1], bulk("hi"));
    let r = served(
        c,
        port,
        &["BZMPOP", "5", "1", &k("r:bzm"), "MIN"],
        &["ZADD", &k("r:bzm"), "1", "one", "2", "two"],
    );
    assert_eq!(r.as_array()[0], bulk(&k("r:bzm")));
    hash_field_ttls(c, &k("r:hfe"));
}

/// Hash field expiration, every command and form: relative times must be logged as
/// absolute ones, times already past as HDEL, so a replay gives the same fields and times.
fn hash_field_ttls(c: &mut Client, key: &str) {
    w(c, &["HSET", key, "a", "1", "b", "2", "c", "3", "d", "4", "e", "5", "gone", "x"]);
    w(c, &["HEXPIRE", key, "1000", "FIELDS", "2", "a", "nosuch"]);
    w(c, &["HPEXPIRE", key, "2000000", "NX", "FIELDS", "1", "b"]);
    w(c, &["HEXPIREAT", key, "4000000000", "FIELDS", "1", "c"]);
    w(c, &["HPEXPIREAT", key, "4000000000123", "FIELDS", "1", "d"]);
    w(c, &["HPERSIST", key, "FIELDS", "1", "d"]);
    w(c, &["HEXPIRE", key, "0", "FIELDS", "1", "gone"]);
    w(c, &["HSETEX", key, "PX", "3000000", "FIELDS", "2", "x", "1", "y", "2"]);
    w(c, &["HSETEX", key, "FXX", "KEEPTTL", "FIELDS", "1", "x", "10"]);
    w(c, &["HSETEX", key, "EXAT", "1", "FIELDS", "1", "y", "3"]);
    w(c, &["HGETEX", key, "EX", "5000", "FIELDS", "1", "e"]);
    w(c, &["HGETEX", key, "PERSIST", "FIELDS", "1", "a"]);
    w(c, &["HGETDEL", key, "FIELDS", "1", "nosuch"]);
    w(c, &["HSET", &format!("{key}:2"), "f", "v", "g", "w"]);
    w(c, &["HGETDEL", &format!("{key}:2"), "FIELDS", "1", "g"]);
}

/// Keys set to expire within the second, in every relative form: logged as relative times,
/// they would come back to life with a fresh TTL after a restart.
pub fn short_lived(c: &mut Client) {
    let Val::Bulk(payload) = w(c, &["DUMP", "a:s:plain"]) else { panic!("DUMP") };
    w(c, &["SET", "short:ex", "v", "EX", "1"]);
    w(c, &["SET", "short:px", "v", "PX", "700"]);
    w(c, &["SETEX", "short:setex", "1", "v"]);
    w(c, &["PSETEX", "short:psetex", "700", "v"]);
    w(c, &["SET", "short:expire", "v"]);
    w(c, &["EXPIRE", "short:expire", "1"]);
    w(c, &["SET", "short:pexpire", "v"]);
    w(c, &["PEXPIRE", "short:pexpire", "700"]);
    w(c, &["SET", "short:getex", "v"]);
    w(c, &["GETEX", "short:getex", "PX", "700"]);
    wb(c, &[b"RESTORE", b"short:restore", b"700", &payload]);
}
