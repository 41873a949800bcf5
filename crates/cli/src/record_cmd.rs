//! `reanimator record`: runs a command (or attaches to processes) under a
//! recorder and writes the trace.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use reanimator_record::{DataPolicy, RecordSummary, SnapshotPolicy, Target};
use reanimator_trace::{ClockAnchor, ExitStatus, TraceMeta, Writer, WriterOptions};

/// Arguments of `reanimator record`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "The exit status is the recorded command's (128+N if signal N killed it), as with strace.\n\
                  The recording of a command ends when it and everything it started have exited, so a\n\
                  daemon it leaves running keeps it going. Ctrl-C goes to the command (a SIGINT to the\n\
                  recorder alone does not end it); SIGTERM to the recorder (`kill PID`) ends the recording:\n\
                  what still runs is killed, the trace finished.\n\
                  Examples:\n  reanimator record -- make -j2\n  reanimator record -o db.rtr --data max=4096 -- db_bench\n  \
                  reanimator record -p 1234        (Ctrl-C detaches and finishes the trace)"
)]
pub struct RecordArgs {
    /// Trace file to write [default: the command's name with `.rtr`, or
    /// `pid-N.rtr`; a free name is chosen rather than replacing a trace].
    #[arg(short, long, value_name = "TRACE")]
    pub output: Option<PathBuf>,
    /// Replace TRACE if it exists.
    #[arg(long)]
    pub force: bool,
    /// How calls are captured: `ebpf` (kernel-level, faster; root and
    /// Linux 6.16+), `ptrace` (no privileges), or `auto`: ebpf when the
    /// kernel and privileges allow it, else ptrace.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// eBPF ring buffer size in bytes (rounded up to a power of two, at
    /// least 1M; the program is stopped while the recorder drains it once
    /// it is half full, and a buffer larger than what is left is read from
    /// the stopped thread).
    /// Suffixes k, M, G (powers of 1024) are accepted: `--ring-size 64M`.
    /// [default: 32M]
    #[arg(long, value_name = "BYTES", value_parser = parse_ring_size)]
    pub ring_size: Option<u32>,
    /// Buffer data to capture: `all` bytes, `none` (lengths only), or
    /// `max=BYTES` per buffer (`max=4k` works too). Paths and structures
    /// are always captured; anything cut short is marked in the trace.
    #[arg(long, default_value = "all", value_parser = parse_data, value_name = "all|none|max=BYTES")]
    pub data: DataPolicy,
    /// Attach to a running process, its threads and future children
    /// (repeatable). Ctrl-C detaches and finishes the trace.
    #[arg(
        short = 'p',
        long = "pid",
        value_name = "PID",
        conflicts_with = "command"
    )]
    pub pids: Vec<i32>,
    /// ptrace back end: the CPUs to trace on, one tracer thread per CPU
    /// (default: every CPU the recorder may use, the one it starts on
    /// first). Each traced thread and process runs on the CPU of the tracer
    /// that follows it, new ones going to the least busy tracer: a stop
    /// then wakes the other side on the same core, which is much cheaper,
    /// and a program's threads still spread over the CPUs (xz -T2 runs as
    /// fast as untraced; with `--cpu 0`, one tracer, 1.6x slower). The
    /// program is still shown the CPUs it would have had
    /// (`sched_getaffinity`), so `nproc` and thread pools are as untraced.
    /// Ranges as `taskset -c` takes them (`0-3`). `none` runs one unpinned
    /// tracer and lets the scheduler place everything.
    #[arg(long, value_name = "CPU[-CPU][,...]|none")]
    pub cpu: Option<String>,
    /// Initial file-system state stored for replay: `contents` (metadata
    /// and contents of every pre-existing file the program touches,
    /// libraries included), `meta` (metadata only; replay zero-fills), or
    /// `off`. See docs/REPLAY.md.
    #[arg(long, value_enum, default_value_t = SnapshotArg::Contents)]
    pub snapshot: SnapshotArg,
    /// The command to record and its arguments.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// Recording back ends.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// ebpf if available, else ptrace.
    Auto,
    /// eBPF programs on the syscall tracepoints: every call, every byte.
    Ebpf,
    /// ptrace: unprivileged, every call, every byte.
    Ptrace,
}

fn parse_data(s: &str) -> Result<DataPolicy, String> {
    match s {
        "all" => Ok(DataPolicy::All),
        "none" => Ok(DataPolicy::None),
        _ => match s.strip_prefix("max=").map(parse_bytes) {
            Some(Ok(n)) => Ok(DataPolicy::Max(n)),
            _ => Err(format!("expected all, none or max=BYTES, got {s:?}")),
        },
    }
}

