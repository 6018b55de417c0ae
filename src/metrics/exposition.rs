//! A [`Snapshot`] as text: Prometheus text format 0.0.4 (`text/plain; version=0.0.4`) or
//! OpenMetrics 1.0 text (`application/openmetrics-text`), chosen by the scrape's `Accept`
//! header ([`Format::negotiate`]).
//!
//! Both come from one description of the families (names, types, help, labelled series)
//! written once, in [`families`], through `prometheus-client`'s collector interface: its
//! two text encoders handle the differences (a counter's `_total` suffix on the TYPE and
//! HELP lines in 0.0.4 only, OpenMetrics' `# EOF`) and the escaping of label values
//! (error codes come from scripts, so they can hold any byte).
//!
//! Names follow the conventions of the common redis_exporter with the `ferrokey_` prefix:
//! base units (`_seconds`, `_bytes`), counters end in `_total` (the encoder appends it:
//! [`counter`] takes the name without it), one family per figure, labels for databases
//! (`db`), commands (`cmd`) and error codes (`err`).

use std::fmt;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, EncodeCounterValue, EncodeGaugeValue, EncodeMetric, NoLabelSet,
};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use super::snapshot::{CommandHistogram, Snapshot};

/// Content type of the Prometheus text format.
pub const PROMETHEUS_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// Content type of OpenMetrics text.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The two text formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Prometheus,
    OpenMetrics,
}

impl Format {
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => PROMETHEUS_CONTENT_TYPE,
            Format::OpenMetrics => OPENMETRICS_CONTENT_TYPE,
        }
    }

    /// The format an `Accept` header (its values joined by commas) prefers: OpenMetrics
    /// when it lists `application/openmetrics-text` with a weight (`q`) above 0 and at
    /// least that of any `text/plain` or wildcard; the Prometheus text otherwise, as for a
    /// request without the header.
    pub fn negotiate(accept: &str) -> Format {
        let (mut openmetrics, mut other) = (0.0f64, 0.0f64);
        for range in accept.split(',') {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f64>().ok())
                .unwrap_or(1.0);
            match media.as_str() {
                "application/openmetrics-text" => openmetrics = openmetrics.max(q),
                "text/plain" | "text/*" | "*/*" => other = other.max(q),
                _ => {}
            }
        }
        if openmetrics > 0.0 && openmetrics >= other {
            Format::OpenMetrics
        } else {
            Format::Prometheus
        }
    }
}

/// The whole exposition of `snapshot` in `format`.
pub fn render(snapshot: Snapshot, format: Format) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Figures(snapshot)));
    let mut out = String::with_capacity(16 * 1024);
    let written = match format {
        Format::Prometheus => {
            prometheus_client::encoding::prometheus_text::encode(&mut out, &registry)
        }
        Format::OpenMetrics => prometheus_client::encoding::text::encode(&mut out, &registry),
    };
    written.expect("formatting into a String does not fail");
    out
}

/// The snapshot as the registry's one collector.
#[derive(Debug)]
struct Figures(Snapshot);

impl Collector for Figures {
    fn encode(&self, mut enc: DescriptorEncoder) -> fmt::Result {
        families(&self.0, &mut enc)
    }
}

/// A family of one counter; `name` without the `_total` the encoder appends.
fn counter<N: EncodeCounterValue>(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: N,
) -> fmt::Result {
    let metric = ConstCounter::new(value);
    metric.encode(enc.encode_descriptor(name, help, None, metric.metric_type())?)
}

/// A family of one gauge.
fn gauge<N: EncodeGaugeValue>(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: N,
) -> fmt::Result {
    let metric = ConstGauge::new(value);
    metric.encode(enc.encode_descriptor(name, help, None, metric.metric_type())?)
}

/// A family of series told apart by one label.
fn labelled<'a, M: EncodeMetric>(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    metric_type: MetricType,
    label: &str,
    series: impl IntoIterator<Item = (&'a str, M)>,
) -> fmt::Result {
    let mut family = enc.encode_descriptor(name, help, None, metric_type)?;
    for (value, metric) in series {
        metric.encode(family.encode_family(&[(label, value)])?)?;
    }
    Ok(())
}

fn flag(b: bool) -> i64 {
    i64::from(b)
}

/// Every family, in a stable order.
fn families(s: &Snapshot, enc: &mut DescriptorEncoder) -> fmt::Result {
    server(s, enc)?;
    clients_and_memory(s, enc)?;
    stats(s, enc)?;
    keyspace(s, enc)?;
    commands(s, enc)?;
    command_histograms(enc, &s.command_histograms)?;
    replication(s, enc)?;
    persistence(s, enc)?;
    endpoint(s, enc)
}

fn server(s: &Snapshot, enc: &mut DescriptorEncoder) -> fmt::Result {
    gauge(enc, "ferrokey_up", "Whether the server answered the scrape (always 1)", 1i64)?;
    gauge(enc, "ferrokey_uptime_seconds", "Seconds since the server started", s.uptime_secs)?;
    gauge(
        enc,
        "ferrokey_start_time_seconds",
        "Unix time the server started at",
        s.start_time_secs,
    )?;
    let p = &s.process;
    counter(enc, "ferrokey_cpu_user_seconds", "User CPU time of the process", p.cpu_user_secs)?;
    counter(enc, "ferrokey_cpu_sys_seconds", "System CPU time of the process", p.cpu_sys_secs)
}

