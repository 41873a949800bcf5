#!/usr/bin/env bash
# Installs the benchmark workloads' programs that are missing (strace,
# db_bench from rocksdb-tools, sqlite3, postgresql, fio) and builds reanimator in release
# mode. Sourced by record.sh and replay.sh.
missing=()
command -v strace >/dev/null || missing+=(strace)
command -v db_bench >/dev/null || missing+=(rocksdb-tools)
command -v sqlite3 >/dev/null || missing+=(sqlite3)
ls /usr/lib/postgresql/*/bin/pgbench >/dev/null 2>&1 || missing+=(postgresql)
command -v fio >/dev/null || missing+=(fio)
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
fi
cargo build --release --quiet -p reanimator-cli
