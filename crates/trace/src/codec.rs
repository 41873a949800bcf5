//! Record encoding inside a records frame, and the blob-frame directory.
//!
//! Every record is `tag u8, body_len varint, body`; sequence ids and times
//! are zig-zag deltas from the previous record of the same frame, so frames
//! decode independently and most numbers take one or two bytes. Readers
//! ignore bytes after the fields they know (later minor versions append
//! fields) and skip records with unknown tags.

use crate::error::{Error, Result};
use crate::record::*;
use crate::varint::{put, put_bytes, put_signed, Cursor};

pub(crate) const TAG_SYSCALL: u8 = 1;
pub(crate) const TAG_PROCESS_START: u8 = 2;
pub(crate) const TAG_PROCESS_EXIT: u8 = 3;
pub(crate) const TAG_SIGNAL: u8 = 4;
pub(crate) const TAG_LOSS: u8 = 5;
pub(crate) const TAG_PATH_STATE: u8 = 6;
pub(crate) const TAG_PATH_DATA: u8 = 7;

pub(crate) const SYSCALL_HAS_EXIT: u8 = 1;
pub(crate) const SYSCALL_IS_ERROR: u8 = 2;

pub(crate) const STORE_NONE: u8 = 0;
pub(crate) const STORE_INLINE: u8 = 1;
pub(crate) const STORE_CHUNKS: u8 = 2;

/// Where one chunk of a captured buffer lives: blob `index` of frame
/// `frame`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlobRef {
    pub frame: u64,
    pub index: u32,
}

/// Per-frame delta state for sequence ids and times.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Delta {
    seq: u64,
    time: u64,
}

impl Delta {
    pub(crate) fn put_seq_time(&mut self, buf: &mut Vec<u8>, seq: u64, time: u64) {
        put_signed(buf, seq.wrapping_sub(self.seq) as i64);
        put_signed(buf, time.wrapping_sub(self.time) as i64);
        self.seq = seq;
        self.time = time;
    }

    fn get_seq_time(&mut self, c: &mut Cursor<'_>) -> Option<(u64, u64)> {
        self.seq = self.seq.wrapping_add(c.get_signed()? as u64);
        self.time = self.time.wrapping_add(c.get_signed()? as u64);
        Some((self.seq, self.time))
    }
}

/// Encodes the fixed part of a syscall body (everything before the
/// captures).
pub(crate) fn put_syscall_head(buf: &mut Vec<u8>, d: &mut Delta, e: &SyscallHead) {
    d.put_seq_time(buf, e.seq, e.enter_ns);
    put(buf, e.tgid.into());
    put(buf, e.tid.into());
    put(buf, e.nr.into());
    let mut flags = 0u8;
    if let Some(x) = e.exit {
        flags |= SYSCALL_HAS_EXIT;
        if x.is_error {
            flags |= SYSCALL_IS_ERROR;
        }
    }
    buf.push(flags);
    for a in e.args {
        put(buf, a);
    }
    if let Some(x) = e.exit {
        put_signed(buf, x.exit_ns.wrapping_sub(e.enter_ns) as i64);
        put_signed(buf, x.ret);
    }
}

/// Encodes a capture's fixed fields (before its storage).
pub(crate) fn put_capture_head(buf: &mut Vec<u8>, c: &CaptureHead) {
    buf.push(c.arg);
    buf.push(match c.role {
        Role::Entry => 0,
        Role::Exit => 1,
    });
    put(buf, c.elem.into());
    buf.push(c.status.code());
    put(buf, c.len);
}

/// The fixed part of a system call, as a recorder hands it to the writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyscallHead {
    /// Global sequence id.
    pub seq: u64,
    /// Process id.
    pub tgid: u32,
    /// Thread id.
    pub tid: u32,
    /// Syscall number.
    pub nr: u32,
    /// Entry time, ns of `CLOCK_MONOTONIC`.
    pub enter_ns: u64,
    /// Raw arguments.
    pub args: [u64; 6],
    /// The exit, if the call returned.
    pub exit: Option<SyscallExit>,
}

