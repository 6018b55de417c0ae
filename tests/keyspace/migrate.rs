//! MIGRATE and RESTORE-ASKING: keys moved between ferrokey and a real Valkey 9.1 both ways
//! and between two ferrokeys; every reply and error compared with Valkey migrating to a
//! target of the same kind; what goes on the wire (read by a fake target); the connection
//! cache (a dead cached connection retried); propagation to the AOF; keyspace events;
//! redaction of credentials in SLOWLOG and MONITOR; GETKEYS.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::JoinHandle;

use super::*;
use common::{aof_commands, contents, monitor_and_client, start_valkey, Server};

/// Sends `line` with `{port}` replaced by `port` and returns the raw reply.
fn to(c: &mut Client, line: &str, port: u16) -> Vec<u8> {
    let line = line.replace("{port}", &port.to_string());
    let argv = common::diff::words(&line);
    c.send(&argv);
    c.read_raw()
}

/// Ferrokey and the oracle, each with a target of its own of the same kind: the same line
/// (`{port}` standing for the side's target) must get byte-identical replies.
struct Sides {
    p: Pair,
    /// The targets of ferrokey and of the oracle.
    targets: [Server; 2],
    /// A client of each target.
    on: [Client; 2],
}

impl Sides {
    fn new(target: impl Fn() -> Server) -> Sides {
        let targets = [target(), target()];
        let on = [Client::connect(targets[0].port), Client::connect(targets[1].port)];
        Sides { p: Pair::start(2, &[]), targets, on }
    }

    fn same(&mut self, line: &str) {
        let ours = to(&mut self.p.a, line, self.targets[0].port);
        let theirs = to(&mut self.p.b, line, self.targets[1].port);
        self.p.assert_same_raw(line, &ours, &theirs);
    }

    /// A line sent to both targets (and answered the same).
    fn on_targets(&mut self, line: &str) {
        let [ours, theirs] = &mut self.on;
        let (o, t) = (to(ours, line, 0), to(theirs, line, 0));
        self.p.assert_same_raw(line, &o, &t);
    }

    fn both(&mut self, line: &str) {
        self.p.same_line(line);
    }
}

/// A key of every type, some with TTLs.
fn fill(c: &mut Client) {
    for cmd in [
        "SET str hello PX 100000",
        "SET int 12345",
        "RPUSH list a b c",
        "HSET hash f1 v1 f2 v2",
        "SADD set x y z",
        "SADD iset 1 2 3",
        "ZADD zset 1 a 2.5 b",
        "XADD stream 1-1 f v",
        "PEXPIRE hash 200000",
    ] {
        let reply = c.cmd(&cmd.split(' ').collect::<Vec<_>>());
        assert!(!matches!(reply, Val::Err(_)), "{cmd}: {reply:?}");
    }
}

const KEYS: [&str; 8] = ["str", "int", "list", "hash", "set", "iset", "zset", "stream"];

fn migrate_all(c: &mut Client, port: u16, extra: &[&str]) -> Val {
    let port = port.to_string();
    let mut argv = vec!["MIGRATE", "127.0.0.1", &port, "", "0", "5000"];
    argv.extend_from_slice(extra);
    argv.push("KEYS");
    argv.extend_from_slice(&KEYS);
    c.cmd(&argv)
}

fn snapshot(c: &mut Client) -> Vec<Val> {
    KEYS.iter().map(|k| contents(c, k)).collect()
}

