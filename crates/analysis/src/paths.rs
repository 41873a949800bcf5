//! Which file each system call is about: the path it names, or the path
//! its descriptor was opened with.
//!
//! A [`PathTracker`] follows, per process, the working directory and a
//! table from descriptor to path, fed by every record in trace order:
//!
//! - process starts give the working directory and the descriptors open
//!   when the recorder began following the process (their `/proc` link
//!   text: a path, `pipe:[N]`, `socket:[N]`); a process that starts with
//!   none inherits its parent's table;
//! - a successful call that returns a descriptor maps it to the call's
//!   path (`open`, `openat`, `creat`, joined with the working directory or
//!   the directory descriptor), to its descriptor argument's path (`dup*`,
//!   `fcntl(F_DUPFD*)`, `accept*`), or to `<name>` for descriptors with no path (`<socket>`,
//!   `<eventfd2>`); `pipe`/`socketpair` map both new descriptors;
//! - a call with an empty path relative to a descriptor (`AT_EMPTY_PATH`:
//!   glibc's `fstat`) is about that descriptor's path or label; a
//!   relative path under a label is about none;
//! - `close` forgets a descriptor; `chdir`/`fchdir` move the working
//!   directory;
//! - a call that submits asynchronous requests is about the path of the
//!   files they act on, and a call that sees their completions about the
//!   same: Linux AIO's `io_submit` and the `io_getevents` that reaps them
//!   (requests known by their `iocb` address), io_uring's
//!   `io_uring_enter` that submits SQEs and the one (maybe another
//!   thread's) whose exit sees their CQEs (known by `user_data`, per
//!   ring). An io_uring request names a descriptor, or with
//!   `IOSQE_FIXED_FILE` an index into the files `IORING_REGISTER_FILES`
//!   registered with the ring; requests that name no file (`NOP`,
//!   timeouts) do not count. A call whose requests name several paths,
//!   or a file the tracker does not know (a registered file replaced by
//!   an update, a completion whose submission it never saw), is about
//!   none; an `io_uring_enter` with no request on a file (a wait that
//!   saw no completion) stays about its ring (`<io_uring_setup>`).
//!
//! Not followed: descriptors closed by `execve` (close-on-exec),
//! `close_range` or io_uring requests, descriptors passed over sockets.
//! A descriptor the tracker does not know is attributed to no path.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use reanimator_catalogue::{self as catalogue, uring};
use reanimator_fsstate::join;
use reanimator_trace::{CaptureStatus, ExitStatus, ProcessStart, Record, Role, SyscallEvent};

use crate::calls::{self, Queue, Request, RequestFile};

/// A path, shared between the descriptor table and the records it is
/// attributed to.
pub type PathName = Arc<[u8]>;

/// `AT_FDCWD` in a 32-bit descriptor argument.
const AT_FDCWD: i32 = -100;
/// `fcntl` commands that copy a descriptor (linux/fcntl.h).
const F_DUPFD: u64 = 0;
const F_DUPFD_CLOEXEC: u64 = 1030;

#[derive(Debug, Default, Clone)]
struct Process {
    cwd: Option<PathName>,
    fds: HashMap<i32, PathName>,
    /// Asynchronous requests in flight and registered files, by queue
    /// (Linux AIO context, io_uring descriptor).
    queues: HashMap<Queue, Pending>,
}

/// What one queue's requests are about.
#[derive(Debug, Default, Clone)]
struct Pending {
    /// Requests submitted and not yet completed, by key (`iocb` address,
    /// `user_data`), in submission order: several in flight may share a
    /// `user_data`, and complete in the order they were submitted as far
    /// as attribution can tell.
    requests: HashMap<u64, VecDeque<About>>,
    /// The files registered with an io_uring (`IORING_REGISTER_FILES`),
    /// by index: `None` when none were or an update changed them in a
    /// way the trace does not show.
    files: Option<Vec<Option<PathName>>>,
}

