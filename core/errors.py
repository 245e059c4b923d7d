"""Errors users can act on: every bad input names the file, the line, what is wrong and the fix.

Every error a user is meant to see derives from `BenchtapeError`, which carries its exit
code, so the front door maps an error to a code in one place and no traceback reaches a
user for anything benchtape anticipated.
"""

from __future__ import annotations

import difflib
import errno
from contextlib import contextmanager
from enum import IntEnum
from typing import Any, Iterable, Iterator


class ExitCode(IntEnum):
    """benchtape's exit codes (madbench's, for scripts that branch on them)."""

    OK = 0
    FAILED = 1  # a scenario failed or errored; a control did not hold; a report refused
    BAD_INPUT = 2  # nothing was run or written
    BLOCKED = 3  # preflight (or staging) stopped the run before any spend; nothing gradable
    INTERRUPTED = 130  # Ctrl-C: what was recorded stays recorded


class BenchtapeError(Exception):
    """An error meant for the user: `render()` is what they read, `exit_code` what the shell gets."""

    exit_code: ExitCode = ExitCode.FAILED

    def render(self) -> str:
        return str(self)


class BadInput(BenchtapeError):
    """Bad user input. The CLI prints it and exits 2; nothing has been run or written."""

    exit_code = ExitCode.BAD_INPUT

    def __init__(self, what: str, *, file: str | None = None, line: int | None = None, fix: str | None = None):
        self.what, self.file, self.line, self.fix = what, file, line, fix
        super().__init__(self.render())

    def render(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        text = f"{where}{self.what}"
        if self.fix:
            text += f"\n  fix: {self.fix}"
        return text


class PreflightBlocked(BenchtapeError):
    """Preflight found a blocking problem: nothing ran (exit 3)."""

    exit_code = ExitCode.BLOCKED

    def __init__(self, findings: list[str]):
        self.findings = findings
        super().__init__("; ".join(findings))

    def render(self) -> str:
        return "preflight: blocked — nothing was run, no spend\n" + "\n".join(f"  ✗ {f}" for f in self.findings)


@contextmanager
def temp_room(what: str) -> Iterator[None]:
    """Writes in the temporary folder: one that fails for want of room (TMPDIR on a full disk,
    or over quota) is the user's message naming the folder and the fix, exit 2; it had been an
    `[Errno 28]` traceback. Any other error is left as it is."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        import tempfile

        where = tempfile.gettempdir()
        raise BadInput(
            f"no room to write {what} in the temporary folder: {exc.strerror}",
            file=where,
            fix=f"free space in {where}, or point TMPDIR at a folder on a filesystem with room (e.g. TMPDIR=/var/tmp)",
        ) from None


def closest(name: str, choices: Iterable[str]) -> str | None:
    """The valid name a typo most likely meant, or None. A number (a PR, an issue) is not a
    word: it is only taken for another number one keystroke away (a digit wrong, missing,
    added or two swapped), never for one that shares two digits with it (12345 for 293)."""
    if name.isdigit():
        from benchtape.core.edit_distance import levenshtein

        near = [c for c in choices if c.isdigit() and (levenshtein(name, c) == 1 or _swapped(name, c))]
        return near[0] if near else None
    found = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.5)
    return found[0] if found else None


def _swapped(a: str, b: str) -> bool:
    """Whether b is a with two neighbouring characters swapped."""
    diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y] if len(a) == len(b) else []
    return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]


def type_name(value: Any) -> str:
    """The YAML-facing name of a value's type, for config error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__
