//! The Prometheus metrics endpoint (`metrics-port`) over raw TCP: the text parses and its
//! figures match what the server says over RESP, OpenMetrics on request, the refusals
//! (404, 405, 400, 431, 503 over `metrics-max-clients`) while the RESP port keeps serving,
//! and a real Prometheus server scraping it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{free_port, start, unique_dir, which, Client, Server, Val};

/// A server with the endpoint on a free port of 127.0.0.1; returns it and that port.
fn start_with_metrics(extra: &[&str]) -> (Server, u16) {
    let port = free_port();
    let port_arg = port.to_string();
    let mut args = vec!["--metrics-port", &port_arg, "--metrics-bind", "127.0.0.1"];
    args.extend_from_slice(extra);
    (start(&args), port)
}

fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the metrics port");
    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
    s
}

/// One response: status, headers (lower-cased names), body.
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Parses one response at the start of `raw` (its body by Content-Length, or to the end);
/// returns it and the bytes it took.
fn parse_response(raw: &[u8]) -> (Response, usize) {
    let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a complete head") + 4;
    let head = std::str::from_utf8(&raw[..head_end]).expect("ASCII head");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    assert!(status_line.starts_with("HTTP/1.1 "), "{status_line}");
    let status = status_line[9..12].parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (n, v) = l.split_once(':').expect("header");
            (n.to_ascii_lowercase(), v.trim().to_string())
        })
        .collect();
    let len = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map_or(raw.len() - head_end, |(_, v)| v.parse().unwrap());
    let body = String::from_utf8(raw[head_end..head_end + len].to_vec()).expect("UTF-8 body");
    (Response { status, headers, body }, head_end + len)
}

/// Sends `request` on a new connection and reads until the server closes it.
fn exchange(port: u16, request: &[u8]) -> Vec<u8> {
    let mut s = connect(port);
    s.write_all(request).expect("send request");
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    raw
}

fn get(port: u16, path: &str, accept: Option<&str>) -> Response {
    let accept = accept.map(|a| format!("Accept: {a}\r\n")).unwrap_or_default();
    let req =
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{accept}Connection: close\r\n\r\n");
    let raw = exchange(port, req.as_bytes());
    parse_response(&raw).0
}

/// The samples of an exposition, (series with labels, value), after checking its shape:
/// every line a comment or `name{labels} value`, every family with HELP and TYPE before
/// its samples, every counter sample ending in `_total`.
fn samples(text: &str) -> Vec<(String, f64)> {
    let (mut typed, mut helped) = (Vec::<(String, String)>::new(), Vec::<String>::new());
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE name kind");
            typed.push((name.into(), kind.into()));
        } else if let Some(rest) = line.strip_prefix("# HELP ") {
            helped.push(rest.split_once(' ').expect("HELP name text").0.into());
        } else if line != "# EOF" {
            assert!(!line.starts_with('#'), "{line}");
            let (series, value) = line.rsplit_once(' ').expect("series value");
            let value: f64 = value.parse().unwrap_or_else(|_| panic!("value of {line}"));
            let name = series.split('{').next().unwrap();
            assert!(
                name.starts_with("ferrokey_")
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
                "{line}"
            );
            assert!(!series.contains('{') || series.ends_with('}'), "{line}");
            let (family, kind) = typed.last().unwrap_or_else(|| panic!("no TYPE before {line}"));
            assert!(name.starts_with(family.as_str()), "{line} after TYPE {family}");
            assert!(helped.last() == Some(family), "no HELP for {family}");
            if kind == "counter" {
                assert!(name.ends_with("_total"), "{line}");
            }
            out.push((series.to_string(), value));
        }
    }
    out
}

fn value(samples: &[(String, f64)], series: &str) -> Option<f64> {
    samples.iter().find(|(s, _)| s == series).map(|(_, v)| *v)
}

