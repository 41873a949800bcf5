//! What recorders do so that a trace carries the file-system state it
//! needs: the state of each path before the trace first touched it, and a
//! manifest of every touched path at the end.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::io;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;

use reanimator_trace::{
    Capture, CaptureStatus, ContentNote, FileKind, PathData, PathPhase, PathState, Record, Role,
};

use crate::paths::{is_pseudo, join};
use crate::root::{fd_path, Root};
use crate::state::{
    before_state, next_data, next_hole, path_state, reopen, unsummed_after_state, Inode,
};

/// Bytes of file contents per path-data record.
const PIECE: usize = 1 << 20;
/// Symbolic links followed while resolving one path (the kernel's limit).
const MAX_HOPS: u32 = 40;

/// How much of the initial state a recorder stores (`record --snapshot`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotPolicy {
    /// Metadata and full contents of every pre-existing file touched.
    Contents,
    /// Metadata only: replay recreates files at their size, zero-filled.
    Metadata,
    /// Nothing before; the final manifest is still written.
    Off,
}

/// What a call needs of the path it names, as it was before the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// What the path is, not its contents, which the call does not look
    /// at (`stat`, `access`, `readlink`): a later call that needs them
    /// records them then, and if none does, the manifest does not sum
    /// them. `du` or `find` of a tree records no file's contents.
    Query,
    /// What the path is, not its contents: the call truncates it.
    Metadata,
    /// What the path is, not its contents, and a directory's entries: the
    /// call removes it, and removing a directory fails (`ENOTEMPTY`) while
    /// it holds entries the trace may never name (`dpkg -r` of a package
    /// under `/opt` tries `rmdir("/opt")`).
    Removal,
    /// A regular file's contents too.
    Contents,
    /// The contents, or a directory's entries: the call opens the path
    /// for reading, which is how a program lists a directory.
    Entries,
    /// The contents, or a directory's whole tree: the call moves the path
    /// (rename), and later calls name what is below it by the new name,
    /// under which the recording finds nothing it has not seen.
    Tree,
}

impl Need {
    /// Whether the call may look at a regular file's contents.
    fn reads_contents(self) -> bool {
        !matches!(self, Need::Query | Need::Metadata | Need::Removal)
    }

    /// Whether the call's outcome depends on a directory's entries.
    fn lists(self) -> bool {
        matches!(self, Need::Entries | Need::Removal)
    }
}

/// Remembers which paths a recording has touched and records the state of
/// each one the first time.
pub struct Snapshotter {
    policy: SnapshotPolicy,
    host: Root,
    /// Every resolved path component seen, with its kind and link target.
    seen: HashMap<Vec<u8>, (FileKind, Vec<u8>)>,
    /// Every path the trace named, for the manifest.
    touched: BTreeSet<Vec<u8>>,
    /// Directories whose entries were recorded.
    listed: HashSet<Vec<u8>>,
    /// Regular files recorded without contents because only queries
    /// named them so far ([`Need::Query`]), by resolved path.
    unread: HashSet<Vec<u8>>,
    /// Paths the trace named with queries only, with the file each
    /// resolved to: if that file stays in `unread`, the manifest does not
    /// sum it.
    queried: HashMap<Vec<u8>, Vec<u8>>,
    /// Files with several names (hard links) recorded: their link number
    /// and whether their contents were recorded (under any name).
    inodes: HashMap<Inode, (u64, bool)>,
    /// The trace being written ([`Snapshotter::leave_out`]).
    own_output: Option<Vec<u8>>,
    /// Before-states recorded.
    pub paths: u64,
    /// Content bytes recorded.
    pub bytes: u64,
    /// Files whose contents could not be read (no permission, vanished):
    /// replay cannot recreate them, so the recorder reports the count.
    pub unreadable: u64,
    /// Paths a call named relative to a directory the recorder could not
    /// name (its process was gone): in neither the initial state nor the
    /// manifest, so the recorder reports the count.
    pub unnamed: u64,
}

