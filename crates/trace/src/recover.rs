//! Salvaging a damaged or unfinished trace.
//!
//! `recover` reads every frame whose checksum holds, skips damaged regions
//! by resynchronising on the next frame magic, and writes a new, complete
//! trace: the surviving records, one loss record per damaged region (never
//! a silent hole), buffers whose blob frame was lost marked `lost`, and an
//! end record. The input is never modified.

use std::path::Path;

use crate::codec::{self, BlobFrame, BlobRef, Delta};
use crate::error::{Error, ErrorKind, Result};
use crate::frame::{FrameHeader, FrameKind, FRAME_HEADER_LEN, FRAME_MAGIC};
use crate::meta::TraceMeta;
use crate::reader::{BlobStore, FrameSource};
use crate::record::{CaptureStatus, Loss, Record};
use crate::writer::{Writer, WriterOptions};

/// What `recover` kept and what it could not.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RecoverReport {
    /// Records written to the new trace (loss records included).
    pub records: u64,
    /// System call events among them.
    pub syscalls: u64,
    /// Frames read intact.
    pub frames_kept: u64,
    /// Damaged regions skipped.
    pub regions_skipped: u64,
    /// Bytes of the input that could not be used.
    pub bytes_skipped: u64,
    /// Records the damaged frames' headers said they held (a lower bound
    /// of what was lost: a header itself damaged says nothing).
    pub records_lost: u64,
    /// Captures whose buffer data was in a lost blob frame: system calls'
    /// buffers and pieces of files' initial contents alike.
    pub buffers_lost: u64,
    /// Whether the input had an intact end record (it was finished).
    pub had_end: bool,
    /// Whether the meta frame was intact.
    pub had_meta: bool,
    /// One line per damaged region: where and what.
    pub damage: Vec<String>,
}

/// Salvages `input` into a new trace at `output`.
pub fn recover(input: &Path, output: &Path, opts: WriterOptions) -> Result<RecoverReport> {
    recover_with_progress(input, output, opts, &mut |_, _| {})
}

