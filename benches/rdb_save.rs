//! RDB save of a large keyspace, with and without the save iterator's prefetch (issue 8's
//! "SAVE of 10M keys with 100-byte values ... with and without the iterator prefetch").
//!
//! What it does:
//! - builds one [`Db`] of `RDB_SAVE_KEYS` keys (default 10,000,000) through the library API
//!   (`Db::set_str`, no TTL), keys `key:%012d` (16 bytes, the names `redis-benchmark -r`
//!   uses), values of 100 bytes. By default each value is 100 pseudo-random printable bytes
//!   (LZF finds nothing to compress, as with real data); `RDB_SAVE_VALUES=x` makes them 100
//!   `x`s instead (what `redis-benchmark -d 100` writes: LZF shrinks each to a few bytes);
//! - then times [`write_rdb`] of that Db, as SAVE runs it (an `RdbWriter` with
//!   rdbcompression on, over a 1 MiB `BufWriter`, flushed at the end), into a file
//!   (`RDB_SAVE_DIR`, default `/tmp`; the file is removed afterwards), alternating
//!   `SaveInfo { prefetch: true }` (the prefetching iterator: bucket lines, entries and
//!   out-of-line values fetched ahead) and `prefetch: false` (`Table::iter_unprefetched`),
//!   `RDB_SAVE_RUNS` runs each (default 3);
//! - prints each run (the encode+write time, to the flush, as wall clock and as this thread's
//!   CPU time, which a busy machine disturbs less; and separately the fsync that SAVE adds,
//!   which is the disk's time, not the iterator's), then the medians and their ratios.
//!   `RDB_SAVE_OUT=sink` writes to `io::sink()` instead of a file, to take the page cache
//!   out of the figure (no fsync then).
//!
//! The build's own time and the Db's memory are printed first. The first run of each mode
//! may page-fault the file's page cache in; alternating keeps that fair between the modes.
//!
//! Run (2 to 3 minutes at 10M keys on a 2-core machine, ~1.6 GB of memory):
//! `cargo bench --bench rdb_save`
//! quick check: `RDB_SAVE_KEYS=200000 cargo bench --bench rdb_save`

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ferrokey::keyspace::db::{Db, Ttl};
use ferrokey::memory::thread_allocated;
use ferrokey::persist::rdb::encoding::RdbWriter;
use ferrokey::persist::rdb::file::{write_rdb, AccessMeta, SaveInfo};
use ferrokey::types::string::StrValue;

const DEFAULT_KEYS: usize = 10_000_000;
const VALUE_LEN: usize = 100;
/// The buffer SAVE puts between the encoder and the file (`persist::save`).
const IO_BUF_BYTES: usize = 1 << 20;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Values {
    /// 100 pseudo-random printable bytes per key.
    Random,
    /// 100 `x`s (redis-benchmark's `-d 100`).
    Xs,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Out {
    File,
    Sink,
}

struct Setup {
    keys: usize,
    runs: usize,
    values: Values,
    out: Out,
    dir: PathBuf,
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| panic!("{name}: cannot parse {v:?}")),
        Err(_) => default,
    }
}

impl Setup {
    fn from_env() -> Setup {
        let values = match std::env::var("RDB_SAVE_VALUES").as_deref() {
            Ok("x") => Values::Xs,
            Ok("random") | Err(_) => Values::Random,
            Ok(other) => panic!("RDB_SAVE_VALUES: random or x, not {other:?}"),
        };
        let out = match std::env::var("RDB_SAVE_OUT").as_deref() {
            Ok("sink") => Out::Sink,
            Ok("file") | Err(_) => Out::File,
            Ok(other) => panic!("RDB_SAVE_OUT: file or sink, not {other:?}"),
        };
        Setup {
            keys: env_or("RDB_SAVE_KEYS", DEFAULT_KEYS),
            runs: env_or("RDB_SAVE_RUNS", 3usize).max(1),
            values,
            out,
            dir: PathBuf::from(env_or("RDB_SAVE_DIR", "/tmp".to_string())),
        }
    }
}

/// xorshift64*: cheap and deterministic, good enough to defeat LZF.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn fill_value(buf: &mut [u8; VALUE_LEN], values: Values, rng: &mut Rng) {
    match values {
        Values::Xs => buf.fill(b'x'),
        Values::Random => {
            const ALPHABET: &[u8; 64] =
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            for chunk in buf.chunks_mut(10) {
                let mut r = rng.next();
                for b in chunk {
                    *b = ALPHABET[(r & 63) as usize];
                    r >>= 6;
                }
            }
        }
    }
}

/// What this (only) thread holds from the allocator, for the `used-mem` aux field.
fn allocated() -> usize {
    thread_allocated().max(0) as usize
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock after 1970").as_millis() as i64
}

