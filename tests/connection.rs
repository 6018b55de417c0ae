//! Connection and CLIENT commands over TCP: PING, ECHO, QUIT, RESET, HELLO, AUTH and every
//! CLIENT subcommand, with differential checks against redis-server where replies must be
//! byte-identical; protected mode, and CONFIG SET bind / port reopening the listeners
//! (against the Valkey 9.1 oracle).

mod common;

use std::time::{Duration, Instant};

use common::diff::Pair;
use common::{assert_same_as_valkey, err, monitor_and_client, start, start_valkey, Client, Val};

/// The `field=value` pairs of one CLIENT LIST line.
fn fields(line: &str) -> Vec<(String, String)> {
    line.split(' ')
        .map(|f| {
            let (k, v) = f.split_once('=').unwrap_or_else(|| panic!("no '=' in {f:?}"));
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn field(line: &str, name: &str) -> String {
    fields(line).into_iter().find(|(k, _)| k == name).map(|(_, v)| v).unwrap_or_default()
}

fn client_info(c: &mut Client) -> String {
    c.cmd(&["CLIENT", "INFO"]).as_str().trim_end().to_string()
}

#[test]
fn ping_and_echo_match_redis() {
    assert_same_as_valkey(&[
        "PING",
        "PING hello",
        "PING a b",
        "ECHO x",
        "ECHO",
        "ECHO a b",
        "ping",
        "EcHo mixed",
    ]);
}

#[test]
fn quit_replies_ok_then_closes() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd_raw(&["QUIT"]), b"+OK\r\n");
    assert!(c.is_closed());
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["QUIT", "extra", "args"]), Val::ok());
    assert!(c.is_closed());
}

#[test]
fn hello3_switches_to_resp3() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let id = c.cmd(&["CLIENT", "ID"]).as_int();
    let Val::Map(pairs) = c.cmd(&["HELLO", "3"]) else { panic!("HELLO 3 must reply a map") };
    let keys: Vec<String> = pairs.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["server", "version", "proto", "id", "mode", "role", "modules"]);
    assert_eq!(pairs[0].1, Val::bulk("valkey"));
    assert_eq!(pairs[2].1, Val::Int(3));
    assert_eq!(pairs[3].1, Val::Int(id));
    assert_eq!(pairs[4].1, Val::bulk("standalone"));
    assert_eq!(pairs[5].1, Val::bulk("master"));
    // The Lua engine, listed as a module as Valkey 9.1 lists it.
    let Val::Array(modules) = &pairs[6].1 else { panic!("modules must be an array") };
    assert_eq!(modules.len(), 1);
    // RESP3 null and the map stays for the connection.
    assert_eq!(c.cmd_raw(&["CLIENT", "GETNAME"]), b"_\r\n");
    assert!(field(&client_info(&mut c), "resp") == "3");
    // Back to RESP2: a flat array of 14.
    let Val::Array(flat) = c.cmd(&["HELLO", "2"]) else { panic!("HELLO 2 must reply an array") };
    assert_eq!(flat.len(), 14);
    assert_eq!(c.cmd_raw(&["CLIENT", "GETNAME"]), b"$-1\r\n");
    // HELLO without a version keeps the protocol.
    assert!(matches!(c.cmd(&["HELLO"]), Val::Array(_)));
}

#[test]
fn hello_setname_and_errors() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert!(matches!(c.cmd(&["HELLO", "3", "SETNAME", "conn1"]), Val::Map(_)));
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]), Val::bulk("conn1"));
    assert!(matches!(c.cmd(&["HELLO", "2", "AUTH", "default", "anything"]), Val::Array(_)));
    assert_eq!(
        c.cmd(&["HELLO", "2", "AUTH", "bob", "x"]),
        err("WRONGPASS invalid username-password pair or user is disabled.")
    );
}

/// HELLO's reply without the one field that legitimately differs: the client id. (The
/// module list is Valkey 9.1's: its Lua engine, which ferrokey has built in.)
fn hello_shape(c: &mut Client, args: &[&str]) -> Val {
    match c.cmd(args) {
        Val::Array(items) => {
            let kept: Vec<Val> = items
                .chunks(2)
                .filter(|kv| kv[0].as_str() != "id")
                .flat_map(|kv| kv.to_vec())
                .collect();
            Val::Array(kept)
        }
        Val::Map(pairs) => {
            Val::Map(pairs.into_iter().filter(|(k, _)| k.as_str() != "id").collect())
        }
        other => other,
    }
}

#[test]
fn hello_matches_valkey_except_id() {
    let mut p = Pair::start(2, &[]);
    for args in [
        &["HELLO"][..],
        &["HELLO", "2"],
        &["HELLO", "3"],
        &["HELLO", "3", "SETNAME", "x"],
        &["HELLO", "2", "AUTH", "default", "pw"],
    ] {
        assert_eq!(hello_shape(&mut p.a, args), hello_shape(&mut p.b, args), "{args:?}");
    }
    assert_same_as_valkey(&[
        "HELLO 4",
        "HELLO 1",
        "HELLO x",
        "HELLO 2 AUTH a",
        "HELLO 3 SETNAME",
        "HELLO 3 SETNAME a b",
        "HELLO 3 foo",
        "HELLO 2 AUTH nobody pw",
    ]);
}

