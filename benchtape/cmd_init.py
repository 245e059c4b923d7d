"""`benchtape init`: a starter bench to copy from, never a blank page."""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from pathlib import Path

import typer

from benchtape.guard import guarded
from benchtape.core.errors import BadInput


def init_cmd(folder: Path = typer.Argument(Path("."), help="Where to write madbench.yaml and its testdata.")) -> None:
    """Write a starter bench (the demo: red-state testdata, a scripted mock agent, anti-cheat checks).

    Example: benchtape init my-bench && cd my-bench && benchtape run --harness mock
    """

    def body() -> int:
        from benchtape.api import demo_bench_path
        from benchtape.preflight import unwritable

        target = folder / "madbench.yaml"
        for existing in (target, folder / "calc"):
            if existing.exists():
                print(f"{existing} already exists; nothing written")
                return 0
        why = unwritable(folder, folder=True)
        if why:
            raise BadInput(f"cannot write the starter bench here: {why}", file=str(folder), fix="name a folder you can write to: benchtape init ~/my-bench")
        demo = demo_bench_path().parent
        try:
            _write(demo, folder, target)
        except OSError as exc:
            raise BadInput(f"cannot write the starter bench here: {exc.strerror or exc}", file=str(exc.filename or folder), fix="name a folder you can write to: benchtape init ~/my-bench") from None
        print(f"wrote {target} and its testdata {folder / 'calc'}/")
        go = "" if folder.resolve() == Path.cwd().resolve() else f"cd {shlex.quote(str(folder))} && "  # `init .`: no `cd . &&`
        print(f"next: {go}benchtape run         (then: benchtape check madbench.yaml)")
        return 0

    guarded(body)


def _write(demo: Path, folder: Path, target: Path) -> None:
    """Testdata then bench, each written under a temporary name and renamed: nothing half-written."""
    folder.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".benchtape-init-", dir=folder))
    try:
        shutil.copytree(demo / "calc", staging / "calc", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(demo / "bench.yaml", staging / "madbench.yaml")
        os.replace(staging / "calc", folder / "calc")
        os.replace(staging / "madbench.yaml", target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def register(app: typer.Typer) -> None:
    app.command("init")(init_cmd)
