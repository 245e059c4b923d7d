"""`benchtape run EVALUATION`: measure the cells the store does not hold yet, re-grade the rest.

The order, so that nothing is spent before the user has seen what will be:
1. load the evaluation and its tasks (`--task` narrows), build every check (a refused one
   stops here, exit 2);
2. resolve every tool version (npm is asked about `latest`; nothing installed yet);
3. preflight every step as it will run (binaries, keys, `require_env`, sandbox rules):
   a blocking finding stops here (exit 3);
4. plan every cell's identity (image digests, repository commits, `pre` effects captured in
   a scratch sandbox) and look the identities up in the store (unless --fresh);
5. the preview (the whole of `--dry-run`): measured cells that are re-graded, cells that
   would run, binaries that would be installed, and the estimated spend;
6. consent: a terminal asks; otherwise --yes is required;
7. install what is missing (into benchtape's version-keyed folder), then one run row; the
   reused measurements are re-graded with the current checks (a new outcome each), and the
   other cells recorded through the run's scheduler (benchtape.recorder.scheduler: the
   orphan sweep and the run's sandbox resources first, as for a bench run), graded live,
   their outcomes appended.
Ctrl-C once stops scheduling (cells in flight finish and are kept); twice stops those too
(they are kept, as interrupted attempts).
"""

from __future__ import annotations

import os
import shlex
import sys
import threading
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

import orjson

from benchtape.core.errors import BadInput, ExitCode, PreflightBlocked
from benchtape.recorder.cellrun import NOOP_MODEL, CellJob, CellRecord
from benchtape.recorder.matrix import CellPlan, Matrix, Staging, harness_config
from benchtape.recorder.scheduler import Stopping
from benchtape.recorder.toolversions import Resolved, VersionResolver
from benchtape.replay.evaluate import LIVE, REGRADE, CellGrader, Estimate, StoredCells, StoredMeasurement, cost_history, estimate, estimate_time, stored_cells, time_history
from benchtape.spec.evaluation import Evaluation, Task

if TYPE_CHECKING:
    from benchtape.store.database import Store
    from benchtape.store.views import BrowsingStore

Event = Callable[[str, dict[str, Any]], None]


@dataclass
class EvaluationRequest:
    name: str
    tasks: list[str] | None = None
    fresh: bool = False
    yes: bool = False
    dry_run: bool = False
    db: Path | None = None
    concurrency: int | None = None  # --concurrency; None: the project's `defaults.concurrency`, else 4 (concurrency_of)
    sandbox: str | None = None
    keep_sandbox: bool = False
    allow_host_writes: bool = False
    allow_network: bool = False  # --allow-network: consent for a container `network:` other than none (it was accepted and dropped)
    json_out: bool = False
    plain: bool = False
    argv: list[str] = field(default_factory=list)
    fail_on_failure: bool = False  # exit 1 when a setup's cell did not pass or a control does not hold (a CI gate)
    executor: str | None = None  # --executor: local or ray (else the evaluation's, else the project's `runs:`)
    address: str | None = None  # --address: the Ray cluster's (else RAY_ADDRESS, else `runs.address`)
    loaded: Evaluation | None = None  # an evaluation made in memory (`benchtape run DIR` on Harbor tasks), else loaded by `name`
    detect: float | None = None  # --detect: the difference the plan says the tasks and attempts for
    until: Any = None  # --until-decided: benchtape.app.evaluation_rounds.Until (rounds until decided or spent)
    run_params: dict[str, Any] = field(default_factory=dict)  # added to the run's params (a round's record)


@dataclass
class Planned:
    """Everything known before anything is spent."""

    ev: Evaluation
    tasks: list[Task]
    matrix: Matrix
    plans: list[CellPlan]
    stored: StoredCells
    fresh: bool
    notes: list[str] = field(default_factory=list)
    placement: Placement = field(default_factory=lambda: Placement())

    def reused(self) -> list[tuple[CellPlan, StoredMeasurement]]:
        if self.fresh:
            return []
        out = []
        for plan in self.plans:
            found = self.stored.measured(plan.identity.id) if plan.identity.reusable else None
            if found is not None:
                out.append((plan, found))
        return out

    def to_run(self) -> list[CellPlan]:
        reused = {id(p) for p, _ in self.reused()}
        return [p for p in self.plans if id(p) not in reused]

    def installs(self) -> list[Resolved]:
        return [r for r in self.matrix.resolver.all() if r.needs_install]


