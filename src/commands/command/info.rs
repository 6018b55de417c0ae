//! The COMMAND INFO and COMMAND DOCS shapes of one table entry, as Valkey 7+ sends them.
//!
//! COMMAND INFO, per command, a 10-element array:
//!
//! ```text
//! name, arity, flags (set of status), first key, last key, step,
//! ACL categories (set of "@cat" status), tips (set of bulk),
//! key specs (set of maps), subcommands (array of the same shape; empty for a leaf)
//! ```
//!
//! A key spec is a map: `notes` (bulk, only when the spec has notes), `flags` (set of
//! status), `begin_search` {type, spec}, `find_keys` {type, spec}; an `unknown` search has
//! an empty spec map. COMMAND DOCS is a map per command: summary, since, group, complexity
//! (each only when non-empty, group always), doc_flags (set of status) and history (set of
//! [version, change] arrays) when there are any, `arguments` (an array of maps, from
//! [`spec::docs`](crate::spec::docs)) when the command takes any, and subcommands (a map) for
//! containers. An argument's map: name, type, display_text (not for a group), key_spec_index,
//! token, summary, since, deprecated_since, flags (set of status), arguments (a group's),
//! each only when it has one.

use crate::commands::table::{acl, flag, ks, BeginSearch, Command, FindKeys, KeySpec};
use crate::resp::reply::Reply;
use crate::spec::docs::{arg_flag, Arg, ArgumentLists};

/// The COMMAND INFO entry of `cmd`.
pub fn reply_info(out: &mut Reply, cmd: &Command) {
    out.array(10);
    out.bulk(cmd.name.as_bytes());
    out.int(i64::from(cmd.arity));
    reply_names(out, flag::NAMES, cmd.flags, "");
    let (first, last, step) = cmd.legacy_range();
    out.int(i64::from(first));
    out.int(i64::from(last));
    out.int(i64::from(step));
    reply_names(out, acl::NAMES, cmd.acl, "@");
    out.set(cmd.tips.len());
    for tip in cmd.tips {
        out.bulk(tip.as_bytes());
    }
    out.set(cmd.key_specs.len());
    for (i, spec) in cmd.key_specs.iter().enumerate() {
        reply_key_spec(out, spec, cmd.key_spec_notes(i));
    }
    out.array(cmd.subcommands.len());
    for sub in cmd.subcommands {
        reply_info(out, sub);
    }
}

/// A set of status strings: the names of the bits of `bits`, in table order.
pub fn reply_names<B>(out: &mut Reply, names: &[(B, &str)], bits: B, prefix: &str)
where
    B: Copy + std::ops::BitAnd<Output = B> + PartialEq + Default,
{
    let present = |b: B| bits & b != B::default();
    out.set(names.iter().filter(|(b, _)| present(*b)).count());
    for (_, name) in names.iter().filter(|(b, _)| present(*b)) {
        if prefix.is_empty() {
            out.simple(name);
        } else {
            out.simple(&format!("{prefix}{name}"));
        }
    }
}

fn reply_key_spec(out: &mut Reply, spec: &KeySpec, notes: Option<&str>) {
    out.map(3 + usize::from(notes.is_some()));
    if let Some(notes) = notes {
        out.bulk(b"notes");
        out.bulk(notes.as_bytes());
    }
    out.bulk(b"flags");
    reply_names(out, ks::NAMES, spec.flags, "");

    out.bulk(b"begin_search");
    out.map(2);
    out.bulk(b"type");
    match spec.begin {
        BeginSearch::Index(index) => {
            out.bulk(b"index");
            out.bulk(b"spec");
            out.map(1);
            int_field(out, "index", index);
        }
        BeginSearch::Keyword { keyword, start_from } => {
            out.bulk(b"keyword");
            out.bulk(b"spec");
            out.map(2);
            out.bulk(b"keyword");
            out.bulk(keyword.as_bytes());
            int_field(out, "startfrom", start_from);
        }
        BeginSearch::Unknown => unknown_search(out),
    }

    out.bulk(b"find_keys");
    out.map(2);
    out.bulk(b"type");
    match spec.find {
        FindKeys::Range { last_key, step, limit } => {
            out.bulk(b"range");
            out.bulk(b"spec");
            out.map(3);
            int_field(out, "lastkey", last_key);
            int_field(out, "keystep", step);
            int_field(out, "limit", limit);
        }
        FindKeys::Keynum { keynum_idx, first_key, step } => {
            out.bulk(b"keynum");
            out.bulk(b"spec");
            out.map(3);
            int_field(out, "keynumidx", keynum_idx);
            int_field(out, "firstkey", first_key);
            int_field(out, "keystep", step);
        }
        FindKeys::Unknown => unknown_search(out),
    }
}

