"""Where a bench may take the files it stages from: its own folder tree, unless it names more.

Staged inputs (`testdata:`, a local `repo:`, `copy` shares, a `dockerfile:`'s build folder)
are copied into the agent's workspace, the stored snapshot and the reports. A path that
resolves outside the bench's folder (`/etc`, `../../`, `~`, or a link inside the tree that
points out) would copy host files there, so it is refused unless the bench names the
outside folder in `x-benchtape-allow-outside:` — an `x-` key, so madbench, which reads
such paths freely and ignores `x-` keys, still loads the bench unchanged.
"""

from __future__ import annotations

import os
from pathlib import Path

ALLOW_KEY = "x-benchtape-allow-outside"


def real(path: Path | str) -> Path:
    """The path with every link resolved (what a copy would actually read)."""
    return Path(os.path.realpath(path))


def within(path: Path | str, roots: list[Path]) -> bool:
    """Does `path`, links resolved, lie inside one of `roots` (themselves already resolved)?"""
    target = real(path)
    return any(target == root or root in target.parents for root in roots)


def outside_fix(bench_dir: Path, path: Path | str) -> str:
    folder = real(path)
    folder = folder if folder.is_dir() else folder.parent
    return (
        f"move it under the bench's folder ({bench_dir}), or, to stage it from there on purpose, "
        f"name the folder at the top of the bench: `{ALLOW_KEY}: [{folder}]` (madbench ignores `x-` keys)"
    )
