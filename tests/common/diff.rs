//! Differential checks: the same commands sent to ferrokey and to a real Valkey 9.1 `valkey-server` (the oracle), and
//! the replies compared byte for byte (or after a normalization, for the few replies whose
//! order or documentation text legitimately differs).
//!
//! A *script line* is a command written as words separated by single spaces (so a word may
//! hold `\0`, `\t` or `\r\n`); the word `""` stands for an empty argument, and a line that
//! starts with `~` has its reply compared sorted (KEYS, SMEMBERS, ...).

use std::fmt::Debug;

use super::{parse_val, sorted_reply, start, start_redis, start_valkey, Client, Server, Val};

/// The arguments of a script line: split on spaces; `""` is the empty string.
pub fn words(line: &str) -> Vec<&[u8]> {
    line.split(' ')
        .filter(|w| !w.is_empty())
        .map(|w| if w == "\"\"" { &b""[..] } else { w.as_bytes() })
        .collect()
}

/// Ferrokey and a real Valkey 9.1 `valkey-server` (the oracle), with one client on each speaking RESP `proto` (2 or 3).
/// Both servers stop when the pair drops.
pub struct Pair {
    pub ours: Server,
    pub theirs: Server,
    /// The client of ferrokey.
    pub a: Client,
    /// The client of the Valkey oracle.
    pub b: Client,
    pub proto: u8,
}

impl Pair {
    /// Start both servers with the same extra `args` and connect.
    pub fn start(proto: u8, args: &[&str]) -> Pair {
        Pair::connect(start(args), start_valkey(args), proto)
    }

    /// Ferrokey and a real redis-server 7.0 (a jemalloc build), for memory figures: the
    /// Valkey oracle is built with libc malloc, so its memory is never the measure.
    pub fn start_redis(proto: u8, args: &[&str]) -> Pair {
        Pair::connect(start(args), start_redis(args), proto)
    }

    /// Connect to two servers already started (and perhaps configured). With `proto` 3 both
    /// clients send `HELLO 3`, which must answer a map.
    pub fn connect(ours: Server, theirs: Server, proto: u8) -> Pair {
        let mut a = Client::connect(ours.port);
        let mut b = Client::connect(theirs.port);
        if proto == 3 {
            for c in [&mut a, &mut b] {
                let hello = c.cmd(&["HELLO", "3"]);
                assert!(matches!(hello, Val::Map(_)), "HELLO 3 failed: {hello:?}");
            }
        }
        Pair { ours, theirs, a, b, proto }
    }

    /// Send one command to both servers; the raw replies (ours, theirs).
    pub fn both<A: AsRef<[u8]>>(&mut self, args: &[A]) -> (Vec<u8>, Vec<u8>) {
        let argv: Vec<&[u8]> = args.iter().map(AsRef::as_ref).collect();
        self.a.send(&argv);
        self.b.send(&argv);
        (self.a.read_raw(), self.b.read_raw())
    }

    /// Assert that two replies to `what` are equal.
    pub fn assert_equal<T: PartialEq + Debug>(&self, what: impl Debug, ours: T, theirs: T) {
        assert_eq!(
            ours, theirs,
            "RESP{} reply to {what:?} differs (left: ferrokey, right: valkey 9.1)",
            self.proto
        );
    }

    /// Assert that two raw replies to `what` are byte-identical (shown as text when not).
    pub fn assert_same_raw(&self, what: impl Debug, ours: &[u8], theirs: &[u8]) {
        self.assert_equal(what, String::from_utf8_lossy(ours), String::from_utf8_lossy(theirs));
    }

    /// The command `args` gets byte-identical replies.
    pub fn same<A: AsRef<[u8]> + Debug>(&mut self, args: &[A]) {
        let (ours, theirs) = self.both(args);
        self.assert_same_raw(args, &ours, &theirs);
    }

    /// The script line gets byte-identical replies (sorted first for a `~` line).
    pub fn same_line(&mut self, line: &str) {
        let (rest, ours, theirs) = line_replies(line, |argv| self.both(argv));
        self.assert_same_raw(rest, &ours, &theirs);
    }

    /// Every script line, in order, gets byte-identical replies.
    pub fn same_lines(&mut self, lines: &[&str]) {
        for line in lines {
            self.same_line(line);
        }
    }

    /// The script line gets equal replies once both are parsed and passed through
    /// `normalize`.
    pub fn same_normalized(&mut self, line: &str, normalize: impl Fn(Val) -> Val) {
        let (ours, theirs) = self.both(&words(line));
        let ours = normalize(parse_val(&mut &ours[..]));
        let theirs = normalize(parse_val(&mut &theirs[..]));
        self.assert_equal(line, ours, theirs);
    }
}

/// The replies (ours, theirs) that `both` gets for a script line, sorted for a line that
/// starts with `~`, with the line as sent (without the `~`).
pub fn line_replies(
    line: &str,
    both: impl FnOnce(&[&[u8]]) -> (Vec<u8>, Vec<u8>),
) -> (&str, Vec<u8>, Vec<u8>) {
    let (sorted, rest) = match line.strip_prefix('~') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let (ours, theirs) = both(&words(rest));
    if sorted {
        (rest, sorted_reply(&ours), sorted_reply(&theirs))
    } else {
        (rest, ours, theirs)
    }
}

/// Run the script `lines` against a fresh ferrokey and a fresh Valkey 9.1, both started
/// with `args` and speaking RESP `proto` (2 or 3), and assert identical replies.
pub fn same_as_valkey_with(proto: u8, args: &[&str], lines: &[&str]) {
    Pair::start(proto, args).same_lines(lines);
}

/// [`same_as_valkey_with`] in both protocols, default configuration.
pub fn same_as_valkey(lines: &[&str]) {
    same_as_valkey_with(2, &[], lines);
    same_as_valkey_with(3, &[], lines);
}
