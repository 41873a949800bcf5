//! Hand-written SVG, shared by the pictures `fidelity --svg` and `stats
//! --svg` draw: one self-contained file (no script, fonts or files of
//! its own) that any browser or image viewer shows, written as text
//! without a drawing library. This module holds what both pictures need
//! so they look alike: escaping, coordinates, text, lines, boxes, section
//! titles, a logarithmic time axis, and writing the file safely.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};

/// Width of a picture in px: readable on a laptop screen as it is.
pub const WIDTH: f64 = 1120.0;
/// Left and right margin.
pub const MARGIN: f64 = 30.0;
/// Muted text: axes, notes.
pub const GREY: &str = "#555555";
/// Grid lines.
pub const GRID: &str = "#dddddd";
/// Paths longer than this are shortened in the middle (whole in a
/// tooltip), so a deep path does not run off the picture.
pub const PATH_CHARS: usize = 90;

/// Writes the picture of height `height` around `body` (its elements) to
/// `out`, with `title` as the document's title: the height is only known
/// once the body is laid out, so pictures draw into a buffer first.
pub fn document(out: &mut impl Write, height: f64, title: &str, body: &[u8]) -> io::Result<()> {
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" viewBox="0 0 {w} {height}" font-family="DejaVu Sans, Verdana, Arial, sans-serif" font-size="13">"#,
        w = WIDTH
    )?;
    writeln!(out, "<title>{}</title>", esc(title))?;
    writeln!(
        out,
        r#"<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="white"/>"#
    )?;
    out.write_all(body)?;
    writeln!(out, "</svg>")
}

/// `s` as XML character data or attribute value: markup characters
/// escaped, and characters XML 1.0 cannot hold at all (control
/// characters a file name may contain) replaced by U+FFFD.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c < ' ' || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// A coordinate, never `NaN` or infinite in the file.
pub fn px(v: f64) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    format!("{v:.1}")
}

/// Writes `content` at (`x`, `y`) with extra attributes `attrs` (already
/// valid XML).
pub fn text(out: &mut impl Write, x: f64, y: f64, attrs: &str, content: &str) -> io::Result<()> {
    writeln!(
        out,
        r#"<text x="{}" y="{}"{attrs}>{}</text>"#,
        px(x),
        px(y),
        esc(content)
    )
}

/// A one-pixel line: grid, axis or tick.
pub fn line(
    out: &mut impl Write,
    (x1, y1): (f64, f64),
    (x2, y2): (f64, f64),
    stroke: &str,
) -> io::Result<()> {
    writeln!(
        out,
        r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{stroke}"/>"#,
        px(x1),
        px(y1),
        px(x2),
        px(y2)
    )
}

/// A box at (`x`, `y`), `w` by `h` (never negative), painted as `paint`
/// says (attributes such as `fill="#0072B2"`, already valid XML): bars
/// and legend boxes.
pub fn rect(out: &mut impl Write, x: f64, y: f64, w: f64, h: f64, paint: &str) -> io::Result<()> {
    writeln!(
        out,
        r#"<rect x="{}" y="{}" width="{}" height="{}" {paint}/>"#,
        px(x),
        px(y),
        px(w.max(0.0)),
        px(h.max(0.0))
    )
}

/// `path`, shortened in the middle past [`PATH_CHARS`].
pub fn short_path(path: &str) -> String {
    let n = path.chars().count();
    if n <= PATH_CHARS {
        return path.to_string();
    }
    let keep = PATH_CHARS - 1;
    let head: String = path.chars().take(keep / 3).collect();
    let tail: String = path.chars().skip(n - (keep - keep / 3)).collect();
    format!("{head}…{tail}")
}

/// A rough width of `s` in px at font size `size`, for laying legends
/// out (no font metrics in a hand-written SVG).
pub fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.6
}

/// A bold `title` of font size `size` at (`x`, `y`), followed by a
/// `note` in grey (one text element, so the note starts where the
/// renderer ends the title).
pub fn titled(
    out: &mut impl Write,
    x: f64,
    y: f64,
    size: u32,
    title: &str,
    note: &str,
) -> io::Result<()> {
    writeln!(
        out,
        r#"<text x="{}" y="{}"><tspan font-size="{size}" font-weight="bold">{}</tspan><tspan dx="10" font-size="12" fill="{GREY}">{}</tspan></text>"#,
        px(x),
        px(y),
        esc(title),
        esc(note)
    )
}

/// A section title at `y`, with a note after it; returns the y below.
pub fn section(out: &mut impl Write, y: f64, title: &str, note: &str) -> io::Result<f64> {
    line(out, (MARGIN, y), (WIDTH - MARGIN, y), GRID)?;
    titled(out, MARGIN, y + 22.0, 16, title, note)?;
    Ok(y + 30.0)
}

