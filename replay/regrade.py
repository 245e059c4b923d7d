"""`benchtape regrade`: grade stored sessions with the checks as a bench file says now.

No agent runs: each stored session is matched to the bench's scenario of the same name
and graded, and the verdicts are appended as a new grading (source `regrade`) that
`benchtape diff` can compare with any earlier one. Sessions are streamed and their
verdicts written in batches, so a store of ten thousand sessions regrades in one pass
at flat memory.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Iterator

from benchtape.checks import CheckConfigError, build
from benchtape.checks.registry import Check
from benchtape.core.errors import BadInput
from benchtape.core.model import Session
from benchtape.replay.grading import (
    VERDICT_BATCH,
    GradingContext,
    StoredSnapshot,
    Verdict,
    check_path,
    checks_read_output_only,
    grade_session,
    new_grading,
    scenario_status,
    static_row,
    stored_session,
    task_facts,
    task_of,
)
from benchtape.replay.grading_judges import judge_for_grading
from benchtape.replay.metrics import declares, measure
from benchtape.replay.provider_peers import provider_peers
from benchtape.replay.select import Selection, batch_gc, resolve, rows
from benchtape.sandbox.treediff import FileChange, WorkspaceDiff
from benchtape.spec.bench import BenchSpec
from benchtape.store.database import SessionRow
from benchtape.store.views import BrowsingStore, GradingStore

if TYPE_CHECKING:
    from benchtape.replay.outcomes import Outcome


@dataclass
class ScenarioTally:
    graded: int = 0
    statuses: Counter = field(default_factory=Counter)
    unmeasured: Counter = field(default_factory=Counter)  # why cells were not measured (an execution failure's reason) → cells


@dataclass
class RegradeSummary:
    grading_id: str
    bench: str
    scenarios: dict[str, ScenarioTally] = field(default_factory=dict)
    skipped: Counter = field(default_factory=Counter)  # scenario name the bench lacks → sessions
    tasks: bool = False  # task cells regraded without a bench: each tally counts cell outcomes (passed, failed, no_changes…)
    previous: str | None = None  # the grading the first regraded session showed before: what `diff` compares this one with
    others: list[str] = field(default_factory=list)  # the other gradings the regraded sessions showed before (task cells: one per task's run)
    _asked: bool = False
    _runs: set[str] = field(default_factory=set)  # the runs whose first session was asked

    def remember_previous(self, store: BrowsingStore, session_id: str, *, every: bool = False, run_id: str | None = None) -> None:
        """Before the session's new verdicts are stored: the grading it showed until now. Asked of
        each run's first session (`run_id`; a run's sessions were graded together), or of every
        session (`every`: task cells, each graded by its task's verifier, where one query more
        is nothing): a run's cells graded once per task showed several, and a regrade of
        several runs' sessions as many, and `diff` with the first alone covered part of them."""
        if self._asked and not every and (run_id is None or run_id in self._runs):
            return
        if run_id is not None:
            self._runs.add(run_id)
        found = store.latest_grading_for(session_id)
        if not self._asked:
            self._asked, self.previous = True, found
        elif found is not None and found != self.previous and found not in self.others:
            self.others.append(found)

    @property
    def graded(self) -> int:
        return sum(t.graded for t in self.scenarios.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "grading_id": self.grading_id,
            "bench": self.bench,
            "graded": self.graded,
            "scenarios": {n: {"graded": t.graded, **dict(t.statuses)} for n, t in self.scenarios.items()},
            "skipped": dict(self.skipped),
            "previous_grading_id": self.previous,
            "previous_grading_ids": [g for g in [self.previous, *self.others] if g],
        }


@dataclass(frozen=True)
class _Prepared:
    """A scenario's checks, built once, with the static half of their verdict rows."""

    checks: list[Check]
    rows: list[dict[str, Any]]
    context: GradingContext
    output_only: bool = False  # every check reads only the output and the prompt: sessions are read without their calls


def prepare(bench: BenchSpec) -> dict[str, _Prepared]:
    """Build every check of the bench up front: a check refused now stops the regrade (exit 2)."""
    out: dict[str, _Prepared] = {}
    for sc in bench.scenarios:
        built: list[Check] = []
        for i, spec in enumerate(sc.checks):
            try:
                built.append(build(spec))
            except CheckConfigError as exc:
                raise BadInput(f"scenario {sc.name!r}: {check_path(i)} ({spec.type}): {exc}", file=str(spec.where.file or bench.path), line=spec.where.line, fix="fix the check, then regrade") from None
        static = [static_row(check_path(i), c) for i, c in enumerate(built)]
        # what else a grading may read of the session: declared metrics (the step count, the
        # turns), a multi-provider scenario's peers
        output_only = checks_read_output_only(built) and not declares(bench) and not sc.providers
        out[sc.name] = _Prepared(built, static, GradingContext(bench.dir, dict(sc.vars), sc.transform, False, sc.runtimes, providers=tuple(sc.providers)), output_only)
    return out


