//! The latency monitor: for each kind of event that can stall the main thread (a slow
//! command, an active-expire cycle, an AOF write, a fork...), the spikes at or above
//! `latency-monitor-threshold` milliseconds, kept as Valkey keeps them: one sample a
//! second (the worst of that second), the last 160 seconds that had one, and the worst
//! ever, the sum and the count since the event's last reset. LATENCY reads it; the places
//! that time an event report to it through [`LatencyMonitor::add_if_needed`], timing it
//! with a [`Timer`], which reads the clock only while the monitor is on (threshold > 0),
//! as Valkey's `latencyStartMonitor` does.
//!
//! The history itself reads no clock ([`LatencyMonitor::add`] and [`Series::analyze`] take
//! the time in); only `add_if_needed` stamps a spike it keeps with the wall clock.

/// Samples kept per event (Valkey's `LATENCY_TS_LEN`).
pub const HISTORY_LEN: usize = 160;

/// The kinds of events, with Valkey's names, that ferrokey has a source for. Two of Valkey's
/// have none: `command-unblocking` is the reply time of a client a module unblocked (a
/// client blocked on keys runs its command again through the ordinary call, timed as
/// `command` or `fast-command`, in Valkey as here), and `while-blocked-cron` times the cron
/// work (active defrag, memory figures while loading) that Valkey does while a script or a
/// load keeps it busy, which ferrokey's busy turn (`runtime::busy`) does not do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A command not flagged `fast` took long.
    Command,
    /// A `fast` command took long.
    FastCommand,
    /// A time-limited active-expire cycle.
    ExpireCycle,
    /// Deleting one key in the active-expire cycle (freeing its value).
    ExpireDel,
    /// An eviction run (all the keys one command needed to free), the wait for the lazyfree
    /// thread included.
    EvictionCycle,
    /// Deleting one evicted key (freeing its value, or handing it to the lazyfree thread).
    EvictionDel,
    /// Waiting for the lazyfree thread when nothing was left to evict.
    EvictionLazyfree,
    /// Every AOF write(2).
    AofWrite,
    /// An AOF write while a background fsync was running.
    AofWritePendingFsync,
    /// An AOF write while a fork child was running.
    AofWriteActiveChild,
    /// An AOF write with neither.
    AofWriteAlone,
    /// The fsync of `appendfsync always`.
    AofFsyncAlways,
    /// Installing a rewritten AOF (the manifest's rename).
    AofRename,
    /// fork(2) of a BGSAVE or AOF rewrite child.
    Fork,
    /// Removing the temporary file of a killed BGSAVE child.
    RdbUnlinkTempFile,
}

impl Event {
    pub fn name(self) -> &'static str {
        match self {
            Event::Command => "command",
            Event::FastCommand => "fast-command",
            Event::ExpireCycle => "expire-cycle",
            Event::ExpireDel => "expire-del",
            Event::EvictionCycle => "eviction-cycle",
            Event::EvictionDel => "eviction-del",
            Event::EvictionLazyfree => "eviction-lazyfree",
            Event::AofWrite => "aof-write",
            Event::AofWritePendingFsync => "aof-write-pending-fsync",
            Event::AofWriteActiveChild => "aof-write-active-child",
            Event::AofWriteAlone => "aof-write-alone",
            Event::AofFsyncAlways => "aof-fsync-always",
            Event::AofRename => "aof-rename",
            Event::Fork => "fork",
            Event::RdbUnlinkTempFile => "rdb-unlink-temp-file",
        }
    }
}

/// A stopwatch for an event: started only while the monitor is on (`threshold_ms` > 0).
#[derive(Debug, Clone, Copy)]
pub struct Timer(Option<std::time::Instant>);

impl Timer {
    pub fn start(threshold_ms: u64) -> Timer {
        Timer((threshold_ms != 0).then(std::time::Instant::now))
    }

    /// Whole milliseconds since the start (0 when the monitor was off).
    pub fn elapsed_ms(&self) -> u64 {
        self.0.map_or(0, |t| t.elapsed().as_millis() as u64)
    }
}

