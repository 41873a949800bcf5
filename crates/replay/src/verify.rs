//! What counts as "the same result" when a call is replayed on another
//! file system.
//!
//! Return values and errnos must be equal (descriptor numbers and
//! addresses only in success or failure, since replay virtualises them).
//! Returned data must be equal byte for byte, except fields that name a
//! particular disk or moment: in `stat` and `statx` only type and
//! permissions, owner (where replay reproduces it: [`Owners`]) and size are
//! compared (not link counts: a library hard-linked under a name the trace
//! never touched has two links on the recording machine and one in
//! replay); `statfs` describes the file system and is not compared;
//! directory listings are compared as sets when the stream ends.

use reanimator_catalogue::{Ret, StructType};
use reanimator_fsstate::Owners;
use std::collections::HashSet;

use crate::exec::Verify;

/// The result of a replayed call differs from the recorded one.
pub(crate) type Mismatch = String;

/// Compares return values the way the return kind allows.
pub(crate) fn ret(kind: Ret, expected: i64, got: i64) -> Option<Mismatch> {
    let same = match kind {
        Ret::Fd | Ret::Addr => (expected >= 0) == (got >= 0) && (expected >= 0 || expected == got),
        _ => expected == got,
    };
    (!same).then(|| format!("returned {}, expected {}", show(got), show(expected)))
}

/// A return value with its errno name when it is an error.
pub(crate) fn show(v: i64) -> String {
    if (-4095..0).contains(&v) {
        let e = (-v) as i32;
        format!(
            "-1 {} ({})",
            errno_name(e),
            std::io::Error::from_raw_os_error(e)
        )
        .replace(&format!(" (os error {e})"), "")
    } else {
        v.to_string()
    }
}

fn errno_name(e: i32) -> &'static str {
    reanimator_text::errno_name(e as u32).unwrap_or("E?")
}

/// Checks an asynchronous request's completion in replay against its
/// recorded one (Linux AIO and io_uring alike), as far as `verify` asks:
/// the result `got` (`None`: not issued, the recorded result stands)
/// against `want`, then what a read brought into its buffers against the
/// data the recorded completion captured, element `j` found by
/// `captured(j)`.
pub(crate) fn completion<'a, 'c>(
    verify: Verify,
    (want, got): (i64, Option<i64>),
    bufs: impl Iterator<Item = &'a [u8]>,
    captured: impl Fn(u64) -> Option<&'c reanimator_trace::Capture>,
) -> Option<Mismatch> {
    let got = got.filter(|_| verify != Verify::None)?;
    if let Some(m) = ret(Ret::Size, want, got) {
        return Some(m);
    }
    if verify != Verify::Full {
        return None;
    }
    for (j, buf) in bufs.enumerate() {
        let Some(c) = captured(j as u64) else {
            continue;
        };
        let (reanimator_trace::CaptureStatus::Complete, Some(d)) = (c.status, c.data.as_deref())
        else {
            continue;
        };
        if let Some(m) = bytes("data", d, &buf[..d.len().min(buf.len())]) {
            return Some(m);
        }
    }
    None
}

/// Compares bytes; the first difference is reported.
pub(crate) fn bytes(what: &str, expected: &[u8], got: &[u8]) -> Option<Mismatch> {
    if expected == got {
        return None;
    }
    let at = expected
        .iter()
        .zip(got)
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(got.len()));
    Some(format!(
        "{what} differs at byte {at} of {} (expected {:02x?}, got {:02x?})",
        expected.len(),
        &expected[at..(at + 8).min(expected.len())],
        &got[at..(at + 8).min(got.len())]
    ))
}

/// Byte ranges of `struct stat` that must agree: mode, uid, gid,
/// size (x86_64 layout).
const STAT_MODE: std::ops::Range<usize> = 24..28;
const STAT_OWNER: std::ops::Range<usize> = 28..36;
const STAT_SIZE: std::ops::Range<usize> = 48..56;
/// The same in `struct statx`.
const STATX_OWNER: std::ops::Range<usize> = 20..28;
const STATX_MODE: std::ops::Range<usize> = 28..30;
const STATX_SIZE: std::ops::Range<usize> = 40..48;

/// Compares a structure the kernel returned.
pub(crate) fn structure(
    ty: StructType,
    expected: &[u8],
    got: &[u8],
    owners: &Owners,
) -> Option<Mismatch> {
    let fields = |mode: std::ops::Range<usize>,
                  owner: std::ops::Range<usize>,
                  size: std::ops::Range<usize>,
                  what: &str| {
        if expected.len() < size.end || got.len() < size.end {
            return bytes(what, expected, got);
        }
        // A directory's size is the file system's business (4096 on
        // ext4, entry-dependent on tmpfs and btrfs), not the program's.
        let ifmt = u32::from(u16::from_le_bytes([
            expected[mode.start],
            expected[mode.start + 1],
        ])) & libc::S_IFMT;
        // A field of up to 8 bytes, little-endian.
        let field = |b: &[u8], r: &std::ops::Range<usize>| {
            b[r.clone()]
                .iter()
                .rev()
                .fold(0u64, |v, &x| (v << 8) | u64::from(x))
        };
        let uid = field(expected, &(owner.start..owner.start + 4)) as u32;
        let gid = field(expected, &(owner.start + 4..owner.end)) as u32;
        // Owner bits only where the owner is kept (see `Owners`).
        let mut checks = vec![("mode", mode, u64::from(owners.mode_mask(uid)))];
        if ifmt != libc::S_IFDIR {
            checks.push(("size", size, !0));
        }
        if owners.kept(uid, gid) {
            checks.push(("owner", owner, !0));
        }
        for (name, r, mask) in checks {
            if field(expected, &r) & mask != field(got, &r) & mask {
                return Some(format!(
                    "{what}.{name} differs (expected {}, got {})",
                    le(name, &expected[r.clone()]),
                    le(name, &got[r])
                ));
            }
        }
        None
    };
    match ty {
        StructType::Stat => fields(STAT_MODE, STAT_OWNER, STAT_SIZE, "stat"),
        StructType::Statx => fields(STATX_MODE, STATX_OWNER, STATX_SIZE, "statx"),
        // Describes the file system, which replay changes on purpose.
        StructType::Statfs => None,
        // Listings are compared per stream (see `dirents`).
        StructType::Dirents64 | StructType::Dirents => None,
        StructType::NameList => name_list(expected, got),
        _ => bytes("data", expected, got),
    }
}

