//! The debugger's state for one session, without Lua and without a socket: the script's
//! source split in lines, the breakpoints, the stepping flags, the log lines waiting to be
//! sent, and the bytes the client sent that do not make a command yet.
//!
//! Everything here is Valkey 9.1's text and Valkey 9.1's rules (`debug_lua.c` and the
//! engine-neutral half in `scripting_engine.c`): how a source line is shown (`->#7   code`),
//! what `list`, `break` and `maxlen` answer, how a long value is trimmed, and the small RESP
//! reader that takes the debugger's commands off the wire, with its limits: at most 1024
//! arguments of 1 to 1024 bytes each, and at most 1 MiB of input waiting
//! ([`INPUT_BYTES_MAX`]).

use std::time::Instant;

use super::Channel;

/// At most this many breakpoints (Valkey's `LDB_BREAKPOINTS_MAX`).
pub const BREAKPOINTS_MAX: usize = 64;
/// Log lines of values and replies are trimmed at this many bytes unless `maxlen` says
/// otherwise (`DS_MAX_LEN_DEFAULT`).
pub const MAXLEN_DEFAULT: usize = 256;
/// A `maxlen` below this (and not 0) is raised to it.
const MAXLEN_MIN: usize = 60;
/// Input waiting for a complete command beyond this many bytes ends the session with an
/// error (Valkey's `1 << 20`), so that a client cannot grow the server's memory.
pub const INPUT_BYTES_MAX: usize = 1 << 20;
/// Bytes read from the client at a time.
pub const READ_CHUNK_BYTES: usize = 1024;
/// Most arguments of a debugger command, and most bytes of one argument.
const ARGS_MAX: i64 = 1024;
const ARG_BYTES_MAX: i64 = 1024;

/// The input could not be a command: the session ends with this error.
pub const PROTOCOL_ERROR: &[u8] = b"ERR protocol error";
pub const INPUT_TOO_LONG: &[u8] = b"ERR max client buffer reached";

/// What reading a command gave.
pub enum Input {
    Command(Vec<Vec<u8>>),
    /// The client closed the connection (or reading failed).
    Disconnected,
    /// Malformed or too much input: the script fails with this error.
    Error(&'static [u8]),
}

pub struct Session {
    /// The script's lines, without the line ends (trailing empty lines dropped).
    lines: Vec<Vec<u8>>,
    breakpoints: Vec<i32>,
    /// Stop at the next line whatever the breakpoints say (also: log the commands run).
    pub step: bool,
    /// `server.breakpoint()` was called: stop at the next line.
    pub lua_breakpoint: bool,
    /// The line Lua runs now (1-based; -1 before the first).
    pub current_line: i32,
    maxlen: usize,
    maxlen_hint_sent: bool,
    logs: Vec<Vec<u8>>,
    input: Vec<u8>,
    chan: Box<dyn Channel>,
    /// When the script last went on running (the time limit of a run without stops counts
    /// from there).
    pub resumed: Instant,
    /// A run this long without a stop stops with "timeout reached, infinite loop?".
    pub timeout_ms: u64,
}

impl Session {
    /// A session over `source` (the EVAL body as sent), talking through `chan`.
    pub fn new(source: &[u8], chan: Box<dyn Channel>, timeout_ms: u64) -> Session {
        let mut end = source.len();
        while end > 0 && matches!(source[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        let lines = source[..end].split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
        Session {
            lines,
            breakpoints: Vec::new(),
            step: true,
            lua_breakpoint: false,
            current_line: -1,
            maxlen: MAXLEN_DEFAULT,
            maxlen_hint_sent: false,
            logs: Vec::new(),
            input: Vec::new(),
            chan,
            resumed: Instant::now(),
            timeout_ms,
        }
    }

    pub fn log(&mut self, line: impl Into<Vec<u8>>) {
        self.logs.push(line.into());
    }

    /// Logs `line` trimmed to `maxlen` bytes (with ` ...`); the first trimmed line is
    /// followed by a hint about `maxlen 0`.
    pub fn log_trimmed(&mut self, mut line: Vec<u8>) {
        let trimmed = self.maxlen != 0 && line.len() > self.maxlen;
        if trimmed {
            line.truncate(self.maxlen);
            line.extend_from_slice(b" ...");
        }
        self.logs.push(line);
        if trimmed && !self.maxlen_hint_sent {
            self.maxlen_hint_sent = true;
            self.log("<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.");
        }
    }

    /// Sends the waiting log lines as one array of simple strings (CR and LF become
    /// spaces). A failed write is not reported: the next read sees the connection gone.
    pub fn flush(&mut self) {
        let mut out = format!("*{}\r\n", self.logs.len()).into_bytes();
        for line in self.logs.drain(..) {
            out.push(b'+');
            out.extend(line.iter().map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c }));
            out.extend_from_slice(b"\r\n");
        }
        self.chan.write(&out);
    }

