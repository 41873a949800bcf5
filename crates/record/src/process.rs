//! Starting and ending the recorded processes, and the process-wide state
//! a recording borrows: the same for every back end, so a spawned command
//! starts, stops and reports its end identically whichever one records it.

use std::ffi::CString;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Mutex;

use reanimator_trace::{ExitStatus, ProcessStart, StartCause};

use crate::{now_ns, process_start, Error};

/// Set by SIGINT/SIGTERM/SIGHUP while attached (finish the trace and
/// detach), or by SIGTERM/SIGHUP while recording a spawned command (finish
/// the trace and end the processes still running): a closed terminal or
/// ssh session sends SIGHUP, which once lost the whole trace. Cleared when
/// [`stop_requested`] has looked at who sent it.
static STOP_SIGNALLED: AtomicBool = AtomicBool::new(false);
/// The process that sent the last stop signal (0: the kernel).
static STOP_SENDER: AtomicI32 = AtomicI32::new(0);
/// A stop signal came from outside the recorded command: the recording
/// ends.
static STOPPING: AtomicBool = AtomicBool::new(false);
/// The spawned command's process id (0 when attached).
static COMMAND: AtomicI32 = AtomicI32::new(0);
/// Whether a stop signal from the command was passed over already (said
/// once).
static PASSED_OVER: AtomicBool = AtomicBool::new(false);
/// The process that sent the recorder of a spawned command a SIGINT of its
/// own (`kill -INT`, not the terminal's Ctrl-C), until [`stop_requested`]
/// has said what SIGINT does here; 0 when none.
static INTERRUPTER: AtomicI32 = AtomicI32::new(0);
/// Whether that was said (once).
static INTERRUPT_SAID: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel hands a SA_SIGINFO handler a valid siginfo.
    let (code, sender) = if info.is_null() {
        (libc::SI_KERNEL, 0)
    } else {
        unsafe { ((*info).si_code, (*info).si_pid()) }
    };
    // A process's signal (SI_USER, SI_QUEUE, SI_TKILL are not positive);
    // the terminal's comes from the kernel.
    if code <= 0 && sender > 0 {
        INTERRUPTER.store(sender, Ordering::Relaxed);
    }
}

extern "C" fn on_stop_signal(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel hands a SA_SIGINFO handler a valid siginfo.
    let sender = if info.is_null() {
        0
    } else {
        unsafe { (*info).si_pid() }
    };
    STOP_SENDER.store(sender, Ordering::Relaxed);
    STOP_SIGNALLED.store(true, Ordering::Release);
}

/// Whether a signal asked the recording to stop (see [`STOP_SIGNALLED`]).
/// One the recorded command sent is not such a request: it runs in the
/// recorder's process group, so its `kill 0` (a shell's `trap 'kill 0'
/// EXIT`) reaches the recorder too, which ended the recording and killed
/// the command.
pub fn stop_requested() -> bool {
    let interrupter = INTERRUPTER.swap(0, Ordering::Relaxed);
    if interrupter > 0
        && !descends_from_command(interrupter)
        && !INTERRUPT_SAID.swap(true, Ordering::Relaxed)
    {
        // `kill -INT` of strace's process stops strace; here SIGINT is
        // the command's (a server shutting down cleanly is worth
        // recording), and was passed over unsaid.
        say(&format!(
            "reanimator: SIGINT from process {interrupter} is the recorded command's to act on, as \
             the terminal's Ctrl-C is, not the recorder's: `kill {}` (SIGTERM) ends the recording",
            std::process::id()
        ));
    }
    if STOP_SIGNALLED.swap(false, Ordering::Acquire) {
        let sender = STOP_SENDER.load(Ordering::Relaxed);
        if descends_from_command(sender) {
            if !PASSED_OVER.swap(true, Ordering::Relaxed) {
                say(&format!(
                    "reanimator: process {sender} of the recorded command signalled its whole process group, the recorder included: not taken as a request to stop (`kill {}` ends the recording)",
                    std::process::id()
                ));
            }
        } else {
            STOPPING.store(true, Ordering::Relaxed);
        }
    }
    STOPPING.load(Ordering::Relaxed)
}

