//! Server commands over TCP: INFO, TIME, LASTSAVE, SHUTDOWN, DEBUG, SLOWLOG, MONITOR, WAIT,
//! MEMORY and LATENCY (in `server/latency.rs`), with differential checks against
//! redis-server where replies must match; the Prometheus metrics endpoint
//! (`server/metrics.rs`).

#[path = "server/commandlog.rs"]
mod commandlog;
mod common;
#[path = "server/debug_inspect.rs"]
mod debug_inspect;
#[path = "server/info.rs"]
mod info;
#[path = "server/latency.rs"]
mod latency;
#[path = "server/metrics.rs"]
mod metrics;

use std::time::{Duration, Instant};

use common::diff::same_as_valkey_with;
use common::{assert_same_as_valkey, err, monitor_and_client, start, start_valkey, Client, Val};

const DEBUG_REFUSED: &str = "ERR DEBUG command not allowed. If the enable-debug-command option is \
set to \"local\", you can run it from a local connection, otherwise you need to set this option \
in the configuration file, and then restart the server.";

/// `field:value` of an INFO reply.
fn info_field(info: &str, name: &str) -> Option<String> {
    info.split("\r\n").find_map(|l| l.strip_prefix(name)?.strip_prefix(':')).map(str::to_string)
}

fn headers(info: &str) -> Vec<String> {
    info.split("\r\n").filter(|l| l.starts_with("# ")).map(|l| l[2..].to_string()).collect()
}

#[test]
fn info_default_sections_and_format() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["SET", "k", "v"]), Val::ok());
    let info = c.cmd(&["INFO"]).as_str();
    assert_eq!(
        headers(&info),
        [
            "Server",
            "Clients",
            "Memory",
            "Persistence",
            "Stats",
            "Replication",
            "CPU",
            "Modules",
            "Errorstats",
            "Cluster",
            "Keyspace"
        ]
    );
    // CRLF everywhere; one blank line between sections; none at the end.
    assert!(!info.replace("\r\n", "").contains('\n'));
    assert!(info.contains("\r\n\r\n# Clients\r\n"));
    assert!(info.ends_with("\r\n") && !info.ends_with("\r\n\r\n"));
    assert_eq!(info_field(&info, "server_name").as_deref(), Some("valkey"));
    assert_eq!(info_field(&info, "valkey_version").as_deref(), Some("9.1.2"));
    assert_eq!(info_field(&info, "server_mode").as_deref(), Some("standalone"));
    assert_eq!(info_field(&info, "tcp_port"), Some(s.port.to_string()));
    let clients: u64 = info_field(&info, "connected_clients").unwrap().parse().unwrap();
    assert!(clients >= 1);
    assert_eq!(info_field(&info, "role").as_deref(), Some("master"));
    assert_eq!(info_field(&info, "maxmemory_policy").as_deref(), Some("noeviction"));
    assert_eq!(
        info_field(&info, "db0").as_deref(),
        Some("keys=1,expires=0,avg_ttl=0,keys_with_volatile_items=0")
    );
    for f in [
        "used_memory",
        "used_memory_human",
        "used_memory_rss",
        "used_memory_peak",
        "used_memory_dataset",
        "maxmemory_human",
        "mem_fragmentation_ratio",
        "allocator_allocated",
        "allocator_active",
        "allocator_resident",
        "total_commands_processed",
        "instantaneous_ops_per_sec",
        "total_net_input_bytes",
        "expired_keys",
        "evicted_keys",
        "keyspace_hits",
        "total_error_replies",
        "client_query_buffer_limit_disconnections",
        "client_output_buffer_limit_disconnections",
        "used_cpu_sys",
        "used_cpu_user_main_thread",
        "rdb_changes_since_last_save",
        "master_replid",
        "cluster_enabled",
    ] {
        assert!(info_field(&info, f).is_some(), "INFO lacks {f}");
    }
    let rss: u64 = info_field(&info, "used_memory_rss").unwrap().parse().unwrap();
    assert!(rss > 0);
}

