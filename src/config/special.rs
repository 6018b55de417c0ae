//! Directives that fit no generic kind: several arguments (`save`, `bind`,
//! `client-output-buffer-limit`, `replicaof`, `oom-score-adj-values`, `shutdown-on-sig*`,
//! `latency-tracking-info-percentiles`), a side effect (`dir` changes the working directory),
//! or a format of their own (`notify-keyspace-events`, `maxmemory-clients`), plus the checks
//! of string directives (file names, host names, addresses, templates). Error texts are
//! Valkey's.

use std::path::PathBuf;

use super::kind::{Arity, Special, Value};
use super::units;
use super::values::{KeyspaceEvents, MaxmemoryClients, ObufClass, ObufLimit, ShutdownFlags};
use super::Config;
use crate::util::quote::repr;
use crate::util::strerror;

/// `CONFIG_BINDADDR_MAX`.
const BIND_ADDRESSES_MAX: usize = 16;

/// A single empty argument means "none": `save ""`, `bind ""`.
fn is_single_empty(args: &[String]) -> bool {
    args.len() == 1 && args[0].is_empty()
}

pub(crate) static SAVE: Special = Special {
    arity: Arity::Multi,
    parse: parse_save,
    apply: |c, v| {
        let Value::Save(points) = v else { unreachable!("save: {v:?}") };
        c.save = points;
        Ok(())
    },
    show: |c| {
        let parts: Vec<String> = c.save.iter().map(|(s, n)| format!("{s} {n}")).collect();
        parts.join(" ")
    },
    rewrite: |c| {
        if c.save.is_empty() {
            return vec!["\"\"".to_string()];
        }
        c.save.iter().map(|(secs, changes)| format!("{secs} {changes}")).collect()
    },
};

/// Save points come in pairs: seconds >= 1, changes >= 0 (`setConfigSaveOption`).
fn parse_save(args: &[String]) -> Result<Value, String> {
    let args = if is_single_empty(args) { &[] } else { args };
    let invalid = || "Invalid save parameters".to_string();
    if !args.len().is_multiple_of(2) {
        return Err(invalid());
    }
    let mut points = Vec::with_capacity(args.len() / 2);
    for pair in args.chunks(2) {
        let secs = units::parse_strtoll(&pair[0]).filter(|s| *s >= 1).ok_or_else(invalid)?;
        let changes = units::parse_strtoll(&pair[1]).filter(|n| *n >= 0).ok_or_else(invalid)?;
        points.push((secs as u64, changes as u64));
    }
    Ok(Value::Save(points))
}

pub(crate) static BIND: Special = Special {
    arity: Arity::Multi,
    parse: |args| {
        if args.len() > BIND_ADDRESSES_MAX {
            return Err("Too many bind addresses specified.".to_string());
        }
        let addresses = if is_single_empty(args) { Vec::new() } else { args.to_vec() };
        Ok(Value::Bind(addresses))
    },
    apply: |c, v| {
        let Value::Bind(addresses) = v else { unreachable!("bind: {v:?}") };
        c.bind = addresses;
        Ok(())
    },
    show: |c| c.bind.join(" "),
    rewrite: |c| {
        if c.bind.is_empty() {
            vec!["\"\"".to_string()]
        } else {
            vec![c.bind.join(" ")]
        }
    },
};

pub(crate) static DIR: Special = Special {
    arity: Arity::Single,
    parse: |args| match args[0].as_str() {
        "" => Err("dir can't be empty".to_string()),
        dir => Ok(Value::Dir(PathBuf::from(dir))),
    },
    apply: |c, v| {
        let Value::Dir(path) = v else { unreachable!("dir: {v:?}") };
        change_dir(c, path)
    },
    show: |c| c.dir.to_string_lossy().into_owned(),
    rewrite: |c| vec![repr(c.dir.to_string_lossy().as_bytes())],
};

