"""Recording one evaluation cell: one sandbox, opened once, for every step of its setup.

    open the task's sandbox (seeded from the staged tree)
    run the arm's `pre` commands; capture their effects (the identity is final only now)
    snapshot the workspace: the baseline the agent's change is measured against
    for each step: record a session through the run loop (`Runner.record`), run the
        step's `post` commands, snapshot the handover folder (workflows); stop at the
        first step that did not finish cleanly
    close the sandbox

A workflow's steps share the sandbox (its files, env and `pre` state persist; only
`args` are per step) and a handover folder outside the graded tree (`{handover}`,
$BENCHTAPE_HANDOVER). Its first step's session is the measurement's root; later steps
name it as `parent_session`.

What fails before the agent could start (the sandbox would not open, the engine is down,
staging or a `pre` command failed) is recorded as a session that never started, with an
`error` action naming the cause; what breaks the sandbox mid-session closes the session
with such an error. Either is an infrastructure_error, never the agent's failure.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchtape.core.model import Action
from benchtape.core.payloads import SessionStarted
from benchtape.recorder.matrix import DEFAULT_SETUP_TIMEOUT, CellPlan, Matrix, Problem, harness_config
from benchtape.recorder.runner import Runner, SessionPlan
from benchtape.recorder.task_steps import enter_step, setup_failure, step_session, task_steps
from benchtape.sandbox.box_commands import CommandRun, PreEffects, capture_pre, run_all, run_command, workdir_of
from benchtape.sandbox.by_level import sandbox_for
from benchtape.sandbox.healthcheck import wait_healthy
from benchtape.sandbox.levels import OpenWorkspace
from benchtape.sandbox.snapshot import snapshot
from benchtape.spec.cells import NOOP_MODEL, session_fields, started_extra, unstarted_actions
from benchtape.spec.evaluation import Step
from benchtape.spec.identity import CellIdentity
from benchtape.spec.task import HarborStep
from benchtape.spec.task_cells import solving, task_field

HANDOVER_ENV = "BENCHTAPE_HANDOVER"


@dataclass
class CellRecord:
    plan: CellPlan
    identity: CellIdentity  # as recorded (its `pre` effects as they were in this sandbox)
    sessions: list[str] = field(default_factory=list)  # one per step that ran, in order
    retried: bool = False  # an attempt the executor lost (its node died) and ran again: on record, not the cell's result

    @property
    def root(self) -> str | None:
        return self.sessions[0] if self.sessions else None


class CellJob:
    """One cell of an evaluation, as the scheduler runs it (benchtape.recorder.scheduler)."""

    __slots__ = ("keep", "matrix", "plan")

    def __init__(self, matrix: Matrix, plan: CellPlan, keep: bool = False):
        self.matrix, self.plan, self.keep = matrix, plan, keep

    @property
    def level(self) -> str:
        return self.plan.level

    def record(self, runner: Runner) -> CellRecord:
        return record_cell(runner, self.matrix, self.plan, keep=self.keep)

    def prepare_ahead(self, runner: Runner) -> None:
        """The cell's sandbox made ahead, when its task is staged already (staging is never
        started here: it can take minutes, and fail, which is the cell's to record)."""
        task = self.plan.cell.task
        if self.plan.problem is not None or not self.matrix.staging.ready(task):
            return
        seed, problem = self.matrix.staging.seed(task)
        if problem is None:
            sandbox_for(self.plan.level, keep=self.keep, resources=runner.resources).prepare_ahead(seed, self.matrix.launch_plan(self.plan.cell.arm, task, self.plan.level))


def record_lost(runner: Runner, matrix: Matrix, plan: CellPlan, message: str, *, retried: bool, source: str | None = None) -> CellRecord:
    """An attempt of the cell that never came back from where it ran (its node lost, its worker
    killed), recorded in the runner's store: an infrastructure error naming what is known of it.
    `retried`: a later attempt of the cell followed it (this one is on record, not the cell's result)."""
    record = _unstarted(runner, matrix, plan, plan.identity, Problem("infrastructure", message), source=source)
    record.retried = retried
    return record


