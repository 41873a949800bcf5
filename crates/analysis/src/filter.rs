//! Which records a command looks at: by process, system call, path and
//! time window. `dump`, `select`, `stats` and `export` share this one
//! definition, so `select` writes exactly the records `dump` shows with
//! the same options.

use reanimator_catalogue::{self as catalogue, Group};
use reanimator_trace::{PathPhase, Record};

use crate::glob::Glob;
use crate::Error;

/// A record filter. The default keeps everything.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Keep records of these processes or threads (process id or thread
    /// id); empty keeps all.
    pub pids: Vec<u32>,
    /// Keep only these system calls (sorted numbers); `None` keeps all.
    pub calls: Option<Vec<u32>>,
    /// Keep only system calls about a path matching this pattern (the path
    /// they name, or the one their descriptor was opened with).
    pub path: Option<Glob>,
    /// Keep records from this many ns after the trace start on.
    pub from_ns: Option<u64>,
    /// Keep records before this many ns after the trace start.
    pub to_ns: Option<u64>,
}

impl Filter {
    /// True when the filter keeps every record.
    pub fn is_empty(&self) -> bool {
        self.pids.is_empty()
            && self.calls.is_none()
            && self.path.is_none()
            && self.from_ns.is_none()
            && self.to_ns.is_none()
    }

    /// Parses a call list: names (`pread64`), numbers (`17`), and groups
    /// (`%file`, `%network`, as `reanimator catalogue` lists them), each
    /// item possibly holding several separated by commas.
    pub fn parse_calls<S: AsRef<str>>(items: &[S]) -> Result<Vec<u32>, Error> {
        let mut nrs = Vec::new();
        let mut named = false;
        for item in items.iter().flat_map(|s| s.as_ref().split(',')) {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            named = true;
            if let Some(g) = item.strip_prefix('%') {
                let bits = Group::NAMES
                    .iter()
                    .find(|(n, _)| *n == g)
                    .map(|(_, b)| *b)
                    .ok_or_else(|| Error::Usage(format!("unknown call group %{g}")))?;
                nrs.extend(
                    catalogue::all()
                        .iter()
                        .filter(|s| s.groups & bits != 0)
                        .map(|s| s.nr),
                );
            } else if let Ok(nr) = item.parse::<u32>() {
                nrs.push(nr);
            } else if let Some(nr) = item
                .strip_prefix("syscall_")
                .and_then(|n| n.parse::<u32>().ok())
            {
                nrs.push(nr);
            } else {
                let s = catalogue::by_name(item)
                    .ok_or_else(|| Error::Usage(format!("unknown system call {item:?}")))?;
                nrs.push(s.nr);
            }
        }
        if !named {
            // `--call ''` would keep no call at all, silently.
            return Err(Error::Usage(
                "--call names no system call (names, numbers or %groups, comma-separated)".into(),
            ));
        }
        nrs.sort_unstable();
        nrs.dedup();
        Ok(nrs)
    }

    /// Parses a time offset from the trace start: a number with an optional
    /// unit `ns`, `us`, `ms`, `s` (the default), `m` or `h`, e.g. `1.5`,
    /// `250ms`, `2m`.
    pub fn parse_time(text: &str) -> Result<u64, Error> {
        let t = text.trim();
        if t.starts_with('-') {
            return Err(Error::Usage(format!(
                "bad time {text:?}: times count from the trace start and cannot be negative"
            )));
        }
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let scale = match unit.trim() {
            "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            "" | "s" => 1e9,
            "m" | "min" => 60e9,
            "h" => 3600e9,
            _ => return Err(Error::Usage(format!("bad time {text:?}: unknown unit"))),
        };
        let v: f64 = num
            .parse()
            .map_err(|_| Error::Usage(format!("bad time {text:?}: expected e.g. 1.5s, 200ms")))?;
        let ns = v * scale;
        if !ns.is_finite() || ns >= u64::MAX as f64 {
            return Err(Error::Usage(format!("bad time {text:?}: out of range")));
        }
        Ok(ns.round() as u64)
    }

    fn pid_matches(&self, tgid: u32, tid: u32) -> bool {
        self.pids.is_empty() || self.pids.iter().any(|&p| p == tgid || p == tid)
    }

    fn time_matches(&self, rel_ns: u64) -> bool {
        self.from_ns.is_none_or(|f| rel_ns >= f) && self.to_ns.is_none_or(|t| rel_ns < t)
    }

    /// True when `r` is kept. `path` is what the call is about (see
    /// [`crate::PathTracker`]), `rel_ns` the record's time since the trace
    /// start, `dropped_before` whether the filter left out any record
    /// before this one.
    ///
    /// Process starts and exits are kept for every kept process, whatever
    /// the other criteria, so that a selection can still be replayed; loss
    /// records always (a gap is never hidden); the initial state of paths
    /// (path states *before* and path data) always; the final manifest
    /// (path states *after*, written after every call) only when no record
    /// before it was left out, since a subset of the calls does not
    /// produce it, but a filter that happens to keep every call does.
    pub fn keeps(
        &self,
        r: &Record,
        path: Option<&[u8]>,
        rel_ns: u64,
        dropped_before: bool,
    ) -> bool {
        match r {
            Record::Syscall(e) => {
                self.pid_matches(e.tgid, e.tid)
                    && self
                        .calls
                        .as_ref()
                        .is_none_or(|c| c.binary_search(&e.nr).is_ok())
                    && self
                        .path
                        .as_ref()
                        .is_none_or(|g| path.is_some_and(|p| g.matches(p)))
                    && self.time_matches(rel_ns)
            }
            Record::ProcessStart(_) | Record::ProcessExit(_) => self.pid_matches(r.tgid(), r.tid()),
            Record::Signal(s) => self.pid_matches(s.tgid, s.tid) && self.time_matches(rel_ns),
            Record::Loss(_) | Record::PathData(_) => true,
            Record::PathState(p) => p.phase == PathPhase::Before || !dropped_before,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_lists() {
        let nrs = Filter::parse_calls(&["read,pwrite64", "257", "syscall_999"]).unwrap();
        assert_eq!(nrs, vec![0, 18, 257, 999]);
        let file = Filter::parse_calls(&["%file"]).unwrap();
        assert!(file.contains(&257) && !file.contains(&0));
        assert!(Filter::parse_calls(&["nosuch"]).is_err());
        assert!(Filter::parse_calls(&["%nosuch"]).is_err());
        assert!(Filter::parse_calls(&[""]).is_err());
        assert!(Filter::parse_calls(&[",", " "]).is_err());
    }

    #[test]
    fn times() {
        assert_eq!(Filter::parse_time("1.5").unwrap(), 1_500_000_000);
        assert_eq!(Filter::parse_time("250ms").unwrap(), 250_000_000);
        assert_eq!(Filter::parse_time("3us").unwrap(), 3_000);
        assert_eq!(Filter::parse_time("2m").unwrap(), 120_000_000_000);
        assert!(Filter::parse_time("x").is_err());
        assert!(Filter::parse_time("1 fortnight").is_err());
        assert!(Filter::parse_time("1e30").is_err());
        let negative = Filter::parse_time("-1s").unwrap_err().to_string();
        assert!(negative.contains("cannot be negative"), "{negative}");
    }
}
