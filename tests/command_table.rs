//! The COMMAND family against a real Valkey 9.1 (the oracle): INFO and DOCS of every command
//! compared whole (RESP2 and RESP3: flags, key specs with their notes, argument lists,
//! history...), the argument list of every Valkey command whether ferrokey has it yet or not,
//! GETKEYS / GETKEYSANDFLAGS of sample calls of every command, LIST filters by every ACL
//! category and by pattern, error texts, and redis-cli, which reads COMMAND DOCS when it
//! starts interactively.

mod common;

use common::diff::{words, Pair};
use common::{parse_val, run_tool, start, Client, Val};

fn sort_key(v: &Val) -> String {
    format!("{v:?}")
}

/// Subcommand order (Valkey: dict order) is unspecified: sort the 10th element of every
/// COMMAND INFO entry, recursively.
fn normalize_info(v: Val) -> Val {
    match v {
        Val::Array(items) if items.len() == 10 && matches!(items[0], Val::Bulk(_)) => {
            let mut items: Vec<Val> = items.into_iter().map(normalize_info).collect();
            if let Val::Array(subs) = &mut items[9] {
                subs.sort_by_key(sort_key);
            }
            Val::Array(items)
        }
        Val::Array(items) => Val::Array(items.into_iter().map(normalize_info).collect()),
        Val::Set(items) => Val::Set(items.into_iter().map(normalize_info).collect()),
        Val::Map(pairs) => {
            Val::Map(pairs.into_iter().map(|(k, v)| (k, normalize_info(v))).collect())
        }
        other => other,
    }
}

fn bulk_strings(v: &Val) -> Vec<String> {
    v.as_array().iter().map(Val::as_str).collect()
}

#[test]
fn count_matches_the_number_of_entries() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let count = c.cmd(&["COMMAND", "COUNT"]).as_int();
    assert!(count > 0);
    assert_eq!(c.cmd(&["COMMAND", "INFO"]).as_array().len() as i64, count);
    assert_eq!(c.cmd(&["COMMAND"]).as_array().len() as i64, count);
    let list = bulk_strings(&c.cmd(&["COMMAND", "LIST"]));
    assert_eq!(list.iter().filter(|n| !n.contains('|')).count() as i64, count);
    for name in ["command", "command|info", "config", "config|get", "get", "ping"] {
        assert!(list.iter().any(|n| n == name), "COMMAND LIST lacks {name}");
    }
}

#[test]
fn info_shapes_match_redis() {
    for proto in [2, 3] {
        let mut p = Pair::start(proto, &[]);
        for name in [
            "get",
            "ping",
            "config|get",
            "config|set",
            "config|help",
            "command|getkeys",
            "command|info",
        ] {
            p.same_line(&format!("COMMAND INFO {name}"));
        }
        for name in ["set", "mset", "del"] {
            p.same_normalized(&format!("COMMAND INFO {name}"), normalize_info);
        }
        p.same_line("COMMAND INFO nosuch GET get|x config|get|x CONFIG|GET");
        p.same_normalized("COMMAND INFO config command", normalize_info);
    }
}

/// Every command and subcommand ferrokey has, COMMAND INFO and COMMAND DOCS against the
/// oracle, whole (key-spec notes, argument lists): INFO after [`normalize_info`], DOCS after
/// [`normalize_docs`], with the subcommands ferrokey lacks (Valkey's newer ones) left out of
/// a container's entry.
#[test]
fn every_command_is_described_as_the_oracle_describes_it() {
    for proto in [2, 3] {
        let mut p = Pair::start(proto, &[]);
        let ours_all = bulk_strings(&p.a.cmd(&["COMMAND", "LIST"]));
        let oracle_all = bulk_strings(&p.b.cmd(&["COMMAND", "LIST"]));
        let shared: Vec<&String> = ours_all.iter().filter(|n| oracle_all.contains(n)).collect();
        assert!(shared.len() > 300, "only {} commands in common", shared.len());
        for name in shared {
            let info = format!("COMMAND INFO {name}");
            p.same_normalized(&info, |v| info_entries(v, &ours_all));
            p.same_normalized(&format!("COMMAND DOCS {name}"), |v| normalize_docs(v, &ours_all));
        }
        // The whole table at once, in Valkey's (dict) order sorted away.
        p.same_normalized("COMMAND DOCS", |v| docs_by_name(v, &ours_all));
        for line in ["COMMAND INFO", "COMMAND"] {
            p.same_normalized(line, |v| info_entries(v, &ours_all));
        }
    }
}

