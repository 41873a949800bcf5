//! The streaming trace reader: one pass, bounded memory, every frame
//! checked.
//!
//! Records come out in file order. Buffer data is loaded only when asked
//! for ([`ReadOptions::data`]); without it, blob frames are skipped unread,
//! which is what makes `stats` fast. References to blobs stored earlier
//! (deduplicated buffers) are served from a small cache of recent blob
//! frames, or read back from the file with `pread`.

use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use crate::codec::{self, BlobFrame, BlobRef, Delta};
use crate::error::{Error, ErrorKind, Result};
use crate::frame::{
    self, FrameHeader, FrameKind, FILE_HEADER_LEN, FLAG_SKIPPABLE, FRAME_HEADER_LEN,
};
use crate::meta::{EndSummary, TraceMeta};
use crate::record::{Bytes, Record};
use crate::varint::Cursor;

/// What to load while reading.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// Load buffer contents (`Capture::data`). Without it, captures carry
    /// lengths only and blob frames are skipped.
    pub data: bool,
}

/// How many decompressed blob frames read in file order are kept for
/// deduplicated references, least recently used evicted first.
const BLOB_CACHE_FRAMES: usize = 8;

/// How many older blob frames read back with `pread` are kept, apart from
/// the recent ones, least recently used evicted first. A program reading
/// back data it wrote long ago refers to them again and again: fio reading
/// a 64 MiB file it had laid out refers at random to 16 such frames, and
/// its replay took 10 s instead of 0.9 s while only the 8 recent frames
/// were kept. Memory goes to them only when such references come.
const RECALLED_FRAMES: usize = 32;

/// Reads frames from a trace file: the layer shared by [`Reader`] and
/// [`recover`](crate::recover).
pub(crate) struct FrameSource {
    pub(crate) path: PathBuf,
    input: BufReader<File>,
    /// Offset of the next frame header.
    pub(crate) offset: u64,
    pub(crate) len: u64,
    stored: Vec<u8>,
    pub(crate) zstd: zstd::bulk::Decompressor<'static>,
}

impl FrameSource {
    pub(crate) fn open(path: &Path) -> Result<(Self, (u16, u16))> {
        let fail = |e: Error| e.in_file(path);
        let md = std::fs::metadata(path).map_err(|e| fail(e.into()))?;
        if md.is_dir() {
            return Err(fail(Error::new(ErrorKind::IsDirectory)));
        }
        use std::os::unix::fs::FileTypeExt;
        let t = md.file_type();
        let odd = [
            (t.is_fifo(), "a FIFO"),
            (t.is_socket(), "a socket"),
            (t.is_char_device(), "a character device"),
        ];
        if let Some(&(_, what)) = odd.iter().find(|(is, _)| *is) {
            return Err(fail(Error::new(ErrorKind::NotAFile(what))));
        }
        let file = File::open(path).map_err(|e| fail(e.into()))?;
        let len = file.metadata().map_err(|e| fail(e.into()))?.len();
        let mut input = BufReader::with_capacity(1 << 20, file);
        let mut head = Vec::with_capacity(FILE_HEADER_LEN);
        (&mut input)
            .take(FILE_HEADER_LEN as u64)
            .read_to_end(&mut head)
            .map_err(|e| fail(e.into()))?;
        let version = frame::check_file_header(&head).map_err(fail)?;
        let zstd = zstd::bulk::Decompressor::new().map_err(|e| fail(e.into()))?;
        Ok((
            FrameSource {
                path: path.to_path_buf(),
                input,
                offset: FILE_HEADER_LEN as u64,
                len,
                stored: Vec::new(),
                zstd,
            },
            version,
        ))
    }

    /// Reads the next frame header. `Ok(None)` at a clean end of file.
    pub(crate) fn next_header(&mut self) -> Result<Option<FrameHeader>> {
        let mut h = [0u8; FRAME_HEADER_LEN];
        let mut got = 0;
        while got < FRAME_HEADER_LEN {
            match self.input.read(&mut h[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::from(e).at(self.offset, None)),
            }
        }
        if got == 0 {
            return Ok(None);
        }
        if got < FRAME_HEADER_LEN {
            return Err(Error::new(ErrorKind::Truncated).at(self.offset, None));
        }
        let header = FrameHeader::decode(&h).map_err(|e| e.at(self.offset, None))?;
        if self.offset + (FRAME_HEADER_LEN as u64) + u64::from(header.stored_len) > self.len {
            return Err(Error::new(ErrorKind::Truncated).at(self.offset, Some(header.number)));
        }
        Ok(Some(header))
    }

