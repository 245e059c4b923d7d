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

from benchtape.core.gitnames import one_name, strip_prefix, unquote


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
    """Every path a patch touches (both sides of a rename or copy), in order, each once.

    Read as git reads a patch: a name git had to quote (non-ASCII, `"`, `\\`, a control
    character: `"a/t\\303\\251st.py"`) is unquoted, a `diff --git` line with spaces in its
    names is split where both sides name the same file, and `rename from`/`copy to` and the
    `---`/`+++` lines each name one path. A guard over these paths (`verify.protected_paths`)
    must see every path git would write, or a quoted one slips past it; so where git is here,
    what `git apply --numstat -z` reads as the patch's paths is added too."""
    out: list[str] = []

    def add(name: str | None) -> None:
        if name and name != "/dev/null" and name not in out:
            out.append(name)

    for raw in patch.split(b"\n"):
        line = raw.rstrip(b"\r")
        if line.startswith(b"diff --git "):
            for name in _git_header_names(line[len(b"diff --git ") :]):
                add(name)
        elif line.startswith((b"--- ", b"+++ ")):
            add(strip_prefix(one_name(line[4:], tab_ends=True)))
        elif line.startswith((b"rename from ", b"rename to ", b"copy from ", b"copy to ")):
            add(one_name(line.split(b" ", 2)[2], tab_ends=False))
    for name in _git_numstat_paths(patch):
        add(name)
    return out


def file_blocks(patch: bytes) -> list[tuple[list[str], bytes]]:
    """A patch's file blocks, each from its `diff --git` line to the next, with the names that
    line gives (the old side's, then the new side's when it differs), read as git reads them: the
    one way this code splits a patch by file (a quoted or spaced name stays whole; a line inside
    a file's text that merely contains `diff --git ` is no block's start)."""
    starts = [m.start() for m in re.finditer(rb"^diff --git ", patch, re.MULTILINE)]
    blocks = []
    for a, b in zip(starts, starts[1:] + [len(patch)]):
        block = patch[a:b]
        header = block.split(b"\n", 1)[0].rstrip(b"\r")
        blocks.append((_git_header_names(header[len(b"diff --git ") :]), block))
    return blocks


def _git_header_names(rest: bytes) -> list[str]:
    """The two names of a `diff --git` line, as git's own header parser finds them."""
    first = unquote(rest)
    if first is not None:
        after = first[1].lstrip(b" ")
        second = unquote(after)
        names = [first[0], second[0] if second is not None else after.decode("utf-8", "replace")]
        return [n for n in (strip_prefix(x) for x in names) if n]
    # unquoted first name: the second may be quoted, else the line is "a/NAME b/NAME" (same name both sides)
    at = rest.find(b' "')
    if at > 0:
        second = unquote(rest[at + 1 :])
        if second is not None:
            return [n for n in (strip_prefix(rest[:at].decode("utf-8", "replace")), strip_prefix(second[0])) if n]
    if len(rest) % 2 == 1:
        half = len(rest) // 2
        a, b = rest[:half], rest[half + 1 :]
        if rest[half : half + 1] == b" " and a[2:] == b[2:]:
            return [n for n in (strip_prefix(a.decode("utf-8", "replace")),) if n]
    m = re.match(rb"a/(.+?) b/(.+)$", rest)  # a rename whose headers follow (rename from/to name both sides)
    return [m.group(1).decode("utf-8", "replace"), m.group(2).decode("utf-8", "replace")] if m else []


def _git_numstat_paths(patch: bytes) -> list[str]:
    """The paths git itself reads in `patch` (`git apply --numstat -z`, no repository needed),
    [] when there is no git or the patch is not one git reads."""
    if not patch.strip():
        return []
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_CEILING_DIRECTORIES": "/", "GIT_TERMINAL_PROMPT": "0"})
    try:
        done = subprocess.run(["git", "apply", "--numstat", "-z", "-"], input=patch, capture_output=True, env=env, cwd="/", timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done.returncode != 0:
        return []
    names: list[str] = []
    fields = done.stdout.split(b"\0")
    i = 0
    while i < len(fields):
        record = fields[i]
        if not record:
            i += 1
            continue
        parts = record.split(b"\t", 2)
        if len(parts) == 3 and parts[2]:
            names.append(parts[2].decode("utf-8", "replace"))
            i += 1
        elif len(parts) == 3:  # a rename: "added\tdeleted\t\0from\0to\0"
            names += [f.decode("utf-8", "replace") for f in fields[i + 1 : i + 3]]
            i += 3
        else:
            i += 1
    return names


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
