//! What happens to the traced processes when the recorder goes away before
//! they do (killed with SIGKILL, or stopped by an error).
//!
//! A spawned command is killed, as the ptrace back end's tracees are by
//! `PTRACE_O_EXITKILL`: left running, it would go on under a path gate
//! whose listener is gone (every path-naming call failing with `ENOSYS`).
//! Processes attached with `-p` are released instead: the kernel side stops
//! following them and any still stopped for back-pressure is continued, so
//! a database the recorder was attached to never stays stopped for good.
//!
//! Nothing in the recorder can act once it is killed, so a guardian
//! process, forked from it, waits for the recorder's end of a pipe to
//! close and then does it.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

/// What the guardian does to the traced processes once the recorder is gone.
#[derive(Clone, Copy)]
pub(crate) enum Ending {
    /// Kill every process in the `traced` table (the map's descriptor).
    Kill { traced: i32 },
    /// Stop following (`detached`, the BPF program's flag in the `.bss`
    /// mapping, which is shared with the kernel and stays mapped in the
    /// guardian) and continue every process in the `stopped` table.
    Release {
        detached: *const AtomicU32,
        stopped: i32,
    },
}

/// The guardian of one recording. Dropping it (the recording is over, or
/// failed) lets the guardian kill whatever is still traced, which after a
/// complete recording is nothing, and waits for it.
pub(crate) struct Guard {
    pid: i32,
    pipe: Option<OwnedFd>,
}

impl Guard {
    /// Forks the guardian. It keeps a copy of every descriptor the
    /// recorder holds, so the BPF programs stay attached and go on adding
    /// new forks to the `traced` table while it kills.
    pub fn spawn(ending: Ending) -> io::Result<Guard> {
        // A guardian holds a copy of every descriptor, so also the write
        // end of any other guardian's pipe made before its fork. Two
        // recordings in one process (tests run in parallel) that each
        // made their pipe before the other forked held each other's
        // guardian alive, and both waited for ever (seen once in CI).
        // One pipe-and-fork at a time: a later guardian may hold an
        // earlier one's pipe, never the reverse, so there is no cycle.
        static SPAWNING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = SPAWNING.lock().unwrap_or_else(|e| e.into_inner());
        let mut fds = [0i32; 2];
        // SAFETY: a valid int[2].
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the child only makes raw system calls (async-signal-safe)
        // before it exits, as a fork of a multi-threaded process must.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let e = io::Error::last_os_error();
            // SAFETY: our own descriptors.
            unsafe {
                libc::close(fds[0]);
                libc::close(fds[1]);
            }
            return Err(e);
        }
        if pid == 0 {
            // SAFETY: the write end is the recorder's; closing ours is what
            // lets the read below see the end of the recorder's.
            unsafe { libc::close(fds[1]) };
            guardian(fds[0], ending);
        }
        // SAFETY: the read end is the guardian's; the write end is ours.
        unsafe { libc::close(fds[0]) };
        Ok(Guard {
            pid,
            // SAFETY: a fresh descriptor we own.
            pipe: Some(unsafe { OwnedFd::from_raw_fd(fds[1]) }),
        })
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        drop(self.pipe.take());
        // SAFETY: reaps our own child.
        unsafe { libc::waitpid(self.pid, std::ptr::null_mut(), 0) };
    }
}

/// The guardian's whole life: no allocation, no locks, raw system calls
/// only.
fn guardian(pipe: i32, ending: Ending) -> ! {
    // SAFETY: raw system calls on descriptors this process holds.
    unsafe {
        // Told apart from the recorder in ps and top.
        libc::prctl(libc::PR_SET_NAME, c"reanim-guardian".as_ptr());
        // Not the recorder's output: a caller reading it to the end must
        // not wait for the guardian.
        for fd in 0..3 {
            libc::close(fd);
        }
        let mut byte = 0u8;
        while libc::read(pipe, (&raw mut byte).cast(), 1) < 0
            && *libc::__errno_location() == libc::EINTR
        {}
        match ending {
            // Rounds until no traced process is left (a process forked
            // during a round is killed in the next); at most about a second.
            // Zombies count as gone: a daemon the command left to an init
            // that does not reap (a container's) stays one, and each
            // recording waited out all rounds (postgres: 1.2 s).
            Ending::Kill { traced } => {
                for _ in 0..1000 {
                    if signal_each(traced, libc::SIGKILL) == 0 {
                        break;
                    }
                    let pause = libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 1_000_000,
                    };
                    libc::nanosleep(&pause, std::ptr::null_mut());
                }
            }
            Ending::Release { detached, stopped } => {
                (*detached).store(1, Ordering::SeqCst);
                signal_each(stopped, libc::SIGCONT);
            }
        }
        libc::_exit(0)
    }
}

