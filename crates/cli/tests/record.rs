//! `reanimator record` as a user meets it: exit statuses, the summary
//! line, trace naming, data policies and errors.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::wait_for;

use reanimator_trace::{CaptureStatus, ExitStatus, PathPhase, ReadOptions, Reader, Record, Role};

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
fn replay_warns_that_a_trace_without_initial_state_needs_its_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in"), "pre-existing").unwrap();
    for (snapshot, warned) in [("off", true), ("contents", false)] {
        let name = format!("{snapshot}.rtr");
        let args = ["-o", &name, "--snapshot", snapshot, "--", "cat", "in"];
        assert!(record(dir.path(), &args).status.success());
        let replay = Command::new(env!("CARGO_BIN_EXE_reanimator"))
            .current_dir(dir.path())
            .args(["replay", &name, "--root", &format!("root-{snapshot}")])
            .output()
            .expect("run reanimator");
        let err = String::from_utf8_lossy(&replay.stderr);
        assert_eq!(err.contains("--snapshot off"), warned, "{snapshot}: {err}");
        // Without the file's recorded state, the empty root lacks it.
        assert_eq!(replay.status.success(), !warned, "{snapshot}: {err}");
    }
}

/// With `--snapshot off` nothing of the initial state is stored, but the
/// final manifest still names every path the trace touched, under both
/// back ends (before, the eBPF one, with no path gate, named none, and
/// replay had no final state to check).
#[test]
fn without_initial_state_both_back_ends_write_the_same_manifest() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in"), "pre-existing").unwrap();
    let mut manifests = Vec::new();
    for backend in ["ptrace", "ebpf"] {
        let name = format!("{backend}.rtr");
        let args = ["--backend", backend, "--snapshot", "off", "-o", &name, "--"];
        let out = record(
            dir.path(),
            &[&args[..], &["sh", "-c", "echo hi > out; cat in > copy"]].concat(),
        );
        assert!(out.status.success(), "{backend}: {out:?}");
        let mut after: Vec<Vec<u8>> = records(&dir.path().join(&name))
            .into_iter()
            .filter_map(|r| match r {
                Record::PathState(p) if p.phase == PathPhase::After => Some(p.path),
                Record::PathState(p) => panic!("{backend}: a state before: {p:?}"),
                _ => None,
            })
            .collect();
        after.sort();
        for file in ["in", "out", "copy"] {
            let path = dir.path().join(file);
            let path = path.to_str().unwrap().as_bytes();
            assert!(after.iter().any(|p| p == path), "{backend}: no {file}");
        }
        manifests.push(after);
    }
    assert_eq!(manifests[0], manifests[1], "ptrace's manifest, then eBPF's");
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

