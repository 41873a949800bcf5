//! `reanimator fidelity --svg`: the fidelity report as one self-contained
//! SVG picture (no script, fonts or files of its own), for people who
//! would rather look than read: response-time distributions of the
//! busiest calls, concurrency levels side by side, and the issue-time
//! error. The analysis crate computes; this module only draws, writing
//! the SVG text by hand with the primitives of [`crate::svg`], which the
//! `stats` picture shares.

use std::io::{self, Write};

use reanimator_analysis::{CallFidelity, Concurrency, FidelityReport, Quantiles, ReplayReport};

use crate::fidelity_cmd::{bias, span};
use crate::svg::{
    document, esc, line, px, rect, section, short_path, text, text_width, titled, LogAxis, GREY,
    GRID, MARGIN, WIDTH,
};

/// Calls drawn as response-time panels, the most original time first.
const PANELS: usize = 4;
/// Height of one response-time panel.
const PANEL_HEIGHT: f64 = 260.0;
/// Gap between two panels side by side.
const PANEL_GAP: f64 = 40.0;
/// Height of the concurrency chart's plot area.
const BARS_HEIGHT: f64 = 220.0;
/// The original's colour: the reference, drawn darkest.
const ORIGINAL: &str = "#222222";
/// The original over all its calls, in the concurrency chart.
const ORIGINAL_ALL: &str = "#999999";
/// Replay colours (Okabe and Ito's palette, told apart with colour
/// blindness too), repeated dashed past the sixth replay.
const PALETTE: [&str; 6] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
];

/// Writes the picture of `r` to `out`: any writer, so the command
/// streams it to its file and tests keep it in memory.
pub fn write_svg(out: &mut impl Write, r: &FidelityReport) -> io::Result<()> {
    // The height is known once everything is laid out.
    let mut body = Vec::new();
    let mut y = header(&mut body, r)?;
    y = response_times(&mut body, r, y + 14.0)?;
    y = concurrency(&mut body, r, y + 14.0)?;
    y = issue_error(&mut body, r, y + 14.0)?;
    let height = (y + 24.0).ceil();
    let title = format!("reanimator fidelity: {}", r.original.path);
    document(out, height, &title, &body)
}

/// A legend swatch: a short line in the series' colour and dash.
fn swatch(out: &mut impl Write, x: f64, y: f64, colour: &str, dash: &str) -> io::Result<()> {
    writeln!(
        out,
        r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{colour}" stroke-width="3"{dash}/>"#,
        px(x),
        px(y - 4.0),
        px(x + 22.0),
        px(y - 4.0)
    )
}

/// Colour and dash attribute of replay `i` (0-based).
fn replay_style(i: usize) -> (&'static str, &'static str) {
    let dash = if (i / PALETTE.len()) % 2 == 1 {
        r#" stroke-dasharray="7 4""#
    } else {
        ""
    };
    (PALETTE[i % PALETTE.len()], dash)
}

/// How replay `p` ran: `timing afap, order overlap`.
fn policy(p: &ReplayReport) -> String {
    let mut how = format!("timing {}", p.timing);
    if let Some(order) = &p.order {
        how.push_str(&format!(", order {order}"));
    }
    how
}

/// The title and a line per trace; returns the y below them.
fn header(out: &mut impl Write, r: &FidelityReport) -> io::Result<f64> {
    let mut y = 34.0;
    text(
        out,
        MARGIN,
        y,
        r#" font-size="20" font-weight="bold""#,
        "reanimator fidelity: how faithfully the replays reproduce their original",
    )?;
    y += 28.0;
    let o = &r.original;
    y = trace_line(
        out,
        y,
        (ORIGINAL, ""),
        &o.path,
        &format!("original {} ({})", short_path(&o.path), o.recorder),
        &format!("{} calls returned, span {}", o.calls, span(o.span_ns)),
    )?;
    for (i, p) in r.replays.iter().enumerate() {
        let ratio = p
            .span_ratio
            .map(|x| format!(" ({x:.2}× the original)"))
            .unwrap_or_default();
        y = trace_line(
            out,
            y + 20.0,
            replay_style(i),
            &p.path,
            &format!("replay {} {} ({})", i + 1, short_path(&p.path), policy(p)),
            &format!(
                "{} of {} calls matched, {} original calls not replayed; span {}{ratio}",
                p.matched,
                p.events,
                p.not_replayed,
                span(p.span_ns)
            ),
        )?;
    }
    Ok(y + 6.0)
}

