"""`compare`: rank an evaluation's setups from their stored cells, with honest statistics.

Rules (berbench G3 §3.3–3.4):
- Correctness first: only `passed` counts as a pass; execution failures (timeout,
  adapter_error, infrastructure_error) are attempted cells, not measurements.
- Only setups that measured every task rank; the others are listed under the table with
  the tasks they miss and the command that fills them (2/2 and 1/1 are not comparable).
- Cost, tokens, patch size and time are compared over the tasks the ranked setups all
  measured. Unknown cost is null, never zero, and excluded from totals; a setup with an
  unpriced cell does not rank on cost (the tie-break then skips cost for everyone).
- Cost of a cell: what the tool reported, else pricing.yaml × tokens, else unknown; a
  workflow's is the sum of its steps, unknown if any step's is.
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
from typing import Any, Iterable

from benchtape.core.run_kinds import EVALUATION as RUN_KIND
from benchtape.replay.conclusions import Flaky, MatrixCell, conclusion, flaky, matrix, pass_hat_k, shared_ranks
from benchtape.replay.outcomes import OUTCOMES, PASSED, is_reusable
from benchtape.replay.stats import pass_at_k, sign_test, wilson
from benchtape.spec.pricing import Pricing, session_cost, sum_known
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


def read_measurements(store: BrowsingStore, pricing: Pricing, *, evaluation: str | None = None, runs: list[str] | None = None) -> tuple[list[Measurement], dict[str, dict[str, Any]]]:
    """Every stored measurement of the evaluation (all its runs) or of these runs, and the
    archived arm summaries by key."""
    where: dict[str, Any] = {"runs": runs} if runs else {"run_kind": RUN_KIND, "evaluation": evaluation}
    sessions: dict[str, _Session] = {}
    for row in store.cell_sessions(**where):
        sessions[row[0]] = _Session(row, row[6])
    for session_id, kind, d in store.cell_actions(_KINDS, **where):
        s = sessions[session_id]
        if kind == "metrics":
            s.metrics.update((k, v) for k, v in d.items() if v is not None)
        else:
            s.wall_ms = d.get("wall_ms")
    for session_id, outcome in store.latest_outcomes(list(sessions)).items():
        sessions[session_id].outcome = outcome
    arms: dict[str, dict[str, Any]] = {}
    for params in store.cell_run_params(**where):
        arms.update(params.get("arms") or {})
    return _measurements(sessions, pricing), arms


def _measurements(sessions: dict[str, _Session], pricing: Pricing) -> list[Measurement]:
    groups: dict[str, list[_Session]] = defaultdict(list)
    for sid, s in sessions.items():
        parent = s.row[7]
        groups[parent if parent in sessions else sid].append(s)
    out = []
    for root_id, members in groups.items():
        root = sessions[root_id]
        _, run_id, task, cell_id, attempt, _, _, _, started_at = root.row
        params = root.params
        if len(members) > 1:
            members.sort(key=lambda s: (s.params.get("step_index", 0), s.row[8]))
        outcome = next((s.outcome for s in reversed(members) if s.outcome is not None), None) if root.outcome is None else root.outcome
        costs = [session_cost(s.metrics, s.row[5], pricing)[0] for s in members]
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
                cost=sum_known(costs),
                tokens=_sum_tokens(members),
                lines=lines,
                wall_ms=sum_known([s.wall_ms for s in members]),
                steps=len(members),
            )
        )
    return out


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
    skipped: dict[str, str] = field(default_factory=dict)  # task folders the evaluation lists but does not run now → their state (stale, unvalidated, …)


@dataclass
class SetupRow:
    arm: str
    label: str
    rank: int | None = None
    tasks_measured: int = 0
    tasks_total: int = 0
    missing: list[str] = field(default_factory=list)
    cells: int = 0
    passes: int = 0
    pass_rate: float | None = None
    ci: tuple[float, float] | None = None
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
    fill: str | None = None

    @property
    def complete(self) -> bool:
        return not self.missing

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["ci"] = list(self.ci) if self.ci else None
        d["priced"] = self.unpriced_cells == 0
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

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


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

    @property
    def ranked(self) -> list[SetupRow]:
        return [r for r in self.rows if r.rank is not None]

    @property
    def unranked(self) -> list[SetupRow]:
        return [r for r in self.rows if r.rank is None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "evaluation": self.evaluation,
            "tasks": self.tasks,
            "attempts": self.attempts,
            "k": self.k,
            "cost_ranked": self.cost_ranked,
            "stale_measurements": self.stale,
            "retired_measurements": self.retired,
            "measurements": self.measurements,
            "pricing_dates": self.pricing_dates,
            "ranked": [r.to_dict() for r in self.ranked],
            "unranked": [r.to_dict() for r in self.unranked],
            "pairs": [p.to_dict() for p in self.pairs],
            "conclusions": self.conclusions,
            "flaky": [f.to_dict() for f in self.flaky],
            "matrix": {task: {arm: [c.to_dict() for c in cells] for arm, cells in by_arm.items()} for task, by_arm in self.matrix.items()},
            "metrics": self.metrics,
        }


def compare(measurements: list[Measurement], arms: dict[str, dict[str, Any]], *, title: str, evaluation: str | None, expected: Expected | None = None, pricing_dates: Iterable[str] = (), ref: str | None = None) -> Comparison:
    """Rank the setups. With `expected`, only the evaluation's current arms and tasks count and
    a measurement of an edited task (content hash changed) is stale, not evidence. `ref` names
    the evaluation in the commands that fill a setup's missing cells (default its name)."""
    stale = retired = 0
    if expected is not None:
        arm_order = [key for key, _ in expected.arms]
        labels = dict(expected.arms)
        hashes = dict(expected.tasks)
        tasks = [t for t, _ in expected.tasks]
        attempts = expected.attempts
        kept = []
        for m in measurements:
            if m.task in expected.skipped and m.arm in labels and m.attempt <= attempts:
                stale += 1  # a listed task folder that is stale (or no longer valid) now: its cells measured the task as it was
                continue
            if m.arm not in labels or m.task not in hashes or m.attempt > attempts:
                retired += 1
                continue
            if hashes[m.task] is not None and m.task_hash is not None and m.task_hash != hashes[m.task]:
                stale += 1
                continue
            kept.append(m)
        measurements = kept
    else:
        arm_order = list(dict.fromkeys(m.arm for m in sorted(measurements, key=lambda m: m.started_at)))
        labels = {key: (arms.get(key) or {}).get("label") or key for key in arm_order}
        tasks = sorted({m.task for m in measurements})
        attempts = max((m.attempt for m in measurements), default=1)

    chosen, failures = _choose(measurements)
    rows = [_row(key, labels[key], tasks, chosen.get(key, {}), failures.get(key, Counter()), attempts) for key in arm_order]
    complete = [r for r in rows if r.complete and r.cells]
    cost_ranked = bool(complete) and all(r.unpriced_cells == 0 for r in complete)
    # pass rate ranks; cost, tokens, lines and time only order rows of a shared rank for display
    complete.sort(key=lambda r: (-(r.pass_rate or 0.0), r.cost_per_cell if cost_ranked else 0.0, _last(r.tokens_per_cell), _last(r.lines_per_cell), _last(r.time_per_cell_ms)))
    pairs = [_pair(a, b, tasks, chosen) for a, b in itertools.combinations(complete, 2)]
    ranks = shared_ranks(complete, pairs)
    for row in complete:
        row.rank = ranks[row.arm]
    for row in rows:
        if not row.complete or not row.cells:
            row.fill = fill_command(ref or evaluation, row.missing, len(tasks))
    ordered = complete + [r for r in rows if r.rank is None]
    result = Comparison(title, evaluation, tasks, attempts, attempts, ordered, pairs, cost_ranked, stale, len(measurements), list(pricing_dates), retired)
    result.conclusions = _conclusions(complete, pairs, attempts)
    result.flaky = flaky(chosen, PASSED)
    result.matrix = matrix(measurements, chosen, tasks, arm_order)
    return result


