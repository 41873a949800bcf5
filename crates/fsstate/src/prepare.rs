//! Building a replay root from the *before* states of a trace.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

use reanimator_trace::{ContentNote, FileKind, PathState, Record};

use crate::owners::Viewer;
use crate::root::{fd_path, Root};
use crate::state::{fstat_nofollow, kind_of};

/// What preparing a root did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PrepareReport {
    /// Paths created or brought to their recorded state.
    pub paths: u64,
    /// Bytes of file contents written.
    pub bytes: u64,
    /// Device nodes not created, when not root (root makes them inert,
    /// numbered 0:0).
    pub skipped_special: u64,
    /// Paths of other users (or of groups the replayer is not in) left
    /// the replayer's, because the replayer is not root.
    pub owners_skipped: u64,
    /// Of those, paths whose owner permission bits were set to the access
    /// the recorded user had (see [`Viewer`]), for the replay only:
    /// [`restore_recorded_modes`] puts their recorded modes back.
    pub access_kept: Vec<KeptAccess>,
    /// The root directory was given search permission for every user: it
    /// stands for `/`, and a root replayer acts with traced processes'
    /// own user ids, which could not look up anything in it otherwise.
    pub root_made_searchable: bool,
    /// Directories made, mode 0755, for paths whose directory the trace
    /// holds no state of (a trace `recover` salvaged lost it).
    pub made_up_dirs: u64,
    /// Files made, mode 0644, for contents whose file's state the trace
    /// does not hold (lost the same way).
    pub made_up_files: u64,
    /// The first of [`PrepareReport::made_up_dirs`] and
    /// [`PrepareReport::made_up_files`], to name it.
    pub first_made_up: Option<Vec<u8>>,
    /// With `replace`: paths found in the way of a recorded state (of
    /// another kind, or recorded absent) and removed, directories with
    /// everything in them. Said, since they may be the user's.
    pub removed: u64,
}

/// A path whose owner bits a replayer that is not root set to the recorded
/// user's access to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptAccess {
    /// The path, as the trace names it.
    pub path: Vec<u8>,
    /// Its recorded mode.
    pub recorded: u32,
    /// The mode it was given.
    pub given: u32,
}

/// Once a replay is over, gives the paths of `kept` that still have the
/// mode preparing gave them their recorded modes back: the replay root
/// then shows the recorded modes, and its owner (the replayer) can list
/// and remove every directory in it (a directory another user let the
/// recorded user search but not list, `0711`, was prepared `0311`).
/// A path changed since is left alone.
pub fn restore_recorded_modes(root: &Root, kept: &mut [KeptAccess]) {
    // Parents first: a directory prepared without search permission
    // would hide its children.
    kept.sort_by_key(|k| k.path.len());
    for k in kept.iter() {
        // The path as a directory descriptor and a name in it (the root
        // itself as its own path from the current directory).
        let (dir, name) = if k.path == b"/" {
            (None, fd_path(root.fd()))
        } else {
            match root.parent(&k.path) {
                Ok((dir, name)) => (Some(dir), name),
                Err(_) => continue,
            }
        };
        let dfd = dir.as_ref().map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
        // SAFETY: zeroed plain data, filled by fstatat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let nofollow = libc::AT_SYMLINK_NOFOLLOW;
        // SAFETY: valid descriptor, C string and stat buffer.
        let found = unsafe { libc::fstatat(dfd, name.as_ptr(), &mut st, nofollow) } == 0;
        if found
            && st.st_mode & 0o7777 == k.given & 0o7777
            && st.st_mode & libc::S_IFMT != libc::S_IFLNK
        {
            // SAFETY: as above; not a symbolic link, so nothing is followed.
            unsafe { libc::fchmodat(dfd, name.as_ptr(), k.recorded & 0o7777, 0) };
        }
    }
}

/// Applies before-states and path data, in trace order, to a root.
pub struct Preparer<'r> {
    root: &'r Root,
    replace: bool,
    /// The replayer's effective user and group ids.
    euid: u32,
    egid: u32,
    /// Whose access a replayer that is not root keeps in the owner bits of
    /// other users' paths.
    viewer: Option<Viewer>,
    /// Regular files' modes, applied after their contents are written (a
    /// replayer that is not root cannot write a read-only file of its own).
    file_modes: HashMap<Vec<u8>, u32>,
    /// Directory modes, applied last so read-only directories do not stop
    /// their children from being created.
    dir_modes: Vec<(Vec<u8>, u32)>,
    /// The recorded mode of `/`, for the root directory, applied at the
    /// very end.
    root_mode: Option<u32>,
    /// File capabilities (`security.capability`), set last: the kernel
    /// drops them when the file is written or changes owner, which
    /// preparing does after a state is applied.
    capabilities: Vec<(Vec<u8>, Vec<u8>)>,
    /// The first name prepared of each file recorded with several names
    /// (hard links), by link number.
    links: HashMap<u64, Vec<u8>>,
    /// The recorded state of `/` was applied to the root itself.
    root_state_applied: bool,
    report: PrepareReport,
}