    /// Reads and checks the payload of `h` (stored form).
    pub(crate) fn payload(&mut self, h: &FrameHeader) -> Result<&[u8]> {
        let at = self.offset;
        self.stored.resize(h.stored_len as usize, 0);
        self.input.read_exact(&mut self.stored).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Error::new(ErrorKind::Truncated).at(at, Some(h.number))
            } else {
                Error::from(e).at(at, Some(h.number))
            }
        })?;
        self.offset += (FRAME_HEADER_LEN as u64) + u64::from(h.stored_len);
        if h.checksum(&self.stored) != h.crc {
            return Err(Error::new(ErrorKind::Checksum).at(at, Some(h.number)));
        }
        Ok(&self.stored)
    }

    /// Reads, checks and decompresses the payload of `h` into `out`.
    pub(crate) fn unpack(&mut self, h: &FrameHeader, out: &mut Vec<u8>) -> Result<()> {
        let at = self.offset;
        self.payload(h)?;
        h.unpack(&self.stored, out, &mut self.zstd)
            .map_err(|e| e.at(at, Some(h.number)))
    }

    /// Skips the payload of `h` without reading it.
    pub(crate) fn skip(&mut self, h: &FrameHeader) -> Result<()> {
        self.input
            .seek_relative(i64::from(h.stored_len))
            .map_err(|e| Error::from(e).at(self.offset, Some(h.number)))?;
        self.offset += (FRAME_HEADER_LEN as u64) + u64::from(h.stored_len);
        Ok(())
    }

    /// Hands the sequential reading position to a new source (for a
    /// prefetching thread); this one keeps a duplicate of the file for
    /// out-of-band reads of old blob frames, which use no file position.
    fn split(&mut self) -> Result<FrameSource> {
        let dup = self.input.get_ref().try_clone()?;
        let input = std::mem::replace(&mut self.input, BufReader::with_capacity(0, dup));
        Ok(FrameSource {
            path: self.path.clone(),
            input,
            offset: self.offset,
            len: self.len,
            stored: Vec::new(),
            zstd: zstd::bulk::Decompressor::new()?,
        })
    }

    /// Reads the next frame and unpacks, checks or skips its payload as
    /// `plan` says. `records_frames` counts records frames (for shards);
    /// `spare` supplies a buffer to decompress a records frame into.
    fn load(
        &mut self,
        plan: &LoadPlan,
        records_frames: &mut u64,
        spare: &mut dyn FnMut() -> Vec<u8>,
    ) -> Result<Option<Loaded>> {
        let offset = self.offset;
        let Some(header) = self.next_header()? else {
            return Ok(None);
        };
        let body = match header.kind {
            FrameKind::Records => {
                let ordinal = *records_frames;
                *records_frames += 1;
                if plan.shard.is_some_and(|(i, n)| ordinal % n != i) {
                    self.skip(&header)?;
                    Body::Skipped
                } else {
                    let mut out = spare();
                    self.unpack(&header, &mut out)?;
                    Body::Unpacked(out)
                }
            }
            FrameKind::Blobs if plan.data => {
                let mut out = Vec::new();
                self.unpack(&header, &mut out)?;
                Body::Unpacked(out)
            }
            FrameKind::Blobs if plan.check_skipped && plan.shard.is_none_or(|(i, _)| i == 0) => {
                self.payload(&header)?;
                Body::Checked
            }
            FrameKind::Meta | FrameKind::End => {
                let mut out = Vec::new();
                self.unpack(&header, &mut out)?;
                Body::Unpacked(out)
            }
            FrameKind::Blobs | FrameKind::Unknown(_) => {
                self.skip(&header)?;
                Body::Skipped
            }
        };
        Ok(Some(Loaded {
            header,
            offset,
            next: self.offset,
            body,
        }))
    }

    /// Repositions the sequential reader (recover's resynchronisation).
    pub(crate) fn seek_to(&mut self, offset: u64) -> Result<()> {
        self.input
            .seek(std::io::SeekFrom::Start(offset))
            .map_err(|e| Error::from(e).at(offset, None))?;
        self.offset = offset;
        Ok(())
    }

    /// Reads the blob frame at `offset` out of band (for an old reference).
    pub(crate) fn blob_frame_at(&mut self, offset: u64, number: u64) -> Result<BlobFrame> {
        let file = self.input.get_ref();
        let mut h = [0u8; FRAME_HEADER_LEN];
        file.read_exact_at(&mut h, offset)
            .map_err(|e| Error::from(e).at(offset, Some(number)))?;
        let header = FrameHeader::decode(&h).map_err(|e| e.at(offset, Some(number)))?;
        if header.kind != FrameKind::Blobs || header.number != number {
            return Err(Error::corrupt(format!(
                "frame {number} is not the blob frame it was indexed as"
            ))
            .at(offset, Some(number)));
        }
        let mut stored = vec![0u8; header.stored_len as usize];
        file.read_exact_at(&mut stored, offset + FRAME_HEADER_LEN as u64)
            .map_err(|e| Error::from(e).at(offset, Some(number)))?;
        if header.checksum(&stored) != header.crc {
            return Err(Error::new(ErrorKind::Checksum).at(offset, Some(number)));
        }
        let mut raw = Vec::new();
        header
            .unpack(&stored, &mut raw, &mut self.zstd)
            .map_err(|e| e.at(offset, Some(number)))?;
        BlobFrame::parse(raw, header.count).map_err(|e| e.at(offset, Some(number)))
    }
}