/// A capture's description, as a recorder hands it to the writer with the
/// bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureHead {
    /// Argument index.
    pub arg: u8,
    /// When it was read.
    pub role: Role,
    /// Element index (iovec, string array).
    pub elem: u32,
    /// Whether every byte is there.
    pub status: CaptureStatus,
    /// The length the size rule asked for.
    pub len: u64,
}

pub(crate) fn put_record_body(buf: &mut Vec<u8>, d: &mut Delta, r: &Record) -> u8 {
    match r {
        Record::Syscall(_) | Record::PathData(_) => {
            unreachable!("records with buffers are encoded by the writer")
        }
        Record::PathState(p) => {
            d.put_seq_time(buf, p.seq, p.time_ns);
            buf.push(match p.phase {
                PathPhase::Before => 0,
                PathPhase::After => 1,
            });
            put_bytes(buf, &p.path);
            buf.push(p.kind.code());
            for v in [p.mode, p.uid, p.gid] {
                put(buf, v.into());
            }
            put(buf, p.size);
            put_bytes(buf, &p.target);
            put(buf, p.xattrs.len() as u64);
            for (name, value) in &p.xattrs {
                put_bytes(buf, name);
                put_bytes(buf, value);
            }
            // A piece sum goes in a trailing field (1.2): a 1.1 reader
            // sees no sum and skips the comparison instead of misreading.
            match p.hash {
                Some(ContentHash::Whole(h)) => {
                    buf.push(1);
                    buf.extend_from_slice(&h.to_le_bytes());
                }
                _ => buf.push(0),
            }
            buf.push(p.content.code());
            match p.hash {
                Some(ContentHash::Pieces(h)) => {
                    buf.push(1);
                    buf.extend_from_slice(&h.to_le_bytes());
                }
                _ if p.link != 0 => buf.push(0),
                _ => {}
            }
            // The hard-link number trails the piece sum (1.4).
            if p.link != 0 {
                put(buf, p.link);
            }
            TAG_PATH_STATE
        }
        Record::ProcessStart(p) => {
            d.put_seq_time(buf, p.seq, p.time_ns);
            for v in [p.tgid, p.tid, p.ppid] {
                put(buf, v.into());
            }
            buf.push(match p.cause {
                StartCause::Spawned => 0,
                StartCause::Attached => 1,
                StartCause::Created => 2,
            });
            for v in [p.uid, p.gid, p.euid, p.egid, p.umask] {
                put(buf, v.into());
            }
            put_bytes(buf, &p.cwd);
            put_bytes(buf, &p.exe);
            for list in [&p.argv, &p.env] {
                put(buf, list.len() as u64);
                for s in list.iter() {
                    put_bytes(buf, s);
                }
            }
            put(buf, p.fds.len() as u64);
            for f in &p.fds {
                put_signed(buf, f.fd.into());
                put(buf, f.flags.into());
                put(buf, f.offset);
                put_bytes(buf, &f.target);
            }
            if let Some(groups) = &p.groups {
                put(buf, groups.len() as u64);
                for &g in groups {
                    put(buf, g.into());
                }
                // Trailing (1.5), after the groups it needs to be placed.
                let shared: Vec<(i32, i32)> = p
                    .fds
                    .iter()
                    .filter_map(|f| Some((f.fd, f.same_as?)))
                    .collect();
                if !shared.is_empty() {
                    put(buf, shared.len() as u64);
                    for (fd, same_as) in shared {
                        put_signed(buf, fd.into());
                        put_signed(buf, same_as.into());
                    }
                }
            }
            TAG_PROCESS_START
        }
        Record::ProcessExit(p) => {
            d.put_seq_time(buf, p.seq, p.time_ns);
            put(buf, p.tgid.into());
            put(buf, p.tid.into());
            let (kind, value, core) = match p.status {
                ExitStatus::Exited(c) => (0u8, c, false),
                ExitStatus::Killed { signal, core } => (1, signal, core),
                ExitStatus::Detached => (2, 0, false),
                ExitStatus::Superseded { by } => (3, by as i32, false),
            };
            buf.push(kind);
            put_signed(buf, value.into());
            buf.push(core as u8);
            TAG_PROCESS_EXIT
        }
        Record::Signal(s) => {
            d.put_seq_time(buf, s.seq, s.time_ns);
            put(buf, s.tgid.into());
            put(buf, s.tid.into());
            put_signed(buf, s.signo.into());
            put_signed(buf, s.code.into());
            put(buf, s.sender.into());
            TAG_SIGNAL
        }
        Record::Loss(l) => {
            d.put_seq_time(buf, l.seq, l.time_ns);
            put(buf, l.tgid.into());
            put(buf, l.tid.into());
            put(buf, l.count);
            put_bytes(buf, l.reason.as_bytes());
            TAG_LOSS
        }
    }
}

