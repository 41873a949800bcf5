//! Thin, checked wrappers over the kernel interfaces the tracer uses:
//! ptrace requests and waitpid (process_vm_readv, which the eBPF back end
//! uses too, is `reanimator_record::read_mem`). Everything unsafe lives
//! here.

use std::io;

/// `PTRACE_GET_SYSCALL_INFO` (Linux 5.3).
const PTRACE_GET_SYSCALL_INFO: libc::c_uint = 0x420e;
/// Operation codes of [`SyscallInfo`].
pub(crate) const OP_ENTRY: u8 = 1;
pub(crate) const OP_EXIT: u8 = 2;

/// `struct ptrace_syscall_info` as the kernel lays it out, with the union
/// flattened to six words (entry: nr + 6 args; exit: rval + is_error).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct SyscallInfo {
    pub op: u8,
    _pad: [u8; 3],
    pub arch: u32,
    pub instruction_pointer: u64,
    pub stack_pointer: u64,
    /// Entry: nr, args[0..6]. Exit: rval (i64), is_error (u8).
    pub data: [u64; 7],
}

impl SyscallInfo {
    pub(crate) fn nr(&self) -> u32 {
        self.data[0] as u32
    }
    pub(crate) fn args(&self) -> [u64; 6] {
        [
            self.data[1],
            self.data[2],
            self.data[3],
            self.data[4],
            self.data[5],
            self.data[6],
        ]
    }
    pub(crate) fn rval(&self) -> i64 {
        self.data[0] as i64
    }
    pub(crate) fn is_error(&self) -> bool {
        self.data[1] & 0xff != 0
    }
}

fn check(r: libc::c_long) -> io::Result<libc::c_long> {
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// One ptrace request with integer data.
fn request(req: libc::c_uint, pid: i32, addr: usize, data: usize) -> io::Result<libc::c_long> {
    // SAFETY: requests issued through this helper take no pointers from us,
    // or (GETEVENTMSG, GETSIGINFO, GET_SYSCALL_INFO) pointers to memory the
    // callers below own and size correctly.
    check(unsafe { libc::ptrace(req, pid, addr, data) })
}

pub(crate) fn seize(pid: i32, options: libc::c_int) -> io::Result<()> {
    request(libc::PTRACE_SEIZE, pid, 0, options as usize).map(drop)
}

pub(crate) fn interrupt(pid: i32) -> io::Result<()> {
    request(libc::PTRACE_INTERRUPT, pid, 0, 0).map(drop)
}

/// Resumes `pid` until its next syscall stop, delivering `sig` (0: none).
pub(crate) fn resume_syscall(pid: i32, sig: i32) -> io::Result<()> {
    request(libc::PTRACE_SYSCALL, pid, 0, sig as usize).map(drop)
}

/// Leaves a group-stopped tracee stopped but lets it report later events.
pub(crate) fn listen(pid: i32) -> io::Result<()> {
    request(libc::PTRACE_LISTEN, pid, 0, 0).map(drop)
}

pub(crate) fn detach(pid: i32, sig: i32) -> io::Result<()> {
    request(libc::PTRACE_DETACH, pid, 0, sig as usize).map(drop)
}

pub(crate) fn event_msg(pid: i32) -> io::Result<u64> {
    let mut msg: libc::c_ulong = 0;
    request(
        libc::PTRACE_GETEVENTMSG,
        pid,
        0,
        &mut msg as *mut _ as usize,
    )?;
    Ok(msg as u64)
}

pub(crate) fn siginfo(pid: i32) -> io::Result<libc::siginfo_t> {
    // SAFETY: an all-zero siginfo_t is valid; the kernel fills it.
    let mut si: libc::siginfo_t = unsafe { std::mem::zeroed() };
    request(libc::PTRACE_GETSIGINFO, pid, 0, &mut si as *mut _ as usize)?;
    Ok(si)
}

/// Whether a seccomp filter refused call `nr` of the stopped thread
/// `pid` with a signal (`SECCOMP_RET_TRAP`, `SECCOMP_RET_KILL_*`): a
/// `SIGSYS` for that call waits in the thread's own queue. The kernel
/// skipped the call and left its number in `rax`, which its exit stop
/// reports as a result.
pub(crate) fn seccomp_refused(pid: i32, nr: u32) -> bool {
    /// `struct ptrace_peeksiginfo_args`.
    #[repr(C)]
    struct Peek {
        off: u64,
        flags: u32,
        nr: i32,
    }
    const SYS_SECCOMP: i32 = 1;
    const QUEUED: usize = 8;
    let peek = Peek {
        off: 0,
        flags: 0,
        nr: QUEUED as i32,
    };
    // SAFETY: all-zero siginfo_t values are valid; the kernel fills at
    // most `peek.nr` of them.
    let mut queued: [libc::siginfo_t; QUEUED] = unsafe { std::mem::zeroed() };
    let Ok(n) = request(
        libc::PTRACE_PEEKSIGINFO,
        pid,
        &peek as *const Peek as usize,
        queued.as_mut_ptr() as usize,
    ) else {
        return false;
    };
    queued.iter().take(n as usize).any(|si| {
        // `_sigsys._syscall` follows the three ints and `_call_addr`.
        // SAFETY: siginfo_t is 128 bytes, the offset lies inside it.
        let syscall = unsafe {
            (si as *const libc::siginfo_t as *const u8)
                .add(24)
                .cast::<i32>()
                .read_unaligned()
        };
        si.si_signo == libc::SIGSYS && si.si_code == SYS_SECCOMP && syscall == nr as i32
    })
}

pub(crate) fn syscall_info(pid: i32) -> io::Result<SyscallInfo> {
    let mut info = SyscallInfo::default();
    let size = std::mem::size_of::<SyscallInfo>();
    request(
        PTRACE_GET_SYSCALL_INFO,
        pid,
        size,
        &mut info as *mut _ as usize,
    )?;
    Ok(info)
}

/// `waitpid(-1, __WALL | __WNOTHREAD)`: the next stop or exit of any
/// tracee of this thread. `None` means there are none left (ECHILD).
/// `__WNOTHREAD` leaves other threads' tracees and children alone: each
/// tracer thread waits for its own, and a program using the recorder as
/// a library can still run and reap its own commands. A signal (the
/// flush timer, a wake-up from another tracer, Ctrl-C) returns `EINTR`
/// so the caller's loop can act on it.
pub(crate) fn wait_any() -> io::Result<Option<(i32, i32)>> {
    let mut status = 0;
    // SAFETY: status points to a local int.
    let pid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL | libc::__WNOTHREAD) };
    if pid >= 0 {
        return Ok(Some((pid, status)));
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::ECHILD) => Ok(None),
        _ => Err(err),
    }
}

