/*!
Replays a trace: the same calls, in the same order, with the same data,
against a root directory, verified.

# How a replay runs

1. **Prepare** (skipped with `--in-place`): one pass over the trace applies
   every path's *before* state (recorded just before the trace first
   touched it) to the root: directories, files with their contents,
   symbolic links, modes, owners and xattrs. An empty directory becomes
   what the program found.
2. **Replay**: a dispatcher streams the trace and hands each call to the
   replay thread of the traced thread that made it; each replay thread
   issues its calls in program order, waiting where the ordering policy
   ([`OrderPolicy`]) and timing policy ([`Timing`]) say. The emulated
   process state (descriptor tables, working directories, umasks,
   mappings) lives in `state`; execution and its per-call effect handlers
   in `exec`; what "same result" means in `verify`.
3. **Check**: the recorded manifest (each path's *after* state) is compared
   with the root.

Memory stays bounded: the dispatcher keeps at most [`MAX_IN_FLIGHT`] calls
(and [`MAX_IN_FLIGHT_BYTES`] of their data) ahead of the slowest thread.

Paths never escape the root: every path resolves through
[`reanimator_fsstate::Root`] (`openat2` with `RESOLVE_IN_ROOT`). No program
is executed and no network connection is made: process calls are emulated
and socket calls simulated from the trace.
*/

mod aio;
mod exec;
mod order;
mod report;
mod state;
pub mod timings;
mod uring;
mod verify;

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use reanimator_catalogue::{self as catalogue, Effect, Group, Kind, Replay, Syscall};
use reanimator_fsstate::{
    after_state_like, compare, is_pseudo, restore_recorded_modes, KeptAccess, Owners, Preparer,
    Root, Viewer,
};
use reanimator_text::{Renderer, TextOptions};
use reanimator_trace::{
    CaptureStatus, ExitStatus, PathPhase, PathState, ProcessExit, ProcessStart, ReadOptions,
    Reader, Record, Role, StartCause, SyscallEvent,
};

pub use exec::Verify;
pub use order::OrderPolicy;
pub use report::{CallStats, Report, Tally};

use exec::{Acting, Outcome, Thread};
use order::{AtOffset, CommuteFds, Order, Ticket};
use state::{lock, Creds, FdEntry, Proc, WeakProc};
use timings::Timed;

/// How long a call that only looks and mismatched waits for the calls that
/// may have come first in the recording, each time before it is issued
/// again (see [`catalogue::Group::QUERY`] and [`catalogue::Group::REREAD`]).
const REQUERY_WAIT: Duration = Duration::from_secs(2);

/// Calls the dispatcher may hand out ahead of the replay threads.
pub const MAX_IN_FLIGHT: u64 = 1 << 16;
/// Captured bytes those calls may hold.
pub const MAX_IN_FLIGHT_BYTES: u64 = 8 << 20;
/// While no call finishes, the dispatcher reads on past its bounds, up to
/// this many times them (see [`Shared::acquire`]).
const STALLED_READ_AHEAD: u64 = 16;

/// When calls are issued.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Timing {
    /// As fast as possible (ordering still applies).
    Afap,
    /// Each call at its recorded offset from the start, divided by the
    /// factor (1.0 = original timing).
    Scaled(f64),
}

/// How to replay.
#[derive(Debug, Clone)]
pub struct Options {
    /// What is compared.
    pub verify: Verify,
    /// Stop at the first mismatch.
    pub abort_on_mismatch: bool,
    /// Cross-thread ordering.
    pub order: OrderPolicy,
    /// Issue timing.
    pub timing: Timing,
    /// The root is the real `/`: nothing is prepared.
    pub in_place: bool,
    /// Prepare into a root that is not empty: recorded states overwrite
    /// what is there, and paths that did not exist are removed.
    pub replace: bool,
    /// Where to write the replay's own times of every call it executed,
    /// as a trace (see [`timings`]), to measure it against the original.
    pub timings: Option<PathBuf>,
    /// Replace an existing `timings` file instead of refusing.
    pub timings_overwrite: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            verify: Verify::Full,
            abort_on_mismatch: false,
            order: OrderPolicy::Overlap,
            timing: Timing::Afap,
            in_place: false,
            replace: false,
            timings: None,
            timings_overwrite: false,
        }
    }
}

/// Live counters for a progress display.
#[derive(Debug, Default)]
pub struct Progress {
    /// Calls replayed so far.
    pub calls: AtomicU64,
    /// Mismatches so far.
    pub mismatches: AtomicU64,
    /// Trace bytes read by the current pass.
    pub read_bytes: AtomicU64,
    /// Size of the trace file.
    pub total_bytes: AtomicU64,
    /// 0 while preparing, 1 while replaying.
    pub phase: AtomicU64,
    /// Set by the caller (Ctrl-C) to stop: while preparing, replay fails
    /// with [`Error::Stopped`]; while replaying, it stops as
    /// `--on-mismatch abort` does and reports what it did.
    pub stop: std::sync::atomic::AtomicBool,
}

/// Why a replay could not run or finish.
#[derive(Debug)]
pub enum Error {
    /// The trace could not be read.
    Trace(reanimator_trace::Error),
    /// The root could not be prepared.
    Prepare(std::io::Error),
    /// The timings trace could not be created or written.
    Timings(String),
    /// A replay thread failed (a bug in replay): the replay stopped rather
    /// than wait for it forever.
    ThreadFailed(String),
    /// [`Progress::stop`] was set while preparing.
    Stopped,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Trace(e) => write!(f, "{e}"),
            Error::Prepare(e) => write!(f, "preparing the replay root: {e}"),
            Error::Timings(e) => write!(f, "the timings trace: {e}"),
            Error::ThreadFailed(e) => write!(f, "replay stopped: {e}"),
            Error::Stopped => f.write_str("stopped while preparing"),
        }
    }
}

impl std::error::Error for Error {}

impl From<reanimator_trace::Error> for Error {
    fn from(e: reanimator_trace::Error) -> Self {
        Error::Trace(e)
    }
}

/// What the dispatcher hands a replay thread.
enum Item {
    Call(Box<SyscallEvent>, &'static Syscall, Ticket, u64),
    /// This thread goes on as `tid` did after an `execve` from a non-leader
    /// thread: take over its emulated process.
    Inherit(u32),
    /// The thread ended; `Some(by)` when it goes on as thread `by`.
    End(Option<u32>),
}

/// Items on their way to the replay threads. Each thread's consecutive
/// calls travel as one batch: one channel send, and at most one wake-up,
/// per batch instead of per call. Every thread has its own batch, so
/// threads whose calls interleave in the trace still get batches, and
/// each thread gets its items in trace order. A batch is sent when it is
/// full or [`Outbox::AGE`] records after its first call, whichever comes
/// first, and batches go out in the order they began: a call may wait for
/// any call before it in another thread, so those are never held back
/// behind it, and none is held back for long.
struct Outbox {
    queues: HashMap<u32, Sender<Vec<Item>>>,
    /// Unsent batches, oldest first: thread, record count at their first
    /// call, calls.
    pending: VecDeque<(u32, u64, Vec<Item>)>,
    /// Records seen so far.
    records: u64,
}

impl Outbox {
    /// Calls per batch.
    const BATCH: usize = 64;
    /// Records after which a batch goes out however small.
    const AGE: u64 = 64;

