//! Executing one recorded call against the replay root.
//!
//! Most calls are executed straight from the catalogue: each argument is
//! translated by its [`Kind`] (traced descriptor → real descriptor, path →
//! a name confined to the root, input buffer → the recorded bytes, output
//! buffer → fresh memory of the recorded size), the call is issued with
//! `syscall(2)`, and its outputs are compared by the same kinds. Calls
//! that change the emulated process state rather than the file system
//! (open, close, dup, pipe, clone, execve, chdir, umask, mmap) have an
//! effect handler in [`Thread::effect`]; that list is the only per-call
//! code in the replayer.

use std::collections::{BTreeMap, HashMap};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reanimator_catalogue::{
    self as catalogue, Dir, Effect, FlagSet, Group, Ids, Kind, Len, Param, Replay, Ret, StructType,
    Syscall, Which,
};
use reanimator_fsstate::{fd_path, is_pseudo, join_as_called, open_in, Owners, Root};
use reanimator_trace::{Capture, CaptureStatus, Role, SyscallEvent, CONTROL_ELEM};

use crate::aio;
use crate::state::{lock, Creds, FdEntry, InRemoved, Listing, Mapping, Proc, Target, FS};
use crate::timings::monotonic_ns;
use crate::uring;
use crate::verify::{self, Mismatch};

/// `AT_FDCWD` in a 32-bit argument.
const AT_FDCWD: i32 = -100;
/// A descriptor number that is never open: calls on traced descriptors
/// the replay does not know fail with `EBADF`, as they must.
const BAD_FD: u64 = u32::MAX as u64 >> 1;
/// Output buffers larger than this are shrunk to the recorded size.
const OUT_MAX: u64 = 64 << 20;

/// What happened to one call.
pub(crate) enum Outcome {
    /// Issued to the kernel; `Some` when the result differs.
    Executed(Option<Mismatch>),
    /// Not issued: its result comes from the trace (sockets, inherited
    /// descriptors, pseudo files) or it only changed emulated state.
    Simulated(Option<Mismatch>),
    /// Not replayed, for the reason given.
    Skipped(&'static str),
}

impl Outcome {
    /// How the result differs from the trace, if it does.
    pub fn mismatch(&self) -> Option<&Mismatch> {
        match self {
            Outcome::Executed(m) | Outcome::Simulated(m) => m.as_ref(),
            Outcome::Skipped(_) => None,
        }
    }
}

/// How much checking replay does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// None: replay only.
    None,
    /// Return values and errnos.
    Ret,
    /// Return values and returned data.
    Full,
}

/// Where a new process or thread's state comes from: the creating call
/// hands it over through this callback (`tid`, state).
pub(crate) type Birth<'a> = &'a dyn Fn(u32, Proc);

/// One replay thread's view: its emulated process and scratch memory.
pub(crate) struct Thread<'a> {
    pub proc: Proc,
    pub root: &'a Root,
    pub verify: Verify,
    pub owners: Owners,
    pub birth: Birth<'a>,
    /// Whether replay is to stop (Ctrl-C, an abort): a pipe call waiting
    /// for data gives up at once rather than after [`STALL`].
    pub stopping: &'a dyn Fn() -> bool,
    /// Calls finished by all replay threads: a pipe call that cannot go
    /// on while this stands still is waiting for something that will
    /// never come.
    pub progress: &'a AtomicU64,
    /// Pipe calls given up so far. After the first, the trace and this
    /// replay disagree about some pipe's contents, and later calls that
    /// stand still give up after [`STALL_AGAIN`]: waiting [`STALL`] for
    /// each of thousands would be a hang.
    pub stalls: &'a AtomicU64,
    /// The replay's io_uring rings.
    pub rings: &'a uring::Registry,
    /// Some directory may have a default POSIX ACL (prepared with one,
    /// or the trace sets one): creating files then asks the directory
    /// ([`Thread::umask_at`]).
    pub default_acls: &'a AtomicBool,
    /// When each page of a mapped file last had captured bytes stored.
    pub snapshots: &'a crate::state::Snapshots,
    /// The shared writable file mappings alive in the replay.
    pub live_maps: &'a crate::state::LiveMappings,
    /// The directory streams being read.
    pub listings: &'a crate::state::ListingsInProgress,
    /// Descriptors sent over sockets and not yet received.
    pub passed: &'a crate::state::Passed,
    /// Descriptor tables copied for children, which closes follow.
    pub copies: &'a crate::state::TableCopies,
    /// Every live process's latest state, for renames to follow (see
    /// [`crate::state::follow_rename_everywhere`]).
    pub procs: &'a Mutex<HashMap<u32, crate::state::WeakProc>>,
    /// The trace file as the recorder wrote it (its meta's `output`): it
    /// grew while the program ran, so calls naming it are simulated, as
    /// pseudo files are.
    pub own_trace: Option<&'a [u8]>,
    /// The file-system ids this OS thread acts with.
    pub acting: Acting,
    /// When the call being run had copied its process's descriptor table
    /// for a child, in the recording: its end for ordering (`copied_by` in
    /// the dispatcher).
    pub copied_by_ns: u64,
    /// Bytes the last executed call moved (its result, when positive): a
    /// [`Group::REREAD`] call issued again is first moved back over them.
    pub moved: i64,
    /// Whether calls are timed (`--timings`).
    pub timed: bool,
    /// When the last call run was issued and completed (ns of
    /// `CLOCK_MONOTONIC`): around the system call for calls issued as
    /// recorded (the first piece's start to the last piece's end when a
    /// short transfer is issued again), around the whole emulation
    /// otherwise. `None` when not timed or nothing was executed.
    pub issued: Option<(u64, u64)>,
    /// Returned buffers `--verify full` could not compare because the
    /// trace lacks their bytes, by capture status (`lost`, `truncated`,
    /// `skipped`, `unreadable`).
    pub not_compared: BTreeMap<&'static str, u64>,
    /// Calls and bytes moved inside the kernel from a simulated descriptor
    /// into a real one ([`Thread::unheld_move`]).
    pub unheld_moves: (u64, u64),
}

/// The file-system user and group ids a replay thread acts with. A
/// replayer running as root takes each traced thread's (`setfsuid` and
/// `setfsgid` are per thread), so permission checks and the owners of
/// what calls create are those of the recording; any other replayer acts
/// as itself.
pub(crate) struct Acting {
    /// The replayer's own ids, or `None` if it cannot take others.
    own: Option<(u32, u32)>,
    /// The ids in force now.
    now: (u32, u32),
    /// The supplementary groups in force now (`None`: what the ids imply
    /// when the trace does not say, see `assume`).
    now_groups: Option<Arc<[u32]>>,
    /// The replayer's supplementary groups.
    groups: Vec<libc::gid_t>,
    /// The effective capabilities taken from a traced thread's `capset`
    /// (`None`: the replayer's own).
    now_caps: Option<u64>,
}

/// The replayer's own supplementary groups.
pub(crate) fn supplementary_groups() -> Vec<libc::gid_t> {
    // SAFETY: a count query, then a buffer of that many groups.
    let mut groups = vec![0; unsafe { libc::getgroups(0, std::ptr::null_mut()) }.max(0) as usize];
    let n = unsafe { libc::getgroups(groups.len() as i32, groups.as_mut_ptr()) };
    groups.truncate(n.max(0) as usize);
    groups
}

impl Acting {
    /// The replayer's ids: it can take a traced thread's when it is root.
    pub fn new() -> Self {
        // SAFETY: these calls cannot fail.
        let own = unsafe { (libc::geteuid(), libc::getegid()) };
        Acting {
            own: (own.0 == 0).then_some(own),
            now: own,
            now_groups: None,
            groups: supplementary_groups(),
            now_caps: None,
        }
    }

    /// Acts as `creds` (`None`: as the replayer).
    fn assume(&mut self, creds: Option<&Creds>) {
        let Some(own) = self.own else { return };
        let want = creds.map_or(own, |c| (c.uid[FS], c.gid[FS]));
        let want_groups = creds.and_then(|c| c.groups.as_ref());
        let want_caps = creds.and_then(|c| c.caps);
        let same_groups = match (want_groups, &self.now_groups) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if want == self.now && same_groups && want_caps == self.now_caps {
            return;
        }
        // Raw calls: glibc's wrappers would change every thread's ids.
        // SAFETY: plain system calls on this thread's credentials.
        unsafe {
            libc::syscall(libc::SYS_setfsgid, want.1);
            libc::syscall(libc::SYS_setfsuid, want.0);
            // Where the trace does not hold the supplementary groups,
            // another user gets none rather than the replayer's.
            let groups: &[libc::gid_t] = match want_groups {
                Some(g) => g,
                None if want.0 == own.0 => &self.groups,
                None => &[],
            };
            libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr());
        }
        if want_caps.is_some() || self.now_caps.is_some() {
            set_effective_caps(want_caps, want.0 != 0);
        }
        self.now = want;
        self.now_groups = want_groups.cloned();
        self.now_caps = want_caps;
    }
}

/// Capabilities the kernel takes from a thread's effective set while its
/// file-system user id is not 0 (`CAP_CHOWN`, `CAP_DAC_OVERRIDE`,
/// `CAP_DAC_READ_SEARCH`, `CAP_FOWNER`, `CAP_FSETID`, `CAP_MKNOD`,
/// `CAP_LINUX_IMMUTABLE`, `CAP_MAC_OVERRIDE`).
const FS_CAPS: u64 = 0b1_1111 | 1 << 27 | 1 << 9 | 1 << 32;

/// Makes this thread's effective capabilities `caps` (`None`: all it is
/// permitted), less [`FS_CAPS`] when it acts as a user other than root,
/// as `setfsuid` left them. Only the effective set changes: the permitted
/// set stays whole, so a later `execve`'s full set can be taken back.
fn set_effective_caps(caps: Option<u64>, not_root: bool) {
    const VERSION_3: u32 = 0x2008_0522;
    let mut header = [VERSION_3, 0];
    let mut data = [0u32; 6];
    // SAFETY: capget/capset with a version-3 header and two data structs
    // (effective, permitted, inheritable each), on this thread.
    unsafe {
        if libc::syscall(libc::SYS_capget, header.as_mut_ptr(), data.as_mut_ptr()) != 0 {
            return;
        }
        let permitted = u64::from(data[1]) | u64::from(data[4]) << 32;
        let mut effective = caps.unwrap_or(permitted) & permitted;
        if not_root {
            effective &= !FS_CAPS;
        }
        data[0] = effective as u32;
        data[3] = (effective >> 32) as u32;
        header = [VERSION_3, 0];
        libc::syscall(libc::SYS_capset, header.as_mut_ptr(), data.as_ptr());
    }
}

/// How long a pipe call may wait while the whole replay stands still.
const STALL: Duration = Duration::from_secs(10);
/// [`STALL`] once a pipe call has been given up.
const STALL_AGAIN: Duration = Duration::from_millis(500);

/// Memory a translated call points into; it lives until the call returns.
#[derive(Default)]
struct Keep {
    bufs: Vec<Mem>,
    strings: Vec<CString>,
    fds: Vec<Arc<OwnedFd>>,
    paths: Vec<OwnedFd>,
    iovs: Vec<Vec<libc::iovec>>,
}

/// The alignment `O_DIRECT` data buffers get: the largest logical block
/// size of common devices, so any of them accepts it.
const DIRECT_ALIGN: usize = 4096;

/// A data buffer handed to the kernel. `O_DIRECT` needs its start
/// aligned, which a `Vec` does not promise, so it may start past the front
/// of its vector.
pub(crate) struct Mem {
    bytes: Vec<u8>,
    start: usize,
}

impl Mem {
    /// `len` zero bytes, their start aligned to [`DIRECT_ALIGN`] if
    /// `aligned`.
    pub(crate) fn zeroed(len: usize, aligned: bool) -> Mem {
        if !aligned {
            return Mem::from(vec![0u8; len]);
        }
        let mut bytes = vec![0u8; len + DIRECT_ALIGN];
        let start = bytes.as_ptr().align_offset(DIRECT_ALIGN);
        bytes.truncate(start + len);
        Mem { bytes, start }
    }

    /// A copy of `data`, zero-padded or cut to `len` bytes.
    pub(crate) fn copy_of(data: &[u8], len: usize, aligned: bool) -> Mem {
        let mut m = Mem::zeroed(len, aligned);
        let n = data.len().min(len);
        m[..n].copy_from_slice(&data[..n]);
        m
    }
}

impl From<Vec<u8>> for Mem {
    fn from(bytes: Vec<u8>) -> Mem {
        Mem { bytes, start: 0 }
    }
}

impl std::ops::Deref for Mem {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes[self.start..]
    }
}

impl std::ops::DerefMut for Mem {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[self.start..]
    }
}

/// The memory an asynchronous request (Linux AIO, io_uring) lends the
/// kernel until it completes: one buffer per part, holding the recorded
/// data when the request writes, and for a vectored request the iovec
/// array naming them. Aligned whatever the descriptor: direct I/O is the
/// usual mode of both interfaces, and alignment costs nothing otherwise.
pub(crate) struct Buffers {
    /// The buffers, in order.
    pub bufs: Vec<Mem>,
    iovs: Vec<libc::iovec>,
}

// SAFETY: the raw pointers in `iovs` point into `bufs`, which the value
// owns; the kernel is the only other user, until the request completes.
unsafe impl Send for Buffers {}

impl Buffers {
    /// A buffer of `len` bytes per `(data, len)` part; `data` is copied
    /// in when `writes`.
    pub(crate) fn new(parts: &[(Option<&[u8]>, usize)], writes: bool) -> Buffers {
        let bufs = parts
            .iter()
            .map(|&(data, len)| match data.filter(|_| writes) {
                Some(d) => Mem::copy_of(d, len, true),
                None => Mem::zeroed(len, true),
            })
            .collect();
        Buffers {
            bufs,
            iovs: Vec::new(),
        }
    }

    /// The first buffer's address (a request of one buffer).
    pub(crate) fn first(&mut self) -> *mut u8 {
        self.bufs
            .first_mut()
            .map_or(std::ptr::null_mut(), |m| m.as_mut_ptr())
    }

    /// An iovec array over every buffer (a vectored request): its address
    /// and element count.
    pub(crate) fn iovecs(&mut self) -> (*const libc::iovec, usize) {
        self.iovs = self
            .bufs
            .iter_mut()
            .map(|m| libc::iovec {
                iov_base: m.as_mut_ptr().cast(),
                iov_len: m.len(),
            })
            .collect();
        (self.iovs.as_ptr(), self.iovs.len())
    }
}

/// An output argument to compare after the call.
struct Out {
    param: usize,
    kind: Kind,
    /// Index into `Keep::bufs`, or of the first element buffer for iovecs.
    buf: usize,
    elems: usize,
}

/// The descriptor a `/proc/{self,thread-self,PID,PID/task/TID}/fd/N`
/// path of the calling thread names: whose (the caller's process `tgid`,
/// or the id in the path), its number, and what follows it. `/dev/fd/N`
/// and `/dev/std{in,out,err}` are links to such paths (bash's process
/// substitution hands `join <(sort a) <(sort b)` the names
/// `/dev/fd/63` and `/dev/fd/62`).
fn proc_fd_link(path: &[u8], tgid: u32, tid: u32) -> Option<(u32, i32, &[u8])> {
    if let Some(rest) = path.strip_prefix(b"/dev/") {
        let (name, rest) = split_component(rest);
        return match name {
            b"stdin" => Some((tgid, 0, rest)),
            b"stdout" => Some((tgid, 1, rest)),
            b"stderr" => Some((tgid, 2, rest)),
            b"fd" => {
                let (number, rest) = split_component(rest);
                Some((tgid, std::str::from_utf8(number).ok()?.parse().ok()?, rest))
            }
            _ => None,
        };
    }
    let rest = path.strip_prefix(b"/proc/")?;
    let (who, rest) = split_component(rest);
    let (owner, rest) = match who {
        b"self" | b"thread-self" => (tgid, rest),
        _ => {
            let id: u32 = std::str::from_utf8(who).ok()?.parse().ok()?;
            let owner = if id == tid { tgid } else { id };
            match split_component(rest) {
                (b"task", r) => (owner, split_component(r).1),
                _ => (owner, rest),
            }
        }
    };
    let (fd_dir, rest) = split_component(rest);
    let (number, rest) = split_component(rest);
    if fd_dir != b"fd" {
        return None;
    }
    let fd = std::str::from_utf8(number).ok()?.parse().ok()?;
    Some((owner, fd, rest))
}

