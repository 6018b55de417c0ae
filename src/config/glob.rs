//! Glob-style matching with the semantics of Valkey's `stringmatchlen` (util.c), used by
//! CONFIG GET here and by KEYS, SCAN MATCH, PSUBSCRIBE and friends elsewhere.
//!
//! Supported: `*` (any run, including empty), `?` (one byte), `[abc]`, `[^abc]`, `[a-z]`
//! (reversed ranges are swapped), `\x` (literal `x`, also inside brackets). An unterminated
//! `[` class runs to the end of the pattern. Case folding, when asked, is ASCII only.
//!
//! Valkey recurses once per `*` and cuts the search with its `skipLongerMatches` flag. This
//! is the equivalent iterative form: every token other than `*` consumes exactly one byte,
//! so on a mismatch only the most recent `*` needs to grow by one byte. Time is
//! O(pattern * subject) in the worst case, memory O(1), and there is no recursion to blow up
//! (`a*a*a*...b` against a long run of `a` stays linear-times-linear). Valkey's cap of 1000
//! nested `*` is reproduced by counting (see [`STAR_NESTING_MAX`]).

/// Returns whether `s` matches the glob `pattern`.
///
/// As in Valkey, an empty subject only matches an empty pattern: `stringmatchlen` never
/// enters its loop when the subject is empty (the `*` fast paths of KEYS and SCAN hide it).
pub fn glob_match(pattern: &[u8], s: &[u8], nocase: bool) -> bool {
    if s.is_empty() {
        return pattern.is_empty();
    }
    if inner_star_groups(pattern) > STAR_NESTING_MAX {
        return false;
    }
    let mut p = 0;
    let mut i = 0;
    // Position after the last `*` seen, and the subject offset that star currently absorbs to.
    let mut backtrack: Option<(usize, usize)> = None;
    while i < s.len() {
        if pattern.get(p) == Some(&b'*') {
            while pattern.get(p) == Some(&b'*') {
                p += 1;
            }
            if p == pattern.len() {
                return true;
            }
            backtrack = Some((p, i));
            continue;
        }
        if let Some(next_p) = match_one(pattern, p, s[i], nocase) {
            p = next_p;
            i += 1;
            continue;
        }
        match backtrack {
            Some((star_p, star_i)) => {
                p = star_p;
                i = star_i + 1;
                backtrack = Some((star_p, i));
            }
            None => return false,
        }
    }
    while pattern.get(p) == Some(&b'*') {
        p += 1;
    }
    p == pattern.len()
}

/// Valkey gives up (no match) past 1000 nested `*` recursions. It recurses once for each
/// group of `*` that is followed by more pattern, so a pattern with more such groups than
/// this can never match there; the same answer is given here, without the recursion.
const STAR_NESTING_MAX: usize = 1000;

/// Counts the runs of `*` that are followed by another token.
fn inner_star_groups(pattern: &[u8]) -> usize {
    let mut groups = 0;
    let mut p = 0;
    while p < pattern.len() {
        match pattern[p] {
            b'*' => {
                while pattern.get(p) == Some(&b'*') {
                    p += 1;
                }
                if p < pattern.len() {
                    groups += 1;
                }
            }
            b'[' => p = match_class(pattern, p + 1, 0, false).1,
            b'\\' if p + 1 < pattern.len() => p += 2,
            _ => p += 1,
        }
    }
    groups
}

/// Matches the single non-`*` token at `pattern[p..]` against byte `c`. Returns the index of
/// the next token on a match, `None` on a mismatch or at the end of the pattern.
fn match_one(pattern: &[u8], p: usize, c: u8, nocase: bool) -> Option<usize> {
    let token = *pattern.get(p)?;
    match token {
        b'?' => Some(p + 1),
        b'[' => match match_class(pattern, p + 1, c, nocase) {
            (true, next_p) => Some(next_p),
            (false, _) => None,
        },
        b'\\' if p + 1 < pattern.len() => eq(pattern[p + 1], c, nocase).then_some(p + 2),
        _ => eq(token, c, nocase).then_some(p + 1),
    }
}

/// Matches a bracket class whose body starts at `pattern[p..]` (just after `[`). Returns
/// whether `c` is in the class, and the index of the token after the class.
fn match_class(pattern: &[u8], mut p: usize, c: u8, nocase: bool) -> (bool, usize) {
    let negate = pattern.get(p) == Some(&b'^');
    if negate {
        p += 1;
    }
    let mut matched = false;
    loop {
        let rest = pattern.len() - p;
        if rest == 0 {
            // Unterminated class: it ends with the pattern.
            break;
        }
        let b = pattern[p];
        if b == b'\\' && rest >= 2 {
            // An escaped byte inside a class compares exactly, as in Valkey.
            matched |= pattern[p + 1] == c;
            p += 2;
        } else if b == b']' {
            p += 1;
            break;
        } else if rest >= 3 && pattern[p + 1] == b'-' {
            let (mut start, mut end, mut x) = (b, pattern[p + 2], c);
            if start > end {
                std::mem::swap(&mut start, &mut end);
            }
            if nocase {
                start = start.to_ascii_lowercase();
                end = end.to_ascii_lowercase();
                x = x.to_ascii_lowercase();
            }
            matched |= (start..=end).contains(&x);
            p += 3;
        } else {
            matched |= eq(b, c, nocase);
            p += 1;
        }
    }
    (matched != negate, p)
}

