//! The tracer: one thread, one `waitpid(-1, __WALL)` loop, every stop of
//! every tracee dispatched here.
//!
//! Per system call there are two stops (entry and exit), each answered
//! with one `PTRACE_GET_SYSCALL_INFO`; input memory is read at entry,
//! output memory at exit, straight into the task's capture buffer, and the
//! event is written when it exits. Sequence ids are taken at entry, so a
//! clone's id precedes everything its child does.

use std::collections::HashMap;
use std::ffi::CString;
use std::io::Write;
use std::time::{Duration, Instant};

use reanimator_catalogue as catalogue;
use reanimator_fsstate::{Need, SnapshotPolicy, Snapshotter};
use reanimator_trace::{
    ExitStatus, ProcessExit, ProcessStart, Record, Role, SignalDelivery, StartCause, SyscallExit,
    SyscallHead, Writer,
};

use reanimator_record::{
    clear_stop_request, exit_status, fork_stopped, install_handler, now_ns, process_start,
    spawned_start, stop_requested, task_ids, touched_paths, watch_stop_signals, with_writer_thread,
    CaptureCounts, Captures, DataPolicy, Error, RecordSummary, SavedState, Sink, Target,
};

use crate::capture::{capture, CallView};
use crate::mappings::SharedMappings;
use crate::sys::{self, OP_ENTRY, OP_EXIT};

/// ptrace options for every tracee.
const OPTIONS: libc::c_int = libc::PTRACE_O_TRACESYSGOOD
    | libc::PTRACE_O_TRACECLONE
    | libc::PTRACE_O_TRACEFORK
    | libc::PTRACE_O_TRACEVFORK
    | libc::PTRACE_O_TRACEEXEC;

/// How often pending frames are written out while tracees are idle.
const FLUSH_EVERY: Duration = Duration::from_secs(1);

extern "C" fn on_alarm(_: libc::c_int) {}

/// Arms a repeating `SIGALRM` so an idle recorder still flushes.
fn arm_flush_timer() {
    let every = libc::timeval {
        tv_sec: FLUSH_EVERY.as_secs() as _,
        tv_usec: 0,
    };
    let it = libc::itimerval {
        it_interval: every,
        it_value: every,
    };
    // SAFETY: setitimer reads the struct we pass.
    unsafe { libc::setitimer(libc::ITIMER_REAL, &it, std::ptr::null_mut()) };
}

fn disarm_flush_timer() {
    // SAFETY: as above, with a zero timer.
    unsafe {
        let it: libc::itimerval = std::mem::zeroed();
        libc::setitimer(libc::ITIMER_REAL, &it, std::ptr::null_mut());
    }
}

/// One traced thread.
struct Task {
    tgid: u32,
    /// The call it is inside, from its entry stop until its exit stop.
    pending: Option<SyscallHead>,
    captures: Captures,
    /// The thread id it had before an `execve` from a non-leader thread
    /// gave it the leader's: its end is recorded after the execve itself,
    /// so every event of the old id precedes that end.
    superseded: Option<i32>,
}

/// The recorder's state for one run.
struct Tracer<'s, 'q> {
    sink: &'s mut Sink<'q>,
    policy: DataPolicy,
    tasks: HashMap<i32, Task>,
    next_seq: u64,
    root: Option<i32>,
    root_status: Option<ExitStatus>,
    /// The SIGCONT the recorder itself sent to start a spawned command.
    own_sigcont: Option<i32>,
    detaching: bool,
    last_flush: Instant,
    summary: RecordSummary,
    counts: CaptureCounts,
    /// The initial state of touched paths, and the final manifest.
    snap: Snapshotter,
    /// Where stores reach files without system calls.
    shared: SharedMappings,
}

/// Runs `target` under the recorder until every tracee has exited (or,
/// for attached processes, until `SIGINT`/`SIGTERM` asks to detach), writing
/// every event to `writer`.
pub(crate) fn run<W: Write + Send>(
    target: &Target,
    policy: DataPolicy,
    pin_cpu: Option<usize>,
    snapshot: SnapshotPolicy,
    writer: &mut Writer<W>,
) -> Result<RecordSummary, Error> {
    with_writer_thread(writer, |sink| {
        trace(target, policy, pin_cpu, snapshot, sink)
    })
}

