#!/usr/bin/env python3
"""Recording overhead, side by side in one run.

Runs each workload as: vanilla; `strace -f -qq -o FILE` (no buffers);
`strace -f -qq -xx -s 1048576 -o FILE` (full buffers); and
`reanimator record --backend ptrace` (every buffer). Runs are interleaved
(one of each configuration per round) so drift hits all alike; each cell is
the median of the rounds. Prints a Markdown table with ratios to vanilla and
to strace, and writes every measurement as JSON (--json).

Workloads: (a) dd 4 KiB x 100,000 to a file; (b) 4 threads x 50,000 4 KiB
pwrites; (c) RocksDB db_bench fillseq,fillrandom,overwrite,readrandom,readseq;
(d) an sqlite3 script of single-statement transactions, updates and selects;
(e) PostgreSQL's whole life as user postgres: initdb, start, pgbench -i -s 2,
pgbench -c 4 -j 2 -t 300, stop (not in the default set); (f) fio's libaio
engine, direct I/O, queue depth 16, two jobs of 4 KiB random reads and
writes, each over its own 64 MiB file it lays out first, never two
overlapping requests in flight (replay cannot order such a race; not in
the default set); (g) the same through fio's io_uring engine (not in the
default set); (h) a build: `make -j2` of a generated C project of 40
files (not in the default set); (i) metadata only: `du -s`, `find
-newer` and `ls -lR` of /usr/include (not in the default set).

Usage: bench/record.py [--rounds N] [--only a,b] [--dbnum N] [--json FILE]
Run through bench/record.sh, which installs what it needs and builds.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REANIMATOR = os.path.join(ROOT, "target", "release", "reanimator")


def sqlite_script(path, rows=3000):
    """Single-statement transactions (each commits: journal, write, fsync)."""
    with open(path, "w") as f:
        f.write("PRAGMA journal_mode=DELETE;\nCREATE TABLE kv(k INTEGER PRIMARY KEY, v TEXT);\n")
        for i in range(rows):
            f.write(f"INSERT INTO kv VALUES({i}, printf('%0400d', {i}));\n")
        for i in range(0, rows, 3):
            f.write(f"UPDATE kv SET v = upper(v) || 'x' WHERE k = {i};\n")
        for i in range(0, rows, 10):
            f.write(f"SELECT count(*), sum(length(v)) FROM kv WHERE k > {i};\n")


# The shell runs the server and waits for it through its socket, not with
# `pg_ctl -w`, whose polling of postmaster.pid races the postmaster's
# rewrites of it (replay cannot order that; REPLAY.md).
PG_SCRIPT = """set -e
cd "$1"
export PATH="$(ls -d /usr/lib/postgresql/*/bin | tail -1):$PATH"
initdb -D data -A trust -U pg --no-sync > /dev/null
postgres -D data -k "$PWD" -c listen_addresses='' -c shared_buffers=16MB -c max_connections=10 > log 2>&1 &
server=$!
until pg_isready -q -h "$PWD"; do sleep 0.1; done
pgbench -h "$PWD" -U pg -i -s 2 postgres > /dev/null 2>&1
pgbench -h "$PWD" -U pg -c 4 -j 2 -t 300 postgres > /dev/null
kill -INT $server
wait $server
"""


BUILD_FILES = 40


def build_project(path):
    """A C project for (h): BUILD_FILES sources sharing a header, a main
    calling each, and a Makefile compiling each to an object and linking."""
    os.makedirs(path, exist_ok=True)
    names = [f"f{i}" for i in range(BUILD_FILES)]
    with open(f"{path}/common.h", "w") as f:
        f.write("#include <string.h>\n#define K 7\n" + "".join(f"int {n}(int);\n" for n in names))
    for i, n in enumerate(names):
        with open(f"{path}/{n}.c", "w") as f:
            f.write(f'#include "common.h"\n'
                    f"static int table[64];\n"
                    f"int {n}(int x) {{ for (int k = 0; k < 64; k++) table[k] = x * k + {i}; "
                    f"return table[x & 63] + K + (int)strlen(\"{n}\"); }}\n")
    with open(f"{path}/main.c", "w") as f:
        f.write('#include <stdio.h>\n#include "common.h"\nint main(void) { int s = 0;\n'
                + "".join(f"  s += {n}({i});\n" for i, n in enumerate(names))
                + '  printf("%d\\n", s); return 0; }\n')
    objs = " ".join(f"{n}.o" for n in ["main"] + names)
    with open(f"{path}/Makefile", "w") as f:
        f.write(f"OBJS = {objs}\nprog: $(OBJS)\n\tcc -o $@ $(OBJS)\n%.o: %.c common.h\n\tcc -O2 -c $< -o $@\n")


def build_outputs(path):
    return [f"{path}/prog", f"{path}/main.o"] + [f"{path}/f{i}.o" for i in range(BUILD_FILES)]


def prepare(work):
    """Builds and writes what the workloads need in `work`."""
    build_project(f"{work}/build")
    subprocess.run(["cc", "-O2", "-pthread", "-o", f"{work}/mtpwrite", os.path.join(ROOT, "bench/workloads/mtpwrite.c")],
                   check=True)
    sqlite_script(f"{work}/script.sql")
    with open(f"{work}/pg.sh", "w") as f:
        f.write(PG_SCRIPT)
    # (e) runs as postgres: it must reach its directory.
    os.chmod(work, 0o755)
    os.makedirs(f"{work}/pg", exist_ok=True)
    if shutil.which("runuser") and os.path.isdir("/usr/lib/postgresql"):
        shutil.chown(f"{work}/pg", "postgres", "postgres")


def workloads(work, dbnum):
    """name -> (argv, files to remove before each run, stdin file)."""
    mt = os.path.join(work, "mtpwrite")
    sql = os.path.join(work, "script.sql")
    return {
        "a": ("dd 4k x 100k", ["dd", "if=/dev/zero", f"of={work}/dd.out", "bs=4k", "count=100000"],
              [f"{work}/dd.out"], None),
        "b": ("4 threads x 50k pwrite 4k", [mt, f"{work}/mt.out", "4", "50000"], [f"{work}/mt.out"], None),
        "c": (f"db_bench 5 benchmarks, num={dbnum}",
              ["db_bench", "--benchmarks=fillseq,fillrandom,overwrite,readrandom,readseq", f"--num={dbnum}",
               f"--db={work}/db", "--compression_type=none"], [f"{work}/db"], None),
        "d": ("sqlite3 3000 inserts, 1000 updates, 300 selects", ["sqlite3", f"{work}/s.db"],
              [f"{work}/s.db", f"{work}/s.db-journal"], sql),
        "e": ("postgres: initdb, pgbench -i -s 2, pgbench -c 4 -t 300",
              ["runuser", "-u", "postgres", "--", "sh", f"{work}/pg.sh", f"{work}/pg"],
              [f"{work}/pg/data", f"{work}/pg/log"], None),
        "f": ("fio libaio direct, iodepth 16, 2 jobs randrw 4k, 64 MiB",
              ["fio", "--name=aio", "--ioengine=libaio", "--direct=1", "--iodepth=16", "--rw=randrw", "--bs=4k",
               "--size=64m", "--numjobs=2", "--serialize_overlap=1", f"--directory={work}", "--output=/dev/null"],
              [f"{work}/aio.0.0", f"{work}/aio.1.0"], None),
        "g": ("fio io_uring direct, iodepth 16, 2 jobs randrw 4k, 64 MiB",
              ["fio", "--name=uring", "--ioengine=io_uring", "--direct=1", "--iodepth=16", "--rw=randrw", "--bs=4k",
               "--size=64m", "--numjobs=2", "--serialize_overlap=1", f"--directory={work}", "--output=/dev/null"],
              [f"{work}/uring.0.0", f"{work}/uring.1.0"], None),
        "h": (f"make -j2 of a {BUILD_FILES}-file C project", ["make", "-s", "-C", f"{work}/build", "-j2"],
              build_outputs(f"{work}/build"), None),
        # Metadata only: the tools stat, list and read links, never file contents.
        "i": ("du, find -newer and ls -lR of /usr/include",
              ["sh", "-c", "du -s /usr/include; find /usr/include -newer /etc/hostname; ls -lR /usr/include"],
              [], None),
    }


def configs(work):
    out = f"{work}/trace.out"
    return {
        "vanilla": lambda cmd: cmd,
        "strace": lambda cmd: ["strace", "-f", "-qq", "-o", out] + cmd,
        "strace -xx": lambda cmd: ["strace", "-f", "-qq", "-xx", "-s", "1048576", "-o", out] + cmd,
        "reanimator": lambda cmd: [REANIMATOR, "record", "--backend", "ptrace", "--force", "-o", out, "--"] + cmd,
        "reanimator ebpf": lambda cmd: [REANIMATOR, "record", "--backend", "ebpf", "--force", "-o", out, "--"] + cmd,
        # One tracer thread on one CPU (the default is one per CPU).
        "reanimator --cpu 0": lambda cmd: [REANIMATOR, "record", "--backend", "ptrace", "--cpu", "0", "--force", "-o", out, "--"] + cmd,
        # The CPU-placement lever off: the scheduler places tracer and tracees.
        "reanimator --cpu none": lambda cmd: [REANIMATOR, "record", "--backend", "ptrace", "--cpu", "none", "--force", "-o", out, "--"] + cmd,
    }, [out]


def remove(paths):
    for p in paths:
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif os.path.exists(p):
            os.remove(p)


def run_once(argv, stdin_path):
    stdin = open(stdin_path) if stdin_path else subprocess.DEVNULL
    try:
        start = time.monotonic()
        p = subprocess.run(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.monotonic() - start
    finally:
        if stdin_path:
            stdin.close()
    if p.returncode != 0:
        sys.exit(f"record.py: {' '.join(argv)} failed ({p.returncode}): {p.stderr.decode(errors='replace')[-500:]}")
    return elapsed, p.stderr.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="a,b,c,d", help="workloads to run, e.g. a,b")
    ap.add_argument("--dbnum", type=int, default=200000, help="db_bench --num")
    ap.add_argument("--configs", default="vanilla,strace,strace -xx,reanimator,reanimator ebpf",
                    help="comma-separated; also available: 'reanimator --cpu 0', 'reanimator --cpu none'")
    ap.add_argument("--json", help="write all measurements here")
    ap.add_argument("--workdir", help="where workloads write (default: a temporary directory under /var/tmp)")
    args = ap.parse_args()

    work = args.workdir or tempfile.mkdtemp(prefix="reanimator-bench-", dir="/var/tmp")
    prepare(work)
    wl = workloads(work, args.dbnum)
    cfgs, cfg_outputs = configs(work)
    wanted = [c for c in args.configs.split(",") if c]
    results = {}
    for key in args.only.split(","):
        title, cmd, outputs, stdin = wl[key]
        times = {c: [] for c in wanted}
        summaries = []
        for r in range(args.rounds):
            for c in wanted:
                remove(outputs + cfg_outputs)
                os.sync()
                t, err = run_once(cfgs[c](cmd), stdin)
                times[c].append(t)
                if c.startswith("reanimator"):
                    summaries.append(f"{c}: " + (err.strip().splitlines()[-1] if err.strip() else ""))
                print(f"  ({key}) round {r + 1}/{args.rounds} {c}: {t:.2f} s", file=sys.stderr, flush=True)
        med = {c: statistics.median(v) for c, v in times.items()}
        results[key] = {"title": title, "command": cmd, "times": times, "median": med,
                        "reanimator_summary": summaries[-len([c for c in wanted if c.startswith("reanimator")]):]}
    remove([work] if not args.workdir else [])

    cols = wanted
    print(f"\n| workload | " + " | ".join(cols) + " | reanimator / strace | reanimator / strace -xx |")
    print("|---|" + "---|" * (len(cols) + 2))
    for key, r in results.items():
        med = r["median"]
        van = med.get("vanilla")
        cells = []
        for c in cols:
            ratio = f" ({med[c] / van:.1f}×)" if van and c != "vanilla" else ""
            cells.append(f"{med[c]:.2f} s{ratio}")
        rs = f"{med['reanimator'] / med['strace']:.2f}" if "reanimator" in med and "strace" in med else "-"
        rx = f"{med['reanimator'] / med['strace -xx']:.2f}" if "reanimator" in med and "strace -xx" in med else "-"
        print(f"| ({key}) {r['title']} | " + " | ".join(cells) + f" | {rs} | {rx} |")
    for key, r in results.items():
        for line in r["reanimator_summary"] or []:
            print(f"\n({key}) {line}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