def _conclusions(order: list[SetupRow], pairs: list[Pair], attempts: int) -> list[dict[str, Any]]:
    by_arms = {(p.a, p.b): p for p in pairs}
    out = []
    for first, second in zip(order, order[1:]):
        pair = by_arms.get((first.arm, second.arm)) or _flipped(by_arms[(second.arm, first.arm)])
        out.append({"a": first.arm, "b": second.arm, "p_value": pair.p_value, "shared_rank": first.rank == second.rank, "sentence": conclusion(pair, first.label, second.label, attempts)})
    return out


def _flipped(p: Pair) -> Pair:
    return Pair(p.b, p.a, p.tasks, -p.mean_difference, p.b_wins, p.a_wins, p.ties, p.p_value)


def fill_command(evaluation: str | None, missing: list[str], total: int) -> str:
    name = evaluation or "EVALUATION"
    if not missing or len(missing) == total:
        return f"benchtape run {name}"
    return f"benchtape run {name} " + " ".join(f"--task {t}" for t in missing)


def _last(value: float | None) -> float:
    return float("inf") if value is None else value


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


def _row(key: str, label: str, tasks: list[str], by_task: dict[str, dict[int, Measurement]], failures: Counter[str], k: int) -> SetupRow:
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
    return row


def _mean(values: list[float | int | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _pair(a: SetupRow, b: SetupRow, tasks: list[str], chosen: dict[str, dict[str, dict[int, Measurement]]]) -> Pair:
    wins_a = wins_b = ties = 0
    diffs = []
    for task in tasks:
        ma, mb = chosen[a.arm].get(task) or {}, chosen[b.arm].get(task) or {}
        if not ma or not mb:
            continue
        ra = sum(1 for m in ma.values() if m.outcome == PASSED) / len(ma)
        rb = sum(1 for m in mb.values() if m.outcome == PASSED) / len(mb)
        diffs.append(ra - rb)
        if ra > rb:
            wins_a += 1
        elif rb > ra:
            wins_b += 1
        else:
            ties += 1
    mean = sum(diffs) / len(diffs) if diffs else 0.0
    return Pair(a.arm, b.arm, len(diffs), mean, wins_a, wins_b, ties, sign_test(wins_a, wins_b))



# ---------------------------------------------------------------- the front door's one call


def expected_of(ev: Any) -> Expected:
    """The current arms and tasks of a loaded Evaluation (task hashes read the testdata)."""
    from benchtape.spec.identity import task_hash

    tasks: list[tuple[str, str | None]] = [(t.id, task_hash(t)) for t in ev.tasks()]
    return Expected(arms=[(a.key, a.label) for a in ev.arms], tasks=tasks, attempts=ev.attempts, skipped={s.id: s.state for s in ev.skipped})


def comparison(store: BrowsingStore, targets: list[str], pricing: Pricing, cwd: Any = None) -> Comparison:
    """`compare NAME` (every stored cell of that evaluation, against its current file when it
    loads) or `compare RUN…` (only those runs' cells)."""
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
            measurements, arms = read_measurements(store, pricing, evaluation=ev_name)
            expected = expected_of(ev) if ev is not None else None
            ref = evaluation_ref(ev.path, cwd) if ev is not None else None
            return _with_metrics(store, compare(measurements, arms, title=f"evaluation {ev_name}", evaluation=ev_name, expected=expected, pricing_dates=pricing.dates, ref=ref), measurements)
    run_ids = [_run_id(store, t, len(targets) == 1) for t in targets]
    measurements, arms = read_measurements(store, pricing, runs=run_ids)
    if not measurements:
        raise BadInput(f"run(s) {', '.join(run_ids)} hold no evaluation cells", fix="compare the runs of `benchtape run EVALUATION`, or name the evaluation")
    names = sorted({((store.run(r) or {}).get("params") or {}).get("evaluation") or "" for r in run_ids} - {""})
    title = "runs " + ", ".join(run_ids)
    return _with_metrics(store, compare(measurements, arms, title=title, evaluation=names[0] if len(names) == 1 else None, pricing_dates=pricing.dates), measurements)


def _with_metrics(store: BrowsingStore, c: Comparison, measurements: list[Measurement]) -> Comparison:
    """The bench's declared metrics (`metrics:`, `derivedMetrics:`) per setup, beside the ranking (never in it)."""
    from benchtape.replay.metrics import by_setup

    c.metrics = by_setup(store, ((m.arm, m.session_id) for m in measurements if m.measured))
    return c


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


def columns(k: int) -> list[str]:
    """The ranking table's columns, terminal and HTML alike: with one attempt pass@k is pass@1,
    shown once."""
    return ["rank", "setup", "pass", "ci95", "pass@1", *([f"pass@{k}", f"pass^{k}"] if k != 1 else []), "cost/cell", "tokens/cell", "lines/cell", "time/cell", "outcomes"]


def display(row: SetupRow, k: int) -> dict[str, str]:
    """A setup's figures as text (terminal and HTML alike); unknown is `—`, never 0."""
    ci = f"{_pct(row.ci[0])}–{_pct(row.ci[1])}" if row.ci else "—"
    cost = "—" if row.cost_per_cell is None else f"${row.cost_per_cell:.4f}" + ("+" if row.unpriced_cells else "")
    return {
        "rank": str(row.rank) if row.rank is not None else "",
        "setup": row.label,
        "pass": f"{row.passes}/{row.cells}" + (f" ({_pct(row.pass_rate)})" if row.pass_rate is not None else ""),
        "ci95": ci,
        "pass@1": _pct(row.pass_at_1),
        f"pass@{k}": _pct(row.pass_at_k),
        f"pass^{k}": _pct(row.pass_hat_k),
        "cost/cell": cost,
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


def notes(c: Comparison) -> list[str]:
    """What a reader must know to read the table right."""
    out = []
    if c.ranked and not c.cost_ranked:
        out.append("cost does not rank: a ranked setup has cells of unknown cost (a `+` marks a figure over the priced cells only, a floor)")
    if c.stale:
        out.append(f"{c.stale} stored measurement(s) of stale tasks are not counted (the task was edited since, or is no longer valid): re-validate it (benchtape task validate), then re-run to measure it")
    if c.retired:
        out.append(f"{c.retired} stored measurement(s) of setups, tasks or attempts the evaluation no longer lists are not counted")
    if c.pricing_dates:
        out.append(f"prices as of {', '.join(sorted(set(c.pricing_dates)))} where the tool reported no cost")
    shared = sorted({r.rank for r in c.ranked if r.rank is not None and sum(1 for o in c.ranked if o.rank == r.rank) > 1})  # a ranked row has its rank
    if shared:
        out.append(f"rank {', '.join(map(str, shared))} is shared: equal pass rates, no significant difference (the order within a shared rank is by cost, tokens, lines, time: a display order, not a win)")
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
