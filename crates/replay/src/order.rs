//! When a replay thread may issue its next call.
//!
//! Inside one thread calls run in program order. Across threads:
//!
//! - `overlap` (default): a call waits for every call that, in the trace,
//!   *ended before it started*; calls that overlapped in time may run in
//!   any order. Records arrive in completion order, so "every call that
//!   ended before time T" is a prefix of the dispatched calls: the replay
//!   keeps them in a ring and a call may go once the oldest unfinished one
//!   ended, in the trace, at or after its own start.
//! - `commute`: as `overlap`, except that positional reads and writes
//!   (`pread64`, `pwrite64`) that commute — two reads, or two writes to
//!   disjoint byte ranges — need not wait for each other. Results and
//!   final file contents are those of `overlap`; only the order the
//!   device sees them in differs. A call looks at most [`SCAN_LIMIT`]
//!   dispatched calls back, which bounds how far threads drift apart.
//! - `strict`: calls are issued in global sequence order (entry order).
//!   A call waits until every record with a smaller sequence id has been
//!   read and every call among them issued, and, as under `overlap`,
//!   until every call that ended before it began has finished. Calls
//!   that overlapped in the recording count as issued when they start,
//!   so strict order cannot deadlock on a pipe, and a call that started
//!   after another ended never races it (a `close` in one thread and the
//!   `open` in another that reused its number).
//!
//! Under `overlap` and `commute`, calls at the file offset of one open
//! file description (the catalogue's `cursor` group: `read`, `write`,
//! `lseek` ...) also keep the order they finished in, even when they
//! overlapped: processes sharing a description share its offset, and the
//! kernel serialised them, so two log lines written by two processes of
//! a server land in the recorded order. Which description a call uses is
//! known only when its thread reaches it ([`Order::resolve`]); until then
//! a later call of the group waits for it. A call that only sees what
//! they did (`fstat` of the descriptor, [`AtOffset::Sees`]) is waited for
//! by those that finished after it, and waits for none: one that ran too
//! early is issued again, one that ran too late could not be.
//!
//! No policy can deadlock on its own: a call only waits for calls that,
//! in the recording, finished (overlap, commute, cursor) or began
//! (strict) before it began or, for the cursor rule, before it finished,
//! and those never waited for it.

use std::collections::{BTreeSet, HashSet, VecDeque};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use reanimator_catalogue::{Effect, PositionalIo, Syscall};
use reanimator_trace::SyscallEvent;

use crate::state::lock;

/// Dispatched calls a `commute` call looks back over before it waits
/// anyway: checking is linear in it, and a thread cannot get further ahead
/// of the slowest one.
const SCAN_LIMIT: usize = 512;

/// Dispatched calls after its own that a mismatched query looks over for
/// calls that overlapped it (see [`Order::wait_overlapping`]).
const OVERLAP_SCAN: usize = 4096;

/// Times a waiting thread yields the CPU before it sleeps on the condvar.
/// Sleeping and being woken costs futex calls and context switches on
/// both sides, far more than yielding while the call ahead finishes. On
/// the 4-thread pwrite storm (medians of 7 runs, wall / CPU): 32 yields
/// 1.20 s / 1.93 s, 1024 yields 0.78 / 1.32 s, 4096 yields 0.62 / 1.11 s;
/// yielding for a fixed 2 ms instead did worse (1.11 s), since a yield
/// lasts longer the busier the CPUs are.
const SPINS: u32 = 4096;

/// The cross-thread ordering policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderPolicy {
    /// Keep the order of calls that did not overlap in time.
    Overlap,
    /// As `Overlap`, but commuting positional reads and writes may pass
    /// each other.
    Commute,
    /// Global recorded order of entry.
    Strict,
}

impl OrderPolicy {
    /// The policy's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            OrderPolicy::Overlap => "overlap",
            OrderPolicy::Commute => "commute",
            OrderPolicy::Strict => "strict",
        }
    }
}

/// Which open file description's offset a dispatched call works at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cursor {
    /// None: the call does not use a file offset, or not a shared one.
    Free,
    /// A `cursor` call its thread has not reached: it may turn out to be
    /// on any description.
    Unresolved,
    /// On this description (the address of its real descriptor).
    On(usize),
    /// On a pipe, socket or simulated descriptor: no shared file offset,
    /// and no file whose size or bytes it could change. It may block on
    /// another thread's later call (a pipe read), so a query issued again
    /// does not wait for it.
    Stream,
}