/// Resolves a capture's chunk references to its bytes, of which the record
/// says there are `u64` (an error if the chunks hold another number, or
/// the first ones when the reader loads only a prefix); `Ok(None)` when the
/// reader does not load data, or the data is gone (recover). The flag says
/// whether the capture is a path's contents (`PathData`) rather than a
/// call's buffer: a reader may load the one and not the other.
pub(crate) type Resolve<'r> = dyn FnMut(&[BlobRef], bool, u64) -> Result<Option<Bytes>> + 'r;

/// Decodes the next record of a frame. `Ok(None)` at the end of the
/// payload; unknown tags are skipped and reported through `skipped`.
pub(crate) fn next_record(
    c: &mut Cursor<'_>,
    d: &mut Delta,
    resolve: &mut Resolve<'_>,
    skipped: &mut u64,
    mut passed_syscalls: Option<&mut u64>,
) -> Result<Option<Record>> {
    loop {
        if c.is_empty() {
            return Ok(None);
        }
        let tag = c.u8().ok_or_else(|| Error::corrupt("record tag"))?;
        let body = c
            .bytes()
            .ok_or_else(|| Error::corrupt("record length runs past the frame"))?;
        let mut b = Cursor::new(body);
        if let (TAG_SYSCALL, Some(passed)) = (tag, passed_syscalls.as_deref_mut()) {
            // Only the delta state is needed from a call passed over.
            d.get_seq_time(&mut b)
                .ok_or_else(|| Error::corrupt(format!("malformed record (tag {tag})")))?;
            *passed += 1;
            continue;
        }
        let rec = match tag {
            TAG_SYSCALL => decode_syscall(&mut b, d, resolve)?,
            TAG_PROCESS_START => decode_start(&mut b, d),
            TAG_PROCESS_EXIT => decode_exit(&mut b, d),
            TAG_SIGNAL => decode_signal(&mut b, d),
            TAG_LOSS => decode_loss(&mut b, d),
            TAG_PATH_STATE => decode_path_state(&mut b, d),
            TAG_PATH_DATA => decode_path_data(&mut b, d, resolve)?,
            _ => {
                // Its delta prefix still moves the frame's sequence and
                // time (every record has one): the next record's deltas
                // count from it.
                d.get_seq_time(&mut b)
                    .ok_or_else(|| Error::corrupt(format!("malformed record (tag {tag})")))?;
                *skipped += 1;
                continue;
            }
        };
        return rec
            .map(Some)
            .ok_or_else(|| Error::corrupt(format!("malformed record (tag {tag})")));
    }
}

