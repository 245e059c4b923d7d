"""Running a harness and appending its actions as they arrive.

The harness writes its output to a capture file in its session folder (never to a pipe
only benchtape reads); the recorder tails that file, and every line is stored in `raw` with
the actions parsed from it in one transaction, as it arrives. A `kill -9` of benchtape
keeps every action already stored, and what the harness wrote after that stays in the
capture file until `benchtape recover` (or the next start of benchtape) ingests it and
finishes the session as `interrupted` (recorder/recover.py). The harness runs under a
supervisor that kills it, and whatever it left running, with its run.

Stored output is capped per line and per session (core/limits.py); a session whose
output was cut finishes `truncated`, never `ok`.
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

from benchtape.adapters.base import Adapter, Command, Launch, Setup, SetupOutput, get_adapter
from benchtape.adapters.mock import MockAdapter
from benchtape.core.payloads import STAGED
from benchtape.core.limits import output_limits
from benchtape.core.model import Action
from benchtape.core.redact import redact_argv, redact_params, redactor, secret_params, secret_values, shapes_only
from benchtape.sandbox.capture import secret_fingerprints
from benchtape.sandbox.levels import OpenWorkspace, SandboxError, runs_alone
from benchtape.sandbox.by_level import sandbox_for
from benchtape.sandbox.inodes import POOL
from benchtape.sandbox.local import discard_spares
from benchtape.recorder.recording import Recording, home_paths_of, workspace_snapshot
from benchtape.sandbox.trees import parking, release_parked, wait_later
from benchtape.recorder.scripted import ScriptedModels, is_scripted
from benchtape.spec.bench import BenchSpec, ScenarioSpec, fan_out
from benchtape.store.database import Blob, Store, new_id


SETUP_LINE = 8 << 20  # bytes of one line a setup command prints (the probe's init line is the longest)


@dataclass
class RunOptions:
    harness: str | None = None  # overrides the bench's harness
    model: str | None = None
    repeat: int = 1
    concurrency: int = 4
    sandbox: str | None = None  # overrides every scenario's level
    allow_host_writes: bool = False
    allow_network: bool = False  # consent for a container `network:` other than none
    keep_sandbox: bool = False
    noop: bool = False  # the negative control: the mock ignores any script
    run_kind: str = "run"
    argv: list[str] = field(default_factory=list)
    scenarios: list[str] | None = None  # only these names
    eval_run: str | None = None  # the Eval run entry this bench run is; recorded in the run's params as `_eval_run`
    skip_preflight: bool = False  # --skip-preflight: findings that only save spend become notes (benchtape.preflight.enforce)


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
        self.seeds: Any = None  # the staged trees and generated vars of the current run (benchtape.sandbox.staging.Seeds)
        self.scripted = ScriptedModels()  # the scripted model server, started only when a session asks for it
        self.limits = output_limits()  # a bad BENCHTAPE_MAX_* is bad input before anything runs
        self._host_secrets: dict[tuple[str, ...], tuple[dict[str, str], dict[str, str]]] = {}  # secret names -> (the environment, its secret variables)
        self._upcoming: list[tuple[ScenarioSpec, int, Path | None]] = []  # one worker: the sessions not started yet (scenario, attempt, staged tree), in order
        self._upcoming_lock = threading.Lock()
        self._ahead: tuple[ScenarioSpec, int, Path | None] | None = None  # one worker: the session to prepare once this one's harness started

    def plan(self, scenario: ScenarioSpec, attempt: int) -> SessionPlan:
        """The session the bench and the options ask for."""
        started = {"provider": scenario.provider} if scenario.provider is not None else {}  # a `providers:` label: which of the scenario's sessions this is
        return SessionPlan(scenario, attempt, self.harness, self.model, self.bench.harness_config, scenario.prompt, noop=self.options.noop, params=self.bench.params, started=started)

    def scenarios(self) -> list[ScenarioSpec]:
        wanted = self.options.scenarios
        return [s for s in self.bench.scenarios if not wanted or s.name in wanted]

    def level_of(self, scenario: ScenarioSpec) -> str:
        return self.options.sandbox or scenario.sandbox.level

    def start_run(self) -> str:
        """The run's row; a secret on the command line or in a param is stored redacted."""
        redact = redactor(secret_values(os.environ) + secret_params(self.bench.params))
        params = {**self.bench.params, "_eval_run": self.options.eval_run} if self.options.eval_run else self.bench.params
        self.run_id = self.store.new_run(
            self.options.run_kind,
            bench_path=str(self.bench.path),
            bench_sha256=self.bench.sha256,
            harness=self.harness,
            model=self.model,
            argv=redact_argv(self.options.argv, redact),
            params=redact_params(params, redact),
        )
        return self.run_id

    def run(self) -> list[SessionRecord]:
        """Run every (scenario, attempt); returns records in completion order."""
        self.recover_orphans()
        if self.run_id is None:
            self.start_run()
        from benchtape.sandbox.staging import stage_seeds

        seeds = self.seeds = stage_seeds(self.bench, self.scenarios(), on_event=self.on_event)
        jobs = [(p, attempt) for attempt in range(1, self.options.repeat + 1) for s in self.scenarios() for p in fan_out(s)]  # one session per `providers:` label
        serial = any(runs_alone(self.level_of(s)) for s, _ in jobs)
        workers = 1 if serial else max(1, self.options.concurrency)
        self._upcoming = [(s, attempt, seeds.get(s.name)) for s, attempt in jobs] if workers == 1 else []
        POOL.enable()  # grading restores the workspace from files and folders made ahead
        parking(True)  # finished sessions' folders are removed once the next harness has started
        records: list[SessionRecord] = []
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="benchtape-session")
        try:  # from here: parking is turned off again whatever happens (it keeps the cleanup thread)
            self.on_event("run.started", {"run_id": self.run_id, "total": len(jobs), "bench": str(self.bench.path)})
            futures = [pool.submit(self._one, s, attempt, seeds.get(s.name)) for s, attempt in jobs]
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
            discard_spares()  # before the staged trees they were copied from go
            POOL.discard()
            parking(False)
            seeds.cleanup()
            self.scripted.close()
            wait_later()  # the sessions' folders, removed off their path: gone when the run returns
        return records

    def recover_orphans(self) -> None:
        """What a killed benchtape left (sessions to finish, sandboxes, a ~/.claude to put back), first."""
        from benchtape.recorder.recover import sweep

        for found in sweep():
            self.on_event("sandbox.note", {"kind": "recover", "message": found})

    # ------------------------------------------------------------ one session
    def _one(self, scenario: ScenarioSpec, attempt: int, seed: Path | None) -> SessionRecord:
        """Open the level's sandbox, record the session in it, close it; then hand it to grading.
        A sandbox that cannot open (an engine refusing a limit) errors that session, not the run."""
        if self.cancel.is_set():
            raise Interrupted()
        plan = self.plan(scenario, attempt)
        sandbox = sandbox_for(self.level_of(scenario), keep=self.options.keep_sandbox, on_event=self._kept(attempt))
        self._ahead = self._following()
        try:
            with sandbox.open(scenario, seed, plan.adapter().home_json) as box:
                record = self.record(plan, box)
        except SandboxError as exc:
            record = self._could_not_open(plan, exc)
        self.on_session_done(record)
        return record

    def _following(self) -> tuple[ScenarioSpec, int, Path | None] | None:
        """With one worker, the session after the one starting now (its scenario, attempt and staged tree)."""
        with self._upcoming_lock:
            if self._upcoming:
                self._upcoming.pop(0)
            return self._upcoming[0] if self._upcoming else None

    def _prepare_ahead(self) -> None:
        """With one worker, once this session's harness is started: the next session's sandbox is
        made off the session's path, while this one runs (started then, it would compete with
        this session's own start, or with its closing and grading)."""
        following, self._ahead = self._ahead, None
        if following is not None:  # planned here, for the next session only: a plan per job held from the start grew with the run
            scenario, attempt, seed = following
            sandbox_for(self.level_of(scenario), keep=self.options.keep_sandbox).prepare_ahead(seed, self.plan(scenario, attempt).adapter().home_json)

    def _could_not_open(self, plan: SessionPlan, exc: Exception) -> SessionRecord:
        scenario, attempt = plan.scenario, plan.attempt
        session_id = self.store.new_session(self.run_id, scenario.name, cell_id=plan.cell_id, attempt=attempt, harness=plan.harness, model=plan.model, params=redact_params(plan.params, shapes_only()), parent_session=plan.parent_session)
        level = self.level_of(scenario)
        self.store.append(
            session_id,
            [
                Action("session.started", {"scenario": scenario.name, "harness": plan.harness, "model": plan.model, "prompt": plan.prompt, "attempt": attempt, "sandbox": level, **plan.started}),
                Action("error", {"message": f"the {level} sandbox could not be opened: {exc}", "cause": "sandbox"}),
                Action("session.finished", {"status": "error", "exit_code": None, "timed_out": False, "wall_ms": 0.0}),
            ],
        )
        self.on_event("session.finished", {"session_id": session_id, "scenario": scenario.name, "attempt": attempt, "status": "error", "wall_ms": 0.0})
        return SessionRecord(session_id=session_id, scenario=scenario, attempt=attempt, status="error")

    def _kept(self, attempt: int) -> Event:
        return lambda kind, data: self.on_event(kind, {**data, "attempt": attempt} if kind == "sandbox.kept" else data)

    def record(self, plan: SessionPlan, box: OpenWorkspace) -> SessionRecord:
        """Start the plan's harness in the opened sandbox, stream its output into the store,
        snapshot the workspace; everything the session needs is recorded in its stream."""
        scenario, attempt = plan.scenario, plan.attempt
        adapter = plan.adapter()
        store = self.store
        secrets = self._secret_values({**box.env, **plan.env}, box.secret_names) + secret_params(plan.params)
        redact = redactor(secrets)
        session_id = new_id()  # its row is written with its opening actions, in one transaction
        store.set_redactor(session_id, redact)
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
        with store.transaction():
            store.new_session(self.run_id, scenario.name, cell_id=plan.cell_id, attempt=attempt, harness=plan.harness, model=plan.model, params=redact_params(plan.params, redact), workdir=str(box.root), parent_session=plan.parent_session, session_id=session_id)
            store.append(session_id, opening + ([] if cmd.tui is not None else [Action("message.user", {"text": plan.prompt})]))
        # what `recover` finishes the session from if benchtape dies: written once the session is in the store
        box.note(db=str(Path(store.path).resolve()), session_id=session_id, run_id=self.run_id, harness=plan.harness, home=str(box.home), noop=plan.noop, secrets=secret_fingerprints(redact.values), secret_names=box.secret_names, started=time.time())
        self.on_event("session.started", {"session_id": session_id, "scenario": scenario.name, "attempt": attempt})
        timeout = plan.timeout if plan.timeout is not None else scenario.timeout
        env = {**box.env, **plan.env}
        refused, probed = self._prepare(adapter, launch, cmd, box, env, session_id)
        if cmd.tui is not None and box.level not in ("none", "workspace"):
            from benchtape.sandbox.claude_home import seed_home

            seed_home(box.home, cmd.tui.seed({**env, **cmd.env}))  # the terminal UI's first-run answers, merged into what staging wrote
        # what the agent's changes are diffed against: taken once benchtape's own writes into HOME
        # (first-run answers, staged plugins) are in, so they are never counted as the agent's
        own = home_paths_of(plan.harness, box.home, box.root)
        staged: list[Blob] = []
        state = home_paths_of(plan.harness, box.home, box.root, "own_state")
        store.append(session_id, workspace_snapshot(store, box.root, redact, stage=STAGED, leave_out=own, blobs=staged, own_state=state), blobs=staged)
        if refused is not None:
            drive = Drive("error", None, False, 0.0, refused)
        elif cmd.tui is not None:
            drive = self._drive_interactive(cmd, box, env, timeout, session_id, [plan.prompt, *launch.follow_ups])
        else:
            drive = self._drive(adapter, cmd, box, env, timeout, session_id, plan.harness, probed)
        closing: list[Action] = list(box.after_exit(drive.exit_code))
        closing += self.scripted.findings(session_id)
        blobs: list[Blob] = []  # written with the closing, in its one transaction
        if cmd.tui is None and drive.parser is not None:  # an interactive session's raw lines are its transcript already
            closing += _transcript(store, adapter, box.home, launch, drive.parser, blobs)
        if drive.timed_out:
            closing.append(Action("error", {"message": f"timed out after {timeout:g}s; the harness and everything it started were killed"}))
        elif drive.status == "error" and cmd.tui is None and drive.exit_code not in (None, 0):
            closing.append(Action("error", {"message": f"harness exited with code {drive.exit_code}", "stderr_tail": drive.stderr_tail}))
        closing.extend(workspace_snapshot(store, box.root, redact, leave_out=own, blobs=blobs))
        closing.append(Action("session.finished", drive.finished()))
        store.append(session_id, closing, blobs=blobs)
        self.on_event("session.finished", {"session_id": session_id, "scenario": scenario.name, "attempt": attempt, "status": drive.status, "wall_ms": drive.wall_ms})
        return SessionRecord(session_id=session_id, scenario=scenario, attempt=attempt, status=drive.status)

    def _secret_values(self, env: dict[str, str], names: list[str]) -> list[str]:
        """`secret_values` of this process's environment with `env` over it. Each variable is
        judged on its own, so the host's part is judged once per run (its regexes cost ~0.35 ms
        a session), again only if the environment changed."""
        host = dict(os.environ)
        key = tuple(sorted(names))
        cached = self._host_secrets.get(key)
        if cached is None or cached[0] != host:
            cached = self._host_secrets[key] = (host, {k: v for k, v in host.items() if secret_values({k: v}, names)})
        hits = cached[1]
        over = {k: v for k, v in env.items() if host.get(k) != v}
        values = {v for k, v in hits.items() if k not in over} | set(secret_values(over, names))
        return sorted(values, key=len, reverse=True)

    def expected_environment(self, scenario: ScenarioSpec, root: Path, level: str, harness_config: dict[str, Any] | None = None) -> dict[str, Any]:
        from benchtape.adapters.claude_env import agent_env_plugins

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
        if adapter.home_json and box.level not in ("none", "workspace") and not box.home_seeded:  # a HOME of the sandbox's own, never yours
            from benchtape.sandbox.claude_home import seed_home

            seed_home(box.home, adapter.home_json)
        if not cmd.setup and not cmd.home_trees:
            _write_home_files(box.home, cmd.home_files)  # before the staged snapshot: benchtape's own, never the agent's change
            return None, None
        import shutil

        from benchtape.sandbox.trees import remove_tree

        for rel, source in cmd.home_trees.items():
            target = box.home / rel
            if target.exists():
                remove_tree(target)
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
        from benchtape.sandbox.box_commands import run_in_box

        try:
            ran = run_in_box(box, list(step.argv), env, step.timeout, until=step.until, max_line=SETUP_LINE)
        except OSError as exc:
            return SetupOutput(None, "", str(exc))
        return SetupOutput(ran.exit_code, "\n".join(ran.lines), ran.stderr)

    def _drive_interactive(self, cmd: Command, box: OpenWorkspace, env: dict[str, str], timeout: float, session_id: str, prompts: list[str]) -> "Drive":
        """The terminal path (recorder/interactive.py): the agent in a tmux pane on this host,
        running where the level runs it (a container: `docker exec` with a TTY), its on-disk
        session tailed into the store line by line."""
        from benchtape.recorder.interactive import Driver
        from benchtape.sandbox.terminal import PaneCommand

        full = {**env, **cmd.env}
        pane = box.terminal(cmd.argv, full) if box.terminal is not None else PaneCommand(cmd.argv, box.agent_cwd, full)
        d = Driver(self.store, session_id, self.cancel, self.on_event).drive(cmd, box.home, pane, prompts, timeout, full)
        return Drive(d.status, d.exit_code, d.timed_out, d.wall_ms, d.tail, d.parser)

    def _drive(self, adapter: Adapter, cmd: Command, box: OpenWorkspace, env: dict[str, str], timeout: float, session_id: str, harness: str, environment: dict[str, Any] | None = None) -> "Drive":
        """Start the harness, record its output as it is written, wait for it to exit (or kill it
        and everything it started on timeout or Ctrl-C); what is over the output limits is
        dropped with a marker."""
        parser = adapter.parser()
        fold = getattr(parser, "fold_environment", None)
        if fold is not None:
            fold(environment, cmd.probe)  # the probe's record joins each init line's
        recording = Recording(self.store, session_id, parser, harness, self.limits, self.on_event)
        started = time.monotonic()
        try:
            proc = box.spawn(cmd.argv, {**env, **cmd.env}, cmd.stdin)
        except OSError as exc:
            self.store.append(session_id, [Action("error", {"message": f"could not start {cmd.argv[0]}: {exc}"})])
            return Drive("error", None, False, 0.0, str(exc), recording.parser)
        reader = threading.Thread(target=recording.pump, args=(proc,), name="benchtape-reader", daemon=True)
        reader.start()
        release_parked()  # the last session's folders go now: this one only waits for its harness
        self._prepare_ahead()
        deadline = started + timeout
        timed_out = interrupted = False
        while True:
            exit_code = proc.wait(0.1)
            if exit_code is not None:
                break
            if self.cancel.is_set() or time.monotonic() >= deadline:
                interrupted, timed_out = self.cancel.is_set(), not self.cancel.is_set()
                proc.kill()
                exit_code = proc.wait(5)
                break
        wall_ms = (time.monotonic() - started) * 1000
        reader.join()  # bounded: it reads only what the harness wrote before it exited
        recording.finish(proc.ending())
        if interrupted:
            status = "interrupted"
        elif timed_out:
            status = "timeout"
        elif exit_code != 0 or recording.failures:
            status = "error"
        else:
            status = "truncated" if recording.budget.truncated else "ok"
        return Drive(status, exit_code, timed_out, wall_ms, proc.stderr_tail(), recording.parser, recording.budget.truncated)


