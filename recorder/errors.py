"""Errors users can act on: every bad input names the file, the line, what is wrong and the fix."""

from __future__ import annotations

import difflib
from typing import Iterable


class BadInput(Exception):
    """Bad user input. The CLI prints it and exits 2; nothing has been run or written."""

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


class PreflightBlocked(Exception):
    """Preflight found a blocking problem: nothing ran (exit 3)."""

    def __init__(self, findings: list[str]):
        self.findings = findings
        super().__init__("; ".join(findings))


def closest(name: str, choices: Iterable[str]) -> str | None:
    """The valid name a typo most likely meant, or None."""
    found = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.5)
    return found[0] if found else None
