//! DEBUG subcommands that show how ferrokey lays data out in memory: `LISTPACK` and
//! `QUICKLIST` (a value's compact encoding, printed on the server's stdout), `HTSTATS` and
//! `HTSTATS-KEY` (the shape of a database's or a value's hashtable), `SDSLEN` (where a string
//! key's bytes lie), `STRUCTSIZE` (the sizes of the core structures) and `CLIENT-EVICTION`
//! (clients grouped by the memory they hold, as `maxmemory-clients` sees them).
//!
//! Replies and errors have Valkey 9.1's shape; the figures are ferrokey's own structures,
//! never Valkey's (a key entry is not a `robj`, a string buffer is not an sds). Nothing here
//! changes the dataset.

use std::fmt::Write as _;
use std::io::Write as _;

use bytes::Bytes;

use crate::commands::args::is;
use crate::commands::error::DebugError;
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::config::MaxmemoryClients;
use crate::table::{TableStats, CHAIN_LENGTHS};
use crate::types::agg::AggType;
use crate::types::listpack::{Listpack, LpEntry};

/// The value at `argv[2]` as OBJECT sees it (expired keys are gone; nothing is touched).
fn object<'c>(
    ctx: &'c mut ServerCtx,
    key: &[u8],
) -> Result<&'c crate::keyspace::entry::KeyEntry, CmdError> {
    let now = ctx.now_ms;
    ctx.db().object(key, now).ok_or(CmdError::NoSuchKey)
}

/// Writes `text` on the server's stdout in one piece (where Valkey's `lpRepr` prints).
fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    // A closed stdout loses the printout, nothing else: the reply still says where it went.
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// `DEBUG LISTPACK <key>`: the listpack of a listpack-encoded hash, list, set or sorted set,
/// entry by entry, on stdout.
pub fn listpack(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let entry = object(ctx, &argv[2])?;
    let lp =
        entry.agg().and_then(|a| a.listpack()).ok_or(CmdError::Debug(DebugError::NotListpack))?;
    let mut text = String::new();
    listpack_repr(&mut text, lp);
    print_stdout(&text);
    ctx.out.simple("Listpack structure printed on stdout");
    Ok(())
}

/// Longest part of a string element the printouts show.
const REPR_STR_MAX: usize = 40;

/// A listpack as text: its header, then each entry's index, byte offset, encoded size and
/// value.
fn listpack_repr(text: &mut String, lp: &Listpack) {
    let first = lp.first().map_or(lp.total_bytes() - 1, |p| p.offset());
    let _ = writeln!(text, "{{total bytes {}}} {{num entries {}}}", lp.total_bytes(), lp.len());
    let _ = writeln!(text, "{{first entry {first}}}");
    let mut at = lp.first();
    let mut index = 0;
    while let Some(p) = at {
        let value = match lp.get(p) {
            LpEntry::Int(n) => format!("[int]{n}"),
            LpEntry::Str(s) => {
                let shown = String::from_utf8_lossy(&s[..s.len().min(REPR_STR_MAX)])
                    .escape_debug()
                    .to_string();
                let more = if s.len() > REPR_STR_MAX { "..." } else { "" };
                format!("[str]{shown}{more}")
            }
        };
        let _ = writeln!(
            text,
            "{{\n\tindex: {index:2},\n\toffset: {},\n\tentry bytes: {},\n\t{value}\n}}",
            p.offset(),
            lp.entry_bytes(p)
        );
        at = lp.next(p);
        index += 1;
    }
    text.push_str("{end}\n\n");
}

/// `DEBUG QUICKLIST <key> [<level>]`: a quicklist-encoded list's nodes on stdout; a level
/// other than 0 adds each node's entries.
pub fn quicklist(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    if argv.len() > 4 {
        return Err(super::subcommand_syntax(argv));
    }
    let level = argv.get(3).map_or(0, |a| super::leading_i64(a));
    let fill = ctx.srv.config.list_max_listpack_size;
    let entry = object(ctx, &argv[2])?;
    let list = match entry.agg() {
        Some(crate::types::agg::AggRef::List(l)) if l.is_quicklist() => l,
        _ => return Err(CmdError::Debug(DebugError::NotQuicklist)),
    };
    let nodes = list.nodes();
    let mut text = String::new();
    let _ = writeln!(text, "{{quicklist}}");
    let _ = writeln!(text, "{{count : {}}}", list.len());
    let _ = writeln!(text, "{{len : {}}}", nodes.len());
    let _ = writeln!(text, "{{fill : {fill}}}");
    for (i, lp) in nodes.iter().enumerate() {
        let _ = writeln!(text, "{{quicklist node({i})");
        let _ = writeln!(
            text,
            "{{container : PACKED, encoding: RAW, size: {}, count: {}}}",
            lp.total_bytes(),
            lp.len()
        );
        if level != 0 {
            listpack_repr(&mut text, lp);
        }
        text.push_str("}\n");
    }
    print_stdout(&text);
    ctx.out.simple("Quicklist structure printed on stdout");
    Ok(())
}

