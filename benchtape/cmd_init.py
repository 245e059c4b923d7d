"""`benchtape init`: a starter bench to copy from, never a blank page."""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from pathlib import Path

import typer

from benchtape.core.errors import BadInput
from benchtape.guard import command


@command()
def init_cmd(
    folder: Path = typer.Argument(Path("."), help="Where to write madbench.yaml and its testdata."),
    tasks: bool = typer.Option(False, "--tasks", help="Instead: set up tasks from this git repository's history (.benchtape/config.yaml, kind: Project) and show the best candidates."),
) -> int:
    """Write a starter bench (the demo: red-state testdata, a scripted mock agent, anti-cheat checks); with --tasks, set up this repository for tasks from its history.

    Example: benchtape init my-bench && cd my-bench && benchtape run --harness mock
    Example: benchtape init --tasks && benchtape task create 603 && benchtape task validate
    """
    if tasks:
        return _init_tasks(folder)

    from benchtape.app.api import demo_bench_path
    from benchtape.app.preflight import unwritable

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


def _init_tasks(folder: Path) -> int:
    from benchtape.app.evaluations import load_project
    from benchtape.app.tasks import init_tasks, scan
    from benchtape.render_tasks import scan_table

    done = init_tasks(folder.resolve())
    if done.written:
        print(f"wrote {done.config} (kind: Project; source {done.owner_repo or 'unknown: name it there'})")
    else:
        print(f"{done.config} already exists; nothing written")
    result = scan(load_project(done.root), limit=10)
    scan_table(result)
    best = [c.landing.id for c in result.candidates[:5]]
    if best:
        print(f"then: benchtape task create {' '.join(best)} && benchtape task validate")
    return 0


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
