//! What a logged-in user may run, against Valkey 9.1: for each command family (strings,
//! lists, hashes, sets, sorted sets, streams, HyperLogLog, geo, bitmaps, keyspace, SORT
//! with BY and GET, pub/sub, EVAL with keys) commands allowed and denied by command, by
//! category, by key pattern (read versus write permission), by channel (a PSUBSCRIBE
//! pattern is matched literally) and by database (SELECT, MOVE, SWAPDB, COPY ... DB,
//! FLUSHALL); and, with several selectors, which denial is reported. The NOPERM texts are
//! compared byte for byte.

use crate::common::diff::{words, Pair};
use crate::{pair, same_raw, Duo};

/// Log in as `user` (password `x`) on both servers and run `lines` one by one, each reply
/// compared; the number of the oracle's denials (NOPERM, or SORT's ACL error).
fn denials_as(p: &Pair, user: &str, lines: &[&str]) -> usize {
    let mut d = Duo::login(p, user, "x");
    let mut denied = 0;
    for line in lines {
        let (ours, theirs) = d.both(&words(line));
        same_raw(p.proto, line, &ours, &theirs);
        let text = String::from_utf8_lossy(&theirs);
        if text.starts_with("-NOPERM") || text.contains("insufficient ACL permissions") {
            denied += 1;
        }
    }
    denied
}

/// Run `lines` as `user`, asserting the oracle denied some but not all of them.
fn mixed(p: &Pair, user: &str, lines: &[&str]) {
    let denied = denials_as(p, user, lines);
    assert!(denied > 0 && denied < lines.len(), "{user}: {denied} of {} denied", lines.len());
}

#[test]
fn key_patterns_by_family() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        p.same_line("ACL SETUSER u1 on nopass ~app:* +@read +@write");
        mixed(
            &p,
            "u1",
            &[
                // Strings.
                "SET app:s v",
                "GET app:s",
                "GET other",
                "SET other v",
                "MGET app:s other",
                "MSET app:a 1 other 2",
                "MSET app:a 1 app:b 2",
                "APPEND app:s x",
                "INCR other",
                "GETRANGE app:s 0 -1",
                "STRLEN other",
                "LCS app:s other",
                // Lists.
                "LPUSH app:l a b c",
                "LRANGE app:l 0 -1",
                "LPUSH other a",
                "LMOVE app:l other LEFT RIGHT",
                "LMOVE app:l app:l2 LEFT RIGHT",
                "RPOPLPUSH app:l other",
                "BLMPOP 0 2 app:l other LEFT",
                // Hashes.
                "HSET app:h f v",
                "HGET app:h f",
                "HGETALL other",
                "HSET other f v",
                // Sets.
                "SADD app:set a",
                "SINTER app:set other",
                "SINTERSTORE app:set2 app:set",
                "SINTERSTORE other app:set",
                "SMOVE app:set other a",
                // Sorted sets.
                "ZADD app:z 1 a",
                "ZRANGE app:z 0 -1",
                "ZRANGESTORE other app:z 0 -1",
                "ZUNIONSTORE app:z2 1 app:z",
                "ZADD other 1 a",
                // Streams.
                "XADD app:x 1-1 f v",
                "XRANGE app:x - +",
                "XREAD STREAMS app:x other 0 0",
                "XREAD STREAMS app:x 0",
                "XGROUP CREATE other g $ MKSTREAM",
                // HyperLogLog, geo, bitmaps.
                "PFADD app:p a",
                "PFCOUNT app:p other",
                "PFMERGE other app:p",
                "GEOADD app:g 1 1 m",
                "GEOSEARCHSTORE other app:g FROMLONLAT 1 1 BYRADIUS 10 km",
                "SETBIT app:bits 1 1",
                "BITOP AND app:d app:a other",
                "BITOP AND app:d app:a app:b",
                // Keyspace.
                "EXISTS other",
                "EXISTS app:s",
                "DEL app:s other",
                "DEL app:s",
                "UNLINK other",
                "RENAME app:l other",
                "RENAME app:l app:l3",
                "COPY app:l3 other",
                "COPY app:l3 app:l4",
                "TYPE other",
                "TTL app:l3",
                "EXPIRE other 10",
                "OBJECT ENCODING other",
                "DUMP other",
                "TOUCH app:l3 other",
                "~KEYS *",
                "DBSIZE",
                // Outside the user's categories.
                "PING",
                "PUBLISH ch m",
                "CONFIG GET maxmemory",
                "EVAL return(1) 0",
                "SELECT 1",
                "CLIENT GETNAME",
                "ACL WHOAMI",
                "WAIT 0 0",
                "FLUSHDB",
                "DBSIZE",
            ],
        );
    }
}

