//! The hand-off from the tracer thread to a writer thread.
//!
//! Compressing and writing the trace costs as much CPU as a few syscall
//! stops; done on the tracer thread it would delay every tracee. The
//! tracer instead appends finished events to a batch, hands full batches
//! to a writer thread over a bounded channel (back-pressure, never loss:
//! a slow disk slows the tracer, it does not drop events), and gets the
//! emptied batches back for reuse, so steady state allocates nothing.

use std::io::Write;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::time::{Duration, Instant};

use reanimator_trace::{CaptureHead, Record, SyscallHead, Writer};

use crate::Captures;
use crate::Error;

/// Bytes of captured data after which a batch is handed over.
const BATCH_BYTES: usize = 1 << 20;
/// Events after which a batch is handed over.
const BATCH_ITEMS: usize = 4096;
/// Batches in flight: bounds the memory between tracer and writer.
const IN_FLIGHT: usize = 16;
/// Queued batches at which the writer stops compressing buffer data (it
/// is falling behind) unless it compresses very well, and at or below
/// which it compresses again.
const STORE_ABOVE: usize = IN_FLIGHT / 2;
const COMPRESS_AT: usize = 1;

/// One event in a batch, in the order the tracer produced it.
enum Item {
    /// A system call and the range of `Batch::heads` holding its captures.
    Call(SyscallHead, Range<usize>),
    /// Any other record.
    Other(Record),
}

#[derive(Default)]
struct Batch {
    items: Vec<Item>,
    heads: Vec<(CaptureHead, Range<usize>)>,
    bytes: Vec<u8>,
}

impl Batch {
    fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    fn clear(&mut self) {
        self.items.clear();
        self.heads.clear();
        self.bytes.clear();
    }
}

enum Msg {
    Batch(Batch),
    Flush,
}

/// The tracer's end.
pub struct Sink<'q> {
    queued: &'q AtomicUsize,
    tx: Option<SyncSender<Msg>>,
    spare: Receiver<Batch>,
    current: Batch,
}

