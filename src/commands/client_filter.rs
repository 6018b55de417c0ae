//! The client filters that CLIENT LIST and CLIENT KILL share (Valkey 9.0's set): `ID`,
//! `TYPE`, `USER`, `ADDR`, `LADDR`, `SKIPME`, `MAXAGE`, `NAME`, `IDLE`, `FLAGS`,
//! `LIB-NAME`, `LIB-VER`, `DB`, `CAPA`, `IP`, and the `NOT-` form of each but `SKIPME`,
//! `MAXAGE` and `IDLE`. Every filter given must hold; a `NOT-` filter holds where its
//! positive twin does not. `ID` and `NOT-ID` gather every id given, in any number of
//! options; every other option given twice keeps its last value (as Valkey 9.1 does).
//!
//! Parsing checks values the way Valkey 9.1 does and answers its errors word for word
//! (user names are resolved by the caller, which holds the ACL). Matching reads only the
//! client and its tracking settings, so LIST and KILL apply the same test to the same
//! client.

use bytes::Bytes;

use crate::commands::args::{is, text};
use crate::commands::CmdError;
use crate::server::client::{Client, ClientType};
use crate::server::tracking::ClientTracking;
use crate::types::string::parse_i64;

/// The flag letters a `FLAGS` filter may name (every letter Valkey 9.1 can print).
const KNOWN_FLAGS: &[u8] = b"ABEIMNOPRSTUbcdeirtux";
/// The capability letters a `CAPA` filter may name.
const KNOWN_CAPAS: &[u8] = b"r";

/// The positive or negated half of a filter: each field set is one test.
#[derive(Default, Debug)]
struct Tests<'a> {
    /// Any of these ids; empty: no id test.
    ids: Vec<u64>,
    kind: Option<ClientType>,
    addr: Option<&'a [u8]>,
    laddr: Option<&'a [u8]>,
    /// The user's name as given, resolved into `user_id` by [`ClientFilter::resolve_users`].
    user: Option<&'a [u8]>,
    user_id: Option<crate::acl::UserId>,
    name: Option<&'a [u8]>,
    /// Letters the client's flags must all include.
    flags: Option<&'a [u8]>,
    lib_name: Option<&'a [u8]>,
    lib_ver: Option<&'a [u8]>,
    db: Option<usize>,
    capa: Option<&'a [u8]>,
    ip: Option<&'a [u8]>,
}

/// One parsed filter list.
#[derive(Default, Debug)]
pub struct ClientFilter<'a> {
    pos: Tests<'a>,
    neg: Tests<'a>,
    /// Connected at least this long (seconds).
    min_age_s: Option<i64>,
    /// Idle at least this long (seconds).
    min_idle_s: Option<i64>,
    /// `SKIPME yes|no` as given; each command has its own default.
    pub skip_me: Option<bool>,
}

/// What one client looks like to a filter.
pub struct Candidate<'a> {
    pub client: &'a Client,
    pub tracking: Option<&'a ClientTracking>,
    /// Seconds since its last command (0 for the client running one).
    pub idle_s: i64,
}

