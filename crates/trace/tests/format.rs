//! Format tests whose oracle is the records written: round trips, frame
//! boundaries, deduplication across frames, corruption and crashes.

use std::path::{Path, PathBuf};

use reanimator_trace::*;

/// A small deterministic generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn capture(arg: u8, role: Role, elem: u32, data: Vec<u8>) -> Capture {
    Capture {
        arg,
        role,
        elem,
        status: CaptureStatus::Complete,
        len: data.len() as u64,
        captured: data.len() as u64,
        data: Some(data.into()),
    }
}

/// A varied, deterministic workload: every record kind, inline and blob
/// buffers, repeats (dedup), big buffers (chunking), failures, no-exit
/// calls and captures without data.
fn sample_records(n: usize, seed: u64) -> Vec<Record> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(n);
    let shared = vec![0xabu8; 4096];
    let mut seq = 0u64;
    let mut t = 1_000_000_000u64;
    out.push(Record::ProcessStart(ProcessStart {
        seq: 0,
        time_ns: t,
        tgid: 100,
        tid: 100,
        ppid: 1,
        cause: StartCause::Spawned,
        uid: 1000,
        gid: 1000,
        euid: 1000,
        egid: 1000,
        umask: 0o022,
        cwd: b"/home/u".to_vec(),
        exe: b"/usr/bin/db".to_vec(),
        argv: vec![b"db".to_vec(), b"--fill".to_vec()],
        env: vec![b"HOME=/home/u".to_vec(), b"LANG=C".to_vec()],
        fds: vec![
            FdInfo {
                fd: 0,
                flags: 2,
                offset: 0,
                target: b"/dev/pts/0".to_vec(),
                same_as: None,
            },
            FdInfo {
                fd: 3,
                flags: 0o102,
                offset: 4096,
                target: b"/home/u/db".to_vec(),
                same_as: None,
            },
            FdInfo {
                fd: 4,
                flags: 0o102,
                offset: 4096,
                target: b"/home/u/db".to_vec(),
                same_as: Some(3),
            },
        ],
        groups: Some(vec![4, 24, 27]),
    }));
    while out.len() < n {
        seq += 1 + rng.below(2);
        t += rng.below(50_000);
        let tid = 100 + rng.below(4) as u32;
        let kind = rng.below(100);
        let rec = if kind < 70 {
            let len = match rng.below(6) {
                0 => 0,
                1 => rng.below(64) as usize,
                2 => 138,
                3 => 4096,
                4 => rng.below(20_000) as usize,
                _ => 40_000,
            };
            let data: Vec<u8> = if rng.below(3) == 0 {
                shared[..len.min(4096)].to_vec()
            } else {
                let mut v = vec![0u8; len];
                for b in v.iter_mut().step_by(7) {
                    *b = rng.next() as u8;
                }
                v
            };
            let failed = rng.below(10) == 0;
            let mut captures = vec![capture(
                1,
                if rng.below(2) == 0 {
                    Role::Entry
                } else {
                    Role::Exit
                },
                0,
                data,
            )];
            if rng.below(4) == 0 {
                captures.push(capture(
                    0,
                    Role::Entry,
                    0,
                    b"/home/u/db/000123.sst".to_vec(),
                ));
                captures.push(Capture {
                    arg: 2,
                    role: Role::Exit,
                    elem: 3,
                    status: CaptureStatus::Unreadable,
                    len: 144,
                    captured: 0,
                    data: None,
                });
            }
            Record::Syscall(SyscallEvent {
                seq,
                tgid: 100,
                tid,
                nr: rng.below(460) as u32,
                enter_ns: t,
                args: [
                    rng.next(),
                    rng.below(10),
                    u64::MAX,
                    0,
                    rng.below(1 << 40),
                    7,
                ],
                exit: if rng.below(50) == 0 {
                    None
                } else {
                    Some(SyscallExit {
                        exit_ns: t + rng.below(1_000_000),
                        ret: if failed {
                            -(rng.below(4095) as i64) - 1
                        } else {
                            rng.below(1 << 33) as i64
                        },
                        is_error: failed,
                    })
                },
                captures,
            })
        } else if kind < 80 {
            Record::Signal(SignalDelivery {
                seq,
                time_ns: t,
                tgid: 100,
                tid,
                signo: 17,
                code: -6,
                sender: 99,
            })
        } else if kind < 90 {
            Record::ProcessExit(ProcessExit {
                seq,
                time_ns: t,
                tgid: 100,
                tid,
                status: match rng.below(4) {
                    0 => ExitStatus::Exited(rng.below(256) as i32),
                    1 => ExitStatus::Killed {
                        signal: 9,
                        core: rng.below(2) == 0,
                    },
                    2 => ExitStatus::Superseded { by: 100 },
                    _ => ExitStatus::Detached,
                },
            })
        } else if kind < 95 {
            Record::Loss(Loss {
                seq,
                time_ns: t,
                tgid: 0,
                tid: 0,
                count: rng.below(10),
                reason: "test gap".into(),
            })
        } else if kind < 98 {
            let regular = rng.below(2) == 0;
            Record::PathState(PathState {
                seq,
                time_ns: t,
                phase: if rng.below(2) == 0 {
                    PathPhase::Before
                } else {
                    PathPhase::After
                },
                path: format!("/home/u/db/{:06}.sst", rng.below(1000)).into_bytes(),
                kind: if regular {
                    FileKind::Regular
                } else {
                    FileKind::Symlink
                },
                mode: 0o644,
                uid: 1000,
                gid: 1000,
                size: rng.below(1 << 40),
                target: if regular { vec![] } else { b"../x".to_vec() },
                xattrs: vec![(b"user.k".to_vec(), vec![0, 1, 2])],
                // Both sums: 1.1's whole-contents one and 1.2's trailing
                // piece sum.
                hash: regular.then(|| {
                    let h = u128::from(rng.next()) << 64 | 7;
                    if rng.below(2) == 0 {
                        ContentHash::Whole(h)
                    } else {
                        ContentHash::Pieces(h)
                    }
                }),
                content: ContentNote::Complete,
                // 1.4's trailing hard-link number, with and without a sum.
                link: if rng.below(2) == 0 {
                    0
                } else {
                    rng.below(1 << 20)
                },
            })
        } else {
            let len = [10usize, 4096, 70_000][rng.below(3) as usize];
            Record::PathData(PathData {
                seq,
                time_ns: t,
                path: b"/home/u/db/CURRENT".to_vec(),
                offset: rng.below(1 << 30),
                data: capture(0, Role::Entry, 0, vec![rng.next() as u8; len]),
            })
        };
        out.push(rec);
    }
    out
}

