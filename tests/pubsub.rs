//! Pub/sub against a real redis-server 7.0, in RESP2 and RESP3: every command's replies and
//! every message shape byte for byte, with a subscriber and a publisher on each server;
//! RESP2 subscriber mode, introspection, binary names, RESET, keyspace notifications
//! (including an expired key), and a slow subscriber cut off by its output-buffer limit.
//!
//! Replies whose order Valkey leaves to a hash table (unsubscribing from every channel,
//! PUBSUB CHANNELS, a channel matching several patterns) are compared sorted.

mod common;

use std::io::Read;
use std::time::{Duration, Instant};

use common::diff::{words, Pair};
use common::{info_int, start, start_valkey, Client, Val};

/// A subscriber and a publisher on ferrokey and on redis-server. The subscribers are the
/// pair's clients (speaking `proto`); the publishers speak RESP2.
struct Bus {
    p: Pair,
    pub_ours: Client,
    pub_theirs: Client,
}

impl Bus {
    fn start(proto: u8, args: &[&str]) -> Bus {
        let p = Pair::start(proto, args);
        let pub_ours = Client::connect(p.ours.port);
        let pub_theirs = Client::connect(p.theirs.port);
        Bus { p, pub_ours, pub_theirs }
    }

    /// `frames` replies from each subscriber, compared in order or sorted.
    fn read_frames(&mut self, what: &str, frames: usize, sorted: bool) {
        let mut ours: Vec<Vec<u8>> = (0..frames).map(|_| self.p.a.read_raw()).collect();
        let mut theirs: Vec<Vec<u8>> = (0..frames).map(|_| self.p.b.read_raw()).collect();
        if sorted {
            ours.sort();
            theirs.sort();
        }
        let text = |v: &[Vec<u8>]| -> Vec<String> {
            v.iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect()
        };
        self.p.assert_equal(what, text(&ours), text(&theirs));
    }

    /// The subscriber sends `line` and gets `frames` identical replies.
    fn sub(&mut self, line: &str, frames: usize) {
        self.send_sub(line);
        self.read_frames(line, frames, false);
    }

    /// As [`Bus::sub`], replies compared sorted.
    fn sub_sorted(&mut self, line: &str, frames: usize) {
        self.send_sub(line);
        self.read_frames(line, frames, true);
    }

    fn send_sub(&mut self, line: &str) {
        let argv = words(line);
        self.p.a.send(&argv);
        self.p.b.send(&argv);
    }

    /// The publisher sends `line` (identical replies), then the subscriber gets `frames`
    /// identical messages (compared sorted when `sorted`).
    fn publish_n(&mut self, line: &str, frames: usize, sorted: bool) {
        let argv = words(line);
        self.pub_ours.send(&argv);
        self.pub_theirs.send(&argv);
        let (ours, theirs) = (self.pub_ours.read_raw(), self.pub_theirs.read_raw());
        self.p.assert_same_raw(line, &ours, &theirs);
        self.read_frames(line, frames, sorted);
    }

    fn publish(&mut self, line: &str, frames: usize) {
        self.publish_n(line, frames, false);
    }

    /// The publisher sends `line`; identical replies.
    fn admin(&mut self, line: &str) {
        let argv = words(line);
        self.pub_ours.send(&argv);
        self.pub_theirs.send(&argv);
        let (ours, theirs) = (self.pub_ours.read_raw(), self.pub_theirs.read_raw());
        self.p.assert_same_raw(line, &ours, &theirs);
    }

    /// The publisher sends `line`; identical replies once the array is sorted.
    fn admin_sorted(&mut self, line: &str) {
        let argv = words(line);
        self.pub_ours.send(&argv);
        self.pub_theirs.send(&argv);
        let ours = common::sorted_reply(&self.pub_ours.read_raw());
        let theirs = common::sorted_reply(&self.pub_theirs.read_raw());
        self.p.assert_same_raw(line, &ours, &theirs);
    }
}

