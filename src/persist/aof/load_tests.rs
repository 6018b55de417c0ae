//! Unit tests of the start-up load, on real files in temporary directories: base and incrs,
//! RDB bases and preambles, MULTI/EXEC, truncated tails (tolerated only in the last file, and
//! cut on disk), bad formats, the upgrade of an old single-file AOF.

use super::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

const F: &str = "appendonly.aof";
const D: &str = "appendonlydir";

/// A fresh directory under the system temp dir (the server's `dir`), removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("ferrokey-aofload-{tag}-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(path.join(D)).unwrap();
        TempDir(path)
    }

    fn aof(&self, name: &str) -> PathBuf {
        self.0.join(D).join(name)
    }

    fn write(&self, name: &str, bytes: &[u8]) {
        fs::write(self.aof(name), bytes).unwrap();
    }

    fn manifest(&self, text: &str) {
        self.write("appendonly.aof.manifest", text.as_bytes());
    }

    fn len(&self, name: &str) -> u64 {
        fs::metadata(self.aof(name)).unwrap().len()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn cmd(words: &str) -> Vec<u8> {
    let argv: Vec<&str> = words.split(' ').collect();
    let mut out = format!("*{}\r\n", argv.len()).into_bytes();
    for a in argv {
        out.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
    out
}

fn cmds(list: &[&str]) -> Vec<u8> {
    list.iter().flat_map(|c| cmd(c)).collect()
}

/// A stand-in RDB: `REDIS0011`, a 4-byte length, that many payload bytes. The loader reads
/// exactly that much, as the real one stops right after its checksum.
fn fake_rdb(payload: &str) -> Vec<u8> {
    let mut out = b"REDIS0011".to_vec();
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload.as_bytes());
    out
}

/// What the callbacks saw.
#[derive(Default)]
struct Seen {
    rdbs: Vec<String>,
    commands: Vec<String>,
}

fn load(dir: &TempDir, load_truncated: bool) -> (Result<LoadOutcome, LoadError>, Seen) {
    let mut seen = Seen::default();
    let mut rdbs = Vec::new();
    let mut commands = Vec::new();
    let opts = LoadOpts { load_truncated, limits: ReadLimits::default() };
    let mut load_rdb = |r: &mut dyn Read| -> Result<(), String> {
        let mut header = [0u8; 13];
        r.read_exact(&mut header).map_err(|e| format!("rdb: {e}"))?;
        if &header[..5] != b"REDIS" {
            return Err("Wrong signature trying to load DB from file".into());
        }
        let len = u32::from_le_bytes(header[9..13].try_into().unwrap()) as usize;
        let mut payload = vec![0u8; len];
        r.read_exact(&mut payload).map_err(|e| format!("Short read: {e}"))?;
        let payload = String::from_utf8(payload).unwrap();
        if payload == "corrupt" {
            return Err("Internal error in RDB reading offset 0, function at rdb.c:1 -> bad".into());
        }
        rdbs.push(payload);
        Ok(())
    };
    let mut exec = |argv: Vec<Bytes>| -> Result<(), ExecError> {
        let words: Vec<String> =
            argv.iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect();
        if words[0] == "NOSUCH" {
            return Err(ExecError::UnknownCommand);
        }
        if words[0] == "FATAL" {
            return Err(ExecError::Fatal("fatal from exec".into()));
        }
        commands.push(words.join(" "));
        Ok(())
    };
    let result = load_dir(&dir.0, D, F, opts, &mut load_rdb, &mut exec);
    seen.rdbs = rdbs;
    seen.commands = commands;
    (result, seen)
}

fn ok(dir: &TempDir, load_truncated: bool) -> (LoadOutcome, Seen) {
    let (result, seen) = load(dir, load_truncated);
    (result.unwrap_or_else(|e| panic!("load failed: {e}")), seen)
}

fn err(dir: &TempDir, load_truncated: bool) -> LoadError {
    load(dir, load_truncated).0.expect_err("load should fail")
}

const TWO_INCRS: &str = "file appendonly.aof.1.base.aof seq 1 type b\n\
                         file appendonly.aof.1.incr.aof seq 1 type h\n\
                         file appendonly.aof.2.incr.aof seq 2 type i\n\
                         file appendonly.aof.3.incr.aof seq 3 type i\n";

fn unexpected_eof(name: &str) -> String {
    format!(
        "Unexpected end of file reading the append only file {name}. You can: 1) Make a backup of your AOF file, then use ./valkey-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server."
    )
}

fn bad_format(name: &str) -> String {
    format!(
        "Bad file format reading the append only file {name}: make a backup of your AOF file, then use ./valkey-check-aof --fix <filename.manifest>"
    )
}

#[test]
fn base_then_incrs_in_manifest_order() {
    let dir = TempDir::new("order");
    dir.manifest(TWO_INCRS);
    let base = [b"#TS:1700000000\r\n".to_vec(), cmds(&["SELECT 0", "SET a 1"])].concat();
    dir.write("appendonly.aof.1.base.aof", &base);
    dir.write("appendonly.aof.1.incr.aof", &cmds(&["SET history never-loaded"]));
    dir.write("appendonly.aof.2.incr.aof", &cmds(&["SET b 2", "INCR a"]));
    dir.write("appendonly.aof.3.incr.aof", &cmds(&["DEL b"]));
    let (out, seen) = ok(&dir, false);
    assert_eq!(out.status, AofStatus::Ok);
    assert_eq!(seen.commands, ["SELECT 0", "SET a 1", "SET b 2", "INCR a", "DEL b"]);
    assert_eq!(out.commands, 5);
    assert_eq!(out.base_size, base.len() as u64);
    let incrs = dir.len("appendonly.aof.2.incr.aof") + dir.len("appendonly.aof.3.incr.aof");
    assert_eq!(out.total_size, base.len() as u64 + incrs);
    assert_eq!(out.manifest, Manifest::parse(TWO_INCRS.as_bytes()).unwrap());
    assert!(!out.upgraded);
}

#[test]
fn an_rdb_base_goes_to_the_rdb_callback() {
    let dir = TempDir::new("rdbbase");
    dir.manifest(
        "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n",
    );
    dir.write("appendonly.aof.2.base.rdb", &fake_rdb("snapshot"));
    dir.write("appendonly.aof.2.incr.aof", &cmds(&["SELECT 0", "SET k v"]));
    let (out, seen) = ok(&dir, false);
    assert_eq!(out.status, AofStatus::Ok);
    assert_eq!(seen.rdbs, ["snapshot"]);
    assert_eq!(seen.commands, ["SELECT 0", "SET k v"]);
}

#[test]
fn commands_after_an_rdb_preamble_are_replayed() {
    let dir = TempDir::new("preamble");
    dir.manifest("file appendonly.aof.1.base.rdb seq 1 type b\n");
    let base = [fake_rdb("pre"), cmds(&["SET after rdb"])].concat();
    dir.write("appendonly.aof.1.base.rdb", &base);
    let (out, seen) = ok(&dir, false);
    assert_eq!((seen.rdbs.len(), seen.commands.len()), (1, 1));
    assert_eq!(seen.commands, ["SET after rdb"]);
    assert_eq!(out.total_size, base.len() as u64);
}

#[test]
fn a_failed_rdb_aborts_with_valkeys_text() {
    let dir = TempDir::new("rdbfail");
    dir.manifest("file appendonly.aof.1.base.rdb seq 1 type b\n");
    dir.write("appendonly.aof.1.base.rdb", &fake_rdb("corrupt"));
    assert_eq!(
        err(&dir, true),
        LoadError {
            status: AofStatus::Failed,
            message:
                "Error reading the RDB base file appendonly.aof.1.base.rdb, AOF loading aborted"
                    .into()
        }
    );
    // A truncated RDB is not a truncated command log: fatal even with aof-load-truncated.
    let rdb = fake_rdb("snapshot");
    dir.write("appendonly.aof.1.base.rdb", &rdb[..rdb.len() - 2]);
    assert_eq!(err(&dir, true).status, AofStatus::Failed);
}

#[test]
fn a_truncated_command_after_an_rdb_cuts_back_to_the_rdbs_end() {
    let dir = TempDir::new("rdbtail");
    dir.manifest("file appendonly.aof.1.base.rdb seq 1 type b\n");
    let rdb = fake_rdb("snapshot");
    let tail = cmd("SET x y");
    dir.write("appendonly.aof.1.base.rdb", &[rdb.clone(), tail[..5].to_vec()].concat());
    let (out, seen) = ok(&dir, true);
    assert_eq!(out.status, AofStatus::Truncated);
    assert_eq!(seen.rdbs, ["snapshot"]);
    assert_eq!(dir.len("appendonly.aof.1.base.rdb"), rdb.len() as u64);
}

#[test]
fn nothing_listed_is_not_exist() {
    let dir = TempDir::new("notexist");
    let (out, seen) = ok(&dir, false);
    assert_eq!(out.status, AofStatus::NotExist);
    assert!(out.manifest.is_empty());
    assert!(seen.commands.is_empty());
    dir.manifest("# only a comment\n");
    assert_eq!(ok(&dir, false).0.status, AofStatus::NotExist);
    fs::remove_dir_all(dir.0.join(D)).unwrap();
    assert_eq!(ok(&dir, false).0.status, AofStatus::NotExist);
}

#[test]
fn empty_files_are_empty_and_an_empty_incr_is_fine() {
    let dir = TempDir::new("empty");
    dir.manifest(
        "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n",
    );
    dir.write("appendonly.aof.1.base.rdb", b"");
    dir.write("appendonly.aof.1.incr.aof", b"");
    let (out, _) = ok(&dir, false);
    assert_eq!((out.status, out.total_size), (AofStatus::Empty, 0));
    dir.write("appendonly.aof.1.base.rdb", &fake_rdb("x"));
    let (out, seen) = ok(&dir, false);
    assert_eq!(out.status, AofStatus::Ok, "the empty last incr counts as loaded");
    assert_eq!(seen.rdbs, ["x"]);
    dir.write("appendonly.aof.1.base.rdb", b"");
    dir.write("appendonly.aof.1.incr.aof", &cmd("SET a b"));
    let (out, seen) = ok(&dir, false);
    assert_eq!((out.status, out.base_size), (AofStatus::Ok, 0));
    assert_eq!(seen.commands, ["SET a b"]);
}

#[test]
fn a_listed_file_missing_on_disk_is_fatal() {
    let dir = TempDir::new("missing");
    dir.manifest(TWO_INCRS);
    dir.write("appendonly.aof.1.base.aof", &cmd("SET a 1"));
    dir.write("appendonly.aof.2.incr.aof", &cmd("SET a 2"));
    let e = err(&dir, true);
    assert_eq!(e.status, AofStatus::Failed);
    assert_eq!(
        e.message,
        "Unable to obtain the AOF file appendonly.aof.3.incr.aof length. stat: No such file or directory"
    );
}

#[test]
fn a_bad_manifest_is_fatal_with_its_reason() {
    let dir = TempDir::new("badmanifest");
    dir.manifest("file a seq 1 type b\nfile b seq 2 type b\n");
    assert_eq!(err(&dir, true).message, "Found duplicate base file information");
}

#[test]
fn truncation_at_every_byte_of_the_last_file() {
    let list = ["SET a 1", "MULTI", "SET b 2", "INCR a", "EXEC", "DEL a"];
    let incr = cmds(&list);
    let ends: Vec<usize> = list
        .iter()
        .scan(0, |at, c| {
            *at += cmd(c).len();
            Some(*at)
        })
        .collect();
    let (multi_start, multi_end, exec_end) = (ends[0], ends[1], ends[4]);
    let dir = TempDir::new("everycut");
    dir.manifest(TWO_INCRS);
    dir.write("appendonly.aof.1.base.aof", &cmd("SET base 1"));
    dir.write("appendonly.aof.2.incr.aof", &cmd("SET mid 1"));
    for cut in 0..=incr.len() {
        dir.write("appendonly.aof.3.incr.aof", &incr[..cut]);
        let (out, seen) = ok(&dir, true);
        let whole = ends.iter().filter(|&&e| e <= cut).count();
        // Where the file must end, and which of its commands reached `exec`.
        let (valid, passed) = if cut > multi_start && cut < exec_end {
            // Inside the transaction: back to before MULTI; MULTI passed once read whole.
            (multi_start, if cut >= multi_end { 2 } else { 1 })
        } else {
            (ends[..whole].last().copied().unwrap_or(0), whole)
        };
        let status = if valid == cut { AofStatus::Ok } else { AofStatus::Truncated };
        assert_eq!(out.status, status, "cut {cut}");
        assert_eq!(dir.len("appendonly.aof.3.incr.aof"), valid as u64, "cut {cut}");
        assert_eq!(seen.commands[..2], ["SET base 1", "SET mid 1"], "cut {cut}");
        assert_eq!(seen.commands[2..], list[..passed], "cut {cut}");
        let total = dir.len("appendonly.aof.1.base.aof")
            + dir.len("appendonly.aof.2.incr.aof")
            + valid as u64;
        assert_eq!(out.total_size, total, "cut {cut}");
    }
}

#[test]
fn truncation_without_aof_load_truncated_is_fatal_and_leaves_the_file() {
    let dir = TempDir::new("notolerate");
    dir.manifest("file appendonly.aof.1.incr.aof seq 1 type i\n");
    let bytes = [cmd("SET a 1"), cmd("SET b 2")[..7].to_vec()].concat();
    dir.write("appendonly.aof.1.incr.aof", &bytes);
    let e = err(&dir, false);
    assert_eq!(e.status, AofStatus::Failed);
    assert_eq!(e.message, unexpected_eof("appendonly.aof.1.incr.aof"));
    assert_eq!(dir.len("appendonly.aof.1.incr.aof"), bytes.len() as u64);
}

#[test]
fn truncation_in_a_file_that_is_not_the_last_is_fatal_and_leaves_it() {
    let dir = TempDir::new("notlast");
    dir.manifest(TWO_INCRS);
    dir.write("appendonly.aof.1.base.aof", &cmd("SET a 1"));
    let cut = [cmd("SET b 1"), cmd("SET c 1")[..9].to_vec()].concat();
    dir.write("appendonly.aof.2.incr.aof", &cut);
    dir.write("appendonly.aof.3.incr.aof", &cmd("SET d 1"));
    let e = err(&dir, true);
    assert_eq!(e.message, "Fatal error: the truncated file is not the last file");
    assert_eq!(dir.len("appendonly.aof.2.incr.aof"), cut.len() as u64);
    assert_eq!(err(&dir, false).message, unexpected_eof("appendonly.aof.2.incr.aof"));
    // A base that is not the last file: the same.
    dir.write("appendonly.aof.2.incr.aof", &cmd("SET b 1"));
    dir.write("appendonly.aof.1.base.aof", &cmd("SET a 1")[..3]);
    assert_eq!(err(&dir, true).message, "Fatal error: the truncated file is not the last file");
}

#[test]
fn a_multi_left_open_in_a_middle_file_is_fatal() {
    let dir = TempDir::new("multimid");
    dir.manifest(TWO_INCRS);
    dir.write("appendonly.aof.1.base.aof", &cmd("SET a 1"));
    dir.write("appendonly.aof.2.incr.aof", &cmds(&["MULTI", "SET b 1"]));
    dir.write("appendonly.aof.3.incr.aof", &cmds(&["SET c 1", "EXEC"]));
    assert_eq!(err(&dir, true).message, "Fatal error: the truncated file is not the last file");
    assert_eq!(err(&dir, false).message, unexpected_eof("appendonly.aof.2.incr.aof"));
}

#[test]
fn a_whole_transaction_runs_in_order() {
    let dir = TempDir::new("multiok");
    dir.manifest("file appendonly.aof.1.incr.aof seq 1 type i\n");
    dir.write(
        "appendonly.aof.1.incr.aof",
        &cmds(&["multi", "SET a 1", "MULTI", "INCR a", "exec", "SET z 0"]),
    );
    let (out, seen) = ok(&dir, false);
    assert_eq!(out.status, AofStatus::Ok);
    assert_eq!(seen.commands, ["multi", "SET a 1", "MULTI", "INCR a", "exec", "SET z 0"]);
}

#[test]
fn bad_format_is_fatal_in_any_file() {
    let dir = TempDir::new("badformat");
    dir.manifest(TWO_INCRS);
    dir.write("appendonly.aof.1.base.aof", &[cmd("SET a 1"), b"$3\r\nfoo\r\n".to_vec()].concat());
    dir.write("appendonly.aof.2.incr.aof", &cmd("SET b 1"));
    dir.write("appendonly.aof.3.incr.aof", &cmd("SET c 1"));
    assert_eq!(err(&dir, true).message, bad_format("appendonly.aof.1.base.aof"));
    dir.write("appendonly.aof.1.base.aof", &cmd("SET a 1"));
    dir.write("appendonly.aof.3.incr.aof", b"*1\r\n$4\r\nPINGxx");
    let e = err(&dir, true);
    assert_eq!((e.status, e.message), (AofStatus::Failed, bad_format("appendonly.aof.3.incr.aof")));
    assert_eq!(dir.len("appendonly.aof.3.incr.aof"), 14, "a bad file is never cut");
}

#[test]
fn exec_errors_are_fatal() {
    let dir = TempDir::new("exec");
    dir.manifest("file appendonly.aof.1.incr.aof seq 1 type i\n");
    dir.write("appendonly.aof.1.incr.aof", &cmds(&["SET a 1", "NOSUCH x"]));
    assert_eq!(
        err(&dir, true).message,
        "Unknown command 'NOSUCH' reading the append only file appendonly.aof.1.incr.aof"
    );
    dir.write("appendonly.aof.1.incr.aof", &cmds(&["FATAL x"]));
    assert_eq!(err(&dir, true).message, "fatal from exec");
}

#[test]
fn a_cut_annotation_at_the_end_of_the_last_file_is_trimmed() {
    let dir = TempDir::new("annotation");
    dir.manifest("file appendonly.aof.1.incr.aof seq 1 type i\n");
    let whole = [cmd("SET a 1"), b"#TS:1700000000\r\n".to_vec(), cmd("SET b 2")].concat();
    dir.write("appendonly.aof.1.incr.aof", &[whole.clone(), b"#TS:17".to_vec()].concat());
    let (out, seen) = ok(&dir, false);
    assert_eq!(out.status, AofStatus::Ok);
    assert_eq!(seen.commands, ["SET a 1", "SET b 2"]);
    assert_eq!(dir.len("appendonly.aof.1.incr.aof"), whole.len() as u64);
    assert_eq!(out.total_size, whole.len() as u64);
}

#[test]
fn an_old_single_file_aof_is_moved_into_the_directory() {
    let dir = TempDir::new("upgrade");
    fs::remove_dir_all(dir.0.join(D)).unwrap();
    let old = [fake_rdb("old"), cmds(&["SET tail 1"])].concat();
    fs::write(dir.0.join(F), &old).unwrap();
    let (out, seen) = ok(&dir, false);
    assert!(out.upgraded);
    assert_eq!(out.status, AofStatus::Ok);
    assert_eq!(
        (seen.rdbs, seen.commands),
        (vec!["old".to_string()], vec!["SET tail 1".to_string()])
    );
    assert!(!dir.0.join(F).exists());
    assert_eq!(fs::read(dir.aof(F)).unwrap(), old);
    assert_eq!(
        fs::read_to_string(dir.aof("appendonly.aof.manifest")).unwrap(),
        "file appendonly.aof seq 1 type b\n"
    );
    assert_eq!((out.manifest.curr_base_seq, out.total_size), (1, old.len() as u64));
    // The next start finds the directory and does not upgrade again.
    let (out, seen) = ok(&dir, false);
    assert!(!out.upgraded);
    assert_eq!(seen.commands, ["SET tail 1"]);
}

#[test]
fn an_upgrade_interrupted_before_the_move_is_finished() {
    let dir = TempDir::new("upgrade-crash");
    dir.manifest("file appendonly.aof seq 1 type b\n");
    fs::write(dir.0.join(F), cmd("SET a 1")).unwrap();
    let (out, seen) = ok(&dir, false);
    assert!(out.upgraded);
    assert_eq!(seen.commands, ["SET a 1"]);
    assert!(dir.aof(F).is_file() && !dir.0.join(F).exists());
}

#[test]
fn an_old_file_beside_a_real_directory_is_left_alone() {
    let dir = TempDir::new("no-upgrade");
    dir.manifest("file appendonly.aof.1.incr.aof seq 1 type i\n");
    dir.write("appendonly.aof.1.incr.aof", &cmd("SET new 1"));
    fs::write(dir.0.join(F), cmd("SET old 1")).unwrap();
    let m = Manifest::parse(b"file appendonly.aof.1.incr.aof seq 1 type i\n").unwrap();
    assert!(!needs_upgrade(&dir.0, &dir.0.join(D), F, &m));
    let (out, seen) = ok(&dir, false);
    assert!(!out.upgraded);
    assert_eq!(seen.commands, ["SET new 1"]);
    assert!(dir.0.join(F).exists());
    // Nor is a directory named like the old file.
    let other = TempDir::new("no-upgrade-dir");
    fs::create_dir(other.0.join(F)).unwrap();
    assert!(!needs_upgrade(&other.0, &other.0.join(D), F, &Manifest::default()));
}
