"""How an evaluation's cells live in the event store: the tie between a session and its cell.

- The run: one `runs` row per `benchtape run EVALUATION` invocation, kind `evaluation`; its
  params archive the evaluation's name, file hash and every resolved arm, so later edits to
  overlays cannot rewrite what a stored cell was.
- The session: one `sessions` row per harness invocation. `cell_id` is the cell identity,
  `scenario` the task id, `attempt` the attempt index, `model` the API model id; `params`
  carries {evaluation, arm (key), step, step_index, steps, task_hash, reusable}. A workflow
  cell is one session per step, in order; steps after the first name the first step's session
  as `parent_session`, so one measurement of a cell is its first session and its children.
- `session.started` carries the same facts under `cell` (the run loop's `started_extra`).
- The outcome: [outcome, reason] with the diff summary and the resolved cost, stored with the
  grading that decided it, keyed by the measurement's first session (the store's `outcomes`;
  a re-grading decides again: the latest counts). The session's recorded stream is never
  written to; stores from before hold `cell.outcome` actions, read as their gradings' outcomes.
"""

from __future__ import annotations

from typing import Any

from benchtape.core.payloads import SessionStarted
from benchtape.core.run_kinds import EVALUATION as RUN_KIND  # noqa: E402 - runs.kind of an evaluation
from benchtape.spec.evaluation import Cell, Evaluation
from benchtape.spec.identity import CellIdentity


def run_fields(ev: Evaluation, argv: list[str] | None = None) -> dict[str, Any]:
    """Keyword arguments for `Store.new_run` of one evaluation invocation."""
    return {
        "kind": RUN_KIND,
        "bench_path": str(ev.path),
        "bench_sha256": ev.sha256,
        "argv": argv or [],
        "params": {
            "evaluation": ev.name,
            "attempts": ev.attempts,
            "benches": [str(p) for p in ev.bench_paths],
            "arms": {arm.key: arm.summary() for arm in ev.arms},
        },
    }


NOOP_MODEL = "mock-noop"  # the mock tool's `noop` model: the negative control's agent


def control_of(harness: str, model: str | None) -> str | None:
    """`oracle` (the positive control: the task's known fix) or `noop` (the negative control:
    the mock's no-op agent) when a step is a control, else None."""
    from benchtape.core.harnesses import CONTROL_HARNESSES

    if harness in CONTROL_HARNESSES:
        return harness
    return "noop" if harness == "mock" and model == NOOP_MODEL else None


def session_params(ev_name: str, cell: Cell, identity: CellIdentity, task_digest: str, step_index: int = 0) -> dict[str, Any]:
    step = cell.arm.steps[step_index]
    extra: dict[str, Any] = {}
    control = control_of(step.harness, step.model_id)
    if control is not None and cell.task.spec is not None:  # a task cell's control (bench cells keep their params as they were)
        extra["control"] = control
    if cell.task.spec is not None:
        extra["task_kind"] = cell.task.kind
    return {**extra,
        "evaluation": ev_name,
        "arm": cell.arm.key,
        "step": step.name,
        "step_index": step_index,
        "steps": len(cell.arm.steps),
        "task_hash": task_digest,
        "reusable": identity.reusable,
    }


def session_fields(ev_name: str, cell: Cell, identity: CellIdentity, task_digest: str, step_index: int = 0, parent_session: str | None = None) -> dict[str, Any]:
    """Keyword arguments for `Store.new_session` of one step of one cell (after `run_id`)."""
    step = cell.arm.steps[step_index]
    return {
        "scenario": cell.task.id,
        "cell_id": identity.id,
        "attempt": cell.attempt,
        "harness": step.harness,
        "model": step.model_id,
        "params": session_params(ev_name, cell, identity, task_digest, step_index),
        "parent_session": parent_session,
    }


def started_extra(ev_name: str, cell: Cell, identity: CellIdentity, task_digest: str, step_index: int = 0, versions: dict[str, str] | None = None) -> SessionStarted:
    """What `session.started` adds under `cell` (the run loop's `started_extra`)."""
    return {"cell": {"id": identity.id, "label": cell.arm.label, "task": cell.task.id, "attempt": cell.attempt, "versions": dict(versions or {}), **session_params(ev_name, cell, identity, task_digest, step_index)}}


def unstarted_actions(started: SessionStarted, cause: str, message: str) -> list[Any]:
    """A cell whose sandbox never opened (the engine is down, staging failed): the run loop
    still records a session for it, so the attempt is on record as an infrastructure error.
    `started` is the `session.started` payload the session would have had."""
    from benchtape.core.model import Action

    return [
        Action("session.started", started),
        Action("error", {"message": message, "cause": cause}),
        Action("session.finished", {"status": "error", "exit_code": None, "timed_out": False, "wall_ms": 0.0}),
    ]
