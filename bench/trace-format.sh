#!/usr/bin/env bash
# Trace-format benchmark: writer and reader throughput on one core, trace
# bytes per event, compression on real data (the files a RocksDB db_bench
# fillrandom run writes) and on zeros and random bytes, and bounded memory
# (a 10 M-event trace written and read back under 256 MiB RSS).
#
# Usage: bench/trace-format.sh [EVENTS_PER_BUFFER_RUN]   (default 250000)
# Installs rocksdb-tools (db_bench) if missing. Prints one human line and
# one JSON line per run; docs/BENCHMARKS.md records the results.
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-250000}
if ! command -v db_bench >/dev/null; then
    echo "== installing rocksdb-tools (db_bench)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q rocksdb-tools >/dev/null
fi
cargo build --release --quiet -p reanimator-bench
bin=target/release/trace-bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== corpus: db_bench fillrandom, 300,000 keys, 400-byte values, no RocksDB compression"
db_bench --benchmarks=fillrandom --db="$work/db" --num=300000 --value_size=400 \
    --compression_type=none --threads=1 2>/dev/null | tr "\r" "\n" | grep -a "^fillrandom"
du -sh "$work/db"

echo "== metadata-only events"
"$bin" write-read --events 2000000 --kind meta -o "$work/t.rtr"
for kind in buf4k-real buf4k-zeros buf4k-random; do
    echo "== 4 KiB buffers: $kind"
    "$bin" write-read --events "$events" --kind "$kind" --corpus "$work/db" -o "$work/t.rtr"
done
echo "== buffer compression level trade-off (db_bench data)"
for level in -10 -5 3; do
    "$bin" write-read --events "$events" --kind buf4k-real --corpus "$work/db" --blobs-level "$level" -o "$work/t.rtr" | head -n 1 | sed "s/^/level $level: /"
done
echo "== bounded memory"
"$bin" rss --events 10000000 --limit-mib 256 -o "$work/t.rtr"
