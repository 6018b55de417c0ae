//! The command table by name, for the lookup every request makes: an open-addressed array,
//! built once at start-up (after `rename-command`), of lower-case names and their entries.
//!
//! A general hash map spends most of a lookup hashing a short name with a keyed hash, after
//! copying and lower-casing it into a buffer. Here the name is hashed as it is read (FNV-1a,
//! with each byte's case bit set so that both cases hash alike), and compared in place with
//! the stored lower-case name, lower-casing each byte on the way; the array is at most a quarter full, so a probe
//! rarely looks past its first slot. The names are fixed before the first lookup and never
//! change, so a client that sends unknown names can only meet the clusters the table was
//! built with: the hash needs no key.

/// Name -> value, case-insensitive, fixed once built.
pub struct NameTable<T: Copy> {
    slots: Vec<Option<(&'static [u8], T)>>,
    mask: usize,
}

/// FNV-1a of `name` with bit 5 of every byte set: a letter and its other case hash alike
/// (so do a few other pairs, such as `@` and `` ` ``, which the comparison tells apart).
#[inline]
fn hash(name: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name {
        h = (h ^ u64::from(b | 0x20)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    // FNV's low bits mix least: fold the high half in before masking.
    h ^ (h >> 32)
}

impl<T: Copy> NameTable<T> {
    /// A table of `entries` (names in lower case; a later duplicate replaces an earlier one).
    pub fn new(entries: impl IntoIterator<Item = (&'static [u8], T)>) -> NameTable<T> {
        let entries: Vec<(&'static [u8], T)> = entries.into_iter().collect();
        let size = (entries.len() * 4).next_power_of_two().max(16);
        let mut t = NameTable { slots: vec![None; size], mask: size - 1 };
        for (name, value) in entries {
            debug_assert!(!name.iter().any(u8::is_ascii_uppercase), "stored names are lower case");
            let mut i = hash(name) as usize & t.mask;
            loop {
                match &mut t.slots[i] {
                    Some((n, v)) if *n == name => {
                        *v = value;
                        break;
                    }
                    Some(_) => i = (i + 1) & t.mask,
                    empty @ None => {
                        *empty = Some((name, value));
                        break;
                    }
                }
            }
        }
        t
    }

    /// The value stored under `name`, in any case.
    #[inline]
    pub fn get(&self, name: &[u8]) -> Option<T> {
        let mut i = hash(name) as usize & self.mask;
        loop {
            match self.slots[i] {
                None => return None,
                Some((n, v)) if equal_lowered(n, name) => return Some(v),
                Some(_) => i = (i + 1) & self.mask,
            }
        }
    }
}

/// Whether `name` lower-cased is `stored` (which is lower case).
#[inline]
fn equal_lowered(stored: &[u8], name: &[u8]) -> bool {
    stored.len() == name.len() && stored.iter().zip(name).all(|(s, n)| *s == n.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::NameTable;

    #[test]
    fn finds_every_name_in_any_case_and_nothing_else() {
        let names: Vec<&'static [u8]> = (0..500)
            .map(|i| &*Box::leak(format!("cmd{i}-x_{}", i * 7).into_bytes().into_boxed_slice()))
            .collect();
        let t = NameTable::new(names.iter().enumerate().map(|(i, n)| (*n, i)));
        for (i, n) in names.iter().enumerate() {
            assert_eq!(t.get(n), Some(i));
            assert_eq!(t.get(&n.to_ascii_uppercase()), Some(i));
            let mut longer = n.to_vec();
            longer.push(b'y');
            assert_eq!(t.get(&longer), None);
            assert_eq!(t.get(&n[..n.len() - 1]), None);
        }
        assert_eq!(t.get(b""), None);
        assert_eq!(t.get(b"\0\r\n"), None);
        // Lower-casing is ASCII's: `[` (0x5B) is not `{` (0x7B).
        let t = NameTable::new([(&b"a{"[..], 1)]);
        assert_eq!(t.get(b"A{"), Some(1));
        assert_eq!(t.get(b"a["), None);
        // `@` and `` ` `` hash alike but are different names.
        let t = NameTable::new([(&b"a@"[..], 1), (&b"a`"[..], 2)]);
        assert_eq!((t.get(b"A@"), t.get(b"a`"), t.get(b"a\x00")), (Some(1), Some(2), None));
    }

    #[test]
    fn a_later_entry_replaces_an_earlier_one() {
        let t = NameTable::new([(&b"get"[..], 1), (&b"set"[..], 2), (&b"get"[..], 3)]);
        assert_eq!((t.get(b"GET"), t.get(b"set")), (Some(3), Some(2)));
    }
}
