/*!
The reanimator trace format, version 1: how system calls, their data and
the processes that made them are stored.

A trace is one file: a 16-byte header, then frames. Each frame is
checksummed (CRC-32C) and written with a single `write`, so a recorder
killed at any moment leaves a trace readable up to its last flush, and
[`recover()`] salvages the rest. Records are varint-encoded and compressed
per frame (zstd); buffer contents are stored once per distinct content
(xxh3-128) in separate blob frames that readers can skip. The byte-level
specification is docs/FORMAT.md.

# Overview

- [`Writer`]: appends records; [`Writer::syscall`] is the zero-copy path
  for recorders.
- [`Reader`]: streams records back in one pass with bounded memory.
- [`Record`]: what a trace holds ([`SyscallEvent`], [`ProcessStart`],
  [`ProcessExit`], [`SignalDelivery`], [`Loss`], and the file-system states
  replay needs: [`PathState`], [`PathData`]).
- [`recover()`]: salvages an unfinished or damaged trace.

# Example

```
use reanimator_trace::*;
let dir = tempfile::tempdir()?;
let path = dir.path().join("t.rtr");
let mut w = Writer::create(&path, &TraceMeta::default(), WriterOptions::default())?;
let mut call = w.syscall(&SyscallHead {
    seq: 1, tgid: 7, tid: 7, nr: 1, enter_ns: 10, args: [1, 0x1000, 5, 0, 0, 0],
    exit: Some(SyscallExit { exit_ns: 20, ret: 5, is_error: false }),
});
call.capture(&CaptureHead { arg: 1, role: Role::Entry, elem: 0,
                            status: CaptureStatus::Complete, len: 5 }, b"hello")?;
call.finish()?;
w.finish()?;

let mut r = Reader::open(&path, ReadOptions { data: true })?;
let Some(Record::Syscall(e)) = r.next_record()? else { panic!() };
assert_eq!(e.captures[0].data.as_deref(), Some(&b"hello"[..]));
assert!(r.next_record()?.is_none());
# Ok::<(), Box<dyn std::error::Error>>(())
```
*/

mod codec;
mod error;
mod frame;
mod meta;
mod reader;
mod record;
mod recover;
mod varint;
mod writer;

pub use codec::{CaptureHead, SyscallHead};
pub use error::{Error, ErrorKind, Result};
pub use frame::{FrameHeader, FrameKind, FILE_HEADER_LEN, FRAME_HEADER_LEN};
pub use meta::{ClockAnchor, EndSummary, TraceMeta, TIMINGS_RECORDER};
pub use reader::{ReadCounts, ReadOptions, Reader};
pub use record::*;
pub use recover::{recover, recover_with_progress, RecoverReport};
pub use writer::{same_file, SyscallWriter, Writer, WriterOptions};

/// Major format version: a reader refuses files with a different major.
pub const FORMAT_MAJOR: u16 = 1;
/// Minor format version: later minors only add skippable frames, record
/// tags and trailing fields, so every 1.x reader reads every 1.y file.
pub const FORMAT_MINOR: u16 = 5;