/// When call `ev` ended, as recorded: its exit, or its entry if it never
/// returned.
fn ended_ns(ev: &SyscallEvent) -> u64 {
    ev.exit.map_or(ev.enter_ns, |x| x.exit_ns)
}

/// How many entries one number keeps at most: the one on top and those
/// kept aside under it. Threads that open and close one number in turn
/// while their calls overlap stack them; an entry whose close never
/// replays must not hold its descriptor for good.
const ENTRIES_PER_NUMBER: usize = 64;

/// Puts a descriptor the call `ev` created into a table. Entries still at
/// that number belong to calls that overlapped this one in the recording
/// (replay ran them in another order): the one opened last in the
/// recording stays on top and the others are kept aside, newest first,
/// for the calls that used them (see [`live`]).
fn install(t: &mut HashMap<i32, FdEntry>, fd: i32, mut e: FdEntry, ev: &SyscallEvent) {
    e.opened_ns = ended_ns(ev);
    e.displaced = None;
    let Some(old) = t.remove(&fd) else {
        t.insert(fd, e);
        return;
    };
    let mut entries = vec![e];
    entries.extend(old.unchain());
    // Stable: of two opened at once, the one installed now goes on top.
    entries.sort_by_key(|x| std::cmp::Reverse(x.opened_ns));
    entries.truncate(ENTRIES_PER_NUMBER);
    t.insert(fd, FdEntry::linked(entries).expect("at least the new one"));
}

/// The entry `fd` named when the call `ev` began in the recording: the
/// newest of those at the number opened by then ([`FdEntry::named_at`]),
/// or the one on top.
pub(crate) fn live<'t>(
    t: &'t mut HashMap<i32, FdEntry>,
    fd: i32,
    ev: &SyscallEvent,
) -> Option<&'t mut FdEntry> {
    let top = t.get_mut(&fd)?;
    let depth = top.named_at(ev.enter_ns).unwrap_or(0);
    Some(top.at_depth(depth))
}

/// Removes what `close(fd)` closes: the entry [`live`] when it began.
/// Entries kept aside with it are still open (their own closes are yet to
/// be replayed), so the newest of them takes the number back.
fn close_entry(t: &mut HashMap<i32, FdEntry>, fd: i32, ev: &SyscallEvent) -> Option<FdEntry> {
    let top = t.remove(&fd)?;
    if top.displaced.is_none() {
        return Some(top);
    }
    let depth = top.named_at(ev.enter_ns).unwrap_or(0);
    let mut entries = top.unchain();
    let closed = entries.remove(depth);
    if let Some(rest) = FdEntry::linked(entries) {
        t.insert(fd, rest);
    }
    Some(closed)
}