def record_cell(runner: Runner, matrix: Matrix, plan: CellPlan, *, keep: bool = False) -> CellRecord:
    """Record every step of one cell into the store (the runner's run); never raises for what
    a sandbox, an engine or staging did: that is on record as the cell's attempt."""
    if plan.problem is not None:
        return _unstarted(runner, matrix, plan, plan.identity, plan.problem)
    seed, problem = matrix.staging.seed(plan.cell.task)
    if problem is not None:
        return _unstarted(runner, matrix, plan, plan.identity, problem)
    sandbox = sandbox_for(plan.level, keep=keep, on_event=runner.on_event, resources=runner.resources)
    with contextlib.ExitStack() as stack:
        try:
            box = stack.enter_context(sandbox.open(plan.cell.task.scenario, seed, matrix.launch_plan(plan.cell.arm, plan.cell.task, plan.level)))
        except Exception as exc:  # noqa: BLE001 - whatever stopped the sandbox, the cell is on record
            return _unstarted(runner, matrix, plan, plan.identity, Problem(_open_cause(plan.level), f"the sandbox could not open: {exc}"))
        return _in_box(runner, matrix, plan, box)


def _in_box(runner: Runner, matrix: Matrix, plan: CellPlan, box: OpenWorkspace) -> CellRecord:
    cell, arm, task = plan.cell, plan.cell.arm, plan.cell.task
    scenario = task.scenario
    env = dict(arm.steps[0].effects.env)
    pre: PreEffects | None = None
    runs: list[CommandRun] = []
    if arm.all_pre():
        pre, runs = capture_pre(box, arm.all_pre(), env, scenario.staging_timeout or DEFAULT_SETUP_TIMEOUT)
    identity = matrix.identity(plan, pre) if arm.all_pre() else plan.identity
    if runs and not runs[-1].ok:
        return _unstarted(runner, matrix, plan, identity, Problem("staging", runs[-1].failure()), pre_runs=runs)
    baseline = _baseline(runner, box)
    _guard_environment(matrix, task, box)
    handover = _handover(box) if arm.workflow else None
    facts: dict[str, Any] = {"baseline": baseline, "state_paths": list(arm.state_paths()), "pre": [r.to_dict() for r in runs], "pre_effects": pre.to_dict() if pre is not None else None}
    check = task.spec.runtime.healthcheck if task.spec is not None and task.spec.runtime is not None else None
    if check is not None:  # a Harbor task's environment, ready before its agent starts (and before the cell's clock)
        waited = wait_healthy(check, lambda command, timeout: run_command(box, command, env, timeout), sleep=runner.cancel.wait, stop=runner.cancel.is_set)
        facts["healthcheck"] = waited.to_dict()
        if waited.stopped:
            return _unstarted(runner, matrix, plan, identity, Problem("infrastructure", "stopped before the agent started (interrupted while waiting for the environment's healthcheck)"), pre_runs=runs, facts={"healthcheck": facts["healthcheck"]})
        if not waited.ok:
            why = waited.failure() + (" (at level home the task's environment/Dockerfile is not applied: its services are not there; try --sandbox container)" if plan.level == "home" else "")
            return _unstarted(runner, matrix, plan, identity, Problem("staging", why), pre_runs=runs, facts={"healthcheck": facts["healthcheck"]})
    record = CellRecord(plan, identity)
    deadline = time.monotonic() + scenario.timeout
    tsteps = task_steps(task.spec)  # a multi-step Harbor task: the arm's one step runs once per task step, in order
    order = [(0, arm.steps[0], t) for t in range(len(tsteps))] if tsteps else [(i, s, None) for i, s in enumerate(arm.steps)]
    for index, step, tindex in order:
        if runner.cancel.is_set():
            break
        left = deadline - time.monotonic()
        if left <= 0:
            record.sessions.append(_out_of_time(runner, matrix, plan, identity, index, record.root))
            break
        session_plan = _session_plan(matrix, plan, identity, index, step, box, handover, facts, left, record.root)
        if tindex is not None:
            assert task.spec is not None
            setup, prelude = enter_step(box, tsteps[tindex], session_plan.env)
            session_plan = step_session(session_plan, task.spec, tsteps[tindex], tindex, list(record.sessions), setup, prelude, left)
            failed = setup_failure(setup) or _step_unhealthy(runner, box, tsteps[tindex], session_plan)
            if failed is not None:
                record.sessions.append(_step_refused(runner, session_plan, box.level, failed))
                break
        try:
            done = runner.record(session_plan, box)
        except Exception as exc:  # noqa: BLE001 - the sandbox broke under the session (a container gone, a full disk)
            record.sessions.extend(_close_unfinished(runner, identity.id, cell.attempt, f"the sandbox failed during step {step.name!r}: {type(exc).__name__}: {exc}", record.sessions))
            break
        record.sessions.append(done.session_id)
        _after_step(runner, box, step, done.session_id, session_plan.env, handover)
        if done.status != "ok":
            break
    if not record.sessions:  # stopped (Ctrl-C twice) before the first step started
        return _unstarted(runner, matrix, plan, identity, Problem("infrastructure", "stopped before the agent started (interrupted)"), pre_runs=runs)
    return record


