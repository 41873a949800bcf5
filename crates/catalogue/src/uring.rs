//! How io_uring's requests and completions are captured, for the
//! recorders that write them and everyone who reads them.
//!
//! io_uring keeps its requests (submission queue entries, SQEs) and
//! completions (CQEs) in rings the program shares with the kernel; no
//! call argument points at them. Recorders learn each ring's layout from
//! `io_uring_setup`'s `struct io_uring_params` and where it is mapped
//! from the `mmap` calls on the ring's descriptor, then read the rings at
//! `io_uring_enter`:
//!
//! - at entry ([`Kind::UringSubmit`], the `to_submit` argument): capture
//!   `elem` 0 holds the SQEs the kernel is about to consume, 64 bytes
//!   each ([`SQE_LEN`]; the second half of a 128-byte SQE is left out),
//!   in submission order. Request `i` then owns the elements from
//!   `(i + 1) << SHIFT`, numbered as in [`aio::elem`]: at offsets 1, 2,
//!   ... the data of a write (one buffer, or one per iovec element), and
//!   a `READV`'s element lengths with no bytes, so replay can submit it.
//! - at exit ([`Kind::UringComplete`], the `min_complete` argument):
//!   `elem` 0 holds every CQE the kernel posted since the recorder last
//!   looked at this ring, 16 bytes each ([`CQE_LEN`]), whether or not the
//!   program has consumed it yet. Its `len` counts all of them: when the
//!   ring wrapped over some before they were read, the capture is
//!   `Truncated`. Completion `i`'s read data is at [`aio::elem`]`(i, 1 +
//!   j)`, captured for completions the program had not consumed yet (it
//!   may reuse the buffer of one it has).
//!
//! A ring polled by a kernel thread (`IORING_SETUP_SQPOLL`) consumes its
//! SQEs with no call; recorders count those rings and their requests go
//! unseen.
//!
//! [`Kind::UringSubmit`]: crate::Kind::UringSubmit
//! [`Kind::UringComplete`]: crate::Kind::UringComplete

pub use crate::aio::{elem, IOV_MAX, SHIFT};

/// Bytes of an SQE captured (`struct io_uring_sqe`).
pub const SQE_LEN: usize = 64;
/// Bytes of a CQE captured (`struct io_uring_cqe` without `big_cqe`).
pub const CQE_LEN: usize = 16;
/// Size of `struct io_uring_params`.
pub const PARAMS_LEN: usize = 120;
/// Most requests or completions captured per call.
pub const MAX: u64 = 1 << 16;

/// `mmap` offset of the SQ ring (`IORING_OFF_SQ_RING`).
pub const OFF_SQ_RING: u64 = 0;
/// `mmap` offset of the CQ ring (`IORING_OFF_CQ_RING`).
pub const OFF_CQ_RING: u64 = 0x800_0000;
/// `mmap` offset of the SQE array (`IORING_OFF_SQES`).
pub const OFF_SQES: u64 = 0x1000_0000;

/// `IORING_SETUP_SQPOLL`: a kernel thread consumes the SQ ring.
pub const SETUP_SQPOLL: u32 = 1 << 1;
/// `IORING_SETUP_SQE128`: 128-byte SQEs.
pub const SETUP_SQE128: u32 = 1 << 10;
/// `IORING_SETUP_CQE32`: 32-byte CQEs.
pub const SETUP_CQE32: u32 = 1 << 11;
/// `IORING_SETUP_NO_MMAP`: the program supplies the rings' memory.
pub const SETUP_NO_MMAP: u32 = 1 << 14;
/// `IORING_SETUP_NO_SQARRAY`: SQEs are consumed in ring order, with no
/// index array.
pub const SETUP_NO_SQARRAY: u32 = 1 << 16;
/// `IORING_FEAT_SINGLE_MMAP`: one mapping holds both rings.
pub const FEAT_SINGLE_MMAP: u32 = 1;
/// `IORING_ENTER_REGISTERED_RING`: the descriptor argument is an index
/// into the registered ring descriptors.
pub const ENTER_REGISTERED_RING: u64 = 1 << 4;

/// `IORING_REGISTER_FILES`: `io_uring_register`'s array holds the files
/// requests flagged [`SQE_FIXED_FILE`] name by index.
pub const REGISTER_FILES: u64 = 2;
/// `IORING_UNREGISTER_FILES`: the registered files are gone.
pub const UNREGISTER_FILES: u64 = 3;
/// `IORING_REGISTER_FILES_UPDATE`: replaces some registered files (its
/// argument is a `struct io_uring_files_update`, not captured).
pub const REGISTER_FILES_UPDATE: u64 = 6;
/// `IORING_REGISTER_FILES2`: registers files from a `struct
/// io_uring_rsrc_register` (not captured).
pub const REGISTER_FILES2: u64 = 13;
/// `IORING_REGISTER_FILES_UPDATE2`: replaces some registered files (not
/// captured).
pub const REGISTER_FILES_UPDATE2: u64 = 14;
/// `IORING_REGISTER_USE_REGISTERED_RING`, or-ed into the opcode: the
/// descriptor argument is an index into the registered ring descriptors.
pub const REGISTER_USE_REGISTERED_RING: u64 = 1 << 31;

