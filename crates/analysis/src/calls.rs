//! What analysis needs to know about each system call, derived once from
//! the catalogue: which argument is the path or descriptor a call is
//! about, whether it moves data, and whether it makes descriptors.
//!
//! The facts come from the parameter kinds and effects of each catalogue
//! row, so a new row is analysed like the others.

use std::sync::OnceLock;

use reanimator_catalogue::{self as catalogue, Dir, Effect, Kind, Ret, StructType};
use reanimator_trace::SyscallEvent;

/// Which way a call moves data between a descriptor and user memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    /// The kernel fills the buffer (`read`, `pread64`, `recvmsg`, ...).
    Read,
    /// The program hands the buffer over (`write`, `pwritev`, `sendto`, ...).
    Write,
}

/// Facts about one system call number.
#[derive(Debug, Clone, Copy, Default)]
pub struct CallInfo {
    /// Index of the first `Path` parameter.
    pub path: Option<u8>,
    /// Index of the `DirFd` parameter the path is relative to.
    pub dirfd: Option<u8>,
    /// Index of the first `Fd` parameter.
    pub fd: Option<u8>,
    /// Index of the first `Offset` parameter.
    pub offset: Option<u8>,
    /// Index of the first `Size` parameter (a byte count asked for).
    pub count: Option<u8>,
    /// Index of the first `Flags` parameter.
    pub flags: Option<u8>,
    /// Data direction: set for calls that return a byte count, take a
    /// descriptor and pass a data buffer (a byte buffer, an iovec array or
    /// a message).
    pub io: Option<Io>,
    /// The return value is a new descriptor.
    pub returns_fd: bool,
    /// Index of an `int[2]` of new descriptors the call fills (pipe,
    /// socketpair).
    pub fd_pair: Option<u8>,
    /// Changes the working directory to its path or descriptor.
    pub chdir: bool,
    /// Closes its descriptor argument (`close`).
    pub closes: bool,
}

/// The facts for `nr` (all unset for numbers the catalogue does not know).
pub fn info(nr: u32) -> CallInfo {
    static TABLE: OnceLock<Vec<CallInfo>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let max = catalogue::all().iter().map(|s| s.nr).max().unwrap_or(0);
        let mut t = vec![CallInfo::default(); max as usize + 1];
        for s in catalogue::all() {
            t[s.nr as usize] = derive(s);
        }
        t
    });
    table.get(nr as usize).copied().unwrap_or_default()
}

fn derive(s: &catalogue::Syscall) -> CallInfo {
    let mut c = CallInfo::default();
    let mut data = None;
    for (i, p) in s.params().iter().enumerate() {
        let i = i as u8;
        match p.kind {
            Kind::Path if c.path.is_none() => c.path = Some(i),
            Kind::DirFd if c.dirfd.is_none() => c.dirfd = Some(i),
            Kind::Fd if c.fd.is_none() => c.fd = Some(i),
            Kind::Offset if c.offset.is_none() => c.offset = Some(i),
            Kind::Size if c.count.is_none() => c.count = Some(i),
            Kind::Flags(_) if c.flags.is_none() => c.flags = Some(i),
            Kind::Buf { dir, .. } | Kind::IoVec { dir, .. } | Kind::MsgHdr { dir } => {
                data = data.or(Some(dir));
            }
            Kind::Struct {
                ty: StructType::FdPair,
                ..
            } => c.fd_pair = Some(i),
            _ => {}
        }
    }
    if s.ret == Ret::Size && c.fd.is_some() {
        c.io = match data {
            Some(Dir::Out) => Some(Io::Read),
            Some(Dir::In) => Some(Io::Write),
            _ => None,
        };
    }
    c.returns_fd = s.ret == Ret::Fd;
    c.chdir = s.effect == Effect::Chdir;
    c.closes = s.effect == Effect::Close;
    c
}

/// Bytes a call moved and which way: its return value when it succeeded
/// and [`CallInfo::io`] is set.
pub fn io_bytes(e: &SyscallEvent) -> Option<(Io, u64)> {
    let io = info(e.nr).io?;
    let x = e.exit?;
    (!x.is_error && x.ret >= 0).then_some((io, x.ret as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by(name: &str) -> CallInfo {
        info(catalogue::by_name(name).unwrap().nr)
    }

    #[test]
    fn data_calls_are_found_by_their_parameters() {
        for name in ["read", "pread64", "readv", "preadv2", "recvfrom", "recvmsg"] {
            assert_eq!(by(name).io, Some(Io::Read), "{name}");
        }
        for name in [
            "write", "pwrite64", "writev", "pwritev2", "sendto", "sendmsg",
        ] {
            assert_eq!(by(name).io, Some(Io::Write), "{name}");
        }
        for name in ["readlink", "getrandom", "openat", "fsync", "lseek"] {
            assert_eq!(by(name).io, None, "{name}");
        }
    }

    #[test]
    fn descriptor_facts() {
        let o = by("openat");
        assert_eq!((o.dirfd, o.path, o.returns_fd), (Some(0), Some(1), true));
        assert!(by("dup2").returns_fd && by("dup2").fd == Some(0));
        assert_eq!(by("pipe2").fd_pair, Some(0));
        assert!(by("close").closes && by("fchdir").chdir && by("chdir").chdir);
        assert_eq!(info(100_000).path, None);
    }
}
