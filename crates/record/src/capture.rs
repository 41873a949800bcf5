//! Reading captures out of a traced process's memory, shared by both back
//! ends: one buffer as the policy asks, and a mapped range as the runs of
//! pages that hold any.

use reanimator_trace::{CaptureHead, CaptureStatus};

use crate::{read_mapped, resident_runs, CaptureCounts, Captures, DataPolicy, CAPTURE_MAX};

/// A mapped range's bytes, as the runs of pages that hold any
/// ([`resident_runs`]), each a capture whose `elem` is its first page, at
/// most [`CAPTURE_MAX`] bytes in all; one run from page 0 where the page
/// map cannot be read.
pub fn take_mapped(
    pid: i32,
    head: impl Fn(u32, u64) -> CaptureHead,
    addr: u64,
    n: u64,
    policy: DataPolicy,
    out: &mut Captures,
    counts: &mut CaptureCounts,
) {
    let runs = match policy {
        DataPolicy::None => None,
        _ => resident_runs(pid, addr, n),
    };
    let Some(runs) = runs else {
        let what = Bytes {
            head: head(0, n),
            addr,
            present: n,
        };
        return take_bytes(pid, what, policy, read_mapped, out, counts);
    };
    let mut budget = match policy {
        DataPolicy::Max(m) => m.min(CAPTURE_MAX),
        _ => CAPTURE_MAX,
    };
    for (offset, len) in runs {
        if budget == 0 {
            break;
        }
        let what = Bytes {
            head: head((offset / 4096) as u32, len),
            addr: addr + offset,
            present: len,
        };
        take_bytes(pid, what, DataPolicy::Max(budget), read_mapped, out, counts);
        budget -= len.min(budget);
    }
}

/// One capture to read: `present` bytes exist at `addr` (the head's `len`
/// may be larger for output iovec elements).
pub struct Bytes {
    /// The capture's head; its status is filled in.
    pub head: CaptureHead,
    /// Where the bytes are in the traced process.
    pub addr: u64,
    /// How many bytes there are.
    pub present: u64,
}

/// Reads one capture with `read`, keeping what `policy` asks for.
pub fn take_bytes(
    pid: i32,
    what: Bytes,
    policy: DataPolicy,
    read: fn(i32, u64, &mut [u8]) -> usize,
    out: &mut Captures,
    counts: &mut CaptureCounts,
) {
    let Bytes {
        mut head,
        addr,
        present,
    } = what;
    let want = match policy {
        DataPolicy::All => present,
        DataPolicy::None => 0,
        DataPolicy::Max(m) => present.min(m),
    }
    .min(CAPTURE_MAX) as usize;
    let start = out.bytes.len();
    out.bytes.resize(start + want, 0);
    let got = read(pid, addr, &mut out.bytes[start..]);
    out.bytes.truncate(start + got);
    head.status = if got < want {
        counts.unreadable += 1;
        CaptureStatus::Unreadable
    } else if policy == DataPolicy::None && present > 0 {
        CaptureStatus::Skipped
    } else if (got as u64) < present {
        counts.truncated += 1;
        CaptureStatus::Truncated
    } else {
        CaptureStatus::Complete
    };
    out.heads.push((head, start..start + got));
}
