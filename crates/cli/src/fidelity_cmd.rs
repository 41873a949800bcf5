//! `reanimator fidelity`: how faithfully replays reproduced their
//! original, in the terms a measurement method is validated in (per-call
//! response-time bias, precision and combined uncertainty), with the
//! concurrency each run issued its calls at and how far from schedule
//! replay issued them — as tables, or as JSON for programs, and as a
//! picture (`--svg`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use reanimator_analysis::{
    fidelity, CallFidelity, Concurrency, FidelityReport, PrecisionFrom, Quantiles, ReplayReport,
};

use crate::fidelity_svg::write_svg;
use crate::progress::Progress;
use crate::svg;

/// Each REPLAY is a timings trace that `reanimator replay ORIGINAL
/// --timings FILE` wrote: the calls that replay executed, with its own
/// times. Calls are matched by sequence id. Every bias and uncertainty is
/// in percent of the original's mean response time (docs/ANALYSIS.md,
/// after Pereira et al., "File System Trace Replay Methods Through the
/// Lens of Metrology"). Replay at least twice for the precision between
/// replays.
#[derive(clap::Args, Debug)]
#[command(after_help = "Example:
  reanimator replay app.rtr --root /tmp/r1 --timings r1.rtr
  reanimator replay app.rtr --root /tmp/r2 --timings r2.rtr
  reanimator fidelity app.rtr r1.rtr r2.rtr
  reanimator fidelity app.rtr r1.rtr r2.rtr --svg fidelity.svg")]
pub struct FidelityArgs {
    /// The original trace (the recording that was replayed).
    pub original: PathBuf,
    /// Timings traces of replays of it, one per replay.
    #[arg(required = true, value_name = "REPLAY")]
    pub replays: Vec<PathBuf>,
    /// Print one JSON object with every figure (all calls, every replay).
    #[arg(long)]
    pub json: bool,
    /// Show at most this many calls, the most original time first (text
    /// only).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub calls: usize,
    /// Also draw the report as an SVG picture in FILE: response-time
    /// distributions of the four calls with the most original time,
    /// concurrency and issue-time error.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Overwrite the --svg FILE if it exists.
    #[arg(long, requires = "svg")]
    pub force: bool,
}

/// Refuses a timings trace named twice (by any name): the spread between
/// replays would count one replay as two that agree.
fn refuse_twice(replays: &[PathBuf]) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let mut seen: Vec<((u64, u64), &PathBuf)> = Vec::new();
    for path in replays {
        // One that cannot be read is reported when it is opened.
        let Ok(m) = std::fs::metadata(path) else {
            continue;
        };
        let id = (m.dev(), m.ino());
        if let Some((_, first)) = seen.iter().find(|(i, _)| *i == id) {
            bail!(
                "{} and {} are the same file: each replay's timings count once",
                first.display(),
                path.display()
            );
        }
        seen.push((id, path));
    }
    Ok(())
}

