"""A cell's outcome belongs to the grading that decided it (the `outcomes` table), never to the
session's recorded stream: a regrade leaves every recorded action as it was, and the outcomes
older stores appended as `cell.outcome` actions read as the outcomes of their gradings."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest
from evalkit import write
from storekit import benchtape, store_at_schema

from benchtape.core.model import Action
from benchtape.store.database import Store

CALC = "def add(a, b):\n    return a - b\n"
BENCH = """
description: outcomes belong to gradings
harness: mock
defaults: {sandbox: home, interactive: false, timeout: 30s}
scenarios:
  - name: fix-add
    prompt: "make add() return the sum"
    testdata: calc
    checks:
      - {type: exec, args: {cmd: [python3, -c, "import calc; assert calc.add(2, 3) == 5"]}}
    mock: {steps: [{tool: Edit, input: {file_path: calc.py, old_string: "return a - b", new_string: "return a + b"}}, {say: done}]}
"""
EVALUATION = """
apiVersion: benchtape/v1alpha1
kind: Evaluation
attempts: 1
tools:
  - tool: mock
    model: scripted
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write(root / "calc" / "calc.py", CALC)
    write(root / "madbench.yaml", BENCH)
    write(root / ".benchtape" / "evaluations" / "one.yaml", EVALUATION)
    return root


