"""`benchtape run NAME --until-decided`: measure in rounds and stop when decided.

Each round: read what the store holds (every earlier round and run of the evaluation, so a
stopped evaluation resumes where it stood), ask the always-valid test which neighbouring
pairs of setups are decided (benchtape.replay.sequential), and run the next tasks — every
attempt of each — for the setups of the undecided pairs only, as one ordinary evaluation run
whose params record the round (its number, the tasks it adds per setup, the evidence before
it). Stops when every neighbouring pair is decided, the tasks run out, `--max-cells` or
`--budget` would be exceeded, or Ctrl-C; the report says which.

The cells run through `run_planned`, the one run loop of evaluations; nothing here records.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from benchtape.core.errors import BadInput, ExitCode

if TYPE_CHECKING:
    from benchtape.store.database import Store
    from benchtape.store.views import BrowsingStore


@dataclass(frozen=True)
class Until:
    """--until-decided's limits: new cells, dollars, and tasks per round per setup."""

    max_cells: int | None = None
    budget: float | None = None
    round_tasks: int = 5


def until_of(detect: str | None, until_decided: bool, max_cells: int | None, budget: str | None, round_tasks: int = 5) -> dict[str, Any]:
    """EvaluationRequest's `detect` and `until` from the command line (a clear error for a
    limit without --until-decided, or a budget that is not an amount)."""
    from benchtape.replay.power import parse_difference

    if not until_decided and (max_cells is not None or budget is not None):
        raise BadInput(f"{'--max-cells' if max_cells is not None else '--budget'} limits a run in rounds", fix="add --until-decided, or leave the limit out")
    amount = None
    if budget is not None:
        try:
            amount = float(budget.strip().lstrip("$"))
        except ValueError:
            raise BadInput(f"--budget {budget!r} is not an amount in USD", fix="--budget 5 (or $5)") from None
        if amount <= 0:
            raise BadInput(f"--budget {budget!r} must be more than 0", fix="--budget 5")
    return {"detect": parse_difference(detect) if detect is not None else None, "until": Until(max_cells, amount, round_tasks) if until_decided else None}


@dataclass
class Rounds:
    """What one `--until-decided` invocation did."""

    evaluation: str
    rounds: list[dict[str, Any]] = field(default_factory=list)
    cells_run: int = 0
    spent: float = 0.0
    stopped: str = ""
    decided: bool = False
    state: dict[str, Any] = field(default_factory=dict)
    fixed_design_cells: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def contenders(ev: Any) -> list[tuple[str, str]]:
    from benchtape.spec.agent_kind import CONTROLS, arm_kind

    return [(a.key, a.label) for a in ev.arms if arm_kind((s.harness, s.model_id) for s in a.steps) not in CONTROLS]


def run_until_decided(req: Any, store: Store | None, planned: Any, doc: dict[str, Any], pricing: Any, run_planned: Any, show: Any) -> int:
    """The rounds; `run_planned` is evaluation_run's, the one run loop (handed in: this module
    sits beside it, not under it); `show` the front end's EvaluationScreen."""
    from benchtape.app.stores import open_store
    from benchtape.replay.sequential import DECIDED, EXHAUSTED, task_order

    ev = planned.ev
    arms = contenders(ev)
    if len(arms) < 2:
        raise BadInput(f"--until-decided tells setups apart, and {ev.name} has {len(arms)} that is not a control", file=str(ev.path), fix="add a setup, or run without --until-decided")
    order = task_order(ev.name, [t.id for t in planned.tasks])
    plain = show.plain_wanted(req.plain)
    if req.dry_run:
        show.preview(doc, plain, req.json_out)
        if not req.json_out:
            show.rounds_plan(req.until.round_tasks, _limits(req.until))
        return ExitCode.OK
    if not req.yes:
        if req.json_out or not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise BadInput("--until-decided runs cells (and spends); without a terminal to ask, consent is --yes", fix=f"preview it with `benchtape run {req.name} --until-decided --dry-run`, then add --yes")
        show.preview(doc, plain, False)
        if not show.confirm({**doc, "to_run": f"up to {req.until.max_cells or doc['cells']}"}):
            print("nothing was run", file=sys.stderr)
            return ExitCode.OK
    store = store or open_store(req.db)
    result = Rounds(ev.name, fixed_design_cells=len(order) * len(arms) * ev.attempts)
    first = 1 + sum(1 for p in store.cell_run_params(run_kind="evaluation", evaluation=ev.name) if "round" in p)
    mine: set[str] = set()
    interrupted = False
    while True:
        counts, costs = _stored(store, ev, pricing, mine)
        st = _state(arms, counts, ev.attempts)
        result.state, result.decided = st.to_dict(), st.decided
        result.spent = costs["spent"]
        if st.decided:
            result.stopped = DECIDED
            break
        from benchtape.replay.sequential import next_tasks

        todo = next_tasks(st, order, counts, ev.attempts, req.until.round_tasks)
        if not todo:
            result.stopped = EXHAUSTED
            break
        todo, why = _within_limits(todo, req.until, ev.attempts, result, costs)
        if not todo:
            result.stopped = why
            break
        number = first + len(result.rounds)
        record = {"number": number, "tasks": todo, "before": st.to_dict(), "limits": {"max_cells": req.until.max_cells, "budget": req.until.budget}}  # compare says why it stopped from these
        wanted = {(arm, t) for arm, ts in todo.items() for t in ts}
        plans = [p for p in planned.plans if (p.cell.arm.key, p.cell.task.id) in wanted]
        sub = replace(req, tasks=sorted({t for _, t in wanted}), yes=True, until=None, run_params={"round": record})
        done = run_planned(replace(planned, plans=plans, fresh=False), store, sub, pricing, on_event=show.progress(plain) if not req.json_out else None)
        mine.add(done.run_id or "")
        result.cells_run += len(plans)
        result.rounds.append({"number": number, "run_id": done.run_id, "cells": len(plans), "tasks": todo})
        if done.interrupted:
            interrupted = True
            result.stopped = "interrupted (Ctrl-C): run the same command again to resume"
            break
    show.rounds(result.to_dict(), dict(arms), req.json_out)
    return ExitCode.INTERRUPTED if interrupted else ExitCode.OK