    fn new() -> Self {
        Outbox {
            queues: HashMap::new(),
            pending: VecDeque::new(),
            records: 0,
        }
    }

    fn contains(&self, tid: u32) -> bool {
        self.queues.contains_key(&tid)
    }

    /// Counts a record read and sends the batches it made old enough.
    fn tick(&mut self) {
        self.records += 1;
        while self
            .pending
            .front()
            .is_some_and(|&(_, first, _)| first + Self::AGE <= self.records)
        {
            self.send_oldest(1);
        }
    }

    /// Queues a call for thread `tid`.
    fn call(&mut self, tid: u32, item: Item) {
        let full = match self.pending.iter_mut().find(|(t, _, _)| *t == tid) {
            Some((_, _, items)) => {
                items.push(item);
                items.len() >= Self::BATCH
            }
            None => {
                let mut items = Vec::with_capacity(Self::BATCH);
                items.push(item);
                self.pending.push_back((tid, self.records, items));
                false
            }
        };
        if full {
            self.send_pending(tid);
        }
    }

    /// Sends a lifecycle item to thread `tid` now, after everything before it.
    fn send_now(&mut self, tid: u32, item: Item) {
        self.flush();
        deliver(&self.queues, tid, vec![item]);
    }

    /// Sends `tid` its last item and forgets it.
    fn end(&mut self, tid: u32, item: Item) {
        self.send_now(tid, item);
        self.queues.remove(&tid);
    }

    /// Sends every pending batch.
    fn flush(&mut self) {
        self.send_oldest(self.pending.len());
    }

    /// Sends `tid`'s batch and every batch begun before it: a call may
    /// wait for any call before it, so those must not be held back.
    fn send_pending(&mut self, tid: u32) {
        if let Some(i) = self.pending.iter().position(|(t, _, _)| *t == tid) {
            self.send_oldest(i + 1);
        }
    }

    /// Sends the `n` oldest pending batches, oldest first.
    fn send_oldest(&mut self, n: usize) {
        for (tid, _, items) in self.pending.drain(..n) {
            deliver(&self.queues, tid, items);
        }
    }
}

/// Hands `items` to thread `tid`, if it is still there to take them.
fn deliver(queues: &HashMap<u32, Sender<Vec<Item>>>, tid: u32, items: Vec<Item>) {
    if let Some(q) = queues.get(&tid) {
        let _ = q.send(items);
    }
}

/// Events a replay thread has finished with, on their way back to the
/// dispatcher to be freed there. The dispatcher allocated them, and
/// glibc's allocator frees another thread's chunks under the lock of the
/// arena they came from, which the dispatcher takes for every event it
/// decodes: freeing them on the replay thread made it wait for that lock
/// (dd's replay: 0.417 s before, 0.391 s after; BENCHMARKS.md).
type Spent = Vec<Box<SyscallEvent>>;

/// What a replay thread sends back as it goes: the events it finished
/// with, and, with `--timings`, when it issued each call it executed.
struct Back {
    spent: Sender<Spent>,
    timed: Option<Sender<Vec<Timed>>>,
}

impl Back {
    /// Sends one batch's finished events and times.
    fn send(&self, spent: Spent, timed: Vec<Timed>) {
        let _ = self.spent.send(spent);
        if let Some(tx) = self.timed.as_ref().filter(|_| !timed.is_empty()) {
            let _ = tx.send(timed);
        }
    }
}

/// Frees the events the replay threads have handed back so far.
fn free_spent(rx: &Receiver<Spent>) {
    while let Ok(events) = rx.try_recv() {
        drop(events);
    }
}

/// Which emulated state a replay thread waits for.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum BirthKey {
    /// The `n`th thread the trace created with id `tid` (counting from
    /// 1): born by the `n`th replayed clone that returned `tid`, or by the
    /// dispatcher at the end of the trace if the trace holds fewer such
    /// clones than start records. Counting incarnations, rather than
    /// keying by id alone, keeps a start record that no clone matches
    /// (ptrace recordings of before 2026-11-25 could hold a second one)
    /// or a reused id from taking another thread's state or waiting for
    /// ever.
    Created { tid: u32, n: u32 },
    /// The process thread `tid` hands over when it goes on as another
    /// thread after an exec.
    Handover(u32),
}

/// Emulated states not yet taken, and the clones replayed so far per id.
/// Clones of one id replay in their recorded order: an id is reused only
/// after its previous thread ended, which was after the clone that made it
/// returned, and every order replays a call after calls that ended before
/// it began.
#[derive(Default)]
struct Births {
    waiting: HashMap<BirthKey, Proc>,
    clones: HashMap<u32, u32>,
}

/// What a created thread's start record says, kept in case no clone in
/// the trace makes it (its state then comes from its parent at the end).
struct CreatedStart {
    tid: u32,
    /// Which incarnation of `tid` (see [`BirthKey::Created`]).
    n: u32,
    ppid: u32,
    cwd: Vec<u8>,
    umask: u32,
    creds: Creds,
}

/// How a replay thread gets its emulated state.
enum Start {
    /// At once: the trace found it running or never said how it began.
    Ready(Proc),
    /// From its creating clone: [`BirthKey::Created`].
    Created(u32),
}

/// State shared by the dispatcher and the replay threads.
struct Shared<'a> {
    root: &'a Root,
    opts: &'a Options,
    /// Where the recorder wrote this trace (see `Thread::own_trace`).
    own_trace: Option<Vec<u8>>,
    order: Order,
    /// Emulated state waiting for its thread.
    births: Mutex<Births>,
    births_cv: Condvar,
    /// The latest state of each process, for children whose creating call
    /// is not in the trace.
    latest: Mutex<HashMap<u32, WeakProc>>,
    abort: AtomicBool,
    /// Why a replay thread failed, if one did (see [`Shared::failed`]).
    failure: Mutex<Option<String>>,
    progress: &'a Progress,
    on_mismatch: &'a (dyn Fn(String) + Sync),
    renderer: Renderer,
    /// Which owners are reproduced, so compared.
    owners: Owners,
    start: Instant,
    t0: u64,
    /// Calls and capture bytes handed out and not yet finished, and
    /// whether the dispatcher waits for them to drop.
    in_flight: Mutex<(u64, u64, bool)>,
    in_flight_cv: Condvar,
    /// Pipe calls given up for standing still (see `exec::Thread::stalls`).
    stalls: AtomicU64,
    /// A wait for overlapping calls ran out: one of them was waiting for
    /// the waiting thread (a pipe read, a `wait4`), and the same could hold
    /// every mismatch up for the whole limit, so no later one waits.
    overlap_timed_out: AtomicBool,
    rings: uring::Registry,
    /// Which capture of a shared mapping each file page holds.
    snapshots: state::Snapshots,
    /// The shared writable file mappings alive in the replay.
    live_maps: state::LiveMappings,
    listings: state::ListingsInProgress,
    /// Descriptors sent with `SCM_RIGHTS` and not yet received.
    passed: state::Passed,
    /// Some directory may have a default POSIX ACL (see
    /// `exec::Thread::umask_at`).
    default_acls: AtomicBool,
    /// Descriptor tables copied for children, which closes follow.
    copies: state::TableCopies,
}

