//! `export`: a trace as three tables in standard Parquet (or CSV) files
//! that DuckDB, pyarrow/pandas, Polars and Spark read with no reanimator
//! code. docs/FORMAT.md lists every column.
//!
//! - `events`: one row per system call, with typed columns for the ids,
//!   times, return value, errno, the decoded arguments analysis needs
//!   (descriptor, path, offset, count, flags), the bytes moved, and the
//!   six raw argument words.
//! - `data`: one row per capture (user memory a call named), keyed by the
//!   event's `seq`, with the bytes.
//! - `processes`: one row per process start or exit record.
//!
//! The reading thread decodes records and fills Arrow column builders;
//! each table has an encoder thread that writes its finished batches
//! (64 Ki rows, or 4 MiB of buffer data), so decoding and compression use
//! both cores. Row groups close at 64 MiB (16 MiB for buffer data), which
//! bounds memory whatever the trace size. Columns
//! are zstd-compressed, except buffer data: snappy, several times faster
//! to write, read by every Parquet reader.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Int32Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder, UInt32Builder, UInt64Builder, UInt8Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use reanimator_catalogue::{self as catalogue, Kind};
use reanimator_text::errno_name;
use reanimator_trace::{ClockAnchor, ExitStatus, Record, Role, StartCause, SyscallEvent};

use crate::calls;
use crate::filter::Filter;
use crate::scan::Scan;
use crate::Error;

/// The file format of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Apache Parquet, zstd-compressed.
    Parquet,
    /// Comma-separated values with a header line; buffers in hex.
    Csv,
}

impl Format {
    fn extension(self) -> &'static str {
        match self {
            Format::Parquet => "parquet",
            Format::Csv => "csv",
        }
    }

    /// The files an export into `dir` writes: `events`, `data` and
    /// `processes`, so a caller can clean up after an interrupt.
    pub fn tables_in(self, dir: &Path) -> Vec<PathBuf> {
        ["events", "data", "processes"]
            .iter()
            .map(|t| dir.join(format!("{t}.{}", self.extension())))
            .collect()
    }
}

/// What an export wrote.
#[derive(Debug, Clone, Default)]
pub struct ExportReport {
    /// Rows of the events table.
    pub events: u64,
    /// Rows of the data table.
    pub captures: u64,
    /// Rows of the processes table.
    pub processes: u64,
    /// Kept records no table holds (signals, losses, path states and
    /// data); `reanimator dump --json` shows them.
    pub other_records: u64,
    /// The files written.
    pub files: Vec<PathBuf>,
}

/// The wall-clock column's time zone, as an offset: every reader knows it
/// without a time-zone database (CSV output needs that).
const UTC: &str = "+00:00";
/// Rows per batch handed to the encoder.
const BATCH_ROWS: usize = 64 * 1024;
/// Buffer bytes a data batch holds at most (more only for one event that
/// alone is larger) before it is handed over early: small
/// enough that the allocator recycles the buffers of one batch for the
/// next (no page faults), large enough to amortise the hand-over.
const BATCH_DATA_BYTES: usize = 4 << 20;
/// Encoded bytes after which a Parquet row group is closed.
const ROW_GROUP_BYTES: usize = 64 << 20;
/// The same for the data table: smaller, because a row group is written
/// out in one piece when it closes, and the last one after everything
/// else is done (64 MiB: 0.60-0.75 s for a 110 MB trace, 16 MiB:
/// 0.58-0.62 s).
const DATA_ROW_GROUP_BYTES: usize = 16 << 20;

fn field(name: &str, ty: DataType, nullable: bool) -> Field {
    Field::new(name, ty, nullable)
}

