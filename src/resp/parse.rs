//! The RESP request parser: turns the front of a client's query buffer into argv, one command
//! at a time, for both request forms a Valkey server accepts (multibulk `*<n>\r\n$<len>\r\n...`
//! and inline `GET key\r\n`). It owns the protocol limits checked while parsing and the exact
//! protocol error texts. It must not touch the keyspace, know any command, or do I/O: the
//! connection reads bytes into a `BytesMut`, hands it here, and gets back `Bytes` slices of that
//! same buffer (no copy) or a `ProtoError` to reply with before it closes the socket.
//!
//! The behaviour follows Valkey's `processInlineBuffer` / `processMultibulkBuffer` closely,
//! quirks included, so that a client cannot tell the servers apart:
//! - a header line (`*<n>` or `$<len>`) ends at the first `\r`; the byte after it is skipped
//!   without being checked, and so are the two bytes after a bulk payload;
//! - an inline line ends at the first `\n`, but Valkey looks for it with `strchr`, so a NUL
//!   byte before the newline hides it: such a line waits for more input until the 64 KiB
//!   inline limit turns it into "too big inline request";
//! - integers follow `string2ll`: no sign other than a leading `-`, no leading zeros (`01`,
//!   `-0`), no spaces, no overflow.
//!
//! Parsing is incremental: a multibulk command that arrives over many reads is parsed once,
//! argument by argument; the parser keeps the offsets of the completed arguments and the
//! position it reached, and the buffer is split (and frozen) once per complete command.

use bytes::{Buf, Bytes, BytesMut};

use crate::util::quote;

/// PROTO_INLINE_MAX_SIZE: the longest inline request, or `*`/`$` header line, that may be
/// pending without its end-of-line before the request is refused.
const LINE_PENDING_BYTES_MAX: usize = 64 * 1024;
/// Before authentication Valkey refuses multibulk counts above this...
const UNAUTH_MULTIBULK_COUNT_MAX: i64 = 10;
/// ...and bulk lengths above this.
const UNAUTH_BULK_LEN_MAX: usize = 16 * 1024;
/// The most argument slots reserved up front for a multibulk count read from the wire; more
/// grow as the arguments really arrive. Also the most slots kept between commands.
const ARGV_PREALLOC_MAX: usize = 1024;

/// Limits checked before anything is allocated for a length read from the wire.
#[derive(Clone, Copy, Debug)]
pub struct ParseLimits {
    /// proto-max-bulk-len (default 512 MiB). Valkey does not apply it to its primary's link;
    /// the caller passes `usize::MAX` for such a connection.
    pub bulk_len_max: usize,
    /// When false, the client is not authenticated yet: multibulk count > 10 and bulk length
    /// > 16384 are refused, as Valkey does.
    pub authenticated: bool,
}

/// A protocol error: the connection replies with `message()` and is then closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProtoError {
    TooBigInlineRequest,
    UnbalancedQuotes,
    TooBigMbulkCountString,
    InvalidMultibulkLength,
    TooBigBulkCountString,
    /// The byte found where a bulk header's `$` should be.
    ExpectedDollar(u8),
    InvalidBulkLength,
    UnauthenticatedMultibulkLength,
    UnauthenticatedBulkLength,
    /// A bulk's payload not followed by "\r\n".
    InvalidCrlf,
}

impl ProtoError {
    /// The exact Valkey error text without the leading '-', e.g.
    /// "ERR Protocol error: invalid multibulk length".
    pub fn message(&self) -> Vec<u8> {
        let text = match self {
            ProtoError::TooBigInlineRequest => "too big inline request",
            ProtoError::UnbalancedQuotes => "unbalanced quotes in request",
            ProtoError::TooBigMbulkCountString => "too big mbulk count string",
            ProtoError::InvalidMultibulkLength => "invalid multibulk length",
            ProtoError::TooBigBulkCountString => "too big bulk count string",
            ProtoError::ExpectedDollar(byte) => return expected_dollar_message(*byte),
            ProtoError::InvalidBulkLength => "invalid bulk length",
            ProtoError::UnauthenticatedMultibulkLength => "unauthenticated multibulk length",
            ProtoError::UnauthenticatedBulkLength => "unauthenticated bulk length",
            ProtoError::InvalidCrlf => "invalid CRLF in request",
        };
        format!("ERR Protocol error: {text}").into_bytes()
    }
}

