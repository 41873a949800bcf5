//! Replay of hand-written traces: confinement against hostile paths,
//! verification that can fail, and descriptor emulation. Each trace is
//! built with the trace writer, so the oracle is exactly what was written.

use std::path::{Path, PathBuf};

use reanimator_fsstate::Root;
use reanimator_replay::{replay, Options, OrderPolicy, Progress, Report};
use reanimator_trace::*;

/// Builds a single-process trace call by call.
struct Script {
    records: Vec<Record>,
    seq: u64,
    t: u64,
}

const PID: u32 = 4242;

impl Script {
    fn new(cwd: &str) -> Self {
        let start = Record::ProcessStart(ProcessStart {
            seq: 1,
            time_ns: 1_000,
            tgid: PID,
            tid: PID,
            cause: StartCause::Spawned,
            // SAFETY: geteuid cannot fail.
            euid: unsafe { libc::geteuid() },
            umask: 0o022,
            cwd: cwd.as_bytes().to_vec(),
            ..ProcessStart::default()
        });
        Script {
            records: vec![start],
            seq: 1,
            t: 1_000,
        }
    }

    /// Appends a call: `name`, raw args, return value, captures as
    /// (arg, role, bytes).
    fn call(
        &mut self,
        name: &str,
        args: &[u64],
        ret: i64,
        caps: &[(u8, Role, &[u8])],
    ) -> &mut Self {
        self.seq += 1;
        self.t += 1_000;
        let mut a = [0u64; 6];
        a[..args.len()].copy_from_slice(args);
        self.records.push(Record::Syscall(SyscallEvent {
            seq: self.seq,
            tgid: PID,
            tid: PID,
            nr: reanimator_catalogue::by_name(name).expect(name).nr,
            enter_ns: self.t,
            args: a,
            exit: Some(SyscallExit {
                exit_ns: self.t + 500,
                ret,
                is_error: ret < 0,
            }),
            captures: caps
                .iter()
                .map(|&(arg, role, d)| Capture {
                    arg,
                    role,
                    elem: 0,
                    status: CaptureStatus::Complete,
                    len: d.len() as u64,
                    captured: d.len() as u64,
                    data: Some(Bytes::copy_from_slice(d)),
                })
                .collect(),
        }));
        self
    }

    /// Makes the last call thread `tid`'s, entered and ended at the given
    /// times.
    fn by(&mut self, tid: u32, enter_ns: u64, exit_ns: u64) -> &mut Self {
        if let Some(Record::Syscall(e)) = self.records.last_mut() {
            e.tid = tid;
            e.enter_ns = enter_ns;
            if let Some(x) = e.exit.as_mut() {
                x.exit_ns = exit_ns;
            }
        }
        self
    }

    /// Appends a `clone` that makes thread `tid` of the process, and the
    /// thread's start record, as the recorders write them.
    fn thread(&mut self, tid: u32) -> &mut Self {
        let flags = (libc::CLONE_VM
            | libc::CLONE_FS
            | libc::CLONE_FILES
            | libc::CLONE_SIGHAND
            | libc::CLONE_THREAD) as u64;
        self.call("clone", &[flags, P, P, P, P], i64::from(tid), &[]);
        self.seq += 1;
        self.records.push(Record::ProcessStart(ProcessStart {
            seq: self.seq,
            time_ns: self.t + 400,
            tgid: PID,
            tid,
            cause: StartCause::Created,
            ppid: PID,
            cwd: b"/".to_vec(),
            ..ProcessStart::default()
        }));
        self
    }

    /// Appends `pipe2(flags)` that made descriptors 3 (read end) and 4
    /// (write end).
    fn pipe(&mut self, flags: i32) -> &mut Self {
        let fds: Vec<u8> = [3i32, 4].iter().flat_map(|f| f.to_le_bytes()).collect();
        self.call("pipe2", &[P, flags as u64], 0, &[(0, Role::Exit, &fds)])
    }

    /// Gives the last `n` calls the ids `ids` (records come in completion
    /// order, ids in entry order).
    fn renumber(&mut self, ids: &[u64]) -> &mut Self {
        let n = self.records.len();
        for (r, &id) in self.records[n - ids.len()..].iter_mut().zip(ids) {
            if let Record::Syscall(e) = r {
                e.seq = id;
            }
        }
        self
    }

    fn write(&self, path: &Path) {
        let mut w = Writer::create(path, &TraceMeta::default(), WriterOptions::default()).unwrap();
        for r in &self.records {
            w.write(r).unwrap();
        }
        w.finish().unwrap();
    }
}

const AT_FDCWD: u64 = -100i64 as u64;
const P: u64 = 0x1000; // a traced pointer value: never dereferenced by replay

fn run(script: &Script, root: &Path) -> (Report, Vec<String>) {
    run_with(script, root, &Options::default())
}

fn run_with(script: &Script, root: &Path, opts: &Options) -> (Report, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.rtr");
    script.write(&trace);
    let root = Root::open(root).unwrap();
    let lines = std::sync::Mutex::new(Vec::new());
    let report = replay(&trace, &root, opts, &Progress::default(), &|l| {
        lines.lock().unwrap().push(l)
    })
    .unwrap();
    (report, lines.into_inner().unwrap())
}

/// Every file under `dir`, recursively.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() && !p.is_symlink() {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn a_plain_trace_replays_with_no_mismatch() {
    let root = tempfile::tempdir().unwrap();
    let mut s = Script::new("/work");
    let o_creat = (libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC) as u64;
    s.call("mkdir", &[P, 0o755], 0, &[(0, Role::Entry, b"/work")])
        .call(
            "openat",
            &[AT_FDCWD, P, o_creat, 0o644],
            3,
            &[(1, Role::Entry, b"f.txt")],
        )
        .call("write", &[3, P, 5], 5, &[(1, Role::Entry, b"hello")])
        .call("pwrite64", &[3, P, 3, 10], 3, &[(1, Role::Entry, b"abc")])
        .call("dup", &[3], 7, &[])
        .call("close", &[3], 0, &[])
        .call("lseek", &[7, 0, 0], 0, &[])
        .call("close", &[7], 0, &[])
        .call("close", &[7], -(libc::EBADF as i64), &[])
        .call(
            "openat",
            &[AT_FDCWD, P, libc::O_RDONLY as u64, 0],
            3,
            &[(1, Role::Entry, b"/work/f.txt")],
        )
        .call(
            "read",
            &[3, P, 100],
            13,
            &[(1, Role::Exit, b"hello\0\0\0\0\0abc")],
        )
        .call("read", &[3, P, 100], 0, &[])
        .call(
            "unlink",
            &[P],
            -(libc::ENOENT as i64),
            &[(0, Role::Entry, b"nothere")],
        )
        // Refused before anything is closed (Python's subprocess asks this
        // when no descriptor lies between two it keeps).
        .call("close_range", &[5, 4, 0], -(libc::EINVAL as i64), &[])
        // A bad buffer address: the call did nothing, and is not issued.
        .call("write", &[3, P, 5], -(libc::EFAULT as i64), &[]);
    let (report, lines) = run(&s, root.path());
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(
        std::fs::read(root.path().join("work/f.txt")).unwrap(),
        b"hello\0\0\0\0\0abc"
    );
    let t = report.tally.total();
    assert!(t.executed >= 8, "{}", report.table());
}

/// A final `.` or `..` names a directory, never a link: calls that do not
/// follow a final link (`ls -la d` does `lgetxattr("d/..")`) look it up,
/// and calls that would change the entry refuse it as the kernel did.
#[test]
fn a_final_dot_or_dot_dot_is_looked_up_inside_the_root() {
    let root = tempfile::tempdir().unwrap();
    let errno = |e: i32| -i64::from(e);
    let mut s = Script::new("/");
    s.call("mkdir", &[P, 0o755], 0, &[(0, Role::Entry, b"/d")]);
    for path in [&b"/d/.."[..], b"/d/.", b"d/../", b"/../..", b"/"] {
        s.call(
            "lgetxattr",
            &[P, P, P, 0],
            errno(libc::ENODATA),
            &[(0, Role::Entry, path), (1, Role::Entry, b"user.none")],
        );
    }
    s.call(
        "mkdir",
        &[P, 0o755],
        errno(libc::EEXIST),
        &[(0, Role::Entry, b"/d/..")],
    )
    .call(
        "unlink",
        &[P],
        errno(libc::EISDIR),
        &[(0, Role::Entry, b"/d/.")],
    )
    .call(
        "rmdir",
        &[P],
        errno(libc::EINVAL),
        &[(0, Role::Entry, b"/d/.")],
    );
    // A trailing slash: the entry must be a directory, and a final link
    // is followed (here to the root itself, not the host's /).
    s.call("mkdir", &[P, 0o755], 0, &[(0, Role::Entry, b"/e/")])
        .call("rmdir", &[P], 0, &[(0, Role::Entry, b"e/")])
        .call(
            "symlink",
            &[P, P],
            0,
            &[(0, Role::Entry, b"/"), (1, Role::Entry, b"/up")],
        )
        .call(
            "lgetxattr",
            &[P, P, P, 0],
            errno(libc::ENODATA),
            &[(0, Role::Entry, b"/up/"), (1, Role::Entry, b"user.none")],
        )
        .call("unlink", &[P], 0, &[(0, Role::Entry, b"/up")]);
    let (report, lines) = run(&s, root.path());
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(report.tally.total().executed, 14, "{}", report.table());
    assert!(root.path().join("d").is_dir());
    assert!(!root.path().join("e").exists());
}

