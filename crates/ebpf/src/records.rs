//! The ring records of `bpf/records.h`, read from the bytes the kernel
//! wrote. Every size and offset here mirrors that header.

/// `struct rec_head` is 24 bytes: type, tid, seq, time.
const HEAD: usize = 24;
/// `struct rec_capture` without its data.
pub(crate) const CAPTURE_HEAD: usize = 72;

/// `rec_call.flags`: the call returned.
const CALL_RETURNED: u32 = 1;
/// `rec_capture.flags`.
pub(crate) const CAP_EXIT: u8 = 1;
pub(crate) const CAP_FAILED: u8 = 2;
pub(crate) const CAP_STRING: u8 = 4;
pub(crate) const CAP_UNTERMINATED: u8 = 8;
pub(crate) const CAP_RETRY: u8 = 16;
pub(crate) const CAP_RUN: u8 = 32;
pub(crate) const CAP_WHOLE: u8 = 64;

/// Where the rest of a spilled capture is (`struct rec_spill`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spill {
    /// The user address of the capture's first byte.
    pub addr: u64,
    /// CLOCK_MONOTONIC just before the thread was sent its stop.
    pub stop_ns: u64,
}

/// One ring record.
#[derive(Debug)]
pub(crate) enum RingRecord<'a> {
    Call {
        tid: u32,
        seq: u64,
        enter_ns: u64,
        tgid: u32,
        nr: u32,
        args: [u64; 6],
        /// `(exit_ns, ret)` when it returned.
        exit: Option<(u64, i64)>,
    },
    Capture {
        tid: u32,
        seq: u64,
        arg: u8,
        flags: u8,
        elem: u32,
        len: u64,
        present: u64,
        want: u64,
        offset: u64,
        data: &'a [u8],
        /// A spill: the bytes from `offset` to `want` are left in the
        /// process, to be read there.
        spill: Option<Spill>,
    },
    Fork {
        tid: u32,
        seq: u64,
        time_ns: u64,
        tgid: u32,
        ppid: u32,
        /// The thread whose call made it.
        creator: u32,
        ids: [u32; 4],
        umask: u32,
        /// A new address space (fork), not the parent's (vfork, threads).
        own_mm: bool,
    },
    Exec {
        tid: u32,
        old_tid: u32,
    },
    Exit {
        tid: u32,
        seq: u64,
        time_ns: u64,
        tgid: u32,
        code: u32,
    },
    Signal {
        tid: u32,
        seq: u64,
        time_ns: u64,
        tgid: u32,
        signo: i32,
        code: i32,
        sender: u32,
    },
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Reads one record; `None` for a record too short for its type or of an
/// unknown type (a mismatch between program and reader: counted as lost).
pub(crate) fn parse(b: &[u8]) -> Option<RingRecord<'_>> {
    let ty = u32_at(b, 0)?;
    let tid = u32_at(b, 4)?;
    let seq = u64_at(b, 8)?;
    let time_ns = u64_at(b, 16)?;
    let h = HEAD;
    Some(match ty {
        1 => {
            let mut args = [0u64; 6];
            for (i, a) in args.iter_mut().enumerate() {
                *a = u64_at(b, h + 8 + i * 8)?;
            }
            let flags = u32_at(b, h + 72)?;
            RingRecord::Call {
                tid,
                seq,
                enter_ns: time_ns,
                tgid: u32_at(b, h)?,
                nr: u32_at(b, h + 4)?,
                args,
                exit: (flags & CALL_RETURNED != 0)
                    .then(|| Some((u64_at(b, h + 56)?, u64_at(b, h + 64)? as i64)))
                    .flatten(),
            }
        }
        // A capture chunk and a spill share their layout up to the word at
        // h + 40: the chunk's size (its bytes follow), or the spill's
        // address.
        2 | 7 => {
            let last = u64_at(b, h + 40)?;
            let (data, spill) = if ty == 2 {
                let size = last as usize;
                (b.get(CAPTURE_HEAD..CAPTURE_HEAD.checked_add(size)?)?, None)
            } else {
                let spill = Spill {
                    addr: last,
                    stop_ns: time_ns,
                };
                (&[][..], Some(spill))
            };
            RingRecord::Capture {
                tid,
                seq,
                arg: *b.get(h)?,
                flags: *b.get(h + 1)?,
                elem: u32_at(b, h + 4)?,
                len: u64_at(b, h + 8)?,
                present: u64_at(b, h + 16)?,
                want: u64_at(b, h + 24)?,
                offset: u64_at(b, h + 32)?,
                data,
                spill,
            }
        }
        3 => RingRecord::Fork {
            tid,
            seq,
            time_ns,
            tgid: u32_at(b, h)?,
            ppid: u32_at(b, h + 4)?,
            creator: u32_at(b, h + 8)?,
            ids: [
                u32_at(b, h + 12)?,
                u32_at(b, h + 16)?,
                u32_at(b, h + 20)?,
                u32_at(b, h + 24)?,
            ],
            umask: u32_at(b, h + 28)?,
            own_mm: u32_at(b, h + 32)? != 0,
        },
        4 => RingRecord::Exec {
            tid,
            old_tid: u32_at(b, h + 4)?,
        },
        5 => RingRecord::Exit {
            tid,
            seq,
            time_ns,
            tgid: u32_at(b, h)?,
            code: u32_at(b, h + 4)?,
        },
        6 => RingRecord::Signal {
            tid,
            seq,
            time_ns,
            tgid: u32_at(b, h)?,
            signo: u32_at(b, h + 4)? as i32,
            code: u32_at(b, h + 8)? as i32,
            sender: u32_at(b, h + 12)?,
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_or_unknown_records_are_refused() {
        assert!(parse(&[]).is_none());
        assert!(parse(&[1, 0, 0, 0]).is_none());
        let mut unknown = vec![0u8; 64];
        unknown[0] = 99;
        assert!(parse(&unknown).is_none());
        // A capture whose size runs past the record.
        let mut cap = vec![0u8; CAPTURE_HEAD + 4];
        cap[0] = 2;
        cap[HEAD + 40] = 5;
        assert!(parse(&cap).is_none());
        cap[HEAD + 40] = 4;
        assert!(matches!(parse(&cap), Some(RingRecord::Capture { data, .. }) if data.len() == 4));
        // A spill is 72 bytes: one short of that is refused.
        let mut spill = vec![0u8; 72];
        spill[0] = 7;
        spill[HEAD + 40] = 3;
        assert!(parse(&spill[..71]).is_none());
        assert!(matches!(
            parse(&spill),
            Some(RingRecord::Capture { spill: Some(s), data, .. }) if s.addr == 3 && data.is_empty()
        ));
    }
}