/// Where blob frames are and the most recent ones, decoded.
#[derive(Default)]
pub(crate) struct BlobStore {
    /// (frame number, file offset) of every blob frame seen, in order.
    offsets: Vec<(u64, u64)>,
    /// (frame number, frame, whether it came in file order).
    cache: Vec<(u64, Rc<BlobFrame>, bool)>,
}

impl BlobStore {
    pub(crate) fn note(&mut self, number: u64, offset: u64) {
        self.offsets.push((number, offset));
    }

    /// Caches a blob frame read in file order.
    pub(crate) fn insert(&mut self, number: u64, frame: BlobFrame) {
        self.cache_frame(number, frame, true);
    }

    fn cache_frame(&mut self, number: u64, frame: BlobFrame, in_order: bool) {
        let cap = if in_order {
            BLOB_CACHE_FRAMES
        } else {
            RECALLED_FRAMES
        };
        let mut same = self.cache.iter().filter(|c| c.2 == in_order);
        if same.clone().count() >= cap {
            // The least recently used of its kind.
            let n = same.next().expect("cap > 0").0;
            self.cache.retain(|c| c.0 != n || c.2 != in_order);
        }
        self.cache.push((number, Rc::new(frame), in_order));
    }

    fn offset_of(&self, number: u64) -> Option<u64> {
        let i = self
            .offsets
            .binary_search_by_key(&number, |&(n, _)| n)
            .ok()?;
        Some(self.offsets[i].1)
    }

