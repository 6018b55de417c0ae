//! Secrets kept out of SLOWLOG and MONITOR, against Valkey 9.1: passwords (and, for ACL
//! SETUSER and ACL GETUSER, every argument after the subcommand) shown as `(redacted)`,
//! AUTH and HELLO AUTH redacted in MONITOR while the admin commands (ACL, CONFIG) are not
//! shown there at all. Times, durations, ids and addresses are left out of the comparison.

use crate::common::Val;
use crate::{hello_shape, pair, Duo};

/// A SLOWLOG GET reply reduced to each entry's arguments and client name.
fn slowlog_args(v: Val) -> Val {
    let Val::Array(entries) = v else { return v };
    Val::Array(
        entries
            .iter()
            .map(|e| {
                let fields = e.as_array();
                assert_eq!(fields.len(), 6, "{e:?}");
                Val::Array(vec![fields[3].clone(), fields[5].clone()])
            })
            .collect(),
    )
}

/// A MONITOR line without its time stamp and `[db address]`.
fn monitor_text(raw: &[u8]) -> String {
    let line = String::from_utf8_lossy(raw).into_owned();
    assert!(line.starts_with('+'), "{line:?}");
    let at = line.find("] ").unwrap_or_else(|| panic!("{line:?}"));
    line[at + 2..].trim_end().to_string()
}

/// The commands with secrets, from a client logged in as `red`; then `SET done 1`.
fn commands_with_secrets(d: &mut Duo) {
    d.same_lines(&["AUTH red pw", "AUTH red wrong", "AUTH default x", "AUTH a b c"]);
    d.same_normalized("HELLO 2 AUTH red pw", hello_shape);
    d.same_normalized("HELLO 2 AUTH red pw SETNAME n1", hello_shape);
    d.same_lines(&[
        "HELLO 2 AUTH red wrong",
        "ACL SETUSER red >newpw <pw",
        "ACL SETUSER red2 on >p1 #5e884898da28047151d0e56f8dc6292773603d0dd6aabbdd62a11ef721d1542d",
        "ACL GETUSER red2",
        "ACL DRYRUN red2 get k",
        "CONFIG SET masterauth x",
        "CONFIG SET masteruser u",
        "CONFIG SET requirepass \"\"",
        "CONFIG SET requirepass \"\" masterauth y",
        "SET k v",
        "SET done 1",
    ]);
}

#[test]
fn slowlog_redacts_secrets() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        p.same_lines(&[
            "ACL SETUSER red on >pw ~* +@all",
            "CONFIG SET slowlog-log-slower-than 0",
            "SLOWLOG RESET",
        ]);
        let mut d = Duo::connect(&p);
        commands_with_secrets(&mut d);
        p.same_normalized("SLOWLOG GET 100", slowlog_args);
    }
}

#[test]
fn monitor_redacts_auth_and_hides_admin_commands() {
    let mut p = pair(2, &[]);
    p.same_line("ACL SETUSER red on >pw ~* +@all");
    let mut monitor = Duo::connect(&p);
    monitor.same_line("MONITOR");
    let mut d = Duo::connect(&p);
    commands_with_secrets(&mut d);
    let seen = |c: &mut crate::common::Client| {
        let mut lines = Vec::new();
        loop {
            let line = monitor_text(&c.read_raw());
            let done = line == "\"SET\" \"done\" \"1\"";
            lines.push(line);
            if done || lines.len() > 50 {
                return lines;
            }
        }
    };
    let theirs = seen(&mut monitor.b);
    assert!(theirs.iter().any(|l| l.contains("(redacted)")), "{theirs:?}");
    assert_eq!(seen(&mut monitor.a), theirs, "MONITOR (left: ferrokey, right: valkey 9.1)");
}
