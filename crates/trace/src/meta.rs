//! The self-description at the head of every trace and the summary at its
//! end, both JSON so that any tool can read them without this crate.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a trace is: who wrote it, where, how, and the signature of every
/// system call it may contain. Stored as JSON in the first frame.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TraceMeta {
    /// The program that wrote the trace, e.g. `reanimator 0.1.0`.
    pub tool: String,
    /// A `CLOCK_MONOTONIC` / `CLOCK_REALTIME` pair read together at the
    /// start, so every monotonic time in the trace maps to wall-clock time.
    pub clock: ClockAnchor,
    /// Machine architecture (`x86_64`).
    pub arch: String,
    /// Host name of the recording machine.
    pub hostname: String,
    /// Kernel release of the recording machine.
    pub kernel: String,
    /// Which recorder captured it (`ptrace`, `ebpf`, ...).
    pub recorder: String,
    /// The traced command line, if the recorder started it.
    pub command: Vec<String>,
    /// Recorder options in force (`data=all`, ...).
    pub options: BTreeMap<String, String>,
    /// The catalogue signature of each system call the recorder knew, as
    /// `nr name(param: kind, ...) -> ret [replay]`, so the trace decodes
    /// without the catalogue that wrote it.
    pub syscalls: Vec<String>,
    /// Fields added by later minor versions, kept when a trace is rewritten.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl TraceMeta {
    /// This machine's host name and kernel release (what `uname -n` and
    /// `uname -r` print), for the meta of a trace written here: a
    /// recording, or a replay's timings.
    pub fn this_machine() -> (String, String) {
        let read = |name: &str| {
            std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
                .map(|s| s.trim_end().to_string())
                .unwrap_or_default()
        };
        (read("hostname"), read("osrelease"))
    }
}

/// `TraceMeta::recorder` of a timings trace (`reanimator replay
/// --timings`): the replay's own times for the original's calls, which
/// `reanimator fidelity` reads and refuses anything else as.
pub const TIMINGS_RECORDER: &str = "replay";

/// A pair of clock readings taken back to back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockAnchor {
    /// `CLOCK_MONOTONIC` in ns.
    pub monotonic_ns: u64,
    /// `CLOCK_REALTIME` in ns since the Unix epoch.
    pub realtime_ns: u64,
}

impl ClockAnchor {
    /// Reads both clocks now.
    pub fn now() -> Self {
        ClockAnchor {
            monotonic_ns: clock_ns(libc_clock::MONOTONIC),
            realtime_ns: clock_ns(libc_clock::REALTIME),
        }
    }

    /// Converts a monotonic time from the trace to ns since the Unix epoch.
    pub fn to_realtime(&self, monotonic_ns: u64) -> u64 {
        let delta = monotonic_ns as i128 - self.monotonic_ns as i128;
        (self.realtime_ns as i128 + delta).max(0) as u64
    }
}

/// Clock ids, kept here so the format crate needs no libc dependency.
mod libc_clock {
    pub const REALTIME: i32 = 0;
    pub const MONOTONIC: i32 = 1;
}

fn clock_ns(clock: i32) -> u64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: clock_gettime writes one timespec to a valid pointer.
    let rc = unsafe { clock_gettime(clock, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.sec as u64 * 1_000_000_000 + ts.nsec as u64
}

/// The totals a writer reports in the end frame: a reader can check its own
/// counts against them, and a trace without one was not finished.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EndSummary {
    /// Records of every kind.
    pub records: u64,
    /// System call events.
    pub syscalls: u64,
    /// Process start records.
    pub process_starts: u64,
    /// Process exit records.
    pub process_exits: u64,
    /// Signal delivery records.
    pub signals: u64,
    /// Loss records.
    pub losses: u64,
    /// Events the loss records say were lost.
    pub lost_events: u64,
    /// Bytes of user memory captured (before deduplication and compression).
    pub captured_bytes: u64,
    /// Bytes of buffer data stored after deduplication, before compression.
    pub unique_bytes: u64,
    /// Fields added by later minor versions.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}
