//! `reanimator replay`: replays a trace into a root directory and checks
//! every result and the final files against the recording.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use reanimator_fsstate::Root;
use reanimator_replay::{Options, OrderPolicy, Progress as Live, Timing, Verify};
use reanimator_trace::{ReadOptions, Reader};

use crate::progress::Progress;

/// Replay a trace: the same calls with the same data, confined to a root
/// directory, every result verified.
///
/// Before replaying, the files the program found when it was recorded are
/// recreated under ROOT from the trace (an empty or missing ROOT is
/// expected). Every path the trace names resolves inside ROOT, whatever
/// `..`, absolute paths or symbolic links say. No program is executed and
/// no network connection made: process calls are emulated, socket calls
/// simulated from the trace. At the end, a table per call, and the final
/// state of every path the trace touched compared with the recording.
/// Exits 1 if anything differed.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  reanimator replay app.rtr --root /mnt/test/r1
  reanimator replay app.rtr --root /tmp/r --verify ret --order strict
  reanimator replay app.rtr --root /tmp/r --timing original
  reanimator replay app.rtr --root /tmp/r --timings r.tim && reanimator fidelity app.rtr r.tim")]
pub struct ReplayArgs {
    /// The trace to replay.
    pub trace: PathBuf,
    /// Directory every path resolves inside (created if missing; must be
    /// empty unless --replace).
    #[arg(long, value_name = "DIR", required_unless_present = "in_place")]
    pub root: Option<PathBuf>,
    /// Replay onto the real file system, at the recorded paths. Nothing is
    /// prepared: the files must already be as they were when recording.
    #[arg(long, conflicts_with = "root")]
    pub in_place: bool,
    /// Prepare into a non-empty ROOT: recorded initial states overwrite
    /// what is there, and paths the recording found absent are removed (a
    /// directory in the way of a file or link with everything in it;
    /// replay says how many). Paths the trace never names stay, and a
    /// directory the program lists then shows them (a mismatch). Never
    /// `/`.
    #[arg(long, conflicts_with = "in_place")]
    pub replace: bool,
    /// What to compare: nothing, return values and errnos, or also every
    /// byte the kernel returns (read data, stat fields, directory entries).
    #[arg(long, value_enum, default_value_t = VerifyArg::Full)]
    pub verify: VerifyArg,
    /// What to do at a mismatch: report it and go on, or stop.
    #[arg(long, value_enum, default_value_t = OnMismatch::Warn)]
    pub on_mismatch: OnMismatch,
    /// Cross-thread order: calls that did not overlap in time keep their
    /// order (overlap); the same, except that positional reads and writes
    /// to disjoint byte ranges may pass each other (commute); or all calls
    /// follow the recorded entry order (strict).
    #[arg(long, value_enum, default_value_t = OrderArg::Overlap)]
    pub order: OrderArg,
    /// When calls are issued: as fast as possible (afap), at their recorded
    /// offsets (original), or sped up X times (scale=X).
    #[arg(long, default_value = "afap", value_parser = parse_timing)]
    pub timing: Timing,
    /// How many mismatches to print in full (a number, or `all`); the
    /// rest are counted.
    #[arg(long, value_name = "N", default_value = "50", value_parser = parse_count)]
    pub show_mismatches: u64,
    /// Also write the replay's own times of every call it executed, as a
    /// trace (the original's calls, with the times replay issued and
    /// completed them), to measure the replay against the original with
    /// `reanimator fidelity TRACE FILE` (or `stats` it as any trace).
    #[arg(long, value_name = "FILE")]
    pub timings: Option<PathBuf>,
    /// Overwrite the --timings file if it exists.
    #[arg(long, requires = "timings")]
    pub force: bool,
}

/// `--verify`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum VerifyArg {
    /// Replay only.
    None,
    /// Return values and errnos.
    Ret,
    /// Return values and returned data.
    Full,
}

/// `--on-mismatch`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OnMismatch {
    /// Report and continue.
    Warn,
    /// Stop at the first mismatch.
    Abort,
}

/// `--order`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OrderArg {
    /// Keep the order of calls that did not overlap in time.
    Overlap,
    /// Overlap, but pread64/pwrite64 calls that commute may pass each other.
    Commute,
    /// Recorded global entry order.
    Strict,
}

fn parse_timing(s: &str) -> Result<Timing, String> {
    match s {
        "afap" => Ok(Timing::Afap),
        "original" => Ok(Timing::Scaled(1.0)),
        _ => match s.strip_prefix("scale=").map(str::parse::<f64>) {
            // Below 1e-6, a second of the recording would last 11 days.
            Some(Ok(x)) if (1e-6..=1e9).contains(&x) => Ok(Timing::Scaled(x)),
            _ => Err(format!(
                "`{s}`: expected afap, original or scale=X with 1e-6 <= X <= 1e9 (e.g. \
                 scale=2: twice as fast)"
            )),
        },
    }
}

