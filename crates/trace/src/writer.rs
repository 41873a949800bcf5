//! The trace writer: buffers records and buffer data into frames,
//! deduplicates identical buffers, compresses, checksums and appends.
//!
//! Nothing is ever rewritten in place: a frame, once written, is final, so a
//! writer killed at any moment leaves every frame before the one it was
//! writing intact. [`Writer::flush`] makes everything handed in so far
//! durable up to the OS; recorders call it on a timer (`flush_interval`).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::codec::{self, put_capture_head, put_syscall_head, CaptureHead, Delta, SyscallHead};
use crate::error::{Error, ErrorKind, Result};
use crate::frame::{self, FrameHeader, FrameKind, CODEC_NONE, CODEC_ZSTD, FRAME_HEADER_LEN};
use crate::meta::{EndSummary, TraceMeta};
use crate::record::{Record, SyscallEvent};
use crate::varint::{put, put_bytes};

/// Writer settings. The defaults meet the throughput targets in
/// docs/BENCHMARKS.md; change them only to trade size for speed.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// zstd level for records frames.
    pub records_level: i32,
    /// zstd level for buffer (blob) frames; negative levels are faster.
    pub blobs_level: i32,
    /// Raw bytes of records after which a records frame is written.
    pub records_frame_bytes: usize,
    /// Raw bytes of buffer data after which a blob frame is written.
    pub blobs_frame_bytes: usize,
    /// Buffers up to this many bytes are stored inside their record rather
    /// than as deduplicated blobs.
    pub inline_max: usize,
    /// Largest single blob; longer buffers are split into chunks of this
    /// size (each deduplicated on its own).
    pub chunk_bytes: usize,
    /// How many blob hashes the deduplication index remembers before it
    /// starts over (bounds the writer's memory).
    pub dedup_entries: usize,
    /// Write out pending frames when this much time has passed since the
    /// last write, so a killed recorder loses at most this much. Checked as
    /// records arrive: a recorder that can sit idle also calls
    /// [`Writer::flush`] on its own timer.
    pub flush_interval: Option<Duration>,
    /// Replace an existing file instead of refusing.
    pub overwrite: bool,
}

/// True when both paths name one existing file: an output that would
/// truncate a trace the same command reads (`select -o`, `replay
/// --timings`, `fidelity --svg`).
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            records_level: 1,
            blobs_level: 1,
            records_frame_bytes: 1 << 20,
            blobs_frame_bytes: 4 << 20,
            inline_max: 64,
            chunk_bytes: 1 << 20,
            dedup_entries: 1 << 18,
            flush_interval: Some(Duration::from_secs(1)),
            overwrite: false,
        }
    }
}

/// Hashes are already uniformly distributed: use their low bits directly.
#[derive(Default)]
struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64;
    }
}

type DedupIndex = HashMap<u128, codec::BlobRef, BuildHasherDefault<IdentityHasher>>;

/// The blob frame being filled.
#[derive(Default)]
struct PendingBlobs {
    number: Option<u64>,
    directory: Vec<u8>,
    data: Vec<u8>,
    count: u32,
}

/// Writes a trace. Create one with [`Writer::create`] (a new file, mode
/// 0600) or [`Writer::new`] (any `Write`), hand it records, and call
/// [`Writer::finish`]; dropping it unfinished flushes what it holds but
/// writes no end record.
pub struct Writer<W: Write> {
    out: Option<W>,
    /// The file written, when [`Writer::create`] made it.
    path: Option<std::path::PathBuf>,
    opts: WriterOptions,
    next_frame: u64,
    records: Vec<u8>,
    record_count: u32,
    delta: Delta,
    body: Vec<u8>,
    caps: Vec<u8>,
    blobs: PendingBlobs,
    dedup: DedupIndex,
    zrecords: zstd::bulk::Compressor<'static>,
    zblobs: zstd::bulk::Compressor<'static>,
    compress_blobs: bool,
    /// Whether the last blob frame compression was tried on shrank to a
    /// fifth or less.
    blobs_compress_well: bool,
    /// Blob frames flushed since compression was switched off.
    raw_blob_frames: u64,
    frame: Vec<u8>,
    summary: EndSummary,
    /// System calls written so far, by call number (numbers beyond the
    /// table are not counted).
    calls_by_nr: Vec<u64>,
    bytes_written: u64,
    last_flush: Instant,
    since_clock_check: u32,
}

