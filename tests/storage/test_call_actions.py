"""A store recorded before calls carried their canonical action (schema 18) is read with the
actions derived on read: its history is not rewritten (the stored rows keep what they said),
the calls view shows NULL for what it never recorded, and the query document, the projection
and an `action:` check see the derived action."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import sqlite_utils

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from realdatakit import REALDATA  # noqa: E402

from benchtape.adapters.transcripts import read_transcript
from benchtape.checks import build
from benchtape.checks.registry import CheckContext
from benchtape.core.results import CheckSpec
from benchtape.store.database import Store
from benchtape.store.migrations import MIGRATIONS

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = "codex-exec-json/agentcmd__stream-output-4__cli-0.46.0.jsonl"  # a real codex exec capture: `bash -lc 'cat test.js'`


def _old_store(path: Path) -> list[dict]:
    """The capture as benchtape before migration 19 stored it: the same actions, no canonical fields."""
    db = sqlite_utils.Database(path)
    for step in MIGRATIONS[:18]:
        step(db)
    db.execute("PRAGMA user_version = 18")
    db.execute("INSERT INTO runs (id, kind, started_at) VALUES ('r1', 'run', 0)")
    db.execute("INSERT INTO sessions (id, run_id, scenario, harness, started_at) VALUES ('s1', 'r1', 'sc', 'codex', 0)")
    rows = [{"kind": "session.started", "data": {"scenario": "sc", "harness": "codex", "work_dir": "/private/tmp/codex-research-test", "prompt": "p"}}]
    for a in read_transcript(REALDATA / CAPTURE).actions:
        data = dict(a.data)
        for key in ("action", "files", "command"):
            data.pop(key, None)
        rows.append({"kind": a.kind, "data": data, "thread": a.thread})
    for seq, row in enumerate(rows, 1):
        db.execute("INSERT INTO actions (session_id, seq, at, thread, kind, data) VALUES ('s1', ?, 0, ?, ?, ?)", [seq, row.get("thread", "main"), row["kind"], json.dumps(row["data"])])
    db.conn.commit()
    db.conn.close()
    return rows


def test_an_old_store_reads_canonical_actions_derived_on_read(tmp_path):
    path = tmp_path / "old.db"
    rows = _old_store(path)
    before = sqlite3.connect(path).execute("SELECT seq, data FROM actions ORDER BY seq").fetchall()
    store = Store(path)  # migrates to the current schema
    session = store.load_session("s1")
    got = [(c.tool, c.action, c.paths) for c in session.calls]
    assert ("command_execution", "read", ["test.js"]) in got
    view = store.db.execute("SELECT tool, action, paths, command FROM calls WHERE session_id = 's1'").fetchall()
    assert view and all(action is None and paths is None and command is None for _, action, paths, command in view)  # never recorded: not made up in SQL
    store.db.conn.close()
    assert sqlite3.connect(path).execute("SELECT seq, data FROM actions ORDER BY seq").fetchall() == before  # history as it was
    assert len(before) == len(rows)

    result = build(CheckSpec(type="session:file-read", value="test.js")).evaluate(session, CheckContext())
    assert result.passed, result.reason
    out = subprocess.run([sys.executable, "-m", "benchtape", "query", "calls[].[tool, action]", "--all", "--db", str(path)], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert [json.loads(line)["result"] for line in out.stdout.splitlines()] == [[["command_execution", "read"]]], out.stdout


def test_a_new_store_shows_the_recorded_action_in_the_calls_view(tmp_path):
    store = Store(tmp_path / "new.db")
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    cols = [r[1] for r in store.db.execute("PRAGMA table_info(calls)").fetchall()]
    assert {"action", "paths", "files", "command"} <= set(cols), cols
