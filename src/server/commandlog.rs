//! The command logs (Valkey 8.1's COMMANDLOG, of which SLOWLOG is the `slow` part): three
//! bounded logs of the commands that ran longer than `commandlog-execution-slower-than`
//! microseconds, that arrived as more than `commandlog-request-larger-than` bytes, or that
//! answered with more than `commandlog-reply-larger-than` bytes. Each log numbers its
//! entries on its own and keeps the newest first, at most its `...-max-len`.

use std::collections::VecDeque;

use bytes::Bytes;

/// Arguments kept per entry, and bytes kept per argument, as Valkey does.
const ARGS_MAX: usize = 32;
const ARG_BYTES_MAX: usize = 128;

/// Which log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    /// Execution time, in microseconds.
    Slow,
    /// The request's size, in bytes.
    LargeRequest,
    /// The reply's size, in bytes.
    LargeReply,
}

impl LogKind {
    /// The kinds by the names COMMANDLOG takes (any case).
    pub fn from_name(name: &[u8]) -> Option<LogKind> {
        [
            ("slow", LogKind::Slow),
            ("large-request", LogKind::LargeRequest),
            ("large-reply", LogKind::LargeReply),
        ]
        .into_iter()
        .find(|(n, _)| name.eq_ignore_ascii_case(n.as_bytes()))
        .map(|(_, k)| k)
    }
}

#[derive(Debug, Clone)]
pub struct LogEntry {
    pub id: u64,
    pub time_s: i64,
    /// Microseconds or bytes, after the log's kind.
    pub value: u64,
    pub argv: Vec<Bytes>,
    pub peer: String,
    pub name: String,
}

/// One log: newest entry first.
#[derive(Default, Debug)]
pub struct Log {
    pub entries: VecDeque<LogEntry>,
    pub next_id: u64,
}

/// The three logs.
#[derive(Default, Debug)]
pub struct CommandLogs {
    pub slow: Log,
    pub large_request: Log,
    pub large_reply: Log,
}

impl CommandLogs {
    pub fn get(&self, kind: LogKind) -> &Log {
        match kind {
            LogKind::Slow => &self.slow,
            LogKind::LargeRequest => &self.large_request,
            LogKind::LargeReply => &self.large_reply,
        }
    }

    pub fn get_mut(&mut self, kind: LogKind) -> &mut Log {
        match kind {
            LogKind::Slow => &mut self.slow,
            LogKind::LargeRequest => &mut self.large_request,
            LogKind::LargeReply => &mut self.large_reply,
        }
    }
}

/// Who ran a logged command, and when.
pub struct Caller<'a> {
    pub now_s: i64,
    pub peer: &'a str,
    pub name: &'a str,
}

impl Log {
    /// Records `argv` (already redacted by the caller) with its `value`, keeping at most
    /// `max_len` entries.
    pub fn record(&mut self, max_len: usize, argv: &[Bytes], value: u64, who: &Caller) {
        if max_len == 0 {
            self.entries.clear();
            return;
        }
        self.entries.push_front(LogEntry {
            id: self.next_id,
            time_s: who.now_s,
            value,
            argv: shorten(argv),
            peer: who.peer.to_string(),
            name: who.name.to_string(),
        });
        self.next_id += 1;
        self.entries.truncate(max_len);
    }
}

/// The arguments as a log keeps them: at most 32 (the last one saying how many more there
/// were), each cut at 128 bytes (saying how many more bytes it had), copied so that an
/// entry never pins a client's query buffer.
fn shorten(argv: &[Bytes]) -> Vec<Bytes> {
    let mut kept: Vec<Bytes> = Vec::with_capacity(argv.len().min(ARGS_MAX));
    for (i, a) in argv.iter().enumerate() {
        if i == ARGS_MAX - 1 && argv.len() > ARGS_MAX {
            let more = argv.len() - ARGS_MAX + 1;
            kept.push(Bytes::from(format!("... ({more} more arguments)")));
            break;
        }
        if a.len() > ARG_BYTES_MAX {
            let more = a.len() - ARG_BYTES_MAX;
            let mut v = a[..ARG_BYTES_MAX].to_vec();
            v.extend_from_slice(format!("... ({more} more bytes)").as_bytes());
            kept.push(Bytes::from(v));
        } else {
            kept.push(Bytes::copy_from_slice(a));
        }
    }
    kept
}

/// The size of `argv` as a RESP multibulk request (`*<n>\r\n` and `$<len>\r\n<arg>\r\n`
/// per argument): what clients send, so the large-request log's figure for it. An inline
/// command counts as the multibulk of the same arguments.
pub fn request_bytes(argv: &[Bytes]) -> u64 {
    fn digits(mut n: usize) -> u64 {
        let mut d = 1;
        while n >= 10 {
            n /= 10;
            d += 1;
        }
        d
    }
    let args: u64 = argv.iter().map(|a| 1 + digits(a.len()) + 2 + a.len() as u64 + 2).sum();
    1 + digits(argv.len()) + 2 + args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<Bytes> {
        words.iter().map(|w| Bytes::copy_from_slice(w.as_bytes())).collect()
    }

    #[test]
    fn request_size_is_the_multibulk_size() {
        // "*2\r\n$3\r\nget\r\n$1\r\nk\r\n"
        assert_eq!(request_bytes(&argv(&["get", "k"])), 20);
        let long = "x".repeat(20);
        assert_eq!(request_bytes(&argv(&["set", "k", &long])), 47);
        let many: Vec<Bytes> = (0..12).map(|_| Bytes::from_static(b"a")).collect();
        assert_eq!(request_bytes(&many), 5 + 12 * 7);
    }

    #[test]
    fn logs_keep_the_newest_first_and_cut_long_arguments() {
        let mut log = Log::default();
        let who = Caller { now_s: 7, peer: "p", name: "n" };
        for i in 0..5 {
            log.record(3, &argv(&["get", &i.to_string()]), i, &who);
        }
        let ids: Vec<u64> = log.entries.iter().map(|e| e.id).collect();
        assert_eq!(ids, [4, 3, 2]);
        let big = "y".repeat(200);
        let args: Vec<String> = (0..40).map(|_| big.clone()).collect();
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        log.record(3, &argv(&args), 1, &who);
        let kept = &log.entries[0].argv;
        assert_eq!(kept.len(), 32);
        assert!(kept[0].ends_with(b"... (72 more bytes)"));
        assert_eq!(&kept[31][..], b"... (9 more arguments)");
        log.record(0, &argv(&["x"]), 1, &who);
        assert!(log.entries.is_empty());
    }

    #[test]
    fn kinds_by_name() {
        assert_eq!(LogKind::from_name(b"Large-Reply"), Some(LogKind::LargeReply));
        assert_eq!(LogKind::from_name(b"slowlog"), None);
    }
}
