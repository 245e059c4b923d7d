"""Writes outside the workspace, seen after the fact.

At the local levels nothing stops a harness from writing `../escape.txt`: the folder a
workspace lives in (the sandbox temp dir, holding `work/` and `tmp/`) is audited before
and after the session, and anything new or changed there is reported as an `error`
action, so a session that wandered is visible in its own record.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from benchtape.sandbox.capture import OWN_NAMES

INSIDE = ("work", "tmp")  # the workspace and its TMPDIR
BESIDE = ("node_modules",)  # what a level lays beside the workspace for the agent: a task's Node dependencies, its own copy (core/launch_plan.py)
IGNORED = (*INSIDE, *BESIDE, *OWN_NAMES)  # ... and the session folder's own bookkeeping (benchtape.sandbox.capture)
MAX_LISTED = 20


class OutsideWrites:
    """A listing of the sandbox folder minus `work/` and `tmp/`, taken at construction."""

    def __init__(self, sandbox_dir: Path):
        self.dir = Path(sandbox_dir)
        self.before = _listing(self.dir)

    def changes(self) -> list[str]:
        """Paths (relative to the sandbox folder) that are new, changed or gone since construction."""
        after = _listing(self.dir)
        touched = [p for p in sorted(set(after) | set(self.before)) if after.get(p) != self.before.get(p)]
        return touched

    def message(self) -> str | None:
        paths = self.changes()
        if not paths:
            return None
        shown = ", ".join(paths[:MAX_LISTED]) + (f" ... ({len(paths)} in all)" if len(paths) > MAX_LISTED else "")
        return f"harness wrote outside its workspace: {shown}"


def _listing(root: Path) -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    if not root.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        if os.path.abspath(dirpath) == os.path.abspath(root):
            dirnames[:] = [d for d in dirnames if d not in IGNORED]
            names = dirnames + [f for f in filenames if f not in IGNORED] + [d for d in INSIDE if os.path.lexists(os.path.join(root, d)) and not os.path.isdir(os.path.join(root, d))]
        else:
            names = dirnames + filenames
        for name in names:
            full = os.path.join(dirpath, name)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            link = os.readlink(full) if os.path.islink(full) else None
            is_dir = os.path.isdir(full) and link is None
            out[os.path.relpath(full, root)] = (st.st_mode, 0 if is_dir else st.st_size, 0 if is_dir else st.st_mtime_ns, link)
    return out
