//! The emulated state of the traced processes: descriptor tables, working
//! directories, umasks, file mappings and user and group ids.
//!
//! Replay runs every traced thread as a thread of one process, so the
//! kernel's per-process state is emulated here: traced descriptor numbers
//! map to real descriptors (or to simulated ones), tables are shared or
//! copied exactly as `clone` flags say, and `execve` closes what
//! `FD_CLOEXEC` marks.

use crate::aio::{Context, Contexts};
use reanimator_catalogue::{Ids, Which};
use reanimator_fsstate::{
    first_component, is_pseudo, is_removed, join, join_as_called, lexical, open_in,
    reopened_at_start, Root,
};
use reanimator_trace::{FdInfo, StartCause, SyscallEvent};
use std::collections::{HashMap, HashSet, VecDeque};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// A locked mutex, even if a replay thread panicked while holding it (the
/// state is still consistent enough to finish the report).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a traced descriptor number stands for.
#[derive(Clone)]
pub(crate) enum Target {
    /// A real descriptor of the replayer (files, directories, pipes).
    Real(Arc<OwnedFd>),
    /// A descriptor whose calls are simulated from the trace: sockets,
    /// inherited stdio, `/proc` and `/dev` files, epoll and event fds.
    Simulated,
    /// An io_uring: `io_uring_enter` drives the replay's own ring, other
    /// calls on it are simulated.
    Ring(Arc<crate::uring::Ring>),
}

/// One entry of an emulated descriptor table.
#[derive(Clone)]
pub(crate) struct FdEntry {
    /// What it refers to.
    pub target: Target,
    /// `FD_CLOEXEC`, kept here because entries copied by `fork` share one
    /// real descriptor but not its descriptor flags.
    pub cloexec: bool,
    /// The absolute traced path it was opened with (for `*at` calls and
    /// `fchdir`), empty when unknown.
    pub path: Vec<u8>,
    /// A pipe or FIFO: reads are repeated until the recorded byte count
    /// arrives, since the writer may not have caught up yet.
    pub stream: bool,
    /// Opened (or set by `F_SETFL`) with `O_DIRECT`: the kernel refuses
    /// data buffers that are not aligned, so replay hands it aligned
    /// copies.
    pub direct: bool,
    /// Opened (or set by `F_SETFL`) with `O_APPEND`: the key of the file
    /// it appends to (see `append_key`). Every description appending to
    /// one file writes at its one end, so their calls keep their recorded
    /// order as calls at one shared offset do.
    pub appends: Option<usize>,
    /// Directory listing state for stream-level `getdents64` checks.
    pub listing: Option<SharedListing>,
    /// Of a pipe's write end (or a FIFO opened for writing only), a
    /// descriptor of its read end, open while the write end is. Calls of
    /// two processes that overlapped in time run in either order, so `yes | head -c 1` could replay `head`'s last
    /// `close` before a write `yes` made while `head` still read: `EPIPE`
    /// where the recording had the bytes written (1 run in 40). Writes
    /// that failed with `EPIPE` when recorded are not issued anyway.
    pub _reader: Option<Arc<OwnedFd>>,
    /// Recorded exit time of the call that created it.
    pub opened_ns: u64,
    /// The entry it replaced before that entry's close was replayed (see
    /// `exec::install`).
    pub displaced: Option<Box<FdEntry>>,
    /// A directory a replayed call removed while this descriptor held it
    /// ([`mark_removed`]): paths named from it resolve as from a removed
    /// working directory ([`in_removed`]).
    pub removed: bool,
    /// Of an end of a socket pair the trace made, its number: twice the
    /// `socketpair`'s sequence id, plus one for the second end (`^ 1` is
    /// the other end); of a Unix connection's ends, numbers from
    /// [`Passed::connection`]. Descriptors sent from one end wait under
    /// the other's number for it to receive them ([`Passed`]).
    pub pair: Option<u64>,
    /// Of a Unix socket bound to a name, the name's key
    /// ([`Passed::connection`]): the connections it accepts are paired
    /// with the connects to that name.
    pub name: Option<u64>,
    /// Of a pidfd, the traced process it refers to: `pidfd_getfd` takes
    /// that process's descriptors.
    pub process: Option<u32>,
}

/// Names a directory stream returned, in the trace and in replay; compared
/// as sets when the stream ends, because file systems order entries
/// differently.
#[derive(Default)]
pub(crate) struct Listing {
    pub expected: Vec<(Vec<u8>, u8)>,
    pub got: Vec<(Vec<u8>, u8)>,
    /// Whether the stream is registered in [`ListingsInProgress`].
    pub begun: bool,
    /// Names made or removed in the directory while the stream was read,
    /// whose presence in it is unspecified.
    pub unspecified: HashSet<Vec<u8>>,
    /// When the stream began, as recorded: its directory's open (the
    /// trace's start for a descriptor the trace inherited).
    pub begun_ns: u64,
}

/// The directory streams being read, by the traced path of their
/// directory. Whether `readdir` returns an entry made or removed in its
/// directory after the stream began is unspecified (POSIX), and file
/// systems differ: `dpkg -r` lists `/var/lib/dpkg/info` while it unlinks
/// the package's files there, and ext4's hash order returned a file
/// before its unlink where btrfs's creation order reached it after. Such
/// names are left out when the listing is compared.
#[derive(Default)]
pub(crate) struct ListingsInProgress {
    /// How many are registered.
    active: AtomicUsize,
    dirs: Mutex<Vec<Reading>>,
    /// The latest calls that made or removed an entry, with their recorded
    /// times: one that overlapped a stream in time when recorded may have
    /// run before the stream began in replay, so the registry alone
    /// cannot see it (a child's `creat` overlapping its parent's listing
    /// of the same directory).
    recent: Mutex<VecDeque<Change>>,
}

/// How many entry changes [`ListingsInProgress`] remembers.
const RECENT_CHANGES: usize = 4096;

/// A call that made or removed `name` in `dir`, as recorded.
struct Change {
    dir: Vec<u8>,
    name: Vec<u8>,
    enter_ns: u64,
    exit_ns: u64,
}

/// One stream being read: its directory (as [`join`] names it), and
/// the listing, which goes when the last descriptor of it closes.
struct Reading {
    dir: Vec<u8>,
    listing: Weak<Mutex<Listing>>,
}

/// A directory stream's shared state, as every descriptor of it holds it.
pub(crate) type SharedListing = Arc<Mutex<Listing>>;

impl ListingsInProgress {
    /// Runs `f` on the registered streams, less those whose descriptors
    /// all closed before their end, and keeps the count up to date.
    fn with_live<R>(&self, f: impl FnOnce(&mut Vec<Reading>) -> R) -> R {
        let mut dirs = lock(&self.dirs);
        dirs.retain(|r| r.listing.strong_count() > 0);
        let out = f(&mut dirs);
        self.active.store(dirs.len(), Ordering::Relaxed);
        out
    }

    /// A stream of directory `dir` returned its first entries.
    pub fn begin(&self, dir: &[u8], listing: &SharedListing) {
        let reading = Reading {
            dir: join(b"/", dir),
            listing: Arc::downgrade(listing),
        };
        self.with_live(|dirs| dirs.push(reading));
    }

    /// The stream reached its end.
    pub fn end(&self, listing: &SharedListing) {
        let this = Arc::as_ptr(listing);
        self.with_live(|dirs| dirs.retain(|r| !std::ptr::eq(r.listing.as_ptr(), this)));
    }

    /// A call recorded from `enter_ns` to `exit_ns` made or removed the
    /// entry `path` (traced, absolute).
    pub fn changed(&self, path: &[u8], enter_ns: u64, exit_ns: u64) {
        let path = join(b"/", path);
        let Some(cut) = path.iter().rposition(|&b| b == b'/') else {
            return;
        };
        let (dir, name) = (&path[..cut.max(1)], &path[cut + 1..]);
        {
            let mut recent = lock(&self.recent);
            if recent.len() == RECENT_CHANGES {
                recent.pop_front();
            }
            recent.push_back(Change {
                dir: dir.to_vec(),
                name: name.to_vec(),
                enter_ns,
                exit_ns,
            });
        }
        if self.active.load(Ordering::Relaxed) == 0 {
            return;
        }
        let listings: Vec<_> = self.with_live(|dirs| {
            dirs.iter()
                .filter(|r| r.dir == dir)
                .filter_map(|r| r.listing.upgrade())
                .collect()
        });
        for l in listings {
            lock(&l).unspecified.insert(name.to_vec());
        }
    }

    /// The names made or removed in `dir` by calls already replayed whose
    /// recorded times overlap `from..=to`: whether the stream read then
    /// returned them depended on the moment.
    pub fn changed_during(&self, dir: &[u8], from: u64, to: u64) -> Vec<Vec<u8>> {
        let dir = join(b"/", dir);
        lock(&self.recent)
            .iter()
            .filter(|c| c.dir == dir && c.exit_ns >= from && c.enter_ns <= to)
            .map(|c| c.name.clone())
            .collect()
    }
}

