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

An option the fix adds is a name too: a new keyword parameter, a new string key (a config
dict's), a new attribute set on `self`; needed when a test passes it as a keyword argument
(`permalink_leading=True`) or names it as a quoted key. Python-Markdown #1339's prompt (its PR
title) asked for a `permalink_prepend` option; the tests and the fix set `permalink_leading`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from benchtape.spec.solver import parse_patch

_DEFINED = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)|^([A-Za-z_]\w*)[ \t]*(?::[^=\n]+)?=(?!=)", re.MULTILINE)
_NAME = re.compile(r"[A-Za-z_]\w*")
_COMMENT = re.compile(r"(?:^|[ \t])#.*$", re.MULTILINE)  # a comment mentioning a name is no use of it
_OPTION = re.compile(r"""self\.([A-Za-z_]\w*)[ \t]*=(?!=)|["']([A-Za-z_]\w*)["'][ \t]*:""")  # an attribute set on self; a dict's string key
_SIGNATURE = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+\w+[ \t]*\(([^)]*)\)", re.MULTILINE)  # a one-line signature's parameters


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
    brought = _brought(reference_patch, _definitions)
    options = _brought(reference_patch, _options) - brought
    if not brought and not options:
        return []
    said = lambda name: re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", prompt) is not None  # noqa: E731
    found: dict[str, Unnamed] = {}
    for f in parse_patch(tests_patch):
        path = f.new or ""
        if not path.endswith(".py"):
            continue
        for _, new in f.hunks:
            code = _COMMENT.sub("", new)
            for name in _NAME.findall(code):
                if name in brought and name not in found and not said(name):
                    found[name] = Unnamed(name, path)
            for name in sorted(options, key=code.find):
                if name not in found and _passed_as_option(name, code) and not said(name):
                    found[name] = Unnamed(name, path)
    return list(found.values())


def _passed_as_option(name: str, code: str) -> bool:
    """Whether test code passes `name` as a keyword argument (`f(x, name=1)`) or as a key
    (`{"name": 1}`, `config["name"]`): a local variable of the same name is neither, nor a string
    passed as a value (arrow's `_format_timeframe("weeks", 2)`: a locale's existing unit)."""
    n = re.escape(name)
    return re.search(rf"[(,][ \t\n]*{n}[ \t]*=(?!=)|[\"']{n}[\"'][ \t]*:|\[[ \t]*[\"']{n}[\"'][ \t]*\]", code) is not None


def _brought(reference_patch: str, defined: Callable[[str], set[str]]) -> set[str]:
    """Names reference.patch's Python hunks define (as `defined` reads them) that their old side
    did not. Dunders aside (`__init__` is every class's), and one-letter names: those are a
    loop's variable or a data key, never an interface a prompt would name (glom #69's fix
    showed `{'a': {'b': {'c': 'hi'}}}` in a docstring, and its tests' `{'c': ...}` was flagged)."""
    before: set[str] = set()
    after: set[str] = set()
    for f in parse_patch(reference_patch):
        if not (f.new or f.old or "").endswith(".py"):
            continue
        for old, new in f.hunks:
            before.update(defined(old))
            after.update(defined(new))
    return {n for n in after - before if len(n) > 1 and not (n.startswith("__") and n.endswith("__"))}


def _definitions(text: str) -> set[str]:
    return {a or b for a, b in _DEFINED.findall(text)}


def _options(text: str) -> set[str]:
    """The options a hunk side defines: attributes set on self, quoted dict keys, and the
    parameters of its one-line signatures (`*args` and `self` aside)."""
    names = {a or b for a, b in _OPTION.findall(text)}
    for params in _SIGNATURE.findall(text):
        for part in params.split(","):
            m = _NAME.match(part.strip().lstrip("*"))
            if m and not part.strip().startswith("*") and m.group(0) not in ("self", "cls"):
                names.add(m.group(0))
    return names


def warning(unnamed: list[Unnamed]) -> str:
    """The one sentence `task create` and `task validate` say about them."""
    names = ", ".join(u.describe() for u in unnamed[:6]) + (f" and {len(unnamed) - 6} more" if len(unnamed) > 6 else "")
    return (
        f"the hidden tests use names only reference.patch defines, which prompt.md never says: {names}; "
        "an agent that fixes the bug under other names fails those tests: name them in prompt.md, or drop the task"
    )