    /// The text of line `n` (1-based), or Valkey's stand-in for a line out of range.
    fn source_line(&self, n: i32) -> &[u8] {
        match usize::try_from(n - 1).ok().and_then(|i| self.lines.get(i)) {
            Some(l) => l,
            None => b"<out of range source code line>",
        }
    }

    pub fn is_breakpoint(&self, n: i32) -> bool {
        self.breakpoints.contains(&n)
    }

    /// Whether the line about to run is to stop (a breakpoint there, or `server.breakpoint()`).
    pub fn should_break(&self) -> bool {
        self.is_breakpoint(self.current_line) || self.lua_breakpoint
    }

    /// Logs line `n` as the debugger shows it: `->` on the current line, `#` on a
    /// breakpoint, the number left-aligned in three columns.
    pub fn log_source_line(&mut self, n: i32) {
        let prefix = match (self.current_line == n, self.is_breakpoint(n)) {
            (true, true) => "->#",
            (true, false) => "-> ",
            (false, true) => "  #",
            (false, false) => "   ",
        };
        let mut line = format!("{prefix}{n:<3} ").into_bytes();
        line.extend_from_slice(self.source_line(n));
        self.log(line);
    }

    /// Logs the lines within `context` of `around` (every line when `around` is 0).
    pub fn list(&mut self, around: i32, context: i32) {
        for n in 1..=self.lines.len() as i32 {
            if around != 0 && (i64::from(around) - i64::from(n)).abs() > i64::from(context) {
                continue;
            }
            self.log_source_line(n);
        }
    }

    /// The `list [line] [ctx]` command.
    pub fn list_command(&mut self, argv: &[Vec<u8>]) {
        let mut around = self.current_line;
        let mut context = 5;
        if let Some(a) = argv.get(1) {
            let n = atoi(a);
            if n > 0 {
                around = n;
            }
        }
        if let Some(c) = argv.get(2) {
            context = atoi(c);
        }
        self.list(around, context);
    }

    /// The `break [line|-line]` command.
    pub fn break_command(&mut self, argv: &[Vec<u8>]) {
        if argv.len() == 1 {
            if self.breakpoints.is_empty() {
                self.log("No breakpoints set. Use 'b <line>' to add one.");
            } else {
                self.log(format!("{} breakpoints set:", self.breakpoints.len()));
                for n in self.breakpoints.clone() {
                    self.log_source_line(n);
                }
            }
            return;
        }
        for arg in &argv[1..] {
            let Some(n) = strict_i64(arg) else {
                let mut line = b"Invalid argument:'".to_vec();
                line.extend_from_slice(arg);
                line.push(b'\'');
                self.log(line);
                continue;
            };
            if n == 0 {
                self.breakpoints.clear();
                self.log("All breakpoints removed.");
            } else if n > 0 {
                if self.breakpoints.len() == BREAKPOINTS_MAX {
                    self.log("Too many breakpoints set.");
                } else if self.add_breakpoint(n) {
                    self.list(n as i32, 1);
                } else {
                    self.log("Wrong line number.");
                }
            } else if self.del_breakpoint(n.unsigned_abs()) {
                self.log("Breakpoint removed.");
            } else {
                self.log("No breakpoint in the specified line.");
            }
        }
    }

    /// Adds a breakpoint on a line of the script; false for a line out of range or one
    /// that already has one.
    fn add_breakpoint(&mut self, n: i64) -> bool {
        if n <= 0 || n > self.lines.len() as i64 || self.is_breakpoint(n as i32) {
            return false;
        }
        self.breakpoints.push(n as i32);
        true
    }

    fn del_breakpoint(&mut self, n: u64) -> bool {
        let Some(i) = self.breakpoints.iter().position(|&b| b as u64 == n) else {
            return false;
        };
        self.breakpoints.remove(i);
        true
    }

    /// The client is gone: the script runs on without stopping.
    pub fn detach(&mut self) {
        self.step = false;
        self.breakpoints.clear();
    }