def run(project: Path) -> None:
    out = benchtape("run", "one", "--yes", cwd=project, env={"XDG_CONFIG_HOME": str(project / "xdg")}, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def recorded(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT session_id, seq, at, thread, kind, data FROM actions ORDER BY session_id, seq").fetchall()


def test_regrading_an_evaluation_twice_leaves_the_recorded_actions_as_they_were(project):
    db = project / ".benchtape" / "benchtape.db"
    run(project)
    before = recorded(db)
    (sid,) = {r[0] for r in before}
    shown = orjson.loads(benchtape("show", sid, "--db", db, "--json").stdout)
    run(project)  # the measured cell is re-graded, not re-run
    run(project)
    assert recorded(db) == before
    again = orjson.loads(benchtape("show", sid, "--db", db, "--json").stdout)
    assert again["actions"] == shown["actions"] and again["session"] == shown["session"]
    assert not [a for a in again["actions"] if a["kind"] == "cell.outcome"]
    store = Store(db, readonly=True)
    outcomes = store.outcomes([sid])[sid]
    gradings = [g["id"] for g in store.gradings()]
    assert [o["grading_id"] for o in outcomes] == gradings and len(gradings) == 3  # one per grading: live, then two regrades
    assert {o["outcome"] for o in outcomes} == {"passed"} and outcomes[0]["diff"]["paths"] == ["calc.py"]
    assert again["outcome"]["grading_id"] == gradings[-1] and shown["outcome"]["grading_id"] == gradings[0]  # the grading's part of the document
    query = benchtape("query", "outcome.outcome", "--session", sid, "--db", db)
    assert query.returncode == 0 and "passed" in query.stdout, query.stderr


def legacy(at: float, **data) -> tuple:
    return (at, orjson.dumps({"outcome": "failed", "reason": f"at {at}", **data}).decode())


def test_outcomes_an_older_store_appended_read_as_the_outcomes_of_their_gradings(tmp_path):
    path = tmp_path / "old.db"
    db = store_at_schema(path, 15)  # before outcomes had their table (migration 16)
    db.execute("INSERT INTO runs (id, kind, started_at) VALUES ('r1', 'evaluation', 0)")
    db.execute("INSERT INTO sessions (id, run_id, scenario, started_at) VALUES ('root', 'r1', 't', 0)")
    db.execute("INSERT INTO sessions (id, run_id, scenario, started_at, parent_session) VALUES ('step2', 'r1', 't', 0, 'root')")
    for gid, at in (("g1", 10.0), ("g2", 20.0), ("g3", 30.0)):
        db.execute("INSERT INTO gradings (id, source, created_at) VALUES (?, 'live', ?)", [gid, at])
        db.execute("INSERT INTO grading_runs (run_id, created_at, grading_id) VALUES ('r1', ?, ?)", [at, gid])
    for gid in ("g1", "g2"):  # a workflow's verdicts are its last step's; g3 graded nothing of it
        db.execute("INSERT INTO verdict_sets (grading_id, session_id, first_check, created_at, verdicts) VALUES (?, 'step2', 'checks[0]', 0, '[]')", [gid])
    rows = [
        (1, 1.0, "session.started", '{"scenario": "t"}'),
        (2, *legacy(12.0, grading_id="g1", diff={"files": 1})),  # carries its grading
        (3, *legacy(13.0, grading_id=None)),  # an execution failure: decided before any check ran
        (4, *legacy(25.0)),  # carries none: the newest grading before it that graded the measurement
        (5, *legacy(31.0)),  # g3 is newer but graded nothing of it: still g2
        (6, *legacy(5.0)),  # before any grading: none
    ]
    for seq, at, kind, data in [(r[0], r[1], r[2], r[3]) if len(r) == 4 else (r[0], r[1], "cell.outcome", r[2]) for r in rows]:
        db.execute("INSERT INTO actions (session_id, seq, at, thread, kind, data) VALUES ('root', ?, ?, 'main', ?, ?)", [seq, at, kind, data])
    db.conn.commit()
    db.conn.close()
    before = recorded(path)

    store = Store(path)  # migrates: nothing of the stream is rewritten
    assert recorded(path) == before
    found = store.outcomes(["root"])["root"]
    assert [(o["grading_id"], o["reason"], o["action_seq"]) for o in found] == [(None, "at 5.0", 6), ("g1", "at 12.0", 2), (None, "at 13.0", 3), ("g2", "at 25.0", 4), ("g2", "at 31.0", 5)]
    assert found[1]["diff"] == {"files": 1}
    store.add_outcome("g3", "root", "passed", "graded again")
    latest = store.latest_outcomes(["root", "step2"])
    assert set(latest) == {"root"} and (latest["root"]["outcome"], latest["root"]["grading_id"]) == ("passed", "g3")
    assert recorded(path) == before
    with pytest.raises(ValueError, match="never appended"):  # the kind stays readable, never written again
        store.append("root", [Action("cell.outcome", {"outcome": "passed", "reason": "x"})])
    assert recorded(path) == before


def test_a_grading_decides_a_sessions_outcome_once_and_no_connection_rewrites_it(tmp_path):
    store = Store(tmp_path / "s.db")
    sid = store.new_session(store.new_run("evaluation"), "t")
    gid = store.new_grading("live", checkset_sha256="x", catalog_version="1")
    store.add_outcome(gid, sid, "failed", "a check failed", {"cost_usd": None})
    store.add_outcome(None, sid, "timeout", "exceeded its time limit")
    for grading in (gid, None):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            store.add_outcome(grading, sid, "passed", "a second opinion")
    conn = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    for sql in ("UPDATE outcomes SET outcome = 'passed'", "DELETE FROM outcomes", "INSERT OR REPLACE INTO outcomes (rowid, grading_id, session_id, created_at, outcome, reason, data) SELECT rowid, 'other', session_id, 0, 'passed', '', '{}' FROM outcomes LIMIT 1"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute(sql)
    assert [(o["grading_id"], o["outcome"]) for o in store.outcomes([sid])[sid]] == [(gid, "failed"), (None, "timeout")]


def test_a_regrade_killed_before_its_verdicts_are_written_leaves_no_outcome_of_its_grading(project, monkeypatch):
    """A regrade stores each cell's outcome with that cell's verdicts, in one transaction: one
    killed after the outcome and before the verdicts' batch left its grading with outcomes for
    sessions it holds no verdict of (`compare` and `query outcome` read the new checks'
    outcome, `sessions` and `show` the old checks' verdicts; `gradings` said 0 sessions)."""
    from benchtape.replay.regrade import regrade
    from benchtape.replay.select import Selection
    from benchtape.spec.bench import load_bench

    db = project / ".benchtape" / "benchtape.db"
    run(project)
    store = Store(db)
    (sid,) = {r[0] for r in recorded(db)}

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # the process dies here: nothing after this point is written

    monkeypatch.setattr(store, "add_verdicts_many", killed)
    with pytest.raises(KeyboardInterrupt):
        regrade(store, load_bench(project / "madbench.yaml"), Selection(all=True))
    monkeypatch.undo()
    with sqlite3.connect(db) as c:
        (grading,) = c.execute("SELECT id FROM gradings WHERE source = 'regrade'").fetchone()
        held = c.execute("SELECT session_id FROM outcomes WHERE grading_id = ?", (grading,)).fetchall()
        verdicts = c.execute("SELECT session_id FROM verdict_sets WHERE grading_id = ?", (grading,)).fetchall()
    assert held == verdicts == [], (held, verdicts)
    assert Store(db, readonly=True).latest_outcomes([sid])[sid]["grading_id"] != grading
