//! Consumer groups through files and payloads, against a real Valkey 9.1 (and Redis 7.0 for
//! files): RDB files written here load there with the same groups, PELs and consumers, and
//! theirs load here (Valkey 9.1 writes type 21, with active times); DUMP payloads restore both
//! ways; BGREWRITEAOF (as commands, and with an RDB preamble) and a restart keep the groups.
//!
//! Groups are compared through XINFO STREAM FULL, which shows every stored time, and through
//! a time-free view (XINFO GROUPS, XPENDING rows without idle times, XINFO CONSUMERS pending
//! counts) where the times cannot match (two servers filled at different moments, an AOF
//! replay). DEBUG DIGEST-VALUE covers the entries only: Valkey mixes no group into it.

use super::{restart_with, wait_for, DEBUG};
use crate::common::{self, start, start_redis, start_valkey, Client, Server, Val};

/// `s`: 10 entries; `g1` with alice (1-1 acked away: 3-1 pending), bob (1-1 claimed with a
/// fixed time and count, 4-1, and 5-1 whose entry is then deleted), carol (nothing pending,
/// never active); `g2` with an unknown entries read and dave (7-1 pending). `e`: an empty
/// stream whose group has one idle consumer.
fn fill(c: &mut Client) {
    for ms in 1..=10 {
        let (id, value) = (format!("{ms}-1"), format!("v{ms}"));
        assert_eq!(c.cmd(&["XADD", "s", &id, "f", &value]), Val::bulk(&id));
    }
    let ok = |v: Val| assert!(!matches!(v, Val::Err(_)), "{v:?}");
    ok(c.cmd(&["XGROUP", "CREATE", "s", "g1", "0"]));
    ok(c.cmd(&["XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "s", ">"]));
    ok(c.cmd(&["XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "s", ">"]));
    ok(c.cmd(&["XGROUP", "CREATECONSUMER", "s", "g1", "carol"]));
    ok(c.cmd(&["XACK", "s", "g1", "2-1"]));
    let claim = ["XCLAIM", "s", "g1", "bob", "0", "1-1", "TIME", "1000000", "RETRYCOUNT", "7"];
    ok(c.cmd(&[&claim[..], &["JUSTID"]].concat()));
    ok(c.cmd(&["XGROUP", "CREATE", "s", "g2", "6-1"]));
    ok(c.cmd(&["XREADGROUP", "GROUP", "g2", "dave", "COUNT", "1", "STREAMS", "s", ">"]));
    ok(c.cmd(&["XGROUP", "SETID", "s", "g2", "7-1"]));
    assert_eq!(c.cmd(&["XDEL", "s", "5-1"]), Val::Int(1));
    ok(c.cmd(&["XGROUP", "CREATE", "e", "eg", "$", "MKSTREAM"]));
    ok(c.cmd(&["XGROUP", "CREATECONSUMER", "e", "eg", "erin"]));
}

/// The groups part of XINFO STREAM FULL.
fn full(c: &mut Client, key: &str) -> Val {
    let info = c.cmd(&["XINFO", "STREAM", key, "FULL"]).as_array();
    let at = info.iter().position(|v| v.as_str() == "groups").expect("a groups field");
    info[at + 1].clone()
}

/// `v` without the `field`/value pairs of its flat maps, at any depth.
fn without(v: Val, field: &str) -> Val {
    match v {
        Val::Array(items) => {
            let mut out = Vec::new();
            let mut i = 0;
            while i < items.len() {
                if i % 2 == 0 && items[i] == Val::bulk(field) {
                    i += 2;
                    continue;
                }
                out.push(without(items[i].clone(), field));
                i += 1;
            }
            Val::Array(out)
        }
        other => other,
    }
}

/// `v` with each consumer's active time replaced by its seen time: what a type 19 file (no
/// active times) loads as, in Valkey and here.
fn active_as_seen(v: Val) -> Val {
    match v {
        Val::Array(mut items) => {
            let key_at = |items: &[Val], k: &str| {
                (0..items.len()).step_by(2).find(|&i| items[i] == Val::bulk(k))
            };
            if let (Some(seen), Some(active)) =
                (key_at(&items, "seen-time"), key_at(&items, "active-time"))
            {
                items[active + 1] = items[seen + 1].clone();
            }
            Val::Array(items.into_iter().map(active_as_seen).collect())
        }
        other => other,
    }
}

/// A reply as text: bulks as their bytes, arrays in brackets.
fn render(v: &Val) -> String {
    match v {
        Val::Array(items) => {
            let items: Vec<String> = items.iter().map(render).collect();
            format!("[{}]", items.join(" "))
        }
        Val::Int(n) => n.to_string(),
        Val::Nil => "nil".into(),
        other => other.as_str(),
    }
}

/// XINFO GROUPS, each group's XPENDING rows without the idle time, and each consumer's name
/// and pending count (and whether it was ever active, where XINFO CONSUMERS tells).
fn timeless(c: &mut Client, key: &str, with_activity: bool) -> Vec<String> {
    let mut out = Vec::new();
    for group in c.cmd(&["XINFO", "GROUPS", key]).as_array() {
        out.push(format!("group {}", render(&group)));
        let name = group.as_array()[1].as_str();
        for row in c.cmd(&["XPENDING", key, &name, "-", "+", "100"]).as_array() {
            let row = row.as_array();
            out.push(format!("  nack {} {} {}", row[0].as_str(), row[1].as_str(), render(&row[3])));
        }
        for consumer in c.cmd(&["XINFO", "CONSUMERS", key, &name]).as_array() {
            let kv = consumer.as_array();
            let get = |k: &str| {
                let at = kv.iter().position(|v| v.as_str() == k).expect("consumer field");
                render(&kv[at + 1])
            };
            let mut line = format!("  consumer {} pending {}", get("name"), get("pending"));
            if with_activity {
                line += &format!(" never-active {}", get("inactive") == "-1");
            }
            out.push(line);
        }
    }
    out
}

fn digest_value(c: &mut Client, key: &str) -> Val {
    c.cmd(&["DEBUG", "DIGEST-VALUE", key])
}

/// ferrokey's file (type 19) loads in Valkey 9.1 and Redis 7.0 with every group, NACK and
/// consumer, times included (active times become seen times, as type 19 has none); their
/// files load back here unchanged.
#[test]
fn rdb_files_with_groups_move_both_ways() {
    let ours = start(&[DEBUG[0], DEBUG[1]]);
    let mut c = Client::connect(ours.port);
    fill(&mut c);
    let (s_full, e_full) = (full(&mut c, "s"), full(&mut c, "e"));
    let digests = [digest_value(&mut c, "s"), digest_value(&mut c, "e")];
    assert_eq!(c.cmd(&["SAVE"]), Val::ok());
    let file = ours.dir.join("dump.rdb");
    for (starter, redis) in [(start_valkey as fn(&[&str]) -> Server, false), (start_redis, true)] {
        let (_theirs, mut t, their_dir) = restart_with(&file, starter);
        let expect = |v: &Val| match redis {
            true => without(v.clone(), "active-time"),
            false => active_as_seen(v.clone()),
        };
        assert_eq!(render(&full(&mut t, "s")), render(&expect(&s_full)), "redis {redis}");
        assert_eq!(render(&full(&mut t, "e")), render(&expect(&e_full)), "redis {redis}");
        assert_eq!([digest_value(&mut t, "s"), digest_value(&mut t, "e")], digests);
        // And back: their file here, as they hold it.
        let theirs = [full(&mut t, "s"), full(&mut t, "e")].map(|v| render(&v));
        assert_eq!(t.cmd(&["SAVE"]), Val::ok());
        let (_back, mut b, back_dir) = restart_with(&their_dir.join("dump.rdb"), start);
        let back = [full(&mut b, "s"), full(&mut b, "e")];
        let back = back.map(|v| render(&if redis { without(v, "active-time") } else { v }));
        assert_eq!(back, theirs, "redis {redis}");
        assert_eq!([digest_value(&mut b, "s"), digest_value(&mut b, "e")], digests);
        let _ = std::fs::remove_dir_all(their_dir);
        let _ = std::fs::remove_dir_all(back_dir);
    }
}

/// Valkey 9.1's own file (type 21: consumers never active keep their -1) loads here exactly.
#[test]
fn valkey_files_with_groups_load_exactly() {
    let valkey = start_valkey(&[DEBUG[0], DEBUG[1]]);
    let mut v = Client::connect(valkey.port);
    fill(&mut v);
    assert_eq!(v.cmd(&["SAVE"]), Val::ok());
    let (_ours, mut c, dir) = restart_with(&valkey.dir.join("dump.rdb"), start);
    for key in ["s", "e"] {
        assert_eq!(render(&full(&mut c, key)), render(&full(&mut v, key)), "{key}");
        assert_eq!(timeless(&mut c, key, true), timeless(&mut v, key, true), "{key}");
        assert_eq!(digest_value(&mut c, key), digest_value(&mut v, key), "{key}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// DUMP payloads with groups restore in Valkey 9.1, and Valkey's (type 21) restore here.
#[test]
fn dump_payloads_with_groups_restore_both_ways() {
    let ours = start(&[DEBUG[0], DEBUG[1]]);
    let mut c = Client::connect(ours.port);
    fill(&mut c);
    let valkey = start_valkey(&[DEBUG[0], DEBUG[1]]);
    let mut v = Client::connect(valkey.port);
    for key in ["s", "e"] {
        let Val::Bulk(payload) = c.cmd(&["DUMP", key]) else { panic!("DUMP {key}") };
        let copy = format!("{key}-copy");
        assert_eq!(v.cmd_b(&[b"RESTORE", copy.as_bytes(), b"0", &payload]), Val::ok());
        let expected = render(&active_as_seen(full(&mut c, key)));
        assert_eq!(render(&full(&mut v, &copy)), expected, "{key}");
        let Val::Bulk(theirs) = v.cmd(&["DUMP", &copy]) else { panic!("DUMP {copy}") };
        let back = format!("{key}-back");
        assert_eq!(c.cmd_b(&[b"RESTORE", back.as_bytes(), b"0", &theirs]), Val::ok());
        assert_eq!(render(&full(&mut c, &back)), render(&full(&mut v, &copy)), "{key}");
        assert_eq!(digest_value(&mut c, &back), digest_value(&mut c, key));
    }
    // Valkey's own groups, never-active consumers included.
    fill(&mut v);
    for key in ["s", "e"] {
        let Val::Bulk(theirs) = v.cmd(&["DUMP", key]) else { panic!("DUMP {key}") };
        let mine = format!("{key}-valkey");
        assert_eq!(c.cmd_b(&[b"RESTORE", mine.as_bytes(), b"0", &theirs]), Val::ok());
        assert_eq!(render(&full(&mut c, &mine)), render(&full(&mut v, key)), "{key}");
    }
}

/// `fill`, BGREWRITEAOF and a restart on a server started by `starter` with `preamble`;
/// returns the time-free view of both streams and their XINFO STREAM FULL less the consumers'
/// times (before the rewrite, after the restart).
fn rewrite_and_restart(
    starter: fn(&[&str]) -> Server,
    preamble: &str,
) -> [(Vec<String>, String); 2] {
    let dir = common::unique_dir("stream-groups-aof");
    let dir_arg = dir.to_str().expect("utf-8").to_string();
    let args = [
        "--appendonly",
        "yes",
        "--aof-use-rdb-preamble",
        preamble,
        "--dir",
        &dir_arg,
        DEBUG[0],
        DEBUG[1],
    ];
    let view = |c: &mut Client| {
        let keys = ["s", "e"];
        let timeless: Vec<String> = keys.iter().flat_map(|k| timeless(c, k, false)).collect();
        let full = keys.map(|k| render(&without(without(full(c, k), "seen-time"), "active-time")));
        (timeless, full.join("\n"))
    };
    let server = starter(&args);
    let mut c = Client::connect(server.port);
    fill(&mut c);
    let before = view(&mut c);
    let started = c.cmd(&["BGREWRITEAOF"]).as_str();
    assert_eq!(started, "Background append only file rewriting started");
    wait_for(|| common::info_field(&mut c, "persistence", "aof_rewrite_in_progress") == "0");
    drop(c);
    drop(server);
    let again = starter(&args);
    let mut c = Client::connect(again.port);
    let after = view(&mut c);
    drop(again);
    let _ = std::fs::remove_dir_all(dir);
    [before, after]
}

/// A rewrite as commands (XGROUP CREATE, XCLAIM ... FORCE, XGROUP CREATECONSUMER) rebuilds
/// the groups as Valkey's does: the same groups, NACKs (delivery times and counts kept) and
/// consumers, less the NACK of the deleted entry 5-1 (XCLAIM drops it, in both servers).
#[test]
fn aof_rewrite_as_commands_keeps_groups_as_valkey() {
    let [(before, _), (after, after_full)] = rewrite_and_restart(start, "no");
    let gone = "  nack 5-1 bob 1";
    assert!(before.iter().any(|l| l == gone), "{before:#?}");
    let expected: Vec<String> = before
        .iter()
        .filter(|l| *l != gone)
        .map(|l| match l.as_str() {
            "  consumer bob pending 3" => "  consumer bob pending 2".to_string(),
            g1 if g1.starts_with("group [name g1 ") => g1.replace(" pending 4 ", " pending 3 "),
            other => other.to_string(),
        })
        .collect();
    assert_eq!(after, expected);
    let [_, (valkey_after, valkey_full)] = rewrite_and_restart(start_valkey, "no");
    assert_eq!(after, valkey_after);
    // The delivery times differ between the two servers' fills, except the one XCLAIM set.
    for full in [&after_full, &valkey_full] {
        assert!(full.contains("[1-1 bob 1000000 7]") && full.contains("[1-1 1000000 7]"), "{full}");
    }
}

/// With an RDB preamble the rewrite is the RDB form: everything comes back, the NACK of the
/// deleted entry and the delivery times included.
#[test]
fn aof_rewrite_with_preamble_keeps_groups() {
    let [before, after] = rewrite_and_restart(start, "yes");
    assert_eq!(after, before);
}
