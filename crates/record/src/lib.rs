/*!
What every recorder back end shares: the target to record, the capture
policy, the summary a recording reports, its errors, the `/proc` reader
that describes a process when recording starts, and the batched hand-off
to a trace-writer thread.

The back ends (`reanimator-ptrace`, `reanimator-ebpf`) differ only in how
they see system calls; everything a user chooses or is told is defined
once, here.
*/

pub mod capture;
pub mod mappings;
mod process;
mod procfs;
mod sink;

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::ops::Range;
use std::os::fd::AsFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use process::{
    clear_stop_request, discard_stopped, exit_status, fork_stopped, held_messages, install_handler,
    keep_messages_out_of, read_mapped, read_mem, resident_runs, say, spawned_start, stop_requested,
    take_refused_reads, watch_stop_signals, ChildSetup, LeftBehind, SavedState,
};
pub use procfs::{cwd_of, exe_of, image, process_start, status, task_ids, Status};
use reanimator_catalogue as catalogue;
pub use reanimator_fsstate::SnapshotPolicy;
use reanimator_fsstate::{join, Need};
use reanimator_trace::{CaptureHead, ExitStatus};
pub use sink::{with_writer_thread, FlushClock, Sink};

/// Largest single capture, whatever the policy: a bound on the recorder's
/// memory. Larger buffers are captured up to here and marked truncated.
pub const CAPTURE_MAX: u64 = 256 << 20;

/// The sender's process id a signal's `siginfo` holds: `si_pid` of a
/// signal a process sent (`si_code` ≤ 0) or of `SIGCHLD`, else 0. The
/// kernel's own signals put other fields where `si_pid` lies (a fault's
/// address, `SIGSYS`'s call address), which would read as a process id.
pub fn signal_sender(signo: i32, code: i32, si_pid: u32) -> u32 {
    if code <= 0 || signo == libc::SIGCHLD {
        si_pid
    } else {
        0
    }
}

/// How much of each data buffer (read/write payloads, iovec elements) to
/// capture. Paths, strings and structures are always captured: replay
/// cannot run without them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataPolicy {
    /// Every byte (default).
    All,
    /// No data bytes: lengths only, marked `skipped`.
    None,
    /// At most this many bytes per buffer; the rest is marked `truncated`.
    Max(u64),
}

/// Captures of one system call, collected at entry and exit and written
/// with its record at exit. Reused across calls so steady state allocates
/// nothing.
#[derive(Default)]
pub struct Captures {
    /// Each capture's head and its range in `bytes`.
    pub heads: Vec<(CaptureHead, Range<usize>)>,
    /// The captured bytes, back to back.
    pub bytes: Vec<u8>,
}

/// Counts of captures that are not complete, for the final summary.
#[derive(Debug, Default, Clone, Copy)]
pub struct CaptureCounts {
    /// Captures cut short by `--data max=N` or the size bound.
    pub truncated: u64,
    /// Captures whose memory could not be read.
    pub unreadable: u64,
    /// Reads of a traced process's memory the kernel refused: the process
    /// made itself non-dumpable (`PR_SET_DUMPABLE`, as ssh-agent and
    /// gpg-agent do), and only a recorder with `CAP_SYS_PTRACE` may read
    /// such memory. Their captures are among the unreadable ones.
    pub refused: u64,
}

impl CaptureCounts {
    /// The counts of two recorder threads together.
    pub fn plus(self, other: CaptureCounts) -> CaptureCounts {
        CaptureCounts {
            truncated: self.truncated + other.truncated,
            unreadable: self.unreadable + other.unreadable,
            refused: self.refused + other.refused,
        }
    }
}

impl Captures {
    /// The bytes of argument `arg` read completely at entry (a path
    /// name, for the initial-state snapshot).
    pub fn entry_bytes(&self, arg: u8) -> Option<&[u8]> {
        self.heads.iter().find_map(|(h, r)| {
            (h.arg == arg
                && h.role == reanimator_trace::Role::Entry
                && h.status == reanimator_trace::CaptureStatus::Complete)
                .then(|| &self.bytes[r.clone()])
        })
    }

