"""`exec`: run a command in the session's final workspace and grade its exit code.

This is how files on disk are graded (string checks only see the final message). The
command is an argv, never a shell line: `value` is split on whitespace, and anything
that looks like shell syntax there is refused with the fix (`args.cmd: [sh, -c, …]`),
because a quote or a pipe passed as an argument fails in a way that looks like the
agent's fault. The command runs through `ctx.run_command`, which a container sandbox
replaces, so a check never reaches the host by accident.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from benchtape.checks.common import args_of, format_seconds, parse_duration, tail
from benchtape.checks.registry import CheckConfigError, CheckContext, Evaluator, register
from benchtape.core.model import Session
from benchtape.core.results import CheckSpec, Result

_SHELL_OPERATORS = frozenset({"|", "||", "&&", ";", "&", ">", ">>", "<", "<<", "2>", "2>&1", "&>"})
# Quotes, substitutions, variables, a leading ~, and operators glued to a word ("a;").
_SHELL_CHARS = re.compile(r"""['"`]|\$[({A-Za-z_]|^~|^[|&;<>]|[|&;]$""")


def _argv(spec: CheckSpec) -> list[str]:
    args = args_of(spec)
    cmd = args.get("cmd")
    if cmd is not None:
        if not isinstance(cmd, list) or not cmd or not all(isinstance(a, (str, int, float)) and not isinstance(a, bool) for a in cmd):
            raise CheckConfigError("exec: 'cmd' (string slice) or 'value' (string) is required: args.cmd must be a non-empty list of strings")
        return [str(a) for a in cmd]
    if isinstance(spec.value, str) and spec.value.strip():
        argv = spec.value.split()
        bad = [a for a in argv if a in _SHELL_OPERATORS or _SHELL_CHARS.search(a)]
        if bad:
            raise CheckConfigError(
                f"exec: value {spec.value!r} looks like shell syntax ({' '.join(bad[:3])}), but exec runs no shell: "
                f"write args.cmd: [sh, -c, {spec.value!r}]"
            )
        return argv
    raise CheckConfigError("exec: 'cmd' (string slice) or 'value' (string) is required")


def _expected_exit(spec: CheckSpec) -> int:
    code = args_of(spec).get("expected_exit", 0)
    if isinstance(code, bool) or not isinstance(code, int) or not 0 <= code <= 255:
        raise CheckConfigError(f"exec: args.expected_exit must be a whole number 0-255, got {code!r}")
    return code


def _cwd_arg(spec: CheckSpec) -> str | None:
    cwd = args_of(spec).get("cwd")
    if cwd is None:
        return None
    if not isinstance(cwd, str) or not cwd:
        raise CheckConfigError(f"exec: args.cwd must be a path, got {cwd!r}")
    if not os.path.isabs(cwd) and os.path.normpath(cwd).split(os.sep)[0] == "..":
        raise CheckConfigError(f"exec: args.cwd {cwd!r} leaves the workspace; use a path inside it, or an absolute one")
    return cwd


def resolve_cwd(cwd: str | None, work_dir: Path | None, session: Session | None = None) -> Path | str:
    """Where to run: an absolute cwd as given, else cwd joined onto the workspace (and
    still inside it after symlinks are resolved). A string is the reason it cannot run; for
    an imported session, that benchtape never had its workspace (not that restoring it failed)."""
    if cwd is not None and os.path.isabs(cwd):
        return Path(cwd)
    if work_dir is None:
        imported = session is not None and session.imported_from is not None
        why = "the session was imported from a transcript: benchtape never saw its workspace" if imported else "the session has no restored work_dir"
        return f"exec: no workspace to run in ({why}; give an absolute args.cwd to run elsewhere)"
    root = Path(work_dir).resolve()
    target = (root / cwd).resolve() if cwd else root
    if target != root and root not in target.parents:
        return f"exec: args.cwd {cwd!r} resolves outside the workspace ({target})"
    return target


@register(
    "exec",
    family="Exec",
    summary="run a command (argv, no shell) in the session's final workspace; passes when it exits with `expected_exit`",
    reads="the restored workspace (ctx.work_dir)",
    args={
        "args.cmd": "the argv as a list (use [sh, -c, '…'] for pipes and quotes)",
        "value": "the command as one string, split on whitespace (no shell syntax)",
        "args.cwd": "directory to run in, relative to the workspace (default its root) or absolute",
        "args.expected_exit": "the exit code that passes (default 0)",
        "args.timeout": 'a duration with a unit (default "60s"; "2m", "1500ms")',
    },
    example="type: exec\nargs: {cmd: [python, -m, pytest, -q], timeout: 120s}",
    errors=(
        "exec: 'cmd' (string slice) or 'value' (string) is required",
        "shell syntax (quotes, pipes, redirects) in `value`",
        "args.cwd leaving the workspace",
        "a timeout with no unit",
        "ERROR: no workspace to run in (no ctx.work_dir and no absolute cwd)",
        "ERROR: the command could not be started",
    ),
    kind="Code",
    reads_workspace=True,
)
def exec_check(spec: CheckSpec) -> Evaluator:
    argv = _argv(spec)
    expected = _expected_exit(spec)
    cwd_arg = _cwd_arg(spec)
    timeout = parse_duration(args_of(spec).get("timeout"), type="exec", default="60s")

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        where = resolve_cwd(cwd_arg, ctx.work_dir, session)
        if isinstance(where, str):
            return Result.error(where)
        ev: dict[str, Any] = {"argv": argv, "cwd": str(where), "exit_code": None, "expected_exit": expected, "timed_out": False, "output_tail": ""}
        if not where.is_dir():
            return Result.error(f"exec: cwd {where} is not a directory", ev)
        try:
            done = ctx.run_command(argv, where, timeout)
        except OSError as exc:
            return Result.error(f"exec: cannot start {argv[0]!r}: {exc.strerror or exc}", ev)
        out = tail(done.output)
        ev.update(exit_code=done.exit_code, timed_out=done.timed_out, output_tail=out)
        if done.timed_out:
            return Result.of(False, f"exec: {' '.join(argv)} timed out after {format_seconds(timeout)}\n{out}", ev)
        ok = done.exit_code == expected
        head = f"exec: {' '.join(argv)} exited {done.exit_code}" + ("" if ok else f", expected {expected}")
        return Result.of(ok, head if ok else f"{head}\n{out}", ev)

    return evaluate