/// Changes the process working directory, as Valkey does when `dir` is set, and records the
/// absolute result. The error text is the bare `strerror` text, as Valkey replies it.
pub(crate) fn change_dir(config: &mut Config, path: PathBuf) -> Result<(), String> {
    std::env::set_current_dir(&path).map_err(|e| strerror(&e))?;
    config.dir = std::env::current_dir().unwrap_or(path);
    Ok(())
}

pub(crate) static MAXMEMORY_CLIENTS: Special = Special {
    arity: Arity::Single,
    parse: |args| {
        let arg = &args[0];
        let percent = match units::parse_memory(arg) {
            Some(bytes) => match i64::try_from(bytes) {
                Ok(_) => return Ok(Value::MemOrPercent(MaxmemoryClients::Bytes(bytes))),
                // Valkey holds the value in a signed integer where a negative number stands
                // for a percentage, so a byte count above i64::MAX wraps into one
                // (18446744073709551615 is 1%).
                Err(_) => Some((bytes as i64).unsigned_abs()),
            },
            None => units::parse_percent(arg).map(i64::unsigned_abs),
        };
        match percent {
            Some(p) if p > 100 => Err("percentage argument must be less or equal to 100".into()),
            Some(p) => Ok(Value::MemOrPercent(MaxmemoryClients::Percent(p as u32))),
            None => Err("argument must be a memory or percent value".to_string()),
        }
    },
    apply: |c, v| {
        let Value::MemOrPercent(limit) = v else { unreachable!("maxmemory-clients: {v:?}") };
        c.maxmemory_clients = limit;
        Ok(())
    },
    show: |c| match c.maxmemory_clients {
        MaxmemoryClients::Bytes(bytes) => bytes.to_string(),
        MaxmemoryClients::Percent(p) => format!("{p}%"),
    },
    rewrite: |c| {
        vec![match c.maxmemory_clients {
            MaxmemoryClients::Bytes(bytes) => units::format_memory(bytes),
            MaxmemoryClients::Percent(p) => format!("{p}%"),
        }]
    },
};

pub(crate) static NOTIFY_KEYSPACE_EVENTS: Special = Special {
    arity: Arity::Single,
    parse: |args| match KeyspaceEvents::parse(&args[0]) {
        Some(events) => Ok(Value::Events(events)),
        None => Err("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".to_string()),
    },
    apply: |c, v| {
        let Value::Events(events) = v else { unreachable!("notify-keyspace-events: {v:?}") };
        c.notify_keyspace_events = events;
        Ok(())
    },
    show: |c| c.notify_keyspace_events.to_classes(),
    rewrite: |c| vec![repr(c.notify_keyspace_events.to_classes().as_bytes())],
};

pub(crate) static CLIENT_OUTPUT_BUFFER_LIMIT: Special = Special {
    arity: Arity::Multi,
    parse: parse_obuf,
    apply: |c, v| {
        let Value::Obuf(limits) = v else { unreachable!("client-output-buffer-limit: {v:?}") };
        for (class, limit) in limits {
            c.client_output_buffer_limit[class as usize] = limit;
        }
        Ok(())
    },
    show: |c| {
        let parts: Vec<String> = ObufClass::ALL
            .iter()
            .map(|class| {
                let l = c.obuf_limit(*class);
                format!("{} {} {} {}", class.name(), l.hard_bytes, l.soft_bytes, l.soft_secs)
            })
            .collect();
        parts.join(" ")
    },
    rewrite: |c| {
        ObufClass::ALL
            .iter()
            .map(|class| {
                let l = c.obuf_limit(*class);
                let (hard, soft) =
                    (units::format_memory(l.hard_bytes), units::format_memory(l.soft_bytes));
                format!("{} {hard} {soft} {}", class.name(), l.soft_secs)
            })
            .collect()
    },
};