#[test]
fn confirmations_and_messages_match_redis() {
    for proto in [2, 3] {
        let mut b = Bus::start(proto, &[]);
        b.sub("SUBSCRIBE news sport news", 3);
        b.sub("PSUBSCRIBE n* s?ort n*", 3);
        b.sub("SSUBSCRIBE shard1 shard2", 2);
        // Channel subscribers first, then the matching pattern; both count.
        b.publish("PUBLISH news hello", 2);
        b.publish("PUBLISH sport goal", 2);
        b.publish("PUBLISH nothing x", 1);
        b.publish("PUBLISH other x", 0);
        b.publish("PUBLISH \"\" empty", 0);
        b.publish("PUBLISH news \"\"", 2);
        // Shard channels reach shard subscribers only, and patterns never match them.
        b.publish("SPUBLISH shard1 s-msg", 1);
        b.publish("SPUBLISH news s-msg", 0);
        b.publish("PUBLISH shard1 x", 0);
        b.sub("UNSUBSCRIBE sport nosuch", 2);
        b.publish("PUBLISH sport late", 1);
        b.sub_sorted("UNSUBSCRIBE", 1);
        b.sub("UNSUBSCRIBE", 1);
        b.sub("PUNSUBSCRIBE nosuch", 1);
        b.sub("PUNSUBSCRIBE", 2);
        b.sub("PUNSUBSCRIBE", 1);
        b.sub("SUNSUBSCRIBE shard2", 1);
        b.sub("SUNSUBSCRIBE", 1);
        b.sub("SUNSUBSCRIBE", 1);
        b.publish("PUBLISH news gone", 0);
    }
}

#[test]
fn several_patterns_and_subscribers() {
    for proto in [2, 3] {
        let mut b = Bus::start(proto, &[]);
        b.sub("PSUBSCRIBE a* *b [ab]b ab", 4);
        b.publish_n("PUBLISH ab m", 4, true);
        b.publish_n("PUBLISH axb m", 2, true);
        // A second subscriber on each server, subscribed after the first.
        let (mut ours, mut theirs) =
            (Client::connect(b.p.ours.port), Client::connect(b.p.theirs.port));
        let confirm = (ours.cmd(&["SUBSCRIBE", "ab"]), theirs.cmd(&["SUBSCRIBE", "ab"]));
        b.p.assert_equal("SUBSCRIBE ab", confirm.0, confirm.1);
        b.publish_n("PUBLISH ab again", 4, true);
        let (o, t) = (ours.read_raw(), theirs.read_raw());
        b.p.assert_same_raw("message to the second subscriber", &o, &t);
        b.admin("PUBSUB NUMSUB ab");
        b.admin("PUBSUB NUMPAT");
        b.admin("PUBLISH ab last");
    }
}

#[test]
fn subscriber_mode_allows_only_pubsub_commands_in_resp2() {
    let mut b = Bus::start(2, &[]);
    b.sub("UNSUBSCRIBE", 1);
    b.sub("GET x", 1); // Not subscribed: a normal client.
    b.sub("SUBSCRIBE c", 1);
    for line in [
        "GET x",
        "SET x 1",
        "HELLO 3",
        "CLIENT LIST",
        "CONFIG GET maxmemory",
        "PUBLISH c x",
        "PUBSUB NUMPAT",
        "PING",
        "PING hello",
        "PING a b",
        "NOSUCH x",
        "GET",
        "SUBSCRIBE",
        "PSUBSCRIBE",
        "SSUBSCRIBE",
    ] {
        b.sub(line, 1);
    }
    // Shard subscriptions alone keep the client in subscriber mode.
    b.sub("SSUBSCRIBE s", 1);
    b.sub("UNSUBSCRIBE", 1);
    b.sub("GET x", 1);
    b.sub("SUNSUBSCRIBE", 1);
    b.sub("GET x", 1);
    b.sub("PING", 1);
    b.sub("PSUBSCRIBE p", 1);
    b.sub("QUIT", 1);
    assert!(b.p.a.is_closed());
    let errors = info_int(&mut b.pub_ours, "stats", "total_error_replies");
    assert!(errors >= 9, "rejections count as error replies: {errors}");
}

#[test]
fn resp3_subscriber_runs_any_command_and_hears_itself() {
    let mut b = Bus::start(3, &[]);
    b.sub("SUBSCRIBE me", 1);
    b.sub("PSUBSCRIBE m*", 1);
    for line in ["SET k v", "GET k", "PING", "PING x", "ECHO e", "CLIENT SETNAME n"] {
        b.sub(line, 1);
    }
    // Its own messages follow the PUBLISH reply (Valkey 8+; redis 7.0 sent them before).
    b.sub("PUBLISH me hi", 3);
    b.sub("SSUBSCRIBE s", 1);
    b.sub("SPUBLISH s own", 2);
    b.sub("CONFIG SET notify-keyspace-events KEA", 1);
    b.sub("PSUBSCRIBE __key*__:*", 1);
    // SET notifies the subscriber itself: +OK, then two events.
    b.sub("SET k v2", 3);
    // Back to RESP2 (the HELLO maps name different servers): subscriber mode again.
    assert!(matches!(b.p.a.cmd(&["HELLO", "2"]), Val::Array(_)));
    assert!(matches!(b.p.b.cmd(&["HELLO", "2"]), Val::Array(_)));
    b.sub("GET k", 1);
    b.publish("PUBLISH me resp2", 2);
}

