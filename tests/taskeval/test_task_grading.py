"""Grading a task cell on the real toolz history: the agent's workspace is a fresh one-commit
repository (nothing of the original history), and a candidate patch goes through the
pipeline guard → no_changes → fresh verifier: the reference passes, nothing is no_changes,
a change to the hidden tests' folder is a guard violation, a patch that does not apply is
patch_apply_failed, a wrong fix fails; and a tests.patch repaired after the fact re-grades
the same stored candidate (record once, grade many)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harvest"))
from e2e.cli import benchtape  # noqa: E402
from harvestkit import clone_toolz  # noqa: E402

from benchtape.replay.task_verdict import grade_candidate  # noqa: E402
from benchtape.sandbox.task_workspace import fresh_workspace  # noqa: E402
from benchtape.spec.project import load_project  # noqa: E402
from benchtape.spec.task import load_task, task_dirs  # noqa: E402

TASK = "434"  # 1 failing test at the base, 1 passing with the reference (shared README)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    repo = clone_toolz(tmp_path_factory.mktemp("grade") / "toolz")
    done = benchtape("task", "create", TASK, cwd=repo)
    assert done.returncode == 0, done.stderr
    os.environ["PATH"] = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"  # the verifier's `python3 -m pytest` is this one
    project = load_project(repo)
    return {"repo": repo, "project": project, "task": load_task(task_dirs(repo)[TASK])}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def test_the_workspace_is_a_fresh_repository_with_nothing_of_the_history(made: dict[str, Any], tmp_path: Path):
    task = made["task"]
    ws = fresh_workspace(made["repo"], task.source.base_commit, tmp_path / "ws")
    log = _git(ws, "log", "--all", "--format=%H %s")
    assert len(log.splitlines()) == 1 and log.split()[1] == "base"
    assert task.source.base_commit not in log and (task.source.fix_commit or "x") not in log
    assert _git(ws, "remote").strip() == ""
    original = _git(made["repo"], "log", "--format=%s", "-20")
    assert not any(line and line in log for line in original.splitlines())
    # the tree is the base's bytes, and neither hidden patch is in it
    assert _git(ws, "rev-parse", "HEAD^{tree}").strip() == _git(made["repo"], "rev-parse", f"{task.source.base_commit}^{{tree}}").strip()
    assert not list(ws.rglob("tests.patch")) and not list(ws.rglob("reference.patch"))


def test_the_pipeline_guard_then_empty_then_the_fresh_verifier(made: dict[str, Any], tmp_path: Path):
    project, task = made["project"], made["task"]
    assert grade_candidate(project, task, task.reference()).outcome == "passed"
    assert grade_candidate(project, task, b"").outcome == "no_changes"
    guard = grade_candidate(project, task, task.tests_patch())
    assert guard.outcome == "guard_violation" and guard.evidence["guarded"]
    bad = b"diff --git a/toolz/nowhere.py b/toolz/nowhere.py\n--- a/toolz/nowhere.py\n+++ b/toolz/nowhere.py\n@@ -1 +1 @@\n-x\n+y\n"
    applied = grade_candidate(project, task, bad)
    assert applied.outcome == "patch_apply_failed" and applied.evidence["patch"] == "candidate"
    wrong = _wrong_fix(made["repo"], task, tmp_path)
    failed = grade_candidate(project, task, wrong)
    assert failed.outcome == "failed", failed.reason
    assert failed.evidence["runner"] == "pytest" and failed.evidence["failed"] >= 1 and "$ python3 -m pytest" in failed.evidence["log"]


def test_a_change_to_how_pytest_runs_in_shared_settings_is_a_guard_violation(made: dict[str, Any], tmp_path: Path):
    """An agent that adds `-p <plugin>` to pytest's addopts in setup.cfg / pyproject.toml /
    tox.ini (a plugin rewriting each failed report as passed) graded PASS on attrs without
    touching the code: the runner's section of those shared files is the hidden tests' as
    pytest.ini is. The rest of those files stays the agent's to change."""
    from benchtape.sandbox.patches import apply_patch

    project, task = made["project"], made["task"]

    def candidate(name: str, edit: Any) -> bytes:
        ws = fresh_workspace(made["repo"], task.source.base_commit, tmp_path / name)
        apply_patch(ws, task.reference())
        edit(ws)
        subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
        return subprocess.run(["git", "diff", "--cached"], cwd=ws, capture_output=True, check=True).stdout

    def append(path: str, text: str) -> Any:
        return lambda ws: (ws / path).write_text(((ws / path).read_text() if (ws / path).exists() else "") + text)

    for path, section in (("setup.cfg", "[tool:pytest]"), ("tox.ini", "[pytest]"), ("pyproject.toml", "[tool.pytest.ini_options]")):
        body = "addopts = -p no:cacheprovider\n" if path != "pyproject.toml" else 'addopts = "-p no:cacheprovider"\n'
        guarded = grade_candidate(project, task, candidate(f"cheat-{path}", append(path, f"\n{section}\n{body}")))
        assert guarded.outcome == "guard_violation" and guarded.evidence["guarded"] == [f"{path} {'[tool.pytest]' if path == 'pyproject.toml' else section}"], (path, guarded.reason)
    fine = grade_candidate(project, task, candidate("metadata", append("setup.cfg", "\n[metadata]\nkeywords = functional\n")))
    assert fine.outcome == "passed", fine.reason  # the rest of a shared settings file is the agent's


