//! Keyspace notifications, differential against redis-server 7.0: the same script runs on
//! ferrokey and on redis-server, each with a subscriber on `__key*@*__:*`, and after every
//! command the messages each subscriber received are compared exactly (pattern, channel,
//! payload, order). A command's messages end where a sentinel PUBLISH (sent on the same
//! connection right after it) arrives, so every event is attributed to the command that
//! raised it.
//!
//! Script lines are words separated by single spaces (`""` is the empty argument); a line
//! starting with `?` has its reply left uncompared (random members), its events still are.

mod common;

use common::diff::words;
use common::{start, start_valkey, Client, Server, Val};

/// The channel of the sentinel message: matched by the subscribers' pattern, and never
/// raised by a command (no key of the scripts is named like it).
const SENTINEL_CHANNEL: &str = "__keyspace@0__:~sentinel~";

/// DEBUG SET-ACTIVE-EXPIRE is needed; redis-server 7.0 refuses DEBUG by default.
const DEBUG_ON: &[&str] = &["--enable-debug-command", "local"];

/// One server with a command connection and a subscribed one.
struct Side {
    server: Server,
    cmd: Client,
    sub: Client,
}

impl Side {
    fn new(server: Server, classes: &str, proto: u8) -> Side {
        let mut cmd = Client::connect(server.port);
        let mut sub = Client::connect(server.port);
        // Lazy expiry only: a key expires where the script reads it, never in between.
        assert_eq!(cmd.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), Val::ok());
        let set = cmd.cmd(&["CONFIG", "SET", "notify-keyspace-events", classes]);
        assert_eq!(set, Val::ok(), "notify-keyspace-events {classes}");
        if proto == 3 {
            assert!(matches!(sub.cmd(&["HELLO", "3"]), Val::Map(_)));
        }
        let ack = message(&sub.cmd(&["PSUBSCRIBE", "__key*@*__:*"]));
        assert_eq!(ack[0], "psubscribe");
        Side { server, cmd, sub }
    }

    /// Runs `args`; returns its raw reply and the notifications it raised, in order.
    fn run(&mut self, args: &[&[u8]]) -> (Vec<u8>, Vec<Vec<String>>) {
        self.cmd.send(args);
        let reply = self.cmd.read_raw();
        self.cmd.send(&[b"PUBLISH", SENTINEL_CHANNEL.as_bytes(), b"end"]);
        self.cmd.read_raw();
        let mut events = Vec::new();
        // Bounded: a script line raises a few dozen events at most.
        for _ in 0..1000 {
            let m = message(&self.sub.read());
            assert_eq!(m[0], "pmessage", "unexpected message {m:?}");
            if m[2] == SENTINEL_CHANNEL {
                return (reply, events);
            }
            events.push(m);
        }
        panic!("no sentinel after {args:?}");
    }
}

/// A pub/sub message (RESP2 array or RESP3 push) as its strings.
fn message(v: &Val) -> Vec<String> {
    v.as_array().iter().map(Val::as_str).collect()
}

/// Ferrokey and redis-server, both with `notify-keyspace-events` set to `classes`.
struct Pair {
    ours: Side,
    theirs: Side,
}

impl Pair {
    fn start(classes: &str, proto: u8) -> Pair {
        Pair {
            ours: Side::new(start(DEBUG_ON), classes, proto),
            theirs: Side::new(start_valkey(DEBUG_ON), classes, proto),
        }
    }

    /// Runs `line` on both servers: the same events, and the same reply unless the line
    /// starts with `?`.
    fn line(&mut self, line: &str) {
        let (compare_reply, line) = match line.strip_prefix('?') {
            Some(rest) => (false, rest),
            None => (true, line),
        };
        let args = words(line);
        let (ours_reply, ours_events) = self.ours.run(&args);
        let (theirs_reply, theirs_events) = self.theirs.run(&args);
        if compare_reply {
            assert_eq!(
                String::from_utf8_lossy(&ours_reply),
                String::from_utf8_lossy(&theirs_reply),
                "reply to {line:?} (left: ferrokey, right: redis-server)"
            );
        }
        assert_eq!(
            ours_events, theirs_events,
            "events of {line:?} (left: ferrokey, right: redis-server)"
        );
    }

    /// Runs `lines` on both servers and compares their replies one by one, but the events
    /// of all of them together: for work a server may do at either of two places (ferrokey
    /// evicts for a lowered maxmemory at the next command or time event, Valkey during
    /// CONFIG SET itself).
    fn lines_together(&mut self, lines: &[&str]) {
        let mut events = (Vec::new(), Vec::new());
        for line in lines {
            let args = words(line);
            let (ours_reply, ours_events) = self.ours.run(&args);
            let (theirs_reply, theirs_events) = self.theirs.run(&args);
            assert_eq!(
                String::from_utf8_lossy(&ours_reply),
                String::from_utf8_lossy(&theirs_reply),
                "reply to {line:?} (left: ferrokey, right: redis-server)"
            );
            events.0.extend(ours_events);
            events.1.extend(theirs_events);
        }
        assert_eq!(events.0, events.1, "events of {lines:?} (left: ferrokey, right: redis-server)");
    }

