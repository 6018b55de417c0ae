//! Unit tests of the manifest: text round trips, Valkey's parse errors, quoting, the
//! sequence bookkeeping of rewrites, and the crash-safe write.

use super::*;
use std::path::PathBuf;

fn info(name: &str, seq: i64, kind: AofFileType) -> AofInfo {
    AofInfo { name: name.into(), seq, kind }
}

fn parse(text: &str) -> Result<Manifest, ManifestError> {
    Manifest::parse(text.as_bytes())
}

fn reason(text: &str) -> String {
    parse(text).expect_err(text).reason
}

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir()
            .join(format!("ferrokey-manifest-{tag}-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[test]
fn text_is_valkeys_and_round_trips() {
    let m = Manifest {
        base: Some(info("appendonly.aof.2.base.rdb", 2, AofFileType::Base)),
        incrs: vec![
            info("appendonly.aof.4.incr.aof", 4, AofFileType::Incr),
            info("appendonly.aof.5.incr.aof", 5, AofFileType::Incr),
        ],
        history: vec![
            info("appendonly.aof.1.incr.aof", 1, AofFileType::History),
            info("appendonly.aof.1.base.rdb", 1, AofFileType::History),
        ],
        curr_base_seq: 2,
        curr_incr_seq: 5,
    };
    let text = m.to_text();
    assert_eq!(
        String::from_utf8(text.clone()).unwrap(),
        "file appendonly.aof.2.base.rdb seq 2 type b\n\
         file appendonly.aof.1.incr.aof seq 1 type h\n\
         file appendonly.aof.1.base.rdb seq 1 type h\n\
         file appendonly.aof.4.incr.aof seq 4 type i\n\
         file appendonly.aof.5.incr.aof seq 5 type i\n"
    );
    assert_eq!(Manifest::parse(&text).unwrap(), m);
}

#[test]
fn parse_accepts_keys_in_any_order_comments_crlf_and_unknown_keys() {
    let m = parse(
        "# written by hand\n\
         TYPE b SEQ 7 FILE base.rdb\r\n\
         seq 3 type i file a.incr extra value\n\
         #another comment\n\
         type i file b.incr seq 9\n",
    )
    .unwrap();
    assert_eq!(m.base, Some(info("base.rdb", 7, AofFileType::Base)));
    assert_eq!(
        m.incrs,
        vec![info("a.incr", 3, AofFileType::Incr), info("b.incr", 9, AofFileType::Incr)]
    );
    assert_eq!((m.curr_base_seq, m.curr_incr_seq), (7, 9));
    assert!(m.history.is_empty());
}

#[test]
fn parse_reads_seq_like_atoll_and_type_by_its_first_byte() {
    let m = parse("file a seq 12abc type base\nfile b seq +3 type hist\n").unwrap();
    assert_eq!(m.base, Some(info("a", 12, AofFileType::Base)));
    assert_eq!(m.history, vec![info("b", 3, AofFileType::History)]);
    let m = parse("file a seq -5 type b\n").unwrap();
    assert_eq!(m.curr_base_seq, -5);
    let m = parse("file a seq 99999999999999999999 type b\n").unwrap();
    assert_eq!(m.curr_base_seq, i64::MAX);
}

#[test]
fn only_comments_is_an_empty_manifest_not_an_error() {
    let m = parse("# nothing here\n").unwrap();
    assert!(m.is_empty());
    assert_eq!(m, Manifest::default());
}

#[test]
fn parse_errors_have_valkeys_texts() {
    const INVALID: &str = "Invalid AOF manifest file format";
    let cases: &[(&str, &str)] = &[
        ("", "Found an empty AOF manifest"),
        ("file a seq 1 type b", "The AOF manifest file contains too long line"),
        ("\n", INVALID),
        ("   \t \n", INVALID),
        ("file a seq 1 type\n", INVALID),
        ("file a seq 1\n", INVALID),
        ("file a seq 1 type b x\n", INVALID),
        ("file \"a seq 1 type b\n", INVALID),
        ("file 'a seq 1 type b\n", INVALID),
        ("file \"a\"b seq 1 type b\n", INVALID),
        ("file a seq abc type b\n", INVALID),
        ("file a seq 0 type b\n", INVALID),
        ("file a seq 1 type \"\"\n", INVALID),
        ("name a seq 1 type b\n", INVALID),
        ("file a/b seq 1 type b\n", "File can't be a path, just a filename"),
        ("file a\\\\b seq 1 type b\n", "File can't be a path, just a filename"),
        ("file \"a\\\\b\" seq 1 type b\n", "File can't be a path, just a filename"),
        ("file a seq 1 type x\n", "Unknown AOF file type"),
        ("file a seq 1 type B\n", "Unknown AOF file type"),
        ("file a seq 1 type b\nfile c seq 2 type b\n", "Found duplicate base file information"),
        ("file a seq 2 type i\nfile c seq 2 type i\n", "Found a non-monotonic sequence number"),
        ("file a seq 3 type i\nfile c seq 1 type i\n", "Found a non-monotonic sequence number"),
        ("file a seq -1 type i\n", "Found a non-monotonic sequence number"),
    ];
    for (text, want) in cases {
        assert_eq!(reason(text), *want, "manifest {text:?}");
    }
}

#[test]
fn parse_errors_name_the_line_valkey_names() {
    let e = parse("# c\nfile a seq 1 type b\n  file c seq 2 type b \n").unwrap_err();
    assert_eq!(e.line, Some((3, "file c seq 2 type b".to_string())));
    assert_eq!(e.to_string(), "Found duplicate base file information");
    let e = parse("file a seq 1 type b").unwrap_err();
    assert_eq!(e.line, None);
}

#[test]
fn lines_are_read_in_chunks_of_1024_bytes() {
    // A line of exactly 1024 bytes (newline included) is accepted...
    let name = "n".repeat(1024 - "file  seq 1 type b\n".len());
    let line = format!("file {name} seq 1 type b\n");
    assert_eq!(line.len(), MANIFEST_LINE_BYTES_MAX);
    assert_eq!(parse(&line).unwrap().base.unwrap().name, name.as_str());
    // ...one byte more is too long.
    let line = format!("file {name}x seq 1 type b\n");
    assert_eq!(reason(&line), "The AOF manifest file contains too long line");
    // A long comment is skipped 1024 bytes at a time: its rest is read as a line of its own.
    let text = format!("#{}\nfile a seq 1 type b\n", "x".repeat(1500));
    let e = parse(&text).unwrap_err();
    assert_eq!(
        (e.reason.as_str(), e.line.map(|l| l.0)),
        ("Invalid AOF manifest file format", Some(2))
    );
    let text = format!("#{}\nfile a seq 1 type b\n", "x".repeat(1000));
    assert!(parse(&text).unwrap().base.is_some());
}

#[test]
fn a_nul_byte_ends_the_line_as_in_c() {
    assert_eq!(reason("file a seq 1 type b\0\n"), "The AOF manifest file contains too long line");
    let m = parse("file \"ab\\x00cd\" seq 1 type b\n").unwrap();
    assert_eq!(m.base.unwrap().name, "ab");
}

#[test]
fn names_that_need_quoting_are_written_quoted_and_read_back() {
    let odd: &[&[u8]] = &[
        b"with space",
        b"q\"uote",
        b"tab\tnl\ncr\r",
        b"bell\x07bs\x08",
        b"vt\x0bff\x0c",
        b"high\xff\x80bytes",
        b"ctl\x01\x1f\x7f",
    ];
    for name in odd {
        let m = Manifest {
            base: Some(AofInfo {
                name: OsString::from_vec(name.to_vec()),
                seq: 1,
                kind: AofFileType::Base,
            }),
            curr_base_seq: 1,
            ..Manifest::default()
        };
        let text = m.to_text();
        assert_eq!(text[5], b'"', "{:?} is quoted", String::from_utf8_lossy(&text));
        assert_eq!(Manifest::parse(&text).unwrap(), m, "{:?}", String::from_utf8_lossy(&text));
    }
    let plain =
        Manifest { base: Some(info("plain.rdb", 1, AofFileType::Base)), ..Manifest::default() };
    assert_eq!(plain.to_text(), b"file plain.rdb seq 1 type b\n");
}

#[test]
fn names_follow_valkeys_rules() {
    assert_eq!(base_name("appendonly.aof", 3, true), "appendonly.aof.3.base.rdb");
    assert_eq!(base_name("appendonly.aof", 3, false), "appendonly.aof.3.base.aof");
    assert_eq!(incr_name("appendonly.aof", 12), "appendonly.aof.12.incr.aof");
    assert_eq!(manifest_name("appendonly.aof"), "appendonly.aof.manifest");
    assert_eq!(temp_manifest_name("appendonly.aof"), "temp-appendonly.aof.manifest");
    assert_eq!(temp_incr_name("appendonly.aof"), "temp-appendonly.aof.incr");
    assert_eq!(temp_rewrite_name(42), "temp-rewriteaof-42.aof");
    assert_eq!(temp_rewrite_bg_name(42), "temp-rewriteaof-bg-42.aof");
}

#[test]
fn rewrites_move_old_files_to_history_in_valkeys_order() {
    const F: &str = "appendonly.aof";
    let mut m = Manifest::default();
    // Start-up with an empty directory: a base, then the incr to append to.
    assert_eq!(m.next_base(F, true).name, "appendonly.aof.1.base.rdb");
    assert_eq!(m.last_incr_or_new(F).name, "appendonly.aof.1.incr.aof");
    assert_eq!(m.last_incr_or_new(F).seq, 1, "the existing incr is reused");
    // A rewrite starts: a new incr collects the writes made during it.
    assert_eq!(m.next_incr(F).name, "appendonly.aof.2.incr.aof");
    // It ends.
    let base = m.mark_rewritten(F, false);
    assert_eq!(base, info("appendonly.aof.2.base.aof", 2, AofFileType::Base));
    assert_eq!(
        String::from_utf8(m.to_text()).unwrap(),
        "file appendonly.aof.2.base.aof seq 2 type b\n\
         file appendonly.aof.1.incr.aof seq 1 type h\n\
         file appendonly.aof.1.base.rdb seq 1 type h\n\
         file appendonly.aof.2.incr.aof seq 2 type i\n"
    );
    // A failed rewrite left extra incrs; the next successful one retires all but the last.
    m.next_incr(F);
    m.next_incr(F);
    m.next_base(F, true);
    m.mark_incrs_as_history(true);
    let names: Vec<_> = m.history.iter().map(|i| i.name.to_string_lossy().into_owned()).collect();
    assert_eq!(
        names,
        [
            "appendonly.aof.2.incr.aof",
            "appendonly.aof.3.incr.aof",
            "appendonly.aof.2.base.aof",
            "appendonly.aof.1.incr.aof",
            "appendonly.aof.1.base.rdb",
        ]
    );
    assert!(m.history.iter().all(|i| i.kind == AofFileType::History));
    assert_eq!(m.incrs, vec![info("appendonly.aof.4.incr.aof", 4, AofFileType::Incr)]);
    assert_eq!((m.curr_base_seq, m.curr_incr_seq), (3, 4));
    // With the AOF off, every incr is covered by the rewrite.
    m.mark_incrs_as_history(false);
    assert!(m.incrs.is_empty());
    assert_eq!(m.history.len(), 6);
    // The history is handed out for deletion and leaves the manifest.
    let gone = m.take_history();
    assert_eq!(gone.len(), 6);
    assert!(m.history.is_empty());
    assert_eq!(Manifest::parse(&m.to_text()).unwrap().base, m.base);
}

#[test]
fn persist_writes_the_manifest_through_a_temp_file() {
    let dir = TempDir::new("persist");
    let mut m = Manifest::default();
    m.next_base("appendonly.aof", true);
    m.next_incr("appendonly.aof");
    m.persist(&dir.0, "appendonly.aof").unwrap();
    let written = fs::read(dir.0.join("appendonly.aof.manifest")).unwrap();
    assert_eq!(written, m.to_text());
    assert!(!dir.0.join("temp-appendonly.aof.manifest").exists());
    assert_eq!(Manifest::load(&dir.0, "appendonly.aof").unwrap(), Some(m.clone()));
    // Rewriting replaces it whole.
    m.next_incr("appendonly.aof");
    m.persist(&dir.0, "appendonly.aof").unwrap();
    assert_eq!(Manifest::load(&dir.0, "appendonly.aof").unwrap(), Some(m));
}

#[test]
fn persist_reports_valkeys_text_when_it_cannot_write() {
    let dir = TempDir::new("persist-fail");
    let missing = dir.0.join("no-such-dir");
    let e = Manifest::default().persist(&missing, "appendonly.aof").unwrap_err();
    assert_eq!(
        e,
        "Can't open the AOF manifest file temp-appendonly.aof.manifest: No such file or directory"
    );
}

#[test]
fn load_is_none_without_directory_or_manifest() {
    let dir = TempDir::new("load");
    assert_eq!(Manifest::load(&dir.0.join("appendonlydir"), "appendonly.aof").unwrap(), None);
    assert_eq!(Manifest::load(&dir.0, "appendonly.aof").unwrap(), None);
    fs::write(dir.0.join("appendonly.aof.manifest"), "file a seq 1 type z\n").unwrap();
    let e = Manifest::load(&dir.0, "appendonly.aof").unwrap_err();
    assert_eq!(e.reason, "Unknown AOF file type");
}