/// Descriptors replay does not open for real (a device, a socket) keep
/// the close-on-exec flag they were created with (perl asks `F_GETFD` of
/// its `/dev/urandom`).
#[test]
fn simulated_descriptors_keep_their_close_on_exec_flag() {
    let root = tempfile::tempdir().unwrap();
    let cloexec = libc::O_CLOEXEC as u64;
    let mut s = Script::new("/");
    s.call(
        "openat",
        &[AT_FDCWD, P, libc::O_RDONLY as u64 | cloexec, 0],
        3,
        &[(1, Role::Entry, b"/dev/urandom")],
    )
    .call("fcntl", &[3, libc::F_GETFD as u64], 1, &[])
    .call(
        "socket",
        &[libc::AF_UNIX as u64, libc::SOCK_STREAM as u64 | cloexec],
        4,
        &[],
    )
    .call("fcntl", &[4, libc::F_GETFD as u64], 1, &[])
    .call(
        "socket",
        &[libc::AF_UNIX as u64, libc::SOCK_STREAM as u64],
        5,
        &[],
    )
    .call("fcntl", &[5, libc::F_GETFD as u64], 0, &[]);
    let (report, lines) = run(&s, root.path());
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
}

/// Writes `hello` to `/data` (descriptor 3) and reads back `hellX`, as
/// if the trace's buffer were corrupted: one mismatch.
fn corrupted_read() -> Script {
    let mut s = Script::new("/");
    let o_creat = (libc::O_RDWR | libc::O_CREAT) as u64;
    s.call(
        "open",
        &[P, o_creat, 0o600],
        3,
        &[(0, Role::Entry, b"/data")],
    )
    .call("write", &[3, P, 5], 5, &[(1, Role::Entry, b"hello")])
    .call("pread64", &[3, P, 5, 0], 5, &[(1, Role::Exit, b"hellX")]);
    s
}

#[test]
fn a_corrupted_buffer_is_reported_as_a_mismatch() {
    let root = tempfile::tempdir().unwrap();
    let s = corrupted_read();
    let (report, lines) = run(&s, root.path());
    assert_eq!(report.tally.total().mismatched, 1, "{}", report.table());
    assert!(!report.is_clean());
    assert!(
        lines[0].contains("pread64") && lines[0].contains("differs at byte 4"),
        "{lines:?}"
    );
}