#[test]
fn metrics_endpoint_serves_the_figures() {
    let (s, mport) = start_with_metrics(&[]);
    let mut c = Client::connect(s.port);
    for i in 0..5 {
        assert_eq!(c.cmd(&["SET", &format!("k{i}"), "v"]), Val::ok());
    }
    assert_eq!(c.cmd(&["EXPIRE", "k0", "100"]), Val::Int(1));
    assert_eq!(c.cmd(&["GET", "k1"]), Val::bulk("v"));
    c.cmd(&["NOSUCHCOMMAND"]);
    assert_eq!(c.cmd(&["SELECT", "3"]), Val::ok());
    assert_eq!(c.cmd(&["SET", "other", "v"]), Val::ok());
    assert_eq!(c.cmd(&["HSETEX", "fields", "EX", "100", "FIELDS", "1", "f", "v"]), Val::Int(1));
    assert_eq!(c.cmd(&["SELECT", "0"]), Val::ok());
    let dbsize = c.cmd(&["DBSIZE"]).as_int();

    let r = get(mport, "/metrics", None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type"), Some("text/plain; version=0.0.4; charset=utf-8"));
    assert!(!r.body.contains("# EOF"));
    let m = samples(&r.body);
    assert_eq!(value(&m, "ferrokey_up"), Some(1.0));
    assert_eq!(value(&m, "ferrokey_db_keys{db=\"0\"}"), Some(dbsize as f64));
    assert_eq!(value(&m, "ferrokey_db_keys_expiring{db=\"0\"}"), Some(1.0));
    assert_eq!(value(&m, "ferrokey_db_keys{db=\"3\"}"), Some(2.0));
    assert_eq!(value(&m, "ferrokey_db_keys_with_volatile_items{db=\"3\"}"), Some(1.0));
    assert_eq!(value(&m, "ferrokey_db_keys_with_volatile_items{db=\"0\"}"), Some(0.0));
    assert_eq!(value(&m, "ferrokey_db_keys{db=\"1\"}"), None, "empty databases are left out");
    assert_eq!(value(&m, "ferrokey_commands_total{cmd=\"set\"}"), Some(6.0));
    assert_eq!(value(&m, "ferrokey_commands_total{cmd=\"get\"}"), Some(1.0));
    // The latency histograms: every SET counted, the +Inf bucket holding them all.
    assert_eq!(value(&m, "ferrokey_command_latency_seconds_count{cmd=\"set\"}"), Some(6.0));
    assert_eq!(
        value(&m, "ferrokey_command_latency_seconds_bucket{le=\"+Inf\",cmd=\"set\"}").or_else(
            || value(&m, "ferrokey_command_latency_seconds_bucket{cmd=\"set\",le=\"+Inf\"}")
        ),
        Some(6.0)
    );
    assert!(value(&m, "ferrokey_commands_duration_seconds_total{cmd=\"set\"}").unwrap() > 0.0);
    assert_eq!(value(&m, "ferrokey_errors_total{err=\"ERR\"}"), Some(1.0));
    assert_eq!(value(&m, "ferrokey_connected_clients"), Some(1.0));
    assert_eq!(value(&m, "ferrokey_keyspace_hits_total"), Some(1.0));
    assert_eq!(value(&m, "ferrokey_replication_role{role=\"primary\"}"), Some(1.0));
    assert!(value(&m, "ferrokey_memory_used_bytes").unwrap() > 0.0);
    assert!(value(&m, "ferrokey_commands_processed_total").unwrap() >= 11.0);
    assert_eq!(value(&m, "ferrokey_metrics_scrapes_total"), Some(1.0));
    for family in [
        "ferrokey_uptime_seconds",
        "ferrokey_blocked_clients",
        "ferrokey_memory_max_bytes",
        "ferrokey_connections_received_total",
        "ferrokey_net_input_bytes_total",
        "ferrokey_net_output_bytes_total",
        "ferrokey_keyspace_misses_total",
        "ferrokey_expired_keys_total",
        "ferrokey_evicted_keys_total",
        "ferrokey_rejected_connections_total",
        "ferrokey_cpu_sys_seconds_total",
        "ferrokey_cpu_user_seconds_total",
        "ferrokey_connected_replicas",
        "ferrokey_replication_offset_bytes",
        "ferrokey_rdb_changes_since_last_save",
        "ferrokey_rdb_last_save_timestamp_seconds",
        "ferrokey_rdb_bgsave_in_progress",
        "ferrokey_aof_enabled",
        "ferrokey_aof_rewrite_in_progress",
        "ferrokey_pubsub_channels",
        "ferrokey_pubsub_patterns",
    ] {
        assert!(value(&m, family).is_some(), "{family} missing");
    }

    // Keep-alive: two pipelined requests on one connection, answered in order; HEAD has
    // the headers only. INFO is what it was.
    let mut k = connect(mport);
    k.write_all(
        b"GET /metrics HTTP/1.1\r\n\r\nHEAD /metrics HTTP/1.1\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut raw = Vec::new();
    let _ = k.read_to_end(&mut raw);
    let (first, used) = parse_response(&raw);
    assert_eq!((first.status, first.header("connection")), (200, Some("keep-alive")));
    assert_eq!(value(&samples(&first.body), "ferrokey_metrics_scrapes_total"), Some(2.0));
    let rest = &raw[used..];
    let head = String::from_utf8_lossy(rest);
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n") && head.ends_with("\r\n\r\n"), "{head}");
    assert!(head.contains("Connection: close\r\n"), "{head}");

    // The directives: CONFIG GET shows them, CONFIG SET refuses them (read at start-up).
    let got = c.cmd(&["CONFIG", "GET", "metrics-port"]).as_array();
    assert_eq!(got[1].as_str(), mport.to_string());
    assert!(matches!(c.cmd(&["CONFIG", "SET", "metrics-port", "0"]), Val::Err(_)));
    assert_eq!(c.cmd(&["CONFIG", "GET", "metrics-max-clients"]).as_array()[1].as_str(), "16");
}

#[test]
fn metrics_endpoint_speaks_openmetrics_on_request() {
    let (s, mport) = start_with_metrics(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["SET", "k", "v"]), Val::ok());
    let accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";
    let r = get(mport, "/metrics?x=y", Some(accept));
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type"),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    assert!(r.body.ends_with("# EOF\n"), "{}", r.body);
    assert!(r.body.contains("# TYPE ferrokey_commands_processed counter\n"));
    let m = samples(&r.body);
    assert_eq!(value(&m, "ferrokey_db_keys{db=\"0\"}"), Some(1.0));
    assert_eq!(value(&m, "ferrokey_commands_total{cmd=\"set\"}"), Some(1.0));
}

/// The RESP port answers PING.
fn resp_serves(port: u16) {
    assert_eq!(Client::connect(port).cmd(&["PING"]), Val::Simple("PONG".into()));
}

#[test]
fn metrics_endpoint_refuses_bad_requests() {
    let (s, mport) = start_with_metrics(&[]);
    let status = |raw: Vec<u8>| parse_response(&raw).0.status;
    assert_eq!(get(mport, "/other", None).status, 404);
    assert_eq!(get(mport, "/", None).status, 404);
    let post = exchange(mport, b"POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nab");
    let (r, _) = parse_response(&post);
    assert_eq!((r.status, r.header("allow")), (405, Some("GET, HEAD")));
    assert_eq!(status(exchange(mport, b"hello world\r\n\r\n")), 400);
    assert_eq!(status(exchange(mport, b"\x00\xff\x16\x03\x01 garbage\r\n")), 400);
    assert_eq!(status(exchange(mport, b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n")), 400);
    assert_eq!(status(exchange(mport, b"GET /metrics HTTP/3.0\r\n\r\n")), 505);
    let mut big = b"GET /metrics HTTP/1.1\r\n".to_vec();
    for i in 0..400 {
        big.extend_from_slice(format!("X-Filler-{i}: {}\r\n", "a".repeat(40)).as_bytes());
    }
    big.extend_from_slice(b"\r\n");
    assert!(big.len() > 16 * 1024);
    assert_eq!(status(exchange(mport, &big)), 431);
    resp_serves(s.port);
    assert_eq!(get(mport, "/metrics", None).status, 200);
}

#[test]
fn metrics_endpoint_limits_its_connections() {
    let (s, mport) = start_with_metrics(&["--metrics-max-clients", "2"]);
    // Two idle connections take the two places (accepted in order of arrival).
    let idle: Vec<TcpStream> = (0..2).map(|_| connect(mport)).collect();
    let mut third = connect(mport);
    let mut raw = Vec::new();
    let _ = third.read_to_end(&mut raw);
    let (r, _) = parse_response(&raw);
    assert_eq!(r.status, 503, "{}", r.body);
    resp_serves(s.port);
    // Once they close, scrapes are served again, and count the refusal.
    drop(idle);
    let deadline = Instant::now() + Duration::from_secs(10);
    let body = loop {
        let raw = exchange(mport, b"GET /metrics HTTP/1.0\r\n\r\n");
        let (r, _) = parse_response(&raw);
        if r.status == 200 {
            break r.body;
        }
        assert!(Instant::now() < deadline, "still refused: {}", r.status);
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(value(&samples(&body), "ferrokey_metrics_refused_connections_total").unwrap() >= 1.0);
}

// ---------------------------------------------------------------------------------------
// A real Prometheus server.

/// A process killed (by its PID, through its handle) and its directory removed on drop.
struct Prometheus {
    child: Child,
    dir: std::path::PathBuf,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `GET path` of an HTTP API on 127.0.0.1:`port` (HTTP/1.0, so the body comes whole); the
/// body, or None when nothing answers yet.
fn api_get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok();
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes()).ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    text.starts_with("HTTP/1.").then(|| text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()))?
}

/// The sample values of an instant query's JSON answer (`"value":[time,"v"]`).
fn query_values(json: &str) -> Vec<String> {
    json.split("\"value\":[")
        .skip(1)
        .filter_map(|rest| {
            let inner = rest.split(']').next()?;
            Some(inner.split_once(',')?.1.trim_matches('"').to_string())
        })
        .collect()
}

#[test]
fn prometheus_scrapes_the_endpoint() {
    let Some(bin) = which("prometheus") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "prometheus is not installed: tests/run-all.sh installs it with apt-get"
        );
        eprintln!("SKIPPED prometheus_scrapes_the_endpoint: no prometheus binary (apt-get install prometheus, or run tests/run-all.sh)");
        return;
    };
    let (s, mport) = start_with_metrics(&[]);
    let mut c = Client::connect(s.port);
    for i in 0..7 {
        assert_eq!(c.cmd(&["SET", &format!("key:{i}"), "v"]), Val::ok());
    }
    let dbsize = c.cmd(&["DBSIZE"]).as_int();

    let dir = unique_dir("prometheus");
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: ferrokey\n    static_configs:\n      \
             - targets: ['127.0.0.1:{mport}']\n"
        ),
    )
    .unwrap();
    let web_port = free_port();
    let child = Command::new(bin)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
        .arg(format!("--web.listen-address=127.0.0.1:{web_port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start prometheus");
    let mut prom = Prometheus { child, dir };

    let deadline = Instant::now() + Duration::from_secs(60);
    let wait_for = |prom: &mut Prometheus, query: &str, want: &str| loop {
        if let Ok(Some(status)) = prom.child.try_wait() {
            panic!("prometheus exited: {status}");
        }
        let answer = api_get(web_port, &format!("/api/v1/query?query={query}"));
        if answer.as_deref().is_some_and(|a| query_values(a) == [want]) {
            return;
        }
        assert!(Instant::now() < deadline, "{query} is not {want}: {answer:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    wait_for(&mut prom, "up", "1");
    // ferrokey_db_keys{db="0"}, URL-encoded.
    wait_for(&mut prom, "ferrokey_db_keys%7Bdb%3D%220%22%7D", &dbsize.to_string());
    wait_for(&mut prom, "ferrokey_commands_total%7Bcmd%3D%22set%22%7D", "7");
    drop(prom);
}
