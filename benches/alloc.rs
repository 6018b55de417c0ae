//! Cost of the server's global allocator (`ferrokey::memory::AlignedJemalloc`: jemalloc with the
//! alignment rule of the 8-byte quantum; the byte counts memory accounting reads are jemalloc's
//! own per-thread counters) against plain jemalloc (`tikv_jemallocator::Jemalloc`), both called
//! directly through `GlobalAlloc` in the same process: alloc+free of 32- and 100-byte blocks
//! and a 32 -> 100 byte realloc. The target: the wrapper adds under 5%.
//!
//! Criterion times each allocator on its own. Its two runs of a case are seconds apart, so on
//! a shared machine their ratio carries the machine's noise; after criterion, a paired
//! measurement times both allocators back to back in every round, keeps each one's best
//! round, and prints the overhead (target: under 5%).
//!
//! Run: `cargo bench --bench alloc -- --warm-up-time 1 --measurement-time 2`

use std::alloc::{GlobalAlloc, Layout};
use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, Criterion};
use ferrokey::memory::AlignedJemalloc;
use tikv_jemallocator::Jemalloc;

#[derive(Clone, Copy)]
enum Case {
    AllocFree { size: usize },
    ReallocGrow { from: usize, to: usize },
}

const CASES: [Case; 3] = [
    Case::AllocFree { size: 32 },
    Case::AllocFree { size: 100 },
    Case::ReallocGrow { from: 32, to: 100 },
];

impl Case {
    fn name(self) -> String {
        match self {
            Case::AllocFree { size } => format!("alloc_free_{size}"),
            Case::ReallocGrow { from, to } => format!("realloc_grow_{from}_to_{to}"),
        }
    }

    /// One operation. Sizes go through `black_box`, as a server's sizes come off the wire:
    /// nothing folds the size-class arithmetic into a constant.
    #[inline(always)]
    fn run<A: GlobalAlloc>(self, allocator: &A) {
        match self {
            Case::AllocFree { size } => {
                let layout = byte_layout(black_box(size));
                // SAFETY: the size is non-zero; the block is freed once, with its layout.
                unsafe {
                    let block = black_box(allocator.alloc(layout));
                    assert!(!block.is_null());
                    allocator.dealloc(block, layout);
                }
            }
            Case::ReallocGrow { from, to } => {
                let (layout, new_size) = (byte_layout(black_box(from)), black_box(to));
                // SAFETY: sizes are non-zero; the block is reallocated with its current layout
                // and freed once with the layout of its new size.
                unsafe {
                    let block = black_box(allocator.alloc(layout));
                    assert!(!block.is_null());
                    let grown = black_box(allocator.realloc(block, layout, new_size));
                    assert!(!grown.is_null());
                    allocator.dealloc(grown, byte_layout(new_size));
                }
            }
        }
    }
}

/// The layout of a `Vec<u8>` / `Box<[u8]>` of `size` bytes, the server's commonest.
fn byte_layout(size: usize) -> Layout {
    Layout::array::<u8>(size).expect("a small byte array has a layout")
}

fn allocators(c: &mut Criterion) {
    for case in CASES {
        let mut group = c.benchmark_group(case.name());
        group.bench_function("jemalloc", |b| b.iter(|| case.run(&Jemalloc)));
        group.bench_function("wrapper", |b| b.iter(|| case.run(&AlignedJemalloc)));
        group.finish();
    }
}

const OPERATIONS_PER_ROUND: u32 = 200_000;
const ROUNDS: u32 = 30;

fn ns_per_operation<A: GlobalAlloc>(allocator: &A, case: Case) -> f64 {
    let start = Instant::now();
    for _ in 0..OPERATIONS_PER_ROUND {
        case.run(allocator);
    }
    start.elapsed().as_secs_f64() * 1e9 / f64::from(OPERATIONS_PER_ROUND)
}

fn print_paired_overhead() {
    println!("\npaired overhead, best of {ROUNDS} interleaved rounds:");
    for case in CASES {
        let (mut jemalloc_ns, mut wrapper_ns) = (f64::MAX, f64::MAX);
        for _ in 0..ROUNDS {
            jemalloc_ns = jemalloc_ns.min(ns_per_operation(&Jemalloc, case));
            wrapper_ns = wrapper_ns.min(ns_per_operation(&AlignedJemalloc, case));
        }
        let overhead_percent = (wrapper_ns / jemalloc_ns - 1.0) * 100.0;
        println!(
            "{:<24} jemalloc {jemalloc_ns:6.2} ns   wrapper {wrapper_ns:6.2} ns   \
             overhead {overhead_percent:+5.1}%",
            case.name()
        );
    }
}

criterion_group!(benches, allocators);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // `cargo bench` passes --bench; `cargo test --benches` does not, and gets a quick check.
    if std::env::args().any(|arg| arg == "--bench") {
        print_paired_overhead();
    }
}