/// Small frames, so a few hundred records span many frames and
/// deduplicated references reach back across evicted cache entries.
fn small_frames() -> WriterOptions {
    WriterOptions {
        records_frame_bytes: 2048,
        blobs_frame_bytes: 16 * 1024,
        chunk_bytes: 8 * 1024,
        ..WriterOptions::default()
    }
}

fn write_trace(path: &Path, records: &[Record], opts: WriterOptions) -> EndSummary {
    let meta = TraceMeta {
        tool: "test".into(),
        recorder: "synthetic".into(),
        ..TraceMeta::default()
    };
    let mut w = Writer::create(path, &meta, opts).unwrap();
    for r in records {
        w.write(r).unwrap();
    }
    w.finish().unwrap().1
}

/// Reads everything; returns the records and the error that stopped it.
fn read_all(path: &Path, data: bool) -> (Vec<Record>, Option<Error>) {
    read_all_with(path, data, false)
}

/// [`read_all`], with frames read ahead on another thread if `prefetch`.
fn read_all_with(path: &Path, data: bool, prefetch: bool) -> (Vec<Record>, Option<Error>) {
    let mut r = match Reader::open(path, ReadOptions { data }) {
        Ok(r) => r,
        Err(e) => return (Vec::new(), Some(e)),
    };
    if prefetch {
        r.prefetch();
    }
    let mut out = Vec::new();
    loop {
        match r.next_record() {
            Ok(Some(rec)) => out.push(rec),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

fn temp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.rtr");
    (dir, path)
}

#[test]
fn round_trip_every_record_kind_with_data() {
    let (_d, path) = temp();
    let records = sample_records(600, 1);
    let end = write_trace(&path, &records, small_frames());
    assert_eq!(end.records, records.len() as u64);
    let (got, err) = read_all(&path, true);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got.len(), records.len());
    for (a, b) in got.iter().zip(&records) {
        assert_eq!(a, b);
    }
}

#[test]
fn round_trip_default_options() {
    let (_d, path) = temp();
    let mut records = sample_records(300, 2);
    // A buffer bigger than a chunk (1 MiB) and than a blob frame (4 MiB).
    let mut rng = Rng(77);
    let big: Vec<u8> = (0..5_000_000)
        .map(|i| if i % 3 == 0 { rng.next() as u8 } else { 0 })
        .collect();
    records.push(Record::Syscall(SyscallEvent {
        seq: 1 << 40,
        tgid: 1,
        tid: 2,
        nr: 0,
        enter_ns: 5,
        args: [3, 0x7f00_0000_0000, 5_000_000, 0, 0, 0],
        exit: Some(SyscallExit {
            exit_ns: 6,
            ret: 5_000_000,
            is_error: false,
        }),
        captures: vec![capture(1, Role::Exit, 0, big)],
    }));
    write_trace(&path, &records, WriterOptions::default());
    let (got, err) = read_all(&path, true);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got, records);
}

