//! Linux AIO (`io_setup`, `io_submit`, `io_getevents`, `io_destroy`)
//! replayed with the kernel's own AIO, so the device sees the same
//! requests in flight together as in the recording.
//!
//! Replay creates a real context for each traced one, submits each
//! recorded request with the recorded data (writes) or fresh memory
//! (reads), and for each recorded completion waits until that same
//! request has completed in replay, then compares its result and, for a
//! read, its data. Completions the kernel hands back in another order, or
//! in other batches, wait in the context until the recording reaps them.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use reanimator_catalogue::aio::{self, Iocb};
use reanimator_trace::{Role, SyscallEvent};

use crate::exec::{Buffers, Verify};
use crate::state::{lock, FdLookup};
use crate::verify::{self, Mismatch};

/// How long a recorded completion waits for its request to be submitted
/// by another replay thread, or to complete.
const WAIT: Duration = Duration::from_secs(10);
/// [`WAIT`] for a request never submitted, once one such wait in the
/// context gave up: replay and trace disagree, and thousands of 10 s
/// waits would be a hang.
const WAIT_AGAIN: Duration = Duration::from_millis(500);

/// A process's AIO contexts by traced id (an address space's: shared by
/// threads and `CLONE_VM` children, none after `fork` or `execve`).
pub(crate) type Contexts = Arc<Mutex<HashMap<u64, Arc<Context>>>>;

/// One real AIO context standing for a traced one.
pub(crate) struct Context {
    /// The kernel's id of the replay's context.
    id: u64,
    requests: Mutex<Requests>,
    /// Signalled when requests are submitted, for a completion waiting
    /// for a request of another thread.
    submitted: Condvar,
}

/// Requests by the traced address of their `iocb` (the `obj` of their
/// recorded completion), which the replay's `iocb` carries as its
/// `aio_data`.
#[derive(Default)]
struct Requests {
    in_flight: HashMap<u64, Request>,
    /// A completion gave up waiting for its request's submission.
    gave_up: bool,
    /// Completed in replay, not yet reaped by a recorded completion:
    /// the request and its result (`None`: not issued, the recorded result
    /// stands).
    done: HashMap<u64, (Request, Option<i64>)>,
}

/// One submitted request and the memory the kernel uses until it
/// completes.
struct Request {
    _iocb: Box<[u64; 8]>,
    mem: Buffers,
    _fd: Option<Arc<OwnedFd>>,
}

impl Drop for Context {
    fn drop(&mut self) {
        // io_destroy waits for the requests still in flight, whose memory
        // is freed only after it (fields drop after this).
        // SAFETY: a context this replayer created.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.id) };
    }
}

