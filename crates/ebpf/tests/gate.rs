//! The path gate lets calls that change nothing through unheld: stats
//! with `AT_EMPTY_PATH` (they name no path when the path is empty), and
//! queries and read-only opens at the working directory. The paths they
//! name must still get their initial state recorded, before any later
//! call changes them. Needs root (fails, does not skip, without).

mod common;

use std::collections::HashMap;
use std::path::Path;

use reanimator_record::{RecordSummary, SnapshotPolicy, Target};
use reanimator_trace::{FileKind, PathPhase, PathState, ReadOptions, Reader, Record};

/// Records test program `name` run on `dir` with the eBPF back end (every
/// initial state with contents) into a trace under `tmp`; the program
/// must exit 0 (its exit code says what failed).
fn record_on(tmp: &Path, name: &str, dir: &Path) -> (std::path::PathBuf, RecordSummary) {
    let exe = common::compile(&common::program(name), &tmp.join(name));
    let trace = tmp.join("t.rtr");
    let target = Target::spawn(&[exe.into(), dir.into()]).expect("program found");
    let summary = common::record(
        &target,
        SnapshotPolicy::Contents,
        &reanimator_ebpf::Options::default(),
        &trace,
    )
    .expect("recording works");
    assert_eq!(
        summary.root_status,
        Some(reanimator_trace::ExitStatus::Exited(0)),
        "the program reports what failed in its exit code"
    );
    (trace, summary)
}

/// The initial states a trace holds, by path, with their contents.
fn initial_states(trace: &Path) -> HashMap<Vec<u8>, (PathState, Vec<u8>)> {
    let mut out: HashMap<Vec<u8>, (PathState, Vec<u8>)> = HashMap::new();
    let mut reader = Reader::open(trace, ReadOptions { data: true }).expect("trace opens");
    while let Some(r) = reader.next_record().expect("trace reads") {
        match r {
            Record::PathState(p) if p.phase == PathPhase::Before => {
                out.insert(p.path.clone(), (p, Vec::new()));
            }
            Record::PathData(d) => {
                if let Some((_, data)) = out.get_mut(&d.path) {
                    data.extend_from_slice(d.data.data.as_deref().unwrap_or_default());
                }
            }
            _ => {}
        }
    }
    out
}

#[test]
fn queries_and_read_only_opens_the_gate_lets_through_are_recorded_in_time() {
    common::require_ebpf();
    let tmp = tempfile::tempdir().expect("temporary directory");
    let dir = tmp.path().join("work");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    for (name, bytes) in [
        ("q.dat", &b"q"[..]),
        ("r.dat", b"old contents"),
        ("c.dat", b"c"),
        ("same", b"in work"),
        ("sub/same", b"in sub"),
    ] {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    std::os::unix::fs::symlink("q.dat", dir.join("link")).unwrap();

    let (trace, summary) = record_on(tmp.path(), "latepaths", &dir);
    assert_eq!(summary.snapshot_unreadable, 0);
    assert_eq!(std::fs::read(dir.join("r.dat")).unwrap(), b"new");

    let states = initial_states(&trace);
    let at = |name: &str| {
        let path = dir.join(name).as_os_str().as_encoded_bytes().to_vec();
        states
            .get(&path)
            .unwrap_or_else(|| panic!("no initial state of {name}"))
            .clone()
    };
    assert_eq!(at("q.dat").0.kind, FileKind::Regular);
    assert_eq!(at("link").0.kind, FileKind::Symlink);
    assert_eq!(at("link").0.target, b"q.dat");
    let (r, data) = at("r.dat");
    assert_eq!(
        (r.size, data.as_slice()),
        (12, &b"old contents"[..]),
        "before the rewrite"
    );
    // Stat'ed and removed files record no contents: their sizes say
    // which file each state is of.
    assert_eq!(
        at("same").0.size,
        7,
        "\"in work\": resolved before the fchdir"
    );
    assert_eq!(at("sub/same").0.size, 6, "\"in sub\": the unlink's own");
    assert_eq!(
        at("c.dat").0.kind,
        FileKind::Regular,
        "the child's, before it exited"
    );
}

#[test]
fn a_stat_the_gate_lets_through_still_records_the_path_it_names() {
    common::require_ebpf();
    let tmp = tempfile::tempdir().expect("temporary directory");
    let dir = tmp.path().join("work");
    std::fs::create_dir(&dir).unwrap();
    let old = dir.join("old.dat");
    std::fs::write(&old, b"old contents").unwrap();

    let (trace, _) = record_on(tmp.path(), "emptypath", &dir);
    assert_eq!(std::fs::read(&old).unwrap(), b"new");

    let old_path = old.as_os_str().as_encoded_bytes().to_vec();
    let mut before = Vec::new();
    let mut data = Vec::new();
    let mut stats = 0;
    let mut reader = Reader::open(&trace, ReadOptions { data: true }).expect("trace opens");
    while let Some(r) = reader.next_record().expect("trace reads") {
        match r {
            Record::PathState(p) if p.path == old_path && p.phase == PathPhase::Before => {
                before.push(p);
            }
            Record::PathData(d) if d.path == old_path => {
                data.extend_from_slice(d.data.data.as_deref().unwrap_or_default())
            }
            Record::Syscall(e) if e.nr == libc::SYS_newfstatat as u32 => stats += 1,
            _ => {}
        }
    }
    assert!(stats >= 2, "both stats recorded ({stats})");
    // Stat'ed, then truncated: its contents never mattered, so only what
    // it was is recorded, by the stat, before the rewrite.
    let [before] = before.as_slice() else {
        panic!("one initial state of old.dat: {before:?}");
    };
    assert_eq!(before.kind, FileKind::Regular);
    assert_eq!(before.size, 12, "from before the rewrite");
    assert_eq!(before.content, reanimator_trace::ContentNote::Skipped);
    assert!(data.is_empty(), "no contents");
}
