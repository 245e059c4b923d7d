"""The scripted solver: a task's reference fix as a script a model plays through the harness's own tools.

The oracle applies `reference.patch` itself (`git apply`): it proves the task holds, not that a
harness can carry a fix. The solver is a `mock:` script derived from the same patch, in which
the model asks for the edits the way an agent would (Read a file, then Edit it hunk by hunk;
Write a new file; remove a deleted one with Bash), then runs the task's visible tests and says
it is done. The scripted model server hands each step to the harness in its own tools (Claude
Code's Read/Edit/Write, Codex's apply_patch, …: models/tools.py), so one script yields the same
canonical actions on every harness, and a task cell passes only if the real binary really
carried the fix. `partial` plays only the fix's first edit in code (none when it has one; a
changelog's or the docs' hunks are never part of it): it must fail, or change nothing.

Chosen by the model: `solver` / `solver-partial` in a tool's models (ids below), for history
tasks (a Harbor task's fix is a program, solution/solve.sh: the oracle runs it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from benchtape.core.filekinds import is_code
from benchtape.core.gitnames import one_name, strip_prefix

# model id -> whether it plays the partial script (the mock's own ids, and a real binary's against the scripted server)
SOLVER_MODELS = {"mock-solver": False, "mock-solver-partial": True, "scripted-solver": False, "scripted-solver-partial": True}

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


@dataclass
class _File:
    old: str | None = None  # a/ path (None: added)
    new: str | None = None  # b/ path (None: deleted)
    hunks: list[tuple[str, str]] = field(default_factory=list)  # (old text, new text) of each hunk
    binary: bool = False
    header: str = ""  # the path the `diff --git` line names (a binary change has no ---/+++ lines)
    unplayable: str = ""  # a change no edit tool makes (a rename or copy, a mode change, an empty new file)


def solver_script(patch: bytes, *, partial: bool = False, verify: str | None = None) -> dict[str, Any]:
    """The `mock:` block that plays `patch` through a harness's tools (see the module docstring)."""
    files = parse_patch(patch.decode("utf-8", "surrogateescape"))
    edits: list[list[dict[str, Any]]] = []  # per change, its steps (a Read goes with the first Edit of its file)
    code: list[bool] = []  # per change, whether it is in a source file (not a changelog, docs, configuration)
    for f in files:
        if not f.binary and (f.unplayable or (f.old is None and not f.hunks)):
            what = f.unplayable or f"adds an empty file ({f.new or f.header})"
            return {"steps": [{"say": f"the reference fix {what}, which no edit tool does: this task has no scripted solver"}]}
        if f.binary:
            return {"steps": [{"say": f"the reference fix changes a binary file ({f.new or f.old or f.header}), which no edit tool can write: this task has no scripted solver"}]}
        before = len(edits)
        if f.new is None and f.old is not None:
            edits.append([{"tool": "Bash", "input": {"command": f"rm -f -- {_quote(f.old)}"}}])
        elif f.old is None and f.new is not None:
            edits.append([{"tool": "Write", "input": {"file_path": f.new, "content": "".join(new for _, new in f.hunks)}}])
        elif f.new is not None:
            if f.old != f.new:  # a rename with changes: the new file whole, the old one removed
                return {"steps": [{"say": f"the reference fix renames {f.old} to {f.new}: this task has no scripted solver"}]}
            for i, (old, new) in enumerate(f.hunks):
                step = {"tool": "Edit", "input": {"file_path": f.new, "old_string": old, "new_string": new}}
                edits.append([{"tool": "Read", "input": {"file_path": f.new}}, step] if i == 0 else [step])
        code += [is_code(f.new or f.old or f.header)] * (len(edits) - before)
    if partial:
        # its first edit in code only: a fix's changelog or docs hunk is no part of the fix (express's
        # History.md came second, and "the first edit" was the whole code fix: the partial passed)
        edits = [e for e, c in zip(edits, code) if c] or edits
        edits = edits[:1] if len(edits) > 1 else []
    steps: list[dict[str, Any]] = [{"say": "I will make the change the task asks for."}]
    for group in edits:
        steps.extend(group)
    if verify:
        steps.append({"tool": "Bash", "input": {"command": f"{verify} || true"}})
    steps.append({"say": "done"})
    return {"steps": steps}


def parse_patch(text: str) -> list[_File]:
    """A git-style unified diff as files and hunks: each hunk's old text (context and removed
    lines) and new text (context and added lines), whole lines with their newlines."""
    files: list[_File] = []
    current: _File | None = None
    old: list[str] = []
    new: list[str] = []
    in_hunk = False

    def close_hunk() -> None:
        nonlocal old, new, in_hunk
        if current is not None and in_hunk:
            current.hunks.append(("".join(old), "".join(new)))
        old, new, in_hunk = [], [], False

    parts = text.split("\n")  # not splitlines(): a form feed or \x1c inside a line is the file's, not a break
    if parts and parts[-1] == "":
        parts.pop()
    lines = [part + "\n" for part in parts]
    for i, line in enumerate(lines):
        if line.startswith("diff --git "):
            close_hunk()
            current = _File(header=line.rstrip("\n").rsplit(" b/", 1)[-1])
            files.append(current)
            continue
        if current is None:
            continue
        if not in_hunk or (line[:1] not in (" ", "-", "+", "\\") and line != "\n"):
            if line.startswith("--- "):
                close_hunk()
                current.old = _path(line[4:])
            elif line.startswith("+++ "):
                current.new = _path(line[4:])
            elif line.startswith(("GIT binary patch", "Binary files ")):
                current.binary = True
            elif line.startswith(("rename from ", "copy from ")):
                current.unplayable = "renames or copies " + current.header
            elif line.startswith(("old mode ", "new mode ")):
                current.unplayable = "changes the mode of " + current.header
            elif _HUNK.match(line):
                close_hunk()
                in_hunk = True
            continue
        if line.startswith("\\"):  # "\ No newline at end of file": the line before it has none
            if old and lines[i - 1].startswith((" ", "-")):
                old[-1] = old[-1].rstrip("\n")
            if new and lines[i - 1].startswith((" ", "+")):
                new[-1] = new[-1].rstrip("\n")
            continue
        body = line[1:] if line != "\n" else "\n"  # a blank context line some tools write without its space
        if line.startswith(" ") or line == "\n":
            old.append(body)
            new.append(body)
        elif line.startswith("-"):
            old.append(body)
        else:
            new.append(body)
    close_hunk()
    return files


def _path(raw: str) -> str | None:
    """A `---`/`+++` name as git wrote it (C-quoted when unusual), without its a/ or b/; None for /dev/null."""
    name = strip_prefix(one_name(raw.rstrip("\n").encode("utf-8", "surrogateescape"), tab_ends=True))
    return None if name in (None, "/dev/null") else name


def _quote(path: str) -> str:
    import shlex

    return shlex.quote(path)