/// The schema of the events table.
pub fn events_schema() -> SchemaRef {
    use DataType::*;
    let mut f = vec![
        field("seq", UInt64, false),
        field("time_ns", UInt64, false),
        field("rel_ns", UInt64, false),
        field(
            "timestamp",
            // Microseconds: Spark refuses nanosecond timestamps unless told
            // to read them as plain integers; time_ns keeps every digit.
            Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
            false,
        ),
        field("exit_ns", UInt64, true),
        field("duration_ns", UInt64, true),
        field("tgid", UInt32, false),
        field("tid", UInt32, false),
        field("nr", UInt32, false),
        field("name", Utf8, false),
        field("ret", Int64, true),
        field("errno", UInt32, true),
        field("errno_name", Utf8, true),
        field("fd", Int32, true),
        field("path", Utf8, true),
        field("offset", Int64, true),
        field("count", UInt64, true),
        field("flags", Utf8, true),
        field("bytes_read", UInt64, false),
        field("bytes_written", UInt64, false),
    ];
    for i in 0..6 {
        f.push(field(&format!("arg{i}"), UInt64, false));
    }
    f.push(field("captures", UInt32, false));
    Arc::new(Schema::new(f))
}

/// The schema of the data table.
pub fn data_schema() -> SchemaRef {
    use DataType::*;
    Arc::new(Schema::new(vec![
        field("seq", UInt64, false),
        field("arg", UInt8, false),
        field("param", Utf8, true),
        field("role", Utf8, false),
        field("elem", UInt32, false),
        field("status", Utf8, false),
        field("len", UInt64, false),
        field("captured", UInt64, false),
        field("data", Binary, true),
    ]))
}

/// The schema of the processes table.
pub fn processes_schema() -> SchemaRef {
    use DataType::*;
    Arc::new(Schema::new(vec![
        field("seq", UInt64, false),
        field("time_ns", UInt64, false),
        field("event", Utf8, false),
        field("tgid", UInt32, false),
        field("tid", UInt32, false),
        field("ppid", UInt32, true),
        field("cause", Utf8, true),
        field("uid", UInt32, true),
        field("gid", UInt32, true),
        field("euid", UInt32, true),
        field("egid", UInt32, true),
        field("umask", UInt32, true),
        field("cwd", Utf8, true),
        field("exe", Utf8, true),
        field("argv", Utf8, true),
        field("env", Utf8, true),
        field("fds", Utf8, true),
        field("exit_kind", Utf8, true),
        field("exit_value", Int32, true),
        field("core_dumped", Boolean, true),
        field("groups", Utf8, true),
    ]))
}

/// Column builders of the events table.
struct Events {
    seq: UInt64Builder,
    time_ns: UInt64Builder,
    rel_ns: UInt64Builder,
    timestamp: TimestampMicrosecondBuilder,
    exit_ns: UInt64Builder,
    duration_ns: UInt64Builder,
    tgid: UInt32Builder,
    tid: UInt32Builder,
    nr: UInt32Builder,
    name: StringBuilder,
    ret: Int64Builder,
    errno: UInt32Builder,
    errno_name: StringBuilder,
    fd: Int32Builder,
    path: StringBuilder,
    offset: Int64Builder,
    count: UInt64Builder,
    flags: StringBuilder,
    bytes_read: UInt64Builder,
    bytes_written: UInt64Builder,
    args: [UInt64Builder; 6],
    captures: UInt32Builder,
    rows: usize,
}

impl Events {
    fn new() -> Self {
        Events {
            seq: UInt64Builder::with_capacity(BATCH_ROWS),
            time_ns: UInt64Builder::with_capacity(BATCH_ROWS),
            rel_ns: UInt64Builder::with_capacity(BATCH_ROWS),
            timestamp: TimestampMicrosecondBuilder::with_capacity(BATCH_ROWS).with_timezone(UTC),
            exit_ns: UInt64Builder::with_capacity(BATCH_ROWS),
            duration_ns: UInt64Builder::with_capacity(BATCH_ROWS),
            tgid: UInt32Builder::with_capacity(BATCH_ROWS),
            tid: UInt32Builder::with_capacity(BATCH_ROWS),
            nr: UInt32Builder::with_capacity(BATCH_ROWS),
            name: StringBuilder::new(),
            ret: Int64Builder::with_capacity(BATCH_ROWS),
            errno: UInt32Builder::with_capacity(BATCH_ROWS),
            errno_name: StringBuilder::new(),
            fd: Int32Builder::with_capacity(BATCH_ROWS),
            path: StringBuilder::new(),
            offset: Int64Builder::with_capacity(BATCH_ROWS),
            count: UInt64Builder::with_capacity(BATCH_ROWS),
            flags: StringBuilder::new(),
            bytes_read: UInt64Builder::with_capacity(BATCH_ROWS),
            bytes_written: UInt64Builder::with_capacity(BATCH_ROWS),
            args: std::array::from_fn(|_| UInt64Builder::with_capacity(BATCH_ROWS)),
            captures: UInt32Builder::with_capacity(BATCH_ROWS),
            rows: 0,
        }
    }

