#!/usr/bin/env python3
"""How well a trace's order of writes matches the order their bytes landed
in a file written through one shared offset (bench/shared-offset-ab.sh's
workload: lines "a1".."a2000" and "b1".."b2000" echoed by two shells into
one `> log`). Counts adjacent pairs of writes that two orderings put the
other way round from the file: sequence ids (entry order) and record
order (completion order, what replay follows).

Usage: bench/shared-offset-order.py BIN TRACE LOG
  e.g. cd W && BIN record --backend ebpf -o t.rtr -- bash lines.sh
       bench/shared-offset-order.py BIN W/t.rtr W/log
"""
import re
import subprocess
import sys

if len(sys.argv) != 4 or sys.argv[1] in ("-h", "--help"):
    print(__doc__.strip())
    sys.exit(2)
binary, trace, log = sys.argv[1:]
dump = subprocess.run([binary, "dump", trace], capture_output=True, text=True, check=True).stdout
write = re.compile(r'^#(\d+) \S+ \[\d+/\d+\] write\(1, "([ab]\d+)\\n", \d+\) = \d+ ')
calls = {}
for position, line in enumerate(dump.splitlines()):
    m = write.match(line)
    if m:
        calls[m.group(2)] = (int(m.group(1)), position)
with open(log) as f:
    landed = [line.strip() for line in f]
where = {text: i for i, text in enumerate(landed)}
names = [t for t in landed if t in calls]


def inversions(key):
    order = sorted(names, key=key)
    return sum(1 for x, y in zip(order, order[1:]) if where[x] > where[y])


print(f"writes {len(names)}, entry-order inversions {inversions(lambda t: calls[t][0])}, "
      f"completion-order inversions {inversions(lambda t: calls[t][1])}")
