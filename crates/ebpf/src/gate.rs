//! The path gate. Replay needs each path's state from before the trace
//! first touched it, but a BPF program cannot wait for the recorder: by
//! the time the recorder reads a call from the ring, the call has already
//! changed the file. So a spawned command runs under a seccomp filter that
//! holds each call that may change a path it names (the catalogue's `Path`
//! parameters) until the recorder has recorded that path's state, then
//! lets the call continue unchanged (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`).
//! seccomp runs before the `sys_enter` tracepoint, so those records also
//! take smaller sequence ids than the call. Queries pass and are recorded
//! late ([`Rule`]).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use reanimator_catalogue::{all, Effect, FlagSet, Group, Kind, Syscall};

/// Where the child puts its listener for the recorder to take.
const GATE_FD: RawFd = 1000;
const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
/// `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP` of linux/seccomp.h (not in libc).
const SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: u64 = 1;

/// The classic-BPF seccomp filter: `USER_NOTIF` for calls the gate holds
/// ([`Rule`]), `ALLOW` for everything else.
pub(crate) struct Filter(Vec<libc::sock_filter>);

impl Filter {
    /// Holds what the path gate holds: every call that may change a path,
    /// and the calls of [`KEEPS_LATE_PATHS_RESOLVABLE`].
    pub(crate) fn new() -> Filter {
        Filter::holding(|_| true)
    }

    /// Holds only `exit` and `exit_group`, with no initial state to
    /// record: so that a parent still to read a back-pressure stop's
    /// SIGCHLD hears of its child's exit (`Recorder::hold_exit`).
    pub(crate) fn exits() -> Filter {
        Filter::holding(|nr| is_exit(nr as i64))
    }

    fn holding(wanted: impl Fn(u32) -> bool) -> Filter {
        let stmt = |code: u32, k: u32| libc::sock_filter {
            code: code as u16,
            jt: 0,
            jf: 0,
            k,
        };
        let jump = |op: u32, k: u32, jt: u8, jf: u8| libc::sock_filter {
            code: (libc::BPF_JMP | op | libc::BPF_K) as u16,
            jt,
            jf,
            k,
        };
        let load = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
        let ret = libc::BPF_RET | libc::BPF_K;
        let allow = stmt(ret, libc::SECCOMP_RET_ALLOW);
        let hold = stmt(ret, libc::SECCOMP_RET_USER_NOTIF);
        let mut calls: Vec<(u32, Rule)> = all()
            .iter()
            .filter(|s| wanted(s.nr))
            .filter_map(|s| Some((s.nr, Rule::of(s)?)))
            .collect();
        calls.sort_unstable_by_key(|&(nr, _)| nr);
        // seccomp_data: nr at offset 0, arch at 4, args from 16 (8 bytes
        // each, low word first).
        let mut prog = vec![
            stmt(load, 4),
            jump(libc::BPF_JEQ, AUDIT_ARCH_X86_64, 1, 0),
            allow,
            stmt(load, 0),
        ];
        let arg = |i: usize| stmt(load, 16 + 8 * i as u32);
        for (nr, rule) in calls {
            // Tests that let the call through, then `hold`.
            let mut block = Vec::new();
            if rule.query || rule.open_flags.is_some() {
                // It only reads (a query, or an open with no flag that
                // writes) ...
                let mut reads = Vec::new();
                if let Some(f) = rule.open_flags {
                    reads.push(arg(f));
                    reads.push(jump(libc::BPF_JSET, OPEN_WRITES, 1, 0));
                }
                reads.push(allow);
                // ... at AT_FDCWD.
                if let Some(d) = rule.dirfd {
                    block.push(arg(d));
                    block.push(jump(
                        libc::BPF_JEQ,
                        libc::AT_FDCWD as u32,
                        0,
                        reads.len() as u8,
                    ));
                }
                block.extend(reads);
            }
            if let Some(f) = rule.empty_path {
                block.push(arg(f));
                block.push(jump(libc::BPF_JSET, libc::AT_EMPTY_PATH as u32, 0, 1));
                block.push(allow);
            }
            block.push(hold);
            prog.push(jump(libc::BPF_JEQ, nr, 0, block.len() as u8));
            prog.extend(block);
        }
        prog.push(allow);
        Filter(prog)
    }

