//! What analysis needs to know about each system call, derived once from
//! the catalogue: which argument is the path or descriptor a call is
//! about, whether it moves data, and whether it makes descriptors.
//!
//! The facts come from the parameter kinds and effects of each catalogue
//! row, so a new row is analysed like the others.

use std::sync::OnceLock;

use reanimator_catalogue::{self as catalogue, aio, uring, Dir, Effect, Kind, Ret, StructType};
use reanimator_trace::{Role, SyscallEvent};

/// Which way a call moves data between a descriptor and user memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    /// The kernel fills the buffer (`read`, `pread64`, `recvmsg`, ...).
    Read,
    /// The program hands the buffer over (`write`, `pwritev`, `sendto`, ...).
    Write,
}

/// Facts about one system call number.
#[derive(Debug, Clone, Copy, Default)]
pub struct CallInfo {
    /// Index of the first `Path` parameter.
    pub path: Option<u8>,
    /// Index of the `DirFd` parameter the path is relative to.
    pub dirfd: Option<u8>,
    /// Index of the first `Fd` parameter.
    pub fd: Option<u8>,
    /// Index of the first `Offset` parameter.
    pub offset: Option<u8>,
    /// Index of the first `Size` parameter (a byte count asked for).
    pub count: Option<u8>,
    /// Index of the first `Flags` parameter.
    pub flags: Option<u8>,
    /// Data direction: set for calls that return a byte count, take a
    /// descriptor and pass a data buffer (a byte buffer, an iovec array or
    /// a message).
    pub io: Option<Io>,
    /// The return value is a new descriptor.
    pub returns_fd: bool,
    /// Index of an `int[2]` of new descriptors the call fills (pipe,
    /// socketpair).
    pub fd_pair: Option<u8>,
    /// Changes the working directory to its path or descriptor.
    pub chdir: bool,
    /// Closes its descriptor argument (`close`).
    pub closes: bool,
    /// `fcntl`, whose `F_DUPFD` and `F_DUPFD_CLOEXEC` return a copy of its
    /// descriptor (Python's `os.dup`, bash saving a descriptor).
    pub fcntl: bool,
    /// The Linux AIO requests or completions parameter, and which way
    /// its data goes (`io_submit` writes, `io_getevents` reads).
    pub aio: Option<(u8, Io)>,
    /// The io_uring requests and completions parameters (`io_uring_enter`
    /// writes what it submits, reads what completes).
    pub uring: Option<(u8, u8)>,
    /// The descriptor array of a call that registers resources with an
    /// io_uring (`io_uring_register`): with `IORING_REGISTER_FILES`, the
    /// files requests flagged `IOSQE_FIXED_FILE` name by index.
    pub uring_files: Option<u8>,
}

/// Where asynchronous requests go and their completions come back: keys
/// ([`Request`]) are only unique within one queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Queue {
    /// A Linux AIO context (`io_submit`'s and `io_getevents`' first
    /// argument).
    Aio(u64),
    /// An io_uring, by its descriptor.
    Ring(i32),
    /// An io_uring named by its index among the registered ring
    /// descriptors (`IORING_ENTER_REGISTERED_RING`): which ring that is,
    /// the trace does not tell (nor do recorders read its requests).
    RegisteredRing,
}

/// Which open file an asynchronous request acts on: the call that
/// submits it, and the one that sees it complete, are about that file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestFile {
    /// None: an io_uring `NOP`, timeout, cancel or path-based request.
    Nothing,
    /// A descriptor.
    Fd(i32),
    /// An index into the io_uring's registered files (`IOSQE_FIXED_FILE`).
    Registered(u32),
    /// Not captured: the request's `iocb` could not be read.
    Unknown,
}

/// What a call did with asynchronous requests, in order: the submissions
/// and completions path attribution pairs by key, whichever calls (and
/// threads) they come in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// A request submitted: the key its completion will carry (the
    /// `iocb` address for Linux AIO, `user_data` for io_uring) and the
    /// file it acts on.
    Submitted {
        /// `iocb` address or `user_data`.
        key: u64,
        /// The file.
        file: RequestFile,
    },
    /// A completion seen: its request's key, and whether the request is
    /// over (a multishot io_uring request completes several times).
    Completed {
        /// `iocb` address or `user_data`.
        key: u64,
        /// No more completions will come for this request.
        last: bool,
    },
    /// An `IORING_OP_FILES_UPDATE` request: the registered files change
    /// in a way the trace does not show.
    FilesUpdated,
}