/// A byte count: digits with an optional k, M or G (KiB, MiB, GiB; case
/// and a trailing `iB` or `B` do not matter), as fio and dd users write.
fn parse_bytes(s: &str) -> Result<u64, String> {
    let bad = || format!("expected a size such as 4096, 64k or 32M, got {s:?}");
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(bad()),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(bad)
}

fn parse_ring_size(s: &str) -> Result<u32, String> {
    let n = parse_bytes(s)?;
    if n == 0 {
        return Err("a ring of 0 bytes holds nothing (it is at least 1M)".into());
    }
    u32::try_from(n)
        .ok()
        .filter(|n| *n <= 1 << 31)
        .ok_or_else(|| format!("the ring holds at most 2G, got {s:?}"))
}

fn data_text(d: DataPolicy) -> String {
    match d {
        DataPolicy::All => "all".into(),
        DataPolicy::None => "none".into(),
        DataPolicy::Max(n) => format!("max={n}"),
    }
}

/// `NAME.rtr`, `NAME.2.rtr`, ...: the default names, in the order tried.
fn default_names(stem: &str) -> impl Iterator<Item = PathBuf> + '_ {
    std::iter::once(PathBuf::from(format!("{stem}.rtr")))
        .chain((2..).map(move |n| PathBuf::from(format!("{stem}.{n}.rtr"))))
}

