//! maxmemory and the eviction policies, end to end: each policy evicts the right class of
//! keys, the OOM error and what still works under it, CONFIG SET maxmemory at run time, and
//! the bounded-cache figure under redis-benchmark (used_memory never more than 5% over).

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::{info_int, Client, Val};

const OOM: &[u8] = b"-OOM command not allowed when used memory > 'maxmemory'.\r\n";

fn used_memory(c: &mut Client) -> i64 {
    info_int(c, "memory", "used_memory")
}

/// Send `commands` pipelined and check every reply is `+OK` (or the given integer).
fn pipeline(c: &mut Client, commands: &[Vec<String>]) -> Vec<Val> {
    let mut bytes = Vec::new();
    for cmd in commands {
        let args: Vec<&[u8]> = cmd.iter().map(|a| a.as_bytes()).collect();
        bytes.extend_from_slice(&Client::encode(&args));
    }
    c.send_raw(&bytes);
    commands.iter().map(|_| c.read()).collect()
}

fn set_cmds(prefix: &str, range: std::ops::Range<usize>, ttl_s: Option<usize>) -> Vec<Vec<String>> {
    range
        .map(|i| {
            let mut cmd = vec!["SET".to_string(), format!("{prefix}{i:06}"), "v".repeat(100)];
            if let Some(ttl) = ttl_s {
                cmd.extend(["EX".to_string(), (ttl + i).to_string()]);
            }
            cmd
        })
        .collect()
}

/// Write the keys in pipelines of 100: a pipeline sits in the query buffer while it runs,
/// and that memory counts (a pipeline of 1000 such SETs holds about as much as 1000 keys).
fn fill(c: &mut Client, prefix: &str, range: std::ops::Range<usize>, ttl_s: Option<usize>) {
    for chunk in set_cmds(prefix, range, ttl_s).chunks(100) {
        for reply in pipeline(c, chunk) {
            assert_eq!(reply, Val::ok());
        }
    }
}

fn exists(c: &mut Client, prefix: &str, i: usize) -> bool {
    c.cmd(&["EXISTS", &format!("{prefix}{i:06}")]) == Val::Int(1)
}

/// What INFO may show above `maxmemory` right after eviction brought memory under it: the
/// command's own allocations after the check (the INFO text, its reply) and the client's.
const SLACK_BYTES: i64 = 64 << 10;

/// Sets maxmemory to `used_memory - shrink_bytes` and waits (PINGing, which evicts before
/// it runs) until the server is back under it. Returns the limit.
fn squeeze(c: &mut Client, shrink_bytes: i64) -> i64 {
    // A command's first call allocates its latency histogram (24 KiB, as Valkey's does):
    // every command these tests send runs once before the limit is measured, so that no
    // histogram is paid for with evictions the tests do not expect.
    for cmd in [&["GET", "warm-up"][..], &["EXISTS", "warm-up"], &["PING"], &["DBSIZE"]] {
        c.cmd(cmd);
    }
    c.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
    c.cmd(&["INFO", "keyspace"]);
    let limit = used_memory(c) - shrink_bytes;
    assert_eq!(c.cmd(&["CONFIG", "SET", "maxmemory", &limit.to_string()]), Val::ok());
    let deadline = Instant::now() + Duration::from_secs(10);
    while used_memory(c) > limit + SLACK_BYTES {
        assert!(Instant::now() < deadline, "not evicted down to {limit}");
        c.cmd(&["PING"]);
    }
    limit
}

#[test]
fn noeviction_refuses_writes_with_the_oom_error_and_serves_reads() {
    let server = common::start(&["--maxmemory-policy", "noeviction"]);
    let mut c = Client::connect(server.port);
    fill(&mut c, "k:", 0..2000, None);
    squeeze(&mut c, -100_000);
    c.cmd(&["CONFIG", "SET", "maxmemory", "1"]);
    assert_eq!(c.cmd_raw(&["SET", "new", "v"]), OOM);
    assert_eq!(c.cmd_raw(&["APPEND", "k:000001", "more"]), OOM);
    assert_eq!(c.cmd(&["GET", "k:000001"]), Val::bulk(&"v".repeat(100)));
    assert_eq!(c.cmd(&["DBSIZE"]), Val::Int(2000));
    assert_eq!(c.cmd(&["DEL", "k:000002"]), Val::Int(1), "DEL is not DENYOOM");
    let stats = c.cmd(&["INFO", "commandstats"]).as_str();
    assert!(stats.contains("cmdstat_set:calls=2000,"), "{stats}");
    assert!(stats.contains("rejected_calls=1,failed_calls=0"), "{stats}");
    let errors = c.cmd(&["INFO", "errorstats"]).as_str();
    assert!(errors.contains("errorstat_OOM:count=2"), "{errors}");
    assert_eq!(info_int(&mut c, "stats", "evicted_keys"), 0);
    assert!(info_int(&mut c, "stats", "current_eviction_exceeded_time") >= 0);
    c.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
    assert_eq!(c.cmd(&["SET", "new", "v"]), Val::ok());
}