    /// The bytes `refs` point to: a shared slice of the blob frame for a
    /// buffer stored in one piece in a frame read in file order, a copy
    /// otherwise. Only recent frames are shared, so the captures a caller
    /// keeps (replay's read-ahead) hold the frames around them alive, not
    /// one old frame per deduplicated buffer. At most `limit` bytes, the
    /// buffer's start: chunks past it are not read. `Ok(None)` when a
    /// chunk's frame is unknown and `missing_ok` (recover); an error
    /// otherwise, and when the chunks do not hold the `captured` bytes the
    /// record says.
    pub(crate) fn resolve(
        &mut self,
        src: &mut FrameSource,
        refs: &[BlobRef],
        captured: u64,
        limit: usize,
        missing_ok: bool,
    ) -> Result<Option<Bytes>> {
        let mut chunks: Vec<Bytes> = Vec::with_capacity(refs.len());
        let mut shareable = refs.len() == 1;
        let mut loaded = 0;
        for r in refs {
            if loaded >= limit {
                break;
            }
            let cached = self.cache.iter().rposition(|(n, ..)| *n == r.frame);
            let frame = match cached {
                Some(i) => {
                    // Least recently used goes first: a frame that keeps
                    // being referred to (data read back many times) stays.
                    let hit = self.cache.remove(i);
                    let f = Rc::clone(&hit.1);
                    shareable &= hit.2;
                    self.cache.push(hit);
                    f
                }
                None => {
                    let Some(offset) = self.offset_of(r.frame) else {
                        if missing_ok {
                            return Ok(None);
                        }
                        return Err(Error::corrupt(format!(
                            "a buffer refers to blob frame {}, which is not earlier in the file",
                            r.frame
                        )));
                    };
                    let f = match src.blob_frame_at(offset, r.frame) {
                        Ok(f) => f,
                        Err(_) if missing_ok => return Ok(None),
                        Err(e) => return Err(e),
                    };
                    self.cache_frame(r.frame, f, false);
                    shareable = false;
                    Rc::clone(&self.cache.last().expect("just inserted").1)
                }
            };
            match frame.get(r.index) {
                Some(bytes) => {
                    loaded += bytes.len();
                    chunks.push(bytes);
                }
                None if missing_ok => return Ok(None),
                None => {
                    return Err(Error::corrupt(format!(
                        "blob {} of frame {} does not exist",
                        r.index, r.frame
                    )));
                }
            }
        }
        // All chunks read must hold the whole buffer; a prefix stops once
        // it has its bytes.
        let whole = chunks.len() == refs.len();
        if whole && loaded as u64 != captured || !whole && loaded < limit {
            return Err(Error::corrupt(format!(
                "buffer chunks hold {loaded} bytes, record says {captured}"
            )));
        }
        Ok(Some(match chunks.pop() {
            Some(only) if shareable => only.slice(..only.len().min(limit)),
            Some(last) => {
                chunks.push(last);
                let mut whole = chunks.concat();
                whole.truncate(limit);
                Bytes::from(whole)
            }
            None => Bytes::new(),
        }))
    }
}

/// Which frames a reader decompresses, only checks, or skips. Fixed when
/// the first frame is read, so a prefetching thread decides exactly as
/// the reader would.
#[derive(Debug, Clone, Copy)]
struct LoadPlan {
    data: bool,
    check_skipped: bool,
    shard: Option<(u64, u64)>,
}

/// A frame's payload as it was loaded.
enum Body {
    /// Decompressed.
    Unpacked(Vec<u8>),
    /// Read and checksummed, not decompressed.
    Checked,
    /// Not read.
    Skipped,
}

/// A frame read from the file.
struct Loaded {
    header: FrameHeader,
    /// Offset of its header.
    offset: u64,
    /// Offset of the frame after it.
    next: u64,
    body: Body,
}

/// How many frames a prefetching thread may have loaded ahead of the
/// reader: enough to keep both threads busy, few enough to bound memory.
const PREFETCH_FRAMES: usize = 3;

/// Where frames come from.
enum Frames {
    /// Read on the reader's own thread (the default).
    Inline {
        records_frames: u64,
        /// The previous records frame's buffer, reused for the next.
        spare: Vec<u8>,
    },
    /// Asked for, not started: a thread will be started by the first read.
    PrefetchRequested,
    /// Read and decompressed ahead by a thread of their own.
    Prefetched {
        frames: Receiver<Result<Option<Loaded>>>,
        /// Records buffers returned to the thread for reuse.
        spares: SyncSender<Vec<u8>>,
    },
    /// The thread could not be started: reading fails with this.
    Failed(String),
}

/// The prefetching thread: loads frames until the end frame, an error, the
/// end of the file, or the reader going away.
fn prefetch(
    mut src: FrameSource,
    plan: LoadPlan,
    out: SyncSender<Result<Option<Loaded>>>,
    spares: Receiver<Vec<u8>>,
) {
    let mut records_frames = 0;
    loop {
        let loaded = src.load(&plan, &mut records_frames, &mut || {
            spares.try_recv().unwrap_or_default()
        });
        let last = !matches!(&loaded, Ok(Some(l)) if l.header.kind != FrameKind::End);
        if out.send(loaded).is_err() || last {
            return;
        }
    }
}

