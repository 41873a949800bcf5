//! `reanimator stats --svg`: the statistics as one self-contained SVG
//! picture, for people who would rather look than read. Per group (the
//! busiest): calls with their errors, bytes read and written, and a
//! latency strip on a logarithmic time axis that shows the tails; then
//! the transfer-size histograms with the most common exact size marked,
//! so "138-byte writes" or "16 KiB preads" show at a glance. Drawn from
//! the report alone (no second pass over the trace), by hand with the
//! primitives the fidelity picture uses too ([`crate::svg`]).

use std::io::{self, Write};
use std::path::Path;

use reanimator_analysis::histogram::Summary;
use reanimator_analysis::{GroupReport, Report, SizeReport};

use crate::stats_cmd::{bytes, calls_line, clip, exact_size, heading, label, ns, totals_line};
use crate::svg::{
    decade_label, document, esc, line, px, rect, section, short_path, text, text_width, titled,
    LogAxis, GREY, GRID, MARGIN, WIDTH,
};

/// Groups drawn, the most calls first: a dozen rows stay readable, and
/// the rest are counted in a note.
const GROUPS: usize = 12;
/// Size histograms drawn (a group's reads and its writes are two).
const PANELS: usize = 9;
/// Size histograms side by side.
const PANELS_PER_ROW: usize = 3;
/// Gap between two histograms side by side.
const PANEL_GAP: f64 = 30.0;
/// Height of one size histogram, titles and axis included.
const PANEL_HEIGHT: f64 = 212.0;
/// Height of one group's row in the bars and the latency strips.
const ROW: f64 = 24.0;
/// Width of the column of group names.
const LABEL_WIDTH: f64 = 190.0;
/// Characters of a group name that fit in that column at 12 px (a
/// longer one is cut from the left, keeping the file name; whole in a
/// tooltip).
const LABEL_CHARS: usize = 25;
/// Width of a figures column right of the latency strips.
const FIGURE_WIDTH: f64 = 72.0;
/// The calls bar: neutral, so that the errors stand out.
const CALLS: &str = "#8c8c8c";
/// The errors' share of the calls bar (Okabe and Ito's vermillion, as
/// every colour here: told apart with colour blindness too).
const ERRORS: &str = "#D55E00";
/// Bytes read and read sizes.
const READ: &str = "#0072B2";
/// Bytes written and write sizes.
const WRITE: &str = "#E69F00";
/// The latency strips.
const LATENCY: &str = "#009E73";
/// The median mark, darkest.
const MEDIAN: &str = "#222222";
/// Background of every other row, to read a row across.
const STRIPE: &str = "#f2f2f2";

/// Writes the picture of `r`, the statistics of `trace`, to `out`: any
/// writer, so the command streams it to its file and tests keep it in
/// memory.
pub fn write_svg(out: &mut impl Write, trace: &Path, r: &Report) -> io::Result<()> {
    let name = trace.to_string_lossy();
    let shown: Vec<&GroupReport> = r.groups.iter().take(GROUPS).collect();
    // The height is known once everything is laid out.
    let mut body = Vec::new();
    let mut y = header(&mut body, &name, r, shown.len())?;
    y = calls_and_bytes(&mut body, r, &shown, y + 14.0)?;
    y = latency(&mut body, &shown, y + 14.0)?;
    y = sizes(&mut body, r, y + 14.0)?;
    document(
        out,
        (y + 24.0).ceil(),
        &format!("reanimator stats: {name}"),
        &body,
    )
}

/// `a / b` as a share from 0 to 1, 0 when `b` is 0.
fn share(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        (a as f64 / b as f64).clamp(0.0, 1.0)
    }
}

/// A share as a percentage that stays short and never reads 0 % or
/// 100 % unless it is: `0.4 %`, `18 %`, `99.9 %`.
fn percent(q: f64) -> String {
    let p = q * 100.0;
    if p == 0.0 || p == 100.0 || (1.0..=99.0).contains(&p) {
        format!("{p:.0} %")
    } else if p < 0.1 {
        "<0.1 %".into()
    } else if p > 99.9 {
        ">99.9 %".into()
    } else {
        format!("{p:.1} %")
    }
}

