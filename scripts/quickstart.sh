#!/usr/bin/env bash
# Quick start: installs what is needed, builds reanimator, and runs the
# main job as far as it exists today: a bundled workload (sqlite3 on a
# database file) is recorded with every buffer, inspected, damaged as a
# killed recorder would leave it, and recovered. (Verified replay arrives
# with the replayer.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cargo build --release --quiet -p reanimator-cli
bin=$PWD/target/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

echo "== recording: sqlite3 creating, filling and querying app.db"
sql="CREATE TABLE kv(k INTEGER PRIMARY KEY, v TEXT);"
for i in $(seq 1 200); do sql+="INSERT INTO kv VALUES($i, printf('%0200d', $i));"; done
sql+="SELECT count(*), sum(length(v)) FROM kv;"
echo "$sql" | "$bin/reanimator" record -o sqlite.rtr -- sqlite3 app.db
ls -l sqlite.rtr
echo "== reanimator dump: the calls that touched app.db (first 8)"
"$bin/reanimator" dump -s 24 sqlite.rtr | grep -F 'app.db' | head -n 8
echo "== a recorder killed mid-write: the end of the trace is gone"
size=$(stat -c %s sqlite.rtr)
head -c $((size - 600)) sqlite.rtr > killed.rtr
if "$bin/reanimator" dump --no-data killed.rtr > /dev/null; then
    echo "quickstart: a damaged trace was not reported" >&2; exit 1
fi
echo "== reanimator recover"
"$bin/reanimator" recover killed.rtr
"$bin/reanimator" dump --no-data killed.recovered.rtr | tail -n 2
echo "quickstart: OK"