#[test]
fn a_hostile_trace_touches_nothing_outside_the_root() {
    let outside = tempfile::tempdir().unwrap();
    let sentinel = outside.path().join("sentinel");
    std::fs::write(&sentinel, b"untouched").unwrap();
    let before = listing(outside.path());
    let root = tempfile::tempdir().unwrap();
    let out = outside.path().to_str().unwrap().to_string();
    // The outside directory's name also exists inside the root, so the
    // confined calls succeed there and show where they landed.
    let mirror = root.path().join(out.trim_start_matches('/'));
    std::fs::create_dir_all(&mirror).unwrap();
    let sentinel_s = sentinel.to_str().unwrap().to_string();
    let o_creat = (libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC) as u64;
    let mut s = Script::new("/");
    // Climbing out with `..`, and naming the outside directly.
    let climb = format!("../../../../..{sentinel_s}");
    let made = format!("{out}/made-by-replay");
    s.call(
        "open",
        &[P, o_creat, 0o644],
        3,
        &[(0, Role::Entry, climb.as_bytes())],
    )
    .call("write", &[3, P, 5], 5, &[(1, Role::Entry, b"pwned")])
    .call("close", &[3], 0, &[])
    .call(
        "open",
        &[P, o_creat, 0o644],
        3,
        &[(0, Role::Entry, made.as_bytes())],
    )
    .call("close", &[3], 0, &[])
    .call(
        "truncate",
        &[P, 0],
        0,
        &[(0, Role::Entry, sentinel_s.as_bytes())],
    )
    .call(
        "unlink",
        &[P],
        0,
        &[(0, Role::Entry, sentinel_s.as_bytes())],
    );
    // A symlink to / and paths through it.
    s.call(
        "symlink",
        &[P, P],
        0,
        &[(0, Role::Entry, b"/"), (1, Role::Entry, b"/up")],
    );
    let via = format!("/up{sentinel_s}");
    s.call(
        "open",
        &[P, o_creat, 0o644],
        3,
        &[(0, Role::Entry, via.as_bytes())],
    )
    .call("close", &[3], 0, &[])
    .call("chmod", &[P, 0o777], 0, &[(0, Role::Entry, via.as_bytes())])
    .call(
        "rename",
        &[P, P],
        0,
        &[
            (0, Role::Entry, via.as_bytes()),
            (1, Role::Entry, b"/stolen"),
        ],
    );
    // A symlink to the outside directory itself, then files through it.
    s.call(
        "symlink",
        &[P, P],
        0,
        &[(0, Role::Entry, out.as_bytes()), (1, Role::Entry, b"/door")],
    )
    .call(
        "mkdir",
        &[P, 0o755],
        0,
        &[(0, Role::Entry, b"/door/newdir")],
    )
    .call(
        "open",
        &[P, o_creat, 0o644],
        3,
        &[(0, Role::Entry, b"/door/newfile")],
    )
    .call("close", &[3], 0, &[]);
    // A directory that becomes a symlink between two calls.
    s.call("mkdir", &[P, 0o755], 0, &[(0, Role::Entry, b"/d")])
        .call(
            "open",
            &[P, o_creat, 0o644],
            3,
            &[(0, Role::Entry, b"/d/f")],
        )
        .call("close", &[3], 0, &[])
        .call("unlink", &[P], 0, &[(0, Role::Entry, b"/d/f")])
        .call("rmdir", &[P], 0, &[(0, Role::Entry, b"/d")])
        .call(
            "symlink",
            &[P, P],
            0,
            &[(0, Role::Entry, out.as_bytes()), (1, Role::Entry, b"/d")],
        )
        .call(
            "open",
            &[P, o_creat, 0o644],
            3,
            &[(0, Role::Entry, b"/d/raced")],
        )
        .call("write", &[3, P, 5], 5, &[(1, Role::Entry, b"pwned")])
        .call("close", &[3], 0, &[]);
    // Climbing out of a working directory removed while in use: replay
    // holds the removed directory, and `..` past it goes by name.
    let from_removed = format!("..{out}/from-removed");
    s.call("mkdir", &[P, 0o755], 0, &[(0, Role::Entry, b"/gone")])
        .call("chdir", &[P], 0, &[(0, Role::Entry, b"/gone")])
        .call("rmdir", &[P], 0, &[(0, Role::Entry, b"/gone")])
        .call(
            "open",
            &[P, o_creat, 0o644],
            3,
            &[(0, Role::Entry, climb.as_bytes())],
        )
        .call("write", &[3, P, 5], 5, &[(1, Role::Entry, b"pwned")])
        .call("close", &[3], 0, &[])
        .call(
            "open",
            &[P, o_creat, 0o644],
            3,
            &[(0, Role::Entry, from_removed.as_bytes())],
        )
        .call("close", &[3], 0, &[])
        .call("chdir", &[P], 0, &[(0, Role::Entry, b"/")]);
    // A device node would reach the host's disks (8:0 is sda), and then
    // a write through it.
    s.call(
        "mknod",
        &[P, (libc::S_IFBLK | 0o600) as u64, 0x800],
        0,
        &[(0, Role::Entry, b"/disk")],
    )
    .call(
        "open",
        &[P, libc::O_WRONLY as u64, 0],
        4,
        &[(0, Role::Entry, b"/disk")],
    )
    .call("write", &[4, P, 5], 5, &[(1, Role::Entry, b"pwned")])
    .call("close", &[4], 0, &[]);
    let (report, _lines) = run(&s, root.path());
    assert_eq!(std::fs::read(&sentinel).unwrap(), b"untouched");
    assert_eq!(
        listing(outside.path()),
        before,
        "nothing appears outside the root"
    );
    // Root makes it inert (0:0, which no driver serves); others do not
    // make it at all.
    if let Ok(disk) = std::fs::symlink_metadata(root.path().join("disk")) {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        assert!(disk.file_type().is_block_device(), "{disk:?}");
        assert_eq!(disk.rdev(), 0, "the device node reaches no device");
    }
    // Inside the root, the calls landed where the kernel resolved them.
    assert!(mirror.join("made-by-replay").exists());
    assert!(mirror.join("newdir").is_dir());
    assert!(mirror.join("newfile").exists());
    assert_eq!(std::fs::read(mirror.join("raced")).unwrap(), b"pwned");
    assert!(mirror.join("from-removed").exists());
    assert_eq!(std::fs::read(mirror.join("sentinel")).unwrap(), b"pwned");
    assert!(std::fs::symlink_metadata(root.path().join("up"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(report.tally.total().executed > 10, "{}", report.table());
}

#[test]
fn a_read_waiting_for_data_that_never_comes_does_not_hang() {
    // The trace says the pipe delivered 5 bytes, but no call writes them
    // (a damaged or inconsistent trace): replay must report it, not block.
    let root = tempfile::tempdir().unwrap();
    let mut s = Script::new("/");
    let fds: Vec<u8> = [3i32, 4].iter().flat_map(|f| f.to_le_bytes()).collect();
    s.call("pipe2", &[P, 0], 0, &[(0, Role::Exit, &fds)]);
    // Once one call was given up, the next ones give up sooner: thousands
    // of them waiting 10 s each would be a hang too.
    for _ in 0..3 {
        s.call("read", &[3, P, 5], 5, &[(1, Role::Exit, b"hello")]);
    }
    s.call("close", &[4], 0, &[])
        .call("read", &[3, P, 5], 0, &[]);
    let (report, lines) = run(&s, root.path());
    assert_eq!(
        report.tally.total().mismatched,
        3,
        "{lines:?}\n{}",
        report.table()
    );
    assert!(
        lines[0].contains("stayed empty for 10.0 s while replay stood still"),
        "{lines:?}"
    );
    // Who held the pipe open, for the reader of the report.
    assert!(
        lines[0].contains("(its write end is open in process ") && lines[0].contains(" as 4)"),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("stayed empty for 0.5 s while replay stood still"),
        "{lines:?}"
    );
    assert!(
        lines[2].contains("stayed empty for 0.5 s while replay stood still"),
        "{lines:?}"
    );
}

#[test]
fn a_read_of_a_non_blocking_pipe_waits_for_the_rest_of_its_bytes() {
    // A thread reads 6 bytes from a non-blocking pipe (libuv, as in
    // cmake): 3 were written before the read, 3 by a write that ended
    // while it ran. Replayed in original timing, the read comes before
    // that write, gets 3 bytes and then EAGAIN; it must wait for the
    // rest instead of returning short (which misaligned every later read).
    let root = tempfile::tempdir().unwrap();
    let mut s = Script::new("/");
    s.pipe(libc::O_NONBLOCK);
    const CHILD: u32 = PID + 1;
    s.thread(CHILD);
    let ms = 1_000_000;
    s.call("write", &[4, P, 3], 3, &[(1, Role::Entry, b"abc")])
        .by(CHILD, 10 * ms, 11 * ms);
    // Records come in completion order, ids in entry order.
    s.call("write", &[4, P, 3], 3, &[(1, Role::Entry, b"def")])
        .by(CHILD, 200 * ms, 201 * ms);
    s.call("read", &[3, P, 100], 6, &[(1, Role::Exit, b"abcdef")])
        .by(PID, 20 * ms, 220 * ms);
    let last = s.seq;
    s.renumber(&[last, last - 1]);
    let opts = Options {
        timing: reanimator_replay::Timing::Scaled(1.0),
        ..Options::default()
    };
    let (report, lines) = run_with(&s, root.path(), &opts);
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(report.tally.calls["read"].executed, 1, "{}", report.table());
}

#[test]
fn an_open_that_outlived_another_threads_open_and_close_of_its_number_keeps_it() {
    // A JVM's threads, as ptrace recorded them: thread A's open returned
    // 3 over [10, 50] ms; meanwhile thread B opened 3 over [20, 25], read
    // it and closed it. Strict order runs A's open first (it began first);
    // B's open, read and close must still reach B's file, and A's later
    // read A's.
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a"), "A").unwrap();
    std::fs::write(root.path().join("b"), "B").unwrap();
    let mut s = Script::new("/");
    const A: u32 = PID + 1;
    s.thread(A);
    let ms = 1_000_000;
    let base = s.seq;
    let ro = libc::O_RDONLY as u64;
    s.call("openat", &[AT_FDCWD, P, ro], 3, &[(1, Role::Entry, b"b")])
        .by(PID, 20 * ms, 25 * ms);
    s.call("read", &[3, P, 10], 1, &[(1, Role::Exit, b"B")])
        .by(PID, 30 * ms, 31 * ms);
    s.call("close", &[3], 0, &[]).by(PID, 35 * ms, 36 * ms);
    s.call("openat", &[AT_FDCWD, P, ro], 3, &[(1, Role::Entry, b"a")])
        .by(A, 10 * ms, 50 * ms);
    s.call("read", &[3, P, 10], 1, &[(1, Role::Exit, b"A")])
        .by(A, 60 * ms, 61 * ms);
    s.call("close", &[3], 0, &[]).by(A, 70 * ms, 71 * ms);
    s.renumber(&[base + 2, base + 3, base + 4, base + 1, base + 5, base + 6]);
    for order in [
        OrderPolicy::Strict,
        OrderPolicy::Overlap,
        OrderPolicy::Commute,
    ] {
        let opts = Options {
            order,
            ..Options::default()
        };
        let (report, lines) = run_with(&s, root.path(), &opts);
        assert!(
            report.is_clean(),
            "{order:?}: {lines:?}\n{}",
            report.table()
        );
        assert_eq!(report.tally.calls["read"].executed, 2, "{}", report.table());
    }
}

/// One `linux_dirent64` record.
fn dirent(name: &str, ty: u8) -> Vec<u8> {
    let reclen = (19 + name.len() + 1 + 7) & !7;
    let mut d = Vec::with_capacity(reclen);
    d.extend_from_slice(&1u64.to_le_bytes());
    d.extend_from_slice(&1i64.to_le_bytes());
    d.extend_from_slice(&(reclen as u16).to_le_bytes());
    d.push(ty);
    d.extend_from_slice(name.as_bytes());
    d.resize(reclen, 0);
    d
}

#[test]
fn a_directory_stream_a_signal_cut_into_more_calls_replays_clean() {
    // Recorded (Go, whose preemption signal cut the first call short):
    // getdents64 returned ".", then ".." and "f", then 0. Replay gets all
    // three at once and then 0 twice; the streams hold the same entries.
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("d")).unwrap();
    std::fs::write(root.path().join("d/f"), "x").unwrap();
    let (dir, file) = (libc::DT_DIR, libc::DT_REG);
    let first = dirent(".", dir);
    let rest = [dirent("..", dir), dirent("f", file)].concat();
    let mut s = Script::new("/");
    let flags = (libc::O_RDONLY | libc::O_DIRECTORY) as u64;
    s.call(
        "openat",
        &[AT_FDCWD, P, flags],
        3,
        &[(1, Role::Entry, b"d")],
    );
    for chunk in [&first[..], &rest[..], &[][..]] {
        let n = chunk.len() as i64;
        s.call("getdents64", &[3, P, 8192], n, &[(1, Role::Exit, chunk)]);
    }
    s.call("close", &[3], 0, &[]);
    let (report, lines) = run(&s, root.path());
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(
        report.tally.calls["getdents64"].executed,
        3,
        "{}",
        report.table()
    );

    // A replay directory missing an entry is still a mismatch.
    std::fs::remove_file(root.path().join("d/f")).unwrap();
    let (report, lines) = run(&s, root.path());
    assert_eq!(report.tally.calls["getdents64"].mismatched, 1, "{lines:?}");
}

#[test]
fn an_entry_made_while_a_listing_was_read_may_be_in_it_or_not() {
    // A child's `creat` overlapped its parent's listing of the same
    // directory in time (Python importing while a forked child wrote a
    // file); the recorded stream did not return the entry. Replay may run
    // the create first, before the stream begins, where its registry of
    // streams in progress never saw the change: "unexpected [child]" (1
    // replay in 2). Any order was possible, so the name is not compared.
    // One thread here, for a fixed order: the create runs first.
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("d")).unwrap();
    let (dir, t0) = (libc::DT_DIR, 100_000);
    let listed = [dirent(".", dir), dirent("..", dir)].concat();
    let mut s = Script::new("/");
    let flags = (libc::O_RDONLY | libc::O_DIRECTORY) as u64;
    s.call(
        "openat",
        &[AT_FDCWD, P, flags],
        3,
        &[(1, Role::Entry, b"d")],
    )
    .by(PID, t0 - 1_000, t0 - 900);
    let creat = (libc::O_WRONLY | libc::O_CREAT) as u64;
    s.call(
        "openat",
        &[AT_FDCWD, P, creat, 0o644],
        4,
        &[(1, Role::Entry, b"d/child")],
    )
    .by(PID, t0, t0 + 1_000)
    .call(
        "getdents64",
        &[3, P, 8192],
        listed.len() as i64,
        &[(1, Role::Exit, &listed)],
    )
    .by(PID, t0 + 100, t0 + 200)
    .call("getdents64", &[3, P, 8192], 0, &[(1, Role::Exit, b"")])
    .by(PID, t0 + 300, t0 + 400)
    .call("close", &[3], 0, &[])
    .by(PID, t0 + 1_500, t0 + 1_600)
    .call("close", &[4], 0, &[])
    .by(PID, t0 + 1_700, t0 + 1_800);
    let (report, lines) = run_strictly(&s, root.path());
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(
        report.tally.calls["getdents64"].executed,
        2,
        "{}",
        report.table()
    );

    // An entry no call of the trace made is still a mismatch.
    std::fs::remove_file(root.path().join("d/child")).unwrap();
    std::fs::write(root.path().join("d/intruder"), "x").unwrap();
    let (report, lines) = run_strictly(&s, root.path());
    assert_eq!(report.tally.calls["getdents64"].mismatched, 1, "{lines:?}");
}

#[test]
fn openat2_resolve_flags_are_the_programs_own() {
    // `openat2` with RESOLVE_IN_ROOT from `d` follows the absolute link
    // `esc -> /etc` to `d/etc`, and `/x` to `d/x`, both absent (ENOENT);
    // RESOLVE_NO_SYMLINKS refuses a link on the way (ELOOP). Replay once
    // opened all three from the top of its root, where `/etc` and `/x`
    // exist, and the link is followed. (RESOLVE_BENEATH's refusals are
    // EXDEV, which replay does not issue: a mount crossing.)
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("d/sub")).unwrap();
    std::fs::create_dir(root.path().join("etc")).unwrap();
    std::fs::write(root.path().join("x"), "x").unwrap();
    std::os::unix::fs::symlink("/etc", root.path().join("d/esc")).unwrap();
    std::os::unix::fs::symlink("sub", root.path().join("d/l")).unwrap();
    let how = |resolve: u64| -> Vec<u8> {
        [libc::O_RDONLY as u64, 0, resolve]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect()
    };
    let dir = (libc::O_RDONLY | libc::O_DIRECTORY) as u64;
    let (in_root, beneath) = (libc::RESOLVE_IN_ROOT, libc::RESOLVE_BENEATH);
    let (enoent, eloop) = (libc::ENOENT, libc::ELOOP);
    let mut s = Script::new("/");
    s.call("openat", &[AT_FDCWD, P, dir], 3, &[(1, Role::Entry, b"d")]);
    for (path, resolve, ret) in [
        (&b"esc"[..], in_root, -i64::from(enoent)),
        (b"/x", in_root, -i64::from(enoent)),
        (b"l/.", libc::RESOLVE_NO_SYMLINKS, -i64::from(eloop)),
        (b"sub", beneath, 4),
    ] {
        s.call(
            "openat2",
            &[3, P, P, 24],
            ret,
            &[(1, Role::Entry, path), (2, Role::Entry, &how(resolve))],
        );
    }
    let (report, lines) = run(&s, root.path());
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(report.tally.calls["openat2"].executed, 4, "{lines:?}");
}

