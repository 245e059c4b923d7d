"""The environment cache's entries: what `benchtape task envs` lists, when each was last used,
and pruning the ones unused for a while.

Each entry is a folder named by its recipe key (envs/build.py), beside a `<key>.lock` its
builders serialise on. A process that uses an entry (a validation, a task cell's grading) holds
a shared lock on `<key>.use` until it exits and stamps the entry's last use; a prune takes that
lock exclusively without waiting, so an environment a running benchtape is using is never
removed under it, whatever its last use says. The lock files themselves are never removed: a
process may be about to open one, and a removed file would let two processes lock two files.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Iterator

import orjson

MANIFEST = "manifest.json"
LAST_USED = ".last-used"  # its mtime: the entry's last use (a build is its first)
_HELD: dict[str, IO[bytes]] = {}  # this process's shared locks: key file -> its open handle


@dataclass(frozen=True)
class CachedEnv:
    """One entry of the cache as it is on disk now."""

    key: str
    folder: Path
    bytes: int
    built_at: float | None  # None: a build that never finished (killed): nothing uses it
    last_used: float | None
    in_use: bool  # a running benchtape holds it
    project: str | None
    python: str | None
    installer: str | None
    project_installed: bool
    node: str | None = None  # a Node project's node_modules: the node it was installed for

    @property
    def complete(self) -> bool:
        return self.built_at is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "folder": str(self.folder),
            "bytes": self.bytes,
            "built_at": self.built_at,
            "last_used": self.last_used,
            "in_use": self.in_use,
            "complete": self.complete,
            "project": self.project,
            "python": self.python,
            "installer": self.installer,
            "project_installed": self.project_installed,
            "node": self.node,
        }


@dataclass(frozen=True)
class Pruned:
    """What a prune removed, what it kept although asked (in use), and what it could not remove
    (with the first error: a read-only cache, another user's files)."""

    removed: list[CachedEnv]
    kept_in_use: list[CachedEnv]
    kept: int  # entries used since the cut-off
    failed: list[tuple[CachedEnv, str]]

    @property
    def freed(self) -> int:
        return sum(e.bytes for e in self.removed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "removed": [e.to_dict() for e in self.removed],
            "kept_in_use": [e.to_dict() for e in self.kept_in_use],
            "kept": self.kept,
            "failed": [{**e.to_dict(), "error": why} for e, why in self.failed],
            "freed_bytes": self.freed,
        }


def hold(cache: Path, key: str) -> None:
    """This process uses (or is about to build) the entry `key`: a shared lock on its `.use`
    file, kept until the process exits, so no prune removes it meanwhile. Taken before the
    entry is looked at: a prune under way finishes first, and the entry is then found gone."""
    use = cache / f"{key}.use"
    if str(use) in _HELD:
        return
    try:
        cache.mkdir(parents=True, exist_ok=True)
        handle = open(use, "ab")  # noqa: SIM115 - held open on purpose: the lock lives as long as the process
    except OSError:  # a cache this user cannot write: nobody can prune it either
        return
    fcntl.flock(handle, fcntl.LOCK_SH)
    _HELD[str(use)] = handle


def stamp(folder: Path) -> None:
    """The entry at `folder` was used now (what a prune's cut-off is compared with)."""
    with contextlib.suppress(OSError):  # a read-only cache is still used, unstamped
        (folder / LAST_USED).touch()  # an existing file's mtime set to now


def entries(cache: Path) -> list[CachedEnv]:
    """Every entry of the cache, the most recently used first."""
    if not cache.is_dir():
        return []
    # a dot folder is no environment: a Node project's package managers and npm's download cache (envs/node.py)
    found = [_entry(cache, child) for child in cache.iterdir() if child.is_dir() and not child.is_symlink() and not child.name.startswith(".")]
    return sorted(found, key=lambda e: -(e.last_used or e.built_at or 0.0))


def prune(cache: Path, unused_before: float) -> Pruned:
    """Remove the entries last used before `unused_before` (epoch seconds) and the builds that
    never finished, but any a running process holds (or is building)."""
    removed: list[CachedEnv] = []
    busy: list[CachedEnv] = []
    failed: list[tuple[CachedEnv, str]] = []
    kept = 0
    for entry in entries(cache):
        if entry.complete and (entry.last_used or entry.built_at or 0.0) >= unused_before:
            kept += 1
            continue
        with _exclusive(cache / f"{entry.key}.lock") as building, _exclusive(cache / f"{entry.key}.use") as used:
            if not (building and used):
                busy.append(entry)
                continue
            why = _remove(entry.folder)
            if why is None:
                removed.append(entry)
            else:
                failed.append((entry, why))
    return Pruned(removed, busy, kept, failed)


def _remove(folder: Path) -> str | None:
    """Remove the folder; None when it is gone, else the first error (or why it is still there)."""
    errors: list[str] = []
    shutil.rmtree(folder, onerror=lambda _fn, path, info: errors.append(f"{path}: {getattr(info[1], 'strerror', None) or info[1]}"))  # onerror: Python 3.11 has no onexc
    if not folder.exists():
        return None
    return errors[0] if errors else "still there after removal"


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[bool]:
    """An exclusive lock on `path` if nobody holds it now (True), without waiting (False)."""
    if not path.exists():  # nobody ever locked it: nothing to wait for, and no file is made
        yield True
        return
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below; read-only: a lock needs no write, and a read-only cache still lists
    except OSError:
        yield False
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _entry(cache: Path, folder: Path) -> CachedEnv:
    manifest = folder / MANIFEST
    try:
        built_at: float | None = manifest.stat().st_mtime
        doc = orjson.loads(manifest.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        built_at, doc = None, {}
    try:
        last_used: float | None = (folder / LAST_USED).stat().st_mtime
    except OSError:
        last_used = built_at
    return CachedEnv(
        key=folder.name,
        folder=folder,
        bytes=_size(folder),
        built_at=built_at,
        last_used=last_used,
        in_use=_held(cache / f"{folder.name}.use"),
        project=doc.get("project"),
        python=doc.get("python") or _venv_python(folder / "venv"),
        installer=doc.get("installer"),
        project_installed=bool(doc.get("project_installed")),
        node=doc.get("node"),
    )


def _held(use: Path) -> bool:
    with _exclusive(use) as free:
        return not free


def _size(folder: Path) -> int:
    """Bytes the folder's files take (each file once; links not followed)."""
    total = 0
    stack = [folder]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for item in it:
                    if item.is_dir(follow_symlinks=False):
                        stack.append(Path(item.path))
                    else:
                        with contextlib.suppress(OSError):
                            total += item.stat(follow_symlinks=False).st_blocks * 512
        except OSError:
            continue
    return total


def _venv_python(venv: Path) -> str | None:
    """The venv's Python version, from its pyvenv.cfg (an entry built before manifests said it)."""
    try:
        text = (venv / "pyvenv.cfg").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        name, _, value = line.partition("=")
        if name.strip() in ("version", "version_info"):
            return value.strip()
    return None