impl<'a> ClientFilter<'a> {
    /// Parses `args` (option/value pairs); `databases` bounds `DB`.
    pub fn parse(args: &'a [Bytes], databases: usize) -> Result<Self, CmdError> {
        let mut f = ClientFilter::default();
        let mut i = 0;
        while i < args.len() {
            let opt = &args[i][..];
            let value = args.get(i + 1).ok_or(CmdError::Syntax)?;
            let (negated, word) = match opt.get(..4) {
                Some(p) if p.eq_ignore_ascii_case(b"NOT-") => (true, &opt[4..]),
                _ => (false, opt),
            };
            let t = if negated { &mut f.neg } else { &mut f.pos };
            if is(word, "ID") {
                // `ID <id> [<id> ...]`: ids run until a word that is not a number (the next
                // option); the first must be a number (else a syntax error), and any below 1
                // is refused as such.
                parse_i64(value).ok_or(CmdError::Syntax)?;
                while let Some(id) = args.get(i + 1).and_then(|a| parse_i64(a)) {
                    let id = u64::try_from(id).ok().filter(|&n| n >= 1);
                    t.ids.push(id.ok_or(CmdError::ClientIdNotPositive)?);
                    i += 1;
                }
                i += 1;
                continue;
            }
            if is(word, "TYPE") {
                let kind = ClientType::from_name(value);
                t.kind = Some(kind.ok_or_else(|| CmdError::UnknownClientType(text(value)))?);
            } else if is(word, "ADDR") {
                t.addr = Some(value);
            } else if is(word, "LADDR") {
                t.laddr = Some(value);
            } else if is(word, "USER") {
                t.user = Some(value);
            } else if is(word, "NAME") {
                t.name = Some(value);
            } else if is(word, "FLAGS") {
                t.flags = Some(known_letters(value, KNOWN_FLAGS, "flags", negated)?);
            } else if is(word, "LIB-NAME") {
                t.lib_name = Some(value);
            } else if is(word, "LIB-VER") {
                t.lib_ver = Some(value);
            } else if is(word, "DB") {
                t.db = Some(parse_db(value, databases)?);
            } else if is(word, "CAPA") {
                t.capa = Some(known_letters(value, KNOWN_CAPAS, "capa", negated)?);
            } else if is(word, "IP") {
                t.ip = Some(value);
            } else if negated {
                return Err(CmdError::Syntax);
            } else if is(word, "SKIPME") {
                f.skip_me = Some(yes_no(value)?);
            } else if is(word, "MAXAGE") {
                f.min_age_s = Some(positive(value, "maxage")?);
            } else if is(word, "IDLE") {
                f.min_idle_s = Some(positive(value, "idle")?);
            } else {
                return Err(CmdError::Syntax);
            }
            i += 2;
        }
        Ok(f)
    }

    /// Resolves `USER` and `NOT-USER` names with `find`; an unknown name is Valkey's
    /// `No such user` error.
    pub fn resolve_users(
        &mut self,
        find: impl Fn(&[u8]) -> Option<crate::acl::UserId>,
    ) -> Result<(), CmdError> {
        for t in [&mut self.pos, &mut self.neg] {
            if let Some(name) = t.user {
                t.user_id = Some(find(name).ok_or_else(|| CmdError::NoSuchUser(text(name)))?);
            }
        }
        Ok(())
    }

    /// Whether `c` passes every filter, at `now_ms`.
    pub fn matches(&self, c: &Candidate, now_ms: i64) -> bool {
        let client = c.client;
        self.min_age_s.is_none_or(|age| now_ms / 1000 - client.created_ms / 1000 >= age)
            && self.min_idle_s.is_none_or(|idle| c.idle_s >= idle)
            && self.pos.all_hold(c, true)
            && self.neg.all_hold(c, false)
    }
}

impl Tests<'_> {
    /// Whether every test set holds (`want` true) or every one fails (`want` false: the
    /// `NOT-` half).
    fn all_hold(&self, c: &Candidate, want: bool) -> bool {
        let client = c.client;
        let attr = |a: &Option<Bytes>, v: &[u8]| a.as_deref() == Some(v);
        let ip = client.peer_id().rsplit_once(':').map_or("", |(ip, _)| ip);
        let capa: &[u8] = if client.capa_redirect { b"r" } else { b"" };
        (self.ids.is_empty() || self.ids.contains(&client.id) == want)
            && self.kind.is_none_or(|k| (k == client.client_type()) == want)
            && self.addr.is_none_or(|a| (a == client.peer_id().as_bytes()) == want)
            && self.laddr.is_none_or(|a| (a == client.sock_name().as_bytes()) == want)
            && self.user_id.is_none_or(|u| (u == client.user) == want)
            && self.name.is_none_or(|n| attr(&client.name, n) == want)
            && self.flags.is_none_or(|f| {
                let have = client.flag_letters(c.tracking);
                includes(have.as_bytes(), f) == want
            })
            && self.lib_name.is_none_or(|n| attr(&client.lib_name, n) == want)
            && self.lib_ver.is_none_or(|n| attr(&client.lib_ver, n) == want)
            && self.db.is_none_or(|db| (db == client.db) == want)
            && self.capa.is_none_or(|f| includes(capa, f) == want)
            && self.ip.is_none_or(|v| (v == ip.as_bytes()) == want)
    }
}

