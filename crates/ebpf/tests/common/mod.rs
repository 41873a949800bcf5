//! What the eBPF back end's integration tests share (each test binary
//! uses a part of it).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Fails (never skips) when the eBPF back end cannot run here: CI runs
/// these tests as root on a kernel that supports it.
pub fn require_ebpf() {
    if let Some(why) = reanimator_ebpf::unavailable() {
        panic!("this test needs the ebpf back end: {why} (CI runs it as root)");
    }
}

/// Compiles the C program `src` into `out` with `cc -O1 -pthread`.
pub fn compile(src: &Path, out: &Path) -> PathBuf {
    let cc = Command::new("cc")
        .args(["-O1", "-pthread", "-o"])
        .arg(out)
        .arg(src)
        .output()
        .expect("the C compiler `cc` runs (scripts/install-deps.sh installs it)");
    assert!(
        cc.status.success(),
        "cc {}: {}",
        src.display(),
        String::from_utf8_lossy(&cc.stderr)
    );
    out.to_path_buf()
}

/// A test program of this crate (`tests/programs/NAME.c`).
pub fn program(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/programs/{name}.c"))
}

/// Records `target` with the eBPF back end, every buffer, into a new trace
/// at `trace`, finished whatever the recording's result (a reported loss
/// leaves its gap records there to check).
pub fn record(
    target: &reanimator_record::Target,
    snapshot: reanimator_record::SnapshotPolicy,
    opts: &reanimator_ebpf::Options,
    trace: &Path,
) -> Result<reanimator_record::RecordSummary, reanimator_record::Error> {
    use reanimator_trace::{TraceMeta, Writer, WriterOptions};
    let mut w = Writer::create(trace, &TraceMeta::default(), WriterOptions::default())
        .expect("trace created");
    let result = reanimator_ebpf::record(
        target,
        reanimator_record::DataPolicy::All,
        snapshot,
        opts,
        &mut w,
    );
    w.finish().expect("trace finished");
    result
}
