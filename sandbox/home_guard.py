"""The `workspace` level runs the agent with your real HOME: put back what its tool keeps there.

At level workspace only the working tree is the run's own; the agent still reads and writes
your real HOME, where a tool keeps its settings and session state (Claude Code: ~/.claude and
~/.claude.json). The harness says what that is (a `HomeState` in its launch plan,
core/launch_plan.py); this module knows no tool by name. So (madbench §1.8) the configuration
files an agent could change are snapshotted before the session and restored after it, the
run's own new entries in the session-state folders are deleted, the files beside the folder
in HOME are put back byte for byte (or removed when the session made them), and changes under
the reported folder (plugins/) are reported, not undone (reinstalling plugins is the user's
decision): after a session, every file the user had is byte-identical and nothing the session
made is left, except under the reported folder.

Sessions at this level may run concurrently over one HOME: the first one in takes the
snapshot and the last one out restores it, so no session restores over another's run.
Symlinked entries (dotfile managers) are restored as links, and what was written
through them is restored at their target.

The baseline survives benchtape: its folder holds `baseline.json` (what to put back, and the
home state it was taken for) and a `lock` the owning process holds while the baseline is in
use. A baseline whose owner died (kill -9 mid-session) is restored by the next benchtape
start, or `benchtape recover` (`restore_orphans`), unless a live session over the same folder
holds one.
"""

from __future__ import annotations

import contextlib
import fcntl
import filecmp
import json
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchtape.core.launch_plan import HomeState
from benchtape.sandbox.trees import remove_tree

MAX_LISTED = 20
BACKUP_PREFIX = "benchtape-home-"


@dataclass
class _Saved:
    name: str
    link: str | None  # the entry was a symlink with this target
    copy: Path | None  # what it held (following a top-level link); None when it held nothing


@dataclass
class _Baseline:
    tool_dir: Path  # the tool's folder under HOME
    state: HomeState
    backup: Path
    existed: bool
    saved: dict[str, _Saved] = field(default_factory=dict)
    home_saved: dict[str, _Saved] = field(default_factory=dict)  # state.home_files, relative to HOME
    home_dirs: list[str] = field(default_factory=list)  # their folders that did not exist (deepest first): removed again when empty
    entries: dict[str, set[str] | None] = field(default_factory=dict)
    plugins: dict[str, tuple[Any, ...]] | None = None
    users: int = 0
    lock_fd: int = -1  # held while the baseline is in use: a later benchtape knows it is not orphaned

    def persist(self) -> None:
        """Write what a restore needs, so one can happen in another process if this one dies."""
        doc = {
            "tool_dir": str(self.tool_dir),
            "state": self.state.doc(),
            "existed": self.existed,
            "saved": [_saved_doc(s) for s in self.saved.values()],
            "home_saved": [_saved_doc(s) for s in self.home_saved.values()],
            "home_dirs": self.home_dirs,
            "entries": {k: sorted(v) if v is not None else None for k, v in self.entries.items()},
        }
        tmp = self.backup / "baseline.json.tmp"
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, self.backup / "baseline.json")

    @classmethod
    def load(cls, backup: Path) -> _Baseline:
        doc = json.loads((backup / "baseline.json").read_text())
        base = cls(tool_dir=Path(doc["tool_dir"]), state=HomeState.of(doc["state"]), backup=backup, existed=bool(doc["existed"]))
        base.saved = {s.name: s for s in map(_saved_of, doc["saved"])}
        base.home_saved = {s.name: s for s in map(_saved_of, doc.get("home_saved", []))}
        base.home_dirs = list(doc.get("home_dirs", []))
        base.entries = {k: set(v) if v is not None else None for k, v in doc["entries"].items()}
        return base

    def discard(self) -> None:
        remove_tree(self.backup)
        if self.lock_fd >= 0:
            os.close(self.lock_fd)
            self.lock_fd = -1


def _saved_doc(s: _Saved) -> dict[str, Any]:
    return {"name": s.name, "link": s.link, "copy": str(s.copy) if s.copy else None}


def _saved_of(doc: dict[str, Any]) -> _Saved:
    return _Saved(doc["name"], doc["link"], Path(doc["copy"]) if doc["copy"] else None)


_LOCK = threading.Lock()
_ACTIVE: dict[str, _Baseline] = {}