    /// Installs the filter in the calling process and leaves its listener
    /// at `GATE_FD`. Only async-signal-safe calls: runs in a forked child.
    pub(crate) fn install(&self) -> bool {
        let prog = libc::sock_fprog {
            len: self.0.len() as u16,
            filter: self.0.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: seccomp reads the program we own; dup3/close act on the
        // returned descriptor and on `GATE_FD` only.
        unsafe {
            let fd = libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
                &prog as *const libc::sock_fprog,
            );
            if fd < 0 {
                // Nothing the recorder would take for a listener: a
                // descriptor the command inherited there goes, as it
                // would have under the listener.
                libc::close(GATE_FD);
                return false;
            }
            let ok = libc::dup3(fd as i32, GATE_FD, libc::O_CLOEXEC) == GATE_FD;
            libc::close(fd as i32);
            ok
        }
    }
}

/// Which calls the gate holds and which it lets through, to be recorded
/// late: when the call reaches the recorder through the ring, its paths'
/// state is recorded then ([`late_paths`]).
///
/// A query (the catalogue's `QUERY` group: stat, access, readlink,
/// getxattr, ...) changes nothing, nor does an `open` or `openat` with no
/// flag that writes, creates or truncates (a compiler's headers, the
/// loader's libraries), so the state of what it names is the same after
/// it as before, and it passes when its path can still be
/// resolved late: it has no directory descriptor, or it is `AT_FDCWD`
/// (relative paths are resolved against the process's working directory,
/// which only calls the gate holds can change, or end: `chdir`, `fchdir`,
/// `exit`, `exit_group`; before releasing one, the recorder drains the
/// ring, so earlier late paths are resolved first). A gcc
/// build makes about 25,000 path calls, 18,000 of them queries (its
/// realpath alone is 12,700 `readlink`s), each a round trip to the
/// recorder when held.
///
/// A stat with `AT_EMPTY_PATH` also passes, whatever its descriptor: with
/// an empty path (glibc's `fstat`) it names no path, yet it is among the
/// commonest calls. A non-empty path with that flag is resolved late
/// against the descriptor, which the program could have closed by then
/// (`crates/ebpf/tests/gate.rs`).
///
/// Only another process changing a path between a query and the recorder
/// reading it makes that state late; a write by the same thread needs a
/// call the gate holds first (an `open` for writing, a `rename`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rule {
    /// The call is a query.
    query: bool,
    /// The index of its `O_*` flags, for an open: it only reads without
    /// [`OPEN_WRITES`].
    open_flags: Option<usize>,
    /// The index of its directory descriptor, if it takes one.
    dirfd: Option<usize>,
    /// The index of its `AT_*` flags, for a stat with a single path.
    empty_path: Option<usize>,
}

impl Rule {
    /// The rule of a call the gate looks at: one naming a path, or one
    /// after which a late relative path could no longer be resolved.
    pub(crate) fn of(row: &Syscall) -> Option<Rule> {
        let params = row.params();
        let paths = params.iter().filter(|p| p.kind == Kind::Path).count();
        if paths == 0 {
            // bind may make a socket file where its address says: held,
            // whatever the family (the filter cannot read the address).
            return (KEEPS_LATE_PATHS_RESOLVABLE.contains(&(row.nr as i64))
                || row.effect == Effect::Bind)
                .then_some(Rule {
                    query: false,
                    open_flags: None,
                    dirfd: None,
                    empty_path: None,
                });
        }
        Some(Rule {
            query: row.groups & Group::QUERY != 0,
            open_flags: params
                .iter()
                .position(|p| p.kind == Kind::Flags(FlagSet::Open)),
            dirfd: params.iter().position(|p| p.kind == Kind::DirFd),
            empty_path: (row.groups & Group::STAT != 0 && paths == 1)
                .then(|| {
                    params
                        .iter()
                        .position(|p| p.kind == Kind::Flags(FlagSet::At))
                })
                .flatten(),
        })
    }