/// `--show-mismatches`: a count, or `all`.
fn parse_count(s: &str) -> Result<u64, String> {
    match s {
        "all" => Ok(u64::MAX),
        _ => s
            .parse()
            .map_err(|_| format!("`{s}`: expected a number or `all`")),
    }
}

/// Refuses `/` as ROOT, by any name: preparing there would rewrite (with
/// `--replace`, remove) the machine's own files.
fn refuse_slash(dir: &Path) -> Result<()> {
    // By identity, not name: `/var/..`, a link to it, a bind mount of it.
    if reanimator_trace::same_file(dir, Path::new("/")) {
        bail!(
            "{}: is the machine's root directory; replay prepares the recorded files in a \
             directory of their own (use --in-place to issue the calls on the real paths, \
             with nothing prepared or removed)",
            dir.display()
        );
    }
    Ok(())
}

/// Refuses, for `--replace`, a ROOT that holds the trace or the
/// `--timings` file: what it rewrites must not hold the files replay reads
/// and writes (a directory in the way went, trace and all).
fn refuse_root_holding_inputs(dir: &Path, trace: &Path, timings: Option<&Path>) -> Result<()> {
    let Ok(dir_real) = dir.canonicalize() else {
        return Ok(());
    };
    let inside = |p: &Path| p.canonicalize().is_ok_and(|p| p.starts_with(&dir_real));
    // The timings file may not exist yet: its directory, then.
    let timings_dir = timings
        .and_then(|t| std::path::absolute(t).ok())
        .and_then(|t| t.parent().map(Path::to_path_buf));
    if inside(trace) || timings_dir.is_some_and(|d| inside(&d)) {
        bail!(
            "{}: holds the trace or the --timings file, and --replace may remove what is in \
             the way of the recorded files: keep them outside the root",
            dir.display()
        );
    }
    Ok(())
}

/// Creates ROOT if needed, refuses a non-empty one unless told, and locks
/// it for this replay (the lock is the returned file's).
fn open_root(dir: &Path, replace: bool) -> Result<(Root, std::fs::File)> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() && !replace {
                bail!(
                    "{}: not empty; replay prepares the recorded files in an empty directory \
                     (use --replace to overwrite what is there)",
                    dir.display()
                );
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Ok(target) = std::fs::read_link(dir) {
                bail!(
                    "{}: a symbolic link to {}, which does not exist",
                    dir.display(),
                    target.display()
                );
            }
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?
        }
        Err(e) => return Err(e).with_context(|| format!("{}", dir.display())),
    }
    // One replay per root: a second one (`--replace`) made the first
    // report the other's writes as its own mismatches. The lock is held
    // as long as the returned descriptor, kept for the whole replay.
    use std::os::fd::AsRawFd;
    let lock = std::fs::File::open(dir).with_context(|| format!("{}", dir.display()))?;
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        bail!("{}: another replay is using it", dir.display());
    }
    let root = Root::open(dir).with_context(|| format!("{}", dir.display()))?;
    Ok((root, lock))
}

