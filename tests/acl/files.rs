//! Users kept in files, against Valkey 9.1: an aclfile read at start-up (ACL LIST alike),
//! ACL SAVE (the saved text byte for byte), ACL LOAD of valid and invalid files (the error
//! texts, with each server's own path written `ACLFILE`; the users unchanged after an
//! error; the clients of removed users dropped), a bad aclfile stopping the start-up with
//! Valkey's log line, `user` directives in a config file, and a config file with both an
//! aclfile and `user` directives refusing to start.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::clients::check_closed;
use crate::common::diff::{words, Pair};
use crate::common::{free_port, start_valkey, unique_dir, valkey_bin, wait_ready, Server};
use crate::{ours_bin, same_raw, start_ours, Duo};

/// Ferrokey and the oracle, each started with its own aclfile holding `text`.
struct FilePair {
    p: Pair,
    ours: PathBuf,
    theirs: PathBuf,
}

impl FilePair {
    fn start(proto: u8, text: &str) -> FilePair {
        // Paths of the same length, so that the replies that hold them keep equal lengths.
        let dir = unique_dir("aclfile");
        let (ours, theirs) = (dir.join("a/users.acl"), dir.join("b/users.acl"));
        std::fs::create_dir_all(dir.join("a")).unwrap();
        std::fs::create_dir_all(dir.join("b")).unwrap();
        std::fs::write(&ours, text).unwrap();
        std::fs::write(&theirs, text).unwrap();
        let p = Pair::connect(
            start_ours(&["--aclfile", ours.to_str().unwrap()]),
            start_valkey(&["--aclfile", theirs.to_str().unwrap()]),
            proto,
        );
        FilePair { p, ours, theirs }
    }

    /// Both aclfiles now hold `text`.
    fn write(&self, text: &str) {
        std::fs::write(&self.ours, text).unwrap();
        std::fs::write(&self.theirs, text).unwrap();
    }

    /// The line gets the same replies once each server's aclfile path reads `ACLFILE`.
    fn same_line(&mut self, line: &str) {
        let (ours, theirs) = self.p.both(&words(line));
        let ours = String::from_utf8_lossy(&ours).replace(self.ours.to_str().unwrap(), "ACLFILE");
        let theirs =
            String::from_utf8_lossy(&theirs).replace(self.theirs.to_str().unwrap(), "ACLFILE");
        same_raw(self.p.proto, line, ours.as_bytes(), theirs.as_bytes());
    }

    fn same_lines(&mut self, lines: &[&str]) {
        for line in lines {
            self.same_line(line);
        }
    }
}

const USERS: &str = "user alice on >pw ~app:* &news.* +@read -@dangerous\n\
    user bob off #5e884898da28047151d0e56f8dc6292773603d0dd6aabbdd62a11ef721d1542d db=1,2 (+set ~b*)\n\
    user default on nopass ~* &* +@all\n";

#[test]
fn aclfile_users_at_start_up() {
    for proto in [2, 3] {
        let mut f = FilePair::start(proto, USERS);
        f.same_lines(&[
            "ACL LIST",
            "ACL USERS",
            "ACL GETUSER alice",
            "ACL GETUSER bob",
            "CONFIG GET aclfile",
        ]);
        let mut d = Duo::login(&f.p, "alice", "pw");
        d.same_lines(&["ACL WHOAMI", "GET app:1", "GET other", "SET app:1 v", "KEYS *"]);
        let mut d = Duo::connect(&f.p);
        d.same_lines(&["AUTH bob password", "AUTH alice wrong"]);
    }
}

#[test]
fn acl_save_writes_the_same_file() {
    let mut f = FilePair::start(2, USERS);
    f.same_lines(&[
        "ACL SETUSER carol on >x ~c* %R~r:* +get +config|get -@all +@hash resetchannels &c",
        "ACL SETUSER dave on nopass db=3 (~x* +get) (&y %W~w +set)",
        "ACL SETUSER alice reset",
        "ACL DELUSER bob",
        "ACL SAVE",
    ]);
    let ours = std::fs::read_to_string(&f.ours).unwrap();
    let theirs = std::fs::read_to_string(&f.theirs).unwrap();
    assert!(theirs.contains("user carol on #"), "{theirs}");
    assert_eq!(ours, theirs, "the saved aclfile (left: ferrokey, right: valkey 9.1)");
    f.same_lines(&["ACL LOAD", "ACL LIST"]);
}

