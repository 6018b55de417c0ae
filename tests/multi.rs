//! Transactions against a real redis-server 7.0, byte for byte in RESP2 and RESP3: queuing,
//! EXEC replies with run-time errors inside, EXECABORT cases, the commands that act on the
//! transaction itself, WATCH invalidated by every kind of change (and not by reads or by
//! other keys and dbs), expiry of watched keys, OOM inside MULTI, MONITOR's view; plus the
//! server's own INFO counters and the bound on a transaction's queue.

mod common;

use std::thread::sleep;
use std::time::Duration;

use common::diff::{same_as_valkey, words, Pair};
use common::{info_int, start, Client, Val};

/// Both protocols, one fresh pair of servers each.
fn each_proto(mut f: impl FnMut(&mut Pair)) {
    for proto in [2, 3] {
        let mut p = Pair::start(proto, &[]);
        f(&mut p);
    }
}

/// A second client on each server of the pair (speaking RESP2).
fn others(p: &Pair) -> (Client, Client) {
    (Client::connect(p.ours.port), Client::connect(p.theirs.port))
}

/// The same command from the second clients, same replies.
fn other_same(p: &Pair, o: &mut (Client, Client), line: &str) {
    let argv = words(line);
    o.0.send(&argv);
    o.1.send(&argv);
    let (ours, theirs) = (o.0.read_raw(), o.1.read_raw());
    p.assert_same_raw(format!("other client: {line}"), &ours, &theirs);
}

#[test]
fn queued_commands_run_in_order_with_runtime_errors_in_the_array() {
    same_as_valkey(&[
        "MULTI",
        "SET a 1",
        "INCR a",
        "SET b x",
        "INCR b",
        "LPUSH b x",
        "GET a",
        "HSET h f v",
        "HGETALL h",
        "ZADD z 1 m",
        "ZRANGE z 0 -1 WITHSCORES",
        "SELECT 1",
        "SET a other-db",
        "EXEC",
        "GET a",
        "SELECT 0",
        "GET a",
        // An empty transaction.
        "MULTI",
        "EXEC",
        // UNWATCH is queued like any command.
        "MULTI",
        "UNWATCH",
        "PING",
        "ECHO hi",
        "EXEC",
    ]);
}

#[test]
fn errors_while_queuing_abort_exec() {
    same_as_valkey(&[
        "MULTI",
        "SET a 1",
        "NOSUCHCOMMAND x y",
        "SET a 2",
        "EXEC",
        "GET a",
        // Wrong arity.
        "MULTI",
        "SET a",
        "EXEC",
        // An unknown subcommand.
        "MULTI",
        "CONFIG NOSUCH",
        "EXEC",
        // A no-multi command.
        "MULTI",
        "SET a 3",
        "SHUTDOWN",
        "EXEC",
        "GET a",
        // DISCARD with arguments is refused, and that fails the transaction too.
        "MULTI",
        "DISCARD x",
        "EXEC",
        // EXEC refused for its arity aborts and ends the transaction at once.
        "MULTI",
        "SET a 4",
        "EXEC x",
        "EXEC",
        "GET a",
    ]);
}

#[test]
fn transaction_commands_themselves() {
    same_as_valkey(&[
        "EXEC",
        "DISCARD",
        "UNWATCH",
        "MULTI",
        "MULTI",
        "WATCH a",
        "SET a 1",
        // Valkey 9 refuses both as no-multi commands: EXEC then fails with EXECABORT.
        "EXEC",
        "MULTI",
        "SET a 2",
        "DISCARD",
        "GET a",
        "EXEC",
        "MULTI x",
        "WATCH",
        "UNWATCH x",
    ]);
}

#[test]
fn blocking_commands_inside_exec_do_not_block() {
    same_as_valkey(&[
        "MULTI",
        "BLPOP empty 0",
        "BRPOPLPUSH empty dst 0",
        "BZPOPMIN emptyz 0",
        "BLMPOP 0 1 empty LEFT",
        "RPUSH l a",
        "BLPOP l 0",
        "EXEC",
    ]);
}

#[test]
fn reset_and_quit_inside_multi() {
    same_as_valkey(&[
        "MULTI", "SET a 1", "RESET", "EXEC", "GET a", "WATCH a", "RESET", "MULTI", "EXEC",
    ]);
    each_proto(|p| {
        p.same_lines(&["MULTI", "SET a 1", "QUIT"]);
        assert!(p.a.is_closed() && p.b.is_closed());
    });
}

