//! SCAN with a reverse-binary cursor (module essay: "SCAN").
//!
//! The cursor is a head-bucket index whose bits are incremented from the top of the table mask
//! down ("reverse binary"): for mask 0b111 the order is 0, 4, 2, 6, 1, 5, 3, 7. Bucket `i` of a
//! table with mask `m` splits into buckets `i`, `i + m + 1`, ... of a larger table, and those are
//! consecutive in this order; so a cursor stays meaningful when the table grows or shrinks.

use super::bucket::Bucket;
use super::{Entry, Table};

/// The next cursor after visiting `cursor` in a table with `mask`: sets the bits above the
/// mask, so the increment (done on the reversed bits) carries through them and out.
fn next_cursor(cursor: u64, mask: u64) -> u64 {
    (cursor | !mask).reverse_bits().wrapping_add(1).reverse_bits()
}

impl<E: Entry> Table<E> {
    /// Calls `f` on the elements of the head bucket(s) at `cursor` and returns the next cursor,
    /// 0 when the scan is complete. Start with cursor 0. Every element present from the first
    /// call to the last is seen at least once, whatever resizes happen between calls; some may be
    /// seen more than once.
    pub fn scan(&self, cursor: u64, mut f: impl FnMut(&E)) -> u64 {
        if self.is_empty() {
            return 0;
        }
        if !self.is_rehashing() {
            let buckets = &self.tables[0];
            let mask = (buckets.len() - 1) as u64;
            buckets[(cursor & mask) as usize].for_each_in_chain(&mut f);
            return next_cursor(cursor, mask);
        }
        let (small, large) = if self.tables[0].len() <= self.tables[1].len() {
            (&self.tables[0], &self.tables[1])
        } else {
            (&self.tables[1], &self.tables[0])
        };
        let small_mask = (small.len() - 1) as u64;
        let large_mask = (large.len() - 1) as u64;
        // Moved-out heads of table 0 are empty, so visiting them is harmless.
        visit(small, cursor & small_mask, &mut f);
        // Every bucket of the large table that the small bucket expands to: the cursor bits in
        // `small_mask ^ large_mask` run through all values, in reverse-binary order.
        let mut cursor = cursor;
        loop {
            visit(large, cursor & large_mask, &mut f);
            cursor = next_cursor(cursor, large_mask);
            if cursor & (small_mask ^ large_mask) == 0 {
                break;
            }
        }
        // The increment carried out of the extra bits into the small table's bits: `cursor` is
        // now the next cursor of the small table.
        cursor
    }
}

fn visit<E: Entry>(buckets: &[Bucket<E>], idx: u64, f: &mut impl FnMut(&E)) {
    buckets[idx as usize].for_each_in_chain(f);
}

#[cfg(test)]
mod tests {
    use super::next_cursor;

    #[test]
    fn cursor_order_is_reverse_binary() {
        let mut order = vec![];
        let mut cursor = 0;
        loop {
            order.push(cursor);
            cursor = next_cursor(cursor, 0b111);
            if cursor == 0 {
                break;
            }
        }
        assert_eq!(order, [0, 4, 2, 6, 1, 5, 3, 7]);
    }
}
