//! Start-up modes: several bind addresses (IPv4 and IPv6), the unix socket, and daemonize with
//! a pidfile.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn ping(stream: &mut impl ReadWrite) -> Vec<u8> {
    stream.write_all(b"PING\r\n").expect("write");
    let mut b = [0u8; 7];
    stream.read_exact(&mut b).expect("read");
    b.to_vec()
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

#[test]
fn binds_ipv4_and_ipv6_loopback_and_a_unix_socket() {
    let dir = common::unique_dir("startup");
    let sock = dir.join("fk.sock");
    let sock_arg = sock.to_str().expect("utf-8 path");
    let s = common::start(&["--bind", "127.0.0.1", "-::1", "--unixsocket", sock_arg]);
    let mut v4 = TcpStream::connect(("127.0.0.1", s.port)).expect("ipv4");
    assert_eq!(ping(&mut v4), b"+PONG\r\n");
    // ::1 is optional in the bind list ("-"): only check it where the host has IPv6.
    if let Ok(mut v6) = TcpStream::connect(("::1", s.port)) {
        assert_eq!(ping(&mut v6), b"+PONG\r\n");
    }
    let mut unix = UnixStream::connect(&sock).expect("unix socket");
    assert_eq!(ping(&mut unix), b"+PONG\r\n");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn daemonize_detaches_and_writes_the_pidfile() {
    let dir = common::unique_dir("daemon");
    let pidfile = dir.join("fk.pid");
    let port = common::free_port();
    let status = Command::new(env!("CARGO_BIN_EXE_ferrokey-server"))
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", ""])
        .args(["--daemonize", "yes", "--pidfile", pidfile.to_str().expect("utf-8")])
        .arg("--dir")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run the server");
    // The foreground process exits at once; the daemon keeps serving.
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let pid = loop {
        if let Ok(text) = std::fs::read_to_string(&pidfile) {
            if let Ok(pid) = text.trim().parse::<i32>() {
                break pid;
            }
        }
        assert!(Instant::now() < deadline, "no pidfile");
        std::thread::sleep(Duration::from_millis(20));
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "daemon does not accept connections");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut c = common::Client::connect(port);
    assert_eq!(c.cmd(&["PING"]), common::Val::Simple("PONG".into()));
    // Stop the daemon we started, by its PID.
    // SHUTDOWN answers nothing on success: the connection just closes.
    c.send(&[b"SHUTDOWN", b"NOSAVE"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        if Instant::now() > deadline {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("daemon did not exit after SHUTDOWN");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// The start-up lines come in Valkey's order, so that tools supervising the server by its log
/// (Valkey's own test suite among them) see them: the banner, the logo with ` PID: <pid>`
/// (under `always-show-logo yes`), `Server initialized`, then the load, then `Ready to
/// accept connections`; a fatal load error is logged after `Server initialized`.
#[test]
fn startup_log_lines_come_in_valkeys_order() {
    let dir = common::unique_dir("log-order");
    std::fs::write(dir.join("dump.rdb"), b"NOT-AN-RDB-FILE").expect("write dump.rdb");
    let out = Command::new(env!("CARGO_BIN_EXE_ferrokey-server"))
        .args(["--port", &common::free_port().to_string(), "--bind", "127.0.0.1"])
        .args(["--always-show-logo", "yes", "--save", ""])
        .arg("--dir")
        .arg(&dir)
        .stdin(Stdio::null())
        .output()
        .expect("run ferrokey-server");
    assert!(!out.status.success(), "a bad dump.rdb stops the start-up");
    let log = String::from_utf8_lossy(&out.stdout);
    let at = |needle: &str| log.find(needle).unwrap_or_else(|| panic!("no {needle:?} in:\n{log}"));
    let starting = at("Valkey is starting");
    let pid = at(" PID: ");
    let initialized = at("Server initialized");
    let failed = at("Wrong signature trying to load DB from file");
    assert!(starting < pid && pid < initialized && initialized < failed, "{log}");
    assert!(!log.contains("Ready to accept connections"), "{log}");
    // A clean start, without the logo: one `Running mode=` line instead, and Ready last.
    std::fs::remove_file(dir.join("dump.rdb")).expect("remove");
    let port = common::free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferrokey-server"))
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", ""])
        .arg("--dir")
        .arg(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    common::wait_ready(&mut child, port).expect("ready");
    let _ = child.kill();
    let out = child.wait_with_output().expect("wait");
    let log = String::from_utf8_lossy(&out.stdout);
    let at = |needle: &str| log.find(needle).unwrap_or_else(|| panic!("no {needle:?} in:\n{log}"));
    let mode = at(&format!("Running mode=standalone, port={port}."));
    assert!(
        mode < at("Server initialized")
            && at("Server initialized") < at("Ready to accept connections tcp")
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The default `bind * -::*` listens on every IPv4 and every IPv6 address of the port: the
/// IPv6 socket is v6-only, so it does not collide with the IPv4 one.
#[test]
fn the_default_bind_listens_on_ipv4_and_ipv6() {
    let has_v6 = std::net::TcpListener::bind("[::1]:0").is_ok();
    if !has_v6 && std::env::var("CI").as_deref() == Ok("true") {
        panic!("this host has no IPv6 loopback (::1): the default bind cannot be checked");
    }
    let dir = common::unique_dir("default-bind");
    let port = common::free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferrokey-server"))
        .args(["--port", &port.to_string(), "--save", ""])
        .arg("--dir")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the server");
    let ready = common::wait_ready(&mut child, port);
    let v6 = has_v6.then(|| TcpStream::connect(("::1", port)).map(|mut s| ping(&mut s)));
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(ready.is_ok(), "no answer on 127.0.0.1: {ready:?}");
    if let Some(v6) = v6 {
        assert_eq!(v6.expect("the default bind listens on ::1"), b"+PONG\r\n");
    }
}
