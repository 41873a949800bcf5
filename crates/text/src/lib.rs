/*!
Text and JSON renderings of trace records, decoded by the syscall
catalogue.

`dump` prints these, and the replayer quotes them in mismatch reports, so
a call reads the same everywhere. The strace-like line is for people; the
JSON line carries every field, with buffer data in full (hex), for
programs.

# Overview

- [`Renderer`]: holds the display options and the trace's clock anchor.
- [`Renderer::text`] / [`Renderer::json`]: one record to one line.
- [`errno_name`], [`signal_name`]: symbolic names.
*/

mod names;

use std::fmt::Write;

use reanimator_catalogue::{
    self as catalogue, aio, uring, Dir, FlagSet, Kind, Ret, StructType, Syscall,
};
use reanimator_trace::{
    Capture, CaptureStatus, ClockAnchor, ContentHash, ContentNote, ExitStatus, FileKind, PathPhase,
    Record, Role, StartCause, SyscallEvent, CONTROL_ELEM,
};
use serde_json::{json, Map, Value};

use names::{dirent_type_name, ptrace_event_name, sigchld_code_name};
pub use names::{errno_name, is_restart, signal_name};

/// `AT_FDCWD` as the kernel sees it in a 32-bit dirfd argument.
const AT_FDCWD: i32 = -100;

/// Display options.
#[derive(Debug, Clone, Copy)]
pub struct TextOptions {
    /// Bytes of each string or buffer shown before `...` (strace's `-s`).
    pub max_string: usize,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions { max_string: 32 }
    }
}

/// Renders records of one trace.
#[derive(Debug, Clone)]
pub struct Renderer {
    opts: TextOptions,
    clock: ClockAnchor,
}

impl Renderer {
    /// A renderer for a trace whose clock anchor is `clock`.
    pub fn new(opts: TextOptions, clock: ClockAnchor) -> Self {
        Renderer { opts, clock }
    }

    /// Wall-clock time of day `HH:MM:SS.uuuuuu` (UTC) of a monotonic time.
    fn time_of_day(&self, monotonic_ns: u64) -> String {
        if self.clock.realtime_ns == 0 {
            return format!(
                "{}.{:06}",
                monotonic_ns / 1_000_000_000,
                monotonic_ns % 1_000_000_000 / 1000
            );
        }
        let t = self.clock.to_realtime(monotonic_ns);
        let secs = t / 1_000_000_000;
        let day = secs % 86_400;
        format!(
            "{:02}:{:02}:{:02}.{:06}",
            day / 3600,
            day / 60 % 60,
            day % 60,
            t % 1_000_000_000 / 1000
        )
    }

    /// One strace-like line, without a trailing newline.
    pub fn text(&self, r: &Record) -> String {
        let mut s = format!(
            "#{} {} [{}/{}] ",
            r.seq(),
            self.time_of_day(r.time_ns()),
            r.tgid(),
            r.tid()
        );
        match r {
            Record::Syscall(e) => self.syscall_text(&mut s, e),
            Record::ProcessStart(p) => {
                let cause = match p.cause {
                    StartCause::Spawned => "spawned",
                    StartCause::Attached => "attached",
                    StartCause::Created => "created",
                };
                if p.tid != p.tgid {
                    // A thread shares its process's image, files and
                    // working directory: its start says only whose it is.
                    let _ = write!(s, "=== thread {} of process {} {cause} ===", p.tid, p.tgid);
                    return s;
                }
                let argv: Vec<String> = p
                    .argv
                    .iter()
                    .map(|a| self.quote(a, a.len() as u64))
                    .collect();
                let _ = write!(
                    s,
                    "=== process {} {cause}: exe {} argv [{}] cwd {} umask {:03o} uid {} gid {}{} ppid {}, {} env vars, {} open fds ===",
                    p.tgid,
                    self.path(&p.exe),
                    argv.join(", "),
                    self.path(&p.cwd),
                    p.umask,
                    p.uid,
                    p.gid,
                    p.groups.as_ref().map_or(String::new(), |g| {
                        let g: Vec<String> = g.iter().map(u32::to_string).collect();
                        format!(" groups [{}]", g.join(","))
                    }),
                    p.ppid,
                    p.env.len(),
                    p.fds.len()
                );
            }
            Record::ProcessExit(p) => match p.status {
                ExitStatus::Exited(c) => {
                    let _ = write!(s, "+++ exited with {c} +++");
                }
                ExitStatus::Killed { signal, core } => {
                    let _ = write!(
                        s,
                        "+++ killed by {}{} +++",
                        signal_text(signal.into()),
                        if core { " (core dumped)" } else { "" }
                    );
                }
                ExitStatus::Detached => s.push_str("+++ detached +++"),
                ExitStatus::Superseded { by } => {
                    let _ = write!(s, "+++ superseded by execve in {by} +++");
                }
            },
            Record::Signal(sig) => {
                let _ = write!(
                    s,
                    "--- {} {{si_signo={}, si_code={}, si_pid={}}} ---",
                    signal_text(sig.signo.into()),
                    signal_text(sig.signo.into()),
                    sig.code,
                    sig.sender
                );
            }
            Record::Loss(l) => {
                // A count of 0 is a gap of unknown size (`recover`
                // cannot count what a damaged region held).
                let events = match l.count {
                    0 => "an unknown number of events".to_string(),
                    1 => "1 event".to_string(),
                    n => format!("{n} events"),
                };
                let _ = write!(s, "!!! LOST {events}: {} !!!", l.reason);
            }
            Record::PathState(p) => {
                let phase = match p.phase {
                    PathPhase::Before => "before",
                    PathPhase::After => "after",
                };
                let _ = write!(
                    s,
                    "*** path {phase} {}: {}",
                    self.path(&p.path),
                    p.kind.name()
                );
                if p.kind != FileKind::Absent {
                    let _ = write!(
                        s,
                        " mode {:04o} uid {} gid {} size {}",
                        p.mode, p.uid, p.gid, p.size
                    );
                }
                if p.kind == FileKind::Symlink {
                    let _ = write!(s, " -> {}", self.path(&p.target));
                }
                if p.link != 0 {
                    let _ = write!(s, ", hard link #{}", p.link);
                }
                if !p.xattrs.is_empty() {
                    let _ = write!(s, ", {} xattrs", p.xattrs.len());
                }
                match p.hash {
                    Some(ContentHash::Whole(h)) => {
                        let _ = write!(s, " xxh3 {h:032x}");
                    }
                    Some(ContentHash::Pieces(h)) => {
                        let _ = write!(s, " xxh3-pieces {h:032x}");
                    }
                    None => {}
                }
                match p.content {
                    ContentNote::Complete => s.push_str(", contents follow"),
                    ContentNote::Skipped => s.push_str(", contents not captured"),
                    ContentNote::Unreadable => s.push_str(", contents unreadable"),
                    ContentNote::None => {}
                }
                s.push_str(" ***");
            }
            Record::PathData(d) => {
                let _ = write!(
                    s,
                    "*** path data {} @{}: {} bytes ***",
                    self.path(&d.path),
                    d.offset,
                    d.data.captured
                );
            }
        }
        s
    }

