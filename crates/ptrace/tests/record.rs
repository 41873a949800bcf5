//! End-to-end tests of the ptrace recorder: small C programs (in
//! `tests/programs/`) are built with `cc` at test time, recorded through
//! the library API, and the trace read back is checked against what each
//! program knows it did: exact call counts, argument words, return values
//! and every captured byte. Programs write their own view (descriptors,
//! return values, the bytes the kernel handed them) to `DIR/report`.
//!
//! Events are found by syscall number (`libc::SYS_*`), never by catalogue
//! name, so the tests do not depend on the text renderer.
//!
//! A recording changes process-wide state (an interval timer, the
//! SIGINT/SIGTERM/SIGALRM dispositions, the stop-request flag), so two
//! recordings in one process must not overlap: every test holds one lock
//! from start to end.

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use reanimator_catalogue as catalogue;
use reanimator_ptrace::{record, DataPolicy, RecordSummary, SnapshotPolicy, Target};
use reanimator_trace::{
    CaptureStatus, ExitStatus, ProcessExit, ProcessStart, ReadOptions, Reader, Record, Role,
    SignalDelivery, StartCause, SyscallEvent, TraceMeta, Writer, WriterOptions,
};

/// Longest a single recording may take before the test fails.
const RECORD_TIMEOUT: Duration = Duration::from_secs(30);

static SERIAL: Mutex<()> = Mutex::new(());

// ---------------------------------------------------------------------
// Fixture: a locked temporary directory, program builds, recording.
// ---------------------------------------------------------------------

/// One test's world: the lock, a temporary directory with `work/` (given
/// to programs as argv[1]) and `bin/` (built programs).
struct Case {
    _lock: MutexGuard<'static, ()>,
    tmp: tempfile::TempDir,
}

impl Case {
    fn new() -> Case {
        let lock = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let tmp = tempfile::tempdir().expect("temporary directory");
        std::fs::create_dir(tmp.path().join("work")).expect("work dir");
        std::fs::create_dir(tmp.path().join("bin")).expect("bin dir");
        Case { _lock: lock, tmp }
    }

    /// The directory programs work in (argv[1]), canonical.
    fn work(&self) -> PathBuf {
        self.tmp
            .path()
            .join("work")
            .canonicalize()
            .expect("canonical work dir")
    }

    fn trace_path(&self) -> PathBuf {
        self.tmp.path().join("trace.rtr")
    }

    /// Builds `tests/programs/NAME.c` with `cc -O1 -pthread`.
    fn build(&self, name: &str) -> PathBuf {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/programs")
            .join(format!("{name}.c"));
        let out = self.tmp.path().join("bin").join(name);
        let result = Command::new("cc")
            .args(["-O1", "-pthread", "-Wall", "-Wextra", "-o"])
            .arg(&out)
            .arg(&src)
            .output();
        let output = match result {
            Ok(o) => o,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
                "the C compiler `cc` is not installed; these tests build their test programs \
                 with it: run scripts/install-deps.sh"
            ),
            Err(e) => panic!("cannot run cc: {e}; run scripts/install-deps.sh"),
        };
        assert!(
            output.status.success(),
            "cc failed on {}:\n{}",
            src.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        out
    }

    /// Records `target` into this case's trace and reads it back.
    fn record(&self, target: Target) -> Recorded {
        self.record_with(target, DataPolicy::All)
    }

    /// Records `target` with a data policy.
    fn record_with(&self, target: Target, policy: DataPolicy) -> Recorded {
        let summary = record_with_timeout(target, policy, self.trace_path(), RECORD_TIMEOUT);
        let trace = Trace::read(&self.trace_path());
        Recorded { summary, trace }
    }

    /// Records a command line.
    fn record_cmd(&self, argv: &[OsString]) -> Recorded {
        self.record(Target::spawn(argv).expect("command found"))
    }

    /// Builds program NAME, records `NAME WORKDIR`, expects it to exit 0,
    /// and returns the recording and the program's report.
    fn run(&self, name: &str) -> (Recorded, Report) {
        let exe = self.build(name);
        let rec = self.record_cmd(&[exe.into(), self.work().into()]);
        assert_eq!(
            rec.summary.root_status,
            Some(ExitStatus::Exited(0)),
            "{name} did not exit 0 (99: a check in the program failed, see stderr)"
        );
        let report = Report::read(&self.work().join("report"));
        (rec, report)
    }
}

/// Two tracers, so every test also hands new threads and processes from
/// one tracer to the other (on a one-CPU machine both share it).
fn tracer_cpus() -> Vec<usize> {
    let cpus = reanimator_ptrace::default_cpus();
    vec![cpus[0], *cpus.last().expect("some CPU")]
}

/// Runs `record` on its own thread (it becomes the tracer) and fails the
/// test when it has not returned after `timeout`.
fn record_with_timeout(
    target: Target,
    policy: DataPolicy,
    trace: PathBuf,
    timeout: Duration,
) -> RecordSummary {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("recorder".into())
        .spawn(move || {
            let result = (|| -> Result<RecordSummary, String> {
                let mut w = Writer::create(&trace, &TraceMeta::default(), WriterOptions::default())
                    .map_err(|e| e.to_string())?;
                let summary = record(
                    &target,
                    policy,
                    &tracer_cpus(),
                    SnapshotPolicy::Contents,
                    &mut w,
                )
                .map_err(|e| e.to_string())?;
                w.finish().map_err(|e| e.to_string())?;
                Ok(summary)
            })();
            let _ = tx.send(result);
        })
        .expect("recorder thread");
    match rx.recv_timeout(timeout) {
        Ok(Ok(summary)) => summary,
        Ok(Err(e)) => panic!("recording failed: {e}"),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("record() did not return within {timeout:?}: the recorder hangs")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the recorder thread panicked"),
    }
}

struct Recorded {
    summary: RecordSummary,
    trace: Trace,
}

/// Every record of a trace, in file order.
struct Trace {
    records: Vec<Record>,
}

impl Trace {
    fn read(path: &Path) -> Trace {
        let mut r = Reader::open(path, ReadOptions { data: true }).expect("open trace");
        let mut records = Vec::new();
        while let Some(rec) = r.next_record().expect("read trace") {
            records.push(rec);
        }
        Trace { records }
    }

    fn syscalls(&self) -> impl Iterator<Item = &SyscallEvent> {
        self.records.iter().filter_map(|r| match r {
            Record::Syscall(e) => Some(e),
            _ => None,
        })
    }

    /// Calls of number `nr`, in sequence order.
    fn calls(&self, nr: i64) -> Vec<&SyscallEvent> {
        let mut v: Vec<_> = self.syscalls().filter(|e| i64::from(e.nr) == nr).collect();
        v.sort_by_key(|e| e.seq);
        v
    }

    /// Calls of number `nr` whose first argument is `fd`, in sequence order.
    fn calls_on(&self, nr: i64, fd: i64) -> Vec<&SyscallEvent> {
        self.calls(nr)
            .into_iter()
            .filter(|e| e.args[0] == fd as u64)
            .collect()
    }

    /// Calls of number `nr` made by thread `tid`.
    fn calls_by(&self, nr: i64, tid: u32) -> Vec<&SyscallEvent> {
        self.calls(nr)
            .into_iter()
            .filter(|e| e.tid == tid)
            .collect()
    }

    /// The single call of number `nr` whose entry capture of argument
    /// `arg` is `path`.
    fn call_with_path(&self, nr: i64, arg: u8, path: &[u8]) -> &SyscallEvent {
        let v: Vec<_> = self
            .calls(nr)
            .into_iter()
            .filter(|e| {
                e.capture(arg, Role::Entry)
                    .is_some_and(|c| c.data.as_deref() == Some(path))
            })
            .collect();
        assert_eq!(
            v.len(),
            1,
            "expected exactly one call {nr} with argument {arg} = {:?}",
            String::from_utf8_lossy(path)
        );
        v[0]
    }

    fn starts(&self) -> Vec<&ProcessStart> {
        self.records
            .iter()
            .filter_map(|r| match r {
                Record::ProcessStart(p) => Some(p),
                _ => None,
            })
            .collect()
    }

    fn exits(&self) -> Vec<&ProcessExit> {
        self.records
            .iter()
            .filter_map(|r| match r {
                Record::ProcessExit(p) => Some(p),
                _ => None,
            })
            .collect()
    }

