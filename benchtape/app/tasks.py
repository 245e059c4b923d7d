"""Tasks from a repository's history: scan, create, lint, validate, list, doctor, init
(benchtape.tasks holds them; `benchtape task …`, `doctor` and `init --tasks` call them here).
"""

from __future__ import annotations

from benchtape.tasks.doctor import doctor
from benchtape.tasks.harvest import scan
from benchtape.tasks.init_project import init_tasks

__all__ = ["doctor", "init_tasks", "scan"]