/// The registers of a stopped tracee.
pub(crate) fn regs(pid: i32) -> io::Result<libc::user_regs_struct> {
    // SAFETY: an all-zero register set is valid; the kernel fills it.
    let mut r: libc::user_regs_struct = unsafe { std::mem::zeroed() };
    request(libc::PTRACE_GETREGS, pid, 0, &mut r as *mut _ as usize)?;
    Ok(r)
}

pub(crate) fn set_regs(pid: i32, r: &libc::user_regs_struct) -> io::Result<()> {
    request(libc::PTRACE_SETREGS, pid, 0, r as *const _ as usize).map(drop)
}

/// The blocked-signal mask of a stopped tracee.
pub(crate) fn sigmask(pid: i32) -> io::Result<u64> {
    let mut mask = 0u64;
    request(
        libc::PTRACE_GETSIGMASK,
        pid,
        8,
        &mut mask as *mut _ as usize,
    )?;
    Ok(mask)
}

pub(crate) fn set_sigmask(pid: i32, mask: u64) -> io::Result<()> {
    request(libc::PTRACE_SETSIGMASK, pid, 8, &mask as *const _ as usize).map(drop)
}

/// The word of tracee memory at `addr`.
pub(crate) fn peek(pid: i32, addr: u64) -> io::Result<u64> {
    // PEEKTEXT returns the word itself, so -1 is ambiguous: clear errno.
    // SAFETY: errno is this thread's; PEEKTEXT takes no pointer from us.
    unsafe {
        *libc::__errno_location() = 0;
        let word = libc::ptrace(libc::PTRACE_PEEKTEXT, pid, addr as usize, 0usize);
        if word == -1 && *libc::__errno_location() != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(word as u64)
    }
}

