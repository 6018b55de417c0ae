//! INFO against Valkey 9.1: the sections that `INFO`, `INFO default`, `all`, `everything`
//! and several names at once print, in order, and every section's field names in order
//! (lines named after data, such as `cmdstat_get` or `db0`, are left out: they follow what
//! ran, not the format; the keyspace lines' own fields are compared apart). Then the
//! keyspace figures themselves, `keys_with_volatile_items` above all, step by step through
//! every way a hash gains or loses volatile fields or a key comes or goes.

use std::time::{Duration, Instant};

use super::common::diff::Pair;
use super::common::{start, start_valkey, Client, Val};

/// Section headers, in order.
fn headers(text: &str) -> Vec<String> {
    text.lines().filter_map(|l| l.strip_prefix("# ")).map(str::to_string).collect()
}

/// Whether a field is named after data (`cmdstat_get`, `db0`, `slave1`, `listener0`).
fn named_after_data(name: &str) -> bool {
    const BY_PREFIX: &[&str] = &["cmdstat_", "errorstat_", "latency_percentiles_usec_"];
    const NUMBERED: &[&str] = &["db", "slave", "listener"];
    BY_PREFIX.iter().any(|p| name.starts_with(p))
        || NUMBERED.iter().any(|p| {
            name.strip_prefix(p)
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
}

/// `# Section` and field-name lines, in order, without those named after data.
fn layout(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| if l.starts_with('#') { l } else { l.split(':').next().unwrap() })
        .filter(|name| !named_after_data(name))
        .map(str::to_string)
        .collect()
}

#[test]
fn info_sections_and_fields_match_valkey() {
    let ours = start(&[]);
    let theirs = start_valkey(&[]);
    let mut texts = Vec::new();
    for port in [ours.port, theirs.port] {
        let mut c = Client::connect(port);
        // The same commands on each, so that both have the same data-named lines to skip.
        c.cmd(&["SET", "k", "v"]);
        c.cmd(&["GET", "k"]);
        c.cmd(&["NOSUCHCOMMAND"]);
        let mut replies = Vec::new();
        for args in [
            &["INFO"][..],
            &["INFO", "default"],
            &["INFO", "all"],
            &["INFO", "everything"],
            &["INFO", "server", "CPU", "keyspace"],
            &["INFO", "default", "commandstats"],
            &["INFO", "tls"],
            &["INFO", "cluster_info"],
        ] {
            replies.push((args.join(" "), c.cmd(args).as_str()));
        }
        texts.push(replies);
    }
    for ((what, a), (_, b)) in texts[0].iter().zip(&texts[1]) {
        assert_eq!(headers(a), headers(b), "sections of {what} (left: ferrokey, right: valkey)");
        assert_eq!(keyspace_fields(a), keyspace_fields(b), "keyspace lines of {what}");
    }
    let (ours_all, theirs_all) = (&texts[0][3].1, &texts[1][3].1);
    let (ours_layout, theirs_layout) = (layout(ours_all), layout(theirs_all));
    for (section, theirs_section) in split_sections(&theirs_layout) {
        let ours_section = split_sections(&ours_layout)
            .into_iter()
            .find(|(name, _)| *name == section)
            .map(|(_, fields)| fields)
            .unwrap_or_default();
        assert_eq!(
            ours_section, theirs_section,
            "fields of {section} (left: ferrokey, right: valkey)"
        );
    }
    assert_eq!(ours_layout, theirs_layout);
}

/// The `dbN` lines of an INFO text with the names of their fields: `db0:keys,expires,...`.
fn keyspace_fields(text: &str) -> Vec<String> {
    keyspace_lines(text)
        .into_iter()
        .map(|(db, fields)| {
            let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
            format!("{db}:{}", names.join(","))
        })
        .collect()
}

/// The `dbN` lines of an INFO text: the database and its `name=value` fields.
fn keyspace_lines(text: &str) -> Vec<(String, Vec<(String, String)>)> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(name, _)| name.starts_with("db") && named_after_data(name))
        .map(|(db, rest)| {
            let fields = rest
                .split(',')
                .map(|f| f.split_once('=').expect("name=value"))
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            (db.to_string(), fields)
        })
        .collect()
}

/// INFO keyspace's lines without `avg_ttl` (an estimate on a sample: its figures differ).
fn keyspace_figures(c: &mut Client) -> Vec<String> {
    let text = c.cmd(&["INFO", "keyspace"]).as_str();
    keyspace_lines(&text)
        .into_iter()
        .map(|(db, fields)| {
            let kept: Vec<String> = fields
                .into_iter()
                .filter(|(n, _)| n != "avg_ttl")
                .map(|(n, v)| format!("{n}={v}"))
                .collect();
            format!("{db}:{}", kept.join(","))
        })
        .collect()
}

/// Runs `lines` on both servers (same replies) and then compares INFO keyspace.
fn step(p: &mut Pair, what: &str, lines: &[&str]) {
    p.same_lines(lines);
    let (ours, theirs) = (keyspace_figures(&mut p.a), keyspace_figures(&mut p.b));
    assert_eq!(ours, theirs, "INFO keyspace after {what} (left: ferrokey, right: valkey)");
}

