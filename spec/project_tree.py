"""A project's dependency declarations at a commit, and the hash a task's fingerprint binds.

A tree to read them from is a folder on disk or a commit of a repository (read through git,
no export): detection (envs/detect.py) and the recipe read only a handful of small files
(pyproject.toml, setup.py/cfg, requirements files, tox.ini, noxfile.py, lock files), so
`task list` and an evaluation's loader compute a task's environment recipe at its base commit
with a few `git` reads. `environment_recipe` hashes those files' bytes and the project's `env:`:
it is part of every history task's fingerprint (Project.task_recipe), so a changed dependency
makes the tasks of that base stale.
"""

from __future__ import annotations

import functools
import hashlib
import re
import subprocess
from pathlib import Path
from typing import Any, Protocol

import orjson

TOP_DECLARATIONS = ("pyproject.toml", "setup.py", "setup.cfg", "tox.ini", "noxfile.py", "Pipfile")
LOCK_FILES = ("uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "pylock.toml")
REQUIREMENT_FOLDERS = ("requirements", "requirements.d", "reqs", "ci")
RECIPE_FORMAT = 1  # bump when what an environment recipe means changes
_REQUIREMENTS = re.compile(r"^[^/]*req[^/]*\.(?:txt|in)$", re.IGNORECASE)


class Tree(Protocol):
    def read(self, path: str) -> bytes | None:
        """The file's bytes; None when it is absent (or a folder)."""

    def names(self, folder: str = "") -> list[str]:
        """The entries directly in `folder` ("" the top): files by name, folders ending in `/`."""


class FolderTree:
    def __init__(self, root: Path):
        self.root = root

    def read(self, path: str) -> bytes | None:
        target = self.root / path
        try:
            return target.read_bytes() if target.is_file() and not target.is_symlink() else None
        except OSError:
            return None

    def names(self, folder: str = "") -> list[str]:
        base = self.root / folder if folder else self.root
        try:
            return sorted(p.name + ("/" if p.is_dir() and not p.is_symlink() else "") for p in base.iterdir())
        except OSError:
            return []


class GitTree:
    """`commit` of the repository at `repo`, read through git (objects only, no work tree).

    Each folder is listed once (`git ls-tree`, with its blobs' ids); the first read fetches
    every small declaration-like file of that folder in one `git cat-file --batch`, so a
    recipe costs a few git processes, not one per file (a cache hit must stay fast)."""

    def __init__(self, repo: Path, commit: str):
        self.repo = repo
        self.commit = commit
        self._names: dict[str, list[str]] = {}
        self._blobs: dict[str, str] = {}  # path -> blob id
        self._data: dict[str, bytes] = {}

    def _git(self, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["git", "-C", str(self.repo), *args], input=stdin, capture_output=True, timeout=60)

    def read(self, path: str) -> bytes | None:
        folder, _, name = path.rpartition("/")
        if name not in self.names(folder):
            return None
        if path not in self._data:
            wanted = [p for p in self._blobs if p.rpartition("/")[0] == folder and p not in self._data and _declaration_like(p)]
            self._fetch(sorted(set(wanted) | {path}))
        return self._data.get(path)

    def _fetch(self, paths: list[str]) -> None:
        ids = [self._blobs[p] for p in paths if p in self._blobs]
        done = self._git("cat-file", "--batch", stdin="".join(f"{i}\n" for i in ids).encode())
        out, at = done.stdout, 0
        for path, blob in zip([p for p in paths if p in self._blobs], ids):
            header_end = out.find(b"\n", at)
            if header_end < 0:
                break
            header = out[at:header_end].split()
            if len(header) < 3 or header[0].decode() != blob or header[1] != b"blob":
                at = header_end + 1
                continue
            size = int(header[2])
            self._data[path] = out[header_end + 1 : header_end + 1 + size]
            at = header_end + 1 + size + 1

    def release(self) -> str | None:
        """The newest release tag this commit descends from, as a version (`v1.4.0` → `1.4.0`), or None.

        What a VCS-versioned project (setuptools-scm, hatch-vcs) would call itself at this commit:
        its export has no .git, so the build is told a version, and a made-up 0.0.0 breaks
        resolution wherever a test tool requires the project (pytest needs pluggy>=1.5: with
        pluggy at 0.0.0 the resolver went back to a pytest of 2016, which no longer imports)."""
        done = self._git("describe", "--tags", "--abbrev=0", "--match", "*[0-9]*", self.commit)
        tag = done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else ""
        found = re.search(r"\d+(?:\.\d+)*", tag)
        return found.group(0) if found else None

    def committed(self) -> int | None:
        """The commit's committer time (seconds since the epoch), or None."""
        done = self._git("show", "-s", "--format=%ct", self.commit)
        text = done.stdout.decode().strip() if done.returncode == 0 else ""
        return int(text) if text.isdigit() else None

    def names(self, folder: str = "") -> list[str]:
        if folder not in self._names:
            if folder and "/" not in folder:  # every top-level folder listed in one process
                top = [n[:-1] for n in self.names() if n.endswith("/")]
                self._list([f"{d}/" for d in top] if folder in top else [f"{folder}/"], top if folder in top else [folder])
            else:
                self._list([folder + "/"] if folder else [], [folder])
        return self._names.get(folder, [])

    def _list(self, specs: list[str], folders: list[str]) -> None:
        done = self._git("ls-tree", self.commit, "--", *specs)
        found: dict[str, list[str]] = {f: [] for f in folders}
        for line in done.stdout.decode("utf-8", "replace").splitlines() if done.returncode == 0 else []:
            meta, _, path = line.partition("\t")
            parent, _, name = path.rpartition("/")
            parts = meta.split()
            kind = parts[1] if len(parts) > 2 else ""
            if parent in found:
                found[parent].append(name + "/" if kind == "tree" else name)
                if kind == "blob" and not parts[0].startswith("12"):  # a symlink's target is no declaration
                    self._blobs[path] = parts[2]
        for f, names in found.items():
            self._names[f] = sorted(names)


def _declaration_like(path: str) -> bool:
    name = path.rpartition("/")[2]
    return name in TOP_DECLARATIONS or name in LOCK_FILES or bool(re.search(r"\.(?:txt|in|toml|cfg|ini)$", name))


def declaration_paths(tree: Tree, extra: tuple[str, ...] = ()) -> list[str]:
    """The files an environment is made from, as present in `tree`: build and test declarations,
    lock files, requirements files (at the top and in requirements/ and the like), and the
    requirements files the project config names."""
    top = tree.names()
    found = [n for n in (*TOP_DECLARATIONS, *LOCK_FILES) if n in top]
    found += [n for n in top if _REQUIREMENTS.match(n)]
    for folder in REQUIREMENT_FOLDERS:
        if folder + "/" in top:
            found += [f"{folder}/{n}" for n in tree.names(folder) if re.search(r"\.(?:txt|in)$", n)]
    found += [p for p in extra if p not in found]
    return sorted(set(found))


def declarations(tree: Tree, extra: tuple[str, ...] = ()) -> dict[str, str]:
    """path -> sha256 of its bytes, for each declaration present."""
    out = {}
    for path in declaration_paths(tree, extra):
        data = tree.read(path)
        if data is not None:
            out[path] = hashlib.sha256(data).hexdigest()
    return out


def environment_recipe(tree: Tree, env: dict[str, Any]) -> str:
    """One hash of what a project's environment is made from at this tree: its declarations'
    bytes and the project's `env:` (`env`: EnvConfig.bound(); the Python it is built with is
    the cache's key, not this)."""
    doc = {"format": RECIPE_FORMAT, "declarations": declarations(tree, tuple(env.get("requirements") or ())), "env": env}
    return hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()


@functools.lru_cache(maxsize=512)
def _recipe_at(root: str, commit: str, env_json: bytes) -> str:
    return environment_recipe(GitTree(Path(root), commit), orjson.loads(env_json))


def environment_recipe_at(root: Path, commit: str, env: dict[str, Any]) -> str:
    """`environment_recipe` of a commit of the repository at `root` (cached: a commit never changes)."""
    return _recipe_at(str(root), commit, orjson.dumps(env, option=orjson.OPT_SORT_KEYS))
