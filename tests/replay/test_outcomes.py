"""Each cell outcome, produced by a real situation: sessions recorded by the real run loop
(the mock agent and the stand-in claude binary as real processes), graded by the real
grading, diffed against the real staged tree."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from evalkit import write

from benchtape.core.model import Action
from benchtape.recorder.bench_run import record_bench
from benchtape.recorder.runner import RunOptions
from benchtape.replay.grading import GradingContext, build_checks, grade_stored, new_grading
from benchtape.replay.outcomes import (
    ADAPTER_ERROR,
    FAILED,
    GUARD_VIOLATION,
    INFRASTRUCTURE_ERROR,
    NO_CHANGES,
    OUTCOMES,
    PASSED,
    PATCH_APPLY_FAILED,
    REUSABLE,
    TIMEOUT,
    Outcome,
    agent_diff,
    decide,
    is_reusable,
)
from benchtape.sandbox.treediff import WorkspaceDiff, read_tree
from benchtape.spec.bench import load_bench
from benchtape.spec.cells import unstarted_actions
from benchtape.store.database import Store

FAKE_CLAUDE = Path(__file__).resolve().parents[1] / "bin" / "fake-claude"
CALC = "def add(a, b):\n    return a - b\n"
FIX = {"tool": "Edit", "input": {"file_path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}}
BENCH = """
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
    mock: {{steps: [{fix}, {{say: done}}]}}
  - name: wrong
    prompt: fix add
    mock: {{steps: [{{tool: Edit, input: {{file_path: calc.py, old_string: "return a - b", new_string: "return a * b"}}}}, {{say: done}}]}}
  - name: idle
    prompt: fix add
  - name: cheats
    prompt: fix add
    mock: {{steps: [{{tool: Write, input: {{file_path: test_calc.py, content: "pass"}}}}, {fix}]}}
  - name: slow
    prompt: fix add
    timeout: 1s
    mock: {{steps: [{{sleep: 20}}]}}
  - name: crashes
    prompt: "!ERROR! fix add"
  - name: garbled
    prompt: fix add
    sandbox: {{level: home, env: {{FAKE_TRANSCRIPT: "{garbage}"}}}}
  - name: answers-wrongly
    prompt: "What does add return? Change no file."
    options: {{disableDefaultChecks: true}}
    checks: [{{type: contains, value: "the sum"}}]
    mock: {{steps: [{{say: "the difference"}}]}}
  - name: idle-but-checked-by-calls
    prompt: fix add
    options: {{disableDefaultChecks: true}}
    checks: [{{type: "session:tool-used", value: "action:edit"}}]
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> dict[str, tuple]:
    """Run every scenario once and grade it: scenario → (session, stored verdicts, bench scenario)."""
    root = tmp_path_factory.mktemp("outcomes")
    write(root / "calc" / "calc.py", CALC)
    write(root / "calc" / "test_calc.py", "import calc\n")
    garbage = write(root / "garbage.txt", "this is not\nstream-json at all\n")
    bench_path = write(root / "bench.yaml", BENCH.format(fix=_flow(FIX), garbage=garbage))
    bench = load_bench(bench_path)
    store = Store(root / "db.sqlite")
    records = record_bench(store, bench, RunOptions(harness="mock", concurrency=2, scenarios=[s.name for s in bench.scenarios if s.name != "garbled"]))
    claude = load_bench(bench_path)
    claude.harness_config = {"binary": str(FAKE_CLAUDE)}
    records += record_bench(store, claude, RunOptions(harness="claude-code", scenarios=["garbled"]))
    out = {}
    for record in records:
        sc = record.scenario
        grading = new_grading(store, "live", {sc.name: sc.checks}, bench_path=str(bench.path))
        session, _ = grade_stored(store, grading, record.session_id, build_checks(sc.checks), GradingContext(bench_dir=bench.dir))
        verdicts = store.verdicts(grading_id=grading, session_id=record.session_id)
        diff = agent_diff(store, session, read_tree(root / "calc"))
        out[sc.name] = (session, verdicts, diff, sc)
    return out


def _flow(step: dict) -> str:
    inp = ", ".join(f'{k}: "{v}"' for k, v in step["input"].items())
    return f"{{tool: {step['tool']}, input: {{{inp}}}}}"


def outcome_of(recorded, name: str) -> Outcome:
    session, verdicts, diff, sc = recorded[name]
    return decide(session, verdicts, diff, sc.protected_paths)


def test_passed(recorded):
    got = outcome_of(recorded, "fixes")
    assert got.outcome == PASSED and got.passed and got.reusable
    diff = recorded["fixes"][2]
    assert [c.path for c in diff.changes] == ["calc.py"] and (diff.lines_added, diff.lines_removed) == (1, 1)