    /// Notes, on a successful clone's record, the id the recorder knows
    /// the created thread `child` by, when the call `returned` another
    /// (the creator's PID namespace's; [`reanimator_trace::CREATED_ID_ARG`]).
    pub fn note_created(&mut self, child: u32, returned: i64) {
        if returned <= 0 || returned as u32 == child {
            return;
        }
        let head = CaptureHead {
            arg: reanimator_trace::CREATED_ID_ARG,
            role: reanimator_trace::Role::Exit,
            elem: 0,
            status: reanimator_trace::CaptureStatus::Complete,
            len: 4,
        };
        let at = self.bytes.len();
        self.bytes.extend_from_slice(&child.to_le_bytes());
        self.heads.push((head, at..self.bytes.len()));
    }

    /// Empties the set, keeping its memory.
    pub fn clear(&mut self) {
        self.heads.clear();
        self.bytes.clear();
    }
}

/// What to record.
#[derive(Debug, Clone)]
pub enum Target {
    /// Start a command under the recorder.
    Spawn {
        /// The resolved executable.
        program: CString,
        /// Its arguments, `argv[0]` first.
        argv: Vec<CString>,
        /// Its environment.
        env: Vec<CString>,
    },
    /// Attach to running processes (all their threads, and their future
    /// children).
    Attach {
        /// Process ids.
        pids: Vec<i32>,
    },
}

impl Target {
    /// A command to start, looked up in `PATH` as a shell would, with this
    /// process's environment. Fails (before anything runs) when it cannot
    /// be found or executed.
    pub fn spawn(argv: &[OsString]) -> Result<Target, Error> {
        let first = argv.first().ok_or(Error::NoCommand)?;
        let program =
            find_program(Path::new(first)).ok_or_else(|| Error::NotFound(first.clone()))?;
        let cstr = |s: &[u8]| CString::new(s).map_err(|_| Error::Nul);
        Ok(Target::Spawn {
            program: cstr(program.as_os_str().as_bytes())?,
            argv: argv
                .iter()
                .map(|a| cstr(a.as_bytes()))
                .collect::<Result<_, _>>()?,
            env: std::env::vars_os()
                .map(|(k, v)| {
                    let mut kv = k.into_vec();
                    kv.push(b'=');
                    kv.extend(v.into_vec());
                    cstr(&kv)
                })
                .collect::<Result<_, _>>()?,
        })
    }
}

/// `cmd` itself when it has a slash, else the first executable match in `PATH`.
fn find_program(cmd: &Path) -> Option<PathBuf> {
    let executable = |p: &Path| {
        let c = CString::new(p.as_os_str().as_bytes()).ok()?;
        // SAFETY: access reads the NUL-terminated path.
        (p.is_file() && unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0)
            .then(|| p.to_path_buf())
    };
    if cmd.as_os_str().as_bytes().contains(&b'/') {
        return executable(cmd);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path).find_map(|dir| executable(&dir.join(cmd)))
}