/// A COMMAND INFO reply after [`normalize_info`], with only the commands and subcommands in
/// `keep` (Valkey's newer ones left out), sorted.
fn info_entries(v: Val, keep: &[String]) -> Val {
    let known = |v: &Val| match v {
        Val::Array(entry) => entry.first().is_some_and(|n| keep.contains(&n.as_str())),
        _ => true,
    };
    let mut entries = normalize_info(v).as_array();
    entries.retain(known);
    for entry in &mut entries {
        if let Val::Array(fields) = entry {
            if let Some(Val::Array(subs)) = fields.get_mut(9) {
                subs.retain(known);
            }
        }
    }
    entries.sort_by_key(sort_key);
    Val::Array(entries)
}

/// A COMMAND DOCS reply with each `subcommands` map cut down to the names in `keep` and
/// sorted by name (Valkey's dict order is unspecified); everything else as it came.
fn normalize_docs(v: Val, keep: &[String]) -> Val {
    let pair = |k: Val, v: Val| {
        let v = if k == Val::bulk("subcommands") {
            docs_by_name(v, keep)
        } else {
            normalize_docs(v, keep)
        };
        (k, v)
    };
    match v {
        Val::Map(pairs) => Val::Map(pairs.into_iter().map(|(k, v)| pair(k, v)).collect()),
        // RESP2: the outer map and each entry are flat arrays of pairs (an argument list is
        // an array of such arrays).
        Val::Array(items) if items.len() % 2 == 0 && items.first().is_some_and(is_bulk) => {
            let mut out = Vec::with_capacity(items.len());
            let mut items = items.into_iter();
            while let (Some(k), Some(v)) = (items.next(), items.next()) {
                let (k, v) = pair(k, v);
                out.extend([k, v]);
            }
            Val::Array(out)
        }
        Val::Array(items) => {
            Val::Array(items.into_iter().map(|v| normalize_docs(v, keep)).collect())
        }
        other => other,
    }
}

/// A map of name to documentation (COMMAND DOCS's reply, a `subcommands` map) cut down to
/// the names in `keep`, sorted by name, each entry through [`normalize_docs`].
fn docs_by_name(v: Val, keep: &[String]) -> Val {
    let mut pairs = doc_entries(&v);
    pairs.retain(|(name, _)| keep.contains(name));
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    let pairs = pairs.into_iter().map(|(k, v)| (Val::bulk(&k), normalize_docs(v, keep)));
    match v {
        Val::Map(_) => Val::Map(pairs.collect()),
        _ => Val::Array(pairs.flat_map(|(k, v)| [k, v]).collect()),
    }
}

fn is_bulk(v: &Val) -> bool {
    matches!(v, Val::Bulk(_))
}

#[test]
fn docs_parse_and_cover_every_command() {
    for proto in [2, 3] {
        let mut p = Pair::start(proto, &[]);
        let count = p.a.cmd(&["COMMAND", "COUNT"]).as_int() as usize;
        let all = p.a.cmd(&["COMMAND", "DOCS"]);
        let entries = doc_entries(&all);
        assert_eq!(entries.len(), count);
        for (name, doc) in &entries {
            let fields = doc_entries(doc);
            let field = |f: &str| fields.iter().find(|(k, _)| k == f).map(|(_, v)| v.as_str());
            assert!(!field("summary").unwrap_or_default().is_empty(), "{name}: summary");
            assert!(field("since").is_some() && field("group").is_some(), "{name}: since, group");
        }
        let config = doc_entries(&p.a.cmd(&["COMMAND", "DOCS", "CONFIG"]));
        assert_eq!(config.len(), 1);
        assert_eq!(config[0].0, "config");
        let fields = doc_entries(&config[0].1);
        let subs = &fields.iter().find(|(k, _)| k == "subcommands").expect("subcommands").1;
        let mut names: Vec<String> = doc_entries(subs).into_iter().map(|(k, _)| k).collect();
        names.sort();
        assert_eq!(
            names,
            ["config|get", "config|help", "config|resetstat", "config|rewrite", "config|set"]
        );
        // Unknown names are left out; the map keys are the canonical lower-case names.
        let two = doc_entries(&p.a.cmd(&["COMMAND", "DOCS", "nosuch", "GET", "config|GET"]));
        assert_eq!(two.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["get", "config|get"]);
        p.same_line("COMMAND DOCS nosuch");
    }
}

