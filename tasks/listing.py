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
from benchtape.spec.task_cells import explained_state
from benchtape.tasks.lint import repositories


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
        state = explained_state(project, task, repos)
        rows.append(Row(task_id, folder, state.state, state.why, state.next, task))
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