/// What a recording did, for the final summary line.
#[derive(Debug, Default, Clone)]
pub struct RecordSummary {
    /// Processes followed.
    pub processes: u64,
    /// Threads followed (processes included).
    pub threads: u64,
    /// Calls that never returned (the task exited or was killed inside
    /// them, or was detached): recorded without an exit.
    pub unfinished: u64,
    /// Calls already under way when the recorder attached (`-p`): only
    /// their return was seen, so they are not in the trace.
    pub entered_before_attach: u64,
    /// eBPF: calls of a spawned command seen only returning, because its
    /// own seccomp filter refused them before the entry tracepoint; not
    /// in the trace but for a loss record.
    pub refused_unseen: u64,
    /// Captures that are not complete.
    pub captures: CaptureCounts,
    /// How the spawned command ended (`None` when attached).
    pub root_status: Option<ExitStatus>,
    /// Wall time of the recording.
    pub duration: Duration,
    /// Paths whose initial state was recorded (`--snapshot`).
    pub snapshot_paths: u64,
    /// Bytes of initial file contents recorded.
    pub snapshot_bytes: u64,
    /// Pre-existing files whose contents could not be read for the
    /// initial state.
    pub snapshot_unreadable: u64,
    /// Paths named relative to a directory that could not be named: their
    /// states are not in the trace.
    pub snapshot_unnamed: u64,
    /// Shared writable file mappings still mapped when their process
    /// exited or exec'd: stores through them after their last `msync` or
    /// `munmap` reached the file without the trace seeing them.
    pub mappings_at_exit: u64,
    /// eBPF: exits and execs whose mappings the kernel side could not list
    /// (the address space's lock was held, and a BPF program cannot wait
    /// for it). Kept apart from [`mappings_at_exit`](Self::mappings_at_exit)
    /// because most such processes held no shared writable mapping at all:
    /// stores through one they held may be missing, nothing more is known.
    /// A mapping the recorder saw made is counted in `mappings_at_exit` as
    /// well, since no capture of it was made.
    pub mappings_unlisted: u64,
    /// eBPF: times a process was stopped for the recorder to catch up
    /// (each can show the program an `EINTR`; see docs/ARCHITECTURE.md).
    pub backpressure_stops: u64,
    /// eBPF: wrappers (`su`, `runuser`, `sudo`, `script`) that stopped
    /// themselves because their child was stopped for back-pressure, and
    /// were continued with it rather than left stopped for good.
    pub reflex_stops: u64,
    /// eBPF: child exits whose SIGCHLD the kernel dropped because the
    /// parent still had one pending from a back-pressure stop or resume; a
    /// parent that reaps only on an exit's SIGCHLD (`script`) waits forever.
    pub masked_exits: u64,
    /// eBPF: buffers too large for the ring, read from the stopped thread.
    pub spills: u64,
    /// Threads of a spawned command still running when SIGTERM ended the
    /// recording early, killed then (their ends are in the trace).
    pub killed_at_stop: u64,
}

impl RecordSummary {
    /// Takes the snapshot counts once the final manifest is written.
    pub fn note_snapshots(&mut self, snap: &reanimator_fsstate::Snapshotter) {
        self.snapshot_paths = snap.paths;
        self.snapshot_bytes = snap.bytes;
        self.snapshot_unreadable = snap.unreadable;
        self.snapshot_unnamed = snap.unnamed;
    }
}

/// Why a recording failed.
#[derive(Debug)]
pub enum Error {
    /// No command was given.
    NoCommand,
    /// The command was not found or is not executable.
    NotFound(OsString),
    /// An argument or environment entry contains a NUL byte.
    Nul,
    /// The command could not be started.
    Spawn(io::Error),
    /// A process could not be attached to.
    Attach(i32, io::Error),
    /// A ptrace or wait request failed unexpectedly.
    Ptrace(io::Error),
    /// The trace could not be written.
    Trace(reanimator_trace::Error),
    /// The writer thread stopped (its own error is reported instead when known).
    WriterStopped,
    /// The kernel-level back end could not be set up or run.
    Bpf(String),
    /// Events were lost (the trace holds an explicit gap record); what the
    /// recording did otherwise, for its summary line.
    Lost(u64, Box<RecordSummary>),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NoCommand => write!(f, "no command given"),
            Error::NotFound(c) => write!(
                f,
                "{}: command not found or not executable",
                c.to_string_lossy()
            ),
            Error::Nul => write!(f, "an argument or environment variable contains a NUL byte"),
            Error::Spawn(e) => write!(f, "cannot start the command: {e}"),
            Error::Attach(pid, e) if e.raw_os_error() == Some(libc::EPERM) => {
                write!(f, "cannot attach to process {pid}: {e} (another tracer, or not yours; see ptrace(2))")
            }
            Error::Attach(pid, e) => write!(f, "cannot attach to process {pid}: {e}"),
            Error::Ptrace(e) => write!(f, "ptrace: {e}"),
            Error::Trace(e) => write!(f, "{e}"),
            Error::WriterStopped => write!(f, "the trace writer stopped unexpectedly"),
            Error::Bpf(e) => write!(f, "ebpf: {e}"),
            Error::Lost(n, _) => write!(f, "{n} events were lost (the trace marks the gap)"),
        }
    }
}

impl std::error::Error for Error {}