#[test]
fn acl_load_valid_and_invalid_files() {
    let mut f = FilePair::start(2, USERS);
    for text in [
        "user a on >p\nuser b on nopass ~* +@all\n",
        "user alice on >pw ~* +@all\nuser bob on +nosuch\nuser x y\n",
        "user alice on >pw +nosuch\n",
        "bogus line\n",
        "user\n",
        "user alice on\nuser alice off\n",
        "user bad user here\n",
        "\n# a comment\n\nuser a on\n",
        "user \"quoted user\" on\n",
        "user a (on)\n",
        "user a \"(+get\" \"~x)\"\n",
        "user a ~* ~foo\n",
        "user a on db=x\n",
        "user a on '>p q'\n",
        "   user a on\n",
        "user a on >p\r\nuser c on\r\n",
        "user a on nopass\nuser a2 on (+get ~x) db=4\n\n",
        "user a on nopass\n",
        "",
    ] {
        f.write(text);
        f.same_lines(&["ACL LOAD", "ACL LIST"]);
    }
    // A missing file.
    std::fs::remove_file(&f.ours).unwrap();
    std::fs::remove_file(&f.theirs).unwrap();
    f.same_lines(&["ACL LOAD", "ACL LIST"]);
}

#[test]
fn acl_load_drops_clients_of_removed_users() {
    let mut f = FilePair::start(
        2,
        "user alice on >pw ~* +@all\nuser bob on nopass ~* +@all\nuser carl on nopass ~* +@all\n",
    );
    let mut alice = Duo::login(&f.p, "alice", "pw");
    let mut bob = Duo::login(&f.p, "bob", "x");
    let mut carl = Duo::login(&f.p, "carl", "x");
    f.write("user alice on >pw ~* +@all\nuser bob on nopass ~* -@all +get\n");
    f.same_lines(&["ACL LOAD"]);
    alice.same_line("PING");
    bob.same_lines(&["PING", "GET k"]);
    check_closed(&mut carl, true, "client of the removed user");
    check_closed(&mut alice, false, "client of a user still there");
}

/// Run `bin` with `args` until it exits (at most 10 seconds, else the test fails); its
/// exit status and everything it wrote (stdout then stderr).
fn run_to_exit(bin: &str, args: &[&str]) -> (ExitStatus, String) {
    let dir = unique_dir("acl-exit");
    let (out, err) = (dir.join("stdout"), dir.join("stderr"));
    let mut child = Command::new(bin)
        .args(args)
        .arg("--dir")
        .arg(&dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("spawn server");
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{bin} {args:?} did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = std::fs::read_to_string(&out).unwrap() + &std::fs::read_to_string(&err).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (status, text)
}

/// Valkey's log line holding `needle`, without its `pid:role date time level` prefix.
fn valkey_message(log: &str, needle: &str) -> String {
    let line = log.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("{log}"));
    let at = line.find(needle).unwrap();
    line[at..].to_string()
}

/// Both servers, run with `args` (a config file first, or options), exit non-zero, and
/// ferrokey logs the text of Valkey's log line holding `needle`.
fn both_refuse(args: &[&str], needle: &str) {
    let (theirs_status, theirs) = run_to_exit(&valkey_bin(), args);
    assert!(!theirs_status.success(), "valkey started:\n{theirs}");
    let message = valkey_message(&theirs, needle);
    let (ours_status, ours) = run_to_exit(&ours_bin(), args);
    assert!(!ours_status.success(), "ferrokey started:\n{ours}");
    assert!(ours.contains(&message), "ferrokey's output lacks {message:?}:\n{ours}");
}

