//! RESP request parsing: a pipeline of 16 multibulk commands, as `valkey-benchmark -P 16` sends
//! them, parsed from one query buffer. The reported time is per command.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, Criterion};
use ferrokey::resp::parse::{ParseLimits, Parser};

const PIPELINE_COMMANDS: usize = 16;
const LIMITS: ParseLimits = ParseLimits { bulk_len_max: 512 * 1024 * 1024, authenticated: true };

fn multibulk(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
    out
}

fn set_pipeline() -> Vec<u8> {
    let value = [b'v'; 16];
    (0..PIPELINE_COMMANDS)
        .flat_map(|i| multibulk(&[b"SET", format!("key:{:06}", 123 + i).as_bytes(), &value]))
        .collect()
}

fn get_pipeline() -> Vec<u8> {
    (0..PIPELINE_COMMANDS)
        .flat_map(|i| multibulk(&[b"GET", format!("key:{:06}", 123 + i).as_bytes()]))
        .collect()
}

/// Copies the pipeline into the query buffer (as a read would) and parses all of it; the time
/// returned to criterion is divided by the command count, so it reports time per command.
fn bench_pipeline(c: &mut Criterion, name: &str, pipeline: &[u8]) {
    c.bench_function(name, |b| {
        let mut parser = Parser::new();
        let mut buf = BytesMut::with_capacity(pipeline.len());
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                buf.extend_from_slice(pipeline);
                for _ in 0..PIPELINE_COMMANDS {
                    let argv = parser.parse(&mut buf, &LIMITS).unwrap().unwrap();
                    black_box(argv);
                }
                assert!(buf.is_empty());
            }
            let elapsed = start.elapsed();
            Duration::from_nanos((elapsed.as_nanos() / PIPELINE_COMMANDS as u128) as u64)
        });
    });
}

fn resp_parse(c: &mut Criterion) {
    bench_pipeline(c, "resp_parse/set_16B_pipeline16_per_command", &set_pipeline());
    bench_pipeline(c, "resp_parse/get_pipeline16_per_command", &get_pipeline());
}

criterion_group!(benches, resp_parse);
criterion_main!(benches);
