//! `reanimator dump`: a trace as text for people or JSON lines for
//! programs, optionally only the records a filter keeps (the same filter
//! as `select`).

use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use reanimator_analysis::Scan;
use reanimator_text::{Renderer, TextOptions};

use crate::progress::Progress;
use crate::select_cmd::FilterArgs;

/// Arguments of `reanimator dump`.
#[derive(clap::Args, Debug)]
pub struct DumpArgs {
    /// The trace file.
    pub trace: PathBuf,
    /// Print JSON lines with every field (buffer data in full, as hex).
    #[arg(long)]
    pub json: bool,
    /// Show at most this many bytes of each string or buffer (text only; paths show whole, as in strace).
    #[arg(
        short = 's',
        long = "string-limit",
        value_name = "N",
        default_value_t = 32
    )]
    pub string_limit: usize,
    /// Do not load buffer contents (faster; lengths are still shown).
    /// `--path` loads them anyway: long paths are stored with the buffers.
    #[arg(long)]
    pub no_data: bool,
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// Most bytes of each buffer loaded for the text form (at least the
/// string limit).
const TEXT_DATA_MAX: usize = 1 << 20;

/// Prints every kept record; a damaged or unfinished trace prints what it
/// holds, then the error, and fails.
pub fn run(args: &DumpArgs) -> Result<ExitCode> {
    let mut scan = Scan::open(&args.trace, args.filter.filter()?, false, !args.no_data)?;
    if !args.json {
        // Text shows a buffer's first bytes: the rest of a large one need
        // not be loaded (a trace with a 256 MiB buffer took 535 MB). A
        // structure (`getdents64` entries) is decoded from what is loaded,
        // up to here: its first `-s` entries show, and how many it held.
        scan.limit_data(args.string_limit.max(TEXT_DATA_MAX));
    }
    let renderer = Renderer::new(
        TextOptions {
            max_string: args.string_limit,
        },
        scan.reader().meta().clock,
    );
    let stdout = std::io::stdout();
    // A bar only when the lines go elsewhere (a file, a pipe): on the
    // terminal it would tear through them.
    let bar = (!stdout.is_terminal()).then(|| Progress::bytes("dumping"));
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut n = 0u64;
    let result = loop {
        match scan.next_item() {
            Ok(Some(item)) => {
                n += 1;
                if let Some(b) = bar.as_ref().filter(|_| n.is_multiple_of(16_384)) {
                    b.update(scan.reader().offset(), scan.reader().file_len());
                }
                let r = item.record;
                let written = if args.json {
                    serde_json::to_writer(&mut out, &renderer.json(&r))
                        .map_err(std::io::Error::from)
                        .and_then(|()| out.write_all(b"\n"))
                } else {
                    writeln!(out, "{}", renderer.text(&r))
                };
                written.context(crate::STDOUT_FAILED)?;
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    if let Some(b) = &bar {
        b.finish();
    }
    out.flush().context(crate::STDOUT_FAILED)?;
    result?;
    Ok(ExitCode::SUCCESS)
}