/// Counts a reader keeps, checked against the end summary.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ReadCounts {
    /// Records returned.
    pub records: u64,
    /// Records of kinds this reader does not know (from a later minor
    /// version), skipped.
    pub skipped_unknown: u64,
    /// System-call records passed over unread ([`Reader::skip_syscalls`]).
    pub passed_syscalls: u64,
    /// Frames read.
    pub frames: u64,
}

/// Reads a trace from start to end. Iterate it for records; after the
/// last record [`Reader::end`] holds the writer's summary.
pub struct Reader {
    src: FrameSource,
    version: (u16, u16),
    meta: TraceMeta,
    opts: ReadOptions,
    next_number: u64,
    records: Vec<u8>,
    pos: usize,
    frame: Option<(u64, u64)>,
    delta: Delta,
    blobs: BlobStore,
    end: Option<EndSummary>,
    counts: ReadCounts,
    done: bool,
    check_skipped: bool,
    /// Without data, still load path contents (`PathData`).
    path_data: bool,
    /// Most bytes of each buffer loaded (`limit_data`).
    data_limit: usize,
    /// Pass over system-call records (`skip_syscalls`).
    skip_syscalls: bool,
    /// (index, count): return only records frames whose ordinal among
    /// records frames is `index` modulo `count`.
    shard: Option<(u64, u64)>,
    frames: Frames,
    /// Records in frames left to other shards (for the end check).
    records_elsewhere: u64,
}

impl Reader {
    /// Opens `path` and reads its header and meta frame.
    pub fn open(path: &Path, opts: ReadOptions) -> Result<Self> {
        let (mut src, version) = FrameSource::open(path)?;
        let fail = |e: Error| e.in_file(path);
        let at = src.offset;
        let h = src
            .next_header()
            .map_err(fail)?
            .ok_or_else(|| fail(Error::new(ErrorKind::Truncated).at(at, Some(0))))?;
        if h.kind != FrameKind::Meta || h.number != 0 {
            return Err(fail(
                Error::corrupt("the first frame is not the meta frame").at(at, Some(h.number)),
            ));
        }
        let mut raw = Vec::new();
        src.unpack(&h, &mut raw).map_err(fail)?;
        let meta: TraceMeta = serde_json::from_slice(&raw).map_err(|e| {
            fail(Error::corrupt(format!("meta frame is not valid JSON: {e}")).at(at, Some(0)))
        })?;
        Ok(Reader {
            src,
            version,
            meta,
            opts,
            next_number: 1,
            records: Vec::new(),
            pos: 0,
            frame: None,
            delta: Delta::default(),
            blobs: BlobStore::default(),
            end: None,
            counts: ReadCounts::default(),
            done: false,
            check_skipped: false,
            path_data: false,
            data_limit: usize::MAX,
            skip_syscalls: false,
            shard: None,
            frames: Frames::Inline {
                records_frames: 0,
                spare: Vec::new(),
            },
            records_elsewhere: 0,
        })
    }

    /// Returns only the records of every `count`-th records frame, starting
    /// with the `index`-th: `count` readers of one file, one per thread,
    /// together return every record exactly once, each in file order within
    /// its frames. For work that does not depend on order across frames
    /// (mergeable statistics). Every shard still checks the frame sequence
    /// and the end record; shard 0 alone checksums skipped blob frames.
    /// Call before reading. `count` 0 or 1 reads everything.
    pub fn set_shard(&mut self, index: u64, count: u64) {
        self.shard = (count > 1).then_some((index % count, count));
    }

    /// Without data, still read every blob frame and check its checksum
    /// (without decompressing it), so damage anywhere in the file is
    /// reported. Costs reading the whole file; analysis commands use it so
    /// that every command rejects a corrupt trace.
    pub fn check_skipped_frames(&mut self, on: bool) {
        self.check_skipped = on;
    }

    /// Without data, still load the contents of `PathData` records, each
    /// from its blob frame read out of band when a record refers to it:
    /// replay's preparation needs the files' initial contents and none of
    /// the calls' buffers, and skipping the rest of the blob frames saves
    /// decompressing every buffer of the trace. Call before reading.
    pub fn load_path_data(&mut self, on: bool) {
        self.path_data = on;
    }

