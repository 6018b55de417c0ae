//! Secrets kept out of the logs: the arguments Valkey replaces with `(redacted)` before a
//! command reaches the slow log or MONITOR (its `redactClientCommandArgument`): passwords
//! of AUTH and HELLO AUTH, every argument of ACL SETUSER and DELUSER and the user of ACL
//! GETUSER, the values of sensitive configs in CONFIG SET, and MIGRATE's `AUTH` password and
//! `AUTH2` user and password.

use std::borrow::Cow;

use bytes::Bytes;

/// The replacement text.
const REDACTED: &[u8] = b"(redacted)";

/// Configs whose values are secrets.
const SENSITIVE_CONFIGS: &[&str] =
    &["requirepass", "masterauth", "masteruser", "tls-key-file-pass", "tls-client-key-file-pass"];

/// `argv` of the command `name` (a table name: `auth`, `acl|setuser`...) as the logs may
/// show it.
pub fn redact<'a>(name: &str, argv: &'a [Bytes]) -> Cow<'a, [Bytes]> {
    let hidden = positions(name, argv);
    if hidden.is_empty() {
        return Cow::Borrowed(argv);
    }
    let mut shown = argv.to_vec();
    for i in hidden {
        shown[i] = Bytes::from_static(REDACTED);
    }
    Cow::Owned(shown)
}

fn positions(name: &str, argv: &[Bytes]) -> Vec<usize> {
    let is = |a: &Bytes, w: &str| a.eq_ignore_ascii_case(w.as_bytes());
    match name {
        // The syntax error of a longer AUTH comes first: nothing is hidden then.
        "auth" if argv.len() <= 3 => (1..argv.len()).collect(),
        "hello" => {
            let mut out = Vec::new();
            let mut i = 2;
            while i < argv.len() {
                let more = argv.len() - 1 - i;
                if is(&argv[i], "AUTH") && more >= 2 {
                    out.extend([i + 1, i + 2]);
                    i += 3;
                } else if is(&argv[i], "SETNAME") && more >= 1 {
                    i += 2;
                } else {
                    break;
                }
            }
            out
        }
        "migrate" => migrate_secrets(argv),
        "acl|setuser" | "acl|deluser" => (2..argv.len()).collect(),
        "acl|getuser" => (2..argv.len().min(3)).collect(),
        "config|set" => (2..argv.len().saturating_sub(1))
            .step_by(2)
            .filter(|&i| SENSITIVE_CONFIGS.iter().any(|c| is(&argv[i], c)))
            .map(|i| i + 1)
            .collect(),
        _ => Vec::new(),
    }
}

/// MIGRATE's credentials, as its option parser meets them: those before a syntax error or
/// `KEYS` (whose keys may be named `AUTH`) are hidden.
fn migrate_secrets(argv: &[Bytes]) -> Vec<usize> {
    let is = |a: &Bytes, w: &str| a.eq_ignore_ascii_case(w.as_bytes());
    let mut out = Vec::new();
    let mut i = 6;
    while i < argv.len() {
        let more = argv.len() - 1 - i;
        if is(&argv[i], "COPY") || is(&argv[i], "REPLACE") {
            i += 1;
        } else if is(&argv[i], "AUTH") && more >= 1 {
            out.push(i + 1);
            i += 2;
        } else if is(&argv[i], "AUTH2") && more >= 2 {
            out.extend([i + 1, i + 2]);
            i += 3;
        } else {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &str) -> Vec<Bytes> {
        words.split(' ').map(|w| Bytes::copy_from_slice(w.as_bytes())).collect()
    }

    fn shown(name: &str, words: &str) -> String {
        let a = argv(words);
        let r = redact(name, &a);
        r.iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn secrets_are_hidden_where_valkey_hides_them() {
        assert_eq!(shown("auth", "AUTH pw"), "AUTH (redacted)");
        assert_eq!(shown("auth", "AUTH u pw"), "AUTH (redacted) (redacted)");
        assert_eq!(shown("auth", "AUTH a b c"), "AUTH a b c");
        assert_eq!(
            shown("hello", "HELLO 3 AUTH u pw SETNAME n"),
            "HELLO 3 AUTH (redacted) (redacted) SETNAME n"
        );
        assert_eq!(
            shown("acl|setuser", "ACL SETUSER u on >p"),
            "ACL SETUSER (redacted) (redacted) (redacted)"
        );
        assert_eq!(shown("acl|getuser", "ACL GETUSER u"), "ACL GETUSER (redacted)");
        assert_eq!(
            shown("config|set", "CONFIG SET maxmemory 1 requirepass x MasterAuth y"),
            "CONFIG SET maxmemory 1 requirepass (redacted) MasterAuth (redacted)"
        );
        assert_eq!(shown("get", "GET k"), "GET k");
        assert_eq!(
            shown("migrate", "MIGRATE h 1 k 0 5 COPY AUTH pw REPLACE"),
            "MIGRATE h 1 k 0 5 COPY AUTH (redacted) REPLACE"
        );
        assert_eq!(
            shown("migrate", "MIGRATE h 1  0 5 AUTH2 u pw KEYS AUTH x"),
            "MIGRATE h 1  0 5 AUTH2 (redacted) (redacted) KEYS AUTH x"
        );
        assert_eq!(shown("migrate", "MIGRATE h 1 k 0 5 AUTH"), "MIGRATE h 1 k 0 5 AUTH");
    }
}