    fn append(&mut self, e: &SyscallEvent, path: Option<&[u8]>, clock: &ClockAnchor, start: u64) {
        self.seq.append_value(e.seq);
        self.time_ns.append_value(e.enter_ns);
        self.rel_ns.append_value(e.enter_ns.saturating_sub(start));
        self.timestamp
            .append_value((clock.to_realtime(e.enter_ns) / 1000).min(i64::MAX as u64) as i64);
        self.exit_ns.append_option(e.exit.map(|x| x.exit_ns));
        self.duration_ns.append_option(e.duration_ns());
        self.tgid.append_value(e.tgid);
        self.tid.append_value(e.tid);
        self.nr.append_value(e.nr);
        let row = catalogue::by_nr(e.nr);
        match row {
            Some(r) => self.name.append_value(r.name),
            None => self.name.append_value(format!("syscall_{}", e.nr)),
        }
        self.ret.append_option(e.exit.map(|x| x.ret));
        self.errno.append_option(e.exit.map(|x| x.errno()));
        self.errno_name
            .append_option(e.exit.and_then(|x| errno_name(x.errno())));
        let info = calls::info(e.nr);
        self.fd
            .append_option(info.fd.map(|i| e.args[i as usize] as i32));
        self.path
            .append_option(path.map(|p| String::from_utf8_lossy(p)));
        self.offset
            .append_option(info.offset.map(|i| e.args[i as usize] as i64));
        self.count
            .append_option(info.count.map(|i| e.args[i as usize]));
        let flags = info.flags.and_then(|i| {
            let kind = row?.params().get(i as usize)?.kind;
            match kind {
                Kind::Flags(set) => Some(set.decode(e.args[i as usize])),
                _ => None,
            }
        });
        self.flags.append_option(flags);
        let (read, written) = calls::io_bytes(e);
        self.bytes_read.append_value(read);
        self.bytes_written.append_value(written);
        for (b, &a) in self.args.iter_mut().zip(&e.args) {
            b.append_value(a);
        }
        self.captures.append_value(e.captures.len() as u32);
        self.rows += 1;
    }

    fn finish(&mut self) -> Result<RecordBatch, Error> {
        self.rows = 0;
        let mut cols: Vec<ArrayRef> = vec![
            Arc::new(self.seq.finish()),
            Arc::new(self.time_ns.finish()),
            Arc::new(self.rel_ns.finish()),
            Arc::new(self.timestamp.finish()),
            Arc::new(self.exit_ns.finish()),
            Arc::new(self.duration_ns.finish()),
            Arc::new(self.tgid.finish()),
            Arc::new(self.tid.finish()),
            Arc::new(self.nr.finish()),
            Arc::new(self.name.finish()),
            Arc::new(self.ret.finish()),
            Arc::new(self.errno.finish()),
            Arc::new(self.errno_name.finish()),
            Arc::new(self.fd.finish()),
            Arc::new(self.path.finish()),
            Arc::new(self.offset.finish()),
            Arc::new(self.count.finish()),
            Arc::new(self.flags.finish()),
            Arc::new(self.bytes_read.finish()),
            Arc::new(self.bytes_written.finish()),
        ];
        for a in &mut self.args {
            cols.push(Arc::new(a.finish()));
        }
        cols.push(Arc::new(self.captures.finish()));
        Ok(RecordBatch::try_new(events_schema(), cols)?)
    }
}

