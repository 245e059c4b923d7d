"""Running a command for grading: the one runner interface every sandbox provides.

Exec-style checks never start processes themselves; they call the `CommandRunner` their
context hands them, so the same check runs on the host, in a home sandbox or inside a
container without knowing which. This module is neutral ground: checks and sandboxes both
import it, neither imports the other.
"""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping


@dataclass(frozen=True)
class CommandResult:
    exit_code: int | None
    output: str
    timed_out: bool = False


def run_local(argv: list[str], cwd: Path, timeout: float, env: Mapping[str, str] | None = None, stdin: bytes | None = None) -> CommandResult:
    """Run argv (no shell) on the host; the default command runner for exec-style checks.

    The command gets its own process group, so a timeout kills everything it started
    (`sh -c 'make test'` included), not just the direct child.
    """
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(env) if env is not None else None,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(input=stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        out, _ = proc.communicate()
        return CommandResult(None, (out or b"").decode("utf-8", "replace"), timed_out=True)
    return CommandResult(proc.returncode, out.decode("utf-8", "replace"))


CommandRunner = Callable[..., CommandResult]


Interpreter = Callable[[str], "list[str] | None"]
"""An interpreter by name (`python`, `node`, `bun`, `go`, …) → the argv prefix that starts it
where grading commands run, or None when that place has none. Code checks ask for their
runtime this way, never `sys.executable`, so they work on the host and inside a container."""

_HOST_ALIASES = {"python": "python3"}


def local_interpreter(name: str) -> list[str] | None:
    """The host's interpreters: benchtape's own Python for `python`, else the first on PATH."""
    import shutil
    import sys

    if name in ("python", "python3"):
        return [sys.executable]
    found = shutil.which(_HOST_ALIASES.get(name, name))
    return [found] if found else None


# What a grading command inherits from the host; nothing else (no API keys, no tokens).
GRADING_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")


def grading_env() -> dict[str, str]:
    """The scrubbed environment every grading command runs with (madbench's custom:exec rule),
    plus the flags graders test for."""
    env = {k: os.environ[k] for k in GRADING_ENV if k in os.environ}
    env["BENCHTAPE"] = "1"
    env["MADBENCH"] = "1"  # graders ported from madbench test for this marker
    return env


class Unavailable(Exception):
    """Something a check needs could not be provided where it is graded: the workspace (no
    snapshot, a corrupt one), the grading sandbox (no engine), the output (a transform that
    raised). Raised by the context when a check first asks for it, so exactly the checks that
    needed it ERROR, with one wording per cause (`str(exc)`) and a machine-readable `cause`
    that the positive control reads (a report without snapshots SKIPs, never DIVERGEs)."""

    def __init__(self, cause: str, why: str):
        super().__init__(why)
        self.cause = cause
