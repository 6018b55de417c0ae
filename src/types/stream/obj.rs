//! A stream key's value as the keyspace stores it: the entries ([`Stream`]) and the consumer
//! groups, which most streams do not have (a null pointer then, 8 bytes).
//!
//! Unlike the other aggregates, a stream key may hold no entries: XDEL of the last entry,
//! XTRIM to zero and `XGROUP CREATE ... MKSTREAM` leave (or make) an empty stream that
//! stays until the key is deleted, as in Valkey. So the "emptied, delete the key" rule of
//! the other types never applies here ([`AggType::is_empty`] is false).

use crate::types::agg::{AggType, Kind};
use crate::types::stream::group::{ConsumerGroup, ConsumerGroups};
use crate::types::stream::Stream;

#[derive(Clone, Debug, Default)]
pub struct StreamObj {
    pub stream: Stream,
    groups: Option<Box<ConsumerGroups>>,
}

impl StreamObj {
    pub fn new() -> StreamObj {
        StreamObj::default()
    }

    /// The consumer groups, if any was ever created (and not all destroyed).
    pub fn groups(&self) -> Option<&ConsumerGroups> {
        self.groups.as_deref()
    }

    /// The entries and the groups apart, for group operations that ask whether an entry
    /// still exists.
    pub fn parts_mut(&mut self) -> (&Stream, Option<&mut ConsumerGroups>) {
        (&self.stream, self.groups.as_deref_mut())
    }

    /// The group of that name, if any.
    pub fn group_mut(&mut self, name: &[u8]) -> Option<&mut ConsumerGroup> {
        self.groups.as_deref_mut()?.get_mut(name)
    }

    /// The consumer groups, made when needed.
    pub fn groups_mut(&mut self) -> &mut ConsumerGroups {
        self.groups.get_or_insert_with(Default::default)
    }
}

impl AggType for StreamObj {
    const KIND: Kind = Kind::Stream;

    fn len(&self) -> usize {
        self.stream.len() as usize
    }

    fn is_empty(&self) -> bool {
        false
    }

    fn encoding(&self) -> &'static str {
        "stream"
    }

    fn alloc_bytes(&self) -> usize {
        let groups = self.groups.as_ref().map_or(0, |g| {
            crate::memory::size_class(std::mem::size_of::<ConsumerGroups>()) + g.alloc_bytes()
        });
        self.stream.alloc_bytes() + groups
    }

    fn free_effort(&self) -> usize {
        // One allocation per node, and about one per pending entry and consumer.
        let pending: usize = self
            .groups
            .as_ref()
            .map_or(0, |g| g.iter().map(|(_, cg)| 1 + cg.pending_len() + cg.consumers_len()).sum());
        1 + self.stream.node_count() + pending
    }
}
