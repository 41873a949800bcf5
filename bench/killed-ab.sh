#!/bin/bash
# Counts how often a program killed with SIGKILL in the middle of writing
# a file replays to the same file: dd writes 16 MiB blocks to a file and
# is killed after 0.3 s, most often inside a write that has moved part of
# its bytes. Each round records and replays the workload with every BIN
# and both back ends (the recorder is what differs between builds).
#
# Usage: bench/killed-ab.sh ROUNDS BIN [BIN...]
#   e.g. bench/killed-ab.sh 10 ./before ./after
set -uo pipefail

if [ $# -lt 2 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
rounds=$1
shift
bins=()
for b in "$@"; do bins+=("$(realpath "$b")"); done
set -- "${bins[@]}"
work=$(mktemp -d /var/tmp/reanimator-killed-XXXXXX)
trap 'rm -rf "$work"' EXIT
cat > "$work/killed.sh" <<'SH'
dd if=/dev/zero of=out bs=16M count=400 2>/dev/null &
sleep 0.3
kill -KILL $!
wait
exit 0
SH
declare -A clean
for ((r = 1; r <= rounds; r++)); do
    for backend in ptrace ebpf; do
        for b in "$@"; do
            rm -f "$work/out"
            (cd "$work" && "$b" record --backend "$backend" --force -o t.rtr -- bash killed.sh \
                </dev/null >/dev/null 2>&1) || { echo "killed-ab: record failed" >&2; exit 1; }
            rm -rf "$work/root"
            out=$("$b" replay "$work/t.rtr" --root "$work/root" 2>&1)
            k="$backend $b"
            if grep -q ', 0 differ' <<<"$out" && grep -q ' 0 mismatches' <<<"$out"; then
                clean[$k]=$((${clean[$k]:-0} + 1))
            fi
        done
    done
done
printf '%-8s %-40s %6s %7s\n' backend build clean rounds
for backend in ptrace ebpf; do
    for b in "$@"; do
        k="$backend $b"
        printf '%-8s %-40s %6d %7d\n' "$backend" "$b" "${clean[$k]:-0}" "$rounds"
    done
done
