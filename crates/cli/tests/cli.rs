//! The `reanimator` binary as a user meets it: output, exit codes and
//! error messages, on traces written by the format crate.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use reanimator_trace::*;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_reanimator"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run reanimator")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Asserts that `o` failed with exit status 1 and said `said` on
/// standard error; `what` names the case in the failure message.
fn fails_saying(o: &Output, said: &str, what: impl std::fmt::Display) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{what}: {err}");
    assert!(err.contains(said), "{what}: wanted {said:?} in: {err}");
}

/// Makes a FIFO at `path`.
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// `/dev/full` opened for writing: every write fails with ENOSPC.
fn dev_full() -> std::fs::File {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full")
}

/// A small trace: a process start, an openat, a write with data, a failed
/// read, an undecoded call, a signal and an exit.
fn write_sample(path: &Path) {
    let meta = TraceMeta {
        tool: "test".into(),
        clock: ClockAnchor {
            monotonic_ns: 0,
            realtime_ns: 1_700_000_000_000_000_000,
        },
        ..TraceMeta::default()
    };
    let mut w = Writer::create(path, &meta, WriterOptions::default()).unwrap();
    w.write(&Record::ProcessStart(ProcessStart {
        seq: 0,
        tgid: 42,
        tid: 42,
        argv: vec![b"demo".to_vec()],
        cwd: b"/tmp".to_vec(),
        umask: 0o22,
        ..ProcessStart::default()
    }))
    .unwrap();
    let exit = |ret: i64, is_error: bool| {
        Some(SyscallExit {
            exit_ns: 2_000,
            ret,
            is_error,
        })
    };
    let cap = |arg: u8, role: Role, d: &[u8]| Capture {
        arg,
        role,
        elem: 0,
        status: CaptureStatus::Complete,
        len: d.len() as u64,
        captured: d.len() as u64,
        data: Some(d.to_vec().into()),
    };
    let calls = [
        (
            257,
            [(-100i64) as u64, 0x10, 0o101, 0o600, 0, 0],
            exit(3, false),
            vec![cap(1, Role::Entry, b"out.txt")],
        ),
        (
            1,
            [3, 0x20, 6, 0, 0, 0],
            exit(6, false),
            vec![cap(1, Role::Entry, b"hello\n")],
        ),
        (0, [9, 0x30, 100, 0, 0, 0], exit(-9, true), vec![]),
        (999, [1, 2, 0, 0, 0, 0], exit(0, false), vec![]),
    ];
    for (i, (nr, args, exit, captures)) in calls.into_iter().enumerate() {
        w.write(&Record::Syscall(SyscallEvent {
            seq: i as u64 + 1,
            tgid: 42,
            tid: 42,
            nr,
            enter_ns: 1_000,
            args,
            exit,
            captures,
        }))
        .unwrap();
    }
    w.write(&Record::Signal(SignalDelivery {
        seq: 9,
        time_ns: 3_000,
        tgid: 42,
        tid: 42,
        signo: 15,
        code: 0,
        sender: 1,
    }))
    .unwrap();
    w.write(&Record::ProcessExit(ProcessExit {
        seq: 10,
        time_ns: 4_000,
        tgid: 42,
        tid: 42,
        status: ExitStatus::Exited(0),
    }))
    .unwrap();
    w.finish().unwrap();
}

fn sample() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sample.rtr");
    write_sample(&path);
    (dir, path)
}