impl FdEntry {
    /// An entry for a real descriptor.
    pub fn real(fd: OwnedFd, cloexec: bool, path: Vec<u8>, stream: bool) -> Self {
        FdEntry {
            target: Target::Real(Arc::new(fd)),
            cloexec,
            path,
            stream,
            direct: false,
            appends: None,
            listing: None,
            _reader: None,
            opened_ns: 0,
            displaced: None,
            removed: false,
            pair: None,
            name: None,
            process: None,
        }
    }

    /// The entries at this one's number, newest first: this one, then
    /// those kept aside under it (see `exec::install`).
    pub fn chain(&self) -> impl Iterator<Item = &FdEntry> {
        std::iter::successors(Some(self), |e| e.displaced.as_deref())
    }

    /// Which of [`FdEntry::chain`] a call that began at `enter_ns` named:
    /// the newest opened by then; failing that, the oldest of several
    /// (its open overlapped the call, and it was there first); `None` for
    /// a lone entry opened after.
    pub fn named_at(&self, enter_ns: u64) -> Option<usize> {
        let mut depth = 0;
        for (i, e) in self.chain().enumerate() {
            if e.opened_ns <= enter_ns {
                return Some(i);
            }
            depth = i;
        }
        (depth > 0).then_some(depth)
    }

    /// The entry `depth` down [`FdEntry::chain`].
    pub fn at_depth(&mut self, depth: usize) -> &mut FdEntry {
        let mut e = self;
        for _ in 0..depth {
            e = e.displaced.as_deref_mut().expect("a depth named_at found");
        }
        e
    }

    /// Takes the chain apart: its entries, newest first, each alone.
    pub fn unchain(self) -> Vec<FdEntry> {
        let mut all = Vec::new();
        let mut next = Some(self);
        while let Some(mut e) = next {
            next = e.displaced.take().map(|b| *b);
            all.push(e);
        }
        all
    }

    /// Links `entries` into one chain, newest first (the order given):
    /// the first on top. `None` if there are none.
    pub fn linked(entries: Vec<FdEntry>) -> Option<FdEntry> {
        entries.into_iter().rev().fold(None, |under, mut e| {
            e.displaced = under.map(Box::new);
            Some(e)
        })
    }

    /// Whether both entries stand for one open file description: the same
    /// real descriptor, or simulated ones made by the same call.
    pub fn same_description(&self, other: &FdEntry) -> bool {
        match (&self.target, &other.target) {
            (Target::Real(a), Target::Real(b)) => Arc::ptr_eq(a, b),
            (Target::Ring(a), Target::Ring(b)) => Arc::ptr_eq(a, b),
            (Target::Simulated, Target::Simulated) => {
                self.opened_ns == other.opened_ns && self.path == other.path
            }
            _ => false,
        }
    }

    /// Takes the file status flags its description was given (by `open`
    /// or `F_SETFL`) that change how replay issues calls on it.
    pub fn set_status_flags(&mut self, flags: i32) {
        self.direct = flags & libc::O_DIRECT != 0;
        self.appends = match &self.target {
            Target::Real(fd) if flags & libc::O_APPEND != 0 => append_key(fd),
            _ => None,
        };
    }

    /// The entry for a descriptor a process had when the recorder began
    /// following it (`start` is how it began). A regular file replay has
    /// in DIR that it opens again ([`reopened_at_start`]: `cmd > log`,
    /// `cmd < in`, the files of a process attached to) is opened there
    /// with its recorded access mode and offset, so what the process
    /// writes through it lands in the file the final state checks, and
    /// what it reads comes from the file; before 2026-11-27 output went
    /// nowhere and the file differed. Anything else (a terminal, a pipe, a
    /// file not in DIR) is simulated.
    pub fn inherited(root: &Root, start: StartCause, fd: &FdInfo) -> Self {
        let flags = fd.flags as i32;
        let cloexec = flags & libc::O_CLOEXEC != 0;
        let target = &fd.target;
        if reopened_at_start(start, fd).is_none() {
            return FdEntry::simulated(target.clone(), cloexec);
        }
        let reopened = root
            .open_at(target, flags & (libc::O_ACCMODE | libc::O_APPEND), 0)
            .ok()
            .filter(|file| {
                stat_of(file).is_some_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFREG)
            })
            .filter(|file| {
                // SAFETY: lseek on a descriptor we own.
                unsafe { libc::lseek(file.as_raw_fd(), fd.offset as i64, libc::SEEK_SET) >= 0 }
            });
        match reopened {
            Some(file) => {
                let mut e = FdEntry::real(file, cloexec, target.clone(), false);
                e.set_status_flags(flags);
                e
            }
            None => FdEntry::simulated(target.clone(), cloexec),
        }
    }

    /// The table of a process when the recorder began following it:
    /// [`FdEntry::inherited`] for each descriptor, except that one the
    /// trace says shares its description with a lower one (`> log 2>&1`)
    /// is a copy of that one's entry, as `dup` makes, so the two write at
    /// one offset as they did.
    pub fn inherited_table(root: &Root, start: StartCause, fds: &[FdInfo]) -> Vec<(i32, Self)> {
        let mut table: Vec<(i32, Self)> = Vec::with_capacity(fds.len());
        for f in fds {
            let shared = f
                .same_as
                .and_then(|lower| table.iter().find(|(fd, _)| *fd == lower));
            let entry = match shared {
                Some((_, e)) => FdEntry {
                    cloexec: f.flags as i32 & libc::O_CLOEXEC != 0,
                    listing: None,
                    displaced: None,
                    ..e.clone()
                },
                None => FdEntry::inherited(root, start, f),
            };
            table.push((f.fd, entry));
        }
        table
    }

    /// An entry whose calls are simulated.
    pub fn simulated(path: Vec<u8>, cloexec: bool) -> Self {
        FdEntry {
            target: Target::Simulated,
            cloexec,
            path,
            stream: true,
            direct: false,
            appends: None,
            listing: None,
            _reader: None,
            opened_ns: 0,
            displaced: None,
            removed: false,
            pair: None,
            name: None,
            process: None,
        }
    }
}

/// How to find a traced descriptor's real one ([`Proc::real`]): requests
/// of asynchronous I/O name descriptors inside their own structures.
pub(crate) type FdLookup<'a> = &'a dyn Fn(i32) -> Option<Arc<OwnedFd>>;

/// A descriptor table, shared by threads and by `CLONE_FILES` children.
pub(crate) type FdTable = Arc<Mutex<HashMap<i32, FdEntry>>>;

/// Most recent table copies [`TableCopies`] keeps: a close is looked up
/// against copies made by calls still running when it began, which are
/// few and recent.
const TABLE_COPIES_MAX: usize = 256;

/// Descriptor tables copied for children (`fork`, `vfork`, `clone`
/// without `CLONE_FILES`), with when the call that made each had made the
/// copy in the recording: its end, or its child's birth if that came
/// first (`copied_by` in the dispatcher). The kernel copies the table at the start of that call, and a
/// `close` takes its number out at its own start, but replay copies the
/// table when it replays the call, which the `close` of another thread
/// may follow though it began first (or during the call, before the copy:
/// when the copy happened is not recorded). Such a child kept a pipe's
/// write end the real one never had, and the reader of that pipe, which
/// got its end of file in the recording, waited 10 s for it: a vfork
/// lasts until its child execs, so this was common (`go build`, Go's
/// `os/exec`). A close that began before a copying call ended therefore
/// also closes the copy's descriptor, if it is still the same one
/// ([`TableCopies::closed`]).
///
/// The other way round, a `close` that began after a child's birth, when
/// the copy had been made, may still be replayed before the creating
/// call (its record, written when the call returns, comes later: a
/// `vfork` returns when its child execs): the entry it closes is kept for
/// the copy still to come ([`TableCopies::born`]), so the child has it,
/// as the real one had.
#[derive(Default)]
pub(crate) struct TableCopies {
    copies: Mutex<VecDeque<TableCopy>>,
    unborn: Mutex<VecDeque<Unborn>>,
}

/// Children born but not yet replayed whose tables [`TableCopies`] keeps
/// closed entries for: the creating call's record is usually among the
/// next few hundred, and an entry kept holds its descriptor open.
const UNBORN_MAX: usize = 64;

/// A child of `parent` born at `born_ns` whose creating call replay has
/// not reached: what its parent's threads closed since.
struct Unborn {
    parent: u32,
    child: u32,
    born_ns: u64,
    closed: Vec<(i32, FdEntry)>,
}

