//! Clients dropped by ACL changes, against Valkey 9.1: ACL DELUSER closes every connection
//! logged in as the deleted user (one in MULTI included) and no other; ACL SETUSER that
//! takes a channel away closes the subscribers of that channel (a pattern subscription is
//! matched literally) while those still permitted stay subscribed.

use std::io::{BufRead, ErrorKind, Write};
use std::time::Duration;

use crate::common::Client;
use crate::{pair, same_raw, Duo};

/// Whether the server closed `c`: a PING gets end of file or a reset instead of a reply
/// (None). A server that neither answers nor closes within 5 seconds fails the test. A
/// live connection's raw reply is returned, for comparison.
fn ping_or_closed(c: &mut Client) -> Option<Vec<u8>> {
    let _ = c.stream.get_mut().write_all(&Client::encode(&[b"PING"]));
    c.stream.get_ref().set_read_timeout(Some(Duration::from_secs(5))).ok();
    match c.stream.fill_buf() {
        Ok([]) => None,
        Ok(_) => Some(c.read_raw()),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
            panic!("the server neither answered PING nor closed the connection")
        }
        Err(_) => None,
    }
}

/// Both servers closed `d`'s clients (`closed`), or both answered PING alike.
pub fn check_closed(d: &mut Duo, closed: bool, what: &str) {
    let ours = ping_or_closed(&mut d.a);
    let theirs = ping_or_closed(&mut d.b);
    assert_eq!(theirs.is_none(), closed, "the oracle's {what}");
    assert_eq!(ours.is_none(), closed, "ferrokey's {what}");
    if let (Some(ours), Some(theirs)) = (ours, theirs) {
        same_raw(d.proto, what, &ours, &theirs);
    }
}

#[test]
fn deleting_a_user_closes_its_connections() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        p.same_lines(&[
            "ACL SETUSER alice on nopass ~* &* +@all",
            "ACL SETUSER bob on nopass ~* &* +@all",
        ]);
        let mut alice1 = Duo::login(&p, "alice", "x");
        let mut alice2 = Duo::login(&p, "alice", "x");
        let mut bob = Duo::login(&p, "bob", "x");
        alice2.same_lines(&["MULTI", "SET k v"]);
        p.same_lines(&["ACL DELUSER alice", "ACL USERS"]);
        check_closed(&mut alice1, true, "client of the deleted user");
        check_closed(&mut alice2, true, "client of the deleted user in MULTI");
        check_closed(&mut bob, false, "client of another user");
        p.same_lines(&["GET k", "ACL WHOAMI"]);
    }
}

#[test]
fn losing_a_channel_closes_its_subscribers() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        p.same_line("ACL SETUSER sb on nopass ~* resetchannels &news.* &sports +@all");
        let subscribe = |p: &crate::common::diff::Pair, line: &str| {
            let mut d = Duo::login(p, "sb", "x");
            d.same_line(line);
            d
        };
        let mut exact = subscribe(&p, "SUBSCRIBE news.1");
        let mut pattern = subscribe(&p, "PSUBSCRIBE news.*");
        let mut shard = subscribe(&p, "SSUBSCRIBE news.2");
        let mut sports = subscribe(&p, "SUBSCRIBE sports");
        let mut idle = Duo::login(&p, "sb", "x");
        // news.1 stays permitted; the pattern news.* is no longer (patterns match literally).
        p.same_line("ACL SETUSER sb resetchannels &news.1 &news.2 &sports");
        check_closed(&mut pattern, true, "pattern subscriber of news.*");
        check_closed(&mut exact, false, "subscriber of news.1");
        check_closed(&mut shard, false, "shard subscriber of news.2");
        // Now only sports.
        p.same_line("ACL SETUSER sb resetchannels &sports");
        check_closed(&mut exact, true, "subscriber of news.1");
        check_closed(&mut shard, true, "shard subscriber of news.2");
        check_closed(&mut sports, false, "subscriber of sports");
        check_closed(&mut idle, false, "client of the user with no subscription");
        p.same_lines(&["PUBSUB NUMSUB news.1 sports", "PUBSUB NUMPAT"]);
    }
}