/// [`recover()`], calling `progress(bytes_done, bytes_total)` after each
/// frame so a terminal can show how far it is.
pub fn recover_with_progress(
    input: &Path,
    output: &Path,
    opts: WriterOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<RecoverReport> {
    let mut created = false;
    let result = recover_into(input, output, opts, progress, &mut created);
    if result.is_err() && created {
        // No half-written trace is left behind (a full disk, a read error).
        let _ = std::fs::remove_file(output);
    }
    result
}

/// [`recover_with_progress`]'s work; `created` is set once `output` was
/// made (or replaced), so that a failure after it removes it.
fn recover_into(
    input: &Path,
    output: &Path,
    opts: WriterOptions,
    progress: &mut dyn FnMut(u64, u64),
    created: &mut bool,
) -> Result<RecoverReport> {
    let (mut src, _) = FrameSource::open(input)?;
    let mut report = RecoverReport::default();
    let mut meta = TraceMeta::default();
    let mut blobs = BlobStore::default();
    let mut raw = Vec::new();

    // The meta frame, if it survived.
    let start = src.offset;
    let first = src.next_header().and_then(|h| {
        let h = h.ok_or_else(|| Error::new(ErrorKind::Truncated))?;
        src.unpack(&h, &mut raw)?;
        Ok(h)
    });
    match first {
        Ok(h) if h.kind == FrameKind::Meta => match serde_json::from_slice::<TraceMeta>(&raw) {
            Ok(m) => {
                meta = m;
                report.had_meta = true;
                report.frames_kept += 1;
            }
            Err(e) => report
                .damage
                .push(format!("byte {start}: meta frame is not valid JSON ({e})")),
        },
        Ok(_) => {
            report
                .damage
                .push(format!("byte {start}: first frame is not the meta frame"));
            src.seek_to(start)?;
        }
        Err(e) => {
            report.damage.push(format!(
                "byte {start}: meta frame unreadable ({})",
                e.kind()
            ));
            src.seek_to(start)?;
        }
    }
    meta.extra.insert(
        "recovered_from".into(),
        serde_json::Value::String(input.display().to_string()),
    );

    let mut out = Writer::create(output, &meta, opts)?;
    *created = true;
    let mut last_seq = 0u64;
    // A loss before the first record kept is dated at the clock anchor
    // (taken as recording began), not at 0: `stats` would count the time
    // since boot as the trace's length.
    let mut last_time = meta.clock.monotonic_ns;
    let mut undated = Undated::default();

    loop {
        let at = src.offset;
        progress(at, src.len);
        // The records a damaged frame's header says it held: the checksum
        // covers header and payload alike, so a guess, kept only when the
        // header reads as a records frame.
        let mut said = 0;
        let frame = src.next_header().and_then(|h| match h {
            None => Ok(None),
            Some(h) => {
                if h.kind == FrameKind::Records {
                    said = u64::from(h.count);
                }
                src.unpack(&h, &mut raw).map(|()| Some(h))
            }
        });
        let h = match frame {
            Ok(None) => break,
            Ok(Some(h)) => h,
            Err(e) => {
                // Damage: find the next intact frame.
                let resume = resync(&mut src, at + 1)?;
                let skipped = resume.unwrap_or(src.len) - at;
                report.regions_skipped += 1;
                report.bytes_skipped += skipped;
                report.records_lost += said;
                report
                    .damage
                    .push(format!("bytes {at}..{}: {} ", at + skipped, e.kind()));
                undated.write(&mut out, Loss {
                    seq: last_seq + 1,
                    time_ns: last_time,
                    tgid: 0,
                    tid: 0,
                    count: said,
                    reason: format!("recover: {skipped} damaged bytes at offset {at} of the original trace ({})", e.kind()),
                })?;
                report.records += 1;
                match resume {
                    Some(o) => {
                        src.seek_to(o)?;
                        continue;
                    }
                    None => break,
                }
            }
        };
        report.frames_kept += 1;
        match h.kind {
            FrameKind::Blobs => {
                blobs.note(h.number, at);
                match BlobFrame::parse(std::mem::take(&mut raw), h.count) {
                    Ok(f) => blobs.insert(h.number, f),
                    Err(e) => report.damage.push(format!(
                        "byte {at}: blob frame {}: {}",
                        h.number,
                        e.kind()
                    )),
                }
            }
            FrameKind::Records => {
                let mut c = crate::varint::Cursor::new(&raw);
                let mut delta = Delta::default();
                let mut skipped = 0;
                let mut lost_here = 0u64;
                let src_ref = &mut src;
                let blobs_ref = &mut blobs;
                let mut resolve = |refs: &[BlobRef], _, captured| {
                    blobs_ref.resolve(src_ref, refs, captured, usize::MAX, true)
                };
                let mut kept = 0u64;
                loop {
                    match codec::next_record(&mut c, &mut delta, &mut resolve, &mut skipped, None) {
                        Ok(Some(mut r)) => {
                            let captures = match &mut r {
                                Record::Syscall(e) => {
                                    report.syscalls += 1;
                                    e.captures.as_mut_slice()
                                }
                                Record::PathData(d) => std::slice::from_mut(&mut d.data),
                                _ => &mut [],
                            };
                            for cap in captures {
                                if cap.data.is_none()
                                    && cap.captured > 0
                                    && cap.status != CaptureStatus::Lost
                                {
                                    cap.status = CaptureStatus::Lost;
                                    lost_here += 1;
                                }
                            }
                            last_seq = last_seq.max(r.seq());
                            last_time = last_time.max(r.time_ns());
                            undated.date(&mut out, r.time_ns())?;
                            out.write(&r)?;
                            report.records += 1;
                            kept += 1;
                        }
                        Ok(None) => break,
                        Err(e) => {
                            let rest = u64::from(h.count).saturating_sub(kept);
                            report.records_lost += rest;
                            report.damage.push(format!(
                                "byte {at}: frame {}: {}",
                                h.number,
                                e.kind()
                            ));
                            undated.write(
                                &mut out,
                                Loss {
                                    seq: last_seq + 1,
                                    time_ns: last_time,
                                    tgid: 0,
                                    tid: 0,
                                    count: rest,
                                    reason: format!(
                                        "recover: undecodable records in frame {} ({})",
                                        h.number,
                                        e.kind()
                                    ),
                                },
                            )?;
                            report.records += 1;
                            break;
                        }
                    }
                }
                report.buffers_lost += lost_here;
            }
            FrameKind::End => {
                report.had_end = true;
                // Bytes after the end record belong to no trace (the
                // reader refuses them): left out, and said.
                let rest = src.len.saturating_sub(src.offset);
                if rest > 0 {
                    report.regions_skipped += 1;
                    report.bytes_skipped += rest;
                    report.damage.push(format!(
                        "bytes {}..{}: after the end record, left out",
                        src.offset, src.len
                    ));
                }
                break;
            }
            FrameKind::Meta | FrameKind::Unknown(_) => {}
        }
    }
    undated.date(&mut out, 0)?;
    let (file, _) = out.finish()?;
    file.sync_all()
        .map_err(|e| Error::from(e).in_file(output))?;
    Ok(report)
}

/// Loss records with no time to give them: before any record was kept
/// in a trace whose meta frame (and clock anchor) was lost. They wait
/// for the first kept record and take its time; dated 0, `stats` counted
/// the time since boot as the trace's length.
#[derive(Default)]
struct Undated(Vec<Loss>);

impl Undated {
    /// Writes `loss` now if it has a time, or keeps it for [`Undated::date`].
    fn write<W: std::io::Write>(&mut self, out: &mut Writer<W>, loss: Loss) -> Result<()> {
        if loss.time_ns == 0 {
            self.0.push(loss);
            return Ok(());
        }
        out.write(&Record::Loss(loss))
    }

    /// Writes the kept losses dated `time_ns`.
    fn date<W: std::io::Write>(&mut self, out: &mut Writer<W>, time_ns: u64) -> Result<()> {
        for mut loss in self.0.drain(..) {
            loss.time_ns = time_ns;
            out.write(&Record::Loss(loss))?;
        }
        Ok(())
    }
}

/// Reads one whole frame at the current position into `raw`
/// (decompressed). `Ok(None)` at a clean end of file.
fn read_frame(src: &mut FrameSource, raw: &mut Vec<u8>) -> Result<Option<FrameHeader>> {
    let Some(h) = src.next_header()? else {
        return Ok(None);
    };
    src.unpack(&h, raw)?;
    Ok(Some(h))
}

/// Finds the first offset at or after `from` where an intact frame starts,
/// scanning in bounded windows.
fn resync(src: &mut FrameSource, from: u64) -> Result<Option<u64>> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(&src.path)?;
    let mut window = vec![0u8; 1 << 20];
    let mut pos = from;
    let mut scratch = Vec::new();
    while pos + FRAME_HEADER_LEN as u64 <= src.len {
        let n = file.read_at(&mut window, pos)?;
        if n < FRAME_MAGIC.len() {
            break;
        }
        for i in 0..=n - FRAME_MAGIC.len() {
            if window[i..i + FRAME_MAGIC.len()] == FRAME_MAGIC {
                let offset = pos + i as u64;
                src.seek_to(offset)?;
                if read_frame(src, &mut scratch).is_ok() {
                    src.seek_to(offset)?;
                    return Ok(Some(offset));
                }
            }
        }
        // Overlap by the magic's length less one, so no magic is split.
        pos += (n - (FRAME_MAGIC.len() - 1)) as u64;
    }
    Ok(None)
}
