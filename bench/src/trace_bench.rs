//! `trace-bench`: throughput, size and memory of the trace format on one
//! core, so the writer is known never to be what limits a recorder.
//!
//! Each run writes synthetic events shaped like a recorder's (increasing
//! sequence ids and times, a few threads, small descriptors, growing
//! offsets), reads the trace back checking every event, and prints one
//! human line and one JSON line. Buffers are stamped with their sequence
//! id so deduplication cannot flatter the figures: what is measured is
//! compression and throughput, not identical content stored once.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use reanimator_trace::{
    CaptureHead, CaptureStatus, ReadOptions, Reader, Record, Role, SyscallExit, SyscallHead,
    TraceMeta, Writer, WriterOptions,
};

/// Size of one buffer event.
const BUF_LEN: usize = 4096;
/// Bytes of source data sliced into buffers (bounded so RSS stays honest).
const POOL_BYTES: usize = 64 << 20;

#[derive(Parser)]
#[command(
    version,
    about = "Benchmarks of the reanimator trace format (writer and reader, one core)"
)]
struct Cli {
    /// Do not pin the benchmark to CPU 0.
    #[arg(long, global = true)]
    no_pin: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write N events to a trace, read them back, report rates and sizes.
    WriteRead(WriteRead),
    /// Write and read a long trace of metadata events and check that peak
    /// RSS stays under a limit (bounded memory).
    Rss {
        /// Events to write.
        #[arg(long, default_value_t = 10_000_000)]
        events: u64,
        /// Fail when peak RSS exceeds this many MiB.
        #[arg(long, default_value_t = 256)]
        limit_mib: u64,
        /// Trace file (default: a temporary file, removed afterwards).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

#[derive(clap::Args)]
struct WriteRead {
    /// Events to write.
    #[arg(long, default_value_t = 1_000_000)]
    events: u64,
    /// What the events carry.
    #[arg(long, value_enum, default_value_t = Kind::Meta)]
    kind: Kind,
    /// Directory whose files supply the bytes of `buf4k-real` buffers
    /// (for example the SST files of a RocksDB db_bench run).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// zstd level for buffer frames (default: the writer's).
    #[arg(long, allow_negative_numbers = true)]
    blobs_level: Option<i32>,
    /// zstd level for records frames (default: the writer's).
    #[arg(long, allow_negative_numbers = true)]
    records_level: Option<i32>,
    /// Store buffer data uncompressed, as a recorder's writer does while it
    /// is falling behind.
    #[arg(long)]
    store_blobs: bool,
    /// Trace file to write (replaced if it exists).
    #[arg(short, long)]
    output: PathBuf,
}

/// What each benchmark event carries.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
enum Kind {
    /// No buffers: syscall number, arguments, return value and times only.
    Meta,
    /// A 4 KiB write buffer sliced from real files (`--corpus`).
    Buf4kReal,
    /// A 4 KiB write buffer of zeros.
    Buf4kZeros,
    /// A 4 KiB write buffer of random bytes (incompressible).
    Buf4kRandom,
}

fn main() {
    let cli = Cli::parse();
    if !cli.no_pin {
        pin_to_cpu0();
    }
    let result = match cli.command {
        Command::WriteRead(args) => write_read(&args),
        Command::Rss {
            events,
            limit_mib,
            output,
        } => rss(events, limit_mib, output),
    };
    if let Err(e) = result {
        eprintln!("trace-bench: error: {e:#}");
        std::process::exit(1);
    }
}

/// Keeps the measurement on one core, as the targets are stated per core.
fn pin_to_cpu0() {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET and
    // sched_setaffinity only read and write that local set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(0, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            eprintln!("trace-bench: warning: could not pin to CPU 0; figures may be noisier");
        }
    }
}

/// Peak resident set size of this process, in bytes.
fn peak_rss() -> u64 {
    // SAFETY: getrusage fills the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_maxrss as u64 * 1024
}

/// The source bytes buffers are sliced from.
fn pool(kind: Kind, corpus: Option<&Path>) -> Result<Vec<u8>> {
    Ok(match kind {
        Kind::Meta => Vec::new(),
        Kind::Buf4kZeros => vec![0; BUF_LEN],
        Kind::Buf4kRandom => {
            let mut state = 0x9e37_79b9_7f4a_7c15u64;
            (0..POOL_BYTES / 8)
                .flat_map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state.to_le_bytes()
                })
                .collect()
        }
        Kind::Buf4kReal => {
            let dir = corpus.context("--kind buf4k-real needs --corpus DIR")?;
            let mut out = Vec::with_capacity(POOL_BYTES);
            collect_files(dir, &mut out)?;
            if out.len() < BUF_LEN {
                bail!(
                    "{}: fewer than {BUF_LEN} bytes of regular files",
                    dir.display()
                );
            }
            out
        }
    })
}

