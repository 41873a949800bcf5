//! How faithfully replays reproduce their original: per-call response
//! times compared the way the metrology of measurement methods compares
//! a method with a reference (Pereira et al., "File System Trace Replay
//! Methods Through the Lens of Metrology", sections III-D and III-F), the
//! concurrency each run issued its calls at, and how far each replayed
//! call was issued from its scheduled time.
//!
//! The input is the original trace and one or more *timings traces*
//! (`reanimator replay ORIGINAL --timings OUT`): one system-call event per
//! call replay executed, with the original's `seq`, `tid` and `nr` and the
//! replay's own entry and exit times. Events are joined by `seq`.
//!
//! Every figure is computed in streaming passes with bounded memory: one
//! pass over the original per replay, joined with that replay as both are
//! read (both are in completion order, so matching calls are close in
//! both files). Calls waiting for their match, and call entries and exits
//! waiting to be put in time order, are held in buffers of fixed maximum
//! size (below), so memory does not grow with the traces.
//!
//! Definitions, which docs/ANALYSIS.md explains with the paper's
//! formulas:
//!
//! - **response time**: exit time − entry time of a call, in the original
//!   and in the replay; only calls present in both count (matched calls).
//! - **reference** of replay *i* for one call name: the original's mean
//!   response time over the calls replay *i* matched; **bias_i** is the
//!   replay's mean relative to it, in percent.
//! - **concurrency** of a call: the calls of the same trace in flight at
//!   its entry (entered and not yet exited), itself included; over every
//!   call of the original that returned, and every event of a replay.
//! - **issue-time error** of a replayed call: its entry time after the
//!   replay's start minus the original's entry time after the trace's
//!   start divided by the replay's speed-up.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};
use std::path::{Path, PathBuf};

use reanimator_catalogue as catalogue;
use reanimator_trace::{ReadOptions, Reader, Record, TraceMeta, TIMINGS_RECORDER};
use serde::Serialize;

use crate::filter::Filter;
use crate::histogram::Histogram;
use crate::scan::Scan;
use crate::Error;

/// How far, in sequence ids, the original is read past the replay event
/// being matched: calls entered up to that event have usually completed
/// (and been written) by then.
const READ_AHEAD: u64 = 1 << 12;
/// An original call still unmatched after this many more original calls
/// have been read is given up on (it stays counted as not replayed): both
/// files are in completion order, so its replay event would be that far
/// out of place.
const GIVE_UP_AFTER: u64 = 1 << 20;
/// Most calls each side of the join holds while waiting for their match
/// (about 64 MiB each at most).
const JOIN_CAP: usize = 1 << 20;
/// Most entry and exit points a concurrency count holds back while
/// waiting for records written out of completion order (16 MiB).
const FLIGHT_CAP: usize = 1 << 20;
/// How much longer than the longest call seen a concurrency count waits
/// before it takes a point as final: records are only roughly in
/// completion order (a recorder writes each thread's batch whole).
const FLIGHT_SLACK_NS: u64 = 1_000_000_000;
/// Labels of the concurrency levels reported.
const LEVELS: [&str; 6] = ["1", "2", "3", "4", "5-8", "9+"];
/// Points of each response-time distribution reported
/// ([`Latency::cdf_ns`]): quantiles 0, 1/64, ..., 1, enough for a smooth
/// CDF in a picture while keeping the JSON small.
const CDF_POINTS: usize = 65;

/// What a timings trace's meta says about the replay that wrote it.
#[derive(Debug, Clone)]
struct Timings {
    replay_of: Option<String>,
    timing: String,
    speedup: f64,
    order: Option<String>,
    trace_origin_ns: u64,
    replay_origin_ns: u64,
}

impl Timings {
    fn from_meta(path: &Path, meta: &TraceMeta) -> Result<Timings, Error> {
        let bad = |what: String| Error::Input {
            path: path.to_path_buf(),
            what,
        };
        if meta.recorder != TIMINGS_RECORDER {
            return Err(bad(format!(
                "not a timings trace (written by recorder `{}`, not `replay`); make one with \
                 `reanimator replay ORIGINAL --timings FILE`",
                meta.recorder
            )));
        }
        let option = |key: &str| {
            meta.options
                .get(key)
                .ok_or_else(|| bad(format!("timings trace without the `{key}` option")))
        };
        let origin = |key: &str| {
            let v = option(key)?;
            v.parse::<u64>()
                .map_err(|_| bad(format!("option `{key}` is `{v}`, not a time in ns")))
        };
        let timing = option("timing")?.clone();
        let speedup = match timing.as_str() {
            "afap" | "original" => 1.0,
            t => match t.strip_prefix("scale=").map(str::parse::<f64>) {
                Some(Ok(x)) if x > 0.0 && x.is_finite() => x,
                _ => {
                    return Err(bad(format!(
                        "unknown timing `{t}` (expected afap, original or scale=X)"
                    )))
                }
            },
        };
        Ok(Timings {
            replay_of: meta.options.get("replay_of").cloned(),
            timing,
            speedup,
            order: meta.options.get("order").cloned(),
            trace_origin_ns: origin("trace_origin_ns")?,
            replay_origin_ns: origin("replay_origin_ns")?,
        })
    }
}

