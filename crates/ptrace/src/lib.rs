/*!
The ptrace back end: records a process tree without privileges.

One tracer thread follows every process and thread of the tree with
`PTRACE_SEIZE` and syscall stops, asks the catalogue which memory each call
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
let summary = record(&target, DataPolicy::All, None, SnapshotPolicy::Contents, &mut w)?;
w.finish()?;
println!("{} processes", summary.processes);
# Ok::<(), Box<dyn std::error::Error>>(())
```
*/

mod capture;
mod mappings;
mod sys;
mod tracer;

use std::io::Write;

pub use reanimator_record::{
    CaptureCounts, DataPolicy, Error, RecordSummary, SnapshotPolicy, Target, CAPTURE_MAX,
};
use reanimator_trace::Writer;

/// Records `target` into `writer` until it has exited (spawned commands)
/// or the recorder is asked to stop with SIGINT/SIGTERM (attached
/// processes, which are then detached and left running). `pin_cpu` keeps
/// the tracer, and a spawned command, on one CPU. The caller finishes the
/// writer.
///
/// A recording owns process-wide state while it runs (the handlers of
/// SIGINT, SIGQUIT, SIGTERM and SIGALRM, a real-time interval timer, and
/// the calling thread's CPU affinity), restored when it returns: run one
/// recording at a time per process.
pub fn record<W: Write + Send>(
    target: &Target,
    data: DataPolicy,
    pin_cpu: Option<usize>,
    snapshot: SnapshotPolicy,
    writer: &mut Writer<W>,
) -> Result<RecordSummary, Error> {
    tracer::run(target, data, pin_cpu, snapshot, writer)
}