#[test]
fn introspection_matches_redis() {
    for proto in [2, 3] {
        let mut b = Bus::start(proto, &[]);
        b.admin("PUBSUB CHANNELS");
        b.admin("PUBSUB NUMSUB");
        b.admin("PUBSUB NUMPAT");
        b.sub("SUBSCRIBE alpha beta \"\"", 3);
        b.sub("PSUBSCRIBE al* al*", 2);
        b.sub("SSUBSCRIBE s1 s2", 2);
        for line in [
            "PUBSUB CHANNELS",
            "PUBSUB CHANNELS al*",
            "PUBSUB CHANNELS *",
            "PUBSUB CHANNELS x*",
            "PUBSUB SHARDCHANNELS",
            "PUBSUB SHARDCHANNELS s[2]",
        ] {
            b.admin_sorted(line);
        }
        for line in [
            "PUBSUB NUMSUB alpha beta nosuch alpha \"\"",
            "PUBSUB SHARDNUMSUB s1 s2 alpha",
            "PUBSUB SHARDNUMSUB",
            "PUBSUB NUMPAT",
            "PUBSUB HELP",
            "PUBSUB help",
            "PUBSUB",
            "PUBSUB NOSUCH",
            "PUBSUB NUMPAT x",
            "PUBSUB CHANNELS a b",
            "PUBSUB SHARDCHANNELS a b",
            "PUBSUB HELP x",
            "PUBLISH onlychannel",
            "SPUBLISH a b c",
            "COMMAND INFO subscribe unsubscribe psubscribe punsubscribe publish",
            "COMMAND INFO ssubscribe sunsubscribe spublish",
            "COMMAND INFO pubsub|channels pubsub|numsub pubsub|numpat pubsub|help",
            "COMMAND INFO pubsub|shardchannels pubsub|shardnumsub",
            "COMMAND GETKEYS ssubscribe a b",
        ] {
            b.admin(line);
        }
        for field in ["pubsub_channels", "pubsub_patterns", "pubsubshard_channels"] {
            let ours = info_int(&mut b.pub_ours, "stats", field);
            let theirs = info_int(&mut b.pub_theirs, "stats", field);
            b.p.assert_equal(field, ours, theirs);
        }
        assert_eq!(info_int(&mut b.pub_ours, "stats", "pubsub_channels"), 3);
        assert_eq!(info_int(&mut b.pub_ours, "clients", "pubsub_clients"), 1);
    }
}

#[test]
fn client_list_shows_subscriptions() {
    let s = start(&[]);
    let mut sub = Client::connect(s.port);
    let mut other = Client::connect(s.port);
    sub.send(&words("SUBSCRIBE a b"));
    sub.read();
    sub.read();
    sub.send(&words("PSUBSCRIBE p*"));
    sub.read();
    sub.send(&words("SSUBSCRIBE s"));
    sub.read();
    let list = other.cmd(&["CLIENT", "LIST", "TYPE", "pubsub"]).as_str();
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 1, "{list}");
    assert!(lines[0].contains(" flags=P capa= db=0 sub=2 psub=1 ssub=1 "), "{list}");
    let me = other.cmd(&["CLIENT", "INFO"]).as_str();
    assert!(me.contains(" flags=N capa= db=0 sub=0 psub=0 ssub=0 "), "{me}");
    assert_eq!(other.cmd(&["CLIENT", "KILL", "TYPE", "pubsub"]), Val::Int(1));
    assert!(sub.is_closed());
    // A closed subscriber leaves the registry.
    assert_eq!(other.cmd(&["PUBSUB", "NUMSUB", "a"]).as_array()[1], Val::Int(0));
    assert_eq!(other.cmd(&["PUBSUB", "NUMPAT"]), Val::Int(0));
    assert_eq!(other.cmd(&["PUBLISH", "a", "x"]), Val::Int(0));
    assert_eq!(info_int(&mut other, "clients", "pubsub_clients"), 0);
}

#[test]
fn binary_channels_and_messages() {
    for proto in [2, 3] {
        let mut b = Bus::start(proto, &[]);
        b.sub("SUBSCRIBE bin\0chan crlf\r\nchan", 2);
        b.sub("PSUBSCRIBE bin\0*", 1);
        b.publish("PUBLISH bin\0chan \0\u{1}\u{ff}\r\n", 2);
        b.publish("PUBLISH crlf\r\nchan \r\n", 1);
        b.publish("PUBLISH bin\0other \t", 1);
        b.admin("PUBSUB NUMSUB bin\0chan crlf\r\nchan");
        b.sub("UNSUBSCRIBE bin\0chan", 1);
        b.publish("PUBLISH bin\0chan again", 1);
    }
}