/// The facts for `nr` (all unset for numbers the catalogue does not know).
pub fn info(nr: u32) -> CallInfo {
    static TABLE: OnceLock<Vec<CallInfo>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let max = catalogue::all().iter().map(|s| s.nr).max().unwrap_or(0);
        let mut t = vec![CallInfo::default(); max as usize + 1];
        for s in catalogue::all() {
            t[s.nr as usize] = derive(s);
        }
        t
    });
    table.get(nr as usize).copied().unwrap_or_default()
}

fn derive(s: &catalogue::Syscall) -> CallInfo {
    let mut c = CallInfo::default();
    let mut data = None;
    for (i, p) in s.params().iter().enumerate() {
        let i = i as u8;
        match p.kind {
            Kind::Path if c.path.is_none() => c.path = Some(i),
            Kind::DirFd if c.dirfd.is_none() => c.dirfd = Some(i),
            Kind::Fd if c.fd.is_none() => c.fd = Some(i),
            Kind::Offset if c.offset.is_none() => c.offset = Some(i),
            Kind::Size if c.count.is_none() => c.count = Some(i),
            Kind::Flags(_) if c.flags.is_none() => c.flags = Some(i),
            Kind::Buf { dir, .. } | Kind::IoVec { dir, .. } | Kind::MsgHdr { dir } => {
                data = data.or(Some(dir));
            }
            Kind::Struct {
                ty: StructType::FdPair,
                ..
            } => c.fd_pair = Some(i),
            Kind::IoCbs { .. } => c.aio = Some((i, Io::Write)),
            Kind::IoEvents => c.aio = Some((i, Io::Read)),
            Kind::UringSubmit => c.uring = Some((i, c.uring.map_or(0, |u| u.1))),
            Kind::UringComplete => c.uring = Some((c.uring.map_or(0, |u| u.0), i)),
            Kind::Struct {
                ty: StructType::Fds,
                ..
            } if s.effect == Effect::UringRegister => c.uring_files = Some(i),
            _ => {}
        }
    }
    if s.ret == Ret::Size && c.fd.is_some() {
        c.io = match data {
            Some(Dir::Out) => Some(Io::Read),
            Some(Dir::In) => Some(Io::Write),
            _ => None,
        };
    }
    c.returns_fd = s.ret == Ret::Fd;
    c.chdir = s.effect == Effect::Chdir;
    c.closes = s.effect == Effect::Close;
    c.fcntl = s.effect == Effect::Fcntl;
    c
}

/// Bytes a call read and wrote: its return value when it succeeded and
/// [`CallInfo::io`] is set; for Linux AIO and io_uring, the sums of its
/// [`transfers`] (an `io_uring_enter` can do both).
pub fn io_bytes(e: &SyscallEvent) -> (u64, u64) {
    let (mut read, mut written) = (0, 0);
    transfers(e, |io, n| match io {
        Io::Read => read += n,
        Io::Write => written += n,
    });
    (read, written)
}

