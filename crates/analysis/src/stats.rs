//! Per-group statistics of system calls in one streaming pass: counts,
//! errors, bytes read and written, latency quantiles and buffer-size
//! distributions, in memory that does not grow with the trace (a few KiB
//! per group; see [`crate::histogram`]).
//!
//! Definitions, which docs/ANALYSIS.md turns into SQL over the export:
//!
//! - **calls**: system call events; **errors**: those that returned an
//!   error (`errno` ≠ 0, restarts included); **unfinished**: those that
//!   never returned (exit, a task killed inside the call).
//! - **latency**: exit time − entry time of every call that returned.
//! - **bytes read / written**: the return value of successful calls that
//!   return a byte count, take a descriptor and pass a data buffer
//!   ([`crate::calls::Io`]); the same values make the **size**
//!   distributions.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;

use reanimator_catalogue as catalogue;
use reanimator_trace::{ReadOptions, Reader, Record, Role, SyscallEvent};
use serde::Serialize;

use crate::calls::{self, Io};
use crate::filter::Filter;
use crate::histogram::{Histogram, Summary};
use crate::paths::PathName;
use crate::scan::{Item, Scan};
use crate::Error;

/// How calls are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    /// By system call.
    Call,
    /// By process id.
    Process,
    /// By thread id.
    Thread,
    /// By the path a call is about (see [`crate::PathTracker`]).
    Path,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Call(u32),
    Process(u32),
    Thread(u32),
    Path(Option<PathName>),
}

/// Keys are small integers or paths: a multiply-xor hash is plenty and
/// much cheaper than SipHash on the per-event path.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v.into());
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

/// Space-saving heavy hitters: the most common exact sizes in fixed
/// memory. Every size making up more than 1/[`TOP_SLOTS`] of the values
/// is listed; a listed count exceeds the true count by at most its
/// `error`.
#[derive(Debug, Clone, Default)]
struct TopSizes {
    slots: Vec<(u64, u64, u64)>,
}

/// Slots of [`TopSizes`].
const TOP_SLOTS: usize = 8;

impl TopSizes {
    #[inline]
    fn add(&mut self, v: u64) {
        if let Some(s) = self.slots.iter_mut().find(|s| s.0 == v) {
            s.1 += 1;
        } else if self.slots.len() < TOP_SLOTS {
            self.slots.push((v, 1, 0));
        } else {
            let min = self
                .slots
                .iter_mut()
                .min_by_key(|s| s.1)
                .expect("slots are full");
            *min = (v, min.1 + 1, min.1);
        }
    }
}

impl TopSizes {
    /// Space-saving summaries merge: a size missing from a full summary
    /// occurred at most its smallest count times, which bounds both its
    /// count and the error added.
    fn merge(&mut self, other: &TopSizes) {
        let floor = |t: &TopSizes| {
            if t.slots.len() == TOP_SLOTS {
                t.slots.iter().map(|s| s.1).min().unwrap_or(0)
            } else {
                0
            }
        };
        let (fa, fb) = (floor(self), floor(other));
        let find = |t: &TopSizes, v: u64| t.slots.iter().find(|s| s.0 == v).copied();
        let mut sizes: Vec<u64> = self.slots.iter().chain(&other.slots).map(|s| s.0).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let mut all: Vec<(u64, u64, u64)> = sizes
            .into_iter()
            .map(|v| {
                let (ca, ea) = find(self, v).map_or((fa, fa), |s| (s.1, s.2));
                let (cb, eb) = find(other, v).map_or((fb, fb), |s| (s.1, s.2));
                (v, ca + cb, ea + eb)
            })
            .collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(TOP_SLOTS);
        self.slots = all;
    }
}

#[derive(Debug, Clone, Default)]
struct Sizes {
    hist: Histogram,
    top: TopSizes,
}

/// What is known about one group.
#[derive(Debug, Clone, Default)]
struct Group {
    calls: u64,
    errors: u64,
    unfinished: u64,
    bytes_read: u64,
    bytes_written: u64,
    latency: Histogram,
    read: Option<Box<Sizes>>,
    write: Option<Box<Sizes>>,
}

