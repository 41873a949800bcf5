//! The table itself: one row per x86_64 system call, sorted by number.
//!
//! `sys!` rows decode their parameters; `raw!` rows are recorded as six raw
//! argument words. Parameter names follow the man pages. A buffer or
//! structure whose length no rule can express is a `Ptr`, never a guess.

use crate::Dir::{In, InOut, Out};
use crate::Effect::{self as E};
use crate::Kind::{self, *};
use crate::Len::{self, Arg, ArgPtr, ArgTimes, Fixed, Ret as RetLen};
use crate::Replay::{Emulate, Execute, Ignore, Simulate};
use crate::{FlagSet as F, Group as G, Ids, Param, Ret, StructType as S, Syscall, Which};

/// A decoded row: `sys!(nr, name, [param: Kind, ...], Ret, Replay, groups)`,
/// optionally followed by the call's [`Effect`](crate::Effect) (`Effect::None` if absent).
macro_rules! sys {
    ($nr:expr, $name:ident, [$($p:ident: $k:expr),* $(,)?], $ret:ident, $replay:expr, $groups:expr) => {
        sys!($nr, $name, [$($p: $k),*], $ret, $replay, $groups, E::None)
    };
    ($nr:expr, $name:ident, [$($p:ident: $k:expr),* $(,)?], $ret:ident, $replay:expr, $groups:expr, $effect:expr) => {
        Syscall {
            nr: $nr,
            name: stringify!($name),
            params: Some(&[$(Param { name: stringify!($p), kind: $k }),*]),
            ret: Ret::$ret,
            replay: $replay,
            groups: $groups,
            effect: $effect,
        }
    };
}

/// A `(command, row)` of [`COMMANDS`] for `fcntl` command `$cmd`, whose
/// third argument is `$arg`, or absent: replayed as the generic row.
macro_rules! fcntl {
    ($cmd:expr $(, $p:ident: $k:expr)?) => {
        (
            $cmd,
            sys!(72, fcntl, [fd: Fd, cmd: Flags(F::Fcntl) $(, $p: $k)?], Int, Execute, G::DESC, E::Fcntl),
        )
    };
}

/// A raw row: recorded as six argument words, not decoded.
macro_rules! raw {
    ($nr:expr, $name:ident, $replay:expr, $groups:expr) => {
        raw!($nr, $name, $replay, $groups, E::None)
    };
    ($nr:expr, $name:ident, $replay:expr, $groups:expr, $effect:expr) => {
        Syscall {
            nr: $nr,
            name: stringify!($name),
            params: None,
            ret: Ret::Int,
            replay: $replay,
            groups: $groups,
            effect: $effect,
        }
    };
}

/// `CLONE_VM | CLONE_VFORK`: what vfork(2) is as a clone.
const VFORK: u64 = 0x100 | 0x4000;

/// A byte buffer the program hands to the kernel.
const fn inb(len: Len) -> Kind {
    Buf { dir: In, len }
}

/// A byte buffer the kernel fills.
const fn outb(len: Len) -> Kind {
    Buf { dir: Out, len }
}

/// A typed structure.
const fn st(ty: S, dir: crate::Dir, len: Len) -> Kind {
    Struct { ty, dir, len }
}

/// `struct stat` written by the kernel.
const STAT_OUT: Kind = st(S::Stat, Out, Fixed(144));
/// `int[2]` of new descriptors (pipe, socketpair).
const FD_PAIR: Kind = st(S::FdPair, Out, Fixed(8));
/// A `loff_t *` the kernel reads and advances.
const LOFF: Kind = st(S::Loff, InOut, Fixed(8));
/// A `socklen_t *` in and out.
const SOCKLEN: Kind = st(S::Socklen, InOut, Fixed(4));
/// A `struct sockaddr *` the kernel fills, its length behind argument 2.
const SOCKADDR_OUT_2: Kind = st(S::Sockaddr, Out, ArgPtr(2));

