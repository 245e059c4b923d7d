"""`compare`: rank an evaluation's setups from their stored cells, with honest statistics.

Rules (berbench G3 §3.3–3.4):
- Correctness first: only `passed` counts as a pass; execution failures (timeout,
  adapter_error, infrastructure_error) are attempted cells, not measurements.
- Only setups that measured every task rank; the others are listed under the table with
  the tasks they miss and the command that fills them (2/2 and 1/1 are not comparable).
- Cost, tokens, patch size and time are compared over the tasks the ranked setups all
  measured. Unknown cost is null, never zero, and excluded from totals; a setup with an
  unpriced cell does not rank on cost (the tie-break then skips cost for everyone).
- Cost of a cell: what its first grading priced it at (its outcome's `cost_usd`: a later
  pricing.yaml never rewrites it), else what the tool reported, else pricing.yaml × tokens,
  else unknown; a workflow's is the sum of its steps, unknown if any step's is.
- Each pass rate carries a 95% Wilson interval; pass@k over attempts (unbiased estimator);
  any two ranked setups get their paired per-task difference with an exact sign-test
  (McNemar with one attempt) p-value.

Reads only the store (sessions, their `metrics` and `session.finished` actions, and the
outcomes their gradings decided), a few queries in all, so thousands of cells answer in well
under a second.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from benchtape.core.gcpause import paused_gc
from benchtape.core.outcome_kinds import GUARD_VIOLATION, NO_CHANGES, OUTCOMES, PASSED, PATCH_APPLY_FAILED, is_reusable
from benchtape.core.run_kinds import EVALUATION as RUN_KIND
from benchtape.replay.conclusions import ALPHA, RANK_RULE, Flaky, MatrixCell, conclusion, flaky, matrix, p_in_force, pass_hat_k, shared_ranks
from benchtape.replay.inference import clustered_interval, clustered_se, holm, paired_interval, ratio_interval
from benchtape.replay.outcomes import graded_now
from benchtape.replay.stats import pass_at_k, sign_test, wilson
from benchtape.spec.agent_kind import CONTROLS, LABELS, ORACLE, SCRIPTED, SHORT, arm_kind, arm_kind_of_summary, plays_part_of_fix, plays_whole_fix
from benchtape.spec.pricing import Pricing, Rates, session_cost, sum_known, token_cost
from benchtape.store.views import BrowsingStore

_KINDS = ("metrics", "session.finished")
_TOKEN_FIELDS = ("tokens_in", "tokens_out", "cache_read_tokens", "cache_write_tokens")


# ---------------------------------------------------------------- what was stored


@dataclass
class Measurement:
    """One measurement of one cell: its first session and, for a workflow, its later steps."""

    session_id: str
    run_id: str
    arm: str
    task: str
    attempt: int
    cell_id: str | None
    task_hash: str | None
    started_at: float
    outcome: str | None = None
    reason: str | None = None
    cost: float | None = None
    tokens: int | None = None
    lines: int | None = None
    wall_ms: float | None = None
    steps: int = 1
    token_cost: float | None = None  # the price table × every token class (cache reads and writes at their own rates), whatever the tool reported
    cache_cost: float | None = None  # the part of token_cost that paid for cache reads and writes
    partial: float | None = None  # the share of the task's tests that passed, when its grading reports one
    candidate: str | None = None  # the sha256 of the candidate patch its grading applied (a task cell)

    @property
    def measured(self) -> bool:
        return is_reusable(self.outcome)


@dataclass
class _Session:
    row: tuple[Any, ...]
    params: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    wall_ms: float | None = None
    outcome: dict[str, Any] | None = None
    priced: float | None = None  # what the measurement cost as priced when it was graded first (its cost_usd then)


def read_measurements(store: BrowsingStore, pricing: Pricing, *, evaluation: str | None = None, runs: list[str] | None = None, metrics: bool = True, fingerprints: dict[str, str] | None = None) -> tuple[list[Measurement], dict[str, dict[str, Any]]]:
    """Every stored measurement of the evaluation (all its runs) or of these runs, and the
    archived arm summaries by key. `metrics` False (the planner, which counts passes): no
    cost, tokens or time, so the sessions' actions are not read (the most of this read).
    `fingerprints` (task id → its content as it is now): each measurement's outcome is its
    newest grading's made against that task (graded_now)."""
    where: dict[str, Any] = {"runs": runs} if runs else {"run_kind": RUN_KIND, "evaluation": evaluation}
    sessions: dict[str, _Session] = {}
    for row in store.cell_sessions(**where):
        sessions[row[0]] = _Session(row, row[6])
    for session_id, kind, d in store.cell_actions(_KINDS, **where) if metrics else ():
        s = sessions[session_id]
        if kind == "metrics":
            known = {k: v for k, v in d.items() if v is not None}
            if s.metrics:
                s.metrics.update(known)  # a later report of a field wins
            else:
                s.metrics = known
        else:
            s.wall_ms = d.get("wall_ms")
    for session_id, found in store.outcomes(list(sessions)).items():
        outcome = sessions[session_id].outcome = graded_now(found, (fingerprints or {}).get(sessions[session_id].row[2]))
        # its cost as priced when it was measured: a later pricing.yaml never rewrites it (a cost
        # nobody could price then is priced now, which fills a gap and rewrites nothing)
        sessions[session_id].priced = next((o["cost_usd"] for o in found if o.get("cost_usd") is not None), None)
        if outcome.get("grading_id") and sessions[session_id].params.get("task_kind") and "partial" not in outcome:
            outcome["partial"] = _task_share(store, outcome["grading_id"], session_id)
    arms: dict[str, dict[str, Any]] = {}
    for params in store.cell_run_params(**where):
        arms.update(params.get("arms") or {})
    return _measurements(sessions, pricing), arms


def _measurements(sessions: dict[str, _Session], pricing: Pricing) -> list[Measurement]:
    rates = _RatesByModel(pricing)
    out = []
    for root_id, members in _steps_by_cell(sessions).items():
        root = next(s for s in members if s.row[0] == root_id)
        _, run_id, task, cell_id, attempt, _, _, _, started_at = root.row
        params = root.params
        if len(members) > 1:
            members.sort(key=lambda s: (s.params.get("step_index", 0), s.row[8]))
        outcome = next((s.outcome for s in reversed(members) if s.outcome is not None), None) if root.outcome is None else root.outcome
        if root.priced is not None:
            cost: float | None = root.priced
        elif len(members) == 1:
            cost = session_cost(root.metrics, root.row[5], pricing)[0]
        else:
            cost = sum_known([session_cost(s.metrics, s.row[5], pricing)[0] for s in members])
        if len(members) == 1:  # most cells: one session, nothing to sum
            token_total, cache_total = _token_costs(root, rates(root.row[5]))
            wall_ms = root.wall_ms
        else:
            priced = [_token_costs(s, rates(s.row[5])) for s in members]
            token_total, cache_total = sum_known([t for t, _ in priced]), sum_known([c for _, c in priced])
            wall_ms = sum_known([s.wall_ms for s in members])
        diff = (outcome or {}).get("diff") or {}
        lines = diff.get("lines_added", 0) + diff.get("lines_removed", 0) if diff else None
        out.append(
            Measurement(
                session_id=root_id,
                run_id=run_id,
                arm=params.get("arm") or "?",
                task=task,
                attempt=attempt,
                cell_id=cell_id,
                task_hash=params.get("task_hash"),
                started_at=started_at,
                outcome=(outcome or {}).get("outcome"),
                reason=(outcome or {}).get("reason"),
                cost=None if cost is None else float(cost),
                tokens=_sum_tokens(members),
                lines=lines,
                wall_ms=None if wall_ms is None else float(wall_ms),
                steps=len(members),
                token_cost=token_total,
                cache_cost=cache_total,
                partial=_partial(outcome),
                candidate=(outcome or {}).get("candidate"),
            )
        )
    return out


