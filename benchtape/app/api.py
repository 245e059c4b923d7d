"""The small public Python API, and the composition of recording with live grading.

`run_benches` is what `benchtape run` and `benchtape demo` call: load, preflight, run
each bench with a callback that grades every finished session from the store, write
the reports as it goes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from benchtape.app.preflight import Preflight, enforce, preflight_all
from benchtape.core.errors import BadInput
from benchtape.core.judgments import Judge
from benchtape.core.redact import redact_json
from benchtape.models.demo_judge import demo_judge, rich_mode
from benchtape.recorder.bench_run import BenchSessions
from benchtape.recorder.runner import RunOptions, SessionRecord
from benchtape.replay.grading import GradingContext, Verdict, build_checks, grade_stored, new_grading, scenario_status
from benchtape.replay.grading_judges import judge_for_grading
from benchtape.replay.metrics import grade_metrics
from benchtape.replay.report import ResultSpool, Tally, report_dir_paths, result_row, save_snapshot, write_combined, write_run_report
from benchtape.spec.audit import audit
from benchtape.spec.bench import BenchSpec, expand_paths, load_bench
from benchtape.spec.evalfile import EvalSpec, is_eval_file, load_eval
from benchtape.store.database import Store

Event = Callable[[str, dict[str, Any]], None]


@dataclass
class Reports:
    """Where `run` writes its reports, all checked writable in preflight, before any spend."""

    json: Path | None = None  # --report-json: the whole invocation's report, written at the end
    dir: Path | None = None  # --report-dir: per run RUN_ID.jsonl as sessions finish, RUN_ID.json at the end, snapshots
    junit: Path | None = None  # --report-junit: JUnit XML, written at the end

    def outputs(self) -> dict[str, Path | None]:
        """Flag → path, for preflight (a trailing `/`: a folder)."""
        return {"--report-json": self.json, "--report-dir/": self.dir, "--report-junit": self.junit}


@dataclass
class BenchRun:
    bench: BenchSpec
    run_id: str
    grading_id: str
    spool: ResultSpool  # every finished session's result row, on disk
    verdicts: dict[str, list[Verdict]] = field(default_factory=dict)  # kept only for the negative control's tally
    generated: dict[str, str] = field(default_factory=dict)  # generate: values, kept out of every report
    harness: str = "mock"
    name: str | None = None  # the Eval run's name

    @property
    def results(self) -> Iterator[dict[str, Any]]:
        """The result rows in scenario order, read back from disk one at a time."""
        return self.spool.rows()


@dataclass
class RunOutcome:
    runs: list[BenchRun]
    preflight: Preflight
    control: dict[str, Any] | None = None  # an Eval's control audit (benchtape.spec.audit)
    eval_path: str | None = None

    @property
    def results(self) -> Iterator[dict[str, Any]]:
        return (r for run in self.runs for r in run.results)

    @property
    def tally(self) -> Tally:
        total = Tally()
        for run in self.runs:
            total.merge(run.spool.tally)
        return total

    @property
    def exit_code(self) -> int:
        """0 when every scenario passed, 1 when any failed or errored."""
        t = self.tally
        return 0 if t.total and t.passed == t.total else 1

    def close(self) -> None:
        for run in self.runs:
            run.spool.close()


def load_inputs(paths: Sequence[str | Path] | None, params: dict[str, Any] | None = None) -> tuple[EvalSpec | None, list[BenchSpec]]:
    """An Eval file (recognised by content) and its runs' benches, or every bench named (none
    named: the bench found here)."""
    expanded = expand_paths(list(paths or []))
    evals = [p for p in expanded if is_eval_file(p)]
    if evals and len(expanded) > 1:
        raise BadInput("an Eval file runs alone, not beside other benches or Evals", file=str(evals[0]), fix="run each Eval (and the plain benches) in its own invocation")
    if evals:
        ev = load_eval(evals[0], params or {})
        return ev, [r.bench for r in ev.runs]
    return None, [load_bench(p, params or {}) for p in expanded]


def bench_files(paths: Sequence[str | Path]) -> list[Path]:
    """The bench files the paths name, folders expanded: BadInput, naming what a folder lacks,
    for one that holds none (no bench file, case directory or Harbor task)."""
    return expand_paths(list(paths))


def load_benches(paths: Sequence[str | Path] | None, params: dict[str, Any] | None = None) -> list[BenchSpec]:
    """Every bench named (folders expanded; an Eval file gives one bench per run); bad input raises BadInput before anything runs."""
    return load_inputs(paths, params)[1]


def control_audit(ev: EvalSpec) -> dict[str, Any]:
    """The Eval's control diff over all its runs; raises benchtape.spec.audit.Confounded when `control:` is violated."""
    c = ev.control
    return audit([(r.name, r.bench) for r in ev.runs], c.baseline if c else None, c.varies if c else None, enforced=c is not None)


