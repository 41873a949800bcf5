//! The two back ends must record the same events. Each deterministic test
//! program of the ptrace recorder (`crates/ptrace/tests/programs`), and
//! of this crate (`tests/programs`) where the name is there, is
//! recorded with both, in the same directory, and the traces are compared
//! thread by thread after removing what legitimately differs between two
//! runs: times, sequence ids, process ids (numbered in order of
//! appearance), addresses (the address space is randomised), the contents
//! of structures (inode times, for instance), and the futex calls a
//! thread makes only when it happens to contend. io_uring completions are
//! compared as one set over the trace, not call by call (see
//! `completions`). Any other difference is a bug in one back end.
//!
//! Needs root and a kernel the eBPF back end supports: the test fails, it
//! does not skip, when they are missing.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use reanimator_catalogue::{aio, by_nr, uring, Kind, Ret};
use reanimator_record::{DataPolicy, SnapshotPolicy, Target};
use reanimator_trace::{
    ExitStatus, PathPhase, ReadOptions, Reader, Record, Role, SyscallEvent, TraceMeta, Writer,
    WriterOptions,
};

/// Recordings change process-wide state (signal dispositions): one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ptrace/tests/programs")
}

fn build(name: &str, bin: &Path) -> PathBuf {
    let own = common::program(name);
    let src = if own.exists() {
        own
    } else {
        programs_dir().join(format!("{name}.c"))
    };
    common::compile(&src, &bin.join(name))
}

#[derive(Clone, Copy, Debug)]
enum Backend {
    Ptrace,
    Ebpf,
}

fn record(backend: Backend, argv: &[OsString], trace: &Path) {
    let target = Target::spawn(argv).expect("program found");
    let mut w = Writer::create(trace, &TraceMeta::default(), WriterOptions::default())
        .expect("trace created");
    let summary = match backend {
        Backend::Ptrace => reanimator_ptrace::record(
            &target,
            DataPolicy::All,
            &reanimator_ptrace::default_cpus(),
            SnapshotPolicy::Contents,
            &mut w,
        ),
        Backend::Ebpf => reanimator_ebpf::record(
            &target,
            DataPolicy::All,
            SnapshotPolicy::Contents,
            &reanimator_ebpf::Options::default(),
            &mut w,
        ),
    }
    .unwrap_or_else(|e| panic!("{backend:?} recording failed: {e}"));
    w.finish().expect("trace finished");
    assert_eq!(
        summary.root_status,
        Some(ExitStatus::Exited(0)),
        "{:?} under {backend:?} did not exit 0",
        argv[0]
    );
}

/// A trace reduced to what both back ends must agree on: per thread (in
/// order of appearance), its events as text; the io_uring completions of
/// the whole trace, sorted; and the file states.
#[derive(Debug, PartialEq)]
struct Normal {
    threads: BTreeMap<usize, Vec<String>>,
    completions: Vec<String>,
    paths: Vec<String>,
}

/// The io_uring completions an `io_uring_enter` exit captured (its
/// [`Kind::UringComplete`] argument `arg`), one line per CQE with the
/// data of its read. Which call's exit first sees a completion is a race
/// when the kernel completes the request in a worker thread: `uring.c`'s
/// quiet write may be posted before its `io_uring_enter` returns or only
/// later, and ptrace looks at the ring a little after the eBPF exit hook
/// does. So completions are compared as a set over the trace; everything
/// else about the call, its SQEs and the data of its writes included,
/// is compared call by call.
fn completions(e: &SyscallEvent, arg: u8) -> Vec<String> {
    let caps: Vec<_> = e
        .captures
        .iter()
        .filter(|c| c.arg == arg && c.role == Role::Exit)
        .collect();
    let Some(all) = caps.iter().find(|c| c.elem == 0) else {
        return caps
            .iter()
            .map(|c| format!("stray capture elem {}", c.elem))
            .collect();
    };
    // The capture's status, not its length: that counts the completions
    // that call saw.
    let status = all.status.name();
    let bytes = all.data.as_deref().unwrap_or_default();
    if bytes.is_empty() {
        return vec![format!("no completion: {status} {}", all.len)];
    }
    bytes
        .chunks(uring::CQE_LEN)
        .enumerate()
        .map(|(k, cqe)| {
            let data: Vec<String> = caps
                .iter()
                .filter(|c| c.elem >> aio::SHIFT == k as u32 + 1)
                .map(|c| {
                    format!(
                        "{} {} {}/{} {:x?}",
                        c.elem & ((1 << aio::SHIFT) - 1),
                        c.status.name(),
                        c.captured,
                        c.len,
                        c.data.as_deref().map(checksum)
                    )
                })
                .collect();
            format!("cqe {cqe:02x?} ({status}), read data {data:?}")
        })
        .collect()
}