/// `<class> <hard> <soft> <soft_seconds>` groups; the classes listed are the only ones set.
fn parse_obuf(args: &[String]) -> Result<Value, String> {
    if !args.len().is_multiple_of(4) {
        return Err("Wrong number of arguments in buffer limit configuration.".to_string());
    }
    let bad_value = || "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
    let mut limits = Vec::with_capacity(args.len() / 4);
    for group in args.chunks(4) {
        let class = ObufClass::from_name(&group[0])
            .ok_or("Invalid client class specified in buffer limit configuration.")?;
        let hard_bytes = units::parse_memory(&group[1]).ok_or_else(bad_value)?;
        let soft_bytes = units::parse_memory(&group[2]).ok_or_else(bad_value)?;
        let soft_secs =
            units::parse_strtoll(&group[3]).filter(|s| *s >= 0).ok_or_else(bad_value)?;
        limits.push((class, ObufLimit { hard_bytes, soft_bytes, soft_secs: soft_secs as u64 }));
    }
    Ok(Value::Obuf(limits))
}

/// `pathIsBaseName`: no directory separator of either kind.
fn is_base_name(name: &str) -> bool {
    !name.contains('/') && !name.contains('\\')
}

pub(crate) fn check_dbfilename(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        Err("dbfilename can't be empty")
    } else if !is_base_name(name) {
        Err("dbfilename can't be a path, just a filename")
    } else {
        Ok(())
    }
}

pub(crate) fn check_appendfilename(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        Err("appendfilename can't be empty")
    } else if !is_base_name(name) {
        Err("appendfilename can't be a path, just a filename")
    } else {
        Ok(())
    }
}

pub(crate) fn check_appenddirname(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        Err("appenddirname can't be empty")
    } else if !is_base_name(name) {
        Err("appenddirname can't be a path, just a dirname")
    } else {
        Ok(())
    }
}

/// A list of words shown space-separated, for directives whose words are kept as given.
fn words_show(words: &[String]) -> String {
    words.join(" ")
}

pub(crate) static RDMA_BIND: Special = Special {
    arity: Arity::Multi,
    parse: |args| {
        if args.len() > BIND_ADDRESSES_MAX {
            return Err("Too many bind addresses specified.".to_string());
        }
        let addresses = if is_single_empty(args) { Vec::new() } else { args.to_vec() };
        Ok(Value::Words(addresses))
    },
    apply: |c, v| {
        let Value::Words(addresses) = v else { unreachable!("rdma-bind: {v:?}") };
        c.network.rdma_bind = addresses;
        Ok(())
    },
    show: |c| words_show(&c.network.rdma_bind),
    rewrite: |c| {
        vec![words_show(&c.network.rdma_bind)].into_iter().map(|w| quote_empty(&w)).collect()
    },
};

/// An empty argument list is written `""` so that the line still parses.
fn quote_empty(text: &str) -> String {
    if text.is_empty() {
        "\"\"".to_string()
    } else {
        text.to_string()
    }
}

/// `replicaof <host> <port>`, or `replicaof no one` (and an empty value) for none.
pub(crate) static REPLICAOF: Special = Special {
    arity: Arity::Multi,
    parse: |args| match args {
        [] => Ok(Value::Words(Vec::new())),
        [one] if one.is_empty() => Ok(Value::Words(Vec::new())),
        [no, one] if no.eq_ignore_ascii_case("no") && one.eq_ignore_ascii_case("one") => {
            Ok(Value::Words(Vec::new()))
        }
        [host, port] => Ok(Value::Words(vec![host.clone(), port.clone()])),
        _ => Err("wrong number of arguments".to_string()),
    },
    apply: |c, v| {
        let Value::Words(words) = v else { unreachable!("replicaof: {v:?}") };
        c.replication.replicaof = words.join(" ");
        Ok(())
    },
    show: |c| c.replication.replicaof.clone(),
    rewrite: |c| vec![quote_empty(&c.replication.replicaof)],
};

