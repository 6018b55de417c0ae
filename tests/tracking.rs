//! Client-side caching over TCP: CLIENT TRACKING in its modes (default, OPTIN, OPTOUT, BCAST
//! with prefixes, NOLOOP, REDIRECT), the invalidation messages (RESP3 pushes, `message` on
//! `__redis__:invalidate` for a RESP2 subscriber, null after a flush, expired keys, a broken
//! redirect), CLIENT CACHING / GETREDIR / TRACKINGINFO, every error text, CLIENT LIST flags,
//! INFO fields, and tracking-table-max-keys.
//!
//! Most tests are differential: a scenario runs on ferrokey and on redis-server 7.0 with the
//! same named clients, and what each client receives per step must be byte-identical.
//! Each step sends its commands and then `PING <marker>` in one write, and reads everything
//! up to the marker's reply: invalidations caused by another client's earlier step are
//! already queued by then (non-BCAST ones during that command, BCAST ones before the server
//! wrote that command's reply), so the split is deterministic.

mod common;

use std::time::Duration;

use common::{info_int, parse_val, start, start_valkey, Client, Server, Val};

/// A named client of one server.
struct Named {
    name: String,
    client: Client,
    id: u64,
}

/// One server and its named clients.
struct Side {
    _server: Server,
    port: u16,
    clients: Vec<Named>,
    marker: u64,
}

impl Side {
    fn new(server: Server, names: &[(&str, u8)]) -> Side {
        let port = server.port;
        let mut side = Side { _server: server, port, clients: Vec::new(), marker: 0 };
        for &(name, proto) in names {
            side.connect(name, proto);
        }
        side
    }

    fn connect(&mut self, name: &str, proto: u8) {
        let mut c = Client::connect(self.port);
        if proto == 3 {
            let hello = c.cmd(&["HELLO", "3"]);
            assert!(matches!(hello, Val::Map(_)), "HELLO 3: {hello:?}");
        }
        let id = c.cmd(&["CLIENT", "ID"]).as_int() as u64;
        self.clients.retain(|n| n.name != name);
        self.clients.push(Named { name: name.to_string(), client: c, id });
    }

    fn named(&mut self, name: &str) -> &mut Client {
        &mut self.clients.iter_mut().find(|n| n.name == name).expect("known client").client
    }

    /// `$name` in a word is replaced by that client's id.
    fn substitute(&self, word: &str) -> String {
        match word.strip_prefix('$') {
            Some(name) => match self.clients.iter().find(|n| n.name == name) {
                Some(n) => n.id.to_string(),
                None => word.to_string(),
            },
            None => word.to_string(),
        }
    }

    /// Runs one step: `who` sends `cmds` (and the marker PING) in one write; returns every
    /// byte it received before the marker's reply.
    fn step(&mut self, who: &str, cmds: &[&str]) -> String {
        self.marker += 1;
        let marker = format!("sync-{}", self.marker);
        let mut bytes = Vec::new();
        for cmd in cmds {
            let words: Vec<String> = cmd.split(' ').map(|w| self.substitute(w)).collect();
            let args: Vec<&[u8]> =
                words.iter().map(|w| if w == "\"\"" { &b""[..] } else { w.as_bytes() }).collect();
            bytes.extend(Client::encode(&args));
        }
        bytes.extend(Client::encode(&[b"PING", marker.as_bytes()]));
        let c = self.named(who);
        c.send_raw(&bytes);
        let mut got = Vec::new();
        loop {
            let raw = c.read_raw();
            let v = parse_val(&mut &raw[..]);
            let is_marker = match &v {
                Val::Bulk(m) => m == marker.as_bytes(),
                Val::Array(a) | Val::Push(a) => a.get(1) == Some(&Val::bulk(&marker)),
                _ => false,
            };
            if is_marker {
                break;
            }
            got.extend(raw);
        }
        String::from_utf8_lossy(&got).into_owned()
    }

    /// A step whose client closes (QUIT): one reply, no marker.
    fn quit(&mut self, who: &str) -> String {
        let c = self.named(who);
        let r = String::from_utf8_lossy(&c.cmd_raw(&["QUIT"])).into_owned();
        assert!(c.is_closed(), "{who} not closed after QUIT");
        self.clients.retain(|n| n.name != who);
        r
    }
}