    fn signals(&self) -> Vec<&SignalDelivery> {
        self.records
            .iter()
            .filter_map(|r| match r {
                Record::Signal(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    fn start_of(&self, tid: u32) -> &ProcessStart {
        let v: Vec<_> = self.starts().into_iter().filter(|p| p.tid == tid).collect();
        assert_eq!(v.len(), 1, "expected one ProcessStart for {tid}");
        v[0]
    }

    fn exit_of(&self, tid: u32) -> &ProcessExit {
        let v: Vec<_> = self.exits().into_iter().filter(|p| p.tid == tid).collect();
        assert_eq!(v.len(), 1, "expected one ProcessExit for {tid}");
        v[0]
    }

    /// The process the recorder spawned.
    fn root(&self) -> &ProcessStart {
        let v: Vec<_> = self
            .starts()
            .into_iter()
            .filter(|p| p.cause == StartCause::Spawned)
            .collect();
        assert_eq!(v.len(), 1, "expected one spawned process");
        v[0]
    }
}

/// The return value of a call that returned.
fn ret(e: &SyscallEvent) -> i64 {
    let x = e
        .exit
        .unwrap_or_else(|| panic!("call {} (seq {}) has no exit", e.nr, e.seq));
    assert_eq!(
        x.is_error,
        (-4095..0).contains(&x.ret),
        "is_error disagrees with the return value {} of call {}",
        x.ret,
        e.nr
    );
    x.ret
}

/// The complete capture of argument `arg`, element `elem`, taken at `role`:
/// its bytes, checked to be all there. Returns (len, data).
fn capture_elem(e: &SyscallEvent, arg: u8, role: Role, elem: u32) -> (u64, &[u8]) {
    let c = e
        .captures
        .iter()
        .find(|c| c.arg == arg && c.role == role && c.elem == elem)
        .unwrap_or_else(|| {
            panic!(
                "call {} (seq {}) has no {role:?} capture of argument {arg} element {elem}; it has {:?}",
                e.nr,
                e.seq,
                e.captures
                    .iter()
                    .map(|c| (c.arg, c.role, c.elem, c.len))
                    .collect::<Vec<_>>()
            )
        });
    assert_eq!(
        c.status,
        CaptureStatus::Complete,
        "capture {arg}/{role:?}/{elem} of call {} is not complete",
        e.nr
    );
    let data = c.data.as_deref().expect("capture data loaded");
    assert_eq!(c.captured, data.len() as u64, "captured count vs data");
    (c.len, data)
}

/// The bytes of a plain (non-array) capture, whose `len` must equal its
/// data length.
fn capture(e: &SyscallEvent, arg: u8, role: Role) -> &[u8] {
    let (len, data) = capture_elem(e, arg, role, 0);
    assert_eq!(
        len,
        data.len() as u64,
        "len of capture {arg}/{role:?} of call {} (seq {})",
        e.nr,
        e.seq
    );
    data
}

fn entry(e: &SyscallEvent, arg: u8) -> &[u8] {
    capture(e, arg, Role::Entry)
}

fn exit_data(e: &SyscallEvent, arg: u8) -> &[u8] {
    capture(e, arg, Role::Exit)
}

/// Whether the call has any capture of `arg` taken at `role`.
fn has_capture(e: &SyscallEvent, arg: u8, role: Role) -> bool {
    e.captures.iter().any(|c| c.arg == arg && c.role == role)
}

/// A program's report: "key value" lines.
struct Report {
    map: HashMap<String, String>,
}

impl Report {
    fn read(path: &Path) -> Report {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("report {}: {e}", path.display()));
        let map = text
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Report { map }
    }

    fn get(&self, key: &str) -> &str {
        self.map
            .get(key)
            .unwrap_or_else(|| panic!("report has no {key:?}"))
    }

    fn int(&self, key: &str) -> i64 {
        let v = self.get(key);
        v.split_whitespace()
            .next()
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("report {key:?} = {v:?} is not a number"))
    }

    /// The n-th whitespace-separated number of a line.
    fn ints(&self, key: &str) -> Vec<i64> {
        self.get(key)
            .split_whitespace()
            .map(|w| {
                w.parse()
                    .unwrap_or_else(|_| panic!("report {key:?}: {w:?} is not a number"))
            })
            .collect()
    }

    fn hex(&self, key: &str) -> Vec<u8> {
        let v = self.get(key);
        if v == "-" {
            return Vec::new();
        }
        assert!(v.len() & 1 == 0, "report {key:?} is not hex");
        (0..v.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&v[i..i + 2], 16).expect("hex digit"))
            .collect()
    }

    fn fd(&self) -> i64 {
        self.int("report_fd")
    }
}

/// The pattern of `fill()` in programs/common.h.
fn fill(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    if x == 0 {
        x = 1;
    }
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect()
}

fn path_bytes(p: &Path) -> Vec<u8> {
    p.as_os_str().as_bytes().to_vec()
}

fn in_dir(dir: &Path, name: &str) -> Vec<u8> {
    path_bytes(&dir.join(name))
}

/// Asserts that the events have strictly increasing sequence ids.
fn assert_in_order(events: &[&SyscallEvent]) {
    for w in events.windows(2) {
        assert!(
            w[0].seq < w[1].seq,
            "call {} (seq {}) should come before call {} (seq {})",
            w[0].nr,
            w[0].seq,
            w[1].nr,
            w[1].seq
        );
    }
}

/// Whether the call was interrupted by a signal for the kernel to restart
/// it (`-ERESTARTSYS` .. `-ERESTART_RESTARTBLOCK`, seen only by tracers).
fn is_restart(e: &SyscallEvent) -> bool {
    e.exit
        .is_some_and(|x| x.is_error && (512..=516).contains(&x.ret.unsigned_abs()))
}

/// `calls` without attempts that the kernel restarted; checks that each
/// of those is followed by another call of the same thread.
fn without_restarts(calls: Vec<&SyscallEvent>) -> Vec<&SyscallEvent> {
    for (i, c) in calls.iter().enumerate() {
        if is_restart(c) {
            assert!(
                calls[i + 1..]
                    .iter()
                    .any(|n| n.tid == c.tid && n.args == c.args),
                "interrupted call {} (seq {}) is not retried",
                c.nr,
                c.seq
            );
        }
    }
    calls.into_iter().filter(|c| !is_restart(c)).collect()
}

/// The only element of `v`.
fn one<T: Copy>(v: Vec<T>, what: &str) -> T {
    assert_eq!(v.len(), 1, "expected exactly one {what}, found {}", v.len());
    v[0]
}

const AT_FDCWD: u64 = libc::AT_FDCWD as i64 as u64;

// ---------------------------------------------------------------------
// 1. Files
// ---------------------------------------------------------------------

#[test]
fn files_read_write_and_offsets() {
    let case = Case::new();
    let (rec, rep) = case.run("files");
    let t = &rec.trace;
    let dir = case.work();
    let fd = rep.int("fd");
    let fd_b = rep.int("fd_b");
    let dfd = rep.int("dfd");
    let fd_c = rep.int("fd_c");
    assert_ne!(fd, rep.fd());

    // Opening: open (twice), creat, openat; flags, modes and paths.
    let open_a = t.call_with_path(libc::SYS_open, 0, &in_dir(&dir, "a.dat"));
    assert_eq!(
        open_a.args[1],
        (libc::O_CREAT | libc::O_RDWR | libc::O_TRUNC) as u64
    );
    assert_eq!(open_a.args[2], 0o644);
    assert_eq!(ret(open_a), fd);
    let open_dir = t.call_with_path(libc::SYS_open, 0, &path_bytes(&dir));
    assert_eq!(
        open_dir.args[1],
        (libc::O_RDONLY | libc::O_DIRECTORY) as u64
    );
    assert_eq!(ret(open_dir), dfd);
    assert_eq!(t.calls(libc::SYS_open).len(), 2);
    let creat = one(t.calls(libc::SYS_creat), "creat");
    assert_eq!(entry(creat, 0), in_dir(&dir, "b.dat"));
    assert_eq!(creat.args[1], 0o600);
    assert_eq!(ret(creat), fd_b);
    let openat = one(t.calls_on(libc::SYS_openat, dfd), "openat(dfd)");
    assert_eq!(entry(openat, 1), b"c.dat");
    assert_eq!(openat.args[2], (libc::O_CREAT | libc::O_RDWR) as u64);
    assert_eq!(openat.args[3], 0o640);
    assert_eq!(ret(openat), fd_c);

    // Three writes of distinct patterns, then one on the closed descriptor.
    let writes = t.calls_on(libc::SYS_write, fd);
    assert_eq!(writes.len(), 4, "3 writes + 1 on the closed fd");
    for (w, (n, seed, key)) in
        writes
            .iter()
            .zip([(4096, 1, "write1"), (100, 2, "write2"), (1, 3, "write3")])
    {
        assert_eq!(w.args[2], n as u64);
        assert_eq!(entry(w, 1), fill(n, seed), "{key} data");
        assert_eq!(ret(w), n as i64);
        assert_eq!(rep.int(key), n as i64);
    }
    let bad = writes[3];
    assert_eq!(ret(bad), -i64::from(libc::EBADF));
    assert_eq!(rep.ints("bad_write"), [-1, i64::from(libc::EBADF)]);
    assert_eq!(
        entry(bad, 1),
        &fill(4096, 1)[..16],
        "input captured on error"
    );
    assert!(!has_capture(bad, 1, Role::Exit));

    // pwrite64 at 10000.
    let pwrite = one(t.calls_on(libc::SYS_pwrite64, fd), "pwrite64");
    assert_eq!(pwrite.args[2], 512);
    assert_eq!(pwrite.args[3], 10000);
    assert_eq!(entry(pwrite, 1), fill(512, 4));
    assert_eq!(ret(pwrite), 512);

    // writev with three elements.
    let writev = one(t.calls_on(libc::SYS_writev, fd), "writev");
    assert_eq!(writev.args[2], 3);
    for (i, (n, seed)) in [(10, 5), (20, 6), (30, 7)].into_iter().enumerate() {
        let (len, data) = capture_elem(writev, 1, Role::Entry, i as u32);
        assert_eq!(len, n as u64);
        assert_eq!(data, fill(n, seed), "writev element {i}");
    }
    assert!(!has_capture(writev, 1, Role::Exit));
    assert_eq!(ret(writev), 60);
    assert_eq!(rep.int("writev"), 60);

    // The file as the program wrote it.
    let mut image = Vec::new();
    image.extend(fill(4096, 1));
    image.extend(fill(100, 2));
    image.extend(fill(1, 3));
    for (n, seed) in [(10, 5), (20, 6), (30, 7)] {
        image.extend(fill(n, seed));
    }
    image.resize(10000, 0);
    image.extend(fill(512, 4));
    assert_eq!(image.len(), 10512);

    let lseek = one(t.calls_on(libc::SYS_lseek, fd), "lseek");
    assert_eq!(lseek.args[1..3], [0, libc::SEEK_SET as u64]);
    assert_eq!(ret(lseek), 0);

    // read: capture sized by the return value.
    let read = one(t.calls_on(libc::SYS_read, fd), "read");
    assert_eq!(read.args[2], 5000);
    assert_eq!(ret(read), 5000);
    assert_eq!(exit_data(read, 1), &image[..5000]);
    assert_eq!(exit_data(read, 1), rep.hex("read_data"));
    assert!(!has_capture(read, 1, Role::Entry));

    // pread64: a short read at the end of the file.
    let pread = one(t.calls_on(libc::SYS_pread64, fd), "pread64");
    assert_eq!(pread.args[2..4], [600, 9990]);
    assert_eq!(ret(pread), 522);
    assert_eq!(exit_data(pread, 1), &image[9990..]);
    assert_eq!(exit_data(pread, 1), rep.hex("pread_data"));

    // readv: the return value spread over the elements in order.
    let readv = one(t.calls_on(libc::SYS_readv, fd), "readv");
    assert_eq!(ret(readv), 5512);
    assert_eq!(rep.int("readv"), 5512);
    let mut at = 5000;
    for (i, (iov_len, moved)) in [(100, 100), (200, 200), (50000, 5212)]
        .into_iter()
        .enumerate()
    {
        let (len, data) = capture_elem(readv, 1, Role::Exit, i as u32);
        assert_eq!(len, iov_len, "readv element {i} len is iov_len");
        assert_eq!(data.len(), moved, "readv element {i} bytes moved");
        assert_eq!(data, &image[at..at + moved], "readv element {i} data");
        assert_eq!(data, rep.hex(&format!("readv_data{i}")));
        at += moved;
    }

    let fsync = one(t.calls_on(libc::SYS_fsync, fd), "fsync");
    assert_eq!(ret(fsync), 0);
    let ftruncate = one(t.calls_on(libc::SYS_ftruncate, fd), "ftruncate");
    assert_eq!(ftruncate.args[1], 3000);
    assert_eq!(ret(ftruncate), 0);
    let close = one(t.calls_on(libc::SYS_close, fd), "close");
    assert_eq!(ret(close), 0);
    assert_eq!(ret(one(t.calls_on(libc::SYS_close, fd_b), "close b")), 0);
    assert_eq!(ret(one(t.calls_on(libc::SYS_close, fd_c), "close c")), 0);

    let unlink_a = t.call_with_path(libc::SYS_unlink, 0, &in_dir(&dir, "a.dat"));
    assert_eq!(ret(unlink_a), 0);
    let unlink_b = t.call_with_path(libc::SYS_unlink, 0, &in_dir(&dir, "b.dat"));
    assert_eq!(ret(unlink_b), 0);
    let unlinkat = one(t.calls_on(libc::SYS_unlinkat, dfd), "unlinkat");
    assert_eq!(entry(unlinkat, 1), b"c.dat");
    assert_eq!(unlinkat.args[2], 0);
    assert_eq!(ret(unlinkat), 0);

    // Program order is sequence order.
    assert_in_order(&[
        open_a, creat, openat, writes[0], writes[1], writes[2], pwrite, writev, lseek, read, pread,
        readv, fsync, ftruncate, close, bad, unlink_a, unlink_b, unlinkat,
    ]);
    // Everything came from the one process.
    let root = t.root().tgid;
    assert!(t.syscalls().all(|e| e.tgid == root && e.tid == root));
}

// ---------------------------------------------------------------------
// 2. Directories and links
// ---------------------------------------------------------------------

/// Names in a `getdents64` buffer.
fn dirent_names(buf: &[u8]) -> Vec<Vec<u8>> {
    let mut names = Vec::new();
    let mut at = 0;
    while at + 19 <= buf.len() {
        let reclen = u16::from_le_bytes([buf[at + 16], buf[at + 17]]) as usize;
        assert!(reclen >= 19 && at + reclen <= buf.len(), "bad dirent");
        let name = &buf[at + 19..at + reclen];
        let end = name.iter().position(|&b| b == 0).expect("NUL in dirent");
        names.push(name[..end].to_vec());
        at += reclen;
    }
    assert_eq!(at, buf.len(), "dirents fill the buffer exactly");
    names
}

#[test]
fn directories_and_links() {
    let case = Case::new();
    let (rec, rep) = case.run("dirs");
    let t = &rec.trace;
    let dir = case.work();
    let dfd = rep.int("dfd");

    let mkdirs = t.calls(libc::SYS_mkdir);
    assert_eq!(mkdirs.len(), 2);
    for m in &mkdirs {
        assert_eq!(entry(m, 0), in_dir(&dir, "d1"));
        assert_eq!(m.args[1], 0o755);
    }
    assert_eq!(ret(mkdirs[0]), 0);
    assert_eq!(ret(mkdirs[1]), -i64::from(libc::EEXIST));
    assert_eq!(rep.ints("mkdir_again"), [-1, i64::from(libc::EEXIST)]);

    let mkdirat = one(t.calls(libc::SYS_mkdirat), "mkdirat");
    assert_eq!(mkdirat.args[0], dfd as u64);
    assert_eq!(entry(mkdirat, 1), b"d2");
    assert_eq!(mkdirat.args[2], 0o700);
    assert_eq!(ret(mkdirat), 0);

    let rename = one(t.calls(libc::SYS_rename), "rename");
    assert_eq!(entry(rename, 0), in_dir(&dir, "d1/f"));
    assert_eq!(entry(rename, 1), in_dir(&dir, "d1/g"));
    assert_eq!(ret(rename), 0);

    let renameat2 = one(t.calls(libc::SYS_renameat2), "renameat2");
    assert_eq!(renameat2.args[0], dfd as u64);
    assert_eq!(renameat2.args[2], dfd as u64);
    assert_eq!(renameat2.args[4], u64::from(libc::RENAME_NOREPLACE));
    assert_eq!(entry(renameat2, 1), b"d1/g");
    assert_eq!(entry(renameat2, 3), b"d2/h");
    assert_eq!(ret(renameat2), 0);

    let link = one(t.calls(libc::SYS_link), "link");
    assert_eq!(entry(link, 0), in_dir(&dir, "d2/h"));
    assert_eq!(entry(link, 1), in_dir(&dir, "d2/hl"));
    assert_eq!(ret(link), 0);

    let symlink = one(t.calls(libc::SYS_symlink), "symlink");
    assert_eq!(entry(symlink, 0), b"d2/h-link-target");
    assert_eq!(entry(symlink, 1), in_dir(&dir, "sl"));
    assert_eq!(ret(symlink), 0);

    let readlink = one(t.calls(libc::SYS_readlink), "readlink");
    assert_eq!(entry(readlink, 0), in_dir(&dir, "sl"));
    assert_eq!(readlink.args[2], 256);
    assert_eq!(ret(readlink), 16);
    assert_eq!(exit_data(readlink, 1), b"d2/h-link-target");
    assert_eq!(exit_data(readlink, 1), rep.hex("readlink_data"));

    let d2 = rep.int("d2");
    let getdents = t.calls_on(libc::SYS_getdents64, d2);
    assert_eq!(getdents.len(), 2);
    let n = ret(getdents[0]);
    assert_eq!(n, rep.int("getdents1"));
    assert!(n > 0);
    let dents = exit_data(getdents[0], 1);
    assert_eq!(dents.len() as i64, n, "getdents64 capture sized by ret");
    assert_eq!(dents, rep.hex("getdents1_data"));
    let mut names = dirent_names(dents);
    names.sort();
    assert_eq!(
        names,
        [&b"."[..], b"..", b"h", b"hl"].map(<[u8]>::to_vec),
        "entries of d2"
    );
    assert_eq!(ret(getdents[1]), 0, "end of directory");
    if let Some(c) = getdents[1].capture(1, Role::Exit) {
        assert_eq!(c.len, 0, "nothing returned, nothing captured");
    }

    let rmdir = one(t.calls(libc::SYS_rmdir), "rmdir");
    assert_eq!(entry(rmdir, 0), in_dir(&dir, "d1"));
    assert_eq!(ret(rmdir), 0);

    let unlinkats = t.calls_on(libc::SYS_unlinkat, dfd);
    assert_eq!(unlinkats.len(), 3);
    for (u, (path, flags)) in unlinkats.iter().zip([
        (&b"d2/hl"[..], 0),
        (b"d2/h", 0),
        (b"d2", libc::AT_REMOVEDIR as u64),
    ]) {
        assert_eq!(entry(u, 1), path);
        assert_eq!(u.args[2], flags);
        assert_eq!(ret(u), 0);
    }
    let unlink = t.call_with_path(libc::SYS_unlink, 0, &in_dir(&dir, "sl"));
    assert_eq!(ret(unlink), 0);
    assert_in_order(&[
        mkdirs[0],
        mkdirs[1],
        mkdirat,
        rename,
        renameat2,
        link,
        symlink,
        readlink,
        getdents[0],
        getdents[1],
        rmdir,
        unlinkats[0],
        unlinkats[1],
        unlinkats[2],
        unlink,
    ]);
}

// ---------------------------------------------------------------------
// 3. Extended attributes
// ---------------------------------------------------------------------

/// Checks a recorded return value against a program's "ret errno" line.
fn assert_ret_matches(e: &SyscallEvent, rep: &Report, key: &str) -> i64 {
    let [r, errno] = rep.ints(key)[..] else {
        panic!("report {key:?} is not \"ret errno\"")
    };
    let expected = if r < 0 { -errno } else { r };
    assert_eq!(ret(e), expected, "{key}: recorded return value");
    expected
}

#[test]
fn extended_attributes() {
    let case = Case::new();
    let (rec, rep) = case.run("xattrs");
    let t = &rec.trace;
    let file = in_dir(&case.work(), "x.dat");
    let value = fill(37, 9);
    let name = b"user.reanimator";

    // Inputs are captured at entry whatever the outcome.
    let set = one(t.calls(libc::SYS_setxattr), "setxattr");
    assert_eq!(entry(set, 0), file);
    assert_eq!(entry(set, 1), name);
    assert_eq!(entry(set, 2), value);
    assert_eq!(set.args[3], 37);
    assert_eq!(set.args[4], 0);
    let supported = assert_ret_matches(set, &rep, "setxattr") == 0;
    if !supported {
        assert_eq!(
            ret(set),
            -i64::from(libc::ENOTSUP),
            "only ENOTSUP is expected"
        );
        eprintln!("note: no user xattrs on this file system; checking the recorded errors");
    }

    let gets = t.calls(libc::SYS_getxattr);
    assert_eq!(gets.len(), 3);
    for g in &gets {
        assert_eq!(entry(g, 0), file);
    }
    // Size query: NULL buffer, nothing to capture.
    assert_eq!(entry(gets[0], 1), name);
    assert_eq!(gets[0].args[2..4], [0, 0]);
    let size = assert_ret_matches(gets[0], &rep, "getxattr_size");
    assert!(!has_capture(gets[0], 2, Role::Exit));
    // The value.
    assert_eq!(entry(gets[1], 1), name);
    assert_eq!(gets[1].args[3], 256);
    let n = assert_ret_matches(gets[1], &rep, "getxattr");
    if supported {
        assert_eq!(size, 37);
        assert_eq!(n, 37);
        assert_eq!(exit_data(gets[1], 2), value);
        assert_eq!(rep.hex("getxattr_data"), value);
    } else {
        assert!(n < 0);
        assert!(
            !has_capture(gets[1], 2, Role::Exit),
            "no output after an error"
        );
    }
    // A missing name fails either way, and nothing is captured at exit.
    assert_eq!(entry(gets[2], 1), b"user.missing");
    let missing = assert_ret_matches(gets[2], &rep, "getxattr_missing");
    assert!(missing == -i64::from(libc::ENODATA) || missing == -i64::from(libc::ENOTSUP));
    assert!(!has_capture(gets[2], 2, Role::Exit));

    let fget = one(t.calls(libc::SYS_fgetxattr), "fgetxattr");
    assert_eq!(fget.args[0], rep.int("fd") as u64);
    assert_eq!(entry(fget, 1), name);
    if assert_ret_matches(fget, &rep, "fgetxattr") > 0 {
        assert_eq!(exit_data(fget, 2), value);
    }

    let list = one(t.calls(libc::SYS_listxattr), "listxattr");
    assert_eq!(entry(list, 0), file);
    assert_eq!(list.args[2], 1024);
    let n = assert_ret_matches(list, &rep, "listxattr");
    let names = rep.hex("listxattr_data");
    if n > 0 {
        assert_eq!(exit_data(list, 1), names, "listxattr capture = the list");
        assert_eq!(names.len() as i64, n);
    }
    if supported {
        assert!(
            names.split(|&b| b == 0).any(|s| s == name),
            "listxattr names user.reanimator"
        );
    }
}

// ---------------------------------------------------------------------
// 4. The stat family
// ---------------------------------------------------------------------

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

#[test]
fn stat_family() {
    let case = Case::new();
    let (rec, rep) = case.run("stats");
    let t = &rec.trace;
    let dir = case.work();
    let file = in_dir(&dir, "s.dat");
    let fd = rep.int("fd");
    let dfd = rep.int("dfd");
    // struct stat: st_mode at 24, st_size at 48. statx: stx_mode at 28,
    // stx_size at 40.
    let mode = |st: &[u8]| u32_at(st, 24) & libc::S_IFMT;

    let stats = t.calls(libc::SYS_stat);
    assert_eq!(stats.len(), 2, "stat and the failing stat");
    assert_eq!(entry(stats[0], 0), file);
    assert_eq!(ret(stats[0]), 0);
    let st = exit_data(stats[0], 1);
    assert_eq!(st.len(), 144);
    assert_eq!(st, rep.hex("stat_data"), "stat: the bytes the program got");
    assert_eq!(u64_at(st, 48), 1234);
    assert_eq!(mode(st), libc::S_IFREG);
    assert_eq!(entry(stats[1], 0), in_dir(&dir, "missing"));
    assert_eq!(ret(stats[1]), -i64::from(libc::ENOENT));
    assert_eq!(rep.ints("stat_missing"), [-1, i64::from(libc::ENOENT)]);
    assert!(
        !has_capture(stats[1], 1, Role::Exit),
        "no struct after an error"
    );

    let fstat = one(t.calls_on(libc::SYS_fstat, fd), "fstat");
    assert_eq!(ret(fstat), 0);
    assert_eq!(exit_data(fstat, 1), rep.hex("fstat_data"));
    assert_eq!(exit_data(fstat, 1).len(), 144);

    let lstat = one(t.calls(libc::SYS_lstat), "lstat");
    assert_eq!(entry(lstat, 0), in_dir(&dir, "s.lnk"));
    assert_eq!(ret(lstat), 0);
    let st = exit_data(lstat, 1);
    assert_eq!(st, rep.hex("lstat_data"));
    assert_eq!(mode(st), libc::S_IFLNK);
    assert_eq!(u64_at(st, 48), 5, "a symlink's size is its target's length");

    let at = one(t.calls_on(libc::SYS_newfstatat, dfd), "newfstatat(dfd)");
    assert_eq!(entry(at, 1), b"s.lnk");
    assert_eq!(at.args[3], 0);
    assert_eq!(ret(at), 0);
    assert_eq!(exit_data(at, 2), rep.hex("fstatat_data"));
    assert_eq!(exit_data(at, 2).len(), 144);
    assert_eq!(mode(exit_data(at, 2)), libc::S_IFREG, "followed the link");

    let empty = one(t.calls_on(libc::SYS_newfstatat, fd), "newfstatat(fd, \"\")");
    assert_eq!(entry(empty, 1), b"", "the empty path is captured, empty");
    assert_eq!(empty.args[3], libc::AT_EMPTY_PATH as u64);
    assert_eq!(ret(empty), 0);
    assert_eq!(exit_data(empty, 2), rep.hex("fstatat_empty_data"));

    let statx = one(t.calls(libc::SYS_statx), "statx");
    assert_eq!(statx.args[0], AT_FDCWD);
    assert_eq!(entry(statx, 1), file);
    assert_eq!(statx.args[2], libc::AT_SYMLINK_NOFOLLOW as u64);
    assert_eq!(
        statx.args[3],
        u64::from(libc::STATX_BASIC_STATS | libc::STATX_BTIME)
    );
    assert_eq!(ret(statx), 0);
    let stx = exit_data(statx, 4);
    assert_eq!(stx.len(), 256);
    assert_eq!(
        stx,
        rep.hex("statx_data"),
        "statx: the bytes the program got"
    );
    assert_eq!(u64_at(stx, 40), 1234);
}

// ---------------------------------------------------------------------
// 5. Memory mappings
// ---------------------------------------------------------------------

#[test]
fn memory_mappings() {
    let case = Case::new();
    let (rec, rep) = case.run("mmaps");
    let t = &rec.trace;
    let fd = rep.int("fd");
    let p = rep.int("mmap_file");
    let q = rep.int("mmap_anon");
    let rw = (libc::PROT_READ | libc::PROT_WRITE) as u64;

    let map_file: Vec<_> = t
        .calls(libc::SYS_mmap)
        .into_iter()
        .filter(|e| e.args[4] == fd as u64)
        .collect();
    let map_file = one(map_file, "mmap of the file");
    assert_eq!(
        map_file.args,
        [0, 8192, rw, libc::MAP_SHARED as u64, fd as u64, 4096]
    );
    assert_eq!(ret(map_file), p);

    let mprotects = t.calls_on(libc::SYS_mprotect, p);
    let mprotect = one(mprotects, "mprotect of the file mapping");
    assert_eq!(mprotect.args[1..3], [4096, libc::PROT_READ as u64]);
    assert_eq!(ret(mprotect), 0);
    let munmap = one(
        t.calls_on(libc::SYS_munmap, p),
        "munmap of the file mapping",
    );
    assert_eq!(munmap.args[1], 8192);
    assert_eq!(ret(munmap), 0);

    let anon: Vec<_> = t
        .calls(libc::SYS_mmap)
        .into_iter()
        .filter(|e| e.exit.is_some_and(|x| x.ret == q))
        .collect();
    let anon = one(anon, "the anonymous mmap");
    assert_eq!(
        anon.args,
        [
            0,
            65536,
            rw,
            (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64,
            u64::MAX,
            0
        ]
    );
    let unmap_anon = one(
        t.calls_on(libc::SYS_munmap, q),
        "munmap of the anonymous mapping",
    );
    assert_eq!(unmap_anon.args[1], 65536);
    assert_eq!(ret(unmap_anon), 0);
    let late = one(t.calls_on(libc::SYS_mprotect, q), "mprotect after munmap");
    assert_eq!(ret(late), -i64::from(libc::ENOMEM));
    assert_eq!(rep.ints("mprotect_unmapped"), [-1, i64::from(libc::ENOMEM)]);

    let bad: Vec<_> = t
        .calls(libc::SYS_mmap)
        .into_iter()
        .filter(|e| e.args[4] == 9999)
        .collect();
    let bad = one(bad, "mmap of a bad descriptor");
    assert_eq!(ret(bad), -i64::from(libc::EBADF));
    assert_eq!(rep.ints("mmap_badfd"), [-1, i64::from(libc::EBADF)]);
    assert_in_order(&[map_file, mprotect, munmap, anon, unmap_anon, late, bad]);
}

// ---------------------------------------------------------------------
// 6. Pipes and dup
// ---------------------------------------------------------------------

#[test]
fn pipes_and_dup() {
    let case = Case::new();
    let (rec, rep) = case.run("pipes");
    let t = &rec.trace;
    let root = t.root().tgid;
    let [rd, wr] = rep.ints("fds")[..] else {
        panic!("fds")
    };
    let dupfd = rep.int("dup");

    let pipe2 = one(t.calls(libc::SYS_pipe2), "pipe2");
    assert_eq!(pipe2.args[1], libc::O_CLOEXEC as u64);
    assert_eq!(ret(pipe2), 0);
    let pair = exit_data(pipe2, 0);
    assert_eq!(pair.len(), 8);
    assert_eq!(
        [i64::from(u32_at(pair, 0)), i64::from(u32_at(pair, 4))],
        [rd, wr],
        "the pipe's descriptors as the program got them"
    );

    let dup = one(t.calls_on(libc::SYS_dup, wr), "dup");
    assert_eq!(ret(dup), dupfd);
    let dup2 = one(t.calls_on(libc::SYS_dup2, wr), "dup2");
    assert_eq!(dup2.args[1], 50);
    assert_eq!(ret(dup2), 50);
    let dup3s = t.calls(libc::SYS_dup3);
    assert_eq!(dup3s.len(), 2);
    assert_eq!(dup3s[0].args[..3], [rd as u64, 51, libc::O_CLOEXEC as u64]);
    assert_eq!(ret(dup3s[0]), 51);
    assert_eq!(dup3s[1].args[..3], [51, 51, 0]);
    assert_eq!(ret(dup3s[1]), -i64::from(libc::EINVAL));
    assert_eq!(rep.ints("dup3_same"), [-1, i64::from(libc::EINVAL)]);

    // Data through the duplicates and the originals, exact both ways.
    let (m1, m2, m3) = (fill(300, 21), fill(7, 22), fill(4096, 23));
    let w1 = one(t.calls_on(libc::SYS_write, dupfd), "write on the dup");
    assert_eq!(entry(w1, 1), m1);
    assert_eq!(ret(w1), 300);
    let w2 = one(t.calls_on(libc::SYS_write, 50), "write on fd 50");
    assert_eq!(entry(w2, 1), m2);
    assert_eq!(ret(w2), 7);
    let r1 = one(t.calls_on(libc::SYS_read, 51), "read on fd 51");
    assert_eq!(r1.args[2], 1000);
    assert_eq!(ret(r1), 307);
    assert_eq!(exit_data(r1, 1), [m1.as_slice(), &m2].concat());
    assert_eq!(exit_data(r1, 1), rep.hex("read_51_data"));
    let w3 = one(t.calls_on(libc::SYS_write, wr), "write on the pipe");
    assert_eq!(entry(w3, 1), m3);
    assert_eq!(ret(w3), 4096);
    let r2 = one(t.calls_on(libc::SYS_read, rd), "read on the pipe");
    assert_eq!(ret(r2), 4096);
    assert_eq!(exit_data(r2, 1), m3);
    assert_in_order(&[pipe2, dup, dup2, dup3s[0], dup3s[1], w1, w2, r1, w3, r2]);
    assert!(t.syscalls().all(|e| e.tgid == root));
}

// ---------------------------------------------------------------------
// 7. Sockets
// ---------------------------------------------------------------------

#[test]
fn unix_sockets() {
    let case = Case::new();
    let (rec, rep) = case.run("sockets");
    let t = &rec.trace;
    let [s0, s1] = rep.ints("sv")[..] else {
        panic!("sv")
    };

    let pair = one(t.calls(libc::SYS_socketpair), "socketpair");
    assert_eq!(
        pair.args[..3],
        [libc::AF_UNIX as u64, libc::SOCK_DGRAM as u64, 0]
    );
    assert_eq!(ret(pair), 0);
    let sv = exit_data(pair, 3);
    assert_eq!(
        [i64::from(u32_at(sv, 0)), i64::from(u32_at(sv, 4))],
        [s0, s1]
    );

    // sendmsg: each iovec element whole, at entry.
    let parts = [fill(5, 31), fill(300, 32), fill(7000, 33)];
    let message = parts.concat();
    let sendmsg = one(t.calls_on(libc::SYS_sendmsg, s0), "sendmsg");
    assert_eq!(ret(sendmsg), 7305);
    for (i, part) in parts.iter().enumerate() {
        let (len, data) = capture_elem(sendmsg, 1, Role::Entry, i as u32);
        assert_eq!(len, part.len() as u64);
        assert_eq!(data, part.as_slice(), "sendmsg element {i}");
    }
    assert!(!sendmsg
        .captures
        .iter()
        .any(|c| c.arg == 1 && c.role == Role::Entry && c.elem > 2));

    // recvmsg: the datagram spread over two elements of 100 and 8000.
    let recvmsg = one(t.calls_on(libc::SYS_recvmsg, s1), "recvmsg");
    assert_eq!(ret(recvmsg), 7305);
    let (len0, d0) = capture_elem(recvmsg, 1, Role::Exit, 0);
    let (len1, d1) = capture_elem(recvmsg, 1, Role::Exit, 1);
    assert_eq!((len0, len1), (100, 8000), "element lens are iov_len");
    assert_eq!(d0, &message[..100]);
    assert_eq!(d1, &message[100..], "element 1 holds the 7205 bytes moved");
    assert_eq!(d0, rep.hex("recvmsg_data0"));
    assert_eq!(d1, rep.hex("recvmsg_data1"));

    // sendto / recvfrom with the source address and its length.
    let payload = fill(1000, 34);
    let sendto = one(t.calls_on(libc::SYS_sendto, s1), "sendto");
    assert_eq!(sendto.args[2], 1000);
    assert_eq!(sendto.args[4..6], [0, 0]);
    assert_eq!(entry(sendto, 1), payload);
    assert_eq!(ret(sendto), 1000);
    let recvfrom = one(t.calls_on(libc::SYS_recvfrom, s0), "recvfrom");
    assert_eq!(recvfrom.args[2], 4096);
    assert_eq!(ret(recvfrom), 1000);
    assert_eq!(exit_data(recvfrom, 1), payload);
    assert_eq!(exit_data(recvfrom, 1), rep.hex("recvfrom_data"));
    let before = rep.int("fromlen_before") as u32;
    let after = rep.int("fromlen") as u32;
    assert_eq!(entry(recvfrom, 5), before.to_le_bytes(), "addrlen in");
    assert_eq!(exit_data(recvfrom, 5), after.to_le_bytes(), "addrlen out");
    assert_eq!(exit_data(recvfrom, 4), rep.hex("from"), "source address");
    assert_in_order(&[pair, sendmsg, recvmsg, sendto, recvfrom]);
}

// ---------------------------------------------------------------------
// 8. Threads
// ---------------------------------------------------------------------

#[test]
fn threads_each_call_and_byte() {
    const THREADS: u32 = 4;
    const CALLS: u64 = 1000;
    let case = Case::new();
    let (rec, rep) = case.run("threads");
    let t = &rec.trace;
    let root = t.root().tgid;
    let fd = rep.int("fd") as u64;
    assert_eq!(rec.summary.processes, 1);
    assert_eq!(rec.summary.threads, 1 + u64::from(THREADS));
    assert_eq!(rec.summary.unfinished, 0);
    assert_eq!(t.calls(libc::SYS_pwrite64).len() as u64, CALLS * 4);

    let clones: Vec<_> = t
        .calls(libc::SYS_clone)
        .into_iter()
        .chain(t.calls(libc::SYS_clone3))
        .collect();
    assert_eq!(clones.len(), THREADS as usize, "one clone per thread");

    for n in 0..THREADS {
        let tid = rep.int(&format!("tid{n}")) as u32;
        assert_ne!(tid, root);
        let writes = t.calls_by(libc::SYS_pwrite64, tid);
        assert_eq!(writes.len() as u64, CALLS, "thread {n}'s pwrite64 calls");
        for (i, w) in writes.iter().enumerate() {
            let i = i as u64;
            assert_eq!(w.tgid, root);
            assert_eq!(w.args[0], fd);
            assert_eq!(w.args[2], 4096);
            assert_eq!(
                w.args[3],
                (u64::from(n) * CALLS + i) * 4096,
                "thread {n} call {i} offset"
            );
            let seed = n * 100_000 + i as u32 + 1000;
            assert!(
                entry(w, 1) == fill(4096, seed),
                "thread {n} call {i}: captured bytes differ from the pattern"
            );
            assert_eq!(ret(w), 4096);
        }

        // Start, creation order and end of the thread.
        let start = t.start_of(tid);
        assert_eq!(start.cause, StartCause::Created);
        assert_eq!(start.tgid, root);
        let clone = one(
            clones
                .iter()
                .copied()
                .filter(|c| c.exit.is_some_and(|x| x.ret == i64::from(tid)))
                .collect(),
            "clone returning the thread id",
        );
        assert_eq!(clone.tid, root, "the main thread created it");
        let first = t
            .records
            .iter()
            .filter(|r| r.tid() == tid)
            .map(Record::seq)
            .min()
            .expect("records of the thread");
        assert!(
            clone.seq < first,
            "clone (seq {}) precedes the thread's first record (seq {first})",
            clone.seq
        );
        assert!(t
            .records
            .iter()
            .filter(|r| r.tid() == tid)
            .all(|r| r.tgid() == root));
        assert_eq!(t.exit_of(tid).status, ExitStatus::Exited(0));
    }
    // Two tracers on two CPUs: new threads go to the less busy one and run
    // on its CPU (the second always: the other tracer has nothing yet,
    // while the first has the main thread and the first worker).
    let [one_cpu, other_cpu] = tracer_cpus()[..] else {
        panic!("two tracers")
    };
    if one_cpu == other_cpu {
        eprintln!("NOTE: one CPU only: threads handed to the second tracer stay on it; placement not checked");
    } else {
        let ran_on: Vec<usize> = (0..THREADS)
            .map(|n| rep.int(&format!("cpu{n}")) as usize)
            .collect();
        assert!(
            ran_on.iter().all(|&c| c == one_cpu || c == other_cpu),
            "every thread runs on one tracer's CPU: {ran_on:?}"
        );
        assert!(
            ran_on.contains(&other_cpu),
            "a thread was handed to the second tracer: {ran_on:?}"
        );
    }
    // Pinned or not, each thread is shown the CPUs it would have had.
    let mine = own_cpus_first_word();
    for n in 0..THREADS {
        assert_eq!(
            rep.int(&format!("cpus{n}")) as u64,
            mine,
            "thread {n} is shown the recorder's CPUs, not its pin"
        );
    }
    // The file holds every pattern.
    let file = std::fs::read(case.work().join("t.dat")).expect("t.dat");
    assert_eq!(file.len() as u64, u64::from(THREADS) * CALLS * 4096);
    assert_eq!(&file[..4096], fill(4096, 1000).as_slice());
    assert_eq!(t.exit_of(root).status, ExitStatus::Exited(0));
}

/// The first word of this thread's CPU mask: what a command recorded from
/// it would see without the recorder's pin.
fn own_cpus_first_word() -> u64 {
    let mut mask = [0u64; 16];
    // SAFETY: the kernel writes at most the buffer's size into it.
    let n = unsafe {
        libc::syscall(
            libc::SYS_sched_getaffinity,
            0,
            std::mem::size_of_val(&mask),
            mask.as_mut_ptr(),
        )
    };
    assert!(
        n > 0,
        "sched_getaffinity: {}",
        std::io::Error::last_os_error()
    );
    mask[0]
}

/// A program sizes its work by the CPUs it may use (`nproc`, `make -j`,
/// `xz -T0`): recorded, it must see what it sees untraced, though the
/// recorder pins it, its threads and its children to the tracers' CPUs;
/// and a mask the program sets itself is what it sees from then on, in
/// its children too.
#[test]
fn a_pinned_program_sees_the_cpus_it_would_have_had() {
    let case = Case::new();
    let exe = case.build("affinity");
    let plain = Command::new(&exe)
        .arg(case.work())
        .stdin(std::process::Stdio::null())
        .status()
        .expect("run affinity");
    assert!(plain.success(), "affinity failed untraced: {plain}");
    let untraced = std::fs::read_to_string(case.work().join("report")).expect("report");
    let (rec, rep) = case.run("affinity");
    let traced = std::fs::read_to_string(case.work().join("report")).expect("report");
    let without_fd = |r: &str| -> Vec<String> {
        r.lines()
            .filter(|l| !l.starts_with("report_fd "))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(
        without_fd(&traced),
        without_fd(&untraced),
        "the program saw other CPUs recorded than untraced"
    );
    // The trace holds what the program saw.
    let main_mask = rep.hex("main_mask");
    let first = rec
        .trace
        .calls(libc::SYS_sched_getaffinity)
        .into_iter()
        .find(|e| e.tid == rec.trace.root().tid)
        .expect("the main thread's sched_getaffinity");
    let captured = exit_data(first, 2);
    assert!(!captured.is_empty() && captured.len() <= main_mask.len());
    assert_eq!(captured, &main_mask[..captured.len()]);
    if own_cpus_first_word().count_ones() < 2 {
        eprintln!(
            "NOTE: one CPU only: the pin and the program's CPUs are the same; nothing was hidden"
        );
    }
}

// ---------------------------------------------------------------------
// 9. fork, vfork, exec, wait4
// ---------------------------------------------------------------------

/// The fork, vfork, clone or clone3 call that returned `child`.
fn creating_call(t: &Trace, child: u32) -> &SyscallEvent {
    let creators = [
        libc::SYS_clone,
        libc::SYS_clone3,
        libc::SYS_fork,
        libc::SYS_vfork,
    ];
    one(
        t.syscalls()
            .filter(|e| creators.contains(&i64::from(e.nr)))
            .filter(|e| e.exit.is_some_and(|x| x.ret == i64::from(child)))
            .collect(),
        "call creating the child",
    )
}

/// The string elements of a string-array capture (argv, envp).
fn str_array(e: &SyscallEvent, arg: u8) -> Vec<Vec<u8>> {
    let mut elems: Vec<_> = e
        .captures
        .iter()
        .filter(|c| c.arg == arg && c.role == Role::Entry)
        .collect();
    elems.sort_by_key(|c| c.elem);
    for (i, c) in elems.iter().enumerate() {
        assert_eq!(c.elem, i as u32, "elements numbered from 0");
        assert_eq!(c.status, CaptureStatus::Complete);
    }
    elems
        .into_iter()
        .map(|c| c.data.as_deref().expect("data").to_vec())
        .collect()
}

#[test]
fn fork_vfork_exec_wait() {
    let case = Case::new();
    let (rec, rep) = case.run("forks");
    let t = &rec.trace;
    let root = t.root();
    let rootpid = root.tgid;
    assert_eq!(rec.summary.processes, 4);

    let child = |key: &str| {
        let v = rep.ints(key);
        let [pid, waited, status] = v[..] else {
            panic!("{key}")
        };
        assert_eq!(waited, pid, "wait4 returned the child");
        (pid as u32, status as u32)
    };
    let (c1, st1) = child("child1");
    let (c2, st2) = child("child2");
    let (c3, st3) = child("child3");
    assert_eq!((st1, st2, st3), (0, 3 << 8, 0));

    // The calls that created them.
    let creator = |pid| creating_call(t, pid);
    let (k1, k2, k3) = (creator(c1), creator(c2), creator(c3));
    assert_eq!(i64::from(k3.nr), libc::SYS_vfork);
    for (k, pid, status) in [(k1, c1, 0), (k2, c2, 3), (k3, c3, 0)] {
        assert_eq!(k.tgid, rootpid);
        let start = t.start_of(pid);
        assert_eq!(start.cause, StartCause::Created);
        assert_eq!(start.tgid, pid);
        assert_eq!(start.ppid, rootpid);
        let first = t
            .records
            .iter()
            .filter(|r| r.tgid() == pid)
            .map(Record::seq)
            .min()
            .expect("records of the child");
        assert!(k.seq < first, "the creating call precedes the child");
        assert_eq!(t.exit_of(pid).status, ExitStatus::Exited(status));
        assert!(t.syscalls().filter(|e| e.tgid == pid).all(|e| e.tid == pid));
    }

    // execve: path, argv and environment captured at entry; it returned 0.
    let root_env = root.env.clone();
    assert!(!root_env.is_empty());
    for (pid, arg) in [(c1, &b"fork-arg"[..]), (c3, b"vforked")] {
        let exec = one(
            t.calls(libc::SYS_execve)
                .into_iter()
                .filter(|e| e.tgid == pid)
                .collect(),
            "execve of the child",
        );
        assert_eq!(entry(exec, 0), b"/bin/true");
        assert_eq!(str_array(exec, 1), [b"true".to_vec(), arg.to_vec()]);
        assert_eq!(
            str_array(exec, 2),
            root_env,
            "envp = the inherited environment"
        );
        assert_eq!(ret(exec), 0);
    }
    assert!(!t.calls(libc::SYS_execve).iter().any(|e| e.tgid == c2));

    // wait4: the status word at exit, exactly what the program saw.
    let waits = without_restarts(t.calls(libc::SYS_wait4));
    assert_eq!(waits.len(), 3);
    for (w, (pid, status)) in waits.iter().zip([(c1, st1), (c2, st2), (c3, st3)]) {
        assert_eq!(w.tgid, rootpid);
        assert_eq!(w.args[0], u64::from(pid));
        assert_eq!(w.args[2..4], [0, 0]);
        assert_eq!(ret(w), i64::from(pid));
        assert_eq!(exit_data(w, 1), status.to_le_bytes());
        assert!(!has_capture(w, 3, Role::Exit), "no rusage asked for");
    }
    assert_in_order(&[k1, waits[0], k2, waits[1], k3, waits[2]]);
    assert_eq!(t.exit_of(rootpid).status, ExitStatus::Exited(0));
    assert_eq!(rec.summary.root_status, Some(ExitStatus::Exited(0)));
}

// ---------------------------------------------------------------------
// 10. Signals
// ---------------------------------------------------------------------

/// Kernel restart code: the call was interrupted by a signal and is
/// restarted only if the handler has `SA_RESTART`.
const ERESTARTSYS: i64 = 512;

#[test]
fn signals_and_interrupted_read() {
    let case = Case::new();
    let (rec, rep) = case.run("signals");
    let t = &rec.trace;
    let pid = rep.int("pid") as u32;
    assert_eq!(t.root().tgid, pid);
    assert_eq!(rep.int("usr1"), 1, "the SIGUSR1 handler ran once");
    assert_eq!(rep.int("alrm"), 1, "the SIGALRM handler ran once");

    // The handlers were installed without SA_RESTART (kernel sigaction:
    // handler, flags, restorer, mask).
    for sig in [libc::SIGUSR1, libc::SIGALRM] {
        let act = one(
            t.calls(libc::SYS_rt_sigaction)
                .into_iter()
                .filter(|e| e.args[0] == sig as u64)
                .collect(),
            "rt_sigaction",
        );
        let a = entry(act, 1);
        assert_eq!(a.len(), 32);
        assert_eq!(u64_at(a, 8) & libc::SA_RESTART as u64, 0);
        assert_ne!(u64_at(a, 0), 0, "a handler address");
        assert_eq!(ret(act), 0);
    }

    let kill = t.calls(libc::SYS_kill)[0];
    assert_eq!(kill.args[..2], [u64::from(pid), libc::SIGUSR1 as u64]);
    assert_eq!(ret(kill), 0);
    let usr1: Vec<_> = t
        .signals()
        .into_iter()
        .filter(|s| s.signo == libc::SIGUSR1)
        .collect();
    let usr1 = one(usr1, "SIGUSR1 delivery");
    assert_eq!((usr1.tgid, usr1.tid), (pid, pid));
    assert_eq!(usr1.sender, pid, "sent by the program itself");
    assert_eq!(usr1.code, libc::SI_USER);
    assert!(usr1.seq > kill.seq);

    // The read interrupted by SIGALRM: an error exit, then the delivery.
    let rd = rep.int("pipe_rd");
    let read = one(t.calls_on(libc::SYS_read, rd), "the interrupted read");
    assert_eq!(rep.ints("read"), [-1, i64::from(libc::EINTR)]);
    let x = read.exit.expect("the read returned");
    assert!(x.is_error);
    // At its exit stop the kernel still holds -ERESTARTSYS; the program
    // sees -EINTR once the handler (without SA_RESTART) is set up.
    assert!(
        x.ret == -i64::from(libc::EINTR) || x.ret == -ERESTARTSYS,
        "read returned {} (expected -EINTR or -ERESTARTSYS)",
        x.ret
    );
    assert!(!has_capture(read, 1, Role::Exit));
    let alrm: Vec<_> = t
        .signals()
        .into_iter()
        .filter(|s| s.signo == libc::SIGALRM)
        .collect();
    let alrm = one(alrm, "SIGALRM delivery");
    assert_eq!(alrm.tid, pid);
    assert!(alrm.seq > read.seq);
    assert!(alrm.time_ns >= x.exit_ns);
    assert_eq!(t.signals().len(), 2, "no other signal");
}

// ---------------------------------------------------------------------
// 11. Crashes
// ---------------------------------------------------------------------

fn check_crash(how: &str, signal: i32) {
    let case = Case::new();
    let exe = case.build("crash");
    let dir = case.work();
    let rec = case.record_cmd(&[exe.into(), dir.clone().into(), how.into()]);
    let t = &rec.trace;
    let pid = t.root().tgid;
    assert!(
        matches!(rec.summary.root_status, Some(ExitStatus::Killed { signal: s, .. }) if s == signal),
        "root status {:?}, expected killed by {signal}",
        rec.summary.root_status
    );
    let exit = t.exit_of(pid);
    assert!(
        matches!(exit.status, ExitStatus::Killed { signal: s, .. } if s == signal),
        "ProcessExit says {:?}",
        exit.status
    );
    assert_eq!(
        t.exits().len(),
        1,
        "one process, one thread, one exit record"
    );

    // The marker write is the last write, complete and exact.
    let marker = format!("about to {how}\n");
    assert_eq!(
        std::fs::read(dir.join("marker")).expect("marker file"),
        marker.as_bytes()
    );
    let open = t.call_with_path(libc::SYS_open, 0, &in_dir(&dir, "marker"));
    let fd = ret(open);
    let write = one(t.calls_on(libc::SYS_write, fd), "marker write");
    assert_eq!(entry(write, 1), marker.as_bytes());
    assert_eq!(ret(write), marker.len() as i64);
    let last_write = t.calls(libc::SYS_write).into_iter().last().expect("writes");
    assert_eq!(last_write.seq, write.seq, "the marker is the last write");

    // The fatal signal was seen before the exit.
    let sig = one(
        t.signals()
            .into_iter()
            .filter(|s| s.signo == signal)
            .collect(),
        "fatal signal delivery",
    );
    assert_eq!(sig.tid, pid);
    assert!(write.seq < sig.seq && sig.seq < exit.seq);
    assert_eq!(rec.summary.unfinished, 0);
}

#[test]
fn crash_by_segfault() {
    check_crash("segv", libc::SIGSEGV);
}

#[test]
fn crash_by_abort() {
    check_crash("abort", libc::SIGABRT);
}

// ---------------------------------------------------------------------
// 12. exit_group while other threads are blocked
// ---------------------------------------------------------------------

#[test]
fn exit_group_with_blocked_threads() {
    let case = Case::new();
    let started = Instant::now();
    let (rec, rep) = case.run("blocked_exit");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "recording took {:?}",
        started.elapsed()
    );
    let t = &rec.trace;
    let pid = t.root().tgid;
    let tids: Vec<u32> = rep.ints("tids").into_iter().map(|x| x as u32).collect();
    assert_eq!(tids.len(), 3);
    assert_eq!(rec.summary.threads, 4);

    let exit_group = one(t.calls(libc::SYS_exit_group), "exit_group");
    assert_eq!(exit_group.tid, pid);
    assert_eq!(exit_group.args[0], 0);
    assert!(exit_group.exit.is_none(), "exit_group does not return");

    let rd = rep.int("pipe_rd");
    for (i, &tid) in tids.iter().enumerate() {
        assert_eq!(t.start_of(tid).cause, StartCause::Created);
        assert_eq!(t.start_of(tid).tgid, pid);
        let exit = t.exit_of(tid);
        assert_eq!(exit.tgid, pid);
        assert_eq!(
            exit.status,
            ExitStatus::Exited(0),
            "thread {tid} ended with the group"
        );
        assert!(exit.seq > exit_group.seq);
        // The call it was blocked in is in the trace, cut short: its
        // restart code is read as the thread ends.
        let nr = if i < 2 {
            libc::SYS_read
        } else {
            libc::SYS_nanosleep
        };
        let blocked = one(t.calls_by(nr, tid), "the blocking call");
        if i < 2 {
            assert_eq!(blocked.args[0], rd as u64);
            assert_eq!(blocked.args[2], 100);
        } else {
            assert_eq!(
                entry(blocked, 0),
                [100u64.to_le_bytes(), 0u64.to_le_bytes()].concat()
            );
        }
        assert!(
            blocked
                .exit
                .is_some_and(|x| (512..=516).contains(&x.errno())),
            "thread {tid}'s call {nr} was cut short, yet the trace has exit {:?}",
            blocked.exit
        );
        assert!(blocked.seq < exit_group.seq);
    }
    assert_eq!(rec.summary.unfinished, 0, "the calls cut short returned");
    assert_eq!(t.exit_of(pid).status, ExitStatus::Exited(0));
    assert_eq!(t.exits().len(), 4);
}

// ---------------------------------------------------------------------
// 13. Attaching to a running process
// ---------------------------------------------------------------------

/// A running ticker (programs/ticker.c), announced ready. Killed when
/// dropped unless it has ended.
struct Ticker {
    child: std::process::Child,
    /// Set once it has exited (the recorder may have reaped it, so it
    /// must not be signalled by id any more).
    ended: bool,
    pid: u32,
    fd: i64,
    /// Thread ids, the leader first.
    tids: Vec<u32>,
}

fn start_ticker(case: &Case, exe: &Path, count: usize, threads: usize) -> Ticker {
    use std::io::BufRead;
    let dir = case.work();
    let mut child = Command::new(exe)
        .arg(&dir)
        .arg(count.to_string())
        .arg(threads.to_string())
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start ticker");
    let pid = child.id();
    let mut ready = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut ready)
        .expect("ready line");
    let fd = ready
        .strip_prefix("ready ")
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("ticker said {ready:?}"));
    let mut tids: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("task list")
        .map(|e| {
            e.expect("task")
                .file_name()
                .to_str()
                .and_then(|n| n.parse().ok())
                .expect("tid")
        })
        .collect();
    tids.sort_by_key(|&t| (t != pid, t));
    assert_eq!(tids.len(), threads);
    Ticker {
        child,
        ended: false,
        pid,
        fd,
        tids,
    }
}

