//! Hash field expiration against Valkey 9.1: every TTL command, option, reply code and
//! error; expired fields hidden from reads (with active expiry off on both servers, so a
//! field past its time stays stored and only the reads' hiding is compared); active expiry
//! deleting fields and emptied hashes in real time; keyspace events.

use std::time::{Duration, Instant};

use super::common::diff::{same_as_valkey, same_as_valkey_with, Pair};
use super::common::{int, Val};

#[test]
fn differential_ttl_commands_and_errors() {
    same_as_valkey(&[
        "HSET k a 1 b 2 c 3",
        "HEXPIRE k 100 FIELDS 2 a zz",
        "OBJECT ENCODING k",
        "HTTL k FIELDS 3 a b zz",
        "HPTTL k FIELDS 1 c",
        "HEXPIRETIME k FIELDS 1 c",
        "HPEXPIRETIME nokey FIELDS 2 a b",
        "HEXPIRE k 100 FIELDS 0",
        "HEXPIRE k 100 FIELDS",
        "HEXPIRE k 100 FIELDS 2 a",
        "HEXPIRE k 100 FIELDS 1 a b",
        "HEXPIRE k 100 FIELDS -1 a",
        "HEXPIRE k 100 FIELDS 00 a",
        "HEXPIRE k 100 FIELDS x a",
        "HEXPIRE k -1 FIELDS 1 a",
        "HEXPIRE k -0 FIELDS 1 a",
        "HEXPIRE k abc FIELDS 1 a",
        "HEXPIRE k 100 NX XX FIELDS 1 a",
        "HEXPIRE k 100 GT LT FIELDS 1 a",
        "HEXPIRE k 100 foo 1 a",
        "HEXPIRE k 100 NX 1 a b",
        "HEXPIRE k 10 bogus FIELDS 1 a",
        "HEXPIRE k 10 a b FIELDS",
        "HEXPIRE k 100 FIELDS 1 a NX",
        "HEXPIRE k 9223372036854775 FIELDS 1 a",
        "HPEXPIRE k 9223372036854775807 FIELDS 1 a",
        "HPEXPIREAT k 9223372036854775807 FIELDS 1 a",
        "HPEXPIRETIME k FIELDS 1 a",
        "HEXPIRE k 100 FIELDS 1 a",
        "HEXPIRE nokey 100 FIELDS 2 a b",
        "HEXPIRE k 100 GT FIELDS 1 b",
        "HEXPIRE k 100 LT FIELDS 1 b",
        "HEXPIRE k 200 GT FIELDS 1 a",
        "HEXPIRE k 100 XX FIELDS 1 b",
        "HEXPIRE k 100 NX FIELDS 2 a b",
        "HEXPIRE k 100 NX NX FIELDS 1 b",
        "HTTL k FIELDS 2 a b",
        "HPERSIST k FIELDS 3 a b zz",
        "HPERSIST k FIELD 1 a",
        "HPERSIST k FIELDS x a",
        "HPERSIST k FIELDS 0 a",
        "HPERSIST nokey FIELDS 1 a",
        "HTTL k FIELDS 2 a b",
        "HTTL k FIELDS x a",
        "HTTL k FIELDS 0 a",
        "HTTL k FIELDS 2 a",
        "HTTL k FOO 1 a",
        "HTTL k FIELDS 1 a b",
        "HEXPIRE k 0 FIELDS 2 a c",
        "HGETALL k",
        "HEXPIREAT k 1 FIELDS 1 b",
        "EXISTS k",
        "SET s x",
        "HEXPIRE s 100 FIELDS 1 a",
        "HEXPIRE s -1 FIELDS 1 a",
        "HTTL s FIELDS 1 a",
        "HTTL s FIELDS 2 a",
        "HPERSIST s FIELDS 1 a",
        "HSET big f1 v f2 v",
        "HPEXPIRE big 1800 FIELDS 1 f1",
        "HTTL big FIELDS 2 f1 f2",
        "HPEXPIRE big 1200 FIELDS 1 f1",
        "HTTL big FIELDS 1 f1",
        "HEXPIREAT big 4000000000 FIELDS 1 f2",
        "HEXPIRETIME big FIELDS 1 f2",
        "HPEXPIRETIME big FIELDS 1 f2",
    ]);
}