/// `enum bpf_cmd` value of the command that walks a map's keys.
const BPF_MAP_GET_NEXT_KEY: libc::c_long = 4;

/// Sends `signal` to every process in a hash keyed by tgid; returns how
/// many were sent. Raw calls only: the guardian runs it.
pub(crate) fn signal_each(map: i32, signal: i32) -> u32 {
    let mut key = 0u32;
    let mut next = 0u32;
    let mut first = true;
    let mut sent = 0;
    // A key deleted meanwhile (its process exited) makes the kernel start
    // over from the first key; bounded all the same.
    for _ in 0..1_000_000 {
        // `union bpf_attr` for BPF_MAP_GET_NEXT_KEY: map_fd, key, next_key.
        let attr: [u64; 4] = [
            map as u64,
            if first { 0 } else { (&raw const key) as u64 },
            (&raw mut next) as u64,
            0,
        ];
        // SAFETY: the attribute points at live locals of the right size.
        let r = unsafe {
            libc::syscall(
                libc::SYS_bpf,
                BPF_MAP_GET_NEXT_KEY,
                attr.as_ptr(),
                std::mem::size_of_val(&attr),
            )
        };
        if r != 0 {
            break;
        }
        // SAFETY: kill has no memory effects.
        if unsafe { libc::kill(next as i32, signal) } == 0 && !is_zombie(next) {
            sent += 1;
        }
        key = next;
        first = false;
    }
    sent
}

/// Whether process `pid` has exited and waits to be reaped (state `Z` or
/// `X` in `/proc/PID/stat`), with raw calls and stack buffers only.
fn is_zombie(pid: u32) -> bool {
    // "/proc/" + up to 10 digits + "/stat" + NUL.
    let mut path = [0u8; 32];
    path[..6].copy_from_slice(b"/proc/");
    let digits = (pid.max(1).ilog10() + 1) as usize;
    let mut v = pid;
    for k in (6..6 + digits).rev() {
        path[k] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    path[6 + digits..6 + digits + 5].copy_from_slice(b"/stat");
    let mut buf = [0u8; 512];
    // SAFETY: a NUL-terminated path and a stack buffer.
    let len = unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let len = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        len
    };
    let stat = &buf[..len.max(0) as usize];
    // "pid (comm) S ...": the state follows the last ')'.
    stat.iter()
        .rposition(|&b| b == b')')
        .and_then(|i| stat.get(i + 2))
        .is_some_and(|&s| s == b'Z' || s == b'X')
}

/// The descriptor of a libbpf map, for [`Guard::spawn`].
pub(crate) fn map_fd(map: &impl std::os::fd::AsFd) -> i32 {
    map.as_fd().as_raw_fd()
}

#[cfg(test)]
mod tests {
    use super::is_zombie;

    #[test]
    fn an_unreaped_child_is_a_zombie_and_we_are_not() {
        // SAFETY: the child exits at once.
        let child = unsafe { libc::fork() };
        if child == 0 {
            // SAFETY: ends the forked child without running anything.
            unsafe { libc::_exit(0) };
        }
        assert!(child > 0);
        let mut zombie = false;
        for _ in 0..500 {
            zombie = is_zombie(child as u32);
            if zombie {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        // SAFETY: reaps our own child.
        unsafe { libc::waitpid(child, std::ptr::null_mut(), 0) };
        assert!(zombie, "child {child} never showed as a zombie");
        assert!(!is_zombie(std::process::id()));
        assert!(!is_zombie(child as u32), "reaped: gone");
    }
}
