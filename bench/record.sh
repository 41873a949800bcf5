#!/usr/bin/env bash
# Recording overhead benchmark: vanilla vs strace vs strace -xx vs
# reanimator record, side by side (see bench/record.py for the workloads).
# Installs strace, rocksdb-tools (db_bench) and sqlite3 if missing, builds
# reanimator in release mode, then passes its arguments to record.py,
# e.g. bench/record.sh --rounds 5 --only a,b
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v strace >/dev/null || missing+=(strace)
command -v db_bench >/dev/null || missing+=(rocksdb-tools)
command -v sqlite3 >/dev/null || missing+=(sqlite3)
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
fi
cargo build --release --quiet -p reanimator-cli
exec python3 bench/record.py "$@"
