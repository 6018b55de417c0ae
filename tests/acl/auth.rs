//! AUTH and HELLO AUTH against Valkey 9.1: the default user without a password, created,
//! disabled and `nopass` users, `requirepass` (the default user's password, NOAUTH before
//! authentication, which commands a client may send first), the commands every user may
//! run whatever its rules, and `acl-pubsub-default`. ACL WHOAMI after each step.

use crate::{hello_shape, pair, same_in_both_protocols, Duo};

#[test]
fn auth_against_the_default_user_without_password() {
    same_in_both_protocols(
        &[],
        &[
            "AUTH pass",
            "AUTH default pass",
            "AUTH default \"\"",
            "ACL WHOAMI",
            "AUTH a b c",
            "AUTH",
            "AUTH nosuch pass",
            "ACL WHOAMI",
        ],
    );
}

#[test]
fn auth_as_created_users() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        p.same_lines(&[
            "ACL SETUSER alice on >pw ~* +@all",
            "ACL SETUSER bob off >pw ~* +@all",
            "ACL SETUSER carol on nopass ~* +@all",
            "ACL SETUSER dave on ~* +@all",
            "AUTH alice pw",
            "ACL WHOAMI",
            "AUTH alice wrong",
            "ACL WHOAMI",
            "AUTH bob pw",
            "AUTH carol anything",
            "ACL WHOAMI",
            "AUTH dave x",
            "AUTH dave \"\"",
            "AUTH nosuch x",
            "AUTH ALICE pw",
            "ACL WHOAMI",
            "ACL SETUSER bob on",
            "AUTH bob pw",
            "ACL WHOAMI",
            "AUTH default x",
            "ACL WHOAMI",
            "ACL SETUSER alice >second",
            "AUTH alice second",
            "AUTH alice pw",
            "ACL SETUSER alice <pw",
            "AUTH alice pw",
            "ACL WHOAMI",
        ]);
    }
}

#[test]
fn hello_auth_and_setname() {
    let mut p = pair(2, &[]);
    p.same_lines(&["ACL SETUSER alice on >pw ~* +@all", "ACL SETUSER bob off >pw ~* +@all"]);
    let mut d = Duo::connect(&p);
    d.same_normalized("HELLO 3 AUTH alice pw SETNAME myname", hello_shape);
    d.proto = 3;
    d.same_lines(&["CLIENT GETNAME", "ACL WHOAMI"]);
    d.same_normalized("HELLO 2 auth alice pw", hello_shape);
    d.proto = 2;
    d.same_lines(&[
        "HELLO 3 AUTH alice wrong",
        "HELLO 2 AUTH nosuch x",
        "HELLO 3 AUTH bob pw",
        "HELLO 3 AUTH alice",
        "HELLO 3 AUTH",
        "HELLO 4 AUTH alice pw",
        "ACL WHOAMI",
        "CLIENT GETNAME",
    ]);
    d.same_normalized("HELLO 2 AUTH default x SETNAME other", hello_shape);
    d.same_lines(&["ACL WHOAMI", "CLIENT GETNAME"]);
}

#[test]
fn requirepass_protects_the_default_user() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        p.same_lines(&[
            "CONFIG SET requirepass secret",
            "CONFIG GET requirepass",
            "ACL GETUSER default",
            "ACL LIST",
            "ACL WHOAMI",
        ]);
        // A new client must authenticate first; only a few commands answer before that.
        let mut d = Duo::connect(&p);
        d.same_lines(&[
            "PING",
            "GET k",
            "ACL WHOAMI",
            "CLIENT SETNAME x",
            "HELLO",
            "HELLO 3",
            "HELLO 2 SETNAME x",
            "MULTI",
            "AUTH",
            "AUTH wrong",
            "AUTH default wrong",
            "AUTH nosuch secret",
            "PING",
            "AUTH secret",
            "ACL WHOAMI",
            "PING",
        ]);
        let mut d = Duo::connect(&p);
        d.same_normalized("HELLO 2 AUTH default secret", hello_shape);
        d.same_line("ACL WHOAMI");
        let mut d = Duo::connect(&p);
        d.same_lines(&["RESET", "PING", "QUIT"]);
        // Back to no password.
        p.same_lines(&[
            "CONFIG SET requirepass \"\"",
            "CONFIG GET requirepass",
            "ACL GETUSER default",
            "AUTH x",
        ]);
        let mut d = Duo::connect(&p);
        d.same_lines(&["PING", "ACL WHOAMI"]);
        // requirepass and the default user's own passwords are one thing.
        p.same_lines(&[
            "ACL SETUSER default >viaacl",
            "CONFIG GET requirepass",
            "CONFIG SET requirepass other",
            "ACL GETUSER default",
        ]);
    }
}

#[test]
fn commands_every_user_may_run() {
    let mut p = pair(2, &[]);
    p.same_line("ACL SETUSER only_get on nopass +get ~* &*");
    let mut d = Duo::login(&p, "only_get", "x");
    d.same_normalized("HELLO 2", hello_shape);
    d.same_lines(&[
        "AUTH only_get y",
        "CLIENT SETNAME x",
        "PING",
        "MULTI",
        "EXEC",
        "DISCARD",
        "GET k",
        "ACL WHOAMI",
        "RESET",
        "ACL WHOAMI",
        "AUTH only_get x",
        "QUIT",
    ]);
    assert!(d.a.is_closed() && d.b.is_closed());
}

#[test]
fn acl_pubsub_default() {
    same_in_both_protocols(
        &[],
        &[
            "CONFIG GET acl-pubsub-default",
            "ACL SETUSER before on",
            "CONFIG SET acl-pubsub-default allchannels",
            "CONFIG GET acl-pubsub-default",
            "ACL SETUSER after on",
            "ACL GETUSER before",
            "ACL GETUSER after",
            "ACL SETUSER after2 on (+get)",
            "ACL GETUSER after2",
            "ACL LIST",
            "CONFIG SET acl-pubsub-default resetchannels",
            "ACL SETUSER after reset",
            "ACL SETUSER third on",
            "ACL LIST",
            "CONFIG SET acl-pubsub-default foo",
            "CONFIG GET acl-pubsub-default",
        ],
    );
    let mut p = pair(2, &[]);
    p.same_line("CONFIG SET acl-pubsub-default allchannels");
    p.same_line("ACL SETUSER sub on nopass +@all");
    let mut d = Duo::login(&p, "sub", "x");
    d.same_lines(&["PUBLISH anything m", "SUBSCRIBE anything"]);
}
