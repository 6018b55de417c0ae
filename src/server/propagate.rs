//! The propagation feed: each command that changed the dataset is appended, in execution
//! order, as a RESP array in the form that replays to the same result later, with a
//! `SELECT` whenever the database changes and `MULTI`/`EXEC` around a transaction's writes.
//! One stream for every consumer: the AOF drains it (`persist::aof`), and so does the
//! replication backlog (`replication`), each from a buffer of its own. It is on while a
//! consumer reads it ([`Feed::on`]); off, nothing is encoded.
//!
//! # What goes in
//!
//! `dispatch::call` feeds a command when it raised a key event (every write that changed a
//! key raises one, see `server::events`) or emptied or swapped databases, and the command
//! is a write. Keys the keyspace removed on its own (lazily or actively expired, evicted)
//! are fed as `UNLINK key` (or `DEL key` when lazy freeing is off for them, see [`removed`])
//! when their removal is drained, before the command that found them.
//! A `SELECT` goes in whenever the database differs from the last command's.
//!
//! # Replaying the same thing
//!
//! A log entry is replayed later, maybe days later, so what depends on the clock or on
//! chance is rewritten to what actually happened, as Valkey does:
//! - relative expire times become absolute: `EXPIRE`/`PEXPIRE`/`EXPIREAT` become
//!   `PEXPIREAT key <unix-ms>` (their NX/XX/GT/LT flags kept, as Valkey keeps them), `SETEX`/`PSETEX` and
//!   `SET key value ... EX|PX|EXAT` become `SET key value PXAT <unix-ms>` (its other
//!   options dropped, as Valkey drops them), `MSETEX ... EX|PX|EXAT` gets `PXAT` in place,
//!   `DELIFEQ` that deleted becomes `DEL`, `GETEX ... EX|PX|EXAT|PXAT`
//!   becomes `PEXPIREAT` and `GETEX ... PERSIST` becomes `PERSIST`, and `RESTORE` with a
//!   relative TTL gets `ABSTTL` (so does `RESTORE-ASKING`), and `MIGRATE` that moved keys
//!   becomes `DEL` of those keys;
//! - a command whose effect was random (`SPOP`) states it explicitly through
//!   `Ctx::propagate_as` (command layer) (`SREM key <members>`).
//!
//! Everything else is deterministic given the same dataset and is logged as sent. The
//! commands of a MULTI/EXEC go in between `MULTI` and `EXEC` when more than one of them is
//! logged, so a replay never applies half a transaction; a transaction that logged one
//! command logs it bare, as Valkey does.

use bytes::Bytes;

use crate::server::state::ServerState;
use crate::spec::table::Command;
use crate::util::fmt::{fmt_u64, itoa_buf};

/// Appends `argv` as a RESP array of bulk strings.
pub fn append_command<A: AsRef<[u8]>>(buf: &mut Vec<u8>, argv: &[A]) {
    push_header(buf, b'*', argv.len());
    for a in argv {
        let a = a.as_ref();
        push_header(buf, b'$', a.len());
        buf.extend_from_slice(a);
        buf.extend_from_slice(b"\r\n");
    }
}

fn push_header(buf: &mut Vec<u8>, kind: u8, n: usize) {
    buf.push(kind);
    buf.extend_from_slice(fmt_u64(&mut itoa_buf(), n as u64));
    buf.extend_from_slice(b"\r\n");
}

/// Where the feed stands between commands: its two consumers' buffers, the database the
/// stream last selected and the MULTI wrapping of a transaction in progress.
///
/// Each consumer drains a buffer of its own: the AOF writes `buf` to its file before replies
/// go out (and keeps it on a write error, to try again), the replication layer moves `repl`
/// into its backlog and to its replicas. A command is encoded once, into the first buffer
/// that is on, and copied to the other when both are. Each stream has its own `SELECT`
/// position (a script's `set_repl` may send a write to one of them only); a consumer asks
/// for a fresh `SELECT` with [`Feed::reselect`] (a new AOF file, a replica's full sync), and
/// the other then gets one more `SELECT` than it needed, which changes nothing.
#[derive(Debug, Default)]
pub struct Feed {
    /// A consumer reads the feed: commands are encoded. Kept equal to `aof || repl_on`.
    pub on: bool,
    /// The AOF logs.
    aof: bool,
    /// Replication reads the feed (a backlog exists).
    repl_on: bool,
    /// This server is a replica: its replication buffer gets the primary's stream as
    /// received ([`Feed::proxy`]), never what it encodes itself.
    pub repl_proxy: bool,
    /// The AOF's buffer of commands not yet written to its file.
    pub buf: Vec<u8>,
    /// Replication's buffer of commands not yet in the backlog.
    pub repl: Vec<u8>,
    /// The database each stream's last `SELECT` chose, the AOF's then replication's (None:
    /// none yet, or a fresh one was asked for).
    selected: [Option<usize>; 2],
    /// Inside EXEC: MULTI goes in before the first logged command.
    exec: Option<[ExecWrap; 2]>,
    /// Commands the running command asked to log instead of itself.
    pub replaced: Option<Vec<Vec<Bytes>>>,
    /// Consumers a running script took out with `server.set_repl` ([`MUTE_AOF`],
    /// [`MUTE_REPL`]); 0 otherwise.
    pub muted: u8,
}

