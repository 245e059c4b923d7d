"""Graders in a child process, wherever grading runs: the JavaScript runtime they need, and
the marked line they answer on.

The `js`/`ts` checks and the output transforms run user code in node (or bun, when the
scenario pins one with `defaults.bun:`), found through the interpreter of the place grading
runs (the host, or the grading container), never imported into benchtape. Both read the
answer the same way: the runner writes one marked JSON line, which the user code's own
prints on the same pipe cannot be mistaken for. This module sits below the catalog's
registry so the transforms (which the registry applies) can use it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any, Mapping, Protocol

from benchtape.checks.json_text import loads_json
from benchtape.core.command_runner import CommandRunner, Interpreter, grading_env

RESULT_MARK = "@@benchtape-result@@ "
STRIP_TYPES = "--experimental-strip-types"
NODE_INSTALL = "apt-get install nodejs (node ≥ 22.6 for ts), or see https://nodejs.org"
BUN_INSTALL = "npm install bun (then put node_modules/.bin on PATH), or see https://bun.sh"
ANY_VERSION = ("latest", "true", "*", "any")

# How every Python runner starts: user prints go to stderr, so stdout carries only the answer.
PY_ANSWER = r"""
import json, sys
out = sys.stdout.buffer
sys.stdout = sys.stderr
def emit(obj):
    out.write(("\n@@benchtape-result@@ " + json.dumps(obj, default=str) + "\n").encode())
    out.flush()
"""


def runner_reply(log: str) -> dict[str, Any] | None:
    """The runner's result line: the last marked line that reads as {value} or {error}.

    The script's own prints share the pipe, so a line of theirs may carry the marker too
    (even after the real one, from an atexit hook); it is passed over, not a crash."""
    for line in reversed(log.split("\n")):
        if not line.startswith(RESULT_MARK):
            continue
        try:
            reply = loads_json(line[len(RESULT_MARK) :])
        except (ValueError, RecursionError):
            continue
        if isinstance(reply, dict) and len(reply) == 1 and ("value" in reply or isinstance(reply.get("error"), str)):
            return reply
    return None


def bun_pin(runtimes: Mapping[str, str]) -> str | None:
    """The scenario's `defaults.bun:` pin, or None when it grades with node."""
    pin = runtimes.get("bun")
    return None if pin is None or str(pin).strip() == "" else str(pin).strip()


def pin_matches(pin: str, version: str) -> bool:
    """`1.1` pins 1.1.x; `latest`, `true` or `*` accept any version."""
    if pin.lower() in ANY_VERSION:
        return True
    want = pin.lstrip("v").split(".")
    have = version.strip().lstrip("v").split(".")
    return have[: len(want)] == want


def js_runtime(what: str, runtimes: Mapping[str, str], interpreter: Interpreter, run_command: CommandRunner, cwd: Path, *, strip_types: bool = False) -> tuple[list[str] | None, str]:
    """The argv that evaluates a runner program given as its last argument (an ES module):
    bun when pinned (at the pinned version), else node; or None and why not, naming the fix."""
    pin = bun_pin(runtimes)
    if pin is not None:
        bun = interpreter("bun")
        if bun is None:
            return None, f"{what}: `defaults.bun: {pin}` is declared, but the grading sandbox has no bun: {BUN_INSTALL}"
        if pin.lower() not in ANY_VERSION:
            done = run_command([*bun, "--version"], cwd, 10, env=grading_env())
            version = (done.output or "").strip().splitlines()[-1] if (done.output or "").strip() else "unknown"
            if not pin_matches(pin, version):
                return None, f"{what}: `defaults.bun: {pin}` is declared, but the bun here is {version}: npm install bun@{pin}"
        return [*bun, "--eval"], ""
    node = interpreter("node")
    if node is None:
        return None, f"{what}: the grading sandbox has no node ({NODE_INSTALL}); or declare `defaults.bun:` to grade with bun"
    flags = ["--no-warnings", "--input-type=module"] + ([STRIP_TYPES] if strip_types else [])
    return [*node, *flags, "-e"], ""


class GradedWhere(Protocol):
    """What preflight knows of where grading will run (benchtape.checks.registry.PreflightContext)."""

    @property
    def env(self) -> Mapping[str, str]: ...
    @property
    def runtimes(self) -> Mapping[str, str]: ...
    @property
    def interpreter(self) -> Interpreter | None: ...
    @property
    def where(self) -> str: ...


def js_runtime_problems(what: str, pf: GradedWhere, *, one: bool = False) -> list[str]:
    """Preflight: the runtime `js_runtime` will want, where grading will run (bun when pinned, at
    the pinned version, else node), each missing one a finding that names how to install it.
    `what` runs (`one`) or run: "js checks", "its JavaScript transform"."""
    pin = pf.runtimes.get("bun")
    run = "runs" if one else "run"
    if pf.interpreter is not None:  # graded elsewhere (a container): the runtime must be there
        runtime = "bun" if pin else "node"
        if pf.interpreter(runtime) is None:
            return [f"{what} {run} with {runtime}, which {pf.where} does not have: give the scenario an image with {runtime}"]
        return []
    path = pf.env.get("PATH")
    if pin:
        bun = shutil.which("bun", path=path)
        if bun is None:
            return [f"{what} {run} with bun (`defaults.bun: {pin}`), which is not on PATH: {BUN_INSTALL}"]
        version = probe([bun, "--version"])
        if version is not None and not pin_matches(str(pin), version):
            return [f"`defaults.bun: {pin}` is declared, but the bun on PATH is {version}: npm install bun@{pin}"]
        return []
    if shutil.which("node", path=path) is None:
        return [f"{what} {run} with node, which is not on PATH: {NODE_INSTALL}; or declare `defaults.bun:` and install bun ({BUN_INSTALL})"]
    return []


def probe(argv: list[str]) -> str | None:
    """A command's last output line when it succeeds, else None."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else ""
