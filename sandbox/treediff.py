"""The agent's change: its final workspace against the staged tree it started from.

An evaluation needs three facts from it: whether anything changed at all (`no_changes`),
whether a protected path changed (`guard_violation`), and how big the change is (lines
added and removed, compared across setups). The final tree comes from the session's stored
snapshot, so the same diff can be taken again later without the sandbox.
"""

from __future__ import annotations

import difflib
import io
import os
import re
import tarfile
from dataclasses import dataclass
from fnmatch import translate
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Mapping

LINK = b"symlink:"
CACHES = "bytecode caches (__pycache__/, .pyc), new cache folders (CACHEDIR.TAG: .pytest_cache/, .ruff_cache/), new test-tool state (.hypothesis/, .tox/, .nox/, .coverage), new node_modules/ folders (vite's .vite/, babel's .cache/) and new HOME state at the top (.cache/, .npm/, .config/configstore/, Go's go/pkg/mod/, shell histories): written by whatever ran the code, not by the agent"
CACHEDIR_TAG = "CACHEDIR.TAG"
CACHEDIR_SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"  # the Cache Directory Tagging Specification's


def is_bytecode(path: str) -> bool:
    """Whether a workspace path is a Python bytecode cache: no agent writes one by hand, so
    neither the agent's diff nor its patch counts it (a test run leaves dozens)."""
    return path.endswith((".pyc", ".pyo")) or "__pycache__" in path.split("/")


# What programs keep in HOME, never a project's source: caches, npm's, update notifiers' state,
# shells' and REPLs' histories (cache_rule: only where the staged tree had none). Folders end in
# `/`; a file is matched by its whole name. A project's own .config/ (dotnet tools, nextest) is
# not among them.
HOME_STATE = (".cache/", ".npm/", ".config/configstore/", ".local/state/", ".bash_history", ".python_history", ".node_repl_history", ".lesshst", ".wget-hsts")


# What test tools write beside the code without tagging it a cache (no CACHEDIR.TAG, no
# `.gitignore` of `*`): Hypothesis's example database, tox's and nox's environments, coverage's
# data files. A hidden folder (or file) of these names the staged tree did not have, at any
# depth: attrs' solver patches carried 22 files of .hypothesis/ (newcomer pass).
TOOL_STATE = (".hypothesis/", ".tox/", ".nox/")

# Go's GOPATH defaults to $HOME/go, so at levels home and container (HOME is the workspace) the
# first `go test` of a module with a dependency writes the module cache into the workspace's
# `go/pkg/mod/` (and the checksum database's `go/pkg/sumdb/`): a candidate carried the
# dependency's whole source as files it added. Left out where the staged tree had nothing there,
# whatever else its own top `go/` folder holds (a project's Go code often lives in one).
GO_PATH_STATE = ("go/pkg/mod/", "go/pkg/sumdb/")
TOOL_FILES = re.compile(r"(?:^|/)\.coverage(?:\.[^/]+)?$")


def cache_rule(before: Collection[str], after: Mapping[str, bytes]) -> Callable[[str], bool]:
    """Whether a changed path is a cache, not the agent's writing: bytecode (`is_bytecode`), or a
    file of a folder its tool tagged as a cache (a CACHEDIR.TAG beginning with the standard's
    signature: pytest's .pytest_cache/, ruff's, mypy's). An agent that runs the tests leaves
    .pytest_cache/, whose node ids made its change look several times the size of one that did
    not (git never shows it: pytest writes a .gitignore of `*` beside the tag). Only a hidden
    folder (`.name`) that the staged tree did not have counts, so no tag can hide a change to a
    file that was there, nor a file a test runner would collect. `before`: the staged tree's
    paths; `after`: the final tree's files, path → bytes.

    A `node_modules/` folder the staged tree did not have is a cache too: a task's Node
    dependencies are beside the workspace (envs/agent_env.py), and a tool the agent ran writes
    its cache in the package's own node_modules (vite's .vite/, babel's .cache/), which no
    source change is.

    So is what a program keeps in HOME (HOME_STATE), at the workspace's top, where the staged
    tree had none of its top folder: at levels home and container HOME is the workspace, and a test runner
    the agent ran leaves its update notifier's state (ava's .config/configstore/), which made a
    change of no code `failed` where it was `no_changes`."""
    had = {_node_modules(p) for p in before}
    folders = sorted({f for f in map(_node_modules, after) if f is not None and f not in had})
    staged_top = {p.split("/", 1)[0] for p in before}
    home_files = {name for name in HOME_STATE if not name.endswith("/") and name not in staged_top}
    folders += [name for name in HOME_STATE if name.endswith("/") and name.split("/", 1)[0] not in staged_top]
    folders += [name for name in GO_PATH_STATE if not any(p.startswith(name) for p in before)]
    for path in after:
        for name in TOOL_STATE:
            cut = path.find(name)
            folder = path[: cut + len(name)] if cut >= 0 and (cut == 0 or path[cut - 1] == "/") else None
            if folder is not None and folder not in folders and not any(p == folder[:-1] or p.startswith(folder) for p in before):
                folders.append(folder)
    tool_files = {path for path in after if TOOL_FILES.search(path) and path not in before}
    for path, data in after.items():
        if not path.endswith("/" + CACHEDIR_TAG):
            continue
        folder = path[: -len(CACHEDIR_TAG)]
        if folder.rstrip("/").rsplit("/", 1)[-1].startswith(".") and data.startswith(CACHEDIR_SIGNATURE) and not any(p == folder[:-1] or p.startswith(folder) for p in before):
            folders.append(folder)
    prefixes = tuple(folders)
    return lambda path: is_bytecode(path) or path in home_files or path in tool_files or (bool(prefixes) and path.startswith(prefixes))