#[test]
fn links_into_proc_are_simulated_and_an_empty_path_is_enoent() {
    // pip stats /etc/mtab, a link to ../proc/self/mounts that cannot be
    // followed inside the root; Python opens "" (ENOENT, which replay
    // once turned into opening the working directory).
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("etc")).unwrap();
    std::os::unix::fs::symlink("../proc/self/mounts", root.path().join("etc/mtab")).unwrap();
    let mut s = Script::new("/");
    let ro = libc::O_RDONLY as u64;
    s.call(
        "newfstatat",
        &[AT_FDCWD, P, P, 0],
        0,
        &[(1, Role::Entry, b"/etc/mtab")],
    );
    s.call(
        "openat",
        &[AT_FDCWD, P, ro],
        3,
        &[(1, Role::Entry, b"/etc/mtab")],
    );
    s.call("read", &[3, P, 100], 5, &[(1, Role::Exit, b"proc ")]);
    s.call("close", &[3], 0, &[]);
    let enoent = -i64::from(libc::ENOENT);
    s.call(
        "openat",
        &[AT_FDCWD, P, ro],
        enoent,
        &[(1, Role::Entry, b"")],
    );
    let (report, lines) = run(&s, root.path());
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(
        report.tally.calls["newfstatat"].simulated,
        1,
        "{}",
        report.table()
    );
    assert_eq!(
        report.tally.calls["read"].simulated,
        1,
        "{}",
        report.table()
    );
    assert_eq!(
        report.tally.calls["openat"].executed,
        1,
        "{}",
        report.table()
    );
}

#[test]
fn a_write_to_a_non_blocking_pipe_waits_for_room_for_the_rest() {
    // xz writes to a non-blocking pipe: 60 KiB first, then 8 KiB that
    // returned whole because the reader drained the pipe meanwhile.
    // Replayed in original timing, the second write finds room for 4 KiB
    // only; it must wait for the rest instead of returning short.
    let root = tempfile::tempdir().unwrap();
    let mut s = Script::new("/");
    s.pipe(libc::O_NONBLOCK);
    const READER: u32 = PID + 1;
    s.thread(READER);
    let ms = 1_000_000;
    let (a, b) = (vec![b'a'; 61440], vec![b'b'; 8192]);
    let first_read = [&a[..], &b[..4096]].concat();
    s.call("write", &[4, P, 61440], 61440, &[(1, Role::Entry, &a)])
        .by(PID, 10 * ms, 11 * ms);
    s.call(
        "read",
        &[3, P, 65536],
        65536,
        &[(1, Role::Exit, &first_read)],
    )
    .by(READER, 25 * ms, 26 * ms);
    s.call("write", &[4, P, 8192], 8192, &[(1, Role::Entry, &b)])
        .by(PID, 20 * ms, 40 * ms);
    s.call("read", &[3, P, 65536], 4096, &[(1, Role::Exit, &b[..4096])])
        .by(READER, 50 * ms, 51 * ms);
    let last = s.seq;
    s.renumber(&[last - 3, last - 1, last - 2, last]);
    let opts = Options {
        timing: reanimator_replay::Timing::Scaled(1.0),
        ..Options::default()
    };
    let (report, lines) = run_with(&s, root.path(), &opts);
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(
        report.tally.calls["write"].executed,
        2,
        "{}",
        report.table()
    );
}

/// Appends, on descriptors 3 (a read end) and 4 (its write end), a
/// write, a read of part of it, the reader's close and a last write; then
/// replays them in strict order, which puts the close before that write,
/// and asserts both writes went in.
fn last_write_after_the_readers_close_goes_in(mut s: Script) {
    let root = tempfile::tempdir().unwrap();
    s.call("write", &[4, P, 2], 2, &[(1, Role::Entry, b"ab")])
        .call("read", &[3, P, 1], 1, &[(1, Role::Exit, b"a")])
        .call("close", &[3], 0, &[])
        .call("write", &[4, P, 2], 2, &[(1, Role::Entry, b"cd")])
        .call("close", &[4], 0, &[]);
    let (report, lines) = run_strictly(&s, root.path());
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(
        report.tally.calls["write"].executed,
        2,
        "{}",
        report.table()
    );
}

#[test]
fn a_write_replayed_after_its_readers_close_still_writes() {
    // `yes | head -c 1`: head's last close and yes's last write overlapped
    // in time, the write finishing first; replay may run the close first.
    // The pipe must still take the bytes, not refuse them with EPIPE (1
    // replay in 40 mismatched).
    let mut s = Script::new("/");
    s.pipe(0);
    last_write_after_the_readers_close_goes_in(s);
}

#[test]
fn a_write_replayed_after_its_readers_close_still_writes_to_a_fifo() {
    // As above, through a FIFO: `seq 1 100000 > fifo & head -1 fifo`
    // (3 replays in 10 mismatched with EPIPE).
    let mut s = Script::new("/");
    let nonblock = (libc::O_RDONLY | libc::O_NONBLOCK) as u64;
    s.call(
        "mknod",
        &[P, (libc::S_IFIFO | 0o644) as u64, 0],
        0,
        &[(0, Role::Entry, b"/fifo")],
    )
    .call("open", &[P, nonblock, 0], 3, &[(0, Role::Entry, b"/fifo")])
    .call(
        "open",
        &[P, libc::O_WRONLY as u64, 0],
        4,
        &[(0, Role::Entry, b"/fifo")],
    );
    last_write_after_the_readers_close_goes_in(s);
}