/// Three `oom_score_adj` values (primary, replica, background child), each in -2000..=2000.
pub(crate) static OOM_SCORE_ADJ_VALUES: Special = Special {
    arity: Arity::Multi,
    parse: |args| {
        let [a, b, c] = args else { return Err("wrong number of arguments".to_string()) };
        let mut values = [0i32; 3];
        for (slot, arg) in values.iter_mut().zip([a, b, c]) {
            *slot = units::parse_strict_i64(arg)
                .filter(|v| (-2000..=2000).contains(v))
                .ok_or("Invalid oom-score-adj-values, elements must be between -2000 and 2000.")?
                as i32;
        }
        Ok(Value::Oom(values))
    },
    apply: |c, v| {
        let Value::Oom(values) = v else { unreachable!("oom-score-adj-values: {v:?}") };
        c.general.oom_score_adj_values = values;
        Ok(())
    },
    show: |c| {
        let [a, b, d] = c.general.oom_score_adj_values;
        format!("{a} {b} {d}")
    },
    rewrite: |c| {
        let [a, b, d] = c.general.oom_score_adj_values;
        vec![format!("{a} {b} {d}")]
    },
};

fn parse_shutdown_flags(args: &[String]) -> Result<Value, String> {
    let args = if is_single_empty(args) { &[] } else { args };
    if args.is_empty() {
        return Err("wrong number of arguments".to_string());
    }
    ShutdownFlags::parse(args).map(Value::Shutdown).ok_or_else(|| {
        format!("argument(s) must be one of the following: {}", ShutdownFlags::NAMES.join(", "))
    })
}

pub(crate) static SHUTDOWN_ON_SIGNAL_INT: Special = Special {
    arity: Arity::Multi,
    parse: parse_shutdown_flags,
    apply: |c, v| {
        let Value::Shutdown(flags) = v else { unreachable!("shutdown-on-sigint: {v:?}") };
        c.general.shutdown_on_sigint = flags;
        Ok(())
    },
    show: |c| c.general.shutdown_on_sigint.to_names(),
    rewrite: |c| vec![c.general.shutdown_on_sigint.to_names()],
};

pub(crate) static SHUTDOWN_ON_SIGNAL_TERM: Special = Special {
    arity: Arity::Multi,
    parse: parse_shutdown_flags,
    apply: |c, v| {
        let Value::Shutdown(flags) = v else { unreachable!("shutdown-on-sigterm: {v:?}") };
        c.general.shutdown_on_sigterm = flags;
        Ok(())
    },
    show: |c| c.general.shutdown_on_sigterm.to_names(),
    rewrite: |c| vec![c.general.shutdown_on_sigterm.to_names()],
};

/// Percentiles between 0 and 100; an empty list is allowed.
pub(crate) static LATENCY_PERCENTILES: Special = Special {
    arity: Arity::Multi,
    parse: |args| {
        let args = if is_single_empty(args) { &[] } else { args };
        let mut percentiles = Vec::with_capacity(args.len());
        for arg in args {
            let p: f64 = arg
                .parse()
                .ok()
                .filter(|p: &f64| p.is_finite())
                .ok_or("Invalid latency-tracking-info-percentiles parameters")?;
            if !(0.0..=100.0).contains(&p) {
                return Err("latency-tracking-info-percentiles parameters should sit between \
                            [0.0,100.0]"
                    .to_string());
            }
            percentiles.push(p);
        }
        Ok(Value::Percentiles(percentiles))
    },
    apply: |c, v| {
        let Value::Percentiles(p) = v else { unreachable!("latency-tracking-info-percentiles") };
        c.general.latency_tracking_info_percentiles = p;
        Ok(())
    },
    show: |c| show_percentiles(&c.general.latency_tracking_info_percentiles),
    rewrite: |c| vec![quote_empty(&show_percentiles(&c.general.latency_tracking_info_percentiles))],
};

fn show_percentiles(percentiles: &[f64]) -> String {
    let parts: Vec<String> = percentiles.iter().map(|p| p.to_string()).collect();
    parts.join(" ")
}

