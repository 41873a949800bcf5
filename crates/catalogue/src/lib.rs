/*!
The syscall catalogue: one declarative table that knows every x86_64 Linux
system call.

Every part of reanimator asks this table, and nothing else, what a system call
is: the recorders ask which arguments name user memory and how many bytes to
copy (and whether at entry or at exit), the trace format stores its
signatures so a trace describes itself, `dump` asks how to print each
argument, and the replayer asks whether to execute, emulate, simulate or
ignore a call. Adding an ordinary syscall therefore costs one row in
`table.rs` and one test program.

# Overview

- [`Syscall`]: one row: number, name, parameters, return kind, replay class,
  groups and [`Effect`] on the caller's own state.
- [`Kind`]: what one argument is (descriptor, path, flags, buffer, struct,
  iovec array, ...). Buffer-like kinds carry a [`Len`] rule saying how many
  bytes they hold, and a [`Dir`] saying when they are read.
- [`by_nr`], [`by_name`], [`all`]: lookups.

# Example

```
let read = reanimator_catalogue::by_name("read").unwrap();
assert_eq!(read.nr, 0);
assert_eq!(read.to_string(), "read(fd: fd, buf: out[ret], count: size) -> size [execute]");
```
*/

mod flags;
pub mod msg;
mod table;
pub mod uring;

use std::fmt;
use std::sync::OnceLock;

pub use flags::{FlagSet, FlagTable};

/// One system call: the single source of truth for how reanimator treats it.
#[derive(Debug)]
pub struct Syscall {
    /// The x86_64 syscall number.
    pub nr: u32,
    /// The kernel's name for it (as in `SYS_<name>`).
    pub name: &'static str,
    /// Its parameters in order, or `None` when the catalogue records the call
    /// raw (six argument words, no memory read) without decoding it.
    pub params: Option<&'static [Param]>,
    /// How the return value is interpreted.
    pub ret: Ret,
    /// What replay does with it.
    pub replay: Replay,
    /// What it changes in the calling process's own state.
    pub effect: Effect,
    /// The groups it belongs to, for filters such as `--call %file`.
    pub groups: Groups,
}

/// One named parameter of a system call.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// The name used in `dump` output and JSON (the man page's name).
    pub name: &'static str,
    /// What the argument is.
    pub kind: Kind,
}

/// What an argument word means, and for memory arguments what to capture.
///
/// Memory kinds (`Path`, `Str`, `StrArray`, `Buf`, `Struct`, `IoVec`,
/// `MsgHdr`, `Mapped`) are the ones a recorder reads from the tracee; every other kind
/// is fully described by the raw argument word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A signed integer shown in decimal.
    Int,
    /// An unsigned integer shown in decimal.
    UInt,
    /// An opaque value shown in hexadecimal (cookies, ioctl requests).
    Hex,
    /// A user-space address that is not dereferenced.
    Ptr,
    /// A range of the caller's mappings (munmap, msync, madvise): where it overlaps
    /// a shared writable file mapping, its bytes are read at entry. Stores
    /// through such a mapping change the file with no system call; this
    /// capture is how they reach the trace and the replay.
    Mapped {
        /// Index of the parameter holding the range's length.
        len: u8,
    },
    /// A file descriptor.
    Fd,
    /// A directory descriptor for `*at` calls (`AT_FDCWD` is shown by name).
    DirFd,
    /// A process or thread id.
    Pid,
    /// A user or group id.
    Id,
    /// A signal number.
    Signal,
    /// A file offset (signed 64-bit).
    Offset,
    /// A byte count (`size_t`).
    Size,
    /// Permission bits (shown in octal).
    Mode,
    /// Permission bits of a new file, masked by the process's umask (open,
    /// mkdir, mknod): replay applies the emulated umask to them.
    CreateMode,
    /// A device number (`dev_t`, mknod): it names the device only when the
    /// mode argument at index `mode` makes a character or block device.
    Dev {
        /// Index of the parameter holding the new file's mode.
        mode: u8,
    },
    /// A bit set or an enumerated value decoded with a named table.
    Flags(FlagSet),
    /// A NUL-terminated path name, read at entry.
    Path,
    /// A NUL-terminated string that is not a path (xattr name, fs type).
    Str,
    /// A NULL-terminated array of string pointers (argv, envp), read at entry.
    StrArray,
    /// A byte buffer.
    Buf {
        /// When it is read.
        dir: Dir,
        /// How many bytes it holds.
        len: Len,
    },
    /// A typed structure (stat, statx, `timespec[2]`, ...).
    Struct {
        /// Which structure.
        ty: StructType,
        /// When it is read.
        dir: Dir,
        /// How many bytes it holds.
        len: Len,
    },
    /// An array of `struct iovec`; the argument at index `count` holds the
    /// number of elements. `Out` arrays are filled in order up to the return
    /// value. An `InOut` array (vmsplice) is data for the kernel or filled
    /// by it as the call's descriptor is open for writing or for reading:
    /// both are captured, and replay asks the descriptor.
    IoVec {
        /// When the element buffers are read.
        dir: Dir,
        /// Index of the parameter holding the element count.
        count: u8,
    },
    /// A `struct msghdr` (sendmsg, recvmsg): its name, iovec data and control
    /// data.
    MsgHdr {
        /// `In` for sendmsg, `Out` for recvmsg.
        dir: Dir,
    },
    /// Linux AIO requests handed to the kernel (`io_submit`'s array of
    /// `struct iocb *`; the argument at index `count` holds how many):
    /// read at entry, the pointer array, each `iocb` and the data of each
    /// write, so replay can submit the same requests. Capture layout in
    /// [`aio`].
    IoCbs {
        /// Index of the parameter holding the number of requests.
        count: u8,
    },
    /// Linux AIO completions (`io_getevents`' array of `struct io_event`,
    /// as many as the return value): read at exit with the data each
    /// completed read brought in, found through the event's `iocb`.
    /// Capture layout in [`aio`].
    IoEvents,
    /// io_uring requests (`io_uring_enter`'s `to_submit` argument): the
    /// SQEs the kernel consumes from the descriptor's ring, read at entry
    /// with the data of each write. Capture layout in [`uring`].
    UringSubmit,
    /// io_uring completions (`io_uring_enter`'s `min_complete` argument):
    /// the CQEs posted to the descriptor's ring since the last look, read
    /// at exit with the data of each read not yet consumed. Capture
    /// layout in [`uring`].
    UringComplete,
}