#[test]
fn volatile_policies_evict_only_keys_with_a_ttl_then_refuse_writes() {
    for policy in ["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"] {
        let server = common::start(&["--maxmemory-policy", policy]);
        let mut c = Client::connect(server.port);
        fill(&mut c, "plain:", 0..3000, None);
        fill(&mut c, "ttl:", 0..3000, Some(10_000));
        let limit = squeeze(&mut c, 200_000);
        assert!(info_int(&mut c, "stats", "evicted_keys") > 0, "{policy}");
        let survivors = (0..3000).filter(|&i| exists(&mut c, "plain:", i)).count();
        assert_eq!(survivors, 3000, "{policy} evicted a key without a TTL");
        // Squeeze below what the keys without a TTL need: every TTL key goes (each command
        // evicts for up to 500 µs first), then writes are refused and the plain keys stay.
        c.cmd(&["CONFIG", "SET", "maxmemory", &(limit / 2).to_string()]);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !c.cmd(&["INFO", "keyspace"]).as_str().contains("expires=0,") {
            assert!(Instant::now() < deadline, "{policy}: TTL keys left");
        }
        assert_eq!(c.cmd_raw(&["SET", "one-more", "v"]), OOM, "{policy}");
        assert_eq!(c.cmd(&["DBSIZE"]), Val::Int(3000), "{policy}");
        let keyspace = c.cmd(&["INFO", "keyspace"]).as_str();
        assert!(keyspace.contains("db0:keys=3000,expires=0,"), "{policy}: {keyspace}");
    }
}

#[test]
fn volatile_ttl_evicts_the_soonest_to_expire_first() {
    let server = common::start(&["--maxmemory-policy", "volatile-ttl"]);
    let mut c = Client::connect(server.port);
    // ttl:i expires in 10000 + i seconds.
    fill(&mut c, "ttl:", 0..4000, Some(10_000));
    squeeze(&mut c, 150_000);
    let gone: Vec<usize> = (0..4000).filter(|&i| !exists(&mut c, "ttl:", i)).collect();
    assert!(gone.len() > 500, "only {} evicted", gone.len());
    let late = gone.iter().filter(|&&i| i >= 2000).count();
    assert!(
        late * 20 <= gone.len(),
        "{late} of {} evicted keys were in the later half",
        gone.len()
    );
}

#[test]
fn allkeys_lru_keeps_a_hot_set_under_a_skewed_load() {
    let server = common::start(&["--maxmemory-policy", "allkeys-lru"]);
    let mut c = Client::connect(server.port);
    // The LRU clock ticks once a second: the hot keys must be younger than the cold ones.
    fill(&mut c, "cold:", 0..2500, None);
    thread::sleep(Duration::from_millis(1100));
    fill(&mut c, "hot:", 0..500, None);
    // Room for about the 3000 keys written so far: each round adds 1000 more. The hot keys
    // are read at the start of each round, so that only the cold keys written in the last
    // round are as recent as they are when the round's writes evict.
    squeeze(&mut c, 0);
    let gets: Vec<Vec<String>> =
        (0..500).map(|i| vec!["GET".to_string(), format!("hot:{i:06}")]).collect();
    for round in 0..5 {
        thread::sleep(Duration::from_millis(1100));
        for chunk in gets.chunks(100) {
            for reply in pipeline(&mut c, chunk) {
                assert!(matches!(reply, Val::Bulk(_)), "round {round}: a hot key is gone");
            }
        }
        let start = 2500 + round * 1000;
        fill(&mut c, "cold:", start..start + 1000, None);
    }
    assert!(info_int(&mut c, "stats", "evicted_keys") >= 4000);
    let hot = (0..500).filter(|&i| exists(&mut c, "hot:", i)).count();
    assert_eq!(hot, 500, "hot keys evicted");
}

#[test]
fn allkeys_lfu_keeps_the_frequently_used_keys() {
    let server = common::start(&["--maxmemory-policy", "allkeys-lfu"]);
    let mut c = Client::connect(server.port);
    fill(&mut c, "hot:", 0..300, None);
    let gets: Vec<Vec<String>> =
        (0..300).map(|i| vec!["GET".to_string(), format!("hot:{i:06}")]).collect();
    for _ in 0..50 {
        pipeline(&mut c, &gets);
    }
    let freq = c.cmd(&["OBJECT", "FREQ", "hot:000007"]).as_int();
    assert!(freq > 5, "hot key counter {freq}");
    fill(&mut c, "cold:", 0..2000, None);
    squeeze(&mut c, 0);
    fill(&mut c, "cold:", 2000..6000, None);
    assert!(info_int(&mut c, "stats", "evicted_keys") >= 3000);
    let hot = (0..300).filter(|&i| exists(&mut c, "hot:", i)).count();
    assert_eq!(hot, 300, "frequently used keys evicted");
}