impl Sink<'_> {
    /// Appends a system call with its captures.
    pub fn call(&mut self, head: &SyscallHead, captures: &Captures) -> Result<(), Error> {
        let b = &mut self.current;
        let first = b.heads.len();
        for (h, range) in &captures.heads {
            let at = b.bytes.len();
            b.bytes.extend_from_slice(&captures.bytes[range.clone()]);
            b.heads.push((*h, at..b.bytes.len()));
        }
        b.items.push(Item::Call(*head, first..b.heads.len()));
        self.maybe_send()
    }

    /// Appends any other record.
    pub fn record(&mut self, r: Record) -> Result<(), Error> {
        self.current.items.push(Item::Other(r));
        self.maybe_send()
    }

    /// Hands everything so far to the writer and asks it to write it out.
    pub fn flush(&mut self) -> Result<(), Error> {
        self.send()?;
        self.tx().send(Msg::Flush).map_err(|_| Error::WriterStopped)
    }

    fn maybe_send(&mut self) -> Result<(), Error> {
        if self.current.bytes.len() >= BATCH_BYTES || self.current.items.len() >= BATCH_ITEMS {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> Result<(), Error> {
        if self.current.is_empty() {
            return Ok(());
        }
        let next = self.spare.try_recv().unwrap_or_default();
        let full = std::mem::replace(&mut self.current, next);
        self.queued.fetch_add(1, Ordering::Relaxed);
        self.tx()
            .send(Msg::Batch(full))
            .map_err(|_| Error::WriterStopped)
    }

    fn tx(&self) -> &SyncSender<Msg> {
        self.tx.as_ref().expect("sink open until finished")
    }

    /// Hands over the last batch and closes the channel.
    pub fn close(&mut self) -> Result<(), Error> {
        let res = self.send();
        self.tx = None;
        res
    }
}

/// When a recorder writes out what it holds: a recorder killed with
/// SIGKILL leaves a trace up to its last flush. Flushes come every
/// second, and more often at the start (0.1, 0.3, 0.7 and 1.5 s after
/// it), so that a short recording killed early still leaves its first
/// calls.
pub struct FlushClock {
    last: Instant,
    interval: Duration,
}

impl FlushClock {
    /// The longest time between two flushes.
    pub const EVERY: Duration = Duration::from_secs(1);
    const FIRST: Duration = Duration::from_millis(100);

    /// A clock whose first flush is due shortly.
    pub fn new() -> Self {
        FlushClock {
            last: Instant::now(),
            interval: Self::FIRST,
        }
    }

    /// True (and the next flush scheduled) when a flush is due.
    pub fn due(&mut self) -> bool {
        if self.last.elapsed() < self.interval {
            return false;
        }
        self.last = Instant::now();
        self.interval = (self.interval * 2).min(Self::EVERY);
        true
    }
}

impl Default for FlushClock {
    fn default() -> Self {
        Self::new()
    }
}

/// Runs `tracer` with a [`Sink`] whose batches a second thread writes to
/// `writer`. The writer thread starts before `tracer` runs, so it keeps
/// the process's full CPU set even if the tracer then pins itself.
pub fn with_writer_thread<W, T>(
    writer: &mut Writer<W>,
    tracer: impl FnOnce(&mut Sink<'_>) -> Result<T, Error>,
) -> Result<T, Error>
where
    W: Write + Send,
{
    let (tx, rx) = sync_channel::<Msg>(IN_FLIGHT);
    let (back_tx, back_rx) = sync_channel::<Batch>(IN_FLIGHT);
    let queued = AtomicUsize::new(0);
    let queued = &queued;
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("trace-writer".into())
            .spawn_scoped(scope, move || -> Result<(), Error> {
                block_all_signals();
                for msg in rx {
                    match msg {
                        Msg::Batch(mut batch) => {
                            // Falling behind: store buffer data raw until
                            // the queue drains, rather than slow the
                            // tracees; unless it compresses five times or
                            // more, which is cheaper than writing it raw
                            // (a storm of 4 KiB pwrites: 8 MB of trace
                            // instead of 800 MB).
                            match queued.fetch_sub(1, Ordering::Relaxed) {
                                n if n <= COMPRESS_AT => writer.set_compress_blobs(true),
                                n if n > STORE_ABOVE => {
                                    writer.set_compress_blobs(writer.blobs_compress_well())
                                }
                                _ => {}
                            }
                            write_batch(writer, &batch)?;
                            batch.clear();
                            let _ = back_tx.try_send(batch);
                        }
                        Msg::Flush => writer.flush().map_err(Error::Trace)?,
                    }
                }
                Ok(())
            })
            .map_err(Error::Spawn)?;
        let mut sink = Sink {
            queued,
            tx: Some(tx),
            spare: back_rx,
            current: Batch::default(),
        };
        let result = tracer(&mut sink);
        let closed = sink.close();
        drop(sink);
        let written = handle.join().unwrap_or(Err(Error::WriterStopped));
        // A writer error explains a tracer that stopped on a closed channel.
        written?;
        closed?;
        result
    })
}

fn write_batch<W: Write>(writer: &mut Writer<W>, batch: &Batch) -> Result<(), Error> {
    for item in &batch.items {
        match item {
            Item::Call(head, caps) => {
                let mut call = writer.syscall(head);
                for (h, range) in &batch.heads[caps.clone()] {
                    call.capture(h, &batch.bytes[range.clone()])
                        .map_err(Error::Trace)?;
                }
                call.finish().map_err(Error::Trace)?;
            }
            Item::Other(r) => writer.write(r).map_err(Error::Trace)?,
        }
    }
    Ok(())
}

/// The tracer's timer and Ctrl-C signals must interrupt the tracer's
/// `waitpid`, so no other thread may take them.
fn block_all_signals() {
    // SAFETY: sigfillset initialises the local set; pthread_sigmask only
    // changes this thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Flushes come 0.1, 0.2, 0.4 and 0.8 s apart, then every second.
    #[test]
    fn flushes_come_sooner_at_the_start() {
        let mut clock = FlushClock::new();
        let mut intervals = Vec::new();
        for _ in 0..6 {
            intervals.push(clock.interval.as_millis());
            clock.last -= clock.interval;
            assert!(clock.due());
            assert!(!clock.due(), "not due again at once");
        }
        assert_eq!(intervals, [100, 200, 400, 800, 1000, 1000]);
    }
}
