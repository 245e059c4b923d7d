"""Start-up: `benchtape version`, `--version` and bare `--help` are answered without importing
typer (or anything heavy), and the cached top-level help is exactly what typer prints, so a
new or renamed command cannot leave it stale. Timing itself is measured in `make bench`
(benchmarks/startup.py), not asserted here."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from cli import benchtape

from benchtape import _help
from benchtape.core.version import VERSION
from benchtape.helpgen import typer_help

PROBE = """
import sys
sys.argv = ["benchtape", *{args!r}]
from benchtape.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in ("typer", "pydantic", "rich", "sqlite_utils", "benchtape.checks", "jsonschema", "benchtape.store.database", "benchtape.core.errors") if m in sys.modules)
print("HEAVY", heavy, code, file=sys.stderr)
"""


def _probe(*args: str, columns: str = "100") -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": columns}
    return subprocess.run([sys.executable, "-c", PROBE.format(args=list(args))], env=env, capture_output=True, text=True, timeout=60)


def test_cached_help_is_typers_help():
    assert _help.TEXT == typer_help(), "benchtape/_help.py is stale: run `python -m benchtape.helpgen`"


@pytest.mark.parametrize("args", [["version"], ["--version"]])
def test_version_imports_nothing_heavy(args):
    out = _probe(*args)
    assert out.stdout == f"benchtape {VERSION}\n"
    assert "HEAVY [] 0" in out.stderr, out.stderr


def test_help_is_the_cached_text_and_imports_nothing_heavy():
    out = _probe("--help")
    assert out.stdout.startswith(_help.TEXT)
    assert out.stdout[len(_help.TEXT):].startswith("\nHarnesses") and "built-in: aider, claude-code, codex, command, gemini-cli, mini-swe-agent, mock, opencode, oracle, qwen-code" in out.stdout
    assert "HEAVY [] 0" in out.stderr, out.stderr


def test_no_arguments_prints_help_on_stderr_and_exits_2():
    out = benchtape()
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith(_help.TEXT) and "\nHarnesses" in out.stderr


def test_a_narrow_terminal_gets_typers_own_layout():
    """The cache is the 80-column layout; narrower, typer wraps it itself."""
    out = _probe("--help", columns="50")
    assert out.stdout != _help.TEXT and "Usage: " in out.stdout and "run" in out.stdout
    assert "'typer'" in out.stderr


def test_a_real_command_still_goes_through_typer():
    out = benchtape("version", "--help")
    assert out.returncode == 0 and "Print benchtape's version" in out.stdout
