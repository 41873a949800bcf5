#!/bin/bash
# Timing fidelity: how close to their recorded times replay issues calls
# with --timing original, and how their response times compare (the
# `fidelity` report). Records bench/workloads/paced.c (COUNT 4 KiB
# pwrites, one every PAUSE_US µs, busy-waited so the recording is the
# schedule), replays it ROUNDS times with each reanimator binary
# (alternating, fresh root, each replay must be clean) writing timings
# traces, and prints each binary's `fidelity` report over its replays
# (made by the last BIN, which must have the `fidelity` command).
#
# Usage: bench/timing.sh [--count N] [--pause US] [--rounds R] BIN [BIN...]
#   e.g. bench/timing.sh --rounds 3 ./before ./after
set -euo pipefail

count=20000 pause=50 rounds=3
bins=()
while [ $# -gt 0 ]; do
    case "$1" in
        --count) count=$2; shift 2 ;;
        --pause) pause=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) bins+=("$(realpath "$1")"); shift ;;
    esac
done
if [ ${#bins[@]} -eq 0 ]; then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /var/tmp/reanimator-timing-XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/paced" "$here/workloads/paced.c"
(cd "$work" && "${bins[0]}" record -o "$work/paced.rtr" -- ./paced out "$count" 4096 "$pause" 2>&1 | tail -1)
rm -f "$work/out"
for ((r = 1; r <= rounds; r++)); do
    for i in "${!bins[@]}"; do
        rm -rf "$work/root"
        sync
        if ! "${bins[$i]}" replay "$work/paced.rtr" --root "$work/root" --timing original \
            --timings "$work/b$i.r$r.tim" >"$work/log" 2>&1 \
            || ! grep -q ' 0 mismatches.*, 0 differ' "$work/log"; then
            echo "timing: the replay by ${bins[$i]} failed or is not clean:" >&2
            tail -5 "$work/log" >&2
            exit 1
        fi
    done
done
for i in "${!bins[@]}"; do
    echo "== ${bins[$i]}"
    "${bins[-1]}" fidelity "$work/paced.rtr" "$work"/b"$i".r*.tim --calls 1
done