impl Group {
    #[inline]
    fn add(&mut self, e: &SyscallEvent) {
        self.calls += 1;
        match e.exit {
            None => self.unfinished += 1,
            Some(x) => {
                self.errors += u64::from(x.is_error);
                self.latency.add(x.exit_ns.saturating_sub(e.enter_ns));
            }
        }
        calls::transfers(e, |io, n| {
            let (total, sizes) = match io {
                Io::Read => (&mut self.bytes_read, &mut self.read),
                Io::Write => (&mut self.bytes_written, &mut self.write),
            };
            *total += n;
            let s = sizes.get_or_insert_with(Default::default);
            s.hist.add(n);
            s.top.add(n);
        });
    }

    /// Adds `other`'s counts and distributions, and its top sizes when
    /// `tops` (the totals leave them out: a merge of every group's list
    /// would mostly be error).
    fn merge(&mut self, other: &Group, tops: bool) {
        self.calls += other.calls;
        self.errors += other.errors;
        self.unfinished += other.unfinished;
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        self.latency.merge(&other.latency);
        for (mine, theirs) in [
            (&mut self.read, &other.read),
            (&mut self.write, &other.write),
        ] {
            if let Some(t) = theirs {
                let m = mine.get_or_insert_with(Default::default);
                m.hist.merge(&t.hist);
                if tops {
                    m.top.merge(&t.top);
                }
            }
        }
    }

    fn report(&self, key: String, with_top: bool) -> GroupReport {
        let sizes = |s: &Option<Box<Sizes>>| {
            s.as_ref().map(|s| {
                let mut top: Vec<TopSize> = s
                    .top
                    .slots
                    .iter()
                    .map(|&(size, count, error)| TopSize { size, count, error })
                    .collect();
                top.sort_by(|a, b| b.count.cmp(&a.count).then(a.size.cmp(&b.size)));
                SizeReport {
                    summary: s.hist.summary(),
                    histogram: s
                        .hist
                        .log2_bins()
                        .into_iter()
                        .map(|(from, to, count)| Bin { from, to, count })
                        .collect(),
                    top: if with_top { top } else { Vec::new() },
                }
            })
        };
        GroupReport {
            key,
            exe: None,
            calls: self.calls,
            errors: self.errors,
            unfinished: self.unfinished,
            bytes_read: self.bytes_read,
            bytes_written: self.bytes_written,
            latency_ns: self.latency.summary(),
            read_sizes: sizes(&self.read),
            write_sizes: sizes(&self.write),
        }
    }
}

/// Accumulates statistics over the items of a [`crate::Scan`].
pub struct Stats {
    by: GroupBy,
    index: HashMap<Key, usize, BuildHasherDefault<KeyHasher>>,
    /// Grouping by call: group index + 1 by syscall number (0 = not
    /// seen yet), a cache in front of `index` for the per-event lookup.
    by_nr: Vec<u32>,
    groups: Vec<(Key, Group)>,
    /// Program names by process or thread id, with the sequence id that
    /// named them (the latest wins when shards merge).
    exes: HashMap<u32, (u64, Vec<u8>)>,
    first_ns: Option<u64>,
    last_ns: u64,
    records: u64,
    /// Processes and threads that made a kept call: a filter keeps every
    /// process start record, so those counted 44 processes for 4 calls of
    /// `--call fsync`.
    processes: HashSet<u32>,
    threads: HashSet<u32>,
    /// The thread of the last call counted, so runs of one thread's calls
    /// cost no lookup.
    last_tid: Option<u32>,
    /// Events the recording lost (its gap records): the counts cover only
    /// what was recorded.
    lost: u64,
}

impl Stats {
    /// Empty statistics grouped `by`.
    pub fn new(by: GroupBy) -> Self {
        Stats {
            by,
            index: HashMap::default(),
            by_nr: vec![0; 1024],
            groups: Vec::new(),
            exes: HashMap::new(),
            first_ns: None,
            last_ns: 0,
            records: 0,
            processes: HashSet::new(),
            threads: HashSet::new(),
            last_tid: None,
            lost: 0,
        }
    }

