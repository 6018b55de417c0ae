//! The list type (work in progress: the representation and its commands land with issue 6).

use crate::types::agg::{AggType, Kind};

/// A list value. Not constructible yet: no command creates one.
#[derive(Clone, Debug)]
pub struct ListObj {
    _private: (),
}

impl AggType for ListObj {
    const KIND: Kind = Kind::List;

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