/// How the captures of [`Kind::IoCbs`] and [`Kind::IoEvents`] are laid
/// out, for the recorders that write them and everyone who reads them.
///
/// Capture `elem` 0 is the whole array (`n` pointers of 8 bytes, or `n`
/// `struct io_event` of 32 bytes). Request or event `i` then owns the
/// elements from `(i + 1) << SHIFT`: the `struct iocb` itself at offset 0
/// (requests only), and its data buffers at offsets 1, 2, ...: one for
/// `PREAD`/`PWRITE`, one per iovec element for `PREADV`/`PWRITEV`. Data
/// is captured at `io_submit` entry for writes and at `io_getevents` exit
/// for reads (the event's `res` bytes, spread over the elements in order).
/// A `PREADV` request's elements are also captured at `io_submit` entry,
/// each with its length and no bytes, so replay can submit it.
pub mod aio {
    /// Bits of a capture's `elem` below the request or event number.
    pub const SHIFT: u32 = 11;
    /// Most requests or events captured per call (more are counted as
    /// truncated): 1024 elements of data each.
    pub const MAX: u64 = 1 << 16;
    /// Most data elements of one vectored request (`IOV_MAX`).
    pub const IOV_MAX: u64 = 1024;
    /// Size of `struct iocb`.
    pub const IOCB_LEN: usize = 64;
    /// Size of `struct io_event`.
    pub const EVENT_LEN: usize = 32;
    /// `IOCB_CMD_PREAD`.
    pub const PREAD: u16 = 0;
    /// `IOCB_CMD_PWRITE`.
    pub const PWRITE: u16 = 1;
    /// `IOCB_CMD_FSYNC`.
    pub const FSYNC: u16 = 2;
    /// `IOCB_CMD_FDSYNC`.
    pub const FDSYNC: u16 = 3;
    /// `IOCB_CMD_POLL`.
    pub const POLL: u16 = 5;
    /// `IOCB_CMD_NOOP`.
    pub const NOOP: u16 = 6;
    /// `IOCB_CMD_PREADV`.
    pub const PREADV: u16 = 7;
    /// `IOCB_CMD_PWRITEV`.
    pub const PWRITEV: u16 = 8;
    /// `IOCB_FLAG_RESFD`: completion also signals the eventfd `aio_resfd`.
    pub const FLAG_RESFD: u32 = 1;

    /// The `elem` of request or event `i`'s part `part` (0: the iocb,
    /// 1 + j: data element j).
    pub fn elem(i: u64, part: u64) -> u32 {
        (((i + 1) << SHIFT) | part) as u32
    }

    /// The fields of a `struct iocb` replay and `dump` use.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Iocb {
        /// `aio_data`: the program's cookie, returned in the event.
        pub data: u64,
        /// `aio_lio_opcode`.
        pub opcode: u16,
        /// `aio_fildes`.
        pub fd: i32,
        /// `aio_buf`: the data, or the iovec array of a vectored request.
        pub buf: u64,
        /// `aio_nbytes`: bytes, or iovec elements of a vectored request.
        pub nbytes: u64,
        /// `aio_offset`.
        pub offset: i64,
        /// `aio_rw_flags` (`RWF_*`).
        pub rw_flags: i32,
        /// `aio_flags` (`IOCB_FLAG_*`).
        pub flags: u32,
    }

    impl Iocb {
        /// Decodes the kernel's layout, `None` if `b` is too short.
        pub fn parse(b: &[u8]) -> Option<Iocb> {
            let b = b.get(..IOCB_LEN)?;
            let u64_at = |o: usize| Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?));
            let u32_at = |o: usize| Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?));
            Some(Iocb {
                data: u64_at(0)?,
                rw_flags: u32_at(12)? as i32,
                opcode: u16::from_le_bytes(b.get(16..18)?.try_into().ok()?),
                fd: u32_at(20)? as i32,
                buf: u64_at(24)?,
                nbytes: u64_at(32)?,
                offset: u64_at(40)? as i64,
                flags: u32_at(56)?,
            })
        }

        /// Whether the kernel reads the request's data from memory.
        pub fn writes(&self) -> bool {
            matches!(self.opcode, PWRITE | PWRITEV)
        }

        /// Whether the kernel fills the request's memory.
        pub fn reads(&self) -> bool {
            matches!(self.opcode, PREAD | PREADV)
        }

        /// Whether `buf` is an iovec array.
        pub fn vectored(&self) -> bool {
            matches!(self.opcode, PREADV | PWRITEV)
        }

        /// The opcode's name (`IOCB_CMD_` left off).
        pub fn op_name(&self) -> &'static str {
            match self.opcode {
                PREAD => "PREAD",
                PWRITE => "PWRITE",
                FSYNC => "FSYNC",
                FDSYNC => "FDSYNC",
                POLL => "POLL",
                NOOP => "NOOP",
                PREADV => "PREADV",
                PWRITEV => "PWRITEV",
                _ => "?",
            }
        }
    }

    /// One `struct io_event`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Event {
        /// `data`: the request's `aio_data`.
        pub data: u64,
        /// `obj`: the address of the request's `iocb` in the program.
        pub obj: u64,
        /// `res`: the request's result (bytes, or -errno).
        pub res: i64,
    }

    /// The request addresses of an `iocb *` array (`io_submit`'s), as many
    /// as whole ones fit.
    pub fn pointers(b: &[u8]) -> impl Iterator<Item = u64> + '_ {
        b.chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
    }

    /// The events of an `io_event` array, as many as whole ones fit.
    pub fn events(b: &[u8]) -> impl Iterator<Item = Event> + '_ {
        b.chunks_exact(EVENT_LEN).map(|e| {
            let w = |o: usize| u64::from_le_bytes(e[o..o + 8].try_into().expect("8 bytes"));
            Event {
                data: w(0),
                obj: w(8),
                res: w(16) as i64,
            }
        })
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn requests_and_events_decode_from_the_kernel_layout() {
            assert_eq!((elem(0, 0), elem(0, 1), elem(2, 3)), (2048, 2049, 6147));
            let mut b = [0u8; IOCB_LEN];
            b[0..8].copy_from_slice(&7u64.to_le_bytes());
            b[16..18].copy_from_slice(&PWRITEV.to_le_bytes());
            b[20..24].copy_from_slice(&5u32.to_le_bytes());
            b[32..40].copy_from_slice(&2u64.to_le_bytes());
            b[40..48].copy_from_slice(&(-1i64).to_le_bytes());
            let cb = Iocb::parse(&b).unwrap();
            assert_eq!((cb.data, cb.fd, cb.nbytes, cb.offset), (7, 5, 2, -1));
            assert!(cb.writes() && cb.vectored() && !cb.reads());
            assert_eq!(Iocb::parse(&b[..63]), None);
            let mut e = [0u8; 2 * EVENT_LEN];
            e[40..48].copy_from_slice(&0xa0u64.to_le_bytes());
            e[48..56].copy_from_slice(&(-5i64).to_le_bytes());
            let evs: Vec<Event> = events(&e[..2 * EVENT_LEN - 1]).collect();
            assert_eq!(evs.len(), 1, "only whole events");
            let evs: Vec<Event> = events(&e).collect();
            assert_eq!((evs[1].obj, evs[1].res), (0xa0, -5));
        }
    }
}

