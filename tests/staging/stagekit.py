"""Helpers for the staging and sandbox-safety tests: bench files, staging programs, git, and
`benchtape run` in-process (typer's CliRunner) with --db in tmp_path. A module of its own,
not conftest, so `from stagekit import …` never collides with another folder's conftest."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner


def write_bench(folder: Path, text: str, name: str = "bench.yaml") -> Path:
    p = folder / name
    p.write_text(textwrap.dedent(text).lstrip())
    return p


def write_program(path: Path, body: str) -> Path:
    """An executable Python staging program (the interpreter running the tests, so no PATH lookup)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body).lstrip())
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@dataclass
class Ran:
    code: int
    stdout: str
    stderr: str
    db: Path
    report: Path

    def report_doc(self) -> dict[str, Any]:
        return json.loads(self.report.read_text())

    def rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        con = sqlite3.connect(self.db)
        try:
            return con.execute(sql, args).fetchall()
        finally:
            con.close()

    def actions(self, kind: str | None = None) -> list[dict[str, Any]]:
        rows = self.rows("select kind, data from actions order by session_id, seq")
        return [{"kind": k, **json.loads(d)} for k, d in rows if kind is None or k == kind]


def run_bench(bench: Path, *args: str, env: dict[str, str] | None = None, report: bool = True) -> Ran:
    """`benchtape run BENCH --db ... --report-json ...` in this process."""
    from benchtape.cli import build

    app = build()

    db, out = bench.parent / "bt.db", bench.parent / "report.json"
    argv = ["run", str(bench), "--db", str(db), "--plain", *args] + (["--report-json", str(out)] if report else [])
    result = CliRunner().invoke(app, argv, env={"NO_COLOR": "1", **(env or {})}, catch_exceptions=False)
    return Ran(result.exit_code, result.stdout, result.stderr, db, out)


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd)}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()