/// `read`'s and `write`'s shape: a descriptor, one buffer the kernel
/// fills up to the return value (or reads up to the size), and its size.
/// A short transfer on a pipe with this shape is continued where it
/// stopped by the same call on the rest of the buffer; `Some(true)` for
/// reads, `Some(false)` for writes.
fn continues_short_transfers(row: &Syscall) -> Option<bool> {
    match row.params() {
        [Param { kind: Kind::Fd, .. }, Param {
            kind: Kind::Buf { dir, len },
            ..
        }, Param {
            kind: Kind::Size, ..
        }] => match (dir, len) {
            (Dir::Out, Len::Ret) => Some(true),
            (Dir::In, Len::Arg(2)) => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// Whether a call may make or remove directory entries: those acting on
/// entries themselves that are not queries (`mkdir`, `unlink`, `rename`,
/// `link`...), and opens that may create.
fn changes_entries(row: &Syscall, args: &[u64; 6]) -> bool {
    (row.in_groups(Group::NOFOLLOW) && !row.in_groups(Group::QUERY))
        || row
            .open_flags(args)
            .is_some_and(|f| f & libc::O_CREAT as u64 != 0)
}

/// What a program can see of `fallocate(mode, offset, len)` where the
/// file system cannot do it: the size an allocation or a zeroed range
/// extends the file to (unless `FALLOC_FL_KEEP_SIZE`), zeros over a range
/// zeroed or punched out (written, so no hole is left), and the bytes a
/// collapsed or inserted range moves (btrfs, tmpfs and ext2 have neither).
/// Never through an `O_APPEND` descriptor, where `pwrite` appends.
fn fallocate_visibly(fd: &OwnedFd, mode: i32, offset: u64, len: u64) -> io::Result<()> {
    let size = crate::state::stat_of(fd).map_or(0, |st| st.st_size as u64);
    let end = offset.saturating_add(len);
    // SAFETY: F_GETFL reads the descriptor's status flags.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    let positional = flags >= 0 && flags & libc::O_APPEND == 0;
    match mode & !libc::FALLOC_FL_KEEP_SIZE {
        0 => {}
        libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE if positional => {
            write_zeros(fd, offset, end.min(size))?;
        }
        // Both take no other flag, and refuse a range past the end.
        libc::FALLOC_FL_COLLAPSE_RANGE if positional && mode == libc::FALLOC_FL_COLLAPSE_RANGE => {
            if end >= size {
                return Err(io::Error::from_raw_os_error(libc::EINVAL));
            }
            move_bytes(fd, end, offset, size - end)?;
            return truncate(fd, size - len);
        }
        libc::FALLOC_FL_INSERT_RANGE if positional && mode == libc::FALLOC_FL_INSERT_RANGE => {
            if offset >= size {
                return Err(io::Error::from_raw_os_error(libc::EINVAL));
            }
            truncate(fd, size + len)?;
            move_bytes(fd, offset, end, size - offset)?;
            return write_zeros(fd, offset, end);
        }
        _ => return Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP)),
    }
    if mode & libc::FALLOC_FL_KEEP_SIZE == 0 && end > size {
        truncate(fd, end)?;
    }
    Ok(())
}

/// Sets the file's size.
fn truncate(fd: &OwnedFd, size: u64) -> io::Result<()> {
    // SAFETY: ftruncate on a descriptor the caller keeps open.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), size as i64) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Writes zeros over `[from, to)` of the file.
fn write_zeros(fd: &OwnedFd, from: u64, to: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::from(fd.try_clone()?);
    let zeros = [0u8; 1 << 16];
    let mut at = from;
    while at < to {
        let n = (to - at).min(zeros.len() as u64) as usize;
        file.write_all_at(&zeros[..n], at)?;
        at += n as u64;
    }
    Ok(())
}

/// Moves `len` bytes of the file from offset `from` to offset `to`, the
/// ranges free to overlap (as `memmove`).
fn move_bytes(fd: &OwnedFd, from: u64, to: u64, len: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::from(fd.try_clone()?);
    let mut buf = vec![0u8; 1 << 20];
    let chunk = buf.len() as u64;
    let mut done = 0;
    while done < len {
        let n = (len - done).min(chunk);
        // Forward when moving down, from the end when moving up, so no
        // byte is overwritten before it moved.
        let at = if to < from { done } else { len - done - n };
        let piece = &mut buf[..n as usize];
        file.read_exact_at(piece, from + at)?;
        file.write_all_at(piece, to + at)?;
        done += n;
    }
    Ok(())
}

/// Where the byte count is of a call that moves bytes from one descriptor
/// to another inside the kernel (`copy_file_range`, `sendfile`,
/// `splice`): no buffer of the program's, a size, a size returned.
fn descriptor_copy_count(row: &Syscall) -> Option<usize> {
    let params = row.params();
    let fds = params.iter().filter(|p| p.kind == Kind::Fd).count();
    let buffers = params
        .iter()
        .any(|p| matches!(p.kind, Kind::Buf { .. } | Kind::IoVec { .. }));
    if row.ret != Ret::Size || fds < 2 || buffers {
        return None;
    }
    params.iter().position(|p| p.kind == Kind::Size)
}

/// The first component of a relative path and the rest.
fn split_component(p: &[u8]) -> (&[u8], &[u8]) {
    match p.iter().position(|&b| b == b'/') {
        Some(i) => (&p[..i], &p[i + 1..]),
        None => (p, b""),
    }
}

fn errno_of(e: &io::Error) -> i64 {
    -i64::from(e.raw_os_error().unwrap_or(libc::EIO))
}

/// Bytes a replayed pipe holds at least.
const PIPE_ROOM: usize = 1 << 20;

/// Makes a pipe hold at least [`PIPE_ROOM`] bytes, or `at_least` if more.
/// The program's pipe held what was in flight when it ran; replay orders
/// its reads and writes by recorded times, not by that moment's state, so
/// it may have more in flight (and a pipe's pages fill with short writes
/// unevenly): with the program's 64 KiB, initdb's writer stood waiting for
/// room while the postgres reading it waited for the writer's turn. Pages
/// are only allocated as data comes, so the room costs nothing unused.
/// Best effort: an unprivileged replayer may be refused.
fn roomy(fd: &impl AsRawFd, at_least: usize) {
    // SAFETY: F_SETPIPE_SZ on a descriptor we hold; failure is harmless.
    unsafe {
        libc::fcntl(
            fd.as_raw_fd(),
            libc::F_SETPIPE_SZ,
            PIPE_ROOM.max(at_least) as i32,
        )
    };
}

/// The socket address a `bind` or `connect` gives (argument 1), as
/// captured whole.
fn socket_address(ev: &SyscallEvent) -> Option<&[u8]> {
    ev.capture(1, Role::Entry)
        .filter(|c| c.status == CaptureStatus::Complete)
        .and_then(|c| c.data.as_deref())
}

/// The `sun_path` bytes of the Unix socket address a `bind` or `connect`
/// gives, all of them.
fn unix_address(ev: &SyscallEvent) -> Option<&[u8]> {
    let addr = socket_address(ev)?;
    let family = u16::from_le_bytes(addr.get(..2)?.try_into().ok()?);
    (i32::from(family) == libc::AF_UNIX).then_some(addr.get(2..)?)
}

/// The path name of a `bind`'s Unix socket address (not an abstract or
/// unnamed one).
fn unix_socket_path(ev: &SyscallEvent) -> Option<&[u8]> {
    socket_address(ev).and_then(catalogue::unix_socket_path)
}

/// The clone flags of a call that spawns (`implied`: those its row's
/// effect implies, as vfork's `CLONE_VM | CLONE_VFORK`): clone passes
/// them by value, clone3 as the first word of `struct clone_args`.
fn clone_flags(ev: &SyscallEvent, row: &Syscall, implied: u64) -> u64 {
    let given = match row.params().first().map(|p| p.kind) {
        Some(Kind::Flags(FlagSet::Clone)) => ev.args[0],
        Some(Kind::Struct { .. }) => ev
            .capture(0, Role::Entry)
            .and_then(|c| c.data.as_deref())
            .and_then(|d| d.get(..8))
            .map_or(0, |d| u64::from_le_bytes(d.try_into().expect("8 bytes"))),
        _ => 0,
    };
    given | implied
}

/// The abstract Unix socket name a `bind` or `connect` gives (argument
/// 1): the bytes after the family, from the leading NUL, all of them
/// (an abstract name may hold NULs).
fn abstract_socket_name(ev: &SyscallEvent) -> Option<&[u8]> {
    let name = unix_address(ev)?;
    (name.len() > 1 && name[0] == 0).then_some(name)
}

/// Drops the first `n` bytes from an iovec array.
fn advance(iovs: &mut Vec<libc::iovec>, mut n: usize) {
    let whole = iovs.iter().take_while(|v| {
        let fits = v.iov_len <= n;
        if fits {
            n -= v.iov_len;
        }
        fits
    });
    let whole = whole.count();
    iovs.drain(..whole);
    if let Some(v) = iovs.first_mut() {
        v.iov_base = (v.iov_base as usize + n) as *mut libc::c_void;
        v.iov_len -= n;
    }
}

/// How an executed call's input bytes differ from what the program gave:
/// bytes the recorder could not read (a page the program never touched,
/// which the eBPF recorder cannot fault in) went to the kernel as zeros.
/// Only the bytes the call took count (a `write` that stopped at an
/// unmapped page took those before it; one that failed took none), its
/// buffers in order. Said as a mismatch, so that not only the final
/// check catches it.
fn lost_input(ev: &SyscallEvent, row: &Syscall) -> Option<Mismatch> {
    // Every executed call asks: most have nothing unread, and go no further.
    if !ev
        .captures
        .iter()
        .any(|c| c.status == CaptureStatus::Unreadable)
    {
        return None;
    }
    let mut left = match (row.ret, Thread::expected(ev)) {
        // It failed: the kernel changed nothing with its bytes (a `write`
        // to a bad descriptor, whose buffer it never read).
        (_, n) if n < 0 => 0,
        (Ret::Size, n) => n as u64,
        _ => u64::MAX,
    };
    let mut inputs: Vec<&Capture> = ev
        .captures
        .iter()
        .filter(|c| c.role == Role::Entry && c.elem != CONTROL_ELEM)
        .filter(|c| {
            row.params().get(c.arg as usize).is_some_and(|p| {
                matches!(
                    p.kind,
                    Kind::Buf { dir: Dir::In, .. }
                        | Kind::IoVec { dir: Dir::In, .. }
                        | Kind::MsgHdr { dir: Dir::In }
                )
            })
        })
        .collect();
    inputs.sort_by_key(|c| (c.arg, c.elem));
    let mut lost = 0;
    for c in inputs {
        let taken = c.len.min(left);
        left -= taken;
        if c.status == CaptureStatus::Unreadable {
            lost += taken.saturating_sub(c.captured);
        }
    }
    (lost > 0).then(|| {
        format!("{lost} bytes it was given could not be read when recorded: replayed as zeros")
    })
}

/// Errors after which a call did nothing, and whose cause replay does not
/// reproduce, so the call is simulated: issued now, it would succeed, or
/// find another moment's state.
///
/// - `EFAULT`: the program handed the kernel a bad address (every address
///   replay hands over is valid).
/// - `EAGAIN`: a non-blocking call would have blocked (a pipe was empty or
///   full at that moment); issued now it could read data a later call
///   recorded.
/// - `EPIPE`: the reading end had gone (`yes | head`: the last write
///   waited on a full pipe that replay's larger one has room in).
/// - `EXDEV`, `EBUSY`: the call crossed, or stood on, a mount point; the
///   replay root is one file system (`mv` from a tmpfs `/tmp` falls back
///   to copying when `rename` fails so; a replayed `rename` moved the file
///   and the copy that followed failed).
/// - `EROFS`: a read-only mount; the replay root is writable.
/// - `ETXTBSY`: a program was running from the file; replay runs none.
/// - `ENOSPC`, `EDQUOT`: the recorded file system was full; the replay
///   root may not be.
/// - `EFBIG`: a write went past the file-size limit (`ulimit -f`), which
///   replay does not set, or past what the recorded file system holds.
/// - `EMFILE`, `ENFILE`: descriptor limits, which replay raises.
const DID_NOTHING: [i32; 12] = [
    libc::EFAULT,
    libc::EAGAIN,
    libc::EPIPE,
    libc::EXDEV,
    libc::EBUSY,
    libc::EROFS,
    libc::ETXTBSY,
    libc::ENOSPC,
    libc::EDQUOT,
    libc::EFBIG,
    libc::EMFILE,
    libc::ENFILE,
];

fn raw_syscall(nr: u32, a: &[u64; 6]) -> i64 {
    // SAFETY: every pointer argument was translated to memory owned by the
    // caller's `Keep` (or NULL); descriptors are the replayer's own.
    let r = unsafe { libc::syscall(i64::from(nr), a[0], a[1], a[2], a[3], a[4], a[5]) };
    if r == -1 {
        errno_of(&io::Error::last_os_error())
    } else {
        r
    }
}

impl Thread<'_> {
    /// Replays one call (which returned, and was not interrupted).
    pub fn run(&mut self, ev: &SyscallEvent, row: &'static Syscall) -> Outcome {
        self.issued = None;
        if !self.timed {
            return self.run_untimed(ev, row);
        }
        let began = monotonic_ns();
        let outcome = self.run_untimed(ev, row);
        match outcome {
            Outcome::Executed(_) => {
                self.issued = self.issued.or_else(|| Some((began, monotonic_ns())));
            }
            _ => self.issued = None,
        }
        outcome
    }

    /// Issues a call as recorded (arguments translated), timing it when
    /// calls are timed.
    fn issue(&mut self, nr: u32, a: &[u64; 6]) -> i64 {
        if !self.timed {
            return raw_syscall(nr, a);
        }
        let began = monotonic_ns();
        let got = raw_syscall(nr, a);
        let first = self.issued.map_or(began, |(first, _)| first);
        self.issued = Some((first, monotonic_ns()));
        got
    }

    fn run_untimed(&mut self, ev: &SyscallEvent, row: &'static Syscall) -> Outcome {
        self.moved = 0;
        self.acting.assume(self.proc.creds.as_ref());
        let expected = Self::expected(ev);
        if DID_NOTHING.iter().any(|&e| expected == -i64::from(e))
            || (expected < 0 && self.proc.filtered)
        {
            return Outcome::Simulated(None);
        }
        if expected == 0 && row.installs_seccomp_filter(&ev.args) {
            self.proc.filtered = true;
        }
        // Registered before the call runs: a stream another thread reads
        // meanwhile must not see the entry and miss the change.
        if changes_entries(row, &ev.args) {
            for (i, p) in row.params().iter().enumerate() {
                if p.kind == Kind::Path {
                    if let Ok(path) = self.full_path(ev, row, i) {
                        self.listings.changed(&path, ev.enter_ns, ended_ns(ev));
                    }
                }
            }
        }
        // Named before the call runs: it may move the very directory the
        // names are resolved from.
        let moved = (row.effect == Effect::Move && Self::expected(ev) == 0)
            .then(|| self.rename_paths(ev, row))
            .flatten();
        let removing = (Self::expected(ev) == 0)
            .then(|| self.removes_a_dir_in_use(ev, row, moved.as_ref()))
            .flatten();
        let outcome = match self.effect(ev, row) {
            Some(o) => o,
            None => match row.replay {
                Replay::Execute if row.params.is_some() => {
                    match (self.execute(ev, row), lost_input(ev, row)) {
                        (Outcome::Executed(None), Some(m)) => Outcome::Executed(Some(m)),
                        (outcome, _) => outcome,
                    }
                }
                _ => self.simulate(ev, row),
            },
        };
        if let (Some(removal), Outcome::Executed(None)) = (removing, &outcome) {
            crate::state::mark_removed(self.procs, &removal);
        }
        if let (Some((src, dst, exchange)), Outcome::Executed(None)) = (moved, &outcome) {
            crate::state::follow_rename_everywhere(self.procs, &src, &dst, exchange);
        }
        outcome
    }

    /// A rename's source and destination (traced absolute paths), and
    /// whether it swaps them (`RENAME_EXCHANGE`).
    fn rename_paths(&self, ev: &SyscallEvent, row: &Syscall) -> Option<(Vec<u8>, Vec<u8>, bool)> {
        let mut paths = row
            .params()
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind == Kind::Path);
        let (src, _) = paths.next()?;
        let (dst, _) = paths.next()?;
        let flags = row
            .params()
            .iter()
            .position(|p| p.kind == Kind::Flags(FlagSet::Rename));
        let exchange = flags.is_some_and(|i| ev.args[i] & libc::RENAME_EXCHANGE as u64 != 0);
        Some((
            self.full_path(ev, row, src).ok()?,
            self.full_path(ev, row, dst).ok()?,
            exchange,
        ))
    }

    fn expected(ev: &SyscallEvent) -> i64 {
        ev.exit.map_or(0, |x| x.ret)
    }

    /// Not issued: registers the descriptors the call created, so later
    /// calls on them are simulated too.
    /// Counts a copy inside the kernel (`splice`, `sendfile`) that moved
    /// bytes from a descriptor replay simulates (a socket, an inherited
    /// pipe) into a real one: no buffer of the program's held them, so
    /// the trace does not, and what they reached (a pipe, a file) misses
    /// them in replay.
    fn unheld_move(&mut self, ev: &SyscallEvent, row: &Syscall) {
        let moved = Self::expected(ev);
        if moved <= 0 || descriptor_copy_count(row).is_none() {
            return;
        }
        let reaches_real = row.params().iter().zip(ev.args).any(|(p, raw)| {
            p.kind == Kind::Fd
                && matches!(
                    self.proc.entry(ev, raw as i32),
                    Some(FdEntry {
                        target: Target::Real(_),
                        ..
                    })
                )
        });
        if reaches_real {
            self.unheld_moves.0 += 1;
            self.unheld_moves.1 += moved as u64;
        }
    }

    fn simulate(&mut self, ev: &SyscallEvent, row: &Syscall) -> Outcome {
        let ret = Self::expected(ev);
        if ret >= 0 {
            let cloexec = row.cloexec(&ev.args);
            if row.makes_descriptor(&ev.args) {
                install(
                    &mut lock(&self.proc.fds),
                    ret as i32,
                    FdEntry::simulated(Vec::new(), cloexec),
                    ev,
                );
            }
            // A Unix connection: its two ends are paired, to pass
            // descriptors from one to the other.
            match row.effect {
                Effect::Connect => {
                    if let Some(name) = self.socket_name(ev) {
                        let pair = self.passed.connection(name, 0);
                        self.set_pair(ev, ev.args[0] as i32, pair);
                    }
                }
                Effect::Accept => {
                    let listener = self.proc.entry(ev, ev.args[0] as i32);
                    if let Some(name) = listener.and_then(|e| e.name) {
                        let pair = self.passed.connection(name, 1);
                        self.set_pair(ev, ret as i32, pair);
                    }
                }
                _ => {}
            }
            for (i, p) in row.params().iter().enumerate() {
                match p.kind {
                    Kind::Struct {
                        ty: StructType::FdPair,
                        ..
                    } => {
                        if let Some((a, b)) = fd_pair(ev, i as u8) {
                            let end = |n: u64| FdEntry {
                                pair: Some(ev.seq * 2 + n),
                                ..FdEntry::simulated(Vec::new(), cloexec)
                            };
                            let mut t = lock(&self.proc.fds);
                            install(&mut t, a, end(0), ev);
                            install(&mut t, b, end(1), ev);
                        }
                    }
                    Kind::MsgHdr { dir: Dir::In } => self.send_fds(ev, i as u8),
                    Kind::MsgHdr { dir: Dir::Out } => {
                        if let Err(m) = self.receive_fds(ev, i as u8) {
                            return Outcome::Simulated(Some(m));
                        }
                    }
                    _ => {}
                }
            }
        }
        Outcome::Simulated(None)
    }

    /// The descriptors a message (argument `arg`, control data read at
    /// `role`) passed with `SCM_RIGHTS`.
    fn passed_in(ev: &SyscallEvent, arg: u8, role: Role) -> Vec<i32> {
        ev.capture_elem(arg, role, CONTROL_ELEM)
            .and_then(|c| c.data.as_deref())
            .map(catalogue::msg::passed_fds)
            .unwrap_or_default()
    }

    /// A `sendmsg` that sent descriptors: their entries wait for the
    /// `recvmsg` that takes them (one unknown to replay, simulated).
    fn send_fds(&self, ev: &SyscallEvent, arg: u8) {
        // For the other end of the pair to receive.
        let pair = self.pair_of(ev).map(|end| end ^ 1);
        for fd in Self::passed_in(ev, arg, Role::Entry) {
            let e = self
                .proc
                .entry(ev, fd)
                .unwrap_or_else(|| FdEntry::simulated(Vec::new(), false));
            self.passed.send(pair, e);
        }
    }

    /// The end of a socket pair the call's socket (its first argument)
    /// is, if the trace made the pair ([`FdEntry::pair`]).
    fn pair_of(&self, ev: &SyscallEvent) -> Option<u64> {
        self.proc.entry(ev, ev.args[0] as i32).and_then(|e| e.pair)
    }

    /// A `recvmsg` that received descriptors: each shares the open file
    /// description its sender's had, from the sends replayed so far
    /// (waiting for them while other threads make progress: the send may
    /// have overlapped the receive).
    fn receive_fds(&self, ev: &SyscallEvent, arg: u8) -> Result<(), Mismatch> {
        let fds = Self::passed_in(ev, arg, Role::Exit);
        if fds.is_empty() {
            return Ok(());
        }
        let cloexec = ev.args[2] & libc::MSG_CMSG_CLOEXEC as u64 != 0;
        // A peek leaves the message, and its descriptors, for the next.
        let peek = ev.args[2] & libc::MSG_PEEK as u64 != 0;
        let pair = self.pair_of(ev);
        let sent = self.while_progressing(
            || STALL_AGAIN,
            || {
                let sent = self.passed.receive(pair, fds.len(), peek);
                if sent.is_none() {
                    std::thread::sleep(Duration::from_micros(200));
                }
                sent
            },
        );
        let Some(entries) = sent else {
            let mut t = lock(&self.proc.fds);
            for &fd in &fds {
                install(&mut t, fd, FdEntry::simulated(Vec::new(), cloexec), ev);
            }
            return Err(format!(
                "received {} descriptors no replayed sendmsg sent: simulated",
                fds.len()
            ));
        };
        let mut t = lock(&self.proc.fds);
        for (fd, mut e) in fds.into_iter().zip(entries) {
            e.cloexec = cloexec;
            install(&mut t, fd, e, ev);
        }
        Ok(())
    }

    /// The key of the Unix socket name a `bind` or `connect` gives: its
    /// path made absolute from the working directory, or its abstract
    /// name ([`FdEntry::name`]).
    fn socket_name(&self, ev: &SyscallEvent) -> Option<u64> {
        let name = match unix_socket_path(ev) {
            Some(path) => join_as_called(&lock(&self.proc.fs).cwd, path),
            None => abstract_socket_name(ev)?.to_vec(),
        };
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(&name, &mut h);
        Some(std::hash::Hasher::finish(&h))
    }

    /// Gives the socket `fd` its pair number ([`FdEntry::pair`]).
    fn set_pair(&self, ev: &SyscallEvent, fd: i32, pair: u64) {
        if let Some(e) = live(&mut lock(&self.proc.fds), fd, ev) {
            e.pair = Some(pair);
        }
    }

    /// Makes the socket file a `bind` to Unix socket path `path` made;
    /// 0 or -errno.
    fn make_socket_file(&self, path: &[u8]) -> i64 {
        let (full, umask) = {
            let fs = lock(&self.proc.fs);
            (join_as_called(&fs.cwd, path), fs.umask)
        };
        if is_pseudo(&full) {
            return 0;
        }
        let made = self.root.parent(&full).and_then(|(dir, name)| {
            let mode = libc::S_IFSOCK | (0o777 & !umask);
            // SAFETY: a directory descriptor and a NUL-terminated name.
            let r = unsafe { libc::mknodat(dir.as_raw_fd(), name.as_ptr(), mode, 0) };
            if r < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            }
        });
        made.map_or_else(|e| errno_of(&e), |()| 0)
    }

    fn path_arg(ev: &SyscallEvent, i: usize) -> Option<&[u8]> {
        ev.capture(i as u8, Role::Entry)
            .filter(|c| c.status == CaptureStatus::Complete)
            .and_then(|c| c.data.as_deref())
    }

    /// Where relative path argument `i` leads if the directory it is
    /// named from (the working directory, or its directory descriptor's)
    /// was removed by a replayed call.
    fn in_removed_dir(&self, ev: &SyscallEvent, row: &Syscall, i: usize) -> Option<InRemoved> {
        let dirfd = (i > 0 && row.params()[i - 1].kind == Kind::DirFd)
            .then(|| ev.args[i - 1] as i32)
            .filter(|&d| d != AT_FDCWD);
        let path = Self::path_arg(ev, i).filter(|p| p.first() != Some(&b'/'))?;
        let Some(d) = dirfd else {
            return lock(&self.proc.fs).in_removed_cwd(path);
        };
        let (dir, name) = self.removed_dir_fd(ev, d)?;
        crate::state::in_removed(dir, name, path)
    }

    /// The directory traced descriptor `fd` holds and its traced name, if
    /// a replayed call removed it (looked up without copying the entry:
    /// every `*at` call asks).
    fn removed_dir_fd(&self, ev: &SyscallEvent, fd: i32) -> Option<(Arc<OwnedFd>, Vec<u8>)> {
        match live(&mut lock(&self.proc.fds), fd, ev)? {
            FdEntry {
                target: Target::Real(dir),
                path,
                removed: true,
                ..
            } => Some((dir.clone(), path.clone())),
            _ => None,
        }
    }

    /// The directory this call removes (`rmdir`, or a `rename` over it),
    /// opened before it does, if some process's working directory or
    /// directory descriptor is it.
    fn removes_a_dir_in_use(
        &self,
        ev: &SyscallEvent,
        row: &Syscall,
        moved: Option<&(Vec<u8>, Vec<u8>, bool)>,
    ) -> Option<crate::state::Removal> {
        // Only `rmdir` and `unlinkat(AT_REMOVEDIR)` remove a directory:
        // `unlink`s, by far the most, skip the scan below.
        let removes_dir = row.name == "rmdir"
            || row
                .param_of(Kind::Flags(FlagSet::At))
                .is_some_and(|i| ev.args[i] & libc::AT_REMOVEDIR as u64 != 0);
        let path = match (row.effect, moved) {
            (Effect::Remove, _) if removes_dir => {
                self.full_path(ev, row, row.param_of(Kind::Path)?).ok()?
            }
            (Effect::Move, Some((_, dst, false))) => dst.clone(),
            _ => return None,
        };
        if is_pseudo(&path) {
            return None;
        }
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
        let dir = self.root.open_at(&path, flags, 0).ok()?;
        crate::state::removal(self.procs, self.root, &path, dir)
    }

    /// The traced directory path argument `i` is resolved from: its
    /// directory descriptor's, or the working directory.
    fn resolve_base(&self, ev: &SyscallEvent, row: &Syscall, i: usize) -> Result<Vec<u8>, i64> {
        let dirfd = (i > 0 && row.params()[i - 1].kind == Kind::DirFd)
            .then(|| ev.args[i - 1] as i32)
            .filter(|&d| d != AT_FDCWD);
        match dirfd {
            Some(d) => match self.proc.entry(ev, d) {
                Some(e) if !e.path.is_empty() => Ok(e.path),
                Some(_) => Err(-i64::from(libc::ENOTDIR)),
                None => Err(-i64::from(libc::EBADF)),
            },
            None => Ok(lock(&self.proc.fs).cwd.clone()),
        }
    }

    /// The umask a file that path argument `i` creates is made with: the
    /// process's, except in a directory with a default POSIX ACL, where
    /// the kernel ignores it (the ACL's mask applies instead, and replay's
    /// copy of the directory has the same ACL).
    fn umask_at(&self, ev: &SyscallEvent, row: &Syscall, i: usize) -> u32 {
        let umask = lock(&self.proc.fs).umask;
        if umask == 0 || !self.default_acls.load(Ordering::Relaxed) {
            return umask;
        }
        let dir = self
            .full_path(ev, row, i)
            .ok()
            .and_then(|full| self.root.parent(&full).ok());
        match dir {
            Some((dir, _)) if has_default_acl(&dir) => 0,
            _ => umask,
        }
    }

    /// The absolute traced path of argument `i`, joined with the
    /// directory descriptor argument before it (if any) or the cwd.
    fn full_path(&self, ev: &SyscallEvent, row: &Syscall, i: usize) -> Result<Vec<u8>, i64> {
        let Some(path) = Self::path_arg(ev, i) else {
            // The recorders read a path up to `PATH_MAX` bytes: one cut
            // there had no end within it, and the kernel refuses such a
            // path whole (bash tries a long logical `cd` before a
            // relative one).
            let cut = ev
                .capture(i as u8, Role::Entry)
                .is_some_and(|c| c.status == CaptureStatus::Truncated);
            return Err(-i64::from(if cut {
                libc::ENAMETOOLONG
            } else {
                libc::EFAULT
            }));
        };
        if path.is_empty() {
            // Calls that take "" with AT_EMPTY_PATH act on their
            // descriptor before they get here.
            return Err(-i64::from(libc::ENOENT));
        }
        let full = if path.first() == Some(&b'/') {
            // From the process's root (`/` unless it called chroot).
            let from_root = &path[path.iter().take_while(|&&b| b == b'/').count()..];
            join_as_called(&lock(&self.proc.fs).root, from_root)
        } else {
            match self.in_removed_dir(ev, row, i) {
                Some(InRemoved::Path(out) | InRemoved::Itself(_, out)) => out,
                Some(InRemoved::Inside) => return Err(-i64::from(libc::ENOENT)),
                _ => join_as_called(&self.resolve_base(ev, row, i)?, path),
            }
        };
        // `/proc/self/fd/N` names the traced descriptor N (tar, coreutils
        // and glibc's fchmodat fallback use it): follow it in the emulated
        // table, never to the host's /proc.
        if let Some((owner, fd, rest)) = proc_fd_link(&full, ev.tgid, ev.tid) {
            if rest.is_empty() && Self::nofollow(ev, row, i) {
                // The call acts on the link itself, which lives in /proc
                // (`link("/proc/self/fd/5", ...)` is EXDEV).
                return Ok(full);
            }
            let Some(table) = self.table_of(ev, owner) else {
                // Not a process of the trace: the host's, simulated.
                return Ok(full);
            };
            return match table.entry(ev, fd) {
                Some(e) if !e.path.is_empty() && !is_pseudo(&e.path) => {
                    Ok(join_as_called(&e.path, rest))
                }
                Some(_) => Ok(full),
                None => Err(-i64::from(libc::ENOENT)),
            };
        }
        Ok(full)
    }

    /// The state of process `tgid` for a `/proc/PID/fd/N` path: the
    /// caller's own, or another live process of the trace's (`sh -c 'echo
    /// x >> /proc/$PPID/fd/3'`), `None` for one replay does not know.
    fn table_of(&self, ev: &SyscallEvent, tgid: u32) -> Option<Proc> {
        if tgid == ev.tgid {
            return Some(self.proc.clone());
        }
        let other = lock(self.procs).get(&tgid).and_then(|p| p.upgrade());
        other
    }

    /// Replaces `path`, which `fd` was just opened with, by where `fd` is
    /// if `path` climbs with `..`: later calls relative to it (`rm -rf`
    /// opens `dir/sub/..`, removes `sub`, then removes `dir`'s entries
    /// through it) must not resolve through a component since removed.
    /// The recorders name descriptors the same way (the kernel's
    /// `/proc/PID/fd` link).
    fn settle_dot_dot(&self, path: &mut Vec<u8>, fd: &OwnedFd) {
        if path.split(|&b| b == b'/').any(|c| c == b"..") {
            if let Some(there) = self.root.name_of(fd.as_fd()) {
                *path = there;
            }
        }
    }

    /// The real descriptor that a `/proc/self/fd/N` path argument names
    /// whole (no path after N), when N is a real descriptor of the caller.
    /// Its own path may not name it: an `O_TMPFILE` file has none (its
    /// entry holds the directory), a renamed file has another.
    fn whole_fd_link(&self, ev: &SyscallEvent, i: usize) -> Option<Arc<OwnedFd>> {
        let (owner, fd, rest) = proc_fd_link(Self::path_arg(ev, i)?, ev.tgid, ev.tid)?;
        match self.table_of(ev, owner)?.entry(ev, fd)? {
            FdEntry {
                target: Target::Real(real),
                ..
            } if rest.is_empty() => Some(real),
            _ => None,
        }
    }

    /// True when path argument `i` names a directory entry itself (a
    /// final symbolic link is not followed): by the call's group or its
    /// `AT_SYMLINK_NOFOLLOW`, unless `AT_SYMLINK_FOLLOW` asks `linkat` to
    /// follow its first path.
    fn nofollow(ev: &SyscallEvent, row: &Syscall, i: usize) -> bool {
        let params = row.params();
        let at = params
            .iter()
            .position(|p| p.kind == Kind::Flags(catalogue::FlagSet::At))
            .map_or(0, |k| ev.args[k]);
        let first_path = params.iter().position(|p| p.kind == Kind::Path) == Some(i);
        if at & libc::AT_SYMLINK_NOFOLLOW as u64 != 0 {
            true
        } else if at & libc::AT_SYMLINK_FOLLOW as u64 != 0 && first_path {
            false
        } else {
            row.in_groups(Group::NOFOLLOW)
        }
    }

    /// Executes a call straight from its catalogue row.
    fn execute(&mut self, ev: &SyscallEvent, row: &'static Syscall) -> Outcome {
        let expected = Self::expected(ev);
        let params = row.params();
        let mut a = ev.args;
        let mut keep = Keep::default();
        let mut outs: Vec<Out> = Vec::new();
        // The real descriptor of a pipe or FIFO argument.
        let mut stream_fd = None;
        // A descriptor argument in O_DIRECT mode: data buffers go aligned.
        let mut direct = false;
        // The first real descriptor argument.
        let mut first_fd = None;
        // Which way an `InOut` iovec array carries data, once known.
        let mut iov_dir = None;
        for (i, p) in params.iter().enumerate() {
            let raw = ev.args[i];
            match p.kind {
                Kind::IoCbs { .. } if expected > 0 => {
                    let proc = &self.proc;
                    let real_fd = |fd: i32| proc.real(ev, fd);
                    return Outcome::Executed(aio::submit(&proc.aio, ev, i as u8, &real_fd));
                }
                Kind::IoEvents if expected > 0 => {
                    return Outcome::Executed(aio::reap(&self.proc.aio, ev, i as u8, self.verify));
                }
                // Nothing was submitted or reaped.
                Kind::IoCbs { .. } | Kind::IoEvents => return Outcome::Simulated(None),
                Kind::Fd => match self.proc.entry(ev, raw as i32) {
                    Some(FdEntry {
                        target: Target::Ring(ring),
                        ..
                    }) if row.effect == Effect::None => {
                        let proc = &self.proc;
                        let real_fd = |fd: i32| proc.real(ev, fd);
                        return Outcome::Executed(ring.enter(
                            ev,
                            row,
                            &real_fd,
                            self.verify,
                            self.progress,
                        ));
                    }
                    Some(FdEntry {
                        target: Target::Real(fd),
                        stream,
                        direct: d,
                        ..
                    }) => {
                        direct |= d;
                        first_fd.get_or_insert(fd.as_raw_fd());
                        a[i] = fd.as_raw_fd() as u64;
                        if stream {
                            stream_fd = Some(fd.as_raw_fd());
                        }
                        keep.fds.push(fd);
                    }
                    Some(_) => {
                        self.unheld_move(ev, row);
                        return self.simulate(ev, row);
                    }
                    None => a[i] = BAD_FD,
                },
                Kind::DirFd => {}
                Kind::Path if raw == 0 || Self::path_arg(ev, i) == Some(&b""[..]) => {
                    // NULL or "" with AT_EMPTY_PATH: the call acts on the
                    // directory descriptor before it.
                    if i > 0 && params[i - 1].kind == Kind::DirFd {
                        match self.proc.entry(ev, ev.args[i - 1] as i32) {
                            Some(FdEntry {
                                target: Target::Real(fd),
                                ..
                            }) => {
                                a[i - 1] = fd.as_raw_fd() as u64;
                                keep.fds.push(fd);
                            }
                            Some(_) => return self.simulate(ev, row),
                            None => a[i - 1] = BAD_FD,
                        }
                    }
                    if raw != 0 {
                        keep.strings.push(CString::default());
                        a[i] = keep.strings.last().unwrap().as_ptr() as u64;
                    }
                }
                Kind::Path => {
                    let nofollow = Self::nofollow(ev, row, i);
                    if let Some(fd) = self.whole_fd_link(ev, i).filter(|_| !nofollow) {
                        // Named through its descriptor: the replayer's own
                        // link to that descriptor reaches the very object,
                        // inside the root.
                        let link = CString::new(fd_path(fd.as_fd())).expect("no NUL");
                        a[i] = link.as_ptr() as u64;
                        keep.strings.push(link);
                        keep.fds.push(fd);
                        if i > 0 && params[i - 1].kind == Kind::DirFd {
                            a[i - 1] = AT_FDCWD as u64;
                        }
                        continue;
                    }
                    if let Some(InRemoved::Itself(dir, _)) = self.in_removed_dir(ev, row, i) {
                        let mut link = fd_path(dir.as_fd()).into_bytes();
                        if nofollow {
                            link.extend_from_slice(b"/.");
                        }
                        keep.strings.push(CString::new(link).expect("no NUL"));
                        a[i] = keep.strings.last().unwrap().as_ptr() as u64;
                        keep.fds.push(dir);
                        if i > 0 && params[i - 1].kind == Kind::DirFd {
                            a[i - 1] = AT_FDCWD as u64;
                        }
                        continue;
                    }
                    let full = match self.full_path(ev, row, i) {
                        Ok(f) => f,
                        Err(e) => return self.settle(ev, row, e, &keep, &outs),
                    };
                    if self.simulates_path(&full) {
                        return self.simulate(ev, row);
                    }
                    let name = if nofollow {
                        self.root.entry(&full).map(|(dir, name)| {
                            keep.paths.push(dir);
                            name.into_bytes()
                        })
                    } else {
                        self.root.locate(&full, true).map(|fd| {
                            let s = fd_path(fd.as_fd()).into_bytes();
                            keep.paths.push(fd);
                            s
                        })
                    };
                    match name {
                        Ok(s) => {
                            keep.strings.push(CString::new(s).expect("no NUL"));
                            a[i] = keep.strings.last().unwrap().as_ptr() as u64;
                        }
                        Err(e)
                            if e.raw_os_error() == Some(libc::ENOENT)
                                && self.root.links_into_pseudo(&full) =>
                        {
                            return self.simulate(ev, row)
                        }
                        // Resolution failed: that is the call's result.
                        Err(e) => return self.settle(ev, row, errno_of(&e), &keep, &outs),
                    }
                    if i > 0 && params[i - 1].kind == Kind::DirFd {
                        a[i - 1] = AT_FDCWD as u64;
                    }
                }
                Kind::Str => {
                    let Some(s) = Self::path_arg(ev, i) else {
                        return Outcome::Skipped("string argument not captured");
                    };
                    let Ok(c) = CString::new(s) else {
                        return Outcome::Skipped("string argument not captured");
                    };
                    keep.strings.push(c);
                    a[i] = keep.strings.last().unwrap().as_ptr() as u64;
                }
                Kind::CreateMode => {
                    let mode = raw as u32;
                    let ty = mode & libc::S_IFMT;
                    if ty == libc::S_IFCHR || ty == libc::S_IFBLK {
                        // A device node could reach a host device: it is
                        // made inert, numbered 0:0, which no driver
                        // serves (opening it fails with ENXIO, and replay
                        // simulates its use; see `open`). Only root may
                        // make one at all.
                        // SAFETY: geteuid cannot fail.
                        if unsafe { libc::geteuid() } != 0 {
                            return self.simulate(ev, row);
                        }
                        if let Some(dev) = params
                            .iter()
                            .position(|p| matches!(p.kind, Kind::Dev { .. }))
                        {
                            a[dev] = 0;
                        }
                    }
                    let umask = match row.param_of(Kind::Path) {
                        Some(path) => self.umask_at(ev, row, path),
                        None => lock(&self.proc.fs).umask,
                    };
                    a[i] = u64::from(mode & !umask);
                }
                _ if raw == 0 && is_memory(p.kind) => {}
                Kind::Buf { dir: Dir::In, len }
                | Kind::Struct {
                    dir: Dir::In | Dir::InOut,
                    len,
                    ..
                } => {
                    let want = match len {
                        Len::Arg(k) => {
                            // A partial write is replayed as partial.
                            if row.ret == Ret::Size
                                && expected >= 0
                                && (expected as u64) < ev.args[k as usize]
                            {
                                a[k as usize] = expected as u64;
                            }
                            a[k as usize] as usize
                        }
                        Len::Fixed(n) => n as usize,
                        _ => return self.simulate(ev, row),
                    };
                    let captured = ev
                        .capture(i as u8, Role::Entry)
                        .and_then(|c| c.data.as_deref())
                        .unwrap_or_default();
                    let data = matches!(p.kind, Kind::Buf { .. });
                    if data && captured.len() >= want && !direct {
                        // The kernel only reads a data buffer: the captured
                        // bytes go as they are, uncopied (a write storm
                        // copied every byte it wrote once more).
                        a[i] = captured.as_ptr() as u64;
                        continue;
                    }
                    let buf = Mem::copy_of(captured, want, data && direct);
                    if let Kind::Struct {
                        dir: Dir::InOut, ..
                    } = p.kind
                    {
                        outs.push(Out {
                            param: i,
                            kind: p.kind,
                            buf: keep.bufs.len(),
                            elems: 1,
                        });
                    }
                    a[i] = buf.as_ptr() as u64;
                    keep.bufs.push(buf);
                }
                Kind::Buf { dir: Dir::Out, len }
                | Kind::Struct {
                    dir: Dir::Out, len, ..
                } => {
                    let size = match len {
                        Len::Fixed(n) => u64::from(n),
                        Len::Arg(k) => ev.args[k as usize],
                        Len::ArgTimes(k, size) => ev.args[k as usize].saturating_mul(size.into()),
                        Len::Ret => {
                            let count = params
                                .iter()
                                .enumerate()
                                .skip(i + 1)
                                .find(|(_, q)| matches!(q.kind, Kind::Size | Kind::UInt));
                            match count {
                                Some((k, _)) => {
                                    let mut n = ev.args[k];
                                    if stream_fd.is_some() && expected > 0 {
                                        // Pipes: ask for what the program got.
                                        n = expected as u64;
                                    } else if n > OUT_MAX {
                                        n = expected.max(0) as u64;
                                    }
                                    a[k] = n;
                                    n
                                }
                                None => expected.max(0) as u64,
                            }
                        }
                        Len::ArgPtr(_) => return self.simulate(ev, row),
                    };
                    // As large as the count the kernel is told: a count
                    // over OUT_MAX became the recorded result above.
                    let buf = Mem::zeroed(size as usize, direct);
                    a[i] = buf.as_ptr() as u64;
                    outs.push(Out {
                        param: i,
                        kind: p.kind,
                        buf: keep.bufs.len(),
                        elems: 1,
                    });
                    keep.bufs.push(buf);
                }
                Kind::IoVec { dir, count } => {
                    let dir = match dir {
                        Dir::InOut if first_fd.is_some_and(read_only) => Dir::Out,
                        Dir::InOut => Dir::In,
                        d => d,
                    };
                    iov_dir = Some(dir);
                    let n = (ev.args[count as usize] as usize).min(1024);
                    let first = keep.bufs.len();
                    let mut left =
                        (row.ret == Ret::Size && expected >= 0).then_some(expected as usize);
                    // What the recorded call read into the elements not
                    // yet laid out: an element over OUT_MAX shrinks to
                    // it, not below.
                    let mut unread = left.unwrap_or(OUT_MAX as usize);
                    let mut iov = Vec::with_capacity(n);
                    for e in 0..n {
                        let role = if dir == Dir::In {
                            Role::Entry
                        } else {
                            Role::Exit
                        };
                        let cap = ev.capture_elem(i as u8, role, e as u32);
                        let mut len = cap.map_or(0, |c| c.len as usize);
                        if dir != Dir::In {
                            let filled = len.min(unread);
                            len = len.min(unread.max(OUT_MAX as usize));
                            unread -= filled;
                        }
                        let mut buf = if dir == Dir::In {
                            if let Some(l) = left.as_mut() {
                                // A partial write is replayed as partial.
                                len = len.min(*l);
                                *l -= len;
                            }
                            let captured = cap.and_then(|c| c.data.as_deref()).unwrap_or_default();
                            if captured.len() >= len && !direct {
                                // Read by the kernel only: sent uncopied.
                                iov.push(libc::iovec {
                                    iov_base: captured.as_ptr().cast_mut().cast(),
                                    iov_len: len,
                                });
                                continue;
                            }
                            Mem::copy_of(captured, len, direct)
                        } else {
                            Mem::zeroed(len, direct)
                        };
                        iov.push(libc::iovec {
                            iov_base: buf.as_mut_ptr().cast(),
                            iov_len: buf.len(),
                        });
                        keep.bufs.push(buf);
                    }
                    if dir != Dir::In {
                        outs.push(Out {
                            param: i,
                            kind: p.kind,
                            buf: first,
                            elems: n,
                        });
                    }
                    a[i] = iov.as_ptr() as u64;
                    keep.iovs.push(iov);
                }
                // Memory the catalogue does not describe cannot be replayed.
                Kind::Ptr | Kind::StrArray | Kind::MsgHdr { .. } => return self.simulate(ev, row),
                _ => {}
            }
        }
        let data = |d: Dir| {
            iov_dir == Some(d)
                || params.iter().any(
                    |p| matches!(p.kind, Kind::Buf { dir, .. } | Kind::MsgHdr { dir } if dir == d),
                )
        };
        // Only calls that moved data (or saw end-of-file) waited for it;
        // one that failed (EAGAIN on a non-blocking pipe) did not.
        let waited = expected >= 0 && (data(Dir::Out) || data(Dir::In));
        let stream = stream_fd.filter(|_| waited);
        if let Some(fd) = stream.filter(|_| !data(Dir::Out)) {
            match self.write_stream(fd, ev.nr, &a, expected) {
                Some(Ok(got)) => return self.settle(ev, row, got, &keep, &outs),
                Some(Err(m)) => return Outcome::Executed(Some(m)),
                None => {}
            }
        }
        if let Some(fd) = stream {
            if let Err(m) = self.wait_ready(fd, data(Dir::Out)) {
                return Outcome::Executed(Some(m));
            }
        }
        let mut got = self.issue(ev.nr, &a);
        let transfer = continues_short_transfers(row).filter(|_| got > 0 && got < expected);
        if let (Some(fd), Some(read)) = (stream_fd, transfer) {
            // A pipe read returns what is there, and a write to a
            // non-blocking pipe what fits; go on until the recorded amount
            // moved, as it had in the recording.
            let base = a[1];
            while got < expected {
                // The rest of a read is waited for as any pipe call waits,
                // not in the kernel: a blocking read would stand there for
                // good if the rest never came.
                if read {
                    if let Err(m) = self.wait_ready(fd, true) {
                        return Outcome::Executed(Some(m));
                    }
                }
                let mut b = a;
                b[1] = base + got as u64;
                b[2] = (expected - got) as u64;
                let r = self.issue(ev.nr, &b);
                // A non-blocking pipe (libuv and cmake read from one, xz
                // writes to one): wait for the rest, or for room.
                if r == -i64::from(libc::EAGAIN) && self.wait_ready(fd, read).is_ok() {
                    continue;
                }
                if r <= 0 {
                    break;
                }
                got += r;
            }
        }
        let short = got > 0 && got < expected && stream_fd.is_none();
        if let Some(count) = short.then(|| descriptor_copy_count(row)).flatten() {
            // A file system may move less per call than the recording's
            // did (btrfs's `copy_file_range` stops at the last whole
            // block: 49,152 of 50,000 bytes); go on until the recorded
            // amount moved, as a program's loop would have. Offsets passed
            // by pointer were moved on by the kernel.
            while got < expected {
                let mut b = a;
                b[count] = (expected - got) as u64;
                let r = self.issue(ev.nr, &b);
                if r <= 0 {
                    break;
                }
                got += r;
            }
        }
        self.moved = got.max(0);
        self.settle(ev, row, got, &keep, &outs)
    }

    /// Readies a call that mismatched to be issued again, once the calls
    /// that may have come first in the recording have finished: a query
    /// as it is; a [`Group::REREAD`] call on a regular file with its
    /// offset moved back over what it read. False when it cannot be.
    pub fn ready_again(&mut self, ev: &SyscallEvent, row: &Syscall) -> bool {
        if row.in_groups(Group::QUERY) {
            // A seek relative to the offset moved it: once more would move
            // it twice.
            let params = row.params();
            let relative = params
                .iter()
                .position(|p| p.kind == Kind::Flags(FlagSet::Whence))
                .is_some_and(|w| ev.args[w] == libc::SEEK_CUR as u64)
                && params
                    .iter()
                    .position(|p| p.kind == Kind::Offset)
                    .is_some_and(|o| ev.args[o] != 0);
            return !relative;
        }
        if !row.in_groups(Group::REREAD) {
            return false;
        }
        let Some(fd) = self.proc.real(ev, ev.args[0] as i32) else {
            return false;
        };
        crate::state::stat_of(&fd).is_some_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFREG)
            // SAFETY: lseek on a descriptor `proc` keeps open.
            && unsafe {
                libc::lseek(fd.as_raw_fd(), -std::mem::take(&mut self.moved), libc::SEEK_CUR)
            } >= 0
    }

    /// Writes a `write` or `writev` to a pipe until `expected` bytes went
    /// in, without ever blocking in the kernel: each try is a
    /// `pwritev2(RWF_NOWAIT)`, and a try that finds no room waits for it
    /// as [`Self::wait_ready`] does. (Polling first is not enough: a pipe
    /// whose slots are all in use polls as full while a small write still
    /// fits in its last page; initdb writes 60 KiB of short lines to
    /// postgres before it reads any.) `None` for other calls, or when the
    /// kernel cannot write this descriptor without blocking.
    fn write_stream(
        &self,
        fd: i32,
        nr: u32,
        a: &[u64; 6],
        expected: i64,
    ) -> Option<Result<i64, Mismatch>> {
        let mut iovs: Vec<libc::iovec> = match i64::from(nr) {
            libc::SYS_write => vec![libc::iovec {
                iov_base: a[1] as *mut libc::c_void,
                iov_len: a[2] as usize,
            }],
            // SAFETY: `execute` built this array in memory it keeps.
            libc::SYS_writev => unsafe {
                std::slice::from_raw_parts(a[1] as *const libc::iovec, a[2] as usize).to_vec()
            },
            _ => return None,
        };
        let mut got = 0i64;
        while got < expected {
            // SAFETY: the iovecs point at buffers `execute` keeps alive.
            let r = unsafe {
                libc::pwritev2(fd, iovs.as_ptr(), iovs.len() as i32, -1, libc::RWF_NOWAIT)
            };
            let r = if r < 0 {
                errno_of(&io::Error::last_os_error())
            } else {
                r as i64
            };
            match r {
                _ if r == -i64::from(libc::EOPNOTSUPP) && got == 0 => return None,
                _ if r == -i64::from(libc::EAGAIN) => {
                    if let Err(m) = self.wait_ready(fd, false) {
                        return Some(Err(m));
                    }
                }
                _ if r <= 0 => return Some(Ok(if got > 0 { got } else { r })),
                _ => {
                    got += r;
                    advance(&mut iovs, r as usize);
                }
            }
        }
        Some(Ok(got))
    }

    /// Waits until a pipe can be read (or written), or fails when it has
    /// not become ready while no replay thread made progress for
    /// [`STALL`]: replay never hangs on data that will not come.
    fn wait_ready(&self, fd: i32, read: bool) -> Result<(), Mismatch> {
        let events = if read { libc::POLLIN } else { libc::POLLOUT };
        let limit = || {
            if self.stalls.load(Ordering::Relaxed) == 0 {
                STALL
            } else {
                STALL_AGAIN
            }
        };
        let ready = self.while_progressing(limit, || {
            let mut p = libc::pollfd {
                fd,
                events,
                revents: 0,
            };
            // SAFETY: one pollfd on the stack.
            (unsafe { libc::poll(&mut p, 1, 200) } != 0).then_some(())
        });
        if ready.is_some() {
            return Ok(());
        }
        if (self.stopping)() {
            return Err("replay stopped while it waited for the pipe: not issued".into());
        }
        let waited = limit();
        self.stalls.fetch_add(1, Ordering::Relaxed);
        let holders = match read {
            true => self.write_ends_of(fd),
            false => String::new(),
        };
        Err(format!(
            "the pipe stayed {} for {:.1} s while replay stood still{holders}: not issued",
            if read { "empty" } else { "full" },
            waited.as_secs_f64()
        ))
    }

    /// Where the write end of the pipe whose read end is real descriptor
    /// `fd` is open, by traced process and descriptor number: a read
    /// that waited in vain for an end of file names who kept it from
    /// coming (` (its write end is open in process 7 as 4)`), or nothing.
    fn write_ends_of(&self, fd: i32) -> String {
        // SAFETY: the caller's descriptor, open while it waits.
        let Some(pipe) = crate::state::id_of(unsafe { BorrowedFd::borrow_raw(fd) }) else {
            return String::new();
        };
        let write_end_of_pipe = |real: &OwnedFd| {
            // SAFETY: F_GETFL on a descriptor a live entry holds.
            let mode = unsafe { libc::fcntl(real.as_raw_fd(), libc::F_GETFL) } & libc::O_ACCMODE;
            mode == libc::O_WRONLY && crate::state::id_of(real) == Some(pipe)
        };
        let procs: Vec<(u32, Proc)> = lock(self.procs)
            .iter()
            .filter_map(|(&tgid, p)| Some((tgid, p.upgrade()?)))
            .collect();
        let mut holders: Vec<(u32, i32)> = Vec::new();
        for (tgid, proc) in procs {
            for (&n, e) in lock(&proc.fds).iter() {
                if let Target::Real(real) = &e.target {
                    if write_end_of_pipe(real) {
                        holders.push((tgid, n));
                    }
                }
            }
        }
        holders.sort_unstable();
        let named: Vec<String> = holders
            .iter()
            .take(4)
            .map(|(tgid, n)| format!("process {tgid} as {n}"))
            .collect();
        match named.is_empty() {
            true => String::new(),
            false => format!(" (its write end is open in {})", named.join(", ")),
        }
    }

    /// Tries `attempt` (which waits a little itself when it fails) until
    /// it succeeds, or until no replay thread has finished a call for
    /// `limit()`: a call waiting for another thread's never waits for
    /// ever.
    fn while_progressing<T>(
        &self,
        limit: impl Fn() -> Duration,
        mut attempt: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        let mut seen = self.progress.load(Ordering::Relaxed);
        let mut since = Instant::now();
        loop {
            if let Some(x) = attempt() {
                return Some(x);
            }
            if (self.stopping)() {
                return None;
            }
            let now = self.progress.load(Ordering::Relaxed);
            if now != seen {
                (seen, since) = (now, Instant::now());
            } else if since.elapsed() >= limit() {
                return None;
            }
        }
    }

    /// Verifies an executed call's result and outputs.
    fn settle(
        &mut self,
        ev: &SyscallEvent,
        row: &Syscall,
        got: i64,
        keep: &Keep,
        outs: &[Out],
    ) -> Outcome {
        let expected = Self::expected(ev);
        if row.ret == Ret::Fd && got >= 0 && expected >= 0 {
            // SAFETY: a descriptor the kernel just returned to us.
            let fd = unsafe { OwnedFd::from_raw_fd(got as i32) };
            let e = FdEntry::real(fd, row.cloexec(&ev.args), Vec::new(), false);
            install(&mut lock(&self.proc.fds), expected as i32, e, ev);
        } else if row.ret == Ret::Fd && got >= 0 {
            // SAFETY: as above; the trace says the call failed, so drop it.
            drop(unsafe { OwnedFd::from_raw_fd(got as i32) });
        }
        if self.verify == Verify::None {
            return Outcome::Executed(None);
        }
        let is_listing = row.params().iter().any(|p| {
            matches!(
                p.kind,
                Kind::Struct {
                    ty: StructType::Dirents64,
                    ..
                }
            )
        });
        if is_listing {
            return Outcome::Executed(self.listing(ev, got, keep, outs));
        }
        if let Some(m) = verify::ret(row.ret, expected, got) {
            return Outcome::Executed(Some(m));
        }
        if self.verify != Verify::Full || got < 0 {
            return Outcome::Executed(None);
        }
        for o in outs {
            for e in 0..o.elems {
                let Some(cap) = ev.capture_elem(o.param as u8, Role::Exit, e as u32) else {
                    continue;
                };
                let (CaptureStatus::Complete, Some(want)) = (cap.status, cap.data.as_deref())
                else {
                    *self.not_compared.entry(cap.status.name()).or_default() += 1;
                    continue;
                };
                let buf = &keep.bufs[o.buf + e];
                let have = &buf[..want.len().min(buf.len())];
                let m = match o.kind {
                    Kind::Struct { ty, .. } => verify::structure(ty, want, have, &self.owners),
                    _ => verify::bytes("data", want, have),
                };
                let one_buffer = o.elems == 1 && !matches!(o.kind, Kind::Struct { .. });
                if m.is_some()
                    && !(one_buffer && self.stored_through_mappings(ev, row, got, want, have))
                {
                    return Outcome::Executed(m);
                }
            }
        }
        Outcome::Executed(None)
    }

    /// A read of a file (`read`, `pread64`: one buffer) whose bytes differ
    /// only where live shared writable mappings of the file cover it read
    /// stores made through them, which the trace holds only when a mapping
    /// is unmapped, synced or left at exit ([`LiveMappings`]). Writes the
    /// recorded bytes there, as those stores put them, and counts them;
    /// false (a mismatch) if any differing byte lies elsewhere.
    ///
    /// [`LiveMappings`]: crate::state::LiveMappings
    fn stored_through_mappings(
        &mut self,
        ev: &SyscallEvent,
        row: &Syscall,
        got: i64,
        want: &[u8],
        have: &[u8],
    ) -> bool {
        let Some(fd) = row.param_of(Kind::Fd).filter(|_| want.len() == have.len()) else {
            return false;
        };
        let Some(FdEntry {
            target: Target::Real(real),
            ..
        }) = self.proc.entry(ev, ev.args[fd] as i32)
        else {
            return false;
        };
        let Some(st) = crate::state::stat_of(&real) else {
            return false;
        };
        let maps = self.live_maps.of((st.st_dev, st.st_ino));
        if maps.is_empty() || st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return false;
        }
        let start = match row.param_of(Kind::Offset) {
            Some(i) => ev.args[i],
            // SAFETY: lseek on a descriptor we own.
            None => match unsafe { libc::lseek(real.as_raw_fd(), 0, libc::SEEK_CUR) } {
                at if at >= got => (at - got) as u64,
                _ => return false,
            },
        };
        // The mapping holding byte `i` of the read, and where it stops.
        let holder = |i: usize| {
            let at = start + i as u64;
            maps.iter().find_map(|m| {
                let r = m.file_range()?;
                r.contains(&at).then(|| (m, (r.end - start) as usize))
            })
        };
        let differs = |i: usize| want[i] != have[i];
        if !(0..want.len()).all(|i| !differs(i) || holder(i).is_some()) {
            return false;
        }
        // Each run of differing bytes, stored through the mapping holding it.
        let (mut written, mut i) = (0, 0);
        while i < want.len() {
            let Some((m, held_to)) = holder(i).filter(|_| differs(i)) else {
                i += 1;
                continue;
            };
            let mut end = i + 1;
            while end < want.len().min(held_to) && differs(end) {
                end += 1;
            }
            if m.store_at_file(start + i as u64, &want[i..end]).is_err() {
                return false;
            }
            written += end - i;
            i = end;
        }
        use std::sync::atomic::Ordering::Relaxed;
        self.live_maps.reads.fetch_add(1, Relaxed);
        self.live_maps.bytes.fetch_add(written as u64, Relaxed);
        true
    }

    /// `getdents64`: names are gathered per stream and compared as sets at
    /// its end, since file systems list entries in different orders.
    fn listing(
        &mut self,
        ev: &SyscallEvent,
        got: i64,
        keep: &Keep,
        outs: &[Out],
    ) -> Option<Mismatch> {
        let expected = Self::expected(ev);
        if (expected < 0 || got < 0) && expected != got {
            return verify::ret(Ret::Int, expected, got);
        }
        let fd = ev.args[0] as i32;
        let mut table = lock(&self.proc.fds);
        let entry = live(&mut table, fd, ev)?;
        let dir = entry.path.clone();
        // btrfs fixes what a stream lists when the directory is opened;
        // others when it is read: a name made in between may be in either.
        let opened_ns = entry.opened_ns.min(ev.enter_ns);
        let stream = entry.listing.get_or_insert_with(Default::default).clone();
        drop(table);
        let mut l = lock(&stream);
        if !l.begun {
            l.begun = true;
            l.begun_ns = opened_ns;
            drop(l);
            self.listings.begin(&dir, &stream);
            l = lock(&stream);
        }
        if let Some(cap) = ev
            .captures
            .iter()
            .find(|c| c.role == Role::Exit && c.arg == 1)
        {
            if let Some(d) = cap.data.as_deref() {
                l.expected.extend(verify::dirents(d));
            }
        }
        if let Some(o) = outs.first() {
            let n = got.max(0) as usize;
            l.got.extend(verify::dirents(
                &keep.bufs[o.buf][..n.min(keep.bufs[o.buf].len())],
            ));
        }
        // Compared when the recorded stream ends. Replay's may end sooner:
        // a signal cut a recorded call short (Go's preemption signal did),
        // so the recording needed more calls for the same entries.
        if expected != 0 {
            return None;
        }
        let Listing {
            expected: e,
            got: g,
            mut unspecified,
            begun_ns,
            ..
        } = std::mem::take(&mut *l);
        drop(l);
        self.listings.end(&stream);
        unspecified.extend(self.listings.changed_during(&dir, begun_ns, ended_ns(ev)));
        match self.verify {
            Verify::Full => verify::listing(e, g, &unspecified),
            _ if got != 0 => Some("directory stream ended late".into()),
            _ => None,
        }
    }

    /// Calls that change emulated process state. `None` means "execute or
    /// simulate by the table".
    fn effect(&mut self, ev: &SyscallEvent, row: &'static Syscall) -> Option<Outcome> {
        let expected = Self::expected(ev);
        let arg = |i: usize| ev.args[i];
        let ok = |got: i64| -> Option<Mismatch> { verify::ret(row.ret, expected, got) };
        Some(match row.effect {
            Effect::Open => self.open(ev, row),
            Effect::Close => {
                // Noted while the table is locked: a copy made meanwhile
                // either has the entry or finds it kept (TableCopies).
                let mut t = lock(&self.proc.fds);
                let removed = close_entry(&mut t, arg(0) as i32, ev);
                if let Some(e) = &removed {
                    self.copies.closed(&self.proc.fds, arg(0) as i32, e, ev);
                }
                drop(t);
                let got = if removed.is_some() {
                    0
                } else {
                    -i64::from(libc::EBADF)
                };
                match removed {
                    Some(FdEntry {
                        target: Target::Simulated,
                        ..
                    }) => Outcome::Simulated(None),
                    _ => Outcome::Executed(ok(got)),
                }
            }
            Effect::CloseRange => {
                let (first, last, flags) = (arg(0) as u32, arg(1) as u32, arg(2) as u32);
                let known = libc::CLOSE_RANGE_UNSHARE | libc::CLOSE_RANGE_CLOEXEC;
                if first > last || flags & !known != 0 {
                    // The kernel refuses these before touching anything.
                    return Some(Outcome::Simulated(ok(-i64::from(libc::EINVAL))));
                }
                if flags & libc::CLOSE_RANGE_UNSHARE != 0 {
                    self.proc.unshare(libc::CLONE_FILES as u64);
                }
                let mut t = lock(&self.proc.fds);
                let fds: Vec<i32> = t
                    .keys()
                    .copied()
                    .filter(|&f| f as u32 >= first && f as u32 <= last)
                    .collect();
                let mut removed = Vec::new();
                for f in fds {
                    if flags & libc::CLOSE_RANGE_CLOEXEC != 0 {
                        t.get_mut(&f).expect("listed").cloexec = true;
                    } else if let Some(e) = t.remove(&f) {
                        removed.push((f, e));
                    }
                }
                for (f, e) in removed {
                    self.copies.closed(&self.proc.fds, f, &e, ev);
                }
                drop(t);
                Outcome::Simulated(ok(0))
            }
            Effect::Dup => {
                // dup2 and dup3 name the new number; dup3 also takes flags,
                // and refuses to copy a descriptor onto itself.
                let (target, flags) = match row.params().len() {
                    1 => (None, None),
                    2 => (Some(arg(1)), None),
                    _ => (Some(arg(1)), Some(arg(2))),
                };
                let mut t = lock(&self.proc.fds);
                let got = match live(&mut t, arg(0) as i32, ev).map(|e| e.clone()) {
                    None => -i64::from(libc::EBADF),
                    Some(_) if target == Some(arg(0)) && flags.is_some() => {
                        -i64::from(libc::EINVAL)
                    }
                    Some(_) if target == Some(arg(0)) => arg(1) as i64,
                    Some(mut e) if expected >= 0 => {
                        e.cloexec = row.cloexec(&ev.args);
                        e.listing = None;
                        e.displaced = None;
                        t.insert(expected as i32, e);
                        expected
                    }
                    Some(_) => expected,
                };
                Outcome::Simulated(verify::ret(Ret::Int, expected, got))
            }
            Effect::Fcntl => return self.fcntl(ev),
            Effect::Clone => self.clone_file(ev, row),
            Effect::Allocate => self.allocate(ev, row),
            Effect::Pipe => {
                let flags = row
                    .param_of(Kind::Flags(FlagSet::Cloexec))
                    .map_or(0, |i| arg(i) as i32);
                let mut fds = [0i32; 2];
                // SAFETY: a valid int[2].
                let r = unsafe {
                    libc::pipe2(
                        fds.as_mut_ptr(),
                        (flags & !libc::O_CLOEXEC) | libc::O_CLOEXEC,
                    )
                };
                let got = if r < 0 {
                    errno_of(&io::Error::last_os_error())
                } else {
                    0
                };
                if r == 0 {
                    // SAFETY: fresh descriptors we own.
                    let (rd, wr) =
                        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
                    roomy(&wr, 0);
                    if let (0, Some((a, b))) = (expected, fd_pair(ev, 0)) {
                        let cloexec = flags & libc::O_CLOEXEC != 0;
                        let writer = FdEntry {
                            _reader: rd.try_clone().ok().map(Arc::new),
                            ..FdEntry::real(wr, cloexec, Vec::new(), true)
                        };
                        let mut t = lock(&self.proc.fds);
                        install(&mut t, a, FdEntry::real(rd, cloexec, Vec::new(), true), ev);
                        install(&mut t, b, writer, ev);
                    }
                }
                Outcome::Executed(ok(got))
            }
            Effect::Map => return self.mmap(ev),
            Effect::Unmap | Effect::Sync | Effect::Advise => {
                return Some(self.stores_then(ev, row))
            }
            Effect::Remap => return Some(self.remap(ev)),
            Effect::Chdir => {
                if let Some(InRemoved::Itself(dir, name)) = row
                    .param_of(Kind::Path)
                    .and_then(|i| self.in_removed_dir(ev, row, i))
                {
                    // Into a removed directory (`cd .` or `cd ..` in a
                    // removed tree): it stays held.
                    let mut fs = lock(&self.proc.fs);
                    fs.cwd = name;
                    fs.cwd_id = None;
                    fs.removed_cwd = Some(dir);
                    return Some(Outcome::Executed(ok(0)));
                }
                if let Some((dir, name)) = row
                    .param_of(Kind::Fd)
                    .and_then(|i| self.removed_dir_fd(ev, arg(i) as i32))
                {
                    // `fchdir` to a removed directory held open.
                    let mut fs = lock(&self.proc.fs);
                    fs.cwd = name;
                    fs.cwd_id = None;
                    fs.removed_cwd = Some(dir);
                    return Some(Outcome::Executed(ok(0)));
                }
                let mut target = if row.param_of(Kind::Path).is_some() {
                    self.full_path(ev, row, 0)
                } else {
                    match self.proc.entry(ev, arg(0) as i32) {
                        Some(e) if !e.path.is_empty() => Ok(e.path),
                        Some(_) => return Some(Outcome::Simulated(None)),
                        None => Err(-i64::from(libc::EBADF)),
                    }
                };
                let mut id = None;
                let got = match &mut target {
                    Ok(p) if is_pseudo(p) => 0,
                    Ok(p) => match self.root.open_at(p, libc::O_PATH | libc::O_DIRECTORY, 0) {
                        Ok(fd) => {
                            self.settle_dot_dot(p, &fd);
                            id = crate::state::id_of(&fd);
                            0
                        }
                        Err(e) => errno_of(&e),
                    },
                    Err(e) => *e,
                };
                if let (Ok(p), 0) = (target, got) {
                    let mut fs = lock(&self.proc.fs);
                    fs.cwd = p;
                    fs.cwd_id = id;
                    fs.removed_cwd = None;
                }
                Outcome::Executed(ok(got))
            }
            Effect::Bind if expected == 0 => {
                let got = match unix_socket_path(ev) {
                    Some(path) => self.make_socket_file(path),
                    None => 0,
                };
                if let Some(name) = self.socket_name(ev).filter(|_| got == 0) {
                    if let Some(e) = live(&mut lock(&self.proc.fds), ev.args[0] as i32, ev) {
                        e.name = Some(name);
                    }
                }
                Outcome::Simulated(verify::ret(Ret::Int, expected, got))
            }
            Effect::SetIds(ids) => {
                // setfs*id returns the old id whether or not it changed.
                let took = expected >= 0
                    || matches!(
                        ids,
                        Ids::User(Which::FileSystem) | Ids::Group(Which::FileSystem)
                    );
                if let Some(c) = self.proc.creds.as_mut().filter(|_| took) {
                    c.set(ids, &ev.args);
                }
                Outcome::Simulated(None)
            }
            Effect::PidFd => {
                if expected >= 0 {
                    let entry = FdEntry {
                        process: Some(ev.args[0] as u32),
                        ..FdEntry::simulated(Vec::new(), row.cloexec(&ev.args))
                    };
                    install(&mut lock(&self.proc.fds), expected as i32, entry, ev);
                }
                Outcome::Simulated(None)
            }
            Effect::GetFd => {
                if expected >= 0 {
                    let process = self
                        .proc
                        .entry(ev, ev.args[0] as i32)
                        .and_then(|e| e.process);
                    let taken = process
                        .and_then(|p| self.table_of(ev, p))
                        .and_then(|other| other.entry(ev, ev.args[1] as i32));
                    let entry = match taken {
                        // The same description, as `dup` makes it.
                        Some(e) => FdEntry {
                            cloexec: row.cloexec(&ev.args),
                            listing: None,
                            displaced: None,
                            ..e
                        },
                        None => FdEntry::simulated(Vec::new(), row.cloexec(&ev.args)),
                    };
                    install(&mut lock(&self.proc.fds), expected as i32, entry, ev);
                }
                Outcome::Simulated(None)
            }
            Effect::Unshare => {
                if expected == 0 {
                    self.proc.unshare(ev.args[0]);
                }
                Outcome::Simulated(None)
            }
            Effect::CloseOnExec(on) => {
                if expected == 0 {
                    if let Some(e) = live(&mut lock(&self.proc.fds), ev.args[0] as i32, ev) {
                        e.cloexec = on;
                    }
                }
                Outcome::Simulated(None)
            }
            Effect::Prctl if expected == 0 && ev.args[0] == catalogue::PR_CAPBSET_DROP => {
                if let (Some(c), Some(cap)) = (
                    self.proc.creds.as_mut(),
                    1u64.checked_shl(ev.args[1] as u32),
                ) {
                    c.bounding &= !cap;
                }
                Outcome::Simulated(None)
            }
            Effect::SetCaps => {
                let header = ev.capture(0, Role::Entry).and_then(|c| c.data.as_deref());
                let data = ev.capture(1, Role::Entry).and_then(|c| c.data.as_deref());
                let set = header
                    .zip(data)
                    .and_then(|(h, d)| catalogue::caps_effective(h, d));
                if let (Some((caps, tid)), Some(c), 0) = (set, self.proc.creds.as_mut(), expected) {
                    if tid == 0 || tid as u32 == ev.tid {
                        c.caps = Some(caps);
                    }
                }
                Outcome::Simulated(None)
            }
            Effect::SetGroups => {
                if let Some(c) = self.proc.creds.as_mut().filter(|_| expected == 0) {
                    // Not captured whole: the trace no longer says.
                    c.groups = ev
                        .capture(1, Role::Entry)
                        .filter(|cap| cap.captured == cap.len)
                        .and_then(|cap| cap.data.as_deref())
                        .map(|d| catalogue::gids(d).collect());
                }
                Outcome::Simulated(None)
            }
            // Every Linux AIO call names its context first.
            Effect::AioSetup if expected == 0 => {
                let traced = ev
                    .capture(1, Role::Exit)
                    .and_then(|c| c.data.as_deref())
                    .and_then(|d| d.get(..8))
                    .map(|d| u64::from_le_bytes(d.try_into().expect("8 bytes")));
                let Some(traced) = traced else {
                    return Some(Outcome::Skipped("AIO context id not captured"));
                };
                Outcome::Executed(ok(aio::setup(&self.proc.aio, traced, arg(0))))
            }
            Effect::AioDestroy if expected == 0 => {
                Outcome::Executed(ok(aio::destroy(&self.proc.aio, arg(0))))
            }
            Effect::AioSetup | Effect::AioDestroy => Outcome::Simulated(None),
            Effect::UringSetup if expected >= 0 => {
                let params = ev
                    .capture(1, Role::Exit)
                    .and_then(|c| c.data.as_deref())
                    .and_then(reanimator_catalogue::uring::Params::parse);
                let entries = params.map_or(arg(0) as u32, |p| p.sq_entries);
                match uring::setup(entries, self.rings) {
                    Ok(ring) => {
                        let entry = FdEntry {
                            target: Target::Ring(ring),
                            ..FdEntry::simulated(Vec::new(), row.cloexec(&ev.args))
                        };
                        install(&mut lock(&self.proc.fds), expected as i32, entry, ev);
                        Outcome::Executed(None)
                    }
                    Err(e) => {
                        // Calls on it are simulated, as before io_uring was replayed.
                        self.simulate(ev, row);
                        Outcome::Executed(verify::ret(Ret::Fd, expected, e))
                    }
                }
            }
            Effect::UringSetup => Outcome::Simulated(None),
            Effect::UringRegister if expected >= 0 => {
                let Some(FdEntry {
                    target: Target::Ring(ring),
                    ..
                }) = self.proc.entry(ev, arg(0) as i32)
                else {
                    return Some(Outcome::Simulated(None));
                };
                match arg(1) {
                    reanimator_catalogue::uring::REGISTER_FILES => {
                        let Some(list) = ev
                            .capture(2, Role::Entry)
                            .filter(|c| c.status == CaptureStatus::Complete)
                            .and_then(|c| c.data.as_deref())
                        else {
                            return Some(Outcome::Skipped("registered files not captured"));
                        };
                        let files = reanimator_catalogue::gids(list)
                            .map(|fd| self.proc.real(ev, fd as i32))
                            .collect();
                        ring.register_files(files);
                    }
                    reanimator_catalogue::uring::UNREGISTER_FILES => {
                        ring.register_files(Vec::new())
                    }
                    _ => {}
                }
                Outcome::Simulated(None)
            }
            Effect::UringRegister => Outcome::Simulated(None),
            // Absolute paths the process names from now on start at the
            // new root, inside DIR.
            Effect::Chroot if Self::expected(ev) == 0 => match self.full_path(ev, row, 0) {
                Ok(root) => {
                    lock(&self.proc.fs).root = root;
                    Outcome::Simulated(None)
                }
                Err(e) => Outcome::Executed(verify::ret(row.ret, 0, e)),
            },
            Effect::Umask => {
                let mut fs = lock(&self.proc.fs);
                let old = fs.umask;
                fs.umask = arg(0) as u32 & 0o777;
                Outcome::Simulated(ok(i64::from(old)))
            }
            Effect::Exec if expected == 0 => {
                self.proc.exec();
                Outcome::Simulated(None)
            }
            Effect::Spawn(implied) if expected > 0 => {
                let flags = clone_flags(ev, row, implied);
                let child = ev.created_id().unwrap_or(expected as u32);
                let proc = self.proc.child(flags, |table| {
                    self.copies
                        .copy(table, ev.enter_ns, self.copied_by_ns, child)
                });
                // A child sharing its parent's table needs nothing kept.
                drop(self.copies.unborn_closes(child));
                (self.birth)(child, proc);
                if flags & libc::CLONE_PIDFD as u64 != 0 {
                    self.install_pidfd(ev, row);
                }
                Outcome::Simulated(None)
            }
            _ => return None,
        })
    }

    /// `CLONE_PIDFD`: the kernel stored a descriptor for the child in the
    /// call's `int` output (clone's `parent_tid`); calls on it are
    /// simulated, as `pidfd_open`'s are.
    fn install_pidfd(&mut self, ev: &SyscallEvent, row: &Syscall) {
        let out = row.params().iter().position(|p| {
            matches!(
                p.kind,
                Kind::Struct {
                    ty: StructType::Int,
                    dir: Dir::Out,
                    ..
                }
            )
        });
        let recorded = out
            .and_then(|i| ev.capture(i as u8, Role::Exit))
            .and_then(|c| c.data.as_deref())
            .and_then(|d| d.get(..4))
            .map(|d| i32::from_le_bytes(d.try_into().expect("4 bytes")));
        let mut t = lock(&self.proc.fds);
        // `clone3` stores it inside its `struct clone_args`, which no
        // recorder reads: the kernel gave the lowest free number.
        let fd = recorded.unwrap_or_else(|| (0..).find(|n| !t.contains_key(n)).unwrap_or(0));
        // Pidfds are always close-on-exec.
        let entry = FdEntry {
            process: u32::try_from(Self::expected(ev)).ok(),
            ..FdEntry::simulated(Vec::new(), true)
        };
        install(&mut t, fd, entry, ev);
    }

    /// `ioctl(FICLONE)`: the first descriptor's file takes the bytes of
    /// the last one's. Issued as recorded; where the replay file system
    /// cannot share extents (ext4, tmpfs: `EOPNOTSUPP`) the bytes are
    /// copied instead, which leaves the same contents. A clone that failed
    /// in the recording changed nothing and is not issued.
    fn clone_file(&mut self, ev: &SyscallEvent, row: &'static Syscall) -> Outcome {
        let expected = Self::expected(ev);
        if expected < 0 {
            return Outcome::Simulated(None);
        }
        let last = row.params().len() - 1;
        let mut real = Vec::with_capacity(2);
        for i in [0, last] {
            match self.proc.entry(ev, ev.args[i] as i32) {
                Some(FdEntry {
                    target: Target::Real(fd),
                    ..
                }) => real.push(fd),
                Some(_) => return self.simulate(ev, row),
                None => {
                    let got = -i64::from(libc::EBADF);
                    return Outcome::Executed(verify::ret(row.ret, expected, got));
                }
            }
        }
        let (dst, src) = (&real[0], &real[1]);
        let mut a = ev.args;
        a[0] = dst.as_raw_fd() as u64;
        a[last] = src.as_raw_fd() as u64;
        let mut got = self.issue(ev.nr, &a);
        let unshareable = [libc::EOPNOTSUPP, libc::EXDEV, libc::EINVAL, libc::ENOTTY];
        if unshareable.iter().any(|&e| got == -i64::from(e)) {
            got = copy_whole(src, dst).map_or_else(|e| errno_of(&e), |()| 0);
        }
        Outcome::Executed(verify::ret(row.ret, expected, got))
    }

    /// `fallocate`: issued as recorded; where the replay file system
    /// cannot do it (`EOPNOTSUPP`: ext2, which Go's linker and `mkfs`
    /// met) and the recording could, what a program sees of it is made
    /// instead ([`fallocate_visibly`]), so the file is the same either way.
    fn allocate(&mut self, ev: &SyscallEvent, row: &'static Syscall) -> Outcome {
        let expected = Self::expected(ev);
        let fd = match self.proc.entry(ev, ev.args[0] as i32) {
            Some(FdEntry {
                target: Target::Real(fd),
                ..
            }) => fd,
            Some(_) => return self.simulate(ev, row),
            None => return self.execute(ev, row),
        };
        let mut a = ev.args;
        a[0] = fd.as_raw_fd() as u64;
        let mut got = self.issue(ev.nr, &a);
        if got == -i64::from(libc::EOPNOTSUPP) && expected == 0 {
            got = fallocate_visibly(&fd, a[1] as i32, a[2], a[3])
                .map_or_else(|e| errno_of(&e), |()| 0);
        }
        Outcome::Executed(verify::ret(row.ret, expected, got))
    }

    fn open(&mut self, ev: &SyscallEvent, row: &'static Syscall) -> Outcome {
        let expected = Self::expected(ev);
        let path_arg = row.param_of(Kind::Path).expect("open calls name a path");
        let (flags, mode, resolve) =
            match (row.open_flags(&ev.args), row.param_of(Kind::CreateMode)) {
                (Some(flags), Some(mode)) => (flags as i32, ev.args[mode] as u32, 0),
                _ => {
                    let Some(how) = ev
                        .capture(2, Role::Entry)
                        .and_then(|c| c.data.as_deref())
                        .filter(|d| d.len() >= 16)
                    else {
                        return Outcome::Skipped("open_how not captured");
                    };
                    let word = |i: usize| {
                        u64::from_le_bytes(how[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
                    };
                    let resolve = if how.len() >= 24 { word(2) } else { 0 };
                    (word(0) as i32, word(1) as u32, resolve)
                }
            };
        if let Some(file) = self.whole_fd_link(ev, path_arg).filter(|fd| nameless(fd)) {
            return self.reopen_whole(ev, &file, flags);
        }
        let full = match self.full_path(ev, row, path_arg) {
            Ok(f) => f,
            Err(e) => return Outcome::Executed(verify::ret(Ret::Fd, expected, e)),
        };
        if self.simulates_path(&full) {
            if expected >= 0 {
                install(
                    &mut lock(&self.proc.fds),
                    expected as i32,
                    FdEntry::simulated(full, flags & libc::O_CLOEXEC != 0),
                    ev,
                );
            }
            return Outcome::Simulated(None);
        }
        let creates = flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE;
        let mode = if creates {
            mode & !self.umask_at(ev, row, path_arg)
        } else {
            0
        };
        let opened = if let Some(InRemoved::Itself(dir, _)) = self.in_removed_dir(ev, row, path_arg)
        {
            open_in(dir.as_fd(), c".", flags)
        } else if resolve == 0 {
            self.root.open_at(&full, flags, mode)
        } else {
            match self.resolve_base(ev, row, path_arg) {
                Ok(base) => {
                    let path = Self::path_arg(ev, path_arg).unwrap_or_default();
                    self.root
                        .open_resolving(&base, path, &full, flags, mode, resolve)
                }
                Err(e) => return Outcome::Executed(verify::ret(Ret::Fd, expected, e)),
            }
        };
        let got = match opened {
            Err(e)
                if e.raw_os_error() == Some(libc::ENOENT)
                    && flags & libc::O_NOFOLLOW == 0
                    && self.root.links_into_pseudo(&full)
                    || e.raw_os_error() == Some(libc::ENXIO) && self.is_inert_device(&full) =>
            {
                if expected >= 0 {
                    let e = FdEntry::simulated(full, flags & libc::O_CLOEXEC != 0);
                    install(&mut lock(&self.proc.fds), expected as i32, e, ev);
                }
                return Outcome::Simulated(None);
            }
            Ok(fd) => {
                if expected >= 0 {
                    let stream = is_fifo(&fd);
                    if stream {
                        roomy(&fd, 0);
                    }
                    let mut full = full;
                    self.settle_dot_dot(&mut full, &fd);
                    let e = opened_entry(fd, flags, full, stream);
                    install(&mut lock(&self.proc.fds), expected as i32, e, ev);
                }
                0
            }
            Err(e) => errno_of(&e),
        };
        Outcome::Executed(verify::ret(Ret::Fd, expected, got))
    }

    /// Whether calls naming `full` are simulated: a pseudo file system's
    /// path, or the trace itself.
    fn simulates_path(&self, full: &[u8]) -> bool {
        is_pseudo(full) || self.own_trace == Some(full)
    }

    /// Whether `path` in DIR is a device node, which replay makes inert
    /// (see `mknod` in `execute`): calls through it are simulated.
    fn is_inert_device(&self, path: &[u8]) -> bool {
        self.root
            .locate(path, true)
            .ok()
            .and_then(|fd| crate::state::stat_of(&fd))
            .is_some_and(|st| {
                let ty = st.st_mode & libc::S_IFMT;
                (ty == libc::S_IFCHR || ty == libc::S_IFBLK) && st.st_rdev == 0
            })
    }

    /// Opens a pipe again by its `/proc/self/fd/N` or `/dev/fd/N` name: a
    /// new description of the same pipe, either end whatever `N` was, as
    /// the kernel does. The path opened is the replay's own descriptor's,
    /// never one the trace names; a simulated read of a pipe a real
    /// writer fills would leave the writer blocked.
    fn reopen_whole(&mut self, ev: &SyscallEvent, file: &OwnedFd, flags: i32) -> Outcome {
        let expected = Self::expected(ev);
        let got = match reopen_own(file, flags) {
            Err(e) => errno_of(&e),
            Ok(fd) => {
                if expected >= 0 {
                    let stream = is_fifo(&fd);
                    let e = opened_entry(fd, flags, Vec::new(), stream);
                    install(&mut lock(&self.proc.fds), expected as i32, e, ev);
                }
                0
            }
        };
        Outcome::Executed(verify::ret(Ret::Fd, expected, got))
    }

    fn fcntl(&mut self, ev: &SyscallEvent) -> Option<Outcome> {
        let expected = Self::expected(ev);
        let (fd, cmd, arg) = (ev.args[0] as i32, ev.args[1] as i32, ev.args[2]);
        let mut t = lock(&self.proc.fds);
        let Some(entry) = live(&mut t, fd, ev) else {
            return Some(Outcome::Simulated(verify::ret(
                Ret::Int,
                expected,
                -i64::from(libc::EBADF),
            )));
        };
        Some(match cmd {
            libc::F_DUPFD | libc::F_DUPFD_CLOEXEC => {
                let mut e = entry.clone();
                e.cloexec = cmd == libc::F_DUPFD_CLOEXEC;
                e.listing = None;
                e.displaced = None;
                if expected >= 0 {
                    install(&mut t, expected as i32, e, ev);
                }
                Outcome::Simulated(None)
            }
            libc::F_GETFD => {
                Outcome::Simulated(verify::ret(Ret::Int, expected, i64::from(entry.cloexec)))
            }
            libc::F_SETFD => {
                entry.cloexec = arg & libc::FD_CLOEXEC as u64 != 0;
                Outcome::Simulated(None)
            }
            libc::F_SETFL => {
                if expected >= 0 {
                    // Executed below; other numbers for the same open file
                    // (dup) keep their old mode here.
                    entry.set_status_flags(arg as i32);
                }
                drop(t);
                return None;
            }
            // Replay's pipes are larger than the program's (see
            // `roomy`): their size is the recorded one.
            libc::F_GETPIPE_SZ => Outcome::Simulated(None),
            libc::F_SETPIPE_SZ => {
                if let (Target::Real(real), true) = (&entry.target, expected > 0) {
                    roomy(real, expected as usize);
                }
                Outcome::Simulated(None)
            }
            // `O_NONBLOCK` is not compared: `ioctl(FIONBIO)`, whose
            // argument the recorders do not capture (ioctls are
            // simulated), may have set it (Python's `os.set_blocking`).
            libc::F_GETFL if expected >= 0 => match &entry.target {
                Target::Real(real) => {
                    // SAFETY: F_GETFL takes no argument.
                    let got = unsafe { libc::fcntl(real.as_raw_fd(), libc::F_GETFL) };
                    let got = if got < 0 {
                        errno_of(&io::Error::last_os_error())
                    } else {
                        i64::from(got & !libc::O_NONBLOCK) | (expected & libc::O_NONBLOCK as i64)
                    };
                    Outcome::Executed(verify::ret(Ret::Int, expected, got))
                }
                _ => Outcome::Simulated(None),
            },
            // Integer-argument commands on the descriptor itself.
            libc::F_GETFL | libc::F_ADD_SEALS | libc::F_GET_SEALS => {
                drop(t);
                return None;
            }
            // Locks and owners take pointers the trace does not hold, and
            // all replay threads are one process, so lock conflicts could
            // not be reproduced anyway.
            _ => Outcome::Simulated(None),
        })
    }

    fn mmap(&mut self, ev: &SyscallEvent) -> Option<Outcome> {
        let expected = Self::expected(ev);
        let (len, prot, flags, fd, off) = (
            ev.args[1],
            ev.args[2] as i32,
            ev.args[3] as i32,
            ev.args[4] as i32,
            ev.args[5],
        );
        if flags & libc::MAP_ANONYMOUS != 0 || expected < 0 {
            return Some(Outcome::Simulated(None));
        }
        let Some(FdEntry {
            target: Target::Real(real),
            ..
        }) = self.proc.entry(ev, fd)
        else {
            return Some(Outcome::Simulated(None));
        };
        let flags = flags & !(libc::MAP_FIXED | libc::MAP_FIXED_NOREPLACE | libc::MAP_POPULATE);
        // SAFETY: a fresh mapping at an address the kernel chooses; nothing
        // reads or writes it.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                prot,
                flags,
                real.as_raw_fd(),
                off as i64,
            )
        };
        if addr == libc::MAP_FAILED {
            let got = errno_of(&io::Error::last_os_error());
            return Some(Outcome::Executed(verify::ret(Ret::Addr, expected, got)));
        }
        let writes_through =
            flags & libc::MAP_TYPE != libc::MAP_PRIVATE && prot & libc::PROT_WRITE != 0;
        let file = writes_through
            .then(|| crate::state::id_of(&real))
            .flatten()
            .map(|id| (id, off));
        let mapping = Arc::new(Mapping::new(
            addr as usize,
            len as usize,
            writes_through,
            file,
        ));
        self.live_maps.add(&mapping);
        lock(&self.proc.maps).insert(expected as u64, mapping);
        Some(Outcome::Executed(None))
    }

    /// mremap of a whole mapping replay re-created (Python's
    /// `mmap.resize`): the real one is resized too and known by the
    /// recorded new address, where the later `munmap` or `msync` and its
    /// captured stores name it. Anything else (anonymous memory, part of
    /// a mapping) is simulated.
    fn remap(&mut self, ev: &SyscallEvent) -> Outcome {
        let expected = Self::expected(ev);
        let (old, old_size, new_size) = (ev.args[0], ev.args[1], ev.args[2] as usize);
        if expected < 0 {
            return Outcome::Simulated(None);
        }
        let mut maps = lock(&self.proc.maps);
        let Some(m) = maps.remove(&old) else {
            return Outcome::Simulated(None);
        };
        // Only the mapping's sole owner may move it: nothing else then
        // holds its old address.
        let m = match Arc::try_unwrap(m) {
            Ok(m) if m.len() == old_size as usize => m,
            Ok(m) => {
                maps.insert(old, Arc::new(m));
                return Outcome::Simulated(None);
            }
            Err(m) => {
                maps.insert(old, m);
                return Outcome::Simulated(None);
            }
        };
        let moved = match m.remap(new_size) {
            Ok(moved) => moved,
            Err((m, e)) => {
                maps.insert(old, Arc::new(m));
                return Outcome::Executed(verify::ret(Ret::Addr, expected, errno_of(&e)));
            }
        };
        let moved = Arc::new(moved);
        self.live_maps.add(&moved);
        maps.insert(expected as u64, moved);
        Outcome::Executed(None)
    }

    /// munmap, msync and madvise: first the bytes the program stored
    /// through a shared mapping (captured by the recorder) go into the
    /// re-created mapping, then msync flushes it, munmap drops it or
    /// madvise gives it the advice (one of [`FILE_ADVICE`]). Ranges with
    /// no re-created mapping (anonymous memory, libraries) are simulated.
    fn stores_then(&mut self, ev: &SyscallEvent, row: &Syscall) -> Outcome {
        let expected = Self::expected(ev);
        let (addr, len) = (ev.args[0], ev.args[1]);
        // What the program stored: one capture of the range, or (eBPF)
        // runs of it from page `elem` on, around pages the recorder could
        // not read because the program never touched them. A capture
        // marked unreadable (older eBPF traces) holds the pages before
        // the first such page.
        let stored: Vec<(u64, &[u8])> = ev
            .captures
            .iter()
            .filter(|c| c.arg == 0 && c.role == Role::Entry)
            .filter(|c| {
                matches!(
                    c.status,
                    CaptureStatus::Complete | CaptureStatus::Truncated | CaptureStatus::Unreadable
                )
            })
            .filter_map(|c| Some((addr + u64::from(c.elem) * 4096, c.data.as_deref()?)))
            .collect();
        let mut maps = lock(&self.proc.maps);
        let hit: Vec<u64> = maps
            .iter()
            .filter(|(&start, m)| m.overlaps(start, addr, len))
            .map(|(&start, _)| start)
            .collect();
        if hit.is_empty() {
            return Outcome::Simulated(None);
        }
        let mut got = 0;
        for start in hit {
            let m = &maps[&start];
            for &(at, data) in &stored {
                let (real, n) = match m.store(start, at, data, ev.enter_ns, self.snapshots) {
                    Ok(Some(stored)) => stored,
                    Ok(None) => continue,
                    Err(e) => {
                        got = errno_of(&e);
                        continue;
                    }
                };
                if row.effect == Effect::Sync {
                    let page = real & !4095;
                    // SAFETY: a range inside a mapping this replayer made.
                    let r = unsafe {
                        libc::msync(
                            page as *mut libc::c_void,
                            n + (real - page),
                            ev.args[2] as i32,
                        )
                    };
                    if r != 0 {
                        got = errno_of(&io::Error::last_os_error());
                    }
                }
            }
            let advice = ev.args[2] as i32;
            if row.effect == Effect::Advise && expected == 0 && FILE_ADVICE.contains(&advice) {
                if let Some((real, n)) = m.real_range(start, addr, len) {
                    // SAFETY: pages of a mapping this replayer made; the
                    // advice only drops or fetches their cached copies, or
                    // (MADV_REMOVE) frees the file's blocks under them.
                    if unsafe { libc::madvise(real as *mut libc::c_void, n, advice) } != 0 {
                        got = errno_of(&io::Error::last_os_error());
                    }
                }
            }
            if row.effect == Effect::Unmap && addr <= start {
                // Unmapping from its start: the whole re-created mapping
                // goes (partial unmaps keep it until its start goes).
                maps.remove(&start);
            }
        }
        Outcome::Executed(verify::ret(row.ret, expected, got))
    }
}