/// Call numbers [`Writer::calls_of`] counts (x86_64 uses fewer than 512).
const CALL_NUMBERS: usize = 1024;

impl Writer<File> {
    /// Creates `path` (mode 0600: traces hold user data) and writes the
    /// header and `meta`, with the file's absolute path as option
    /// `output` unless `meta` names one already (a trace made from
    /// another). Refuses an existing file unless `opts.overwrite`.
    ///
    /// An existing path that is not a regular file (`/dev/null`, a FIFO)
    /// is written to as it is: never truncated, made 0600 or named in the
    /// meta, and [`Writer::path`] is `None`, so nothing removes or leaves
    /// it out. `-o /dev/null --force` once made `/dev/null` 0600 and, when
    /// the recording failed, removed it.
    pub fn create(path: &Path, meta: &TraceMeta, opts: WriterOptions) -> Result<Self> {
        let existing = std::fs::metadata(path).ok();
        if existing.as_ref().is_some_and(|m| m.is_dir()) {
            // Not "already exists (use --force)": --force cannot help.
            return Err(Error::new(ErrorKind::IsDirectory).in_file(path));
        }
        let special = existing.is_some_and(|m| !m.is_file());
        let mut oo = OpenOptions::new();
        oo.write(true).mode(0o600);
        if special {
            // As it is.
        } else if opts.overwrite {
            oo.create(true).truncate(true);
        } else {
            oo.create_new(true);
        }
        let file = oo.open(path).map_err(|e| {
            let kind = if e.kind() == std::io::ErrorKind::AlreadyExists {
                ErrorKind::Exists
            } else {
                ErrorKind::Io(e)
            };
            Error::new(kind).in_file(path)
        })?;
        if special {
            return Writer::new(file, meta, opts).map_err(|e| e.in_file(path));
        }
        if opts.overwrite {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(|e| Error::from(e).in_file(path))?;
        }
        let absolute = std::path::absolute(path).ok();
        let mut meta = meta.clone();
        // A trace made from another (select, recover) keeps the path its
        // recorder wrote: calls of the program that named it are still
        // simulated from there.
        if let Some(name) = absolute.as_deref().and_then(Path::to_str) {
            meta.options
                .entry("output".to_string())
                .or_insert_with(|| name.to_string());
        }
        let mut w = Writer::new(file, &meta, opts).map_err(|e| e.in_file(path))?;
        w.path = absolute;
        Ok(w)
    }
}

impl<W: Write> Writer<W> {
    /// Writes the file header and the meta frame to `out`.
    pub fn new(mut out: W, meta: &TraceMeta, opts: WriterOptions) -> Result<Self> {
        let zrecords = zstd::bulk::Compressor::new(opts.records_level)?;
        let zblobs = zstd::bulk::Compressor::new(opts.blobs_level)?;
        out.write_all(&frame::file_header(
            crate::FORMAT_MAJOR,
            crate::FORMAT_MINOR,
        ))?;
        let mut w = Writer {
            out: Some(out),
            path: None,
            opts,
            next_frame: 0,
            records: Vec::new(),
            record_count: 0,
            delta: Delta::default(),
            body: Vec::new(),
            caps: Vec::new(),
            blobs: PendingBlobs::default(),
            dedup: DedupIndex::default(),
            zrecords,
            zblobs,
            compress_blobs: true,
            blobs_compress_well: true,
            raw_blob_frames: 0,
            frame: Vec::new(),
            summary: EndSummary::default(),
            calls_by_nr: vec![0; CALL_NUMBERS],
            bytes_written: frame::FILE_HEADER_LEN as u64,
            last_flush: Instant::now(),
            since_clock_check: 0,
        };
        let json = serde_json::to_vec(meta).map_err(|e| Error::corrupt(format!("meta: {e}")))?;
        w.write_plain_frame(FrameKind::Meta, &json, 0)?;
        w.next_frame = 1;
        w.out_mut()?.flush()?;
        Ok(w)
    }

