"""A program to attach to: two threads writing as fast as they can for
DURATION seconds (argv[1], default 4): the main thread inserts rows into a
SQLite database (committing every 10) and appends a line per row to a log
it opened at start; the other appends counters to its own file, opening
it anew each time. Used by bench/attach.sh."""
import sqlite3
import sys
import threading
import time

stop = time.time() + float(sys.argv[1] if len(sys.argv) > 1 else 4)
db = sqlite3.connect("app.db", check_same_thread=False)
db.execute("create table if not exists t(a, b)")
db.commit()
log = open("app.log", "a")


def counter():
    i = 0
    while time.time() < stop:
        with open("counter.txt", "a") as f:
            f.write("%d\n" % i)
        i += 1


threading.Thread(target=counter).start()
i = 0
while time.time() < stop:
    db.execute("insert into t values(?, ?)", (i, "x" * (i % 100)))
    if i % 10 == 0:
        db.commit()
    log.write("row %d\n" % i)
    log.flush()
    i += 1
db.commit()