/// Whether every letter of `wanted` is in `have`.
fn includes(have: &[u8], wanted: &[u8]) -> bool {
    wanted.iter().all(|b| have.contains(b))
}

/// A FLAGS or CAPA value whose letters are all known.
fn known_letters<'a>(
    value: &'a [u8],
    known: &[u8],
    what: &'static str,
    negated: bool,
) -> Result<&'a [u8], CmdError> {
    if value.iter().all(|b| known.contains(b)) {
        return Ok(value);
    }
    Err(CmdError::FilterLetters { what, negated, value: text(value) })
}

fn parse_db(value: &[u8], databases: usize) -> Result<usize, CmdError> {
    let db = parse_i64(value).ok_or(CmdError::FilterDbNotInteger)?;
    let last = databases.saturating_sub(1);
    usize::try_from(db).ok().filter(|&d| d < databases).ok_or(CmdError::FilterDbRange(last))
}

/// MAXAGE or IDLE: an integer above 0.
fn positive(value: &[u8], what: &'static str) -> Result<i64, CmdError> {
    let n = parse_i64(value).ok_or(CmdError::FilterNotInteger(what))?;
    if n <= 0 {
        return Err(CmdError::FilterNotPositive(what));
    }
    Ok(n)
}

fn yes_no(a: &[u8]) -> Result<bool, CmdError> {
    if is(a, "YES") {
        Ok(true)
    } else if is(a, "NO") {
        Ok(false)
    } else {
        Err(CmdError::Syntax)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Bytes> {
        words.iter().map(|w| Bytes::copy_from_slice(w.as_bytes())).collect()
    }

    fn err(words: &[&str]) -> String {
        let a = args(words);
        ClientFilter::parse(&a, 16).unwrap_err().to_string()
    }

    #[test]
    fn values_are_checked_as_valkey_checks_them() {
        assert_eq!(err(&["idle", "0"]), "ERR idle should be greater than 0");
        assert_eq!(err(&["idle", "x"]), "ERR idle is not an integer or out of range");
        assert_eq!(err(&["maxage", "-5"]), "ERR maxage should be greater than 0");
        assert_eq!(err(&["db", "16"]), "ERR DB number should be between 0 and 15");
        assert_eq!(err(&["db", "x"]), "ERR DB is not an integer or out of range");
        assert_eq!(err(&["flags", "ZN"]), "ERR Unknown flags found in the provided filter: ZN");
        assert_eq!(err(&["not-flags", "Z"]), "ERR Unknown flags found in the NOT-FLAGS filter: Z");
        assert_eq!(err(&["not-capa", "x"]), "ERR Unknown capa found in the NOT-CAPA filter: x");
        assert_eq!(err(&["not-id", "0"]), "ERR client-id should be greater than 0");
        assert_eq!(err(&["not-type", "bad"]), "ERR Unknown client type 'bad'");
        let syntax_errors: [&[&str]; 6] = [
            &["id", "5", "x"],
            &["id", "1", "type"],
            &["not-maxage", "1"],
            &["name"],
            &["not-skipme", "no"],
            &["skipme", "maybe"],
        ];
        for syntax in syntax_errors {
            assert_eq!(err(syntax), "ERR syntax error", "{syntax:?}");
        }
    }

    #[test]
    fn ids_gather_and_other_options_keep_their_last_value() {
        let a = args(&["id", "5", "6", "id", "7", "not-id", "9", "name", "a", "name", "b"]);
        let f = ClientFilter::parse(&a, 16).unwrap();
        assert_eq!(f.pos.ids, [5, 6, 7]);
        assert_eq!(f.neg.ids, [9]);
        assert_eq!(f.pos.name, Some(&b"b"[..]));
        assert_eq!(f.skip_me, None);
    }

    #[test]
    fn letters_must_all_be_present() {
        assert!(includes(b"Pt", b"tP"));
        assert!(includes(b"N", b""));
        assert!(!includes(b"N", b"PN"));
    }
}
