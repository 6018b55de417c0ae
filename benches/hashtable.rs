//! The cache-line hashtable against `std::collections::HashMap` at 1M keys.
//!
//! Keys are `key:%012d` (16 bytes), values 16 bytes. The table's element is
//! `Box<Kv { key: Box<[u8]>, value: Box<[u8]> }>`, i.e. `Box<(Box<[u8]>, Box<[u8]>)>`: the
//! same two boxes `HashMap<Box<[u8]>, Box<[u8]>>` holds inline, plus one indirection the
//! one-allocation keyspace entry does not have (`lookup_hit/table_1alloc` measures a 32-byte
//! one-allocation element instead). Both hash with ahash (the table through
//! `hash_key`, the map through its own `ahash::RandomState`), so the difference is the table
//! layout, not the hash function. Each op benchmark does 1M operations per iteration.
//!
//! Run: `cargo bench --bench hashtable -- --warm-up-time 1 --measurement-time 3`.

use std::collections::HashMap;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ferrokey::keyspace::hashtable::{hash_key, Entry, Table};

const KEYS: usize = 1_000_000;

struct Kv {
    key: Box<[u8]>,
    value: Box<[u8]>,
}

impl Entry for Box<Kv> {
    fn key(&self) -> &[u8] {
        &self.key
    }

    fn prefetch_addr(&self) -> *const u8 {
        std::ptr::from_ref::<Kv>(self).cast()
    }
}

/// A one-allocation element (32 bytes), like the keyspace's entries: every bench key is 16 bytes.
struct Inline {
    key: [u8; 16],
    value: [u8; 16],
}

impl Entry for Box<Inline> {
    fn key(&self) -> &[u8] {
        &self.key
    }

    fn prefetch_addr(&self) -> *const u8 {
        std::ptr::from_ref::<Inline>(self).cast()
    }
}

type Map = HashMap<Box<[u8]>, Box<[u8]>, ahash::RandomState>;
type Pair = (Box<[u8]>, Box<[u8]>);

fn key(i: usize) -> Box<[u8]> {
    format!("key:{i:012}").into_bytes().into_boxed_slice()
}

fn value(i: usize) -> Box<[u8]> {
    format!("val:{i:012}").into_bytes().into_boxed_slice()
}

/// Keys `from..to` in a fixed pseudo-random order (so lookups do not walk memory in order).
fn shuffled_keys(from: usize, to: usize) -> Vec<Box<[u8]>> {
    let mut keys: Vec<_> = (from..to).map(key).collect();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for i in (1..keys.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        keys.swap(i, (state % (i as u64 + 1)) as usize);
    }
    keys
}

// The boxes are the table's elements, allocated outside the timed routine.
#[allow(clippy::vec_box)]
fn entries() -> Vec<Box<Kv>> {
    (0..KEYS).map(|i| Box::new(Kv { key: key(i), value: value(i) })).collect()
}

fn pairs() -> Vec<Pair> {
    (0..KEYS).map(|i| (key(i), value(i))).collect()
}

#[allow(clippy::vec_box)]
fn fill_table(entries: Vec<Box<Kv>>) -> Table<Box<Kv>> {
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

fn report_memory(table: &Table<Box<Kv>>, map: &Map) {
    let slot = std::mem::size_of::<Pair>() + 1;
    let map_bytes = map.capacity() * slot;
    let table_bytes = table.memory_bytes();
    eprintln!(
        "memory at {KEYS} keys: table {table_bytes} B ({:.1} B/key, {} head buckets), \
         HashMap capacity {} x {slot} B = {map_bytes} B ({:.1} B/key); the table's elements \
         also cost a {} B Kv box per key that the map stores inline",
        table_bytes as f64 / KEYS as f64,
        table.head_buckets(),
        map.capacity(),
        map_bytes as f64 / KEYS as f64,
        std::mem::size_of::<Kv>(),
    );
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("1M");
    group.sample_size(10).throughput(Throughput::Elements(KEYS as u64));

    group.bench_function("insert/table", |b| {
        b.iter_batched(entries, fill_table, BatchSize::PerIteration)
    });
    group.bench_function("insert/hashmap", |b| {
        b.iter_batched(pairs, fill_map, BatchSize::PerIteration)
    });

    let mut table = fill_table(entries());
    while table.rehash_step(1 << 20) {}
    let map = fill_map(pairs());
    report_memory(&table, &map);
    let hits = shuffled_keys(0, KEYS);
    let misses = shuffled_keys(KEYS, 2 * KEYS);

    let mut inline: Table<Box<Inline>> = Table::new();
    for i in 0..KEYS {
        let e = Box::new(Inline { key: (*key(i)).try_into().unwrap(), value: [b'v'; 16] });
        inline.insert(hash_key(&e.key), e);
    }
    group.bench_function("lookup_hit/table_1alloc", |b| {
        b.iter(|| {
            hits.iter()
                .filter_map(|k| inline.find(hash_key(k), k))
                .map(|e| e.value[0] as usize)
                .sum::<usize>()
        })
    });
    drop(inline);

    for (name, keys) in [("hit", &hits), ("miss", &misses)] {
        group.bench_function(format!("lookup_{name}/table"), |b| {
            b.iter(|| {
                keys.iter()
                    .filter_map(|k| table.find(hash_key(k), k))
                    .map(|e| e.value.len())
                    .sum::<usize>()
            })
        });
        group.bench_function(format!("lookup_{name}/hashmap"), |b| {
            b.iter(|| keys.iter().filter_map(|k| map.get(&**k)).map(|v| v.len()).sum::<usize>())
        });
    }

    group.bench_function("scan_full/table", |b| {
        b.iter(|| {
            let (mut cursor, mut bytes) = (0, 0);
            loop {
                cursor = table.scan(cursor, |e| bytes += e.key().len());
                if cursor == 0 {
                    return bytes;
                }
            }
        })
    });
    group.bench_function("iter_full/table", |b| {
        b.iter(|| table.iter().map(|e| e.key().len()).sum::<usize>())
    });
    group.bench_function("iter_full/hashmap", |b| {
        b.iter(|| map.keys().map(|k| k.len()).sum::<usize>())
    });

    group.bench_function("delete/table", |b| {
        b.iter_batched(
            || (fill_table(entries()), Vec::with_capacity(KEYS)),
            |(mut table, mut removed)| {
                for k in &hits {
                    removed.push(table.remove(hash_key(k), k));
                }
                (table, removed) // Dropped outside the timing.
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("delete/hashmap", |b| {
        b.iter_batched(
            || (fill_map(pairs()), Vec::with_capacity(KEYS)),
            |(mut map, mut removed)| {
                for k in &hits {
                    removed.push(map.remove_entry(&**k));
                }
                (map, removed)
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