def regrade(store: GradingStore, bench: BenchSpec, sel: Selection, *, rejudge: bool = False, on_session: Callable[[SessionRow, str], None] | None = None) -> RegradeSummary:
    """Grade the selected stored sessions with `bench`'s checks; a new grading, source `regrade`.

    A judge request byte-identical to one already stored is answered from the store (so an
    unchanged judge check costs nothing to re-grade and reproduces), unless `rejudge`."""
    prepared = prepare(bench)
    run_id = resolve(store, "runs", sel.run) if sel.run else None
    if sel.scenario and sel.scenario not in prepared:
        raise BadInput(f"--scenario {sel.scenario!r} is not a scenario of {bench.path}", fix=f"scenarios: {', '.join(sorted(prepared))}")
    _some_session_to_grade(store, sel, prepared, bench)
    grading_id = new_grading(
        store,
        "regrade",
        {sc.name: sc.checks for sc in bench.scenarios},
        bench_path=str(bench.path),
        run_id=run_id,
        contexts={name: p.context for name, p in prepared.items()},
    )
    judge = judge_for_grading(store, grading_id, mode="rejudge" if rejudge else "reuse", judges=bench.judges)
    prepared = {name: replace(p, context=replace(p.context, judge=judge)) for name, p in prepared.items()}
    summary = RegradeSummary(grading_id, str(bench.path))
    pending: list[tuple[str, list[dict[str, Any]]]] = []
    measured: list[tuple[str, dict[str, Any]]] = []  # the bench's declared metrics, kept with this grading
    outcomes: list[tuple[Any, ...]] = []  # the cells' outcomes, written with their sessions' verdicts
    with batch_gc():
        for row, session, prep, verdicts in _graded(store, sel, prepared, summary.skipped):
            summary.remember_previous(store, row.id, run_id=row.run_id)  # its verdicts are still pending here
            pending.append((row.id, [{**static, "result": v.result} for static, v in zip(prep.rows, verdicts)] + [v.row() for v in verdicts[len(prep.rows) :]]))  # a task cell's task:verify after the bench's
            _cell_outcome(store, grading_id, row.id, session, verdicts, outcomes)
            if declares(bench):
                measured.append((row.id, measure(bench.metrics, bench.derived_metrics, session, verdicts).to_dict()))
            if len(pending) >= VERDICT_BATCH:
                _write_batch(store, grading_id, pending, measured, outcomes)
                pending, measured, outcomes = [], [], []
            status = scenario_status(verdicts, session)
            tally = summary.scenarios.get(row.scenario) or summary.scenarios.setdefault(row.scenario, ScenarioTally())  # not a new tally (and Counter) per session
            tally.graded += 1
            tally.statuses[status] += 1
            if on_session:
                on_session(row, status)
    _write_batch(store, grading_id, pending, measured, outcomes)
    return summary


def _write_batch(store: GradingStore, grading_id: str, pending: list[tuple[str, list[dict[str, Any]]]], measured: list[tuple[str, dict[str, Any]]], outcomes: list[tuple[Any, ...]]) -> None:
    """A batch of sessions' verdicts, declared metrics and cell outcomes in one transaction: a
    regrade killed between a cell's outcome and its verdicts left the grading's outcomes for
    sessions it holds no verdict of (`compare` and `query outcome` read the new checks'
    outcome, `sessions` and `show` the old checks' verdicts, `gradings` said 0 sessions)."""
    with store.transaction():
        store.add_verdicts_many(grading_id, pending)
        store.add_metric_values(grading_id, measured)
        for args in outcomes:
            store.add_outcome(*args)


def _some_session_to_grade(store: GradingStore, sel: Selection, prepared: dict[str, _Prepared], bench: BenchSpec) -> None:
    """Refuse, before a grading is written, a regrade that would grade nothing: a grading of no
    session stays in the store for good (history is never deleted), and `diff X latest` would
    read it. Stops at the first session the bench has a scenario for (the first, mostly)."""
    seen: Counter = Counter()
    for row in rows(store, sel):
        if row.scenario in prepared:
            return
        seen[row.scenario] += 1
    if not seen:
        raise BadInput("no stored session is selected: nothing to regrade, and no grading was written", fix="`benchtape sessions` lists what the store holds; select with --run, --session or --all")
    held = ", ".join(f"{name!r} ({n})" for name, n in seen.most_common(8))
    raise BadInput(
        f"none of the {sum(seen.values())} selected session(s) belongs to a scenario of {bench.path} (their scenarios: {held}); no grading was written",
        file=str(bench.path),
        fix=f"name the bench's scenario as the sessions' (an import takes `--scenario NAME`), or select other sessions; the bench's scenarios: {', '.join(sorted(prepared))}",
    )


