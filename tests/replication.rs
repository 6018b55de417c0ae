//! Replication with real Valkey: a Valkey 9.1 replica (the oracle) follows a ferrokey
//! primary and a ferrokey replica follows a Valkey primary, through full syncs (diskless and
//! disk-backed) and the stream of writes after them; partial resyncs after a dropped link
//! and after a failover; chains; WAIT and min-replicas-to-write; the stream itself, read
//! with SYNC as Valkey's test helper reads it.

mod common;

use std::io::{BufRead, Read};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::{contents, info_field, info_int, start, start_valkey, Client, Server, Val};

/// Every key of databases 0..4 with its type, contents and absolute expire time.
fn dataset(c: &mut Client) -> Vec<(usize, String, String, Val, Val)> {
    let mut out = Vec::new();
    for db in 0..4 {
        assert_eq!(c.cmd(&["SELECT", &db.to_string()]), Val::ok());
        let mut keys: Vec<String> =
            c.cmd(&["KEYS", "*"]).as_array().iter().map(Val::as_str).collect();
        keys.sort();
        for k in keys {
            let ty = c.cmd(&["TYPE", &k]).as_str();
            let v = contents(c, &k);
            let at = c.cmd(&["PEXPIRETIME", &k]);
            out.push((db, k, ty, v, at));
        }
    }
    assert_eq!(c.cmd(&["SELECT", "0"]), Val::ok());
    out
}

/// Waits until `cond` holds, up to `secs` seconds.
fn wait_until(secs: u64, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("timed out waiting for {what}");
}

/// Makes the server on `replica` (Valkey or ferrokey) a replica of the primary on `port`
/// and waits for its link to be up.
fn follow(replica: &mut Client, port: u16) {
    assert_eq!(replica.cmd(&["REPLICAOF", "127.0.0.1", &port.to_string()]), Val::ok());
    wait_until(20, "master_link_status:up", || {
        info_field(replica, "replication", "master_link_status") == "up"
    });
}

/// Writes of every type, in several databases, with expire times, big and small encodings.
fn fill(c: &mut Client, tag: &str) {
    let k = |s: &str| format!("{tag}:{s}");
    let big = "x".repeat(100);
    c.cmd(&["SET", &k("int"), "12345"]);
    c.cmd(&["SET", &k("raw"), "hello\r\n\0world"]);
    c.cmd(&["SET", &k("big"), &big]);
    c.cmd(&["SET", &k("ttl"), "v", "EX", "1000"]);
    c.cmd(&["RPUSH", &k("list"), "a", "b", "c", "1", "2"]);
    c.cmd(&["HSET", &k("hash"), "f1", "v1", "f2", "2"]);
    c.cmd(&["SADD", &k("iset"), "1", "2", "3"]);
    c.cmd(&["SADD", &k("set"), "a", "b", "c"]);
    c.cmd(&["ZADD", &k("zset"), "1.5", "a", "-2", "b", "inf", "c"]);
    for i in 0..300 {
        let n = i.to_string();
        c.cmd(&["RPUSH", &k("biglist"), &n]);
        c.cmd(&["HSET", &k("bighash"), &n, &big]);
        c.cmd(&["SADD", &k("bigset"), &format!("m{n}")]);
        c.cmd(&["ZADD", &k("bigzset"), &n, &format!("m{n}")]);
    }
    c.cmd(&["PEXPIRE", &k("bighash"), "5000000"]);
    c.cmd(&["SELECT", "2"]);
    c.cmd(&["SET", &k("in2"), "two"]);
    c.cmd(&["HSET", &k("h2"), "a", "b"]);
    c.cmd(&["EXPIREAT", &k("h2"), "4000000000"]);
    c.cmd(&["SELECT", "0"]);
}

/// Writes whose propagated forms differ from what was sent, transactions, deletions.
fn more_writes(c: &mut Client) {
    c.cmd(&["INCR", "counter"]);
    c.cmd(&["INCRBYFLOAT", "float", "1.5"]);
    c.cmd(&["SETEX", "setex", "100", "v"]);
    c.cmd(&["SET", "setpx", "v", "PX", "200000"]);
    c.cmd(&["GETEX", "setpx", "EX", "300"]);
    c.cmd(&["SADD", "spop", "a", "b", "c", "d"]);
    c.cmd(&["SPOP", "spop"]);
    c.cmd(&["LPUSH", "lmove-src", "x", "y"]);
    c.cmd(&["LMOVE", "lmove-src", "lmove-dst", "LEFT", "RIGHT"]);
    c.cmd(&["ZINCRBY", "z", "2.5", "m"]);
    c.cmd(&["HINCRBY", "h", "n", "7"]);
    c.cmd(&["DEL", "a:int"]);
    c.cmd(&["RENAME", "a:raw", "renamed"]);
    assert_eq!(c.cmd(&["MULTI"]), Val::ok());
    c.cmd(&["SET", "in-multi", "1"]);
    c.cmd(&["SELECT", "3"]);
    c.cmd(&["SET", "in-multi-3", "3"]);
    c.cmd(&["EXEC"]);
    c.cmd(&["SELECT", "0"]);
    c.cmd(&["COPY", "a:list", "copied", "DB", "1"]);
    c.cmd(&["PERSIST", "a:ttl"]);
}

/// 40,000 keys of 1,000 bytes: enough that a full sync takes a moment.
fn fill_big(c: &mut Client) {
    common::fill_40k(c, "key:", 'v');
}

/// Two replicas started by `replica` follow the primary of `p` (on `port`), the first by
/// a diskless full sync and then the stream, the second by a disk-backed one while writes
/// go on; after each step their datasets equal the primary's. Returns both.
fn sync_twice(
    p: &mut Client,
    port: u16,
    replica: impl Fn() -> Server,
) -> ((Server, Client), (Server, Client)) {
    fill(p, "a");
    let s1 = replica();
    let mut r1 = Client::connect(s1.port);
    follow(&mut r1, port);
    assert_eq!(dataset(&mut r1), dataset(p), "after the diskless full sync");
    // The stream, with WAIT acknowledging it.
    more_writes(p);
    assert_eq!(p.cmd(&["WAIT", "1", "5000"]), Val::Int(1));
    assert_eq!(dataset(&mut r1), dataset(p), "after the stream");
    // Disk-backed: the RDB file, then the stream held meanwhile.
    assert_eq!(p.cmd(&["CONFIG", "SET", "repl-diskless-sync", "no"]), Val::ok());
    fill(p, "b");
    let s2 = replica();
    let mut r2 = Client::connect(s2.port);
    follow(&mut r2, port);
    fill(p, "c");
    assert_eq!(p.cmd(&["WAIT", "2", "5000"]), Val::Int(2));
    let want = dataset(p);
    assert_eq!(dataset(&mut r2), want, "after the disk-backed full sync");
    assert_eq!(dataset(&mut r1), want);
    ((s1, r1), (s2, r2))
}

#[test]
fn valkey_replicas_follow_a_ferrokey_primary() {
    let primary = start(&["--repl-diskless-sync-delay", "0"]);
    let mut p = Client::connect(primary.port);
    let ((v1, _r1), (v2, _r2)) = sync_twice(&mut p, primary.port, || start_valkey(&[]));

    // INFO and ROLE show both replicas online.
    assert_eq!(info_int(&mut p, "replication", "connected_slaves"), 2);
    let info = p.cmd(&["INFO", "replication"]).as_str();
    for v in [&v1, &v2] {
        assert!(info.contains(&format!("ip=127.0.0.1,port={},state=online,", v.port)), "{info}");
    }
    let offset = info_int(&mut p, "replication", "master_repl_offset");
    assert!(offset > 0);
    let role = p.cmd(&["ROLE"]).as_array();
    assert_eq!(role[0], Val::bulk("master"));
    assert_eq!(role[2].as_array().len(), 2);
    assert_eq!(info_int(&mut p, "stats", "sync_full"), 2);
    let list = p.cmd(&["CLIENT", "LIST", "TYPE", "replica"]).as_str();
    assert_eq!(list.lines().filter(|l| l.contains("flags=S")).count(), 2, "{list}");
}

