//! What `/proc` says about a process when the recorder starts following
//! it: the state replay needs to start it in the same place (ids, umask,
//! cwd, argv, environment, open descriptors).

use std::fs;
use std::os::unix::ffi::OsStrExt;

use reanimator_trace::{FdInfo, ProcessStart, StartCause};

/// Ids, masks and pending signals from `/proc/TID/status`.
#[derive(Debug, Default, Clone)]
pub struct Status {
    /// The process the task belongs to.
    pub tgid: u32,
    /// Its parent process (a reaper's after reparenting).
    pub ppid: u32,
    /// Real user id.
    pub uid: u32,
    /// Effective user id, the one permission checks use.
    pub euid: u32,
    /// Real group id.
    pub gid: u32,
    /// Effective group id.
    pub egid: u32,
    /// The file mode creation mask.
    pub umask: u32,
    /// Supplementary groups.
    pub groups: Vec<u32>,
    /// Signals pending for the whole process (`ShdPnd`), bit N-1 for
    /// signal N: where a child's SIGCHLD waits.
    pub shared_pending: u64,
    /// Signals with a handler (`SigCgt`), bit N-1 for signal N.
    pub caught: u64,
    /// Signals the task blocks (`SigBlk`), bit N-1 for signal N.
    pub blocked: u64,
    /// Threads in the process.
    pub threads: u32,
}

/// Reads `/proc/TID/status`; `None` when the task is gone.
pub fn status(tid: i32) -> Option<Status> {
    let text = fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let mut s = Status::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let mut fields = value.split_whitespace();
        let mut next = || {
            fields
                .next()
                .and_then(|f| f.parse::<u32>().ok())
                .unwrap_or(0)
        };
        // A signal set: hex, bit N-1 for signal N.
        let signal_set = || u64::from_str_radix(value.trim(), 16).unwrap_or(0);
        match key {
            "Tgid" => s.tgid = next(),
            "PPid" => s.ppid = next(),
            "Threads" => s.threads = next(),
            "Uid" => (s.uid, s.euid) = (next(), next()),
            "Gid" => (s.gid, s.egid) = (next(), next()),
            "ShdPnd" => s.shared_pending = signal_set(),
            "SigBlk" => s.blocked = signal_set(),
            "SigCgt" => s.caught = signal_set(),
            "Umask" => s.umask = u32::from_str_radix(value.trim(), 8).unwrap_or(0),
            "Groups" => {
                s.groups = value
                    .split_whitespace()
                    .filter_map(|g| g.parse().ok())
                    .collect()
            }
            _ => {}
        }
    }
    (s.tgid != 0).then_some(s)
}

/// The executable and arguments process `pid` runs now (`/proc`): what a
/// child it forks starts with, until it execs.
pub fn image(pid: u32) -> (Vec<u8>, Vec<Vec<u8>>) {
    (exe_of(pid), nul_list(format!("/proc/{pid}/cmdline")))
}

/// The executable task `tid` runs (empty once it is gone): a created
/// thread's start record names its process's image, as ptrace reads it.
pub fn exe_of(tid: u32) -> Vec<u8> {
    link(format!("/proc/{tid}/exe"))
}

/// The working directory of task `tid`, `None` once it is gone.
pub fn cwd_of(tid: u32) -> Option<Vec<u8>> {
    crate::dir_name(&format!("/proc/{tid}/cwd"))
}

fn link(path: String) -> Vec<u8> {
    fs::read_link(path)
        .map(|p| p.as_os_str().as_bytes().to_vec())
        .unwrap_or_default()
}

fn nul_list(path: String) -> Vec<Vec<u8>> {
    let bytes = fs::read(path).unwrap_or_default();
    bytes
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// The open descriptors of `pid`, with flags, offsets and targets.
fn fds(pid: i32) -> Vec<FdInfo> {
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    let mut out: Vec<FdInfo> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .map(|fd| {
            let info = fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).unwrap_or_default();
            let field = |name: &str| {
                info.lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(str::trim)
            };
            FdInfo {
                fd,
                flags: field("flags:")
                    .and_then(|v| u32::from_str_radix(v, 8).ok())
                    .unwrap_or(0),
                offset: field("pos:").and_then(|v| v.parse().ok()).unwrap_or(0),
                target: link(format!("/proc/{pid}/fd/{fd}")),
                same_as: None,
            }
        })
        .collect();
    out.sort_by_key(|f| f.fd);
    note_shared_descriptions(pid, &mut out);
    out
}

/// Marks each descriptor that shares its open file description with a
/// lower one (`> log 2>&1`), which replay must then share too, or the
/// two would write over each other at separate offsets. Only descriptors
/// on the same target can share one, so only those are compared
/// (`kcmp`); where the kernel cannot compare, none is marked.
fn note_shared_descriptions(pid: i32, fds: &mut [FdInfo]) {
    for i in 1..fds.len() {
        let same_as = fds[..i]
            .iter()
            .filter(|f| f.same_as.is_none() && f.target == fds[i].target)
            .find(|f| same_description(pid, f.fd, fds[i].fd))
            .map(|f| f.fd);
        fds[i].same_as = same_as;
    }
}

/// True when descriptors `a` and `b` of `pid` are one open file
/// description (`kcmp(KCMP_FILE)`).
fn same_description(pid: i32, a: i32, b: i32) -> bool {
    const KCMP_FILE: libc::c_long = 0;
    // SAFETY: kcmp only compares kernel objects; it reads no memory of ours.
    let r = unsafe {
        libc::syscall(
            libc::SYS_kcmp,
            libc::c_long::from(pid),
            libc::c_long::from(pid),
            KCMP_FILE,
            libc::c_long::from(a),
            libc::c_long::from(b),
        )
    };
    r == 0
}

/// The thread ids of process `pid`, for attaching to all of them.
pub fn task_ids(pid: i32) -> std::io::Result<Vec<i32>> {
    Ok(std::fs::read_dir(format!("/proc/{pid}/task"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect())
}

/// A full start record for `tid` from `/proc`. Spawned processes override
/// argv, environment and executable with what is about to be executed.
pub fn process_start(tid: i32, cause: StartCause, seq: u64, time_ns: u64) -> Option<ProcessStart> {
    let s = status(tid)?;
    let whole_process = cause != StartCause::Created || s.tgid == tid as u32;
    Some(ProcessStart {
        seq,
        time_ns,
        tgid: s.tgid,
        tid: tid as u32,
        ppid: s.ppid,
        cause,
        uid: s.uid,
        gid: s.gid,
        euid: s.euid,
        egid: s.egid,
        umask: s.umask,
        cwd: cwd_of(tid as u32).unwrap_or_default(),
        exe: exe_of(tid as u32),
        argv: if whole_process {
            nul_list(format!("/proc/{tid}/cmdline"))
        } else {
            Vec::new()
        },
        env: if cause == StartCause::Created {
            Vec::new()
        } else {
            nul_list(format!("/proc/{tid}/environ"))
        },
        // Created processes inherit (or share) their parent's table, which
        // replay derives from the trace; the others start with what /proc shows.
        fds: if cause == StartCause::Created {
            Vec::new()
        } else {
            fds(tid)
        },
        // Created processes have their parent's, as replay follows them.
        groups: (cause != StartCause::Created).then_some(s.groups),
    })
}
