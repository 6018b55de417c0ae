//! The ACL subcommands other than SETUSER against Valkey 9.1: GETUSER, DELUSER, USERS,
//! LIST, WHOAMI, CAT (every category), GENPASS (random: its length and alphabet only),
//! DRYRUN (every kind of denial), HELP, and the errors of each (unknown subcommand, wrong
//! arity, LOAD and SAVE without an aclfile).

use std::collections::BTreeSet;

use crate::common::Val;
use crate::{pair, same_in_both_protocols};

#[test]
fn getuser_deluser_users_list() {
    same_in_both_protocols(
        &[],
        &[
            "ACL GETUSER default",
            "ACL GETUSER nosuch",
            "ACL GETUSER",
            "ACL GETUSER a b",
            "ACL SETUSER c1 on nopass ~* +@all",
            "ACL SETUSER c2",
            "ACL SETUSER c3 off",
            "ACL USERS",
            "ACL LIST",
            "ACL DELUSER default",
            "ACL DELUSER c1 default",
            "ACL USERS",
            "ACL DELUSER c1 c2 nosuch c1",
            "ACL DELUSER nosuch",
            "ACL DELUSER",
            "ACL USERS",
            "ACL USERS x",
            "ACL LIST x",
            "ACL DELUSER C3",
            "ACL DELUSER c3",
            "ACL LIST",
            "acl users",
        ],
    );
}

#[test]
fn whoami_help_and_errors() {
    same_in_both_protocols(
        &[],
        &[
            "ACL WHOAMI",
            "ACL WHOAMI x",
            "ACL HELP",
            "ACL help",
            "ACL HELP x",
            "ACL",
            "ACL NOSUCH",
            "ACL NOSUCH a b",
            "ACL SETUSER",
            "ACL LOAD x",
            "ACL SAVE x",
            "ACL LOG 1 2",
            "ACL LOG RESET x",
            "ACL CAT read write",
            "ACL GENPASS 1 2",
            "ACL DRYRUN",
            "ACL DRYRUN default",
        ],
    );
}

#[test]
fn load_and_save_without_an_aclfile() {
    same_in_both_protocols(&[], &["ACL LOAD", "ACL SAVE", "CONFIG GET aclfile"]);
}

/// Every command name (subcommands as `container|sub`) that the server's COMMAND reply
/// describes.
fn all_command_names(c: &mut crate::common::Client) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for entry in c.cmd(&["COMMAND"]).as_array() {
        let fields = entry.as_array();
        names.insert(fields[0].as_str());
        for sub in fields[9].as_array() {
            names.insert(sub.as_array()[0].as_str());
        }
    }
    names
}

#[test]
fn cat_lists_categories_and_their_commands() {
    let mut p = pair(2, &[]);
    p.same_lines(&["ACL CAT", "ACL CAT nosuch", "ACL CAT \"\"", "ACL CAT @read"]);
    // Valkey lists a category's commands in hash order, and ferrokey may lack Valkey's
    // newest commands: compare the sets over the commands both servers have.
    let shared: BTreeSet<String> =
        all_command_names(&mut p.a).intersection(&all_command_names(&mut p.b)).cloned().collect();
    assert!(shared.len() > 200, "only {} commands in common", shared.len());
    let cats: Vec<String> = p.b.cmd(&["ACL", "CAT"]).as_array().iter().map(Val::as_str).collect();
    for cat in cats.iter().chain([&"READ".to_string(), &"Dangerous".to_string()]) {
        let listed = |v: Val| -> BTreeSet<String> {
            v.as_array().iter().map(Val::as_str).filter(|n| shared.contains(n)).collect()
        };
        let ours = listed(p.a.cmd(&["ACL", "CAT", cat]));
        let theirs = listed(p.b.cmd(&["ACL", "CAT", cat]));
        assert!(!theirs.is_empty(), "ACL CAT {cat}");
        assert_eq!(ours, theirs, "ACL CAT {cat} (left: ferrokey, right: valkey 9.1)");
    }
}