/// What one asynchronous request is about.
#[derive(Debug, Clone, PartialEq)]
enum About {
    /// No file: it does not change which path its call is about.
    Nothing,
    /// A file the tracker does not know: its call is about no path.
    Unknown,
    /// The file opened with this path.
    Path(PathName),
}

/// Follows descriptors and working directories to attribute calls to
/// paths; see the module documentation.
#[derive(Debug, Default)]
pub struct PathTracker {
    procs: HashMap<u32, Process>,
}

impl PathTracker {
    /// A tracker that knows no process yet.
    pub fn new() -> Self {
        PathTracker::default()
    }

    /// Takes in the next record of the trace and returns the path a system
    /// call is about (`None` for other records and for calls with no path
    /// or an unknown descriptor). Buffer data must have been loaded for
    /// paths longer than 64 bytes (`ReadOptions { data: true }`).
    pub fn observe(&mut self, r: &Record) -> Option<PathName> {
        match r {
            Record::Syscall(e) => self.syscall(e),
            Record::ProcessStart(p) => {
                self.start(p);
                None
            }
            Record::ProcessExit(p) => {
                let ended = matches!(p.status, ExitStatus::Exited(_) | ExitStatus::Killed { .. });
                if ended && p.tid == p.tgid {
                    self.procs.remove(&p.tgid);
                }
                None
            }
            _ => None,
        }
    }

    fn start(&mut self, p: &ProcessStart) {
        if p.tid != p.tgid && self.procs.contains_key(&p.tgid) {
            return; // a new thread shares its process's table
        }
        let mut proc = Process {
            cwd: (!p.cwd.is_empty()).then(|| p.cwd.as_slice().into()),
            ..Process::default()
        };
        if p.fds.is_empty() {
            if let Some(parent) = self.procs.get(&p.ppid) {
                proc.fds = parent.fds.clone();
            }
        } else {
            for f in &p.fds {
                proc.fds.insert(f.fd, f.target.as_slice().into());
            }
        }
        self.procs.insert(p.tgid, proc);
    }

    fn syscall(&mut self, e: &SyscallEvent) -> Option<PathName> {
        let info = calls::info(e.nr);
        let proc = self.procs.entry(e.tgid).or_default();
        let arg_fd = |i: u8| e.args[i as usize] as i32;
        let path: Option<PathName> = if let Some(i) = info.path {
            e.capture(i, Role::Entry)
                .and_then(|c| c.data.as_deref())
                .and_then(|rel| {
                    let base = match info.dirfd.map(arg_fd) {
                        Some(fd) if fd != AT_FDCWD => proc.fds.get(&fd),
                        _ => proc.cwd.as_ref(),
                    };
                    match base {
                        // An empty path (`AT_EMPTY_PATH`) is the
                        // descriptor itself: a file, or a pipe's label.
                        Some(base) if rel.is_empty() => Some(Arc::clone(base)),
                        // A label (`<pipe2>`, `pipe:[N]`) is no directory.
                        Some(base) if base.first() != Some(&b'/') && rel.first() != Some(&b'/') => {
                            None
                        }
                        Some(base) => Some(join(base, rel).into()),
                        None if rel.first() == Some(&b'/') => Some(join(b"/", rel).into()),
                        None => Some(rel.into()),
                    }
                })
        } else if let Some((queue, requests)) = calls::requests(e) {
            queue_path(proc, queue, &requests)
        } else {
            info.fd.and_then(|i| proc.fds.get(&arg_fd(i)).cloned())
        };
        let Some(x) = e.exit.filter(|x| !x.is_error) else {
            return path;
        };
        if info.returns_fd {
            let target = match &path {
                Some(p) => Some(Arc::clone(p)),
                None if info.path.is_none() && info.fd.is_none() => {
                    Some(format!("<{}>", catalogue::name_of(e.nr)).as_bytes().into())
                }
                None => None,
            };
            let fd = x.ret as i32;
            match target {
                Some(t) => proc.fds.insert(fd, t),
                None => proc.fds.remove(&fd),
            };
            proc.queues.remove(&Queue::Ring(fd));
        }
        if let Some(i) = info.fd_pair {
            let pair = e
                .capture(i, Role::Exit)
                .and_then(|c| c.data.as_deref())
                .filter(|d| d.len() >= 8);
            if let Some(d) = pair {
                let label: PathName = format!("<{}>", catalogue::name_of(e.nr)).as_bytes().into();
                for half in [&d[0..4], &d[4..8]] {
                    let fd = i32::from_le_bytes(half.try_into().expect("4 bytes"));
                    proc.fds.insert(fd, Arc::clone(&label));
                }
            }
        }
        if info.closes {
            proc.fds.remove(&arg_fd(0));
            proc.queues.remove(&Queue::Ring(arg_fd(0)));
        }
        if let Some(i) = info.uring_files {
            register_files(proc, e, i);
        }
        if info.fcntl && matches!(e.args[1], F_DUPFD | F_DUPFD_CLOEXEC) {
            let fd = x.ret as i32;
            match &path {
                Some(p) => proc.fds.insert(fd, Arc::clone(p)),
                None => proc.fds.remove(&fd),
            };
        }
        if info.chdir {
            if let Some(p) = &path {
                proc.cwd = Some(Arc::clone(p));
            }
        }
        path
    }
}

