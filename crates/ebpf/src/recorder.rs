//! The user side: loads the program, starts or adopts the processes, drains
//! the ring every half millisecond, resumes processes stopped for
//! back-pressure, and turns ring records into trace records.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::ffi::CString;
use std::io::{self, Write};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags, RingBufferBuilder};
use reanimator_catalogue::{self as catalogue, Effect};
use reanimator_fsstate::{Need, Snapshotter};
use reanimator_record::mappings::{record_at_exit, SharedMappings};
use reanimator_record::{
    clear_stop_request, cwd_of, discard_stopped, exe_of, exit_status, files_open_at_start,
    fork_stopped, keep_messages_out_of, names_socket_file, now_ns, process_start, read_mem, say,
    signal_sender, spawned_start, status, stop_requested, task_ids, touched_paths,
    watch_stop_signals, with_writer_thread, CaptureCounts, Captures, ChildSetup, DataPolicy, Error,
    FlushClock, LeftBehind, RecordSummary, SavedState, Sink, SnapshotPolicy, Status, Target,
    CAPTURE_MAX,
};
use reanimator_trace::{
    CaptureHead, CaptureStatus, ExitStatus, Loss, ProcessExit, ProcessStart, Record, Role,
    SignalDelivery, StartCause, SyscallExit, SyscallHead, Writer,
};

use crate::gate::{is_exit, is_gate_fd, late_paths, read_path, Filter, Gate, Held};
use crate::guard::{map_fd, signal_each, Ending, Guard};
use crate::records::{
    parse, RingRecord, CAP_EXIT, CAP_FAILED, CAP_RETRY, CAP_RUN, CAP_STRING, CAP_UNTERMINATED,
    CAP_WHOLE,
};
use crate::skel::{RecorderSkel, RecorderSkelBuilder};
use crate::{spec, Options};

/// `sizeof(struct sockaddr_un)`: family and a 108-byte path.
const SOCKADDR_UN_LEN: usize = 110;

/// How often the ring is drained while records come.
const POLL: Duration = Duration::from_micros(500);
/// How often once none has come for [`IDLE_AFTER`]: a recording of an
/// idle daemon cost the recorder 4 % of a CPU polling every [`POLL`]. A
/// burst after the pause waits this long at most (a process that fills
/// the ring to the mark meanwhile is stopped, as always).
const POLL_IDLE: Duration = Duration::from_millis(8);
const IDLE_AFTER: Duration = Duration::from_millis(100);
/// How often, once the command has ended, tasks that vanished without an
/// exit record are looked for in /proc (they would keep the recorder
/// waiting forever).
const PRUNE_EVERY: Duration = Duration::from_millis(200);

fn bpf(what: &'static str) -> impl Fn(libbpf_rs::Error) -> Error {
    move |e| Error::Bpf(format!("{what}: {e}"))
}

pub(crate) fn run<W: Write + Send>(
    target: &Target,
    policy: DataPolicy,
    snapshot: SnapshotPolicy,
    opts: &Options,
    writer: &mut Writer<W>,
) -> Result<RecordSummary, Error> {
    let _restore = SavedState::save();
    clear_stop_request();
    // The command is forked before anything is loaded, so it inherits
    // none of the recorder's BPF descriptors.
    let spawned = match target {
        Target::Spawn { program, argv, env } => Some(spawn_gated(
            program,
            argv,
            env,
            snapshot != SnapshotPolicy::Off,
        )?),
        Target::Attach { .. } => None,
    };
    let mut object = MaybeUninit::uninit();
    let skel = match load(policy, opts, &mut object) {
        Ok(s) => s,
        Err(e) => {
            if let Some((pid, _)) = spawned {
                discard_stopped(pid);
            }
            return Err(e);
        }
    };
    let mut snap = match Snapshotter::new(snapshot) {
        Ok(snap) => snap,
        Err(e) => {
            if let Some((pid, _)) = spawned {
                discard_stopped(pid);
            }
            return Err(Error::Ptrace(e));
        }
    };
    if let Some(own) = writer.path() {
        snap.leave_out(own.as_os_str().as_encoded_bytes());
    }
    with_writer_thread(writer, |sink| {
        let (root, gate) = match spawned {
            Some((pid, gate)) => (Some(pid), gate),
            None => (None, None),
        };
        let mut rec = Recorder {
            skel: &skel,
            sink,
            policy,
            gate,
            guard: None,
            snap,
            tasks: HashMap::new(),
            live: HashMap::new(),
            superseded: HashMap::new(),
            images: HashMap::new(),
            summary: RecordSummary::default(),
            maps: SharedMappings::default(),
            counts: CaptureCounts::default(),
            seen: 0,
            malformed: 0,
            error: None,
            spills_done: 0,
            gate_holds_paths: snapshot != SnapshotPolicy::Off,
            exits_held: Vec::new(),
            masked_seen: 0,
            listeners: HashSet::new(),
        };
        rec.trace(target, root)
    })
}

/// Forks the command, stopped before its exec, under the gate, whose
/// listener the recorder then takes: the path gate when initial state is
/// recorded, else one that holds only exits ([`Filter::exits`]), which
/// the recording can do without if the kernel refuses it.
fn spawn_gated(
    program: &CString,
    argv: &[CString],
    env: &[CString],
    paths: bool,
) -> Result<(i32, Option<Gate>), Error> {
    let filter = if paths {
        Filter::new()
    } else {
        Filter::exits()
    };
    let install = || filter.install() || !paths;
    let setup = ChildSetup {
        run: &install,
        why: "cannot install the seccomp path gate that records initial file state (use --snapshot off)",
    };
    let pid = fork_stopped(program, argv, env, Some(setup))?;
    let gate = match Gate::take(pid) {
        Ok(g) => Some(g),
        Err(_) if !paths => None,
        Err(e) => {
            discard_stopped(pid);
            return Err(Error::Spawn(io::Error::other(format!(
                "cannot take the path gate from the command: {e}"
            ))));
        }
    };
    Ok((pid, gate))
}

/// The smallest ring: below it, calls moving 64-128 KiB are lost.
const MIN_RING_BYTES: u32 = 1 << 20;

