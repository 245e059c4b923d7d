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
from benchtape.sandbox.task_workspace import candidate_patch, fresh_workspace
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
    """The oracle's candidate: the solution script's change in a fresh workspace, or reference.patch."""
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


def run_controls(project: Project, tasks: list[TaskSpec], *, level: str = "home", image: str | None = None) -> list[ControlResult]:
    """The oracle and the no-op agent on every task."""
    return [ControlResult(t.id, grade_candidate(project, t, oracle_candidate(project, t), level=level, image=image), grade_candidate(project, t, b"", level=level, image=image)) for t in tasks]