impl Shared<'_> {
    /// [`Order::wait_overlapping`], until one such wait has run out.
    fn wait_overlapping(&self, t: &Ticket) -> bool {
        if self.overlap_timed_out.load(Ordering::Relaxed) {
            return false;
        }
        let done = self.order.wait_overlapping(t, REQUERY_WAIT);
        if !done {
            self.overlap_timed_out.store(true, Ordering::Relaxed);
        }
        done
    }

    fn born(&self, key: BirthKey, p: Proc) {
        lock(&self.births).waiting.insert(key, p);
        self.births_cv.notify_all();
    }

    /// A replayed clone made thread `tid`: its next incarnation is born.
    fn cloned(&self, tid: u32, p: Proc) {
        let mut b = lock(&self.births);
        let n = b.clones.entry(tid).or_default();
        *n += 1;
        let key = BirthKey::Created { tid, n: *n };
        b.waiting.insert(key, p);
        drop(b);
        self.births_cv.notify_all();
    }

    /// Waits for the emulated state of `key`; `None` if replay aborts.
    fn wait_birth(&self, key: BirthKey) -> Option<Proc> {
        let mut b = lock(&self.births);
        loop {
            if let Some(p) = b.waiting.remove(&key) {
                return Some(p);
            }
            if self.abort.load(Ordering::Relaxed) {
                return None;
            }
            b = self
                .births_cv
                .wait_timeout(b, Duration::from_millis(100))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Gives back the room of `calls` finished calls holding `bytes`.
    fn release(&self, calls: u64, bytes: u64) {
        if calls == 0 {
            return;
        }
        let mut f = lock(&self.in_flight);
        f.0 -= calls;
        f.1 -= bytes;
        // Wake a waiting dispatcher only once half the room is free: one
        // wake-up per many calls, not one per call.
        if f.2 && f.0 <= MAX_IN_FLIGHT / 2 && f.1 <= MAX_IN_FLIGHT_BYTES / 2 {
            f.2 = false;
            self.in_flight_cv.notify_one();
        }
    }

    /// Blocks the dispatcher while too much is in flight. If nothing
    /// completes for a while (every thread waits on something still
    /// unread), strict order is relieved first ([`Order::starve`], with
    /// `max_seq` the largest id read), then it reads ahead anyway:
    /// bounded memory never deadlocks. `stalled` holds the finished-call
    /// count at which it last did so: until another call finishes, it reads
    /// on without waiting, up to [`STALLED_READ_AHEAD`] times its bounds.
    /// The call that ends the stall may be far ahead: a pipe read that got
    /// part of its bytes waits for the rest, which a write that ended
    /// later brings, and every other thread waits for the read. Reading
    /// one record per 210 ms, MariaDB's install (a `cat` in a pipeline,
    /// 4,281 records holding 28 MB between the two) took 15 min.
    fn acquire(&self, bytes: u64, max_seq: u64, outbox: &mut Outbox, stalled: &mut Option<u64>) {
        let mut f = lock(&self.in_flight);
        let mut last = self.progress.calls.load(Ordering::Relaxed);
        if *stalled == Some(last)
            && f.0 < MAX_IN_FLIGHT * STALLED_READ_AHEAD
            && f.1 < MAX_IN_FLIGHT_BYTES * STALLED_READ_AHEAD
        {
            drop(f);
            self.order.starve(max_seq);
            f = lock(&self.in_flight);
            f.0 += 1;
            f.1 += bytes;
            return;
        }
        *stalled = None;
        if f.0 >= MAX_IN_FLIGHT || f.1 >= MAX_IN_FLIGHT_BYTES {
            // Whatever the threads could run must reach them before we wait.
            drop(f);
            outbox.flush();
            f = lock(&self.in_flight);
        }
        let mut starved = false;
        while f.0 >= MAX_IN_FLIGHT || f.1 >= MAX_IN_FLIGHT_BYTES {
            if self.stopping() {
                break;
            }
            f.2 = true;
            // A short first wait tells a stall (every thread waits for
            // something unread) from a busy moment.
            let wait = if starved { 200 } else { 10 };
            f = self
                .in_flight_cv
                .wait_timeout(f, Duration::from_millis(wait))
                .unwrap_or_else(|p| p.into_inner())
                .0;
            let now = self.progress.calls.load(Ordering::Relaxed);
            if now == last {
                if starved {
                    *stalled = Some(now);
                    break;
                }
                // Strict order may be waiting for an unread id: relieve it.
                starved = true;
                self.order.starve(max_seq);
                continue;
            }
            last = now;
        }
        f.2 = false;
        f.0 += 1;
        f.1 += bytes;
    }

    /// Whether replay is to stop: it aborted, or the caller asked
    /// ([`Progress::stop`]), which this turns into an abort.
    fn stopping(&self) -> bool {
        if self.progress.stop.load(Ordering::Relaxed) {
            self.stop();
        }
        self.abort.load(Ordering::Relaxed)
    }

    /// Every replay thread and the dispatcher stop, as on
    /// `--on-mismatch abort`.
    fn stop(&self) {
        self.abort.store(true, Ordering::Relaxed);
        self.order.abort();
        self.in_flight_cv.notify_all();
    }

    /// A replay thread panicked: the others stop instead of waiting for
    /// calls that thread will never finish.
    fn failed(&self, tid: u32, panic: &(dyn std::any::Any + Send)) {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".into());
        lock(&self.failure).get_or_insert(format!(
            "the replay thread of thread {tid} panicked ({why})"
        ));
        self.stop();
    }

    fn mismatch(&self, ev: &SyscallEvent, what: &str) {
        self.progress.mismatches.fetch_add(1, Ordering::Relaxed);
        let text = self.renderer.text(&Record::Syscall(ev.clone()));
        (self.on_mismatch)(format!("mismatch: {text}: {what}"));
        if self.opts.abort_on_mismatch {
            self.stop();
        }
    }
}

/// Replays `trace` into `root`. Mismatches are reported through
/// `on_mismatch` as they happen; the returned report has the totals.
pub fn replay(
    trace: &Path,
    root: &Root,
    opts: &Options,
    progress: &Progress,
    on_mismatch: &(dyn Fn(String) + Sync),
) -> Result<Report, Error> {
    let mut report = Report::default();
    // Dropped last, however replay ends.
    let mut restore = RestoreModes(root, Vec::new());
    // In place, any directory may have a default ACL; else those the
    // trace prepares or sets.
    let default_acls = AtomicBool::new(opts.in_place);
    if !opts.in_place {
        let t = Instant::now();
        restore.1 = prepare(trace, root, opts, progress, &mut report, &default_acls)?;
        report.prepare_time = t.elapsed();
    }
    // SAFETY: umask only changes this process's mask. Replay applies each
    // emulated process's own umask to the modes it creates.
    unsafe { libc::umask(0) };
    raise_fd_limit();
    let mut reader = Reader::open(trace, ReadOptions { data: true })?;
    progress.phase.store(1, Ordering::Relaxed);
    progress
        .total_bytes
        .store(reader.file_len(), Ordering::Relaxed);
    let first = reader.next_record()?;
    let t0 = first.as_ref().map_or(0, Record::time_ns);
    let first_seq = first.as_ref().map_or(0, Record::seq);
    // Owners come out as recorded when replay acts with the traced ids
    // (as root, see `exec::Acting`) or the recording ran as the replayer.
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    let owners = match &first {
        Some(Record::ProcessStart(_)) if euid == 0 => Owners::All,
        Some(Record::ProcessStart(p)) if p.euid == euid => Owners::OwnOnly {
            uid: euid,
            gids: own_groups(),
        },
        _ => Owners::None,
    };
    let start = Instant::now();
    let origin_ns = timings::monotonic_ns();
    let timings_out = match &opts.timings {
        Some(path) => {
            if reanimator_trace::same_file(path, trace) {
                return Err(Error::Timings(format!(
                    "{} is the trace being replayed",
                    path.display()
                )));
            }
            Some(
                timings::create(path, trace, &reader, opts, t0, origin_ns)
                    .map_err(|e| Error::Timings(e.to_string()))?,
            )
        }
        None => None,
    };
    let shared = Shared {
        root,
        opts,
        own_trace: reader
            .meta()
            .options
            .get("output")
            .map(|p| p.as_bytes().to_vec()),
        order: Order::new(opts.order, first_seq),
        births: Mutex::default(),
        births_cv: Condvar::new(),
        latest: Mutex::default(),
        abort: AtomicBool::new(false),
        failure: Mutex::new(None),
        progress,
        on_mismatch,
        renderer: Renderer::new(TextOptions::default(), reader.meta().clock),
        owners,
        start,
        t0,
        in_flight: Mutex::new((0, 0, false)),
        in_flight_cv: Condvar::new(),
        stalls: AtomicU64::new(0),
        overlap_timed_out: AtomicBool::new(false),
        rings: uring::Registry::default(),
        snapshots: state::Snapshots::default(),
        live_maps: state::LiveMappings::default(),
        listings: state::ListingsInProgress::default(),
        passed: state::Passed::default(),
        default_acls,
        copies: state::TableCopies::default(),
    };
    let started = Instant::now();
    let mut manifest: Vec<PathState> = Vec::new();
    let mut read_error = None;
    let mut timings_result = None;
    std::thread::scope(|scope| {
        let mut queues = Outbox::new();
        // Start records of created threads per id, and what each says.
        let mut created: HashMap<u32, u32> = HashMap::new();
        let mut created_as: Vec<CreatedStart> = Vec::new();
        // Threads whose end was recorded, and who went on in their place.
        let mut ended: HashMap<u32, Option<u32>> = HashMap::new();
        // Successful clones in the trace per child id.
        let mut clone_children: HashMap<u32, u32> = HashMap::new();
        // When each created process or thread was born, from start records
        // read before their creating call's record (see `copied_by`).
        let mut births: HashMap<u32, u64> = HashMap::new();
        let mut commute_fds = CommuteFds::default();
        let mut handles = Vec::new();
        let mut dispatcher = Tally::default();
        let shared = &shared;
        let (spent_tx, spent_rx) = channel::<Spent>();
        let (timed_tx, timed_rx) = channel::<Vec<Timed>>();
        let timings_writer =
            timings_out.map(|w| scope.spawn(move || timings::write_all(w, timed_rx)));
        let timed = timings_writer.is_some().then_some(timed_tx);
        let mut spawn = |tid: u32, start: Start, queues: &mut Outbox| {
            let (tx, rx) = channel();
            queues.queues.insert(tid, tx);
            let back = Back {
                spent: spent_tx.clone(),
                timed: timed.clone(),
            };
            handles.push(scope.spawn(move || {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    thread_main(shared, tid, start, rx, back)
                }))
                .unwrap_or_else(|panic| {
                    shared.failed(tid, &*panic);
                    Tally::default()
                })
            }));
        };
        let mut next = first;
        // The largest sequence id read so far (strict order's starvation).
        let mut max_seq = 0u64;
        // The finished-call count at which the read-ahead room last
        // filled with nothing finishing (see `Shared::acquire`).
        let mut stalled = None;
        loop {
            let rec = match next.take() {
                Some(r) => r,
                None => match reader.next_record() {
                    Ok(Some(r)) => r,
                    Ok(None) => break,
                    Err(e) => {
                        read_error = Some(e);
                        break;
                    }
                },
            };
            if shared.stopping() {
                break;
            }
            queues.tick();
            free_spent(&spent_rx);
            progress
                .read_bytes
                .store(reader.offset(), Ordering::Relaxed);
            let seq = rec.seq();
            max_seq = max_seq.max(seq);
            match rec {
                Record::Syscall(ev) => {
                    let row = catalogue::by_call(ev.nr, &ev.args);
                    if sets_default_acl(&ev) {
                        shared.default_acls.store(true, Ordering::Relaxed);
                    }
                    let skip = match (row, ev.exit) {
                        (None, _) => Some("not in the catalogue"),
                        (Some(r), _) if r.replay == Replay::Ignore => Some("no effect to replay"),
                        (_, None) => Some("never returned"),
                        (_, Some(x)) if reanimator_text::is_restart(x.errno()) => {
                            Some("interrupted and restarted")
                        }
                        // A signal stopped it before it did anything (one
                        // that did part of its work returns that part);
                        // only `close` frees its descriptor all the same.
                        (Some(r), Some(x))
                            if x.errno() == libc::EINTR as u32 && r.effect != Effect::Close =>
                        {
                            Some("interrupted (EINTR)")
                        }
                        _ => None,
                    };
                    let name = row.map_or("unknown", |r| r.name);
                    if let Some(why) = skip {
                        dispatcher.skip(name, why);
                        shared.order.pass(seq);
                        continue;
                    }
                    let row = row.expect("checked");
                    let mut tid = ev.tid;
                    if let Some(&by) = ended.get(&tid) {
                        // An event written after its thread's end (traces of
                        // older recorders): it belongs to its successor.
                        match by.filter(|&b| queues.contains(b)) {
                            Some(b) => tid = b,
                            None => {
                                dispatcher.skip(name, "after its thread ended");
                                shared.order.pass(seq);
                                continue;
                            }
                        }
                    }
                    if !queues.contains(tid) {
                        // Events of a thread the trace never introduced.
                        let proc = Proc::initial(std::iter::empty(), b"/".to_vec(), 0o022, None);
                        spawn(ev.tid, Start::Ready(proc), &mut queues);
                    }
                    if matches!(row.effect, Effect::Spawn(_)) {
                        // Counted as its replay thread will count it.
                        if let Some(child) = ev.created_id() {
                            *clone_children.entry(child).or_default() += 1;
                        }
                    }
                    let bytes: u64 = ev.captures.iter().map(|c| c.captured).sum();
                    shared.acquire(bytes, max_seq, &mut queues, &mut stalled);
                    free_spent(&spent_rx);
                    let exit_ns = copied_by(&ev, row, &mut births);
                    let io = commute_fds.observe(row, &ev);
                    let at_offset = at_offset(row, &ev);
                    let ticket = shared
                        .order
                        .dispatch(seq, ev.enter_ns, exit_ns, io, at_offset);
                    queues.call(tid, Item::Call(Box::new(ev), row, ticket, bytes));
                }
                Record::ProcessStart(p) => {
                    shared.order.pass(seq);
                    if let Some(tx) = &timed {
                        let time_ns = timings::monotonic_ns();
                        let p = ProcessStart {
                            time_ns,
                            ..p.clone()
                        };
                        let _ = tx.send(vec![Timed::Other(Record::ProcessStart(p))]);
                    }
                    ended.remove(&p.tid);
                    if queues.contains(p.tid) {
                        continue;
                    }
                    let start = match p.cause {
                        StartCause::Created => {
                            if births.len() == BIRTHS_MAX {
                                births.clear();
                            }
                            births.insert(p.tid, p.time_ns);
                            let n = created.entry(p.tid).or_default();
                            *n += 1;
                            // A process (not a thread) whose creating call
                            // is still to come: its parent's closes from
                            // now on are kept for its table.
                            let cloned = clone_children.get(&p.tid).copied().unwrap_or(0);
                            if p.tid == p.tgid && cloned < *n {
                                shared.copies.born(p.ppid, p.tid, p.time_ns);
                            }
                            created_as.push(CreatedStart {
                                tid: p.tid,
                                n: *n,
                                ppid: p.ppid,
                                cwd: p.cwd.clone(),
                                umask: p.umask,
                                creds: creds_of(&p),
                            });
                            Start::Created(*n)
                        }
                        _ => {
                            commute_fds.inherited(p.fds.iter().map(|f| f.fd));
                            let existing = lock(&shared.latest)
                                .get(&p.tgid)
                                .and_then(WeakProc::upgrade);
                            let proc = existing.unwrap_or_else(|| {
                                let fds = FdEntry::inherited_table(root, p.cause, &p.fds);
                                Proc::initial(
                                    fds.into_iter(),
                                    p.cwd.clone(),
                                    p.umask,
                                    Some(creds_of(&p)),
                                )
                            });
                            lock(&shared.latest).insert(p.tgid, proc.downgrade());
                            Start::Ready(proc)
                        }
                    };
                    spawn(p.tid, start, &mut queues);
                }
                Record::ProcessExit(p) => {
                    shared.order.pass(seq);
                    if let Some(tx) = &timed {
                        let time_ns = timings::monotonic_ns();
                        let p = ProcessExit {
                            time_ns,
                            ..p.clone()
                        };
                        let _ = tx.send(vec![Timed::Other(Record::ProcessExit(p))]);
                    }
                    let by = match p.status {
                        ExitStatus::Superseded { by } => Some(by),
                        _ => None,
                    };
                    queues.end(p.tid, Item::End(by));
                    ended.insert(p.tid, by);
                    if let Some(by) = by {
                        queues.send_now(by, Item::Inherit(by));
                    }
                }
                Record::PathState(p) => {
                    shared.order.pass(seq);
                    if p.phase == PathPhase::After {
                        manifest.push(p);
                    }
                }
                Record::Loss(l) => {
                    shared.order.pass(seq);
                    report.trace_losses += l.count.max(1);
                }
                Record::Signal(_) | Record::PathData(_) => shared.order.pass(seq),
            }
        }
        shared.order.pass_all();
        // Children whose creating call is not in the trace start from
        // their parent's latest state.
        for c in created_as {
            if c.n > clone_children.get(&c.tid).copied().unwrap_or(0) {
                let parent = lock(&shared.latest)
                    .get(&c.ppid)
                    .and_then(WeakProc::upgrade);
                let proc = parent.map_or_else(
                    || Proc::initial(std::iter::empty(), c.cwd, c.umask, Some(c.creds)),
                    |parent| {
                        parent.child(0, |t| {
                            std::sync::Arc::new(Mutex::new(state::copy_of(&lock(t), u64::MAX)))
                        })
                    },
                );
                shared.born(BirthKey::Created { tid: c.tid, n: c.n }, proc);
            }
        }
        queues.flush();
        for (_, q) in queues.queues.drain() {
            let _ = q.send(vec![Item::End(None)]);
        }
        // The timings writer ends when the last sender of times is gone
        // (`spawn` only borrowed `timed`).
        drop(timed);
        report.threads = handles.len() as u64;
        report.tally.merge(&dispatcher);
        for h in handles {
            match h.join() {
                Ok(t) => report.tally.merge(&t),
                Err(_) => (shared.on_mismatch)("a replay thread panicked".into()),
            }
        }
        if let Some(w) = timings_writer {
            timings_result = Some(match w.join() {
                Ok(r) => r.map_err(|e| Error::Timings(e.to_string())),
                Err(_) => Err(Error::Timings("its writer panicked".into())),
            });
        }
    });
    shared.rings.settle();
    report.uring_not_issued = shared.rings.not_issued();
    report.uring_unverified = shared.rings.unverified();
    report.reads_of_mapped_stores = (
        shared.live_maps.reads.load(Ordering::Relaxed),
        shared.live_maps.bytes.load(Ordering::Relaxed),
    );
    report.replay_time = started.elapsed();
    report.aborted = shared.abort.load(Ordering::Relaxed);
    if let Some(e) = read_error {
        return Err(Error::Trace(e));
    }
    if let Some(why) = lock(&shared.failure).take() {
        return Err(Error::ThreadFailed(why));
    }
    if let Some(r) = timings_result {
        report.timed_calls = Some(r?);
    }
    if !report.aborted {
        check_manifest(root, &manifest, &shared.owners, &mut report);
    }
    Ok(report)
}

