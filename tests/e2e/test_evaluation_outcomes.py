"""Every outcome of an evaluation cell, produced by `benchtape run EVALUATION` from a real
situation: an agent that fixes, one that breaks, one that does nothing (empty diff), one
that touches a protected path, one that runs out of time, a harness that crashes, staging
that fails, and an engine that is down. The execution failures are attempted, never
reused: the next invocation measures them again and re-grades only the verdicts.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import orjson
import pytest
from cli import benchtape
from evalkit import write

CALC = "def add(a, b):\n    return a - b\n"
FIX = '{tool: Edit, input: {file_path: calc.py, old_string: "return a - b", new_string: "return a + b"}}'
BENCH = f"""
description: outcomes
harness: mock
defaults: {{sandbox: home, interactive: false, timeout: 30s}}
defaultScenario:
  testdata: calc
  protected_paths: [test_calc.py]
  checks:
    - {{type: exec, args: {{cmd: [python3, -c, "import calc; assert calc.add(2, 3) == 5"]}}}}
scenarios:
  - name: fixes
    prompt: fix add
    mock: {{steps: [{FIX}, {{say: done}}]}}
  - name: breaks
    prompt: fix add
    mock: {{steps: [{{tool: Edit, input: {{file_path: calc.py, old_string: "return a - b", new_string: "return a * b"}}}}, {{say: done}}]}}
  - name: idles
    prompt: fix add
    mock: {{steps: [{{say: "I would rather not"}}]}}
  - name: cheats
    prompt: fix add
    mock: {{steps: [{{tool: Write, input: {{file_path: test_calc.py, content: "pass"}}}}, {FIX}]}}
  - name: dawdles
    prompt: fix add
    timeout: 1s
    mock: {{steps: [{{sleep: 30}}]}}
  - name: crashes
    prompt: "!ERROR! fix add"
  - name: unstaged
    prompt: fix add
    setup: broken-setup.sh
"""
EVALUATION = """
apiVersion: benchtape/v1alpha1
kind: Evaluation
tools:
  - tool: mock
    model: scripted