/// When a memory argument is read from the traced process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Read at syscall entry: data the program gives the kernel.
    In,
    /// Read at syscall exit, only if the call succeeded: data the kernel
    /// returns.
    Out,
    /// Read at entry and again at exit (value-result arguments).
    InOut,
}

/// How many bytes a memory argument holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Len {
    /// The value of the argument at this index (`write`'s `count`).
    Arg(u8),
    /// The return value (`read`'s result).
    Ret,
    /// A fixed size in bytes (`struct stat` is 144).
    Fixed(u32),
    /// The `socklen_t`/`int` that the pointer argument at this index points
    /// to (accept's `addrlen`).
    ArgPtr(u8),
    /// The argument at the first index times a size in bytes: a count of
    /// fixed-size items (`setgroups`' `size` group ids of 4 bytes).
    ArgTimes(u8, u8),
}

/// The group ids of a [`StructType::Gids`] array, for showing it and for
/// replay to act with them.
pub fn gids(list: &[u8]) -> impl Iterator<Item = u32> + '_ {
    list.chunks_exact(4)
        .map(|g| u32::from_le_bytes(g.try_into().expect("chunks of 4 bytes")))
}

/// Calls whose new descriptors the kernel always makes close-on-exec,
/// whatever their flags say (`mq_open` takes `O_CLOEXEC` but never needs
/// it: the kernel sets the flag on every queue descriptor).
pub const ALWAYS_CLOSE_ON_EXEC: [&str; 5] = [
    "mq_open",
    "pidfd_open",
    "pidfd_getfd",
    "io_uring_setup",
    "landlock_create_ruleset",
];

/// Calls that return a descriptor except when one of these flag bits is
/// set, and then a number: (name, flags argument, bits).
/// `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)` is
/// how a program asks which Landlock ABI the kernel has.
const NUMBER_INSTEAD_OF_DESCRIPTOR: [(&str, usize, u64); 1] = [("landlock_create_ruleset", 2, 3)];

/// `prctl`'s operation that installs a seccomp filter.
pub const PR_SET_SECCOMP: u64 = 22;
/// `prctl`'s operation that drops a capability from the bounding set.
pub const PR_CAPBSET_DROP: u64 = 24;

