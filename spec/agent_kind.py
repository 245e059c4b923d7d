"""Who decided a session's actions: a model (an agent), a script, or a control.

A session whose model was a script — the mock tool's scripted agent, a real tool against
benchtape's scripted model server, the no-op agent — measured the pipeline (staging, the
tool's wiring, grading), not an agent: its pass rate says nothing about any model. The
positive control (`oracle`, the task's known fix) and the negative control (the no-op) check
the tasks, and are never contenders. Every place that lists or ranks sessions asks this one
function, so a script is never shown as an agent's measurement.
"""

from __future__ import annotations

from typing import Iterable

ORACLE = "oracle"  # the positive control: the task's known fix, no model
NOOP = "no-op"  # the negative control: the no-op agent changes nothing
SCRIPTED = "scripted"  # a script stood in for the model
CONTROLS = frozenset({ORACLE, NOOP})

_NOOP_MODELS = frozenset({"mock-noop", "noop"})
_SCRIPTED_MODELS = frozenset({"scripted", "mock"})

LABELS = {
    ORACLE: "control: the task's known fix (oracle)",
    NOOP: "control: no-op script",
    SCRIPTED: "scripted model, not an agent",
}
SHORT = {ORACLE: "control: oracle", NOOP: "control: no-op", SCRIPTED: "scripted"}


def agent_kind(harness: str | None, model: str | None, *, noop: bool = False) -> str | None:
    """`oracle`, `no-op`, `scripted`, or None for a real model. `harness` may be a tool's name
    (an evaluation arm's step names its tool, the built-in tools share their harness's name)."""
    if harness == "oracle" or model == "oracle":
        return ORACLE
    if noop or model in _NOOP_MODELS:
        return NOOP
    if harness == "mock" or model in _SCRIPTED_MODELS or (model or "").startswith(("scripted-", "mock-")):  # the solver plays a task's known fix: a script too
        return SCRIPTED
    return None


def arm_kind(steps: Iterable[tuple[str | None, str | None]]) -> str | None:
    """An arm's kind from its steps' (tool or harness, model id): the positive control when any
    step applies the known fix; the negative control when every step is the no-op (a workflow
    whose no-op step is followed by a working one is measured by that one, and was never
    ranked); else scripted when any step's model was a script, else None (an agent)."""
    kinds = [agent_kind(h, m) for h, m in steps]
    if ORACLE in kinds:
        return ORACLE
    if kinds and all(k == NOOP for k in kinds):
        return NOOP
    return SCRIPTED if SCRIPTED in kinds else None


def arm_kind_of_summary(summary: dict) -> str | None:
    """The kind of an arm as a run archives it (`Arm.summary()`: steps with tool and model_id)."""
    return arm_kind((s.get("tool"), s.get("model_id")) for s in summary.get("steps") or [])


def plays_part_of_fix(summary: dict) -> bool:
    """Whether an arm (as a run archives it) is the scripted solver playing part of each task's
    known fix (`solver-partial`: only its first edit in code, none when it has one), which must
    fail, and changes nothing where every fix is one edit."""
    from benchtape.spec.solver import SOLVER_MODELS

    steps = summary.get("steps") or []
    return bool(steps) and all(SOLVER_MODELS.get(str(s.get("model_id"))) is True for s in steps)


def plays_whole_fix(summary: dict) -> bool:
    """Whether an arm (as a run archives it) is the scripted solver playing a task's whole known
    fix through its harness (`solver`, not `solver-partial`): its candidate patch must be the
    oracle's, and one that is not was not carried as written."""
    from benchtape.spec.solver import SOLVER_MODELS

    steps = summary.get("steps") or []
    return bool(steps) and all(SOLVER_MODELS.get(str(s.get("model_id"))) is False for s in steps)