    /// Takes in one kept record.
    pub fn add(&mut self, item: &Item) {
        let r = &item.record;
        self.records += 1;
        // The span is that of the calls and signals, the records a time
        // window selects: process and path records are kept whatever it is.
        if matches!(r, Record::Syscall(_) | Record::Signal(_)) {
            let t = r.time_ns();
            self.first_ns = Some(self.first_ns.map_or(t, |f| f.min(t)));
            self.last_ns = self.last_ns.max(t);
        }
        match r {
            Record::Syscall(e) => {
                if let Some(x) = e.exit {
                    self.last_ns = self.last_ns.max(x.exit_ns);
                }
                if self.last_tid != Some(e.tid) {
                    self.last_tid = Some(e.tid);
                    self.threads.insert(e.tid);
                    self.processes.insert(e.tgid);
                }
                let cached = match self.by {
                    GroupBy::Call => self.by_nr.get(e.nr as usize).copied().unwrap_or(0),
                    _ => 0,
                };
                let i = if cached != 0 {
                    cached as usize - 1
                } else {
                    let key = match self.by {
                        GroupBy::Call => Key::Call(e.nr),
                        GroupBy::Process => Key::Process(e.tgid),
                        GroupBy::Thread => Key::Thread(e.tid),
                        GroupBy::Path => Key::Path(item.path.clone()),
                    };
                    let i = match self.index.get(&key) {
                        Some(&i) => i,
                        None => {
                            self.groups.push((key.clone(), Group::default()));
                            self.index.insert(key, self.groups.len() - 1);
                            self.groups.len() - 1
                        }
                    };
                    if let (GroupBy::Call, Some(slot)) =
                        (self.by, self.by_nr.get_mut(e.nr as usize))
                    {
                        *slot = i as u32 + 1;
                    }
                    i
                };
                self.groups[i].1.add(e);
                if matches!(self.by, GroupBy::Process | GroupBy::Thread) {
                    self.note_exec(e);
                }
            }
            Record::Loss(l) => self.lost += l.count.max(1),
            Record::ProcessStart(p) => {
                if matches!(self.by, GroupBy::Process | GroupBy::Thread) {
                    let name = p.exe.rsplit(|&b| b == b'/').next().unwrap_or(&p.exe);
                    self.name(p.tid, p.seq, name.to_vec());
                }
            }
            _ => {}
        }
    }

    fn name(&mut self, id: u32, seq: u64, name: Vec<u8>) {
        let e = self.exes.entry(id).or_insert((seq, Vec::new()));
        if seq >= e.0 {
            *e = (seq, name);
        }
    }

    /// Adds the statistics of another part of the same trace (another
    /// shard): the result is what one pass over both would give, except
    /// that top sizes are merged summaries (still within their bounds).
    pub fn merge(&mut self, other: Stats) {
        for (key, g) in other.groups {
            match self.index.get(&key) {
                Some(&i) => self.groups[i].1.merge(&g, true),
                None => {
                    self.index.insert(key.clone(), self.groups.len());
                    self.groups.push((key, g));
                }
            }
        }
        for (id, (seq, name)) in other.exes {
            self.name(id, seq, name);
        }
        self.first_ns = match (self.first_ns, other.first_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last_ns = self.last_ns.max(other.last_ns);
        self.records += other.records;
        self.lost += other.lost;
        self.processes.extend(other.processes);
        self.threads.extend(other.threads);
    }

    /// A successful `execve`/`execveat` renames its process and thread to
    /// the program it started.
    fn note_exec(&mut self, e: &SyscallEvent) {
        let exec = catalogue::by_nr(e.nr).is_some_and(|s| s.effect == catalogue::Effect::Exec);
        if !exec || e.exit.is_some_and(|x| x.is_error) {
            return;
        }
        let program = calls::info(e.nr)
            .path
            .and_then(|i| e.capture(i, Role::Entry))
            .and_then(|c| c.data.as_deref());
        if let Some(p) = program {
            let name = p.rsplit(|&b| b == b'/').next().unwrap_or(p).to_vec();
            self.name(e.tgid, e.seq, name.clone());
            self.name(e.tid, e.seq, name);
        }
    }

    /// The statistics so far, groups with the most calls first.
    pub fn report(&self) -> Report {
        let mut totals = Group::default();
        let mut groups: Vec<GroupReport> = self
            .groups
            .iter()
            .map(|(key, g)| {
                totals.merge(g, false);
                let (name, id) = match key {
                    Key::Call(nr) => (catalogue::name_of(*nr).into_owned(), None),
                    Key::Process(p) | Key::Thread(p) => (p.to_string(), Some(*p)),
                    Key::Path(Some(p)) => (String::from_utf8_lossy(p).into_owned(), None),
                    Key::Path(None) => ("(no path)".to_string(), None),
                };
                let mut report = g.report(name, true);
                report.exe = id
                    .and_then(|i| self.exes.get(&i))
                    .map(|(_, e)| String::from_utf8_lossy(e).into_owned());
                report
            })
            .collect();
        groups.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.key.cmp(&b.key)));
        let start_ns = self.first_ns.unwrap_or(0);
        Report {
            by: self.by,
            origin_ns: start_ns,
            start_ns,
            end_ns: self.last_ns,
            duration_ns: self.last_ns.saturating_sub(start_ns),
            records: self.records,
            processes: self.processes.len() as u64,
            threads: self.threads.len() as u64,
            lost_events: self.lost,
            totals: totals.report("total".into(), false),
            groups,
        }
    }
}

