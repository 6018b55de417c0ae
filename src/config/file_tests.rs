//! Tests of file parsing, `include` and the command line.

use super::super::values::{Appendfsync, EnableDebugCommand, LogLevel, MaxmemoryPolicy};
use super::*;
use crate::util::quote::repr;

/// A fresh directory under the system temp dir, removed when dropped.
pub(crate) struct TempDir(pub PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("ferrokey-config-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub(crate) fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn err(text: &str) -> ConfigError {
    Config::load_str(text).unwrap_err()
}

fn reason(text: &str) -> String {
    match err(text) {
        ConfigError::Line { reason, .. } => reason,
        other => panic!("not a line error: {other:?}"),
    }
}

#[test]
fn error_is_formatted_like_valkey() {
    let e = err("# comment\n\nport 99999\n");
    let expected = format!(
        "\n*** FATAL CONFIG FILE ERROR (ferrokey {}) ***\n\
         Reading the configuration file, at line 3\n\
         >>> 'port 99999'\n\
         argument must be between 0 and 65535 inclusive\n\
         (from a configuration string)",
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(e.to_string(), expected);
    assert_eq!(
        e,
        ConfigError::Line {
            origin: Origin::Text,
            line_no: 3,
            line: "port 99999".to_string(),
            reason: "argument must be between 0 and 65535 inclusive".to_string(),
        }
    );
}

#[test]
fn every_kind_parses() {
    let text = "
        # comments and blank lines are skipped
        PORT 7000
        protected-mode NO
        maxmemory 2gb
        maxmemory-policy allkeys-LFU
        appendfsync always
        loglevel warning
        enable-debug-command local
        requirepass \"se cret\"
        dbfilename 'my.rdb'
        unixsocketperm 700
        list-max-ziplist-size -1
        hz 1000
        client-output-buffer-limit normal 1mb 1kb 5
        client-output-buffer-limit \"pubsub 1 2 3\"
        notify-keyspace-events Ex
        maxmemory-clients 5%
        bind 127.0.0.1 ::1
    ";
    let c = Config::load_str(text).unwrap();
    assert_eq!(c.port, 7000);
    // Deprecated directives are accepted and ignored.
    let old =
        "list-max-ziplist-entries 512\nlist-max-ziplist-value 64\nlua-replicate-commands yes\n";
    assert_eq!(Config::load_str(old).unwrap(), Config::default());
    assert_eq!(
        Config::load_str("zset-max-ziplist-value 1kb").unwrap().zset_max_listpack_value_bytes,
        1024
    );
    assert!(!c.protected_mode);
    assert_eq!(c.maxmemory_bytes, 2 << 30);
    assert_eq!(c.maxmemory_policy, MaxmemoryPolicy::AllkeysLfu);
    assert_eq!(c.appendfsync, Appendfsync::Always);
    assert_eq!(c.loglevel, LogLevel::Warning);
    assert_eq!(c.enable_debug_command, EnableDebugCommand::Local);
    assert_eq!(c.requirepass, "se cret");
    assert_eq!(c.dbfilename, "my.rdb");
    assert_eq!(c.unixsocketperm, 0o700);
    assert_eq!(c.get_value("unixsocketperm").unwrap(), "700");
    assert_eq!(c.list_max_listpack_size, -1);
    assert_eq!(c.hz, 500);
    assert_eq!(c.client_output_buffer_limit[0].hard_bytes, 1 << 20);
    assert_eq!(c.client_output_buffer_limit[0].soft_bytes, 1 << 10);
    assert_eq!(c.client_output_buffer_limit[2].soft_secs, 3);
    assert_eq!(c.client_output_buffer_limit[1].soft_secs, 60);
    assert_eq!(c.get_value("notify-keyspace-events").unwrap(), "xE");
    assert_eq!(c.get_value("maxmemory-clients").unwrap(), "5%");
    assert_eq!(c.bind, vec!["127.0.0.1", "::1"]);
}

#[test]
fn every_kind_rejects_bad_values() {
    let cases = [
        ("daemonize maybe", "argument must be 'yes' or 'no'"),
        ("timeout -1", "argument must be between 0 and 2147483647 inclusive"),
        ("timeout 1.5", "argument couldn't be parsed into an integer"),
        ("databases 0", "argument must be between 1 and 2147483647 inclusive"),
        ("io-threads 129", "argument must be between 1 and 128 inclusive"),
        ("active-expire-effort 11", "argument must be between 1 and 10 inclusive"),
        ("unixsocketperm 1000", "argument must be between 0 and 777 inclusive"),
        ("unixsocketperm 9", "argument couldn't be parsed as an octal number"),
        ("maxmemory 1tb", "argument must be a memory value"),
        ("maxmemory -1", "argument must be a memory value"),
        (
            "client-query-buffer-limit 1kb",
            "argument must be between 1048576 and 9223372036854775807 inclusive",
        ),
        (
            "loglevel loud",
            "argument(s) must be one of the following: debug, verbose, notice, warning, nothing",
        ),
        (
            "enable-debug-command sometimes",
            "argument(s) must be one of the following: no, yes, local",
        ),
        (
            "supervised maybe",
            "argument(s) must be one of the following: upstart, systemd, auto, no",
        ),
        ("appendfilename dir/x.aof", "appendfilename can't be a path, just a filename"),
        ("appenddirname \"\"", "appenddirname can't be empty"),
        ("dbfilename \"\"", "dbfilename can't be empty"),
        ("save 900", "Invalid save parameters"),
        ("save 900 x", "Invalid save parameters"),
        ("save 900 -1", "Invalid save parameters"),
        (
            "client-output-buffer-limit normal 0 0",
            "Wrong number of arguments in buffer limit configuration.",
        ),
        ("notify-keyspace-events KEZ", "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."),
        ("dir /nonexistent/ferrokey/dir", "No such file or directory"),
        ("dir \"\"", "dir can't be empty"),
        ("hash-max-listpack-value 1x", "argument must be a memory value"),
        ("list-max-ziplist-entries 1 2", "Bad directive or wrong number of arguments"),
        ("port", "wrong number of arguments"),
        ("port 1 2", "wrong number of arguments"),
        ("no-such-directive yes", "Bad directive or wrong number of arguments"),
        ("include", "Bad directive or wrong number of arguments"),
        ("rename-command FLUSHALL", "Bad directive or wrong number of arguments"),
        ("rename-command get a b", "Bad directive or wrong number of arguments"),
        ("port \"6379", "Unbalanced quotes in configuration line"),
        ("bind \"a b", "Unbalanced quotes in configuration line"),
    ];
    for (line, expected) in cases {
        assert_eq!(reason(line), expected, "{line}");
    }
    let too_many = format!("bind {}", vec!["127.0.0.1"; 17].join(" "));
    assert_eq!(reason(&too_many), "Too many bind addresses specified.");
}

#[test]
fn user_lines_are_kept_in_order_for_the_acl() {
    let c =
        Config::load_str("user alice on >p ~* +@all\nuser bob off \"(+get ~k*)\"\naclfile \"\"")
            .unwrap();
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        c.general.users,
        vec![words(&["alice", "on", ">p", "~*", "+@all"]), words(&["bob", "off", "(+get ~k*)"])]
    );
    assert_eq!(reason("user"), "Bad directive or wrong number of arguments");
}

#[test]
fn repeated_directives_last_wins_but_save_accumulates() {
    let c = Config::load_str("port 1\nport 2\nbind 1.1.1.1\nbind 2.2.2.2\n").unwrap();
    assert_eq!(c.port, 2);
    assert_eq!(c.bind, vec!["2.2.2.2"]);

    let c = Config::load_str("save 900 1\nsave 300 10\n").unwrap();
    assert_eq!(c.save, vec![(900, 1), (300, 10)]);
    assert_eq!(c.get_value("save").unwrap(), "900 1 300 10");

    let c = Config::load_str("save 900 1\nsave \"\"\n").unwrap();
    assert!(c.save.is_empty());
    let c = Config::load_str("save \"\"\nsave 60 5\n").unwrap();
    assert_eq!(c.save, vec![(60, 5)]);
    let c = Config::load_str("save \"100 2 200 3\"\n").unwrap();
    assert_eq!(c.save, vec![(100, 2), (200, 3)]);
    let c = Config::load_str("port 1\n").unwrap();
    assert_eq!(c.save, Config::default().save);
}

#[test]
fn include_files() {
    let dir = TempDir::new("include");
    dir.write("inner.conf", "maxmemory 1mb\nsave 10 1\n");
    let inner = dir.0.join("inner.conf");
    dir.write(
        "middle.conf",
        &format!("port 7001\ninclude {}\n", repr(inner.to_str().unwrap().as_bytes())),
    );
    let middle = dir.0.join("middle.conf");
    let main = dir.write("main.conf", &format!("save 20 2\ninclude {}\nhz 20\n", middle.display()));
    let c = Config::load_file(&main).unwrap();
    assert_eq!((c.port, c.maxmemory_bytes, c.hz), (7001, 1 << 20, 20));
    // save lines accumulate across includes.
    assert_eq!(c.save, vec![(20, 2), (10, 1)]);
}

#[test]
fn include_errors_name_the_included_file() {
    let dir = TempDir::new("include-err");
    let bad = dir.write("bad.conf", "# one\nport nope\n");
    let main = dir.write("main.conf", &format!("include {}\n", bad.display()));
    let e = Config::load_file(&main).unwrap_err();
    assert_eq!(
        e,
        ConfigError::Line {
            origin: Origin::File(bad.clone()),
            line_no: 2,
            line: "port nope".to_string(),
            reason: "argument couldn't be parsed into an integer".to_string(),
        }
    );
    assert!(e.to_string().ends_with(&format!("(from config file '{}')", bad.display())));

    let missing = dir.0.join("missing.conf");
    let main = dir.write("main2.conf", &format!("include {}\n", missing.display()));
    assert_eq!(
        Config::load_file(&main).unwrap_err().to_string(),
        format!(
            "Fatal error, can't open config file '{}': No such file or directory",
            missing.display()
        )
    );

    let looping = dir.0.join("loop.conf");
    dir.write("loop.conf", &format!("include {}\n", looping.display()));
    match Config::load_file(&looping).unwrap_err() {
        ConfigError::Line { reason, .. } => {
            assert_eq!(reason, "include nesting deeper than 16 levels")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn include_wildcards() {
    let dir = TempDir::new("include-glob");
    std::fs::create_dir(dir.0.join("conf.d")).unwrap();
    dir.write("conf.d/a.conf", "port 1\n");
    dir.write("conf.d/b.conf", "port 2\n");
    dir.write("conf.d/c.txt", "port 3\n");
    let main = dir.write("main.conf", &format!("include {}/conf.d/*.conf\n", dir.0.display()));
    assert_eq!(Config::load_file(&main).unwrap().port, 2);
    let none =
        dir.write("none.conf", &format!("include {}/conf.d/*.none\nport 9\n", dir.0.display()));
    assert_eq!(Config::load_file(&none).unwrap().port, 9);
}

fn args(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn command_line_options_render_like_valkey() {
    let (text, stdin) = options_text(&args(&["--port", "7000", "--save", "900", "1"]), true);
    assert_eq!(text, "port \"7000\" \nsave \"900\" \"1\" ");
    assert!(!stdin);
    let (text, _) = options_text(&args(&["--save", "--port", "1"]), true);
    assert_eq!(text, "save \"\"\nport \"1\" ");
    let (text, _) = options_text(&args(&["--port", "1", "--save"]), true);
    assert_eq!(text, "port \"1\" \nsave \"\"");
    let (text, _) = options_text(&args(&["--port 6380", "--requirepass", "--x"]), true);
    assert_eq!(text, "port 6380 \nrequirepass \"--x\" ");
    let (_, stdin) = options_text(&args(&["-"]), true);
    assert!(stdin);
    let (_, stdin) = options_text(&args(&["--port", "1", "-"]), true);
    assert!(stdin);
}

#[test]
fn command_line_only() {
    let (c, file) =
        from_args(&args(&["--port", "7002", "--requirepass", "a b", "--save", ""])).unwrap();
    assert_eq!(file, None);
    assert_eq!(c.port, 7002);
    assert_eq!(c.requirepass, "a b");
    assert!(c.save.is_empty());
    let (c, _) = from_args(&[]).unwrap();
    assert_eq!(c, Config::default());
}

#[test]
fn file_and_command_line_merge() {
    let dir = TempDir::new("cli");
    let path = dir.write("valkey.conf", "port 7000\nsave 900 1\nmaxmemory 1mb\n");
    let cli = args(&[path.to_str().unwrap(), "--port", "7003", "--save", "300", "10"]);
    let (c, file) = from_args(&cli).unwrap();
    assert_eq!(file.as_deref(), Some(path.as_path()));
    assert_eq!(c.port, 7003);
    assert_eq!(c.maxmemory_bytes, 1 << 20);
    assert_eq!(c.save, vec![(900, 1), (300, 10)]);

    let cli = args(&[path.to_str().unwrap(), "--maxmemory", "lots"]);
    let e = from_args(&cli).unwrap_err();
    assert_eq!(
        e,
        ConfigError::Line {
            origin: Origin::CommandLine,
            line_no: 5,
            line: "maxmemory \"lots\"".to_string(),
            reason: "argument must be a memory value".to_string(),
        }
    );
    assert!(e
        .to_string()
        .contains("Reading the configuration file, at line 5\n>>> 'maxmemory \"lots\"'"));

    let bad = dir.write("bad.conf", "port 1\nhz x\n");
    let e = from_args(&args(&[bad.to_str().unwrap(), "--port", "2"])).unwrap_err();
    assert!(matches!(e, ConfigError::Line { origin: Origin::File(p), line_no: 2, .. } if p == bad));

    let missing = dir.0.join("missing.conf");
    let e = from_args(&args(&[missing.to_str().unwrap()])).unwrap_err();
    assert!(matches!(e, ConfigError::Open { .. }));
}

#[test]
fn example_config_loads_to_the_defaults() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("valkey.conf.example");
    let c = Config::load_file(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c, Config::default());
    // And it mentions every directive.
    let text = std::fs::read_to_string(&path).unwrap();
    for d in super::super::all_directives() {
        let mentioned = text.lines().any(|l| {
            let l = l.trim_start_matches(['#', ' ']);
            l.split_whitespace().next() == Some(d.name)
        });
        assert!(mentioned, "valkey.conf.example does not document {}", d.name);
    }
}

#[test]
fn directives_without_effect_or_for_missing_features_warn_once() {
    let text = "port 7000\nJEMALLOC-BG-THREAD no\noom-score-adj-values 0 200 800\n\
                repl-disable-tcp-nodelay \"yes\"\nhz 20\nactivedefrag yes\nactivedefrag yes\n";
    let c = Config::load_str(text).unwrap();
    assert_eq!((c.port, c.hz), (7000, 20));
    assert!(!c.memory.jemalloc_bg_thread);
    assert!(c.memory.activedefrag);
    assert_eq!(c.get_value("repl-disable-tcp-nodelay").unwrap(), "yes");
    let from = "(from a configuration string)";
    assert_eq!(
        c.warnings,
        [
            format!(
                "Config directive 'jemalloc-bg-thread' at line 2 {from} has no effect in \
                 ferrokey: ferrokey leaves jemalloc's background threads at jemalloc's own default"
            ),
            format!(
                "Config directive 'repl-disable-tcp-nodelay' at line 4 {from} is stored for \
                 when ferrokey has dual-channel replication and the Sentinel and shutdown \
                 parts of replication, which it lacks"
            ),
            format!(
                "Config directive 'activedefrag' at line 6 {from} has no effect in ferrokey: \
                 active defragmentation moves jemalloc allocations by Valkey's own hooks; \
                 ferrokey has none"
            ),
        ]
    );
    // Their values are still checked.
    assert_eq!(reason("activedefrag maybe"), "argument must be 'yes' or 'no'");
    assert_eq!(reason("jemalloc-bg-thread"), "wrong number of arguments");
}

#[test]
fn directives_turning_on_missing_features_accept_only_their_default() {
    let refused = |line: &str, feature: &str, default: &str| {
        let name = line.split(' ').next().unwrap();
        let canonical = super::super::lookup(name).unwrap().name;
        assert_eq!(
            reason(line),
            format!(
                "ferrokey does not support {feature} yet: {canonical} accepts only its default, \
                 {default}"
            ),
            "{line}"
        );
    };
    refused("tls-port 6380", "TLS", "0");
    refused("tls-replication yes", "TLS", "no");
    refused("tls-cluster yes", "TLS", "no");
    refused("cluster-enabled yes", "cluster mode", "no");
    refused("syslog-enabled yes", "logging to syslog", "no");
    assert_eq!(reason("loadmodule /x.so"), "ferrokey does not support modules yet");
    assert_eq!(reason("replicaof 127.0.0.1"), "wrong number of arguments");
    // The off values load, and CONFIG GET shows them.
    let c = Config::load_str(
        "replicaof no one\ntls-port 0\ncluster-enabled no\ntls-replication no\n\
         tls-protocols \"TLSv1.2 TLSv1.3\"\ncluster-node-timeout 5000\nmasterauth pw\n",
    )
    .unwrap();
    assert_eq!(c.get_value("replicaof").unwrap(), "");
    assert_eq!(c.get_value("tls-protocols").unwrap(), "TLSv1.2 TLSv1.3");
    assert_eq!(c.cluster.cluster_node_timeout_ms, 5000);
    assert_eq!(c.get_value("primaryauth").unwrap(), "pw");
    // CONFIG SET refuses them too, unless immutable first.
    let mut c = Config::default();
    assert_eq!(
        c.set(&[(b"tls-port", b"6380")]),
        Err("ERR CONFIG SET failed (possibly related to argument 'tls-port') - ferrokey does \
             not support TLS yet: tls-port accepts only its default, 0"
            .to_string())
    );
    assert_eq!(
        c.set(&[(b"replicaof", b"127.0.0.1 6379")]),
        Err("ERR CONFIG SET failed (possibly related to argument 'replicaof') - can't set \
             immutable config"
            .to_string())
    );
    assert_eq!(c.set(&[(b"tls-port", b"0")]), Ok(vec![]));
    assert_eq!(c.set(&[(b"repl-timeout", b"30")]), Ok(vec!["repl-timeout"]));
}

#[test]
fn directive_warnings_name_their_origin() {
    let dir = TempDir::new("ignored");
    let inner = dir.write("inner.conf", "# x\ndisable-thp no\n");
    let main = dir.write("main.conf", &format!("include {}\n", inner.display()));
    let cli = args(&[main.to_str().unwrap(), "--stream-node-max-entries", "10"]);
    let (c, _) = from_args(&cli).unwrap();
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    let inner_from = format!("'disable-thp' at line 2 (from config file '{}')", inner.display());
    assert!(c.warnings[0].contains(&inner_from), "{:?}", c.warnings);
    assert!(
        c.warnings[1]
            .contains("'stream-node-max-entries' at line 3 (from the command line options)"),
        "{:?}",
        c.warnings
    );
}

/// The redis.conf of Debian's redis-server 7.0 package (the package that provides the
/// redis-server the differential tests run) loads. Its `dir /var/lib/redis` line is pointed
/// at the current directory first: loading `dir` enters the directory, which would move
/// the whole test process and needs the redis user's rights.
#[test]
fn stock_redis_conf_loads() {
    let stock = Path::new("/etc/redis/redis.conf");
    let text = std::fs::read_to_string(stock).unwrap_or_else(|e| {
        panic!("{}: {e} (it comes with the redis-server package)", stock.display())
    });
    let here = std::env::current_dir().unwrap();
    let here_line = format!("dir {}", repr(here.to_string_lossy().as_bytes()));
    let mut dir_lines = 0;
    let lines: Vec<&str> = text
        .lines()
        .map(|l| match l.starts_with("dir ") {
            true => {
                dir_lines += 1;
                here_line.as_str()
            }
            false => l,
        })
        .collect();
    assert_eq!(dir_lines, 1, "{}", stock.display());
    let dir = TempDir::new("stock");
    let path = dir.write("redis.conf", &lines.join("\n"));
    let c = Config::load_file(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(c.daemonize);
    assert_eq!(c.pidfile, "/run/redis/redis-server.pid");
    assert_eq!(c.logfile, "/var/log/redis/redis-server.log");
    assert_eq!(c.bind, ["127.0.0.1", "-::1"]);
    assert_eq!(c.hash_max_listpack_entries, 512);
    assert_eq!(c.client_output_buffer_limit, Config::default().client_output_buffer_limit);
    let from = format!("(from config file '{}')", path.display());
    assert!(c.warnings.iter().all(|w| w.contains(&from)), "{:?}", c.warnings);
}
