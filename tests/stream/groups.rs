//! Consumer groups and reads against a real Valkey 9.1: XGROUP, XREADGROUP, XACK,
//! XPENDING, XCLAIM, XAUTOCLAIM, XREAD and XINFO with their options and errors in both
//! protocols (times, which differ by the milliseconds between the two servers, compared
//! after zeroing them), blocked readers woken by entries, a deleted key, a destroyed group
//! or a replaced value, and the forms replicas receive (a ferrokey primary feeding a
//! ferrokey and a Valkey replica).

use super::wait_for;
use crate::common::diff::{words, Pair};
use crate::common::{self, start, start_valkey, Client, Val};

/// Replies without times: byte for byte Valkey's.
const GROUP_COMMANDS: &[&str] = &[
    "XADD s 1-1 a 1",
    "XADD s 2-1 b 2",
    "XADD s 3-1 c 3",
    "XGROUP CREATE s g 0",
    "XGROUP CREATE s g 0",
    "XGROUP CREATE s g2 $ ENTRIESREAD 3",
    "XGROUP CREATE s g3 1-*",
    "XGROUP CREATE nokey g 0",
    "XGROUP CREATE nokey g 0 MKSTREAM",
    "XLEN nokey",
    "XGROUP CREATE s g4 0 MKSTREAM ENTRIESREAD -2",
    "XGROUP SETID s g 0 ENTRIESREAD",
    "XGROUP SETID s nog 0",
    "XGROUP CREATECONSUMER s g c0",
    "XGROUP CREATECONSUMER s g c0",
    "XREADGROUP GROUP g c1 COUNT 1 STREAMS s >",
    "XREADGROUP GROUP g c1 STREAMS s >",
    "XREADGROUP GROUP g c1 STREAMS s >",
    "XREADGROUP GROUP g c1 STREAMS s 0",
    "XREADGROUP GROUP g c2 STREAMS s 0",
    "XREADGROUP GROUP g c1 STREAMS s $",
    "XREADGROUP GROUP g c1 STREAMS s +",
    "XREADGROUP GROUP nog c1 STREAMS s >",
    "XREADGROUP GROUP g c1 STREAMS s nokey > >",
    "XREADGROUP GROUP g c1 STREAMS s",
    "XREADGROUP GROUP g c1 STREAMS s > x",
    "XREADGROUP c1 STREAMS s >",
    "XREADGROUP STREAMS s >",
    "XREAD GROUP g c STREAMS s 0",
    "XREAD NOACK STREAMS s 0",
    "XREAD STREAMS s 0",
    "XREAD COUNT 2 STREAMS s 0",
    "XREAD STREAMS s nokey 0 0",
    "XREAD STREAMS s $",
    "XREAD STREAMS s +",
    "XREAD STREAMS s >",
    "XREAD STREAMS s 1-*",
    "XREAD BLOCK -1 STREAMS s 0",
    "XREAD BLOCK x STREAMS s 0",
    "XREAD COUNT -5 STREAMS s 0",
    "XPENDING s g",
    "XPENDING s g - +",
    "XPENDING s nog",
    "XPENDING nokey g",
    "XACK s g 1-1 9-9",
    "XACK s g bad",
    "XACK nokey g bad",
    "XACK s nog bad",
    "XPENDING s g",
    "XCLAIM s g c2 0 2-1 JUSTID",
    "XCLAIM s g c2 x 2-1",
    "XCLAIM s nog c2 0 2-1",
    "XCLAIM s g c2 0 2-1 FOO",
    "XCLAIM s g c2 0 2-1 IDLE x",
    "XCLAIM s g c2 0 2-1 RETRYCOUNT 7 JUSTID",
    "XCLAIM s g c3 0 1-1 FORCE JUSTID",
    "XCLAIM s g c3 0 1-1 FORCE",
    "XCLAIM s g c3 0 9-9 FORCE",
    "XCLAIM s g c3 0 3-1 LASTID 5-0",
    "XINFO GROUPS s",
    "XPENDING s g",
    "XAUTOCLAIM s g c4 0 0",
    "XAUTOCLAIM s g c4 0 0 COUNT 1",
    "XAUTOCLAIM s g c4 0 0 COUNT 0",
    "XAUTOCLAIM s g c4 0 0 JUSTID",
    "XAUTOCLAIM s g c4 0 (0-0 JUSTID FOO",
    "XAUTOCLAIM s g c4 x 0",
    "XAUTOCLAIM s nog c4 0 0",
    "XDEL s 2-1",
    "XAUTOCLAIM s g c5 0 0 JUSTID",
    "XPENDING s g",
    "XREADGROUP GROUP g c4 STREAMS s 0",
    "XGROUP DELCONSUMER s g c4",
    "XGROUP DELCONSUMER s g c4",
    "XPENDING s g",
    "XGROUP DESTROY s g",
    "XGROUP DESTROY s g",
    "XGROUP DESTROY nokey g",
    "SET str x",
    "XREAD STREAMS str 0",
    "XREADGROUP GROUP g c STREAMS str >",
    "XACK str g 1-1",
    "XPENDING str g",
    "XCLAIM str g c 0 1-1",
    "XGROUP CREATE str g 0",
    "XGROUP HELP",
    "XINFO STREAM nokey",
    "XGROUP CREATE e g 0 MKSTREAM",
    "XINFO STREAM e",
    "XINFO GROUPS e",
    "CONFIG SET stream-node-max-entries 3",
    "XADD s 1-1 a 1",
    "XADD s 1-2 b 2",
    "XADD s 1-3 c 3",
    "XADD s 1-4 c 3",
    "XADD s 2-4 c 3",
    "XADD s 300-4 c 3",
    "XADD s 70000-4 c 3",
    "XADD s 70000-5 c 3",
    "XADD s 70000-6 c 3",
    "XADD s 70000-7 c 3",
    "XADD s 99999999999-7 c 3",
    "XINFO STREAM s",
    "XGROUP CREATE s g 0",
    "XGROUP CREATE s g2 $",
    "XINFO GROUPS s",
    "XGROUP CREATECONSUMER s g c0",
    "XREADGROUP GROUP g c1 COUNT 2 STREAMS s >",
    "XREADGROUP GROUP g c2 COUNT 3 NOACK STREAMS s >",
    "XINFO GROUPS s",
    "XDEL s 1-1",
    "XINFO GROUPS s",
    "XINFO STREAM s",
    "XTRIM s MAXLEN 5",
    "XINFO STREAM s",
    "XINFO GROUPS s",
    "XINFO STREAM s FULL COUNT",
    "XINFO STREAM s FULLX",
    "XINFO CONSUMERS s nog",
    "XINFO CONSUMERS s g x",
    "XINFO GROUPS s x",
    "XINFO FOO s",
    "XINFO HELP",
    "XINFO",
    "SET str x",
    "XINFO STREAM str",
    "XINFO GROUPS str",
    "XPENDING s g IDLE 0 - +",
    "XPENDING s g x + 10",
    "XPENDING s g - + x",
    "XPENDING s g - + 10 nobody",
    "XINFO STREAM s FULL X 0",
    "DEL s",
    "XGROUP CREATE s g $ MKSTREAM",
    "XREAD STREAMS s +",
    "XADD s 5-5 a 1",
    "XREAD STREAMS s +",
    "XADD s 6-0 b 1",
    "XREAD STREAMS s +",
    "XDEL s 6-0",
    "XREAD STREAMS s +",
    "XREAD COUNT 5 STREAMS s +",
    "XDEL s 5-5",
    "XREAD STREAMS s +",
    "XREAD BLOCK 10 STREAMS s +",
    // No blocking inside a script: the null reply at once.
    "EVAL return(server.call('XREAD','BLOCK','0','STREAMS','s','$')) 0",
    "EVAL return(server.call('XREADGROUP','GROUP','g','c9','BLOCK','0','STREAMS','s','>')) 0",
    // Groups go with the value.
    "COPY s s2",
    "XINFO GROUPS s2",
    "RENAME s2 s3",
    "XINFO GROUPS s3",
    "TYPE s3",
    "OBJECT ENCODING s3",
];