#[test]
fn reading_without_data_keeps_lengths() {
    let (_d, path) = temp();
    let records = sample_records(400, 3);
    write_trace(&path, &records, small_frames());
    let (got, err) = read_all(&path, false);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got.len(), records.len());
    for (a, b) in got.iter().zip(&records) {
        match (a, b) {
            (Record::Syscall(a), Record::Syscall(b)) => {
                assert_eq!((a.seq, a.nr, a.args, a.exit), (b.seq, b.nr, b.args, b.exit));
                for (ca, cb) in a.captures.iter().zip(&b.captures) {
                    assert_eq!(
                        (ca.len, ca.captured, ca.status),
                        (cb.len, cb.captured, cb.status)
                    );
                    if cb.captured <= 64 {
                        assert_eq!(ca.data, cb.data, "inline data is always present");
                    } else {
                        assert_eq!(ca.data, None);
                    }
                }
            }
            (Record::PathData(a), Record::PathData(b)) => {
                assert_eq!((&a.path, a.offset), (&b.path, b.offset));
                assert_eq!(a.data.captured, b.data.captured);
                if b.data.captured <= 64 {
                    assert_eq!(a.data.data, b.data.data);
                } else {
                    assert_eq!(a.data.data, None);
                }
            }
            _ => assert_eq!(a, b),
        }
    }
}

#[test]
fn path_contents_alone_can_be_loaded() {
    let (_d, path) = temp();
    let records = sample_records(2000, 5);
    write_trace(&path, &records, small_frames());
    let mut r = Reader::open(&path, ReadOptions { data: false }).unwrap();
    r.load_path_data(true);
    let (mut paths, mut skipped) = (0, 0);
    for want in &records {
        let got = r.next_record().unwrap().expect("a record");
        match (&got, want) {
            (Record::PathData(a), Record::PathData(b)) => {
                assert_eq!(a, b, "path contents are loaded whole");
                paths += usize::from(b.data.captured > 64);
            }
            (Record::Syscall(a), Record::Syscall(b)) => {
                for (ca, cb) in a.captures.iter().zip(&b.captures) {
                    assert_eq!(ca.captured, cb.captured);
                    if cb.captured > 64 {
                        assert_eq!(ca.data, None, "a call's stored buffer is not loaded");
                        skipped += 1;
                    }
                }
            }
            _ => assert_eq!(&got, want),
        }
    }
    assert!(r.next_record().unwrap().is_none());
    assert!(
        paths >= 5 && skipped > 100,
        "{paths} stored path contents, {skipped} buffers"
    );
}

#[test]
fn system_calls_can_be_passed_over() {
    let (_d, path) = temp();
    let records = sample_records(2000, 6);
    write_trace(&path, &records, small_frames());
    let mut r = Reader::open(&path, ReadOptions { data: false }).unwrap();
    r.load_path_data(true);
    r.skip_syscalls(true);
    let want: Vec<&Record> = records
        .iter()
        .filter(|rec| !matches!(rec, Record::Syscall(_)))
        .collect();
    let calls = records.len() - want.len();
    assert!(
        calls > 500 && want.len() > 50,
        "{calls} calls, {} others",
        want.len()
    );
    for w in want {
        // Sequence ids and times of the records after a passed-over call
        // still decode right: the delta state follows every record.
        assert_eq!(&r.next_record().unwrap().expect("a record"), w);
    }
    assert!(
        r.next_record().unwrap().is_none(),
        "the end frame's count agrees"
    );
    assert_eq!(r.counts().passed_syscalls, calls as u64);
}
/// A 4 KiB `write` of `data` with sequence id `seq`.
fn write_call(seq: u64, data: Vec<u8>) -> Record {
    Record::Syscall(SyscallEvent {
        seq,
        tgid: 1,
        tid: 1,
        nr: 1,
        enter_ns: seq,
        args: [1, 0, 4096, 0, 0, 0],
        exit: Some(SyscallExit {
            exit_ns: seq + 1,
            ret: 4096,
            is_error: false,
        }),
        captures: vec![capture(1, Role::Entry, 0, data)],
    })
}

#[test]
fn identical_buffers_are_stored_once() {
    let (_d, a) = temp();
    let (_e, b) = temp();
    let mut rng = Rng(9);
    let block: Vec<u8> = (0..4096).map(|_| rng.next() as u8).collect();
    let same: Vec<Record> = (0..1000).map(|i| write_call(i, block.clone())).collect();
    let distinct: Vec<Record> = (0..1000)
        .map(|i| write_call(i, (0..4096).map(|_| rng.next() as u8).collect()))
        .collect();
    let end = write_trace(&a, &same, WriterOptions::default());
    write_trace(&b, &distinct, WriterOptions::default());
    assert_eq!(end.captured_bytes, 4096 * 1000);
    assert_eq!(end.unique_bytes, 4096);
    let (sa, sb) = (
        std::fs::metadata(&a).unwrap().len(),
        std::fs::metadata(&b).unwrap().len(),
    );
    assert!(
        sa * 50 < sb,
        "deduplicated trace {sa} bytes vs distinct {sb}"
    );
    assert_eq!(read_all(&a, true).0, same);
}

