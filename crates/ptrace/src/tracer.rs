//! The tracers: one thread per CPU the recording may use, each with its
//! own `waitpid(-1, __WALL | __WNOTHREAD)` loop over the tasks it traces.
//!
//! Per system call there are two stops (entry and exit), each answered
//! with one `PTRACE_GET_SYSCALL_INFO`; input memory is read at entry,
//! output memory at exit, straight into the task's capture buffer, and the
//! event is written when it exits. Sequence ids are taken at entry, so a
//! clone's id precedes everything its child does.
//!
//! A stop costs the kernel two context switches on the tracer's CPU, so
//! one tracer is one CPU's worth of stops. With several, a new thread or
//! process is handed to the tracer with the fewest tasks at its first
//! stop (see [`Tracer::hand_over`]), and runs on that tracer's CPU. Every
//! record goes to the trace under one lock, with its completion time
//! taken under it, so the trace stays in completion order.

use std::collections::{HashMap, HashSet};
use std::ffi::CString;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

use reanimator_catalogue::{self as catalogue, Effect, Kind};
use reanimator_fsstate::{Need, SnapshotPolicy, Snapshotter};
use reanimator_trace::{
    ExitStatus, ProcessExit, ProcessStart, Record, Role, SignalDelivery, StartCause, SyscallExit,
    SyscallHead, Writer,
};

use reanimator_record::{
    clear_stop_request, discard_stopped, exit_status, files_open_at_start, fork_stopped,
    install_handler, keep_messages_out_of, now_ns, process_start, signal_sender, spawned_start,
    stop_requested, take_refused_reads, task_ids, touched_paths, watch_stop_signals,
    with_writer_thread, CaptureCounts, Captures, DataPolicy, Error, FlushClock, LeftBehind,
    RecordSummary, SavedState, Sink, Target,
};

use crate::capture::{capture, CallView};
use crate::sys::{self, CpuMask, OP_ENTRY, OP_EXIT};
use reanimator_record::mappings::{record_at_exit, SharedMappings};

use crate::uring::{self, Rings};

/// ptrace options for every tracee.
const OPTIONS: libc::c_int = libc::PTRACE_O_TRACESYSGOOD
    | libc::PTRACE_O_TRACECLONE
    | libc::PTRACE_O_TRACEFORK
    | libc::PTRACE_O_TRACEVFORK
    | libc::PTRACE_O_TRACEEXEC
    | libc::PTRACE_O_TRACEEXIT;

/// How often a tracer wakes up however idle its tasks are.
const TICK: Duration = Duration::from_millis(250);

/// How long a letter may wait unread before its tracer is nudged again (a
/// nudge that lands just before the tracer blocks in `waitpid` is lost).
const RENUDGE_AFTER_NS: u64 = 1_000_000;

/// The machine code of `syscall` on x86_64, as a little-endian word.
const SYSCALL_INSN: u64 = 0x050f;

extern "C" fn on_alarm(_: libc::c_int) {}

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
    /// Created by a traced task and not yet stopped: its first stop may
    /// hand it to a less busy tracer.
    fresh: bool,
    /// Handed over by another tracer: what to put back at its first stop.
    restore: Option<Parked>,
    /// The CPUs it would run on had the recorder not pinned it, which
    /// `sched_getaffinity` shows it; `None` while its mask is its own
    /// (never pinned, or set by the program since).
    cpus_shown: Option<CpuMask>,
    /// The thread the call it is inside created, by the id the recorder
    /// sees (the kernel's fork, vfork or clone event), noted on the call's
    /// record if the call returns another id (a PID namespace's).
    created: Option<u32>,
}

impl Task {
    fn new(tgid: u32) -> Task {
        Task {
            tgid,
            pending: None,
            captures: Captures::default(),
            superseded: None,
            fresh: false,
            restore: None,
            cpus_shown: None,
            created: None,
        }
    }
}

/// What a hand-over changed in a task, to undo once the new tracer holds
/// it.
#[derive(Clone, Copy)]
struct Parked {
    regs: libc::user_regs_struct,
    sigmask: u64,
}

/// A message from one tracer to another.
enum Letter {
    /// Seize this task, parked in `pause` with every signal blocked, and
    /// put back its registers and mask.
    Task {
        tid: i32,
        tgid: u32,
        parked: Box<Parked>,
        cpus_shown: Option<CpuMask>,
    },
    /// This thread-group leader was replaced by a thread of another tracer
    /// that called `execve`: the kernel reports nothing more about it.
    Vanished(i32),
    /// A `waitpid` report about a task another tracer follows.
    Report { pid: i32, status: i32 },
}

/// One tracer thread as the others see it.
struct Station {
    /// The CPU it and its tasks run on. A stop then wakes the other side
    /// without a cross-CPU interrupt, the largest single cost on virtual
    /// machines; threads are kept there too (let free, db_bench's took
    /// four times as long: BENCHMARKS.md).
    cpu: Option<usize>,
    /// Tasks it traces, plus letters on their way to it.
    load: AtomicUsize,
    inbox: Mutex<Vec<Letter>>,
    /// When the oldest unread letter was posted (0: none).
    posted_ns: AtomicU64,
    /// Its kernel thread id and handle, once it runs.
    thread: OnceLock<(i32, Thread)>,
}

/// Everything the tracer threads share.
struct Shared<'s, 'q> {
    common: Mutex<Common<'s, 'q>>,
    policy: DataPolicy,
    next_seq: AtomicU64,
    /// Tasks followed or on their way between tracers, across all tracers
    /// (plus one while the first tracer starts the target): the recording
    /// ends when it reaches zero.
    live: AtomicUsize,
    /// A tracer failed: the others stop too.
    failed: AtomicBool,
    stations: Vec<Station>,
    /// The recorder's CPUs before its tracers pinned themselves: what the
    /// spawned command, which starts pinned, is shown (`None` when
    /// nothing is pinned).
    spawned_cpus: Option<CpuMask>,
    /// Set once the final state is in the trace (or will never be): the
    /// tracers then let go of the tasks they hold stopped to detach.
    released: (Mutex<bool>, std::sync::Condvar),
}