/// Reads `trace` once and returns its statistics grouped `by`, over the
/// records `filter` keeps. Grouping by call, process or thread without a
/// path filter splits the trace's records frames between `threads`
/// readers whose statistics are merged (the histograms merge exactly);
/// paths need the records in order and use one. `progress(done, total)`
/// gets bytes of trace read.
pub fn stats(
    trace: &Path,
    filter: Filter,
    by: GroupBy,
    threads: usize,
    progress: &mut (dyn FnMut(u64, u64) + Send),
) -> Result<Report, Error> {
    // Paths are followed in record order; so is a time window without a
    // clock anchor (its start is the first record, which only a reader of
    // every frame knows).
    let anchor = Reader::open(trace, ReadOptions { data: false })?
        .meta()
        .clock
        .monotonic_ns;
    let windowed = filter.from_ns.is_some() || filter.to_ns.is_some();
    let ordered = by == GroupBy::Path || filter.path.is_some() || (anchor == 0 && windowed);
    let threads = if ordered { 1 } else { threads.max(1) as u64 };
    let progress = std::sync::Mutex::new(progress);
    let shard = |index: u64| -> Result<Stats, Error> {
        let mut scan = if threads == 1 {
            Scan::open(trace, filter.clone(), by == GroupBy::Path, false)?
        } else {
            Scan::open_shard(trace, filter.clone(), index, threads)?
        };
        let mut stats = Stats::new(by);
        let mut n = 0u64;
        while let Some(item) = scan.next_item()? {
            stats.add(&item);
            n += 1;
            if index == 0 && n.is_multiple_of(65_536) {
                if let Ok(mut p) = progress.lock() {
                    p(scan.reader().offset(), scan.reader().file_len());
                }
            }
        }
        Ok(stats)
    };
    let parts: Vec<Result<Stats, Error>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|i| s.spawn(move || shard(i))).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Encode("a stats thread panicked".into())))
            })
            .collect()
    });
    let mut total: Option<Stats> = None;
    for part in parts {
        let part = part?;
        match &mut total {
            Some(t) => t.merge(part),
            None => total = Some(part),
        }
    }
    let mut report = total.unwrap_or_else(|| Stats::new(by)).report();
    report.origin_ns = if anchor != 0 { anchor } else { report.start_ns };
    Ok(report)
}

/// The result of `reanimator stats` (its `--json` form).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// How calls are grouped.
    pub by: GroupBy,
    /// The time `--from` and `--to` count from: the recording's start
    /// (its clock anchor), which for an eBPF recording comes a good part
    /// of a second before its first record; the first record in traces
    /// without an anchor.
    pub origin_ns: u64,
    /// Entry time of the first kept call or signal (ns of
    /// `CLOCK_MONOTONIC`).
    pub start_ns: u64,
    /// Time of the last kept call's exit or signal.
    pub end_ns: u64,
    /// `end_ns - start_ns`.
    pub duration_ns: u64,
    /// Kept records of every kind.
    pub records: u64,
    /// Processes that made a kept call.
    pub processes: u64,
    /// Threads that made a kept call.
    pub threads: u64,
    /// Events the recording lost (gap records kept), not in the counts.
    pub lost_events: u64,
    /// Every group together.
    pub totals: GroupReport,
    /// One entry per group, most calls first.
    pub groups: Vec<GroupReport>,
}

/// Statistics of one group.
#[derive(Debug, Clone, Serialize)]
pub struct GroupReport {
    /// The call name, process or thread id, or path.
    pub key: String,
    /// For processes and threads: the file name of the program it ran
    /// last (its executable at start, or what it `execve`d).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exe: Option<String>,
    /// System call events.
    pub calls: u64,
    /// Calls that returned an error.
    pub errors: u64,
    /// Calls that never returned.
    pub unfinished: u64,
    /// Bytes the kernel handed to the program (see the module docs).
    pub bytes_read: u64,
    /// Bytes the program handed to the kernel.
    pub bytes_written: u64,
    /// Latency of the calls that returned, in ns.
    pub latency_ns: Summary,
    /// Sizes of successful reads.
    pub read_sizes: Option<SizeReport>,
    /// Sizes of successful writes.
    pub write_sizes: Option<SizeReport>,
}

