//! LATENCY and the per-command latency histograms against Valkey 9.1: every reply that does
//! not depend on timing compared byte for byte (HELP, the replies without data, RESET's
//! counts, the errors); HISTOGRAM's and INFO latencystats' shapes compared once the
//! timings are taken out (names, bucket boundaries); then ferrokey alone: a slow
//! command in LATEST, HISTORY, GRAPH and DOCTOR, histogram counts against the calls made,
//! CONFIG RESETSTAT and `latency-tracking no`.

use std::time::{SystemTime, UNIX_EPOCH};

use super::common::diff::{same_as_valkey_with, Pair};
use super::common::{start, Client, Val};

/// The bucket labels LATENCY HISTOGRAM can print: the highest value (µs) of the counter at
/// each power-of-two level from 1,024 ns, and the end of the range.
const BUCKETS_USEC: [i64; 21] = [
    1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113, 4227, 8454, 16908, 33816, 67633, 135266,
    270532, 541065, 1073741,
];

#[test]
fn latency_replies_without_data_match_valkey() {
    for proto in [2, 3] {
        same_as_valkey_with(
            proto,
            &[],
            &[
                "LATENCY HELP",
                "LATENCY LATEST",
                "LATENCY HISTORY command",
                "LATENCY HISTORY nosuch",
                "LATENCY RESET",
                "LATENCY RESET command fork nosuch",
                "LATENCY GRAPH command",
                "LATENCY GRAPH nosuch-event",
                "LATENCY DOCTOR",
                "LATENCY HISTOGRAM nosuch",
                "LATENCY HISTOGRAM nosuch get|x a|b|c lpush",
                "LATENCY",
                "LATENCY foo",
                "LATENCY LATEST x",
                "LATENCY HISTORY",
                "LATENCY HISTORY a b",
                "LATENCY GRAPH",
                "LATENCY DOCTOR x",
                "LATENCY HELP x",
                "CONFIG GET latency-monitor-threshold",
                "CONFIG GET latency-tracking",
                "CONFIG GET latency-tracking-info-percentiles",
                "CONFIG SET latency-monitor-threshold -1",
                // (DOCTOR's report once the monitor is on also depends on the process's
                // transparent huge pages: it is checked in the unit tests.)
                "CONFIG SET latency-monitor-threshold 100",
                "LATENCY LATEST",
                "CONFIG SET latency-monitor-threshold 0",
                "COMMAND INFO latency",
            ],
        );
    }
}

/// One HISTOGRAM entry with the timings out: (name, calls, the last cumulative count),
/// after checking that every bucket label is one of Valkey's and the counts only grow.
fn shape(reply: Val) -> Vec<(String, i64, i64)> {
    let entries = match reply {
        Val::Map(m) => m,
        Val::Array(flat) => flat.chunks(2).map(|p| (p[0].clone(), p[1].clone())).collect(),
        other => panic!("not a map: {other:?}"),
    };
    let pairs = |v: Val| -> Vec<(Val, Val)> {
        match v {
            Val::Map(m) => m,
            Val::Array(flat) => flat.chunks(2).map(|p| (p[0].clone(), p[1].clone())).collect(),
            other => panic!("not a map: {other:?}"),
        }
    };
    let mut out = Vec::new();
    for (name, body) in entries {
        let body = pairs(body);
        assert_eq!(body[0].0.as_str(), "calls");
        assert_eq!(body[1].0.as_str(), "histogram_usec");
        let calls = body[0].1.as_int();
        let mut last = 0;
        for (usec, count) in pairs(body[1].1.clone()) {
            assert!(BUCKETS_USEC.contains(&usec.as_int()), "bucket {usec:?}");
            assert!(count.as_int() > last, "counts grow: {count:?} after {last}");
            last = count.as_int();
        }
        assert_eq!(calls, last, "every call is in a bucket");
        out.push((name.as_str(), calls, last));
    }
    out.sort();
    out
}