/// The `madvise` advice replay gives its re-created shared mappings as
/// the program gave it: `MADV_REMOVE` frees file blocks (the file
/// changes), the others only move pages in and out of memory, which is
/// what a replay measuring the system should do too. The rest (fork and
/// dump behaviour, huge pages, merging, poisoning) would act on the
/// replayer itself and are simulated.
const FILE_ADVICE: [i32; 10] = [
    libc::MADV_NORMAL,
    libc::MADV_RANDOM,
    libc::MADV_SEQUENTIAL,
    libc::MADV_WILLNEED,
    libc::MADV_DONTNEED,
    libc::MADV_REMOVE,
    libc::MADV_COLD,
    libc::MADV_PAGEOUT,
    libc::MADV_POPULATE_READ,
    libc::MADV_POPULATE_WRITE,
];

/// True when `fd` is open for reading only (a pipe's read end).
fn read_only(fd: i32) -> bool {
    // SAFETY: F_GETFL takes no argument.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    flags >= 0 && flags & libc::O_ACCMODE == libc::O_RDONLY
}

/// Copies all of `src`'s bytes to the same offsets of `dst` (neither
/// descriptor's offset moves), as a clone would have shared them:
/// `copy_file_range`, or reads and writes where it cannot.
fn copy_whole(src: &OwnedFd, dst: &OwnedFd) -> io::Result<()> {
    let size = std::fs::File::from(src.try_clone()?).metadata()?.len();
    let mut at: u64 = 0;
    while at < size {
        let (mut off_in, mut off_out) = (at as i64, at as i64);
        // SAFETY: both offsets are valid for the call; descriptors are ours.
        let n = unsafe {
            libc::copy_file_range(
                src.as_raw_fd(),
                &mut off_in,
                dst.as_raw_fd(),
                &mut off_out,
                (size - at) as usize,
                0,
            )
        };
        match n {
            0 => return Ok(()),
            n if n > 0 => at += n as u64,
            _ => {
                let e = io::Error::last_os_error();
                if !matches!(
                    e.raw_os_error(),
                    Some(libc::EXDEV | libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP)
                ) {
                    return Err(e);
                }
                return copy_by_reads(src, dst, at, size);
            }
        }
    }
    Ok(())
}