/// `table` as a call that began at `enter_ns` copied it, in the kernel at
/// its start: descriptors other threads' calls made after that (they
/// ended after it began, yet replayed first) are not in the copy, though
/// the one each of them replaced is; and one kept aside under an entry
/// made before the call had been closed by then. With `enter_ns` at
/// `u64::MAX`, the table as it is.
pub(crate) fn copy_of(table: &HashMap<i32, FdEntry>, enter_ns: u64) -> HashMap<i32, FdEntry> {
    table
        .iter()
        .filter_map(|(&fd, top)| {
            let e = top.chain().nth(top.named_at(enter_ns)?)?;
            let mut e = e.clone();
            e.displaced = None;
            Some((fd, e))
        })
        .collect()
}

/// One table copy ([`TableCopies`]).
struct TableCopy {
    parent: Weak<Mutex<HashMap<i32, FdEntry>>>,
    child: Weak<Mutex<HashMap<i32, FdEntry>>>,
    /// When the call that made it had made it, in the recording.
    made_by_end: u64,
}

impl TableCopies {
    /// A copy of `parent` made by a call that began at `enter_ns` and had
    /// made it by `made_by_end` (recorded), noted while `parent` is still
    /// locked: a close replayed meanwhile either came first, and the copy
    /// lacks its descriptor, or finds the copy noted.
    pub fn copy(&self, parent: &FdTable, enter_ns: u64, made_by_end: u64, id: u32) -> FdTable {
        let t = lock(parent);
        let mut copy = copy_of(&t, enter_ns);
        for (fd, e) in self.unborn_closes(id) {
            copy.entry(fd).or_insert(e);
        }
        let child = Arc::new(Mutex::new(copy));
        let mut v = lock(&self.copies);
        v.retain(|c| c.child.strong_count() > 0 && c.parent.strong_count() > 0);
        if v.len() == TABLE_COPIES_MAX {
            v.pop_front();
        }
        v.push_back(TableCopy {
            parent: Arc::downgrade(parent),
            child: Arc::downgrade(&child),
            made_by_end,
        });
        child
    }

    /// A replayed close of `removed`, number `fd` of `table`, by a call
    /// that began at `enter_ns`: copies made from `table` by calls that
    /// ended after that, holding the same descriptor, lose it too.
    pub fn closed(&self, table: &FdTable, fd: i32, removed: &FdEntry, ev: &SyscallEvent) {
        let enter_ns = ev.enter_ns;
        for u in lock(&self.unborn).iter_mut() {
            // Only what the child had: opened by its birth.
            if u.parent == ev.tgid && u.born_ns < enter_ns && removed.opened_ns <= u.born_ns {
                u.closed.push((fd, removed.clone()));
            }
        }
        let children: Vec<FdTable> = lock(&self.copies)
            .iter()
            .filter(|c| c.made_by_end > enter_ns && std::ptr::eq(c.parent.as_ptr(), &**table))
            .filter_map(|c| c.child.upgrade())
            .collect();
        for child in children {
            let mut t = lock(&child);
            let Some(top) = t.get(&fd) else {
                continue;
            };
            if !top.chain().any(|e| e.same_description(removed)) {
                continue;
            }
            // One the child made kept aside under it takes the number
            // back, as in a close.
            let mut entries = t.remove(&fd).expect("found above").unchain();
            if let Some(i) = entries.iter().position(|e| e.same_description(removed)) {
                entries.remove(i);
            }
            if let Some(rest) = FdEntry::linked(entries) {
                t.insert(fd, rest);
            }
        }
    }

    /// Process `parent` made child `child` at `born_ns` (its start
    /// record), and replay has yet to reach the creating call: what the
    /// parent's threads close from then on is kept for the child's copy.
    pub fn born(&self, parent: u32, child: u32, born_ns: u64) {
        let mut u = lock(&self.unborn);
        if u.len() == UNBORN_MAX {
            u.pop_front();
        }
        u.push_back(Unborn {
            parent,
            child,
            born_ns,
            closed: Vec::new(),
        });
    }

    /// The entries kept for child `child` ([`Self::born`]), no longer kept
    /// (the caller made its table, or it shares its parent's).
    pub fn unborn_closes(&self, child: u32) -> Vec<(i32, FdEntry)> {
        let mut u = lock(&self.unborn);
        match u.iter().position(|x| x.child == child) {
            Some(i) => u.remove(i).map_or_else(Vec::new, |x| x.closed),
            None => Vec::new(),
        }
    }
}

/// Working directory, root and umask, shared by `CLONE_FS` children.
#[derive(Clone)]
pub(crate) struct FsInfo {
    /// The absolute traced path of the working directory.
    pub cwd: Vec<u8>,
    /// Set when the working directory was removed while in use (`cd d;
    /// rmdir ../d`): the removed directory, held open as the kernel holds
    /// it for the process, so `.` still reaches it; `..` goes to `cwd`'s
    /// lexical parent ([`FsInfo::in_removed_cwd`]).
    pub removed_cwd: Option<Arc<OwnedFd>>,
    /// The working directory's device and inode numbers, once known: a
    /// call removing it by another name (`cd link; rmdir ../d` where
    /// `link -> d`) is recognised by them ([`removal`]). `None` when the
    /// working directory changed since they were last needed.
    pub cwd_id: Option<(u64, u64)>,
    /// The absolute traced path of the root directory (`chroot`):
    /// absolute paths the process names start there.
    pub root: Vec<u8>,
    /// The file mode creation mask.
    pub umask: u32,
}

/// A file mapping the replay re-created: traced address to real one.
pub(crate) struct Mapping {
    addr: usize,
    len: usize,
    /// Shared and writable: stores through it reach the file.
    writes_through: bool,
    /// The file (device, inode) and the offset in it the mapping starts
    /// at, when it writes through.
    file: Option<((u64, u64), u64)>,
}

/// When each page of a file last had a mapping's captured bytes stored
/// into it: the recorded time of that capture, per (device, inode) and
/// page. Each capture is the whole mapping as its process saw it then,
/// so an older one must not overwrite a newer one. Their records may come
/// in another order than their times: an eBPF capture of a large mapping
/// spills over milliseconds before its record is written, and another
/// process's capture, begun later, can be written first.
#[derive(Default)]
pub(crate) struct Snapshots(Mutex<HashMap<(u64, u64), HashMap<u64, u64>>>);

/// A file: its device and inode numbers.
type FileId = (u64, u64);

/// The shared writable file mappings alive in the replay, by file (device,
/// inode). A program that stores through such a mapping (Go's telemetry
/// counters) and a process that reads the file with `read` see the same
/// bytes, but the trace holds the stores only when the mapping is
/// unmapped, synced or left at exit: a read before that finds the file
/// without them in replay. Such a read's recorded bytes are the stores.
#[derive(Default)]
pub(crate) struct LiveMappings {
    by_file: Mutex<HashMap<FileId, Vec<Weak<Mapping>>>>,
    /// Reads whose differences all lay in such mappings, and the bytes
    /// written into the files from their captures.
    pub reads: AtomicU64,
    pub bytes: AtomicU64,
}

impl LiveMappings {
    /// Registers a mapping (only one that writes through a known file).
    pub fn add(&self, m: &Arc<Mapping>) {
        if let Some((file, _)) = m.file.filter(|_| m.writes_through) {
            lock(&self.by_file)
                .entry(file)
                .or_default()
                .push(Arc::downgrade(m));
        }
    }

    /// The live mappings of `file`.
    pub fn of(&self, file: FileId) -> Vec<Arc<Mapping>> {
        let mut by_file = lock(&self.by_file);
        let Some(maps) = by_file.get_mut(&file) else {
            return Vec::new();
        };
        maps.retain(|m| m.strong_count() > 0);
        maps.iter().filter_map(Weak::upgrade).collect()
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: a mapping this replayer created and nobody else uses.
        unsafe { libc::munmap(self.addr as *mut libc::c_void, self.len) };
    }
}

impl Mapping {
    /// Takes ownership of a mapping made with `mmap`; `file` is the file
    /// and offset of a mapping that writes through.
    pub fn new(
        addr: usize,
        len: usize,
        writes_through: bool,
        file: Option<((u64, u64), u64)>,
    ) -> Self {
        Mapping {
            addr,
            len,
            writes_through,
            file,
        }
    }

