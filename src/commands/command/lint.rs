//! Consistency checks of the whole command table, like the ones Valkey's generator runs
//! over its command JSON files. A failure names the command and the rule it breaks.

use std::collections::HashSet;

use crate::commands::table::{acl, flag, ks, BeginSearch, Command, FindKeys};
use crate::commands::{all, lookup};

/// Commands that Valkey marks READONLY without the @read category: the read-only
/// scripting variants are @scripting, not @read.
const READONLY_WITHOUT_READ: &[&str] = &["eval_ro", "evalsha_ro", "fcall_ro"];

/// Commands in the @admin category (hence @dangerous) without the ADMIN flag, as in Valkey.
const ADMIN_CATEGORY_WITHOUT_FLAG: &[&str] = &["role", "lastsave"];

/// Containers that also run without a subcommand (bare COMMAND lists every command).
const CONTAINERS_WITH_HANDLER: &[&str] = &["command"];

/// Every command and subcommand, with its parent.
fn every() -> Vec<(Option<&'static Command>, &'static Command)> {
    let mut v = Vec::new();
    for cmd in all() {
        v.push((None, cmd));
        v.extend(cmd.subcommands.iter().map(|s| (Some(cmd), s)));
    }
    v
}

fn has(bits: u64, bit: u64) -> bool {
    bits & bit != 0
}

#[test]
fn names_are_lowercase_unique_and_nested() {
    let mut seen = HashSet::new();
    for (parent, cmd) in every() {
        assert!(!cmd.name.is_empty());
        assert_eq!(cmd.name, cmd.name.to_ascii_lowercase(), "{}: name must be lowercase", cmd.name);
        assert!(seen.insert(cmd.name), "{}: duplicate command name", cmd.name);
        match parent {
            None => {
                assert!(!cmd.name.contains('|'), "{}: top-level name with '|'", cmd.name);
                assert!(std::ptr::eq(lookup(cmd.name.as_bytes()).unwrap(), cmd), "{}", cmd.name);
            }
            Some(p) => {
                let (head, sub) = cmd.name.split_once('|').unwrap_or(("", ""));
                assert_eq!(head, p.name, "{}: subcommand must be named '{}|sub'", cmd.name, p.name);
                assert!(!sub.is_empty() && !sub.contains('|'), "{}: bad subcommand name", cmd.name);
                assert!(cmd.subcommands.is_empty(), "{}: subcommands nest one level", cmd.name);
                assert!(
                    cmd.arity >= 2 || cmd.arity <= -2,
                    "{}: arity must cover the subcommand",
                    cmd.name
                );
            }
        }
    }
}

#[test]
fn flags_agree_with_acl_categories() {
    for (_, c) in every() {
        let n = c.name;
        assert_eq!(has(c.flags, flag::WRITE), has(c.acl, acl::WRITE), "{n}: WRITE flag vs @write");
        if !READONLY_WITHOUT_READ.contains(&n) {
            assert_eq!(
                has(c.flags, flag::READONLY),
                has(c.acl, acl::READ),
                "{n}: READONLY flag vs @read"
            );
        }
        assert_eq!(has(c.flags, flag::FAST), has(c.acl, acl::FAST), "{n}: FAST flag vs @fast");
        assert!(
            has(c.acl, acl::FAST) != has(c.acl, acl::SLOW),
            "{n}: exactly one of @fast and @slow"
        );
        if !ADMIN_CATEGORY_WITHOUT_FLAG.contains(&n) {
            assert_eq!(
                has(c.flags, flag::ADMIN),
                has(c.acl, acl::ADMIN),
                "{n}: ADMIN flag vs @admin"
            );
        }
        if has(c.acl, acl::ADMIN) {
            assert!(has(c.acl, acl::DANGEROUS), "{n}: @admin commands are @dangerous");
        }
        assert!(
            !(has(c.flags, flag::WRITE) && has(c.flags, flag::READONLY)),
            "{n}: WRITE and READONLY"
        );
        if has(c.flags, flag::DENYOOM) {
            assert!(has(c.flags, flag::WRITE), "{n}: DENYOOM without WRITE");
        }
        // Valkey derives @blocking from the BLOCKING flag.
        assert_eq!(
            has(c.flags, flag::BLOCKING),
            has(c.acl, acl::BLOCKING),
            "{n}: BLOCKING flag vs @blocking"
        );
    }
}

#[test]
fn containers_and_leaves() {
    for (_, c) in every() {
        let n = c.name;
        if c.subcommands.is_empty() {
            assert!(c.handler.is_some(), "{n}: a leaf command needs a handler");
        } else {
            assert_eq!(
                c.handler.is_some(),
                CONTAINERS_WITH_HANDLER.contains(&n),
                "{n}: container handler"
            );
            assert!(c.key_specs.is_empty(), "{n}: a container has no key specs");
        }
    }
}