    fn script(&mut self, lines: &[&str]) {
        for line in lines {
            self.line(line);
        }
    }
}

/// Runs `lines` with every class (`KEA`), with new-key and key-miss events (`KEAnm`), and
/// with a few partial selections, in RESP2 and (once) RESP3.
fn same_events(lines: &[&str]) {
    for (classes, proto) in [("KEA", 2), ("KEAnm", 3), ("Kg$lshzn", 2), ("Exm", 2)] {
        let mut pair = Pair::start(classes, proto);
        pair.script(lines);
        // A final check that nothing was raised late (after a sentinel).
        pair.line("PING");
    }
}

#[test]
fn string_commands() {
    same_events(&[
        "SET a 1",
        "SET a 1 NX",
        "SET a 2 XX",
        "SET b 2 XX",
        "SET a 3 GET",
        "SET a 4 KEEPTTL",
        "SET a 5 EX 100",
        "SET a 5 EX 100 GET",
        "SET lst 1 GET",
        "SETNX a 1",
        "SETNX a2 1",
        "SETEX a 100 v",
        "PSETEX a 100000 v",
        "GETSET a v2",
        "GETSET newgs v",
        "GETDEL a",
        "GETDEL a",
        "SET a 1",
        "GETEX a",
        "GETEX a EX 100",
        "GETEX a PERSIST",
        "GETEX a PERSIST",
        "GETEX a PXAT 1",
        "GETEX nokey EX 10",
        "MGET a nokey a2",
        "MSET m1 1 m2 2 m1 3",
        "MSETNX m1 1 m3 3",
        "MSETNX m3 1 m4 3",
        "APPEND ap x",
        "APPEND ap y",
        "APPEND ap \"\"",
        "STRLEN nokey",
        "INCR i",
        "DECR i",
        "INCRBY i 5",
        "DECRBY i 5",
        "INCRBYFLOAT f 1.5",
        "INCR ap",
        "SETRANGE sr 5 x",
        "SETRANGE sr 0 \"\"",
        "SETRANGE sr2 0 \"\"",
        "SETRANGE sr 1 yz",
        "GETRANGE nokey 0 1",
        "LCS a2 nokey",
        "RPUSH lst x",
        "GET lst",
        "INCR lst",
        "APPEND lst x",
    ]);
}

#[test]
fn past_expire_times_and_lazy_expiry() {
    same_events(&[
        // SET with a time already past: an existing key expires at once, a missing one is
        // not written.
        "SET a 1 PXAT 1",
        "GET a",
        "SET a 1 EXAT 1",
        "SET a 2 PX 100 GET",
        "SET b 1",
        "PEXPIREAT b 1",
        "SET b 1",
        "EXPIRE b 0",
        "SET b 1",
        "PEXPIRE b -5",
        "SET c 1 PXAT 1",
        "EXISTS c",
        "SET c 1 PXAT 1",
        "LPUSH c x",
        "SET e 1 PXAT 1",
        "RENAME e f",
        "GETEX a PXAT 1",
        // Valkey 9.1: a past time on an existing key (any type) expires it, nothing else.
        "LPUSH l x",
        "SET l 1 PXAT 1",
        "SET g 1",
        "SET g 2 EXAT 1 XX GET",
        "SET h 1 EXAT 1 NX",
        "EXISTS g h l",
        "LPUSH m x",
        "EXPIRE m -1",
    ]);
}

#[test]
fn generic_commands() {
    same_events(&[
        "SET a 1",
        "SET b 2",
        "DEL a nokey b",
        "DEL a",
        "UNLINK a",
        "SET a 1",
        "SET b 1",
        "UNLINK a b c",
        "EXISTS a b",
        "TYPE nokey",
        "TOUCH nokey",
        "SET a 1",
        "TOUCH a",
        "RENAME a b",
        "RENAME b b",
        "RENAME nokey x",
        "RENAMENX b c",
        "SET d 1",
        "RENAMENX c d",
        "RENAMENX c c",
        "RENAME c d",
        "COPY d e",
        "COPY d e",
        "COPY d e REPLACE",
        "COPY nokey e",
        "COPY d c2 DB 1",
        "COPY d c2 DB 1 REPLACE",
        "MOVE d 1",
        "MOVE e 1",
        "SET e 1",
        "MOVE e 1",
        "MOVE nokey 1",
        "SET a 1",
        "EXPIRE a 100",
        "PEXPIRE a 100000",
        "EXPIREAT a 99999999999",
        "PEXPIREAT a 99999999999000",
        "EXPIRE a 100 NX",
        "EXPIRE a 100 XX",
        "EXPIRE nokey 10",
        "TTL a",
        "PTTL nokey",
        "EXPIRETIME nokey",
        "PEXPIRETIME nokey",
        "PERSIST a",
        "PERSIST a",
        "PERSIST nokey",
        "OBJECT ENCODING nokey",
        "OBJECT ENCODING a",
        "?RANDOMKEY",
        "DBSIZE",
        "FLUSHDB",
        "SET x 1",
        "SWAPDB 0 1",
        "FLUSHALL",
    ]);
}