/// One trace of the header at `y`: a swatch of its style, `what` it is,
/// and its `figures`, on a second line when both do not fit on one;
/// `path` whole in a tooltip. Returns the y of the last line.
fn trace_line(
    out: &mut impl Write,
    y: f64,
    (colour, dash): (&str, &str),
    path: &str,
    what: &str,
    figures: &str,
) -> io::Result<f64> {
    writeln!(out, "<g><title>{}</title>", esc(path))?;
    swatch(out, MARGIN, y, colour, dash)?;
    let x = MARGIN + 30.0;
    let one = format!("{what}: {figures}");
    let y = if x + text_width(&one, 13.0) <= WIDTH - MARGIN {
        text(out, x, y, "", &one)?;
        y
    } else {
        text(out, x, y, "", &format!("{what}:"))?;
        text(out, x + 16.0, y + 17.0, "", figures)?;
        y + 17.0
    };
    writeln!(out, "</g>")?;
    Ok(y)
}

/// Up to [`PANELS`] CDF panels, two a row; returns the y below them.
fn response_times(out: &mut impl Write, r: &FidelityReport, y: f64) -> io::Result<f64> {
    let mut y = section(
        out,
        y,
        "Response times",
        "cumulative distribution over the matched calls, the calls with the most original \
         time first",
    )?;
    y += 18.0;
    // One legend for every panel.
    let mut x = MARGIN;
    let mut entries = vec![("original (its matched calls)".to_string(), ORIGINAL, "")];
    for (i, p) in r.replays.iter().enumerate() {
        let (colour, dash) = replay_style(i);
        entries.push((format!("replay {} ({})", i + 1, policy(p)), colour, dash));
    }
    for (label, colour, dash) in &entries {
        let w = 30.0 + text_width(label, 12.0) + 18.0;
        if x + w > WIDTH - MARGIN && x > MARGIN {
            x = MARGIN;
            y += 18.0;
        }
        swatch(out, x, y, colour, dash)?;
        text(out, x + 28.0, y, r#" font-size="12""#, label)?;
        x += w;
    }
    y += 10.0;
    let shown: Vec<&CallFidelity> = r.calls.iter().take(PANELS).collect();
    if shown.is_empty() {
        text(out, MARGIN, y + 20.0, "", "no matched calls")?;
        return Ok(y + 26.0);
    }
    let w = (WIDTH - 2.0 * MARGIN - PANEL_GAP) / 2.0;
    for (k, c) in shown.iter().enumerate() {
        let x = MARGIN + (k % 2) as f64 * (w + PANEL_GAP);
        let top = y + (k / 2) as f64 * PANEL_HEIGHT;
        cdf_panel(out, c, x, top, w)?;
    }
    Ok(y + shown.len().div_ceil(2) as f64 * PANEL_HEIGHT)
}

/// One call's CDFs in the box at (`x`, `top`), `w` wide.
fn cdf_panel(out: &mut impl Write, c: &CallFidelity, x: f64, top: f64, w: f64) -> io::Result<()> {
    let bias = match bias(c) {
        Some(b) => format!("mean bias {b:+.1} %"),
        None => "bias n/a".into(),
    };
    titled(
        out,
        x,
        top + 22.0,
        14,
        &c.call,
        &format!("n {}, {bias}", c.n),
    )?;
    let (left, right) = (x + 48.0, x + w - 10.0);
    let (ptop, bottom) = (top + 36.0, top + PANEL_HEIGHT - 44.0);
    let series = std::iter::once(&c.original.cdf_ns).chain(c.replays.iter().map(|p| &p.cdf_ns));
    let Some(axis) = LogAxis::over(series.flat_map(|s| s.iter().copied())) else {
        text(
            out,
            left,
            (ptop + bottom) / 2.0,
            "",
            "no response times above 0 ns",
        )?;
        return Ok(());
    };
    let xs = |ns: u64| left + axis.frac(ns) * (right - left);
    let ys = |q: f64| bottom - q * (bottom - ptop);
    for pct in [0u32, 25, 50, 75, 100] {
        let yy = ys(f64::from(pct) / 100.0);
        line(out, (left, yy), (right, yy), GRID)?;
        text(
            out,
            left - 6.0,
            yy + 4.0,
            &format!(r#" font-size="11" text-anchor="end" fill="{GREY}""#),
            &format!("{pct} %"),
        )?;
    }
    let decades = axis.hi - axis.lo;
    let every = decades.div_ceil(6);
    axis.draw_decades(
        out,
        xs,
        (ptop, bottom),
        every,
        &[bottom + 16.0],
        decades <= 4,
    )?;
    line(out, (left, bottom), (right, bottom), GREY)?;
    line(out, (left, ptop), (left, bottom), GREY)?;
    text(
        out,
        (left + right) / 2.0,
        bottom + 32.0,
        &format!(r#" font-size="11" text-anchor="middle" fill="{GREY}""#),
        "response time (log scale)",
    )?;
    let mut curve = |cdf: &[u64], colour: &str, dash: &str, width: f64| -> io::Result<()> {
        if cdf.is_empty() {
            return Ok(());
        }
        let last = (cdf.len() - 1).max(1) as f64;
        let points: Vec<String> = cdf
            .iter()
            .enumerate()
            .map(|(k, &v)| format!("{},{}", px(xs(v)), px(ys(k as f64 / last))))
            .collect();
        writeln!(
            out,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="{width}" stroke-linejoin="round"{dash} points="{}"/>"#,
            points.join(" ")
        )
    };
    for (i, p) in c.replays.iter().enumerate() {
        let (colour, dash) = replay_style(i);
        curve(&p.cdf_ns, colour, dash, 1.8)?;
    }
    // The reference last, on top.
    curve(&c.original.cdf_ns, ORIGINAL, "", 2.4)
}

/// One bar series of the concurrency chart.
struct Bars<'a> {
    label: String,
    colour: &'static str,
    /// Light fill with an outline: the original over a replay's calls.
    light: bool,
    c: &'a Concurrency,
}

/// Grouped bars per concurrency level; returns the y below them.
fn concurrency(out: &mut impl Write, r: &FidelityReport, y: f64) -> io::Result<f64> {
    let mut y = section(
        out,
        y,
        "Concurrency",
        "share of calls issued with this many calls in flight, itself included",
    )?;
    let mut series = vec![Bars {
        label: "original, all calls".into(),
        colour: ORIGINAL_ALL,
        light: false,
        c: &r.original.concurrency,
    }];
    for (i, p) in r.replays.iter().enumerate() {
        let (colour, _) = replay_style(i);
        series.push(Bars {
            label: format!("original over replay {}'s calls", i + 1),
            colour,
            light: true,
            c: &p.original_concurrency,
        });
        series.push(Bars {
            label: format!("replay {}", i + 1),
            colour,
            light: false,
            c: &p.concurrency,
        });
    }
    // The legend: the original alone, then each replay's pair, a pair
    // never split across lines.
    y += 18.0;
    let mut x = MARGIN;
    let units = std::iter::once(&series[..1]).chain(series[1..].chunks(2));
    for unit in units {
        let labels: Vec<String> = unit
            .iter()
            .map(|s| match s.c.mean {
                Some(m) => format!("{} (mean {m:.2})", s.label),
                None => s.label.clone(),
            })
            .collect();
        let widths: Vec<f64> = labels
            .iter()
            .map(|l| 20.0 + text_width(l, 12.0) + 12.0)
            .collect();
        if x + widths.iter().sum::<f64>() > WIDTH - MARGIN && x > MARGIN {
            x = MARGIN;
            y += 18.0;
        }
        for ((s, label), w) in unit.iter().zip(&labels).zip(&widths) {
            bar_rect(out, s, x, y - 11.0, 14.0, 12.0)?;
            text(out, x + 20.0, y, r#" font-size="12""#, label)?;
            x += w;
        }
        x += 16.0;
    }
    let (left, right) = (MARGIN + 44.0, WIDTH - MARGIN);
    let (ptop, bottom) = (y + 22.0, y + 22.0 + BARS_HEIGHT);
    let most = series
        .iter()
        .flat_map(|s| s.c.levels.iter().map(|l| l.share))
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    // The scale ends at the next 10 % (20 % past 40 %) above the
    // tallest bar, so small shares stay visible.
    let step = if most > 0.4 { 20.0 } else { 10.0 };
    let top_pct = ((most * 100.0 / step).ceil() * step).clamp(step, 100.0);
    let ys = |share: f64| bottom - (share * 100.0 / top_pct).clamp(0.0, 1.0) * (bottom - ptop);
    let mut pct = 0.0;
    while pct <= top_pct + 1e-9 {
        let yy = ys(pct / 100.0);
        line(out, (left, yy), (right, yy), GRID)?;
        text(
            out,
            left - 6.0,
            yy + 4.0,
            &format!(r#" font-size="11" text-anchor="end" fill="{GREY}""#),
            &format!("{pct:.0} %"),
        )?;
        pct += step;
    }
    let levels = series.first().map_or(0, |s| s.c.levels.len()).max(1);
    let group = (right - left) / levels as f64;
    let bar = group * 0.8 / series.len() as f64;
    for l in 0..levels {
        let gx = left + l as f64 * group + group * 0.1;
        for (k, s) in series.iter().enumerate() {
            let Some(level) = s.c.levels.get(l) else {
                continue;
            };
            let share = if level.share.is_finite() {
                level.share
            } else {
                0.0
            };
            let bx = gx + k as f64 * bar;
            let by = ys(share);
            writeln!(
                out,
                "<g><title>{}, {} in flight: {:.1} % ({} calls)</title>",
                esc(&s.label),
                esc(level.level),
                share * 100.0,
                level.calls
            )?;
            bar_rect(out, s, bx + 1.0, by, (bar - 2.0).max(1.0), bottom - by)?;
            writeln!(out, "</g>")?;
            // The value over the bar where it fits (digits are about
            // 0.64 em wide); a tooltip has it anyway.
            let value = format!("{:.0}", share * 100.0);
            if share >= 0.005 && value.len() as f64 * 6.4 <= bar - 2.0 {
                text(
                    out,
                    bx + bar / 2.0,
                    by - 3.0,
                    &format!(r#" font-size="10" text-anchor="middle" fill="{GREY}""#),
                    &value,
                )?;
            }
        }
        let label = series
            .first()
            .and_then(|s| s.c.levels.get(l))
            .map_or("", |level| level.level);
        text(
            out,
            left + (l as f64 + 0.5) * group,
            bottom + 18.0,
            r#" font-size="13" text-anchor="middle""#,
            label,
        )?;
    }
    line(out, (left, bottom), (right, bottom), GREY)?;
    text(
        out,
        (left + right) / 2.0,
        bottom + 36.0,
        &format!(r#" font-size="11" text-anchor="middle" fill="{GREY}""#),
        "calls in flight at the call's entry",
    )?;
    Ok(bottom + 40.0)
}

/// A bar (or legend box) in series `s`'s style.
fn bar_rect(out: &mut impl Write, s: &Bars, x: f64, y: f64, w: f64, h: f64) -> io::Result<()> {
    let fill = if s.light {
        format!(
            r#"fill="{}" fill-opacity="0.3" stroke="{}""#,
            s.colour, s.colour
        )
    } else {
        format!(r#"fill="{}""#, s.colour)
    };
    rect(out, x, y, w, h, &fill)
}

/// A signed time in µs with a unit that keeps it short: `-7.62 ms`.
fn micros(us: f64) -> String {
    match us.abs() {
        a if a < 1e3 => format!("{us:.1} µs"),
        a if a < 1e6 => format!("{:.2} ms", us / 1e3),
        _ => format!("{:.2} s", us / 1e6),
    }
}

/// A line of quantiles per replay; returns the y below them.
fn issue_error(out: &mut impl Write, r: &FidelityReport, y: f64) -> io::Result<f64> {
    let mut y = section(
        out,
        y,
        "Issue-time error",
        "replay's issue time − its schedule; negative: issued early",
    )?;
    y += 22.0;
    let names = Quantiles::NAMES;
    let heads: Vec<String> = names
        .iter()
        .map(|n| n.to_string())
        .chain(names.iter().map(|n| format!("|err| {n}")))
        .collect();
    let first = 420.0;
    let col = (WIDTH - MARGIN - first) / heads.len() as f64;
    let bold = r#" font-weight="bold" text-anchor="end""#;
    for (k, h) in heads.iter().enumerate() {
        text(out, first + (k + 1) as f64 * col, y, bold, h)?;
    }
    for (i, p) in r.replays.iter().enumerate() {
        y += 20.0;
        let (colour, dash) = replay_style(i);
        swatch(out, MARGIN, y, colour, dash)?;
        text(
            out,
            MARGIN + 30.0,
            y,
            "",
            &format!("replay {} ({})", i + 1, policy(p)),
        )?;
        let Some(e) = &p.issue_error else {
            text(
                out,
                first + col,
                y,
                r#" text-anchor="end""#,
                "no matched calls",
            )?;
            continue;
        };
        let values = [e.error_us.listed(), e.abs_us.listed()].concat();
        for (k, v) in values.iter().enumerate() {
            text(
                out,
                first + (k + 1) as f64 * col,
                y,
                r#" text-anchor="end""#,
                &micros(*v),
            )?;
        }
    }
    Ok(y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::check_well_formed;
    use reanimator_analysis::{
        fidelity, IssueError, Latency, Level, OriginalReport, Quantiles, ReplayLatency,
    };

    #[test]
    fn issue_times_keep_a_short_unit() {
        assert_eq!(micros(-7621.6), "-7.62 ms");
        assert_eq!(micros(12.34), "12.3 µs");
    }

    fn concurrency(shares: [f64; 6]) -> Concurrency {
        Concurrency {
            calls: 100,
            levels: ["1", "2", "3", "4", "5-8", "9+"]
                .iter()
                .zip(shares)
                .map(|(&level, share)| Level {
                    level,
                    calls: (share * 100.0) as u64,
                    share,
                })
                .collect(),
            mean: Some(1.5),
            late: 0,
        }
    }

    fn replay(path: &str, bias: Option<f64>) -> ReplayReport {
        ReplayReport {
            path: path.into(),
            replay_of: None,
            timing: "afap".into(),
            speedup: 1.0,
            order: Some("overlap".into()),
            events: 3,
            matched: 3,
            unmatched: 0,
            not_replayed: 0,
            span_ns: 1_000,
            span_ratio: bias.map(|_| 0.5),
            concurrency: concurrency([0.5, 0.5, 0.0, 0.0, 0.0, 0.0]),
            original_concurrency: concurrency([1.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
            issue_error: bias.map(|_| IssueError {
                calls: 3,
                error_us: Quantiles {
                    p50: -1.0,
                    p90: 2.0,
                    p99: 3.0,
                    max: 3_000.0,
                },
                abs_us: Quantiles {
                    p50: 1.0,
                    p90: 2.0,
                    p99: 3.0,
                    max: 3_000.0,
                },
            }),
        }
    }

    fn call(name: &str, cdf: Vec<u64>) -> CallFidelity {
        CallFidelity {
            call: name.into(),
            original_calls: 3,
            n: 3,
            original: Latency {
                mean_ns: Some(2_000.0),
                p50_ns: cdf.get(cdf.len() / 2).copied(),
                p99_ns: cdf.last().copied(),
                cdf_ns: cdf.clone(),
            },
            replay_mean_ns: Some(3_000.0),
            replays: vec![
                ReplayLatency {
                    n: 3,
                    reference_mean_ns: Some(2_000.0),
                    mean_ns: Some(3_000.0),
                    p50_ns: None,
                    p99_ns: None,
                    cdf_ns: cdf.iter().map(|v| v.saturating_mul(3) / 2).collect(),
                    bias_pct: Some(50.0),
                },
                ReplayLatency::default(),
            ],
            metrology: None,
        }
    }

    /// A report with markup in every name, zero and huge times, an empty
    /// series and a replay without matched calls.
    fn awkward() -> FidelityReport {
        FidelityReport {
            original: OriginalReport {
                path: "/tmp/a&b/<orig>\"'.rtr\u{7}".into(),
                recorder: "ptrace".into(),
                calls: 3,
                span_ns: 2_000,
                concurrency: concurrency([0.2, 0.3, 0.1, 0.1, 0.2, 0.1]),
            },
            replays: vec![replay("r&1.tim", Some(50.0)), replay("<r2>", None)],
            calls: vec![
                call("read<&>", vec![0, 1_000, 2_000, 3_000]),
                call("zero", vec![0, 0]),
                call("huge", vec![1, u64::MAX]),
                call("empty", vec![]),
                call("fifth, not drawn", vec![5]),
            ],
            all: call("all calls", vec![1_000]),
        }
    }

    #[test]
    fn the_picture_is_well_formed_and_escapes_names() {
        let mut out = Vec::new();
        write_svg(&mut out, &awkward()).unwrap();
        let svg = String::from_utf8(out).unwrap();
        check_well_formed(&svg);
        assert!(svg.contains("read&lt;&amp;&gt;"), "{svg}");
        assert!(svg.contains("/tmp/a&amp;b/&lt;orig&gt;&quot;&apos;.rtr\u{FFFD}"));
        assert!(svg.contains("r&amp;1.tim") && svg.contains("&lt;r2&gt;"));
        assert!(svg.contains(">huge<") && svg.contains(">empty<"));
        assert!(!svg.contains("fifth"), "four panels at most");
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        assert!(svg.contains("no matched calls"));
        assert!(svg.contains("original, all calls"));
        assert!(svg.contains("mean bias +50.0 %"));
    }

    #[test]
    fn a_report_without_matched_calls_still_draws() {
        let mut r = awkward();
        r.calls.clear();
        r.replays.truncate(1);
        for l in &mut r.original.concurrency.levels {
            l.share = f64::NAN;
        }
        let mut out = Vec::new();
        write_svg(&mut out, &r).unwrap();
        let svg = String::from_utf8(out).unwrap();
        check_well_formed(&svg);
        assert!(svg.contains("no matched calls") && !svg.contains("NaN"));
    }

    /// A real report, from traces the format crate writes.
    #[test]
    fn a_computed_report_draws() {
        use reanimator_trace::{
            Record, SyscallEvent, SyscallExit, TraceMeta, Writer, WriterOptions,
        };
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, recorder: &str, opts: &[(&str, &str)], t0: u64| {
            let meta = TraceMeta {
                recorder: recorder.into(),
                options: opts
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                ..TraceMeta::default()
            };
            let path = dir.path().join(name);
            let mut w = Writer::create(&path, &meta, WriterOptions::default()).unwrap();
            for seq in 1..=200u64 {
                let enter_ns = t0 + seq * 10_000;
                w.write(&Record::Syscall(SyscallEvent {
                    seq,
                    tgid: 7,
                    tid: 7,
                    nr: (seq % 3) as u32,
                    enter_ns,
                    args: [0; 6],
                    exit: Some(SyscallExit {
                        exit_ns: enter_ns + 500 + seq * seq,
                        ret: 0,
                        is_error: false,
                    }),
                    captures: vec![],
                }))
                .unwrap();
            }
            w.finish().unwrap();
            path
        };
        let orig = write("o.rtr", "ptrace", &[], 0);
        let rep = write(
            "r.tim",
            "replay",
            &[
                ("timing", "afap"),
                ("trace_origin_ns", "0"),
                ("replay_origin_ns", "5"),
            ],
            5,
        );
        let report = fidelity(&orig, &[rep], &mut |_, _| {}).unwrap();
        let mut out = Vec::new();
        write_svg(&mut out, &report).unwrap();
        let svg = String::from_utf8(out).unwrap();
        check_well_formed(&svg);
        assert_eq!(svg.matches("<polyline").count(), 6, "3 calls, 2 lines each");
    }
}
