//! io_uring (`io_uring_setup`, `io_uring_enter`) replayed through a real
//! io_uring, so the device sees the same requests in flight together as in
//! the recording.
//!
//! Each traced ring becomes a real ring behind the same descriptor number.
//! An `io_uring_enter` submits the SQEs the recording captured (capture
//! layout in [`reanimator_catalogue::uring`]) with the recorded data
//! (writes) or fresh memory (reads), and for each CQE the recording saw at
//! its exit, waits until that same request completed in replay, then
//! compares its result and, for a read, its data. Requests are matched by
//! `user_data`; several in flight with the same one complete in the order
//! they were submitted.
//!
//! File I/O and syncs are issued (`READ`, `WRITE`, their vectored and
//! fixed-buffer forms, `FSYNC`, `SYNC_FILE_RANGE`, `FALLOCATE`, `FADVISE`,
//! `NOP`), on plain descriptors or on files registered with
//! `IORING_REGISTER_FILES` ([`Ring::register_files`]); other requests
//! (sockets, timeouts, opens and closes, requests on provided buffers or
//! on files registered by an update) are not, and their recorded results
//! stand. [`Registry`] counts them by opcode for the report, and
//! waits for every ring's requests before the final state is checked.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use io_uring::{opcode, squeue, types, IoUring};
use reanimator_catalogue::uring::{self as layout, Cqe, Sqe};
use reanimator_catalogue::{Kind, Ret, Syscall};
use reanimator_trace::{CaptureStatus, Role, SyscallEvent};

use crate::exec::{Buffers, Verify};
use crate::state::{lock, FdLookup};
use crate::verify::{self, Mismatch};

/// How long a recorded completion waits for its request to complete.
const WAIT: Duration = Duration::from_secs(10);
/// How long a recorded completion waits for its request to be submitted
/// by another replay thread while no call anywhere in the replay
/// finishes. Both recorders take a call's entry time before reading the
/// SQEs and its exit time after reading the CQEs, so the submitting call
/// began before this one ended and replay's order lets it run, however
/// much else runs first: InnoDB's reaping call waited 1.3 s for a write
/// submitted after 1,500 other calls, which replay ran in 1.8 s. While
/// replay moves on, the wait goes on; once it stands still this long, the
/// request was never captured (its submission's capture was unreadable),
/// and the completion is left unverified, not waited for.
const AHEAD: Duration = Duration::from_secs(1);
/// [`AHEAD`] once one such wait on the ring gave up.
const AHEAD_AGAIN: Duration = Duration::from_millis(100);
/// How often such a wait looks whether replay moved on.
const AHEAD_SLICE: Duration = Duration::from_millis(50);

/// The replay's rings and what they did not issue.
#[derive(Default)]
pub(crate) struct Registry {
    rings: Mutex<Vec<Weak<Ring>>>,
    not_issued: Arc<Mutex<BTreeMap<&'static str, u64>>>,
    unverified: Arc<AtomicU64>,
}

impl Registry {
    /// Requests not issued, by opcode name.
    pub(crate) fn not_issued(&self) -> BTreeMap<&'static str, u64> {
        lock(&self.not_issued).clone()
    }

    /// Recorded completions whose requests were submitted in replay only
    /// after them (see [`AHEAD`]): not verified.
    pub(crate) fn unverified(&self) -> u64 {
        self.unverified.load(Ordering::Relaxed)
    }

    /// Waits for the requests still in flight in every ring (those whose
    /// completions the recording never saw): the files are not final
    /// before they land.
    pub(crate) fn settle(&self) {
        let rings: Vec<Arc<Ring>> = lock(&self.rings).iter().filter_map(Weak::upgrade).collect();
        for ring in rings {
            lock(&ring.state).settle();
        }
    }
}

/// A real ring standing for a traced one.
pub(crate) struct Ring {
    state: Mutex<State>,
    not_issued: Arc<Mutex<BTreeMap<&'static str, u64>>>,
    unverified: Arc<AtomicU64>,
    /// Signalled when requests are submitted, for a completion waiting
    /// for a request of another thread.
    submitted: Condvar,
}