#[test]
fn a_dropped_link_resumes_with_a_partial_resync() {
    let primary = start(&["--repl-diskless-sync-delay", "0"]);
    let mut p = Client::connect(primary.port);
    fill(&mut p, "a");
    let v = start_valkey(&[]);
    let mut r = Client::connect(v.port);
    follow(&mut r, primary.port);
    let full = info_int(&mut p, "stats", "sync_full");
    // The link drops and writes go on meanwhile.
    assert_eq!(p.cmd(&["CLIENT", "KILL", "TYPE", "replica"]), Val::Int(1));
    more_writes(&mut p);
    wait_until(20, "the replica back", || {
        info_int(&mut p, "replication", "connected_slaves") == 1
            && info_field(&mut p, "replication", "slave0").contains("state=online")
    });
    assert_eq!(p.cmd(&["WAIT", "1", "5000"]), Val::Int(1));
    assert_eq!(info_int(&mut p, "stats", "sync_partial_ok"), 1);
    assert_eq!(info_int(&mut p, "stats", "sync_full"), full, "no second full sync");
    assert_eq!(dataset(&mut r), dataset(&mut p));
    // Same replication id and offset on both sides.
    for f in ["master_replid", "master_repl_offset"] {
        assert_eq!(info_field(&mut r, "replication", f), info_field(&mut p, "replication", f));
    }
}

#[test]
fn keys_expired_on_the_primary_are_deleted_on_the_replica() {
    let primary = start(&["--repl-diskless-sync-delay", "0"]);
    let mut p = Client::connect(primary.port);
    let v = start_valkey(&[]);
    let mut r = Client::connect(v.port);
    follow(&mut r, primary.port);
    p.cmd(&["SET", "short", "v", "PX", "100"]);
    p.cmd(&["SET", "long", "v"]);
    assert_eq!(p.cmd(&["WAIT", "1", "5000"]), Val::Int(1));
    wait_until(10, "the expired key deleted on the replica", || r.cmd(&["DBSIZE"]) == Val::Int(1));
    assert_eq!(r.cmd(&["EXISTS", "short"]), Val::Int(0));
}

/// Plays a primary for the replica that connects to `listener`: answers its handshake with
/// a full sync of `rdb` and returns the link, for the test to write the stream by hand.
fn fake_primary(listener: &TcpListener, rdb: &[u8]) -> Client {
    let mut c = fake_handshake(listener);
    let head = format!("+FULLRESYNC {} 0\r\n${}\r\n", "f".repeat(40), rdb.len());
    c.send_raw(head.as_bytes());
    c.send_raw(rdb);
    c
}

/// Answers the handshake of the replica that connects to `listener` up to its PSYNC, and
/// returns the link there, the PSYNC unanswered.
fn fake_handshake(listener: &TcpListener) -> Client {
    let (s, _) = listener.accept().expect("accept the replica");
    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let mut c = Client { stream: std::io::BufReader::new(s) };
    loop {
        let cmd: Vec<String> = c.read().as_array().iter().map(Val::as_str).collect();
        match cmd[0].to_ascii_uppercase().as_str() {
            "PING" => c.send_raw(b"+PONG\r\n"),
            "REPLCONF" => c.send_raw(b"+OK\r\n"),
            "PSYNC" => return c,
            other => panic!("unexpected {other} in the handshake"),
        }
    }
}

#[test]
fn info_replication_during_a_transfer_shows_its_progress_as_valkey() {
    // A primary played by the test sends the start of a snapshot and stops.
    let progress = |replica: &Server, framing: &[u8]| -> Vec<(String, String)> {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let mut r = Client::connect(replica.port);
        assert_eq!(r.cmd(&["REPLICAOF", "127.0.0.1", &port.to_string()]), Val::ok());
        let mut p = fake_handshake(&listener);
        p.send_raw(format!("+FULLRESYNC {} 0\r\n", "f".repeat(40)).as_bytes());
        p.send_raw(framing);
        p.send_raw(b"REDIS0011");
        let mut fields = Vec::new();
        wait_until(10, "the transfer's progress", || {
            let info = r.cmd(&["INFO", "replication"]).as_str();
            fields = info
                .lines()
                .filter_map(|l| l.split_once(':'))
                .filter(|(k, _)| !k.contains("replid") && !k.ends_with("_port"))
                .map(|(k, v)| {
                    // Seconds since the last byte: 0 or 1 depending on when the
                    // second turns, on either server; compared as "small".
                    if k == "master_sync_last_io_seconds_ago" {
                        let secs: u64 = v.parse().expect("seconds");
                        assert!(secs <= 3, "{k}:{v}");
                        return (k.to_string(), "small".to_string());
                    }
                    (k.to_string(), v.to_string())
                })
                .collect();
            fields.iter().any(|(k, v)| k == "master_sync_read_bytes" && v == "9")
        });
        fields
    };
    for framing in [&b"$100000\r\n"[..], &format!("$EOF:{}\r\n", "m".repeat(40)).into_bytes()] {
        assert_eq!(progress(&start(&[]), framing), progress(&start_valkey(&[]), framing));
    }
}

#[test]
fn a_replica_hides_expired_keys_until_its_primary_deletes_them() {
    // An empty dataset's RDB, from a ferrokey primary's SYNC.
    let empty = start(&[]);
    let mut s = Client::connect(empty.port);
    s.send(&[b"SYNC"]);
    let rdb = read_payload(&mut s);
    // Valkey's replica first, as the oracle of what this test expects.
    for replica in [start_valkey(&[]), start(&[])] {
        hides_expired_keys(&replica, &rdb);
    }
}

fn hides_expired_keys(replica: &Server, rdb: &[u8]) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    let mut r = Client::connect(replica.port);
    assert_eq!(r.cmd(&["REPLICAOF", "127.0.0.1", &port.to_string()]), Val::ok());
    let mut p = fake_primary(&listener, rdb);
    wait_until(10, "master_link_status:up", || {
        info_field(&mut r, "replication", "master_link_status") == "up"
    });
    let now_ms =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis()
            as i64;
    // The primary's stream: one key expired already (a time past is kept on a replica, as
    // Valkey keeps it), one live.
    let past = (now_ms - 1000).to_string();
    p.send(&[b"SET", b"gone", b"v", b"PXAT", past.as_bytes()]);
    p.send(&[b"SET", b"live", b"v"]);
    wait_until(10, "the stream applied", || r.cmd(&["GET", "live"]) == Val::bulk("v"));
    // Reads see it missing, and leave it there for the primary's DEL.
    assert_eq!(r.cmd(&["GET", "gone"]), Val::Nil);
    assert_eq!(r.cmd(&["EXISTS", "gone"]), Val::Int(0));
    assert_eq!(r.cmd(&["TTL", "gone"]), Val::Int(-2));
    assert_eq!(r.cmd(&["TYPE", "gone"]), Val::Simple("none".into()));
    assert_eq!(r.cmd(&["KEYS", "*"]), Val::Array(vec![Val::bulk("live")]));
    for _ in 0..20 {
        assert_eq!(r.cmd(&["RANDOMKEY"]), Val::bulk("live"));
    }
    let scan = r.cmd(&["SCAN", "0", "COUNT", "100"]).as_array();
    assert_eq!(scan[1], Val::Array(vec![Val::bulk("live")]));
    assert_eq!(r.cmd(&["DBSIZE"]), Val::Int(2));
    assert_eq!(info_int(&mut r, "stats", "expired_keys"), 0);
    // The primary's own commands still find it: it decides when keys expire.
    p.send(&[b"PERSIST", b"gone"]);
    wait_until(10, "PERSIST applied", || r.cmd(&["GET", "gone"]) == Val::bulk("v"));
    assert_eq!(r.cmd(&["TTL", "gone"]), Val::Int(-1));
    // And its DEL removes a key.
    p.send(&[b"PEXPIREAT", b"live", past.as_bytes()]);
    p.send(&[b"DEL", b"live"]);
    wait_until(10, "DEL applied", || r.cmd(&["DBSIZE"]) == Val::Int(1));
}