/// `IOSQE_FIXED_FILE`: `fd` indexes the registered files.
pub const SQE_FIXED_FILE: u8 = 1;
/// `IOSQE_BUFFER_SELECT`: the kernel picks a buffer from a provided group.
pub const SQE_BUFFER_SELECT: u8 = 1 << 5;
/// `IORING_CQE_F_MORE`: the request stays in flight and will complete
/// again (multishot requests).
pub const CQE_F_MORE: u32 = 1 << 1;

/// Opcodes (`IORING_OP_*`) whose names `dump` shows, in kernel order.
const OP_NAMES: &[&str] = &[
    "NOP",
    "READV",
    "WRITEV",
    "FSYNC",
    "READ_FIXED",
    "WRITE_FIXED",
    "POLL_ADD",
    "POLL_REMOVE",
    "SYNC_FILE_RANGE",
    "SENDMSG",
    "RECVMSG",
    "TIMEOUT",
    "TIMEOUT_REMOVE",
    "ACCEPT",
    "ASYNC_CANCEL",
    "LINK_TIMEOUT",
    "CONNECT",
    "FALLOCATE",
    "OPENAT",
    "CLOSE",
    "FILES_UPDATE",
    "STATX",
    "READ",
    "WRITE",
    "FADVISE",
    "MADVISE",
    "SEND",
    "RECV",
    "OPENAT2",
    "EPOLL_CTL",
    "SPLICE",
    "PROVIDE_BUFFERS",
    "REMOVE_BUFFERS",
    "TEE",
    "SHUTDOWN",
    "RENAMEAT",
    "UNLINKAT",
    "MKDIRAT",
    "SYMLINKAT",
    "LINKAT",
    "MSG_RING",
    "FSETXATTR",
    "SETXATTR",
    "FGETXATTR",
    "GETXATTR",
    "SOCKET",
    "URING_CMD",
    "SEND_ZC",
    "SENDMSG_ZC",
];

/// `IORING_OP_NOP`.
pub const OP_NOP: u8 = 0;
/// `IORING_OP_READV`.
pub const OP_READV: u8 = 1;
/// `IORING_OP_WRITEV`.
pub const OP_WRITEV: u8 = 2;
/// `IORING_OP_FSYNC`.
pub const OP_FSYNC: u8 = 3;
/// `IORING_OP_READ_FIXED`.
pub const OP_READ_FIXED: u8 = 4;
/// `IORING_OP_WRITE_FIXED`.
pub const OP_WRITE_FIXED: u8 = 5;
/// `IORING_OP_SYNC_FILE_RANGE`.
pub const OP_SYNC_FILE_RANGE: u8 = 8;
/// `IORING_OP_FALLOCATE`.
pub const OP_FALLOCATE: u8 = 17;
/// `IORING_OP_FILES_UPDATE`: a request that replaces registered files.
pub const OP_FILES_UPDATE: u8 = 20;
/// `IORING_OP_READ`.
pub const OP_READ: u8 = 22;
/// `IORING_OP_WRITE`.
pub const OP_WRITE: u8 = 23;
/// `IORING_OP_FADVISE`.
pub const OP_FADVISE: u8 = 24;

/// Opcodes whose `fd` field names the file the request acts on (the
/// kernel's `needs_file`, io_uring/opdef.c), one bit per opcode: `READ`,
/// `WRITE`, their vectored and fixed-buffer forms, syncs, `FALLOCATE`,
/// `FADVISE`, socket I/O, `SPLICE`, `TEE`, `MSG_RING`, `F*XATTR`,
/// `URING_CMD`, `FTRUNCATE`, ... Requests with other opcodes (`NOP`,
/// timeouts, cancels, path-based `OPENAT`, `STATX`, `RENAMEAT`, ...) name
/// no open file, whatever their `fd` field holds.
const NEEDS_FILE: u64 = {
    let ops: &[u8] = &[
        1,  // READV
        2,  // WRITEV
        3,  // FSYNC
        4,  // READ_FIXED
        5,  // WRITE_FIXED
        6,  // POLL_ADD
        8,  // SYNC_FILE_RANGE
        9,  // SENDMSG
        10, // RECVMSG
        13, // ACCEPT
        16, // CONNECT
        17, // FALLOCATE
        22, // READ
        23, // WRITE
        24, // FADVISE
        26, // SEND
        27, // RECV
        30, // SPLICE
        33, // TEE
        34, // SHUTDOWN
        40, // MSG_RING
        41, // FSETXATTR
        43, // FGETXATTR
        46, // URING_CMD
        47, // SEND_ZC
        48, // SENDMSG_ZC
        49, // READ_MULTISHOT
        54, // FIXED_FD_INSTALL
        55, // FTRUNCATE
        56, // BIND
        57, // LISTEN
        58, // RECV_ZC
        59, // EPOLL_WAIT
        60, // READV_FIXED
        61, // WRITEV_FIXED
    ];
    let mut bits = 0u64;
    let mut i = 0;
    while i < ops.len() {
        bits |= 1 << ops[i];
        i += 1;
    }
    bits
};

