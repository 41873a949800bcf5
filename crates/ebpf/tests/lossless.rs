//! Losslessness under pressure: four threads write 64 KiB buffers as fast
//! as they can into a deliberately small ring (1 MiB). The recording must
//! either hold every call with every byte, or fail loudly with a gap
//! record: never a silent hole. And one call's buffer larger than the
//! whole ring is recorded in full all the same. Needs root (fails, does
//! not skip, without).

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use reanimator_record::{Error, RecordSummary, SnapshotPolicy, Target};
use reanimator_trace::{CaptureStatus, ReadOptions, Reader, Record};

const THREADS: u64 = 4;
const CALLS: u64 = 500;
const SIZE: u64 = 64 << 10;

/// Builds test program `name` in `dir`, records `name OUT ARGS...` (OUT a
/// file in `dir`) through a deliberately small ring (1 MiB), and returns
/// the recording's result and the trace.
fn record_through_small_ring(
    dir: &Path,
    name: &str,
    args: &[u64],
) -> (Result<RecordSummary, Error>, PathBuf) {
    common::require_ebpf();
    let exe = common::compile(&common::program(name), &dir.join(name));
    let trace = dir.join(format!("{name}.rtr"));
    let mut argv: Vec<OsString> = vec![exe.into(), dir.join("out.dat").into()];
    argv.extend(args.iter().map(|a| a.to_string().into()));
    let target = Target::spawn(&argv).expect("program found");
    let opts = reanimator_ebpf::Options {
        ring_bytes: 1 << 20,
        ..reanimator_ebpf::Options::default()
    };
    let result = common::record(&target, SnapshotPolicy::Off, &opts, &trace);
    (result, trace)
}

#[test]
fn a_small_ring_loses_nothing_or_says_so() {
    let tmp = tempfile::tempdir().expect("temporary directory");
    let (result, trace) = record_through_small_ring(tmp.path(), "storm", &[THREADS, CALLS, SIZE]);

    let mut reader = Reader::open(&trace, ReadOptions { data: true }).expect("trace opens");
    let mut pwrites = 0u64;
    let mut gaps = 0u64;
    let mut reasons = Vec::new();
    // Calls whose buffer capture is absent (allowed only in a recording
    // that reports a loss).
    let mut missing = Vec::new();
    let mut threads = std::collections::HashMap::new();
    while let Some(r) = reader.next_record().expect("trace reads") {
        match r {
            Record::Loss(l) => {
                gaps += l.count.max(1);
                reasons.push(l.reason);
            }
            Record::Syscall(e) if e.nr == libc::SYS_pwrite64 as u32 => {
                pwrites += 1;
                let Some(cap) = e.capture(1, reanimator_trace::Role::Entry) else {
                    missing.push(e.seq);
                    continue;
                };
                assert_eq!(
                    cap.status,
                    CaptureStatus::Complete,
                    "pwrite buffer not complete"
                );
                let data = cap.data.as_deref().expect("data");
                assert_eq!(data.len() as u64, SIZE);
                // Which thread and call: from the offset.
                let k = e.args[3] / SIZE;
                let (t, i) = (k / CALLS, k % CALLS);
                threads.insert(e.tid, t);
                for (j, &b) in data.iter().enumerate() {
                    let want = (t * 31 + i * 7 + j as u64) as u8;
                    assert_eq!(b, want, "byte {j} of thread {t} call {i}");
                }
            }
            _ => {}
        }
    }
    match result {
        Ok(summary) => {
            assert_eq!(gaps, 0, "a gap record in a recording that reported success");
            assert!(
                missing.is_empty(),
                "pwrites without their buffer in a recording that reported success: {missing:?}"
            );
            assert_eq!(pwrites, THREADS * CALLS, "every pwrite is in the trace");
            assert_eq!(threads.len() as u64, THREADS);
            eprintln!(
                "lossless: {pwrites} pwrites, {} MB checked byte for byte, {} threads",
                (pwrites * SIZE) >> 20,
                summary.threads
            );
        }
        Err(Error::Lost(n, _)) => {
            // Loud, as the contract asks; the accounting is checked, then
            // the test fails all the same: back-pressure should have
            // prevented the loss.
            assert!(gaps > 0, "a lost recording must hold a gap record");
            assert_eq!(gaps, n, "the gap records count what was reported lost");
            let complete = pwrites - missing.len() as u64;
            let holes = THREADS * CALLS - complete;
            assert!(
                holes <= gaps,
                "{holes} pwrites absent or without their buffer, only {gaps} events reported lost"
            );
            panic!(
                "the recording lost {n} events (reported loudly, as it must; but the \
                 back-pressure should have prevented it): {reasons:?}"
            );
        }
        Err(e) => panic!("recording failed: {e}"),
    }
}

