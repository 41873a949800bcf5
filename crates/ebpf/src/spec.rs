//! The catalogue, translated for the kernel side: for each syscall number,
//! the capture rule of each parameter (`struct call_spec` in
//! `bpf/records.h`). The BPF program interprets these rows; it knows no
//! system call by name, exactly as the ptrace back end.

use reanimator_catalogue::{all, Dir, Effect, Kind, Len};

/// Rows the BPF `specs` map holds (syscall numbers below this).
pub(crate) const NR_MAX: u32 = 512;
/// Bytes of one `struct call_spec`: six 8-byte parameter rules, then the
/// call's flags (LE u32).
pub(crate) const SPEC_LEN: usize = 52;
/// `SPEC_NEW_IMAGE`: the call replaces the address space.
const SPEC_NEW_IMAGE: u32 = 1;
/// `SPEC_ENDS_SPACE`: the call ends the address space (exit_group,
/// execve); shared mappings are captured at its entry.
const SPEC_ENDS_SPACE: u32 = 2;
/// `SPEC_URING_SETUP`, `SPEC_MAPS`, `SPEC_CLOSES`: what the io_uring
/// follower watches at a successful exit (a ring set up, part of a ring
/// mapped, a ring closed).
const SPEC_URING_SETUP: u32 = 4;
const SPEC_MAPS: u32 = 8;
const SPEC_CLOSES: u32 = 16;

const K_PATH: u8 = 1;
const K_STR: u8 = 2;
const K_STR_ARRAY: u8 = 3;
const K_BUF: u8 = 4;
const K_STRUCT: u8 = 5;
const K_IOVEC: u8 = 6;
const K_MSGHDR: u8 = 7;
const K_MAPPED: u8 = 8;
const K_IOCBS: u8 = 9;
const K_IOEVENTS: u8 = 10;
const K_URING_SUBMIT: u8 = 11;
const K_URING_COMPLETE: u8 = 12;

const DIR_IN: u8 = 1;
const DIR_OUT: u8 = 2;

fn dir(d: Dir) -> u8 {
    match d {
        Dir::In => DIR_IN,
        Dir::Out => DIR_OUT,
        Dir::InOut => DIR_IN | DIR_OUT,
    }
}

/// `(len_kind, len_arg, fixed)` of a size rule.
fn len(l: Len) -> (u8, u8, u32) {
    match l {
        Len::Arg(i) => (0, i, 0),
        Len::Ret => (1, 0, 0),
        Len::Fixed(n) => (2, 0, n),
        Len::ArgPtr(i) => (3, i, 0),
        Len::ArgTimes(i, size) => (4, i, size.into()),
    }
}

/// One parameter's rule: `[kind, dir, len_kind, len_arg, fixed (LE u32)]`.
fn param(kind: Kind) -> [u8; 8] {
    let (k, d, (lk, la, fixed)) = match kind {
        Kind::Path => (K_PATH, DIR_IN, (0, 0, 0)),
        Kind::Str => (K_STR, DIR_IN, (0, 0, 0)),
        Kind::StrArray => (K_STR_ARRAY, DIR_IN, (0, 0, 0)),
        Kind::Buf { dir: d, len: l } => (K_BUF, dir(d), len(l)),
        Kind::Struct { dir: d, len: l, .. } => (K_STRUCT, dir(d), len(l)),
        Kind::IoVec { dir: d, count } => (K_IOVEC, dir(d), (0, count, 0)),
        Kind::MsgHdr { dir: d } => (K_MSGHDR, dir(d), (0, 0, 0)),
        Kind::Mapped { len } => (K_MAPPED, DIR_IN, (0, len, 0)),
        Kind::IoCbs { count } => (K_IOCBS, DIR_IN, (0, count, 0)),
        Kind::IoEvents => (K_IOEVENTS, DIR_OUT, (0, 0, 0)),
        Kind::UringSubmit => (K_URING_SUBMIT, DIR_IN, (0, 0, 0)),
        Kind::UringComplete => (K_URING_COMPLETE, DIR_OUT, (0, 0, 0)),
        _ => return [0; 8],
    };
    let f = fixed.to_le_bytes();
    [k, d, lk, la, f[0], f[1], f[2], f[3]]
}

