//! ACL checks around MULTI / EXEC against Valkey 9.1: a denied command is refused when
//! queued (and EXEC then aborts), and a command whose permission is taken away by another
//! client between queuing and EXEC gets the "ACLs rules changed" error in EXEC's reply,
//! for each kind of denial (command, key, channel, database); a user switched off keeps
//! its session.

use crate::{pair, Duo};

#[test]
fn denied_command_when_queued_aborts_exec() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        p.same_line("ACL SETUSER u on nopass ~k* &ch* -@all +multi +exec +discard +get +set");
        let mut d = Duo::login(&p, "u", "x");
        d.same_lines(&[
            "MULTI",
            "SET k1 v",
            "GET other",
            "PING",
            "PUBLISH ch m",
            "GET k1",
            "EXEC",
            "GET k1",
            "MULTI",
            "SET k1 v",
            "PING",
            "DISCARD",
            "MULTI",
            "SET k2 v",
            "EXEC",
            "GET k2",
        ]);
    }
}

#[test]
fn permissions_removed_between_queuing_and_exec() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        p.same_line("ACL SETUSER mx on nopass ~* &* +@all");
        let mut d = Duo::login(&p, "mx", "x");
        // By command.
        d.same_lines(&["MULTI", "SET a 1", "GET a", "INCR a"]);
        p.same_line("ACL SETUSER mx -set");
        d.same_lines(&["EXEC", "GET a"]);
        // By key, channel and database at once, one error each.
        d.same_lines(&["MULTI", "INCR a", "PUBLISH ch m", "SELECT 1", "GET a", "GET b"]);
        p.same_line("ACL SETUSER mx resetkeys ~b resetchannels db=0");
        d.same_lines(&["EXEC", "GET a"]);
        // A command denied when queued still aborts the transaction.
        d.same_lines(&["MULTI", "GET b"]);
        p.same_line("ACL SETUSER mx resetkeys ~c");
        d.same_lines(&["GET b", "EXEC"]);
    }
}

#[test]
fn a_user_switched_off_keeps_its_session() {
    let mut p = pair(2, &[]);
    p.same_line("ACL SETUSER mx on nopass ~* &* +@all");
    let mut d = Duo::login(&p, "mx", "x");
    d.same_lines(&["SET b v", "MULTI", "GET b"]);
    p.same_line("ACL SETUSER mx off");
    d.same_lines(&["EXEC", "GET b", "ACL WHOAMI", "AUTH mx x", "ACL WHOAMI"]);
}