/// Runs the recording and prints the summary line.
pub fn run(args: &RecordArgs) -> Result<ExitCode> {
    let target = if !args.pids.is_empty() {
        if let Some(pid) = args
            .pids
            .iter()
            .find(|p| !Path::new(&format!("/proc/{p}")).exists())
        {
            bail!("no process {pid} (nothing to attach to)");
        }
        Target::Attach {
            pids: args.pids.clone(),
        }
    } else if !args.command.is_empty() {
        Target::spawn(&args.command)?
    } else {
        bail!("nothing to record: give a command after `--` or a process with -p PID (see reanimator record --help)");
    };
    // With no -o, the first default name not taken: tried one after the
    // other at creation, so recorders started together each get their own.
    let stem = match (&args.output, &target) {
        (Some(_), _) => None,
        (None, Target::Spawn { .. }) => Some(
            Path::new(&args.command[0])
                .file_name()
                .map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned()),
        ),
        (None, Target::Attach { pids }) => Some(format!("pid-{}", pids[0])),
    };
    let mut names = stem.as_deref().map(default_names);
    let mut output = match &args.output {
        Some(p) => p.clone(),
        None => names
            .as_mut()
            .and_then(|n| n.find(|p| !p.exists()))
            .context("no free trace name")?,
    };
    let usable = reanimator_ptrace::default_cpus();
    let cpus = match args.cpu.as_deref() {
        None => usable.clone(),
        Some("none") => Vec::new(),
        Some(list) => parse_cpus(list).map_err(|why| {
            anyhow::anyhow!(
                "--cpu {list}: expected CPU numbers and ranges separated by commas \
                 (`0,2`, `0-3`), or `none`: {why}"
            )
        })?,
    };
    if let Some(cpu) = cpus.iter().find(|c| !usable.contains(c)) {
        let mut usable = usable.clone();
        usable.sort_unstable();
        let usable: Vec<String> = usable.iter().map(|c| c.to_string()).collect();
        bail!(
            "--cpu: CPU {cpu} is not one this process may run on (it may use {})",
            usable.join(",")
        );
    }
    let attaching = matches!(target, Target::Attach { .. });
    let backend = match args.backend {
        // Only ptrace holds a running process's calls while the state of
        // the paths they name is recorded.
        Backend::Auto if attaching && args.snapshot != SnapshotArg::Off => {
            errln!(
                "reanimator: recording with ptrace (attaching to running processes: only ptrace \
                 records the initial file state then; --snapshot off allows ebpf)"
            );
            Backend::Ptrace
        }
        Backend::Auto => match reanimator_ebpf::unavailable() {
            None => Backend::Ebpf,
            Some(why) => {
                errln!("reanimator: recording with ptrace ({why})");
                Backend::Ptrace
            }
        },
        Backend::Ebpf => {
            // Said first: a user without root otherwise met the seccomp
            // path gate's failure, whose advice (--snapshot off) did not
            // help, then libbpf's own lines.
            if let Some(why) = reanimator_ebpf::unavailable() {
                bail!("--backend ebpf: {why} (--backend ptrace needs no privileges)");
            }
            Backend::Ebpf
        }
        b => b,
    };
    // An option of the other back end is said to be ignored, not dropped
    // unsaid (`--backend auto` may pick either).
    // (option, the back end it is for, the one in use)
    let ignored = match backend {
        Backend::Ebpf => args.cpu.as_ref().map(|_| ("--cpu", "ptrace", "ebpf")),
        _ => args.ring_size.map(|_| ("--ring-size", "ebpf", "ptrace")),
    };
    if let Some((option, other, this)) = ignored {
        errln!(
            "reanimator: warning: {option} applies to the {other} back end only; ignored by {this}"
        );
    }
    if backend == Backend::Ebpf && args.snapshot != SnapshotArg::Off && attaching {
        bail!("--backend ebpf with -p cannot record the initial file state (the processes are already running); add --snapshot off or use --backend ptrace");
    }
    let (hostname, kernel) = TraceMeta::this_machine();
    let meta = TraceMeta {
        tool: format!("reanimator {}", env!("CARGO_PKG_VERSION")),
        clock: ClockAnchor::now(),
        arch: std::env::consts::ARCH.into(),
        hostname,
        kernel,
        recorder: match backend {
            Backend::Ebpf => "ebpf",
            _ => "ptrace",
        }
        .into(),
        command: args
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        options: [
            ("data".to_string(), data_text(args.data)),
            (
                "snapshot".to_string(),
                snapshot_text(args.snapshot).to_string(),
            ),
        ]
        .into_iter()
        .collect(),
        syscalls: reanimator_catalogue::all()
            .iter()
            .chain(reanimator_catalogue::pseudo_calls())
            .map(|s| format!("{} {s}", s.nr))
            .collect(),
        ..TraceMeta::default()
    };
    let opts = WriterOptions {
        overwrite: args.force,
        ..WriterOptions::default()
    };
    if let Target::Spawn { program, .. } = &target {
        let program = Path::new(std::ffi::OsStr::from_bytes(program.as_bytes()));
        if reanimator_trace::same_file(&output, program) {
            bail!(
                "{}: is the program being recorded; give the trace another name",
                output.display()
            );
        }
    }
    let mut writer = loop {
        match Writer::create(&output, &meta, opts.clone()) {
            Err(e) if matches!(e.kind(), reanimator_trace::ErrorKind::Exists) => {
                match names.as_mut() {
                    // Taken since it was chosen: the next one.
                    Some(names) => {
                        output = names.find(|p| !p.exists()).context("no free trace name")?
                    }
                    None => return Err(e).context("cannot create the trace"),
                }
            }
            r => break r.context("cannot create the trace")?,
        }
    };
    if let Target::Attach { pids } = &target {
        // Ctrl-C from here on detaches and finishes the trace.
        reanimator_record::watch_stop_signals();
        let list: Vec<String> = pids.iter().map(i32::to_string).collect();
        errln!(
            "reanimator: attaching to {} (and future children); Ctrl-C detaches and finishes {}",
            list.join(", "),
            output.display()
        );
    }
    let snapshot = match args.snapshot {
        SnapshotArg::Contents => SnapshotPolicy::Contents,
        SnapshotArg::Meta => SnapshotPolicy::Metadata,
        SnapshotArg::Off => SnapshotPolicy::Off,
    };
    let result = match backend {
        Backend::Ebpf => {
            let mut opts = reanimator_ebpf::Options::default();
            if let Some(bytes) = args.ring_size {
                opts.ring_bytes = bytes;
            }
            reanimator_ebpf::record(&target, args.data, snapshot, &opts, &mut writer)
        }
        _ => reanimator_ptrace::record(&target, args.data, &cpus, snapshot, &mut writer),
    };
    let unseen_io = crate::unseen_io_warning(
        reanimator_catalogue::all()
            .iter()
            .map(|row| (row.name, writer.calls_of(row.nr))),
    );
    let made = writer.path().map(Path::to_path_buf);
    let notes = match &result {
        Ok(summary) => notes(summary),
        Err(reanimator_record::Error::Lost(_, summary)) => notes(summary),
        Err(_) => Vec::new(),
    };
    if !notes.is_empty() {
        writer.add_to_end(RECORDER_NOTES, serde_json::json!(notes));
    }
    // Finish the trace whatever happened: what was recorded is kept.
    let (_, end) = writer.finish().with_context(|| {
        // A trace that cannot be written (a full disk) stops the
        // recording, and what it followed ends with it (nothing may run
        // unrecorded): said, since the command's own output shows only
        // that it stopped.
        let stopped = if result.is_err() {
            " (the recording stopped there and ended the command with it)"
        } else {
            ""
        };
        format!("{}: cannot finish the trace{stopped}", output.display())
    })?;
    // Messages kept out of the command's output files while it ran.
    for message in reanimator_record::held_messages() {
        errln!("{message}");
    }
    if result.is_err() && end.records == 0 {
        // Nothing was recorded (the attach or start failed): leave no
        // file, if the recording made one (not `/dev/null`).
        if let Some(made) = made {
            let _ = std::fs::remove_file(made);
        }
    }
    let line = |summary: &RecordSummary| {
        summary_line(
            &output,
            summary,
            end.syscalls,
            end.captured_bytes,
            end.lost_events,
        )
    };
    if let Err(reanimator_record::Error::Lost(_, summary)) = &result {
        // The rest of the recording is in the trace too: said, then the loss.
        errln!("{}", line(summary));
    }
    let summary = result?;
    errln!("{}", line(&summary));
    if let Some(warning) = unseen_io {
        errln!("{warning}");
    }
    Ok(match summary.root_status {
        Some(ExitStatus::Exited(code)) => ExitCode::from(code as u8),
        Some(ExitStatus::Killed { signal, .. }) => ExitCode::from(128u8.wrapping_add(signal as u8)),
        _ => ExitCode::SUCCESS,
    })
}