#[test]
fn info_named_sections() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["GET", "missing"]), Val::Nil);
    assert!(matches!(c.cmd(&["NOSUCHCOMMAND"]), Val::Err(_)));
    let stats = c.cmd(&["INFO", "commandstats", "ERRORSTATS"]).as_str();
    assert_eq!(headers(&stats), ["Commandstats", "Errorstats"]);
    let get = info_field(&stats, "cmdstat_get").expect("cmdstat_get");
    assert!(get.starts_with("calls=1,usec="), "{get}");
    assert!(get.contains(",usec_per_call=") && get.ends_with(",rejected_calls=0,failed_calls=0"));
    assert_eq!(info_field(&stats, "errorstat_ERR").as_deref(), Some("count=1"));

    let server = c.cmd(&["INFO", "server"]).as_str();
    assert_eq!(headers(&server), ["Server"]);
    assert!(server.starts_with("# Server\r\nredis_version:"));
    let all = c.cmd(&["INFO", "all"]).as_str();
    assert!(headers(&all).contains(&"Commandstats".to_string()));
    let everything = c.cmd(&["INFO", "everything"]).as_str();
    assert!(headers(&everything).contains(&"Latencystats".to_string()));
    let mixed = c.cmd(&["INFO", "default", "commandstats"]).as_str();
    assert!(headers(&mixed).contains(&"Keyspace".to_string()));
    assert!(headers(&mixed).contains(&"Commandstats".to_string()));
    let stats = c.cmd(&["INFO", "stats"]).as_str();
    assert_eq!(info_field(&stats, "keyspace_misses").as_deref(), Some("1"));
    assert_eq!(info_field(&stats, "total_error_replies").as_deref(), Some("1"));
    assert_eq!(c.cmd(&["INFO", "nosuchsection"]), Val::bulk(""));
    // RESP3: verbatim text.
    assert!(matches!(c.cmd(&["HELLO", "3"]), Val::Map(_)));
    assert!(matches!(c.cmd(&["INFO", "cpu"]), Val::Verbatim(f, _) if f == "txt"));
}

#[test]
fn info_unknown_section_matches_redis() {
    assert_same_as_valkey(&["INFO foo", "INFO foo bar"]);
}

#[test]
fn time_has_redis_shape() {
    let ours = start(&[]);
    let theirs = start_valkey(&[]);
    for port in [ours.port, theirs.port] {
        let mut c = Client::connect(port);
        let t = c.cmd(&["TIME"]).as_array();
        assert_eq!(t.len(), 2);
        let secs: u64 = t[0].as_str().parse().unwrap();
        let micros: u64 = t[1].as_str().parse().unwrap();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
        assert!(secs.abs_diff(now.as_secs()) <= 2);
        assert!(micros < 1_000_000);
    }
    assert_same_as_valkey(&["TIME x", "LASTSAVE x"]);
}

#[test]
fn lastsave_is_the_start_time() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let t = c.cmd(&["LASTSAVE"]).as_int();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    assert!((t as u64).abs_diff(now.as_secs()) < 60);
}

#[test]
fn slowlog_records_with_zero_threshold() {
    let s = start(&["--slowlog-log-slower-than", "0"]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["CLIENT", "SETNAME", "logger"]), Val::ok());
    assert_eq!(c.cmd(&["SLOWLOG", "RESET"]), Val::ok());
    assert_eq!(c.cmd(&["SET", "key", "value"]), Val::ok());
    assert_eq!(c.cmd(&["ECHO", "hi"]), Val::bulk("hi"));
    // The RESET itself, SET and ECHO.
    assert_eq!(c.cmd(&["SLOWLOG", "LEN"]).as_int(), 3);
    let entries = c.cmd(&["SLOWLOG", "GET"]).as_array();
    assert_eq!(entries.len(), 4, "SLOWLOG LEN is logged too");
    let newest = entries[1].as_array();
    assert_eq!(newest.len(), 6);
    let older = entries[2].as_array();
    assert!(newest[0].as_int() > older[0].as_int(), "ids grow, newest first");
    assert!(newest[1].as_int() > 0 && newest[2].as_int() >= 0);
    assert_eq!(newest[3], Val::Array(vec![Val::bulk("ECHO"), Val::bulk("hi")]));
    assert!(newest[4].as_str().starts_with("127.0.0.1:"));
    assert_eq!(newest[5], Val::bulk("logger"));
    assert_eq!(c.cmd(&["SLOWLOG", "GET", "1"]).as_array().len(), 1);
    assert_eq!(c.cmd(&["SLOWLOG", "GET", "0"]).as_array().len(), 0);
    assert!(c.cmd(&["SLOWLOG", "GET", "-1"]).as_array().len() >= 6);
    assert_eq!(c.cmd(&["SLOWLOG", "RESET"]), Val::ok());
    assert_eq!(c.cmd(&["SLOWLOG", "LEN"]).as_int(), 1);
}