#[test]
fn list_commands() {
    same_events(&[
        "LPUSH l a b c",
        "RPUSH l d",
        "LPUSHX nol a",
        "RPUSHX nol a",
        "LPUSHX l z",
        "RPUSHX l y",
        "LPOP l",
        "RPOP l",
        "LPOP l 2",
        "LPOP l 0",
        "RPOP nol",
        "LPOP nol 2",
        "LSET l 0 q",
        "LSET nol 0 q",
        "LSET l 10 q",
        "LINSERT l BEFORE q w",
        "LINSERT l BEFORE nothere w",
        "LINSERT nol BEFORE q w",
        "LREM l 0 nothere",
        "LREM l 0 q",
        "LTRIM l 0 -1",
        "LTRIM nol 0 -1",
        "RPUSH l2 a b c d",
        "LTRIM l2 1 2",
        "LTRIM l2 5 10",
        "RPUSH l3 a b",
        "LREM l3 0 a",
        "LREM l3 0 b",
        "RPUSH src a b",
        "LMOVE src dst LEFT RIGHT",
        "LMOVE src dst RIGHT LEFT",
        "RPUSH src a b",
        "RPOPLPUSH src src",
        "LMOVE src src LEFT RIGHT",
        "LMOVE nosrc dst LEFT LEFT",
        "SET str 1",
        "LMOVE src str LEFT LEFT",
        "LPOS nol a",
        "LINDEX nol 0",
        "LLEN nol",
        "LRANGE nol 0 -1",
        "RPUSH m a b c",
        "LMPOP 2 nol m LEFT COUNT 2",
        "LMPOP 2 nol m RIGHT COUNT 2",
        "LMPOP 1 nol LEFT",
        "BLPOP nol 0.01",
        "RPUSH m a",
        "BLPOP m 0.01",
        "RPUSH m x y",
        "BRPOPLPUSH m dd 0.01",
        "BLMOVE m dd RIGHT LEFT 0.01",
        "BLMPOP 0.01 1 dd LEFT COUNT 5",
        "LPOP l 100",
    ]);
}

#[test]
fn hash_commands() {
    same_events(&[
        "HSET h a 1 b 2",
        "HSET h a 1",
        "HSET h a 3",
        "HSETNX h a 1",
        "HSETNX h c 1",
        "HSETNX h2 c 1",
        "HMSET h a 9 z 1",
        "HDEL h nope",
        "HDEL nokey a",
        "HDEL h a b",
        "HDEL h c z",
        "HINCRBY h2 x 1",
        "HINCRBY h3 x 1",
        "HINCRBYFLOAT h2 y 1.5",
        "HINCRBYFLOAT h2 c 1.5",
        "HINCRBY h2 x notanumber",
        "HINCRBY h2 c 1",
        "HGET nh a",
        "HMGET nh a",
        "HLEN nh",
        "HGETALL nh",
        "HEXISTS nh a",
        "HSTRLEN nh a",
        "HKEYS nh",
        "HVALS nh",
        "HRANDFIELD nh",
        "HSCAN nh 0",
        "HGET h2 zz",
    ]);
}

#[test]
fn set_commands() {
    same_events(&[
        "SADD s a b",
        "SADD s a",
        "SREM s z",
        "SREM nos z",
        "SREM s a",
        "SREM s b",
        "SADD s a b c d",
        "SPOP s 0",
        "?SPOP s 1",
        "?SPOP s",
        "?SPOP s 10",
        "SPOP nos",
        "SPOP nos 3",
        "SADD s a b",
        "SMOVE s t a",
        "SMOVE s t a",
        "SMOVE s t zz",
        "SMOVE nos t a",
        "SADD t b",
        "SMOVE s t b",
        "SMOVE t t b",
        "SADD x 1 2",
        "SADD y 2 3",
        "SINTERSTORE d x y",
        "SINTERSTORE d x nokey",
        "SINTERSTORE d x nokey",
        "SUNIONSTORE d x y",
        "SUNIONSTORE d2 nok1 nok2",
        "SDIFFSTORE d x y",
        "SDIFFSTORE d x x",
        "SDIFFSTORE d x",
        "SINTER x nokey",
        "SUNION nokey",
        "SDIFF nokey",
        "SINTERCARD 1 nokey",
        "SISMEMBER nokey a",
        "SMISMEMBER nokey a",
        "SCARD nokey",
        "SMEMBERS nokey",
        "SRANDMEMBER nokey",
        "SSCAN nokey 0",
    ]);
}

