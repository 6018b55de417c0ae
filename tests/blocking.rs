//! The server side of blocking commands, over TCP: a blocked client stops running its queued
//! commands until it is served; INFO `blocked_clients` and CLIENT LIST flag `b`; CLIENT
//! UNBLOCK (TIMEOUT and ERROR); timeouts in RESP2 and RESP3; a blocked client that
//! disconnects; and keys made ready by RENAME, MOVE and SWAPDB as well as by pushes.
//! (Each blocking command's own semantics are tested with its family: tests/list.rs,
//! tests/zset.rs.)

mod common;

use std::time::{Duration, Instant};

use common::{bulk, err, info_int, int, start, Client, Val};

fn b(s: &str) -> &[u8] {
    s.as_bytes()
}

/// Waits until INFO says `n` clients are blocked (the blocking command has been run).
fn wait_blocked(c: &mut Client, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while info_int(c, "clients", "blocked_clients") != n {
        assert!(Instant::now() < deadline, "blocked_clients never reached {n}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn popped(key: &str, v: &str) -> Val {
    Val::Array(vec![bulk(key), bulk(v)])
}

#[test]
fn queued_commands_wait_for_the_blocked_one() {
    let s = start(&[]);
    let (mut a, mut c) = (Client::connect(s.port), Client::connect(s.port));
    // BLPOP and two more commands in one write: the later ones run only after BLPOP is served.
    let mut bytes = Client::encode(&[b("BLPOP"), b("q"), b("0")]);
    bytes.extend(Client::encode(&[b("SET"), b("after"), b("1")]));
    bytes.extend(Client::encode(&[b("PING")]));
    a.send_raw(&bytes);
    wait_blocked(&mut c, 1);
    assert_eq!(c.cmd(&["EXISTS", "after"]), int(0));
    let list = c.cmd(&["CLIENT", "LIST"]).as_str();
    assert!(list.lines().any(|l| l.contains("flags=b")), "{list}");
    assert_eq!(c.cmd(&["RPUSH", "q", "x"]), int(1));
    assert_eq!(a.read(), popped("q", "x"));
    assert_eq!(a.read(), Val::ok());
    assert_eq!(a.read(), Val::Simple("PONG".into()));
    assert_eq!(c.cmd(&["GET", "after"]), bulk("1"));
    assert_eq!(info_int(&mut c, "clients", "blocked_clients"), 0);
}

#[test]
fn timeouts_answer_null_in_both_protocols() {
    let s = start(&[]);
    let mut a = Client::connect(s.port);
    let t0 = Instant::now();
    assert_eq!(a.cmd_raw(&["BLPOP", "none", "0.1"]), b"*-1\r\n");
    assert!(t0.elapsed() >= Duration::from_millis(90), "{:?}", t0.elapsed());
    // Valkey (and redis 7.0) time every list block out with the null array, BRPOPLPUSH too.
    assert_eq!(a.cmd_raw(&["BRPOPLPUSH", "none", "dst", "0.05"]), b"*-1\r\n");
    assert!(matches!(a.cmd(&["HELLO", "3"]), Val::Map(_)));
    assert_eq!(a.cmd_raw(&["BLPOP", "none", "0.05"]), b"_\r\n");
    assert_eq!(a.cmd_raw(&["BZPOPMIN", "none", "0.05"]), b"_\r\n");
    assert_eq!(a.cmd_raw(&["BLMOVE", "none", "dst", "LEFT", "RIGHT", "0.05"]), b"_\r\n");
}

#[test]
fn client_unblock_with_timeout_or_error() {
    let s = start(&[]);
    let (mut a, mut c) = (Client::connect(s.port), Client::connect(s.port));
    let id = a.cmd(&["CLIENT", "ID"]).as_int().to_string();
    assert_eq!(c.cmd(&["CLIENT", "UNBLOCK", &id]), int(0));
    a.send(&[b("BLPOP"), b("k"), b("0")]);
    wait_blocked(&mut c, 1);
    assert_eq!(
        c.cmd(&["CLIENT", "UNBLOCK", &id, "SOMETIMES"]),
        err("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "UNBLOCK", "notanid"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(c.cmd(&["CLIENT", "UNBLOCK", &id]), int(1));
    assert_eq!(a.read(), Val::NilArray);
    a.send(&[b("BZPOPMAX"), b("z"), b("0")]);
    wait_blocked(&mut c, 1);
    assert_eq!(c.cmd(&["CLIENT", "UNBLOCK", &id, "ERROR"]), int(1));
    assert_eq!(a.read(), err("UNBLOCKED client unblocked via CLIENT UNBLOCK"));
    assert_eq!(a.cmd(&["PING"]), Val::Simple("PONG".into()));
    assert_eq!(info_int(&mut c, "clients", "blocked_clients"), 0);
}

#[test]
fn a_blocked_client_may_disconnect() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    {
        let mut a = Client::connect(s.port);
        a.send(&[b("BLPOP"), b("k"), b("0")]);
        wait_blocked(&mut c, 1);
    }
    wait_blocked(&mut c, 0);
    assert_eq!(c.cmd(&["RPUSH", "k", "v"]), int(1));
    assert_eq!(c.cmd(&["LLEN", "k"]), int(1));
}

#[test]
fn rename_move_and_swapdb_wake_waiters() {
    let s = start(&[]);
    let (mut a, mut c) = (Client::connect(s.port), Client::connect(s.port));
    // RENAME a list onto the awaited key.
    a.send(&[b("BLPOP"), b("target"), b("0")]);
    wait_blocked(&mut c, 1);
    assert_eq!(c.cmd(&["RPUSH", "src", "r"]), int(1));
    assert_eq!(c.cmd(&["RENAME", "src", "target"]), Val::ok());
    assert_eq!(a.read(), popped("target", "r"));
    // MOVE from another db.
    a.send(&[b("BZPOPMIN"), b("z"), b("0")]);
    wait_blocked(&mut c, 1);
    assert_eq!(c.cmd(&["SELECT", "1"]), Val::ok());
    assert_eq!(c.cmd(&["ZADD", "z", "5", "m"]), int(1));
    assert_eq!(c.cmd(&["MOVE", "z", "0"]), int(1));
    assert_eq!(a.read(), Val::Array(vec![bulk("z"), bulk("m"), bulk("5")]));
    // SWAPDB brings a db where the key has data.
    assert_eq!(c.cmd(&["RPUSH", "w", "from-db1"]), int(1));
    a.send(&[b("BRPOP"), b("w"), b("0")]);
    wait_blocked(&mut c, 1);
    assert_eq!(c.cmd(&["SWAPDB", "0", "1"]), Val::ok());
    assert_eq!(a.read(), popped("w", "from-db1"));
    // A string at the awaited key does not wake a list waiter.
    a.send(&[b("BLPOP"), b("s"), b("0.2")]);
    wait_blocked(&mut c, 1);
    assert_eq!(c.cmd(&["SELECT", "0"]), Val::ok());
    assert_eq!(c.cmd(&["SET", "s", "x"]), Val::ok());
    assert_eq!(c.cmd(&["RENAME", "s", "s2"]), Val::ok());
    assert_eq!(a.read(), Val::NilArray);
}

#[test]
fn waiters_are_served_in_arrival_order() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let mut waiters: Vec<Client> = (0..3).map(|_| Client::connect(s.port)).collect();
    for (i, w) in waiters.iter_mut().enumerate() {
        w.send(&[b("BLPOP"), b("other"), b("fifo"), b("0")]);
        wait_blocked(&mut c, i as i64 + 1);
    }
    assert_eq!(c.cmd(&["RPUSH", "fifo", "1", "2"]), int(2));
    assert_eq!(waiters[0].read(), popped("fifo", "1"));
    assert_eq!(waiters[1].read(), popped("fifo", "2"));
    wait_blocked(&mut c, 1);
    assert_eq!(c.cmd(&["LPUSH", "other", "3"]), int(1));
    assert_eq!(waiters[2].read(), popped("other", "3"));
}

/// `cmdstat_<name>:calls=N,...` of INFO commandstats, or 0.
fn calls(c: &mut Client, name: &str) -> i64 {
    let text = c.cmd(&["INFO", "commandstats"]).as_str();
    let prefix = format!("cmdstat_{name}:calls=");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map_or(0, |rest| rest.split(',').next().unwrap_or("0").parse().unwrap_or(0))
}

/// A command that blocks and is then served (or times out, or is unblocked) counts as one
/// call in commandstats and one slow-log entry, and MONITOR shows it once, as in Valkey: on
/// ferrokey and on the Valkey 9.1 oracle alike.
#[test]
fn a_blocked_command_counts_once() {
    for server in [start(&[]), common::start_valkey(&[])] {
        let port = server.port;
        let (mut monitor, mut admin) = common::monitor_and_client(port);
        let mut waiter = Client::connect(port);
        assert_eq!(admin.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]), Val::ok());
        assert_eq!(admin.cmd(&["SLOWLOG", "RESET"]), Val::ok());
        // Served.
        waiter.send(&[b("BLPOP"), b("q"), b("0")]);
        wait_blocked(&mut admin, 1);
        assert_eq!(admin.cmd(&["RPUSH", "q", "x"]), int(1));
        assert_eq!(waiter.read(), popped("q", "x"));
        // Timed out.
        assert_eq!(waiter.cmd(&["BLPOP", "q", "0.01"]), Val::NilArray);
        // Unblocked.
        waiter.send(&[b("BRPOP"), b("q"), b("0")]);
        wait_blocked(&mut admin, 1);
        let id = waiter_id(&mut admin);
        assert_eq!(admin.cmd(&["CLIENT", "UNBLOCK", &id]), int(1));
        assert_eq!(waiter.read(), Val::NilArray);
        assert_eq!(calls(&mut admin, "blpop"), 2, "port {port}");
        assert_eq!(calls(&mut admin, "brpop"), 1, "port {port}");
        let log = admin.cmd(&["SLOWLOG", "GET", "100"]).as_array();
        let named = |name: &str| {
            log.iter().filter(|e| e.as_array()[3].as_array()[0] == Val::bulk(name)).count()
        };
        assert_eq!((named("BLPOP"), named("BRPOP")), (2, 1), "port {port}: {log:?}");
        // MONITOR (which leaves out the admin commands CONFIG, SLOWLOG and CLIENT): each
        // blocking command once, between the commands around it.
        let mut lines = Vec::new();
        while lines.len() < 4 {
            let line = monitor.read().as_str();
            if !line.contains("\"INFO\"") && !line.contains("\"SLOWLOG\"") {
                lines.push(line);
            }
        }
        let words: Vec<&str> = lines.iter().map(|l| l.split('"').nth(1).unwrap_or("")).collect();
        assert_eq!(words, ["BLPOP", "RPUSH", "BLPOP", "BRPOP"], "port {port}: {lines:?}");
    }
}

/// The id of the client that runs BRPOP, from CLIENT LIST.
fn waiter_id(admin: &mut Client) -> String {
    let list = admin.cmd(&["CLIENT", "LIST"]).as_str();
    let line = list.lines().find(|l| l.contains("cmd=brpop")).expect("the blocked client");
    line.split(' ').find_map(|f| f.strip_prefix("id=")).expect("id").to_string()
}