/// The end record's field holding the recorder's notes (see [`notes`]).
pub const RECORDER_NOTES: &str = "recorder_notes";

fn summary_line(output: &Path, s: &RecordSummary, syscalls: u64, bytes: u64, lost: u64) -> String {
    let mut line = format!(
        "reanimator: {}: {syscalls} syscalls, {} captured, {}, {}, {:.2} s; lost: {lost}",
        output.display(),
        human_bytes(bytes),
        crate::counted(s.processes, "process", "processes"),
        crate::counted(s.threads, "thread", "threads"),
        s.duration.as_secs_f64(),
    );
    line.push_str(&format!("; recorder CPU {:.2} s", own_cpu_seconds()));
    if s.snapshot_paths > 0 {
        line.push_str(&format!(
            "; initial state: {} paths, {}",
            s.snapshot_paths,
            human_bytes(s.snapshot_bytes)
        ));
    }
    for note in notes(s) {
        line.push_str("; ");
        line.push_str(&note);
    }
    line
}

/// What the recording could not capture or had to do to the program, one
/// phrase per nonzero count ("1 capture unreadable"): said when recording
/// ends and kept in the trace's end record for `info`.
fn notes(s: &RecordSummary) -> Vec<String> {
    let mut notes = Vec::new();
    // (count, noun for one, noun for several, what happened to them)
    for (n, one, many, what) in [
        (
            s.unfinished,
            "call",
            "calls",
            "unfinished (the task ended or was detached inside them)",
        ),
        (s.captures.truncated, "capture", "captures", "truncated"),
        (
            s.mappings_at_exit,
            "shared writable mapping",
            "shared writable mappings",
            "open when their process ended with no capture of them (its last thread called exit; stores after their last msync not captured)",
        ),
        (
            s.mappings_unlisted,
            "exit or exec",
            "exits or execs",
            "whose mappings could not be listed (address space busy): stores through shared mappings they held may be missing",
        ),
        (s.captures.unreadable, "capture", "captures", "unreadable"),
        (
            s.captures.refused,
            "read",
            "reads",
            "of memory refused by the kernel (a process made itself non-dumpable, as ssh-agent and gpg-agent do: record as root to read it)",
        ),
        (
            s.snapshot_unreadable,
            "pre-existing file",
            "pre-existing files",
            "unreadable for the initial state (replay cannot recreate their contents)",
        ),
        (
            s.snapshot_unnamed,
            "path",
            "paths",
            "named in a directory the recorder could not name (its process had gone): not in the initial or final state",
        ),
        (
            s.entered_before_attach,
            "call",
            "calls",
            "in progress at attach not recorded",
        ),
        (
            s.refused_unseen,
            "call",
            "calls",
            "refused by the program's seccomp filter not recorded (seen only returning; --backend ptrace records them)",
        ),
        (
            s.backpressure_stops,
            "back-pressure stop",
            "back-pressure stops",
            "(the program waited for the recorder)",
        ),
        (
            s.reflex_stops,
            "wrapper",
            "wrappers",
            "stopped with a child stopped for back-pressure, continued with it",
        ),
        (
            s.masked_exits,
            "child exit",
            "child exits",
            "not told to the parent (a back-pressure stop's SIGCHLD was pending)",
        ),
        (
            s.spills,
            "buffer",
            "buffers",
            "larger than the ring read from the stopped thread",
        ),
        (
            s.killed_at_stop,
            "thread",
            "threads",
            "still running killed when SIGTERM or SIGHUP ended the recording",
        ),
    ] {
        if n > 0 {
            let noun = if n == 1 { one } else { many };
            notes.push(format!("{n} {noun} {what}"));
        }
    }
    notes
}