/// The one path the asynchronous requests a call submitted or saw
/// complete are about (see the module documentation). Submissions are
/// remembered for the completions, which may come in another call.
fn queue_path(proc: &mut Process, queue: Queue, requests: &[Request]) -> Option<PathName> {
    if queue == Queue::RegisteredRing {
        return None;
    }
    let pending = proc.queues.entry(queue).or_default();
    // `None`: no request on a file yet; `Some(None)`: no one path.
    let mut path: Option<Option<PathName>> = None;
    for r in requests {
        let about = match *r {
            Request::Submitted { key, file } => {
                let about = match file {
                    RequestFile::Nothing => About::Nothing,
                    RequestFile::Unknown => About::Unknown,
                    RequestFile::Fd(fd) => proc
                        .fds
                        .get(&fd)
                        .cloned()
                        .map_or(About::Unknown, About::Path),
                    RequestFile::Registered(i) => pending
                        .files
                        .as_ref()
                        .and_then(|f| f.get(i as usize).cloned().flatten())
                        .map_or(About::Unknown, About::Path),
                };
                pending
                    .requests
                    .entry(key)
                    .or_default()
                    .push_back(about.clone());
                about
            }
            Request::Completed { key, last } => {
                let about = match pending.requests.get_mut(&key) {
                    Some(q) if last => q.pop_front(),
                    Some(q) => q.front().cloned(),
                    None => None,
                };
                if pending.requests.get(&key).is_some_and(VecDeque::is_empty) {
                    pending.requests.remove(&key);
                }
                about.unwrap_or(About::Unknown)
            }
            Request::FilesUpdated => {
                pending.files = None;
                About::Nothing
            }
        };
        path = match (about, path) {
            (About::Nothing, path) => path,
            (About::Unknown, _) => Some(None),
            (About::Path(p), None) => Some(Some(p)),
            (About::Path(p), Some(Some(q))) if p == q => Some(Some(q)),
            (About::Path(_), Some(_)) => Some(None),
        };
    }
    match (path, queue) {
        (Some(path), _) => path,
        // No request on a file: a ring's call is about the ring.
        (None, Queue::Ring(fd)) => proc.fds.get(&fd).cloned(),
        (None, _) => None,
    }
}

