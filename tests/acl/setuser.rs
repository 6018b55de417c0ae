//! ACL SETUSER's rule grammar against Valkey 9.1: every rule (flags, passwords and
//! hashes, key and channel patterns, read/write key permissions, commands, subcommands
//! and first arguments, categories, selectors, database rules) and every error text; then
//! how ACL GETUSER (a map under RESP3) and ACL LIST render the user, rule order included.
//! A rule that fails leaves the user as it was.

use crate::common::diff::Pair;
use crate::common::Val;
use crate::{pair, same_in_both_protocols};

/// A valid password hash: SHA-256 of "password", in lowercase hex.
const HASH: &str = "5e884898da28047151d0e56f8dc6292773603d0dd6aabbdd62a11ef721d1542d";

#[test]
fn flags_passwords_and_hashes() {
    let upper = HASH.to_uppercase();
    let short = &HASH[..63];
    let long = format!("{HASH}0");
    let not_hex = format!("{}g", &HASH[..63]);
    let lines = [
        "ACL SETUSER u1 on >pass1 >pass2".to_string(),
        "ACL GETUSER u1".into(),
        "ACL SETUSER u1 <pass1".into(),
        "ACL GETUSER u1".into(),
        "ACL SETUSER u1 <nothere".into(),
        format!("ACL SETUSER u1 #{HASH}"),
        format!("ACL SETUSER u1 #{HASH}"),
        "ACL GETUSER u1".into(),
        format!("ACL SETUSER u1 !{HASH}"),
        format!("ACL SETUSER u1 !{HASH}"),
        "ACL GETUSER u1".into(),
        format!("ACL SETUSER u1 #{upper}"),
        format!("ACL SETUSER u1 #{short}"),
        format!("ACL SETUSER u1 #{long}"),
        format!("ACL SETUSER u1 #{not_hex}"),
        "ACL SETUSER u1 #abc".into(),
        "ACL SETUSER u1 #".into(),
        "ACL SETUSER u1 !abc".into(),
        "ACL SETUSER u1 !".into(),
        "ACL SETUSER u1 nopass".into(),
        "ACL GETUSER u1".into(),
        "ACL SETUSER u1 >again".into(),
        "ACL GETUSER u1".into(),
        "ACL SETUSER u1 resetpass".into(),
        "ACL GETUSER u1".into(),
        "ACL SETUSER u1 off".into(),
        "ACL SETUSER u2 ON >a >b <a NOPASS".into(),
        "ACL SETUSER u3 on >".into(),
        "ACL GETUSER u3".into(),
        "ACL SETUSER u3 <".into(),
        "ACL SETUSER u4 on >x reset".into(),
        "ACL GETUSER u4".into(),
        "ACL SETUSER u5 on >x ~* +@all reset on".into(),
        "ACL SETUSER u6 skip-sanitize-payload".into(),
        "ACL GETUSER u6".into(),
        "ACL SETUSER u6 sanitize-payload".into(),
        "ACL GETUSER u6".into(),
        "ACL SETUSER u7 nosuchrule".into(),
        "ACL GETUSER u7".into(),
        // A failing rule leaves an existing user untouched and creates no new one.
        "ACL SETUSER u1 on >changed +nosuch".into(),
        "ACL GETUSER u1".into(),
        "ACL LIST".into(),
        "ACL USERS".into(),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    same_in_both_protocols(&[], &lines);
}

#[test]
fn key_patterns_and_read_write_permissions() {
    same_in_both_protocols(
        &[],
        &[
            "ACL SETUSER k1 ~app:* ~other",
            "ACL SETUSER k2 %R~r:* %W~w:* %RW~x %WR~y",
            "ACL SETUSER k3 %R~a %W~a",
            "ACL SETUSER k4 %R~a %W~a %RW~a ~a ~a ~b",
            "ACL SETUSER k5 %R",
            "ACL SETUSER k6 ~",
            "ACL GETUSER k1",
            "ACL GETUSER k2",
            "ACL GETUSER k3",
            "ACL GETUSER k4",
            "ACL GETUSER k5",
            "ACL GETUSER k6",
            "ACL SETUSER k7 %X~a",
            "ACL SETUSER k7 %~a",
            "ACL SETUSER k7 %",
            "ACL SETUSER k7 %RR~a",
            "ACL SETUSER k7 %r~a",
            "ACL SETUSER k7 %RX~a",
            "ACL SETUSER k7 %R*a",
            "ACL GETUSER k7",
            "ACL SETUSER k8 allkeys",
            "ACL SETUSER k8 ~foo",
            "ACL SETUSER k8 %R~foo",
            "ACL SETUSER k8 %W~foo",
            "ACL SETUSER k9 ~* ~foo",
            "ACL SETUSER k9 ~foo ~*",
            "ACL GETUSER k9",
            "ACL SETUSER k10 %R~* ~foo",
            "ACL SETUSER k10 %RW~*",
            "ACL GETUSER k10",
            "ACL SETUSER k10 resetkeys ~foo %R~bar",
            "ACL GETUSER k10",
            "ACL SETUSER k11 ~a resetkeys",
            "ACL SETUSER k12 ALLKEYS RESETKEYS %W~w",
            "ACL LIST",
        ],
    );
}

#[test]
fn channel_patterns() {
    same_in_both_protocols(
        &[],
        &[
            "ACL SETUSER c1 &news.* &sports",
            "ACL GETUSER c1",
            "ACL SETUSER c2 allchannels",
            "ACL GETUSER c2",
            "ACL SETUSER c2 &foo",
            "ACL SETUSER c3 &* &foo",
            "ACL SETUSER c4 &a &a &b",
            "ACL SETUSER c4 &",
            "ACL GETUSER c4",
            "ACL SETUSER c4 resetchannels &x",
            "ACL GETUSER c4",
            "ACL SETUSER c5 &a allchannels",
            "ACL SETUSER c6 &a resetchannels",
            "ACL SETUSER c7 &a &*",
            "ACL GETUSER c7",
            "ACL LIST",
        ],
    );
}

#[test]
fn commands_subcommands_and_first_args() {
    same_in_both_protocols(
        &[],
        &[
            "ACL SETUSER r1 +get +SET -get",
            "ACL GETUSER r1",
            "ACL SETUSER r2 +config|get +client|id",
            "ACL SETUSER r3 +config|GET +CONFIG|set",
            "ACL SETUSER r4 +select|0 +select|1",
            "ACL SETUSER r5 +get|x",
            "ACL GETUSER r2",
            "ACL GETUSER r3",
            "ACL GETUSER r4",
            "ACL GETUSER r5",
            "ACL SETUSER r6 +config|get|x",
            "ACL SETUSER r6 +acl|setuser|x",
            "ACL SETUSER r6 -select|0",
            "ACL SETUSER r6 +nosuchcmd",
            "ACL SETUSER r6 -nosuchcmd",
            "ACL SETUSER r6 +nosuch|sub",
            "ACL SETUSER r6 +config|nosuch",
            "ACL SETUSER r6 -config|nosuch",
            "ACL SETUSER r6 +",
            "ACL SETUSER r6 -",
            "ACL SETUSER r6 +|",
            "ACL SETUSER r6 +config|",
            "ACL GETUSER r6",
            "ACL SETUSER r7 allcommands -@dangerous",
            "ACL SETUSER r8 nocommands +@hash -hdel",
            "ACL SETUSER r9 +@all nocommands",
            "ACL SETUSER r10 ALLCOMMANDS",
            "ACL LIST",
        ],
    );
}

#[test]
fn every_category_and_unknown_ones() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        let cats: Vec<String> =
            p.b.cmd(&["ACL", "CAT"]).as_array().iter().map(Val::as_str).collect();
        assert!(cats.len() >= 21, "{cats:?}");
        for cat in &cats {
            p.same_lines(&[
                &format!("ACL SETUSER plus_{cat} +@{cat}"),
                &format!("ACL SETUSER minus_{cat} allcommands -@{cat}"),
                &format!("ACL SETUSER upper_{cat} +@{}", cat.to_uppercase()),
                &format!("ACL GETUSER plus_{cat}"),
                &format!("ACL GETUSER minus_{cat}"),
            ]);
        }
        let all_plus: Vec<String> = cats.iter().map(|c| format!("+@{c}")).collect();
        let all_minus: Vec<String> = cats.iter().map(|c| format!("-@{c}")).collect();
        p.same_line(&format!("ACL SETUSER every {}", all_plus.join(" ")));
        p.same_line(&format!("ACL SETUSER every {}", all_minus.join(" ")));
        p.same_lines(&[
            "ACL GETUSER every",
            "ACL SETUSER x +@nosuch",
            "ACL SETUSER x -@nosuch",
            "ACL SETUSER x +@",
            "ACL SETUSER x +@all|get",
            "ACL SETUSER x @read",
            "ACL GETUSER x",
            "ACL LIST",
        ]);
    }
}