impl Ticker {
    /// Records that it has ended, and reaps it unless the recorder has.
    fn ended(&mut self) {
        self.ended = true;
        let _ = self.child.wait();
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Checks the ticks each thread wrote: one thread index per thread,
/// consecutive tick numbers, exact bytes. With `detached`, each thread's
/// last write may be unfinished (it was under way at the detach). Returns
/// the number of writes and the last tick number of each thread.
fn check_ticks(t: &Trace, ticker: &Ticker, detached: bool) -> (usize, Vec<usize>) {
    let mut total = 0;
    let mut last = Vec::new();
    for &tid in &ticker.tids {
        let writes: Vec<_> = t
            .calls_on(libc::SYS_write, ticker.fd)
            .into_iter()
            .filter(|e| e.tid == tid)
            .collect();
        assert!(writes.len() >= 10, "thread {tid}: {} writes", writes.len());
        let first = String::from_utf8(entry(writes[0], 1).to_vec()).expect("text");
        let mut words = first.split_whitespace().skip(1);
        let k: usize = words.next().and_then(|w| w.parse().ok()).expect("k");
        let i0: usize = words.next().and_then(|w| w.parse().ok()).expect("i");
        assert_eq!(k == 0, tid == ticker.pid, "thread 0 is the leader");
        for (n, w) in writes.iter().enumerate() {
            let line = format!("tick {k} {:05}\n", i0 + n);
            assert_eq!(entry(w, 1), line.as_bytes(), "thread {tid} write {n}");
            assert_eq!(w.args[2], line.len() as u64);
            assert_eq!(w.tgid, ticker.pid);
            if w.exit.is_none() && detached && n == writes.len() - 1 {
                continue;
            }
            assert_eq!(ret(w), line.len() as i64);
        }
        total += writes.len();
        last.push(i0 + writes.len() - 1);
    }
    (total, last)
}

#[test]
fn attach_to_running_process() {
    const TICKS: usize = 200;
    const THREADS: usize = 3;
    let case = Case::new();
    let exe = case.build("ticker");
    let dir = case.work();
    let mut ticker = start_ticker(&case, &exe, TICKS, THREADS);
    let pid = ticker.pid;

    let rec = case.record(Target::Attach {
        pids: vec![pid as i32],
    });
    // record() returns once every tracee has exited.
    ticker.ended();
    let t = &rec.trace;
    assert_eq!(rec.summary.root_status, None);
    assert_eq!(rec.summary.processes, 1);
    assert_eq!(rec.summary.threads, THREADS as u64);

    let start = t.start_of(pid);
    assert_eq!(start.cause, StartCause::Attached);
    assert_eq!(start.tgid, pid);
    assert_eq!(start.cwd, path_bytes(&dir), "cwd of the attached process");
    assert_eq!(start.exe, path_bytes(&exe.canonicalize().expect("exe")));
    assert_eq!(
        start.argv,
        [
            path_bytes(&exe),
            path_bytes(&dir),
            TICKS.to_string().into_bytes(),
            THREADS.to_string().into_bytes()
        ]
    );
    let ticks = in_dir(&dir, "ticks");
    let fdinfo = start
        .fds
        .iter()
        .find(|f| i64::from(f.fd) == ticker.fd)
        .expect("the ticks descriptor in the start record");
    assert_eq!(fdinfo.target, ticks);
    assert_eq!(fdinfo.flags & libc::O_ACCMODE as u32, libc::O_WRONLY as u32);
    assert_ne!(fdinfo.flags & libc::O_APPEND as u32, 0);
    for &tid in &ticker.tids {
        let s = t.start_of(tid);
        assert_eq!((s.cause, s.tgid), (StartCause::Attached, pid));
        assert_eq!(s.cwd, path_bytes(&dir));
        assert_eq!(t.exit_of(tid).status, ExitStatus::Exited(0));
    }
    // Every write seen after attaching, to the last tick of each thread.
    let (_, last) = check_ticks(t, &ticker, false);
    assert!(last.iter().all(|&l| l == TICKS - 1));
    assert!(t.syscalls().all(|e| e.seq > start.seq));
    let file = std::fs::read_to_string(dir.join("ticks")).expect("ticks");
    assert_eq!(file.lines().count(), TICKS * THREADS);
}

/// Waits up to 10 s for `cond`, polling every 10 ms.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn tracer_of(tid: u32) -> u32 {
    std::fs::read_to_string(format!("/proc/{tid}/status"))
        .expect("status")
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("TracerPid")
}

/// SIGINT to the recorder detaches an attached process and leaves it
/// running, untraced.
#[test]
fn attach_then_detach_on_sigint() {
    const THREADS: usize = 2;
    let case = Case::new();
    let exe = case.build("ticker");
    let dir = case.work();
    let ticker = start_ticker(&case, &exe, 100_000, THREADS);
    let tids = ticker.tids.clone();
    let ticks = dir.join("ticks");
    let lines = move || {
        std::fs::read_to_string(&ticks)
            .expect("ticks")
            .lines()
            .count()
    };
    let interrupter = {
        let lines = lines.clone();
        std::thread::spawn(move || {
            // Once every thread is traced and has ticked some more, ask the
            // recorder to stop, as Ctrl-C would.
            wait_for("the recorder to attach", || {
                tids.iter().all(|&t| tracer_of(t) != 0)
            });
            let traced_at = lines();
            wait_for("ticks under the recorder", || lines() >= traced_at + 20);
            // SAFETY: kill has no memory effects; the recorder's handler is
            // installed before it attaches.
            unsafe { libc::kill(libc::getpid(), libc::SIGINT) };
        })
    };
    let rec = case.record(Target::Attach {
        pids: vec![ticker.pid as i32],
    });
    interrupter.join().expect("interrupter");
    let t = &rec.trace;
    for &tid in &ticker.tids {
        assert_eq!(t.exit_of(tid).status, ExitStatus::Detached);
        assert_eq!(tracer_of(tid), 0, "thread {tid} is no longer traced");
    }
    let (total, _) = check_ticks(t, &ticker, true);
    assert!(total >= 20);
    // Still running, and still ticking, on its own.
    let after = lines();
    wait_for("ticks after detaching", || lines() >= after + 10);
    assert_eq!(
        rec.summary.unfinished,
        t.syscalls().filter(|e| e.exit.is_none()).count() as u64,
        "calls under way at the detach are recorded unfinished"
    );
    drop(ticker);
}

// ---------------------------------------------------------------------
// 14. A shell pipeline, and the root's exit status
// ---------------------------------------------------------------------

/// The successful execve of process `tgid` (a shell tries PATH entries).
fn exec_of(t: &Trace, tgid: u32) -> &SyscallEvent {
    one(
        t.calls(libc::SYS_execve)
            .into_iter()
            .filter(|e| e.tgid == tgid && e.exit.is_some_and(|x| x.ret == 0))
            .collect(),
        "successful execve",
    )
}

/// The concatenated exit captures of argument `arg` of `calls`, checking
/// each against its return value.
fn concat_out(calls: &[&SyscallEvent], arg: u8) -> Vec<u8> {
    let mut all = Vec::new();
    for c in calls {
        let data = exit_data(c, arg);
        assert_eq!(data.len() as i64, ret(c));
        all.extend_from_slice(data);
    }
    all
}

#[test]
fn shell_pipeline() {
    let case = Case::new();
    let dir = case.work();
    let input = dir.join("in.txt");
    let output = dir.join("out.gz");
    let content: Vec<u8> = (0..10_000u32)
        .flat_map(|i| {
            format!("line {i:05} {:08x}\n", i.wrapping_mul(2_654_435_761u32)).into_bytes()
        })
        .collect();
    assert!(content.len() > 128 * 1024);
    std::fs::write(&input, &content).expect("input");
    let script = format!("cat {} | gzip > {}", input.display(), output.display());
    let rec = case.record_cmd(&["sh".into(), "-c".into(), script.into()]);
    let t = &rec.trace;
    assert_eq!(rec.summary.root_status, Some(ExitStatus::Exited(0)));
    assert_eq!(rec.summary.processes, 3, "sh, cat and gzip");

    let sh = t.root().tgid;
    let children: Vec<u32> = t
        .starts()
        .iter()
        .filter(|p| p.cause == StartCause::Created)
        .map(|p| p.tgid)
        .collect();
    assert_eq!(children.len(), 2);
    let named = |name: &[u8]| {
        let v: Vec<u32> = children
            .iter()
            .copied()
            .filter(|&c| str_array(exec_of(t, c), 1).first().map(Vec::as_slice) == Some(name))
            .collect();
        one(v, "process running the command")
    };
    let (cat, gzip) = (named(b"cat"), named(b"gzip"));
    assert_eq!(
        str_array(exec_of(t, cat), 1),
        [b"cat".to_vec(), path_bytes(&input)]
    );
    assert_eq!(str_array(exec_of(t, gzip), 1), [b"gzip".to_vec()]);
    for p in [sh, cat, gzip] {
        assert_eq!(t.exit_of(p).status, ExitStatus::Exited(0));
    }
    for c in [cat, gzip] {
        assert_eq!(t.start_of(c).ppid, sh);
    }

    // What cat wrote into the pipe and what gzip read from it are the file.
    let cat_writes: Vec<_> = t
        .calls_on(libc::SYS_write, 1)
        .into_iter()
        .filter(|e| e.tgid == cat)
        .collect();
    let mut written = Vec::new();
    for w in &cat_writes {
        let data = entry(w, 1);
        assert_eq!(ret(w), data.len() as i64);
        written.extend_from_slice(data);
    }
    assert!(written == content, "cat's writes are the input file");
    let gzip_reads: Vec<_> = t
        .calls_on(libc::SYS_read, 0)
        .into_iter()
        .filter(|e| e.tgid == gzip)
        .collect();
    assert!(gzip_reads.len() >= 2);
    assert_eq!(
        ret(gzip_reads.last().expect("reads")),
        0,
        "gzip read to EOF"
    );
    assert!(
        concat_out(&gzip_reads, 1) == content,
        "gzip's reads from the pipe are the input file"
    );

    // And gzip's output is a valid gzip of the file.
    let unzipped = Command::new("gzip")
        .arg("-dc")
        .arg(&output)
        .output()
        .expect("run gzip -dc");
    assert!(unzipped.status.success(), "out.gz is not valid gzip");
    assert!(
        unzipped.stdout == content,
        "out.gz decompresses to the input"
    );
    let gzip_out: Vec<_> = t
        .calls_on(libc::SYS_write, 1)
        .into_iter()
        .filter(|e| e.tgid == gzip)
        .collect();
    let mut compressed = Vec::new();
    for w in &gzip_out {
        compressed.extend_from_slice(entry(w, 1));
    }
    assert_eq!(
        compressed,
        std::fs::read(&output).expect("out.gz"),
        "gzip's writes are the output file"
    );
}

#[test]
fn root_exit_status() {
    let case = Case::new();
    let rec = case.record_cmd(&["sh".into(), "-c".into(), "exit 7".into()]);
    assert_eq!(rec.summary.root_status, Some(ExitStatus::Exited(7)));
    let t = &rec.trace;
    let pid = t.root().tgid;
    assert_eq!(t.exit_of(pid).status, ExitStatus::Exited(7));
    let exit_group = one(t.calls(libc::SYS_exit_group), "exit_group");
    assert_eq!(exit_group.args[0], 7);
    assert!(exit_group.exit.is_none());
    assert_eq!(rec.summary.unfinished, 0, "exit_group is not a loss");
}

// ---------------------------------------------------------------------
// Edge cases of process lifetimes
// ---------------------------------------------------------------------

/// Threads of a process whose seccomp filter refuses `pause` stay with
/// their creator's tracer (moving one to the other would park it in
/// `pause`), run as they would untraced, and are recorded.
#[test]
fn threads_under_seccomp_are_recorded_and_run_unharmed() {
    let case = Case::new();
    let (rec, rep) = case.run("seccomp");
    let t = &rec.trace;
    for tid in rep.ints("tids") {
        let tid = tid as u32;
        assert_eq!(t.start_of(tid).cause, StartCause::Created);
        assert_eq!(t.calls_by(libc::SYS_gettid, tid).len(), 1);
        assert_eq!(t.exit_of(tid).status, ExitStatus::Exited(0));
    }
    assert_eq!(rec.summary.threads, 4);
}

/// A thread other than the leader calls execve while the leader is
/// blocked in read: the exec ends the leader's read and the leader, and
/// the execing thread continues under the process id.
#[test]
fn execve_from_a_non_leader_thread() {
    let case = Case::new();
    let (rec, rep) = case.run("thread_exec");
    let t = &rec.trace;
    let pid = t.root().tgid;
    let [leader, execer] = rep.ints("tids")[..] else {
        panic!("tids")
    };
    let (leader, execer) = (leader as u32, execer as u32);
    assert_eq!(leader, pid);
    assert_ne!(execer, pid);
    assert_eq!(t.start_of(execer).cause, StartCause::Created);

    // The thread's execve, made under its own id, returned 0.
    let execs: Vec<_> = t
        .calls(libc::SYS_execve)
        .into_iter()
        .filter(|e| e.args[0] != 0 && entry(e, 0) == b"/bin/true")
        .collect();
    let exec = one(execs, "the thread's execve");
    assert_eq!(exec.tid, execer);
    assert_eq!(
        str_array(exec, 1),
        [b"true".to_vec(), b"from-thread".to_vec()]
    );
    assert_eq!(ret(exec), 0);
    // /bin/true then runs as the process, under the leader's id.
    let after: Vec<_> = t.syscalls().filter(|e| e.seq > exec.seq).collect();
    assert!(!after.is_empty());
    assert!(after.iter().all(|e| e.tid == pid));
    assert!(t.calls(libc::SYS_exit_group).iter().any(|e| e.tid == pid));

    // The leader's read was cut short by the exec: it must still be in
    // the trace, with its restart code, not dropped.
    let rd = rep.int("pipe_rd");
    let read = one(
        t.calls_on(libc::SYS_read, rd),
        "the leader's read on the pipe, ended by the exec",
    );
    assert_eq!(read.tid, leader);
    assert_eq!(ret(read), -512, "ERESTARTSYS");
    assert!(read.seq < exec.seq);
    assert_eq!(rec.summary.unfinished, 0);

    // Every thread that started has an end; the execing thread's former
    // id is gone for good, superseded by the process id.
    for p in t.starts() {
        t.exit_of(p.tid);
    }
    let gone = t.exit_of(execer);
    assert_eq!(gone.status, ExitStatus::Superseded { by: pid });
    assert!(gone.seq > exec.seq);
    assert_eq!(t.exit_of(pid).status, ExitStatus::Exited(0));
}

/// Job control: a traced child stopped by SIGSTOP stays stopped (its
/// parent sees the stop with WUNTRACED) until the parent sends SIGCONT.
#[test]
fn stop_and_continue() {
    let case = Case::new();
    let (rec, rep) = case.run("stopcont");
    let t = &rec.trace;
    let pid = t.root().tgid;
    let child = rep.int("child") as u32;
    let stopped_status = (libc::SIGSTOP << 8) | 0x7f;
    assert_eq!(
        rep.ints("stopped"),
        [i64::from(child), i64::from(stopped_status)]
    );
    assert_eq!(rep.ints("exited"), [i64::from(child), 0]);

    let stop = one(
        t.calls(libc::SYS_kill)
            .into_iter()
            .filter(|e| e.tid == child)
            .collect(),
        "the child's kill(self, SIGSTOP)",
    );
    assert_eq!(stop.args[..2], [u64::from(child), libc::SIGSTOP as u64]);
    assert_eq!(ret(stop), 0);
    let stopsig = one(
        t.signals()
            .into_iter()
            .filter(|s| s.signo == libc::SIGSTOP)
            .collect(),
        "SIGSTOP delivery",
    );
    assert_eq!((stopsig.tid, stopsig.sender), (child, child));
    assert!(stopsig.seq > stop.seq);

    // The SIGCHLD of the child's continuing may interrupt the second
    // wait4, which the kernel then restarts: both attempts are recorded.
    let waits = without_restarts(t.calls(libc::SYS_wait4));
    assert_eq!(waits.len(), 2);
    assert_eq!(waits[0].args[2], libc::WUNTRACED as u64);
    assert_eq!(ret(waits[0]), i64::from(child));
    assert_eq!(exit_data(waits[0], 1), stopped_status.to_le_bytes());
    assert_eq!(ret(waits[1]), i64::from(child));
    assert_eq!(exit_data(waits[1], 1), 0i32.to_le_bytes());

    let cont = one(
        t.calls(libc::SYS_kill)
            .into_iter()
            .filter(|e| e.tid == pid)
            .collect(),
        "the parent's kill(child, SIGCONT)",
    );
    assert_eq!(cont.args[..2], [u64::from(child), libc::SIGCONT as u64]);
    assert!(cont.seq > waits[0].seq);
    let contsig = one(
        t.signals()
            .into_iter()
            .filter(|s| s.signo == libc::SIGCONT)
            .collect(),
        "SIGCONT delivery",
    );
    assert_eq!((contsig.tid, contsig.sender), (child, pid));
    assert!(contsig.seq > cont.seq);
    // Stopped means stopped: the child made no call between the stop
    // and the SIGCONT.
    let next = t
        .syscalls()
        .filter(|e| e.tid == child && e.seq > stopsig.seq)
        .map(|e| e.seq)
        .min()
        .expect("the child's calls after the stop");
    assert!(next > contsig.seq, "the child ran before the SIGCONT");
    assert_eq!(t.exit_of(child).status, ExitStatus::Exited(0));
    assert_eq!(t.exit_of(pid).status, ExitStatus::Exited(0));
}

/// A child that outlives the recorded command is recorded to its end.
#[test]
fn orphan_outlives_the_command() {
    let case = Case::new();
    let (rec, rep) = case.run("orphan");
    let t = &rec.trace;
    let pid = t.root().tgid;
    let child = rep.int("child") as u32;
    assert_eq!(rec.summary.processes, 2);
    assert_eq!(t.start_of(child).cause, StartCause::Created);
    assert_eq!(t.exit_of(child).status, ExitStatus::Exited(5));
    assert!(
        t.exit_of(child).seq > t.exit_of(pid).seq,
        "the child ended last"
    );
    let late = in_dir(&case.work(), "late");
    let open = t.call_with_path(libc::SYS_open, 0, &late);
    assert_eq!(open.tid, child);
    let write = one(t.calls_on(libc::SYS_write, ret(open)), "the late write");
    assert_eq!(write.tid, child);
    assert_eq!(entry(write, 1), b"late");
    assert_eq!(ret(write), 4);
    assert_eq!(
        std::fs::read(case.work().join("late")).expect("late"),
        b"late"
    );
}

// ---------------------------------------------------------------------
// Data policies: max=N and none
// ---------------------------------------------------------------------

/// Records the files program with `policy`.
fn files_with(policy: DataPolicy) -> (Case, Recorded, Report) {
    let case = Case::new();
    let exe = case.build("files");
    let rec = case.record_with(
        Target::spawn(&[exe.into(), case.work().into()]).expect("files"),
        policy,
    );
    assert_eq!(rec.summary.root_status, Some(ExitStatus::Exited(0)));
    let rep = Report::read(&case.work().join("report"));
    (case, rec, rep)
}

/// Checks the summary's counts against the captures in the trace.
fn assert_counts_match(rec: &Recorded) {
    let count = |status| {
        rec.trace
            .syscalls()
            .flat_map(|e| &e.captures)
            .filter(|c| c.status == status)
            .count() as u64
    };
    assert_eq!(
        rec.summary.captures.truncated,
        count(CaptureStatus::Truncated)
    );
    assert_eq!(
        rec.summary.captures.unreadable,
        count(CaptureStatus::Unreadable)
    );
}

#[test]
fn data_policy_max() {
    let (case, rec, rep) = files_with(DataPolicy::Max(100));
    let t = &rec.trace;
    let fd = rep.int("fd");
    let writes = t.calls_on(libc::SYS_write, fd);
    assert_eq!(writes.len(), 4);
    let c = writes[0].capture(1, Role::Entry).expect("write capture");
    assert_eq!(c.status, CaptureStatus::Truncated);
    assert_eq!((c.len, c.captured), (4096, 100));
    assert_eq!(c.data.as_deref(), Some(&fill(4096, 1)[..100]));
    assert_eq!(entry(writes[1], 1), fill(100, 2), "exactly max: complete");
    assert_eq!(entry(writes[2], 1), fill(1, 3));
    let read = one(t.calls_on(libc::SYS_read, fd), "read");
    let c = read.capture(1, Role::Exit).expect("read capture");
    assert_eq!(c.status, CaptureStatus::Truncated);
    assert_eq!((c.len, c.captured), (5000, 100));
    assert_eq!(c.data.as_deref(), Some(&rep.hex("read_data")[..100]));
    // iovec elements are cut one by one.
    let readv = one(t.calls_on(libc::SYS_readv, fd), "readv");
    let (len, d0) = capture_elem(readv, 1, Role::Exit, 0);
    assert_eq!((len, d0), (100, rep.hex("readv_data0").as_slice()));
    for (elem, iov_len) in [(1, 200), (2, 50000)] {
        let c = readv
            .captures
            .iter()
            .find(|c| c.arg == 1 && c.role == Role::Exit && c.elem == elem)
            .expect("readv element");
        assert_eq!(c.status, CaptureStatus::Truncated);
        assert_eq!((c.len, c.captured), (iov_len, 100));
        assert_eq!(
            c.data.as_deref(),
            Some(&rep.hex(&format!("readv_data{elem}"))[..100])
        );
    }
    // Paths are never cut.
    let dir = case.work();
    let long_path = in_dir(&dir, "a.dat");
    assert!(long_path.len() > 20);
    t.call_with_path(libc::SYS_open, 0, &long_path);
    assert!(rec.summary.captures.truncated >= 6);
    assert_counts_match(&rec);
}

#[test]
fn data_policy_none() {
    let (case, rec, rep) = files_with(DataPolicy::None);
    let t = &rec.trace;
    let fd = rep.int("fd");
    for w in t.calls_on(libc::SYS_write, fd) {
        let c = w.capture(1, Role::Entry).expect("write capture");
        assert_eq!(c.status, CaptureStatus::Skipped);
        assert_eq!((c.len, c.captured), (w.args[2], 0));
    }
    let read = one(t.calls_on(libc::SYS_read, fd), "read");
    let c = read.capture(1, Role::Exit).expect("read capture");
    assert_eq!(c.status, CaptureStatus::Skipped);
    assert_eq!((c.len, c.captured), (5000, 0));
    let writev = one(t.calls_on(libc::SYS_writev, fd), "writev");
    for (elem, n) in [(0, 10), (1, 20), (2, 30)] {
        let c = writev
            .captures
            .iter()
            .find(|c| c.arg == 1 && c.elem == elem)
            .expect("writev element");
        assert_eq!(
            (c.status, c.len, c.captured),
            (CaptureStatus::Skipped, n, 0)
        );
    }
    // Paths are still captured in full.
    let open = t.call_with_path(libc::SYS_open, 0, &in_dir(&case.work(), "a.dat"));
    assert_eq!(ret(open), fd);
    assert_eq!(rec.summary.captures.truncated, 0);
    assert_counts_match(&rec);
}

// ---------------------------------------------------------------------
// Large and unreadable buffers, a child killed in a call
// ---------------------------------------------------------------------

#[test]
fn large_and_unreadable_buffers_and_sigkill() {
    const BIG: usize = 12 << 20;
    let case = Case::new();
    let (rec, rep) = case.run("edges");
    let t = &rec.trace;
    let pid = t.root().tgid;

    // 12 MiB each way, every byte.
    let fd = rep.int("fd");
    let big = fill(BIG, 41);
    let write = one(t.calls_on(libc::SYS_write, fd), "big write");
    assert_eq!(ret(write), BIG as i64);
    assert!(entry(write, 1) == big, "the 12 MiB written");
    let read = one(t.calls_on(libc::SYS_read, fd), "big read");
    assert_eq!(ret(read), BIG as i64);
    assert!(exit_data(read, 1) == big, "the 12 MiB read");

    // A buffer running into a PROT_NONE page: the readable part is kept
    // and the capture says it is incomplete.
    let g = rep.int("guard_fd");
    let [r, errno] = rep.ints("guard_write")[..] else {
        panic!("guard_write")
    };
    let gw = one(t.calls_on(libc::SYS_write, g), "write into the guard page");
    assert_eq!(ret(gw), if r < 0 { -errno } else { r });
    let c = gw
        .capture(1, Role::Entry)
        .expect("capture of the guarded buffer");
    assert_eq!(c.status, CaptureStatus::Unreadable);
    assert_eq!(c.len, 200);
    assert_eq!(c.captured, 100, "the readable bytes up to the guard page");
    assert_eq!(c.data.as_deref(), Some(fill(100, 42).as_slice()));
    assert_eq!(rec.summary.captures.unreadable, 1);

    // SIGKILL while blocked in read: the read was cut short (as the eBPF
    // back end records it, from the task's end), the exit says killed,
    // and (ptrace never sees SIGKILL) there is no signal record.
    let child = rep.int("child") as u32;
    let rd = rep.int("child_rd");
    let blocked = one(t.calls_on(libc::SYS_read, rd), "the child's read");
    assert_eq!(blocked.tid, child);
    assert_eq!(ret(blocked), -512, "ERESTARTSYS");
    assert_eq!(
        t.exit_of(child).status,
        ExitStatus::Killed {
            signal: libc::SIGKILL,
            core: false
        }
    );
    let kill = t.calls(libc::SYS_kill)[0];
    assert_eq!(kill.args[..2], [u64::from(child), libc::SIGKILL as u64]);
    assert!(t.signals().iter().all(|s| s.signo != libc::SIGKILL));
    let wait = t.calls(libc::SYS_wait4)[0];
    assert_eq!(ret(wait), i64::from(child));
    assert_eq!(exit_data(wait, 1), libc::SIGKILL.to_le_bytes());
    assert_eq!(
        rep.ints("wait"),
        [i64::from(child), i64::from(libc::SIGKILL)]
    );
    // SIGKILL inside a write that had moved part of its bytes: no exit
    // stop, but the write is recorded as returned, with what it wrote.
    let writer = rep.int("writer") as u32;
    let cut = one(
        t.calls_on(libc::SYS_write, rep.int("writer_fd")),
        "the killed writer's write",
    );
    assert_eq!(cut.tid, writer);
    let written = rep.int("written");
    assert!(written > 4096, "the write moved {written} bytes");
    assert_eq!(ret(cut), written);
    let part = ..written as usize;
    assert!(entry(cut, 1)[part] == fill(1 << 20, 44)[part]);

    // SIGKILL after stores into a shared mapping: they are captured as
    // the process ends, as at an exit_group.
    let mapper = rep.int("mapper") as u32;
    let at_end = one(
        t.calls(i64::from(catalogue::MAPPED_AT_EXIT))
            .into_iter()
            .filter(|e| e.tid == mapper)
            .collect(),
        "the killed mapper's mapping",
    );
    assert!(entry(at_end, 0) == fill(8192, 43));
    assert_eq!(rec.summary.mappings_at_exit, 0);

    assert_eq!(rec.summary.unfinished, 0);
    assert_eq!(t.exit_of(pid).status, ExitStatus::Exited(0));
}

// ---------------------------------------------------------------------
// Many processes, a stopped process, and errors
// ---------------------------------------------------------------------

/// Many children at once: each one started, exec'd and ended in the
/// trace, after the call that created it.
#[test]
fn many_concurrent_children() {
    const CHILDREN: usize = 64;
    let case = Case::new();
    let (rec, rep) = case.run("forkmany");
    let t = &rec.trace;
    let pid = t.root().tgid;
    assert_eq!(rec.summary.processes, 1 + CHILDREN as u64);
    assert_eq!(t.starts().len(), 1 + CHILDREN);
    assert_eq!(t.exits().len(), 1 + CHILDREN);
    for i in 0..CHILDREN {
        let child = rep.int(&format!("child{i}")) as u32;
        let start = t.start_of(child);
        assert_eq!(
            (start.cause, start.tgid, start.ppid),
            (StartCause::Created, child, pid)
        );
        let creator = creating_call(t, child);
        assert_eq!(creator.tid, pid);
        let first = t
            .records
            .iter()
            .filter(|r| r.tgid() == child)
            .map(Record::seq)
            .min()
            .expect("the child's records");
        assert!(creator.seq < first);
        let exec = exec_of(t, child);
        assert_eq!(
            str_array(exec, 1),
            [b"true".to_vec(), format!("child-{i}").into_bytes()]
        );
        assert_eq!(t.exit_of(child).status, ExitStatus::Exited(0));
    }
}

/// Attaching to a stopped process keeps it stopped until someone
/// continues it; it is then recorded to its end.
#[test]
fn attach_to_stopped_process() {
    let case = Case::new();
    let exe = case.build("ticker");
    let mut ticker = start_ticker(&case, &exe, 30, 1);
    let pid = ticker.pid;
    // SAFETY: kill has no memory effects.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGSTOP) }, 0);
    let state = move || {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
        let after = &stat[stat.rfind(')').expect("comm") + 2..];
        after.chars().next().expect("state")
    };
    wait_for("the ticker to stop", || state() == 'T');
    let continuer = std::thread::spawn(move || {
        wait_for("the recorder to attach", || tracer_of(pid) != 0);
        // A traced process in group-stop shows 't'.
        wait_for("the stop to be reported", || state() == 't');
        std::thread::sleep(Duration::from_millis(100));
        let stopped = state();
        // SAFETY: as above.
        assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGCONT) }, 0);
        stopped
    });
    let rec = case.record(Target::Attach {
        pids: vec![pid as i32],
    });
    assert_eq!(
        continuer.join().expect("continuer"),
        't',
        "still stopped 100 ms after the attach"
    );
    ticker.ended();
    let t = &rec.trace;
    let cont = one(
        t.signals()
            .into_iter()
            .filter(|s| s.signo == libc::SIGCONT)
            .collect(),
        "SIGCONT delivery",
    );
    assert_eq!(cont.sender, std::process::id());
    let writes = t.calls_on(libc::SYS_write, ticker.fd);
    assert!(!writes.is_empty());
    assert!(
        writes.iter().all(|w| w.seq > cont.seq),
        "no write before the SIGCONT"
    );
    let (_, last) = check_ticks(t, &ticker, false);
    assert_eq!(last, [29]);
    assert_eq!(t.exit_of(pid).status, ExitStatus::Exited(0));
}