/// Follows the files `io_uring_register` registers with a ring, which
/// requests flagged `IOSQE_FIXED_FILE` name by index: the array of
/// `IORING_REGISTER_FILES` (argument `arg`); other changes to them
/// (updates, `IORING_REGISTER_FILES2`) the trace does not show, and leave
/// them unknown. Called for calls that succeeded.
fn register_files(proc: &mut Process, e: &SyscallEvent, arg: u8) {
    // `io_uring_register(fd, opcode, arg, nr_args)`.
    let opcode = e.args[1];
    if opcode & uring::REGISTER_USE_REGISTERED_RING != 0 {
        return; // a ring by registered index: which one is unknown
    }
    let files = match opcode {
        uring::REGISTER_FILES => e
            .capture(arg, Role::Entry)
            .filter(|c| c.status == CaptureStatus::Complete)
            .and_then(|c| c.data.as_deref())
            .map(|list| {
                catalogue::gids(list)
                    .map(|fd| proc.fds.get(&(fd as i32)).cloned())
                    .collect()
            }),
        uring::UNREGISTER_FILES
        | uring::REGISTER_FILES_UPDATE
        | uring::REGISTER_FILES2
        | uring::REGISTER_FILES_UPDATE2 => None,
        _ => return,
    };
    proc.queues
        .entry(Queue::Ring(e.args[0] as i32))
        .or_default()
        .files = files;
}

#[cfg(test)]
mod tests {
    use super::*;
    use reanimator_catalogue::aio;
    use reanimator_trace::{Capture, CaptureStatus, FdInfo, SyscallExit};

    fn call(nr: u32, args: [u64; 6], ret: i64, caps: Vec<Capture>) -> Record {
        Record::Syscall(SyscallEvent {
            seq: 0,
            tgid: 10,
            tid: 10,
            nr,
            enter_ns: 0,
            args,
            exit: Some(SyscallExit {
                exit_ns: 1,
                ret,
                is_error: ret < 0,
            }),
            captures: caps,
        })
    }

    fn cap(arg: u8, role: Role, d: &[u8]) -> Capture {
        Capture {
            arg,
            role,
            elem: 0,
            status: CaptureStatus::Complete,
            len: d.len() as u64,
            captured: d.len() as u64,
            data: Some(d.to_vec().into()),
        }
    }

    fn nr(name: &str) -> u32 {
        catalogue::by_name(name).unwrap().nr
    }

    fn seen(t: &mut PathTracker, r: Record) -> Option<String> {
        t.observe(&r)
            .map(|p| String::from_utf8_lossy(&p).into_owned())
    }