    /// Stores `data`, which the traced program had at traced address
    /// `at` at recorded time `taken` while this mapping started at
    /// `start`, into the part of this mapping it covers, leaving out
    /// pages a capture taken later was already stored into; returns the
    /// real range written (its address and length). `EFAULT` if a page
    /// cannot be stored: the file is shorter in replay than the mapping
    /// (an earlier call went otherwise), where a plain store would raise
    /// `SIGBUS` in the replayer.
    pub fn store(
        &self,
        start: u64,
        at: u64,
        data: &[u8],
        taken: u64,
        snapshots: &Snapshots,
    ) -> std::io::Result<Option<(usize, usize)>> {
        let end = start + self.len as u64;
        let (from, to) = (at.max(start), (at + data.len() as u64).min(end));
        if !self.writes_through || from >= to {
            return Ok(None);
        }
        // Only a mapping of a known file takes the lock.
        let mut pages = self.file.map(|_| lock(&snapshots.0));
        let mut newest = pages
            .as_mut()
            .zip(self.file)
            .map(|(pages, (file, offset))| (pages.entry(file).or_default(), offset));
        let mut written: Option<(usize, usize)> = None;
        let mut piece = from;
        while piece < to {
            // One page of the mapping at a time (the mapping starts on a
            // page boundary of the file).
            let next = ((piece - start) / 4096 + 1) * 4096 + start;
            let piece_end = next.min(to);
            let newer = newest.as_mut().is_some_and(|(pages, offset)| {
                let page = (*offset + piece - start) / 4096;
                let last = pages.entry(page).or_insert(0);
                let newer = *last > taken;
                *last = (*last).max(taken);
                newer
            });
            if !newer {
                let src = &data[(piece - at) as usize..(piece_end - at) as usize];
                let dst = self.addr + (piece - start) as usize;
                store_faultless(dst, src)?;
                let first = written.map_or(dst, |w| w.0);
                written = Some((first, dst + src.len()));
            }
            piece = piece_end;
        }
        Ok(written.map(|(first, past)| (first, past - first)))
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The same mapping resized to `new_len` (`mremap`, free to move it),
    /// or itself back with the error.
    pub fn remap(self, new_len: usize) -> Result<Mapping, (Mapping, std::io::Error)> {
        // SAFETY: a mapping this replayer made and owns alone (`self`).
        let addr = unsafe {
            libc::mremap(
                self.addr as *mut libc::c_void,
                self.len,
                new_len,
                libc::MREMAP_MAYMOVE,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err((self, std::io::Error::last_os_error()));
        }
        let moved = Mapping {
            addr: addr as usize,
            len: new_len,
            ..self
        };
        // The old range is gone with the move: no munmap of it.
        std::mem::forget(self);
        Ok(moved)
    }

    /// The bytes of its file this mapping covers, if it writes through.
    pub fn file_range(&self) -> Option<std::ops::Range<u64>> {
        self.file
            .filter(|_| self.writes_through)
            .map(|(_, off)| off..off + self.len as u64)
    }

    /// Stores `data` at offset `at` of its file, which the mapping covers
    /// from `at` to the end of `data`: as the traced program's own stores
    /// would have put it there.
    pub fn store_at_file(&self, at: u64, data: &[u8]) -> std::io::Result<()> {
        let range = self.file_range().unwrap_or(0..0);
        if at < range.start || at + data.len() as u64 > range.end {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        store_faultless(self.addr + (at - range.start) as usize, data)
    }

    /// The real pages of this mapping (which starts at traced address
    /// `start`) that the traced range `[addr, addr + len)` covers, as an
    /// address and length, if any.
    pub fn real_range(&self, start: u64, addr: u64, len: u64) -> Option<(usize, usize)> {
        let end = start + self.len as u64;
        let (from, to) = (addr.max(start), addr.saturating_add(len).min(end));
        let from = (from - start) & !4095;
        let to = (to.saturating_sub(start)).div_ceil(4096) * 4096;
        (from < to).then(|| (self.addr + from as usize, (to - from) as usize))
    }

    /// The traced range `[start, start + len)` of this mapping overlaps
    /// `[addr, addr + len)`.
    pub fn overlaps(&self, start: u64, addr: u64, len: u64) -> bool {
        start < addr.saturating_add(len) && addr < start + self.len as u64
    }
}

/// Copies `src` to address `dst` of this process's own memory through the
/// kernel (`process_vm_writev` on itself), which reports a page that cannot
/// be written (a file mapping past the file's end) as `EFAULT` instead of
/// raising `SIGBUS`.
fn store_faultless(dst: usize, src: &[u8]) -> std::io::Result<()> {
    let local = libc::iovec {
        iov_base: src.as_ptr() as *mut libc::c_void,
        iov_len: src.len(),
    };
    let remote = libc::iovec {
        iov_base: dst as *mut libc::c_void,
        iov_len: src.len(),
    };
    // SAFETY: both iovecs describe memory of this process; the kernel
    // checks the destination and fails rather than fault.
    let n = unsafe { libc::process_vm_writev(libc::getpid(), &local, 1, &remote, 1, 0) };
    match n {
        n if n < 0 => Err(std::io::Error::last_os_error()),
        n if n as usize == src.len() => Ok(()),
        _ => Err(std::io::Error::from_raw_os_error(libc::EFAULT)),
    }
}

/// A thread's user and group ids (each thread has its own, as in the
/// kernel; glibc's `setuid` makes every thread call it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Creds {
    /// Real, effective, saved and file-system user ids.
    pub uid: [u32; 4],
    /// Real, effective, saved and file-system group ids.
    pub gid: [u32; 4],
    /// Supplementary group ids; `None` where the trace does not say. One
    /// list per `setgroups`, shared by the copies a fork makes, so a
    /// thread can tell at a glance whether its list changed.
    pub groups: Option<Arc<[u32]>>,
    /// The effective capabilities a `capset` left (`None`: the
    /// replayer's, as at the trace's start or after an `execve`, which
    /// gives root its every capability back). Kept per process, though
    /// the kernel keeps them per thread.
    pub caps: Option<u64>,
    /// The capabilities `prctl(PR_CAPBSET_DROP)` left in the bounding set
    /// (all of them where the trace does not say): all root gets back at
    /// an `execve`.
    pub bounding: u64,
}

/// Index of the effective id in [`Creds`]' arrays.
const EFFECTIVE: usize = 1;
/// Index of the file-system id in [`Creds`]' arrays.
pub(crate) const FS: usize = 3;

impl Creds {
    /// What a process start record says: real and effective ids; the
    /// saved and file-system ids follow the effective ones.
    pub fn started(uid: u32, euid: u32, gid: u32, egid: u32) -> Self {
        Creds {
            uid: [uid, euid, euid, euid],
            gid: [gid, egid, egid, egid],
            groups: None,
            caps: None,
            bounding: !0,
        }
    }

    /// An `execve`: a root process (real or effective user id 0) gets
    /// every capability of its bounding set; another keeps none, which
    /// acting as its user already gives the file calls replay makes.
    pub fn exec(&mut self) {
        let root = self.uid[0] == 0 || self.uid[EFFECTIVE] == 0;
        self.caps = (root && self.bounding != !0).then_some(self.bounding);
    }

    /// Applies a successful [`Effect::SetIds`] call with arguments `args`
    /// (as the kernel does; privilege is an effective user id of 0).
    pub fn set(&mut self, ids: Ids, args: &[u64]) {
        let privileged = self.uid[EFFECTIVE] == 0;
        let (which, v) = match ids {
            Ids::User(w) => (w, &mut self.uid),
            Ids::Group(w) => (w, &mut self.gid),
        };
        // -1 (as a 32-bit id) leaves an id alone.
        let arg = |i: usize| Some(args[i] as u32).filter(|&x| x != u32::MAX);
        match which {
            Which::One => {
                let id = arg(0).unwrap_or(v[EFFECTIVE]);
                if privileged {
                    *v = [id; 4];
                } else {
                    (v[EFFECTIVE], v[FS]) = (id, id);
                }
            }
            Which::RealEffective => {
                let old_real = v[0];
                if let Some(r) = arg(0) {
                    v[0] = r;
                }
                if let Some(e) = arg(1) {
                    v[EFFECTIVE] = e;
                }
                if arg(0).is_some() || arg(1).is_some_and(|e| e != old_real) {
                    v[2] = v[EFFECTIVE];
                }
                v[FS] = v[EFFECTIVE];
            }
            Which::RealEffectiveSaved => {
                for (i, id) in v.iter_mut().take(3).enumerate() {
                    if let Some(x) = arg(i) {
                        *id = x;
                    }
                }
                v[FS] = v[EFFECTIVE];
            }
            Which::FileSystem => {
                if let Some(f) = arg(0).filter(|f| privileged || v.contains(f)) {
                    v[FS] = f;
                }
            }
        }
    }
}

/// One emulated process, as its threads see it.
#[derive(Clone)]
pub(crate) struct Proc {
    /// Its descriptor table.
    pub fds: FdTable,
    /// Its working directory and umask.
    pub fs: Arc<Mutex<FsInfo>>,
    /// File mappings by traced address: the process's own view, but a
    /// forked child's entries are its parent's mappings (a shared mapping
    /// reaches the same file pages either way), unmapped when the last
    /// process holding one lets go.
    pub maps: Maps,
    /// The thread is under a seccomp filter (it, or the thread that made
    /// it, installed one): the filter may have refused a call, which then
    /// failed with nothing run, so its failed calls are not issued.
    pub filtered: bool,
    /// The ids of the thread holding this copy; `None` when the trace
    /// does not say (replay then acts with its own).
    pub creds: Option<Creds>,
    /// Linux AIO contexts, which belong to the address space.
    pub aio: Contexts,
}

/// A process's file mappings (see [`Proc::maps`]).
pub(crate) type Maps = Arc<Mutex<HashMap<u64, Arc<Mapping>>>>;

/// What follows `prefix` in `path` when `path` is `prefix` or lies under
/// it (both lexical).
fn under<'p>(path: &'p [u8], prefix: &[u8]) -> Option<&'p [u8]> {
    let rest = path.strip_prefix(prefix)?;
    (rest.is_empty() || rest[0] == b'/' || prefix == b"/").then_some(rest)
}

