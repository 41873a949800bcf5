//! The path gate lets stats with `AT_EMPTY_PATH` through unheld (they
//! name no path when the path is empty, and they change nothing). One
//! that names a path all the same must still get that path's initial
//! state recorded, before any later call changes it. Needs root (fails,
//! does not skip, without).

mod common;

use reanimator_record::{SnapshotPolicy, Target};
use reanimator_trace::{FileKind, PathPhase, ReadOptions, Reader, Record};

#[test]
fn a_stat_the_gate_lets_through_still_records_the_path_it_names() {
    common::require_ebpf();
    let tmp = tempfile::tempdir().expect("temporary directory");
    let exe = common::compile(&common::program("emptypath"), &tmp.path().join("emptypath"));
    let dir = tmp.path().join("work");
    std::fs::create_dir(&dir).unwrap();
    let old = dir.join("old.dat");
    std::fs::write(&old, b"old contents").unwrap();

    let trace = tmp.path().join("t.rtr");
    let target = Target::spawn(&[exe.into(), dir.clone().into()]).expect("program found");
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
    assert_eq!(std::fs::read(&old).unwrap(), b"new");

    let old_path = old.as_os_str().as_encoded_bytes().to_vec();
    let mut before = None;
    let mut data = Vec::new();
    let mut stats = 0;
    let mut reader = Reader::open(&trace, ReadOptions { data: true }).expect("trace opens");
    while let Some(r) = reader.next_record().expect("trace reads") {
        match r {
            Record::PathState(p) if p.path == old_path && p.phase == PathPhase::Before => {
                before = Some(p);
            }
            Record::PathData(d) if d.path == old_path => {
                data.extend_from_slice(d.data.data.as_deref().unwrap_or_default())
            }
            Record::Syscall(e) if e.nr == libc::SYS_newfstatat as u32 => stats += 1,
            _ => {}
        }
    }
    assert!(stats >= 2, "both stats recorded ({stats})");
    let before = before.expect("the initial state of old.dat is recorded");
    assert_eq!(before.kind, FileKind::Regular);
    assert_eq!(before.size, 12);
    assert_eq!(
        data, b"old contents",
        "its contents from before the rewrite"
    );
}
