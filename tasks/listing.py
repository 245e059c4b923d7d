"""`task list`: every task's state (unvalidated / valid / stale / leaking, or broken when its
task.yaml does not load), why, and the command that moves it on. Runs take only valid tasks:
`runnable` is that selection, saying which others it skipped and why."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchtape.core.errors import BadInput
from benchtape.spec.harbor_task import load_task_folder
from benchtape.spec.project import Project
from benchtape.spec.task import TaskSpec, task_dirs
from benchtape.tasks.lint import repositories
from benchtape.tasks.validate import last_outcome


@dataclass
class Row:
    id: str
    folder: Path
    state: str  # unvalidated, valid, stale, leaking, broken
    why: str
    next: str
    task: TaskSpec | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "folder": str(self.folder), "state": self.state, "why": self.why, "next": self.next}
        if self.task is not None:
            out["format"] = "harbor" if self.task.runtime is not None else "benchtape"
            out["pull_request"] = self.task.source.pull_request
            out["base_commit"] = self.task.source.base_commit
            out["verify_command"] = self.task.verify.command
            if self.task.validation is not None:
                out["validated_at"] = self.task.validation.at
                out["counts"] = {"base": self.task.validation.base, "reference": self.task.validation.reference}
        return out


def task_rows(project: Project) -> list[Row]:
    repos = repositories(project)
    rows = []
    for task_id, folder in task_dirs(project.root).items():
        try:
            task = load_task_folder(folder)
        except BadInput as exc:
            rows.append(Row(task_id, folder, "broken", exc.render().replace("\n", " "), f"fix {exc.file or folder / 'task.yaml'}"))
            continue
        recipe = project.task_recipe(task.source.base_commit) if task.runtime is None else ""
        state = task.state(recipe, repos)
        why, next_step = state.why, state.next
        if state.why == "never validated":
            last = last_outcome(project.config_dir / "validate", task_id)
            if last is not None and not last.get("validated"):
                why = f"its last validation ({last.get('at')}, level {last.get('level')}) did not hold: {last.get('why') or 'see its logs'}"
                if last.get("fingerprint") in (None, task.fingerprint(recipe)):
                    next_step = last.get("next") or f"read {project.config_dir / 'validate' / task_id}/*.log, then: benchtape task validate {task_id}"
                else:  # edited since, or its environment's recipe (.benchtape/config.yaml `env:`) changed: that conclusion may no longer hold
                    why += "; the task or its environment's recipe has changed since"
                    next_step = f"benchtape task validate {task_id}"
        rows.append(Row(task_id, folder, state.state, why, next_step, task))
    return rows


def counts(rows: list[Row]) -> dict[str, int]:
    out: dict[str, int] = {}
    for row in rows:
        out[row.state] = out.get(row.state, 0) + 1
    return out


def runnable(project: Project) -> tuple[list[TaskSpec], list[Row]]:
    """(the valid tasks a run takes, the others with why each is skipped)."""
    rows = task_rows(project)
    return [r.task for r in rows if r.state == "valid" and r.task is not None], [r for r in rows if r.state != "valid"]