fn cvt(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

impl<'r> Preparer<'r> {
    /// A preparer for `root`. With `replace`, what is in the way is
    /// removed or overwritten; otherwise existing entries of the right kind
    /// are reused.
    pub fn new(root: &'r Root, replace: bool) -> Self {
        Preparer {
            root,
            replace,
            // SAFETY: geteuid cannot fail.
            euid: unsafe { libc::geteuid() },
            // SAFETY: getegid cannot fail.
            egid: unsafe { libc::getegid() },
            viewer: None,
            file_modes: HashMap::new(),
            dir_modes: Vec::new(),
            root_mode: None,
            capabilities: Vec::new(),
            links: HashMap::new(),
            root_state_applied: false,
            report: PrepareReport::default(),
        }
    }

    /// Whether the replayer may give files to any user.
    fn is_root(&self) -> bool {
        self.euid == 0
    }

    /// Keeps `viewer`'s access to other users' paths, when not root; for
    /// the states applied from now on.
    pub fn set_viewer(&mut self, viewer: Viewer) {
        self.viewer = Some(viewer);
    }

    /// The mode to give a path recorded as `s`: as recorded, except that
    /// a replayer that is not root owns other users' paths, so their owner
    /// bits become the recorded user's access.
    fn mode_for(&mut self, s: &PathState) -> u32 {
        match &self.viewer {
            Some(v) if !self.is_root() && s.uid != self.euid => {
                let mode = v.as_owner(s.mode, s.uid, s.gid, s.kind == FileKind::Directory);
                if mode != s.mode {
                    self.report.access_kept.push(KeptAccess {
                        path: s.path.clone(),
                        recorded: s.mode,
                        given: mode,
                    });
                }
                mode
            }
            _ => s.mode,
        }
    }

    /// Applies one record; other record kinds are ignored.
    pub fn apply(&mut self, rec: &Record) -> io::Result<()> {
        match rec {
            Record::PathState(s) => match self.state(s) {
                Err(e) if e.kind() == io::ErrorKind::NotFound && self.make_parents(&s.path)? => {
                    self.state(s)
                }
                r => r,
            }
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("{}: {e}", String::from_utf8_lossy(&s.path)),
                )
            }),
            Record::PathData(d) => {
                let Some(bytes) = d.data.data.as_deref() else {
                    return Ok(());
                };
                let flags = libc::O_WRONLY | libc::O_NOFOLLOW;
                let fd = match self.root.open_at(&d.path, flags, 0) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        // Its file's state was lost (a damaged trace): a
                        // file of the replayer's, mode 0644.
                        self.make_parents(&d.path)?;
                        self.report.made_up_files += 1;
                        self.report
                            .first_made_up
                            .get_or_insert_with(|| d.path.clone());
                        self.root.open_at(&d.path, flags | libc::O_CREAT, 0o644)
                    }
                    r => r,
                }
                .map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("{}: {e}", String::from_utf8_lossy(&d.path)),
                    )
                })?;
                let mut done = 0;
                while done < bytes.len() {
                    // SAFETY: a valid buffer slice.
                    let n = unsafe {
                        libc::pwrite(
                            fd.as_raw_fd(),
                            bytes[done..].as_ptr().cast(),
                            bytes.len() - done,
                            (d.offset + done as u64) as i64,
                        )
                    };
                    if n < 0 {
                        let e = io::Error::last_os_error();
                        return Err(io::Error::new(
                            e.kind(),
                            format!("{}: {e}", String::from_utf8_lossy(&d.path)),
                        ));
                    }
                    done += n as usize;
                }
                self.report.bytes += bytes.len() as u64;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Makes the missing directories above `path`, mode 0755, when the
    /// trace holds no state of them (only a damaged trace lacks one):
    /// true when it made any, so the caller tries again.
    fn make_parents(&mut self, path: &[u8]) -> io::Result<bool> {
        let mut made = false;
        let ends = path
            .iter()
            .enumerate()
            .skip(1)
            .filter(|&(_, &b)| b == b'/')
            .map(|(i, _)| i);
        for end in ends {
            let dir = &path[..end];
            if self.existing(dir).is_some() {
                continue;
            }
            let (parent, name) = self.root.parent(dir)?;
            // SAFETY: valid descriptor and C string.
            cvt(unsafe { libc::mkdirat(parent.as_raw_fd(), name.as_ptr(), 0o755) })?;
            self.report.made_up_dirs += 1;
            self.report
                .first_made_up
                .get_or_insert_with(|| dir.to_vec());
            made = true;
        }
        Ok(made)
    }

    /// The kind of what is at `path` now, without following it.
    fn existing(&self, path: &[u8]) -> Option<FileKind> {
        let fd = self.root.locate(path, false).ok()?;
        fstat_nofollow(&fd).ok().map(|st| kind_of(st.st_mode))
    }

    fn state(&mut self, s: &PathState) -> io::Result<()> {
        if s.path == b"/" || s.path.is_empty() {
            if s.path == b"/" && s.kind == FileKind::Directory && !self.root_state_applied {
                // The root stands for `/`: it gets `/`'s mode and owner.
                let p = fd_path(self.root.fd());
                self.root_mode = Some(self.mode_for(s) & 0o7777);
                if self.is_root() {
                    // SAFETY: as above.
                    cvt(unsafe { libc::chown(p.as_ptr(), s.uid, s.gid) })?;
                }
                self.root_state_applied = true;
            }
            return Ok(());
        }
        self.file_modes.remove(&s.path);
        let now = self.existing(&s.path);
        if now.is_some() && now != Some(s.kind) {
            // Something recorded absent but already here (not a directory)
            // was put there by an earlier record: keep it unless told to
            // replace.
            if s.kind == FileKind::Absent && !self.replace && now != Some(FileKind::Directory) {
                return Ok(());
            }
            self.remove(&s.path)?;
            self.report.removed += u64::from(self.replace);
        } else if now.is_some() && s.kind == FileKind::Absent && self.replace {
            self.remove(&s.path)?;
            self.report.removed += 1;
        }
        let (dir, name) = match self.root.parent(&s.path) {
            Ok(x) => x,
            // "." or ".." components name directories recorded elsewhere.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return Ok(()),
            // Absent below something that is no directory (`stat f/x`
            // with `f` a file or a link to one, as pytest looks for
            // `pyvenv.cfg` under every entry): absent already.
            Err(e)
                if s.kind == FileKind::Absent
                    && matches!(
                        e.raw_os_error(),
                        Some(libc::ENOTDIR | libc::ENOENT | libc::ELOOP)
                    ) =>
            {
                return Ok(())
            }
            Err(e) => return Err(e),
        };
        let dfd = dir.as_raw_fd();
        if s.kind == FileKind::Regular && s.link != 0 {
            match self.links.get(&s.link) {
                Some(first) if *first != s.path => {
                    if self.link_to(first, &s.path)? {
                        self.report.paths += 1;
                        return Ok(());
                    }
                }
                // A later state of the first name with no contents: the
                // file, which another name may have filled since (`stat x
                // y; cat y x`: y's contents), stays as it is. Before
                // 2026-11-28 it was made anew, empty, under every name.
                Some(_)
                    if s.content != ContentNote::Complete
                        && self.existing(&s.path) == Some(FileKind::Regular) =>
                {
                    let mode = self.mode_for(s);
                    self.file_modes.insert(s.path.clone(), mode);
                    return Ok(());
                }
                Some(_) => {}
                None => {
                    self.links.insert(s.link, s.path.clone());
                }
            }
        }
        let exists = self.existing(&s.path).is_some();
        match s.kind {
            FileKind::Absent => return Ok(()),
            FileKind::Directory => {
                if !exists {
                    // SAFETY: valid descriptor and C string.
                    cvt(unsafe { libc::mkdirat(dfd, name.as_ptr(), 0o700) })?;
                }
                if !s.xattrs.is_empty() {
                    let fd = self.root.locate(&s.path, false)?;
                    self.set_xattrs(&fd, s);
                }
                let mode = self.mode_for(s);
                self.dir_modes.push((s.path.clone(), mode));
            }
            FileKind::Regular => {
                // SAFETY: as above; O_NOFOLLOW keeps the open on this entry.
                let fd = unsafe {
                    libc::openat(
                        dfd,
                        name.as_ptr(),
                        libc::O_WRONLY
                            | libc::O_CREAT
                            | libc::O_TRUNC
                            | libc::O_NOFOLLOW
                            | libc::O_CLOEXEC,
                        0o600,
                    )
                };
                cvt(fd)?;
                // SAFETY: a fresh descriptor we own.
                let fd = unsafe { OwnedFd::from_raw_fd(fd) };
                // SAFETY: valid descriptor.
                cvt(unsafe { libc::ftruncate(fd.as_raw_fd(), s.size as i64) })?;
                self.set_xattrs(&fd, s);
                let mode = self.mode_for(s);
                self.file_modes.insert(s.path.clone(), mode);
            }
            FileKind::Symlink => {
                if !exists {
                    let target = crate::root::cstring(&s.target)?;
                    // SAFETY: valid C strings and descriptor.
                    cvt(unsafe { libc::symlinkat(target.as_ptr(), dfd, name.as_ptr()) })?;
                }
            }
            // A socket's node needs no privilege; no one listens on it,
            // as on a socket file left by a program that is gone (replay
            // simulates connections anyway).
            FileKind::Fifo | FileKind::Socket => {
                if !exists {
                    let ty = if s.kind == FileKind::Fifo {
                        libc::S_IFIFO
                    } else {
                        libc::S_IFSOCK
                    };
                    // SAFETY: as above.
                    cvt(unsafe { libc::mknodat(dfd, name.as_ptr(), ty | 0o600, 0) })?;
                }
                let mode = self.mode_for(s);
                // SAFETY: as above.
                cvt(unsafe { libc::fchmodat(dfd, name.as_ptr(), mode, 0) })?;
            }
            FileKind::CharDevice | FileKind::BlockDevice if self.is_root() => {
                if !exists {
                    let ty = if s.kind == FileKind::CharDevice {
                        libc::S_IFCHR
                    } else {
                        libc::S_IFBLK
                    };
                    // Device number 0:0, which no driver serves: the node
                    // has the recorded type and mode but reaches no device.
                    // SAFETY: as above.
                    cvt(unsafe { libc::mknodat(dfd, name.as_ptr(), ty | 0o600, 0) })?;
                }
                // SAFETY: as above.
                cvt(unsafe { libc::fchmodat(dfd, name.as_ptr(), s.mode, 0) })?;
            }
            FileKind::CharDevice | FileKind::BlockDevice => {
                self.report.skipped_special += 1;
                return Ok(());
            }
        }
        // Regular files get their modes (set-id bits, which `chown`
        // clears, included) after this, in `finish`.
        if self.is_root() {
            // SAFETY: as above; never follows a link.
            cvt(unsafe {
                libc::fchownat(dfd, name.as_ptr(), s.uid, s.gid, libc::AT_SYMLINK_NOFOLLOW)
            })?;
        } else if s.uid != self.euid {
            self.report.owners_skipped += 1;
        } else if s.gid != self.egid {
            // A user may give their file to any group they are in.
            // SAFETY: as above; never follows a link.
            let r = unsafe {
                libc::fchownat(
                    dfd,
                    name.as_ptr(),
                    u32::MAX,
                    s.gid,
                    libc::AT_SYMLINK_NOFOLLOW,
                )
            };
            self.report.owners_skipped += u64::from(r != 0);
        }
        self.report.paths += 1;
        Ok(())
    }

    fn set_xattrs(&mut self, fd: &OwnedFd, s: &PathState) {
        for (name, value) in &s.xattrs {
            if name == CAPABILITY {
                self.capabilities.push((s.path.clone(), value.clone()));
            } else {
                set_xattr(fd, name, value);
            }
        }
    }

    /// Makes `path` another name of the file prepared at `first`, as it
    /// was when recorded: one file, so a write through one name shows
    /// through the other. False if `first` is no longer a regular file
    /// (a later state replaced it): `path` is then made on its own.
    fn link_to(&self, first: &[u8], path: &[u8]) -> io::Result<bool> {
        if self.existing(first) != Some(FileKind::Regular) {
            return Ok(false);
        }
        if self.existing(path).is_some() {
            self.remove(path)?;
        }
        let (from_dir, from) = self.root.parent(first)?;
        let (to_dir, to) = self.root.parent(path)?;
        // SAFETY: valid descriptors and C strings; flags 0 never follow a
        // symbolic link.
        cvt(unsafe {
            libc::linkat(
                from_dir.as_raw_fd(),
                from.as_ptr(),
                to_dir.as_raw_fd(),
                to.as_ptr(),
                0,
            )
        })?;
        Ok(true)
    }

    /// Removes whatever is at `path`, recursively, confined to the root.
    fn remove(&self, path: &[u8]) -> io::Result<()> {
        let (dir, name) = self.root.parent(path)?;
        remove_at(&dir, &name)
    }

    /// Gives up preparing (an error, a stop): the paths whose owner bits
    /// were set for the recorded user's access so far, for
    /// [`restore_recorded_modes`].
    pub fn abandon(self) -> Vec<KeptAccess> {
        self.report.access_kept
    }

    /// Applies the deferred directory modes.
    pub fn finish(mut self) -> io::Result<PrepareReport> {
        for (path, mode) in std::mem::take(&mut self.file_modes) {
            let (dir, name) = self.root.parent(&path)?;
            // SAFETY: valid descriptor and C string.
            match cvt(unsafe { libc::fchmodat(dir.as_raw_fd(), name.as_ptr(), mode, 0) }) {
                // A later state removed it with a directory above it.
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                r => r?,
            }
        }
        for (path, mode) in self.dir_modes.iter().rev() {
            let (dir, name) = self.root.parent(path)?;
            // SAFETY: valid descriptor and C string.
            cvt(unsafe { libc::fchmodat(dir.as_raw_fd(), name.as_ptr(), *mode, 0) })?;
        }
        self.dir_modes.clear();
        if let Some(mode) = self.root_mode {
            let p = fd_path(self.root.fd());
            // SAFETY: a NUL-terminated path to the root directory.
            cvt(unsafe { libc::chmod(p.as_ptr(), mode) })?;
        }
        for (path, value) in std::mem::take(&mut self.capabilities) {
            if let Ok(fd) = self.root.locate(&path, false) {
                set_xattr(&fd, CAPABILITY, &value);
            }
        }
        if self.is_root() && !self.root_state_applied {
            // A root made private (`mktemp -d`) would refuse every traced
            // process that replay acts as another user for.
            let p = fd_path(self.root.fd());
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: a NUL-terminated path and a stat buffer.
            cvt(unsafe { libc::stat(p.as_ptr(), &mut st) })?;
            let mode = st.st_mode & 0o7777;
            if mode & 0o011 != 0o011 {
                // SAFETY: as above.
                cvt(unsafe { libc::chmod(p.as_ptr(), mode | 0o011) })?;
                self.report.root_made_searchable = true;
            }
        }
        Ok(std::mem::take(&mut self.report))
    }
}

