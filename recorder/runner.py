"""Running a harness and appending its actions as they arrive.

Every native stdout line is stored in `raw` and parsed into actions that are appended
at once, each line in its own transaction: a crash or a `kill -9` of benchtape keeps
every action already received, and the session simply has no `session.finished`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from adapters.base import Adapter, Launch, get_adapter, warning
from adapters.mock import MockAdapter
from recorder.sandbox import local as local_sandbox
from recorder.spec.bench import BenchSpec, ScenarioSpec
from recorder.sandbox.claude_home import ClaudeHome
from recorder.model import Action
from recorder.sandbox.outside_writes import OutsideWrites
from recorder.redact import redactor, secret_values
from recorder.sandbox.snapshot import snapshot
from recorder.store import Store

STDERR_TAIL = 4000


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
    work_root: Path | None = None  # only while a `none`-level run keeps its real dir
    grading_sandbox: Any = None  # workspace -> context manager of a command runner (container level)


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
        serial = any(self.level_of(s) == "none" for s, _ in jobs)
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
        if self.cancel.is_set():
            raise Interrupted()
        level = self.level_of(scenario)
        if level == "container":
            from recorder.sandbox.container_run import run_in_container

            return run_in_container(self, scenario, attempt, seed)
        ws = local_sandbox.prepare(scenario, seed, level=level)
        try:
            audit = OutsideWrites(ws.temp) if ws.temp is not None else None
            with ClaudeHome(ws.home) if level == "workspace" else contextlib.nullcontext() as home_guard:
                after_exit = lambda: self._sandbox_notes(audit, home_guard)  # noqa: E731
                record = self.record_session(scenario, attempt, ws.root, ws.agent_cwd, ws.home, ws.env, ws.secret_names, level, after_exit=after_exit)
        finally:
            if not self.options.keep_sandbox:
                ws.cleanup()
            elif ws.temp is not None:
                self.on_event("sandbox.kept", {"scenario": scenario.name, "attempt": attempt, "where": str(ws.temp), "remove": f"rm -rf {ws.temp}"})
        if level == "none":
            record.work_root = ws.root
        self.on_session_done(record)
        return record

    def _sandbox_notes(self, audit: OutsideWrites | None, home_guard: ClaudeHome | None) -> list[Action]:
        """What the sandbox saw once the harness exited: ~/.claude put back (plugins/ changes noted), writes outside the workspace."""
        notes = [Action("adapter.warning", {"what": note, "line": "", "source": "sandbox"}) for note in (home_guard.release() if home_guard else [])]
        outside = audit.message() if audit else None
        if outside:
            notes.append(Action("error", {"message": outside}))
        for note in notes:
            self.on_event("sandbox.note", {"kind": note.kind, "message": note.data.get("what") or note.data.get("message")})
        return notes

    def record_session(
        self,
        scenario: ScenarioSpec,
        attempt: int,
        root: Path,
        agent_cwd: Path,
        home: Path,
        env: dict[str, str],
        secret_names: list[str],
        level: str,
        spawn: Callable[..., Any] | None = None,
        launch_overrides: dict[str, Any] | None = None,
        after_exit: Callable[[], list[Action]] | None = None,
        started_extra: dict[str, Any] | None = None,
    ) -> SessionRecord:
        """Start the harness, stream its output into the store, snapshot the workspace."""
        adapter = self.adapter()
        store = self.store
        session_id = store.new_session(self.run_id, scenario.name, cell_id=None, attempt=attempt, harness=self.harness, model=self.model, params=self.bench.params, workdir=str(root))
        secrets = secret_values({**os.environ, **env}, secret_names)
        store.set_redactor(session_id, redactor(secrets))
        self.on_event("session.started", {"session_id": session_id, "scenario": scenario.name, "attempt": attempt})
        store.append(
            session_id,
            [
                Action("session.started", {"scenario": scenario.name, "harness": self.harness, "model": self.model, "prompt": scenario.prompt, "attempt": attempt, "work_dir": str(root), "sandbox": level, **(started_extra or {})}),
                Action("environment.expected", self.expected_environment(scenario, root, level)),
                Action("message.user", {"text": scenario.prompt}),
            ],
        )
        launch_args: dict[str, Any] = dict(
            prompt=scenario.prompt,
            work_dir=agent_cwd,
            root=root,
            home=home,
            model=self.model,
            harness_config=self.bench.harness_config,
            scenario=scenario.raw,
            session_uuid=str(uuid.uuid4()),
        )
        launch = Launch(**{**launch_args, **(launch_overrides or {})})
        status, exit_code, timed_out, wall_ms, stderr_tail = self._drive(adapter, launch, env, agent_cwd, scenario.timeout, session_id, spawn)
        closing: list[Action] = list(after_exit()) if after_exit else []
        if timed_out:
            closing.append(Action("error", {"message": f"timed out after {scenario.timeout:g}s; the harness's process group was killed"}))
        elif status == "error":
            closing.append(Action("error", {"message": f"harness exited with code {exit_code}", "stderr_tail": stderr_tail}))
        try:
            data, facts = snapshot(root) if root.exists() else (b"", {"files": 0, "bytes": 0})
            if data:
                sha = store.put_blob(data)
                closing.append(Action("workspace.snapshot", {"sha256": sha, **facts}))
        except OSError as exc:
            closing.append(Action("error", {"message": f"workspace snapshot failed: {exc}"}))
        closing.append(Action("session.finished", {"status": status, "exit_code": exit_code, "timed_out": timed_out, "wall_ms": wall_ms}))
        store.append(session_id, closing)
        self.on_event("session.finished", {"session_id": session_id, "scenario": scenario.name, "attempt": attempt, "status": status, "wall_ms": wall_ms})
        return SessionRecord(session_id=session_id, scenario=scenario, attempt=attempt, status=status)

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

    def _drive(self, adapter: Adapter, launch: Launch, env: dict[str, str], cwd: Path, timeout: float, session_id: str, spawn: Callable[..., Any] | None) -> tuple[str, int | None, bool, float, str]:
        cmd = adapter.command(launch)
        parser = adapter.parser()
        full_env = {**env, **cmd.env}
        started = time.monotonic()
        if spawn is not None:
            proc = spawn(cmd.argv, full_env, cwd, cmd.stdin)
        else:
            try:
                proc = _LocalProcess(cmd.argv, full_env, cwd, cmd.stdin)
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


class _LocalProcess:
    """A harness process on the host, in its own process group so a timeout kills all of it."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, stdin: bytes):
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        self._stderr = bytearray()
        threading.Thread(target=self._feed, args=(stdin,), daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _feed(self, data: bytes) -> None:
        try:
            if data:
                self.proc.stdin.write(data)
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def _drain_stderr(self) -> None:
        for chunk in iter(lambda: self.proc.stderr.read(4096), b""):
            self._stderr.extend(chunk)
            del self._stderr[: max(0, len(self._stderr) - STDERR_TAIL)]

    def lines(self):
        for raw in iter(self.proc.stdout.readline, b""):
            yield raw.decode("utf-8", "replace").rstrip("\r\n")

    def wait(self, timeout: float) -> int | None:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def stderr_tail(self) -> str:
        return bytes(self._stderr).decode("utf-8", "replace")