# ---------------------------------------------------------------- planning


def concurrency_of(req: EvaluationRequest, ev: Evaluation) -> int:
    """Cells at once: --concurrency, else the project's (then the user's) `defaults.concurrency`, else 4."""
    return req.concurrency or ev.defaults.concurrency or 4


def plan_evaluation(req: EvaluationRequest, store: BrowsingStore | None, *, on_event: Event | None = None) -> Planned:
    """Steps 1–4: load, resolve, preflight, plan and look up. Raises before anything is spent."""
    from benchtape.replay.regrade import prepare
    from benchtape.sandbox.staging import refuse_special_files
    from benchtape.spec.evaluation import load_evaluation

    ev = req.loaded if req.loaded is not None else load_evaluation(req.name)
    tasks = ev.select(req.tasks)
    if not tasks and ev.skipped:
        raise BadInput("no task of this evaluation can run: " + "; ".join(s.describe() for s in ev.skipped), file=str(ev.path), fix=ev.skipped[0].next)
    for bench in {t.bench.path: t.bench for t in tasks}.values():
        prepare(bench)  # a refused check stops the run here (exit 2)
    refuse_special_files(t.scenario for t in tasks)  # before a cell's identity reads (and a FIFO blocks) its testdata
    matrix = Matrix(ev, tasks, VersionResolver(), Staging(on_event, level=req.sandbox), level=req.sandbox, on_event=on_event or (lambda kind, data: None))
    matrix.resolve_versions()
    pf = preflight(matrix, req)
    if not pf.ok:
        raise PreflightBlocked(pf.blocking)
    plans = matrix.plan()
    stored = StoredCells() if store is None else stored_cells(store, ev.name, [p.identity.id for p in plans], ev.fingerprints())  # --fresh reuses none of it (Planned.reused)
    # --task narrows what is said too: notes of tasks not selected sent the user after them
    said = [s for s in ev.skipped if not req.tasks or s.id in req.tasks]
    notes = list(dict.fromkeys([s.describe() for s in said] + [r.note for r in matrix.resolver.all() if r.note] + pf.notes))
    if any(a.all_pre() for a in ev.arms):
        notes.append("setup (`pre`) commands were run once per task in a scratch sandbox to capture their effects (no agent, no spend)")
    where = placement(req, ev, plans)
    if where.executor == "ray":
        cluster = "a private one-node Ray started for this run" if where.address == "local" else f"the Ray cluster at {where.address}"
        notes.append(f"cells run on {cluster}: recorded on its nodes, folded into this store, graded here")
    return Planned(ev, tasks, matrix, plans, stored, req.fresh, notes, where)


@dataclass(frozen=True)
class Placement:
    """Where the cells are recorded: this machine (local), or a Ray cluster's nodes (ray)."""

    executor: str = "local"
    address: str | None = None
    retries: int = 3
    cpus: float = 1.0
    runtime_env: dict[str, Any] = field(default_factory=dict)

    def executor_factory(self, store: Store) -> Any:
        """The scheduler's executor factory (benchtape.recorder.scheduler.ExecutorFactory)."""
        from benchtape.recorder.scheduler import LocalExecutor

        if self.executor != "ray":
            return LocalExecutor
        from benchtape.recorder.ray_executor import RayOptions, ray_executor
        from benchtape.recorder.spool import spool_folder

        assert self.address is not None
        return ray_executor(RayOptions(self.address, self.retries, self.cpus, self.runtime_env), spool_folder(store.path))


