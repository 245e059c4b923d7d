"""Running a harness and appending its actions as they arrive.

Every native stdout line is stored in `raw` and parsed into actions that are appended
at once, each line in its own transaction: a crash or a `kill -9` of benchtape keeps
every action already received, and the session simply has no `session.finished`.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from adapters.base import Adapter, Launch, get_adapter, warning
from adapters.mock import MockAdapter
from recorder.kinds import STAGED
from recorder.model import Action
from recorder.redact import redactor, secret_values
from recorder.sandbox.levels import OpenWorkspace, runs_alone, sandbox_for
from recorder.sandbox.snapshot import snapshot
from recorder.spec.bench import BenchSpec, ScenarioSpec
from recorder.store import Store


@dataclass
class RunOptions:
    harness: str | None = None  # overrides the bench's harness
    model: str | None = None
    repeat: int = 1
    concurrency: int = 4
    sandbox: str | None = None  # overrides every scenario's level
    allow_host_writes: bool = False
    keep_sandbox: bool = False
    noop: bool = False  # the negative control: the mock ignores any script
    run_kind: str = "run"
    argv: list[str] = field(default_factory=list)
    scenarios: list[str] | None = None  # only these names
    eval_run: str | None = None  # the Eval run entry this bench run is; recorded in the run's params as `_eval_run`


@dataclass
class SessionRecord:
    session_id: str
    scenario: ScenarioSpec
    attempt: int
    status: str


Event = Callable[[str, dict[str, Any]], None]
SessionDone = Callable[[SessionRecord], None]


class Interrupted(Exception):
    """Ctrl-C: what was recorded stays recorded."""


class Runner:
    def __init__(self, store: Store, bench: BenchSpec, options: RunOptions, on_event: Event | None = None, on_session_done: SessionDone | None = None):
        self.store = store
        self.bench = bench
        self.options = options
        self.on_event = on_event or (lambda kind, data: None)
        self.on_session_done = on_session_done or (lambda record: None)
        self.cancel = threading.Event()
        self.harness = options.harness or bench.harness or "mock"
        self.model = options.model or bench.harness_config.get("model")
        self.run_id: str | None = None
        self.seeds: Any = None  # the staged trees and generated vars of the current run (recorder.sandbox.staging.Seeds)

    def adapter(self) -> Adapter:
        if self.harness == "mock":
            return MockAdapter(noop=self.options.noop)
        return get_adapter(self.harness)

    def scenarios(self) -> list[ScenarioSpec]:
        wanted = self.options.scenarios
        return [s for s in self.bench.scenarios if not wanted or s.name in wanted]

    def level_of(self, scenario: ScenarioSpec) -> str:
        return self.options.sandbox or scenario.sandbox.level

    def start_run(self) -> str:
        self.run_id = self.store.new_run(
            self.options.run_kind,
            bench_path=str(self.bench.path),
            bench_sha256=self.bench.sha256,
            harness=self.harness,
            model=self.model,
            argv=self.options.argv,
            params={**self.bench.params, "_eval_run": self.options.eval_run} if self.options.eval_run else self.bench.params,
        )
        return self.run_id

    def run(self) -> list[SessionRecord]:
        """Run every (scenario, attempt); returns records in completion order."""
        if self.run_id is None:
            self.start_run()
        from recorder.sandbox.staging import stage_seeds

        seeds = self.seeds = stage_seeds(self.bench, self.scenarios(), on_event=self.on_event)
        jobs = [(s, attempt) for attempt in range(1, self.options.repeat + 1) for s in self.scenarios()]
        serial = any(runs_alone(self.level_of(s)) for s, _ in jobs)
        workers = 1 if serial else max(1, self.options.concurrency)
        records: list[SessionRecord] = []
        self.on_event("run.started", {"run_id": self.run_id, "total": len(jobs), "bench": str(self.bench.path)})
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="benchtape-session")
        futures = [pool.submit(self._one, s, attempt, seeds.get(s.name)) for s, attempt in jobs]
        try:
            for fut in futures:
                while True:
                    try:
                        records.append(fut.result(timeout=0.2))
                        break
                    except TimeoutError:
                        continue
        except KeyboardInterrupt:
            self.cancel.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise Interrupted() from None
        finally:
            pool.shutdown(wait=True)
            seeds.cleanup()
        return records

    # ------------------------------------------------------------ one session
    def _one(self, scenario: ScenarioSpec, attempt: int, seed: Path | None) -> SessionRecord:
        """Open the level's sandbox, record the session in it, close it; then hand it to grading."""
        if self.cancel.is_set():
            raise Interrupted()
        sandbox = sandbox_for(self.level_of(scenario), keep=self.options.keep_sandbox, on_event=self._kept(attempt))
        with sandbox.open(scenario, seed) as box:
            record = self._record(scenario, attempt, box)
        self.on_session_done(record)
        return record

    def _kept(self, attempt: int) -> Event:
        return lambda kind, data: self.on_event(kind, {**data, "attempt": attempt} if kind == "sandbox.kept" else data)

    def _record(self, scenario: ScenarioSpec, attempt: int, box: OpenWorkspace) -> SessionRecord:
        """Start the harness in the opened sandbox, stream its output into the store, snapshot the workspace."""
        adapter = self.adapter()
        store = self.store
        session_id = store.new_session(self.run_id, scenario.name, cell_id=None, attempt=attempt, harness=self.harness, model=self.model, params=self.bench.params, workdir=str(box.root))
        secrets = secret_values({**os.environ, **box.env}, box.secret_names)
        store.set_redactor(session_id, redactor(secrets))
        self.on_event("session.started", {"session_id": session_id, "scenario": scenario.name, "attempt": attempt})
        store.append(
            session_id,
            [
                Action("session.started", {"scenario": scenario.name, "harness": self.harness, "model": self.model, "prompt": scenario.prompt, "attempt": attempt, "work_dir": str(box.root), "sandbox": box.level, **box.facts}),
                Action("environment.expected", self.expected_environment(scenario, box.root, box.level)),
                Action("message.user", {"text": scenario.prompt}),
            ],
        )
        store.append(session_id, self._snapshot(box.root, stage=STAGED))  # what the agent's changes are diffed against
        launch = Launch(
            **{
                "prompt": scenario.prompt,
                "work_dir": box.agent_cwd,
                "root": box.root,
                "home": box.home,
                "model": self.model,
                "harness_config": self.bench.harness_config,
                "scenario": scenario.raw,
                "session_uuid": str(uuid.uuid4()),
                **box.launch,
            }
        )
        status, exit_code, timed_out, wall_ms, stderr_tail = self._drive(adapter, launch, box, scenario.timeout, session_id)
        closing: list[Action] = list(box.after_exit())
        if timed_out:
            closing.append(Action("error", {"message": f"timed out after {scenario.timeout:g}s; the harness's process group was killed"}))
        elif status == "error":
            closing.append(Action("error", {"message": f"harness exited with code {exit_code}", "stderr_tail": stderr_tail}))
        closing.extend(self._snapshot(box.root))
        closing.append(Action("session.finished", {"status": status, "exit_code": exit_code, "timed_out": timed_out, "wall_ms": wall_ms}))
        store.append(session_id, closing)
        self.on_event("session.finished", {"session_id": session_id, "scenario": scenario.name, "attempt": attempt, "status": status, "wall_ms": wall_ms})
        return SessionRecord(session_id=session_id, scenario=scenario, attempt=attempt, status=status)

    def _snapshot(self, root: Path, stage: str | None = None) -> list[Action]:
        """The tree under root as a `workspace.snapshot` (the final one, or `stage` staged), or the error that stopped it."""
        what = "staged tree" if stage else "workspace"
        try:
            data, facts = snapshot(root) if root.exists() else (b"", {"files": 0, "bytes": 0})
            if not data:
                return []
            return [Action("workspace.snapshot", {"sha256": self.store.put_blob(data), **facts, **({"stage": stage} if stage else {})})]
        except OSError as exc:
            return [Action("error", {"message": f"{what} snapshot failed: {exc}"})]

    def expected_environment(self, scenario: ScenarioSpec, root: Path, level: str) -> dict[str, Any]:
        hc = self.bench.harness_config
        plugins = [p if isinstance(p, dict) else {"id": p} for p in hc.get("plugins") or []]
        return {
            "sandbox": level,
            "testdata": str(scenario.testdata) if scenario.testdata else None,
            "repo": scenario.repo,
            "cwd": scenario.cwd,
            "plugins": plugins,
            "agent_env": hc.get("agent_env"),
            "system_prompt": hc.get("system_prompt"),
        }

    def _drive(self, adapter: Adapter, launch: Launch, box: OpenWorkspace, timeout: float, session_id: str) -> tuple[str, int | None, bool, float, str]:
        cmd = adapter.command(launch)
        parser = adapter.parser()
        started = time.monotonic()
        try:
            proc = box.spawn(cmd.argv, {**box.env, **cmd.env}, cmd.stdin)
        except OSError as exc:
            self.store.append(session_id, [Action("error", {"message": f"could not start {cmd.argv[0]}: {exc}"})])
            return "error", None, False, 0.0, str(exc)
        line_no = 0

        store_failure: list[str] = []

        def pump() -> None:
            """Drain every line even when parsing or storing one fails: a reader that stopped
            would leave the harness blocked on a full pipe until the timeout."""
            nonlocal line_no
            for line in proc.lines():
                line_no += 1
                try:
                    actions = parser.feed(line)
                except Exception as exc:  # noqa: BLE001 - an adapter bug must not lose the stream
                    actions = [warning(f"the {self.harness} adapter failed on this line: {type(exc).__name__}: {exc}", line)]
                if store_failure:
                    continue
                try:
                    self.store.append_line(session_id, line_no, line, actions)
                except Exception as exc:  # noqa: BLE001 - e.g. a full disk: say so once, keep draining
                    store_failure.append(f"recording stopped at line {line_no}: {type(exc).__name__}: {exc}")
                    continue
                for a in actions:
                    self.on_event("action", {"session_id": session_id, "kind": a.kind, "thread": a.thread, "data": a.data})

        reader = threading.Thread(target=pump, name="benchtape-reader", daemon=True)
        reader.start()
        deadline = started + timeout
        timed_out = interrupted = False
        exit_code: int | None = None
        while True:
            exit_code = proc.wait(0.1)
            if exit_code is not None:
                break
            if self.cancel.is_set():
                interrupted = True
                proc.kill()
                exit_code = proc.wait(5)
                break
            if time.monotonic() >= deadline:
                timed_out = True
                proc.kill()
                exit_code = proc.wait(5)
                break
        wall_ms = (time.monotonic() - started) * 1000
        reader.join(timeout=10)
        try:
            tail = parser.finish()
        except Exception as exc:  # noqa: BLE001
            tail = [warning(f"the {self.harness} adapter failed at end of stream: {type(exc).__name__}: {exc}", "")]
        tail += [Action("error", {"message": m}) for m in store_failure]
        if tail:
            self.store.append(session_id, tail)
        if interrupted:
            status = "interrupted"
        elif timed_out:
            status = "timeout"
        else:
            status = "ok" if exit_code == 0 else "error"
        return status, exit_code, timed_out, wall_ms, proc.stderr_tail()
