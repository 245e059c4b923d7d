"""What a setup can ask of a cell, run for real: `pre` commands whose effects enter the cell
identity (and whose uncapturable effects make it never reused), workflows whose steps share
one sandbox and a handover folder, and `require_env` refused before anything starts."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest
from cli import benchtape
from evalkit import write

CALC = "def add(a, b):\n    return a - b\n"
FIX = '{tool: Edit, input: {file_path: calc.py, old_string: "return a - b", new_string: "return a + b"}}'
HANDOVER = """{tool: Bash, input: {command: 'if [ -f "$BENCHTAPE_HANDOVER/plan.md" ]; then cat "$BENCHTAPE_HANDOVER/plan.md"; else echo "turn - into +" > "$BENCHTAPE_HANDOVER/plan.md"; fi'}}"""
BENCH = f"""
description: setups
harness: mock
defaults: {{sandbox: home, interactive: false, timeout: 30s}}
defaultScenario:
  testdata: calc
  checks:
    - {{type: exec, args: {{cmd: [python3, -c, "import calc; assert calc.add(2, 3) == 5"]}}}}
scenarios:
  - name: fix
    prompt: fix add
    mock: {{steps: [{HANDOVER}, {FIX}, {{say: done}}], metrics: {{cost_usd: 0.01, tokens_in: 100, tokens_out: 10}}}}
  - name: fix-unmetered
    prompt: fix add
    mock: {{steps: [{HANDOVER}, {FIX}, {{say: done}}]}}
  - name: crash
    prompt: "!ERROR! fix add"
"""
TOOLS = """
apiVersion: benchtape/v1alpha1
kind: Tool
tool: agent
extends: mock
models:
  paid: {id: claude-sonnet-4-6, effort: [low]}
options:
  token:
    default: none
    values:
      none: {}
      secret: {env: {AGENT_MODE: secret}, require_env: {AGENT_TOKEN_FOR_TEST: "ask the test for one"}}
"""
WORKFLOW = """
apiVersion: benchtape/v1alpha1
kind: Workflow
tool: plan-fix
type: workflow
steps:
  - {name: plan, tool: agent, model: paid, prompt: "Plan: {prompt}. Write notes to {handover}/plan.md; the code is in {workdir}."}
  - {name: build, tool: agent, model: paid}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write(root / "calc" / "calc.py", CALC)
    write(root / "calc" / "CLAUDE.md", "house rules\n")
    write(root / "madbench.yaml", BENCH)
    write(root / ".benchtape" / "tools" / "agent.yaml", TOOLS)
    write(root / ".benchtape" / "tools" / "plan-fix.yaml", WORKFLOW)
    return root


def evaluation(project: Path, name: str, body: str) -> None:
    write(project / ".benchtape" / "evaluations" / f"{name}.yaml", "apiVersion: benchtape/v1alpha1\nkind: Evaluation\n" + body)