impl Snapshotter {
    /// A snapshotter on the host's file system.
    pub fn new(policy: SnapshotPolicy) -> io::Result<Self> {
        Ok(Snapshotter {
            policy,
            host: Root::host()?,
            seen: HashMap::new(),
            touched: BTreeSet::new(),
            listed: HashSet::new(),
            unread: HashSet::new(),
            queried: HashMap::new(),
            inodes: HashMap::new(),
            own_output: None,
            paths: 0,
            bytes: 0,
            unreadable: 0,
            unnamed: 0,
        })
    }

    /// Called at the entry of a call naming `abs_path` (absolute, as
    /// [`join`] makes it), before the call runs. Emits, through `out`, a
    /// before-state for every component not seen before (following
    /// symbolic links, including a final one) and, for a regular file with
    /// `need` of contents, its contents. Each state takes a fresh id from
    /// `next_seq`; its contents share that id. Components below one that
    /// did not exist are never recorded: the trace made them.
    ///
    /// A directory opened for reading ([`Need::Entries`]) or removed
    /// ([`Need::Removal`]) also gets a
    /// before-state for each entry it holds that the trace has not named
    /// yet, without contents, the first time: a replay lists it with the
    /// same names and kinds. An entry the trace named and found absent is
    /// left out (the trace made it); a file's contents are recorded when a
    /// call that may look at them names it, as after a [`Need::Query`].
    pub fn touch(
        &mut self,
        abs_path: &[u8],
        need: Need,
        next_seq: &mut dyn FnMut() -> u64,
        time_ns: u64,
        out: &mut dyn FnMut(Record),
    ) {
        if is_pseudo(abs_path) {
            return;
        }
        let name = join(b"/", abs_path);
        if self.own_output.as_ref() == Some(&name) {
            return;
        }
        let first = self.touched.insert(name.clone());
        let query_only = need == Need::Query && (first || self.queried.contains_key(&name));
        if !query_only {
            self.queried.remove(&name);
        }
        if self.policy == SnapshotPolicy::Off {
            return;
        }
        if !self.seen.contains_key(&b"/"[..]) {
            // The replay root stands for `/`; it gets `/`'s mode and owner
            // (a root made with `mktemp -d` is private, and replay acting
            // as another user could not look up anything in it).
            let k = self.record(b"/", false, next_seq, time_ns, out);
            self.seen.insert(b"/".to_vec(), k);
        }
        let mut pending: VecDeque<Vec<u8>> = components(abs_path);
        // `/` itself, or a path that climbs back with a final `..`, ends
        // at a directory no step below lists: it is listed after them.
        let ends_climbing = pending.back().is_none_or(|c| c == b"..");
        let mut cur: Vec<u8> = Vec::new();
        let mut hops: u32 = 0;
        // A component the trace made, below which it made a symbolic link
        // the path goes through.
        let mut made: Option<Vec<u8>> = None;
        while let Some(c) = pending.pop_front() {
            if c == b".." {
                let cut = cur.iter().rposition(|&b| b == b'/').unwrap_or(0);
                cur.truncate(cut);
                continue;
            }
            let mut cand = cur.clone();
            cand.push(b'/');
            cand.extend_from_slice(&c);
            if is_pseudo(&cand) {
                return;
            }
            if made.as_deref().is_some_and(|m| is_within(&cand, m)) {
                // In the trace's own tree nothing is recorded; only the
                // symbolic links it made are followed.
                match self.host.link_target(&cand) {
                    Some(target) => {
                        if !follow_link(&target, &mut pending, &mut cur, &mut hops) {
                            return;
                        }
                    }
                    None => cur = cand,
                }
                continue;
            }
            let last = pending.is_empty();
            let (kind, target) = match self.seen.get(&cand) {
                Some(k) => {
                    let k = k.clone();
                    if last && need != Need::Query && self.unread.remove(&cand) {
                        self.read_late(&cand, need, next_seq, time_ns, out);
                    }
                    k
                }
                None => {
                    let contents = last && need.reads_contents();
                    let k = self.record(&cand, contents, next_seq, time_ns, out);
                    // A file only queried, or looked up as a directory
                    // (`stat f/x` fails ENOTDIR): its contents when a
                    // later call reads it.
                    if (!last || need == Need::Query) && k.0 == FileKind::Regular {
                        self.unread.insert(cand.clone());
                    }
                    self.seen.insert(cand.clone(), k.clone());
                    k
                }
            };
            if last && query_only && kind == FileKind::Regular {
                self.queried.insert(name.clone(), cand.clone());
            }
            match kind {
                FileKind::Absent => {
                    // The trace made this component (or nothing is below
                    // it): what lies under it is the trace's too, unless
                    // the rest of the path climbs back out with `..`
                    // (`cp ../f .` run in a directory the trace made), or
                    // a symbolic link the trace made leads out of it
                    // (`ln -s /etc/hostname abs; cat abs`).
                    if let Some(rest) = climb_out(&pending) {
                        pending.drain(..rest);
                    } else if self.links_in(&cand, &pending) {
                        made = Some(cand);
                        pending.push_front(c);
                    } else {
                        return;
                    }
                }
                FileKind::Symlink => {
                    if !follow_link(&target, &mut pending, &mut cur, &mut hops) {
                        return;
                    }
                }
                FileKind::Directory if pending.is_empty() && need.lists() => {
                    self.list(&cand, next_seq, time_ns, out);
                    cur = cand;
                }
                FileKind::Directory if pending.is_empty() && need == Need::Tree => {
                    self.record_tree(&cand, next_seq, time_ns, out);
                    cur = cand;
                }
                _ => cur = cand,
            }
        }
        if ends_climbing && need.lists() {
            let dir = if cur.is_empty() { b"/".to_vec() } else { cur };
            self.list(&dir, next_seq, time_ns, out);
        }
    }