/// Whether `pid` is the spawned command or one of its descendants (by
/// their parent ids; a process gone already cannot say, and is taken
/// for an outsider, as a `kill` command run by the user is).
fn descends_from_command(pid: i32) -> bool {
    let command = COMMAND.load(Ordering::Relaxed);
    let mut p = pid;
    for _ in 0..64 {
        if command <= 0 || p <= 1 {
            return false;
        }
        if p == command {
            return true;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            return false;
        };
        // The command name may hold spaces and parentheses: the fields
        // after its last ')' are state, then the parent's id.
        let after = stat.rsplit_once(')').map_or("", |(_, a)| a);
        p = after
            .split_whitespace()
            .nth(1)
            .and_then(|f| f.parse().ok())
            .unwrap_or(0);
    }
    false
}

/// Forgets a stop request left by an earlier recording in this process.
pub fn clear_stop_request() {
    STOP_SIGNALLED.store(false, Ordering::Relaxed);
    STOPPING.store(false, Ordering::Relaxed);
    COMMAND.store(0, Ordering::Relaxed);
    PASSED_OVER.store(false, Ordering::Relaxed);
    INTERRUPTER.store(0, Ordering::Relaxed);
    INTERRUPT_SAID.store(false, Ordering::Relaxed);
}

/// Makes SIGINT, SIGTERM and SIGHUP request a stop ([`stop_requested`])
/// instead of killing the recorder.
pub fn watch_stop_signals() {
    install_stop_handler(libc::SIGINT);
    install_stop_handler(libc::SIGTERM);
    install_stop_handler(libc::SIGHUP);
}

/// Installs [`on_stop_signal`] for `sig`, as [`install_handler`] does,
/// with the sender's siginfo.
fn install_stop_handler(sig: libc::c_int) {
    set_action(sig, on_stop_signal as *const () as usize, libc::SA_SIGINFO);
}

/// Installs `handler` for `sig` without `SA_RESTART`, so a blocked wait
/// returns and the recorder's loop can act. Handlers must only touch
/// atomics.
pub fn install_handler(sig: libc::c_int, handler: extern "C" fn(libc::c_int)) {
    set_action(sig, handler as usize, 0);
}