/// Opens, sizes and loads the BPF object, fills the capture rules, and
/// attaches the programs.
fn load<'o>(
    policy: DataPolicy,
    opts: &Options,
    object: &'o mut MaybeUninit<libbpf_rs::OpenObject>,
) -> Result<RecorderSkel<'o>, Error> {
    let mut open = RecorderSkelBuilder::default()
        .open(object)
        .map_err(bpf("cannot open the BPF object"))?;
    // Records up to 128 KiB cannot be spilled (`SPILL_MIN`), so the ring
    // must hold several at once: at 64 KiB every read of 64 KiB was
    // lost, at 256 KiB four threads' 64 KiB writes now and then.
    let ring = opts.ring_bytes.next_power_of_two().max(MIN_RING_BYTES);
    open.maps
        .rb
        .set_max_entries(ring)
        .map_err(bpf("ring size"))?;
    let cpus = libbpf_rs::num_possible_cpus().map_err(bpf("CPU count"))? as u32;
    open.maps
        .scratch
        .set_max_entries(cpus)
        .map_err(bpf("scratch size"))?;
    let ro = open
        .maps
        .rodata_data
        .as_deref_mut()
        .ok_or_else(|| Error::Bpf("the BPF object has no read-only data".into()))?;
    ro.data_max = match policy {
        DataPolicy::All => CAPTURE_MAX,
        DataPolicy::None => 0,
        DataPolicy::Max(n) => n.min(CAPTURE_MAX),
    };
    ro.mapped_at_exit_nr = catalogue::MAPPED_AT_EXIT;
    ro.high_water = u64::from(ring) * u64::from(opts.high_water_percent.clamp(1, 99)) / 100;
    // Halfway from the mark to full: the rest stays free for call records
    // and spills, whatever one call's buffers amount to.
    ro.spill_at = ro.high_water + (u64::from(ring) - ro.high_water) / 2;
    let skel = open.load().map_err(|e| {
        Error::Bpf(format!(
            "cannot load the BPF program ({e}); the ebpf back end needs root \
             (CAP_BPF and CAP_PERFMON) and Linux 6.16 or later; use --backend ptrace"
        ))
    })?;
    // One batch: a call per row cost 3 ms of start-up.
    let table = spec::table();
    let keys: Vec<u8> = table.iter().flat_map(|(nr, _)| nr.to_ne_bytes()).collect();
    let rows: Vec<u8> = table.iter().flat_map(|(_, row)| *row).collect();
    skel.maps
        .specs
        .update_batch(
            &keys,
            &rows,
            table.len() as u32,
            MapFlags::ANY,
            MapFlags::ANY,
        )
        .map_err(bpf("capture rules"))?;
    let mut skel = skel;
    skel.attach().map_err(bpf("cannot attach the programs"))?;
    Ok(skel)
}

/// One traced thread's call being assembled from its capture records.
#[derive(Default)]
struct Task {
    /// The call the captures belong to.
    seq: u64,
    caps: Captures,
    /// The capture still receiving chunks.
    open: Option<Open>,
    /// Captures whose tail is still in the process, read when the call
    /// ends.
    spills: Vec<Pending>,
    /// The thread its call created (its fork record came before the
    /// call's exit), noted on the call's record if the call returned
    /// another id (a PID namespace's).
    created: Option<u32>,
}

impl Task {
    /// Drops the captures gathered so far (their call never came); the
    /// number of unread spills among them, which are done with.
    fn discard(&mut self) -> u64 {
        self.caps.clear();
        self.open = None;
        let spills = self.spills.len() as u64;
        self.spills.clear();
        spills
    }
}

/// The tail of a capture left in the process (a spill): the zeroed bytes
/// `bytes` of the task's captures stand for user memory at `addr`.
struct Pending {
    /// When the thread was sent its stop.
    stop_ns: u64,
    /// Index of the capture in `Captures::heads`.
    head: usize,
    bytes: std::ops::Range<usize>,
    addr: u64,
}

/// A capture whose chunks are still arriving.
struct Open {
    present: u64,
    want: u64,
    flags: u8,
}

struct Recorder<'s, 'o, 'q> {
    skel: &'s RecorderSkel<'o>,
    sink: &'s mut Sink<'q>,
    policy: DataPolicy,
    /// Holds path-naming calls until their initial state is recorded.
    gate: Option<Gate>,
    /// Kills the spawned command, or releases attached processes, if the
    /// recorder ends before they do.
    guard: Option<Guard>,
    /// The initial state of touched paths, and the final manifest.
    snap: Snapshotter,
    tasks: HashMap<u32, Task>,
    /// Threads started and not yet ended, with their process.
    live: HashMap<u32, u32>,
    /// Thread ids replaced by an execve from a non-leader thread: their end
    /// is recorded after the execve itself.
    superseded: HashMap<u32, u32>,
    /// The executable and arguments of each live process, as far as
    /// known: a process it forks starts with them (as the ptrace back end
    /// records, from the stopped child's `/proc`). Dropped at an exec or
    /// the process's end.
    images: HashMap<u32, (Vec<u8>, Vec<Vec<u8>>)>,
    summary: RecordSummary,
    /// Shared writable file mappings per process, followed from the calls
    /// as the ptrace back end does, to count those whose last stores no
    /// capture holds.
    maps: SharedMappings,
    counts: CaptureCounts,
    /// Sequence ids seen, to detect any the kernel side issued but never
    /// delivered.
    seen: u64,
    /// Ring records that could not be read.
    malformed: u64,
    /// The first error met inside the ring callback.
    error: Option<Error>,
    /// Spills read (or given up on): until every spill the kernel side
    /// made is done, no stopped process is resumed.
    spills_done: u64,
    /// Whether the gate is the path gate, not one that holds only exits
    /// ([`spawn_gated`]).
    gate_holds_paths: bool,
    /// Exits the gate holds until the parent has read a back-pressure
    /// stop's SIGCHLD ([`Recorder::hold_exit`]).
    exits_held: Vec<HeldExit>,
    /// Untold exits already looked at ([`Recorder::warn_masked_exit`]).
    masked_seen: u64,
    /// Parents found listening for SIGCHLD when an exit of theirs was
    /// held: [`Recorder::warn_masked_exit`] tells only of theirs.
    listeners: HashSet<u32>,
}

/// An exit held for its parent's sake.
struct HeldExit {
    /// The gate's id of the held call.
    id: u64,
    parent: u32,
    /// When it is let go whatever the parent does.
    until: Instant,
}

/// How long an exit waits at most for its parent to read a pending
/// SIGCHLD: a parent with a signalfd for SIGCHLD may still never read it
/// (it reaps with a plain `waitpid`).
const EXIT_HOLD_MAX: Duration = Duration::from_secs(2);