/// The table, sorted by number.
pub(crate) const TABLE: &[Syscall] = &[
    sys!(0, read, [fd: Fd, buf: outb(RetLen), count: Size], Size, Execute, G::DESC | G::REREAD | G::CURSOR),
    sys!(1, write, [fd: Fd, buf: inb(Arg(2)), count: Size], Size, Execute, G::DESC | G::CURSOR),
    sys!(2, open, [pathname: Path, flags: Flags(F::Open), mode: CreateMode], Fd, Execute, G::FILE | G::DESC, E::Open),
    sys!(3, close, [fd: Fd], Int, Execute, G::DESC, E::Close),
    sys!(4, stat, [pathname: Path, statbuf: STAT_OUT], Int, Execute, G::FILE | G::STAT | G::QUERY),
    sys!(5, fstat, [fd: Fd, statbuf: STAT_OUT], Int, Execute, G::DESC | G::STAT | G::QUERY),
    sys!(6, lstat, [pathname: Path, statbuf: STAT_OUT], Int, Execute, G::FILE | G::STAT | G::NOFOLLOW | G::QUERY),
    sys!(7, poll, [fds: Ptr, nfds: UInt, timeout: Int], Int, Simulate, G::DESC),
    sys!(8, lseek, [fd: Fd, offset: Offset, whence: Flags(F::Whence)], Offset, Execute, G::DESC | G::QUERY | G::CURSOR),
    sys!(9, mmap, [addr: Ptr, length: Size, prot: Flags(F::Prot), flags: Flags(F::Map), fd: Fd, offset: Offset], Addr, Execute, G::MEMORY | G::DESC, E::Map),
    sys!(10, mprotect, [addr: Ptr, len: Size, prot: Flags(F::Prot)], Int, Ignore, G::MEMORY),
    sys!(11, munmap, [addr: Mapped { len: 1 }, length: Size], Int, Execute, G::MEMORY, E::Unmap),
    sys!(12, brk, [addr: Ptr], Addr, Ignore, G::MEMORY),
    sys!(13, rt_sigaction, [signum: Signal, act: st(S::Sigaction, In, Fixed(32)), oldact: Ptr, sigsetsize: Size], Int, Ignore, G::SIGNAL),
    sys!(14, rt_sigprocmask, [how: Int, set: st(S::Sigset, In, Arg(3)), oldset: Ptr, sigsetsize: Size], Int, Ignore, G::SIGNAL),
    raw!(15, rt_sigreturn, Ignore, G::SIGNAL),
    sys!(16, ioctl, [fd: Fd, request: Flags(F::Ioctl), arg: Ptr], Int, Simulate, G::DESC),
    sys!(17, pread64, [fd: Fd, buf: outb(RetLen), count: Size, offset: Offset], Size, Execute, G::DESC | G::QUERY),
    sys!(18, pwrite64, [fd: Fd, buf: inb(Arg(2)), count: Size, offset: Offset], Size, Execute, G::DESC),
    sys!(19, readv, [fd: Fd, iov: IoVec { dir: Out, count: 2 }, iovcnt: Int], Size, Execute, G::DESC | G::REREAD | G::CURSOR),
    sys!(20, writev, [fd: Fd, iov: IoVec { dir: In, count: 2 }, iovcnt: Int], Size, Execute, G::DESC | G::CURSOR),
    sys!(21, access, [pathname: Path, mode: Flags(F::Access)], Int, Execute, G::FILE | G::QUERY),
    sys!(22, pipe, [pipefd: FD_PAIR], Int, Execute, G::DESC | G::IPC, E::Pipe),
    sys!(23, select, [nfds: Int, readfds: Ptr, writefds: Ptr, exceptfds: Ptr, timeout: Ptr], Int, Simulate, G::DESC),
    sys!(24, sched_yield, [], Int, Ignore, G::PROCESS),
    sys!(25, mremap, [old_address: Ptr, old_size: Size, new_size: Size, flags: Flags(F::Mremap), new_address: Ptr], Addr, Execute, G::MEMORY, E::Remap),
    sys!(26, msync, [addr: Mapped { len: 1 }, length: Size, flags: Flags(F::Msync)], Int, Execute, G::MEMORY, E::Sync),
    raw!(27, mincore, Simulate, G::MEMORY),
    sys!(28, madvise, [addr: Mapped { len: 1 }, length: Size, advice: Flags(F::Madvise)], Int, Execute, G::MEMORY, E::Advise),
    raw!(29, shmget, Simulate, G::IPC),
    raw!(30, shmat, Simulate, G::IPC),
    raw!(31, shmctl, Simulate, G::IPC),
    sys!(32, dup, [oldfd: Fd], Fd, Execute, G::DESC, E::Dup),
    sys!(33, dup2, [oldfd: Fd, newfd: Fd], Fd, Execute, G::DESC, E::Dup),
    sys!(34, pause, [], Int, Simulate, G::SIGNAL),
    sys!(35, nanosleep, [req: st(S::Timespec, In, Fixed(16)), rem: Ptr], Int, Simulate, G::CLOCK),
    raw!(36, getitimer, Ignore, G::CLOCK),
    raw!(37, alarm, Simulate, G::CLOCK),
    raw!(38, setitimer, Simulate, G::CLOCK),
    sys!(39, getpid, [], Pid, Emulate, G::PROCESS),
    sys!(40, sendfile, [out_fd: Fd, in_fd: Fd, offset: LOFF, count: Size], Size, Execute, G::DESC | G::NETWORK),
    sys!(41, socket, [domain: Flags(F::AddressFamily), type_: Flags(F::SockType), protocol: Int], Fd, Emulate, G::NETWORK | G::DESC),
    sys!(42, connect, [sockfd: Fd, addr: st(S::Sockaddr, In, Arg(2)), addrlen: UInt], Int, Emulate, G::NETWORK, E::Connect),
    sys!(43, accept, [sockfd: Fd, addr: SOCKADDR_OUT_2, addrlen: SOCKLEN], Fd, Emulate, G::NETWORK | G::DESC, E::Accept),
    sys!(44, sendto, [sockfd: Fd, buf: inb(Arg(2)), len: Size, flags: Flags(F::Msg), dest_addr: st(S::Sockaddr, In, Arg(5)), addrlen: UInt], Size, Emulate, G::NETWORK),
    sys!(45, recvfrom, [sockfd: Fd, buf: outb(RetLen), len: Size, flags: Flags(F::Msg), src_addr: st(S::Sockaddr, Out, ArgPtr(5)), addrlen: SOCKLEN], Size, Emulate, G::NETWORK),
    sys!(46, sendmsg, [sockfd: Fd, msg: MsgHdr { dir: In }, flags: Flags(F::Msg)], Size, Emulate, G::NETWORK),
    sys!(47, recvmsg, [sockfd: Fd, msg: MsgHdr { dir: Out }, flags: Flags(F::Msg)], Size, Emulate, G::NETWORK, E::ReceiveFds),
    sys!(48, shutdown, [sockfd: Fd, how: Int], Int, Emulate, G::NETWORK),
    sys!(49, bind, [sockfd: Fd, addr: st(S::Sockaddr, In, Arg(2)), addrlen: UInt], Int, Emulate, G::NETWORK, E::Bind),
    sys!(50, listen, [sockfd: Fd, backlog: Int], Int, Emulate, G::NETWORK),
    sys!(51, getsockname, [sockfd: Fd, addr: SOCKADDR_OUT_2, addrlen: SOCKLEN], Int, Emulate, G::NETWORK),
    sys!(52, getpeername, [sockfd: Fd, addr: SOCKADDR_OUT_2, addrlen: SOCKLEN], Int, Emulate, G::NETWORK),
    sys!(53, socketpair, [domain: Flags(F::AddressFamily), type_: Flags(F::SockType), protocol: Int, sv: FD_PAIR], Int, Emulate, G::NETWORK | G::DESC),
    sys!(54, setsockopt, [sockfd: Fd, level: Int, optname: Int, optval: inb(Arg(4)), optlen: UInt], Int, Emulate, G::NETWORK),
    sys!(55, getsockopt, [sockfd: Fd, level: Int, optname: Int, optval: outb(ArgPtr(4)), optlen: SOCKLEN], Int, Emulate, G::NETWORK),
    // parent_tid receives the child's pidfd under CLONE_PIDFD (Go's os/exec):
    // replay needs its number.
    sys!(56, clone, [flags: Flags(F::Clone), stack: Ptr, parent_tid: st(S::Int, Out, Fixed(4)), child_tid: Ptr, tls: Ptr], Pid, Emulate, G::PROCESS, E::Spawn(0)),
    sys!(57, fork, [], Pid, Emulate, G::PROCESS, E::Spawn(0)),
    sys!(58, vfork, [], Pid, Emulate, G::PROCESS, E::Spawn(VFORK)),
    sys!(59, execve, [pathname: Path, argv: StrArray, envp: StrArray], Int, Emulate, G::PROCESS | G::FILE, E::Exec),
    sys!(60, exit, [status: Int], None, Emulate, G::PROCESS),
    sys!(61, wait4, [pid: Pid, wstatus: st(S::WaitStatus, Out, Fixed(4)), options: Flags(F::Wait), rusage: st(S::Rusage, Out, Fixed(144))], Pid, Emulate, G::PROCESS),
    sys!(62, kill, [pid: Pid, sig: Signal], Int, Emulate, G::SIGNAL | G::PROCESS),
    sys!(63, uname, [buf: st(S::Utsname, Out, Fixed(390))], Int, Ignore, 0),
    raw!(64, semget, Simulate, G::IPC),
    raw!(65, semop, Simulate, G::IPC),
    raw!(66, semctl, Simulate, G::IPC),
    raw!(67, shmdt, Simulate, G::IPC),
    raw!(68, msgget, Simulate, G::IPC),
    raw!(69, msgsnd, Simulate, G::IPC),
    raw!(70, msgrcv, Simulate, G::IPC),
    raw!(71, msgctl, Simulate, G::IPC),
    sys!(72, fcntl, [fd: Fd, cmd: Flags(F::Fcntl), arg: Hex], Int, Execute, G::DESC, E::Fcntl),
    sys!(73, flock, [fd: Fd, operation: Flags(F::Flock)], Int, Simulate, G::DESC),
    sys!(74, fsync, [fd: Fd], Int, Execute, G::DESC),
    sys!(75, fdatasync, [fd: Fd], Int, Execute, G::DESC),
    sys!(76, truncate, [path: Path, length: Offset], Int, Execute, G::FILE),
    sys!(77, ftruncate, [fd: Fd, length: Offset], Int, Execute, G::DESC),
    sys!(78, getdents, [fd: Fd, dirp: st(S::Dirents, Out, RetLen), count: Size], Int, Execute, G::DESC),
    sys!(79, getcwd, [buf: outb(RetLen), size: Size], Int, Emulate, G::FILE),
    sys!(80, chdir, [path: Path], Int, Execute, G::FILE, E::Chdir),
    sys!(81, fchdir, [fd: Fd], Int, Execute, G::DESC, E::Chdir),
    sys!(82, rename, [oldpath: Path, newpath: Path], Int, Execute, G::FILE | G::NOFOLLOW, E::Move),
    sys!(83, mkdir, [pathname: Path, mode: CreateMode], Int, Execute, G::FILE | G::NOFOLLOW),
    sys!(84, rmdir, [pathname: Path], Int, Execute, G::FILE | G::NOFOLLOW, E::Remove),
    sys!(85, creat, [pathname: Path, mode: CreateMode], Fd, Execute, G::FILE | G::DESC, E::Open),
    sys!(86, link, [oldpath: Path, newpath: Path], Int, Execute, G::FILE | G::NOFOLLOW),
    sys!(87, unlink, [pathname: Path], Int, Execute, G::FILE | G::NOFOLLOW, E::Remove),
    sys!(88, symlink, [target: Str, linkpath: Path], Int, Execute, G::FILE | G::NOFOLLOW),
    sys!(89, readlink, [pathname: Path, buf: outb(RetLen), bufsiz: Size], Size, Execute, G::FILE | G::NOFOLLOW | G::QUERY),
    sys!(90, chmod, [pathname: Path, mode: Mode], Int, Execute, G::FILE),
    sys!(91, fchmod, [fd: Fd, mode: Mode], Int, Execute, G::DESC),
    sys!(92, chown, [pathname: Path, owner: Id, group: Id], Int, Execute, G::FILE),
    sys!(93, fchown, [fd: Fd, owner: Id, group: Id], Int, Execute, G::DESC),
    sys!(94, lchown, [pathname: Path, owner: Id, group: Id], Int, Execute, G::FILE | G::NOFOLLOW),
    sys!(95, umask, [mask: Mode], Int, Execute, G::FILE, E::Umask),
    raw!(96, gettimeofday, Ignore, G::CLOCK),
    sys!(97, getrlimit, [resource: Int, rlim: st(S::Rlimit, Out, Fixed(16))], Int, Ignore, G::PROCESS),
    sys!(98, getrusage, [who: Int, usage: st(S::Rusage, Out, Fixed(144))], Int, Ignore, G::PROCESS),
    raw!(99, sysinfo, Ignore, 0),
    raw!(100, times, Ignore, G::CLOCK),
    raw!(101, ptrace, Simulate, G::PROCESS),
    sys!(102, getuid, [], Int, Ignore, G::CREDS),
    raw!(103, syslog, Simulate, 0),
    sys!(104, getgid, [], Int, Ignore, G::CREDS),
    sys!(105, setuid, [uid: Id], Int, Emulate, G::CREDS, E::SetIds(Ids::User(Which::One))),
    sys!(106, setgid, [gid: Id], Int, Emulate, G::CREDS, E::SetIds(Ids::Group(Which::One))),
    sys!(107, geteuid, [], Int, Ignore, G::CREDS),
    sys!(108, getegid, [], Int, Ignore, G::CREDS),
    raw!(109, setpgid, Simulate, G::PROCESS),
    sys!(110, getppid, [], Pid, Emulate, G::PROCESS),
    raw!(111, getpgrp, Ignore, G::PROCESS),
    raw!(112, setsid, Simulate, G::PROCESS),
    sys!(113, setreuid, [ruid: Id, euid: Id], Int, Emulate, G::CREDS, E::SetIds(Ids::User(Which::RealEffective))),
    sys!(114, setregid, [rgid: Id, egid: Id], Int, Emulate, G::CREDS, E::SetIds(Ids::Group(Which::RealEffective))),
    raw!(115, getgroups, Ignore, G::CREDS),
    sys!(116, setgroups, [size: Size, list: st(S::Gids, In, ArgTimes(0, 4))], Int, Emulate, G::CREDS, E::SetGroups),
    sys!(117, setresuid, [ruid: Id, euid: Id, suid: Id], Int, Emulate, G::CREDS, E::SetIds(Ids::User(Which::RealEffectiveSaved))),
    raw!(118, getresuid, Ignore, G::CREDS),
    sys!(119, setresgid, [rgid: Id, egid: Id, sgid: Id], Int, Emulate, G::CREDS, E::SetIds(Ids::Group(Which::RealEffectiveSaved))),
    raw!(120, getresgid, Ignore, G::CREDS),
    raw!(121, getpgid, Ignore, G::PROCESS),
    sys!(122, setfsuid, [fsuid: Id], Int, Emulate, G::CREDS, E::SetIds(Ids::User(Which::FileSystem))),
    sys!(123, setfsgid, [fsgid: Id], Int, Emulate, G::CREDS, E::SetIds(Ids::Group(Which::FileSystem))),
    raw!(124, getsid, Ignore, G::PROCESS),
    raw!(125, capget, Ignore, G::CREDS),
    sys!(126, capset, [hdrp: st(S::CapHeader, In, Fixed(8)), datap: st(S::CapData, In, Fixed(24))], Int, Emulate, G::CREDS, E::SetCaps),
    raw!(127, rt_sigpending, Ignore, G::SIGNAL),
    raw!(128, rt_sigtimedwait, Simulate, G::SIGNAL),
    raw!(129, rt_sigqueueinfo, Simulate, G::SIGNAL),
    raw!(130, rt_sigsuspend, Simulate, G::SIGNAL),
    raw!(131, sigaltstack, Ignore, G::SIGNAL),
    sys!(132, utime, [filename: Path, times: st(S::Utimbuf, In, Fixed(16))], Int, Execute, G::FILE),
    sys!(133, mknod, [pathname: Path, mode: CreateMode, dev: Dev { mode: 1 }], Int, Execute, G::FILE | G::NOFOLLOW),
    raw!(134, uselib, Simulate, 0),
    raw!(135, personality, Simulate, G::PROCESS),
    raw!(136, ustat, Simulate, G::FILE),
    sys!(137, statfs, [path: Path, buf: st(S::Statfs, Out, Fixed(120))], Int, Execute, G::FILE | G::STAT | G::QUERY),
    sys!(138, fstatfs, [fd: Fd, buf: st(S::Statfs, Out, Fixed(120))], Int, Execute, G::DESC | G::STAT | G::QUERY),
    raw!(139, sysfs, Simulate, G::FILE),
    raw!(140, getpriority, Ignore, 0),
    raw!(141, setpriority, Simulate, G::PROCESS),
    raw!(142, sched_setparam, Simulate, G::PROCESS),
    raw!(143, sched_getparam, Ignore, 0),
    raw!(144, sched_setscheduler, Simulate, G::PROCESS),
    raw!(145, sched_getscheduler, Ignore, 0),
    raw!(146, sched_get_priority_max, Ignore, 0),
    raw!(147, sched_get_priority_min, Ignore, 0),
    raw!(148, sched_rr_get_interval, Simulate, 0),
    raw!(149, mlock, Simulate, G::MEMORY),
    raw!(150, munlock, Simulate, G::MEMORY),
    raw!(151, mlockall, Simulate, G::MEMORY),
    raw!(152, munlockall, Simulate, G::MEMORY),
    raw!(153, vhangup, Simulate, 0),
    raw!(154, modify_ldt, Simulate, 0),
    raw!(155, pivot_root, Simulate, G::FILE),
    raw!(156, _sysctl, Simulate, 0),
    // PR_SET_SECCOMP.
    raw!(157, prctl, Simulate, G::PROCESS, E::Prctl),
    raw!(158, arch_prctl, Simulate, G::PROCESS),
    raw!(159, adjtimex, Simulate, G::CLOCK),
    raw!(160, setrlimit, Simulate, 0),
    sys!(161, chroot, [path: Path], Int, Emulate, G::FILE, E::Chroot),
    sys!(162, sync, [], Int, Execute, G::FILE),
    raw!(163, acct, Simulate, G::FILE),
    raw!(164, settimeofday, Simulate, G::CLOCK),
    sys!(165, mount, [source: Str, target: Path, filesystemtype: Str, mountflags: Hex, data: Ptr], Int, Ignore, G::FILE),
    sys!(166, umount2, [target: Path, flags: Hex], Int, Ignore, G::FILE),
    raw!(167, swapon, Simulate, G::FILE),
    raw!(168, swapoff, Simulate, G::FILE),
    raw!(169, reboot, Simulate, 0),
    raw!(170, sethostname, Simulate, 0),
    raw!(171, setdomainname, Simulate, 0),
    raw!(172, iopl, Simulate, 0),
    raw!(173, ioperm, Simulate, 0),
    raw!(174, create_module, Simulate, 0),
    raw!(175, init_module, Simulate, 0),
    raw!(176, delete_module, Simulate, 0),
    raw!(177, get_kernel_syms, Ignore, 0),
    raw!(178, query_module, Simulate, 0),
    raw!(179, quotactl, Simulate, G::FILE),
    raw!(180, nfsservctl, Simulate, 0),
    raw!(181, getpmsg, Ignore, G::IPC),
    raw!(182, putpmsg, Simulate, G::IPC),
    raw!(183, afs_syscall, Simulate, 0),
    raw!(184, tuxcall, Simulate, 0),
    raw!(185, security, Simulate, 0),
    sys!(186, gettid, [], Pid, Emulate, G::PROCESS),
    sys!(187, readahead, [fd: Fd, offset: Offset, count: Size], Int, Execute, G::DESC),
    sys!(188, setxattr, [path: Path, name: Str, value: inb(Arg(3)), size: Size, flags: Flags(F::Xattr)], Int, Execute, G::FILE),
    sys!(189, lsetxattr, [path: Path, name: Str, value: inb(Arg(3)), size: Size, flags: Flags(F::Xattr)], Int, Execute, G::FILE | G::NOFOLLOW),
    sys!(190, fsetxattr, [fd: Fd, name: Str, value: inb(Arg(3)), size: Size, flags: Flags(F::Xattr)], Int, Execute, G::DESC),
    sys!(191, getxattr, [path: Path, name: Str, value: outb(RetLen), size: Size], Size, Execute, G::FILE | G::QUERY),
    sys!(192, lgetxattr, [path: Path, name: Str, value: outb(RetLen), size: Size], Size, Execute, G::FILE | G::NOFOLLOW | G::QUERY),
    sys!(193, fgetxattr, [fd: Fd, name: Str, value: outb(RetLen), size: Size], Size, Execute, G::DESC | G::QUERY),
    sys!(194, listxattr, [path: Path, list: st(S::NameList, Out, RetLen), size: Size], Size, Execute, G::FILE | G::QUERY),
    sys!(195, llistxattr, [path: Path, list: st(S::NameList, Out, RetLen), size: Size], Size, Execute, G::FILE | G::NOFOLLOW | G::QUERY),
    sys!(196, flistxattr, [fd: Fd, list: st(S::NameList, Out, RetLen), size: Size], Size, Execute, G::DESC | G::QUERY),
    sys!(197, removexattr, [path: Path, name: Str], Int, Execute, G::FILE),
    sys!(198, lremovexattr, [path: Path, name: Str], Int, Execute, G::FILE | G::NOFOLLOW),
    sys!(199, fremovexattr, [fd: Fd, name: Str], Int, Execute, G::DESC),
    sys!(200, tkill, [tid: Pid, sig: Signal], Int, Emulate, G::SIGNAL),
    raw!(201, time, Ignore, G::CLOCK),
    raw!(202, futex, Simulate, G::PROCESS),
    sys!(203, sched_setaffinity, [pid: Pid, cpusetsize: Size, mask: inb(Arg(1))], Int, Simulate, G::PROCESS, E::SetsCpus),
    sys!(204, sched_getaffinity, [pid: Pid, cpusetsize: Size, mask: outb(RetLen)], Int, Ignore, 0, E::ShowsCpus),
    raw!(205, set_thread_area, Simulate, 0),
    sys!(206, io_setup, [nr_events: UInt, ctxp: st(S::AioContext, Out, Fixed(8))], Int, Emulate, G::AIO, E::AioSetup),
    sys!(207, io_destroy, [ctx: Hex], Int, Emulate, G::AIO, E::AioDestroy),
    sys!(208, io_getevents, [ctx: Hex, min_nr: Int, nr: Int, events: IoEvents, timeout: st(S::Timespec, In, Fixed(16))], Int, Execute, G::AIO),
    sys!(209, io_submit, [ctx: Hex, nr: Int, iocbpp: IoCbs { count: 1 }], Int, Execute, G::AIO),
    raw!(210, io_cancel, Simulate, G::AIO),
    raw!(211, get_thread_area, Ignore, 0),
    raw!(212, lookup_dcookie, Ignore, 0),
    sys!(213, epoll_create, [size: Int], Fd, Simulate, G::DESC),
    raw!(214, epoll_ctl_old, Simulate, G::DESC),
    raw!(215, epoll_wait_old, Simulate, G::DESC),
    raw!(216, remap_file_pages, Simulate, G::MEMORY),
    sys!(217, getdents64, [fd: Fd, dirp: st(S::Dirents64, Out, RetLen), count: Size], Int, Execute, G::DESC),
    sys!(218, set_tid_address, [tidptr: Ptr], Pid, Emulate, G::PROCESS),
    raw!(219, restart_syscall, Simulate, 0),
    raw!(220, semtimedop, Simulate, G::IPC),
    sys!(221, fadvise64, [fd: Fd, offset: Offset, len: Size, advice: Flags(F::Fadvise)], Int, Execute, G::DESC),
    raw!(222, timer_create, Simulate, G::CLOCK),
    raw!(223, timer_settime, Simulate, G::CLOCK),
    raw!(224, timer_gettime, Simulate, G::CLOCK),
    raw!(225, timer_getoverrun, Simulate, G::CLOCK),
    raw!(226, timer_delete, Simulate, G::CLOCK),
    raw!(227, clock_settime, Simulate, G::CLOCK),
    raw!(228, clock_gettime, Ignore, G::CLOCK),
    raw!(229, clock_getres, Ignore, G::CLOCK),
    raw!(230, clock_nanosleep, Simulate, G::CLOCK),
    sys!(231, exit_group, [status: Int], None, Emulate, G::PROCESS, E::EndProcess),
    sys!(232, epoll_wait, [epfd: Fd, events: Ptr, maxevents: Int, timeout: Int], Int, Simulate, G::DESC),
    raw!(233, epoll_ctl, Simulate, G::DESC),
    sys!(234, tgkill, [tgid: Pid, tid: Pid, sig: Signal], Int, Emulate, G::SIGNAL),
    sys!(235, utimes, [filename: Path, times: st(S::Timeval2, In, Fixed(32))], Int, Execute, G::FILE),
    raw!(236, vserver, Simulate, 0),
    raw!(237, mbind, Simulate, G::MEMORY),
    raw!(238, set_mempolicy, Simulate, G::MEMORY),
    raw!(239, get_mempolicy, Ignore, G::MEMORY),
    sys!(240, mq_open, [name: Str, oflag: Flags(F::MqOpen), mode: Mode, attr: Ptr], Fd, Simulate, G::IPC | G::DESC),
    raw!(241, mq_unlink, Simulate, G::FILE),
    raw!(242, mq_timedsend, Simulate, G::IPC),
    raw!(243, mq_timedreceive, Simulate, G::IPC),
    raw!(244, mq_notify, Simulate, G::IPC),
    raw!(245, mq_getsetattr, Simulate, G::IPC),
    raw!(246, kexec_load, Simulate, 0),
    sys!(247, waitid, [idtype: Int, id: Pid, infop: st(S::Siginfo, Out, Fixed(128)), options: Flags(F::Wait), rusage: Ptr], Int, Emulate, G::PROCESS),
    raw!(248, add_key, Simulate, 0),
    raw!(249, request_key, Simulate, 0),
    raw!(250, keyctl, Simulate, 0),
    raw!(251, ioprio_set, Simulate, G::DESC),
    raw!(252, ioprio_get, Simulate, G::DESC),
    sys!(253, inotify_init, [], Fd, Simulate, G::FILE | G::DESC),
    raw!(254, inotify_add_watch, Simulate, G::FILE),
    raw!(255, inotify_rm_watch, Simulate, G::FILE),
    raw!(256, migrate_pages, Simulate, G::MEMORY),
    sys!(257, openat, [dirfd: DirFd, pathname: Path, flags: Flags(F::Open), mode: CreateMode], Fd, Execute, G::FILE | G::DESC, E::Open),
    sys!(258, mkdirat, [dirfd: DirFd, pathname: Path, mode: CreateMode], Int, Execute, G::FILE | G::NOFOLLOW),
    sys!(259, mknodat, [dirfd: DirFd, pathname: Path, mode: CreateMode, dev: Dev { mode: 2 }], Int, Execute, G::FILE | G::NOFOLLOW),
    sys!(260, fchownat, [dirfd: DirFd, pathname: Path, owner: Id, group: Id, flags: Flags(F::At)], Int, Execute, G::FILE),
    sys!(261, futimesat, [dirfd: DirFd, pathname: Path, times: st(S::Timeval2, In, Fixed(32))], Int, Execute, G::FILE),
    sys!(262, newfstatat, [dirfd: DirFd, pathname: Path, statbuf: STAT_OUT, flags: Flags(F::At)], Int, Execute, G::FILE | G::STAT | G::QUERY),
    sys!(263, unlinkat, [dirfd: DirFd, pathname: Path, flags: Flags(F::At)], Int, Execute, G::FILE | G::NOFOLLOW, E::Remove),
    sys!(264, renameat, [olddirfd: DirFd, oldpath: Path, newdirfd: DirFd, newpath: Path], Int, Execute, G::FILE | G::NOFOLLOW, E::Move),
    sys!(265, linkat, [olddirfd: DirFd, oldpath: Path, newdirfd: DirFd, newpath: Path, flags: Flags(F::At)], Int, Execute, G::FILE | G::NOFOLLOW),
    sys!(266, symlinkat, [target: Str, newdirfd: DirFd, linkpath: Path], Int, Execute, G::FILE | G::NOFOLLOW),
    sys!(267, readlinkat, [dirfd: DirFd, pathname: Path, buf: outb(RetLen), bufsiz: Size], Size, Execute, G::FILE | G::NOFOLLOW | G::QUERY),
    sys!(268, fchmodat, [dirfd: DirFd, pathname: Path, mode: Mode], Int, Execute, G::FILE),
    sys!(269, faccessat, [dirfd: DirFd, pathname: Path, mode: Flags(F::Access)], Int, Execute, G::FILE | G::QUERY),
    sys!(270, pselect6, [nfds: Int, readfds: Ptr, writefds: Ptr, exceptfds: Ptr, timeout: Ptr, sigmask: Ptr], Int, Simulate, G::DESC),
    sys!(271, ppoll, [fds: Ptr, nfds: UInt, tmo_p: Ptr, sigmask: Ptr, sigsetsize: Size], Int, Simulate, G::DESC),
    sys!(272, unshare, [flags: Flags(F::Clone)], Int, Emulate, G::PROCESS, E::Unshare),
    raw!(273, set_robust_list, Simulate, G::PROCESS),
    raw!(274, get_robust_list, Ignore, G::PROCESS),
    sys!(275, splice, [fd_in: Fd, off_in: LOFF, fd_out: Fd, off_out: LOFF, len: Size, flags: Flags(F::Splice)], Size, Execute, G::DESC),
    sys!(276, tee, [fd_in: Fd, fd_out: Fd, len: Size, flags: Flags(F::Splice)], Size, Execute, G::DESC),
    sys!(277, sync_file_range, [fd: Fd, offset: Offset, nbytes: Offset, flags: Flags(F::SyncFileRange)], Int, Execute, G::DESC),
    // To a pipe's write end the elements are data for the kernel, from its
    // read end the kernel fills them: both directions are captured.
    sys!(278, vmsplice, [fd: Fd, iov: IoVec { dir: InOut, count: 2 }, nr_segs: UInt, flags: Flags(F::Splice)], Size, Execute, G::DESC),
    raw!(279, move_pages, Simulate, G::MEMORY),
    sys!(280, utimensat, [dirfd: DirFd, pathname: Path, times: st(S::Timespec2, In, Fixed(32)), flags: Flags(F::At)], Int, Execute, G::FILE),
    sys!(281, epoll_pwait, [epfd: Fd, events: Ptr, maxevents: Int, timeout: Int, sigmask: Ptr, sigsetsize: Size], Int, Simulate, G::DESC),
    sys!(282, signalfd, [fd: Fd, mask: Ptr, sizemask: Size], Fd, Simulate, G::SIGNAL | G::DESC),
    sys!(283, timerfd_create, [clockid: Int, flags: Flags(F::Cloexec)], Fd, Simulate, G::CLOCK | G::DESC),
    sys!(284, eventfd, [initval: UInt], Fd, Emulate, G::DESC),
    sys!(285, fallocate, [fd: Fd, mode: Flags(F::Falloc), offset: Offset, len: Offset], Int, Execute, G::DESC, E::Allocate),
    raw!(286, timerfd_settime, Simulate, G::CLOCK | G::DESC),
    raw!(287, timerfd_gettime, Simulate, G::CLOCK | G::DESC),
    sys!(288, accept4, [sockfd: Fd, addr: SOCKADDR_OUT_2, addrlen: SOCKLEN, flags: Flags(F::SockType)], Fd, Emulate, G::NETWORK | G::DESC, E::Accept),
    sys!(289, signalfd4, [fd: Fd, mask: Ptr, sizemask: Size, flags: Flags(F::Cloexec)], Fd, Simulate, G::SIGNAL | G::DESC),
    sys!(290, eventfd2, [initval: UInt, flags: Flags(F::Cloexec)], Fd, Emulate, G::DESC),
    sys!(291, epoll_create1, [flags: Flags(F::Cloexec)], Fd, Emulate, G::DESC),
    sys!(292, dup3, [oldfd: Fd, newfd: Fd, flags: Flags(F::Cloexec)], Fd, Execute, G::DESC, E::Dup),
    sys!(293, pipe2, [pipefd: FD_PAIR, flags: Flags(F::Cloexec)], Int, Execute, G::DESC | G::IPC, E::Pipe),
    sys!(294, inotify_init1, [flags: Flags(F::Cloexec)], Fd, Simulate, G::FILE | G::DESC),
    sys!(295, preadv, [fd: Fd, iov: IoVec { dir: Out, count: 2 }, iovcnt: Int, offset: Offset], Size, Execute, G::DESC | G::QUERY),
    sys!(296, pwritev, [fd: Fd, iov: IoVec { dir: In, count: 2 }, iovcnt: Int, offset: Offset], Size, Execute, G::DESC),
    raw!(297, rt_tgsigqueueinfo, Simulate, G::SIGNAL),
    sys!(298, perf_event_open, [attr: Ptr, pid: Pid, cpu: Int, group_fd: Fd, flags: Flags(F::PerfEvent)], Fd, Simulate, G::DESC),
    sys!(299, recvmmsg, [sockfd: Fd, msgvec: Ptr, vlen: UInt, flags: Flags(F::Msg), timeout: Ptr], Int, Emulate, G::NETWORK, E::ReceiveFds),
    sys!(300, fanotify_init, [flags: Flags(F::Fanotify), event_f_flags: Hex], Fd, Simulate, G::FILE | G::DESC),
    raw!(301, fanotify_mark, Simulate, G::FILE),
    sys!(302, prlimit64, [pid: Pid, resource: Int, new_limit: st(S::Rlimit, In, Fixed(16)), old_limit: st(S::Rlimit, Out, Fixed(16))], Int, Ignore, G::PROCESS),
    sys!(303, name_to_handle_at, [dirfd: DirFd, pathname: Path, handle: Ptr, mount_id: Ptr, flags: Flags(F::At)], Int, Execute, G::FILE),
    sys!(304, open_by_handle_at, [mount_fd: Fd, handle: Ptr, flags: Flags(F::Open)], Fd, Simulate, G::DESC),
    raw!(305, clock_adjtime, Simulate, G::CLOCK),
    sys!(306, syncfs, [fd: Fd], Int, Execute, G::DESC),
    sys!(307, sendmmsg, [sockfd: Fd, msgvec: Ptr, vlen: UInt, flags: Flags(F::Msg)], Int, Emulate, G::NETWORK),
    raw!(308, setns, Simulate, G::PROCESS),
    raw!(309, getcpu, Ignore, 0),
    raw!(310, process_vm_readv, Simulate, G::PROCESS),
    raw!(311, process_vm_writev, Simulate, G::PROCESS),
    raw!(312, kcmp, Simulate, G::PROCESS),
    raw!(313, finit_module, Simulate, 0),
    raw!(314, sched_setattr, Simulate, G::PROCESS),
    raw!(315, sched_getattr, Ignore, 0),
    sys!(316, renameat2, [olddirfd: DirFd, oldpath: Path, newdirfd: DirFd, newpath: Path, flags: Flags(F::Rename)], Int, Execute, G::FILE | G::NOFOLLOW, E::Move),
    // SECCOMP_SET_MODE_STRICT, SECCOMP_SET_MODE_FILTER.
    raw!(317, seccomp, Simulate, G::PROCESS, E::Seccomp(&[0, 1])),
    sys!(318, getrandom, [buf: outb(RetLen), buflen: Size, flags: Hex], Size, Emulate, 0),
    sys!(319, memfd_create, [name: Str, flags: Flags(F::Memfd)], Fd, Execute, G::DESC | G::MEMORY),
    raw!(320, kexec_file_load, Simulate, 0),
    raw!(321, bpf, Simulate, G::DESC),
    sys!(322, execveat, [dirfd: DirFd, pathname: Path, argv: StrArray, envp: StrArray, flags: Flags(F::At)], Int, Emulate, G::PROCESS | G::FILE, E::Exec),
    sys!(323, userfaultfd, [flags: Flags(F::Cloexec)], Fd, Simulate, G::MEMORY | G::DESC),
    raw!(324, membarrier, Simulate, 0),
    raw!(325, mlock2, Simulate, G::MEMORY),
    sys!(326, copy_file_range, [fd_in: Fd, off_in: LOFF, fd_out: Fd, off_out: LOFF, len: Size, flags: UInt], Size, Execute, G::DESC),
    sys!(327, preadv2, [fd: Fd, iov: IoVec { dir: Out, count: 2 }, iovcnt: Int, offset: Offset, offset_high: Hex, flags: Flags(F::Rwf)], Size, Execute, G::DESC | G::QUERY),
    sys!(328, pwritev2, [fd: Fd, iov: IoVec { dir: In, count: 2 }, iovcnt: Int, offset: Offset, offset_high: Hex, flags: Flags(F::Rwf)], Size, Execute, G::DESC),
    raw!(329, pkey_mprotect, Simulate, G::MEMORY),
    raw!(330, pkey_alloc, Simulate, G::MEMORY),
    raw!(331, pkey_free, Simulate, G::MEMORY),
    sys!(332, statx, [dirfd: DirFd, pathname: Path, flags: Flags(F::At), mask: Flags(F::StatxMask), statxbuf: st(S::Statx, Out, Fixed(256))], Int, Execute, G::FILE | G::STAT | G::QUERY),
    sys!(333, io_pgetevents, [ctx: Hex, min_nr: Int, nr: Int, events: IoEvents, timeout: st(S::Timespec, In, Fixed(16)), usig: Ptr], Int, Execute, G::AIO),
    raw!(334, rseq, Simulate, G::PROCESS),
    raw!(424, pidfd_send_signal, Simulate, G::SIGNAL | G::DESC),
    sys!(425, io_uring_setup, [entries: UInt, params: st(S::UringParams, InOut, Fixed(120))], Fd, Emulate, G::DESC | G::AIO, E::UringSetup),
    sys!(426, io_uring_enter, [fd: Fd, to_submit: UringSubmit, min_complete: UringComplete, flags: Hex, argp: Ptr, argsz: Size], Int, Execute, G::DESC | G::AIO),
    // `arg` is read as `nr_args` ints whatever the opcode: only
    // IORING_REGISTER_FILES's are descriptors; other opcodes' arrays are
    // longer (iovecs, updates), and a prefix of them costs nothing.
    sys!(427, io_uring_register, [fd: Fd, opcode: Flags(F::UringRegister), arg: st(S::Fds, In, ArgTimes(3, 4)), nr_args: UInt], Int, Emulate, G::DESC | G::AIO, E::UringRegister),
    sys!(428, open_tree, [dirfd: DirFd, pathname: Path, flags: Flags(F::OpenTree)], Fd, Simulate, G::FILE | G::DESC),
    raw!(429, move_mount, Simulate, G::FILE),
    sys!(430, fsopen, [fsname: Str, flags: Flags(F::Fsopen)], Fd, Simulate, G::FILE | G::DESC),
    raw!(431, fsconfig, Simulate, G::FILE),
    sys!(432, fsmount, [fs_fd: Fd, flags: Flags(F::Fsmount), attr_flags: Hex], Fd, Simulate, G::FILE | G::DESC),
    sys!(433, fspick, [dirfd: DirFd, pathname: Path, flags: Flags(F::Fspick)], Fd, Simulate, G::FILE | G::DESC),
    sys!(434, pidfd_open, [pid: Pid, flags: Hex], Fd, Emulate, G::DESC, E::PidFd),
    sys!(435, clone3, [cl_args: st(S::CloneArgs, In, Arg(1)), size: Size], Pid, Emulate, G::PROCESS, E::Spawn(0)),
    sys!(436, close_range, [first: Fd, last: Fd, flags: Flags(F::CloseRange)], Int, Execute, G::DESC, E::CloseRange),
    sys!(437, openat2, [dirfd: DirFd, pathname: Path, how: st(S::OpenHow, In, Arg(3)), size: Size], Fd, Execute, G::FILE | G::DESC, E::Open),
    sys!(438, pidfd_getfd, [pidfd: Fd, targetfd: Int, flags: Hex], Fd, Emulate, G::DESC, E::GetFd),
    sys!(439, faccessat2, [dirfd: DirFd, pathname: Path, mode: Flags(F::Access), flags: Flags(F::At)], Int, Execute, G::FILE | G::QUERY),
    raw!(440, process_madvise, Simulate, G::MEMORY),
    raw!(441, epoll_pwait2, Simulate, G::DESC),
    raw!(442, mount_setattr, Simulate, G::FILE),
    raw!(443, quotactl_fd, Simulate, G::FILE),
    sys!(444, landlock_create_ruleset, [attr: Ptr, size: Size, flags: Flags(F::Landlock)], Fd, Simulate, G::PROCESS | G::DESC),
    raw!(445, landlock_add_rule, Simulate, G::PROCESS),
    raw!(446, landlock_restrict_self, Simulate, G::PROCESS),
    sys!(447, memfd_secret, [flags: Flags(F::Cloexec)], Fd, Simulate, G::MEMORY | G::DESC),
    raw!(448, process_mrelease, Simulate, G::MEMORY),
    raw!(449, futex_waitv, Simulate, G::PROCESS),
    raw!(450, set_mempolicy_home_node, Simulate, G::MEMORY),
    sys!(451, cachestat, [fd: Fd, cstat_range: st(S::Opaque, In, Fixed(16)), cstat: st(S::Cachestat, Out, Fixed(32)), flags: UInt], Int, Ignore, G::DESC),
    sys!(452, fchmodat2, [dirfd: DirFd, pathname: Path, mode: Mode, flags: Flags(F::At)], Int, Execute, G::FILE),
    raw!(453, map_shadow_stack, Simulate, G::MEMORY),
    raw!(454, futex_wake, Simulate, G::PROCESS),
    raw!(455, futex_wait, Simulate, G::PROCESS),
    raw!(456, futex_requeue, Simulate, G::PROCESS),
    raw!(457, statmount, Simulate, G::FILE),
    raw!(458, listmount, Simulate, G::FILE),
    raw!(459, lsm_get_self_attr, Ignore, 0),
    raw!(460, lsm_set_self_attr, Simulate, 0),
    raw!(461, lsm_list_modules, Ignore, 0),
    raw!(462, mseal, Simulate, G::MEMORY),
    raw!(463, setxattrat, Simulate, G::FILE),
    raw!(464, getxattrat, Ignore, G::FILE),
    raw!(465, listxattrat, Simulate, G::FILE),
    raw!(466, removexattrat, Simulate, G::FILE),
    sys!(467, open_tree_attr, [dirfd: DirFd, pathname: Path, flags: Flags(F::OpenTree), attr: Ptr, size: Size], Fd, Simulate, G::FILE | G::DESC),
    raw!(468, file_getattr, Simulate, G::FILE),
    raw!(469, file_setattr, Simulate, G::FILE),
];