    /// The absolute path of the file written, when [`Writer::create`]
    /// made it a regular file: the recorders leave it out of the program's
    /// file states (a program listing its directory sees the trace
    /// growing).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Appends one record of any kind.
    pub fn write(&mut self, record: &Record) -> Result<()> {
        match record {
            Record::Syscall(e) => self.write_syscall(e),
            Record::PathData(p) => {
                self.body.clear();
                self.caps.clear();
                let c = &p.data;
                let head = CaptureHead {
                    arg: c.arg,
                    role: c.role,
                    elem: c.elem,
                    status: c.status,
                    len: c.len,
                };
                match &c.data {
                    Some(d) => self.put_capture(&head, d)?,
                    None => self.put_capture_without_data(&head, c.captured),
                }
                // The head after the buffer (see `SyscallWriter::finish`).
                codec::put_path_data_head(
                    &mut self.body,
                    &mut self.delta,
                    p.seq,
                    p.time_ns,
                    &p.path,
                    p.offset,
                );
                let caps = std::mem::take(&mut self.caps);
                self.body.extend_from_slice(&caps);
                self.caps = caps;
                self.push_record(codec::TAG_PATH_DATA)
            }
            other => {
                self.body.clear();
                let tag = codec::put_record_body(&mut self.body, &mut self.delta, other);
                match other {
                    Record::ProcessStart(_) => self.summary.process_starts += 1,
                    Record::ProcessExit(_) => self.summary.process_exits += 1,
                    Record::Signal(_) => self.summary.signals += 1,
                    Record::Loss(l) => {
                        self.summary.losses += 1;
                        self.summary.lost_events += l.count;
                    }
                    Record::PathState(_) => {}
                    Record::Syscall(_) | Record::PathData(_) => unreachable!(),
                }
                self.push_record(tag)
            }
        }
    }

    fn write_syscall(&mut self, e: &SyscallEvent) -> Result<()> {
        let mut s = self.syscall(&SyscallHead {
            seq: e.seq,
            tgid: e.tgid,
            tid: e.tid,
            nr: e.nr,
            enter_ns: e.enter_ns,
            args: e.args,
            exit: e.exit,
        });
        for c in &e.captures {
            let head = CaptureHead {
                arg: c.arg,
                role: c.role,
                elem: c.elem,
                status: c.status,
                len: c.len,
            };
            match &c.data {
                Some(d) => s.capture(&head, d)?,
                None => s.capture_without_data(&head, c.captured)?,
            }
        }
        s.finish()
    }