/// Appends the contents of regular files under `dir` until the pool is full.
fn collect_files(dir: &Path, out: &mut Vec<u8>) -> Result<()> {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .with_context(|| format!("{}: cannot read corpus directory", dir.display()))?
        .filter_map(|e| e.ok())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if out.len() >= POOL_BYTES {
            break;
        }
        let path = entry.path();
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() {
            collect_files(&path, out)?;
        } else if ft.is_file() {
            if let Ok(bytes) = fs::read(&path) {
                let room = POOL_BYTES - out.len();
                out.extend_from_slice(&bytes[..bytes.len().min(room)]);
            }
        }
    }
    Ok(())
}

/// The syscall head of benchmark event `i`: what a recorder would see.
fn head(i: u64, kind: Kind) -> SyscallHead {
    let tid = 1000 + (i % 4) as u32;
    let enter_ns = 1_000_000_000 + i * 1_150 + (i * 7919) % 300;
    let (nr, args, ret) = if kind == Kind::Meta {
        // lseek, fsync, close, getpid in turn.
        match i % 4 {
            0 => (8, [3 + i % 5, i * 4096, 0, 0, 0, 0], (i * 4096) as i64),
            1 => (74, [3 + i % 5, 0, 0, 0, 0, 0], 0),
            2 => (3, [3 + i % 5, 0, 0, 0, 0, 0], 0),
            _ => (39, [0; 6], 1000),
        }
    } else {
        (
            18,
            [
                3 + i % 5,
                0x7f00_0000_0000 + (i % 16) * 4096,
                BUF_LEN as u64,
                i * 4096,
                0,
                0,
            ],
            BUF_LEN as i64,
        )
    };
    SyscallHead {
        seq: i,
        tgid: 1000,
        tid,
        nr,
        enter_ns,
        args,
        exit: Some(SyscallExit {
            exit_ns: enter_ns + 700 + (i * 31) % 500,
            ret,
            is_error: false,
        }),
    }
}

/// Fills `buf` with event `i`'s buffer: a slice of the pool stamped with `i`.
fn fill(buf: &mut [u8], pool: &[u8], i: u64) {
    let slots = (pool.len() / BUF_LEN).max(1) as u64;
    let start = (i % slots) as usize * BUF_LEN;
    buf.copy_from_slice(&pool[start..start + BUF_LEN]);
    buf[..8].copy_from_slice(&i.to_le_bytes());
}

/// What one write-then-read run measured.
struct Run {
    events: u64,
    payload_bytes: u64,
    trace_bytes: u64,
    /// Writing to a sink that discards: the writer's own CPU cost.
    encode_secs: f64,
    /// Writing the trace file (encoding plus the file system's cost).
    write_secs: f64,
    read_secs: f64,
}

/// Writes `events` events of `kind` to `w` and finishes it.
fn write_events<W: std::io::Write>(
    mut w: Writer<W>,
    events: u64,
    kind: Kind,
    pool: &[u8],
) -> Result<()> {
    let capture = CaptureHead {
        arg: 1,
        role: Role::Entry,
        elem: 0,
        status: CaptureStatus::Complete,
        len: BUF_LEN as u64,
    };
    let mut buf = vec![0u8; BUF_LEN];
    for i in 0..events {
        let mut call = w.syscall(&head(i, kind));
        if kind != Kind::Meta {
            fill(&mut buf, pool, i);
            call.capture(&capture, &buf)?;
        }
        call.finish()?;
    }
    w.finish()?;
    Ok(())
}

/// Encodes `events` events of `kind` to a sink, then writes them to `path`
/// and reads them back verifying
/// each, and times both halves.
fn run(
    path: &Path,
    events: u64,
    kind: Kind,
    pool: &[u8],
    opts: WriterOptions,
    store_blobs: bool,
) -> Result<Run> {
    let meta = TraceMeta {
        tool: "trace-bench".into(),
        ..TraceMeta::default()
    };
    let mut buf = vec![0u8; BUF_LEN];

    let start = Instant::now();
    write_events(
        {
            let mut w = Writer::new(std::io::sink(), &meta, opts.clone())?;
            w.set_compress_blobs(!store_blobs);
            w
        },
        events,
        kind,
        pool,
    )?;
    let encode_secs = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let mut w = Writer::create(path, &meta, opts).with_context(|| format!("{}", path.display()))?;
    w.set_compress_blobs(!store_blobs);
    write_events(w, events, kind, pool)?;
    let write_secs = start.elapsed().as_secs_f64();
    let trace_bytes = fs::metadata(path)?.len();

    let start = Instant::now();
    let mut r = Reader::open(path, ReadOptions { data: true })?;
    let mut seen = 0u64;
    while let Some(rec) = r.next_record()? {
        let Record::Syscall(e) = rec else {
            bail!("unexpected record {rec:?}")
        };
        let want = head(seen, kind);
        if e.seq != want.seq || e.args != want.args || e.enter_ns != want.enter_ns {
            bail!("event {seen} read back differently");
        }
        if kind != Kind::Meta {
            fill(&mut buf, pool, seen);
            if e.captures.len() != 1 || e.captures[0].data.as_deref() != Some(&buf[..]) {
                bail!("event {seen}: buffer read back differently");
            }
        }
        seen += 1;
    }
    let read_secs = start.elapsed().as_secs_f64();
    if seen != events {
        bail!("wrote {events} events, read back {seen}");
    }
    let payload_bytes = if kind == Kind::Meta {
        0
    } else {
        events * BUF_LEN as u64
    };
    Ok(Run {
        events,
        payload_bytes,
        trace_bytes,
        encode_secs,
        write_secs,
        read_secs,
    })
}