/// Sets `sig`'s action to the handler at address `handler` with
/// `flags`, no `SA_RESTART` and an empty mask.
fn set_action(sig: libc::c_int, handler: usize, flags: libc::c_int) {
    // SAFETY: a zeroed sigaction with a handler address and empty mask is
    // valid; the handlers only touch atomics.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler;
        sa.sa_flags = flags;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

/// Where the recorder's messages go while the command runs.
enum Route {
    Stderr,
    /// The controlling terminal, when stderr is one of the command's output files.
    Terminal(std::fs::File),
    /// Held until the trace is finished, when stderr is one of the command's
    /// output files and there is no terminal.
    Held(Vec<String>),
}

static ROUTE: Mutex<Route> = Mutex::new(Route::Stderr);

/// Keeps the recorder's messages out of the command's output files: with
/// `reanimator record -- cmd > log 2>&1`, a message written while the
/// command runs would be part of `log`'s recorded final state, which
/// replay, writing only what the command wrote, could never match. Such
/// messages go to the controlling terminal if there is one, and are
/// otherwise held for [`held_messages`]. `outputs` are the spawned
/// command's inherited output files ([`crate::files_open_at_start`]).
pub fn keep_messages_out_of(outputs: &[Vec<u8>]) {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(stderr) = std::fs::read_link("/proc/self/fd/2") else {
        return;
    };
    if !outputs
        .iter()
        .any(|p| p.as_slice() == stderr.as_os_str().as_bytes())
    {
        return;
    }
    let terminal = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open("/dev/tty");
    *lock_route() = match terminal {
        Ok(tty) => Route::Terminal(tty),
        Err(_) => Route::Held(Vec::new()),
    };
}

/// Prints a message of the recorder while the command runs (see
/// [`keep_messages_out_of`]).
pub fn say(message: &str) {
    use std::io::Write;
    match &mut *lock_route() {
        // Never a panic over a diagnostic (standard error closed or full).
        Route::Stderr => {
            let _ = writeln!(io::stderr(), "{message}");
        }
        Route::Terminal(tty) => {
            let _ = writeln!(tty, "{message}");
        }
        Route::Held(held) => held.push(message.to_string()),
    }
}

/// The messages held back while the command ran; from now on messages go
/// to stderr again. To be printed once the trace, with its final state, is
/// finished.
pub fn held_messages() -> Vec<String> {
    match std::mem::replace(&mut *lock_route(), Route::Stderr) {
        Route::Held(held) => held,
        _ => Vec::new(),
    }
}

fn lock_route() -> std::sync::MutexGuard<'static, Route> {
    ROUTE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Signal dispositions and CPU affinity a recording changes, put back
/// when it is dropped, so a program using a recorder as a library keeps
/// its Ctrl-C and its CPUs.
pub struct SavedState {
    actions: Vec<(libc::c_int, libc::sigaction)>,
    affinity: Option<libc::cpu_set_t>,
}

impl SavedState {
    const SIGNALS: [libc::c_int; 5] = [
        libc::SIGINT,
        libc::SIGQUIT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGALRM,
    ];

    /// Reads the current dispositions and affinity.
    pub fn save() -> SavedState {
        // SAFETY: sigaction with a null new action only reads the current
        // one into our zeroed struct; sched_getaffinity fills our set.
        unsafe {
            let actions = Self::SIGNALS
                .iter()
                .map(|&sig| {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    libc::sigaction(sig, std::ptr::null(), &mut old);
                    (sig, old)
                })
                .collect();
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            let ok =
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0;
            SavedState {
                actions,
                affinity: ok.then_some(set),
            }
        }
    }
}

impl Drop for SavedState {
    fn drop(&mut self) {
        // SAFETY: restoring values read by `save`.
        unsafe {
            for (sig, old) in &self.actions {
                libc::sigaction(*sig, old, std::ptr::null_mut());
            }
            if let Some(set) = &self.affinity {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set);
            }
        }
    }
}

/// Work a back end runs in the forked child before it stops: returns
/// false on failure, and `why` is the error reported then. It runs
/// between fork and exec, so it may only make async-signal-safe calls.
pub struct ChildSetup<'a> {
    /// The work.
    pub run: &'a dyn Fn() -> bool,
    /// What failed, in words, when `run` returns false.
    pub why: &'a str,
}

/// What the child prints if its `execve` fails, per errno (0 last: any
/// other), made before the fork since the child may not allocate.
fn exec_failure_messages(program: &CString) -> Vec<(i32, Vec<u8>)> {
    let name = program.to_string_lossy();
    let errnos = [
        libc::ENOENT,
        libc::ENOEXEC,
        libc::EACCES,
        libc::ETXTBSY,
        libc::E2BIG,
        libc::ENOMEM,
        libc::ELIBBAD,
        libc::EPERM,
        0,
    ];
    errnos
        .into_iter()
        .map(|e| {
            // strerror's words, without std's " (os error N)".
            let text = io::Error::from_raw_os_error(e).to_string();
            let text = text.split(" (os error").next().unwrap_or_default();
            let why = match e {
                0 => "execve failed".to_string(),
                libc::ENOENT => format!("{text} (its #! interpreter or dynamic loader is missing)"),
                _ => text.to_string(),
            };
            (
                e,
                format!("reanimator: cannot execute {name}: {why}\n").into_bytes(),
            )
        })
        .collect()
}

/// Exit status of a child whose setup failed.
const SETUP_FAILED: i32 = 126;

