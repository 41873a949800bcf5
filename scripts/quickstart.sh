#!/usr/bin/env bash
# Quick start: installs what is needed, builds reanimator, and runs the
# main job: a bundled workload (sqlite3 working on an existing database) is
# recorded with every buffer, inspected, and replayed into an empty
# directory with every result and the final files verified; then a trace
# damaged as a killed recorder would leave it is recovered.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cargo build --release --quiet -p reanimator-cli
bin=$PWD/target/release
picture=$PWD/target/quickstart-stats.svg
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

echo "== preparing app.db (not recorded)"
sql="CREATE TABLE kv(k INTEGER PRIMARY KEY, v TEXT);"
for i in $(seq 1 200); do sql+="INSERT INTO kv VALUES($i, printf('%0200d', $i));"; done
echo "$sql" | sqlite3 app.db
echo "== recording: sqlite3 updating and querying the existing app.db"
sql=""
for i in $(seq 1 100); do sql+="UPDATE kv SET v = upper(v) || 'x' WHERE k = $i;"; done
sql+="INSERT INTO kv VALUES(1000, 'new'); SELECT count(*), sum(length(v)) FROM kv;"
echo "$sql" | "$bin/reanimator" record -o sqlite.rtr -- sqlite3 app.db
ls -l sqlite.rtr
echo "== reanimator dump: the calls that touched app.db (first 8)"
"$bin/reanimator" dump -s 48 sqlite.rtr > sqlite.txt
grep -E '^#[0-9]+ .* [a-z0-9_]+\(.*app\.db' sqlite.txt | grep -v execve | head -n 8 || true
echo "== reanimator stats: the calls about app.db, and a picture of them"
"$bin/reanimator" stats sqlite.rtr --path 'app.db*' --histograms 2 \
    --svg "$picture" --force
echo "== reanimator replay into an empty directory: every call executed or"
echo "   emulated, results and data verified, final files compared"
mkdir replay-root
"$bin/reanimator" replay sqlite.rtr --root replay-root --timings replay-times.rtr
echo "replayed database: $(ls -l "replay-root$work/app.db")"
cmp "$work/app.db" "replay-root$work/app.db" && echo "identical to the recorded run's app.db, byte for byte"
echo "== reanimator fidelity: the replay's response times and concurrency against the recording's"
"$bin/reanimator" fidelity sqlite.rtr replay-times.rtr --calls 5
echo "== a recorder killed with SIGKILL mid-run (the command inserts a row every 0.5 s)"
"$bin/reanimator" record -o killed.rtr -- sh -c \
    'for i in $(seq 1 8); do echo "INSERT INTO kv VALUES(1000+$i, \"late\");" | sqlite3 app.db; sleep 0.5; done' &
recorder=$!
sleep 2.5
kill -KILL "$recorder"
wait "$recorder" 2>/dev/null || true
if "$bin/reanimator" dump --no-data killed.rtr > /dev/null; then
    echo "quickstart: an unfinished trace was not reported" >&2; exit 1
fi
echo "== reanimator recover: keeps everything up to the recorder's last flush"
"$bin/reanimator" recover killed.rtr
runs=$("$bin/reanimator" dump --no-data killed.recovered.rtr | grep -c 'execve("/usr/bin/sqlite3"' || true)
echo "sqlite3 runs recorded before the kill and kept: $runs"
echo "quickstart: OK"