/// Count, mean and sum of squared deviations, updated one value at a
/// time (Welford): stable where sums of squares of nanosecond latencies
/// would cancel.
#[derive(Debug, Clone, Copy, Default)]
struct Moments {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    fn add(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    fn mean(&self) -> Option<f64> {
        (self.n > 0).then_some(self.mean)
    }

    /// Standard error of the mean: sample standard deviation / √n.
    fn se(&self) -> Option<f64> {
        (self.n >= 2)
            .then(|| (self.m2.max(0.0) / (self.n - 1) as f64).sqrt() / (self.n as f64).sqrt())
    }
}

/// Response times of the matched calls of one name in one replay, both
/// sides.
#[derive(Debug, Clone, Default)]
struct Pair {
    reference: Moments,
    replay: Moments,
    ref_hist: Histogram,
    rep_hist: Histogram,
}

impl Pair {
    fn add(&mut self, orig_ns: u64, rep_ns: u64) {
        self.reference.add(orig_ns as f64);
        self.replay.add(rep_ns as f64);
        self.ref_hist.add(orig_ns);
        self.rep_hist.add(rep_ns);
    }
}

/// What one replay's pass leaves of a [`Pair`]: its histograms reduced to
/// the quantiles reported, so memory does not grow with the replays.
#[derive(Debug, Clone)]
struct Paired {
    reference: Moments,
    replay: Moments,
    p50: Option<u64>,
    p99: Option<u64>,
    cdf: Vec<u64>,
}

/// Everything kept about one call name (or all calls) across passes.
#[derive(Debug, Clone, Default)]
struct CallState {
    /// Original calls of this name that returned.
    original_calls: u64,
    /// Original response times of matched calls, every replay's pooled.
    pooled_ref: Histogram,
    /// Per replay, once its pass is done.
    replays: Vec<Option<Paired>>,
}

impl CallState {
    fn note(&mut self, replay: usize, count: usize, pair: &Pair) {
        self.pooled_ref.merge(&pair.ref_hist);
        self.replays.resize(count, None);
        self.replays[replay] = Some(Paired {
            reference: pair.reference,
            replay: pair.replay,
            p50: pair.rep_hist.quantile(0.5),
            p99: pair.rep_hist.quantile(0.99),
            cdf: cdf(&pair.rep_hist),
        });
    }
}

/// [`CDF_POINTS`] evenly spaced quantiles of `h`, the first and last its
/// exact minimum and maximum; empty when `h` is.
fn cdf(h: &Histogram) -> Vec<u64> {
    let (Some(min), Some(max)) = (h.min(), h.max()) else {
        return Vec::new();
    };
    let last = CDF_POINTS - 1;
    (0..CDF_POINTS)
        .map(|k| match k {
            0 => Some(min),
            k if k == last => Some(max),
            k => h.quantile(k as f64 / last as f64),
        })
        .map(|v| v.unwrap_or(max))
        .collect()
}

/// Point kinds of [`InFlight`], in the order points of one time are
/// taken: a call that exits when another enters is no longer in flight.
const EXIT: u8 = 0;
const ENTER: u8 = 1;
/// The entry of a call that took no time: counts itself, leaves nothing
/// in flight.
const ENTER_INSTANT: u8 = 2;

/// Counts the calls in flight at each call's entry, from calls given in
/// roughly completion order: entries and exits wait in a heap until no
/// call still to come can start before them (the newest exit seen minus
/// the longest call seen, minus a slack), or until the heap is full.
#[derive(Debug)]
struct InFlight {
    points: BinaryHeap<Reverse<(u64, u8)>>,
    cap: usize,
    slack_ns: u64,
    newest_exit: u64,
    longest: u64,
    /// Time of the last point taken: an entry before it comes too late.
    done_to: Option<u64>,
    active: u64,
    levels: [u64; 6],
    sum: u64,
    calls: u64,
    late: u64,
}

impl InFlight {
    fn new(cap: usize, slack_ns: u64) -> Self {
        InFlight {
            points: BinaryHeap::new(),
            cap: cap.max(1),
            slack_ns,
            newest_exit: 0,
            longest: 0,
            done_to: None,
            active: 0,
            levels: [0; 6],
            sum: 0,
            calls: 0,
            late: 0,
        }
    }

    fn add(&mut self, enter: u64, exit: u64) {
        let exit = exit.max(enter);
        match self.done_to {
            Some(done) if enter < done => {
                // Its own level is lost, but it is still in flight for
                // the calls that enter before it exits.
                self.late += 1;
                if exit > done {
                    self.active += 1;
                    self.points.push(Reverse((exit, EXIT)));
                }
            }
            _ if exit > enter => {
                self.points.push(Reverse((enter, ENTER)));
                self.points.push(Reverse((exit, EXIT)));
            }
            _ => self.points.push(Reverse((enter, ENTER_INSTANT))),
        }
        self.newest_exit = self.newest_exit.max(exit);
        self.longest = self.longest.max(exit - enter);
        let horizon = self
            .newest_exit
            .saturating_sub(self.longest)
            .saturating_sub(self.slack_ns);
        while let Some(&Reverse((time, _))) = self.points.peek() {
            if time >= horizon && self.points.len() <= self.cap {
                break;
            }
            self.take();
        }
    }

    fn take(&mut self) {
        let Some(Reverse((time, kind))) = self.points.pop() else {
            return;
        };
        self.done_to = Some(time);
        if kind == EXIT {
            self.active = self.active.saturating_sub(1);
            return;
        }
        let level = self.active + 1;
        let slot = match level {
            1..=4 => level as usize - 1,
            5..=8 => 4,
            _ => 5,
        };
        self.levels[slot] += 1;
        self.sum += level;
        self.calls += 1;
        if kind == ENTER {
            self.active += 1;
        }
    }

    fn finish(mut self) -> Concurrency {
        while !self.points.is_empty() {
            self.take();
        }
        let n = self.calls.max(1) as f64;
        Concurrency {
            calls: self.calls,
            levels: LEVELS
                .iter()
                .zip(self.levels)
                .map(|(&level, calls)| Level {
                    level,
                    calls,
                    share: calls as f64 / n,
                })
                .collect(),
            mean: (self.calls > 0).then(|| self.sum as f64 / n),
            late: self.late,
        }
    }
}

/// Signed issue-time errors in ns, as two histograms of magnitudes.
#[derive(Debug, Default)]
struct IssueAcc {
    /// Calls issued before their time (magnitudes).
    early: Histogram,
    /// Calls issued on time or after.
    late: Histogram,
}

impl IssueAcc {
    fn add(&mut self, error_ns: f64) {
        let magnitude = error_ns.abs().round() as u64;
        if error_ns < 0.0 && magnitude > 0 {
            self.early.add(magnitude);
        } else {
            self.late.add(magnitude);
        }
    }

    /// The signed value of rank `rank`: the early calls, largest
    /// magnitude first, then the late ones.
    fn at_rank(&self, rank: u64) -> Option<f64> {
        let early = self.early.count();
        if rank < early {
            self.early.at_rank(early - 1 - rank).map(|v| -(v as f64))
        } else {
            self.late.at_rank(rank - early).map(|v| v as f64)
        }
    }

