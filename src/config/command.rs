//! CONFIG GET and CONFIG SET as library functions over [`Config`]; the command handler only
//! turns their results into replies. Error texts are Valkey's `configSetCommand` ones,
//! `ERR` prefix included.

use super::directives::{all, lookup};
use super::glob::glob_match;
use super::kind::{Arity, Directive, Mutability, Support, Value};
use super::values::EnableProtectedConfigs;
use super::Config;

/// Where a CONFIG SET comes from, for `enable-protected-configs local`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// A client on the loopback interface or a unix socket.
    Local,
    Remote,
}

/// One pair of a CONFIG SET, resolved.
struct Target {
    directive: &'static Directive,
    /// The directive's name as the table spells it, canonical or alias, as it was typed
    /// (`hash-max-ziplist-entries`): error texts name it. Valkey keeps an alias as a
    /// separate entry, so an alias and its canonical name in one CONFIG SET are not
    /// duplicates: both are set, in order.
    name: &'static str,
}

impl Config {
    /// CONFIG GET: every directive whose name, or alias, matches one of the glob `patterns`
    /// (case-insensitive), in table order. A directive is listed once under its canonical
    /// name if that matches, and once more under each alias that matches. Hidden directives
    /// are listed only when a pattern is exactly their name, as in Valkey.
    pub fn get(&self, patterns: &[&[u8]]) -> Vec<(String, String)> {
        let mut found = Vec::new();
        for d in all() {
            let names = std::iter::once(&d.name).chain(d.aliases);
            let hidden = super::directives::is_hidden(d.name);
            for name in names {
                let matches = |p: &&[u8]| {
                    if hidden {
                        p.eq_ignore_ascii_case(name.as_bytes())
                    } else {
                        glob_match(p, name.as_bytes(), true)
                    }
                };
                if patterns.iter().any(matches) {
                    found.push((name.to_string(), d.show(self)));
                }
            }
        }
        found
    }

    /// The CONFIG GET text of one directive, by name or alias (any case).
    pub fn get_value(&self, name: &str) -> Option<String> {
        lookup(name).map(|d| d.show(self))
    }

    /// CONFIG SET from a remote client: see [`Config::set_by`].
    pub fn set(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<Vec<&'static str>, String> {
        self.set_by(pairs, Caller::Remote)
    }

    /// CONFIG SET: all pairs or none. Every name and value is checked before anything
    /// changes; if applying one still fails (`dir` that cannot be entered), everything is
    /// put back. Protected directives are refused unless `enable-protected-configs` allows
    /// the `caller`. Returns the canonical names whose value changed, in request order, so
    /// that the server can react (rebind on `port`, new `hz`, ...).
    pub fn set_by(
        &mut self,
        pairs: &[(&[u8], &[u8])],
        caller: Caller,
    ) -> Result<Vec<&'static str>, String> {
        let targets = self.set_targets(pairs, caller)?;

        let mut values: Vec<Value> = Vec::with_capacity(pairs.len());
        for (t, (_, raw)) in targets.iter().zip(pairs) {
            let d = t.directive;
            let value = set_args(d, raw).and_then(|args| d.parse(&args));
            values.push(value.map_err(|e| set_failed(t.name, &e))?);
        }