def placement(req: EvaluationRequest, ev: Evaluation, plans: list[CellPlan]) -> Placement:
    """The command line over RAY_ADDRESS (for the address) over the evaluation's `runs:` over the
    project's. On a cluster every cell runs at level home or container (the other levels change
    the real files of the machine they run on): anything else is refused before anything runs."""
    from benchtape.spec.project import load_project
    from benchtape.spec.run_settings import DEFAULT_CPUS, DEFAULT_RETRIES, EXECUTORS, RunSettings

    settings = RunSettings(req.executor, req.address or os.environ.get("RAY_ADDRESS") or None).under(ev.runs.under(load_project(ev.project).runs))
    executor = settings.executor or "local"
    if executor not in EXECUTORS:
        raise BadInput(f"unknown executor {executor!r}", fix=f"--executor is one of {', '.join(EXECUTORS)}")
    if executor == "local":
        return Placement()
    from benchtape.recorder.ray_executor import REMOTE_LEVELS  # imports no Ray: that waits for the run

    if not settings.address:
        raise BadInput("--executor ray needs the cluster's address", fix="pass --address HOST:PORT (what `ray start --head` printed), set RAY_ADDRESS, or add `runs: {address: HOST:PORT}` to the evaluation or .benchtape/config.yaml")
    local = sorted({p.level for p in plans if p.level not in REMOTE_LEVELS})
    if local:
        raise BadInput(f"cells at sandbox level {', '.join(local)} would change a worker's real files; on a cluster cells run at level home or container", fix="pass --sandbox home (or container), or run without --executor ray")
    return Placement("ray", settings.address, settings.retries if settings.retries is not None else DEFAULT_RETRIES, settings.cpus if settings.cpus is not None else DEFAULT_CPUS, settings.runtime_env)


def preflight(matrix: Matrix, req: EvaluationRequest, only: list[Resolved] | None = None) -> Any:
    """Every step as it will run, per bench: the run loop's preflight with the step's harness,
    model and config; plus what only an evaluation has (`require_env`, `pre` at level none, a
    workflow in a container). Steps whose binary is still to be installed are checked now but
    for the binary, and whole after the install (`only`: just those)."""
    from benchtape.app.preflight import probes_once

    with probes_once():  # one tool's binary and tmux are asked once, not once per setup
        pf = _preflight(matrix, req, only)
    pf.blocking = list(dict.fromkeys(pf.blocking))
    return pf


def _preflight(matrix: Matrix, req: EvaluationRequest, only: list[Resolved] | None) -> Any:
    from benchtape.adapters.base import says_not_installed
    from benchtape.adapters.claude_code import mcp_allowed
    from benchtape.app.preflight import Preflight
    from benchtape.app.preflight import preflight as bench_preflight

    pf = Preflight()
    seen: set[bytes] = set()
    claude_asks = False  # a Claude Code setup whose permission mode asks before an MCP tool call
    by_bench: dict[Path, list[Task]] = defaultdict(list)
    for task in matrix.tasks:
        by_bench[task.bench.path].append(task)
    for arm in matrix.ev.arms:
        for step in arm.steps:
            for var, hint in step.effects.require_env:
                if not os.environ.get(var):
                    pf.blocking.append(f"{arm.label}: needs ${var} in the environment ({hint}); set it, or drop this setup from the evaluation")
        for tasks in by_bench.values():
            bench = tasks[0].bench
            levels = {req.sandbox or t.scenario.sandbox.level for t in tasks}
            if arm.all_pre() and "none" in levels:
                pf.blocking.append(f"{arm.label}: setup (`pre`) commands at sandbox level none would change your real directory; use level home or container")
            if arm.workflow and "container" in levels:
                pf.blocking.append(f"{arm.label}: workflows run at the host levels (home, workspace) only for now: the handover folder of a container is not built")
            for step, resolved in zip(arm.steps, matrix.resolved(arm, tasks[0])):
                if only is not None and resolved not in only:
                    continue
                config = harness_config(step, tasks[0], resolved)
                pf.notes.extend(_cannot_edit(arm.label, step.harness, config))
                claude_asks = claude_asks or (step.harness == "claude-code" and not mcp_allowed([str(a) for a in config.get("args") or ()]))
                pf.notes.extend(_nothing_to_play(arm.label, step, tasks))
                key = orjson.dumps([str(bench.path), step.harness, step.model_id, config], option=orjson.OPT_SORT_KEYS, default=str)
                if key in seen:
                    continue
                seen.add(key)
                copy = replace(bench, harness=step.harness, harness_config=config, scenarios=[t.scenario for t in tasks])
                noop = step.harness == "mock" and step.model_id == NOOP_MODEL
                found = bench_preflight(copy, harness=step.harness, sandbox=req.sandbox, allow_host_writes=req.allow_host_writes, allow_network=req.allow_network, concurrency=concurrency_of(req, matrix.ev), noop=noop, model=step.model_id, who=f"setup {arm.label}")
                if only is None and resolved.needs_install:  # installed before the run, and its binary checked then: the rest (keys, endpoints) is said now, before the install's minutes
                    found.blocking = [f for f in found.blocking if not says_not_installed(f, step.harness)]
                pf.merge(found)
    from benchtape.sandbox.harbor_env import home_level_notes, mcp_notes, skills_notes

    pf.notes.extend(home_level_notes([t.spec for t in matrix.tasks if t.spec is not None and (req.sandbox or t.scenario.sandbox.level) == "home"]))
    pf.notes.extend(skills_notes([t.spec for t in matrix.tasks if t.spec is not None], [s.harness for a in matrix.ev.arms for s in a.steps]))
    pf.notes.extend(mcp_notes([t.spec for t in matrix.tasks if t.spec is not None], [s.harness for a in matrix.ev.arms for s in a.steps], claude_asks))
    if any(t.spec is not None and (req.sandbox or t.scenario.sandbox.level) in ("workspace", "home") for t in matrix.tasks):
        from benchtape.sandbox.pidfence import uncovered_note

        pf.notes.extend(note for note in [uncovered_note()] if note)
    return pf