def test_failed_names_the_failing_check(recorded):
    got = outcome_of(recorded, "wrong")
    assert got.outcome == FAILED and got.reusable and not got.passed
    assert got.reason.startswith("checks[0] (exec) failed")


def test_no_changes_when_the_agent_changed_nothing(recorded):
    got = outcome_of(recorded, "idle")
    assert got.outcome == NO_CHANGES and recorded["idle"][2].empty and got.reusable


def test_a_wrong_answer_with_no_change_asked_for_is_failed_not_no_changes(recorded):
    """A question scenario (its agent told to change nothing) whose answer check failed read
    `no_changes` in compare's grid, hiding the failed answer (cachetools, newcomer pass): its
    failing checks read only the answer, so it failed. A failing check of the calls, the files
    or the workspace keeps `no_changes`."""
    got = outcome_of(recorded, "answers-wrongly")
    assert recorded["answers-wrongly"][2].empty and got.outcome == FAILED and "contains" in got.reason, got
    assert outcome_of(recorded, "idle-but-checked-by-calls").outcome == NO_CHANGES


def test_guard_violation_even_when_the_checks_pass(recorded):
    session, verdicts, diff, sc = recorded["cheats"]
    assert [v["status"] for v in verdicts] == ["PASS"]
    got = outcome_of(recorded, "cheats")
    assert got.outcome == GUARD_VIOLATION and "test_calc.py" in got.reason and got.reusable


def test_timeout_is_attempted_not_reused(recorded):
    got = outcome_of(recorded, "slow")
    assert got.outcome == TIMEOUT and not got.reusable and "timed out after 1s" in got.reason


def test_a_crashing_harness_is_an_adapter_error(recorded):
    got = outcome_of(recorded, "crashes")
    assert got.outcome == ADAPTER_ERROR and not got.reusable and "exited with code 1" in got.reason


def test_output_nothing_could_parse_is_an_adapter_error(recorded):
    session = recorded["garbled"][0]
    assert session.status == "ok" and len(session.warnings) == 2
    got = outcome_of(recorded, "garbled")
    assert got.outcome == ADAPTER_ERROR and "none of the harness's output could be parsed" in got.reason


def test_an_engine_that_is_down_is_an_infrastructure_error(tmp_path, monkeypatch):
    """The container sandbox cannot open when no engine answers: the run loop records the
    attempt (benchtape.spec.cells.unstarted_actions), and its outcome is infrastructure_error."""
    from benchtape.sandbox.container import ContainerError, connect

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    with pytest.raises(ContainerError) as info:
        connect()
    store = Store(tmp_path / "db.sqlite")
    run = store.new_run("evaluation")
    sid = store.new_session(run, "fixes", cell_id="c" * 64)
    store.append(sid, unstarted_actions({"scenario": "fixes", "harness": "mock", "sandbox": "container"}, "engine", str(info.value)))
    got = decide(store.load_session(sid), [], None)
    assert got.outcome == INFRASTRUCTURE_ERROR and got.reason.startswith("engine: no Docker engine answers") and not got.reusable


def test_a_session_that_never_finished_is_an_infrastructure_error(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    sid = store.new_session(store.new_run("evaluation"), "t")
    store.append(sid, [Action("session.started", {"scenario": "t"}), Action("message.assistant", {"text": "working"})])
    assert decide(store.load_session(sid), [], WorkspaceDiff()).outcome == INFRASTRUCTURE_ERROR


def test_patch_apply_failed_is_decided_by_a_hidden_verifier_verdict(recorded):
    session, verdicts, diff, sc = recorded["fixes"]
    verifier = {"check_path": "checks[1]", "type": "exec", "status": "FAIL", "readout": False, "reason": "tests.patch does not apply", "evidence": {"patch_apply_failed": True}}
    got = decide(session, [*verdicts, verifier], diff, sc.protected_paths)
    assert got.outcome == PATCH_APPLY_FAILED and got.reusable and "tests.patch does not apply" in got.reason


def test_the_taxonomy(recorded):
    assert OUTCOMES == ("passed", "failed", "patch_apply_failed", "guard_violation", "no_changes", "timeout", "adapter_error", "infrastructure_error")
    assert [o for o in OUTCOMES if is_reusable(o)] == list(REUSABLE)
    assert outcome_of(recorded, "fixes").outcome == PASSED and recorded["fixes"][2].summary()["files"] == 1
    with pytest.raises(ValueError):
        Outcome("reused", "")


def test_harness_state_files_are_not_the_agents_change(tmp_path):
    from benchtape.sandbox.treediff import diff_trees

    diff = diff_trees({"a.py": b"x\n"}, {"a.py": b"x\n", ".claude.json": b"{}", ".claude/projects/p/s.jsonl": b"{}\n"})
    assert not diff.empty
    assert diff.without([".claude.json", ".claude/projects/**"]).empty
    assert os.path.basename(FAKE_CLAUDE) == "fake-claude"