    /// Whether a call with these arguments passes unheld.
    fn passes(&self, args: &[u64; 6]) -> bool {
        let at_cwd = |d: usize| args[d] as u32 == libc::AT_FDCWD as u32;
        let reads = self.query
            || self
                .open_flags
                .is_some_and(|f| args[f] as u32 & OPEN_WRITES == 0);
        (reads && self.dirfd.is_none_or(at_cwd))
            || self
                .empty_path
                .is_some_and(|f| args[f] & libc::AT_EMPTY_PATH as u64 != 0)
    }
}

/// Open flags that may change the file: write access, `O_CREAT`,
/// `O_TRUNC`, `O_TMPFILE` (its own bit, `__O_TMPFILE`).
const OPEN_WRITES: u32 = (libc::O_ACCMODE | libc::O_CREAT | libc::O_TRUNC) as u32 | 0o20000000;

/// Calls without a path that the gate holds all the same: each changes or
/// ends the working directory a late relative path is resolved against.
const KEEPS_LATE_PATHS_RESOLVABLE: [i64; 3] =
    [libc::SYS_fchdir, libc::SYS_exit, libc::SYS_exit_group];

/// Whether the call ends its thread, or its process.
pub(crate) fn is_exit(nr: i64) -> bool {
    nr == libc::SYS_exit || nr == libc::SYS_exit_group
}

/// Whether a call the gate let through names paths whose state the
/// recorder must record now ([`Rule`]).
pub(crate) fn late_paths(row: &Syscall, args: &[u64; 6]) -> bool {
    row.params().iter().any(|p| p.kind == Kind::Path)
        && Rule::of(row).is_some_and(|r| r.passes(args))
}

/// A call held by the gate.
pub(crate) struct Held {
    pub id: u64,
    pub pid: i32,
    pub nr: u32,
    pub args: [u64; 6],
}

/// The recorder's end of the gate.
pub(crate) struct Gate {
    fd: OwnedFd,
}

/// The descriptor number the gate occupies in the child before its exec
/// (it is close-on-exec); not part of the command's own state.
pub(crate) fn is_gate_fd(fd: i32) -> bool {
    fd == GATE_FD
}

impl Gate {
    /// Takes the listener out of the stopped child `pid`.
    pub(crate) fn take(pid: i32) -> io::Result<Gate> {
        // SAFETY: pidfd_open and pidfd_getfd return new descriptors we own.
        unsafe {
            let pidfd = libc::syscall(libc::SYS_pidfd_open, pid, 0);
            if pidfd < 0 {
                return Err(io::Error::last_os_error());
            }
            let pidfd = OwnedFd::from_raw_fd(pidfd as i32);
            let fd = libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), GATE_FD, 0);
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            let fd = OwnedFd::from_raw_fd(fd as i32);
            // Ask the kernel to wake the recorder on the held caller's CPU
            // (Linux 6.6+): a held call then costs a hand-over, not the
            // wakeup of an idle CPU. Older kernels refuse; the gate works
            // without it, only slower.
            libc::ioctl(
                fd.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS,
                SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
            );
            Ok(Gate { fd })
        }
    }

    /// Waits up to `timeout` for a held call; `None` when none came.
    pub(crate) fn wait(&self, timeout: Duration) -> io::Result<Option<Held>> {
        let mut pfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as _,
            tv_nsec: timeout.subsec_nanos() as _,
        };
        // SAFETY: ppoll reads and writes the one pollfd and reads the
        // timespec we pass.
        let n = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
        if n <= 0 || pfd.revents & libc::POLLIN == 0 {
            return Ok(None);
        }
        // SAFETY: a zeroed seccomp_notif is what NOTIF_RECV expects.
        let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: the ioctl fills the struct we pass.
        if unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV,
                &mut notif,
            )
        } < 0
        {
            let e = io::Error::last_os_error();
            // ENOENT: the caller died before we read it.
            return match e.raw_os_error() {
                Some(libc::ENOENT) | Some(libc::EINTR) => Ok(None),
                _ => Err(e),
            };
        }
        Ok(Some(Held {
            id: notif.id,
            pid: notif.pid as i32,
            nr: notif.data.nr as u32,
            args: notif.data.args,
        }))
    }

    /// Lets a held call go on, unchanged.
    pub(crate) fn release(&self, id: u64) {
        let mut resp = libc::seccomp_notif_resp {
            id,
            val: 0,
            error: 0,
            flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
        };
        // SAFETY: the ioctl reads the response we pass. An error means the
        // caller is gone: nothing to release.
        unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SEND,
                &mut resp,
            )
        };
    }
}