/// Pins task `tid` (any thread, not only the caller) to `cpu`.
pub(crate) fn pin(tid: i32, cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is an empty set; the calls only touch it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// The CPUs a task may run on, as `sched_getaffinity` reports them: what
/// a traced task is shown in place of the recorder's pin.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct CpuMask([u8; std::mem::size_of::<libc::cpu_set_t>()]);

impl CpuMask {
    /// The mask of task `tid` (0: the calling thread).
    pub(crate) fn of(tid: i32) -> io::Result<CpuMask> {
        let mut mask = CpuMask([0; std::mem::size_of::<libc::cpu_set_t>()]);
        // SAFETY: the kernel writes at most the buffer's size into it.
        let n = unsafe {
            libc::syscall(
                libc::SYS_sched_getaffinity,
                tid,
                mask.0.len(),
                mask.0.as_mut_ptr(),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(mask)
    }

    /// The mask holding `cpu` alone: a task's pin.
    pub(crate) fn only(cpu: usize) -> CpuMask {
        let mut mask = CpuMask([0; std::mem::size_of::<libc::cpu_set_t>()]);
        if let Some(byte) = mask.0.get_mut(cpu / 8) {
            *byte = 1 << (cpu % 8);
        }
        mask
    }

    /// Writes the mask's first `len` bytes (as many as the kernel wrote
    /// there) over the buffer at `addr` in stopped task `pid`.
    pub(crate) fn show(&self, pid: i32, addr: u64, len: usize) -> io::Result<()> {
        let bytes = &self.0[..len.min(self.0.len())];
        let local = libc::iovec {
            iov_base: bytes.as_ptr() as *mut libc::c_void,
            iov_len: bytes.len(),
        };
        let remote = libc::iovec {
            iov_base: addr as *mut libc::c_void,
            iov_len: bytes.len(),
        };
        // SAFETY: the local iovec covers `bytes`, which outlives the call;
        // the remote one is checked by the kernel.
        let n = unsafe { libc::process_vm_writev(pid, &local, 1, &remote, 1, 0) };
        match n {
            n if n < 0 => Err(io::Error::last_os_error()),
            n if n as usize == bytes.len() => Ok(()),
            _ => Err(io::Error::from_raw_os_error(libc::EFAULT)),
        }
    }
}

/// Interrupts a blocking call of tracer thread `tid` of this process with
/// the flush timer's (harmless) signal.
pub(crate) fn nudge(tid: i32) {
    // SAFETY: tgkill has no memory effects.
    unsafe {
        libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, libc::SIGALRM);
    }
}

/// A timer sending `SIGALRM` to the thread that started it, every
/// period, until dropped: a tracer blocked in `waitpid` wakes up at least
/// that often (to flush, and in case a wake-up from another tracer was
/// lost), and no other thread of the program takes the signal.
pub(crate) struct Tick(libc::timer_t);

impl Tick {
    pub(crate) fn start(every: std::time::Duration) -> io::Result<Tick> {
        let period = libc::timespec {
            tv_sec: every.as_secs() as _,
            tv_nsec: every.subsec_nanos() as _,
        };
        // SAFETY: a zeroed sigevent is valid before its fields are set;
        // timer_create and timer_settime read the structs we pass and
        // write the id.
        unsafe {
            let mut ev: libc::sigevent = std::mem::zeroed();
            ev.sigev_notify = libc::SIGEV_THREAD_ID;
            ev.sigev_signo = libc::SIGALRM;
            ev.sigev_notify_thread_id = gettid();
            let mut id: libc::timer_t = std::ptr::null_mut();
            if libc::timer_create(libc::CLOCK_MONOTONIC, &mut ev, &mut id) != 0 {
                return Err(io::Error::last_os_error());
            }
            let spec = libc::itimerspec {
                it_interval: period,
                it_value: period,
            };
            if libc::timer_settime(id, 0, &spec, std::ptr::null_mut()) != 0 {
                let err = io::Error::last_os_error();
                libc::timer_delete(id);
                return Err(err);
            }
            Ok(Tick(id))
        }
    }
}

impl Drop for Tick {
    fn drop(&mut self) {
        // SAFETY: the id came from timer_create and is deleted once.
        unsafe { libc::timer_delete(self.0) };
    }
}

/// This thread's kernel id.
pub(crate) fn gettid() -> i32 {
    // SAFETY: gettid has no arguments.
    unsafe { libc::gettid() }
}
