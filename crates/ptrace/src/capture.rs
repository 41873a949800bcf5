//! Catalogue-driven capture: which tracee memory a system call names, how
//! many bytes, and when to read it. Nothing here knows any syscall by
//! name; every decision comes from the catalogue row's parameter kinds.

use reanimator_catalogue::{aio, Dir, Kind, Len, Syscall};
use reanimator_record::capture::{take_bytes, take_mapped, Bytes};
use reanimator_record::{read_mem, CaptureCounts, Captures, DataPolicy};
use reanimator_trace::{CaptureHead, CaptureStatus, Role, CONTROL_ELEM, CONTROL_MAX};

use reanimator_record::mappings::overlaps;

/// Longest path read (`PATH_MAX`).
const PATH_MAX: usize = 4096;
/// Longest non-path string, and longest argv/envp element (`MAX_ARG_STRLEN`).
const STR_MAX: usize = 128 << 10;
/// Most argv/envp elements read.
const STR_ARRAY_MAX: usize = 1 << 16;
/// Largest length taken from a length pointer (`socklen_t *`).
const LEN_PTR_MAX: u64 = 64 << 10;
/// [`Len::ArgTimes`]: at most this many items (the kernel's `NGROUPS_MAX`
/// for a group list), as the eBPF back end's `ITEMS_MAX`.
const ITEMS_MAX: u64 = 1 << 16;
/// Most iovec elements read (`IOV_MAX`).
const IOV_MAX: usize = 1024;
/// What one capture pass knows about the call.
pub(crate) struct CallView<'a> {
    pub pid: i32,
    pub args: &'a [u64; 6],
    /// The return value at exit when the call succeeded, `None` at entry
    /// or after a failure.
    pub ret: Option<i64>,
    pub role: Role,
    /// The process's shared writable file mappings (see `Kind::Mapped`).
    pub shared: &'a [(u64, u64)],
}

impl CallView<'_> {
    /// Whether memory of direction `dir` is read in this pass.
    fn reads(&self, dir: Dir) -> bool {
        match (self.role, dir) {
            (Role::Entry, Dir::In | Dir::InOut) => true,
            (Role::Exit, Dir::Out | Dir::InOut) => self.ret.is_some(),
            _ => false,
        }
    }

    fn len(&self, len: Len) -> Option<u64> {
        match len {
            Len::Arg(i) => Some(self.args[i as usize]),
            Len::Ret => self.ret.map(|r| r.max(0) as u64),
            Len::Fixed(n) => Some(n.into()),
            Len::ArgPtr(i) => {
                let addr = self.args[i as usize];
                let mut b = [0u8; 4];
                (addr != 0 && read_mem(self.pid, addr, &mut b) == 4)
                    .then(|| u64::from(u32::from_le_bytes(b)).min(LEN_PTR_MAX))
            }
            Len::ArgTimes(i, size) => Some(self.args[i as usize].min(ITEMS_MAX) * u64::from(size)),
        }
    }
}

