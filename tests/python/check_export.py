#!/usr/bin/env python3
"""Checks a `reanimator export` against `reanimator stats --json` with the
tools data people use: DuckDB runs the stats query of docs/ANALYSIS.md over
the Parquet files, pyarrow reads the schema and row counts. Counts, errors
and byte totals must be equal; latency quantiles equal when stats reports
them exact, otherwise within stats' documented bound (1/128 of the value).

Usage: check_export.py EXPORT_DIR STATS_JSON ANALYSIS_MD
Exits non-zero with a message on the first difference (or when duckdb or
pyarrow is missing: scripts/install-deps.sh installs them).
"""
import json
import re
import sys

try:
    import duckdb
    import pyarrow.parquet as pq
except ImportError as e:
    sys.exit(f"check_export: {e}; run scripts/install-deps.sh (pip install duckdb pyarrow)")

REL_ERROR = 1 / 128
QUANTILES = [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99_9", 0.999)]


def fail(msg):
    sys.exit(f"check_export: {msg}")


def stats_query(analysis_md):
    """The SQL between <!-- stats-query --> and the end of its code block."""
    text = open(analysis_md, encoding="utf-8").read()
    m = re.search(r"<!-- stats-query -->\s*```sql\n(.*?)```", text, re.S)
    if not m:
        fail(f"{analysis_md}: no ```sql block after <!-- stats-query -->")
    return m.group(1)


def close(ours, exact, theirs, what):
    if theirs is None or ours is None:
        if theirs != ours:
            fail(f"{what}: stats {ours}, DuckDB {theirs}")
        return
    if exact:
        if ours != theirs:
            fail(f"{what}: stats {ours} (exact), DuckDB {theirs}")
    elif abs(ours - theirs) > theirs * REL_ERROR + 1:
        fail(f"{what}: stats {ours}, DuckDB {theirs}: beyond the 1/128 bound")


def main():
    out, stats_json, analysis_md = sys.argv[1:4]
    stats = json.load(open(stats_json))
    events = f"{out}/events.parquet"

    # pyarrow: the files are plain Parquet with the documented types.
    table = pq.read_table(events)
    types = {f.name: str(f.type) for f in table.schema}
    for col, ty in [("seq", "uint64"), ("tgid", "uint32"), ("name", "string"),
                    ("ret", "int64"), ("duration_ns", "uint64"),
                    ("timestamp", "timestamp[us, tz=+00:00]"), ("bytes_read", "uint64")]:
        if types.get(col) != ty:
            fail(f"events.{col} is {types.get(col)}, want {ty}")
    if table.num_rows != stats["totals"]["calls"]:
        fail(f"events has {table.num_rows} rows, stats counts {stats['totals']['calls']} calls")
    data = pq.read_table(f"{out}/data.parquet")
    if data.num_rows != sum(table.column("captures").to_pylist()):
        fail("data rows differ from the events' capture counts")
    procs = pq.read_table(f"{out}/processes.parquet")
    starts = procs.column("event").to_pylist().count("start")
    if starts != stats["threads"]:
        fail(f"processes has {starts} starts, stats counts {stats['threads']} threads")

    # DuckDB: the documented query, per call and in total.
    con = duckdb.connect()
    con.execute(f"CREATE VIEW events AS SELECT * FROM read_parquet('{events}')")
    rows = con.execute(stats_query(analysis_md)).fetchall()
    cols = [d[0] for d in con.description]
    by_name = {r[cols.index("name")]: dict(zip(cols, r)) for r in rows}
    groups = {g["key"]: g for g in stats["groups"]}
    if set(by_name) != set(groups):
        fail(f"calls differ: DuckDB {sorted(by_name)}, stats {sorted(groups)}")
    for name, g in groups.items():
        d = by_name[name]
        for field in ["calls", "errors", "bytes_read", "bytes_written"]:
            if d[field] != g[field]:
                fail(f"{name}.{field}: stats {g[field]}, DuckDB {d[field]}")
        lat = g["latency_ns"]
        for key, _ in QUANTILES:
            close(lat[key], lat["exact"], d[key], f"{name} latency {key}")
        close(lat["max"], True, d["max"], f"{name} latency max")
        for t in (g.get("write_sizes") or {}).get("top", []):
            if t["error"] == 0:
                n = con.execute(
                    "SELECT count(*) FROM events WHERE name = ? AND bytes_written = ?",
                    [name, t["size"]]).fetchall()[0][0]
                if n != t["count"]:
                    fail(f"{name}: {t['count']} writes of {t['size']} B in stats, {n} in DuckDB")

    tot = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE errno <> 0), sum(bytes_read), sum(bytes_written), "
        + ", ".join(f"quantile_disc(duration_ns, {q})" for _, q in QUANTILES)
        + " FROM events").fetchall()[0]
    t = stats["totals"]
    for i, field in enumerate(["calls", "errors", "bytes_read", "bytes_written"]):
        if tot[i] != t[field]:
            fail(f"total {field}: stats {t[field]}, DuckDB {tot[i]}")
    for i, (key, _) in enumerate(QUANTILES):
        close(t["latency_ns"][key], t["latency_ns"]["exact"], tot[4 + i], f"total latency {key}")
    print(f"check_export: {len(groups)} calls, {t['calls']} events, "
          f"{t['bytes_read']} B read, {t['bytes_written']} B written: equal in DuckDB and pyarrow")


if __name__ == "__main__":
    main()