/// Every catalogue row that names user memory or that the io_uring
/// follower watches, as `(nr, call_spec bytes)`.
pub(crate) fn table() -> Vec<(u32, [u8; SPEC_LEN])> {
    all()
        .iter()
        .filter(|s| s.nr < NR_MAX)
        .filter_map(|s| {
            let params = s.params?;
            let mut row = [0u8; SPEC_LEN];
            for (i, p) in params.iter().take(6).enumerate() {
                row[i * 8..i * 8 + 8].copy_from_slice(&param(p.kind));
            }
            let mut flags = 0;
            if s.effect == Effect::Exec {
                flags |= SPEC_NEW_IMAGE;
            }
            if s.effect.ends_address_space() {
                flags |= SPEC_ENDS_SPACE;
            }
            flags |= match s.effect {
                Effect::UringSetup => SPEC_URING_SETUP,
                Effect::Map => SPEC_MAPS,
                Effect::Close => SPEC_CLOSES,
                _ => 0,
            };
            row[48..52].copy_from_slice(&flags.to_le_bytes());
            row.iter().any(|&b| b != 0).then_some((s.nr, row))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_the_catalogue() {
        let t = table();
        let row = |name: &str| {
            let nr = reanimator_catalogue::by_name(name).unwrap().nr;
            t.iter().find(|(n, _)| *n == nr).map(|(_, r)| *r)
        };
        // write(fd, buf: in[count], count)
        let w = row("write").unwrap();
        assert_eq!(&w[8..12], &[K_BUF, DIR_IN, 0, 2]);
        // read(fd, buf: out[ret], count)
        let r = row("read").unwrap();
        assert_eq!(&r[8..11], &[K_BUF, DIR_OUT, 1]);
        // openat(dirfd, path, ...)
        assert_eq!(row("openat").unwrap()[8], K_PATH);
        // fstat(fd, statbuf: out struct 144)
        let s = row("fstat").unwrap();
        assert_eq!(&s[8..12], &[K_STRUCT, DIR_OUT, 2, 0]);
        assert_eq!(u32::from_le_bytes(s[12..16].try_into().unwrap()), 144);
        // io_submit(ctx, nr, iocbpp: requests, count in arg 1), read at
        // entry; io_getevents(ctx, min_nr, nr, events: completions, ...)
        // and io_pgetevents, read at exit
        assert_eq!(&row("io_submit").unwrap()[16..20], &[K_IOCBS, DIR_IN, 0, 1]);
        for name in ["io_getevents", "io_pgetevents"] {
            assert_eq!(&row(name).unwrap()[24..26], &[K_IOEVENTS, DIR_OUT]);
        }
        // io_uring_enter(fd, to_submit: requests at entry, min_complete:
        // completions at exit, ...); io_uring_setup's params are a plain
        // structure, and the call is followed, as are mmap and close
        let e = row("io_uring_enter").unwrap();
        assert_eq!(&e[8..10], &[K_URING_SUBMIT, DIR_IN]);
        assert_eq!(&e[16..18], &[K_URING_COMPLETE, DIR_OUT]);
        let s = row("io_uring_setup").unwrap();
        assert_eq!(&s[8..12], &[K_STRUCT, DIR_IN | DIR_OUT, 2, 0]);
        assert_eq!(&s[48..52], &[4, 0, 0, 0]);
        assert_eq!(&row("mmap").unwrap()[48..52], &[8, 0, 0, 0]);
        assert_eq!(&row("close").unwrap()[48..52], &[16, 0, 0, 0]);
        // calls that name no memory are not in the map at all
        assert!(row("getpid").is_none());
        // execve replaces the address space (and ends the old one, as
        // exit_group does, which names no memory but is in the map for
        // that); write does neither
        assert_eq!(&row("execveat").unwrap()[48..52], &[3, 0, 0, 0]);
        assert_eq!(&row("exit_group").unwrap()[48..52], &[2, 0, 0, 0]);
        assert_eq!(&w[48..52], &[0, 0, 0, 0]);
    }
}