/// The `type` value and empty `spec` of an `unknown` begin_search or find_keys.
fn unknown_search(out: &mut Reply) {
    out.bulk(b"unknown");
    out.bulk(b"spec");
    out.map(0);
}

fn int_field(out: &mut Reply, name: &str, value: i32) {
    out.bulk(name.as_bytes());
    out.int(i64::from(value));
}

/// The COMMAND DOCS entry of `cmd` (the value; the caller writes the name), with its
/// arguments (and its subcommands') from `lists`.
pub fn reply_docs(out: &mut Reply, cmd: &Command, lists: &ArgumentLists) {
    let text_fields =
        [("summary", cmd.summary), ("since", cmd.since), ("complexity", cmd.complexity)];
    let texts = text_fields.iter().filter(|(_, v)| !v.is_empty()).count();
    let listed = usize::from(!cmd.doc_flags.is_empty())
        + usize::from(!cmd.history.is_empty())
        + 2 * usize::from(cmd.deprecated.is_some());
    let args = lists.get(cmd.name).unwrap_or_default();
    let nested = usize::from(!args.is_empty()) + usize::from(!cmd.subcommands.is_empty());
    out.map(texts + 1 + listed + nested);
    for (name, value) in &text_fields[..2] {
        text_field(out, name, value);
    }
    out.bulk(b"group");
    out.bulk(cmd.group.as_bytes());
    let (name, value) = text_fields[2];
    text_field(out, name, value);
    if !cmd.doc_flags.is_empty() {
        out.bulk(b"doc_flags");
        out.set(cmd.doc_flags.len());
        for doc_flag in cmd.doc_flags {
            out.simple(doc_flag);
        }
    }
    if let Some((since, by)) = cmd.deprecated {
        text_field(out, "deprecated_since", since);
        text_field(out, "replaced_by", by);
    }
    if !cmd.history.is_empty() {
        out.bulk(b"history");
        out.set(cmd.history.len());
        for (version, change) in cmd.history {
            out.array(2);
            out.bulk(version.as_bytes());
            out.bulk(change.as_bytes());
        }
    }
    if !args.is_empty() {
        out.bulk(b"arguments");
        reply_args(out, args);
    }
    if !cmd.subcommands.is_empty() {
        out.bulk(b"subcommands");
        out.map(cmd.subcommands.len());
        for sub in cmd.subcommands {
            out.bulk(sub.name.as_bytes());
            reply_docs(out, sub, lists);
        }
    }
}

/// An argument list of COMMAND DOCS: an array of one map per argument.
fn reply_args(out: &mut Reply, args: &[Arg]) {
    out.array(args.len());
    for arg in args {
        // After name, type, display_text and key_spec_index, in this order; an empty token
        // (MIGRATE's `""`) is printed.
        let texts = [
            ("token", arg.token.as_deref()),
            ("summary", arg.summary.as_deref()),
            ("since", arg.since),
            ("deprecated_since", arg.deprecated_since),
        ];
        let fields = 2
            + usize::from(arg.display_text.is_some())
            + usize::from(arg.key_spec_index.is_some())
            + texts.iter().filter(|(_, v)| v.is_some()).count()
            + usize::from(arg.flags != 0)
            + usize::from(!arg.children.is_empty());
        out.map(fields);
        out.bulk(b"name");
        out.bulk(arg.name.as_bytes());
        out.bulk(b"type");
        out.bulk(arg.kind.as_str().as_bytes());
        if let Some(display) = &arg.display_text {
            out.bulk(b"display_text");
            out.bulk(display.as_bytes());
        }
        if let Some(index) = arg.key_spec_index {
            out.bulk(b"key_spec_index");
            out.int(i64::from(index));
        }
        for (name, value) in texts {
            if let Some(value) = value {
                out.bulk(name.as_bytes());
                out.bulk(value.as_bytes());
            }
        }
        if arg.flags != 0 {
            out.bulk(b"flags");
            reply_names(out, arg_flag::NAMES, arg.flags, "");
        }
        if !arg.children.is_empty() {
            out.bulk(b"arguments");
            reply_args(out, &arg.children);
        }
    }
}

