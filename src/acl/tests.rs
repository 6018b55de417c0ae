//! Unit tests of the ACL model on a small command table of its own: rules and how they are
//! written back, the permission check, passwords, the file format.

use bytes::Bytes;

use super::catalog::CmdId;
use super::check::{both_ways, check, Denied, Reason, Request};
use super::selector::KeyPattern;
use super::{Acl, Catalog, SetError, User};
use crate::spec::table::{acl, flag, ks, range, Command};

static CONFIG_SUBS: &[Command<()>] = &[
    Command::new("config|get", -3, flag::ADMIN, acl::ADMIN | acl::SLOW, ()),
    Command::new("config|set", -4, flag::ADMIN, acl::ADMIN | acl::SLOW | acl::DANGEROUS, ()),
];

static TABLE: &[Command<()>] =
    &[
        Command::new("get", 2, flag::READONLY, acl::READ | acl::STRING | acl::FAST, ())
            .keys(&[range(ks::RO | ks::ACCESS, 1, 0, 1)]),
        Command::new("set", -3, flag::WRITE, acl::WRITE | acl::STRING | acl::SLOW, ())
            .keys(&[range(ks::RW | ks::ACCESS | ks::UPDATE, 1, 0, 1)]),
        Command::new("copy", -3, flag::WRITE, acl::KEYSPACE | acl::WRITE | acl::SLOW, ())
            .keys(&[range(ks::RO | ks::ACCESS, 1, 0, 1), range(ks::OW | ks::UPDATE, 2, 0, 1)]),
        Command::new("bitfield", -2, flag::WRITE, acl::WRITE | acl::SLOW, ()).keys(&[range(
            ks::RW | ks::ACCESS | ks::UPDATE | ks::VARIABLE_FLAGS,
            1,
            0,
            1,
        )]),
        Command::new("select", 2, 0, acl::FAST | acl::CONNECTION, ()),
        Command::new("publish", 3, flag::PUBSUB, acl::PUBSUB | acl::FAST, ()),
        Command::new("psubscribe", -2, flag::PUBSUB, acl::PUBSUB | acl::SLOW, ()),
        Command::new("auth", -2, flag::NO_AUTH, acl::FAST | acl::CONNECTION, ()),
        Command::container("config", -2, 0, acl::SLOW, CONFIG_SUBS),
    ];

fn catalog() -> Catalog {
    Catalog::build(TABLE.iter())
}

fn user(rules: &str) -> User {
    let rules: Vec<&[u8]> = rules.split(' ').map(str::as_bytes).collect();
    User::with_rules(None, b"u", &rules, &catalog(), false).expect("valid rules")
}

fn set_error(rules: &str) -> String {
    let rules: Vec<&[u8]> = rules.split(' ').map(str::as_bytes).collect();
    let e = User::with_rules(None, b"u", &rules, &catalog(), false).expect_err("refused");
    String::from_utf8(e).unwrap()
}

fn run(u: &User, words: &str, db: usize) -> Result<(), Denied> {
    let cat = catalog();
    let (cmd, id, argv) = command_line(&cat, words);
    check(u, &cat, &Request { cmd, id, argv: &argv, db, databases: 16 })
}

/// The table entry, its id and the arguments of a command line.
fn command_line(cat: &Catalog, words: &str) -> (&'static Command<()>, CmdId, Vec<Bytes>) {
    let argv: Vec<Bytes> = words.split(' ').map(|w| Bytes::copy_from_slice(w.as_bytes())).collect();
    let top = TABLE.iter().find(|c| c.name == words.split(' ').next().unwrap()).unwrap();
    let cmd = if top.subcommands.is_empty() {
        top
    } else {
        top.subcommands
            .iter()
            .find(|s| s.name.ends_with(&words.split(' ').nth(1).unwrap()))
            .unwrap()
    };
    (cmd, cat.id_of(cmd).unwrap(), argv)
}

fn denied(reason: Reason, pos: usize) -> Result<(), Denied> {
    Err(Denied { reason, pos })
}

#[test]
fn the_catalog_numbers_commands_and_subcommands() {
    let cat = catalog();
    let config = cat.find(b"CONFIG").unwrap();
    assert_eq!(cat.get(config).subs.len(), 2);
    let get = cat.find(b"config|GET").unwrap();
    assert_eq!(cat.get(get).parent, Some(config));
    assert_eq!(cat.find(b"get|x"), None, "no subcommands");
    assert_eq!(cat.find(b"config|get|x"), None);
    for c in TABLE.iter().chain(CONFIG_SUBS) {
        assert_eq!(cat.get(cat.id_of(c).unwrap()).name, c.name);
    }
}

