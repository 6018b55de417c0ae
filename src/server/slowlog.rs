//! SLOWLOG: a bounded ring of the commands that ran longer than `slowlog-log-slower-than`.

use std::collections::VecDeque;

use bytes::Bytes;

/// Arguments kept per entry, and bytes kept per argument, as Valkey does.
const ARGS_MAX: usize = 32;
const ARG_BYTES_MAX: usize = 128;

#[derive(Debug, Clone)]
pub struct SlowEntry {
    pub id: u64,
    pub time_s: i64,
    pub duration_us: u64,
    pub argv: Vec<Bytes>,
    pub peer: String,
    pub name: String,
}

#[derive(Default, Debug)]
pub struct SlowLog {
    pub entries: VecDeque<SlowEntry>,
    pub next_id: u64,
}

impl SlowLog {
    /// Record a command if it was slow enough; `threshold_us < 0` disables the log.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        threshold_us: i64,
        max_len: usize,
        argv: &[Bytes],
        duration_us: u64,
        now_s: i64,
        peer: &str,
        name: &str,
    ) {
        if threshold_us < 0 || (duration_us as i64) < threshold_us {
            return;
        }
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
                // Copy so the entry does not pin the client's whole query buffer.
                kept.push(Bytes::copy_from_slice(a));
            }
        }
        self.entries.push_front(SlowEntry {
            id: self.next_id,
            time_s: now_s,
            duration_us,
            argv: kept,
            peer: peer.to_string(),
            name: name.to_string(),
        });
        self.next_id += 1;
        self.entries.truncate(max_len);
    }
}
