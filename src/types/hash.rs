//! The hash type (work in progress: the representation and its commands land with issue 6).

use crate::types::agg::{AggType, Kind};

/// A hash value. Not constructible yet: no command creates one.
#[derive(Clone, Debug)]
pub struct HashObj {
    _private: (),
}

impl AggType for HashObj {
    const KIND: Kind = Kind::Hash;

    fn len(&self) -> usize {
        0
    }

    fn encoding(&self) -> &'static str {
        "listpack"
    }

    fn alloc_bytes(&self) -> usize {
        0
    }

    fn free_effort(&self) -> usize {
        1
    }
}
