"""A bench run's sessions: one per (scenario, attempt) the bench and the options ask for.

The run's row is made first (its secrets redacted), then the scheduler records the sessions
(benchtape.recorder.scheduler): the scenarios' trees are staged once, after the orphan sweep,
and every (scenario, attempt) becomes a job; its sandbox is opened, the session recorded in
it, the sandbox closed, and the record handed to the caller (live grading). Ctrl-C stops the
sessions in flight at once (they are kept, as interrupted) and raises `Interrupted` once they
are.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from benchtape.adapters.base import launch_plan
from benchtape.core.limits import output_limits
from benchtape.core.payloads import SessionStarted
from benchtape.core.redact import redact_argv, redact_params, redactor, secret_params, secret_values
from benchtape.recorder.runner import Interrupted, Runner, RunOptions, SessionPlan, SessionRecord
from benchtape.recorder.scheduler import ExecutorFactory, LocalExecutor, Scheduler
from benchtape.sandbox.by_level import sandbox_for
from benchtape.sandbox.levels import Event, SandboxError
from benchtape.spec.bench import BenchSpec, ScenarioSpec, fan_out
from benchtape.store.views import RecordingStore

SessionDone = Callable[[SessionRecord], None]


class BenchSessions:
    """What the bench and the options ask for: the harness and model (an option overrides the
    bench's), the scenarios, their levels, and once staged, the trees they are seeded from."""

    def __init__(self, bench: BenchSpec, options: RunOptions):
        self.bench = bench
        self.options = options
        self.harness = options.harness or bench.harness or "mock"
        self.model = options.model or bench.harness_config.get("model")
        self.seeds: Any = None  # the staged trees and generated vars, once staged (benchtape.sandbox.staging.Seeds)
        output_limits()  # a bad BENCHTAPE_MAX_* is bad input before anything runs (no run row yet)

    def start_run(self, store: RecordingStore) -> str:
        """The run's row; a secret on the command line or in a param is stored redacted."""
        redact = redactor(secret_values(os.environ) + secret_params(self.bench.params))
        params = {**self.bench.params, "_eval_run": self.options.eval_run} if self.options.eval_run else self.bench.params
        return store.new_run(
            self.options.run_kind,
            bench_path=str(self.bench.path),
            bench_sha256=self.bench.sha256,
            harness=self.harness,
            model=self.model,
            argv=redact_argv(self.options.argv, redact),
            params=redact_params(params, redact),
        )

    def scheduler(self, store: RecordingStore, run_id: str, on_event: Event | None = None, executor: ExecutorFactory = LocalExecutor) -> Scheduler:
        """The run's scheduler, with the options' concurrency and sandbox keeping."""
        return Scheduler(store, run_id, concurrency=self.options.concurrency, keep_sandbox=self.options.keep_sandbox, on_event=on_event, executor=executor)

    def scenarios(self) -> list[ScenarioSpec]:
        wanted = self.options.scenarios
        return [s for s in self.bench.scenarios if not wanted or s.name in wanted]

    def level_of(self, scenario: ScenarioSpec) -> str:
        return self.options.sandbox or scenario.sandbox.level

    def plan(self, scenario: ScenarioSpec, attempt: int) -> SessionPlan:
        """The session the bench and the options ask for."""
        started: SessionStarted = {"provider": scenario.provider} if scenario.provider is not None else {}  # a `providers:` label: which of the scenario's sessions this is
        if self.seeds is not None:
            scenario = self.seeds.scenario(scenario)  # its `generated:` pictures, as staging found them
        return SessionPlan(scenario, attempt, self.harness, self.model, self.bench.harness_config, scenario.prompt, noop=self.options.noop, params=self.bench.params, started=started)

    def record(self, scheduler: Scheduler, on_session_done: SessionDone) -> list[SessionRecord]:
        """Stage, then record every (scenario, attempt) through `scheduler`; returns the records
        in the order they finished. Ctrl-C: the sessions in flight are stopped and kept, then
        `Interrupted` is raised."""
        from benchtape.sandbox.staging import stage_seeds

        try:
            with scheduler:
                emit = scheduler.on_event
                self.seeds = stage_seeds(self.bench, self.scenarios(), on_event=emit)
                jobs = [SessionJob(self, p, attempt) for attempt in range(1, self.options.repeat + 1) for s in self.scenarios() for p in fan_out(s)]  # one session per `providers:` label
                emit("run.started", {"run_id": scheduler.run_id, "total": len(jobs), "bench": str(self.bench.path)})
                ran = scheduler.run(jobs, on_session_done)
        finally:
            if self.seeds is not None:
                self.seeds.cleanup()  # after the run's spares copied from them are gone (the scheduler's end)
        if ran.interrupted:
            raise Interrupted()
        return ran.records


class SessionJob:
    """One (scenario, attempt) of a bench run: its plan is made as it is recorded (a plan per
    job held from the start grew with the run)."""

    __slots__ = ("attempt", "scenario", "sessions")

    def __init__(self, sessions: BenchSessions, scenario: ScenarioSpec, attempt: int):
        self.sessions, self.scenario, self.attempt = sessions, scenario, attempt

    @property
    def level(self) -> str:
        return self.sessions.level_of(self.scenario)

    def record(self, runner: Runner) -> SessionRecord:
        """Open the level's sandbox, record the session in it, close it. A sandbox that cannot
        open (an engine refusing a limit) errors that session, not the run."""
        if runner.cancel.is_set():
            raise Interrupted()
        plan = self.sessions.plan(self.scenario, self.attempt)
        sandbox = sandbox_for(self.level, keep=self.sessions.options.keep_sandbox, on_event=self._kept(runner.on_event), resources=runner.resources)
        try:
            with sandbox.open(self.scenario, self._seed(), launch_plan([plan.harness], self.level)) as box:
                return runner.record(plan, box)
        except SandboxError as exc:
            return runner.could_not_open(plan, self.level, exc)

    def prepare_ahead(self, runner: Runner) -> None:
        """Make this session's sandbox ahead (the session before it has started its harness)."""
        plan = self.sessions.plan(self.scenario, self.attempt)
        sandbox_for(self.level, keep=self.sessions.options.keep_sandbox, resources=runner.resources).prepare_ahead(self._seed(), launch_plan([plan.harness], self.level))

    def _seed(self) -> Path | None:
        seeds = self.sessions.seeds
        return seeds.get(self.scenario.name) if seeds is not None else None

    def _kept(self, emit: Event) -> Event:
        attempt = self.attempt
        return lambda kind, data: emit(kind, {**data, "attempt": attempt} if kind == "sandbox.kept" else data)


def record_bench(store: RecordingStore, bench: BenchSpec, options: RunOptions, *, on_event: Event | None = None, on_session_done: SessionDone | None = None) -> list[SessionRecord]:
    """Record a bench run into `store` (its own run row), without live grading unless
    `on_session_done` grades: the write side alone, for a caller that grades later."""
    sessions = BenchSessions(bench, options)
    run_id = sessions.start_run(store)
    return sessions.record(sessions.scheduler(store, run_id, on_event), on_session_done or (lambda record: None))