/// Column builders of the data table.
struct Data {
    seq: UInt64Builder,
    arg: UInt8Builder,
    param: StringBuilder,
    role: StringBuilder,
    elem: UInt32Builder,
    status: StringBuilder,
    len: UInt64Builder,
    captured: UInt64Builder,
    data: BinaryBuilder,
    rows: usize,
    bytes: usize,
}

impl Data {
    fn new() -> Self {
        Data {
            seq: UInt64Builder::new(),
            arg: UInt8Builder::new(),
            param: StringBuilder::new(),
            role: StringBuilder::new(),
            elem: UInt32Builder::new(),
            status: StringBuilder::new(),
            len: UInt64Builder::new(),
            captured: UInt64Builder::new(),
            data: BinaryBuilder::with_capacity(1024, BATCH_DATA_BYTES),
            rows: 0,
            bytes: 0,
        }
    }

    fn append(&mut self, e: &SyscallEvent) {
        let params = catalogue::by_nr(e.nr).map_or(&[][..], |r| r.params());
        for c in &e.captures {
            self.seq.append_value(e.seq);
            self.arg.append_value(c.arg);
            self.param
                .append_option(params.get(c.arg as usize).map(|p| p.name));
            self.role.append_value(match c.role {
                Role::Entry => "entry",
                Role::Exit => "exit",
            });
            self.elem.append_value(c.elem);
            self.status.append_value(c.status.name());
            self.len.append_value(c.len);
            self.captured.append_value(c.captured);
            self.data.append_option(c.data.as_deref());
            self.rows += 1;
        }
        self.bytes += buffer_bytes(e);
    }

    fn finish(&mut self) -> Result<RecordBatch, Error> {
        self.rows = 0;
        self.bytes = 0;
        // Sized for a whole batch up front: growing by doubling would copy
        // every buffer several times.
        let mut data = std::mem::replace(
            &mut self.data,
            BinaryBuilder::with_capacity(1024, BATCH_DATA_BYTES),
        );
        let cols: Vec<ArrayRef> = vec![
            Arc::new(self.seq.finish()),
            Arc::new(self.arg.finish()),
            Arc::new(self.param.finish()),
            Arc::new(self.role.finish()),
            Arc::new(self.elem.finish()),
            Arc::new(self.status.finish()),
            Arc::new(self.len.finish()),
            Arc::new(self.captured.finish()),
            Arc::new(data.finish()),
        ];
        Ok(RecordBatch::try_new(data_schema(), cols)?)
    }
}

/// The buffer bytes an event brings to the data table.
fn buffer_bytes(e: &SyscallEvent) -> usize {
    e.captures
        .iter()
        .filter_map(|c| c.data.as_ref())
        .map(|d| d.len())
        .sum()
}

/// Column builders of the processes table.
struct Processes {
    seq: UInt64Builder,
    time_ns: UInt64Builder,
    event: StringBuilder,
    tgid: UInt32Builder,
    tid: UInt32Builder,
    ppid: UInt32Builder,
    cause: StringBuilder,
    ids: [UInt32Builder; 5],
    cwd: StringBuilder,
    exe: StringBuilder,
    argv: StringBuilder,
    env: StringBuilder,
    fds: StringBuilder,
    exit_kind: StringBuilder,
    exit_value: Int32Builder,
    core_dumped: BooleanBuilder,
    groups: StringBuilder,
    rows: usize,
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn json_list(items: &[Vec<u8>]) -> String {
    serde_json::Value::from(items.iter().map(|s| text(s)).collect::<Vec<_>>()).to_string()
}

impl Processes {
    fn new() -> Self {
        Processes {
            seq: UInt64Builder::new(),
            time_ns: UInt64Builder::new(),
            event: StringBuilder::new(),
            tgid: UInt32Builder::new(),
            tid: UInt32Builder::new(),
            ppid: UInt32Builder::new(),
            cause: StringBuilder::new(),
            ids: std::array::from_fn(|_| UInt32Builder::new()),
            cwd: StringBuilder::new(),
            exe: StringBuilder::new(),
            argv: StringBuilder::new(),
            env: StringBuilder::new(),
            fds: StringBuilder::new(),
            exit_kind: StringBuilder::new(),
            exit_value: Int32Builder::new(),
            core_dumped: BooleanBuilder::new(),
            groups: StringBuilder::new(),
            rows: 0,
        }
    }

