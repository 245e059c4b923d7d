"""Stores for the store's tests (tests/storage): the real `benchtape` command in a subprocess,
a store as an older benchtape left it, and a real store file damaged on disk."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import sqlite_utils

from benchtape.store.database import MIGRATIONS


def benchtape(*args: object, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "benchtape", *map(str, args)], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)


def store_at_schema(path: Path, version: int) -> sqlite_utils.Database:
    """A store as the benchtape that stopped at migration `version` left it (commit and close it)."""
    db = sqlite_utils.Database(path)
    for step in MIGRATIONS[:version]:
        step(db)
    db.execute(f"PRAGMA user_version = {version}")
    return db
