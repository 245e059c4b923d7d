"""The read side of an evaluation run: which cells the store already measured, grading a
measurement into its outcome, and the cost a run would spend.

- Reuse: a cell is measured when a stored measurement of its identity by this evaluation
  (its first session, `cell_id` = the identity, no parent, in a run of the evaluation)
  ended in a reusable outcome (the one its latest grading decided) and its params say its
  identity was reusable (its `pre` effects were content-addressed). One batch query per 500
  identities, by the `sessions_cell` index (Store.measurement_roots).
- Grading: a measurement (a session per step) is graded through the one grading function
  (`benchtape.replay.grading.grade_stored`), on its final step's session (the final workspace, the
  final answer); its outcome is decided from every step's session, the verdicts and the
  agent's diff against the baseline recorded when it started (after staging and `pre`), and
  stored with the grading (Store.add_outcome: the `outcomes` table, keyed by grading and the
  measurement's first session), with the diff summary, the cost (the sum of its steps', null
  if any is unknown) and per-step metrics. The recorded stream is never written to: a
  re-grade of a reused measurement is a new grading with its own outcome (the latest counts).
- Estimate: per setup, the mean cost of its stored measurements (of the cells looked up);
  the mock and the scripted model spend nothing; otherwise unknown, so the total is a floor
  and says why.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from benchtape.core.model import Session
from benchtape.core.run_kinds import EVALUATION as RUN_KIND
from benchtape.replay.grading import grade_stored, new_grading, task_facts
from benchtape.replay.grading_judges import judge_for_grading
from benchtape.replay.metrics import grade_metrics
from benchtape.replay.outcomes import Outcome, agent_diff, decide, execution_outcome, graded_now, is_reusable, later_step_unstarted
from benchtape.replay.regrade import prepare
from benchtape.sandbox.treediff import read_snapshot
from benchtape.spec.bench import BenchSpec
from benchtape.spec.evaluation import Arm, Task
from benchtape.spec.pricing import FREE_MODELS, Pricing, session_cost, sum_known
from benchtape.store.views import BrowsingStore, GradingStore

if TYPE_CHECKING:
    from benchtape.sandbox.run_resources import RunResources

CHUNK = 500
LIVE = "live"
REGRADE = "regrade"


# ---------------------------------------------------------------- what the store holds


@dataclass
class StoredMeasurement:
    root: str
    run_id: str
    cell_id: str
    task: str
    reusable_identity: bool
    sessions: list[str] = field(default_factory=list)  # root first, then later steps in order
    outcome: dict[str, Any] | None = None  # what its latest grading decided (Store.latest_outcomes)
    recorded: dict[str, Any] | None = None  # its run's own outcome, which holds the steps' time and cost (a regrade's does not)

    @property
    def spent(self) -> dict[str, Any]:
        """What the measurement's run recorded of its steps and cost: the run's own outcome, which
        a later regrade's (the latest, holding neither) must not hide from the preview."""
        return self.recorded or self.outcome or {}

    @property
    def measured(self) -> bool:
        return self.reusable_identity and is_reusable((self.outcome or {}).get("outcome"))


@dataclass
class StoredCells:
    """Every stored measurement of the identities asked about, oldest first."""

    by_cell: dict[str, list[StoredMeasurement]] = field(default_factory=dict)

    def measured(self, cell_id: str) -> StoredMeasurement | None:
        """The latest measurement of the cell with a reusable outcome (what a run re-grades instead of re-running)."""
        return next((m for m in reversed(self.by_cell.get(cell_id, [])) if m.measured), None)

    def attempted(self, cell_id: str) -> int:
        """Stored attempts of the cell that are not measurements (execution failures, never graded)."""
        return sum(1 for m in self.by_cell.get(cell_id, []) if not m.measured)


def stored_cells(store: BrowsingStore, evaluation: str, cell_ids: Iterable[str], fingerprints: Mapping[str, str] | None = None) -> StoredCells:
    """The stored measurements of these identities made by this evaluation's runs (what
    `compare NAME` reads: a cell another evaluation measured is measured again here). Each
    one's outcome is the one compare counts (graded_now: by the task content each task id has
    now, `fingerprints`): a regrade made while its task was edited, the edit since undone,
    neither makes the cell look unmeasured nor stands for it."""
    roots: dict[str, StoredMeasurement] = {}
    for sid, run_id, cell_id, task, params in store.measurement_roots(list(dict.fromkeys(cell_ids)), run_kind=RUN_KIND, evaluation=evaluation):
        roots[sid] = StoredMeasurement(sid, run_id, cell_id, task, bool(params.get("reusable", True)), [sid])
    steps: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    for sid, parent, params in store.later_steps(list(roots)):  # a multi-step Harbor task's steps: one session each (task_step)
        steps[parent].append((int(params.get("step_index", 0)), int(params.get("task_step", 0)), sid))
    for sid, found in store.outcomes(list(roots)).items():
        roots[sid].outcome = graded_now(found, (fingerprints or {}).get(roots[sid].task))
        roots[sid].recorded = next((o for o in found if o.get("steps") is not None), None)
    out = StoredCells()
    for root in roots.values():
        root.sessions += [sid for _, _, sid in sorted(steps.get(root.root, []))]
        out.by_cell.setdefault(root.cell_id, []).append(root)
    return out