#[test]
fn genpass_lengths_and_errors() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        for (args, len) in
            [(&[][..], 64), (&["256"], 64), (&["1"], 1), (&["5"], 2), (&["4096"], 1024)]
        {
            let mut cmd = vec!["ACL", "GENPASS"];
            cmd.extend_from_slice(args);
            for c in [&mut p.a, &mut p.b] {
                let pass = c.cmd(&cmd);
                let Val::Bulk(pass) = pass else { panic!("{cmd:?}: {pass:?}") };
                assert_eq!(pass.len(), len, "{cmd:?}");
                assert!(pass.iter().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b)));
            }
        }
        // Random: two passwords differ.
        assert_ne!(p.a.cmd(&["ACL", "GENPASS"]), p.a.cmd(&["ACL", "GENPASS"]));
        p.same_lines(&[
            "ACL GENPASS 0",
            "ACL GENPASS -1",
            "ACL GENPASS 4097",
            "ACL GENPASS x",
            "ACL GENPASS 1.5",
            "ACL GENPASS 99999999999999999999",
            "ACL GENPASS \"\"",
        ]);
    }
}

#[test]
fn dryrun_allowed_and_denied() {
    same_in_both_protocols(
        &[],
        &[
            "ACL SETUSER u1 on nopass ~app:* +@read",
            "ACL SETUSER u2 on nopass ~* +@all resetchannels &news.*",
            "ACL SETUSER u3 on nopass db=0 -@all +get +select ~x",
            "ACL SETUSER u4 on nopass -config +config|get +client|id",
            "ACL SETUSER u5 off nopass ~* +@all",
            "ACL DRYRUN default get k",
            "ACL DRYRUN default set k v",
            "ACL DRYRUN u1 get app:1",
            "ACL DRYRUN u1 get other",
            "ACL DRYRUN u1 mget app:1 other app:2",
            "ACL DRYRUN u1 set app:1 v",
            "ACL DRYRUN u1 publish ch m",
            "ACL DRYRUN u2 publish ch m",
            "ACL DRYRUN u2 publish news.x m",
            "ACL DRYRUN u2 subscribe news.x other",
            "ACL DRYRUN u2 psubscribe news.*",
            "ACL DRYRUN u2 psubscribe news.x",
            "ACL DRYRUN u2 ssubscribe news.x",
            "ACL DRYRUN u3 select 2",
            "ACL DRYRUN u3 select 0",
            "ACL DRYRUN u3 get y",
            "ACL DRYRUN u3 set x v",
            "ACL DRYRUN u4 config get x",
            "ACL DRYRUN u4 config set x y",
            "ACL DRYRUN u4 client id",
            "ACL DRYRUN u4 client kill x",
            "ACL DRYRUN u5 get k",
            "ACL DRYRUN nosuch get k",
            "ACL DRYRUN default nosuchcmd",
            "ACL DRYRUN default config nosuchsub",
            "ACL DRYRUN default get",
            "ACL DRYRUN default get a b",
            "ACL DRYRUN u4 config",
            "ACL DRYRUN default GET k",
            "ACL DRYRUN u2 move k 1",
            "ACL DRYRUN u3 move x 1",
            "ACL DRYRUN u3 swapdb 0 1",
        ],
    );
}

/// Valkey 9.1 names the command where the database belongs when the root selector denies
/// a keyless command by database and another selector denies it by command ("access
/// database flushall").
#[test]
fn dryrun_database_denial_of_a_keyless_command() {
    same_in_both_protocols(
        &[],
        &[
            "ACL SETUSER m on nopass ~* +@all db=1 (db=0 +get ~k)",
            "ACL DRYRUN m flushall",
            "ACL DRYRUN m get k",
            "ACL DRYRUN m get j",
            "ACL DRYRUN m set k v",
            "ACL DRYRUN m select 1",
            "ACL DRYRUN m select 0",
            "ACL DRYRUN m select 2",
        ],
    );
}