#[test]
fn histogram_and_latencystats_shapes_match_valkey() {
    for proto in [2, 3] {
        let mut p = Pair::start(proto, &[]);
        for _ in 0..5 {
            p.same(&["SET", "k", "v"]);
        }
        for _ in 0..3 {
            p.same(&["GET", "k"]);
        }
        p.same(&["CONFIG", "GET", "maxmemory"]);
        p.same(&["CONFIG", "GET", "hz"]);
        p.same(&["GET"]); // rejected for its arity: no histogram entry
        for args in [
            &["LATENCY", "HISTOGRAM", "set", "get", "config", "nosuch"][..],
            &["LATENCY", "HISTOGRAM", "SET", "config|get"][..],
        ] {
            let (ours, theirs) = p.both(args);
            // The names only: the oracle runs two CONFIG GETs of its own at start-up.
            let names = |raw: &[u8]| -> Vec<String> {
                shape(super::common::parse_val(&mut &raw[..])).into_iter().map(|e| e.0).collect()
            };
            p.assert_equal(args, names(&ours), names(&theirs));
        }
        let expect = vec![
            ("config|get".to_string(), 2, 2),
            ("get".to_string(), 3, 3),
            ("set".to_string(), 5, 5),
        ];
        let (ours, _) = p.both(&["LATENCY", "HISTOGRAM", "set", "get", "config"]);
        assert_eq!(shape(super::common::parse_val(&mut &ours[..])), expect);
        // INFO latencystats: the same lines, with values in Valkey's format.
        p.same(&["CONFIG", "SET", "latency-tracking-info-percentiles", "0 50 99.99 100"]);
        let (ours, theirs) = p.both(&["INFO", "latencystats"]);
        let (ours, theirs) = (latencystats(&ours), latencystats(&theirs));
        p.assert_equal("INFO latencystats names", names(&ours), names(&theirs));
        for line in ours.iter().chain(&theirs) {
            let (_, values) = line.split_once(':').unwrap();
            let labels: Vec<&str> =
                values.split(',').map(|v| v.split('=').next().unwrap()).collect();
            assert_eq!(labels, ["p0", "p50", "p99.99", "p100"], "{line}");
            for v in values.split(',') {
                let (_, usec) = v.split_once('=').unwrap();
                let (whole, frac) = usec.split_once('.').unwrap();
                assert!(whole.parse::<u64>().is_ok() && frac.len() == 3, "{line}");
            }
        }
    }
}

/// The `latency_percentiles_usec_*` lines of an INFO reply.
fn latencystats(raw: &[u8]) -> Vec<String> {
    let text = super::common::parse_val(&mut &raw[..]).as_str();
    text.split("\r\n")
        .filter(|l| l.starts_with("latency_percentiles_usec_"))
        .map(String::from)
        .collect()
}

fn names(lines: &[String]) -> Vec<String> {
    let mut v: Vec<String> =
        lines.iter().map(|l| l.split(':').next().unwrap().to_string()).collect();
    v.sort();
    v
}

fn now_s() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64
}

#[test]
fn a_slow_command_is_a_latency_spike() {
    let s = start(&["--enable-debug-command", "yes"]);
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["CONFIG", "SET", "latency-monitor-threshold", "1"]), Val::ok());
    let before = now_s();
    assert_eq!(c.cmd(&["DEBUG", "SLEEP", "0.05"]), Val::ok());
    let after = now_s();
    let latest = c.cmd(&["LATENCY", "LATEST"]).as_array();
    assert_eq!(latest.len(), 1, "{latest:?}");
    let e = latest[0].as_array();
    assert_eq!(e[0].as_str(), "command");
    let (time, latency, max, sum, count) =
        (e[1].as_int(), e[2].as_int(), e[3].as_int(), e[4].as_int(), e[5].as_int());
    assert!((before..=after).contains(&time), "{time} not in {before}..={after}");
    assert!(latency >= 50 && max == latency && sum == latency && count == 1, "{e:?}");
    let history = c.cmd(&["LATENCY", "HISTORY", "command"]).as_array();
    assert_eq!(history, vec![Val::Array(vec![Val::Int(time), Val::Int(latency)])]);
    let graph = c.cmd(&["LATENCY", "GRAPH", "command"]).as_str();
    assert!(
        graph.starts_with(&format!(
            "command - high {latency} ms, low {latency} ms (all time high {latency} ms)\n"
        )),
        "{graph}"
    );
    let doctor = c.cmd(&["LATENCY", "DOCTOR"]).as_str();
    assert!(doctor.starts_with("Latency spikes are observed in this Valkey instance.\n\n"));
    assert!(doctor.contains(&format!("1. command: 1 latency spikes (average {latency}ms")));
    assert!(doctor.contains("'CONFIG SET slowlog-log-slower-than 1000'"), "{doctor}");
    // A second spike in the same second keeps one sample, the worse; sum and count add up.
    assert_eq!(c.cmd(&["DEBUG", "SLEEP", "0.002"]), Val::ok());
    let e = c.cmd(&["LATENCY", "LATEST"]).as_array()[0].as_array();
    assert_eq!(e[5].as_int(), 2);
    assert!(e[4].as_int() >= latency + 2);
    assert_eq!(c.cmd(&["LATENCY", "RESET", "COMMAND"]), Val::Int(1));
    assert_eq!(c.cmd(&["LATENCY", "LATEST"]), Val::Array(vec![]));
    // Off again: nothing more is kept.
    assert_eq!(c.cmd(&["CONFIG", "SET", "latency-monitor-threshold", "0"]), Val::ok());
    assert_eq!(c.cmd(&["DEBUG", "SLEEP", "0.02"]), Val::ok());
    assert_eq!(c.cmd(&["LATENCY", "LATEST"]), Val::Array(vec![]));
}