/// Valkey formats this one with `%c` into a C string and then maps `\r` and `\n` to spaces so
/// the reply stays on one line; a NUL ends the C string right there. Any other byte is sent
/// raw, UTF-8 or not.
fn expected_dollar_message(byte: u8) -> Vec<u8> {
    const PREFIX: &[u8] = b"ERR Protocol error: expected '$', got '";
    match byte {
        0 => PREFIX.to_vec(),
        b'\r' | b'\n' => [PREFIX, b" '"].concat(),
        _ => [PREFIX, &[byte], b"'"].concat(),
    }
}

/// Incremental parser state for one connection (so a large bulk arriving in many reads is not
/// rescanned from the start each time).
///
/// All offsets are from the front of the query buffer, which holds the unconsumed start of the
/// current command: between two calls the connection may only append to the buffer.
#[derive(Default, Debug)]
pub struct Parser {
    /// Arguments of the current multibulk not parsed yet; 0 between commands (and while an
    /// inline request is pending), so 0 means "the next byte starts a command".
    args_left: usize,
    /// Where the next unparsed part of the current multibulk starts.
    pos: usize,
    /// The length of the bulk whose `$<len>` header was parsed but whose payload has not fully
    /// arrived; its payload starts at `pos`.
    bulk_len: Option<usize>,
    /// (start, len) of each complete argument of the current multibulk.
    arg_spans: Vec<(usize, usize)>,
    /// How far the pending line (inline request or header) was searched without finding its
    /// end, so that a line arriving byte by byte is not searched from its start every time.
    /// 0 when no line is pending.
    line_scanned: usize,
    /// The buffer length when `parse` last returned, for `bytes_needed_hint`.
    buf_len_seen: usize,
}

/// What one step at the start of a command achieved.
enum Step {
    /// More bytes are needed.
    Incomplete,
    /// An empty command (empty inline line, `*0`, `*-1`) was consumed.
    Skipped,
    /// An inline command was consumed.
    Inline(Vec<Bytes>),
    /// A multibulk header with at least one argument was read; the arguments follow.
    MultibulkStarted,
}

impl Parser {
    pub fn new() -> Parser {
        Parser::default()
    }

    /// Try to parse one complete command from the front of `buf`.
    ///
    /// - `Ok(Some(argv))`: a command was consumed from `buf`; `argv` is never empty (empty
    ///   inline lines and `*0`/`*-1` multibulks are skipped silently, as Valkey does, and
    ///   parsing continues).
    /// - `Ok(None)`: more bytes are needed; nothing was consumed that would be lost, and the
    ///   parser remembers its progress. Append to `buf` and call again.
    /// - `Err(e)`: protocol error; the connection replies `e.message()` and closes. The parser
    ///   is reset, and what the buffer holds is no longer meaningful.
    ///
    /// The elements of `argv` are zero-copy slices of the consumed part of `buf`, except inline
    /// arguments that had quotes, which are built anew.
    pub fn parse(
        &mut self,
        buf: &mut BytesMut,
        limits: &ParseLimits,
    ) -> Result<Option<Vec<Bytes>>, ProtoError> {
        assert!(
            buf.len() >= self.pos.max(self.line_scanned),
            "query buffer shrank under a partly parsed command"
        );
        let result = self.parse_command(buf, limits);
        if result.is_err() {
            self.reset();
        }
        self.buf_len_seen = buf.len();
        result
    }

    /// Bytes the parser knows it still needs before the current command can complete (0 if
    /// unknown): the connection uses it to `reserve` the query buffer once for a big bulk
    /// string instead of growing it step by step.
    pub fn bytes_needed_hint(&self) -> usize {
        match self.bulk_len {
            // The payload plus its trailing "\r\n".
            Some(len) => {
                self.pos.saturating_add(len).saturating_add(2).saturating_sub(self.buf_len_seen)
            }
            None => 0,
        }
    }

    fn reset(&mut self) {
        self.args_left = 0;
        self.pos = 0;
        self.bulk_len = None;
        self.arg_spans.clear();
        self.line_scanned = 0;
    }

    fn parse_command(
        &mut self,
        buf: &mut BytesMut,
        limits: &ParseLimits,
    ) -> Result<Option<Vec<Bytes>>, ProtoError> {
        // Each skipped command consumes at least one byte, so this ends within buf.len() turns.
        while self.args_left == 0 {
            let step = match buf.first() {
                None => return Ok(None),
                Some(b'*') => self.multibulk_header(buf, limits)?,
                Some(_) => self.inline_command(buf)?,
            };
            match step {
                Step::Incomplete => return Ok(None),
                Step::Skipped => {}
                Step::Inline(argv) => return Ok(Some(argv)),
                Step::MultibulkStarted => break,
            }
        }
        self.multibulk_args(buf, limits)
    }

