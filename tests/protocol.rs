//! The wire protocol over real TCP: pipelining with split reads, inline commands, protocol
//! errors (exact text, connection closed, other clients unaffected), oversized lengths,
//! binary safety, and the output-buffer limit.

mod common;

use std::io::{Read, Write};
use std::time::Duration;

use common::{start, Client, Val};

#[test]
fn pipelined_commands_split_at_every_byte_get_all_replies() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let mut buf = Vec::new();
    buf.extend(Client::encode(&[b"SET", b"k\r\n\0", b"v\0\r\nx"]));
    buf.extend(b"PING\r\n");
    buf.extend(Client::encode(&[b"GET", b"k\r\n\0"]));
    buf.extend(b"ECHO \"a b\"\r\n");
    let expected = b"+OK\r\n+PONG\r\n$5\r\nv\0\r\nx\r\n$3\r\na b\r\n".to_vec();
    // Write the whole pipeline one byte at a time, with pauses so the server sees many
    // partial reads, then read all replies.
    for chunk in buf.chunks(1) {
        c.send_raw(chunk);
    }
    let mut got = Vec::new();
    while got.len() < expected.len() {
        got.extend(c.read_raw());
    }
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&expected));
    // And as one big write of many commands.
    let mut big = Vec::new();
    for i in 0..1000 {
        big.extend(Client::encode(&[b"SET", format!("key{i}").as_bytes(), b"x"]));
    }
    c.send_raw(&big);
    for _ in 0..1000 {
        assert_eq!(c.read(), Val::ok());
    }
}

#[test]
fn inline_commands_work() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    c.send_raw(b"SET  foo   bar\r\nGET foo\nPING\r\n\r\n   \r\nEXISTS foo 'x y'\r\n");
    assert_eq!(c.read(), Val::ok());
    assert_eq!(c.read(), Val::bulk("bar"));
    assert_eq!(c.read(), Val::Simple("PONG".into()));
    assert_eq!(c.read(), Val::Int(1));
}

fn expect_protocol_error(input: &[u8], text: &str) {
    let s = start(&[]);
    let mut bystander = Client::connect(s.port);
    assert_eq!(bystander.cmd(&["SET", "safe", "1"]), Val::ok());
    let mut c = Client::connect(s.port);
    c.send_raw(input);
    assert_eq!(c.read(), Val::Err(text.to_string()), "input {:?}", String::from_utf8_lossy(input));
    assert!(c.is_closed(), "connection must be closed after a protocol error");
    assert_eq!(bystander.cmd(&["GET", "safe"]), Val::bulk("1"));
}

#[test]
fn protocol_errors_reply_exact_text_and_close_only_that_connection() {
    expect_protocol_error(b"*abc\r\n", "ERR Protocol error: invalid multibulk length");
    expect_protocol_error(b"*1\r\n$x\r\n", "ERR Protocol error: invalid bulk length");
    expect_protocol_error(b"*1\r\n+foo\r\n", "ERR Protocol error: expected '$', got '+'");
    expect_protocol_error(b"SET \"abc\r\n", "ERR Protocol error: unbalanced quotes in request");
    expect_protocol_error(b"*1\r\n$-5\r\n", "ERR Protocol error: invalid bulk length");
    // Valkey 9 checks every line ending of a multibulk.
    for input in [&b"*1\rX$4\r\nPING\r\n"[..], b"*1\r\n$4\rXPING\r\n", b"*1\r\n$4\r\nPINGXY"] {
        expect_protocol_error(input, "ERR Protocol error: invalid CRLF in request");
    }
}

#[test]
fn huge_lengths_are_refused_before_allocation() {
    // Longer than proto-max-bulk-len (default 512mb): refused at once.
    expect_protocol_error(b"*1\r\n$9999999999\r\n", "ERR Protocol error: invalid bulk length");
    expect_protocol_error(b"*99999999999999\r\n", "ERR Protocol error: invalid multibulk length");
    // A lower configured limit applies too.
    let s = start(&["--proto-max-bulk-len", "1mb"]);
    let mut c = Client::connect(s.port);
    c.send_raw(b"*2\r\n$3\r\nGET\r\n$2000000\r\n");
    assert_eq!(c.read(), Val::Err("ERR Protocol error: invalid bulk length".into()));
    assert!(c.is_closed());
}