/// Reads every capture `row` calls for in this pass into `out`.
pub(crate) fn capture(
    row: &Syscall,
    view: &CallView<'_>,
    policy: DataPolicy,
    out: &mut Captures,
    counts: &mut CaptureCounts,
) {
    for (i, p) in row.params().iter().enumerate() {
        let arg = i as u8;
        let addr = view.args[i];
        if addr == 0 {
            continue;
        }
        let head = |elem: u32, len: u64| CaptureHead {
            arg,
            role: view.role,
            elem,
            status: CaptureStatus::Complete,
            len,
        };
        let mut take_data = |elem: u32, addr: u64, len: u64, present: u64| {
            let what = Bytes {
                head: head(elem, len),
                addr,
                present,
            };
            take_bytes(view.pid, what, policy, read_mem, out, counts)
        };
        match p.kind {
            Kind::Path | Kind::Str if view.role == Role::Entry => {
                let max = if p.kind == Kind::Path {
                    PATH_MAX
                } else {
                    STR_MAX
                };
                take_cstr(view.pid, arg, 0, addr, max, out, counts);
            }
            Kind::StrArray if view.role == Role::Entry => {
                for (elem, ptr) in pointer_array(view.pid, addr).into_iter().enumerate() {
                    take_cstr(view.pid, arg, elem as u32, ptr, STR_MAX, out, counts);
                }
            }
            Kind::Mapped { len } if view.role == Role::Entry => {
                let n = view.args[len as usize];
                if overlaps(view.shared, addr, n) {
                    take_mapped(view.pid, head, addr, n, policy, out, counts);
                }
            }
            Kind::Buf { dir, len } if view.reads(dir) => {
                if let Some(n) = view.len(len) {
                    take_data(0, addr, n, n);
                }
            }
            Kind::Struct { dir, len, .. } if view.reads(dir) => {
                if let Some(n) = view.len(len) {
                    let what = Bytes {
                        head: head(0, n),
                        addr,
                        present: n,
                    };
                    take_bytes(view.pid, what, DataPolicy::All, read_mem, out, counts);
                }
            }
            Kind::IoVec { dir, count } if view.reads(dir) => {
                let iovs = iovec_array(view.pid, addr, view.args[count as usize]);
                take_iovecs(&iovs, view, &mut take_data);
            }
            Kind::MsgHdr { dir } if view.reads(dir) => {
                // struct msghdr: msg_iov at offset 16, msg_iovlen at 24,
                // msg_control at 32, msg_controllen at 40 (at exit, what
                // the kernel filled).
                let mut hdr = [0u8; 48];
                if read_mem(view.pid, addr, &mut hdr) == hdr.len() {
                    let word = |at: usize| {
                        u64::from_le_bytes(hdr[at..at + 8].try_into().expect("8 bytes"))
                    };
                    let iovs = iovec_array(view.pid, word(16), word(24));
                    take_iovecs(&iovs, view, &mut take_data);
                    let (control, n) = (word(32), word(40));
                    if control != 0 && n > 0 {
                        let what = Bytes {
                            head: head(CONTROL_ELEM, n),
                            addr: control,
                            present: n,
                        };
                        let policy = DataPolicy::Max(CONTROL_MAX);
                        take_bytes(view.pid, what, policy, read_mem, out, counts);
                    }
                } else {
                    unreadable(view, (arg, 0), 56, out, counts);
                }
            }
            Kind::IoCbs { count } if view.role == Role::Entry => {
                let n = (view.args[count as usize] as i64).clamp(0, aio::MAX as i64) as u64;
                take_requests(view, arg, addr, n, policy, out, counts);
            }
            Kind::IoEvents if view.reads(Dir::Out) => {
                let n = view.ret.unwrap_or(0).clamp(0, aio::MAX as i64) as u64;
                take_completions(view, arg, addr, n, policy, out, counts);
            }
            // The rings are read by `uring::capture`, which holds their
            // layout.
            _ => {}
        }
    }
}

/// A capture of `len` bytes that could not be read: a head with no
/// bytes, counted.
pub(crate) fn unreadable(
    view: &CallView<'_>,
    (arg, elem): (u8, u32),
    len: u64,
    out: &mut Captures,
    counts: &mut CaptureCounts,
) {
    let head = CaptureHead {
        arg,
        role: view.role,
        elem,
        status: CaptureStatus::Unreadable,
        len,
    };
    out.heads.push((head, out.bytes.len()..out.bytes.len()));
    counts.unreadable += 1;
}