#[test]
fn a_descriptor_made_non_blocking_by_an_ioctl_reads_back_its_flags() {
    // Python's `os.set_blocking(w, False)` is `ioctl(FIONBIO)`, simulated
    // (its argument is not captured); `F_GETFL` then said `O_WRONLY`
    // where `O_WRONLY|O_NONBLOCK` was recorded.
    let root = tempfile::tempdir().unwrap();
    let mut s = Script::new("/");
    s.pipe(0)
        .call("ioctl", &[4, libc::FIONBIO, P], 0, &[])
        .call(
            "fcntl",
            &[4, libc::F_GETFL as u64, 0],
            i64::from(libc::O_WRONLY | libc::O_NONBLOCK),
            &[],
        )
        .call(
            "fcntl",
            &[3, libc::F_GETFL as u64, 0],
            i64::from(libc::O_RDONLY),
            &[],
        );
    let (report, lines) = run(&s, root.path());
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(
        report.tally.calls["fcntl"].executed,
        2,
        "{}",
        report.table()
    );
}

/// Replays `script` in recorded entry order (`--order strict`), which
/// fixes the order of calls that overlapped.
fn run_strictly(script: &Script, root: &Path) -> (Report, Vec<String>) {
    let opts = Options {
        order: OrderPolicy::Strict,
        ..Options::default()
    };
    run_with(script, root, &opts)
}

/// Replays `script`, failing the test instead of hanging if replay has
/// not ended within `secs` seconds.
fn run_within(script: &Script, root: &Path, secs: u64) -> (Report, Vec<String>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let (script, root) = (script.records.clone(), root.to_path_buf());
    std::thread::spawn(move || {
        let s = Script {
            records: script,
            seq: 0,
            t: 0,
        };
        let _ = tx.send(run(&s, &root));
    });
    rx.recv_timeout(std::time::Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("replay still running after {secs} s"))
}

#[test]
fn a_pipe_read_whose_rest_comes_from_a_write_far_ahead_does_not_stall_replay() {
    // mariadb-install-db's `cat | cat | mariadbd --bootstrap`: a read got
    // 3 of its 6 bytes from a write that ended before it began, the rest
    // from a write that began before it ended and ended much later. The
    // other thread's calls in between began after the read ended, so they
    // wait for it, and they hold 25 MiB, over the dispatcher's 8 MiB of
    // read-ahead. Once stalled, the dispatcher read one record per 210 ms
    // and reached the write after a minute (MariaDB's replay: 15 min).
    let root = tempfile::tempdir().unwrap();
    let mut s = Script::new("/");
    let fds: Vec<u8> = [3i32, 4].iter().flat_map(|f| f.to_le_bytes()).collect();
    s.call("pipe2", &[P, 0], 0, &[(0, Role::Exit, &fds)]);
    const WRITER: u32 = PID + 1;
    const OTHER: u32 = PID + 2;
    s.thread(WRITER).thread(OTHER);
    let ms = 1_000_000;
    s.call("write", &[4, P, 3], 3, &[(1, Role::Entry, b"abc")])
        .by(WRITER, 10 * ms, 11 * ms);
    s.call("read", &[3, P, 6], 6, &[(1, Role::Exit, b"abcdef")])
        .by(PID, 20 * ms, 30 * ms);
    let read_id = s.seq;
    let o_creat = (libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC) as u64;
    s.call(
        "openat",
        &[AT_FDCWD, P, o_creat, 0o644],
        5,
        &[(1, Role::Entry, b"/f")],
    )
    .by(OTHER, 40 * ms, 41 * ms);
    let block = vec![7u8; 64 << 10];
    let blocks = 400u64;
    for i in 0..blocks {
        s.call(
            "write",
            &[5, P, 64 << 10],
            64 << 10,
            &[(1, Role::Entry, &block)],
        )
        .by(OTHER, (50 + i) * ms, (50 + i) * ms + ms / 2);
    }
    s.call("write", &[4, P, 3], 3, &[(1, Role::Entry, b"def")])
        .by(WRITER, 25 * ms, 500 * ms);
    // Records come in completion order, ids in entry order.
    let ids: Vec<u64> = (read_id + 2..=read_id + blocks + 2)
        .chain([read_id + 1])
        .collect();
    s.renumber(&ids);
    let (report, lines) = run_within(&s, root.path(), 30);
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(
        std::fs::metadata(root.path().join("f")).unwrap().len(),
        blocks << 16
    );
}

/// A `Created` start record of process `tid`, a child of [`PID`].
fn child_start(seq: u64, time_ns: u64, tid: u32) -> Record {
    Record::ProcessStart(ProcessStart {
        seq,
        time_ns,
        tgid: tid,
        tid,
        cause: StartCause::Created,
        ppid: PID,
        cwd: b"/".to_vec(),
        umask: 0o022,
        ..ProcessStart::default()
    })
}

/// Appends the exit record of process `tid`.
fn child_exit(s: &mut Script, tid: u32) {
    s.seq += 1;
    s.t += 1_000;
    s.records.push(Record::ProcessExit(ProcessExit {
        seq: s.seq,
        time_ns: s.t,
        tgid: tid,
        tid,
        status: ExitStatus::Exited(0),
    }));
}

#[test]
fn a_start_record_no_clone_matches_does_not_hang_replay() {
    // A child made by a vfork, which ends; then a second start record for
    // the same id with nothing that creates it (ptrace recordings of
    // before 2026-11-25 late could hold one). Replay once waited for its
    // birth for ever.
    let root = tempfile::tempdir().unwrap();
    let mut s = Script::new("/");
    const CHILD: u32 = PID + 7;
    s.call("vfork", &[], i64::from(CHILD), &[]);
    s.seq += 1;
    s.records.push(child_start(s.seq, s.t + 100, CHILD));
    s.call("getpid", &[], i64::from(CHILD), &[]);
    if let Some(Record::Syscall(e)) = s.records.last_mut() {
        (e.tgid, e.tid) = (CHILD, CHILD);
    }
    child_exit(&mut s, CHILD);
    s.seq += 1;
    s.records.push(child_start(s.seq, s.t + 100, CHILD));
    s.call("getpid", &[], i64::from(PID), &[]);
    let (report, lines) = run_within(&s, root.path(), 60);
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(
        report.tally.calls["getpid"].simulated,
        2,
        "{}",
        report.table()
    );
}

#[test]
fn a_reused_process_id_gets_the_state_of_the_fork_that_made_it() {
    // The parent forks child X in /a, X creates `f` there and ends; the
    // parent moves to /b and forks again, the kernel handing out X once
    // more, and the second X creates `f` in /b.
    let root = tempfile::tempdir().unwrap();
    let mut s = Script::new("/");
    const X: u32 = PID + 3;
    let fork_flags = libc::SIGCHLD as u64;
    let o_creat = (libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL) as u64;
    for dir in ["/a", "/b"] {
        s.call("mkdir", &[P, 0o755], 0, &[(0, Role::Entry, dir.as_bytes())])
            .call("chdir", &[P], 0, &[(0, Role::Entry, dir.as_bytes())])
            .call("clone", &[fork_flags, 0, 0, 0, 0], i64::from(X), &[]);
        s.seq += 1;
        s.records.push(child_start(s.seq, s.t + 400, X));
        s.call(
            "openat",
            &[AT_FDCWD, P, o_creat, 0o644],
            3,
            &[(1, Role::Entry, b"f")],
        );
        if let Some(Record::Syscall(e)) = s.records.last_mut() {
            (e.tgid, e.tid) = (X, X);
        }
        child_exit(&mut s, X);
    }
    let (report, lines) = run_within(&s, root.path(), 60);
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert!(
        root.path().join("a/f").is_file(),
        "{:?}",
        listing(root.path())
    );
    assert!(
        root.path().join("b/f").is_file(),
        "{:?}",
        listing(root.path())
    );
}

#[test]
fn short_writes_filling_a_pipe_that_polls_full_replay_clean() {
    // initdb writes 60 KiB of short lines to postgres before postgres
    // reads any. The writes fit, merged into the pipe's pages, but once
    // all 16 pages are in use the pipe polls as full: replay waited for
    // room that never came (the reader's turn was after the writes).
    let root = tempfile::tempdir().unwrap();
    let mut s = Script::new("/");
    let fds: Vec<u8> = [3i32, 4].iter().flat_map(|f| f.to_le_bytes()).collect();
    s.call("pipe2", &[P, 0], 0, &[(0, Role::Exit, &fds)]);
    const READER: u32 = PID + 1;
    s.thread(READER);
    let line = [b'x'; 135]
        .iter()
        .chain(b"\n")
        .copied()
        .collect::<Vec<u8>>();
    let lines = 470;
    for _ in 0..lines {
        s.call("write", &[4, P, 136], 136, &[(1, Role::Entry, &line)]);
    }
    let all = line.repeat(lines);
    for chunk in all.chunks(8192) {
        s.call(
            "read",
            &[3, P, 8192],
            chunk.len() as i64,
            &[(1, Role::Exit, chunk)],
        );
        let (enter, exit) = (s.t, s.t + 500);
        s.by(READER, enter, exit);
    }
    let (report, lines) = run_within(&s, root.path(), 60);
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(
        report.tally.calls["write"].executed,
        470,
        "{}",
        report.table()
    );
}