fn decode_syscall(
    b: &mut Cursor<'_>,
    d: &mut Delta,
    resolve: &mut Resolve<'_>,
) -> Result<Option<Record>> {
    let Some(head) = decode_syscall_head(b, d) else {
        return Ok(None);
    };
    let Some(n) = b.get() else { return Ok(None) };
    let mut captures = Vec::with_capacity(n.min(64) as usize);
    for _ in 0..n {
        let Some(c) = decode_capture(b, resolve, false)? else {
            return Ok(None);
        };
        captures.push(c);
    }
    Ok(Some(Record::Syscall(SyscallEvent {
        seq: head.seq,
        tgid: head.tgid,
        tid: head.tid,
        nr: head.nr,
        enter_ns: head.enter_ns,
        args: head.args,
        exit: head.exit,
        captures,
    })))
}

fn decode_syscall_head(b: &mut Cursor<'_>, d: &mut Delta) -> Option<SyscallHead> {
    let (seq, enter_ns) = d.get_seq_time(b)?;
    let tgid = b.get_u32()?;
    let tid = b.get_u32()?;
    let nr = b.get_u32()?;
    let flags = b.u8()?;
    let mut args = [0u64; 6];
    for a in &mut args {
        *a = b.get()?;
    }
    let exit = if flags & SYSCALL_HAS_EXIT != 0 {
        let dur = b.get_signed()?;
        let ret = b.get_signed()?;
        Some(SyscallExit {
            exit_ns: enter_ns.wrapping_add(dur as u64),
            ret,
            is_error: flags & SYSCALL_IS_ERROR != 0,
        })
    } else {
        None
    };
    Some(SyscallHead {
        seq,
        tgid,
        tid,
        nr,
        enter_ns,
        args,
        exit,
    })
}

fn decode_capture(
    b: &mut Cursor<'_>,
    resolve: &mut Resolve<'_>,
    path_data: bool,
) -> Result<Option<Capture>> {
    let parsed = (|| {
        let arg = b.u8()?;
        let role = match b.u8()? {
            0 => Role::Entry,
            1 => Role::Exit,
            _ => return None,
        };
        let elem = b.get_u32()?;
        let status = CaptureStatus::from_code(b.u8()?)?;
        let len = b.get()?;
        let store = b.u8()?;
        Some((arg, role, elem, status, len, store))
    })();
    let Some((arg, role, elem, status, len, store)) = parsed else {
        return Ok(None);
    };
    let (captured, data) = match store {
        STORE_NONE => match b.get() {
            Some(captured) => (captured, None),
            None => return Ok(None),
        },
        STORE_INLINE => {
            let Some(bytes) = b.bytes() else {
                return Ok(None);
            };
            (bytes.len() as u64, Some(Bytes::copy_from_slice(bytes)))
        }
        STORE_CHUNKS => {
            let Some(captured) = b.get() else {
                return Ok(None);
            };
            let Some(n) = b.get() else { return Ok(None) };
            let mut refs = Vec::with_capacity(n.min(4096) as usize);
            for _ in 0..n {
                let (Some(frame), Some(index)) = (b.get(), b.get_u32()) else {
                    return Ok(None);
                };
                refs.push(BlobRef { frame, index });
            }
            let data = resolve(&refs, path_data, captured)?;
            (captured, data)
        }
        _ => return Ok(None),
    };
    Ok(Some(Capture {
        arg,
        role,
        elem,
        status,
        len,
        captured,
        data,
    }))
}