/// Calls `f` with each transfer a call made, for size histograms: one
/// for a plain data call (its return value, when it succeeded and
/// [`CallInfo::io`] is set); one per request for Linux AIO, since an
/// `io_submit` of eight 4 KiB writes is eight transfers of 4 KiB: the
/// write requests an `io_submit` took (their size asked, counted when
/// submitted) and the reads an `io_getevents` reaped (the bytes they
/// brought in).
pub fn transfers(e: &SyscallEvent, mut f: impl FnMut(Io, u64)) {
    let c = info(e.nr);
    let Some(x) = e.exit.filter(|x| !x.is_error && x.ret >= 0) else {
        return;
    };
    if let Some(io) = c.io {
        return f(io, x.ret as u64);
    }
    if let Some((submit, complete)) = c.uring {
        return uring_transfers(e, submit, complete, f);
    }
    let Some((arg, io)) = c.aio else {
        return;
    };
    let n = x.ret as u64;
    let capture = |role, elem| e.capture_elem(arg, role, elem);
    match io {
        Io::Write => {
            for i in 0..n {
                let cb = capture(Role::Entry, aio::elem(i, 0))
                    .and_then(|c| c.data.as_deref())
                    .and_then(aio::Iocb::parse);
                if let Some(cb) = cb.filter(|cb| cb.writes()) {
                    let bytes = if cb.vectored() {
                        (1..=aio::IOV_MAX)
                            .map_while(|j| capture(Role::Entry, aio::elem(i, j)))
                            .map(|c| c.len)
                            .sum()
                    } else {
                        cb.nbytes
                    };
                    f(io, bytes);
                }
            }
        }
        Io::Read => {
            // Only reads' completions carry data captures.
            if let Some(events) = capture(Role::Exit, 0).and_then(|c| c.data.as_deref()) {
                for (i, ev) in aio::events(events).enumerate() {
                    if ev.res > 0 && capture(Role::Exit, aio::elem(i as u64, 1)).is_some() {
                        f(io, ev.res as u64);
                    }
                }
                return;
            }
            // Read without buffer data, the event array (in a blob when
            // over 64 bytes) is not at hand: the bytes each read's data
            // captures hold, which are all it read unless `--data` cut
            // them.
            let mut event = None;
            let mut bytes = 0;
            let parts = e.captures.iter().filter(|c| {
                c.arg == arg && c.role == Role::Exit && c.elem & ((1 << aio::SHIFT) - 1) != 0
            });
            for c in parts {
                let i = c.elem >> aio::SHIFT;
                if event.is_some_and(|at| at != i) {
                    f(io, bytes);
                    bytes = 0;
                }
                event = Some(i);
                bytes += c.captured;
            }
            if event.is_some() {
                f(io, bytes);
            }
        }
    }
}

/// The queue of a call that submits or reaps asynchronous requests (Linux
/// AIO, io_uring), and its requests and completions in order; `None` for
/// other calls. Submissions are the requests the call took (its return
/// value), completions the events it reaped (Linux AIO) or the CQEs
/// posted since the last call on the ring (io_uring, whoever consumes
/// them).
pub fn requests(e: &SyscallEvent) -> Option<(Queue, Vec<Request>)> {
    let c = info(e.nr);
    let done = e
        .exit
        .filter(|x| !x.is_error)
        .map_or(0, |x| x.ret.max(0) as usize);
    let mut out = Vec::new();
    if let Some((submit, complete)) = c.uring {
        // `io_uring_enter(fd, to_submit, min_complete, flags, ...)`.
        if e.args[3] & uring::ENTER_REGISTERED_RING != 0 {
            return Some((Queue::RegisteredRing, out));
        }
        for s in submitted_sqes(e, submit) {
            out.push(match s.opcode {
                uring::OP_FILES_UPDATE => Request::FilesUpdated,
                _ => Request::Submitted {
                    key: s.user_data,
                    file: if !s.names_file() {
                        RequestFile::Nothing
                    } else if s.flags & uring::SQE_FIXED_FILE != 0 {
                        RequestFile::Registered(s.fd as u32)
                    } else {
                        RequestFile::Fd(s.fd)
                    },
                },
            });
        }
        let cqes = e.capture_elem(complete, Role::Exit, 0);
        if let Some(cqes) = cqes.and_then(|c| c.data.as_deref()) {
            out.extend(uring::Cqe::all(cqes).map(|c| Request::Completed {
                key: c.user_data,
                last: c.flags & uring::CQE_F_MORE == 0,
            }));
        }
        return Some((Queue::Ring(e.args[0] as i32), out));
    }
    let (arg, io) = c.aio?;
    let queue = Queue::Aio(e.args[0]);
    let role = match io {
        Io::Write => Role::Entry,
        Io::Read => Role::Exit,
    };
    let Some(whole) = e.capture_elem(arg, role, 0).and_then(|c| c.data.as_deref()) else {
        return Some((queue, out));
    };
    match io {
        Io::Write => {
            for (i, at) in aio::pointers(whole).enumerate().take(done) {
                let cb = e
                    .capture_elem(arg, Role::Entry, aio::elem(i as u64, 0))
                    .and_then(|c| c.data.as_deref())
                    .and_then(aio::Iocb::parse);
                out.push(Request::Submitted {
                    key: at,
                    file: cb.map_or(RequestFile::Unknown, |cb| RequestFile::Fd(cb.fd)),
                });
            }
        }
        Io::Read => out.extend(aio::events(whole).take(done).map(|ev| Request::Completed {
            key: ev.obj,
            last: true,
        })),
    }
    Some((queue, out))
}