#[test]
fn command_rules_collapse_as_valkey_renders_them() {
    same_in_both_protocols(
        &[],
        &[
            "ACL SETUSER a1 +@all -get +get",
            "ACL SETUSER a2 -@all +@read -get +get",
            "ACL SETUSER a3 +config -config +config|get",
            "ACL SETUSER a4 +config|get +config",
            "ACL SETUSER a5 -config +config|get +client|id",
            "ACL SETUSER a6 +config|get +config|set -config",
            "ACL SETUSER a7 +client|id -client +client|kill",
            "ACL SETUSER a8 +@all -@keyspace +del -@hash",
            "ACL SETUSER a9 +@read +@write -@read",
            "ACL SETUSER a10 +get +get -set -set",
            "ACL SETUSER a11 +@all -@all +get",
            "ACL SETUSER a12 +select|0 +select",
            "ACL SETUSER a13 +select +select|0",
            "ACL SETUSER a14 +config|get -@all +set",
            "ACL SETUSER a15 +@admin -config|get",
            "ACL SETUSER a16 -@all +config|get -@admin",
            "ACL GETUSER a1",
            "ACL GETUSER a6",
            "ACL GETUSER a13",
            "ACL LIST",
        ],
    );
}

#[test]
fn selectors_in_parentheses() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        p.same_lines(&[
            "ACL SETUSER s1 on nopass +set ~a (+get ~x*) (+set ~y* &ch db=2)",
            "ACL GETUSER s1",
            "ACL SETUSER s2 ()",
            "ACL GETUSER s2",
            "ACL SETUSER s3 (+get ~x*",
            "ACL SETUSER s3 (",
            "ACL SETUSER s3 )",
            "ACL SETUSER s3 +get ~x*)",
            "ACL GETUSER s3",
            "ACL SETUSER s4 (on)",
            "ACL SETUSER s4 (>pass)",
            "ACL SETUSER s4 (nopass)",
            "ACL SETUSER s4 (reset)",
            "ACL SETUSER s4 (clearselectors)",
            "ACL SETUSER s4 (nosuch)",
            "ACL SETUSER s4 (+nosuch)",
            "ACL SETUSER s4 (+get (+set))",
            "ACL SETUSER s4 (%R~a %W~b allchannels allkeys resetkeys)",
            "ACL GETUSER s4",
            "ACL SETUSER s1 clearselectors",
            "ACL GETUSER s1",
        ]);
        // A selector may be spread over several arguments.
        p.same(&["ACL", "SETUSER", "s5", "(+get", "~x*)", "(+set", "~y*", "db=1)"]);
        p.same(&["ACL", "SETUSER", "s6", "(+get", "~x*"]);
        p.same(&["ACL", "SETUSER", "s6", "(+get", "~x*", "(+set)"]);
        p.same(&["ACL", "SETUSER", "s6", "(+get  ~x*)"]);
        p.same(&["ACL", "SETUSER", "s6", "( +get ~x* )"]);
        p.same(&["ACL", "SETUSER", "s6", "(+get", "", "~x*)"]);
        p.same_lines(&["ACL GETUSER s5", "ACL GETUSER s6", "ACL LIST"]);
    }
}