#[test]
fn every_type_moves_with_its_ttl_between_ferrokey_and_valkey() {
    let (a, v, b) = (start(&[]), start_valkey(&[]), start(&[]));
    let (mut ca, mut cv, mut cb) =
        (Client::connect(a.port), Client::connect(v.port), Client::connect(b.port));
    fill(&mut ca);
    let before = snapshot(&mut ca);
    // ferrokey -> Valkey: the keys leave.
    assert_eq!(migrate_all(&mut ca, v.port, &[]), Val::ok());
    assert_eq!(ca.cmd(&["DBSIZE"]), int(0));
    assert_eq!(snapshot(&mut cv), before);
    let ttl = cv.cmd(&["PTTL", "str"]).as_int();
    assert!((90_000..=100_000).contains(&ttl), "TTL sent is the remaining one: {ttl}");
    assert!(cv.cmd(&["PTTL", "hash"]).as_int() > 190_000);
    assert_eq!(cv.cmd(&["PTTL", "int"]), int(-1));
    // Valkey -> ferrokey.
    assert_eq!(migrate_all(&mut cv, a.port, &[]), Val::ok());
    assert_eq!(snapshot(&mut ca), before);
    assert!(ca.cmd(&["PTTL", "str"]).as_int() > 80_000);
    // ferrokey -> ferrokey, COPY: the keys stay.
    assert_eq!(migrate_all(&mut ca, b.port, &["COPY"]), Val::ok());
    assert_eq!(snapshot(&mut ca), before);
    assert_eq!(snapshot(&mut cb), before);
    assert!(cb.cmd(&["PTTL", "hash"]).as_int() > 150_000);
    // Again: BUSYKEY from the target, the keys stay; REPLACE overwrites.
    assert_eq!(
        migrate_all(&mut ca, b.port, &["COPY"]),
        err("ERR Target instance replied with error: BUSYKEY Target key name already exists.")
    );
    assert_eq!(ca.cmd(&["DBSIZE"]), int(8));
    cb.cmd(&["SET", "int", "other"]);
    assert_eq!(migrate_all(&mut ca, b.port, &["REPLACE"]), Val::ok());
    assert_eq!(snapshot(&mut cb), before);
    assert_eq!(ca.cmd(&["DBSIZE"]), int(0));
    // Single-key form, destination database.
    assert_eq!(
        cb.cmd(&["MIGRATE", "127.0.0.1", &a.port.to_string(), "list", "3", "1000"]),
        Val::ok()
    );
    assert_eq!(ca.cmd(&["SELECT", "3"]), Val::ok());
    assert_eq!(contents(&mut ca, "list"), before[2]);
    // The server served the whole time.
    assert_eq!(ca.cmd(&["PING"]), simple("PONG"));
}

#[test]
fn replies_and_errors_match_valkey() {
    let mut s = Sides::new(|| start_valkey(&[]));
    for line in ["SET k v", "SET k2 v2", "SET busy mine", "SET e v PX 1"] {
        s.both(line);
    }
    s.on_targets("SET busy theirs");
    std::thread::sleep(Duration::from_millis(10));
    for line in [
        "MIGRATE 127.0.0.1 {port} k 0",
        "MIGRATE 127.0.0.1 {port} k 0 1000 COPY FOO",
        "MIGRATE 127.0.0.1 {port} k 0 1000 AUTH",
        "MIGRATE 127.0.0.1 {port} k 0 1000 AUTH2 u",
        "MIGRATE 127.0.0.1 {port} k 0 1000 KEYS k2",
        "MIGRATE 127.0.0.1 {port} k x 1000",
        "MIGRATE 127.0.0.1 {port} k 0 1000x",
        "MIGRATE 127.0.0.1 {port} k x y foo",
        "MIGRATE 127.0.0.1 {port} k x y KEYS a",
        "MIGRATE 127.0.0.1 {port} nokey 0 1000",
        "MIGRATE 127.0.0.1 {port} e 0 1000",
        "MIGRATE 127.0.0.1 {port} \"\" 0 1000 KEYS nokey e",
        "MIGRATE 127.0.0.1 {port} \"\" 0 1000 KEYS",
        "MIGRATE 127.0.0.1 {port} busy 0 1000 COPY",
        "MIGRATE 127.0.0.1 {port} \"\" 0 1000 KEYS k busy",
        "EXISTS k busy",
        "MIGRATE 127.0.0.1 {port} busy 99 1000",
        "MIGRATE 127.0.0.1 {port} busy 1 1000 AUTH pw",
        "MIGRATE 127.0.0.1 {port} busy 1 1000 AUTH2 u pw",
        "MIGRATE 127.0.0.1 {port} busy 0 1000 REPLACE",
        "MIGRATE 127.0.0.1 {port} k2 2 -5 COPY",
        "EXISTS busy k2",
        "MIGRATE 127.0.0.1 1 k2 0 1000",
        "MIGRATE 127.0.0.1 notaport k2 0 1000",
        "MIGRATE 127.0.0.1 70000 k2 0 1000",
    ] {
        s.same(line);
    }
    for line in ["SELECT 2", "EXISTS k2", "SELECT 1", "DBSIZE", "SELECT 0", "GET busy"] {
        s.on_targets(line);
    }
    for line in [
        "COMMAND GETKEYS MIGRATE h p k 0 0",
        "COMMAND GETKEYS MIGRATE h p \"\" 0 0",
        "COMMAND GETKEYS MIGRATE h p \"\" 0 0 COPY KEYS a b",
        "COMMAND GETKEYS MIGRATE h p \"\" 0 0 AUTH KEYS KEYS a",
        "COMMAND GETKEYS MIGRATE h p \"\" 0 0 AUTH2 KEYS KEYS KEYS a",
        "COMMAND GETKEYS MIGRATE h p k 0 0 KEYS a",
        "COMMAND GETKEYS MIGRATE h p \"\" 0 0 KEYS",
        "COMMAND GETKEYS MIGRATE h p k 0 0 KEYS",
        "COMMAND GETKEYS MIGRATE h p \"\" 0 0 KEYS KEYS",
        "COMMAND GETKEYS MIGRATE h p k 0 0 AUTH2 x KEYS",
        "COMMAND GETKEYSANDFLAGS MIGRATE h p \"\" 0 0 KEYS a b",
        "COMMAND GETKEYSANDFLAGS MIGRATE h p k 0 0",
        "RESTORE-ASKING k 0 garbage",
        "RESTORE-ASKING k",
        "RESTORE-ASKING k x v",
        "RESTORE-ASKING k -1 v",
    ] {
        s.both(line);
    }
}

