"""`benchtape check` on tasks: the negative control of a task set.

A bench's control runs every scenario under the no-op and every check must fail. A task's
verdict is its hidden verifier, so the same control is: the no-op agent (the mock's `noop`
model, which changes nothing) runs every task, and no task may come out `passed`; `no_changes`
or `failed` is what holds. The cells are recorded and graded like any evaluation's, under
an evaluation of their own (`<name>:control`), so `compare NAME` never counts them as a setup,
and measured fresh each time (a control says what the verifier does now).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchtape.core.errors import ExitCode

if TYPE_CHECKING:
    from benchtape.app.evaluation_run import EvaluationScreen

HOLDS = ("no_changes", "failed")  # what the no-op may come out as; an infrastructure failure decides nothing


def is_task_target(target: Path) -> bool:
    """Whether `check TARGET` names tasks: a folder of Harbor tasks, or an evaluation with `tasks:`."""
    from benchtape.spec.evaluation import project_evaluation
    from benchtape.spec.harbor_run import is_harbor_folder

    if is_harbor_folder(target):
        return True
    if target.suffix or len(target.parts) != 1 or target.exists():
        return False
    found = project_evaluation(str(target), Path.cwd())
    return found is not None and _has_tasks(found)


def _has_tasks(path: Path) -> bool:
    from benchtape.spec.evaluation import load_evaluation

    return bool(load_evaluation(str(path)).task_refs)


def control_evaluation(target: Path) -> Any:
    """The evaluation the control runs: the target's tasks × the no-op agent, named apart."""
    from benchtape.spec.evaluation import load_evaluation
    from benchtape.spec.harbor_run import harbor_evaluation, is_harbor_folder, setup_arm

    if is_harbor_folder(target):
        ev = harbor_evaluation(target, "mock", "noop")
    else:
        ev = load_evaluation(str(target))
        noop = setup_arm(ev.registry, "mock", "noop")
        ev = dataclasses.replace(ev, arms=[noop], blocks=[[noop]], attempts=1, bench_paths=[], _tasks=None, skipped=[], direct=True)  # a control checks the tasks as they are, validated or not (it is how an author checks one)
    return dataclasses.replace(ev, name=f"{ev.name}:control")


def check_tasks(target: Path, show: EvaluationScreen, *, db: Path | None, plain: bool, as_json: bool, sandbox: str | None = None) -> int:
    """Run the no-op on every task; exit 0 when none passed, 1 when one did or one could not be
    decided, 3 when there was no task to run."""
    import orjson

    from benchtape.app.evaluation_run import EvaluationRequest, plan_evaluation, run_planned
    from benchtape.app.stores import open_store
    from benchtape.spec.pricing import load_pricing

    ev = control_evaluation(target)
    req = EvaluationRequest(name=ev.name, fresh=True, yes=True, db=db, sandbox=sandbox, json_out=as_json, plain=plain, loaded=ev)
    store = open_store(db)
    cells: list[dict[str, Any]] = []
    said = show.progress(show.plain_wanted(plain)) if not as_json else None

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind == "cell.finished":
            cells.append({"task": data["task"], "outcome": data["outcome"], "reason": data.get("reason")})
        if said is not None:
            said(kind, data)

    planned = plan_evaluation(req, store, on_event=on_event)
    done = run_planned(planned, store, req, load_pricing(planned.ev.project), on_event=on_event)
    if done.interrupted:
        return ExitCode.INTERRUPTED
    broken = [c for c in cells if c["outcome"] == "passed"]
    undecided = [c for c in cells if c["outcome"] not in HOLDS and c["outcome"] != "passed"]
    doc = {"control": "negative", "agent": "mock/noop", "evaluation": ev.name, "run_id": done.run_id, "cells": cells, "passed_under_noop": [c["task"] for c in broken], "undecided": [c["task"] for c in undecided], "skipped": done.skipped, "holds": bool(cells) and not broken and not undecided}
    if as_json:
        print(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
    else:
        _say(doc)
    if not cells:
        return ExitCode.BLOCKED
    return ExitCode.OK if doc["holds"] else ExitCode.FAILED


def _say(doc: dict[str, Any]) -> None:
    n = len(doc["cells"])
    for c in doc["cells"]:
        if c["outcome"] == "passed":
            print(f"BROKEN  {c['task']}: its verifier passes a workspace the agent did not change; the task tests nothing the agent must do")
        elif c["outcome"] not in HOLDS:
            print(f"UNDECIDED  {c['task']}: {c['outcome']}" + (f" ({c['reason']})" if c.get("reason") else ""))
    for s in doc["skipped"]:
        print(f"skipped  {s.get('id')}: {s.get('why') or s.get('state')}")
    if not n:
        print("negative control: no task ran (nothing to control)")
    elif doc["holds"]:
        print(f"negative control holds: the no-op agent passed none of {n} task(s) (run {doc['run_id']}, evaluation {doc['evaluation']})")
    else:
        print(f"negative control BROKEN: {len(doc['passed_under_noop'])} of {n} task(s) passed under the no-op, {len(doc['undecided'])} undecided (run {doc['run_id']})")