fn trace(
    target: &Target,
    policy: DataPolicy,
    pin_cpu: Option<usize>,
    snapshot: SnapshotPolicy,
    sink: &mut Sink<'_>,
) -> Result<RecordSummary, Error> {
    let _restore = SavedState::save();
    clear_stop_request();
    if let Some(cpu) = pin_cpu {
        pin(cpu);
    }
    let started = Instant::now();
    let mut t = Tracer {
        sink,
        policy,
        tasks: HashMap::new(),
        next_seq: 1,
        root: None,
        root_status: None,
        own_sigcont: None,
        detaching: false,
        last_flush: Instant::now(),
        summary: RecordSummary::default(),
        counts: CaptureCounts::default(),
        snap: Snapshotter::new(snapshot).map_err(Error::Ptrace)?,
        shared: SharedMappings::default(),
    };
    match target {
        Target::Spawn { program, argv, env } => t.spawn(program, argv, env)?,
        Target::Attach { pids } => t.attach(pids)?,
    }
    install_handler(libc::SIGALRM, on_alarm);
    arm_flush_timer();
    let result = t.event_loop();
    disarm_flush_timer();
    result?;
    t.write_manifest()?;
    t.summary.root_status = t.root_status;
    t.summary.captures = t.counts;
    t.summary.duration = started.elapsed();
    Ok(t.summary)
}

/// Keeps the tracer (and, through inheritance, a spawned command with all
/// its processes and threads) on one CPU: a stop then wakes the other side
/// without a cross-CPU interrupt, the largest single cost on virtual
/// machines. Threads are kept there too: let free, db_bench's took four
/// times as long (BENCHMARKS.md).
fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is an empty set; the calls only touch it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

impl Tracer<'_, '_> {
    fn seq(&mut self) -> u64 {
        let s = self.next_seq;
        self.next_seq += 1;
        s
    }

    fn write(&mut self, r: Record) -> Result<(), Error> {
        self.sink.record(r)
    }

    /// Records what `path` looked like before the trace first touched it.
    fn snapshot(&mut self, path: &[u8], need: Need) -> Result<(), Error> {
        self.write_states(|snap, seq, out| snap.touch(path, need, seq, now_ns(), out))
    }

    /// Writes the final state of every path the trace touched.
    fn write_manifest(&mut self) -> Result<(), Error> {
        self.write_states(|snap, seq, out| snap.manifest(seq, now_ns(), out))?;
        self.summary.note_snapshots(&self.snap);
        Ok(())
    }

    /// Runs one snapshotter step with the next sequence ids and writes the
    /// records it makes.
    fn write_states(
        &mut self,
        step: impl FnOnce(&mut Snapshotter, &mut dyn FnMut() -> u64, &mut dyn FnMut(Record)),
    ) -> Result<(), Error> {
        let mut records = Vec::new();
        let mut next = self.next_seq;
        step(
            &mut self.snap,
            &mut || {
                next += 1;
                next - 1
            },
            &mut |r| records.push(r),
        );
        self.next_seq = next;
        records.into_iter().try_for_each(|r| self.write(r))
    }