/// Renames `path` as a successful `rename(src, dst)` renamed what it
/// names (or, with `exchange`, swapped `src` and `dst`).
fn follow_rename(path: &mut Vec<u8>, src: &[u8], dst: &[u8], exchange: bool) {
    if path.is_empty() || is_pseudo(path) {
        return;
    }
    let now = lexical(path);
    let moved = match under(&now, src) {
        Some(rest) => [dst, rest].concat(),
        None => match under(&now, dst).filter(|_| exchange) {
            Some(rest) => [src, rest].concat(),
            None => return,
        },
    };
    *path = moved;
}

/// Makes every live process's working directory, root and descriptors
/// follow a replayed `rename(src, dst)` (traced absolute paths): replay
/// names them by path, and a program whose working directory or
/// directory descriptor was moved (`cd d; mv ../d ../e; touch x`, or
/// `openat(dirfd, ...)` after the directory was renamed) goes on inside
/// it where it now is.
pub(crate) fn follow_rename_everywhere(
    procs: &Mutex<HashMap<u32, WeakProc>>,
    src: &[u8],
    dst: &[u8],
    exchange: bool,
) {
    let (src, dst) = (lexical(src), lexical(dst));
    if src == dst {
        return;
    }
    let live: Vec<Proc> = lock(procs).values().filter_map(WeakProc::upgrade).collect();
    // Threads and CLONE_FS/CLONE_FILES children share their state: each
    // once, or an exchange would swap twice.
    let mut seen = HashSet::new();
    for p in live {
        if seen.insert(Arc::as_ptr(&p.fs) as usize) {
            let mut fs = lock(&p.fs);
            follow_rename(&mut fs.cwd, &src, &dst, exchange);
            follow_rename(&mut fs.root, &src, &dst, exchange);
        }
        if seen.insert(Arc::as_ptr(&p.fds) as usize) {
            for e in lock(&p.fds).values_mut() {
                follow_rename(&mut e.path, &src, &dst, exchange);
            }
        }
    }
}

/// Where a relative path leads from a working directory that was
/// removed while in use ([`FsInfo::in_removed_cwd`]).
pub(crate) enum InRemoved {
    /// A traced absolute path, out of the removed directories through
    /// leading `..`s.
    Path(Vec<u8>),
    /// A name inside a removed directory: nothing can be there, and the
    /// kernel says `ENOENT` for any call naming one, even if a directory
    /// of the same name was made since.
    Inside,
    /// The removed directory itself, or one of its removed parents
    /// (`ls .`, `ls ..` after `rm -r ../../e`): held open, as the kernel
    /// holds them for the process; and its traced name.
    Itself(Arc<OwnedFd>, Vec<u8>),
}

impl FsInfo {
    /// The working directory's device and inode numbers, found in the
    /// root the first time they are needed after it changed.
    fn cwd_id(&mut self, root: &Root) -> Option<(u64, u64)> {
        if self.cwd_id.is_none() {
            self.cwd_id = root.locate(&self.cwd, true).ok().and_then(|fd| id_of(&fd));
        }
        self.cwd_id
    }

    /// How relative path `rel` resolves if the working directory was
    /// removed; `None` if it was not.
    ///
    /// The kernel walks `..` from a removed directory to its parent. Here
    /// each `..` climbs the held descriptor while the directory it reaches
    /// is removed too (removed directories all lay inside the replay
    /// root); at the first that still exists the rest of `rel` is joined
    /// with its traced name, the working directory's lexical ancestor, and
    /// resolved inside the root as any path: a trace cannot climb out.
    pub fn in_removed_cwd(&self, rel: &[u8]) -> Option<InRemoved> {
        in_removed(self.removed_cwd.clone()?, self.cwd.clone(), rel)
    }
}

/// How relative path `rel` resolves from the removed directory `dir`
/// (traced name `name`): see [`FsInfo::in_removed_cwd`]. Also for a
/// directory descriptor whose directory was removed.
pub(crate) fn in_removed(
    mut dir: Arc<OwnedFd>,
    mut name: Vec<u8>,
    rel: &[u8],
) -> Option<InRemoved> {
    let mut rest = rel;
    while let Some((first, after)) = first_component(rest) {
        if first != b".." {
            return Some(InRemoved::Inside);
        }
        name = lexical(&[&name[..], b"/.."].concat());
        match open_in(dir.as_fd(), c"..", libc::O_PATH | libc::O_DIRECTORY) {
            Ok(parent) if is_removed(parent.as_fd()) => dir = Arc::new(parent),
            _ => {
                let after = if after.iter().all(|&b| b == b'/') {
                    &b"."[..]
                } else {
                    after
                };
                return Some(InRemoved::Path(join_as_called(&name, after)));
            }
        }
        rest = after;
    }
    (!rel.is_empty()).then_some(InRemoved::Itself(dir, name))
}

/// Most descriptors waiting under one key of [`Passed`]: ones sent to a
/// process outside the trace are never received, and each holds a real
/// descriptor open.
const PASSED_MAX: usize = 1024;

/// Descriptors sent over sockets with `SCM_RIGHTS` (the sender's
/// entries, so the receiver shares their open file descriptions), in the
/// order the replayed `sendmsg` calls sent them, until a `recvmsg` takes
/// them: per end of a socket pair the trace made or of a Unix connection
/// ([`FdEntry::pair`]), and one queue for every other socket, since the
/// trace does not say which socket a message crossed to (two streams of
/// descriptors passed at once over such sockets may swap; the calls on
/// them then mismatch).
#[derive(Default)]
pub(crate) struct Passed {
    queues: Mutex<HashMap<Option<u64>, VecDeque<FdEntry>>>,
    /// Per Unix socket name: how many connects to it, and accepts from
    /// the socket bound to it, were replayed.
    connections: Mutex<HashMap<u64, [u64; 2]>>,
}

impl Passed {
    /// The pair number of the next connection to the name `name` at
    /// `end` (0: the connecting socket, 1: the one accepted). The trace
    /// does not say which connect an `accept` took, so the nth connect to
    /// a name is paired with the nth accept on it, in replay's order
    /// (which keeps the recorded one for calls that did not overlap).
    /// The numbers are apart from the socket pairs' (the top bit set).
    pub fn connection(&self, name: u64, end: u64) -> u64 {
        let mut m = lock(&self.connections);
        let counts = m.entry(name).or_default();
        let nth = counts[end as usize & 1];
        counts[end as usize & 1] += 1;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(&(name, nth), &mut h);
        let id = (1 << 62) | (std::hash::Hasher::finish(&h) >> 2);
        id * 2 + (end & 1)
    }

    /// Queues `e`, sent to the socket pair end `pair` (or another socket).
    pub fn send(&self, pair: Option<u64>, e: FdEntry) {
        let mut m = lock(&self.queues);
        let q = m.entry(pair).or_default();
        if q.len() == PASSED_MAX {
            q.pop_front();
        }
        q.push_back(e);
    }

    /// The `n` entries sent first to `pair`, if that many wait; a `peek`
    /// leaves them for the next receive.
    pub fn receive(&self, pair: Option<u64>, n: usize, peek: bool) -> Option<Vec<FdEntry>> {
        let mut m = lock(&self.queues);
        let q = m.get_mut(&pair).filter(|q| q.len() >= n)?;
        Some(match peek {
            true => q.iter().take(n).cloned().collect(),
            false => q.drain(..n).collect(),
        })
    }
}

/// A directory a replayed call is about to remove while live processes
/// are in it or hold it open: they go on in it after the call, as they
/// did when recorded ([`in_removed`]).
pub(crate) struct Removal {
    /// Its traced absolute path.
    path: Vec<u8>,
    /// The directory, opened before the call: held for the processes as
    /// the kernel holds it for them.
    held: Arc<OwnedFd>,
    /// Its device and inode numbers, whatever name reached it.
    id: (u64, u64),
    /// The working directories in it, found before the call (afterwards
    /// their paths no longer resolve).
    cwds: Vec<Arc<Mutex<FsInfo>>>,
}