/// Reads one line of a raw stream (without its CRLF).
fn line(c: &mut Client) -> String {
    let mut l = Vec::new();
    c.stream.read_until(b'\n', &mut l).expect("read");
    String::from_utf8_lossy(&l).trim_end().to_string()
}

/// Reads the full sync payload a SYNC gets (`$<len>` and the RDB, after keep-alive
/// newlines) and returns it.
fn read_payload(c: &mut Client) -> Vec<u8> {
    let mut head = line(c);
    while head.is_empty() {
        head = line(c);
    }
    let len: usize = head.strip_prefix('$').expect("bulk header").parse().expect("length");
    let mut rdb = vec![0; len];
    c.stream.read_exact(&mut rdb).expect("payload");
    rdb
}

/// The next command in the stream, PINGs skipped.
fn next_command(c: &mut Client) -> Vec<String> {
    loop {
        let cmd: Vec<String> = c.read().as_array().iter().map(Val::as_str).collect();
        if !(cmd.len() == 1 && cmd[0].eq_ignore_ascii_case("ping")) {
            return cmd;
        }
    }
}

#[test]
fn the_stream_a_sync_reads_has_the_propagated_forms() {
    let primary = start(&["--repl-diskless-sync", "no"]);
    let mut p = Client::connect(primary.port);
    p.cmd(&["SET", "before", "1"]);
    let mut s = Client::connect(primary.port);
    s.send(&[b"SYNC"]);
    let rdb = read_payload(&mut s);
    assert!(rdb.starts_with(b"REDIS00"), "{:?}", &rdb[..9]);
    let now_ms =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis()
            as i64;
    p.cmd(&["SELECT", "1"]);
    p.cmd(&["SETEX", "k", "100", "v"]);
    p.cmd(&["EXPIRE", "k", "50"]);
    p.cmd(&["SELECT", "0"]);
    p.cmd(&["MULTI"]);
    p.cmd(&["INCR", "n"]);
    p.cmd(&["INCR", "n"]);
    p.cmd(&["EXEC"]);
    p.cmd(&["GET", "n"]); // a read: not in the stream
    p.cmd(&["DEL", "nothing"]); // changed nothing: not in the stream
    assert_eq!(next_command(&mut s), ["SELECT", "1"]);
    let setex = next_command(&mut s);
    assert_eq!(setex[..4], ["SET", "k", "v", "PXAT"]);
    let at: i64 = setex[4].parse().unwrap();
    assert!((at - now_ms - 100_000).abs() < 5000, "{at} vs {now_ms}");
    let expire = next_command(&mut s);
    assert_eq!(expire[..2], ["PEXPIREAT", "k"]);
    // As Valkey: MULTI carries no database, the SELECT goes inside.
    assert_eq!(next_command(&mut s), ["MULTI"]);
    assert_eq!(next_command(&mut s), ["SELECT", "0"]);
    assert_eq!(next_command(&mut s), ["INCR", "n"]);
    assert_eq!(next_command(&mut s), ["INCR", "n"]);
    assert_eq!(next_command(&mut s), ["EXEC"]);
    p.cmd(&["SET", "last", "1"]);
    assert_eq!(next_command(&mut s), ["SET", "last", "1"]);
    // A SYNC replica is listed, and never acknowledges: WAIT does not count it.
    assert_eq!(info_int(&mut p, "replication", "connected_slaves"), 1);
    assert_eq!(p.cmd(&["WAIT", "1", "100"]), Val::Int(0));
}

#[test]
fn wait_counts_acknowledgements_of_the_clients_own_writes() {
    // A replica played by the test, which acknowledges only what it is told to: Valkey's
    // primary first, as the oracle.
    for primary in
        [start_valkey(&["--repl-diskless-sync", "no"]), start(&["--repl-diskless-sync", "no"])]
    {
        let mut fake = Client::connect(primary.port);
        assert_eq!(fake.cmd(&["REPLCONF", "listening-port", "1"]), Val::ok());
        assert_eq!(fake.cmd(&["REPLCONF", "capa", "psync2"]), Val::ok());
        fake.send(&[b"PSYNC", b"?", b"-1"]);
        let head = line(&mut fake);
        let offset: i64 = head.rsplit(' ').next().unwrap().parse().expect(&head);
        read_payload(&mut fake);
        let ack = |fake: &mut Client, at: i64| {
            fake.send(&[b"REPLCONF", b"ACK", at.to_string().as_bytes()]);
        };
        ack(&mut fake, offset);
        let mut p = Client::connect(primary.port);
        wait_until(10, "the replica online", || {
            info_field(&mut p, "replication", "slave0").contains("state=online")
        });
        let mut idle = Client::connect(primary.port);
        p.cmd(&["SET", "k", "v"]);
        // The idle client wrote nothing: its WAIT is satisfied at once.
        assert_eq!(idle.cmd(&["WAIT", "1", "5000"]), Val::Int(1));
        // The writer's SET is not acknowledged yet.
        assert_eq!(p.cmd(&["WAIT", "1", "100"]), Val::Int(0));
        let now = info_int(&mut p, "replication", "master_repl_offset");
        ack(&mut fake, now);
        assert_eq!(p.cmd(&["WAIT", "1", "5000"]), Val::Int(1));
    }
}

#[test]
fn wait_and_min_replicas_without_replicas_answer_as_valkey() {
    let ours = start(&[]);
    let theirs = start_valkey(&[]);
    for server in [&ours, &theirs] {
        let mut c = Client::connect(server.port);
        c.cmd(&["SET", "k", "v"]);
        let started = Instant::now();
        assert_eq!(c.cmd(&["WAIT", "1", "200"]), Val::Int(0));
        assert!(started.elapsed() >= Duration::from_millis(190));
        assert_eq!(c.cmd(&["WAIT", "0", "0"]), Val::Int(0));
        // Inside a transaction WAIT cannot block: it answers at once.
        c.cmd(&["MULTI"]);
        c.cmd(&["WAIT", "1", "0"]);
        assert_eq!(c.cmd(&["EXEC"]), Val::Array(vec![Val::Int(0)]));
        assert_eq!(c.cmd(&["CONFIG", "SET", "min-replicas-to-write", "1"]), Val::ok());
        assert_eq!(
            c.cmd(&["SET", "k", "v"]),
            Val::Err("NOREPLICAS Not enough good replicas to write.".into())
        );
        assert_eq!(c.cmd(&["GET", "k"]), Val::bulk("v"));
        // Refused when queued, as Valkey refuses it: the transaction is discarded.
        c.cmd(&["MULTI"]);
        assert!(matches!(c.cmd(&["SET", "k", "v"]), Val::Err(e) if e.starts_with("NOREPLICAS")));
        assert_eq!(
            c.cmd(&["EXEC"]),
            Val::Err("EXECABORT Transaction discarded because of previous errors.".into())
        );
        assert_eq!(c.cmd(&["CONFIG", "SET", "min-replicas-max-lag", "0"]), Val::ok());
        assert_eq!(c.cmd(&["SET", "k", "w"]), Val::ok());
    }
}