fn decode_start(b: &mut Cursor<'_>, d: &mut Delta) -> Option<Record> {
    let (seq, time_ns) = d.get_seq_time(b)?;
    let tgid = b.get_u32()?;
    let tid = b.get_u32()?;
    let ppid = b.get_u32()?;
    let cause = match b.u8()? {
        0 => StartCause::Spawned,
        1 => StartCause::Attached,
        2 => StartCause::Created,
        _ => return None,
    };
    let uid = b.get_u32()?;
    let gid = b.get_u32()?;
    let euid = b.get_u32()?;
    let egid = b.get_u32()?;
    let umask = b.get_u32()?;
    let cwd = b.bytes()?.to_vec();
    let exe = b.bytes()?.to_vec();
    let mut lists = [Vec::new(), Vec::new()];
    for list in &mut lists {
        let n = b.get()?;
        for _ in 0..n {
            list.push(b.bytes()?.to_vec());
        }
    }
    let [argv, env] = lists;
    let n = b.get()?;
    let mut fds = Vec::new();
    for _ in 0..n {
        let fd = i32::try_from(b.get_signed()?).ok()?;
        let flags = b.get_u32()?;
        let offset = b.get()?;
        let target = b.bytes()?.to_vec();
        fds.push(FdInfo {
            fd,
            flags,
            offset,
            target,
            same_as: None,
        });
    }
    // Trailing (format 1.3): absent, the trace does not say.
    let groups = if b.is_empty() {
        None
    } else {
        let n = b.get()?;
        let mut groups = Vec::with_capacity(n.min(64) as usize);
        for _ in 0..n {
            groups.push(b.get_u32()?);
        }
        Some(groups)
    };
    // Trailing (format 1.5): descriptors sharing a description.
    if !b.is_empty() {
        let n = b.get()?;
        for _ in 0..n {
            let fd = i32::try_from(b.get_signed()?).ok()?;
            let same_as = i32::try_from(b.get_signed()?).ok()?;
            if let Some(f) = fds.iter_mut().find(|f| f.fd == fd) {
                f.same_as = Some(same_as);
            }
        }
    }
    Some(Record::ProcessStart(ProcessStart {
        seq,
        time_ns,
        tgid,
        tid,
        ppid,
        cause,
        uid,
        gid,
        euid,
        egid,
        umask,
        cwd,
        exe,
        argv,
        env,
        fds,
        groups,
    }))
}

fn decode_exit(b: &mut Cursor<'_>, d: &mut Delta) -> Option<Record> {
    let (seq, time_ns) = d.get_seq_time(b)?;
    let tgid = b.get_u32()?;
    let tid = b.get_u32()?;
    let kind = b.u8()?;
    let value = i32::try_from(b.get_signed()?).ok()?;
    let core = b.u8()? != 0;
    let status = match kind {
        0 => ExitStatus::Exited(value),
        1 => ExitStatus::Killed {
            signal: value,
            core,
        },
        2 => ExitStatus::Detached,
        3 => ExitStatus::Superseded { by: value as u32 },
        _ => return None,
    };
    Some(Record::ProcessExit(ProcessExit {
        seq,
        time_ns,
        tgid,
        tid,
        status,
    }))
}

fn decode_signal(b: &mut Cursor<'_>, d: &mut Delta) -> Option<Record> {
    let (seq, time_ns) = d.get_seq_time(b)?;
    Some(Record::Signal(SignalDelivery {
        seq,
        time_ns,
        tgid: b.get_u32()?,
        tid: b.get_u32()?,
        signo: i32::try_from(b.get_signed()?).ok()?,
        code: i32::try_from(b.get_signed()?).ok()?,
        sender: b.get_u32()?,
    }))
}

fn decode_loss(b: &mut Cursor<'_>, d: &mut Delta) -> Option<Record> {
    let (seq, time_ns) = d.get_seq_time(b)?;
    Some(Record::Loss(Loss {
        seq,
        time_ns,
        tgid: b.get_u32()?,
        tid: b.get_u32()?,
        count: b.get()?,
        reason: String::from_utf8_lossy(b.bytes()?).into_owned(),
    }))
}

/// Encodes the head of a path-data record (everything before its capture).
pub(crate) fn put_path_data_head(
    buf: &mut Vec<u8>,
    d: &mut Delta,
    seq: u64,
    time_ns: u64,
    path: &[u8],
    offset: u64,
) {
    d.put_seq_time(buf, seq, time_ns);
    put_bytes(buf, path);
    put(buf, offset);
}