    fn report(&self) -> Option<IssueError> {
        let n = self.early.count() + self.late.count();
        if n == 0 {
            return None;
        }
        let rank = |q: f64| ((q * n as f64).ceil() as u64).clamp(1, n) - 1;
        let us = |v: Option<f64>| v.unwrap_or(0.0) / 1e3;
        let mut abs = self.early.clone();
        abs.merge(&self.late);
        let max = match self.late.max() {
            Some(v) => Some(v as f64),
            None => self.early.min().map(|v| -(v as f64)),
        };
        Some(IssueError {
            calls: n,
            error_us: Quantiles {
                p50: us(self.at_rank(rank(0.5))),
                p90: us(self.at_rank(rank(0.9))),
                p99: us(self.at_rank(rank(0.99))),
                max: us(max),
            },
            abs_us: Quantiles {
                p50: us(abs.quantile(0.5).map(|v| v as f64)),
                p90: us(abs.quantile(0.9).map(|v| v as f64)),
                p99: us(abs.quantile(0.99).map(|v| v as f64)),
                max: us(abs.max().map(|v| v as f64)),
            },
        })
    }
}

/// The original-wide figures, gathered on the first pass.
#[derive(Debug)]
struct OriginalAcc {
    calls: u64,
    first_ns: Option<u64>,
    last_ns: u64,
    flight: InFlight,
    per_call: HashMap<u32, u64>,
}

/// One side of the join: what matching needs of a call.
#[derive(Debug, Clone, Copy)]
struct Call {
    nr: u32,
    tid: u32,
    enter_ns: u64,
    exit_ns: u64,
}

/// An original call waiting for its replay event, with the number of
/// original calls read before it (its age).
#[derive(Debug, Clone, Copy)]
struct Waiting {
    call: Call,
    read: u64,
}

/// One replay's pass: its events joined with the original's calls.
struct Pass<'a> {
    orig: Scan,
    orig_done: bool,
    orig_max_seq: Option<u64>,
    orig_reads: u64,
    waiting_orig: BTreeMap<u64, Waiting>,
    /// Every original call put in `waiting_orig`, oldest first, so the
    /// ones waited for too long are found without a search.
    waiting_order: VecDeque<(u64, u64)>,
    waiting_replay: BTreeMap<u64, Call>,
    original: Option<&'a mut OriginalAcc>,
    timings: &'a Timings,
    pairs: HashMap<u32, Pair>,
    all: Pair,
    issue: IssueAcc,
    /// The original's matched calls in flight (see
    /// [`ReplayReport::original_concurrency`]).
    matched_flight: InFlight,
    matched: u64,
}

impl Pass<'_> {
    /// Reads the original up to its next call that returned (or its
    /// end), and matches that call or sets it waiting.
    fn read_original(&mut self) -> Result<(), Error> {
        loop {
            let Some(item) = self.orig.next_item()? else {
                self.orig_done = true;
                return Ok(());
            };
            let Record::Syscall(e) = item.record else {
                continue;
            };
            self.orig_max_seq = Some(self.orig_max_seq.map_or(e.seq, |m| m.max(e.seq)));
            let Some(exit) = e.exit else { continue };
            let call = Call {
                nr: e.nr,
                tid: e.tid,
                enter_ns: e.enter_ns,
                exit_ns: exit.exit_ns.max(e.enter_ns),
            };
            if let Some(acc) = self.original.as_deref_mut() {
                acc.calls += 1;
                acc.first_ns = Some(acc.first_ns.map_or(call.enter_ns, |f| f.min(call.enter_ns)));
                acc.last_ns = acc.last_ns.max(call.exit_ns);
                acc.flight.add(call.enter_ns, call.exit_ns);
                *acc.per_call.entry(call.nr).or_default() += 1;
            }
            self.orig_reads += 1;
            if let Some(rep) = self.waiting_replay.remove(&e.seq) {
                self.pair(call, rep);
                return Ok(());
            }
            let read = self.orig_reads;
            self.waiting_orig.insert(e.seq, Waiting { call, read });
            self.waiting_order.push_back((read, e.seq));
            while let Some(&(read, seq)) = self.waiting_order.front() {
                if read + GIVE_UP_AFTER >= self.orig_reads && self.waiting_orig.len() <= JOIN_CAP {
                    break;
                }
                self.waiting_order.pop_front();
                if self.waiting_orig.get(&seq).is_some_and(|w| w.read == read) {
                    self.waiting_orig.remove(&seq);
                }
            }
            return Ok(());
        }
    }

    /// Matches a replay event with its original call, reading the
    /// original as far as needed; an event whose original is not read
    /// yet waits for it.
    fn replayed(&mut self, seq: u64, rep: Call) -> Result<(), Error> {
        while !self.orig_done
            && self
                .orig_max_seq
                .is_none_or(|m| m < seq.saturating_add(READ_AHEAD))
        {
            self.read_original()?;
        }
        if let Some(w) = self.waiting_orig.remove(&seq) {
            self.pair(w.call, rep);
        } else if !self.orig_done {
            self.waiting_replay.insert(seq, rep);
            if self.waiting_replay.len() > JOIN_CAP {
                self.waiting_replay.pop_first();
            }
        }
        Ok(())
    }

    /// Folds a matched pair in; the same `seq` with another call or
    /// thread is not the same call (a timings trace of another original)
    /// and stays unmatched.
    fn pair(&mut self, orig: Call, rep: Call) {
        if orig.nr != rep.nr || orig.tid != rep.tid {
            return;
        }
        self.matched += 1;
        self.matched_flight.add(orig.enter_ns, orig.exit_ns);
        let (o, r) = (orig.exit_ns - orig.enter_ns, rep.exit_ns - rep.enter_ns);
        self.pairs.entry(orig.nr).or_default().add(o, r);
        self.all.add(o, r);
        let t = self.timings;
        let replay_rel = rep.enter_ns as f64 - t.replay_origin_ns as f64;
        let orig_rel = orig.enter_ns as f64 - t.trace_origin_ns as f64;
        self.issue.add(replay_rel - orig_rel / t.speedup);
    }
}

/// What one pass found about its replay.
struct PassOutcome {
    report: ReplayReport,
    pairs: HashMap<u32, Pair>,
    all: Pair,
}

/// One pass: the replay `path` read in full, the original read alongside.
/// `done(bytes)` gets the bytes of both files read so far.
fn run_pass(
    original: &Path,
    path: &Path,
    timings: &Timings,
    whole_original: Option<&mut OriginalAcc>,
    done: &mut dyn FnMut(u64),
) -> Result<PassOutcome, Error> {
    let mut replay = Scan::open(path, Filter::default(), false, false)?;
    let mut pass = Pass {
        orig: Scan::open(original, Filter::default(), false, false)?,
        orig_done: false,
        orig_max_seq: None,
        orig_reads: 0,
        waiting_orig: BTreeMap::new(),
        waiting_order: VecDeque::new(),
        waiting_replay: BTreeMap::new(),
        original: whole_original,
        timings,
        pairs: HashMap::new(),
        all: Pair::default(),
        issue: IssueAcc::default(),
        matched_flight: InFlight::new(FLIGHT_CAP, FLIGHT_SLACK_NS),
        matched: 0,
    };
    let mut flight = InFlight::new(FLIGHT_CAP, FLIGHT_SLACK_NS);
    let (mut events, mut first_ns, mut last_ns) = (0u64, None::<u64>, 0u64);
    while let Some(item) = replay.next_item()? {
        let Record::Syscall(e) = item.record else {
            continue;
        };
        let Some(exit) = e.exit else { continue };
        let call = Call {
            nr: e.nr,
            tid: e.tid,
            enter_ns: e.enter_ns,
            exit_ns: exit.exit_ns.max(e.enter_ns),
        };
        events += 1;
        first_ns = Some(first_ns.map_or(call.enter_ns, |f| f.min(call.enter_ns)));
        last_ns = last_ns.max(call.exit_ns);
        flight.add(call.enter_ns, call.exit_ns);
        pass.replayed(e.seq, call)?;
        if events.is_multiple_of(65_536) {
            done(pass.orig.reader().offset() + replay.reader().offset());
        }
    }
    // The rest of the original: its own figures, and the originals of
    // replay events still waiting.
    while !pass.orig_done {
        pass.read_original()?;
        if pass.orig_reads.is_multiple_of(65_536) {
            done(pass.orig.reader().offset() + replay.reader().offset());
        }
    }
    done(pass.orig.reader().file_len() + replay.reader().file_len());
    let span_ns = first_ns.map_or(0, |f| last_ns.saturating_sub(f));
    Ok(PassOutcome {
        report: ReplayReport {
            path: path.display().to_string(),
            replay_of: timings.replay_of.clone(),
            timing: timings.timing.clone(),
            speedup: timings.speedup,
            order: timings.order.clone(),
            events,
            matched: pass.matched,
            unmatched: events - pass.matched,
            not_replayed: 0,
            span_ns,
            span_ratio: None,
            concurrency: flight.finish(),
            original_concurrency: pass.matched_flight.finish(),
            issue_error: pass.issue.report(),
        },
        pairs: pass.pairs,
        all: pass.all,
    })
}