    /// Appends a process start or exit; other records are not for this
    /// table (returns false).
    fn append(&mut self, r: &Record) -> bool {
        let (seq, time_ns, tgid, tid) = (r.seq(), r.time_ns(), r.tgid(), r.tid());
        match r {
            Record::ProcessStart(p) => {
                self.event.append_value("start");
                self.ppid.append_value(p.ppid);
                self.cause.append_value(match p.cause {
                    StartCause::Spawned => "spawned",
                    StartCause::Attached => "attached",
                    StartCause::Created => "created",
                });
                for (b, v) in self
                    .ids
                    .iter_mut()
                    .zip([p.uid, p.gid, p.euid, p.egid, p.umask])
                {
                    b.append_value(v);
                }
                self.cwd.append_value(text(&p.cwd));
                self.exe.append_value(text(&p.exe));
                self.argv.append_value(json_list(&p.argv));
                self.env.append_value(json_list(&p.env));
                let fds: Vec<serde_json::Value> = p
                    .fds
                    .iter()
                    .map(|f| {
                        serde_json::json!({"fd": f.fd, "flags": f.flags,
                                           "offset": f.offset, "target": text(&f.target)})
                    })
                    .collect();
                self.fds
                    .append_value(serde_json::Value::from(fds).to_string());
                self.exit_kind.append_null();
                self.exit_value.append_null();
                self.core_dumped.append_null();
                self.groups.append_option(
                    p.groups
                        .as_ref()
                        .map(|g| serde_json::Value::from(g.clone()).to_string()),
                );
            }
            Record::ProcessExit(p) => {
                self.event.append_value("exit");
                self.ppid.append_null();
                self.cause.append_null();
                for b in &mut self.ids {
                    b.append_null();
                }
                for b in [
                    &mut self.cwd,
                    &mut self.exe,
                    &mut self.argv,
                    &mut self.env,
                    &mut self.fds,
                ] {
                    b.append_null();
                }
                let (kind, value, core) = match p.status {
                    ExitStatus::Exited(c) => ("exited", Some(c), false),
                    ExitStatus::Killed { signal, core } => ("killed", Some(signal), core),
                    ExitStatus::Detached => ("detached", None, false),
                    ExitStatus::Superseded { by } => ("superseded", Some(by as i32), false),
                };
                self.exit_kind.append_value(kind);
                self.exit_value.append_option(value);
                self.core_dumped.append_value(core);
                self.groups.append_null();
            }
            _ => return false,
        }
        self.seq.append_value(seq);
        self.time_ns.append_value(time_ns);
        self.tgid.append_value(tgid);
        self.tid.append_value(tid);
        self.rows += 1;
        true
    }