#[test]
fn dump_prints_strace_like_lines() {
    let (_d, path) = sample();
    let out = run(&["dump", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 7, "{lines:#?}");
    assert!(lines[0].contains("=== process 42 spawned"), "{}", lines[0]);
    assert!(
        lines[1]
            .ends_with(r#"openat(AT_FDCWD, "out.txt", O_WRONLY|O_CREAT, 0o600) = 3 <0.000001>"#),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains(r#"write(3, "hello\n", 6) = 6"#),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains("read(9, 0x30, 100) = -1 EBADF"),
        "{}",
        lines[3]
    );
    assert!(
        lines[4].contains("syscall_999(0x1, 0x2) = 0"),
        "{}",
        lines[4]
    );
    assert!(lines[5].contains("--- SIGTERM"), "{}", lines[5]);
    assert!(lines[6].contains("+++ exited with 0 +++"), "{}", lines[6]);
    assert!(
        lines[1].starts_with("#1 22:13:20.000001 [42/42] "),
        "wall-clock time from the anchor: {}",
        lines[1]
    );
}

#[test]
fn dump_json_lines_parse_and_carry_data() {
    let (_d, path) = sample();
    let out = run(&["dump", "--json", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let values: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("valid JSON line"))
        .collect();
    assert_eq!(values.len(), 7);
    assert_eq!(values[2]["name"], "write");
    assert_eq!(values[2]["captures"][0]["data_hex"], "68656c6c6f0a");
    assert_eq!(values[3]["errno_name"], "EBADF");
    assert_eq!(values[0]["type"], "process_start");
}

#[test]
fn bad_traces_fail_with_one_line_naming_the_file() {
    let (dir, path) = sample();
    let bytes = std::fs::read(&path).unwrap();
    let cases: Vec<(String, Vec<u8>, &str)> = vec![
        ("empty".into(), vec![], "empty file"),
        (
            "text".into(),
            b"#!/bin/sh\necho not a trace\n".to_vec(),
            "not a reanimator trace",
        ),
        (
            "truncated".into(),
            bytes[..bytes.len() - 20].to_vec(),
            "truncated",
        ),
        ("unfinished".into(), bytes[..bytes.len() - 200].to_vec(), ""),
        (
            "flipped".into(),
            {
                let mut b = bytes.clone();
                let n = b.len();
                b[n / 2] ^= 0x10;
                b
            },
            "corrupt",
        ),
    ];
    for (name, content, want) in cases {
        let p = dir.path().join(&name);
        std::fs::write(&p, &content).unwrap();
        let out = run(&["dump", p.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{name}: one line: {err}");
        assert!(err.contains(&name) && err.contains(want), "{name}: {err}");
        // A cut or damaged trace: the way out is named, as `info` named it.
        if ["truncated", "unfinished", "flipped"].contains(&name.as_str()) {
            assert!(err.contains("`reanimator recover`"), "{name}: {err}");
        }
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
    let out = run(&["dump", dir.path().to_str().unwrap()]);
    fails_saying(&out, "is a directory", "");
    // A FIFO with no writer is refused at once (opening it waited forever).
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let root = dir.path().join("root");
    for args in [
        vec!["dump", fifo.to_str().unwrap()],
        vec![
            "replay",
            fifo.to_str().unwrap(),
            "--root",
            root.to_str().unwrap(),
        ],
    ] {
        let out = run(&args);
        fails_saying(&out, "is a FIFO, not a file", format!("{args:?}"));
    }
    assert!(
        !root.exists(),
        "nothing prepared for a trace that cannot be read"
    );
}

/// A time window that ends before it begins is refused, by every command
/// that takes one, rather than answered with an empty result.
#[test]
fn an_inverted_time_window_is_an_error() {
    let (dir, path) = sample();
    let trace = path.to_str().unwrap();
    let out_path = dir.path().join("sel.rtr");
    let out = out_path.to_str().unwrap();
    for argv in [
        vec!["stats", trace, "--from", "2s", "--to", "1s"],
        vec!["dump", trace, "--from", "2s", "--to", "1s"],
        vec!["select", trace, "-o", out, "--from", "5ms", "--to", "5ms"],
    ] {
        let got = run(&argv);
        fails_saying(&got, "is not before --to", format!("{argv:?}"));
    }
    assert!(!out_path.exists(), "select wrote nothing");
}

#[test]
fn recover_salvages_an_unfinished_trace() {
    let (dir, path) = sample();
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.rtr");
    // Drop the end frame only: every record survives.
    let end_len = 32 + bytes.len() - bytes.windows(4).rposition(|w| w == b"RFRM").unwrap() - 32;
    std::fs::write(&cut, &bytes[..bytes.len() - end_len]).unwrap();
    let out = run(&["dump", cut.to_str().unwrap()]);
    fails_saying(&out, "recover", "the error points to recover");
    assert_eq!(
        text(&out.stdout).lines().count(),
        7,
        "records before the damage are still printed"
    );

    let out = run(&["recover", cut.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(
        report.contains("kept: 7 records (4 system calls)"),
        "{report}"
    );
    assert!(report.contains("no end record"), "{report}");
    let fixed = dir.path().join("cut.recovered.rtr");
    let out = run(&["dump", fixed.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 7);

    let again = run(&["recover", cut.to_str().unwrap()]);
    fails_saying(&again, "--force", "refuses to overwrite");
    assert!(run(&["recover", "--force", cut.to_str().unwrap()])
        .status
        .success());

    // Killed before its first flush: the meta frame and nothing else.
    // Nothing salvaged is a failure, said, and leaves no file (it left
    // one that `info` called complete).
    let meta_end = FILE_HEADER_LEN
        + FRAME_HEADER_LEN
        + u32::from_le_bytes(
            bytes[FILE_HEADER_LEN + 8..FILE_HEADER_LEN + 12]
                .try_into()
                .unwrap(),
        ) as usize;
    let early = dir.path().join("early.rtr");
    std::fs::write(&early, &bytes[..meta_end]).unwrap();
    let out = run(&["recover", early.to_str().unwrap()]);
    fails_saying(&out, "no system call could be salvaged", "");
    assert!(!dir.path().join("early.recovered.rtr").exists());
}

#[test]
fn catalogue_lists_signatures() {
    let out = run(&["catalogue", "read", "257"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(
        s.contains("  0  read(fd: fd, buf: out[ret], count: size) -> size [execute]"),
        "{s}"
    );
    assert!(s.contains("257  openat("), "{s}");
    let out = run(&["catalogue", "%network"]);
    assert!(text(&out.stdout).contains("connect("));
    let out = run(&["catalogue", "nosuchcall"]);
    fails_saying(&out, "unknown system call", "");
}

#[test]
fn version_and_help() {
    let out = run(&["--version"]);
    assert!(
        text(&out.stdout).starts_with("reanimator "),
        "{}",
        text(&out.stdout)
    );
    let out = run(&["dump", "--help"]);
    assert!(text(&out.stdout).contains("--json"));
    let out = run(&["no-such-command"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A report printed into a closed pipe (`| head`) ends the command
/// quietly, and into a full disk with an error; neither panics (select,
/// export, recover and catalogue did: exit 101).
#[test]
fn reports_into_a_closed_pipe_or_a_full_disk_do_not_panic() {
    let (dir, trace) = sample();
    let t = trace.to_str().unwrap();
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let commands: Vec<Vec<String>> = vec![
        vec![
            "select".into(),
            t.into(),
            "-o".into(),
            out("s.rtr"),
            "--force".into(),
        ],
        vec![
            "recover".into(),
            t.into(),
            "-o".into(),
            out("r.rtr"),
            "--force".into(),
        ],
        vec![
            "export".into(),
            t.into(),
            "-o".into(),
            out("x"),
            "--force".into(),
            "--format".into(),
            "csv".into(),
        ],
        vec!["catalogue".into()],
        vec!["dump".into(), t.into()],
        vec!["dump".into(), "--json".into(), t.into()],
        vec!["stats".into(), t.into()],
        vec!["info".into(), t.into()],
    ];
    for args in &commands {
        let mut child = bin()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
        assert!(!text(&o.stderr).contains("panicked"), "{args:?}");
        if std::path::Path::new("/dev/full").exists() {
            let o = bin().args(args).stdout(dev_full()).output().unwrap();
            fails_saying(&o, "cannot write to standard output", format!("{args:?}"));
        }
    }
}

/// A diagnostic that cannot be written (standard error on a full disk or
/// a closed pipe) is dropped: the command's exit status stays its own
/// (it was 101, a panic, even after a clean run).
#[test]
fn a_standard_error_that_cannot_be_written_changes_no_exit_status() {
    let (dir, trace) = sample();
    let t = trace.to_str().unwrap();
    let missing = dir.path().join("missing.rtr");
    let root = dir.path().join("root");
    for (args, code) in [
        (vec!["dump", missing.to_str().unwrap()], 1),
        (vec!["stats", t], 0),
        (vec!["replay", t, "--root", root.to_str().unwrap()], 1),
    ] {
        let o = bin()
            .args(&args)
            .stdout(std::process::Stdio::null())
            .stderr(dev_full())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(code), "{args:?}");
    }
}

/// `/` is never a replay root, `--replace` or not: preparing there
/// rewrites the machine's files (with `--replace`, a real `/lib` became
/// the recorded symbolic link, its libraries removed).
#[test]
fn the_machines_root_directory_is_never_a_replay_root() {
    let (dir, trace) = sample();
    for extra in [&[][..], &["--replace"][..]] {
        let mut args = vec!["replay", trace.to_str().unwrap(), "--root", "/"];
        args.extend_from_slice(extra);
        let o = run(&args);
        fails_saying(&o, "is the machine's root directory", format!("{args:?}"));
    }
    let o = run(&["replay", trace.to_str().unwrap(), "--in-place", "--replace"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    // Nor `/` under another name: a (read-only) bind mount of it.
    common::require_root("mounts a bind mount of /");
    let bind = dir.path().join("slash");
    std::fs::create_dir(&bind).unwrap();
    let ok = std::process::Command::new("mount")
        .args(["--bind", "-o", "ro", "/"])
        .arg(&bind)
        .status()
        .expect("mount");
    assert!(ok.success(), "mount --bind / failed");
    let o = run(&[
        "replay",
        trace.to_str().unwrap(),
        "--root",
        bind.to_str().unwrap(),
        "--replace",
    ]);
    let _ = std::process::Command::new("umount").arg(&bind).status();
    fails_saying(&o, "is the machine's root directory", "");
}

/// A root that is a dangling symbolic link is said to be one (it read
/// "creating ROOT: File exists").
#[test]
fn a_dangling_link_as_root_is_said_to_be_one() {
    let (dir, trace) = sample();
    let root = dir.path().join("root");
    std::os::unix::fs::symlink(dir.path().join("gone"), &root).unwrap();
    let o = run(&[
        "replay",
        trace.to_str().unwrap(),
        "--root",
        root.to_str().unwrap(),
    ]);
    fails_saying(&o, "a symbolic link to", "");
    assert!(!dir.path().join("gone").exists());
}

/// One replay per root: a second one is refused while the first holds it
/// (it made the first report the second's writes as mismatches).
#[test]
fn a_root_in_use_by_another_replay_is_refused() {
    use std::os::fd::AsRawFd;
    let (dir, trace) = sample();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let held = std::fs::File::open(&root).unwrap();
    // SAFETY: flock on a descriptor we own.
    assert_eq!(unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX) }, 0);
    let o = run(&[
        "replay",
        trace.to_str().unwrap(),
        "--root",
        root.to_str().unwrap(),
    ]);
    fails_saying(&o, "another replay is using it", "");
    drop(held);
    let o = run(&[
        "replay",
        trace.to_str().unwrap(),
        "--root",
        root.to_str().unwrap(),
    ]);
    assert!(
        !text(&o.stderr).contains("another replay"),
        "{}",
        text(&o.stderr)
    );
}

/// `--replace` never runs over a root that holds the trace or the
/// timings file (a directory in the way went, the trace with it).
#[test]
fn replace_refuses_a_root_holding_the_trace() {
    let (dir, trace) = sample();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let inside = root.join("sub/t.rtr");
    std::fs::copy(&trace, &inside).unwrap();
    let r = root.to_str().unwrap();
    for args in [
        vec!["replay", inside.to_str().unwrap(), "--root", r, "--replace"],
        vec![
            "replay",
            trace.to_str().unwrap(),
            "--root",
            r,
            "--replace",
            "--timings",
            root.join("t.tim").to_str().unwrap(),
        ],
    ] {
        let o = run(&args);
        fails_saying(
            &o,
            "holds the trace or the --timings file",
            format!("{args:?}"),
        );
    }
    assert!(inside.exists());
}

/// A `--timings` file that cannot be written is refused before the root
/// is touched (it was found only after preparing, and the retry then
/// found the root not empty).
#[test]
fn a_timings_file_that_cannot_be_written_is_refused_before_preparing() {
    let (dir, trace) = sample();
    let t = trace.to_str().unwrap();
    let root = dir.path().join("root");
    let exists = dir.path().join("exists.tim");
    std::fs::write(&exists, b"x").unwrap();
    let missing_dir = dir.path().join("no/such/dir.tim");
    for (timings, want) in [
        (exists.to_str().unwrap(), "already exists"),
        (missing_dir.to_str().unwrap(), "cannot be written"),
        (dir.path().to_str().unwrap(), "is a directory"),
        (t, "is the trace being replayed"),
    ] {
        let o = run(&[
            "replay",
            t,
            "--root",
            root.to_str().unwrap(),
            "--timings",
            timings,
        ]);
        fails_saying(&o, want, timings);
        assert!(!root.exists(), "{timings}: the root was made");
    }
    assert_eq!(std::fs::read(&exists).unwrap(), b"x");
}

/// An output that cannot be written to the end (here a file-size limit;
/// a full disk alike) is removed, not left half-written, and the error
/// names it.
#[test]
fn a_selection_or_recovery_that_fails_midway_leaves_no_output() {
    use std::os::unix::process::CommandExt;
    let (dir, trace) = sample();
    let t = trace.to_str().unwrap();
    let whole = dir.path().join("whole.rtr");
    assert!(run(&["select", t, "-o", whole.to_str().unwrap()])
        .status
        .success());
    let limit = std::fs::metadata(&whole).unwrap().len() / 2;
    for cmd in ["select", "recover"] {
        let out = dir.path().join(format!("{cmd}.rtr"));
        let mut c = bin();
        c.args([cmd, t, "-o", out.to_str().unwrap()]);
        // SAFETY: setrlimit and signal are async-signal-safe.
        unsafe {
            c.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                Ok(())
            });
        }
        let o = c.output().unwrap();
        fails_saying(&o, &format!("into {}", out.display()), cmd);
        assert!(!out.exists(), "{cmd}: a partial output was left");
    }
}

/// Ctrl-C during `select` ends it with 130 and says so; an output that
/// is not its own file (here a FIFO nobody reads, which holds `select` in
/// its open) is left alone.
#[test]
fn an_interrupted_selection_says_so_and_keeps_what_is_not_its_own() {
    let (dir, trace) = sample();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let child = bin()
        .args([
            "select",
            trace.to_str().unwrap(),
            "-o",
            fifo.to_str().unwrap(),
            "--force",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let wchan = format!("/proc/{}/wchan", child.id());
    common::wait_for("select to open the FIFO", || {
        std::fs::read_to_string(&wchan).unwrap_or_default() == "wait_for_partner"
    });
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr).trim(), "reanimator: interrupted");
    assert!(fifo.exists());
}

/// Ctrl-C stops a replay (here one slowed a million times, which would
/// last seconds) before it ends, and it still reports, exiting 130.
#[test]
fn an_interrupted_replay_stops_and_reports() {
    let (dir, trace) = sample();
    let root = dir.path().join("root");
    let child = bin()
        .args([
            "replay",
            trace.to_str().unwrap(),
            "--root",
            root.to_str().unwrap(),
        ])
        .args(["--timing", "scale=0.000001"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Signalled once it handles SIGINT itself (blocked, for its waiter).
    let status = format!("/proc/{}/status", child.id());
    common::wait_for("replay to block SIGINT", || {
        let blocked = std::fs::read_to_string(&status)
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("SigBlk:").map(|v| v.trim().to_string()))
            .and_then(|v| u64::from_str_radix(&v, 16).ok())
            .unwrap_or(0);
        blocked & (1 << (libc::SIGINT - 1)) != 0
    });
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted (the final state was not checked)")
            || err.contains("interrupted while preparing"),
        "{err}"
    );
}

/// A selection or export that kept no call says so (a window past the
/// end, a process that is not there): it is rarely what was meant.
#[test]
fn keeping_no_call_is_warned_about() {
    let (dir, trace) = sample();
    let t = trace.to_str().unwrap();
    let sel = dir.path().join("late.rtr");
    let o = run(&["select", t, "-o", sel.to_str().unwrap(), "--from", "1h"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("the filter kept no system call"),
        "{}",
        text(&o.stderr)
    );
    let out = dir.path().join("x");
    let o = run(&["export", t, "-o", out.to_str().unwrap(), "--pid", "999999"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("no system call was exported"),
        "{}",
        text(&o.stderr)
    );
    let o = run(&[
        "select",
        t,
        "-o",
        dir.path().join("all.rtr").to_str().unwrap(),
    ]);
    assert!(!text(&o.stderr).contains("warning"), "{}", text(&o.stderr));
}

/// `recover -o` onto its input by another name (`./t.rtr`, a hard link,
/// a symbolic link) is refused, as `select` refuses it: with `--force`
/// it truncated the trace it was reading.
#[test]
fn recover_refuses_its_own_input_by_any_name() {
    let (dir, trace) = sample();
    let before = std::fs::read(&trace).unwrap();
    let hard = dir.path().join("hard.rtr");
    let soft = dir.path().join("soft.rtr");
    std::fs::hard_link(&trace, &hard).unwrap();
    std::os::unix::fs::symlink(&trace, &soft).unwrap();
    let dotted = trace
        .parent()
        .unwrap()
        .join(".")
        .join(trace.file_name().unwrap());
    for out in [&dotted, &hard, &soft] {
        let o = run(&[
            "recover",
            trace.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--force",
        ]);
        fails_saying(
            &o,
            "the output must differ from the input",
            format!("{out:?}"),
        );
        assert_eq!(std::fs::read(&trace).unwrap(), before, "{out:?}");
    }
}
