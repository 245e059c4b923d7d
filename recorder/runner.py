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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from benchtape.adapters.base import Adapter, Command, Launch, Setup, SetupOutput, get_adapter
from benchtape.adapters.endpoints import is_scripted
from benchtape.adapters.mock import MockAdapter
from benchtape.core.command_runner import telling_line
from benchtape.core.harnesses import CONTROL_HARNESSES
from benchtape.core.limits import output_limits
from benchtape.core.model import Action
from benchtape.core.payloads import STAGED, EnvironmentExpected, SessionFinished, SessionStarted, UserMessage
from benchtape.core.redact import redact_params, redactor, secret_params, secret_values, shapes_only
from benchtape.core.version import VERSION
from benchtape.recorder.recording import Recording, home_paths_of, workspace_snapshot
from benchtape.recorder.scripted import ScriptedModels
from benchtape.sandbox.capture import secret_fingerprints
from benchtape.sandbox.levels import OpenWorkspace
from benchtape.sandbox.run_resources import RunResources
from benchtape.spec.bench import ScenarioSpec
from benchtape.store.database import Blob, new_id
from benchtape.store.views import RecordingStore

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
    skip_preflight: bool = False  # --skip-preflight: findings that only save spend become notes (benchtape.app.preflight.enforce)


def _first_message(prompt: str, cmd: Command) -> UserMessage:
    """The prompt as the harness was given it, with the images its command sends (what
    `session:image-sent` counts: recorded as sent, harness-neutrally, like madbench's attachment)."""
    data: UserMessage = {"text": prompt}
    if cmd.attachments:
        data["attachments"] = list(cmd.attachments)
    return data


@dataclass
class SessionPlan:
    """What one session runs and how it is filed: a bench run makes one per (scenario,
    attempt) as it records it (benchtape.recorder.bench_run); an evaluation one per cell (and
    per workflow step) with its own harness, model, prompt, environment and cell identity;
    either records it through `Runner.record`."""

    scenario: ScenarioSpec
    attempt: int
    harness: str
    model: str | None
    harness_config: dict[str, Any]
    prompt: str
    noop: bool = False
    cell_id: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    started: SessionStarted = field(default_factory=SessionStarted)  # more facts for session.started (e.g. the cell)
    env: dict[str, str] = field(default_factory=dict)  # added to the sandbox's environment (overlay options)
    environment: EnvironmentExpected = field(default_factory=EnvironmentExpected)  # more of what benchtape gave the agent (a task's project environment)
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


class Interrupted(Exception):
    """Ctrl-C: what was recorded stays recorded."""


