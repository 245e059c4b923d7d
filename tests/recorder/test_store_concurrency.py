"""Eight real processes (two threads each) create and record into one store that does not exist
yet, all at the same moment: no lock error, no lost session, line or verdict, and the file
passes SQLite's integrity check. (The first release lost sessions to "database is locked" with
four, and failed with "table runs already exists" when several created the store.)"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchtape.store.database import MIGRATIONS, Store

ROOT = Path(__file__).resolve().parents[2]
PROCESSES, THREADS, SESSIONS, LINES = 8, 2, 3, 40

WORKER = """
import sys, threading, time
sys.path.insert(0, sys.argv[4])
from benchtape.core.model import Action
from benchtape.core.results import Result
from benchtape.store.database import Store

path, worker, start = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
SESSIONS, LINES = {sessions}, {lines}
while time.time() < start:
    time.sleep(0.001)
store = Store(path)
run = store.new_run("run", argv=[str(worker)])
done = []

def record(thread):
    for s in range(SESSIONS):
        sid = store.new_session(run, f"w{{worker}}", attempt=thread * SESSIONS + s + 1)
        store.append(sid, [Action("session.started", {{"scenario": f"w{{worker}}"}})])
        for i in range(1, LINES + 1):
            store.append_line(sid, i, '{{"worker": %d, "line": %d}}' % (worker, i), [Action("message.assistant", {{"text": f"{{worker}}-{{thread}}-{{s}}-{{i}}"}})])
        store.put_blob(f"snapshot {{worker}} {{thread}} {{s}}".encode())
        store.append(sid, [Action("session.finished", {{"status": "ok"}})])
        done.append(sid)

threads = [threading.Thread(target=record, args=(t,)) for t in range({threads})]
for t in threads:
    t.start()
for t in threads:
    t.join()
grading = store.new_grading("live", checkset_sha256="c", catalog_version="1", run_id=run)
spec = {{"type": "contains", "value": "x"}}
store.add_verdicts_many(grading, [(sid, [{{"check_path": "checks[0]", "type": "contains", "spec": spec, "spec_sha256": "h", "result": Result.of(True)}}]) for sid in done])
print(len(done))
"""


@pytest.mark.xdist_group("concurrency")
def test_eight_processes_record_into_one_new_store_without_loss(tmp_path):
    path = tmp_path / "shared.db"
    script = WORKER.format(sessions=SESSIONS, lines=LINES, threads=THREADS)
    start = time.time() + 1.5  # every process is up and waiting before the first one opens the store
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), str(n), str(start), str(ROOT)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in range(PROCESSES)]
    outcomes = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outcomes):
        assert p.returncode == 0, err
        assert "locked" not in err and "already exists" not in err
        assert out.strip() == str(THREADS * SESSIONS)

    store = Store(path, readonly=True)
    conn = store.db.conn
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert len(store.runs()) == PROCESSES
    rows = list(store.session_rows())
    assert len(rows) == PROCESSES * THREADS * SESSIONS
    for row in rows:
        worker = int(row.scenario[1:])
        assert store.raw_lines(row.id) == [f'{{"worker": {worker}, "line": {i}}}' for i in range(1, LINES + 1)]
        actions = store.actions(row.id)
        assert [a.seq for a in actions] == list(range(1, LINES + 3))
        assert actions[-1].kind == "session.finished"
        assert [v["status"] for v in store.verdicts(session_id=row.id)] == ["PASS"]
    assert conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == len(rows)
    assert conn.execute("SELECT COUNT(*) FROM specs").fetchone()[0] == 1