/// Forks the command and leaves it stopped (SIGSTOP) just before its
/// exec, so a back end can follow it from its first instruction, then
/// resume it with SIGCONT. From here on the terminal's Ctrl-C goes to the
/// command; the recorder finishes the trace when the command is done.
pub fn fork_stopped(
    program: &CString,
    argv: &[CString],
    env: &[CString],
    setup: Option<ChildSetup<'_>>,
) -> Result<i32, Error> {
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let mut env_ptrs: Vec<*const libc::c_char> = env.iter().map(|a| a.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());
    let exec_failed = exec_failure_messages(program);
    // SAFETY: the child only calls async-signal-safe functions (the
    // setup's, raise, execve, _exit) on memory prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(Error::Spawn(io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: see above.
        unsafe {
            if setup.as_ref().is_some_and(|s| !(s.run)()) {
                libc::_exit(SETUP_FAILED);
            }
            // The Rust runtime ignores SIGPIPE in the recorder, and an
            // ignored signal stays ignored across exec: without this,
            // `yes | head` ends with "Broken pipe" instead of dying of
            // SIGPIPE (std's Command does the same).
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::raise(libc::SIGSTOP);
            libc::execve(program.as_ptr(), argv_ptrs.as_ptr(), env_ptrs.as_ptr());
            // Said as a shell or strace says it (the command was checked
            // to exist, so this is a bad interpreter or binary): the
            // messages were made before the fork, and write is safe here.
            let errno = *libc::__errno_location();
            let message = exec_failed
                .iter()
                .find(|(e, _)| *e == errno || *e == 0)
                .map_or(&[][..], |(_, m)| &m[..]);
            libc::write(2, message.as_ptr().cast(), message.len());
            libc::_exit(127);
        }
    }
    // The terminal's Ctrl-C is the command's to handle (a server shutting
    // down cleanly is worth recording); one sent to the recorder alone is
    // noted, to say so. SIGTERM, which only someone sending it to the
    // recorder delivers, ends the recording early.
    set_action(
        libc::SIGINT,
        on_interrupt as *const () as usize,
        libc::SA_SIGINFO,
    );
    // SAFETY: setting a disposition to SIG_IGN has no memory effects.
    unsafe { libc::signal(libc::SIGQUIT, libc::SIG_IGN) };
    install_stop_handler(libc::SIGTERM);
    install_stop_handler(libc::SIGHUP);
    COMMAND.store(pid, Ordering::Relaxed);
    let mut status = 0;
    // SAFETY: status is a local int.
    if unsafe { libc::waitpid(pid, &mut status, libc::WUNTRACED) } != pid
        || !libc::WIFSTOPPED(status)
    {
        let why = match &setup {
            Some(s) if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == SETUP_FAILED => {
                s.why
            }
            _ => "the command did not start",
        };
        return Err(Error::Spawn(io::Error::other(why)));
    }
    Ok(pid)
}

/// Kills and reaps a command [`fork_stopped`] made when its recording
/// cannot start after all (it cannot be traced, the trace cannot be
/// written): left stopped, it would outlive the recorder for good, and a
/// recording of the recorder (a nested `reanimator record`) waited for it.
pub fn discard_stopped(pid: i32) {
    // SAFETY: kill and waitpid on our own child.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
}

/// The start record of a command stopped by [`fork_stopped`]: what `/proc`
/// says, with the executable, argv and environment it is about to exec,
/// and the descriptors it will still have after the exec (the recorder's
/// own, such as the trace being written, are close-on-exec).
pub fn spawned_start(
    pid: i32,
    seq: u64,
    program: &CString,
    argv: &[CString],
    env: &[CString],
) -> Result<ProcessStart, Error> {
    let mut start = process_start(pid, StartCause::Spawned, seq, now_ns())
        .ok_or_else(|| Error::Spawn(io::Error::other("the command vanished before it started")))?;
    start.exe = program.as_bytes().to_vec();
    start.argv = argv.iter().map(|a| a.as_bytes().to_vec()).collect();
    start.env = env.iter().map(|a| a.as_bytes().to_vec()).collect();
    start.fds.retain(|f| f.flags as i32 & libc::O_CLOEXEC == 0);
    Ok(start)
}

