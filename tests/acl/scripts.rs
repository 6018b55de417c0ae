//! ACL checks inside Lua scripts against Valkey 9.1: `server.call` and `server.pcall` of a
//! command the user may not run, a key, channel or database it may not touch (the "ACL
//! failure in script" texts, with and without the script location), declared KEYS checked
//! before the script runs, and `server.acl_check_cmd` answering true, false or an error.

use crate::{pair, Duo};

/// Run each script (no keys but those given) on both servers as the logged-in user.
fn evals(d: &mut Duo, scripts: &[(&str, &[&str])]) {
    for (body, keys) in scripts {
        let numkeys = keys.len().to_string();
        let mut argv = vec!["EVAL", body, &numkeys];
        argv.extend_from_slice(keys);
        d.same(&argv);
    }
}

#[test]
fn calls_denied_inside_scripts() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        p.same_line("ACL SETUSER s on nopass ~b resetchannels db=0 +@all -set +set|x");
        let mut d = Duo::login(&p, "s", "x");
        evals(
            &mut d,
            &[
                ("return server.call('get','k')", &[]),
                ("return server.pcall('get','k')", &[]),
                ("return server.call('get','b')", &[]),
                ("return server.call('set','b','v')", &[]),
                ("return server.pcall('set','b','v')", &[]),
                ("local r = server.pcall('set','b','v'); return r['err']", &[]),
                ("return server.call('publish','ch','m')", &[]),
                ("return server.pcall('publish','ch','m')", &[]),
                ("return server.call('select','1')", &[]),
                ("return server.pcall('select','1')", &[]),
                ("return redis.call('get','other')", &[]),
                ("return server.call('get',KEYS[1])", &["k"]),
                ("return server.call('get',KEYS[1])", &["b"]),
                ("return server.call('set',KEYS[1],'x')", &["k"]),
                ("return server.call('lpush',KEYS[1],'x')", &["b"]),
            ],
        );
    }
}

#[test]
fn acl_check_cmd() {
    for proto in [2, 3] {
        let mut p = pair(proto, &[]);
        p.same_line("ACL SETUSER s on nopass ~b &ch db=0 +@all -set");
        let mut d = Duo::login(&p, "s", "x");
        evals(
            &mut d,
            &[
                ("return server.acl_check_cmd('get','b')", &[]),
                ("return server.acl_check_cmd('get','k')", &[]),
                ("return server.acl_check_cmd('set','b','v')", &[]),
                ("return server.acl_check_cmd('SET','b','v')", &[]),
                ("return redis.acl_check_cmd('lpush','b','v')", &[]),
                ("return server.acl_check_cmd('publish','ch','m')", &[]),
                ("return server.acl_check_cmd('publish','other','m')", &[]),
                ("return server.acl_check_cmd('select','1')", &[]),
                ("return server.acl_check_cmd('select','0')", &[]),
                ("return server.acl_check_cmd('nosuch','b','v')", &[]),
                ("return server.acl_check_cmd('config','get','x')", &[]),
                ("return tostring(server.acl_check_cmd('get','k'))", &[]),
                ("return tostring(server.acl_check_cmd('get','b'))", &[]),
            ],
        );
    }
}

/// The default user may do anything: acl_check_cmd is true, and the declared keys pass.
#[test]
fn acl_check_cmd_for_the_default_user() {
    let mut p = pair(2, &[]);
    for body in [
        "return server.acl_check_cmd('set','k','v')",
        "return server.acl_check_cmd('flushall')",
        "return server.acl_check_cmd('acl','setuser','x')",
        "return server.acl_check_cmd('config','nosuch')",
    ] {
        p.same(&["EVAL", body, "0"]);
    }
}