/// Both back ends record the same signals of a process killed by one:
/// the SIGTERM its parent sent (with the sender), and no SIGKILL (the
/// kernel's ending of the threads is no signal the program was sent).
/// Before, the eBPF recorder wrote `SIGKILL {si_code=0, si_pid=0}` in the
/// SIGTERM's place (the kernel's short way for fatal signals never
/// reaches `signal_deliver`), and a SIGSYS's call address as its sender.
#[test]
fn a_fatal_signal_is_recorded_alike_by_both_back_ends() {
    let dir = tempfile::tempdir().unwrap();
    let script = "sleep 5 & sleep 0.2; kill -TERM $!; wait";
    for backend in ["ptrace", "ebpf"] {
        let name = format!("{backend}.rtr");
        let out = record(
            dir.path(),
            &["--backend", backend, "-o", &name, "--", "sh", "-c", script],
        );
        assert!(out.status.success(), "{}", common::show(&out));
        let recs = records(&dir.path().join(&name));
        let signals: Vec<(i32, u32)> = recs
            .iter()
            .filter_map(|r| match r {
                Record::Signal(s) if s.signo != libc::SIGCHLD => Some((s.signo, s.sender)),
                _ => None,
            })
            .collect();
        let shell = recs
            .iter()
            .find_map(|r| match r {
                Record::ProcessStart(p) => Some(p.tgid),
                _ => None,
            })
            .unwrap();
        assert_eq!(signals, vec![(libc::SIGTERM, shell)], "{backend}");
        let killed = recs.iter().any(|r| {
            matches!(r, Record::ProcessExit(e) if e.status == ExitStatus::Killed { signal: libc::SIGTERM, core: false })
        });
        assert!(killed, "{backend}: the sleep was killed by SIGTERM");
    }
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

/// An output that is not a regular file (`-o /dev/null`, as with
/// `strace -o /dev/null`) is written to as it is, `--force` or not, and
/// kept when the recording fails. Before, `--force` made `/dev/null` 0600
/// (other users could no longer write to it) and a failed recording
/// removed it: the next `> /dev/null` made a regular file.
#[test]
fn a_device_as_output_is_written_to_never_replaced() {
    common::require_root("makes a null device node (mknod)");
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    let made = Command::new("mknod")
        .args(["-m", "666"])
        .arg(&null)
        .args(["c", "1", "3"])
        .output()
        .expect("run mknod");
    assert!(made.status.success(), "mknod: {}", common::show(&made));
    let intact = || {
        let m = std::fs::symlink_metadata(&null).unwrap();
        m.file_type().is_char_device() && m.permissions().mode() & 0o777 == 0o666
    };
    for args in [&["-o", "null"][..], &["-o", "null", "--force"]] {
        let out = record(dir.path(), &[args, &["--", "true"]].concat());
        assert!(out.status.success(), "{args:?}: {}", common::show(&out));
        assert!(intact(), "{args:?}");
    }
    let failed = record(
        dir.path(),
        &["-o", "null", "--force", "--", "/nonexistent/command"],
    );
    assert!(!failed.status.success());
    assert!(intact(), "a failed recording removed or changed the device");
}

/// A command that cannot be traced (here: the recorder runs under another
/// ptrace recording, so it cannot seize its child) fails the recording
/// with the reason, and the command, made stopped before its exec, is
/// killed rather than left stopped. Before, it stayed stopped for good,
/// and the outer recording waited for it.
#[test]
fn a_command_that_cannot_be_traced_is_not_left_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_reanimator");
    let out = common::output_within(
        Command::new(bin)
            .current_dir(dir.path())
            .args(["record", "--backend", "ptrace", "-o", "outer.rtr", "--"])
            .args([
                bin,
                "record",
                "--backend",
                "ptrace",
                "-o",
                "inner.rtr",
                "--",
                "true",
            ])
            .stdin(std::process::Stdio::null()),
        std::time::Duration::from_secs(120),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot attach") && stderr.contains("outer.rtr:"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("goes on until what it left running"),
        "{stderr}"
    );
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

/// An option of the other back end is said to be ignored.
#[test]
fn options_of_the_other_back_end_are_said_to_be_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let out = record(
        dir.path(),
        &["--backend", "ptrace", "--ring-size", "1M", "--", "true"],
    );
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--ring-size applies to the ebpf back end only; ignored by ptrace"),
        "{err}"
    );
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
    let out = record(dir.path(), &["--cpu", "4095", "--", "true"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("CPU 4095 is not one this process may run on"));
    let out = record(dir.path(), &["--cpu", "0,x", "--", "true"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected CPU numbers"));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no trace left behind by failures"
    );
}

/// A program found but not executable by the kernel (a missing `#!`
/// interpreter, a broken binary) is said so, as a shell would, with the
/// shell's status 127; and a trace never overwrites the program recorded.
#[test]
fn a_program_the_kernel_cannot_execute_is_said_so() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.sh");
    std::fs::write(&script, "#!/no/such/interpreter\necho hi\n").unwrap();
    let elf = dir.path().join("bad.elf");
    std::fs::write(&elf, b"\x7fELFgarbage").unwrap();
    for p in [&script, &elf] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for backend in ["ptrace", "ebpf"] {
        for (prog, want) in [
            ("./bad.sh", "interpreter"),
            ("./bad.elf", "Exec format error"),
        ] {
            let out = record(
                dir.path(),
                &["--backend", backend, "-o", "t.rtr", "--force", "--", prog],
            );
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(127), "{backend} {prog}: {err}");
            assert!(
                err.contains(&format!("cannot execute {prog}")) && err.contains(want),
                "{backend} {prog}: {err}"
            );
        }
    }
    let out = record(dir.path(), &["-o", "bad.elf", "--force", "--", "./bad.elf"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is the program being recorded"));
    assert_eq!(std::fs::read(&elf).unwrap(), b"\x7fELFgarbage");
}

/// A program that never stops on its own, killed however the test ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts recording, into `dir/t.rtr`, a shell that starts `sleep 60` in
/// the background, writes its pid to `dir/child`, then runs `then`.
fn record_leaving_a_child(
    dir: &Path,
    backend: &str,
    then: &str,
    stderr: std::process::Stdio,
) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_reanimator"))
        .current_dir(dir)
        .args([
            "record",
            "--backend",
            backend,
            "-o",
            "t.rtr",
            "--",
            "sh",
            "-c",
        ])
        .arg(format!(
            "sleep 60 & echo $! > child.tmp; mv child.tmp child{then}"
        ))
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("reanimator runs")
}

