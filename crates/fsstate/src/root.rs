//! A directory that every path resolves inside: the replay root.
//!
//! All resolution goes through `openat2(2)` with `RESOLVE_IN_ROOT`, so
//! absolute paths, `..` and symbolic links (absolute or relative, created
//! by the trace or raced in between two calls) are clamped to the root by
//! the kernel itself. Operations that must not follow the final component
//! (unlink, mkdir, rename, lstat) work on the confined parent directory and
//! a single name that is never `.` or `..`.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::paths::final_component;
use crate::state::lstat_at;

/// An open directory that confines every path resolved through it.
#[derive(Debug)]
pub struct Root {
    dir: OwnedFd,
    path: PathBuf,
}

/// Turns `bytes` into a C string, refusing interior NULs.
pub fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

impl Root {
    /// Opens `dir` (which must exist and be a directory) as a root.
    pub fn open(dir: &Path) -> io::Result<Root> {
        let c = cstring(dir.as_os_str().as_encoded_bytes())?;
        // SAFETY: a valid C string; the result is checked.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Root {
            // SAFETY: a fresh descriptor we own.
            dir: unsafe { OwnedFd::from_raw_fd(fd) },
            path: dir.to_path_buf(),
        })
    }

    /// The host's `/`: recorders and `--in-place` replay use the same code
    /// on the real file system.
    pub fn host() -> io::Result<Root> {
        Root::open(Path::new("/"))
    }

    /// Where the root is on the host.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The root directory itself.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }

    /// The absolute path, as a trace names paths, of what `fd` (opened
    /// through this root) is now: no `..`, no symbolic links. `None` if
    /// the kernel cannot say (it was removed) or it is not in the root.
    pub fn name_of(&self, fd: BorrowedFd<'_>) -> Option<Vec<u8>> {
        let at = host_name(fd).ok()?;
        let root = host_name(self.dir.as_fd()).ok()?;
        let rest = Path::new(OsStr::from_bytes(&at))
            .strip_prefix(OsStr::from_bytes(&root))
            .ok()?;
        Some(crate::join(b"/", rest.as_os_str().as_encoded_bytes()))
    }

    /// `openat2(root, path, flags, mode)` confined to the root. `path` is
    /// absolute (as traces name paths) or relative to the root.
    /// `O_CLOEXEC` is always added.
    ///
    /// A path longer than the kernel takes whole (`PATH_MAX`; a program
    /// deep in a tree names its files relative to a working directory
    /// whose absolute name is longer) is resolved a piece at a time: the
    /// first piece inside the root, each later one beneath the directory
    /// the one before reached (`RESOLVE_BENEATH`). A later piece that
    /// would climb above that directory, or meets an absolute symbolic
    /// link, is refused with `ENAMETOOLONG`, what the kernel says for the
    /// whole path: confinement never depends on the length.
    pub fn open_at(&self, path: &[u8], flags: i32, mode: u32) -> io::Result<OwnedFd> {
        let path = if path.is_empty() { &b"."[..] } else { path };
        let in_root = libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_MAGICLINKS;
        if path.len() < PATH_MAX {
            return openat2(self.dir.as_fd(), path, flags, mode, in_root);
        }
        let (first, mut rest) = split_long(path)?;
        let dir_flags = libc::O_PATH | libc::O_DIRECTORY;
        let mut dir = openat2(self.dir.as_fd(), first, dir_flags, 0, in_root)?;
        let beneath = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
        let beneath = |dir: &OwnedFd, piece: &[u8], flags: i32, mode: u32| {
            openat2(dir.as_fd(), piece, flags, mode, beneath).map_err(|e| {
                if e.raw_os_error() == Some(libc::EXDEV) {
                    io::Error::from_raw_os_error(libc::ENAMETOOLONG)
                } else {
                    e
                }
            })
        };
        while rest.len() >= PATH_MAX {
            let (piece, after) = split_long(rest)?;
            dir = beneath(&dir, piece, dir_flags, 0)?;
            rest = after;
        }
        beneath(&dir, if rest.is_empty() { b"." } else { rest }, flags, mode)
    }

    /// Opens `path` as a traced program's `openat2` with resolve flags
    /// `resolve` names it from the directory `base` (traced, absolute: its
    /// descriptor's or working directory's path). `RESOLVE_BENEATH` and
    /// `RESOLVE_IN_ROOT` are relative to `base`, which lies inside this
    /// root, so the kernel confines the call to it as it did when
    /// recorded; the other flags (no symbolic links, no magic links, no
    /// mount crossings) apply to the whole path, `joined` (`base` and
    /// `path` as [`Root::open_at`] takes them), inside this root.
    pub fn open_resolving(
        &self,
        base: &[u8],
        path: &[u8],
        joined: &[u8],
        flags: i32,
        mode: u32,
        resolve: u64,
    ) -> io::Result<OwnedFd> {
        let relative = libc::RESOLVE_BENEATH | libc::RESOLVE_IN_ROOT;
        if resolve & relative == 0 {
            let extra = resolve
                & (libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS | libc::RESOLVE_NO_XDEV);
            let in_root = libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_MAGICLINKS | extra;
            return openat2(self.dir.as_fd(), joined, flags, mode, in_root);
        }
        let dir = self.open_at(base, libc::O_PATH | libc::O_DIRECTORY, 0)?;
        openat2(
            dir.as_fd(),
            path,
            flags,
            mode,
            resolve | libc::RESOLVE_NO_MAGICLINKS,
        )
    }

    /// An `O_PATH` descriptor for `path` itself (a final symbolic link is
    /// not followed), resolved without following any symbolic link on the
    /// way: `ELOOP` if it meets one. `PATH_MAX` bounds it.
    pub fn open_no_symlinks(&self, path: &[u8]) -> io::Result<OwnedFd> {
        let resolve = libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_SYMLINKS;
        openat2(
            self.dir.as_fd(),
            path,
            libc::O_PATH | libc::O_NOFOLLOW,
            0,
            resolve,
        )
    }

    /// An `O_PATH` descriptor for `path` itself; `follow` says whether a
    /// final symbolic link is followed.
    pub fn locate(&self, path: &[u8], follow: bool) -> io::Result<OwnedFd> {
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        self.open_at(path, libc::O_PATH | nofollow, 0)
    }

    /// Whether `path`'s final component is, in the root, a symbolic link
    /// whose target lies on a pseudo file system (`/etc/mtab` is
    /// `../proc/self/mounts`). Such a link cannot be followed inside the
    /// root, so replay simulates the calls that follow it.
    pub fn links_into_pseudo(&self, path: &[u8]) -> bool {
        let Some(target) = self.link_target(path) else {
            return false;
        };
        let base = &path[..path.iter().rposition(|&b| b == b'/').unwrap_or(0)];
        crate::paths::is_pseudo(&crate::paths::lexical(&crate::paths::join(base, &target)))
    }

    /// The target of `path`'s final component if it is, in the root, a
    /// symbolic link.
    pub fn link_target(&self, path: &[u8]) -> Option<Vec<u8>> {
        let (dir, name) = self.parent(path).ok()?;
        let mut buf = [0u8; 4096];
        // SAFETY: dir and name are valid; buf is ours and its length given.
        let n = unsafe {
            libc::readlinkat(
                dir.as_raw_fd(),
                name.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        (n > 0).then(|| buf[..n as usize].to_vec())
    }

    /// The directory holding `path`'s final component (an `O_PATH`
    /// descriptor) and that component: a single name, never empty, `.` or
    /// `..`, so `*at(dir, name)` cannot leave the root. Trailing slashes
    /// are dropped. A path ending in `.` or `..` is `EINVAL`, as `rmdir`
    /// and `rename` report for it; `/` itself is `EBUSY`.
    pub fn parent(&self, path: &[u8]) -> io::Result<(OwnedFd, CString)> {
        let mut end = path.len();
        while end > 1 && path[end - 1] == b'/' {
            end -= 1;
        }
        let path = &path[..end];
        let (dir, name) = match path.iter().rposition(|&b| b == b'/') {
            Some(0) => (&b"/"[..], &path[1..]),
            Some(i) => (&path[..i], &path[i + 1..]),
            None => (&b"."[..], path),
        };
        if name.is_empty() {
            return Err(io::Error::from_raw_os_error(libc::EBUSY));
        }
        if name == b"." || name == b".." {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let dirfd = self.open_at(dir, libc::O_PATH | libc::O_DIRECTORY, 0)?;
        Ok((dirfd, cstring(name)?))
    }

    /// A path by which a call reaches `path`'s final entry itself (a final
    /// symbolic link is not followed: lstat, lgetxattr, unlink, mkdir),
    /// confined to the root, and the descriptor that must stay open while
    /// the call runs: `/proc/self/fd/D/name`, where `D` is the directory
    /// holding the entry, with `path`'s trailing slash if it has one.
    ///
    /// A path ending in `.` or `..`, `/` itself, and a symbolic link with a
    /// trailing slash (which the kernel follows) name a directory, not an
    /// entry: the path is resolved in the root as a whole and reached as
    /// `/proc/self/fd/D/.`, so a lookup (lstat `d/..`) sees that directory
    /// and a call that would change an entry still sees a final dot and
    /// refuses it (mkdir `EEXIST`, unlink `EISDIR`, rename `EBUSY`).
    pub fn entry(&self, path: &[u8]) -> io::Result<(OwnedFd, CString)> {
        let (last, slash) = final_component(path);
        let reached = |dir: OwnedFd, name: &[u8]| {
            let mut s = fd_path(dir.as_fd()).into_bytes();
            s.push(b'/');
            s.extend_from_slice(name);
            Ok((dir, CString::new(s).expect("no NUL")))
        };
        if last.is_empty() || last == b"." || last == b".." {
            return reached(self.locate(path, true)?, b".");
        }
        let (dir, name) = self.parent(path)?;
        if !slash {
            return reached(dir, name.as_bytes());
        }
        if lstat_at(&dir, &name, 0).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK) {
            return reached(self.locate(path, true)?, b".");
        }
        let mut name = name.into_bytes();
        name.push(b'/');
        reached(dir, &name)
    }
}

/// The longest path the kernel takes whole (`PATH_MAX` counts the NUL).
const PATH_MAX: usize = libc::PATH_MAX as usize;

/// Splits a path too long for the kernel at its last `/` that leaves a
/// first piece it takes: the piece and the rest, without the slashes in
/// between. `ENAMETOOLONG` if no such slash (a name longer than
/// `NAME_MAX`).
fn split_long(path: &[u8]) -> io::Result<(&[u8], &[u8])> {
    let too_long = || io::Error::from_raw_os_error(libc::ENAMETOOLONG);
    let cut = path[..PATH_MAX - 1]
        .iter()
        .rposition(|&b| b == b'/')
        .ok_or_else(too_long)?;
    let rest = &path[cut..];
    let rest = &rest[rest.iter().take_while(|&&b| b == b'/').count()..];
    let first = if cut == 0 { &b"/"[..] } else { &path[..cut] };
    Ok((first, rest))
}

/// `openat2(dir, path)` with `flags | O_CLOEXEC`, `mode` when it creates,
/// and `resolve`; retried while a concurrent rename makes the kernel ask.
fn openat2(
    dir: BorrowedFd<'_>,
    path: &[u8],
    flags: i32,
    mode: u32,
    resolve: u64,
) -> io::Result<OwnedFd> {
    let c = cstring(path)?;
    // SAFETY: open_how is plain integers; all-zero is valid.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    if flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE {
        how.mode = u64::from(mode & 0o7777);
    }
    how.resolve = resolve;
    loop {
        // SAFETY: valid pointers for the duration of the call.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir.as_raw_fd(),
                c.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if fd >= 0 {
            // SAFETY: a fresh descriptor we own.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) });
        }
        let e = io::Error::last_os_error();
        // EAGAIN: a concurrent rename raced the resolution; the kernel
        // asks for a retry rather than risk an escape.
        if e.raw_os_error() != Some(libc::EAGAIN) {
            return Err(e);
        }
    }
}