/// Errors come back before anything runs.
#[test]
fn spawn_and_attach_errors() {
    let case = Case::new();
    assert!(matches!(
        Target::spawn(&["reanimator-no-such-command-xyz".into()]),
        Err(reanimator_ptrace::Error::NotFound(_))
    ));
    assert!(matches!(
        Target::spawn(&[]),
        Err(reanimator_ptrace::Error::NoCommand)
    ));
    assert!(matches!(
        Target::spawn(&["sh".into(), "a\0b".into()]),
        Err(reanimator_ptrace::Error::Nul)
    ));
    // A process id that does not exist (beyond pid_max).
    let mut w = Writer::create(
        &case.trace_path(),
        &TraceMeta::default(),
        WriterOptions::default(),
    )
    .expect("writer");
    let err = record(
        &Target::Attach {
            pids: vec![i32::MAX],
        },
        DataPolicy::All,
        &[],
        SnapshotPolicy::Contents,
        &mut w,
    )
    .expect_err("attach to a missing process");
    assert!(
        matches!(err, reanimator_ptrace::Error::Attach(p, _) if p == i32::MAX),
        "{err}"
    );
}

// ---------------------------------------------------------------------
// Linux AIO
// ---------------------------------------------------------------------

#[test]
fn linux_aio_requests_and_completions() {
    use reanimator_catalogue::aio;
    let case = Case::new();
    let (rec, rep) = case.run("aio");
    let t = &rec.trace;
    let fd = rep.int("fd") as i32;
    let setup = one(t.calls(libc::SYS_io_setup), "io_setup");
    assert_eq!(ret(setup), 0);
    let ctx = u64_at(exit_data(setup, 1), 0);
    let submits = t.calls(libc::SYS_io_submit);
    assert_eq!(submits.len(), 4);
    for s in &submits {
        assert_eq!(s.args[0], ctx);
    }

    // Writes: the pointer array, each iocb, and the data of each write,
    // at entry.
    let w = submits[0];
    assert_eq!(ret(w), rep.int("submit_writes"));
    let ptrs = entry(w, 2);
    assert_eq!(ptrs.len(), 3 * 8);
    let cb = |e: &SyscallEvent, i: u64| {
        aio::Iocb::parse(capture_elem(e, 2, Role::Entry, aio::elem(i, 0)).1).unwrap()
    };
    let ops: Vec<(u16, i32, u64)> = (0..3)
        .map(|i| cb(w, i))
        .map(|c| (c.opcode, c.fd, c.data))
        .collect();
    assert_eq!(
        ops,
        [
            (aio::PWRITE, fd, 100),
            (aio::PWRITEV, fd, 101),
            (aio::FDSYNC, fd, 102)
        ]
    );
    assert_eq!(
        capture_elem(w, 2, Role::Entry, aio::elem(0, 1)).1,
        fill(8192, 1)
    );
    assert_eq!(
        capture_elem(w, 2, Role::Entry, aio::elem(1, 1)).1,
        fill(3000, 2)
    );
    assert_eq!(
        capture_elem(w, 2, Role::Entry, aio::elem(1, 2)).1,
        fill(5192, 3)
    );

    // Reads: at entry the PREADV's element lengths with no bytes; at
    // io_getevents' exit the events and the bytes each read brought in,
    // a short read spread over the elements in order.
    let r = submits[1];
    assert_eq!(ret(r), rep.int("submit_reads"));
    assert_eq!(
        capture_elem(r, 2, Role::Entry, aio::elem(1, 1)),
        (100, &[][..])
    );
    assert_eq!(
        capture_elem(r, 2, Role::Entry, aio::elem(1, 2)),
        (20000, &[][..])
    );
    let gets = t.calls(libc::SYS_io_getevents);
    let mut events = HashMap::new();
    for g in &gets {
        let Some(arr) = g.captures.iter().find(|c| c.arg == 3 && c.elem == 0) else {
            assert!(ret(g) <= 0);
            continue;
        };
        let list: Vec<aio::Event> = aio::events(arr.data.as_deref().unwrap()).collect();
        assert_eq!(list.len() as i64, ret(g));
        for (i, e) in list.iter().enumerate() {
            assert_eq!(rep.int(&format!("event_{}", e.data)), e.res);
            events.insert(e.data, (*g, i as u64));
        }
    }
    assert_eq!(events.len(), 5);
    let (g, i) = events[&103];
    assert_eq!(
        capture_elem(g, 3, Role::Exit, aio::elem(i, 1)).1,
        rep.hex("pread")
    );
    let (g, i) = events[&104];
    assert_eq!(
        capture_elem(g, 3, Role::Exit, aio::elem(i, 1)).1,
        rep.hex("preadv_0")
    );
    let (len, data) = capture_elem(g, 3, Role::Exit, aio::elem(i, 2));
    assert_eq!((len, data), (20000, &rep.hex("preadv_1")[..]));

    // A failed submission still shows what it asked for.
    let bad = submits[2];
    assert_eq!(ret(bad), -i64::from(libc::EBADF));
    assert_eq!(cb(bad, 0).fd, 9999);
    assert_eq!(ret(submits[3]), 0);
    assert!(!has_capture(submits[3], 2, Role::Entry));
    assert_eq!(ret(one(t.calls(libc::SYS_io_destroy), "io_destroy")), 0);
}

