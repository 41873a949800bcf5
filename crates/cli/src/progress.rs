//! Progress bars for long commands, shown only when stderr is a terminal
//! (never in pipes, logs or CI output).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// A byte-count progress bar, or nothing when stderr is not a terminal.
pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// A bar measuring bytes processed, labelled `what`.
    pub fn bytes(what: &'static str) -> Self {
        if !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        let bar = ProgressBar::new(0);
        let style = ProgressStyle::with_template(
            "{msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta} left)",
        )
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_message(what);
        Progress(Some(bar))
    }

    /// Sets the position and total.
    pub fn update(&self, done: u64, total: u64) {
        if let Some(b) = &self.0 {
            b.set_length(total);
            b.set_position(done);
        }
    }

    /// Sets the label.
    pub fn message(&self, msg: String) {
        if let Some(b) = &self.0 {
            b.set_message(msg);
        }
    }

    /// Prints a line above the bar (or plainly to stderr without one).
    pub fn println(&self, line: &str) {
        match &self.0 {
            Some(b) => b.suspend(|| errln!("{line}")),
            None => errln!("{line}"),
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}
