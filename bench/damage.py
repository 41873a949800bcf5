#!/usr/bin/env python3
"""Damaged traces through every command: copies TRACE N times with random
damage (bit flips, a zeroed run, truncation, a duplicated run), runs
dump, stats, replay, export, select and recover on each, and reports any
run that panicked, exited with a status other than 0-2, or did not end
within 60 s (the damaged copy is kept as badN.rtr / hangN.rtr).

Usage: bench/damage.py BIN TRACE N [SEED]
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile


def damage(src, rng):
    b = bytearray(src)
    mode = rng.choice(["flip", "zero", "trunc", "dup"])
    if mode == "flip":
        for _ in range(rng.randint(1, 8)):
            p = rng.randrange(len(b))
            b[p] ^= 1 << rng.randrange(8)
    elif mode == "zero":
        p = rng.randrange(len(b))
        n = min(rng.randint(1, 4096), len(b) - p)
        b[p:p + n] = bytes(n)
    elif mode == "trunc":
        b = b[:rng.randrange(len(b))]
    else:
        p = rng.randrange(len(b))
        b[p:p] = b[p:p + rng.randint(1, 4096)]
    return mode, bytes(b)


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    binary, trace, n = os.path.abspath(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) == 5 else 1)
    src = open(trace, "rb").read()
    work = tempfile.mkdtemp(prefix="reanimator-damage-")
    bad = 0
    try:
        for i in range(n):
            mode, data = damage(src, rng)
            m = os.path.join(work, "m.rtr")
            open(m, "wb").write(data)
            for cmd in (["dump", m], ["stats", m], ["replay", m, "--root", "root"],
                        ["export", m, "-o", "ex"], ["select", m, "-o", "sel.rtr", "--call", "write"],
                        ["recover", m, "-o", "rec.rtr"]):
                for d in ("root", "ex"):
                    shutil.rmtree(os.path.join(work, d), ignore_errors=True)
                for f in ("sel.rtr", "rec.rtr"):
                    if os.path.exists(os.path.join(work, f)):
                        os.remove(os.path.join(work, f))
                try:
                    r = subprocess.run([binary] + cmd, cwd=work, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, timeout=60)
                except subprocess.TimeoutExpired:
                    print(f"HANG copy {i} ({mode}): {cmd[0]}")
                    shutil.copy(m, f"hang{i}.rtr")
                    bad += 1
                    continue
                err = r.stderr.decode(errors="replace")
                if r.returncode not in (0, 1, 2) or "panicked" in err:
                    print(f"BAD copy {i} ({mode}): {cmd[0]} exit {r.returncode}: {err[-300:]}")
                    shutil.copy(m, f"bad{i}.rtr")
                    bad += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{n} damaged copies x 6 commands: {bad} bad")
    sys.exit(1 if bad else 0)


main()