    /// Load at most `max` bytes of each buffer: a longer one's
    /// `Capture::data` is its first `max` bytes (its `captured` says how
    /// long it is; buffers of up to 64 bytes, kept in their record, come
    /// whole). For callers that look only at the start of buffers
    /// (paths, a dump's first bytes): a 256 MiB buffer cost its size twice
    /// over in memory, once in its frames and once whole. Call before
    /// reading.
    pub fn limit_data(&mut self, max: usize) {
        self.data_limit = max;
    }

    /// Pass over system-call records without decoding or returning them
    /// (they are still counted, and the file still checked): replay's
    /// preparation reads only path records, and decoding every call's
    /// arguments and captures was most of its time. Call before reading.
    pub fn skip_syscalls(&mut self, on: bool) {
        self.skip_syscalls = on;
    }

    /// Read and decompress frames on a thread of their own, a few frames
    /// ahead, so that decoding records on this thread overlaps with
    /// reading and decompressing. Worth it when the caller does real
    /// work per record and another core is free. Call before reading.
    pub fn prefetch(&mut self) {
        if self.next_number == 1 && matches!(self.frames, Frames::Inline { .. }) {
            self.frames = Frames::PrefetchRequested;
        }
    }

    /// The trace's self-description.
    pub fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    /// The format version of the file (major, minor).
    pub fn version(&self) -> (u16, u16) {
        self.version
    }

    /// The writer's end summary, once the end frame has been read.
    pub fn end(&self) -> Option<&EndSummary> {
        self.end.as_ref()
    }

    /// What has been read so far.
    pub fn counts(&self) -> ReadCounts {
        self.counts
    }

    /// Byte offset of the next unread frame, for progress reporting.
    pub fn offset(&self) -> u64 {
        self.src.offset
    }

    /// Size of the trace file in bytes.
    pub fn file_len(&self) -> u64 {
        self.src.len
    }