fn clients_and_memory(s: &Snapshot, enc: &mut DescriptorEncoder) -> fmt::Result {
    gauge(enc, "ferrokey_connected_clients", "Client connections open", s.connected_clients)?;
    gauge(enc, "ferrokey_max_clients", "The maxclients setting", s.max_clients)?;
    gauge(
        enc,
        "ferrokey_blocked_clients",
        "Clients blocked on a command or held by CLIENT PAUSE",
        s.blocked_clients,
    )?;
    gauge(enc, "ferrokey_pubsub_clients", "Clients subscribed to pub/sub", s.pubsub_clients)?;
    gauge(
        enc,
        "ferrokey_tracking_clients",
        "Clients with client-side caching tracking on",
        s.tracking_clients,
    )?;
    gauge(
        enc,
        "ferrokey_memory_used_bytes",
        "Bytes allocated by the server (used_memory)",
        s.memory_used_bytes,
    )?;
    gauge(enc, "ferrokey_memory_used_peak_bytes", "Peak of used_memory", s.memory_peak_bytes)?;
    gauge(
        enc,
        "ferrokey_memory_used_rss_bytes",
        "Resident set size of the process",
        s.process.rss_bytes,
    )?;
    gauge(
        enc,
        "ferrokey_memory_max_bytes",
        "The maxmemory setting (0: no limit)",
        s.memory_max_bytes,
    )
}

fn stats(s: &Snapshot, enc: &mut DescriptorEncoder) -> fmt::Result {
    let counters: [(&str, &str, u64); 10] = [
        ("ferrokey_commands_processed", "Commands processed", s.commands_processed),
        ("ferrokey_connections_received", "Connections accepted", s.connections_received),
        (
            "ferrokey_rejected_connections",
            "Connections refused (maxclients, protected mode)",
            s.rejected_connections,
        ),
        ("ferrokey_net_input_bytes", "Bytes read from clients", s.net_input_bytes),
        ("ferrokey_net_output_bytes", "Bytes written to clients", s.net_output_bytes),
        ("ferrokey_keyspace_hits", "Key lookups that found the key", s.keyspace_hits),
        ("ferrokey_keyspace_misses", "Key lookups that missed", s.keyspace_misses),
        ("ferrokey_expired_keys", "Keys removed because their TTL passed", s.expired_keys),
        ("ferrokey_evicted_keys", "Keys evicted under maxmemory", s.evicted_keys),
        ("ferrokey_error_replies", "Error replies sent", s.error_replies),
    ];
    for (name, help, value) in counters {
        counter(enc, name, help, value)?;
    }
    labelled(
        enc,
        "ferrokey_errors",
        "Error replies by error code",
        MetricType::Counter,
        "err",
        s.errors.iter().map(|(code, n)| (code.as_str(), ConstCounter::new(*n))),
    )?;
    gauge(enc, "ferrokey_pubsub_channels", "Channels with subscribers", s.pubsub_channels)?;
    gauge(enc, "ferrokey_pubsub_patterns", "Patterns with subscribers", s.pubsub_patterns)?;
    gauge(
        enc,
        "ferrokey_pubsub_shard_channels",
        "Shard channels with subscribers",
        s.pubsub_shard_channels,
    )
}

fn keyspace(s: &Snapshot, enc: &mut DescriptorEncoder) -> fmt::Result {
    let names: Vec<String> = s.dbs.iter().map(|d| d.index.to_string()).collect();
    let keys = names.iter().zip(&s.dbs).map(|(n, d)| (n.as_str(), ConstGauge::new(d.keys)));
    labelled(enc, "ferrokey_db_keys", "Keys in the database", MetricType::Gauge, "db", keys)?;
    let expiring =
        names.iter().zip(&s.dbs).map(|(n, d)| (n.as_str(), ConstGauge::new(d.keys_expiring)));
    labelled(
        enc,
        "ferrokey_db_keys_expiring",
        "Keys with a time to live in the database",
        MetricType::Gauge,
        "db",
        expiring,
    )?;
    let volatile = names
        .iter()
        .zip(&s.dbs)
        .map(|(n, d)| (n.as_str(), ConstGauge::new(d.keys_with_volatile_items)));
    labelled(
        enc,
        "ferrokey_db_keys_with_volatile_items",
        "Keys holding a hash with a field that has a time to live, in the database",
        MetricType::Gauge,
        "db",
        volatile,
    )
}