/// Refuses a `--timings` file that could not be written, before the root
/// is touched: the replay writes it only after preparing, and a refusal
/// then left a prepared root that a second try found not empty.
fn check_timings(path: &Path, trace: &Path, force: bool) -> Result<()> {
    let name = path.display();
    if reanimator_trace::same_file(path, trace) {
        bail!("--timings {name}: is the trace being replayed");
    }
    let exists = match std::fs::symlink_metadata(path) {
        Ok(md) if md.is_dir() => bail!("--timings {name}: is a directory"),
        Ok(_) if !force => bail!("--timings {name}: already exists (use --force to overwrite)"),
        Ok(_) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(e).with_context(|| format!("--timings {name}")),
    };
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("--timings {name}: cannot be written"))?;
    if !exists {
        // Made only to try: the replay makes it again when it starts.
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Runs `reanimator replay`.
pub fn run(a: &ReplayArgs) -> Result<ExitCode> {
    let meta = Reader::open(&a.trace, ReadOptions::default())?
        .meta()
        .clone();
    let recorded_state = meta.options.get("snapshot").cloned();
    let selection = meta.extra.contains_key("selected_from");
    if recorded_state.as_deref() == Some("off") && !a.in_place {
        errln!(
            "reanimator: warning: {} was recorded with --snapshot off and holds no initial \
             file state: files that existed before recording must already be in the root \
             (or replay --in-place)",
            a.trace.display()
        );
    }
    if let Some(data) = meta.options.get("data").filter(|d| *d != "all") {
        errln!(
            "reanimator: warning: {} was recorded with --data {data}: the bytes it did not \
             capture cannot be written again (files written with them will differ) nor \
             compared",
            a.trace.display()
        );
    }
    if let Some(t) = &a.timings {
        check_timings(t, &a.trace, a.force)?;
    }
    if let Some(dir) = &a.root {
        refuse_slash(dir)?;
    }
    if let (Some(dir), true) = (&a.root, a.replace) {
        refuse_root_holding_inputs(dir, &a.trace, a.timings.as_deref())?;
    }
    let (root, _lock) = match &a.root {
        Some(dir) => {
            let (root, lock) = open_root(dir, a.replace)?;
            (root, Some(lock))
        }
        None => (Root::host().context("opening /")?, None),
    };
    let opts = Options {
        verify: match a.verify {
            VerifyArg::None => Verify::None,
            VerifyArg::Ret => Verify::Ret,
            VerifyArg::Full => Verify::Full,
        },
        abort_on_mismatch: matches!(a.on_mismatch, OnMismatch::Abort),
        order: match a.order {
            OrderArg::Overlap => OrderPolicy::Overlap,
            OrderArg::Commute => OrderPolicy::Commute,
            OrderArg::Strict => OrderPolicy::Strict,
        },
        timing: a.timing,
        in_place: a.in_place,
        replace: a.replace,
        timings: a.timings.clone(),
        timings_overwrite: a.force,
    };
    let live = std::sync::Arc::new(Live::default());
    // Ctrl-C stops the replay and still prints what it did; a second one
    // quits at once. The signal's number makes the exit status.
    let interrupted = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(0));
    {
        let (live, interrupted) = (live.clone(), interrupted.clone());
        crate::interrupt::on_signals(move |signal| {
            if interrupted.swap(signal, Ordering::Relaxed) != 0 {
                std::process::exit(128 + signal);
            }
            errln!("\nreanimator: interrupted; stopping the replay (again to quit at once)");
            live.stop.store(true, Ordering::Relaxed);
        });
    }
    let live = &*live;
    let bar = Progress::bytes("preparing");
    let shown = AtomicU64::new(0);
    let on_mismatch = |line: String| {
        if shown.fetch_add(1, Ordering::Relaxed) < a.show_mismatches {
            bar.println(&format!("reanimator: {line}"));
        }
    };
    // Dropped when replay ends: the progress thread wakes at once instead
    // of finishing its 100 ms sleep (which every replay used to wait out).
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let result = std::thread::scope(|s| {
        let (live, bar) = (&live, &bar);
        s.spawn(move || loop {
            let phase = live.phase.load(Ordering::Relaxed);
            bar.update(
                live.read_bytes.load(Ordering::Relaxed),
                live.total_bytes.load(Ordering::Relaxed),
            );
            if phase == 1 {
                bar.message(format!(
                    "replaying: {} calls, {} mismatches",
                    live.calls.load(Ordering::Relaxed),
                    live.mismatches.load(Ordering::Relaxed)
                ));
            }
            match stopped.recv_timeout(Duration::from_millis(100)) {
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                _ => break,
            }
        });
        let r = reanimator_replay::replay(&a.trace, &root, &opts, live, &on_mismatch);
        drop(stop);
        r
    });
    bar.finish();
    let signal = interrupted.load(Ordering::Relaxed);
    if let Err(reanimator_replay::Error::Stopped) = result {
        errln!("reanimator: interrupted while preparing; the root holds part of the initial state");
        return Ok(ExitCode::from((128 + signal) as u8));
    }
    let report = result
        .map_err(|e| {
            // Failing while preparing leaves part of the initial state in
            // ROOT, which the next try would find not empty.
            match (&a.root, live.phase.load(Ordering::Relaxed)) {
                (Some(dir), 0) => anyhow::Error::new(e).context(format!(
                    "preparing {} (it now holds part of the recorded initial state: remove \
                     it, or replay again with --replace)",
                    dir.display()
                )),
                _ => anyhow::Error::new(e),
            }
        })
        .with_context(|| format!("replaying {}", a.trace.display()))?;
    let total = report.tally.total();
    if total.mismatched > a.show_mismatches {
        errln!(
            "reanimator: ... {} more mismatches not shown (--show-mismatches all prints them)",
            total.mismatched - a.show_mismatches
        );
    }
    err!("{}", report.table());
    for (why, n) in &report.tally.skipped {
        errln!("skipped {n}: {why}");
    }
    if report.tally.requeried > 0 {
        errln!(
            "reanimator: {} calls that only look (stat, lseek, pread, a read of a regular file) matched when issued again after the calls that ended before or overlapped them (they raced another thread's call in the recording)",
            report.tally.requeried
        );
    }
    for note in &report.prepare_notes {
        errln!("prepare: {note}");
    }
    if !report.tally.not_compared.is_empty() {
        let total: u64 = report.tally.not_compared.values().sum();
        let list: Vec<String> = report
            .tally
            .not_compared
            .iter()
            .map(|(status, n)| format!("{status} {n}"))
            .collect();
        errln!(
            "reanimator: {total} returned buffers were not compared: the trace does not hold \
             their bytes ({})",
            list.join(", ")
        );
    }
    if report.tally.unheld_moves.0 > 0 {
        let (calls, bytes) = report.tally.unheld_moves;
        errln!(
            "reanimator: {calls} calls (splice, sendfile) moved {bytes} bytes inside the kernel \
             from a socket or an inherited descriptor, which replay simulates; no buffer of the \
             program's held those bytes, so the trace does not, and the files or pipes they \
             reached miss them"
        );
    }
    if report.trace_losses > 0 {
        errln!(
            "reanimator: warning: the trace records lost events (at least {}); replay cannot \
             reproduce them",
            report.trace_losses
        );
    }
    if !report.uring_not_issued.is_empty() {
        let list: Vec<String> = report
            .uring_not_issued
            .iter()
            .map(|(op, n)| format!("{op} {n}"))
            .collect();
        errln!(
            "reanimator: io_uring requests not issued, their recorded results stand: {} (docs/REPLAY.md)",
            list.join(", ")
        );
    }
    if report.uring_unverified > 0 {
        errln!(
            "reanimator: {} io_uring completions belong to requests replay never submitted (their submissions were not captured), and were not verified (docs/REPLAY.md)",
            report.uring_unverified
        );
    }
    if report.reads_of_mapped_stores.0 > 0 {
        errln!(
            "reanimator: {} reads found bytes stored through shared mappings before the trace \
             captured the stores; {} bytes were written into the files from what they read \
             (docs/REPLAY.md)",
            report.reads_of_mapped_stores.0,
            report.reads_of_mapped_stores.1
        );
    }
    let counts = report.tally.calls.iter();
    if let Some(warning) = crate::unseen_io_warning(
        counts.map(|(name, s)| (*name, s.executed + s.simulated + s.skipped)),
    ) {
        errln!("{warning}");
    }
    if report.manifest_paths == 0 && report.prepared_paths > 0 && !report.aborted {
        // Initial states but no final ones: `select` left the manifest out
        // (a subset of the calls does not produce it), or the recorder
        // never wrote it (it was killed; `recover` salvaged what it had).
        let why = if selection {
            "it is a selection, which keeps the final state only when no record was filtered \
             out; calls that need what a process or call left out did show as mismatches"
        } else {
            "its recording did not finish"
        };
        errln!(
            "reanimator: warning: the trace holds no final state ({why}), so the files replay \
             left were not checked"
        );
    }
    for d in &report.manifest_diffs {
        errln!("reanimator: final state differs: {d}");
    }
    if let (Some(n), Some(path)) = (report.timed_calls, &a.timings) {
        errln!(
            "reanimator: {}: the times of {n} executed calls (compare: reanimator fidelity {} {})",
            path.display(),
            a.trace.display(),
            path.display()
        );
    }
    let calls = total.executed + total.simulated;
    let secs = report.replay_time.as_secs_f64();
    errln!(
        "reanimator: replayed {calls} calls in {secs:.3} s ({:.0} calls/s) with {}; prepared {} paths ({} bytes) in {:.3} s; {} mismatches{}; final state: {} paths checked, {} differ{}",
        calls as f64 / secs.max(1e-9),
        crate::counted(report.threads as u64, "thread", "threads"),
        report.prepared_paths,
        report.prepared_bytes,
        report.prepare_time.as_secs_f64(),
        total.mismatched,
        if matches!(a.verify, VerifyArg::None) {
            " (results not compared: --verify none)"
        } else {
            ""
        },
        report.manifest_paths,
        report.manifest_diffs.len(),
        match (signal, report.aborted) {
            (0, true) => "; stopped at the first mismatch",
            (_, true) => "; interrupted (the final state was not checked)",
            _ => "",
        },
    );
    Ok(if signal != 0 {
        ExitCode::from((128 + signal) as u8)
    } else if report.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_policies() {
        assert!(matches!(parse_timing("afap"), Ok(Timing::Afap)));
        assert!(matches!(parse_timing("original"), Ok(Timing::Scaled(x)) if x == 1.0));
        assert!(matches!(parse_timing("scale=2.5"), Ok(Timing::Scaled(x)) if x == 2.5));
        // A scale that would make a second last days is refused.
        for bad in [
            "scale=0",
            "scale=-1",
            "scale=nan",
            "scale=inf",
            "scale=1e-300",
            "fast",
        ] {
            assert!(parse_timing(bad).is_err(), "{bad}");
        }
    }
}