#[test]
fn reset_leaves_every_subscription() {
    for proto in [2, 3] {
        let mut b = Bus::start(proto, &[]);
        b.sub("SUBSCRIBE a", 1);
        b.sub("PSUBSCRIBE *", 1);
        b.sub("SSUBSCRIBE s", 1);
        b.sub("RESET", 1);
        b.publish("PUBLISH a x", 0);
        b.publish("SPUBLISH s x", 0);
        b.admin("PUBSUB NUMPAT");
        b.admin("PUBSUB NUMSUB a");
        b.admin("PUBSUB SHARDNUMSUB s");
        // Back to RESP2, out of subscriber mode.
        b.sub("GET x", 1);
        b.sub("UNSUBSCRIBE", 1);
    }
}

#[test]
fn keyspace_events_reach_pattern_subscribers() {
    for proto in [2, 3] {
        let mut b = Bus::start(proto, &[]);
        b.admin("CONFIG SET notify-keyspace-events KEA");
        b.sub("PSUBSCRIBE __key*__:*", 1);
        b.publish("SET k v", 2);
        b.publish("GET k", 0);
        b.admin("CONFIG SET notify-keyspace-events E$");
        b.publish("SET k v2", 1);
        b.admin("CONFIG SET notify-keyspace-events \"\"");
        b.publish("SET k v3", 0);
    }
}

#[test]
fn expired_key_is_announced() {
    for proto in [2, 3] {
        let mut b = Bus::start(proto, &[]);
        b.admin("CONFIG SET notify-keyspace-events Ex");
        b.sub("SUBSCRIBE __keyevent@0__:expired", 1);
        // Nobody reads the key: active expiry finds it and the message goes out at once.
        b.admin("SET k v PX 10");
        b.read_frames("expired event", 1, false);
        b.admin("EXISTS k");
    }
}

/// Reads until the server closes the connection (true), or gives up after `limit`.
fn drained_to_eof(c: &mut Client, limit: Duration) -> bool {
    let started = Instant::now();
    let mut buf = vec![0u8; 1 << 16];
    c.stream.get_ref().set_read_timeout(Some(Duration::from_millis(200))).ok();
    while started.elapsed() < limit {
        match c.stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => return true,
        }
    }
    false
}

/// A subscriber that does not read is disconnected once its output passes the `pubsub`
/// hard limit, on both servers; the publisher is unaffected.
#[test]
fn slow_subscriber_is_cut_off() {
    const MESSAGES: usize = 4000;
    let message = vec![b'm'; 8 * 1024];
    for (name, server) in [("ferrokey", start(&[])), ("valkey", start_valkey(&[]))] {
        let mut admin = Client::connect(server.port);
        let limit = admin.cmd(&["CONFIG", "SET", "client-output-buffer-limit", "pubsub 256kb 0 0"]);
        assert_eq!(limit, Val::ok(), "{name}");
        let mut sub = Client::connect(server.port);
        sub.send(&words("SUBSCRIBE flood"));
        let _ = sub.read();
        let mut publisher = Client::connect(server.port);
        let cmd = Client::encode(&[b"PUBLISH", b"flood", &message]);
        // 32 MiB: more than the socket buffers of both ends hold.
        let mut sent = 0;
        while sent < MESSAGES {
            let batch = 200.min(MESSAGES - sent);
            publisher.send_raw(&cmd.repeat(batch));
            for _ in 0..batch {
                assert!(matches!(publisher.read(), Val::Int(0 | 1)), "{name}");
            }
            sent += batch;
        }
        assert_eq!(publisher.cmd(&["PUBLISH", "flood", "after"]), Val::Int(0), "{name}");
        assert_eq!(admin.cmd(&["PUBSUB", "NUMSUB", "flood"]).as_array()[1], Val::Int(0));
        assert!(drained_to_eof(&mut sub, Duration::from_secs(10)), "{name}: still connected");
        if name == "ferrokey" {
            let cut = info_int(&mut admin, "stats", "client_output_buffer_limit_disconnections");
            assert_eq!(cut, 1);
        }
    }
}