/// [`Feed::muted`]: the AOF gets nothing.
pub const MUTE_AOF: u8 = 1;
/// [`Feed::muted`]: replicas get nothing.
pub const MUTE_REPL: u8 = 2;

/// A transaction's wrapping in one consumer's stream (the AOF's, replication's): a script's
/// `set_repl` can send some of its writes to one of them only, and each gets `MULTI` only
/// when it gets more than one command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExecWrap {
    /// Nothing logged yet for this transaction.
    Pending,
    /// One command logged, from this position of the consumer's buffer: a second one puts
    /// `MULTI` there (a transaction with one write is logged bare, as Valkey logs it).
    One { at: usize },
    /// `MULTI` went in: `EXEC` follows at the end.
    Open,
}

const AOF: usize = 0;
const REPL: usize = 1;

impl Feed {
    /// The AOF starts or stops consuming the feed.
    pub fn set_aof(&mut self, on: bool) {
        self.aof = on;
        self.on = self.aof || self.repl_on;
        if !on {
            self.buf = Vec::new();
        }
    }

    /// Replication starts or stops consuming the feed.
    pub fn set_repl(&mut self, on: bool) {
        self.repl_on = on;
        self.on = self.aof || self.repl_on;
        if !on {
            self.repl = Vec::new();
        }
    }

    /// Whether commands this server encodes reach its replicas (a backlog exists, and this
    /// is not a replica, whose stream is its primary's).
    pub fn repl_gets_commands(&self) -> bool {
        self.repl_on && !self.repl_proxy
    }

    /// Whether the AOF consumes the feed.
    pub fn aof_on(&self) -> bool {
        self.aof
    }

    /// The AOF starts a new file: drops what it was fed and not written, and asks for a
    /// fresh `SELECT`. Replication's buffer and a transaction's wrapping stay.
    pub fn reset(&mut self) {
        self.buf.clear();
        self.selected[AOF] = None;
    }

    /// The next command in each stream starts with a `SELECT`.
    pub fn reselect(&mut self) {
        self.selected = [None; 2];
    }

    /// Logs one command run against `db`.
    pub fn command<A: AsRef<[u8]>>(&mut self, db: usize, argv: &[A]) {
        if !self.on || self.muted == MUTE_AOF | MUTE_REPL {
            return;
        }
        if let Some(mut wraps) = self.exec {
            let gets = [self.aof_gets(), self.repl_gets()];
            for (i, wrap) in wraps.iter_mut().enumerate() {
                if !gets[i] {
                    continue;
                }
                let buf = if i == AOF { &mut self.buf } else { &mut self.repl };
                match *wrap {
                    ExecWrap::Pending => *wrap = ExecWrap::One { at: buf.len() },
                    ExecWrap::One { at } => {
                        *wrap = ExecWrap::Open;
                        let mut multi = Vec::new();
                        append_command(&mut multi, &[b"MULTI".as_slice()]);
                        buf.splice(at..at, multi);
                    }
                    ExecWrap::Open => {}
                }
            }
            self.exec = Some(wraps);
        }
        let gets = [self.aof_gets(), self.repl_gets()];
        let select = [0, 1].map(|i| gets[i] && self.selected[i] != Some(db));
        if select[AOF] || select[REPL] {
            let n = db.to_string();
            self.emit_to(select, &[b"SELECT".as_slice(), n.as_bytes()]);
        }
        for i in [AOF, REPL] {
            if gets[i] {
                self.selected[i] = Some(db);
            }
        }
        self.emit_to(gets, argv);
    }

    /// Appends raw stream bytes for replication only (the primary's PING to its replicas,
    /// REPLCONF GETACK): the AOF never sees them.
    pub fn repl_only<A: AsRef<[u8]>>(&mut self, argv: &[A]) {
        if self.repl_on && !self.repl_proxy {
            append_command(&mut self.repl, argv);
        }
    }