/// The ids a process start record gives its thread.
fn creds_of(p: &ProcessStart) -> Creds {
    Creds {
        groups: p.groups.as_deref().map(std::sync::Arc::from),
        ..Creds::started(p.uid, p.euid, p.gid, p.egid)
    }
}

/// One replay thread: its calls in program order. Finished events go back
/// to the dispatcher (see [`Spent`]), their times to the timings writer.
fn thread_main(
    shared: &Shared<'_>,
    tid: u32,
    start: Start,
    rx: Receiver<Vec<Item>>,
    back: Back,
) -> Tally {
    short_slice();
    let mut tally = Tally::default();
    let proc = match start {
        Start::Ready(p) => Some(p),
        Start::Created(n) => shared.wait_birth(BirthKey::Created { tid, n }),
    };
    let Some(proc) = proc else {
        drain(shared, rx);
        return tally;
    };
    lock(&shared.latest).insert(tid, proc.downgrade());
    let birth = |child: u32, p: Proc| {
        lock(&shared.latest).insert(child, p.downgrade());
        shared.cloned(child, p);
    };
    let mut th = Thread {
        proc,
        root: shared.root,
        verify: shared.opts.verify,
        owners: shared.owners.clone(),
        birth: &birth,
        stopping: &|| shared.stopping(),
        progress: &shared.progress.calls,
        stalls: &shared.stalls,
        rings: &shared.rings,
        default_acls: &shared.default_acls,
        snapshots: &shared.snapshots,
        live_maps: &shared.live_maps,
        listings: &shared.listings,
        passed: &shared.passed,
        copies: &shared.copies,
        procs: &shared.latest,
        own_trace: shared.own_trace.as_deref(),
        acting: Acting::new(),
        copied_by_ns: u64::MAX,
        moved: 0,
        timed: back.timed.is_some(),
        issued: None,
        not_compared: Default::default(),
        unheld_moves: (0, 0),
    };
    'batches: while let Ok(batch) = rx.recv() {
        // The batch's room is given back once, when it is done.
        let mut finished = (0, 0);
        let mut spent = Vec::with_capacity(batch.len());
        let mut timed = Vec::new();
        let mut batch = batch.into_iter();
        while let Some(item) = batch.next() {
            match item {
                Item::Call(ev, row, ticket, bytes) => {
                    finished.0 += 1;
                    finished.1 += bytes;
                    if ticket.at_offset != AtOffset::No {
                        let description = th.proc.description(&ev, ev.args[0] as i32);
                        shared.order.resolve(&ticket, description);
                    }
                    if shared.stopping() || !wait(shared, &ticket) {
                        shared.order.done(&ticket);
                        continue;
                    }
                    th.copied_by_ns = ticket.exit_ns;
                    let mut outcome = th.run(&ev, row);
                    // Another thread's call that ended before this one, or
                    // then one that overlapped it, may have come first in
                    // the recording: a call that only looks is issued
                    // again after them.
                    let earlier = || shared.order.wait_earlier(&ticket, REQUERY_WAIT);
                    let overlapping = || {
                        if row.in_groups(Group::QUERY) && ticket.at_offset == AtOffset::Moves {
                            shared.order.step_aside(&ticket);
                        }
                        shared.wait_overlapping(&ticket)
                    };
                    for wait in [&earlier as &dyn Fn() -> bool, &overlapping] {
                        if outcome.mismatch().is_none() || !wait() || !th.ready_again(&ev, row) {
                            break;
                        }
                        outcome = th.run(&ev, row);
                        if outcome.mismatch().is_none() {
                            tally.requeried += 1;
                        }
                    }
                    if row.effect == Effect::Exec {
                        // exec replaced the descriptor table.
                        lock(&shared.latest).insert(tid, th.proc.downgrade());
                    }
                    shared.order.done(&ticket);
                    let c = tally.calls.entry(row.name).or_default();
                    let m = match outcome {
                        Outcome::Executed(m) => {
                            c.executed += 1;
                            if let Some(window) = th.issued {
                                timed.push(Timed::Call(timings::head(&ev, window)));
                            }
                            m
                        }
                        Outcome::Simulated(m) => {
                            c.simulated += 1;
                            m
                        }
                        Outcome::Skipped(why) => {
                            tally.skip(row.name, why);
                            None
                        }
                    };
                    if let Some(m) = m {
                        tally.calls.entry(row.name).or_default().mismatched += 1;
                        shared.mismatch(&ev, &m);
                    }
                    shared.progress.calls.fetch_add(1, Ordering::Relaxed);
                    spent.push(ev);
                }
                Item::Inherit(from) => {
                    if let Some(p) = shared.wait_birth(BirthKey::Handover(from)) {
                        th.proc = p;
                        lock(&shared.latest).insert(tid, th.proc.downgrade());
                    }
                }
                Item::End(by) => {
                    if let Some(by) = by {
                        shared.born(BirthKey::Handover(by), th.proc.clone());
                    }
                    shared.release(finished.0, finished.1);
                    release(shared, batch);
                    back.send(spent, timed);
                    break 'batches;
                }
            }
        }
        shared.release(finished.0, finished.1);
        back.send(spent, timed);
    }
    drain(shared, rx);
    for (status, n) in std::mem::take(&mut th.not_compared) {
        *tally.not_compared.entry(status).or_default() += n;
    }
    tally.unheld_moves.0 += th.unheld_moves.0;
    tally.unheld_moves.1 += th.unheld_moves.1;
    tally
}

