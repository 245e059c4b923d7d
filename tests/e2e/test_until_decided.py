"""`benchtape run NAME --until-decided`, for real: the mock agent in home sandboxes, the store
on disk. Two setups that differ on every task (one has its file removed before the agent
starts) are told apart after 8 tasks of 12, in rounds recorded in the store; a run stopped
by --max-cells resumes where it stood and says why it stopped."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest
from cli import benchtape
from evalkit import CALC, write

TASKS = 12
BENCH = "description: rounds\nharness: mock\ndefaults: {sandbox: home, interactive: false, timeout: 30s}\nscenarios:\n" + "".join(
    f"  - name: t{i:02d}\n    prompt: 'make add() return the sum ({i})'\n    testdata: calc\n"
    "    checks:\n      - {type: exec, args: {cmd: [python3, -c, 'import calc; assert calc.add(2, 3) == 5']}}\n"
    "    mock: {steps: [{tool: Edit, input: {file_path: calc.py, old_string: 'return a - b', new_string: 'return a + b'}}, {say: done}]}\n"
    for i in range(TASKS)
)
MOCK = """
apiVersion: benchtape/v1alpha1
kind: Tool
tool: mock
extends: builtin
options:
  sabotage:
    default: "off"
    values:
      "off": {}
      "on": {pre: ["rm -f {workdir}/calc.py"]}
"""
EVALUATION = """
apiVersion: benchtape/v1alpha1
kind: Evaluation
attempts: 1
tools:
  - {tool: mock, model: scripted, options: {sabotage: ["off", "on"]}}