    fn finish(&mut self) -> Result<RecordBatch, Error> {
        self.rows = 0;
        let mut cols: Vec<ArrayRef> = vec![
            Arc::new(self.seq.finish()),
            Arc::new(self.time_ns.finish()),
            Arc::new(self.event.finish()),
            Arc::new(self.tgid.finish()),
            Arc::new(self.tid.finish()),
            Arc::new(self.ppid.finish()),
            Arc::new(self.cause.finish()),
        ];
        for b in &mut self.ids {
            cols.push(Arc::new(b.finish()));
        }
        for b in [
            &mut self.cwd,
            &mut self.exe,
            &mut self.argv,
            &mut self.env,
            &mut self.fds,
            &mut self.exit_kind,
        ] {
            cols.push(Arc::new(b.finish()));
        }
        cols.push(Arc::new(self.exit_value.finish()));
        cols.push(Arc::new(self.core_dumped.finish()));
        cols.push(Arc::new(self.groups.finish()));
        Ok(RecordBatch::try_new(processes_schema(), cols)?)
    }
}

/// Columns of the tables whose values are (nearly) all distinct: ids,
/// times, offsets and raw argument words (mostly addresses).
const UNIQUE_COLUMNS: &[&str] = &[
    "seq",
    "time_ns",
    "rel_ns",
    "timestamp",
    "exit_ns",
    "duration_ns",
    "offset",
    "arg0",
    "arg1",
    "arg2",
    "arg3",
    "arg4",
    "arg5",
];

/// One output file.
enum Sink {
    Parquet(ArrowWriter<File>),
    Csv(arrow_csv::Writer<BufWriter<File>>),
}

impl Sink {
    fn create(path: &Path, format: Format, schema: SchemaRef, tool: &str) -> Result<Sink, Error> {
        // An old file is replaced, not truncated and rewritten: a reader
        // that has it open keeps the old contents, and ext4 does not flush
        // a rewritten file to disk when it is closed (auto_da_alloc).
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::Io {
                    path: path.to_path_buf(),
                    source: e,
                })
            }
            _ => {}
        }
        // Mode 0600, as traces: the tables hold every buffer the program
        // passed (`data`), user data that is no one else's to read.
        let file = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
        }
        .map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(match format {
            Format::Parquet => {
                let mut props = WriterProperties::builder()
                    .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
                    .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
                    .set_created_by(tool.to_string());
                // Columns whose values are (nearly) all distinct: a
                // dictionary would hash every value only to be abandoned
                // once it outgrows its page.
                for name in UNIQUE_COLUMNS {
                    if schema.column_with_name(name).is_some() {
                        props = props.set_column_dictionary_enabled(ColumnPath::from(*name), false);
                    }
                }
                if schema.column_with_name("data").is_some() {
                    props = props.set_max_row_group_bytes(Some(DATA_ROW_GROUP_BYTES));
                    // Buffers: snappy (zstd here would be the bottleneck of
                    // the export), and no dictionary or min/max statistics,
                    // which cost a hash or comparison of every buffer and
                    // serve no query.
                    let data = ColumnPath::from("data");
                    props = props
                        .set_column_compression(data.clone(), Compression::SNAPPY)
                        .set_column_dictionary_enabled(data.clone(), false)
                        .set_column_statistics_enabled(data, EnabledStatistics::None);
                }
                let props = props.build();
                Sink::Parquet(ArrowWriter::try_new(file, schema, Some(props))?)
            }
            Format::Csv => Sink::Csv(
                arrow_csv::WriterBuilder::new()
                    .with_header(true)
                    .build(BufWriter::with_capacity(1 << 20, file)),
            ),
        })
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        match self {
            Sink::Parquet(w) => w.write(batch)?,
            Sink::Csv(w) => w.write(batch)?,
        }
        Ok(())
    }

    fn close(self) -> Result<(), Error> {
        match self {
            Sink::Parquet(w) => {
                w.close()?;
            }
            Sink::Csv(w) => {
                use std::io::Write;
                w.into_inner()
                    .flush()
                    .map_err(|e| Error::Encode(e.to_string()))?;
            }
        }
        Ok(())
    }
}

/// Table numbers, in the order of [`ExportReport::files`].
const EVENTS: usize = 0;
const DATA: usize = 1;
const PROCESSES: usize = 2;

