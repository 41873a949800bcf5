//! `reanimator stats`: what a trace says at a glance — calls, errors,
//! bytes, latency quantiles and transfer-size histograms per call,
//! process, thread or path — as a table, or as JSON for programs, and
//! as a picture (`--svg`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use reanimator_analysis::{stats, GroupBy, GroupReport, Report, SizeReport};

use crate::progress::Progress;
use crate::select_cmd::FilterArgs;
use crate::stats_svg::write_svg;
use crate::svg;

/// How `stats` groups calls.
#[derive(clap::ValueEnum, Debug, Clone, Copy)]
pub enum By {
    /// Per system call.
    Call,
    /// Per process id.
    Process,
    /// Per thread id.
    Thread,
    /// Per path named by the call or behind its descriptor.
    Path,
}

/// Arguments of `reanimator stats`.
#[derive(clap::Args, Debug)]
pub struct StatsArgs {
    /// The trace file.
    pub trace: PathBuf,
    /// Group calls by system call, process, thread or path.
    #[arg(long, value_enum, default_value_t = By::Call)]
    pub by: By,
    /// Print one JSON object with every figure (all groups, full
    /// histograms).
    #[arg(long)]
    pub json: bool,
    /// Show the size histograms of at most this many groups (text only).
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub histograms: usize,
    /// Also draw the report as an SVG picture in FILE: calls, errors and
    /// bytes of the busiest groups, their latency quantiles on a log time
    /// axis, and their transfer-size histograms.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Overwrite the --svg FILE if it exists.
    #[arg(long, requires = "svg")]
    pub force: bool,
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// Reads the trace once and prints the report (and draws it).
pub fn run(args: &StatsArgs) -> Result<ExitCode> {
    if let Some(svg) = &args.svg {
        svg::refuse(svg, args.force, [args.trace.as_path()])?;
    }
    let by = match args.by {
        By::Call => GroupBy::Call,
        By::Process => GroupBy::Process,
        By::Thread => GroupBy::Thread,
        By::Path => GroupBy::Path,
    };
    let bar = Progress::bytes("reading");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let report = stats(
        &args.trace,
        args.filter.filter()?,
        by,
        threads,
        &mut |d, t| bar.update(d, t),
    );
    bar.finish();
    let report = report?;
    // The picture first: a closed pipe on stdout (`| head`) must not
    // lose it.
    if let Some(path) = &args.svg {
        svg::save(path, args.force, |out| write_svg(out, &args.trace, &report))?;
        errln!(
            "reanimator: {}: the statistics as a picture",
            path.display()
        );
    }
    crate::to_stdout(|out| {
        if args.json {
            serde_json::to_writer_pretty(&mut *out, &report)?;
            writeln!(out)?;
        } else {
            print_text(out, &args.trace, &report, args.histograms)?;
        }
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `1.2µs`, `35ms`, `2.50s`.
pub(crate) fn ns(v: Option<u64>) -> String {
    let Some(v) = v else { return "-".into() };
    let f = v as f64;
    match v {
        0..1_000 => format!("{v}ns"),
        1_000..1_000_000 => format!("{:.1}µs", f / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1}ms", f / 1e6),
        _ => format!("{:.2}s", f / 1e9),
    }
}

/// `138 B`, `16.0 KiB`, `1.2 GiB`.
pub(crate) fn bytes(v: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if v < 1024 {
        return format!("{v} B");
    }
    let mut f = v as f64 / 1024.0;
    let mut unit = 0;
    while f >= 1024.0 && unit < UNITS.len() - 1 {
        f /= 1024.0;
        unit += 1;
    }
    format!("{f:.1} {}", UNITS[unit])
}

/// An exact size, never rounded (2083 bytes are not "2.0 KiB", which
/// 2048 bytes also are): `439 B`, `2083 B`, and whole KiB or MiB for
/// the sizes programs choose as such (`16 KiB`).
pub(crate) fn exact_size(v: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if v < 1024 || !v.is_multiple_of(1024) {
        return format!("{v} B");
    }
    let (mut v, mut unit) = (v / 1024, 0);
    while v.is_multiple_of(1024) && unit < UNITS.len() - 1 {
        v /= 1024;
        unit += 1;
    }
    format!("{v} {}", UNITS[unit])
}

/// Shortens long keys (paths) from the left, keeping the file name.
pub(crate) fn clip(key: &str, width: usize) -> String {
    let n = key.chars().count();
    if n <= width {
        return key.to_string();
    }
    let tail: String = key.chars().skip(n - (width - 1)).collect();
    format!("…{tail}")
}

/// The first line of the report after the trace's name, text and
/// picture alike: calls, errors, unfinished calls, duration, processes
/// and threads.
pub(crate) fn calls_line(r: &Report) -> String {
    let t = &r.totals;
    // Where the span lies in the times `--from` and `--to` take.
    let span = if r.end_ns > 0 && r.start_ns >= r.origin_ns {
        format!(
            " (+{} to +{} from the recording's start)",
            ns(Some(r.start_ns - r.origin_ns)),
            ns(Some(r.end_ns.saturating_sub(r.origin_ns)))
        )
    } else {
        String::new()
    };
    format!(
        "{} ({} errors, {} unfinished) in {}{span}; {}, {}",
        crate::counted(t.calls, "call", "calls"),
        t.errors,
        t.unfinished,
        ns(Some(r.duration_ns)),
        crate::counted(r.processes, "process", "processes"),
        crate::counted(r.threads, "thread", "threads")
    )
}

/// The second line of the report, text and picture alike: bytes both
/// ways and the latency quantiles of `t` (the totals).
pub(crate) fn totals_line(t: &GroupReport) -> String {
    let l = &t.latency_ns;
    format!(
        "read {}, written {}; latency p50 {} p90 {} p99 {} p99.9 {} max {}",
        bytes(t.bytes_read),
        bytes(t.bytes_written),
        ns(l.p50),
        ns(l.p90),
        ns(l.p99),
        ns(l.p99_9),
        ns(l.max)
    )
}

/// What a group is, as the table's heading says: `call`, `process`,
/// `thread` or `path`.
pub(crate) fn heading(by: GroupBy) -> &'static str {
    match by {
        GroupBy::Call => "call",
        GroupBy::Process => "process",
        GroupBy::Thread => "thread",
        GroupBy::Path => "path",
    }
}

/// A group's name: its key, with the program a process or thread ran
/// (`1234 dash`).
pub(crate) fn label(g: &GroupReport) -> String {
    match &g.exe {
        Some(exe) => format!("{} {exe}", g.key),
        None => g.key.clone(),
    }
}

fn print_text(
    out: &mut impl Write,
    trace: &std::path::Path,
    r: &Report,
    histograms: usize,
) -> std::io::Result<()> {
    let t = &r.totals;
    writeln!(out, "{}: {}", trace.display(), calls_line(r))?;
    writeln!(out, "{}", totals_line(t))?;
    if r.lost_events > 0 {
        writeln!(
            out,
            "{} lost while recording: not in these counts (`reanimator info` says why)",
            crate::counted(r.lost_events, "event", "events")
        )?;
    }
    writeln!(out)?;
    let heading = heading(r.by);
    let width = r
        .groups
        .iter()
        .map(|g| label(g).chars().count())
        .max()
        .unwrap_or(0)
        .clamp(heading.len(), 48);
    writeln!(
        out,
        "{heading:<width$} {:>10} {:>8} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "calls", "errors", "read", "written", "p50", "p90", "p99", "p99.9", "max"
    )?;
    for g in &r.groups {
        let l = &g.latency_ns;
        writeln!(
            out,
            "{:<width$} {:>10} {:>8} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8}",
            clip(&label(g), width),
            g.calls,
            g.errors,
            bytes(g.bytes_read),
            bytes(g.bytes_written),
            ns(l.p50),
            ns(l.p90),
            ns(l.p99),
            ns(l.p99_9),
            ns(l.max)
        )?;
    }
    let with_sizes: Vec<&GroupReport> = r
        .groups
        .iter()
        .filter(|g| g.read_sizes.is_some() || g.write_sizes.is_some())
        .collect();
    if with_sizes.is_empty() || histograms == 0 {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "transfer sizes (bytes per successful read or write)")?;
    for g in with_sizes.iter().take(histograms) {
        for (dir, s) in [("reads", &g.read_sizes), ("writes", &g.write_sizes)] {
            if let Some(s) = s {
                print_sizes(out, &clip(&label(g), 48), dir, s)?;
            }
        }
    }
    if with_sizes.len() > histograms {
        writeln!(
            out,
            "({} with transfers: --histograms N, or --json)",
            crate::counted(
                (with_sizes.len() - histograms) as u64,
                "more group",
                "more groups"
            )
        )?;
    }
    Ok(())
}

fn print_sizes(out: &mut impl Write, key: &str, dir: &str, s: &SizeReport) -> std::io::Result<()> {
    let n = s.summary.count.max(1) as f64;
    // A listed count may overstate by `error`: show what is certain.
    let common: Vec<String> = s
        .top
        .iter()
        .map(|t| (t.size, t.count - t.error, t.error > 0))
        .filter(|&(_, sure, _)| sure as f64 / n >= 0.01)
        .take(4)
        .map(|(size, sure, approx)| {
            format!(
                "{} ×{}{sure} ({}{:.1}%)",
                exact_size(size),
                if approx { "≥" } else { "" },
                if approx { "≥" } else { "" },
                sure as f64 * 100.0 / n
            )
        })
        .collect();
    writeln!(
        out,
        "  {key}: {} {dir}, p50 {}, max {}{}",
        s.summary.count,
        bytes(s.summary.p50.unwrap_or(0)),
        bytes(s.summary.max.unwrap_or(0)),
        if common.is_empty() {
            String::new()
        } else {
            format!("; most common {}", common.join(", "))
        }
    )?;
    let peak = s
        .histogram
        .iter()
        .map(|b| b.count)
        .max()
        .unwrap_or(1)
        .max(1);
    for b in &s.histogram {
        let range = if b.from == b.to {
            bytes(b.from)
        } else {
            format!("{}–{}", bytes(b.from), bytes(b.to))
        };
        let bar = "█".repeat(((b.count * 40).div_ceil(peak)) as usize);
        writeln!(
            out,
            "    {range:>20} {bar:<40} {:5.1}% {}",
            b.count as f64 * 100.0 / n,
            b.count
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(ns(Some(850)), "850ns");
        assert_eq!(ns(Some(1_250)), "1.2µs");
        assert_eq!(ns(Some(2_500_000_000)), "2.50s");
        assert_eq!(bytes(138), "138 B");
        assert_eq!(bytes(16384), "16.0 KiB");
        assert_eq!(clip("/a/very/long/path/name", 10), "…path/name");
    }
}