/// A logarithmic axis over whole decades of ns: `10^lo` to `10^hi`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogAxis {
    /// The decade at the left end.
    pub lo: u32,
    /// The decade at the right end, above `lo`.
    pub hi: u32,
}

impl LogAxis {
    /// The decades holding every value above 0; `None` without any.
    pub fn over(values: impl Iterator<Item = u64>) -> Option<LogAxis> {
        let (mut min, mut max) = (u64::MAX, 0u64);
        for v in values.filter(|&v| v > 0) {
            min = min.min(v);
            max = max.max(v);
        }
        if max == 0 {
            return None;
        }
        let lo = min.ilog10();
        let hi = if 10u64.checked_pow(max.ilog10()) == Some(max) {
            max.ilog10()
        } else {
            max.ilog10() + 1
        };
        Some(LogAxis {
            lo,
            hi: hi.max(lo + 1),
        })
    }

    /// Where `ns` lies between the ends, 0 to 1 (0 at or below `10^lo`).
    pub fn frac(&self, ns: u64) -> f64 {
        let floor = 10f64.powi(self.lo as i32);
        ((ns as f64).max(floor).log10() - f64::from(self.lo)) / f64::from(self.hi - self.lo)
    }
}

impl LogAxis {
    /// Draws the decades between `top` and `bottom`, `xs` placing a time
    /// in ns: a grid line at each; every `every`-th decade labelled
    /// (`decade_label`) at each of `label_ys`; minor ticks at 2 to 9 times
    /// each decade under `bottom` when `minor` (there is room for them).
    pub fn draw_decades(
        &self,
        out: &mut impl Write,
        xs: impl Fn(u64) -> f64,
        (top, bottom): (f64, f64),
        every: u32,
        label_ys: &[f64],
        minor: bool,
    ) -> io::Result<()> {
        let attrs = format!(r#" font-size="11" text-anchor="middle" fill="{GREY}""#);
        for e in self.lo..=self.hi {
            let x = xs(10u64.saturating_pow(e));
            line(out, (x, top), (x, bottom), GRID)?;
            if (e - self.lo).is_multiple_of(every) {
                for &y in label_ys {
                    text(out, x, y, &attrs, &decade_label(e))?;
                }
            }
            if e < self.hi && minor {
                for m in 2..10u64 {
                    let xm = xs(m.saturating_mul(10u64.saturating_pow(e)));
                    line(out, (xm, bottom), (xm, bottom + 4.0), GREY)?;
                }
            }
        }
        Ok(())
    }
}

/// `1 ns`, `10 µs`, `100 ms`, `1 s`, `1000 s`: the label of `10^e` ns.
pub fn decade_label(e: u32) -> String {
    let (unit, shift) = match e {
        0..=2 => ("ns", 0),
        3..=5 => ("µs", 3),
        6..=8 => ("ms", 6),
        _ => ("s", 9),
    };
    match 10u128.checked_pow(e - shift) {
        Some(v) => format!("{v} {unit}"),
        None => format!("1e{e} ns"),
    }
}

/// Refuses `path` as a picture of `inputs` before they are read, when it
/// cannot be written: one of them (even with `force`), or an existing
/// file without `force`, so a long pass is not wasted.
pub fn refuse<'a>(
    path: &Path,
    force: bool,
    inputs: impl IntoIterator<Item = &'a Path>,
) -> Result<()> {
    if inputs
        .into_iter()
        .any(|input| reanimator_trace::same_file(path, input))
    {
        bail!(
            "{}: the picture must not overwrite a trace it is drawn from",
            path.display()
        );
    }
    if !force && std::fs::symlink_metadata(path).is_ok() && !special(path) {
        return Err(exists(path));
    }
    Ok(())
}

/// True when `path` is something other than a regular file or a
/// directory (`/dev/stdout`, a FIFO): written to as it is, never
/// replaced, and never refused as existing.
fn special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// The error for an output that exists, worded as the other commands'.
fn exists(path: &Path) -> anyhow::Error {
    anyhow!(
        "{}: already exists (use --force to overwrite)",
        path.display()
    )
}

/// Writes a picture to `path` with `draw`, so that `path` is never left
/// half-written: into a temporary file beside it, then renamed over it
/// (with `force`) or linked to it (without, which fails if `path` has
/// appeared meanwhile). Something that is not a regular file or a
/// directory (`/dev/stdout`, a FIFO) is written to as it is.
pub fn save(
    path: &Path,
    force: bool,
    draw: impl FnOnce(&mut BufWriter<std::fs::File>) -> io::Result<()>,
) -> Result<()> {
    let cannot = || format!("cannot write {}", path.display());
    if special(path) {
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .with_context(cannot)?;
        let mut out = BufWriter::new(file);
        return draw(&mut out)
            .and_then(|()| out.flush())
            .with_context(cannot);
    }
    let Some(name) = path.file_name() else {
        bail!("{}: not a file name", path.display());
    };
    let mut tmp_name = OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .with_context(cannot)?;
    let written = (|| -> Result<()> {
        let mut out = BufWriter::new(file);
        draw(&mut out)
            .and_then(|()| out.flush())
            .with_context(cannot)?;
        if force {
            return std::fs::rename(&tmp, path).with_context(cannot);
        }
        match std::fs::hard_link(&tmp, path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(exists(path)),
            // A file system without hard links: rename, having looked.
            Err(_) if std::fs::symlink_metadata(path).is_ok() => Err(exists(path)),
            Err(_) => std::fs::rename(&tmp, path).with_context(cannot),
        }
    })();
    // Gone after a rename; after a link or a failure, removed here.
    let _ = std::fs::remove_file(&tmp);
    written
}

