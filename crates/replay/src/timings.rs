//! `--timings`: the replay's own times for every call it executed,
//! written as a trace, so a replay can be measured against its original
//! (`reanimator fidelity`) and read by every tool that reads traces
//! (`stats`, `dump`, `export`).
//!
//! Each executed call becomes one system-call record carrying the
//! original's sequence id, process, thread, number, arguments and
//! recorded result, with the replay's entry and exit times around the
//! system call it issued (around its whole emulation for calls replay
//! emulates, such as `open` inside DIR, `close` or `mmap`). Simulated and
//! skipped calls are not written. The meta says what was replayed and
//! from which origins both clocks count (docs/REPLAY.md, "Timings").

use std::path::Path;
use std::sync::mpsc::Receiver;

use reanimator_trace::{
    ClockAnchor, Reader, Record, SyscallEvent, SyscallExit, SyscallHead, TraceMeta, Writer,
    WriterOptions, TIMINGS_RECORDER,
};

use crate::{Options, Timing};

/// What the replay hands the timings writer.
pub(crate) enum Timed {
    /// An executed call, with the replay's times.
    Call(SyscallHead),
    /// A process start or end, as recorded but at the time replay read
    /// it, so the timings trace names the processes and threads its calls
    /// belong to.
    Other(Record),
}

/// Now, in ns of `CLOCK_MONOTONIC` (the clock traces use).
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec to a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Creates the timings trace at `path` for a replay of `trace` (read by
/// `reader`) whose first record is at `trace_origin_ns` and whose calls
/// phase begins at `replay_origin_ns`.
pub(crate) fn create(
    path: &Path,
    trace: &Path,
    reader: &Reader,
    opts: &Options,
    trace_origin_ns: u64,
    replay_origin_ns: u64,
) -> reanimator_trace::Result<Writer<std::fs::File>> {
    let original = reader.meta();
    let timing = match opts.timing {
        Timing::Afap => "afap".to_string(),
        Timing::Scaled(1.0) => "original".to_string(),
        Timing::Scaled(x) => format!("scale={x}"),
    };
    let options = [
        ("replay_of", trace.display().to_string()),
        ("timing", timing),
        ("order", opts.order.name().to_string()),
        ("trace_origin_ns", trace_origin_ns.to_string()),
        ("replay_origin_ns", replay_origin_ns.to_string()),
    ];
    // The replaying machine: where these times were measured.
    let (hostname, kernel) = TraceMeta::this_machine();
    let meta = TraceMeta {
        tool: format!("reanimator {}", env!("CARGO_PKG_VERSION")),
        clock: ClockAnchor::now(),
        arch: std::env::consts::ARCH.into(),
        hostname,
        kernel,
        recorder: TIMINGS_RECORDER.into(),
        command: original.command.clone(),
        options: options
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        syscalls: original.syscalls.clone(),
        ..TraceMeta::default()
    };
    let wopts = WriterOptions {
        overwrite: opts.timings_overwrite,
        ..WriterOptions::default()
    };
    Writer::create(path, &meta, wopts)
}

/// The record of executed call `ev`, issued from `enter_ns` to `exit_ns`.
pub(crate) fn head(ev: &SyscallEvent, (enter_ns, exit_ns): (u64, u64)) -> SyscallHead {
    SyscallHead {
        seq: ev.seq,
        tgid: ev.tgid,
        tid: ev.tid,
        nr: ev.nr,
        enter_ns,
        args: ev.args,
        exit: ev.exit.map(|x| SyscallExit { exit_ns, ..x }),
    }
}

/// Writes what the replay threads send until they are all gone, then
/// finishes the trace. After a write error it keeps receiving (so no
/// thread blocks) and returns the first error.
pub(crate) fn write_all(
    mut writer: Writer<std::fs::File>,
    rx: Receiver<Vec<Timed>>,
) -> reanimator_trace::Result<u64> {
    let mut written = 0u64;
    let mut failed = None;
    for batch in rx {
        if failed.is_some() {
            continue;
        }
        for item in &batch {
            let done = match item {
                Timed::Call(head) => writer.syscall(head).finish(),
                Timed::Other(record) => writer.write(record),
            };
            if let Err(e) = done {
                failed = Some(e);
                break;
            }
            written += matches!(item, Timed::Call(_)) as u64;
        }
    }
    match failed {
        Some(e) => Err(e),
        None => writer.finish().map(|_| written),
    }
}
