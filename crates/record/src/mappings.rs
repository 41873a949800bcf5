//! Shared writable file mappings of each traced process.
//!
//! A store through a `MAP_SHARED` file mapping changes the file with no
//! system call. The recorder remembers where such mappings are so that a
//! `munmap` or `msync` over one (a [`Kind::Mapped`] argument) captures the
//! bytes that reach the file, and replay can write them back; and both
//! back ends count, the same way, the mappings whose last stores no
//! capture holds (their process was killed).
//!
//! [`Kind::Mapped`]: reanimator_catalogue::Kind::Mapped

use std::collections::{HashMap, HashSet};

use reanimator_catalogue::{self as catalogue, Effect, Kind};
use reanimator_trace::{CaptureHead, CaptureStatus, Role, SyscallExit, SyscallHead};

use crate::capture::take_mapped;
use crate::{now_ns, CaptureCounts, Captures, DataPolicy, Error, CAPTURE_MAX};

/// Address ranges `[start, end)` per thread group.
#[derive(Default)]
pub struct SharedMappings {
    by_tgid: HashMap<u32, Vec<(u64, u64)>>,
    /// Processes whose mappings were captured at the entry of a call that
    /// ends their address space (`mapped_at_exit`).
    captured: HashSet<u32>,
    /// io_uring descriptors per thread group: what maps them is a ring,
    /// memory shared with the kernel, not a file's (the eBPF back end,
    /// which looks at the mapping itself, sees no file there either).
    rings: HashMap<u32, HashSet<i32>>,
}

impl SharedMappings {
    /// The ranges of process `tgid`.
    pub fn of(&self, tgid: u32) -> &[(u64, u64)] {
        self.by_tgid.get(&tgid).map_or(&[], Vec::as_slice)
    }

    /// Follows a call that succeeded with `ret`: mmap adds a range, munmap
    /// removes one, mremap moves one; io_uring_setup makes a descriptor
    /// whose mappings are not a file's, until close.
    pub fn after_call(&mut self, tgid: u32, effect: Effect, args: &[u64; 6], ret: i64) {
        let len = |n: u64| n.div_ceil(4096) * 4096;
        match effect {
            Effect::UringSetup => {
                self.rings.entry(tgid).or_default().insert(ret as i32);
            }
            Effect::Close => {
                if let Some(fds) = self.rings.get_mut(&tgid) {
                    fds.remove(&(args[0] as i32));
                }
            }
            Effect::Map => {
                let (prot, flags, fd) = (args[2] as i32, args[3] as i32, args[4] as i32);
                let shared = flags & libc::MAP_TYPE == libc::MAP_SHARED
                    || flags & libc::MAP_TYPE == libc::MAP_SHARED_VALIDATE;
                let start = ret as u64;
                // MAP_FIXED replaces whatever was there.
                self.remove(tgid, start, start + len(args[1]));
                let ring = self.rings.get(&tgid).is_some_and(|r| r.contains(&fd));
                if shared
                    && prot & libc::PROT_WRITE != 0
                    && flags & libc::MAP_ANONYMOUS == 0
                    && fd >= 0
                    && !ring
                {
                    self.by_tgid
                        .entry(tgid)
                        .or_default()
                        .push((start, start + len(args[1])));
                }
            }
            Effect::Unmap => self.remove(tgid, args[0], args[0] + len(args[1])),
            Effect::Remap => {
                let (old, old_len, new_len) = (args[0], len(args[1]), len(args[2]));
                let moved = self
                    .of(tgid)
                    .iter()
                    .any(|&(s, e)| s < old + old_len && old < e);
                self.remove(tgid, old, old + old_len);
                if moved {
                    let start = ret as u64;
                    self.by_tgid
                        .entry(tgid)
                        .or_default()
                        .push((start, start + new_len));
                }
            }
            _ => {}
        }
    }