def _graded(store: GradingStore, sel: Selection, prepared: dict[str, _Prepared], skipped: Counter) -> Iterator[tuple[SessionRow, Session, _Prepared, list[Verdict]]]:
    """Each selected session the bench has a scenario for, graded; the others counted in `skipped`."""
    control_runs: dict[str, bool] = {}
    contexts: dict[tuple[str, str], GradingContext] = {}  # per run and scenario: its generate: values, whether a control
    for row in rows(store, sel):
        prep = prepared.get(row.scenario)
        if prep is None:
            skipped[row.scenario] += 1
            continue
        if row.run_id not in control_runs:
            run = store.run(row.run_id)
            control_runs[row.run_id] = bool(run and run.get("kind") == "control")
        key = (row.run_id, row.scenario)
        context = contexts.get(key)
        if context is None:
            generated = store.generated_vars(row.run_id, row.scenario)
            context = contexts[key] = replace(prep.context, vars={**prep.context.vars, **generated}, control=control_runs[row.run_id])
        session = stored_session(store, row, prep.output_only)
        yield row, session, prep, grade_session(session, prep.checks, StoredSnapshot(store, session), context, peers=provider_peers(store, row, session, context.providers))


# ---------------------------------------------------------------- task cells: no bench needed


def regrade_tasks(store: GradingStore, sel: Selection, *, on_session: Callable[[SessionRow, str], None] | None = None) -> RegradeSummary:
    """Grade the selected task cells' sessions again (a new grading, source `regrade`): each
    stored candidate patch through its task's hidden verifier as the task is NOW (a repaired
    tests.patch changes verdicts without any agent running); bench sessions are skipped. The
    cell outcome of each goes into the outcomes table with the grading, as live grading's does."""
    run_id = resolve(store, "runs", sel.run) if sel.run else None
    grading_id = new_grading(store, "regrade", {}, bench_path=None, run_id=run_id, note="task cells: each task as it is now")
    summary = RegradeSummary(grading_id, "the task folders", tasks=True)
    context = GradingContext()
    with batch_gc():
        for row in rows(store, sel):
            session = store.load_session(row.id, row)
            if task_of(session) is None:
                summary.skipped[row.scenario] += 1
                continue
            verdicts = grade_session(session, [], StoredSnapshot(store, session), context)
            summary.remember_previous(store, row.id, every=True)
            outcomes: list[tuple[Any, ...]] = []
            decided = _cell_outcome(store, grading_id, row.id, session, verdicts, outcomes)
            _write_batch(store, grading_id, [(row.id, [v.row() for v in verdicts])], [], outcomes)
            outcome = str(decided.outcome) if decided else ""
            tally = summary.scenarios.get(row.scenario) or summary.scenarios.setdefault(row.scenario, ScenarioTally())
            tally.graded += 1
            tally.statuses[outcome] += 1
            if decided is not None and not decided.reusable:
                tally.unmeasured[decided.reason] += 1
            if on_session:
                on_session(row, outcome)
    return summary


RECORDED = ("outcome", "reason", "grading_id", "at", "action_seq")  # an outcome row's own fields, not facts of the recording


def _cell_outcome(store: GradingStore, grading_id: str, session_id: str, session: Session, verdicts: list[Verdict], pending: list[tuple[Any, ...]]) -> Outcome | None:
    """A measured cell's outcome by this grading, stored with it as live grading stores it
    (replay/outcomes.py decides it); None for a session that measures no cell.

    A task cell's, always. An evaluation's bench-scenario cell's too: `regrade --bench` over an
    evaluation's run wrote its verdicts and no outcome, so `sessions` showed the new grading
    while `compare` and `query`'s `outcome` still read the old one's (a check fixed, and the
    ranking still counted the cells it failed). The agent's change and the cell's costs are
    facts of the recording, carried over from the outcome it had; so is a guard violation,
    which the recording's diff decided. A measurement of several steps is decided over all of
    them, and `benchtape run EVALUATION` re-grades it; a later step's session has no outcome.
    The outcome is added to `pending` (add_outcome's arguments), written with the session's
    verdicts (_write_batch)."""
    from benchtape.replay.outcomes import GUARD_VIOLATION, Outcome, decide

    task = task_of(session) is not None
    if not task and not session.started.get("cell"):
        return None  # a bench run's session: its verdicts are its result (no query for the hot path)
    before = store.latest_outcomes([session_id]).get(session_id)
    if task:
        outcome = decide(session, verdicts, None)
        data = {"cell_id": (session.started.get("cell") or {}).get("id"), "diff": (before or {}).get("diff")}
    elif before is None or len(before.get("steps") or ()) > 1:
        return None
    else:
        outcome = Outcome(GUARD_VIOLATION, str(before["reason"])) if before["outcome"] == GUARD_VIOLATION else decide(session, verdicts, _recorded_diff(before.get("diff")))
        data = {k: v for k, v in before.items() if k not in RECORDED}
    pending.append((grading_id, session_id, outcome.outcome, outcome.reason, {**data, "source": "regrade", **task_facts(verdicts)}))
    return outcome


def _recorded_diff(summary: dict[str, Any] | None) -> WorkspaceDiff | None:
    """The agent's change as its outcome recorded it (WorkspaceDiff.summary): whether it changed
    anything is all an outcome decided from it needs once a guard violation is ruled out."""
    if summary is None:
        return None
    paths = list(summary.get("paths") or [])
    paths += [f"(one of {summary.get('files')} files)"] * max(0, int(summary.get("files") or 0) - len(paths))
    return WorkspaceDiff(tuple(FileChange(path, "changed", 0, 0) for path in paths))