/// What is written to the trace, and the state behind it, under one lock.
struct Common<'s, 'q> {
    sink: &'s mut Sink<'q>,
    summary: RecordSummary,
    /// The initial state of touched paths, and the final manifest.
    snap: Snapshotter,
    /// Where stores reach files without system calls.
    maps: SharedMappings,
    /// io_uring rings, whose requests no call argument holds.
    rings: Rings,
    root: Option<i32>,
    root_status: Option<ExitStatus>,
    /// The SIGCONT the recorder itself sent to start a spawned command.
    own_sigcont: Option<i32>,
    /// ptrace options of the tracees (the spawned command's include
    /// `EXITKILL`), for tasks a tracer seizes from another.
    options: libc::c_int,
}

impl<'s, 'q> Shared<'s, 'q> {
    /// Records the call `task` was inside, if any, without an exit.
    fn write_unfinished(&self, task: &Task) -> Result<(), Error> {
        match &task.pending {
            Some(head) => {
                let mut c = self.lock();
                c.summary.unfinished += 1;
                c.sink.call(head, &task.captures)
            }
            None => Ok(()),
        }
    }

    /// Every capture `row` calls for in this pass of process `tgid`'s
    /// call: the memory its arguments name, and the io_uring ring its
    /// descriptor names (whose layout only the shared state knows).
    fn capture(
        &self,
        tgid: u32,
        row: &catalogue::Syscall,
        view: &CallView<'_>,
        out: &mut Captures,
        counts: &mut CaptureCounts,
    ) {
        capture(row, view, self.policy, out, counts);
        if uring::reads_rings(row) {
            let rings = &mut self.lock().rings;
            uring::capture(rings, tgid, row, view, self.policy, out, counts);
        }
    }

    fn seq(&self) -> u64 {
        self.next_seq.fetch_add(1, Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, Common<'s, 'q>> {
        // A tracer that panicked holding the lock cannot have left the
        // sink in a state worse than a torn batch; keep recording.
        self.common.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs one snapshotter step with the next sequence ids and writes the
    /// records it makes.
    fn write_states(
        &self,
        c: &mut Common<'_, '_>,
        step: impl FnOnce(&mut Snapshotter, &mut dyn FnMut() -> u64, &mut dyn FnMut(Record)),
    ) -> Result<(), Error> {
        let mut records = Vec::new();
        step(&mut c.snap, &mut || self.seq(), &mut |r| records.push(r));
        records.into_iter().try_for_each(|r| c.sink.record(r))
    }

    /// Posts `letter` to tracer `to` and wakes it, wherever it waits.
    fn post(&self, to: usize, letter: Letter) {
        let st = &self.stations[to];
        if let Letter::Task { .. } = letter {
            st.load.fetch_add(1, Ordering::Relaxed);
        }
        st.inbox
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(letter);
        let _ = st
            .posted_ns
            .compare_exchange(0, now_ns(), Ordering::AcqRel, Ordering::Relaxed);
        self.wake(to);
    }

    fn wake(&self, to: usize) {
        if let Some((tid, thread)) = self.stations[to].thread.get() {
            thread.unpark();
            sys::nudge(*tid);
        }
    }

    fn wake_others(&self, me: usize) {
        (0..self.stations.len())
            .filter(|&i| i != me)
            .for_each(|i| self.wake(i));
    }

    /// Nudges again any tracer that left a letter unread for too long.
    fn renudge(&self, me: usize) {
        for (i, st) in self.stations.iter().enumerate() {
            let at = st.posted_ns.load(Ordering::Acquire);
            if i != me && at != 0 && now_ns().saturating_sub(at) > RENUDGE_AFTER_NS {
                let _ = st.posted_ns.compare_exchange(
                    at,
                    now_ns(),
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                );
                self.wake(i);
            }
        }
    }

    /// The tracer a new task of tracer `me` should go to: the least busy
    /// one, if it has at least two tasks fewer than `me` without the new
    /// one. The creator is counted as if idle, since it often just waits
    /// for what it created (a shell running commands one by one: moving
    /// each one cost 12% there), so a second task is moved but not the
    /// first: `sh -c 'a | b'` and two worker threads still spread.
    fn lighter_than(&self, me: usize) -> Option<usize> {
        let mine = self.stations[me]
            .load
            .load(Ordering::Relaxed)
            .saturating_sub(1);
        let (best, load) = self
            .stations
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != me)
            .map(|(i, st)| (i, st.load.load(Ordering::Relaxed)))
            .min_by_key(|&(_, l)| l)?;
        (load + 1 < mine).then_some(best)
    }

    /// One task fewer: the last one wakes every tracer to finish.
    fn retire(&self, me: usize) {
        self.stations[me].load.fetch_sub(1, Ordering::Relaxed);
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.wake_others(me);
        }
    }

    /// The first tracer has started the target: drop the token that kept
    /// the others from finishing before it had.
    fn retire_start(&self) {
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.wake_others(0);
        }
    }

    fn done(&self) -> bool {
        self.live.load(Ordering::Acquire) == 0 || self.failed.load(Ordering::Acquire)
    }

    /// Lets every tracer detach the tasks it holds.
    fn release(&self) {
        *self.released.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.released.1.notify_all();
    }