#[test]
fn credentials_reach_a_target_with_a_password_and_users() {
    let target = || {
        let t = start_valkey(&["--requirepass", "secret"]);
        let mut c = Client::connect(t.port);
        assert_eq!(c.cmd(&["AUTH", "secret"]), Val::ok());
        assert_eq!(c.cmd(&["ACL", "SETUSER", "mover", "on", ">pw2", "~*", "+@all"]), Val::ok());
        t
    };
    let mut s = Sides::new(target);
    for line in ["SET a 1", "SET b 2", "SET c 3", "SET d 4"] {
        s.both(line);
    }
    for line in [
        "MIGRATE 127.0.0.1 {port} a 0 1000",
        "MIGRATE 127.0.0.1 {port} a 0 1000 AUTH wrong",
        "MIGRATE 127.0.0.1 {port} a 0 1000 AUTH2 mover wrong",
        "MIGRATE 127.0.0.1 {port} a 0 1000 AUTH2 nobody pw2",
        "MIGRATE 127.0.0.1 {port} a 0 1000 AUTH secret",
        "MIGRATE 127.0.0.1 {port} b 3 1000 AUTH2 mover pw2",
        "MIGRATE 127.0.0.1 {port} \"\" 3 1000 COPY AUTH2 mover pw2 KEYS c d",
        "MIGRATE 127.0.0.1 {port} \"\" 3 1000 AUTH2 mover pw2 REPLACE KEYS c d",
        "DBSIZE",
    ] {
        s.same(line);
    }
    for line in ["AUTH secret", "GET a", "SELECT 3", "MGET b c d"] {
        s.on_targets(line);
    }
}

/// A target that accepts and records what it is sent, answering each command with the
/// next reply of `replies` (then `+OK`); it closes each connection after `per_conn`
/// commands, and stops after `conns` connections. The join handle gives the commands of
/// each connection.
fn fake_target(
    replies: Vec<&'static str>,
    per_conn: usize,
    conns: usize,
) -> (u16, JoinHandle<Vec<Vec<Argv>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let mut replies = replies.into_iter();
        let mut all = Vec::new();
        for _ in 0..conns {
            let (s, _) = l.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut w = s.try_clone().unwrap();
            let mut r = BufReader::new(s);
            let mut cmds = Vec::new();
            while cmds.len() < per_conn {
                let Some(cmd) = read_command(&mut r) else { break };
                cmds.push(cmd);
                let reply = replies.next().unwrap_or("+OK");
                w.write_all(format!("{reply}\r\n").as_bytes()).unwrap();
            }
            all.push(cmds);
        }
        all
    });
    (port, h)
}

