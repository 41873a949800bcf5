//! Helpers the command-line integration tests share.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `reanimator` binary under test.
#[allow(dead_code)] // each test crate compiles this module; not all use it
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_reanimator")
}

/// Fails the test with an install hint when `tool` is missing (these
/// tests record and replay real programs).
#[allow(dead_code)] // each test crate compiles this module; not all use it
pub fn require(tool: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).exists()))
        .unwrap_or(false);
    assert!(
        found,
        "`{tool}` is not installed; these tests run real programs: run scripts/install-deps.sh"
    );
}

/// Fails the test unless it runs as root, saying what it does that needs
/// root (CI runs as root, so these tests always run there).
#[allow(dead_code)] // each test crate compiles this module; not all use it
pub fn require_root(what: &str) {
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(euid, 0, "this test {what}: run it as root");
}

/// A finished command's status and output, for assertion messages.
#[allow(dead_code)] // each test crate compiles this module; not all use it
pub fn show(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `cmd` to completion like `Command::output`, but fails the test
/// (after killing it) if it has not finished within `limit`: a replay
/// that stalls must fail CI, not hold it until its time limit.
#[allow(dead_code)] // each test crate compiles this module; not all use it
pub fn output_within(cmd: &mut std::process::Command, limit: std::time::Duration) -> Output {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("command starts");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            buf
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout piped")));
    let err = drain(Box::new(child.stderr.take().expect("stderr piped")));
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the command") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {limit:?}: it hangs");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

/// Polls `done` every 20 ms until it holds, failing the test after 20 s
/// (`what` names what was awaited).
#[allow(dead_code)] // each test crate compiles this module; not all use it
pub fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Compiles one C source into `tmp`.
#[allow(dead_code)] // each test crate compiles this module; not all use it
pub fn compile(tmp: &Path, name: &str, src: &Path) -> PathBuf {
    require("cc");
    let out = tmp.join(format!("bin-{name}"));
    let o = Command::new("cc")
        .args(["-O1", "-pthread", "-o"])
        .arg(&out)
        .arg(src)
        .output()
        .expect("run cc");
    assert!(o.status.success(), "cc {name}: {}", show(&o));
    out
}

/// Builds a program of this crate's tests (`tests/programs`).
#[allow(dead_code)] // each test crate compiles this module; not all use it
pub fn program(tmp: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs")
        .join(format!("{name}.c"));
    compile(tmp, name, &src)
}