/// Buffers read out of blob frames in file order share the frame's memory;
/// a deduplicated buffer whose frame is old is copied, so whoever keeps
/// such captures (replay's read-ahead) does not keep one old frame alive
/// per buffer.
#[test]
fn old_frames_are_copied_out_recent_ones_shared() {
    let (_d, path) = temp();
    let mut rng = Rng(21);
    let mut block = || -> Vec<u8> { (0..4096).map(|_| rng.next() as u8).collect() };
    let first = block();
    // The first block, then 100 distinct blocks (25 frames of 16 KiB, far
    // more than the reader caches), then the first block again.
    let mut records = vec![write_call(0, first.clone())];
    records.extend((1..=100).map(|i| write_call(i, block())));
    records.push(write_call(101, first.clone()));
    write_trace(&path, &records, small_frames());
    let mut reader = Reader::open(&path, ReadOptions { data: true }).unwrap();
    let mut shared = Vec::new();
    while let Some(rec) = reader.next_record().unwrap() {
        let Record::Syscall(e) = &rec else { continue };
        let data = e.captures[0].data.as_ref().expect("data");
        // Unique: nothing else (the frame cache) holds this memory.
        shared.push(!data.is_unique());
        assert_eq!(Some(rec), records.get(shared.len() - 1).cloned());
    }
    assert_eq!(shared.len(), records.len());
    let copied: Vec<usize> = (0..101).filter(|&i| !shared[i]).collect();
    assert!(
        copied.is_empty(),
        "in-order frames are shared, not {copied:?}"
    );
    assert!(!shared[101], "the old frame's buffer is a copy");
}

/// A reader that loads only each buffer's start gets exactly that prefix
/// of a buffer spread over many chunks and frames, whole buffers shorter
/// than the limit (and those of up to 64 bytes, stored in their record),
/// and the same records otherwise.
#[test]
fn a_limited_reader_gets_each_buffers_start() {
    let (_d, path) = temp();
    let mut rng = Rng(5);
    let big: Vec<u8> = (0..200_000).map(|_| rng.next() as u8).collect();
    let records = vec![
        write_call(0, big.clone()),
        write_call(1, b"short".to_vec()),
        write_call(2, big.clone()),
    ];
    write_trace(&path, &records, small_frames());
    for limit in [0, 100, 8192, 10_000, 200_000, 1 << 20] {
        let mut reader = Reader::open(&path, ReadOptions { data: true }).unwrap();
        reader.limit_data(limit);
        let mut n = 0;
        while let Some(rec) = reader.next_record().unwrap() {
            let (Record::Syscall(got), Record::Syscall(want)) = (&rec, &records[n]) else {
                panic!("calls only");
            };
            let whole = want.captures[0].data.as_deref().unwrap();
            let data = got.captures[0].data.as_deref().unwrap();
            let want_len = if whole.len() <= 64 {
                whole.len()
            } else {
                whole.len().min(limit)
            };
            assert_eq!(data, &whole[..want_len], "limit {limit}, call {n}");
            assert_eq!(got.captures[0].captured, want.captures[0].captured);
            n += 1;
        }
        assert_eq!(n, records.len());
    }
}

#[test]
fn trace_files_are_private_and_never_overwritten() {
    use std::os::unix::fs::PermissionsExt;
    let (_d, path) = temp();
    write_trace(&path, &sample_records(10, 4), WriterOptions::default());
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let err = Writer::create(&path, &TraceMeta::default(), WriterOptions::default())
        .err()
        .unwrap();
    assert!(matches!(err.kind(), ErrorKind::Exists), "{err}");
    assert!(err.to_string().contains("t.rtr"), "{err}");
    let w = Writer::create(
        &path,
        &TraceMeta::default(),
        WriterOptions {
            overwrite: true,
            ..Default::default()
        },
    );
    w.unwrap().finish().unwrap();
    assert_eq!(read_all(&path, true).0.len(), 0);
    // A directory is not "already there" (which --force would answer).
    let dir = path.parent().unwrap();
    for overwrite in [false, true] {
        let opts = WriterOptions {
            overwrite,
            ..Default::default()
        };
        let err = Writer::create(dir, &TraceMeta::default(), opts)
            .err()
            .unwrap();
        assert!(matches!(err.kind(), ErrorKind::IsDirectory), "{err}");
    }
}