struct State {
    ring: IoUring,
    /// In flight in the real ring, by the token its SQE carries.
    in_flight: HashMap<u64, Request>,
    /// Traced `user_data` of requests in flight, with how many.
    pending: HashMap<u64, usize>,
    /// Completed (or not issued), not yet matched with a recorded CQE, by
    /// traced `user_data`, oldest first; `None`: not issued, the recorded
    /// result stands.
    done: HashMap<u64, VecDeque<(Request, Option<i32>)>>,
    next_token: u64,
    /// Traced `user_data` of completions recorded before replay submitted
    /// their requests, with how many: those requests' completions are
    /// dropped, not matched with later ones.
    unmatched: HashMap<u64, usize>,
    gave_up: bool,
    /// The registered files, by index: replay's descriptor for each
    /// (`None` for an empty slot or a simulated descriptor).
    files: Vec<Option<Arc<OwnedFd>>>,
}

/// One request and the memory the kernel uses until it completes.
struct Request {
    user_data: u64,
    mem: Buffers,
    _fd: Option<Arc<OwnedFd>>,
}

impl Drop for State {
    fn drop(&mut self) {
        // The kernel may still write into requests' memory: wait for them
        // before it is freed (fields drop after this).
        self.settle();
        // Whatever is left goes with the ring; its memory must outlive it.
        std::mem::forget(std::mem::take(&mut self.in_flight));
    }
}

/// `io_uring_setup` of `entries` standing for the traced ring: the ring,
/// or -errno.
pub(crate) fn setup(entries: u32, registry: &Registry) -> Result<Arc<Ring>, i64> {
    let ring = IoUring::new(entries.max(1))
        .map_err(|e| -i64::from(e.raw_os_error().unwrap_or(libc::EIO)))?;
    let ring = Arc::new(Ring {
        state: Mutex::new(State {
            ring,
            in_flight: HashMap::new(),
            pending: HashMap::new(),
            done: HashMap::new(),
            next_token: 0,
            unmatched: HashMap::new(),
            gave_up: false,
            files: Vec::new(),
        }),
        not_issued: registry.not_issued.clone(),
        unverified: registry.unverified.clone(),
        submitted: Condvar::new(),
    });
    let mut rings = lock(&registry.rings);
    rings.retain(|r| r.strong_count() > 0);
    rings.push(Arc::downgrade(&ring));
    Ok(ring)
}

impl Ring {
    /// Takes the files registered with the traced ring (replay's
    /// descriptor for each index; empty once unregistered): requests
    /// flagged `IOSQE_FIXED_FILE` go to them.
    pub(crate) fn register_files(&self, files: Vec<Option<Arc<OwnedFd>>>) {
        lock(&self.state).files = files;
    }

    /// Replays `io_uring_enter` event `ev` (catalogue row `row`) on this
    /// ring: submits the requests it took, then waits for the completions
    /// it saw. Returns the first mismatch. `progress` is the replay's
    /// count of finished calls (see [`AHEAD`]).
    pub(crate) fn enter(
        &self,
        ev: &SyscallEvent,
        row: &Syscall,
        real_fd: FdLookup<'_>,
        verify: Verify,
        progress: &AtomicU64,
    ) -> Option<Mismatch> {
        let arg_of = |kind: Kind| {
            row.params()
                .iter()
                .position(|p| p.kind == kind)
                .map(|i| i as u8)
        };
        let expected = ev.exit.map_or(0, |x| x.ret);
        let mut first = None;
        if let Some(arg) =
            arg_of(Kind::UringSubmit).filter(|&a| ev.args[usize::from(a)] > 0 && expected > 0)
        {
            first = self.submit(ev, arg, expected, real_fd);
        }
        if let Some(arg) = arg_of(Kind::UringComplete) {
            let reaped = self.reap(ev, arg, verify, progress);
            first = first.or(reaped);
        }
        first
    }