/// Releases whatever is still queued for a thread that stopped early.
fn drain(shared: &Shared<'_>, rx: Receiver<Vec<Item>>) {
    while let Ok(batch) = rx.try_recv() {
        release(shared, batch);
    }
}

/// Start records [`copied_by`] keeps for calls still to come: a child's
/// usually comes just before its creating call's record.
const BIRTHS_MAX: usize = 4096;

/// When call `ev` ended, for ordering: its recorded exit, except that a
/// call that made a process or thread had done its part (copied the
/// parent's descriptor table, in the kernel at the start of the call) by
/// the time its child was born, often long before it returned (a
/// `vfork` returns when the child execs; a `clone3` of Java's took 2.4
/// ms). Another thread's `close` that began after the birth then leaves
/// the child's descriptor alone, and waits for the copy when the trace
/// holds the creating call first (records are written as calls end, so
/// one that ended before the creating call returned comes first; replayed
/// before the copy, it leaves the entry for it: `TableCopies::born`): the
/// child of Java's `ProcessBuilder` closes those descriptors itself, and
/// each such `close` failed `EBADF` in replay (79 to 134 mismatches for
/// 40 spawns from two threads; now 0 to 4 with eBPF, 1 to 8 with ptrace,
/// closes that began during the creating call, before the birth, which
/// the recording cannot place before or after the copy).
fn copied_by(ev: &SyscallEvent, row: &Syscall, births: &mut HashMap<u32, u64>) -> u64 {
    let exit_ns = ev.exit.map_or(u64::MAX, |x| x.exit_ns);
    match (row.effect, ev.created_id()) {
        (Effect::Spawn(_), Some(child)) => births
            .remove(&child)
            .filter(|&born| born >= ev.enter_ns)
            .map_or(exit_ns, |born| born.min(exit_ns)),
        _ => exit_ns,
    }
}

