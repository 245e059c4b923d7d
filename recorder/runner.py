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

from adapters.base import Adapter, Command, Launch, Setup, SetupOutput, get_adapter, warning
from adapters.mock import MockAdapter
from recorder.model import Action
from recorder.redact import redactor, secret_values
from recorder.sandbox.levels import OpenWorkspace, runs_alone, sandbox_for
from recorder.sandbox.snapshot import snapshot
from recorder.scripted import ScriptedModels, is_scripted
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
class SessionPlan:
    """What one session runs and how it is filed: the run loop makes one per (scenario,
    attempt); an evaluation makes one per cell (and per workflow step) with its own harness,
    model, prompt, environment and cell identity, and records it through `Runner.record`."""

    scenario: ScenarioSpec
    attempt: int
    harness: str
    model: str | None
    harness_config: dict[str, Any]
    prompt: str
    noop: bool = False
    cell_id: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    started: dict[str, Any] = field(default_factory=dict)  # more facts for session.started (e.g. the cell)
    env: dict[str, str] = field(default_factory=dict)  # added to the sandbox's environment (overlay options)
    timeout: float | None = None  # None: the scenario's
    parent_session: str | None = None

    def adapter(self) -> Adapter:
        if self.harness == "mock":
            return MockAdapter(noop=self.noop)
        return get_adapter(self.harness)


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
        self.scripted = ScriptedModels()  # the scripted model server, started only when a session asks for it

    def plan(self, scenario: ScenarioSpec, attempt: int) -> SessionPlan:
        """The session the bench and the options ask for."""
        return SessionPlan(scenario, attempt, self.harness, self.model, self.bench.harness_config, scenario.prompt, noop=self.options.noop, params=self.bench.params)

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
            self.scripted.close()
        return records

    # ------------------------------------------------------------ one session
    def _one(self, scenario: ScenarioSpec, attempt: int, seed: Path | None) -> SessionRecord:
        """Open the level's sandbox, record the session in it, close it; then hand it to grading."""
        if self.cancel.is_set():
            raise Interrupted()
        sandbox = sandbox_for(self.level_of(scenario), keep=self.options.keep_sandbox, on_event=self._kept(attempt))
        with sandbox.open(scenario, seed) as box:
            record = self.record(self.plan(scenario, attempt), box)
        self.on_session_done(record)
        return record

    def _kept(self, attempt: int) -> Event:
        return lambda kind, data: self.on_event(kind, {**data, "attempt": attempt} if kind == "sandbox.kept" else data)

    def record(self, plan: SessionPlan, box: OpenWorkspace) -> SessionRecord:
        """Start the plan's harness in the opened sandbox, stream its output into the store,
        snapshot the workspace; everything the session needs is recorded in its stream."""
        scenario, attempt = plan.scenario, plan.attempt
        adapter = plan.adapter()
        store = self.store
        session_id = store.new_session(self.run_id, scenario.name, cell_id=plan.cell_id, attempt=attempt, harness=plan.harness, model=plan.model, params=plan.params, workdir=str(box.root), parent_session=plan.parent_session)
        secrets = secret_values({**os.environ, **box.env, **plan.env}, box.secret_names)
        store.set_redactor(session_id, redactor(secrets))
        self.on_event("session.started", {"session_id": session_id, "scenario": scenario.name, "attempt": attempt})
        inside = {str(box.launch["root"]): str(box.root)} if "root" in box.launch else None
        endpoint = self.scripted.endpoint(session_id, scenario.mock, noop=plan.noop, source=str(scenario.where), paths=inside) if is_scripted(plan.model) and plan.harness != "mock" else None
        launch = Launch(
            **{
                "prompt": plan.prompt,
                "work_dir": box.agent_cwd,
                "root": box.root,
                "home": box.home,
                "model": plan.model,
                "harness_config": plan.harness_config,
                "scenario": scenario.raw,
                "session_uuid": str(uuid.uuid4()),
                "interactive": scenario.interactive and plan.harness != "mock",
                "follow_ups": tuple(scenario.follow_ups),
                **box.launch,
                "endpoint": box.forward(endpoint.url) if endpoint else None,
            }
        )
        cmd = adapter.command(launch)
        facts: dict[str, Any] = {**box.facts, **plan.started}
        if endpoint is not None:
            facts["model_endpoint"] = endpoint.facts()
        if plan.harness != "mock":
            facts["binary"] = binary_facts(cmd.argv[0])
        if cmd.tui is not None:
            # the record is the tool's own session file, tailed: reparse reads it as that format,
            # and its user entries are the turns (each prompt as the tool received it)
            facts.update({"interactive": True, "format": "claude-transcript", "follow_ups": list(launch.follow_ups)})
        opening = [
            Action("session.started", {"scenario": scenario.name, "harness": plan.harness, "model": plan.model, "prompt": plan.prompt, "attempt": attempt, "work_dir": str(box.root), "sandbox": box.level, **facts}),
            Action("environment.expected", self.expected_environment(scenario, box.root, box.level, plan.harness_config)),
        ]
        store.append(session_id, opening + ([] if cmd.tui is not None else [Action("message.user", {"text": plan.prompt})]))
        timeout = plan.timeout if plan.timeout is not None else scenario.timeout
        env = {**box.env, **plan.env}
        refused, probed = self._prepare(adapter, launch, cmd, box, env, session_id)
        if refused is not None:
            status, exit_code, timed_out, wall_ms, stderr_tail, parser = "error", None, False, 0.0, refused, None
        elif cmd.tui is not None:
            status, exit_code, timed_out, wall_ms, stderr_tail, parser = self._drive_interactive(cmd, box, env, timeout, session_id, [plan.prompt, *launch.follow_ups])
        else:
            status, exit_code, timed_out, wall_ms, stderr_tail, parser = self._drive(adapter, cmd, box, env, timeout, session_id, plan.harness, probed)
        closing: list[Action] = list(box.after_exit())
        closing += self.scripted.findings(session_id)
        if cmd.tui is None and parser is not None:  # an interactive session's raw lines are its transcript already
            closing += _transcript(store, adapter, box.home, launch, parser)
        if timed_out:
            closing.append(Action("error", {"message": f"timed out after {timeout:g}s; the harness's process group was killed"}))
        elif status == "error" and cmd.tui is None:
            closing.append(Action("error", {"message": f"harness exited with code {exit_code}", "stderr_tail": stderr_tail}))
        try:
            data, snap = snapshot(box.root) if box.root.exists() else (b"", {"files": 0, "bytes": 0})
            if data:
                sha = store.put_blob(data)
                closing.append(Action("workspace.snapshot", {"sha256": sha, **snap}))
        except OSError as exc:
            closing.append(Action("error", {"message": f"workspace snapshot failed: {exc}"}))
        closing.append(Action("session.finished", {"status": status, "exit_code": exit_code, "timed_out": timed_out, "wall_ms": wall_ms}))
        store.append(session_id, closing)
        self.on_event("session.finished", {"session_id": session_id, "scenario": scenario.name, "attempt": attempt, "status": status, "wall_ms": wall_ms})
        return SessionRecord(session_id=session_id, scenario=scenario, attempt=attempt, status=status)

    def expected_environment(self, scenario: ScenarioSpec, root: Path, level: str, harness_config: dict[str, Any] | None = None) -> dict[str, Any]:
        from adapters.claude_env import agent_env_plugins

        hc = self.bench.harness_config if harness_config is None else harness_config
        plugins = [p if isinstance(p, dict) else {"id": p} for p in hc.get("plugins") or []]
        plugins += agent_env_plugins(hc.get("agent_env") if isinstance(hc.get("agent_env"), str) else None)
        return {
            "sandbox": level,
            "testdata": str(scenario.testdata) if scenario.testdata else None,
            "repo": scenario.repo,
            "cwd": scenario.cwd,
            "plugins": plugins,
            "agent_env": hc.get("agent_env"),
            "system_prompt": hc.get("system_prompt"),
        }

    def _prepare(self, adapter: Adapter, launch: Launch, cmd: Command, box: OpenWorkspace, env: dict[str, str], session_id: str) -> tuple[str | None, dict[str, Any] | None]:
        """Stage what the harness needs under HOME and run its setup commands in the sandbox
        (plugin installs, the environment probe), before the agent starts: the probe's record
        is `environment.reported`; with `require`, a problem it found refuses the session here,
        before any spend (an ERROR, not a FAIL). Returns why it was refused (else None) and the
        probe's record (the print path folds it into each init line's)."""
        if cmd.home_json and box.level not in ("none", "workspace"):  # a HOME of the sandbox's own, never yours
            from recorder.interactive import seed_home

            seed_home(box.home, cmd.home_json)
        if not cmd.setup and not cmd.home_trees:
            return None, None
        import shutil

        for rel, source in cmd.home_trees.items():
            target = box.home / rel
            if target.exists():
                shutil.rmtree(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(source, target, symlinks=True)
        _write_home_files(box.home, cmd.home_files)
        outputs = {step.name: self._setup_step(box, {**env, **cmd.env, **step.env}, step) for step in cmd.setup}
        read = getattr(adapter, "environment", None)
        record, problems = read(launch, outputs) if read is not None else (None, [])
        notes = [Action("adapter.warning", {"what": f"setup `{n}` exited {o.exit_code}: {(o.stderr or o.stdout).strip()[-400:]}", "line": "", "source": "setup"}) for n, o in outputs.items() if o.exit_code not in (0, None) and not n.startswith("init")]
        if record is not None and cmd.probe:
            notes.append(Action("environment.reported", record))
        if problems and cmd.require:
            why = "environment.require refused the run before launch: " + "; ".join(problems)
            notes.append(Action("error", {"message": why, "reason": "environment_require"}))
            self.store.append(session_id, notes)
            return why, record
        if notes:
            self.store.append(session_id, notes)
        return None, record

    def _setup_step(self, box: OpenWorkspace, env: dict[str, str], step: Setup) -> SetupOutput:
        """One setup command in the sandbox, stopped once it printed `until` (the probe's init line)."""
        try:
            proc = box.spawn(step.argv, env, b"")
        except OSError as exc:
            return SetupOutput(None, "", str(exc))
        lines: list[str] = []

        def read() -> None:
            for line in proc.lines():
                lines.append(line)
                if step.until and step.until in line:
                    proc.kill()
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(step.timeout)
        if reader.is_alive():
            proc.kill()
            reader.join(5)
        code = proc.wait(5)
        return SetupOutput(code, "\n".join(lines), proc.stderr_tail())

    def _drive_interactive(self, cmd: Command, box: OpenWorkspace, env: dict[str, str], timeout: float, session_id: str, prompts: list[str]) -> tuple[str, int | None, bool, float, str, Any]:
        """The terminal path (recorder/interactive.py): the agent in a tmux pane on this host,
        running where the level runs it (a container: `docker exec` with a TTY), its on-disk
        session tailed into the store line by line."""
        from recorder.interactive import Driver
        from recorder.terminal import PaneCommand

        _write_home_files(box.home, cmd.home_files)
        full = {**env, **cmd.env}
        pane = box.terminal(cmd.argv, full) if box.terminal is not None else PaneCommand(cmd.argv, box.agent_cwd, full)
        d = Driver(self.store, session_id, self.cancel, self.on_event).drive(cmd, box.home, pane, prompts, timeout, full)
        return d.status, d.exit_code, d.timed_out, d.wall_ms, d.tail, d.parser

    def _drive(self, adapter: Adapter, cmd: Command, box: OpenWorkspace, env: dict[str, str], timeout: float, session_id: str, harness: str, environment: dict[str, Any] | None = None) -> tuple[str, int | None, bool, float, str, Any]:
        parser = adapter.parser()
        fold = getattr(parser, "fold_environment", None)
        if fold is not None:
            fold(environment, cmd.probe)
        started = time.monotonic()
        try:
            _write_home_files(box.home, cmd.home_files)
            proc = box.spawn(cmd.argv, {**env, **cmd.env}, cmd.stdin)
        except OSError as exc:
            self.store.append(session_id, [Action("error", {"message": f"could not start {cmd.argv[0]}: {exc}"})])
            return "error", None, False, 0.0, str(exc), parser
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
                    actions = [warning(f"the {harness} adapter failed on this line: {type(exc).__name__}: {exc}", line)]
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
            tail = [warning(f"the {harness} adapter failed at end of stream: {type(exc).__name__}: {exc}", "")]
        tail += [Action("error", {"message": m}) for m in store_failure]
        if tail:
            self.store.append(session_id, tail)
        if interrupted:
            status = "interrupted"
        elif timed_out:
            status = "timeout"
        else:
            status = "ok" if exit_code == 0 else "error"
        return status, exit_code, timed_out, wall_ms, proc.stderr_tail(), parser


def _write_home_files(home: Path, files: dict[str, str]) -> None:
    """Files the harness needs under its HOME before it starts (a private CODEX_HOME's config)."""
    for rel, text in files.items():
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def binary_facts(argv0: str) -> dict[str, Any]:
    """Which binary ran, and which version it says it is: part of what a session measured."""
    import shutil

    from adapters.binaries import version_of

    path = argv0 if os.sep in argv0 else (shutil.which(argv0) or argv0)
    return {"path": path, "version": version_of(path)}


def _transcript(store: Store, adapter: Adapter, home: Path, launch: Launch, parser: Any) -> list[Action]:
    """The harness's own on-disk record of the session (Claude's transcript, Codex's rollout),
    stored beside the stream it printed: the two can be cross-checked, and either re-parsed."""
    find = getattr(adapter, "transcript", None)
    if find is None:
        return []
    thread = getattr(parser, "thread_id", None)
    try:
        path = find(home, launch, thread) if thread is not None else find(home, launch)
    except TypeError:
        path = find(home, launch)
    if path is None or not path.is_file():
        return []
    data = path.read_bytes()
    try:
        where = str(path.relative_to(home))
    except ValueError:
        where = str(path)
    return [Action("transcript", {"path": where, "sha256": store.put_blob(data), "bytes": len(data), "lines": data.count(b"\n")})]
