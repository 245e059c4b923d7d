"""Concurrent writers on one store: N processes (2 threads each) create one new store at the same
moment and record sessions into it (a line and its actions per transaction, a snapshot blob, a
session.finished and a grading), then the store is checked: lock errors, sessions lost,
integrity. Target: 0 lock errors and 0 lost sessions at 8 writers.

Run by `make bench`; `--root DIR` measures another checkout (e.g. an older release) the same way.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORKER = r"""
import sys, threading, time, traceback
sys.path.insert(0, sys.argv[4])
from benchtape.core.model import Action
from benchtape.core.results import Result
from benchtape.store.database import Store

path, worker, start, sessions, lines = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[5]), int(sys.argv[6])
while time.time() < start:
    time.sleep(0.001)
errors = []
try:
    store = Store(path)
    run = store.new_run("run")
except Exception as exc:
    print(f"ERROR open: {type(exc).__name__}: {exc}")
    sys.exit(1)
done = []

def record(thread):
    for s in range(sessions):
        try:
            sid = store.new_session(run, f"w{worker}")
            store.append(sid, [Action("session.started", {"scenario": "w"})])
            for i in range(1, lines + 1):
                text = '{"worker": %d, "line": %d}' % (worker, i)
                actions = [Action("message.assistant", {"text": "x" * 200})]
                if hasattr(store, "append_line"):
                    store.append_line(sid, i, text, actions)
                else:
                    store.append_raw(sid, [(i, text)])
                    store.append(sid, actions)
            store.put_blob(f"snapshot {worker} {thread} {s}".encode())
            store.append(sid, [Action("session.finished", {"status": "ok"})])
            gid = store.new_grading("live", checkset_sha256="c", catalog_version="1")
            store.add_verdicts(gid, sid, [{"check_path": "checks[0]", "type": "contains", "spec": {"type": "contains"}, "spec_sha256": "h", "result": Result.of(True)}])
            done.append(sid)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")

threads = [threading.Thread(target=record, args=(t,)) for t in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
for e in errors:
    print("ERROR", e)
print("DONE", len(done))
"""


def trial(root: Path, writers: int, sessions: int, lines: int) -> dict[str, float]:
    tmp = Path(tempfile.mkdtemp(prefix="benchtape-conc-"))
    try:
        db = tmp / "shared.db"
        start = time.time() + 2.0
        procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(db), str(n), str(start), str(root), str(sessions), str(lines)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in range(writers)]
        outs = [p.communicate(timeout=600) for p in procs]
        elapsed = time.time() - start
        text = "\n".join(o + e for o, e in outs)
        lock_errors = text.count("locked") + text.count("already exists")
        died = sum(p.returncode != 0 for p in procs)
        expected = writers * 2 * sessions
        complete = 0
        integrity = "missing"
        if db.exists():
            con = sqlite3.connect(db)
            integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
            finished = con.execute("SELECT COUNT(DISTINCT session_id) FROM actions WHERE kind = 'session.finished'").fetchone()[0]
            graded = con.execute("SELECT COUNT(DISTINCT session_id) FROM verdicts").fetchone()[0]
            complete = min(finished, graded)
            con.close()
        return {"lock_errors": lock_errors, "died": died, "lost": expected - complete, "expected": expected, "integrity": integrity, "seconds": elapsed, "lines_per_s": expected * lines / elapsed}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--sessions", type=int, default=5, help="per thread (2 threads per process)")
    ap.add_argument("--lines", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--root", type=Path, default=ROOT)
    args = ap.parse_args()
    results = [trial(args.root, args.writers, args.sessions, args.lines) for _ in range(args.rounds)]
    locks = sum(r["lock_errors"] for r in results)
    lost = sum(r["lost"] for r in results)
    expected = sum(r["expected"] for r in results)
    died = sum(r["died"] for r in results)
    rate = sorted(r["lines_per_s"] for r in results)[len(results) // 2]
    ok = locks == 0 and lost == 0 and all(r["integrity"] == "ok" for r in results)
    print(f"concurrent writers: {args.writers} processes × 2 threads on one new store, {args.rounds} rounds, {expected} sessions of {args.lines} lines")
    print(f"  lock errors {locks}, processes died {died}, sessions lost {lost} of {expected}, integrity {', '.join(sorted({r['integrity'] for r in results}))} (target 0 / 0) {'OK' if ok else 'MISSED'}")
    print(f"  recorded {rate:,.0f} lines/s across all writers (median round; each line committed with its actions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
