//! The constant tables behind [`FlagSet`](super::FlagSet): x86_64 Linux
//! values. Within a bit table, multi-bit names come before the single bits
//! they contain (`O_SYNC` before `O_DSYNC`), so decoding prefers them.

use super::{FlagSet, FlagTable};

/// The table for `set`.
pub(super) fn table(set: FlagSet) -> &'static FlagTable {
    match set {
        FlagSet::Open => &OPEN,
        FlagSet::At => &AT,
        FlagSet::Prot => &PROT,
        FlagSet::Map => &MAP,
        FlagSet::Whence => &WHENCE,
        FlagSet::Clone => &CLONE,
        FlagSet::Clone3 => &CLONE3,
        FlagSet::Fcntl => &FCNTL,
        FlagSet::Flock => &FLOCK,
        FlagSet::Falloc => &FALLOC,
        FlagSet::Rename => &RENAME,
        FlagSet::Xattr => &XATTR,
        FlagSet::Msg => &MSG,
        FlagSet::AddressFamily => &AF,
        FlagSet::SockType => &SOCK_TYPE,
        FlagSet::Access => &ACCESS,
        FlagSet::Msync => &MSYNC,
        FlagSet::Mremap => &MREMAP,
        FlagSet::SyncFileRange => &SYNC_FILE_RANGE,
        FlagSet::Fadvise => &FADVISE,
        FlagSet::Madvise => &MADVISE,
        FlagSet::Wait => &WAIT,
        FlagSet::Cloexec => &CLOEXEC,
        FlagSet::StatxMask => &STATX_MASK,
        FlagSet::Rwf => &RWF,
        FlagSet::Memfd => &MEMFD,
        FlagSet::Splice => &SPLICE,
        FlagSet::CloseRange => &CLOSE_RANGE,
        FlagSet::Resolve => &RESOLVE,
        FlagSet::Ioctl => &IOCTL,
        FlagSet::UringRegister => &URING_REGISTER,
        FlagSet::Fanotify => &FANOTIFY,
        FlagSet::PerfEvent => &PERF_EVENT,
        FlagSet::Fsopen => &FSOPEN,
        FlagSet::MqOpen => &MQ_OPEN,
        FlagSet::OpenTree => &OPEN_TREE,
        FlagSet::Fsmount => &FSMOUNT,
        FlagSet::Fspick => &FSPICK,
        FlagSet::Landlock => &LANDLOCK,
        FlagSet::FdFlags => &FD_FLAGS,
        FlagSet::StatusFlags => &STATUS_FLAGS,
    }
}