    /// A command of the primary's stream, as received, for this replica's backlog.
    pub fn proxy<A: AsRef<[u8]>>(&mut self, argv: &[A]) {
        if self.repl_on {
            append_command(&mut self.repl, argv);
        }
    }

    /// Whether the AOF gets what is fed now.
    fn aof_gets(&self) -> bool {
        self.aof && self.muted & MUTE_AOF == 0
    }

    /// Whether replication gets what is fed now (a replica proxies its primary's stream).
    fn repl_gets(&self) -> bool {
        self.repl_on && !self.repl_proxy && self.muted & MUTE_REPL == 0
    }

    /// Encodes `argv` into the first of the streams `to` (the AOF's, replication's) and copies
    /// it to the other.
    fn emit_to<A: AsRef<[u8]>>(&mut self, to: [bool; 2], argv: &[A]) {
        let repl = to[REPL];
        if to[AOF] {
            let from = self.buf.len();
            append_command(&mut self.buf, argv);
            if repl {
                self.repl.extend_from_slice(&self.buf[from..]);
            }
        } else if repl {
            append_command(&mut self.repl, argv);
        }
    }

    /// EXEC starts running its queued commands.
    pub fn exec_begin(&mut self) {
        self.exec = Some([ExecWrap::Pending; 2]);
    }

    /// EXEC finished: closes the MULTI in each stream that got one.
    pub fn exec_end(&mut self) {
        let Some(wraps) = self.exec.take() else { return };
        if wraps[AOF] == ExecWrap::Open {
            append_command(&mut self.buf, &[b"EXEC".as_slice()]);
        }
        if wraps[REPL] == ExecWrap::Open {
            append_command(&mut self.repl, &[b"EXEC".as_slice()]);
        }
    }

    /// Whether a transaction's wrapping is in progress (a script inside EXEC is wrapped by
    /// it, not by one of its own).
    pub fn wrapping(&self) -> bool {
        self.exec.is_some()
    }
}

/// The form of `argv` (a command that changed the dataset at `now_ms`) to log: None when
/// it is logged as sent.
pub fn rewrite(name: &str, argv: &[Bytes], now_ms: i64) -> Option<Vec<Bytes>> {
    match name {
        "expire" | "pexpire" | "expireat" => {
            let n = parse_i64(&argv[2])?;
            let at = match name {
                "expire" => now_ms.checked_add(n.checked_mul(1000)?)?,
                "pexpire" => now_ms.checked_add(n)?,
                _ => n.checked_mul(1000)?,
            };
            // Valkey keeps the NX/XX/GT/LT flags after the rewritten time.
            let mut out = vec![word("PEXPIREAT"), argv[1].clone(), int(at)];
            out.extend(argv[3..].iter().cloned());
            Some(out)
        }
        "setex" | "psetex" => {
            let n = parse_i64(&argv[2])?;
            let ms = if name == "setex" { n.checked_mul(1000)? } else { n };
            let at = now_ms.checked_add(ms)?;
            Some(vec![word("SET"), argv[1].clone(), argv[3].clone(), word("PXAT"), int(at)])
        }
        "set" => match expire_option(argv, 3, now_ms) {
            // EX, PX and EXAT become the whole `SET key value PXAT <ms>` (Valkey drops NX,
            // XX, IFEQ and GET with them); PXAT is logged as sent, GET included.
            Some((i, at)) if !argv[i].eq_ignore_ascii_case(b"PXAT") => {
                Some(vec![word("SET"), argv[1].clone(), argv[2].clone(), word("PXAT"), int(at)])
            }
            Some(_) => None,
            // GET changes nothing on a replica: left out (every `get` word after the value,
            // as Valkey skips them).
            None => {
                let is_get = |a: &Bytes| a.eq_ignore_ascii_case(b"GET");
                argv[3..].iter().any(is_get).then(|| {
                    let kept = argv[3..].iter().filter(|a| !is_get(a)).cloned();
                    argv[..3].iter().cloned().chain(kept).collect()
                })
            }
        },
        "delifeq" => Some(vec![word("DEL"), argv[1].clone()]),
        "msetex" => {
            // The options follow the pairs; EX, PX and EXAT become PXAT in place.
            let pairs = usize::try_from(parse_i64(&argv[1])?).ok()?;
            let from = pairs.checked_mul(2)?.checked_add(2)?;
            let (i, at) = expire_option(argv, from, now_ms)?;
            if argv[i].eq_ignore_ascii_case(b"PXAT") {
                return None;
            }
            let mut out = argv.to_vec();
            out[i] = word("PXAT");
            out[i + 1] = int(at);
            Some(out)
        }
        "getset" => Some(vec![word("SET"), argv[1].clone(), argv[2].clone()]),
        "getdel" => Some(vec![word("DEL"), argv[1].clone()]),
        "blmove" => Some(
            argv[..5]
                .iter()
                .enumerate()
                .map(|(i, a)| if i == 0 { word("LMOVE") } else { a.clone() })
                .collect(),
        ),
        "brpoplpush" => Some(vec![word("RPOPLPUSH"), argv[1].clone(), argv[2].clone()]),
        "getex" => {
            if let Some((_, at)) = expire_option(argv, 2, now_ms) {
                return Some(vec![word("PEXPIREAT"), argv[1].clone(), int(at)]);
            }
            let persist = argv[2..].iter().any(|a| a.eq_ignore_ascii_case(b"PERSIST"));
            persist.then(|| vec![word("PERSIST"), argv[1].clone()])
        }
        "restore" | "restore-asking" => {
            let ttl = parse_i64(&argv[2])?;
            let abs = argv[4..].iter().any(|a| a.eq_ignore_ascii_case(b"ABSTTL"));
            if ttl == 0 || abs {
                return None;
            }
            let mut out = argv.to_vec();
            out[2] = int(now_ms.checked_add(ttl)?);
            out.push(word("ABSTTL"));
            Some(out)
        }
        _ => None,
    }
}