#[test]
fn min_replicas_to_write_counts_acknowledging_replicas() {
    let primary = start(&["--repl-diskless-sync-delay", "0", "--min-replicas-to-write", "1"]);
    let mut p = Client::connect(primary.port);
    assert!(matches!(p.cmd(&["SET", "k", "v"]), Val::Err(e) if e.starts_with("NOREPLICAS")));
    let v = start_valkey(&[]);
    let mut r = Client::connect(v.port);
    follow(&mut r, primary.port);
    wait_until(10, "writes accepted", || p.cmd(&["SET", "k", "v"]) == Val::ok());
    assert_eq!(p.cmd(&["WAIT", "1", "5000"]), Val::Int(1));
    assert_eq!(r.cmd(&["GET", "k"]), Val::bulk("v"));
}

#[test]
fn diskless_loads_give_the_primarys_dataset_without_a_file() {
    let debug = ["--enable-debug-command", "yes"];
    for primary in
        [start_valkey(&["--repl-diskless-sync-delay", "0", debug[0], debug[1]]), start(&debug)]
    {
        let mut p = Client::connect(primary.port);
        fill(&mut p, "a");
        for (mode, old_data, diskless) in [
            ("on-empty-db", false, true),
            ("on-empty-db", true, false),
            ("swapdb", true, true),
            ("flush-before-load", true, true),
            ("disabled", false, false),
        ] {
            for framing in ["yes", "no"] {
                // `$EOF:` framing from a diskless sync, `$<length>` from a disk-backed one.
                assert_eq!(p.cmd(&["CONFIG", "SET", "repl-diskless-sync", framing]), Val::ok());
                let replica = start(&["--repl-diskless-load", mode, debug[0], debug[1]]);
                let mut r = Client::connect(replica.port);
                if old_data {
                    r.cmd(&["SET", "old", "data"]);
                    r.cmd(&["SET", "a:int", "overwritten"]);
                }
                follow(&mut r, primary.port);
                let what = format!("{mode} with old data {old_data}, diskless sync {framing}");
                assert_eq!(dataset(&mut r), dataset(&mut p), "{what}");
                // Valkey's signature of the dataset agrees too.
                assert_eq!(r.cmd(&["DEBUG", "DIGEST"]), p.cmd(&["DEBUG", "DIGEST"]), "{what}");
                let file = replica.dir.join("dump.rdb").exists();
                assert_eq!(file, !diskless, "{what}: the RDB file written");
                p.cmd(&["SET", "after", framing]);
                assert_eq!(p.cmd(&["WAIT", "1", "5000"]), Val::Int(1));
                assert_eq!(r.cmd(&["GET", "after"]), Val::bulk(framing), "{what}");
            }
        }
    }
}

#[test]
fn a_replica_ignores_maxmemory_unless_told_otherwise() {
    let primary = start(&["--repl-diskless-sync-delay", "0"]);
    let mut p = Client::connect(primary.port);
    fill_big(&mut p);
    let limits = ["--maxmemory", "10mb", "--maxmemory-policy", "allkeys-random"];
    // Valkey's replica first, as the oracle.
    for replica in [start_valkey(&limits), start(&limits)] {
        let mut r = Client::connect(replica.port);
        follow(&mut r, primary.port);
        p.cmd(&["SET", "one-more", "1"]);
        assert_eq!(p.cmd(&["WAIT", "1", "5000"]), Val::Int(1));
        assert_eq!(r.cmd(&["DBSIZE"]), Val::Int(40_001), "the replica evicted");
        assert_eq!(info_int(&mut r, "stats", "evicted_keys"), 0);
        assert_eq!(r.cmd(&["CONFIG", "SET", "replica-ignore-maxmemory", "no"]), Val::ok());
        p.cmd(&["SET", "one-more", "2"]);
        assert_eq!(p.cmd(&["WAIT", "1", "5000"]), Val::Int(1));
        assert!(r.cmd(&["DBSIZE"]).as_int() < 40_001, "the replica kept every key");
        assert!(info_int(&mut r, "stats", "evicted_keys") > 0);
        r.cmd(&["REPLICAOF", "NO", "ONE"]);
    }
}

#[test]
fn a_replica_killed_during_its_full_sync_leaves_the_primary_serving() {
    // Enough data that the transfer takes a moment.
    let primary = start(&["--repl-diskless-sync-delay", "0"]);
    let mut p = Client::connect(primary.port);
    fill_big(&mut p);
    let mut v: Server = start_valkey(&[]);
    let mut r = Client::connect(v.port);
    assert_eq!(r.cmd(&["REPLICAOF", "127.0.0.1", &primary.port.to_string()]), Val::ok());
    wait_until(10, "the full sync to start", || {
        info_int(&mut p, "replication", "connected_slaves") == 1
    });
    v.child.kill().unwrap();
    v.child.wait().unwrap();
    assert_eq!(p.cmd(&["SET", "still", "serving"]), Val::ok());
    wait_until(20, "the replica forgotten", || {
        info_int(&mut p, "replication", "connected_slaves") == 0
            && info_int(&mut p, "persistence", "rdb_bgsave_in_progress") == 0
    });
    assert_eq!(p.cmd(&["DBSIZE"]), Val::Int(40_001));
    // The next replica syncs.
    let v2 = start_valkey(&[]);
    let mut r2 = Client::connect(v2.port);
    follow(&mut r2, primary.port);
    assert_eq!(r2.cmd(&["DBSIZE"]), Val::Int(40_001));
}

// ---------------------------------------------------------------------------------------
// ferrokey as a replica

#[test]
fn ferrokey_replicas_follow_a_valkey_primary() {
    let primary = start_valkey(&["--repl-diskless-sync-delay", "0"]);
    let mut p = Client::connect(primary.port);
    let ((_ours, mut r), (_ours2, mut r2)) = sync_twice(&mut p, primary.port, || start(&[]));
    // Same offsets as the primary's; a replica refuses writes; ROLE.
    for f in ["master_replid", "master_repl_offset"] {
        assert_eq!(info_field(&mut r, "replication", f), info_field(&mut p, "replication", f));
    }
    assert_eq!(
        r.cmd(&["SET", "x", "1"]),
        Val::Err("READONLY You can't write against a read only replica.".into())
    );
    let role = r.cmd(&["ROLE"]).as_array();
    assert_eq!(
        role[..4],
        [
            Val::bulk("slave"),
            Val::bulk("127.0.0.1"),
            Val::Int(primary.port as i64),
            Val::bulk("connected")
        ]
    );
    assert_eq!(info_field(&mut r, "replication", "role"), "slave");
    let want =
        Val::Array(vec![Val::bulk("replicaof"), Val::bulk(&format!("127.0.0.1 {}", primary.port))]);
    assert_eq!(r.cmd(&["CONFIG", "GET", "replicaof"]), want);
    assert_eq!(r2.cmd(&["REPLICAOF", "NO", "ONE"]), Val::ok());
    assert_eq!(
        r2.cmd(&["CONFIG", "GET", "replicaof"]),
        Val::Array(vec![Val::bulk("replicaof"), Val::bulk("")])
    );
}

