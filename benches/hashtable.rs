//! The keyspace's table, `Table<KeyEntry>`, against `std::collections::HashMap` at 1M keys.
//!
//! Keys are `key:%012d` (16 bytes), values `val:%012d` (16 bytes). The table's element is the
//! real keyspace entry, [`KeyEntry`]: one allocation of 6 + 16 + 16 = 38 bytes (the 40-byte
//! size class) holding header, key and value. Two maps, both a 32-byte slot per bucket
//! pointing at two 16-byte boxes:
//! - `std_hashmap`: `HashMap<Box<[u8]>, Box<[u8]>>`, the type the keyspace issue names, with
//!   std's default hasher (SipHash-1-3, randomly keyed): what a Rust server gets from the
//!   standard library;
//! - `hashmap`: the same map with ahash (`ahash::RandomState`), the keyspace's own hash
//!   function, so that the two differ only in layout: the stricter comparison.
//!
//! Every row does 1M operations per iteration; the structures run in the same process, one
//! after the other, on the same key order.
//!
//! # Keeping it fair
//!
//! - **Hashing is timed on every side.** The table's rows call [`hash_key`] (ahash, random
//!   seed) on each key inside the timed loop; the maps hash through their own hasher inside
//!   `insert` / `get` / `remove_entry`. All hash a `[u8]` through `Hash` (length, then
//!   bytes); between the table and `hashmap` the difference is the layout, not the hash.
//! - **The query keys are hot on both sides**: lookups and deletes take their keys from one
//!   contiguous `Vec<[u8; 16]>` in a fixed shuffled order (as a server finds them in its query
//!   buffer), so reading the query key is not a cache miss for either structure, and the
//!   elements are visited in an order unrelated to where they were allocated.
//! - **A hit reads the value**, as GET would: the table reads the first value byte from the
//!   entry, the map from the value box. The map's value is a separate allocation, though here
//!   it usually shares the key box's cache line: the setup allocates each pair's two 16-byte
//!   boxes back to back (in a long-running server they scatter). Scan and iteration
//!   read the last byte of each key (KEYS reads them): the table from the entry, the map from
//!   the key box.
//! - **Allocation is outside the insert and delete timings on both sides.** Insert rows get
//!   their elements (1M `KeyEntry`s, or 1M pairs of boxes) built in the untimed setup and time
//!   hashing, inserting and growing from empty; delete rows time hashing and removing, and the
//!   removed elements are freed after the timer stops. (So the one allocation per key against
//!   the map's two shows in the memory report, not in the insert time.) Both start empty and
//!   grow; both re-read every key to rehash it when they grow (neither stores hashes). The
//!   table also shrinks as deletes empty it, moving the survivors (and re-reading their keys)
//!   a bucket per remove; `HashMap::remove` never shrinks. That work is part of the table's
//!   delete time, as it is in the server.
//! - **Batched lookups** do what `src/server/batch.rs` does with `prefetch-batch-max-size` 16:
//!   for each group of 16 keys, hash each and call [`Table::prefetch_bucket`], then
//!   [`Table::prefetch_matches`] for the 16 hashes, then the 16 `find`s. The map has no
//!   prefetch API, so its `*_batch16` rows are the same plain `get`s of the same keys in the
//!   same order (a second measurement of the plain rows, which also shows the run's noise).
//! - The table has finished rehashing before the read-only rows; the map never rehashes
//!   incrementally. Scan has no map counterpart (`HashMap` has no cursor): compare
//!   `scan_full/table` with `iter_full/hashmap`.
//!
//! # Memory
//!
//! Printed once before the timed rows, as bytes per key:
//! - table: `memory_bytes()` (head and child buckets) + each entry's size class
//!   ([`KeyEntry::alloc_bytes`]: `size_class(38)` = 40);
//! - map: the bucket array, `buckets × 32` slot bytes + `buckets + 16` control bytes
//!   (hashbrown's layout; `capacity()` is 7/8 of `buckets`), + `size_class(16)` for each of the
//!   two boxes of every pair;
//! - and, as a cross-check of both formulas, what jemalloc charged the thread for building each
//!   structure ([`thread_allocated`] before and after; it includes jemalloc's rounding of the
//!   large bucket arrays to their size class).
//!
//! Before the criterion rows the bench prints interleaved rounds of the plain and batched
//! lookups (`INTERLEAVED=all` adds insert and delete rounds, `INTERLEAVED=writes` runs only
//! those): each round times every structure back to back, and the report gives medians and
//! the median of the per-round ratios, which a noisy shared machine skews far less than
//! rows measured minutes apart.
//!
//! Run (3 to 4 minutes on a busy 2-core machine):
//! `cargo bench --bench hashtable -- --warm-up-time 1 --measurement-time 3`.

