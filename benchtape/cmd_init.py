"""`benchtape init`: a starter bench to copy from, never a blank page."""

from __future__ import annotations

import shutil
from pathlib import Path

import typer

from benchtape.cli import guarded


def init_cmd(folder: Path = typer.Argument(Path("."), help="Where to write madbench.yaml and its testdata.")) -> None:
    """Write a starter bench (the demo: red-state testdata, a scripted mock agent, anti-cheat checks).

    Example: benchtape init my-bench && cd my-bench && benchtape run --harness mock
    """

    def body() -> int:
        from benchtape.api import demo_bench_path

        target = folder / "madbench.yaml"
        if target.exists():
            print(f"{target} already exists; nothing written")
            return 0
        demo = demo_bench_path().parent
        if (folder / "calc").exists():
            print(f"{folder / 'calc'} already exists; nothing written")
            return 0
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copytree(demo / "calc", folder / "calc", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(demo / "bench.yaml", target)
        print(f"wrote {target} and its testdata {folder / 'calc'}/")
        print(f"next: cd {folder} && benchtape run         (then: benchtape check madbench.yaml)")
        return 0

    guarded(body)


def register(app: typer.Typer) -> None:
    app.command("init")(init_cmd)