/// Exports the records of `trace` that `filter` keeps into `dir` (created
/// if needed) as `events`, `data` and `processes` files of `format`.
/// Existing files are refused unless `overwrite`; on failure the partial
/// files are removed. `progress(done, total)` gets bytes of trace read.
pub fn export(
    trace: &Path,
    dir: &Path,
    format: Format,
    filter: Filter,
    overwrite: bool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ExportReport, Error> {
    let mut scan = Scan::open(trace, filter, true, true)?;
    let files = format.tables_in(dir);
    if !overwrite {
        if let Some(f) = files.iter().find(|f| f.exists()) {
            return Err(Error::Exists(f.clone()));
        }
    }
    let created = !dir.exists();
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    // On failure: the partial files go, and the directory if this call
    // made it.
    let clean_up = |files: &[PathBuf]| {
        remove(files);
        if created {
            let _ = std::fs::remove_dir(dir);
        }
    };
    let tool = format!("reanimator {}", env!("CARGO_PKG_VERSION"));
    let schemas = [events_schema(), data_schema(), processes_schema()];
    let mut sinks = Vec::new();
    for (f, s) in files.iter().zip(schemas) {
        match Sink::create(f, format, s, &tool) {
            Ok(sink) => sinks.push(sink),
            Err(e) => {
                clean_up(&files);
                return Err(e);
            }
        }
    }
    let result = run(&mut scan, sinks, progress);
    match result {
        Ok(mut report) => {
            report.files = files;
            Ok(report)
        }
        Err(e) => {
            clean_up(&files);
            Err(e)
        }
    }
}

fn remove(files: &[PathBuf]) {
    for f in files {
        let _ = std::fs::remove_file(f);
    }
}

/// Decodes on this thread; each table is encoded on a thread of its own,
/// so the buffer data's compression runs beside the events'.
fn run(
    scan: &mut Scan,
    sinks: Vec<Sink>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ExportReport, Error> {
    std::thread::scope(|s| {
        let mut senders = Vec::new();
        let mut encoders = Vec::new();
        for mut sink in sinks {
            let (tx, rx) = sync_channel::<RecordBatch>(2);
            senders.push(tx);
            encoders.push(s.spawn(move || -> Result<(), Error> {
                for batch in rx {
                    sink.write(&batch)?;
                }
                sink.close()
            }));
        }
        let decoded = decode(scan, &senders, progress);
        drop(senders);
        // A failed encoder closes its channel: its error is the cause.
        for encoder in encoders {
            encoder
                .join()
                .unwrap_or_else(|_| Err(Error::Encode("an encoder thread panicked".into())))?;
        }
        decoded
    })
}

fn decode(
    scan: &mut Scan,
    tx: &[SyncSender<RecordBatch>],
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ExportReport, Error> {
    let clock = scan.reader().meta().clock;
    let (mut events, mut data, mut procs) = (Events::new(), Data::new(), Processes::new());
    let mut report = ExportReport::default();
    let closed = || Error::Encode("the encoder stopped".into());
    while let Some(item) = scan.next_item()? {
        match &item.record {
            Record::Syscall(e) => {
                // A batch is handed over before it would outgrow its
                // buffer (growing it would copy every byte in it).
                if data.rows > 0 && data.bytes + buffer_bytes(e) > BATCH_DATA_BYTES {
                    tx[DATA].send(data.finish()?).map_err(|_| closed())?;
                }
                let start = scan.start_ns().unwrap_or(0);
                events.append(e, item.path.as_deref(), &clock, start);
                data.append(e);
                report.events += 1;
                report.captures += e.captures.len() as u64;
                if events.rows >= BATCH_ROWS {
                    tx[EVENTS].send(events.finish()?).map_err(|_| closed())?;
                    progress(scan.reader().offset(), scan.reader().file_len());
                }
                if data.rows >= BATCH_ROWS {
                    tx[DATA].send(data.finish()?).map_err(|_| closed())?;
                }
            }
            r => {
                if procs.append(r) {
                    report.processes += 1;
                    if procs.rows >= BATCH_ROWS {
                        tx[PROCESSES].send(procs.finish()?).map_err(|_| closed())?;
                    }
                } else {
                    report.other_records += 1;
                }
            }
        }
    }
    for (table, batch) in [
        (EVENTS, events.finish()?),
        (DATA, data.finish()?),
        (PROCESSES, procs.finish()?),
    ] {
        tx[table].send(batch).map_err(|_| closed())?;
    }
    Ok(report)
}