#[test]
fn read_and_write_key_permissions() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        p.same_lines(&[
            "ACL SETUSER u2 on nopass %R~r:* %W~w:* ~rw:* +@all",
            "SET r:1 v",
            "RPUSH r:l 3 1 2",
            "SADD r:s a b",
            "XADD r:x 1-1 f v",
            "PFADD r:p a",
            "SET w:1 v",
            "RPUSH w:l 1",
            "SADD w:s c",
        ]);
        mixed(
            &p,
            "u2",
            &[
                "SET r:1 x",
                "GET r:1",
                "SET w:1 x",
                "GET w:1",
                "APPEND w:1 x",
                "APPEND r:1 x",
                "INCR w:n",
                "INCR rw:n",
                "GETEX w:1",
                "SETRANGE w:1 0 x",
                "STRLEN w:1",
                "EXISTS w:1",
                "EXISTS r:1",
                "TYPE w:1",
                "TTL w:1",
                "EXPIRE w:1 100",
                "PERSIST w:1",
                "DEL r:1",
                "COPY r:1 w:c",
                "COPY w:1 w:c2",
                "COPY r:1 r:c",
                "LMOVE r:l w:l LEFT LEFT",
                "LMOVE w:l r:l LEFT LEFT",
                "LMOVE w:l w:l2 LEFT LEFT",
                "RPOPLPUSH rw:l rw:l2",
                "LPUSH w:l 5",
                "LPOP w:l",
                "LLEN w:l",
                "LRANGE r:l 0 -1",
                "SORT r:l",
                "SORT w:l",
                "SORT r:l STORE w:sorted",
                "SORT r:l STORE r:sorted",
                "SORT_RO r:l",
                "SUNIONSTORE w:u r:s",
                "SUNIONSTORE r:u w:s",
                "SMEMBERS w:u",
                "SCARD w:u",
                "SMOVE r:s w:s a",
                "SMOVE w:s w:s2 c",
                "HSET w:h f v",
                "HGET w:h f",
                "HINCRBY w:h n 1",
                "XADD w:x 1-1 f v",
                "XLEN w:x",
                "XRANGE w:x - +",
                "XREAD STREAMS r:x 0",
                "XREAD STREAMS w:x 0",
                "PFADD w:p a",
                "PFCOUNT w:p",
                "PFCOUNT r:p",
                "PFMERGE w:p r:p",
                "BITOP OR w:b r:1 r:1",
                "BITOP OR r:b w:1",
                "RENAME w:1 w:5",
                "RENAME rw:n rw:m",
                "MSET w:a 1 w:b 2",
                "MGET r:1 w:1",
                "DEL w:a w:b",
                "OBJECT ENCODING r:l",
                "DUMP w:l",
                "TOUCH w:l",
                "UNLINK w:l2",
                "EVAL return(1) 1 w:x",
                "EVAL return(1) 1 r:1",
                "EVAL return(1) 1 rw:x",
                "EVAL_RO return(1) 1 r:1",
                "EVAL_RO return(1) 1 w:1",
            ],
        );
    }
}

#[test]
fn sort_by_and_get_patterns() {
    let mut p = pair(2, &[]);
    p.same_lines(&[
        "ACL SETUSER u1 on nopass ~app:* +@read +@write",
        "ACL SETUSER all on nopass ~* +@all",
        "RPUSH app:l 3 1 2",
        "MSET app:w:1 10 app:w:2 20 app:w:3 5",
    ]);
    mixed(
        &p,
        "u1",
        &[
            "SORT app:l",
            "SORT app:l BY nosort",
            "SORT app:l BY other:*",
            "SORT app:l BY app:w:*",
            "SORT app:l BY app:w:*->f",
            "SORT app:l BY other",
            "SORT app:l GET other:*",
            "SORT app:l GET #",
            "SORT app:l BY nosort GET app:*",
            "SORT app:l GET # GET app:*",
            "SORT_RO app:l BY other:*",
            "SORT_RO app:l GET #",
            "SORT app:l STORE other",
            "SORT app:l STORE app:sorted",
            "SORT app:l BY nosort STORE app:sorted",
        ],
    );
    // With every key, the patterns are allowed.
    let denied = denials_as(
        &p,
        "all",
        &["SORT app:l BY app:w:*", "SORT app:l GET app:w:* GET #", "SORT app:l BY other:*"],
    );
    assert_eq!(denied, 0);
}

#[test]
fn channels_for_publish() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        p.same_line("ACL SETUSER u3 on nopass resetchannels &news.* &sports ~* +@all");
        mixed(
            &p,
            "u3",
            &[
                "PUBLISH ch m",
                "PUBLISH news.1 m",
                "PUBLISH news m",
                "PUBLISH sports m",
                "PUBLISH SPORTS m",
                "SPUBLISH news.1 m",
                "SPUBLISH ch m",
                "PUBSUB NUMSUB ch",
                "PUBSUB CHANNELS",
                "EVAL return(server.call('publish','ch','m')) 0",
            ],
        );
    }
}

