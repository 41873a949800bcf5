//! Named constant tables for flag and enumerated arguments, so `dump` can
//! print `O_WRONLY|O_CREAT|O_TRUNC` instead of `0x241`.

use std::fmt::Write;

/// The flag tables an argument can be decoded with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagSet {
    /// `O_*` open flags (the access mode is an enumerated low part).
    Open,
    /// `AT_*` flags of the `*at` calls.
    At,
    /// `PROT_*` memory protection.
    Prot,
    /// `MAP_*` mapping flags (the mapping type is an enumerated low part).
    Map,
    /// `SEEK_*` whence values.
    Whence,
    /// `CLONE_*` flags (the low byte is the exit signal).
    Clone,
    /// `CLONE_*` flags of `struct clone_args` (clone3): no exit signal in
    /// the low byte, where `CLONE_NEWTIME` is; 64 bits.
    Clone3,
    /// `F_*` fcntl commands.
    Fcntl,
    /// `LOCK_*` flock operations.
    Flock,
    /// `FALLOC_FL_*` fallocate modes.
    Falloc,
    /// `RENAME_*` flags.
    Rename,
    /// `XATTR_*` set flags.
    Xattr,
    /// `MSG_*` socket message flags.
    Msg,
    /// `AF_*` address families.
    AddressFamily,
    /// `SOCK_*` socket types (with `SOCK_NONBLOCK|SOCK_CLOEXEC`).
    SockType,
    /// `F_OK|R_OK|W_OK|X_OK` access modes.
    Access,
    /// `MS_*` msync flags.
    Msync,
    /// `MREMAP_*` flags.
    Mremap,
    /// `SYNC_FILE_RANGE_*` flags.
    SyncFileRange,
    /// `POSIX_FADV_*` advice values.
    Fadvise,
    /// `MADV_*` advice values.
    Madvise,
    /// `WNOHANG|WUNTRACED|...` wait options.
    Wait,
    /// `O_CLOEXEC|O_NONBLOCK`-style flags of pipe2, dup3, eventfd2, ...
    Cloexec,
    /// `STATX_*` request mask.
    StatxMask,
    /// `RWF_*` flags of preadv2/pwritev2.
    Rwf,
    /// `MFD_*` memfd_create flags.
    Memfd,
    /// `SPLICE_F_*` flags.
    Splice,
    /// `CLOSE_RANGE_*` flags.
    CloseRange,
    /// `RESOLVE_*` openat2 resolve flags.
    Resolve,
    /// `ioctl` requests (`FICLONE`, `TCGETS`, ...).
    Ioctl,
    /// `IORING_REGISTER_*` opcodes of `io_uring_register`.
    UringRegister,
    /// `FAN_*` flags of `fanotify_init`.
    Fanotify,
    /// `PERF_FLAG_*` flags of `perf_event_open`.
    PerfEvent,
    /// `FSOPEN_*` flags.
    Fsopen,
    /// `mq_open`'s `oflag`: the `O_*` bits a message queue takes. Not
    /// [`FlagSet::Open`], which would make the call an open of a path.
    MqOpen,
    /// `OPEN_TREE_*` and `AT_*` flags of `open_tree`.
    OpenTree,
    /// `FSMOUNT_*` flags.
    Fsmount,
    /// `FSPICK_*` flags.
    Fspick,
    /// `LANDLOCK_CREATE_RULESET_*` flags.
    Landlock,
    /// `FD_CLOEXEC`, the one descriptor flag (`fcntl(F_SETFD)`).
    FdFlags,
    /// The file status flags `fcntl(F_SETFL)` sets. Not
    /// [`FlagSet::Open`], which would make the call an open of a path.
    StatusFlags,
}

/// A decoding table: either a bit set (each entry one or more bits) or an
/// enumeration (each entry one exact value), with an optional enumerated
/// low part (`O_ACCMODE`, `MAP_TYPE`) decoded before the bits.
#[derive(Debug)]
pub struct FlagTable {
    /// The table's name as shown in signatures (`open`, `at`, ...).
    pub name: &'static str,
    /// True when values are exact enumerators rather than bits.
    pub enumerated: bool,
    /// Mask and names of an enumerated low part, if any.
    pub low: Option<(u64, &'static [(u64, &'static str)])>,
    /// The named bits or values.
    pub entries: &'static [(u64, &'static str)],
}

impl FlagSet {
    /// The table's short name.
    pub fn name(self) -> &'static str {
        self.table().name
    }

    /// The decoding table for this set.
    pub fn table(self) -> &'static FlagTable {
        tables::table(self)
    }

    /// Decodes `value` to text: `O_WRONLY|O_CREAT|0x100000` or `SEEK_END`.
    /// Unknown bits or values are shown in hexadecimal; an empty bit set as
    /// its named zero (`F_OK`) or `0`.
    pub fn decode(self, value: u64) -> String {
        let t = self.table();
        let mut out = String::new();
        if t.enumerated {
            return match t.entries.iter().find(|(v, _)| *v == value) {
                Some((_, n)) => (*n).to_string(),
                None => format!("{value:#x}"),
            };
        }
        let mut rest = value;
        if let Some((mask, names)) = t.low {
            let low = value & mask;
            match names.iter().find(|(v, _)| *v == low) {
                Some((_, n)) => out.push_str(n),
                None => {
                    let _ = write!(out, "{low:#x}");
                }
            }
            rest &= !mask;
        }
        for &(bits, name) in t.entries {
            if bits != 0 && rest & bits == bits {
                if !out.is_empty() {
                    out.push('|');
                }
                out.push_str(name);
                rest &= !bits;
            }
        }
        if out.is_empty() && rest == 0 {
            // A named zero (`F_OK`) reads better than `0`.
            return match t.entries.iter().find(|(v, _)| *v == 0) {
                Some((_, n)) => (*n).to_string(),
                None => "0".to_string(),
            };
        }
        if rest != 0 || out.is_empty() {
            if !out.is_empty() {
                out.push('|');
            }
            let _ = write!(out, "{rest:#x}");
        }
        out
    }
}

mod tables;