/// The removal of the directory `path` (traced, absolute; opened as
/// `dir`) if some live process's working directory, or one of its
/// directory descriptors, is that directory and not marked removed
/// already. Each is compared by name first, then by identity, so a
/// working directory entered through a symbolic link (`cd link` where
/// `link -> d`, then `rmdir d`) is found too. Called before the call runs.
pub(crate) fn removal(
    procs: &Mutex<HashMap<u32, WeakProc>>,
    root: &Root,
    path: &[u8],
    dir: OwnedFd,
) -> Option<Removal> {
    let id = id_of(&dir)?;
    let path = lexical(path);
    let live: Vec<Proc> = lock(procs).values().filter_map(WeakProc::upgrade).collect();
    let mut cwds = Vec::new();
    let mut fds = false;
    for p in &live {
        // One lock at a time: a thread holding one may wait for the other.
        let cwd = {
            let mut fs = lock(&p.fs);
            fs.removed_cwd.is_none() && (names(&fs.cwd, &path) || fs.cwd_id(root) == Some(id))
        };
        if cwd && !cwds.iter().any(|c| Arc::ptr_eq(c, &p.fs)) {
            cwds.push(p.fs.clone());
        }
        fds = fds || lock(&p.fds).values().any(|e| holds(e, &path, id));
    }
    (fds || !cwds.is_empty()).then(|| Removal {
        path,
        held: Arc::new(dir),
        id,
        cwds,
    })
}

/// Marks, after the call removed the directory, the working directories
/// and directory descriptors of [`removal`] removed.
pub(crate) fn mark_removed(procs: &Mutex<HashMap<u32, WeakProc>>, r: &Removal) {
    for fs in &r.cwds {
        let mut fs = lock(fs);
        if fs.removed_cwd.is_none() {
            fs.removed_cwd = Some(r.held.clone());
        }
    }
    let live: Vec<Proc> = lock(procs).values().filter_map(WeakProc::upgrade).collect();
    for p in live {
        for e in lock(&p.fds).values_mut() {
            if holds(e, &r.path, r.id) {
                e.removed = true;
            }
        }
    }
}

/// Whether the descriptor `e` holds the directory `lexical_dir` (device
/// and inode `id`) and is not marked removed.
fn holds(e: &FdEntry, lexical_dir: &[u8], id: (u64, u64)) -> bool {
    let Target::Real(fd) = &e.target else {
        return false;
    };
    !e.removed && (names(&e.path, lexical_dir) || id_of(fd) == Some(id))
}

/// Whether `path` (a traced absolute name, as [`join`] makes them: no `.`
/// components) names `lexical_dir`, comparing without allocating unless
/// `path` holds a `..`: every descriptor is asked on each removal.
fn names(path: &[u8], lexical_dir: &[u8]) -> bool {
    if path.windows(3).any(|w| w == b"/..") {
        lexical(path) == lexical_dir
    } else {
        path == lexical_dir
    }
}

/// A process's state as long as some thread still uses it: descriptors of
/// processes that exited or exec'd must close, or a pipe reader replaying
/// an end-of-file would wait forever for a writer nobody holds.
pub(crate) struct WeakProc {
    fds: Weak<Mutex<HashMap<i32, FdEntry>>>,
    fs: Weak<Mutex<FsInfo>>,
    maps: Weak<Mutex<HashMap<u64, Arc<Mapping>>>>,
    creds: Option<Creds>,
    filtered: bool,
    aio: Weak<Mutex<HashMap<u64, Arc<Context>>>>,
}

impl WeakProc {
    /// The state, if a thread still holds it.
    pub fn upgrade(&self) -> Option<Proc> {
        Some(Proc {
            fds: self.fds.upgrade()?,
            fs: self.fs.upgrade()?,
            maps: self.maps.upgrade()?,
            creds: self.creds.clone(),
            filtered: self.filtered,
            aio: self.aio.upgrade()?,
        })
    }
}

impl Proc {
    /// A reference that does not keep the state alive.
    pub fn downgrade(&self) -> WeakProc {
        WeakProc {
            fds: Arc::downgrade(&self.fds),
            fs: Arc::downgrade(&self.fs),
            maps: Arc::downgrade(&self.maps),
            creds: self.creds.clone(),
            filtered: self.filtered,
            aio: Arc::downgrade(&self.aio),
        }
    }

    /// A process that starts with `fds` (all simulated: inherited
    /// descriptors point outside the replay) in `cwd`, with ids `creds`.
    pub fn initial(
        fds: impl Iterator<Item = (i32, FdEntry)>,
        cwd: Vec<u8>,
        umask: u32,
        creds: Option<Creds>,
    ) -> Self {
        let table = fds.collect();
        Proc {
            fds: Arc::new(Mutex::new(table)),
            fs: Arc::new(Mutex::new(FsInfo {
                cwd,
                removed_cwd: None,
                cwd_id: None,
                root: b"/".to_vec(),
                umask,
            })),
            maps: Arc::default(),
            creds,
            filtered: false,
            aio: Arc::default(),
        }
    }

    /// The state of a child created by `clone` with `flags`.
    /// `unshare` (`CLONE_FILES`, `CLONE_FS`; `close_range` with
    /// `CLOSE_RANGE_UNSHARE`): the calling thread goes on with its own
    /// copy of the descriptor table or of its working directory, root and
    /// umask, which the threads and children that shared them no longer
    /// see change.
    pub fn unshare(&mut self, flags: u64) {
        if flags & libc::CLONE_FILES as u64 != 0 {
            let copy = lock(&self.fds).clone();
            self.fds = Arc::new(Mutex::new(copy));
        }
        if flags & libc::CLONE_FS as u64 != 0 {
            let copy = lock(&self.fs).clone();
            self.fs = Arc::new(Mutex::new(copy));
        }
    }

    pub fn child(&self, flags: u64, copy: impl FnOnce(&FdTable) -> FdTable) -> Proc {
        let share = |bit: i32| flags & bit as u64 != 0;
        if share(libc::CLONE_THREAD) {
            return self.clone();
        }
        let fds = if share(libc::CLONE_FILES) {
            self.fds.clone()
        } else {
            copy(&self.fds)
        };
        let fs = if share(libc::CLONE_FS) {
            self.fs.clone()
        } else {
            Arc::new(Mutex::new(lock(&self.fs).clone()))
        };
        let (maps, aio) = if share(libc::CLONE_VM) {
            (self.maps.clone(), self.aio.clone())
        } else {
            // A forked child's AIO contexts are not usable: none.
            (
                Arc::new(Mutex::new(lock(&self.maps).clone())),
                Arc::default(),
            )
        };
        Proc {
            fds,
            fs,
            maps,
            creds: self.creds.clone(),
            filtered: self.filtered,
            aio,
        }
    }

    /// A successful `execve`: the table is unshared, `FD_CLOEXEC` entries
    /// close and the old program's mappings and AIO contexts go.
    pub fn exec(&mut self) {
        let kept: HashMap<i32, FdEntry> = lock(&self.fds)
            .iter()
            .filter(|(_, e)| !e.cloexec)
            .map(|(&n, e)| (n, e.clone()))
            .collect();
        self.fds = Arc::new(Mutex::new(kept));
        self.maps = Arc::default();
        self.aio = Arc::default();
        if let Some(c) = self.creds.as_mut() {
            c.exec();
        }
    }

    /// The entry for traced descriptor `fd` as the call `ev` saw it.
    pub fn entry(&self, ev: &SyscallEvent, fd: i32) -> Option<FdEntry> {
        crate::exec::live(&mut lock(&self.fds), fd, ev).cloned()
    }

    /// Where the offset traced `fd` works at lives, as a key: the open
    /// file description (the address of the real descriptor every copy of
    /// it shares), or for `O_APPEND` the file's end ([`append_key`]);
    /// `None` for a pipe or FIFO, a simulated descriptor or a closed one.
    pub fn description(&self, ev: &SyscallEvent, fd: i32) -> Option<usize> {
        match crate::exec::live(&mut lock(&self.fds), fd, ev)? {
            FdEntry {
                target: Target::Real(fd),
                stream: false,
                appends,
                ..
            } => Some(appends.unwrap_or(Arc::as_ptr(fd) as usize)),
            _ => None,
        }
    }

    /// The real descriptor traced `fd` stands for at `ev`, `None` when it
    /// is simulated or not open.
    pub fn real(&self, ev: &SyscallEvent, fd: i32) -> Option<Arc<OwnedFd>> {
        match self.entry(ev, fd)?.target {
            Target::Real(fd) => Some(fd),
            _ => None,
        }
    }
}

/// The key of the file `fd` is open on, for appends to it: its device
/// and inode, shifted left and with the low bit set, which no
/// description's key has (those are addresses of `Arc`s, aligned).
fn append_key(fd: &OwnedFd) -> Option<usize> {
    let st = stat_of(fd)?;
    let id = (st.st_dev as usize).rotate_left(32) ^ st.st_ino as usize;
    Some(id << 1 | 1)
}

/// The device and inode numbers of a real descriptor's file: which file
/// it is, whatever name reached it.
pub(crate) fn id_of(fd: impl AsFd) -> Option<(u64, u64)> {
    stat_of(fd).map(|st| (st.st_dev, st.st_ino))
}