    #[test]
    fn descriptors_carry_the_path_they_were_opened_with() {
        let mut t = PathTracker::new();
        t.observe(&Record::ProcessStart(ProcessStart {
            tgid: 10,
            tid: 10,
            cwd: b"/work".to_vec(),
            fds: vec![FdInfo {
                fd: 1,
                target: b"/dev/pts/0".to_vec(),
                ..FdInfo::default()
            }],
            ..ProcessStart::default()
        }));
        let at = (-100i64) as u64;
        let open = call(
            nr("openat"),
            [at, 0, 0, 0, 0, 0],
            3,
            vec![cap(1, Role::Entry, b"db/x.log")],
        );
        assert_eq!(seen(&mut t, open).as_deref(), Some("/work/db/x.log"));
        let write = call(nr("write"), [3, 0, 5, 0, 0, 0], 5, vec![]);
        assert_eq!(seen(&mut t, write).as_deref(), Some("/work/db/x.log"));
        let dup = call(nr("dup2"), [3, 7, 0, 0, 0, 0], 7, vec![]);
        assert_eq!(seen(&mut t, dup).as_deref(), Some("/work/db/x.log"));
        // fcntl(3, F_DUPFD_CLOEXEC, 10) = 12 (Python's os.dup); F_GETFL
        // makes none.
        let fcntl = call(nr("fcntl"), [3, 1030, 10, 0, 0, 0], 12, vec![]);
        assert_eq!(seen(&mut t, fcntl).as_deref(), Some("/work/db/x.log"));
        let write = call(nr("write"), [12, 0, 1, 0, 0, 0], 1, vec![]);
        assert_eq!(seen(&mut t, write).as_deref(), Some("/work/db/x.log"));
        t.observe(&call(nr("fcntl"), [3, 3, 0, 0, 0, 0], 13, vec![]));
        let write = call(nr("write"), [13, 0, 1, 0, 0, 0], 1, vec![]);
        assert_eq!(seen(&mut t, write), None);
        let rel = call(
            nr("openat"),
            [7, 0, 0, 0, 0, 0],
            8,
            vec![cap(1, Role::Entry, b"y")],
        );
        assert_eq!(seen(&mut t, rel).as_deref(), Some("/work/db/x.log/y"));
        assert_eq!(
            seen(&mut t, call(nr("write"), [1, 0, 1, 0, 0, 0], 1, vec![])).as_deref(),
            Some("/dev/pts/0")
        );
        let close = call(nr("close"), [3, 0, 0, 0, 0, 0], 0, vec![]);
        assert_eq!(seen(&mut t, close).as_deref(), Some("/work/db/x.log"));
        assert_eq!(
            seen(&mut t, call(nr("write"), [3, 0, 1, 0, 0, 0], 1, vec![])),
            None
        );
        let sock = call(nr("socket"), [1, 1, 0, 0, 0, 0], 3, vec![]);
        assert_eq!(seen(&mut t, sock), None);
        assert_eq!(
            seen(&mut t, call(nr("write"), [3, 0, 1, 0, 0, 0], 1, vec![])).as_deref(),
            Some("<socket>")
        );
        let mut pair = 4i32.to_le_bytes().to_vec();
        pair.extend(5i32.to_le_bytes());
        t.observe(&call(
            nr("pipe2"),
            [0; 6],
            0,
            vec![cap(0, Role::Exit, &pair)],
        ));
        assert_eq!(
            seen(&mut t, call(nr("read"), [5, 0, 1, 0, 0, 0], 1, vec![])).as_deref(),
            Some("<pipe2>")
        );
        // fstat as glibc makes it: `newfstatat(fd, "", AT_EMPTY_PATH)`.
        let empty_path = |fd: u64| {
            call(
                nr("newfstatat"),
                [fd, 0, 0, 0x1000, 0, 0],
                0,
                vec![cap(1, Role::Entry, b"")],
            )
        };
        assert_eq!(seen(&mut t, empty_path(5)).as_deref(), Some("<pipe2>"));
        assert_eq!(
            seen(&mut t, empty_path(7)).as_deref(),
            Some("/work/db/x.log")
        );
        let under_a_pipe = call(
            nr("openat"),
            [5, 0, 0, 0, 0, 0],
            -20,
            vec![cap(1, Role::Entry, b"x")],
        );
        assert_eq!(seen(&mut t, under_a_pipe), None);
        t.observe(&call(
            nr("chdir"),
            [0; 6],
            0,
            vec![cap(0, Role::Entry, b"/tmp/./a")],
        ));
        let stat = call(nr("stat"), [0; 6], 0, vec![cap(0, Role::Entry, b"b")]);
        assert_eq!(seen(&mut t, stat).as_deref(), Some("/tmp/a/b"));
    }