#[test]
fn a_ferrokey_replica_resumes_partially_and_takes_over_after_a_failover() {
    let primary = start_valkey(&["--repl-diskless-sync-delay", "0"]);
    let mut p = Client::connect(primary.port);
    fill(&mut p, "a");
    let ours = start(&[]);
    let mut r = Client::connect(ours.port);
    follow(&mut r, primary.port);
    // The link drops: PSYNC continues.
    assert_eq!(p.cmd(&["CLIENT", "KILL", "TYPE", "replica"]), Val::Int(1));
    more_writes(&mut p);
    wait_until(20, "the link back", || {
        info_field(&mut r, "replication", "master_link_status") == "up"
    });
    assert_eq!(p.cmd(&["WAIT", "1", "5000"]), Val::Int(1));
    assert_eq!(info_int(&mut p, "stats", "sync_partial_ok"), 1);
    assert_eq!(info_int(&mut p, "stats", "sync_full"), 1);
    assert_eq!(dataset(&mut r), dataset(&mut p));
    // Failover: ferrokey is promoted, the old primary follows it with a partial resync.
    assert_eq!(r.cmd(&["REPLICAOF", "NO", "ONE"]), Val::ok());
    assert_eq!(r.cmd(&["SET", "after-failover", "1"]), Val::ok());
    follow(&mut p, ours.port);
    assert_eq!(r.cmd(&["WAIT", "1", "5000"]), Val::Int(1));
    assert_eq!(info_int(&mut r, "stats", "sync_full"), 0);
    assert_eq!(info_int(&mut r, "stats", "sync_partial_ok"), 1);
    assert_eq!(dataset(&mut p), dataset(&mut r));
    assert_eq!(p.cmd(&["GET", "after-failover"]), Val::bulk("1"));
}

#[test]
fn ferrokey_replicates_to_ferrokey_and_chains_to_valkey() {
    let a = start(&["--repl-diskless-sync-delay", "0"]);
    let mut pa = Client::connect(a.port);
    fill(&mut pa, "a");
    let b = start(&["--repl-diskless-sync-delay", "0"]);
    let mut rb = Client::connect(b.port);
    follow(&mut rb, a.port);
    // A replica of the replica: the stream is passed on as received.
    let c = start_valkey(&[]);
    let mut rc = Client::connect(c.port);
    follow(&mut rc, b.port);
    more_writes(&mut pa);
    fill(&mut pa, "b");
    assert_eq!(pa.cmd(&["WAIT", "1", "5000"]), Val::Int(1));
    let want = dataset(&mut pa);
    wait_until(10, "the chain to catch up", || {
        info_field(&mut rc, "replication", "master_repl_offset")
            == info_field(&mut pa, "replication", "master_repl_offset")
    });
    assert_eq!(dataset(&mut rb), want);
    assert_eq!(dataset(&mut rc), want);
}

#[test]
fn a_replica_whose_primary_dies_keeps_its_data_or_refuses_as_configured() {
    let primary = start(&["--repl-diskless-sync-delay", "0"]);
    let mut p = Client::connect(primary.port);
    p.cmd(&["SET", "k", "v"]);
    let stale_ok = start(&[]);
    let stale_no = start(&["--replica-serve-stale-data", "no"]);
    let mut r1 = Client::connect(stale_ok.port);
    let mut r2 = Client::connect(stale_no.port);
    follow(&mut r1, primary.port);
    follow(&mut r2, primary.port);
    drop(p);
    drop(primary);
    wait_until(10, "the link down", || {
        info_field(&mut r1, "replication", "master_link_status") == "down"
            && info_field(&mut r2, "replication", "master_link_status") == "down"
    });
    assert_eq!(r1.cmd(&["GET", "k"]), Val::bulk("v"));
    assert_eq!(
        r2.cmd(&["GET", "k"]),
        Val::Err(
            "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
                .into()
        )
    );
    // Commands flagged stale still answer (PING is not one, as in Valkey).
    assert!(r2.cmd(&["INFO", "server"]).as_str().starts_with("# Server"));
    assert!(matches!(r2.cmd(&["PING"]), Val::Err(e) if e.starts_with("MASTERDOWN")));
}

#[test]
fn failover_hands_the_primary_role_over_without_a_full_sync() {
    // ferrokey primary, Valkey replica: FAILOVER TO the replica.
    let ours = start(&["--repl-diskless-sync-delay", "0"]);
    let mut p = Client::connect(ours.port);
    fill(&mut p, "a");
    let v = start_valkey(&["--repl-diskless-sync-delay", "0"]);
    let mut r = Client::connect(v.port);
    follow(&mut r, ours.port);
    assert_eq!(
        p.cmd(&["FAILOVER", "TO", "127.0.0.1", "1", "FORCE"]),
        Val::Err(
            "ERR FAILOVER with force option requires both a timeout and target HOST and IP.".into()
        )
    );
    assert_eq!(
        p.cmd(&["FAILOVER", "TO", "127.0.0.1", "1"]),
        Val::Err("ERR FAILOVER target HOST and PORT is not a replica.".into())
    );
    assert_eq!(p.cmd(&["FAILOVER", "ABORT"]), Val::Err("ERR No failover in progress.".into()));
    assert_eq!(p.cmd(&["FAILOVER", "TO", "127.0.0.1", &v.port.to_string()]), Val::ok());
    wait_until(20, "the roles swapped", || {
        info_field(&mut r, "replication", "role") == "master"
            && info_field(&mut p, "replication", "master_link_status") == "up"
    });
    assert_eq!(info_field(&mut p, "replication", "master_failover_state"), "no-failover");
    assert_eq!(info_int(&mut r, "stats", "sync_full"), 0, "the new primary sent no snapshot");
    assert_eq!(r.cmd(&["SET", "after", "1"]), Val::ok());
    assert_eq!(r.cmd(&["WAIT", "1", "5000"]), Val::Int(1));
    assert_eq!(dataset(&mut p), dataset(&mut r));
    // And back: the Valkey primary fails over to ferrokey.
    let full_before = info_int(&mut p, "stats", "sync_full");
    assert_eq!(r.cmd(&["FAILOVER"]), Val::ok());
    wait_until(20, "the roles swapped back", || {
        info_field(&mut p, "replication", "role") == "master"
            && info_field(&mut r, "replication", "master_link_status") == "up"
    });
    assert_eq!(info_int(&mut p, "stats", "sync_full"), full_before, "no snapshot sent back");
    assert_eq!(p.cmd(&["SET", "back", "1"]), Val::ok());
    assert_eq!(p.cmd(&["WAIT", "1", "5000"]), Val::Int(1));
    assert_eq!(dataset(&mut r), dataset(&mut p));
}

/// Sends SIGSTOP or SIGCONT to a server.
fn signal(server: &Server, sig: &str) {
    let pid = server.child.id().to_string();
    assert!(std::process::Command::new("kill").args([sig, &pid]).status().unwrap().success());
}