/// `slot-migration-max-failover-repl-bytes`: a memory value, or -1 (a negative value is a
/// plain number: `-1kb` is not a memory value).
pub(crate) static SIGNED_MEMORY_SLOT_MIGRATION: Special = Special {
    arity: Arity::Single,
    parse: |args| {
        let arg = &args[0];
        let v = match arg.strip_prefix('-') {
            Some(_) => units::parse_strict_i64(arg),
            None => units::parse_memory(arg).and_then(|v| i64::try_from(v).ok()),
        };
        match v {
            Some(v) if v >= -1 => Ok(Value::Int(v)),
            Some(_) => Err(format!("argument must be between -1 and {} inclusive", i64::MAX)),
            None => Err("argument must be a memory value".to_string()),
        }
    },
    apply: |c, v| {
        let Value::Int(v) = v else { unreachable!("slot-migration-max-failover-repl-bytes") };
        c.cluster.slot_migration_max_failover_repl_bytes = v;
        Ok(())
    },
    show: |c| c.cluster.slot_migration_max_failover_repl_bytes.to_string(),
    rewrite: |c| match u64::try_from(c.cluster.slot_migration_max_failover_repl_bytes) {
        Ok(bytes) => vec![units::format_memory(bytes)],
        Err(_) => vec![c.cluster.slot_migration_max_failover_repl_bytes.to_string()],
    },
};

/// The process-title variables Valkey knows.
const PROC_TITLE_VARIABLES: &[&str] = &[
    "{title}",
    "{listen-addr}",
    "{server-mode}",
    "{port}",
    "{tls-port}",
    "{unixsocket}",
    "{config-file}",
];

/// A non-empty template whose `{...}` are known variables.
pub(crate) fn check_proc_title_template(template: &str) -> Result<(), &'static str> {
    const INVALID: &str = "template format is invalid or contains unknown variables";
    if template.is_empty() {
        return Err(INVALID);
    }
    let mut rest = template;
    while let Some(open) = rest.find(['{', '}']) {
        let tail = &rest[open..];
        let variable = PROC_TITLE_VARIABLES.iter().find(|v| tail.starts_with(*v)).ok_or(INVALID)?;
        rest = &tail[variable.len()..];
    }
    Ok(())
}

/// ferrokey compares strings byte by byte, which is the C locale's collation: only the
/// locales that collate that way are accepted (empty means the environment's, as Valkey).
pub(crate) fn check_locale(name: &str) -> Result<(), &'static str> {
    match name {
        "" | "C" | "POSIX" | "C.UTF-8" | "C.utf8" => Ok(()),
        _ => Err("Invalid locale name"),
    }
}

pub(crate) fn check_hostname(name: &str) -> Result<(), &'static str> {
    if name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') {
        Ok(())
    } else {
        Err("Hostnames may only contain alphanumeric characters, hyphens or dots")
    }
}

/// Printable ASCII without blanks.
fn is_printable_word(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_graphic())
}

pub(crate) fn check_human_nodename(name: &str) -> Result<(), &'static str> {
    if is_printable_word(name) {
        Ok(())
    } else {
        Err("Announced human node name contained invalid character")
    }
}

pub(crate) fn check_announce_ip(ip: &str) -> Result<(), &'static str> {
    if is_printable_word(ip) {
        Ok(())
    } else {
        Err("cluster-announce-ip contains invalid character")
    }
}

pub(crate) fn check_ipv4(ip: &str) -> Result<(), &'static str> {
    match ip.is_empty() || ip.parse::<std::net::Ipv4Addr>().is_ok() {
        true => Ok(()),
        false => Err("Invalid IPv4 address"),
    }
}

pub(crate) fn check_ipv6(ip: &str) -> Result<(), &'static str> {
    match ip.is_empty() || ip.parse::<std::net::Ipv6Addr>().is_ok() {
        true => Ok(()),
        false => Err("Invalid IPv6 address"),
    }
}