/// Releases calls that will not run.
fn release(shared: &Shared<'_>, items: impl IntoIterator<Item = Item>) {
    let (mut calls, mut bytes) = (0, 0);
    for item in items {
        if let Item::Call(_, _, ticket, b) = item {
            shared.order.done(&ticket);
            calls += 1;
            bytes += b;
        }
    }
    shared.release(calls, bytes);
}

/// How call `ev` relates to the file offset of its first argument's
/// description: the `cursor` group works at it; `fstat`, or a
/// `newfstatat`/`statx` of "" (`AT_EMPTY_PATH`), sees the size the writes
/// there made (a process's stdio stats its stdout, a log other processes
/// write, as it starts).
fn at_offset(row: &Syscall, ev: &SyscallEvent) -> AtOffset {
    if row.in_groups(Group::CURSOR) {
        return AtOffset::Moves;
    }
    if !row.in_groups(Group::STAT) {
        return AtOffset::No;
    }
    let mut kinds = row.params().iter().map(|p| p.kind);
    let of_descriptor = match (kinds.next(), kinds.next()) {
        (Some(Kind::Fd), _) => true,
        (Some(Kind::DirFd), Some(Kind::Path)) => ev
            .capture(1, Role::Entry)
            .is_some_and(|c| c.status == CaptureStatus::Complete && c.len == 0),
        _ => false,
    };
    match of_descriptor {
        true => AtOffset::Sees,
        false => AtOffset::No,
    }
}

