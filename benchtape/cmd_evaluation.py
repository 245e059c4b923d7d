"""`benchtape evaluation create|validate NAME` and `benchtape compare NAME | RUN…`.

An evaluation (`.benchtape/evaluations/NAME.yaml`) says which setups to compare over a
bench's tasks; `validate` resolves it and starts nothing; `compare` ranks what the store
holds for it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import typer

from benchtape.core.errors import BadInput
from benchtape.options import Db

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def register(app: typer.Typer) -> None:
    from benchtape.guard import command

    evaluation = typer.Typer(name="evaluation", help="Evaluation files: which setups to compare over a bench's tasks.", no_args_is_help=True, add_completion=False, rich_markup_mode=None)

    @evaluation.command("create")
    @command()
    def create_cmd(name: str = typer.Argument(..., help="The evaluation's name: writes .benchtape/evaluations/NAME.yaml.")) -> int:
        """Write a new evaluation: asks for tools, models, efforts and attempts on a terminal; otherwise writes a commented template. Never replaces a file.

        Example: benchtape evaluation create baseline
        """
        return _create(name)

    @evaluation.command("validate")
    @command()
    def validate_cmd(
        name: str = typer.Argument(..., help="An evaluation name (.benchtape/evaluations/NAME.yaml) or a path."),
        json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
        detect: str | None = typer.Option(None, "--detect", metavar="DIFF", help="The difference in pass rate to plan for (10pp): the tasks, or attempts, it needs at 80% power."),
        db: Db = None,
    ) -> int:
        """Resolve every block and print the arms, the cells per task, and the plan: the smallest difference this many tasks × attempts detects at 80% power (from stored pass rates where there are). Starts nothing (no sandbox, no network).

        Example: benchtape evaluation validate baseline --detect 10pp
        """
        return _validate(name, json_out, detect, db)

    app.add_typer(evaluation, name="evaluation")
    app.add_typer(evaluation, name="eval", hidden=True)

    @app.command("compare")
    @command()
    def compare_cmd(
        targets: list[str] = typer.Argument(..., metavar="NAME | RUN…", help="An evaluation name (every stored cell of it), or run ids (only those runs)."),
        json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
        html: Path | None = typer.Option(None, "--html", help="Also write a self-contained HTML page here."),
        sessions: str | None = typer.Option(None, "--sessions", metavar="TASK", help="Instead of the ranking: every setup's sessions of this task side by side (outcome, verdicts, diff stats, final output)."),
        db: Db = None,
        plain: bool = typer.Option(False, "--plain", help="No colour, no box drawing."),
        after_cutoff: bool = typer.Option(False, "--after-cutoff", help="Only the tasks fixed after every setup's model's training cutoff: none of them can have seen the fix."),
    ) -> int:
        """Rank an evaluation's setups by correctness, then cost, tokens, lines changed and time, over the tasks they all measured.

        Example: benchtape compare baseline --html compare.html   ·   benchtape compare baseline --sessions fixes-the-bug
        """
        return _compare(targets, json_out, html, db, plain, sessions, after_cutoff)


# ---------------------------------------------------------------- create


def _create(name: str) -> int:
    from benchtape.app.evaluation_create import ask, template
    from benchtape.app.evaluations import EVALUATIONS_DIR, load_registry, project_config_dir, project_evaluation

    if not NAME.match(name):
        raise BadInput(f"{name!r} is not an evaluation name", fix="letters, digits, `.`, `_` and `-` (it becomes the file name)")
    cwd = Path.cwd()
    path = project_config_dir(cwd) / EVALUATIONS_DIR / f"{name}.yaml"
    existing = path if path.exists() else project_evaluation(name, cwd)  # berbench's .ber/bench/evaluations/ too: a new file would hide it
    if existing is not None:
        raise BadInput("already exists; an evaluation is never replaced (nor hidden by a new one of its name)", file=str(existing), fix=f"edit it, or choose another name (validate it with `benchtape evaluation validate {name}`)")
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    text = ask(name, load_registry(cwd)) if interactive else template(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(path, "x", encoding="utf-8") as f:
            f.write(text)
    except FileExistsError:
        raise BadInput("already exists; an evaluation is never replaced", file=str(path)) from None
    print(f"wrote {path}" + ("" if interactive else " (a commented template: edit it)"))
    print(f"next: benchtape evaluation validate {name}")
    return 0


# ---------------------------------------------------------------- validate


def _validate(name: str, json_out: bool, detect: str | None = None, db: Path | None = None) -> int:
    import orjson

    from benchtape.app.comparison import FREE_MODELS, evaluation_plan, load_pricing, parse_difference
    from benchtape.app.evaluations import evaluation_ref, load_evaluation
    from benchtape.app.stores import db_path, open_store
    from benchtape.render_compare import validation

    ev = load_evaluation(name)
    tasks = ev.tasks()
    pricing = load_pricing(ev.project)
    doc: dict[str, Any] = {
        "evaluation": ev.name,
        "path": str(ev.path),
        "benches": [str(p) for p in ev.bench_paths],
        "task_folders": list(ev.task_refs),  # `tasks:` as written (ids, `all`, Harbor folders)
        "tasks": [t.id for t in tasks],
        "skipped_tasks": [s.describe() for s in ev.skipped],
        "attempts": ev.attempts,
        "arms": [a.summary() for a in ev.arms],
        "cells_per_task": ev.cells_per_task,
        "cells": ev.cells_per_task * len(tasks),
        "repeated_arms": [{"block": b, "arm": a.label} for b, a in ev.duplicates()],
        "unpriced_models": sorted({s.model_id for a in ev.arms for s in a.steps if s.model_id and s.model_id not in FREE_MODELS and not pricing.priced(s.model_id)}),
        "require_env": sorted({var for a in ev.arms for s in a.steps for var, _ in s.effects.require_env}),
        "warnings": _tool_warnings(ev, tasks),
    }
    difference = parse_difference(detect) if detect is not None else None
    store = open_store(db, readonly=True) if db_path(db).exists() else None  # the stored pass rates, when there are; nothing is created
    doc["plan"] = evaluation_plan(store, ev, doc["tasks"], difference, pricing)
    if json_out:
        print(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
    else:
        validation(doc, ev.path, evaluation_ref(ev.path))
        for line in doc["warnings"]:
            print(line, file=sys.stderr)
    return 0


def _tool_warnings(ev: Any, tasks: list[Any]) -> list[str]:
    """Checks naming a native tool some setup's harness never emits, and args no check reads (benchtape.app.preflight owns both findings)."""
    from dataclasses import replace

    from benchtape.app.preflight import arg_warnings, native_tool_warnings

    by_bench: dict[Any, list[Any]] = {}
    for task in tasks:
        by_bench.setdefault(task.bench.path, []).append(task)
    out: list[str] = []
    for group in by_bench.values():
        out.extend(arg_warnings(replace(group[0].bench, scenarios=[t.scenario for t in group])))
    for arm in ev.arms:
        for step in arm.steps:
            for group in by_bench.values():
                bench = replace(group[0].bench, scenarios=[t.scenario for t in group])
                out.extend(native_tool_warnings(bench, step.harness, who=f"setup {arm.label}"))
    return list(dict.fromkeys(out))