/// `CLOCK_MONOTONIC` in ns, the trace's time base (the kernel's
/// `bpf_ktime_get_ns` reads the same clock).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the local timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The regular files a process had open when the recorder began following
/// it that replay opens again ([`reanimator_fsstate::reopened_at_start`]):
/// a spawned command's files (`cmd > build.log`, `cmd < in`), any file
/// of a process attached to. It may write to them through no call that names
/// them, so both recorders record their state before it runs on: a later
/// call naming one (`ls -la`, `git status`) would otherwise record it
/// after the process had written to it, and replay, which writes through
/// such a descriptor again, would start from that.
pub fn files_open_at_start(start: &reanimator_trace::ProcessStart) -> Vec<Vec<u8>> {
    start
        .fds
        .iter()
        .filter_map(|fd| reanimator_fsstate::reopened_at_start(start.cause, fd))
        .filter(|path| std::fs::metadata(OsStr::from_bytes(path)).is_ok_and(|m| m.is_file()))
        .map(<[u8]>::to_vec)
        .collect()
}

/// The absolute paths a call names (joined with its working directory or
/// directory descriptor, read from /proc), each with what the call needs
/// of it: not the contents when it truncates the file for writing or
/// removes it, a directory's entries when it opens the path for reading
/// or removes it. Also how many
/// paths it names from a directory that could not be named (its working
/// directory, a directory descriptor, or after a `chroot` its root: the
/// process is gone), for the summary.
///
/// `path_of(arg)` gives the path argument `arg` as captured at entry.
pub fn touched_paths<'a>(
    pid: i32,
    row: &catalogue::Syscall,
    args: &[u64; 6],
    path_of: impl Fn(u8) -> Option<&'a [u8]>,
) -> (Vec<(Vec<u8>, Need)>, u64) {
    let params = row.params();
    let mut out = Vec::new();
    let mut unnamed = 0;
    for (i, p) in params.iter().enumerate() {
        let named = match p.kind {
            catalogue::Kind::Path => path_of(i as u8),
            // A socket file: `path_of` gives the address.
            _ if names_socket_file(row, i) => {
                path_of(i as u8).and_then(catalogue::unix_socket_path)
            }
            _ => continue,
        };
        let Some(path) = named else {
            continue;
        };
        if path.is_empty() {
            continue;
        }
        if row.effect == catalogue::Effect::Chroot {
            CHROOTED.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let mut rel = path;
        let base = if path[0] == b'/' {
            // After a chroot, absolute paths start at the process's root.
            if !CHROOTED.load(std::sync::atomic::Ordering::Relaxed) {
                b"/".to_vec()
            } else if let Some(root) = dir_name(&format!("/proc/{pid}/root")) {
                root
            } else {
                unnamed += 1;
                continue;
            }
        } else {
            let dirfd = (i > 0 && params[i - 1].kind == catalogue::Kind::DirFd)
                .then(|| args[i - 1] as i32)
                .filter(|&d| d != libc::AT_FDCWD);
            let link = match dirfd {
                Some(d) => format!("/proc/{pid}/fd/{d}"),
                None => format!("/proc/{pid}/cwd"),
            };
            match base_of(&link, path) {
                Some((b, r)) => {
                    rel = r;
                    b
                }
                None => {
                    unnamed += 1;
                    continue;
                }
            }
        };
        let need = match row.open_flags(args).map(|f| f as i32) {
            _ if row.in_groups(catalogue::Group::QUERY) => Need::Query,
            // Made there: it fails if the path exists.
            _ if row.effect == catalogue::Effect::Bind => Need::Metadata,
            _ if row.effect == catalogue::Effect::Move => Need::Tree,
            _ if row.effect == catalogue::Effect::Remove => Need::Removal,
            Some(f) if f & libc::O_TRUNC != 0 && f & libc::O_ACCMODE != libc::O_RDONLY => {
                Need::Metadata
            }
            Some(f) if f & libc::O_PATH == 0 && f & libc::O_ACCMODE == libc::O_RDONLY => {
                Need::Entries
            }
            _ => Need::Contents,
        };
        // An absolute path is taken from the root, not from `/`.
        let from_base = &rel[rel.iter().take_while(|&&b| b == b'/').count()..];
        out.push((join(&base, from_base), need));
    }
    (out, unnamed)
}

/// Whether parameter `i` of `row` is a socket address that makes a file
/// where it names one (`bind` of a Unix socket): the recorders read its
/// bytes for [`touched_paths`].
pub fn names_socket_file(row: &catalogue::Syscall, i: usize) -> bool {
    row.effect == catalogue::Effect::Bind
        && matches!(
            row.params().get(i).map(|p| p.kind),
            Some(catalogue::Kind::Struct {
                ty: catalogue::StructType::Sockaddr,
                ..
            })
        )
}

/// Set once a traced process calls `chroot`: from then on [`touched_paths`]
/// reads each process's root (`/proc/PID/root`) to name its absolute
/// paths, a read it spares every other recording.
static CHROOTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The name of the directory `link` (`/proc/PID/cwd` or `/proc/PID/fd/N`)
/// leads to, and what is left of `rel` (a relative path named from it) to
/// join with it. A directory removed while in use (`cd d; rmdir ../d;
/// ls >../out`) has no name (its link reads `.../d (deleted)`), but the
/// kernel still walks `..` from it to its parent: each leading `..` of
/// `rel` is taken there, so the path is named as the file the call
/// reached (before, `d (deleted)/../out`, which no manifest could find).
/// A path inside the removed directory keeps the name it had.
fn base_of<'r>(link: &str, rel: &'r [u8]) -> Option<(Vec<u8>, &'r [u8])> {
    use reanimator_fsstate::{first_component, host_name, is_removed, open_in};
    const DELETED: &[u8] = b" (deleted)";
    let name = dir_name(link)?;
    if !name.ends_with(DELETED) {
        return Some((name, rel));
    }
    let Ok(dir) = std::fs::File::open(link) else {
        return Some((name, rel));
    };
    let mut dir = std::os::fd::OwnedFd::from(dir);
    let mut rel = rel;
    loop {
        let name = host_name(dir.as_fd()).ok()?;
        if !is_removed(dir.as_fd()) {
            return Some((name, rel));
        }
        match first_component(rel) {
            Some((b"..", rest)) => {
                dir = open_in(dir.as_fd(), c"..", libc::O_PATH | libc::O_DIRECTORY).ok()?;
                rel = rest;
            }
            _ => return Some((name.strip_suffix(DELETED).unwrap_or(&name).to_vec(), rel)),
        }
    }
}