/// The fields of a `struct io_uring_sqe` recorders and replay use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sqe {
    /// `opcode` (`IORING_OP_*`).
    pub opcode: u8,
    /// `flags` (`IOSQE_*`).
    pub flags: u8,
    /// `ioprio`.
    pub ioprio: u16,
    /// `fd`, or an index into the registered files with
    /// [`SQE_FIXED_FILE`].
    pub fd: i32,
    /// `off`: the file offset (-1: the descriptor's position).
    pub off: u64,
    /// `addr`: the buffer, or the iovec array of a vectored request.
    pub addr: u64,
    /// `len`: bytes, or iovec elements of a vectored request.
    pub len: u32,
    /// The opcode's flags (`rw_flags`, `fsync_flags`, ...).
    pub op_flags: u32,
    /// `user_data`: the program's cookie, returned in the CQE.
    pub user_data: u64,
    /// `buf_index` (fixed buffers) or `buf_group`.
    pub buf_index: u16,
}

impl Sqe {
    /// Decodes the kernel's layout, `None` if `b` is too short.
    pub fn parse(b: &[u8]) -> Option<Sqe> {
        let b = b.get(..SQE_LEN)?;
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        Some(Sqe {
            opcode: b[0],
            flags: b[1],
            ioprio: u16::from_le_bytes([b[2], b[3]]),
            fd: u32_at(4) as i32,
            off: u64_at(8),
            addr: u64_at(16),
            len: u32_at(24),
            op_flags: u32_at(28),
            user_data: u64_at(32),
            buf_index: u16::from_le_bytes([b[40], b[41]]),
        })
    }

    /// The SQEs of a capture, as many as whole ones fit.
    pub fn all(b: &[u8]) -> impl Iterator<Item = Sqe> + '_ {
        b.chunks_exact(SQE_LEN).filter_map(Sqe::parse)
    }

    /// Whether the kernel reads the request's data from memory.
    pub fn writes(&self) -> bool {
        matches!(self.opcode, OP_WRITE | OP_WRITEV | OP_WRITE_FIXED)
    }

    /// Whether the kernel fills the request's memory.
    pub fn reads(&self) -> bool {
        matches!(self.opcode, OP_READ | OP_READV | OP_READ_FIXED)
    }

    /// Whether `fd` names the file the request acts on, for those who
    /// attribute requests to files: the `fd` of a `NOP` or a timeout is
    /// whatever the program left there.
    pub fn names_file(&self) -> bool {
        self.opcode < 64 && NEEDS_FILE & (1 << self.opcode) != 0
    }

    /// Whether `addr` is an iovec array of `len` elements.
    pub fn vectored(&self) -> bool {
        matches!(self.opcode, OP_READV | OP_WRITEV)
    }

    /// The opcode's name (`IORING_OP_` left off).
    pub fn op_name(&self) -> &'static str {
        OP_NAMES
            .get(usize::from(self.opcode))
            .copied()
            .unwrap_or("?")
    }
}

/// One `struct io_uring_cqe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cqe {
    /// The request's `user_data`.
    pub user_data: u64,
    /// The request's result (bytes, or -errno).
    pub res: i32,
    /// `IORING_CQE_F_*`.
    pub flags: u32,
}

impl Cqe {
    /// The CQEs of a capture, as many as whole ones fit.
    pub fn all(b: &[u8]) -> impl Iterator<Item = Cqe> + '_ {
        b.chunks_exact(CQE_LEN).map(|c| Cqe {
            user_data: u64::from_le_bytes(c[0..8].try_into().expect("8 bytes")),
            res: i32::from_le_bytes(c[8..12].try_into().expect("4 bytes")),
            flags: u32::from_le_bytes(c[12..16].try_into().expect("4 bytes")),
        })
    }
}