/// `fstat` of a real descriptor.
pub(crate) fn stat_of(fd: impl AsFd) -> Option<libc::stat> {
    // SAFETY: fstat into a zeroed struct, on a descriptor the caller holds.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd.as_fd().as_raw_fd(), &mut st) } == 0).then_some(st)
}

#[cfg(test)]
mod tests {
    use super::{
        in_removed, is_removed, lock, names, Creds, FdEntry, Ids, InRemoved, Mapping, Proc,
        Snapshots, Which,
    };
    use reanimator_trace::SyscallEvent;
    use std::os::fd::{AsFd, OwnedFd};
    use std::sync::Arc;

    /// A child's table is its parent's as the copying call began: not what
    /// other threads opened after that, but what such an entry replaced;
    /// and a close that began before the copying call ended takes the
    /// descriptor from the copy too, while a later one leaves it.
    #[test]
    fn a_table_copy_is_the_table_as_the_fork_began() {
        let copies = super::TableCopies::default();
        let entry = |path: &str, opened_ns: u64| FdEntry {
            opened_ns,
            ..FdEntry::simulated(path.as_bytes().to_vec(), false)
        };
        let parent: super::FdTable = Arc::default();
        {
            let mut t = lock(&parent);
            t.insert(3, entry("/old", 5));
            t.insert(4, entry("/kept", 6));
            t.insert(5, entry("/closed-late", 7));
            let mut newer = entry("/new", 50);
            newer.displaced = Some(Box::new(entry("/replaced", 8)));
            t.insert(6, newer);
            t.insert(7, entry("/made-after", 60));
        }
        // The fork ran from 40 to 100.
        let child = copies.copy(&parent, 40, 100, 9);
        let paths = |t: &super::FdTable| {
            let mut v: Vec<(i32, String)> = lock(t)
                .iter()
                .map(|(fd, e)| (*fd, String::from_utf8_lossy(&e.path).into_owned()))
                .collect();
            v.sort();
            v
        };
        let want = |v: &[(i32, &str)]| -> Vec<(i32, String)> {
            v.iter().map(|(fd, p)| (*fd, p.to_string())).collect()
        };
        assert_eq!(
            paths(&child),
            want(&[
                (3, "/old"),
                (4, "/kept"),
                (5, "/closed-late"),
                (6, "/replaced")
            ])
        );
        // Closes replayed after the copy: one began during the fork (at
        // 45), one after it (at 120).
        for (fd, at) in [(3, 45), (5, 120)] {
            let removed = lock(&parent).remove(&fd).unwrap();
            copies.closed(&parent, fd, &removed, &close_at(at));
        }
        assert_eq!(
            paths(&child),
            want(&[(4, "/kept"), (5, "/closed-late"), (6, "/replaced")])
        );
    }

    /// A close of process 1 at `enter_ns`.
    fn close_at(enter_ns: u64) -> SyscallEvent {
        SyscallEvent {
            seq: 0,
            tgid: 1,
            tid: 1,
            nr: 3,
            enter_ns,
            args: [0; 6],
            exit: None,
            captures: Vec::new(),
        }
    }

    /// A child born at 50 whose creating call (40 to 100) replays after
    /// two closes of its parent, one begun before the birth, one after:
    /// the child's table has what the second closed, as the real one had.
    #[test]
    fn a_close_after_a_birth_replayed_before_the_copy_leaves_the_child_its_entry() {
        let copies = super::TableCopies::default();
        let parent: super::FdTable = Arc::default();
        for fd in [3, 4] {
            let e = FdEntry::simulated(format!("/f{fd}").into_bytes(), false);
            lock(&parent).insert(fd, e);
        }
        copies.born(1, 9, 50);
        for (fd, at) in [(3, 45), (4, 60)] {
            let removed = lock(&parent).remove(&fd).unwrap();
            copies.closed(&parent, fd, &removed, &close_at(at));
        }
        // A pipe end opened after the birth and closed before the copy
        // (Go's os/exec, another goroutine): never the child's. Kept
        // before, the child held the write end and its parent's read
        // waited 10 s for an end of file.
        let mut late = FdEntry::simulated(b"/late".to_vec(), false);
        late.opened_ns = 55;
        lock(&parent).insert(7, late);
        let removed = lock(&parent).remove(&7).unwrap();
        copies.closed(&parent, 7, &removed, &close_at(70));
        let child = copies.copy(&parent, 40, 50, 9);
        let kept: Vec<i32> = lock(&child).keys().copied().collect();
        assert_eq!(kept, [4]);
        // Taken: another copy for the same id keeps nothing.
        assert!(copies.unborn_closes(9).is_empty());
    }

    /// The nth connect to a name and the nth accept on it are the two ends
    /// of one connection, whichever replays first; other connections, and
    /// socket pairs (`2 * seq + end`), have other numbers.
    #[test]
    fn the_nth_connect_to_a_name_pairs_with_its_nth_accept() {
        let p = super::Passed::default();
        let accepted = p.connection(7, 1);
        let connected = p.connection(7, 0);
        assert_eq!(accepted, connected ^ 1);
        let second = p.connection(7, 0);
        let elsewhere = p.connection(8, 0);
        assert_eq!(p.connection(7, 1), second ^ 1);
        for n in [second, elsewhere] {
            assert_ne!(n >> 1, connected >> 1);
        }
        assert_ne!(second >> 1, elsewhere >> 1);
        assert!(connected >> 63 == 1 && elsewhere >> 63 == 1);
    }

    /// A rename moves the names under its source, compared lexically, and
    /// an exchange moves those under its destination back; other names and
    /// names that only share a prefix stay.
    #[test]
    fn names_follow_a_rename_and_an_exchange() {
        let follow = |path: &str, exchange: bool| {
            let mut p = path.as_bytes().to_vec();
            super::follow_rename(&mut p, b"/w/d", b"/w/e", exchange);
            String::from_utf8(p).unwrap()
        };
        assert_eq!(follow("/w/d", false), "/w/e");
        assert_eq!(follow("/w/d/sub/", false), "/w/e/sub");
        assert_eq!(follow("/w/d/sub/../../d/x", false), "/w/e/x");
        assert_eq!(follow("/w/dd/x", false), "/w/dd/x");
        assert_eq!(follow("/w/e/x", false), "/w/e/x");
        assert_eq!(follow("/w/e/x", true), "/w/d/x");
        assert_eq!(follow("", false), "");
    }