/// User plus system CPU time of the recorder itself (not the command).
fn own_cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the zeroed struct.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

fn human_bytes(b: u64) -> String {
    match b {
        0..1_000 => format!("{b} B"),
        1_000..1_000_000 => format!("{:.1} kB", b as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        _ => format!("{:.2} GB", b as f64 / 1e9),
    }
}

/// How `--snapshot` is written in the trace's options (replay warns about
/// `off`).
fn snapshot_text(s: SnapshotArg) -> &'static str {
    match s {
        SnapshotArg::Contents => "contents",
        SnapshotArg::Meta => "meta",
        SnapshotArg::Off => "off",
    }
}

/// `--snapshot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SnapshotArg {
    /// Metadata and contents.
    Contents,
    /// Metadata only.
    Meta,
    /// Nothing.
    Off,
}

/// A `--cpu` list as `taskset -c` takes it (`0,2`, `0-3`, `0-1,4`), each
/// CPU once, in the order given.
fn parse_cpus(list: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in list.split(',') {
        let number = |n: &str| {
            n.trim()
                .parse::<usize>()
                .map_err(|e| format!("{:?}: {e}", n.trim()))
        };
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => (number(part)?, number(part)?),
        };
        if first > last {
            return Err(format!("{part:?}: a range runs from low to high"));
        }
        for cpu in first..=last.min(first + libc::CPU_SETSIZE as usize) {
            if !cpus.contains(&cpu) {
                cpus.push(cpu);
            }
        }
    }
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_take_ranges_like_taskset() {
        assert_eq!(parse_cpus("0"), Ok(vec![0]));
        assert_eq!(parse_cpus("1,0"), Ok(vec![1, 0]));
        assert_eq!(parse_cpus("0-3"), Ok(vec![0, 1, 2, 3]));
        assert_eq!(parse_cpus("0-1, 4"), Ok(vec![0, 1, 4]));
        assert_eq!(parse_cpus("0,0,0-1"), Ok(vec![0, 1]));
        for bad in ["", "abc", "1-0", "-1", "0-", "0,,1"] {
            assert!(parse_cpus(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("4k"), Ok(4096));
        assert_eq!(parse_bytes("32M"), Ok(32 << 20));
        assert_eq!(parse_bytes("32MiB"), Ok(32 << 20));
        assert_eq!(parse_bytes("1G"), Ok(1 << 30));
        for bad in ["", "M", "4x", "-1", "1.5M", "99999999999999999999G"] {
            assert!(parse_bytes(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_ring_size("2G"), Ok(1 << 31));
        assert!(parse_ring_size("3G").is_err());
        assert_eq!(parse_data("max=4k"), Ok(DataPolicy::Max(4096)));
    }

    /// An exit or exec whose mappings the eBPF side could not list is not
    /// a shared mapping known to be lost: before, it was counted as one,
    /// and the line said so for processes that had none.
    #[test]
    fn unlisted_mappings_are_not_called_lost_mappings() {
        let s = RecordSummary {
            mappings_unlisted: 2,
            ..RecordSummary::default()
        };
        let line = summary_line(Path::new("t.rtr"), &s, 10, 0, 0);
        assert!(
            line.contains("; 2 exits or execs whose mappings could not be listed (address space busy): stores through shared mappings they held may be missing"),
            "{line}"
        );
        assert!(!line.contains("shared writable mapping"), "{line}");
        let s = RecordSummary {
            mappings_at_exit: 1,
            ..RecordSummary::default()
        };
        let line = summary_line(Path::new("t.rtr"), &s, 10, 0, 0);
        assert!(
            line.contains("; 1 shared writable mapping open when"),
            "{line}"
        );
        assert!(!line.contains("could not be listed"), "{line}");
    }
}
