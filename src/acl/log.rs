//! The ACL log (`ACL LOG`): the latest refusals, newest first, at most `acllog-max-len`.
//!
//! A refusal like one of the ten newest (same reason, context, object and user, within a
//! minute of it) is folded into that entry: its count grows, its client info and time are
//! the latest, and it moves to the front. So a client hammering one forbidden command or a
//! wrong password costs one entry, not the whole log.

use std::collections::VecDeque;

/// How close in time two refusals must be to share an entry.
const GROUPING_MS: i64 = 60_000;
/// How many of the newest entries a refusal is compared with.
const GROUPING_SCAN: usize = 10;

/// Where the refused command came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    Toplevel,
    Multi,
    Lua,
}

impl Context {
    pub fn name(self) -> &'static str {
        match self {
            Context::Toplevel => "toplevel",
            Context::Multi => "multi",
            Context::Lua => "lua",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub count: u64,
    /// `command`, `key`, `channel`, `database` or `auth`.
    pub reason: &'static str,
    pub context: Context,
    /// The command, key, channel or database argument refused (for `auth`, the command).
    pub object: Vec<u8>,
    pub username: Vec<u8>,
    /// CLIENT INFO of the (latest) client refused.
    pub client_info: Vec<u8>,
    pub entry_id: u64,
    pub created_ms: i64,
    pub updated_ms: i64,
}

#[derive(Debug, Default)]
pub struct Log {
    entries: VecDeque<Entry>,
    next_id: u64,
}

/// One refusal to record.
pub struct Refusal {
    pub reason: &'static str,
    pub context: Context,
    pub object: Vec<u8>,
    pub username: Vec<u8>,
    pub client_info: Vec<u8>,
}

impl Log {
    /// Record a refusal at `now_ms`, keeping at most `max_len` entries (a lower
    /// `acllog-max-len` takes effect here, at the next refusal, as in Valkey).
    pub fn add(&mut self, r: Refusal, now_ms: i64, max_len: usize) {
        if max_len == 0 {
            self.entries.clear();
            return;
        }
        let similar = self.entries.iter().take(GROUPING_SCAN).position(|e| {
            e.reason == r.reason
                && e.context == r.context
                && (e.updated_ms - now_ms).abs() <= GROUPING_MS
                && e.object == r.object
                && e.username == r.username
        });
        if let Some(i) = similar {
            let mut e = self.entries.remove(i).expect("found entry");
            e.count += 1;
            e.client_info = r.client_info;
            e.updated_ms = now_ms;
            self.entries.push_front(e);
            return;
        }
        self.entries.push_front(Entry {
            count: 1,
            reason: r.reason,
            context: r.context,
            object: r.object,
            username: r.username,
            client_info: r.client_info,
            entry_id: self.next_id,
            created_ms: now_ms,
            updated_ms: now_ms,
        });
        self.next_id += 1;
        self.entries.truncate(max_len);
    }

    /// The newest `count` entries.
    pub fn newest(&self, count: usize) -> impl Iterator<Item = &Entry> {
        self.entries.iter().take(count)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn reset(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(object: &str) -> Refusal {
        Refusal {
            reason: "command",
            context: Context::Toplevel,
            object: object.as_bytes().to_vec(),
            username: b"u".to_vec(),
            client_info: b"id=1".to_vec(),
        }
    }

    #[test]
    fn repeats_fold_into_one_entry_and_the_log_stays_bounded() {
        let mut log = Log::default();
        for _ in 0..1000 {
            log.add(refusal("get"), 1000, 3);
        }
        assert_eq!(log.len(), 1);
        assert_eq!(log.newest(1).next().unwrap().count, 1000);
        for i in 0..10 {
            log.add(refusal(&format!("cmd{i}")), 2000, 3);
        }
        assert_eq!(log.len(), 3);
        let ids: Vec<u64> = log.newest(3).map(|e| e.entry_id).collect();
        assert_eq!(ids, vec![10, 9, 8]);
        // A minute and more later, the same refusal is a new entry.
        log.add(refusal("cmd9"), 2000 + GROUPING_MS + 1, 3);
        assert_eq!(log.newest(1).next().unwrap().entry_id, 11);
    }
}
