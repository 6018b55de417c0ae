//! COMMANDLOG and SLOWLOG against Valkey 9.1: HELP, errors, and the three logs' entries
//! (with the parts that differ between two servers blanked: the time, the client's
//! address, and a slow entry's duration), their numbering, RESET and the length limits.

use super::common::diff::{same_as_valkey, Pair};
use super::common::Val;

#[test]
fn commandlog_errors_and_help_match_valkey() {
    same_as_valkey(&[
        "COMMANDLOG HELP",
        "COMMANDLOG",
        "COMMANDLOG GET",
        "COMMANDLOG GET 1",
        "COMMANDLOG GET -2 bad",
        "COMMANDLOG GET x slow",
        "COMMANDLOG GET 99999999999999999999 slow",
        "COMMANDLOG GET 1 bad",
        "COMMANDLOG GET 1 Slow",
        "COMMANDLOG GET 1 slow extra",
        "COMMANDLOG LEN",
        "COMMANDLOG LEN x",
        "COMMANDLOG LEN LARGE-REPLY",
        "COMMANDLOG RESET x",
        "COMMANDLOG RESET large-request",
        "COMMANDLOG FOO",
        "SLOWLOG HELP",
        "SLOWLOG GET -2",
        "SLOWLOG GET 1 2",
        "CONFIG GET commandlog-request-larger-than",
        "CONFIG GET commandlog-large-request-max-len",
        "CONFIG GET commandlog-execution-slower-than",
        "CONFIG GET slowlog-max-len",
        "CONFIG SET commandlog-request-larger-than -2",
        "CONFIG SET commandlog-large-reply-max-len -1",
        "CONFIG SET commandlog-reply-larger-than -1",
        "CONFIG GET commandlog-reply-larger-than",
    ]);
}

/// A log's entries with the time and the address blanked, and, for the slow log, the
/// duration.
fn blank(reply: Val, slow: bool) -> Val {
    let entries = reply.as_array().into_iter().map(|e| {
        let mut f = e.as_array();
        assert_eq!(f.len(), 6, "an entry has six fields: {f:?}");
        f[1] = Val::Int(0);
        if slow {
            f[2] = Val::Int(0);
        }
        f[4] = Val::bulk("");
        Val::Array(f)
    });
    Val::Array(entries.collect())
}

#[test]
fn the_three_logs_record_what_valkey_records() {
    let mut p = Pair::start(2, &[]);
    for line in [
        "CONFIG SET commandlog-request-larger-than 10",
        "CONFIG SET commandlog-reply-larger-than 10",
        "CONFIG SET commandlog-large-reply-max-len 3",
        "CONFIG SET slowlog-log-slower-than 0",
        "CLIENT SETNAME nm",
        "SET k xxxxxxxxxxxxxxxxxxxx",
        "GET k",
        "MGET k k nokey",
        "HSET h f v",
        "HGETALL h",
        "GET nokey",
    ] {
        p.same_line(line);
    }
    // Read the reply log first: reading a log writes a large reply of its own, whose size
    // holds the address (which differs), and that goes in the reply log.
    p.same_normalized("COMMANDLOG GET -1 large-reply", |v| blank(v, false));
    p.same_normalized("COMMANDLOG GET -1 large-request", |v| blank(v, false));
    p.same_normalized("COMMANDLOG GET 4 slow", |v| blank(v, true));
    p.same_normalized("SLOWLOG GET 2", |v| blank(v, true));
    p.same_line("COMMANDLOG LEN large-reply");
    p.same_line("COMMANDLOG RESET large-request");
    p.same_line("COMMANDLOG LEN large-request");
    p.same_line("SLOWLOG RESET");
    p.same_line("COMMANDLOG LEN slow");
    // The numbering goes on after a reset; with the threshold at -1 nothing is logged.
    p.same_line("CONFIG SET commandlog-request-larger-than -1");
    p.same_line("SET k xxxxxxxxxxxxxxxxxxxx");
    p.same_line("CONFIG SET commandlog-request-larger-than 30");
    p.same_line("SET k xxxxxxxxxxxxxxxxxxxx");
    p.same_normalized("COMMANDLOG GET -1 large-request", |v| blank(v, false));
}