# ---------------------------------------------------------------- grading a measurement


def measurement_outcome(sessions: list[Session], verdicts: list[Any], diff: Any, protected: Iterable[str]) -> Outcome:
    """The outcome of a measurement: the first step that failed to execute decides; else the
    final step's verdicts and the agent's diff (benchtape.replay.outcomes.decide)."""
    for session in sessions[:-1]:
        failure = execution_outcome(session)
        if failure is not None:
            return failure
    return decide(sessions[-1], verdicts, diff, protected)


class CellGrader:
    """Grades the measurements of one invocation: one grading per bench and source (`live` for
    cells measured now, `regrade` for reused ones), created when first needed."""

    def __init__(self, store: GradingStore, run_id: str, pricing: Pricing, *, resources: RunResources | None = None):
        self.store, self.run_id, self.pricing = store, run_id, pricing
        self.resources = resources  # the run's files made ahead and cleanups, for restoring workspaces
        self._lock = threading.Lock()
        self._gradings: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}

    def grading_ids(self) -> list[str]:
        return [g for g, _ in self._gradings.values()]

    def _grading(self, bench: BenchSpec, source: str) -> tuple[str, dict[str, Any]]:
        key = (str(bench.path), source)
        with self._lock:
            if key not in self._gradings:
                prepared = prepare(bench)
                grading_id = new_grading(self.store, source, {sc.name: sc.checks for sc in bench.scenarios}, bench_path=str(bench.path), run_id=self.run_id, contexts={n: p.context for n, p in prepared.items()})
                judge = judge_for_grading(self.store, grading_id, mode="ask" if source == LIVE else "reuse", judges=bench.judges)
                self._gradings[key] = (grading_id, {n: replace(p, context=replace(p.context, judge=judge, resources=self.resources)) for n, p in prepared.items()})
            return self._gradings[key]

    def grade(self, task: Task, arm: Arm, sessions: list[str], *, source: str, vars: Mapping[str, Any] | None = None) -> Outcome:
        """Grade one measurement and decide its outcome, stored with the grading (keyed by the
        measurement's first session; an execution failure, never graded, has no grading)."""
        loaded = [self.store.load_session(s) for s in sessions]
        failure = next((f for f in (execution_outcome(s) for s in loaded) if f is not None), None)
        if failure is not None and later_step_unstarted(loaded):
            failure = None  # the verifiers say whether the earlier steps ever let it start (outcomes.decide)
        verdicts: list[Any] = []
        grading_id = None
        if failure is None:  # an attempt that did not execute is not graded (a judge would be asked for nothing)
            grading_id, prepared = self._grading(task.bench, source)
            prep = prepared[task.id]
            context = replace(prep.context, vars={**prep.context.vars, **(vars or {})})
            loaded[-1], verdicts = grade_stored(self.store, grading_id, sessions[-1], prep.checks, context)
            grade_metrics(self.store, grading_id, task.bench, sessions[0], loaded[-1], verdicts)  # keyed like the outcome: by the measurement's first session
        diff = self._diff(loaded, arm)
        outcome = failure or measurement_outcome(loaded, verdicts, diff, arm.protected_paths(task))
        steps = [self._step(arm, int((s.started.get("cell") or {}).get("step_index", i)), s, sid) for i, (s, sid) in enumerate(zip(loaded, sessions))]
        expected = len(arm.steps) * max(1, len(task.spec.runtime.steps) if task.spec is not None and task.spec.runtime is not None else 0)
        extra: dict[str, Any] = {
            "cell_id": loaded[0].started.get("cell", {}).get("id"),
            "source": source,
            "diff": diff.summary() if diff is not None else None,
            "cost_usd": sum_known([s["cost_usd"] for s in steps]) if len(steps) == expected else None,
            "steps": steps,
            **task_facts(verdicts),
        }
        self.store.add_outcome(grading_id, sessions[0], outcome.outcome, outcome.reason, extra)
        return outcome

    def _diff(self, loaded: list[Session], arm: Arm) -> Any:
        """The agent's change: the final snapshot against the tree the first step started from
        (its staged snapshot: benchtape's own writes into HOME included), or, for a session
        recorded before staged snapshots existed, the cell's baseline."""
        sha = (loaded[0].staged_snapshot or {}).get("sha256") or (loaded[0].started.get("cell") or {}).get("baseline")
        data = self.store.get_blob(sha) if sha else None
        if data is None:
            return None
        return agent_diff(self.store, loaded[-1], read_snapshot(data), arm.state_paths())

    def _step(self, arm: Arm, index: int, session: Session, session_id: str) -> dict[str, Any]:
        step = arm.steps[index] if index < len(arm.steps) else None
        m = session.metrics
        cost, source = session_cost(m, step.model_id if step else session.model, self.pricing)
        task_step = (session.task or {}).get("step") or {}
        return {
            "name": (step.name if step else f"#{index}") + (f" / {task_step['name']}" if task_step.get("name") else ""),
            "session": session_id,
            "tool": step.tool if step else session.harness,
            "model": step.model_id if step else session.model,
            "effort": step.effort if step else None,
            "status": session.status,
            "exit_code": session.exit_code,
            "wall_ms": m.wall_ms,
            "tokens_in": m.tokens_in,
            "tokens_out": m.tokens_out,
            "cost_usd": cost,
            "cost_source": source,
        }


