"""The sandbox seam: one `Sandbox` per level, each opening a workspace a session runs in.

The run loop only ever does "open, record, close": it asks `sandbox_for(level)` for the
level's sandbox, opens it for one scenario (a fresh copy of the staged tree, or the real
directory at `none`, or a container), starts the harness through the opened workspace's
`spawn`, and closes it. Everything a level decides — where HOME is, what the environment
holds, whether sessions may run at once, what must be put back afterwards, how grading
commands run later — lives in the level's class, once.

Grading a stored session needs the same knowledge without the recording: the
`GradingSandbox` a session's `session.started` facts name (the host, or a fresh container
with the same image) runs exec-style checks and provides interpreters for code checks.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Protocol

from benchtape.core.command_runner import CommandRunner, Interpreter
from benchtape.core.launch_plan import LaunchPlan
from benchtape.core.model import Action
from benchtape.core.payloads import SessionStarted
from benchtape.sandbox.capture import Captured, Ending, SessionFolder
from benchtape.spec.bench import LEVELS


def checked_level(level: str | None) -> str | None:
    """A `--sandbox` value as given, refused (exit 2) when it is not a level: every command
    that takes the flag asks here, so none runs, or says ok, on a level that does not exist."""
    if level is not None and level not in LEVELS:
        from benchtape.core.errors import BadInput

        raise BadInput(f"--sandbox {level!r} is not a level", fix=f"use one of {', '.join(LEVELS)}")
    return level


class SandboxError(Exception):
    """A sandbox could not be opened for a session (an engine that refuses a limit, an image
    that will not start): that session errors with this message; the run goes on."""
STDERR_TAIL = 4000  # bytes of a harness's stderr kept for the error a failed session records


class Process(Protocol):
    """A started harness process, wherever it runs. Its stdout goes to a capture file in the
    session folder (benchtape.sandbox.capture), never to a pipe only benchtape reads, so what
    it printed survives benchtape being killed."""

    def lines(self, max_line: int) -> Iterator[Captured]:
        """Its stdout, one line at a time, as it arrives (newline-only splitting), each at most
        `max_line` bytes (a longer line keeps its head and tail); ends once it has exited and
        everything it wrote before exiting was read."""

    def wait(self, timeout: float) -> int | None:
        """Its exit code, or None if it is still running after `timeout` seconds."""

    def kill(self) -> None:
        """Kill it and everything it started."""

    def stderr_tail(self) -> str:
        """The last STDERR_TAIL bytes of its stderr (complete once it has exited)."""

    def ending(self) -> Ending:
        """Once it has exited and its lines were read: what was written after it exited (not
        its output), what it left running and was killed, whether its capture was rewritten."""


Spawn = Callable[[list[str], Mapping[str, str], bytes], Process]


@dataclass
class OpenWorkspace:
    """One session's opened sandbox: where the agent runs and how to start it there.

    Paths are host paths (`root` is what is snapshotted); `launch` holds how the same
    places look from inside (a container's /workspace), for the adapter's Launch.
    """

    level: str
    root: Path
    agent_cwd: Path
    home: Path
    env: dict[str, str]
    spawn: Spawn
    secret_names: list[str] = field(default_factory=list)
    launch: dict[str, Any] = field(default_factory=dict)  # Launch overrides (root, work_dir, python, mounted)
    facts: SessionStarted = field(default_factory=SessionStarted)  # recorded in session.started (e.g. the container)
    after_exit: Callable[[int | None], list[Action]] = lambda exit_code: []  # notes once the harness exited with this code (a tool's reported HOME folder changed, outside writes)
    forward: Callable[[str], str] = lambda url: url  # a loopback model endpoint as the agent reaches it (a container: bridged in)
    terminal: Callable[[list[str], Mapping[str, str]], Any] | None = None  # argv, env -> benchtape.sandbox.terminal.PaneCommand; None: on this host in agent_cwd
    folder: SessionFolder | None = None  # the session folder: capture files and what a recovery needs
    home_seeded: bool = False  # the launch plan's `home_json` is merged into HOME already (done ahead, in a spare folder)

    def note(self, **facts: Any) -> None:
        """Tell a later `benchtape recover` something about this session (session.json)."""
        if self.folder is not None:
            self.folder.note(**facts)


class Sandbox(Protocol):
    """A sandbox level."""

    level: str
    runs_alone: bool  # sessions at this level may not run concurrently (they share one real directory)

    def open(self, scenario: Any, seed: Path | None, plan: LaunchPlan | None = None) -> AbstractContextManager[OpenWorkspace]:
        """A fresh workspace for one session of `scenario`, seeded from the staged tree, laid
        out as the harness's launch plan asks (its mounts, what of your HOME to put back);
        closed (removed, unless kept) on exit, whatever happened inside. `home_seeded` says
        whether the plan's `home_json` is merged into HOME already."""

    def prepare_ahead(self, seed: Path | None, plan: LaunchPlan | None = None) -> None:
        """Start making the next session's sandbox (seeded from `seed`, the plan's `home_json`
        merged into its HOME where HOME is the workspace) off the session's path, where the
        level can; `open` uses it if it is ready and made for the same."""


@dataclass(frozen=True)
class GradingHost:
    """Where grading commands run for one restored workspace."""

    run: CommandRunner
    interpreter: Interpreter
    where: str = "host"


class GradingSandbox(Protocol):
    def open(self, work_dir: Path, bench_dir: Path | None = None) -> AbstractContextManager[GradingHost]:
        """Start whatever grading commands run in, on the restored workspace `work_dir`, with the
        bench's folder readable at its own path (where `file://` graders live)."""


Event = Callable[[str, dict[str, Any]], None]


def runs_alone(level: str) -> bool:
    """Whether sessions at `level` must run one at a time."""
    return level == "none"




