//! Small utilities that every layer may use and that use nothing of the crate (only std):
//!
//! - `clock.rs`: the wall clock as Unix time (`now_ms`, `now_us`, `since_epoch`).
//! - `rng.rs`: the crate's one seeded generator (`Rng`, xorshift64*), the `splitmix64` seed
//!   mixer and `random_hex` (run ids).
//! - `quote.rs`: Valkey's `sdssplitargs` (`split_args`) and `sdscatrepr` (`repr`): the syntax of
//!   config lines, the AOF manifest, MONITOR lines and inline commands.
//! - `fmt.rs`: integers formatted into a stack buffer (`fmt_i64`, `fmt_u64`).
//! - `fmt_g.rs`: C's `%.<p>g` for doubles, byte for byte as glibc (Lua's numbers, cjson, `%.17g`).
//! - `histogram.rs`: the per-command latency histogram (HdrHistogram's layout, 1 ns .. 1 s at
//!   two significant digits) behind INFO latencystats and LATENCY HISTOGRAM.
//! - `sparkline.rs`: ASCII sparklines in Valkey's layout (LATENCY GRAPH).
//! - `sha1.rs`: SHA-1 and lowercase hex (`DEBUG DIGEST`, script ids).
//! - `sha256.rs`: SHA-256 (ACL passwords).
//! - `sync_conn.rs`: blocking outgoing connections with timeouts and their bounded cache
//!   (MIGRATE's connections to its targets).
//! - here: the text of an OS error as C's `strerror` writes it.

pub mod clock;
pub mod fmt;
pub mod fmt_g;
pub mod histogram;
pub mod quote;
pub mod rng;
pub mod sha1;
pub mod sha256;
pub mod sparkline;
pub mod sync_conn;

/// An OS error as C's `strerror` writes it (`No such file or directory`), without the
/// ` (os error N)` that Rust's `Display` appends, so texts match Valkey's.
pub fn strerror(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}