/// The host's absolute name of what `fd` is now, however long. The
/// kernel's `/proc/self/fd` link says `ENAMETOOLONG` past `PATH_MAX`;
/// past it, a directory is named by climbing `..` and finding each
/// directory in its parent by device and inode, as `getcwd(3)` once did,
/// until the kernel can name the rest. Other files past it are not named.
pub fn host_name(fd: BorrowedFd<'_>) -> io::Result<Vec<u8>> {
    let link = |fd: BorrowedFd<'_>| {
        std::fs::read_link(fd_path(fd).to_str().expect("ascii"))
            .map(|p| p.into_os_string().into_encoded_bytes())
    };
    let too_long = |e: &io::Error| e.raw_os_error() == Some(libc::ENAMETOOLONG);
    let mut here = match link(fd) {
        Err(e) if too_long(&e) => reopen_dir(fd, c".")?,
        done => return done,
    };
    // Names from the innermost directory out.
    let mut names: Vec<Vec<u8>> = Vec::new();
    loop {
        let st = crate::state::fstat_nofollow(&here)?;
        let parent = reopen_dir(here.as_fd(), c"..")?;
        let name = std::fs::read_dir(fd_path(parent.as_fd()).to_str().expect("ascii"))?
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().into_encoded_bytes())
            .find(|name| {
                cstring(name)
                    .and_then(|c| lstat_at(&parent, &c, 0))
                    .is_ok_and(|e| e.st_dev == st.st_dev && e.st_ino == st.st_ino)
            })
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOENT))?;
        names.push(name);
        match link(parent.as_fd()) {
            Err(e) if too_long(&e) => here = parent,
            Err(e) => return Err(e),
            Ok(mut out) => {
                for name in names.iter().rev() {
                    if out.last() != Some(&b'/') {
                        out.push(b'/');
                    }
                    out.extend_from_slice(name);
                }
                return Ok(out);
            }
        }
    }
}

