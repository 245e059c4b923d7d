"""benchtape/typer_coercion.py: typer's coercion built when a value needs it gives what typer
gives. The same app (options of each kind benchtape declares, and the path checks it does not
use yet) is run over the same command lines with and without it installed, each in a fresh
interpreter: same output, same errors, same exit codes, and no pydantic where no value needs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

APP = '''
import enum, json, sys
from pathlib import Path
from typing import Optional
import typer
if sys.argv[1] == "deferred":
    from benchtape import typer_coercion
    typer_coercion.install()

class Color(str, enum.Enum):
    red = "red"
    blue = "blue"

app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)

@app.command()
def main(
    name: Optional[str] = typer.Option(None, "--name"),
    limit: int = typer.Option(50, "--limit", min=0),
    ratio: float = typer.Option(0.5, "--ratio", max=1.0),
    db: Optional[Path] = typer.Option(None, "--db"),
    here: Path = typer.Option(Path("."), "--here"),
    must: Optional[Path] = typer.Option(None, "--must", exists=True),
    file_only: Optional[Path] = typer.Option(None, "--file", dir_okay=False),
    real: Optional[Path] = typer.Option(None, "--real", resolve_path=True),
    many: Optional[list[Path]] = typer.Option(None, "--many"),
    musts: Optional[list[Path]] = typer.Option(None, "--musts", exists=True, dir_okay=False),
    names: Optional[list[str]] = typer.Option(None, "--names"),
    counts: Optional[list[int]] = typer.Option(None, "--counts"),
    rest: Optional[list[Path]] = typer.Argument(None),
    color: Optional[Color] = typer.Option(None, "--color"),
    flag: bool = typer.Option(False, "--flag"),
) -> None:
    values = dict(name=name, limit=limit, ratio=ratio, db=db, here=here, must=must, file=file_only, real=real, many=many, musts=musts, names=names, counts=counts, rest=rest, color=color, flag=flag)
    print(json.dumps({k: [type(v).__name__, str(v), [type(i).__name__ for i in v] if isinstance(v, (list, tuple)) else None] for k, v in values.items()}, sort_keys=True))

try:
    app(sys.argv[2:], prog_name="t")
finally:
    print("PYDANTIC", "pydantic" in sys.modules, file=sys.stderr)
'''

LINES = [
    [],
    ["--name", "x y"],
    ["--name", ""],
    ["--limit", "7"],
    ["--limit", "-1"],
    ["--limit", "seven"],
    ["--limit", " 7 "],
    ["--ratio", "2"],
    ["--ratio", "0.25"],
    ["--db", "a//b/c.db"],
    ["--db", ""],
    ["--db", "-"],
    ["--here", "sub"],
    ["--must", "nowhere"],
    ["--must", "present.txt"],
    ["--file", "a-dir"],
    ["--file", "present.txt"],
    ["--real", "a-dir/../present.txt"],
    ["--many", "a", "--many", "b//c"],
    ["--many", ""],
    ["--musts", "present.txt", "--musts", "present.txt"],
    ["--musts", "present.txt", "--musts", "nowhere"],
    ["--musts", "a-dir"],
    ["--names", "x", "--names", ""],
    ["--counts", "1", "--counts", "two"],
    ["--counts", "3"],
    ["a.yaml", "b//c.yaml"],
    ["present.txt"],
    ["--color", "blue"],
    ["--color", "green"],
    ["--flag"],
]


def _run(mode: str, argv: list[str], cwd: Path) -> tuple[int, str, str, bool]:
    done = subprocess.run([sys.executable, "-c", APP, mode, *argv], cwd=cwd, capture_output=True, text=True, timeout=60)
    *err, last = done.stderr.splitlines() or [""]
    return done.returncode, done.stdout, "\n".join(err), last == "PYDANTIC True"


@pytest.mark.parametrize("argv", LINES, ids=lambda a: " ".join(a) or "(none)")
def test_same_values_and_errors_as_typers_own(tmp_path, argv):
    (tmp_path / "present.txt").write_text("x")
    (tmp_path / "a-dir").mkdir()
    code, out, err, _ = _run("typer", argv, tmp_path)
    assert (code, out, err) == _run("deferred", argv, tmp_path)[:3]


def test_no_pydantic_for_defaults_strings_and_paths(tmp_path):
    (tmp_path / "present.txt").write_text("x")
    for argv in ([], ["--name", "x", "--db", "s.db", "--must", "present.txt", "--here", "sub", "--flag"], ["--many", "a", "--musts", "present.txt", "--names", "x", "b.yaml", "c//d.yaml"]):
        code, out, _, pydantic = _run("deferred", argv, tmp_path)
        assert code == 0 and not pydantic, (argv, out)
        assert json.loads(out)["db"][0] in ("NoneType", "PosixPath")
    assert _run("typer", [], tmp_path)[3], "typer itself imports pydantic for these: the comparison above means something"
    assert _run("deferred", ["--limit", "7"], tmp_path)[3], "a str for an int goes to typer's own coercion"
