"""Helpers for the read-side tests: the real `benchtape` CLI in-process, benches in tmp_path."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import orjson
from typer.testing import CliRunner

from benchtape.cli import build

app = build()

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures-red" / "demo" / "bench.yaml"


@dataclass
class Out:
    code: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        return [line for line in self.stdout.splitlines() if line.strip()]

    def jsonl(self) -> list[dict]:
        return [orjson.loads(line) for line in self.lines]

    def json(self):
        return orjson.loads(self.stdout)


def cli(*args: object) -> Out:
    """Run `benchtape ARGS` through the real typer app, as plain output (no colour, no live view)."""
    result = CliRunner().invoke(app, [str(a) for a in args], env={"NO_COLOR": "1", "COLUMNS": "240"}, catch_exceptions=False)
    return Out(result.exit_code, result.stdout, result.stderr)


def write_bench(folder: Path, text: str, name: str = "bench.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def unique_prefix(ids: list[str], target: str) -> str:
    """The shortest prefix of `target` no other id shares (ULIDs made in one millisecond
    share all but their last characters)."""
    for n in range(1, len(target) + 1):
        if sum(i.startswith(target[:n]) for i in ids) == 1:
            return target[:n]
    return target
