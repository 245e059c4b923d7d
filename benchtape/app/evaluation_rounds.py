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
from typing import TYPE_CHECKING, Any, Sequence

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


def until_of(detect: str | None, until_decided: bool, max_cells: int | None, budget: str | None, round_tasks: int | None = None) -> dict[str, Any]:
    """EvaluationRequest's `detect` and `until` from the command line (a clear error for a
    limit without --until-decided, or a budget that is not an amount)."""
    from benchtape.replay.power import parse_difference

    if not until_decided and (max_cells is not None or budget is not None or round_tasks is not None):
        flag = "--max-cells" if max_cells is not None else "--budget" if budget is not None else "--round"
        raise BadInput(f"{flag} {'limits' if flag != '--round' else 'sizes'} a run in rounds", fix="add --until-decided, or leave it out")
    amount = None
    if budget is not None:
        try:
            amount = float(budget.strip().lstrip("$"))
        except ValueError:
            raise BadInput(f"--budget {budget!r} is not an amount in USD", fix="--budget 5 (or $5)") from None
        if amount <= 0:
            raise BadInput(f"--budget {budget!r} must be more than 0", fix="--budget 5")
    return {"detect": parse_difference(detect) if detect is not None else None, "until": Until(max_cells, amount, round_tasks or 5) if until_decided else None}


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
    doc = {**doc, "until_decided": preview_limits(doc, req.until, {key for key, _ in arms})}
    controls = [str(row.get("setup") or row.get("key")) for row in doc.get("setups", []) if row.get("key") not in {key for key, _ in arms} and row.get("to_run")]
    if controls:  # they were listed "to run" and never ran: compare then said the oracle was not measured, unexplained
        doc["notes"] = [*doc.get("notes", []), f"controls are not run in rounds ({', '.join(controls)}): run them with `benchtape run {req.name} --yes` (without --until-decided), so compare can say whether they hold"]
    if req.dry_run:
        show.preview(doc, plain, req.json_out)
        if not req.json_out:
            show.rounds_plan(req.until.round_tasks, _limits(req.until))
        return ExitCode.OK
    if not req.yes:
        if req.json_out or not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise BadInput("--until-decided runs cells (and spends); without a terminal to ask, consent is --yes", fix=f"preview it with `benchtape run {req.name} --until-decided --dry-run`, then add --yes")
        show.preview(doc, plain, False)
        if not show.confirm({**doc, "to_run": f"at most {doc['until_decided']['at_most_cells']}"}):
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
        todo, why = _within_limits(todo, req.until, ev.attempts, result, costs, order)
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


def preview_limits(doc: dict[str, Any], until: Until, arms: set[str]) -> dict[str, Any]:
    """What the preview says a run in rounds may run: at most the contenders' cells still to
    run (controls are never run in rounds), and never more than --max-cells; fewer when the
    pairs are decided first. The preview's own "to run" is the fixed design's."""
    to_run = sum(row["to_run"] for row in doc.get("setups", []) if row.get("key") in arms)
    at_most = to_run if until.max_cells is None else min(to_run, until.max_cells)
    return {"round_tasks": until.round_tasks, "max_cells": until.max_cells, "budget": until.budget, "at_most_cells": at_most, "fixed_design_cells": doc.get("to_run")}


def _limits(until: Until) -> str:
    """The stop rule's limits, as the end of the preview's --until-decided sentence."""
    parts = ([f"--max-cells {until.max_cells} (new cells)"] if until.max_cells else []) + ([f"--budget ${until.budget:g}"] if until.budget else [])
    return f", when the next round would pass {' or '.join(parts)}, or when the tasks run out" if parts else ", or when the tasks run out"


def _stored(store: BrowsingStore, ev: Any, pricing: Any, mine: set[str]) -> tuple[dict[str, dict[str, tuple[int, int]]], dict[str, Any]]:
    """Per-task counts of the evaluation as it is now, and costs: this invocation's spend and
    each setup's mean cost per cell (None where no stored cell was priced)."""
    from benchtape.replay.compare import current, expected_of, per_task_counts, read_measurements

    measurements, _ = read_measurements(store, pricing, evaluation=ev.name, fingerprints=ev.fingerprints())
    kept, _, _, _ = current(measurements, expected_of(ev))
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


def _within_limits(todo: dict[str, list[str]], until: Until, attempts: int, result: Rounds, costs: dict[str, Any], order: Sequence[str] = ()) -> tuple[dict[str, list[str]], str]:
    """The round trimmed to what --max-cells and --budget leave: whole tasks dropped from the
    end of the task order, from every setup that would run them at once — a task one setup of a
    pair measures alone is left out of the comparison, spend for nothing. Empty, with the
    reason, when not even the first task fits (its cells across the setups that need it)."""
    position = _positions(todo, order)
    plan = {arm: list(ts) for arm, ts in todo.items()}
    if until.budget is not None:
        unknown = [arm for arm in todo if costs["per_cell"].get(arm) is None]
        if unknown:
            return {}, f"budget: no stored cost per cell for {len(unknown)} setup(s) to spend ${until.budget:g} by (run a round without --budget, or price the model in pricing.yaml)"
    while plan:
        if _fits(plan, until, attempts, result, costs):
            return plan, ""
        last = max((t for ts in plan.values() for t in ts), key=position.__getitem__)
        plan = {arm: kept for arm, ts in plan.items() if (kept := [t for t in ts if t != last])}
    first = min((t for ts in todo.values() for t in ts), key=position.__getitem__)
    needs = {arm: [first] for arm, ts in todo.items() if first in ts}
    cells, setups = _cells(needs, attempts), len(needs)
    if until.max_cells is not None and result.cells_run + cells > until.max_cells:
        return {}, f"max cells: {result.cells_run} of --max-cells {until.max_cells} run; the next task needs {cells} more ({setups} setup(s) × {attempts} attempt(s))"
    return {}, f"budget: ${costs['spent']:.4f} of ${until.budget:g} spent; the next task ({cells} cell(s): {setups} setup(s) × {attempts} attempt(s)) would pass it"


def _positions(todo: dict[str, list[str]], order: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Each task's place in the evaluation's fixed order (else in the lists as given)."""
    given = {t: i for i, t in enumerate(order)}
    listed: dict[str, int] = {}
    for ts in todo.values():
        for i, t in enumerate(ts):
            listed[t] = max(listed.get(t, i), i)
    return {t: (given.get(t, len(given)), i) for t, i in listed.items()}


def _cells(plan: dict[str, list[str]], attempts: int) -> int:
    return sum(len(ts) for ts in plan.values()) * attempts


def _cost(plan: dict[str, list[str]], attempts: int, per_cell: dict[str, float | None]) -> float | None:
    """The plan's estimated cost by each setup's stored cost per cell; None if one is unknown."""
    total = 0.0
    for arm, ts in plan.items():
        per = per_cell.get(arm)
        if per is None:
            return None
        total += per * len(ts) * attempts
    return total


def _fits(plan: dict[str, list[str]], until: Until, attempts: int, result: Rounds, costs: dict[str, Any]) -> bool:
    if until.max_cells is not None and result.cells_run + _cells(plan, attempts) > until.max_cells:
        return False
    estimate = _cost(plan, attempts, costs["per_cell"])
    return not (until.budget is not None and estimate is not None and costs["spent"] + estimate > until.budget)