"""
EXPECTED = {
    "fixes": "passed",
    "breaks": "failed",
    "idles": "no_changes",
    "cheats": "guard_violation",
    "dawdles": "timeout",
    "crashes": "adapter_error",
    "unstaged": "infrastructure_error",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write(root / "calc" / "calc.py", CALC)
    write(root / "calc" / "test_calc.py", "import calc\n")
    write(root / "madbench.yaml", BENCH)
    setup = write(root / "broken-setup.sh", "#!/bin/sh\necho 'cannot fetch the fixtures' >&2\nexit 1\n")
    setup.chmod(0o755)
    write(root / ".benchtape" / "evaluations" / "outcomes.yaml", EVALUATION)
    return root


def outcomes(project: Path) -> dict[str, list[dict]]:
    """Task → every outcome its gradings decided, oldest first."""
    out: dict[str, list[dict]] = {}
    with sqlite3.connect(project / ".benchtape" / "benchtape.db") as c:
        for task, data in c.execute("SELECT s.scenario, json_set(o.data, '$.outcome', o.outcome, '$.reason', o.reason, '$.grading_id', o.grading_id) FROM sessions s JOIN outcomes o ON o.session_id = s.id ORDER BY s.id, o.created_at"):
            out.setdefault(task, []).append(orjson.loads(data))
    return out


def test_each_outcome_from_a_real_situation_and_only_verdicts_are_reused(project):
    first = benchtape("run", "outcomes", "--yes", cwd=project, timeout=300)
    assert first.returncode == 1, first.stdout + first.stderr  # execution failures: attempted, not measured
    got = outcomes(project)
    assert {task: found[-1]["outcome"] for task, found in got.items()} == EXPECTED
    assert "test_calc.py" in got["cheats"][-1]["reason"]
    assert got["unstaged"][-1]["reason"].startswith("staging:") and "cannot fetch the fixtures" in got["unstaged"][-1]["reason"]
    assert got["fixes"][-1]["diff"] == {"files": 1, "lines_added": 1, "lines_removed": 1, "paths": ["calc.py"]}
    assert got["idles"][-1]["diff"]["files"] == 0
    assert "3 cell(s) ended in an execution failure" in first.stdout

    preview = orjson.loads(benchtape("run", "outcomes", "--dry-run", "--json", cwd=project).stdout)
    assert (preview["measured"], preview["to_run"]) == (4, 3)
    assert preview["setups"][0]["attempted_before"] == 3
    second = benchtape("run", "outcomes", "--yes", cwd=project, timeout=300)
    assert "3 session(s) started, 0 cell(s) measured now, 4 re-graded" in second.stdout, second.stdout + second.stderr
    again = outcomes(project)
    assert {task: len(found) for task, found in again.items()} == dict.fromkeys(EXPECTED, 2)
    assert {task: found[-1]["outcome"] for task, found in again.items()} == EXPECTED
    assert all(found[-1]["source"] == "regrade" for task, found in again.items() if EXPECTED[task] in ("passed", "failed", "no_changes", "guard_violation"))


def test_an_engine_that_is_down_stops_the_run_before_anything_starts(project, tmp_path):
    out = benchtape("run", "outcomes", "--task", "fixes", "--sandbox", "container", "--yes", cwd=project, env={"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"})
    assert out.returncode == 3, out.stdout + out.stderr
    assert "needs a running Docker engine" in out.stderr and "nothing was run" in out.stderr
    assert not (project / ".benchtape" / "benchtape.db").exists() or outcomes(project) == {}


def test_an_engine_that_goes_down_after_preflight_makes_infrastructure_errors(project, tmp_path, monkeypatch):
    """Preflight saw an engine; by the time the cells run there is none. Each cell is on record
    as an attempt that never started (cause: engine), never as the agent's failure."""
    from benchtape.app.evaluation_run import EvaluationRequest, Planned, run_planned
    from benchtape.recorder.matrix import Matrix, Staging
    from benchtape.recorder.toolversions import VersionResolver
    from benchtape.replay.evaluate import StoredCells
    from benchtape.spec.evaluation import load_evaluation
    from benchtape.spec.pricing import load_pricing
    from benchtape.store.database import Store

    monkeypatch.chdir(project)
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    ev = load_evaluation("outcomes", project)
    tasks = ev.select(["fixes", "breaks"])
    matrix = Matrix(ev, tasks, VersionResolver(), Staging(), level="container")
    plans = matrix.plan()
    assert {p.problem.cause for p in plans} == {"engine"}
    store = Store(project / "db.sqlite")
    done = run_planned(Planned(ev, tasks, matrix, plans, StoredCells(), fresh=False), store, EvaluationRequest("outcomes", sandbox="container"), load_pricing(project))
    assert done.started_sessions == 2 and dict(done.outcomes["mock@latest scripted"]) == {"infrastructure_error": 2}
    for (data,) in store.db.execute("SELECT json_set(o.data, '$.outcome', o.outcome, '$.reason', o.reason, '$.grading_id', o.grading_id) FROM outcomes o"):
        outcome = orjson.loads(data)
        assert outcome["outcome"] == "infrastructure_error" and outcome["reason"].startswith("engine: the task's image could not be resolved")
        assert "no Docker engine answers" in outcome["reason"]