/// The lines of a child's piped stderr as they come, and the thread that
/// reads them (done once the child closes it).
fn stderr_lines(
    child: &mut std::process::Child,
) -> (
    std::sync::mpsc::Receiver<String>,
    std::thread::JoinHandle<()>,
) {
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr).lines() {
            let _ = tx.send(line.expect("stderr is text"));
        }
    });
    (rx, reader)
}

/// Waits for a recorder to end; returns its status and the rest of its
/// stderr (from [`stderr_lines`]).
fn ended(
    recorder: &mut KillOnDrop,
    (rx, reader): (
        std::sync::mpsc::Receiver<String>,
        std::thread::JoinHandle<()>,
    ),
    what: &str,
) -> (std::process::ExitStatus, String) {
    let mut status = None;
    wait_for(&format!("{what}: the recorder to end"), || {
        status = recorder.0.try_wait().unwrap();
        status.is_some()
    });
    reader.join().unwrap();
    let err = rx.try_iter().collect::<Vec<String>>().join("\n");
    (status.unwrap(), err)
}

#[test]
fn ebpf_attach_then_detach_leaves_the_program_running() {
    if let Some(why) = reanimator_ebpf::unavailable() {
        panic!("this test needs the ebpf back end: {why} (CI runs it as root)");
    }
    let dir = tempfile::tempdir().unwrap();
    let ticks = dir.path().join("ticks");
    let lines = || std::fs::read_to_string(&ticks).map_or(0, |s| s.lines().count());
    // A shell that forks a child every 10 ms: each child's return from
    // the fork is the parent's call, not one in progress at the attach.
    let program = Command::new("sh")
        .current_dir(dir.path())
        .args([
            "-c",
            "i=0; while :; do echo $i >> ticks; i=$((i+1)); /bin/sleep 0.01; done",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("sh runs");
    let program = KillOnDrop(program);
    let pid = program.0.id();
    wait_for("the program to tick", || lines() > 3);
    let trace = dir.path().join("attached.rtr");
    let mut recorder = Command::new(env!("CARGO_BIN_EXE_reanimator"))
        .args(["record", "--backend", "ebpf", "--snapshot", "off", "-o"])
        .arg(&trace)
        .args(["-p", &pid.to_string()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("reanimator runs");
    let (rx, reader) = stderr_lines(&mut recorder);
    // Ctrl-C detaches once the recorder says it is attaching; the trace
    // grows once it has been following the program for a while.
    let first = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the recorder says what it attaches to");
    assert!(first.contains("attaching to"), "{first}");
    let size = || std::fs::metadata(&trace).map_or(0, |m| m.len());
    let (created, ticked) = (size(), lines());
    wait_for("the recorder to write records", || size() > created);
    wait_for("ticks under the recorder", || lines() >= ticked + 30);
    let mut status = None;
    wait_for("the recorder to detach on Ctrl-C", || {
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(recorder.id() as i32, libc::SIGINT) };
        std::thread::sleep(std::time::Duration::from_millis(100));
        status = recorder.try_wait().unwrap();
        status.is_some()
    });
    reader.join().unwrap();
    let err = rx.try_iter().collect::<Vec<String>>().join("\n");
    assert_eq!(status.unwrap().code(), Some(0), "{err}");
    assert!(err.contains("lost: 0"), "{err}");
    // The shell is in one call (waiting for its child) when tracing begins.
    let in_progress = err
        .split("; ")
        .find(|part| part.contains("in progress at attach"))
        .map_or(0, |part| {
            part.split(' ').next().unwrap().parse::<u64>().unwrap()
        });
    assert!(in_progress <= 1, "{err}");

    let recs = records(&trace);
    let calls = recs
        .iter()
        .filter(|r| matches!(r, Record::Syscall(e) if e.tgid == pid))
        .count();
    let children = recs
        .iter()
        .filter(|r| matches!(r, Record::ProcessStart(s) if s.tgid != pid))
        .count();
    assert!(
        calls > 20 && children > 2,
        "{calls} calls, {children} children"
    );
    let detached = recs.iter().any(
        |r| matches!(r, Record::ProcessExit(e) if e.tid == pid && e.status == ExitStatus::Detached),
    );
    assert!(detached, "the shell is recorded as detached");

    // Still running on its own, not left stopped.
    let after = lines();
    wait_for("ticks after the detach", || lines() >= after + 5);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(!status.contains("State:\tT"), "{status}");
}

/// A recorder killed with SIGKILL takes the command it spawned along, with
/// both back ends (ptrace through `PTRACE_O_EXITKILL`, eBPF through its
/// guardian process), rather than leave it running untraced: under the
/// eBPF path gate its path-naming calls would fail with ENOSYS.
#[test]
fn a_killed_recorder_takes_its_command_along() {
    if let Some(why) = reanimator_ebpf::unavailable() {
        panic!("this test needs the ebpf back end: {why} (CI runs it as root)");
    }
    for backend in ["ebpf", "ptrace"] {
        let dir = tempfile::tempdir().unwrap();
        let child = dir.path().join("child");
        let mut recorder =
            record_leaving_a_child(dir.path(), backend, "; wait", std::process::Stdio::null());
        wait_for("the command's child to start", || child.exists());
        let pid: i32 = std::fs::read_to_string(&child)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        recorder.kill().unwrap();
        recorder.wait().unwrap();
        // Gone, or a zombie waiting for its new parent to reap it.
        let alive = || {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                let state = s.rsplit(") ").next().and_then(|r| r.chars().next());
                state != Some('Z')
            })
        };
        wait_for(
            &format!("{backend}: the command's child to be killed"),
            || !alive(),
        );
    }
}

/// The recorded command runs in the recorder's process group, so its
/// `kill -TERM 0` reaches the recorder too, which took it for a request
/// to stop: it killed the command, which had meant to go on (exit 137,
/// its last file never written). A stop signal from the command's own
/// tree is now said and passed over, with both back ends.
#[test]
fn a_command_signalling_its_process_group_goes_on_recorded() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    for backend in ["ptrace", "ebpf"] {
        let _ = std::fs::remove_file(dir.path().join("after"));
        let name = format!("{backend}.rtr");
        // Its own process group: the signal must not reach the tests.
        let out = Command::new(env!("CARGO_BIN_EXE_reanimator"))
            .current_dir(dir.path())
            .args([
                "record",
                "--backend",
                backend,
                "-o",
                &name,
                "--",
                "bash",
                "-c",
            ])
            .arg("trap '' TERM; kill -TERM 0; sleep 0.2; echo after > after")
            .process_group(0)
            .output()
            .expect("run reanimator");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{backend}: {err}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("after")).unwrap_or_default(),
            "after\n",
            "{backend}: {err}"
        );
        assert!(
            err.contains("signalled its whole process group") && err.contains("lost: 0"),
            "{backend}: {err}"
        );
    }
}

