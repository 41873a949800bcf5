//! What a trace holds: system call events, process lifecycle records,
//! signal deliveries and explicit capture losses.

pub use bytes::Bytes;

/// One record of a trace, in the order the recorder completed it.
///
/// Records are stored in completion order; [`Record::seq`] gives capture
/// order (a clone's id is reserved at its entry, so it sorts before every
/// event of the child even though the clone completes later).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A system call.
    Syscall(SyscallEvent),
    /// A process or thread the recorder started watching.
    ProcessStart(ProcessStart),
    /// A process or thread that ended.
    ProcessExit(ProcessExit),
    /// A signal delivered to a traced thread.
    Signal(SignalDelivery),
    /// Events the recorder could not capture: an explicit gap.
    Loss(Loss),
    /// What a path looked like: before the trace first touched it (the
    /// initial state replay prepares) or when recording ended (the manifest
    /// replay checks).
    PathState(PathState),
    /// A piece of a path's contents before the trace first touched it.
    PathData(PathData),
}

impl Record {
    /// The global sequence id.
    pub fn seq(&self) -> u64 {
        match self {
            Record::Syscall(e) => e.seq,
            Record::ProcessStart(p) => p.seq,
            Record::ProcessExit(p) => p.seq,
            Record::Signal(s) => s.seq,
            Record::Loss(l) => l.seq,
            Record::PathState(p) => p.seq,
            Record::PathData(d) => d.seq,
        }
    }

    /// The time of the record (entry time for system calls), in ns of
    /// `CLOCK_MONOTONIC`.
    pub fn time_ns(&self) -> u64 {
        match self {
            Record::Syscall(e) => e.enter_ns,
            Record::ProcessStart(p) => p.time_ns,
            Record::ProcessExit(p) => p.time_ns,
            Record::Signal(s) => s.time_ns,
            Record::Loss(l) => l.time_ns,
            Record::PathState(p) => p.time_ns,
            Record::PathData(d) => d.time_ns,
        }
    }

    /// The thread the record belongs to (0 for trace-wide losses).
    pub fn tid(&self) -> u32 {
        match self {
            Record::Syscall(e) => e.tid,
            Record::ProcessStart(p) => p.tid,
            Record::ProcessExit(p) => p.tid,
            Record::Signal(s) => s.tid,
            Record::Loss(l) => l.tid,
            Record::PathState(_) | Record::PathData(_) => 0,
        }
    }

    /// The process (thread group) the record belongs to.
    pub fn tgid(&self) -> u32 {
        match self {
            Record::Syscall(e) => e.tgid,
            Record::ProcessStart(p) => p.tgid,
            Record::ProcessExit(p) => p.tgid,
            Record::Signal(s) => s.tgid,
            Record::Loss(l) => l.tgid,
            Record::PathState(_) | Record::PathData(_) => 0,
        }
    }
}

/// One system call: entry, exit and every byte of user memory it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyscallEvent {
    /// Global sequence id, assigned at entry.
    pub seq: u64,
    /// Process id (thread group id).
    pub tgid: u32,
    /// Thread id.
    pub tid: u32,
    /// x86_64 syscall number.
    pub nr: u32,
    /// Entry time, ns of `CLOCK_MONOTONIC`.
    pub enter_ns: u64,
    /// The six raw argument words.
    pub args: [u64; 6],
    /// The exit, or `None` when the call never returned (exit, a successful
    /// execve seen only at entry, a thread killed inside the call).
    pub exit: Option<SyscallExit>,
    /// User memory read at entry or exit.
    pub captures: Vec<Capture>,
}

/// How a system call returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyscallExit {
    /// Exit time, ns of `CLOCK_MONOTONIC`.
    pub exit_ns: u64,
    /// The full 64-bit return value as the kernel produced it (`-errno` on
    /// error).
    pub ret: i64,
    /// True when the kernel reported an error; the errno is `-ret`.
    pub is_error: bool,
}

impl SyscallExit {
    /// The errno, or 0 on success. Values 512..=516 are the kernel's
    /// restart codes (`ERESTARTSYS` ...), meaning the call was interrupted
    /// and restarted.
    pub fn errno(&self) -> u32 {
        if self.is_error {
            self.ret.unsigned_abs() as u32
        } else {
            0
        }
    }
}