#[test]
fn bad_aclfile_aborts_start_up() {
    let dir = unique_dir("acl-bad");
    let bad = dir.join("bad.acl");
    std::fs::write(&bad, "user alice on >pw ~* +@all\nuser bob on +nosuch\n").unwrap();
    let port = free_port().to_string();
    let common = ["--port", &port, "--bind", "127.0.0.1", "--save", ""];
    let with = |file: &Path| {
        let mut args = common.to_vec();
        args.extend(["--aclfile", file.to_str().unwrap()]);
        args.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let args = with(&bad);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    both_refuse(&args, "Aborting Valkey startup because of ACL errors");
    let missing = with(&dir.join("missing.acl"));
    let missing: Vec<&str> = missing.iter().map(String::as_str).collect();
    both_refuse(&missing, "Aborting Valkey startup because of ACL errors");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Start `bin` with the config file `conf` on a free port.
fn start_with_conf(bin: &str, conf: &Path) -> Server {
    let dir = unique_dir("acl-conf");
    let port = free_port();
    let child = Command::new(bin)
        .arg(conf)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", ""])
        .arg("--dir")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn server");
    let mut server = Server { child, port, dir };
    if let Err(e) = wait_ready(&mut server.child, port) {
        panic!("{bin} {} did not start: {e:?}", conf.display());
    }
    server
}

#[test]
fn user_directives_in_a_config_file() {
    let dir = unique_dir("acl-conf-users");
    let conf = dir.join("server.conf");
    std::fs::write(
        &conf,
        "user alice on >pw ~* +@all\nuser bob on nopass resetchannels &n (+get ~x) db=2\n\
         user default on nopass ~* &* +@all\n",
    )
    .unwrap();
    let mut p = Pair::connect(
        start_with_conf(&ours_bin(), &conf),
        start_with_conf(&valkey_bin(), &conf),
        2,
    );
    p.same_lines(&["ACL LIST", "ACL SAVE", "ACL LOAD"]);
    let mut d = Duo::login(&p, "alice", "pw");
    d.same_line("ACL WHOAMI");
    // The same users as command-line options.
    let args = ["--user", "carol", "on", ">pw", "~*", "+@all", "--user", "dave", "on", "nopass"];
    let mut p = Pair::connect(start_ours(&args), start_valkey(&args), 2);
    p.same_line("ACL LIST");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn aclfile_and_user_directives_refuse_to_start() {
    let dir = unique_dir("acl-conf-both");
    let acl = dir.join("users.acl");
    std::fs::write(&acl, "user bob on nopass ~* +@all\n").unwrap();
    let conf = dir.join("server.conf");
    std::fs::write(&conf, format!("aclfile {}\nuser alice on nopass\n", acl.display())).unwrap();
    let port = free_port().to_string();
    let args = [conf.to_str().unwrap(), "--port", &port, "--bind", "127.0.0.1", "--save", ""];
    both_refuse(&args, "Configuring Valkey with users defined in valkey.conf");
    let _ = std::fs::remove_dir_all(&dir);
}

/// CONFIG REWRITE writes the users in memory as `user` lines (a new user after the other
/// directives, as Valkey appends it), the same lines as Valkey's; with an aclfile it writes
/// none.
#[test]
fn config_rewrite_writes_the_users() {
    let user_lines = |conf: &Path| -> Vec<String> {
        let text = std::fs::read_to_string(conf).expect("rewritten config");
        text.lines()
            .filter(|l| l.starts_with("user ") || l.starts_with("requirepass "))
            .map(str::to_string)
            .collect()
    };
    let mut rewritten = Vec::new();
    for bin in [ours_bin(), valkey_bin()] {
        let dir = unique_dir("acl-rewrite");
        let conf = dir.join("server.conf");
        std::fs::write(&conf, "user alice on >p ~* +@all\nuser default on nopass ~* &* +@all\n")
            .unwrap();
        let server = start_with_conf(&bin, &conf);
        let mut c = crate::common::Client::connect(server.port);
        let setuser = ["ACL", "SETUSER", "bob", "on", ">pw", "~b:*", "(+get ~x)", "db=1"];
        assert_eq!(c.cmd(&setuser), crate::common::Val::ok());
        assert_eq!(c.cmd(&["CONFIG", "SET", "requirepass", "sec"]), crate::common::Val::ok());
        assert_eq!(c.cmd(&["CONFIG", "REWRITE"]), crate::common::Val::ok());
        rewritten.push(user_lines(&conf));
        drop(server);
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert_eq!(rewritten[0], rewritten[1], "rewritten users (left: ferrokey, right: valkey)");
    assert_eq!(rewritten[0].len(), 4, "{:?}", rewritten[0]);
}

/// ACL LOAD closes a subscriber whose user no longer has its channel, as SETUSER does.
#[test]
fn acl_load_closes_subscribers_that_lost_their_channel() {
    let mut f = FilePair::start(2, "user sb on nopass ~* resetchannels &news.* &sports +@all\n");
    let subscribe = |f: &FilePair, line: &str| {
        let mut d = Duo::login(&f.p, "sb", "x");
        d.same_line(line);
        d
    };
    let mut news = subscribe(&f, "SUBSCRIBE news.1");
    let mut sports = subscribe(&f, "SUBSCRIBE sports");
    f.write("user sb on nopass ~* resetchannels &sports +@all\n");
    f.same_lines(&["ACL LOAD"]);
    check_closed(&mut news, true, "subscriber of a channel the user lost");
    check_closed(&mut sports, false, "subscriber of a channel the user kept");
}
