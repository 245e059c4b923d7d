"""The scripted solver through the real binaries, on real toolz tasks: the task's reference fix,
played by benchtape's scripted model through each harness's own tools (Claude Code 2.1.328's
Read/Edit, Codex 0.169.0's exec_command/apply_patch, Gemini CLI's and Qwen Code's read_file/replace,
opencode's read/edit, mini-swe-agent's bash, aider's SEARCH/REPLACE blocks, the mock's), passes every task cell; the
partial script (only the fix's first edit) fails every one it plays (the mock, Claude Code and
Codex: it is a prefix of the fixing script, whose every edit the other binaries already carry,
and each real launch costs seconds of CPU); and the same script gives the same canonical actions
on every harness (issue 45's scripted solver)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harvest"))
from e2e.cli import benchtape  # noqa: E402
from harvestkit import FIVE, cli_env, validated_toolz  # noqa: E402
from realagents import need  # noqa: E402

TASKS = ["434"]  # several hunks over one file: the edit tools are each asked more than once (one task keeps 11 setups × cells affordable)
EVALUATION = """\
apiVersion: benchtape/v1alpha1
kind: Evaluation
tasks: [434]
tools:
  - tool: mock
    model: [solver, solver-partial]
  - tool: claude-code
    tool_version: "2.1.328"
    model: [solver, solver-partial]
    options: {permission_mode: bypass}
  - tool: codex
    tool_version: "0.169.0"
    model: [solver, solver-partial]
  - tool: gemini-cli
    tool_version: "0.61.0"
    model: [solver]
  - tool: qwen-code
    tool_version: "0.24.4"
    model: [solver]
  - tool: opencode
    tool_version: "1.18.33"
    model: [solver]
  - tool: mini-swe-agent
    model: [solver]
  - tool: aider
    model: [solver]
  - tool: oracle
    model: reference
"""
REAL = ("claude-code", "codex", "gemini-cli", "qwen-code", "opencode", "mini-swe-agent", "aider")
PARTIAL = ("mock", "claude-code", "codex")  # the harnesses the partial script plays through
# the harnesses whose tools carry a Read and an Edit as such (mini-swe-agent has only bash; aider has no tools)
EDITING = ("mock", "claude-code", "codex", "gemini-cli", "qwen-code", "opencode")


def _json(done: Any) -> Any:
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    for tool in REAL:
        need(tool)
    assert set(TASKS) <= set(FIVE)
    repo = validated_toolz(tmp_path_factory.mktemp("solver") / "toolz", FIVE)  # validated once per test run, as three other modules use it
    (repo / ".benchtape" / "evaluations").mkdir(parents=True, exist_ok=True)
    (repo / ".benchtape" / "evaluations" / "solve.yaml").write_text(EVALUATION)
    run = _json(benchtape("run", "solve", "--yes", "--json", cwd=repo, env=cli_env(), timeout=900))
    return {"repo": repo, "run": run}


def test_the_solver_passes_every_task_through_every_real_binary_and_the_partial_script_fails(ran: dict[str, Any]):
    outcomes = ran["run"]["outcomes"]
    solving = {label: counts for label, counts in outcomes.items() if " solver" in label and "partial" not in label}
    partial = {label: counts for label, counts in outcomes.items() if "solver-partial" in label}
    assert len(solving) == 1 + len(REAL) and len(partial) == len(PARTIAL), outcomes
    assert all(counts == {"passed": len(TASKS)} for counts in solving.values()), outcomes
    assert all("passed" not in counts and sum(counts.values()) == len(TASKS) for counts in partial.values()), outcomes


def test_the_same_script_gives_the_same_canonical_actions_on_every_harness(ran: dict[str, Any]):
    for task in TASKS:
        done = benchtape("query", "[session.harness, session.model, calls[].action]", "--scenario", task, cwd=ran["repo"])
        assert done.returncode == 0, done.stderr
        rows = [json.loads(line)["result"] for line in done.stdout.splitlines()]
        by_model: dict[str, set[tuple[str, ...]]] = {}
        for harness, model, actions in rows:
            if harness in EDITING:
                by_model.setdefault(model.replace("mock-", "scripted-"), set()).add(tuple(actions))
        assert {len(harnesses) for harnesses in by_model.values()} == {1}, (task, rows)  # one sequence per script, whatever the harness
        assert len(rows) == 1 + len(REAL) + len(PARTIAL) + 1 and "edit" in next(iter(by_model["scripted-solver"]))[1:3]  # + the oracle's


def test_every_solver_cell_carries_the_fix_byte_for_byte(ran: dict[str, Any]):
    """Each harness's solver cell's patch is the oracle's (the reference fix as written), so
    `compare` names none as uncarried; tomli #103's CRLF file was not carried by two harnesses
    and rewritten by a third, and their cells passed all the same (replay/compare.uncarried)."""
    from benchtape.store.database import Store

    doc = _json(benchtape("compare", "solve", "--json", cwd=ran["repo"]))
    assert doc["uncarried"] == [], doc["uncarried"]
    # not vacuous: the live run's own outcomes name each cell's candidate patch (they named
    # none, so `uncarried` was empty until a regrade; attrs, newcomer pass)
    store = Store(ran["repo"] / ".benchtape" / "benchtape.db", readonly=True)
    try:
        roots = [r.id for r in store.session_rows(run_id=ran["run"]["run_id"]) if r.parent_session is None]
        outcomes = store.latest_outcomes(roots)
    finally:
        store.close()
    graded = [o for o in outcomes.values() if o["outcome"] != "no_changes"]
    assert len(graded) >= len(TASKS) * (1 + len(REAL)) and all(len(o.get("candidate") or "") == 64 for o in graded), outcomes
