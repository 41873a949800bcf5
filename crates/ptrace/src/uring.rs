//! io_uring rings of the traced processes, followed from their creation
//! and mappings so that `io_uring_enter` can read the requests and
//! completions they hold (capture layout in [`reanimator_catalogue::uring`]).

use std::collections::HashMap;

use reanimator_catalogue::uring::{self, Cqe, Params, Sqe};
use reanimator_catalogue::{Effect, Kind, Syscall};
use reanimator_record::{read_mem, CaptureCounts, Captures, DataPolicy};
use reanimator_trace::{CaptureHead, CaptureStatus, Role};

use crate::capture::{iovec_array, take_parts, unreadable, CallView};

/// Rings per thread group, by descriptor.
#[derive(Default)]
pub(crate) struct Rings {
    by_tgid: HashMap<u32, HashMap<i32, Ring>>,
}

/// What the recorder knows of one ring.
#[derive(Clone)]
pub(crate) struct Ring {
    params: Params,
    /// Where the program mapped the SQ ring, the CQ ring and the SQEs.
    sq_ring: Option<u64>,
    cq_ring: Option<u64>,
    sqes: Option<u64>,
    /// The CQ tail up to which completions were captured.
    cq_seen: u32,
    /// Reads in flight by `user_data`: where their data will land.
    reads: HashMap<u64, Vec<(u64, u64)>>,
}

impl Rings {
    /// Follows a call that succeeded with `ret`: `io_uring_setup` adds a
    /// ring (its layout from the exit capture in `caps`), `mmap` of a
    /// ring's descriptor locates a part of it, `close` forgets it.
    pub fn after_call(
        &mut self,
        tgid: u32,
        row: &Syscall,
        args: &[u64; 6],
        ret: i64,
        caps: &Captures,
    ) {
        match row.effect {
            Effect::UringSetup => {
                let params = caps.heads.iter().find_map(|(h, r)| {
                    (h.arg == 1 && h.role == Role::Exit)
                        .then(|| Params::parse(&caps.bytes[r.clone()]))?
                });
                if let Some(params) = params {
                    let ring = Ring {
                        params,
                        sq_ring: None,
                        cq_ring: None,
                        sqes: None,
                        cq_seen: 0,
                        reads: HashMap::new(),
                    };
                    self.by_tgid
                        .entry(tgid)
                        .or_default()
                        .insert(ret as i32, ring);
                }
            }
            Effect::Map => {
                let Some(ring) = self.get(tgid, args[4] as i32) else {
                    return;
                };
                let addr = Some(ret as u64);
                match args[5] {
                    uring::OFF_SQ_RING => {
                        ring.sq_ring = addr;
                        if ring.params.features & uring::FEAT_SINGLE_MMAP != 0 {
                            ring.cq_ring = ring.cq_ring.or(addr);
                        }
                    }
                    uring::OFF_CQ_RING => ring.cq_ring = addr,
                    uring::OFF_SQES => ring.sqes = addr,
                    _ => {}
                }
            }
            Effect::Close => {
                if let Some(rings) = self.by_tgid.get_mut(&tgid) {
                    rings.remove(&(args[0] as i32));
                }
            }
            _ => {}
        }
    }

    fn get(&mut self, tgid: u32, fd: i32) -> Option<&mut Ring> {
        self.by_tgid.get_mut(&tgid)?.get_mut(&fd)
    }

    /// A child made by `fork` has its parent's descriptors and mappings.
    pub fn inherit(&mut self, parent: u32, child: u32) {
        if let Some(rings) = self.by_tgid.get(&parent).filter(|r| !r.is_empty()) {
            let rings = rings.clone();
            self.by_tgid.insert(child, rings);
        }
    }

    /// The process's address space is gone (exec or exit).
    pub fn forget(&mut self, tgid: u32) {
        self.by_tgid.remove(&tgid);
    }
}

/// Whether `row` reads io_uring rings ([`capture`] then has work).
pub(crate) fn reads_rings(row: &Syscall) -> bool {
    row.params()
        .iter()
        .any(|p| matches!(p.kind, Kind::UringSubmit | Kind::UringComplete))
}

/// Reads the requests (at entry) or completions (at exit) of the ring
/// whose descriptor is the call's first argument.
pub(crate) fn capture(
    rings: &mut Rings,
    tgid: u32,
    row: &Syscall,
    view: &CallView<'_>,
    policy: DataPolicy,
    out: &mut Captures,
    counts: &mut CaptureCounts,
) {
    let mut ring = (view.args[3] & uring::ENTER_REGISTERED_RING == 0)
        .then(|| rings.get(tgid, view.args[0] as i32))
        .flatten();
    for (i, p) in row.params().iter().enumerate() {
        let arg = i as u8;
        let ring = ring.as_deref_mut();
        match p.kind {
            Kind::UringSubmit if view.role == Role::Entry && view.args[i] > 0 => {
                let n = view.args[i].min(uring::MAX);
                match ring {
                    Some(ring) if ring.params.flags & uring::SETUP_SQPOLL == 0 => {
                        take_requests(ring, view, arg, n, policy, out, counts)
                    }
                    _ => unseen(view, arg, out, counts),
                }
            }
            Kind::UringComplete if view.role == Role::Exit => match ring {
                Some(ring) => take_completions(ring, view, arg, policy, out, counts),
                None => unseen(view, arg, out, counts),
            },
            _ => {}
        }
    }
}

/// A ring the recorder cannot read (polled by the kernel, registered, or
/// set up before the recording): an empty unreadable capture says so.
fn unseen(view: &CallView<'_>, arg: u8, out: &mut Captures, counts: &mut CaptureCounts) {
    unreadable(view, (arg, 0), 0, out, counts);
}

