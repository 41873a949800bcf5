#!/usr/bin/env bash
# Recording overhead benchmark: vanilla vs strace vs strace -xx vs
# reanimator record, side by side (see bench/record.py for the workloads).
# Installs what it needs, builds reanimator in release mode, then passes
# its arguments to record.py, e.g. bench/record.sh --rounds 5 --only a,b
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/deps.sh
exec python3 bench/record.py "$@"