def _session_plan(matrix: Matrix, plan: CellPlan, identity: CellIdentity, index: int, step: Step, box: OpenWorkspace, handover: Path | None, facts: dict[str, Any], left: float, root: str | None) -> SessionPlan:
    cell, task = plan.cell, plan.cell.task
    resolved = matrix.resolved(cell.arm, task)[index]  # again: a binary installed since planning is found now
    fields = session_fields(matrix.ev.name, cell, identity, plan.task_digest, index, parent_session=root)
    started = started_extra(matrix.ev.name, cell, identity, plan.task_digest, index, plan.versions)
    _with_task(started, task)
    started["cell"].update(facts if index == 0 else {"baseline": facts["baseline"], "state_paths": facts["state_paths"]})
    env: dict[str, str] = {}
    for earlier in cell.arm.steps[: index + 1]:  # a workflow's environment persists across its steps (only args are per step)
        env.update(earlier.effects.env)
    if handover is not None:
        env[HANDOVER_ENV] = str(handover)
        started["cell"]["handover"] = HANDOVER_ENV
    agent = matrix.staging.environment(task)
    return SessionPlan(
        scenario=_with_task_tools(solving(task, matrix.staging.scenario(task), step.model_id), task),  # a solver model plays the task's reference fix
        attempt=cell.attempt,
        harness=step.harness,
        model=step.model_id,
        harness_config=harness_config(step, task, resolved),
        prompt=step_prompt(step, task.scenario.prompt, workdir_of(box), handover),
        noop=step.harness == "mock" and step.model_id == NOOP_MODEL,
        cell_id=identity.id,
        params=fields["params"],
        started=started,
        env=env,
        environment={"project_environment": agent.record()} if agent is not None else {},
        timeout=min(step.timeout, left) if step.timeout is not None else left,
        parent_session=root,
    )


def _with_task_tools(scenario: Any, task: Any) -> Any:
    """A Harbor task's `skills_dir`, as the host folder its Dockerfile copies there, and its
    `[[environment.mcp_servers]]`, in the scenario the harness reads (`skills`, `mcp_servers`):
    Claude Code's adapter stages the skills into ~/.claude/skills/ and gives it the servers, as
    Harbor's does, Codex's the servers; a harness that takes none was said before the run
    (skills_notes, mcp_notes)."""
    from benchtape.sandbox.harbor_env import skills_source

    runtime = task.spec.runtime if task.spec is not None else None
    if runtime is None:
        return scenario
    extra: dict[str, Any] = {}
    source = skills_source(task.spec) if runtime.skills_dir else None
    if source is not None:
        extra["skills"] = str(source)
    if runtime.mcp_servers:
        extra["mcp_servers"] = [server.to_dict() for server in runtime.mcp_servers]
    return replace(scenario, raw={**scenario.raw, **extra}) if extra else scenario


