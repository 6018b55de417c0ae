//! The bit algorithms of `types::bitmap` on the sizes the issue measures (1 MiB and 64 MiB):
//! population count (BITCOUNT), the first clear bit after a long run of ones (BITPOS), BITOP AND
//! of two sources computed piece by piece as the command does, and BITFIELD reads and writes
//! at random offsets.
//!
//! Each row reports bytes per second of input (elements per second for the field rows). A
//! `bytewise` row beside the population count is the plain loop over bytes (`u8::count_ones`
//! each), the baseline the word-wide and AVX2 code is measured against. The 64 MiB rows are
//! bound by memory bandwidth, the 1 MiB rows (in the last-level cache) by the instructions.
//! The inputs are random bytes from a fixed seed, built outside the timings.
//!
//! `cargo bench --bench bitops`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ferrokey::types::bitmap::{combine, count_ones, count_range, find_bit, BitOp, Field, Overflow};
use ferrokey::util::rng::Rng;

const MIB: usize = 1 << 20;
/// BITOP's piece size (`commands::bitmap::op`).
const PIECE_BYTES: usize = 16 * 1024;

fn random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        v.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    v.truncate(len);
    v
}

fn label(len: usize) -> String {
    format!("{}MiB", len / MIB)
}

fn popcount(c: &mut Criterion) {
    let mut g = c.benchmark_group("bitcount");
    for len in [MIB, 64 * MIB] {
        let bytes = random_bytes(1, len);
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_function(format!("count_ones/{}", label(len)), |b| {
            b.iter(|| count_ones(black_box(&bytes)))
        });
        g.bench_function(format!("count_range_bits/{}", label(len)), |b| {
            b.iter(|| count_range(black_box(&bytes), 3, len as u64 * 8 - 5))
        });
        g.bench_function(format!("bytewise/{}", label(len)), |b| {
            b.iter(|| black_box(&bytes).iter().map(|x| x.count_ones() as u64).sum::<u64>())
        });
    }
    g.finish();
}

fn bitpos(c: &mut Criterion) {
    let mut g = c.benchmark_group("bitpos");
    for len in [MIB, 64 * MIB] {
        // A run of ones (written, so every page is real memory) ending in a zero.
        let mut bytes = vec![0xffu8; len];
        bytes[len - 1] = 0xfe;
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_function(format!("first_zero_after_ones/{}", label(len)), |b| {
            b.iter(|| find_bit(black_box(&bytes), false, 0, len as u64 * 8 - 1))
        });
    }
    g.finish();
}

fn bitop(c: &mut Criterion) {
    let mut g = c.benchmark_group("bitop");
    for len in [MIB, 64 * MIB] {
        let (a, b) = (random_bytes(2, len), random_bytes(3, len));
        let sources = [a.as_slice(), b.as_slice()];
        let mut out = vec![0u8; len];
        let mut piece = vec![0u8; PIECE_BYTES];
        g.throughput(Throughput::Bytes(2 * len as u64));
        // As BITOP runs it: each piece computed in a small buffer, then copied out.
        g.bench_function(format!("and_pieces/{}", label(len)), |bench| {
            bench.iter(|| {
                for (i, dst) in out.chunks_mut(PIECE_BYTES).enumerate() {
                    let n = dst.len();
                    combine(BitOp::And, black_box(&sources), i * PIECE_BYTES, &mut piece[..n]);
                    dst.copy_from_slice(&piece[..n]);
                }
            })
        });
        // The same in one pass straight into the output, for comparison.
        g.bench_function(format!("and_whole/{}", label(len)), |bench| {
            bench.iter(|| combine(BitOp::And, black_box(&sources), 0, &mut out))
        });
    }
    g.finish();
}

fn bitfield(c: &mut Criterion) {
    let mut g = c.benchmark_group("bitfield");
    let bytes = random_bytes(4, MIB);
    let mut rng = Rng::new(5);
    let offsets: Vec<u64> = (0..4096).map(|_| rng.next_u64() % (MIB as u64 * 8 - 64)).collect();
    let field = Field::new(true, 37).expect("i37");
    g.throughput(Throughput::Elements(offsets.len() as u64));
    g.bench_function("get_i37_random_offsets", |b| {
        b.iter(|| offsets.iter().map(|&o| field.get(black_box(&bytes), o)).sum::<i64>())
    });
    let mut window = [0u8; 9];
    g.bench_function("incr_write_i37_window", |b| {
        b.iter(|| {
            for &o in &offsets {
                let shift = (o % 8) as u32;
                let old = field.read(&window, shift);
                let new = field.incr_value(old, black_box(o as i64), Overflow::Sat).unwrap_or(old);
                field.write(&mut window, shift, new);
            }
        })
    });
    g.finish();
}

criterion_group!(benches, popcount, bitpos, bitop, bitfield);
criterion_main!(benches);