class Runner:
    """Records sessions into a run's store: `record` starts a plan's harness in an opened
    sandbox and streams what it prints into the store as it arrives. What is recorded when is
    the scheduler's (benchtape.recorder.scheduler); a runner is the recorder of one run."""

    def __init__(self, store: RecordingStore, run_id: str, *, resources: RunResources | None = None, on_event: Event | None = None):
        self.store = store
        self.run_id = run_id
        self.resources = resources  # the run's files made ahead and cleanups (benchtape.sandbox.run_resources)
        self.on_event = on_event or (lambda kind, data: None)
        self.cancel = threading.Event()
        self.scripted = ScriptedModels()  # the scripted model server, started only when a session asks for it
        self.limits = output_limits()  # a bad BENCHTAPE_MAX_* is bad input before anything runs
        self.ahead: Callable[[], None] | None = None  # one worker: make the next session's sandbox, once this one's harness started
        self._host_secrets: dict[tuple[str, ...], tuple[dict[str, str], dict[str, str]]] = {}  # secret names -> (the environment, its secret variables)

    def _harness_started(self) -> None:
        """This session's harness runs: the last session's folders go now (the session only waits
        for its harness), and the next session's sandbox is made off the session's path, while
        this one runs (started earlier, it would compete with this session's own start, or with
        its closing and grading)."""
        if self.resources is not None:
            self.resources.harness_started()
        ahead, self.ahead = self.ahead, None
        if ahead is not None:
            ahead()

    def could_not_open(self, plan: SessionPlan, level: str, exc: Exception) -> SessionRecord:
        """The session of a sandbox that would not open (an engine refusing a limit): on record
        as an error of that session, not of the run."""
        scenario, attempt = plan.scenario, plan.attempt
        session_id = self.store.new_session(self.run_id, scenario.name, cell_id=plan.cell_id, attempt=attempt, harness=plan.harness, model=plan.model, params=redact_params(plan.params, shapes_only()), parent_session=plan.parent_session)
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

    @staticmethod
    def _command(adapter: Adapter, launch: Launch, harness: str) -> Command:
        """The harness's launch plan. A plugin's `command` is not benchtape's code: one raising
        ended the run in its traceback (exit 1); it is bad input naming the plugin."""
        from benchtape.core.harnesses import BUILTIN

        if harness in BUILTIN:
            return adapter.command(launch)
        try:
            return adapter.command(launch)
        except Exception as exc:  # noqa: BLE001 - whatever the plugin's own code raises
            from benchtape.core.errors import BadInput
            from benchtape.core.harnesses import target

            raise BadInput(
                f"the harness plugin {harness!r} ({target(harness)}) failed to make its command: {type(exc).__name__}: {exc}",
                fix="fix the plugin's `command(launch)` (docs/harnesses.md, Adding a harness), or run another harness",
            ) from None

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
                "images": tuple(scenario.image),
                **box.launch,
                "endpoint": box.forward(endpoint.url) if endpoint else None,
            }
        )
        cmd = self._command(adapter, launch, plan.harness)
        facts: SessionStarted = {**box.facts, **plan.started}
        if endpoint is not None:
            facts["model_endpoint"] = endpoint.facts()
        named: dict[str, Any] = cmd.facts["binary"] if isinstance(cmd.facts.get("binary"), dict) else {}
        if plan.harness in CONTROL_HARNESSES:  # benchtape's own agent (the oracle), run by this Python: its version is benchtape's
            facts["binary"] = {"path": cmd.argv[0], "version": VERSION}
        elif plan.harness != "mock" and "version" not in named:  # a harness run through a wrapper names its own binary
            facts["binary"] = binary_facts(str(named.get("path") or cmd.argv[0]))
        facts.update({k: v for k, v in cmd.facts.items() if k != "binary" or "version" in named})  # type: ignore[typeddict-item]  # what the harness says of this session (its keys are SessionStarted's)
        if cmd.tui is not None:
            # the record is the tool's own session file, tailed: reparse reads it as that format,
            # and its user entries are the turns (each prompt as the tool received it)
            facts.update({"interactive": True, "format": "claude-transcript", "follow_ups": list(launch.follow_ups)})
        opening = [
            Action("session.started", {"scenario": scenario.name, "harness": plan.harness, "model": plan.model, "prompt": plan.prompt, "attempt": attempt, "work_dir": str(box.root), "sandbox": box.level, **facts}),
            Action("environment.expected", {**self.expected_environment(scenario, box.root, box.level, plan.harness_config), **plan.environment}),
        ]
        with store.transaction():
            store.new_session(self.run_id, scenario.name, cell_id=plan.cell_id, attempt=attempt, harness=plan.harness, model=plan.model, params=redact_params(plan.params, redact), workdir=str(box.root), parent_session=plan.parent_session, session_id=session_id)
            store.append(session_id, opening + ([] if cmd.tui is not None else [Action("message.user", _first_message(plan.prompt, cmd))]))
        # what `recover` finishes the session from if benchtape dies: written once the session is in the store
        box.note(db=str(Path(store.path).resolve()), session_id=session_id, run_id=self.run_id, harness=plan.harness, home=str(box.home), noop=plan.noop, secrets=secret_fingerprints(redact.values), secret_names=box.secret_names, started=time.time())
        self.on_event("session.started", {"session_id": session_id, "scenario": scenario.name, "attempt": attempt})
        timeout = plan.timeout if plan.timeout is not None else scenario.timeout
        env = {**box.env, **plan.env}
        refused, probed = self._prepare(adapter, launch, cmd, box, env, session_id)
        if cmd.tui is not None and box.level != "none":  # at workspace: into your own, put back when it closes (sandbox/home_guard.py)
            from benchtape.sandbox.home_seed import seed_home

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
            why = telling_line(drive.stderr_tail)
            closing.append(Action("error", {"message": f"harness exited with code {drive.exit_code}" + (f": {why}" if why else ""), "stderr_tail": drive.stderr_tail}))
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

    def expected_environment(self, scenario: ScenarioSpec, root: Path, level: str, hc: dict[str, Any]) -> EnvironmentExpected:
        from benchtape.adapters.claude_env import agent_env_plugins

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
            from benchtape.sandbox.home_seed import seed_home

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

    def _drive_interactive(self, cmd: Command, box: OpenWorkspace, env: dict[str, str], timeout: float, session_id: str, prompts: list[str]) -> Drive:
        """The terminal path (recorder/interactive.py): the agent in a tmux pane on this host,
        running where the level runs it (a container: `docker exec` with a TTY), its on-disk
        session tailed into the store line by line."""
        from benchtape.recorder.interactive import Driver
        from benchtape.sandbox.terminal import PaneCommand

        full = {**env, **cmd.env}
        pane = box.terminal(cmd.argv, full) if box.terminal is not None else PaneCommand(cmd.argv, box.agent_cwd, full)
        d = Driver(self.store, session_id, self.cancel, self.on_event).drive(cmd, box.home, pane, prompts, timeout, full)
        return Drive(d.status, d.exit_code, d.timed_out, d.wall_ms, d.tail, d.parser)

    def _drive(self, adapter: Adapter, cmd: Command, box: OpenWorkspace, env: dict[str, str], timeout: float, session_id: str, harness: str, environment: dict[str, Any] | None = None) -> Drive:
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
        self._harness_started()
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

    from benchtape.tools.binaries import version_of

    path = argv0 if os.sep in argv0 else (shutil.which(argv0) or argv0)
    return {"path": path, "version": version_of(path)}


def _transcript(store: RecordingStore, adapter: Adapter, home: Path, launch: Launch, parser: Any, blobs: list[Blob]) -> list[Action]:
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
    # what the record says that the stream did not (Gemini CLI's stream shows a read's result empty)
    fuller = getattr(parser, "from_transcript", None)
    return [Action("transcript", {"path": where, "sha256": blob.sha256, "bytes": len(data), "lines": data.count(b"\n")}), *(fuller(data) if fuller is not None else [])]


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

    def finished(self) -> SessionFinished:
        data: SessionFinished = {"status": self.status, "exit_code": self.exit_code, "timed_out": self.timed_out, "wall_ms": self.wall_ms}
        if self.truncated:
            data["truncated"] = True
        return data