/// `setup` lines, `WATCH k`, `change` lines (each compared), then a transaction: EXEC must
/// fail (null) or run the same way on both servers.
fn watch_case(p: &mut Pair, setup: &[&str], change: &[&str]) {
    p.same_lines(&["SELECT 0", "FLUSHALL"]);
    p.same_lines(setup);
    p.same_lines(&["SELECT 0", "WATCH k"]);
    p.same_lines(change);
    p.same_lines(&["SELECT 0", "MULTI", "SET k watched-ok", "EXEC", "GET k"]);
}

#[test]
fn watch_is_invalidated_by_every_write_to_the_key() {
    each_proto(|p| {
        for (setup, change) in [
            (&["SET k v"][..], &["SET k w"][..]),
            (&["SET k v"], &["SET k v"]),
            (&[], &["SET k v"]),
            (&["SET k v"], &["DEL k"]),
            (&["SET k v"], &["UNLINK k"]),
            (&["SET k v"], &["EXPIRE k 100"]),
            (&["SET k v EX 100"], &["PERSIST k"]),
            (&["SET k 1"], &["INCR k"]),
            (&["SET k a"], &["APPEND k b"]),
            (&[], &["LPUSH k a"]),
            (&["RPUSH k a b"], &["LPOP k"]),
            (&[], &["HSET k f v"]),
            (&[], &["SADD k m"]),
            (&[], &["ZADD k 1 m"]),
            (&["SET k v"], &["RENAME k other"]),
            (&["SET other v"], &["RENAME other k"]),
            (&["SET k v"], &["MOVE k 1"]),
            (&["SELECT 1", "SET k v"], &["SELECT 1", "MOVE k 0"]),
            (&["SET src v"], &["COPY src k"]),
            (&["SET k v"], &["FLUSHDB"]),
            (&["SET k v"], &["FLUSHALL"]),
            (&["SET k v"], &["SWAPDB 0 1"]),
            (&["SELECT 1", "SET k v"], &["SWAPDB 0 1"]),
            (&["SET k v"], &["SWAPDB 1 0"]),
            (&["SET k v"], &["GETDEL k"]),
        ] {
            watch_case(p, setup, change);
        }
    });
}

#[test]
fn watch_survives_reads_other_keys_and_other_dbs() {
    each_proto(|p| {
        for (setup, change) in [
            (&["SET k v"][..], &["GET k", "EXISTS k", "TTL k", "TYPE k"][..]),
            (&["SET k v"], &["SET other v", "DEL other"]),
            (&["SET k v"], &["SELECT 1", "SET k v", "DEL k", "FLUSHDB"]),
            (&[], &["DEL k", "EXPIRE k 100", "PERSIST k"]),
            (&["SET k v"], &["SET k w NX", "RENAME missing k"]),
            // FLUSHDB / SWAPDB of dbs where the watched key is in neither.
            (&["SELECT 2", "SET k v"], &["FLUSHDB", "SWAPDB 1 2"]),
            // Neither db holds the key.
            (&["SET other v"], &["SWAPDB 0 1"]),
            // The same client's UNWATCH before the change.
            (&["SET k v"], &["UNWATCH", "SET k w"]),
            // Multi-key writes touch only the keys they change (k missing stays missing).
            (&["SET a 1"], &["DEL a k b", "UNLINK k a", "MSETNX a 2 k 3"]),
            (&["SADD s m"], &["SMOVE s k absent", "SINTERSTORE k missing s"]),
        ] {
            watch_case(p, setup, change);
        }
    });
}

#[test]
fn watch_is_invalidated_by_another_client() {
    each_proto(|p| {
        let mut o = others(p);
        p.same_lines(&["SET k v", "WATCH k"]);
        other_same(p, &mut o, "SET k changed");
        p.same_lines(&["MULTI", "GET k", "EXEC"]);
        // Another client's read or write elsewhere changes nothing.
        p.same_lines(&["WATCH k"]);
        other_same(p, &mut o, "GET k");
        other_same(p, &mut o, "SET k2 x");
        p.same_lines(&["MULTI", "GET k", "EXEC"]);
        // Between MULTI and EXEC too.
        p.same_lines(&["WATCH k", "MULTI", "INCR counter"]);
        other_same(p, &mut o, "DEL k");
        p.same_lines(&["EXEC", "GET counter"]);
        // A change in another db by another client.
        p.same_lines(&["WATCH k"]);
        other_same(p, &mut o, "SELECT 3");
        other_same(p, &mut o, "SET k v3");
        p.same_lines(&["MULTI", "GET k", "EXEC"]);
    });
}

