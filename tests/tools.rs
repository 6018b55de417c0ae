//! The real tools users drive the server with: redis-cli (interactive-style and `--pipe`)
//! and redis-benchmark. They must work unchanged. Under `CI=true` a missing tool fails.

mod common;

use common::run_tool;

#[test]
fn redis_cli_interactive_session() {
    let s = common::start(&[]);
    let out = run_tool(
        "redis-cli",
        &["-p", &s.port.to_string()],
        b"SET greeting \"hello world\"\nGET greeting\nINCR counter\nPING\n",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "redis-cli failed: {text}");
    assert_eq!(text, "OK\nhello world\n1\nPONG\n");
}

#[test]
fn redis_cli_pipe_mode() {
    let s = common::start(&[]);
    let mut input = Vec::new();
    for i in 0..10_000 {
        input.extend(common::Client::encode(&[b"SET", format!("k{i}").as_bytes(), b"v"]));
    }
    let out = run_tool("redis-cli", &["-p", &s.port.to_string(), "--pipe"], &input);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "redis-cli --pipe failed: {text}");
    assert!(text.contains("errors: 0, replies: 10000"), "{text}");
    let mut c = common::Client::connect(s.port);
    assert_eq!(c.cmd(&["DBSIZE"]), common::Val::Int(10_000));
}

#[test]
fn redis_benchmark_runs_clean() {
    let s = common::start(&[]);
    let port = s.port.to_string();
    let args = ["-p", &port, "-t", "ping,set,get,incr,mset", "-n", "100000", "-P", "16", "-q"];
    let out = run_tool("redis-benchmark", &args, b"");
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "redis-benchmark failed: {text} {err}");
    for t in ["PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "MSET"] {
        assert!(
            text.lines().any(|l| {
                let l = l.trim_start();
                (l.starts_with(&format!("{t}:")) || l.starts_with(&format!("{t} ")))
                    && l.contains("requests per second")
            }),
            "no result line for {t}: {text}"
        );
    }
    assert!(!text.contains("ERR") && !err.contains("ERR"), "errors in benchmark: {text} {err}");
}
