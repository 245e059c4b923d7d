"""Tasks from a repository's history: scan, create, lint, validate, list, doctor, init
(benchtape.tasks holds them; `benchtape task …`, `doctor` and `init --tasks` call them here).
"""

from __future__ import annotations

from benchtape.tasks.create import create_task
from benchtape.tasks.doctor import doctor
from benchtape.tasks.gitlog import repo_root
from benchtape.tasks.harvest import scan
from benchtape.tasks.init_project import init_tasks
from benchtape.tasks.lint import lint
from benchtape.tasks.listing import counts, runnable, task_rows
from benchtape.tasks.validate import validate

__all__ = ["counts", "create_task", "doctor", "init_tasks", "lint", "repo_root", "runnable", "scan", "task_rows", "validate"]