#[test]
fn slowlog_matches_redis() {
    assert_same_as_valkey(&[
        "SLOWLOG LEN",
        "SLOWLOG RESET",
        "SLOWLOG GET",
        "SLOWLOG GET x",
        "SLOWLOG GET -2",
        "SLOWLOG GET 0",
        "SLOWLOG GET 1 2",
        "SLOWLOG LEN x",
        "SLOWLOG RESET x",
        "SLOWLOG HELP x",
        "SLOWLOG FOO",
        "SLOWLOG",
    ]);
}

#[test]
fn slowlog_max_len_trims() {
    let s = start(&["--slowlog-log-slower-than", "0", "--slowlog-max-len", "2"]);
    let mut c = Client::connect(s.port);
    for _ in 0..5 {
        assert_eq!(c.cmd(&["PING"]), Val::Simple("PONG".into()));
    }
    assert_eq!(c.cmd(&["SLOWLOG", "LEN"]).as_int(), 2);
}

#[test]
fn debug_is_refused_by_default() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["DEBUG", "SLEEP", "0"]), err(DEBUG_REFUSED));
    assert_eq!(c.cmd(&["DEBUG", "HELP"]), err(DEBUG_REFUSED));
    assert_same_as_valkey(&["DEBUG", "DEBUG SLEEP 0", "DEBUG foo", "DEBUG HELP"]);
}

#[test]
fn debug_local_allows_loopback() {
    let s = start(&["--enable-debug-command", "local"]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["DEBUG", "SLEEP", "0"]), Val::ok());
}

#[test]
fn debug_errors_match_redis() {
    same_as_valkey_with(
        2,
        &["--enable-debug-command", "yes"],
        &[
            "DEBUG foo",
            "DEBUG SLEEP",
            "DEBUG SLEEP 0 extra",
            "DEBUG SLEEP x",
            "DEBUG SLEEP 0",
            "DEBUG SLEEP -1",
            "DEBUG SET-ACTIVE-EXPIRE",
            "DEBUG SET-ACTIVE-EXPIRE 0",
            "DEBUG SET-ACTIVE-EXPIRE 1",
            "DEBUG OBJECT",
            "DEBUG OBJECT nokey",
            "DEBUG OBJECT a b",
            "DEBUG",
            "DEBUG LEAK",
            "DEBUG LEAK a b",
            "DEBUG LEAK abc",
            "DEBUG LOADAOF x",
            // Valkey's own STRINGMATCH-TEST run takes from seconds to a minute on a busy
            // machine: its reply is checked on ferrokey alone, below.
            "DEBUG STRINGMATCH-TEST x",
            "DEBUG REPLICATE",
            "DEBUG REPLICATE PING",
            "DEBUG PAUSE-CRON",
            "DEBUG PAUSE-CRON 1",
            "DEBUG PAUSE-CRON 0",
            "DEBUG SET-SKIP-CHECKSUM-VALIDATION",
            "DEBUG SET-SKIP-CHECKSUM-VALIDATION 1",
            "DEBUG SET-SKIP-CHECKSUM-VALIDATION 0",
            // Without an AOF there is nothing to load: the dataset is emptied and the
            // error says so.
            "SET k v",
            "DEBUG LOADAOF",
            "DBSIZE",
        ],
    );
}