/// A SIGINT sent to the recorder alone (`kill -INT`, as one stops strace)
/// is the command's, as the terminal's Ctrl-C is: the recording goes on
/// to the command's end with both back ends, and the recorder says what
/// ends it instead (it passed the signal over unsaid before).
#[test]
fn a_sigint_to_the_recorder_alone_is_explained() {
    if let Some(why) = reanimator_ebpf::unavailable() {
        panic!("this test needs the ebpf back end: {why} (CI runs it as root)");
    }
    for backend in ["ptrace", "ebpf"] {
        let dir = tempfile::tempdir().unwrap();
        let mut recorder = Command::new(env!("CARGO_BIN_EXE_reanimator"))
            .current_dir(dir.path())
            .args(["record", "--backend", backend, "-o", "t.rtr", "--"])
            .args(["sh", "-c", "echo > started; sleep 1; echo done > out"])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("reanimator runs");
        let lines = stderr_lines(&mut recorder);
        let mut recorder = KillOnDrop(recorder);
        wait_for(&format!("{backend}: the command to start"), || {
            dir.path().join("started").exists()
        });
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(recorder.0.id() as i32, libc::SIGINT) };
        let (status, err) = ended(&mut recorder, lines, backend);
        assert_eq!(status.code(), Some(0), "{backend}: {err}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("out")).unwrap(),
            "done\n",
            "{backend}"
        );
        assert!(
            err.contains(&format!("SIGINT from process {}", std::process::id()))
                && err.contains("(SIGTERM) ends the recording")
                && err.contains("lost: 0"),
            "{backend}: {err}"
        );
    }
}

