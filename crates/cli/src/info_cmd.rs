//! `reanimator info`: what a trace is before reading its calls — who
//! recorded what, where, when and how, whether it is complete, what it
//! holds and what was lost. The meta frame is otherwise printed by no
//! command, and a user handed a trace asks these questions first (perf's
//! `report --header-only`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use reanimator_trace::{
    ContentNote, EndSummary, PathPhase, ReadOptions, Reader, Record, TraceMeta,
};
use serde_json::json;

use crate::progress::Progress;
use crate::stats_cmd::bytes;

/// Arguments of `reanimator info`.
#[derive(clap::Args, Debug)]
pub struct InfoArgs {
    /// The trace file.
    pub trace: PathBuf,
    /// Print one JSON object (the meta frame in full, the end summary and
    /// the counts) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// What one pass over the records adds to the meta frame.
#[derive(Debug, Default)]
struct Contents {
    records: u64,
    processes: u64,
    threads: u64,
    /// Paths whose state before their first use was recorded, and how
    /// many of those with their contents.
    paths_before: u64,
    paths_with_contents: u64,
    paths_unreadable: u64,
    /// Paths of the final manifest.
    paths_after: u64,
    losses: u64,
    lost_events: u64,
}

/// Prints the trace's description; reads it to the end (system calls are
/// passed over undecoded) to check it is complete and count what it
/// holds. A damaged or unfinished trace prints what could be read, then
/// the error, and fails.
pub fn run(args: &InfoArgs) -> Result<ExitCode> {
    let mut reader = Reader::open(&args.trace, ReadOptions { data: false })?;
    reader.skip_syscalls(true);
    reader.check_skipped_frames(true);
    let bar = Progress::bytes("reading");
    let mut c = Contents::default();
    let result = loop {
        match reader.next_record() {
            Ok(Some(r)) => {
                c.records += 1;
                count(&mut c, &r);
                if c.records.is_multiple_of(4096) {
                    bar.update(reader.offset(), reader.file_len());
                }
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    bar.finish();
    let (major, minor) = reader.version();
    let end = reader.end().cloned();
    let syscalls = reader.counts().passed_syscalls;
    let unknown = reader.counts().skipped_unknown;
    if args.json {
        let v = json!({
            "file": args.trace.display().to_string(),
            "size": reader.file_len(),
            "format": format!("{major}.{minor}"),
            "meta": reader.meta(),
            "complete": result.is_ok() && end.is_some(),
            "end": end,
            "read": {
                "records": c.records + syscalls + unknown,
                "syscalls": syscalls,
                "unknown_kinds_skipped": unknown,
                "processes": c.processes,
                "threads": c.threads,
                "paths_before": c.paths_before,
                "paths_with_contents": c.paths_with_contents,
                "paths_unreadable": c.paths_unreadable,
                "paths_after": c.paths_after,
                "losses": c.losses,
                "lost_events": c.lost_events,
            },
            "error": result.as_ref().err().map(|e| e.to_string()),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let size = reader.file_len();
        field(
            "trace",
            format!(
                "{} ({}, format {major}.{minor})",
                args.trace.display(),
                bytes(size)
            ),
        )?;
        print_meta(reader.meta())?;
        print_contents(&c, syscalls, end.as_ref(), size, result.as_ref().err())?;
        if unknown > 0 {
            field(
                "skipped",
                format!(
                    "{} of kinds this version does not know (written by a newer reanimator)",
                    crate::counted(unknown, "record", "records")
                ),
            )?;
        }
    }
    // The reader's message names `recover` where it helps (an unfinished,
    // cut or damaged trace), for every command that reads a trace.
    result.map(|()| ExitCode::SUCCESS).map_err(Into::into)
}

/// One `label  value` line; labels line up in one column.
fn field(label: &str, value: impl std::fmt::Display) -> Result<()> {
    outln!("{label:<14} {value}");
    Ok(())
}

fn count(c: &mut Contents, r: &Record) {
    match r {
        Record::ProcessStart(p) if p.tid == p.tgid => c.processes += 1,
        Record::ProcessStart(_) => c.threads += 1,
        Record::PathState(p) if p.phase == PathPhase::Before => {
            c.paths_before += 1;
            c.paths_with_contents += u64::from(p.content == ContentNote::Complete);
            c.paths_unreadable += u64::from(p.content == ContentNote::Unreadable);
        }
        Record::PathState(_) => c.paths_after += 1,
        Record::Loss(l) => {
            c.losses += 1;
            c.lost_events += l.count;
        }
        _ => {}
    }
}

fn print_meta(m: &TraceMeta) -> Result<()> {
    let command = if m.command.is_empty() {
        "(attached to running processes)".to_string()
    } else {
        m.command
            .iter()
            .map(|a| shell_word(a))
            .collect::<Vec<_>>()
            .join(" ")
    };
    field("command", command)?;
    field(
        "recorder",
        format!("{} back end, by {}", m.recorder, m.tool),
    )?;
    let when = if m.clock.realtime_ns == 0 {
        "(no clock anchor)".to_string()
    } else {
        utc(m.clock.realtime_ns)
    };
    field(
        "recorded",
        format!("{when} on {}, Linux {}, {}", m.hostname, m.kernel, m.arch),
    )?;
    if !m.options.is_empty() {
        let opts: Vec<String> = m.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        field("options", opts.join(" "))?;
    }
    for (k, v) in &m.extra {
        let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
        field(&k.replace('_', " "), v)?;
    }
    field(
        "catalogue",
        format!("{} system calls described in the trace", m.syscalls.len()),
    )?;
    Ok(())
}

fn print_contents(
    c: &Contents,
    syscalls: u64,
    end: Option<&EndSummary>,
    size: u64,
    error: Option<&reanimator_trace::Error>,
) -> Result<()> {
    let so_far = if end.is_some() { "" } else { " (read so far)" };
    field(
        "holds",
        format!(
            "{}, {}, {}{so_far}",
            crate::counted(syscalls, "system call", "system calls"),
            crate::counted(c.processes, "process", "processes"),
            crate::counted(c.threads, "other thread", "other threads")
        ),
    )?;
    field(
        "file state",
        format!(
            "{} as first used ({} with contents, {} unreadable); final manifest of {}",
            crate::counted(c.paths_before, "path", "paths"),
            c.paths_with_contents,
            c.paths_unreadable,
            crate::counted(c.paths_after, "path", "paths")
        ),
    )?;
    if let Some(e) = end {
        field(
            "data",
            format!(
                "{} captured, {} after deduplication, {} on disk",
                bytes(e.captured_bytes),
                bytes(e.unique_bytes),
                bytes(size)
            ),
        )?;
    }
    // The end summary's figures when there is one; what was read otherwise.
    let (losses, lost) = end.map_or((c.losses, c.lost_events), |e| (e.losses, e.lost_events));
    if losses == 0 {
        field("lost", format!("nothing{so_far}"))?;
    } else {
        let events = if lost == 0 {
            "an unknown number of events".to_string()
        } else {
            crate::counted(lost, "event", "events")
        };
        field(
            "LOST",
            format!(
                "{events} in {}{so_far} (`dump` shows each loss record)",
                crate::counted(losses, "gap", "gaps")
            ),
        )?;
    }
    let notes = end
        .and_then(|e| e.extra.get(crate::record_cmd::RECORDER_NOTES))
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str());
    for (i, note) in notes.enumerate() {
        field(if i == 0 { "recorder said" } else { "" }, note)?;
    }
    match (end, error) {
        (Some(_), None) => field("complete", "yes (end record present, counts agree)"),
        (_, Some(e)) => field("complete", format!("no: {e}")),
        (None, None) => field("complete", "no: the trace has no end record"),
    }
}

/// A command-line word as a shell would need it: quoted when it holds
/// anything but plain characters.
fn shell_word(a: &str) -> String {
    let plain = !a.is_empty()
        && a.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

/// `2026-11-28 23:09:21 UTC` from ns since the Unix epoch.
fn utc(realtime_ns: u64) -> String {
    let secs = realtime_ns / 1_000_000_000;
    let (days, day) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a proleptic Gregorian date, counting in
    // 400-year eras of 146,097 days from 0000-03-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        day / 3600,
        day / 60 % 60,
        day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_calendar_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        // 2000-02-29 12:34:56, a leap day of a century leap year.
        assert_eq!(utc(951_827_696 * 1_000_000_000), "2000-02-29 12:34:56 UTC");
        assert_eq!(
            utc(1_795_302_000 * 1_000_000_000),
            "2026-11-21 23:00:00 UTC"
        );
    }

    #[test]
    fn words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("of=ddout"), "of=ddout");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
