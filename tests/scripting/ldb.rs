//! The Lua debugger against Valkey 9.1, byte for byte: SCRIPT DEBUG's replies and errors,
//! whole stepping sessions (help, step, list, whole, print, eval, the redis command,
//! breakpoints, trace, maxlen, abort, server.debug and server.breakpoint, the commands a
//! script may not run as the debugger logs them, malformed input, the end of the session)
//! in both modes, SYNC keeping the script's changes and YES throwing them away, and
//! redis-cli's `--ldb` and `--ldb-sync-mode` driving a session. Then what only ferrokey can
//! be asked (Valkey 9.1.2 crashes on a debugger command split across reads, and never stops
//! a runaway script in a session): the input limit, the time limit, and a client leaving
//! mid-session while the server goes on serving others.

use crate::common::{self, run_tool, start, start_valkey, Client};

/// A RESP command.
fn enc(args: &[&str]) -> Vec<u8> {
    let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
    Client::encode(&a)
}

/// Sends each chunk on one connection and reads one reply after it; a reply ending the
/// session (`<endsession>`) is followed by the script's reply and the connection's close,
/// which are recorded too. Returns the replies as text.
fn talk(port: u16, chunks: &[Vec<u8>]) -> Vec<String> {
    let mut c = Client::connect(port);
    let mut out = Vec::new();
    for chunk in chunks {
        c.send_raw(chunk);
        let reply = c.read_raw();
        let ended = reply.ends_with(b"+<endsession>\r\n");
        out.push(String::from_utf8_lossy(&reply).into_owned());
        if ended {
            out.push(String::from_utf8_lossy(&c.read_raw()).into_owned());
            out.push(format!("closed: {}", c.is_closed()));
            break;
        }
    }
    out
}

/// The same conversation with ferrokey and with the oracle (each started with `args`);
/// then `after` on a new connection to each.
fn same_talk(args: &[&str], chunks: &[Vec<u8>], after: &[Vec<u8>]) {
    let ours = start(args);
    let theirs = start_valkey(args);
    let (a, b) = (talk(ours.port, chunks), talk(theirs.port, chunks));
    assert_eq!(a, b, "the session differs (ours, then Valkey's)");
    let (a, b) = (talk(ours.port, after), talk(theirs.port, after));
    assert_eq!(a, b, "after the session (ours, then Valkey's)");
}

#[test]
fn script_debug_replies_and_errors_as_valkey() {
    let lines: &[&[&str]] = &[
        &["SCRIPT", "DEBUG"],
        &["SCRIPT", "DEBUG", "foo"],
        &["SCRIPT", "DEBUG", "yes", "python"],
        &["SCRIPT", "DEBUG", "foo", "python"],
        &["SCRIPT", "Debug", "yes", "lua", "x"],
        &["SCRIPT", "DEBUG", "yes", "LUA"],
        &["SCRIPT", "DEBUG", "sync"],
        &["SCRIPT", "DEBUG", "NO", "lua"],
        &["SCRIPT", "HELP"],
        &["COMMAND", "INFO", "script|debug"],
        &["COMMAND", "DOCS", "script|debug"],
        &["MULTI"],
        &["SCRIPT", "DEBUG", "YES"],
        &["EXEC"],
    ];
    let mut chunks: Vec<Vec<u8>> = lines.iter().map(|l| enc(l)).collect();
    // In a pipeline (a reply is pending), before the other checks.
    for tail in [&["SCRIPT", "DEBUG", "YES"][..], &["SCRIPT", "DEBUG", "foo"]] {
        let mut both = enc(&["PING"]);
        both.extend_from_slice(&enc(tail));
        chunks.push(both);
        chunks.push(b"".to_vec());
    }
    // EVALSHA is refused in debugging mode (a sha that cannot exist first); FCALL is not
    // debugged.
    for line in [
        &["SCRIPT", "DEBUG", "SYNC"][..],
        &["EVALSHA", "abc", "0"],
        &["EVALSHA", &"a".repeat(40), "0"],
        &["FCALL", "nosuch", "0"],
        &["SCRIPT", "DEBUG", "NO"],
        &["EVAL", "return 1", "0"],
    ] {
        chunks.push(enc(line));
    }
    same_talk(&[], &chunks, &[]);
}

/// A script that uses what the debugger shows, and a session walking through it.
const SCRIPT: &str = "local a = 1\nlocal t = {1,2,'x',{y=true}}\nredis.call('set', KEYS[1], ARGV[1])\nredis.debug('hello', a, t, nil)\nredis.breakpoint()\nlocal b = redis.call('get', KEYS[1])\nlocal c = {k='v'}\nreturn {a, b}\n";