    /// Descriptions opened separately on one file share the key calls at
    /// one offset are ordered by when they append (all write at the
    /// file's one end), and have a key each otherwise.
    #[test]
    fn appends_to_one_file_share_a_key_and_other_descriptions_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let (log, other) = (dir.path().join("log"), dir.path().join("other"));
        let open = |path: &std::path::Path, flags: i32| {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .append(flags & libc::O_APPEND != 0)
                .open(path)
                .unwrap();
            let mut e = FdEntry::real(file.into(), false, Vec::new(), false);
            e.set_status_flags(flags);
            e
        };
        let append = libc::O_WRONLY | libc::O_APPEND;
        let proc = Proc::initial(std::iter::empty(), b"/".to_vec(), 0o22, None);
        {
            let mut t = lock(&proc.fds);
            t.insert(3, open(&log, append));
            t.insert(4, open(&log, append));
            t.insert(5, open(&log, libc::O_WRONLY));
            t.insert(6, open(&log, libc::O_WRONLY));
            t.insert(7, open(&other, append));
            t.insert(8, open(&log, libc::O_WRONLY));
            t.get_mut(&8).unwrap().set_status_flags(append);
        }
        let ev = SyscallEvent {
            seq: 1,
            tgid: 1,
            tid: 1,
            nr: libc::SYS_write as u32,
            enter_ns: 10,
            args: [0; 6],
            exit: None,
            captures: Vec::new(),
        };
        let key = |fd| proc.description(&ev, fd).expect("a real file");
        assert_eq!(key(3), key(4));
        assert_eq!(key(3), key(8), "F_SETFL made it append");
        assert_ne!(key(5), key(6));
        assert_ne!(key(3), key(5));
        assert_ne!(key(3), key(7));
    }

    /// Captures of one shared mapping stored out of their time order: a
    /// page keeps the bytes of the newest capture stored into it.
    #[test]
    fn an_older_capture_of_a_mapping_does_not_overwrite_a_newer_one() {
        let len = 3 * 4096;
        // SAFETY: a fresh anonymous shared mapping, owned by `Mapping`.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(addr, libc::MAP_FAILED);
        let m = Mapping::new(addr as usize, len, true, Some(((1, 2), 8192)));
        let snapshots = Snapshots::default();
        let traced = 0x7000_0000u64;
        let page = |i: usize| {
            // SAFETY: inside the mapping made above.
            unsafe { std::slice::from_raw_parts((addr as *const u8).add(i * 4096), 4096) }.to_vec()
        };
        assert!(m
            .store(traced, traced, &vec![b'n'; len], 20, &snapshots)
            .unwrap()
            .is_some());
        // Older: nothing stored.
        assert!(m
            .store(traced, traced, &vec![b'o'; len], 10, &snapshots)
            .unwrap()
            .is_none());
        assert_eq!(page(1), vec![b'n'; 4096]);
        // Newer, the middle page only.
        let got = m.store(traced, traced + 4096, &vec![b'x'; 4096], 30, &snapshots);
        assert_eq!(got.unwrap(), Some((addr as usize + 4096, 4096)));
        assert_eq!((page(0)[0], page(1)[0], page(2)[0]), (b'n', b'x', b'n'));
        // Older than the middle page, newer than the others.
        m.store(traced, traced, &vec![b'y'; len], 25, &snapshots)
            .unwrap();
        assert_eq!((page(0)[0], page(1)[0], page(2)[0]), (b'y', b'x', b'y'));
    }

    /// A mapping whose file is shorter in replay than it was recorded (an
    /// earlier call went otherwise): storing past the file's end is an
    /// error, not a `SIGBUS` that kills the replayer.
    #[test]
    fn storing_past_the_end_of_a_mapped_file_is_an_error_not_a_crash() {
        use std::os::fd::AsRawFd;
        let len = 3 * 4096;
        let file = tempfile::tempfile().unwrap();
        file.set_len(4096).unwrap();
        // SAFETY: a fresh shared mapping of our own file, owned by `Mapping`.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        assert_ne!(addr, libc::MAP_FAILED);
        let m = Mapping::new(addr as usize, len, true, Some(((1, 3), 0)));
        let snapshots = Snapshots::default();
        let traced = 0x7000_0000u64;
        let got = m.store(traced, traced, &vec![b'z'; len], 1, &snapshots);
        assert_eq!(got.unwrap_err().raw_os_error(), Some(libc::EFAULT));
        // What lies inside the file was stored.
        let mut first = [0u8; 4];
        std::os::unix::fs::FileExt::read_exact_at(&file, &mut first, 0).unwrap();
        assert_eq!(&first, b"zzzz");
    }

    const KEEP: u64 = u32::MAX as u64;

    #[test]
    fn ids_change_as_the_kernel_changes_them() {
        // runuser: root drops groups, then sets gid and uid for good.
        let mut c = Creds::started(0, 0, 0, 0);
        c.set(Ids::Group(Which::One), &[104]);
        c.set(Ids::User(Which::One), &[101]);
        assert_eq!((c.uid, c.gid), ([101; 4], [104; 4]));
        // Unprivileged, setuid changes the effective (and fs) id only.
        let mut c = Creds::started(1000, 1000, 1000, 1000);
        c.uid[2] = 0;
        c.set(Ids::User(Which::One), &[0]);
        assert_eq!(c.uid, [1000, 0, 0, 0]);
        // setreuid(-1, e): the saved id follows a new effective id that
        // differs from the real one.
        let mut c = Creds::started(0, 0, 0, 0);
        c.set(Ids::User(Which::RealEffective), &[KEEP, 101]);
        assert_eq!(c.uid, [0, 101, 101, 101]);
        c.set(Ids::User(Which::RealEffective), &[KEEP, 0]);
        assert_eq!(c.uid, [0, 0, 101, 0]);
        // setresuid(-1, 5, -1); setfsuid only to an id the thread holds
        // unless privileged.
        let mut c = Creds::started(7, 7, 7, 7);
        c.set(Ids::User(Which::RealEffectiveSaved), &[KEEP, 5, KEEP]);
        assert_eq!(c.uid, [7, 5, 7, 5]);
        c.set(Ids::User(Which::FileSystem), &[9]);
        assert_eq!(c.uid[3], 5, "not its id: refused");
        c.set(Ids::User(Which::FileSystem), &[7]);
        assert_eq!(c.uid[3], 7);
        c.set(Ids::Group(Which::FileSystem), &[KEEP]);
        assert_eq!(c.gid, [7; 4], "-1 only asks");
    }

    /// A path from a removed directory: `.` is it, names inside are
    /// nothing, `..` climbs removed parents by descriptor and stops at the
    /// first that exists, going on by name from there.
    #[test]
    fn paths_from_a_removed_directory() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("w/e/f")).unwrap();
        let open = |p: &str| {
            Arc::new(OwnedFd::from(
                std::fs::File::open(tmp.path().join(p)).unwrap(),
            ))
        };
        let f = open("w/e/f");
        std::fs::remove_dir(tmp.path().join("w/e/f")).unwrap();
        std::fs::remove_dir(tmp.path().join("w/e")).unwrap();
        let name = b"/w/e/f".to_vec();
        let walk = |rel: &[u8]| in_removed(f.clone(), name.clone(), rel);
        assert!(matches!(walk(b"x"), Some(InRemoved::Inside)));
        assert!(matches!(walk(b"./x/.."), Some(InRemoved::Inside)));
        assert!(walk(b"").is_none(), "an empty path is no path");
        match walk(b"./") {
            Some(InRemoved::Itself(_, n)) => assert_eq!(n, b"/w/e/f"),
            _ => panic!("`./` is the removed directory"),
        }
        // `..` reaches e, removed too: held, by its name.
        match walk(b"..") {
            Some(InRemoved::Itself(d, n)) => {
                assert_eq!(n, b"/w/e");
                assert!(is_removed(d.as_fd()));
            }
            _ => panic!("`..` is the removed parent"),
        }
        assert!(matches!(walk(b"../y"), Some(InRemoved::Inside)));
        // Two levels up is w, which exists: by name from there on.
        match walk(b"../../out") {
            Some(InRemoved::Path(p)) => assert_eq!(p, b"/w/out"),
            _ => panic!("`../../out` is w/out"),
        }
        match walk(b"../../../../../../x") {
            Some(InRemoved::Path(p)) => assert_eq!(p, b"/w/../../../../x"),
            _ => panic!("climbing further goes by name, for Root to confine"),
        }
        match walk(b"../..") {
            Some(InRemoved::Path(p)) => assert_eq!(p, b"/w/."),
            _ => panic!("`../..` is w itself"),
        }
    }

    /// A removal finds, by identity, a working directory and a
    /// descriptor that reached the directory through a symbolic link, and
    /// marks both once the directory is gone; a process elsewhere is left.
    #[test]
    fn a_removal_finds_a_directory_entered_by_another_name() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("real/s")).unwrap();
        std::fs::create_dir(tmp.path().join("other")).unwrap();
        std::os::unix::fs::symlink("real", tmp.path().join("link")).unwrap();
        let root = super::Root::open(tmp.path()).unwrap();
        let inside = Proc::initial(std::iter::empty(), b"/link/s".to_vec(), 0o22, None);
        let elsewhere = Proc::initial(std::iter::empty(), b"/other".to_vec(), 0o22, None);
        let held = OwnedFd::from(std::fs::File::open(tmp.path().join("link/s")).unwrap());
        lock(&elsewhere.fds).insert(3, FdEntry::real(held, false, b"/link/s".to_vec(), false));
        let procs = std::sync::Mutex::new(
            [(1, inside.downgrade()), (2, elsewhere.downgrade())]
                .into_iter()
                .collect(),
        );
        let dir = OwnedFd::from(std::fs::File::open(tmp.path().join("real/s")).unwrap());
        let removal = super::removal(&procs, &root, b"/real/s", dir).expect("in use");
        std::fs::remove_dir(tmp.path().join("real/s")).unwrap();
        super::mark_removed(&procs, &removal);
        assert!(lock(&inside.fs).removed_cwd.is_some());
        assert!(lock(&elsewhere.fs).removed_cwd.is_none());
        assert!(lock(&elsewhere.fds)[&3].removed);
        // Nobody is in `real` itself (the removed `s` no longer counts).
        let dir = OwnedFd::from(std::fs::File::open(tmp.path().join("real")).unwrap());
        assert!(super::removal(&procs, &root, b"/real", dir).is_none());
    }

    #[test]
    fn names_compares_lexically_only_when_it_must() {
        assert!(names(b"/a/b", b"/a/b"));
        assert!(!names(b"/a/bc", b"/a/b"));
        assert!(names(b"/a/c/../b", b"/a/b"));
        assert!(!names(b"", b"/"));
        assert!(names(b"/a/...", b"/a/..."), "`...` is a name");
    }

    /// An `execve` gives root its bounding set back as its capabilities,
    /// whatever a `capset` had left, and another user none to emulate.
    #[test]
    fn exec_gives_root_its_bounding_set() {
        let mut c = Creds::started(0, 0, 0, 0);
        c.caps = Some(0b101);
        c.exec();
        assert_eq!(c.caps, None, "every capability, as the replayer has");
        c.bounding &= !(1 << 1);
        c.caps = Some(0);
        c.exec();
        assert_eq!(c.caps, Some(!(1 << 1)));
        let mut user = Creds::started(1000, 1000, 1000, 1000);
        user.bounding = 0;
        user.exec();
        assert_eq!(user.caps, None);
    }
}