fn build(setup: &Setup) -> Db {
    let mut db = Db::new();
    let now = now_ms();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut key = Vec::with_capacity(16);
    let mut value = [0u8; VALUE_LEN];
    for i in 0..setup.keys {
        key.clear();
        write!(key, "key:{i:012}").expect("writing to a Vec");
        fill_value(&mut value, setup.values, &mut rng);
        db.set_str(&key, StrValue::from_bytes(&value), Ttl::Clear, now);
    }
    db
}

/// One timed save.
fn save_once(dbs: &[Db], setup: &Setup, prefetch: bool) -> io::Result<Run> {
    let info = SaveInfo {
        now_ms: now_ms(),
        used_memory: allocated(),
        meta: AccessMeta::None,
        prefetch,
        checksum: true,
        functions: Vec::new(),
        key_delay: 0,
    };
    match setup.out {
        Out::Sink => {
            let mut w = RdbWriter::new(io::sink(), true);
            let (t, c) = (Instant::now(), thread_cpu());
            write_rdb(&mut w, dbs, &info)?;
            let (wall, cpu) = (t.elapsed(), thread_cpu() - c);
            Ok(Run { wall, cpu, fsync: Duration::ZERO, bytes: w.written() })
        }
        Out::File => {
            let path =
                setup.dir.join(format!("ferrokey-rdb-save-bench-{}.rdb", std::process::id()));
            let result = (|| {
                let file = File::create(&path)?;
                let mut w = RdbWriter::new(BufWriter::with_capacity(IO_BUF_BYTES, file), true);
                let (t, c) = (Instant::now(), thread_cpu());
                write_rdb(&mut w, dbs, &info)?;
                let bytes = w.written();
                let mut out = w.into_inner();
                out.flush()?;
                let (wall, cpu) = (t.elapsed(), thread_cpu() - c);
                let file = out.into_inner().map_err(|e| e.into_error())?;
                let t = Instant::now();
                file.sync_all()?;
                Ok(Run { wall, cpu, fsync: t.elapsed(), bytes })
            })();
            let _ = std::fs::remove_file(&path);
            result
        }
    }
}

/// CPU time this thread has used: on a busy machine the wall time also counts the time the
/// thread waited for a CPU, and this does not.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// A timed save's figures.
struct Run {
    /// write_rdb and the final flush, wall clock.
    wall: Duration,
    /// The same span in this thread's CPU time.
    cpu: Duration,
    /// The fsync after it (zero into the sink).
    fsync: Duration,
    bytes: u64,
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> io::Result<()> {
    // `cargo bench` passes `--bench` (and any filter); this harness takes its settings from
    // the environment only.
    let setup = Setup::from_env();
    let values = match setup.values {
        Values::Random => "random printable",
        Values::Xs => "all 'x'",
    };
    let out = match setup.out {
        Out::File => format!("file in {}", setup.dir.display()),
        Out::Sink => "io::sink()".to_string(),
    };
    println!(
        "rdb_save: {} keys key:%012d, {VALUE_LEN}-byte {values} values, rdbcompression yes, \
         output {out}, {} runs per mode",
        setup.keys, setup.runs
    );
    let mem0 = thread_allocated();
    let t = Instant::now();
    let db = build(&setup);
    let mem = (thread_allocated() - mem0).max(0) as usize;
    println!(
        "build: {:.2} s, allocated {:.1} MB ({:.1} B/key)",
        t.elapsed().as_secs_f64(),
        mem as f64 / 1e6,
        mem as f64 / setup.keys.max(1) as f64
    );
    let dbs = [db];
    // Wall and CPU times, prefetch on and off.
    let (mut on, mut off) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()));
    let per_key = |d: Duration| d.as_nanos() as f64 / setup.keys.max(1) as f64;
    for run in 1..=setup.runs {
        for prefetch in [true, false] {
            let r = save_once(&dbs, &setup, prefetch)?;
            println!(
                "run {run} prefetch={:<5}  write_rdb+flush {:7.3} s wall ({:.0} ns/key), \
                 {:7.3} s cpu ({:.0} ns/key)  fsync {:6.3} s  {:.1} MB",
                prefetch,
                r.wall.as_secs_f64(),
                per_key(r.wall),
                r.cpu.as_secs_f64(),
                per_key(r.cpu),
                r.fsync.as_secs_f64(),
                r.bytes as f64 / 1e6,
            );
            let (walls, cpus) = if prefetch { &mut on } else { &mut off };
            walls.push(r.wall);
            cpus.push(r.cpu);
        }
    }
    for (what, a, b) in [("wall", &mut on.0, &mut off.0), ("cpu ", &mut on.1, &mut off.1)] {
        let (a, b) = (median(a), median(b));
        println!(
            "median write_rdb+flush {what}: prefetch {:.3} s, no prefetch {:.3} s, \
             ratio prefetch/no-prefetch {:.3}",
            a.as_secs_f64(),
            b.as_secs_f64(),
            a.as_secs_f64() / b.as_secs_f64()
        );
    }
    Ok(())
}