def _nothing_to_play(label: str, step: Any, tasks: list[Task]) -> list[str]:
    """Said before the run: a scripted setup's model plays a bench scenario's `mock:` steps, the
    solver a history task's reference fix, and anything else the no-op: the real binary only
    answers, changes nothing, and is ranked as a setup. Each task kind has its own way to a
    setup that works: the solver for a history task, the oracle for a Harbor task (its fix is
    solution/solve.sh), `mock:` steps for a bench scenario."""
    from benchtape.adapters.endpoints import is_scripted
    from benchtape.app.preflight import few
    from benchtape.spec.solver import SOLVER_MODELS

    model = step.model_id
    if step.harness in ("mock", "oracle") or not (is_scripted(model) or model in SOLVER_MODELS):
        return []
    solver = model in SOLVER_MODELS
    history = [t.id for t in tasks if t.spec is not None and t.spec.runtime is None and t.spec.reference_patch is not None]
    harbor = [t.id for t in tasks if t.spec is not None and t.spec.runtime is not None]
    scenarios = [t.id for t in tasks if t.spec is None and not t.scenario.mock]
    said = []
    if history and not solver:
        said.append(f"on the history task(s) {few(history)} the scripted model has nothing to play (it says the prompt back); `model: solver` plays each task's reference fix through {step.harness}'s own tools")
    if harbor:
        said.append(f"on the Harbor task(s) {few(harbor)} the {'solver' if solver else 'scripted model'} has nothing to play (a Harbor task's fix is solution/solve.sh, which `--harness oracle` runs; an agent needs a real model)")
    if scenarios:
        said.append(f"the scenario(s) {few(scenarios)} have no `mock:` steps to play")
    if not said:
        return []
    return [f"{label}: its cells change nothing and are ranked as a setup: " + "; ".join(said)]


def _cannot_edit(label: str, harness: str, config: dict[str, Any]) -> list[str]:
    """A task is solved by changing files: a Claude Code setup whose permission mode refuses
    every edit (the CLI's default, with nobody to approve) ends its cells `no_changes`, which
    was found out only after the spend. Said before it (the preview, the run's notes), not
    refused: a repository's own .claude/settings.json may allow edits, and a scripted model
    that only answers needs none."""
    if harness != "claude-code":
        return []
    from benchtape.adapters.claude_code import edits_allowed

    if edits_allowed([str(a) for a in config.get("args") or ()]):
        return []
    return [
        f"{label}: Claude Code's default permission mode asks before every edit, and nobody is there to answer: unless the repository's own "
        ".claude/settings.json allows edits, the agent can change no file and its cells end no_changes; "
        "add `options: {permission_mode: bypass}` to its block (benchtape's sandbox is the fence: `--sandbox container` confines it to the container)"
    ]