class HomeGuard:
    """Context manager: snapshot what `state` names under `home` on enter, restore on `release()` or exit."""

    def __init__(self, home: Path, state: HomeState):
        self.state = state
        self.tool_dir = Path(home) / state.folder
        self.key = os.path.abspath(self.tool_dir)
        self._held = False

    def __enter__(self) -> HomeGuard:
        with _LOCK:
            base = _ACTIVE.get(self.key)
            if base is None:
                base = _ACTIVE[self.key] = _take(self.tool_dir, self.state)
            base.users += 1
            self._held = True
        return self

    def plugin_notes(self) -> list[str]:
        """What changed under plugins/ since the snapshot (reported, not undone), without
        restoring: the harness's own files (a transcript read after it exits) stay until `release`."""
        with _LOCK:
            return _plugin_changes(_ACTIVE[self.key]) if self._held else []

    def release(self) -> list[str]:
        """Restore (when this is the last session over this HOME); returns notes on plugins/ changes."""
        with _LOCK:
            if not self._held:
                return []
            self._held = False
            base = _ACTIVE[self.key]
            base.users -= 1
            notes = _plugin_changes(base)
            if base.users == 0:
                del _ACTIVE[self.key]
                try:
                    _restore(base)
                finally:
                    base.discard()
            return notes

    def __exit__(self, *exc: Any) -> None:
        self.release()


# ---------------------------------------------------------------- snapshot


def _take(tool_dir: Path, state: HomeState) -> _Baseline:
    _restore_orphans(None, tool_dir)  # a killed run's baseline first: it holds the state before that run
    base = _Baseline(tool_dir=tool_dir, state=state, backup=Path(tempfile.mkdtemp(prefix=BACKUP_PREFIX)), existed=tool_dir.is_dir())
    base.lock_fd = _lock(base.backup, blocking=True)
    for name in _restored_names(tool_dir, state):
        base.saved[name] = _save(tool_dir, name, base.backup)
    for name in state.home_files:
        base.home_saved[name] = _save(tool_dir.parent, name, base.backup / "home")
    base.home_dirs = _missing_folders(tool_dir.parent, state.home_files)
    for name in state.created_entries_deleted:
        folder = tool_dir / name
        base.entries[name] = set(os.listdir(folder)) if folder.is_dir() else None
    base.plugins = _manifest(tool_dir / state.reported) if state.reported else None
    base.persist()
    return base


def _save(folder: Path, name: str, backup: Path) -> _Saved:
    """folder/name as it is: a link's target, and a copy of what it holds (None: nothing)."""
    path = folder / name
    link = os.readlink(path) if path.is_symlink() else None
    copy: Path | None = None
    if path.exists():
        copy = backup / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            shutil.copytree(path, copy, symlinks=True)
        else:
            shutil.copy2(path, copy)
    return _Saved(name, link, copy)


def _missing_folders(home: Path, names: tuple[str, ...]) -> list[str]:
    """The folders above `names` (under HOME) that do not exist yet, deepest first."""
    missing = {str(parent) for name in names for parent in Path(name).parents if str(parent) != "." and not os.path.lexists(home / parent)}
    return sorted(missing, key=lambda p: (-p.count("/"), p))


