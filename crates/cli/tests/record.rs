//! `reanimator record` as a user meets it: exit statuses, the summary
//! line, trace naming, data policies and errors.

use std::path::Path;
use std::process::{Command, Output};

use reanimator_trace::{CaptureStatus, ExitStatus, ReadOptions, Reader, Record, Role};

fn record(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reanimator"))
        .current_dir(dir)
        .arg("record")
        .args(args)
        .output()
        .expect("run reanimator")
}

fn records(path: &Path) -> Vec<Record> {
    let mut r = Reader::open(path, ReadOptions { data: true }).expect("open trace");
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().expect("read trace") {
        out.push(rec);
    }
    assert!(r.end().is_some(), "trace has its end record");
    out
}

#[test]
fn exit_status_is_the_commands() {
    let dir = tempfile::tempdir().unwrap();
    let out = record(dir.path(), &["-o", "seven.rtr", "--", "sh", "-c", "exit 7"]);
    assert_eq!(out.status.code(), Some(7));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("seven.rtr") && err.contains("lost: 0"),
        "summary line: {err}"
    );
    let exits: Vec<ExitStatus> = records(&dir.path().join("seven.rtr"))
        .into_iter()
        .filter_map(|r| match r {
            Record::ProcessExit(e) => Some(e.status),
            _ => None,
        })
        .collect();
    assert_eq!(exits, vec![ExitStatus::Exited(7)]);

    let out = record(
        dir.path(),
        &["-o", "segv.rtr", "--", "sh", "-c", "kill -SEGV $$"],
    );
    assert_eq!(out.status.code(), Some(128 + 11), "128+SIGSEGV like strace");
}

#[test]
fn default_name_never_replaces_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    assert!(record(dir.path(), &["--", "true"]).status.success());
    assert!(record(dir.path(), &["--", "true"]).status.success());
    assert!(dir.path().join("true.rtr").exists() && dir.path().join("true.2.rtr").exists());
    // An explicit existing output needs --force.
    let out = record(dir.path(), &["-o", "true.rtr", "--", "true"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("true.rtr"));
    assert!(
        record(dir.path(), &["-o", "true.rtr", "--force", "--", "true"])
            .status
            .success()
    );
    let mode = std::fs::metadata(dir.path().join("true.rtr"))
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()))
        .unwrap();
    assert_eq!(mode & 0o777, 0o600, "traces hold user data");
}

#[test]
fn data_policies_mark_what_was_not_captured() {
    let dir = tempfile::tempdir().unwrap();
    let script = "printf '%0100d' 0 > f";
    for (policy, expect_status, expect_len) in [
        ("all", CaptureStatus::Complete, 100),
        ("none", CaptureStatus::Skipped, 0),
        ("max=10", CaptureStatus::Truncated, 10),
    ] {
        let name = format!("{policy}.rtr");
        assert!(record(
            dir.path(),
            &["-o", &name, "--data", policy, "--", "sh", "-c", script]
        )
        .status
        .success());
        let write = records(&dir.path().join(&name))
            .into_iter()
            .find_map(|r| match r {
                Record::Syscall(e) if e.nr == libc::SYS_write as u32 && e.args[2] == 100 => Some(e),
                _ => None,
            })
            .expect("the 100-byte write is recorded");
        let c = write.capture(1, Role::Entry).expect("write buffer capture");
        assert_eq!(
            (c.status, c.len, c.captured),
            (expect_status, 100, expect_len),
            "{policy}"
        );
        if policy == "all" {
            assert_eq!(c.data.as_deref(), Some(&[b'0'; 100][..]));
        }
    }
}

#[test]
fn bad_commands_get_clear_errors_and_no_trace() {
    let dir = tempfile::tempdir().unwrap();
    let out = record(dir.path(), &["--", "no-such-command-xyz"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-command-xyz: command not found"));
    let out = record(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to record"));
    let out = record(dir.path(), &["--data", "lots", "--", "true"]);
    assert_eq!(out.status.code(), Some(2), "clap usage error");
    let out = record(dir.path(), &["-p", "999999999"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("999999999"));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no trace left behind by failures"
    );
}