#[test]
fn a_query_that_raced_another_threads_write_matches_when_asked_again() {
    // Thread A's lseek(SEEK_END) began before thread B's pwrite extended
    // the file and ended after it, and saw the new size. In original
    // timing replay issues A's call first (the two overlapped, so neither
    // waits for the other) and gets the old size; asked again once B's
    // call, which ended first, has finished, it matches.
    let ms = 1_000_000;
    let mut s = racing_write();
    write_page(&mut s);
    s.call("lseek", &[3, 0, libc::SEEK_END as u64], 4096, &[])
        .by(PID + 1, 20 * ms, 200 * ms);
    let last = s.seq;
    s.renumber(&[last, last - 1]);
    let (report, lines) = in_original_time(&s);
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(report.tally.requeried, 1, "{}", report.table());
}

/// A file, thread A's descriptor 3 on it, and thread B (`PID`) writing a
/// page of 7s at offset 0 from 70 to 100 ms: the start of the two race
/// tests below.
fn racing_write() -> Script {
    let mut s = Script::new("/");
    let o_rdwr = (libc::O_RDWR | libc::O_CREAT) as u64;
    s.call(
        "openat",
        &[AT_FDCWD, P, o_rdwr, 0o644],
        3,
        &[(1, Role::Entry, b"/f")],
    );
    s.thread(PID + 1);
    s
}

fn write_page(s: &mut Script) {
    let ms = 1_000_000;
    s.call(
        "pwrite64",
        &[3, P, 4096, 0],
        4096,
        &[(1, Role::Entry, &[7u8; 4096])],
    )
    .by(PID, 70 * ms, 100 * ms);
}

fn in_original_time(s: &Script) -> (Report, Vec<String>) {
    let root = tempfile::tempdir().unwrap();
    let opts = Options {
        timing: reanimator_replay::Timing::Scaled(1.0),
        ..Options::default()
    };
    run_with(s, root.path(), &opts)
}

#[test]
fn a_read_of_a_file_that_raced_another_threads_write_is_read_again() {
    // `pg_ctl` polling `postmaster.pid` while the postmaster rewrites it:
    // thread A's read overlapped B's write and saw its bytes. Replay
    // reads first (original timing), then moves the offset back and
    // reads again once the write has finished; the next read at the
    // offset after it finds the end of the file.
    let ms = 1_000_000;
    let mut s = racing_write();
    write_page(&mut s);
    s.call(
        "read",
        &[3, P, 4096],
        4096,
        &[(1, Role::Exit, &[7u8; 4096])],
    )
    .by(PID + 1, 20 * ms, 200 * ms);
    let last = s.seq;
    s.renumber(&[last, last - 1]);
    s.call("read", &[3, P, 4096], 0, &[(1, Role::Exit, b"")])
        .by(PID + 1, 210 * ms, 220 * ms);
    let (report, lines) = in_original_time(&s);
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(report.tally.requeried, 1, "{}", report.table());
}

#[test]
fn a_relative_seek_that_mismatched_is_not_issued_again() {
    // lseek(fd, 4, SEEK_CUR) moves the offset: issued a second time it
    // would move it twice, "match" a wrong recorded result (8 here) and
    // send the next read to the wrong bytes.
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f"), "0123456789").unwrap();
    let mut s = Script::new("/");
    s.call(
        "openat",
        &[AT_FDCWD, P, libc::O_RDONLY as u64],
        3,
        &[(1, Role::Entry, b"/f")],
    )
    .call("lseek", &[3, 4, libc::SEEK_CUR as u64], 8, &[])
    .call("read", &[3, P, 2], 2, &[(1, Role::Exit, b"45")]);
    let (report, lines) = run(&s, root.path());
    assert_eq!(report.tally.calls["lseek"].mismatched, 1, "{lines:?}");
    assert_eq!(report.tally.calls["read"].mismatched, 0, "{lines:?}");
    assert_eq!(report.tally.requeried, 0, "{lines:?}");
}

#[test]
fn a_query_that_saw_a_write_still_under_way_matches_when_asked_again() {
    // A's lseek(SEEK_END) ended (at 90 ms) before B's extending write
    // returned (100 ms) yet saw the new size: asked again after the calls
    // that ended before it, it still finds the old one; after the calls
    // that began before it ended, the new.
    let ms = 1_000_000;
    let mut s = racing_write();
    s.call("lseek", &[3, 0, libc::SEEK_END as u64], 4096, &[])
        .by(PID + 1, 20 * ms, 90 * ms);
    write_page(&mut s);
    let (report, lines) = in_original_time(&s);
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert_eq!(report.tally.requeried, 1, "{}", report.table());
}

#[test]
fn many_mismatches_beside_a_blocked_call_are_not_each_held_up() {
    // A thread's pipe read overlaps every call of the main thread and
    // waits for its last one. Each of 20 mismatched preads would wait the
    // whole 2 s for that read to finish before its second try; after the
    // first such wait runs out, the others skip it.
    let root = tempfile::tempdir().unwrap();
    let mut s = Script::new("/");
    let ms = 1_000_000;
    let fds: Vec<u8> = [3i32, 4].iter().flat_map(|f| f.to_le_bytes()).collect();
    s.call("pipe2", &[P, 0], 0, &[(0, Role::Exit, &fds)])
        .by(PID, 0, ms);
    const READER: u32 = PID + 1;
    s.thread(READER);
    let o_creat = (libc::O_RDWR | libc::O_CREAT) as u64;
    s.call(
        "open",
        &[P, o_creat, 0o600],
        5,
        &[(0, Role::Entry, b"/data")],
    )
    .by(PID, 2 * ms, 3 * ms);
    let mismatches = 20;
    for i in 0..mismatches {
        s.call("pread64", &[5, P, 5, 0], 5, &[(1, Role::Exit, b"hello")])
            .by(PID, (20 + 10 * i) * ms, (21 + 10 * i) * ms);
    }
    s.call("write", &[4, P, 3], 3, &[(1, Role::Entry, b"xyz")])
        .by(PID, 900 * ms, 901 * ms);
    s.call("read", &[3, P, 3], 3, &[(1, Role::Exit, b"xyz")])
        .by(READER, 10 * ms, 1000 * ms);
    let last = s.seq;
    // Records come in completion order, ids in entry order.
    let ids: Vec<u64> = (last - mismatches - 1..last)
        .map(|id| id + 1)
        .chain([last - mismatches - 1])
        .collect();
    s.renumber(&ids);
    // 20 waits of 2 s would be 40 s.
    let (report, lines) = run_within(&s, root.path(), 30);
    assert_eq!(
        report.tally.total().mismatched,
        mismatches,
        "{lines:?}\n{}",
        report.table()
    );
}

#[test]
fn a_call_on_a_proc_fd_link_itself_does_not_follow_it() {
    // Python's os.link(f"/proc/self/fd/{tmpfile}", "e") calls link(),
    // which does not follow the magic link: EXDEV, as the link is in
    // /proc. Replay followed it to the O_TMPFILE's directory (EPERM).
    let root = tempfile::tempdir().unwrap();
    let mut s = Script::new("/");
    let tmpfile = (libc::O_TMPFILE | libc::O_WRONLY) as u64;
    s.call(
        "openat",
        &[AT_FDCWD, P, tmpfile, 0o640],
        5,
        &[(1, Role::Entry, b".")],
    )
    .call(
        "link",
        &[P, P],
        -i64::from(libc::EXDEV),
        &[(0, Role::Entry, b"/proc/self/fd/5"), (1, Role::Entry, b"e")],
    )
    .call(
        "linkat",
        &[AT_FDCWD, P, AT_FDCWD, P, libc::AT_SYMLINK_FOLLOW as u64],
        0,
        &[(1, Role::Entry, b"/proc/self/fd/5"), (3, Role::Entry, b"e")],
    );
    let (report, lines) = run(&s, root.path());
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    assert!(
        root.path().join("e").is_file(),
        "{:?}",
        listing(root.path())
    );
}