    /// Reads `*<n>\r\n` at the front of `buf`.
    fn multibulk_header(
        &mut self,
        buf: &mut BytesMut,
        limits: &ParseLimits,
    ) -> Result<Step, ProtoError> {
        debug_assert!(self.pos == 0 && self.arg_spans.is_empty());
        let (count, cr) = match plain_header(buf, 0, b'*') {
            Some((count, cr)) => {
                self.line_scanned = 0;
                (Some(count), cr)
            }
            None => {
                let Some(cr) = self.header_line_end(buf, ProtoError::TooBigMbulkCountString)?
                else {
                    return Ok(Step::Incomplete);
                };
                (parse_i64_strict(&buf[1..cr]), cr)
            }
        };
        if buf[cr + 1] != b'\n' {
            return Err(ProtoError::InvalidCrlf);
        }
        let count = count
            .filter(|&count| count <= i64::from(i32::MAX))
            .ok_or(ProtoError::InvalidMultibulkLength)?;
        if count > UNAUTH_MULTIBULK_COUNT_MAX && !limits.authenticated {
            return Err(ProtoError::UnauthenticatedMultibulkLength);
        }
        if count <= 0 {
            buf.advance(cr + 2);
            return Ok(Step::Skipped);
        }
        // 0 < count <= i32::MAX, so this fits a usize on every target we build for.
        let count = usize::try_from(count).expect("count fits usize");
        self.args_left = count;
        self.pos = cr + 2;
        self.arg_spans.reserve(count.min(ARGV_PREALLOC_MAX));
        Ok(Step::MultibulkStarted)
    }

    /// Parses the arguments of the current multibulk, from where the last call stopped.
    fn multibulk_args(
        &mut self,
        buf: &mut BytesMut,
        limits: &ParseLimits,
    ) -> Result<Option<Vec<Bytes>>, ProtoError> {
        while self.args_left > 0 {
            let bulk_len = match self.bulk_len.take() {
                Some(len) => len,
                None => match self.bulk_header(buf, limits)? {
                    Some(len) => len,
                    None => return Ok(None),
                },
            };
            // The payload and the "\r\n" after it (Valkey 9 checks those two bytes).
            let end = self.pos.saturating_add(bulk_len);
            let Some(&[cr, lf]) = buf.get(end..end.saturating_add(2)) else {
                self.bulk_len = Some(bulk_len);
                return Ok(None);
            };
            if cr != b'\r' || lf != b'\n' {
                return Err(ProtoError::InvalidCrlf);
            }
            self.arg_spans.push((self.pos, bulk_len));
            self.pos += bulk_len + 2;
            self.args_left -= 1;
        }
        Ok(Some(self.finish_multibulk(buf)))
    }

    /// Reads `$<len>\r\n` at `pos`; on success `pos` moves to the payload.
    fn bulk_header(
        &mut self,
        buf: &[u8],
        limits: &ParseLimits,
    ) -> Result<Option<usize>, ProtoError> {
        let (len, cr) = match plain_header(buf, self.pos, b'$') {
            Some((len, cr)) => {
                self.line_scanned = 0;
                (Some(len), cr)
            }
            None => {
                let Some(cr) = self.header_line_end(buf, ProtoError::TooBigBulkCountString)? else {
                    return Ok(None);
                };
                // cr >= pos; when cr == pos the first byte is '\r', which fails this check.
                let first = buf[self.pos];
                if first != b'$' {
                    return Err(ProtoError::ExpectedDollar(first));
                }
                (parse_i64_strict(&buf[self.pos + 1..cr]), cr)
            }
        };
        if buf[cr + 1] != b'\n' {
            return Err(ProtoError::InvalidCrlf);
        }
        let len = len
            .and_then(|len| usize::try_from(len).ok())
            .filter(|&len| len <= limits.bulk_len_max)
            .ok_or(ProtoError::InvalidBulkLength)?;
        if len > UNAUTH_BULK_LEN_MAX && !limits.authenticated {
            return Err(ProtoError::UnauthenticatedBulkLength);
        }
        self.pos = cr + 2;
        Ok(Some(len))
    }

    /// Finds the `\r` that ends the header line starting at `pos`, once the byte after it
    /// (which the caller checks is `\n`, as Valkey 9 does) has arrived too. Like Valkey, the search
    /// runs over the whole pending buffer and `too_big` is returned only when no `\r` is found
    /// and more than 64 KiB are pending.
    fn header_line_end(
        &mut self,
        buf: &[u8],
        too_big: ProtoError,
    ) -> Result<Option<usize>, ProtoError> {
        let from = self.line_scanned.max(self.pos);
        match buf[from..].iter().position(|&byte| byte == b'\r') {
            Some(offset) if from + offset + 1 < buf.len() => {
                self.line_scanned = 0;
                Ok(Some(from + offset))
            }
            Some(offset) => {
                self.line_scanned = from + offset;
                Ok(None)
            }
            None if buf.len() - self.pos > LINE_PENDING_BYTES_MAX => Err(too_big),
            None => {
                self.line_scanned = buf.len();
                Ok(None)
            }
        }
    }