#[test]
fn auth_without_password_matches_redis() {
    assert_same_as_valkey(&["AUTH", "AUTH x", "AUTH a b", "AUTH a b c", "AUTH default x", "PING"]);
}

/// Set `requirepass` at run time: the test harness checks that a server is up with a PING,
/// which a server started with `--requirepass` refuses.
fn require_password(port: u16, password: &str) {
    let mut c = Client::connect(port);
    assert_eq!(c.cmd(&["CONFIG", "SET", "requirepass", password]), Val::ok());
}

#[test]
fn requirepass_matches_redis() {
    let ours = start(&[]);
    let theirs = start_valkey(&[]);
    require_password(ours.port, "secret");
    require_password(theirs.port, "secret");
    // New connections, made after the password is set.
    Pair::connect(ours, theirs, 2).same_lines(&[
        "PING",
        "ECHO x",
        "CLIENT ID",
        "HELLO 3",
        "HELLO 4",
        "HELLO x",
        "HELLO 3 SETNAME a\tb",
        "HELLO 3 AUTH default wrong",
        "AUTH wrong",
        "AUTH foo secret",
        "AUTH default wrong",
        "AUTH secret",
        "PING",
        "AUTH wrong",
        "PING",
        "RESET",
        "PING",
        "AUTH default secret",
        "ECHO ok",
    ]);
}

#[test]
fn requirepass_hello_auth_and_reset() {
    let s = start(&[]);
    require_password(s.port, "secret");
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["GET", "k"]), err("NOAUTH Authentication required."));
    let Val::Map(pairs) = c.cmd(&["HELLO", "3", "AUTH", "default", "secret", "SETNAME", "me"])
    else {
        panic!("HELLO with AUTH must succeed")
    };
    assert_eq!(pairs[2].1, Val::Int(3));
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]), Val::bulk("me"));
    assert_eq!(c.cmd(&["RESET"]), Val::Simple("RESET".into()));
    assert_eq!(c.cmd(&["PING"]), err("NOAUTH Authentication required."));
    // QUIT and AUTH work before authentication.
    assert_eq!(c.cmd(&["AUTH", "secret"]), Val::ok());
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]), Val::Nil);
    assert_eq!(c.cmd(&["QUIT"]), Val::ok());
    assert!(c.is_closed());
}

#[test]
fn reset_restores_a_fresh_connection() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["CLIENT", "SETNAME", "n"]), Val::ok());
    assert!(matches!(c.cmd(&["HELLO", "3"]), Val::Map(_)));
    assert_eq!(c.cmd(&["CLIENT", "NO-EVICT", "on"]), Val::ok());
    assert_eq!(c.cmd(&["CLIENT", "NO-TOUCH", "on"]), Val::ok());
    assert_eq!(c.cmd(&["CLIENT", "SETINFO", "LIB-NAME", "mylib"]), Val::ok());
    // The reply of RESET comes back even with replies off.
    c.send(&[b"CLIENT", b"REPLY", b"OFF"]);
    assert_eq!(c.cmd_raw(&["RESET"]), b"+RESET\r\n");
    assert_eq!(c.cmd_raw(&["CLIENT", "GETNAME"]), b"$-1\r\n");
    let info = client_info(&mut c);
    assert_eq!(field(&info, "resp"), "2");
    assert_eq!(field(&info, "flags"), "N");
    assert_eq!(field(&info, "db"), "0");
    assert_eq!(field(&info, "lib-name"), "mylib", "library info survives RESET");
    assert_eq!(c.cmd(&["RESET", "x"]), err("ERR wrong number of arguments for 'reset' command"));
}

#[test]
fn reset_ends_monitor_mode() {
    let s = start(&[]);
    let (mut m, mut c) = monitor_and_client(s.port);
    assert_eq!(m.cmd(&["RESET"]), Val::Simple("RESET".into()));
    assert_eq!(c.cmd(&["SET", "k", "v"]), Val::ok());
    // The next thing the former monitor reads is its own reply, not a feed line.
    assert_eq!(m.cmd(&["PING"]), Val::Simple("PONG".into()));
}