    /// Forks and execs the command stopped at its first instruction under
    /// the recorder.
    fn spawn(&mut self, program: &CString, argv: &[CString], env: &[CString]) -> Result<(), Error> {
        let pid = fork_stopped(program, argv, env, None)?;
        sys::seize(pid, OPTIONS | libc::PTRACE_O_EXITKILL).map_err(Error::Ptrace)?;
        self.root = Some(pid);
        let seq = self.seq();
        let start = spawned_start(pid, seq, program, argv, env)?;
        self.adopt(pid, start)?;
        self.own_sigcont = Some(pid);
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(pid, libc::SIGCONT) };
        Ok(())
    }

    /// Seizes every thread of every process in `pids`.
    fn attach(&mut self, pids: &[i32]) -> Result<(), Error> {
        watch_stop_signals();
        for &pid in pids {
            let tids = task_ids(pid).map_err(|e| Error::Attach(pid, e))?;
            for tid in tids {
                if self.tasks.contains_key(&tid) {
                    continue;
                }
                match sys::seize(tid, OPTIONS) {
                    Ok(()) => {}
                    // A thread that exited since the listing.
                    Err(e) if e.raw_os_error() == Some(libc::ESRCH) && tid != pid => continue,
                    Err(e) => return Err(Error::Attach(pid, e)),
                }
                let _ = sys::interrupt(tid);
                if let Some(start) = process_start(tid, StartCause::Attached, self.seq(), now_ns())
                {
                    self.adopt(tid, start)?;
                }
            }
        }
        Ok(())
    }

    /// Starts following `tid` and records its start.
    fn adopt(&mut self, tid: i32, start: ProcessStart) -> Result<(), Error> {
        let tgid = start.tgid;
        if tgid == tid as u32 {
            self.summary.processes += 1;
        }
        self.summary.threads += 1;
        self.tasks.insert(
            tid,
            Task {
                tgid,
                pending: None,
                captures: Captures::default(),
                superseded: None,
            },
        );
        self.write(Record::ProcessStart(start))
    }

    /// First sight of a task created by a traced one.
    fn adopt_created(&mut self, tid: i32) -> Result<(), Error> {
        if self.tasks.contains_key(&tid) {
            return Ok(());
        }
        let seq = self.seq();
        let start =
            process_start(tid, StartCause::Created, seq, now_ns()).unwrap_or(ProcessStart {
                seq,
                time_ns: now_ns(),
                tgid: tid as u32,
                tid: tid as u32,
                cause: StartCause::Created,
                ..ProcessStart::default()
            });
        self.adopt(tid, start)
    }

    fn event_loop(&mut self) -> Result<(), Error> {
        loop {
            if stop_requested() && !self.detaching {
                self.begin_detach();
            }
            if self.detaching && self.tasks.is_empty() {
                return Ok(());
            }
            if self.last_flush.elapsed() >= FLUSH_EVERY {
                self.sink.flush()?;
                self.last_flush = Instant::now();
            }
            let (pid, status) = match sys::wait_any() {
                Ok(Some(x)) => x,
                Ok(None) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(Error::Ptrace(e)),
            };
            if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
                self.on_exit(pid, status)?;
                continue;
            }
            if !libc::WIFSTOPPED(status) {
                continue;
            }
            if !self.tasks.contains_key(&pid) {
                self.adopt_created(pid)?;
            }
            let sig = libc::WSTOPSIG(status);
            let event = status >> 16;
            if self.detaching {
                self.detach_one(pid, sig, event);
                continue;
            }
            let resume_sig = if sig == libc::SIGTRAP | 0x80 {
                self.on_syscall_stop(pid)?;
                0
            } else if event != 0 {
                match event {
                    libc::PTRACE_EVENT_FORK
                    | libc::PTRACE_EVENT_VFORK
                    | libc::PTRACE_EVENT_CLONE => {
                        if let Ok(child) = sys::event_msg(pid) {
                            self.adopt_created(child as i32)?;
                        }
                    }
                    libc::PTRACE_EVENT_EXEC => self.on_exec(pid)?,
                    libc::PTRACE_EVENT_STOP => {
                        if matches!(
                            sig,
                            libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
                        ) {
                            // A group-stop: stay stopped, but keep reporting.
                            let _ = sys::listen(pid);
                            continue;
                        }
                    }
                    _ => {}
                }
                0
            } else {
                self.on_signal(pid, sig)?;
                sig
            };
            // ESRCH: the tracee was killed meanwhile; its exit comes next.
            let _ = sys::resume_syscall(pid, resume_sig);
        }
    }

    fn on_syscall_stop(&mut self, pid: i32) -> Result<(), Error> {
        let Ok(info) = sys::syscall_info(pid) else {
            return Ok(());
        };
        let policy = self.policy;
        match info.op {
            OP_ENTRY => {
                let task = self
                    .tasks
                    .get_mut(&pid)
                    .expect("task adopted before dispatch");
                let mut head = SyscallHead {
                    seq: 0,
                    tgid: task.tgid,
                    tid: pid as u32,
                    nr: info.nr(),
                    enter_ns: now_ns(),
                    args: info.args(),
                    exit: None,
                };
                task.captures.clear();
                let mut touched = Vec::new();
                if let Some(row) = catalogue::by_nr(head.nr) {
                    let view = CallView {
                        pid,
                        args: &head.args,
                        ret: None,
                        role: Role::Entry,
                        shared: self.shared.of(head.tgid),
                    };
                    capture(row, &view, policy, &mut task.captures, &mut self.counts);
                    let caps = &task.captures;
                    touched = touched_paths(pid, row, &head.args, |arg| caps.entry_bytes(arg));
                }
                // The state of each path before this call touches it: these
                // records take smaller ids than the call itself.
                for (path, need) in touched {
                    self.snapshot(&path, need)?;
                }
                head.seq = self.seq();
                let task = self
                    .tasks
                    .get_mut(&pid)
                    .expect("task adopted before dispatch");
                task.pending = Some(head);
            }
            OP_EXIT => {
                let task = self
                    .tasks
                    .get_mut(&pid)
                    .expect("task adopted before dispatch");
                let Some(mut head) = task.pending.take() else {
                    // The exit of a call already under way when we attached.
                    self.summary.entered_before_attach += 1;
                    return Ok(());
                };
                let exit = SyscallExit {
                    exit_ns: now_ns(),
                    ret: info.rval(),
                    is_error: info.is_error(),
                };
                head.exit = Some(exit);
                if let Some(row) = catalogue::by_nr(head.nr) {
                    let ret = (!exit.is_error).then_some(exit.ret);
                    let view = CallView {
                        pid,
                        args: &head.args,
                        ret,
                        role: Role::Exit,
                        shared: &[],
                    };
                    capture(row, &view, policy, &mut task.captures, &mut self.counts);
                    if let Some(ret) = ret {
                        self.shared
                            .after_call(head.tgid, row.effect, &head.args, ret);
                    }
                }
                self.write_syscall(pid, &head)?;
                self.end_superseded(pid)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn write_syscall(&mut self, pid: i32, head: &SyscallHead) -> Result<(), Error> {
        let task = self.tasks.get(&pid).expect("task exists");
        self.sink.call(head, &task.captures)
    }

    /// `execve` succeeded. If a non-leader thread called it, that thread
    /// now has the leader's id: move its state over.
    /// The old leader vanishes without an exit report; a call it was
    /// inside is recorded unfinished.
    fn on_exec(&mut self, pid: i32) -> Result<(), Error> {
        let Ok(former) = sys::event_msg(pid) else {
            return Ok(());
        };
        let former = former as i32;
        if let Some(task) = self.tasks.get(&former).or_else(|| self.tasks.get(&pid)) {
            let tgid = task.tgid;
            self.summary.mappings_at_exit += self.shared.forget(tgid) as u64;
        }
        if former != pid {
            if let Some(mut task) = self.tasks.remove(&former) {
                task.superseded = Some(former);
                if let Some(old) = self.tasks.insert(pid, task) {
                    if let Some(head) = &old.pending {
                        self.summary.unfinished += 1;
                        self.sink.call(head, &old.captures)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Records the end of the thread id `pid` had before its exec, once.
    fn end_superseded(&mut self, pid: i32) -> Result<(), Error> {
        let Some(task) = self.tasks.get_mut(&pid) else {
            return Ok(());
        };
        match task.superseded.take() {
            Some(former) => {
                let tgid = task.tgid;
                self.write_end(tgid, former, ExitStatus::Superseded { by: pid as u32 })
            }
            None => Ok(()),
        }
    }

    fn on_signal(&mut self, pid: i32, sig: i32) -> Result<(), Error> {
        if sig == libc::SIGCONT && self.own_sigcont == Some(pid) {
            self.own_sigcont = None;
            return Ok(());
        }
        let (code, sender) = match sys::siginfo(pid) {
            // SAFETY: si_pid is meaningful for the signals that carry it and
            // zero-initialised otherwise.
            Ok(si) => (si.si_code, unsafe { si.si_pid() } as u32),
            Err(_) => (0, 0),
        };
        let tgid = self.tasks.get(&pid).map_or(pid as u32, |t| t.tgid);
        let seq = self.seq();
        self.write(Record::Signal(SignalDelivery {
            seq,
            time_ns: now_ns(),
            tgid,
            tid: pid as u32,
            signo: sig,
            code,
            sender,
        }))
    }

    /// A tracee ended: finish the call it was in (exit_group, or killed
    /// mid-call) and record how it ended.
    fn on_exit(&mut self, pid: i32, status: i32) -> Result<(), Error> {
        let Some(task) = self.tasks.remove(&pid) else {
            return Ok(());
        };
        if let Some(head) = &task.pending {
            // exit and exit_group never return: that is not a loss.
            if !matches!(catalogue::name_of(head.nr).as_ref(), "exit" | "exit_group") {
                self.summary.unfinished += 1;
            }
            self.sink.call(head, &task.captures)?;
        }
        if let Some(former) = task.superseded {
            self.write_end(task.tgid, former, ExitStatus::Superseded { by: pid as u32 })?;
        }
        let how = exit_status(status);
        if self.root == Some(pid) {
            self.root_status = Some(how);
        }
        if pid as u32 == task.tgid {
            self.summary.mappings_at_exit += self.shared.forget(task.tgid) as u64;
        }
        self.write_end(task.tgid, pid, how)
    }

    /// Records the end of task `tid`.
    fn write_end(&mut self, tgid: u32, tid: i32, status: ExitStatus) -> Result<(), Error> {
        let seq = self.seq();
        self.write(Record::ProcessExit(ProcessExit {
            seq,
            time_ns: now_ns(),
            tgid,
            tid: tid as u32,
            status,
        }))
    }

    /// Asks every tracee to stop so each can be detached at its next stop.
    fn begin_detach(&mut self) {
        self.detaching = true;
        for &tid in self.tasks.keys() {
            let _ = sys::interrupt(tid);
        }
    }

    /// Detaches one stopped tracee, handing back a signal it was about to
    /// receive, and records the calls it leaves unfinished.
    fn detach_one(&mut self, pid: i32, sig: i32, event: i32) {
        let pass = if event == 0 && sig != (libc::SIGTRAP | 0x80) {
            sig
        } else {
            0
        };
        let _ = sys::detach(pid, pass);
        if let Some(task) = self.tasks.remove(&pid) {
            if let Some(head) = &task.pending {
                self.summary.unfinished += 1;
                let _ = self.sink.call(head, &task.captures);
            }
            if let Some(former) = task.superseded {
                let _ =
                    self.write_end(task.tgid, former, ExitStatus::Superseded { by: pid as u32 });
            }
            let _ = self.write_end(task.tgid, pid, ExitStatus::Detached);
        }
    }
}