impl<'s> Recorder<'s, '_, '_> {
    /// The shared sequence counter (kernel and recorder take ids from it).
    fn counter(&self) -> &'s AtomicU64 {
        let skel: &'s RecorderSkel<'_> = self.skel;
        let data = skel
            .maps
            .data_data
            .as_deref()
            .expect("the object has a .data section");
        // SAFETY: `next_seq` lives in the mmap'ed .data map, 8-byte
        // aligned, shared with the BPF program which only updates it with
        // atomic adds; AtomicU64 has the layout of u64.
        unsafe { &*(std::ptr::addr_of!(data.next_seq) as *const AtomicU64) }
    }

    fn seq(&mut self) -> u64 {
        self.seen += 1;
        self.counter().fetch_add(1, Ordering::Relaxed)
    }

    fn stop_requests(&self) -> u64 {
        let bss = self.bss();
        // SAFETY: as in `counter`.
        unsafe { &*(std::ptr::addr_of!(bss.stop_requests) as *const AtomicU64) }
            .load(Ordering::Relaxed)
    }

    /// Child exits the kernel side saw go untold (`on_sigchld`).
    fn masked_exits(&self) -> u64 {
        let bss = self.bss();
        // SAFETY: as in `counter`.
        unsafe { &*(std::ptr::addr_of!(bss.masked_exits) as *const AtomicU64) }
            .load(Ordering::SeqCst)
    }

    /// Counts the untold exits that matter, those of a parent that listens
    /// for SIGCHLD (a holding gate let them go after [`EXIT_HOLD_MAX`], or
    /// there is no gate: attached), and says so at once, so that a
    /// recording that then never ends is no mystery.
    fn warn_masked_exit(&mut self) {
        let n = self.masked_exits();
        if n == self.masked_seen {
            return;
        }
        let new = n - self.masked_seen;
        self.masked_seen = n;
        let bss = self.bss();
        let (parent, child) = (bss.masked_parent, bss.masked_child);
        let child_name = bss.masked_child_comm.map(|c| c as u8);
        // Judged when an exit of its was held: by now it may have reaped
        // and unblocked SIGCHLD (bash), or be a zombie with no handler or
        // descriptor left. With no gate (attached), as it is now.
        let listens = self.listeners.contains(&parent)
            || (self.gate.is_none()
                && status(parent as i32).is_some_and(|s| listens_for_sigchld(parent, &s)));
        if !listens {
            return;
        }
        self.summary.masked_exits += new;
        let parent_name =
            std::fs::read_to_string(format!("/proc/{parent}/comm")).unwrap_or_default();
        let child_name =
            String::from_utf8_lossy(child_name.split(|&b| b == 0).next().unwrap_or_default());
        say(&format!(
            "reanimator: warning: {} (pid {parent}) was not told that its child {child_name} \
             (pid {child}) exited: it still had the SIGCHLD of a back-pressure stop pending, \
             and SIGCHLD does not queue. A parent that reaps only on a SIGCHLD saying a \
             child exited (script does) now waits forever; if the recording does not end, \
             stop it (`kill {}`) and record with a larger --ring-size or with --backend ptrace",
            parent_name.trim_end(),
            std::process::id()
        ));
    }

    /// Spills the kernel side has made so far.
    fn spills(&self) -> u64 {
        let bss = self.bss();
        // SAFETY: as in `counter`.
        unsafe { &*(std::ptr::addr_of!(bss.spills) as *const AtomicU64) }.load(Ordering::SeqCst)
    }

    /// Tells the kernel side to record no more calls: a task's call
    /// storage, which marks it as traced there, outlives the detach.
    fn stop_following(&self) {
        self.detached().store(1, Ordering::SeqCst);
    }

    /// The kernel side's `detached` flag.
    fn detached(&self) -> &'s AtomicU32 {
        let bss = self.bss();
        // SAFETY: as in `counter`; the BPF program only reads `detached`.
        unsafe { &*(std::ptr::addr_of!(bss.detached) as *const AtomicU32) }
    }

    /// Starts the guardian that deals with the traced processes if the
    /// recorder ends before they do.
    fn guard(&mut self, ending: Ending) -> Result<(), Error> {
        let guard = Guard::spawn(ending).map_err(|e| {
            Error::Spawn(io::Error::other(format!(
                "cannot start the process that looks after the traced processes \
                 if the recorder dies: {e}"
            )))
        })?;
        self.guard = Some(guard);
        Ok(())
    }

    fn bss(&self) -> &'s crate::skel::types::bss {
        let skel: &'s RecorderSkel<'_> = self.skel;
        skel.maps
            .bss_data
            .as_deref()
            .expect("the object has a .bss section")
    }

    fn trace(&mut self, target: &Target, root: Option<i32>) -> Result<RecordSummary, Error> {
        let started = Instant::now();
        match (target, root) {
            (Target::Spawn { program, argv, env }, Some(pid)) => {
                if let Err(e) = self.adopt_spawned(pid, program, argv, env) {
                    discard_stopped(pid);
                    return Err(e);
                }
            }
            (Target::Attach { pids }, _) => self.attach(pids)?,
            _ => unreachable!("run forks every spawned target"),
        }
        self.consume(root)?;
        self.write_manifest()?;
        self.summary.captures = self.counts;
        self.summary.duration = started.elapsed();
        let lost = self.losses(root.is_some())?;
        if lost > 0 {
            return Err(Error::Lost(
                lost,
                Box::new(std::mem::take(&mut self.summary)),
            ));
        }
        Ok(std::mem::take(&mut self.summary))
    }

    fn trace_tgid(&self, tgid: u32) -> Result<(), Error> {
        self.skel
            .maps
            .traced
            .update(&tgid.to_ne_bytes(), &[1], MapFlags::ANY)
            .map_err(bpf("cannot follow the process"))
    }

    /// Follows the stopped command and lets it run.
    fn adopt_spawned(
        &mut self,
        pid: i32,
        program: &CString,
        argv: &[CString],
        env: &[CString],
    ) -> Result<(), Error> {
        self.trace_tgid(pid as u32)?;
        let seq = self.seq();
        let mut start = spawned_start(pid, seq, program, argv, env)?;
        if self.gate.is_some() {
            start.fds.retain(|f| !is_gate_fd(f.fd));
        }
        let outputs = files_open_at_start(&start);
        keep_messages_out_of(&outputs);
        for path in outputs {
            self.snapshot(&path, Need::Contents)?;
        }
        self.started(start)?;
        self.guard(Ending::Kill {
            traced: map_fd(&self.skel.maps.traced),
        })?;
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(pid, libc::SIGCONT) };
        Ok(())
    }

    /// Records the state of every path a held call names, then lets it go.
    fn on_held(&mut self, held: Held) -> Result<(), Error> {
        if let Some(row) = catalogue::by_nr(held.nr) {
            let paths: Vec<Option<Vec<u8>>> = (0..6)
                .map(|i| {
                    let p = row.params().get(i)?;
                    if held.args[i] == 0 {
                        None
                    } else if p.kind == catalogue::Kind::Path {
                        read_path(held.pid, held.args[i])
                    } else if names_socket_file(row, i) {
                        // struct sockaddr_un, its length the next argument.
                        let len = held.args.get(i + 1).map_or(0, |&n| n as usize);
                        let mut addr = vec![0; len.min(SOCKADDR_UN_LEN)];
                        let got = read_mem(held.pid, held.args[i], &mut addr);
                        addr.truncate(got);
                        Some(addr)
                    } else {
                        None
                    }
                })
                .collect();
            let (touched, unnamed) = touched_paths(held.pid, row, &held.args, |arg| {
                paths.get(arg as usize)?.as_deref()
            });
            self.snap.unnamed += unnamed;
            for (path, need) in touched {
                self.snapshot(&path, need)?;
            }
        }
        // Only the path gate drains the ring first: then every mapping the
        // process made is known.
        if held.nr as i64 == libc::SYS_exit_group && self.gate_holds_paths {
            self.record_mapped_at_exit(&held)?;
        }
        if self.hold_exit(&held) {
            return Ok(());
        }
        if let Some(gate) = &self.gate {
            gate.release(held.id);
        }
        Ok(())
    }

    /// Captures the shared writable file mappings of a process whose
    /// `exit_group` the gate holds, while it waits, and tells the kernel
    /// side not to (`maps_taken`): a BPF program cannot wait for the ring
    /// to drain, and a mapping with more pages than the ring had room for
    /// lost records (a 64 MiB file mapped by Java, 8 runs in 10). Execs,
    /// processes a signal ends, and those recorded with no path gate are
    /// still captured by the kernel side.
    fn record_mapped_at_exit(&mut self, held: &Held) -> Result<(), Error> {
        let Some(&tgid) = self.live.get(&(held.pid as u32)) else {
            return Ok(());
        };
        let ranges = self.maps.of(tgid).to_vec();
        if ranges.is_empty() {
            return Ok(());
        }
        self.skel
            .maps
            .maps_taken
            .update(&tgid.to_ne_bytes(), &[1], MapFlags::ANY)
            .map_err(bpf("cannot note a process's mappings as captured"))?;
        let counter = self.counter();
        let mut taken = 0;
        let sink = &mut self.sink;
        record_at_exit(
            held.pid,
            tgid,
            &ranges,
            self.policy,
            &mut self.counts,
            || {
                taken += 1;
                counter.fetch_add(1, Ordering::Relaxed)
            },
            |head, caps| sink.call(head, caps),
        )?;
        self.seen += taken;
        self.maps.captured_at_exit(tgid);
        Ok(())
    }

    /// Keeps an exit held while the parent has yet to read the SIGCHLD of
    /// a back-pressure stop or resume of one of its children. SIGCHLD does
    /// not queue: sent meanwhile, the exit's would be dropped, and a parent
    /// that reaps only on an exit's SIGCHLD (`script`, through util-linux's
    /// ul_pty) would wait forever. Released by [`Self::release_exits`].
    fn hold_exit(&mut self, held: &Held) -> bool {
        if !is_exit(held.nr as i64) || self.stop_requests() == 0 {
            return false;
        }
        // A thread's `exit` ends the process only when it is the last.
        let Some(parent) = status(held.pid)
            .filter(|s| held.nr as i64 == libc::SYS_exit_group || s.threads == 1)
            .map(|s| s.ppid)
            .filter(|&p| self.owes_sigchld_noted(p))
        else {
            return false;
        };
        self.exits_held.push(HeldExit {
            id: held.id,
            parent,
            until: Instant::now() + EXIT_HOLD_MAX,
        });
        true
    }

    /// Lets go the held exits whose parent has read its SIGCHLD, or that
    /// waited long enough.
    fn release_exits(&mut self) {
        if self.exits_held.is_empty() {
            return;
        }
        let now = Instant::now();
        let held = std::mem::take(&mut self.exits_held);
        let (wait, go): (Vec<_>, Vec<_>) = held
            .into_iter()
            .partition(|h| now < h.until && self.owes_sigchld(h.parent));
        self.exits_held = wait;
        if let Some(gate) = &self.gate {
            for h in go {
                gate.release(h.id);
            }
        }
    }

    /// Whether the process has a SIGCHLD pending that it will read, the
    /// last one queued to it was a child's stop or resume (the one pending,
    /// then), and a child of it was stopped for back-pressure.
    fn owes_sigchld(&self, tgid: u32) -> bool {
        let maps = &self.skel.maps;
        let key = tgid.to_ne_bytes();
        let last = maps.last_sigchld.lookup(&key, MapFlags::ANY);
        let stop_or_resume = matches!(last, Ok(Some(v)) if v.len() == 4
            && matches!(i32::from_ne_bytes([v[0], v[1], v[2], v[3]]),
                libc::CLD_STOPPED | libc::CLD_CONTINUED));
        stop_or_resume
            && matches!(maps.child_stopped.lookup(&key, MapFlags::ANY), Ok(Some(_)))
            && status(tgid as i32).is_some_and(|s| {
                s.shared_pending & SIGCHLD_BIT != 0 && listens_for_sigchld(tgid, &s)
            })
    }

    /// [`Self::owes_sigchld`], noting a parent found listening.
    fn owes_sigchld_noted(&mut self, tgid: u32) -> bool {
        let owes = self.owes_sigchld(tgid);
        if owes {
            self.listeners.insert(tgid);
        }
        owes
    }

    /// Records the paths a call the gate let through unheld names
    /// ([`late_paths`]): a query, which changed nothing, so the state read
    /// now is the state it saw unless another process changed the path
    /// meanwhile. A relative path whose base is gone (its process was
    /// killed before the recorder got here) is counted as unreadable.
    /// With no gate (`--snapshot off`) every call's paths come here, only
    /// to be named in the final manifest, as under ptrace.
    fn late_snapshot(&mut self, tid: u32, nr: u32, args: &[u64; 6]) -> Result<(), Error> {
        let gated = self.gate_holds_paths;
        let Some(row) = catalogue::by_nr(nr).filter(|row| !gated || late_paths(row, args)) else {
            return Ok(());
        };
        let Some(task) = self.tasks.get(&tid) else {
            return Ok(());
        };
        let caps = &task.caps;
        let (touched, unnamed) = touched_paths(tid as i32, row, args, |arg| caps.entry_bytes(arg));
        self.snap.unnamed += unnamed;
        for (path, need) in touched {
            self.snapshot(&path, need)?;
        }
        Ok(())
    }

    /// Records what `path` looked like before the trace first touched it.
    fn snapshot(&mut self, path: &[u8], need: Need) -> Result<(), Error> {
        self.write_states(|snap, seq, out| snap.touch(path, need, seq, now_ns(), out))
    }

    /// Writes the final state of every path the trace touched.
    fn write_manifest(&mut self) -> Result<(), Error> {
        self.write_states(|snap, seq, out| snap.manifest(seq, now_ns(), out))?;
        self.summary.note_snapshots(&self.snap);
        Ok(())
    }

    /// Runs one snapshotter step with ids from the shared counter and
    /// writes the records it makes.
    fn write_states(
        &mut self,
        step: impl FnOnce(&mut Snapshotter, &mut dyn FnMut() -> u64, &mut dyn FnMut(Record)),
    ) -> Result<(), Error> {
        let counter = self.counter();
        let mut taken = 0;
        let mut records = Vec::new();
        step(
            &mut self.snap,
            &mut || {
                taken += 1;
                counter.fetch_add(1, Ordering::Relaxed)
            },
            &mut |r| records.push(r),
        );
        self.seen += taken;
        records.into_iter().try_for_each(|r| self.sink.record(r))
    }

    /// Follows every thread of `pids` and their future children.
    fn attach(&mut self, pids: &[i32]) -> Result<(), Error> {
        watch_stop_signals();
        self.guard(Ending::Release {
            detached: self.detached(),
            stopped: map_fd(&self.skel.maps.stopped),
        })?;
        for &pid in pids {
            let tids = task_ids(pid).map_err(|e| Error::Attach(pid, e))?;
            self.trace_tgid(pid as u32)?;
            for tid in tids {
                let seq = self.seq();
                // A thread that exited since the listing is not recorded;
                // its id stays accounted for by `seq`.
                if let Some(start) = process_start(tid, StartCause::Attached, seq, now_ns()) {
                    self.started(start)?;
                }
            }
        }
        Ok(())
    }

    fn started(&mut self, start: ProcessStart) -> Result<(), Error> {
        if start.tgid == start.tid {
            self.summary.processes += 1;
            self.images
                .insert(start.tgid, (start.exe.clone(), start.argv.clone()));
        }
        self.summary.threads += 1;
        self.live.insert(start.tid, start.tgid);
        self.sink.record(Record::ProcessStart(start))
    }

    /// Drains the ring until every traced task has ended (or, attached, a
    /// stop is requested).
    fn consume(&mut self, root: Option<i32>) -> Result<(), Error> {
        let skel = self.skel;
        let cell = RefCell::new(&mut *self);
        let mut builder = RingBufferBuilder::new();
        builder
            .add(&skel.maps.rb, |data: &[u8]| {
                let mut me = cell.borrow_mut();
                match me.on_record(data) {
                    Ok(()) => 0,
                    Err(e) => {
                        me.error.get_or_insert(e);
                        -1
                    }
                }
            })
            .map_err(bpf("ring buffer"))?;
        let ring = builder.build().map_err(bpf("ring buffer"))?;
        let mut stops_seen = 0;
        let mut resume_owed = false;
        let mut flushes = FlushClock::new();
        let mut last_prune = Instant::now();
        let mut root_done = root.is_none();
        let mut left_behind = LeftBehind::default();
        let last_record = std::cell::Cell::new(Instant::now());
        // Drains the ring, then hands the recorder back unless a record
        // failed.
        let drain = || {
            if ring.consume_raw() > 0 {
                last_record.set(Instant::now());
            }
            let mut me = cell.borrow_mut();
            match me.error.take() {
                Some(e) => Err(e),
                None => Ok(me),
            }
        };
        loop {
            let mut me = drain()?;
            let stops = me.stop_requests();
            if stops != stops_seen || resume_owed {
                stops_seen = stops;
                // The stop may have come while the ring was being drained:
                // what was written meanwhile is drained too, so the process
                // resumes with the ring empty, not near the mark (its
                // threads could overrun the rest before stopping again).
                drop(me);
                me = drain()?;
                resume_owed = !me.resume_stopped();
            }
            me.release_exits();
            me.warn_masked_exit();
            if let Some(pid) = root.filter(|_| !root_done) {
                let mut status = 0;
                // SAFETY: status is a local int.
                if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
                    root_done = true;
                    me.summary.root_status = Some(exit_status(status));
                    // Everything the command did is in the ring now.
                    drop(me);
                    let _ = ring.consume_raw();
                    me = cell.borrow_mut();
                }
            }
            if stop_requested() && root.is_none() {
                drop(me);
                return self_detach(&cell, &ring);
            }
            if stop_requested() {
                // Spawned, SIGTERM: end what runs (it could not run on without the
                // recorder: its path gate would fail every call) and record
                // its end as usual. Again at each round, for late forks.
                // Stopped first, all of them: killed one by one, a parent
                // could wake to its child's death and run on (a shell
                // wrote "Killed" and went on, 1 time in 8) before its own
                // SIGKILL came.
                signal_each(map_fd(&me.skel.maps.traced), libc::SIGSTOP);
                let killed = signal_each(map_fd(&me.skel.maps.traced), libc::SIGKILL);
                if me.summary.killed_at_stop == 0 {
                    me.summary.killed_at_stop = me.live.len() as u64;
                }
                if killed == 0 && root_done {
                    // Gone, or zombies whose parent does not reap them.
                    me.live.clear();
                }
            }
            // Only a spawned command leaves processes behind; attached
            // ones are what the recording is about.
            left_behind.tick((root.is_some() && root_done).then_some(me.live.len()));
            if root_done && last_prune.elapsed() >= PRUNE_EVERY {
                last_prune = Instant::now();
                me.live
                    .retain(|tid, _| std::path::Path::new(&format!("/proc/{tid}")).exists());
            }
            if root_done && me.live.is_empty() {
                drop(me);
                let _ = ring.consume_raw();
                let mut me = cell.borrow_mut();
                return match me.error.take() {
                    Some(e) => Err(e),
                    None => Ok(()),
                };
            }
            if flushes.due() {
                me.sink.flush()?;
            }
            // Wait one poll interval, releasing the calls the gate holds.
            let poll = if last_record.get().elapsed() < IDLE_AFTER {
                POLL
            } else {
                POLL_IDLE
            };
            let held = match &me.gate {
                Some(gate) => gate.wait(poll).map_err(Error::Ptrace)?,
                None => {
                    std::thread::sleep(poll);
                    None
                }
            };
            if let Some(mut held) = held {
                loop {
                    // The calls the held thread finished before this one
                    // are in the ring: their late snapshots come first.
                    if me.gate_holds_paths {
                        drop(me);
                        me = drain()?;
                    }
                    me.on_held(held)?;
                    match me.gate.as_ref().map(|g| g.wait(Duration::ZERO)) {
                        Some(Ok(Some(next))) => held = next,
                        Some(Err(e)) => return Err(Error::Ptrace(e)),
                        _ => break,
                    }
                }
            }
            drop(me);
        }
    }

    /// Resumes every process the kernel side stopped, now that the ring has
    /// been drained; false (nothing resumed) while a spilled capture is
    /// still to be read, since its thread must stay stopped until then.
    fn resume_stopped(&mut self) -> bool {
        if self.spills() != self.spills_done {
            return false;
        }
        let keys: Vec<Vec<u8>> = self.skel.maps.stopped.keys().collect();
        for key in keys {
            let _ = self.skel.maps.stopped.delete(&key);
            if let Ok(b) = <[u8; 4]>::try_from(key.as_slice()) {
                // SAFETY: kill has no memory effects.
                unsafe { libc::kill(u32::from_ne_bytes(b) as i32, libc::SIGCONT) };
            }
        }
        true
    }

    /// Drops a task that ended or was replaced; its unread spills are done.
    fn forget(&mut self, tid: u32) {
        if let Some(task) = self.tasks.remove(&tid) {
            self.spills_done += task.spills.len() as u64;
        }
    }

    /// Reads the tails of the task's spilled captures from the thread,
    /// which the kernel side stopped on its way back from the call. What
    /// cannot be read (the thread died, or may have run on) is kept up to
    /// where reading stopped and marked unreadable.
    fn read_spills(&mut self, tgid: u32, tid: u32, returned: bool) {
        let Some(task) = self.tasks.get_mut(&tid) else {
            return;
        };
        let stopped = returned && wait_stopped(tid);
        // When the process was last continued (the kernel side notes every
        // SIGCONT, ours or anyone's, as it takes effect).
        let resumed_at = self
            .skel
            .maps
            .continued
            .lookup(&tgid.to_ne_bytes(), MapFlags::ANY)
            .ok()
            .flatten()
            .and_then(|v| v.try_into().ok())
            .map_or(0, u64::from_ne_bytes);
        for p in std::mem::take(&mut task.spills) {
            self.spills_done += 1;
            // A SIGCONT after the stop went out may have cancelled it, and
            // the thread run on (the recorder resumes nothing while a
            // spill is unread, so only one racing that check can).
            let sure = resumed_at < p.stop_ns;
            let dest = &mut task.caps.bytes[p.bytes.clone()];
            let got = if stopped && sure {
                read_mem(tid as i32, p.addr, dest)
            } else {
                0
            };
            if got < dest.len() {
                let (head, range) = &mut task.caps.heads[p.head];
                if range.end == p.bytes.end {
                    range.end = p.bytes.start + got;
                }
                if head.status != CaptureStatus::Unreadable {
                    head.status = CaptureStatus::Unreadable;
                    self.counts.unreadable += 1;
                }
            }
        }
    }

    fn on_record(&mut self, data: &[u8]) -> Result<(), Error> {
        let Some(rec) = parse(data) else {
            self.malformed += 1;
            return Ok(());
        };
        match rec {
            RingRecord::Capture {
                tid,
                seq,
                arg,
                flags,
                elem,
                len,
                present,
                want,
                offset,
                data,
                spill,
            } => {
                let task = self.tasks.entry(tid).or_default();
                if task.seq != seq {
                    // Captures of a call whose record never came: lost
                    // (counted by the kernel side).
                    self.spills_done += task.discard();
                    task.seq = seq;
                }
                if offset == 0 && flags & CAP_RETRY == 0 {
                    close(task, self.policy, &mut self.counts);
                    let role = if flags & CAP_EXIT != 0 {
                        Role::Exit
                    } else {
                        Role::Entry
                    };
                    // An input read again at exit replaces its failed
                    // entry capture, which then no longer counts as
                    // unreadable.
                    let counts = &mut self.counts;
                    task.caps.heads.retain(|(h, _)| {
                        let replaced = (h.arg, h.role, h.elem) == (arg, role, elem);
                        if replaced && h.status == CaptureStatus::Unreadable {
                            counts.unreadable -= 1;
                        }
                        !replaced
                    });
                    let at = task.caps.bytes.len();
                    task.caps.heads.push((
                        CaptureHead {
                            arg,
                            role,
                            elem,
                            status: CaptureStatus::Complete,
                            len,
                        },
                        at..at,
                    ));
                    task.open = Some(Open {
                        present,
                        want,
                        flags: 0,
                    });
                }
                let last = task.caps.heads.len().wrapping_sub(1);
                let mut spill_placed = false;
                if let (Some(open), Some((_, range))) = (&mut task.open, task.caps.heads.last_mut())
                {
                    open.flags |= flags;
                    if range.end == task.caps.bytes.len()
                        && (range.end - range.start) as u64 == offset
                    {
                        match spill {
                            None => task.caps.bytes.extend_from_slice(data),
                            Some(s) => {
                                // Room for the tail, filled when the call
                                // ends and the thread has stopped.
                                let at = task.caps.bytes.len();
                                let tail = want.saturating_sub(offset).min(CAPTURE_MAX) as usize;
                                task.caps.bytes.resize(at + tail, 0);
                                task.spills.push(Pending {
                                    stop_ns: s.stop_ns,
                                    head: last,
                                    bytes: at..at + tail,
                                    addr: s.addr.wrapping_add(offset),
                                });
                                spill_placed = true;
                            }
                        }
                        range.end = task.caps.bytes.len();
                    }
                }
                if spill.is_some() && !spill_placed {
                    // Out of order: nothing to fill, but the spill is
                    // accounted for.
                    self.spills_done += 1;
                }
            }
            RingRecord::Call {
                tid,
                seq,
                enter_ns,
                tgid,
                nr,
                args,
                exit,
            } => {
                self.seen += 1;
                let task = self.tasks.entry(tid).or_default();
                if task.seq != seq {
                    self.spills_done += task.discard();
                }
                close(task, self.policy, &mut self.counts);
                if !task.spills.is_empty() {
                    self.read_spills(tgid, tid, exit.is_some());
                }
                let head = SyscallHead {
                    seq,
                    tgid,
                    tid,
                    nr,
                    enter_ns,
                    args,
                    exit: exit.map(|(exit_ns, ret)| SyscallExit {
                        exit_ns,
                        ret,
                        is_error: (ret as u64) >= (-4095i64) as u64,
                    }),
                };
                if exit.is_none() && !catalogue::by_nr(nr).is_some_and(|r| r.ends_thread()) {
                    self.summary.unfinished += 1;
                }
                self.late_snapshot(tid, nr, &args)?;
                if let (Some(row), Some(x)) = (catalogue::by_nr(nr), head.exit) {
                    if nr == catalogue::MAPPED_AT_EXIT {
                        self.maps.captured_at_exit(tgid);
                    } else if !x.is_error {
                        self.maps.after_call(tgid, row.effect, &args, x.ret);
                    } else if row.effect == Effect::Exec {
                        // The mappings live on after all.
                        self.maps.live_on(tgid);
                    }
                }
                let task = self.tasks.get_mut(&tid).expect("entry made above");
                if let (Some(child), Some(x)) = (task.created.take(), head.exit) {
                    task.caps.note_created(child, x.ret);
                }
                self.sink.call(&head, &task.caps)?;
                task.caps.clear();
                task.seq = 0;
                if let Some(by) = self.superseded.remove(&tid) {
                    let seq = self.seq();
                    self.sink.record(Record::ProcessExit(ProcessExit {
                        seq,
                        time_ns: now_ns(),
                        tgid,
                        tid,
                        status: ExitStatus::Superseded { by },
                    }))?;
                }
            }
            RingRecord::Fork {
                tid,
                seq,
                time_ns,
                tgid,
                ppid,
                creator,
                ids,
                umask,
                own_mm,
            } => {
                self.seen += 1;
                self.tasks.entry(creator).or_default().created = Some(tid);
                if own_mm {
                    self.maps.inherit(ppid, tgid);
                }
                // A child a signal ended at once has no /proc left: it
                // started in its creator's directory (the path gate holds
                // a chdir until the records before it are read).
                let cwd = cwd_of(tid).or_else(|| cwd_of(creator)).unwrap_or_default();
                // A new process runs its parent's image until it execs (the
                // child itself may have exec'd by now: its /proc is no use).
                let (exe, argv) = if tgid == tid {
                    // The creator's process (not `ppid`: CLONE_PARENT).
                    let parent = self.live.get(&creator).copied().unwrap_or(ppid);
                    self.images
                        .get(&parent)
                        .cloned()
                        .unwrap_or_else(|| reanimator_record::image(parent))
                } else {
                    // A thread: its process's image, as ptrace reads it.
                    let exe = Some(exe_of(tid))
                        .filter(|e| !e.is_empty())
                        .or_else(|| self.images.get(&tgid).map(|(exe, _)| exe.clone()))
                        .unwrap_or_default();
                    (exe, Vec::new())
                };
                self.started(ProcessStart {
                    seq,
                    time_ns,
                    tgid,
                    tid,
                    ppid,
                    cause: StartCause::Created,
                    uid: ids[0],
                    gid: ids[1],
                    euid: ids[2],
                    egid: ids[3],
                    umask,
                    cwd,
                    exe,
                    argv,
                    ..ProcessStart::default()
                })?;
            }
            RingRecord::Exec { tid, old_tid } => {
                // The old address space is gone (the new leader's id is the
                // process's).
                self.summary.mappings_at_exit += self.maps.forget(tid) as u64;
                // Known again from /proc when it next forks.
                self.images.remove(&tid);
                if old_tid != tid {
                    self.superseded.insert(old_tid, tid);
                    self.live.remove(&old_tid);
                    self.forget(tid);
                }
            }
            RingRecord::Exit {
                tid,
                seq,
                time_ns,
                tgid,
                code,
            } => {
                self.seen += 1;
                self.live.remove(&tid);
                self.forget(tid);
                // The process is gone with its last thread, which is not
                // always the leader: a process a signal ended has its
                // mappings captured by the last one out.
                if !self.live.values().any(|&g| g == tgid) {
                    self.summary.mappings_at_exit += self.maps.forget(tgid) as u64;
                    self.images.remove(&tgid);
                }
                let status = exit_status(code as i32);
                self.sink.record(Record::ProcessExit(ProcessExit {
                    seq,
                    time_ns,
                    tgid,
                    tid,
                    status,
                }))?;
            }
            RingRecord::Signal {
                tid,
                seq,
                time_ns,
                tgid,
                signo,
                code,
                sender,
            } => {
                self.seen += 1;
                self.sink.record(Record::Signal(SignalDelivery {
                    seq,
                    time_ns,
                    tgid,
                    tid,
                    signo,
                    code,
                    sender: signal_sender(signo, code, sender),
                }))?;
            }
        }
        Ok(())
    }

    /// Reads the kernel side's counters; any event lost is written to the
    /// trace as an explicit gap and returned.
    fn losses(&mut self, spawned: bool) -> Result<u64, Error> {
        let mut ring_full = 0;
        let mut no_storage = 0;
        let mut before_attach = 0;
        let mut refused = 0;
        let mut untracked = 0;
        if let Ok(Some(per_cpu)) = self
            .skel
            .maps
            .counts
            .lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY)
        {
            for c in per_cpu {
                let at = |i: usize| {
                    c.get(i * 8..i * 8 + 8)
                        .map_or(0, |b| u64::from_ne_bytes(b.try_into().expect("8 bytes")))
                };
                ring_full += at(0);
                no_storage += at(1);
                self.summary.backpressure_stops += at(2);
                before_attach += at(3);
                untracked += at(4);
                // Exits and execs whose mappings could not be listed: not
                // mappings known to be lost (most processes have none), so
                // not counted with them. A mapping the process was seen to
                // make is counted there anyway, as no capture of it came.
                self.summary.mappings_unlisted += at(5);
                // io_uring reads with no room to be remembered: their
                // data captures are missing.
                self.summary.captures.unreadable += at(6);
                self.summary.reflex_stops += at(7);
                refused += at(8);
            }
        }
        // Spawned, the only call under way when following starts is the
        // recorder's own stop in the child before exec.
        self.summary.entered_before_attach = if spawned { 0 } else { before_attach };
        if spawned && refused > 0 {
            // Every task of a spawned command is followed from its first
            // call, so a return with no entry and no restart code (a call
            // the path gate held that a signal interrupted comes back) is
            // a call the program's own seccomp filter refused: the kernel
            // runs the filter before the entry tracepoint, and the exit
            // alone says too little to record. Not a failure of the
            // recorder, but never silent.
            self.summary.refused_unseen = refused;
            self.record_loss(
                refused,
                format!(
                    "ebpf: {refused} calls returned without entering: the program's \
                     seccomp filter refused them before the kernel's entry tracepoint \
                     (--backend ptrace records them)"
                ),
            )?;
        }
        self.summary.spills = self.spills();
        self.warn_masked_exit();
        let issued = self.counter().load(Ordering::Relaxed).saturating_sub(1);
        let gap = issued.saturating_sub(self.seen);
        let lost = ring_full + no_storage + self.malformed;
        let unexplained = if spawned { gap.saturating_sub(lost) } else { 0 };
        if !spawned {
            // Attached: calls under way at detach have ids but no record.
            self.summary.unfinished += gap;
        }
        // A process that could not be followed took no sequence ids, so
        // it is not part of the gap; it lost at least one event.
        let total = lost + unexplained + untracked;
        if total > 0 {
            let parts = [
                (ring_full, "records did not fit in the ring"),
                (no_storage, "calls had no task storage"),
                (
                    untracked,
                    "processes could not be followed (the table of traced processes was full)",
                ),
                (self.malformed, "ring records unreadable"),
                (unexplained, "sequence ids never delivered"),
            ];
            let said: Vec<String> = parts
                .iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, what)| format!("{n} {what}"))
                .collect();
            let reason = format!("ebpf: {}", said.join(", "));
            // The exit status says that events were lost; this says why.
            let hint = if ring_full > 0 {
                " (one call's data larger than the ring can hold, such as a munmap of a \
                 large shared mapping, needs a larger --ring-size or --backend ptrace)"
            } else {
                ""
            };
            say(&format!("reanimator: {reason}{hint}"));
            self.record_loss(total, reason)?;
        }
        Ok(total)
    }

    /// Writes an explicit gap of `count` events, tied to no process.
    fn record_loss(&mut self, count: u64, reason: String) -> Result<(), Error> {
        let seq = self.seq();
        self.sink.record(Record::Loss(Loss {
            seq,
            time_ns: now_ns(),
            tgid: 0,
            tid: 0,
            count,
            reason,
        }))
    }
}