    /// Waits for [`Shared::release`].
    fn wait_for_release(&self) {
        let mut released = self.released.0.lock().unwrap_or_else(|e| e.into_inner());
        while !*released {
            released = self
                .released
                .1
                .wait(released)
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Runs `target` under the recorder until every tracee has exited (or,
/// for attached processes, until `SIGINT`/`SIGTERM` asks to detach), writing
/// every event to `writer`. One tracer runs per CPU in `cpus`, pinned
/// there; with none, one tracer runs wherever the scheduler puts it.
pub(crate) fn run<W: Write + Send>(
    target: &Target,
    policy: DataPolicy,
    cpus: &[usize],
    snapshot: SnapshotPolicy,
    writer: &mut Writer<W>,
) -> Result<RecordSummary, Error> {
    let mut snap = Snapshotter::new(snapshot).map_err(Error::Ptrace)?;
    if let Some(own) = writer.path() {
        snap.leave_out(own.as_os_str().as_encoded_bytes());
    }
    with_writer_thread(writer, |sink| trace(target, policy, cpus, snap, sink))
}

fn trace(
    target: &Target,
    policy: DataPolicy,
    cpus: &[usize],
    snap: Snapshotter,
    sink: &mut Sink<'_>,
) -> Result<RecordSummary, Error> {
    let _restore = SavedState::save();
    clear_stop_request();
    take_refused_reads();
    let started = Instant::now();
    let spawned_cpus = if cpus.is_empty() {
        None
    } else {
        CpuMask::of(0).ok()
    };
    let placement: Vec<Option<usize>> = if cpus.is_empty() {
        vec![None]
    } else {
        cpus.iter().copied().map(Some).collect()
    };
    let shared = Shared {
        common: Mutex::new(Common {
            sink,
            summary: RecordSummary::default(),
            snap,
            maps: SharedMappings::default(),
            rings: Rings::default(),
            root: None,
            root_status: None,
            own_sigcont: None,
            options: OPTIONS,
        }),
        policy,
        next_seq: AtomicU64::new(1),
        live: AtomicUsize::new(1),
        failed: AtomicBool::new(false),
        stations: placement
            .iter()
            .map(|&cpu| Station {
                cpu,
                load: AtomicUsize::new(0),
                inbox: Mutex::new(Vec::new()),
                posted_ns: AtomicU64::new(0),
                thread: OnceLock::new(),
            })
            .collect(),
        spawned_cpus,
        released: Default::default(),
    };
    install_handler(libc::SIGALRM, on_alarm);
    let counts = std::thread::scope(|scope| {
        let mut others = Vec::new();
        for id in 1..shared.stations.len() {
            let shared = &shared;
            let spawned = std::thread::Builder::new()
                .name(format!("tracer-{id}"))
                .spawn_scoped(scope, move || Tracer::new(id, shared).run(|_| Ok(())));
            match spawned {
                Ok(handle) => others.push(handle),
                Err(e) => {
                    // Nothing is traced yet: stop the tracers already up.
                    shared.failed.store(true, Ordering::Release);
                    shared.wake_others(0);
                    shared.release();
                    return Err(Error::Spawn(e));
                }
            }
        }
        let mut result = Tracer::new(0, &shared).run(|t| match target {
            Target::Spawn { program, argv, env } => t.spawn(program, argv, env),
            Target::Attach { pids } => t.attach(pids),
        });
        for handle in others {
            // `run` catches panics, so join only fails on a panic in the
            // thread's own teardown.
            let joined = handle.join().unwrap_or_else(|_| Err(panicked()));
            result = match (result, joined) {
                (Ok(a), Ok(b)) => Ok(a.plus(b)),
                (Err(e), _) | (_, Err(e)) => Err(e),
            };
        }
        result
    });
    let counts = counts?;
    let mut c = shared.lock();
    let c = &mut *c;
    c.summary.note_snapshots(&c.snap);
    let mut summary = std::mem::take(&mut c.summary);
    summary.root_status = c.root_status;
    summary.captures = CaptureCounts {
        refused: take_refused_reads(),
        ..counts
    };
    summary.duration = started.elapsed();
    Ok(summary)
}

/// One tracer thread: the tasks it traces and its loop.
struct Tracer<'a, 's, 'q> {
    id: usize,
    shared: &'a Shared<'s, 'q>,
    tasks: HashMap<i32, Task>,
    /// Tasks first seen at a stop of their own, before their creator's
    /// fork or clone event. That event must not adopt them again: by then
    /// they may have moved to another tracer or exited (a second start
    /// record made replay wait for a birth that never came).
    adopted_early: HashSet<i32>,
    counts: CaptureCounts,
    detaching: bool,
    /// Tasks stopped to be detached, with the signal each is to get: they
    /// stay stopped until the final state is recorded, so what they do
    /// after the recording is not in it.
    held: Vec<(i32, i32)>,
    /// SIGTERM ended a spawned command's recording: its tasks are killed.
    killing: bool,
    left_behind: LeftBehind,
    flushes: FlushClock,
}

impl<'a, 's, 'q> Tracer<'a, 's, 'q> {
    fn new(id: usize, shared: &'a Shared<'s, 'q>) -> Self {
        Tracer {
            id,
            shared,
            tasks: HashMap::new(),
            adopted_early: HashSet::new(),
            counts: CaptureCounts::default(),
            detaching: false,
            held: Vec::new(),
            killing: false,
            left_behind: LeftBehind::default(),
            flushes: FlushClock::new(),
        }
    }

    /// Pins this thread (and so what it spawns) to its CPU, runs `start`
    /// (the first tracer starts or attaches to the target), then traces
    /// until the recording ends.
    fn run(
        mut self,
        start: impl FnOnce(&mut Self) -> Result<(), Error>,
    ) -> Result<CaptureCounts, Error> {
        if let Some(cpu) = self.shared.stations[self.id].cpu {
            sys::pin(0, cpu);
        }
        let me = (sys::gettid(), std::thread::current());
        let _ = self.shared.stations[self.id].thread.set(me);
        // A tracer that stopped on a bug must stop the others too: they
        // would wait for its tasks for ever.
        let mut result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let started = start(&mut self);
            if self.id == 0 {
                // The target is adopted (or failed to start): the count now
                // holds its tasks alone.
                self.shared.retire_start();
            }
            // Ticking only from here: a signal would cut short the wait in
            // `spawn` for the command to stop before its exec.
            started
                .and_then(|()| sys::Tick::start(TICK).map_err(Error::Ptrace))
                .and_then(|_tick| self.event_loop())
        }))
        .unwrap_or_else(|_| Err(panicked()));
        if result.is_err() {
            self.shared.failed.store(true, Ordering::Release);
            self.shared.wake_others(self.id);
        }
        // Every task has ended, or is held stopped: the files are as the
        // trace leaves them. The first tracer records them, then all let
        // go of what they hold.
        if self.id == 0 {
            let recorded = match &result {
                Ok(()) if !self.shared.failed.load(Ordering::Acquire) => {
                    let mut c = self.shared.lock();
                    self.shared
                        .write_states(&mut c, |snap, seq, out| snap.manifest(seq, now_ns(), out))
                }
                _ => Ok(()),
            };
            self.shared.release();
            result = result.and(recorded);
        } else {
            self.shared.wait_for_release();
        }
        for (pid, sig) in std::mem::take(&mut self.held) {
            let _ = sys::detach(pid, sig);
        }
        result.map(|()| self.counts)
    }