# ---------------------------------------------------------------- the preview


def preview(planned: Planned, pricing: Any) -> dict[str, Any]:
    """What `--dry-run` prints: per setup the cells measured (re-graded) and to run, the tool
    versions, the installs, and the estimated spend (a floor when some setup has no estimate)."""
    reused = {id(p) for p, _ in planned.reused()}
    rows: dict[str, dict[str, Any]] = {}
    to_run: dict[str, tuple[Any, int]] = {}
    for plan in planned.plans:
        arm = plan.cell.arm
        row = rows.setdefault(arm.key, {"setup": arm.label, "key": arm.key, "cells": 0, "measured": 0, "to_run": 0, "never_reusable": 0, "never_reusable_why": [], "cannot_start": 0, "attempted_before": 0})
        row["cells"] += 1
        row["attempted_before"] += planned.stored.attempted(plan.identity.id)
        if id(plan) in reused:
            row["measured"] += 1
            continue
        row["to_run"] += 1
        row["never_reusable"] += not plan.identity.reusable
        why = plan.identity.why_not
        if why and why not in row["never_reusable_why"]:  # a `pre` that failed in the preview's scratch sandbox fails the run's cells too: said before any spend
            row["never_reusable_why"].append(why)
        row["cannot_start"] += plan.problem is not None
        to_run[arm.key] = (arm, to_run.get(arm.key, (arm, 0))[1] + 1)
    arm_of = {p.identity.id: p.cell.arm.key for p in planned.plans}
    history = cost_history(planned.stored, arm_of)
    spend: Estimate = estimate(to_run, history, pricing)
    timed = estimate_time(to_run, time_history(planned.stored, arm_of))
    problems = sorted({f"{p.cell.task.id}: {p.problem.cause}: {p.problem.message}" for p in planned.plans if p.problem is not None})
    return {
        "evaluation": planned.ev.name,
        "path": str(planned.ev.path),
        "tasks": [t.id for t in planned.tasks],
        "skipped": [s.to_dict() for s in planned.ev.skipped if not s.ran],
        "unvalidated_run": [s.to_dict() for s in planned.ev.skipped if s.ran],
        "attempts": planned.ev.attempts,
        "cells": len(planned.plans),
        "fresh": planned.fresh,
        "measured": len(reused),
        "to_run": len(planned.plans) - len(reused),
        "setups": list(rows.values()),
        "versions": [r.describe() for r in planned.matrix.resolver.all()],
        "installs": [{"tool": r.harness, "version": r.version, "into": str(_install_folder(r)), "via": _installer(r.harness)} for r in planned.installs()],
        "estimate": spend.to_dict(),
        "estimate_time": timed,
        "problems": problems,
        "notes": planned.notes,
    }


def _install_folder(r: Resolved) -> Path:
    from benchtape.tools.binaries import folder

    return folder(r.harness, r.version)


def _installer(harness: str) -> str:
    """How a missing tool would be installed: npm into its folder, or pip into a venv there (a PyPI tool)."""
    from benchtape.tools.binaries import pins

    return "pip into a venv" if pins()[harness].kind == "pypi" else "npm"


# ---------------------------------------------------------------- running


@dataclass
class Finished:
    """What one invocation did: outcomes per setup, sessions started, whether it was stopped."""

    run_id: str | None = None
    started_sessions: int = 0
    regraded: int = 0
    measured_now: int = 0
    outcomes: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    unscheduled: int = 0
    interrupted: bool = False
    gradings: list[str] = field(default_factory=list)
    retried: int = 0  # attempts lost where they ran (a node died) and run again: on record, not outcomes
    skipped: list[dict[str, Any]] = field(default_factory=list)  # task folders not run (stale, unvalidated, leaking, broken), and why

    def to_dict(self) -> dict[str, Any]:
        return {
            "skipped": self.skipped,
            "run_id": self.run_id,
            "sessions_started": self.started_sessions,
            "regraded": self.regraded,
            "measured_now": self.measured_now,
            "outcomes": {label: dict(c) for label, c in self.outcomes.items()},
            "unscheduled": self.unscheduled,
            "interrupted": self.interrupted,
            "gradings": self.gradings,
            "retried": self.retried,
        }