/// Waits until `line` gets `want` from both servers (active expiry runs on its own clock).
fn wait_both(p: &mut Pair, line: &[&str], want: Val) {
    let deadline = Instant::now() + Duration::from_secs(10);
    for c in [&mut p.a, &mut p.b] {
        while c.cmd(line) != want {
            assert!(Instant::now() < deadline, "{line:?} never answered {want:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn keys_with_volatile_items_follow_valkey() {
    let mut p = Pair::start(2, &["--enable-debug-command", "yes"]);
    step(
        &mut p,
        "hashes gaining volatile fields",
        &[
            "HSETEX h1 EX 1000 FIELDS 2 a 1 b 2",
            "HSET h2 x 1 y 2",
            "HEXPIRE h2 1000 FIELDS 1 x",
            "HSET h3 p 1",
            "HPEXPIRE h3 1000000 FIELDS 1 p",
            "HSET plain f v",
            "SET s v EX 1000",
            "HSETEX h4 PX 1000000 FIELDS 1 f v",
            "HEXPIREAT h4 99999999999 FIELDS 1 f",
        ],
    );
    step(
        &mut p,
        "HPERSIST of one of two, then of the last",
        &["HPERSIST h1 FIELDS 1 a", "HPERSIST h1 FIELDS 1 b"],
    );
    step(&mut p, "HDEL of the last volatile field", &["HDEL h2 x"]);
    step(
        &mut p,
        "HSET and HSETEX overwriting without a TTL",
        &[
            "HSETEX h5 EX 1000 FIELDS 1 a 1",
            "HSET h5 a 2",
            "HSETEX h6 EX 1000 FIELDS 1 a 1",
            "HSETEX h6 FIELDS 1 a 2",
            "HSETEX h7 EX 1000 FIELDS 1 a 1",
            "HSETEX h7 KEEPTTL FIELDS 1 a 2",
        ],
    );
    step(
        &mut p,
        "HGETDEL and HGETEX PERSIST",
        &[
            "HSETEX g1 EX 1000 FIELDS 2 a 1 b 2",
            "HGETDEL g1 FIELDS 1 a",
            "HGETDEL g1 FIELDS 1 b",
            "HSET g2 a 1 b 2",
            "HGETEX g2 EX 1000 FIELDS 1 a",
            "HGETEX g2 PERSIST FIELDS 1 a",
            "HGETEX g2 PX 1000000 FIELDS 1 b",
        ],
    );
    step(
        &mut p,
        "DEL, UNLINK and an overwrite",
        &[
            "HSETEX d1 EX 1000 FIELDS 1 a 1",
            "HSETEX d2 EX 1000 FIELDS 1 a 1",
            "HSETEX d3 EX 1000 FIELDS 1 a 1",
            "DEL d1",
            "UNLINK d2",
            "SET d3 string",
        ],
    );
    step(
        &mut p,
        "RENAME onto a volatile hash and away",
        &[
            "HSETEX r1 EX 1000 FIELDS 1 a 1",
            "HSETEX r2 EX 1000 FIELDS 1 a 1",
            "RENAME r1 r2",
            "RENAME r2 r3",
            "RENAME plain r3",
        ],
    );
    step(
        &mut p,
        "MOVE and COPY",
        &[
            "HSETEX m1 EX 1000 FIELDS 1 a 1",
            "MOVE m1 5",
            "COPY h4 h4copy",
            "COPY h4 h4copy5 DB 5",
            "HSETEX m2 EX 1000 FIELDS 1 a 1",
            "EXPIRE m2 1000",
        ],
    );
    step(&mut p, "SWAPDB", &["SWAPDB 0 5"]);
    step(&mut p, "SWAPDB back", &["SWAPDB 5 0"]);
    step(&mut p, "FLUSHDB", &["SELECT 5", "FLUSHDB", "HSETEX f1 EX 1000 FIELDS 1 a 1", "SELECT 0"]);
    // DUMP and RESTORE (the payloads are the same on both: the same RDB encoding).
    let dump = p.a.cmd(&["DUMP", "h4"]);
    let theirs = p.b.cmd(&["DUMP", "h4"]);
    for (c, d) in [(&mut p.a, dump), (&mut p.b, theirs)] {
        let Val::Bulk(d) = d else { panic!("DUMP h4: {d:?}") };
        assert_eq!(c.cmd_b(&[b"RESTORE".as_slice(), b"restored", b"0", &d]), Val::ok());
        assert_eq!(c.cmd_b(&[b"RESTORE".as_slice(), b"h3", b"0", &d, b"REPLACE"]), Val::ok());
    }
    step(&mut p, "RESTORE", &[]);
    step(&mut p, "DEBUG RELOAD", &["DEBUG RELOAD"]);
    // A field expiring with active expiry off: still counted, read or not (reads hide an
    // expired field, they do not delete it), until active expiry reclaims it.
    step(
        &mut p,
        "short TTLs with active expiry off",
        &[
            "DEBUG SET-ACTIVE-EXPIRE 0",
            "HSETEX e1 PX 30 FIELDS 1 a 1",
            "HSET e2 keep 1",
            "HSETEX e2 PX 30 FIELDS 1 a 1",
        ],
    );
    std::thread::sleep(Duration::from_millis(100));
    step(&mut p, "a lazy read of expired fields", &["HGET e1 a", "HGET e2 a", "HLEN e1"]);
    step(&mut p, "a write to a hash with an expired field", &["HSET e2 b 2"]);
    p.same_lines(&["DEBUG SET-ACTIVE-EXPIRE 1"]);
    wait_both(&mut p, &["EXISTS", "e1"], Val::Int(0));
    wait_both(&mut p, &["HLEN", "e2"], Val::Int(2));
    step(&mut p, "active field expiry", &[]);
    step(&mut p, "FLUSHALL", &["FLUSHALL"]);
}

/// The layout split into (header, field names).
fn split_sections(layout: &[String]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for l in layout {
        match l.strip_prefix("# ") {
            Some(h) => out.push((h.to_string(), Vec::new())),
            None => out.last_mut().expect("a field before any section").1.push(l.clone()),
        }
    }
    out
}