/// How a task ended, from its wait(2) status (the kernel's `exit_code`
/// has the same encoding).
pub fn exit_status(wait_status: i32) -> ExitStatus {
    if libc::WIFEXITED(wait_status) {
        ExitStatus::Exited(libc::WEXITSTATUS(wait_status))
    } else {
        ExitStatus::Killed {
            signal: libc::WTERMSIG(wait_status),
            core: libc::WCOREDUMP(wait_status),
        }
    }
}

/// Reads `buf.len()` bytes at `addr` in `pid`, returning how many were
/// readable; a read that crosses into an unmapped page stops there. Both
/// back ends read tracee memory this way: ptrace at every stop, eBPF for
/// buffers too large for its ring.
pub fn read_mem(pid: i32, addr: u64, buf: &mut [u8]) -> usize {
    read_mem_vm(pid, addr, buf)
}

/// [`read_mem`] for a range of shared writable mappings: memory the
/// process may store to without being allowed to read it (fio maps its
/// file `PROT_WRITE` only) is read through the process's own mem file, as
/// debuggers do, which `process_vm_readv` refuses. Not for buffers a call
/// reads: that would also read what the call could not (a `PROT_NONE`
/// guard page).
pub fn read_mapped(pid: i32, addr: u64, buf: &mut [u8]) -> usize {
    let done = read_mem_vm(pid, addr, buf);
    if done < buf.len() && std::io::Error::last_os_error().raw_os_error() == Some(libc::EFAULT) {
        done + read_mem_forced(pid, addr + done as u64, &mut buf[done..])
    } else {
        done
    }
}

/// The parts of `[addr, addr + len)` in `pid` that hold pages, present or
/// swapped out (`/proc/PID/pagemap`), as `(offset from addr, length)`
/// runs. A page of a shared mapping the process never touched holds no
/// store, and reading it would fault it in from the file: ZGC's 256 MiB
/// heap views were read whole at exit, 981 MB for a 0.4 s program. (A
/// page stored to, written back and then evicted under memory pressure is
/// missed too, as the eBPF recorder misses it.) `None` when the page map
/// cannot be read: the caller then reads the whole range.
pub fn resident_runs(pid: i32, addr: u64, len: u64) -> Option<Vec<(u64, u64)>> {
    use std::os::unix::fs::FileExt;
    const PAGE: u64 = 4096;
    /// `PM_PRESENT` and `PM_SWAP`.
    const HOLDS_A_PAGE: u64 = 3 << 62;
    /// Page-map entries read at a time.
    const BATCH: u64 = 8192;
    let map = std::fs::File::open(format!("/proc/{pid}/pagemap")).ok()?;
    let end = addr.checked_add(len)?;
    let mut runs: Vec<(u64, u64)> = Vec::new();
    let mut entries = vec![0u8; 8 * BATCH as usize];
    let mut page = addr / PAGE;
    while page * PAGE < end {
        let n = (end.div_ceil(PAGE) - page).min(BATCH);
        let batch = &mut entries[..8 * n as usize];
        map.read_exact_at(batch, page * 8).ok()?;
        for (i, e) in batch.chunks_exact(8).enumerate() {
            if u64::from_le_bytes(e.try_into().expect("8 bytes")) & HOLDS_A_PAGE == 0 {
                continue;
            }
            let at = (page + i as u64) * PAGE;
            let (from, to) = (at.max(addr) - addr, (at + PAGE).min(end) - addr);
            match runs.last_mut() {
                Some(run) if run.0 + run.1 == from => run.1 = to - run.0,
                _ => runs.push((from, to - from)),
            }
        }
        page += n;
    }
    Some(runs)
}