/// A step of a scenario: `who` sends the commands (separated by ` ; `, pipelined), or
/// `who QUIT!` to close that client, or `who +3` / `who +2` to connect it.
fn run_step(side: &mut Side, line: &str) -> String {
    let (who, rest) = line.split_once(' ').expect("step: client name and commands");
    match rest {
        "QUIT!" => side.quit(who),
        "+2" | "+3" => {
            side.connect(who, if rest == "+3" { 3 } else { 2 });
            String::new()
        }
        _ => {
            let cmds: Vec<&str> = rest.split(" ; ").collect();
            side.step(who, &cmds)
        }
    }
}

/// The next client id of the server on `port` (a connection that asks, then closes).
fn next_id(port: u16) -> u64 {
    Client::connect(port).cmd(&["CLIENT", "ID"]).as_int() as u64 + 1
}

/// Ferrokey and redis-server with the clients `names` (name, RESP version) connected in
/// the same order and with the same ids on both (the server that is behind gets throwaway
/// connections first), so that ids in commands and replies compare as they are.
fn pair(config: &[&str], names: &[(&str, u8)]) -> (Side, Side) {
    let (ours, theirs) = (start(config), start_valkey(config));
    let (mut a, mut b) = (next_id(ours.port), next_id(theirs.port));
    while a < b {
        a = next_id(ours.port);
    }
    while b < a {
        b = next_id(theirs.port);
    }
    let (ours, theirs) = (Side::new(ours, names), Side::new(theirs, names));
    let ids = |s: &Side| s.clients.iter().map(|n| n.id).collect::<Vec<_>>();
    assert_eq!(ids(&ours), ids(&theirs), "client ids out of step");
    (ours, theirs)
}

/// Runs `script` on ferrokey and on redis-server (both started with `config`) with the
/// clients `names` (name, RESP version), asserting that every step gives each side the
/// same bytes.
fn same_as_valkey(names: &[(&str, u8)], config: &[&str], script: &[&str]) {
    let (mut ours, mut theirs) = pair(config, names);
    for line in script {
        let (a, b) = (run_step(&mut ours, line), run_step(&mut theirs, line));
        assert_eq!(a, b, "step {line:?} differs (left: ferrokey, right: redis-server)");
    }
}

const PUSH_K: &str = ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n";

#[test]
fn resp3_default_mode_invalidates_read_keys() {
    same_as_valkey(
        &[("a", 3), ("b", 2)],
        &[],
        &[
            "a CLIENT TRACKING ON",
            "a GET k",
            "b SET k 1",
            // Read again, changed again: one message per read.
            "a GET k",
            "b SET k 2",
            "b SET k 3",
            "a PING",
            "a MGET k x y ; STRLEN z",
            "b MSET z 1 k 4",
            "a PING",
            // A failed read is still a read.
            "b HSET h f v",
            "a GET h",
            "b HSET h f w",
            "a PING",
            // The client's own write: the invalidation follows its reply.
            "a GET k",
            "a SET k 5",
            // Pipelined: each invalidation right after the reply of the command that caused it.
            "a GET k ; SET k 6 ; GET k ; INCR k ; GET k",
            "b DEL k",
            "a PING",
            // Keys of other databases share the table.
            "a SELECT 1 ; GET k",
            "b SET k 8",
            "a PING",
            "a CLIENT TRACKING OFF",
            "a GET k",
            "b SET k 9",
            "a PING",
        ],
    );
}

#[test]
fn first_push_has_the_exact_bytes() {
    let s = start(&[]);
    let (mut a, mut b) = (Client::connect(s.port), Client::connect(s.port));
    assert!(matches!(a.cmd(&["HELLO", "3"]), Val::Map(_)));
    assert_eq!(a.cmd(&["CLIENT", "TRACKING", "ON"]), Val::ok());
    assert_eq!(a.cmd(&["GET", "k"]), Val::Nil);
    assert_eq!(b.cmd(&["SET", "k", "v"]), Val::ok());
    assert_eq!(String::from_utf8(a.read_raw()).unwrap(), PUSH_K);
}

#[test]
fn optin_and_optout_follow_client_caching() {
    same_as_valkey(
        &[("a", 3), ("b", 2)],
        &[],
        &[
            "a CLIENT TRACKING ON OPTIN",
            "a GET k1",
            "a CLIENT CACHING YES ; GET k2",
            // CLIENT subcommands keep the setting; any other command ends it.
            "a CLIENT CACHING YES ; CLIENT ID ; GET k3",
            "a CLIENT CACHING YES ; PING ; GET k4",
            "a CLIENT TRACKINGINFO",
            "a CLIENT CACHING YES ; CLIENT TRACKINGINFO",
            "b MSET k1 1 k2 2 k3 3 k4 4",
            "a PING",
            "a CLIENT TRACKING OFF",
            "a CLIENT TRACKING ON OPTOUT",
            "a GET k1",
            "a CLIENT CACHING NO ; GET k2",
            "a GET k3",
            "a CLIENT CACHING NO ; CLIENT TRACKINGINFO",
            "b MSET k1 1 k2 2 k3 3 k4 4",
            "a PING",
        ],
    );
}