#[test]
fn debug_object_sleep_and_active_expire() {
    let s = start(&["--enable-debug-command", "yes"]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["SET", "k", "v"]), Val::ok());
    assert_eq!(c.cmd(&["SET", "n", "123"]), Val::ok());
    let Val::Simple(line) = c.cmd(&["DEBUG", "OBJECT", "k"]) else { panic!("status reply") };
    let parts: Vec<&str> = line.split(' ').collect();
    assert_eq!(parts[0], "Value");
    assert!(parts[1].starts_with("at:0x"));
    assert_eq!(&parts[2..5], ["refcount:1", "encoding:embstr", "serializedlength:2"]);
    assert!(parts[5].starts_with("lru:"));
    assert_eq!(parts[6], "lru_seconds_idle:0");
    let Val::Simple(line) = c.cmd(&["DEBUG", "OBJECT", "n"]) else { panic!("status reply") };
    assert!(line.contains(" refcount:1 encoding:int serializedlength:2 "), "{line}");

    let started = Instant::now();
    assert_eq!(c.cmd(&["DEBUG", "SLEEP", "0.2"]), Val::ok());
    assert!(started.elapsed() >= Duration::from_millis(190));

    // With active expiry off, an expired key stays counted until it is touched.
    assert_eq!(c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), Val::ok());
    assert_eq!(c.cmd(&["SET", "gone", "x", "PX", "1"]), Val::ok());
    std::thread::sleep(Duration::from_millis(300));
    let ks = c.cmd(&["INFO", "keyspace"]).as_str();
    assert!(ks.contains("db0:keys=3,expires=1,"), "{ks}");
    assert_eq!(c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]), Val::ok());

    let help = c.cmd(&["DEBUG", "HELP"]).as_array();
    assert!(help[0].as_str().starts_with("DEBUG <subcommand>"));
    assert!(help.iter().any(|l| l.as_str() == "OBJECT <key> [fast]"), "{help:?}");
}

/// DEBUG OBJECT's `fast` leaves `serializedlength` out, as in Valkey 9.1; the same fields
/// otherwise (the address differs), and the same error for more arguments.
#[test]
fn debug_object_fast_matches_valkey() {
    let args = ["--enable-debug-command", "yes"];
    let mut p = common::diff::Pair::start(2, &args);
    let fields = |v: Val| -> Vec<String> {
        v.as_str()
            .split(' ')
            .filter_map(|f| f.split_once(':'))
            .map(|(k, _)| k.to_string())
            .collect()
    };
    p.same(&["SET", "k", "hello"]);
    p.same(&["RPUSH", "l", "a", "b"]);
    for args in [&["k"][..], &["k", "fast"], &["l", "fast"], &["l"], &["k", "slow"]] {
        let mut argv = vec!["DEBUG", "OBJECT"];
        argv.extend_from_slice(args);
        let ours = fields(p.a.cmd(&argv));
        let theirs = fields(p.b.cmd(&argv));
        assert_eq!(ours, theirs, "{argv:?}");
    }
    p.same(&["DEBUG", "OBJECT", "k", "fast", "x"]);
    p.same(&["DEBUG", "OBJECT", "nosuchkey", "fast"]);
}

