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
//! - a Linux AIO `io_submit` is about the path of its requests'
//!   descriptor, and the `io_getevents` that reaps them about the same
//!   (requests are known by their `iocb` address); a call whose requests
//!   name several paths is about none.
//!
//! Not followed: descriptors closed by `execve` (close-on-exec) or
//! `close_range`, descriptors passed over sockets. A
//! descriptor the tracker does not know is attributed to no path.

use std::collections::HashMap;
use std::sync::Arc;

use reanimator_catalogue::{self as catalogue, aio};
use reanimator_fsstate::join;
use reanimator_trace::{ExitStatus, ProcessStart, Record, Role, SyscallEvent};

use crate::calls;

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
    /// Linux AIO requests submitted and not yet reaped, by `iocb` address:
    /// the path of the descriptor each names.
    aio: HashMap<u64, Option<PathName>>,
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
        } else if let Some((arg, io)) = info.aio {
            aio_path(proc, e, arg, io)
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

/// The one path the Linux AIO requests of `e` are about (see the module
/// documentation); an `io_submit` remembers its requests' paths for the
/// `io_getevents` that reaps them.
fn aio_path(proc: &mut Process, e: &SyscallEvent, arg: u8, io: calls::Io) -> Option<PathName> {
    let done = e
        .exit
        .filter(|x| !x.is_error)
        .map_or(0, |x| x.ret.max(0) as usize);
    let whole = e.capture_elem(
        arg,
        if io == calls::Io::Write {
            Role::Entry
        } else {
            Role::Exit
        },
        0,
    );
    let whole = whole.and_then(|c| c.data.as_deref())?;
    let mut paths = Vec::new();
    match io {
        calls::Io::Write => {
            for (i, at) in aio::pointers(whole).enumerate().take(done) {
                let path = e
                    .capture_elem(arg, Role::Entry, aio::elem(i as u64, 0))
                    .and_then(|c| c.data.as_deref())
                    .and_then(aio::Iocb::parse)
                    .and_then(|cb| proc.fds.get(&cb.fd).cloned());
                proc.aio.insert(at, path.clone());
                paths.push(path);
            }
        }
        calls::Io::Read => {
            for ev in aio::events(whole).take(done) {
                paths.push(proc.aio.remove(&ev.obj).flatten());
            }
        }
    }
    let first = paths.first()?.clone()?;
    paths
        .iter()
        .all(|p| p.as_ref() == Some(&first))
        .then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