/// Compares the replays' timings traces with their `original` trace:
/// one pass over the original per replay, joined with that replay by
/// `seq`, in bounded memory. Fails, naming the file, when a replay's file
/// is not a timings trace or the original is one. `progress(done,
/// total)` gets bytes read over all passes.
pub fn fidelity(
    original: &Path,
    replays: &[PathBuf],
    progress: &mut dyn FnMut(u64, u64),
) -> Result<FidelityReport, Error> {
    if replays.is_empty() {
        return Err(Error::Usage(
            "fidelity needs at least one replay's timings trace".into(),
        ));
    }
    let reader = Reader::open(original, ReadOptions { data: false })?;
    let recorder = reader.meta().recorder.clone();
    if recorder == TIMINGS_RECORDER {
        return Err(Error::Input {
            path: original.to_path_buf(),
            what: "a replay's timings trace, not a recording: give the original trace first".into(),
        });
    }
    let original_len = reader.file_len();
    drop(reader);
    let mut timings = Vec::with_capacity(replays.len());
    let mut lengths = Vec::with_capacity(replays.len());
    for path in replays {
        let reader = Reader::open(path, ReadOptions { data: false })?;
        timings.push(Timings::from_meta(path, reader.meta())?);
        lengths.push(original_len + reader.file_len());
    }
    let total: u64 = lengths.iter().sum();

    let mut whole = OriginalAcc {
        calls: 0,
        first_ns: None,
        last_ns: 0,
        flight: InFlight::new(FLIGHT_CAP, FLIGHT_SLACK_NS),
        per_call: HashMap::new(),
    };
    let mut calls: BTreeMap<u32, CallState> = BTreeMap::new();
    let mut all = CallState::default();
    let mut reports = Vec::with_capacity(replays.len());
    let mut base = 0u64;
    for (i, (path, t)) in replays.iter().zip(&timings).enumerate() {
        let mut done = |bytes: u64| progress(base + bytes, total);
        let outcome = run_pass(original, path, t, (i == 0).then_some(&mut whole), &mut done)?;
        base += lengths[i];
        for (nr, pair) in &outcome.pairs {
            calls.entry(*nr).or_default().note(i, replays.len(), pair);
        }
        all.note(i, replays.len(), &outcome.all);
        reports.push(outcome.report);
    }

    let original_span = whole
        .first_ns
        .map_or(0, |f| whole.last_ns.saturating_sub(f));
    for r in &mut reports {
        r.not_replayed = whole.calls.saturating_sub(r.matched);
        r.span_ratio = (original_span > 0).then(|| r.span_ns as f64 / original_span as f64);
    }
    all.original_calls = whole.calls;
    for (nr, n) in &whole.per_call {
        if let Some(state) = calls.get_mut(nr) {
            state.original_calls = *n;
        }
    }
    let mut rows: Vec<CallFidelity> = calls
        .iter()
        .map(|(nr, state)| call_report(catalogue::name_of(*nr).into_owned(), state, replays.len()))
        .collect();
    let time = |c: &CallFidelity| c.original.mean_ns.unwrap_or(0.0) * c.n as f64;
    rows.sort_by(|a, b| {
        time(b)
            .total_cmp(&time(a))
            .then_with(|| a.call.cmp(&b.call))
    });
    Ok(FidelityReport {
        original: OriginalReport {
            path: original.display().to_string(),
            recorder,
            calls: whole.calls,
            span_ns: original_span,
            concurrency: whole.flight.finish(),
        },
        replays: reports,
        all: call_report("all calls".into(), &all, replays.len()),
        calls: rows,
    })
}

/// The per-replay figures and the metrology of one call name.
fn call_report(call: String, state: &CallState, replays: usize) -> CallFidelity {
    let per: Vec<Option<&Paired>> = (0..replays)
        .map(|i| state.replays.get(i).and_then(Option::as_ref))
        .collect();
    let matched: u64 = per.iter().flatten().map(|p| p.reference.n).sum();
    let ref_sum: f64 = per
        .iter()
        .flatten()
        .map(|p| p.reference.mean * p.reference.n as f64)
        .sum();
    let means: Vec<f64> = per
        .iter()
        .flatten()
        .filter_map(|p| p.replay.mean())
        .collect();
    CallFidelity {
        call,
        original_calls: state.original_calls,
        n: per
            .iter()
            .flatten()
            .map(|p| p.reference.n)
            .max()
            .unwrap_or(0),
        original: Latency {
            mean_ns: (matched > 0).then(|| ref_sum / matched as f64),
            p50_ns: state.pooled_ref.quantile(0.5),
            p99_ns: state.pooled_ref.quantile(0.99),
            cdf_ns: cdf(&state.pooled_ref),
        },
        replay_mean_ns: (!means.is_empty()).then(|| means.iter().sum::<f64>() / means.len() as f64),
        replays: per
            .iter()
            .map(|p| match p {
                None => ReplayLatency::default(),
                Some(p) => ReplayLatency {
                    n: p.replay.n,
                    reference_mean_ns: p.reference.mean(),
                    mean_ns: p.replay.mean(),
                    p50_ns: p.p50,
                    p99_ns: p.p99,
                    cdf_ns: p.cdf.clone(),
                    bias_pct: relative_bias(p),
                },
            })
            .collect(),
        metrology: metrology(&per),
    }
}

/// `(mean − reference) / reference · 100`, when the reference is not 0.
fn relative_bias(p: &Paired) -> Option<f64> {
    let (reference, mean) = (p.reference.mean()?, p.replay.mean()?);
    (reference > 0.0).then(|| (mean - reference) / reference * 100.0)
}

