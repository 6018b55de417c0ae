//! HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES], as Valkey 9 answers it.
//!
//! The argument order and the options are those of every element scan
//! ([`scan_elements`]). A listpack hash answers every pair and cursor 0 whatever the
//! cursor; a table visits about COUNT items (see [`HashObj::scan`]). MATCH filters on the
//! field. Fields expired at the command's time are skipped.

use bytes::Bytes;

use crate::commands::args::{scan_elements, ScanItems, ScanKind};
use crate::commands::{CmdResult, Ctx};
use crate::types::hash::HashObj;
use crate::types::listpack::INT_DECIMAL_BYTES_MAX;

pub(super) fn hscan(ctx: &mut Ctx, argv: &[Bytes]) -> CmdResult {
    let now_ms = ctx.now_ms;
    scan_elements::<HashObj>(ctx, argv, ScanKind::Hash, |h, cursor, opts, items| {
        h.scan(cursor, opts.count, now_ms, |(field, value)| {
            let mut buf = [0u8; INT_DECIMAL_BYTES_MAX];
            let field = field.write_to(&mut buf);
            if opts.pattern.matches(field) {
                items.push(field.to_vec());
                if opts.items == ScanItems::Pairs {
                    items.push(value.to_vec());
                }
            }
        })
    })
}
