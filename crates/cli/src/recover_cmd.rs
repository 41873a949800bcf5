//! `reanimator recover`: salvages an unfinished or damaged trace into a new
//! one and says exactly what it kept and what it could not.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use reanimator_trace::{recover_with_progress, WriterOptions};

use crate::progress::Progress;

/// Arguments of `reanimator recover`.
#[derive(clap::Args, Debug)]
pub struct RecoverArgs {
    /// The damaged or unfinished trace (never modified).
    pub trace: PathBuf,
    /// Where to write the salvaged trace [default: TRACE with
    /// `.recovered.rtr` in place of its extension].
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Overwrite OUT if it exists.
    #[arg(long)]
    pub force: bool,
}

fn default_output(trace: &Path) -> PathBuf {
    let stem = trace
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trace".into());
    trace.with_file_name(format!("{stem}.recovered.rtr"))
}

/// Runs the salvage and prints its report.
pub fn run(args: &RecoverArgs) -> Result<ExitCode> {
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| default_output(&args.trace));
    if out == args.trace || reanimator_trace::same_file(&out, &args.trace) {
        bail!("{}: the output must differ from the input", out.display());
    }
    let opts = WriterOptions {
        overwrite: args.force,
        ..WriterOptions::default()
    };
    crate::interrupt::clean_up_on_interrupt(&args.trace, vec![out.clone()], None, args.force);
    let bar = Progress::bytes("recovering");
    let report = recover_with_progress(&args.trace, &out, opts, &mut |done, total| {
        bar.update(done, total)
    });
    bar.finish();
    let report = report.with_context(|| {
        format!(
            "cannot recover {} into {}",
            args.trace.display(),
            out.display()
        )
    })?;
    if report.syscalls == 0 && !report.had_end {
        // A recorder killed before its first flush (records reach the
        // file 0.1 s after it starts, then at least once a second) leaves
        // nothing: a failure, said, and no output that looks like a trace.
        if std::fs::metadata(&out).is_ok_and(|m| m.is_file()) {
            let _ = std::fs::remove_file(&out);
        }
        errln!(
            "reanimator: no system call could be salvaged from {} (no records frame is intact: \
             a recorder killed within a tenth of a second of starting writes none, or the file \
             was cut short); nothing written",
            args.trace.display()
        );
        return Ok(ExitCode::FAILURE);
    }
    outln!("recovered {} -> {}", args.trace.display(), out.display());
    outln!(
        "  kept: {} records ({} system calls) from {} intact frames",
        report.records,
        report.syscalls,
        report.frames_kept
    );
    if report.regions_skipped > 0 || report.buffers_lost > 0 || !report.damage.is_empty() {
        // A damaged frame header, or a file cut short, says nothing of
        // how many records it held.
        let records = match report.records_lost {
            0 if report.regions_skipped > 0 => "records lost: unknown".to_string(),
            n => format!("at least {n} records lost"),
        };
        outln!(
            "  damaged: {} region(s), {} bytes skipped, {records}, {} buffers lost",
            report.regions_skipped,
            report.bytes_skipped,
            report.buffers_lost
        );
    } else {
        outln!("  damaged: nothing");
    }
    if !report.had_meta {
        outln!("  the trace's header frame was lost: its metadata (command, clock) is missing");
    }
    if report.had_end {
        outln!("  the original was finished (it had an end record)");
    } else {
        outln!(
            "  the original had no end record: the recorder did not finish; a new one was written"
        );
    }
    for d in &report.damage {
        outln!("  - {d}");
    }
    Ok(ExitCode::SUCCESS)
}