fn eq(a: u8, b: u8, nocase: bool) -> bool {
    if nocase {
        a.eq_ignore_ascii_case(&b)
    } else {
        a == b
    }
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    fn m(p: &str, s: &str) -> bool {
        glob_match(p.as_bytes(), s.as_bytes(), false)
    }

    #[test]
    fn literals_and_wildcards() {
        assert!(m("hello", "hello"));
        assert!(!m("hello", "hell"));
        assert!(!m("hell", "hello"));
        assert!(m("h?llo", "hello"));
        assert!(!m("h?llo", "hllo"));
        assert!(m("*", "anything"));
        assert!(m("**", "x"));
        assert!(m("h*o", "ho"));
        assert!(m("h*o", "hello"));
        assert!(!m("h*o", "hellx"));
        assert!(m("*llo", "hello"));
        assert!(m("he*", "he"));
        assert!(m("he**", "he"));
        assert!(m("*a*b*", "xxaxxbxx"));
        assert!(!m("*a*b*", "xxbxxaxx"));
        assert!(m("a*b*c", "abbbcbc"));
        assert!(!m("a*b?c", "abc"));
    }

    #[test]
    fn empty_subject_only_matches_empty_pattern() {
        assert!(m("", ""));
        assert!(!m("*", ""));
        assert!(!m("a", ""));
        assert!(!m("", "a"));
    }

    #[test]
    fn classes() {
        assert!(m("h[ae]llo", "hello"));
        assert!(m("h[ae]llo", "hallo"));
        assert!(!m("h[ae]llo", "hillo"));
        assert!(m("h[^e]llo", "hallo"));
        assert!(!m("h[^e]llo", "hello"));
        assert!(m("h[a-b]llo", "hbllo"));
        assert!(m("h[b-a]llo", "hallo"));
        assert!(!m("h[a-b]llo", "hcllo"));
        // `[]` is an empty class that never matches; `[^]` matches any byte.
        assert!(!m("[]]", "]"));
        assert!(m("[^]]", "x]"));
        assert!(m("x[\\]]", "x]"));
        assert!(m("x[\\-]", "x-"));
        // As in Valkey, `a-]` is a range (from `]` to `a`) and the class is left unterminated.
        assert!(!m("x[a-]", "x-"));
        assert!(m("x[a-]", "xa"));
        assert!(m("x[a-]", "x_"));
        // Unterminated: the class runs to the end of the pattern.
        assert!(m("x[ab", "xb"));
        assert!(!m("x[ab", "xc"));
        assert!(!m("[", "["));
    }

    #[test]
    fn escapes() {
        assert!(m("a\\*b", "a*b"));
        assert!(!m("a\\*b", "axb"));
        assert!(m("a\\?", "a?"));
        assert!(!m("a\\?", "ab"));
        assert!(m("\\[x", "[x"));
        // A trailing backslash is a literal backslash.
        assert!(m("a\\", "a\\"));
    }

    #[test]
    fn case_folding() {
        assert!(glob_match(b"MAXMEMORY*", b"maxmemory-policy", true));
        assert!(!glob_match(b"MAXMEMORY*", b"maxmemory-policy", false));
        assert!(glob_match(b"[A-C]x", b"bx", true));
        assert!(glob_match(b"[a-c]x", b"BX", true));
        assert!(!glob_match(b"[a-c]x", b"BX", false));
        assert!(glob_match(b"[^A]", b"b", true));
        assert!(!glob_match(b"[^A]", b"a", true));
    }

    #[test]
    fn pathological_patterns_stay_fast() {
        let subject = vec![b'a'; 10_000];
        let mut pattern = b"a*".repeat(500);
        pattern.push(b'b');
        assert!(!glob_match(&pattern, &subject, false));
        let mut star_run = b"*a".repeat(1_000);
        star_run.extend_from_slice(b"*");
        assert!(glob_match(&star_run, &subject, false));
        // Past 1000 nested stars Valkey answers "no match"; so do we.
        let mut too_deep = b"*a".repeat(1_001);
        assert!(!glob_match(&too_deep, &subject, false));
        too_deep.extend_from_slice(b"***");
        assert!(!glob_match(&too_deep, &subject, false));
        // Escaped and bracketed stars are not stars.
        let escaped = b"\\*a".repeat(1_001);
        assert!(glob_match(&escaped, &b"*a".repeat(1_001), false));
        let bracketed = b"[*]a".repeat(1_001);
        assert!(glob_match(&bracketed, &b"*a".repeat(1_001), false));
        let mut many_q = b"*?".repeat(5_000);
        many_q.push(b'c');
        assert!(!glob_match(&many_q, &subject, false));
    }

    #[test]
    fn agrees_with_a_reference_matcher() {
        // A small exhaustive cross-check against an obviously correct exponential matcher.
        fn reference(p: &[u8], s: &[u8]) -> bool {
            match p.first() {
                None => s.is_empty(),
                Some(b'*') => (0..=s.len()).any(|k| reference(&p[1..], &s[k..])),
                Some(b'?') => !s.is_empty() && reference(&p[1..], &s[1..]),
                Some(c) => s.first() == Some(c) && reference(&p[1..], &s[1..]),
            }
        }
        let alphabet = [b'a', b'b', b'*', b'?'];
        let mut patterns: Vec<Vec<u8>> = vec![vec![]];
        for _ in 0..4 {
            let next: Vec<Vec<u8>> = patterns
                .iter()
                .flat_map(|p| {
                    alphabet.iter().map(move |c| {
                        let mut q = p.clone();
                        q.push(*c);
                        q
                    })
                })
                .collect();
            patterns.extend(next);
        }
        patterns.sort();
        patterns.dedup();
        let subjects: [&[u8]; 7] = [b"a", b"b", b"ab", b"ba", b"aab", b"abab", b"bbba"];
        for p in &patterns {
            for s in subjects {
                assert_eq!(glob_match(p, s, false), reference(p, s), "{p:?} {s:?}");
            }
        }
    }
}