/// How a dispatched call relates to a descriptor's file offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtOffset {
    /// It does not use one.
    No,
    /// It works at it (the catalogue's `cursor` group): it keeps the
    /// order it finished in among the calls at that description.
    Moves,
    /// It only sees what those calls did (an `fstat` of the descriptor
    /// sees the size the writes made): the calls at that description
    /// that finished after it wait for it, but it waits for none of
    /// them; replay issues it again if it ran too early.
    Sees,
}

/// One dispatched call, as the ordering sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket {
    /// Position in the dispatch ring.
    pub slot: u64,
    /// Sequence id (strict).
    pub seq: u64,
    /// Recorded entry time.
    pub enter_ns: u64,
    /// Recorded exit time.
    pub exit_ns: u64,
    /// The bytes it reads or writes, when it may pass other calls
    /// (commute).
    pub io: Option<PositionalIo>,
    /// Whether it must say which description it is at ([`Order::resolve`]).
    pub at_offset: AtOffset,
}

/// A dispatched call in the overlap ring.
struct Slot {
    enter_ns: u64,
    exit_ns: u64,
    done: bool,
    io: Option<PositionalIo>,
    cursor: Cursor,
    /// [`AtOffset::Sees`]: waited for under the cursor rule, waits for
    /// no one under it.
    sees_only: bool,
}

struct State {
    /// Dispatched calls in completion order, from slot `base` on.
    ring: VecDeque<Slot>,
    base: u64,
    /// Strict: every sequence id below `watermark` has been passed; ids at
    /// or above it that passed early wait in `passed`.
    watermark: u64,
    passed: BTreeSet<u64>,
    /// Strict: calls dispatched and not yet issued.
    pending: BTreeSet<u64>,
    /// Strict: the dispatcher ran out of read-ahead room while every
    /// thread waited, for ids it has not read; until the watermark passes
    /// this id, the oldest pending call may go despite unread ids before
    /// it (see [`Order::starve`]).
    starved_below: Option<u64>,
    /// Set when replay stops early: every waiter gives up.
    aborted: bool,
    /// Threads blocked in `wait_earlier` on the condvar: with none,
    /// finishing a call notifies nobody (a notify is a system call).
    waiters: usize,
    /// Threads asleep in `wait_turn`, each woken only once its call may
    /// go: waking every sleeper at every finished call (a condvar's
    /// `notify_all`) cost a replay of postgres's 39 threads a million
    /// context switches.
    sleepers: Vec<Sleeper>,
}

/// A thread asleep in `wait_turn`.
struct Sleeper {
    ticket: Ticket,
    /// Where its commute scan resumes.
    checked: u64,
    thread: std::thread::Thread,
}

/// The shared ordering state.
pub(crate) struct Order {
    policy: OrderPolicy,
    state: Mutex<State>,
    cv: Condvar,
}

impl Order {
    /// An empty ordering; `first_seq` is the smallest sequence id of the
    /// trace (strict order starts there).
    pub fn new(policy: OrderPolicy, first_seq: u64) -> Self {
        Order {
            policy,
            state: Mutex::new(State {
                ring: VecDeque::new(),
                base: 0,
                watermark: first_seq,
                passed: BTreeSet::new(),
                pending: BTreeSet::new(),
                starved_below: None,
                aborted: false,
                waiters: 0,
                sleepers: Vec::new(),
            }),
            cv: Condvar::new(),
        }
    }

    /// Registers a call about to be handed to its thread. `io` is its byte
    /// range when it may pass commuting calls; `at_offset` says whether it
    /// works at or sees a descriptor's file offset (its thread then calls
    /// [`Self::resolve`] before [`Self::wait_turn`]).
    pub fn dispatch(
        &self,
        seq: u64,
        enter_ns: u64,
        exit_ns: u64,
        io: Option<PositionalIo>,
        at_offset: AtOffset,
    ) -> Ticket {
        let mut s = lock(&self.state);
        let slot = s.base + s.ring.len() as u64;
        let io = io.filter(|_| self.policy == OrderPolicy::Commute);
        if self.policy == OrderPolicy::Strict {
            s.pending.insert(seq);
        }
        // Strict order issues calls by entry, and a call that finished
        // first may have entered last: the two rules could wait for each
        // other.
        let at_offset = match self.policy {
            OrderPolicy::Strict => AtOffset::No,
            _ => at_offset,
        };
        let cursor = match at_offset {
            AtOffset::No => Cursor::Free,
            AtOffset::Moves | AtOffset::Sees => Cursor::Unresolved,
        };
        s.ring.push_back(Slot {
            enter_ns,
            exit_ns,
            done: false,
            io,
            cursor,
            sees_only: at_offset == AtOffset::Sees,
        });
        Ticket {
            slot,
            seq,
            enter_ns,
            exit_ns,
            io,
            at_offset,
        }
    }

