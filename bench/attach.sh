#!/bin/bash
# Records running programs by attaching to them (`record --backend ptrace
# -p PID`), detaches with Ctrl-C while they go on writing, and replays
# each trace into an empty root: one line per run with replay's
# mismatches and differing paths. A survey of fidelity, not of speed.
# The program (bench/workloads/attach_writer.py) writes a SQLite database
# and a log it opened before the attach from one thread, and a file it
# reopens from another; the recording starts 1 s into it and lasts 1.5 s.
#
# Usage: bench/attach.sh [ROUNDS] [BIN...]
#   ROUNDS defaults to 3, BIN to target/release/reanimator; several
#   binaries are run alternately (a build before and after a change).
set -uo pipefail

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
rounds=${1:-3}
shift || true
bins=("$@")
[ ${#bins[@]} -eq 0 ] && bins=(target/release/reanimator)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /var/tmp/reanimator-attach-XXXXXX)
trap 'rm -rf "$work"' EXIT
for ((r = 1; r <= rounds; r++)); do
    for b in "${bins[@]}"; do
        bin=$(realpath "$b")
        rm -rf "$work/run" "$work/root" "$work/t.rtr"
        mkdir "$work/run"
        (cd "$work/run" && exec python3 "$here/workloads/attach_writer.py" 4) &
        program=$!
        sleep 1
        timeout -s INT 1.5 "$bin" record --backend ptrace -o "$work/t.rtr" -p "$program" \
            > /dev/null 2> "$work/rec.err"
        wait "$program"
        result=$("$bin" replay "$work/t.rtr" --root "$work/root" 2>&1 |
            grep -o '[0-9]* mismatches; final state: [0-9]* paths checked, [0-9]* differ')
        echo "$b round $r: ${result:-replay failed: $(tail -1 "$work/rec.err")}"
    done
done