/// The argument index of the capture, read at exit, that names the
/// thread a successful `clone`, `fork`, `vfork` or `clone3` made by the id
/// its start record has, when the call returned another: the creator ran
/// in a PID namespace of its own (`unshare -p -f`, a container) and got
/// the id the new thread has there. Four bytes, little-endian. It lies
/// past the six argument registers, so no call's own captures use it.
pub const CREATED_ID_ARG: u8 = 6;

/// The element index, within a `sendmsg` or `recvmsg` message's captures
/// (its iovec elements are numbered from 0), of its control data
/// (`msg_control`): at entry for `sendmsg`, at exit, as the kernel filled
/// it, for `recvmsg`. Descriptors passed with `SCM_RIGHTS` are in it.
pub const CONTROL_ELEM: u32 = u32::MAX;

/// Most control data captured per message: ancillary data larger than
/// this is cut (`truncated`), though no real program passes so much.
pub const CONTROL_MAX: u64 = 4096;

impl SyscallEvent {
    /// The thread a successful clone made, by its start record's id (see
    /// [`CREATED_ID_ARG`]); `None` if the call failed or made none.
    pub fn created_id(&self) -> Option<u32> {
        let ret = self.exit.filter(|x| !x.is_error && x.ret > 0)?.ret;
        let noted = self
            .capture(CREATED_ID_ARG, Role::Exit)
            .and_then(|c| c.data.as_deref()?.get(..4)?.try_into().ok())
            .map(u32::from_le_bytes);
        Some(noted.unwrap_or(ret as u32))
    }

    /// Latency of the call in ns, if it returned.
    pub fn duration_ns(&self) -> Option<u64> {
        self.exit.map(|x| x.exit_ns.saturating_sub(self.enter_ns))
    }

    /// The capture for argument `arg` taken at `role`, element 0.
    pub fn capture(&self, arg: u8, role: Role) -> Option<&Capture> {
        self.capture_elem(arg, role, 0)
    }

    /// The capture for argument `arg` taken at `role`, element `elem`
    /// (an iovec element, a string of an array, an asynchronous request's
    /// part).
    pub fn capture_elem(&self, arg: u8, role: Role, elem: u32) -> Option<&Capture> {
        self.captures
            .iter()
            .find(|c| c.arg == arg && c.role == role && c.elem == elem)
    }
}

/// When user memory was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// At syscall entry: what the program handed to the kernel.
    Entry,
    /// At syscall exit: what the kernel handed back.
    Exit,
}

/// Whether a capture holds every byte its size rule asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureStatus {
    /// Every byte was captured.
    Complete,
    /// Cut short by the capture policy (`--data max=N`).
    Truncated,
    /// The memory could not be read (unmapped or not resident).
    Unreadable,
    /// Not captured by policy (`--data none`).
    Skipped,
    /// Captured, but the data was lost when a damaged trace was recovered.
    Lost,
}

impl CaptureStatus {
    pub(crate) fn code(self) -> u8 {
        match self {
            CaptureStatus::Complete => 0,
            CaptureStatus::Truncated => 1,
            CaptureStatus::Unreadable => 2,
            CaptureStatus::Skipped => 3,
            CaptureStatus::Lost => 4,
        }
    }

    pub(crate) fn from_code(c: u8) -> Option<Self> {
        Some(match c {
            0 => CaptureStatus::Complete,
            1 => CaptureStatus::Truncated,
            2 => CaptureStatus::Unreadable,
            3 => CaptureStatus::Skipped,
            4 => CaptureStatus::Lost,
            _ => return None,
        })
    }

    /// A short name for text output.
    pub fn name(self) -> &'static str {
        match self {
            CaptureStatus::Complete => "complete",
            CaptureStatus::Truncated => "truncated",
            CaptureStatus::Unreadable => "unreadable",
            CaptureStatus::Skipped => "skipped",
            CaptureStatus::Lost => "lost",
        }
    }
}

/// User memory named by one argument: a path, a string, a data buffer, a
/// struct, or one element of an iovec or string array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// Index of the argument (0..6) it belongs to.
    pub arg: u8,
    /// When it was read.
    pub role: Role,
    /// Element index within an iovec or string array; 0 otherwise.
    pub elem: u32,
    /// Whether every byte is here.
    pub status: CaptureStatus,
    /// The length the size rule asked for (the real length).
    pub len: u64,
    /// How many bytes were captured (`<= len`).
    pub captured: u64,
    /// The captured bytes; `None` when the reader was opened without data
    /// and the bytes live in a buffer frame, or when they were not captured.
    /// A reader hands out slices of the blob frame they were stored in.
    pub data: Option<Bytes>,
}