def _guard_environment(matrix: Matrix, task: Any, box: OpenWorkspace) -> None:
    """A host level's agent given a task's Python venv (a cache every later verifier uses): its
    digest now, checked once each step's harness exited, with the level's own notes (an `error`
    of the session when it changed: the venv is then discarded, envs/agent_env.py)."""
    agent = matrix.staging.environment(task)
    guard = agent.guard() if agent is not None else None
    if guard is None:
        return
    level_notes = box.after_exit

    def after_exit(exit_code: int | None) -> list[Action]:
        changed = guard.check()
        return [*level_notes(exit_code), *([Action("error", {"message": changed})] if changed else [])]

    box.after_exit = after_exit


def step_prompt(step: Step, task_prompt: str, workdir: str, handover: Path | None) -> str:
    """A workflow step's template with {prompt}, {workdir} and {handover} filled in; the task
    prompt when the step has none. Other braces are left as they are (prompts hold code)."""
    if not step.prompt:
        return task_prompt
    text = step.prompt.replace("{prompt}", task_prompt).replace("{workdir}", workdir)
    return text.replace("{handover}", str(handover) if handover is not None else "")


def _baseline(runner: Runner, box: OpenWorkspace) -> str | None:
    """The staged tree after `pre`, as a blob: what the agent's diff is taken against, now and at every re-grade."""
    try:
        data, _ = snapshot(box.root)
    except OSError:
        return None
    return runner.store.put_blob(data)