#[test]
fn sorted_set_commands() {
    same_events(&[
        "ZADD z 1 a 2 b",
        "ZADD z 1 a",
        "ZADD z 3 a",
        "ZADD z NX 5 a",
        "ZADD z XX 5 c",
        "ZADD nz XX 5 c",
        "ZADD z INCR 1 a",
        "ZADD z INCR 0 a",
        "ZADD z XX INCR 1 nope",
        "ZADD z CH 9 a",
        "ZADD z GT 1 a",
        "ZINCRBY z 1 b",
        "ZINCRBY z 0 b",
        "ZINCRBY z2 1 b",
        "ZREM z nope",
        "ZREM z a",
        "ZADD z 1 a 2 b 3 c 4 d",
        "ZREMRANGEBYRANK z 10 20",
        "ZREMRANGEBYRANK z 0 0",
        "ZREMRANGEBYSCORE z 100 200",
        "ZREMRANGEBYSCORE z 2 2",
        "ZREMRANGEBYLEX z [x [y",
        "ZREMRANGEBYLEX z - +",
        "ZADD z 1 a 2 b 3 c",
        "ZPOPMIN z 0",
        "ZPOPMIN z",
        "ZPOPMAX z",
        "ZPOPMIN z 5",
        "ZPOPMIN nz",
        "ZADD z 1 a 2 b 3 c",
        "ZMPOP 2 nz z MIN COUNT 1",
        "ZMPOP 1 z MAX COUNT 5",
        "BZPOPMIN nz 0.01",
        "ZADD z 1 a",
        "BZPOPMAX z 0.01",
        "ZADD z 1 a 2 b",
        "BZMPOP 0.01 1 z MIN COUNT 1",
        "ZADD z 1 a 2 b",
        "ZADD y 2 b 3 c",
        "ZUNIONSTORE d 2 z y",
        "ZINTERSTORE d 2 z y",
        "ZINTERSTORE d 2 z nz",
        "ZINTERSTORE d 2 z nz",
        "ZDIFFSTORE d 2 z y",
        "ZDIFFSTORE d 2 z z",
        "ZRANGESTORE d z 0 -1",
        "ZRANGESTORE d z 5 6",
        "ZRANGESTORE d2 z 5 6",
        "ZUNIONSTORE d3 1 nz",
        "ZUNION 1 nz",
        "ZINTER 2 z nz",
        "ZDIFF 1 nz",
        "ZINTERCARD 2 z nz",
        "ZCARD nz",
        "ZCOUNT nz 0 1",
        "ZSCORE nz a",
        "ZMSCORE nz a",
        "ZRANK nz a",
        "ZRANGE nz 0 1",
        "ZRANGEBYSCORE nz 0 1",
        "ZRANDMEMBER nz",
        "ZSCAN nz 0",
        "ZLEXCOUNT nz - +",
    ]);
}

#[test]
fn sort_commands() {
    same_events(&[
        "RPUSH l 3 1 2",
        "SORT l STORE d",
        "SORT l STORE d",
        "SORT nol STORE d",
        "SORT nol STORE d",
        "SORT l BY w_* STORE d2",
        "SORT l BY w_* GET o_* STORE d3",
        "SORT l BY nosort STORE d4",
        "SORT l",
        "SORT nol",
        "SORT_RO nol",
        "SORT l BY w_*",
        "SORT l GET o_* GET #",
        "SADD s 1",
        "SORT s STORE d5",
        "HSET w_1 f 1",
        "SORT l BY w_*->f",
        "SET o_2 x",
        "SORT l GET o_* STORE l",
    ]);
}

/// Streams: the entry commands, and the consumer group ones, which raise `xgroup-*` events
/// only (and `xgroup-createconsumer` wherever a consumer is made); XACK and claims raise none.
#[test]
fn stream_commands() {
    same_events(&[
        "XADD s 1-1 a 1",
        "XADD s 2-1 b 2",
        "XADD s MAXLEN 1 3-1 c 3",
        "XADD nos NOMKSTREAM * a 1",
        "XDEL s 3-1",
        "XDEL s 9-9",
        "XADD s 4-1 d 4",
        "XADD s 5-1 e 5",
        "XTRIM s MAXLEN 1",
        "XTRIM s MAXLEN 1",
        "XSETID s 9-9",
        "XGROUP CREATE s g 0",
        "XGROUP CREATE s g 0",
        "XGROUP CREATE new g 0 MKSTREAM",
        "XGROUP SETID s g 0",
        "XGROUP CREATECONSUMER s g c0",
        "XGROUP CREATECONSUMER s g c0",
        "XREADGROUP GROUP g c1 STREAMS s >",
        "XREADGROUP GROUP g c1 STREAMS s >",
        "XREADGROUP GROUP g c2 NOACK STREAMS s 0",
        "XACK s g 5-1",
        "XADD s 6-1 f 6",
        "XREADGROUP GROUP g c1 STREAMS s >",
        "XCLAIM s g c3 0 6-1",
        "XAUTOCLAIM s g c4 0 0",
        "XGROUP DELCONSUMER s g c4",
        "XGROUP DELCONSUMER s g nobody",
        "XGROUP DESTROY s g",
        "XGROUP DESTROY s g",
        "XREAD STREAMS s 0",
        "DEL s",
    ]);
}