/// The (key, value) pairs of a map reply, RESP3 map or RESP2 flat array.
fn doc_entries(v: &Val) -> Vec<(String, Val)> {
    match v {
        Val::Map(pairs) => pairs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect(),
        Val::Array(flat) => {
            assert!(flat.len() % 2 == 0, "odd map: {v:?}");
            flat.chunks(2).map(|p| (p[0].as_str(), p[1].clone())).collect()
        }
        other => panic!("not a map: {other:?}"),
    }
}

#[test]
fn getkeys_matches_redis() {
    for proto in [2, 3] {
        let mut p = Pair::start(proto, &[]);
        for line in [
            "COMMAND GETKEYS get a",
            "COMMAND GETKEYS GET a",
            "COMMAND GETKEYS set a b",
            "COMMAND GETKEYS set a b EX 10",
            "COMMAND GETKEYS mset a 1 b 2",
            "COMMAND GETKEYS del a b c",
            "COMMAND GETKEYS nosuch a",
            "COMMAND GETKEYS config nosuch",
            "COMMAND GETKEYS config get maxmemory",
            "COMMAND GETKEYS ping x",
            "COMMAND GETKEYS set a",
            "COMMAND GETKEYS get a b",
            "COMMAND GETKEYS get",
            "COMMAND GETKEYSANDFLAGS get a",
            "COMMAND GETKEYSANDFLAGS del a b",
            "COMMAND GETKEYSANDFLAGS mset a 1 b 2",
            "COMMAND GETKEYSANDFLAGS set a b",
            "COMMAND GETKEYSANDFLAGS set a b EX 10 get",
            "COMMAND GETKEYSANDFLAGS set a b NX",
            "COMMAND GETKEYSANDFLAGS nosuch a",
            "COMMAND GETKEYSANDFLAGS get",
            // Key specs that cannot be applied, and the commands with their own key finders.
            "COMMAND GETKEYS pfmerge k0",
            "COMMAND GETKEYS pfmerge k0 k1",
            "COMMAND GETKEYS eval s 0",
            "COMMAND GETKEYS eval s 2 a",
            "COMMAND GETKEYS eval s -1",
            "COMMAND GETKEYS eval s x a",
            "COMMAND GETKEYS zunionstore d 0 a",
            "COMMAND GETKEYS zunionstore d 3 a b",
            "COMMAND GETKEYS zunion 0 a",
            "COMMAND GETKEYS lmpop 0 a LEFT",
            "COMMAND GETKEYS xread STREAMS a b 0",
            "COMMAND GETKEYS xread streams a",
            "COMMAND GETKEYS xreadgroup GROUP g c STREAMS a b 0",
            "COMMAND GETKEYS sort k store",
            "COMMAND GETKEYS sort k limit 0 1 store d",
            "COMMAND GETKEYSANDFLAGS sort k BY p GET g STORE d",
            "COMMAND GETKEYSANDFLAGS georadius k 1 2 3 m STORE d STOREDIST e",
            "COMMAND GETKEYSANDFLAGS georadius k 1 2 3 m",
            "COMMAND GETKEYSANDFLAGS bitfield k GET u8 0",
            "COMMAND GETKEYSANDFLAGS bitfield k INCRBY u8 0 1",
            "COMMAND GETKEYSANDFLAGS set k v get",
            "COMMAND GETKEYS sunsubscribe",
            "COMMAND GETKEYS publish c m",
        ] {
            p.same_line(line);
        }
    }
}

