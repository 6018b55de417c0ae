//! The ACL LOG and the denial counters against Valkey 9.1: entries for denials by command,
//! key, channel, database and failed authentication, in each context (top level, MULTI,
//! Lua); repeated denials grouped into one entry whose count grows and which moves to the
//! front; ACL LOG <count>, RESET and errors; `acllog-max-len`; the INFO stats fields
//! `acl_access_denied_*` (which CONFIG RESETSTAT leaves alone) and `rejected_calls` in
//! INFO commandstats. Entry fields that hold times, ids or the client's address are
//! checked for presence and type, not compared.

use crate::common::{Client, Val};
use crate::{map_pairs, pair, same_normalized, Duo};

/// The fields of an entry, in Valkey's order.
const FIELDS: [&str; 10] = [
    "count",
    "reason",
    "context",
    "object",
    "username",
    "age-seconds",
    "client-info",
    "entry-id",
    "timestamp-created",
    "timestamp-last-updated",
];

/// An ACL LOG reply reduced to what is deterministic: per entry, count, reason, context,
/// object and username. The other fields must be there, in order, with their types.
fn log_core(v: Val) -> Val {
    let Val::Array(entries) = v else { return v };
    let core = entries.iter().map(|entry| {
        let fields = map_pairs(entry);
        let names: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, FIELDS, "{entry:?}");
        let get = |name: &str| fields.iter().find(|(k, _)| k == name).unwrap().1.clone();
        let age = get("age-seconds");
        let age_text = match &age {
            Val::Bulk(_) => age.as_str(),
            Val::Double(text) => text.clone(),
            other => panic!("age-seconds: {other:?}"),
        };
        assert!(age_text.parse::<f64>().is_ok_and(|a| a >= 0.0), "age-seconds {age_text}");
        let info = get("client-info").as_str();
        assert!(info.starts_with("id=") && info.contains(" addr=127.0.0.1:"), "{info}");
        assert!(info.contains(" cmd=") && info.contains(" user="), "{info}");
        assert!(get("entry-id").as_int() >= 0);
        let created = get("timestamp-created").as_int();
        assert!(created > 1_600_000_000_000 && created <= get("timestamp-last-updated").as_int());
        Val::Array(FIELDS[..5].iter().map(|name| get(name)).collect())
    });
    Val::Array(core.collect())
}

#[test]
fn entries_for_each_reason_and_context() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        p.same_line("ACL SETUSER lg on >pw ~k* &ch* db=0 -@all +get +publish +multi +exec +eval");
        p.same_line("ACL SETUSER lg +select");
        let mut d = Duo::login(&p, "lg", "pw");
        d.same_lines(&[
            "GET x",
            "PUBLISH other m",
            "PING",
            "SELECT 1",
            "MULTI",
            "GET y",
            "PING",
            "EXEC",
            "AUTH lg wrong",
            "AUTH nouser wrong",
        ]);
        d.same(&["EVAL", "return server.call('get','zz')", "0"]);
        d.same(&["EVAL", "return server.pcall('publish','news','m')", "0"]);
        d.same(&["EVAL", "return server.pcall('set','k1','v')", "0"]);
        // Without a count, the newest 10.
        let entries = same_normalized(&mut p, "ACL LOG", log_core);
        assert_eq!(entries.as_array().len(), 10);
        let entries = same_normalized(&mut p, "ACL LOG 100", log_core);
        assert_eq!(entries.as_array().len(), 11);
        p.same_normalized("ACL LOG 3", log_core);
        p.same_normalized("ACL LOG 0", log_core);
        p.same_normalized("ACL LOG -1", log_core);
    }
}

#[test]
fn repeated_denials_are_grouped() {
    let mut p = pair(2, &[]);
    p.same_line("ACL SETUSER lg on >pw ~k -@all +get +set +eval");
    let mut d = Duo::login(&p, "lg", "pw");
    // The same object, reason, context and user: one entry, whatever the command.
    d.same_lines(&["GET x", "GET x", "SET x v", "GET y", "GET x", "AUTH lg bad", "AUTH lg bad"]);
    d.same(&["EVAL", "return server.pcall('get','x')", "0"]);
    d.same(&["EVAL", "return server.pcall('get','x')", "0"]);
    p.same_normalized("ACL LOG", log_core);
    // Another user denied the same key is another entry.
    p.same_line("ACL SETUSER lg2 on >pw ~k -@all +get");
    let mut d2 = Duo::login(&p, "lg2", "pw");
    d2.same_line("GET x");
    p.same_normalized("ACL LOG", log_core);
}

