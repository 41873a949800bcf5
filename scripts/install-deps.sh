#!/usr/bin/env bash
# Installs what reanimator needs on a fresh Debian 12 machine of this kind,
# as root, without prompting. Safe to run again. The Rust toolchain
# (stable, via rustup) must already be present.
set -euo pipefail
need_apt=()
for pkg in build-essential pkg-config clang libelf-dev zlib1g-dev bpftool zstd sqlite3 git tar fio rocksdb-tools xfsprogs btrfs-progs postgresql mariadb-server sysbench postmark; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
done
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "install-deps: missing Debian packages ${need_apt[*]}; run as root to install them" >&2
        exit 1
    fi
    echo "install-deps: installing ${need_apt[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
# The export test reads Parquet with the Python packages data people use.
if ! python3 -c "import duckdb, pyarrow" >/dev/null 2>&1; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
    fi
    echo "install-deps: installing the Python packages duckdb and pyarrow" >&2
    # Debian's own python3 refuses root pip installs without this (PEP 668).
    PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore \
        python3 -m pip install --quiet --no-input duckdb pyarrow
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "install-deps: cargo not found; install Rust stable with rustup first" >&2
    exit 1
fi