/// A client blocked on a list is served after the push that wakes it: the pusher's events,
/// then the pop (and the deletion of the emptied list).
#[test]
fn blocked_pops_raise_their_events_when_served() {
    for (block, push) in [
        ("BLPOP bl 0", "RPUSH bl a"),
        ("BLMOVE bl dst LEFT RIGHT 0", "LPUSH bl a b"),
        ("BZPOPMIN bz 0", "ZADD bz 1 a"),
        ("BLMPOP 0 2 x bl RIGHT COUNT 2", "RPUSH bl a b c"),
    ] {
        let mut pair = Pair::start("KEAn", 2);
        let mut waiters = Vec::new();
        for side in [&mut pair.ours, &mut pair.theirs] {
            let mut waiter = Client::connect(side.server.port);
            waiter.send(&words(block));
            // The waiter is blocked once CLIENT LIST shows it (flag b).
            for _ in 0..500 {
                let list = side.cmd.cmd(&["CLIENT", "LIST"]).as_str();
                if list.lines().any(|l| l.contains("flags=b")) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            waiters.push(waiter);
        }
        pair.line(push);
        for w in &mut waiters {
            w.read_raw();
        }
        pair.line("PING");
    }
}

/// maxmemory eviction raises `evicted` (class e); the refused write after it raises nothing.
#[test]
fn evicted_keys() {
    for classes in ["KEA", "Ee", "K$"] {
        let mut pair = Pair::start(classes, 2);
        pair.script(&["SET a 1", "CONFIG SET maxmemory-policy allkeys-lru"]);
        pair.lines_together(&["CONFIG SET maxmemory 1", "SET b 2"]);
        pair.script(&["GET a", "CONFIG SET maxmemory 0", "SET b 2"]);
    }
}

// ---------------------------------------------------------------------------------------
// Every write command of the table has all of a write's effects.
// ---------------------------------------------------------------------------------------

/// One invocation per write command of the table, after `setup`, that changes key `k` of
/// database 0 (`watched` is the key whose effects are checked when it is not `k`).
struct WriteCase {
    setup: &'static [&'static [&'static str]],
    cmd: &'static [&'static str],
    watched: &'static str,
    /// A change to a stream's consumer groups only: Valkey 9.1 fails no WATCH and tells no
    /// tracking client for it, and raises an event only for some (checked against it in
    /// `tests/stream`); the dirty counter and the feed move as for any write.
    group: bool,
}

const fn case(
    setup: &'static [&'static [&'static str]],
    cmd: &'static [&'static str],
) -> WriteCase {
    WriteCase { setup, cmd, watched: "k", group: false }
}

const LIST: &[&[&str]] = &[&["RPUSH", "k", "a", "b", "c"]];
const ZSET: &[&[&str]] = &[&["ZADD", "k", "1", "a", "2", "b", "3", "c"]];
const SET2: &[&[&str]] = &[&["SADD", "s1", "a", "b"], &["SADD", "s2", "b", "c"]];
const ZSET2: &[&[&str]] = &[&["ZADD", "z1", "1", "a", "2", "b"], &["ZADD", "z2", "1", "b"]];
const STR: &[&[&str]] = &[&["SET", "k", "10"]];
const HASH: &[&[&str]] = &[&["HSET", "k", "f", "1"]];
const HASH_VOLATILE: &[&[&str]] = &[&["HSETEX", "k", "EX", "100", "FIELDS", "1", "f", "1"]];
const STREAM: &[&[&str]] = &[&["XADD", "k", "1-1", "a", "1"], &["XADD", "k", "2-1", "b", "2"]];
const GROUP: &[&[&str]] = &[&["XADD", "k", "1-1", "a", "1"], &["XGROUP", "CREATE", "k", "g", "0"]];
const PENDING: &[&[&str]] = &[
    &["XADD", "k", "1-1", "a", "1"],
    &["XGROUP", "CREATE", "k", "g", "0"],
    &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", ">"],
];

const fn group_case(
    setup: &'static [&'static [&'static str]],
    cmd: &'static [&'static str],
) -> WriteCase {
    WriteCase { setup, cmd, watched: "k", group: true }
}

fn write_cases() -> Vec<WriteCase> {
    vec![
        case(STR, &["APPEND", "k", "x"]),
        case(STR, &["BITFIELD", "k", "SET", "u8", "0", "255"]),
        case(STR, &["BITOP", "NOT", "k", "k"]),
        case(LIST, &["BLMOVE", "k", "k2", "LEFT", "RIGHT", "0"]),
        case(STR, &["DELIFEQ", "k", "10"]),
        case(LIST, &["BLMPOP", "0", "1", "k", "LEFT"]),
        case(LIST, &["BLPOP", "k", "0"]),
        case(LIST, &["BRPOP", "k", "0"]),
        case(LIST, &["BRPOPLPUSH", "k", "k2", "0"]),
        case(ZSET, &["BZMPOP", "0", "1", "k", "MIN"]),
        case(ZSET, &["BZPOPMAX", "k", "0"]),
        case(ZSET, &["BZPOPMIN", "k", "0"]),
        WriteCase { setup: STR, cmd: &["COPY", "k", "k2"], watched: "k2", group: false },
        case(STR, &["DECR", "k"]),
        case(STR, &["DECRBY", "k", "2"]),
        case(STR, &["DEL", "k"]),
        case(STR, &["EXPIRE", "k", "100"]),
        case(STR, &["EXPIREAT", "k", "99999999999"]),
        case(STR, &["FLUSHALL"]),
        case(STR, &["FLUSHDB"]),
        case(&[], &["GEOADD", "k", "13.361389", "38.115556", "Palermo"]),
        case(
            &[&["GEOADD", "src", "1", "1", "a"]],
            &["GEORADIUS", "src", "1", "1", "9", "km", "STORE", "k"],
        ),
        case(
            &[&["GEOADD", "src", "1", "1", "a"]],
            &["GEORADIUSBYMEMBER", "src", "a", "9", "km", "STOREDIST", "k"],
        ),
        case(
            &[&["GEOADD", "src", "1", "1", "a"]],
            &["GEOSEARCHSTORE", "k", "src", "FROMMEMBER", "a", "BYRADIUS", "9", "km"],
        ),
        case(STR, &["GETDEL", "k"]),
        case(STR, &["GETEX", "k", "EX", "100"]),
        case(STR, &["GETSET", "k", "v"]),
        case(HASH, &["HDEL", "k", "f"]),
        case(HASH, &["HINCRBY", "k", "f", "1"]),
        case(HASH, &["HINCRBYFLOAT", "k", "f", "1.5"]),
        case(&[], &["HMSET", "k", "f", "v"]),
        case(&[], &["HSET", "k", "f", "v"]),
        case(HASH, &["HEXPIRE", "k", "100", "FIELDS", "1", "f"]),
        case(HASH, &["HPEXPIRE", "k", "100000", "FIELDS", "1", "f"]),
        case(HASH, &["HEXPIREAT", "k", "4000000000", "FIELDS", "1", "f"]),
        case(HASH, &["HPEXPIREAT", "k", "4000000000000", "FIELDS", "1", "f"]),
        case(HASH_VOLATILE, &["HPERSIST", "k", "FIELDS", "1", "f"]),
        case(&[], &["HSETEX", "k", "EX", "100", "FIELDS", "1", "f", "v"]),
        case(HASH, &["HGETEX", "k", "EX", "100", "FIELDS", "1", "f"]),
        case(HASH, &["HGETDEL", "k", "FIELDS", "1", "f"]),
        case(&[], &["HSETNX", "k", "f", "v"]),
        case(STR, &["INCR", "k"]),
        case(STR, &["INCRBY", "k", "2"]),
        case(STR, &["INCRBYFLOAT", "k", "0.5"]),
        case(LIST, &["LINSERT", "k", "BEFORE", "b", "x"]),
        case(LIST, &["LMOVE", "k", "k2", "LEFT", "RIGHT"]),
        case(LIST, &["LMPOP", "1", "k", "RIGHT"]),
        case(LIST, &["LPOP", "k"]),
        case(&[], &["LPUSH", "k", "x"]),
        case(LIST, &["LPUSHX", "k", "x"]),
        case(LIST, &["LREM", "k", "0", "a"]),
        case(LIST, &["LSET", "k", "0", "z"]),
        case(LIST, &["LTRIM", "k", "0", "0"]),
        case(STR, &["MOVE", "k", "1"]),
        case(&[], &["MSET", "k", "1", "k3", "2"]),
        case(&[], &["MSETNX", "k", "1", "k3", "2"]),
        case(&[&["SET", "k", "v", "EX", "100"]], &["PERSIST", "k"]),
        case(STR, &["PEXPIRE", "k", "100000"]),
        case(STR, &["PEXPIREAT", "k", "99999999999000"]),
        case(&[], &["PFADD", "k", "a"]),
        // Valkey 9.1 counts and logs PFDEBUG's conversion and tells nobody: no event, no
        // WATCH or tracking signal (checked against it in tests/strings/hll.rs).
        WriteCase {
            setup: &[&["PFADD", "k", "a"]],
            cmd: &["PFDEBUG", "TODENSE", "k"],
            watched: "k",
            group: true,
        },
        case(&[&["PFADD", "s1", "a"]], &["PFMERGE", "k", "s1"]),
        case(&[], &["PSETEX", "k", "100000", "v"]),
        case(STR, &["RENAME", "k", "k2"]),
        case(STR, &["RENAMENX", "k", "k2"]),
        case(&[&["SET", "src", "payload"]], &["RESTORE", "k", "0", "<dump of src>"]),
        case(&[&["SET", "src", "payload"]], &["RESTORE-ASKING", "k", "0", "<dump of src>"]),
        // Moved to another server: deleted here.
        case(STR, &["MIGRATE", "127.0.0.1", "<target port>", "k", "0", "5000"]),
        case(LIST, &["RPOP", "k"]),
        case(LIST, &["RPOPLPUSH", "k", "k2"]),
        case(&[], &["RPUSH", "k", "x"]),
        case(LIST, &["RPUSHX", "k", "x"]),
        case(&[], &["SADD", "k", "x"]),
        case(SET2, &["SDIFFSTORE", "k", "s1", "s2"]),
        case(&[], &["SET", "k", "v"]),
        case(STR, &["SET", "k", "v2", "IFEQ", "10", "EX", "100"]),
        case(&[], &["MSETEX", "2", "k", "v", "k2", "v", "PX", "100000"]),
        case(STR, &["SETBIT", "k", "1", "1"]),
        case(&[], &["SETEX", "k", "100", "v"]),
        case(&[], &["SETNX", "k", "v"]),
        case(STR, &["SETRANGE", "k", "1", "x"]),
        case(SET2, &["SINTERSTORE", "k", "s1", "s2"]),
        case(&[&["SADD", "k", "a", "b"]], &["SMOVE", "k", "k2", "a"]),
        case(LIST, &["SORT", "k", "ALPHA", "STORE", "k"]),
        case(&[&["SADD", "k", "a", "b"]], &["SPOP", "k"]),
        case(&[&["SADD", "k", "a", "b"]], &["SREM", "k", "a"]),
        case(SET2, &["SUNIONSTORE", "k", "s1", "s2"]),
        case(STR, &["SWAPDB", "0", "1"]),
        case(STR, &["UNLINK", "k"]),
        case(&[], &["ZADD", "k", "1", "a"]),
        case(ZSET2, &["ZDIFFSTORE", "k", "2", "z1", "z2"]),
        case(ZSET, &["ZINCRBY", "k", "1", "a"]),
        case(ZSET2, &["ZINTERSTORE", "k", "2", "z1", "z2"]),
        case(ZSET, &["ZMPOP", "1", "k", "MAX"]),
        case(ZSET, &["ZPOPMAX", "k"]),
        case(ZSET, &["ZPOPMIN", "k"]),
        case(ZSET2, &["ZRANGESTORE", "k", "z1", "0", "-1"]),
        case(ZSET, &["ZREM", "k", "a"]),
        case(&[&["ZADD", "k", "0", "a", "0", "b"]], &["ZREMRANGEBYLEX", "k", "[a", "[a"]),
        case(ZSET, &["ZREMRANGEBYRANK", "k", "0", "0"]),
        case(ZSET, &["ZREMRANGEBYSCORE", "k", "1", "1"]),
        case(ZSET2, &["ZUNIONSTORE", "k", "2", "z1", "z2"]),
        case(&[], &["XADD", "k", "*", "f", "v"]),
        case(STREAM, &["XDEL", "k", "1-1"]),
        case(STREAM, &["XSETID", "k", "5-5"]),
        case(STREAM, &["XTRIM", "k", "MAXLEN", "1"]),
        group_case(PENDING, &["XACK", "k", "g", "1-1"]),
        group_case(PENDING, &["XAUTOCLAIM", "k", "g", "c2", "0", "0"]),
        group_case(PENDING, &["XCLAIM", "k", "g", "c2", "0", "1-1"]),
        group_case(GROUP, &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", ">"]),
    ]
}

/// Reads what `c` has been sent up to the PONG of a PING sent now; returns what came before.
fn drain_to_pong(c: &mut Client) -> Vec<Val> {
    c.send(&[b"PING"]);
    let mut got = Vec::new();
    loop {
        match c.read() {
            Val::Simple(s) if s == "PONG" => return got,
            v => got.push(v),
        }
    }
}

/// Every write command of the table, run once so that it changes a key, has each of the
/// consequences of a write: the dirty counter of the save points moves, a keyspace event is
/// published, a WATCH of the key fails EXEC, a client tracking the key is told to drop it,
/// and the command reaches the propagation feed (the AOF grows). The test fails when the
/// table gains a write command it has no case for.
#[test]
fn every_write_command_has_all_the_effects_of_a_write() {
    let dir = common::unique_dir("effects");
    let dir_s = dir.display().to_string();
    let s = start(&["--appendonly", "yes", "--dir", &dir_s, "--notify-keyspace-events", "KEA"]);
    let mut w = Client::connect(s.port);
    let mut watcher = Client::connect(s.port);
    let mut tracker = Client::connect(s.port);
    assert!(matches!(tracker.cmd(&["HELLO", "3"]), Val::Map(_)));
    assert_eq!(tracker.cmd(&["CLIENT", "TRACKING", "ON"]), Val::ok());
    let mut sub = Client::connect(s.port);
    sub.send(&[b"PSUBSCRIBE", b"__keyevent@*__:*", b"__keyspace@*__:*"]);
    sub.read();
    sub.read();
    let cases = write_cases();
    // MIGRATE's target.
    let target = start(&[]);
    // Every command the table flags `write` has a case.
    for name in &common::write_commands(&mut w) {
        assert!(
            cases.iter().any(|c| c.cmd[0].eq_ignore_ascii_case(name)),
            "no effects case for the write command {name}"
        );
    }
    for c in &cases {
        let what = c.cmd.join(" ");
        assert_eq!(w.cmd(&["FLUSHALL"]), Val::ok());
        for line in c.setup {
            let r = w.cmd(line);
            assert!(!matches!(r, Val::Err(_)), "{what}: setup {line:?}: {r:?}");
        }
        let mut cmd: Vec<Vec<u8>> = c.cmd.iter().map(|a| a.as_bytes().to_vec()).collect();
        if c.cmd[0].starts_with("RESTORE") {
            let Val::Bulk(payload) = w.cmd(&["DUMP", "src"]) else { panic!("DUMP") };
            cmd[3] = payload;
        }
        if c.cmd[0] == "MIGRATE" {
            cmd[2] = target.port.to_string().into_bytes();
        }
        // The watcher watches the key, the tracker has read it: both after the setup.
        assert_eq!(watcher.cmd(&["WATCH", c.watched]), Val::ok());
        tracker.cmd(&["EXISTS", c.watched]);
        drain_to_pong(&mut tracker);
        let marker = |sub: &mut Client, w: &mut Client, tag: &str| {
            let channel = format!("__keyspace@0__:~marker-{tag}~");
            w.cmd(&["PUBLISH", &channel, "x"]);
            let mut got = Vec::new();
            loop {
                let m = sub.read().as_array();
                if m[2].as_str() == channel {
                    return got;
                }
                got.push(m);
            }
        };
        marker(&mut sub, &mut w, "before");
        let dirty = common::info_int(&mut w, "persistence", "rdb_changes_since_last_save");
        let aof = common::info_int(&mut w, "persistence", "aof_current_size");
        let args: Vec<&[u8]> = cmd.iter().map(|a| a.as_slice()).collect();
        let r = w.cmd_b(&args);
        assert!(!matches!(r, Val::Err(_)), "{what}: {r:?}");
        // The dirty counter of the save points.
        let dirty_after = common::info_int(&mut w, "persistence", "rdb_changes_since_last_save");
        assert!(dirty_after > dirty, "{what}: dirty {dirty} then {dirty_after}");
        // The propagation feed, through its consumer.
        let aof_after = common::info_int(&mut w, "persistence", "aof_current_size");
        assert!(aof_after > aof, "{what}: AOF {aof} then {aof_after} bytes");
        // A keyspace event (Valkey raises none for emptying or swapping whole databases).
        let events = marker(&mut sub, &mut w, "after");
        let whole_db = matches!(c.cmd[0], "FLUSHALL" | "FLUSHDB" | "SWAPDB");
        let silent = whole_db || matches!(c.cmd[0], "XACK" | "PFDEBUG");
        assert!(silent || !events.is_empty(), "{what}: no keyspace event");
        if c.group {
            assert_eq!(watcher.cmd(&["UNWATCH"]), Val::ok());
            drain_to_pong(&mut tracker);
            continue;
        }
        // WATCH.
        assert_eq!(watcher.cmd(&["MULTI"]), Val::ok());
        watcher.cmd(&["PING"]);
        let exec = watcher.cmd(&["EXEC"]);
        assert!(matches!(exec, Val::Nil | Val::NilArray), "{what}: EXEC after a write: {exec:?}");
        // Client tracking (Valkey 9.1 tells tracking clients nothing on SWAPDB).
        let pushes = drain_to_pong(&mut tracker);
        let told = pushes.iter().any(|p| match p {
            Val::Push(v) => v.len() == 2 && v[0].as_str() == "invalidate",
            _ => false,
        });
        assert!(
            told || c.cmd[0] == "SWAPDB",
            "{what}: the tracking client was not told: {pushes:?}"
        );
        // Blocked clients are woken by the writes that add to a list or sorted set: their
        // own tests (blocking.rs) cover each such command.
    }
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}
