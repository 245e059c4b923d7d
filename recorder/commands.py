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
