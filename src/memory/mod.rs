//! TEMPORARY stub, replaced by the counting allocator.
pub fn publish() {}
pub fn used_memory() -> usize { 0 }