def _steps_by_cell(sessions: dict[str, _Session]) -> dict[str, list[_Session]]:
    """Each measurement's steps (keyed by its first step's recording), one reading per step.

    A `reparse` stores another reading of a recording as a new session naming the recording
    as `parent_session`, as a workflow's later step names its first: so parentage alone
    cannot tell a step from a reading. A reading is of the same cell, attempt and step as
    its parent; a later step never is. The readings of one recording are one step (never
    summed: re-deriving actions does not run the agent again), `_newest_reading` of them."""
    readings: dict[str, list[_Session]] = defaultdict(list)
    for sid in sessions:
        readings[_recording_of(sid, sessions)].append(sessions[sid])
    groups: dict[str, list[_Session]] = defaultdict(list)
    for recording_id, of_it in readings.items():
        parent = sessions[recording_id].row[7]
        groups[parent if parent in sessions else recording_id].append(_newest_reading(of_it))
    return groups


def _recording_of(session_id: str, sessions: dict[str, _Session]) -> str:
    """The session that recorded what `session_id` reads: itself, unless it is a reparse of
    another session here (or a reparse of a reparse)."""
    seen = {session_id}
    while True:
        s = sessions[session_id]
        parent = s.row[7]
        if parent not in sessions or parent in seen or not _is_reading_of(s, sessions[parent]):
            return session_id
        session_id = parent
        seen.add(parent)


def _is_reading_of(s: _Session, parent: _Session) -> bool:
    """Whether `s` re-reads its parent's recording (a reparse keeps the cell, attempt and
    step), rather than being a workflow's later step (which has a step index of its own)."""
    same_cell = s.row[3] == parent.row[3] and s.row[4] == parent.row[4]
    return same_cell and s.params.get("step_index", 0) == parent.params.get("step_index", 0)


def _newest_reading(readings: list[_Session]) -> _Session:
    """One step from every reading of its recording: the recording's own row (its id, start
    and model: when it was measured, not when it was re-read), and each figure from the
    newest reading that has it. A reparse that lost a figure the run wrote beside the stream
    (or was never graded) does not change what was measured; one that re-derived it better wins."""
    if len(readings) == 1:
        return readings[0]
    original = min(readings, key=lambda s: (s.row[8], s.row[0]))
    newest_first = sorted(readings, key=lambda s: (s.row[8], s.row[0]), reverse=True)
    return _Session(
        original.row,
        original.params,
        metrics=next((s.metrics for s in newest_first if s.metrics), {}),
        wall_ms=next((s.wall_ms for s in newest_first if s.wall_ms is not None), None),
        outcome=next((s.outcome for s in newest_first if s.outcome is not None), None),
    )


class _RatesByModel:
    """The price table's complete rates of each model id, looked up once per model, not once per cell."""

    def __init__(self, pricing: Pricing) -> None:
        self.pricing = pricing
        self.known: dict[str | None, Rates | None] = {}

    def __call__(self, model_id: str | None) -> Rates | None:
        try:
            return self.known[model_id]
        except KeyError:
            found = self.known[model_id] = self.pricing.rates(model_id)
            return found


def _token_costs(s: _Session, rates: Rates | None) -> tuple[float | None, float | None]:
    """(every token priced by the table, the cache reads and writes alone); None when the model
    is unpriced (`rates` None) or a priced class was not reported."""
    if rates is None:
        return None, None
    total = token_cost(s.metrics, rates)
    if total is None:
        return None, None
    m = s.metrics
    return total, ((m.get("cache_read_tokens") or 0) * (rates.cache_read or 0.0) + (m.get("cache_write_tokens") or 0) * (rates.cache_write or 0.0)) / 1_000_000


def _task_share(store: BrowsingStore, grading_id: str, session_id: str) -> float | None:
    """A task cell's partial credit, from its verifier verdict's evidence: the share of its
    FAIL_TO_PASS tests that passed (`fail_to_pass_share`), where the grading recorded one.
    Read for task cells only (one query each: a mined task's cell is costly, so they are few)."""
    for verdict in store.verdicts(grading_id=grading_id, session_id=session_id):
        share = (verdict.get("evidence") or {}).get("fail_to_pass_share")
        if isinstance(share, (int, float)) and not isinstance(share, bool):
            return float(share)
    return None


def _partial(outcome: dict[str, Any] | None) -> float | None:
    """The share of the task's own tests (FAIL_TO_PASS) that passed, when its verifier's
    verdict recorded one (`_task_share`, kept on the outcome as `partial`); None otherwise."""
    value = (outcome or {}).get("partial")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _sum_tokens(members: list[_Session]) -> int | None:
    """Every token the model processed (input, cache read and write, output); None if no step reported any."""
    total, known = 0, True
    for s in members:
        values = [s.metrics.get(f) for f in _TOKEN_FIELDS]
        if all(v is None for v in values):
            known = False
            continue
        total += sum(int(v) for v in values if v is not None)
    return total if known else None


# ---------------------------------------------------------------- the comparison


@dataclass
class Expected:
    """What the evaluation asks for now (when its file is loadable): arms, tasks and their hashes."""

    arms: list[tuple[str, str]]  # (key, label) in the evaluation's order
    tasks: list[tuple[str, str | None]]  # (id, current content hash)
    attempts: int
    kinds: dict[str, str | None] = field(default_factory=dict)  # arm key → spec.agent_kind (None: an agent)
    skipped: dict[str, str] = field(default_factory=dict)  # task folders the evaluation lists but does not run now → their state (stale, unvalidated, …)


@dataclass
class SetupRow:
    arm: str
    label: str
    rank: int | None = None
    kind: str | None = None  # spec.agent_kind: oracle / no-op (controls, never ranked), scripted, or None (an agent)
    tasks_measured: int = 0
    tasks_total: int = 0
    missing: list[str] = field(default_factory=list)
    cells: int = 0
    passes: int = 0
    pass_rate: float | None = None
    ci: tuple[float, float] | None = None
    se: float | None = None  # standard error of the pass rate, clustered by task (attempts of a task are not independent)
    ci_clustered: tuple[float, float] | None = None  # pass rate ± t × se
    pass_at_1: float | None = None
    pass_at_k: float | None = None
    pass_hat_k: float | None = None  # all k attempts pass (pass^k)
    outcomes: dict[str, int] = field(default_factory=dict)
    attempted_failures: int = 0
    failures_by_outcome: dict[str, int] = field(default_factory=dict)  # execution failures (timeout, adapter_error, …), apart from failed
    cost_total: float | None = None
    cost_per_cell: float | None = None
    unpriced_cells: int = 0
    tokens_per_cell: float | None = None
    lines_per_cell: float | None = None
    time_per_cell_ms: float | None = None
    solved_tasks: float = 0.0  # Σ over tasks of the share of attempts that passed
    cost_per_solved: float | None = None  # Σ cost / tasks solved; None when unpriced or nothing solved
    cost_per_solved_ci: tuple[float, float] | None = None
    token_cost_per_cell: float | None = None  # the price table × tokens, cache reads and writes at their own rates
    cache_share: float | None = None  # the part of that token cost spent on cache reads and writes
    partial: float | None = None  # mean share of the task's tests passed (partial credit), when gradings report it
    fill: str | None = None

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def control(self) -> bool:
        return self.kind in CONTROLS

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        for key in ("ci", "ci_clustered", "cost_per_solved_ci"):
            d[key] = list(d[key]) if d[key] else None
        d["priced"] = self.unpriced_cells == 0
        d["control"] = self.control
        d["kind_label"] = LABELS.get(self.kind or "")
        return d


