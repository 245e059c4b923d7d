"""Recording evaluation cells into a real store through the Store API, as the run loop will:
a run per invocation, a session per step (cell_id, task, attempt, arm in its params), the
actions a harness produces, then the cell's outcome (stored with no grading: the kit records
what a run loop would, not what decided it)."""

from __future__ import annotations

from typing import Any

from benchtape.core.model import Action
from benchtape.replay.outcomes import Outcome
from benchtape.spec.cells import run_fields, session_fields, started_extra
from benchtape.spec.evaluation import Cell, Evaluation
from benchtape.spec.identity import PreEffects, cell_identity, sandbox_policy, task_hash
from benchtape.store.database import Store

VERSIONS = {"claude-code": "2.1.328", "codex": "0.169.0", "mock": "0.1.0"}


def start_run(store: Store, ev: Evaluation) -> str:
    fields = run_fields(ev, argv=["benchtape", "run", ev.name])
    return store.new_run(fields.pop("kind"), **fields)


def record_cell(
    store: Store,
    run_id: str,
    ev: Evaluation,
    cell: Cell,
    outcome: str,
    *,
    cost: float | None = None,
    tokens: tuple[int, int, int, int] | None = (1000, 200, 5000, 800),
    wall_ms: float = 30_000.0,
    lines: tuple[int, int] = (3, 1),
    step_costs: list[float | None] | None = None,
    reason: str = "",
) -> str:
    """One measurement of `cell`: a session per step, the first one keying its outcome.
    `cost`: what the tool reported (None: it reported none, pricing decides)."""
    digest = task_hash(cell.task)
    identity = cell_identity(cell, versions=VERSIONS, task_digest=digest, sandbox=sandbox_policy(cell.task.scenario), pre=PreEffects.between({}, {}) if cell.arm.all_pre() else None)
    root = None
    costs = step_costs if step_costs is not None else [cost] + [cost] * (len(cell.arm.steps) - 1)
    for index, step in enumerate(cell.arm.steps):
        sid = store.new_session(run_id, **session_fields(ev.name, cell, identity, digest, index, parent_session=root))
        started = {"scenario": cell.task.id, "harness": step.harness, "model": step.model_id, "prompt": cell.task.scenario.prompt, "attempt": cell.attempt, "sandbox": "home"}
        started.update(started_extra(ev.name, cell, identity, digest, index, VERSIONS))
        metrics: dict[str, Any] = {"duration_ms": wall_ms * 0.9, "turns": 4}
        if tokens is not None:
            metrics.update(tokens_in=tokens[0], tokens_out=tokens[1], cache_read_tokens=tokens[2], cache_write_tokens=tokens[3])
        if costs[index] is not None:
            metrics["cost_usd"] = costs[index]
        store.append(
            sid,
            [
                Action("session.started", started),
                Action("message.user", {"text": cell.task.scenario.prompt}),
                Action("tool.call", {"call_id": "c1", "tool": "Read", "input": {"file_path": "calc.py"}}),
                Action("tool.result", {"call_id": "c1", "output": "def add(a, b): ...", "is_error": None}),
                Action("tool.call", {"call_id": "c2", "tool": "Edit", "input": {"file_path": "calc.py"}}),
                Action("tool.result", {"call_id": "c2", "output": "ok", "is_error": False}),
                Action("message.assistant", {"text": "done"}),
                Action("metrics", metrics),
                Action("session.finished", {"status": "ok" if outcome != "timeout" else "timeout", "exit_code": 0, "timed_out": outcome == "timeout", "wall_ms": wall_ms}),
            ],
        )
        root = root or sid
    diff = {"files": 1, "lines_added": lines[0], "lines_removed": lines[1], "paths": ["calc.py"]}
    decided = Outcome(outcome, reason or outcome)
    store.add_outcome(None, root, decided.outcome, decided.reason, {"diff": diff, "cell_id": identity.id})
    return root


def record_all(store: Store, ev: Evaluation, outcomes: dict[tuple[str, str, int], str], **kwargs: Any) -> str:
    """A run holding the given cells: (arm label, task id, attempt) → outcome."""
    run_id = start_run(store, ev)
    by_label = {a.label: a for a in ev.arms}
    tasks = {t.id: t for t in ev.tasks()}
    for (label, task, attempt), outcome in outcomes.items():
        record_cell(store, run_id, ev, Cell(by_label[label], tasks[task], attempt), outcome, **kwargs)
    return run_id