/// [`copy_whole`] from byte `at` on, by `pread` and `pwrite`.
fn copy_by_reads(src: &OwnedFd, dst: &OwnedFd, mut at: u64, size: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let (src, dst) = (
        std::fs::File::from(src.try_clone()?),
        std::fs::File::from(dst.try_clone()?),
    );
    let mut buf = vec![0u8; 1 << 20];
    while at < size {
        let want = ((size - at) as usize).min(buf.len());
        let n = src.read_at(&mut buf[..want], at)?;
        if n == 0 {
            break;
        }
        dst.write_all_at(&buf[..n], at)?;
        at += n as u64;
    }
    Ok(())
}

fn is_memory(k: Kind) -> bool {
    matches!(
        k,
        Kind::Buf { .. }
            | Kind::Struct { .. }
            | Kind::IoVec { .. }
            | Kind::MsgHdr { .. }
            | Kind::StrArray
    )
}

fn is_fifo(fd: &OwnedFd) -> bool {
    crate::state::stat_of(fd).is_some_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFIFO)
}

/// `system.posix_acl_default`: the default ACL new entries in a directory
/// inherit.
pub(crate) const DEFAULT_ACL: &[u8] = b"system.posix_acl_default";

/// True when directory `dir` (any descriptor, `O_PATH` too) has a default
/// ACL.
fn has_default_acl(dir: &OwnedFd) -> bool {
    let name = CString::new(DEFAULT_ACL).expect("no NUL");
    // SAFETY: valid C strings; a NULL buffer of size 0 asks for the size.
    let n = unsafe {
        libc::getxattr(
            fd_path(dir.as_fd()).as_ptr(),
            name.as_ptr(),
            std::ptr::null_mut(),
            0,
        )
    };
    n > 0
}