fn normalise(trace: &Path) -> Normal {
    let mut reader = Reader::open(trace, ReadOptions { data: true }).expect("trace opens");
    let mut records = Vec::new();
    while let Some(r) = reader.next_record().expect("trace reads") {
        records.push(r);
    }
    records.sort_by_key(Record::seq);
    let mut ids: HashMap<u32, usize> = HashMap::new();
    for r in &records {
        if let Record::ProcessStart(p) = r {
            let n = ids.len();
            ids.entry(p.tid).or_insert(n);
        }
    }
    let id = |t: u32| {
        ids.get(&t)
            .map_or_else(|| "ext".to_string(), |i| format!("T{i}"))
    };
    let mut threads: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut completed = Vec::new();
    let mut paths = Vec::new();
    // Descriptors of each program's own report file and of /proc files:
    // they hold ids and addresses, different at every run.
    let mut report_fds: HashMap<u32, Vec<u64>> = HashMap::new();
    for r in &records {
        let line = match r {
            Record::Syscall(e) => {
                let Some(row) = by_nr(e.nr) else {
                    threads
                        .entry(ids[&e.tid])
                        .or_default()
                        .push(format!("nr {}", e.nr));
                    continue;
                };
                if row.name == "futex" {
                    continue;
                }
                let opened_report = matches!(row.name, "open" | "openat")
                    && e.captures.iter().any(|c| {
                        c.data
                            .as_deref()
                            .is_some_and(|d| d.ends_with(b"/report") || d.starts_with(b"/proc/"))
                    });
                if let (true, Some(x)) = (opened_report, e.exit) {
                    report_fds.entry(e.tgid).or_default().push(x.ret as u64);
                }
                // Random bytes, and what a program writes to its report.
                let variable = row.name == "getrandom"
                    || (matches!(row.name, "write" | "read")
                        && report_fds
                            .get(&e.tgid)
                            .is_some_and(|fds| fds.contains(&e.args[0])));
                let args: Vec<String> = row
                    .params()
                    .iter()
                    .zip(e.args)
                    .map(|(p, a)| match p.kind {
                        Kind::Int | Kind::UInt | Kind::Fd | Kind::DirFd | Kind::Flags(_) => {
                            a.to_string()
                        }
                        Kind::Mode | Kind::CreateMode | Kind::Offset | Kind::Size => a.to_string(),
                        Kind::Signal | Kind::Id => a.to_string(),
                        Kind::Pid => id(a as u32),
                        _ => "_".into(),
                    })
                    .collect();
                // A thread killed inside a call: both back ends record
                // its restart code (ptrace reads it as the thread ends);
                // a call killed before it ran has no return. Each means
                // "interrupted".
                let ret = match e.exit {
                    None if !row.ends_thread() => "interrupted".to_string(),
                    None => "no return".to_string(),
                    Some(x) if x.is_error && (512..=516).contains(&x.errno()) => {
                        "interrupted".to_string()
                    }
                    Some(x) if x.is_error => format!("-{}", x.errno()),
                    Some(x) => match row.ret {
                        Ret::Addr | Ret::Hex => "addr".into(),
                        Ret::Pid => id(x.ret as u32),
                        _ => x.ret.to_string(),
                    },
                };
                let reaped = row
                    .params()
                    .iter()
                    .position(|p| p.kind == Kind::UringComplete);
                if let Some(arg) = reaped {
                    completed.extend(completions(e, arg as u8));
                }
                let mut caps: Vec<String> = e
                    .captures
                    .iter()
                    .filter(|c| reaped.is_none_or(|arg| (c.arg, c.role) != (arg as u8, Role::Exit)))
                    .map(|c| {
                        let kind = row.params().get(c.arg as usize).map(|p| p.kind);
                        let data = match kind {
                            _ if variable => String::new(),
                            // /proc/PID/... names a different pid per run.
                            _ if c.data.as_deref().is_some_and(|d| d.starts_with(b"/proc/")) => {
                                "/proc".into()
                            }
                            // Stores through shared mappings: the kernel
                            // hook cannot fault in pages the program never
                            // touched, ptrace can (the bytes are the file's
                            // either way), and writes the pages around
                            // them as several runs; tests/replay checks
                            // the result.
                            Some(Kind::Mapped { .. }) => return "mapped".into(),
                            Some(Kind::Struct { .. }) | None => String::new(),
                            // Linux AIO arrays and iocbs hold addresses:
                            // request pointers, `aio_buf`, an event's `obj`.
                            Some(Kind::IoCbs { .. } | Kind::IoEvents)
                                if c.elem & ((1 << aio::SHIFT) - 1) == 0 =>
                            {
                                let mut d = c.data.as_deref().unwrap_or_default().to_vec();
                                let (stride, addr) = match (kind, c.elem) {
                                    (Some(Kind::IoCbs { .. }), 0) => (8, 0..8),
                                    (Some(Kind::IoCbs { .. }), _) => (aio::IOCB_LEN, 24..32),
                                    _ => (aio::EVENT_LEN, 8..16),
                                };
                                for item in d.chunks_mut(stride) {
                                    if let Some(a) = item.get_mut(addr.clone()) {
                                        a.fill(0);
                                    }
                                }
                                format!("{:x}", checksum(&d))
                            }
                            // io_uring SQEs hold the address of their
                            // buffer or iovec array (`addr`).
                            Some(Kind::UringSubmit) if c.elem == 0 => {
                                let mut d = c.data.as_deref().unwrap_or_default().to_vec();
                                for sqe in d.chunks_mut(uring::SQE_LEN) {
                                    if let Some(a) = sqe.get_mut(16..24) {
                                        a.fill(0);
                                    }
                                }
                                format!("{:x}", checksum(&d))
                            }
                            _ => format!("{:x?}", c.data.as_deref().map(checksum)),
                        };
                        format!(
                            "{}{:?}/{} {} {}/{} {data}",
                            c.arg,
                            c.role,
                            c.elem,
                            c.status.name(),
                            c.captured,
                            c.len
                        )
                    })
                    .collect();
                caps.dedup();
                (
                    e.tid,
                    format!("{}({}) = {ret} {caps:?}", row.name, args.join(", ")),
                )
            }
            Record::ProcessStart(p) => (
                p.tid,
                format!(
                    "start {:?} {} ppid {} ids {} {} {} {} umask {:o} cwd {} exe {} argv {:?}",
                    p.cause,
                    id(p.tgid),
                    id(p.ppid),
                    p.uid,
                    p.gid,
                    p.euid,
                    p.egid,
                    p.umask,
                    String::from_utf8_lossy(&p.cwd),
                    // A process runs an image (its parent's, if forked);
                    // a thread names its process's, with no argv.
                    String::from_utf8_lossy(&p.exe),
                    p.argv
                        .iter()
                        .map(|a| String::from_utf8_lossy(a).into_owned())
                        .collect::<Vec<_>>()
                ),
            ),
            Record::ProcessExit(p) => {
                let status = match p.status {
                    ExitStatus::Superseded { by } => format!("superseded by {}", id(by)),
                    s => format!("{s:?}"),
                };
                (p.tid, format!("exit {status}"))
            }
            // ptrace reports signals to its tracer even when the program
            // ignores them; the kernel hook sees only real deliveries.
            Record::Signal(s)
                if [libc::SIGCHLD, libc::SIGCONT, libc::SIGURG, libc::SIGWINCH]
                    .contains(&s.signo) =>
            {
                continue
            }
            Record::Signal(s) => (
                s.tid,
                format!("signal {} code {} from {}", s.signo, s.code, id(s.sender)),
            ),
            Record::Loss(l) => (l.tid, format!("LOSS {} {}", l.count, l.reason)),
            Record::PathState(p) => {
                if p.phase == PathPhase::Before {
                    paths.push(format!(
                        "{} {:?} size {}",
                        String::from_utf8_lossy(&p.path),
                        p.kind,
                        p.size
                    ));
                }
                continue;
            }
            Record::PathData(d) => {
                paths.push(format!(
                    "{} @{} {:x}",
                    String::from_utf8_lossy(&d.path),
                    d.offset,
                    d.data.data.as_deref().map_or(0, checksum)
                ));
                continue;
            }
        };
        let (tid, text) = line;
        threads.entry(ids[&tid]).or_default().push(text);
    }
    paths.sort();
    completed.sort();
    Normal {
        threads,
        completions: completed,
        paths,
    }
}

