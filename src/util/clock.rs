//! The wall clock: Unix time read from `SystemTime`, in the units the server keeps (`now_ms`
//! for expiry and timers, `now_us` for INFO, `since_epoch` for TIME). It reads the clock and
//! nothing else; code that can be handed the time as an argument (`ctx.now_ms`) should be.
//! A clock set before 1970 reads as the epoch (0) rather than failing.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The time since the Unix epoch (zero when the clock is set before it).
pub fn since_epoch() -> Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default()
}

/// Unix time in milliseconds.
pub fn now_ms() -> i64 {
    since_epoch().as_millis() as i64
}

/// Unix time in microseconds.
pub fn now_us() -> i64 {
    since_epoch().as_micros() as i64
}

/// Valkey's `debugDelay`: `n` microseconds asleep, or -`n` nanoseconds of busy waiting.
pub fn debug_delay(n: i32) {
    match n {
        0 => {}
        n if n > 0 => std::thread::sleep(std::time::Duration::from_micros(n as u64)),
        n => {
            let until = std::time::Instant::now()
                + std::time::Duration::from_nanos(n.unsigned_abs() as u64);
            while std::time::Instant::now() < until {
                std::hint::spin_loop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_what_the_names_say() {
        let ms = now_ms();
        let us = now_us();
        let secs = since_epoch().as_secs() as i64;
        // After 2020-01-01 (the clock is set), and the three readings within a minute of each
        // other once in the same unit.
        assert!(ms > 1_577_836_800_000, "{ms}");
        assert!((us / 1000 - ms).abs() < 60_000, "{us} us vs {ms} ms");
        assert!((secs - ms / 1000).abs() < 60, "{secs} s vs {ms} ms");
    }
}
