#!/bin/bash
# Counts how often a replay leaves a file written through one shared
# offset with its lines in another order, and how often one reports
# mismatched calls (the shell's fstat of the log seeing another size):
# two shell processes echo 2,000 lines each into one `> log` (one open
# file description, one offset). With APPEND=1 each echo opens the log
# itself with `>> log` (4,000 open file descriptions, all writing at the
# file's end).
# Each round records the workload once per back end with the first BIN,
# then replays that same trace with every BIN, so the builds compare on
# identical traces (docs/REPLAY.md, "Races the recording does not order").
#
# Usage: bench/shared-offset-ab.sh ROUNDS BIN [BIN...]
#   e.g. bench/shared-offset-ab.sh 10 ./before ./after
set -uo pipefail

if [ $# -lt 2 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
rounds=$1
shift
bins=()
for b in "$@"; do bins+=("$(realpath "$b")"); done
set -- "${bins[@]}"
work=$(mktemp -d /var/tmp/reanimator-shared-offset-XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ "${APPEND:-0}" = 1 ]; then
    cat > "$work/lines.sh" <<'SH'
for i in $(seq 1 2000); do echo "a$i" >> log; done &
for i in $(seq 1 2000); do echo "b$i" >> log; done; wait
SH
else
    cat > "$work/lines.sh" <<'SH'
( for i in $(seq 1 2000); do echo "a$i"; done &
  for i in $(seq 1 2000); do echo "b$i"; done; wait ) > log
SH
fi
declare -A clean differ mismatched
for ((r = 1; r <= rounds; r++)); do
    for backend in ptrace ebpf; do
        rm -f "$work/log"
        (cd "$work" && "$1" record --backend "$backend" --force -o t.rtr -- bash lines.sh \
            </dev/null >/dev/null 2>&1) || { echo "shared-offset-ab: record failed" >&2; exit 1; }
        for b in "$@"; do
            rm -rf "$work/root"
            out=$("$b" replay "$work/t.rtr" --root "$work/root" 2>&1)
            k="$backend $b"
            grep -q ', 0 differ' <<<"$out" || differ[$k]=$((${differ[$k]:-0} + 1))
            grep -q ' 0 mismatches' <<<"$out" || mismatched[$k]=$((${mismatched[$k]:-0} + 1))
            if grep -q ', 0 differ' <<<"$out" && grep -q ' 0 mismatches' <<<"$out"; then
                clean[$k]=$((${clean[$k]:-0} + 1))
            fi
        done
    done
done
printf '%-8s %-40s %6s %10s %6s\n' backend build clean mismatched differ
for backend in ptrace ebpf; do
    for b in "$@"; do
        k="$backend $b"
        printf '%-8s %-40s %6d %10d %6d\n' "$backend" "$b" "${clean[$k]:-0}" "${mismatched[$k]:-0}" "${differ[$k]:-0}"
    done
done