/// The paper's figures (section III-F) over the replays that matched at
/// least two calls of the name with a reference above 0; see
/// docs/ANALYSIS.md.
fn metrology(per: &[Option<&Paired>]) -> Option<Metrology> {
    struct One {
        bias: f64,
        u_ref: f64,
        se_replay: f64,
    }
    let used: Vec<One> = per
        .iter()
        .flatten()
        .filter_map(|p| {
            let reference = p.reference.mean()?;
            Some(One {
                bias: relative_bias(p)?,
                u_ref: p.reference.se()? / reference * 100.0,
                se_replay: p.replay.se()? / reference * 100.0,
            })
        })
        .collect();
    if used.is_empty() {
        return None;
    }
    let k = used.len() as f64;
    let mean_bias = used.iter().map(|o| o.bias).sum::<f64>() / k;
    let rms_bias = (used.iter().map(|o| o.bias * o.bias).sum::<f64>() / k).sqrt();
    let u_ref = (used.iter().map(|o| o.u_ref * o.u_ref).sum::<f64>() / k).sqrt();
    let u_bias = (rms_bias * rms_bias + u_ref * u_ref).sqrt();
    let (u_rw, precision_from) = if used.len() >= 2 {
        let var = used
            .iter()
            .map(|o| (o.bias - mean_bias).powi(2))
            .sum::<f64>()
            / (k - 1.0);
        (var.sqrt(), PrecisionFrom::Replicas)
    } else {
        (used[0].se_replay, PrecisionFrom::OneReplay)
    };
    let u_c = (u_rw * u_rw + u_bias * u_bias).sqrt();
    let se_difference = used
        .iter()
        .map(|o| (o.u_ref * o.u_ref + o.se_replay * o.se_replay).sqrt())
        .sum::<f64>()
        / k;
    Some(Metrology {
        replays: used.len(),
        mean_bias_pct: mean_bias,
        rms_bias_pct: rms_bias,
        u_ref_pct: u_ref,
        u_bias_pct: u_bias,
        u_rw_pct: u_rw,
        precision_from,
        u_c_pct: u_c,
        expanded_pct: 2.0 * u_c,
        se_difference_pct: se_difference,
        significant: mean_bias.abs() > 2.0 * se_difference,
    })
}

/// The result of `reanimator fidelity` (its `--json` form).
#[derive(Debug, Clone, Serialize)]
pub struct FidelityReport {
    /// The original trace, the reference.
    pub original: OriginalReport,
    /// One entry per replay, in the order given.
    pub replays: Vec<ReplayReport>,
    /// Per call name with at least one matched call, the most original
    /// time in matched calls (mean × n) first.
    pub calls: Vec<CallFidelity>,
    /// Every matched call together.
    pub all: CallFidelity,
}

/// The original's own figures.
#[derive(Debug, Clone, Serialize)]
pub struct OriginalReport {
    /// The file as given.
    pub path: String,
    /// The recorder that wrote it (`ptrace`, `ebpf`).
    pub recorder: String,
    /// Calls that returned.
    pub calls: u64,
    /// First entry to last exit of those calls, in ns.
    pub span_ns: u64,
    /// Calls in flight at each of those calls' entries.
    pub concurrency: Concurrency,
}

/// One replay's figures.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayReport {
    /// The timings trace as given.
    pub path: String,
    /// The original it says it replayed, as given to replay.
    pub replay_of: Option<String>,
    /// Replay's `--timing`: `afap`, `original` or `scale=X`.
    pub timing: String,
    /// The speed-up issue times were scheduled with (1 for `afap` and
    /// `original`).
    pub speedup: f64,
    /// Replay's `--order`.
    pub order: Option<String>,
    /// Call events (calls replay executed and that returned).
    pub events: u64,
    /// Events matched with an original call that returned: same `seq`,
    /// call and thread.
    pub matched: u64,
    /// Events with no such original call: a timings trace of another
    /// original when most are.
    pub unmatched: u64,
    /// Original calls that returned and that this replay did not execute
    /// (simulated, skipped) or that could not be matched.
    pub not_replayed: u64,
    /// First entry to last exit of the events, in ns.
    pub span_ns: u64,
    /// `span_ns` over the original's span.
    pub span_ratio: Option<f64>,
    /// Calls in flight at each event's entry.
    pub concurrency: Concurrency,
    /// The original's concurrency over the calls this replay matched
    /// only: the same calls as `concurrency`, so the two compare. The
    /// original's over all its calls also counts calls replay never
    /// issues (a thread blocked in `futex` or `epoll_wait` for the whole
    /// run is in flight at every call).
    pub original_concurrency: Concurrency,
    /// Issue-time error of the matched calls; `None` without any.
    pub issue_error: Option<IssueError>,
}

/// The distribution of calls in flight at call entries (the paper's
/// figure 5): a replayer that serialises or piles up calls changes their
/// response times.
#[derive(Debug, Clone, Serialize)]
pub struct Concurrency {
    /// Calls whose level was counted.
    pub calls: u64,
    /// Calls per level: 1, 2, 3, 4, 5-8, 9+ in flight, itself included.
    pub levels: Vec<Level>,
    /// Mean level.
    pub mean: Option<f64>,
    /// Calls whose record came too late for their level to be counted
    /// (written far out of completion order); still counted in flight
    /// for later calls.
    pub late: u64,
}

/// One concurrency level.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Level {
    /// `1`, `2`, `3`, `4`, `5-8` or `9+` calls in flight.
    pub level: &'static str,
    /// Calls entered at this level.
    pub calls: u64,
    /// Their share of the counted calls (0 to 1).
    pub share: f64,
}

/// How far from its schedule replay issued the matched calls, in µs
/// (negative: early).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct IssueError {
    /// Matched calls.
    pub calls: u64,
    /// The signed error.
    pub error_us: Quantiles,
    /// Its absolute value.
    pub abs_us: Quantiles,
}

/// Quantiles of a distribution (nearest rank, within 1/128 as
/// [`Histogram`]), and its exact maximum.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Quantiles {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest value.
    pub max: f64,
}