/// A process or thread the recorder began to follow, with the state replay
/// needs to start it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessStart {
    /// Global sequence id.
    pub seq: u64,
    /// When the recorder began following it, ns of `CLOCK_MONOTONIC`.
    pub time_ns: u64,
    /// Process id.
    pub tgid: u32,
    /// Thread id.
    pub tid: u32,
    /// Parent process id.
    pub ppid: u32,
    /// How it came under the recorder.
    pub cause: StartCause,
    /// Real user id.
    pub uid: u32,
    /// Real group id.
    pub gid: u32,
    /// Effective user id.
    pub euid: u32,
    /// Effective group id.
    pub egid: u32,
    /// File mode creation mask.
    pub umask: u32,
    /// Working directory.
    pub cwd: Vec<u8>,
    /// Executable path.
    pub exe: Vec<u8>,
    /// Arguments.
    pub argv: Vec<Vec<u8>>,
    /// Environment (`NAME=value`).
    pub env: Vec<Vec<u8>>,
    /// Open descriptors.
    pub fds: Vec<FdInfo>,
    /// Supplementary group ids, which permission checks use along with
    /// `egid`; `None` where the trace does not say (a created process has
    /// its parent's; format 1.2 and older hold none).
    pub groups: Option<Vec<u32>>,
}

/// How a process came under the recorder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartCause {
    /// Started by the recorder (`record -- CMD`).
    #[default]
    Spawned,
    /// Already running; attached to (`record -p PID`).
    Attached,
    /// Created by a traced process (fork, vfork, clone).
    Created,
}

/// One open descriptor of a process when the recorder began following it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FdInfo {
    /// The descriptor number.
    pub fd: i32,
    /// Its open flags (`O_*`, from `/proc/PID/fdinfo`).
    pub flags: u32,
    /// Its file offset.
    pub offset: u64,
    /// What it points to (`/proc/PID/fd/N` link text: a path, `pipe:[N]`,
    /// `socket:[N]`, ...).
    pub target: Vec<u8>,
    /// The lowest descriptor of the same start record that shares this
    /// one's open file description, and so its offset (`> log 2>&1`: 2
    /// is the same as 1), from format 1.5; `None` when it has its own or
    /// the trace does not say.
    pub same_as: Option<i32>,
}

/// A process or thread that ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessExit {
    /// Global sequence id.
    pub seq: u64,
    /// When it ended, ns of `CLOCK_MONOTONIC`.
    pub time_ns: u64,
    /// Process id.
    pub tgid: u32,
    /// Thread id.
    pub tid: u32,
    /// How it ended.
    pub status: ExitStatus,
}

/// How a process or thread ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// It called exit with this status.
    Exited(i32),
    /// A signal killed it.
    Killed {
        /// The signal.
        signal: i32,
        /// Whether it dumped core.
        core: bool,
    },
    /// The recorder stopped following it (detach) before it ended.
    Detached,
    /// The thread called `execve` from outside the leader: it goes on
    /// running the new program under the process id `by`, and this id is
    /// gone.
    Superseded {
        /// The id it continues under.
        by: u32,
    },
}

/// A signal delivered to a traced thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalDelivery {
    /// Global sequence id.
    pub seq: u64,
    /// Delivery time, ns of `CLOCK_MONOTONIC`.
    pub time_ns: u64,
    /// Process id.
    pub tgid: u32,
    /// Thread id.
    pub tid: u32,
    /// The signal number.
    pub signo: i32,
    /// `si_code`.
    pub code: i32,
    /// `si_pid` of the sender (0 when the kernel sent it).
    pub sender: u32,
}

/// Events the recorder knows it did not capture. Never silent: every loss
/// is a record, and readers count them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loss {
    /// Global sequence id (of the first missing event, when known).
    pub seq: u64,
    /// When the loss was detected, ns of `CLOCK_MONOTONIC`.
    pub time_ns: u64,
    /// Process id, or 0 when the loss is not tied to one process.
    pub tgid: u32,
    /// Thread id, or 0.
    pub tid: u32,
    /// How many events were lost (0 when unknown).
    pub count: u64,
    /// Why, in words.
    pub reason: String,
}