#[test]
fn noloop_skips_own_changes() {
    same_as_valkey(
        &[("a", 3), ("b", 2)],
        &[],
        &[
            "a CLIENT TRACKING ON NOLOOP",
            "a GET k1 ; GET k2",
            "a SET k1 x",
            "b SET k2 x",
            "a PING",
            // The key left the table when a changed it: b's change is not announced.
            "b SET k1 y",
            "a PING",
            "a CLIENT TRACKINGINFO",
        ],
    );
}

#[test]
fn bcast_announces_changes_under_prefixes() {
    same_as_valkey(
        &[("a", 3), ("b", 2)],
        &[],
        &[
            "a CLIENT TRACKING ON BCAST PREFIX user: PREFIX obj:",
            "b MSET user:1 a obj:2 b other c user:3 d",
            "a PING",
            "b SET user:1 x",
            "b SET obj:9 y",
            "b DEL user:1 user:3",
            "a PING",
            // Reads are not tracked in BCAST mode.
            "a GET other",
            "b SET other z",
            "a PING",
            // Its own change too (no NOLOOP), after the reply.
            "a SET user:5 z",
            // Re-enabled with no PREFIX: the empty prefix joins the others, so keys under
            // user: are announced twice; NOLOOP hides a's own changes.
            "a CLIENT TRACKING ON BCAST NOLOOP",
            "a SET user:6 z",
            "b SET user:7 z",
            "a PING",
            "a CLIENT TRACKINGINFO",
        ],
    );
}

#[test]
fn redirect_to_a_resp2_subscriber() {
    same_as_valkey(
        &[("s", 2), ("a", 2), ("b", 2), ("x", 3)],
        &[],
        &[
            "s SUBSCRIBE __redis__:invalidate",
            "a CLIENT TRACKING ON REDIRECT $s",
            "a CLIENT GETREDIR",
            "a GET k ; GET j",
            "b SET k 1",
            "s PING",
            "a GET k",
            "b FLUSHALL",
            "s PING",
            // A RESP3 client in BCAST mode redirecting to the subscriber.
            "x CLIENT TRACKING ON BCAST REDIRECT $s",
            "b SET q 1",
            "s PING",
            "x PING",
        ],
    );
}

#[test]
fn redirect_targets_that_cannot_receive() {
    same_as_valkey(
        &[("t3", 3), ("t2", 2), ("a", 2), ("c", 2), ("b", 2)],
        &[],
        &[
            // A RESP3 target gets pushes without subscribing.
            "a CLIENT TRACKING ON REDIRECT $t3",
            "a GET k",
            "b SET k 1",
            "t3 PING",
            // A RESP2 target that is not subscribed gets nothing; nor does a RESP2 client
            // without a redirect.
            "c CLIENT TRACKING ON REDIRECT $t2",
            "c GET k",
            "a GET k",
            "b SET k 2",
            "t2 PING",
            "c PING",
            "t3 PING",
            // Redirect to oneself.
            "t3 CLIENT TRACKING ON REDIRECT $t3",
            "t3 GET k",
            "b SET k 3",
            "t3 PING",
        ],
    );
}

#[test]
fn broken_redirect_is_reported() {
    same_as_valkey(
        &[("s", 2), ("a", 3), ("b", 2)],
        &[],
        &[
            "a CLIENT TRACKING ON REDIRECT $s",
            "a GET k ; GET j",
            "s QUIT!",
            "a CLIENT TRACKINGINFO",
            "b MSET k 1 j 2",
            "a PING",
            "a CLIENT TRACKINGINFO ; CLIENT GETREDIR",
            "a GET k",
            "a SET k 2",
            "b FLUSHALL",
            "a PING",
            // A new ON clears the flag.
            "a CLIENT TRACKING ON",
            "a CLIENT TRACKINGINFO",
        ],
    );
}

