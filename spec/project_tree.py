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
    """`commit` of the repository at `repo`, read through git (objects only, no work tree)."""

    def __init__(self, repo: Path, commit: str):
        self.repo = repo
        self.commit = commit
        self._names: dict[str, list[str]] = {}

    def _git(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["git", "-C", str(self.repo), *args], capture_output=True, timeout=60)

    def read(self, path: str) -> bytes | None:
        folder, _, name = path.rpartition("/")
        if name not in self.names(folder):
            return None
        done = self._git("cat-file", "blob", f"{self.commit}:{path}")
        return done.stdout if done.returncode == 0 else None

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

    def names(self, folder: str = "") -> list[str]:
        if folder not in self._names:
            spec = f"{self.commit}:{folder}" if folder else f"{self.commit}^{{tree}}"
            done = self._git("ls-tree", spec)
            found = []
            for line in done.stdout.decode("utf-8", "replace").splitlines() if done.returncode == 0 else []:
                meta, _, name = line.partition("\t")
                kind = meta.split()[1] if len(meta.split()) > 1 else ""
                found.append(name + "/" if kind == "tree" else name)
            self._names[folder] = sorted(found)
        return self._names[folder]


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