/// ferrokey's HISTOGRAM of `cmds` as (name, calls, last cumulative count).
fn histogram(c: &mut Client, cmds: &[&str]) -> Vec<(String, i64, i64)> {
    let mut args = vec!["LATENCY", "HISTOGRAM"];
    args.extend_from_slice(cmds);
    shape(c.cmd(&args))
}

fn latencystats_of(c: &mut Client) -> Vec<String> {
    let text = c.cmd(&["INFO", "latencystats"]).as_str();
    text.split("\r\n")
        .filter(|l| l.starts_with("latency_percentiles_usec_"))
        .map(String::from)
        .collect()
}

#[test]
fn histograms_count_calls_and_follow_resetstat_and_latency_tracking() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    for i in 0..7 {
        assert_eq!(c.cmd(&["SET", &format!("k{i}"), "v"]), Val::ok());
    }
    for _ in 0..3 {
        c.cmd(&["GET", "k1"]);
    }
    // A blocking command counts once, when it ends.
    assert_eq!(c.cmd(&["BLPOP", "nolist", "0.01"]), Val::NilArray);
    let got = histogram(&mut c, &["set", "get", "blpop"]);
    assert_eq!(got, vec![("blpop".into(), 1, 1), ("get".into(), 3, 3), ("set".into(), 7, 7)]);
    let stats = latencystats_of(&mut c);
    for name in ["set", "get", "blpop"] {
        let prefix = format!("latency_percentiles_usec_{name}:p50=");
        assert!(stats.iter().any(|l| l.starts_with(&prefix)), "{stats:?}");
    }
    // The whole table: every command with data, each once.
    let all = histogram(&mut c, &[]);
    assert!(all.iter().any(|(n, calls, _)| n == "set" && *calls == 7), "{all:?}");
    assert_eq!(c.cmd(&["CONFIG", "RESETSTAT"]), Val::ok());
    assert_eq!(histogram(&mut c, &["set", "get"]), vec![]);
    let stats = latencystats_of(&mut c);
    assert!(stats.iter().all(|l| !l.contains("_set:") && !l.contains("_get:")), "{stats:?}");
    // latency-tracking no: nothing recorded, nothing in INFO.
    assert_eq!(c.cmd(&["CONFIG", "SET", "latency-tracking", "no"]), Val::ok());
    c.cmd(&["SET", "k", "v"]);
    assert_eq!(histogram(&mut c, &["set"]), vec![]);
    assert_eq!(latencystats_of(&mut c), Vec::<String>::new());
    assert_eq!(c.cmd(&["CONFIG", "SET", "latency-tracking", "yes"]), Val::ok());
    c.cmd(&["SET", "k", "v"]);
    assert_eq!(histogram(&mut c, &["set"]), vec![("set".into(), 1, 1)]);
}

/// Elements of the set whose freeing is the spike: a million separate allocations take
/// well over a millisecond to free on any machine.
const BIG_SET_ELEMENTS: i64 = 1_000_000;

/// Builds the big set at `key` with one script (its own `command` spike aside).
fn big_set(c: &mut Client, key: &str) {
    let script = "for i = 1, tonumber(ARGV[1]) do redis.call('SADD', KEYS[1], 'member:' .. i) end";
    let n = BIG_SET_ELEMENTS.to_string();
    assert_eq!(c.cmd(&["EVAL", script, "1", key, &n]), Val::Nil);
    assert_eq!(c.cmd(&["SCARD", key]), Val::Int(BIG_SET_ELEMENTS));
}

