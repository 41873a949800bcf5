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
/// `__WNOTHREAD` leaves other threads' children alone, so a program using
/// the recorder as a library can still run and reap its own commands.
pub(crate) fn wait_any() -> io::Result<Option<(i32, i32)>> {
    let mut status = 0;
    loop {
        // SAFETY: status points to a local int.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL | libc::__WNOTHREAD) };
        if pid >= 0 {
            return Ok(Some((pid, status)));
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::ECHILD) => return Ok(None),
            _ => return Err(err),
        }
    }
}