impl Quantiles {
    /// The names of [`Quantiles::listed`]'s values, in its order.
    pub const NAMES: [&'static str; 4] = ["p50", "p90", "p99", "max"];

    /// The median, p90, p99 and maximum, in the order reports list them
    /// (the text report and its picture alike).
    pub fn listed(&self) -> [f64; 4] {
        [self.p50, self.p90, self.p99, self.max]
    }
}

/// One call name (or all calls): response times in the original and each
/// replay, and the paper's uncertainty of the replays as measurements of
/// the original.
#[derive(Debug, Clone, Serialize)]
pub struct CallFidelity {
    /// The call name, or `all calls`.
    pub call: String,
    /// Original calls of this name that returned, matched or not.
    pub original_calls: u64,
    /// Matched calls: the most any replay matched.
    pub n: u64,
    /// The original's response time over matched calls, every replay's
    /// matched calls pooled (the original's own figures when every
    /// replay executed the same calls).
    pub original: Latency,
    /// Mean of the replays' mean response times (the paper's y_m), ns.
    pub replay_mean_ns: Option<f64>,
    /// Per replay, in the order given.
    pub replays: Vec<ReplayLatency>,
    /// `None` when no replay matched two calls of it with a reference
    /// above 0 (no standard error to take).
    pub metrology: Option<Metrology>,
}

/// Response times in ns.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Latency {
    /// Mean.
    pub mean_ns: Option<f64>,
    /// Median.
    pub p50_ns: Option<u64>,
    /// 99th percentile.
    pub p99_ns: Option<u64>,
    /// The whole distribution, for a CDF (`fidelity --svg`): the
    /// quantiles 0, 1/64, 2/64, ..., 1 (65 values, nearest rank, within
    /// 1/128 as [`Histogram`]; the first and last are the exact minimum
    /// and maximum, index 32 the median). Empty without calls.
    pub cdf_ns: Vec<u64>,
}

/// One replay's response times for one call name.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReplayLatency {
    /// Matched calls.
    pub n: u64,
    /// The original's mean over the same calls: this replay's reference.
    pub reference_mean_ns: Option<f64>,
    /// The replay's mean.
    pub mean_ns: Option<f64>,
    /// The replay's median.
    pub p50_ns: Option<u64>,
    /// The replay's 99th percentile.
    pub p99_ns: Option<u64>,
    /// The replay's distribution, as [`Latency::cdf_ns`].
    pub cdf_ns: Vec<u64>,
    /// `(mean − reference) / reference · 100`.
    pub bias_pct: Option<f64>,
}

/// The paper's uncertainty figures, each in percent of the reference
/// mean (docs/ANALYSIS.md gives the formulas).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Metrology {
    /// Replays the figures are taken over.
    pub replays: usize,
    /// Mean of the replays' biases.
    pub mean_bias_pct: f64,
    /// Root mean square of the replays' biases (RMS_bias).
    pub rms_bias_pct: f64,
    /// Uncertainty of the reference, u(C_ref): RMS of the relative
    /// standard errors of the references' means.
    pub u_ref_pct: f64,
    /// Bias uncertainty: √(RMS_bias² + u(C_ref)²).
    pub u_bias_pct: f64,
    /// Precision, u(R_w); how it was found is `precision_from`.
    pub u_rw_pct: f64,
    /// Where the precision comes from.
    pub precision_from: PrecisionFrom,
    /// Combined standard uncertainty: √(u(R_w)² + u(bias)²).
    pub u_c_pct: f64,
    /// Expanded uncertainty 2·u_c (95.5 % confidence).
    pub expanded_pct: f64,
    /// Standard error of the difference of means, √(se_ref² +
    /// se_replay²), mean over the replays.
    pub se_difference_pct: f64,
    /// `|mean_bias| > 2 · se_difference`: a bias the noise of the means
    /// does not explain.
    pub significant: bool,
}

/// Where a precision figure comes from: replicated replays, as the paper
/// prescribes, or a stand-in when there is one replay only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PrecisionFrom {
    /// Standard deviation of the replays' relative means (≥ 2 replays).
    #[serde(rename = "replicas")]
    Replicas,
    /// One replay: the relative standard error of its mean, which says
    /// how well its calls pin their mean down, not how much a replay
    /// varies from run to run.
    #[serde(rename = "one replay (standard error of its mean)")]
    OneReplay,
}

#[cfg(test)]
mod tests {
    use super::*;
    use reanimator_trace::{SyscallEvent, SyscallExit, Writer, WriterOptions};

    /// `(seq, nr, tid, enter_ns, exit_ns)`, in file order.
    type Ev = (u64, u32, u32, u64, u64);

    fn write(path: &Path, recorder: &str, options: &[(&str, &str)], events: &[Ev]) {
        let meta = TraceMeta {
            tool: "test".into(),
            recorder: recorder.into(),
            options: options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..TraceMeta::default()
        };
        let mut w = Writer::create(path, &meta, WriterOptions::default()).unwrap();
        for &(seq, nr, tid, enter_ns, exit_ns) in events {
            w.write(&Record::Syscall(SyscallEvent {
                seq,
                tgid: 7,
                tid,
                nr,
                enter_ns,
                args: [0; 6],
                exit: Some(SyscallExit {
                    exit_ns,
                    ret: 0,
                    is_error: false,
                }),
                captures: vec![],
            }))
            .unwrap();
        }
        w.finish().unwrap();
    }

    fn timings(timing: &str) -> Vec<(&'static str, String)> {
        vec![
            ("replay_of", "orig.rtr".into()),
            ("timing", timing.into()),
            ("order", "overlap".into()),
            ("trace_origin_ns", "1000".into()),
            ("replay_origin_ns", "500000".into()),
        ]
    }

    fn write_replay(path: &Path, timing: &str, events: &[Ev]) {
        let opts = timings(timing);
        let opts: Vec<(&str, &str)> = opts.iter().map(|(k, v)| (*k, v.as_str())).collect();
        write(path, "replay", &opts, events);
    }