fn decode_path_state(b: &mut Cursor<'_>, d: &mut Delta) -> Option<Record> {
    let (seq, time_ns) = d.get_seq_time(b)?;
    let phase = match b.u8()? {
        0 => PathPhase::Before,
        1 => PathPhase::After,
        _ => return None,
    };
    let path = b.bytes()?.to_vec();
    let kind = FileKind::from_code(b.u8()?)?;
    let mode = b.get_u32()?;
    let uid = b.get_u32()?;
    let gid = b.get_u32()?;
    let size = b.get()?;
    let target = b.bytes()?.to_vec();
    let n = b.get()?;
    let mut xattrs = Vec::with_capacity(n.min(64) as usize);
    for _ in 0..n {
        xattrs.push((b.bytes()?.to_vec(), b.bytes()?.to_vec()));
    }
    let mut hash = match b.u8()? {
        0 => None,
        1 => Some(ContentHash::Whole(u128::from_le_bytes(
            b.take(16)?.try_into().ok()?,
        ))),
        _ => return None,
    };
    let content = ContentNote::from_code(b.u8()?)?;
    if !b.is_empty() && b.u8()? == 1 {
        hash = Some(ContentHash::Pieces(u128::from_le_bytes(
            b.take(16)?.try_into().ok()?,
        )));
    }
    let link = if b.is_empty() { 0 } else { b.get()? };
    Some(Record::PathState(PathState {
        seq,
        time_ns,
        phase,
        path,
        kind,
        mode,
        uid,
        gid,
        size,
        target,
        xattrs,
        hash,
        content,
        link,
    }))
}

fn decode_path_data(
    b: &mut Cursor<'_>,
    d: &mut Delta,
    resolve: &mut Resolve<'_>,
) -> Result<Option<Record>> {
    let head = (|| {
        let (seq, time_ns) = d.get_seq_time(b)?;
        Some((seq, time_ns, b.bytes()?.to_vec(), b.get()?))
    })();
    let Some((seq, time_ns, path, offset)) = head else {
        return Ok(None);
    };
    Ok(decode_capture(b, resolve, true)?.map(|data| {
        Record::PathData(PathData {
            seq,
            time_ns,
            path,
            offset,
            data,
        })
    }))
}

/// A decoded blob frame: its directory and its data.
pub(crate) struct BlobFrame {
    /// (start, len, hash) of each blob within `data` (the whole payload).
    pub entries: Vec<(usize, usize, u128)>,
    /// Shared with every capture read out of it.
    pub data: Bytes,
}

impl BlobFrame {
    /// Parses a decompressed blob-frame payload.
    pub(crate) fn parse(payload: Vec<u8>, count: u32) -> Result<Self> {
        let mut c = Cursor::new(&payload);
        let n = c.get().ok_or_else(|| Error::corrupt("blob directory"))?;
        if n != u64::from(count) {
            return Err(Error::corrupt(format!(
                "blob frame lists {n} blobs, header says {count}"
            )));
        }
        let mut entries = Vec::with_capacity(n as usize);
        let mut start = 0usize;
        for _ in 0..n {
            let len = c
                .get()
                .and_then(|v| usize::try_from(v).ok())
                .ok_or_else(|| Error::corrupt("blob length"))?;
            let hash = c.take(16).ok_or_else(|| Error::corrupt("blob hash"))?;
            let hash = u128::from_le_bytes(hash.try_into().expect("16 bytes"));
            entries.push((start, len, hash));
            start = start
                .checked_add(len)
                .ok_or_else(|| Error::corrupt("blob length"))?;
        }
        let data_start = c.pos;
        if payload.len() - data_start != start {
            return Err(Error::corrupt(format!(
                "blob frame holds {} data bytes, directory says {start}",
                payload.len() - data_start
            )));
        }
        let entries = entries
            .into_iter()
            .map(|(s, l, h)| (s + data_start, l, h))
            .collect();
        Ok(BlobFrame {
            entries,
            data: Bytes::from(payload),
        })
    }