@dataclass
class Pair:
    a: str
    b: str
    tasks: int
    mean_difference: float  # a's per-task pass rate minus b's, averaged over the common tasks
    a_wins: int
    b_wins: int
    ties: int
    p_value: float
    p_adjusted: float | None = None  # over every pair when there are more than two setups (Holm; Bonferroni for e-values, as the rounds stop); else the raw p
    ci: tuple[float, float] | None = None  # 95% interval of mean_difference (replay.inference.paired_interval)
    test: str = "sign"  # `sign` (exact, fixed design) or `e-value` (p = 1/E, always valid: an evaluation run in rounds looked after each)

    @property
    def p(self) -> float:
        """The p-value the decision uses: adjusted when several pairs were tested."""
        return self.p_value if self.p_adjusted is None else self.p_adjusted

    @property
    def distinguishable(self) -> bool:
        return self.p < ALPHA

    @property
    def adjustment(self) -> str | None:
        """How `p_adjusted` was corrected for the other pairs: Holm (fixed design) or
        Bonferroni (e-values: the rule the rounds stopped on); None with one pair."""
        if self.p_adjusted is None:
            return None
        return "Bonferroni" if self.test == "e-value" else "Holm"

    @property
    def ci_note(self) -> str | None:
        """Why the interval and the call disagree, when they do: the interval is this pair's
        own fixed-design one, while the call pays for looking after every round (e-values)
        and for the other pairs tested (the adjustment); None when they agree."""
        if self.ci is None or (self.ci[0] > 0 or self.ci[1] < 0) == self.distinguishable:
            return None
        why = []
        if self.test == "e-value":
            why.append("it is the fixed-design interval, which does not pay for looking after every round")
        if self.adjustment:
            why.append(f"it is this pair's own, not {self.adjustment}-adjusted over the other pairs")
        if not why:
            why.append("with several attempts it is Student's t over the tasks, the call the sign test's")
        verdict = "excludes 0, yet the test in force calls no difference" if not self.distinguishable else "includes 0, yet the test in force calls a difference"
        return f"the interval {verdict}: {'; '.join(why)}; the call follows the test"

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["ci"] = list(self.ci) if self.ci else None
        d["distinguishable"] = self.distinguishable
        d["adjustment"] = self.adjustment
        d["ci_design"] = "fixed"  # the interval never pays for looking after each round (e-values) nor for the other pairs
        d["ci_note"] = self.ci_note
        return d


@dataclass
class Comparison:
    title: str
    evaluation: str | None
    tasks: list[str]
    attempts: int
    k: int
    rows: list[SetupRow]
    pairs: list[Pair]
    cost_ranked: bool
    stale: int
    measurements: int
    pricing_dates: list[str]
    retired: int = 0  # stored measurements of setups, tasks or attempts the evaluation no longer has
    conclusions: list[dict[str, Any]] = field(default_factory=list)  # one per pair of neighbours in the ranking
    flaky: list[Flaky] = field(default_factory=list)
    matrix: dict[str, dict[str, list[MatrixCell]]] = field(default_factory=dict)  # task → arm → attempts
    metrics: dict[str, dict[str, float | None]] = field(default_factory=dict)  # arm → the bench's declared metrics, mean per cell (replay.metrics.by_setup)
    sequential: dict[str, Any] = field(default_factory=dict)  # the always-valid test of `run --until-decided` (replay.sequential.State)
    rounds: list[dict[str, Any]] = field(default_factory=list)  # the rounds `run --until-decided` recorded (number, tasks per setup)
    unneeded: int = 0  # tasks left out of the ranking: run in rounds, not every setup measured them
    contamination: dict[str, Any] = field(default_factory=dict)  # replay.contamination: fix dates, cutoffs, tasks each setup may have seen
    after_cutoff: bool = False  # --after-cutoff: only tasks fixed after every setup's cutoff
    stopped: str | None = None  # an evaluation run in rounds: why it stands where it does (replay.sequential.why_stopped)
    plan: dict[str, Any] = field(default_factory=dict)  # replay.power.plan: the smallest difference this many tasks × attempts detects, from the stored rates
    uncarried: list[dict[str, str]] = field(default_factory=list)  # the solver's cells whose patch is not the oracle's (uncarried)
    idle_partial: list[str] = field(default_factory=list)  # solver-partial setups that changed nothing on any task
    stale_tasks: list[str] = field(default_factory=list)  # the tasks whose stored measurements are stale

    @property
    def ranked(self) -> list[SetupRow]:
        return [r for r in self.rows if r.rank is not None]

    @property
    def unranked(self) -> list[SetupRow]:
        """Contenders that did not measure every task (controls are listed apart, never ranked)."""
        return [r for r in self.rows if r.rank is None and not r.control]

    @property
    def controls(self) -> list[SetupRow]:
        return [r for r in self.rows if r.control]

    @property
    def measured(self) -> str:
        """`agents`, `pipeline` (every contender's model was a script), `mixed`, or `nothing`."""
        kinds = {r.kind == SCRIPTED for r in self.rows if not r.control and (r.cells or r.attempted_failures)}
        return "nothing" if not kinds else "mixed" if len(kinds) == 2 else "pipeline" if True in kinds else "agents"

    @property
    def headline(self) -> str | None:
        """What a reader must know before the table: when scripts stood in for models, this
        comparison measured benchtape's pipeline, not agents."""
        scripted = [r.label for r in self.rows if r.kind == SCRIPTED and (r.cells or r.attempted_failures)]
        if self.measured == "pipeline":
            return "this comparison measured the pipeline, not agents: every setup's model was a script (no model decided anything), so its pass rates say nothing about any model"
        if self.measured == "mixed":
            return f"{', '.join(scripted)}: a script stood in for the model; {'its' if len(scripted) == 1 else 'their'} rows measure the pipeline, not an agent"
        return None

    @property
    def correction(self) -> str | None:
        """The multiple-comparison rule, in words, when more than one pair was tested."""
        if len(self.pairs) < 2:
            return None
        if any(p.test == "e-value" for p in self.pairs):
            return f"{len(self.pairs)} pairs were tested: each always-valid p (1/E) is Bonferroni-adjusted over all of them (m/E; a difference is called only when it is < {ALPHA:g}, the bar E ≥ {len(self.pairs) / ALPHA:g} the rounds stopped on), so testing many pairs does not find differences by chance"
        return f"{len(self.pairs)} pairs were tested: each p-value is Holm-adjusted over all of them (a difference is called only when its adjusted p < {ALPHA:g}), so testing many pairs does not find differences by chance"

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "evaluation": self.evaluation,
            "tasks": self.tasks,
            "attempts": self.attempts,
            "k": self.k,
            "cost_ranked": self.cost_ranked,
            "stale_measurements": self.stale,
            "stale_tasks": self.stale_tasks,
            "retired_measurements": self.retired,
            "measurements": self.measurements,
            "pricing_dates": self.pricing_dates,
            "measured": self.measured,
            "headline": self.headline,
            "alpha": ALPHA,
            "correction": self.correction,
            "rank_rule": RANK_RULE,
            "ranked": [r.to_dict() for r in self.ranked],
            "unranked": [r.to_dict() for r in self.unranked],
            "controls": [r.to_dict() for r in self.controls],
            "pairs": [p.to_dict() for p in self.pairs],
            "conclusions": self.conclusions,
            "flaky": [f.to_dict() for f in self.flaky],
            "matrix": {task: {arm: [c.to_dict() for c in cells] for arm, cells in by_arm.items()} for task, by_arm in self.matrix.items()},
            "metrics": self.metrics,
            "sequential": self.sequential,
            "tasks_not_in_ranking": self.unneeded,
            "contamination": self.contamination,
            "after_cutoff": self.after_cutoff,
            "rounds": self.rounds,
            "stopped": self.stopped,
            "plan": self.plan,
            "uncarried": self.uncarried,
            "idle_partial": self.idle_partial,
        }