/// FNV-1a: enough to tell buffers apart in a diff.
fn checksum(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3)
    })
}

fn first_difference(a: &Normal, b: &Normal) -> String {
    for (t, la) in &a.threads {
        let Some(lb) = b.threads.get(t) else {
            return format!("thread T{t} only under ptrace");
        };
        for (i, (x, y)) in la.iter().zip(lb).enumerate() {
            if x != y {
                return format!("thread T{t} event {i}:\n  ptrace: {x}\n  ebpf:   {y}");
            }
        }
        if la.len() != lb.len() {
            return format!(
                "thread T{t}: ptrace {} events, ebpf {}; next: {:?} / {:?}",
                la.len(),
                lb.len(),
                la.get(lb.len()),
                lb.get(la.len())
            );
        }
    }
    if a.threads.len() != b.threads.len() {
        return format!(
            "ptrace saw {} threads, ebpf {}",
            a.threads.len(),
            b.threads.len()
        );
    }
    if a.completions != b.completions {
        return format!(
            "io_uring completions differ:\n  ptrace: {:#?}\n  ebpf:   {:#?}",
            a.completions, b.completions
        );
    }
    format!(
        "initial state differs:\n  ptrace: {:?}\n  ebpf:   {:?}",
        a.paths, b.paths
    )
}