    /// The next record; `Ok(None)` after the end frame. After an error the
    /// reader is done.
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        if self.done {
            return Ok(None);
        }
        match self.step() {
            Ok(r) => {
                if r.is_none() {
                    self.done = true;
                }
                Ok(r)
            }
            Err(e) => {
                self.done = true;
                Err(e.in_file(&self.src.path))
            }
        }
    }

    fn step(&mut self) -> Result<Option<Record>> {
        loop {
            if let Some((number, offset)) = self.frame {
                let mut c = Cursor::new(&self.records);
                c.pos = self.pos;
                let (src, blobs) = (&mut self.src, &mut self.blobs);
                let (data, path_data) = (self.opts.data, self.path_data);
                let limit = self.data_limit;
                let mut resolve = |refs: &[BlobRef], of_path: bool, captured: u64| {
                    if data || (path_data && of_path) {
                        blobs.resolve(src, refs, captured, limit, false)
                    } else {
                        Ok(None)
                    }
                };
                let rec = codec::next_record(
                    &mut c,
                    &mut self.delta,
                    &mut resolve,
                    &mut self.counts.skipped_unknown,
                    self.skip_syscalls
                        .then_some(&mut self.counts.passed_syscalls),
                )
                .map_err(|e| e.at(offset, Some(number)))?;
                self.pos = c.pos;
                match rec {
                    Some(r) => {
                        self.counts.records += 1;
                        return Ok(Some(r));
                    }
                    None => self.frame = None,
                }
            }
            let Some(Loaded {
                header: h,
                offset,
                next,
                body,
            }) = self.next_frame()?
            else {
                return Err(Error::new(ErrorKind::MissingEnd).at(self.src.offset, None));
            };
            self.src.offset = next;
            if h.number != self.next_number {
                return Err(Error::corrupt(format!(
                    "expected frame {}, found frame {}",
                    self.next_number, h.number
                ))
                .at(offset, Some(h.number)));
            }
            self.next_number += 1;
            self.counts.frames += 1;
            match (h.kind, body) {
                (FrameKind::Records, Body::Unpacked(records)) => {
                    let used = std::mem::replace(&mut self.records, records);
                    self.frames.recycle(used);
                    self.pos = 0;
                    self.delta = Delta::default();
                    self.frame = Some((h.number, offset));
                }
                (FrameKind::Records, _) => {
                    self.records_elsewhere += u64::from(h.count);
                }
                (FrameKind::Blobs, body) => {
                    self.blobs.note(h.number, offset);
                    if let Body::Unpacked(raw) = body {
                        let f = BlobFrame::parse(raw, h.count)
                            .map_err(|e| e.at(offset, Some(h.number)))?;
                        self.blobs.insert(h.number, f);
                    }
                }
                (FrameKind::End, body) => {
                    let Body::Unpacked(raw) = body else {
                        unreachable!("end frames are always unpacked")
                    };
                    let end: EndSummary = serde_json::from_slice(&raw).map_err(|e| {
                        Error::corrupt(format!("end frame: {e}")).at(offset, Some(h.number))
                    })?;
                    let read = self.counts.records
                        + self.counts.skipped_unknown
                        + self.counts.passed_syscalls
                        + self.records_elsewhere;
                    if end.records != read {
                        return Err(Error::corrupt(format!(
                            "end record counts {} records, the file holds {read}",
                            end.records
                        ))
                        .at(offset, Some(h.number)));
                    }
                    if self.src.offset != self.src.len {
                        return Err(Error::corrupt(format!(
                            "{} unexpected bytes after the end record",
                            self.src.len - self.src.offset
                        ))
                        .at(self.src.offset, None));
                    }
                    self.end = Some(end);
                    return Ok(None);
                }
                (FrameKind::Meta, _) => {
                    return Err(Error::corrupt("a second meta frame").at(offset, Some(h.number)));
                }
                (FrameKind::Unknown(k), _) => {
                    if h.flags & FLAG_SKIPPABLE == 0 {
                        return Err(Error::corrupt(format!(
                            "unknown frame kind {k} (written by a newer version of reanimator?)"
                        ))
                        .at(offset, Some(h.number)));
                    }
                }
            }
        }
    }

    /// The next frame from wherever frames come from, starting the
    /// prefetching thread on the first call if one was asked for.
    fn next_frame(&mut self) -> Result<Option<Loaded>> {
        let plan = LoadPlan {
            data: self.opts.data,
            check_skipped: self.check_skipped,
            shard: self.shard,
        };
        if matches!(self.frames, Frames::PrefetchRequested) {
            self.frames = self.start_prefetch(plan);
        }
        match &mut self.frames {
            Frames::Inline {
                records_frames,
                spare,
            } => self
                .src
                .load(&plan, records_frames, &mut || std::mem::take(spare)),
            Frames::Prefetched { frames, .. } => frames.recv().unwrap_or_else(|_| {
                Err(Error::from(std::io::Error::other(
                    "the trace prefetching thread stopped",
                )))
            }),
            Frames::Failed(why) => Err(Error::from(std::io::Error::other(why.clone()))),
            Frames::PrefetchRequested => unreachable!("started above"),
        }
    }

    /// Starts the prefetching thread, or falls back to reading inline.
    fn start_prefetch(&mut self, plan: LoadPlan) -> Frames {
        let src = match self.src.split() {
            Ok(src) => src,
            Err(e) => return Frames::Failed(format!("cannot prefetch the trace: {e}")),
        };
        let (tx, frames) = sync_channel(PREFETCH_FRAMES);
        let (spares, spares_rx) = sync_channel(PREFETCH_FRAMES + 1);
        let started = std::thread::Builder::new()
            .name("trace-prefetch".into())
            .spawn(move || prefetch(src, plan, tx, spares_rx));
        match started {
            Ok(_) => Frames::Prefetched { frames, spares },
            Err(e) => Frames::Failed(format!("cannot start the trace prefetching thread: {e}")),
        }
    }
}

impl Frames {
    /// Gives a used records buffer back for the next records frame.
    fn recycle(&mut self, used: Vec<u8>) {
        match self {
            Frames::Inline { spare, .. } => *spare = used,
            Frames::Prefetched { spares, .. } => {
                let _ = spares.try_send(used);
            }
            Frames::PrefetchRequested | Frames::Failed(_) => {}
        }
    }
}

impl Iterator for Reader {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}