def run_eval(
    ev: EvalSpec,
    store: Store | Callable[[], Store],
    options: RunOptions,
    *,
    selected: list[str] | None = None,
    reports: Reports | None = None,
    on_event: Event | None = None,
) -> RunOutcome:
    """Preflight the selected runs, audit the control (nothing runs if either stops), then one bench run per Eval run.
    The caller closes the outcome (its result spools) when done reading it."""
    reports = reports or Reports()
    runs = ev.select(selected)
    pf = preflight_all([r.bench for r in runs], options, ev, outputs=reports.outputs())
    enforce(pf, options.skip_preflight)
    refuse_uncopyable([r.bench for r in runs], options)  # before the audit reads the trees
    report = control_audit(ev)
    outcome = RunOutcome(runs=[], preflight=pf, control=report, eval_path=str(ev.path))
    return _run_all(outcome, [(r.bench, replace(options, eval_run=r.name)) for r in runs], opened(store), reports, on_event, False)


def run_benches(
    benches: list[BenchSpec],
    store: Store | Callable[[], Store],
    options: RunOptions,
    *,
    reports: Reports | None = None,
    on_event: Event | None = None,
    control: bool = False,
) -> RunOutcome:
    """Preflight everything first (nothing runs if anything blocks, an unwritable report path
    included), then run and grade. The caller closes the outcome when done reading it."""
    reports = reports or Reports()
    pf = preflight_all(benches, options, outputs=reports.outputs())
    enforce(pf, options.skip_preflight)
    refuse_uncopyable(benches, options)
    return _run_all(RunOutcome(runs=[], preflight=pf), [(b, options) for b in benches], opened(store), reports, on_event, control)


def refuse_uncopyable(benches: list[BenchSpec], options: RunOptions) -> None:
    """A FIFO, socket or device in a folder every session copies is bad input (exit 2) here,
    before the store is opened: at the copy it was a traceback, after the run's row was written."""
    from benchtape.sandbox.staging import refuse_special_files

    refuse_special_files(sc for bench in benches for sc in bench.scenarios if not options.scenarios or sc.name in options.scenarios)


def opened(store: Store | Callable[[], Store]) -> Store:
    """The store a run writes, opened only once its preflight passed when given as a callable:
    a blocked `benchtape run --db new.db` left an empty store file behind."""
    return store() if callable(store) else store


def _run_all(outcome: RunOutcome, plan: list[tuple[BenchSpec, RunOptions]], store: Store, reports: Reports, on_event: Event | None, control: bool) -> RunOutcome:
    emit = on_event or (lambda kind, data: None)
    complete = False
    try:
        try:
            for bench, options in plan:
                _run_one(bench, store, options, reports.dir, emit, control, outcome.runs.append)
            complete = True
        finally:  # also on Ctrl-C: --report-json and --report-junit say what was recorded, as --report-dir's report does (nothing recorded, as when staging failed: none)
            if outcome.runs and (complete or any(len(run.spool) for run in outcome.runs)):
                _write_reports(outcome, reports, complete, str(Path(store.path).resolve()))
    except BaseException:
        outcome.close()
        raise
    return outcome


def _write_reports(outcome: RunOutcome, reports: Reports, complete: bool, database: str) -> None:
    """The invocation's --report-json (`complete` false when it was interrupted) and
    --report-junit (the scenario attempts recorded)."""
    if reports.json is not None:
        write_combined(reports.json, outcome, complete=complete, database=database)
    if reports.junit is not None:
        from benchtape.replay.junit import write_junit

        write_junit(reports.junit, lambda: outcome.results)