#[test]
fn client_name_errors_match_redis() {
    assert_same_as_valkey(&[
        "CLIENT GETNAME",
        "CLIENT SETNAME a\tb",
        "CLIENT SETNAME é",
        "CLIENT SETNAME",
        "CLIENT SETNAME a b",
        "CLIENT SETNAME valid-name",
        "CLIENT GETNAME",
        "CLIENT GETNAME x",
        "CLIENT",
        "CLIENT foo",
        "CLIENT REPLY",
        "CLIENT REPLY foo",
        "CLIENT NO-EVICT maybe",
        "CLIENT PAUSE",
        "CLIENT PAUSE x",
        "CLIENT PAUSE -1",
        "CLIENT PAUSE 10 foo",
        "CLIENT PAUSE 10 write extra",
        "CLIENT PAUSE 10 foo bar",
        "CLIENT PAUSE x foo",
        "CLIENT PAUSE x foo bar",
        "CLIENT PAUSE -1 write extra",
        "CLIENT PAUSE 0",
        "CLIENT UNPAUSE",
        "CLIENT UNPAUSE x",
        "CLIENT KILL",
        "CLIENT KILL 1.2.3.4:5",
        "CLIENT KILL id x",
        "CLIENT KILL id 0",
        "CLIENT KILL id 99999",
        "CLIENT KILL type foo",
        "CLIENT KILL type normal skipme maybe",
        "CLIENT KILL user nobody",
        "CLIENT KILL foo bar",
        "CLIENT KILL id 5 type",
        "CLIENT KILL addr 1.2.3.4:5 laddr 1.1.1.1:1",
        "CLIENT LIST type foo",
        "CLIENT LIST id x",
        "CLIENT LIST id 0",
        "CLIENT LIST id 1 x",
        "CLIENT LIST foo",
        "CLIENT LIST id",
        "CLIENT LIST type normal extra",
        "CLIENT LIST id 99999",
        "CLIENT INFO x",
        "CLIENT ID x",
    ]);
}

#[test]
fn client_setname_empty_clears() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["CLIENT", "SETNAME", "abc"]), Val::ok());
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]), Val::bulk("abc"));
    assert_eq!(c.cmd(&["CLIENT", "SETNAME", ""]), Val::ok());
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]), Val::Nil);
}

const LIST_FIELDS: &[&str] = &[
    "id",
    "addr",
    "laddr",
    "fd",
    "name",
    "age",
    "idle",
    "flags",
    "capa",
    "db",
    "sub",
    "psub",
    "ssub",
    "multi",
    "watch",
    "qbuf",
    "qbuf-free",
    "argv-mem",
    "multi-mem",
    "rbs",
    "rbp",
    "obl",
    "oll",
    "omem",
    "tot-mem",
    "events",
    "cmd",
    "user",
    "redir",
    "resp",
    "lib-name",
    "lib-ver",
    "tot-net-in",
    "tot-net-out",
    "tot-cmds",
];

#[test]
fn client_list_field_order_and_contents() {
    let s = start(&[]);
    let mut a = Client::connect(s.port);
    let mut b = Client::connect(s.port);
    assert_eq!(b.cmd(&["CLIENT", "SETNAME", "other"]), Val::ok());
    let a_id = a.cmd(&["CLIENT", "ID"]).as_int();
    let b_id = b.cmd(&["CLIENT", "ID"]).as_int();
    assert!(b_id > a_id);
    // The start-up check's PING connection closes asynchronously: wait until the server
    // has seen it go (on a loaded machine its FIN can arrive after these commands).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while a.cmd(&["CLIENT", "LIST"]).as_str().lines().count() > 2 {
        assert!(std::time::Instant::now() < deadline, "a third client stays listed");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }

    let raw = a.cmd_raw(&["CLIENT", "LIST"]);
    assert!(raw.starts_with(b"$"), "RESP2 CLIENT LIST is a bulk string");
    let text = a.cmd(&["CLIENT", "LIST"]).as_str();
    assert!(text.ends_with('\n'));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for line in &lines {
        let names: Vec<String> = fields(line).into_iter().map(|(k, _)| k).collect();
        assert_eq!(names, LIST_FIELDS, "{line}");
    }
    // Connection order; the caller shows its running command, the other its last one.
    assert_eq!(field(lines[0], "id"), a_id.to_string());
    assert_eq!(field(lines[0], "cmd"), "client|list");
    assert_eq!(field(lines[0], "name"), "");
    assert_eq!(field(lines[0], "flags"), "N");
    assert_eq!(field(lines[0], "argv-mem"), "10");
    assert_eq!(field(lines[1], "id"), b_id.to_string());
    assert_eq!(field(lines[1], "name"), "other");
    assert_eq!(field(lines[1], "cmd"), "client|id");
    assert_eq!(field(lines[1], "user"), "default");
    assert!(field(lines[1], "addr").starts_with("127.0.0.1:"));
    assert_eq!(field(lines[1], "laddr"), format!("127.0.0.1:{}", s.port));

    // Filters.
    let only_b = a.cmd(&["CLIENT", "LIST", "ID", &b_id.to_string(), "424242"]).as_str();
    assert_eq!(only_b.lines().count(), 1);
    assert_eq!(field(only_b.trim_end(), "id"), b_id.to_string());
    let normal = a.cmd(&["CLIENT", "LIST", "TYPE", "normal"]).as_str();
    assert_eq!(normal.lines().count(), 2);
    assert_eq!(a.cmd(&["CLIENT", "LIST", "TYPE", "pubsub"]).as_str(), "");
    assert_eq!(a.cmd(&["CLIENT", "LIST", "TYPE", "replica"]).as_str(), "");

    // RESP3: verbatim text.
    assert!(matches!(a.cmd(&["HELLO", "3"]), Val::Map(_)));
    assert!(matches!(a.cmd(&["CLIENT", "LIST"]), Val::Verbatim(f, _) if f == "txt"));
    assert!(matches!(a.cmd(&["CLIENT", "INFO"]), Val::Verbatim(f, _) if f == "txt"));
}