#[test]
fn database_rules() {
    same_in_both_protocols(
        &[],
        &[
            "ACL SETUSER d1 db=0,1",
            "ACL SETUSER d2 db=3 db=5",
            "ACL SETUSER d3 db=3 alldbs",
            "ACL SETUSER d4 db=3 resetdbs",
            "ACL SETUSER d5 db=2,1,0",
            "ACL SETUSER d6 db=0,0,1",
            "ACL SETUSER d7 db=99999",
            "ACL SETUSER d8 DB=1 Db=2",
            "ACL SETUSER d9 ALLDBS",
            "ACL SETUSER d10 RESETDBS",
            "ACL SETUSER d11 db=1 (db=2 +get)",
            "ACL GETUSER d1",
            "ACL GETUSER d2",
            "ACL GETUSER d3",
            "ACL GETUSER d4",
            "ACL GETUSER d5",
            "ACL GETUSER d11",
            "ACL SETUSER bad db=x",
            "ACL SETUSER bad db=",
            "ACL SETUSER bad db=-1",
            "ACL SETUSER bad db=,0",
            "ACL SETUSER bad db=0,",
            "ACL SETUSER bad db=0,,1",
            "ACL SETUSER bad db=12345678987654321",
            "ACL SETUSER bad db=1.5",
            "ACL SETUSER bad db=+1",
            "ACL SETUSER bad db= 1",
            "ACL SETUSER bad db",
            "ACL GETUSER bad",
            "ACL LIST",
        ],
    );
}

#[test]
fn usernames() {
    for proto in [2, 3] {
        let mut p: Pair = pair(proto, &[]);
        p.same(&["ACL", "SETUSER", "user with space", "on", "nopass"]);
        p.same(&["ACL", "SETUSER", "nul\0user", "on"]);
        p.same(&["ACL", "SETUSER", "", "on"]);
        p.same(&["ACL", "GETUSER", ""]);
        p.same(&["ACL", "SETUSER", "UPPER", "on"]);
        p.same(&["ACL", "SETUSER", "ünïcode:*", "on"]);
        p.same(&["ACL", "SETUSER", "tab\tuser"]);
        p.same(&["ACL", "GETUSER", "upper"]);
        p.same(&["ACL", "GETUSER", "user with space"]);
        p.same_lines(&["ACL USERS", "ACL LIST"]);
    }
}