#[test]
fn list_filters_match_redis() {
    let mut p = Pair::start(2, &[]);
    // Valkey 9.1 has commands ferrokey does not implement yet (COMMANDLOG, ...): a pattern
    // lists the same names once the oracle's are cut down to the commands ferrokey has.
    let ours_all = bulk_strings(&p.a.cmd(&["COMMAND", "LIST"]));
    for line in [
        "COMMAND LIST FILTERBY PATTERN config*",
        "COMMAND LIST FILTERBY pattern COMMAND*",
        "COMMAND LIST FILTERBY PATTERN *|get",
        "COMMAND LIST FILTERBY PATTERN CONFIG|GET",
        "COMMAND LIST FILTERBY PATTERN [a-c]*",
        "COMMAND LIST FILTERBY PATTERN ?et",
        "COMMAND LIST FILTERBY PATTERN *",
        "COMMAND list filterby pattern *|*",
        "COMMAND LIST FILTERBY PATTERN [^a-w]*",
    ] {
        let (ours, theirs) = p.both(&words(line));
        let mut ours = bulk_strings(&parse_val(&mut &ours[..]));
        let mut theirs = bulk_strings(&parse_val(&mut &theirs[..]));
        theirs.retain(|name| ours_all.contains(name));
        ours.sort();
        theirs.sort();
        assert!(!ours.is_empty(), "{line}: nothing listed");
        p.assert_equal(line, ours, theirs);
    }
    for line in [
        "COMMAND LIST FILTERBY MODULE x",
        "COMMAND LIST FILTERBY module \"\"",
        "COMMAND LIST FILTERBY ACLCAT nosuch",
        "COMMAND LIST FILTERBY PATTERN nosuch*",
        "COMMAND LIST FILTERBY PATTERN \"\"",
        "COMMAND LIST FILTERBY MODULE x y",
        "COMMAND LIST FILTERBY ACLCAT",
        "COMMAND LIST FILTERBY",
        "COMMAND LIST FILTERBY PATTERN",
        "COMMAND LIST FILTERBY FOO x",
        "COMMAND LIST x",
        "COMMAND LIST FILTERBY PATTERN a b",
    ] {
        p.same_line(line);
    }
    // Every ACL category (and a few spellings that match nothing): the same names, once the
    // oracle's are cut down to the commands ferrokey has.
    let (_, everything) = p.both(&words("COMMAND LIST"));
    let oracle_has = bulk_strings(&parse_val(&mut &everything[..]));
    let categories = bulk_strings(&p.b.cmd(&["ACL", "CAT"]));
    assert!(categories.len() >= 21, "{categories:?}");
    let odd = ["FAST", "Read", "@read", "nosuch", "", "*"].map(String::from);
    for cat in categories.iter().chain(&odd) {
        let line = ["COMMAND", "LIST", "FILTERBY", "ACLCAT", cat.as_str()];
        let (ours, theirs) = p.both(&line);
        let mut theirs = bulk_strings(&parse_val(&mut &theirs[..]));
        let mut ours = bulk_strings(&parse_val(&mut &ours[..]));
        theirs.retain(|name| ours_all.contains(name));
        ours.sort();
        theirs.sort();
        assert!(ours.iter().all(|n| oracle_has.contains(n)), "{line:?}: {ours:?}");
        p.assert_equal(line, ours, theirs);
    }
    let connection =
        bulk_strings(&p.a.cmd(&["COMMAND", "LIST", "FILTERBY", "ACLCAT", "connection"]));
    for name in ["command", "command|docs", "ping"] {
        assert!(connection.contains(&name.to_string()), "{name} missing: {connection:?}");
    }
    assert!(!connection.contains(&"config|get".to_string()));
}

#[test]
fn help_and_errors_match_redis() {
    for proto in [2, 3] {
        let mut p = Pair::start(proto, &[]);
        for line in [
            "COMMAND HELP",
            "COMMAND help",
            "COMMAND HELP x",
            "COMMAND COUNT x",
            "COMMAND FOO",
            "COMMAND GETKEYS",
        ] {
            p.same_line(line);
        }
    }
}