#[test]
fn client_info_describes_the_caller() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let id = c.cmd(&["CLIENT", "ID"]).as_int();
    let info = c.cmd(&["CLIENT", "INFO"]).as_str();
    assert!(info.ends_with('\n') && info.lines().count() == 1);
    let names: Vec<String> = fields(info.trim_end()).into_iter().map(|(k, _)| k).collect();
    assert_eq!(names, LIST_FIELDS);
    assert_eq!(field(info.trim_end(), "id"), id.to_string());
    assert_eq!(field(info.trim_end(), "cmd"), "client|info");
    assert_eq!(field(info.trim_end(), "tot-cmds"), "1", "the running command is not counted yet");

    assert_eq!(c.cmd(&["CLIENT", "NO-EVICT", "ON"]), Val::ok());
    assert_eq!(c.cmd(&["CLIENT", "NO-TOUCH", "ON"]), Val::ok());
    assert_eq!(field(&client_info(&mut c), "flags"), "eT");
    assert_eq!(c.cmd(&["CLIENT", "NO-EVICT", "off"]), Val::ok());
    assert_eq!(c.cmd(&["CLIENT", "NO-TOUCH", "off"]), Val::ok());
    assert_eq!(c.cmd(&["CLIENT", "NO-TOUCH", "x"]), err("ERR syntax error"));
    assert_eq!(field(&client_info(&mut c), "flags"), "N");
}

#[test]
fn client_setinfo_sets_library_fields() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["CLIENT", "SETINFO", "LIB-NAME", "redis-py"]), Val::ok());
    assert_eq!(c.cmd(&["CLIENT", "SETINFO", "lib-ver", "5.0.1"]), Val::ok());
    let info = client_info(&mut c);
    assert_eq!(field(&info, "lib-name"), "redis-py");
    assert_eq!(field(&info, "lib-ver"), "5.0.1");
    assert_eq!(
        c.cmd(&["CLIENT", "SETINFO", "lib-name", "a b"]),
        err("ERR lib-name cannot contain spaces, newlines or special characters.")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "SETINFO", "LIB-FOO", "x"]),
        err("ERR Unrecognized option 'LIB-FOO'")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "SETINFO", "lib-name"]),
        err("ERR wrong number of arguments for 'client|setinfo' command")
    );
    assert_eq!(c.cmd(&["CLIENT", "SETINFO", "lib-ver", ""]), Val::ok());
    assert_eq!(field(&client_info(&mut c), "lib-ver"), "");
}

#[test]
fn client_kill_closes_another_connection() {
    let s = start(&[]);
    let mut killer = Client::connect(s.port);
    let mut victim = Client::connect(s.port);
    let mut bystander = Client::connect(s.port);
    let victim_id = victim.cmd(&["CLIENT", "ID"]).as_int();
    assert_eq!(bystander.cmd(&["PING"]), Val::Simple("PONG".into()));
    assert_eq!(killer.cmd(&["CLIENT", "KILL", "ID", &victim_id.to_string()]), Val::Int(1));
    assert!(victim.is_closed());
    assert_eq!(bystander.cmd(&["PING"]), Val::Simple("PONG".into()));
    // Already gone.
    assert_eq!(killer.cmd(&["CLIENT", "KILL", "ID", &victim_id.to_string()]), Val::Int(0));

    // Old form by address.
    let info = client_info(&mut bystander);
    let addr = field(&info, "addr");
    assert_eq!(killer.cmd(&["CLIENT", "KILL", &addr]), Val::ok());
    assert!(bystander.is_closed());
    assert_eq!(killer.cmd(&["CLIENT", "KILL", &addr]), err("ERR No such client"));
}

#[test]
fn client_kill_filters_and_self() {
    let s = start(&[]);
    let mut me = Client::connect(s.port);
    let mut others: Vec<Client> = (0..3).map(|_| Client::connect(s.port)).collect();
    for o in &mut others {
        assert_eq!(o.cmd(&["PING"]), Val::Simple("PONG".into()));
    }
    let laddr = format!("127.0.0.1:{}", s.port);
    // SKIPME defaults to yes: the three others go, the caller stays.
    assert_eq!(me.cmd(&["CLIENT", "KILL", "LADDR", &laddr, "USER", "default"]), Val::Int(3));
    for o in &mut others {
        assert!(o.is_closed());
    }
    assert_eq!(me.cmd(&["CLIENT", "KILL", "TYPE", "normal", "MAXAGE", "100"]), Val::Int(0));
    assert_eq!(
        me.cmd(&["CLIENT", "KILL", "MAXAGE", "0"]),
        err("ERR maxage should be greater than 0")
    );
    assert_eq!(
        me.cmd(&["CLIENT", "KILL", "MAXAGE", "x"]),
        err("ERR maxage is not an integer or out of range")
    );
    // SKIPME no: the caller gets its reply, then the connection closes.
    let id = me.cmd(&["CLIENT", "ID"]).as_int();
    assert_eq!(me.cmd(&["CLIENT", "KILL", "ID", &id.to_string(), "SKIPME", "no"]), Val::Int(1));
    assert!(me.is_closed());
}