    /// Starts a system call record; add its captures and call
    /// [`SyscallWriter::finish`]. This is the recorders' path: buffers are
    /// borrowed, never copied into an intermediate record.
    pub fn syscall(&mut self, head: &SyscallHead) -> SyscallWriter<'_, W> {
        self.body.clear();
        self.caps.clear();
        SyscallWriter {
            w: self,
            head: *head,
            count: 0,
        }
    }

    /// Appends a capture and its storage (inline or blob chunks) to
    /// `self.caps`.
    fn put_capture(&mut self, head: &CaptureHead, bytes: &[u8]) -> Result<()> {
        put_capture_head(&mut self.caps, head);
        self.summary.captured_bytes += bytes.len() as u64;
        if bytes.len() <= self.opts.inline_max {
            self.caps.push(codec::STORE_INLINE);
            put_bytes(&mut self.caps, bytes);
        } else {
            let chunk = self.opts.chunk_bytes.max(1);
            self.caps.push(codec::STORE_CHUNKS);
            put(&mut self.caps, bytes.len() as u64);
            put(&mut self.caps, bytes.len().div_ceil(chunk) as u64);
            // Each reference goes out as its blob is stored (storing never
            // touches `caps`): no list of references per capture to
            // allocate and free.
            for piece in bytes.chunks(chunk) {
                let r = self.store_blob(piece)?;
                put(&mut self.caps, r.frame);
                put(&mut self.caps, r.index.into());
            }
        }
        Ok(())
    }

    fn put_capture_without_data(&mut self, head: &CaptureHead, captured: u64) {
        put_capture_head(&mut self.caps, head);
        self.caps.push(codec::STORE_NONE);
        put(&mut self.caps, captured);
    }

    fn push_record(&mut self, tag: u8) -> Result<()> {
        self.records.push(tag);
        put_bytes(&mut self.records, &self.body);
        self.record_count += 1;
        self.summary.records += 1;
        if self.records.len() >= self.opts.records_frame_bytes {
            self.flush_records()?;
        } else if let Some(every) = self.opts.flush_interval {
            self.since_clock_check += 1;
            if self.since_clock_check >= 256 {
                self.since_clock_check = 0;
                if self.last_flush.elapsed() >= every {
                    self.flush()?;
                }
            }
        }
        Ok(())
    }

    /// Stores one chunk as a blob (or finds it already stored) and returns
    /// its reference.
    fn store_blob(&mut self, bytes: &[u8]) -> Result<codec::BlobRef> {
        let hash = xxhash_rust::xxh3::xxh3_128(bytes);
        if let Some(r) = self.dedup.get(&hash) {
            return Ok(*r);
        }
        if !self.blobs.data.is_empty()
            && self.blobs.data.len() + bytes.len() > self.opts.blobs_frame_bytes
        {
            // The records written so far go right after the blob frame
            // that holds their buffers, so a reader needs only the last
            // few blob frames at hand (a 1 MiB records frame of 4 KiB
            // writes would otherwise follow 40 blob frames).
            self.flush_records()?;
        }
        let number = *self.blobs.number.get_or_insert_with(|| {
            let n = self.next_frame;
            self.next_frame += 1;
            n
        });
        let r = codec::BlobRef {
            frame: number,
            index: self.blobs.count,
        };
        put(&mut self.blobs.directory, bytes.len() as u64);
        self.blobs.directory.extend_from_slice(&hash.to_le_bytes());
        self.blobs.data.extend_from_slice(bytes);
        self.blobs.count += 1;
        self.summary.unique_bytes += bytes.len() as u64;
        if self.dedup.len() >= self.opts.dedup_entries {
            self.dedup.clear();
        }
        self.dedup.insert(hash, r);
        Ok(r)
    }

    fn flush_blobs(&mut self) -> Result<()> {
        let Some(number) = self.blobs.number.take() else {
            return Ok(());
        };
        let mut count = Vec::with_capacity(5);
        put(&mut count, self.blobs.count.into());
        let pieces = [&count[..], &self.blobs.directory, &self.blobs.data];
        // While storing raw, every eighth frame is still compressed, so
        // that `blobs_compress_well` follows the data.
        self.raw_blob_frames = if self.compress_blobs {
            0
        } else {
            self.raw_blob_frames + 1
        };
        let tried = self.compress_blobs || self.raw_blob_frames.is_multiple_of(8);
        let z = tried.then_some(&mut self.zblobs);
        let codec = pack(z, &mut self.frame, &pieces)?;
        let raw_len: usize = pieces.iter().map(|p| p.len()).sum();
        if tried {
            let stored = self.frame.len() - FRAME_HEADER_LEN;
            self.blobs_compress_well = stored * 5 <= raw_len;
        }
        let frames = self.blobs.count;
        self.blobs.directory.clear();
        self.blobs.data.clear();
        self.blobs.count = 0;
        self.write_frame(FrameKind::Blobs, codec, raw_len, number, frames)
    }

    fn flush_records(&mut self) -> Result<()> {
        // Blobs first: records may refer to the pending blob frame.
        self.flush_blobs()?;
        if self.record_count == 0 {
            return Ok(());
        }
        let number = self.next_frame;
        self.next_frame += 1;
        let codec = pack(Some(&mut self.zrecords), &mut self.frame, &[&self.records])?;
        let res = self.write_frame(
            FrameKind::Records,
            codec,
            self.records.len(),
            number,
            self.record_count,
        );
        self.records.clear();
        self.record_count = 0;
        self.delta = Delta::default();
        res
    }

    /// Writes an uncompressed frame holding `payload`.
    fn write_plain_frame(&mut self, kind: FrameKind, payload: &[u8], number: u64) -> Result<()> {
        let codec = pack(None, &mut self.frame, &[payload])?;
        self.write_frame(kind, codec, payload.len(), number, 0)
    }

    /// Completes the frame that [`pack`] left in `self.frame` with its
    /// header and appends it with a single write, so a kill leaves either
    /// the whole frame or a detectable torn tail.
    fn write_frame(
        &mut self,
        kind: FrameKind,
        codec: u8,
        raw_len: usize,
        number: u64,
        count: u32,
    ) -> Result<()> {
        let stored = &self.frame[FRAME_HEADER_LEN..];
        let mut h = FrameHeader {
            kind,
            codec,
            flags: 0,
            stored_len: stored.len() as u32,
            raw_len: raw_len as u32,
            number,
            count,
            crc: 0,
        };
        h.crc = h.checksum(stored);
        self.frame[..FRAME_HEADER_LEN].copy_from_slice(&h.encode());
        let frame = std::mem::take(&mut self.frame);
        let res = self
            .out_mut()
            .and_then(|out| out.write_all(&frame).map_err(Error::from));
        if res.is_ok() {
            self.bytes_written += frame.len() as u64;
        }
        self.frame = frame;
        self.last_flush = Instant::now();
        res
    }

    /// Writes out every pending frame, so that everything handed in so far
    /// survives the writer being killed.
    pub fn flush(&mut self) -> Result<()> {
        self.flush_records()?;
        self.out_mut()?.flush()?;
        self.last_flush = Instant::now();
        Ok(())
    }

    /// Flushes, writes the end frame, and returns the output and the totals.
    pub fn finish(mut self) -> Result<(W, EndSummary)> {
        self.flush_records()?;
        let json = serde_json::to_vec(&self.summary)
            .map_err(|e| Error::corrupt(format!("summary: {e}")))?;
        let number = self.next_frame;
        self.write_plain_frame(FrameKind::End, &json, number)?;
        self.next_frame += 1;
        let mut out = self.out.take().expect("writer output present until finish");
        out.flush()?;
        Ok((out, std::mem::take(&mut self.summary)))
    }

    /// Stores buffer data uncompressed (`false`) or compressed (`true`,
    /// the default) from the next blob frame on. A recorder whose writer
    /// falls behind switches compression off rather than slow the traced
    /// program; readers see a per-frame codec either way.
    pub fn set_compress_blobs(&mut self, on: bool) {
        self.compress_blobs = on;
    }

    /// Whether the last blob frame compression was tried on shrank to a
    /// fifth or less. Such data compresses fast (zstd is quick on
    /// redundant data) and saves most of the writing, so a writer falling
    /// behind should keep compressing it; data that compresses less (text,
    /// 2-3x at ~330 MB/s) is cheaper to store raw while behind.
    pub fn blobs_compress_well(&self) -> bool {
        self.blobs_compress_well
    }

    /// Adds a field to the end record, such as the recorder's notes on
    /// what it could not capture, so that `info` can tell a later reader
    /// what only the recording's own summary line said.
    pub fn add_to_end(&mut self, key: &str, value: serde_json::Value) {
        self.summary.extra.insert(key.to_string(), value);
    }

    /// Totals so far.
    pub fn summary(&self) -> &EndSummary {
        &self.summary
    }

    /// System calls written so far with call number `nr`, so a recorder
    /// can tell the user about calls of a kind without reading the trace
    /// back (0 for numbers of 1024 and above).
    pub fn calls_of(&self, nr: u32) -> u64 {
        self.calls_by_nr.get(nr as usize).copied().unwrap_or(0)
    }

    /// Bytes written to the output so far (frames already written).
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    fn out_mut(&mut self) -> Result<&mut W> {
        self.out
            .as_mut()
            .ok_or_else(|| Error::corrupt("writer already finished"))
    }
}