def _write_home_files(home: Path, files: dict[str, str]) -> None:
    """Files the harness needs under its HOME before it starts (a private CODEX_HOME's config)."""
    for rel, text in files.items():
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def binary_facts(argv0: str) -> dict[str, Any]:
    """Which binary ran, and which version it says it is: part of what a session measured."""
    import shutil

    from benchtape.adapters.binaries import version_of

    path = argv0 if os.sep in argv0 else (shutil.which(argv0) or argv0)
    return {"path": path, "version": version_of(path)}


def _transcript(store: Store, adapter: Adapter, home: Path, launch: Launch, parser: Any, blobs: list[Blob]) -> list[Action]:
    """The harness's own on-disk record of the session (Claude's transcript, Codex's rollout),
    stored beside the stream it printed: the two can be cross-checked, and either re-parsed.
    Its bytes join `blobs`, for the caller to write with the returned action."""
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
    blob = store.prepare_blob(data)
    blobs.append(blob)
    return [Action("transcript", {"path": where, "sha256": blob.sha256, "bytes": len(data), "lines": data.count(b"\n")})]


@dataclass
class Drive:
    """How the harness's run ended, for `session.finished`."""

    status: str
    exit_code: int | None
    timed_out: bool
    wall_ms: float
    stderr_tail: str
    parser: Any = None  # what read the stream (a transcript is found by its thread id)
    truncated: bool = False

    def finished(self) -> dict[str, Any]:
        data: dict[str, Any] = {"status": self.status, "exit_code": self.exit_code, "timed_out": self.timed_out, "wall_ms": self.wall_ms}
        if self.truncated:
            data["truncated"] = True
        return data