#[test]
fn watched_key_that_expires_fails_exec() {
    each_proto(|p| {
        // Expires while watched, still stored at EXEC (active expiry off).
        p.same_lines(&["DEBUG SET-ACTIVE-EXPIRE 0", "SET k v PX 100", "WATCH k"]);
        sleep(Duration::from_millis(200));
        p.same_lines(&["MULTI", "PING", "EXEC"]);
        // Expires while watched and is deleted by a lookup from another client.
        let mut o = others(p);
        p.same_lines(&["SET k v PX 100", "WATCH k"]);
        sleep(Duration::from_millis(200));
        other_same(p, &mut o, "GET k");
        p.same_lines(&["MULTI", "PING", "EXEC"]);
        // Deleted by the active expire cycle.
        p.same_lines(&["DEBUG SET-ACTIVE-EXPIRE 1", "SET k v PX 50", "WATCH k"]);
        sleep(Duration::from_millis(500));
        p.same_lines(&["DBSIZE", "MULTI", "PING", "EXEC"]);
        // A watched key expiring during DEBUG SLEEP, which holds the server.
        p.same_lines(&["SET k v PX 50", "WATCH k", "DEBUG SLEEP 0.2", "MULTI", "PING", "EXEC"]);
    });
}

#[test]
fn key_already_expired_when_watched() {
    each_proto(|p| {
        let mut o = others(p);
        p.same_lines(&["DEBUG SET-ACTIVE-EXPIRE 0"]);
        // Still expired at EXEC: nothing changed.
        p.same_lines(&["SET k v PX 20"]);
        sleep(Duration::from_millis(100));
        p.same_lines(&["WATCH k", "MULTI", "PING", "EXEC"]);
        // Deleted by a lookup: logically unchanged.
        p.same_lines(&["SET k v PX 20"]);
        sleep(Duration::from_millis(100));
        p.same_lines(&["WATCH k"]);
        other_same(p, &mut o, "GET k");
        p.same_lines(&["MULTI", "PING", "EXEC"]);
        // Deleted, then set again: changed.
        p.same_lines(&["SET k v PX 20"]);
        sleep(Duration::from_millis(100));
        p.same_lines(&["WATCH k"]);
        other_same(p, &mut o, "GET k");
        other_same(p, &mut o, "SET k back");
        p.same_lines(&["MULTI", "PING", "EXEC"]);
        // Written over while expired: changed.
        p.same_lines(&["SET k v PX 20"]);
        sleep(Duration::from_millis(100));
        p.same_lines(&["WATCH k", "SET k new", "MULTI", "PING", "EXEC"]);
        // Flushed while expired: no change.
        p.same_lines(&["SET k v PX 20"]);
        sleep(Duration::from_millis(100));
        p.same_lines(&["WATCH k", "FLUSHDB", "MULTI", "PING", "EXEC"]);
        // Swapped with a db holding a live k: changed; with an expired k: unchanged.
        p.same_lines(&["SET k v PX 20", "SELECT 1", "SET k live", "SELECT 0"]);
        sleep(Duration::from_millis(100));
        p.same_lines(&["WATCH k", "SWAPDB 0 1", "MULTI", "PING", "EXEC", "FLUSHALL"]);
        p.same_lines(&["SET k v PX 20", "SELECT 1", "SET k v PX 20", "SELECT 0"]);
        sleep(Duration::from_millis(100));
        p.same_lines(&["WATCH k", "SWAPDB 0 1", "MULTI", "PING", "EXEC", "FLUSHALL"]);
        // A missing key swapped with an expired one: unchanged.
        p.same_lines(&["SELECT 1", "SET k v PX 20", "SELECT 0"]);
        sleep(Duration::from_millis(100));
        p.same_lines(&["WATCH k", "SWAPDB 0 1", "MULTI", "PING", "EXEC"]);
    });
}

#[test]
fn oom_inside_multi() {
    each_proto(|p| {
        let mut o = others(p);
        // Queued before memory ran out: EXEC of a denyoom command is refused.
        p.same_lines(&["MULTI", "SET a b"]);
        other_same(p, &mut o, "CONFIG SET maxmemory 1");
        p.same_lines(&["EXEC", "EXEC"]);
        // While out of memory only `denyoom` commands are refused inside MULTI.
        p.same_lines(&["MULTI", "GET a", "PING", "DEL nokey", "EXEC", "MULTI", "GET a", "DISCARD"]);
        p.same_lines(&["MULTI", "GET a", "SET x y", "EXEC"]);
        // A transaction of reads runs.
        other_same(p, &mut o, "CONFIG SET maxmemory 0");
        p.same_lines(&["MULTI", "GET a"]);
        other_same(p, &mut o, "CONFIG SET maxmemory 1");
        p.same_lines(&["EXEC"]);
        other_same(p, &mut o, "CONFIG SET maxmemory 0");
    });
}