fn stepping_session(mode: &str) -> Vec<Vec<u8>> {
    let steps: &[&[&str]] = &[
        &["h"],
        &["s"],
        &["l"],
        &["l", "3", "1"],
        &["l", "-1", "0"],
        &["list", "1", "x"],
        &["w"],
        &["p"],
        &["p", "t"],
        &["p", "KEYS"],
        &["print", "ARGV"],
        &["p", "nope"],
        &["e", "a+41"],
        &["e", "x", "="],
        &["e", "error('boom')"],
        &["eval", "{1,{2,{3}},nil,true,1.5,'q'}"],
        &["e", "local z = 1"],
        &["r", "set", "z", "1"],
        &["redis", "get", "k"],
        &["valkey", "incr", "n"],
        &["server", "hgetall", "z"],
        &["r", "nosuchcmd", "x"],
        &["r", "get"],
        &["r", "eval", "return 1", "0"],
        &["r", "object", "foo"],
        &["r", "rpush", "l", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "m"],
        &["b"],
        &["b", "7"],
        &["b", "99"],
        &["b", "x"],
        &["b"],
        &["b", "-7"],
        &["b", "-7"],
        &["b", "7", "8"],
        &["b", "0"],
        &["b", "8"],
        &["t"],
        &["m"],
        &["max"],
        &["maxlen", "10"],
        &["r", "lrange", "l", "0", "-1"],
        &["maxlen", "0"],
        &["maxlen", "-1"],
        &["maxlen", "1", "2"],
        &["zzz"],
        &["r"],
        &["s", "x"],
        &["PING"],
        &["s"],
        &["n"],
        &["c"],
        &["p"],
        &["c"],
        &["c"],
    ];
    let mut chunks = vec![enc(&["SCRIPT", "DEBUG", mode]), enc(&["EVAL", SCRIPT, "1", "k", "v1"])];
    chunks.extend(steps.iter().map(|s| enc(s)));
    chunks
}

#[test]
fn a_synchronous_session_as_valkey_keeps_its_changes() {
    let after = [enc(&["MGET", "k", "z", "n"]), enc(&["LRANGE", "l", "0", "-1"])];
    same_talk(&[], &stepping_session("SYNC"), &after);
}

#[test]
fn a_forked_session_as_valkey_throws_its_changes_away() {
    let after = [enc(&["MGET", "k", "z", "n"]), enc(&["DBSIZE"]), enc(&["PING"])];
    same_talk(&[], &stepping_session("YES"), &after);
}

#[test]
fn refused_commands_and_errors_are_logged_as_valkey() {
    let script = "#!lua flags=no-writes\nredis.pcall('incr','str')\nredis.pcall('object','foo')\nredis.pcall('get','str','x')\nredis.pcall()\nredis.pcall({})\nredis.pcall('nosuch')\nlocal t = redis.pcall('incr','str')\nreturn redis.call('set','x','y')";
    for mode in ["SYNC", "YES"] {
        let mut chunks = vec![enc(&["SCRIPT", "DEBUG", mode]), enc(&["EVAL", script, "0"])];
        chunks.extend((0..8).map(|_| enc(&["s"])));
        same_talk(&[], &chunks, &[]);
    }
}

#[test]
fn a_session_ends_as_valkey_ends_it() {
    let endings: &[(&str, Vec<u8>)] = &[
        ("local a = 1\nreturn a", enc(&["a"])),
        ("local a = 1\nerror('oops')\nreturn a", enc(&["c"])),
        ("return redis.call('incr','cnt')", enc(&["c"])),
        ("return 1", b"garbage\r\n".to_vec()),
        ("return 1", b"*1\r\n$0\r\n\r\n".to_vec()),
        ("return 1", b"*2000\r\n".to_vec()),
        ("return 1", b"PING\r\n".to_vec()),
    ];
    for mode in ["SYNC", "YES"] {
        for (script, step) in endings {
            let chunks =
                [enc(&["SCRIPT", "DEBUG", mode]), enc(&["EVAL", script, "0"]), step.clone()];
            same_talk(&[], &chunks, &[enc(&["GET", "cnt"])]);
        }
        // The call's own errors come inside the session.
        for eval in [
            &["EVAL", "return 1", "x"][..],
            &["EVAL", "return 1", "2", "a"],
            &["EVAL", "retur n 1", "0"],
            &["EVAL_RO", "return redis.call('set','a','b')", "0"],
        ] {
            same_talk(&[], &[enc(&["SCRIPT", "DEBUG", mode]), enc(eval), enc(&["c"])], &[]);
        }
    }
}

