/*!
The ptrace back end: records a process tree without privileges.

Tracer threads, one per CPU, follow every process and thread of the tree
with `PTRACE_SEIZE` and syscall stops (a new task goes to the least busy
tracer), asks the catalogue which memory each call
names, reads it with `process_vm_readv` (inputs at entry, outputs at exit,
exactly the bytes the size rule gives), and writes each call to the trace
when it returns. Process starts (with the state replay needs), exits,
signals and calls left unfinished are recorded too; nothing is dropped
silently.

# Example

```no_run
use reanimator_ptrace::{record, DataPolicy, SnapshotPolicy, Target};
use reanimator_trace::{TraceMeta, Writer, WriterOptions};
let target = Target::spawn(&["/bin/true".into()])?;
let mut w = Writer::create("true.rtr".as_ref(), &TraceMeta::default(), WriterOptions::default())?;
let summary = record(&target, DataPolicy::All, &[], SnapshotPolicy::Contents, &mut w)?;
w.finish()?;
println!("{} processes", summary.processes);
# Ok::<(), Box<dyn std::error::Error>>(())
```
*/

mod capture;
mod sys;
mod tracer;
mod uring;

use std::io::Write;

pub use reanimator_record::{
    CaptureCounts, DataPolicy, Error, RecordSummary, SnapshotPolicy, Target, CAPTURE_MAX,
};
use reanimator_trace::Writer;

/// Records `target` into `writer` until it has exited (spawned commands)
/// or the recorder is asked to stop with SIGINT/SIGTERM (attached
/// processes, which are then detached and left running). One tracer
/// thread runs on each CPU of `cpus`, pinned there with the tasks it
/// traces (a spawned command starts on the first); new threads and
/// processes go to the least busy tracer. With `cpus` empty, one unpinned
/// tracer follows everything. The caller finishes the writer.
///
/// A recording owns process-wide state while it runs (the handlers of
/// SIGINT, SIGQUIT, SIGTERM and SIGALRM, a real-time interval timer, and
/// the calling thread's CPU affinity), restored when it returns: run one
/// recording at a time per process.
pub fn record<W: Write + Send>(
    target: &Target,
    data: DataPolicy,
    cpus: &[usize],
    snapshot: SnapshotPolicy,
    writer: &mut Writer<W>,
) -> Result<RecordSummary, Error> {
    tracer::run(target, data, cpus, snapshot, writer)
}

/// The default placement: one tracer per CPU this process may run on,
/// the CPU it runs on now first.
pub fn default_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity fills it and
    // CPU_ISSET only reads it; sched_getcpu has no arguments.
    let (set, current) = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        (set, libc::sched_getcpu())
    };
    let mut cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: as above.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect();
    if let Some(at) = cpus.iter().position(|&c| c as i32 == current) {
        cpus[..=at].rotate_right(1);
    }
    cpus
}
