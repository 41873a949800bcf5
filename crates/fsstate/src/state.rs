//! The state of one path (what `lstat` and friends say), and comparing
//! two of them.

use std::ffi::CStr;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;

use reanimator_trace::{ContentHash, ContentNote, FileKind, PathPhase, PathState, HASH_PIECE};

use crate::owners::Owners;
use crate::root::{fd_path, Root};

/// `fstatat(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)`.
pub(crate) fn fstat_nofollow(fd: &OwnedFd) -> io::Result<libc::stat> {
    lstat_at(fd, c"", libc::AT_EMPTY_PATH)
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW | flags)`.
pub(crate) fn lstat_at(dir: &OwnedFd, name: &CStr, flags: i32) -> io::Result<libc::stat> {
    // SAFETY: a zeroed stat is plain data the kernel overwrites.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor, C string and buffer.
    let r = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW | flags,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// The kind of object a `st_mode` describes.
pub(crate) fn kind_of(mode: u32) -> FileKind {
    match mode & libc::S_IFMT {
        libc::S_IFREG => FileKind::Regular,
        libc::S_IFDIR => FileKind::Directory,
        libc::S_IFLNK => FileKind::Symlink,
        libc::S_IFIFO => FileKind::Fifo,
        libc::S_IFSOCK => FileKind::Socket,
        libc::S_IFCHR => FileKind::CharDevice,
        _ => FileKind::BlockDevice,
    }
}

/// The state of `path` resolved inside `root` without following a final
/// symbolic link. A missing path is `Absent`, not an error. `After` states
/// of regular files carry the piece sum of their contents. `seq` and
/// `time_ns` are left 0 for the caller.
pub fn path_state(root: &Root, path: &[u8], phase: PathPhase) -> io::Result<PathState> {
    let sum = (phase == PathPhase::After).then_some(Sum::Pieces);
    state(root, path, phase, sum)
}

/// The after-state of `path` without a sum of its contents: for a file
/// whose contents the trace never needed, which replay recreates
/// zero-filled and so cannot compare.
pub fn unsummed_after_state(root: &Root, path: &[u8]) -> io::Result<PathState> {
    let mut s = state(root, path, PathPhase::After, None)?;
    if s.kind == FileKind::Regular {
        s.content = ContentNote::Skipped;
    }
    Ok(s)
}

/// The after-state of `path` with its contents summed the way `like` is (a
/// manifest written in format 1.1 sums whole contents), so the two compare;
/// not summed at all if `like` is no sum (nothing to compare it with).
pub fn after_state_like(
    root: &Root,
    path: &[u8],
    like: Option<ContentHash>,
) -> io::Result<PathState> {
    let sum = match like {
        Some(ContentHash::Whole(_)) => Some(Sum::Whole),
        Some(ContentHash::Pieces(_)) => Some(Sum::Pieces),
        None => None,
    };
    state(root, path, PathPhase::After, sum)
}

/// How a regular file's contents are summed.
#[derive(Clone, Copy)]
enum Sum {
    /// Whole (format 1.1).
    Whole,
    /// Piece by piece (format 1.2 on).
    Pieces,
}

/// A regular file with more than one name: which file it is, for finding
/// its other names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Inode {
    dev: u64,
    ino: u64,
}

/// The before-state of `path` as [`path_state`] takes it, and which file
/// it is if it has other names (hard links).
pub(crate) fn before_state(root: &Root, path: &[u8]) -> io::Result<(PathState, Option<Inode>)> {
    state_of(root, path, PathPhase::Before, None)
}

/// [`path_state`], summing a regular file's contents as `sum` says.
fn state(root: &Root, path: &[u8], phase: PathPhase, sum: Option<Sum>) -> io::Result<PathState> {
    state_of(root, path, phase, sum).map(|(s, _)| s)
}

/// [`state`], and the file's [`Inode`] if it has other names.
fn state_of(
    root: &Root,
    path: &[u8],
    phase: PathPhase,
    sum: Option<Sum>,
) -> io::Result<(PathState, Option<Inode>)> {
    let mut s = PathState {
        seq: 0,
        time_ns: 0,
        phase,
        path: path.to_vec(),
        kind: FileKind::Absent,
        mode: 0,
        uid: 0,
        gid: 0,
        size: 0,
        target: Vec::new(),
        xattrs: Vec::new(),
        hash: None,
        content: ContentNote::None,
        link: 0,
    };
    let fd = match root.locate(path, false) {
        Ok(fd) => fd,
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
            return Ok((s, None))
        }
        Err(e) => return Err(e),
    };
    let st = fstat_nofollow(&fd)?;
    let mut inode = None;
    s.kind = kind_of(st.st_mode);
    s.mode = st.st_mode & 0o7777;
    s.uid = st.st_uid;
    s.gid = st.st_gid;
    s.size = st.st_size as u64;
    match s.kind {
        FileKind::Symlink => s.target = readlink_fd(&fd)?,
        FileKind::Regular | FileKind::Directory => {
            s.xattrs = xattrs(&fd);
            if s.kind == FileKind::Regular && st.st_nlink > 1 {
                inode = Some(Inode {
                    dev: st.st_dev,
                    ino: st.st_ino,
                });
            }
            if let (FileKind::Regular, Some(sum)) = (s.kind, sum) {
                let f = reopen(&fd)?;
                s.hash = Some(match sum {
                    Sum::Whole => ContentHash::Whole(hash_whole(&f)?),
                    Sum::Pieces => ContentHash::Pieces(hash_pieces(&f)?),
                });
            }
        }
        _ => {}
    }
    Ok((s, inode))
}

/// The target of the symbolic link an `O_PATH | O_NOFOLLOW` descriptor
/// holds.
pub(crate) fn readlink_fd(fd: &OwnedFd) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: buf is writable for its length.
    let n = unsafe {
        libc::readlinkat(
            fd.as_raw_fd(),
            c"".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(buf)
}

/// Opens the object an `O_PATH` descriptor holds for reading.
pub(crate) fn reopen(fd: &OwnedFd) -> io::Result<std::fs::File> {
    let p = fd_path(fd.as_fd());
    // SAFETY: a valid C string; the result is checked.
    let r = unsafe {
        libc::open(
            p.as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOCTTY,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { std::fs::File::from_raw_fd(r) })
}

/// Where data starts at or after `at`; `None` when only a hole or the end
/// of the file follows. Holes of a sparse file are neither read nor
/// recorded. A file system that cannot tell has data throughout.
pub(crate) fn next_data(f: &std::fs::File, at: u64) -> io::Result<Option<u64>> {
    match seek(f, at, libc::SEEK_DATA) {
        Ok(p) => Ok(Some(p)),
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => Ok(None),
        Err(e) if cannot_tell(&e) => Ok(Some(at)),
        Err(e) => Err(e),
    }
}

/// Where the hole after data at `at` starts (every file ends in one);
/// `u64::MAX` if the file system cannot tell.
pub(crate) fn next_hole(f: &std::fs::File, at: u64) -> io::Result<u64> {
    match seek(f, at, libc::SEEK_HOLE) {
        Ok(p) => Ok(p),
        // Truncated meanwhile: nothing left at `at`.
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => Ok(at),
        Err(e) if cannot_tell(&e) => Ok(u64::MAX),
        Err(e) => Err(e),
    }
}

fn cannot_tell(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EINVAL | libc::EOPNOTSUPP))
}

fn seek(f: &std::fs::File, at: u64, whence: libc::c_int) -> io::Result<u64> {
    // SAFETY: lseek on a descriptor we hold; the result is checked.
    let r = unsafe { libc::lseek(f.as_raw_fd(), at as libc::off_t, whence) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as u64)
    }
}

/// Bytes read at a time while summing: small enough that the buffer stays
/// in the core's L2 cache between the copy and the hash (a 400 MB file on
/// two CPUs: 26-31 ms with 128 KiB, 32-35 ms with 1 MiB).
const SUM_BUF: usize = 128 << 10;

/// [`ContentHash::Whole`] of a file.
fn hash_whole(mut f: &std::fs::File) -> io::Result<u128> {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; SUM_BUF];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok(h.digest128());
        }
        h.update(&buf[..n]);
    }
}

/// [`ContentHash::Pieces`] of a file: its pieces are summed by one thread
/// per CPU, each over a run of consecutive pieces; a file that ends early
/// (truncated meanwhile) is summed up to its end.
fn hash_pieces(f: &std::fs::File) -> io::Result<u128> {
    let len = f.metadata()?.len();
    let pieces = len.div_ceil(HASH_PIECE).max(1);
    // Asked once: the standard library reads cgroup files every time.
    static CPUS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let cpus =
        *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u64));
    let threads = cpus.clamp(1, 8).min(pieces);
    let per = pieces.div_ceil(threads);
    let runs: Vec<io::Result<Vec<u128>>> = if threads == 1 {
        // Most files are one piece: no thread to start.
        vec![sum_pieces(f, len, 0..pieces)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    scope.spawn(move || sum_pieces(f, len, t * per..((t + 1) * per).min(pieces)))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(io::Error::other("hashing thread panicked")))
                })
                .collect()
        })
    };
    let mut sums = Vec::with_capacity(pieces as usize * 16);
    for run in runs {
        for h in run? {
            sums.extend_from_slice(&h.to_le_bytes());
        }
    }
    Ok(xxhash_rust::xxh3::xxh3_128(&sums))
}

/// The xxh3-128 of each piece in `range` of a file `len` bytes long. A
/// piece that lies in a hole is summed without reading it.
fn sum_pieces(f: &std::fs::File, len: u64, range: std::ops::Range<u64>) -> io::Result<Vec<u128>> {
    let mut buf = vec![0u8; SUM_BUF];
    let mut out = Vec::with_capacity(range.clone().count());
    for piece in range {
        let (mut at, end) = (piece * HASH_PIECE, (piece + 1) * HASH_PIECE);
        if end <= len && next_data(f, at)?.is_none_or(|d| d >= end) {
            out.push(zero_piece_sum());
            continue;
        }
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        while at < end {
            let want = ((end - at) as usize).min(buf.len());
            let n = f.read_at(&mut buf[..want], at)?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
            at += n as u64;
        }
        out.push(h.digest128());
    }
    Ok(out)
}

/// The xxh3-128 of a whole piece of zeros, computed once.
fn zero_piece_sum() -> u128 {
    static SUM: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
    *SUM.get_or_init(|| xxhash_rust::xxh3::xxh3_128(&vec![0u8; HASH_PIECE as usize]))
}

/// XFS's own names for a POSIX ACL, which it lists to root beside
/// `system.posix_acl_access` and `system.posix_acl_default` (the same
/// ACL): not attributes of the file's, and no other file system has them.
const XFS_ACL_NAMES: [&[u8]; 2] = [b"trusted.SGI_ACL_FILE", b"trusted.SGI_ACL_DEFAULT"];

/// Extended attributes, sorted by name (empty where unsupported).
fn xattrs(fd: &OwnedFd) -> Vec<(Vec<u8>, Vec<u8>)> {
    let p = fd_path(fd.as_fd());
    let mut names = vec![0u8; 64 * 1024];
    // SAFETY: buffers are writable for their lengths.
    let n = unsafe { libc::listxattr(p.as_ptr(), names.as_mut_ptr().cast(), names.len()) };
    if n <= 0 {
        return Vec::new();
    }
    names.truncate(n as usize);
    let mut out = Vec::new();
    for name in names
        .split(|&b| b == 0)
        .filter(|n| !n.is_empty() && !XFS_ACL_NAMES.contains(n))
    {
        let Ok(cname) = std::ffi::CString::new(name) else {
            continue;
        };
        let mut val = vec![0u8; 64 * 1024];
        // SAFETY: as above.
        let m = unsafe {
            libc::getxattr(
                p.as_ptr(),
                cname.as_ptr(),
                val.as_mut_ptr().cast(),
                val.len(),
            )
        };
        if m >= 0 {
            val.truncate(m as usize);
            out.push((name.to_vec(), val));
        }
    }
    out.sort();
    out
}

/// Which attributes differ: missing, extra, or with another value.
fn xattr_differences<'a>(
    expected: &'a [(Vec<u8>, Vec<u8>)],
    got: &'a [(Vec<u8>, Vec<u8>)],
) -> String {
    let value = |list: &'a [(Vec<u8>, Vec<u8>)], name: &[u8]| {
        list.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    };
    let mut words = Vec::new();
    for (name, v) in expected {
        let shown = String::from_utf8_lossy(name);
        match value(got, name) {
            None => words.push(format!("missing {shown}")),
            Some(g) if g != v => words.push(format!("{shown} has another value")),
            Some(_) => {}
        }
    }
    for (name, _) in got {
        if value(expected, name).is_none() {
            words.push(format!("unexpected {}", String::from_utf8_lossy(name)));
        }
    }
    words.join(", ")
}

/// The differences between a recorded state and a replayed one, in words;
/// empty when they agree. Times are never compared; owners, and owner
/// permission bits, only where `owners` keeps them.
pub fn compare(expected: &PathState, got: &PathState, owners: &Owners) -> Vec<String> {
    let mut d = Vec::new();
    if expected.kind != got.kind {
        d.push(format!(
            "is {}, expected {}",
            got.kind.name(),
            expected.kind.name()
        ));
        return d;
    }
    if expected.kind == FileKind::Absent {
        return d;
    }
    let mask = owners.mode_mask(expected.uid);
    if expected.mode & mask != got.mode & mask {
        d.push(format!(
            "mode {:04o}, expected {:04o}",
            got.mode, expected.mode
        ));
    }
    if owners.kept(expected.uid, expected.gid) && (expected.uid, expected.gid) != (got.uid, got.gid)
    {
        d.push(format!(
            "owner {}:{}, expected {}:{}",
            got.uid, got.gid, expected.uid, expected.gid
        ));
    }
    if expected.kind != FileKind::Directory && expected.size != got.size {
        d.push(format!("size {}, expected {}", got.size, expected.size));
    }
    if expected.target != got.target {
        d.push(format!(
            "links to {}, expected {}",
            String::from_utf8_lossy(&got.target),
            String::from_utf8_lossy(&expected.target)
        ));
    }
    if expected.xattrs != got.xattrs {
        d.push(format!(
            "extended attributes differ ({})",
            xattr_differences(&expected.xattrs, &got.xattrs)
        ));
    }
    if expected.hash.is_some()
        && got.hash.is_some()
        && expected.hash != got.hash
        && expected.size == got.size
    {
        d.push("contents differ".into());
    }
    d
}

#[cfg(test)]
mod tests {
    /// A final-state line names the attributes that differ; before, it
    /// said only "extended attributes differ".
    #[test]
    fn attribute_differences_are_named() {
        let attr = |n: &str, v: &str| (n.as_bytes().to_vec(), v.as_bytes().to_vec());
        let expected = [attr("user.a", "1"), attr("user.b", "2")];
        let got = [attr("user.b", "3"), attr("user.c", "4")];
        assert_eq!(
            super::xattr_differences(&expected, &got),
            "missing user.a, user.b has another value, unexpected user.c"
        );
    }
}