#[test]
fn inline_request_without_newline_is_bounded() {
    let big = vec![b'a'; 70 * 1024];
    expect_protocol_error(&big, "ERR Protocol error: too big inline request");
}

#[test]
fn query_buffer_limit_closes_the_client() {
    let s = start(&["--client-query-buffer-limit", "1mb"]);
    let mut c = Client::connect(s.port);
    // A bulk string announced below proto-max-bulk-len but above the query buffer limit.
    c.send_raw(b"*2\r\n$3\r\nGET\r\n$5000000\r\n");
    let chunk = vec![b'x'; 64 * 1024];
    let mut closed = false;
    for _ in 0..80 {
        if c.stream.get_mut().write_all(&chunk).is_err() {
            closed = true;
            break;
        }
    }
    assert!(closed || c.is_closed());
    let mut other = Client::connect(s.port);
    assert_eq!(other.cmd(&["PING"]), Val::Simple("PONG".into()));
}

#[test]
fn a_pipe_much_larger_than_the_query_buffer_limit_is_served() {
    // redis-cli --pipe style mass insertion: one connection writes 24 MB of SETs as fast as
    // it can while the replies are read on another thread. The server must not read ahead
    // into the 1 MB query buffer limit and close the client.
    let s = start(&["--client-query-buffer-limit", "1mb"]);
    let c = Client::connect(s.port);
    let mut writer = c.stream.get_ref().try_clone().expect("clone the socket");
    let n = 100_000;
    let value = "v".repeat(200);
    let sender = std::thread::spawn(move || {
        let mut buf = Vec::new();
        for i in 0..n {
            let key = format!("key:{i}");
            buf.extend_from_slice(
                format!("*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n$200\r\n{value}\r\n", key.len())
                    .as_bytes(),
            );
        }
        writer.write_all(&buf).expect("the server keeps reading");
    });
    let mut reader = c.stream.get_ref().try_clone().expect("clone the socket");
    reader.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let want = b"+OK\r\n".len() * n;
    let mut got = 0;
    let mut buf = vec![0u8; 1 << 16];
    while got < want {
        let r = reader.read(&mut buf).expect("replies keep coming");
        assert!(r > 0, "the server closed the connection after {got} reply bytes");
        assert!(buf[..r].iter().all(|&b| b"+OK\r\n".contains(&b)));
        got += r;
    }
    sender.join().unwrap();
    let mut other = Client::connect(s.port);
    assert_eq!(other.cmd(&["DBSIZE"]), Val::Int(n as i64));
}

#[test]
fn binary_keys_and_values_round_trip() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let key: Vec<u8> = (0u8..=255).collect();
    let val: Vec<u8> = (0u8..=255).rev().cycle().take(100_000).collect();
    assert_eq!(c.cmd_b(&[b"SET", &key, &val]), Val::ok());
    assert_eq!(c.cmd_b(&[b"GET", &key]), Val::Bulk(val));
}

#[test]
fn output_buffer_limit_disconnects_a_client_that_does_not_read() {
    let s = start(&["--client-output-buffer-limit", "normal 1mb 0 0"]);
    let mut c = Client::connect(s.port);
    let val = vec![b'v'; 100_000];
    assert_eq!(c.cmd_b(&[b"SET", b"big", &val]), Val::ok());
    // Ask for 100 MB of replies without reading any of them.
    let mut pipeline = Vec::new();
    for _ in 0..1000 {
        pipeline.extend(Client::encode(&[b"GET", b"big"]));
    }
    c.send_raw(&pipeline);
    std::thread::sleep(Duration::from_millis(300));
    // The server must have dropped the connection: reading all replies ends early.
    let mut total = 0usize;
    let mut b = vec![0u8; 1 << 16];
    c.stream.get_ref().set_read_timeout(Some(Duration::from_secs(5))).ok();
    loop {
        match c.stream.get_mut().read(&mut b) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
    }
    assert!(total < 1000 * 100_000, "all {total} bytes arrived: the limit was not enforced");
    let mut other = Client::connect(s.port);
    assert_eq!(other.cmd(&["GET", "big"]).as_str().len(), 100_000);
}