#[test]
fn rules_are_written_back_as_valkey_writes_them() {
    let u = user("on >p1 ~app:* %R~ro:* &ch* +@read +@string -set db=1,0 (+get ~x*)");
    assert_eq!(
        String::from_utf8(u.describe()).unwrap(),
        "on #f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a ~app:* %R~ro:* \
         resetchannels &ch* db=0,1 -@all +@read +@string -set (~x* resetchannels -@all +get)"
    );
    // A later rule replaces the one it overrides; a command replaces its subcommands' rules.
    let u = user("+@all -get +get +config|get +config -config|set +select|0");
    assert_eq!(
        String::from_utf8(u.root().describe_commands()).unwrap(),
        "+@all +get +config -config|set +select|0"
    );
    // Patterns: permissions merge; %RW~ is ~.
    let u = user("~a %R~a %W~b %RW~c");
    assert_eq!(String::from_utf8(u.root().describe_keys()).unwrap(), "~a %W~b ~c");
}

#[test]
fn rule_errors_name_the_rule() {
    assert_eq!(
        set_error("+nosuch"),
        "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL"
    );
    assert_eq!(set_error("+config|get|x"), "Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is not supported");
    assert_eq!(
        set_error("~* ~a"),
        format!("Error in ACL SETUSER modifier '~a': {}", SetError::KeysAfterAll.text())
    );
    assert_eq!(set_error("%X~a"), "Error in ACL SETUSER modifier '%X~a': Syntax error");
    assert_eq!(
        set_error("db=-1"),
        "Error in ACL SETUSER modifier 'db=-1': The provided database ID is out of range"
    );
    assert_eq!(
        set_error("#abc"),
        format!("Error in ACL SETUSER modifier '#abc': {}", SetError::BadHash.text())
    );
    assert_eq!(set_error("(+get"), "Unmatched parenthesis in acl selector starting at '(+get'.");
}

#[test]
fn passwords_are_checked_against_their_hashes() {
    let u = user("on >secret >other");
    assert!(u.accepts(b"secret") && u.accepts(b"other"));
    assert!(!u.accepts(b"wrong"));
    assert!(!user("off >secret").accepts(b"secret"), "a user that is off");
    assert!(user("on nopass").accepts(b"anything"));
    assert!(u.passwords.iter().all(|p| p.len() == 64), "only hashes are kept");
}

#[test]
fn checks_report_the_most_specific_refusal() {
    let u = user("on ~app:* %R~ro:* &news.* +@all -select");
    assert_eq!(run(&u, "get app:1", 0), Ok(()));
    assert_eq!(run(&u, "get other", 0), denied(Reason::Key, 1));
    assert_eq!(run(&u, "set ro:1 v", 0), denied(Reason::Key, 1));
    assert_eq!(run(&u, "get ro:1", 0), Ok(()));
    assert_eq!(run(&u, "copy ro:1 app:2", 0), Ok(()));
    assert_eq!(run(&u, "copy app:1 ro:2", 0), denied(Reason::Key, 2));
    assert_eq!(run(&u, "select 1", 0), denied(Reason::Command, 0));
    assert_eq!(run(&u, "publish news.x m", 0), Ok(()));
    assert_eq!(run(&u, "publish sport m", 0), denied(Reason::Channel, 1));
    // A PSUBSCRIBE pattern is compared literally.
    assert_eq!(run(&u, "psubscribe news.*", 0), Ok(()));
    assert_eq!(run(&u, "psubscribe news.a*", 0), denied(Reason::Channel, 1));
    // AUTH never needs a permission.
    assert_eq!(run(&user("on -@all"), "auth x", 0), Ok(()));
    // Selectors: any one may allow; else the most specific refusal wins.
    let u = user("on -@all (+get ~a*) (+set ~b*)");
    assert_eq!(run(&u, "get a1", 0), Ok(()));
    assert_eq!(run(&u, "set b1 v", 0), Ok(()));
    assert_eq!(run(&u, "get b1", 0), denied(Reason::Key, 1));
    assert_eq!(run(&u, "config get x", 0), denied(Reason::Command, 0));
}

#[test]
fn databases_are_checked_by_argument_then_current() {
    let u = user("on ~* &* +@all db=0,1");
    assert_eq!(run(&u, "select 1", 0), Ok(()));
    assert_eq!(run(&u, "select 2", 0), denied(Reason::Database, 1));
    // An id out of range is the command's own error.
    assert_eq!(run(&u, "select 99", 0), Ok(()));
    assert_eq!(run(&u, "get k", 2), denied(Reason::Database, 0));
    assert_eq!(run(&u, "copy a b DB 5", 0), denied(Reason::Database, 4));
    assert_eq!(run(&u, "copy a b DB 1", 2), denied(Reason::Database, 0));
    // Keyless, not of the keyspace: any database.
    assert_eq!(run(&u, "publish c m", 5), Ok(()));
}