#[test]
fn bad_inputs_get_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let check = |path: &Path, want: &str| {
        let err = Reader::open(path, ReadOptions::default())
            .err()
            .expect("must fail");
        let msg = err.to_string();
        assert!(msg.contains(want), "{msg:?} should mention {want:?}");
        assert!(
            msg.contains(&path.display().to_string()),
            "{msg:?} should name the file"
        );
        assert!(!msg.contains('\n'), "one line: {msg:?}");
    };
    check(dir.path(), "is a directory");
    let empty = dir.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    check(&empty, "empty file");
    let text = dir.path().join("text");
    std::fs::write(&text, b"hello, this is not a trace at all").unwrap();
    check(&text, "not a reanimator trace");
    check(&dir.path().join("missing"), "No such file");

    let newer = dir.path().join("newer");
    write_trace(&newer, &sample_records(5, 5), WriterOptions::default());
    let mut bytes = std::fs::read(&newer).unwrap();
    bytes[8] = 2;
    std::fs::write(&newer, &bytes).unwrap();
    check(&newer, "newer than this reader");
}

/// Frame start offsets of a well-formed trace, read from the headers.
fn frame_offsets(bytes: &[u8]) -> Vec<usize> {
    let mut offs = Vec::new();
    let mut at = FILE_HEADER_LEN;
    while at + FRAME_HEADER_LEN <= bytes.len() {
        offs.push(at);
        let h: [u8; FRAME_HEADER_LEN] = bytes[at..at + FRAME_HEADER_LEN].try_into().unwrap();
        at += FRAME_HEADER_LEN + FrameHeader::decode(&h).unwrap().stored_len as usize;
    }
    assert_eq!(at, bytes.len());
    offs
}

#[test]
fn truncation_at_every_frame_boundary_and_mid_frame() {
    let (dir, path) = temp();
    let records = sample_records(300, 6);
    write_trace(&path, &records, small_frames());
    let bytes = std::fs::read(&path).unwrap();
    let offsets = frame_offsets(&bytes);
    assert!(
        offsets.len() > 20,
        "want many frames, got {}",
        offsets.len()
    );
    let cut = dir.path().join("cut.rtr");
    let fixed = dir.path().join("fixed.rtr");
    let mut cuts: Vec<usize> = Vec::new();
    for w in offsets.windows(2) {
        cuts.extend([w[0], w[0] + 5, w[0] + FRAME_HEADER_LEN, (w[0] + w[1]) / 2]);
    }
    cuts.extend([1, 8, FILE_HEADER_LEN - 1, bytes.len() - 1]);
    for &n in &cuts {
        std::fs::write(&cut, &bytes[..n]).unwrap();
        let (got, err) = read_all(&cut, true);
        let err = err.unwrap_or_else(|| panic!("truncated at {n} must fail"));
        let msg = err.to_string();
        assert!(msg.contains("cut.rtr"), "{msg}");
        assert!(got.len() <= records.len());
        assert_eq!(
            &records[..got.len()],
            &got[..],
            "a truncated trace reads a prefix"
        );
        if n >= offsets[1] {
            assert!(msg.contains("byte"), "says where: {msg}");
            // Everything that was readable is kept by recover, plus a record
            // for the torn tail, if any.
            let _ = std::fs::remove_file(&fixed);
            let report = recover(&cut, &fixed, WriterOptions::default()).unwrap();
            assert!(!report.had_end);
            let (salvaged, err) = read_all(&fixed, true);
            assert!(err.is_none(), "recovered trace must read cleanly: {err:?}");
            let kept: Vec<&Record> = salvaged
                .iter()
                .filter(|r| !matches!(r, Record::Loss(l) if l.reason.starts_with("recover")))
                .collect();
            assert!(
                kept.len() >= got.len(),
                "recover keeps at least what the reader read ({} < {})",
                kept.len(),
                got.len()
            );
            for (a, b) in kept.iter().zip(&records) {
                match (a, b) {
                    (Record::Syscall(a), Record::Syscall(b)) => {
                        assert_eq!((a.seq, a.nr, a.args), (b.seq, b.nr, b.args));
                    }
                    _ => assert_eq!(*a, b),
                }
            }
        }
    }
}

#[test]
fn prefetching_reads_exactly_what_inline_reading_reads() {
    let (dir, path) = temp();
    let records = sample_records(300, 9);
    write_trace(&path, &records, small_frames());
    let bytes = std::fs::read(&path).unwrap();
    let damaged = dir.path().join("damaged.rtr");
    let same = |file: &Path, what: &str| {
        for data in [true, false] {
            let (a, ea) = read_all_with(file, data, false);
            let (b, eb) = read_all_with(file, data, true);
            assert_eq!(a, b, "{what}, data {data}: records");
            assert_eq!(
                ea.map(|e| e.to_string()),
                eb.map(|e| e.to_string()),
                "{what}, data {data}: error"
            );
        }
    };
    same(&path, "intact");
    let (got, err) = read_all_with(&path, true, true);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got, records);
    let offsets = frame_offsets(&bytes);
    for w in offsets.windows(2).step_by(3) {
        for n in [w[0], (w[0] + w[1]) / 2] {
            std::fs::write(&damaged, &bytes[..n]).unwrap();
            same(&damaged, &format!("cut at {n}"));
        }
    }
    let mut rng = Rng(4242);
    for round in 0..60 {
        let mut b = bytes.clone();
        let i = rng.below(b.len() as u64) as usize;
        b[i] ^= 1 << rng.below(8);
        std::fs::write(&damaged, &b).unwrap();
        same(&damaged, &format!("flip round {round} at byte {i}"));
    }
}