const fn bits(name: &'static str, entries: &'static [(u64, &'static str)]) -> FlagTable {
    FlagTable {
        name,
        enumerated: false,
        low: None,
        entries,
    }
}

const fn values(name: &'static str, entries: &'static [(u64, &'static str)]) -> FlagTable {
    FlagTable {
        name,
        enumerated: true,
        low: None,
        entries,
    }
}

/// `O_ACCMODE`'s values, shared by `open` and `mq_open`.
const ACCESS_MODES: &[(u64, &str)] = &[(0, "O_RDONLY"), (1, "O_WRONLY"), (2, "O_RDWR")];

static OPEN: FlagTable = FlagTable {
    name: "open",
    enumerated: false,
    low: Some((0o3, ACCESS_MODES)),
    entries: &[
        (0o100, "O_CREAT"),
        (0o200, "O_EXCL"),
        (0o400, "O_NOCTTY"),
        (0o1000, "O_TRUNC"),
        (0o2000, "O_APPEND"),
        (0o4000, "O_NONBLOCK"),
        (0o4010000, "O_SYNC"),
        (0o10000, "O_DSYNC"),
        (0o20000, "O_ASYNC"),
        (0o40000, "O_DIRECT"),
        (0o100000, "O_LARGEFILE"),
        (0o20200000, "O_TMPFILE"),
        (0o200000, "O_DIRECTORY"),
        (0o400000, "O_NOFOLLOW"),
        (0o1000000, "O_NOATIME"),
        (0o2000000, "O_CLOEXEC"),
        (0o10000000, "O_PATH"),
    ],
};

// AT_EACCESS (faccessat) and AT_REMOVEDIR (unlinkat) share 0x200; the
// table names it after unlinkat, the more common user.
static AT: FlagTable = bits(
    "at",
    &[
        (0x100, "AT_SYMLINK_NOFOLLOW"),
        (0x200, "AT_REMOVEDIR"),
        (0x400, "AT_SYMLINK_FOLLOW"),
        (0x800, "AT_NO_AUTOMOUNT"),
        (0x1000, "AT_EMPTY_PATH"),
        (0x2000, "AT_STATX_FORCE_SYNC"),
        (0x4000, "AT_STATX_DONT_SYNC"),
        (0x8000, "AT_RECURSIVE"),
    ],
);

static PROT: FlagTable = bits(
    "prot",
    &[
        (1, "PROT_READ"),
        (2, "PROT_WRITE"),
        (4, "PROT_EXEC"),
        (0x1000000, "PROT_GROWSDOWN"),
        (0x2000000, "PROT_GROWSUP"),
    ],
);

static MAP: FlagTable = FlagTable {
    name: "map",
    enumerated: false,
    low: Some((
        0xf,
        &[
            (1, "MAP_SHARED"),
            (2, "MAP_PRIVATE"),
            (3, "MAP_SHARED_VALIDATE"),
        ],
    )),
    entries: &[
        (0x10, "MAP_FIXED"),
        (0x20, "MAP_ANONYMOUS"),
        (0x40, "MAP_32BIT"),
        (0x100, "MAP_GROWSDOWN"),
        (0x800, "MAP_DENYWRITE"),
        (0x1000, "MAP_EXECUTABLE"),
        (0x2000, "MAP_LOCKED"),
        (0x4000, "MAP_NORESERVE"),
        (0x8000, "MAP_POPULATE"),
        (0x10000, "MAP_NONBLOCK"),
        (0x20000, "MAP_STACK"),
        (0x40000, "MAP_HUGETLB"),
        (0x80000, "MAP_SYNC"),
        (0x100000, "MAP_FIXED_NOREPLACE"),
    ],
};

static WHENCE: FlagTable = values(
    "whence",
    &[
        (0, "SEEK_SET"),
        (1, "SEEK_CUR"),
        (2, "SEEK_END"),
        (3, "SEEK_DATA"),
        (4, "SEEK_HOLE"),
    ],
);

/// The `CLONE_*` bits clone and clone3 share.
const CLONE_BITS: [(u64, &str); 24] = [
    (0x100, "CLONE_VM"),
    (0x200, "CLONE_FS"),
    (0x400, "CLONE_FILES"),
    (0x800, "CLONE_SIGHAND"),
    (0x1000, "CLONE_PIDFD"),
    (0x2000, "CLONE_PTRACE"),
    (0x4000, "CLONE_VFORK"),
    (0x8000, "CLONE_PARENT"),
    (0x10000, "CLONE_THREAD"),
    (0x20000, "CLONE_NEWNS"),
    (0x40000, "CLONE_SYSVSEM"),
    (0x80000, "CLONE_SETTLS"),
    (0x100000, "CLONE_PARENT_SETTID"),
    (0x200000, "CLONE_CHILD_CLEARTID"),
    (0x400000, "CLONE_DETACHED"),
    (0x800000, "CLONE_UNTRACED"),
    (0x1000000, "CLONE_CHILD_SETTID"),
    (0x2000000, "CLONE_NEWCGROUP"),
    (0x4000000, "CLONE_NEWUTS"),
    (0x8000000, "CLONE_NEWIPC"),
    (0x10000000, "CLONE_NEWUSER"),
    (0x20000000, "CLONE_NEWPID"),
    (0x40000000, "CLONE_NEWNET"),
    (0x80000000, "CLONE_IO"),
];

/// The low byte of clone flags is the signal sent to the parent on exit.
static CLONE: FlagTable = FlagTable {
    name: "clone",
    enumerated: false,
    low: Some((0xff, &[(0, "0"), (17, "SIGCHLD")])),
    entries: &CLONE_BITS,
};

/// clone3's flags: [`CLONE_BITS`], `CLONE_NEWTIME` in the byte clone
/// keeps for the exit signal, and the bits above 32.
const CLONE3_BITS: [(u64, &str); 27] = {
    let mut all = [(0x80, "CLONE_NEWTIME"); 27];
    let mut i = 0;
    while i < CLONE_BITS.len() {
        all[i + 1] = CLONE_BITS[i];
        i += 1;
    }
    all[25] = (0x1_0000_0000, "CLONE_CLEAR_SIGHAND");
    all[26] = (0x2_0000_0000, "CLONE_INTO_CGROUP");
    all
};

/// See [`CLONE3_BITS`].
static CLONE3: FlagTable = bits("clone3", &CLONE3_BITS);

static FCNTL: FlagTable = values(
    "fcntl",
    &[
        (0, "F_DUPFD"),
        (1, "F_GETFD"),
        (2, "F_SETFD"),
        (3, "F_GETFL"),
        (4, "F_SETFL"),
        (5, "F_GETLK"),
        (6, "F_SETLK"),
        (7, "F_SETLKW"),
        (8, "F_SETOWN"),
        (9, "F_GETOWN"),
        (10, "F_SETSIG"),
        (11, "F_GETSIG"),
        (15, "F_SETOWN_EX"),
        (16, "F_GETOWN_EX"),
        (36, "F_OFD_GETLK"),
        (37, "F_OFD_SETLK"),
        (38, "F_OFD_SETLKW"),
        (1024, "F_SETLEASE"),
        (1025, "F_GETLEASE"),
        (1026, "F_NOTIFY"),
        (1030, "F_DUPFD_CLOEXEC"),
        (1031, "F_SETPIPE_SZ"),
        (1032, "F_GETPIPE_SZ"),
        (1033, "F_ADD_SEALS"),
        (1034, "F_GET_SEALS"),
        (1035, "F_GET_RW_HINT"),
        (1036, "F_SET_RW_HINT"),
    ],
);

static FLOCK: FlagTable = bits(
    "flock",
    &[
        (1, "LOCK_SH"),
        (2, "LOCK_EX"),
        (4, "LOCK_NB"),
        (8, "LOCK_UN"),
    ],
);

static FALLOC: FlagTable = bits(
    "falloc",
    &[
        (0x01, "FALLOC_FL_KEEP_SIZE"),
        (0x02, "FALLOC_FL_PUNCH_HOLE"),
        (0x04, "FALLOC_FL_NO_HIDE_STALE"),
        (0x08, "FALLOC_FL_COLLAPSE_RANGE"),
        (0x10, "FALLOC_FL_ZERO_RANGE"),
        (0x20, "FALLOC_FL_INSERT_RANGE"),
        (0x40, "FALLOC_FL_UNSHARE_RANGE"),
    ],
);

static RENAME: FlagTable = bits(
    "rename",
    &[
        (1, "RENAME_NOREPLACE"),
        (2, "RENAME_EXCHANGE"),
        (4, "RENAME_WHITEOUT"),
    ],
);

static XATTR: FlagTable = bits("xattr", &[(1, "XATTR_CREATE"), (2, "XATTR_REPLACE")]);

static MSG: FlagTable = bits(
    "msg",
    &[
        (0x1, "MSG_OOB"),
        (0x2, "MSG_PEEK"),
        (0x4, "MSG_DONTROUTE"),
        (0x8, "MSG_CTRUNC"),
        (0x10, "MSG_PROXY"),
        (0x20, "MSG_TRUNC"),
        (0x40, "MSG_DONTWAIT"),
        (0x80, "MSG_EOR"),
        (0x100, "MSG_WAITALL"),
        (0x200, "MSG_FIN"),
        (0x400, "MSG_SYN"),
        (0x800, "MSG_CONFIRM"),
        (0x1000, "MSG_RST"),
        (0x2000, "MSG_ERRQUEUE"),
        (0x4000, "MSG_NOSIGNAL"),
        (0x8000, "MSG_MORE"),
        (0x10000, "MSG_WAITFORONE"),
        (0x4000000, "MSG_ZEROCOPY"),
        (0x20000000, "MSG_FASTOPEN"),
        (0x40000000, "MSG_CMSG_CLOEXEC"),
    ],
);

static AF: FlagTable = values(
    "af",
    &[
        (0, "AF_UNSPEC"),
        (1, "AF_UNIX"),
        (2, "AF_INET"),
        (10, "AF_INET6"),
        (15, "AF_KEY"),
        (16, "AF_NETLINK"),
        (17, "AF_PACKET"),
        (38, "AF_ALG"),
        (40, "AF_VSOCK"),
        (44, "AF_XDP"),
    ],
);

static SOCK_TYPE: FlagTable = FlagTable {
    name: "socktype",
    enumerated: false,
    low: Some((
        0xf,
        &[
            (0, "0"),
            (1, "SOCK_STREAM"),
            (2, "SOCK_DGRAM"),
            (3, "SOCK_RAW"),
            (4, "SOCK_RDM"),
            (5, "SOCK_SEQPACKET"),
            (6, "SOCK_DCCP"),
            (10, "SOCK_PACKET"),
        ],
    )),
    entries: &[(0o4000, "SOCK_NONBLOCK"), (0o2000000, "SOCK_CLOEXEC")],
};

/// `F_OK` is zero: a zero mode decodes as `F_OK`.
static ACCESS: FlagTable = bits(
    "access",
    &[(0, "F_OK"), (4, "R_OK"), (2, "W_OK"), (1, "X_OK")],
);

static MSYNC: FlagTable = bits(
    "msync",
    &[(1, "MS_ASYNC"), (2, "MS_INVALIDATE"), (4, "MS_SYNC")],
);

static MREMAP: FlagTable = bits(
    "mremap",
    &[
        (1, "MREMAP_MAYMOVE"),
        (2, "MREMAP_FIXED"),
        (4, "MREMAP_DONTUNMAP"),
    ],
);

static SYNC_FILE_RANGE: FlagTable = bits(
    "sync_file_range",
    &[
        (1, "SYNC_FILE_RANGE_WAIT_BEFORE"),
        (2, "SYNC_FILE_RANGE_WRITE"),
        (4, "SYNC_FILE_RANGE_WAIT_AFTER"),
    ],
);

static FADVISE: FlagTable = values(
    "fadvise",
    &[
        (0, "POSIX_FADV_NORMAL"),
        (1, "POSIX_FADV_RANDOM"),
        (2, "POSIX_FADV_SEQUENTIAL"),
        (3, "POSIX_FADV_WILLNEED"),
        (4, "POSIX_FADV_DONTNEED"),
        (5, "POSIX_FADV_NOREUSE"),
    ],
);

static URING_REGISTER: FlagTable = values(
    "uring_register",
    &[
        (0, "IORING_REGISTER_BUFFERS"),
        (1, "IORING_UNREGISTER_BUFFERS"),
        (2, "IORING_REGISTER_FILES"),
        (3, "IORING_UNREGISTER_FILES"),
        (4, "IORING_REGISTER_EVENTFD"),
        (5, "IORING_UNREGISTER_EVENTFD"),
        (6, "IORING_REGISTER_FILES_UPDATE"),
        (7, "IORING_REGISTER_EVENTFD_ASYNC"),
        (8, "IORING_REGISTER_PROBE"),
        (9, "IORING_REGISTER_PERSONALITY"),
        (10, "IORING_UNREGISTER_PERSONALITY"),
        (11, "IORING_REGISTER_RESTRICTIONS"),
        (12, "IORING_REGISTER_ENABLE_RINGS"),
        (13, "IORING_REGISTER_FILES2"),
        (14, "IORING_REGISTER_FILES_UPDATE2"),
        (15, "IORING_REGISTER_BUFFERS2"),
        (16, "IORING_REGISTER_BUFFERS_UPDATE"),
        (17, "IORING_REGISTER_IOWQ_AFF"),
        (18, "IORING_UNREGISTER_IOWQ_AFF"),
        (19, "IORING_REGISTER_IOWQ_MAX_WORKERS"),
        (20, "IORING_REGISTER_RING_FDS"),
        (21, "IORING_UNREGISTER_RING_FDS"),
        (22, "IORING_REGISTER_PBUF_RING"),
        (23, "IORING_UNREGISTER_PBUF_RING"),
        (24, "IORING_REGISTER_SYNC_CANCEL"),
        (25, "IORING_REGISTER_FILE_ALLOC_RANGE"),
    ],
);

static MADVISE: FlagTable = values(
    "madvise",
    &[
        (0, "MADV_NORMAL"),
        (1, "MADV_RANDOM"),
        (2, "MADV_SEQUENTIAL"),
        (3, "MADV_WILLNEED"),
        (4, "MADV_DONTNEED"),
        (8, "MADV_FREE"),
        (9, "MADV_REMOVE"),
        (10, "MADV_DONTFORK"),
        (11, "MADV_DOFORK"),
        (12, "MADV_MERGEABLE"),
        (13, "MADV_UNMERGEABLE"),
        (14, "MADV_HUGEPAGE"),
        (15, "MADV_NOHUGEPAGE"),
        (16, "MADV_DONTDUMP"),
        (17, "MADV_DODUMP"),
        (18, "MADV_WIPEONFORK"),
        (19, "MADV_KEEPONFORK"),
        (20, "MADV_COLD"),
        (21, "MADV_PAGEOUT"),
        (22, "MADV_POPULATE_READ"),
        (23, "MADV_POPULATE_WRITE"),
        (24, "MADV_DONTNEED_LOCKED"),
        (25, "MADV_COLLAPSE"),
        (100, "MADV_HWPOISON"),
    ],
);

static WAIT: FlagTable = bits(
    "wait",
    &[
        (1, "WNOHANG"),
        (2, "WUNTRACED"),
        (4, "WEXITED"),
        (8, "WCONTINUED"),
        (0x1000000, "WNOWAIT"),
        (0x20000000, "__WNOTHREAD"),
        (0x40000000, "__WALL"),
        (0x80000000, "__WCLONE"),
    ],
);

static FD_FLAGS: FlagTable = bits("fd_flags", &[(1, "FD_CLOEXEC")]);

static STATUS_FLAGS: FlagTable = bits(
    "status_flags",
    &[
        (0o2000, "O_APPEND"),
        (0o4000, "O_NONBLOCK"),
        (0o20000, "O_ASYNC"),
        (0o40000, "O_DIRECT"),
        (0o1000000, "O_NOATIME"),
    ],
);

static CLOEXEC: FlagTable = bits(
    "cloexec",
    &[
        (0o4000, "O_NONBLOCK"),
        (0o40000, "O_DIRECT"),
        (0o2000000, "O_CLOEXEC"),
    ],
);

static STATX_MASK: FlagTable = bits(
    "statx",
    &[
        (0x7ff, "STATX_BASIC_STATS"),
        (0x1, "STATX_TYPE"),
        (0x2, "STATX_MODE"),
        (0x4, "STATX_NLINK"),
        (0x8, "STATX_UID"),
        (0x10, "STATX_GID"),
        (0x20, "STATX_ATIME"),
        (0x40, "STATX_MTIME"),
        (0x80, "STATX_CTIME"),
        (0x100, "STATX_INO"),
        (0x200, "STATX_SIZE"),
        (0x400, "STATX_BLOCKS"),
        (0x800, "STATX_BTIME"),
        (0x1000, "STATX_MNT_ID"),
        (0x2000, "STATX_DIOALIGN"),
        (0x4000, "STATX_MNT_ID_UNIQUE"),
        (0x8000, "STATX_SUBVOL"),
        (0x10000, "STATX_WRITE_ATOMIC"),
    ],
);

static RWF: FlagTable = bits(
    "rwf",
    &[
        (1, "RWF_HIPRI"),
        (2, "RWF_DSYNC"),
        (4, "RWF_SYNC"),
        (8, "RWF_NOWAIT"),
        (0x10, "RWF_APPEND"),
    ],
);

static FANOTIFY: FlagTable = bits(
    "fanotify",
    &[
        (0x1, "FAN_CLOEXEC"),
        (0x2, "FAN_NONBLOCK"),
        (0x4, "FAN_CLASS_CONTENT"),
        (0x8, "FAN_CLASS_PRE_CONTENT"),
        (0x10, "FAN_UNLIMITED_QUEUE"),
        (0x20, "FAN_UNLIMITED_MARKS"),
        (0x40, "FAN_ENABLE_AUDIT"),
        (0x80, "FAN_REPORT_PIDFD"),
        (0x100, "FAN_REPORT_TID"),
        (0x200, "FAN_REPORT_FID"),
        (0x400, "FAN_REPORT_DIR_FID"),
        (0x800, "FAN_REPORT_NAME"),
    ],
);

static PERF_EVENT: FlagTable = bits(
    "perf_event",
    &[
        (1, "PERF_FLAG_FD_NO_GROUP"),
        (2, "PERF_FLAG_FD_OUTPUT"),
        (4, "PERF_FLAG_PID_CGROUP"),
        (8, "PERF_FLAG_FD_CLOEXEC"),
    ],
);

static FSOPEN: FlagTable = bits("fsopen", &[(1, "FSOPEN_CLOEXEC")]);

static OPEN_TREE: FlagTable = bits(
    "open_tree",
    &[
        (1, "OPEN_TREE_CLONE"),
        (0o2000000, "OPEN_TREE_CLOEXEC"),
        (0x100, "AT_SYMLINK_NOFOLLOW"),
        (0x800, "AT_NO_AUTOMOUNT"),
        (0x1000, "AT_EMPTY_PATH"),
        (0x8000, "AT_RECURSIVE"),
    ],
);

static FSMOUNT: FlagTable = bits("fsmount", &[(1, "FSMOUNT_CLOEXEC")]);

static FSPICK: FlagTable = bits(
    "fspick",
    &[
        (1, "FSPICK_CLOEXEC"),
        (2, "FSPICK_SYMLINK_NOFOLLOW"),
        (4, "FSPICK_NO_AUTOMOUNT"),
        (8, "FSPICK_EMPTY_PATH"),
    ],
);

static LANDLOCK: FlagTable = bits(
    "landlock",
    &[
        (1, "LANDLOCK_CREATE_RULESET_VERSION"),
        (2, "LANDLOCK_CREATE_RULESET_ERRATA"),
    ],
);

static MQ_OPEN: FlagTable = FlagTable {
    name: "mq_open",
    enumerated: false,
    low: Some((0o3, ACCESS_MODES)),
    entries: &[
        (0o100, "O_CREAT"),
        (0o200, "O_EXCL"),
        (0o4000, "O_NONBLOCK"),
        (0o2000000, "O_CLOEXEC"),
    ],
};

static MEMFD: FlagTable = bits(
    "memfd",
    &[
        (1, "MFD_CLOEXEC"),
        (2, "MFD_ALLOW_SEALING"),
        (4, "MFD_HUGETLB"),
        (8, "MFD_NOEXEC_SEAL"),
        (0x10, "MFD_EXEC"),
    ],
);

static SPLICE: FlagTable = bits(
    "splice",
    &[
        (1, "SPLICE_F_MOVE"),
        (2, "SPLICE_F_NONBLOCK"),
        (4, "SPLICE_F_MORE"),
        (8, "SPLICE_F_GIFT"),
    ],
);

static CLOSE_RANGE: FlagTable = bits(
    "close_range",
    &[(2, "CLOSE_RANGE_UNSHARE"), (4, "CLOSE_RANGE_CLOEXEC")],
);

static RESOLVE: FlagTable = bits(
    "resolve",
    &[
        (1, "RESOLVE_NO_XDEV"),
        (2, "RESOLVE_NO_MAGICLINKS"),
        (4, "RESOLVE_NO_SYMLINKS"),
        (8, "RESOLVE_BENEATH"),
        (0x10, "RESOLVE_IN_ROOT"),
        (0x20, "RESOLVE_CACHED"),
    ],
);

static IOCTL: FlagTable = values(
    "ioctl",
    &[
        (0x5401, "TCGETS"),
        (0x5402, "TCSETS"),
        (0x5403, "TCSETSW"),
        (0x5404, "TCSETSF"),
        (0x540e, "TIOCSCTTY"),
        (0x540f, "TIOCGPGRP"),
        (0x5410, "TIOCSPGRP"),
        (0x5413, "TIOCGWINSZ"),
        (0x5414, "TIOCSWINSZ"),
        (0x541b, "FIONREAD"),
        (0x5421, "FIONBIO"),
        (0x80045430, "TIOCGPTN"),
        (0x40045431, "TIOCSPTLCK"),
        (0x5441, "TIOCGPTPEER"),
        (0x5450, "FIONCLEX"),
        (0x5451, "FIOCLEX"),
        (0x5452, "FIOASYNC"),
        (0x80086601, "FS_IOC_GETFLAGS"),
        (0x40086602, "FS_IOC_SETFLAGS"),
        (0x40049409, "FICLONE"),
        (0x4020940d, "FICLONERANGE"),
        (0xc0189436, "FIDEDUPERANGE"),
        (0xc020660b, "FS_IOC_FIEMAP"),
    ],
);