/// Lines whose replies hold times: idle times and unix times are zeroed before comparing.
const TIMED: &[&str] = &[
    "XADD t 1-1 a 1",
    "XADD t 2-1 b 2",
    "XADD t 3-1 c 3",
    "XGROUP CREATE t g 0",
    "XGROUP CREATECONSUMER t g idle",
    "XREADGROUP GROUP g c1 COUNT 2 STREAMS t >",
    "XREADGROUP GROUP g c2 STREAMS t >",
    "XPENDING t g - + 10",
    "XPENDING t g - + 10 c1",
    "XPENDING t g (1-1 + 10",
    "XPENDING t g - (3-1 1",
    "XPENDING t g IDLE 0 - + 10",
    "XPENDING t g IDLE 100000 - + 10",
    "XCLAIM t g c3 0 1-1 RETRYCOUNT 5",
    "XCLAIM t g c3 0 2-1 IDLE 5000 JUSTID",
    "XPENDING t g - + 10",
    "XPENDING t g IDLE 4000 - + 10",
    "XINFO CONSUMERS t g",
    "XINFO STREAM t FULL",
    "XINFO STREAM t FULL COUNT 1",
    "XINFO STREAM t FULL COUNT 0",
    "XINFO STREAM t FULL COUNT -1",
];