use std::collections::HashMap;

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkGroup, Criterion, SamplingMode, Throughput,
};
use ferrokey::keyspace::entry::{KeyEntry, NewValue};
use ferrokey::memory::{size_class, thread_allocated};
use ferrokey::table::{hash_key, Table};
use ferrokey::types::string::StrRef;

const KEYS: usize = 1_000_000;
/// Keys per prefetch batch: the server's default `prefetch-batch-max-size`.
const BATCH: usize = 16;
const KEY_LEN: usize = 16;

/// Either map, by its hasher.
type MapWith<S> = HashMap<Box<[u8]>, Box<[u8]>, S>;
type Map = MapWith<ahash::RandomState>;
/// The type the keyspace issue names: std's map with its default hasher (SipHash-1-3).
type StdMap = HashMap<Box<[u8]>, Box<[u8]>>;
type Pair = (Box<[u8]>, Box<[u8]>);
type Key = [u8; KEY_LEN];

fn key(i: usize) -> Key {
    format!("key:{i:012}").into_bytes().try_into().expect("keys are 16 bytes")
}

fn value(i: usize) -> Key {
    format!("val:{i:012}").into_bytes().try_into().expect("values are 16 bytes")
}

/// Keys `from..to` in a fixed pseudo-random order (so lookups do not walk memory in order).
fn shuffled_keys(from: usize, to: usize) -> Vec<Key> {
    let mut keys: Vec<Key> = (from..to).map(key).collect();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for i in (1..keys.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        keys.swap(i, (state % (i as u64 + 1)) as usize);
    }
    keys
}

fn entries() -> Vec<KeyEntry> {
    (0..KEYS).map(|i| KeyEntry::new(&key(i), NewValue::Str(&value(i)), None, 0)).collect()
}

fn pairs() -> Vec<Pair> {
    (0..KEYS).map(|i| (Box::from(&key(i)[..]), Box::from(&value(i)[..]))).collect()
}

fn fill_table(entries: Vec<KeyEntry>) -> Table<KeyEntry> {
    let mut table = Table::new();
    for e in entries {
        let hash = hash_key(e.key());
        table.insert(hash, e);
    }
    table
}

fn fill_map(pairs: Vec<Pair>) -> Map {
    let mut map = Map::with_hasher(ahash::RandomState::new());
    for (k, v) in pairs {
        map.insert(k, v);
    }
    map
}

/// What GET would read: the first byte of the value.
fn first_value_byte(e: &KeyEntry) -> usize {
    match e.value() {
        StrRef::Raw(b) => b[0] as usize,
        StrRef::Int(n) => n as usize,
    }
}

fn lookup_table(table: &Table<KeyEntry>, keys: &[Key]) -> usize {
    keys.iter().filter_map(|k| table.find(hash_key(k), k)).map(first_value_byte).sum()
}

/// The server's batched lookup (`src/server/batch.rs`): prefetch the 16 head buckets, then
/// the 16 keys' matching entries, then look the 16 keys up. Each key is hashed once.
fn lookup_table_batched(table: &Table<KeyEntry>, keys: &[Key]) -> usize {
    let mut hashes = [0u64; BATCH];
    let mut sum = 0;
    for group in keys.chunks(BATCH) {
        for (h, k) in hashes.iter_mut().zip(group) {
            *h = hash_key(k);
            table.prefetch_bucket(*h);
        }
        for &h in &hashes[..group.len()] {
            table.prefetch_matches(h);
        }
        for (&h, k) in hashes.iter().zip(group) {
            sum += table.find(h, k).map_or(0, first_value_byte);
        }
    }
    sum
}

fn lookup_map<S: std::hash::BuildHasher>(map: &MapWith<S>, keys: &[Key]) -> usize {
    keys.iter().filter_map(|k| map.get(&k[..])).map(|v| v[0] as usize).sum()
}

fn fill_std_map(pairs: Vec<Pair>) -> StdMap {
    let mut map = StdMap::new();
    for (k, v) in pairs {
        map.insert(k, v);
    }
    map
}