#[test]
fn flushes_invalidate_everything() {
    same_as_valkey(
        &[("a", 3), ("c", 3), ("b", 2)],
        &[],
        &[
            "a CLIENT TRACKING ON",
            "c CLIENT TRACKING ON BCAST PREFIX x",
            "a GET k",
            "a FLUSHALL",
            "c PING",
            "b SET k 1",
            "a GET k",
            "b FLUSHDB",
            "a PING",
            "c PING",
            "b SELECT 1 ; FLUSHDB ASYNC",
            "a PING",
            // SWAPDB does not invalidate.
            "a GET k",
            "b SWAPDB 0 1",
            "a PING",
            "c PING",
        ],
    );
}

#[test]
fn expired_keys_invalidate() {
    let config = ["--enable-debug-command", "yes"];
    let names = [("a", 3), ("b", 2)];
    let (mut ours, mut theirs) = pair(&config, &names);
    for side in [&mut ours, &mut theirs] {
        run_step(side, "b DEBUG SET-ACTIVE-EXPIRE 0");
        run_step(side, "a CLIENT TRACKING ON");
        run_step(side, "b SET k v PX 150 ; SET j v PX 150");
        run_step(side, "a GET k ; GET j");
    }
    std::thread::sleep(Duration::from_millis(200));
    // b's reads expire the keys (lazily): a hears of both; b's replies are the same.
    for line in ["b GET k ; EXISTS j", "a PING"] {
        let (x, y) = (run_step(&mut ours, line), run_step(&mut theirs, line));
        assert_eq!(x, y, "step {line:?}");
    }
    assert_eq!(run_step(&mut ours, "a PING"), "+PONG\r\n");
}

#[test]
fn active_expiry_invalidates() {
    let s = start(&[]);
    let (mut a, mut b) = (Client::connect(s.port), Client::connect(s.port));
    assert!(matches!(a.cmd(&["HELLO", "3"]), Val::Map(_)));
    assert_eq!(a.cmd(&["CLIENT", "TRACKING", "ON"]), Val::ok());
    assert_eq!(b.cmd(&["SET", "k", "v", "PX", "200"]), Val::ok());
    assert_eq!(a.cmd(&["GET", "k"]), Val::bulk("v"));
    // Nobody touches k: the server's own expiry cycle removes it and tells a.
    assert_eq!(String::from_utf8(a.read_raw()).unwrap(), PUSH_K);
    assert_eq!(info_int(&mut b, "stats", "tracking_total_keys"), 0);
}

#[test]
fn error_texts() {
    same_as_valkey(
        &[("a", 2), ("b", 2), ("c", 2), ("d", 2), ("e", 2)],
        &[],
        &[
            "a CLIENT TRACKING ON REDIRECT 99999",
            "a CLIENT TRACKING ON REDIRECT 0",
            "a CLIENT TRACKING ON REDIRECT -1",
            "a CLIENT TRACKING ON REDIRECT x",
            "a CLIENT TRACKING ON REDIRECT $b REDIRECT $b",
            "a CLIENT TRACKING ON REDIRECT $b FOO",
            "a CLIENT TRACKING MAYBE REDIRECT 99999",
            "a CLIENT TRACKING OFF REDIRECT 99999",
            "a CLIENT TRACKING ON PREFIX a",
            "a CLIENT TRACKING ON OPTIN OPTOUT PREFIX a",
            "a CLIENT TRACKING ON BCAST OPTIN",
            "a CLIENT TRACKING ON BCAST OPTOUT OPTIN",
            "a CLIENT TRACKING ON OPTIN OPTOUT",
            "a CLIENT TRACKING ON FOO",
            "a CLIENT TRACKING MAYBE",
            "a CLIENT TRACKING ON PREFIX",
            "a CLIENT TRACKING ON REDIRECT",
            "a CLIENT TRACKING",
            "a CLIENT CACHING YES",
            "a CLIENT CACHING MAYBE",
            "a CLIENT CACHING",
            "a CLIENT CACHING YES NO",
            "a CLIENT GETREDIR x",
            "a CLIENT TRACKINGINFO x",
            "a CLIENT TRACKING OFF PREFIX a",
            "a CLIENT TRACKINGINFO",
            // Errors that depend on the current mode.
            "b CLIENT TRACKING ON",
            "b CLIENT CACHING YES",
            "b CLIENT CACHING NO",
            "b CLIENT CACHING MAYBE",
            "b CLIENT TRACKING ON BCAST",
            "c CLIENT TRACKING ON OPTIN",
            "c CLIENT TRACKING ON OPTOUT",
            "c CLIENT CACHING NO",
            "c CLIENT TRACKING ON BCAST",
            "d CLIENT TRACKING ON OPTOUT",
            "d CLIENT CACHING YES",
            "d CLIENT TRACKING ON OPTIN",
            "d CLIENT TRACKING ON",
            "d CLIENT TRACKINGINFO",
            "e CLIENT TRACKING ON BCAST PREFIX a PREFIX ab",
            "e CLIENT TRACKING ON BCAST PREFIX ab PREFIX a",
            "e CLIENT TRACKING ON BCAST PREFIX a PREFIX b PREFIX a",
            "e CLIENT TRACKING ON BCAST PREFIX a PREFIX b",
            "e CLIENT TRACKING ON BCAST PREFIX a PREFIX c",
            "e CLIENT TRACKING ON BCAST PREFIX bx",
            "e CLIENT TRACKING ON BCAST PREFIX b",
            "e CLIENT TRACKING ON BCAST PREFIX c PREFIX d",
            "e CLIENT TRACKING ON OPTIN",
            "e CLIENT TRACKING ON",
            "e CLIENT TRACKINGINFO",
            "e CLIENT TRACKING OFF",
            "e CLIENT TRACKINGINFO",
        ],
    );
}