#[test]
fn allkeys_random_evicts_any_key() {
    let server = common::start(&["--maxmemory-policy", "allkeys-random"]);
    let mut c = Client::connect(server.port);
    fill(&mut c, "plain:", 0..2000, None);
    fill(&mut c, "ttl:", 0..2000, Some(10_000));
    squeeze(&mut c, 200_000);
    let plain_gone = (0..2000).filter(|&i| !exists(&mut c, "plain:", i)).count();
    let ttl_gone = (0..2000).filter(|&i| !exists(&mut c, "ttl:", i)).count();
    assert!(plain_gone > 100 && ttl_gone > 100, "plain {plain_gone}, ttl {ttl_gone}");
}

#[test]
fn config_set_maxmemory_lower_evicts_down_at_run_time() {
    let server = common::start(&["--maxmemory-policy", "allkeys-lru"]);
    let mut c = Client::connect(server.port);
    fill(&mut c, "k:", 0..20_000, None);
    let used = used_memory(&mut c);
    let limit = used / 2;
    assert_eq!(c.cmd(&["CONFIG", "SET", "maxmemory", &limit.to_string()]), Val::ok());
    // The time events evict down (and every command, INFO included, evicts first).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        thread::sleep(Duration::from_millis(200));
        let text = c.cmd(&["INFO", "memory"]).as_str();
        let now: i64 = text
            .lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .and_then(|v| v.trim().parse().ok())
            .expect("used_memory");
        if now <= limit + SLACK_BYTES {
            break;
        }
        assert!(Instant::now() < deadline, "still at {now} of {limit}");
    }
    // Every command may evict first (memory freed lazily is counted a moment later): read
    // both figures in one transaction, which evicts once, before it runs.
    assert_eq!(c.cmd(&["MULTI"]), Val::ok());
    assert_eq!(c.cmd(&["DBSIZE"]), Val::Simple("QUEUED".into()));
    assert_eq!(c.cmd(&["INFO", "stats"]), Val::Simple("QUEUED".into()));
    let replies = c.cmd(&["EXEC"]).as_array();
    let keys = replies[0].as_int();
    let evicted: i64 = replies[1]
        .as_str()
        .lines()
        .find_map(|l| l.strip_prefix("evicted_keys:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("evicted_keys");
    assert!(keys < 12_000, "{keys} keys left");
    assert_eq!(evicted, 20_000 - keys);
    assert_eq!(info_int(&mut c, "memory", "maxmemory"), limit);
    assert_eq!(c.cmd(&["SET", "k:new", "v"]), Val::ok());
}

/// The bounded-cache figure, scaled for CI: a server with a `maxmemory` budget filled to
/// several times it by redis-benchmark (random keys, 100-byte values, pipelined), while a
/// sampler reads INFO used_memory every 50 ms: used_memory never goes more than 5% over, the
/// server answers every sample, and keys are evicted. `FERROKEY_FIGURE_MAXMEMORY_MB` and
/// `FERROKEY_FIGURE_REQUESTS` scale it up (the README figure: 100 and 3000000).
#[test]
fn a_full_cache_stays_within_its_budget_under_redis_benchmark() {
    let env = |name: &str, default: u64| {
        std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
    };
    let budget_mb = env("FERROKEY_FIGURE_MAXMEMORY_MB", 20);
    let requests = env("FERROKEY_FIGURE_REQUESTS", 600_000);
    let budget = format!("{budget_mb}mb");
    let server = common::start(&["--maxmemory", &budget, "--maxmemory-policy", "allkeys-lru"]);
    let port = server.port;
    let limit = (budget_mb * 1024 * 1024) as i64 * 105 / 100;

    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = Arc::clone(&done);
        thread::spawn(move || {
            let mut c = Client::connect(port);
            let (mut samples, mut max_used, mut slowest) = (0u32, 0i64, Duration::ZERO);
            while !done.load(Ordering::Relaxed) {
                let asked = Instant::now();
                assert_eq!(c.cmd(&["PING"]), Val::Simple("PONG".into()));
                let used = used_memory(&mut c);
                slowest = slowest.max(asked.elapsed());
                max_used = max_used.max(used);
                samples += 1;
                thread::sleep(Duration::from_millis(50));
            }
            (samples, max_used, slowest)
        })
    };
    let port_arg = port.to_string();
    let requests_arg = requests.to_string();
    let args = [
        "-p",
        &port_arg,
        "-t",
        "set",
        "-r",
        "10000000",
        "-d",
        "100",
        "-n",
        &requests_arg,
        "-P",
        "16",
        "-q",
    ];
    let out = common::run_tool("redis-benchmark", &args, b"");
    done.store(true, Ordering::Relaxed);
    let (samples, max_used, slowest) = sampler.join().expect("sampler");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut c = Client::connect(port);
    let evicted = info_int(&mut c, "stats", "evicted_keys");
    let keys = c.cmd(&["DBSIZE"]).as_int();
    eprintln!(
        "maxmemory {budget}, {requests} SETs: {samples} samples, max used_memory {max_used} \
         ({:.2}% of the budget), slowest PING+INFO {slowest:?}, evicted_keys {evicted}, \
         {keys} keys left",
        max_used as f64 * 100.0 / (budget_mb * 1024 * 1024) as f64
    );
    assert!(samples >= 5, "only {samples} samples");
    assert!(max_used <= limit, "used_memory reached {max_used}, over {limit}");
    assert!(evicted > 0);
}