fn redis_cli(port: u16, args: &[&str], stdin: &str) -> (bool, String, String) {
    let port = port.to_string();
    let out = run_tool("redis-cli", &[&["-p", &port][..], args].concat(), stdin.as_bytes());
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn redis_cli_works() {
    let s = start(&[]);
    let (ok, out, err) = redis_cli(s.port, &["COMMAND", "DOCS"], "");
    assert!(ok && err.is_empty(), "COMMAND DOCS: {err}");
    assert!(out.contains("summary") && out.contains("config|get"), "{out}");
    let (ok, out, err) = redis_cli(s.port, &["--no-raw", "SET", "a", "b"], "");
    assert!(ok && err.is_empty(), "SET: {err}");
    assert_eq!(out, "OK\n");
    // Without a command, redis-cli starts its interactive loop, which loads the command
    // help from COMMAND DOCS before reading commands (here from a pipe).
    let (ok, out, err) = redis_cli(s.port, &[], "SET k v\nGET k\nCOMMAND COUNT\n");
    assert!(ok && err.is_empty(), "interactive: {err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[..2], ["OK", "v"], "{out}");
    assert!(lines[2].parse::<u32>().is_ok_and(|n| n > 0), "{out}");
    let mut c = Client::connect(s.port);
    assert_eq!(c.cmd(&["GET", "a"]), Val::bulk("b"));
}

#[test]
fn command_info_matches_our_own_count_in_resp3() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    assert!(matches!(c.cmd(&["HELLO", "3"]), Val::Map(_)));
    let count = c.cmd(&["COMMAND", "COUNT"]).as_int() as usize;
    let all = c.cmd(&["COMMAND", "INFO"]).as_array();
    assert_eq!(all.len(), count);
    for entry in &all {
        let e = entry.as_array();
        assert_eq!(e.len(), 10);
        assert!(matches!(e[2], Val::Set(_)) && matches!(e[6], Val::Set(_)), "{entry:?}");
        assert!(matches!(e[7], Val::Set(_)) && matches!(e[8], Val::Set(_)), "{entry:?}");
        assert!(matches!(e[9], Val::Array(_)), "{entry:?}");
    }
}

/// Key positions are not truncated at 16 bits: COMMAND GETKEYS of an MSET with 33,000 pairs
/// returns all 33,000 keys.
#[test]
fn getkeys_of_more_than_65535_arguments() {
    let s = start(&[]);
    let mut c = Client::connect(s.port);
    let keys: Vec<String> = (0..33_000).map(|i| format!("k{i}")).collect();
    let mut argv: Vec<&[u8]> = vec![b"COMMAND", b"GETKEYS", b"MSET"];
    for k in &keys {
        argv.extend([k.as_bytes(), b"v"]);
    }
    let got = c.cmd_b(&argv).as_array();
    assert_eq!(got.len(), keys.len());
    assert_eq!(got.last(), Some(&Val::bulk("k32999")));
}

/// COMMAND GETKEYS and GETKEYSANDFLAGS of sample calls of every command ferrokey has, against
/// the oracle: the calls are made from the command's documented arguments (see
/// [`sample_calls`]), so every key spec, keyword search, keynum and key-finding function is
/// exercised, with the required arguments only and with every optional one.
#[test]
fn getkeys_of_every_command_matches_the_oracle() {
    let mut p = Pair::start(2, &[]);
    let ours_all = bulk_strings(&p.a.cmd(&["COMMAND", "LIST"]));
    let oracle_all = bulk_strings(&p.b.cmd(&["COMMAND", "LIST"]));
    let mut calls = 0;
    let mut with_keys = 0;
    for name in ours_all.iter().filter(|n| oracle_all.contains(n)) {
        for argv in sample_calls(name) {
            for sub in ["GETKEYS", "GETKEYSANDFLAGS"] {
                let line: Vec<&str> =
                    ["COMMAND", sub].into_iter().chain(argv.iter().map(String::as_str)).collect();
                let (ours, theirs) = p.both(&line);
                p.assert_same_raw(&line, &ours, &theirs);
                calls += 1;
                with_keys += usize::from(ours.starts_with(b"*"));
            }
        }
    }
    assert!(calls > 1000 && with_keys > 500, "{calls} calls, {with_keys} with keys");
}

/// Sample argument vectors of the command `full_name` (`set`, `config|get`), built from its
/// argument list: the required arguments alone, then every argument, each time with the
/// `choice`-th alternative of every oneof (the last when it has fewer). A key is `k0`, `k1`...;
/// a repeated argument is given twice, so a count (`numkeys`, `numfields`...) is 2.
fn sample_calls(full_name: &str) -> Vec<Vec<String>> {
    use ferrokey::spec::docs::arguments;
    let args = arguments(full_name).unwrap_or_else(|| panic!("{full_name}: no argument list"));
    let widest = args.iter().map(widest_oneof).max().unwrap_or(1);
    let mut calls: Vec<Vec<String>> = Vec::new();
    for all in [false, true] {
        for choice in 0..widest {
            let mut argv: Vec<String> = full_name.split('|').map(String::from).collect();
            let mut keys = 0;
            sample_args(&args, all, choice, &mut argv, &mut keys);
            if !calls.contains(&argv) {
                calls.push(argv);
            }
        }
    }
    calls
}

fn widest_oneof(arg: &ferrokey::spec::docs::Arg) -> usize {
    use ferrokey::spec::docs::ArgType;
    let own = if arg.kind == ArgType::Oneof { arg.children.len() } else { 1 };
    arg.children.iter().map(widest_oneof).fold(own, usize::max)
}

fn sample_args(
    args: &[ferrokey::spec::docs::Arg],
    all: bool,
    choice: usize,
    argv: &mut Vec<String>,
    keys: &mut usize,
) {
    use ferrokey::spec::docs::{arg_flag, ArgType};
    for arg in args {
        if arg.flags & arg_flag::OPTIONAL != 0 && !all {
            continue;
        }
        let times = if arg.flags & arg_flag::MULTIPLE != 0 { 2 } else { 1 };
        for i in 0..times {
            if let Some(token) = &arg.token {
                if i == 0 || arg.flags & arg_flag::MULTIPLE_TOKEN != 0 {
                    argv.push(token.to_string());
                }
            }
            let value = match arg.kind {
                ArgType::PureToken => continue,
                ArgType::Oneof => {
                    let pick = choice.min(arg.children.len() - 1);
                    sample_args(&arg.children[pick..=pick], all, choice, argv, keys);
                    continue;
                }
                ArgType::Block => {
                    sample_args(&arg.children, all, choice, argv, keys);
                    continue;
                }
                ArgType::Key => {
                    *keys += 1;
                    format!("k{}", *keys - 1)
                }
                ArgType::Integer if arg.name.starts_with("num") => "2".to_string(),
                ArgType::Integer => "1".to_string(),
                ArgType::Double => "1.5".to_string(),
                ArgType::UnixTime => "1700000000".to_string(),
                ArgType::Pattern => "p*".to_string(),
                ArgType::String => "s".to_string(),
            };
            argv.push(value);
        }
    }
}

/// The argument list of every command and subcommand Valkey 9.1 has, whether ferrokey has it
/// yet or not (a command prints its arguments right from the day it lands): each record of
/// `spec::docs`, rendered here as Valkey shapes it in RESP3, against the oracle's
/// `arguments`.
#[test]
fn argument_lists_of_every_valkey_command() {
    use ferrokey::spec::docs::ArgumentLists;
    let mut p = Pair::start(3, &[]);
    let names = bulk_strings(&p.b.cmd(&["COMMAND", "LIST"]));
    assert_eq!(names.len(), 399);
    let lists = ArgumentLists::all();
    for name in &names {
        let reply = p.b.cmd(&["COMMAND", "DOCS", name]);
        let fields = doc_entries(&doc_entries(&reply)[0].1);
        let theirs = fields.into_iter().find(|(k, _)| k == "arguments").map(|(_, v)| v);
        let ours = lists.get(name).unwrap_or_else(|| panic!("{name}: no argument list"));
        let ours = (!ours.is_empty()).then(|| Val::Array(ours.iter().map(arg_val).collect()));
        assert_eq!(ours, theirs, "{name}: arguments differ (left: spec::docs, right: valkey)");
    }
}

/// One argument as Valkey 9.1's COMMAND DOCS sends it in RESP3.
fn arg_val(arg: &ferrokey::spec::docs::Arg) -> Val {
    use ferrokey::spec::docs::arg_flag;
    let text = |k: &str, v: &str| (Val::bulk(k), Val::bulk(v));
    let mut map = vec![text("name", &arg.name), text("type", arg.kind.as_str())];
    map.extend(arg.display_text.as_deref().map(|d| text("display_text", d)));
    if let Some(index) = arg.key_spec_index {
        map.push((Val::bulk("key_spec_index"), Val::Int(i64::from(index))));
    }
    map.extend(arg.token.as_deref().map(|t| text("token", t)));
    map.extend(arg.summary.as_deref().map(|s| text("summary", s)));
    map.extend(arg.since.map(|s| text("since", s)));
    map.extend(arg.deprecated_since.map(|s| text("deprecated_since", s)));
    if arg.flags != 0 {
        let names = arg_flag::NAMES.iter().filter(|(bit, _)| arg.flags & bit != 0);
        let flags = names.map(|(_, n)| Val::Simple(n.to_string())).collect();
        map.push((Val::bulk("flags"), Val::Set(flags)));
    }
    if !arg.children.is_empty() {
        map.push((Val::bulk("arguments"), Val::Array(arg.children.iter().map(arg_val).collect())));
    }
    Val::Map(map)
}
