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

use reanimator_catalogue::{self as catalogue, aio, uring, Dir, Kind, Ret, StructType, Syscall};
use reanimator_trace::{
    Capture, CaptureStatus, ClockAnchor, ContentHash, ContentNote, ExitStatus, FileKind, PathPhase,
    Record, Role, StartCause, SyscallEvent, CONTROL_ELEM,
};
use serde_json::{json, Map, Value};

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
                for (i, p) in params.iter().enumerate() {
                    if i > 0 {
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
            Kind::Mode | Kind::CreateMode => format!("{:#o}", raw as u32),
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
                    "[{{tv_sec={}, tv_nsec={}}}, {{tv_sec={}, tv_nsec={}}}]",
                    a as i64, an as i64, m as i64, mn as i64
                )),
                _ => None,
            },
            _ => None,
        };
        decoded.unwrap_or_else(|| self.quote(d, len))
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

/// `S_IFREG|0644`.
fn mode_text(mode: u32) -> String {
    let ty = match mode & 0o170000 {
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