/// Checks that `svg` is well-formed as far as a hand check can tell:
/// tags balanced, attribute values quoted, no raw `&` or `<` in text.
#[cfg(test)]
pub fn check_well_formed(svg: &str) {
    let mut open: Vec<&str> = Vec::new();
    let mut rest = svg;
    assert!(rest.starts_with("<?xml"), "{svg}");
    rest = &rest[rest.find("?>").unwrap() + 2..];
    while let Some(start) = rest.find('<') {
        let text = &rest[..start];
        for (i, _) in text.match_indices('&') {
            let entity = &text[i..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                    .iter()
                    .any(|e| entity.starts_with(e)),
                "raw & in {text:?}"
            );
        }
        rest = &rest[start + 1..];
        let end = rest.find('>').unwrap();
        let tag = &rest[..end];
        assert!(!tag.contains('<'), "< inside a tag: {tag:?}");
        assert_eq!(
            tag.matches('"').count() % 2,
            0,
            "unbalanced quotes: {tag:?}"
        );
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(open.pop(), Some(name), "closing {name}");
        } else if !tag.ends_with('/') {
            open.push(tag.split_whitespace().next().unwrap());
        }
        rest = &rest[end + 1..];
    }
    assert!(open.is_empty(), "unclosed {open:?}");
    assert_eq!(rest.trim(), "");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_for_xml() {
        assert_eq!(
            esc(r#"a&b<c>"d"'e'"#),
            "a&amp;b&lt;c&gt;&quot;d&quot;&apos;e&apos;"
        );
        assert_eq!(esc("x\u{1}y\tz µs"), "x\u{FFFD}y\tz µs");
        assert_eq!(px(f64::NAN), "0.0");
        assert_eq!(px(f64::INFINITY), "0.0");
    }

    #[test]
    fn the_log_axis_covers_whole_decades() {
        let axis = LogAxis::over([0, 850, 1_000, 42_000].into_iter()).unwrap();
        assert_eq!(axis, LogAxis { lo: 2, hi: 5 });
        assert_eq!(axis.frac(0), 0.0);
        assert!((axis.frac(10_000) - 2.0 / 3.0).abs() < 1e-12);
        let one = LogAxis::over([1_000, 1_000].into_iter()).unwrap();
        assert_eq!(one, LogAxis { lo: 3, hi: 4 });
        assert_eq!(LogAxis::over([0, 0].into_iter()), None);
        assert!(LogAxis::over([u64::MAX].into_iter()).is_some());
        let labels: Vec<String> = [0, 2, 3, 4, 6, 9, 12].map(decade_label).to_vec();
        assert_eq!(
            labels,
            ["1 ns", "100 ns", "1 µs", "10 µs", "1 ms", "1 s", "1000 s"]
        );
    }

    #[test]
    fn long_paths_are_shortened_in_the_middle() {
        let long = format!("/{}/trace.rtr", "d".repeat(200));
        let s = short_path(&long);
        assert_eq!(s.chars().count(), PATH_CHARS);
        assert!(s.starts_with("/ddd") && s.ends_with("d/trace.rtr") && s.contains('…'));
        assert_eq!(short_path("t.rtr"), "t.rtr");
    }

    #[test]
    fn a_picture_is_never_left_half_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.svg");
        let input = dir.path().join("t.rtr");
        std::fs::write(&input, "trace").unwrap();
        save(&path, false, |o| o.write_all(b"one")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        // Refused without force, before and after drawing.
        assert!(refuse(&path, false, [input.as_path()]).is_err());
        let e = save(&path, false, |o| o.write_all(b"two")).unwrap_err();
        assert!(e.to_string().contains("already exists"), "{e}");
        // A failed drawing leaves the old picture and no temporary file.
        let e = save(&path, true, |o| {
            o.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(format!("{e:#}").contains("disk full"), "{e:#}");
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        save(&path, true, |o| o.write_all(b"three")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"three");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 2, "p.svg and t.rtr only: {names:?}");
        // Never the input, even with force.
        assert!(refuse(&input, true, [input.as_path()]).is_err());
        assert!(refuse(&path, true, [input.as_path()]).is_ok());
    }
}