#[test]
fn random_bit_flips_are_detected_or_harmless() {
    let (dir, path) = temp();
    let records = sample_records(200, 7);
    write_trace(&path, &records, small_frames());
    let bytes = std::fs::read(&path).unwrap();
    let flipped = dir.path().join("flip.rtr");
    let fixed = dir.path().join("fixed.rtr");
    let mut rng = Rng(12345);
    for round in 0..300 {
        let mut b = bytes.clone();
        let flips = 1 + rng.below(3);
        for _ in 0..flips {
            let i = rng.below(b.len() as u64) as usize;
            b[i] ^= 1 << rng.below(8);
        }
        std::fs::write(&flipped, &b).unwrap();
        let (got, err) = read_all(&flipped, true);
        match err {
            Some(e) => {
                let msg = e.to_string();
                assert!(
                    msg.contains("flip.rtr") && !msg.contains('\n'),
                    "round {round}: {msg}"
                );
                assert_eq!(
                    &records[..got.len()],
                    &got[..],
                    "round {round}: records before the damage are intact"
                );
            }
            // Only bits that carry no information (reserved header bytes)
            // may flip unnoticed, and then nothing changed.
            None => assert_eq!(got, records, "round {round}: undetected change"),
        }
        let _ = std::fs::remove_file(&fixed);
        match recover(&flipped, &fixed, WriterOptions::default()) {
            Ok(report) => {
                let (salvaged, err) = read_all(&fixed, true);
                assert!(
                    err.is_none(),
                    "round {round}: recovered trace must read: {err:?}"
                );
                assert!(salvaged.len() as u64 == report.records, "round {round}");
            }
            Err(e) => assert!(!e.to_string().contains('\n'), "round {round}: {e}"),
        }
    }
}

#[test]
fn recover_of_a_finished_trace_keeps_everything() {
    let (dir, path) = temp();
    let records = sample_records(300, 8);
    write_trace(&path, &records, small_frames());
    let out = dir.path().join("copy.rtr");
    let report = recover(&path, &out, WriterOptions::default()).unwrap();
    assert!(report.had_end && report.had_meta);
    assert_eq!(report.records, records.len() as u64);
    assert_eq!(
        (
            report.regions_skipped,
            report.buffers_lost,
            report.bytes_skipped
        ),
        (0, 0, 0)
    );
    assert_eq!(read_all(&out, true).0, records);
}

/// Writes 300 sample records (`seed`) in small frames into `dir`, and
/// `bad.rtr`, a copy whose first frame of `kind` has byte `at` of its
/// payload flipped.
fn damaged_copy(dir: &Path, seed: u64, kind: FrameKind, at: usize) -> (Vec<Record>, PathBuf) {
    let path = dir.join("t.rtr");
    let records = sample_records(300, seed);
    write_trace(&path, &records, small_frames());
    let mut bytes = std::fs::read(&path).unwrap();
    let off = frame_offsets(&bytes)
        .into_iter()
        .find(|&o| bytes[o + 4] == kind.code())
        .unwrap();
    bytes[off + FRAME_HEADER_LEN + at] ^= 0xff;
    let bad = dir.join("bad.rtr");
    std::fs::write(&bad, &bytes).unwrap();
    (records, bad)
}

#[test]
fn a_damaged_blob_frame_marks_its_buffers_lost() {
    let (dir, _) = temp();
    let (_, bad) = damaged_copy(dir.path(), 10, FrameKind::Blobs, 3);
    let (_, err) = read_all(&bad, true);
    assert!(err.unwrap().to_string().contains("checksum"));
    let out = dir.path().join("out.rtr");
    let report = recover(&bad, &out, WriterOptions::default()).unwrap();
    assert!(report.buffers_lost > 0, "{report:?}");
    assert_eq!(report.regions_skipped, 1);
    let (salvaged, err) = read_all(&out, true);
    assert!(err.is_none(), "{err:?}");
    // System calls' buffers and pieces of initial file contents alike.
    let captures: Vec<&Capture> = salvaged
        .iter()
        .flat_map(|r| match r {
            Record::Syscall(e) => e.captures.iter().collect(),
            Record::PathData(d) => vec![&d.data],
            _ => Vec::new(),
        })
        .collect();
    let lost = captures
        .iter()
        .filter(|c| c.status == CaptureStatus::Lost)
        .count() as u64;
    assert_eq!(lost, report.buffers_lost);
    assert!(
        captures
            .iter()
            .all(|c| c.data.is_some() || c.captured == 0 || c.status == CaptureStatus::Lost),
        "every capture without its bytes is marked lost"
    );

    assert!(salvaged
        .iter()
        .any(|r| matches!(r, Record::Loss(l) if l.reason.starts_with("recover"))));
}

