//! Unit tests of the command reader: every cut of a sample stream, every split of the input
//! into reads, bad formats, annotations and limits.

use super::*;
use std::io::{BufReader, Cursor, Read};

/// A small AOF stream: annotations, SELECT, a SET with an empty value, a binary value, PING.
fn sample() -> (Vec<u8>, Vec<Vec<&'static [u8]>>) {
    let commands: Vec<Vec<&'static [u8]>> = vec![
        vec![b"SELECT", b"0"],
        vec![b"SET", b"k", b""],
        vec![b"SET", b"bin", b"a\r\nb\x00"],
        vec![b"PING"],
    ];
    let mut s = Vec::new();
    s.extend_from_slice(b"#TS:1700000000\r\n");
    s.extend_from_slice(&resp(&commands[0]));
    s.extend_from_slice(&resp(&commands[1]));
    s.extend_from_slice(b"#TS:1700000001\r\n");
    s.extend_from_slice(&resp(&commands[2]));
    s.extend_from_slice(&resp(&commands[3]));
    (s, commands)
}

fn resp(argv: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", argv.len()).into_bytes();
    for a in argv {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Commands as owned argument lists.
type Commands = Vec<Vec<Vec<u8>>>;

/// Reads everything: the commands, their end offsets, and how the stream stopped.
fn read_all<R: BufRead>(
    reader: &mut CommandReader<R>,
) -> (Commands, Vec<u64>, Result<(), ReadError>) {
    let (mut cmds, mut ends) = (Vec::new(), Vec::new());
    loop {
        match reader.next_command() {
            Ok(Some(argv)) => {
                cmds.push(argv.iter().map(|a| a.to_vec()).collect());
                ends.push(reader.position());
            }
            Ok(None) => return (cmds, ends, Ok(())),
            Err(e) => return (cmds, ends, Err(e)),
        }
    }
}

fn reader(bytes: &[u8]) -> CommandReader<Cursor<&[u8]>> {
    CommandReader::new(Cursor::new(bytes), 0, None, ReadLimits::default())
}

fn outcome(bytes: &[u8]) -> Result<(), ReadError> {
    read_all(&mut reader(bytes)).2
}

fn is_bad_format(r: &Result<(), ReadError>) -> bool {
    matches!(r, Err(ReadError::BadFormat(_)))
}

#[test]
fn reads_commands_and_skips_annotations() {
    let (s, commands) = sample();
    let (got, ends, end) = read_all(&mut reader(&s));
    assert!(end.is_ok());
    let want: Commands = commands.iter().map(|c| c.iter().map(|a| a.to_vec()).collect()).collect();
    assert_eq!(got, want);
    assert_eq!(*ends.last().unwrap(), s.len() as u64);
}

#[test]
fn every_cut_of_the_stream_is_a_clean_end_or_a_truncation() {
    let (s, commands) = sample();
    // Offsets where a cut leaves whole commands and whole annotations only.
    let mut clean = vec![0u64];
    let (_, ends, _) = read_all(&mut reader(&s));
    clean.extend(&ends);
    let first_ts_end = 16u64;
    let second_ts = ends[1];
    let second_ts_end = second_ts + 16;
    clean.extend([first_ts_end, second_ts_end]);
    for cut in 0..=s.len() {
        let cut64 = cut as u64;
        for len_known in [false, true] {
            let input_len = len_known.then_some(cut64);
            let mut r =
                CommandReader::new(Cursor::new(&s[..cut]), 0, input_len, ReadLimits::default());
            let (got, got_ends, end) = read_all(&mut r);
            let whole = ends.iter().filter(|&&e| e <= cut64).count();
            assert_eq!(got.len(), whole, "cut {cut}");
            assert_eq!(got_ends, ends[..whole], "cut {cut}");
            for (g, c) in got.iter().zip(&commands) {
                assert_eq!(g.len(), c.len());
            }
            let in_annotation = (1..first_ts_end).contains(&cut64)
                || (second_ts + 1..second_ts_end).contains(&cut64);
            if clean.contains(&cut64) {
                assert!(end.is_ok(), "cut {cut}: {end:?}");
                assert_eq!(r.partial_annotation_at(), None, "cut {cut}");
            } else if in_annotation {
                assert!(end.is_ok(), "cut {cut}: {end:?}");
                let start = if cut64 < first_ts_end { 0 } else { second_ts };
                assert_eq!(r.partial_annotation_at(), Some(start), "cut {cut}");
            } else {
                assert!(matches!(end, Err(ReadError::Truncated)), "cut {cut}: {end:?}");
            }
        }
    }
}

#[test]
fn every_read_size_gives_the_same_commands() {
    let (s, _) = sample();
    let (want, want_ends, _) = read_all(&mut reader(&s));
    for capacity in [1, 2, 3, 5, 7, 16, 64] {
        let input = BufReader::with_capacity(capacity, Cursor::new(&s[..]));
        let mut r = CommandReader::new(input, 0, None, ReadLimits::default());
        let (got, ends, end) = read_all(&mut r);
        assert!(end.is_ok(), "capacity {capacity}");
        assert_eq!((got, ends), (want.clone(), want_ends.clone()), "capacity {capacity}");
    }
}

#[test]
fn positions_start_at_the_given_offset() {
    let s = resp(&[b"PING"]);
    let mut r = CommandReader::new(
        Cursor::new(&s[..]),
        100,
        Some(100 + s.len() as u64),
        ReadLimits::default(),
    );
    assert_eq!(r.position(), 100);
    r.next_command().unwrap().unwrap();
    assert_eq!(r.position(), 100 + s.len() as u64);
    assert!(r.next_command().unwrap().is_none());
}

#[test]
fn arguments_share_one_buffer_and_keep_their_bytes() {
    let s = resp(&[b"SET", b"key", b"value"]);
    let argv = reader(&s).next_command().unwrap().unwrap();
    assert_eq!(
        argv,
        vec![Bytes::from_static(b"SET"), Bytes::from_static(b"key"), Bytes::from_static(b"value")]
    );
}

#[test]
fn bare_newlines_are_accepted_after_counts() {
    let argv = reader(b"*1\n$4\nPING\r\n").next_command().unwrap().unwrap();
    assert_eq!(argv, vec![Bytes::from_static(b"PING")]);
}

#[test]
fn bad_formats_are_reported() {
    let cases: &[&[u8]] = &[
        b"x\r\n",
        b"\r\n",
        b"+OK\r\n",
        b"*\r\n",
        b"*a\r\n",
        b"*1a\r\n",
        b"*0\r\n",
        b"*-1\r\n",
        b"* 1\r\n",
        b"*1\r\n+OK\r\n",
        b"*1\r\n$\r\n",
        b"*1\r\n$x\r\n",
        b"*1\r\n$-1\r\n",
        b"*1\r\n$3\r\nabcXY",
        b"*1\r\n$3\r\nabc\n\n",
        b"*1\r\n$3\r\nabcd\r\n",
        b"*99999999999999999999999\r\n",
        b"*1\r\n$99999999999999999999999\r\n",
        b"*x",
        b"*1\r\nX",
        b"*1\r\n$1x",
        b"garbage without newline",
    ];
    for case in cases {
        let r = outcome(case);
        assert!(is_bad_format(&r), "{:?}: {r:?}", String::from_utf8_lossy(case));
    }
}

#[test]
fn cuts_inside_headers_are_truncations() {
    let cases: &[&[u8]] = &[
        b"*",
        b"*1",
        b"*12\r",
        b"*1\r\n",
        b"*1\r\n$",
        b"*1\r\n$4",
        b"*1\r\n$4\r",
        b"*1\r\n$4\r\nPI",
        b"*1\r\n$4\r\nPING",
        b"*1\r\n$4\r\nPING\r",
    ];
    for case in cases {
        let r = outcome(case);
        assert!(
            matches!(r, Err(ReadError::Truncated)),
            "{:?}: {r:?}",
            String::from_utf8_lossy(case)
        );
    }
}

#[test]
fn long_lines_are_bad_format() {
    // An annotation may take 1024 bytes with its newline, no more.
    let mut ok = vec![b'#'; ANNOTATION_LINE_BYTES_MAX - 2];
    ok.extend_from_slice(b"\r\n");
    ok.extend_from_slice(&resp(&[b"PING"]));
    let (cmds, _, end) = read_all(&mut reader(&ok));
    assert!(end.is_ok());
    assert_eq!(cmds.len(), 1);
    let mut long = vec![b'#'; ANNOTATION_LINE_BYTES_MAX];
    long.extend_from_slice(b"\r\n");
    assert!(is_bad_format(&outcome(&long)));
    // Counts longer than any real one.
    let digits = "1".repeat(40);
    assert!(is_bad_format(&outcome(format!("*{digits}\r\n").as_bytes())));
    assert!(is_bad_format(&outcome(format!("*1\r\n${digits}\r\n").as_bytes())));
    assert!(is_bad_format(&outcome(format!("*1\r\n${digits}").as_bytes())));
}

#[test]
fn limits_are_checked_before_allocating() {
    let limits = ReadLimits { argc_max: 3, bulk_len_max: 10 };
    let read = |bytes: &[u8]| {
        let mut r = CommandReader::new(Cursor::new(bytes), 0, None, limits);
        read_all(&mut r).2
    };
    assert!(read(&resp(&[b"a", b"b", b"c"])).is_ok());
    assert!(is_bad_format(&read(&resp(&[b"a", b"b", b"c", b"d"]))));
    assert!(read(&resp(&[b"0123456789"])).is_ok());
    assert!(is_bad_format(&read(&resp(&[b"0123456789x"]))));
    assert!(is_bad_format(&read(b"*4294967296\r\n")));
}

#[test]
fn huge_claimed_lengths_on_short_inputs_are_truncations_without_allocating() {
    let limits = ReadLimits { argc_max: u64::MAX, bulk_len_max: u64::MAX };
    // 1 TiB claimed, three bytes present: the length is known, nothing is reserved.
    let s = b"*1\r\n$1099511627776\r\nabc";
    let mut r = CommandReader::new(Cursor::new(&s[..]), 0, Some(s.len() as u64), limits);
    assert!(matches!(r.next_command(), Err(ReadError::Truncated)));
    // Unknown length: at most 1 MiB is reserved up front, and the bytes run out first.
    let mut r = CommandReader::new(Cursor::new(&s[..]), 0, None, limits);
    assert!(matches!(r.next_command(), Err(ReadError::Truncated)));
    // A huge argument count is not preallocated either.
    let s = b"*4000000000\r\n$4\r\nPING\r\n";
    let mut r = CommandReader::new(Cursor::new(&s[..]), 0, None, limits);
    assert!(matches!(r.next_command(), Err(ReadError::Truncated)));
}

#[test]
fn a_large_value_reads_whole() {
    let value = vec![b'v'; 3 << 20];
    let s = resp(&[b"SET", b"k", &value]);
    for input_len in [None, Some(s.len() as u64)] {
        let input = BufReader::with_capacity(4096, Cursor::new(&s[..]));
        let mut r = CommandReader::new(input, 0, input_len, ReadLimits::default());
        let argv = r.next_command().unwrap().unwrap();
        assert_eq!(argv[2].len(), value.len());
        assert!(argv[2].iter().all(|&b| b == b'v'));
        assert!(r.next_command().unwrap().is_none());
    }
}

#[test]
fn read_errors_surface_as_io() {
    struct Failing;
    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::other("disk on fire"))
        }
    }
    let mut r = CommandReader::new(BufReader::new(Failing), 0, None, ReadLimits::default());
    assert!(matches!(r.next_command(), Err(ReadError::Io(e)) if e.to_string() == "disk on fire"));
}