#[test]
fn count_reset_and_errors() {
    let mut p = pair(2, &[]);
    p.same_lines(&["ACL LOG", "ACL SETUSER lg on >pw ~k -@all +get"]);
    let mut d = Duo::login(&p, "lg", "pw");
    d.same_lines(&["GET a", "GET b", "GET c"]);
    p.same_normalized("ACL LOG 1", log_core);
    p.same_normalized("ACL LOG 2", log_core);
    p.same_normalized("ACL LOG 100", log_core);
    p.same_lines(&[
        "ACL LOG x",
        "ACL LOG 1.5",
        "ACL LOG 99999999999999999999",
        "ACL LOG reset",
        "ACL LOG",
        "ACL LOG RESET",
    ]);
}

#[test]
fn acllog_max_len() {
    let mut p = pair(2, &[]);
    p.same_lines(&[
        "CONFIG GET acllog-max-len",
        "CONFIG SET acllog-max-len 2",
        "ACL SETUSER lm on nopass ~k -@all +get",
    ]);
    let mut d = Duo::login(&p, "lm", "x");
    d.same_lines(&["GET a", "GET b", "GET c", "GET d", "GET e", "GET d"]);
    p.same_normalized("ACL LOG", log_core);
    // A smaller limit trims the log only when the next entry comes.
    p.same_line("CONFIG SET acllog-max-len 1");
    p.same_normalized("ACL LOG", log_core);
    d.same_line("GET f");
    p.same_normalized("ACL LOG", log_core);
    p.same_lines(&["ACL LOG RESET", "CONFIG SET acllog-max-len 0"]);
    d.same_line("GET g");
    p.same_normalized("ACL LOG", log_core);
    p.same_lines(&["CONFIG SET acllog-max-len -1", "CONFIG SET acllog-max-len x"]);
}

/// The `acl_access_denied_*` fields of INFO stats.
fn denied_counters(c: &mut Client) -> Vec<String> {
    let text = c.cmd(&["INFO", "stats"]).as_str();
    let wanted = ["auth", "cmd", "key", "channel", "db"].map(|w| format!("acl_access_denied_{w}:"));
    let lines: Vec<String> = text
        .lines()
        .filter(|l| wanted.iter().any(|w| l.starts_with(w.as_str())))
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), wanted.len(), "{text}");
    lines
}

#[test]
fn info_stats_count_denials() {
    let mut p = pair(2, &[]);
    p.same_line("ACL SETUSER st on >pw ~k* &ch* db=0 -@all +get +publish +select +eval");
    let mut d = Duo::login(&p, "st", "pw");
    d.same_lines(&[
        "GET x",
        "GET k1",
        "PING",
        "PUBLISH zz m",
        "SELECT 3",
        "AUTH st bad",
        "AUTH nobody bad",
        "SET k1 v",
        "GET x",
    ]);
    d.same(&["EVAL", "return server.pcall('get','zz')", "0"]);
    assert_eq!(denied_counters(&mut p.a), denied_counters(&mut p.b));
    // CONFIG RESETSTAT does not reset them.
    p.same_line("CONFIG RESETSTAT");
    let theirs = denied_counters(&mut p.b);
    assert!(theirs.iter().any(|l| !l.ends_with(":0")), "{theirs:?}");
    assert_eq!(denied_counters(&mut p.a), theirs);
}

/// `calls`, `rejected_calls` and `failed_calls` of `cmd` in INFO commandstats, or None when
/// it has no line.
fn command_counts(c: &mut Client, cmd: &str) -> Option<Vec<String>> {
    let text = c.cmd(&["INFO", "commandstats"]).as_str();
    let line = text.lines().find(|l| l.starts_with(&format!("cmdstat_{cmd}:")))?;
    let fields = line.split_once(':').unwrap().1.split(',');
    Some(
        fields
            .filter(|f| {
                ["calls=", "rejected_calls=", "failed_calls="].iter().any(|p| f.starts_with(p))
            })
            .map(str::to_string)
            .collect(),
    )
}

#[test]
fn commandstats_count_rejected_calls() {
    let mut p = pair(2, &[]);
    p.same_lines(&["CONFIG RESETSTAT", "ACL SETUSER st on >pw ~k* &ch* -@all +get +publish"]);
    let mut d = Duo::login(&p, "st", "pw");
    d.same_lines(&[
        "GET x",
        "GET k1",
        "GET x",
        "PING",
        "PUBLISH zz m",
        "PUBLISH ch1 m",
        "SET k1 v",
        "AUTH st bad",
    ]);
    for cmd in ["get", "ping", "publish", "set", "auth"] {
        let theirs = command_counts(&mut p.b, cmd);
        assert!(theirs.is_some(), "no cmdstat_{cmd} on the oracle");
        assert_eq!(command_counts(&mut p.a, cmd), theirs, "cmdstat_{cmd}");
    }
}
