"""Tasks from a repository's history: scan, create, lint, validate, list, doctor, init
(benchtape.tasks holds them; `benchtape task …`, `doctor` and `init --tasks` call them here).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchtape.tasks.create import create_task
from benchtape.tasks.doctor import doctor
from benchtape.tasks.gitlog import repo_root
from benchtape.tasks.harvest import scan
from benchtape.tasks.init_project import init_tasks
from benchtape.tasks.lint import lint
from benchtape.tasks.listing import counts, runnable, task_rows
from benchtape.tasks.validate import validate

__all__ = ["counts", "create_task", "doctor", "export_harbor", "init_tasks", "lint", "repo_root", "runnable", "scan", "task_rows", "validate"]


def export_harbor(project: Any, ids: list[str], dest: Path) -> list[Any]:
    """`benchtape task export ID… --format harbor -o DIR`: the named tasks (mined from history)
    as Harbor task folders (benchtape.formats.harbor_export), each `Exported`."""
    from benchtape.core.errors import BadInput
    from benchtape.formats.harbor_export import export_tasks
    from benchtape.spec.harbor_task import load_task_folder
    from benchtape.spec.task import task_dirs

    if not ids:
        raise BadInput("name the tasks to export", fix="benchtape task export ID… --format harbor -o DIR (`benchtape task list` shows the ids)")
    found = task_dirs(project.root)
    missing = [i for i in ids if i not in found]
    if missing:
        raise BadInput(f"no task {', '.join(repr(m) for m in missing)} in {project.root}", fix=f"known tasks: {', '.join(list(found)[:20]) or '(none: benchtape task create REF)'}")
    return export_tasks(project, [load_task_folder(found[i]) for i in ids], dest)
