//! The `reanimator` command: parses the command line and hands each
//! subcommand to its module. Library crates do the work; this crate only
//! glues them to files, terminals and exit codes.

/// `println!` that returns its error instead of panicking: a report
/// printed into a closed pipe (`| head`) or a full disk ends the command
/// with an error (a closed pipe quietly), never a panic.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        anyhow::Context::context(writeln!(std::io::stdout(), $($arg)*), crate::STDOUT_FAILED)?
    }};
}

/// `eprintln!` that never panics: a diagnostic that cannot be written
/// (standard error closed, `2>/dev/full`) is dropped, as strace and perf
/// drop theirs, and the command's exit status stays its own. A panic here
/// once killed a replay thread mid-run.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` that never panics (see [`errln!`]).
macro_rules! err {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

/// The context of every failure to write a report to standard output.
const STDOUT_FAILED: &str = "cannot write to standard output";

/// Writes a report to standard output through a buffer, flushed at the
/// end; a failure is said as [`STDOUT_FAILED`] (a closed pipe, which
/// `main` recognises through it, ends the command quietly).
fn to_stdout(
    write: impl FnOnce(&mut std::io::BufWriter<std::io::StdoutLock<'static>>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write(&mut out)
        .and_then(|()| Ok(out.flush()?))
        .context(STDOUT_FAILED)
}

mod catalogue_cmd;
mod dump;
mod export_cmd;
mod fidelity_cmd;
mod fidelity_svg;
mod info_cmd;
mod interrupt;
mod progress;
mod record_cmd;
mod recover_cmd;
mod replay_cmd;
mod select_cmd;
mod stats_cmd;
mod stats_svg;
mod svg;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// High-fidelity system-call tracing and replaying for Linux.
///
/// A trace holds every system call of a program with every byte of data it
/// passed to the kernel. Make one with `record`; replay it, verified, with
/// `replay`; describe it with `info`; inspect it with `dump`; summarise it
/// with `stats`; cut a subset with `select`; hand it to DuckDB, pandas or
/// Spark with `export`; compare replays with their original with
/// `fidelity`; salvage one whose recorder was killed with `recover`; see
/// what reanimator knows about each call with `catalogue`.
#[derive(Parser, Debug)]
#[command(name = "reanimator", version, about, long_about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Record a command (or running processes) into a trace: every system
    /// call of every process and thread, with its data.
    Record(record_cmd::RecordArgs),
    /// Replay a trace into a root directory, verifying every result and
    /// the final files.
    Replay(replay_cmd::ReplayArgs),
    /// Print a trace, one line per record (strace-like), or as JSON lines.
    Dump(dump::DumpArgs),
    /// Describe a trace: the command, recorder, machine, time and options
    /// it was recorded with, what it holds, what was lost, whether it is
    /// complete.
    Info(info_cmd::InfoArgs),
    /// Per call, process, thread or path: counts, errors, bytes, latency
    /// quantiles and transfer-size histograms.
    Stats(stats_cmd::StatsArgs),
    /// Write a new trace holding only some processes, calls, paths or a
    /// time window.
    Select(select_cmd::SelectArgs),
    /// Write a trace as Parquet or CSV tables (events, data, processes).
    Export(export_cmd::ExportArgs),
    /// Compare replays with their original: per-call response-time bias,
    /// precision and uncertainty (metrology), concurrency and issue-time
    /// error.
    Fidelity(fidelity_cmd::FidelityArgs),
    /// Salvage a trace whose recorder was killed or whose file is damaged.
    Recover(recover_cmd::RecoverArgs),
    /// List the system calls reanimator knows: number, parameters, replay
    /// class.
    Catalogue(catalogue_cmd::CatalogueArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Record(a) => record_cmd::run(&a),
        Command::Replay(a) => replay_cmd::run(&a),
        Command::Dump(a) => dump::run(&a),
        Command::Info(a) => info_cmd::run(&a),
        Command::Stats(a) => stats_cmd::run(&a),
        Command::Select(a) => select_cmd::run(&a),
        Command::Export(a) => export_cmd::run(&a),
        Command::Fidelity(a) => fidelity_cmd::run(&a),
        Command::Recover(a) => recover_cmd::run(&a),
        Command::Catalogue(a) => catalogue_cmd::run(&a),
    };
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = std::io::stdout().flush();
            errln!("reanimator: error: {}", message(&e));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes, like anyhow's `{:#}`, without a cause whose
/// text an outer message already quotes: trace errors name the I/O error
/// behind them and also give it as their source.
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// The warning for asynchronous I/O calls replay does not reproduce
/// ([`Syscall::io_unseen`](reanimator_catalogue::Syscall::io_unseen):
/// `io_cancel`) among `counts`
/// (call name, calls), or `None` when there are none: a user must hear so
/// rather than find a final-state difference unexplained.
fn unseen_io_warning<'a>(counts: impl IntoIterator<Item = (&'a str, u64)>) -> Option<String> {
    let mut total = 0;
    let mut list = Vec::new();
    for (name, n) in counts {
        let unseen = reanimator_catalogue::by_name(name).is_some_and(|r| r.io_unseen());
        if unseen && n > 0 {
            total += n;
            list.push(format!("{name} {n}"));
        }
    }
    (total > 0).then(|| {
        format!(
            "reanimator: warning: {total} asynchronous I/O calls ({}) are not reproduced by \
             replay: a cancelled request still runs (docs/REPLAY.md)",
            list.join(", ")
        )
    })
}