#[test]
fn shutdown_waits_for_lagging_replicas() {
    // Valkey's primary first, as the oracle of what is observable.
    let debug = ["--repl-diskless-sync-delay", "0"];
    for primary in [start_valkey(&debug), start(&debug)] {
        let replica = start_valkey(&[]);
        let mut r = Client::connect(replica.port);
        follow(&mut r, primary.port);
        let mut p = Client::connect(primary.port);
        // The replica stops acknowledging; a shutdown waits for it, writes paused.
        signal(&replica, "-STOP");
        p.cmd(&["SET", "k", "1"]);
        let mut c = Client::connect(primary.port);
        c.send(&[b"SHUTDOWN"]);
        let mut w = Client::connect(primary.port);
        std::thread::sleep(Duration::from_millis(200));
        w.send(&[b"SET", b"k", b"2"]);
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(p.cmd(&["GET", "k"]), Val::bulk("1"));
        // ABORT ends it: the caller gets the error, the held write goes through.
        assert_eq!(p.cmd(&["SHUTDOWN", "ABORT"]), Val::ok());
        let failed = Val::Err("ERR Errors trying to SHUTDOWN. Check logs.".into());
        assert_eq!(c.read(), failed);
        assert_eq!(w.read(), Val::ok());
        assert_eq!(p.cmd(&["SHUTDOWN", "ABORT"]), Val::Err("ERR No shutdown in progress.".into()));
        // Again, and the replica comes back: it catches up, then the primary exits.
        // (A new connection: Valkey 9.1 did not serve the aborted caller's next command here.)
        let mut c = Client::connect(primary.port);
        c.send(&[b"SHUTDOWN", b"NOSAVE"]);
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(p.cmd(&["PING"]), Val::Simple("PONG".into()));
        signal(&replica, "-CONT");
        let mut primary = primary;
        wait_until(10, "the primary's exit", || primary.child.try_wait().unwrap().is_some());
        assert_eq!(r.cmd(&["GET", "k"]), Val::bulk("2"));
    }
    // With NOW, or past shutdown-timeout, a stopped replica does not hold the exit.
    for (args, how) in [(&["SHUTDOWN", "NOW"][..], "NOW"), (&["SHUTDOWN"][..], "timeout")] {
        let mut primary = start(&["--repl-diskless-sync-delay", "0", "--shutdown-timeout", "1"]);
        let replica = start_valkey(&[]);
        let mut r = Client::connect(replica.port);
        follow(&mut r, primary.port);
        signal(&replica, "-STOP");
        let mut p = Client::connect(primary.port);
        p.cmd(&["SET", "k", "1"]);
        let started = Instant::now();
        p.send(&args.iter().map(|a| a.as_bytes()).collect::<Vec<_>>());
        wait_until(10, "the primary's exit", || primary.child.try_wait().unwrap().is_some());
        let took = started.elapsed();
        signal(&replica, "-CONT");
        if how == "NOW" {
            assert!(took < Duration::from_millis(900), "{how}: {took:?}");
        } else {
            assert!(took >= Duration::from_millis(900), "{how}: {took:?}");
        }
    }
}