/// Commands of multiplexing calls (`ioctl` requests, `fcntl` commands,
/// both the second argument) the catalogue knows better than the generic
/// row, as `(command, row)`. A row here may refine how arguments are shown
/// and replayed, or show fewer of them, but names no memory the generic
/// row does not: the recorders choose what to capture by call number alone
/// (the BPF side cannot look at the command), and a test holds them to it.
pub(crate) static COMMANDS: &[(u64, Syscall)] = &[
    // cp on XFS and btrfs: the destination shares the source's bytes.
    (
        crate::FICLONE,
        sys!(16, ioctl, [fd: Fd, request: Flags(F::Ioctl), src_fd: Fd], Int, Execute, G::DESC, E::Clone),
    ),
    // Python's os.set_inheritable: what an execve keeps.
    (
        crate::FIOCLEX,
        sys!(16, ioctl, [fd: Fd, request: Flags(F::Ioctl), arg: Ptr], Int, Emulate, G::DESC, E::CloseOnExec(true)),
    ),
    (
        crate::FIONCLEX,
        sys!(16, ioctl, [fd: Fd, request: Flags(F::Ioctl), arg: Ptr], Int, Emulate, G::DESC, E::CloseOnExec(false)),
    ),
    // script, tmux, expect: a pseudo-terminal's other end, opened from
    // its master and returned as a new descriptor.
    (
        crate::TIOCGPTPEER,
        sys!(16, ioctl, [fd: Fd, request: Flags(F::Ioctl), flags: Flags(F::Open)], Fd, Simulate, G::DESC),
    ),
    // fcntl's third argument is a number, flags, a pointer or nothing,
    // by command (the generic row shows a hex word).
    fcntl!(0, min_fd: Int),                  // F_DUPFD
    fcntl!(1030, min_fd: Int),               // F_DUPFD_CLOEXEC
    fcntl!(2, flags: Flags(F::FdFlags)),     // F_SETFD
    fcntl!(4, flags: Flags(F::StatusFlags)), // F_SETFL
    fcntl!(8, owner: Pid),                   // F_SETOWN
    fcntl!(10, signal: Signal),              // F_SETSIG
    fcntl!(1031, size: Size),                // F_SETPIPE_SZ
    fcntl!(1),                               // F_GETFD
    fcntl!(3),                               // F_GETFL
    fcntl!(9),                               // F_GETOWN
    fcntl!(11),                              // F_GETSIG
    fcntl!(1025),                            // F_GETLEASE
    fcntl!(1032),                            // F_GETPIPE_SZ
    fcntl!(1034),                            // F_GET_SEALS
];

/// Pseudo-calls: what the kernel does with no system call that a trace
/// must still hold, recorded as calls numbered from
/// [`crate::PSEUDO_BASE`] so that this table drives them like the rest.
pub(crate) static PSEUDO: &[Syscall] = &[
    // The bytes a shared writable file mapping held when its address space
    // went (the process called exit_group or execve with it still
    // mapped): the stores since the last munmap or msync that no call
    // would otherwise show. Read at that call's entry.
    sys!(1024, mapped_at_exit, [addr: Mapped { len: 1 }, length: Size], Int, Execute, G::MEMORY, E::Sync),
];