def _limits(until: Until) -> str:
    parts = ([f"at most {until.max_cells} new cell(s)"] if until.max_cells else []) + ([f"at most ${until.budget:g}"] if until.budget else [])
    return f", or at {' and '.join(parts)}" if parts else ", or when the tasks run out"


def _stored(store: BrowsingStore, ev: Any, pricing: Any, mine: set[str]) -> tuple[dict[str, dict[str, tuple[int, int]]], dict[str, Any]]:
    """Per-task counts of the evaluation as it is now, and costs: this invocation's spend and
    each setup's mean cost per cell (None where no stored cell was priced)."""
    from benchtape.replay.compare import current, expected_of, per_task_counts, read_measurements

    measurements, _ = read_measurements(store, pricing, evaluation=ev.name)
    kept, _, _ = current(measurements, expected_of(ev))
    spent = sum(m.cost or 0.0 for m in measurements if m.run_id in mine)
    per_cell: dict[str, float | None] = {}
    for arm in {m.arm for m in kept} | {a.key for a in ev.arms}:
        known = [m.cost for m in kept if m.arm == arm and m.cost is not None]
        per_cell[arm] = sum(known) / len(known) if known else _free(ev, arm)
    return per_task_counts(kept), {"spent": spent, "per_cell": per_cell}


def _free(ev: Any, arm: str) -> float | None:
    """0 for a setup whose every step's model costs nothing (a script, the mock); else unknown."""
    from benchtape.spec.pricing import FREE_MODELS

    found = next((a for a in ev.arms if a.key == arm), None)
    return 0.0 if found is not None and all(s.model_id in FREE_MODELS for s in found.steps) else None


def _state(arms: list[tuple[str, str]], counts: dict[str, dict[str, tuple[int, int]]], attempts: int) -> Any:
    from benchtape.replay.sequential import state

    return state([k for k, _ in arms], counts, attempts)


def _within_limits(todo: dict[str, list[str]], until: Until, attempts: int, result: Rounds, costs: dict[str, Any]) -> tuple[dict[str, list[str]], str]:
    """The round trimmed to what --max-cells and --budget leave (tasks dropped from the end,
    taking turns between setups); empty with the reason when nothing fits."""
    def cells(plan: dict[str, list[str]]) -> int:
        return sum(len(ts) for ts in plan.values()) * attempts

    def cost(plan: dict[str, list[str]]) -> float | None:
        total = 0.0
        for arm, ts in plan.items():
            per = costs["per_cell"].get(arm)
            if per is None:
                return None
            total += per * len(ts) * attempts
        return total

    if until.budget is not None:
        unknown = [arm for arm in todo if costs["per_cell"].get(arm) is None]
        if unknown:
            return {}, f"budget: no stored cost per cell for {len(unknown)} setup(s) to spend ${until.budget:g} by (run a round without --budget, or price the model in pricing.yaml)"
    plan = {arm: list(ts) for arm, ts in todo.items()}
    while plan:
        over_cells = until.max_cells is not None and result.cells_run + cells(plan) > until.max_cells
        estimate = cost(plan)
        over_budget = until.budget is not None and estimate is not None and costs["spent"] + estimate > until.budget
        if not (over_cells or over_budget):
            return plan, ""
        longest = max(plan, key=lambda arm: len(plan[arm]))
        plan[longest].pop()
        plan = {arm: ts for arm, ts in plan.items() if ts}
    if until.max_cells is not None and result.cells_run + attempts > until.max_cells:
        return {}, f"max cells: {result.cells_run} of --max-cells {until.max_cells} run; the next task needs {attempts} more"
    return {}, f"budget: ${costs['spent']:.4f} of ${until.budget:g} spent; the next task would pass it"
