"""Prompt lines that point the agent at the hidden tests.

A squash or PR body often ends "New regression tests have been added to `tests/test_utils.py`"
(jd/tenacity #556). The agent's tree holds that file without the new tests (or not at all), so
the line sends it looking for tests it cannot see, or to write its own there, where the
verifier's tests.patch then meets them. The user is told which lines, at `task create` and
`task validate`, and edits prompt.md (or keeps it: the line is not a leak of the answer).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

_ADDED = re.compile(r"\b(?:(?:new|regression|unit|more|additional)\s+)*tests?\s+(?:(?:have|has)\s+been|were|was|are|is)\s+(?:added|written|included|updated)\b|\badd(?:ed|s)?\s+(?:(?:a|an|new|regression|unit|more|some)\s+)*tests?\b", re.IGNORECASE)


_ADDED_DEF = re.compile(rb"^\+[ \t]*(?:async[ \t]+)?def[ \t]+(test_\w+)", re.MULTILINE)


def added_test_names(patch: bytes) -> list[str]:
    """The Python test functions a tests.patch adds (`+def test_args2sh_sep(`): a prompt naming
    one points at a hidden test as surely as naming its file (boltons #454's title "Adds
    test_args2sh_sep and test_args2cmd_sep")."""
    return sorted({m.decode("ascii", "replace") for m in _ADDED_DEF.findall(patch)})


def promised_tests(prompt: str, test_paths: list[str], test_names: list[str] | None = None) -> list[str]:
    """The prompt's lines that say tests were added, or name a file of the hidden tests
    (its path, or its name where that is not a common one like `__init__.py`), or one of the
    test functions they add (`test_names`, added_test_names')."""
    names = set(test_paths) | {PurePosixPath(p).name for p in test_paths if PurePosixPath(p).stem not in ("__init__", "conftest", "index", "test", "tests")} | set(test_names or ())
    # a test module by its bare name, as a commit message writes it ("Fix assert style in
    # test_hooks", attrs #1401): only a name that says it is a test, never a common word
    names |= {stem for stem in (PurePosixPath(p).stem for p in test_paths) if stem.startswith("test_") or stem.endswith(("_test", "_tests"))}
    found = []
    for line in prompt.splitlines():
        text = line.strip().lstrip("#").strip()  # a heading too: a harvested title is one (p-map #49's "Add test cases for …")
        if not text:
            continue
        if _ADDED.search(text) or any(re.search(rf"(?<![\w/.-]){re.escape(n)}(?![\w-])", text) for n in names):
            found.append(text)
    return found


def promise_warning(lines: list[str]) -> str:
    """What `task create` and `task validate` say of `promised_tests`."""
    shown = "; ".join(repr(line[:120]) for line in lines[:3]) + (f"; and {len(lines) - 3} more" if len(lines) > 3 else "")
    return f"prompt.md points at the hidden tests, which the agent's tree does not have: {shown}: describe the behaviour instead (edit prompt.md), or keep it knowingly"