/// A run that does not stop for `busy-reply-threshold` (5 s when 0) stops by itself, as
/// Valkey's debugger was written to do (`timeout reached, infinite loop?`), so that a
/// runaway script can still be aborted. Valkey 9.1.2 never stops there (its server loops
/// for good, unreachable), so only ferrokey is asked.
#[test]
fn a_run_past_the_time_limit_stops() {
    let script = "local i = 0\nwhile true do i = i + 1 end";
    let chunks =
        [enc(&["SCRIPT", "DEBUG", "SYNC"]), enc(&["EVAL", script, "0"]), enc(&["c"]), enc(&["a"])];
    let s = start(&["--busy-reply-threshold", "100"]);
    let got = talk(s.port, &chunks);
    assert_eq!(
        got[2],
        "*2\r\n+* Stopped at 2, stop reason = timeout reached, infinite loop?\r\n\
         +-> 2   while true do i = i + 1 end\r\n"
    );
    assert_eq!(got[3], "*1\r\n+<endsession>\r\n");
    assert_eq!(got[4], "-ERR script aborted for user request script: on @user_script:2.\r\n");
    assert_eq!(Client::connect(s.port).cmd(&["PING"]), common::simple("PONG"));
}

/// The stdout of redis-cli driving a session of `script` with `stdin` as the user's input.
fn redis_cli_session(port: u16, mode: &str, script: &str, stdin: &str) -> String {
    let file = common::unique_dir("ldb").join("script.lua");
    std::fs::write(&file, script).expect("write the script");
    let port = port.to_string();
    let path = file.to_string_lossy().into_owned();
    let out = run_tool(
        "redis-cli",
        &["-p", &port, mode, "--eval", &path, "k1", ",", "v1"],
        stdin.as_bytes(),
    );
    let _ = std::fs::remove_dir_all(file.parent().expect("a directory"));
    assert!(out.status.success(), "redis-cli {mode}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn redis_cli_drives_a_session_as_with_valkey() {
    let script =
        "local a = redis.call('set', KEYS[1], ARGV[1])\nreturn redis.call('get', KEYS[1])\n";
    let ours = start(&[]);
    let theirs = start_valkey(&[]);
    for (mode, input, kept) in
        [("--ldb", "s\np\nc\n", false), ("--ldb-sync-mode", "s\nw\nc\n", true)]
    {
        let a = redis_cli_session(ours.port, mode, script, input);
        let b = redis_cli_session(theirs.port, mode, script, input);
        assert_eq!(a, b, "redis-cli {mode}: ours, then Valkey's");
        assert!(a.contains("<reply> \"+OK\"") && a.contains("\"v1\""), "{a}");
        let got = Client::connect(ours.port).cmd(&["GET", "k1"]);
        assert_eq!(got == common::bulk("v1"), kept, "{mode}: {got:?}");
    }
}

#[test]
fn the_debuggers_input_is_bounded() {
    let s = start(&[]);
    for mode in ["SYNC", "YES"] {
        let mut c = Client::connect(s.port);
        assert_eq!(c.cmd(&["SCRIPT", "DEBUG", mode]), common::simple("OK"));
        c.send_raw(&enc(&["EVAL", "return 1", "0"]));
        assert!(String::from_utf8_lossy(&c.read_raw()).contains("Stopped at 1"));
        // An argument length that never ends: more than 1 MiB waits for its line end. Just
        // one byte more than the limit is sent, all of which the server reads before it
        // gives up (unread bytes would make the close a reset).
        let mut endless = b"*1\r\n$1".to_vec();
        endless.resize((1 << 20) + 1, b'1');
        c.send_raw(&endless);
        assert_eq!(c.read_raw(), b"*1\r\n+<endsession>\r\n");
        assert_eq!(c.read_raw(), b"-ERR max client buffer reached script: on @user_script:1.\r\n");
        assert!(c.is_closed());
        assert_eq!(Client::connect(s.port).cmd(&["PING"]), common::simple("PONG"));
    }
}

#[test]
fn a_client_leaving_mid_session_leaves_the_server_serving() {
    let s = start(&[]);
    let script =
        "redis.call('set','dk','1')\nredis.breakpoint()\nredis.call('incr','dk')\nreturn 1";
    for mode in ["SYNC", "YES"] {
        let mut other = Client::connect(s.port);
        let mut c = Client::connect(s.port);
        assert_eq!(c.cmd(&["SCRIPT", "DEBUG", mode]), common::simple("OK"));
        c.send_raw(&enc(&["EVAL", script, "0"]));
        assert!(String::from_utf8_lossy(&c.read_raw()).contains("Stopped at 1"));
        drop(c);
        // A synchronous session runs the script to its end without stopping; a forked one
        // ends with its child.
        assert_eq!(other.cmd(&["PING"]), common::simple("PONG"));
        let dk = other.cmd(&["GET", "dk"]);
        if mode == "SYNC" {
            assert_eq!(dk, common::bulk("2"));
            other.cmd(&["DEL", "dk"]);
        } else {
            assert_eq!(dk, common::Val::Nil);
        }
        assert_eq!(Client::connect(s.port).cmd(&["SET", "x", "y"]), common::simple("OK"));
    }
}
