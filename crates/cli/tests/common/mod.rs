//! Helpers the command-line integration tests share.

use std::process::Output;

/// The `reanimator` binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_reanimator")
}

/// Fails the test with an install hint when `tool` is missing (these
/// tests record and replay real programs).
pub fn require(tool: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).exists()))
        .unwrap_or(false);
    assert!(
        found,
        "`{tool}` is not installed; these tests run real programs: run scripts/install-deps.sh"
    );
}

/// A finished command's status and output, for assertion messages.
pub fn show(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