def _handover(box: OpenWorkspace) -> Path:
    """A notes folder beside the workspace, not in it (never graded, never in the agent's diff)."""
    base = box.env.get("TMPDIR")
    folder = Path(base) / "benchtape-handover" if base else Path(tempfile.mkdtemp(prefix="benchtape-handover-"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _after_step(runner: Runner, box: OpenWorkspace, step: Step, session_id: str, env: dict[str, str], handover: Path | None) -> None:
    """The step's `post` commands (as `hook` actions), and the handover folder as it is now."""
    actions: list[Action] = []
    if step.effects.post:
        for run in run_all(box, step.effects.post, env, DEFAULT_SETUP_TIMEOUT):
            actions.append(_hook("post", run))
    if handover is not None:
        from benchtape.sandbox.box_commands import snapshot_dir

        snap = snapshot_dir(handover)
        if snap is not None:
            data, meta = snap
            actions.append(Action("handover.snapshot", {"step": step.name, "sha256": runner.store.put_blob(data), **meta}))
    if actions:
        runner.store.append(session_id, actions)


def _hook(event: str, run: CommandRun) -> Action:
    return Action("hook", {"event": event, "name": run.command, "output": run.to_dict()})


# ---------------------------------------------------------------- attempts that never started


def _step_unhealthy(runner: Runner, box: OpenWorkspace, step: HarborStep, plan: SessionPlan) -> str | None:
    """A task step's own healthcheck, after its setup.sh and before its agent (Harbor's order):
    kept in the step's `session.started` (`task.step.healthcheck`); why the step cannot start
    when it failed (or the run was stopped meanwhile), else None."""
    if step.healthcheck is None:
        return None
    waited = wait_healthy(step.healthcheck, lambda command, timeout: run_command(box, command, plan.env, timeout), sleep=runner.cancel.wait, stop=runner.cancel.is_set)
    plan.started["task"]["step"]["healthcheck"] = waited.to_dict()
    if waited.stopped:
        return f"stopped before step {step.name!r}'s agent started (interrupted while waiting for its healthcheck)"
    return None if waited.ok else waited.failure(f"step {step.name!r}'s healthcheck")


def _step_refused(runner: Runner, plan: SessionPlan, level: str, message: str) -> str:
    """A task step whose setup failed before its agent could start: on record as that step's
    session (the cell's, after its earlier steps), an error of staging, never the agent's.
    Whether it is the cell's outcome is grading's to say (replay/outcomes.later_step_unstarted):
    Harbor never starts a step after one whose rewards fall below its min_reward."""
    session_id = runner.store.new_session(runner.run_id, plan.scenario.name, cell_id=plan.cell_id, attempt=plan.attempt, harness=plan.harness, model=plan.model, params=plan.params, parent_session=plan.parent_session)
    started: SessionStarted = {"scenario": plan.scenario.name, "harness": plan.harness, "model": plan.model, "prompt": plan.prompt, "attempt": plan.attempt, "sandbox": level, **plan.started}
    runner.store.append(session_id, unstarted_actions(started, "staging", message))
    runner.on_event("session.finished", {"session_id": session_id, "scenario": plan.scenario.name, "attempt": plan.attempt, "status": "error", "wall_ms": 0.0})
    return session_id


def _started(matrix: Matrix, plan: CellPlan, identity: CellIdentity, index: int) -> SessionStarted:
    cell = plan.cell
    step = cell.arm.steps[index]
    return {
        "scenario": cell.task.id,
        "harness": step.harness,
        "model": step.model_id,
        "prompt": cell.task.scenario.prompt,
        "attempt": cell.attempt,
        "sandbox": plan.level,
        **_with_task(started_extra(matrix.ev.name, cell, identity, plan.task_digest, index, plan.versions), cell.task),
    }


def _with_task(started: SessionStarted, task: Any) -> SessionStarted:
    """`session.started`'s `task` for a task folder's cell (the contract with grading)."""
    found = task_field(task)
    if found is not None:
        started["task"] = found
    return started


def _unstarted(runner: Runner, matrix: Matrix, plan: CellPlan, identity: CellIdentity, problem: Problem, pre_runs: list[CommandRun] | None = None, source: str | None = None, facts: dict[str, Any] | None = None) -> CellRecord:
    fields = session_fields(matrix.ev.name, plan.cell, identity, plan.task_digest, 0)
    session_id = runner.store.new_session(runner.run_id, **fields, source=source)
    started = _started(matrix, plan, identity, 0)
    if pre_runs:
        started["cell"]["pre"] = [r.to_dict() for r in pre_runs]
    started["cell"].update(facts or {})
    runner.store.append(session_id, unstarted_actions(started, problem.cause, problem.message))
    runner.on_event("session.finished", {"session_id": session_id, "scenario": plan.cell.task.id, "attempt": plan.cell.attempt, "status": "error", "wall_ms": 0.0})
    return CellRecord(plan, identity, [session_id])


def _out_of_time(runner: Runner, matrix: Matrix, plan: CellPlan, identity: CellIdentity, index: int, root: str | None) -> str:
    """A step the cell's time limit left no time for: on record as timed out, never started."""
    session_id = runner.store.new_session(runner.run_id, **session_fields(matrix.ev.name, plan.cell, identity, plan.task_digest, index, parent_session=root))
    runner.store.append(
        session_id,
        [
            Action("session.started", _started(matrix, plan, identity, index)),
            Action("error", {"message": f"the cell's time limit ({plan.cell.task.scenario.timeout:g}s) was used up before step {plan.cell.arm.steps[index].name!r}"}),
            Action("session.finished", {"status": "timeout", "exit_code": None, "timed_out": True, "wall_ms": 0.0}),
        ],
    )
    return session_id


def _close_unfinished(runner: Runner, cell_id: str, attempt: int, message: str, known: list[str]) -> list[str]:
    """Sessions of this cell in this run that have no `session.finished` (the step that broke):
    closed with an error whose cause is the sandbox. Returns the ones not already known."""
    new = []
    for session_id in runner.store.cell_session_ids(runner.run_id, cell_id, attempt):
        if runner.store.finish_status(session_id) is None:
            runner.store.append(session_id, [Action("error", {"message": message, "cause": "sandbox"}), Action("session.finished", {"status": "error", "exit_code": None, "timed_out": False, "wall_ms": 0.0})])
        if session_id not in known:
            new.append(session_id)
    return new


def _open_cause(level: str) -> str:
    """`engine` when the sandbox needed a container engine and none answers; else `sandbox`."""
    if level != "container":
        return "sandbox"
    from benchtape.sandbox.container import available

    return "sandbox" if available()[0] else "engine"