@pytest.mark.xdist_group("docker")
def test_a_cell_in_a_container_records_its_image_digest(project):
    ok, why = _engine()
    if not ok:
        pytest.skip(why)
    out = benchtape("run", "outcomes", "--task", "fixes", "--sandbox", "container", "--yes", cwd=project, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert outcomes(project)["fixes"][-1]["outcome"] == "passed"
    preview = orjson.loads(benchtape("run", "outcomes", "--task", "fixes", "--sandbox", "container", "--dry-run", "--json", cwd=project).stdout)
    assert (preview["measured"], preview["to_run"]) == (1, 0)  # the same image digest: the same cell
    home = orjson.loads(benchtape("run", "outcomes", "--task", "fixes", "--dry-run", "--json", cwd=project).stdout)
    assert (home["measured"], home["to_run"]) == (0, 1)  # another sandbox level is another cell


@pytest.mark.xdist_group("docker")
def test_pre_effects_in_a_container_are_audited_outside_the_workspace(project):
    ok, why = _engine()
    if not ok:
        pytest.skip(why)
    write(project / ".benchtape" / "evaluations" / "pre.yaml", EVALUATION + '    pre: ["echo hi > {workdir}/NOTES.md"]\n  - tool: mock\n    model: scripted\n    pre: ["echo hi > /etc/escaped"]\n')
    out = benchtape("run", "pre", "--task", "fixes", "--sandbox", "container", "--yes", cwd=project, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    with sqlite3.connect(project / ".benchtape" / "benchtape.db") as c:
        effects = [orjson.loads(e) for (e,) in c.execute("SELECT json_extract(data, '$.cell.pre_effects') FROM actions WHERE kind = 'session.started'")]
    inside, outside = sorted(effects, key=lambda e: "uncapturable" in e)
    assert [path for path, _ in inside["changes"]] == ["NOTES.md"]
    assert "wrote outside the workspace" in outside["uncapturable"] and "/etc/escaped" in outside["uncapturable"]


@pytest.mark.xdist_group("docker")
def test_a_container_killed_under_the_agent_is_an_infrastructure_error(project):
    import subprocess
    import time

    from cli import popen

    from benchtape.sandbox.container import LABEL, connect

    ok, why = _engine()
    if not ok:
        pytest.skip(why)
    write(project / "madbench.yaml", BENCH.replace("timeout: 1s\n    mock: {steps: [{sleep: 30}]}", "timeout: 120s\n    mock: {steps: [{sleep: 60}]}"))
    proc = popen("run", "outcomes", "--task", "dawdles", "--sandbox", "container", "--yes", cwd=project)
    client = connect()
    deadline = time.monotonic() + 120
    mine = []
    while not mine and time.monotonic() < deadline and proc.poll() is None:
        workdir = _workdir(project)  # the session's workspace: the label of its container, and of no other
        if workdir:
            mine = [c for c in client.containers.list(filters={"label": LABEL}, ignore_removed=True) if c.labels.get("benchtape.workspace") == str(Path(workdir).resolve())]
        time.sleep(0.5)
    assert mine, "no sandbox container appeared"
    while time.monotonic() < deadline and not any("mock_agent" in " ".join(p) for p in (mine[0].top().get("Processes") or [])):
        time.sleep(0.2)  # until the agent is running inside it (a fixed sleep loses that race under load)
    subprocess.run(["docker", "kill", mine[0].id], check=True, capture_output=True)
    out, err = proc.communicate(timeout=120)
    got = outcomes(project)["dawdles"][-1]
    assert got["outcome"] == "infrastructure_error", out + err
    assert got["reason"].startswith("sandbox: the sandbox container stopped under the session")


def _engine() -> tuple[bool, str]:
    from benchtape.sandbox.container import available

    ok, why = available()
    if not ok and os.environ.get("CI") == "true":
        pytest.fail(why)
    return ok, why


def _workdir(project: Path) -> str | None:
    db = project / ".benchtape" / "benchtape.db"
    if not db.exists():  # never create it: benchtape does, once there is consent
        return None
    try:
        with sqlite3.connect(db) as c:
            row = c.execute("SELECT workdir FROM sessions").fetchone()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def test_a_regrade_with_a_changed_bench_decides_the_cells_outcomes_again(project):
    """`regrade --bench` over an evaluation's run wrote the new verdicts and no outcome: `sessions`
    showed the new grading while `compare` and `query`'s `outcome` still counted the old one's
    (cachetools, newcomer pass). Now each measured cell's outcome is decided by the new grading,
    with the recording's facts (its diff, a guard violation) carried over."""
    first = benchtape("run", "outcomes", "--yes", cwd=project, timeout=300)
    assert first.returncode == 1, first.stdout + first.stderr
    with sqlite3.connect(project / ".benchtape" / "benchtape.db") as c:
        [(run_id,)] = c.execute("SELECT DISTINCT run_id FROM sessions").fetchall()
    # the check now takes a product too: `breaks` (a * b) passes it, as does `cheats`, whose guard violation stays
    write(project / "lenient.yaml", BENCH.replace("assert calc.add(2, 3) == 5", "assert calc.add(2, 3) in (5, 6)"))
    done = benchtape("regrade", "--bench", "lenient.yaml", "--run", run_id, cwd=project, timeout=300)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    got = outcomes(project)
    latest = {task: found[-1] for task, found in got.items()}
    assert {task: row["outcome"] for task, row in latest.items() if task in ("fixes", "breaks", "idles", "cheats")} == {"fixes": "passed", "breaks": "passed", "idles": "no_changes", "cheats": "guard_violation"}
    assert all(latest[t]["source"] == "regrade" for t in ("fixes", "breaks", "idles", "cheats"))
    assert latest["breaks"]["diff"] == got["breaks"][0]["diff"] and latest["breaks"]["cell_id"] == got["breaks"][0]["cell_id"]  # the recording's facts, carried over
    assert "test_calc.py" in latest["cheats"]["reason"]
    compared = orjson.loads(benchtape("compare", "outcomes", "--json", cwd=project).stdout)
    [setup] = compared["unranked"]
    assert (setup["cells"], setup["passes"]) == (4, 2), setup  # fixes and breaks: the regrade's outcomes, not the run's (1 of 4)
    query = benchtape("query", "outcome.outcome", "--scenario", "breaks", cwd=project)
    assert query.returncode == 0 and '"passed"' in query.stdout, query.stdout + query.stderr