#[test]
fn differential_hsetex_hgetex_hgetdel() {
    same_as_valkey(&[
        "HSETEX k FIELDS 1 a 1",
        "HSETEX k EX 100 FIELDS 2 a 1 b 2",
        "HTTL k FIELDS 3 a b c",
        "HSETEX k FNX EX 100 FIELDS 1 a 2",
        "HSETEX k FNX PX 100000 FIELDS 1 c 3",
        "HSETEX k FXX FIELDS 1 a 5",
        "HTTL k FIELDS 1 a",
        "HSETEX k FXX KEEPTTL FIELDS 1 b 5",
        "HTTL k FIELDS 1 b",
        "HSETEX k FXX FIELDS 2 b 6 zz 1",
        "HSETEX k FNX FXX FIELDS 1 b 6",
        "HSETEX k FNX FNX FIELDS 1 b 6",
        "HSETEX k EX 10 PX 100 FIELDS 1 b 6",
        "HSETEX k KEEPTTL EX 100 FIELDS 1 b 6",
        "HSETEX k EX 100 EX 100 FIELDS 1 b 6",
        "HSETEX k EX -1 FIELDS 1 b 6",
        "HSETEX k EX abc FIELDS 1 b 6",
        "HSETEX k EX 9223372036854775807 FIELDS 1 b 6",
        "HSETEX k EX 100 FIELDS 2 b 6",
        "HSETEX k EX 100 FIELDS 0 b 6",
        "HSETEX k EX 100 FIELDS 1 b",
        "HSETEX k FIELDS 1 b 6 7",
        "HSETEX k EX 10 FIELD 1 a 1",
        "HSETEX k bogus FIELDS 1 b 6",
        "HSETEX k FIELDS 1 a 1 EX 5",
        "HSETEX k EX",
        "HSETEX k EX 0 FIELDS 1 b 6",
        "HSETEX k EXAT 1 FIELDS 2 c 6 new 1",
        "HGETALL k",
        "HSETEX nokey FXX FIELDS 1 b 6",
        "EXISTS nokey",
        "HSETEX nokey2 PXAT 1 FIELDS 1 b 6",
        "EXISTS nokey2",
        "HSET g a 1 b 2 c 3",
        "HGETEX g FIELDS 2 a zz",
        "HGETEX g EX 100 FIELDS 2 a zz",
        "HTTL g FIELDS 1 a",
        "HGETEX g PERSIST FIELDS 2 a zz",
        "HTTL g FIELDS 1 a",
        "HGETEX g PXAT 4000000000000 FIELDS 1 a",
        "HPEXPIRETIME g FIELDS 1 a",
        "HGETEX g EXAT 1 FIELDS 1 a",
        "HGETEX g EX 0 FIELDS 1 b",
        "HGETALL g",
        "HGETEX g EX -1 FIELDS 1 c",
        "HGETEX g PERSIST EX 10 FIELDS 1 c",
        "HGETEX g EX 10 EX 10 FIELDS 1 c",
        "HGETEX g KEEPTTL FIELDS 1 c",
        "HGETEX g FIELDS 2 c",
        "HGETEX g bogus FIELDS 1 c",
        "HGETEX g EX 10 FIELDS x c",
        "HGETEX g EX 10 FIELD 1 c",
        "HGETEX nokey EX 10 FIELDS 1 c",
        "HGETEX nokey EX -1 FIELDS 1 c",
        "HGETDEL g FIELDS 1 zz",
        "HGETDEL g FIELDS 2 c c",
        "EXISTS g",
        "HGETDEL nokey FIELDS 1 a",
        "HGETDEL g FIELDS 0",
        "HGETDEL g FIELDS 0 a",
        "HGETDEL g FIELDS 2 a",
        "HGETDEL g FIELDS x a",
        "HGETDEL g FIELD 1 a",
        "SET s 1",
        "HGETDEL s FIELDS 1 a",
        "HGETEX s FIELDS 1 a",
        "HGETEX s EX -1 FIELDS 1 a",
        "HSETEX s FIELDS 1 a 1",
        "HSETEX s EX -1 FIELDS 1 a 1",
        "HSETEX s EX 1 FIELDS 2 a 1",
    ]);
}

#[test]
fn differential_expired_fields_are_hidden_until_reclaimed() {
    let lines_before = [
        "DEBUG SET-ACTIVE-EXPIRE 0",
        "HSET k a 1 b 2 c 3 d 4 e 5 f 6",
        "HSET keep x 1",
        "HPEXPIRE k 1 FIELDS 5 a b c d e",
    ];
    let lines_after = [
        "HLEN k",
        "HGETALL k",
        "HKEYS k",
        "HVALS k",
        "HEXISTS k a",
        "HSTRLEN k a",
        "HGET k a",
        "HMGET k a f",
        "HRANDFIELD k 5",
        "HRANDFIELD k -3 WITHVALUES",
        "HRANDFIELD k",
        "HSCAN k 0",
        "HTTL k FIELDS 2 a f",
        "HPERSIST k FIELDS 1 a",
        "HEXPIRE k 100 FIELDS 1 a",
        "HGETEX k EX 1 FIELDS 1 b",
        "HGETDEL k FIELDS 1 b",
        "HDEL k c",
        "HLEN k",
        "HINCRBY k c 5",
        "HINCRBYFLOAT k d 1.5",
        "HSETNX k e 9",
        "HSET k a 7",
        "HTTL k FIELDS 4 a c d e",
        "~HKEYS k",
        "HMGET k a b c d e f",
        "HLEN k",
        "COPY k k2",
        "HLEN k2",
        "~HKEYS k2",
        "HMGET k2 a b c d e f",
        "OBJECT ENCODING k",
        "SORT keep BY nosort GET k->a GET k->b",
        "HPEXPIRE k 1 FIELDS 5 a c d e f",
    ];
    let lines_last = [
        "HGETALL k",
        "HRANDFIELD k",
        "HRANDFIELD k 3",
        "HSCAN k 0",
        "EXISTS k",
        "HLEN k",
        "TYPE k",
        "HEXPIRE k 0 FIELDS 1 a",
        "EXISTS k",
    ];
    for proto in [2u8, 3] {
        let mut p = Pair::start(proto, &["--enable-debug-command", "yes"]);
        p.same_lines(&lines_before);
        std::thread::sleep(Duration::from_millis(20));
        p.same_lines(&lines_after);
        std::thread::sleep(Duration::from_millis(20));
        p.same_lines(&lines_last);
    }
}