#[test]
fn client_reply_off_and_skip() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    // OFF: nothing comes back until ON, whose OK is the next reply.
    c.send(&[b"CLIENT", b"REPLY", b"OFF"]);
    c.send(&[b"SET", b"k", b"1"]);
    c.send(&[b"GET", b"k"]);
    assert_eq!(c.cmd_raw(&["CLIENT", "REPLY", "ON"]), b"+OK\r\n");
    // SKIP: only the next command's reply is dropped.
    c.send(&[b"CLIENT", b"REPLY", b"SKIP"]);
    c.send(&[b"ECHO", b"skipped"]);
    assert_eq!(c.cmd(&["ECHO", "seen"]), Val::bulk("seen"));
    // SKIP while OFF stays OFF.
    c.send(&[b"CLIENT", b"REPLY", b"OFF"]);
    c.send(&[b"CLIENT", b"REPLY", b"SKIP"]);
    c.send(&[b"ECHO", b"a"]);
    c.send(&[b"ECHO", b"b"]);
    assert_eq!(c.cmd_raw(&["CLIENT", "REPLY", "ON"]), b"+OK\r\n");
    assert_eq!(c.cmd(&["GET", "k"]), Val::bulk("1"));
}

#[test]
fn client_pause_write_holds_writes_until_unpause() {
    let s = start(&[]);
    let mut admin = Client::connect(s.port);
    let mut writer = Client::connect(s.port);
    let mut reader = Client::connect(s.port);
    assert_eq!(writer.cmd(&["SET", "k", "before"]), Val::ok());
    assert_eq!(admin.cmd(&["CLIENT", "PAUSE", "100000", "WRITE"]), Val::ok());
    writer.send(&[b"SET", b"k", b"after"]);
    // Reads are served during a WRITE pause, and see the old value.
    assert_eq!(reader.cmd(&["GET", "k"]), Val::bulk("before"));
    writer.stream.get_ref().set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let mut probe = [0u8; 1];
    let held = std::io::Read::read(writer.stream.get_mut(), &mut probe);
    assert!(held.is_err(), "the SET must not be answered while writes are paused");
    assert_eq!(admin.cmd(&["CLIENT", "UNPAUSE"]), Val::ok());
    writer.stream.get_ref().set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert_eq!(writer.read(), Val::ok());
    assert_eq!(reader.cmd(&["GET", "k"]), Val::bulk("after"));
}

#[test]
fn client_pause_expires_by_itself() {
    let s = start(&[]);
    let mut admin = Client::connect(s.port);
    let mut writer = Client::connect(s.port);
    let started = Instant::now();
    assert_eq!(admin.cmd(&["CLIENT", "PAUSE", "300", "WRITE"]), Val::ok());
    assert_eq!(writer.cmd(&["SET", "k", "v"]), Val::ok());
    assert!(started.elapsed() >= Duration::from_millis(250), "SET ran before the pause ended");
}

#[test]
fn client_help_lists_subcommands() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let help = c.cmd(&["CLIENT", "HELP"]).as_array();
    let lines: Vec<String> = help.iter().map(Val::as_str).collect();
    assert!(lines[0].starts_with("CLIENT <subcommand>"));
    for sub in ["KILL <ip:port>", "SETNAME <name>", "NO-TOUCH (ON|OFF)", "HELP"] {
        assert!(lines.iter().any(|l| l == sub), "{sub} missing from {lines:?}");
    }
}

