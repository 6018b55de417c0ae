//! Directives that fit no generic kind: several arguments (`save`, `bind`,
//! `client-output-buffer-limit`), a side effect (`dir` changes the working directory), or a
//! format of their own (`notify-keyspace-events`, `maxmemory-clients`), plus the file-name
//! checks of `dbfilename`, `appendfilename` and `appenddirname`. Error texts are Valkey's.

use std::path::PathBuf;

use super::file::repr;
use super::kind::{Arity, Special, Value};
use super::units;
use super::values::{KeyspaceEvents, MaxmemoryClients, ObufClass, ObufLimit};
use super::Config;
use crate::server::log::strerror;

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
