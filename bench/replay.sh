#!/usr/bin/env bash
# Replay speed benchmark: the original run vs reanimator replay of its
# trace, side by side (see bench/replay.py). Installs what it needs, builds
# reanimator in release mode, then passes its arguments to replay.py,
# e.g. bench/replay.sh --rounds 5 --only a,d
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/deps.sh
exec python3 bench/replay.py "$@"
