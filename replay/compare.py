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

Reads only the store (sessions, `metrics`, `session.finished`, `cell.outcome`), in two
queries, so thousands of cells answer in well under a second.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import orjson

from benchtape.core.payloads import CellOutcome, Metrics, SessionFinished
from benchtape.spec.cells import RUN_KIND
from benchtape.spec.pricing import Pricing, session_cost, sum_known
from benchtape.store.database import Store
from benchtape.replay.outcomes import OUTCOMES, PASSED, is_reusable
from benchtape.replay.stats import pass_at_k, sign_test, wilson

_KINDS = ("metrics", "session.finished", "cell.outcome")
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
    outcome: CellOutcome | None = None


def read_measurements(store: Store, pricing: Pricing, *, evaluation: str | None = None, runs: list[str] | None = None) -> tuple[list[Measurement], dict[str, dict[str, Any]]]:
    """Every stored measurement of the evaluation (all its runs) or of these runs, and the
    archived arm summaries by key."""
    where, params = _where(evaluation, runs)
    sessions: dict[str, _Session] = {}
    rows = store.db.execute(
        "SELECT s.id, s.run_id, s.scenario, s.cell_id, s.attempt, s.model, s.params, s.parent_session, s.started_at "
        f"FROM sessions s JOIN runs r ON r.id = s.run_id WHERE {where} ORDER BY s.id",
        params,
    )
    loads = orjson.loads
    for row in rows:
        sessions[row[0]] = _Session(row, loads(row[6]) if row[6] else {})
    kinds = ",".join(f"'{k}'" for k in _KINDS)
    # CROSS JOIN fixes the loop order: the selected sessions first, then each one's actions by
    # the primary key's prefix (in seq order), so the cost grows with the cells asked for, not
    # with the store. (A partial index on these kinds would halve this read, but it doubles
    # the insert cost of every action on the recording hot path: measured, not worth it.)
    actions = store.db.execute(
        f"SELECT a.session_id, a.kind, a.data FROM runs r CROSS JOIN sessions s ON r.id = s.run_id CROSS JOIN actions a ON a.session_id = s.id WHERE {where} AND a.kind IN ({kinds})",
        params,
    )
    for session_id, kind, data in actions:
        s = sessions[session_id]
        if kind == "metrics":
            totals: Metrics = loads(data)
            s.metrics.update((k, v) for k, v in totals.items() if v is not None)
        elif kind == "session.finished":
            finished: SessionFinished = loads(data)
            s.wall_ms = finished.get("wall_ms")
        else:
            s.outcome = loads(data)  # a cell.outcome
    arms = _archived_arms(store, where, params)
    return _measurements(sessions, pricing), arms


def _where(evaluation: str | None, runs: list[str] | None) -> tuple[str, list[Any]]:
    if runs:
        return f"s.cell_id IS NOT NULL AND s.run_id IN ({','.join('?' * len(runs))})", list(runs)
    return "s.cell_id IS NOT NULL AND r.kind = ? AND json_extract(r.params, '$.evaluation') = ?", [RUN_KIND, evaluation]


def _archived_arms(store: Store, where: str, params: list[Any]) -> dict[str, dict[str, Any]]:
    arms: dict[str, dict[str, Any]] = {}
    for (text,) in store.db.execute(f"SELECT DISTINCT r.params FROM sessions s JOIN runs r ON r.id = s.run_id WHERE {where}", params):
        arms.update((orjson.loads(text) or {}).get("arms") or {})
    return arms


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
    outcomes: dict[str, int] = field(default_factory=dict)
    attempted_failures: int = 0
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
        }


def compare(measurements: list[Measurement], arms: dict[str, dict[str, Any]], *, title: str, evaluation: str | None, expected: Expected | None = None, pricing_dates: Iterable[str] = (), ref: str | None = None) -> Comparison:
    """Rank the setups. With `expected`, only the evaluation's current arms and tasks count and
    a measurement of an edited task (content hash changed) is stale, not evidence. `ref` names
    the evaluation in the commands that fill a setup's missing cells (default its name)."""
    stale = retired = 0
    if expected is not None:
        arm_order = [key for key, _ in expected.arms]
        labels = {key: label for key, label in expected.arms}
        hashes = dict(expected.tasks)
        tasks = [t for t, _ in expected.tasks]
        attempts = expected.attempts
        kept = []
        for m in measurements:
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
    rows = [_row(key, labels[key], tasks, chosen.get(key, {}), failures.get(key, 0), attempts) for key in arm_order]
    complete = [r for r in rows if r.complete and r.cells]
    cost_ranked = bool(complete) and all(r.unpriced_cells == 0 for r in complete)
    complete.sort(key=lambda r: (-(r.pass_rate or 0.0), r.cost_per_cell if cost_ranked else 0.0, _last(r.tokens_per_cell), _last(r.lines_per_cell), _last(r.time_per_cell_ms)))
    for number, row in enumerate(complete, start=1):
        row.rank = number
    for row in rows:
        if not row.complete or not row.cells:
            row.fill = fill_command(ref or evaluation, row.missing, len(tasks))
    ordered = complete + [r for r in rows if r.rank is None]
    pairs = [_pair(a, b, tasks, chosen) for a, b in itertools.combinations(complete, 2)]
    return Comparison(title, evaluation, tasks, attempts, attempts, ordered, pairs, cost_ranked, stale, len(measurements), list(pricing_dates), retired)


