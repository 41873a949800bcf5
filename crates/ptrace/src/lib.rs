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
mod procfs;
mod sink;
mod sys;
mod tracer;

use std::ffi::{CString, OsString};
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use capture::{CaptureCounts, DataPolicy, CAPTURE_MAX};
pub use reanimator_fsstate::SnapshotPolicy;
use reanimator_trace::{ExitStatus, Writer};

/// What to record.
#[derive(Debug, Clone)]
pub enum Target {
    /// Start a command under the recorder.
    Spawn {
        /// The resolved executable.
        program: CString,
        /// Its arguments, `argv[0]` first.
        argv: Vec<CString>,
        /// Its environment.
        env: Vec<CString>,
    },
    /// Attach to running processes (all their threads, and their future
    /// children).
    Attach {
        /// Process ids.
        pids: Vec<i32>,
    },
}

impl Target {
    /// A command to start, looked up in `PATH` as a shell would, with this
    /// process's environment. Fails (before anything runs) when it cannot
    /// be found or executed.
    pub fn spawn(argv: &[OsString]) -> Result<Target, Error> {
        let first = argv.first().ok_or(Error::NoCommand)?;
        let program =
            find_program(Path::new(first)).ok_or_else(|| Error::NotFound(first.clone()))?;
        let cstr = |s: &[u8]| CString::new(s).map_err(|_| Error::Nul);
        Ok(Target::Spawn {
            program: cstr(program.as_os_str().as_bytes())?,
            argv: argv
                .iter()
                .map(|a| cstr(a.as_bytes()))
                .collect::<Result<_, _>>()?,
            env: std::env::vars_os()
                .map(|(k, v)| {
                    let mut kv = k.into_vec();
                    kv.push(b'=');
                    kv.extend(v.into_vec());
                    cstr(&kv)
                })
                .collect::<Result<_, _>>()?,
        })
    }
}

/// `cmd` itself when it has a slash, else the first executable match in `PATH`.
fn find_program(cmd: &Path) -> Option<PathBuf> {
    let executable = |p: &Path| {
        let c = CString::new(p.as_os_str().as_bytes()).ok()?;
        // SAFETY: access reads the NUL-terminated path.
        (p.is_file() && unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0)
            .then(|| p.to_path_buf())
    };
    if cmd.as_os_str().as_bytes().contains(&b'/') {
        return executable(cmd);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path).find_map(|dir| executable(&dir.join(cmd)))
}

/// What a recording did, for the final summary line.
#[derive(Debug, Default, Clone)]
pub struct RecordSummary {
    /// Processes followed.
    pub processes: u64,
    /// Threads followed (processes included).
    pub threads: u64,
    /// Calls that never returned (the task exited or was killed inside
    /// them, or was detached): recorded without an exit.
    pub unfinished: u64,
    /// Calls already under way when the recorder attached (`-p`): only
    /// their return was seen, so they are not in the trace.
    pub entered_before_attach: u64,
    /// Captures that are not complete.
    pub captures: CaptureCounts,
    /// How the spawned command ended (`None` when attached).
    pub root_status: Option<ExitStatus>,
    /// Wall time of the recording.
    pub duration: Duration,
    /// Paths whose initial state was recorded (`--snapshot`).
    pub snapshot_paths: u64,
    /// Bytes of initial file contents recorded.
    pub snapshot_bytes: u64,
    /// Pre-existing files whose contents could not be read for the
    /// initial state.
    pub snapshot_unreadable: u64,
    /// Shared writable file mappings still mapped when their process
    /// exited or exec'd: stores through them after their last `msync` or
    /// `munmap` reached the file without the trace seeing them.
    pub mappings_at_exit: u64,
}

/// Why a recording failed.
#[derive(Debug)]
pub enum Error {
    /// No command was given.
    NoCommand,
    /// The command was not found or is not executable.
    NotFound(OsString),
    /// An argument or environment entry contains a NUL byte.
    Nul,
    /// The command could not be started.
    Spawn(io::Error),
    /// A process could not be attached to.
    Attach(i32, io::Error),
    /// A ptrace or wait request failed unexpectedly.
    Ptrace(io::Error),
    /// The trace could not be written.
    Trace(reanimator_trace::Error),
    /// The writer thread stopped (its own error is reported instead when known).
    WriterStopped,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NoCommand => write!(f, "no command given"),
            Error::NotFound(c) => write!(
                f,
                "{}: command not found or not executable",
                c.to_string_lossy()
            ),
            Error::Nul => write!(f, "an argument or environment variable contains a NUL byte"),
            Error::Spawn(e) => write!(f, "cannot start the command: {e}"),
            Error::Attach(pid, e) if e.raw_os_error() == Some(libc::EPERM) => {
                write!(f, "cannot attach to process {pid}: {e} (another tracer, or not yours; see ptrace(2))")
            }
            Error::Attach(pid, e) => write!(f, "cannot attach to process {pid}: {e}"),
            Error::Ptrace(e) => write!(f, "ptrace: {e}"),
            Error::Trace(e) => write!(f, "{e}"),
            Error::WriterStopped => write!(f, "the trace writer stopped unexpectedly"),
        }
    }
}

impl std::error::Error for Error {}

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
