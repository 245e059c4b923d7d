"""The controls of a task set: the oracle must pass every valid task, the no-op agent fail each.

- the **oracle** (`oracle` tool): its candidate is the task's `reference.patch`, or, for a task
  with a `solution` script (a Harbor task's solution/solve.sh), what that script changes when
  run in the task's fresh workspace (sandbox/task_workspace.py);
- the **no-op** agent changes nothing: its candidate is empty (`no_changes`).
Both go through the one task verdict (replay/task_verdict.py grade_candidate), like any agent's
candidate, so a control that does not hold says the task (or the verifier) is broken, not a setup.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchtape.core.command_runner import grading_env
from benchtape.replay.task_verdict import FAILED, NO_CHANGES, PASSED, TaskVerdict, grade_candidate
from benchtape.sandbox.task_workspace import candidate_patch, commit_as_base, fresh_workspace
from benchtape.spec.project import Project
from benchtape.spec.task import TaskSpec

ORACLE, NOOP = "oracle", "noop"


@dataclass
class ControlResult:
    task: str
    oracle: TaskVerdict
    noop: TaskVerdict

    @property
    def holds(self) -> bool:
        return self.oracle.outcome == PASSED and self.noop.outcome in (FAILED, NO_CHANGES)

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "holds": self.holds, "oracle": {"outcome": self.oracle.outcome, "reason": self.oracle.reason}, "noop": {"outcome": self.noop.outcome, "reason": self.noop.reason}}


def oracle_candidate(project: Project, task: TaskSpec, *, timeout: float = 900.0) -> bytes:
    """The oracle's candidate: the solution script's change in a fresh workspace, or
    reference.patch (a history task's; a Harbor task's is _harbor_oracle_candidate's)."""
    if task.solution is None:
        return task.reference()
    scratch = Path(tempfile.mkdtemp(prefix=f"benchtape-oracle-{task.id}-"))
    try:
        ws = fresh_workspace(project.root, task.source.base_commit, scratch / "workspace")
        env = {**grading_env(), "HOME": str(scratch)}
        subprocess.run(["/bin/sh", str(task.solution)], cwd=ws, env=env, capture_output=True, timeout=timeout, check=False)
        return candidate_patch(ws)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _harbor_oracle_candidate(task: TaskSpec, level: str) -> bytes:
    """What a Harbor task's solution/solve.sh changes in its environment's starting workspace
    (run as validation runs it), as a candidate patch. A Harbor task has no base commit: the
    workspace of a history task was asked of one, and `task controls` stopped on a traceback."""
    from benchtape.sandbox import harbor_env

    env = harbor_env.prepare(task, level)
    scratch = Path(tempfile.mkdtemp(prefix=f"benchtape-oracle-{task.id}-"))
    try:
        work = commit_as_base(harbor_env.starting_workspace(env, scratch / "work"))
        harbor_env.run_solution(env, work, scratch)
        return candidate_patch(work)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_controls(project: Project, tasks: list[TaskSpec], *, level: str = "home", image: str | None = None) -> list[ControlResult]:
    """The oracle and the no-op agent on every task."""
    return [_harbor_controls(t) if t.runtime is not None else ControlResult(t.id, grade_candidate(project, t, oracle_candidate(project, t), level=level, image=image), grade_candidate(project, t, b"", level=level, image=image)) for t in tasks]


def _harbor_controls(task: TaskSpec) -> ControlResult:
    """A Harbor task's controls at the level it was validated at (its environment may be an
    image only a container runs): the oracle's and the no-op's candidates through the verdict an
    agent's gets. A multi-step task's oracle plays each step's solution as validation does
    (sandbox/harbor_steps.py), its steps' verifiers deciding."""
    from benchtape.replay.task_verdict import grade_harbor_candidate, grade_harbor_steps

    level = (task.validation.level if task.validation is not None else None) or "home"
    runtime = task.runtime
    assert runtime is not None
    if not runtime.steps:
        return ControlResult(task.id, grade_harbor_candidate(task, _harbor_oracle_candidate(task, level), level=level), grade_harbor_candidate(task, b"", level=level))
    from benchtape.sandbox.harbor_steps import run_steps

    scratch = Path(tempfile.mkdtemp(prefix=f"benchtape-oracle-{task.id}-"))
    try:
        played, _ = run_steps(task, level, scratch, oracle=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    detail = played.detail(runtime.reward_strategy)
    oracle = TaskVerdict(PASSED if played.reward is not None and played.passed else FAILED, f"the verifiers' {detail}", {"task": task.id, "level": level, "reward": played.reward})
    return ControlResult(task.id, oracle, grade_harbor_steps(task, [b""] * len(runtime.steps), level=level))