#[test]
fn channels_for_subscribe() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        p.same_line("ACL SETUSER u3 on nopass resetchannels &news.* &sports ~* +@all");
        // Each line gets one reply: denied ones an error, allowed ones their single
        // confirmation.
        mixed(
            &p,
            "u3",
            &[
                "SUBSCRIBE ch",
                "SUBSCRIBE news.1 ch",
                "PSUBSCRIBE news.1",
                "PSUBSCRIBE *",
                "PSUBSCRIBE news.?",
                "PSUBSCRIBE news.*",
                "SSUBSCRIBE ch",
                "SSUBSCRIBE news.2",
                "SUBSCRIBE sports",
                "PING",
                "PUNSUBSCRIBE news.*",
                "SUNSUBSCRIBE news.2",
                "UNSUBSCRIBE sports",
                "PSUBSCRIBE sports",
            ],
        );
    }
}

#[test]
fn databases() {
    let mut p = pair(2, &[]);
    p.same_lines(&[
        "ACL SETUSER u4 on nopass db=0 +@all ~*",
        "ACL SETUSER u6 on nopass db=0,2 +@all ~* -flushall",
    ]);
    mixed(
        &p,
        "u4",
        &[
            "SET k v",
            "SELECT 1",
            "SELECT 0",
            "MOVE k 1",
            "SWAPDB 0 1",
            "SWAPDB 0 0",
            "COPY k k2 DB 1",
            "COPY k k2 DB 0",
            "COPY k k3 DB 1 REPLACE",
            "FLUSHALL",
            "SELECT x",
            "SELECT 99",
            "EVAL return(server.call('select','1')) 0",
            "MULTI",
            "SELECT 1",
            "EXEC",
            "FLUSHDB",
            "DBSIZE",
        ],
    );
    mixed(
        &p,
        "u6",
        &[
            "SELECT 2",
            "MOVE k 0",
            "SET k v",
            "MOVE k 1",
            "MOVE k 0",
            "SWAPDB 0 2",
            "SWAPDB 0 1",
            "COPY k k3 DB 0",
            "FLUSHALL",
            "FLUSHDB",
            "SELECT 0",
            "DBSIZE",
        ],
    );
}

#[test]
fn commands_and_categories() {
    let mut p = pair(2, &[]);
    p.same_lines(&[
        "ACL SETUSER c1 on nopass ~* &* +@hash -hdel +get +config|get +client|getname +select|1",
        "ACL SETUSER c2 on nopass ~* &* allcommands -@dangerous -@scripting",
        "ACL SETUSER c3 on nopass ~* &* -@all +@read -get +get",
    ]);
    mixed(
        &p,
        "c1",
        &[
            "HSET h f v",
            "HGET h f",
            "HDEL h f",
            "HGETALL h",
            "GET k",
            "SET k v",
            "CONFIG GET maxmemory",
            "CONFIG SET maxmemory 0",
            "CLIENT GETNAME",
            "CLIENT SETNAME x",
            "SELECT 1",
            "SELECT 0",
            "SELECT 2",
            "PING",
            "ACL WHOAMI",
            "NOSUCHCOMMAND",
            "GET",
        ],
    );
    mixed(
        &p,
        "c2",
        &[
            "SET k v",
            "~KEYS *",
            "FLUSHALL",
            "CONFIG SET maxmemory 0",
            "DEBUG SLEEP 0",
            "EVAL return(1) 0",
            "PING",
            "INFO nosuchsection",
            "SORT k",
        ],
    );
    mixed(&p, "c3", &["GET k", "MGET k", "SET k v", "HGETALL h", "LPUSH l a"]);
}

#[test]
fn selectors_report_the_relevant_denial() {
    let mut p = pair(2, &[]);
    p.same_lines(&[
        "ACL SETUSER m1 on nopass db=0 -@all +get ~x",
        "ACL SETUSER m2 on nopass +get ~a (+set ~b) (+get ~c &ch +publish)",
        "ACL SETUSER m3 on nopass ~* +@all db=1 (db=0 +get ~k)",
    ]);
    mixed(&p, "m1", &["SELECT 1", "MOVE x 1", "GET y", "SET x v", "FLUSHALL", "GET x"]);
    mixed(
        &p,
        "m2",
        &[
            "GET a",
            "GET b",
            "SET b v",
            "SET a v",
            "GET z",
            "SET z v",
            "GET c",
            "PUBLISH ch m",
            "PUBLISH z m",
            "MGET a c",
            "MGET a b",
        ],
    );
    mixed(&p, "m3", &["GET k", "GET j", "SET k v", "SELECT 1", "GET j", "SET j v", "SELECT 0"]);
}