    /// Drops `[start, end)` from the process's ranges, splitting any that
    /// straddle it.
    fn remove(&mut self, tgid: u32, start: u64, end: u64) {
        let Some(ranges) = self.by_tgid.get_mut(&tgid) else {
            return;
        };
        let mut kept = Vec::with_capacity(ranges.len());
        for &(s, e) in ranges.iter() {
            if e <= start || end <= s {
                kept.push((s, e));
                continue;
            }
            if s < start {
                kept.push((s, start));
            }
            if end < e {
                kept.push((end, e));
            }
        }
        *ranges = kept;
    }

    /// A child made by `fork` starts with its parent's mappings (a shared
    /// mapping stays shared across `fork`, so the child's stores reach the
    /// file too).
    pub fn inherit(&mut self, parent: u32, child: u32) {
        if let Some(ranges) = self.by_tgid.get(&parent).filter(|r| !r.is_empty()) {
            let ranges = ranges.clone();
            self.by_tgid.insert(child, ranges);
        }
        if let Some(fds) = self.rings.get(&parent).filter(|r| !r.is_empty()) {
            let fds = fds.clone();
            self.rings.insert(child, fds);
        }
    }

    /// The process's mappings were captured as it entered a call that ends
    /// its address space, or as a signal ended it.
    pub fn captured_at_exit(&mut self, tgid: u32) {
        self.captured.insert(tgid);
    }

    /// Whether the process's mappings were captured on its way out.
    pub fn is_captured(&self, tgid: u32) -> bool {
        self.captured.contains(&tgid)
    }

    /// That call failed (`execve`): the mappings live on, and stores to
    /// them after the capture are not in the trace yet.
    pub fn live_on(&mut self, tgid: u32) {
        self.captured.remove(&tgid);
    }

    /// The process's address space is gone (exec or exit): returns how many
    /// shared writable mappings it still had whose last stores (after the
    /// last `msync`) the trace cannot hold: none when they were captured on
    /// the way out, all when it ended otherwise (killed by a signal, or
    /// its last thread called `exit`).
    pub fn forget(&mut self, tgid: u32) -> usize {
        self.rings.remove(&tgid);
        let ranges = self.by_tgid.remove(&tgid).map_or(0, |r| r.len());
        if self.captured.remove(&tgid) {
            0
        } else {
            ranges
        }
    }
}

/// The `mapped_at_exit` pseudo-calls of process `tgid`, whose address
/// space is about to end while its thread `pid` is stopped: one per piece
/// of at most [`CAPTURE_MAX`] bytes of each of `ranges` (a larger piece
/// would be cut off), its bytes as the runs of pages that hold any. `seq`
/// gives each its id, `emit` writes it.
pub fn record_at_exit(
    pid: i32,
    tgid: u32,
    ranges: &[(u64, u64)],
    policy: DataPolicy,
    counts: &mut CaptureCounts,
    mut seq: impl FnMut() -> u64,
    mut emit: impl FnMut(&SyscallHead, &Captures) -> Result<(), Error>,
) -> Result<(), Error> {
    let row = catalogue::by_nr(catalogue::MAPPED_AT_EXIT).expect("pseudo-call row");
    let (arg, len_arg) = row
        .params()
        .iter()
        .enumerate()
        .find_map(|(i, p)| match p.kind {
            Kind::Mapped { len } => Some((i as u8, usize::from(len))),
            _ => None,
        })
        .expect("a mapped range");
    let pieces = ranges.iter().flat_map(|&(start, end)| {
        (start..end)
            .step_by(CAPTURE_MAX as usize)
            .map(move |at| (at, end.min(at + CAPTURE_MAX)))
    });
    let mut caps = Captures::default();
    for (start, end) in pieces {
        let head = |elem, len| CaptureHead {
            arg,
            role: Role::Entry,
            elem,
            status: CaptureStatus::Complete,
            len,
        };
        // The time the capture began: the process is stopped, so its bytes
        // are at least that new, while another process may still store
        // into the same file until then (replay keeps the newest capture
        // of each page, whatever order the records come in).
        let (seq, now) = (seq(), now_ns());
        caps.clear();
        take_mapped(pid, head, start, end - start, policy, &mut caps, counts);
        let mut args = [0; 6];
        args[usize::from(arg)] = start;
        args[len_arg] = end - start;
        let head = SyscallHead {
            seq,
            tgid,
            tid: pid as u32,
            nr: row.nr,
            enter_ns: now,
            args,
            exit: Some(SyscallExit {
                exit_ns: now,
                ret: 0,
                is_error: false,
            }),
        };
        emit(&head, &caps)?;
    }
    Ok(())
}

