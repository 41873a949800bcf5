#!/usr/bin/env bash
# MariaDB + sysbench, side by side in one run: the whole life of a server
# (mariadb-install-db, mariadbd with its default io_uring, sysbench
# oltp_read_write prepare and 300 events in 2 threads, shutdown), run
# vanilla, recorded with each back end, and each trace replayed, in
# alternating rounds. Prints wall seconds per round. Needs root (the eBPF
# back end), mariadb-server and sysbench (scripts/install-deps.sh).
#
# Usage: bench/mariadb.sh [ROUNDS]   (REANIMATOR=path overrides the binary)
set -euo pipefail
rounds=${1:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
R=${REANIMATOR:-$here/target/release/reanimator}
work=$(mktemp -d /var/tmp/reanimator-mariadb.XXXXXX)
trap 'rm -rf "$work"' EXIT
cat > "$work/maria.sh" <<'SCRIPT'
set -e
mariadb-install-db --no-defaults --datadir=$PWD/data --user=root --auth-root-authentication-method=normal > /dev/null 2>&1
mariadbd --no-defaults --datadir=$PWD/data --socket=$PWD/sock --skip-networking --user=root --log-error=$PWD/err.log --innodb-buffer-pool-size=32M --innodb-log-file-size=16M &
srv=$!
trap 'kill -KILL $srv 2> /dev/null' EXIT
for i in $(seq 300); do mariadb-admin --socket=$PWD/sock -uroot ping > /dev/null 2>&1 && break; sleep 0.1; done
mariadb --socket=$PWD/sock -uroot -e "create database sbtest"
sb="sysbench oltp_read_write --db-driver=mysql --mysql-socket=$PWD/sock --mysql-user=root --tables=2 --table-size=2000"
$sb prepare > /dev/null
$sb --threads=2 --events=300 --time=0 run > /dev/null
mariadb-admin --socket=$PWD/sock -uroot shutdown
wait $srv
trap - EXIT
SCRIPT
cd "$work"
clean() { rm -rf data sock err.log root; }
secs() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc; }
echo "| round | vanilla | record ptrace | record ebpf | replay (ptrace trace) | replay (ebpf trace) |"
echo "|---|---|---|---|---|---|"
for round in $(seq "$rounds"); do
    clean; v=$(secs sh maria.sh)
    clean; p=$(secs "$R" record --force --backend ptrace -o p.rnm -- sh maria.sh)
    clean; b=$(secs "$R" record --force --backend ebpf -o e.rnm -- sh maria.sh)
    clean; rp=$(secs "$R" replay p.rnm --root root)
    clean; re=$(secs "$R" replay e.rnm --root root)
    echo "| $round | $v | $p | $b | $rp | $re |"
done
clean
"$R" replay e.rnm --root root 2>&1 | tail -1