/// An `O_PATH` descriptor for the directory `name` in `dir`.
fn reopen_dir(dir: BorrowedFd<'_>, name: &std::ffi::CStr) -> io::Result<OwnedFd> {
    open_in(dir, name, libc::O_PATH | libc::O_DIRECTORY)
}

/// Whether directory `dir` was removed: no name links to it any more,
/// though a process may still be in it or hold it open.
pub fn is_removed(dir: BorrowedFd<'_>) -> bool {
    // SAFETY: a valid descriptor and a stat buffer of ours.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let r = unsafe { libc::fstat(dir.as_raw_fd(), &mut st) };
    r == 0 && st.st_nlink == 0
}

/// `openat(dir, name, flags | O_CLOEXEC)`, for a single `name` (`.`,
/// `..`) in a directory already held: the way into a directory no path
/// reaches any more (removed while a process was in it).
pub fn open_in(dir: BorrowedFd<'_>, name: &std::ffi::CStr, flags: i32) -> io::Result<OwnedFd> {
    // SAFETY: a valid descriptor and C string; the result is checked.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The `/proc/self/fd/N` name of a descriptor, for the calls that have no
/// `AT_EMPTY_PATH` form (chmod, truncate, setxattr on an `O_PATH` fd). The
/// kernel follows that magic link to the very object the descriptor holds,
/// so nothing is resolved again.
pub fn fd_path(fd: BorrowedFd<'_>) -> CString {
    CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).expect("no NUL in a number")
}