        let before: Vec<String> = targets.iter().map(|t| t.directive.show(self)).collect();
        let backup = self.clone();
        for (t, value) in targets.iter().zip(values) {
            if let Err(e) = t.directive.apply(self, value) {
                self.restore(backup);
                return Err(set_failed(t.name, &e));
            }
        }
        let mut changed: Vec<&'static str> = Vec::with_capacity(targets.len());
        for (t, old) in targets.iter().zip(&before) {
            let d = t.directive;
            if d.show(self) != *old && !changed.contains(&d.name) {
                changed.push(d.name);
                if let (Support::NoEffect(reason), true) = (d.support, d.differs_from_default(self))
                {
                    tracing::warn!("CONFIG SET {} has no effect in this server: {reason}", d.name);
                }
            }
        }
        Ok(changed)
    }

    /// Resolves the names of a CONFIG SET, refusing unknown, immutable, protected and
    /// repeated ones; errors name the argument as typed.
    fn set_targets(&self, pairs: &[(&[u8], &[u8])], caller: Caller) -> Result<Vec<Target>, String> {
        let mut targets: Vec<Target> = Vec::with_capacity(pairs.len());
        for (typed, _) in pairs {
            let typed = String::from_utf8_lossy(typed);
            let Some(d) = lookup(&typed) else {
                return Err(format!(
                    "ERR Unknown option or number of arguments for CONFIG SET - '{typed}'"
                ));
            };
            match d.mutability {
                Mutability::Immutable => {
                    return Err(set_failed(&typed, "can't set immutable config"));
                }
                Mutability::Protected if !self.allows_protected(caller) => {
                    return Err(set_failed(&typed, "can't set protected config"));
                }
                Mutability::Protected | Mutability::Mutable => {}
            }
            let name = d.spelling(&typed);
            if targets.iter().any(|t| t.name == name) {
                return Err(set_failed(&typed, "duplicate parameter"));
            }
            targets.push(Target { directive: d, name });
        }
        Ok(targets)
    }

    /// Whether `enable-protected-configs` lets `caller` change protected directives.
    fn allows_protected(&self, caller: Caller) -> bool {
        match self.enable_protected_configs {
            EnableProtectedConfigs::Yes => true,
            EnableProtectedConfigs::Local => caller == Caller::Local,
            EnableProtectedConfigs::No => false,
        }
    }

    /// Puts back a configuration saved before a failed CONFIG SET, working directory included.
    pub fn restore(&mut self, backup: Config) {
        if backup.dir != self.dir {
            // Best effort: the directory was entered a moment ago, so it is expected to work.
            if let Err(e) = std::env::set_current_dir(&backup.dir) {
                tracing::warn!("CONFIG SET rollback: cannot return to {:?}: {e}", backup.dir);
            }
        }
        *self = backup;
    }
}

fn set_failed(name: &str, reason: &str) -> String {
    format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}")
}