/// The fields of `struct io_uring_params` (as `io_uring_setup` returns
/// it) that locate a ring's parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Params {
    /// `sq_entries`.
    pub sq_entries: u32,
    /// `cq_entries`.
    pub cq_entries: u32,
    /// `flags` (`IORING_SETUP_*`).
    pub flags: u32,
    /// `features` (`IORING_FEAT_*`).
    pub features: u32,
    /// `sq_off.head`, `tail`, `array`: offsets in the SQ ring.
    pub sq_head: u32,
    /// See `sq_head`.
    pub sq_tail: u32,
    /// See `sq_head`.
    pub sq_array: u32,
    /// `cq_off.head`, `tail`, `cqes`: offsets in the CQ ring.
    pub cq_head: u32,
    /// See `cq_head`.
    pub cq_tail: u32,
    /// See `cq_head`.
    pub cqes: u32,
}

impl Params {
    /// Decodes the kernel's layout, `None` if `b` is too short.
    pub fn parse(b: &[u8]) -> Option<Params> {
        let b = b.get(..PARAMS_LEN)?;
        let u = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        Some(Params {
            sq_entries: u(0),
            cq_entries: u(4),
            flags: u(8),
            features: u(20),
            sq_head: u(40),
            sq_tail: u(44),
            sq_array: u(64),
            cq_head: u(80),
            cq_tail: u(84),
            cqes: u(100),
        })
    }

    /// The SQ ring's index mask (its entries are a power of two).
    pub fn sq_mask(&self) -> u32 {
        self.sq_entries.wrapping_sub(1)
    }

    /// The CQ ring's index mask.
    pub fn cq_mask(&self) -> u32 {
        self.cq_entries.wrapping_sub(1)
    }

    /// Bytes of one SQE in the ring.
    pub fn sqe_size(&self) -> u64 {
        if self.flags & SETUP_SQE128 != 0 {
            128
        } else {
            64
        }
    }

    /// Bytes of one CQE in the ring.
    pub fn cqe_size(&self) -> u64 {
        if self.flags & SETUP_CQE32 != 0 {
            32
        } else {
            16
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqes_cqes_and_params_decode_from_the_kernel_layout() {
        let mut b = [0u8; SQE_LEN];
        b[0] = OP_WRITEV;
        b[1] = SQE_FIXED_FILE;
        b[4..8].copy_from_slice(&7i32.to_le_bytes());
        b[8..16].copy_from_slice(&4096u64.to_le_bytes());
        b[16..24].copy_from_slice(&0x1000u64.to_le_bytes());
        b[24..28].copy_from_slice(&3u32.to_le_bytes());
        b[32..40].copy_from_slice(&99u64.to_le_bytes());
        let s = Sqe::parse(&b).unwrap();
        assert_eq!(
            (s.fd, s.off, s.addr, s.len, s.user_data),
            (7, 4096, 0x1000, 3, 99)
        );
        assert!(s.writes() && s.vectored() && !s.reads() && s.names_file());
        let named = |opcode| Sqe { opcode, ..s }.names_file();
        assert!(named(OP_WRITE) && named(OP_READ_FIXED) && named(OP_FSYNC));
        assert!(!named(OP_NOP) && !named(11) && !named(18) && !named(OP_FILES_UPDATE));
        assert!(!named(200));
        assert_eq!(s.op_name(), "WRITEV");
        assert_eq!(Sqe::parse(&b[..63]), None);

        let mut c = [0u8; 2 * CQE_LEN];
        c[16..24].copy_from_slice(&5u64.to_le_bytes());
        c[24..28].copy_from_slice(&(-5i32).to_le_bytes());
        let cqes: Vec<Cqe> = Cqe::all(&c).collect();
        assert_eq!(cqes[1].user_data, 5);
        assert_eq!(cqes[1].res, -5);

        // As io_uring_setup(2048, ...) filled it on Linux 6.18.
        let mut p = [0u8; PARAMS_LEN];
        for (o, v) in [
            (0, 2048u32),
            (4, 4096),
            (20, 1),
            (44, 4),
            (48, 16),
            (64, 65600),
            (80, 8),
            (84, 12),
            (88, 20),
            (100, 64),
        ] {
            p[o..o + 4].copy_from_slice(&v.to_le_bytes());
        }
        let p = Params::parse(&p).unwrap();
        assert_eq!(
            (p.sq_entries, p.cq_entries, p.sq_tail, p.sq_array, p.cqes),
            (2048, 4096, 4, 65600, 64)
        );
        assert_eq!((p.sqe_size(), p.cqe_size()), (64, 16));
        assert_eq!((p.sq_mask(), p.cq_mask()), (2047, 4095));
    }
}