impl<W: Write> Drop for Writer<W> {
    /// A writer dropped without [`Writer::finish`] (an error path, a panic)
    /// still writes out what it holds; the trace then lacks only its end
    /// record, which `recover` supplies.
    fn drop(&mut self) {
        if self.out.is_some() {
            let _ = self.flush();
        }
    }
}

/// Lays out a frame's payload in `frame` after room for its header: the
/// concatenation of `pieces`, zstd-compressed when a compressor is given
/// and that makes it smaller, stored as is otherwise. Compressing straight
/// from the pieces into the frame saves copying megabytes of buffer data
/// per frame. Returns the codec used.
fn pack(
    z: Option<&mut zstd::bulk::Compressor<'static>>,
    frame: &mut Vec<u8>,
    pieces: &[&[u8]],
) -> Result<u8> {
    use zstd::zstd_safe::zstd_sys::ZSTD_EndDirective::{ZSTD_e_continue, ZSTD_e_end};
    use zstd::zstd_safe::{InBuffer, OutBuffer, ResetDirective};
    let raw_len: usize = pieces.iter().map(|p| p.len()).sum();
    frame.clear();
    frame.resize(FRAME_HEADER_LEN, 0);
    if let Some(z) = z {
        frame.reserve(zstd::zstd_safe::compress_bound(raw_len) + 64);
        let cctx = z.context_mut();
        let zerr =
            |code| Error::corrupt(format!("zstd: {}", zstd::zstd_safe::get_error_name(code)));
        cctx.reset(ResetDirective::SessionOnly).map_err(zerr)?;
        cctx.set_pledged_src_size(Some(raw_len as u64))
            .map_err(zerr)?;
        let mut out = OutBuffer::around_pos(frame, FRAME_HEADER_LEN);
        let mut ok = true;
        for piece in pieces {
            let mut input = InBuffer::around(piece);
            while input.pos() < piece.len() && ok {
                // The output has room for the worst case; a full one means
                // zstd is stuck, and the frame is stored raw instead.
                ok = cctx
                    .compress_stream2(&mut out, &mut input, ZSTD_e_continue)
                    .is_ok()
                    && out.pos() < out.capacity();
            }
        }
        while ok {
            match cctx.compress_stream2(&mut out, &mut InBuffer::around(&[]), ZSTD_e_end) {
                Ok(0) => break,
                Ok(_) if out.pos() < out.capacity() => {}
                _ => ok = false,
            }
        }
        if ok && frame.len() - FRAME_HEADER_LEN < raw_len {
            return Ok(CODEC_ZSTD);
        }
        frame.truncate(FRAME_HEADER_LEN);
    }
    for piece in pieces {
        frame.extend_from_slice(piece);
    }
    Ok(CODEC_NONE)
}