/// Bytes per key of each structure; see the module documentation for the formulas.
fn report_memory(table: &Table<KeyEntry>, table_charged: isize, map: &Map, map_charged: isize) {
    let per_key = |bytes: f64| bytes / KEYS as f64;
    let table_buckets = table.memory_bytes();
    let table_entries: usize = table.iter().map(KeyEntry::alloc_bytes).sum();
    // hashbrown: capacity() is buckets / 8 * 7 for tables of 8 buckets or more.
    let map_buckets = map.capacity() / 7 * 8;
    let map_array = map_buckets * std::mem::size_of::<Pair>() + map_buckets + 16;
    let map_boxes: usize = map.iter().map(|(k, v)| size_class(k.len()) + size_class(v.len())).sum();
    eprintln!(
        "memory at {KEYS} keys, bytes per key:\n\
         \x20 table:   {:5.1} buckets ({} heads + children) + {:4.1} entries = {:5.1} \
         (jemalloc charged {:5.1})\n\
         \x20 hashmap: {:5.1} array ({map_buckets} buckets)     + {:4.1} boxes   = {:5.1} \
         (jemalloc charged {:5.1})\n\
         \x20 table / hashmap = {:.3}",
        per_key(table_buckets as f64),
        table.head_buckets(),
        per_key(table_entries as f64),
        per_key((table_buckets + table_entries) as f64),
        per_key(table_charged as f64),
        per_key(map_array as f64),
        per_key(map_boxes as f64),
        per_key((map_array + map_boxes) as f64),
        per_key(map_charged as f64),
        (table_buckets + table_entries) as f64 / (map_array + map_boxes) as f64,
    );
}

/// Interleaved rounds of the plain lookup rows, printed before the criterion rows: each round
/// times one pass of every structure over the same keys, back to back, so that a slow stretch
/// of a shared machine hits all three alike. Prints the median time per row and the median of
/// the per-round ratios.
fn report_interleaved(table: &Table<KeyEntry>, map: &Map, std_map: &StdMap, keys: [&[Key]; 2]) {
    const ROUNDS: usize = 15;
    let time = |f: &dyn Fn() -> usize| {
        let start = std::time::Instant::now();
        std::hint::black_box(f());
        start.elapsed().as_secs_f64() * 1e3
    };
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    eprintln!("interleaved lookups, {ROUNDS} rounds, median ms per 1M (table/std, table/ahash):");
    for (name, keys) in ["hit", "miss"].into_iter().zip(keys) {
        let mut rows: [Vec<f64>; 4] = Default::default();
        for _ in 0..ROUNDS {
            rows[0].push(time(&|| lookup_table(table, keys)));
            rows[1].push(time(&|| lookup_map(std_map, keys)));
            rows[2].push(time(&|| lookup_map(map, keys)));
            rows[3].push(time(&|| lookup_table_batched(table, keys)));
        }
        let ratio =
            |a: usize, b: usize| median(rows[a].iter().zip(&rows[b]).map(|(t, m)| t / m).collect());
        let (to_std, to_ahash, batched_to_ahash) = (ratio(0, 1), ratio(0, 2), ratio(3, 2));
        let [t, s, a, b] = rows.clone().map(median);
        eprintln!(
            "  {name:4}: table {t:6.1}  std {s:6.1}  ahash {a:6.1}  ({to_std:.2}, {to_ahash:.2}); \
             table batched {b:6.1} ({batched_to_ahash:.2} of ahash)"
        );
    }
}

/// Interleaved rounds of insert (from empty, elements built untimed) and delete (of every key,
/// in shuffled order; the removed elements are freed after the timer) for each structure, as
/// [`report_interleaved`] does for lookups.
fn report_interleaved_writes(keys: &[Key]) {
    const ROUNDS: usize = 9;
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let ms = |start: std::time::Instant| start.elapsed().as_secs_f64() * 1e3;
    // rows[structure][0 = insert, 1 = delete]
    let mut rows: [[Vec<f64>; 2]; 3] = Default::default();
    for _ in 0..ROUNDS {
        let elements = entries();
        let start = std::time::Instant::now();
        let mut table = fill_table(elements);
        rows[0][0].push(ms(start));
        let mut removed = Vec::with_capacity(KEYS);
        let start = std::time::Instant::now();
        removed.extend(keys.iter().map(|k| table.remove(hash_key(k), k)));
        rows[0][1].push(ms(start));
        drop((table, removed));

        let [insert, delete] = time_map_writes(fill_std_map, keys);
        rows[1][0].push(insert);
        rows[1][1].push(delete);
        let [insert, delete] = time_map_writes(fill_map, keys);
        rows[2][0].push(insert);
        rows[2][1].push(delete);
    }
    eprintln!("interleaved writes, {ROUNDS} rounds, median ms per 1M (table/std, table/ahash):");
    for (op, name) in ["insert", "delete"].into_iter().enumerate() {
        let ratio = |other: usize| {
            median(rows[0][op].iter().zip(&rows[other][op]).map(|(t, m)| t / m).collect())
        };
        let (t, s, a) =
            (median(rows[0][op].clone()), median(rows[1][op].clone()), median(rows[2][op].clone()));
        eprintln!(
            "  {name}: table {t:6.1}  std {s:6.1}  ahash {a:6.1}  ({:.2}, {:.2})",
            ratio(1),
            ratio(2)
        );
    }
}