    /// Submits the SQEs captured at the entry of `ev`, as many as the
    /// recorded call took (`expected`).
    fn submit(
        &self,
        ev: &SyscallEvent,
        arg: u8,
        expected: i64,
        real_fd: FdLookup<'_>,
    ) -> Option<Mismatch> {
        let capture = |elem: u32| ev.capture_elem(arg, Role::Entry, elem);
        let Some(sqes) = capture(0)
            .filter(|c| c.status == CaptureStatus::Complete)
            .and_then(|c| c.data.as_deref())
        else {
            return Some("the requests were not captured".into());
        };
        let sqes: Vec<Sqe> = Sqe::all(sqes).take(expected as usize).collect();
        let mut st = lock(&self.state);
        let mut entries = Vec::new();
        for (i, sqe) in sqes.iter().enumerate() {
            let parts: Vec<(Option<&[u8]>, usize)> = (1..)
                .map_while(|j| capture(layout::elem(i as u64, j)))
                .map(|c| (c.data.as_deref(), c.len as usize))
                .collect();
            let fixed = sqe.flags & layout::SQE_FIXED_FILE != 0;
            let fd = match fixed {
                true => st.files.get(sqe.fd as usize).cloned().flatten(),
                false => real_fd(sqe.fd),
            };
            // An index no registration replay saw (one made by an update).
            let unknown = fixed && sqe.fd as usize >= st.files.len();
            let mut req = Request {
                user_data: sqe.user_data,
                mem: Buffers::new(&[], false),
                _fd: fd.clone(),
            };
            match build(sqe, fd.as_deref().map(AsRawFd::as_raw_fd), &parts, &mut req) {
                Some(entry) => {
                    let token = st.next_token;
                    st.next_token += 1;
                    entries.push(entry.user_data(token));
                    *st.pending.entry(sqe.user_data).or_default() += 1;
                    st.in_flight.insert(token, req);
                }
                None => {
                    // A request on a simulated or closed descriptor is
                    // simulated, as a call on it would be.
                    if !replayable(sqe) || unknown {
                        *lock(&self.not_issued).entry(sqe.op_name()).or_default() += 1;
                    }
                    st.done
                        .entry(sqe.user_data)
                        .or_default()
                        .push_back((req, None));
                }
            }
        }
        let issued = entries.len();
        let mut taken = 0;
        let mut failed = None;
        for entry in entries {
            // SAFETY: the memory each entry names lives in `in_flight` until
            // its completion is reaped, or until the ring is gone.
            while unsafe { st.ring.submission().push(&entry) }.is_err() {
                match st.ring.submit() {
                    Ok(n) => taken += n,
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            if failed.is_some() {
                break;
            }
        }
        if failed.is_none() {
            match st.ring.submit() {
                Ok(n) => taken += n,
                Err(e) => failed = Some(e),
            }
        }
        drop(st);
        self.submitted.notify_all();
        let got = match failed {
            Some(e) if taken == 0 => -i64::from(e.raw_os_error().unwrap_or(libc::EIO)),
            _ => (taken + sqes.len() - issued) as i64,
        };
        verify::ret(Ret::Int, expected, got)
    }

    /// Waits, for each CQE captured at the exit of `ev`, until the same
    /// request completed in replay, and compares its result and read data
    /// as far as `verify` asks.
    fn reap(
        &self,
        ev: &SyscallEvent,
        arg: u8,
        verify: Verify,
        progress: &AtomicU64,
    ) -> Option<Mismatch> {
        let capture = |elem: u32| ev.capture_elem(arg, Role::Exit, elem);
        let cqes = capture(0)?;
        let Some(data) = cqes
            .data
            .as_deref()
            .filter(|_| cqes.status != CaptureStatus::Unreadable)
        else {
            return Some("the completions were not captured".into());
        };
        let mut first = None;
        for (k, want) in Cqe::all(data).enumerate() {
            let data = |j: u64| capture(layout::elem(k as u64, 1 + j));
            let results = |res: Option<i32>| (i64::from(want.res), res.map(i64::from));
            let check = |req: &Request, res: Option<i32>| {
                let bufs = req.mem.bufs.iter().map(|b| &b[..]);
                verify::completion(verify, results(res), bufs, data)
            };
            let verdict = match self.wait_for(want.user_data, want.res, &check, progress) {
                Ok(Some(done)) => done,
                Ok(None) => {
                    self.unverified.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                Err(m) => {
                    first.get_or_insert(m);
                    continue;
                }
            };
            if let (None, Some(m)) = (&first, verdict) {
                first = Some(format!("request {:#x}: {m}", want.user_data));
            }
        }
        first
    }

    /// How a request with traced `user_data` compared (`check`) with its
    /// recorded completion, once it completed: the oldest whose result is
    /// `res` and that checks clean, or, once none in flight is left to
    /// check and no other was submitted before replay stood still for
    /// [`AHEAD`], the oldest whose result is `res`, or when none comes,
    /// the oldest there is; `None` when none was submitted by then.
    /// Programs may have
    /// several requests with one `user_data` in flight, which complete in
    /// any order, and a program that reuses one (MariaDB's InnoDB: the
    /// address of its I/O slot) may have one completion recorded by a
    /// submitting thread's call and the next by its reaping thread's,
    /// which replay may run the other way round.
    fn wait_for(
        &self,
        user_data: u64,
        res: i32,
        check: &dyn Fn(&Request, Option<i32>) -> Option<Mismatch>,
        progress: &AtomicU64,
    ) -> Result<Option<Option<Mismatch>>, Mismatch> {
        let start = Instant::now();
        // When the replay last finished a call, as far as this wait saw.
        let (mut seen, mut still_since) = (progress.load(Ordering::Relaxed), start);
        let mut st = lock(&self.state);
        // Set once no other request with this `user_data` came within the
        // wait for submissions: one that does not check clean will do.
        let mut waited_out = false;
        let by_res = |d: &(Request, Option<i32>)| d.1.is_none_or(|r| r == res);
        loop {
            let in_flight = st.pending.get(&user_data).is_some_and(|&n| n > 0);
            if let Some(done) = st.done.get_mut(&user_data) {
                let fitting = done
                    .iter()
                    .position(|d| by_res(d) && check(&d.0, d.1).is_none());
                let pick = fitting.or_else(|| {
                    if in_flight || !waited_out {
                        None
                    } else {
                        done.iter().position(by_res)
                    }
                });
                if let Some(i) = pick {
                    let (req, got) = done.remove(i).expect("a position in the queue");
                    if done.is_empty() {
                        st.done.remove(&user_data);
                    }
                    let clean = fitting == Some(i);
                    return Ok(Some(if clean { None } else { check(&req, got) }));
                }
            }
            if in_flight {
                // In flight: it completes by itself, so waiting under the
                // lock holds up no one it needs.
                let left = WAIT.saturating_sub(start.elapsed());
                if left.is_zero() {
                    return Err(format!(
                        "request {user_data:#x} did not complete in replay within {:.1} s",
                        WAIT.as_secs_f64()
                    ));
                }
                if let Err(e) = st.reap_some(left) {
                    return Err(format!("waiting for request {user_data:#x}: {e}"));
                }
                continue;
            }
            // Another thread may have yet to submit it (or the one that
            // checks clean: the requests done may be another call's).
            let limit = if st.gave_up { AHEAD_AGAIN } else { AHEAD };
            let now = progress.load(Ordering::Relaxed);
            if now != seen {
                (seen, still_since) = (now, Instant::now());
            }
            let left = limit.saturating_sub(still_since.elapsed());
            if left.is_zero() {
                st.gave_up = true;
                if !waited_out
                    && st
                        .done
                        .get(&user_data)
                        .is_some_and(|d| d.iter().any(by_res))
                {
                    waited_out = true;
                    continue;
                }
                if let Some(done) = st.done.get_mut(&user_data) {
                    let other = done.pop_front();
                    if done.is_empty() {
                        st.done.remove(&user_data);
                    }
                    return Ok(other.map(|(req, got)| check(&req, got)));
                }
                *st.unmatched.entry(user_data).or_default() += 1;
                return Ok(None);
            }
            st = self
                .submitted
                .wait_timeout(st, left.min(AHEAD_SLICE))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

impl State {
    /// Waits, at most [`WAIT`], until no request is in flight.
    fn settle(&mut self) {
        let start = Instant::now();
        while !self.in_flight.is_empty() && start.elapsed() < WAIT {
            if self.reap_some(Duration::from_millis(100)).is_err() {
                break;
            }
        }
    }

    /// Waits at most `timeout` for a completion, then moves every one
    /// there is to `done`.
    fn reap_some(&mut self, timeout: Duration) -> std::io::Result<()> {
        if self.ring.completion().is_empty() {
            let ts = types::Timespec::from(timeout);
            let args = types::SubmitArgs::new().timespec(&ts);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME) | Some(libc::EINTR)) => {}
                Err(e) => return Err(e),
            }
        }
        let cqes: Vec<(u64, i32)> = self
            .ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        for (token, res) in cqes {
            let Some(req) = self.in_flight.remove(&token) else {
                continue;
            };
            if let Some(n) = self.pending.get_mut(&req.user_data) {
                *n = n.saturating_sub(1);
            }
            if let Some(n) = self.unmatched.get_mut(&req.user_data).filter(|n| **n > 0) {
                // Its recorded completion has been passed over already.
                *n -= 1;
                continue;
            }
            self.done
                .entry(req.user_data)
                .or_default()
                .push_back((req, Some(res)));
        }
        Ok(())
    }
}

/// Whether replay issues `sqe` when its descriptor is real.
fn replayable(sqe: &Sqe) -> bool {
    sqe.flags & layout::SQE_BUFFER_SELECT == 0
        && matches!(
            sqe.opcode,
            layout::OP_NOP
                | layout::OP_READ
                | layout::OP_WRITE
                | layout::OP_READ_FIXED
                | layout::OP_WRITE_FIXED
                | layout::OP_READV
                | layout::OP_WRITEV
                | layout::OP_FSYNC
                | layout::OP_SYNC_FILE_RANGE
                | layout::OP_FALLOCATE
                | layout::OP_FADVISE
        )
}

/// The real SQE for traced `sqe` on real descriptor `fd`, its memory
/// kept in `req`; `None` when replay does not issue it.
fn build(
    sqe: &Sqe,
    fd: Option<i32>,
    parts: &[(Option<&[u8]>, usize)],
    req: &mut Request,
) -> Option<squeue::Entry> {
    if !replayable(sqe) {
        return None;
    }
    if sqe.opcode == layout::OP_NOP {
        return Some(opcode::Nop::new().build());
    }
    let fd = types::Fd(fd?);
    let (off, len) = (sqe.off, sqe.len);
    let writes = sqe.writes();
    let entry = match sqe.opcode {
        layout::OP_READ | layout::OP_WRITE | layout::OP_READ_FIXED | layout::OP_WRITE_FIXED => {
            req.mem = Buffers::new(&[(parts.first().and_then(|p| p.0), len as usize)], writes);
            let buf = req.mem.first();
            if writes {
                opcode::Write::new(fd, buf, len)
                    .offset(off)
                    .ioprio(sqe.ioprio)
                    .rw_flags(sqe.op_flags as i32)
                    .build()
            } else {
                opcode::Read::new(fd, buf, len)
                    .offset(off)
                    .ioprio(sqe.ioprio)
                    .rw_flags(sqe.op_flags as i32)
                    .build()
            }
        }
        layout::OP_READV | layout::OP_WRITEV => {
            req.mem = Buffers::new(parts, writes);
            let (iov, n) = req.mem.iovecs();
            let n = n as u32;
            if writes {
                opcode::Writev::new(fd, iov, n)
                    .offset(off)
                    .ioprio(sqe.ioprio)
                    .rw_flags(sqe.op_flags as i32)
                    .build()
            } else {
                opcode::Readv::new(fd, iov, n)
                    .offset(off)
                    .ioprio(sqe.ioprio)
                    .rw_flags(sqe.op_flags as i32)
                    .build()
            }
        }
        layout::OP_FSYNC => opcode::Fsync::new(fd)
            .flags(types::FsyncFlags::from_bits_truncate(sqe.op_flags))
            .build(),
        layout::OP_SYNC_FILE_RANGE => opcode::SyncFileRange::new(fd, len)
            .offset(off)
            .flags(sqe.op_flags)
            .build(),
        layout::OP_FALLOCATE => opcode::Fallocate::new(fd, sqe.addr)
            .offset(off)
            .mode(len as i32)
            .build(),
        layout::OP_FADVISE => opcode::Fadvise::new(fd, i64::from(len), sqe.op_flags as i32)
            .offset(off)
            .build(),
        _ => return None,
    };
    // Ordering flags as recorded; fixed files and selected buffers never
    // reach here.
    let keep = squeue::Flags::IO_DRAIN
        | squeue::Flags::IO_LINK
        | squeue::Flags::IO_HARDLINK
        | squeue::Flags::ASYNC;
    Some(entry.flags(squeue::Flags::from_bits_truncate(sqe.flags) & keep))
}
