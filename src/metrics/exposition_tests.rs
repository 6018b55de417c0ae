//! The exposition's two formats, checked line by line.

use super::*;
use crate::metrics::snapshot::{CommandFigures, DbFigures};

/// Prometheus' own Accept header (2.x with OpenMetrics negotiation on).
const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0,\
    application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

fn sample() -> Snapshot {
    Snapshot {
        uptime_secs: 12,
        connected_clients: 3,
        dbs: vec![
            DbFigures { index: 0, keys: 5, keys_expiring: 1, keys_with_volatile_items: 3 },
            DbFigures { index: 9, keys: 2, keys_expiring: 0, keys_with_volatile_items: 0 },
        ],
        commands: vec![CommandFigures {
            name: "config|get",
            calls: 4,
            usec: 1500,
            rejected_calls: 1,
            failed_calls: 0,
        }],
        errors: vec![("ERR".into(), 2), ("MY\"ODD\\CODE".into(), 1)],
        ..Snapshot::default()
    }
}

/// Checks the text's shape; returns the samples as (name with labels, value).
fn samples(text: &str, format: Format) -> Vec<(String, f64)> {
    let mut typed: Vec<(String, String)> = Vec::new();
    let mut helped: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE name kind");
            typed.push((name.to_string(), kind.to_string()));
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            helped.push(rest.split_once(' ').expect("HELP name text").0.to_string());
            continue;
        }
        if line == "# EOF" {
            continue;
        }
        assert!(!line.starts_with('#'), "{line}");
        let (series, value) = line.rsplit_once(' ').expect("series value");
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("value of {line}"));
        let name = series.split('{').next().unwrap();
        assert!(name.starts_with("ferrokey_"), "{line}");
        if series.contains('{') {
            assert!(series.ends_with('}'), "{line}");
        }
        // The family this sample belongs to, with its type.
        let (family, kind) = typed
            .iter()
            .rev()
            .find(|(f, _)| name.starts_with(f.as_str()))
            .unwrap_or_else(|| panic!("no TYPE before {line}"));
        assert!(helped.contains(family), "no HELP for {family}");
        if kind == "counter" {
            assert!(name.ends_with("_total"), "{line}");
            match format {
                Format::Prometheus => assert_eq!(family, name),
                Format::OpenMetrics => assert_eq!(format!("{family}_total"), name),
            }
        }
        out.push((series.to_string(), value));
    }
    out
}

fn value(samples: &[(String, f64)], series: &str) -> Option<f64> {
    samples.iter().find(|(s, _)| s == series).map(|(_, v)| *v)
}

#[test]
fn prometheus_text_is_well_formed() {
    let text = render(sample(), Format::Prometheus);
    assert!(!text.contains("# EOF"));
    let s = samples(&text, Format::Prometheus);
    assert_eq!(value(&s, "ferrokey_up"), Some(1.0));
    assert_eq!(value(&s, "ferrokey_connected_clients"), Some(3.0));
    assert_eq!(value(&s, "ferrokey_db_keys{db=\"0\"}"), Some(5.0));
    assert_eq!(value(&s, "ferrokey_db_keys{db=\"9\"}"), Some(2.0));
    assert_eq!(value(&s, "ferrokey_db_keys_expiring{db=\"0\"}"), Some(1.0));
    assert_eq!(value(&s, "ferrokey_db_keys_with_volatile_items{db=\"0\"}"), Some(3.0));
    assert_eq!(value(&s, "ferrokey_db_keys_with_volatile_items{db=\"9\"}"), Some(0.0));
    assert_eq!(value(&s, "ferrokey_commands_total{cmd=\"config|get\"}"), Some(4.0));
    assert_eq!(
        value(&s, "ferrokey_commands_duration_seconds_total{cmd=\"config|get\"}"),
        Some(0.0015)
    );
    assert_eq!(value(&s, "ferrokey_commands_rejected_calls_total{cmd=\"config|get\"}"), Some(1.0));
    assert_eq!(value(&s, "ferrokey_errors_total{err=\"ERR\"}"), Some(2.0));
    // Label values are escaped.
    assert_eq!(value(&s, "ferrokey_errors_total{err=\"MY\\\"ODD\\\\CODE\"}"), Some(1.0));
    assert_eq!(value(&s, "ferrokey_replication_role{role=\"primary\"}"), Some(1.0));
    assert!(text.contains("# TYPE ferrokey_commands_processed_total counter\n"));
    // No histogram family while the server keeps none.
    assert!(!text.contains("latency"));
}

#[test]
fn openmetrics_text_is_well_formed() {
    let text = render(sample(), Format::OpenMetrics);
    assert!(text.ends_with("# EOF\n"));
    let s = samples(&text, Format::OpenMetrics);
    assert_eq!(value(&s, "ferrokey_db_keys{db=\"0\"}"), Some(5.0));
    assert_eq!(value(&s, "ferrokey_commands_processed_total"), Some(0.0));
    assert!(text.contains("# TYPE ferrokey_commands_processed counter\n"));
}

#[test]
fn command_histograms_are_exported_as_histograms() {
    let mut snap = sample();
    snap.command_histograms = vec![CommandHistogram {
        name: "get",
        buckets: vec![(0.001, 3), (0.01, 1)],
        sum_secs: 0.25,
        count: 6,
    }];
    for format in [Format::Prometheus, Format::OpenMetrics] {
        let text = render(snap.clone(), format);
        assert!(text.contains("# TYPE ferrokey_command_latency_seconds histogram\n"), "{text}");
        let s = samples(&text, format);
        // The label order differs between the encoders.
        let bucket = |le: &str| {
            let name = "ferrokey_command_latency_seconds_bucket";
            value(&s, &format!("{name}{{cmd=\"get\",le=\"{le}\"}}"))
                .or_else(|| value(&s, &format!("{name}{{le=\"{le}\",cmd=\"get\"}}")))
        };
        assert_eq!(bucket("0.001"), Some(3.0), "{text}");
        assert_eq!(bucket("0.01"), Some(4.0));
        assert_eq!(bucket("+Inf"), Some(6.0));
        assert_eq!(value(&s, "ferrokey_command_latency_seconds_count{cmd=\"get\"}"), Some(6.0));
        assert_eq!(value(&s, "ferrokey_command_latency_seconds_sum{cmd=\"get\"}"), Some(0.25));
    }
}

#[test]
fn accept_header_negotiation() {
    use Format::{OpenMetrics, Prometheus};
    assert_eq!(Format::negotiate(""), Prometheus);
    assert_eq!(Format::negotiate("*/*"), Prometheus);
    assert_eq!(Format::negotiate("text/plain;version=0.0.4"), Prometheus);
    assert_eq!(Format::negotiate("application/openmetrics-text"), OpenMetrics);
    assert_eq!(Format::negotiate(PROMETHEUS_ACCEPT), OpenMetrics);
    assert_eq!(
        Format::negotiate("application/openmetrics-text;q=0.2, text/plain;q=0.9"),
        Prometheus
    );
    assert_eq!(Format::negotiate("Application/OpenMetrics-Text; q=0"), Prometheus);
    assert_eq!(OpenMetrics.content_type(), OPENMETRICS_CONTENT_TYPE);
    assert_eq!(Prometheus.content_type(), "text/plain; version=0.0.4; charset=utf-8");
}