/// A count that stays short: exact up to 7 digits, then `12.3 M`.
fn count(n: u64) -> String {
    const UNITS: [(&str, f64); 5] = [
        ("E", 1e18),
        ("P", 1e15),
        ("T", 1e12),
        ("G", 1e9),
        ("M", 1e6),
    ];
    if n < 10_000_000 {
        return n.to_string();
    }
    let f = n as f64;
    let (unit, scale) = UNITS
        .iter()
        .copied()
        .find(|&(_, scale)| f >= scale)
        .unwrap_or(("M", 1e6));
    format!("{:.1} {unit}", f / scale)
}

/// A time as the text report gives it (`1.2µs`, `2.50s`), short enough
/// for a figures column past 1000 s too: `3.6e4s`.
fn time(v: Option<u64>) -> String {
    match v {
        Some(v) if v >= 1_000_000_000_000 => format!("{:.1e}s", v as f64 / 1e9),
        v => ns(v),
    }
}

/// A power-of-two size as a bin edge label: `512`, `4K`, `16M`, `16E`.
fn edge_label(v: u128) -> String {
    const UNITS: [&str; 8] = ["", "K", "M", "G", "T", "P", "E", "Z"];
    let (mut v, mut unit) = (v, 0);
    while v >= 1024 && v.is_multiple_of(1024) && unit < UNITS.len() - 1 {
        v /= 1024;
        unit += 1;
    }
    format!("{v}{}", UNITS[unit])
}