/// How long before a timed call's due time its thread stops sleeping and
/// spins: a sleep ends late by the timer slack (50 µs by default) and the
/// wake-up, so calls were issued 63-66 µs after their time at the median;
/// spinning the last stretch (replayfs's pre-spin) issues them within
/// 0.2 µs (`bench/timing.sh`).
const PRE_SPIN: Duration = Duration::from_micros(200);

/// Waits for a call's turn (timing, then ordering); false on abort.
fn wait(shared: &Shared<'_>, t: &Ticket) -> bool {
    if let Timing::Scaled(x) = shared.opts.timing {
        let offset = t.enter_ns.saturating_sub(shared.t0) as f64 / x.max(1e-9);
        let due = shared.start + Duration::from_nanos(offset as u64);
        // Long waits (a recording's idle minute) in slices, so a stop is
        // heard within 100 ms.
        loop {
            let now = Instant::now();
            if due <= now + PRE_SPIN {
                break;
            }
            if shared.stopping() {
                return false;
            }
            std::thread::sleep((due - now - PRE_SPIN).min(Duration::from_millis(100)));
        }
        while Instant::now() < due {
            std::hint::spin_loop();
        }
    }
    shared.order.wait_turn(t)
}

/// Puts back, when replay ends, the recorded modes of paths whose owner
/// bits stood for the recorded user's access during it.
struct RestoreModes<'r>(&'r Root, Vec<KeptAccess>);

impl Drop for RestoreModes<'_> {
    fn drop(&mut self) {
        restore_recorded_modes(self.0, &mut self.1);
    }
}

/// Whether `ev` names the default ACL attribute (setxattr and its
/// kin): directories may have one from then on. Read as calls are
/// dispatched, before any runs.
fn sets_default_acl(ev: &SyscallEvent) -> bool {
    ev.captures.iter().any(|c| {
        c.role == Role::Entry
            && c.data
                .as_deref()
                .is_some_and(|d| d.strip_suffix(b"\0").unwrap_or(d) == exec::DEFAULT_ACL)
    })
}

/// Applies every before-state and path data record of the trace (the
/// first pass of [`prepare`]); stops at [`Progress::stop`].
fn apply_initial_states(
    reader: &mut Reader,
    prep: &mut Preparer<'_>,
    progress: &Progress,
    default_acls: &AtomicBool,
) -> Result<(), Error> {
    let mut viewer_known = false;
    while let Some(rec) = reader.next_record()? {
        if progress.stop.load(Ordering::Relaxed) {
            return Err(Error::Stopped);
        }
        if let (Record::ProcessStart(p), false) = (&rec, viewer_known) {
            // The first process's user stands for the recording's.
            let mut gids = vec![p.egid];
            gids.extend(p.groups.iter().flatten());
            prep.set_viewer(Viewer { uid: p.euid, gids });
            viewer_known = true;
        }
        let applies = match &rec {
            Record::PathState(p) => p.phase == PathPhase::Before,
            Record::PathData(_) => true,
            _ => false,
        };
        if applies {
            if let Record::PathState(p) = &rec {
                if p.xattrs.iter().any(|(name, _)| name == exec::DEFAULT_ACL) {
                    default_acls.store(true, Ordering::Relaxed);
                }
            }
            prep.apply(&rec).map_err(Error::Prepare)?;
        }
        // Few records come back (calls are passed over), so the bar moves
        // at each; across a long run of calls it waits for the next one.
        progress
            .read_bytes
            .store(reader.offset(), Ordering::Relaxed);
    }
    Ok(())
}