#[test]
fn debug_digest_matches_valkey() {
    let args = ["--enable-debug-command", "yes"];
    let mut p = common::diff::Pair::start(2, &args);
    p.same(&["DEBUG", "DIGEST"]);
    // Every type in its small and its big encoding, integers, binary bytes, odd scores.
    p.same(&["SET", "s", "hello"]);
    p.same(&["SET", "i", "12345"]);
    p.same(&["SET", "bin", "a\0b\r\n"]);
    p.same(&["SET", "long", &"x".repeat(300)]);
    p.same(&["RPUSH", "l", "a", "b", "3", "-7"]);
    p.same(&["SADD", "st", "x", "y", "5"]);
    p.same(&["SADD", "si", "1", "2", "3"]);
    p.same(&["ZADD", "z", "1.5", "a", "2", "b", "-0", "c", "1e20", "d", "0.1", "e"]);
    p.same(&["ZADD", "z", "inf", "f", "-inf", "g", "123456789012345678", "h", "5e-324", "i"]);
    p.same(&["HSET", "h", "f", "v", "n", "7"]);
    let mut big_list = vec!["RPUSH".to_string(), "bl".into()];
    let mut big_set = vec!["SADD".to_string(), "bs".into()];
    let mut big_zset = vec!["ZADD".to_string(), "bz".into()];
    let mut big_hash = vec!["HSET".to_string(), "bh".into()];
    for n in 0..700 {
        big_list.push(format!("element-{n}"));
        big_set.push(format!("m{n}"));
        big_zset.extend([format!("{}", n as f64 / 3.0), format!("m{n}")]);
        big_hash.extend([format!("f{n}"), n.to_string()]);
    }
    for cmd in [&big_list, &big_set, &big_zset, &big_hash] {
        p.same(cmd);
    }
    p.same(&["SET", "ttl", "v", "EX", "100"]);
    p.same(&["SELECT", "3"]);
    p.same(&["SET", "s", "hello"]);
    p.same(&["DEBUG", "DIGEST"]);
    p.same(&["SELECT", "0"]);
    p.same(&["DEBUG", "DIGEST"]);
    p.same(&["DEBUG", "DIGEST-VALUE"]);
    let keys = ["s", "i", "bin", "long", "l", "st", "si", "z", "h", "bl", "bs", "bz", "bh", "ttl"];
    let mut argv = vec!["DEBUG", "DIGEST-VALUE"];
    argv.extend(keys);
    argv.push("missing");
    p.same(&argv);
    // Order counts in a list, not in a set.
    p.same(&["RPUSH", "l2", "b", "a", "3", "-7"]);
    p.same(&["SADD", "st2", "5", "y", "x"]);
    p.same(&["DEBUG", "DIGEST-VALUE", "l2", "st2"]);
    p.same(&["DEBUG", "CHANGE-REPL-ID"]);
    p.same(&["DEBUG", "LOG", "a message"]);
    p.same(&["DEBUG", "LOG"]);
    p.same(&["DEBUG", "DIGEST", "extra"]);
}

#[test]
fn monitor_receives_other_clients_commands() {
    let s = start(&[]);
    let (mut m, mut c) = monitor_and_client(s.port);
    assert_eq!(c.cmd(&["SET", "mkey", "a b\"c"]), Val::ok());
    assert_eq!(c.cmd(&["GET", "mkey"]), Val::bulk("a b\"c"));
    let Val::Simple(first) = m.read() else { panic!("monitor lines are status replies") };
    let (ts, rest) = first.split_once(' ').unwrap();
    let (secs, micros) = ts.split_once('.').unwrap();
    assert!(secs.parse::<u64>().is_ok() && micros.len() == 6);
    assert!(rest.starts_with("[0 127.0.0.1:"), "{rest}");
    assert!(rest.ends_with("] \"SET\" \"mkey\" \"a b\\\"c\""), "{rest}");
    let Val::Simple(second) = m.read() else { panic!("status") };
    assert!(second.ends_with("\"GET\" \"mkey\""), "{second}");
    // The monitor's own MONITOR again is ignored silently; CLIENT LIST shows flag O.
    let list = c.cmd(&["CLIENT", "LIST"]).as_str();
    assert!(list.lines().any(|l| l.contains(" flags=O ")), "{list}");
}

#[test]
fn wait_answers_zero_without_replicas() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["WAIT", "0", "0"]), Val::Int(0));
    assert_same_as_valkey(&["WAIT 0 0", "WAIT", "WAIT 0", "WAIT x 0", "WAIT 0 x", "WAIT 0 -1"]);
}

/// ROLE of a primary without replicas, in both protocols, and its errors, as Valkey 9.1.
#[test]
fn role_of_a_primary_without_replicas() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(
        c.cmd(&["ROLE"]),
        Val::Array(vec![common::bulk("master"), Val::Int(0), Val::Array(vec![])])
    );
    assert_same_as_valkey(&["ROLE", "ROLE x", "COMMAND INFO role", "COMMAND DOCS role"]);
    same_as_valkey_with(3, &[], &["ROLE"]);
}