    fn write(&self, r: Record) -> Result<(), Error> {
        self.shared.lock().sink.record(r)
    }

    /// Forks and execs the command stopped at its first instruction under
    /// the recorder.
    fn spawn(&mut self, program: &CString, argv: &[CString], env: &[CString]) -> Result<(), Error> {
        let pid = fork_stopped(program, argv, env, None)?;
        self.follow_spawned(pid, program, argv, env)
            .inspect_err(|_| discard_stopped(pid))
    }

    /// Seizes the command [`fork_stopped`] made, records its start and
    /// lets it run.
    fn follow_spawned(
        &mut self,
        pid: i32,
        program: &CString,
        argv: &[CString],
        env: &[CString],
    ) -> Result<(), Error> {
        let options = OPTIONS | libc::PTRACE_O_EXITKILL;
        // EPERM: the recorder is traced itself (a nested ptrace recording)
        // or ptrace is restricted here.
        sys::seize(pid, options).map_err(|e| Error::Attach(pid, e))?;
        let seq = self.shared.seq();
        let start = spawned_start(pid, seq, program, argv, env)?;
        self.record_states_of(files_open_at_start(&start))?;
        {
            let mut c = self.shared.lock();
            c.options = options;
            c.root = Some(pid);
            c.own_sigcont = Some(pid);
        }
        self.adopt(pid, start)?;
        if let Some(task) = self.tasks.get_mut(&pid) {
            task.cpus_shown = self.shared.spawned_cpus;
        }
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(pid, libc::SIGCONT) };
        Ok(())
    }

    /// Seizes every thread of every process in `pids`.
    fn attach(&mut self, pids: &[i32]) -> Result<(), Error> {
        watch_stop_signals();
        for &pid in pids {
            // Every thread is told to stop before any is looked at, so
            // their descriptors and the files behind them are read as of
            // one moment (a thread still running could otherwise open or
            // close one between two threads' starts). Listed again until
            // no new thread shows up: one not yet seized may create one.
            let mut seized = Vec::new();
            loop {
                let tids = task_ids(pid).map_err(|e| Error::Attach(pid, e))?;
                let fresh: Vec<i32> = tids
                    .into_iter()
                    .filter(|tid| !self.tasks.contains_key(tid) && !seized.contains(tid))
                    .collect();
                if fresh.is_empty() {
                    break;
                }
                for tid in fresh {
                    match sys::seize(tid, OPTIONS) {
                        Ok(()) => {}
                        // A thread that exited since the listing.
                        Err(e) if e.raw_os_error() == Some(libc::ESRCH) && tid != pid => continue,
                        Err(e) => return Err(Error::Attach(pid, e)),
                    }
                    let _ = sys::interrupt(tid);
                    seized.push(tid);
                }
            }
            let mut open_files = Vec::new();
            for tid in seized {
                let seq = self.shared.seq();
                if let Some(start) = process_start(tid, StartCause::Attached, seq, now_ns()) {
                    if tid == pid {
                        open_files = files_open_at_start(&start);
                    }
                    self.adopt(tid, start)?;
                }
            }
            // Once every thread has been told to stop.
            self.record_states_of(open_files)?;
        }
        Ok(())
    }

    /// Records the state of `files`, those a process held open when it
    /// was first followed that replay opens again
    /// ([`files_open_at_start`]), before the process runs on.
    fn record_states_of(&self, files: Vec<Vec<u8>>) -> Result<(), Error> {
        keep_messages_out_of(&files);
        let mut c = self.shared.lock();
        for path in files {
            self.shared.write_states(&mut c, |snap, seq, out| {
                snap.touch(&path, Need::Contents, seq, now_ns(), out)
            })?;
        }
        Ok(())
    }

    /// Starts following `tid` and records its start.
    fn adopt(&mut self, tid: i32, start: ProcessStart) -> Result<(), Error> {
        let tgid = start.tgid;
        self.shared.live.fetch_add(1, Ordering::AcqRel);
        self.shared.stations[self.id]
            .load
            .fetch_add(1, Ordering::Relaxed);
        self.tasks.insert(tid, Task::new(tgid));
        let mut c = self.shared.lock();
        if tgid == tid as u32 {
            c.summary.processes += 1;
        }
        c.summary.threads += 1;
        c.sink.record(Record::ProcessStart(start))
    }

    /// First sight of a task created by a traced one.
    fn adopt_created(&mut self, tid: i32) -> Result<(), Error> {
        if self.tasks.contains_key(&tid) {
            return Ok(());
        }
        let seq = self.shared.seq();
        let start =
            process_start(tid, StartCause::Created, seq, now_ns()).unwrap_or(ProcessStart {
                seq,
                time_ns: now_ns(),
                tgid: tid as u32,
                tid: tid as u32,
                cause: StartCause::Created,
                ..ProcessStart::default()
            });
        self.adopt(tid, start)?;
        // Pinned like its creator (whose view its creator's clone event
        // passes on, if it comes while the task is still here), or with a
        // mask of its own.
        let pinned = self.shared.stations[self.id]
            .cpu
            .is_some_and(|cpu| CpuMask::of(tid).is_ok_and(|m| m == CpuMask::only(cpu)));
        if let Some(task) = self.tasks.get_mut(&tid) {
            task.fresh = true;
            task.cpus_shown = self.shared.spawned_cpus.filter(|_| pinned);
        }
        Ok(())
    }

    fn event_loop(&mut self) -> Result<(), Error> {
        loop {
            self.read_mail()?;
            if stop_requested() {
                self.on_stop_request();
            }
            if self.shared.done() {
                return Ok(());
            }
            self.shared.renudge(self.id);
            if self.flushes.due() {
                let mut c = self.shared.lock();
                c.sink.flush()?;
                if self.id == 0 {
                    let ended = c.root.is_some() && c.root_status.is_some();
                    drop(c);
                    let live = self.shared.live.load(Ordering::Acquire);
                    self.left_behind.tick(ended.then_some(live));
                }
            }
            let (pid, status) = match sys::wait_any() {
                Ok(Some(x)) => x,
                Ok(None) => {
                    // Nothing of this tracer's left to wait for: tasks it
                    // still lists vanished unreported; then wait for mail
                    // or the end.
                    self.forget_all()?;
                    std::thread::park_timeout(TICK);
                    continue;
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(Error::Ptrace(e)),
            };
            // A letter posted before this event happened is read first: a
            // leader another tracer's exec replaced must be forgotten
            // before the process's later exit reaches this tracer.
            self.read_mail()?;
            if self.id == 0 && self.reported_to_parent(pid, status) {
                // A leader this tracer followed until that exec is gone.
                self.forget(pid)?;
                self.tell_others(|| Letter::Report { pid, status });
                continue;
            }
            self.on_report(pid, status)?;
        }
    }

    /// Whether a report that reached the first tracer is about the
    /// spawned command's leader while another tracer follows it: after a
    /// thread of that tracer exec'd (the exec report included), the kernel
    /// reports the leader to its parent, this thread, as if to its tracer,
    /// since they share a thread group.
    fn reported_to_parent(&self, pid: i32, status: i32) -> bool {
        let exec_elsewhere = || {
            libc::WIFSTOPPED(status)
                && status >> 16 == libc::PTRACE_EVENT_EXEC
                && sys::event_msg(pid).is_err()
        };
        (!self.tasks.contains_key(&pid) || exec_elsewhere()) && self.shared.lock().root == Some(pid)
    }

    /// Posts a letter to every other tracer.
    fn tell_others(&self, letter: impl Fn() -> Letter) {
        (0..self.shared.stations.len())
            .filter(|&i| i != self.id)
            .for_each(|i| self.shared.post(i, letter()));
    }

    /// Acts on one `waitpid` report of task `pid`.
    fn on_report(&mut self, pid: i32, status: i32) -> Result<(), Error> {
        if let Some(i) = self.held.iter().position(|&(held, _)| held == pid) {
            // Followed no more: a stop (killed meanwhile, at its exit)
            // waits for the detach; an end leaves nothing to detach.
            if !libc::WIFSTOPPED(status) {
                self.held.swap_remove(i);
            }
            return Ok(());
        }
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            return self.on_exit(pid, status);
        }
        if !libc::WIFSTOPPED(status) {
            return Ok(());
        }
        let sig = libc::WSTOPSIG(status);
        let event = status >> 16;
        if !self.tasks.contains_key(&pid) {
            if event == libc::PTRACE_EVENT_EXEC {
                // A thread of this tracer exec'd and took the id of a
                // leader another tracer followed.
                self.on_exec(pid)?;
                let _ = sys::resume_syscall(pid, 0);
                return Ok(());
            }
            self.adopt_created(pid)?;
            self.adopted_early.insert(pid);
        }
        let task = self.tasks.get_mut(&pid).expect("task adopted above");
        let first_stop = std::mem::take(&mut task.fresh);
        if let Some(parked) = task.restore.take() {
            // Taken over from another tracer: undo the parking. The
            // interrupted `pause` must not restart (orig_rax -1).
            let regs = libc::user_regs_struct {
                orig_rax: u64::MAX,
                ..parked.regs
            };
            let _ = sys::set_regs(pid, &regs);
            let _ = sys::set_sigmask(pid, parked.sigmask);
        }
        if self.detaching {
            // Stopped at a call's exit, the call has run: recorded as
            // returned, as the final state, read while the task is held,
            // has its effects. At an entry it runs only after the detach.
            if sig == libc::SIGTRAP | 0x80
                && sys::syscall_info(pid).is_ok_and(|info| info.op == OP_EXIT)
            {
                self.on_syscall_stop(pid)?;
            }
            self.detach_one(pid, sig, event);
            return Ok(());
        }
        let resume_sig = if sig == libc::SIGTRAP | 0x80 {
            self.on_syscall_stop(pid)?;
            0
        } else if event != 0 {
            match event {
                libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK | libc::PTRACE_EVENT_CLONE => {
                    if let Ok(child) = sys::event_msg(pid) {
                        if let Some(task) = self.tasks.get_mut(&pid) {
                            task.created = Some(child as u32);
                        }
                        // A vfork child borrows the parent's address
                        // space, which its exec or exit does not end.
                        if event == libc::PTRACE_EVENT_FORK {
                            if let Some(parent) = self.tasks.get(&pid) {
                                let tgid = parent.tgid;
                                let mut c = self.shared.lock();
                                c.maps.inherit(tgid, child as u32);
                                c.rings.inherit(tgid, child as u32);
                            }
                        }
                        if !self.adopted_early.remove(&(child as i32)) {
                            self.adopt_created(child as i32)?;
                        }
                        // The kernel copied the creator's mask.
                        let shown = self.tasks.get(&pid).map(|t| t.cpus_shown);
                        if let (Some(shown), Some(task)) =
                            (shown, self.tasks.get_mut(&(child as i32)))
                        {
                            task.cpus_shown = shown;
                        }
                    }
                }
                libc::PTRACE_EVENT_EXEC => self.on_exec(pid)?,
                libc::PTRACE_EVENT_EXIT => self.on_ending(pid)?,
                libc::PTRACE_EVENT_STOP => {
                    if matches!(
                        sig,
                        libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
                    ) {
                        // A group-stop: stay stopped, but keep reporting.
                        let _ = sys::listen(pid);
                        return Ok(());
                    }
                    if first_stop && sig == libc::SIGTRAP {
                        if let Some(to) = self.shared.lighter_than(self.id) {
                            if self.hand_over(pid, to) {
                                return Ok(());
                            }
                        }
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
        Ok(())
    }

    /// Gives task `pid`, at the first stop of its life, to tracer `to`.
    ///
    /// A tracee changes tracer only by being detached and seized again,
    /// and must not run untraced in between. So its registers are pointed
    /// back at the `syscall` instruction it just returned from (the
    /// `clone`, `fork` or `vfork` that created it) with the number of
    /// `pause`, every signal is blocked, and it is detached: it sleeps in
    /// `pause` until the other tracer seizes it and interrupts the sleep,
    /// and restores its registers and signal mask at the stop that follows.
    /// Returns false (and keeps the task) if any step fails before the
    /// detach. Were the recorder killed in the microseconds between detach
    /// and seize, the task would stay in `pause`; a spawned command is
    /// killed whole then anyway.
    fn hand_over(&mut self, pid: i32, to: usize) -> bool {
        // A seccomp filter might refuse `pause`, and the task would run
        // on untraced: such tasks stay.
        if !without_seccomp(pid) {
            return false;
        }
        let Ok(regs) = sys::regs(pid) else {
            return false;
        };
        let at = regs.rip.wrapping_sub(2);
        if !sys::peek(pid, at).is_ok_and(|w| w & 0xffff == SYSCALL_INSN) {
            return false;
        }
        let Ok(sigmask) = sys::sigmask(pid) else {
            return false;
        };
        let parking = libc::user_regs_struct {
            rax: libc::SYS_pause as u64,
            rip: at,
            ..regs
        };
        if sys::set_sigmask(pid, u64::MAX).is_err() {
            return false;
        }
        if sys::set_regs(pid, &parking).is_err() || sys::detach(pid, 0).is_err() {
            let _ = sys::set_sigmask(pid, sigmask);
            let _ = sys::set_regs(pid, &regs);
            return false;
        }
        let task = self.tasks.remove(&pid).expect("handed-over task exists");
        self.shared.stations[self.id]
            .load
            .fetch_sub(1, Ordering::Relaxed);
        let parked = Box::new(Parked { regs, sigmask });
        self.shared.post(
            to,
            Letter::Task {
                tid: pid,
                tgid: task.tgid,
                parked,
                cpus_shown: task.cpus_shown,
            },
        );
        true
    }

    /// Takes the tasks and news other tracers sent.
    fn read_mail(&mut self) -> Result<(), Error> {
        let st = &self.shared.stations[self.id];
        if st.posted_ns.load(Ordering::Acquire) == 0 {
            return Ok(());
        }
        let letters = {
            let mut inbox = st.inbox.lock().unwrap_or_else(|e| e.into_inner());
            st.posted_ns.store(0, Ordering::Release);
            std::mem::take(&mut *inbox)
        };
        let options = self.shared.lock().options;
        for letter in letters {
            match letter {
                Letter::Task {
                    tid,
                    tgid,
                    parked,
                    cpus_shown,
                } => {
                    if sys::seize(tid, options).is_err() {
                        // Killed while parked: nothing more will be heard
                        // of it.
                        self.shared.retire(self.id);
                        self.write_end(tgid, tid, ExitStatus::Detached)?;
                        continue;
                    }
                    let _ = sys::interrupt(tid);
                    let mut task = Task::new(tgid);
                    task.cpus_shown = cpus_shown;
                    if let Some(cpu) = st.cpu {
                        if task.cpus_shown.is_none() {
                            task.cpus_shown = CpuMask::of(tid).ok();
                        }
                        sys::pin(tid, cpu);
                    }
                    task.restore = Some(*parked);
                    self.tasks.insert(tid, task);
                }
                Letter::Vanished(tid) => self.forget(tid)?,
                // For this tracer if it knows the task or is its tracer (an
                // exec report may come before the task has its new id here).
                Letter::Report { pid, status }
                    if self.tasks.contains_key(&pid) || sys::event_msg(pid).is_ok() =>
                {
                    self.on_report(pid, status)?
                }
                Letter::Report { .. } => {}
            }
        }
        Ok(())
    }

    /// Stops following `tid`, which the kernel will not report again (a
    /// leader replaced by an exec'ing thread): a call it was inside is
    /// recorded unfinished.
    fn forget(&mut self, tid: i32) -> Result<(), Error> {
        let Some(task) = self.tasks.remove(&tid) else {
            return Ok(());
        };
        self.shared.retire(self.id);
        self.shared.write_unfinished(&task)
    }

    fn forget_all(&mut self) -> Result<(), Error> {
        let tids: Vec<i32> = self.tasks.keys().copied().collect();
        tids.into_iter().try_for_each(|tid| self.forget(tid))
    }

    fn on_syscall_stop(&mut self, pid: i32) -> Result<(), Error> {
        let Ok(info) = sys::syscall_info(pid) else {
            return Ok(());
        };
        // An exit stop does not carry the call's number: its entry did.
        let nr = match info.op {
            OP_ENTRY => Some(info.nr()),
            OP_EXIT => self
                .tasks
                .get(&pid)
                .and_then(|t| t.pending.as_ref())
                .map(|h| h.nr),
            _ => None,
        };
        let row = nr.and_then(catalogue::by_nr);
        let ends = row.is_some_and(|r| r.effect.ends_address_space());
        if ends && info.op == OP_ENTRY {
            let tgid = self
                .tasks
                .get(&pid)
                .expect("task adopted before dispatch")
                .tgid;
            self.record_mapped_at_exit(pid, tgid)?;
        }
        let task = self
            .tasks
            .get_mut(&pid)
            .expect("task adopted before dispatch");
        match info.op {
            OP_ENTRY => {
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
                task.created = None;
                let (mut touched, mut unnamed) = (Vec::new(), 0);
                if let Some(row) = row {
                    // Only munmap and msync look at the shared mappings.
                    let mapped = row
                        .params()
                        .iter()
                        .any(|p| matches!(p.kind, Kind::Mapped { .. }));
                    let shared = if mapped {
                        self.shared.lock().maps.of(head.tgid).to_vec()
                    } else {
                        Vec::new()
                    };
                    let view = CallView {
                        pid,
                        args: &head.args,
                        ret: None,
                        role: Role::Entry,
                        shared: &shared,
                    };
                    self.shared.capture(
                        head.tgid,
                        row,
                        &view,
                        &mut task.captures,
                        &mut self.counts,
                    );
                    let caps = &task.captures;
                    (touched, unnamed) =
                        touched_paths(pid, row, &head.args, |arg| caps.entry_bytes(arg));
                }
                if !touched.is_empty() || unnamed > 0 {
                    // The state of each path before this call touches it:
                    // these records take smaller ids than the call itself.
                    let mut c = self.shared.lock();
                    c.snap.unnamed += unnamed;
                    for (path, need) in touched {
                        self.shared.write_states(&mut c, |snap, seq, out| {
                            snap.touch(&path, need, seq, now_ns(), out)
                        })?;
                    }
                }
                head.seq = self.shared.seq();
                task.pending = Some(head);
            }
            OP_EXIT => {
                if task.pending.is_none() {
                    // The exit of a call already under way when we attached.
                    self.shared.lock().summary.entered_before_attach += 1;
                    return Ok(());
                }
                let nr = task.pending.as_ref().map_or(0, |h| h.nr);
                if info.rval() == i64::from(nr) && sys::seccomp_refused(pid, nr) {
                    // It never ran: recorded as never returned.
                    self.shared.write_unfinished(task)?;
                    task.pending = None;
                    return Ok(());
                }
                self.finish_call(pid, info.rval(), info.is_error())?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Records the call task `pid` was inside as returned with `rval`:
    /// the data it produced is read now, from the stopped task.
    fn finish_call(&mut self, pid: i32, rval: i64, is_error: bool) -> Result<(), Error> {
        if !is_error {
            self.keep_cpus_shown(pid, rval);
        }
        let task = self
            .tasks
            .get_mut(&pid)
            .expect("task adopted before dispatch");
        let Some(mut head) = task.pending.take() else {
            return Ok(());
        };
        let row = catalogue::by_nr(head.nr);
        let ends = row.is_some_and(|r| r.effect.ends_address_space());
        let mut exit = SyscallExit {
            exit_ns: 0,
            ret: rval,
            is_error,
        };
        let ret = (!exit.is_error).then_some(exit.ret);
        if let Some(row) = row {
            let view = CallView {
                pid,
                args: &head.args,
                ret,
                role: Role::Exit,
                shared: &[],
            };
            self.shared
                .capture(head.tgid, row, &view, &mut task.captures, &mut self.counts);
        }
        if let (Some(child), Some(ret)) = (task.created.take(), ret) {
            task.captures.note_created(child, ret);
        }
        {
            let mut c = self.shared.lock();
            if let (Some(row), Some(ret)) = (row, ret) {
                c.maps.after_call(head.tgid, row.effect, &head.args, ret);
                c.rings
                    .after_call(head.tgid, row, &head.args, ret, &task.captures);
            }
            if ends && ret.is_none() {
                // execve failed: the mappings live on.
                c.maps.live_on(head.tgid);
            }
            // Taken under the lock: the trace is in completion order.
            exit.exit_ns = now_ns();
            head.exit = Some(exit);
            c.sink.call(&head, &task.captures)?;
        }
        self.end_superseded(pid)
    }

    /// Keeps the recorder's pin out of sight of task `pid`, stopped at the
    /// successful exit of its call: `sched_getaffinity` of a pinned task
    /// gets the mask the task would have had, before the call's data is
    /// captured; after `sched_setaffinity` the target's mask is its own.
    /// A target another tracer follows is left as the kernel says.
    fn keep_cpus_shown(&mut self, pid: i32, rval: i64) {
        let Some(head) = self.tasks.get(&pid).and_then(|t| t.pending.as_ref()) else {
            return;
        };
        let Some(effect) = catalogue::by_nr(head.nr).map(|r| r.effect) else {
            return;
        };
        let target = match head.args[0] as i32 {
            0 => pid,
            tid => tid,
        };
        let buf = head.args[2];
        match effect {
            Effect::SetsCpus => {
                if let Some(task) = self.tasks.get_mut(&target) {
                    task.cpus_shown = None;
                }
            }
            Effect::ShowsCpus => {
                let shown = self.tasks.get(&target).and_then(|t| t.cpus_shown);
                if let Some(shown) = shown {
                    // EFAULT: the program's buffer went meanwhile (another
                    // thread unmapped it); it then sees the pin.
                    let _ = shown.show(pid, buf, rval as usize);
                }
            }
            _ => {}
        }
    }

    /// Task `pid` is about to end, its memory still there: the kernel
    /// stops it here even when SIGKILL ended it, which makes no exit
    /// stop.
    ///
    /// - A signal that ends a process ends all of it: its shared file
    ///   mappings are captured now, as at an `exit_group`.
    /// - A call it was inside ran to its end or was cut short, and its
    ///   result is in `rax`: a `write` whose bytes reached the file is
    ///   recorded as returned, as the eBPF back end records it. `-ENOSYS`
    ///   there means the call never ran (killed at its entry stop); `exit`
    ///   and `exit_group` never return.
    fn on_ending(&mut self, pid: i32) -> Result<(), Error> {
        let killed = sys::event_msg(pid).is_ok_and(|code| code & 0x7f != 0);
        let tgid = self.tasks.get(&pid).map(|t| t.tgid);
        if let Some(tgid) = tgid.filter(|_| killed) {
            if !self.shared.lock().maps.is_captured(tgid) {
                self.record_mapped_at_exit(pid, tgid)?;
            }
        }
        let Some(head) = self.tasks.get(&pid).and_then(|t| t.pending.as_ref()) else {
            return Ok(());
        };
        if catalogue::by_nr(head.nr).is_some_and(|r| r.ends_thread()) {
            return Ok(());
        }
        let Ok(regs) = sys::regs(pid) else {
            return Ok(());
        };
        let rval = regs.rax as i64;
        if rval == -i64::from(libc::ENOSYS) {
            return Ok(());
        }
        self.finish_call(pid, rval, (-4095..0).contains(&rval))
    }

    /// Before a call that ends the address space (`exit_group`, `execve`):
    /// one `mapped_at_exit` pseudo-call per shared writable file mapping
    /// still there, with the bytes it holds, so that the stores since its
    /// last `msync` reach the trace.
    fn record_mapped_at_exit(&mut self, pid: i32, tgid: u32) -> Result<(), Error> {
        let ranges = self.shared.lock().maps.of(tgid).to_vec();
        if ranges.is_empty() {
            return Ok(());
        }
        let shared = self.shared;
        record_at_exit(
            pid,
            tgid,
            &ranges,
            shared.policy,
            &mut self.counts,
            || shared.seq(),
            |head, caps| shared.lock().sink.call(head, caps),
        )?;
        self.shared.lock().maps.captured_at_exit(tgid);
        Ok(())
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
            let mut c = self.shared.lock();
            c.summary.mappings_at_exit += c.maps.forget(tgid) as u64;
            c.rings.forget(tgid);
        }
        if former != pid {
            if let Some(mut task) = self.tasks.remove(&former) {
                task.superseded = Some(former);
                if self.tasks.contains_key(&pid) {
                    self.forget(pid)?;
                } else {
                    // The old leader was another tracer's.
                    self.tell_others(|| Letter::Vanished(pid));
                }
                self.tasks.insert(pid, task);
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
        let mut c = self.shared.lock();
        if sig == libc::SIGCONT && c.own_sigcont == Some(pid) {
            c.own_sigcont = None;
            return Ok(());
        }
        let (code, sender) = match sys::siginfo(pid) {
            // SAFETY: reading si_pid's bytes is defined whatever the kernel
            // put there; `signal_sender` keeps only a real process id.
            Ok(si) => (
                si.si_code,
                signal_sender(sig, si.si_code, unsafe { si.si_pid() } as u32),
            ),
            Err(_) => (0, 0),
        };
        let tgid = self.tasks.get(&pid).map_or(pid as u32, |t| t.tgid);
        let seq = self.shared.seq();
        c.sink.record(Record::Signal(SignalDelivery {
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
        let how = exit_status(status);
        {
            let mut c = self.shared.lock();
            if let Some(head) = &task.pending {
                // exit and exit_group never return: that is not a loss.
                if !catalogue::by_nr(head.nr).is_some_and(|r| r.ends_thread()) {
                    c.summary.unfinished += 1;
                }
                c.sink.call(head, &task.captures)?;
            }
            if c.root == Some(pid) {
                c.root_status = Some(how);
            }
            if pid as u32 == task.tgid {
                c.summary.mappings_at_exit += c.maps.forget(task.tgid) as u64;
                c.rings.forget(task.tgid);
            }
        }
        if let Some(former) = task.superseded {
            self.write_end(task.tgid, former, ExitStatus::Superseded { by: pid as u32 })?;
        }
        let ended = self.write_end(task.tgid, pid, how);
        self.shared.retire(self.id);
        ended
    }

    /// Records the end of task `tid`.
    fn write_end(&self, tgid: u32, tid: i32, status: ExitStatus) -> Result<(), Error> {
        let seq = self.shared.seq();
        self.write(Record::ProcessExit(ProcessExit {
            seq,
            time_ns: now_ns(),
            tgid,
            tid: tid as u32,
            status,
        }))
    }

    /// SIGINT/SIGTERM while attached: every tracee is detached. SIGTERM
    /// while recording a spawned command: every tracee is killed (as
    /// `EXITKILL` would if the recorder died, but with the trace finished
    /// and their ends in it); again at each turn, for late forks.
    fn on_stop_request(&mut self) {
        if self.detaching {
            return;
        }
        if !self.killing {
            let mut c = self.shared.lock();
            if c.root.is_none() {
                drop(c);
                self.begin_detach();
                self.shared.wake_others(self.id);
                return;
            }
            self.killing = true;
            c.summary.killed_at_stop += self.tasks.len() as u64;
            drop(c);
            self.shared.wake_others(self.id);
        }
        for &tid in self.tasks.keys() {
            // SAFETY: kill has no memory effects.
            unsafe { libc::kill(tid, libc::SIGKILL) };
        }
    }

    /// Asks every tracee to stop so each can be detached at its next stop.
    fn begin_detach(&mut self) {
        self.detaching = true;
        for &tid in self.tasks.keys() {
            let _ = sys::interrupt(tid);
        }
    }

    /// Ends following one stopped tracee, keeping it stopped (with the
    /// signal it was about to receive, to hand back when it is detached)
    /// until the final state is recorded, and records the calls it leaves
    /// unfinished.
    fn detach_one(&mut self, pid: i32, sig: i32, event: i32) {
        let pass = if event == 0 && sig != (libc::SIGTRAP | 0x80) {
            sig
        } else {
            0
        };
        self.held.push((pid, pass));
        if let Some(task) = self.tasks.remove(&pid) {
            let _ = self.shared.write_unfinished(&task);
            if let Some(former) = task.superseded {
                let _ =
                    self.write_end(task.tgid, former, ExitStatus::Superseded { by: pid as u32 });
            }
            let _ = self.write_end(task.tgid, pid, ExitStatus::Detached);
            self.shared.retire(self.id);
        }
    }
}

/// The error of a tracer thread that panicked (the panic message is
/// already on stderr).
fn panicked() -> Error {
    Error::Ptrace(std::io::Error::other(
        "a tracer thread stopped on an internal error (see the message above)",
    ))
}

/// Whether task `tid` runs without a seccomp filter (`/proc` says so).
fn without_seccomp(tid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{tid}/status")).is_ok_and(|status| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("Seccomp:"))
            .is_some_and(|mode| mode.trim() == "0")
    })
}