    /// The `maxlen [len]` command.
    pub fn maxlen_command(&mut self, argv: &[Vec<u8>]) {
        match argv.get(1) {
            None => self.log(format!("Current maxlen is {}", self.maxlen)),
            Some(arg) => match strict_i64(arg).filter(|&n| n >= 0) {
                Some(n) => {
                    self.maxlen_hint_sent = true;
                    let n = n as usize;
                    self.maxlen = if n != 0 && n <= MAXLEN_MIN { MAXLEN_MIN } else { n };
                    if self.maxlen == 0 {
                        self.log("<value> replies are not truncated.");
                    } else {
                        self.log(format!(
                            "<value> replies are truncated at {} bytes.",
                            self.maxlen
                        ));
                    }
                }
                None => self.log("<error> Invalid maxlen value."),
            },
        }
    }

    /// Reads until a whole command has arrived. Whatever followed it in the same read is
    /// dropped, as Valkey drops it.
    pub fn read_command(&mut self) -> Input {
        loop {
            match parse_command(&self.input) {
                Parsed::Command(argv) => {
                    self.input.clear();
                    return Input::Command(argv);
                }
                Parsed::Error => return Input::Error(PROTOCOL_ERROR),
                Parsed::Incomplete => {}
            }
            let mut buf = [0u8; READ_CHUNK_BYTES];
            let n = match self.chan.read(&mut buf) {
                Ok(n) if n > 0 => n,
                _ => return Input::Disconnected,
            };
            self.input.extend_from_slice(&buf[..n]);
            if self.input.len() > INPUT_BYTES_MAX {
                self.input = Vec::new();
                return Input::Error(INPUT_TOO_LONG);
            }
        }
    }
}

enum Parsed {
    Command(Vec<Vec<u8>>),
    Incomplete,
    Error,
}

/// Valkey's forgiving reader of one `*<n>\r\n$<len>\r\n<arg>\r\n...` command: whatever
/// comes before the first `*` is skipped.
fn parse_command(buf: &[u8]) -> Parsed {
    if buf.is_empty() {
        return Parsed::Incomplete;
    }
    let Some(star) = buf.iter().position(|&c| c == b'*') else { return Parsed::Error };
    let Some((count, mut at)) = number_line(buf, star + 1) else { return Parsed::Incomplete };
    if count <= 0 || count > ARGS_MAX {
        return Parsed::Error;
    }
    let mut argv = Vec::with_capacity(count as usize);
    while (argv.len() as i64) < count {
        match buf.get(at) {
            None => return Parsed::Incomplete,
            Some(b'$') => {}
            Some(_) => return Parsed::Error,
        }
        let Some((len, body)) = number_line(buf, at + 1) else { return Parsed::Incomplete };
        if len <= 0 || len > ARG_BYTES_MAX {
            return Parsed::Error;
        }
        let end = body + len as usize;
        if end + 2 > buf.len() {
            return Parsed::Incomplete;
        }
        argv.push(buf[body..end].to_vec());
        if &buf[end..end + 2] != b"\r\n" {
            return Parsed::Error;
        }
        at = end + 2;
    }
    Parsed::Command(argv)
}

/// The number (C's `atoi`) on the line starting at `from`, and where the next line starts;
/// None when the line has not ended yet.
fn number_line(buf: &[u8], from: usize) -> Option<(i64, usize)> {
    let rest = buf.get(from..)?;
    let end = rest.windows(2).position(|w| w == b"\r\n")?;
    Some((i64::from(atoi(&rest[..end])), from + end + 2))
}

/// C's `atoi`: leading blanks, a sign, then the digits up to the first other byte (0 when
/// there are none); saturated rather than undefined on overflow.
pub fn atoi(s: &[u8]) -> i32 {
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let neg = s.get(i) == Some(&b'-');
    if matches!(s.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let mut v: i64 = 0;
    while let Some(d) = s.get(i).filter(|c| c.is_ascii_digit()) {
        v = (v * 10 + i64::from(d - b'0')).min(i64::from(i32::MAX) + 1);
        i += 1;
    }
    let v = if neg { -v } else { v };
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

/// Valkey's `string2ll`: an optional `-`, digits without a leading zero (but `0`), nothing
/// else, no overflow.
pub fn strict_i64(s: &[u8]) -> Option<i64> {
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits[0] == b'0' || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v: i128 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    i64::try_from(if neg { -v } else { v }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Input handed out `chunk` bytes per read.
    struct Script {
        input: Vec<u8>,
        at: usize,
        chunk: usize,
    }

    impl Channel for Script {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = (self.input.len() - self.at).min(buf.len()).min(self.chunk);
            buf[..n].copy_from_slice(&self.input[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
        fn write(&mut self, _bytes: &[u8]) {}
    }

    fn session_reading(src: &str, input: &[u8], chunk: usize) -> Session {
        let chan = Script { input: input.to_vec(), at: 0, chunk };
        Session::new(src.as_bytes(), Box::new(chan), 5000)
    }

    fn session(src: &str, input: &[u8]) -> Session {
        session_reading(src, input, 7)
    }

    fn logs(s: &mut Session) -> Vec<String> {
        s.logs.drain(..).map(|l| String::from_utf8(l).unwrap()).collect()
    }

    #[test]
    fn commands_are_read_across_reads_and_malformed_input_ends_the_session() {
        let two = b"*2\r\n$1\r\nb\r\n$2\r\n10\r\n*1\r\n$1\r\ns\r\n";
        let b10 = [b"b".to_vec(), b"10".to_vec()];
        // The first command ends with a read, the second follows.
        let mut s = session_reading("return 1", two, 19);
        assert!(matches!(s.read_command(), Input::Command(a) if a == b10));
        assert!(matches!(s.read_command(), Input::Command(a) if a == [b"s".to_vec()]));
        assert!(matches!(s.read_command(), Input::Disconnected));
        // Both in one read: Valkey drops the second.
        let mut s = session_reading("return 1", two, 1024);
        assert!(matches!(s.read_command(), Input::Command(a) if a == b10));
        assert!(matches!(s.read_command(), Input::Disconnected));
        for bad in
            [&b"PING\r\n"[..], b"*1\r\n$0\r\n\r\n", b"*0\r\n", b"*1\r\nx1\r\n", b"*1\r\n$1\r\nsXY"]
        {
            assert!(matches!(session("", bad).read_command(), Input::Error(PROTOCOL_ERROR)));
        }
        let mut long = b"*1\r\n$1".to_vec();
        long.resize(INPUT_BYTES_MAX + 10, b'1');
        assert!(matches!(session("", &long).read_command(), Input::Error(INPUT_TOO_LONG)));
    }

    #[test]
    fn listing_and_breakpoints_as_valkey_shows_them() {
        let mut s = session("local a = 1\nlocal b = 2\nreturn a + b\n\n", b"");
        s.current_line = 2;
        s.list(0, 0);
        assert_eq!(
            logs(&mut s),
            ["   1   local a = 1", "-> 2   local b = 2", "   3   return a + b"]
        );
        let argv = |a: &[&str]| a.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>();
        s.break_command(&argv(&["b", "3"]));
        s.break_command(&argv(&["b", "9"]));
        s.break_command(&argv(&["b", "x"]));
        s.break_command(&argv(&["b", "2"]));
        s.break_command(&argv(&["b"]));
        assert_eq!(
            logs(&mut s),
            [
                "-> 2   local b = 2",
                "  #3   return a + b",
                "Wrong line number.",
                "Invalid argument:'x'",
                "   1   local a = 1",
                "->#2   local b = 2",
                "  #3   return a + b",
                "2 breakpoints set:",
                "  #3   return a + b",
                "->#2   local b = 2",
            ]
        );
        s.break_command(&argv(&["b", "-3"]));
        s.break_command(&argv(&["b", "-3"]));
        s.break_command(&argv(&["b", "0"]));
        assert_eq!(
            logs(&mut s),
            [
                "Breakpoint removed.",
                "No breakpoint in the specified line.",
                "All breakpoints removed."
            ]
        );
        s.maxlen_command(&argv(&["maxlen", "10"]));
        s.log_trimmed(vec![b'x'; 70]);
        s.maxlen_command(&argv(&["maxlen"]));
        s.maxlen_command(&argv(&["maxlen", "-1"]));
        let l = logs(&mut s);
        assert_eq!(l[0], "<value> replies are truncated at 60 bytes.");
        assert_eq!(l[1], format!("{} ...", "x".repeat(60)));
        assert_eq!(l[2..], ["Current maxlen is 60", "<error> Invalid maxlen value."]);
    }

    #[test]
    fn numbers_as_c_reads_them() {
        assert_eq!(atoi(b" 12x"), 12);
        assert_eq!(atoi(b"-3"), -3);
        assert_eq!(atoi(b"x"), 0);
        assert_eq!(strict_i64(b"-7"), Some(-7));
        assert_eq!(strict_i64(b"07"), None);
        assert_eq!(strict_i64(b"+7"), None);
    }
}