/// A command that leaves a daemon behind keeps its recording going; the
/// recorder says so after two seconds, and SIGTERM (or SIGHUP, a closed
/// terminal: it once lost the whole trace) to it ends the recording with
/// both back ends: the daemon is killed, its end is in a complete trace,
/// the summary says so and the exit status is the command's.
#[test]
fn sigterm_ends_a_recording_a_daemon_holds_open() {
    if let Some(why) = reanimator_ebpf::unavailable() {
        panic!("this test needs the ebpf back end: {why} (CI runs it as root)");
    }
    for (backend, signal) in [
        ("ebpf", libc::SIGTERM),
        ("ptrace", libc::SIGTERM),
        ("ebpf", libc::SIGHUP),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut recorder =
            record_leaving_a_child(dir.path(), backend, "", std::process::Stdio::piped());
        let (rx, reader) = stderr_lines(&mut recorder);
        let recorder = KillOnDrop(recorder);
        let hint = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the recorder says why it goes on");
        let pid = recorder.0.id() as i32;
        assert!(
            hint.contains("the command has exited") && hint.contains(&format!("kill {pid}")),
            "{backend}: {hint}"
        );
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(pid, signal) };
        let mut recorder = recorder;
        let (status, err) = ended(&mut recorder, (rx, reader), backend);
        assert_eq!(status.code(), Some(0), "{backend}: {err}");
        assert!(
            err.contains("lost: 0")
                && err.contains(
                    "1 thread still running killed when SIGTERM or SIGHUP ended the recording"
                ),
            "{backend}: {err}"
        );
        let daemon: u32 = std::fs::read_to_string(dir.path().join("child"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let killed = records(&dir.path().join("t.rtr")).iter().any(|r| {
            matches!(r, Record::ProcessExit(e)
                if e.tid == daemon && matches!(e.status, ExitStatus::Killed { signal: 9, .. }))
        });
        assert!(killed, "{backend}: the daemon's end is in the trace");
    }
}

/// A recorder attached with `-p` that is killed with SIGKILL releases the
/// process: a program writing 1 MiB buffers through a 64 KiB ring is
/// stopped for back-pressure at almost every call, and must not stay
/// stopped once its recorder is gone.
#[test]
fn a_killed_ebpf_recorder_leaves_an_attached_process_running() {
    if let Some(why) = reanimator_ebpf::unavailable() {
        panic!("this test needs the ebpf back end: {why} (CI runs it as root)");
    }
    let dir = tempfile::tempdir().unwrap();
    let program = KillOnDrop(
        Command::new("dd")
            .args(["if=/dev/zero", "of=/dev/null", "bs=1M"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("dd runs"),
    );
    let pid = program.0.id();
    let trace = dir.path().join("t.rtr");
    let mut recorder = Command::new(env!("CARGO_BIN_EXE_reanimator"))
        .args(["record", "--backend", "ebpf", "--snapshot", "off"])
        .args(["--ring-size", "65536", "-o"])
        .arg(&trace)
        .args(["-p", &pid.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("reanimator runs");
    let stopped = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.rsplit(") ").next().is_some_and(|r| r.starts_with('T')))
    };
    wait_for("a back-pressure stop", stopped);
    recorder.kill().unwrap();
    recorder.wait().unwrap();
    let written = || {
        let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
        io.lines()
            .find_map(|l| l.strip_prefix("wchar: "))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap()
    };
    let before = written();
    wait_for("the attached program to go on writing", || {
        written() > before + (64 << 20)
    });
}

/// `record -p PID` with the default back end (`auto`) and snapshot
/// records with ptrace, the only one that records the files of running
/// processes, and says so. Before, it chose eBPF and refused, naming a
/// `--backend ebpf` the user never gave.
#[test]
fn attaching_with_the_default_back_end_uses_ptrace_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let program = KillOnDrop(
        Command::new("sh")
            .current_dir(dir.path())
            .args(["-c", "sleep 1; echo done > out"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("sh runs"),
    );
    let pid = program.0.id().to_string();
    let trace = dir.path().join("t.rtr");
    let out = record(dir.path(), &["-o", trace.to_str().unwrap(), "-p", &pid]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("recording with ptrace (attaching"), "{err}");
    assert!(trace.exists(), "{err}");
}

/// A ptrace recording whose command sits idle still writes what it has
/// recorded within about a second, so a trace of a program that hangs (or
/// a recorder killed later) holds its calls so far.
#[test]
fn an_idle_ptrace_recording_is_flushed_while_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.rtr");
    let mut recorder = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_reanimator"))
            .current_dir(dir.path())
            .args(["record", "--backend", "ptrace", "-o", "t.rtr", "--"])
            .args(["sh", "-c", "echo hello > marker; exec sleep 60"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("reanimator runs"),
    );
    wait_for("the recorded calls to reach the trace file", || {
        let dump = Command::new(env!("CARGO_BIN_EXE_reanimator"))
            .arg("dump")
            .arg(&trace)
            .output()
            .expect("run reanimator dump");
        String::from_utf8_lossy(&dump.stdout).contains("\"marker\"")
    });
    assert!(
        recorder.0.try_wait().unwrap().is_none(),
        "the recording is still running"
    );
}

/// Stores through a shared writable file mapping whose process was killed
/// reach the file with no call: both back ends capture such mappings as
/// the process ends, and replay writes them. Here a process killed after
/// a failed `execve` (whose entry captured the mapping, but which then
/// lived on), and a forked child killed with the mapping it inherited.
/// (Before 2026-11-27 both back ends only counted them in the summary.)
#[test]
fn both_back_ends_capture_shared_mappings_a_killed_process_held() {
    // SAFETY: geteuid cannot fail.
    let backends: &[&str] = if unsafe { libc::geteuid() } == 0 {
        &["ptrace", "ebpf"]
    } else {
        eprintln!("note: not root: the eBPF back end is not checked");
        &["ptrace"]
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.dat");
    std::fs::write(&file, [0u8; 4096]).unwrap();
    let script = format!(
        "import mmap, os, subprocess\n\
         f = open({file:?}, 'r+b')\n\
         m = mmap.mmap(f.fileno(), 4096)\n\
         subprocess.run(['true'])\n\
         pid = os.fork()\n\
         if pid == 0:\n    m[0:1] = b'c'\n    os.kill(os.getpid(), 9)\n\
         os.waitpid(pid, 0)\n\
         try:\n    os.execv('/nonexistent', ['x'])\n\
         except OSError:\n    pass\n\
         m[1:2] = b'y'\n\
         os.kill(os.getpid(), 9)\n"
    );
    for backend in backends {
        let out = record(
            dir.path(),
            &[
                "--backend",
                backend,
                "-o",
                "m.rtr",
                "--force",
                "--",
                "python3",
                "-c",
                &script,
            ],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(128 + 9), "{backend}: {err}");
        assert!(!err.contains("shared writable mapping"), "{backend}: {err}");
        assert_eq!(&std::fs::read(&file).unwrap()[..2], b"cy");
        let root = dir.path().join(format!("root-{backend}"));
        let replay = common::output_within(
            Command::new(common::bin())
                .current_dir(dir.path())
                .args(["replay", "m.rtr", "--root"])
                .arg(&root)
                .stdin(std::process::Stdio::null()),
            std::time::Duration::from_secs(120),
        );
        let shown = common::show(&replay);
        assert!(replay.status.success(), "{backend}: {shown}");
        assert!(shown.contains(", 0 differ"), "{backend}: {shown}");
        std::fs::write(&file, [0u8; 4096]).unwrap();
    }
}

/// Records `argv` with eBPF through a 1 MiB ring, which stops a `dd` at
/// most calls, and no initial state; asserts that the recording succeeded
/// and the ring filled (or the test would prove nothing). Returns the
/// recorder's stderr, and the whole output to show.
fn record_through_a_small_ring(dir: &Path, argv: &[&str]) -> (String, String) {
    let o = common::output_within(
        Command::new(common::bin())
            .current_dir(dir)
            .args(["record", "--backend", "ebpf", "--snapshot", "off"])
            .args(["--ring-size", "1M", "--force", "-o", "t.rtr", "--"])
            .args(argv)
            .stdin(std::process::Stdio::null()),
        std::time::Duration::from_secs(120),
    );
    let shown = common::show(&o);
    assert!(o.status.success(), "{argv:?}: {shown}");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.contains("back-pressure stop"),
        "{argv:?}: the ring never filled, so the test proved nothing: {shown}"
    );
    (err, shown)
}

/// `su`, `runuser`, `sudo` and `script` stop themselves when their child
/// stops, and continue it when they are continued: after a back-pressure
/// stop of the child nobody continued the wrapper, and the recording hung
/// (`runuser -u postgres -- pgbench` did, about one run in three). A 1 MiB
/// ring stops `dd` at most calls; the recording must end, complete.
#[test]
fn wrappers_that_stop_with_their_child_are_continued_with_it() {
    if let Some(why) = reanimator_ebpf::unavailable() {
        panic!("this test needs the ebpf back end: {why} (CI runs it as root)");
    }
    common::require("runuser");
    common::require("script");
    let dir = tempfile::tempdir().unwrap();
    let dd = "dd if=/dev/zero of=out bs=64k count=2000 status=none";
    let wrapped: [Vec<&str>; 2] = [
        ["runuser", "-u", "root", "--", "sh", "-c", dd].to_vec(),
        ["script", "-qec", dd, "/dev/null"].to_vec(),
    ];
    for argv in wrapped {
        let _ = std::fs::remove_file(dir.path().join("out"));
        let (err, shown) = record_through_a_small_ring(dir.path(), &argv);
        let len = std::fs::metadata(dir.path().join("out")).unwrap().len();
        assert_eq!(len, 2000 * 65536, "{argv:?}: dd ran to its end");
        assert!(
            err.contains("stopped with a child stopped for back-pressure"),
            "{argv:?}: no wrapper stop was seen: {shown}"
        );
        // `script` reaps only on a SIGCHLD saying its child exited: one
        // dropped behind a pending stop's SIGCHLD left it waiting for good
        // (runuser only waitpids: such a loss is harmless, and not told).
        assert!(
            !err.contains("not told to the parent"),
            "{argv:?}: the exit was not held for the parent: {shown}"
        );
    }
}

/// SIGCHLD does not queue, so a child's exit while its parent still has
/// a back-pressure stop's SIGCHLD pending goes untold. Here the parent has
/// a signalfd for SIGCHLD, as `script` does, but never reads it, and reaps
/// with a plain `waitpid`: the exit is held for a while in case the parent
/// reads the pending one, then let go; the recorder says at once what was
/// lost, and counts it. A `bash -c` parent, which blocks SIGCHLD while it
/// waits, is not held up for nothing.
#[test]
fn an_exit_a_parent_was_not_told_of_is_reported() {
    if let Some(why) = reanimator_ebpf::unavailable() {
        panic!("this test needs the ebpf back end: {why} (CI runs it as root)");
    }
    common::require("python3");
    let dir = tempfile::tempdir().unwrap();
    let parent = "import ctypes, os, signal, sys\n\
        mask = (ctypes.c_ubyte * 128)()\n\
        mask[(signal.SIGCHLD - 1) // 8] = 1 << ((signal.SIGCHLD - 1) % 8)\n\
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])\n\
        assert ctypes.CDLL(None).signalfd(-1, mask, 0) >= 0\n\
        pid = os.fork()\n\
        if pid == 0:\n    \
            os.execvp('dd', ['dd', 'if=/dev/zero', 'of=out', 'bs=64k', 'count=2000', 'status=none'])\n\
        sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n";
    let (err, shown) = record_through_a_small_ring(dir.path(), &["python3", "-c", parent]);
    assert!(
        err.contains("was not told that its child dd"),
        "no warning while recording: {shown}"
    );
    assert!(
        err.contains("1 child exit not told to the parent"),
        "not counted in the summary: {shown}"
    );
    // With no initial state asked for, the gate holds exits only: it must
    // record no initial state either (the final manifest is written).
    let before = records(&dir.path().join("t.rtr"))
        .into_iter()
        .filter(|r| match r {
            Record::PathState(p) => p.phase == PathPhase::Before,
            r => matches!(r, Record::PathData(_)),
        })
        .count();
    assert_eq!(before, 0, "--snapshot off recorded initial path states");

    let bash = "dd if=/dev/zero of=out bs=64k count=2000 status=none; true";
    let (err, shown) = record_through_a_small_ring(dir.path(), &["bash", "-c", bash]);
    // Held, bash's child would have waited out the hold, then gone untold.
    assert!(
        !err.contains("not told"),
        "bash was taken for a listener: {shown}"
    );
}

/// A recorded command starts with the signal dispositions it would have
/// had untraced. The recorder ignores `SIGPIPE` (as every Rust program
/// does), and its command used to inherit that: `yes | head -c 1` ended
/// with "Broken pipe" and status 1 instead of dying of `SIGPIPE` (141), so
/// a script's pipelines (`set -o pipefail`) went otherwise when recorded.
#[test]
fn a_recorded_pipeline_ends_by_sigpipe_as_untraced() {
    let dir = tempfile::tempdir().unwrap();
    let script = "(yes; echo $? > status) | head -c 1 > /dev/null; \
                  grep SigIgn /proc/self/status > ignored";
    let untraced = common::output_within(
        Command::new("sh")
            .current_dir(dir.path())
            .args(["-c", script])
            .stdin(std::process::Stdio::null()),
        std::time::Duration::from_secs(60),
    );
    assert!(untraced.status.success(), "{}", common::show(&untraced));
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    assert_eq!(
        read("status").trim(),
        "141",
        "untraced, yes ends by SIGPIPE"
    );
    // Signals 1-31: glibc keeps 32 and up for itself (the recorder's
    // glibc may handle one of those, and a handled signal is not ignored
    // after exec), and no program can ask for them.
    let standard_ignored = |line: String| {
        let hex = line.trim().trim_start_matches("SigIgn:").trim();
        u64::from_str_radix(hex, 16).expect("SigIgn in hex") & 0x7fff_ffff
    };
    let ignored_untraced = standard_ignored(read("ignored"));
    for backend in ["ptrace", "auto"] {
        let out = common::output_within(
            Command::new(common::bin())
                .current_dir(dir.path())
                .args(["record", "--force", "--backend", backend, "-o", "t.rtr"])
                .args(["--", "sh", "-c", script])
                .stdin(std::process::Stdio::null()),
            std::time::Duration::from_secs(120),
        );
        assert!(out.status.success(), "{backend}: {}", common::show(&out));
        assert_eq!(
            read("status").trim(),
            "141",
            "{backend}: yes ended by SIGPIPE"
        );
        assert_eq!(
            standard_ignored(read("ignored")),
            ignored_untraced,
            "{backend}: the shell ignores what it ignores untraced"
        );
    }
}

/// A process that makes itself non-dumpable (ssh-agent, gpg-agent) keeps
/// its memory from a recorder without `CAP_SYS_PTRACE`: the summary says
/// that the kernel refused those reads and what to do, instead of only
/// counting captures unreadable.
#[test]
fn reads_a_non_dumpable_process_refuses_are_explained() {
    common::require_root("records as another user (setpriv)");
    common::require("setpriv");
    common::require("python3");
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    // PR_SET_DUMPABLE is 4.
    let program = "import ctypes; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); \
                   open('secret', 'w').write('hidden')";
    let out = common::output_within(
        Command::new("setpriv")
            .current_dir(dir.path())
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(common::bin())
            .args(["record", "--backend", "ptrace", "-o", "t.rtr"])
            .args(["--", "python3", "-c", program])
            .stdin(std::process::Stdio::null()),
        std::time::Duration::from_secs(120),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}", common::show(&out));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("secret")).unwrap(),
        "hidden"
    );
    assert!(
        err.contains("captures unreadable")
            && err.contains("refused by the kernel (a process made itself non-dumpable"),
        "{err}"
    );
}

/// A user without root asking for the eBPF back end hears that first and
/// plainly (they met the seccomp path gate's failure, and its advice
/// `--snapshot off` did not help); `auto` falls back to ptrace.
#[test]
fn ebpf_without_root_is_refused_plainly_and_auto_falls_back() {
    common::require_root("records as another user (setpriv)");
    common::require("setpriv");
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let as_nobody = |backend: &str| {
        common::output_within(
            Command::new("setpriv")
                .current_dir(dir.path())
                .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(common::bin())
                .args([
                    "record",
                    "--backend",
                    backend,
                    "-o",
                    "t.rtr",
                    "--force",
                    "--",
                    "true",
                ])
                .stdin(std::process::Stdio::null()),
            std::time::Duration::from_secs(60),
        )
    };
    let out = as_nobody("ebpf");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("the ebpf back end needs root"), "{err}");
    assert!(!dir.path().join("t.rtr").exists());
    let out = as_nobody("auto");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("recording with ptrace (the ebpf back end needs root)"),
        "{err}"
    );
}
