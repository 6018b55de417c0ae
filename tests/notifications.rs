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
