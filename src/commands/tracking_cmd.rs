//! CLIENT TRACKING, CLIENT CACHING, CLIENT GETREDIR and CLIENT TRACKINGINFO: the commands of
//! client-side caching (their table rows are in `client_cmd`).
//!
//! Parsing and validation follow Valkey's order exactly, since several errors can apply to
//! one command line: options left to right (a bad REDIRECT is reported where it stands),
//! then ON/OFF, then the mode checks of ON. The tables and the invalidations themselves
//! are `server::tracking`'s.

use bytes::Bytes;

use crate::commands::args::is;
use crate::commands::error::TrackingError;
use crate::commands::{CmdError, CmdResult, ServerCtx};
use crate::server::tracking::{self, ClientTracking, Enable, Mode};
use crate::types::string::parse_i64;

/// CLIENT TRACKING's options as given, before they are checked against each other.
#[derive(Debug, Default)]
struct Options {
    /// (client id, its slot).
    redirect: Option<(u64, usize)>,
    bcast: bool,
    optin: bool,
    optout: bool,
    noloop: bool,
    prefixes: Vec<Bytes>,
}

/// Parses the options after ON|OFF. A REDIRECT target must exist now (it may go away
/// later: the tracking client then sees `broken_redirect`).
fn parse_options(ctx: &mut ServerCtx, argv: &[Bytes]) -> Result<Options, CmdError> {
    let mut o = Options::default();
    let mut i = 3;
    while i < argv.len() {
        let a = &argv[i];
        let has_value = i + 1 < argv.len();
        if is(a, "REDIRECT") && has_value {
            i += 1;
            if o.redirect.is_some() {
                return Err(CmdError::Tracking(TrackingError::RedirectTwice));
            }
            let id = parse_i64(&argv[i]).ok_or(CmdError::NotInteger)?;
            let slot =
                find_client(ctx, id).ok_or(CmdError::Tracking(TrackingError::NoRedirectTarget))?;
            o.redirect = Some((id as u64, slot));
        } else if is(a, "BCAST") {
            o.bcast = true;
        } else if is(a, "OPTIN") {
            o.optin = true;
        } else if is(a, "OPTOUT") {
            o.optout = true;
        } else if is(a, "NOLOOP") {
            o.noloop = true;
        } else if is(a, "PREFIX") && has_value {
            i += 1;
            o.prefixes.push(argv[i].clone());
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    Ok(o)
}

/// The slot of the client with `id` (the caller included), if connected.
fn find_client(ctx: &mut ServerCtx, id: i64) -> Option<usize> {
    if id <= 0 {
        return None;
    }
    if ctx.client.id == id as u64 {
        return Some(ctx.slot);
    }
    ctx.srv.clients.find_id(id as u64)
}

/// Whether two prefixes would both match some key (one starts the other).
fn overlap(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The checks of CLIENT TRACKING ON against each other and against the client's current
/// tracking state, in Valkey's order; the mode to enable.
fn validate(current: Option<&ClientTracking>, o: &Options) -> Result<Mode, TrackingError> {
    if !o.bcast && !o.prefixes.is_empty() {
        return Err(TrackingError::PrefixNeedsBcast);
    }
    if current.is_some_and(|t| (t.mode == Mode::Bcast) != o.bcast) {
        return Err(TrackingError::BcastSwitch);
    }
    if o.bcast && (o.optin || o.optout) {
        return Err(TrackingError::BcastOptInOut);
    }
    if o.optin && o.optout {
        return Err(TrackingError::OptInAndOptOut);
    }
    let current_mode = current.map(|t| t.mode);
    if (o.optin && current_mode == Some(Mode::OptOut))
        || (o.optout && current_mode == Some(Mode::OptIn))
    {
        return Err(TrackingError::OptSwitch);
    }
    if o.bcast {
        check_prefixes(current.map(|t| &t.prefixes), &o.prefixes)?;
        return Ok(Mode::Bcast);
    }
    Ok(if o.optin {
        Mode::OptIn
    } else if o.optout {
        Mode::OptOut
    } else {
        Mode::Default
    })
}

/// No two prefixes of one client may overlap, or a key would be announced twice.
fn check_prefixes(
    existing: Option<&std::collections::BTreeSet<Bytes>>,
    new: &[Bytes],
) -> Result<(), TrackingError> {
    for (i, p) in new.iter().enumerate() {
        if let Some(old) = existing.into_iter().flatten().find(|old| overlap(old, p)) {
            return Err(TrackingError::PrefixOverlapsExisting {
                prefix: text(p),
                existing: text(old),
            });
        }
        if let Some(other) = new[i + 1..].iter().find(|q| overlap(p, q)) {
            return Err(TrackingError::PrefixOverlapsProvided {
                prefix: text(p),
                other: text(other),
            });
        }
    }
    Ok(())
}

/// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP].
pub fn client_tracking(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let o = parse_options(ctx, argv)?;
    if is(&argv[2], "ON") {
        let current = ctx.srv.tracking.settings(ctx.client.id);
        let mode = validate(current, &o).map_err(CmdError::Tracking)?;
        let e = Enable { mode, noloop: o.noloop, redirect: o.redirect, prefixes: o.prefixes };
        tracking::enable(ctx.srv, ctx.client, ctx.slot, e);
    } else if is(&argv[2], "OFF") {
        tracking::disable(ctx.srv, ctx.client);
    } else {
        return Err(CmdError::Syntax);
    }
    ctx.out.ok();
    Ok(())
}

/// CLIENT CACHING YES|NO: whether the next command's keys are remembered (OPTIN / OPTOUT).
pub fn client_caching(ctx: &mut ServerCtx, argv: &[Bytes]) -> CmdResult {
    let Some(t) = ctx.srv.tracking.settings_mut(ctx.client.id) else {
        return Err(CmdError::Tracking(TrackingError::CachingNotTracking));
    };
    let needed = if is(&argv[2], "YES") {
        (Mode::OptIn, TrackingError::CachingYesNeedsOptIn)
    } else if is(&argv[2], "NO") {
        (Mode::OptOut, TrackingError::CachingNoNeedsOptOut)
    } else {
        return Err(CmdError::Syntax);
    };
    if t.mode != needed.0 {
        return Err(CmdError::Tracking(needed.1));
    }
    t.caching = true;
    ctx.out.ok();
    Ok(())
}

/// CLIENT GETREDIR: the redirect id (0: none), or -1 when tracking is off.
pub fn client_getredir(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    ctx.out.int(tracking::list_redirect(ctx.srv.tracking.settings(ctx.client.id)));
    Ok(())
}

/// CLIENT TRACKINGINFO: a map of `flags` (a set), `redirect` and `prefixes`.
pub fn client_trackinginfo(ctx: &mut ServerCtx, _argv: &[Bytes]) -> CmdResult {
    let t = ctx.srv.tracking.settings(ctx.client.id);
    let mut flags: Vec<&[u8]> = vec![if t.is_some() { b"on" } else { b"off" }];
    if let Some(t) = t {
        match (t.mode, t.caching) {
            (Mode::Default, _) => {}
            (Mode::Bcast, _) => flags.push(b"bcast"),
            (Mode::OptIn, caching) => {
                flags.push(b"optin");
                if caching {
                    flags.push(b"caching-yes");
                }
            }
            (Mode::OptOut, caching) => {
                flags.push(b"optout");
                if caching {
                    flags.push(b"caching-no");
                }
            }
        }
        if t.noloop {
            flags.push(b"noloop");
        }
        if t.broken_redirect {
            flags.push(b"broken_redirect");
        }
    }
    let out = &mut *ctx.out;
    out.map(3);
    out.bulk(b"flags");
    out.set(flags.len());
    for f in flags {
        out.bulk(f);
    }
    out.bulk(b"redirect");
    out.int(tracking::list_redirect(t));
    out.bulk(b"prefixes");
    let prefixes = t.map(|t| &t.prefixes);
    out.array(prefixes.map_or(0, |p| p.len()));
    for p in prefixes.into_iter().flatten() {
        out.bulk(p);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn prefixes_overlap_when_one_starts_the_other() {
        assert!(overlap(b"a", b"ab"));
        assert!(overlap(b"ab", b"a"));
        assert!(overlap(b"", b"x"));
        assert!(overlap(b"a", b"a"));
        assert!(!overlap(b"ab", b"ac"));
        let err = check_prefixes(None, &[b("a"), b("b"), b("bc")]).unwrap_err();
        assert_eq!(
            err,
            TrackingError::PrefixOverlapsProvided { prefix: "b".into(), other: "bc".into() }
        );
        let old: std::collections::BTreeSet<Bytes> = [b("c"), b("x")].into();
        let err = check_prefixes(Some(&old), &[b("y"), b("xy")]).unwrap_err();
        assert_eq!(
            err,
            TrackingError::PrefixOverlapsExisting { prefix: "xy".into(), existing: "x".into() }
        );
        assert!(check_prefixes(Some(&old), &[b("a"), b("b")]).is_ok());
    }

    #[test]
    fn validation_order() {
        let o = |f: &dyn Fn(&mut Options)| {
            let mut o = Options::default();
            f(&mut o);
            o
        };
        let prefix_optin = o(&|o| {
            o.optin = true;
            o.optout = true;
            o.prefixes.push(b("a"));
        });
        assert_eq!(validate(None, &prefix_optin), Err(TrackingError::PrefixNeedsBcast));
        let bcast_both = o(&|o| {
            o.bcast = true;
            o.optin = true;
            o.optout = true;
        });
        assert_eq!(validate(None, &bcast_both), Err(TrackingError::BcastOptInOut));
        let both = o(&|o| {
            o.optin = true;
            o.optout = true;
        });
        assert_eq!(validate(None, &both), Err(TrackingError::OptInAndOptOut));
        let optin = ClientTracking { mode: Mode::OptIn, ..Default::default() };
        let optout = o(&|o| o.optout = true);
        assert_eq!(validate(Some(&optin), &optout), Err(TrackingError::OptSwitch));
        let bcast = o(&|o| o.bcast = true);
        assert_eq!(validate(Some(&optin), &bcast), Err(TrackingError::BcastSwitch));
        assert_eq!(validate(None, &bcast), Ok(Mode::Bcast));
        assert_eq!(validate(Some(&optin), &o(&|_| {})), Ok(Mode::Default));
    }
}