    /// Linux AIO calls name their files only inside their requests.
    #[test]
    fn aio_calls_are_about_the_files_their_requests_name() {
        let mut t = PathTracker::new();
        let at = (-100i64) as u64;
        for (fd, name) in [(3, b"/db/a".as_slice()), (4, b"/db/b".as_slice())] {
            let open = call(
                nr("openat"),
                [at, 0, 0, 0, 0, 0],
                fd,
                vec![cap(1, Role::Entry, name)],
            );
            t.observe(&open);
        }
        let iocb = |fd: i32| {
            let mut b = vec![0u8; aio::IOCB_LEN];
            b[16..18].copy_from_slice(&aio::PWRITE.to_le_bytes());
            b[20..24].copy_from_slice(&fd.to_le_bytes());
            b
        };
        let submit = |addrs: &[u64], fds: &[i32]| {
            let array: Vec<u8> = addrs.iter().flat_map(|a| a.to_le_bytes()).collect();
            let mut caps = vec![cap(2, Role::Entry, &array)];
            for (i, &fd) in fds.iter().enumerate() {
                caps.push(Capture {
                    elem: aio::elem(i as u64, 0),
                    ..cap(2, Role::Entry, &iocb(fd))
                });
            }
            call(
                nr("io_submit"),
                [7, addrs.len() as u64, 0, 0, 0, 0],
                addrs.len() as i64,
                caps,
            )
        };
        let reap = |addrs: &[u64]| {
            let events: Vec<u8> = addrs
                .iter()
                .flat_map(|a| [0u64, *a, 4096, 0].into_iter().flat_map(u64::to_le_bytes))
                .collect();
            call(
                nr("io_getevents"),
                [7, 1, addrs.len() as u64, 0, 0, 0],
                addrs.len() as i64,
                vec![cap(3, Role::Exit, &events)],
            )
        };
        assert_eq!(
            seen(&mut t, submit(&[0x100, 0x200], &[3, 3])).as_deref(),
            Some("/db/a")
        );
        assert_eq!(
            seen(&mut t, submit(&[0x300], &[4])).as_deref(),
            Some("/db/b")
        );
        assert_eq!(
            seen(&mut t, reap(&[0x200, 0x100])).as_deref(),
            Some("/db/a")
        );
        assert_eq!(seen(&mut t, reap(&[0x300])).as_deref(), Some("/db/b"));
        // Several files in one call, or a request never seen: no path.
        assert_eq!(seen(&mut t, submit(&[0x100, 0x300], &[3, 4])), None);
        assert_eq!(seen(&mut t, reap(&[0x100, 0x300])), None);
        assert_eq!(seen(&mut t, reap(&[0x999])), None);
    }

