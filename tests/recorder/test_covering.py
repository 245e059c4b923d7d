"""`covering` (one compiled regex) answers exactly what `covers` answers pattern by pattern."""

from __future__ import annotations

import itertools
import random

from adapters.base import get_adapter
from recorder.treediff import covering, covers

PATTERNS = sorted(
    set(get_adapter("claude-code").bookkeeping)
    | set(get_adapter("codex").bookkeeping)
    | {"tests/**", "*.lock", "tests", "setup.cfg", "a/b/", "x[ab]/*", "?.py", "a.b/**", "**", "*", "dir/**/", "a+b", "(x)/**", "foo/*/bar", ""}
)
NAMES = ["", "a", "b", "tests", "xa", "a.b", "a+b", "(x)", "foo", "bar", "setup.cfg", "q.py", "y.lock", ".claude", ".codex", "projects", "sessions", "skills", ".system", "log", ".tmp", "a.sqlite", "a.sqlite-wal", "dir", "debug", "\n", "é"]


def test_covering_agrees_with_covers():
    rng = random.Random(7)
    paths = {"/".join(rng.choice(NAMES) for _ in range(n)) for n in range(1, 5) for _ in range(1500)}
    sets = [(p,) for p in PATTERNS] + list(itertools.combinations(PATTERNS, 2)) + [tuple(rng.sample(PATTERNS, 4)) for _ in range(50)] + [()]
    for patterns in sets:
        covered = covering(patterns)
        for path in paths:
            assert covered(path) == any(covers(p, path) for p in patterns), (patterns, path)