/// True when `[addr, addr + len)` overlaps one of `ranges`.
pub fn overlaps(ranges: &[(u64, u64)], addr: u64, len: u64) -> bool {
    ranges
        .iter()
        .any(|&(s, e)| s < addr.saturating_add(len) && addr < e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_shared_writable_file_mappings_only() {
        let mut m = SharedMappings::default();
        let shared = [0, 8192, 3, libc::MAP_SHARED as u64, 5, 0];
        let private = [0, 8192, 3, libc::MAP_PRIVATE as u64, 5, 0];
        let read_only = [0, 8192, 1, libc::MAP_SHARED as u64, 5, 0];
        m.after_call(1, Effect::Map, &shared, 0x10000);
        m.after_call(1, Effect::Map, &private, 0x20000);
        m.after_call(1, Effect::Map, &read_only, 0x30000);
        assert_eq!(m.of(1), &[(0x10000, 0x12000)]);
        assert!(overlaps(m.of(1), 0x11000, 1) && !overlaps(m.of(1), 0x12000, 4096));
        // A partial munmap splits; mremap moves.
        m.after_call(1, Effect::Unmap, &[0x10000, 4096, 0, 0, 0, 0], 0);
        assert_eq!(m.of(1), &[(0x11000, 0x12000)]);
        m.after_call(1, Effect::Remap, &[0x11000, 4096, 8192, 1, 0, 0], 0x40000);
        assert_eq!(m.of(1), &[(0x40000, 0x42000)]);
        assert_eq!(m.forget(1), 1);
        assert!(m.of(1).is_empty());
    }

    #[test]
    fn io_uring_rings_are_not_file_mappings() {
        let mut m = SharedMappings::default();
        let ring = [0, 4096, 3, libc::MAP_SHARED as u64, 7, 0];
        m.after_call(1, Effect::UringSetup, &[8, 0x1000, 0, 0, 0, 0], 7);
        m.after_call(1, Effect::Map, &ring, 0x10000);
        assert!(m.of(1).is_empty());
        // A child made by fork has the ring too.
        m.inherit(1, 2);
        m.after_call(2, Effect::Map, &ring, 0x10000);
        assert!(m.of(2).is_empty());
        // Once closed, the number may be a file's.
        m.after_call(1, Effect::Close, &[7, 0, 0, 0, 0, 0], 0);
        m.after_call(1, Effect::Map, &ring, 0x20000);
        assert_eq!(m.of(1), &[(0x20000, 0x21000)]);
    }

    #[test]
    fn a_fork_inherits_and_an_exit_capture_is_not_counted_lost() {
        let mut m = SharedMappings::default();
        let shared = [0, 4096, 3, libc::MAP_SHARED as u64, 5, 0];
        m.after_call(1, Effect::Map, &shared, 0x10000);
        m.inherit(1, 2);
        m.inherit(3, 4);
        assert_eq!(m.of(2), &[(0x10000, 0x11000)]);
        assert!(m.of(4).is_empty());
        // Captured on the way out: nothing lost.
        m.captured_at_exit(1);
        assert_eq!(m.forget(1), 0);
        // A failed execve lives on, and a later end loses the stores.
        m.captured_at_exit(2);
        m.live_on(2);
        assert_eq!(m.forget(2), 1);
    }
}