/// A piece of a file's initial contents whose blob frame was lost is
/// marked lost too, not left looking complete with no bytes (replay then
/// wrote nothing there and blamed the final state).
#[test]
fn a_damaged_blob_frame_marks_lost_file_contents() {
    let (dir, path) = temp();
    let piece = |seq, byte| {
        Record::PathData(PathData {
            seq,
            time_ns: 1000 + seq,
            path: b"/lib/libx.so".to_vec(),
            offset: 0,
            data: capture(0, Role::Entry, 0, vec![byte; 70_000]),
        })
    };
    let records = vec![piece(1, 1), piece(2, 2)];
    write_trace(&path, &records, small_frames());
    let mut bytes = std::fs::read(&path).unwrap();
    let off = frame_offsets(&bytes)
        .into_iter()
        .find(|&o| bytes[o + 4] == FrameKind::Blobs.code())
        .unwrap();
    bytes[off + FRAME_HEADER_LEN + 3] ^= 0xff;
    let bad = dir.path().join("bad.rtr");
    std::fs::write(&bad, &bytes).unwrap();
    let out = dir.path().join("out.rtr");
    let report = recover(&bad, &out, WriterOptions::default()).unwrap();
    let (salvaged, err) = read_all(&out, true);
    assert!(err.is_none(), "{err:?}");
    let statuses: Vec<_> = salvaged
        .iter()
        .filter_map(|r| match r {
            Record::PathData(d) => Some((d.seq, d.data.status, d.data.data.is_some())),
            _ => None,
        })
        .collect();
    assert_eq!(statuses[0], (1, CaptureStatus::Lost, false), "{statuses:?}");
    assert_eq!(report.buffers_lost, 1, "{report:?}");
}

/// Records the crash-test child writes over and over.
const CRASH_CYCLE: usize = 2000;

/// The child half of the crash test: writes records forever, flushing
/// every 50 and announcing each flush on stdout, until it is killed.
#[test]
fn crash_child() {
    let Ok(path) = std::env::var("REANIMATOR_CRASH_CHILD") else {
        return;
    };
    let mut w = Writer::create(Path::new(&path), &TraceMeta::default(), small_frames()).unwrap();
    let records = sample_records(CRASH_CYCLE, 11);
    use std::io::Write as _;
    for (i, r) in records.iter().cycle().enumerate() {
        w.write(r).unwrap();
        if i % 50 == 49 {
            w.flush().unwrap();
            println!("flushed {}", i + 1);
            std::io::stdout().flush().unwrap();
        }
    }
}

