//! What a replay did, per call: the table printed at the end.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

/// Counts for one system call name.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CallStats {
    /// Issued to the kernel.
    pub executed: u64,
    /// Not issued; results taken from the trace or emulated state changed.
    pub simulated: u64,
    /// Not replayed (ignored by the catalogue, never returned, interrupted
    /// and restarted, or its arguments were not captured).
    pub skipped: u64,
    /// Replayed with a result that differs from the trace.
    pub mismatched: u64,
}

impl CallStats {
    fn add(&mut self, o: &CallStats) {
        self.executed += o.executed;
        self.simulated += o.simulated;
        self.skipped += o.skipped;
        self.mismatched += o.mismatched;
    }
}

/// Per-call counts and the reasons calls were skipped.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// By call name.
    pub calls: BTreeMap<&'static str, CallStats>,
    /// Why calls were skipped, with counts.
    pub skipped: BTreeMap<&'static str, u64>,
    /// Calls that only look (queries, reads of regular files) and matched
    /// only when issued again, after the calls that ended before them or
    /// overlapped them had finished (races in the recording).
    pub requeried: u64,
    /// Returned buffers not compared because the trace lacks their bytes,
    /// by capture status (`lost` in a recovered trace, `truncated` by
    /// `--data max`, `skipped` by `--data none`, `unreadable`).
    pub not_compared: BTreeMap<&'static str, u64>,
    /// Calls, and the bytes they moved, that copied inside the kernel
    /// (`splice`, `sendfile`) from a descriptor replay simulates (a
    /// socket, an inherited pipe) into a real one: the trace cannot hold
    /// those bytes, so what they reached differs.
    pub unheld_moves: (u64, u64),
}

impl Tally {
    /// Merges another tally (one per replay thread) into this one.
    pub fn merge(&mut self, o: &Tally) {
        for (name, s) in &o.calls {
            self.calls.entry(name).or_default().add(s);
        }
        for (why, n) in &o.skipped {
            *self.skipped.entry(why).or_default() += n;
        }
        self.requeried += o.requeried;
        for (status, n) in &o.not_compared {
            *self.not_compared.entry(status).or_default() += n;
        }
        self.unheld_moves.0 += o.unheld_moves.0;
        self.unheld_moves.1 += o.unheld_moves.1;
    }

    /// The sum over all calls.
    pub fn total(&self) -> CallStats {
        let mut t = CallStats::default();
        for s in self.calls.values() {
            t.add(s);
        }
        t
    }

    /// Counts a skipped call.
    pub fn skip(&mut self, name: &'static str, why: &'static str) {
        self.calls.entry(name).or_default().skipped += 1;
        *self.skipped.entry(why).or_default() += 1;
    }
}

/// The outcome of a whole replay.
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// Per-call counts.
    pub tally: Tally,
    /// Differences between the recorded final state (manifest) and the
    /// replay root's, one line each.
    pub manifest_diffs: Vec<String>,
    /// Paths the manifest checked.
    pub manifest_paths: u64,
    /// Paths and bytes the preparation created.
    pub prepared_paths: u64,
    /// Bytes of file contents the preparation wrote.
    pub prepared_bytes: u64,
    /// Preparation notes (special files skipped, owners not set).
    pub prepare_notes: Vec<String>,
    /// Loss records in the trace: events the recorder missed.
    pub trace_losses: u64,
    /// Threads replayed.
    pub threads: u64,
    /// Time spent preparing the root.
    pub prepare_time: Duration,
    /// Time spent replaying calls.
    pub replay_time: Duration,
    /// True when replay stopped at the first mismatch (`--on-mismatch abort`).
    pub aborted: bool,
    /// io_uring requests not issued (sockets, timeouts, opens, provided
    /// buffers...), by opcode name: their recorded results stand.
    pub uring_not_issued: BTreeMap<&'static str, u64>,
    /// io_uring completions whose requests replay never submitted (their
    /// submissions' captures were unreadable): not verified.
    pub uring_unverified: u64,
    /// Reads that found bytes stored through a shared mapping the trace
    /// had not yet captured, and the bytes taken from their captures into
    /// the files (docs/REPLAY.md, "File mappings").
    pub reads_of_mapped_stores: (u64, u64),
    /// Calls written to the `--timings` trace, when one was asked for.
    pub timed_calls: Option<u64>,
}

impl Report {
    /// True when everything replayed as recorded.
    pub fn is_clean(&self) -> bool {
        self.tally.total().mismatched == 0 && self.manifest_diffs.is_empty() && !self.aborted
    }

    /// The per-call table, strace `-c` style, with totals.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:>10} {:>10} {:>10} {:>10}  call",
            "executed", "simulated", "skipped", "mismatched"
        );
        let _ = writeln!(
            s,
            "{:->10} {:->10} {:->10} {:->10}  {:->16}",
            "", "", "", "", ""
        );
        let mut rows: Vec<_> = self.tally.calls.iter().collect();
        rows.sort_by_key(|(name, c)| {
            (
                std::cmp::Reverse(c.executed + c.simulated + c.skipped),
                **name,
            )
        });
        for (name, c) in rows {
            let _ = writeln!(
                s,
                "{:>10} {:>10} {:>10} {:>10}  {name}",
                c.executed, c.simulated, c.skipped, c.mismatched
            );
        }
        let t = self.tally.total();
        let _ = writeln!(
            s,
            "{:->10} {:->10} {:->10} {:->10}  {:->16}",
            "", "", "", "", ""
        );
        let _ = writeln!(
            s,
            "{:>10} {:>10} {:>10} {:>10}  total",
            t.executed, t.simulated, t.skipped, t.mismatched
        );
        s
    }
}
