//! INFO against Valkey 9.1: the sections that `INFO`, `INFO default`, `all`, `everything`
//! and several names at once print, in order, and every section's field names in order
//! (lines named after data, such as `cmdstat_get` or `db0`, are left out: they follow what
//! ran, not the format).

use super::common::{start, start_valkey, Client};

/// Section headers, in order.
fn headers(text: &str) -> Vec<String> {
    text.lines().filter_map(|l| l.strip_prefix("# ")).map(str::to_string).collect()
}

/// Whether a field is named after data (`cmdstat_get`, `db0`, `slave1`, `listener0`).
fn named_after_data(name: &str) -> bool {
    const BY_PREFIX: &[&str] = &["cmdstat_", "errorstat_", "latency_percentiles_usec_"];
    const NUMBERED: &[&str] = &["db", "slave", "listener"];
    BY_PREFIX.iter().any(|p| name.starts_with(p))
        || NUMBERED.iter().any(|p| {
            name.strip_prefix(p)
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
}

/// `# Section` and field-name lines, in order, without those named after data.
fn layout(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| if l.starts_with('#') { l } else { l.split(':').next().unwrap() })
        .filter(|name| !named_after_data(name))
        .map(str::to_string)
        .collect()
}

#[test]
fn info_sections_and_fields_match_valkey() {
    let ours = start(&[]);
    let theirs = start_valkey(&[]);
    let mut texts = Vec::new();
    for port in [ours.port, theirs.port] {
        let mut c = Client::connect(port);
        // The same commands on each, so that both have the same data-named lines to skip.
        c.cmd(&["SET", "k", "v"]);
        c.cmd(&["GET", "k"]);
        c.cmd(&["NOSUCHCOMMAND"]);
        let mut replies = Vec::new();
        for args in [
            &["INFO"][..],
            &["INFO", "default"],
            &["INFO", "all"],
            &["INFO", "everything"],
            &["INFO", "server", "CPU", "keyspace"],
            &["INFO", "default", "commandstats"],
            &["INFO", "tls"],
            &["INFO", "cluster_info"],
        ] {
            replies.push((args.join(" "), c.cmd(args).as_str()));
        }
        texts.push(replies);
    }
    for ((what, a), (_, b)) in texts[0].iter().zip(&texts[1]) {
        assert_eq!(headers(a), headers(b), "sections of {what} (left: ferrokey, right: valkey)");
    }
    let (ours_all, theirs_all) = (&texts[0][3].1, &texts[1][3].1);
    let (ours_layout, theirs_layout) = (layout(ours_all), layout(theirs_all));
    for (section, theirs_section) in split_sections(&theirs_layout) {
        let ours_section = split_sections(&ours_layout)
            .into_iter()
            .find(|(name, _)| *name == section)
            .map(|(_, fields)| fields)
            .unwrap_or_default();
        assert_eq!(
            ours_section, theirs_section,
            "fields of {section} (left: ferrokey, right: valkey)"
        );
    }
    assert_eq!(ours_layout, theirs_layout);
}

/// The layout split into (header, field names).
fn split_sections(layout: &[String]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for l in layout {
        match l.strip_prefix("# ") {
            Some(h) => out.push((h.to_string(), Vec::new())),
            None => out.last_mut().expect("a field before any section").1.push(l.clone()),
        }
    }
    out
}