/// The effective capability set a successful `capset` gave the thread
/// it names (`header`, `data`: its [`StructType::CapHeader`] and
/// [`StructType::CapData`]), and that thread (0: the caller). Version 1
/// (`_LINUX_CAPABILITY_VERSION_1`) holds only the low 32 capabilities.
pub fn caps_effective(header: &[u8], data: &[u8]) -> Option<(u64, i32)> {
    const VERSION_1: u32 = 0x1998_0330;
    let word = |d: &[u8], o: usize| {
        d.get(o..o + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    };
    let version = word(header, 0)?;
    let tid = word(header, 4)? as i32;
    let low = u64::from(word(data, 0)?);
    let high = if version == VERSION_1 {
        0
    } else {
        u64::from(word(data, 12)?)
    };
    Some((low | high << 32, tid))
}

/// The file-system path a Unix socket address names (`bind` makes the
/// socket file there), or `None` for another family, an abstract or an
/// unnamed address: the recorders record that path's state, and replay
/// makes the file.
pub fn unix_socket_path(addr: &[u8]) -> Option<&[u8]> {
    const AF_UNIX: u16 = 1;
    if u16::from_le_bytes(addr.get(..2)?.try_into().ok()?) != AF_UNIX {
        return None;
    }
    let path = addr.get(2..)?;
    let path = &path[..path.iter().position(|&b| b == 0).unwrap_or(path.len())];
    (!path.is_empty()).then_some(path)
}

/// Structures the catalogue knows by layout, for decoding and verification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StructType {
    /// `struct stat` (x86_64, 144 bytes).
    Stat,
    /// `struct statx` (256 bytes).
    Statx,
    /// `struct statfs` (120 bytes).
    Statfs,
    /// `struct timespec[2]` (utimensat).
    Timespec2,
    /// `struct timeval[2]` (utimes, futimesat).
    Timeval2,
    /// `struct utimbuf` (utime).
    Utimbuf,
    /// `int[2]` of new descriptors (pipe, pipe2, socketpair).
    FdPair,
    /// `struct open_how` (openat2).
    OpenHow,
    /// `struct clone_args` (clone3).
    CloneArgs,
    /// A socket address of the given length.
    Sockaddr,
    /// `socklen_t` (a 4-byte length).
    Socklen,
    /// `struct rlimit`.
    Rlimit,
    /// `struct flock` (fcntl locks).
    Flock,
    /// `struct epoll_event`.
    EpollEvent,
    /// `loff_t` (an 8-byte offset, copy_file_range and splice).
    Loff,
    /// `struct linux_dirent64` records (getdents64).
    Dirents64,
    /// `struct linux_dirent` records (getdents).
    Dirents,
    /// `int` (clone's pidfd, getsockopt values).
    Int,
    /// A wait status `int` (wait4): `WIFEXITED`, `WTERMSIG`, ...
    WaitStatus,
    /// `siginfo_t` (128 bytes): the child state waitid reports.
    Siginfo,
    /// `struct rusage`.
    Rusage,
    /// `struct sigaction` (kernel layout).
    Sigaction,
    /// `sigset_t` (8 bytes on x86_64).
    Sigset,
    /// `struct utsname`.
    Utsname,
    /// `struct pollfd[]`.
    Pollfds,
    /// `struct timespec`.
    Timespec,
    /// `struct mount_attr`.
    MountAttr,
    /// `struct file_handle`.
    FileHandle,
    /// NUL-terminated names one after another (listxattr): a set, whose
    /// order the file system chooses.
    NameList,
    /// `struct cachestat_range` / `cachestat`.
    Cachestat,
    /// `aio_context_t` (a Linux AIO context id, 8 bytes).
    AioContext,
    /// `struct __user_cap_header_struct` (capset: version and thread).
    CapHeader,
    /// `struct __user_cap_data_struct[2]` (capset, versions 2 and 3: the
    /// effective, permitted and inheritable sets, low words then high).
    CapData,
    /// `struct io_uring_params` ([`uring::Params`]).
    UringParams,
    /// `gid_t[]`, an array of group ids (setgroups; [`gids`]).
    Gids,
    /// `int[]`, an array of descriptors: the files `io_uring_register`
    /// registers with a ring, which its requests then name by index
    /// ([`gids`] reads it too, as 32-bit words).
    Fds,
    /// Opaque bytes of a known size (ioctl argument structs and the like).
    Opaque,
}

/// How a return value is read and shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ret {
    /// 0 or -errno.
    Int,
    /// A new file descriptor.
    Fd,
    /// A byte count.
    Size,
    /// A file offset.
    Offset,
    /// An address (mmap, brk).
    Addr,
    /// A process or thread id.
    Pid,
    /// A value shown in hexadecimal.
    Hex,
    /// The call does not return on success (exit, exit_group, rt_sigreturn).
    None,
}

/// What the replayer does with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replay {
    /// Re-executed against the replay root with the traced arguments and data
    /// (file-system and storage calls).
    Execute,
    /// Not executed; its effect on the replayer's emulated process state is
    /// applied (fork, clone, execve, exit, chdir bookkeeping, umask).
    Emulate,
    /// Not executed; its results come from the trace (sockets, network,
    /// anything that talks to the outside world).
    Simulate,
    /// Has no effect that replay needs to reproduce (getpid, futex, brk).
    Ignore,
}

