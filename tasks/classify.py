"""Which changed files are tests, which are noise, which are the implementation.

`test_patterns` (→ tests.patch, the hidden verifier) and `noise_patterns` (dropped from both
patches) come from the project (`harvest:`, spec/project.py) or its defaults. Of the rest,
only source code counts as implementation when a scan ranks a change: a change that touches
tests and only docs or CI configuration is no task to solve, though those files still go
into reference.patch.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from benchtape.core.filekinds import CODE_SUFFIXES, is_code


@dataclass(frozen=True)
class Split:
    tests: list[str]
    code: list[str]  # implementation: source files that are not tests
    other: list[str]  # docs and configuration (still part of the reference patch)
    noise: list[str]

    @property
    def reference(self) -> list[str]:
        return self.code + self.other


def matches(path: str, patterns: tuple[str, ...] | list[str]) -> bool:
    """Does a repository path match one of the glob patterns (`**` any folders, `*` within one)?"""
    return any(_compiled(p).match(path) for p in patterns)


def split(paths: list[str], test_patterns: tuple[str, ...], noise_patterns: tuple[str, ...]) -> Split:
    tests, code, other, noise = [], [], [], []
    for path in paths:
        if matches(path, noise_patterns):
            noise.append(path)
        elif matches(path, test_patterns):
            tests.append(path)
        elif is_code(path):
            code.append(path)
        else:
            other.append(path)
    return Split(tests, code, other, noise)


def is_test_source(path: str) -> bool:
    """A test file that holds tests (not a fixture's data file)."""
    return PurePosixPath(path).suffix.lower() in CODE_SUFFIXES


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str]:
    """A glob as a regex over the whole path: `**/` any number of folders (none too), `**` anything,
    `*` and `?` within one folder, a pattern without `/` matching the file name anywhere."""
    if "/" not in pattern:
        pattern = "**/" + pattern
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        elif pattern[i] == "[":
            j = pattern.find("]", i)
            out += fnmatch.translate(pattern[i : j + 1])[4:-3] if j > i else re.escape("[")
            i = j + 1 if j > i else i + 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out + r"\Z", re.DOTALL)  # a name may hold a newline: `**` and `*` match it too
