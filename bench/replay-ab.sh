#!/bin/bash
# A/B of replay builds: replays one trace with each of several
# `reanimator` binaries, alternating, N rounds, into a fresh root each
# time (`rm -rf` and `sync` before every run), and prints each binary's
# median wall time and its runs. A replay that fails or is not clean
# stops the script: a faster wrong replay is no result.
#
# Usage: bench/replay-ab.sh TRACE ROUNDS BIN [BIN...] [-- REPLAY-OPTIONS...]
#   e.g. bench/replay-ab.sh storm.rnm 7 ./before ./after -- --order commute
set -euo pipefail

if [ $# -lt 3 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
trace=$1 rounds=$2
shift 2
bins=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    bins+=("$1")
    shift
done
[ "${1:-}" = "--" ] && shift
opts=("$@")

work=$(mktemp -d /var/tmp/reanimator-ab-XXXXXX)
trap 'rm -rf "$work"' EXIT
for ((r = 1; r <= rounds; r++)); do
    for b in "${bins[@]}"; do
        rm -rf "$work/root"
        sync
        start=$(date +%s.%N)
        if ! "$b" replay "$trace" --root "$work/root" "${opts[@]}" >"$work/out" 2>&1; then
            echo "replay-ab: $b failed:" >&2
            tail -5 "$work/out" >&2
            exit 1
        fi
        end=$(date +%s.%N)
        if ! grep -q ' 0 mismatches' "$work/out" || ! grep -q ', 0 differ' "$work/out"; then
            echo "replay-ab: the replay by $b is not clean:" >&2
            tail -5 "$work/out" >&2
            exit 1
        fi
        echo "$b $start $end"
    done
done | python3 -c '
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in sys.stdin:
    b, start, end = line.split()
    runs[b].append(float(end) - float(start))
for b, v in runs.items():
    print(f"{b}: median {statistics.median(v):.3f} s  runs " + " ".join(f"{x:.3f}" for x in v))
'