#[test]
fn unknown_command_and_wrong_arity_errors() {
    common::assert_same_as_valkey(&["FOO a b", "FOOBAR", "GET", "GET a b", "SET a", "PING a b"]);
}

#[test]
fn resp3_null_and_map_through_hello() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    match c.cmd(&["HELLO", "3"]) {
        Val::Map(fields) => {
            assert!(fields.iter().any(|(k, v)| k.as_str() == "proto" && *v == Val::Int(3)));
        }
        other => panic!("HELLO 3 must answer a map, got {other:?}"),
    }
    assert_eq!(c.cmd_raw(&["GET", "missing"]), b"_\r\n");
}

#[test]
fn many_clients_are_served() {
    let s = start(&[]);
    let mut clients: Vec<Client> = (0..200).map(|_| Client::connect(s.port)).collect();
    for (i, c) in clients.iter_mut().enumerate() {
        c.send(&[b"SET", format!("c{i}").as_bytes(), format!("{i}").as_bytes()]);
    }
    for c in clients.iter_mut() {
        assert_eq!(c.read(), Val::ok());
    }
    for (i, c) in clients.iter_mut().enumerate() {
        assert_eq!(c.cmd(&["GET", &format!("c{i}")]), Val::bulk(&i.to_string()));
    }
}

#[test]
fn maxclients_refuses_extra_connections() {
    let s = start(&["--maxclients", "3"]);
    // Let the server see the start-up probe connection close first.
    std::thread::sleep(Duration::from_millis(200));
    let _a = Client::connect(s.port);
    let _b = Client::connect(s.port);
    let _c = Client::connect(s.port);
    std::thread::sleep(Duration::from_millis(100));
    let mut d = Client::connect(s.port);
    assert_eq!(d.read(), Val::Err("ERR max number of clients reached".into()));
}

#[test]
fn idle_timeout_closes_clients() {
    let s = start(&["--timeout", "1"]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["PING"]), Val::Simple("PONG".into()));
    std::thread::sleep(Duration::from_millis(2500));
    assert!(c.is_closed());
}

/// Bytes that are not UTF-8 are echoed raw in error replies, as Valkey sends them (a NUL
/// ends them, as in its C strings): unknown command names and arguments, unknown
/// subcommands, SCAN's TYPE, and a protocol error's unexpected byte. Byte for byte with the
/// Valkey 9.1 oracle.
#[test]
fn errors_echo_the_clients_bytes_raw() {
    let mut p = common::diff::Pair::start(2, &[]);
    let cases: [&[&[u8]]; 5] = [
        &[b"GE\0T", b"x\0y", b"\xc3\x28"],
        &[b"\xff\xfe", b"\x80"],
        &[b"CLIENT", b"\xff\0a"],
        &[b"SCAN", b"0", b"TYPE", b"\xfe\0b"],
        &[b"OBJECT", b"caf\xe9"],
    ];
    for argv in cases {
        let (ours, theirs) = p.both(argv);
        assert_eq!(ours, theirs, "{argv:?}");
    }
    // A protocol error: the offending byte, then the connection is closed.
    p.a.send_raw(b"*1\r\n\xe9\r\n");
    p.b.send_raw(b"*1\r\n\xe9\r\n");
    let (ours, theirs) = (p.a.read_raw(), p.b.read_raw());
    assert_eq!(ours, b"-ERR Protocol error: expected '$', got '\xe9'\r\n");
    assert_eq!(ours, theirs);
}
