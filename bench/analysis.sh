#!/usr/bin/env bash
# Analysis throughput benchmark: `reanimator stats` and `export` on a
# trace of at least 5 M events (a recorded dd syscall storm) and on a
# data-heavy db_bench trace: events/s, MB/s of trace and peak RSS (see
# bench/analysis.py). Installs what it needs, builds reanimator in release
# mode, then passes its arguments to analysis.py,
# e.g. bench/analysis.sh --rounds 3
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/deps.sh
exec python3 bench/analysis.py "$@"
