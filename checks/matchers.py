"""Matchers: how a check names a value it cannot know literally (a per-run tmpdir path).

Used by `session:tool-args-match` expectations and `session:file-read`'s value.

    (none)      exact
    exact:      exact (the escape for a literal that itself starts with a prefix)
    glob:       `*` `?` `[...]` within one path segment, `**` across segments, anchored both ends
    suffix:     the tail of the string
    contains:   anywhere in the string

Only these four prefixes are read as matchers, so `https://x` stays an exact literal.
A pattern is compiled when the check is built, so a broken glob is refused before any run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

PREFIXES = ("exact", "glob", "suffix", "contains")


class MatcherError(ValueError):
    """A matcher string that cannot be compiled; the caller names the check and the key."""


@dataclass(frozen=True)
class Matcher:
    kind: str  # exact | glob | suffix | contains
    pattern: str
    _regex: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    def matches(self, actual: Any) -> bool:
        """Whether `actual` matches; a matcher never matches a non-string."""
        if not isinstance(actual, str):
            return False
        if self.kind == "exact":
            return actual == self.pattern
        if self.kind == "suffix":
            return actual.endswith(self.pattern)
        if self.kind == "contains":
            return self.pattern in actual
        assert self._regex is not None
        return self._regex.fullmatch(actual) is not None

    def __str__(self) -> str:
        return self.pattern if self.kind == "exact" else f"{self.kind}:{self.pattern}"


def compile_matcher(text: str) -> Matcher:
    """Read a matcher string (`glob:**/x.py`, `suffix:.md`, or a plain literal)."""
    kind, sep, rest = text.partition(":")
    if sep and kind in PREFIXES:
        if kind == "glob":
            return Matcher("glob", rest, glob_regex(rest))
        return Matcher(kind, rest)
    return Matcher("exact", text)


def value_matches(expected: Any, actual: Any) -> bool:
    """One expectation against one actual value: strings through a matcher, anything else exact.

    Numbers, maps and lists compare exactly; a bool never equals a number here, because
    `True == 1` in Python but `true` and `1` are different answers in a tool's arguments.
    """
    if isinstance(expected, str):
        return compile_matcher(expected).matches(actual)
    if isinstance(expected, Matcher):
        return expected.matches(actual)
    return _same(expected, actual)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate a path glob to an anchored regex.

    `*`, `?` and `[...]` never cross a `/`; `**` does. `**/` also matches no directory at
    all, so `**/SKILL.md` matches `SKILL.md` and `a/b/SKILL.md`.
    """
    if not pattern:
        raise MatcherError("glob: the pattern is empty; write e.g. glob:**/*.py")
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if i < n and pattern[i] == "/":
                    out.append("(?:.*/)?")
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = _class_end(pattern, i)
            if end < 0:
                raise MatcherError(f"glob:{pattern}: '[' at position {i} is never closed; write [[] for a literal '['")
            body = pattern[i + 1 : end]
            negate = body[:1] in ("!", "^")
            if negate:
                body = body[1:]
            body = body.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
            out.append(f"[^/{body}]" if negate else f"[{body}]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    try:
        return re.compile("".join(out), re.DOTALL)
    except re.error as exc:
        raise MatcherError(f"glob:{pattern}: not a valid glob ({exc})") from exc


def _class_end(pattern: str, start: int) -> int:
    """Index of the `]` that closes the class opened at `start`, or -1."""
    j = start + 1
    if j < len(pattern) and pattern[j] in "!^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":  # a leading ] is a literal member
        j += 1
    end = pattern.find("]", j)
    return end
