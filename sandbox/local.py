"""Local sandbox levels: what a run gets its own copy of.

`workspace`: a fresh temp copy of the staged tree, real HOME (what the launch plan says the
tools keep there, e.g. ~/.claude, is put back afterwards). `home` (the default): the same, and
HOME is that folder. `none`: the real directory, gated twice (the bench names it and the operator passes --allow-host-writes), one
session at a time. `container` lives in sandbox/container_level.py.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from benchtape.core.command_runner import grading_env, local_interpreter, run_local
from benchtape.core.launch_plan import LaunchPlan
from benchtape.core.model import Action
from benchtape.sandbox.capture import SessionFolder
from benchtape.sandbox.home_guard import HomeGuard
from benchtape.sandbox.levels import Event, GradingHost, OpenWorkspace, runs_alone
from benchtape.sandbox.outside_writes import OutsideWrites
from benchtape.sandbox.pidfence import fence
from benchtape.sandbox.run_resources import RunResources
from benchtape.sandbox.spares import SpareKey, lay_out
from benchtape.sandbox.supervisor import MARKER, SupervisedProcess
from benchtape.sandbox.terminal import PaneCommand
from benchtape.sandbox.trees import later, remove_tree
from benchtape.spec.bench import ScenarioSpec

# Passed through from the host; everything else is scrubbed. No credential is: a harness's
# adapter adds the ones its tool declares (adapters.base.host_credentials), a bench the ones it
# shares (`share.env`, `share.secret_env`).
BASE_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "USER", "LOGNAME", "SHELL")


@dataclass
class Workspace:
    root: Path  # the workspace root: what is snapshotted and graded
    agent_cwd: Path  # where the agent starts (`cwd:` moves only the agent)
    home: Path
    env: dict[str, str]
    level: str
    temp: Path | None = None  # the session folder holding work/ and tmp/ (removed with it)
    secret_names: list[str] = field(default_factory=list)


def sandbox_env(scenario: ScenarioSpec, host: Mapping[str, str], home: Path, tmpdir: Path | None) -> dict[str, str]:
    """The scrubbed environment a harness runs with."""
    env = {k: host[k] for k in BASE_ENV if k in host}
    env["HOME"] = str(home)
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    elif "TMPDIR" in host:
        env["TMPDIR"] = host["TMPDIR"]
    for name in list(scenario.sandbox.share_env) + list(scenario.sandbox.secret_env):
        if name in host:
            env[name] = host[name]
    env.update(scenario.sandbox.env)
    env["BENCHTAPE"] = "1"
    return env


def prepare(scenario: ScenarioSpec, seed: Path | None, host_env: Mapping[str, str] | None = None, level: str | None = None, temp: Path | None = None, laid_out: bool = False) -> Workspace:
    """A fresh workspace for one session, seeded from the staged tree (in `temp`, the session
    folder, when given; else in a new temp folder). `laid_out`: `temp` already holds work/ and
    tmp/ (a spare session folder, `prepare_ahead`)."""
    host_env = dict(os.environ if host_env is None else host_env)
    level = level or scenario.sandbox.level
    secret_names = list(scenario.sandbox.secret_env)
    if level == "none":
        root = scenario.sandbox.workdir or Path.cwd()
        home = Path(host_env.get("HOME", str(Path.home())))
        env = sandbox_env(scenario, host_env, home, None)
        return Workspace(root=root, agent_cwd=_agent_cwd(root, scenario), home=home, env=env, level=level, secret_names=secret_names)
    temp = temp or Path(tempfile.mkdtemp(prefix="benchtape-"))
    if not laid_out:
        lay_out(temp, seed)
    root, tmpdir = temp / "work", temp / "tmp"
    home = root if level in ("home", "container") else Path(host_env.get("HOME", str(Path.home())))
    env = sandbox_env(scenario, host_env, home, tmpdir)
    cwd = _agent_cwd(root, scenario)
    if not cwd.is_dir():
        remove_tree(temp)
        from benchtape.core.errors import BadInput

        raise BadInput(f"`cwd: {scenario.cwd}` does not exist in the staged workspace", file=scenario.where.file, line=scenario.where.line, fix="create that folder in the testdata, or fix cwd:")
    for share in scenario.sandbox.share_paths:
        _apply_local_share(share, root)
    return Workspace(root=root, agent_cwd=cwd, home=home, env=env, level=level, temp=temp, secret_names=secret_names)


def _agent_cwd(root: Path, scenario: ScenarioSpec) -> Path:
    return root / scenario.cwd if scenario.cwd else root


def _apply_local_share(share: dict[str, str], root: Path) -> None:
    """rw: a link to the real path; copy: a copy. (ro is container-only and refused at load.)"""
    src = Path(share["from"])
    to = Path(share["to"])
    dest = to if to.is_absolute() else root / to
    if to.is_absolute():
        return  # an absolute target only makes sense inside a container
    dest.parent.mkdir(parents=True, exist_ok=True)
    if share["access"] == "copy":
        if src.is_dir():
            shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dest)
    else:
        if not dest.exists():
            dest.symlink_to(src)


class LocalLevel:
    """The levels that run on the host: none, workspace, home."""

    def __init__(self, level: str, *, keep: bool = False, on_event: Event | None = None, resources: RunResources | None = None):
        self.level = level
        self.runs_alone = runs_alone(level)
        self.keep = keep
        self.on_event = on_event or (lambda kind, data: None)
        self.resources = resources  # the run's spares and cleanups; None outside a run (a scratch sandbox)

    def prepare_ahead(self, seed: Path | None, plan: LaunchPlan | None = None) -> None:
        """Make the next session's folder, seeded from `seed` (and the plan's `home_json` merged
        in, where HOME is the workspace), while this one runs (benchtape.sandbox.spares)."""
        if self.level != "none" and self.resources is not None:
            self.resources.spares.make_later(self._spare_key(seed, plan))

    def _spare_key(self, seed: Path | None, plan: LaunchPlan | None) -> SpareKey:
        return (self.level, self.keep, seed, dict(plan.home_json) if plan is not None and self.level == "home" else {})

    @contextlib.contextmanager
    def open(self, scenario: ScenarioSpec, seed: Path | None, plan: LaunchPlan | None = None) -> Iterator[OpenWorkspace]:
        """(Mounts need nothing on the host: the agent reads each folder where it is.)"""
        key = self._spare_key(seed, plan)
        folder = self.resources.spares.take(key) if self.level != "none" and self.resources is not None else None
        laid_out = folder is not None
        if folder is None:
            folder = SessionFolder.create(level=self.level, keep=self.keep)  # locked first: a sweep of orphans never takes it
        try:
            ws = prepare(scenario, seed, level=self.level, temp=folder.path if self.level != "none" else None, laid_out=laid_out)
        except BaseException:
            folder.close()
            raise
        folder.note(root=str(ws.root))  # in session.json before the harness starts: a recovery after a kill -9 snapshots the workspace there
        read_only = plan.read_only if plan is not None else ()
        hidden = plan.hidden if plan is not None else ()
        try:
            if plan is not None:
                _give_environment(plan, ws)
            audit = OutsideWrites(ws.temp) if ws.temp is not None else None
            with contextlib.ExitStack() as guards:
                home_guards = [guards.enter_context(HomeGuard(ws.home, state)) for state in (plan.home_states if plan is not None and self.level == "workspace" else ())]
                yield OpenWorkspace(
                    level=self.level,
                    root=ws.root,
                    agent_cwd=ws.agent_cwd,
                    home=ws.home,
                    env=ws.env,
                    spawn=lambda argv, env, stdin: SupervisedProcess(fence().wrap(argv, ws.agent_cwd, env, report=folder.file("leftovers"), read_only=read_only, hidden=hidden), env, ws.agent_cwd, stdin, folder),
                    terminal=lambda argv, env: PaneCommand(fence().wrap(argv, ws.agent_cwd, env, read_only=read_only, hidden=hidden), ws.agent_cwd, {**env, MARKER: folder.path.name}),  # marked as a supervised harness is: after a kill -9, `recover` kills the terminal's tmux server and the agent in it
                    facts={"process_fence": fence().facts()},
                    secret_names=ws.secret_names,
                    after_exit=lambda exit_code: self._notes(audit, home_guards),
                    folder=folder,
                    home_seeded=laid_out and bool(key[3]),
                )
        finally:
            kept = self.keep and ws.temp is not None
            if kept:
                folder.close(remove=False)
            else:  # off the session's path: the run waits for it at its end
                (self.resources.cleanup.park if self.resources is not None else later)(folder.close)
            if kept:
                self.on_event("sandbox.kept", {"scenario": scenario.name, "where": str(ws.temp), "remove": f"rm -rf {ws.temp}"})

    def _notes(self, audit: OutsideWrites | None, home_guards: list[HomeGuard]) -> list[Action]:
        """What the level saw once the harness exited: changes under a tool's reported folder in
        your HOME (~/.claude/plugins; the rest of it is put back when the workspace closes, once
        the harness's transcript is read), writes outside the workspace."""
        notes = [Action("adapter.warning", {"what": note, "line": "", "source": "sandbox"}) for guard in home_guards for note in guard.plugin_notes()]
        outside = audit.message() if audit else None
        if outside:
            notes.append(Action("error", {"message": outside}))
        for note in notes:
            said = note.payload("adapter.warning").get("what") if note.kind == "adapter.warning" else note.payload("error").get("message")
            self.on_event("sandbox.note", {"kind": note.kind, "message": said})
        return notes


def _give_environment(plan: LaunchPlan, ws: Workspace) -> None:
    """What the plan gives the agent besides its harness (a task's project environment): its
    variables, and a copy of a Node project's node_modules of the agent's own beside the
    workspace (in the session folder; a real copy, never links into the cache: a write there is
    the agent's alone). A level without a session folder (none) gets no copy."""
    ws.env.update(plan.variables(str(ws.root), ws.env.get("PATH", os.defpath)))
    if plan.node_modules is None or ws.temp is None:
        return
    import subprocess

    dest = ws.temp / "node_modules"
    done = subprocess.run(["cp", "-a", "--reflink=auto", str(plan.node_modules), str(dest)], capture_output=True, text=True, timeout=1200)
    if done.returncode != 0:
        remove_tree(dest)
        raise OSError(f"copying the project's node_modules beside the workspace failed: {done.stderr.strip()[-300:]}")


class LocalGrading:
    """Grading commands on the host, with a scrubbed environment and a PID namespace of their
    own: agent-written code that a check runs (a test suite, say) never sees the host's tokens
    and keys, neither in its own environment nor in another process's."""

    @contextlib.contextmanager
    def open(self, work_dir: Path, bench_dir: Path | None = None) -> Iterator[GradingHost]:
        yield GradingHost(run=_scrubbed_run, interpreter=local_interpreter)


def _scrubbed_run(argv: list[str], cwd: Path, timeout: float, env: Mapping[str, str] | None = None, stdin: bytes | None = None) -> Any:
    """A grading command: a scrubbed environment, and a PID namespace of its own, so the
    agent-written code it runs reads no other process's environment (sandbox/pidfence.py)."""
    full = {**grading_env(), **(env or {})}
    return run_local(fence().wrap(argv, cwd, full), cwd, timeout, env=full, stdin=stdin)