/// CONFIG SET values are one argument; a multi-argument directive splits it on single
/// spaces (`sdssplitlen`), and an empty value means no arguments.
fn set_args(d: &Directive, raw: &[u8]) -> Result<Vec<String>, String> {
    let value = std::str::from_utf8(raw).map_err(|_| "argument must be valid UTF-8")?;
    Ok(match d.arity() {
        Arity::Single => vec![value.to_string()],
        Arity::Multi if value.is_empty() => Vec::new(),
        Arity::Multi => value.split(' ').map(str::to_string).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::values::{MaxmemoryPolicy, ObufLimit};
    use super::*;

    fn get1(c: &Config, pattern: &str) -> Vec<(String, String)> {
        c.get(&[pattern.as_bytes()])
    }

    fn set1(c: &mut Config, name: &str, value: &str) -> Result<Vec<&'static str>, String> {
        c.set(&[(name.as_bytes(), value.as_bytes())])
    }

    fn pair(name: &str, value: &str) -> (String, String) {
        (name.to_string(), value.to_string())
    }

    #[test]
    fn get_exact_and_globs() {
        let c = Config::default();
        assert_eq!(get1(&c, "port"), vec![pair("port", "6379")]);
        assert_eq!(get1(&c, "PORT"), vec![pair("port", "6379")]);
        assert_eq!(get1(&c, "nope"), vec![]);
        let maxmem: Vec<String> = get1(&c, "maxmemory*").into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            maxmem,
            [
                "maxmemory",
                "maxmemory-policy",
                "maxmemory-samples",
                "maxmemory-eviction-tenacity",
                "maxmemory-clients"
            ]
        );
        let listed = all().filter(|d| !super::super::directives::is_hidden(d.name));
        assert_eq!(get1(&c, "*").len(), listed.map(|d| 1 + d.aliases.len()).sum::<usize>());
        // Hidden directives answer to their exact names only.
        assert_eq!(get1(&c, "min-io-threads-avoid-copy-reply").len(), 1);
        assert!(get1(&c, "min-io-threads-avoid-copy-repl*").is_empty());
        assert_eq!(get1(&c, "?ort"), vec![pair("port", "6379")]);
        assert_eq!(get1(&c, "[pq]ort"), vec![pair("port", "6379")]);
    }

    #[test]
    fn get_several_patterns_lists_each_directive_once() {
        let c = Config::default();
        let got = c.get(&[b"port", b"po*", b"timeout"]);
        assert_eq!(got, vec![pair("port", "6379"), pair("timeout", "0")]);
    }

    #[test]
    fn get_aliases() {
        let c = Config::default();
        assert_eq!(
            get1(&c, "hash-max-*-entries"),
            vec![pair("hash-max-listpack-entries", "512"), pair("hash-max-ziplist-entries", "512")]
        );
        assert_eq!(get1(&c, "lua-time-limit"), vec![pair("lua-time-limit", "5000")]);
        assert_eq!(get1(&c, "list-max-ziplist-size"), vec![pair("list-max-ziplist-size", "-2")]);
    }

    #[test]
    fn get_shows_valkey_formats() {
        let c = Config::default();
        let show = |n: &str| c.get_value(n).unwrap();
        assert_eq!(show("save"), "3600 1 300 100 60 10000");
        assert_eq!(
            show("client-output-buffer-limit"),
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
        );
        assert_eq!(show("bind"), "* -::*");
        assert_eq!(show("proto-max-bulk-len"), "536870912");
        assert_eq!(show("client-query-buffer-limit"), "1073741824");
        assert_eq!(show("maxmemory-policy"), "noeviction");
        assert_eq!(show("protected-mode"), "yes");
        assert_eq!(show("unixsocketperm"), "0");
        assert_eq!(show("notify-keyspace-events"), "");
        assert_eq!(show("appendfsync"), "everysec");
        assert_eq!(show("requirepass"), "");
        let dir = show("dir");
        assert!(std::path::Path::new(&dir).is_absolute(), "{dir}");
    }

    #[test]
    fn set_typed_values() {
        let mut c = Config::default();
        assert_eq!(set1(&mut c, "maxmemory", "100mb"), Ok(vec!["maxmemory"]));
        assert_eq!(c.maxmemory_bytes, 100 * 1024 * 1024);
        assert_eq!(set1(&mut c, "MAXMEMORY-POLICY", "ALLKEYS-LRU"), Ok(vec!["maxmemory-policy"]));
        assert_eq!(c.maxmemory_policy, MaxmemoryPolicy::AllkeysLru);
        assert_eq!(set1(&mut c, "hz", "1000"), Ok(vec!["hz"]));
        assert_eq!(c.hz, 500);
        assert_eq!(set1(&mut c, "hz", "0"), Ok(vec!["hz"]));
        assert_eq!(c.hz, 1);
        assert_eq!(set1(&mut c, "save", ""), Ok(vec!["save"]));
        assert!(c.save.is_empty());
        assert_eq!(set1(&mut c, "save", "900 1 300 10"), Ok(vec!["save"]));
        assert_eq!(c.save, vec![(900, 1), (300, 10)]);
        assert_eq!(
            set1(&mut c, "client-output-buffer-limit", "pubsub 1mb 2kb 3"),
            Ok(vec!["client-output-buffer-limit"])
        );
        assert_eq!(
            c.client_output_buffer_limit[2],
            ObufLimit { hard_bytes: 1024 * 1024, soft_bytes: 2048, soft_secs: 3 }
        );
        assert_eq!(c.client_output_buffer_limit[1].hard_bytes, 256 * 1024 * 1024);
        assert_eq!(set1(&mut c, "bind", "127.0.0.1 -::1"), Ok(vec!["bind"]));
        assert_eq!(c.bind, vec!["127.0.0.1", "-::1"]);
        assert_eq!(
            set1(&mut c, "notify-keyspace-events", "KEA"),
            Ok(vec!["notify-keyspace-events"])
        );
        assert_eq!(c.get_value("notify-keyspace-events").unwrap(), "AKE");
        assert_eq!(set1(&mut c, "maxmemory-clients", "10%"), Ok(vec!["maxmemory-clients"]));
        assert_eq!(c.get_value("maxmemory-clients").unwrap(), "10%");
        // Above i64::MAX a byte count wraps into a percentage, as in Valkey.
        assert_eq!(
            set1(&mut c, "maxmemory-clients", "18446744073709551615"),
            Ok(vec!["maxmemory-clients"])
        );
        assert_eq!(c.get_value("maxmemory-clients").unwrap(), "1%");
        assert_eq!(
            set1(&mut c, "maxmemory-clients", "9223372036854775808"),
            failed("maxmemory-clients", "percentage argument must be less or equal to 100")
        );
        // A memory value without digits is 0.
        assert_eq!(set1(&mut c, "maxmemory-clients", "kb"), Ok(vec!["maxmemory-clients"]));
        assert_eq!(c.get_value("maxmemory-clients").unwrap(), "0");
        assert_eq!(set1(&mut c, "maxmemory", ""), Ok(vec!["maxmemory"]));
        assert_eq!(c.maxmemory_bytes, 0);
        assert_eq!(set1(&mut c, "lua-time-limit", "100"), Ok(vec!["busy-reply-threshold"]));
        assert_eq!(c.busy_reply_threshold_ms, 100);
        // Setting the current value is accepted and reports no change.
        assert_eq!(set1(&mut c, "port", "6379"), Ok(vec![]));
    }

    fn failed(name: &str, reason: &str) -> Result<Vec<&'static str>, String> {
        Err(format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}"))
    }

    #[test]
    fn set_error_texts() {
        let mut c = Config::default();
        assert_eq!(
            set1(&mut c, "foo", "1"),
            Err("ERR Unknown option or number of arguments for CONFIG SET - 'foo'".to_string())
        );
        assert_eq!(
            set1(&mut c, "maxmemory", "1x"),
            failed("maxmemory", "argument must be a memory value")
        );
        assert_eq!(
            set1(&mut c, "io-threads", "4"),
            failed("io-threads", "can't set immutable config")
        );
        assert_eq!(
            set1(&mut c, "hz", "fast"),
            failed("hz", "argument couldn't be parsed into an integer")
        );
        assert_eq!(
            set1(&mut c, "appendonly", "maybe"),
            failed("appendonly", "argument must be 'yes' or 'no'")
        );
        assert_eq!(
            set1(&mut c, "maxmemory-policy", "lru"),
            failed(
                "maxmemory-policy",
                "argument(s) must be one of the following: volatile-lru, volatile-lfu, \
                 volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"
            )
        );
        assert_eq!(
            set1(&mut c, "port", "65536"),
            failed("port", "argument must be between 0 and 65535 inclusive")
        );
        assert_eq!(
            set1(&mut c, "proto-max-bulk-len", "1000"),
            failed(
                "proto-max-bulk-len",
                "argument must be between 1048576 and 9223372036854775807 inclusive"
            )
        );
        assert_eq!(set1(&mut c, "save", "100"), failed("save", "Invalid save parameters"));
        assert_eq!(set1(&mut c, "save", "0 1"), failed("save", "Invalid save parameters"));
        assert_eq!(set1(&mut c, "save", "10  1"), failed("save", "Invalid save parameters"));
        assert_eq!(
            set1(&mut c, "client-output-buffer-limit", "master 0 0 0"),
            failed(
                "client-output-buffer-limit",
                "Invalid client class specified in buffer limit configuration."
            )
        );
        assert_eq!(
            set1(&mut c, "client-output-buffer-limit", "normal 0 0"),
            failed(
                "client-output-buffer-limit",
                "Wrong number of arguments in buffer limit configuration."
            )
        );
        assert_eq!(
            set1(&mut c, "client-output-buffer-limit", "normal 1 x 0"),
            failed(
                "client-output-buffer-limit",
                "Error in hard, soft or soft_seconds setting in buffer limit configuration."
            )
        );
        assert_eq!(
            set1(&mut c, "notify-keyspace-events", "KEQ"),
            failed(
                "notify-keyspace-events",
                "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
            )
        );
        assert_eq!(
            set1(&mut c, "maxmemory-clients", "101%"),
            failed("maxmemory-clients", "percentage argument must be less or equal to 100")
        );
        assert_eq!(
            set1(&mut c, "maxmemory-clients", "x"),
            failed("maxmemory-clients", "argument must be a memory or percent value")
        );
        // Value errors name the directive as the table spells it: an alias stays the
        // alias, in lower case; earlier errors name the argument as typed.
        assert_eq!(
            set1(&mut c, "HASH-max-ziplist-entries", "-1"),
            failed(
                "hash-max-ziplist-entries",
                "argument must be between 0 and 9223372036854775807 inclusive"
            )
        );
        assert_eq!(
            set1(&mut c, "HZ", "x"),
            failed("hz", "argument couldn't be parsed into an integer")
        );
        assert_eq!(
            set1(&mut c, "IO-threads", "4"),
            failed("IO-threads", "can't set immutable config")
        );
        assert_eq!(c, Config::default());
    }

    fn protected(c: &Config) -> Config {
        Config { enable_protected_configs: EnableProtectedConfigs::Yes, ..c.clone() }
    }

    #[test]
    fn protected_configs() {
        let mut c = Config::default();
        for (name, value) in [("dir", "/"), ("DIR", "/nonexistent"), ("dbfilename", "a/b.rdb")] {
            assert_eq!(set1(&mut c, name, value), failed(name, "can't set protected config"));
            let pairs: [(&[u8], &[u8]); 1] = [(name.as_bytes(), value.as_bytes())];
            assert_eq!(c.set_by(&pairs, Caller::Local), failed(name, "can't set protected config"));
        }
        // Checked before the values, pair by pair.
        let pairs: [(&[u8], &[u8]); 2] = [(b"hz", b"x"), (b"dbfilename", b"x.rdb")];
        assert_eq!(c.set(&pairs), failed("dbfilename", "can't set protected config"));
        let pairs: [(&[u8], &[u8]); 2] = [(b"nosuch", b"1"), (b"dbfilename", b"x.rdb")];
        assert_eq!(
            c.set(&pairs),
            Err("ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'".to_string())
        );
        assert_eq!(
            set1(&mut c, "enable-protected-configs", "yes"),
            failed("enable-protected-configs", "can't set immutable config")
        );
        assert_eq!(c, Config::default());

        let mut local =
            Config { enable_protected_configs: EnableProtectedConfigs::Local, ..Config::default() };
        let pairs: [(&[u8], &[u8]); 1] = [(b"dbfilename", b"x.rdb")];
        assert_eq!(
            local.set_by(&pairs, Caller::Remote),
            failed("dbfilename", "can't set protected config")
        );
        assert_eq!(local.set_by(&pairs, Caller::Local), Ok(vec!["dbfilename"]));
        assert_eq!(local.dbfilename, "x.rdb");

        let mut open = protected(&Config::default());
        assert_eq!(set1(&mut open, "dbfilename", "y.rdb"), Ok(vec!["dbfilename"]));
        assert_eq!(
            set1(&mut open, "dbfilename", "a/b.rdb"),
            failed("dbfilename", "dbfilename can't be a path, just a filename")
        );
        assert_eq!(
            set1(&mut open, "dir", "/nonexistent/ferrokey/dir"),
            failed("dir", "No such file or directory")
        );
        assert_eq!(open.dbfilename, "y.rdb");
    }

    #[test]
    fn set_is_all_or_nothing() {
        let mut c = Config::default();
        let pairs: [(&[u8], &[u8]); 3] =
            [(b"maxmemory", b"1gb"), (b"hz", b"50"), (b"appendonly", b"bad")];
        assert_eq!(c.set(&pairs), failed("appendonly", "argument must be 'yes' or 'no'"));
        assert_eq!(c, Config::default());

        let dup: [(&[u8], &[u8]); 2] = [(b"maxmemory", b"1gb"), (b"MAXMEMORY", b"2gb")];
        assert_eq!(c.set(&dup), failed("MAXMEMORY", "duplicate parameter"));
        let alias_dup: [(&[u8], &[u8]); 2] = [(b"lua-time-limit", b"1"), (b"Lua-Time-Limit", b"2")];
        assert_eq!(c.set(&alias_dup), failed("Lua-Time-Limit", "duplicate parameter"));

        let unknown_first: [(&[u8], &[u8]); 2] = [(b"nope", b"1"), (b"io-threads", b"2")];
        assert_eq!(
            c.set(&unknown_first),
            Err("ERR Unknown option or number of arguments for CONFIG SET - 'nope'".to_string())
        );
        let immutable_first: [(&[u8], &[u8]); 2] = [(b"databases", b"1"), (b"nope", b"2")];
        assert_eq!(c.set(&immutable_first), failed("databases", "can't set immutable config"));
        assert_eq!(c, Config::default());

        let ok: [(&[u8], &[u8]); 2] = [(b"maxmemory", b"1gb"), (b"hz", b"50")];
        assert_eq!(c.set(&ok), Ok(vec!["maxmemory", "hz"]));
        assert_eq!((c.maxmemory_bytes, c.hz), (1 << 30, 50));

        // An alias and its canonical name are two parameters, set in order (redis 7.0).
        let both: [(&[u8], &[u8]); 2] =
            [(b"lua-time-limit", b"1"), (b"busy-reply-threshold", b"2")];
        assert_eq!(c.set(&both), Ok(vec!["busy-reply-threshold"]));
        assert_eq!(c.busy_reply_threshold_ms, 2);
        let bad: [(&[u8], &[u8]); 2] = [(b"busy-reply-threshold", b"3"), (b"lua-time-limit", b"x")];
        assert_eq!(
            c.set(&bad),
            failed("lua-time-limit", "argument couldn't be parsed into an integer")
        );
        assert_eq!(c.busy_reply_threshold_ms, 2);
    }

    #[test]
    fn set_rolls_back_when_applying_fails() {
        let mut c = protected(&Config::default());
        let start = c.clone();
        // `dir` passes validation (any text) and fails when applied; the earlier pair must
        // be undone.
        let pairs: [(&[u8], &[u8]); 2] =
            [(b"maxmemory", b"1gb"), (b"dir", b"/nonexistent/ferrokey/dir")];
        assert_eq!(c.set(&pairs), failed("dir", "No such file or directory"));
        assert_eq!(c, start);
    }

    #[test]
    fn set_dir_to_the_current_directory() {
        let mut c = protected(&Config::default());
        let here = c.dir.to_string_lossy().into_owned();
        assert_eq!(set1(&mut c, "dir", &here), Ok(vec![]));
        assert_eq!(c.get_value("dir").unwrap(), here);
    }
}
