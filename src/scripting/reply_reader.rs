//! A cursor over one RESP reply that a command wrote for a script: the next value's type
//! byte and header line, an integer header, a bulk body. Every read is checked and gives
//! None at the first missing or malformed byte. Turning a reply into a Lua value
//! (`fastcall`) and into the debugger's words (`ldb::repr`) both read replies with it.

pub struct ReplyReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> ReplyReader<'a> {
    pub fn new(bytes: &'a [u8]) -> ReplyReader<'a> {
        ReplyReader { bytes, at: 0 }
    }

    /// Bytes read so far.
    pub fn at(&self) -> usize {
        self.at
    }

    /// The next value's type byte and the rest of its header line; moves past the line.
    pub fn header(&mut self) -> Option<(u8, &'a [u8])> {
        let kind = *self.bytes.get(self.at)?;
        let rest = self.bytes.get(self.at + 1..)?;
        let end = rest.windows(2).position(|w| w == b"\r\n")?;
        self.at += 1 + end + 2;
        Some((kind, &rest[..end]))
    }

    /// A header line as an integer (a length, a count, an integer reply).
    pub fn int(s: &[u8]) -> Option<i64> {
        std::str::from_utf8(s).ok()?.parse().ok()
    }

    /// The `n` bytes of a bulk body; moves past them and their CRLF.
    pub fn body(&mut self, n: usize) -> Option<&'a [u8]> {
        let b = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n + 2;
        Some(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_bodies_and_short_input() {
        let mut r = ReplyReader::new(b"$3\r\nabc\r\n:7\r\n*");
        let (kind, head) = r.header().unwrap();
        assert_eq!((kind, ReplyReader::int(head)), (b'$', Some(3)));
        assert_eq!(r.body(3), Some(&b"abc"[..]));
        assert_eq!(r.header(), Some((b':', &b"7"[..])));
        assert_eq!(r.at(), 13);
        assert_eq!(r.header(), None, "no CRLF after the type byte");
        assert_eq!(ReplyReader::new(b"$9\r\nab").body(usize::MAX), None);
    }
}