#[test]
fn docs_are_present() {
    const GROUPS: &[&str] = &[
        "bitmap",
        "cluster",
        "connection",
        "generic",
        "geo",
        "hash",
        "hyperloglog",
        "list",
        "pubsub",
        "scripting",
        "server",
        "set",
        "sorted-set",
        "stream",
        "string",
        "transactions",
    ];
    for (_, c) in every() {
        let n = c.name;
        assert!(!c.summary.is_empty(), "{n}: summary");
        assert!(!c.since.is_empty(), "{n}: since");
        assert!(GROUPS.contains(&c.group), "{n}: unknown group {:?}", c.group);
        assert!(is_version(c.since), "{n}: since {:?} is not x.y.z", c.since);
        for tip in c.tips {
            assert_eq!(*tip, tip.to_ascii_lowercase(), "{n}: tips are lowercase");
        }
        for (version, change) in c.history {
            assert!(is_version(version), "{n}: history version {version:?} is not x.y.z");
            assert!(!change.is_empty(), "{n}: history entry {version} says nothing");
        }
        for doc_flag in c.doc_flags {
            assert!(["syscmd", "deprecated"].contains(doc_flag), "{n}: doc flag {doc_flag:?}");
        }
    }
}

/// Whether `v` is a version as Valkey writes them: `x.y.z`, digits only.
fn is_version(v: &str) -> bool {
    v.split('.').count() == 3
        && v.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

#[test]
fn key_specs_are_reachable() {
    for (_, c) in every() {
        let n = c.name;
        let mut movable = false;
        let mut unknown = false;
        assert!(c.key_notes.len() <= c.key_specs.len(), "{n}: notes for missing key specs");
        for spec in c.key_specs {
            let access = (spec.flags & (ks::RO | ks::RW | ks::OW | ks::RM)).count_ones();
            let wanted = if spec.flags & ks::NOT_KEY != 0 { 0..=1 } else { 1..=1 };
            assert!(wanted.contains(&access), "{n}: key spec needs one of RO, RW, OW, RM");
            let begin = match spec.begin {
                BeginSearch::Index(i) => Some(i),
                BeginSearch::Keyword { keyword, start_from } => {
                    assert!(!keyword.is_empty() && start_from != 0, "{n}: bad keyword search");
                    movable = true;
                    None
                }
                BeginSearch::Unknown => {
                    assert!(
                        matches!(spec.find, FindKeys::Unknown),
                        "{n}: an unknown begin_search needs an unknown find_keys"
                    );
                    movable = true;
                    unknown = true;
                    None
                }
            };
            let last_offset = match spec.find {
                FindKeys::Range { last_key, step, limit } => {
                    assert!(step >= 1 && limit >= 0, "{n}: range step {step}, limit {limit}");
                    last_key.max(0)
                }
                FindKeys::Keynum { keynum_idx, first_key, step } => {
                    assert!(keynum_idx >= 0 && first_key > keynum_idx && step >= 1, "{n}: keynum");
                    movable = true;
                    keynum_idx
                }
                FindKeys::Unknown => {
                    assert!(
                        matches!(spec.begin, BeginSearch::Unknown),
                        "{n}: an unknown find_keys needs an unknown begin_search"
                    );
                    0
                }
            };
            if let Some(b) = begin {
                assert!(b >= 1, "{n}: key spec begins at the command name");
                // A fixed arity must leave room for the fixed positions; with a variable
                // arity, keys past the minimum are optional (PFMERGE's source keys).
                if c.arity > 0 {
                    assert!(b + last_offset < c.arity, "{n}: key spec beyond arity {}", c.arity);
                }
            }
        }
        assert_eq!(
            movable,
            has(c.flags, flag::MOVABLE_KEYS),
            "{n}: MOVABLE_KEYS iff keyword/keynum/unknown specs"
        );
        // The getkeys function is what finds the keys of unknown specs, and only those.
        assert_eq!(unknown, c.getkeys.is_some(), "{n}: a getkeys function iff unknown key specs");
    }
}

/// Every command and subcommand has its record in `spec::docs` (COMMAND DOCS would otherwise
/// print no `arguments`), and every `key_spec_index` there names one of the command's key
/// specs: the argument lists and the table's key specs are written apart, this ties them.
#[test]
fn argument_lists_match_the_key_specs() {
    fn walk(n: &str, specs: usize, args: &[crate::spec::docs::Arg]) {
        for arg in args {
            if let Some(index) = arg.key_spec_index {
                assert!((index as usize) < specs, "{n}: {} names key spec {index}", arg.name);
            }
            walk(n, specs, &arg.children);
        }
    }
    let lists = crate::spec::docs::ArgumentLists::all();
    for (_, c) in every() {
        let n = c.name;
        let args = lists.get(n);
        let args = args.unwrap_or_else(|| panic!("{n}: no record in spec/docs/arguments.txt"));
        assert!(c.subcommands.is_empty() || args.is_empty(), "{n}: a container has no arguments");
        walk(n, c.key_specs.len(), args);
    }
}