/// Redis 7.0 answers an overlap among the given prefixes after the first one with the error
/// and then `+OK` (and enables tracking); ferrokey answers the error only and changes nothing.
#[test]
fn overlapping_given_prefixes_are_refused_once() {
    let s = start(&[]);
    let mut a = Client::connect(s.port);
    let r =
        a.cmd(&["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a", "PREFIX", "b", "PREFIX", "bc"]);
    assert_eq!(
        r,
        Val::Err(
            "ERR Prefix 'b' overlaps with another provided prefix 'bc'. Prefixes for a single \
             client must not overlap."
                .into()
        )
    );
    assert_eq!(a.cmd(&["CLIENT", "GETREDIR"]), Val::Int(-1));
    assert_eq!(info_int(&mut a, "stats", "tracking_total_prefixes"), 0);
}

#[test]
fn trackinginfo_and_getredir_in_both_protocols() {
    for proto in [2, 3] {
        same_as_valkey(
            &[("a", proto), ("t", 2)],
            &[],
            &[
                "a CLIENT TRACKINGINFO ; CLIENT GETREDIR",
                "a CLIENT TRACKING ON REDIRECT $t NOLOOP",
                "a CLIENT TRACKINGINFO ; CLIENT GETREDIR",
                "a CLIENT TRACKING ON OPTIN",
                "a CLIENT CACHING YES ; CLIENT TRACKINGINFO ; CLIENT GETREDIR",
                "a CLIENT TRACKING OFF",
                "a CLIENT TRACKING ON BCAST PREFIX z PREFIX m",
                "a CLIENT TRACKINGINFO",
                "a RESET ; CLIENT TRACKINGINFO",
            ],
        );
    }
}