/// Zeroes unix times (ms) and the small idle times of XPENDING rows and XINFO CONSUMERS.
fn without_times(v: Val) -> Val {
    match v {
        Val::Int(n) if n > 1_000_000_000_000 => Val::Int(0),
        Val::Array(items) if items.len() == 4 && matches!(items[2], Val::Int(_)) => {
            let mut items: Vec<Val> = items.into_iter().map(without_times).collect();
            if let Val::Int(n) = items[2] {
                assert!((0..1000).contains(&n) || n >= 4000, "idle {n}");
                items[2] = Val::Int(n / 1000);
            }
            Val::Array(items)
        }
        Val::Array(items) => {
            // RESP2 maps are flat arrays: a small time follows its name.
            let mut items: Vec<Val> = items.into_iter().map(without_times).collect();
            for i in 1..items.len() {
                let timed =
                    matches!(&items[i - 1], Val::Bulk(k) if k == b"idle" || k == b"inactive");
                if let (true, Val::Int(n)) = (timed, &items[i]) {
                    items[i] = Val::Int((*n).min(0));
                }
            }
            Val::Array(items)
        }
        Val::Map(kv) => Val::Map(
            kv.into_iter()
                .map(|(k, v)| match (k.as_str().as_str(), v) {
                    ("idle" | "inactive", Val::Int(n)) => (k, Val::Int(n.min(0))),
                    (_, v) => (k, without_times(v)),
                })
                .collect(),
        ),
        v => v,
    }
}

#[test]
fn group_commands_reply_as_valkey() {
    for proto in [2, 3] {
        let mut p = Pair::start(proto, &[]);
        p.same_lines(GROUP_COMMANDS);
        for line in TIMED {
            p.same_normalized(line, without_times);
        }
    }
}

/// Readers blocked on streams, on both servers: what each is answered and when.
fn blocked_readers(port: u16) -> Vec<Val> {
    let (mut a, mut b, mut c) =
        (Client::connect(port), Client::connect(port), Client::connect(port));
    let pause = || std::thread::sleep(std::time::Duration::from_millis(100));
    let mut out = Vec::new();
    b.cmd(&["XADD", "s", "1-1", "f", "v"]);
    // `$`: entries after the last one when the command first ran.
    a.send(&[b"XREAD", b"BLOCK", b"0", b"STREAMS", b"s", b"$"]);
    pause();
    b.cmd(&["XADD", "s", "2-1", "g", "w"]);
    out.push(a.read());
    out.push(a.cmd(&["XREAD", "BLOCK", "50", "STREAMS", "s", "$"]));
    // One XADD serves an XREAD (on one of two keys) and an XREADGROUP.
    b.cmd(&["XGROUP", "CREATE", "s", "grp", "$"]);
    a.send(&[b"XREAD", b"BLOCK", b"0", b"STREAMS", b"s", b"nokey", b"$", b"0"]);
    c.send(&[b"XREADGROUP", b"GROUP", b"grp", b"c1", b"BLOCK", b"0", b"STREAMS", b"s", b">"]);
    pause();
    b.cmd(&["XADD", "s", "3-1", "h", "x"]);
    out.push(a.read());
    out.push(c.read());
    // A group reader learns that the key, the group or the type is gone.
    let group_read: [&[u8]; 9] =
        [b"XREADGROUP", b"GROUP", b"grp", b"c1", b"BLOCK", b"0", b"STREAMS", b"s", b">"];
    c.send(&group_read);
    pause();
    b.cmd(&["DEL", "s"]);
    out.push(c.read());
    b.cmd(&["XGROUP", "CREATE", "s", "grp", "$", "MKSTREAM"]);
    c.send(&group_read);
    pause();
    b.cmd(&["XGROUP", "DESTROY", "s", "grp"]);
    out.push(c.read());
    b.cmd(&["XGROUP", "CREATE", "s", "grp", "$"]);
    c.send(&group_read);
    pause();
    b.cmd(&["SET", "s", "str"]);
    out.push(c.read());
    // No blocking inside MULTI.
    a.cmd(&["MULTI"]);
    a.cmd(&["XREAD", "BLOCK", "0", "STREAMS", "s2", "$"]);
    out.push(a.cmd(&["EXEC"]));
    // Two consumers waiting: one entry each, in arrival order.
    b.cmd(&["DEL", "s"]);
    b.cmd(&["XGROUP", "CREATE", "s", "grp", "$", "MKSTREAM"]);
    c.send(&words("XREADGROUP GROUP grp c1 BLOCK 0 COUNT 1 STREAMS s >"));
    pause();
    a.send(&words("XREADGROUP GROUP grp c2 BLOCK 0 COUNT 1 STREAMS s >"));
    pause();
    b.cmd(&["XADD", "s", "5-1", "a", "1"]);
    out.push(c.read());
    b.cmd(&["XADD", "s", "6-1", "a", "1"]);
    out.push(a.read());
    out.push(b.cmd(&["XPENDING", "s", "grp"]));
    out.push(b.cmd(&["XINFO", "GROUPS", "s"]));
    out
}

