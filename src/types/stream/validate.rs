//! Checking stream nodes that come from outside (an RDB file, RESTORE) before a [`Stream`]
//! accepts them: every node's layout, and the order and counts that the stream's code relies
//! on. It reads through the listpack API only (the listpack itself was checked by
//! `Listpack::from_bytes`), never panics and allocates nothing.
//!
//! The node check is Valkey's deep `streamValidateListpackIntegrity` plus what that leaves
//! to chance: counts must not be negative, flags must be known bits, a node must hold at
//! least one entry, entry ids must increase within the node and not fall below its key. The
//! stream check adds what Valkey's loader does not look at but this code relies on: node
//! keys and entry ids increase from node to node, the stream's length is the sum of the
//! nodes' live counts, and `last_id` is not below any entry (tombstones included), so that
//! an append keeps ids in order.
//!
//! [`Stream`]: super::Stream

use std::fmt;

use super::id::StreamId;
use super::node::{lp_count_for, FLAG_DELETED, FLAG_SAMEFIELDS};
use crate::types::listpack::{Listpack, Pos};

/// Why nodes and metadata do not make a valid stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamError {
    /// A node's listpack is not in the stream layout.
    BadNode { node: usize, why: &'static str },
    /// A node's key or an entry id is not above the previous one.
    Unordered { node: usize },
    /// The stream's length is not the sum of the nodes' live counts.
    LengthMismatch { length: u64, counted: u64 },
    /// `last_id` is below an entry of the stream.
    LastIdBelowEntries,
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamError::BadNode { node, why } => write!(f, "stream node {node}: {why}"),
            StreamError::Unordered { node } => write!(f, "stream node {node}: ids out of order"),
            StreamError::LengthMismatch { length, counted } => {
                write!(f, "stream length {length} but its nodes hold {counted} entries")
            }
            StreamError::LastIdBelowEntries => f.write_str("stream last id below its entries"),
        }
    }
}

impl std::error::Error for StreamError {}

/// What a valid node holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeSummary {
    /// Live entries.
    pub count: u64,
    /// The first entry's id (tombstones included).
    pub first_id: StreamId,
    /// The last entry's id (tombstones included).
    pub last_id: StreamId,
}

/// A cursor over a node's elements that turns every surprise into an error.
struct Reader<'a> {
    lp: &'a Listpack,
    at: Option<Pos>,
}

impl Reader<'_> {
    fn skip(&mut self) -> Result<(), &'static str> {
        let p = self.at.ok_or("node ends inside an entry")?;
        self.at = self.lp.next(p);
        Ok(())
    }

    fn int(&mut self) -> Result<i64, &'static str> {
        let p = self.at.ok_or("node ends inside an entry")?;
        let v = self.lp.get(p).as_int().ok_or("integer expected")?;
        self.at = self.lp.next(p);
        Ok(v)
    }

    fn count(&mut self) -> Result<u64, &'static str> {
        u64::try_from(self.int()?).map_err(|_| "negative count")
    }
}

/// Check one node keyed `master_id`.
pub fn check_node(master_id: StreamId, lp: &Listpack) -> Result<NodeSummary, &'static str> {
    let mut r = Reader { lp, at: lp.first() };
    let count = r.count()?;
    let deleted = r.count()?;
    let master_fields = r.count()?;
    for _ in 0..master_fields {
        r.skip()?;
    }
    if r.int()? != 0 {
        return Err("master entry not terminated by 0");
    }
    let entries = count.checked_add(deleted).ok_or("counts overflow")?;
    if entries == 0 {
        return Err("node without entries");
    }
    let (mut first_id, mut last_id) = (None, None::<StreamId>);
    let mut live = 0u64;
    for _ in 0..entries {
        let flags = r.int()?;
        if flags & !(FLAG_DELETED | FLAG_SAMEFIELDS) != 0 {
            return Err("unknown entry flags");
        }
        let ms = master_id.ms.wrapping_add(r.int()? as u64);
        let seq = master_id.seq.wrapping_add(r.int()? as u64);
        let id = StreamId::new(ms, seq);
        if id < master_id || last_id.is_some_and(|last| id <= last) {
            return Err("entry ids out of order");
        }
        let same_fields = flags & FLAG_SAMEFIELDS != 0;
        let fields = if same_fields { master_fields } else { r.count()? };
        let elements = if same_fields { fields } else { fields.saturating_mul(2) };
        for _ in 0..elements {
            r.skip()?;
        }
        let fields = usize::try_from(fields).map_err(|_| "field count too large")?;
        let want = u64::try_from(lp_count_for(fields, same_fields)).unwrap_or(u64::MAX);
        if r.count()? != want {
            return Err("lp-count does not match the entry");
        }
        live += u64::from(flags & FLAG_DELETED == 0);
        first_id.get_or_insert(id);
        last_id = Some(id);
    }
    if r.at.is_some() {
        return Err("elements after the last entry");
    }
    if live != count {
        return Err("live count does not match the entries' flags");
    }
    match (first_id, last_id) {
        (Some(first_id), Some(last_id)) => Ok(NodeSummary { count, first_id, last_id }),
        _ => Err("node without entries"),
    }
}

/// Check nodes in order and the metadata that depends on them; returns nothing on success.
pub fn check_stream<'a>(
    nodes: impl IntoIterator<Item = (StreamId, &'a Listpack)>,
    length: u64,
    last_id: StreamId,
) -> Result<(), StreamError> {
    let mut counted = 0u64;
    let mut prev: Option<(StreamId, StreamId)> = None;
    for (i, (key, lp)) in nodes.into_iter().enumerate() {
        let summary = check_node(key, lp).map_err(|why| StreamError::BadNode { node: i, why })?;
        if let Some((prev_key, prev_last)) = prev {
            if key <= prev_key || summary.first_id <= prev_last {
                return Err(StreamError::Unordered { node: i });
            }
        }
        counted = counted.saturating_add(summary.count);
        prev = Some((key, summary.last_id));
    }
    if counted != length {
        return Err(StreamError::LengthMismatch { length, counted });
    }
    if prev.is_some_and(|(_, tail)| tail > last_id) {
        return Err(StreamError::LastIdBelowEntries);
    }
    Ok(())
}