/// Without a limit the same flood reaches a subscriber that reads late, complete and in
/// order.
#[test]
fn subscriber_reading_late_gets_everything() {
    let s = start(&[]);
    let mut sub = Client::connect(s.port);
    sub.send(&words("SUBSCRIBE c"));
    let _ = sub.read();
    let mut admin = Client::connect(s.port);
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 0 0"]),
        Val::ok()
    );
    let mut publisher = Client::connect(s.port);
    let big = vec![b'x'; 4096];
    for i in 0..2000 {
        let msg = [format!("{i}:").as_bytes(), &big].concat();
        publisher.send(&[b"PUBLISH", b"c", &msg]);
    }
    for _ in 0..2000 {
        assert_eq!(publisher.read(), Val::Int(1));
    }
    for i in 0..2000 {
        let m = sub.read().as_array();
        assert_eq!(m[0], Val::bulk("message"));
        assert!(m[2].as_str().starts_with(&format!("{i}:")));
    }
}

/// CLIENT PAUSE WRITE holds PUBLISH and SPUBLISH back (they may replicate), as
/// redis-server does; they run once the pause ends.
#[test]
fn pause_write_holds_publishing_back() {
    for (name, server) in [("ferrokey", start(&[])), ("valkey", start_valkey(&[]))] {
        let mut admin = Client::connect(server.port);
        let mut sub = Client::connect(server.port);
        assert_eq!(sub.cmd(&["SUBSCRIBE", "c"]).as_array().len(), 3);
        let mut publisher = Client::connect(server.port);
        assert_eq!(admin.cmd(&["CLIENT", "PAUSE", "100000", "WRITE"]), Val::ok(), "{name}");
        publisher.send(&words("PUBLISH c held"));
        // Reads still run while writes wait. (Which command CLIENT LIST shows for the
        // publisher depends on whether the server has read PUBLISH yet: not compared.)
        assert_eq!(admin.cmd(&["EXISTS", "c"]), Val::Int(0), "{name}");
        assert_eq!(admin.cmd(&["CLIENT", "UNPAUSE"]), Val::ok());
        assert_eq!(publisher.read(), Val::Int(1), "{name}");
        assert_eq!(sub.read().as_array()[2], Val::bulk("held"), "{name}");
    }
}

/// Inside EXEC, SUBSCRIBE and PSUBSCRIBE work (their confirmations in EXEC's array) while
/// SSUBSCRIBE is refused, as redis-server 7.0 does; the client leaves EXEC subscribed.
#[test]
fn subscribing_inside_exec() {
    for proto in [2, 3] {
        let mut b = Bus::start(proto, &[]);
        for line in ["MULTI", "SUBSCRIBE a", "SSUBSCRIBE s", "PSUBSCRIBE p*", "EXEC", "GET x"] {
            b.sub(line, 1);
        }
        b.publish("PUBLISH a m", 1);
        b.publish("PUBLISH pq m", 1);
    }
}

/// Under CLIENT REPLY OFF (and SKIP) pub/sub confirmations and messages still reach the
/// client, in RESP3 and RESP2, as Valkey's "pushing" replies do; the command's other replies
/// stay silent. Byte for byte with the Valkey 9.1 oracle.
#[test]
fn subscriptions_are_confirmed_under_client_reply_off() {
    for proto in ["2", "3"] {
        let mut got = Vec::new();
        for server in [start(&[]), common::start_valkey(&[])] {
            let mut sub = Client::connect(server.port);
            let mut publisher = Client::connect(server.port);
            if proto == "3" {
                assert!(matches!(sub.cmd(&["HELLO", "3"]), Val::Map(_)));
            }
            sub.send(&[b"CLIENT", b"REPLY", b"OFF"]);
            sub.send(&[b"GET", b"silent"]);
            sub.send(&[b"SUBSCRIBE", b"ch1", b"ch2"]);
            let mut seen = vec![sub.read_raw(), sub.read_raw()];
            assert_eq!(publisher.cmd(&["PUBLISH", "ch1", "hello"]), Val::Int(1));
            seen.push(sub.read_raw());
            sub.send(&[b"UNSUBSCRIBE", b"ch1"]);
            seen.push(sub.read_raw());
            if proto == "3" {
                // RESP3 lets a subscriber run any command: a PING's reply stays silent, and
                // CLIENT REPLY ON answers again.
                sub.send(&[b"PING"]);
                sub.send(&[b"CLIENT", b"REPLY", b"ON"]);
                seen.push(sub.read_raw());
            }
            got.push(seen);
        }
        assert_eq!(
            got[0].iter().map(|r| String::from_utf8_lossy(r).into_owned()).collect::<Vec<_>>(),
            got[1].iter().map(|r| String::from_utf8_lossy(r).into_owned()).collect::<Vec<_>>(),
            "RESP{proto} (left: ferrokey, right: valkey 9.1)"
        );
    }
}