/// Reads a NUL-terminated path (at most `PATH_MAX`) from `pid`'s memory.
pub(crate) fn read_path(pid: i32, addr: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = addr;
    // Most paths are short: read 256 bytes first (never across a page,
    // which might not be mapped), then the rest of the page at a time.
    let mut want = 256;
    let mut buf = [0u8; 4096];
    while out.len() < 4096 {
        let chunk = (4096 - (at as usize & 4095)).min(want);
        want = 4096;
        let local = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: chunk,
        };
        let remote = libc::iovec {
            iov_base: at as *mut libc::c_void,
            iov_len: chunk,
        };
        // SAFETY: process_vm_readv writes at most `chunk` bytes into buf.
        let got = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
        if got <= 0 {
            return None;
        }
        let got = got as usize;
        if let Some(nul) = buf[..got].iter().position(|&b| b == 0) {
            out.extend_from_slice(&buf[..nul]);
            return Some(out);
        }
        out.extend_from_slice(&buf[..got]);
        at += got as u64;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{is_exit, late_paths, Filter, Rule, AUDIT_ARCH_X86_64};
    use reanimator_catalogue::{all, Kind};

    /// Runs the filter on one call, as the kernel's classic-BPF
    /// interpreter would: the instructions it uses, over `seccomp_data`.
    fn verdict(filter: &Filter, arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let word = |off: u32| -> u32 {
            match off {
                0 => nr,
                4 => arch,
                o if o >= 16 && (o - 16) % 8 == 0 => args[((o - 16) / 8) as usize] as u32,
                o => panic!("load at {o}"),
            }
        };
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = filter.0[pc];
            let code = u32::from(i.code);
            pc += 1;
            match code {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => acc = word(i.k),
                c if c == libc::BPF_RET | libc::BPF_K => return i.k,
                c if c == libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K => {
                    pc += usize::from(if acc == i.k { i.jt } else { i.jf });
                }
                c if c == libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K => {
                    pc += usize::from(if acc & i.k != 0 { i.jt } else { i.jf });
                }
                c => panic!("instruction {c:#x}"),
            }
        }
    }

    const HOLD: u32 = libc::SECCOMP_RET_USER_NOTIF;
    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
    const CWD: u64 = libc::AT_FDCWD as u64;

    #[test]
    fn the_filter_holds_what_may_change_a_path_and_passes_the_rest() {
        let f = Filter::new();
        let call = |nr: i64, args: [u64; 6]| verdict(&f, AUDIT_ARCH_X86_64, nr as u32, args);
        let rdonly = libc::O_RDONLY as u64;
        let write = (libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC) as u64;
        for (what, nr, args, want) in [
            (
                "openat, read-only, at cwd",
                libc::SYS_openat,
                [CWD, 1, rdonly, 0, 0, 0],
                ALLOW,
            ),
            (
                "openat, for writing",
                libc::SYS_openat,
                [CWD, 1, write, 0, 0, 0],
                HOLD,
            ),
            (
                "openat, O_RDWR",
                libc::SYS_openat,
                [CWD, 1, 2, 0, 0, 0],
                HOLD,
            ),
            (
                "openat, O_TMPFILE",
                libc::SYS_openat,
                [CWD, 1, 0o20200000, 0, 0, 0],
                HOLD,
            ),
            (
                "openat, read-only, at a dirfd",
                libc::SYS_openat,
                [5, 1, rdonly, 0, 0, 0],
                HOLD,
            ),
            (
                "open, read-only",
                libc::SYS_open,
                [1, rdonly, 0, 0, 0, 0],
                ALLOW,
            ),
            ("creat", libc::SYS_creat, [1, 0o644, 0, 0, 0, 0], HOLD),
            ("readlink", libc::SYS_readlink, [1, 2, 3, 0, 0, 0], ALLOW),
            (
                "newfstatat at cwd",
                libc::SYS_newfstatat,
                [CWD, 1, 2, 0, 0, 0],
                ALLOW,
            ),
            (
                "newfstatat at a dirfd",
                libc::SYS_newfstatat,
                [5, 1, 2, 0, 0, 0],
                HOLD,
            ),
            (
                "fstat as glibc makes it",
                libc::SYS_newfstatat,
                [5, 1, 2, 0x1000, 0, 0],
                ALLOW,
            ),
            ("unlink", libc::SYS_unlink, [1, 0, 0, 0, 0, 0], HOLD),
            ("execve", libc::SYS_execve, [1, 2, 3, 0, 0, 0], HOLD),
            ("fchdir", libc::SYS_fchdir, [3, 0, 0, 0, 0, 0], HOLD),
            ("exit_group", libc::SYS_exit_group, [0; 6], HOLD),
            ("read", libc::SYS_read, [0, 1, 2, 0, 0, 0], ALLOW),
        ] {
            assert_eq!(call(nr, args), want, "{what}");
        }
        assert_eq!(
            verdict(&f, 0x4000_0003, libc::SYS_unlink as u32, [0; 6]),
            ALLOW
        );
    }

    /// Without initial state to record, only exits are held, so that
    /// the recorder can hold one back for its parent's sake.
    #[test]
    fn the_exits_filter_holds_exits_only() {
        let f = Filter::exits();
        for row in all() {
            let args = [libc::AT_FDCWD as u64, 1, libc::O_WRONLY as u64, 0, 0, 0];
            let want = if is_exit(row.nr as i64) { HOLD } else { ALLOW };
            assert_eq!(
                verdict(&f, AUDIT_ARCH_X86_64, row.nr, args),
                want,
                "{}",
                row.name
            );
        }
    }

    /// What the filter lets through with a path is exactly what the
    /// recorder records late, for every call of the catalogue.
    #[test]
    fn late_paths_are_the_paths_the_filter_lets_through() {
        let f = Filter::new();
        let flags = [0u64, libc::O_WRONLY as u64, libc::AT_EMPTY_PATH as u64];
        for row in all() {
            let has_path = row.params().iter().any(|p| p.kind == Kind::Path);
            for dirfd in [libc::AT_FDCWD as u64, 5] {
                for &flag in &flags {
                    let args = [dirfd, 1, flag, flag, flag, flag];
                    let passes = verdict(&f, AUDIT_ARCH_X86_64, row.nr, args) == ALLOW;
                    if has_path {
                        assert_eq!(passes, late_paths(row, &args), "{} {args:?}", row.name);
                    } else {
                        assert_eq!(passes, Rule::of(row).is_none(), "{}", row.name);
                    }
                }
            }
        }
    }
}