/// What a call changes in the calling process's own state (its descriptor
/// table, working directory, umask, memory mappings, program or children),
/// beyond its result.
///
/// Everything that follows that state through a trace (the replayer's
/// emulation and ordering, analysis, the recorders' bookkeeping of shared
/// mappings and pre-existing files) asks this, never a call's name. Which
/// arguments hold the details comes from the parameter kinds: a `Path` or
/// an `Fd` for a directory change, a `Flags` argument if the call has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Nothing beyond what its parameter kinds and return kind say.
    None,
    /// Opens its path as a new descriptor (open, creat, openat, openat2).
    Open,
    /// Closes its descriptor argument.
    Close,
    /// Closes, or marks close-on-exec, a range of descriptors.
    CloseRange,
    /// Copies its first descriptor to a new number (dup, dup2, dup3).
    Dup,
    /// Depending on its command, copies its descriptor (`F_DUPFD`) or
    /// changes the descriptor's flags.
    Fcntl,
    /// Creates a connected pair of descriptors in its `FdPair` argument.
    Pipe,
    /// Maps memory, maybe backed by its descriptor.
    Map,
    /// Unmaps a range of memory.
    Unmap,
    /// Moves or resizes a mapping.
    Remap,
    /// Writes a shared mapping's range back to its file.
    Sync,
    /// Advises the kernel about a range of memory (madvise): for a shared
    /// file mapping, `MADV_DONTNEED` drops the pages from the process but
    /// not its stores from the file, and `MADV_REMOVE` frees the file's
    /// blocks, so the stores before it are captured as at `munmap`.
    Advise,
    /// Changes the working directory to its path or descriptor.
    Chdir,
    /// Changes the process's root directory to its path: absolute paths
    /// start there from then on, in the recorders and in replay.
    Chroot,
    /// Removes the directory entry its path names (`unlink`, `unlinkat`,
    /// `rmdir`): the file's contents no longer matter through that name,
    /// so recorders do not record them.
    Remove,
    /// Moves its first path to its second (or swaps them): a directory
    /// moved carries entries the trace has not named yet, which later
    /// calls name under the new path, so recorders record them first.
    Move,
    /// Sets the file-creation mask.
    Umask,
    /// Replaces the program, which drops close-on-exec descriptors.
    Exec,
    /// Ends every thread of the process (`exit_group`).
    EndProcess,
    /// Creates a process or thread. The value holds the clone flags the
    /// call implies (vfork: `CLONE_VM | CLONE_VFORK`); others come from its
    /// `Flags(Clone)` argument or its `clone_args` structure.
    Spawn(u64),
    /// May receive descriptors from another process (`SCM_RIGHTS`).
    ReceiveFds,
    /// Names its socket by its address. A Unix socket's path name becomes
    /// a socket file, which later calls find (`chmod`, `unlink`), though
    /// the socket itself is simulated.
    Bind,
    /// Connects its socket to the socket its address names. Replay pairs
    /// the ends of a Unix connection (the nth `connect` to a name with the
    /// nth [`Effect::Accept`] on the socket bound to it), so that
    /// descriptors one end passes (`SCM_RIGHTS`) reach the other.
    Connect,
    /// Takes a connection from its listening socket as a new descriptor
    /// (see [`Effect::Connect`]).
    Accept,
    /// Changes the caller's user or group ids, which decide what its file
    /// calls may do and who owns what they create.
    SetIds(Ids),
    /// Replaces the caller's supplementary group ids with its `In` list
    /// (`setgroups`), which permission checks consult after the
    /// effective group id.
    SetGroups,
    /// Sets a thread's capabilities (`capset`): a root program that drops
    /// `CAP_DAC_OVERRIDE` is refused what root otherwise may do.
    SetCaps,
    /// Creates a Linux AIO context (`io_setup`), whose id its `Out`
    /// structure receives: replay creates its own and maps one to the
    /// other.
    AioSetup,
    /// Destroys the Linux AIO context of its first argument, once its
    /// requests are done (`io_destroy`).
    AioDestroy,
    /// Creates an io_uring whose descriptor it returns and whose layout
    /// its `UringParams` structure receives (`io_uring_setup`): recorders
    /// follow the ring's mappings to read its requests, replay creates
    /// its own ring.
    UringSetup,
    /// Registers resources with the ring of its first descriptor
    /// (`io_uring_register`). For `IORING_REGISTER_FILES` its `Fds` array
    /// holds the files that requests flagged `IOSQE_FIXED_FILE` name by
    /// index; replay keeps which of its own descriptors each index
    /// stands for.
    UringRegister,
    /// Makes a descriptor that refers to the process its first argument
    /// names (`pidfd_open`), always close-on-exec.
    PidFd,
    /// Copies into the caller's table the descriptor its second argument
    /// names in the process its first (a pidfd) refers to (`pidfd_getfd`):
    /// the same open file description, close-on-exec.
    GetFd,
    /// Gives the calling thread its own copy of what its flags name
    /// (`unshare`): `CLONE_FILES` its descriptor table, `CLONE_FS` its
    /// working directory, root and umask; namespaces are not replayed.
    Unshare,
    /// Sets (`true`) or clears the close-on-exec flag of its first
    /// descriptor (`ioctl(FIOCLEX)`, `ioctl(FIONCLEX)`), which decides
    /// what an `execve` keeps, as `fcntl(F_SETFD)` does.
    CloseOnExec(bool),
    /// Makes the file of its first descriptor share the bytes of the file
    /// of its second (`ioctl(FICLONE)`, which `cp` issues on XFS and
    /// btrfs). Nothing of those bytes passes through the call, so replay
    /// copies them where its file system cannot share them.
    Clone,
    /// Allocates, zeroes or punches out a range of the file of its first
    /// descriptor (`fallocate`: mode, offset, length). Some file systems
    /// cannot (ext2, network and FUSE ones: `EOPNOTSUPP`); replay then
    /// makes what a program can see of it, the file's size and zeros.
    Allocate,
    /// Reports into its `Out` mask the CPUs the task of its first argument
    /// may run on (`sched_getaffinity`). The ptrace recorder pins the tasks
    /// it traces to its own CPUs, so it shows each the mask it had before,
    /// and a program sizes its thread pool (`nproc`, `make -j`, `xz -T0`)
    /// as it would untraced.
    ShowsCpus,
    /// Sets the CPUs the task of its first argument may run on
    /// (`sched_setaffinity`): from then on that task sees its own choice.
    SetsCpus,
    /// Puts the calling thread, and the threads it makes afterwards, under
    /// a seccomp filter when its first argument is one of these operations
    /// (`seccomp(SECCOMP_SET_MODE_STRICT, _FILTER)`,
    /// `prctl(PR_SET_SECCOMP)`). The filter may then refuse any call with
    /// any errno without the kernel running it, so replay does not issue
    /// the thread's failed calls.
    Seccomp(&'static [u64]),
    /// `prctl`, two of whose operations matter to replay:
    /// [`PR_SET_SECCOMP`] (as [`Effect::Seccomp`]) and [`PR_CAPBSET_DROP`],
    /// which takes a capability from the thread's bounding set, so that a
    /// root program's next `execve` leaves it without (`capsh --drop`).
    Prctl,
}

/// Whose ids a [`Effect::SetIds`] call changes, and which of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ids {
    /// User ids (`setuid` and kin).
    User(Which),
    /// Group ids (`setgid` and kin).
    Group(Which),
}

/// Which ids a [`Effect::SetIds`] call's arguments set; an argument of -1
/// leaves its id alone. The file-system id follows the effective id
/// except for `setfs*id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// One id: every id for a privileged caller, the effective id for
    /// others (`setuid`).
    One,
    /// Real and effective; the saved id becomes the new effective id when
    /// the real id is set or the effective id differs from the old real
    /// one (`setreuid`).
    RealEffective,
    /// Real, effective and saved (`setresuid`).
    RealEffectiveSaved,
    /// The file-system id alone, if the caller may (`setfsuid`); returns
    /// the old one.
    FileSystem,
}

impl Effect {
    /// The call (if it succeeds) ends the caller's address space, and with
    /// it every mapping: stores still in a shared file mapping then reach
    /// the file with no further call, so recorders capture them at its
    /// entry as [`MAPPED_AT_EXIT`] pseudo-calls.
    pub fn ends_address_space(self) -> bool {
        matches!(self, Effect::Exec | Effect::EndProcess)
    }
}