/// A `name: value` pair, left out when the value is empty.
fn text_field(out: &mut Reply, name: &str, value: &str) {
    if !value.is_empty() {
        out.bulk(name.as_bytes());
        out.bulk(value.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::reply::Proto;

    #[test]
    fn info_of_get_matches_valkey_bytes() {
        let get = crate::commands::lookup(b"get").unwrap();
        let mut out = Reply::new(Proto::Resp3);
        reply_info(&mut out, get);
        let want = "*10\r\n$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n\
            ~3\r\n+@read\r\n+@string\r\n+@fast\r\n~0\r\n~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+RO\r\n\
            +access\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n\
            %1\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n\
            $4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n";
        assert_eq!(String::from_utf8_lossy(&out.buf), want);
    }

    #[test]
    fn keyword_and_keynum_specs() {
        const SPECS: &[KeySpec] = &[
            KeySpec {
                flags: ks::RO,
                begin: BeginSearch::Keyword { keyword: "STREAMS", start_from: 1 },
                find: FindKeys::Range { last_key: -1, step: 1, limit: 2 },
            },
            KeySpec {
                flags: ks::RO,
                begin: BeginSearch::Index(2),
                find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, step: 1 },
            },
        ];
        let mut out = Reply::new(Proto::Resp2);
        reply_key_spec(&mut out, &SPECS[0], None);
        let text = String::from_utf8_lossy(&out.buf).into_owned();
        assert!(text.contains("$7\r\nkeyword\r\n$4\r\nspec\r\n*4\r\n$7\r\nkeyword\r\n$7\r\nSTREAMS\r\n$9\r\nstartfrom\r\n:1\r\n"));
        assert!(text.ends_with("$5\r\nlimit\r\n:2\r\n"));
        let mut out = Reply::new(Proto::Resp2);
        reply_key_spec(&mut out, &SPECS[1], None);
        let text = String::from_utf8_lossy(&out.buf).into_owned();
        assert!(text.ends_with(
            "$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n"
        ));
    }

    #[test]
    fn unknown_spec_with_notes() {
        const SPEC: KeySpec =
            KeySpec { flags: ks::OW, begin: BeginSearch::Unknown, find: FindKeys::Unknown };
        let mut out = Reply::new(Proto::Resp3);
        reply_key_spec(&mut out, &SPEC, Some("n"));
        let want = "%4\r\n$5\r\nnotes\r\n$1\r\nn\r\n$5\r\nflags\r\n~1\r\n+OW\r\n\
            $12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$7\r\nunknown\r\n$4\r\nspec\r\n%0\r\n\
            $9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$7\r\nunknown\r\n$4\r\nspec\r\n%0\r\n";
        assert_eq!(String::from_utf8_lossy(&out.buf), want);
    }

    #[test]
    fn docs_leave_out_empty_fields() {
        let mut cmd = Command::new("x", 1, 0, 0, crate::commands::table::Data(|_, _| Ok(())))
            .doc("server", "1.0.0", "S", "");
        cmd.since = "";
        let mut out = Reply::new(Proto::Resp3);
        reply_docs(&mut out, &cmd, &ArgumentLists::default());
        assert_eq!(out.buf, b"%2\r\n$7\r\nsummary\r\n$1\r\nS\r\n$5\r\ngroup\r\n$6\r\nserver\r\n");
    }
}