fn same_events(name: &str) {
    let _lock = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    common::require_ebpf();
    let tmp = tempfile::tempdir().expect("temporary directory");
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).expect("bin");
    let exe = build(name, &bin);
    let work = tmp.path().join("work");
    let mut normals = Vec::new();
    for backend in [Backend::Ptrace, Backend::Ebpf] {
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir(&work).expect("work dir");
        let trace = tmp.path().join(format!("{backend:?}.rtr"));
        record(backend, &[exe.clone().into(), work.clone().into()], &trace);
        normals.push(normalise(&trace));
    }
    assert!(
        normals[0] == normals[1],
        "{name}: the back ends disagree; first difference: {}",
        first_difference(&normals[0], &normals[1])
    );
}

macro_rules! parity {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            same_events(stringify!($name));
        }
    )*};
}

// Not here: edges (it polls /proc until a thread is stopped, a number of
// times that depends on timing), signals/stopcont/ticker/orphan (timing
// decides where a signal lands); crates/cli/tests/replay.rs records those
// with the default back end and replays them.
// uring_edges is this crate's: a forked child using its parent's ring, a
// registered ring descriptor, a ring polled by a kernel thread. So is
// leader_exit: a leader thread that ends before the process does, and
// leader_exec: one that ends before another thread execs and becomes the
// leader. And sigpipe: a signal the kernel sends with no siginfo.
parity!(
    files,
    dirs,
    stats,
    xattrs,
    mmaps,
    pipes,
    sockets,
    threads,
    forks,
    aio,
    uring,
    uring_edges,
    leader_exit,
    leader_exec,
    sigpipe
);
