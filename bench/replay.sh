#!/usr/bin/env bash
# Replay speed benchmark: the original run vs reanimator replay of its
# trace, side by side (see bench/replay.py). Installs rocksdb-tools
# (db_bench) and sqlite3 if missing, builds reanimator in release mode, then
# passes its arguments to replay.py, e.g. bench/replay.sh --rounds 5 --only a,d
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v db_bench >/dev/null || missing+=(rocksdb-tools)
command -v sqlite3 >/dev/null || missing+=(sqlite3)
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
fi
cargo build --release --quiet -p reanimator-cli
exec python3 bench/replay.py "$@"