def _wrong_fix(repo: Path, task: Any, tmp: Path) -> bytes:
    """A change to the implementation that is not the fix (a comment appended to the first file
    the reference changes), as `git diff` in the agent's workspace gives it."""
    from benchtape.sandbox.patches import changed_paths

    ws = fresh_workspace(repo, task.source.base_commit, tmp / "wrong")
    target = ws / changed_paths(task.reference())[0]
    target.write_text(target.read_text() + "# not the fix\n")
    return subprocess.run(["git", "diff"], cwd=ws, capture_output=True, check=True).stdout


def test_a_repaired_tests_patch_regrades_the_stored_candidate(made: dict[str, Any]):
    project, task = made["project"], made["task"]
    candidate = task.reference()
    assert grade_candidate(project, task, candidate).outcome == "passed"
    tests = task.verify.tests_patch
    assert tests is not None
    good = tests.read_bytes()
    try:
        tests.write_bytes(good.replace(b"\n@@", b"\n@@ broken", 1))  # a tests.patch that no longer applies
        assert grade_candidate(project, load_task(task.dir), candidate).outcome == "patch_apply_failed"
    finally:
        tests.write_bytes(good)  # repaired: the same candidate passes again, no agent run
    assert grade_candidate(project, load_task(task.dir), candidate).outcome == "passed"


def test_the_controls_oracle_passes_noop_does_not_and_a_solution_script_is_an_oracle(made: dict[str, Any], tmp_path: Path):
    from dataclasses import replace

    from benchtape.replay.task_controls import oracle_candidate, run_controls

    project, task = made["project"], made["task"]
    (result,) = run_controls(project, [task])
    assert result.holds and result.oracle.outcome == "passed" and result.noop.outcome == "no_changes"
    script = tmp_path / "solve.sh"
    script.write_text("git apply " + str(task.reference_patch) + "\n")
    scripted = replace(task, solution=script)
    candidate = oracle_candidate(project, scripted)
    assert candidate.startswith(b"diff --git ") and b".git/" not in candidate
    assert grade_candidate(project, scripted, candidate).outcome == "passed"


def test_a_workspace_candidate_is_what_the_agent_changed(made: dict[str, Any], tmp_path: Path):
    from benchtape.sandbox.task_workspace import candidate_patch

    ws = fresh_workspace(made["repo"], made["task"].source.base_commit, tmp_path / "ws")
    assert candidate_patch(ws) == b""
    (ws / "NEW.txt").write_text("hello\n")
    (ws / "README.rst").unlink()
    patch = candidate_patch(ws)
    assert b"b/NEW.txt" in patch and b"a/README.rst" in patch
    assert _git(ws, "status", "--porcelain").count("\n") == 2  # the workspace's own index untouched


def test_a_reward_file_decides_the_verdict(tmp_path: Path):
    from benchtape.core.command_runner import run_local
    from benchtape.sandbox.verifier import read_reward, verify
    from benchtape.spec.task import Verify

    def run(command: str, timeout: float):
        return run_local(["/bin/sh", "-c", command], tmp_path, timeout)

    spec = Verify(command="mkdir -p logs/verifier && echo 0.5 > logs/verifier/reward.txt", reward_file=True)
    partial = verify(tmp_path, [], spec, run)
    assert partial.status == "failed" and partial.detail == "reward 0.5" and partial.exit == 0
    (tmp_path / "logs" / "verifier" / "reward.txt").unlink()
    (tmp_path / "logs" / "verifier" / "reward.json").write_text('{"reward": 1}')
    assert read_reward(tmp_path / "logs" / "verifier") == 1.0
    whole = verify(tmp_path, [], Verify(command="true", reward_file=True), run)
    assert whole.status == "passed"


FIVE = ["603", "551", "534", "434", "398"]


@pytest.fixture(scope="module")
def five(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from harvestkit import validated_toolz

    repo = validated_toolz(tmp_path_factory.mktemp("five") / "toolz", tuple(FIVE))
    assert benchtape("task", "scan", "--json", cwd=repo).returncode == 0
    return repo


def test_the_oracle_passes_every_valid_task_the_noop_none_and_a_stale_task_is_skipped(five: Path):
    import json

    from harvestkit import cli_env

    done = benchtape("task", "controls", "--json", cwd=five, env=cli_env(), timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    assert sorted(t["task"] for t in doc["tasks"]) == sorted(FIVE)
    assert all(t["oracle"]["outcome"] == "passed" and t["noop"]["outcome"] == "no_changes" for t in doc["tasks"])
    prompt = five / ".benchtape" / "tasks" / "398" / "prompt.md"
    prompt.write_text(prompt.read_text() + "\nAlso keep it fast.\n")  # edited after validation: stale
    again = json.loads(benchtape("task", "controls", "--json", cwd=five, env=cli_env(), timeout=900).stdout)
    assert "398" not in [t["task"] for t in again["tasks"]]
    assert [(s["id"], s["state"]) for s in again["skipped"]] == [("398", "stale")]
