"""Applying a patch to a tree that is not a repository, and reading which paths a patch touches.

The verifier applies a task's patches (the hidden tests, the reference fix, later an agent's
candidate) to an exported tree with `git apply`, which handles renames, binary hunks and
mode changes that `patch(1)` does not. The tree has no `.git`, and git is told not to look
above it (`GIT_CEILING_DIRECTORIES`): inside another repository `git apply` would take paths
relative to THAT repository's top and silently skip the rest.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

_DIFF_GIT = re.compile(rb"^diff --git a/(.+?) b/(.+?)$", re.MULTILINE)
_PLUS = re.compile(rb"^\+\+\+ (?:b/)?(.+?)(?:\t.*)?$", re.MULTILINE)
_MINUS = re.compile(rb"^--- (?:a/)?(.+?)(?:\t.*)?$", re.MULTILINE)


class PatchFailed(Exception):
    """A patch does not apply: `str()` is git's own words, shortened."""


def apply_patch(tree: Path, patch: bytes, *, timeout: float = 120.0) -> None:
    """Apply `patch` to `tree` in place, all or nothing (`git apply` checks every hunk first)."""
    if not patch.strip():
        return
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_CEILING_DIRECTORIES": str(Path(tree).resolve().parent), "GIT_TERMINAL_PROMPT": "0", "HOME": str(Path(tree).resolve().parent)})
    argv = ["git", "apply", "--whitespace=nowarn", "--binary", "-"]
    try:
        done = subprocess.run(argv, cwd=tree, input=patch, capture_output=True, env=env, timeout=timeout)
    except FileNotFoundError:
        raise PatchFailed("applying a patch needs git on PATH, and there is none") from None
    except subprocess.TimeoutExpired:
        raise PatchFailed(f"git apply took longer than {timeout:g}s") from None
    if done.returncode != 0:
        raise PatchFailed(done.stderr.decode("utf-8", "replace").strip()[-2000:] or f"git apply exited {done.returncode}")


def changed_paths(patch: bytes) -> list[str]:
    """Every path a patch touches (both sides of a rename), in order, each once."""
    out: list[str] = []
    found = [(m.start(), [m.group(1), m.group(2)]) for m in _DIFF_GIT.finditer(patch)]
    if not found:
        found = [(m.start(), [m.group(1)]) for m in _PLUS.finditer(patch)] + [(m.start(), [m.group(1)]) for m in _MINUS.finditer(patch)]
    for _, names in sorted(found, key=lambda f: f[0]):
        for raw in names:
            name = raw.decode("utf-8", "replace")
            if name != "/dev/null" and name not in out:
                out.append(name)
    return out


def under(paths: list[str], prefixes: tuple[str, ...] | list[str]) -> list[str]:
    """The paths that lie under one of `prefixes` (a prefix `tests/` or `tests`, or a file's own path)."""
    outs = []
    for path in paths:
        for prefix in prefixes:
            p = prefix.rstrip("/")
            if path == p or path.startswith(p + "/"):
                outs.append(path)
                break
    return outs
