#!/bin/bash
# Counts how often recordings of `script -qec dd` through a 1 MiB ring
# hang (no end within 30 s) with each of several recorder builds,
# alternating, while two busy loops load both CPUs: the load that made
# script miss its child's exit (docs/ARCHITECTURE.md, "Exits are held").
#
# Usage: bench/wrapper-hang-ab.sh ROUNDS BIN [BIN...]
#   e.g. bench/wrapper-hang-ab.sh 10 ./before ./after
set -uo pipefail

if [ $# -lt 2 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
rounds=$1
shift
command -v script >/dev/null || { echo "wrapper-hang-ab: needs script (util-linux)" >&2; exit 1; }
work=$(mktemp -d /var/tmp/reanimator-hang-ab-XXXXXX)
busy=()
for _ in 1 2; do
    sh -c 'while :; do :; done' &
    busy+=($!)
done
trap 'kill "${busy[@]}" 2>/dev/null; rm -rf "$work"' EXIT
declare -A ended hung
for ((r = 1; r <= rounds; r++)); do
    for b in "$@"; do
        rm -f "$work/out"
        (cd "$work" && timeout 30 "$b" record --backend ebpf --snapshot off --ring-size 1M \
            --force -o t.rtr -- script -qec \
            "dd if=/dev/zero of=out bs=64k count=2000 status=none" /dev/null \
            </dev/null >/dev/null 2>&1)
        if [ $? = 124 ]; then
            hung[$b]=$((${hung[$b]:-0} + 1))
        else
            ended[$b]=$((${ended[$b]:-0} + 1))
        fi
    done
done
for b in "$@"; do
    echo "$b: ended ${ended[$b]:-0}, hung ${hung[$b]:-0} of $rounds"
done