    /// io_uring requests name their files only inside the SQEs; their
    /// completions come in whichever call sees the CQEs, maybe another
    /// thread's, and name only `user_data`.
    #[test]
    fn io_uring_calls_are_about_the_files_their_requests_name() {
        let mut t = PathTracker::new();
        let at = (-100i64) as u64;
        t.observe(&call(nr("io_uring_setup"), [8, 0, 0, 0, 0, 0], 3, vec![]));
        for (fd, name) in [(4, b"/db/out.dat".as_slice()), (5, b"/db/b".as_slice())] {
            t.observe(&call(
                nr("openat"),
                [at, 0, 0, 0, 0, 0],
                fd,
                vec![cap(1, Role::Entry, name)],
            ));
        }
        let sqe = |op: u8, flags: u8, fd: i32, user_data: u64| {
            let mut b = vec![0u8; uring::SQE_LEN];
            b[0] = op;
            b[1] = flags;
            b[4..8].copy_from_slice(&fd.to_le_bytes());
            b[24..28].copy_from_slice(&4096u32.to_le_bytes());
            b[32..40].copy_from_slice(&user_data.to_le_bytes());
            b
        };
        let write = |fd: i32, user_data: u64| sqe(uring::OP_WRITE, 0, fd, user_data);
        // io_uring_enter(ring, to_submit, min_complete, flags) = submitted,
        // with the SQEs at entry and the CQEs seen at exit.
        let enter = |ring: u64, flags: u64, sqes: &[Vec<u8>], cqes: &[(u64, u32)]| {
            let mut caps = Vec::new();
            if !sqes.is_empty() {
                caps.push(cap(1, Role::Entry, &sqes.concat()));
            }
            if !cqes.is_empty() {
                let c: Vec<u8> = cqes
                    .iter()
                    .flat_map(|&(ud, flags)| {
                        [
                            ud.to_le_bytes().to_vec(),
                            4096i32.to_le_bytes().to_vec(),
                            flags.to_le_bytes().to_vec(),
                        ]
                        .concat()
                    })
                    .collect();
                caps.push(cap(2, Role::Exit, &c));
            }
            call(
                nr("io_uring_enter"),
                [ring, sqes.len() as u64, 1, flags, 0, 0],
                sqes.len() as i64,
                caps,
            )
        };
        let seen_enter = |t: &mut PathTracker, sqes: &[Vec<u8>], cqes: &[(u64, u32)]| {
            seen(t, enter(3, 0, sqes, cqes))
        };
        let out = Some("/db/out.dat");

        // The reproducer's: a write submitted, reaped by another call.
        assert_eq!(seen_enter(&mut t, &[write(4, 42)], &[]).as_deref(), out);
        assert_eq!(seen_enter(&mut t, &[], &[(42, 0)]).as_deref(), out);
        // A wait that saw nothing is about the ring; a completion whose
        // submission was never seen, about no path.
        assert_eq!(
            seen_enter(&mut t, &[], &[]).as_deref(),
            Some("<io_uring_setup>")
        );
        assert_eq!(seen_enter(&mut t, &[], &[(42, 0)]), None);
        // Requests naming no file (a NOP whose fd is 0) do not count, even
        // when the call sees their completions.
        let nop = sqe(uring::OP_NOP, 0, 0, 7);
        assert_eq!(
            seen_enter(&mut t, &[nop.clone(), write(4, 1)], &[(1, 0)]).as_deref(),
            out
        );
        assert_eq!(
            seen_enter(&mut t, &[], &[(7, 0)]).as_deref(),
            Some("<io_uring_setup>")
        );
        // Two files in one call: no path.
        assert_eq!(seen_enter(&mut t, &[write(4, 2), write(5, 3)], &[]), None);
        assert_eq!(seen_enter(&mut t, &[], &[(3, 0)]).as_deref(), Some("/db/b"));
        assert_eq!(seen_enter(&mut t, &[], &[(2, 0)]).as_deref(), out);
        // Requests in flight with the same user_data complete in order; a
        // multishot request's completions flagged "more" keep it in flight.
        seen_enter(&mut t, &[write(5, 9), write(4, 9)], &[]);
        assert_eq!(seen_enter(&mut t, &[], &[(9, 0)]).as_deref(), Some("/db/b"));
        assert_eq!(seen_enter(&mut t, &[], &[(9, 0)]).as_deref(), out);
        seen_enter(&mut t, &[write(5, 8)], &[]);
        for _ in 0..2 {
            let more = (8, uring::CQE_F_MORE);
            assert_eq!(seen_enter(&mut t, &[], &[more]).as_deref(), Some("/db/b"));
        }
        assert_eq!(seen_enter(&mut t, &[], &[(8, 0)]).as_deref(), Some("/db/b"));
        assert_eq!(seen_enter(&mut t, &[], &[(8, 0)]), None);
        // Only what the kernel took (the return value) was submitted.
        let mut short = enter(3, 0, &[write(4, 5), write(5, 6)], &[]);
        if let Record::Syscall(e) = &mut short {
            e.exit.as_mut().unwrap().ret = 1;
        }
        assert_eq!(seen(&mut t, short).as_deref(), out);

        // Registered files: IORING_REGISTER_FILES([5, 4]), then requests
        // name them by index.
        let fds: Vec<u8> = [5i32, 4].iter().flat_map(|fd| fd.to_le_bytes()).collect();
        let register = |op: u64, caps: Vec<Capture>| {
            call(nr("io_uring_register"), [3, op, 0, 2, 0, 0], 0, caps)
        };
        t.observe(&register(
            uring::REGISTER_FILES,
            vec![cap(2, Role::Entry, &fds)],
        ));
        let fixed = |i: i32, user_data| sqe(uring::OP_WRITE, uring::SQE_FIXED_FILE, i, user_data);
        assert_eq!(
            seen_enter(&mut t, &[fixed(0, 10)], &[]).as_deref(),
            Some("/db/b")
        );
        assert_eq!(
            seen_enter(&mut t, &[], &[(10, 0)]).as_deref(),
            Some("/db/b")
        );
        assert_eq!(seen_enter(&mut t, &[fixed(1, 11)], &[]).as_deref(), out);
        assert_eq!(seen_enter(&mut t, &[fixed(2, 12)], &[]), None);
        // An update the trace does not show: the registered files are
        // unknown from then on.
        t.observe(&register(uring::REGISTER_FILES_UPDATE, vec![]));
        assert_eq!(seen_enter(&mut t, &[fixed(0, 13)], &[]), None);
        t.observe(&register(
            uring::REGISTER_FILES,
            vec![cap(2, Role::Entry, &fds)],
        ));
        let update = sqe(uring::OP_FILES_UPDATE, 0, -1, 14);
        assert_eq!(
            seen_enter(&mut t, &[update], &[]).as_deref(),
            Some("<io_uring_setup>")
        );
        assert_eq!(seen_enter(&mut t, &[fixed(0, 15)], &[]), None);

        // A ring named by its registered index (here 4, not descriptor
        // 4): which one is unknown.
        let by_index = enter(4, uring::ENTER_REGISTERED_RING, &[], &[]);
        assert_eq!(seen(&mut t, by_index), None);
        // A closed ring's requests in flight are gone with it.
        seen_enter(&mut t, &[write(4, 16)], &[]);
        t.observe(&call(nr("close"), [3, 0, 0, 0, 0, 0], 0, vec![]));
        t.observe(&call(nr("io_uring_setup"), [8, 0, 0, 0, 0, 0], 3, vec![]));
        assert_eq!(seen_enter(&mut t, &[], &[(16, 0)]), None);
    }