/// Reads the original once per replay and prints the report.
pub fn run(args: &FidelityArgs) -> Result<ExitCode> {
    if let Some(svg) = &args.svg {
        let inputs = std::iter::once(&args.original).chain(&args.replays);
        svg::refuse(svg, args.force, inputs.map(PathBuf::as_path))?;
    }
    refuse_twice(&args.replays)?;
    let bar = Progress::bytes("comparing");
    let report = fidelity(&args.original, &args.replays, &mut |d, t| bar.update(d, t));
    bar.finish();
    let report = report.with_context(|| {
        format!(
            "cannot compare the replays with {}",
            args.original.display()
        )
    })?;
    for r in &report.replays {
        // Nothing in common: a comparison would be of nothing.
        if r.events > 0 && r.unmatched == r.events {
            bail!(
                "{}: none of its {} events matches a call of {}: it is the timings of a replay \
                 of another trace",
                r.path,
                r.events,
                args.original.display()
            );
        }
        // Most events unmatched: the timings trace of another original.
        if r.events > 0 && r.unmatched * 2 > r.events {
            errln!(
                "reanimator: warning: {}: {} of its {} events match no call of {}: was it \
                 replayed from another trace?",
                r.path,
                r.unmatched,
                r.events,
                args.original.display()
            );
        }
    }
    // The picture first: a closed pipe on stdout (`| head`) must not
    // lose it.
    if let Some(svg) = &args.svg {
        svg::save(svg, args.force, |out| write_svg(out, &report))?;
        errln!(
            "reanimator: {}: the fidelity report as a picture",
            svg.display()
        );
    }
    crate::to_stdout(|out| {
        if args.json {
            serde_json::to_writer_pretty(&mut *out, &report)?;
            writeln!(out)?;
        } else {
            print_text(out, &report, args.calls)?;
        }
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `850ns`, `1.2µs`, `35.0ms`, `2.50s`.
pub(crate) fn span(ns: u64) -> String {
    let f = ns as f64;
    match ns {
        0..1_000 => format!("{ns}ns"),
        1_000..1_000_000 => format!("{:.1}µs", f / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1}ms", f / 1e6),
        _ => format!("{:.2}s", f / 1e9),
    }
}

/// A mean in ns as µs: two decimals below 10 µs, where most calls are.
fn micros(ns: Option<f64>) -> String {
    match ns {
        None => "-".into(),
        Some(v) if v < 10_000.0 => format!("{:.2}", v / 1e3),
        Some(v) => format!("{:.1}", v / 1e3),
    }
}

/// A percentage, or `-` when there is none.
fn pct(v: Option<f64>, signed: bool) -> String {
    match v {
        None => "-".into(),
        Some(v) if signed => format!("{v:+.1}"),
        Some(v) => format!("{v:.1}"),
    }
}

fn print_text(out: &mut impl Write, r: &FidelityReport, rows: usize) -> std::io::Result<()> {
    let o = &r.original;
    writeln!(
        out,
        "original {} ({}): {} calls returned, span {}",
        o.path,
        o.recorder,
        o.calls,
        span(o.span_ns)
    )?;
    for (i, p) in r.replays.iter().enumerate() {
        let mut how = vec![format!("timing {}", p.timing)];
        if let Some(order) = &p.order {
            how.push(format!("order {order}"));
        }
        if let Some(of) = &p.replay_of {
            how.push(format!("replay of {of}"));
        }
        writeln!(
            out,
            "replay {} {} ({}): {} calls, {} matched, {} not in the original; {} original \
             calls not replayed; span {}{}",
            i + 1,
            p.path,
            how.join(", "),
            p.events,
            p.matched,
            p.unmatched,
            p.not_replayed,
            span(p.span_ns),
            p.span_ratio
                .map(|x| format!(" ({x:.2}× the original)"))
                .unwrap_or_default()
        )?;
    }
    writeln!(out)?;

    let shown: Vec<&CallFidelity> = r.calls.iter().take(rows).collect();
    let width = shown
        .iter()
        .map(|c| c.call.chars().count())
        .chain([r.all.call.chars().count()])
        .max()
        .unwrap_or(0);
    writeln!(
        out,
        "{:<width$} {:>9} {:>10} {:>10} {:>8} {:>8} {:>9} {:>8} {:>3}",
        "call", "n", "orig µs", "replay µs", "bias %", "u(R_w) %", "u(bias) %", "±2u_c %", "sig"
    )?;
    for c in shown.iter().copied().chain([&r.all]) {
        let m = c.metrology.as_ref();
        writeln!(
            out,
            "{:<width$} {:>9} {:>10} {:>10} {:>8} {:>8} {:>9} {:>8}{}",
            c.call,
            c.n,
            micros(c.original.mean_ns),
            micros(c.replay_mean_ns),
            pct(bias(c), true),
            pct(m.map(|m| m.u_rw_pct), false),
            pct(m.map(|m| m.u_bias_pct), false),
            pct(m.map(|m| m.expanded_pct), false),
            if m.is_some_and(|m| m.significant) {
                "   *"
            } else {
                ""
            }
        )?;
    }
    if r.calls.len() > rows {
        writeln!(
            out,
            "({} more calls: --calls N, or --json)",
            r.calls.len() - rows
        )?;
    }
    let from_one = r.calls.iter().chain([&r.all]).any(|c| {
        c.metrology
            .is_some_and(|m| m.precision_from == PrecisionFrom::OneReplay)
    });
    if from_one {
        writeln!(
            out,
            "u(R_w) from one replay: the standard error of its mean, not the spread between \
             replays (replay again for that)"
        )?;
    }
    let policy = |p: &ReplayReport| (p.timing.clone(), p.order.clone());
    if r.replays.iter().any(|p| policy(p) != policy(&r.replays[0])) {
        writeln!(
            out,
            "the replays used different --timing or --order: u(R_w) mixes the policies' \
             differences with the spread between runs"
        )?;
    }
    writeln!(
        out,
        "bias: mean over replays; sig *: |bias| > 2 × the standard error of the difference of \
         the means; - : fewer than 2 calls"
    )?;
    writeln!(out)?;

    writeln!(
        out,
        "concurrency (calls in flight at each call's entry, itself included)"
    )?;
    let label = |i: usize| format!("replay {}", i + 1);
    writeln!(
        out,
        "{:<22} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
        "trace", "1", "2", "3", "4", "5-8", "9+", "mean"
    )?;
    print_concurrency(out, "original, all calls", &o.concurrency)?;
    for (i, p) in r.replays.iter().enumerate() {
        print_concurrency(
            out,
            &format!("original, {}'s", label(i)),
            &p.original_concurrency,
        )?;
        print_concurrency(out, &label(i), &p.concurrency)?;
    }
    let late: u64 = o.concurrency.late
        + r.replays
            .iter()
            .map(|p| p.concurrency.late + p.original_concurrency.late)
            .sum::<u64>();
    if late > 0 {
        writeln!(
            out,
            "({late} calls written too far out of completion order to be counted)"
        )?;
    }
    writeln!(out)?;

    writeln!(
        out,
        "issue-time error (µs, replay − schedule; negative: issued early)"
    )?;
    for (i, p) in r.replays.iter().enumerate() {
        match &p.issue_error {
            None => writeln!(out, "{} ({}): no matched calls", label(i), p.timing)?,
            Some(e) => {
                let list = |q: &Quantiles| {
                    let named = Quantiles::NAMES.iter().zip(q.listed());
                    named
                        .map(|(n, v)| format!("{n} {v:.1}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                writeln!(
                    out,
                    "{} ({}): {}; |error| {}",
                    label(i),
                    p.timing,
                    list(&e.error_us),
                    list(&e.abs_us)
                )?
            }
        }
    }
    Ok(())
}

/// The mean of the replays' biases of `c`: the metrology's, or where
/// there is none (one call matched) their plain mean, still worth seeing.
pub(crate) fn bias(c: &CallFidelity) -> Option<f64> {
    if let Some(m) = &c.metrology {
        return Some(m.mean_bias_pct);
    }
    let biases: Vec<f64> = c.replays.iter().filter_map(|x| x.bias_pct).collect();
    (!biases.is_empty()).then(|| biases.iter().sum::<f64>() / biases.len() as f64)
}

fn print_concurrency(out: &mut impl Write, name: &str, c: &Concurrency) -> std::io::Result<()> {
    write!(out, "{name:<22}")?;
    for l in &c.levels {
        write!(out, " {:>6.1}%", l.share * 100.0)?;
    }
    match c.mean {
        Some(m) => writeln!(out, " {m:>7.2}"),
        None => writeln!(out, " {:>7}", "-"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(span(850), "850ns");
        assert_eq!(span(2_500_000_000), "2.50s");
        assert_eq!(micros(Some(350.0)), "0.35");
        assert_eq!(micros(Some(19_300.0)), "19.3");
        assert_eq!(pct(Some(4.06), true), "+4.1");
        assert_eq!(pct(None, false), "-");
    }
}