/// A `u32` of the program's memory.
fn read_u32(pid: i32, addr: u64) -> Option<u32> {
    let mut b = [0u8; 4];
    (read_mem(pid, addr, &mut b) == 4).then(|| u32::from_le_bytes(b))
}

/// The SQEs the kernel is about to consume, and the data of each write.
fn take_requests(
    ring: &mut Ring,
    view: &CallView<'_>,
    arg: u8,
    n: u64,
    policy: DataPolicy,
    out: &mut Captures,
    counts: &mut CaptureCounts,
) {
    let (Some(sq), Some(sqes)) = (ring.sq_ring, ring.sqes) else {
        return unseen(view, arg, out, counts);
    };
    let p = ring.params;
    let pid = view.pid;
    let (Some(head), Some(tail)) = (
        read_u32(pid, sq + u64::from(p.sq_head)),
        read_u32(pid, sq + u64::from(p.sq_tail)),
    ) else {
        return unseen(view, arg, out, counts);
    };
    let count = u64::from(tail.wrapping_sub(head))
        .min(n)
        .min(u64::from(p.sq_entries));
    let start = out.bytes.len();
    let mut status = CaptureStatus::Complete;
    for k in 0..count as u32 {
        let index = head.wrapping_add(k) & p.sq_mask();
        let slot = if p.flags & uring::SETUP_NO_SQARRAY != 0 {
            Some(index)
        } else {
            read_u32(pid, sq + u64::from(p.sq_array) + 4 * u64::from(index))
                .map(|s| s & p.sq_mask())
        };
        let mut sqe = [0u8; uring::SQE_LEN];
        let read = slot.is_some_and(|s| {
            read_mem(pid, sqes + u64::from(s) * p.sqe_size(), &mut sqe) == sqe.len()
        });
        if !read {
            status = CaptureStatus::Unreadable;
            counts.unreadable += 1;
            break;
        }
        out.bytes.extend_from_slice(&sqe);
    }
    let head = CaptureHead {
        arg,
        role: Role::Entry,
        elem: 0,
        status,
        len: count * uring::SQE_LEN as u64,
    };
    out.heads.push((head, start..out.bytes.len()));
    let taken: Vec<Sqe> = Sqe::all(&out.bytes[start..]).collect();
    for (i, sqe) in taken.iter().enumerate() {
        if sqe.flags & uring::SQE_BUFFER_SELECT != 0 || !(sqe.reads() || sqe.writes()) {
            continue;
        }
        let parts = if sqe.vectored() {
            iovec_array(pid, sqe.addr, u64::from(sqe.len).min(uring::IOV_MAX))
        } else {
            vec![(sqe.addr, u64::from(sqe.len))]
        };
        if sqe.reads() {
            ring.reads.insert(sqe.user_data, parts.clone());
            if !sqe.vectored() {
                continue;
            }
        }
        // A write's bytes; a vectored read's element lengths, no bytes.
        let moved = if sqe.writes() { u64::MAX } else { 0 };
        take_parts(view, (arg, i as u64), &parts, moved, policy, out, counts);
    }
}

/// The CQEs posted since the last look, and the data of each read the
/// program has not consumed yet.
fn take_completions(
    ring: &mut Ring,
    view: &CallView<'_>,
    arg: u8,
    policy: DataPolicy,
    out: &mut Captures,
    counts: &mut CaptureCounts,
) {
    let Some(cq) = ring.cq_ring else {
        return unseen(view, arg, out, counts);
    };
    let p = ring.params;
    let pid = view.pid;
    let (Some(head), Some(tail)) = (
        read_u32(pid, cq + u64::from(p.cq_head)),
        read_u32(pid, cq + u64::from(p.cq_tail)),
    ) else {
        return unseen(view, arg, out, counts);
    };
    let posted = tail.wrapping_sub(ring.cq_seen);
    if posted == 0 {
        return;
    }
    // Older ones than a ring's worth have been written over.
    let kept = posted.min(p.cq_entries).min(uring::MAX as u32);
    let first = tail.wrapping_sub(kept);
    let start = out.bytes.len();
    let mut status = if kept < posted {
        counts.truncated += 1;
        CaptureStatus::Truncated
    } else {
        CaptureStatus::Complete
    };
    for k in 0..kept {
        let slot = first.wrapping_add(k) & p.cq_mask();
        let mut cqe = [0u8; uring::CQE_LEN];
        if read_mem(
            pid,
            cq + u64::from(p.cqes) + u64::from(slot) * p.cqe_size(),
            &mut cqe,
        ) < cqe.len()
        {
            status = CaptureStatus::Unreadable;
            counts.unreadable += 1;
            break;
        }
        out.bytes.extend_from_slice(&cqe);
    }
    ring.cq_seen = tail;
    let capture = CaptureHead {
        arg,
        role: Role::Exit,
        elem: 0,
        status,
        len: u64::from(posted) * uring::CQE_LEN as u64,
    };
    out.heads.push((capture, start..out.bytes.len()));
    let done: Vec<Cqe> = Cqe::all(&out.bytes[start..]).collect();
    for (k, cqe) in done.iter().enumerate() {
        let Some(parts) = ring.reads.remove(&cqe.user_data) else {
            continue;
        };
        // The program may already have reused a consumed read's buffer.
        let unconsumed = (first.wrapping_add(k as u32).wrapping_sub(head) as i32) >= 0;
        if cqe.res > 0 && unconsumed {
            take_parts(
                view,
                (arg, k as u64),
                &parts,
                cqe.res as u64,
                policy,
                out,
                counts,
            );
        }
    }
}