/// The title and the totals; returns the y below them.
fn header(out: &mut impl Write, name: &str, r: &Report, shown: usize) -> io::Result<f64> {
    let mut y = 34.0;
    writeln!(out, "<g><title>{}</title>", esc(name))?;
    titled(out, MARGIN, y, 20, "reanimator stats", &short_path(name))?;
    writeln!(out, "</g>")?;
    let t = &r.totals;
    y += 26.0;
    text(out, MARGIN, y, "", &calls_line(r))?;
    y += 19.0;
    text(out, MARGIN, y, "", &totals_line(t))?;
    let what = heading(r.by);
    let groups = r.groups.len();
    let drawn = if shown == groups {
        format!("{groups} groups, all drawn")
    } else {
        format!("{groups} groups, the {shown} with the most calls drawn")
    };
    y += 19.0;
    text(
        out,
        MARGIN,
        y,
        &format!(r#" font-size="12" fill="{GREY}""#),
        &format!("grouped by {what}: {drawn}"),
    )?;
    Ok(y + 6.0)
}

/// A group's figures in words, for its row's tooltip.
fn tooltip(g: &GroupReport) -> String {
    let l = &g.latency_ns;
    format!(
        "{}: {} calls, {} errors, {} unfinished; read {}, written {}; latency min {} p50 {} \
         p90 {} p99 {} p99.9 {} max {}{}",
        label(g),
        g.calls,
        g.errors,
        g.unfinished,
        bytes(g.bytes_read),
        bytes(g.bytes_written),
        ns(l.min),
        ns(l.p50),
        ns(l.p90),
        ns(l.p99),
        ns(l.p99_9),
        ns(l.max),
        if l.exact || l.count == 0 {
            ""
        } else {
            " (quantiles within 0.8 %)"
        }
    )
}

/// The background of a table of `rows` rows from `top`: every other row
/// shaded, to read a row across. Drawn before anything over it.
fn stripes(out: &mut impl Write, rows: usize, top: f64) -> io::Result<()> {
    for k in (1..rows).step_by(2) {
        rect(
            out,
            MARGIN,
            top + k as f64 * ROW,
            WIDTH - 2.0 * MARGIN,
            ROW,
            &format!(r#"fill="{STRIPE}""#),
        )?;
    }
    Ok(())
}

/// Starts row `k` of a table whose rows begin at `top`: its tooltip
/// group (closed by the caller) and its name. Returns the y of the
/// row's middle.
fn row(out: &mut impl Write, g: &GroupReport, k: usize, top: f64) -> io::Result<f64> {
    let mid = top + (k as f64 + 0.5) * ROW;
    writeln!(out, "<g><title>{}</title>", esc(&tooltip(g)))?;
    text(
        out,
        MARGIN + 4.0,
        mid + 4.0,
        r#" font-size="12""#,
        &clip(&label(g), LABEL_CHARS),
    )?;
    Ok(mid)
}

/// The length of a bar for `v` of `most` on `width` px: at least a pixel
/// when `v` is not 0, so a small group is still seen.
fn bar_length(v: u64, most: u64, width: f64) -> f64 {
    if v == 0 {
        0.0
    } else {
        (share(v, most) * width).max(1.0)
    }
}

/// Calls (errors marked), bytes read and bytes written of the drawn
/// groups as bars; returns the y below them.
fn calls_and_bytes(
    out: &mut impl Write,
    r: &Report,
    shown: &[&GroupReport],
    y: f64,
) -> io::Result<f64> {
    let mut y = section(
        out,
        y,
        "Calls and bytes",
        &format!(
            "per {}, the most calls first; errors at the end of the calls bar",
            heading(r.by)
        ),
    )?;
    if shown.is_empty() {
        text(out, MARGIN, y + 20.0, "", "no calls")?;
        return Ok(y + 26.0);
    }
    let calls_x = MARGIN + LABEL_WIDTH;
    let calls_width = 200.0;
    let read_x = calls_x + 420.0;
    let written_x = read_x + 225.0;
    let bytes_width = 140.0;
    y += 20.0;
    writeln!(
        out,
        r#"<text x="{}" y="{}" font-size="12" font-weight="bold">calls<tspan dx="5" fill="{ERRORS}">(errors)</tspan></text>"#,
        px(calls_x),
        px(y)
    )?;
    let bold = r#" font-size="12" font-weight="bold""#;
    text(out, read_x, y, bold, "bytes read")?;
    text(out, written_x, y, bold, "bytes written")?;
    let most_calls = shown.iter().map(|g| g.calls).max().unwrap_or(0);
    // One scale for reads and writes, so that they compare.
    let most_bytes = shown
        .iter()
        .map(|g| g.bytes_read.max(g.bytes_written))
        .max()
        .unwrap_or(0);
    let top = y + 6.0;
    stripes(out, shown.len(), top)?;
    for (k, g) in shown.iter().enumerate() {
        let mid = row(out, g, k, top)?;
        let (bar_y, bar_h) = (mid - 7.0, 14.0);
        let w = bar_length(g.calls, most_calls, calls_width);
        rect(out, calls_x, bar_y, w, bar_h, &format!(r#"fill="{CALLS}""#))?;
        let mut figures = esc(&count(g.calls));
        if g.errors > 0 {
            let e = (w * share(g.errors, g.calls)).clamp(1.5_f64.min(w), w);
            rect(
                out,
                calls_x + w - e,
                bar_y,
                e,
                bar_h,
                &format!(r#"fill="{ERRORS}""#),
            )?;
            figures.push_str(&format!(
                r#"<tspan dx="5" fill="{ERRORS}">({} errors, {})</tspan>"#,
                esc(&count(g.errors)),
                esc(&percent(share(g.errors, g.calls)))
            ));
        }
        writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="12">{figures}</text>"#,
            px(calls_x + w + 6.0),
            px(mid + 4.0)
        )?;
        for (x, v, colour) in [
            (read_x, g.bytes_read, READ),
            (written_x, g.bytes_written, WRITE),
        ] {
            if v == 0 {
                text(
                    out,
                    x,
                    mid + 4.0,
                    &format!(r#" font-size="12" fill="{GREY}""#),
                    "–",
                )?;
                continue;
            }
            let w = bar_length(v, most_bytes, bytes_width);
            rect(out, x, bar_y, w, bar_h, &format!(r#"fill="{colour}""#))?;
            text(out, x + w + 6.0, mid + 4.0, r#" font-size="12""#, &bytes(v))?;
        }
        writeln!(out, "</g>")?;
    }
    y = top + shown.len() as f64 * ROW;
    let rest = &r.groups[shown.len()..];
    if !rest.is_empty() {
        let calls = rest.iter().fold(0u64, |a, g| a.saturating_add(g.calls));
        y += 18.0;
        text(
            out,
            MARGIN + 4.0,
            y,
            &format!(r#" font-size="12" fill="{GREY}""#),
            &format!(
                "{} not drawn: {} calls, {:.1} % of all (the text report and \
                 --json list them)",
                crate::counted(rest.len() as u64, "more group", "more groups"),
                count(calls),
                share(calls, r.totals.calls) * 100.0
            ),
        )?;
    }
    Ok(y)
}

/// A latency strip per drawn group on one logarithmic time axis; returns
/// the y below them.
fn latency(out: &mut impl Write, shown: &[&GroupReport], y: f64) -> io::Result<f64> {
    let mut y = section(
        out,
        y,
        "Latency",
        "exit − entry of the calls that returned, log scale: thickest from p50 to p90, \
         thinning out to the maximum",
    )?;
    let summaries = shown.iter().map(|g| &g.latency_ns);
    let ends = summaries.flat_map(|l| [l.min, l.max]).flatten();
    let Some(axis) = LogAxis::over(ends) else {
        let what = if shown.iter().any(|g| g.latency_ns.count > 0) {
            "no call took more than 0 ns"
        } else {
            "no call returned"
        };
        text(out, MARGIN, y + 20.0, "", what)?;
        return Ok(y + 26.0);
    };
    let figures_x = WIDTH - MARGIN - 3.0 * FIGURE_WIDTH;
    let (left, right) = (MARGIN + LABEL_WIDTH, figures_x - 24.0);
    let xs = |ns: u64| left + axis.frac(ns).clamp(0.0, 1.0) * (right - left);
    // The legend: a made-up strip with its marks named.
    y += 22.0;
    let sample = Summary {
        count: 1,
        min: Some(1),
        p50: Some(10),
        p90: Some(100),
        p99: Some(1_000),
        p99_9: Some(10_000),
        max: Some(100_000),
        mean: None,
        exact: true,
    };
    let legend = LogAxis { lo: 0, hi: 5 };
    text(
        out,
        MARGIN,
        y + 4.0,
        &format!(r#" font-size="12" fill="{GREY}""#),
        "how to read a strip:",
    )?;
    let (l0, l1) = (MARGIN + 160.0, MARGIN + 560.0);
    let lx = |ns: u64| l0 + legend.frac(ns) * (l1 - l0);
    strip(out, &sample, lx, y)?;
    let small = format!(r#" font-size="11" fill="{GREY}" text-anchor="middle""#);
    for (v, name) in [
        (1, "min"),
        (10, "p50"),
        (100, "p90"),
        (1_000, "p99"),
        (10_000, "p99.9"),
        (100_000, "max"),
    ] {
        text(out, lx(v), y + 22.0, &small, name)?;
    }
    // The axis: decades over the rows, labelled above and below.
    y += 48.0;
    let bold_end = r#" font-size="12" font-weight="bold" text-anchor="end""#;
    for (k, head) in ["p50", "p99", "max"].iter().enumerate() {
        text(
            out,
            figures_x + (k + 1) as f64 * FIGURE_WIDTH,
            y,
            bold_end,
            head,
        )?;
    }
    let top = y + 16.0;
    let bottom = top + shown.len() as f64 * ROW;
    let decades = axis.hi - axis.lo;
    let per_decade = (right - left) / f64::from(decades);
    let widest = (axis.lo..=axis.hi)
        .map(|e| text_width(&decade_label(e), 11.0))
        .fold(0.0, f64::max);
    // Digits are wider than the rough text width says.
    let every = (((widest * 1.1 + 14.0) / per_decade).ceil() as u32).max(1);
    stripes(out, shown.len(), top)?;
    let labels = [top - 4.0, bottom + 14.0];
    axis.draw_decades(out, xs, (top, bottom), every, &labels, per_decade >= 60.0)?;
    for (k, g) in shown.iter().enumerate() {
        let mid = row(out, g, k, top)?;
        let l = &g.latency_ns;
        if l.count == 0 {
            text(
                out,
                left,
                mid + 4.0,
                &format!(r#" font-size="12" fill="{GREY}""#),
                "no call returned",
            )?;
        } else {
            strip(out, l, xs, mid)?;
        }
        for (k, v) in [l.p50, l.p99, l.max].into_iter().enumerate() {
            text(
                out,
                figures_x + (k + 1) as f64 * FIGURE_WIDTH,
                mid + 4.0,
                r#" font-size="12" text-anchor="end""#,
                &time(v),
            )?;
        }
        writeln!(out, "</g>")?;
    }
    line(out, (left, bottom), (right, bottom), GREY)?;
    Ok(bottom + 20.0)
}

/// One latency strip centred on `mid`, `xs` placing a time: a thin line
/// from the minimum to p50, the body from p50 to p90, thinner to p99
/// and p99.9, a hairline to the maximum (a dot); p50 a dark tick. A
/// summary without values draws nothing.
fn strip(out: &mut impl Write, l: &Summary, xs: impl Fn(u64) -> f64, mid: f64) -> io::Result<()> {
    let (Some(min), Some(p50), Some(p90), Some(p99), Some(p99_9), Some(max)) =
        (l.min, l.p50, l.p90, l.p99, l.p99_9, l.max)
    else {
        return Ok(());
    };
    let fill = format!(r#"fill="{LATENCY}""#);
    for (from, to, height) in [
        (min, p50, 2.0),
        (p50, p90, 12.0),
        (p90, p99, 8.0),
        (p99, p99_9, 5.0),
        (p99_9, max, 2.0),
    ] {
        let (a, b) = (xs(from), xs(to));
        rect(out, a, mid - height / 2.0, b - a, height, &fill)?;
    }
    writeln!(
        out,
        r#"<circle cx="{}" cy="{}" r="3.5" fill="{LATENCY}"/>"#,
        px(xs(max)),
        px(mid)
    )?;
    writeln!(
        out,
        r#"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="{MEDIAN}" stroke-width="2.5"/>"#,
        px(mid - 9.0),
        px(mid + 9.0),
        x = px(xs(p50))
    )
}

/// One size histogram to draw: its group, `reads` or `writes`, the
/// sizes and their colour.
struct Panel<'a> {
    group: &'a GroupReport,
    dir: &'static str,
    sizes: &'a SizeReport,
    colour: &'static str,
}

/// The size histograms of the busiest groups with transfers, a few a
/// row; returns the y below them.
fn sizes(out: &mut impl Write, r: &Report, y: f64) -> io::Result<f64> {
    let mut y = section(
        out,
        y,
        "Transfer sizes",
        "bytes per successful read or write, in power-of-two bins; the most common exact \
         size marked",
    )?;
    let panels: Vec<Panel> = r
        .groups
        .iter()
        .flat_map(|g| {
            [
                ("reads", &g.read_sizes, READ),
                ("writes", &g.write_sizes, WRITE),
            ]
            .into_iter()
            .filter_map(move |(dir, s, colour)| {
                s.as_ref().map(|sizes| Panel {
                    group: g,
                    dir,
                    sizes,
                    colour,
                })
            })
        })
        .collect();
    if panels.is_empty() {
        text(out, MARGIN, y + 20.0, "", "no reads or writes")?;
        return Ok(y + 26.0);
    }
    let per_row = PANELS_PER_ROW as f64;
    let w = (WIDTH - 2.0 * MARGIN - (per_row - 1.0) * PANEL_GAP) / per_row;
    let drawn = panels.len().min(PANELS);
    for (k, p) in panels.iter().take(PANELS).enumerate() {
        let x = MARGIN + (k % PANELS_PER_ROW) as f64 * (w + PANEL_GAP);
        let top = y + (k / PANELS_PER_ROW) as f64 * PANEL_HEIGHT;
        size_panel(out, p, x, top, w)?;
    }
    y += drawn.div_ceil(PANELS_PER_ROW) as f64 * PANEL_HEIGHT;
    if panels.len() > drawn {
        text(
            out,
            MARGIN,
            y,
            &format!(r#" font-size="12" fill="{GREY}""#),
            &format!(
                "{} more histograms not drawn (the text report with --histograms N, and \
                 --json, have them)",
                panels.len() - drawn
            ),
        )?;
    }
    Ok(y)
}

/// The index of the power-of-two bin holding `v`: 0 for 0, `i` for
/// `2^(i-1)..2^i - 1`, as [`reanimator_analysis::Histogram::log2_bins`]
/// makes them.
fn bin_index(v: u64) -> usize {
    if v == 0 {
        0
    } else {
        64 - v.leading_zeros() as usize
    }
}

/// The lower edge of bin `i` (and the upper edge of bin `i - 1`).
fn bin_edge(i: usize) -> u128 {
    if i == 0 {
        0
    } else {
        1u128 << (i - 1).min(127)
    }
}

/// One size histogram in the box at (`x`, `top`), `w` wide: the share
/// of the transfers per bin, the bin of the most common size marked.
fn size_panel(out: &mut impl Write, p: &Panel, x: f64, top: f64, w: f64) -> io::Result<()> {
    let s = p.sizes;
    let n = s.summary.count;
    writeln!(out, "<g><title>{}</title>", esc(&label(p.group)))?;
    titled(out, x, top + 18.0, 13, &clip(&label(p.group), 28), p.dir)?;
    writeln!(out, "</g>")?;
    text(
        out,
        x,
        top + 36.0,
        &format!(r#" font-size="11" fill="{GREY}""#),
        &format!(
            "{} {}, p50 {}, max {}",
            count(n),
            p.dir,
            bytes(s.summary.p50.unwrap_or(0)),
            bytes(s.summary.max.unwrap_or(0))
        ),
    )?;
    // The most common size, when at least 1 % of the transfers surely
    // have it (a listed count may overstate by `error`: say what is
    // certain).
    let common = s
        .top
        .first()
        .map(|t| (t, t.count.saturating_sub(t.error)))
        .filter(|&(_, sure)| sure > 0 && share(sure, n) >= 0.01);
    let marked = common.map(|(t, _)| bin_index(t.size));
    match common {
        Some((t, sure)) => {
            let at_least = if t.error > 0 { "≥" } else { "" };
            text(
                out,
                x,
                top + 54.0,
                r#" font-size="12" font-weight="bold""#,
                &format!(
                    "most common {}: ×{at_least}{} ({at_least}{:.1} %)",
                    exact_size(t.size),
                    count(sure),
                    share(sure, n) * 100.0
                ),
            )?;
        }
        None => text(
            out,
            x,
            top + 54.0,
            &format!(r#" font-size="12" fill="{GREY}""#),
            "no exact size makes up 1 % of them",
        )?,
    }
    let (left, right) = (x + 38.0, x + w - 8.0);
    let (ptop, bottom) = (top + 78.0, top + PANEL_HEIGHT - 44.0);
    let ys = |q: f64| bottom - q * (bottom - ptop);
    let small = format!(r#" font-size="10" fill="{GREY}""#);
    for pct in [0u32, 50, 100] {
        let yy = ys(f64::from(pct) / 100.0);
        line(out, (left, yy), (right, yy), GRID)?;
        text(
            out,
            left - 5.0,
            yy + 3.5,
            &format!(r#"{small} text-anchor="end""#),
            &format!("{pct} %"),
        )?;
    }
    let (Some(first), Some(last)) = (s.histogram.first(), s.histogram.last()) else {
        text(out, left + 6.0, ys(0.5), &small, "no transfers")?;
        return Ok(());
    };
    let (first, last) = (bin_index(first.from), bin_index(last.from));
    let bins = (last.saturating_sub(first) + 1) as f64;
    let bw = ((right - left) / bins).min(40.0);
    for b in &s.histogram {
        let i = bin_index(b.from);
        let q = share(b.count, n);
        let bx = left + i.saturating_sub(first) as f64 * bw;
        let h = (q * (bottom - ptop)).max(1.0);
        let strong = marked == Some(i);
        let range = if b.from == b.to {
            bytes(b.from)
        } else {
            format!("{}–{}", bytes(b.from), bytes(b.to))
        };
        writeln!(
            out,
            "<g><title>{}: {} {} ({:.1} %)</title>",
            esc(&range),
            b.count,
            p.dir,
            q * 100.0
        )?;
        let opacity = if strong { "" } else { r#" fill-opacity="0.5""# };
        rect(
            out,
            bx + 0.5,
            bottom - h,
            (bw - 1.0).max(1.0),
            h,
            &format!(r#"fill="{}"{opacity}"#, p.colour),
        )?;
        writeln!(out, "</g>")?;
        if strong {
            let size = exact_size(common.map_or(0, |(t, _)| t.size));
            // Over its bar, kept inside the panel.
            let half = text_width(&size, 11.0) / 2.0;
            let cx = (bx + bw / 2.0).clamp(left + half, (right - half).max(left + half));
            text(
                out,
                cx,
                (bottom - h - 4.0).max(ptop - 2.0),
                r#" font-size="11" font-weight="bold" text-anchor="middle""#,
                &size,
            )?;
        }
    }
    // Bin edges, every `step`-th power of two labelled (1, 4, 16, ... or
    // 1, 32, 1K, ... or 1, 1K, 1M, ...) as room allows.
    let widest = (first..=last + 1)
        .map(|i| text_width(&edge_label(bin_edge(i)), 10.0))
        .fold(0.0, f64::max);
    let step = [1, 2, 5, 10, 20]
        .into_iter()
        .find(|&k| f64::from(k) * bw >= widest + 8.0)
        .unwrap_or(30) as usize;
    for i in first..=last + 1 {
        let ex = left + (i - first) as f64 * bw;
        line(out, (ex, bottom), (ex, bottom + 3.0), GREY)?;
        // Edge 0 is labelled, and then not edge 1 beside it.
        let labelled = match i {
            0 => true,
            1 => step == 1 || first > 0,
            i => (i - 1) % step == 0,
        };
        if labelled {
            text(
                out,
                ex,
                bottom + 14.0,
                &format!(r#"{small} text-anchor="middle""#),
                &edge_label(bin_edge(i)),
            )?;
        }
    }
    line(out, (left, bottom), (right, bottom), GREY)?;
    text(
        out,
        (left + right) / 2.0,
        bottom + 28.0,
        &format!(r#"{small} text-anchor="middle""#),
        "bytes (K = 1024)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::check_well_formed;
    use reanimator_analysis::{Bin, GroupBy, TopSize};

    fn summary(values: &[u64]) -> Summary {
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let at = |q: f64| {
            let n = sorted.len();
            (n > 0).then(|| sorted[((q * n as f64).ceil() as usize).clamp(1, n) - 1])
        };
        Summary {
            count: sorted.len() as u64,
            min: sorted.first().copied(),
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            p99_9: at(0.999),
            max: sorted.last().copied(),
            mean: None,
            exact: true,
        }
    }

    fn group(key: &str, calls: u64, latencies: &[u64]) -> GroupReport {
        GroupReport {
            key: key.into(),
            exe: None,
            calls,
            errors: 0,
            unfinished: 0,
            bytes_read: 0,
            bytes_written: 0,
            latency_ns: summary(latencies),
            read_sizes: None,
            write_sizes: None,
        }
    }

    fn sizes(bins: &[(u64, u64, u64)], top: &[(u64, u64, u64)]) -> SizeReport {
        let count = bins.iter().fold(0u64, |a, b| a.saturating_add(b.2));
        SizeReport {
            summary: Summary {
                count,
                ..summary(&[bins.first().map_or(0, |b| b.0)])
            },
            histogram: bins
                .iter()
                .map(|&(from, to, count)| Bin { from, to, count })
                .collect(),
            top: top
                .iter()
                .map(|&(size, count, error)| TopSize { size, count, error })
                .collect(),
        }
    }

    fn report(by: GroupBy, groups: Vec<GroupReport>) -> Report {
        let mut totals = group("total", 0, &[]);
        for g in &groups {
            totals.calls = totals.calls.saturating_add(g.calls);
        }
        Report {
            by,
            origin_ns: 0,
            start_ns: 0,
            end_ns: 0,
            duration_ns: 0,
            records: 0,
            processes: 0,
            threads: 0,
            lost_events: 0,
            totals,
            groups,
        }
    }

    fn draw(trace: &Path, r: &Report) -> String {
        let mut out = Vec::new();
        write_svg(&mut out, trace, r).unwrap();
        let svg = String::from_utf8(out).unwrap();
        check_well_formed(&svg);
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        svg
    }

    #[test]
    fn an_empty_report_still_draws() {
        let svg = draw(Path::new("empty.rtr"), &report(GroupBy::Call, vec![]));
        assert!(svg.contains("no calls") && svg.contains("no reads or writes"));
        assert!(svg.contains("no call returned"));
        assert!(svg.contains("0 calls (0 errors, 0 unfinished) in 0ns"));
    }

    /// u64::MAX everywhere, zero latencies, one-sample groups, groups
    /// without a returned call, and more groups and histograms than are
    /// drawn: sane numbers, no overflow (tests run unoptimised too).
    #[test]
    fn extreme_values_draw_sanely() {
        let max = u64::MAX;
        let mut huge = group("huge", max, &[0, 1, max, max]);
        huge.errors = max;
        huge.unfinished = max;
        huge.bytes_read = max;
        huge.bytes_written = max;
        huge.read_sizes = Some(sizes(
            &[(0, 0, 5), (1 << 63, max, max)],
            &[(max, max, max - 1)],
        ));
        huge.write_sizes = Some(sizes(&[(1, 1, 1)], &[(1, 1, 0)]));
        let mut one = group("one", 1, &[138]);
        one.errors = 1;
        let mut rare = group("rare", 10_000, &[5]);
        rare.errors = 1;
        let mut zeros = group("zeros", 3, &[0, 0, 0]);
        zeros.write_sizes = Some(sizes(&[(0, 0, 3)], &[(0, 3, 0)]));
        let mut groups = vec![
            huge,
            one,
            rare,
            zeros,
            group("unfinished", 2, &[]),
            group("none", 0, &[]),
        ];
        for k in 0..20u64 {
            let mut g = group(&format!("g{k}"), 1, &[k.saturating_mul(1_000)]);
            g.read_sizes = Some(sizes(&[(128, 255, 7)], &[(138, 7, 0)]));
            groups.push(g);
        }
        let mut r = report(GroupBy::Call, groups);
        r.duration_ns = max;
        r.totals.latency_ns = summary(&[0, max]);
        let svg = draw(Path::new("x.rtr"), &r);
        assert!(svg.contains("14 more groups not drawn"), "{svg}");
        assert!(svg.contains("(1 errors, &lt;0.1 %)"), "{svg}");
        assert!(svg.contains("more histograms not drawn"), "{svg}");
        assert!(svg.contains("18.4 E"), "u64::MAX calls, short");
        assert!(svg.contains(">1E<"), "edges up to the top bin");
        assert!(svg.contains("most common 138 B: ×7 (100.0 %)"), "{svg}");
        assert!(svg.contains("no call returned"));
        // Only the drawn groups have rows.
        assert!(svg.contains(">g5<") && !svg.contains(">g6<"));
    }

    #[test]
    fn names_are_escaped_and_non_utf8_paths_shown_lossily() {
        use std::os::unix::ffi::OsStrExt;
        let mut g = group("/tmp/a&b/<x>\"'y\u{1}", 4, &[1_000, 2_000]);
        g.exe = Some("sh&<>".into());
        g.write_sizes = Some(sizes(&[(8, 15, 4)], &[(9, 4, 0)]));
        let r = report(GroupBy::Process, vec![g]);
        let trace = std::ffi::OsStr::from_bytes(b"/t/\xff<&>.rtr");
        let svg = draw(Path::new(trace), &r);
        assert!(svg.contains("/t/\u{FFFD}&lt;&amp;&gt;.rtr"), "{svg}");
        assert!(svg.contains("/tmp/a&amp;b/&lt;x&gt;&quot;&apos;y\u{FFFD} sh&amp;&lt;&gt;"));
        assert!(svg.contains("grouped by process"));
        assert!(svg.contains("most common 9 B: ×4 (100.0 %)"));
    }

    #[test]
    fn figures_stay_short() {
        assert_eq!(count(9_999_999), "9999999");
        assert_eq!(count(12_345_678), "12.3 M");
        assert_eq!(count(u64::MAX), "18.4 E");
        assert_eq!(exact_size(0), "0 B");
        assert_eq!(exact_size(2083), "2083 B");
        assert_eq!(exact_size(16384), "16 KiB");
        assert_eq!(exact_size(3 << 20), "3 MiB");
        assert_eq!(exact_size(1 << 63), "8 EiB");
        assert_eq!(exact_size(u64::MAX), "18446744073709551615 B");
        assert_eq!(edge_label(0), "0");
        assert_eq!(edge_label(512), "512");
        assert_eq!(edge_label(4096), "4K");
        assert_eq!(edge_label(1 << 64), "16E");
        assert_eq!(percent(0.0), "0 %");
        assert_eq!(percent(0.0004), "<0.1 %");
        assert_eq!(percent(0.004), "0.4 %");
        assert_eq!(percent(0.18), "18 %");
        assert_eq!(percent(0.9999), ">99.9 %");
        assert_eq!(percent(1.0), "100 %");
        assert_eq!(time(Some(2_500_000_000)), "2.50s");
        assert_eq!(time(Some(36_000_000_000_000)), "3.6e4s");
        assert_eq!(time(Some(u64::MAX)), "1.8e10s");
        assert_eq!(time(None), "-");
        assert_eq!((bin_index(0), bin_index(1), bin_index(138)), (0, 1, 8));
        assert_eq!(
            (bin_edge(8), bin_index(u64::MAX), bin_edge(65)),
            (128, 64, 1 << 64)
        );
    }
}