#[test]
fn prefix_patterns_match_as_globs_do() {
    let long = "session:user:";
    for (pattern, key) in [
        ("app:*", "app:1"),
        ("app:*", "app:"),
        ("app:*", "ap"),
        ("app:*", ""),
        ("a*", "b"),
        ("app:*", "app:12345678"),
        ("app:*", "apq:12345678"),
        ("app:*", "bpp:12345678"),
        ("session:user:*", "session:user:42"),
        ("session:user:*", "session:user:"),
        ("session:user:*", "session:usex:42"),
        ("session:user:*", "session:"),
        ("session:user:*", long),
        ("12345678*", "12345678"),
        ("12345678*", "12345679"),
        ("12345678*", "1234567"),
        ("123456789*", "12345678"),
        ("123456789*", "123456789abc"),
    ] {
        let p = KeyPattern::new(pattern.as_bytes(), 3);
        assert!(p.prefix_only, "{pattern}");
        let glob = crate::config::glob::glob_match(pattern.as_bytes(), key.as_bytes(), false);
        assert_eq!(p.matches(key.as_bytes()), glob, "{pattern} {key}");
    }
}

#[test]
fn the_default_user_and_its_password() {
    let mut acl = Acl::new();
    assert!(!acl.auth_required());
    assert!(acl.default_user().unrestricted());
    acl.set_default_password(b"pw");
    assert!(acl.auth_required());
    assert_eq!(acl.authenticate(b"default", b"pw"), Some(super::DEFAULT_USER));
    assert_eq!(acl.authenticate(b"default", b"no"), None);
    assert_eq!(acl.delete(b"default"), None, "the default user stays");
    acl.set_default_password(b"");
    assert!(!acl.auth_required());
}

#[test]
fn acl_files_round_trip_and_collect_every_error() {
    let cat = catalog();
    let text = b"user alice on >pw ~a* +get\nuser default on nopass ~* &* +@all\n";
    let users = super::file::parse(text, "users.acl", &cat, false).unwrap();
    let mut acl = Acl::new();
    acl.replace_all(users);
    assert_eq!(super::file::render(&acl), b"user alice on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~a* resetchannels -@all +get\nuser default on nopass ~* &* +@all\n".to_vec());
    let e =
        super::file::parse(b"user a +nosuch\nbad line\nuser a on\n", "f", &cat, false).unwrap_err();
    assert_eq!(
        e,
        "f:1: Error in applying operation '+nosuch': Unknown command or category name in ACL. \
         f:2 should start with user keyword followed by the username. \
         WARNING: Duplicate user 'a' found on line 3. \
         WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
    );
}

#[test]
fn the_quick_check_agrees_with_the_full_one() {
    // The quick path decides selectors with every database, the command's bit and at most
    // one fixed key; each selector here is judged both ways on each line, in two databases.
    let users = [
        "on nopass ~* &* +@all",
        "on nopass ~app:* +@all",
        "on nopass %R~app:* %W~w:* +@all",
        "on nopass %W~app:* +get +set +bitfield",
        "on nopass ~12345678* -@all +get +set",
        "on nopass ~a?p:* +@all -set",
        "on nopass resetkeys +@all",
        "on nopass ~* +@all db=1",
        "on nopass ~app:* &news +@all",
        "on nopass ~* resetchannels +@all -config +config|get",
    ];
    let lines = [
        "get app:1",
        "get w:1",
        "get app",
        "get 12345678x",
        "get 1234567",
        "set app:1 v",
        "set w:1 v",
        "set w:1 v get",
        "set app:1 v GET",
        "bitfield app:1 get u8 0",
        "bitfield w:1 get u8 0",
        "bitfield w:1 set u8 0 1",
        "bitfield app:1 incrby u8 0 1",
        "copy app:1 app:2",
        "copy app:1 w:2",
        "select 1",
        "publish news m",
        "publish other m",
        "psubscribe n*",
        "auth x",
        "config get maxmemory",
        "config set maxmemory 0",
    ];
    let cat = catalog();
    for rules in users {
        let u = user(rules);
        for words in lines {
            let (cmd, id, argv) = command_line(&cat, words);
            for db in [0, 1] {
                let req = Request { cmd, id, argv: &argv, db, databases: 16 };
                for s in &u.selectors {
                    let (quick, full) = both_ways(s, &cat, &req);
                    assert_eq!(quick, full, "{rules:?} {words:?} db {db}");
                }
            }
        }
    }
}
