//! Access clocks: the 24 bits every entry keeps for eviction, as Valkey's LRU clock
//! (seconds) or its LFU data (16 bits of minutes, 8 bits of logarithmic counter).

/// How a read updates an object's access clock (`Obj::lru`). It follows maxmemory-policy:
/// the server sets it on every db when the policy (or an lfu-* setting) changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AccessClock {
    /// The LRU clock of the last access (every policy but the LFU ones).
    #[default]
    Lru,
    /// Valkey's LFU: a logarithmic access counter that decays with time.
    Lfu { log_factor: u32, decay_time_mins: u32 },
}

/// Largest value of the 24-bit LRU clock.
pub const LRU_CLOCK_MAX: u32 = (1 << 24) - 1;
/// The LRU clock ticks once a second.
const LRU_CLOCK_RESOLUTION_MS: i64 = 1000;
/// The counter a new object starts with under LFU, so it is not evicted at once.
pub const LFU_INIT_VAL: u32 = 5;
/// Largest LFU counter (8 bits).
const LFU_COUNTER_MAX: u32 = 255;

/// The LRU clock: seconds resolution, 24 bits, as Valkey's `LRU_CLOCK`.
pub fn lru_clock(now_ms: i64) -> u32 {
    ((now_ms / LRU_CLOCK_RESOLUTION_MS) as u64 & LRU_CLOCK_MAX as u64) as u32
}

/// Milliseconds since the last access recorded in an LRU clock value (wrapping as Valkey's
/// `estimateObjectIdleTime`; resolution one second).
pub fn idle_ms(lru: u32, now_ms: i64) -> i64 {
    let now = lru_clock(now_ms);
    let ticks = if now >= lru { now - lru } else { now + (LRU_CLOCK_MAX - lru) };
    ticks as i64 * LRU_CLOCK_RESOLUTION_MS
}

/// Minutes since the epoch, 16 bits: the time part of an LFU clock value.
fn lfu_minutes(now_ms: i64) -> u32 {
    ((now_ms / 60_000) as u64 & 0xffff) as u32
}

/// The LFU counter of a clock value after decay: one step per `decay_time_mins` elapsed
/// since its time part (0 disables decay). This is what OBJECT FREQ reports.
pub fn lfu_decayed(lru: u32, now_ms: i64, decay_time_mins: u32) -> u32 {
    let last = lru >> 8;
    let counter = lru & 0xff;
    let now = lfu_minutes(now_ms);
    let elapsed = if now >= last { now - last } else { 0xffff - last + now };
    let periods = elapsed.checked_div(decay_time_mins).unwrap_or(0);
    counter.saturating_sub(periods)
}

/// An LRU clock value for an object idle for `idle_secs` (RESTORE IDLETIME, RDB idle).
pub fn lru_clock_idle_for(idle_secs: u64, now_ms: i64) -> u32 {
    let clock = i64::from(lru_clock(now_ms)) - idle_secs.min(i64::MAX as u64) as i64;
    clock.rem_euclid(i64::from(LRU_CLOCK_MAX) + 1) as u32
}

/// An LFU clock value with counter `freq`, last decayed now (RESTORE FREQ, RDB freq).
pub fn lfu_clock_with_freq(freq: u8, now_ms: i64) -> u32 {
    (lfu_minutes(now_ms) << 8) | u32::from(freq)
}

/// The clock value of an object created now.
pub fn new_clock(access: AccessClock, now_ms: i64) -> u32 {
    match access {
        AccessClock::Lru => lru_clock(now_ms),
        AccessClock::Lfu { .. } => (lfu_minutes(now_ms) << 8) | LFU_INIT_VAL,
    }
}

/// An object's access clock after an access at `now_ms` (Valkey's LRU stamp, or
/// `updateLFU`: decay, then a probabilistic increment using `draw`).
pub fn accessed_clock(access: AccessClock, lru: u32, now_ms: i64, draw: f64) -> u32 {
    match access {
        AccessClock::Lru => lru_clock(now_ms),
        AccessClock::Lfu { log_factor, decay_time_mins } => {
            let counter = lfu_decayed(lru, now_ms, decay_time_mins);
            (lfu_minutes(now_ms) << 8) | lfu_log_incr(counter, log_factor, draw)
        }
    }
}

/// Valkey's `LFULogIncr`: the counter grows with probability 1 / ((counter - init) *
/// log_factor + 1), so it tracks the logarithm of the access count. `r` is uniform in [0, 1).
pub fn lfu_log_incr(counter: u32, log_factor: u32, r: f64) -> u32 {
    if counter >= LFU_COUNTER_MAX {
        return LFU_COUNTER_MAX;
    }
    let base = counter.saturating_sub(LFU_INIT_VAL) as f64;
    let p = 1.0 / (base * log_factor as f64 + 1.0);
    if r < p {
        counter + 1
    } else {
        counter
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn clocks_built_from_idle_time_and_frequency_read_back() {
        let now = 1_700_000_000_000;
        assert_eq!(idle_ms(lru_clock_idle_for(10, now), now), 10_000);
        assert_eq!(idle_ms(lru_clock_idle_for(0, now), now), 0);
        // Wraps like the 24-bit clock itself.
        let huge = u64::from(LRU_CLOCK_MAX) + 5;
        assert_eq!(idle_ms(lru_clock_idle_for(huge, now), now), 4_000);
        assert_eq!(lfu_decayed(lfu_clock_with_freq(7, now), now, 1), 7);
        assert_eq!(lfu_decayed(lfu_clock_with_freq(255, now), now + 120_000, 1), 253);
    }

    use super::*;

    #[test]
    fn idle_time_wraps_with_the_clock() {
        assert_eq!(idle_ms(LRU_CLOCK_MAX - 1, 0), 1000);
    }

    #[test]
    fn lfu_increment_saturates() {
        assert_eq!(lfu_log_incr(255, 10, 0.0), 255);
        assert_eq!(lfu_log_incr(LFU_INIT_VAL, 10, 0.99), LFU_INIT_VAL + 1);
    }
}
