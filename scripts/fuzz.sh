#!/usr/bin/env bash
# Fuzzes the trace reader and recover for SECONDS (default 60) with
# libFuzzer via cargo-fuzz, starting from small valid traces.
# Needs the nightly toolchain (cargo-fuzz is installed if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz: FAILED: the nightly Rust toolchain is not installed; cargo fuzz needs it" >&2
    exit 1
fi
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
corpus=fuzz/corpus/reader
mkdir -p "$corpus"
REANIMATOR_FUZZ_SEED_DIR="$PWD/$corpus" cargo test -q -p reanimator-trace --test format write_fuzz_seeds >/dev/null
cargo +nightly fuzz run reader "$corpus" -- -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 2>&1 | tail -n 5
echo "fuzz: reader ran ${seconds}s without a crash"