/// Applies every before-state of the trace to the root. Returns the paths
/// whose owner bits stand for the recorded user's access (not root).
fn prepare(
    trace: &Path,
    root: &Root,
    opts: &Options,
    progress: &Progress,
    report: &mut Report,
    default_acls: &AtomicBool,
) -> Result<Vec<KeptAccess>, Error> {
    // The calls' buffers are not needed here: only path contents are
    // loaded, so the blob frames of a data-heavy trace are not all
    // decompressed twice.
    let mut reader = Reader::open(trace, ReadOptions { data: false })?;
    reader.load_path_data(true);
    reader.skip_syscalls(true);
    reader.prefetch();
    progress
        .total_bytes
        .store(reader.file_len(), Ordering::Relaxed);
    let mut prep = Preparer::new(root, opts.replace);
    let applied = apply_initial_states(&mut reader, &mut prep, progress, default_acls);
    if let Err(e) = applied {
        // Owner bits set for the recorded user's access go back, as when
        // a replay ends: a second try (`--replace`) could not overwrite
        // a file left read-only.
        restore_recorded_modes(root, &mut prep.abandon());
        return Err(e);
    }
    let r = prep.finish().map_err(Error::Prepare)?;
    report.prepared_paths = r.paths;
    report.prepared_bytes = r.bytes;
    if let Some(first) = &r.first_made_up {
        report.prepare_notes.push(format!(
            "made {} {} (mode 0755) and {} {} (0644) that the trace holds no state of (a \
             damaged or recovered trace), the first {}",
            r.made_up_dirs,
            if r.made_up_dirs == 1 {
                "directory"
            } else {
                "directories"
            },
            r.made_up_files,
            if r.made_up_files == 1 {
                "file"
            } else {
                "files"
            },
            String::from_utf8_lossy(first)
        ));
    }
    if r.removed > 0 {
        report.prepare_notes.push(format!(
            "removed {} {} in the way of the recorded state (--replace), directories with \
             everything in them",
            r.removed,
            if r.removed == 1 { "path" } else { "paths" }
        ));
    }
    if r.skipped_special > 0 {
        report.prepare_notes.push(format!(
            "{} device {} not created (making device nodes needs root)",
            r.skipped_special,
            if r.skipped_special == 1 {
                "node"
            } else {
                "nodes"
            }
        ));
    }
    if r.root_made_searchable {
        report.prepare_notes.push(
            "gave the root directory search permission for every user (it stands for /, and \
             replay acts as the traced processes' users)"
                .into(),
        );
    }
    if r.owners_skipped > 0 {
        report.prepare_notes.push(format!(
            "{} paths owned by other users or groups are the replayer's (replaying without root; \
             their owners are not compared)",
            r.owners_skipped
        ));
    }
    if !r.access_kept.is_empty() {
        report.prepare_notes.push(format!(
            "{} of them have owner permission bits set to the recorded user's access to them \
             while replay runs (so the replayer, as owner, is refused what that user was; those \
             bits are not compared, and the recorded modes are put back at the end)",
            r.access_kept.len()
        ));
    }
    Ok(r.access_kept)
}

/// The replayer's effective group and supplementary groups: the groups
/// it can give its files to.
fn own_groups() -> Vec<u32> {
    // SAFETY: getegid cannot fail.
    let mut gids = vec![unsafe { libc::getegid() }];
    gids.extend(exec::supplementary_groups());
    gids
}

/// Compares the recorded final states with the root's.
fn check_manifest(root: &Root, manifest: &[PathState], owners: &Owners, report: &mut Report) {
    for want in manifest {
        if is_pseudo(&want.path) {
            continue;
        }
        report.manifest_paths += 1;
        let path = String::from_utf8_lossy(&want.path);
        match after_state_like(root, &want.path, want.hash) {
            Ok(got) => {
                for d in compare(want, &got, owners) {
                    report.manifest_diffs.push(format!("{path}: {d}"));
                }
            }
            Err(e) => report
                .manifest_diffs
                .push(format!("{path}: cannot inspect: {e}")),
        }
    }
}

/// Replay holds a real descriptor for every descriptor of every traced
/// process at once.
fn raise_fd_limit() {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain struct in and out.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

/// Asks the scheduler for a short time slice (100 µs) for the calling
/// thread. Under EEVDF (Linux 6.12 and later) a thread with a shorter
/// slice gets an earlier deadline, so a replay thread woken for its turn
/// preempts another program's long slice instead of waiting it out.
/// Older kernels refuse or ignore it, which changes nothing.
fn short_slice() {
    #[repr(C)]
    struct SchedAttr {
        size: u32,
        policy: u32,
        flags: u64,
        nice: i32,
        priority: u32,
        runtime: u64,
        deadline: u64,
        period: u64,
    }
    // SAFETY: getpriority only reads.
    let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        policy: libc::SCHED_OTHER as u32,
        flags: 0,
        nice,
        priority: 0,
        runtime: 100_000,
        deadline: 0,
        period: 0,
    };
    // SAFETY: a valid sched_attr of the size it states, for this thread.
    unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_has_copied_the_table_by_its_childs_birth() {
        use reanimator_trace::SyscallExit;
        let clone3 = catalogue::by_name("clone3").unwrap();
        let read = catalogue::by_name("read").unwrap();
        let call = |nr: u32, ret: i64| SyscallEvent {
            seq: 1,
            tgid: 1,
            tid: 1,
            nr,
            enter_ns: 100,
            args: [0; 6],
            exit: Some(SyscallExit {
                exit_ns: 900,
                ret,
                is_error: false,
            }),
            captures: Vec::new(),
        };
        let mut births = HashMap::from([(7, 160), (8, 50)]);
        // Child 7 was born at 160, long before the clone returned.
        assert_eq!(copied_by(&call(clone3.nr, 7), clone3, &mut births), 160);
        assert!(!births.contains_key(&7));
        // A birth before the call began is some older process's.
        assert_eq!(copied_by(&call(clone3.nr, 8), clone3, &mut births), 900);
        // No birth known; not a clone.
        assert_eq!(copied_by(&call(clone3.nr, 9), clone3, &mut births), 900);
        assert_eq!(copied_by(&call(read.nr, 7), read, &mut births), 900);
    }

    /// The markers each thread has received so far, batch by batch.
    fn received(rx: &Receiver<Vec<Item>>) -> Vec<Vec<u32>> {
        rx.try_iter()
            .map(|batch| {
                batch
                    .into_iter()
                    .map(|item| match item {
                        Item::Inherit(n) => n,
                        _ => unreachable!("only markers are queued"),
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn batches_go_out_when_full_or_old_and_never_before_an_older_one() {
        let mut out = Outbox::new();
        let (tx1, rx1) = channel();
        let (tx2, rx2) = channel();
        out.queues.insert(1, tx1);
        out.queues.insert(2, tx2);
        // Interleaved calls of two threads: each gets a batch of its own.
        for (tid, marker) in [(1, 10), (2, 20), (1, 11)] {
            out.tick();
            out.call(tid, Item::Inherit(marker));
        }
        assert!(received(&rx1).is_empty() && received(&rx2).is_empty());
        // Thread 1's batch began one record before thread 2's: it goes
        // out first, once it is old enough, and thread 2's one record later.
        for _ in 0..Outbox::AGE - 2 {
            out.tick();
        }
        assert_eq!(received(&rx1), vec![vec![10, 11]]);
        assert!(received(&rx2).is_empty());
        out.tick();
        assert_eq!(received(&rx2), vec![vec![20]]);
        // A full batch takes every older batch with it.
        out.tick();
        out.call(1, Item::Inherit(12));
        for i in 0..Outbox::BATCH as u32 {
            out.call(2, Item::Inherit(100 + i));
        }
        assert_eq!(received(&rx1), vec![vec![12]]);
        assert_eq!(
            received(&rx2),
            vec![(100..100 + Outbox::BATCH as u32).collect::<Vec<_>>()]
        );
        // A lifecycle item goes out at once, after everything pending.
        out.call(1, Item::Inherit(13));
        out.send_now(2, Item::Inherit(21));
        assert_eq!(received(&rx1), vec![vec![13]]);
        assert_eq!(received(&rx2), vec![vec![21]]);
    }
}
