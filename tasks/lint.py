"""`task lint [--fix] [ID…]`: does any task's prompt say where its answer is?

The findings are spec/prompt_leaks.py's (the PR's URL, owner/repo, forge hosts, the task's
own #N and pull/N, prefixes of its base or fix commit); `--fix` rewrites prompt.md with each
one replaced by `[redacted]` (written under a temporary name and renamed), so a task that
was leaking can be validated. Fixing a validated task's prompt makes it stale, as any edit
to a bound input does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchtape.spec.harbor_task import load_task_folder
from benchtape.spec.project import Project
from benchtape.spec.prompt_leaks import Finding, redact
from benchtape.spec.task import TaskSpec, find_task, task_dirs


@dataclass
class LintResult:
    id: str
    prompt: Path
    findings: list[Finding]
    fixed: bool = False
    remaining: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "prompt": str(self.prompt),
            "findings": [f.to_dict() for f in self.findings],
            "fixed": self.fixed,
            "remaining": [f.to_dict() for f in self.remaining],
        }


def repositories(project: Project) -> list[str]:
    """The owner/repo names a prompt must not carry, from the project's `source:`."""
    return [project.source.full_name] if project.source.full_name else []


def selected(project: Project, ids: list[str] | None) -> list[TaskSpec]:
    """The tasks named (every task when none), each loaded strictly."""
    folders = [find_task(project.root, i) for i in ids] if ids else list(task_dirs(project.root).values())
    return [load_task_folder(f) for f in folders]


def lint_task(task: TaskSpec, project: Project, fix: bool = False) -> LintResult:
    findings = task.leaks(repositories(project))
    result = LintResult(task.id, task.prompt_path, findings)
    if fix and findings:
        text = redact(task.prompt(), findings)
        tmp = task.prompt_path.with_name(f".{task.prompt_path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, task.prompt_path)
        result.fixed = True
        result.remaining = task.leaks(repositories(project))
    return result


def lint(project: Project, ids: list[str] | None = None, fix: bool = False) -> list[LintResult]:
    return [lint_task(t, project, fix) for t in selected(project, ids)]
