//! The replication backlog: the last `repl-backlog-size` bytes of the replication stream, so
//! that a replica that lost its link for a while can resume from its offset (`PSYNC`
//! answered `+CONTINUE`) instead of loading the whole dataset again.
//!
//! Offsets count stream bytes from 1, as Valkey's do: the byte that made the primary's
//! offset go from `n - 1` to `n` has offset `n`. A replica that processed the stream up to
//! offset `n` asks for `n + 1`. The buffer is a ring that grows to its size as the stream
//! fills it (an idle primary with a 10 MB backlog setting does not hold 10 MB), then
//! overwrites its oldest bytes.
//!
//! ```text
//!  ring:  [ f g h | a b c d e ]      head = 3 (next write), full
//!             ^ newest  ^ oldest: offset `first`
//!  history = a b c d e f g h  (first .. first + len - 1)
//! ```

/// The backlog of one primary.
#[derive(Debug)]
pub struct Backlog {
    ring: Vec<u8>,
    /// The size the ring grows to.
    size: usize,
    /// Where the next byte goes once the ring is full (it is also the oldest byte).
    head: usize,
    /// Bytes of history held.
    len: usize,
    /// The offset of the oldest byte held.
    first: i64,
}

impl Backlog {
    /// An empty backlog whose first byte will have offset `next_offset`.
    pub fn new(size: usize, next_offset: i64) -> Backlog {
        Backlog { ring: Vec::new(), size: size.max(1), head: 0, len: 0, first: next_offset }
    }

    /// The offset of the oldest byte held (`repl_backlog_first_byte_offset`).
    pub fn first_offset(&self) -> i64 {
        self.first
    }

    /// Bytes held (`repl_backlog_histlen`).
    pub fn histlen(&self) -> usize {
        self.len
    }

    /// Memory the ring holds.
    pub fn allocated(&self) -> usize {
        self.ring.capacity()
    }

    /// Appends stream bytes, dropping the oldest ones beyond the size.
    pub fn append(&mut self, mut bytes: &[u8]) {
        if bytes.len() > self.size {
            let skip = bytes.len() - self.size;
            self.first += (self.len + skip) as i64;
            self.len = 0;
            self.head = 0;
            self.ring.clear();
            bytes = &bytes[skip..];
        }
        // Growing phase: the ring is not full yet.
        if self.ring.len() < self.size {
            let take = bytes.len().min(self.size - self.ring.len());
            self.ring.extend_from_slice(&bytes[..take]);
            self.len += take;
            bytes = &bytes[take..];
            self.head = self.ring.len() % self.size;
        }
        while !bytes.is_empty() {
            let take = bytes.len().min(self.size - self.head);
            self.ring[self.head..self.head + take].copy_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            self.head = (self.head + take) % self.size;
            // Full ring: every byte written replaced the oldest one.
            let dropped = (self.len + take).saturating_sub(self.size);
            self.len = (self.len + take).min(self.size);
            self.first += dropped as i64;
        }
    }

    /// Whether a replica may resume from `offset` (the next byte it wants): from the oldest
    /// byte held up to one past the newest (nothing to send).
    pub fn covers(&self, offset: i64) -> bool {
        offset >= self.first && offset <= self.first + self.len as i64
    }

    /// Calls `f` with the history from `offset` on, in order (one or two slices). `offset`
    /// must be covered.
    pub fn read_from(&self, offset: i64, mut f: impl FnMut(&[u8])) {
        debug_assert!(self.covers(offset));
        let skip = (offset - self.first) as usize;
        let n = self.len - skip;
        if n == 0 {
            return;
        }
        // The oldest byte is at `head` when the ring is full, else at 0.
        let oldest = if self.ring.len() == self.size { self.head } else { 0 };
        let start = (oldest + skip) % self.size;
        let first_part = n.min(self.ring.len() - start);
        f(&self.ring[start..start + first_part]);
        if first_part < n {
            f(&self.ring[..n - first_part]);
        }
    }

    /// A new size (`CONFIG SET repl-backlog-size`): the newest history that fits is kept.
    pub fn resize(&mut self, size: usize) {
        let size = size.max(1);
        if size == self.size {
            return;
        }
        let mut history = Vec::with_capacity(self.len);
        self.read_from(self.first, |s| history.extend_from_slice(s));
        let keep = history.len().min(size);
        let first = self.first + (history.len() - keep) as i64;
        *self = Backlog::new(size, first);
        self.append(&history[history.len() - keep..]);
        self.first = first;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(b: &Backlog, from: i64) -> Vec<u8> {
        let mut v = Vec::new();
        b.read_from(from, |s| v.extend_from_slice(s));
        v
    }

    #[test]
    fn grows_then_wraps_keeping_the_newest_bytes() {
        let mut b = Backlog::new(8, 1);
        assert!(b.covers(1));
        assert!(!b.covers(2));
        b.append(b"abc");
        assert_eq!((b.first_offset(), b.histlen()), (1, 3));
        assert_eq!(history(&b, 1), b"abc");
        assert_eq!(history(&b, 3), b"c");
        assert_eq!(history(&b, 4), b"");
        b.append(b"defgh");
        assert_eq!(history(&b, 1), b"abcdefgh");
        b.append(b"ij");
        assert_eq!((b.first_offset(), b.histlen()), (3, 8));
        assert_eq!(history(&b, 3), b"cdefghij");
        assert_eq!(history(&b, 9), b"ij");
        assert!(!b.covers(2));
        assert!(b.covers(11));
        assert!(!b.covers(12));
        b.append(b"0123456789xyz");
        assert_eq!((b.first_offset(), b.histlen()), (16, 8));
        assert_eq!(history(&b, 16), b"56789xyz");
        assert!(b.allocated() <= 16);
    }

    #[test]
    fn every_split_of_the_stream_gives_the_same_history() {
        let stream: Vec<u8> = (0..200u8).collect();
        for size in [1, 7, 16, 64, 500] {
            for chunk in [1, 3, 10, 64] {
                let mut b = Backlog::new(size, 101);
                for c in stream.chunks(chunk) {
                    b.append(c);
                }
                let keep = stream.len().min(size);
                assert_eq!(b.histlen(), keep);
                assert_eq!(b.first_offset(), 101 + (stream.len() - keep) as i64);
                assert_eq!(history(&b, b.first_offset()), &stream[stream.len() - keep..]);
            }
        }
    }

    #[test]
    fn resizing_keeps_the_newest_history() {
        let mut b = Backlog::new(10, 1);
        b.append(b"0123456789abc");
        b.resize(4);
        assert_eq!((b.first_offset(), b.histlen()), (10, 4));
        assert_eq!(history(&b, 10), b"9abc");
        b.resize(100);
        b.append(b"de");
        assert_eq!(history(&b, 10), b"9abcde");
    }
}