def rows(project: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(project / ".benchtape" / "benchtape.db") as c:
        return c.execute(sql).fetchall()


def test_a_workflow_runs_its_steps_in_one_sandbox_with_a_handover_and_sums_their_cost(project):
    evaluation(project, "wf", "tools:\n  - tool: plan-fix\n")
    out = benchtape("run", "wf", "--yes", cwd=project)
    assert out.returncode == 1, out.stdout + out.stderr  # the crashing task is an execution failure
    sessions = rows(project, "SELECT id, scenario, parent_session, json_extract(params, '$.step'), json_extract(params, '$.step_index') FROM sessions ORDER BY id")
    by_task: dict[str, list[tuple]] = {}
    for s in sessions:
        by_task.setdefault(s[1], []).append(s)
    first, second = by_task["fix"]
    assert (first[2], first[3], second[2], second[3], second[4]) == (None, "plan", first[0], "build", 1)  # later steps name the first
    assert [s[3] for s in by_task["crash"]] == ["plan"]  # stopped at the first failing step

    prompts = dict(rows(project, f"SELECT session_id, json_extract(data, '$.prompt') FROM actions WHERE kind = 'session.started' AND session_id IN ('{first[0]}', '{second[0]}')"))
    assert prompts[second[0]] == "fix add"  # a step without a prompt gets the task's
    plan_prompt = prompts[first[0]]
    assert plan_prompt.startswith("Plan: fix add. Write notes to /") and "/benchtape-handover/plan.md" in plan_prompt and "{workdir}" not in plan_prompt
    handovers = rows(project, "SELECT session_id, json_extract(data, '$.step'), json_extract(data, '$.files') FROM actions WHERE kind = 'handover.snapshot' ORDER BY session_id")
    assert [(h[1], h[2]) for h in handovers if h[0] in (first[0], second[0])] == [("plan", 1), ("build", 1)]
    read_back = rows(project, f"SELECT json_extract(data, '$.output') FROM actions WHERE session_id = '{second[0]}' AND kind = 'tool.result' ORDER BY seq LIMIT 1")
    assert read_back[0][0].strip() == "turn - into +"  # the build step read the plan step's notes

    outcomes = {task: orjson.loads(data) for task, data in rows(project, "SELECT s.scenario, json_set(o.data, '$.outcome', o.outcome, '$.reason', o.reason, '$.grading_id', o.grading_id) FROM sessions s JOIN outcomes o ON o.session_id = s.id")}
    assert outcomes["fix"]["outcome"] == "passed" and outcomes["fix"]["diff"]["paths"] == ["calc.py"]  # the handover is not in the graded tree
    assert outcomes["fix"]["cost_usd"] == pytest.approx(0.02) and [s["name"] for s in outcomes["fix"]["steps"]] == ["plan", "build"]
    assert outcomes["fix-unmetered"]["cost_usd"] is None  # a step of unknown cost makes the cell's unknown, never a partial sum
    assert outcomes["crash"]["outcome"] == "adapter_error"
    compared = orjson.loads(benchtape("compare", "wf", "--json", cwd=project).stdout)
    row = (compared["ranked"] or compared["unranked"])[0]
    assert row["unpriced_cells"] == 1 and row["cost_total"] == pytest.approx(0.02)


PRE_BODY = """tools:
  - tool: agent
    model: paid
    options: {{agents_md: none}}
    pre: ["{pre}"]
"""


def test_pre_effects_enter_the_identity_and_the_baseline_and_a_measured_cell_is_reused(project):
    evaluation(project, "pre", PRE_BODY.format(pre="echo staged > {workdir}/NOTES.md"))
    out = benchtape("run", "pre", "--task", "fix", "--yes", cwd=project)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "were run once per task in a scratch sandbox" in out.stdout
    (started,) = [orjson.loads(d) for (d,) in rows(project, "SELECT data FROM actions WHERE kind = 'session.started'")]
    changes = dict(started["cell"]["pre_effects"]["changes"])
    assert set(changes) == {"NOTES.md", "CLAUDE.md"} and changes["CLAUDE.md"] is None  # the option's removal and the block's file
    assert [r["command"] for r in started["cell"]["pre"]] == ["echo staged > {workdir}/NOTES.md", "rm -f {workdir}/CLAUDE.md {workdir}/AGENTS.md"]
    (outcome,) = [orjson.loads(d) for (d,) in rows(project, "SELECT json_set(o.data, '$.outcome', o.outcome, '$.reason', o.reason, '$.grading_id', o.grading_id) FROM outcomes o")]
    assert outcome["outcome"] == "passed" and outcome["diff"]["paths"] == ["calc.py"]  # what pre did is the baseline, not the agent's change
    again = benchtape("run", "pre", "--task", "fix", "--yes", cwd=project)
    assert "0 session(s) started, 0 cell(s) measured now, 1 re-graded" in again.stdout, again.stdout + again.stderr


def test_pre_that_writes_outside_the_workspace_is_never_reused(project):
    evaluation(project, "outside", PRE_BODY.format(pre="echo x > {workdir}/../escaped.txt"))
    assert benchtape("run", "outside", "--task", "fix", "--yes", cwd=project).returncode == 0
    (params,) = [orjson.loads(p) for (p,) in rows(project, "SELECT params FROM sessions")]
    assert params["reusable"] is False
    (started,) = [orjson.loads(d) for (d,) in rows(project, "SELECT data FROM actions WHERE kind = 'session.started'")]
    assert "wrote outside the workspace: escaped.txt" in started["cell"]["pre_effects"]["uncapturable"]
    preview = orjson.loads(benchtape("run", "outside", "--task", "fix", "--dry-run", "--json", cwd=project).stdout)
    assert (preview["measured"], preview["to_run"], preview["setups"][0]["never_reusable"]) == (0, 1, 1)  # measured once, still to run


def test_a_failing_pre_command_is_an_infrastructure_error(project):
    evaluation(project, "broken", PRE_BODY.format(pre="echo no network here >&2; exit 7"))
    # the preview ran it in a scratch sandbox and saw it fail: it says so before any spend (it said "1 never reusable" alone)
    dry = benchtape("run", "broken", "--task", "fix", "--dry-run", cwd=project)
    assert "1 never reusable: setup command `echo no network here >&2; exit 7` exited with code 7" in " ".join(dry.stdout.split()), dry.stdout
    out = benchtape("run", "broken", "--task", "fix", "--yes", cwd=project)
    assert out.returncode == 1
    (outcome,) = [orjson.loads(d) for (d,) in rows(project, "SELECT json_set(o.data, '$.outcome', o.outcome, '$.reason', o.reason, '$.grading_id', o.grading_id) FROM outcomes o")]
    assert outcome["outcome"] == "infrastructure_error"
    assert outcome["reason"].startswith("staging: setup command `echo no network here >&2; exit 7` exited with code 7: no network here")


def test_require_env_is_refused_before_anything_starts(project, tmp_path):
    evaluation(project, "secret", "tools:\n  - tool: agent\n    model: paid\n    options: {token: [none, secret]}\n")
    out = benchtape("run", "secret", "--yes", cwd=project, env={"AGENT_TOKEN_FOR_TEST": ""})
    assert out.returncode == 3, out.stdout + out.stderr
    assert "needs $AGENT_TOKEN_FOR_TEST in the environment (ask the test for one)" in out.stderr
    assert not (project / ".benchtape" / "benchtape.db").exists()
    out = benchtape("run", "secret", "--task", "fix", "--yes", cwd=project, env={"AGENT_TOKEN_FOR_TEST": "t0k3n"})
    assert out.returncode == 0, out.stdout + out.stderr
    modes = rows(project, "SELECT json_extract(params, '$.arm') FROM sessions")
    assert len(set(modes)) == 2  # both values of the option ran, as two setups
