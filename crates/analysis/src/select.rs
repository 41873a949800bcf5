//! `select`: a new, valid trace holding the records a filter keeps, with
//! their buffers, the process records of the kept processes and the
//! initial file-system state, so the subset can still be dumped, analysed
//! and, where it is self-contained, replayed.

use std::path::Path;

use reanimator_trace::{Record, Writer, WriterOptions};

use crate::filter::Filter;
use crate::scan::Scan;
use crate::Error;

/// What a selection kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SelectReport {
    /// Records read from the input.
    pub read: u64,
    /// Records written.
    pub kept: u64,
    /// System call events written.
    pub syscalls: u64,
}

/// Writes the records of `trace` that `filter` keeps to a new trace `out`
/// (refused if it exists, unless `overwrite`). The meta frame is copied
/// with `selected_from` added, so times stay comparable with the
/// original. On failure the partial output is removed.
/// `progress(done, total)` is called with bytes of the input read.
pub fn select(
    trace: &Path,
    out: &Path,
    filter: Filter,
    overwrite: bool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<SelectReport, Error> {
    if reanimator_trace::same_file(trace, out) {
        return Err(Error::Usage(format!(
            "{}: the output must differ from the input",
            out.display()
        )));
    }
    let mut scan = Scan::open(trace, filter, false, true)?;
    let mut meta = scan.reader().meta().clone();
    meta.extra.insert(
        "selected_from".into(),
        serde_json::Value::String(trace.display().to_string()),
    );
    let opts = WriterOptions {
        overwrite,
        flush_interval: None,
        ..WriterOptions::default()
    };
    let mut writer = Writer::create(out, &meta, opts).map_err(|e| match e.kind() {
        reanimator_trace::ErrorKind::Exists => Error::Exists(out.to_path_buf()),
        _ => Error::Trace(e),
    })?;
    let result = (|| {
        let mut report = SelectReport::default();
        while let Some(item) = scan.next_item()? {
            writer.write(&item.record)?;
            report.kept += 1;
            report.syscalls += u64::from(matches!(item.record, Record::Syscall(_)));
            if report.kept.is_multiple_of(4096) {
                progress(scan.reader().offset(), scan.reader().file_len());
            }
        }
        report.read = scan.reader().counts().records;
        Ok(report)
    })();
    // A failure anywhere (a full disk shows at the last frame) leaves no
    // half-written trace behind.
    match result.and_then(|report| writer.finish().map(|_| report).map_err(Error::Trace)) {
        Ok(report) => Ok(report),
        Err(e) => {
            let _ = std::fs::remove_file(out);
            Err(e)
        }
    }
}