/// The `flags=` and `redir=` fields of the client's own CLIENT INFO line.
fn info_fields(c: &mut Client) -> (String, String) {
    let line = c.cmd(&["CLIENT", "INFO"]).as_str();
    let field = |name: &str| {
        line.split(' ')
            .find_map(|f| f.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {line}"))
            .trim()
            .to_string()
    };
    (field("flags="), field("redir="))
}

#[test]
fn client_list_flags_and_redir() {
    let steps: &[&[&str]] = &[
        &[],
        &["CLIENT", "TRACKING", "ON"],
        &["CLIENT", "TRACKING", "ON", "REDIRECT", "$t"],
        &["KILL-T"],
        &["GET", "k"],
        &["SET", "k", "1"],
        &["CLIENT", "TRACKING", "OFF"],
        &["CLIENT", "TRACKING", "ON", "BCAST"],
        &["RESET"],
    ];
    let mut results = Vec::new();
    for server in [start(&[]), start_valkey(&[])] {
        let mut a = Client::connect(server.port);
        assert!(matches!(a.cmd(&["HELLO", "3"]), Val::Map(_)));
        let mut t = Client::connect(server.port);
        let t_id = t.cmd(&["CLIENT", "ID"]).as_int().to_string();
        let mut b = Client::connect(server.port);
        let mut seen = Vec::new();
        for step in steps {
            match *step {
                [] => {}
                ["KILL-T"] => {
                    assert_eq!(b.cmd(&["CLIENT", "KILL", "ID", &t_id]), Val::Int(1));
                }
                ["SET", ..] => {
                    assert_eq!(b.cmd(step), Val::ok());
                    // a is told its redirect is broken.
                    let push = a.read();
                    assert!(
                        matches!(&push, Val::Push(v) if v[0] == Val::bulk("tracking-redir-broken"))
                    );
                }
                _ => {
                    let args: Vec<&str> =
                        step.iter().map(|w| if *w == "$t" { &t_id[..] } else { *w }).collect();
                    a.cmd(&args);
                }
            }
            let (flags, redir) = info_fields(&mut a);
            seen.push(format!("{flags} {}", if redir == t_id { "$t" } else { &redir }));
        }
        results.push(seen);
    }
    assert_eq!(results[0], results[1], "left: ferrokey, right: redis-server");
    assert_eq!(results[0][5], "tR $t");
}

#[test]
fn info_counts_clients_keys_items_and_prefixes() {
    let mut got = Vec::new();
    for server in [start(&[]), start_valkey(&[])] {
        let (mut a, mut b, mut c) = (
            Client::connect(server.port),
            Client::connect(server.port),
            Client::connect(server.port),
        );
        let counts = |x: &mut Client| {
            let mut v: Vec<i64> =
                ["tracking_total_keys", "tracking_total_items", "tracking_total_prefixes"]
                    .iter()
                    .map(|f| info_int(x, "stats", f))
                    .collect();
            v.push(info_int(x, "clients", "tracking_clients"));
            v
        };
        let mut seen = vec![counts(&mut c)];
        a.cmd(&["CLIENT", "TRACKING", "ON"]);
        b.cmd(&["CLIENT", "TRACKING", "ON"]);
        a.cmd(&["MGET", "k1", "k2", "k3"]);
        b.cmd(&["MGET", "k2", "k3", "k4"]);
        seen.push(counts(&mut c));
        c.cmd(&["SET", "k2", "x"]);
        seen.push(counts(&mut c));
        // Tracking off: ids stay in the table until their keys change.
        a.cmd(&["CLIENT", "TRACKING", "OFF"]);
        seen.push(counts(&mut c));
        c.cmd(&["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "p", "PREFIX", "q"]);
        a.cmd(&["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "q"]);
        seen.push(counts(&mut c));
        c.cmd(&["CLIENT", "TRACKING", "OFF"]);
        seen.push(counts(&mut b));
        assert_eq!(a.cmd(&["QUIT"]), Val::ok());
        assert!(a.is_closed());
        seen.push(counts(&mut c));
        c.cmd(&["SET", "k1", "x"]);
        seen.push(counts(&mut c));
        b.cmd(&["FLUSHALL"]);
        seen.push(counts(&mut c));
        got.push(seen);
    }
    assert_eq!(got[0], got[1], "left: ferrokey, right: redis-server");
}

#[test]
fn reset_and_disconnect_end_tracking() {
    let s = start(&[]);
    let (mut a, mut b, mut c) =
        (Client::connect(s.port), Client::connect(s.port), Client::connect(s.port));
    assert!(matches!(a.cmd(&["HELLO", "3"]), Val::Map(_)));
    assert_eq!(a.cmd(&["CLIENT", "TRACKING", "ON", "BCAST"]), Val::ok());
    assert_eq!(b.cmd(&["CLIENT", "TRACKING", "ON"]), Val::ok());
    assert_eq!(info_int(&mut c, "clients", "tracking_clients"), 2);
    assert_eq!(a.cmd(&["RESET"]), Val::Simple("RESET".into()));
    assert_eq!(info_int(&mut c, "clients", "tracking_clients"), 1);
    assert_eq!(info_int(&mut c, "stats", "tracking_total_prefixes"), 0);
    // After RESET a is a RESP2 client without tracking: nothing arrives.
    assert_eq!(c.cmd(&["SET", "k", "1"]), Val::ok());
    assert_eq!(a.cmd(&["PING"]), Val::Simple("PONG".into()));
    drop(b);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while info_int(&mut c, "clients", "tracking_clients") != 0 {
        assert!(std::time::Instant::now() < deadline, "closed client still tracking");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// tracking-table-max-keys: before each command, random tracked keys are invalidated (sent
/// as if they changed) until the table is within the limit again.
#[test]
fn table_limit_evicts_random_keys_with_invalidations() {
    let s = start(&["--tracking-table-max-keys", "3"]);
    let (mut a, mut c) = (Client::connect(s.port), Client::connect(s.port));
    assert!(matches!(a.cmd(&["HELLO", "3"]), Val::Map(_)));
    assert_eq!(a.cmd(&["CLIENT", "TRACKING", "ON"]), Val::ok());
    let keys: Vec<String> = (0..10).map(|i| format!("key:{i}")).collect();
    let mut invalidated: Vec<String> = Vec::new();
    for k in &keys {
        // Any invalidation comes before the reply (the limit runs before the command).
        a.send(&[b"GET", k.as_bytes()]);
        loop {
            match a.read() {
                Val::Push(v) => {
                    assert_eq!(v[0], Val::bulk("invalidate"));
                    for key in v[1].as_array() {
                        invalidated.push(key.as_str());
                    }
                }
                Val::Nil => break,
                other => panic!("unexpected {other:?}"),
            }
        }
    }
    // The last GET added its key after the limit ran: one over until the next command,
    // whoever sends it.
    assert_eq!(invalidated.len(), 6, "{invalidated:?}");
    assert_eq!(info_int(&mut c, "stats", "tracking_total_keys"), 3);
    a.send(&[b"PING"]);
    loop {
        match a.read() {
            Val::Push(v) => invalidated.push(v[1].as_array()[0].as_str()),
            Val::Simple(s) if s == "PONG" => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(invalidated.len(), 7, "{invalidated:?}");
    let mut unique = invalidated.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 7);
    assert!(unique.iter().all(|k| keys.contains(k)));
    // The three keys still tracked are invalidated when they change; the evicted ones not.
    let mut msg = vec![&b"MSET"[..]];
    for k in &keys {
        msg.extend([k.as_bytes(), b"v"]);
    }
    assert_eq!(c.cmd_b(&msg), Val::ok());
    let mut rest = Vec::new();
    while rest.len() < 3 {
        let v = a.read().as_array();
        rest.push(v[1].as_array()[0].as_str());
    }
    assert!(rest.iter().all(|k| !invalidated.contains(k)), "{rest:?} {invalidated:?}");
    assert_eq!(a.cmd(&["PING"]), Val::Simple("PONG".into()));
    assert_eq!(info_int(&mut c, "stats", "tracking_total_keys"), 0);
}

/// tracking-table-max-keys 0 means no limit; CONFIG SET lowers it at run time.
#[test]
fn table_limit_follows_config_set() {
    let s = start(&["--tracking-table-max-keys", "0"]);
    let (mut a, mut c) = (Client::connect(s.port), Client::connect(s.port));
    assert!(matches!(a.cmd(&["HELLO", "3"]), Val::Map(_)));
    assert_eq!(a.cmd(&["CLIENT", "TRACKING", "ON"]), Val::ok());
    let keys: Vec<String> = (0..200).map(|i| format!("k{i}")).collect();
    let mut mget: Vec<&[u8]> = vec![b"MGET"];
    mget.extend(keys.iter().map(|k| k.as_bytes()));
    assert_eq!(a.cmd_b(&mget).as_array().len(), 200);
    assert_eq!(info_int(&mut c, "stats", "tracking_total_keys"), 200);
    assert_eq!(c.cmd(&["CONFIG", "SET", "tracking-table-max-keys", "10"]), Val::ok());
    // Each command first invalidates up to 100 random keys per round that ended over the
    // limit (1 + rounds so far): 100 now, the other 90 at the next command.
    assert_eq!(info_int(&mut c, "stats", "tracking_total_keys"), 100);
    assert_eq!(info_int(&mut c, "stats", "tracking_total_keys"), 10);
    let mut n = 0;
    while n < 190 {
        let v = a.read().as_array();
        assert_eq!(v[0], Val::bulk("invalidate"));
        n += v[1].as_array().len();
    }
    assert_eq!(n, 190);
    assert_eq!(a.cmd(&["PING"]), Val::Simple("PONG".into()));
}

#[test]
fn transactions_send_invalidations_after_exec() {
    same_as_valkey(
        &[("a", 3), ("b", 2)],
        &[],
        &[
            "a CLIENT TRACKING ON",
            "a GET k ; GET j",
            // Inside EXEC the client changes keys it tracks: the messages follow EXEC's reply.
            "a MULTI ; SET k 1 ; GET k ; SET j 2 ; EXEC",
            "b SET k 2",
            "a PING",
            // OPTIN: CLIENT CACHING YES covers the whole transaction.
            "a CLIENT TRACKING OFF ; CLIENT TRACKING ON OPTIN",
            "a CLIENT CACHING YES ; MULTI ; GET x ; GET y ; EXEC ; GET z",
            "b MSET x 1 y 2 z 3",
            "a PING",
            "a CLIENT CACHING YES ; MULTI ; PING ; EXEC ; GET x",
            "b SET x 4",
            "a PING",
            // FLUSHALL inside EXEC: one null after the reply.
            "a CLIENT CACHING YES ; GET x",
            "a MULTI ; FLUSHALL ; EXEC",
        ],
    );
}

/// The limit runs before EXEC as a whole, never between the replies inside it.
#[test]
fn table_limit_keeps_exec_replies_whole() {
    let s = start(&["--tracking-table-max-keys", "1"]);
    let mut a = Client::connect(s.port);
    assert!(matches!(a.cmd(&["HELLO", "3"]), Val::Map(_)));
    assert_eq!(a.cmd(&["CLIENT", "TRACKING", "ON"]), Val::ok());
    assert_eq!(a.cmd(&["MGET", "a", "b", "c"]).as_array().len(), 3);
    let mut bytes = Vec::new();
    for cmd in [&["MULTI"][..], &["GET", "x"], &["GET", "y"], &["GET", "z"], &["EXEC"]] {
        let args: Vec<&[u8]> = cmd.iter().map(|w| w.as_bytes()).collect();
        bytes.extend(Client::encode(&args));
    }
    a.send_raw(&bytes);
    let mut pushes = 0;
    let mut replies = Vec::new();
    while replies.len() < 5 {
        match a.read() {
            Val::Push(v) => {
                assert_eq!(v[0], Val::bulk("invalidate"));
                pushes += 1;
            }
            other => replies.push(other),
        }
    }
    assert_eq!(replies[4], Val::Array(vec![Val::Nil, Val::Nil, Val::Nil]));
    // Two of a, b, c were evicted before MULTI ran; x, y, z joined inside EXEC.
    assert_eq!(pushes, 2);
    a.send(&[b"PING"]);
    let mut before_pong = 0;
    while a.read() != Val::Simple("PONG".into()) {
        before_pong += 1;
    }
    assert_eq!(before_pong, 3);
}

/// A `CONFIG SET tracking-table-max-keys` that lowers the limit acts even when no command
/// follows it (the time events enforce it too, as in Valkey's cron): the client waits for
/// the invalidation of the evicted key and sends nothing else. Valkey's own test suite does
/// exactly this, and hung on ferrokey before.
#[test]
fn a_lowered_table_limit_acts_without_another_command() {
    let s = start(&[]);
    let (mut a, mut redir) = (Client::connect(s.port), Client::connect(s.port));
    let redir_id = redir.cmd(&["CLIENT", "ID"]).as_int().to_string();
    assert_eq!(redir.cmd(&["SUBSCRIBE", "__redis__:invalidate"]).as_array().len(), 3);
    assert_eq!(a.cmd(&["CLIENT", "TRACKING", "ON", "REDIRECT", &redir_id, "NOLOOP"]), Val::ok());
    assert_eq!(a.cmd(&["MSET", "key1", "1", "key2", "2"]), Val::ok());
    assert_eq!(a.cmd(&["MGET", "key1", "key2"]).as_array().len(), 2);
    assert_eq!(a.cmd(&["CONFIG", "SET", "tracking-table-max-keys", "1"]), Val::ok());
    // Only the redirect client reads from here on.
    let msg = redir.read().as_array();
    assert_eq!(msg[0], Val::bulk("message"));
    let keys = msg[2].as_array();
    assert_eq!(keys.len(), 1, "{msg:?}");
    assert!(keys[0] == Val::bulk("key1") || keys[0] == Val::bulk("key2"), "{msg:?}");
}

/// A tracking client that read 70,000 keys with one MGET is told of a change to the last of
/// them (key positions were once 16-bit, and keys past 65,535 were never tracked).
#[test]
fn keys_past_65535_of_one_command_are_tracked() {
    let s = start(&[]);
    let (mut a, mut c) = (Client::connect(s.port), Client::connect(s.port));
    assert!(matches!(a.cmd(&["HELLO", "3"]), Val::Map(_)));
    assert_eq!(a.cmd(&["CLIENT", "TRACKING", "ON"]), Val::ok());
    let keys: Vec<String> = (0..70_000).map(|i| format!("k{i}")).collect();
    let mut argv: Vec<&[u8]> = vec![b"MGET"];
    argv.extend(keys.iter().map(|k| k.as_bytes()));
    assert_eq!(a.cmd_b(&argv).as_array().len(), keys.len());
    assert_eq!(c.cmd(&["SET", "k69999", "v"]), Val::ok());
    match a.read() {
        Val::Push(v) => assert_eq!(v[1].as_array(), vec![Val::bulk("k69999")]),
        other => panic!("no invalidation: {other:?}"),
    }
}