#[test]
fn a_short_writev_to_a_pipe_moves_no_more_in_replay() {
    // A writev to a nearly full non-blocking pipe wrote 100 of its 200
    // bytes; replay's pipe has room for all, but the call must move 100.
    let root = tempfile::tempdir().unwrap();
    let mut s = Script::new("/");
    s.pipe(libc::O_NONBLOCK);
    let data = [b'w'; 200];
    s.call("writev", &[4, P, 1], 100, &[(1, Role::Entry, &data)])
        .call("read", &[3, P, 4096], 100, &[(1, Role::Exit, &data[..100])])
        .call("read", &[3, P, 4096], -i64::from(libc::EAGAIN), &[]);
    let (report, lines) = run(&s, root.path());
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
}

/// A `struct iocb` as the kernel lays it out.
fn iocb(data: u64, opcode: u16, fd: u32, nbytes: u64, offset: i64) -> Vec<u8> {
    let mut b = vec![0u8; 64];
    b[0..8].copy_from_slice(&data.to_le_bytes());
    b[16..18].copy_from_slice(&opcode.to_le_bytes());
    b[20..24].copy_from_slice(&fd.to_le_bytes());
    b[24..32].copy_from_slice(&P.to_le_bytes());
    b[32..40].copy_from_slice(&nbytes.to_le_bytes());
    b[40..48].copy_from_slice(&offset.to_le_bytes());
    b
}

/// `struct io_event`s of `(data, obj, res)`.
fn io_events(evs: &[(u64, u64, i64)]) -> Vec<u8> {
    evs.iter()
        .flat_map(|&(d, o, r)| [d.to_le_bytes(), o.to_le_bytes(), r.to_le_bytes(), [0; 8]].concat())
        .collect()
}

/// Adds `(elem, bytes)` captures of argument `arg` to the last call.
fn with_elems(s: &mut Script, arg: u8, role: Role, caps: &[(u32, Vec<u8>)]) {
    let Some(Record::Syscall(e)) = s.records.last_mut() else {
        unreachable!()
    };
    for (elem, d) in caps {
        e.captures.push(Capture {
            arg,
            role,
            elem: *elem,
            status: CaptureStatus::Complete,
            len: d.len() as u64,
            captured: d.len() as u64,
            data: Some(Bytes::copy_from_slice(d)),
        });
    }
}

/// Linux AIO: a write and an `FDSYNC` submitted by one thread and reaped
/// by another whose `io_getevents` began first (so replay may run it
/// before the submission, and it must wait for it), then a read whose
/// data is compared; `read_back` is what the recording read.
fn aio_script(read_back: &[u8]) -> Script {
    use reanimator_catalogue::aio;
    let ms = 1_000_000;
    let mut s = Script::new("/");
    let o_rdwr = (libc::O_RDWR | libc::O_CREAT) as u64;
    let ctx: u64 = 0x7f00_0000_1000;
    s.call(
        "openat",
        &[AT_FDCWD, P, o_rdwr, 0o644],
        3,
        &[(1, Role::Entry, b"/f")],
    )
    .call(
        "io_setup",
        &[8, P],
        0,
        &[(1, Role::Exit, &ctx.to_le_bytes())],
    );
    const B: u32 = PID + 1;
    s.thread(B);
    let page = [7u8; 4096];
    let (wr, sync, rd) = (0xa000u64, 0xa040u64, 0xa080u64);
    let ptrs = [wr.to_le_bytes(), sync.to_le_bytes()].concat();
    s.call("io_submit", &[ctx, 2, P], 2, &[])
        .by(PID, 20 * ms, 21 * ms);
    with_elems(
        &mut s,
        2,
        Role::Entry,
        &[
            (0, ptrs),
            (aio::elem(0, 0), iocb(1, aio::PWRITE, 3, 4096, 0)),
            (aio::elem(0, 1), page.to_vec()),
            (aio::elem(1, 0), iocb(2, aio::FDSYNC, 3, 0, 0)),
        ],
    );
    s.call("io_getevents", &[ctx, 2, 8, P, 0], 2, &[])
        .by(B, 10 * ms, 30 * ms);
    with_elems(
        &mut s,
        3,
        Role::Exit,
        &[(0, io_events(&[(2, sync, 0), (1, wr, 4096)]))],
    );
    let last = s.seq;
    s.renumber(&[last, last - 1]);
    s.call("io_submit", &[ctx, 1, P], 1, &[])
        .by(PID, 40 * ms, 41 * ms);
    with_elems(
        &mut s,
        2,
        Role::Entry,
        &[
            (0, rd.to_le_bytes().to_vec()),
            (aio::elem(0, 0), iocb(3, aio::PREAD, 3, 8192, 0)),
        ],
    );
    s.call("io_getevents", &[ctx, 1, 8, P, 0], 1, &[])
        .by(PID, 42 * ms, 43 * ms);
    with_elems(
        &mut s,
        3,
        Role::Exit,
        &[
            (0, io_events(&[(3, rd, 4096)])),
            (aio::elem(0, 1), read_back.to_vec()),
        ],
    );
    s.call("io_destroy", &[ctx], 0, &[])
        .by(PID, 44 * ms, 45 * ms);
    s
}

#[test]
fn linux_aio_replays_its_requests_and_checks_what_they_read() {
    for order in [OrderPolicy::Overlap, OrderPolicy::Strict] {
        let root = tempfile::tempdir().unwrap();
        let opts = Options {
            order,
            ..Options::default()
        };
        let (report, lines) = run_with(&aio_script(&[7u8; 4096]), root.path(), &opts);
        assert!(
            report.is_clean(),
            "{order:?}: {lines:?}\n{}",
            report.table()
        );
        assert_eq!(std::fs::read(root.path().join("f")).unwrap(), [7u8; 4096]);
        let t = report.tally.total();
        assert!(t.executed >= 7, "{}", report.table());
    }
    // Verification can fail: the recording read other bytes.
    let root = tempfile::tempdir().unwrap();
    let mut other = [7u8; 4096];
    other[100] = 8;
    let (report, lines) = run(&aio_script(&other), root.path());
    assert_eq!(report.tally.total().mismatched, 1, "{}", report.table());
    assert!(
        lines[0].contains("io_getevents") && lines[0].contains("differs at byte 100"),
        "{lines:?}"
    );
}

/// A request the kernel refuses in replay (here an opcode it does not
/// know) is reported at its `io_submit`, and its completion at once with
/// the error, not after a wait for a completion that cannot come.
#[test]
fn a_linux_aio_request_refused_in_replay_is_reported_without_waiting() {
    use reanimator_catalogue::aio;
    let root = tempfile::tempdir().unwrap();
    let mut s = Script::new("/");
    let o_rdwr = (libc::O_RDWR | libc::O_CREAT) as u64;
    let (ctx, obj) = (0x7f00_0000_2000u64, 0xb000u64);
    s.call(
        "openat",
        &[AT_FDCWD, P, o_rdwr, 0o644],
        3,
        &[(1, Role::Entry, b"/f")],
    )
    .call(
        "io_setup",
        &[8, P],
        0,
        &[(1, Role::Exit, &ctx.to_le_bytes())],
    )
    .call("io_submit", &[ctx, 1, P], 1, &[]);
    with_elems(
        &mut s,
        2,
        Role::Entry,
        &[
            (0, obj.to_le_bytes().to_vec()),
            (aio::elem(0, 0), iocb(9, 99, 3, 4096, 0)),
        ],
    );
    s.call("io_getevents", &[ctx, 1, 8, P, 0], 1, &[]);
    with_elems(&mut s, 3, Role::Exit, &[(0, io_events(&[(9, obj, 4096)]))]);
    let (report, lines) = run_within(&s, root.path(), 5);
    assert_eq!(report.tally.total().mismatched, 2, "{}", report.table());
    assert!(
        lines[0].contains("io_submit") && lines[0].contains("EINVAL"),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("io_getevents") && lines[1].contains("EINVAL"),
        "{lines:?}"
    );
}

/// A `struct io_uring_sqe` of the fields replay reads.
fn sqe(op: u8, fd: i32, len: u32, off: u64, user_data: u64) -> Vec<u8> {
    let mut b = vec![0u8; 64];
    b[0] = op;
    b[4..8].copy_from_slice(&fd.to_le_bytes());
    b[8..16].copy_from_slice(&off.to_le_bytes());
    b[16..24].copy_from_slice(&P.to_le_bytes());
    b[24..28].copy_from_slice(&len.to_le_bytes());
    b[32..40].copy_from_slice(&user_data.to_le_bytes());
    b
}

/// `struct io_uring_cqe`s of `(user_data, res)`.
fn cqes(list: &[(u64, i32)]) -> Vec<u8> {
    list.iter()
        .flat_map(|&(u, r)| [&u.to_le_bytes()[..], &r.to_le_bytes(), &[0; 4]].concat())
        .collect()
}