fn commands(s: &Snapshot, enc: &mut DescriptorEncoder) -> fmt::Result {
    let cmds = &s.commands;
    labelled(
        enc,
        "ferrokey_commands",
        "Calls of the command",
        MetricType::Counter,
        "cmd",
        cmds.iter().map(|c| (c.name, ConstCounter::new(c.calls))),
    )?;
    labelled(
        enc,
        "ferrokey_commands_duration_seconds",
        "Time spent executing the command",
        MetricType::Counter,
        "cmd",
        cmds.iter().map(|c| (c.name, ConstCounter::new(c.usec as f64 / 1e6))),
    )?;
    labelled(
        enc,
        "ferrokey_commands_rejected_calls",
        "Calls of the command refused before it ran (arity, ACL, OOM, ...)",
        MetricType::Counter,
        "cmd",
        cmds.iter().map(|c| (c.name, ConstCounter::new(c.rejected_calls))),
    )?;
    labelled(
        enc,
        "ferrokey_commands_failed_calls",
        "Calls of the command that ran and replied with an error",
        MetricType::Counter,
        "cmd",
        cmds.iter().map(|c| (c.name, ConstCounter::new(c.failed_calls))),
    )
}

/// Per-command latency histograms as the Prometheus histogram
/// `ferrokey_command_latency_seconds{cmd=...}` (`_bucket{le=...}`, `_sum`, `_count`).
/// Nothing when there are none (`latency-tracking no`, or no command ran yet).
pub fn command_histograms(
    enc: &mut DescriptorEncoder,
    histograms: &[CommandHistogram],
) -> fmt::Result {
    if histograms.is_empty() {
        return Ok(());
    }
    let mut family = enc.encode_descriptor(
        "ferrokey_command_latency_seconds",
        "Latency of the command's calls",
        None,
        MetricType::Histogram,
    )?;
    let mut buckets = Vec::new();
    for h in histograms {
        debug_assert!(h.buckets.iter().all(|(bound, _)| bound.is_finite()));
        buckets.clear();
        buckets.extend_from_slice(&h.buckets);
        let counted: u64 = h.buckets.iter().map(|(_, n)| n).sum();
        buckets.push((f64::INFINITY, h.count.saturating_sub(counted)));
        let labels = [("cmd", h.name)];
        let mut series = family.encode_family(&labels)?;
        series.encode_histogram::<NoLabelSet>(h.sum_secs, h.count, &buckets, None)?;
    }
    Ok(())
}

fn replication(s: &Snapshot, enc: &mut DescriptorEncoder) -> fmt::Result {
    let r = &s.replication;
    let role = if r.is_replica { "replica" } else { "primary" };
    labelled(
        enc,
        "ferrokey_replication_role",
        "The server's replication role (the series of its role is 1)",
        MetricType::Gauge,
        "role",
        [(role, ConstGauge::new(1i64))],
    )?;
    gauge(
        enc,
        "ferrokey_connected_replicas",
        "Replicas attached to this server",
        r.connected_replicas,
    )?;
    gauge(
        enc,
        "ferrokey_replication_offset_bytes",
        "The replication stream's offset (master_repl_offset)",
        r.offset,
    )?;
    gauge(
        enc,
        "ferrokey_replication_link_up",
        "On a replica, whether the link to its primary is up (0 on a primary)",
        flag(r.is_replica && r.link_up),
    )
}

fn persistence(s: &Snapshot, enc: &mut DescriptorEncoder) -> fmt::Result {
    let p = &s.persistence;
    gauge(
        enc,
        "ferrokey_rdb_changes_since_last_save",
        "Writes since the last successful save",
        p.changes_since_last_save,
    )?;
    gauge(
        enc,
        "ferrokey_rdb_last_save_timestamp_seconds",
        "Unix time of the last successful save",
        p.last_save_time_secs,
    )?;
    gauge(
        enc,
        "ferrokey_rdb_bgsave_in_progress",
        "Whether a background save runs",
        flag(p.bgsave_in_progress),
    )?;
    gauge(
        enc,
        "ferrokey_rdb_last_bgsave_ok",
        "Whether the last background save succeeded",
        flag(p.last_bgsave_ok),
    )?;
    counter(enc, "ferrokey_rdb_saves", "RDB saves made", p.rdb_saves)?;
    gauge(enc, "ferrokey_aof_enabled", "Whether the AOF is on", flag(p.aof_enabled))?;
    gauge(
        enc,
        "ferrokey_aof_rewrite_in_progress",
        "Whether an AOF rewrite runs",
        flag(p.aof_rewrite_in_progress),
    )?;
    gauge(
        enc,
        "ferrokey_aof_last_write_ok",
        "Whether the last AOF write succeeded",
        flag(p.aof_last_write_ok),
    )?;
    counter(enc, "ferrokey_aof_rewrites", "AOF rewrites made", p.aof_rewrites)
}

fn endpoint(s: &Snapshot, enc: &mut DescriptorEncoder) -> fmt::Result {
    counter(
        enc,
        "ferrokey_metrics_scrapes",
        "Scrapes of this endpoint answered, this one included",
        s.endpoint.scrapes,
    )?;
    counter(
        enc,
        "ferrokey_metrics_refused_connections",
        "Connections to this endpoint refused with 503 (metrics-max-clients)",
        s.endpoint.refused_connections,
    )
}

#[cfg(test)]
#[path = "exposition_tests.rs"]
mod tests;
