//! jemalloc's control interface by name, for DEBUG MALLCTL and MALLCTL-STR: read a numeric
//! or string setting, or write one, the way Valkey's `mallctl_int` / `mallctl_string` do.
//!
//! `mallctl` takes untyped pointers and checks only the size of what it is given, so reading
//! a number of the wrong width fails cleanly (`EINVAL`) and is retried narrower, but reading
//! a string is safe only for names whose value really is a `const char *`: an 8-byte number
//! read as a pointer would be dereferenced. Strings are therefore read only for the names
//! jemalloc documents as strings ([`is_string_setting`]); any other name answers `EINVAL`.
//! Errors are errno values (`ENOENT` for an unknown name, `EPERM` for a read-only one...).

use std::ffi::{CStr, CString};
use std::ptr;

use tikv_jemalloc_sys as jemalloc;

/// What a numeric mallctl call gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntReply {
    /// The value read (before the write, when one was made).
    Old(i64),
    /// A write-only setting was written.
    Written,
}

/// Reads the number `name` holds, writing `new` when given (the old value comes back), trying
/// 8-, 4-, 2- and 1-byte widths in turn as Valkey does. Err: the errno.
pub fn int(name: &str, new: Option<i64>) -> Result<IntReply, i32> {
    let name = CString::new(name).map_err(|_| libc::EINVAL)?;
    let mut width = std::mem::size_of::<i64>();
    while width > 0 {
        let mut old: i64 = 0;
        let mut val = new.unwrap_or(0);
        let mut old_len = width;
        let (new_ptr, new_len) = match new {
            Some(_) => (ptr::from_mut(&mut val).cast::<libc::c_void>(), width),
            None => (ptr::null_mut(), 0),
        };
        // SAFETY: `name` is NUL-terminated; `old` and `val` are 8-byte locals of which
        // jemalloc reads or writes at most `width` <= 8 bytes (it checks that the lengths
        // match the setting's size and fails with EINVAL otherwise). On little endian the
        // low bytes come first, so a narrower value lands in the low bits of `old`.
        let rc = unsafe {
            jemalloc::mallctl(
                name.as_ptr(),
                ptr::from_mut(&mut old).cast(),
                &mut old_len,
                new_ptr,
                new_len,
            )
        };
        match rc {
            0 => return Ok(IntReply::Old(old)),
            libc::EPERM if new.is_some() => {
                // SAFETY: as above, with no old value asked for (write-only settings).
                let rc = unsafe {
                    jemalloc::mallctl(
                        name.as_ptr(),
                        ptr::null_mut(),
                        ptr::null_mut(),
                        new_ptr,
                        new_len,
                    )
                };
                match rc {
                    0 => return Ok(IntReply::Written),
                    libc::EINVAL => width /= 2,
                    e => return Err(e),
                }
            }
            libc::EINVAL => width /= 2,
            e => return Err(e),
        }
    }
    Err(libc::EINVAL)
}

/// What a string mallctl call gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StrReply {
    /// The value read (before the write, when one was made).
    Old(Vec<u8>),
    /// A write-only setting was written.
    Written,
}

/// Whether jemalloc documents `name`'s value as a string (`const char *`).
fn is_string_setting(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "version",
        "opt.dss",
        "opt.junk",
        "opt.metadata_thp",
        "opt.percpu_arena",
        "opt.prof_prefix",
        "opt.stats_print_opts",
        "opt.thp",
        "opt.zero_realloc",
        "thread.prof.name",
        "prof.dump",
        "prof.prefix",
    ];
    let arena_dss = name
        .strip_prefix("arena.")
        .and_then(|rest| rest.strip_suffix(".dss"))
        .is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()));
    NAMES.contains(&name) || arena_dss
}

/// Reads the string `name` holds, then writes `new` when given (`VOID`: a write of nothing,
/// for settings that are commands). A write-only setting is written without the read.
pub fn string(name: &str, new: Option<&[u8]>) -> Result<StrReply, i32> {
    if !is_string_setting(name) {
        return Err(libc::EINVAL);
    }
    let cname = CString::new(name).map_err(|_| libc::EINVAL)?;
    let mut old: *const libc::c_char = ptr::null();
    let mut old_len = std::mem::size_of::<*const libc::c_char>();
    // SAFETY: `name` is NUL-terminated and names a `const char *` setting (checked above),
    // so jemalloc writes one pointer into `old`.
    let read = unsafe {
        jemalloc::mallctl(
            cname.as_ptr(),
            ptr::from_mut(&mut old).cast(),
            &mut old_len,
            ptr::null_mut(),
            0,
        )
    };
    let old_value = match read {
        // SAFETY: jemalloc returned a NUL-terminated string it owns (or null); it is copied
        // at once, before any write could replace it.
        0 if !old.is_null() => Some(unsafe { CStr::from_ptr(old) }.to_bytes().to_vec()),
        0 => Some(Vec::new()),
        libc::EPERM if new.is_some() => None,
        e => return Err(e),
    };
    if let Some(v) = new {
        let value = CString::new(v).map_err(|_| libc::EINVAL)?;
        let mut value_ptr = value.as_ptr();
        let (new_ptr, new_len) = if v == b"VOID" {
            (ptr::null_mut(), 0)
        } else {
            (
                ptr::from_mut(&mut value_ptr).cast::<libc::c_void>(),
                std::mem::size_of::<*const libc::c_char>(),
            )
        };
        // SAFETY: `cname` is NUL-terminated; the new value is a pointer to a NUL-terminated
        // string (`value`, alive for the call), as a `const char *` setting takes.
        let wrote = unsafe {
            jemalloc::mallctl(cname.as_ptr(), ptr::null_mut(), ptr::null_mut(), new_ptr, new_len)
        };
        if old_value.is_none() {
            return if wrote == 0 { Ok(StrReply::Written) } else { Err(wrote) };
        }
    }
    Ok(StrReply::Old(old_value.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_numbers_and_strings() {
        assert!(matches!(int("arenas.narenas", None), Ok(IntReply::Old(n)) if n > 0));
        assert!(matches!(int("opt.retain", None), Ok(IntReply::Old(0 | 1))));
        assert_eq!(int("no.such.name", None), Err(libc::ENOENT));
        let Ok(StrReply::Old(v)) = string("version", None) else { panic!("version") };
        assert!(v.first().is_some_and(u8::is_ascii_digit));
        assert_eq!(string("arenas.narenas", None), Err(libc::EINVAL));
        assert!(is_string_setting("arena.12.dss"));
        assert!(!is_string_setting("arena..dss"));
    }

    #[test]
    fn writes_return_the_old_value() {
        let Ok(IntReply::Old(old)) = int("arenas.dirty_decay_ms", None) else { panic!() };
        assert_eq!(int("arenas.dirty_decay_ms", Some(old + 1)), Ok(IntReply::Old(old)));
        assert_eq!(int("arenas.dirty_decay_ms", Some(old)), Ok(IntReply::Old(old + 1)));
    }
}