def run_planned(planned: Planned, store: Store, req: EvaluationRequest, pricing: Any, *, on_event: Event | None = None) -> Finished:
    """Steps 7: install, one run row, re-grade the reused, record and grade the rest through
    the run's scheduler."""
    from benchtape.recorder.scheduler import Scheduler
    from benchtape.spec.cells import run_fields

    emit = on_event or (lambda kind, data: None)
    matrix = planned.matrix
    installs = planned.installs()
    for resolved in installs:
        emit("install", {"tool": resolved.harness, "version": resolved.version})
        matrix.resolver.install(resolved)
    if installs:
        pf = preflight(matrix, req, only=[r for r in matrix.resolver.all() if any(r.harness == i.harness and r.version == i.version for i in installs)])
        if not pf.ok:
            raise PreflightBlocked(pf.blocking)
    fields = run_fields(planned.ev, argv=req.argv)
    fields["params"].update(req.run_params)
    run_id = store.new_run(fields.pop("kind"), **fields)
    done = Finished(run_id=run_id, skipped=[s.to_dict() for s in planned.ev.skipped if not s.ran])
    scheduler = Scheduler(store, run_id, concurrency=concurrency_of(req, planned.ev), keep_sandbox=req.keep_sandbox, on_event=emit, executor=planned.placement.executor_factory(store))
    grader = CellGrader(store, run_id, pricing, resources=scheduler.resources)
    reused, to_run = planned.reused(), planned.to_run()
    emit("evaluation.started", {"run_id": run_id, "regrade": len(reused), "run": len(to_run)})
    try:
        with scheduler:
            for plan, found in reused:
                vars = store.generated_vars(found.run_id, plan.cell.task.id)
                outcome = grader.grade(plan.cell.task, plan.cell.arm, found.sessions, source=REGRADE, vars=vars)
                done.regraded += 1
                done.outcomes[plan.cell.arm.label][outcome.outcome] += 1
                emit("cell.finished", {"how": "re-graded", "label": plan.cell.arm.label, "task": plan.cell.task.id, "attempt": plan.cell.attempt, "outcome": outcome.outcome, "reason": outcome.reason})
            ran = scheduler.run([CellJob(matrix, p, req.keep_sandbox) for p in to_run], _grade_live(planned, grader, done, emit), stopping=STOPPING)
        done.interrupted, done.unscheduled = ran.interrupted, ran.unscheduled
    finally:
        generated = matrix.staging.generated()
        if generated:
            store.add_generated_vars(run_id, generated)
        matrix.staging.cleanup()  # after the run's spares copied from it are gone (the scheduler's end)
        done.gradings = grader.grading_ids()
    return done


# Ctrl-C once: schedule nothing more, let the cells in flight finish; twice: stop those too
# (they are kept as interrupted attempts).
STOPPING = Stopping(cancel_at=2, stopping="evaluation.stopping", cancelling="evaluation.cancelling")


def _grade_live(planned: Planned, grader: CellGrader, done: Finished, emit: Event) -> Callable[[CellRecord], None]:
    """What each measured cell's record is handed to, as it finishes: its grading and outcome."""
    lock = threading.Lock()

    def graded(record: CellRecord) -> None:
        plan = record.plan
        with lock:
            done.started_sessions += len(record.sessions)
        outcome = grader.grade(plan.cell.task, plan.cell.arm, record.sessions, source=LIVE, vars=planned.matrix.staging.vars(plan.cell.task))
        with lock:
            if record.retried:  # an attempt its executor lost and ran again: on record, the cell's result comes after it
                done.retried += 1
            else:
                done.measured_now += outcome.reusable
                done.outcomes[plan.cell.arm.label][outcome.outcome] += 1
        emit("cell.finished", {"how": "retried" if record.retried else "measured", "label": plan.cell.arm.label, "task": plan.cell.task.id, "attempt": plan.cell.attempt, "outcome": outcome.outcome, "reason": outcome.reason})

    return graded