/// Polls `line` on both servers until both answer `want` (active expiry runs on its own
/// clock), for at most 5 s.
fn wait_both(p: &mut Pair, line: &[&str], want: &Val) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let ours = p.a.cmd(line);
        let theirs = p.b.cmd(line);
        if &ours == want && &theirs == want {
            return;
        }
        assert!(Instant::now() < deadline, "{line:?}: ours {ours:?}, theirs {theirs:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn active_expiry_reclaims_fields_and_deletes_emptied_hashes_in_real_time() {
    let mut p = Pair::start(2, &[]);
    p.same_lines(&[
        "HSET h a 1 b 2 c 3",
        "HPEXPIRE h 50 FIELDS 2 a b",
        "HSET gone a 1",
        "HSETEX gone PX 50 FIELDS 1 b 2",
        "HPEXPIRE gone 60 FIELDS 1 a",
    ]);
    // HLEN counts stored fields, so it drops only when active expiry removes them.
    wait_both(&mut p, &["HLEN", "h"], &int(1));
    wait_both(&mut p, &["EXISTS", "gone"], &int(0));
    p.same_lines(&["HGETALL h", "HTTL h FIELDS 3 a b c", "DBSIZE"]);
    // Many hashes due at once are all reclaimed.
    for i in 0..300 {
        let key = format!("m{i}");
        p.same(&["HSET", &key, "a", "1", "b", "2"]);
        p.same(&["HPEXPIRE", &key, "30", "FIELDS", "2", "a", "b"]);
    }
    wait_both(&mut p, &["DBSIZE"], &int(1));
}

#[test]
fn differential_field_expiry_keyspace_events() {
    let mut p = Pair::start(2, &["--notify-keyspace-events", "KEA"]);
    let mut sub_a = super::common::Client::connect(p.ours.port);
    let mut sub_b = super::common::Client::connect(p.theirs.port);
    for s in [&mut sub_a, &mut sub_b] {
        s.cmd(&["PSUBSCRIBE", "__keyevent@*"]);
    }
    p.same_lines(&[
        "HSET k a 1 b 2 c 3 d 4",
        "HEXPIRE k 100 FIELDS 2 a zz",
        "HPEXPIREAT k 4000000000000 FIELDS 1 d",
        "HEXPIRE k 100 NX FIELDS 1 a",
        "HPERSIST k FIELDS 2 a zz",
        "HEXPIRE k 0 FIELDS 1 a",
        "HSETEX k EX 100 FIELDS 2 x 1 y 2",
        "HSETEX k KEEPTTL FIELDS 1 x 5",
        "HSETEX k PX 0 FIELDS 1 x 5",
        "HGETEX k EX 50 FIELDS 1 y",
        "HGETEX k PERSIST FIELDS 1 y",
        "HGETEX k FIELDS 1 y",
        "HGETEX k EX 0 FIELDS 1 y",
        "HGETDEL k FIELDS 2 c zz",
        "HSET j a 1",
        "HPEXPIRE j 10 FIELDS 1 a",
        "HSET j3 a 1",
        "HSETEX j3 PX 0 FIELDS 1 a 2",
        "HSET j4 a 1 b 2",
        "HGETDEL j4 FIELDS 2 a b",
    ]);
    // The last event: j's field expiring actively, then its deletion.
    p.same_lines(&["PUBLISH done x"]);
    let mut events = [Vec::new(), Vec::new()];
    for (i, s) in [&mut sub_a, &mut sub_b].into_iter().enumerate() {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let m = s.read().as_array();
            let channel = m[2].as_str();
            let key = m[3].as_str();
            events[i].push(format!("{channel} {key}"));
            if channel.ends_with(":del") && key == "j" {
                break;
            }
            assert!(Instant::now() < deadline, "no del of j: {:?}", events[i]);
        }
    }
    assert_eq!(events[0], events[1]);
}

#[test]
fn differential_command_info_of_the_field_ttl_commands() {
    same_as_valkey_with(
        2,
        &[],
        &[
            "COMMAND INFO hexpire hpexpire hexpireat hpexpireat httl hpttl hexpiretime",
            "COMMAND INFO hpexpiretime hpersist hsetex hgetex hgetdel",
        ],
    );
}