/// The events LATENCY LATEST lists, by name.
fn latest_events(c: &mut Client) -> Vec<String> {
    let latest = c.cmd(&["LATENCY", "LATEST"]).as_array();
    latest.iter().map(|e| e.as_array()[0].as_str()).collect()
}

/// Active expiry deleting a big key is an `expire-del` spike (Valkey times each deletion of
/// its cycle apart), and the cycle around it an `expire-cycle` one.
#[test]
fn deleting_a_big_key_on_expiry_is_an_expire_del_spike() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    big_set(&mut c, "big");
    assert_eq!(c.cmd(&["CONFIG", "SET", "latency-monitor-threshold", "1"]), Val::ok());
    assert_eq!(c.cmd(&["PEXPIRE", "big", "1"]), Val::Int(1));
    // DBSIZE touches no key: only active expiry can take it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while c.cmd(&["DBSIZE"]) != Val::Int(0) {
        assert!(std::time::Instant::now() < deadline, "active expiry did not take the key");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let events = latest_events(&mut c);
    assert!(events.contains(&"expire-del".to_string()), "{events:?}");
    assert!(events.contains(&"expire-cycle".to_string()), "{events:?}");
    let history = c.cmd(&["LATENCY", "HISTORY", "expire-del"]).as_array();
    assert_eq!(history.len(), 1, "{history:?}");
    assert!(history[0].as_array()[1].as_int() >= 1);
}

/// Evicting a big key is an `eviction-del` spike inside an `eviction-cycle` one, and DOCTOR
/// gives Valkey's advice for it (large objects).
#[test]
fn evicting_a_big_key_is_an_eviction_del_spike() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    big_set(&mut c, "big");
    for (name, value) in [
        ("latency-monitor-threshold", "1"),
        ("lazyfree-lazy-eviction", "no"),
        ("maxmemory-policy", "allkeys-random"),
        ("maxmemory", "1"),
    ] {
        assert_eq!(c.cmd(&["CONFIG", "SET", name, value]), Val::ok(), "{name}");
    }
    // The write evicts everything there is, then is refused.
    assert!(matches!(c.cmd(&["SET", "k", "v"]), Val::Err(_)));
    assert_eq!(c.cmd(&["CONFIG", "SET", "maxmemory", "0"]), Val::ok());
    assert_eq!(c.cmd(&["DBSIZE"]), Val::Int(0));
    let events = latest_events(&mut c);
    assert!(events.contains(&"eviction-del".to_string()), "{events:?}");
    assert!(events.contains(&"eviction-cycle".to_string()), "{events:?}");
    assert!(!events.contains(&"eviction-lazyfree".to_string()), "{events:?}");
    let doctor = c.cmd(&["LATENCY", "DOCTOR"]).as_str();
    assert!(doctor.contains("eviction-del: 1 latency spikes"), "{doctor}");
    assert!(doctor.contains("- Deleting, expiring or evicting"), "{doctor}");
}

/// With lazy eviction the big key goes to the lazyfree thread; with nothing left to evict
/// and no time limit (tenacity 100), eviction waits for that thread while it frees the
/// million elements: an `eviction-lazyfree` spike, and no `eviction-del` one (handing over
/// is quick).
#[test]
fn waiting_for_the_lazyfree_thread_is_an_eviction_lazyfree_spike() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    big_set(&mut c, "big");
    for (name, value) in [
        ("latency-monitor-threshold", "1"),
        ("lazyfree-lazy-eviction", "yes"),
        ("maxmemory-eviction-tenacity", "100"),
        ("maxmemory-policy", "allkeys-random"),
        ("maxmemory", "1"),
    ] {
        assert_eq!(c.cmd(&["CONFIG", "SET", name, value]), Val::ok(), "{name}");
    }
    assert!(matches!(c.cmd(&["SET", "k", "v"]), Val::Err(_)));
    assert_eq!(c.cmd(&["CONFIG", "SET", "maxmemory", "0"]), Val::ok());
    let events = latest_events(&mut c);
    assert!(events.contains(&"eviction-lazyfree".to_string()), "{events:?}");
    assert!(events.contains(&"eviction-cycle".to_string()), "{events:?}");
    assert!(!events.contains(&"eviction-del".to_string()), "{events:?}");
}
