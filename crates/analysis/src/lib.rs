/*!
Streaming analysis of reanimator traces: what `reanimator stats`,
`select`, `export` and the filters of `dump` are made of.

Every operation is one pass over a [`reanimator_trace::Reader`] in memory
that does not grow with the trace: statistics keep a few KiB per group
(fixed-size log-linear histograms with a documented error bound),
selection copies records straight to a [`reanimator_trace::Writer`], and
export hands fixed-size Arrow batches to the Parquet or CSV writer. System
calls are interpreted through the catalogue only (which argument is a
path, a descriptor, a data buffer), never by name lists of their own.

# Overview

- [`Filter`]: which records to keep (process, call, path glob, time
  window); [`Scan`] streams the kept records of a trace with the path
  each call is about ([`PathTracker`]).
- [`Stats`] → [`Report`]: counts, errors, bytes, latency quantiles and
  size histograms per call, process, thread or path ([`Histogram`]).
- [`select()`]: a valid trace holding a subset.
- [`fidelity()`] → [`FidelityReport`]: replays compared with their
  original (per-call response-time bias, precision and uncertainty as in
  metrology, concurrency, issue-time error), from replay's timings traces.
- [`export()`]: `events`, `data` and `processes` tables as Parquet or CSV
  (schemas in docs/FORMAT.md).

# Example

```no_run
use reanimator_analysis::{Filter, GroupBy, Scan, Stats};
let filter = Filter { calls: Some(Filter::parse_calls(&["%file"])?), ..Filter::default() };
let mut scan = Scan::open("t.rtr".as_ref(), filter, false, false)?;
let mut stats = Stats::new(GroupBy::Call);
while let Some(item) = scan.next_item()? {
    stats.add(&item);
}
println!("{} calls", stats.report().totals.calls);
# Ok::<(), reanimator_analysis::Error>(())
```
*/

pub mod calls;
mod error;
mod export;
mod fidelity;
mod filter;
mod glob;
pub mod histogram;
mod paths;
mod scan;
mod select;
mod stats;

pub use error::Error;
pub use export::{data_schema, events_schema, export, processes_schema, ExportReport, Format};
pub use fidelity::{
    fidelity, CallFidelity, Concurrency, FidelityReport, IssueError, Latency, Level, Metrology,
    OriginalReport, PrecisionFrom, Quantiles, ReplayLatency, ReplayReport,
};
pub use filter::Filter;
pub use glob::Glob;
pub use histogram::Histogram;
pub use paths::{PathName, PathTracker};
pub use scan::{Item, Scan};
pub use select::{select, SelectReport};
pub use stats::{stats, Bin, GroupBy, GroupReport, Report, SizeReport, Stats, TopSize};