/// Appends a table's figures as Valkey's `DEBUG HTSTATS` prints a hashtable's; `full` adds
/// the chain figures (`stats` must then come from a walk). An empty table prints nothing.
fn render_stats(text: &mut String, stats: &TableStats, full: bool) {
    for (t, a) in stats.arrays.iter().enumerate() {
        if stats.arrays.iter().all(|a| a.elements == 0) {
            return;
        }
        let role = if t == 0 { "main hash table" } else { "rehashing target" };
        let _ = writeln!(text, "Hash table {t} stats ({role}):");
        let _ = writeln!(text, " table size: {}", a.slots);
        let _ = writeln!(text, " number of entries: {}", a.elements);
        if t == 0 {
            let idx = stats.rehash_idx.map_or(-1, |i| i as i64);
            let _ = writeln!(text, " rehashing index: {idx}");
        }
        let Some(c) = a.chains.as_ref().filter(|_| full) else { continue };
        let heads = a.head_buckets.max(1);
        let _ = writeln!(text, " top-level buckets: {}", a.head_buckets);
        let _ = writeln!(text, " child buckets: {}", c.child_buckets);
        let _ = writeln!(text, " max chain length: {}", c.max_children);
        let _ = writeln!(text, " avg chain length: {:.6}", c.child_buckets as f32 / heads as f32);
        let _ = writeln!(text, " chain length distribution:");
        // The last entry lumps the longest chains together; Valkey leaves it out.
        for (len, &n) in c.by_children[..CHAIN_LENGTHS - 1].iter().enumerate() {
            if n > 0 {
                let pct = n as f32 / heads as f32 * 100.0;
                let _ = writeln!(text, "   {len}: {n} ({pct:.2}%)");
            }
        }
    }
}

/// Whether the optional word after the key or database is `full`.
fn wants_full(argv: &[Bytes]) -> bool {
    argv.get(3).is_some_and(|a| is(a, "full"))
}

/// `DEBUG HTSTATS <dbid> [full]`: the database's key table. The keys with a TTL are kept in
/// a dense array, not a hashtable (see `keyspace::expire_index`): under `[Expires HT]` comes
/// one line saying so when it holds any.
pub fn htstats(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let dbid = crate::types::string::parse_i64(&argv[2]).ok_or(CmdError::NotInteger)?;
    let db = usize::try_from(dbid)
        .ok()
        .and_then(|i| ctx.srv.dbs.get(i))
        .ok_or(CmdError::Debug(DebugError::DbOutOfRange))?;
    let full = wants_full(argv);
    let mut text = String::from("[Dictionary HT]\n");
    render_stats(&mut text, &db.table_stats(full), full);
    text.push_str("[Expires HT]\n");
    let expires = db.expires_len();
    if expires > 0 {
        let _ = writeln!(text, "Not a hash table: an array of the {expires} keys with a TTL");
    }
    ctx.out.verbatim("txt", text.as_bytes());
    Ok(())
}

/// `DEBUG HTSTATS-KEY <key> [full]`: the table of a hashtable-encoded hash or set, or of a
/// skiplist-encoded sorted set's member index.
pub fn htstats_key(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let full = wants_full(argv);
    let entry = object(ctx, &argv[2])?;
    let stats = entry
        .agg()
        .and_then(|a| a.table_stats(full))
        .ok_or(CmdError::Debug(DebugError::NotHashtable))?;
    let mut text = String::new();
    render_stats(&mut text, &stats, full);
    ctx.out.verbatim("txt", text.as_bytes());
    Ok(())
}

/// `DEBUG SDSLEN <key>`: a string key's layout. The key lies inside the entry (`key_sds_avail`
/// is 0: it never grows); `obj_alloc` is the entry's allocation, which holds a short value
/// too; `val_alloc` is the out-of-line buffer of a long value (0 when inline), whose spare
/// room is `val_sds_avail`. Expired keys not yet deleted are shown, as in Valkey.
pub fn sdslen(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let db = &ctx.srv.dbs[ctx.client.db];
    let entry = db.stored(&argv[2]).ok_or(CmdError::NoSuchKey)?;
    let l = entry.str_layout().ok_or(CmdError::Debug(DebugError::NotSds))?;
    let line = format!(
        "key_sds_len:{} key_sds_avail:0 obj_alloc:{} val_sds_len:{} val_sds_avail:{} val_alloc:{}",
        entry.key().len(),
        l.entry_alloc_bytes,
        l.value_len,
        l.value_spare_bytes,
        l.value_alloc_bytes
    );
    ctx.out.simple(&line);
    Ok(())
}

