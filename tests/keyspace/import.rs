//! `import-mode` and CLIENT IMPORT-SOURCE against Valkey 9.1: with the mode on nothing expires
//! in the background, other clients' reads do not see keys past their time but leave them in
//! place, and the import source (a sync tool's connection) sees them as they were.

use std::time::Duration;

use crate::common::{start, start_valkey, Client, Val};

/// The replies of one scenario on the server at `port`: an import source and a plain client.
fn transcript(port: u16) -> Vec<Val> {
    let (mut src, mut other) = (Client::connect(port), Client::connect(port));
    let mut out = Vec::new();
    let run = |out: &mut Vec<Val>, c: &mut Client, line: &str| {
        let args: Vec<&str> = line.split(' ').collect();
        out.push(c.cmd(&args));
    };
    run(&mut out, &mut src, "CLIENT IMPORT-SOURCE ON");
    run(&mut out, &mut src, "CLIENT IMPORT-SOURCE OFF");
    run(&mut out, &mut src, "CONFIG SET import-mode yes");
    for line in ["CLIENT IMPORT-SOURCE ON", "CLIENT IMPORT-SOURCE maybe", "CLIENT IMPORT-SOURCE"] {
        run(&mut out, &mut src, line);
    }
    let flags = |c: &mut Client| {
        let info = c.cmd(&["CLIENT", "INFO"]).as_str();
        Val::bulk(info.split(' ').find(|f| f.starts_with("flags=")).unwrap_or_default())
    };
    out.push(flags(&mut src));
    for line in ["SET k1 v PX 100", "SET k2 v PX 100", "SET k3 5 PX 100", "SET plain v"] {
        run(&mut out, &mut other, line);
    }
    run(&mut out, &mut other, "HSET h f v");
    run(&mut out, &mut other, "PEXPIRE h 100");
    std::thread::sleep(Duration::from_millis(350));
    // Nothing expired in the background.
    run(&mut out, &mut other, "DBSIZE");
    for line in ["GET k1", "TTL k2", "EXISTS k2", "DBSIZE"] {
        run(&mut out, &mut other, line);
    }
    for line in ["GET k2", "TTL k2", "PTTL k3", "EXISTS k3", "HGET h f", "DBSIZE", "INCR k3"] {
        run(&mut out, &mut src, line);
    }
    let mut keys = src.cmd(&["KEYS", "*"]).as_array();
    keys.sort_by_key(|v| format!("{v:?}"));
    out.push(Val::Array(keys));
    // A plain client's write treats the key as gone and replaces it.
    for line in ["APPEND k2 x", "GET k2", "DBSIZE"] {
        run(&mut out, &mut other, line);
    }
    run(&mut out, &mut src, "CONFIG SET import-mode no");
    run(&mut out, &mut src, "GET k3");
    out.push(flags(&mut src));
    run(&mut out, &mut src, "CLIENT IMPORT-SOURCE OFF");
    out.push(flags(&mut src));
    out
}

#[test]
fn import_mode_and_import_source_as_valkey() {
    let (ours, theirs) = (start(&[]), start_valkey(&[]));
    assert_eq!(transcript(ours.port), transcript(theirs.port));
    // With the mode off again, active expiry takes what was left.
    let mut c = Client::connect(ours.port);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while c.cmd(&["DBSIZE"]) != Val::Int(2) {
        assert!(std::time::Instant::now() < deadline, "active expiry did not resume");
        std::thread::sleep(Duration::from_millis(20));
    }
}