/// `io_setup` of `nr_events` standing for the traced context `traced`:
/// 0 or -errno.
pub(crate) fn setup(contexts: &Contexts, traced: u64, nr_events: u64) -> i64 {
    let mut id: u64 = 0;
    // SAFETY: `id` outlives the call.
    let r = unsafe { libc::syscall(libc::SYS_io_setup, nr_events, &mut id as *mut u64) };
    if r < 0 {
        return -i64::from(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
    }
    let ctx = Context {
        id,
        requests: Mutex::default(),
        submitted: Condvar::new(),
    };
    lock(contexts).insert(traced, Arc::new(ctx));
    0
}

/// `io_destroy` of traced context `traced`: 0, or `EINVAL` if replay has
/// no such context. The real one is destroyed when no thread uses it.
pub(crate) fn destroy(contexts: &Contexts, traced: u64) -> i64 {
    match lock(contexts).remove(&traced) {
        Some(_) => 0,
        None => -i64::from(libc::EINVAL),
    }
}

/// Submits the requests `io_submit` event `ev` submitted in the
/// recording (its argument `arg` is the [`Kind::IoCbs`] array). Returns
/// the mismatch, if any.
///
/// [`Kind::IoCbs`]: reanimator_catalogue::Kind::IoCbs
pub(crate) fn submit(
    contexts: &Contexts,
    ev: &SyscallEvent,
    arg: u8,
    real_fd: FdLookup<'_>,
) -> Option<Mismatch> {
    let expected = ev.exit.map_or(0, |x| x.ret);
    let Some(ctx) = lock(contexts).get(&ev.args[0]).cloned() else {
        return Some("no AIO context of that id was set up in replay".into());
    };
    let capture = |elem: u32| ev.capture_elem(arg, Role::Entry, elem);
    let Some(ptrs) = capture(0).and_then(|c| c.data.as_deref()) else {
        return Some("the requests were not captured".into());
    };
    let ptrs: Vec<u64> = aio::pointers(ptrs).take(expected.max(0) as usize).collect();
    let mut reqs = lock(&ctx.requests);
    let mut issued = Vec::new();
    let mut real: Vec<*mut [u64; 8]> = Vec::new();
    for (i, &obj) in ptrs.iter().enumerate() {
        let i = i as u64;
        let Some(cb) = capture(aio::elem(i, 0))
            .and_then(|c| c.data.as_deref())
            .and_then(Iocb::parse)
        else {
            return Some(format!("request {i} was not captured"));
        };
        let fd = real_fd(cb.fd);
        let issue = fd.is_some() && !matches!(cb.opcode, aio::POLL | aio::NOOP);
        let parts: Vec<(Option<&[u8]>, usize)> = (1..)
            .map_while(|j| capture(aio::elem(i, j)))
            .map(|c| (c.data.as_deref(), c.len as usize))
            .collect();
        let mut req = Request {
            _iocb: Box::new([0; 8]),
            mem: Buffers::new(&[], false),
            _fd: fd,
        };
        if !issue {
            reqs.done.insert(obj, (req, None));
            continue;
        }
        let (buf, nbytes) = if cb.vectored() {
            req.mem = Buffers::new(&parts, cb.writes());
            let (iov, n) = req.mem.iovecs();
            (iov as u64, n as u64)
        } else if cb.writes() || cb.reads() {
            let data = parts.first().and_then(|p| p.0);
            req.mem = Buffers::new(&[(data, cb.nbytes as usize)], cb.writes());
            (req.mem.first() as u64, cb.nbytes)
        } else {
            (0, 0)
        };
        let w = &mut *req._iocb;
        w[0] = obj; // aio_data: finds the request when it completes
        w[1] = (cb.rw_flags as u32 as u64) << 32; // aio_key 0, aio_rw_flags
        let real_fd = req._fd.as_ref().map_or(-1, |f| f.as_raw_fd());
        w[2] = u64::from(cb.opcode) | (real_fd as u32 as u64) << 32; // reqprio 0
        w[3] = buf;
        w[4] = nbytes;
        w[5] = cb.offset as u64;
        // The traced eventfd is simulated: completion signals nothing.
        w[7] = u64::from(cb.flags & !aio::FLAG_RESFD);
        real.push(&mut *req._iocb as *mut [u64; 8]);
        issued.push(obj);
        reqs.in_flight.insert(obj, req);
    }
    let got = if real.is_empty() {
        0
    } else {
        // SAFETY: every iocb and the memory it names live in `reqs` until
        // the request completes or the context is destroyed.
        let r = unsafe { libc::syscall(libc::SYS_io_submit, ctx.id, real.len(), real.as_ptr()) };
        if r < 0 {
            -i64::from(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
        } else {
            r
        }
    };
    // Requests the kernel did not take will not complete: their
    // completions get the error (or, for those after the first, the
    // recorded result did not come either) at once, not after a wait.
    let refused = if got < 0 {
        got
    } else {
        -i64::from(libc::EAGAIN)
    };
    for obj in issued.iter().skip(got.max(0) as usize) {
        if let Some(req) = reqs.in_flight.remove(obj) {
            reqs.done.insert(*obj, (req, Some(refused)));
        }
    }
    drop(reqs);
    ctx.submitted.notify_all();
    let not_issued = ptrs.len() - issued.len();
    let got = if got >= 0 {
        got + not_issued as i64
    } else {
        got
    };
    verify::ret(reanimator_catalogue::Ret::Int, expected, got)
}

/// Waits, for each completion `io_getevents` event `ev` reaped in the
/// recording (its argument `arg` is the [`Kind::IoEvents`] array), until
/// the same request completed in replay, and compares its result and
/// read data as far as `verify` asks.
///
/// [`Kind::IoEvents`]: reanimator_catalogue::Kind::IoEvents
pub(crate) fn reap(
    contexts: &Contexts,
    ev: &SyscallEvent,
    arg: u8,
    verify: Verify,
) -> Option<Mismatch> {
    let Some(ctx) = lock(contexts).get(&ev.args[0]).cloned() else {
        return Some("no AIO context of that id was set up in replay".into());
    };
    let capture = |elem: u32| ev.capture_elem(arg, Role::Exit, elem);
    let Some(events) = capture(0).and_then(|c| c.data.as_deref()) else {
        return Some("the completions were not captured".into());
    };
    let mut first = None;
    for (i, want) in aio::events(events).enumerate() {
        let (req, res) = match ctx.wait_for(want.obj) {
            Ok(done) => done,
            Err(m) => {
                first.get_or_insert(m);
                continue;
            }
        };
        if first.is_some() {
            continue;
        }
        let data = |j: u64| capture(aio::elem(i as u64, 1 + j));
        let bufs = req.mem.bufs.iter().map(|b| &b[..]);
        if let Some(m) = verify::completion(verify, (want.res, res), bufs, data) {
            first = Some(format!("request {:#x}: {m}", want.obj));
        }
    }
    first
}

impl Context {
    /// The request whose traced `iocb` is at `obj`, once it completed.
    fn wait_for(&self, obj: u64) -> Result<(Request, Option<i64>), Mismatch> {
        let start = Instant::now();
        let mut reqs = lock(&self.requests);
        loop {
            if let Some(done) = reqs.done.remove(&obj) {
                return Ok(done);
            }
            let submitted = reqs.in_flight.contains_key(&obj);
            let limit = if submitted || !reqs.gave_up {
                WAIT
            } else {
                WAIT_AGAIN
            };
            let left = limit.saturating_sub(start.elapsed());
            if left.is_zero() {
                reqs.gave_up |= !submitted;
                let what = if submitted {
                    "did not complete"
                } else {
                    "was not submitted"
                };
                return Err(format!(
                    "request {obj:#x} {what} in replay within {:.1} s",
                    limit.as_secs_f64()
                ));
            }
            if !submitted {
                // Another thread has yet to submit it.
                reqs = self
                    .submitted
                    .wait_timeout(reqs, left)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
                continue;
            }
            // In flight: it completes by itself, so waiting under the lock
            // holds up no one it needs.
            let mut events = [[0u8; aio::EVENT_LEN]; 64];
            let timeout = libc::timespec {
                tv_sec: left.as_secs() as libc::time_t,
                tv_nsec: libc::c_long::from(left.subsec_nanos() as i32),
            };
            // SAFETY: `events` holds 64 events; `timeout` outlives the call.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.id,
                    1,
                    events.len(),
                    events.as_mut_ptr(),
                    &timeout as *const libc::timespec,
                )
            };
            for e in events.iter().take(n.max(0) as usize) {
                let done = aio::events(e).next().expect("one event");
                if let Some(req) = reqs.in_flight.remove(&done.data) {
                    reqs.done.insert(done.data, (req, Some(done.res)));
                }
            }
        }
    }
}
