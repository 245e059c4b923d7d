"""`covering` (one compiled regex) answers exactly what the rule, written pattern by pattern
with fnmatch below, answers; `covers` is it for one pattern."""

from __future__ import annotations

import itertools
import random
from fnmatch import fnmatchcase

from benchtape.adapters.base import get_adapter
from benchtape.sandbox.treediff import covering


def covers(pattern: str, path: str) -> bool:
    """The rule as it was first written: `tests/**`, `*.lock`, or a plain folder or file name."""
    pattern = pattern.rstrip("/")
    if fnmatchcase(path, pattern):
        return True
    if pattern.endswith("/**") and (path == pattern[:-3] or path.startswith(pattern[:-3] + "/")):
        return True
    return not any(ch in pattern for ch in "*?[") and path.startswith(pattern + "/")

PATTERNS = sorted(
    set(get_adapter("claude-code").bookkeeping)
    | set(get_adapter("codex").bookkeeping)
    | {"tests/**", "*.lock", "tests", "setup.cfg", "a/b/", "x[ab]/*", "?.py", "a.b/**", "**", "*", "dir/**/", "a+b", "(x)/**", "foo/*/bar", ""}
)
NAMES = ["", "a", "b", "tests", "xa", "a.b", "a+b", "(x)", "foo", "bar", "setup.cfg", "q.py", "y.lock", ".claude", ".codex", "projects", "sessions", "skills", ".system", "log", ".tmp", "a.sqlite", "a.sqlite-wal", "dir", "debug", "\n", "é"]


def test_covering_agrees_with_covers():
    rng = random.Random(7)
    paths = {"/".join(rng.choice(NAMES) for _ in range(n)) for n in range(1, 5) for _ in range(1500)}
    pairs = list(itertools.combinations(PATTERNS, 2))
    sets = [(p,) for p in PATTERNS] + rng.sample(pairs, min(300, len(pairs))) + [tuple(rng.sample(PATTERNS, 4)) for _ in range(50)] + [()]  # every pattern alone; pairs sampled (all of them took 14 s)
    for patterns in sets:
        covered = covering(patterns)
        for path in paths:
            assert covered(path) == any(covers(p, path) for p in patterns), (patterns, path)