/// Attached: stops following, drains what is left and records each
/// task as detached.
fn self_detach(
    cell: &RefCell<&mut Recorder<'_, '_, '_>>,
    ring: &libbpf_rs::RingBuffer<'_>,
) -> Result<(), Error> {
    {
        let me = cell.borrow();
        me.stop_following();
        let keys: Vec<Vec<u8>> = me.skel.maps.traced.keys().collect();
        for k in keys {
            let _ = me.skel.maps.traced.delete(&k);
        }
    }
    let _ = ring.consume_raw();
    let mut me = cell.borrow_mut();
    if let Some(e) = me.error.take() {
        return Err(e);
    }
    // Leaving: a spill still unread (its call never came back) is given
    // up, so that nothing stays stopped.
    me.spills_done = me.spills();
    me.resume_stopped();
    let mut live: Vec<(u32, u32)> = me.live.drain().collect();
    live.sort_unstable();
    for (tid, tgid) in live {
        let seq = me.seq();
        me.sink.record(Record::ProcessExit(ProcessExit {
            seq,
            time_ns: now_ns(),
            tgid,
            tid,
            status: ExitStatus::Detached,
        }))?;
    }
    Ok(())
}

/// How long a spilled thread may take to stop before its tail is given
/// up (it left the call and takes the pending stop at once, unless it
/// was killed).
const SPILL_STOP_WAIT: Duration = Duration::from_secs(2);