/// `DEBUG STRUCTSIZE`: the sizes in bytes of ferrokey's core structures, in Valkey's
/// `name:size ` shape.
pub fn structsize(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    use std::mem::size_of;
    let sizes: [(&str, usize); 10] = [
        ("bits", usize::BITS as usize),
        ("keyentry_header", crate::keyspace::entry::HEADER_BYTES),
        ("bucket", crate::table::BUCKET_BYTES),
        ("table", size_of::<crate::table::Table<crate::keyspace::entry::KeyEntry>>()),
        ("heapstr_header", crate::keyspace::heap_str::HEADER_BYTES),
        ("listpack", size_of::<Listpack>()),
        ("hash", size_of::<crate::types::hash::HashObj>()),
        ("list", size_of::<crate::types::list::ListObj>()),
        ("set", size_of::<crate::types::set::SetObj>()),
        ("zset", size_of::<crate::types::zset::ZSetObj>()),
    ];
    let mut text = String::new();
    for (name, n) in sizes {
        let _ = write!(text, "{name}:{n} ");
    }
    ctx.out.bulk(text.as_bytes());
    Ok(())
}

/// Valkey's `CLIENT_MEM_USAGE_BUCKET_MIN_LOG` and `_MAX_LOG`: the first bucket holds clients
/// under 32 KiB, each next one twice as much, the last 8 GiB and more.
const BUCKET_MIN_LOG: u32 = 15;
const BUCKET_MAX_LOG: u32 = 33;
const BUCKETS: usize = (BUCKET_MAX_LOG - BUCKET_MIN_LOG + 1) as usize;

/// The bucket of a client holding `bytes`.
fn bucket_of(bytes: usize) -> usize {
    let bits = usize::BITS - bytes.leading_zeros();
    (bits.clamp(BUCKET_MIN_LOG, BUCKET_MAX_LOG) - BUCKET_MIN_LOG) as usize
}

/// `DEBUG CLIENT-EVICTION`: the clients `maxmemory-clients` may evict (all but CLIENT
/// NO-EVICT ones), grouped by the memory each holds, with the total per group. ferrokey
/// keeps no buckets between evictions: the groups are counted now, over the client table.
pub fn client_eviction(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    use crate::server::evict::client_memory_bytes;
    if ctx.srv.config.maxmemory_clients == MaxmemoryClients::Bytes(0) {
        return Err(CmdError::Debug(DebugError::ClientEvictionOff));
    }
    let mut buckets = [(0usize, 0usize); BUCKETS];
    let mut count = |bytes: usize| {
        let b = &mut buckets[bucket_of(bytes)];
        b.0 += bytes;
        b.1 += 1;
    };
    // The caller is lent out of the table while its command runs.
    if !ctx.client.no_evict {
        count(client_memory_bytes(ctx.client, ctx.out));
    }
    for (_, slot) in ctx.srv.clients.iter() {
        if !slot.client.no_evict && !slot.client.close_asap {
            count(client_memory_bytes(&slot.client, &slot.out));
        }
    }
    let mut text = String::new();
    for (j, (bytes, clients)) in buckets.iter().enumerate() {
        if j == 0 {
            text.push_str("bucket          0");
        } else {
            let _ = write!(text, "bucket {:10}", 1usize << (j - 1 + BUCKET_MIN_LOG as usize));
        }
        if j == BUCKETS - 1 {
            text.push_str("+            : ");
        } else {
            let _ = write!(text, " - {:10}: ", (1usize << (j + BUCKET_MIN_LOG as usize)) - 1);
        }
        let _ = writeln!(text, "tot-mem: {bytes:10}, clients: {clients}");
    }
    ctx.out.verbatim("txt", text.as_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_buckets_as_valkey() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(32767), 0);
        assert_eq!(bucket_of(32768), 1);
        assert_eq!(bucket_of(65535), 1);
        assert_eq!(bucket_of(1 << 32), BUCKETS - 1);
        assert_eq!(bucket_of(usize::MAX), BUCKETS - 1);
    }

    #[test]
    fn listpack_printout() {
        let mut lp = Listpack::new();
        lp.push_back(b"a");
        lp.push_back_int(12);
        let mut text = String::new();
        listpack_repr(&mut text, &lp);
        assert!(
            text.starts_with(&format!("{{total bytes {}}} {{num entries 2}}\n", lp.total_bytes()))
        );
        assert!(text.contains("[str]a"));
        assert!(text.contains("[int]12"));
        assert!(text.ends_with("{end}\n\n"));
    }
}