# ---------------------------------------------------------------- compare


def _compare(targets: list[str], json_out: bool, html: Path | None, db: Path | None, plain: bool, task: str | None = None, after_cutoff: bool = False) -> int:
    from benchtape.core.gcpause import paused_gc

    with paused_gc():  # the comparison and its documents stay alive until printed: nothing for the cycle collector to find
        return _compare_shown(targets, json_out, html, db, plain, task, after_cutoff)


def _compare_shown(targets: list[str], json_out: bool, html: Path | None, db: Path | None, plain: bool, task: str | None, after_cutoff: bool) -> int:
    import orjson

    from benchtape.app.comparison import compare
    from benchtape.options import open_store

    if html is not None:
        from benchtape.app.preflight import check_outputs

        check_outputs({"--html": html})  # before the comparison is made: a path that cannot take it is found first
    store = open_store(db, must_exist=True, readonly=True)
    result = compare(store, list(targets), Path.cwd(), after_cutoff=after_cutoff)
    if task is not None:
        from benchtape.app.comparison import side_by_side
        from benchtape.render_compare import side_by_side_table

        doc = side_by_side(store, result, task)
        if json_out:
            print(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
        else:
            from benchtape.render import plain_wanted

            side_by_side_table(doc, plain_wanted(plain))
        return 0
    if html is not None:
        from benchtape.app.reports import write_text_atomic
        from benchtape.replay.compare_html import render

        write_text_atomic(html, render(result))
    if json_out:
        print(orjson.dumps(result.to_dict(), option=orjson.OPT_INDENT_2).decode())
    else:  # the terminal's renderer (rich) only for the terminal: `--json` feeds scripts, whose start-up counts
        from benchtape.render import plain_wanted
        from benchtape.render_compare import comparison_table

        comparison_table(result, plain_wanted(plain))
        if html is not None:
            print(f"wrote {html}")
    return 0