# ---------------------------------------------------------------- the command


class EvaluationScreen(Protocol):
    """What a front end shows of an evaluation run (the CLI hands in benchtape.render_evaluation):
    the app decides what happens and when, the screen how it looks; the app never imports it."""

    def plain_wanted(self, flag: bool) -> bool: ...
    def progress(self, plain: bool) -> Event: ...
    def preview(self, doc: dict[str, Any], plain: bool, json_out: bool) -> None: ...
    def confirm(self, doc: dict[str, Any]) -> bool: ...
    def finished(self, done: Any, planned: Any, store: BrowsingStore, plain: bool, json_out: bool) -> None: ...
    def rounds_plan(self, round_tasks: int, limits: str) -> None: ...
    def rounds(self, doc: dict[str, Any], labels: dict[str, str], json_out: bool) -> None: ...


def execute(req: EvaluationRequest, show: EvaluationScreen) -> int:
    from benchtape.app.stores import db_path, open_store
    from benchtape.spec.pricing import load_pricing

    exists = db_path(req.db).exists()
    # Nothing is created before consent: a preview only reads, and a refused run leaves no store behind.
    store = open_store(req.db, readonly=req.dry_run) if exists else None
    plain = show.plain_wanted(req.plain)
    planned = plan_evaluation(req, store, on_event=show.progress(plain) if not req.json_out else None)
    pricing = load_pricing(planned.ev.project)
    doc = preview(planned, pricing)
    doc["concurrency"] = concurrency_of(req, planned.ev)
    from benchtape.replay.compare import evaluation_plan

    doc["plan"] = evaluation_plan(store, planned.ev, doc["tasks"], req.detect, pricing, sequential=req.until is not None)
    if req.until is not None:
        from benchtape.app.evaluation_rounds import run_until_decided

        return run_until_decided(req, store, planned, doc, pricing, run_planned, show)
    if req.dry_run:
        show.preview(doc, plain, req.json_out)
        return ExitCode.OK
    if not req.json_out:
        show.preview(doc, plain, False)
    if (doc["to_run"] or doc["installs"]) and not req.yes:
        if req.json_out or not (sys.stdin.isatty() and sys.stdout.isatty()):  # nobody to ask, or no preview shown to ask about
            again = shlex.join(["benchtape", *req.argv]) if req.loaded is not None and req.argv else f"benchtape run {req.name}"
            raise BadInput("this would run cells (and spend)" + (" and install tools" if doc["installs"] else "") + "; without a terminal to ask, consent is --yes", fix=f"preview it with `{again} --dry-run`, then `{again} --yes`")
        if not show.confirm(doc):
            print("nothing was run", file=sys.stderr)
            return ExitCode.OK
    store = store or open_store(req.db)
    done = run_planned(planned, store, req, pricing, on_event=show.progress(plain) if not req.json_out else None)
    show.finished(done, planned, store, plain, req.json_out)
    if done.interrupted:
        return ExitCode.INTERRUPTED
    failures = sum(n for c in done.outcomes.values() for o, n in c.items() if o in ("timeout", "adapter_error", "infrastructure_error"))
    return ExitCode.FAILED if failures or (req.fail_on_failure and _gate_fails(planned.ev, done.outcomes)) else ExitCode.OK


def _gate_fails(ev: Any, outcomes: Mapping[str, Mapping[str, int]]) -> bool:
    """`--fail-on-failure` on an evaluation: a setup's cell measured now that did not pass, or a
    control that does not hold (the no-op control's cells must not pass, so they are judged by
    the control's rule, never by passing). It was accepted and ignored: a CI gate on "the
    oracle must pass" never failed (newcomer pass)."""
    from benchtape.replay.compare import broken_controls
    from benchtape.spec.agent_kind import CONTROLS, arm_kind

    kinds = {a.label: arm_kind((s.harness, s.model_id) for s in a.steps) for a in ev.arms}
    setups = [counts for label, counts in outcomes.items() if kinds.get(label) not in CONTROLS]
    return bool(broken_controls(ev, outcomes)) or any(n and o != "passed" for counts in setups for o, n in counts.items())
