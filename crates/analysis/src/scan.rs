//! One pass over a trace: the records a [`Filter`] keeps, each system call
//! with the path it is about. Every command of this crate reads through
//! a [`Scan`], so they agree on what a filter selects.

use reanimator_trace::{ReadOptions, Reader, Record};
use std::path::Path;

use crate::filter::Filter;
use crate::paths::{PathName, PathTracker};
use crate::Error;

/// A kept record and, for a system call, the path it is about (when
/// paths are followed).
#[derive(Debug)]
pub struct Item {
    /// The record.
    pub record: Record,
    /// The path the call names or its descriptor was opened with.
    pub path: Option<PathName>,
}

/// Streams the records of a trace that a filter keeps.
pub struct Scan {
    reader: Reader,
    filter: Filter,
    tracker: Option<PathTracker>,
    start_ns: Option<u64>,
    keep_all: bool,
    /// Whether the filter has left out a record yet.
    dropped: bool,
}

/// Most bytes of each buffer loaded when buffers are read only to follow
/// paths: what the path tracker reads is far smaller (`PATH_MAX` is 4096),
/// and `stats --by path` of a trace holding a 256 MiB buffer took 538 MB.
const PATH_DATA_MAX: usize = 64 << 10;

impl Scan {
    /// Opens `trace`. Paths are followed when `paths` is set or the filter
    /// selects by path; buffer data is loaded when `data` is set or paths
    /// are followed (a path longer than 64 bytes is stored with the
    /// buffers).
    pub fn open(trace: &Path, filter: Filter, paths: bool, data: bool) -> Result<Self, Error> {
        let paths = paths || filter.path.is_some();
        let mut reader = Reader::open(
            trace,
            ReadOptions {
                data: data || paths,
            },
        )?;
        // Buffer frames skipped for speed are still checksummed: damage
        // anywhere fails the command instead of passing unnoticed.
        reader.check_skipped_frames(true);
        if data || paths {
            // Decompressing buffers is a good share of the work: done on
            // another core, ahead of decoding.
            reader.prefetch();
        }
        if paths && !data {
            // Buffers only for what paths are followed by (path strings,
            // descriptor pairs, AIO request arrays).
            reader.limit_data(PATH_DATA_MAX);
        }
        // Times are relative to the recording's start (the clock anchor
        // read when it began); traces without one use their first record.
        let anchor = reader.meta().clock.monotonic_ns;
        Ok(Scan {
            reader,
            keep_all: filter.is_empty(),
            filter,
            tracker: paths.then(PathTracker::new),
            start_ns: (anchor != 0).then_some(anchor),
            dropped: false,
        })
    }

    /// Loads at most `max` bytes of each buffer ([`Reader::limit_data`]),
    /// for a caller that shows only their start. Call before reading.
    pub fn limit_data(&mut self, max: usize) {
        self.reader.limit_data(max);
    }

    /// Like [`Scan::open`] without paths or data, reading shard `index` of
    /// `count` ([`Reader::set_shard`]): `count` scans on `count` threads
    /// see every record once. Only for order-independent work.
    pub fn open_shard(trace: &Path, filter: Filter, index: u64, count: u64) -> Result<Self, Error> {
        let mut scan = Scan::open(trace, filter, false, false)?;
        scan.reader.set_shard(index, count);
        Ok(scan)
    }

    /// The underlying reader (meta, progress, end summary).
    pub fn reader(&self) -> &Reader {
        &self.reader
    }

    /// The time every relative time is measured from, once known.
    pub fn start_ns(&self) -> Option<u64> {
        self.start_ns
    }

    /// The next kept record; `Ok(None)` at the end of a complete trace.
    pub fn next_item(&mut self) -> Result<Option<Item>, Error> {
        loop {
            let Some(record) = self.reader.next_record()? else {
                return Ok(None);
            };
            let path = self.tracker.as_mut().and_then(|t| t.observe(&record));
            let start = *self.start_ns.get_or_insert(record.time_ns());
            if self.keep_all {
                return Ok(Some(Item { record, path }));
            }
            let rel = record.time_ns().saturating_sub(start);
            if self
                .filter
                .keeps(&record, path.as_deref(), rel, self.dropped)
            {
                return Ok(Some(Item { record, path }));
            }
            self.dropped = true;
        }
    }
}