/// One command's arguments.
type Argv = Vec<Vec<u8>>;

fn read_command(r: &mut BufReader<TcpStream>) -> Option<Argv> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let n: usize = line.trim().strip_prefix('*')?.parse().ok()?;
    let mut argv = Vec::new();
    for _ in 0..n {
        line.clear();
        r.read_line(&mut line).ok()?;
        let len: usize = line.trim().strip_prefix('$')?.parse().ok()?;
        let mut buf = vec![0; len + 2];
        r.read_exact(&mut buf).ok()?;
        buf.truncate(len);
        argv.push(buf);
    }
    Some(argv)
}

/// The commands as text, the DUMP payloads (4th argument of RESTORE) left out: the two
/// servers may write other RDB versions.
fn shape(cmds: &[Argv]) -> Vec<String> {
    cmds.iter()
        .map(|argv| {
            let words: Vec<String> = argv
                .iter()
                .enumerate()
                .filter(|(i, _)| !(*i == 3 && argv[0] == b"RESTORE"))
                .map(|(i, w)| {
                    // The TTL: remaining ms, rounded to the second (it ran down meanwhile).
                    if i == 2 && argv[0] == b"RESTORE" {
                        let ms: i64 = String::from_utf8_lossy(w).parse().unwrap();
                        ((ms + 999) / 1000).to_string()
                    } else {
                        String::from_utf8_lossy(w).into_owned()
                    }
                })
                .collect();
            words.join(" ")
        })
        .collect()
}

#[test]
fn wire_commands_and_connection_reuse_match_valkey() {
    let mut got = Vec::new();
    for server in [start(&[]), start_valkey(&[])] {
        let mut c = Client::connect(server.port);
        c.cmd(&["SET", "a", "1", "EX", "100"]);
        c.cmd(&["SET", "b", "2"]);
        let (port, h) = fake_target(vec![], 100, 1);
        let p = port.to_string();
        let m = |c: &mut Client, extra: &[&str]| {
            let mut argv = vec!["MIGRATE", "127.0.0.1", &p];
            argv.extend_from_slice(extra);
            c.cmd(&argv)
        };
        assert_eq!(
            m(&mut c, &["", "3", "1000", "COPY", "REPLACE", "AUTH2", "u", "p", "KEYS", "a", "b"]),
            Val::ok()
        );
        // The same database again on the cached connection: no SELECT.
        assert_eq!(m(&mut c, &["a", "3", "1000", "COPY", "AUTH", "pw"]), Val::ok());
        assert_eq!(m(&mut c, &["b", "0", "1000"]), Val::ok());
        drop(server);
        got.push(h.join().unwrap());
    }
    assert_eq!(got[0].len(), 1, "one connection, reused");
    assert_eq!(shape(&got[0][0]), shape(&got[1][0]));
    assert_eq!(
        shape(&got[0][0]),
        [
            "AUTH u p",
            "SELECT 3",
            "RESTORE a 100 REPLACE",
            "RESTORE b 0 REPLACE",
            "AUTH pw",
            "RESTORE a 100",
            "SELECT 0",
            "RESTORE b 0"
        ]
    );
}

#[test]
fn a_dead_cached_connection_is_retried_and_a_silent_target_times_out() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    c.cmd(&["SET", "a", "1"]);
    c.cmd(&["SET", "b", "2"]);
    // The target closes the connection after the first MIGRATE (SELECT + RESTORE).
    let (port, h) = fake_target(vec![], 2, 2);
    let p = port.to_string();
    assert_eq!(c.cmd(&["MIGRATE", "127.0.0.1", &p, "a", "5", "1000"]), Val::ok());
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(c.cmd(&["MIGRATE", "127.0.0.1", &p, "b", "5", "1000"]), Val::ok());
    let conns = h.join().unwrap();
    assert_eq!(shape(&conns[1]), ["SELECT 5", "RESTORE b 0"], "a fresh connection selects again");
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));

    // A target that accepts and never answers: IOERR within the timeout; nothing moved.
    c.cmd(&["SET", "k", "v"]);
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let p = silent.local_addr().unwrap().port().to_string();
    let started = Instant::now();
    assert_eq!(
        c.cmd(&["MIGRATE", "127.0.0.1", &p, "k", "0", "200"]),
        err("IOERR error or timeout reading to target instance")
    );
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert_eq!(c.cmd(&["EXISTS", "k"]), int(1));
    // A refused connection.
    drop(silent);
    assert_eq!(
        c.cmd(&["MIGRATE", "127.0.0.1", &p, "k", "0", "200"]),
        err("IOERR error or timeout writing to target instance")
    );
    assert_eq!(c.cmd(&["GET", "k"]), bulk("v"));
}

