#!/usr/bin/env python3
"""Throughput and memory of `reanimator stats` and `reanimator export`.

Two traces are recorded once with `reanimator record`:
  storm  dd if=/dev/zero of=/dev/null bs=1 count=2500000: 5 M tiny calls,
         the worst case per byte of trace (every event costs decoding);
  data   db_bench fillrandom: RocksDB writing its files, mostly buffer data.
Then each command runs --rounds times on each trace (the page cache warm);
the table shows the median wall time, events/s, MB/s of trace file and the
largest peak RSS (getrusage of the child). Targets (issue #6): stats at
least 5 M events/s, export at least 200 MB/s of trace, RSS under 512 MiB.

Usage: bench/analysis.py [--rounds N] [--dbnum N] [--json FILE]
Run through bench/analysis.sh, which installs what it needs and builds.
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


def timed(argv):
    """Runs argv; returns (wall seconds, peak RSS in MiB)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} failed:\n{err}")
    return wall, usage.ru_maxrss / 1024


def record(trace, argv, cwd):
    subprocess.run([REANIMATOR, "record", "-o", trace, "--"] + argv, cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = subprocess.run([REANIMATOR, "stats", "--json", trace], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["totals"]["calls"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dbnum", type=int, default=300000, help="db_bench --num")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="reanimator-analysis-bench-")
    try:
        traces = {}
        storm = os.path.join(work, "storm.rtr")
        n = record(storm, ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=2500000"], work)
        traces["storm"] = (storm, n)
        data = os.path.join(work, "data.rtr")
        os.makedirs(os.path.join(work, "db"))
        n = record(data, ["db_bench", "--benchmarks=fillrandom", f"--num={args.dbnum}",
                          "--value_size=400", "--compression_type=none", "--threads=1",
                          f"--db={os.path.join(work, 'db')}"], work)
        traces["data"] = (data, n)
        out = os.path.join(work, "out")
        commands = {
            "stats": lambda t: [REANIMATOR, "stats", t],
            "stats --by path": lambda t: [REANIMATOR, "stats", "--by", "path", t],
            "export parquet": lambda t: [REANIMATOR, "export", t, "-o", out, "--force"],
            "export csv": lambda t: [REANIMATOR, "export", t, "--format", "csv", "-o", out,
                                     "--force"],
        }
        results = []
        print(f"{'trace':<6} {'events':>10} {'MB':>8}  {'command':<16} {'seconds':>8} "
              f"{'events/s':>12} {'MB/s':>8} {'peak RSS':>9}")
        for name, (trace, events) in traces.items():
            mb = os.path.getsize(trace) / 1e6
            for cmd, argv in commands.items():
                walls, rss = [], 0.0
                for _ in range(args.rounds):
                    w, r = timed(argv(trace))
                    walls.append(w)
                    rss = max(rss, r)
                wall = statistics.median(walls)
                row = {"trace": name, "events": events, "trace_mb": round(mb, 1),
                       "command": cmd, "seconds": round(wall, 3),
                       "events_per_s": round(events / wall), "mb_per_s": round(mb / wall, 1),
                       "peak_rss_mib": round(rss, 1)}
                results.append(row)
                print(f"{name:<6} {events:>10} {mb:>8.1f}  {cmd:<16} {wall:>8.2f} "
                      f"{events / wall:>12,.0f} {mb / wall:>8.1f} {rss:>6.0f} MiB", flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