    fn syscall_text(&self, s: &mut String, e: &SyscallEvent) {
        let row = catalogue::by_call(e.nr, &e.args);
        match row {
            Some(row) => s.push_str(row.name),
            None => {
                let _ = write!(s, "syscall_{}", e.nr);
            }
        }
        s.push('(');
        match row.and_then(|r| r.params) {
            Some(params) => {
                let shown = params
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| shown_in_text(e, p.kind));
                for (n, (i, p)) in shown.enumerate() {
                    if n > 0 {
                        s.push_str(", ");
                    }
                    s.push_str(&self.arg_text(e, i as u8, p.kind));
                }
            }
            None => {
                // Undecoded: six raw words, trailing zeros dropped.
                let n = e.args.iter().rposition(|&a| a != 0).map_or(0, |i| i + 1);
                for (i, a) in e.args[..n].iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    let _ = write!(s, "{a:#x}");
                }
            }
        }
        s.push(')');
        match e.exit {
            None => s.push_str(" = ?"),
            Some(x) => {
                if x.is_error {
                    let errno = x.errno();
                    let name =
                        errno_name(errno).map_or_else(|| format!("E{errno}"), str::to_string);
                    if is_restart(errno) {
                        let _ = write!(s, " = ? {name} (to be restarted)");
                    } else {
                        let _ = write!(s, " = -1 {name}");
                    }
                } else {
                    s.push_str(" = ");
                    s.push_str(&ret_text(row, x.ret));
                }
                let d = x.exit_ns.saturating_sub(e.enter_ns);
                let _ = write!(
                    s,
                    " <{}.{:06}>",
                    d / 1_000_000_000,
                    d % 1_000_000_000 / 1000
                );
            }
        }
    }

    /// Quotes bytes strace-style, cut at `max_string`; `real_len` is the
    /// full length, so a cut (or an incomplete capture) shows `...`.
    fn quote(&self, b: &[u8], real_len: u64) -> String {
        quote_cut(b, real_len, self.opts.max_string)
    }

    /// Quotes a path whole, as strace does whatever `-s` says: a mismatch
    /// or a dump must say which file.
    fn path(&self, b: &[u8]) -> String {
        quote_cut(b, b.len() as u64, usize::MAX)
    }

    /// A capture's bytes quoted; one the recorder could not read at all,
    /// or did not capture by policy (`--data none`), says so, since `""`
    /// would pass for an empty string.
    fn capture_text(&self, c: &Capture) -> String {
        self.capture_cut(c, self.opts.max_string)
    }

    /// [`Self::capture_text`], cut at `max` bytes.
    fn capture_cut(&self, c: &Capture, max: usize) -> String {
        match (&c.data, c.status) {
            (Some(d), CaptureStatus::Unreadable) if d.is_empty() => "<unreadable>".into(),
            (Some(d), CaptureStatus::Skipped) if d.is_empty() => {
                format!("<{} bytes not captured>", c.len)
            }
            (Some(d), _) => quote_cut(d, c.len, max),
            (None, CaptureStatus::Complete) => format!("<{} bytes>", c.captured),
            (None, status) => format!("<{} bytes {}>", c.len, status.name()),
        }
    }

    /// Renders argument `idx` of `e` as `kind`.
    fn arg_text(&self, e: &SyscallEvent, idx: u8, kind: Kind) -> String {
        let raw = e.args[idx as usize];
        let failed = e.exit.is_none_or(|x| x.is_error);
        let find = |role: Role, elem: u32| e.capture_elem(idx, role, elem);
        let read_role = |dir: Dir| {
            if dir == Dir::In {
                Role::Entry
            } else {
                Role::Exit
            }
        };
        match kind {
            Kind::Int => (raw as i32).to_string(),
            Kind::UInt | Kind::Size | Kind::Id => raw.to_string(),
            Kind::Pid => (raw as i32).to_string(),
            Kind::Offset => (raw as i64).to_string(),
            // A number shown in hex: 0 is no pointer.
            Kind::Hex if raw == 0 => "0".into(),
            Kind::Hex | Kind::Ptr | Kind::Mapped { .. } => hex_or_null(raw),
            Kind::Fd => (raw as i32).to_string(),
            Kind::DirFd => {
                if raw as i32 == AT_FDCWD {
                    "AT_FDCWD".into()
                } else {
                    (raw as i32).to_string()
                }
            }
            Kind::Signal => signal_text(raw as i32 as i64),
            // mknod's mode names the new file's type, as strace shows it.
            Kind::Mode | Kind::CreateMode if raw as u32 & S_IFMT != 0 => mode_text(raw as u32),
            Kind::Mode | Kind::CreateMode => format!("{:#o}", raw as u32),
            Kind::Dev { mode } if device_mode(e, mode) => makedev_text(raw),
            Kind::Dev { .. } => c_hex(raw),
            Kind::Flags(set) => set.decode(raw),
            Kind::Path => match find(Role::Entry, 0) {
                Some(c) => self.capture_cut(c, usize::MAX),
                None => hex_or_null(raw),
            },
            Kind::Str => match find(Role::Entry, 0) {
                Some(c) => self.capture_text(c),
                None => hex_or_null(raw),
            },
            Kind::StrArray => {
                let items: Vec<String> = e
                    .captures
                    .iter()
                    .filter(|c| c.arg == idx && c.role == Role::Entry)
                    .map(|c| self.capture_text(c))
                    .collect();
                if items.is_empty() {
                    hex_or_null(raw)
                } else {
                    format!("[{}]", items.join(", "))
                }
            }
            Kind::Buf { dir, .. } => {
                let role = if dir == Dir::InOut && !failed {
                    Role::Exit
                } else {
                    read_role(dir)
                };
                match find(role, 0).or_else(|| find(Role::Entry, 0)) {
                    Some(c) => self.capture_text(c),
                    None => hex_or_null(raw),
                }
            }
            Kind::Struct { ty, dir, .. } => {
                let role = if dir == Dir::InOut && !failed {
                    Role::Exit
                } else {
                    read_role(dir)
                };
                match find(role, 0).or_else(|| find(Role::Entry, 0)) {
                    Some(c) => match &c.data {
                        Some(d) => self.struct_text(ty, d, c.len),
                        None => self.capture_text(c),
                    },
                    None => hex_or_null(raw),
                }
            }
            Kind::IoVec { dir, .. } => {
                let role = read_role(dir);
                let elems: Vec<String> = e
                    .captures
                    .iter()
                    .filter(|c| c.arg == idx && c.role == role)
                    .map(|c| format!("{{iov_base={}, iov_len={}}}", self.capture_text(c), c.len))
                    .collect();
                if elems.is_empty() {
                    hex_or_null(raw)
                } else {
                    format!("[{}]", elems.join(", "))
                }
            }
            Kind::MsgHdr { dir } => {
                let role = read_role(dir);
                let elems: Vec<String> = e
                    .captures
                    .iter()
                    .filter(|c| c.arg == idx && c.role == role && c.elem != CONTROL_ELEM)
                    .map(|c| self.capture_text(c))
                    .collect();
                let control = e.capture_elem(idx, role, CONTROL_ELEM);
                if elems.is_empty() && control.is_none() {
                    return hex_or_null(raw);
                }
                let mut s = format!("{{msg_iov=[{}]", elems.join(", "));
                if let Some(data) = control.and_then(|c| c.data.as_deref()) {
                    let parts: Vec<String> = catalogue::msg::ancillary(data)
                        .iter()
                        .map(|a| match (a.level, a.kind) {
                            (catalogue::msg::SOL_SOCKET, catalogue::msg::SCM_RIGHTS) => {
                                format!("SCM_RIGHTS {:?}", a.fds())
                            }
                            (level, kind) => {
                                format!("{{level {level}, type {kind}, {} bytes}}", a.data.len())
                            }
                        })
                        .collect();
                    let _ = write!(s, ", msg_control=[{}]", parts.join(", "));
                }
                s.push('}');
                s
            }
            Kind::IoCbs { .. } => self.aio_text(e, idx, Role::Entry, raw),
            Kind::IoEvents => self.aio_text(e, idx, Role::Exit, raw),
            Kind::UringSubmit | Kind::UringComplete => self.uring_text(e, idx, kind, raw),
        }
    }

    /// io_uring requests (`to_submit`: each SQE the kernel took) or
    /// completions (`min_complete`: each CQE posted since the recorder last
    /// looked), after the argument's value, with the data each carried
    /// (layout in [`catalogue::uring`]).
    fn uring_text(&self, e: &SyscallEvent, idx: u8, kind: Kind, raw: u64) -> String {
        let role = if kind == Kind::UringSubmit {
            Role::Entry
        } else {
            Role::Exit
        };
        let find = |elem: u32| e.capture_elem(idx, role, elem);
        let data = |i: u64| self.request_data_text(&find, i);
        let Some(array) = find(0) else {
            return raw.to_string();
        };
        let Some(bytes) = array
            .data
            .as_deref()
            .filter(|b| !b.is_empty() || array.len == 0)
        else {
            return format!("{raw} {}", self.capture_text(array));
        };
        let items: Vec<String> = if role == Role::Entry {
            uring::Sqe::all(bytes)
                .enumerate()
                .map(|(i, s)| {
                    format!(
                        "{{{}, fd={}{}, len={}, off={}, user_data={:#x}}}",
                        s.op_name(),
                        s.fd,
                        data(i as u64),
                        s.len,
                        s.off as i64,
                        s.user_data
                    )
                })
                .collect()
        } else {
            uring::Cqe::all(bytes)
                .enumerate()
                .map(|(i, c)| {
                    format!(
                        "{{user_data={:#x}, res={}{}}}",
                        c.user_data,
                        c.res,
                        data(i as u64)
                    )
                })
                .collect()
        };
        let cut = if array.status == CaptureStatus::Complete {
            ""
        } else {
            ", ..."
        };
        format!("{raw} [{}{cut}]", items.join(", "))
    }

    /// The data elements of asynchronous request or completion `i` (the
    /// layout Linux AIO and io_uring share), as `, buf=...` or
    /// `, iov=[...]`, or nothing.
    fn request_data_text<'c>(&self, find: &impl Fn(u32) -> Option<&'c Capture>, i: u64) -> String {
        let parts: Vec<String> = (1..)
            .map_while(|j| find(aio::elem(i, j)))
            .map(|c| self.capture_text(c))
            .collect();
        match parts.len() {
            0 => String::new(),
            1 => format!(", buf={}", parts[0]),
            _ => format!(", iov=[{}]", parts.join(", ")),
        }
    }

    /// Linux AIO requests (`role` entry: each `iocb`) or completions (exit:
    /// each `io_event`), with the data each carried (layout in
    /// [`catalogue::aio`]).
    fn aio_text(&self, e: &SyscallEvent, idx: u8, role: Role, raw: u64) -> String {
        let find = |elem: u32| e.capture_elem(idx, role, elem);
        let data = |i: u64| self.request_data_text(&find, i);
        let Some(array) = find(0) else {
            return hex_or_null(raw);
        };
        let Some(bytes) = array.data.as_deref() else {
            return self.capture_text(array);
        };
        let items: Vec<String> = if role == Role::Entry {
            (0..bytes.len() as u64 / 8)
                .map(
                    |i| match find(aio::elem(i, 0)).and_then(|c| c.data.as_deref()) {
                        Some(b) => match aio::Iocb::parse(b) {
                            Some(cb) => format!(
                                "{{{}, fd={}{}, nbytes={}, offset={}, data={:#x}}}",
                                cb.op_name(),
                                cb.fd,
                                data(i),
                                cb.nbytes,
                                cb.offset,
                                cb.data
                            ),
                            None => "{?}".into(),
                        },
                        None => "{<unreadable>}".into(),
                    },
                )
                .collect()
        } else {
            aio::events(bytes)
                .enumerate()
                .map(|(i, ev)| {
                    format!(
                        "{{data={:#x}, obj={:#x}, res={}{}}}",
                        ev.data,
                        ev.obj,
                        ev.res,
                        data(i as u64)
                    )
                })
                .collect()
        };
        format!("[{}]", items.join(", "))
    }

    fn struct_text(&self, ty: StructType, d: &[u8], len: u64) -> String {
        let u64_at = |o: usize| {
            d.get(o..o + 8)
                .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
        };
        let u32_at = |o: usize| {
            d.get(o..o + 4)
                .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
        };
        let u16_at = |o: usize| {
            d.get(o..o + 2)
                .map(|b| u16::from_le_bytes(b.try_into().expect("2 bytes")))
        };
        let decoded = match ty {
            StructType::Stat => match (u32_at(24), u64_at(48)) {
                (Some(mode), Some(size)) => Some(format!(
                    "{{st_mode={}, st_size={size}, ...}}",
                    mode_text(mode)
                )),
                _ => None,
            },
            StructType::Statx => match (u16_at(28), u64_at(40)) {
                (Some(mode), Some(size)) => Some(format!(
                    "{{stx_mode={}, stx_size={size}, ...}}",
                    mode_text(mode.into())
                )),
                _ => None,
            },
            StructType::FdPair => match (u32_at(0), u32_at(4)) {
                (Some(a), Some(b)) => Some(format!("[{}, {}]", a as i32, b as i32)),
                _ => None,
            },
            StructType::Int | StructType::Socklen => u32_at(0).map(|v| format!("[{}]", v as i32)),
            StructType::WaitStatus => u32_at(0).map(|v| format!("[{}]", wait_status_text(v))),
            StructType::Siginfo => siginfo_text(d),
            StructType::CloneArgs => clone_args_text(d, len),
            StructType::Dirents64 | StructType::Dirents => {
                Some(self.dirents_text(ty == StructType::Dirents64, d, len))
            }
            StructType::Loff => u64_at(0).map(|v| format!("[{}]", v as i64)),
            StructType::Gids => Some(format!(
                "[{}]",
                catalogue::gids(d)
                    .map(|g| g.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            StructType::Fds => Some(format!(
                "[{}]",
                catalogue::gids(d)
                    .map(|fd| (fd as i32).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            StructType::AioContext => u64_at(0).map(|v| format!("[{v:#x}]")),
            StructType::CapHeader => match (u32_at(0), u32_at(4)) {
                (Some(v), Some(pid)) => Some(format!("{{version={v:#x}, pid={}}}", pid as i32)),
                _ => None,
            },
            StructType::CapData => {
                let set = |o: usize| Some(u64::from(u32_at(o)?) | u64::from(u32_at(o + 12)?) << 32);
                match (set(0), set(4), set(8)) {
                    (Some(e), Some(p), Some(i)) => Some(format!(
                        "{{effective={e:#x}, permitted={p:#x}, inheritable={i:#x}}}"
                    )),
                    _ => None,
                }
            }
            StructType::UringParams => uring::Params::parse(d).map(|p| {
                format!(
                    "{{sq_entries={}, cq_entries={}, flags={:#x}, features={:#x}, ...}}",
                    p.sq_entries, p.cq_entries, p.flags, p.features
                )
            }),
            StructType::NameList if d.last() == Some(&0) => Some(format!(
                "[{}]",
                d[..d.len() - 1]
                    .split(|&b| b == 0)
                    .map(|n| self.quote(n, n.len() as u64))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            StructType::Timespec => match (u64_at(0), u64_at(8)) {
                (Some(sec), Some(nsec)) => Some(format!(
                    "{{tv_sec={}, tv_nsec={}}}",
                    sec as i64, nsec as i64
                )),
                _ => None,
            },
            StructType::Timespec2 => match (u64_at(0), u64_at(8), u64_at(16), u64_at(24)) {
                (Some(a), Some(an), Some(m), Some(mn)) => Some(format!(
                    "[{}, {}]",
                    utime_text(a as i64, an as i64),
                    utime_text(m as i64, mn as i64)
                )),
                _ => None,
            },
            _ => None,
        };
        decoded.unwrap_or_else(|| self.quote(d, len))
    }

    /// Directory entries (`getdents64`'s `linux_dirent64` records, or
    /// `getdents`' `linux_dirent` when not `is64`), as strace shows them:
    /// at most `max_string` entries, then `...` and how many there were;
    /// names whole, as paths are. A record that does not fit the bytes
    /// captured ends the list with `...`.
    fn dirents_text(&self, is64: bool, d: &[u8], len: u64) -> String {
        // Where the name starts: after d_type (64) or d_reclen (old).
        let name_at = if is64 { 19 } else { 18 };
        let mut items = Vec::new();
        let (mut at, mut count) = (0, 0u64);
        while at < d.len() {
            let rec = &d[at..];
            let reclen = match rec.get(16..18) {
                Some(b) => usize::from(u16::from_le_bytes([b[0], b[1]])),
                None => break,
            };
            if reclen <= name_at || reclen > rec.len() {
                break;
            }
            count += 1;
            at += reclen;
            if items.len() >= self.opts.max_string {
                continue;
            }
            let word = |o: usize| u64::from_le_bytes(rec[o..o + 8].try_into().expect("8 bytes"));
            // The old record keeps d_type in its last byte, after the name.
            let (names, kind) = if is64 {
                (&rec[name_at..reclen], rec[18])
            } else {
                (&rec[name_at..reclen - 1], rec[reclen - 1])
            };
            let name = &names[..names.iter().position(|&b| b == 0).unwrap_or(names.len())];
            let (ino, off) = (word(0), word(8));
            let off = if is64 {
                (off as i64).to_string()
            } else {
                off.to_string()
            };
            let kind = dirent_type_name(kind).map_or_else(|| kind.to_string(), str::to_string);
            let name = self.path(name);
            items.push(if is64 {
                format!(
                    "{{d_ino={ino}, d_off={off}, d_reclen={reclen}, d_type={kind}, d_name={name}}}"
                )
            } else {
                format!(
                    "{{d_ino={ino}, d_off={off}, d_reclen={reclen}, d_name={name}, d_type={kind}}}"
                )
            });
        }
        let whole = at == d.len() && d.len() as u64 >= len;
        let cut = (count as usize) > items.len();
        if cut || !whole {
            items.push("...".into());
        }
        let mut s = format!("[{}]", items.join(", "));
        if cut && whole {
            let _ = write!(s, " /* {count} entries */");
        }
        s
    }

    /// One JSON object with every field of the record, buffer data in full
    /// as hex.
    pub fn json(&self, r: &Record) -> Value {
        let mut o = Map::new();
        o.insert("seq".into(), json!(r.seq()));
        o.insert("time_ns".into(), json!(r.time_ns()));
        o.insert(
            "realtime_ns".into(),
            json!(self.clock.to_realtime(r.time_ns())),
        );
        o.insert("tgid".into(), json!(r.tgid()));
        o.insert("tid".into(), json!(r.tid()));
        match r {
            Record::Syscall(e) => {
                let row = catalogue::by_call(e.nr, &e.args);
                o.insert("type".into(), json!("syscall"));
                o.insert("nr".into(), json!(e.nr));
                o.insert("name".into(), json!(catalogue::name_of(e.nr)));
                let mut args = Map::new();
                for (i, p) in row.map(Syscall::params).unwrap_or(&[]).iter().enumerate() {
                    args.insert(p.name.into(), self.arg_json(e, i as u8, p.kind));
                }
                o.insert("args".into(), Value::Object(args));
                o.insert("raw_args".into(), json!(e.args));
                if let Some(x) = e.exit {
                    o.insert("exit_ns".into(), json!(x.exit_ns));
                    o.insert(
                        "duration_ns".into(),
                        json!(x.exit_ns.saturating_sub(e.enter_ns)),
                    );
                    o.insert("ret".into(), json!(x.ret));
                    o.insert("errno".into(), json!(x.errno()));
                    o.insert("errno_name".into(), json!(errno_name(x.errno())));
                } else {
                    o.insert("ret".into(), Value::Null);
                }
                let params = row.map(Syscall::params).unwrap_or(&[]);
                let caps: Vec<Value> = e
                    .captures
                    .iter()
                    .map(|c| {
                        json!({
                            "arg": c.arg,
                            "param": params.get(c.arg as usize).map(|p| p.name),
                            "role": match c.role { Role::Entry => "entry", Role::Exit => "exit" },
                            "elem": c.elem,
                            "status": c.status.name(),
                            "len": c.len,
                            "captured": c.captured,
                            "data_hex": c.data.as_deref().map(hex),
                        })
                    })
                    .collect();
                o.insert("captures".into(), Value::Array(caps));
            }
            Record::ProcessStart(p) => {
                let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                o.insert("type".into(), json!("process_start"));
                o.insert(
                    "cause".into(),
                    json!(match p.cause {
                        StartCause::Spawned => "spawned",
                        StartCause::Attached => "attached",
                        StartCause::Created => "created",
                    }),
                );
                o.insert("ppid".into(), json!(p.ppid));
                o.insert("uid".into(), json!(p.uid));
                o.insert("gid".into(), json!(p.gid));
                o.insert("euid".into(), json!(p.euid));
                o.insert("egid".into(), json!(p.egid));
                if let Some(groups) = &p.groups {
                    o.insert("groups".into(), json!(groups));
                }
                o.insert("umask".into(), json!(p.umask));
                o.insert("cwd".into(), json!(s(&p.cwd)));
                o.insert("exe".into(), json!(s(&p.exe)));
                o.insert(
                    "argv".into(),
                    json!(p.argv.iter().map(|a| s(a)).collect::<Vec<_>>()),
                );
                o.insert(
                    "env".into(),
                    json!(p.env.iter().map(|a| s(a)).collect::<Vec<_>>()),
                );
                let fds: Vec<Value> = p
                    .fds
                    .iter()
                    .map(|f| {
                        let mut o = json!({"fd": f.fd, "flags": f.flags, "offset": f.offset, "target": s(&f.target)});
                        if let Some(lower) = f.same_as {
                            // Shares descriptor `lower`'s open file description.
                            o["same_as"] = json!(lower);
                        }
                        o
                    })
                    .collect();
                o.insert("fds".into(), Value::Array(fds));
            }
            Record::ProcessExit(p) => {
                o.insert("type".into(), json!("process_exit"));
                match p.status {
                    ExitStatus::Exited(c) => {
                        o.insert("exit_code".into(), json!(c));
                    }
                    ExitStatus::Killed { signal, core } => {
                        o.insert("signal".into(), json!(signal));
                        o.insert("core_dumped".into(), json!(core));
                    }
                    ExitStatus::Superseded { by } => {
                        o.insert("superseded_by".into(), json!(by));
                    }
                    ExitStatus::Detached => {
                        o.insert("detached".into(), json!(true));
                    }
                }
            }
            Record::Signal(s) => {
                o.insert("type".into(), json!("signal"));
                o.insert("signo".into(), json!(s.signo));
                o.insert("signal".into(), json!(signal_name(s.signo.into())));
                o.insert("code".into(), json!(s.code));
                o.insert("sender".into(), json!(s.sender));
            }
            Record::Loss(l) => {
                o.insert("type".into(), json!("loss"));
                o.insert("count".into(), json!(l.count));
                o.insert("reason".into(), json!(l.reason));
            }
            Record::PathState(p) => {
                let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                o.insert("type".into(), json!("path_state"));
                o.insert(
                    "phase".into(),
                    json!(match p.phase {
                        PathPhase::Before => "before",
                        PathPhase::After => "after",
                    }),
                );
                o.insert("path".into(), json!(s(&p.path)));
                o.insert("kind".into(), json!(p.kind.name()));
                o.insert("mode".into(), json!(p.mode));
                o.insert("uid".into(), json!(p.uid));
                o.insert("gid".into(), json!(p.gid));
                o.insert("size".into(), json!(p.size));
                o.insert("target".into(), json!(s(&p.target)));
                let xattrs: Vec<Value> = p
                    .xattrs
                    .iter()
                    .map(|(n, v)| json!({"name": s(n), "value_hex": hex(v)}))
                    .collect();
                o.insert("xattrs".into(), Value::Array(xattrs));
                o.insert("link".into(), json!(p.link));
                let (whole, pieces) = match p.hash {
                    Some(ContentHash::Whole(h)) => (Some(h), None),
                    Some(ContentHash::Pieces(h)) => (None, Some(h)),
                    None => (None, None),
                };
                o.insert("xxh3".into(), json!(whole.map(|h| format!("{h:032x}"))));
                o.insert(
                    "xxh3_pieces".into(),
                    json!(pieces.map(|h| format!("{h:032x}"))),
                );
                o.insert(
                    "content".into(),
                    json!(match p.content {
                        ContentNote::None => "none",
                        ContentNote::Complete => "complete",
                        ContentNote::Skipped => "skipped",
                        ContentNote::Unreadable => "unreadable",
                    }),
                );
            }
            Record::PathData(d) => {
                o.insert("type".into(), json!("path_data"));
                o.insert("path".into(), json!(String::from_utf8_lossy(&d.path)));
                o.insert("offset".into(), json!(d.offset));
                o.insert("len".into(), json!(d.data.captured));
                o.insert("data_hex".into(), json!(d.data.data.as_deref().map(hex)));
            }
        }
        Value::Object(o)
    }

    fn arg_json(&self, e: &SyscallEvent, idx: u8, kind: Kind) -> Value {
        let raw = e.args[idx as usize];
        match kind {
            Kind::DirFd if raw as i32 == AT_FDCWD => json!("AT_FDCWD"),
            Kind::Int | Kind::Pid | Kind::Fd | Kind::DirFd => json!(raw as i32),
            Kind::UInt | Kind::Size | Kind::Id => json!(raw),
            Kind::Offset => json!(raw as i64),
            Kind::Path | Kind::Str => {
                match e.capture(idx, Role::Entry).and_then(|c| c.data.as_deref()) {
                    Some(d) => json!(String::from_utf8_lossy(d)),
                    None => json!(hex_or_null(raw)),
                }
            }
            _ => json!(self.arg_text(e, idx, kind)),
        }
    }
}

fn ret_text(row: Option<&Syscall>, ret: i64) -> String {
    match row.map(|r| r.ret) {
        Some(Ret::Addr | Ret::Hex) => format!("{:#x}", ret as u64),
        _ => ret.to_string(),
    }
}

/// Bytes quoted strace-style, cut at `max` bytes; `real_len` is the full
/// length, so a cut (or an incomplete capture) shows `...`.
fn quote_cut(b: &[u8], real_len: u64, max: usize) -> String {
    let shown = &b[..b.len().min(max)];
    let mut s = String::with_capacity(shown.len() + 2);
    s.push('"');
    for &c in shown {
        match c {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            b'\t' => s.push_str("\\t"),
            b'\r' => s.push_str("\\r"),
            0x20..=0x7e => s.push(c as char),
            _ => {
                let _ = write!(s, "\\x{c:02x}");
            }
        }
    }
    s.push('"');
    if (shown.len() as u64) < real_len {
        s.push_str("...");
    }
    s
}

fn hex_or_null(v: u64) -> String {
    if v == 0 {
        "NULL".into()
    } else {
        format!("{v:#x}")
    }
}

fn signal_text(n: i64) -> String {
    signal_name(n).map_or_else(|| n.to_string(), str::to_string)
}

/// The file-type bits of a mode (`S_IFMT`).
const S_IFMT: u32 = 0o170000;

/// Whether argument `idx` of `e` is the mode of a character or block
/// device, whose device number then means something.
fn device_mode(e: &SyscallEvent, idx: u8) -> bool {
    e.args
        .get(usize::from(idx))
        .is_some_and(|&m| matches!(m as u32 & S_IFMT, 0o020000 | 0o060000))
}

/// Whether an argument of `kind` appears in the text line: as in strace,
/// mknod's device number only for a device.
fn shown_in_text(e: &SyscallEvent, kind: Kind) -> bool {
    match kind {
        Kind::Dev { mode } => device_mode(e, mode),
        _ => true,
    }
}

/// A number in hexadecimal as C's `%#x` prints it: `0`, `0x1f`.
fn c_hex(v: u64) -> String {
    if v == 0 {
        "0".into()
    } else {
        format!("{v:#x}")
    }
}

/// A device number as glibc splits it: `makedev(0x1, 0x3)`.
fn makedev_text(dev: u64) -> String {
    let major = (dev >> 8) as u32 & 0xfff | (dev >> 32) as u32 & !0xfff;
    let minor = dev as u32 & 0xff | (dev >> 12) as u32 & !0xff;
    format!("makedev({}, {})", c_hex(major.into()), c_hex(minor.into()))
}

/// A wait status as strace shows it: `{WIFEXITED(s) && WEXITSTATUS(s) ==
/// 0}`, `{WIFSIGNALED(s) && WTERMSIG(s) == SIGKILL && WCOREDUMP(s)}`, with
/// a ptrace event and any bits left over after the decoded part.
fn wait_status_text(status: u32) -> String {
    let low = status & 0x7f;
    let (mut s, rest) = if status & 0xff == 0x7f {
        let sig = (status >> 8) & 0xff;
        (
            format!(
                "{{WIFSTOPPED(s) && WSTOPSIG(s) == {}{}}}",
                signal_text((sig & 0x7f).into()),
                if sig & 0x80 != 0 { " | 0x80" } else { "" }
            ),
            status & !0xffff,
        )
    } else if low != 0 && low != 0x7f {
        (
            format!(
                "{{WIFSIGNALED(s) && WTERMSIG(s) == {}{}}}",
                signal_text(low.into()),
                if status & 0x80 != 0 {
                    " && WCOREDUMP(s)"
                } else {
                    ""
                }
            ),
            status & !0xff,
        )
    } else if low == 0 {
        (
            format!(
                "{{WIFEXITED(s) && WEXITSTATUS(s) == {}}}",
                (status >> 8) & 0xff
            ),
            status & !0xffff,
        )
    } else if status == 0xffff {
        ("{WIFCONTINUED(s)}".to_string(), 0)
    } else {
        return format!("{status:#x}");
    };
    let event = rest >> 16;
    if event != 0 {
        match ptrace_event_name(event) {
            Some(name) => {
                let _ = write!(s, " | {name} << 16");
            }
            None => {
                let _ = write!(s, " | {:#x}", event << 16);
            }
        }
    }
    if rest & 0xffff != 0 {
        let _ = write!(s, " | {:#x}", rest & 0xffff);
    }
    s
}

/// `SIGCHLD`'s `CLD_EXITED`: `si_status` is an exit code, not a signal.
const CLD_EXITED: i32 = 1;

/// The `siginfo_t` waitid fills, as strace shows it: `{si_signo=SIGCHLD,
/// si_code=CLD_EXITED, si_pid=42, si_uid=0, si_status=0}`, or `{}` when
/// no child changed state (`WNOHANG`). waitid sets no other field.
fn siginfo_text(d: &[u8]) -> Option<String> {
    let int = |o: usize| {
        d.get(o..o + 4)
            .map(|b| i32::from_le_bytes(b.try_into().expect("4 bytes")))
    };
    let (signo, code) = (int(0)?, int(8)?);
    if signo == 0 {
        return Some("{}".into());
    }
    let name = signal_text(signo.into());
    if name != "SIGCHLD" {
        return Some(format!("{{si_signo={name}, si_code={code}, ...}}"));
    }
    let status = int(24)?;
    Some(format!(
        "{{si_signo={name}, si_code={}, si_pid={}, si_uid={}, si_status={}}}",
        sigchld_code_name(code).map_or_else(|| code.to_string(), str::to_string),
        int(16)?,
        int(20)? as u32,
        if code == CLD_EXITED {
            status.to_string()
        } else {
            signal_text(status.into())
        }
    ))
}

/// `struct clone_args` (clone3), the fields its `size` covers:
/// `{flags=CLONE_VM|CLONE_VFORK, pidfd=NULL, ..., exit_signal=SIGCHLD,
/// stack=0x7f.., stack_size=0x9000, tls=NULL}`; `...` for bytes beyond
/// the fields known or not captured.
fn clone_args_text(d: &[u8], len: u64) -> Option<String> {
    let word = |i: usize| {
        d.get(i * 8..i * 8 + 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    };
    let decimal = |v: u64| v.to_string();
    let signal = |v: u64| signal_text(v as i64);
    let fields: [(&str, &dyn Fn(u64) -> String); 10] = [
        ("pidfd", &hex_or_null),
        ("child_tid", &hex_or_null),
        ("parent_tid", &hex_or_null),
        ("exit_signal", &signal),
        ("stack", &hex_or_null),
        ("stack_size", &c_hex),
        ("tls", &hex_or_null),
        ("set_tid", &hex_or_null),
        ("set_tid_size", &decimal),
        ("cgroup", &decimal),
    ];
    let mut s = format!("{{flags={}", FlagSet::Clone3.decode(word(0)?));
    for (i, (name, show)) in fields.iter().enumerate() {
        let Some(v) = word(i + 1) else { break };
        let _ = write!(s, ", {name}={}", show(v));
    }
    if d.len() > 8 * (fields.len() + 1) || !d.len().is_multiple_of(8) || (d.len() as u64) < len {
        s.push_str(", ...");
    }
    s.push('}');
    Some(s)
}

/// `UTIME_NOW` and `UTIME_OMIT`: a `tv_nsec` that sets a time to now, or
/// leaves it.
const UTIME_NOW: i64 = (1 << 30) - 1;
/// See [`UTIME_NOW`].
const UTIME_OMIT: i64 = (1 << 30) - 2;

/// One time of utimensat: strace shows the special `tv_nsec` values
/// alone, since the kernel ignores `tv_sec` with them.
fn utime_text(sec: i64, nsec: i64) -> String {
    match nsec {
        UTIME_NOW => "UTIME_NOW".into(),
        UTIME_OMIT => "UTIME_OMIT".into(),
        _ => format!("{{tv_sec={sec}, tv_nsec={nsec}}}"),
    }
}

/// `S_IFREG|0644`.
fn mode_text(mode: u32) -> String {
    let ty = match mode & S_IFMT {
        0o140000 => "S_IFSOCK|",
        0o120000 => "S_IFLNK|",
        0o100000 => "S_IFREG|",
        0o060000 => "S_IFBLK|",
        0o040000 => "S_IFDIR|",
        0o020000 => "S_IFCHR|",
        0o010000 => "S_IFIFO|",
        _ => "",
    };
    format!("{ty}{:04o}", mode & 0o7777)
}

fn hex(d: &[u8]) -> String {
    let mut s = String::with_capacity(d.len() * 2);
    for b in d {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use reanimator_trace::{ProcessStart, SignalDelivery, SyscallExit};

    fn cap(arg: u8, role: Role, data: &[u8]) -> Capture {
        Capture {
            arg,
            role,
            elem: 0,
            status: CaptureStatus::Complete,
            len: data.len() as u64,
            captured: data.len() as u64,
            data: Some(data.to_vec().into()),
        }
    }

    fn call(nr: u32, args: [u64; 6], ret: i64, is_error: bool, captures: Vec<Capture>) -> Record {
        Record::Syscall(SyscallEvent {
            seq: 7,
            tgid: 10,
            tid: 11,
            nr,
            enter_ns: 1_000,
            args,
            exit: Some(SyscallExit {
                exit_ns: 13_000,
                ret,
                is_error,
            }),
            captures,
        })
    }

    fn line(r: &Record) -> String {
        let t = Renderer::new(TextOptions { max_string: 8 }, ClockAnchor::default()).text(r);
        t.split_once("] ").unwrap().1.to_string()
    }

    #[test]
    fn strace_like_lines() {
        let w = call(
            1,
            [1, 0x1000, 11, 0, 0, 0],
            11,
            false,
            vec![cap(1, Role::Entry, b"hello\nworld")],
        );
        assert_eq!(line(&w), r#"write(1, "hello\nwo"..., 11) = 11 <0.000012>"#);
        let o = call(
            257,
            [(-100i64) as u64, 0x2000, 0o1101, 0o644, 0, 0],
            -2,
            true,
            vec![cap(1, Role::Entry, b"/x")],
        );
        assert_eq!(
            line(&o),
            r#"openat(AT_FDCWD, "/x", O_WRONLY|O_CREAT|O_TRUNC, 0o644) = -1 ENOENT <0.000012>"#
        );
        let r = call(0, [3, 0x1000, 4096, 0, 0, 0], -512, true, vec![]);
        assert_eq!(
            line(&r),
            "read(3, 0x1000, 4096) = ? ERESTARTSYS (to be restarted) <0.000012>"
        );
        let unknown = call(100_000, [1, 0, 3, 0, 0, 0], 0, false, vec![]);
        assert_eq!(
            line(&unknown),
            "syscall_100000(0x1, 0x0, 0x3) = 0 <0.000012>"
        );
        let sig = Record::Signal(SignalDelivery {
            seq: 1,
            time_ns: 0,
            tgid: 1,
            tid: 1,
            signo: 17,
            code: 1,
            sender: 5,
        });
        assert_eq!(
            line(&sig),
            "--- SIGCHLD {si_signo=SIGCHLD, si_code=1, si_pid=5} ---"
        );
    }

    /// Paths show whole, as strace shows them whatever `-s` says: a
    /// mismatch line cut at 32 bytes did not say which file.
    #[test]
    fn paths_are_never_cut() {
        let long = b"/var/tmp/a-rather-long-directory-name/and/a/file";
        let open = call(
            257,
            [(-100i64) as u64, 0x2000, 0, 0, 0, 0],
            3,
            false,
            vec![cap(1, Role::Entry, long)],
        );
        assert!(line(&open).starts_with(
            "openat(AT_FDCWD, \"/var/tmp/a-rather-long-directory-name/and/a/file\", O_RDONLY"
        ));
    }

    /// `fcntl`'s third argument shows as what its command makes it, or
    /// not at all; before, always as a pointer (`F_DUPFD, 0xa`,
    /// `F_GETFD, NULL`).
    #[test]
    fn fcntl_arguments_by_command() {
        let fcntl = |cmd: u64, arg: u64| line(&call(72, [3, cmd, arg, 0, 0, 0], 0, false, vec![]));
        assert!(fcntl(0, 10).starts_with("fcntl(3, F_DUPFD, 10) = 0"));
        assert!(fcntl(1030, 10).starts_with("fcntl(3, F_DUPFD_CLOEXEC, 10) = 0"));
        assert!(fcntl(1, 0).starts_with("fcntl(3, F_GETFD) = 0"));
        assert!(fcntl(2, 1).starts_with("fcntl(3, F_SETFD, FD_CLOEXEC) = 0"));
        assert!(fcntl(4, 0o4000 | 0o2000).starts_with("fcntl(3, F_SETFL, O_APPEND|O_NONBLOCK) = 0"));
        assert!(fcntl(3, 0).starts_with("fcntl(3, F_GETFL) = 0"));
        // Locks take a pointer; unknown commands keep the hex word.
        assert!(fcntl(6, 0x7ffd_0000).starts_with("fcntl(3, F_SETLK, 0x7ffd0000) = 0"));
        assert!(fcntl(1033, 0).starts_with("fcntl(3, F_ADD_SEALS, 0) = 0"));
    }

    /// An argument the recorder could not read is not shown as an empty
    /// string; one that is empty is.
    #[test]
    fn unreadable_strings_say_so() {
        let element = |elem: u32, data: &[u8], status: CaptureStatus| Capture {
            elem,
            status,
            ..cap(1, Role::Entry, data)
        };
        let e = call(
            59,
            [0x1000, 0x2000, 0, 0, 0, 0],
            0,
            false,
            vec![
                cap(0, Role::Entry, b"/bin/ls"),
                element(0, b"touch", CaptureStatus::Complete),
                element(1, b"", CaptureStatus::Unreadable),
                element(2, b"", CaptureStatus::Complete),
            ],
        );
        assert_eq!(
            line(&e),
            r#"execve("/bin/ls", ["touch", <unreadable>, ""], NULL) = 0 <0.000012>"#
        );
    }

    /// A thread's start names the thread and its process, not a process
    /// with an empty command line.
    #[test]
    fn thread_starts_are_not_process_starts() {
        let start = |tid| {
            Record::ProcessStart(ProcessStart {
                tgid: 10,
                tid,
                ppid: 9,
                cause: StartCause::Created,
                exe: b"/bin/x".to_vec(),
                ..ProcessStart::default()
            })
        };
        assert_eq!(line(&start(11)), "=== thread 11 of process 10 created ===");
        assert!(line(&start(10)).starts_with(r#"=== process 10 created: exe "/bin/x""#));
    }

    /// One `linux_dirent64` record (`is64`) or `linux_dirent` record,
    /// padded to 8 bytes as the kernel lays them out.
    fn dirent(is64: bool, ino: u64, off: u64, kind: u8, name: &str) -> Vec<u8> {
        let head = if is64 { 19 } else { 18 };
        let reclen = (head + name.len() + 1 + usize::from(!is64)).next_multiple_of(8);
        let mut r = vec![0u8; reclen];
        r[0..8].copy_from_slice(&ino.to_le_bytes());
        r[8..16].copy_from_slice(&off.to_le_bytes());
        r[16..18].copy_from_slice(&(reclen as u16).to_le_bytes());
        r[head..head + name.len()].copy_from_slice(name.as_bytes());
        if is64 {
            r[18] = kind;
        } else {
            r[reclen - 1] = kind;
        }
        r
    }

    /// Directory entries show as strace shows them, at most `-s` of them
    /// (then `...` and the count); before, as the buffer's first bytes.
    #[test]
    fn directory_entries_are_decoded() {
        let mut d = dirent(true, 2, 1, 4, ".");
        d.extend(dirent(true, 7, 2, 8, "a \"name\""));
        d.extend(dirent(true, 9, i64::MAX as u64, 1, "fifo"));
        let getdents64 = |d: &[u8]| {
            let n = d.len() as u64;
            line(&call(
                217,
                [3, 0x1000, 32768, 0, 0, 0],
                n as i64,
                false,
                vec![cap(1, Role::Exit, d)],
            ))
        };
        assert_eq!(
            getdents64(&d),
            "getdents64(3, [{d_ino=2, d_off=1, d_reclen=24, d_type=DT_DIR, d_name=\".\"}, \
             {d_ino=7, d_off=2, d_reclen=32, d_type=DT_REG, d_name=\"a \\\"name\\\"\"}, \
             {d_ino=9, d_off=9223372036854775807, d_reclen=24, d_type=DT_FIFO, d_name=\"fifo\"}], \
             32768) = 80 <0.000012>"
        );
        assert_eq!(getdents64(&[]), "getdents64(3, [], 32768) = 0 <0.000012>");
        // More than `-s` (8 here): eight shown, then how many there were.
        let many: Vec<u8> = (0..10u64)
            .flat_map(|i| dirent(true, i, i + 1, 8, &format!("file-{i}-with-a-long-name")))
            .collect();
        let text = getdents64(&many);
        assert!(
            text.starts_with("getdents64(3, [{d_ino=0, d_off=1, d_reclen=48, d_type=DT_REG, d_name=\"file-0-with-a-long-name\"}, "),
            "{text}"
        );
        assert!(
            text.ends_with("{d_ino=7, d_off=8, d_reclen=48, d_type=DT_REG, d_name=\"file-7-with-a-long-name\"}, ...] /* 10 entries */, 32768) = 480 <0.000012>"),
            "{text}"
        );
        // A record the capture cut short ends the list.
        let cut = &d[..40];
        let text = line(&call(
            217,
            [3, 0x1000, 32768, 0, 0, 0],
            80,
            false,
            vec![Capture {
                len: 80,
                ..cap(1, Role::Exit, cut)
            }],
        ));
        assert_eq!(
            text,
            "getdents64(3, [{d_ino=2, d_off=1, d_reclen=24, d_type=DT_DIR, d_name=\".\"}, ...], 32768) = 80 <0.000012>"
        );
        // The old record: d_type in its last byte, after the name.
        let mut old = dirent(false, 5, 10, 4, "..");
        old.extend(dirent(false, 6, 20, 10, "link"));
        let n = old.len() as i64;
        assert_eq!(
            line(&call(78, [3, 0x1000, 4096, 0, 0, 0], n, false, vec![cap(1, Role::Exit, &old)])),
            "getdents(3, [{d_ino=5, d_off=10, d_reclen=24, d_name=\"..\", d_type=DT_DIR}, \
             {d_ino=6, d_off=20, d_reclen=24, d_name=\"link\", d_type=DT_LNK}], 4096) = 48 <0.000012>"
        );
    }

    /// `struct clone_args` shows its fields, as many as its size covers;
    /// before, as raw bytes.
    #[test]
    fn clone3_arguments_are_decoded() {
        let args =
            |words: &[u64]| -> Vec<u8> { words.iter().flat_map(|w| w.to_le_bytes()).collect() };
        let clone3 = |d: &[u8]| {
            line(&call(
                435,
                [0x1000, d.len() as u64, 0, 0, 0, 0],
                42,
                false,
                vec![cap(0, Role::Entry, d)],
            ))
        };
        // posix_spawn's: CLONE_VM|CLONE_VFORK, SIGCHLD, its own stack.
        let spawn = args(&[0x4100, 0, 0, 0, 17, 0x7f00_0000_0000, 0x9000, 0, 0, 0, 0]);
        assert_eq!(
            clone3(&spawn),
            "clone3({flags=CLONE_VM|CLONE_VFORK, pidfd=NULL, child_tid=NULL, parent_tid=NULL, \
             exit_signal=SIGCHLD, stack=0x7f0000000000, stack_size=0x9000, tls=NULL, \
             set_tid=NULL, set_tid_size=0, cgroup=0}, 88) = 42 <0.000012>"
        );
        // The first version's 64 bytes; flags clone has no room for.
        let v0 = args(&[0x1_0000_1080, 0x7ffc_0000_0010, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            clone3(&v0),
            "clone3({flags=CLONE_NEWTIME|CLONE_PIDFD|CLONE_CLEAR_SIGHAND, pidfd=0x7ffc00000010, \
             child_tid=NULL, parent_tid=NULL, exit_signal=0, stack=NULL, stack_size=0, \
             tls=NULL}, 64) = 42 <0.000012>"
        );
        // Fields a later kernel added: shown as `...`.
        let mut later = spawn.clone();
        later.extend([0u8; 8]);
        assert!(
            clone3(&later).contains("cgroup=0, ...}, 96) = 42"),
            "{}",
            clone3(&later)
        );
    }

    /// wait4's status and waitid's `siginfo_t` read as strace shows them;
    /// before, `[0]` and a pointer.
    #[test]
    fn wait_statuses_are_decoded() {
        let wait4 = |status: u32| {
            line(&call(
                61,
                [u64::MAX, 0x1000, 0, 0, 0, 0],
                42,
                false,
                vec![cap(1, Role::Exit, &status.to_le_bytes())],
            ))
        };
        assert_eq!(
            wait4(0),
            "wait4(-1, [{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 42 <0.000012>"
        );
        assert_eq!(
            wait4(3 << 8),
            "wait4(-1, [{WIFEXITED(s) && WEXITSTATUS(s) == 3}], 0, NULL) = 42 <0.000012>"
        );
        assert_eq!(
            wait4(9),
            "wait4(-1, [{WIFSIGNALED(s) && WTERMSIG(s) == SIGKILL}], 0, NULL) = 42 <0.000012>"
        );
        assert_eq!(
            wait4(0x80 | 11),
            "wait4(-1, [{WIFSIGNALED(s) && WTERMSIG(s) == SIGSEGV && WCOREDUMP(s)}], 0, NULL) = 42 <0.000012>"
        );
        assert_eq!(
            wait4(19 << 8 | 0x7f),
            "wait4(-1, [{WIFSTOPPED(s) && WSTOPSIG(s) == SIGSTOP}], 0, NULL) = 42 <0.000012>"
        );
        assert_eq!(
            wait4(4 << 16 | 5 << 8 | 0x7f),
            "wait4(-1, [{WIFSTOPPED(s) && WSTOPSIG(s) == SIGTRAP} | PTRACE_EVENT_EXEC << 16], 0, NULL) = 42 <0.000012>"
        );
        assert_eq!(
            wait4(0xffff),
            "wait4(-1, [{WIFCONTINUED(s)}], 0, NULL) = 42 <0.000012>"
        );
        let mut si = [0u8; 128];
        let waitid = |si: &[u8]| {
            line(&call(
                247,
                [1, 42, 0x1000, 4, 0, 0],
                0,
                false,
                vec![cap(2, Role::Exit, si)],
            ))
        };
        assert_eq!(
            waitid(&si),
            "waitid(1, 42, {}, WEXITED, NULL) = 0 <0.000012>"
        );
        for (o, v) in [(0, 17i32), (8, 1), (16, 42), (20, 1000), (24, 5)] {
            si[o..o + 4].copy_from_slice(&v.to_le_bytes());
        }
        assert_eq!(
            waitid(&si),
            "waitid(1, 42, {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=42, si_uid=1000, si_status=5}, \
             WEXITED, NULL) = 0 <0.000012>"
        );
        si[8..12].copy_from_slice(&5i32.to_le_bytes());
        si[24..28].copy_from_slice(&19i32.to_le_bytes());
        assert_eq!(
            waitid(&si),
            "waitid(1, 42, {si_signo=SIGCHLD, si_code=CLD_STOPPED, si_pid=42, si_uid=1000, si_status=SIGSTOP}, \
             WEXITED, NULL) = 0 <0.000012>"
        );
    }

    /// utimensat's special `tv_nsec` values show by name, alone, as in
    /// strace; before, as 1073741823 and 1073741822.
    #[test]
    fn utime_now_and_omit_are_named() {
        let times = |a: [i64; 4]| -> Vec<u8> { a.iter().flat_map(|w| w.to_le_bytes()).collect() };
        let utimensat = |d: &[u8]| {
            line(&call(
                280,
                [0, 0, 0x1000, 0, 0, 0],
                0,
                false,
                vec![cap(2, Role::Entry, d)],
            ))
        };
        assert_eq!(
            utimensat(&times([0, (1 << 30) - 1, 0, (1 << 30) - 2])),
            "utimensat(0, NULL, [UTIME_NOW, UTIME_OMIT], 0) = 0 <0.000012>"
        );
        assert_eq!(
            utimensat(&times([0, (1 << 30) - 2, 1_600_000_000, 5])),
            "utimensat(0, NULL, [UTIME_OMIT, {tv_sec=1600000000, tv_nsec=5}], 0) = 0 <0.000012>"
        );
    }

    /// mknod's mode names the file type, and a device node's number shows
    /// as `makedev`; a FIFO's, which the kernel ignores, not at all (as in
    /// strace). Before: `0o10644, 0` and `0o20600, 0x103`.
    #[test]
    fn mknod_modes_and_devices() {
        let mknodat = |mode: u64, dev: u64| {
            line(&call(
                259,
                [(-100i64) as u64, 0x1000, mode, dev, 0, 0],
                0,
                false,
                vec![cap(1, Role::Entry, b"n")],
            ))
        };
        assert_eq!(
            mknodat(0o10644, 0),
            r#"mknodat(AT_FDCWD, "n", S_IFIFO|0644) = 0 <0.000012>"#
        );
        assert_eq!(
            mknodat(0o20600, 0x103),
            r#"mknodat(AT_FDCWD, "n", S_IFCHR|0600, makedev(0x1, 0x3)) = 0 <0.000012>"#
        );
        assert_eq!(
            mknodat(0o60660, 0x700),
            r#"mknodat(AT_FDCWD, "n", S_IFBLK|0660, makedev(0x7, 0)) = 0 <0.000012>"#
        );
        // A minor above 255: its high bits sit above the major's.
        assert_eq!(
            mknodat(0o60660, 0x1001_0305),
            r#"mknodat(AT_FDCWD, "n", S_IFBLK|0660, makedev(0x103, 0x10005)) = 0 <0.000012>"#
        );
        assert_eq!(
            mknodat(0o140755, 0),
            r#"mknodat(AT_FDCWD, "n", S_IFSOCK|0755) = 0 <0.000012>"#
        );
        assert_eq!(
            mknodat(0o100644, 0),
            r#"mknodat(AT_FDCWD, "n", S_IFREG|0644) = 0 <0.000012>"#
        );
        // No type: a regular file, the mode as before.
        assert_eq!(
            line(&call(
                133,
                [0x1000, 0o644, 0, 0, 0, 0],
                0,
                false,
                vec![cap(0, Role::Entry, b"n")]
            )),
            r#"mknod("n", 0o644) = 0 <0.000012>"#
        );
        assert_eq!(
            line(&call(
                133,
                [0x1000, 0o20644, 0x503, 0, 0, 0],
                0,
                false,
                vec![cap(0, Role::Entry, b"n")]
            )),
            r#"mknod("n", S_IFCHR|0644, makedev(0x5, 0x3)) = 0 <0.000012>"#
        );
    }

    /// The JSON form keeps the raw bytes of the decoded structures, with
    /// the decoded text as the argument.
    #[test]
    fn json_keeps_the_raw_bytes_of_decoded_structures() {
        let d = dirent(true, 2, 1, 4, ".");
        let r = call(
            217,
            [3, 0x1000, 32768, 0, 0, 0],
            24,
            false,
            vec![cap(1, Role::Exit, &d)],
        );
        let v = Renderer::new(TextOptions::default(), ClockAnchor::default()).json(&r);
        assert_eq!(
            v["args"]["dirp"],
            r#"[{d_ino=2, d_off=1, d_reclen=24, d_type=DT_DIR, d_name="."}]"#
        );
        assert_eq!(v["captures"][0]["data_hex"], hex(&d));
        let m = call(
            259,
            [(-100i64) as u64, 0x1000, 0o20600, 0x103, 0, 0],
            0,
            false,
            vec![cap(1, Role::Entry, b"n")],
        );
        let v = Renderer::new(TextOptions::default(), ClockAnchor::default()).json(&m);
        assert_eq!(v["args"]["mode"], "S_IFCHR|0600");
        assert_eq!(v["args"]["dev"], "makedev(0x1, 0x3)");
        assert_eq!(v["raw_args"][3], 0x103);
    }

    #[test]
    fn json_has_every_field() {
        let w = call(
            1,
            [1, 0x1000, 3, 0, 0, 0],
            3,
            false,
            vec![cap(1, Role::Entry, b"abc")],
        );
        let v = Renderer::new(TextOptions::default(), ClockAnchor::default()).json(&w);
        assert_eq!(v["name"], "write");
        assert_eq!(v["args"]["fd"], 1);
        assert_eq!(v["ret"], 3);
        assert_eq!(v["errno"], 0);
        assert_eq!(v["duration_ns"], 12_000);
        assert_eq!(v["captures"][0]["data_hex"], "616263");
        assert_eq!(v["captures"][0]["param"], "buf");
    }
}