/// io_uring: the requests each `io_uring_enter` hands the kernel, read
/// from the ring the program mapped, with every write's data; the
/// completions posted since the last look, with every read's data, even
/// one the program took from the ring with no call.
#[test]
fn io_uring_requests_and_completions() {
    use reanimator_catalogue::uring::{self, Cqe, Sqe};
    let case = Case::new();
    let (rec, rep) = case.run("uring");
    let t = &rec.trace;
    let fd = rep.int("fd") as i32;
    let setup = one(t.calls(libc::SYS_io_uring_setup), "io_uring_setup");
    assert_eq!(ret(setup), rep.int("ring"));
    let params = uring::Params::parse(exit_data(setup, 1)).unwrap();
    assert_eq!(params.sq_entries, 8);
    let enters = t.calls(libc::SYS_io_uring_enter);
    assert_eq!(enters.len(), 5, "one io_uring_enter per batch");
    let sqes = |e: &SyscallEvent| -> Vec<Sqe> { Sqe::all(entry(e, 1)).collect() };
    // A call that saw no new completion has no capture.
    let cqes = |e: &SyscallEvent| -> Vec<Cqe> {
        let c = e
            .captures
            .iter()
            .find(|c| c.arg == 2 && c.role == Role::Exit && c.elem == 0);
        c.map_or(Vec::new(), |c| {
            Cqe::all(c.data.as_deref().unwrap()).collect()
        })
    };

    // Writes: each SQE and the data of each write, at entry.
    let w = enters[0];
    assert_eq!(ret(w), rep.int("submit_writes"));
    let ops: Vec<(u8, i32, u64)> = sqes(w)
        .iter()
        .map(|s| (s.opcode, s.fd, s.user_data))
        .collect();
    assert_eq!(
        ops,
        [(uring::OP_WRITE, fd, 100), (uring::OP_WRITEV, fd, 101)]
    );
    assert_eq!(
        capture_elem(w, 1, Role::Entry, uring::elem(0, 1)).1,
        fill(8192, 1)
    );
    assert_eq!(
        capture_elem(w, 1, Role::Entry, uring::elem(1, 1)).1,
        fill(3000, 2)
    );
    assert_eq!(
        capture_elem(w, 1, Role::Entry, uring::elem(1, 2)).1,
        fill(5192, 3)
    );

    // Completions, each as the program saw it, each seen once.
    let mut seen = HashMap::new();
    for e in &enters {
        for (i, c) in cqes(e).iter().enumerate() {
            assert_eq!(i64::from(c.res), rep.int(&format!("cqe_{}", c.user_data)));
            assert!(
                seen.insert(c.user_data, (*e, i as u64)).is_none(),
                "{} twice",
                c.user_data
            );
        }
    }
    let mut ids: Vec<u64> = seen.keys().copied().collect();
    ids.sort();
    assert_eq!(ids, (100..=107).collect::<Vec<u64>>());

    // Reads: the READV's element lengths at entry, with no bytes; the
    // bytes each read brought in at the exit that saw its completion, a
    // short read spread over the elements in order.
    let r = enters[1];
    assert_eq!(ret(r), rep.int("submit_reads"));
    assert_eq!(
        capture_elem(r, 1, Role::Entry, uring::elem(2, 1)),
        (100, &[][..])
    );
    assert_eq!(
        capture_elem(r, 1, Role::Entry, uring::elem(2, 2)),
        (20000, &[][..])
    );
    let (e, i) = seen[&103];
    assert_eq!(
        capture_elem(e, 2, Role::Exit, uring::elem(i, 1)).1,
        rep.hex("read")
    );
    let (e, i) = seen[&104];
    assert_eq!(
        capture_elem(e, 2, Role::Exit, uring::elem(i, 1)).1,
        rep.hex("readv_0")
    );
    let (len, data) = capture_elem(e, 2, Role::Exit, uring::elem(i, 2));
    assert_eq!((len, data), (20000, &rep.hex("readv_1")[..]));

    // The request on a bad descriptor is taken; its completion fails.
    let bad = sqes(enters[4]);
    assert_eq!((bad[0].opcode, bad[0].fd), (uring::OP_READ, 999));
    assert_eq!(rep.int("cqe_107"), -i64::from(libc::EBADF));
    assert_eq!(rec.summary.captures.unreadable, 0);
}