/// One second's worst spike.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sample {
    /// Unix time, seconds (0: an empty slot).
    pub time_s: i64,
    pub latency_ms: u64,
}

/// One event's history: a ring of [`HISTORY_LEN`] seconds.
#[derive(Debug, Clone)]
pub struct Series {
    /// Where the next second's sample goes.
    next: usize,
    samples: [Sample; HISTORY_LEN],
    /// The worst spike since the last reset.
    pub max_ms: u64,
    /// Every spike added, summed and counted (LATEST's last two fields).
    pub sum_ms: u64,
    pub count: u64,
}

impl Series {
    fn new() -> Series {
        Series {
            next: 0,
            samples: [Sample::default(); HISTORY_LEN],
            max_ms: 0,
            sum_ms: 0,
            count: 0,
        }
    }

    fn add(&mut self, latency_ms: u64, now_s: i64) {
        self.max_ms = self.max_ms.max(latency_ms);
        self.sum_ms += latency_ms;
        self.count += 1;
        let prev = &mut self.samples[(self.next + HISTORY_LEN - 1) % HISTORY_LEN];
        if prev.time_s == now_s {
            prev.latency_ms = prev.latency_ms.max(latency_ms);
            return;
        }
        self.samples[self.next] = Sample { time_s: now_s, latency_ms };
        self.next = (self.next + 1) % HISTORY_LEN;
    }

    /// The kept samples, oldest first.
    pub fn samples(&self) -> impl Iterator<Item = Sample> + '_ {
        (0..HISTORY_LEN)
            .map(move |j| self.samples[(self.next + j) % HISTORY_LEN])
            .filter(|s| s.time_s != 0)
    }

    /// The latest sample.
    pub fn latest(&self) -> Sample {
        self.samples[(self.next + HISTORY_LEN - 1) % HISTORY_LEN]
    }

    /// What LATENCY DOCTOR says of the kept samples.
    pub fn analyze(&self, now_s: i64) -> Analysis {
        let mut a = Analysis::default();
        let mut sum = 0u64;
        let mut oldest_s = 0i64;
        for s in self.samples() {
            if a.samples == 0 {
                a.min_ms = s.latency_ms;
                a.max_ms = s.latency_ms;
            } else {
                a.min_ms = a.min_ms.min(s.latency_ms);
                a.max_ms = a.max_ms.max(s.latency_ms);
            }
            a.samples += 1;
            sum += s.latency_ms;
            if oldest_s == 0 || s.time_s < oldest_s {
                oldest_s = s.time_s;
            }
        }
        if a.samples == 0 {
            return a;
        }
        a.avg_ms = sum / a.samples;
        a.period_s = (now_s - oldest_s).max(1);
        let deviations: u64 = self.samples().map(|s| s.latency_ms.abs_diff(a.avg_ms)).sum();
        a.mad_ms = deviations / a.samples;
        a
    }
}

/// Figures of an event's kept samples (Valkey's `latencyStats`), integer milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Analysis {
    pub samples: u64,
    pub avg_ms: u64,
    pub min_ms: u64,
    pub max_ms: u64,
    /// Mean absolute deviation from the average.
    pub mad_ms: u64,
    /// Seconds from the oldest kept sample to now (at least 1).
    pub period_s: i64,
}

/// Every event's history, in the order the events first happened.
#[derive(Debug, Default)]
pub struct LatencyMonitor {
    events: Vec<(&'static str, Box<Series>)>,
}

impl LatencyMonitor {
    /// Adds a spike of `latency_ms` of `event`, stamped with the current second, when the
    /// monitor is on (`threshold_ms` > 0) and the spike reaches the threshold.
    #[inline]
    pub fn add_if_needed(&mut self, threshold_ms: u64, event: Event, latency_ms: u64) {
        if threshold_ms != 0 && latency_ms >= threshold_ms {
            self.add(event, latency_ms, crate::util::clock::now_ms() / 1000);
        }
    }

