//! The table itself: one row per x86_64 system call, sorted by number.
//!
//! `sys!` rows decode their parameters; `raw!` rows are recorded as six raw
//! argument words. Parameter names follow the man pages.

use crate::Dir::{In, InOut, Out};
use crate::Kind::*;
use crate::Len::{Arg, ArgPtr, Fixed, Ret as RetLen};
use crate::Replay::{Emulate, Execute, Ignore, Simulate};
use crate::{FlagSet as F, Group as G, Param, Ret, StructType as S, Syscall};

/// A decoded row: `sys!(nr, name, [param: Kind, ...], Ret, Replay, groups)`.
macro_rules! sys {
    ($nr:expr, $name:ident, [$($p:ident: $k:expr),* $(,)?], $ret:ident, $replay:expr, $groups:expr) => {
        Syscall {
            nr: $nr,
            name: stringify!($name),
            params: Some(&[$(Param { name: stringify!($p), kind: $k }),*]),
            ret: Ret::$ret,
            replay: $replay,
            groups: $groups,
        }
    };
}

/// A raw row: recorded as six argument words, not decoded.
macro_rules! raw {
    ($nr:expr, $name:ident, $replay:expr, $groups:expr) => {
        Syscall { nr: $nr, name: stringify!($name), params: None, ret: Ret::Int, replay: $replay, groups: $groups }
    };
}

/// `struct stat` written by the kernel.
const STAT_OUT: crate::Kind = Struct { ty: S::Stat, dir: Out, len: Fixed(144) };

/// The table, sorted by number.
pub(crate) const TABLE: &[Syscall] = &[
    sys!(0, read, [fd: Fd, buf: Buf { dir: Out, len: RetLen }, count: Size], Size, Execute, G::DESC),
    sys!(1, write, [fd: Fd, buf: Buf { dir: In, len: Arg(2) }, count: Size], Size, Execute, G::DESC),
    sys!(2, open, [pathname: Path, flags: Flags(F::Open), mode: Mode], Fd, Execute, G::FILE | G::DESC),
    sys!(3, close, [fd: Fd], Int, Execute, G::DESC),
    sys!(4, stat, [pathname: Path, statbuf: STAT_OUT], Int, Execute, G::FILE | G::STAT),
    raw!(39, getpid, Ignore, G::PROCESS),
];

#[allow(dead_code)]
const _USE_ALL: (crate::Dir, crate::Len, crate::Replay, crate::Replay) = (InOut, ArgPtr(0), Emulate, Simulate);