/// A set of [`Group`] bits.
pub type Groups = u16;

/// Syscall groups, as bits of [`Groups`], in the spirit of strace's `%file`.
#[derive(Debug, Clone, Copy)]
pub struct Group;

impl Group {
    /// Takes a path name.
    pub const FILE: Groups = 1 << 0;
    /// Takes or returns a file descriptor.
    pub const DESC: Groups = 1 << 1;
    /// Creates, changes or ends processes.
    pub const PROCESS: Groups = 1 << 2;
    /// Sockets and networking.
    pub const NETWORK: Groups = 1 << 3;
    /// Memory mapping.
    pub const MEMORY: Groups = 1 << 4;
    /// Signals.
    pub const SIGNAL: Groups = 1 << 5;
    /// SysV and POSIX IPC.
    pub const IPC: Groups = 1 << 6;
    /// Credentials.
    pub const CREDS: Groups = 1 << 7;
    /// Clocks and timers.
    pub const CLOCK: Groups = 1 << 8;
    /// File metadata queries (stat family, statx, statfs, access).
    pub const STAT: Groups = 1 << 9;
    /// Its paths name directory entries themselves: a final symbolic link
    /// is not followed (lstat, unlink, mkdir, rename). Calls with an `AT_*`
    /// flags argument may say otherwise per call: `AT_SYMLINK_NOFOLLOW`
    /// for all their paths, `AT_SYMLINK_FOLLOW` (linkat) for the first.
    pub const NOFOLLOW: Groups = 1 << 10;
    /// Asynchronous I/O (Linux AIO, io_uring). Requests and completions
    /// are captured and replayed ([`Kind::IoCbs`], [`Kind::IoEvents`],
    /// [`Kind::UringSubmit`], [`Kind::UringComplete`]); `io_cancel`, still
    /// simulated, is counted and reported ([`Syscall::io_unseen`]).
    pub const AIO: Groups = 1 << 11;
    /// Only looks: issued again, it changes nothing the program could see
    /// (the stat family, `access`, `pread64`, `lseek`, `readlink`, xattr
    /// reads). Replay issues one that mismatched once more, after every
    /// call that ended before it has finished: another process's write
    /// racing it in the recording may have come first.
    pub const QUERY: Groups = 1 << 12;
    /// Reads at the descriptor's file offset and moves it on by what it
    /// returns (`read`, `readv`). On a regular file, with the offset moved
    /// back, it is issued again like a [`Group::QUERY`]: a program polling
    /// a file another process rewrites (`pg_ctl` reading `postmaster.pid`)
    /// may have read it just after the write in the recording.
    pub const REREAD: Groups = 1 << 13;
    /// Works at the descriptor's file offset (`read`, `write`, `readv`,
    /// `writev`, `lseek`). Processes that share an open file description
    /// (a server's `> log 2>&1`, inherited by every process it forks)
    /// share that offset, so two such calls that overlapped in time still
    /// took effect in one order: replay keeps the order they finished in.
    pub const CURSOR: Groups = 1 << 14;

    /// Every group with the name used on the command line.
    pub const NAMES: &'static [(&'static str, Groups)] = &[
        ("file", Self::FILE),
        ("desc", Self::DESC),
        ("process", Self::PROCESS),
        ("network", Self::NETWORK),
        ("memory", Self::MEMORY),
        ("signal", Self::SIGNAL),
        ("ipc", Self::IPC),
        ("creds", Self::CREDS),
        ("clock", Self::CLOCK),
        ("stat", Self::STAT),
        ("nofollow", Self::NOFOLLOW),
        ("aio", Self::AIO),
        ("query", Self::QUERY),
        ("reread", Self::REREAD),
        ("cursor", Self::CURSOR),
    ];
}

impl Syscall {
    /// True when the catalogue decodes the arguments of this call.
    pub fn is_decoded(&self) -> bool {
        self.params.is_some()
    }