/// Waits until the thread is stopped; false if it ended or did not stop.
fn wait_stopped(tid: u32) -> bool {
    let path = format!("/proc/{tid}/stat");
    let started = Instant::now();
    loop {
        let Ok(stat) = std::fs::read(&path) else {
            return false;
        };
        // The state follows the command name's closing parenthesis.
        let state = stat
            .iter()
            .rposition(|&b| b == b')')
            .and_then(|at| stat.get(at + 2));
        match state {
            Some(b'T' | b't') => return true,
            Some(b'Z' | b'X') | None => return false,
            _ if started.elapsed() > SPILL_STOP_WAIT => return false,
            _ => std::thread::sleep(Duration::from_micros(50)),
        }
    }
}

/// Finishes the open capture of `task`: its status from what arrived.
fn close(task: &mut Task, policy: DataPolicy, counts: &mut CaptureCounts) {
    let Some(open) = task.open.take() else {
        return;
    };
    let Some((head, range)) = task.caps.heads.last_mut() else {
        return;
    };
    let got = (range.end - range.start) as u64;
    head.status = if open.flags & CAP_STRING != 0 {
        head.len = got;
        if open.flags & CAP_FAILED != 0 {
            counts.unreadable += 1;
            CaptureStatus::Unreadable
        } else if open.flags & CAP_UNTERMINATED != 0 {
            counts.truncated += 1;
            CaptureStatus::Truncated
        } else {
            CaptureStatus::Complete
        }
    } else if open.flags & CAP_RUN != 0 {
        // A run of readable pages of a mapped range, from page `elem`:
        // short only where the range was longer than the data limit.
        let from = u64::from(head.elem) * 4096;
        head.len = got;
        if from + got == open.want && open.want < open.present {
            head.len = open.present - from;
            counts.truncated += 1;
            CaptureStatus::Truncated
        } else {
            CaptureStatus::Complete
        }
    } else if open.flags & CAP_FAILED != 0 {
        counts.unreadable += 1;
        CaptureStatus::Unreadable
    } else if got < open.want {
        // Chunks that never arrived: the kernel side counted them.
        CaptureStatus::Lost
    } else if policy == DataPolicy::None && got < open.present && open.flags & CAP_WHOLE == 0 {
        // Structures and AIO requests are captured whole whatever the
        // policy: complete, as ptrace has them. io_uring's SQEs and CQEs
        // too, flagged as such since they can be short: the completions
        // posted since the last look that the ring no longer held.
        CaptureStatus::Skipped
    } else if got < open.present {
        counts.truncated += 1;
        CaptureStatus::Truncated
    } else {
        CaptureStatus::Complete
    };
}

const SIGCHLD_BIT: u64 = 1 << (libc::SIGCHLD - 1);

/// Whether the process will read a pending SIGCHLD while its child waits
/// to exit: it has a handler and does not block it, or it reads SIGCHLD
/// from a signalfd (`script`). A parent that blocks SIGCHLD as it waits
/// for its child (`bash`, around its `waitpid`) or has no handler
/// (`runuser`) learns of the exit from `waitpid`, which misses none:
/// holding the exit for it would only wait out [`EXIT_HOLD_MAX`].
fn listens_for_sigchld(tgid: u32, status: &Status) -> bool {
    if status.caught & SIGCHLD_BIT != 0 && status.blocked & SIGCHLD_BIT == 0 {
        return true;
    }
    let Ok(fds) = std::fs::read_dir(format!("/proc/{tgid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == "anon_inode:[signalfd]")
            && std::fs::read_to_string(format!("/proc/{tgid}/fdinfo/{}", fd.file_name().display()))
                .is_ok_and(|info| {
                    info.lines()
                        .find_map(|l| l.strip_prefix("sigmask:"))
                        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
                        .is_some_and(|m| m & SIGCHLD_BIT != 0)
                })
    })
}