/// MONITOR shows MULTI, then each queued command when EXEC runs it, then EXEC.
#[test]
fn monitor_sees_commands_when_exec_runs_them() {
    let p = Pair::start(2, &[]);
    let mut lines = Vec::new();
    for port in [p.ours.port, p.theirs.port] {
        let (mut m, mut c) = common::monitor_and_client(port);
        for l in ["MULTI", "SET a 1", "INCR a", "EXEC", "MULTI", "GET a", "DISCARD"] {
            c.cmd(&words(l).iter().map(|w| std::str::from_utf8(w).unwrap()).collect::<Vec<_>>());
        }
        c.cmd(&["PING"]);
        let mut seen = Vec::new();
        loop {
            let line = m.read().as_str();
            // `<time> [<db> <addr>] "CMD" ...`: keep the command.
            let cmd = line.split_once("] ").map(|x| x.1.to_string()).unwrap_or(line);
            if cmd == "\"PING\"" {
                break;
            }
            seen.push(cmd);
        }
        lines.push(seen);
    }
    assert_eq!(lines[0], lines[1], "MONITOR lines (left: ferrokey, right: redis-server)");
    assert_eq!(lines[0][0], "\"MULTI\"");
}

#[test]
fn info_counts_watching_clients_and_watched_keys() {
    let s = start(&[]);
    let mut a = Client::connect(s.port);
    let mut b = Client::connect(s.port);
    let mut info = Client::connect(s.port);
    let counts = |info: &mut Client| {
        (
            info_int(info, "clients", "watching_clients"),
            info_int(info, "clients", "total_watched_keys"),
        )
    };
    assert_eq!(counts(&mut info), (0, 0));
    assert_eq!(a.cmd(&["WATCH", "x", "y", "x"]), Val::ok());
    assert_eq!(b.cmd(&["WATCH", "x"]), Val::ok());
    assert_eq!(b.cmd(&["SELECT", "1"]), Val::ok());
    assert_eq!(b.cmd(&["WATCH", "x"]), Val::ok());
    assert_eq!(counts(&mut info), (2, 3));
    // A change unwatches the dirty clients' keys (EXEC fails anyway).
    assert_eq!(info.cmd(&["SET", "y", "1"]), Val::ok());
    assert_eq!(counts(&mut info), (1, 2));
    assert_eq!(a.cmd(&["MULTI"]), Val::ok());
    assert_eq!(a.cmd(&["EXEC"]), Val::NilArray);
    assert_eq!(b.cmd(&["UNWATCH"]), Val::ok());
    assert_eq!(counts(&mut info), (0, 0));
    // A client that disconnects stops watching.
    assert_eq!(b.cmd(&["WATCH", "z"]), Val::ok());
    assert_eq!(counts(&mut info), (1, 1));
    drop(b);
    for _ in 0..100 {
        if counts(&mut info) == (0, 0) {
            break;
        }
        sleep(Duration::from_millis(20));
    }
    assert_eq!(counts(&mut info), (0, 0));
    // CLIENT LIST shows MULTI as flag x.
    assert_eq!(a.cmd(&["MULTI"]), Val::ok());
    let list = info.cmd(&["CLIENT", "LIST"]).as_str();
    assert!(list.lines().any(|l| l.contains("flags=x ")), "{list}");
}

#[test]
fn a_transaction_larger_than_the_query_buffer_limit_closes_the_client() {
    use std::io::Read;
    let s = start(&["--client-query-buffer-limit", "1mb"]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["MULTI"]), Val::ok());
    let big = "x".repeat(100 * 1024);
    // The server may close the connection before all of it is sent: a failed write ends
    // the sending (what matters is what the server answered and counted).
    let cmd = Client::encode(&[b"SET", b"k", big.as_bytes()]);
    for _ in 0..20 {
        if std::io::Write::write_all(c.stream.get_mut(), &cmd).is_err() {
            break;
        }
    }
    // Replies up to the limit, then the connection closes.
    let mut replies = Vec::new();
    let _ = c.stream.read_to_end(&mut replies);
    let queued = replies.windows(9).filter(|w| w == b"+QUEUED\r\n").count();
    assert!((5..20).contains(&queued), "{queued} commands queued before the close");
    assert_eq!(replies.len(), queued * 9, "only QUEUED replies");
    let mut other = Client::connect(s.port);
    assert_eq!(info_int(&mut other, "stats", "client_query_buffer_limit_disconnections"), 1);
}

/// An EXEC refused before it runs (wrong arity, not authenticated) is an EXECABORT, in a
/// transaction or not, as Valkey answers.
#[test]
fn a_refused_exec_aborts_even_without_multi() {
    same_as_valkey(&["EXEC x", "EXEC", "MULTI", "SET a 1", "EXEC x", "EXEC", "GET a"]);
    common::diff::same_as_valkey_with(
        2,
        &["--requirepass", "pw"],
        &["EXEC", "MULTI", "AUTH pw", "EXEC", "MULTI", "EXEC"],
    );
}