/// The first EX/PX/EXAT/PXAT option at or after `from` (its index) and the absolute time
/// it sets. PXAT is returned too, so SET's rewrite is uniform.
fn expire_option(argv: &[Bytes], from: usize, now_ms: i64) -> Option<(usize, i64)> {
    let mut i = from;
    while i + 1 < argv.len() {
        let opt = &argv[i];
        // IFEQ's value is a value, whatever it reads.
        if opt.eq_ignore_ascii_case(b"IFEQ") {
            i += 2;
            continue;
        }
        let unit = if opt.eq_ignore_ascii_case(b"EX") {
            Some((1000, true))
        } else if opt.eq_ignore_ascii_case(b"PX") {
            Some((1, true))
        } else if opt.eq_ignore_ascii_case(b"EXAT") {
            Some((1000, false))
        } else if opt.eq_ignore_ascii_case(b"PXAT") {
            Some((1, false))
        } else {
            None
        };
        if let Some((scale, relative)) = unit {
            let n = parse_i64(&argv[i + 1])?.checked_mul(scale)?;
            let at = if relative { now_ms.checked_add(n)? } else { n };
            return Some((i, at));
        }
        i += 1;
    }
    None
}

fn parse_i64(a: &[u8]) -> Option<i64> {
    std::str::from_utf8(a).ok()?.parse().ok()
}

fn word(w: &'static str) -> Bytes {
    Bytes::from_static(w.as_bytes())
}

fn int(n: i64) -> Bytes {
    Bytes::from(n.to_string())
}

/// After a command ran (`dispatch::call`): feeds it when it changed the dataset (or the
/// forms it asked for instead, `Ctx::propagate_as`). `changes_before` is
/// `ServerState::changes` before it ran; `db` the database it ran in.
pub fn after_command<H: Copy>(
    srv: &mut ServerState,
    cmd: &Command<H>,
    argv: &[Bytes],
    db: usize,
    changes_before: u64,
    now_ms: i64,
) {
    if let Some(cmds) = srv.feed.replaced.take() {
        for c in &cmds {
            srv.feed.command(db, c);
        }
        return;
    }
    if srv.changes == changes_before || !cmd.is_write() {
        return;
    }
    match rewrite(cmd.name, argv, now_ms) {
        Some(form) => srv.feed.command(db, &form),
        None => srv.feed.command(db, argv),
    }
}

