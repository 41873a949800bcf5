//! Ctrl-C (or SIGTERM, SIGHUP) during a command that writes files or
//! runs long. `select`, `recover` and `export` remove their half-written
//! outputs, say so and exit 128 + the signal, as a failure leaves nothing
//! behind; `replay` stops as `--on-mismatch abort` does and prints its
//! report (a second signal quits at once). Without this, the kernel's
//! default action killed the command with its outputs half-written and
//! nothing said.

use std::path::{Path, PathBuf};

/// Blocks SIGINT, SIGTERM and SIGHUP in this thread, and so in every
/// thread it starts from now on, and calls `on_signal` with each one
/// that arrives, on a thread of its own. Call before the command starts
/// any thread. False if the signals could not be blocked (they then keep
/// their default action).
pub fn on_signals(mut on_signal: impl FnMut(i32) + Send + 'static) -> bool {
    // SAFETY: a zeroed sigset_t is valid storage for sigemptyset.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is valid; blocking signals in this thread only.
    let blocked = unsafe {
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) == 0
    };
    if blocked {
        std::thread::spawn(move || loop {
            let mut signal = 0;
            // SAFETY: `set` and `signal` are valid for the call.
            if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
                return;
            }
            on_signal(signal);
        });
    }
    blocked
}

/// From here on, the signals above remove `outputs` (those that did not
/// exist yet, or all of them with `overwrite`: an existing file is the
/// user's until the command replaces it; never the `input`, nor a FIFO or
/// device written into), and `dir` if it did not exist yet and is empty
/// then, and end the process.
pub fn clean_up_on_interrupt(
    input: &Path,
    outputs: Vec<PathBuf>,
    dir: Option<PathBuf>,
    overwrite: bool,
) {
    let outputs: Vec<PathBuf> = outputs
        .into_iter()
        .filter(|p| match std::fs::symlink_metadata(p) {
            Ok(m) => overwrite && m.is_file(),
            Err(_) => true,
        })
        .filter(|p| !reanimator_trace::same_file(p, input))
        .collect();
    let dir = dir.filter(|d| !d.exists());
    on_signals(move |signal| {
        let mut removed = Vec::new();
        for p in &outputs {
            if std::fs::remove_file(p).is_ok() {
                removed.push(p.display().to_string());
            }
        }
        if let Some(d) = &dir {
            let _ = std::fs::remove_dir(d);
        }
        if removed.is_empty() {
            errln!("reanimator: interrupted");
        } else {
            errln!(
                "reanimator: interrupted; removed the unfinished {}",
                removed.join(", ")
            );
        }
        std::process::exit(128 + signal);
    });
}