/// Reads `len` bytes at `addr` whole, whatever the data policy (pointer
/// arrays, structures), as capture `elem` of `arg`; returns the bytes read.
fn take_whole<'o>(
    view: &CallView<'_>,
    (arg, elem): (u8, u32),
    addr: u64,
    len: u64,
    out: &'o mut Captures,
    counts: &mut CaptureCounts,
) -> &'o [u8] {
    let what = Bytes {
        head: CaptureHead {
            arg,
            role: view.role,
            elem,
            status: CaptureStatus::Complete,
            len,
        },
        addr,
        present: len,
    };
    take_bytes(view.pid, what, DataPolicy::All, read_mem, out, counts);
    let range = out.heads.last().expect("just pushed").1.clone();
    &out.bytes[range]
}

/// `io_submit`'s requests ([`Kind::IoCbs`]): the pointer array, each
/// `iocb`, the data of each write and the element lengths of each
/// vectored read (layout in [`aio`]).
fn take_requests(
    view: &CallView<'_>,
    arg: u8,
    addr: u64,
    n: u64,
    policy: DataPolicy,
    out: &mut Captures,
    counts: &mut CaptureCounts,
) {
    if n == 0 {
        return;
    }
    let ptrs: Vec<u64> =
        aio::pointers(take_whole(view, (arg, 0), addr, n * 8, out, counts)).collect();
    for (i, &p) in ptrs.iter().enumerate() {
        let i = i as u64;
        let iocb = take_whole(view, (arg, aio::elem(i, 0)), p, 64, out, counts);
        // A vectored read's element lengths, with no bytes yet: replay
        // needs them to submit it.
        let Some(cb) = aio::Iocb::parse(iocb).filter(|cb| cb.writes() || cb.vectored()) else {
            continue;
        };
        let moved = if cb.writes() { u64::MAX } else { 0 };
        take_request_data(view, arg, i, &cb, moved, policy, out, counts);
    }
}

/// `io_getevents`' completions ([`Kind::IoEvents`]): the event array, and
/// the data each read brought in, found through its `iocb`.
fn take_completions(
    view: &CallView<'_>,
    arg: u8,
    addr: u64,
    n: u64,
    policy: DataPolicy,
    out: &mut Captures,
    counts: &mut CaptureCounts,
) {
    if n == 0 {
        return;
    }
    let events: Vec<aio::Event> = aio::events(take_whole(
        view,
        (arg, 0),
        addr,
        n * aio::EVENT_LEN as u64,
        out,
        counts,
    ))
    .collect();
    for (i, ev) in events.iter().enumerate() {
        if ev.res <= 0 {
            continue;
        }
        let mut raw = [0u8; aio::IOCB_LEN];
        if read_mem(view.pid, ev.obj, &mut raw) < raw.len() {
            let elem = aio::elem(i as u64, 0);
            unreadable(view, (arg, elem), raw.len() as u64, out, counts);
            continue;
        }
        let Some(cb) = aio::Iocb::parse(&raw).filter(|cb| cb.reads()) else {
            continue;
        };
        take_request_data(view, arg, i as u64, &cb, ev.res as u64, policy, out, counts);
    }
}

/// The data of request `i`: one buffer, or an iovec array's elements;
/// `moved` bytes of it are there (spread in order over the elements).
#[allow(clippy::too_many_arguments)]
fn take_request_data(
    view: &CallView<'_>,
    arg: u8,
    i: u64,
    cb: &aio::Iocb,
    moved: u64,
    policy: DataPolicy,
    out: &mut Captures,
    counts: &mut CaptureCounts,
) {
    let parts = if cb.vectored() {
        iovec_array(view.pid, cb.buf, cb.nbytes.min(aio::IOV_MAX))
    } else {
        vec![(cb.buf, cb.nbytes)]
    };
    take_parts(view, (arg, i), &parts, moved, policy, out, counts);
}