def _node_modules(path: str) -> str | None:
    """The first node_modules folder a path is (or is in), as `pkg/node_modules/`; None when none."""
    if "node_modules" not in path:
        return None
    parts = path.split("/")
    for i, part in enumerate(parts):
        if part == "node_modules":
            return "/".join(parts[: i + 1]) + "/"
    return None


@dataclass(frozen=True)
class FileChange:
    path: str
    kind: str  # added | removed | changed
    lines_added: int
    lines_removed: int
    binary: bool = False


@dataclass(frozen=True)
class WorkspaceDiff:
    changes: tuple[FileChange, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.changes

    @property
    def lines_added(self) -> int:
        return sum(c.lines_added for c in self.changes)

    @property
    def lines_removed(self) -> int:
        return sum(c.lines_removed for c in self.changes)

    def without(self, patterns: Iterable[str]) -> WorkspaceDiff:
        """The diff minus paths a pattern covers (a harness's own state files, say)."""
        covered = covering(tuple(patterns))
        return WorkspaceDiff(tuple(c for c in self.changes if not covered(c.path)))

    def touching(self, patterns: Iterable[str]) -> list[str]:
        """Changed paths that a protected pattern covers."""
        covered = covering(tuple(patterns))
        return [c.path for c in self.changes if covered(c.path)]

    def summary(self) -> dict[str, Any]:
        return {
            "files": len(self.changes),
            "lines_added": self.lines_added,
            "lines_removed": self.lines_removed,
            "paths": [c.path for c in self.changes][:50],
        }


def covers(pattern: str, path: str) -> bool:
    """`tests/**`, `*.lock`, or a plain folder or file name (`tests`, `setup.cfg`): as `covering`."""
    return covering((pattern,))(path)


@lru_cache(maxsize=256)
def covering(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """Whether any of the patterns covers a path, as one compiled regex (the one definition of
    the rule): a glob as fnmatchcase reads it (`*` crossing `/`), `dir/**` also the folder
    itself, and a plain name everything under it. A snapshot asks it of every entry it meets
    (~100 a codex or claude workspace, twice a session); the globs one by one through fnmatch
    were a fifth of the snapshot's time."""
    if not patterns:
        return lambda path: False
    parts = []
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        parts.append(translate(pattern))  # fnmatchcase: (?s:...)\Z, `*` crossing `/` as it does there
        if pattern.endswith("/**"):
            parts.append(r"(?s:" + re.escape(pattern[:-3]) + r"(?:/.*)?)\Z")
        if not any(ch in pattern for ch in "*?["):
            parts.append(r"(?s:" + re.escape(pattern) + r"/.*)\Z")
    match = re.compile("|".join(f"(?:{p})" for p in parts)).match
    return lambda path: match(path) is not None


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file under root (relative posix path → bytes; a symlink → its target, marked)."""
    out: dict[str, bytes] = {}
    if not root.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames) + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            rel = Path(full).relative_to(root).as_posix()
            if os.path.islink(full):
                out[rel] = LINK + os.readlink(full).encode()
            elif os.path.isfile(full):
                with open(full, "rb") as f:
                    out[rel] = f.read()
    return out


def read_snapshot(data: bytes) -> dict[str, bytes]:
    """The files of a workspace snapshot (benchtape.sandbox.snapshot's tar), without writing them anywhere."""
    out: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
        for member in tar.getmembers():
            name = member.name[2:] if member.name.startswith("./") else member.name
            if member.issym():
                out[name] = LINK + member.linkname.encode()
            elif member.isreg():
                f = tar.extractfile(member)
                out[name] = f.read() if f is not None else b""
    return out


def diff_trees(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> WorkspaceDiff:
    """Per changed file, lines added and removed (a binary file counts as changed with no lines)."""
    changes = []
    is_cache = cache_rule(before, after)
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new or is_cache(path):
            continue
        kind = "added" if old is None else "removed" if new is None else "changed"
        old_lines, new_lines = _lines(old), _lines(new)
        if old_lines is None or new_lines is None:
            changes.append(FileChange(path, kind, 0, 0, binary=True))
            continue
        added = removed = 0
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
            if tag in ("replace", "delete"):
                removed += i2 - i1
            if tag in ("replace", "insert"):
                added += j2 - j1
        changes.append(FileChange(path, kind, added, removed))
    return WorkspaceDiff(tuple(changes))


def _lines(data: bytes | None) -> list[str] | None:
    """Text lines; None for binary content (NUL bytes or not UTF-8)."""
    if data is None:
        return []
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None