#[test]
fn moved_keys_propagate_as_del_and_raise_del_events() {
    let s = start(&["--appendonly", "yes", "--notify-keyspace-events", "Eg"]);
    let t = start(&[]);
    let mut c = Client::connect(s.port);
    let mut sub = Client::connect(s.port);
    sub.cmd(&["SUBSCRIBE", "__keyevent@0__:del"]);
    for k in ["a", "b", "c"] {
        c.cmd(&["SET", k, "1"]);
    }
    let p = t.port.to_string();
    let m = |c: &mut Client, extra: &[&str]| {
        let mut argv = vec!["MIGRATE", "127.0.0.1", &p, "", "0", "1000"];
        argv.extend_from_slice(extra);
        c.cmd(&argv)
    };
    assert_eq!(m(&mut c, &["COPY", "KEYS", "a"]), Val::ok());
    let mut on_target = Client::connect(t.port);
    assert_eq!(on_target.cmd(&["DEL", "a"]), int(1));
    assert_eq!(on_target.cmd(&["SET", "c", "there"]), Val::ok());
    // a and b move, c is refused by the target (BUSYKEY) and stays.
    assert_eq!(
        m(&mut c, &["KEYS", "a", "nokey", "b", "c"]),
        err("ERR Target instance replied with error: BUSYKEY Target key name already exists.")
    );
    assert_eq!(m(&mut c, &["REPLACE", "KEYS", "a"]), simple("NOKEY"));
    assert_eq!(c.cmd(&["KEYS", "*"]), Val::Array(vec![bulk("c")]));
    for k in ["a", "b"] {
        let msg = sub.read().as_array();
        assert_eq!(msg[2], bulk(k));
    }
    let logged: Vec<String> = aof_commands(&s).into_iter().map(|w| w.join(" ")).collect();
    assert!(!logged.iter().any(|l| l.starts_with("MIGRATE")), "{logged:?}");
    assert_eq!(logged.iter().filter(|l| l.starts_with("DEL")).collect::<Vec<_>>(), ["DEL a b"]);
}

#[test]
fn credentials_are_redacted_in_slowlog_and_monitor() {
    let mut slowlogs = Vec::new();
    for server in [
        start(&["--slowlog-log-slower-than", "0"]),
        start_valkey(&["--slowlog-log-slower-than", "0"]),
    ] {
        let (mut m, mut c) = monitor_and_client(server.port);
        let line = "MIGRATE 127.0.0.1 1 k 0 10 COPY AUTH pw KEYS";
        c.cmd(&line.split(' ').collect::<Vec<_>>());
        c.cmd(&[
            "MIGRATE",
            "127.0.0.1",
            "1",
            "",
            "0",
            "10",
            "AUTH2",
            "u",
            "pw",
            "KEYS",
            "AUTH",
            "x",
        ]);
        let mon = m.read().as_str();
        assert!(mon.ends_with("\"MIGRATE\" \"127.0.0.1\" \"1\" \"k\" \"0\" \"10\" \"COPY\" \"AUTH\" \"(redacted)\" \"KEYS\""), "{mon}");
        let mon = m.read().as_str();
        assert!(
            mon.contains("\"AUTH2\" \"(redacted)\" \"(redacted)\" \"KEYS\" \"AUTH\" \"x\""),
            "{mon}"
        );
        let log = c.cmd(&["SLOWLOG", "GET", "10"]).as_array();
        let args = log.iter().map(|e| e.as_array()[3].clone());
        let migrates = args.filter(|a| a.as_array()[0] == bulk("MIGRATE"));
        slowlogs.push(migrates.collect::<Vec<_>>());
    }
    assert_eq!(slowlogs[0].len(), 2);
    assert_eq!(slowlogs[0], slowlogs[1]);
}