    /// Adds a spike unconditionally.
    pub fn add(&mut self, event: Event, latency_ms: u64, now_s: i64) {
        let name = event.name();
        let series = match self.events.iter().position(|(n, _)| *n == name) {
            Some(i) => &mut self.events[i].1,
            None => {
                self.events.push((name, Box::new(Series::new())));
                &mut self.events.last_mut().expect("pushed").1
            }
        };
        series.add(latency_ms, now_s);
    }

    /// The history of the event named exactly `name`.
    pub fn get(&self, name: &[u8]) -> Option<(&'static str, &Series)> {
        self.events.iter().find(|(n, _)| n.as_bytes() == name).map(|(n, s)| (*n, &**s))
    }

    /// Every event with a history.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Series)> {
        self.events.iter().map(|(n, s)| (*n, &**s))
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Forgets the event named `name` (any case); how many were forgotten.
    pub fn reset(&mut self, name: &[u8]) -> usize {
        let before = self.events.len();
        self.events.retain(|(n, _)| !n.as_bytes().eq_ignore_ascii_case(name));
        before - self.events.len()
    }

    /// Forgets every event; how many there were.
    pub fn reset_all(&mut self) -> usize {
        std::mem::take(&mut self.events).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_the_threshold_or_off_nothing_is_kept() {
        let mut m = LatencyMonitor::default();
        m.add_if_needed(0, Event::Command, 500);
        m.add_if_needed(10, Event::Command, 9);
        assert!(m.is_empty());
        assert_eq!(Timer::start(0).elapsed_ms(), 0);
        m.add_if_needed(10, Event::Command, 10);
        let latest = m.get(b"command").unwrap().1.latest();
        assert_eq!(latest.latency_ms, 10);
        assert!(latest.time_s > 1_700_000_000);
    }

    #[test]
    fn one_sample_a_second_the_worst_of_it() {
        let mut m = LatencyMonitor::default();
        m.add(Event::Command, 50, 100);
        m.add(Event::Command, 20, 102);
        m.add(Event::Command, 10, 102);
        m.add(Event::Command, 30, 102);
        let (_, s) = m.get(b"command").unwrap();
        let got: Vec<_> = s.samples().map(|s| (s.time_s, s.latency_ms)).collect();
        assert_eq!(got, vec![(100, 50), (102, 30)]);
        assert_eq!((s.max_ms, s.sum_ms, s.count), (50, 110, 4));
    }

    #[test]
    fn the_ring_keeps_the_last_160_seconds() {
        let mut m = LatencyMonitor::default();
        for t in 1..=200 {
            m.add(Event::ExpireCycle, t as u64, t);
        }
        let (_, s) = m.get(b"expire-cycle").unwrap();
        let got: Vec<_> = s.samples().map(|s| s.time_s).collect();
        assert_eq!(got, (41..=200).collect::<Vec<_>>());
        assert_eq!(s.latest().latency_ms, 200);
        assert_eq!(s.max_ms, 200);
    }

    #[test]
    fn analysis_as_the_doctor_reads_it() {
        let mut m = LatencyMonitor::default();
        m.add(Event::Command, 50, 100);
        m.add(Event::Command, 30, 101);
        let a = m.get(b"command").unwrap().1.analyze(102);
        assert_eq!(
            a,
            Analysis { samples: 2, avg_ms: 40, min_ms: 30, max_ms: 50, mad_ms: 10, period_s: 2 }
        );
    }

    #[test]
    fn reset_is_by_name_in_any_case() {
        let mut m = LatencyMonitor::default();
        m.add(Event::Command, 5, 1);
        m.add(Event::Fork, 5, 1);
        assert_eq!(m.reset(b"COMMAND"), 1);
        assert_eq!(m.reset(b"command"), 0);
        assert!(m.get(b"FORK").is_none());
        assert_eq!(m.reset_all(), 1);
        assert!(m.is_empty());
    }
}