"""


def project(root: Path) -> Path:
    write(root / "calc" / "calc.py", CALC)
    write(root / "madbench.yaml", BENCH)
    write(root / ".benchtape" / "tools" / "mock.yaml", MOCK)
    write(root / ".benchtape" / "evaluations" / "e.yaml", EVALUATION)
    return root


def run(root: Path, *args: str):
    return benchtape("run", "e", *args, cwd=root, env={"XDG_CONFIG_HOME": str(root / "xdg")}, timeout=600)


def rounds(root: Path) -> list[dict]:
    with sqlite3.connect(root / ".benchtape" / "benchtape.db") as c:
        rows = [orjson.loads(p) for (p,) in c.execute("SELECT params FROM runs ORDER BY started_at")]
    return [p["round"] for p in rows if "round" in p]


def test_a_clear_difference_stops_early_in_recorded_rounds(tmp_path):
    root = project(tmp_path / "proj")
    preview = run(root, "--until-decided", "--round", "2", "--dry-run", "--detect", "30pp")
    assert preview.returncode == 0, preview.stderr
    assert "plan: 12 task(s) × 1 attempt(s) detect a difference of" in preview.stdout and "to detect 30%" in preview.stdout
    assert "--until-decided: rounds of 2 task(s)" in preview.stdout
    done = run(root, "--until-decided", "--round", "2", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    doc = orjson.loads(done.stdout)
    assert doc["decided"] and doc["stopped"].startswith("decided")
    # E reaches 1/α = 20 at 7 discordant tasks: four rounds of two tasks, 16 cells of the fixed 24
    assert doc["cells_run"] == 16 and doc["fixed_design_cells"] == 24 and doc["cells_run"] <= doc["fixed_design_cells"] * 2 / 3
    recorded = rounds(root)
    assert [r["number"] for r in recorded] == [1, 2, 3, 4] and all(len(ts) == 2 for r in recorded for ts in r["tasks"].values())
    assert recorded[-1]["before"]["decided"] is False
    again = run(root, "--until-decided", "--yes", "--json")  # nothing left to decide: runs nothing
    assert orjson.loads(again.stdout)["cells_run"] == 0 and len(rounds(root)) == 4
    compared = benchtape("compare", "e", "--json", cwd=root, env={"XDG_CONFIG_HOME": str(root / "xdg")})
    found = orjson.loads(compared.stdout)
    assert found["sequential"]["decided"] is True and len(found["rounds"]) == 4
    # ranked over the 8 tasks both measured, told apart by the always-valid test (p = 1/E)
    assert [r["rank"] for r in found["ranked"]] == [1, 2] and found["tasks_not_in_ranking"] == 4
    assert found["pairs"][0]["test"] == "e-value" and found["pairs"][0]["distinguishable"]
    assert found["stopped"] == doc["stopped"]  # compare says why it stopped, as the run did, from what the store holds
    text = benchtape("compare", "e", "--plain", cwd=root, env={"XDG_CONFIG_HOME": str(root / "xdg")}).stdout
    assert f"stopped: {doc['stopped']}" in text and "plan: 12 task(s) × 1 attempt(s)" in text  # the plan is the evaluation's (12 tasks), as run --dry-run states it
    assert "4 task(s) were not needed: every pair was decided first" in " ".join(text.split())
    # the same runs named by their ids read the same way: in rounds, by the always-valid test
    # (the run ids dropped it, and called a pair decided by a test the rounds' looks invalidate)
    with sqlite3.connect(root / ".benchtape" / "benchtape.db") as c:
        run_ids = [r[0] for r in c.execute("SELECT DISTINCT run_id FROM sessions ORDER BY run_id")]
    by_ids = orjson.loads(benchtape("compare", *run_ids, "--json", cwd=root, env={"XDG_CONFIG_HOME": str(root / "xdg")}).stdout)
    assert len(by_ids["rounds"]) == 4 and by_ids["pairs"][0]["test"] == "e-value" and by_ids["pairs"] == found["pairs"], (by_ids["pairs"], found["pairs"])
    # and the preview and `evaluation validate` plan with the test compare uses (they planned the fixed design's)
    previewed = orjson.loads(run(root, "--dry-run", "--json").stdout)["plan"]
    validated = orjson.loads(benchtape("evaluation", "validate", "e", "--json", cwd=root, env={"XDG_CONFIG_HOME": str(root / "xdg")}).stdout)["plan"]
    assert previewed == validated == found["plan"], (previewed, validated, found["plan"])


def test_max_cells_stops_and_the_next_run_resumes(tmp_path):
    root = project(tmp_path / "proj")
    first = run(root, "--until-decided", "--round", "2", "--max-cells", "8", "--yes")
    assert first.returncode == 0, first.stderr
    assert "stopped: max cells: 8 of --max-cells 8 run" in first.stdout
    assert [r["number"] for r in rounds(root)] == [1, 2] and rounds(root)[-1]["limits"] == {"max_cells": 8, "budget": None}
    halfway = orjson.loads(benchtape("compare", "e", "--json", cwd=root, env={"XDG_CONFIG_HOME": str(root / "xdg")}).stdout)
    assert halfway["stopped"].startswith("not decided: 1 neighbouring pair(s) undecided") and "its limit (--max-cells 8)" in halfway["stopped"]
    said = " ".join(benchtape("compare", "e", "--plain", cwd=root, env={"XDG_CONFIG_HOME": str(root / "xdg")}).stdout.split())
    assert "task(s) were not measured by every setup before the rounds stopped" in said and "were not needed" not in said  # the limit stopped them, not a decision
    second = run(root, "--until-decided", "--round", "2", "--yes", "--json")
    doc = orjson.loads(second.stdout)
    assert doc["decided"] and [r["number"] for r in doc["rounds"]] == [3, 4] and doc["cells_run"] == 8


@pytest.mark.parametrize("args, message", [(["--max-cells", "3"], "--max-cells limits a run in rounds"), (["--round", "3"], "--round sizes a run in rounds"), (["--until-decided", "--budget", "lots"], "is not an amount in USD")])
def test_bad_limits_are_refused_with_the_fix(tmp_path, args, message):
    root = project(tmp_path / "proj")
    out = run(root, *args, "--yes")
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_a_control_listed_to_run_is_said_not_to_run_in_rounds(tmp_path):
    """The preview listed the no-op control "to run 16", the rounds never ran it, and compare then
    said it was not measured, unexplained (more-itertools, newcomer pass): the preview says so."""
    root = project(tmp_path / "proj")
    write(root / ".benchtape" / "evaluations" / "e.yaml", EVALUATION + "  - {tool: mock, model: noop}\n")
    preview = run(root, "--until-decided", "--round", "2", "--dry-run")
    said = " ".join((preview.stdout + preview.stderr).split())
    assert preview.returncode == 0 and "controls are not run in rounds (mock@latest noop): run them with `benchtape run e --yes`" in said, said
    assert "controls are not run in rounds" not in " ".join(run(root, "--dry-run").stdout.split())  # a fixed design runs them
