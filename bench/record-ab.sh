#!/bin/bash
# A/B of recorder builds: runs a command un-traced and under
# `reanimator record` with each of several binaries, alternating, N rounds
# (`sync` and the command's output removed before every run), and prints
# each one's median wall time, its ratio to the un-traced median, and its
# runs. A recording that loses events stops the script.
#
# Usage: bench/record-ab.sh ROUNDS OUTPUT BIN [BIN...] -- CMD [ARGS...]
#   OUTPUT is the file CMD writes (removed before each run).
#   BACKEND=ptrace|ebpf picks the back end (default ebpf).
#   SNAPSHOT=contents|meta|off picks the initial state (default contents).
#   e.g. bench/record-ab.sh 5 F ./before ./after -- dd if=/dev/zero of=F bs=4k count=100000
set -euo pipefail

if [ $# -lt 4 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
rounds=$1 output=$2
shift 2
bins=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    bins+=("$1")
    shift
done
[ "${1:-}" = "--" ] && shift
cmd=("$@")
backend=${BACKEND:-ebpf}
snapshot=${SNAPSHOT:-contents}

work=$(mktemp -d /var/tmp/reanimator-rec-ab-XXXXXX)
trap 'rm -rf "$work"' EXIT
declare -A times
for ((r = 1; r <= rounds; r++)); do
    for b in vanilla "${bins[@]}"; do
        rm -f "$output" "$work/t.rnm"
        sync
        start=$(date +%s.%N)
        if [ "$b" = vanilla ]; then
            "${cmd[@]}" >/dev/null
        elif ! "$b" record --backend "$backend" --snapshot "$snapshot" -o "$work/t.rnm" -- "${cmd[@]}" \
            >/dev/null 2>"$work/err" || ! grep -q 'lost: 0' "$work/err"; then
            echo "record-ab: $b failed or lost events:" >&2
            tail -5 "$work/err" >&2
            exit 1
        fi
        end=$(date +%s.%N)
        times[$b]+=" $(echo "$end - $start" | bc)"
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(echo "${times[vanilla]}" | median)
for b in vanilla "${bins[@]}"; do
    m=$(echo "${times[$b]}" | median)
    printf '%s: median %.3f s (%.2fx)  runs%s\n' "$b" "$m" "$(echo "$m / $base" | bc -l)" "${times[$b]}"
done