/// INFO replication of a primary without replicas: Valkey 9.1's fields, in its order, with
/// its values (the replication id aside), `repl-backlog-size` included.
#[test]
fn info_replication_of_a_primary_matches_valkey() {
    let fields = |c: &mut Client| -> Vec<String> {
        c.cmd(&["INFO", "replication"])
            .as_str()
            .lines()
            .filter(|l| !l.starts_with("master_replid:"))
            .map(str::to_string)
            .collect()
    };
    let (ours, theirs) = (start(&[]), start_valkey(&[]));
    let (mut a, mut b) = (Client::connect(ours.port), Client::connect(theirs.port));
    assert_eq!(fields(&mut a), fields(&mut b));
    for c in [&mut a, &mut b] {
        assert_eq!(c.cmd(&["CONFIG", "SET", "repl-backlog-size", "2mb"]), Val::ok());
    }
    let ours = fields(&mut a);
    assert!(ours.contains(&"repl_backlog_size:2097152".to_string()), "{ours:?}");
    assert_eq!(ours, fields(&mut b));
}

#[test]
fn memory_usage_and_errors() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["SET", "k", "v"]), Val::ok());
    assert_eq!(c.cmd(&["SET", "big", &"x".repeat(1000)]), Val::ok());
    let small = c.cmd(&["MEMORY", "USAGE", "k"]).as_int();
    let big = c.cmd(&["MEMORY", "USAGE", "big", "SAMPLES", "0"]).as_int();
    assert!((3..128).contains(&small), "{small}");
    assert!((1000..1200).contains(&big), "{big}");
    assert_eq!(c.cmd(&["MEMORY", "USAGE", "nokey"]), Val::Nil);
    let help = c.cmd(&["MEMORY", "HELP"]).as_array();
    assert!(help[0].as_str().starts_with("MEMORY <subcommand>"));
    assert_same_as_valkey(&[
        "MEMORY USAGE",
        "MEMORY USAGE nokey",
        "MEMORY USAGE nokey SAMPLES",
        "MEMORY USAGE nokey SAMPLES x",
        "MEMORY USAGE nokey SAMPLES -1",
        "MEMORY USAGE nokey foo 1",
        "MEMORY FOO",
        "MEMORY",
    ]);
}

#[test]
fn shutdown_errors_match_redis() {
    assert_same_as_valkey(&[
        "SHUTDOWN foo",
        "SHUTDOWN NOSAVE SAVE",
        "SHUTDOWN ABORT",
        "SHUTDOWN ABORT NOW",
        "SHUTDOWN NOSAVE ABORT",
    ]);
}