/// Request `i`'s data elements (`(base, len)` each, the layout of
/// [`aio`], which io_uring shares), `moved` bytes of them present,
/// spread over the elements in order.
pub(crate) fn take_parts(
    view: &CallView<'_>,
    (arg, i): (u8, u64),
    parts: &[(u64, u64)],
    moved: u64,
    policy: DataPolicy,
    out: &mut Captures,
    counts: &mut CaptureCounts,
) {
    let mut left = moved;
    for (j, &(base, len)) in parts.iter().enumerate() {
        let present = len.min(left);
        left -= present;
        let what = Bytes {
            head: CaptureHead {
                arg,
                role: view.role,
                elem: aio::elem(i, 1 + j as u64),
                status: CaptureStatus::Complete,
                len,
            },
            addr: base,
            present,
        };
        take_bytes(view.pid, what, policy, read_mem, out, counts);
    }
}

/// Captures iovec elements: at entry each whole element; at exit the
/// return value spread over the elements in order. An element's `len` is
/// its `iov_len`; the bytes captured are those the kernel moved.
fn take_iovecs(
    iovs: &[(u64, u64)],
    view: &CallView<'_>,
    take: &mut impl FnMut(u32, u64, u64, u64),
) {
    let mut left = if view.role == Role::Exit {
        view.ret.unwrap_or(0).max(0) as u64
    } else {
        u64::MAX
    };
    for (elem, &(base, len)) in iovs.iter().enumerate() {
        let moved = len.min(left);
        left -= moved;
        take(elem as u32, base, len, moved);
    }
}

/// Reads a NUL-terminated string (without the NUL) as one capture.
fn take_cstr(
    pid: i32,
    arg: u8,
    elem: u32,
    addr: u64,
    max: usize,
    out: &mut Captures,
    counts: &mut CaptureCounts,
) {
    let start = out.bytes.len();
    let mut addr = addr;
    let mut status = CaptureStatus::Truncated;
    while out.bytes.len() - start < max {
        // Read up to the page end so an unmapped next page cannot fail us.
        let chunk = (4096 - (addr as usize & 4095)).min(max - (out.bytes.len() - start));
        let at = out.bytes.len();
        out.bytes.resize(at + chunk, 0);
        let got = read_mem(pid, addr, &mut out.bytes[at..]);
        out.bytes.truncate(at + got);
        if let Some(nul) = out.bytes[at..].iter().position(|&b| b == 0) {
            out.bytes.truncate(at + nul);
            status = CaptureStatus::Complete;
            break;
        }
        if got < chunk {
            status = CaptureStatus::Unreadable;
            break;
        }
        addr += chunk as u64;
    }
    match status {
        CaptureStatus::Unreadable => counts.unreadable += 1,
        CaptureStatus::Truncated => counts.truncated += 1,
        _ => {}
    }
    let len = (out.bytes.len() - start) as u64;
    out.heads.push((
        CaptureHead {
            arg,
            role: Role::Entry,
            elem,
            status,
            len,
        },
        start..out.bytes.len(),
    ));
}

/// The pointers of a NULL-terminated pointer array (argv, envp).
fn pointer_array(pid: i32, addr: u64) -> Vec<u64> {
    let mut ptrs = Vec::new();
    let mut page = [0u8; 512];
    let mut at = addr;
    while ptrs.len() < STR_ARRAY_MAX {
        let got = read_mem(pid, at, &mut page);
        for word in page[..got - got % 8].chunks_exact(8) {
            let p = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            if p == 0 {
                return ptrs;
            }
            ptrs.push(p);
        }
        if got < page.len() {
            break;
        }
        at += page.len() as u64;
    }
    ptrs
}

/// `(iov_base, iov_len)` pairs of an iovec array.
pub(crate) fn iovec_array(pid: i32, addr: u64, count: u64) -> Vec<(u64, u64)> {
    let count = count.min(IOV_MAX as u64) as usize;
    let mut raw = vec![0u8; count * 16];
    let got = read_mem(pid, addr, &mut raw);
    raw[..got - got % 16]
        .chunks_exact(16)
        .map(|c| {
            (
                u64::from_le_bytes(c[..8].try_into().expect("8 bytes")),
                u64::from_le_bytes(c[8..].try_into().expect("8 bytes")),
            )
        })
        .collect()
}