def fill_command(evaluation: str | None, missing: list[str], total: int) -> str:
    name = evaluation or "EVALUATION"
    if not missing or len(missing) == total:
        return f"benchtape run {name}"
    return f"benchtape run {name} " + " ".join(f"--task {t}" for t in missing)


def _last(value: float | None) -> float:
    return float("inf") if value is None else value


def _choose(measurements: list[Measurement]) -> tuple[dict[str, dict[str, dict[int, Measurement]]], Counter]:
    """Per arm, task and attempt: the latest measurement with a reusable outcome. Execution
    failures and ungraded sessions are counted as attempts, never as measurements."""
    chosen: dict[str, dict[str, dict[int, Measurement]]] = defaultdict(lambda: defaultdict(dict))
    failures: Counter = Counter()
    for m in sorted(measurements, key=lambda m: m.started_at):
        if m.measured:
            chosen[m.arm][m.task][m.attempt] = m
        else:
            failures[m.arm] += 1
    return chosen, failures


def _row(key: str, label: str, tasks: list[str], by_task: dict[str, dict[int, Measurement]], failures: int, k: int) -> SetupRow:
    row = SetupRow(arm=key, label=label, tasks_total=len(tasks), attempted_failures=failures)
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
    known_costs = [m.cost for m in cells if m.cost is not None]
    row.unpriced_cells = len(cells) - len(known_costs)
    row.cost_total = float(sum(known_costs)) if known_costs else None
    row.cost_per_cell = row.cost_total / len(known_costs) if known_costs else None
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

    return Expected(arms=[(a.key, a.label) for a in ev.arms], tasks=[(t.id, task_hash(t)) for t in ev.tasks()], attempts=ev.attempts)


def comparison(store: Store, targets: list[str], pricing: Pricing, cwd: Any = None) -> Comparison:
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
            return compare(measurements, arms, title=f"evaluation {ev_name}", evaluation=ev_name, expected=expected, pricing_dates=pricing.dates, ref=ref)
    run_ids = [_run_id(store, t, len(targets) == 1) for t in targets]
    measurements, arms = read_measurements(store, pricing, runs=run_ids)
    if not measurements:
        raise BadInput(f"run(s) {', '.join(run_ids)} hold no evaluation cells", fix="compare the runs of `benchtape run EVALUATION`, or name the evaluation")
    names = sorted({((store.run(r) or {}).get("params") or {}).get("evaluation") or "" for r in run_ids} - {""})
    title = "runs " + ", ".join(run_ids)
    return compare(measurements, arms, title=title, evaluation=names[0] if len(names) == 1 else None, pricing_dates=pricing.dates)


def _newest_stored_run(store: Store, name: str) -> tuple[str | None] | None:
    """The newest stored run of the evaluation `name`, as (the file it was read from,); None
    when the store holds none."""
    return store.db.execute("SELECT bench_path FROM runs WHERE kind = ? AND json_extract(params, '$.evaluation') = ? ORDER BY started_at DESC LIMIT 1", [RUN_KIND, name]).fetchone()


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


def _run_id(store: Store, target: str, only: bool) -> str:
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
    return ["rank", "setup", "pass", "ci95", "pass@1", *([f"pass@{k}"] if k != 1 else []), "cost/cell", "tokens/cell", "lines/cell", "time/cell", "outcomes"]


def display(row: SetupRow, k: int) -> dict[str, str]:
    """A setup's figures as text (terminal and HTML alike); unknown is `—`, never 0."""
    ci = f"{row.ci[0]:.0%}–{row.ci[1]:.0%}" if row.ci else "—"
    cost = "—" if row.cost_per_cell is None else f"${row.cost_per_cell:.4f}" + ("+" if row.unpriced_cells else "")
    return {
        "rank": str(row.rank) if row.rank is not None else "",
        "setup": row.label,
        "pass": f"{row.passes}/{row.cells}" + (f" ({row.pass_rate:.0%})" if row.pass_rate is not None else ""),
        "ci95": ci,
        "pass@1": _pct(row.pass_at_1),
        f"pass@{k}": _pct(row.pass_at_k),
        "cost/cell": cost,
        "tokens/cell": "—" if row.tokens_per_cell is None else f"{row.tokens_per_cell:,.0f}",
        "lines/cell": "—" if row.lines_per_cell is None else f"{row.lines_per_cell:.1f}",
        "time/cell": "—" if row.time_per_cell_ms is None else f"{row.time_per_cell_ms / 1000:.1f}s",
        "outcomes": ", ".join(f"{o} {n}" for o, n in sorted(row.outcomes.items())) + (f"; {row.attempted_failures} attempted, not measured" if row.attempted_failures else ""),
    }


def notes(c: Comparison) -> list[str]:
    """What a reader must know to read the table right."""
    out = []
    if c.ranked and not c.cost_ranked:
        out.append("cost does not rank: a ranked setup has cells of unknown cost (a `+` marks a figure over the priced cells only, a floor)")
    if c.stale:
        out.append(f"{c.stale} stored measurement(s) of tasks edited since are not counted (the task's content changed): re-run to measure them")
    if c.retired:
        out.append(f"{c.retired} stored measurement(s) of setups, tasks or attempts the evaluation no longer lists are not counted")
    if c.pricing_dates:
        out.append(f"prices as of {', '.join(sorted(set(c.pricing_dates)))} where the tool reported no cost")
    if not c.ranked:
        out.append("no setup measured every task: nothing ranks yet")
    return out


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"