/// The SQEs an `io_uring_enter` submitted: those captured, up to the
/// number the kernel took (its return value).
fn submitted_sqes(e: &SyscallEvent, submit: u8) -> impl Iterator<Item = uring::Sqe> + '_ {
    let took = e
        .exit
        .filter(|x| !x.is_error)
        .map_or(0, |x| x.ret.max(0) as usize);
    let sqes = e
        .capture_elem(submit, Role::Entry, 0)
        .and_then(|c| c.data.as_deref())
        .unwrap_or_default();
    uring::Sqe::all(sqes).take(took)
}

/// [`transfers`] of an `io_uring_enter`: the write requests it submitted
/// (their size asked) and the reads among the completions it saw (the
/// bytes they brought in; a read whose completion the program took from
/// the ring before any call saw it has no data captured and is missed).
fn uring_transfers(e: &SyscallEvent, submit: u8, complete: u8, mut f: impl FnMut(Io, u64)) {
    let capture = |arg, role, elem| e.capture_elem(arg, role, elem);
    for (i, s) in submitted_sqes(e, submit)
        .enumerate()
        .filter(|(_, s)| s.writes())
    {
        let bytes = if s.vectored() {
            (1..=uring::IOV_MAX)
                .map_while(|j| capture(submit, Role::Entry, uring::elem(i as u64, j)))
                .map(|c| c.len)
                .sum()
        } else {
            u64::from(s.len)
        };
        f(Io::Write, bytes);
    }
    // Reads are the completions with data captures; their results, or
    // without buffer data (the CQE array, over 64 bytes, in a blob) the
    // bytes captured.
    let cqes: Vec<uring::Cqe> = capture(complete, Role::Exit, 0)
        .and_then(|c| c.data.as_deref())
        .map_or_else(Vec::new, |d| uring::Cqe::all(d).collect());
    let mut read: Vec<(u32, u64)> = Vec::new();
    for c in e.captures.iter().filter(|c| {
        c.arg == complete && c.role == Role::Exit && c.elem & ((1 << uring::SHIFT) - 1) != 0
    }) {
        let k = (c.elem >> uring::SHIFT) - 1;
        match read.last_mut() {
            Some((at, n)) if *at == k => *n += c.captured,
            _ => read.push((k, c.captured)),
        }
    }
    for (k, captured) in read {
        let res = cqes.get(k as usize).map(|c| c.res.max(0) as u64);
        f(Io::Read, res.unwrap_or(captured));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by(name: &str) -> CallInfo {
        info(catalogue::by_name(name).unwrap().nr)
    }

    #[test]
    fn data_calls_are_found_by_their_parameters() {
        for name in ["read", "pread64", "readv", "preadv2", "recvfrom", "recvmsg"] {
            assert_eq!(by(name).io, Some(Io::Read), "{name}");
        }
        for name in [
            "write", "pwrite64", "writev", "pwritev2", "sendto", "sendmsg",
        ] {
            assert_eq!(by(name).io, Some(Io::Write), "{name}");
        }
        for name in ["readlink", "getrandom", "openat", "fsync", "lseek"] {
            assert_eq!(by(name).io, None, "{name}");
        }
    }

    #[test]
    fn descriptor_facts() {
        let o = by("openat");
        assert_eq!((o.dirfd, o.path, o.returns_fd), (Some(0), Some(1), true));
        assert!(by("dup2").returns_fd && by("dup2").fd == Some(0));
        assert_eq!(by("pipe2").fd_pair, Some(0));
        assert!(by("close").closes && by("fchdir").chdir && by("chdir").chdir);
        assert_eq!(info(100_000).path, None);
    }

    #[test]
    fn linux_aio_bytes_come_from_requests_and_completions() {
        use reanimator_trace::{Bytes, Capture, CaptureStatus, SyscallExit};
        let cap = |arg, role, elem, data: Vec<u8>| Capture {
            arg,
            role,
            elem,
            status: CaptureStatus::Complete,
            len: data.len() as u64,
            captured: data.len() as u64,
            data: Some(Bytes::from(data)),
        };
        let call = |name: &str, ret: i64, captures| SyscallEvent {
            seq: 1,
            tgid: 1,
            tid: 1,
            nr: catalogue::by_name(name).unwrap().nr,
            enter_ns: 0,
            args: [0; 6],
            exit: Some(SyscallExit {
                exit_ns: 1,
                ret,
                is_error: false,
            }),
            captures,
        };
        let iocb = |op: u16, n: u64| {
            let mut b = vec![0u8; aio::IOCB_LEN];
            b[16..18].copy_from_slice(&op.to_le_bytes());
            b[32..40].copy_from_slice(&n.to_le_bytes());
            b
        };
        // Two writes and a read submitted; the call took only the first two.
        let submit = call(
            "io_submit",
            2,
            vec![
                cap(2, Role::Entry, 0, vec![0; 24]),
                cap(2, Role::Entry, aio::elem(0, 0), iocb(aio::PWRITE, 100)),
                cap(2, Role::Entry, aio::elem(1, 0), iocb(aio::PREAD, 50)),
                cap(2, Role::Entry, aio::elem(2, 0), iocb(aio::PWRITE, 7)),
            ],
        );
        assert_eq!(io_bytes(&submit), (0, 100));
        let mut each = Vec::new();
        transfers(&submit, |io, n| each.push((io, n)));
        assert_eq!(each, [(Io::Write, 100)], "the read request is not a write");
        // A read of 30 bytes and a write's completion of 100.
        let event =
            |res: i64| [[0u8; 16].to_vec(), res.to_le_bytes().to_vec(), vec![0; 8]].concat();
        let reap = call(
            "io_getevents",
            2,
            vec![
                cap(3, Role::Exit, 0, [event(30), event(100)].concat()),
                cap(3, Role::Exit, aio::elem(0, 1), vec![1; 30]),
            ],
        );
        assert_eq!(io_bytes(&reap), (30, 0));
        // Read without buffer data, the event array is not at hand: the
        // data captures' byte counts stand in.
        let mut bare = reap.clone();
        bare.captures[0].data = None;
        bare.captures[1].data = None;
        assert_eq!(io_bytes(&bare), (30, 0));

        // io_uring: one call submits a 4 KiB write and a read, and sees the
        // read's completion (12 bytes) and the write's.
        let sqe = |op: u8, len: u32| {
            let mut b = vec![0u8; uring::SQE_LEN];
            b[0] = op;
            b[24..28].copy_from_slice(&len.to_le_bytes());
            b
        };
        let cqe = |res: i32| [vec![0u8; 8], res.to_le_bytes().to_vec(), vec![0; 4]].concat();
        let enter = call(
            "io_uring_enter",
            2,
            vec![
                cap(
                    1,
                    Role::Entry,
                    0,
                    [sqe(uring::OP_WRITE, 4096), sqe(uring::OP_READ, 64)].concat(),
                ),
                cap(1, Role::Entry, uring::elem(0, 1), vec![2; 4096]),
                cap(2, Role::Exit, 0, [cqe(12), cqe(4096)].concat()),
                cap(2, Role::Exit, uring::elem(0, 1), vec![3; 12]),
            ],
        );
        assert_eq!(io_bytes(&enter), (12, 4096));
        // Requests the kernel did not take (past its return value) moved
        // nothing.
        let mut took_none = enter.clone();
        took_none.exit.as_mut().unwrap().ret = 0;
        assert_eq!(io_bytes(&took_none), (12, 0));
        let mut each = Vec::new();
        transfers(&enter, |io, n| each.push((io, n)));
        assert_eq!(each, [(Io::Write, 4096), (Io::Read, 12)]);
    }
}