    /// Whether `made` (a component the trace made) followed by `rest`
    /// goes through a symbolic link, by one lookup that refuses to follow
    /// any: calls on a tree the trace made rarely do, and then each
    /// component is looked at.
    fn links_in(&self, made: &[u8], rest: &VecDeque<Vec<u8>>) -> bool {
        let mut path = made.to_vec();
        for c in rest {
            path.push(b'/');
            path.extend_from_slice(c);
        }
        match self.host.open_no_symlinks(&path) {
            Ok(fd) => crate::state::fstat_nofollow(&fd)
                .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK),
            Err(e) => e.raw_os_error() == Some(libc::ELOOP),
        }
    }

    /// Records the contents of `file`, which only queries named before
    /// (so they are still as they were), now that a call may look at or
    /// change them: a second before-state, which replay applies over the
    /// first. A call that truncates it needs none. If the file is no
    /// longer there (the trace renamed a directory above it), what is
    /// there now is the trace's own doing and is not recorded.
    fn read_late(
        &mut self,
        file: &[u8],
        need: Need,
        next_seq: &mut dyn FnMut() -> u64,
        time_ns: u64,
        out: &mut dyn FnMut(Record),
    ) {
        if !need.reads_contents() || self.policy != SnapshotPolicy::Contents {
            return;
        }
        if let Ok((s, inode)) = before_state(&self.host, file) {
            if s.kind == FileKind::Regular {
                self.emit(s, inode, true, next_seq, time_ns, out);
            }
        }
    }

    /// Records everything below directory `dir` that the trace has not
    /// named, contents included, and the contents of files it only
    /// queried: the trace is about to move `dir`, after which it names
    /// them by a path the recording saw absent.
    fn record_tree(
        &mut self,
        dir: &[u8],
        next_seq: &mut dyn FnMut() -> u64,
        time_ns: u64,
        out: &mut dyn FnMut(Record),
    ) {
        let mut pending = vec![dir.to_vec()];
        while let Some(d) = pending.pop() {
            for path in entries(&self.host, &d) {
                let kind = match self.seen.get(&path) {
                    Some(k) => {
                        let kind = k.0;
                        if self.unread.remove(&path) {
                            self.read_late(&path, Need::Contents, next_seq, time_ns, out);
                        }
                        kind
                    }
                    None => {
                        let k = self.record(&path, true, next_seq, time_ns, out);
                        let kind = k.0;
                        self.seen.insert(path.clone(), k);
                        kind
                    }
                };
                if kind == FileKind::Directory {
                    pending.push(path);
                }
            }
        }
    }

    /// Leaves `path`, the trace being written, out of the file states: it
    /// grows as the program runs, so no state of it is the program's. A
    /// listing of its directory still records it, without contents, so
    /// replay lists the directory with it; replay simulates the calls that
    /// name it, and the final state does not check it.
    pub fn leave_out(&mut self, path: &[u8]) {
        self.own_output = Some(join(b"/", path));
    }

    /// Records the entries of directory `dir` the trace has not named.
    fn list(
        &mut self,
        dir: &[u8],
        next_seq: &mut dyn FnMut() -> u64,
        time_ns: u64,
        out: &mut dyn FnMut(Record),
    ) {
        if !self.listed.insert(dir.to_vec()) {
            return;
        }
        for path in entries(&self.host, dir) {
            if !self.seen.contains_key(&path) {
                let k = self.record(&path, false, next_seq, time_ns, out);
                if k.0 == FileKind::Regular {
                    self.unread.insert(path.clone());
                }
                self.seen.insert(path, k);
            }
        }
    }

    /// Records one component's state; returns its kind and link target.
    fn record(
        &mut self,
        path: &[u8],
        contents: bool,
        next_seq: &mut dyn FnMut() -> u64,
        time_ns: u64,
        out: &mut dyn FnMut(Record),
    ) -> (FileKind, Vec<u8>) {
        let Ok((s, inode)) = before_state(&self.host, path) else {
            return (FileKind::Absent, Vec::new());
        };
        self.emit(s, inode, contents, next_seq, time_ns, out)
    }

    /// Emits before-state `s` (with `inode` if its file has other names)
    /// and, for a regular file with `contents`, its contents; returns its
    /// kind and link target.
    fn emit(
        &mut self,
        mut s: PathState,
        inode: Option<Inode>,
        contents: bool,
        next_seq: &mut dyn FnMut() -> u64,
        time_ns: u64,
        out: &mut dyn FnMut(Record),
    ) -> (FileKind, Vec<u8>) {
        s.seq = next_seq();
        s.time_ns = time_ns;
        let kind = s.kind;
        let target = s.target.clone();
        let mut contents = contents;
        if let Some(inode) = inode {
            // Another name of a file recorded before shares its number and
            // its contents, recorded once: a second copy, taken after the
            // trace wrote through the first name, would undo the write.
            let next = self.inodes.len() as u64 + 1;
            let (link, recorded) = *self.inodes.entry(inode).or_insert((next, false));
            s.link = link;
            contents &= !recorded;
        }
        let mut file = None;
        if kind == FileKind::Regular {
            s.content = if !contents || self.policy != SnapshotPolicy::Contents {
                ContentNote::Skipped
            } else {
                match self.host.locate(&s.path, false).and_then(|fd| reopen(&fd)) {
                    Ok(f) => {
                        file = Some(f);
                        if let Some(known) = inode.and_then(|i| self.inodes.get_mut(&i)) {
                            known.1 = true;
                        }
                        ContentNote::Complete
                    }
                    Err(_) => {
                        self.unreadable += 1;
                        ContentNote::Unreadable
                    }
                }
            };
        }
        let (seq, path) = (s.seq, s.path.clone());
        self.paths += 1;
        out(Record::PathState(s));
        if let Some(f) = file {
            if self.emit_contents(&f, seq, time_ns, &path, out).is_err() {
                // Said complete already: what was not read stays zero in
                // replay, and the summary counts the file as unreadable.
                self.unreadable += 1;
            }
        }
        (kind, target)
    }

    /// Emits a file's data as it is now, a piece at a time so memory stays
    /// bounded whatever its size. Holes are skipped: replay's preparer
    /// sizes the file first and writes only the pieces, so a sparse file
    /// stays sparse (`SEEK_DATA` answers as recorded) and its holes cost
    /// neither reading nor trace space.
    fn emit_contents(
        &mut self,
        f: &std::fs::File,
        seq: u64,
        time_ns: u64,
        path: &[u8],
        out: &mut dyn FnMut(Record),
    ) -> io::Result<()> {
        let mut at = 0u64;
        while let Some(data) = next_data(f, at)? {
            let end = next_hole(f, data)?;
            at = data;
            while at < end {
                let want = PIECE.min((end - at).try_into().unwrap_or(PIECE));
                // A buffer per piece, handed to its record as it is.
                let mut buf = vec![0u8; want];
                let mut n = 0;
                while n < want {
                    let m = f.read_at(&mut buf[n..want], at + n as u64)?;
                    if m == 0 {
                        break;
                    }
                    n += m;
                }
                if n == 0 {
                    return Ok(());
                }
                self.bytes += n as u64;
                buf.truncate(n);
                out(Record::PathData(PathData {
                    seq,
                    time_ns,
                    path: path.to_vec(),
                    offset: at,
                    data: Capture {
                        arg: 0,
                        role: Role::Entry,
                        elem: 0,
                        status: CaptureStatus::Complete,
                        len: n as u64,
                        captured: n as u64,
                        data: Some(buf.into()),
                    },
                }));
                at += n as u64;
                if n < want {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Every path the trace named, sorted.
    pub fn touched(&self) -> impl Iterator<Item = &[u8]> {
        self.touched.iter().map(Vec::as_slice)
    }

    /// Emits the manifest: one after-state per touched path, as it is now.
    pub fn manifest(
        &self,
        next_seq: &mut dyn FnMut() -> u64,
        time_ns: u64,
        out: &mut dyn FnMut(Record),
    ) {
        for p in &self.touched {
            let unread = self.queried.get(p).is_some_and(|f| self.unread.contains(f));
            let state = if unread {
                unsummed_after_state(&self.host, p)
            } else {
                path_state(&self.host, p, PathPhase::After)
            };
            if let Ok(mut s) = state {
                s.seq = next_seq();
                s.time_ns = time_ns;
                out(Record::PathState(s));
            }
        }
    }
}

/// The paths of what directory `dir` holds now (nothing if it cannot be
/// read). Opened through `host`, which takes paths longer than `PATH_MAX`.
fn entries(host: &Root, dir: &[u8]) -> Vec<Vec<u8>> {
    let Ok(fd) = host.open_at(dir, libc::O_RDONLY | libc::O_DIRECTORY, 0) else {
        return Vec::new();
    };
    std::fs::read_dir(fd_path(fd.as_fd()).to_str().expect("ascii"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| join(dir, e.file_name().as_bytes()))
        .collect()
}

/// Goes on along a symbolic link to `target`: its components come next,
/// from `/` if it is absolute. False once more than `MAX_HOPS` links were
/// followed (a loop).
fn follow_link(
    target: &[u8],
    pending: &mut VecDeque<Vec<u8>>,
    cur: &mut Vec<u8>,
    hops: &mut u32,
) -> bool {
    *hops += 1;
    if *hops > MAX_HOPS {
        return false;
    }
    for t in components(target).into_iter().rev() {
        pending.push_front(t);
    }
    if target.first() == Some(&b'/') {
        cur.clear();
    }
    true
}

/// Whether `path` is `dir` or lies below it.
fn is_within(path: &[u8], dir: &[u8]) -> bool {
    path.starts_with(dir) && (path.len() == dir.len() || path[dir.len()] == b'/')
}

/// The non-empty, non-`.` components of a path.
fn components(p: &[u8]) -> VecDeque<Vec<u8>> {
    p.split(|&b| b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
        .map(<[u8]>::to_vec)
        .collect()
}

/// How many of the components after a directory lead back out of it: the
/// count up to and including the first `..` that leaves it, if one does.
fn climb_out(rest: &VecDeque<Vec<u8>>) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in rest.iter().enumerate() {
        if c == b".." {
            if depth == 0 {
                return Some(i + 1);
            }
            depth -= 1;
        } else if c != b"." {
            depth += 1;
        }
    }
    None
}