/// One call's buffer larger than the whole ring (12 MiB through a 1 MiB
/// ring, from two threads at once, both ways): the part that does not fit
/// is read from the stopped thread, so every byte is still there.
#[test]
fn a_buffer_larger_than_the_ring_is_complete() {
    const BIG_THREADS: u64 = 2;
    const BIG: u64 = 12 << 20;
    let tmp = tempfile::tempdir().expect("temporary directory");
    let (result, trace) = record_through_small_ring(tmp.path(), "bigio", &[BIG_THREADS, BIG]);
    let summary = result.expect("recorded without loss");
    assert_eq!(
        summary.root_status,
        Some(reanimator_trace::ExitStatus::Exited(0)),
        "the program saw its own data back"
    );
    assert_eq!(summary.captures.unreadable, 0);

    let mut reader = Reader::open(&trace, ReadOptions { data: true }).expect("trace opens");
    let mut checked = Vec::new();
    while let Some(r) = reader.next_record().expect("trace reads") {
        let Record::Syscall(e) = r else { continue };
        let role = match e.nr as i64 {
            libc::SYS_pwrite64 => reanimator_trace::Role::Entry,
            libc::SYS_pread64 => reanimator_trace::Role::Exit,
            _ => continue,
        };
        if e.args[2] != BIG {
            continue; // the dynamic loader's pread64 of an ELF header
        }
        let cap = e.capture(1, role).expect("the buffer is captured");
        assert_eq!(cap.status, CaptureStatus::Complete, "call {}", e.seq);
        let data = cap.data.as_deref().expect("data");
        assert_eq!(data.len() as u64, BIG, "call {}", e.seq);
        let t = e.args[3] / BIG;
        for (j, &b) in data.iter().enumerate() {
            let want = (t * 13 + j as u64 / 4096 + j as u64) as u8;
            assert_eq!(b, want, "byte {j} of call {} (thread {t})", e.seq);
        }
        checked.push(e.nr);
    }
    assert_eq!(
        checked.len() as u64,
        2 * BIG_THREADS,
        "every pwrite and pread"
    );
}

/// A large shared mapping of which the program touched three pages (LMDB
/// maps its whole map size): its `msync` and `munmap` captures hold those
/// pages, and the untouched ones cost no ring space. The recorder once
/// reserved ring space for every page before finding it untouched, and
/// such reservations fill the ring until read past: a 64 MiB mapping lost
/// records through the default 32 MiB ring.
#[test]
fn a_large_mapping_touched_in_a_few_pages_loses_nothing() {
    const SIZE: u64 = 64 << 20;
    let tmp = tempfile::tempdir().expect("temporary directory");
    let (result, trace) = record_through_small_ring(tmp.path(), "sparsemap", &[SIZE]);
    let summary = result.expect("recorded without loss");
    assert_eq!(
        summary.root_status,
        Some(reanimator_trace::ExitStatus::Exited(0))
    );
    let pages = [0, SIZE / 4096 / 2, SIZE / 4096 - 1];
    let mut reader = Reader::open(&trace, ReadOptions { data: true }).expect("trace opens");
    let mut checked = Vec::new();
    while let Some(r) = reader.next_record().expect("trace reads") {
        let Record::Syscall(e) = r else { continue };
        if !matches!(e.nr as i64, libc::SYS_msync | libc::SYS_munmap) || e.args[1] != SIZE {
            continue;
        }
        // One run per touched page, each a whole page of its bytes.
        let mut runs: Vec<(u64, Vec<u8>)> = e
            .captures
            .iter()
            .map(|c| {
                (
                    u64::from(c.elem),
                    c.data.as_deref().unwrap_or_default().to_vec(),
                )
            })
            .collect();
        runs.sort();
        let got: Vec<u64> = runs.iter().map(|(p, _)| *p).collect();
        assert_eq!(got, pages, "pages captured at call {}", e.seq);
        for (page, data) in &runs {
            let first = if *page == 0 && e.nr as i64 == libc::SYS_munmap {
                0xee
            } else {
                ((page & 0xff) as u8).wrapping_add(1)
            };
            assert_eq!(data.len(), 4096, "page {page} at call {}", e.seq);
            assert_eq!(data[0], first, "page {page} at call {}", e.seq);
            assert!(
                data[1..]
                    .iter()
                    .all(|&b| b == ((page & 0xff) as u8).wrapping_add(1)),
                "page {page} at call {}",
                e.seq
            );
        }
        checked.push(e.nr as i64);
    }
    assert_eq!(checked, [libc::SYS_msync, libc::SYS_munmap]);
}