def compare(measurements: list[Measurement], arms: dict[str, dict[str, Any]], *, title: str, evaluation: str | None, expected: Expected | None = None, pricing_dates: Iterable[str] = (), ref: str | None = None, common_only: bool = False, limits: dict[str, Any] | None = None) -> Comparison:
    """Rank the setups. With `expected`, only the evaluation's current arms and tasks count and
    a measurement of an edited task (content hash changed) is stale, not evidence. `ref` names
    the evaluation in the commands that fill a setup's missing cells (default its name).
    `common_only` (an evaluation run in rounds, stopped when decided): rank over the tasks
    every setup measured, not the whole list, and say why it stopped (`limits`: those its last
    round recorded)."""
    stale = retired = 0
    stale_tasks: list[str] = []
    if expected is not None:
        arm_order = [key for key, _ in expected.arms]
        labels = dict(expected.arms)
        kinds = dict(expected.kinds)
        tasks = [t for t, _ in expected.tasks]
        attempts = expected.attempts
        measurements, stale, retired, stale_tasks = current(measurements, expected)
    else:
        arm_order = list(dict.fromkeys(m.arm for m in sorted(measurements, key=lambda m: m.started_at)))
        labels = {key: (arms.get(key) or {}).get("label") or key for key in arm_order}
        kinds = {key: arm_kind_of_summary(arms.get(key) or {}) for key in arm_order}
        tasks = sorted({m.task for m in measurements})
        attempts = max((m.attempt for m in measurements), default=1)

    chosen, failures = _choose(measurements)
    all_tasks = tasks
    if common_only:
        measuring = [key for key in arm_order if chosen.get(key) and kinds.get(key) not in CONTROLS]
        tasks = [t for t in tasks if measuring and all(chosen[key].get(t) for key in measuring)]
    graded_by_test = {m.task for m in measurements if m.partial is not None}  # tasks whose verifier reports the FAIL_TO_PASS share
    rows = [_row(key, labels[key], tasks, chosen.get(key, {}), failures.get(key, Counter()), attempts, graded_by_test) for key in arm_order]
    for row in rows:
        row.kind = kinds.get(row.arm)
    complete = [r for r in rows if r.complete and r.cells and not r.control]  # controls check the tasks: never contenders
    cost_ranked = bool(complete) and all(r.unpriced_cells == 0 for r in complete)
    # pass rate orders; the paired tests decide which neighbours share a rank; cost, tokens,
    # lines and time only order rows of equal pass rate for display
    complete.sort(key=lambda r: (-(r.pass_rate or 0.0), r.cost_per_cell if cost_ranked else 0.0, _last(r.tokens_per_cell), _last(r.lines_per_cell), _last(r.time_per_cell_ms)))
    rates = {r.arm: _task_rates(chosen[r.arm]) for r in complete}
    pairs = [_pair(a, b, all_tasks if common_only else tasks, chosen, attempts, rates) for a, b in itertools.combinations(complete, 2)]
    if common_only:
        _sequential(pairs)
    elif len(pairs) > 1:
        for pair, adjusted in zip(pairs, holm([p.p_value for p in pairs])):
            pair.p_adjusted = adjusted
    ranks = shared_ranks(complete, pairs)
    for row in complete:
        row.rank = ranks[row.arm]
    for row in rows:
        if (not row.complete or not row.cells) and not row.control:
            row.fill = fill_command(ref or evaluation, row.missing, len(tasks))
    ordered = complete + [r for r in rows if r.rank is None and not r.control] + [r for r in rows if r.control]
    result = Comparison(title, evaluation, tasks, attempts, attempts, ordered, pairs, cost_ranked, stale, len(measurements), list(pricing_dates), retired)
    result.unneeded = len(all_tasks) - len(tasks)
    result.stale_tasks = stale_tasks
    result.conclusions = _conclusions(complete, pairs, attempts)
    result.flaky = flaky(chosen, PASSED)
    result.matrix = matrix(measurements, chosen, all_tasks, arm_order)
    result.uncarried = uncarried(measurements, kinds, {key for key in arm_order if plays_whole_fix(arms.get(key) or {})}, labels)
    # a partial solver that changed nothing anywhere: every fix was one edit, so it played none
    result.idle_partial = [r.label for r in rows if plays_part_of_fix(arms.get(r.arm) or {}) and r.cells and set(r.outcomes) == {NO_CHANGES}]
    from benchtape.replay.sequential import state as sequential_state

    contenders = [r.arm for r in rows if not r.control and r.cells]
    if len(contenders) > 1:
        counts = {arm: {t: (len(ms), sum(1 for m in ms.values() if m.outcome == PASSED)) for t, ms in chosen.get(arm, {}).items() if ms} for arm in contenders}
        st = sequential_state(contenders, counts, attempts)
        result.sequential = st.to_dict()
        if common_only:
            from benchtape.replay.sequential import why_stopped

            result.stopped = why_stopped(st, all_tasks, counts, attempts, limits)
    return result


def uncarried(measurements: list[Measurement], kinds: Mapping[str, str | None], solvers: set[str], labels: Mapping[str, str]) -> list[dict[str, str]]:
    """The scripted solver's cells whose candidate patch is not the oracle's on the same task:
    the harness refused or rewrote part of the fix (Claude Code decoding a `\\uXXXX` in an Edit,
    aider rewriting a CRLF file as LF), which a passing verdict hid when the hidden tests do not
    touch that part (tomli #103). Said, never counted differently: a cell's verdict is its grading's."""
    fixes: dict[str, set[str]] = defaultdict(set)
    for m in measurements:
        if kinds.get(m.arm) == ORACLE and m.candidate:
            fixes[m.task].add(m.candidate)
    return [
        {"setup": labels.get(m.arm, m.arm), "task": m.task, "session": m.session_id, "outcome": m.outcome or ""}
        for m in measurements
        if m.arm in solvers and m.candidate and fixes.get(m.task) and m.candidate not in fixes[m.task]
    ]


def _sequential(pairs: list[Pair]) -> None:
    """An evaluation run in rounds was looked at after every round: only the always-valid
    test's p (1/E) keeps its promise, and several pairs are corrected by Bonferroni (m/E), the
    rule the rounds stopped on (E ≥ m/α), so `compare` and the rounds call the same pairs."""
    from benchtape.replay.sequential import e_value

    for pair in pairs:
        pair.p_value, pair.test = min(1.0, 1.0 / e_value(pair.a_wins, pair.b_wins)), "e-value"
        if len(pairs) > 1:
            pair.p_adjusted = min(1.0, len(pairs) * pair.p_value)


def current(measurements: list[Measurement], expected: Expected) -> tuple[list[Measurement], int, int, list[str]]:
    """(the measurements of the evaluation as it is now, how many are stale: their task's
    content changed, how many retired: a setup, task or attempt it no longer has, and the
    stale ones' tasks: a count alone left the user looking for which)."""
    labels, hashes = dict(expected.arms), dict(expected.tasks)
    kept: list[Measurement] = []
    stale: list[Measurement] = []
    retired = 0
    for m in measurements:
        if m.task in expected.skipped and m.arm in labels and m.attempt <= expected.attempts:
            stale.append(m)  # a listed task folder that is stale (or no longer valid) now: its cells measured the task as it was
        elif m.arm not in labels or m.task not in hashes or m.attempt > expected.attempts:
            retired += 1
        elif hashes[m.task] is not None and m.task_hash is not None and m.task_hash != hashes[m.task]:
            stale.append(m)
        else:
            kept.append(m)
    return kept, len(stale), retired, sorted({m.task for m in stale})


def _conclusions(order: list[SetupRow], pairs: list[Pair], attempts: int) -> list[dict[str, Any]]:
    by_arms = {(p.a, p.b): p for p in pairs}
    out = []
    for first, second in zip(order, order[1:]):
        stored = by_arms.get((first.arm, second.arm)) or by_arms[(second.arm, first.arm)]
        pair = stored if stored.a == first.arm else _flipped(stored)
        p_of = p_in_force(pair.test, [p.p_value for p in pairs if p is not stored])
        out.append({"a": first.arm, "b": second.arm, "p_value": pair.p_value, "p_adjusted": pair.p_adjusted, "distinguishable": pair.distinguishable, "shared_rank": first.rank == second.rank, "sentence": conclusion(pair, first.label, second.label, attempts, len(pairs), p_of)})
    return out


def _flipped(p: Pair) -> Pair:
    ci = (-p.ci[1], -p.ci[0]) if p.ci else None
    return Pair(p.b, p.a, p.tasks, -p.mean_difference, p.b_wins, p.a_wins, p.ties, p.p_value, p.p_adjusted, ci, p.test)


def fill_command(evaluation: str | None, missing: list[str], total: int) -> str:
    name = evaluation or "EVALUATION"
    if not missing or len(missing) == total:
        return f"benchtape run {name}"
    return f"benchtape run {name} " + " ".join(f"--task {t}" for t in missing)


def _last(value: float | None) -> float:
    return float("inf") if value is None else value