/// Warns that a filter kept no system call of `trace` (`what` says so):
/// a window past the end, a process or path that is not there is rarely
/// what was meant.
pub(crate) fn warn_no_call_kept(what: &str, trace: &std::path::Path) {
    errln!(
        "reanimator: warning: {what} (`reanimator stats {}` shows the calls, processes and the \
         time span there are)",
        trace.display()
    );
}

/// "1 process", "2 processes": counts in the lines people read. Lines
/// that scripts parse (replay's "N mismatches; final state: ...") keep
/// their fixed wording.
pub(crate) fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `reanimator dump t | head` must end quietly (`dump --json` meets the
/// broken pipe inside a JSON error).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        let kind = match c.downcast_ref::<serde_json::Error>() {
            Some(json) => json.io_error_kind(),
            None => c.downcast_ref::<std::io::Error>().map(std::io::Error::kind),
        };
        kind == Some(std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_the_singular_only_for_one() {
        assert_eq!(counted(0, "process", "processes"), "0 processes");
        assert_eq!(counted(1, "process", "processes"), "1 process");
        assert_eq!(counted(2, "thread", "threads"), "2 threads");
    }

    #[test]
    fn asynchronous_io_is_warned_about_with_its_calls() {
        assert_eq!(
            unseen_io_warning([("read", 5), ("io_uring_enter", 0)]),
            None
        );
        // Linux AIO and io_uring are captured and replayed: no warning.
        assert_eq!(
            unseen_io_warning([("io_submit", 7), ("io_getevents", 7), ("io_uring_enter", 3)]),
            None
        );
        let w = unseen_io_warning([("io_submit", 7), ("io_uring_register", 3), ("io_cancel", 1)])
            .expect("a warning");
        assert!(w.contains("1 asynchronous I/O calls (io_cancel 1)"), "{w}");
    }
    use clap::CommandFactory;

    #[test]
    fn an_error_quoted_by_its_context_is_said_once() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let inner = anyhow::Error::new(io).context(format!(
            "x.trace: {}",
            std::io::Error::from(std::io::ErrorKind::NotFound)
        ));
        let e = inner.context("cannot create the trace");
        assert_eq!(
            message(&e),
            "cannot create the trace: x.trace: entity not found"
        );
    }

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