    /// Splits the complete multibulk off `buf` (one split per command) and slices its argv.
    fn finish_multibulk(&mut self, buf: &mut BytesMut) -> Vec<Bytes> {
        let mut frame = buf.split_to(self.pos).freeze();
        let (&(last_start, last_len), others) =
            self.arg_spans.split_last().expect("a multibulk has at least one argument");
        let mut argv = Vec::with_capacity(self.arg_spans.len());
        argv.extend(others.iter().map(|&(start, len)| frame.slice(start..start + len)));
        // The frame's own reference becomes the last argument: one reference count update
        // fewer per command than slicing it too and dropping the frame.
        frame.advance(last_start);
        frame.truncate(last_len);
        argv.push(frame);
        self.pos = 0;
        self.arg_spans.clear();
        if self.arg_spans.capacity() > ARGV_PREALLOC_MAX {
            // Do not keep the slots of one huge command for the rest of the connection.
            self.arg_spans = Vec::new();
        }
        argv
    }

    /// Reads an inline request: one line, split like Valkey's `sdssplitargs`.
    fn inline_command(&mut self, buf: &mut BytesMut) -> Result<Step, ProtoError> {
        let from = self.line_scanned;
        // Valkey searches with strchr: a NUL before the newline hides the newline.
        let hit = buf[from..].iter().position(|&byte| byte == b'\n' || byte == 0);
        let newline = match hit {
            Some(offset) if buf[from + offset] == b'\n' => from + offset,
            _ if buf.len() > LINE_PENDING_BYTES_MAX => return Err(ProtoError::TooBigInlineRequest),
            _ => {
                self.line_scanned = hit.map_or(buf.len(), |offset| from + offset);
                return Ok(Step::Incomplete);
            }
        };
        self.line_scanned = 0;
        let line_len = if newline > 0 && buf[newline - 1] == b'\r' { newline - 1 } else { newline };
        let line = buf.split_to(newline + 1).freeze().slice(..line_len);
        let argv = split_inline_args(&line)?;
        Ok(if argv.is_empty() { Step::Skipped } else { Step::Inline(argv) })
    }
}

/// The common header line, read in one pass: `prefix`, 1 to 18 digits without a leading zero
/// (so no overflow), `\r` and one more byte; returns the value and where the `\r` is. Anything
/// else (a sign, a longer number, a line not complete yet, garbage) returns None and goes the
/// general way, `header_line_end` then `parse_i64_strict`, which agrees wherever this succeeds.
fn plain_header(buf: &[u8], pos: usize, prefix: u8) -> Option<(i64, usize)> {
    const DIGITS_MAX: usize = 18;
    let line = buf.get(pos..)?;
    if line.first() != Some(&prefix) {
        return None;
    }
    let mut value: i64 = 0;
    let mut at = 1;
    while at <= DIGITS_MAX && at < line.len() && line[at].is_ascii_digit() {
        value = value * 10 + i64::from(line[at] - b'0');
        at += 1;
    }
    let digits = at - 1;
    let plain = digits > 0
        && (digits == 1 || line[1] != b'0')
        && line.get(at) == Some(&b'\r')
        && at + 1 < line.len();
    plain.then_some((value, pos + at))
}

/// Splits an inline line (which holds no NUL: see `inline_command`) into arguments with
/// `sdssplitargs` semantics. A plain argument is a slice of `line`; one with quotes is built.
fn split_inline_args(line: &Bytes) -> Result<Vec<Bytes>, ProtoError> {
    let mut argv = Vec::new();
    let split = quote::split_args_each(line, |arg| {
        argv.push(match arg {
            quote::Arg::Plain(range) => line.slice(range),
            quote::Arg::Quoted(bytes) => Bytes::from(bytes),
        })
    });
    split.map_err(|quote::Unbalanced| ProtoError::UnbalancedQuotes)?;
    Ok(argv)
}