/// The absolute name of the directory a `/proc/PID/cwd` or
/// `/proc/PID/fd/N` link leads to, even past `PATH_MAX`, where the link
/// itself cannot say (a program deep in a tree).
pub(crate) fn dir_name(link: &str) -> Option<Vec<u8>> {
    match std::fs::read_link(link) {
        Ok(name) => Some(name.into_os_string().into_encoded_bytes()),
        Err(e) if e.raw_os_error() == Some(libc::ENAMETOOLONG) => {
            let dir = std::fs::File::open(link).ok()?;
            reanimator_fsstate::host_name(dir.as_fd()).ok()
        }
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{signal_sender, Captures};
    use reanimator_trace::{CaptureStatus, Role, CREATED_ID_ARG};

    /// A process id is kept only where `siginfo` holds one.
    #[test]
    fn a_signal_sender_is_a_process_only_when_one_sent_it() {
        assert_eq!(signal_sender(libc::SIGTERM, 0, 42), 42, "kill(2)");
        assert_eq!(signal_sender(libc::SIGUSR1, -6, 42), 42, "tgkill(2)");
        assert_eq!(signal_sender(libc::SIGCHLD, 1, 42), 42, "a child exited");
        assert_eq!(
            signal_sender(libc::SIGSYS, 1, 0x5a5a),
            0,
            "seccomp's call address"
        );
        assert_eq!(
            signal_sender(libc::SIGSEGV, 1, 0x1000),
            0,
            "a fault's address"
        );
    }

    /// The created thread's id is noted only when the call returned
    /// another.
    #[test]
    fn a_created_id_is_noted_only_when_it_differs() {
        let mut caps = Captures::default();
        caps.note_created(31239, 31239);
        caps.note_created(31239, -1);
        assert!(caps.heads.is_empty());
        caps.note_created(31239, 2);
        let (head, range) = &caps.heads[0];
        assert_eq!(
            (head.arg, head.role, head.status, head.len),
            (CREATED_ID_ARG, Role::Exit, CaptureStatus::Complete, 4)
        );
        assert_eq!(caps.bytes[range.clone()], 31239u32.to_le_bytes());
    }
}