def per_task_counts(measurements: list[Measurement]) -> dict[str, dict[str, tuple[int, int]]]:
    """arm → task → (attempts measured, passes): the counting measurements (as `compare` picks
    them), for the planner and the sequential test."""
    chosen, _ = _choose(measurements)
    return {arm: {task: (len(ms), sum(1 for m in ms.values() if m.outcome == PASSED)) for task, ms in by_task.items() if ms} for arm, by_task in chosen.items()}


def _choose(measurements: list[Measurement]) -> tuple[dict[str, dict[str, dict[int, Measurement]]], dict[str, Counter[str]]]:
    """Per arm, task and attempt: the latest measurement with a reusable outcome. Execution
    failures and ungraded sessions are counted as attempts (per arm, by outcome), never as
    measurements."""
    chosen: dict[str, dict[str, dict[int, Measurement]]] = defaultdict(lambda: defaultdict(dict))
    failures: dict[str, Counter[str]] = defaultdict(Counter)
    for m in sorted(measurements, key=lambda m: m.started_at):
        if m.measured:
            chosen[m.arm][m.task][m.attempt] = m
        else:
            failures[m.arm][m.outcome or "ungraded"] += 1
    return chosen, failures


def _row(key: str, label: str, tasks: list[str], by_task: dict[str, dict[int, Measurement]], failures: Counter[str], k: int, graded_by_test: set[str] | frozenset[str] = frozenset()) -> SetupRow:
    row = SetupRow(arm=key, label=label, tasks_total=len(tasks), attempted_failures=sum(failures.values()), failures_by_outcome=dict(sorted(failures.items())))
    row.missing = [t for t in tasks if not by_task.get(t)]
    cells = [m for t in tasks for m in (by_task.get(t) or {}).values()]
    row.tasks_measured = len(tasks) - len(row.missing)
    row.cells = len(cells)
    row.passes = sum(1 for m in cells if m.outcome == PASSED)
    row.outcomes = {o: n for o, n in Counter(m.outcome for m in cells).items() if o in OUTCOMES}
    if not cells:
        return row
    row.pass_rate = row.passes / row.cells
    row.ci = wilson(row.passes, row.cells)
    per_task = [(len(ms), sum(1 for m in ms.values() if m.outcome == PASSED)) for ms in by_task.values() if ms]
    row.pass_at_1 = _mean([pass_at_k(n, c, 1) for n, c in per_task])
    row.pass_at_k = _mean([pass_at_k(n, c, k) for n, c in per_task])
    row.pass_hat_k = pass_hat_k(per_task, k)
    known_costs = [m.cost for m in cells if m.cost is not None]
    row.unpriced_cells = len(cells) - len(known_costs)
    cost_total = float(sum(known_costs)) if known_costs else None
    row.cost_total = cost_total
    row.cost_per_cell = cost_total / len(known_costs) if cost_total is not None else None
    row.tokens_per_cell = _mean([m.tokens for m in cells])
    row.lines_per_cell = _mean([m.lines for m in cells])
    row.time_per_cell_ms = _mean([m.wall_ms for m in cells])
    row.se = clustered_se(per_task)
    row.ci_clustered = clustered_interval(per_task)
    _cost_per_solved(row, by_task)
    token_costs = [m.token_cost for m in cells]
    if token_costs and all(c is not None for c in token_costs):
        total = sum(c for c in token_costs if c is not None)
        row.token_cost_per_cell = total / len(cells)
        cache = sum(m.cache_cost or 0.0 for m in cells)
        row.cache_share = cache / total if total > 0 else None
    row.partial = _mean([_credit(m, graded_by_test) for m in cells])
    return row


UNTESTED = (NO_CHANGES, GUARD_VIOLATION, PATCH_APPLY_FAILED)  # verdicts decided before the verifier ran a test: the candidate fixed none


def _credit(m: Measurement, graded_by_test: set[str] | frozenset[str]) -> float | None:
    """A cell's partial credit: its FAIL_TO_PASS share; 0.0 for a verdict reached before any
    test ran (nothing changed, a protected path touched, the patch not applied) on a task whose
    verifier reports shares — it fixed no test, and leaving it out would score a setup that
    changes nothing above one that tries; None (left out) where the task reports no share.
    Execution failures (a timeout, an infrastructure error) are not measurements: never here."""
    if m.partial is not None:
        return m.partial
    return 0.0 if m.outcome in UNTESTED and m.task in graded_by_test else None


def _cost_per_solved(row: SetupRow, by_task: dict[str, dict[int, Measurement]]) -> None:
    """Cost per solved task: each task's cost over its attempts against the share of its
    attempts that passed (a task solved in 1 of 2 attempts is half solved); the interval is
    clustered by task. Unknown when a cell's cost is."""
    per_task = []
    for ms in by_task.values():
        if not ms:
            continue
        costs = [m.cost for m in ms.values()]
        solved = sum(1 for m in ms.values() if m.outcome == PASSED) / len(ms)
        per_task.append((None if any(c is None for c in costs) else sum(c for c in costs if c is not None) / len(ms), solved))
    row.solved_tasks = sum(s for _, s in per_task)
    if not per_task or any(c is None for c, _ in per_task):
        return
    found = ratio_interval([(c or 0.0, s) for c, s in per_task])
    if found is not None:
        row.cost_per_solved, row.cost_per_solved_ci = found


