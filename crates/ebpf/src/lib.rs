/*!
The kernel-level back end: records a process tree with eBPF programs on the
system-call tracepoints of an unmodified kernel (Linux 6.16 or later, root).

`sys_enter` keeps each call's arguments in task storage and copies its
input memory; `sys_exit` copies its output memory and emits the call; the
scheduler's fork, exec and exit tracepoints and `signal_deliver` give the
process tree and signals. Which memory a call names comes from the syscall
catalogue, loaded into a BPF map at start ([`spec`](crate) rules), so this
back end captures exactly what the ptrace back end captures. Records travel
through one ring buffer as variable-size records, user buffers copied
straight into them; the recorder drains the ring every half millisecond.

Nothing is dropped silently: a process that outruns the recorder is stopped
(`SIGSTOP` from the BPF program once the ring is past its high-water mark)
until the ring is drained; records that still do not fit, and sequence ids
issued but never delivered, are counted, written to the trace as a gap
record, and make the recording fail. docs/ARCHITECTURE.md describes the
mechanism and its side effects (job-control shells, pty wrappers, EINTR).
*/

mod gate;
mod guard;
mod recorder;
mod records;
mod spec;

mod skel {
    #![allow(missing_docs, clippy::all, unused_imports)]
    include!(concat!(env!("OUT_DIR"), "/recorder.skel.rs"));
}

use std::io::Write;

pub use reanimator_record::{DataPolicy, Error, RecordSummary, SnapshotPolicy, Target};
use reanimator_trace::Writer;

/// Tuning of the kernel side.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Ring buffer size in bytes (rounded up to a power of two).
    pub ring_bytes: u32,
    /// Fill level, in percent of the ring, at which a process is stopped
    /// until the recorder has drained it. The rest is headroom for calls
    /// already under way.
    pub high_water_percent: u8,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            ring_bytes: 32 << 20,
            high_water_percent: 50,
        }
    }
}

/// Why the ebpf back end cannot run here, or `None` when it can (root,
/// kernel BTF present). Loading can still fail on kernels older than 6.16;
/// [`record`] then says so.
pub fn unavailable() -> Option<String> {
    // SAFETY: geteuid has no arguments.
    if unsafe { libc::geteuid() } != 0 {
        return Some("the ebpf back end needs root".into());
    }
    if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Some("the kernel has no BTF (/sys/kernel/btf/vmlinux)".into());
    }
    None
}

/// Records `target` into `writer` until every task has exited (spawned
/// commands) or SIGINT/SIGTERM asks to stop (attached processes, left
/// running). The caller finishes the writer. Fails with
/// [`Error::Lost`] after writing what it captured when any event was lost.
pub fn record<W: Write + Send>(
    target: &Target,
    data: DataPolicy,
    snapshot: SnapshotPolicy,
    opts: &Options,
    writer: &mut Writer<W>,
) -> Result<RecordSummary, Error> {
    recorder::run(target, data, snapshot, opts, writer)
}