    /// The parameters, or an empty slice for raw-only calls.
    pub fn params(&self) -> &'static [Param] {
        self.params.unwrap_or(&[])
    }

    /// True when the call belongs to every group in `groups`.
    pub fn in_groups(&self, groups: Groups) -> bool {
        self.groups & groups == groups
    }

    /// True for the calls that end their thread (`exit`, `exit_group`):
    /// one recorded with no return lost nothing, while any other call
    /// without one was cut short.
    pub fn ends_thread(&self) -> bool {
        matches!(self.name, "exit" | "exit_group")
    }

    /// True for asynchronous I/O calls whose effect replay does not
    /// reproduce (`io_cancel`): a user must hear so rather than find a
    /// final-state difference unexplained. (io_uring requests replay does
    /// not issue are counted by replay itself.)
    pub fn io_unseen(&self) -> bool {
        self.in_groups(Group::AIO) && self.replay == Replay::Simulate
    }

    /// The file bytes a positional read or write touches (`pread64`,
    /// `pwrite64`: a descriptor, one buffer, its size and an offset by
    /// value). Such calls on disjoint byte ranges commute, which lets a
    /// replay ordering run them out of recorded order; calls of any other
    /// shape give `None`.
    pub fn positional_io(&self, args: &[u64; 6]) -> Option<PositionalIo> {
        match self.params() {
            [Param { kind: Kind::Fd, .. }, Param {
                kind: Kind::Buf { dir, .. },
                ..
            }, Param {
                kind: Kind::Size, ..
            }, Param {
                kind: Kind::Offset, ..
            }] if *dir != Dir::InOut => {
                let start = args[3];
                // A negative offset fails with EINVAL: no bytes touched.
                let len = if (start as i64) < 0 { 0 } else { args[2] };
                Some(PositionalIo {
                    fd: args[0] as i32,
                    write: *dir == Dir::In,
                    start,
                    end: start.saturating_add(len),
                })
            }
            _ => None,
        }
    }

    /// The `open(2)` flags the kernel acts on for this call: its flags
    /// argument (open, openat) as the kernel reduces it, the flags `creat`
    /// implies, or `None` for calls without them in a register (openat2
    /// keeps them in `struct open_how`). Unlike `openat2`, which refuses
    /// them, these calls drop bits no flag uses (GNU dd passes its own
    /// `skip_bytes` and `seek_bytes` markers there) and, with `O_PATH`,
    /// every flag `O_PATH` ignores, so replaying them through `openat2`
    /// needs the reduced flags.
    pub fn open_flags(&self, args: &[u64; 6]) -> Option<u64> {
        /// `O_CREAT | O_WRONLY | O_TRUNC` on x86_64: creat(2) is open(2)
        /// with these flags.
        const CREAT: u64 = 0o100 | 0o1 | 0o1000;
        /// The kernel's `VALID_OPEN_FLAGS` on x86_64: the access mode and
        /// every flag from `O_CREAT` (0o100) to `__O_TMPFILE`
        /// (0o20000000).
        const VALID: u64 = 0o37777703;
        /// `O_PATH` and the flags it keeps (`O_PATH_FLAGS`): `O_DIRECTORY`,
        /// `O_NOFOLLOW`, `O_CLOEXEC`.
        const PATH: u64 = 0o10000000;
        const PATH_KEEPS: u64 = PATH | 0o200000 | 0o400000 | 0o2000000;
        let params = self.params();
        match params
            .iter()
            .position(|p| p.kind == Kind::Flags(FlagSet::Open))
        {
            Some(i) => {
                let flags = args[i] & VALID;
                Some(if flags & PATH != 0 {
                    flags & PATH_KEEPS
                } else {
                    flags
                })
            }
            None if self.effect == Effect::Open
                && !params.iter().any(|p| {
                    matches!(
                        p.kind,
                        Kind::Struct {
                            ty: StructType::OpenHow,
                            ..
                        }
                    )
                }) =>
            {
                Some(CREAT)
            }
            None => None,
        }
    }

    /// Whether the call, given `args`, returns a new descriptor (the
    /// replayer's table gets an entry for it).
    pub fn makes_descriptor(&self, args: &[u64; 6]) -> bool {
        self.ret == Ret::Fd
            && !NUMBER_INSTEAD_OF_DESCRIPTOR
                .iter()
                .any(|&(name, i, bits)| name == self.name && args[i] & bits != 0)
    }

    /// Whether the descriptors the call creates are close-on-exec: always
    /// for [`ALWAYS_CLOSE_ON_EXEC`], else the `*_CLOEXEC` bit
    /// (`O_CLOEXEC`, `SOCK_CLOEXEC`, `MFD_CLOEXEC`, ...) of the first flags
    /// argument whose table has one.
    pub fn cloexec(&self, args: &[u64; 6]) -> bool {
        ALWAYS_CLOSE_ON_EXEC.contains(&self.name)
            || self
                .params()
                .iter()
                .zip(args)
                .find_map(|(p, &v)| match p.kind {
                    Kind::Flags(set) => set
                        .table()
                        .entries
                        .iter()
                        .find(|(_, name)| name.ends_with("_CLOEXEC"))
                        .map(|&(bit, _)| v & bit != 0),
                    _ => None,
                })
                == Some(true)
    }

    /// Whether the call, given `args`, puts its thread under a seccomp
    /// filter ([`Effect::Seccomp`]).
    pub fn installs_seccomp_filter(&self, args: &[u64; 6]) -> bool {
        match self.effect {
            Effect::Seccomp(ops) => ops.contains(&args[0]),
            Effect::Prctl => args[0] == PR_SET_SECCOMP,
            _ => false,
        }
    }

    /// Index of the first parameter of kind `kind`.
    pub fn param_of(&self, kind: Kind) -> Option<usize> {
        self.params().iter().position(|p| p.kind == kind)
    }
}

/// The byte range of one positional read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PositionalIo {
    /// The descriptor, as the traced process numbered it.
    pub fd: i32,
    /// A write (`pwrite64`) rather than a read.
    pub write: bool,
    /// First byte offset.
    pub start: u64,
    /// One past the last byte offset.
    pub end: u64,
}

impl PositionalIo {
    /// True when the two calls give the same results and leave the same
    /// file contents in either order: two reads, or two writes to
    /// disjoint ranges. A read and a write never commute here, since a
    /// write beyond the end of the file changes what a read of another
    /// range returns.
    pub fn commutes_with(&self, other: &PositionalIo) -> bool {
        match (self.write, other.write) {
            (false, false) => true,
            (true, true) => self.end <= other.start || other.end <= self.start,
            _ => false,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Kind::Int => f.write_str("int"),
            Kind::UInt => f.write_str("uint"),
            Kind::Hex => f.write_str("hex"),
            Kind::Ptr => f.write_str("ptr"),
            Kind::Mapped { len } => write!(f, "mapped[arg{len}]"),
            Kind::Fd => f.write_str("fd"),
            Kind::DirFd => f.write_str("dirfd"),
            Kind::Pid => f.write_str("pid"),
            Kind::Id => f.write_str("id"),
            Kind::Signal => f.write_str("signal"),
            Kind::Offset => f.write_str("offset"),
            Kind::Size => f.write_str("size"),
            Kind::Mode => f.write_str("mode"),
            Kind::CreateMode => f.write_str("createmode"),
            Kind::Dev { mode } => write!(f, "dev[arg{mode}]"),
            Kind::Flags(set) => write!(f, "flags:{}", set.name()),
            Kind::Path => f.write_str("path"),
            Kind::Str => f.write_str("str"),
            Kind::StrArray => f.write_str("strarray"),
            Kind::Buf { dir, len } => write!(f, "{}[{}]", dir, len),
            Kind::Struct { ty, dir, len } => write!(f, "{}:{:?}[{}]", dir, ty, len),
            Kind::IoVec { dir, count } => write!(f, "{}:iovec[arg{}]", dir, count),
            Kind::MsgHdr { dir } => write!(f, "{}:msghdr", dir),
            Kind::IoCbs { count } => write!(f, "in:iocb[arg{}]", count),
            Kind::IoEvents => f.write_str("out:io_event[ret]"),
            Kind::UringSubmit => f.write_str("in:sqe[arg1]"),
            Kind::UringComplete => f.write_str("out:cqe"),
        }
    }
}