/// True when no path reaches what `fd` holds, so that an open of its
/// `/proc/PID/fd/N` link must go through the replayer's own link: a pipe
/// or FIFO (a pipe has no path), or a file removed or made with
/// `O_TMPFILE` and not linked since (its recorded path names nothing, or
/// the directory it was made in).
fn nameless(fd: &OwnedFd) -> bool {
    crate::state::stat_of(fd)
        .is_some_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFIFO || st.st_nlink == 0)
}

/// The entry of a descriptor replay opened with `flags` on `path`: its
/// close-on-exec flag and status flags as opened, and the read end a
/// write-only FIFO or pipe holds ([`held_reader`]).
fn opened_entry(fd: OwnedFd, flags: i32, path: Vec<u8>, stream: bool) -> FdEntry {
    let mut e = FdEntry {
        _reader: held_reader(&fd, flags),
        ..FdEntry::real(fd, flags & libc::O_CLOEXEC != 0, path, stream)
    };
    e.set_status_flags(flags);
    e
}

/// A read end of the FIFO or pipe `fd` opens for writing only (`flags`),
/// for its entry to hold while it is open ([`FdEntry::_reader`]): `seq
/// 1 100000 > fifo & head -1 fifo` could replay `head`'s `close` before
/// a write `seq` made while `head` still read (3 replays in 10 failed
/// with `EPIPE` until 2026-11-28). Opened non-blocking, so it never waits
/// for a writer.
fn held_reader(fd: &OwnedFd, flags: i32) -> Option<Arc<OwnedFd>> {
    if flags & libc::O_ACCMODE != libc::O_WRONLY || !is_fifo(fd) {
        return None;
    }
    let reader = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC;
    reopen_own(fd, reader).ok().map(Arc::new)
}