    fn run(original: &Path, replays: &[&Path]) -> Result<FidelityReport, Error> {
        let replays: Vec<PathBuf> = replays.iter().map(|p| p.to_path_buf()).collect();
        fidelity(original, &replays, &mut |_, _| {})
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    /// Three `read`s (nr 0) of 10, 20 and 30 µs, one after another.
    fn sequential_original(path: &Path) {
        write(
            path,
            "ptrace",
            &[],
            &[
                (1, 0, 7, 1_000, 11_000),
                (2, 0, 7, 100_000, 120_000),
                (3, 0, 7, 200_000, 230_000),
            ],
        );
    }

    #[test]
    fn one_replay_gives_bias_and_precision_from_its_standard_error() {
        let dir = tempfile::tempdir().unwrap();
        let (orig, rep) = (dir.path().join("o.rtr"), dir.path().join("r.rtr"));
        sequential_original(&orig);
        write_replay(
            &rep,
            "afap",
            &[
                (1, 0, 7, 500_000, 520_000),
                (2, 0, 7, 530_000, 560_000),
                (3, 0, 7, 570_000, 610_000),
            ],
        );
        let r = run(&orig, &[&rep]).unwrap();
        assert_eq!(r.calls.len(), 1);
        let c = &r.calls[0];
        assert_eq!((c.call.as_str(), c.n, c.original_calls), ("read", 3, 3));
        assert!(close(c.original.mean_ns.unwrap(), 20_000.0));
        assert_eq!(
            (c.original.p50_ns, c.original.p99_ns),
            (Some(20_000), Some(30_000))
        );
        assert!(close(c.replay_mean_ns.unwrap(), 30_000.0));
        assert_eq!(c.replays[0].p50_ns, Some(30_000));
        let (o, rc) = (&c.original.cdf_ns, &c.replays[0].cdf_ns);
        assert_eq!((o.len(), rc.len()), (65, 65));
        assert_eq!(
            (o[0], o[21], o[22], o[32], o[64]),
            (10_000, 10_000, 20_000, 20_000, 30_000)
        );
        assert_eq!((rc[0], rc[32], rc[64]), (20_000, 30_000, 40_000));
        assert!(close(c.replays[0].bias_pct.unwrap(), 50.0));
        let m = c.metrology.unwrap();
        // Sample SD 10 µs on both sides: SE 10/√3 µs = 28.87 % of 20 µs.
        let se = 10.0 / 3f64.sqrt() / 20.0 * 100.0;
        assert!(close(m.mean_bias_pct, 50.0) && close(m.rms_bias_pct, 50.0));
        assert!(close(m.u_ref_pct, se));
        assert!(close(m.u_bias_pct, (2500.0 + se * se).sqrt()));
        assert_eq!(m.precision_from, PrecisionFrom::OneReplay);
        assert!(close(m.u_rw_pct, se));
        assert!(close(m.u_c_pct, (2500.0 + 2.0 * se * se).sqrt()));
        assert!(close(m.expanded_pct, 2.0 * m.u_c_pct));
        assert!(close(m.se_difference_pct, (2.0 * se * se).sqrt()));
        assert!(!m.significant, "50 % on three calls is within the noise");
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(
            json["all"]["metrology"]["precision_from"],
            "one replay (standard error of its mean)"
        );
        let rr = &r.replays[0];
        assert_eq!(
            (rr.events, rr.matched, rr.unmatched, rr.not_replayed),
            (3, 3, 0, 0)
        );
        assert_eq!((r.original.span_ns, rr.span_ns), (229_000, 110_000));
        assert!(close(rr.span_ratio.unwrap(), 110.0 / 229.0));
    }

    /// Past the histogram's exact values the series is still ordered,
    /// within its error bound, and ends at the exact extremes.
    #[test]
    fn the_cdf_spans_the_exact_extremes_in_order() {
        let mut h = Histogram::new();
        for v in 1..=10_000u64 {
            h.add(v * 7 + 3);
        }
        let c = cdf(&h);
        assert_eq!((c.len(), c[0], c[64]), (CDF_POINTS, 10, 70_003));
        assert!(c.windows(2).all(|w| w[0] <= w[1]), "{c:?}");
        let median = 5_000.0 * 7.0 + 3.0;
        assert!((c[32] as f64 - median).abs() <= median / 128.0, "{}", c[32]);
        assert!(cdf(&Histogram::new()).is_empty());
    }

    #[test]
    fn two_replays_give_precision_from_replicas() {
        let dir = tempfile::tempdir().unwrap();
        let orig = dir.path().join("o.rtr");
        let (a, b) = (dir.path().join("a.rtr"), dir.path().join("b.rtr"));
        sequential_original(&orig);
        write_replay(
            &a,
            "afap",
            &[
                (1, 0, 7, 0, 20_000),
                (2, 0, 7, 0, 30_000),
                (3, 0, 7, 0, 40_000),
            ],
        );
        write_replay(
            &b,
            "afap",
            &[
                (1, 0, 7, 0, 30_000),
                (2, 0, 7, 0, 40_000),
                (3, 0, 7, 0, 50_000),
            ],
        );
        let r = run(&orig, &[&a, &b]).unwrap();
        let c = &r.calls[0];
        assert!(close(c.replays[0].bias_pct.unwrap(), 50.0));
        assert!(close(c.replays[1].bias_pct.unwrap(), 100.0));
        assert!(close(c.replay_mean_ns.unwrap(), 35_000.0));
        assert!(close(c.original.mean_ns.unwrap(), 20_000.0));
        assert_eq!(c.n, 3);
        let m = c.metrology.unwrap();
        assert_eq!((m.replays, m.precision_from), (2, PrecisionFrom::Replicas));
        assert!(close(m.mean_bias_pct, 75.0));
        assert!(close(m.rms_bias_pct, 6250f64.sqrt()));
        // Sample SD of 50 and 100.
        assert!(close(m.u_rw_pct, 1250f64.sqrt()));
        let se = 10.0 / 3f64.sqrt() / 20.0 * 100.0;
        assert!(close(m.u_ref_pct, se));
        assert!(close(m.u_c_pct, (1250.0 + 6250.0 + se * se).sqrt()));
        assert_eq!(
            r.all.metrology.unwrap().precision_from,
            PrecisionFrom::Replicas
        );
    }

    #[test]
    fn a_large_steady_bias_is_significant() {
        let dir = tempfile::tempdir().unwrap();
        let (orig, rep) = (dir.path().join("o.rtr"), dir.path().join("r.rtr"));
        let calls = |lat: u64| -> Vec<Ev> {
            (0..200u64)
                .map(|i| (i + 1, 1, 7, i * 1_000_000, i * 1_000_000 + lat + i % 3))
                .collect()
        };
        write(&orig, "ptrace", &[], &calls(10_000));
        write_replay(&rep, "original", &calls(12_000));
        let r = run(&orig, &[&rep]).unwrap();
        let m = r.calls[0].metrology.unwrap();
        assert!(m.significant && m.mean_bias_pct > 19.9, "{m:?}");
    }

    #[test]
    fn concurrency_counts_overlapping_calls() {
        let dir = tempfile::tempdir().unwrap();
        let (orig, rep) = (dir.path().join("o.rtr"), dir.path().join("r.rtr"));
        // [0,100], [10,50], [20,30] µs, in completion order; then one
        // call alone.
        write(
            &orig,
            "ptrace",
            &[],
            &[
                (3, 0, 9, 20_000, 30_000),
                (2, 0, 8, 10_000, 50_000),
                (1, 0, 7, 0, 100_000),
                (4, 0, 7, 100_000, 110_000),
            ],
        );
        // The replay ran them one at a time.
        write_replay(
            &rep,
            "afap",
            &[
                (1, 0, 7, 0, 10),
                (2, 0, 8, 10, 20),
                (3, 0, 9, 20, 30),
                (4, 0, 7, 30, 40),
            ],
        );
        let r = run(&orig, &[&rep]).unwrap();
        let c = &r.original.concurrency;
        let counts: Vec<u64> = c.levels.iter().map(|l| l.calls).collect();
        // Levels 1 (the first and the call after the exit at 100), 2, 3.
        assert_eq!(counts, [2, 1, 1, 0, 0, 0]);
        assert!(close(c.mean.unwrap(), 7.0 / 4.0));
        assert_eq!((c.calls, c.late), (4, 0));
        let rc = &r.replays[0].concurrency;
        assert_eq!(rc.levels[0].calls, 4);
        assert!(close(rc.levels[0].share, 1.0));
    }

    /// The original's concurrency over a replay's calls leaves out the
    /// calls replay did not issue, which overlapped the others.
    #[test]
    fn the_original_over_a_replays_calls_counts_only_those() {
        let dir = tempfile::tempdir().unwrap();
        let (orig, rep) = (dir.path().join("o.rtr"), dir.path().join("r.rtr"));
        // A call blocked for the whole run (seq 1, as a `futex` wait
        // would be) and two short ones inside it.
        write(
            &orig,
            "ptrace",
            &[],
            &[
                (2, 0, 8, 10_000, 20_000),
                (3, 0, 8, 30_000, 40_000),
                (1, 0, 7, 0, 100_000),
            ],
        );
        write_replay(&rep, "afap", &[(2, 0, 8, 0, 10), (3, 0, 8, 20, 30)]);
        let r = run(&orig, &[&rep]).unwrap();
        let levels = |c: &Concurrency| c.levels.iter().map(|l| l.calls).collect::<Vec<_>>();
        assert_eq!(levels(&r.original.concurrency), [1, 2, 0, 0, 0, 0]);
        assert_eq!(
            levels(&r.replays[0].original_concurrency),
            [2, 0, 0, 0, 0, 0]
        );
        assert_eq!(levels(&r.replays[0].concurrency), [2, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn points_past_the_buffer_are_late_but_stay_in_flight() {
        let mut f = InFlight::new(2, 0);
        f.add(100, 200);
        f.add(110, 120); // the heap overflows: 100 and 110 are taken
        f.add(50, 300); // entered before them: its level is lost
        f.add(250, 260); // still sees the late call in flight
        let c = f.finish();
        assert_eq!(c.late, 1);
        assert_eq!(c.calls, 3);
        let counts: Vec<u64> = c.levels.iter().map(|l| l.calls).collect();
        assert_eq!(counts, [1, 2, 0, 0, 0, 0]);
    }

    #[test]
    fn issue_time_error_follows_the_speedup() {
        let dir = tempfile::tempdir().unwrap();
        let (orig, rep) = (dir.path().join("o.rtr"), dir.path().join("r.rtr"));
        // trace_origin 1000, replay_origin 500000; original offsets 0, 2
        // and 4 ms are scheduled at 0, 1 and 2 ms with scale=2.
        write(
            &orig,
            "ptrace",
            &[],
            &[
                (1, 0, 7, 1_000, 2_000),
                (2, 0, 7, 2_001_000, 2_002_000),
                (3, 0, 7, 4_001_000, 4_002_000),
            ],
        );
        write_replay(
            &rep,
            "scale=2",
            &[
                (1, 0, 7, 510_000, 511_000),     // +10 µs
                (2, 0, 7, 1_495_000, 1_496_000), // -5 µs
                (3, 0, 7, 2_530_000, 2_531_000), // +30 µs
            ],
        );
        let r = run(&orig, &[&rep]).unwrap();
        let rr = &r.replays[0];
        assert_eq!(rr.speedup, 2.0);
        let e = rr.issue_error.unwrap();
        assert_eq!(e.calls, 3);
        assert_eq!(
            (
                e.error_us.p50,
                e.error_us.p90,
                e.error_us.p99,
                e.error_us.max
            ),
            (10.0, 30.0, 30.0, 30.0)
        );
        assert_eq!((e.abs_us.p50, e.abs_us.max), (10.0, 30.0));
        assert_eq!(
            IssueAcc {
                early: [5_000u64, 7_000]
                    .iter()
                    .fold(Histogram::new(), |mut h, &v| {
                        h.add(v);
                        h
                    }),
                late: Histogram::new(),
            }
            .report()
            .unwrap()
            .error_us
            .max,
            -5.0,
            "all early: the largest error is the smallest magnitude, negated"
        );
    }

    #[test]
    fn out_of_order_completion_and_unmatched_events_are_joined_by_seq() {
        let dir = tempfile::tempdir().unwrap();
        let (orig, rep) = (dir.path().join("o.rtr"), dir.path().join("r.rtr"));
        // Seq 1 is a long wait that completes last in the original; the
        // original has thousands of calls after it.
        let mut o: Vec<Ev> = (2..10_000u64)
            .map(|s| (s, 1, 7, s * 1_000, s * 1_000 + 100))
            .collect();
        o.push((1, 61, 8, 0, 20_000_000));
        write(&orig, "ptrace", &[], &o);
        // The replay finished seq 1 first, skipped seq 5, replayed seq 7
        // as another call, and has a seq the original lacks.
        let mut r: Vec<Ev> = vec![(1, 61, 8, 0, 1_000)];
        r.extend(
            (2..10_000u64)
                .filter(|&s| s != 5)
                .map(|s| (s, if s == 7 { 0 } else { 1 }, 7, s * 100, s * 100 + 50)),
        );
        r.push((20_000, 1, 7, 2_000_000, 2_000_050));
        write_replay(&rep, "afap", &r);
        let report = run(&orig, &[&rep]).unwrap();
        let rr = &report.replays[0];
        assert_eq!(report.original.calls, 9_999);
        assert_eq!(rr.events, 9_999);
        assert_eq!(rr.matched, 9_997);
        assert_eq!((rr.unmatched, rr.not_replayed), (2, 2));
        let wait4 = report.calls.iter().find(|c| c.call == "wait4").unwrap();
        assert_eq!(wait4.n, 1);
        assert_eq!(report.calls[0].call, "wait4", "most original time first");
        assert!(wait4.metrology.is_none(), "one call has no standard error");
        assert!(close(wait4.replays[0].bias_pct.unwrap(), -99.995));
        let write = report.calls.iter().find(|c| c.call == "write").unwrap();
        assert_eq!((write.n, write.original_calls), (9_996, 9_998));
        assert!(close(write.replays[0].bias_pct.unwrap(), -50.0));
    }

    #[test]
    fn a_recording_is_not_a_timings_trace() {
        let dir = tempfile::tempdir().unwrap();
        let orig = dir.path().join("o.rtr");
        sequential_original(&orig);
        let e = run(&orig, &[&orig]).unwrap_err().to_string();
        assert!(
            e.contains("o.rtr") && e.contains("not a timings trace"),
            "{e}"
        );
        let rep = dir.path().join("r.rtr");
        write_replay(&rep, "afap", &[]);
        let e = run(&rep, &[&rep]).unwrap_err().to_string();
        assert!(e.contains("not a recording"), "{e}");
        let partial = dir.path().join("p.rtr");
        write(&partial, "replay", &[("timing", "afap")], &[]);
        let e = run(&orig, &[&partial]).unwrap_err().to_string();
        assert!(e.contains("without the `trace_origin_ns` option"), "{e}");
        let e = run(&orig, &[]).unwrap_err().to_string();
        assert!(e.contains("at least one"), "{e}");
    }
}