/// Reads through `/proc/PID/mem`.
fn read_mem_forced(pid: i32, addr: u64, buf: &mut [u8]) -> usize {
    use std::os::unix::fs::FileExt;
    let Ok(mem) = std::fs::File::open(format!("/proc/{pid}/mem")) else {
        return 0;
    };
    let mut done = 0;
    while done < buf.len() {
        match mem.read_at(&mut buf[done..], addr + done as u64) {
            Ok(n) if n > 0 => done += n,
            _ => break,
        }
    }
    done
}

/// Reads the kernel refused since [`take_refused_reads`] last ran, in any
/// thread of the recorder (one recording runs at a time per process).
static REFUSED_READS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many reads of traced memory the kernel refused (`EPERM`: the
/// process is non-dumpable) since the last call; see
/// [`CaptureCounts::refused`](crate::CaptureCounts::refused).
pub fn take_refused_reads() -> u64 {
    REFUSED_READS.swap(0, std::sync::atomic::Ordering::Relaxed)
}

fn read_mem_vm(pid: i32, addr: u64, buf: &mut [u8]) -> usize {
    let mut done = 0;
    while done < buf.len() {
        let local = libc::iovec {
            iov_base: buf[done..].as_mut_ptr().cast(),
            iov_len: buf.len() - done,
        };
        let remote = libc::iovec {
            iov_base: (addr + done as u64) as *mut libc::c_void,
            iov_len: buf.len() - done,
        };
        // SAFETY: local describes memory we own; the kernel checks remote.
        let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
        if n <= 0 {
            // Unmapped memory (a partial read already stopped at the first
            // bad page), the task is gone, or it is not ours to read: keep
            // what was read.
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM) {
                REFUSED_READS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            break;
        }
        done += n as usize;
    }
    done
}

/// How long the spawned command's leftover processes run before the
/// recorder says why it is still going.
const LEFT_BEHIND_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// Tells the user, once, that the command has exited but the recording
/// goes on for the processes it left running (a daemon), and how to end it:
/// without that, a recording of `pg_ctl start` just seems to hang.
#[derive(Default)]
pub struct LeftBehind {
    since: Option<std::time::Instant>,
    told: bool,
}

impl LeftBehind {
    /// Called while the recording waits; `left` is how many processes are
    /// still followed once the command has exited (`None` before).
    pub fn tick(&mut self, left: Option<usize>) {
        let Some(left) = left.filter(|&n| n > 0 && !self.told) else {
            return;
        };
        let since = *self.since.get_or_insert_with(std::time::Instant::now);
        if since.elapsed() >= LEFT_BEHIND_AFTER {
            self.told = true;
            let what = if left == 1 { "thread" } else { "threads" };
            say(&format!(
                "reanimator: the command has exited; the recording goes on until what it \
                 left running ({left} {what}) ends; `kill {}` ends the recording and kills them",
                std::process::id()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resident_runs_are_the_pages_touched() {
        const PAGE: usize = 4096;
        // SAFETY: a fresh private mapping, unmapped below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                16 * PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        // Pages one by one, not as a (multi-size) huge page.
        // SAFETY: the mapping made above.
        unsafe { libc::madvise(p, 16 * PAGE, libc::MADV_NOHUGEPAGE) };
        for page in [2, 3, 7] {
            // SAFETY: inside the mapping.
            unsafe { *p.cast::<u8>().add(page * PAGE) = 1 };
        }
        let runs = resident_runs(std::process::id() as i32, p as u64, 16 * PAGE as u64);
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(p, 16 * PAGE) };
        let page = PAGE as u64;
        assert_eq!(runs, Some(vec![(2 * page, 2 * page), (7 * page, page)]));
    }

    #[test]
    fn exit_codes_decode_as_wait_does() {
        assert_eq!(exit_status(3 << 8), ExitStatus::Exited(3));
        assert_eq!(
            exit_status(libc::SIGKILL),
            ExitStatus::Killed {
                signal: libc::SIGKILL,
                core: false
            }
        );
        assert_eq!(
            exit_status(libc::SIGSEGV | 0x80),
            ExitStatus::Killed {
                signal: libc::SIGSEGV,
                core: true
            }
        );
    }
}