def _run_one(bench: BenchSpec, store: Store, options: RunOptions, report_dir: Path | None, emit: Event, control: bool, started: Callable[[BenchRun], None]) -> BenchRun:
    """One bench run: its row and its grading, then its sessions recorded through the run's
    scheduler, each graded as it finishes (its result row streamed to disk). `started` is given
    the run before its first session, so an interrupted invocation still reports what it recorded."""
    checks = {sc.name: build_checks(sc.checks) for sc in bench.scenarios}
    contexts = {sc.name: GradingContext(bench.dir, dict(sc.vars), sc.transform, control, sc.runtimes, providers=tuple(sc.providers)) for sc in bench.scenarios}
    sessions = BenchSessions(bench, options)
    run_id = sessions.start_run(store)
    grading_id = new_grading(
        store,
        "control" if control else "live",
        {sc.name: sc.checks for sc in bench.scenarios},
        bench_path=str(bench.path),
        run_id=run_id,
        contexts=contexts,
    )
    judge: Judge = judge_for_grading(store, grading_id, mode="ask", judges=bench.judges)  # one per grading: its limits are shared
    if sessions.harness == "mock" and rich_mode():  # MADBENCH_MOCK_RICH=1: the offline demo evaluator answers AI checks
        judge = demo_judge
    scheduler = sessions.scheduler(store, run_id, emit)
    contexts = {name: replace(ctx, judge=judge, resources=scheduler.resources) for name, ctx in contexts.items()}
    report_path, snapshots_dir = report_dir_paths(report_dir, run_id) if report_dir else (None, None)
    spool = ResultSpool([s.name for s in bench.scenarios], public=report_path.with_suffix(".jsonl") if report_path else None, generated=lambda: sessions.seeds.values() if sessions.seeds else {})
    state = BenchRun(bench=bench, run_id=run_id, grading_id=grading_id, spool=spool, harness=sessions.harness, name=options.eval_run)
    started(state)  # the caller closes its spool from here on
    lock = threading.Lock()

    groups: dict[tuple[str, int], dict[str, SessionRecord]] = {}  # a multi-provider scenario's finished sessions, until all are

    def on_session_done(record: SessionRecord) -> None:
        """Grade a finished session; a multi-provider scenario's sessions once all have finished
        (its composites compare them), each then graded with the others as its peers."""
        sc = record.scenario
        if len(sc.providers) < 2:
            grade_one(record, ())
            return
        with lock:
            group = groups.setdefault((sc.name, record.attempt), {})
            group[str(sc.provider)] = record
            if len(group) < len(sc.providers):
                return
            members = [group[label] for label in sc.providers]
            del groups[(sc.name, record.attempt)]
        for member in members:
            grade_one(member, [m.session_id for m in members])

    def grade_one(record: SessionRecord, peers: list[str] | tuple[()]) -> None:
        sc = record.scenario
        context = replace(contexts[sc.name], vars={**sc.vars, **(sessions.seeds.vars(sc.name) if sessions.seeds else {})})
        session, verdicts = grade_stored(store, grading_id, record.session_id, checks[sc.name], context, peers)
        status = scenario_status(verdicts, session)
        measured = grade_metrics(store, grading_id, bench, record.session_id, session, verdicts)  # metrics:, derivedMetrics:
        row = result_row(session, sc.name, status, verdicts, record.attempt, run_id=run_id, context=contexts[sc.name].to_dict(), metadata=sc.metadata, measured=measured)
        row["description"], row["metadata"] = sc.description, sc.metadata  # metadata: copied into the report, as madbench does
        row["bench"] = str(bench.path)
        if options.eval_run:
            row["eval_run"] = options.eval_run
        row = redact_json(row, store.redactor_for(record.session_id))  # check evidence is not redacted by the store
        with lock:
            spool.add(row)  # to disk (and --report-dir's stream): the row leaves memory here
            if control:
                state.verdicts[record.session_id] = verdicts
            if snapshots_dir is not None and session.snapshot:
                save_snapshot(store, session.snapshot["sha256"], snapshots_dir)
        emit("verdicts", {"session_id": record.session_id, "scenario": sc.name, "attempt": record.attempt, "status": status, "verdicts": verdicts})

    completed = False
    try:
        sessions.record(scheduler, on_session_done)
        completed = True
    finally:  # also on Ctrl-C: the report says what was recorded, and that it is incomplete
        state.generated = sessions.seeds.values() if sessions.seeds else {}
        if sessions.seeds is not None:  # every session is over: the answer key can be kept for re-grading
            store.add_generated_vars(run_id, sessions.seeds.generated)
        if report_path is not None:
            write_run_report(report_path, state, complete=completed, database=str(Path(store.path).resolve()))
    emit("run.finished", {"run_id": run_id, "grading_id": grading_id})
    return state


def demo_bench_path() -> Path:
    """The demo bench from fixtures-red/: in a checkout, or as installed package data."""
    here = Path(__file__).resolve().parents[2] / "fixtures-red" / "demo" / "bench.yaml"
    if here.is_file():
        return here
    from importlib.resources import files

    installed = Path(str(files("benchtape.fixtures").joinpath("demo").joinpath("bench.yaml")))
    if installed.is_file():
        return installed
    raise BadInput("the demo bench (fixtures-red/demo/bench.yaml) is missing from this installation", fix="reinstall benchtape, or run it from a checkout")