#[test]
fn shutdown_stops_the_server() {
    let mut s = start(&[]);
    let mut c = Client::connect(s.port);
    c.send(&[b"SHUTDOWN", b"NOSAVE", b"NOW"]);
    assert!(c.is_closed());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(Instant::now() < deadline, "server still running after SHUTDOWN");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// DEBUG POPULATE refuses what could only end with the process out of memory (a count no
/// memory could hold, a value larger than proto-max-bulk-len) and keeps serving; a sane
/// count still works.
#[test]
fn debug_populate_refuses_absurd_sizes() {
    let s = start(&["--enable-debug-command", "yes", "--maxmemory", "100mb"]);
    let mut c = Client::connect(s.port);
    let refused = c.cmd(&["DEBUG", "POPULATE", "9223372036854775807"]);
    assert!(refused.as_str().starts_with("ERR DEBUG POPULATE of"), "{refused:?}");
    let too_long = c.cmd(&["DEBUG", "POPULATE", "1", "key", "99999999999999"]);
    assert_eq!(too_long, err("ERR string exceeds maximum allowed size (proto-max-bulk-len)"));
    assert_eq!(c.cmd(&["DBSIZE"]), Val::Int(0));
    assert_eq!(c.cmd(&["DEBUG", "POPULATE", "1000"]), Val::ok());
    assert_eq!(c.cmd(&["DBSIZE"]), Val::Int(1000));
}

/// LOLWUT: Valkey's reply for versions without a picture and its errors, in both
/// protocols; ferrokey's own picture has the asked size and ends with the version.
#[test]
fn lolwut_answers_as_valkey() {
    for proto in [2, 3] {
        same_as_valkey_with(
            proto,
            &[],
            &[
                "LOLWUT VERSION 1",
                "LOLWUT VERSION 4",
                "LOLWUT VERSION x",
                "LOLWUT foo",
                "LOLWUT 10",
                "LOLWUT 10 5 x 0",
                "LOLWUT 10 5 1 2 3",
                "COMMAND INFO lolwut",
            ],
        );
    }
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let art = c.cmd(&["LOLWUT", "30", "12"]).as_str();
    let lines: Vec<&str> = art.lines().collect();
    assert_eq!(lines.len(), 14, "{art}");
    assert!(lines[..12].iter().all(|l| l.len() == 30), "{art}");
    assert!(lines[13].ends_with(" Valkey ver. 9.1.2"), "{art}");
}

/// DEBUG PROTOCOL's test values of every reply type and DEBUG ERROR's error replies, in
/// both protocols, as Valkey 9.1 sends them (client libraries test their parsers with them).
#[test]
fn debug_protocol_and_error_reply_as_valkey() {
    for proto in [2, 3] {
        let types =
            "string integer double bignum null array set map attrib push verbatim true false nope";
        let mut lines: Vec<String> =
            types.split(' ').map(|t| format!("DEBUG PROTOCOL {t}")).collect();
        lines.extend(
            ["DEBUG ERROR LOADING", "DEBUG ERROR NOAUTH", "DEBUG ERROR", "DEBUG ERROR a b"]
                .map(String::from),
        );
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        same_as_valkey_with(proto, &["--enable-debug-command", "yes"], &lines);
    }
}

#[test]
fn debug_loadaof_replays_the_aof_from_disk() {
    let s = start(&["--enable-debug-command", "yes", "--appendonly", "yes"]);
    let mut c = Client::connect(s.port);
    for i in 0..50 {
        c.cmd(&["RPUSH", "list", &i.to_string()]);
        c.cmd(&["SET", &format!("k{i}"), "v", "EX", "1000"]);
    }
    c.cmd(&["SELECT", "3"]);
    c.cmd(&["HSET", "h", "f", "v"]);
    let digest = c.cmd(&["DEBUG", "DIGEST"]);
    assert_eq!(c.cmd(&["DEBUG", "LOADAOF"]), Val::ok());
    assert_eq!(c.cmd(&["DEBUG", "DIGEST"]), digest);
    assert_eq!(c.cmd(&["HGET", "h", "f"]), Val::bulk("v"));
    c.cmd(&["SELECT", "0"]);
    assert_eq!(c.cmd(&["LLEN", "list"]), Val::Int(50));
    // Writes after the reload are logged once: a second reload gives the same data.
    c.cmd(&["SET", "after", "1"]);
    let digest = c.cmd(&["DEBUG", "DIGEST"]);
    assert_eq!(c.cmd(&["DEBUG", "LOADAOF"]), Val::ok());
    assert_eq!(c.cmd(&["DEBUG", "DIGEST"]), digest);
    assert_eq!(c.cmd(&["DBSIZE"]), Val::Int(52));
}

#[test]
fn debug_skip_checksum_validation_lets_a_damaged_payload_restore() {
    let s = start(&["--enable-debug-command", "yes"]);
    let mut c = Client::connect(s.port);
    c.cmd(&["SET", "k", "value"]);
    let Val::Bulk(mut payload) = c.cmd(&["DUMP", "k"]) else { panic!("DUMP") };
    let last = payload.len() - 1;
    payload[last] ^= 0xff;
    let restore = |c: &mut Client, p: &[u8]| c.cmd_b(&[b"RESTORE".as_slice(), b"k2", b"0", p]);
    assert_eq!(restore(&mut c, &payload), err("ERR DUMP payload version or checksum are wrong"));
    assert_eq!(c.cmd(&["DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1"]), Val::ok());
    assert_eq!(restore(&mut c, &payload), Val::ok());
    assert_eq!(c.cmd(&["GET", "k2"]), Val::bulk("value"));
    assert_eq!(c.cmd(&["DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "0"]), Val::ok());
    c.cmd(&["DEL", "k2"]);
    assert_eq!(restore(&mut c, &payload), err("ERR DUMP payload version or checksum are wrong"));
}

#[test]
fn debug_pause_cron_stops_active_expiry_and_crashes_end_the_process() {
    let s = start(&["--enable-debug-command", "yes"]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["DEBUG", "PAUSE-CRON", "1"]), Val::ok());
    c.cmd(&["SET", "gone", "x", "PX", "1"]);
    std::thread::sleep(Duration::from_millis(300));
    // Nothing expired it in the background: it is still counted.
    assert!(c.cmd(&["INFO", "keyspace"]).as_str().contains("db0:keys=1,"));
    assert_eq!(c.cmd(&["DEBUG", "PAUSE-CRON", "0"]), Val::ok());
    let deadline = Instant::now() + Duration::from_secs(5);
    while c.cmd(&["DBSIZE"]) != Val::Int(0) {
        assert!(Instant::now() < deadline, "active expiry did not resume");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        c.cmd(&["DEBUG", "STRINGMATCH-TEST"]),
        Val::Simple("Apparently the server did not crash: test passed".into())
    );
    assert_eq!(c.cmd(&["DEBUG", "LEAK", "some bytes"]), Val::ok());
    for what in ["ASSERT", "PANIC", "SEGFAULT", "OOM"] {
        let mut s = start(&["--enable-debug-command", "yes"]);
        let mut c = Client::connect(s.port);
        c.send(&[b"DEBUG".as_slice(), what.as_bytes()]);
        let status = s.child.wait().expect("the server exits");
        assert!(!status.success(), "DEBUG {what}: {status:?}");
    }
}

#[test]
fn debug_help_is_valkeys_for_the_subcommands_ferrokey_has() {
    let args = ["--enable-debug-command", "yes"];
    let (ours, theirs) = (start(&args), start_valkey(&args));
    let help = |port| -> Vec<String> {
        Client::connect(port).cmd(&["DEBUG", "HELP"]).as_array().iter().map(Val::as_str).collect()
    };
    let (ours, theirs) = (help(ours.port), help(theirs.port));
    // Every line of ours is Valkey's, in Valkey's order (ours lacks some subcommands).
    let mut at = 0;
    for line in &ours {
        let found = theirs[at..].iter().position(|t| t == line);
        at += found.unwrap_or_else(|| panic!("{line:?} is not in Valkey's DEBUG HELP, in order"));
        at += 1;
    }
    assert!(ours.len() > 60, "{ours:?}");
}

/// `log-format` and `log-timestamp-format` take effect at once, with Valkey 9.1's line
/// shapes (digits aside: times and pids differ).
#[test]
fn log_formats_change_at_once_as_valkey() {
    let lines = |valkey: bool| -> Vec<String> {
        let dir = common::unique_dir("logfmt");
        let log = dir.join("server.log");
        let log_arg = log.to_str().unwrap().to_string();
        let args = ["--enable-debug-command", "yes", "--logfile", &log_arg];
        let s = if valkey { start_valkey(&args) } else { start(&args) };
        let mut c = Client::connect(s.port);
        let steps: &[&[&str]] = &[
            &["DEBUG", "LOG", "one"],
            &["CONFIG", "SET", "log-format", "logfmt"],
            &["DEBUG", "LOG", "x \"y\" z"],
            &["CONFIG", "SET", "log-timestamp-format", "iso8601"],
            &["CONFIG", "SET", "log-format", "json"],
            &["DEBUG", "LOG", "a \"q\" \\ b"],
            &["CONFIG", "SET", "log-timestamp-format", "milliseconds"],
            &["CONFIG", "SET", "log-format", "legacy"],
            &["DEBUG", "LOG", "four"],
            &["CONFIG", "SET", "log-format", "x"],
        ];
        let mut out: Vec<String> = steps.iter().map(|s| format!("{:?}", c.cmd(s))).collect();
        drop(c);
        drop(s);
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let zeroed =
            |l: &str| l.chars().map(|c| if c.is_ascii_digit() { '0' } else { c }).collect();
        out.extend(text.lines().filter(|l| l.contains("DEBUG LOG")).map(zeroed));
        out
    };
    let ours = lines(false);
    assert_eq!(ours.iter().filter(|l| l.contains("DEBUG LOG")).count(), 4, "{ours:#?}");
    assert_eq!(ours, lines(true));
}
