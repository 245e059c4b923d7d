"""Names the hidden tests need that only the fix brings, and the prompt never says.

A mined task's tests were written beside its fix: they may import a constant the fix added
(`from platformdirs.windows import _KF_FLAG_DONT_VERIFY`) or call a function it introduced.
An agent that fixes the bug under another name fails every such test (the whole module, when
the import is at its top), and its verdict then says nothing about the fix. SWE-bench
Verified dropped such tasks as underspecified; here the task is kept and the user is told
which names to say in prompt.md (or to drop the task), at `task create` and `task validate`.

Python only (the definitions and uses are read from the patches' .py files): a name is
"brought by the fix" when reference.patch's hunks define it (`def`, `class`, or a module-level
assignment) and their old side did not; "needed" when a test hunk's new side uses it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from benchtape.spec.solver import parse_patch

_DEFINED = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)|^([A-Za-z_]\w*)[ \t]*(?::[^=\n]+)?=(?!=)", re.MULTILINE)
_NAME = re.compile(r"[A-Za-z_]\w*")
_COMMENT = re.compile(r"(?:^|[ \t])#.*$", re.MULTILINE)  # a comment mentioning a name is no use of it


@dataclass(frozen=True)
class Unnamed:
    """A name the hidden tests use that only reference.patch defines, and where they use it first."""

    name: str
    test_file: str

    def describe(self) -> str:
        return f"{self.name} ({self.test_file})"


def unnamed_interface(tests_patch: str, reference_patch: str, prompt: str) -> list[Unnamed]:
    """The names the tests use that only the fix defines and the prompt never says, in the
    order the tests first use them."""
    brought = _brought(reference_patch)
    if not brought:
        return []
    found: dict[str, Unnamed] = {}
    for f in parse_patch(tests_patch):
        path = f.new or ""
        if not path.endswith(".py"):
            continue
        for _, new in f.hunks:
            for name in _NAME.findall(_COMMENT.sub("", new)):
                if name in brought and name not in found and not re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", prompt):
                    found[name] = Unnamed(name, path)
    return list(found.values())


def _brought(reference_patch: str) -> set[str]:
    """Names reference.patch's Python hunks define that their old side did not (dunders aside:
    `__init__` is every class's)."""
    before: set[str] = set()
    after: set[str] = set()
    for f in parse_patch(reference_patch):
        if not (f.new or f.old or "").endswith(".py"):
            continue
        for old, new in f.hunks:
            before.update(_definitions(old))
            after.update(_definitions(new))
    return {n for n in after - before if not (n.startswith("__") and n.endswith("__"))}


def _definitions(text: str) -> set[str]:
    return {a or b for a, b in _DEFINED.findall(text)}


def warning(unnamed: list[Unnamed]) -> str:
    """The one sentence `task create` and `task validate` say about them."""
    names = ", ".join(u.describe() for u in unnamed[:6]) + (f" and {len(unnamed) - 6} more" if len(unnamed) > 6 else "")
    return (
        f"the hidden tests use names only reference.patch defines, which prompt.md never says: {names}; "
        "an agent that fixes the bug under other names fails those tests: name them in prompt.md, or drop the task"
    )