# ---------------------------------------------------------------- what a run would spend


@dataclass
class Estimate:
    """The estimated spend of the cells a run would measure; a floor when some are unknown."""

    total: float = 0.0
    known_cells: int = 0
    unknown_cells: int = 0
    why_unknown: dict[str, str] = field(default_factory=dict)  # setup label → why it has no estimate

    @property
    def floor(self) -> bool:
        return self.unknown_cells > 0

    def to_dict(self) -> dict[str, Any]:
        return {"usd": round(self.total, 6), "floor": self.floor, "known_cells": self.known_cells, "unknown_cells": self.unknown_cells, "why_unknown": dict(self.why_unknown)}


def free(arm: Arm) -> bool:
    """Whether every step spends nothing: the mock agent, or a real binary against the scripted model."""
    return all(s.model_id in FREE_MODELS for s in arm.steps)


def estimate(arms_to_run: Mapping[str, tuple[Arm, int]], history: Mapping[str, list[float]], pricing: Pricing) -> Estimate:
    """`arms_to_run`: arm key → (arm, cells it would run); `history`: arm key → the known costs
    of its stored measurements."""
    out = Estimate()
    for key, (arm, cells) in arms_to_run.items():
        if not cells:
            continue
        if free(arm):
            out.known_cells += cells
            continue
        known = history.get(key) or []
        if known:
            out.total += cells * sum(known) / len(known)
            out.known_cells += cells
            continue
        out.unknown_cells += cells
        unpriced = [s.model_id for s in arm.steps if s.model_id not in FREE_MODELS and not pricing.priced(s.model_id)]
        out.why_unknown[arm.label] = f"{', '.join(dict.fromkeys(m or '?' for m in unpriced))} unpriced" if unpriced else "no stored measurement of this setup to estimate from"
    return out


def time_history(stored: StoredCells, arm_of: Mapping[str, str]) -> dict[str, list[float]]:
    """Arm key → the wall seconds of its stored measurements (each one's steps summed, from their
    latest outcomes); a measurement a step of which has no time is left out."""
    out: dict[str, list[float]] = defaultdict(list)
    for cell_id, found in stored.by_cell.items():
        for m in found:
            walls = [s.get("wall_ms") for s in m.spent.get("steps") or []]
            if walls and cell_id in arm_of and all(isinstance(w, (int, float)) for w in walls):
                out[arm_of[cell_id]].append(sum(walls) / 1000)
    return out


def estimate_time(arms_to_run: Mapping[str, tuple[Arm, int]], history: Mapping[str, list[float]]) -> dict[str, Any]:
    """The cell-seconds the cells to run would take, from each setup's stored cells (their mean):
    what the preview says besides the spend (a newcomer's 96 cells took 5 minutes it never said);
    a floor when a setup has no stored cell to time."""
    seconds, known, unknown, untimed = 0.0, 0, 0, []
    for key, (arm, cells) in arms_to_run.items():
        if not cells:
            continue
        walls = history.get(key) or []
        if walls:
            seconds += cells * sum(walls) / len(walls)
            known += cells
        else:
            unknown += cells
            untimed.append(arm.label)
    return {"cell_seconds": round(seconds, 1), "known_cells": known, "unknown_cells": unknown, "untimed": untimed}


def cost_history(stored: StoredCells, arm_of: Mapping[str, str]) -> dict[str, list[float]]:
    """Arm key → the known costs of its stored measurements (from their latest outcomes);
    `arm_of`: cell id → arm key, for the cells looked up."""
    out: dict[str, list[float]] = defaultdict(list)
    for cell_id, found in stored.by_cell.items():
        for m in found:
            cost = m.spent.get("cost_usd")
            if cost is not None and cell_id in arm_of:
                out[arm_of[cell_id]].append(float(cost))
    return out