    /// The bytes of blob `index`, sharing the frame's memory.
    pub(crate) fn get(&self, index: u32) -> Option<Bytes> {
        let &(start, len, _) = self.entries.get(index as usize)?;
        let end = start.checked_add(len).filter(|&e| e <= self.data.len())?;
        Some(self.data.slice(start..end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after_state(hash: Option<ContentHash>) -> PathState {
        PathState {
            seq: 9,
            time_ns: 5,
            phase: PathPhase::After,
            path: b"/d/f".to_vec(),
            kind: FileKind::Regular,
            mode: 0o640,
            uid: 1,
            gid: 2,
            size: 3,
            target: Vec::new(),
            xattrs: Vec::new(),
            hash,
            content: ContentNote::None,
            link: 0,
        }
    }

    fn encode(p: &PathState) -> Vec<u8> {
        let mut body = Vec::new();
        put_record_body(
            &mut body,
            &mut Delta::default(),
            &Record::PathState(p.clone()),
        );
        body
    }

    fn decode(body: &[u8]) -> Option<PathState> {
        match decode_path_state(&mut Cursor::new(body), &mut Delta::default())? {
            Record::PathState(p) => Some(p),
            _ => None,
        }
    }

    /// A record of a kind this reader does not know still moves the
    /// frame's sequence and time: the record after it decodes with them.
    #[test]
    fn unknown_records_are_skipped_with_their_deltas() {
        let mut payload = Vec::new();
        let mut written = Delta::default();
        let mut unknown = Vec::new();
        written.put_seq_time(&mut unknown, 100_000, 12);
        unknown.extend_from_slice(b"a later minor's fields");
        payload.push(99);
        crate::varint::put_bytes(&mut payload, &unknown);
        let state = after_state(None);
        let mut body = Vec::new();
        let tag = put_record_body(&mut body, &mut written, &Record::PathState(state.clone()));
        payload.push(tag);
        crate::varint::put_bytes(&mut payload, &body);

        let mut c = Cursor::new(&payload);
        let (mut read, mut skipped) = (Delta::default(), 0);
        let rec = next_record(
            &mut c,
            &mut read,
            &mut |_, _, _| Ok(None),
            &mut skipped,
            None,
        );
        assert_eq!(rec.unwrap(), Some(Record::PathState(state)));
        assert_eq!(skipped, 1);
    }

    /// A piece sum (1.2) rides in a trailing field: without it (what a 1.1
    /// reader, which stops at the fields it knows, sees) the state reads
    /// the same with no sum, so old readers skip the comparison rather
    /// than misread; a whole sum stays where 1.1 put it.
    #[test]
    fn piece_sums_trail_and_whole_sums_stay_put() {
        let pieces = after_state(Some(ContentHash::Pieces(0xabc)));
        let body = encode(&pieces);
        assert_eq!(decode(&body), Some(pieces));
        let old_view = decode(&body[..body.len() - 17]).expect("1.1 fields alone decode");
        assert_eq!(old_view, after_state(None));

        let whole = after_state(Some(ContentHash::Whole(0xdef)));
        assert_eq!(decode(&encode(&whole)), Some(whole));
    }

    /// A hard-link number (1.4) trails the piece-sum flag, which is then
    /// always written: a 1.2 or 1.3 reader sees no sum and stops there.
    #[test]
    fn hard_link_numbers_trail_the_piece_sum() {
        let mut before = after_state(None);
        before.phase = PathPhase::Before;
        before.content = ContentNote::Complete;
        let plain = encode(&before);
        before.link = 300;
        let linked = encode(&before);
        assert_eq!(
            linked.len(),
            plain.len() + 1 + 2,
            "flag 0, then a 2-byte varint"
        );
        assert_eq!(decode(&linked), Some(before.clone()));
        let old_view = decode(&linked[..plain.len() + 1]).expect("1.3 fields alone decode");
        assert_eq!(old_view.link, 0);

        let mut after = after_state(Some(ContentHash::Pieces(7)));
        after.link = 1;
        assert_eq!(decode(&encode(&after)), Some(after));
    }
}