    /// `stats --by path` counts an io_uring write where its request went.
    #[test]
    fn io_uring_bytes_count_for_the_file_their_request_names() {
        use crate::{GroupBy, Item, Stats};
        let mut t = PathTracker::new();
        let mut stats = Stats::new(GroupBy::Path);
        let at = (-100i64) as u64;
        let mut sqe = vec![0u8; uring::SQE_LEN];
        sqe[0] = uring::OP_WRITE;
        sqe[4..8].copy_from_slice(&4i32.to_le_bytes());
        sqe[24..28].copy_from_slice(&4096u32.to_le_bytes());
        sqe[32..40].copy_from_slice(&42u64.to_le_bytes());
        let cqe = [
            42u64.to_le_bytes().to_vec(),
            4096i32.to_le_bytes().to_vec(),
            vec![0; 4],
        ]
        .concat();
        for r in [
            call(nr("io_uring_setup"), [8, 0, 0, 0, 0, 0], 3, vec![]),
            call(
                nr("openat"),
                [at, 0, 0, 0, 0, 0],
                4,
                vec![cap(1, Role::Entry, b"/w/out.dat")],
            ),
            call(
                nr("io_uring_enter"),
                [3, 1, 0, 0, 0, 0],
                1,
                vec![cap(1, Role::Entry, &sqe)],
            ),
            call(
                nr("io_uring_enter"),
                [3, 0, 1, 1, 0, 0],
                0,
                vec![cap(2, Role::Exit, &cqe)],
            ),
            call(nr("io_uring_enter"), [3, 0, 1, 1, 0, 0], 0, vec![]),
        ] {
            let path = t.observe(&r);
            stats.add(&Item { record: r, path });
        }
        let report = stats.report();
        let group = |key: &str| report.groups.iter().find(|g| g.key == key).unwrap();
        let out = group("/w/out.dat");
        assert_eq!((out.calls, out.bytes_written), (3, 4096));
        let ring = group("<io_uring_setup>");
        assert_eq!((ring.calls, ring.bytes_written), (1, 0));
    }
}