def _lock(folder: Path, *, blocking: bool) -> int:
    """An exclusive lock on folder/lock; -1 when it is held by a live process (non-blocking), -2
    when the folder is gone (non-blocking: another run's, removed by its owner since it was listed)."""
    try:
        fd = os.open(folder / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except FileNotFoundError:
        if blocking:
            raise
        return -2
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return -1
    return fd


def restore_orphans(tmp: Path | None = None, tool_dir: Path | None = None) -> list[str]:
    """Put back every tool folder under a HOME whose baseline was left by a benchtape that died
    mid-session (only `tool_dir` when given); one a live process holds is left alone, and so is
    an orphan whose folder a live session is using (its own baseline would then be the wrong one to
    restore over). Returns what was restored."""
    with _LOCK:
        return _restore_orphans(tmp, tool_dir)


def _restore_orphans(tmp: Path | None, tool_dir: Path | None) -> list[str]:
    base_dir = Path(tmp or tempfile.gettempdir())
    try:
        folders = sorted(p for p in base_dir.iterdir() if p.name.startswith(BACKUP_PREFIX) and (p / "baseline.json").is_file())
    except OSError:
        return []
    restored = []
    live = set(_ACTIVE)  # baselines this process holds
    for folder in folders:
        fd = _lock(folder, blocking=False)
        if fd < 0:
            continue  # its owner is alive (or finished and removed it since the listing)
        try:
            base = _Baseline.load(folder)
        except (OSError, ValueError, KeyError, TypeError):
            os.close(fd)
            continue
        key = os.path.abspath(base.tool_dir)
        if (tool_dir is not None and key != os.path.abspath(tool_dir)) or key in live or _held_elsewhere(folders, folder, key):
            os.close(fd)
            continue
        base.lock_fd = fd
        try:
            _restore(base)
            restored.append(str(base.tool_dir))
        finally:
            base.discard()
    return restored


def _held_elsewhere(folders: list[Path], mine: Path, key: str) -> bool:
    """Whether another process's live baseline covers the same tool folder."""
    for other in folders:
        if other == mine or not other.exists():
            continue
        try:
            if os.path.abspath(json.loads((other / "baseline.json").read_text())["tool_dir"]) != key:
                continue
        except (OSError, ValueError, KeyError):
            continue
        fd = _lock(other, blocking=False)
        if fd == -1:
            return True
        if fd >= 0:
            os.close(fd)
    return False


def _restored_names(tool_dir: Path, state: HomeState) -> list[str]:
    if not tool_dir.is_dir():
        return []
    names = {p.name for pattern in state.restored_files for p in tool_dir.glob(pattern)}
    names.update(n for n in state.restored_trees if os.path.lexists(tool_dir / n))
    return sorted(names)


def _manifest(folder: Path) -> dict[str, tuple[Any, ...]] | None:
    if not folder.is_dir():
        return None
    out: dict[str, tuple[Any, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            link = os.readlink(full) if os.path.islink(full) else None
            out[os.path.relpath(full, folder)] = (st.st_mode, st.st_size if name in filenames else 0, st.st_mtime_ns if name in filenames else 0, link)
    return out


# ---------------------------------------------------------------- restore


def _restore(base: _Baseline) -> None:
    tool_dir = base.tool_dir
    if tool_dir.is_dir():
        for name in _restored_names(tool_dir, base.state):
            if name not in base.saved:
                _remove(tool_dir / name)
    for saved in base.saved.values():
        _put_back(tool_dir / saved.name, saved)
    for saved in base.home_saved.values():
        path = tool_dir.parent / saved.name
        if saved.link is None and saved.copy is None:
            if os.path.lexists(path):
                _remove(path)  # the session made it
            continue
        _put_back(path, saved)
    for rel in base.home_dirs:
        with contextlib.suppress(OSError):  # not empty (something else put a file there) or gone: left as it is
            (tool_dir.parent / rel).rmdir()
    for name, before in base.entries.items():
        folder = tool_dir / name
        if not folder.is_dir() or folder.is_symlink():
            if before is None and os.path.lexists(folder):
                _remove(folder)
            continue
        for entry in os.listdir(folder):
            if before is None or entry not in before:
                _remove(folder / entry)
        if before is None:
            _remove(folder)
    if not base.existed and tool_dir.is_dir() and not os.listdir(tool_dir):
        tool_dir.rmdir()


def _put_back(path: Path, saved: _Saved) -> None:
    """The link as it was (and what it pointed at, restored at its target), or the file itself."""
    if saved.link is not None:
        if not (path.is_symlink() and os.readlink(path) == saved.link):
            _remove(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(saved.link, path)
    elif path.is_symlink():
        _remove(path)
    if saved.copy is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        _mirror(saved.copy, path)


def _mirror(src: Path, dst: Path) -> None:
    """Make dst hold what src holds, writing as little as possible and never following inner links."""
    if src.is_symlink():
        if not (dst.is_symlink() and os.readlink(dst) == os.readlink(src)):
            _remove(dst)
            os.symlink(os.readlink(src), dst)
        return
    if src.is_dir():
        if os.path.lexists(dst) and not dst.is_dir():
            _remove(dst)
        dst.mkdir(exist_ok=True)
        wanted = set(os.listdir(src))
        for extra in set(os.listdir(dst)) - wanted:
            _remove(dst / extra)
        for name in sorted(wanted):
            child = dst / name
            if child.is_symlink() and not (src / name).is_symlink():
                _remove(child)
            _mirror(src / name, child)
        shutil.copystat(src, dst)
        return
    if dst.is_dir() and not dst.is_symlink():
        _remove(dst)
    if not (dst.is_file() and os.stat(dst).st_mode == os.stat(src).st_mode and filecmp.cmp(src, dst, shallow=False)):
        shutil.copy2(src, dst)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


# ---------------------------------------------------------------- plugins


def _plugin_changes(base: _Baseline) -> list[str]:
    reported = base.state.reported
    if not reported:
        return []
    after = _manifest(base.tool_dir / reported)
    before = base.plugins
    if before == after:
        return []
    before, now = before or {}, after or {}
    added = sorted(set(now) - set(before))
    removed = sorted(set(before) - set(now))
    changed = sorted(k for k in set(now) & set(before) if now[k] != before[k])
    parts = [f"{what}: {', '.join(names[:MAX_LISTED])}{' ...' if len(names) > MAX_LISTED else ''}" for what, names in (("added", added), ("removed", removed), ("changed", changed)) if names]
    return [f"~/{base.state.folder}/{reported} changed during the session (reported, not undone; a concurrent session over the same HOME may share it): {'; '.join(parts)}"]