/// A key the keyspace removed on its own: fed as `UNLINK` when it is freed lazily
/// (`lazyfree-lazy-expire` for an expired key, `lazyfree-lazy-eviction` for an evicted one,
/// both `yes` by default), else as `DEL`, as Valkey 9.1 propagates them.
pub fn removed(srv: &mut ServerState, db: usize, key: &[u8], evicted: bool) {
    let lazy =
        if evicted { srv.config.lazyfree_lazy_eviction } else { srv.config.lazyfree_lazy_expire };
    let verb: &[u8] = if lazy { b"UNLINK" } else { b"DEL" };
    srv.feed.command(db, &[verb, key]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<Bytes> {
        s.split(' ').map(|w| Bytes::copy_from_slice(w.as_bytes())).collect()
    }

    fn text(v: Option<Vec<Bytes>>) -> Option<String> {
        v.map(|v| {
            v.iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect::<Vec<_>>().join(" ")
        })
    }

    #[test]
    fn resp_encoding() {
        let mut buf = Vec::new();
        append_command(&mut buf, &[b"SET".as_slice(), b"k\r\n", b""]);
        assert_eq!(buf, b"*3\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$0\r\n\r\n");
    }

    #[test]
    fn select_and_multi_wrapping() {
        let mut f = Feed::default();
        f.set_aof(true);
        f.command(0, &[b"DEL".as_slice(), b"a"]);
        f.exec_begin();
        f.command(0, &[b"INCR".as_slice(), b"a"]);
        f.command(2, &[b"INCR".as_slice(), b"b"]);
        f.exec_end();
        f.exec_begin();
        f.exec_end();
        f.exec_begin();
        f.command(2, &[b"DEL".as_slice(), b"c"]);
        f.exec_end();
        let want = "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*2\r\n$3\r\nDEL\r\n$1\r\na\r\n\
                    *1\r\n$5\r\nMULTI\r\n*2\r\n$4\r\nINCR\r\n$1\r\na\r\n\
                    *2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n*2\r\n$4\r\nINCR\r\n$1\r\nb\r\n\
                    *1\r\n$4\r\nEXEC\r\n*2\r\n$3\r\nDEL\r\n$1\r\nc\r\n";
        assert_eq!(String::from_utf8(f.buf).unwrap(), want);
    }

    #[test]
    fn relative_times_become_absolute() {
        let now = 1_000_000;
        let r =
            |s: &str| text(rewrite(&s.split(' ').next().unwrap().to_lowercase(), &argv(s), now));
        assert_eq!(r("expire k 10").as_deref(), Some("PEXPIREAT k 1010000"));
        assert_eq!(r("pexpire k 10 NX").as_deref(), Some("PEXPIREAT k 1000010 NX"));
        assert_eq!(r("expireat k 5").as_deref(), Some("PEXPIREAT k 5000"));
        assert_eq!(r("pexpireat k 5"), None);
        assert_eq!(r("setex k 2 v").as_deref(), Some("SET k v PXAT 1002000"));
        assert_eq!(r("psetex k 2 v").as_deref(), Some("SET k v PXAT 1000002"));
        assert_eq!(r("set k v NX ex 3 GET").as_deref(), Some("SET k v PXAT 1003000"));
        assert_eq!(r("set k v IFEQ ex PX 5").as_deref(), Some("SET k v PXAT 1000005"));
        assert_eq!(r("set k v GET PXAT 5"), None);
        assert_eq!(r("set k v IFEQ a get").as_deref(), Some("set k v IFEQ a"));
        assert_eq!(r("delifeq k v").as_deref(), Some("DEL k"));
        assert_eq!(
            r("msetex 2 a 1 b 2 NX EX 3").as_deref(),
            Some("msetex 2 a 1 b 2 NX PXAT 1003000")
        );
        assert_eq!(r("msetex 1 ex 1 KEEPTTL"), None);
        assert_eq!(r("set k v get").as_deref(), Some("set k v"));
        assert_eq!(r("getset k v").as_deref(), Some("SET k v"));
        assert_eq!(r("getdel k").as_deref(), Some("DEL k"));
        assert_eq!(r("blmove a b LEFT RIGHT 0").as_deref(), Some("LMOVE a b LEFT RIGHT"));
        assert_eq!(r("brpoplpush a b 0").as_deref(), Some("RPOPLPUSH a b"));
        assert_eq!(r("set k v exat 3").as_deref(), Some("SET k v PXAT 3000"));
        assert_eq!(r("set k v KEEPTTL"), None);
        assert_eq!(r("getex k px 7").as_deref(), Some("PEXPIREAT k 1000007"));
        assert_eq!(r("getex k persist").as_deref(), Some("PERSIST k"));
        assert_eq!(
            r("restore k 50 payload REPLACE").as_deref(),
            Some("restore k 1000050 payload REPLACE ABSTTL")
        );
        assert_eq!(r("restore k 50 payload ABSTTL"), None);
        assert_eq!(
            r("restore-asking k 50 payload REPLACE").as_deref(),
            Some(format!("restore-asking k {} payload REPLACE ABSTTL", now + 50).as_str())
        );
        assert_eq!(r("restore k 0 payload"), None);
        assert_eq!(r("lpush k v"), None);
    }
}