/// One interleaved round of a map: ms to fill it from pairs built untimed, and to remove every
/// key (the removed pairs are freed after the timer).
fn time_map_writes<S: std::hash::BuildHasher>(
    fill: fn(Vec<Pair>) -> MapWith<S>,
    keys: &[Key],
) -> [f64; 2] {
    let elements = pairs();
    let start = std::time::Instant::now();
    let mut map = fill(elements);
    let insert = start.elapsed().as_secs_f64() * 1e3;
    let mut removed = Vec::with_capacity(KEYS);
    let start = std::time::Instant::now();
    removed.extend(keys.iter().map(|k| map.remove_entry(&k[..])));
    let delete = start.elapsed().as_secs_f64() * 1e3;
    drop((map, removed));
    [insert, delete]
}

fn bench_insert(group: &mut BenchmarkGroup<'_, WallTime>) {
    group.bench_function("insert/table", |b| {
        b.iter_batched(entries, fill_table, BatchSize::PerIteration)
    });
    group.bench_function("insert/hashmap", |b| {
        b.iter_batched(pairs, fill_map, BatchSize::PerIteration)
    });
    group.bench_function("insert/std_hashmap", |b| {
        b.iter_batched(pairs, fill_std_map, BatchSize::PerIteration)
    });
}

fn bench_delete(group: &mut BenchmarkGroup<'_, WallTime>, keys: &[Key]) {
    group.bench_function("delete/table", |b| {
        b.iter_batched(
            || (fill_table(entries()), Vec::with_capacity(KEYS)),
            |(mut table, mut removed)| {
                for k in keys {
                    removed.push(table.remove(hash_key(k), k));
                }
                (table, removed) // Freed after the timer stops.
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("delete/hashmap", |b| {
        b.iter_batched(
            || (fill_map(pairs()), Vec::with_capacity(KEYS)),
            |(mut map, mut removed)| {
                for k in keys {
                    removed.push(map.remove_entry(&k[..]));
                }
                (map, removed)
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("delete/std_hashmap", |b| {
        b.iter_batched(
            || (fill_std_map(pairs()), Vec::with_capacity(KEYS)),
            |(mut map, mut removed)| {
                for k in keys {
                    removed.push(map.remove_entry(&k[..]));
                }
                (map, removed)
            },
            BatchSize::PerIteration,
        )
    });
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("1M");
    // One iteration takes tens to hundreds of milliseconds: flat sampling keeps the run to
    // about 10 iterations per row instead of the 55 linear sampling needs.
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(KEYS as u64));

    let before = thread_allocated();
    let mut table = fill_table(entries());
    while table.rehash_step(1 << 20) {}
    let table_charged = thread_allocated() - before;
    let before = thread_allocated();
    let map = fill_map(pairs());
    let map_charged = thread_allocated() - before;
    let std_map = fill_std_map(pairs());
    report_memory(&table, table_charged, &map, map_charged);
    let hits = shuffled_keys(0, KEYS);
    let misses = shuffled_keys(KEYS, 2 * KEYS);
    // INTERLEAVED=writes (or all) adds the interleaved insert and delete rounds (20 to 40 s).
    let interleaved = std::env::var("INTERLEAVED").unwrap_or_default();
    if interleaved != "writes" {
        report_interleaved(&table, &map, &std_map, [&hits, &misses]);
    }
    if interleaved == "writes" || interleaved == "all" {
        report_interleaved_writes(&hits);
    }

    bench_insert(&mut group);
    for (name, keys) in [("hit", &hits), ("miss", &misses)] {
        group.bench_function(format!("lookup_{name}/table"), |b| {
            b.iter(|| lookup_table(&table, keys))
        });
        group.bench_function(format!("lookup_{name}/hashmap"), |b| {
            b.iter(|| lookup_map(&map, keys))
        });
        group.bench_function(format!("lookup_{name}/std_hashmap"), |b| {
            b.iter(|| lookup_map(&std_map, keys))
        });
        group.bench_function(format!("lookup_{name}_batch16/table"), |b| {
            b.iter(|| lookup_table_batched(&table, keys))
        });
        group.bench_function(format!("lookup_{name}_batch16/hashmap"), |b| {
            b.iter(|| lookup_map(&map, keys))
        });
    }
    group.bench_function("scan_full/table", |b| {
        b.iter(|| {
            let (mut cursor, mut sum) = (0, 0);
            loop {
                cursor = table.scan(cursor, |e| sum += e.key()[KEY_LEN - 1] as usize);
                if cursor == 0 {
                    return sum;
                }
            }
        })
    });
    group.bench_function("iter_full/table", |b| {
        b.iter(|| table.iter().map(|e| e.key()[KEY_LEN - 1] as usize).sum::<usize>())
    });
    group.bench_function("iter_full/hashmap", |b| {
        b.iter(|| map.keys().map(|k| k[KEY_LEN - 1] as usize).sum::<usize>())
    });
    drop((table, map, std_map));
    bench_delete(&mut group, &hits);
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