#[test]
fn a_writer_killed_with_sigkill_leaves_a_readable_prefix() {
    use std::io::BufRead;
    let (dir, _) = temp();
    let path = dir.path().join("killed.rtr");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env("REANIMATOR_CRASH_CHILD", &path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut flushed = 0usize;
    while let Some(Ok(line)) = lines.next() {
        if let Some(n) = line.strip_prefix("flushed ") {
            flushed = n.trim().parse().unwrap();
            if flushed >= 3 * CRASH_CYCLE {
                break;
            }
        }
    }
    // Killed while it is busy writing: the tail may be a torn frame.
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(flushed >= 3 * CRASH_CYCLE, "child flushed {flushed}");
    let records = sample_records(CRASH_CYCLE, 11);
    let (got, err) = read_all(&path, true);
    assert!(
        got.len() >= flushed,
        "read {} of {flushed} flushed records",
        got.len()
    );
    for (i, r) in got.iter().enumerate() {
        assert_eq!(r, &records[i % CRASH_CYCLE], "record {i}");
    }
    let err = err.expect("an unfinished trace says so");
    assert!(
        matches!(err.kind(), ErrorKind::MissingEnd | ErrorKind::Truncated),
        "{err}"
    );
    let out = dir.path().join("recovered.rtr");
    let report = recover(&path, &out, WriterOptions::default()).unwrap();
    assert!(!report.had_end);
    let (salvaged, err) = read_all(&out, true);
    assert!(err.is_none(), "{err:?}");
    assert!(salvaged.len() >= got.len());
}

/// Writes small valid traces as fuzzing seeds when
/// `REANIMATOR_FUZZ_SEED_DIR` is set (scripts/fuzz.sh); otherwise does
/// nothing.
#[test]
fn write_fuzz_seeds() {
    let Ok(dir) = std::env::var("REANIMATOR_FUZZ_SEED_DIR") else {
        return;
    };
    std::fs::create_dir_all(&dir).unwrap();
    for (i, n) in [3usize, 12, 40].into_iter().enumerate() {
        let mut records = sample_records(n, 100 + i as u64);
        for r in &mut records {
            if let Record::Syscall(e) = r {
                for c in &mut e.captures {
                    if let Some(d) = &mut c.data {
                        d.truncate(300);
                        c.len = d.len() as u64;
                        c.captured = d.len() as u64;
                    }
                }
            }
        }
        let path = Path::new(&dir).join(format!("seed-{i}.rtr"));
        let _ = std::fs::remove_file(&path);
        let opts = WriterOptions {
            records_frame_bytes: 256,
            blobs_frame_bytes: 512,
            ..small_frames()
        };
        write_trace(&path, &records, opts);
    }
}

#[test]
fn blob_compression_can_be_switched_off_and_on_mid_trace() {
    let (_d, path) = temp();
    let records = sample_records(400, 11);
    let mut w = Writer::create(&path, &TraceMeta::default(), small_frames()).unwrap();
    for (i, r) in records.iter().enumerate() {
        // Off for the middle third, as a recorder whose writer falls behind.
        w.set_compress_blobs(!(records.len() / 3..2 * records.len() / 3).contains(&i));
        w.write(r).unwrap();
    }
    w.finish().unwrap();
    let (back, err) = read_all(&path, true);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(back, records);
    // Both codecs appear among the blob frames.
    let bytes = std::fs::read(&path).unwrap();
    let codecs: std::collections::BTreeSet<u8> = frame_offsets(&bytes)
        .into_iter()
        .map(|at| {
            FrameHeader::decode(&bytes[at..at + FRAME_HEADER_LEN].try_into().unwrap()).unwrap()
        })
        .filter(|h| h.kind == FrameKind::Blobs)
        .map(|h| h.codec)
        .collect();
    assert_eq!(codecs.len(), 2, "raw and zstd blob frames: {codecs:?}");
}

#[test]
fn shards_together_return_every_record_once() {
    let (_d, path) = temp();
    let records = sample_records(2000, 9);
    write_trace(&path, &records, small_frames());
    for count in [1u64, 2, 3] {
        let mut got = Vec::new();
        for index in 0..count {
            let mut r = Reader::open(&path, ReadOptions { data: true }).unwrap();
            r.set_shard(index, count);
            r.check_skipped_frames(true);
            while let Some(rec) = r.next_record().unwrap() {
                got.push(rec);
            }
            assert!(r.end().is_some(), "shard {index}/{count} checks the end");
        }
        got.sort_by_key(|r| (r.seq(), r.time_ns()));
        let mut want = records.clone();
        want.sort_by_key(|r| (r.seq(), r.time_ns()));
        assert_eq!(got, want, "{count} shards");
    }
}

/// A records frame whose payload fails its checksum: the records its
/// header says it held are counted lost, and the loss record says how
/// many (it said 0 before).
#[test]
fn recover_counts_a_damaged_frames_records() {
    let (dir, _) = temp();
    let (records, bad) = damaged_copy(dir.path(), 11, FrameKind::Records, 3);
    let out = dir.path().join("out.rtr");
    let report = recover(&bad, &out, WriterOptions::default()).unwrap();
    assert!(report.records_lost > 0, "{report:?}");
    assert_eq!(report.regions_skipped, 1, "{:?}", report.damage);
    let (salvaged, err) = read_all(&out, true);
    assert!(err.is_none(), "{err:?}");
    let lost: u64 = salvaged
        .iter()
        .filter_map(|r| match r {
            Record::Loss(l) if l.reason.starts_with("recover:") => Some(l.count),
            _ => None,
        })
        .sum();
    assert_eq!(lost, report.records_lost);
    // What was kept, and what was lost, make up the original.
    let kept = salvaged
        .iter()
        .filter(|r| !matches!(r, Record::Loss(l) if l.reason.starts_with("recover:")))
        .count() as u64;
    assert_eq!(kept + report.records_lost, records.len() as u64);
}

/// A trace whose meta frame (and so its clock anchor) was lost: the loss
/// record of the damage takes the time of the first record kept, not 0
/// (from which `stats` counted the time since boot as the trace's length).
#[test]
fn a_lost_meta_frames_loss_is_dated_at_the_first_record_kept() {
    let (dir, _) = temp();
    let (_, bad) = damaged_copy(dir.path(), 5, FrameKind::Meta, 2);
    let out = dir.path().join("out.rtr");
    let report = recover(&bad, &out, WriterOptions::default()).unwrap();
    assert!(!report.had_meta, "{report:?}");
    let (salvaged, err) = read_all(&out, false);
    assert!(err.is_none(), "{err:?}");
    let Some(Record::Loss(loss)) = salvaged.first() else {
        panic!("the damage comes first: {:?}", salvaged.first());
    };
    let first_kept = salvaged[1].time_ns();
    assert_ne!(first_kept, 0);
    assert_eq!(loss.time_ns, first_kept);
}
