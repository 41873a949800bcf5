#!/usr/bin/env bash
# Quick start: installs what is needed, builds reanimator, and runs the
# main job as far as it exists today: a trace of a workload is written,
# inspected, damaged as a crash would damage it, and recovered.
# (Recording and verified replay arrive with the recorder and replayer.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cargo build --release --quiet -p reanimator-cli -p reanimator-bench
bin=target/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== writing a 200,000-event trace of 4 KiB writes (buffers: the files under /usr/share/doc)"
"$bin/trace-bench" write-read --events 200000 --kind buf4k-real --corpus /usr/share/doc -o "$work/demo.rtr"
ls -l "$work/demo.rtr"
echo "== reanimator dump (first 5 lines)"
"$bin/reanimator" dump "$work/demo.rtr" | head -n 5
echo "== a recorder killed mid-write: the last 100 KiB are gone"
size=$(stat -c %s "$work/demo.rtr")
head -c $((size - 102400)) "$work/demo.rtr" > "$work/killed.rtr"
if "$bin/reanimator" dump --no-data "$work/killed.rtr" > /dev/null; then
    echo "quickstart: a damaged trace was not reported" >&2; exit 1
fi
echo "== reanimator recover"
"$bin/reanimator" recover "$work/killed.rtr"
"$bin/reanimator" dump --no-data "$work/killed.recovered.rtr" | tail -n 2
echo "quickstart: OK"