/// Valkey's `string2ll`: an optional `-`, then digits without a leading zero (only "0" itself
/// may start with 0, so "-0" is refused too), no overflow.
fn parse_i64_strict(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, text),
    };
    match digits {
        [b'0'] if !negative => return Some(0),
        [b'1'..=b'9', ..] => {}
        _ => return None,
    }
    let mut magnitude: u64 = 0;
    for &byte in digits {
        if !byte.is_ascii_digit() {
            return None;
        }
        magnitude = magnitude.checked_mul(10)?.checked_add(u64::from(byte - b'0'))?;
    }
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::rng::Rng;

    const AUTHED: ParseLimits =
        ParseLimits { bulk_len_max: 512 * 1024 * 1024, authenticated: true };
    const UNAUTHED: ParseLimits =
        ParseLimits { bulk_len_max: 512 * 1024 * 1024, authenticated: false };

    /// Parses every complete command in `buf`; stops at Ok(None) or at the first error.
    fn drain(
        parser: &mut Parser,
        buf: &mut BytesMut,
        limits: &ParseLimits,
    ) -> (Vec<Vec<Bytes>>, Option<ProtoError>) {
        let mut commands = Vec::new();
        loop {
            match parser.parse(buf, limits) {
                Ok(Some(argv)) => {
                    assert!(!argv.is_empty(), "an empty argv was returned");
                    commands.push(argv);
                }
                Ok(None) => return (commands, None),
                Err(error) => return (commands, Some(error)),
            }
        }
    }

    fn parse_all(input: &[u8], limits: &ParseLimits) -> (Vec<Vec<Bytes>>, Option<ProtoError>) {
        drain(&mut Parser::new(), &mut BytesMut::from(input), limits)
    }

    /// The error that parsing `input` in one piece ends with.
    fn error_of(input: &[u8], limits: &ParseLimits) -> ProtoError {
        parse_all(input, limits).1.expect("a protocol error")
    }

    /// `input` holds only the start of a command: no command, no error.
    fn assert_incomplete(input: &[u8], limits: &ParseLimits) {
        assert_eq!(
            parse_all(input, limits),
            (vec![], None),
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }

    fn argv(args: &[&[u8]]) -> Vec<Bytes> {
        args.iter().map(|arg| Bytes::copy_from_slice(arg)).collect()
    }

    fn pipeline() -> (Vec<u8>, Vec<Vec<Bytes>>) {
        let binary: &[u8] = b"\r\n\0*1\r\n$3\r\n\xff\r";
        let mut input = Vec::new();
        input.extend_from_slice(b"*3\r\n$3\r\nSET\r\n$5\r\nk\r\n\0x\r\n$4\r\na\r\nb\r\n");
        input.extend_from_slice(b"PING\r\n");
        input.extend_from_slice(b"\r\n");
        input.extend_from_slice(b"  \t \r\n");
        input.extend_from_slice(b"*0\r\n*-1\r\n");
        input.extend_from_slice(b"SET \"a b\\x41\\n\" 'it\\'s' c\r\n");
        input.extend_from_slice(b"*1\r\n$0\r\n\r\n");
        input.extend_from_slice(b"ECHO \"\" x\"y z\"\n");
        input.extend_from_slice(format!("*2\r\n$4\r\nECHO\r\n${}\r\n", binary.len()).as_bytes());
        input.extend_from_slice(binary);
        input.extend_from_slice(b"\r\n");
        input.extend_from_slice(b"\tGET   key\r\r\n");
        let expected = vec![
            argv(&[b"SET", b"k\r\n\0x", b"a\r\nb"]),
            argv(&[b"PING"]),
            argv(&[b"SET", b"a bA\n", b"it's", b"c"]),
            argv(&[b""]),
            argv(&[b"ECHO", b"", b"xy z"]),
            argv(&[b"ECHO", binary]),
            argv(&[b"GET", b"key"]),
        ];
        (input, expected)
    }

    #[test]
    fn pipeline_parses_in_one_piece() {
        let (input, expected) = pipeline();
        let mut buf = BytesMut::from(&input[..]);
        assert_eq!(drain(&mut Parser::new(), &mut buf, &AUTHED), (expected, None));
        assert!(buf.is_empty());
    }

    #[test]
    fn pipeline_split_at_every_byte() {
        let (input, expected) = pipeline();
        for split in 0..=input.len() {
            let mut parser = Parser::new();
            let mut buf = BytesMut::from(&input[..split]);
            let (mut commands, error) = drain(&mut parser, &mut buf, &AUTHED);
            assert_eq!(error, None, "split at {split}");
            buf.extend_from_slice(&input[split..]);
            let (rest, error) = drain(&mut parser, &mut buf, &AUTHED);
            assert_eq!(error, None, "split at {split}");
            commands.extend(rest);
            assert_eq!(commands, expected, "split at {split}");
            assert!(buf.is_empty(), "split at {split}");
        }
    }

    #[test]
    fn pipeline_fed_byte_by_byte() {
        let (input, expected) = pipeline();
        let mut parser = Parser::new();
        let mut buf = BytesMut::new();
        let mut commands = Vec::new();
        for &byte in &input {
            buf.extend_from_slice(&[byte]);
            let (parsed, error) = drain(&mut parser, &mut buf, &AUTHED);
            assert_eq!(error, None);
            commands.extend(parsed);
        }
        assert_eq!(commands, expected);
        assert!(buf.is_empty());
    }

    #[test]
    fn argv_slices_share_the_query_buffer() {
        let mut buf = BytesMut::from(&b"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\nrest"[..]);
        let start = buf.as_ptr();
        let argv = Parser::new().parse(&mut buf, &AUTHED).unwrap().unwrap();
        assert_eq!(argv[1].as_ptr(), start.wrapping_add(17));
        assert_eq!(&buf[..], b"rest");
    }

    #[test]
    fn inline_splitting_follows_sdssplitargs() {
        let cases: &[(&[u8], &[&[u8]])] = &[
            (b"a\rb\r\n", &[b"a", b"b"]),
            (b"a\x0bb \x0b\x0cc\n", &[b"a\x0bb", b"c"]),
            (b"\"\\xZZ\\q\\x4a\\x4\" '\\a' \"\\\\\"\n", &[b"xZZqJx4", b"\\a", b"\\"]),
            (b"\"\\t\\b\\a\\r\\\"\"\x0b'x'\n", &[b"\t\x08\x07\r\"", b"x"]),
            (b"pre'a \"b'\n", &[b"prea \"b"]),
        ];
        for &(input, args) in cases {
            assert_eq!(parse_all(input, &AUTHED), (vec![argv(args)], None), "{input:?}");
        }
    }

    #[test]
    fn error_messages_are_valkeys() {
        let cases = [
            (ProtoError::TooBigInlineRequest, "ERR Protocol error: too big inline request"),
            (ProtoError::UnbalancedQuotes, "ERR Protocol error: unbalanced quotes in request"),
            (ProtoError::TooBigMbulkCountString, "ERR Protocol error: too big mbulk count string"),
            (ProtoError::InvalidMultibulkLength, "ERR Protocol error: invalid multibulk length"),
            (ProtoError::TooBigBulkCountString, "ERR Protocol error: too big bulk count string"),
            (ProtoError::ExpectedDollar(b':'), "ERR Protocol error: expected '$', got ':'"),
            (ProtoError::ExpectedDollar(b'\r'), "ERR Protocol error: expected '$', got ' '"),
            (ProtoError::ExpectedDollar(0), "ERR Protocol error: expected '$', got '"),
            (ProtoError::InvalidBulkLength, "ERR Protocol error: invalid bulk length"),
            (
                ProtoError::UnauthenticatedMultibulkLength,
                "ERR Protocol error: unauthenticated multibulk length",
            ),
            (
                ProtoError::UnauthenticatedBulkLength,
                "ERR Protocol error: unauthenticated bulk length",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.message(), text.as_bytes());
        }
        // A byte that is not UTF-8 is echoed raw, as Valkey's `%c`.
        assert_eq!(
            ProtoError::ExpectedDollar(0xff).message(),
            b"ERR Protocol error: expected '$', got '\xff'"
        );
    }

    #[test]
    fn too_big_inline_request() {
        let mut input = vec![b'a'; LINE_PENDING_BYTES_MAX];
        assert_incomplete(&input, &AUTHED);
        input.push(b'a');
        assert_eq!(error_of(&input, &AUTHED), ProtoError::TooBigInlineRequest);
        // A newline anywhere in the buffer makes it one (long) line, as in Valkey.
        input.extend_from_slice(b" b\n");
        assert_eq!(parse_all(&input, &AUTHED).0[0][1], Bytes::from_static(b"b"));
    }

    #[test]
    fn nul_hides_an_inline_newline_as_strchr_does() {
        assert_incomplete(b"GET a\0b\r\nPING\r\n", &AUTHED);
        let mut input = b"GET a\0b\r\n".to_vec();
        input.resize(LINE_PENDING_BYTES_MAX + 1, b'x');
        assert_eq!(error_of(&input, &AUTHED), ProtoError::TooBigInlineRequest);
    }

    #[test]
    fn unbalanced_quotes() {
        let inputs: &[&[u8]] = &[
            b"\"abc\r\n",
            b"'abc\r\n",
            b"\"abc\"x\r\n",
            b"'a'b\r\n",
            b"SET \"abc\\\"\r\n",
            b"\"abc\\\n",
            b"'it\\'\n",
        ];
        for input in inputs {
            assert_eq!(error_of(input, &AUTHED), ProtoError::UnbalancedQuotes, "{input:?}");
        }
    }

    #[test]
    fn too_big_mbulk_count_string() {
        let mut input = b"*".to_vec();
        input.resize(LINE_PENDING_BYTES_MAX, b'1');
        assert_incomplete(&input, &AUTHED);
        input.push(b'1');
        assert_eq!(error_of(&input, &AUTHED), ProtoError::TooBigMbulkCountString);
    }

    #[test]
    fn invalid_multibulk_length() {
        let inputs: &[&[u8]] = &[
            b"*\r\n",
            b"*abc\r\n",
            b"*+1\r\n",
            b"* 1\r\n",
            b"*1 \r\n",
            b"*01\r\n",
            b"*-0\r\n",
            b"*2147483648\r\n",
            b"*99999999999999999999\r\n",
        ];
        for input in inputs {
            assert_eq!(error_of(input, &AUTHED), ProtoError::InvalidMultibulkLength, "{input:?}");
        }
    }

    #[test]
    fn huge_multibulk_count_reserves_little() {
        let mut parser = Parser::new();
        let mut buf = BytesMut::from(&b"*2147483647\r\n$1\r\na\r\n"[..]);
        assert_eq!(parser.parse(&mut buf, &AUTHED), Ok(None));
        assert!(parser.arg_spans.capacity() <= ARGV_PREALLOC_MAX);
        assert_eq!(parser.arg_spans.len(), 1);
    }

    #[test]
    fn empty_multibulks_are_skipped() {
        let input = b"*0\r\n*-1\r\n*-2147483649\r\n*1\r\n$1\r\nx\r\n";
        assert_eq!(parse_all(input, &AUTHED), (vec![argv(&[b"x"])], None));
    }

    #[test]
    fn too_big_bulk_count_string() {
        let mut input = b"*1\r\n$".to_vec();
        input.resize(4 + LINE_PENDING_BYTES_MAX, b'1');
        assert_incomplete(&input, &AUTHED);
        input.push(b'1');
        assert_eq!(error_of(&input, &AUTHED), ProtoError::TooBigBulkCountString);
    }

    #[test]
    fn expected_dollar() {
        assert_eq!(error_of(b"*1\r\n:3\r\n", &AUTHED), ProtoError::ExpectedDollar(b':'));
        assert_eq!(error_of(b"*1\r\n\r\n", &AUTHED), ProtoError::ExpectedDollar(b'\r'));
        let error = error_of(b"*2\r\n$1\r\na\r\nfoo\r\n", &AUTHED);
        assert_eq!(error.message(), b"ERR Protocol error: expected '$', got 'f'");
        // The check waits for the header's end, as Valkey's does.
        assert_incomplete(b"*1\r\nfoo", &AUTHED);
    }

    #[test]
    fn invalid_bulk_length() {
        let inputs: &[&[u8]] = &[
            b"*1\r\n$\r\n",
            b"*1\r\n$-1\r\n",
            b"*1\r\n$abc\r\n",
            b"*1\r\n$+3\r\n",
            b"*1\r\n$03\r\n",
            b"*1\r\n$3 \r\n",
            b"*1\r\n$99999999999999999999\r\n",
        ];
        for input in inputs {
            assert_eq!(error_of(input, &AUTHED), ProtoError::InvalidBulkLength, "{input:?}");
        }
    }

    #[test]
    fn bulk_len_above_limit_is_refused_before_its_payload() {
        let limits = ParseLimits { bulk_len_max: 1024, authenticated: true };
        assert_eq!(error_of(b"*1\r\n$1025\r\n", &limits), ProtoError::InvalidBulkLength);
        assert_eq!(parse_all(b"*1\r\n$1024\r\n", &limits), (vec![], None));
        // A length near usize::MAX under no limit: no allocation, no overflow.
        let unlimited = ParseLimits { bulk_len_max: usize::MAX, authenticated: true };
        let mut parser = Parser::new();
        let mut buf = BytesMut::from(&b"*1\r\n$9223372036854775807\r\nabc"[..]);
        assert_eq!(parser.parse(&mut buf, &unlimited), Ok(None));
        assert!(parser.bytes_needed_hint() > 1 << 62);
        assert!(buf.capacity() < 1024);
    }

    #[test]
    fn unauthenticated_limits() {
        assert_incomplete(b"*10\r\n", &UNAUTHED);
        assert_eq!(error_of(b"*11\r\n", &UNAUTHED), ProtoError::UnauthenticatedMultibulkLength);
        assert_incomplete(b"*11\r\n", &AUTHED);
        assert_incomplete(b"*1\r\n$16384\r\n", &UNAUTHED);
        let error = error_of(b"*1\r\n$16385\r\n", &UNAUTHED);
        assert_eq!(error, ProtoError::UnauthenticatedBulkLength);
        assert_incomplete(b"*1\r\n$16385\r\n", &AUTHED);
        // The bulk limit is checked before the unauthenticated one.
        let limits = ParseLimits { bulk_len_max: 100, authenticated: false };
        assert_eq!(error_of(b"*1\r\n$16385\r\n", &limits), ProtoError::InvalidBulkLength);
    }

    #[test]
    fn line_endings_are_checked_as_in_valkey_9() {
        for raw in [
            &b"*1\rX$3\r\nfoo\r\n"[..],
            b"*1\r\n$3\rXfoo\r\n",
            b"*1\r\n$3\r\nfooXY",
            b"*1\r\n$3\r\nfoo\rX",
        ] {
            assert_eq!(parse_all(raw, &AUTHED), (vec![], Some(ProtoError::InvalidCrlf)), "{raw:?}");
        }
        assert_eq!(
            ProtoError::InvalidCrlf.message(),
            b"ERR Protocol error: invalid CRLF in request".to_vec()
        );
    }

    #[test]
    fn bytes_needed_hint_tracks_a_big_bulk() {
        let mut parser = Parser::new();
        let mut buf = BytesMut::from(&b"*2\r\n$3\r\nSET\r\n$100000\r\n0123456789"[..]);
        assert_eq!(parser.bytes_needed_hint(), 0);
        assert_eq!(parser.parse(&mut buf, &AUTHED), Ok(None));
        assert_eq!(parser.bytes_needed_hint(), 100_000 + 2 - 10);
        buf.extend_from_slice(&vec![b'v'; 100_000 - 10]);
        assert_eq!(parser.parse(&mut buf, &AUTHED), Ok(None));
        assert_eq!(parser.bytes_needed_hint(), 2);
        buf.extend_from_slice(b"\r\n");
        let argv = parser.parse(&mut buf, &AUTHED).unwrap().unwrap();
        assert_eq!(argv[1].len(), 100_000);
        assert_eq!(parser.bytes_needed_hint(), 0);
    }

    #[test]
    fn integers_follow_string2ll() {
        assert_eq!(parse_i64_strict(b"0"), Some(0));
        assert_eq!(parse_i64_strict(b"-1"), Some(-1));
        assert_eq!(parse_i64_strict(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64_strict(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [&b""[..], b"-", b"9223372036854775808", b"-9223372036854775809", b"1a"] {
            assert_eq!(parse_i64_strict(bad), None, "{bad:?}");
        }
    }

    /// Random bytes built from protocol fragments (headers with small or odd counts, line
    /// ends, quotes, escapes) and random bytes, so that parsing gets deep before it fails.
    fn garbage(rng: &mut Rng) -> Vec<u8> {
        const FRAGMENTS: &[&[u8]] = &[
            b"*", b"$", b"\r\n", b"\r", b"\n", b"-", b"0", b"1", b"3", b"9", b"17", b"abc", b" ",
            b"\t", b"\"", b"'", b"\\", b"\\x4", b"\0", b"+", b"16385", b"11",
        ];
        let mut out = Vec::new();
        for _ in 0..rng.below(80) {
            match rng.below(5) {
                0 => out.push(rng.next_u64() as u8),
                1 => out.extend_from_slice(format!("*{}\r\n", rng.below(5)).as_bytes()),
                2 => out.extend_from_slice(format!("${}\r\n", rng.below(5)).as_bytes()),
                _ => out.extend_from_slice(FRAGMENTS[rng.below(FRAGMENTS.len())]),
            }
        }
        out
    }

    #[test]
    fn garbage_never_panics_and_splits_do_not_matter() {
        let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
        for _ in 0..10_000 {
            let input = garbage(&mut rng);
            let bulk_len_max = if rng.below(2) == 0 { rng.below(64) } else { 1 << 20 };
            let limits = ParseLimits { bulk_len_max, authenticated: rng.below(2) == 0 };
            let whole = parse_all(&input, &limits);
            // The same bytes in random pieces give the same commands and the same error.
            let mut parser = Parser::new();
            let mut buf = BytesMut::new();
            let (mut commands, mut error) = (Vec::new(), None);
            let mut fed = 0;
            while fed < input.len() && error.is_none() {
                let piece = (1 + rng.below(8)).min(input.len() - fed);
                buf.extend_from_slice(&input[fed..fed + piece]);
                fed += piece;
                let (parsed, parse_error) = drain(&mut parser, &mut buf, &limits);
                commands.extend(parsed);
                error = parse_error;
            }
            assert_eq!((commands, error), whole, "{input:?}");
        }
    }
}
