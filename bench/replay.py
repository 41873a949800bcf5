#!/usr/bin/env python3
"""Replay speed against the original run, side by side in one run.

Each workload of bench/record.py is recorded once with `reanimator record`.
Then, interleaved per round: the original program un-traced (vanilla), and
`reanimator replay --timing afap` of its trace into an empty root, with
`--verify full` (the default), with `--verify none`, and with
`--order commute`. Each replay must
be clean (zero mismatches, identical final state) or the benchmark stops.
Cells are medians; ratios are to vanilla. Also printed: replay events/s
and how the replay's wall time splits into preparing the initial state,
replaying calls, and the rest (reading the trace, checking the final
state).

Usage: bench/replay.py [--rounds N] [--only a,b] [--dbnum N] [--json FILE]
Run through bench/replay.sh, which installs what it needs and builds.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record import REANIMATOR, prepare, remove, run_once, workloads  # noqa: E402

SUMMARY = re.compile(
    r"replayed (\d+) calls in ([\d.]+) s .*prepared (\d+) paths \((\d+) bytes\) in ([\d.]+) s; (\d+) mismatches"
    r"; final state: (\d+) paths checked, (\d+) differ")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="a,b,c,d", help="workloads to run, e.g. a,b")
    ap.add_argument("--dbnum", type=int, default=200000, help="db_bench --num")
    ap.add_argument("--json", help="write all measurements here")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="reanimator-replay-bench-", dir="/var/tmp")
    prepare(work)
    wl = workloads(work, args.dbnum)
    root = f"{work}/root"
    configs = {
        "vanilla": None,
        "replay": [],
        "replay --verify none": ["--verify", "none"],
        "replay --order commute": ["--order", "commute"],
    }
    results = {}
    for key in args.only.split(","):
        title, cmd, outputs, stdin = wl[key]
        trace = f"{work}/{key}.rnm"
        remove(outputs)
        _, err = run_once([REANIMATOR, "record", "--force", "-o", trace, "--"] + cmd, stdin)
        recorded = err.strip().splitlines()[-1]
        print(f"  ({key}) {recorded}", file=sys.stderr, flush=True)
        times = {c: [] for c in configs}
        detail = {}
        for r in range(args.rounds):
            for c, extra in configs.items():
                remove(outputs + [root])
                os.sync()
                if extra is None:
                    t, _ = run_once(cmd, stdin)
                else:
                    os.mkdir(root)
                    t, err = run_once([REANIMATOR, "replay", trace, "--root", root] + extra, None)
                    m = SUMMARY.search(err)
                    if not m:
                        sys.exit(f"replay.py: no summary from replay of ({key}):\n{err[-2000:]}")
                    calls, replay_s, paths, pbytes, prep_s, mism, checked, differ = m.groups()
                    if int(mism) or int(differ):
                        sys.exit(f"replay.py: replay of ({key}) is not clean:\n{err[-3000:]}")
                    detail.setdefault(c, []).append({
                        "wall": t, "calls": int(calls), "replay": float(replay_s),
                        "prepare": float(prep_s), "prepared_paths": int(paths),
                        "prepared_bytes": int(pbytes), "paths_checked": int(checked)})
                times[c].append(t)
                print(f"  ({key}) round {r + 1}/{args.rounds} {c}: {t:.2f} s", file=sys.stderr, flush=True)
        med = {c: statistics.median(v) for c, v in times.items()}
        results[key] = {"title": title, "command": cmd, "recorded": recorded,
                        "times": times, "median": med, "detail": detail}
    shutil.rmtree(work, ignore_errors=True)

    cols = list(configs)
    print("\n| workload | " + " | ".join(cols) + " | events | replay events/s |")
    print("|---|" + "---|" * (len(cols) + 2))
    for key, r in results.items():
        med = r["median"]
        van = med["vanilla"]
        cells = [f"{med[c]:.2f} s" + (f" ({med[c] / van:.2f}×)" if c != "vanilla" else "") for c in cols]
        d = r["detail"]["replay"]
        calls = d[0]["calls"]
        rate = calls / statistics.median(x["wall"] for x in d)
        print(f"| ({key}) {r['title']} | " + " | ".join(cells) + f" | {calls} | {rate:,.0f} |")
    print("\nWhere the time of `replay` (verify full) goes, medians:\n")
    print("| workload | wall | prepare initial state | replay calls | rest (read, final check) |")
    print("|---|---|---|---|---|")
    for key, r in results.items():
        d = r["detail"]["replay"]
        wall = statistics.median(x["wall"] for x in d)
        prep = statistics.median(x["prepare"] for x in d)
        rep = statistics.median(x["replay"] for x in d)
        pb = d[0]["prepared_bytes"] / 1e6
        print(f"| ({key}) | {wall:.2f} s | {prep:.2f} s ({d[0]['prepared_paths']} paths, {pb:.1f} MB) "
              f"| {rep:.2f} s | {max(wall - prep - rep, 0):.2f} s |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
