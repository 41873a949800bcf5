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
//! - `strict`: calls are issued in global sequence order (entry order).
//!   A call waits until every record with a smaller sequence id has been
//!   read and every call among them issued. Blocking calls count as issued
//!   when they start, so strict order cannot deadlock on a pipe.
//!
//! Neither policy can deadlock on its own: a call only waits for calls
//! that, in the recording, finished (overlap) or began (strict) before it
//! began, and those never waited for it.

use std::collections::{BTreeSet, VecDeque};
use std::sync::{Condvar, Mutex};

use crate::state::lock;

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
    /// Global recorded order of entry.
    Strict,
}

/// One dispatched call, as the ordering sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket {
    /// Position in the dispatch ring (overlap).
    pub slot: u64,
    /// Sequence id (strict).
    pub seq: u64,
    /// Recorded entry time.
    pub enter_ns: u64,
}

struct State {
    /// Overlap: recorded exit times of dispatched calls, and whether each
    /// is done, from slot `base` on.
    ring: VecDeque<(u64, bool)>,
    base: u64,
    /// Strict: every sequence id below `watermark` has been passed; ids at
    /// or above it that passed early wait in `passed`.
    watermark: u64,
    passed: BTreeSet<u64>,
    /// Set when replay stops early: every waiter gives up.
    aborted: bool,
    /// Threads blocked in `wait_turn`: with none, finishing a call wakes
    /// nobody (a condvar notify is a system call even with no waiter).
    waiters: usize,
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
                aborted: false,
                waiters: 0,
            }),
            cv: Condvar::new(),
        }
    }

    /// Registers a call about to be handed to its thread.
    pub fn dispatch(&self, seq: u64, enter_ns: u64, exit_ns: u64) -> Ticket {
        let mut s = lock(&self.state);
        let slot = s.base + s.ring.len() as u64;
        if self.policy == OrderPolicy::Overlap {
            s.ring.push_back((exit_ns, false));
        }
        Ticket {
            slot,
            seq,
            enter_ns,
        }
    }

    /// Strict order: a record that no thread issues (process records,
    /// ignored calls, path states) passes as soon as it is read.
    pub fn pass(&self, seq: u64) {
        if self.policy == OrderPolicy::Strict {
            let mut s = lock(&self.state);
            if Self::pass_locked(&mut s, seq) && s.waiters > 0 {
                self.cv.notify_all();
            }
        }
    }

    /// Strict order at the end of the trace: sequence ids never seen are
    /// passed so nobody waits for them.
    pub fn pass_all(&self) {
        let mut s = lock(&self.state);
        s.watermark = u64::MAX;
        s.passed.clear();
        self.cv.notify_all();
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
        moved
    }

    /// Blocks until the call may be issued; false when replay is aborting.
    pub fn wait_turn(&self, t: &Ticket) -> bool {
        let mut s = lock(&self.state);
        let mut spins = 0;
        loop {
            if s.aborted {
                return false;
            }
            let ready = match self.policy {
                OrderPolicy::Overlap => s
                    .ring
                    .iter()
                    .take_while(|&&(_, done)| !done)
                    .map(|&(exit, _)| exit)
                    .next()
                    .is_none_or(|oldest_exit| oldest_exit >= t.enter_ns || s.base == t.slot),
                OrderPolicy::Strict => s.watermark >= t.seq,
            };
            if ready {
                if self.policy == OrderPolicy::Strict
                    && Self::pass_locked(&mut s, t.seq)
                    && s.waiters > 0
                {
                    self.cv.notify_all();
                }
                return true;
            }
            if spins < SPINS {
                // The turn usually comes within microseconds (the call
                // before ours, in another thread, is running): giving the
                // CPU away briefly is far cheaper than sleeping on the
                // condvar and being woken by a futex call.
                spins += 1;
                drop(s);
                std::thread::yield_now();
                s = lock(&self.state);
                continue;
            }
            s.waiters += 1;
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
            s.waiters -= 1;
        }
    }

    /// Marks a call finished.
    pub fn done(&self, t: &Ticket) {
        if self.policy != OrderPolicy::Overlap {
            return;
        }
        let mut s = lock(&self.state);
        let i = (t.slot - s.base) as usize;
        if let Some(e) = s.ring.get_mut(i) {
            e.1 = true;
        }
        let mut moved = false;
        while s.ring.front().is_some_and(|&(_, done)| done) {
            s.ring.pop_front();
            s.base += 1;
            moved = true;
        }
        if moved && s.waiters > 0 {
            self.cv.notify_all();
        }
    }

    /// Wakes every waiter and makes them give up.
    pub fn abort(&self) {
        lock(&self.state).aborted = true;
        self.cv.notify_all();
    }
}