/// Clients whose commands CLIENT PAUSE holds back count in INFO `blocked_clients`, as in
/// Valkey (tools wait for that count before they go on), and leave it when the pause ends.
#[test]
fn paused_clients_count_as_blocked() {
    for server in [start(&[]), common::start_valkey(&[])] {
        let mut admin = Client::connect(server.port);
        let mut held = Client::connect(server.port);
        assert_eq!(admin.cmd(&["CLIENT", "PAUSE", "100000", "WRITE"]), Val::ok());
        held.send(&[b"SET", b"k", b"v"]);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while common::info_int(&mut admin, "clients", "blocked_clients") != 1 {
            assert!(std::time::Instant::now() < deadline, "the paused client is never counted");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(admin.cmd(&["CLIENT", "UNPAUSE"]), Val::ok());
        assert_eq!(held.read(), Val::ok());
        assert_eq!(common::info_int(&mut admin, "clients", "blocked_clients"), 0);
    }
}

// ---------------------------------------------------------------------------------------
// Protected mode, and CONFIG SET bind / port

/// Sends PING and QUIT from the local address `src` to 127.0.0.1:`port`; everything the
/// server answers until it closes (a refused client gets one error line, then the close).
fn ping_from(src: std::net::IpAddr, port: u16) -> String {
    use std::io::Write;
    let mut s = common::connect_from(src, ([127, 0, 0, 1], port).into()).expect("connect");
    let _ = s.write_all(b"PING\r\nQUIT\r\n");
    String::from_utf8_lossy(&common::read_to_close(s)).into_owned()
}

/// One server's side of the protected-mode story. It listens on 127.0.0.1 only, which is
/// not the default `bind`: Valkey protects whatever `bind` says.
fn protected_mode_story(server: &common::Server, remote: std::net::IpAddr) -> Vec<String> {
    let mut c = Client::connect(server.port);
    let stats = |c: &mut Client| {
        let total = common::info_int(c, "stats", "total_connections_received");
        (total, common::info_int(c, "stats", "rejected_connections"))
    };
    let before = stats(&mut c);
    // 127.0.0.0/8 is loopback to Valkey, not only 127.0.0.1.
    let mut story = vec![ping_from([127, 0, 0, 2].into(), server.port)];
    story.push(ping_from(remote, server.port));
    let after = stats(&mut c);
    // A refused client counts as rejected only.
    story.push(format!("connections +{} rejected +{}", after.0 - before.0, after.1 - before.1));
    assert_eq!(c.cmd(&["CONFIG", "SET", "protected-mode", "no"]), Val::ok());
    story.push(ping_from(remote, server.port));
    assert_eq!(c.cmd(&["CONFIG", "SET", "protected-mode", "yes", "requirepass", "pw"]), Val::ok());
    story.push(ping_from(remote, server.port));
    story
}

#[test]
fn protected_mode_refuses_other_addresses_whatever_bind_says() {
    let Some(remote) = common::non_loopback_ip() else {
        eprintln!("skipped: this host has no non-loopback address to connect from");
        return;
    };
    let ours = protected_mode_story(&start(&[]), remote);
    let theirs = protected_mode_story(&start_valkey(&[]), remote);
    assert_eq!(ours, theirs);
    assert_eq!(ours[0], "+PONG\r\n+OK\r\n");
    assert!(ours[1].starts_with("-DENIED Running in protected mode because protected mode is"));
    assert!(ours[1].ends_with("accepting connections from the outside.\r\n"));
    assert_eq!(ours[3], "+PONG\r\n+OK\r\n");
}

/// Whether something listens on `addr`.
fn listens(addr: (&str, u16)) -> bool {
    std::net::TcpStream::connect(addr).is_ok()
}

/// One server's side of CONFIG SET bind / port; port numbers differ between the two
/// servers, so what depends on them is written as facts.
fn rebind_story(server: &common::Server) -> Vec<String> {
    let port = server.port;
    let mut c = Client::connect(port);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port to take");
    let taken_port = taken.local_addr().unwrap().port().to_string();
    let mut story = Vec::new();
    let mut say = |c: &mut Client, args: &[&str]| {
        let reply = c.cmd(args);
        story.push(format!("{args:?} -> {reply:?}").replace(&taken_port, "<taken>"));
    };
    // Refused: no such address; a port another socket holds; each rolls back every value
    // of its CONFIG SET, and the error names the directive being applied.
    say(&mut c, &["CONFIG", "SET", "bind", "999.1.1.1"]);
    say(&mut c, &["CONFIG", "SET", "maxmemory", "10mb", "port", &taken_port]);
    say(&mut c, &["CONFIG", "SET", "port", &taken_port, "bind", "999.1.1.1"]);
    say(&mut c, &["CONFIG", "SET", "bind", "999.1.1.1", "port", &taken_port]);
    say(&mut c, &["CONFIG", "GET", "bind"]);
    say(&mut c, &["CONFIG", "GET", "maxmemory"]);
    story.push(format!(
        "port kept: {}",
        c.cmd(&["CONFIG", "GET", "port"]).as_array()[1].as_str() == port.to_string()
    ));
    story.push(format!("still listening: {}", listens(("127.0.0.1", port))));
    // Accepted: a second address, then a new port; the open connection stays.
    assert_eq!(c.cmd(&["CONFIG", "SET", "bind", "127.0.0.1 ::1"]), Val::ok());
    let v6 = std::net::TcpListener::bind("[::1]:0").is_ok();
    story.push(format!("::1 listening where the host has it: {}", !v6 || listens(("::1", port))));
    let new_port = common::free_port();
    assert_eq!(c.cmd(&["CONFIG", "SET", "port", &new_port.to_string()]), Val::ok());
    story.push(format!("old port closed: {}", !listens(("127.0.0.1", port))));
    let mut fresh = Client::connect(new_port);
    story.push(format!("new port: {:?}", fresh.cmd(&["PING"])));
    story.push(format!("open connection: {:?}", c.cmd(&["PING"])));
    story.push(format!(
        "tcp_port: {}",
        common::info_int(&mut c, "server", "tcp_port") == new_port as i64
    ));
    story.push(format!("{:?}", c.cmd(&["CONFIG", "GET", "bind"])));
    // Shut down through the new port: the harness only knows the old one.
    fresh.send(&[b"SHUTDOWN", b"NOSAVE"]);
    story
}

#[test]
fn config_set_bind_and_port_reopen_the_listeners_or_roll_back() {
    let ours = rebind_story(&start(&[]));
    let theirs = rebind_story(&start_valkey(&[]));
    assert_eq!(ours, theirs);
    let failed = |arg: &str, why: &str| {
        format!("ERR CONFIG SET failed (possibly related to argument '{arg}') - {why}")
    };
    let bind = failed("bind", "Failed to bind to specified addresses.");
    let port = failed("port", "Unable to listen on this port. Check server logs.");
    for (line, want) in [(0, &bind), (1, &port), (2, &port), (3, &bind)] {
        assert!(ours[line].contains(want.as_str()), "{}", ours[line]);
    }
    assert!(ours.iter().all(|l| !l.ends_with("false")), "{ours:#?}");
}

/// CLIENT KILL ID takes several ids, up to the next option, as Valkey 9.1 (replies read from
/// it: the count killed, `syntax error` for a first id that is no number, the client-id error
/// for one below 1).
#[test]
fn client_kill_id_takes_several_ids() {
    let s = start(&[]);
    let mut conns: Vec<Client> = (0..4).map(|_| Client::connect(s.port)).collect();
    let ids: Vec<String> =
        conns.iter_mut().map(|c| c.cmd(&["CLIENT", "ID"]).as_int().to_string()).collect();
    let a = &mut conns[0];
    assert_eq!(a.cmd(&["CLIENT", "KILL", "ID", &ids[1], &ids[2]]), common::int(2));
    assert_eq!(a.cmd(&["CLIENT", "KILL", "ID", &ids[3], "999", "SKIPME", "yes"]), common::int(1));
    assert_eq!(a.cmd(&["CLIENT", "KILL", "ID", "999", "998"]), common::int(0));
    assert_eq!(a.cmd(&["CLIENT", "KILL", "ID", "x"]), common::err("ERR syntax error"));
    assert_eq!(a.cmd(&["CLIENT", "KILL", "ID", &ids[0], "x"]), common::err("ERR syntax error"));
    let not_positive = common::err("ERR client-id should be greater than 0");
    assert_eq!(a.cmd(&["CLIENT", "KILL", "ID", "0"]), not_positive);
    assert_eq!(a.cmd(&["CLIENT", "KILL", "ID", &ids[0], "-1"]), not_positive);
    assert_eq!(a.cmd(&["PING"]), Val::Simple("PONG".into()), "the caller was skipped");
}

#[test]
fn extended_redis_compatibility_names_redis_as_valkey_does() {
    let mut pair = Pair::start(2, &[]);
    let hello_head =
        |c: &mut Client| -> Vec<Val> { c.cmd(&["HELLO", "2"]).as_array()[..4].to_vec() };
    for setting in ["yes", "no", "yes"] {
        pair.same_lines(&[&format!("CONFIG SET extended-redis-compatibility {setting}")]);
        assert_eq!(hello_head(&mut pair.a), hello_head(&mut pair.b), "{setting}");
        pair.same_lines(&["LOLWUT VERSION 1", "CONFIG GET extended-redis-compatibility"]);
        let caption = |c: &mut Client| {
            c.cmd(&["LOLWUT"])
                .as_str()
                .lines()
                .last()
                .map(|l| l.rsplit_once(". ").map_or(String::new(), |(_, v)| v.to_string()))
        };
        assert_eq!(caption(&mut pair.a), caption(&mut pair.b), "{setting}");
    }
    // Given at start-up too.
    let s = start(&["--extended-redis-compatibility", "yes"]);
    let head = hello_head(&mut Client::connect(s.port));
    assert_eq!(
        head,
        vec![Val::bulk("server"), Val::bulk("redis"), Val::bulk("version"), Val::bulk("7.2.4")]
    );
}

/// CLIENT LIST and CLIENT KILL with Valkey 9's filters, against the oracle: the same three
/// clients on each server (the caller; `bee` with a library, in db 3; `cee` subscribed),
/// then every filter's matches compared as ids relative to the caller's, and its errors
/// compared as they are.
#[test]
fn client_filters_match_valkey() {
    let servers = [start(&[]), start_valkey(&[])];
    let mut callers = Vec::new();
    let mut others = Vec::new();
    let mut bases = Vec::new();
    for port in servers.iter().map(|s| s.port) {
        let mut me = Client::connect(port);
        let mut b = Client::connect(port);
        let mut c = Client::connect(port);
        for cmd in [
            &["CLIENT", "SETNAME", "bee"][..],
            &["CLIENT", "SETINFO", "LIB-NAME", "libb"],
            &["CLIENT", "SETINFO", "LIB-VER", "1.0"],
            &["SELECT", "3"],
        ] {
            assert_eq!(b.cmd(cmd), Val::ok());
        }
        assert_eq!(c.cmd(&["CLIENT", "SETNAME", "cee"]), Val::ok());
        c.send(&[b"SUBSCRIBE", b"ch"]);
        c.read();
        let Val::Int(id) = me.cmd(&["CLIENT", "ID"]) else { panic!("CLIENT ID") };
        bases.push(id);
        callers.push(me);
        others.push((b, c));
    }
    let (mut theirs, mut ours) = (callers.pop().unwrap(), callers.pop().unwrap());
    // Matches as ids relative to the caller's (ids differ between the servers), or the error.
    let relative = |reply: Val, base: i64| match reply {
        Val::Err(e) => e,
        other => other
            .as_str()
            .lines()
            .map(|l| (field(l, "id").parse::<i64>().unwrap() - base).to_string())
            .collect::<Vec<_>>()
            .join(","),
    };
    let filters: &[&[&str]] = &[
        &["name", "bee"],
        &["name", ""],
        &["not-name", "bee"],
        &["not-name", ""],
        &["idle", "x"],
        &["idle", "-1"],
        &["flags", "P"],
        &["flags", "PN"],
        &["flags", "N"],
        &["flags", ""],
        &["flags", "NN"],
        &["not-flags", "N"],
        &["flags", "ZN"],
        &["not-flags", "Z"],
        &["lib-name", "libb"],
        &["lib-name", ""],
        &["not-lib-name", ""],
        &["lib-ver", "1.0"],
        &["db", "3"],
        &["db", "x"],
        &["db", "-1"],
        &["db", "16"],
        &["not-db", "3"],
        &["ip", "127.0.0.1"],
        &["ip", "127.0.0.1:1"],
        &["not-ip", "127.0.0.1"],
        &["capa", "r"],
        &["capa", "x"],
        &["capa", ""],
        &["not-capa", "r"],
        &["not-capa", "x"],
        &["not-id", "x"],
        &["not-id", "0"],
        &["not-type", "pubsub"],
        &["not-type", "bad"],
        &["not-type", "replica"],
        &["type", "pubsub", "type", "normal"],
        &["name", "bee", "name", "cee"],
        &["skipme", "yes"],
        &["skipme", "maybe"],
        &["name", "bee", "skipme", "no"],
        &["not-user", "default"],
        &["not-user", "nobody"],
        &["user", "nobody"],
        &["addr", "1.2.3.4:5"],
        &["not-addr", "1.2.3.4:5"],
        &["not-laddr", "x"],
        &["maxage", "x"],
        &["maxage", "0"],
        &["maxage", "100"],
        &["not-maxage", "1"],
        &["not-skipme", "yes"],
        &["name"],
        &["id", "5", "x"],
    ];
    for f in filters {
        let list = |c: &mut Client| {
            let mut args = vec!["CLIENT", "LIST"];
            args.extend_from_slice(f);
            c.cmd(&args)
        };
        let (a, b) = (list(&mut ours), list(&mut theirs));
        let (a, b) = (relative(a, bases[0]), relative(b, bases[1]));
        assert_eq!(a, b, "CLIENT LIST {f:?} (left: ferrokey, right: valkey)");
    }
    // Ids are relative too: the others are the caller's id + 1 and + 2.
    for (i, (c, base)) in [(&mut ours, bases[0]), (&mut theirs, bases[1])].into_iter().enumerate() {
        let (b, c_id) = ((base + 1).to_string(), (base + 2).to_string());
        let listed = c.cmd(&["CLIENT", "LIST", "id", &c_id, &b, "id", &base.to_string()]);
        assert_eq!(relative(listed, base), "0,1,2", "server {i}: sorted by id");
        let listed = c.cmd(&["CLIENT", "LIST", "not-id", &b, "not-id", &base.to_string()]);
        assert_eq!(relative(listed, base), "2", "server {i}");
    }
    // KILL: the same filters pick the same clients; the caller is skipped by default.
    for f in [&["flags", "Z"][..], &["idle", "0"], &["db", "x"], &["capa", "r"], &["flags", "N"]] {
        let kill = |c: &mut Client| {
            let mut args = vec!["CLIENT", "KILL"];
            args.extend_from_slice(f);
            c.cmd(&args)
        };
        let (a, b) = (kill(&mut ours), kill(&mut theirs));
        assert_eq!(a, b, "CLIENT KILL {f:?} (left: ferrokey, right: valkey)");
    }
    let remaining = |c: &mut Client, base| relative(c.cmd(&["CLIENT", "LIST"]), base);
    assert_eq!(remaining(&mut ours, bases[0]), remaining(&mut theirs, bases[1]));
    assert_eq!(remaining(&mut ours, bases[0]), "0,2", "flags N killed bee, not the caller");
}