/// Adds captures to a system call record started by [`Writer::syscall`].
pub struct SyscallWriter<'w, W: Write> {
    w: &'w mut Writer<W>,
    head: SyscallHead,
    count: u64,
}

impl<W: Write> SyscallWriter<'_, W> {
    /// Adds a capture with its bytes (`bytes.len()` is the captured length).
    pub fn capture(&mut self, head: &CaptureHead, bytes: &[u8]) -> Result<()> {
        self.w.put_capture(head, bytes)?;
        self.count += 1;
        Ok(())
    }

    /// Adds a capture whose bytes are not stored (not captured, or lost in
    /// recovery); `captured` is 0 unless they were lost.
    pub fn capture_without_data(&mut self, head: &CaptureHead, captured: u64) -> Result<()> {
        self.w.put_capture_without_data(head, captured);
        self.count += 1;
        Ok(())
    }

    /// Completes the record.
    pub fn finish(self) -> Result<()> {
        let w = self.w;
        // The head is delta-encoded only now, after the buffers: storing
        // them may close a records frame, and the next frame starts a
        // fresh delta.
        put_syscall_head(&mut w.body, &mut w.delta, &self.head);
        put(&mut w.body, self.count);
        w.body.extend_from_slice(&w.caps);
        w.summary.syscalls += 1;
        if let Some(n) = w.calls_by_nr.get_mut(self.head.nr as usize) {
            *n += 1;
        }
        w.push_record(codec::TAG_SYSCALL)
    }
}