#[test]
fn failover_that_cannot_sync_times_out_and_writes_resume() {
    let ours = start(&["--repl-diskless-sync-delay", "0"]);
    let mut p = Client::connect(ours.port);
    let v = start_valkey(&[]);
    let mut r = Client::connect(v.port);
    follow(&mut r, ours.port);
    // The replica stops acknowledging: it is paused.
    let pid = v.child.id() as i32;
    assert!(std::process::Command::new("kill")
        .args(["-STOP", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    p.cmd(&["SET", "k", "v"]);
    assert_eq!(p.cmd(&["FAILOVER", "TIMEOUT", "1000"]), Val::ok());
    assert_eq!(info_field(&mut p, "replication", "master_failover_state"), "waiting-for-sync");
    assert_eq!(p.cmd(&["FAILOVER"]), Val::Err("ERR FAILOVER already in progress.".into()));
    // The failover's pause is its own: CLIENT UNPAUSE does not let writes through.
    assert_eq!(p.cmd(&["CLIENT", "UNPAUSE"]), Val::ok());
    let mut w = Client::connect(ours.port);
    w.send(&[b"SET", b"held", b"1"]);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(p.cmd(&["GET", "held"]), Val::Nil);
    assert_eq!(info_field(&mut p, "replication", "master_failover_state"), "waiting-for-sync");
    wait_until(10, "the failover aborted", || {
        info_field(&mut p, "replication", "master_failover_state") == "no-failover"
    });
    assert_eq!(w.read(), Val::ok());
    assert!(std::process::Command::new("kill")
        .args(["-CONT", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    assert_eq!(info_field(&mut p, "replication", "role"), "master");
    assert_eq!(p.cmd(&["SET", "k", "w"]), Val::ok());
}

#[test]
fn a_primary_killed_during_a_full_sync_leaves_the_replica_with_its_old_data() {
    for mode in ["disabled", "swapdb", "flush-before-load"] {
        primary_killed_during_a_full_sync(mode);
    }
}

fn primary_killed_during_a_full_sync(mode: &str) {
    let primary = start(&["--repl-diskless-sync-delay", "0"]);
    let mut p = Client::connect(primary.port);
    fill_big(&mut p);
    let replica = start(&["--repl-diskless-load", mode]);
    let mut r = Client::connect(replica.port);
    r.cmd(&["SET", "old", "data"]);
    let mut primary = primary;
    assert_eq!(r.cmd(&["REPLICAOF", "127.0.0.1", &primary.port.to_string()]), Val::ok());
    wait_until(10, "the full sync to start", || {
        info_int(&mut p, "replication", "connected_slaves") == 1
    });
    // The transfer under way (bytes read), or already over: killed before its first byte,
    // the primary would leave even flush-before-load's old data in place.
    wait_until(10, "the snapshot's first bytes", || {
        let info = r.cmd(&["INFO", "replication"]).as_str();
        info.contains("master_link_status:up")
            || info.lines().any(|l| {
                l.strip_prefix("master_sync_read_bytes:")
                    .is_some_and(|n| n.parse::<i64>().is_ok_and(|n| n > 0))
            })
    });
    primary.child.kill().unwrap();
    primary.child.wait().unwrap();
    wait_until(10, "the link down", || {
        info_field(&mut r, "replication", "master_link_status") == "down"
    });
    // Either the old dataset (none under flush-before-load, which drops it first) or the
    // whole new one: never half of it.
    let n = r.cmd(&["DBSIZE"]).as_int();
    let old = if mode == "flush-before-load" { 0 } else { 1 };
    assert!(n == old || n == 40_000, "{mode}: {n} keys");
    if n == 1 {
        assert_eq!(r.cmd(&["GET", "old"]), Val::bulk("data"));
    }
}

/// The stream a SYNC reads while `writes` run on the server of `port`: commands, PINGs left
/// out, and times (numbers of 13 digits or more: unix milliseconds) replaced by `<ms>`.
fn stream_of(port: u16, writes: &[&[&str]]) -> Vec<String> {
    let mut s = Client::connect(port);
    s.send(&[b"SYNC"]);
    read_payload(&mut s);
    let mut c = Client::connect(port);
    for w in writes {
        c.cmd(w);
    }
    c.cmd(&["SET", "end-of-test", "1"]);
    let mut out = Vec::new();
    loop {
        let cmd = next_command(&mut s);
        if cmd == ["SET", "end-of-test", "1"] {
            return out;
        }
        let words: Vec<String> = cmd
            .iter()
            .map(|w| {
                let digits = w.len() >= 13 && w.bytes().all(|b| b.is_ascii_digit());
                if digits {
                    "<ms>".to_string()
                } else {
                    w.clone()
                }
            })
            .collect();
        out.push(words.join(" "));
    }
}

#[test]
fn every_write_propagates_as_valkey_propagates_it() {
    let writes: &[&[&str]] = &[
        &["SET", "s", "v"],
        &["SET", "s", "v", "EX", "100"],
        &["SET", "s", "v", "PX", "100000", "GET"],
        &["SET", "s", "v", "KEEPTTL"],
        &["SET", "s", "v", "NX"],
        &["SETNX", "s2", "v"],
        &["SETEX", "s3", "100", "v"],
        &["PSETEX", "s4", "100000", "v"],
        &["GETSET", "s", "w"],
        &["GETDEL", "s4"],
        &["GETEX", "s", "EX", "100"],
        &["GETEX", "s", "PERSIST"],
        &["MSET", "m1", "1", "m2", "2"],
        &["MSETNX", "m3", "3", "m1", "x"],
        &["APPEND", "s", "more"],
        &["INCR", "n"],
        &["DECRBY", "n", "5"],
        &["INCRBYFLOAT", "f", "1.5"],
        &["SETRANGE", "s", "2", "zz"],
        &["DEL", "m2", "missing"],
        &["UNLINK", "m3"],
        &["EXPIRE", "s", "100"],
        &["PEXPIRE", "s", "200000", "GT"],
        &["EXPIRE", "s", "1", "LT"],
        &["EXPIRE", "s", "5", "XX", "GT"],
        &["EXPIREAT", "s", "4000000000"],
        &["PERSIST", "s"],
        &["RENAME", "s", "s5"],
        &["RENAMENX", "s5", "s6"],
        &["COPY", "s6", "s7"],
        &["MOVE", "s7", "3"],
        &["LPUSH", "l", "a", "b", "c", "d"],
        &["RPUSH", "l", "e"],
        &["LPOP", "l"],
        &["RPOP", "l", "2"],
        &["RPOPLPUSH", "l", "l2"],
        &["LMOVE", "l2", "l", "LEFT", "RIGHT"],
        &["LSET", "l", "0", "x"],
        &["LINSERT", "l", "BEFORE", "x", "y"],
        &["LREM", "l", "0", "y"],
        &["LTRIM", "l", "0", "10"],
        &["LMPOP", "1", "l", "LEFT"],
        &["BLPOP", "l", "0"],
        &["HSET", "h", "a", "1", "b", "2"],
        &["HSETNX", "h", "c", "3"],
        &["HDEL", "h", "a"],
        &["HINCRBY", "h", "b", "3"],
        &["HINCRBYFLOAT", "h", "b", "0.5"],
        &["SADD", "st", "a", "b", "c"],
        &["SREM", "st", "a"],
        &["SMOVE", "st", "st2", "b"],
        &["SINTERSTORE", "st3", "st", "st2"],
        &["SUNIONSTORE", "st3", "st", "st2"],
        &["SDIFFSTORE", "st3", "st", "st2"],
        &["ZADD", "z", "1", "a", "2", "b", "3", "c"],
        &["ZINCRBY", "z", "1.5", "a"],
        &["ZREM", "z", "c"],
        &["ZPOPMIN", "z"],
        &["ZADD", "z", "5", "d", "6", "e"],
        &["ZREMRANGEBYSCORE", "z", "5", "5"],
        &["ZUNIONSTORE", "z2", "1", "z"],
        &["ZRANGESTORE", "z3", "z", "0", "-1"],
        &["ZMPOP", "1", "z", "MAX"],
        &["BZPOPMIN", "z2", "0"],
        &["SORT", "l", "ALPHA", "STORE", "sorted"],
        &["SWAPDB", "0", "1"],
        &["SWAPDB", "0", "1"],
        // Writes that change nothing are not propagated; a past expire time deletes.
        &["HSETNX", "h", "c", "9"],
        &["SADD", "st", "c"],
        &["SREM", "st", "missing"],
        &["PERSIST", "h"],
        &["EXPIRE", "missing", "100"],
        &["SET", "gone", "1"],
        &["EXPIRE", "gone", "-1"],
        &["SET", "x", "1", "EXAT", "4000000000"],
        &["GETEX", "x", "PXAT", "4000000000000"],
        &["PEXPIREAT", "x", "4000000000001"],
        &["ZADD", "z9", "INCR", "2", "m"],
        &["ZADD", "z9", "GT", "1", "m"],
        &["COPY", "x", "y", "REPLACE"],
        &["RPUSHX", "missing", "a"],
        &["DEL", "missing1", "missing2"],
        &["MULTI"],
        &["INCR", "n"],
        &["GET", "n"],
        &["EXEC"],
        &["MULTI"],
        &["GET", "n"],
        &["EXEC"],
        &["SELECT", "5"],
        &["SET", "in5", "1"],
        &["SELECT", "0"],
        &["FLUSHDB"],
        &["FLUSHALL"],
    ];
    let ours = start(&[]);
    let theirs = start_valkey(&[]);
    let want = stream_of(theirs.port, writes);
    let got = stream_of(ours.port, writes);
    let differ: Vec<String> = got
        .iter()
        .zip(&want)
        .filter(|(g, w)| g != w)
        .map(|(g, w)| format!("ours {g:?}, Valkey's {w:?}"))
        .collect();
    assert!(differ.is_empty(), "{differ:#?}");
    assert_eq!(got, want);
}

/// A script the primary sends (an old primary's EVAL) keeps a replica busy like any other,
/// but SCRIPT KILL cannot stop it: a replica must apply what its primary applied.
#[test]
fn a_busy_script_from_the_primary_cannot_be_killed() {
    let empty = start(&[]);
    let mut s = Client::connect(empty.port);
    s.send(&[b"SYNC"]);
    let rdb = read_payload(&mut s);
    let mut seen = Vec::new();
    for replica in [start(&[]), start_valkey(&[])] {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let mut r = Client::connect(replica.port);
        assert_eq!(r.cmd(&["CONFIG", "SET", "busy-reply-threshold", "50"]), Val::ok());
        assert_eq!(r.cmd(&["REPLICAOF", "127.0.0.1", &port.to_string()]), Val::ok());
        let mut p = fake_primary(&listener, &rdb);
        wait_until(10, "master_link_status:up", || {
            info_field(&mut r, "replication", "master_link_status") == "up"
        });
        // Spins for 700 ms by the clock, then writes.
        let script = "local function now() local t = server.call('time') \
                        return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000 end \
                      local s = now() while now() - s < 700 do end \
                      server.call('set', 'k', 'v')";
        p.send(&[b"EVAL", script.as_bytes(), b"0"]);
        std::thread::sleep(Duration::from_millis(300));
        let mut c = Client::connect(replica.port);
        let busy = (c.cmd(&["PING"]), c.cmd(&["SCRIPT", "KILL"]));
        wait_until(10, "the script's write", || r.cmd(&["GET", "k"]) == Val::bulk("v"));
        seen.push(busy);
    }
    assert_eq!(seen[0], seen[1]);
    assert!(matches!(&seen[0].1, Val::Err(e) if e.starts_with("UNKILLABLE ")), "{seen:?}");
}

/// A primary that requires a password: a ferrokey replica logs in with `masterauth`
/// (the default user's `requirepass`) or `masteruser` + `masterauth` (an ACL user allowed
/// only what a replica needs), to a Valkey primary and to a ferrokey one, and a Valkey
/// replica logs in to ferrokey the same way; a wrong password keeps the link down.
#[test]
fn replicas_authenticate_to_primaries_that_require_it() {
    let repl_user = ["repl", "on", ">rp", "+psync", "+replconf", "+ping", "+sync"];
    let primaries = [
        start_valkey(&["--requirepass", "pw", "--repl-diskless-sync-delay", "0"]),
        start(&["--requirepass", "pw", "--repl-diskless-sync-delay", "0"]),
    ];
    for primary in &primaries {
        let mut p = Client::connect(primary.port);
        assert_eq!(p.cmd(&["AUTH", "pw"]), Val::ok());
        let setuser: Vec<&str> = ["ACL", "SETUSER"].into_iter().chain(repl_user).collect();
        assert_eq!(p.cmd(&setuser), Val::ok());
        assert_eq!(p.cmd(&["SET", "k", "v"]), Val::ok());
        // (replica, masteruser) pairs: default user by password, then the ACL user.
        let replicas = [
            (start(&["--masterauth", "pw"]), ""),
            (start(&["--masteruser", "repl", "--masterauth", "rp"]), "repl"),
            (start_valkey(&["--masteruser", "repl", "--masterauth", "rp"]), "repl"),
        ];
        for (i, (replica, user)) in replicas.iter().enumerate() {
            let mut r = Client::connect(replica.port);
            follow(&mut r, primary.port);
            wait_until(10, "the snapshot", || r.cmd(&["GET", "k"]) == Val::bulk("v"));
            // And the stream after it.
            let tag = format!("{i}{user}");
            assert_eq!(p.cmd(&["SET", "k2", &tag]), Val::ok());
            wait_until(10, "the stream", || r.cmd(&["GET", "k2"]) == Val::bulk(&tag));
        }
        // A wrong password: the link never comes up.
        let wrong = start(&["--masterauth", "nope"]);
        let mut r = Client::connect(wrong.port);
        let port = primary.port.to_string();
        assert_eq!(r.cmd(&["REPLICAOF", "127.0.0.1", &port]), Val::ok());
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(info_field(&mut r, "replication", "master_link_status"), "down");
    }
}

/// CLIENT CAPA REDIRECT: a replica answers that client's reads and writes (even queued in
/// MULTI) with its primary's address, as Valkey 9.1; other commands run; CLIENT INFO shows
/// `capa=r`.
#[test]
fn a_replica_redirects_clients_that_claim_the_capability() {
    let mut replies = Vec::new();
    for valkey in [false, true] {
        let primary = if valkey { start_valkey(&[]) } else { start(&[]) };
        let replica = if valkey { start_valkey(&[]) } else { start(&[]) };
        let mut r = Client::connect(replica.port);
        follow(&mut r, primary.port);
        let mut c = Client::connect(replica.port);
        let mut seen = vec![c.cmd(&["GET", "k"]), c.cmd(&["CLIENT", "CAPA", "redirect", "other"])];
        for cmd in
            [&["GET", "k"][..], &["SET", "k", "v"], &["PING"], &["MULTI"], &["GET", "k"], &["EXEC"]]
        {
            let reply = c.cmd(cmd);
            // The primary's port differs between the two runs.
            let port = primary.port.to_string();
            seen.push(match reply {
                Val::Err(e) => Val::Err(e.replace(&port, "PORT")),
                other => other,
            });
        }
        let info = c.cmd(&["CLIENT", "INFO"]).as_str();
        assert!(info.contains(" flags=N capa=r db=0 "), "{info}");
        replies.push(seen);
    }
    assert_eq!(replies[0], replies[1], "(left: ferrokey, right: valkey)");
}

#[test]
fn waitaof_answers_as_valkey_without_replicas() {
    let args = ["--appendonly", "yes"];
    let mut pair = common::diff::Pair::start(2, &args);
    pair.same_lines(&[
        "SET a 1",
        "WAITAOF 1 0 0",
        "WAITAOF 0 0 0",
        "WAITAOF 2 0 0",
        "WAITAOF -1 0 0",
        "WAITAOF 0 -1 0",
        "WAITAOF 0 0 -1",
        "WAITAOF x 0 0",
        "WAITAOF 0 x 0",
        "WAITAOF 1 0 x",
        "WAITAOF 1 0",
        // No replica: the timeout answers, with the local disk's acknowledgement.
        "WAITAOF 1 1 150",
        "CONFIG SET appendfsync always",
        "SET a 2",
        "WAITAOF 1 0 0",
        "CONFIG SET appendfsync no",
        "SET a 3",
        "WAITAOF 1 0 100",
        // Inside a transaction it cannot block: it answers at once.
        "MULTI",
        "WAITAOF 1 1 0",
        "EXEC",
        "CONFIG SET appendonly no",
        "WAITAOF 1 0 0",
        "WAITAOF 0 0 0",
        "WAITAOF 0 1 50",
        "COMMAND INFO waitaof",
    ]);
}

#[test]
fn waitaof_counts_the_replicas_that_say_their_aof_holds_the_writes() {
    // A replica played by the test: what it says it fsynced (FACK) is what counts.
    for primary in [
        start_valkey(&["--repl-diskless-sync", "no", "--appendonly", "yes"]),
        start(&["--repl-diskless-sync", "no", "--appendonly", "yes"]),
    ] {
        let mut fake = Client::connect(primary.port);
        assert_eq!(fake.cmd(&["REPLCONF", "listening-port", "1"]), Val::ok());
        fake.send(&[b"PSYNC", b"?", b"-1"]);
        let head = line(&mut fake);
        let offset: i64 = head.rsplit(' ').next().unwrap().parse().expect(&head);
        read_payload(&mut fake);
        fake.send(&[b"REPLCONF", b"ACK", offset.to_string().as_bytes()]);
        let mut p = Client::connect(primary.port);
        wait_until(10, "the replica online", || {
            info_field(&mut p, "replication", "slave0").contains("state=online")
        });
        p.cmd(&["SET", "k", "v"]);
        let now = info_int(&mut p, "replication", "master_repl_offset").to_string();
        // Received (WAIT counts it) but not on its disk: WAITAOF does not.
        fake.send(&[b"REPLCONF", b"ACK", now.as_bytes()]);
        assert_eq!(p.cmd(&["WAIT", "1", "5000"]), Val::Int(1));
        assert_eq!(
            p.cmd(&["WAITAOF", "0", "1", "100"]),
            Val::Array(vec![Val::Int(1), Val::Int(0)])
        );
        fake.send(&[b"REPLCONF", b"ACK", now.as_bytes(), b"FACK", now.as_bytes()]);
        assert_eq!(
            p.cmd(&["WAITAOF", "1", "1", "5000"]),
            Val::Array(vec![Val::Int(1), Val::Int(1)])
        );
    }
}

#[test]
fn waitaof_counts_real_replicas_with_an_aof_both_ways() {
    // A ferrokey primary with a Valkey and a ferrokey replica, both logging to an AOF.
    let aof = ["--appendonly", "yes"];
    let primary = start(&aof);
    let (valkey, ours) = (start_valkey(&aof), start(&aof));
    for r in [&valkey, &ours] {
        follow(&mut Client::connect(r.port), primary.port);
    }
    let mut p = Client::connect(primary.port);
    wait_until(20, "two replicas online", || {
        info_field(&mut p, "replication", "slave1").contains("state=online")
    });
    for i in 0..3 {
        p.cmd(&["SET", "k", &i.to_string()]);
        assert_eq!(
            p.cmd(&["WAITAOF", "1", "2", "10000"]),
            Val::Array(vec![Val::Int(1), Val::Int(2)])
        );
    }
    // A ferrokey replica of a Valkey primary says what it fsynced too.
    let vprimary = start_valkey(&aof);
    let replica = start(&aof);
    follow(&mut Client::connect(replica.port), vprimary.port);
    let mut vp = Client::connect(vprimary.port);
    vp.cmd(&["SET", "k", "v"]);
    assert_eq!(vp.cmd(&["WAITAOF", "1", "1", "10000"]), Val::Array(vec![Val::Int(1), Val::Int(1)]));
    // And a replica without an AOF never counts.
    let plain = start(&[]);
    follow(&mut Client::connect(plain.port), vprimary.port);
    wait_until(20, "two replicas online", || {
        info_field(&mut vp, "replication", "slave1").contains("state=online")
    });
    vp.cmd(&["SET", "k", "w"]);
    assert_eq!(vp.cmd(&["WAITAOF", "0", "2", "3000"]), Val::Array(vec![Val::Int(1), Val::Int(1)]));
}