impl fmt::Display for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dir::In => "in",
            Dir::Out => "out",
            Dir::InOut => "inout",
        })
    }
}

impl fmt::Display for Len {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Len::Arg(i) => write!(f, "arg{i}"),
            Len::Ret => f.write_str("ret"),
            Len::Fixed(n) => write!(f, "{n}"),
            Len::ArgPtr(i) => write!(f, "*arg{i}"),
            Len::ArgTimes(i, size) => write!(f, "arg{i}*{size}"),
        }
    }
}

impl fmt::Display for Ret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Ret::Int => "int",
            Ret::Fd => "fd",
            Ret::Size => "size",
            Ret::Offset => "offset",
            Ret::Addr => "addr",
            Ret::Pid => "pid",
            Ret::Hex => "hex",
            Ret::None => "noreturn",
        })
    }
}

impl fmt::Display for Replay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Replay::Execute => "execute",
            Replay::Emulate => "emulate",
            Replay::Simulate => "simulate",
            Replay::Ignore => "ignore",
        })
    }
}

/// The signature line of a call, e.g.
/// `read(fd: fd, buf: out[ret], count: size) -> size [execute]`.
///
/// Traces embed these lines so that a trace describes its own calls.
impl fmt::Display for Syscall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.name)?;
        match self.params {
            None => f.write_str("...")?,
            Some(params) => {
                for (i, p) in params.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {}", p.name, p.kind)?;
                }
            }
        }
        write!(f, ") -> {} [{}]", self.ret, self.replay)
    }
}

/// Every syscall the catalogue knows, sorted by number.
pub fn all() -> &'static [Syscall] {
    table::TABLE
}

/// The first pseudo-call number: above every real x86-64 system call
/// (see [`pseudo_calls`]).
pub const PSEUDO_BASE: u32 = 1024;

/// `mapped_at_exit(addr, length)`: the bytes a shared writable file
/// mapping held when its process exited, was killed by a signal, or
/// called `execve` with it still mapped: stores that reach the file with
/// no system call.
pub const MAPPED_AT_EXIT: u32 = PSEUDO_BASE;

/// The pseudo-calls: events the kernel performs without a system call that
/// recorders write as calls, numbered from [`PSEUDO_BASE`].
pub fn pseudo_calls() -> &'static [Syscall] {
    table::PSEUDO
}

/// The row for syscall number `nr` (or pseudo-call), if the catalogue
/// knows it.
pub fn by_nr(nr: u32) -> Option<&'static Syscall> {
    if nr >= PSEUDO_BASE {
        return table::PSEUDO.iter().find(|s| s.nr == nr);
    }
    static INDEX: OnceLock<Vec<u16>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let max = table::TABLE.iter().map(|s| s.nr).max().unwrap_or(0) as usize;
        let mut index = vec![u16::MAX; max + 1];
        for (i, s) in table::TABLE.iter().enumerate() {
            index[s.nr as usize] = i as u16;
        }
        index
    });
    match index.get(nr as usize) {
        Some(&i) if i != u16::MAX => Some(&table::TABLE[i as usize]),
        _ => None,
    }
}

/// `FICLONE`, the `ioctl` request that makes one file share another's
/// bytes.
pub const FICLONE: u64 = 0x4004_9409;

/// `FIOCLEX` and `FIONCLEX`, the `ioctl` requests that set and clear a
/// descriptor's close-on-exec flag (Python's `os.set_inheritable`).
pub const FIOCLEX: u64 = 0x5451;
/// See [`FIOCLEX`].
pub const FIONCLEX: u64 = 0x5450;

/// `TIOCGPTPEER`, the `ioctl` request that opens a pseudo-terminal's
/// other end and returns a new descriptor.
pub const TIOCGPTPEER: u64 = 0x5441;

/// The row for one call with arguments `args`: for an `ioctl` request or
/// an `fcntl` command the catalogue knows, that command's row (its
/// arguments shown and replayed as what they are), else [`by_nr`]'s row.
/// Whatever shows, replays or analyses a call asks this; the recorders may
/// ask [`by_nr`], since command rows capture nothing more.
pub fn by_call(nr: u32, args: &[u64; 6]) -> Option<&'static Syscall> {
    // The kernel takes the command as a 32-bit `unsigned int`.
    let command = u64::from(args[1] as u32);
    table::COMMANDS
        .iter()
        .find(|(cmd, row)| row.nr == nr && *cmd == command)
        .map(|(_, row)| row)
        .or_else(|| by_nr(nr))
}

/// The rows of the `ioctl` requests and `fcntl` commands the catalogue
/// knows, as `(command, row)`.
pub fn command_rows() -> &'static [(u64, Syscall)] {
    table::COMMANDS
}

/// The row for the syscall called `name`, if the catalogue knows it.
pub fn by_name(name: &str) -> Option<&'static Syscall> {
    table::TABLE
        .iter()
        .chain(table::PSEUDO)
        .find(|s| s.name == name)
}

/// The display name of syscall `nr`: its catalogue name, or `syscall_<nr>`
/// for numbers the catalogue does not know.
pub fn name_of(nr: u32) -> std::borrow::Cow<'static, str> {
    match by_nr(nr) {
        Some(s) => std::borrow::Cow::Borrowed(s.name),
        None => std::borrow::Cow::Owned(format!("syscall_{nr}")),
    }
}
