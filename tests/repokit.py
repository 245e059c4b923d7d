"""A small git repository written by a test: its files and its commits (the envs tests build
projects whose fix a task is harvested from)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any


def git(root: Path, *args: str) -> str:
    """`git args` in `root`, its output stripped; a failure fails the test."""
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def write_files(root: Path, files: dict[str, str]) -> None:
    """Each relative path's text, its folders made."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def commit(root: Path, files: dict[str, str], message: str) -> None:
    """Write `files` and commit everything as one change with `message`."""
    write_files(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def init_repo(root: Path) -> Path:
    """A new repository on `main` in `root` (made when missing), with an author of its own."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "dev")
    return root


def validate_one(project: Any, ref: str) -> Any:
    """Create the task of change `ref` in `project` and validate it at level home, into the
    project's own store: its TaskReport."""
    from benchtape.store.database import Store
    from benchtape.tasks.create import create_task
    from benchtape.tasks.validate import validate

    task_id = create_task(project, ref).id
    store = Store(project.root / ".benchtape" / "benchtape.db")
    try:
        [report] = validate(project, [task_id], store=store, level="home", logs=project.root / ".benchtape" / "validate").tasks
    finally:
        store.close()
    return report
