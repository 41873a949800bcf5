//! `reanimator select`: a new trace holding the records a filter keeps.
//! Its filter options are the ones `dump`, `stats` and `export` take too,
//! so a selection holds exactly what `dump` shows with the same options.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use reanimator_analysis::{select, Filter, Glob};

use crate::progress::Progress;

/// Which records to keep: the filter options shared by `dump`, `select`,
/// `stats` and `export`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Keep only these processes or threads (process or thread ids,
    /// comma-separated or repeated).
    #[arg(long = "pid", value_name = "PID", value_delimiter = ',')]
    pub pids: Vec<u32>,
    /// Keep only these system calls: names, numbers or groups such as
    /// `%file` (comma-separated or repeated).
    #[arg(long = "call", value_name = "NAME,...")]
    pub calls: Vec<String>,
    /// Keep only calls about a path matching GLOB: the path they name or
    /// the one their descriptor was opened with. `*` stays within a path
    /// component, `**` crosses them; a GLOB without `/` matches the file
    /// name (`*.sst`).
    #[arg(long, value_name = "GLOB")]
    pub path: Option<String>,
    /// Keep records from T after the trace start on (`1.5`, `1.5s`,
    /// `200ms`, `30us`, `2m`).
    #[arg(long, value_name = "T")]
    pub from: Option<String>,
    /// Keep records before T after the trace start.
    #[arg(long, value_name = "T")]
    pub to: Option<String>,
}

impl FilterArgs {
    /// The library filter these options describe.
    pub fn filter(&self) -> Result<Filter> {
        let time = |t: &Option<String>| t.as_deref().map(Filter::parse_time).transpose();
        if let (Some(from), Some(to)) = (time(&self.from)?, time(&self.to)?) {
            // An empty window is a slip of the fingers, not a question.
            anyhow::ensure!(
                from < to,
                "--from {} is not before --to {}: the window holds nothing",
                self.from.as_deref().unwrap_or_default(),
                self.to.as_deref().unwrap_or_default()
            );
        }
        Ok(Filter {
            pids: self.pids.clone(),
            calls: if self.calls.is_empty() {
                None
            } else {
                Some(Filter::parse_calls(&self.calls)?)
            },
            path: self.path.as_deref().map(Glob::new).transpose()?,
            from_ns: time(&self.from)?,
            to_ns: time(&self.to)?,
        })
    }
}

/// Arguments of `reanimator select`.
#[derive(clap::Args, Debug)]
pub struct SelectArgs {
    /// The trace to select from (never modified).
    pub trace: PathBuf,
    /// Where to write the selection.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Overwrite OUT if it exists.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// Writes the selection and says how much it kept.
pub fn run(args: &SelectArgs) -> Result<ExitCode> {
    let filter = args.filter.filter()?;
    crate::interrupt::clean_up_on_interrupt(
        &args.trace,
        vec![args.output.clone()],
        None,
        args.force,
    );
    let bar = Progress::bytes("selecting");
    let report = select(
        &args.trace,
        &args.output,
        filter,
        args.force,
        &mut |d, t| bar.update(d, t),
    );
    bar.finish();
    let report = report.with_context(|| {
        format!(
            "cannot select from {} into {}",
            args.trace.display(),
            args.output.display()
        )
    })?;
    outln!(
        "selected {} of {} records ({} system calls) -> {}",
        report.kept,
        report.read,
        report.syscalls,
        args.output.display()
    );
    if report.syscalls == 0 {
        crate::warn_no_call_kept("the filter kept no system call", &args.trace);
    }
    Ok(ExitCode::SUCCESS)
}