/// A field as `ls` and `stat` show it: sizes as one 64-bit number in
/// decimal, modes in octal (`0100644`), others as their 32-bit
/// little-endian words in decimal joined by `:` (uid:gid).
fn le(name: &str, b: &[u8]) -> String {
    if let (true, Ok(word)) = (name == "size", <[u8; 8]>::try_from(b)) {
        return u64::from_le_bytes(word).to_string();
    }
    if name == "mode" {
        let mode = b.iter().rev().fold(0u32, |v, &x| (v << 8) | u32::from(x));
        return format!("0{mode:o}");
    }
    let words: Vec<String> = b
        .chunks(4)
        .map(|c| {
            let mut v = 0u32;
            for (i, &x) in c.iter().enumerate() {
                v |= u32::from(x) << (8 * i);
            }
            v.to_string()
        })
        .collect();
    words.join(":")
}

/// The (name, type) pairs of a `getdents64` buffer.
pub(crate) fn dirents(buf: &[u8]) -> Vec<(Vec<u8>, u8)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 19 <= buf.len() {
        let reclen = usize::from(u16::from_le_bytes([buf[at + 16], buf[at + 17]]));
        if reclen < 19 || at + reclen > buf.len() {
            break;
        }
        let ty = buf[at + 18];
        let name = &buf[at + 19..at + reclen];
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        out.push((name.to_vec(), ty));
        at += reclen;
    }
    out
}

/// Compares two complete directory listings as sets, leaving out the
/// names whose presence is `unspecified` (made or removed while the
/// stream was read).
pub(crate) fn listing(
    mut expected: Vec<(Vec<u8>, u8)>,
    mut got: Vec<(Vec<u8>, u8)>,
    unspecified: &HashSet<Vec<u8>>,
) -> Option<Mismatch> {
    expected.retain(|(n, _)| !unspecified.contains(n));
    got.retain(|(n, _)| !unspecified.contains(n));
    expected.sort();
    got.sort();
    if expected == got {
        return None;
    }
    // As multisets: an entry listed twice (a stream resumed at the wrong
    // place) is one more than expected.
    let (mut missing, mut extra) = (Vec::new(), Vec::new());
    let (mut e, mut g) = (expected.iter().peekable(), got.iter().peekable());
    loop {
        match (e.peek(), g.peek()) {
            (Some(a), Some(b)) if a == b => {
                e.next();
                g.next();
            }
            (Some(a), Some(b)) if a < b => missing.extend(e.next()),
            (Some(_), None) => missing.extend(e.next()),
            (_, Some(_)) => extra.extend(g.next()),
            (None, None) => break,
        }
    }
    let shown = |v: &[&(Vec<u8>, u8)]| -> Vec<String> {
        v.iter()
            .take(5)
            .map(|(n, _)| String::from_utf8_lossy(n).into_owned())
            .collect()
    };
    Some(format!(
        "directory listing differs: {} entries, expected {}: missing {:?}, unexpected {:?}",
        got.len(),
        expected.len(),
        shown(&missing),
        shown(&extra)
    ))
}

/// Compares NUL-separated name lists (listxattr) as sets: file systems
/// keep attributes in different orders.
pub(crate) fn name_list(expected: &[u8], got: &[u8]) -> Option<Mismatch> {
    let split = |b: &[u8]| {
        let mut v: Vec<Vec<u8>> = b
            .split(|&c| c == 0)
            .filter(|s| !s.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
        v.sort();
        v
    };
    (split(expected) != split(got)).then(|| "attribute name list differs".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry listed twice is one too many; before, the lists came out
    /// empty ("missing [], unexpected []": a `seekdir` to a cookie of
    /// another file system resumed the stream at the wrong place).
    #[test]
    fn a_listing_compares_as_a_multiset() {
        let e = |n: &str| (n.as_bytes().to_vec(), 8u8);
        let none = HashSet::new();
        assert_eq!(
            listing(vec![e("a"), e("b")], vec![e("a"), e("b"), e("b")], &none).unwrap(),
            "directory listing differs: 3 entries, expected 2: missing [], unexpected [\"b\"]"
        );
        assert_eq!(
            listing(vec![e("a"), e("c")], vec![e("b")], &none).unwrap(),
            "directory listing differs: 1 entries, expected 2: missing [\"a\", \"c\"], unexpected [\"b\"]"
        );
        assert!(listing(vec![e("b"), e("a")], vec![e("a"), e("b")], &none).is_none());
    }

    /// Modes read as `stat` prints them; owners and sizes in decimal.
    #[test]
    fn fields_read_as_stat_prints_them() {
        assert_eq!(le("mode", &0o100644u32.to_le_bytes()), "0100644");
        assert_eq!(le("mode", &0o20640u16.to_le_bytes()), "020640");
        let mut owner = 1000u32.to_le_bytes().to_vec();
        owner.extend(100u32.to_le_bytes());
        assert_eq!(le("owner", &owner), "1000:100");
        assert_eq!(le("size", &4096u64.to_le_bytes()), "4096");
    }
}