/// Opens `fd`'s own `/proc/self/fd` name with `flags`: a new open file
/// description of what it is open on (of a pipe or FIFO, either end,
/// whichever `flags` asks for), found without any path lookup.
fn reopen_own(fd: &OwnedFd, flags: i32) -> io::Result<OwnedFd> {
    let own = fd_path(fd.as_fd());
    // SAFETY: a valid C string; the descriptor returned is owned below.
    let new = unsafe { libc::open(own.as_ptr(), flags, 0) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` was just opened and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

/// The two descriptors an `int[2]` output holds.
fn fd_pair(ev: &SyscallEvent, arg: u8) -> Option<(i32, i32)> {
    let d = ev.capture(arg, Role::Exit)?.data.as_deref()?;
    let a = i32::from_le_bytes(d.get(0..4)?.try_into().ok()?);
    let b = i32::from_le_bytes(d.get(4..8)?.try_into().ok()?);
    Some((a, b))
}

#[cfg(test)]
mod tests {
    use super::{
        advance, catalogue, close_entry, continues_short_transfers, descriptor_copy_count, install,
        live, proc_fd_link,
    };
    use crate::state::FdEntry;
    use reanimator_trace::{SyscallEvent, SyscallExit};
    use std::collections::HashMap;

    #[test]
    fn advance_drops_whole_and_partial_iovecs() {
        let buf = [0u8; 30];
        let base = buf.as_ptr() as usize;
        let iov = |off: usize, len: usize| libc::iovec {
            iov_base: (base + off) as *mut libc::c_void,
            iov_len: len,
        };
        let shape = |v: &[libc::iovec]| {
            v.iter()
                .map(|x| (x.iov_base as usize - base, x.iov_len))
                .collect::<Vec<_>>()
        };
        let mut v = vec![iov(0, 10), iov(10, 0), iov(10, 10), iov(20, 10)];
        advance(&mut v, 15);
        assert_eq!(shape(&v), [(15, 5), (20, 10)]);
        advance(&mut v, 5);
        assert_eq!(shape(&v), [(20, 10)]);
        advance(&mut v, 10);
        assert!(v.is_empty());
    }

    fn call(enter_ns: u64, exit_ns: u64) -> SyscallEvent {
        SyscallEvent {
            seq: 0,
            tgid: 1,
            tid: 1,
            nr: 0,
            enter_ns,
            args: [0; 6],
            exit: Some(SyscallExit {
                exit_ns,
                ret: 3,
                is_error: false,
            }),
            captures: Vec::new(),
        }
    }

    #[test]
    fn a_close_replayed_after_an_overlapping_open_closes_the_old_file() {
        // Recorded: thread A close(3) over [10, 30]; thread B's open
        // returned 3 over [15, 25]. Replay ran the open first.
        let mut t = HashMap::new();
        install(
            &mut t,
            3,
            FdEntry::simulated(b"/old".to_vec(), false),
            &call(1, 2),
        );
        install(
            &mut t,
            3,
            FdEntry::simulated(b"/new".to_vec(), false),
            &call(15, 25),
        );
        let closed = close_entry(&mut t, 3, &call(10, 30)).unwrap();
        assert_eq!(closed.path, b"/old");
        assert_eq!(t[&3].path, b"/new");
        // A later close closes the new file.
        assert_eq!(close_entry(&mut t, 3, &call(40, 41)).unwrap().path, b"/new");
        assert!(t.is_empty());
    }

    #[test]
    fn an_open_replayed_before_an_older_open_and_close_of_its_number_keeps_it() {
        // Recorded (a JVM's threads): thread A's open over [10, 50]
        // returned 3; meanwhile thread B opened 3 over [20, 25], used it
        // at 30 and closed it at 35. Replay ran A's open first.
        let mut t = HashMap::new();
        install(
            &mut t,
            3,
            FdEntry::simulated(b"/a".to_vec(), false),
            &call(10, 50),
        );
        install(
            &mut t,
            3,
            FdEntry::simulated(b"/b".to_vec(), false),
            &call(20, 25),
        );
        assert_eq!(live(&mut t, 3, &call(30, 31)).unwrap().path, b"/b");
        assert_eq!(close_entry(&mut t, 3, &call(35, 36)).unwrap().path, b"/b");
        // A's later calls find A's file.
        assert_eq!(live(&mut t, 3, &call(60, 61)).unwrap().path, b"/a");
        assert_eq!(close_entry(&mut t, 3, &call(70, 71)).unwrap().path, b"/a");
        assert!(t.is_empty());
    }

    #[test]
    fn a_number_opened_and_closed_twice_under_an_overlapping_close_keeps_the_old_file() {
        // Recorded (sysbench's threads): thread A opened 3 at [1, 2] and
        // closed it over [10, 40]; meanwhile thread B opened 3 at [15,
        // 16], closed it at [17, 18], opened it again at [20, 21] and read
        // it at 30. Replay ran all of B's calls before A's close.
        let mut t = HashMap::new();
        let open = |t: &mut HashMap<i32, FdEntry>, path: &[u8], at: SyscallEvent| {
            install(t, 3, FdEntry::simulated(path.to_vec(), false), &at)
        };
        open(&mut t, b"/a", call(1, 2));
        open(&mut t, b"/b1", call(15, 16));
        assert_eq!(close_entry(&mut t, 3, &call(17, 18)).unwrap().path, b"/b1");
        open(&mut t, b"/b2", call(20, 21));
        assert_eq!(live(&mut t, 3, &call(30, 31)).unwrap().path, b"/b2");
        // A's close closes A's file, and B's stays.
        assert_eq!(close_entry(&mut t, 3, &call(10, 40)).unwrap().path, b"/a");
        assert_eq!(live(&mut t, 3, &call(50, 51)).unwrap().path, b"/b2");
    }

    #[test]
    fn three_overlapping_opens_of_one_number_keep_all_three() {
        // Recorded (Node's worker threads under ptrace, one open slowed
        // to 40 us): thread A's open over [10, 50] returned 3; meanwhile
        // B opened 3 over [20, 25], wrote at 27, closed at 28; then C
        // opened 3 over [30, 35], wrote at 40, closed at 45. Replay ran
        // the three opens first. Before, C's install dropped B's entry:
        // B's write found C's file and B's close failed EBADF.
        let mut t = HashMap::new();
        let open = |t: &mut HashMap<i32, FdEntry>, path: &[u8], at: SyscallEvent| {
            install(t, 3, FdEntry::simulated(path.to_vec(), false), &at)
        };
        open(&mut t, b"/a", call(10, 50));
        open(&mut t, b"/b", call(20, 25));
        open(&mut t, b"/c", call(30, 35));
        assert_eq!(live(&mut t, 3, &call(27, 27)).unwrap().path, b"/b");
        assert_eq!(close_entry(&mut t, 3, &call(28, 28)).unwrap().path, b"/b");
        assert_eq!(live(&mut t, 3, &call(40, 40)).unwrap().path, b"/c");
        assert_eq!(close_entry(&mut t, 3, &call(45, 45)).unwrap().path, b"/c");
        assert_eq!(live(&mut t, 3, &call(60, 60)).unwrap().path, b"/a");
        assert_eq!(close_entry(&mut t, 3, &call(70, 71)).unwrap().path, b"/a");
        assert!(t.is_empty());
    }

    #[test]
    fn only_read_and_write_continue_short_pipe_transfers() {
        let rows: Vec<(&str, bool)> = catalogue::all()
            .iter()
            .filter_map(|r| Some((r.name, continues_short_transfers(r)?)))
            .collect();
        assert_eq!(rows, [("read", true), ("write", false)]);
    }

    #[test]
    fn copies_between_descriptors_are_found_with_their_counts() {
        let rows: Vec<(&str, usize)> = catalogue::all()
            .iter()
            .filter_map(|r| Some((r.name, descriptor_copy_count(r)?)))
            .collect();
        assert_eq!(
            rows,
            [
                ("sendfile", 3),
                ("splice", 4),
                ("tee", 2),
                ("copy_file_range", 4)
            ]
        );
    }

    #[test]
    fn proc_fd_paths_name_the_callers_descriptors() {
        assert_eq!(
            proc_fd_link(b"/proc/self/fd/5", 7, 8),
            Some((7, 5, &b""[..]))
        );
        assert_eq!(
            proc_fd_link(b"/proc/7/fd/12/x/y", 7, 8),
            Some((7, 12, &b"x/y"[..]))
        );
        assert_eq!(
            proc_fd_link(b"/proc/7/task/8/fd/3", 7, 8),
            Some((7, 3, &b""[..]))
        );
        assert_eq!(proc_fd_link(b"/proc/8/fd/3", 7, 8), Some((7, 3, &b""[..])));
        assert_eq!(
            proc_fd_link(b"/proc/thread-self/fd/0", 7, 8),
            Some((7, 0, &b""[..]))
        );
        // Another process's: whose it is, for replay to look up.
        assert_eq!(proc_fd_link(b"/proc/9/fd/3", 7, 8), Some((9, 3, &b""[..])));
        assert_eq!(proc_fd_link(b"/proc/self/fdinfo/3", 7, 8), None);
        assert_eq!(proc_fd_link(b"/proc/self/fd/x", 7, 8), None);
        assert_eq!(proc_fd_link(b"/proc/x/fd/3", 7, 8), None);
        assert_eq!(proc_fd_link(b"/dev/fd/63", 7, 8), Some((7, 63, &b""[..])));
        assert_eq!(proc_fd_link(b"/dev/stdout", 7, 8), Some((7, 1, &b""[..])));
        assert_eq!(proc_fd_link(b"/dev/stdin/x", 7, 8), Some((7, 0, &b"x"[..])));
        assert_eq!(proc_fd_link(b"/dev/null", 7, 8), None);
        assert_eq!(proc_fd_link(b"/dev/fd", 7, 8), None);
    }
}