fn write_read(a: &WriteRead) -> Result<()> {
    let pool = pool(a.kind, a.corpus.as_deref())?;
    let mut opts = WriterOptions {
        overwrite: true,
        ..WriterOptions::default()
    };
    if let Some(l) = a.blobs_level {
        opts.blobs_level = l;
    }
    if let Some(l) = a.records_level {
        opts.records_level = l;
    }
    let levels = (opts.records_level, opts.blobs_level);
    let r = run(&a.output, a.events, a.kind, &pool, opts, a.store_blobs)?;
    let mb = |bytes: u64, secs: f64| bytes as f64 / 1e6 / secs;
    let ratio = if r.payload_bytes > 0 {
        r.payload_bytes as f64 / r.trace_bytes as f64
    } else {
        0.0
    };
    let kind = a
        .kind
        .to_possible_value()
        .expect("no skipped variants")
        .get_name()
        .to_string();
    println!(
        "{kind}: {} events; encode {:.2} M events/s, {:.0} MB/s of buffers; write to file {:.2} M events/s, \
         {:.0} MB/s; read {:.2} M events/s, {:.0} MB/s; {:.1} trace bytes/event; compression {:.2}x; peak RSS {} MiB",
        r.events,
        r.events as f64 / r.encode_secs / 1e6,
        mb(r.payload_bytes, r.encode_secs),
        r.events as f64 / r.write_secs / 1e6,
        mb(r.payload_bytes, r.write_secs),
        r.events as f64 / r.read_secs / 1e6,
        mb(r.payload_bytes, r.read_secs),
        r.trace_bytes as f64 / r.events as f64,
        ratio,
        peak_rss() >> 20,
    );
    let json = serde_json::json!({
        "bench": "write-read",
        "kind": kind,
        "events": r.events,
        "zstd_levels": { "records": levels.0, "blobs": levels.1 },
        "blobs_stored_raw": a.store_blobs,
        "encode_events_per_s": r.events as f64 / r.encode_secs,
        "encode_buffer_mb_per_s": mb(r.payload_bytes, r.encode_secs),
        "write_events_per_s": r.events as f64 / r.write_secs,
        "write_buffer_mb_per_s": mb(r.payload_bytes, r.write_secs),
        "read_events_per_s": r.events as f64 / r.read_secs,
        "read_buffer_mb_per_s": mb(r.payload_bytes, r.read_secs),
        "trace_bytes": r.trace_bytes,
        "trace_bytes_per_event": r.trace_bytes as f64 / r.events as f64,
        "compression_ratio": ratio,
        "peak_rss_bytes": peak_rss(),
    });
    println!("{json}");
    Ok(())
}

fn rss(events: u64, limit_mib: u64, output: Option<PathBuf>) -> Result<()> {
    let (path, temporary) = match output {
        Some(p) => (p, false),
        None => (
            std::env::temp_dir().join(format!("trace-bench-rss-{}.rtr", std::process::id())),
            true,
        ),
    };
    let opts = WriterOptions {
        overwrite: true,
        ..WriterOptions::default()
    };
    let result = run(&path, events, Kind::Meta, &[], opts, false);
    if temporary {
        let _ = fs::remove_file(&path);
    }
    let r = result?;
    let peak = peak_rss();
    println!(
        "rss: {} events written ({} MB) and read back; peak RSS {} MiB (limit {limit_mib} MiB)",
        r.events,
        r.trace_bytes / 1_000_000,
        peak >> 20
    );
    println!(
        "{}",
        serde_json::json!({ "bench": "rss", "events": r.events, "trace_bytes": r.trace_bytes,
                            "peak_rss_bytes": peak, "limit_bytes": limit_mib << 20 })
    );
    if peak > limit_mib << 20 {
        bail!(
            "peak RSS {} MiB exceeds the limit of {limit_mib} MiB",
            peak >> 20
        );
    }
    Ok(())
}