/// The distribution of transfer sizes of one group and direction.
#[derive(Debug, Clone, Serialize)]
pub struct SizeReport {
    /// Quantiles of the sizes in bytes.
    pub summary: Summary,
    /// Counts per power-of-two bin.
    pub histogram: Vec<Bin>,
    /// The most common exact sizes (empty in the totals).
    pub top: Vec<TopSize>,
}

/// One power-of-two bin of a size histogram.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Bin {
    /// Smallest size in the bin.
    pub from: u64,
    /// Largest size in the bin.
    pub to: u64,
    /// Values in the bin.
    pub count: u64,
}

/// A common exact size.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TopSize {
    /// The size in bytes.
    pub size: u64,
    /// How often it occurred (an overestimate by at most `error`).
    pub count: u64,
    /// Bound on the overestimate: 0 means `count` is exact.
    pub error: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use reanimator_trace::SyscallExit;

    fn item(nr: u32, tgid: u32, ret: i64, dur: u64) -> Item {
        Item {
            record: Record::Syscall(SyscallEvent {
                seq: 0,
                tgid,
                tid: tgid,
                nr,
                enter_ns: 100,
                args: [3, 0, 0, 0, 0, 0],
                exit: Some(SyscallExit {
                    exit_ns: 100 + dur,
                    ret,
                    is_error: ret < 0,
                }),
                captures: vec![],
            }),
            path: None,
        }
    }

    #[test]
    fn counts_bytes_errors_and_sizes() {
        let mut s = Stats::new(GroupBy::Call);
        for i in 0..100 {
            s.add(&item(1, 7, 138, 1000 + i));
        }
        s.add(&item(1, 7, -28, 5));
        s.add(&item(0, 7, 4096, 10));
        s.add(&item(0, 7, 0, 10));
        let r = s.report();
        assert_eq!(r.groups[0].key, "write");
        assert_eq!(r.groups[0].calls, 101);
        assert_eq!(r.groups[0].errors, 1);
        assert_eq!(r.groups[0].bytes_written, 13_800);
        let w = r.groups[0].write_sizes.as_ref().unwrap();
        assert_eq!(
            (w.top[0].size, w.top[0].count, w.top[0].error),
            (138, 100, 0)
        );
        assert_eq!(r.groups[1].bytes_read, 4096);
        assert_eq!(r.totals.calls, 103);
        assert_eq!(r.totals.bytes_read + r.totals.bytes_written, 4096 + 13_800);
        assert_eq!(r.totals.latency_ns.max, Some(1099));
        assert_eq!(r.duration_ns, 1099);
    }

    #[test]
    fn merged_shards_report_what_one_pass_does() {
        let (mut whole, mut a, mut b) = (
            Stats::new(GroupBy::Process),
            Stats::new(GroupBy::Process),
            Stats::new(GroupBy::Process),
        );
        for i in 0..5000u64 {
            let it = item(
                if i % 3 == 0 { 0 } else { 1 },
                7 + (i % 4) as u32,
                (i % 700) as i64,
                i * 37 % 9000,
            );
            whole.add(&it);
            if i % 2 == 0 { &mut a } else { &mut b }.add(&it);
        }
        a.merge(b);
        let (x, y) = (whole.report(), a.report());
        assert_eq!(
            serde_json::to_value(&x.totals).unwrap(),
            serde_json::to_value(&y.totals).unwrap()
        );
        for (g, h) in x.groups.iter().zip(&y.groups) {
            assert_eq!(
                (&g.key, g.calls, g.bytes_read),
                (&h.key, h.calls, h.bytes_read)
            );
            assert_eq!(g.latency_ns, h.latency_ns);
            let (gs, hs) = (
                g.write_sizes.as_ref().unwrap(),
                h.write_sizes.as_ref().unwrap(),
            );
            assert_eq!(gs.summary, hs.summary);
            for t in &hs.top {
                assert!(t.count >= t.error, "{t:?}");
            }
        }
    }

    #[test]
    fn heavy_sizes_survive_churn() {
        let mut t = TopSizes::default();
        for i in 0..10_000u64 {
            t.add(if i % 2 == 0 { 16384 } else { i });
        }
        let best = t.slots.iter().max_by_key(|s| s.1).unwrap();
        assert_eq!(best.0, 16384);
        assert!(best.1 >= 5000 && best.1 - best.2 <= 5000);
    }
}
