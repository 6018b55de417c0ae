//! Stream entry ids: a 128-bit number made of a millisecond time and a sequence number,
//! ordered as (ms, seq), written `<ms>-<seq>` in replies.

use std::fmt;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    pub ms: u64,
    pub seq: u64,
}

impl StreamId {
    /// `0-0`: no entry has it (the smallest id XADD accepts is `0-1`).
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    pub const MAX: StreamId = StreamId { ms: u64::MAX, seq: u64::MAX };

    pub const fn new(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    /// The id as 16 big-endian bytes (ms then seq), so that byte order is id order: the
    /// key of a node in the node index, and of a pending entry.
    pub fn to_be_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.ms.to_be_bytes());
        b[8..].copy_from_slice(&self.seq.to_be_bytes());
        b
    }

    pub fn from_be_bytes(b: [u8; 16]) -> StreamId {
        let ms = u64::from_be_bytes(b[..8].try_into().expect("8 bytes"));
        let seq = u64::from_be_bytes(b[8..].try_into().expect("8 bytes"));
        StreamId { ms, seq }
    }

    /// The next id, or None after [`StreamId::MAX`].
    pub fn next(self) -> Option<StreamId> {
        match self.seq.checked_add(1) {
            Some(seq) => Some(StreamId { ms: self.ms, seq }),
            None => self.ms.checked_add(1).map(|ms| StreamId { ms, seq: 0 }),
        }
    }

    /// The previous id, or None before [`StreamId::MIN`].
    pub fn prev(self) -> Option<StreamId> {
        match self.seq.checked_sub(1) {
            Some(seq) => Some(StreamId { ms: self.ms, seq }),
            None => self.ms.checked_sub(1).map(|ms| StreamId { ms, seq: u64::MAX }),
        }
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_bytes_and_neighbours() {
        let a = StreamId::new(1, u64::MAX);
        let b = StreamId::new(2, 0);
        assert!(a < b && a.to_be_bytes() < b.to_be_bytes());
        assert_eq!(a.next(), Some(b));
        assert_eq!(b.prev(), Some(a));
        assert_eq!(StreamId::MAX.next(), None);
        assert_eq!(StreamId::MIN.prev(), None);
        assert_eq!(StreamId::from_be_bytes(a.to_be_bytes()), a);
        assert_eq!(a.to_string(), "1-18446744073709551615");
    }
}
