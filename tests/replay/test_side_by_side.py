"""One task's sessions of every setup side by side (`compare NAME --sessions TASK`), and the
HTML report of an evaluation run grouped by setup, over cells recorded into a real store."""

from __future__ import annotations

from pathlib import Path

import pytest
from cellkit import record_all
from evalkit import evaluation, make_project

from benchtape.core.errors import BadInput
from benchtape.replay.compare import comparison
from benchtape.replay.html import Entry, render
from benchtape.replay.side_by_side import side_by_side
from benchtape.spec.evaluation import load_evaluation
from benchtape.spec.pricing import load_pricing
from benchtape.store.database import Store

A = "claude-code@latest sonnet-4.6/medium"
B = "codex@latest gpt-5.5/medium"
BLOCKS = """
attempts: 2
tools:
  - {tool: claude-code, model: sonnet-4.6, effort: medium}
  - {tool: codex, model: gpt-5.5, effort: medium}
"""


@pytest.fixture
def recorded(tmp_path: Path):
    project = make_project(tmp_path / "proj")
    evaluation(project, "e", BLOCKS)
    ev = load_evaluation("e", project, user=tmp_path / "user")
    store = Store(tmp_path / "db.sqlite")
    cells = {(label, t.id, n): ("passed" if label == A or n == 1 else "failed") for label in (A, B) for t in ev.tasks() for n in (1, 2)}
    run_id = record_all(store, ev, cells, cost=0.05)
    return project, ev, store, comparison(store, ["e"], load_pricing(project, tmp_path / "user"), project), run_id


def test_a_task_shows_each_setups_attempts_side_by_side(recorded):
    project, ev, store, result, _ = recorded
    task = ev.tasks()[0].id
    doc = side_by_side(store, result, task)
    assert doc["task"] == task
    by_setup = {s["setup"]: s["sessions"] for s in doc["setups"]}
    assert set(by_setup) == {A, B}
    assert [(s["attempt"], s["outcome"]) for s in by_setup[A]] == [(1, "passed"), (2, "passed")]
    assert [(s["attempt"], s["outcome"]) for s in by_setup[B]] == [(1, "passed"), (2, "failed")]
    first = by_setup[B][0]
    assert first["final_output"] == "done" and first["session_id"] in result.matrix[task][next(r.arm for r in result.rows if r.label == B)][0].session_id
    assert set(first["diff"]) == {"none"} or {"modified", "added", "removed"} <= set(first["diff"])


def test_an_unknown_task_is_bad_input_naming_the_closest(recorded):
    _, ev, store, result, _ = recorded
    task = ev.tasks()[0].id
    with pytest.raises(BadInput) as exc:
        side_by_side(store, result, task + "x")
    assert repr(task) in (exc.value.fix or "")


def test_an_evaluation_runs_report_is_grouped_by_setup(recorded):
    _, _, store, _, run_id = recorded
    entries = [Entry.of(store, row, store.load_session(row.id, row)) for row in store.session_rows(run_id=run_id)]
    page = render(store.run(run_id), entries)
    assert "harness</th><td>unknown" not in page
    assert "Summary by setup" in page
    for label in (A, B):
        assert f"<h3 class=\"setup\">{label} (" in page
    assert page.count("<h3 class=\"setup\">") == 2


def test_compare_sessions_from_the_command_line(recorded, tmp_path):
    import os
    import subprocess
    import sys

    import orjson

    project, ev, store, _, _ = recorded
    task = ev.tasks()[0].id
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "user"), "NO_COLOR": "1"}
    out = subprocess.run([sys.executable, "-m", "benchtape", "compare", "e", "--sessions", task, "--json", "--db", str(store.path)], cwd=project, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert {s["setup"] for s in orjson.loads(out.stdout)["setups"]} == {A, B}
    table = subprocess.run([sys.executable, "-m", "benchtape", "compare", "e", "--sessions", task, "--plain", "--db", str(store.path)], cwd=project, env=env, capture_output=True, text=True)
    assert table.returncode == 0 and f"task {task}" in table.stdout and "final output" in table.stdout