    /// Says which open file description a `cursor` call works at, now
    /// that its thread has reached it: `None` when it has no shared file
    /// offset (a pipe, a simulated descriptor, a closed number).
    pub fn resolve(&self, t: &Ticket, description: Option<usize>) {
        let mut s = lock(&self.state);
        let base = s.base;
        let Some(slot) = s.ring.get_mut((t.slot - base) as usize) else {
            return;
        };
        if slot.cursor != Cursor::Unresolved {
            return;
        }
        slot.cursor = description.map_or(Cursor::Stream, Cursor::On);
        // A later call of the group may be waiting to learn this.
        if !s.sleepers.is_empty() {
            self.wake(&mut s);
        }
    }

    /// Strict order: a record that no thread issues (process records,
    /// ignored calls, path states) passes as soon as it is read.
    pub fn pass(&self, seq: u64) {
        if self.policy == OrderPolicy::Strict {
            let mut s = lock(&self.state);
            if Self::pass_locked(&mut s, seq) {
                self.wake(&mut s);
            }
        }
    }

    /// Strict order when the dispatcher's read-ahead room is full and no
    /// call finishes: every thread waits for a sequence id not read yet,
    /// which (records come in completion order) belongs to a call that
    /// entered before them and ended after every call read so far, so it
    /// overlapped each of them. Strict order lets a call start once an
    /// overlapping predecessor has started; an unread one cannot, so it
    /// counts as started: read calls go on in sequence order, skipping
    /// unread ids below `max_read`, until the watermark passes it. (A
    /// 4-thread storm's main thread, blocked in `pthread_join` from the
    /// start, is such a call; without this, replay read one more record
    /// every 200 ms.)
    pub fn starve(&self, max_read: u64) {
        if self.policy == OrderPolicy::Strict {
            let mut s = lock(&self.state);
            if s.watermark < max_read {
                s.starved_below = Some(max_read);
                self.wake(&mut s);
            }
        }
    }

    /// Strict order at the end of the trace: sequence ids never seen are
    /// passed so nobody waits for them.
    pub fn pass_all(&self) {
        let mut s = lock(&self.state);
        s.watermark = u64::MAX;
        s.passed.clear();
        self.wake(&mut s);
    }

    fn pass_locked(s: &mut State, seq: u64) -> bool {
        if seq < s.watermark {
            return false;
        }
        s.passed.insert(seq);
        let mut moved = false;
        while s.passed.remove(&s.watermark) {
            s.watermark += 1;
            moved = true;
        }
        if s.starved_below.is_some_and(|below| s.watermark >= below) {
            s.starved_below = None;
        }
        moved
    }

    /// True when the call may be issued now. `checked` is the first ring
    /// slot not yet known to let the call pass (commute order resumes
    /// there instead of rescanning).
    fn ready(&self, s: &State, t: &Ticket, checked: &mut u64) -> bool {
        // Finished calls leave the front at once, so the front is the
        // oldest unfinished one.
        let overlap = || {
            s.ring
                .front()
                .is_none_or(|f| f.exit_ns >= t.enter_ns || s.base == t.slot)
        };
        match self.policy {
            OrderPolicy::Overlap => overlap() && Self::cursor_ready(s, t),
            OrderPolicy::Commute => Self::commute_ready(s, t, checked) && Self::cursor_ready(s, t),
            OrderPolicy::Strict => {
                let turn = s.watermark >= t.seq
                    || (s.starved_below.is_some() && s.pending.first() == Some(&t.seq));
                turn && overlap()
            }
        }
    }