/// io_uring: a write and an FSYNC submitted by one thread and reaped by
/// another whose `io_uring_enter` began first (replay may run it before
/// the submission, and it must wait for it), then a read whose data is
/// compared; `read_back` is what the recording read.
fn uring_script(read_back: &[u8]) -> Script {
    use reanimator_catalogue::uring;
    let ms = 1_000_000;
    let mut s = Script::new("/");
    let o_rdwr = (libc::O_RDWR | libc::O_CREAT) as u64;
    let mut params = vec![0u8; uring::PARAMS_LEN];
    params[0..4].copy_from_slice(&8u32.to_le_bytes());
    params[4..8].copy_from_slice(&16u32.to_le_bytes());
    s.call(
        "openat",
        &[AT_FDCWD, P, o_rdwr, 0o644],
        3,
        &[(1, Role::Entry, b"/f")],
    )
    .call("io_uring_setup", &[8, P], 4, &[(1, Role::Exit, &params)]);
    const B: u32 = PID + 1;
    s.thread(B);
    let page = [7u8; 4096];
    let sqes = [
        sqe(uring::OP_WRITE, 3, 4096, 0, 1),
        sqe(uring::OP_FSYNC, 3, 0, 0, 2),
    ]
    .concat();
    s.call("io_uring_enter", &[4, 2, 0, 0, 0, 0], 2, &[])
        .by(PID, 20 * ms, 21 * ms);
    with_elems(
        &mut s,
        1,
        Role::Entry,
        &[(0, sqes), (uring::elem(0, 1), page.to_vec())],
    );
    s.call("io_uring_enter", &[4, 0, 2, 1, 0, 0], 0, &[])
        .by(B, 10 * ms, 30 * ms);
    with_elems(&mut s, 2, Role::Exit, &[(0, cqes(&[(2, 0), (1, 4096)]))]);
    let last = s.seq;
    s.renumber(&[last, last - 1]);
    s.call("io_uring_enter", &[4, 1, 1, 1, 0, 0], 1, &[])
        .by(PID, 40 * ms, 41 * ms);
    with_elems(
        &mut s,
        1,
        Role::Entry,
        &[(0, sqe(uring::OP_READ, 3, 8192, 0, 3))],
    );
    with_elems(
        &mut s,
        2,
        Role::Exit,
        &[
            (0, cqes(&[(3, 4096)])),
            (uring::elem(0, 1), read_back.to_vec()),
        ],
    );
    s.call("close", &[4], 0, &[]).by(PID, 44 * ms, 45 * ms);
    s
}

#[test]
fn io_uring_replays_its_requests_and_checks_what_they_read() {
    for order in [OrderPolicy::Overlap, OrderPolicy::Strict] {
        let root = tempfile::tempdir().unwrap();
        let opts = Options {
            order,
            ..Options::default()
        };
        let (report, lines) = run_with(&uring_script(&[7u8; 4096]), root.path(), &opts);
        assert!(
            report.is_clean(),
            "{order:?}: {lines:?}\n{}",
            report.table()
        );
        assert_eq!(std::fs::read(root.path().join("f")).unwrap(), [7u8; 4096]);
        assert_eq!(
            report.tally.calls["io_uring_enter"].executed,
            3,
            "{}",
            report.table()
        );
    }
    // Verification can fail: the recording read other bytes.
    let root = tempfile::tempdir().unwrap();
    let mut other = [7u8; 4096];
    other[100] = 8;
    let (report, lines) = run(&uring_script(&other), root.path());
    assert_eq!(report.tally.total().mismatched, 1, "{}", report.table());
    assert!(
        lines[0].contains("io_uring_enter") && lines[0].contains("differs at byte 100"),
        "{lines:?}"
    );
}

/// Two reads in flight with one `user_data` complete in the other order
/// than they were submitted: each recorded completion is matched with the
/// request whose data it holds, not with the older one (MariaDB reuses the
/// address of an I/O slot as `user_data`).
#[test]
fn io_uring_completions_sharing_a_user_data_match_by_their_data() {
    use reanimator_catalogue::uring;
    let ms = 1_000_000;
    let mut s = Script::new("/");
    let o_rdwr = (libc::O_RDWR | libc::O_CREAT) as u64;
    let mut params = vec![0u8; uring::PARAMS_LEN];
    params[0..4].copy_from_slice(&8u32.to_le_bytes());
    params[4..8].copy_from_slice(&16u32.to_le_bytes());
    let (first, second) = ([1u8; 4096], [2u8; 4096]);
    s.call(
        "openat",
        &[AT_FDCWD, P, o_rdwr, 0o644],
        3,
        &[(1, Role::Entry, b"/f")],
    )
    .call(
        "pwrite64",
        &[3, P, 8192, 0],
        8192,
        &[(1, Role::Entry, &[first, second].concat())],
    )
    .call("io_uring_setup", &[8, P], 4, &[(1, Role::Exit, &params)]);
    let sqes = [
        sqe(uring::OP_READ, 3, 4096, 0, 9),
        sqe(uring::OP_READ, 3, 4096, 4096, 9),
    ]
    .concat();
    s.call("io_uring_enter", &[4, 2, 0, 0, 0, 0], 2, &[])
        .by(PID, 20 * ms, 21 * ms);
    with_elems(&mut s, 1, Role::Entry, &[(0, sqes)]);
    s.call("io_uring_enter", &[4, 0, 2, 1, 0, 0], 0, &[])
        .by(PID, 30 * ms, 31 * ms);
    with_elems(
        &mut s,
        2,
        Role::Exit,
        &[
            (0, cqes(&[(9, 4096), (9, 4096)])),
            (uring::elem(0, 1), second.to_vec()),
            (uring::elem(1, 1), first.to_vec()),
        ],
    );
    s.call("close", &[4], 0, &[]).by(PID, 44 * ms, 45 * ms);
    let root = tempfile::tempdir().unwrap();
    let (report, lines) = run(&s, root.path());
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
}

/// After `chroot`, absolute paths start at the new root, inside DIR, and a
/// relative one still starts at the working directory. Before 2026-11-27
/// the new root was not followed: `/inside` was made at DIR's top.
#[test]
fn absolute_paths_after_a_chroot_start_at_the_new_root() {
    let root = tempfile::tempdir().unwrap();
    let mut s = Script::new("/work");
    let o_creat = (libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC) as u64;
    s.call("mkdir", &[P, 0o755], 0, &[(0, Role::Entry, b"/work")])
        .call("mkdir", &[P, 0o755], 0, &[(0, Role::Entry, b"jail")])
        .call("chroot", &[P], 0, &[(0, Role::Entry, b"jail")])
        // One that failed changed nothing: its result is simply replayed.
        .call(
            "chroot",
            &[P],
            -i64::from(libc::ENOENT),
            &[(0, Role::Entry, b"/none")],
        )
        .call(
            "openat",
            &[AT_FDCWD, P, o_creat, 0o644],
            3,
            &[(1, Role::Entry, b"/inside")],
        )
        .call("close", &[3], 0, &[])
        .call(
            "openat",
            &[AT_FDCWD, P, o_creat, 0o644],
            3,
            &[(1, Role::Entry, b"cwd-relative")],
        )
        .call("close", &[3], 0, &[])
        .call("chdir", &[P], 0, &[(0, Role::Entry, b"/")])
        .call("mkdir", &[P, 0o755], 0, &[(0, Role::Entry, b"d")]);
    let (report, lines) = run(&s, root.path());
    assert!(report.is_clean(), "{lines:?}\n{}", report.table());
    let at = |p: &str| root.path().join(p).exists();
    assert!(at("work/jail/inside") && !at("inside"));
    assert!(at("work/cwd-relative"));
    assert!(at("work/jail/d"), "chdir(\"/\") went to the new root");
}

/// A replay thread that fails (here its mismatch report panics) stops the
/// replay with an error instead of leaving the dispatcher waiting for
/// room the thread never gives back: 160 MiB of writes after the failure
/// is ten times the read-ahead that would otherwise have been allowed.
#[test]
fn a_replay_thread_that_panics_stops_the_replay() {
    let root = tempfile::tempdir().unwrap();
    let mut s = corrupted_read();
    let block = vec![7u8; 8 << 20];
    for _ in 0..20 {
        s.call(
            "write",
            &[3, P, block.len() as u64],
            block.len() as i64,
            &[(1, Role::Entry, &block)],
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.rtr");
    s.write(&trace);
    let (tx, rx) = std::sync::mpsc::channel();
    let root_path = root.path().to_path_buf();
    std::thread::spawn(move || {
        let root = Root::open(&root_path).unwrap();
        let result = replay(
            &trace,
            &root,
            &Options::default(),
            &Progress::default(),
            &|l| panic!("reporting {l}"),
        );
        let _ = tx.send(result.map(|r| r.table()));
    });
    let result = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("replay still running after 120 s");
    let err = result.expect_err("a failed replay thread fails the replay");
    let text = err.to_string();
    assert!(
        matches!(err, reanimator_replay::Error::ThreadFailed(_)) && text.contains("panicked"),
        "{text}"
    );
}