#[test]
fn blocked_readers_are_served_as_valkey_serves_them() {
    let ours = start(&[]);
    let theirs = start_valkey(&[]);
    assert_eq!(blocked_readers(ours.port), blocked_readers(theirs.port));
}

/// The group state a replica must share with its primary (no consumer times: a replica
/// sees its consumers when the claims arrive).
fn group_state(c: &mut Client) -> Vec<Val> {
    let mut pending = c.cmd(&["XPENDING", "s", "g", "-", "+", "100"]).as_array();
    for row in pending.iter_mut() {
        if let Val::Array(fields) = row {
            fields[2] = Val::Int(0);
        }
    }
    let consumers: Vec<Val> = c
        .cmd(&["XINFO", "CONSUMERS", "s", "g"])
        .as_array()
        .into_iter()
        .map(|c| Val::Array(c.as_array().into_iter().take(4).collect()))
        .collect();
    vec![
        c.cmd(&["XINFO", "GROUPS", "s"]),
        c.cmd(&["XPENDING", "s", "g"]),
        Val::Array(pending),
        Val::Array(consumers),
        c.cmd(&["XRANGE", "s", "-", "+"]),
    ]
}

/// XREADGROUP (as XCLAIM and XGROUP SETID), NOACK reads, XACK, XCLAIM, XAUTOCLAIM of
/// deleted entries and XGROUP's subcommands reach a ferrokey and a Valkey replica, which end
/// with the primary's groups.
#[test]
fn replicas_get_the_group_changes() {
    let primary = start(&[]);
    let port = primary.port.to_string();
    let replicas = [
        start(&["--replicaof", "127.0.0.1", &port]),
        start_valkey(&["--replicaof", "127.0.0.1", &port]),
    ];
    let mut p = Client::connect(primary.port);
    let mut rs: Vec<Client> = replicas.iter().map(|r| Client::connect(r.port)).collect();
    for r in rs.iter_mut() {
        wait_for(|| common::info_field(r, "replication", "master_link_status") == "up");
    }
    for line in [
        "XGROUP CREATE s g $ MKSTREAM",
        "XGROUP CREATE s other 0",
        "XADD s 1-1 a 1",
        "XADD s 2-1 b 2",
        "XADD s 3-1 c 3",
        "XADD s 4-1 d 4",
        "XADD s 5-1 e 5",
        "XREADGROUP GROUP g c1 COUNT 2 STREAMS s >",
        "XREADGROUP GROUP g c2 NOACK COUNT 1 STREAMS s >",
        "XREADGROUP GROUP g c3 STREAMS s >",
        "XREADGROUP GROUP g c1 STREAMS s 0",
        "XACK s g 1-1",
        "XCLAIM s g c2 0 2-1",
        "XDEL s 4-1",
        "XAUTOCLAIM s g c4 0 0 COUNT 10",
        "XGROUP CREATECONSUMER s g c5",
        "XGROUP DELCONSUMER s g c3",
        "XGROUP SETID s other 3-1 ENTRIESREAD 3",
        "XGROUP DESTROY s nothing",
        "XCLAIM s g c6 0 5-1 LASTID 9-9",
        "SET end 1",
    ] {
        let words: Vec<&str> = line.split(' ').collect();
        let r = p.cmd(&words);
        assert!(!matches!(r, Val::Err(_)), "{line}: {r:?}");
    }
    let expected = group_state(&mut p);
    for r in rs.iter_mut() {
        wait_for(|| r.cmd(&["GET", "end"]) == Val::bulk("1"));
        assert_eq!(group_state(r), expected);
    }
}