    /// Blocks until the call may be issued; false when replay is aborting.
    pub fn wait_turn(&self, t: &Ticket) -> bool {
        let mut s = lock(&self.state);
        let mut spins = 0;
        let mut checked = 0;
        loop {
            let ready = !s.aborted && self.ready(&s, t, &mut checked);
            if s.aborted || ready {
                if let Some(i) = s.sleepers.iter().position(|x| x.ticket.slot == t.slot) {
                    s.sleepers.swap_remove(i);
                }
            }
            if s.aborted {
                return false;
            }
            if ready {
                if self.policy == OrderPolicy::Strict {
                    s.pending.remove(&t.seq);
                    // Under starvation the next pending call's turn comes
                    // even when the watermark stays.
                    let starved = s.starved_below.is_some();
                    if Self::pass_locked(&mut s, t.seq) || starved {
                        self.wake(&mut s);
                    }
                }
                return true;
            }
            if spins < SPINS {
                // The turn usually comes within microseconds (the call
                // before ours, in another thread, is running): giving the
                // CPU away briefly is far cheaper than sleeping and being
                // woken by a futex call.
                spins += 1;
                drop(s);
                std::thread::yield_now();
                s = lock(&self.state);
                continue;
            }
            // Asleep until `wake` finds this call may go (or a spurious
            // wake-up: then look again).
            if !s.sleepers.iter().any(|x| x.ticket.slot == t.slot) {
                s.sleepers.push(Sleeper {
                    ticket: *t,
                    checked,
                    thread: std::thread::current(),
                });
            }
            drop(s);
            std::thread::park();
            s = lock(&self.state);
        }
    }

    /// Wakes the sleepers whose calls may go now, and every thread in
    /// `wait_earlier`.
    fn wake(&self, s: &mut State) {
        let mut i = 0;
        while i < s.sleepers.len() {
            let (t, mut checked) = (s.sleepers[i].ticket, s.sleepers[i].checked);
            let go = s.aborted || self.ready(s, &t, &mut checked);
            s.sleepers[i].checked = checked;
            if go {
                s.sleepers.swap_remove(i).thread.unpark();
            } else {
                i += 1;
            }
        }
        if s.waiters > 0 {
            self.cv.notify_all();
        }
    }

    /// The cursor rule: a call at a description's offset goes once every
    /// call that finished before it, in the trace, at that description's
    /// offset (or at one not known yet) has finished. Calls that did not
    /// overlap it are already waited for, so only the unfinished slots
    /// before its own are looked at, at most [`SCAN_LIMIT`] of them.
    fn cursor_ready(s: &State, t: &Ticket) -> bool {
        let Some(own) = s.ring.get((t.slot - s.base) as usize) else {
            return true;
        };
        let Cursor::On(description) = own.cursor else {
            return true;
        };
        if own.sees_only {
            return true;
        }
        let before = (t.slot - s.base) as usize;
        if before > SCAN_LIMIT {
            return false;
        }
        s.ring.iter().take(before).all(|x| {
            x.done || !matches!(x.cursor, Cursor::Unresolved) && x.cursor != Cursor::On(description)
        })
    }

    /// Commute order: every unfinished call that ended, in the trace,
    /// before this one began commutes with it. Slots before `checked`
    /// were found done or commuting by an earlier try and stay so; the
    /// scan resumes at `checked` and leaves it at the slot that blocks.
    fn commute_ready(s: &State, t: &Ticket, checked: &mut u64) -> bool {
        let start = (*checked).max(s.base);
        for (i, slot) in s.ring.iter().enumerate().skip((start - s.base) as usize) {
            *checked = s.base + i as u64;
            if slot.exit_ns >= t.enter_ns || *checked == t.slot {
                return true;
            }
            if i >= SCAN_LIMIT {
                return false;
            }
            if slot.done {
                continue;
            }
            match (&slot.io, &t.io) {
                (Some(a), Some(b)) if a.commutes_with(b) => {}
                _ => return false,
            }
        }
        true
    }

    /// Blocks until every call that ended, in the trace, before this one
    /// ended has finished (they never wait for it: each ended before it),
    /// or `limit` has passed; true when they have.
    pub fn wait_earlier(&self, t: &Ticket, limit: Duration) -> bool {
        // Finished calls leave the front at once.
        self.wait_until(limit, |s| s.base >= t.slot)
    }