def _mean(values: list[float | int | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _pair(a: SetupRow, b: SetupRow, tasks: list[str], chosen: dict[str, dict[str, dict[int, Measurement]]], attempts: int = 1, rates: dict[str, dict[str, float]] | None = None) -> Pair:
    """Two setups over their common tasks: per-task differences, wins, the sign test and the
    interval. `rates` (arm → task → pass rate) is computed once for every pair when given."""
    ra_of = rates[a.arm] if rates is not None else _task_rates(chosen[a.arm])
    rb_of = rates[b.arm] if rates is not None else _task_rates(chosen[b.arm])
    wins_a = wins_b = ties = 0
    diffs = []
    for task in tasks:
        ra, rb = ra_of.get(task), rb_of.get(task)
        if ra is None or rb is None:
            continue
        diffs.append(ra - rb)
        if ra > rb:
            wins_a += 1
        elif rb > ra:
            wins_b += 1
        else:
            ties += 1
    mean = sum(diffs) / len(diffs) if diffs else 0.0
    collapse = len(diffs) < 2 or len(set(diffs)) == 1
    table = _paired_table(chosen[a.arm], chosen[b.arm], tasks) if attempts <= 1 or collapse else (0, 0, 0, 0)  # only where the interval needs it
    ci = paired_interval(diffs, table, attempts)
    return Pair(a.arm, b.arm, len(diffs), mean, wins_a, wins_b, ties, sign_test(wins_a, wins_b), None, ci)


def _task_rates(by_task: dict[str, dict[int, Measurement]]) -> dict[str, float]:
    return {t: sum(1 for m in ms.values() if m.outcome == PASSED) / len(ms) for t, ms in by_task.items() if ms}


def _paired_table(a: dict[str, dict[int, Measurement]], b: dict[str, dict[int, Measurement]], tasks: list[str]) -> tuple[int, int, int, int]:
    """Attempt-paired cells: (both passed, only a, only b, neither)."""
    table = [0, 0, 0, 0]
    for task in tasks:
        ma, mb = a.get(task) or {}, b.get(task) or {}
        for n in ma.keys() & mb.keys():
            pa, pb = ma[n].outcome == PASSED, mb[n].outcome == PASSED
            table[0 if pa and pb else 1 if pa else 2 if pb else 3] += 1
    return table[0], table[1], table[2], table[3]


# ---------------------------------------------------------------- the front door's one call


def expected_of(ev: Any) -> Expected:
    """The current arms and tasks of a loaded Evaluation (task hashes read the testdata)."""
    from benchtape.spec.identity import task_hash

    kinds = {a.key: arm_kind((s.harness, s.model_id) for s in a.steps) for a in ev.arms}
    tasks: list[tuple[str, str | None]] = [(t.id, task_hash(t)) for t in ev.tasks()]
    return Expected(arms=[(a.key, a.label) for a in ev.arms], tasks=tasks, attempts=ev.attempts, kinds=kinds, skipped={s.id: s.state for s in ev.skipped})


def comparison(store: BrowsingStore, targets: list[str], pricing: Pricing, cwd: Any = None, *, after_cutoff: bool = False) -> Comparison:
    """`compare NAME` (every stored cell of that evaluation, against its current file when it
    loads) or `compare RUN…` (only those runs' cells). `after_cutoff`: only the tasks fixed
    after every setup's training cutoff (replay.contamination)."""
    with paused_gc():  # everything read stays alive until the comparison is made: nothing to collect
        return _comparison(store, targets, pricing, cwd, after_cutoff=after_cutoff)


def _comparison(store: BrowsingStore, targets: list[str], pricing: Pricing, cwd: Any = None, *, after_cutoff: bool = False) -> Comparison:
    from benchtape.core.errors import BadInput
    from benchtape.spec.evaluation import evaluation_ref, find_evaluation, load_evaluation

    if not targets:
        raise BadInput("name an evaluation or one or more run ids", fix="benchtape compare NAME   ·   benchtape compare RUN [RUN…]")
    if len(targets) == 1:
        name = targets[0]
        try:
            path: Any = find_evaluation(name, cwd)
        except BadInput:
            path = None
        stored = _newest_stored_run(store, name) if path is None else None
        ev = load_evaluation(str(path), cwd) if path is not None else _stored_evaluation_file(stored, name, cwd)
        ev_name = ev.name if ev is not None else name
        if ev is not None or stored is not None:
            measurements, arms = read_measurements(store, pricing, evaluation=ev_name, fingerprints=ev.fingerprints() if ev is not None else None)
            expected = expected_of(ev) if ev is not None else None
            ref = evaluation_ref(ev.path, cwd) if ev is not None else None
            rounds = stored_rounds(store, ev_name)
            dated = _contamination(ev, expected, after_cutoff) if ev is not None and expected is not None else None
            if after_cutoff and dated is None:
                raise BadInput("--after-cutoff needs the evaluation's file (its tasks' fix dates and its models' cutoffs)", fix=f"compare {name} from the project folder that holds it")
            limits = rounds[-1].get("limits") if rounds else None
            found = compare(measurements, arms, title=f"evaluation {ev_name}", evaluation=ev_name, expected=expected, pricing_dates=pricing.dates, ref=ref, common_only=bool(rounds), limits=limits)
            found.rounds = rounds
            if ev is not None and expected is not None:
                found.plan = _plan(ev, expected, measurements, sequential=bool(rounds))  # run in rounds: the always-valid test is in force
            if dated is not None:
                found.contamination, found.after_cutoff = dated.to_dict(), after_cutoff
            return _with_metrics(store, found, measurements)
    if after_cutoff:
        raise BadInput("--after-cutoff compares an evaluation by its name", fix="benchtape compare NAME --after-cutoff")
    run_ids = [_run_id(store, t, len(targets) == 1) for t in targets]
    measurements, arms = read_measurements(store, pricing, runs=run_ids)
    if not measurements:
        raise BadInput(f"run(s) {', '.join(run_ids)} hold no evaluation cells", fix="compare the runs of `benchtape run EVALUATION`, or name the evaluation")
    params = [(store.run(r) or {}).get("params") or {} for r in run_ids]
    names = sorted({p.get("evaluation") or "" for p in params} - {""})
    title = "runs " + ", ".join(run_ids)
    # runs made in rounds were looked at after each: the always-valid test is in force, as when
    # the evaluation is named (the run ids dropped it, and called a pair decided that it was not)
    rounds = _rounds_of(params)
    found = compare(measurements, arms, title=title, evaluation=names[0] if len(names) == 1 else None, pricing_dates=pricing.dates, common_only=bool(rounds), limits=rounds[-1].get("limits") if rounds else None)
    found.rounds = rounds
    return _with_metrics(store, found, measurements)


def _with_metrics(store: BrowsingStore, c: Comparison, measurements: list[Measurement]) -> Comparison:
    """The bench's declared metrics (`metrics:`, `derivedMetrics:`) per setup, beside the ranking (never in it)."""
    from benchtape.replay.metrics import by_setup

    c.metrics = by_setup(store, ((m.arm, m.session_id) for m in measurements if m.measured))
    return c


def _contamination(ev: Any, expected: Expected, after_cutoff: bool) -> Any:
    """Each task's fix date against each setup's training cutoff; with `after_cutoff`,
    `expected` keeps only the tasks fixed after every setup's cutoff (controls and scripted
    setups have no model that was trained on anything: they are left out of the rule)."""
    from benchtape.replay.contamination import after_cutoff as keep_after
    from benchtape.replay.contamination import arm_cutoff_sources, arm_cutoffs, contamination, fix_dates

    tasks = ev.tasks()
    if not any(getattr(getattr(t, "spec", None), "source", None) for t in tasks) and not after_cutoff:
        return None  # bench scenarios: nothing is dated, nothing to say
    dates = fix_dates(Path(ev.project), tasks)
    cutoffs = {k: c for k, c in arm_cutoffs(ev).items() if expected.kinds.get(k) not in CONTROLS and expected.kinds.get(k) != SCRIPTED}
    if after_cutoff:
        kept = set(keep_after(dates, cutoffs, dict(expected.arms)))
        expected.tasks = [(t, h) for t, h in expected.tasks if t in kept]
    return contamination(dates, cutoffs, arm_cutoff_sources(ev))


def _plan(ev: Any, expected: Expected, measurements: list[Measurement], *, sequential: bool = False) -> dict[str, Any]:
    """The planner's figures for this evaluation as it stands (the same as `run --dry-run`'s):
    the minimum detectable difference of its hardest pair at 80% power over the tasks compared,
    from the stored pass rates and their spread. Controls are never compared: left out."""
    from benchtape.replay.power import plan, setups_from

    contenders = [(key, label) for key, label in expected.arms if expected.kinds.get(key) not in CONTROLS]
    return plan(setups_from(contenders, per_task_counts(measurements)), len(expected.tasks), ev.attempts, sequential=sequential)


def evaluation_plan(store: BrowsingStore | None, ev: Any, tasks: list[str], detect: float | None = None, pricing: Pricing | None = None, *, sequential: bool = False) -> dict[str, Any]:
    """The plan of `ev` over these tasks (`run --dry-run`, `evaluation validate`), from the
    store's measurements of it where there are (`store` None: the defaults); replay.power does
    the arithmetic. Controls are left out: they are never compared. `sequential` (a run in
    rounds now) or rounds already stored: the always-valid test `compare` will use, so every
    command states the plan `compare` does (the preview planned the fixed design's test over
    an evaluation compare read in rounds: 44% against "can never tell two setups apart")."""
    from benchtape.replay.power import plan, setups_from

    arms = [(a.key, a.label) for a in ev.arms if arm_kind((s.harness, s.model_id) for s in a.steps) not in CONTROLS]
    per_arm: dict[str, dict[str, tuple[int, int]]] = {}
    if store is not None:
        measurements, _ = read_measurements(store, pricing or Pricing(), evaluation=ev.name, metrics=False, fingerprints=ev.fingerprints())  # passes per task: no costs
        per_arm = per_task_counts(measurements)
        sequential = sequential or bool(stored_rounds(store, ev.name))
    return plan(setups_from(arms, per_arm), len(tasks), ev.attempts, detect, sequential=sequential)


def stored_rounds(store: BrowsingStore, evaluation: str) -> list[dict[str, Any]]:
    """The rounds `run --until-decided` recorded for the evaluation (number, tasks per setup, the
    limits it ran under), in order."""
    return _rounds_of(store.cell_run_params(run_kind=RUN_KIND, evaluation=evaluation))


def _rounds_of(params: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rounds recorded in runs' params (`round`), in order."""
    found = [p["round"] for p in params if isinstance(p.get("round"), dict)]
    return sorted(({"number": r.get("number"), "tasks": r.get("tasks"), "limits": r.get("limits")} for r in found), key=lambda r: r["number"] or 0)


def _newest_stored_run(store: BrowsingStore, name: str) -> tuple[str | None] | None:
    """The newest stored run of the evaluation `name`, as (the file it was read from,); None
    when the store holds none."""
    run = store.newest_run_of(RUN_KIND, name)
    return None if run is None else (run.get("bench_path"),)


def _stored_evaluation_file(stored: tuple[str | None] | None, name: str, cwd: Any) -> Any:
    """The evaluation `name` as loaded from the file its newest stored run (`stored`) was read
    from (one run by its path is found by its name too); None when that file is gone, renamed
    or no longer loads: then the stored cells alone are compared."""
    from benchtape.core.errors import BadInput
    from benchtape.spec.evaluation import load_evaluation

    path = Path(stored[0]) if stored and stored[0] else None
    if path is None or not path.is_file():
        return None
    try:
        ev = load_evaluation(str(path), cwd)
    except BadInput:
        return None
    return ev if ev.name == name else None


def _run_id(store: BrowsingStore, target: str, only: bool) -> str:
    from benchtape.core.errors import BadInput

    try:
        found = store.resolve_id("runs", target)
    except LookupError as exc:
        raise BadInput(f"run id prefix {target!r} is ambiguous: {', '.join(exc.args[0])}", fix="give more characters of the run id") from None
    if found is None:
        what = f"no evaluation named {target!r} (no file in .benchtape/evaluations/, no stored cells) and no run with that id" if only else f"{target!r} is not a stored run id"
        raise BadInput(what, fix="benchtape compare NAME (an evaluation) or benchtape compare RUN [RUN…] (run ids from `benchtape sessions`)")
    return found


# ---------------------------------------------------------------- one text form for every renderer


def columns(k: int, partial: bool = False) -> list[str]:
    """The ranking table's columns, terminal and HTML alike: with one attempt pass@k is pass@1,
    shown once; the standard error clustered by task (`se`) only with several attempts (with
    one, each task is one cell and the Wilson interval says it all); partial credit only when
    some grading reported it."""
    return ["rank", "setup", "pass", "ci95", *(["se"] if k != 1 else []), "pass@1", *([f"pass@{k}", f"pass^{k}"] if k != 1 else []), "cost/cell", "tokens/cell", "lines/cell", "time/cell", *(["partial"] if partial else []), "outcomes"]


COST_COLUMNS = ["setup", "cost/cell", "cost/solved", "token $/cell"]  # the second table: what a solved task costs, and the tokens priced by the table


def has_partial(c: Comparison) -> bool:
    return any(r.partial is not None for r in c.rows)


def interval_of(row: SetupRow) -> tuple[float, float] | None:
    """The pass rate's 95% interval as shown: task-clustered with several attempts per task
    (attempts of one task are not independent), Wilson over cells with one."""
    return row.ci_clustered if row.ci_clustered is not None and row.cells > row.tasks_measured else row.ci


def setup_label(row: SetupRow) -> str:
    """A setup's name, with what stood in for its model when it was not an agent."""
    return row.label + (f" [{SHORT[row.kind]}]" if row.kind else "")


def display(row: SetupRow, k: int) -> dict[str, str]:
    """A setup's figures as text (terminal and HTML alike); unknown is `—`, never 0."""
    shown_ci = interval_of(row)
    ci = f"{_pct(shown_ci[0])}–{_pct(shown_ci[1])}" if shown_ci else "—"
    cost = "—" if row.cost_per_cell is None else f"${row.cost_per_cell:.4f}" + ("+" if row.unpriced_cells else "")
    if row.cost_per_solved is None:
        solved = "—" if row.solved_tasks or row.cost_per_cell is None else "none solved"
    else:
        solved = f"${row.cost_per_solved:.4f}" + (f" ({row.cost_per_solved_ci[0]:.4f}–{row.cost_per_solved_ci[1]:.4f})" if row.cost_per_solved_ci else "")
    token = "—" if row.token_cost_per_cell is None else f"${row.token_cost_per_cell:.4f}" + (f" ({row.cache_share:.0%} cache)" if row.cache_share is not None else "")
    return {
        "rank": str(row.rank) if row.rank is not None else "",
        "setup": setup_label(row),
        "pass": f"{row.passes}/{row.cells}" + (f" ({_pct(row.pass_rate)})" if row.pass_rate is not None else ""),
        "ci95": ci,
        "se": "—" if row.se is None else f"{row.se:.1%}",  # a spread: one decimal (12.5%, not 12%)
        "pass@1": _pct(row.pass_at_1),
        f"pass@{k}": _pct(row.pass_at_k),
        f"pass^{k}": _pct(row.pass_hat_k),
        "cost/cell": cost,
        "cost/solved": solved,
        "token $/cell": token,
        "partial": _pct(row.partial),
        "tokens/cell": "—" if row.tokens_per_cell is None else f"{row.tokens_per_cell:,.0f}",
        "lines/cell": "—" if row.lines_per_cell is None else f"{row.lines_per_cell:.1f}",
        "time/cell": "—" if row.time_per_cell_ms is None else f"{row.time_per_cell_ms / 1000:.1f}s",
        "outcomes": ", ".join(f"{o} {n}" for o, n in sorted(row.outcomes.items())) + (f"; not measured: {', '.join(f'{o} {n}' for o, n in row.failures_by_outcome.items())}" if row.attempted_failures else ""),
    }


OUTCOME_MARKS = {"passed": "pass", "failed": "fail", "no_changes": "no_changes", "guard_violation": "guard", "patch_apply_failed": "patch"}


def matrix_text(cells: list[MatrixCell]) -> str:
    """One matrix cell as text, terminal and HTML alike: each attempt's outcome in order, an
    execution failure (not a measurement) in brackets; `—` when nothing was stored."""
    if not cells:
        return "—"
    return " ".join(OUTCOME_MARKS.get(c.outcome or "", c.outcome or "ungraded") if c.measured else f"[{c.outcome or 'ungraded'}]" for c in cells)


def pair_line(p: Pair) -> str:
    """One pair's figures as text, terminal and HTML alike."""
    design = "fixed-design " if p.test == "e-value" else ""  # the interval does not pay for looking after each round
    ci = f" ({design}95% CI {p.ci[0]:+.0%} to {p.ci[1]:+.0%})" if p.ci else ""
    adjusted = f", {p.adjustment}-adjusted p = {p.p_adjusted:.3g}" if p.p_adjusted is not None else ""
    verdict = "distinguishable" if p.distinguishable else "not distinguishable"
    name = "always-valid p = 1/E" if p.test == "e-value" else "p"
    note = f" ({p.ci_note})" if p.ci_note else ""
    return f"{p.mean_difference:+.0%}{ci} over {p.tasks} task(s), A better {p.a_wins}, B better {p.b_wins}, same {p.ties}, {name} = {p.p_value:.3g}{adjusted}: {verdict}{note}"


def plan_lines(c: Comparison) -> list[str]:
    """The planner's sentences for the evaluation as it stands (`plan_sentences`)."""
    return plan_sentences(c.plan) if c.plan else []


def plan_sentences(plan: dict[str, Any]) -> list[str]:
    """The plan in words (`compare`, `run --dry-run`, `evaluation validate`): the smallest
    detectable difference between two setups (replay.power.sentences). With one setup (controls
    aside) there is nothing to tell apart: the figure would be the difference between two
    imaginary default setups, so it is not said."""
    from benchtape.replay.power import sentences

    setups = plan.get("setups", 2)
    if setups == 1:
        return ["plan: one setup (controls aside): nothing to compare it with; add a setup to plan the difference this evaluation can detect"]
    if setups == 0:
        return ["plan: no setup but the controls: nothing to compare"]
    return sentences(plan)


def rounds_lines(c: Comparison) -> list[str]:
    """An evaluation run in rounds: each neighbouring pair's evidence, and why it stopped."""
    if not (c.rounds and c.sequential):
        return []
    labels = {r.arm: r.label for r in c.rows}
    out = [f"{labels.get(p['a'], p['a'])} vs {labels.get(p['b'], p['b'])}: E = {p['e']:.3g} (needs {p['threshold']:.3g}): {'told apart' if p['decided'] else 'undecided'}" for p in c.sequential["neighbours"]]
    return out + ([f"stopped: {c.stopped}"] if c.stopped else [])


def control_lines(c: Comparison) -> list[str]:
    """Each control's result and what it should be: the oracle passes every task, the no-op none."""
    from benchtape.spec.agent_kind import NOOP, ORACLE

    out = []
    for r in c.controls:
        expect = {ORACLE: "should pass every task", NOOP: "should pass none"}.get(r.kind or "", "")
        state = "not measured" if not r.cells else ("holds" if control_holds(r.kind, r.passes, r.cells) else "DOES NOT HOLD: a task or its checks are broken")
        out.append(f"{r.label} [{SHORT.get(r.kind or '', '')}]: {r.passes}/{r.cells} passed ({expect}): {state}")
    return out


def control_holds(kind: str | None, passes: int, cells: int) -> bool:
    """The oracle passes every cell it was measured on, the no-op none."""
    from benchtape.spec.agent_kind import NOOP

    return (kind == ORACLE and passes == cells) or (kind == NOOP and passes == 0)


def broken_controls(ev: Any, outcomes: Mapping[str, Mapping[str, int]]) -> list[str]:
    """What `run EVALUATION` says of a control whose cells measured now did not come out as a
    control must (the oracle passing every task, the no-op none), as control_lines says it of
    every stored cell: the run had said nothing, and exited 0 (a failed cell is a result)."""
    from benchtape.core.outcome_kinds import EXECUTION_FAILURES, PASSED
    from benchtape.spec.agent_kind import NOOP, ORACLE, arm_kind

    out = []
    for arm in ev.arms:
        kind = arm_kind((s.harness, s.model_id) for s in arm.steps)
        counts = outcomes.get(arm.label) or {}
        measured = {o: n for o, n in counts.items() if o not in EXECUTION_FAILURES}
        total, passes = sum(measured.values()), measured.get(PASSED, 0)
        # the oracle that could not even run (its solve.sh failed, it timed out) holds nothing up either
        unrun = {o: n for o, n in counts.items() if o in EXECUTION_FAILURES and n} if kind == ORACLE else {}
        if kind not in (ORACLE, NOOP) or (control_holds(kind, passes, total) and not unrun):
            continue
        if kind == ORACLE:
            cells = total + sum(unrun.values())
            why = f" ({', '.join(f'{o} {n}' for o, n in sorted(unrun.items()))}: attempted, not measured)" if unrun else ""
            out.append(f"control DOES NOT HOLD: {arm.label} (the oracle) did not pass {cells - passes} of {cells} cell(s){why}: a task or its checks are broken; see benchtape task controls, or benchtape compare {ev.name}")
        else:
            out.append(f"control DOES NOT HOLD: {arm.label} (the no-op) passed {passes} of {total} cell(s): a check passes without any work; see benchtape compare {ev.name}")
    return out


def notes(c: Comparison) -> list[str]:
    """What a reader must know to read the table right."""
    out = []
    if c.ranked and not c.cost_ranked:
        out.append("cost does not rank: a ranked setup has cells of unknown cost (a `+` marks a figure over the priced cells only, a floor)")
    if c.stale:
        which = f" ({', '.join(c.stale_tasks[:10])}{' …' if len(c.stale_tasks) > 10 else ''})" if c.stale_tasks else ""
        out.append(f"{c.stale} stored measurement(s) of stale tasks{which} are not counted (the task was edited since, or is no longer valid): re-validate it (benchtape task validate{' ' + ' '.join(c.stale_tasks[:10]) if c.stale_tasks else ''}), then re-run to measure it")
    if c.retired:
        out.append(f"{c.retired} stored measurement(s) of setups, tasks or attempts the evaluation no longer lists are not counted")
    if c.pricing_dates:
        out.append(f"prices as of {', '.join(sorted(set(c.pricing_dates)))} where the tool reported no cost")
    shared = sorted({r.rank for r in c.ranked if r.rank is not None and sum(1 for o in c.ranked if o.rank == r.rank) > 1})  # a ranked row has its rank
    if shared:
        out.append(f"rank {', '.join(map(str, shared))} is shared: the paired test cannot tell those setups apart (the order within a shared rank is by pass rate, then cost, tokens, lines, time: a display order, not a win)")
    if c.ranked:
        out.append("ranks: " + RANK_RULE)
    if has_partial(c):  # a column beside a model called solver-partial read as its name (a structlog try)
        out.append("partial: the mean over a setup's cells of the FAIL_TO_PASS tests passed over the FAIL_TO_PASS tests plus the PASS_TO_PASS tests broken (partial credit: a broken test counts as one more the fix failed; shown beside the pass rate and never counted as a pass); a cell that changed nothing, touched a protected path or whose patch did not apply fixed no test and counts 0; execution failures (timeout, infrastructure error) and tasks without per-test lists are left out; — where no cell counts")
    if c.idle_partial:
        out.append(f"{', '.join(c.idle_partial)} changed nothing on any task: each known fix here is a single edit, of which the partial solver plays none (it plays only a fix's first edit, and none of a fix of one), so this control tested nothing on these tasks (its no_changes say nothing of the checks)")
    if c.uncarried:
        shown = "; ".join(f"{u['setup']} on task {u['task']} ({u['outcome'] or 'not graded'}, session {u['session'][:12]})" for u in c.uncarried[:5])
        out.append(f"{len(c.uncarried)} solver cell(s) did not carry the known fix as written (their patch is not the oracle's: the harness refused or rewrote part of it): {shown}{' …' if len(c.uncarried) > 5 else ''}; `benchtape show SESSION --diff` against the oracle's")
    if c.correction:
        out.append(c.correction)
    if any(p.test == "e-value" for p in c.pairs):
        out.append("run in rounds: each pair's 95% interval is the fixed-design one (it does not pay for looking after every round, nor for the other pairs), so it can exclude 0 while the always-valid test calls no difference; the call, the ranks and the sentences follow the test")
    if c.contamination:
        labels = {r.arm: r.label for r in c.rows}
        for arm, seen in c.contamination["may_have_been_seen"].items():
            if seen:
                source = (c.contamination.get("cutoff_sources") or {}).get(arm)
                cutoff = c.contamination["cutoffs"][arm] + (f", as published at {source}" if source else "")
                out.append(f"{labels.get(arm, arm)}: {len(seen)} task(s) were fixed on or before its model's training cutoff ({cutoff}) and may have been seen: {', '.join(seen[:10])}{' …' if len(seen) > 10 else ''}" + ("" if c.after_cutoff else " (`compare --after-cutoff` leaves them out)"))
        unknown = [labels.get(a, a) for a, cut in c.contamination["cutoffs"].items() if cut is None]
        if unknown:
            out.append(f"no published cutoff for {', '.join(unknown)} (the registry records none): whether it saw a task's fix cannot be said")
        if c.after_cutoff:
            out.append(f"--after-cutoff: only the {len(c.tasks)} task(s) fixed after every setup's training cutoff count")
    if c.unneeded:
        from benchtape.replay.sequential import DECIDED

        # "not needed" only when the pairs were decided first: a --max-cells or --budget stop (or an interruption) left them unrun
        why = "were not needed: every pair was decided first" if c.stopped == DECIDED else "were not measured by every setup before the rounds stopped (see `stopped:` above)"
        out.append(f"run in rounds (--until-decided): ranked over the {len(c.tasks)} task(s) every setup measured; {c.unneeded} task(s) {why}")
    if not c.ranked:
        out.append("no setup measured every task: nothing ranks yet")
    return out


def _pct(value: float | None) -> str:
    """A rate as a percentage, whole where that is true, else with as many decimals as it
    takes (up to 4) not to read as 0% or 100% when it is neither: the upper bound of 0/10000
    is 0.04%, not "0%"."""
    if value is None:
        return "—"
    for places in range(5):
        text = f"{value:.{places}%}"
        whole = round(value * 100, places)
        if (value == 0 or whole != 0) and (value == 1 or whole != 100):
            return text
    return text