/// The extended attribute holding a file's capabilities.
const CAPABILITY: &[u8] = b"security.capability";

/// Sets one extended attribute on what `fd` holds. Failures (unsupported
/// namespaces) show up in the final-state check.
fn set_xattr(fd: &OwnedFd, name: &[u8], value: &[u8]) {
    let Ok(n) = std::ffi::CString::new(name) else {
        return;
    };
    let p = fd_path(fd.as_fd());
    // SAFETY: valid C strings and buffer.
    unsafe {
        libc::setxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
}

/// Removes `name` in `dir` (recursively for directories), never following
/// a symbolic link.
fn remove_at(dir: &OwnedFd, name: &std::ffi::CStr) -> io::Result<()> {
    let d = dir.as_raw_fd();
    // SAFETY: valid descriptor and C string.
    if unsafe { libc::unlinkat(d, name.as_ptr(), 0) } == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if !matches!(e.raw_os_error(), Some(libc::EISDIR | libc::EPERM)) {
        return if e.raw_os_error() == Some(libc::ENOENT) {
            Ok(())
        } else {
            Err(e)
        };
    }
    // SAFETY: as above.
    let sub = unsafe {
        libc::openat(
            d,
            name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    cvt(sub)?;
    // SAFETY: a fresh descriptor we own.
    let sub = unsafe { OwnedFd::from_raw_fd(sub) };
    let names: Vec<std::ffi::CString> =
        std::fs::read_dir(fd_path(sub.as_fd()).to_str().expect("ascii"))?
            .filter_map(Result::ok)
            .filter_map(|e| std::ffi::CString::new(e.file_name().into_encoded_bytes()).ok())
            .collect();
    for n in names {
        remove_at(&sub, &n)?;
    }
    // SAFETY: as above.
    cvt(unsafe { libc::unlinkat(d, name.as_ptr(), libc::AT_REMOVEDIR) })
}