    /// As [`Self::wait_earlier`], and also until every call dispatched so
    /// far that began, in the trace, before this one ended has finished:
    /// a write that extends a file can show in another thread's
    /// `lseek(SEEK_END)` that ended first. Calls on pipes and sockets are
    /// not waited for: they change no file, and a pipe read may wait for
    /// what this thread does later. Another blocking call may too: then
    /// `limit` ends the wait.
    pub fn wait_overlapping(&self, t: &Ticket, limit: Duration) -> bool {
        self.wait_until(limit, |s| {
            // Calls at the same description's offset (or at one not known
            // yet) wait for this one under the cursor rule.
            let own = s.ring.get((t.slot - s.base) as usize).map(|x| x.cursor);
            let waits_for_it = |c: Cursor| match own {
                Some(Cursor::On(d)) => c == Cursor::On(d) || c == Cursor::Unresolved,
                _ => false,
            };
            s.base >= t.slot
                && s.ring
                    .iter()
                    .skip((t.slot + 1 - s.base) as usize)
                    .take(OVERLAP_SCAN)
                    .all(|x| {
                        x.done
                            || x.enter_ns >= t.exit_ns
                            || x.cursor == Cursor::Stream
                            || waits_for_it(x.cursor)
                    })
        })
    }

    /// Blocks until `ready` holds, replay aborts or `limit` has passed;
    /// true when `ready` held.
    fn wait_until(&self, limit: Duration, ready: impl Fn(&State) -> bool) -> bool {
        let deadline = Instant::now() + limit;
        let mut s = lock(&self.state);
        loop {
            if s.aborted || ready(&s) {
                return !s.aborted;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            s.waiters += 1;
            s = self
                .cv
                .wait_timeout(s, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            s.waiters -= 1;
        }
    }

    /// Marks a call finished.
    pub fn done(&self, t: &Ticket) {
        let mut s = lock(&self.state);
        let i = (t.slot - s.base) as usize;
        if let Some(e) = s.ring.get_mut(i) {
            e.done = true;
        }
        // Under commute order, and for `wait_overlapping`, any finished
        // call may be the one a waiter waits for, not only the oldest.
        let mut moved = self.policy == OrderPolicy::Commute || s.waiters > 0;
        // A finished `cursor` call may be what another one waits for.
        moved |= s
            .ring
            .get(i)
            .is_some_and(|e| !matches!(e.cursor, Cursor::Free | Cursor::Stream));
        while s.ring.front().is_some_and(|f| f.done) {
            s.ring.pop_front();
            s.base += 1;
            moved = true;
        }
        if moved {
            self.wake(&mut s);
        }
    }

    /// A call at a description's offset that only looks (`lseek`) and
    /// mismatched, about to be issued again: the calls at that offset
    /// that finished after it in the trace no longer wait for it, so the
    /// next try can see them. Two processes appending to one log through
    /// their own descriptions: Python's `lseek(SEEK_END)` on opening it
    /// overlapped the other's `write` and saw its bytes, though it
    /// finished first. Until then the write waited for the `lseek`, and
    /// the `lseek` for nothing more. The order of calls that did not
    /// overlap it is kept.
    pub fn step_aside(&self, t: &Ticket) {
        let mut s = lock(&self.state);
        let Some(i) = t.slot.checked_sub(s.base) else {
            return;
        };
        let Some(slot) = s.ring.get_mut(i as usize) else {
            return;
        };
        if let Cursor::On(_) = slot.cursor {
            slot.cursor = Cursor::Free;
            self.wake(&mut s);
        }
    }

    /// Wakes every waiter and makes them give up.
    pub fn abort(&self) {
        let mut s = lock(&self.state);
        s.aborted = true;
        self.wake(&mut s);
        self.cv.notify_all();
    }
}

/// Which descriptor numbers positional calls may commute on, followed by
/// the dispatcher through the trace. A `pwrite64` on an `O_APPEND` file
/// appends whatever its offset says, so only descriptors the trace itself
/// opened without `O_APPEND` qualify. Numbers are not told apart by
/// process: a number leaves the set when any process gets a descriptor
/// under it some other way (dup, fcntl, an inherited descriptor, a
/// socket message that may carry descriptors), which only ever makes the
/// ordering stricter.
#[derive(Default)]
pub(crate) struct CommuteFds {
    fds: HashSet<i32>,
}

impl CommuteFds {
    /// Follows one dispatched call; returns its byte range when it may
    /// pass commuting calls.
    pub fn observe(&mut self, row: &Syscall, ev: &SyscallEvent) -> Option<PositionalIo> {
        let ret = ev.exit.filter(|x| !x.is_error).map(|x| x.ret)?;
        if let Some(io) = row.positional_io(&ev.args) {
            return Some(io).filter(|io| self.fds.contains(&io.fd));
        }
        let fd = i32::try_from(ret).ok();
        match row.effect {
            Effect::ReceiveFds => self.fds.clear(),
            Effect::Fcntl => {
                self.fds.remove(&(ev.args[0] as i32));
                fd.map(|fd| self.fds.remove(&fd));
            }
            _ if row.makes_descriptor(&ev.args) => {
                let fd = fd?;
                match row.open_flags(&ev.args) {
                    Some(flags) if flags & libc::O_APPEND as u64 == 0 => self.fds.insert(fd),
                    _ => self.fds.remove(&fd),
                };
            }
            _ => {}
        }
        None
    }

    /// A process whose descriptors were open before tracing: their flags
    /// are unknown.
    pub fn inherited(&mut self, fds: impl IntoIterator<Item = i32>) {
        for fd in fds {
            self.fds.remove(&fd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reanimator_trace::SyscallExit;
    use std::sync::Arc;

    fn pwrite(fd: i32, start: u64) -> Option<PositionalIo> {
        Some(PositionalIo {
            fd,
            write: true,
            start,
            end: start + 4096,
        })
    }

    fn pread(fd: i32, start: u64) -> Option<PositionalIo> {
        Some(PositionalIo {
            write: false,
            ..pwrite(fd, start).unwrap()
        })
    }

    /// Whether call `b` (entered at 20) may go while `a` (ended at 10,
    /// so before `b` began) is unfinished.
    fn passes(policy: OrderPolicy, a: Option<PositionalIo>, b: Option<PositionalIo>) -> bool {
        let order = Order::new(policy, 1);
        order.dispatch(1, 5, 10, a, AtOffset::No);
        let t = order.dispatch(2, 20, 30, b, AtOffset::No);
        let s = lock(&order.state);
        order.ready(&s, &t, &mut 0)
    }

    #[test]
    fn commuting_positional_calls_pass_each_other_only_under_commute() {
        use OrderPolicy::*;
        assert!(passes(Commute, pwrite(3, 0), pwrite(3, 4096)));
        assert!(passes(Commute, pread(3, 0), pread(3, 0)));
        assert!(!passes(Overlap, pwrite(3, 0), pwrite(3, 4096)));
        assert!(!passes(Strict, pwrite(3, 0), pwrite(3, 4096)));
        // Strict order also waits for a call that ended before this one
        // began, even once that call has started.
        let order = Order::new(Strict, 1);
        let first = order.dispatch(1, 5, 10, None, AtOffset::No);
        let second = order.dispatch(2, 20, 30, None, AtOffset::No);
        assert!(order.wait_turn(&first));
        assert!(!order.ready(&lock(&order.state), &second, &mut 0));
        order.done(&first);
        assert!(order.ready(&lock(&order.state), &second, &mut 0));
        // Overlapping writes, a read after a write, and any other call
        // keep their recorded order.
        assert!(!passes(Commute, pwrite(3, 0), pwrite(3, 2048)));
        assert!(!passes(Commute, pwrite(3, 0), pread(3, 8192)));
        assert!(!passes(Commute, None, pwrite(3, 4096)));
        assert!(!passes(Commute, pwrite(3, 0), None));
    }

    #[test]
    fn a_commute_call_waits_once_it_is_too_far_ahead() {
        let order = Order::new(OrderPolicy::Commute, 1);
        let lagging = order.dispatch(1, 1, 2, pwrite(3, 0), AtOffset::No);
        for i in 0..SCAN_LIMIT as u64 {
            let t = order.dispatch(2 + i, 3 + i, 3 + i, pwrite(4, 4096 * (i + 1)), AtOffset::No);
            order.done(&t);
        }
        let far = order.dispatch(9999, 100_000, 100_001, pwrite(4, 1 << 30), AtOffset::No);
        assert!(!order.ready(&lock(&order.state), &far, &mut 0));
        order.done(&lagging);
        assert!(order.ready(&lock(&order.state), &far, &mut 0));
    }

    #[test]
    fn calls_at_one_shared_offset_keep_the_order_they_finished_in() {
        use OrderPolicy::*;
        // Two writes that overlapped in time (2..8 and 1..9): only the
        // cursor rule orders them.
        for policy in [Overlap, Commute] {
            let order = Order::new(policy, 1);
            let first = order.dispatch(1, 2, 8, None, AtOffset::Moves);
            let second = order.dispatch(2, 1, 9, None, AtOffset::Moves);
            let ready = |t: &Ticket| order.ready(&lock(&order.state), t, &mut 0);
            // Not known yet where the first one writes: the second waits.
            order.resolve(&second, Some(7));
            assert!(!ready(&second), "{policy:?}");
            // On another description, or at no offset: it goes.
            order.resolve(&first, Some(8));
            assert!(ready(&second), "{policy:?}");
            let order = Order::new(policy, 1);
            let first = order.dispatch(1, 2, 8, None, AtOffset::Moves);
            let second = order.dispatch(2, 1, 9, None, AtOffset::Moves);
            let ready = |t: &Ticket| order.ready(&lock(&order.state), t, &mut 0);
            order.resolve(&first, Some(7));
            order.resolve(&second, Some(7));
            assert!(ready(&first));
            assert!(!ready(&second), "{policy:?}");
            order.done(&first);
            assert!(ready(&second), "{policy:?}");
            // A call of another kind never waits under this rule.
            let order = Order::new(policy, 1);
            order.dispatch(1, 2, 8, None, AtOffset::Moves);
            let other = order.dispatch(2, 1, 9, None, AtOffset::No);
            assert!(order.ready(&lock(&order.state), &other, &mut 0));
        }
        // Strict order issues by entry: the rule would fight it.
        let order = Order::new(Strict, 1);
        let first = order.dispatch(2, 2, 8, None, AtOffset::Moves);
        let second = order.dispatch(1, 1, 9, None, AtOffset::Moves);
        order.resolve(&first, Some(7));
        order.resolve(&second, Some(7));
        assert!(order.ready(&lock(&order.state), &second, &mut 0));
    }

    /// An `fstat` of a shared description that finished before an
    /// overlapping write there goes first (the write waits for it), but
    /// one that finished after a write does not wait for it: it is issued
    /// again if it ran too early, and could not be if it ran too late.
    #[test]
    fn a_call_that_sees_a_shared_offset_is_waited_for_and_waits_for_none() {
        let order = Order::new(OrderPolicy::Overlap, 1);
        let stat = order.dispatch(1, 2, 8, None, AtOffset::Sees);
        let write = order.dispatch(2, 1, 9, None, AtOffset::Moves);
        let later = order.dispatch(3, 3, 10, None, AtOffset::Sees);
        let ready = |t: &Ticket| order.ready(&lock(&order.state), t, &mut 0);
        order.resolve(&write, Some(7));
        order.resolve(&later, Some(7));
        // Not known yet which description the stat looks at.
        assert!(!ready(&write));
        order.resolve(&stat, Some(7));
        assert!(ready(&stat));
        assert!(!ready(&write));
        assert!(ready(&later), "it waits for neither the write nor the stat");
        order.done(&stat);
        assert!(ready(&write));
    }

    /// A call at a shared offset that mismatched and is issued again does
    /// not wait for the overlapping calls at that offset: they wait for it.
    #[test]
    fn a_cursor_call_issued_again_does_not_wait_for_those_waiting_for_it() {
        let order = Order::new(OrderPolicy::Overlap, 1);
        let read = order.dispatch(1, 10, 20, None, AtOffset::Moves);
        let write = order.dispatch(2, 15, 25, None, AtOffset::Moves);
        let other = order.dispatch(3, 16, 26, None, AtOffset::Moves);
        order.resolve(&read, Some(7));
        order.resolve(&write, Some(7));
        order.resolve(&other, Some(8));
        assert!(order.wait_turn(&read));
        let short = Duration::from_millis(50);
        // The call on another description is waited for.
        assert!(!order.wait_overlapping(&read, short));
        order.done(&other);
        assert!(order.wait_overlapping(&read, short));
        assert!(!order.ready(&lock(&order.state), &write, &mut 0));
    }

    /// An `lseek` that ran too early steps aside: the overlapping write
    /// at its description that finished after it may go, and the next try
    /// waits for it.
    #[test]
    fn a_query_at_a_shared_offset_steps_aside_for_the_calls_after_it() {
        let order = Order::new(OrderPolicy::Overlap, 1);
        let lseek = order.dispatch(1, 10, 20, None, AtOffset::Moves);
        let write = order.dispatch(2, 15, 25, None, AtOffset::Moves);
        // A pipe read that overlapped it is not waited for.
        let pipe = order.dispatch(3, 12, 50, None, AtOffset::Moves);
        order.resolve(&pipe, None);
        let after = order.dispatch(4, 30, 40, None, AtOffset::Moves);
        for t in [&lseek, &write, &after] {
            order.resolve(t, Some(7));
        }
        assert!(order.wait_turn(&lseek));
        let ready = |t: &Ticket| order.ready(&lock(&order.state), t, &mut 0);
        assert!(!ready(&write));
        order.step_aside(&lseek);
        assert!(ready(&write));
        let short = Duration::from_millis(50);
        assert!(
            !order.wait_overlapping(&lseek, short),
            "waits for the write"
        );
        order.done(&write);
        assert!(order.wait_overlapping(&lseek, short));
        assert!(!ready(&after), "began after the lseek ended");
        order.done(&lseek);
        assert!(ready(&after));
    }

    /// A thread waiting under the cursor rule is woken when the call it
    /// waits for finishes, even though that call is not the oldest
    /// unfinished one (which may wait for the waiter's own thread).
    #[test]
    fn a_finished_cursor_call_wakes_the_one_waiting_for_it() {
        let order = Arc::new(Order::new(OrderPolicy::Overlap, 1));
        let _oldest = order.dispatch(1, 1, 20, None, AtOffset::No);
        let first = order.dispatch(2, 2, 8, None, AtOffset::Moves);
        let second = order.dispatch(3, 1, 9, None, AtOffset::Moves);
        order.resolve(&first, Some(7));
        order.resolve(&second, Some(7));
        let waiter = {
            let order = order.clone();
            std::thread::spawn(move || order.wait_turn(&second))
        };
        while lock(&order.state).sleepers.is_empty() {
            std::thread::yield_now();
        }
        order.done(&first);
        assert!(waiter.join().unwrap());
    }

    fn event(name: &str, args: &[u64], ret: i64) -> (&'static Syscall, SyscallEvent) {
        let row = reanimator_catalogue::by_name(name).expect(name);
        let mut a = [0u64; 6];
        a[..args.len()].copy_from_slice(args);
        let ev = SyscallEvent {
            seq: 1,
            tgid: 1,
            tid: 1,
            nr: row.nr,
            enter_ns: 1,
            args: a,
            exit: Some(SyscallExit {
                exit_ns: 2,
                ret,
                is_error: ret < 0,
            }),
            captures: Vec::new(),
        };
        (row, ev)
    }

    fn observe(fds: &mut CommuteFds, name: &str, args: &[u64], ret: i64) -> bool {
        let (row, ev) = event(name, args, ret);
        fds.observe(row, &ev).is_some()
    }

    #[test]
    fn only_descriptors_opened_without_o_append_commute() {
        let at = -100i64 as u64;
        let append = libc::O_WRONLY as u64 | libc::O_APPEND as u64;
        let mut fds = CommuteFds::default();
        assert!(!observe(&mut fds, "pwrite64", &[3, 0, 4096, 0], 4096));
        observe(&mut fds, "openat", &[at, 0, libc::O_RDWR as u64, 0], 3);
        observe(&mut fds, "openat", &[at, 0, append, 0], 4);
        assert!(observe(&mut fds, "pwrite64", &[3, 0, 4096, 0], 4096));
        assert!(observe(&mut fds, "pread64", &[3, 0, 4096, 0], 4096));
        assert!(!observe(&mut fds, "pwrite64", &[4, 0, 4096, 0], 4096));
        // A failed call never passes anything.
        assert!(!observe(&mut fds, "pwrite64", &[3, 0, 4096, 0], -28));
        // fcntl may set O_APPEND; dup2 may put another file there.
        observe(&mut fds, "fcntl", &[3, libc::F_SETFL as u64, append], 0);
        assert!(!observe(&mut fds, "pwrite64", &[3, 0, 4096, 0], 4096));
        observe(&mut fds, "open", &[0, libc::O_RDWR as u64, 0], 5);
        observe(&mut fds, "dup2", &[4, 5], 5);
        assert!(!observe(&mut fds, "pwrite64", &[5, 0, 4096, 0], 4096));
        // Inherited descriptors and a message that may carry descriptors.
        observe(&mut fds, "open", &[0, libc::O_RDWR as u64, 0], 6);
        observe(&mut fds, "open", &[0, libc::O_RDWR as u64, 0], 7);
        fds.inherited([6]);
        assert!(!observe(&mut fds, "pwrite64", &[6, 0, 4096, 0], 4096));
        assert!(observe(&mut fds, "pwrite64", &[7, 0, 4096, 0], 4096));
        observe(&mut fds, "recvmsg", &[9, 0, 0], 10);
        assert!(!observe(&mut fds, "pwrite64", &[7, 0, 4096, 0], 4096));
    }
}
