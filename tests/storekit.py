"""Stores for the store's tests (tests/storage): the real `benchtape` command in a subprocess,
a store as an older benchtape left it, and a real store file damaged on disk."""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
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


@dataclass
class Out:
    code: int
    stdout: str
    stderr: str


def cli(*args: object, cwd: Path | None = None) -> Out:
    """The real CLI in-process; an exception that escapes it (a traceback) fails the test."""
    from typer.testing import CliRunner

    from benchtape.cli import build

    here = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(build(), [str(a) for a in args], env={"NO_COLOR": "1", "COLUMNS": "240"}, catch_exceptions=False)
    finally:
        os.chdir(here)
    return Out(result.exit_code, result.stdout, result.stderr)


def pages_of(path: Path, table: str) -> list[int]:
    """The pages of a table's B-tree, its root first (SQLite's dbstat)."""
    with sqlite3.connect(path) as c:
        root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", [table]).fetchone()[0]
        pages = [p for (p,) in c.execute("SELECT pageno FROM dbstat WHERE name = ? ORDER BY pageno", [table])]
    return [root, *(p for p in pages if p != root)]


def damage_pages(path: Path, pages: list[int], seed: int = 3) -> None:
    """Overwrite these pages of a store file (checkpointed first) with noise, as a disk or a
    stray write would."""
    with sqlite3.connect(path) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = c.execute("PRAGMA page_size").fetchone()[0]
    rng = random.Random(seed)
    with path.open("r+b") as fh:
        for page in pages:
            fh.seek((page - 1) * size)
            fh.write(bytes(rng.randrange(256) for _ in range(size)))