/// A shared writable mapping whose process tried `execve`, failed, and was
/// then killed: its stores after the capture at the `execve` are captured
/// again as it ends (the recorder once read the call's number from the
/// exit stop, which holds the return value, and never saw the `execve`
/// fail).
#[test]
fn a_failed_execve_leaves_shared_mappings_to_count_when_killed() {
    let case = Case::new();
    let file = case.work().join("m.dat");
    std::fs::write(&file, [0u8; 4096]).unwrap();
    let script = format!(
        "import mmap, os\n\
         f = open({file:?}, 'r+b')\n\
         m = mmap.mmap(f.fileno(), 4096)\n\
         m[0:1] = b'x'\n\
         try:\n    os.execv('/nonexistent', ['x'])\n\
         except OSError:\n    pass\n\
         m[1:2] = b'y'\n\
         os.kill(os.getpid(), 9)\n"
    );
    let rec = case.record_cmd(&["python3".into(), "-c".into(), script.into()]);
    assert_eq!(
        rec.summary.root_status,
        Some(ExitStatus::Killed {
            signal: 9,
            core: false
        })
    );
    let failed = rec
        .trace
        .call_with_path(libc::SYS_execve, 0, b"/nonexistent");
    assert_eq!(ret(failed), -i64::from(libc::ENOENT));
    // Captured when the signal ended the process, with the store made
    // after the failed execve.
    let at_end = rec.trace.calls(i64::from(catalogue::MAPPED_AT_EXIT));
    let last = at_end.last().expect("a capture of the mapping");
    assert_eq!(&entry(last, 0)[..2], b"xy");
    assert_eq!(rec.summary.mappings_at_exit, 0);
}