/// When a [`PathState`] was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathPhase {
    /// Just before the first system call that named the path: the state
    /// replay recreates before it starts.
    Before,
    /// When recording ended: the manifest replay compares its result with.
    After,
}

/// What kind of object a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Nothing: the path did not exist.
    Absent,
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// A symbolic link.
    Symlink,
    /// A named pipe.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
}

impl FileKind {
    pub(crate) fn code(self) -> u8 {
        self as u8
    }

    pub(crate) fn from_code(c: u8) -> Option<Self> {
        use FileKind::*;
        [
            Absent,
            Regular,
            Directory,
            Symlink,
            Fifo,
            Socket,
            CharDevice,
            BlockDevice,
        ]
        .get(usize::from(c))
        .copied()
    }

    /// A short name for text output.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Absent => "absent",
            FileKind::Regular => "file",
            FileKind::Directory => "dir",
            FileKind::Symlink => "symlink",
            FileKind::Fifo => "fifo",
            FileKind::Socket => "socket",
            FileKind::CharDevice => "chardev",
            FileKind::BlockDevice => "blockdev",
        }
    }
}

/// Whether the contents of a [`PathPhase::Before`] regular file follow in
/// [`PathData`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentNote {
    /// Not a regular file, or an `After` state: nothing to say.
    None,
    /// Every byte follows in `PathData` records.
    Complete,
    /// Not captured by policy (`--snapshot meta`, or the first call
    /// truncated the file anyway).
    Skipped,
    /// The file could not be read.
    Unreadable,
}

impl ContentNote {
    pub(crate) fn code(self) -> u8 {
        self as u8
    }

    pub(crate) fn from_code(c: u8) -> Option<Self> {
        use ContentNote::*;
        [None, Complete, Skipped, Unreadable]
            .get(usize::from(c))
            .copied()
    }
}

/// The state of one path on the recording machine, as `lstat` and friends
/// saw it. Times are deliberately absent: replay never compares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathState {
    /// Global sequence id (`Before` states sort before the call that
    /// touched the path).
    pub seq: u64,
    /// When it was taken, ns of `CLOCK_MONOTONIC`.
    pub time_ns: u64,
    /// Before the first touch, or at the end of recording.
    pub phase: PathPhase,
    /// The absolute path, as the trace's calls name it (joined with the
    /// working or directory descriptor's path, `.` removed, `..` and
    /// symbolic links left for resolution).
    pub path: Vec<u8>,
    /// What it is.
    pub kind: FileKind,
    /// Permission bits (`st_mode & 07777`).
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Size in bytes (`st_size`).
    pub size: u64,
    /// The target of a symbolic link.
    pub target: Vec<u8>,
    /// Extended attributes, sorted by name.
    pub xattrs: Vec<(Vec<u8>, Vec<u8>)>,
    /// The sum of a regular file's contents (`After` states).
    pub hash: Option<ContentHash>,
    /// Whether `PathData` records with the contents follow (`Before`).
    pub content: ContentNote,
    /// Hard links (format 1.4): before-states of regular files with the
    /// same non-zero number are one file under several names, so replay
    /// makes them one file again and a write through one name shows
    /// through the others. 0: not known to have other names.
    pub link: u64,
}

/// The sum of a file's contents in an after-state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentHash {
    /// xxh3-128 of the whole contents (format 1.1).
    Whole(u128),
    /// xxh3-128 of the little-endian xxh3-128s of each [`HASH_PIECE`]-byte
    /// piece (format 1.2 on): the pieces of a large file are summed on
    /// every CPU at once, so checking the final state of a 400 MB file
    /// takes half the time on two.
    Pieces(u128),
}

/// The piece size of [`ContentHash::Pieces`].
pub const HASH_PIECE: u64 = 4 << 20;

/// Up to 1 MiB of a file's contents as they were before the trace first
/// touched it. Replay writes `data` at `offset` of `path` while preparing
/// its root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathData {
    /// Global sequence id (that of its [`PathState`]).
    pub seq: u64,
    /// When it was read, ns of `CLOCK_MONOTONIC`.
    pub time_ns: u64,
    /// The file.
    pub path: Vec<u8>,
    /// Where the piece starts in the file.
    pub offset: u64,
    /// The bytes, stored like any captured buffer (`arg` 0, role entry).
    pub data: Capture,
}
