"""The `workspace` level runs the agent with the real HOME: put the user's `~/.claude` back.

At level workspace only the working tree is the run's own; the agent still reads and
writes the user's real `~/.claude`. So (madbench §1.8) the configuration files an agent
could change are snapshotted before the session and restored after it, the run's own
new entries in the session-state folders are deleted, and `plugins/` changes are
reported, not undone (reinstalling plugins is the user's decision).

Sessions at this level may run concurrently over one HOME: the first one in takes the
snapshot and the last one out restores it, so no session restores over another's run.
Symlinked entries (dotfile managers) are restored as links, and what was written
through them is restored at their target.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recorder.sandbox.trees import remove_tree

RESTORED_FILES = ("settings*.json", "remote-settings.json", "policy-limits.json", ".mcp.json", "CLAUDE.md", "statusline-command.sh")
RESTORED_TREES = ("agents", "commands", "skills", "hooks")
CREATED_ENTRIES_DELETED = ("projects", "todos", "shell-snapshots", "statsig")
REPORTED = "plugins"
MAX_LISTED = 20


@dataclass
class _Saved:
    name: str
    link: str | None  # the entry was a symlink with this target
    copy: Path | None  # what it held (following a top-level link); None when it held nothing


@dataclass
class _Baseline:
    claude: Path
    backup: Path
    existed: bool
    saved: dict[str, _Saved] = field(default_factory=dict)
    entries: dict[str, set[str] | None] = field(default_factory=dict)
    plugins: dict[str, tuple[Any, ...]] | None = None
    users: int = 0


_LOCK = threading.Lock()
_ACTIVE: dict[str, _Baseline] = {}


class ClaudeHome:
    """Context manager: snapshot `home/.claude` on enter, restore on `release()` or exit."""

    def __init__(self, home: Path):
        self.claude = Path(home) / ".claude"
        self.key = os.path.abspath(self.claude)
        self._held = False

    def __enter__(self) -> "ClaudeHome":
        with _LOCK:
            base = _ACTIVE.get(self.key)
            if base is None:
                base = _ACTIVE[self.key] = _take(self.claude)
            base.users += 1
            self._held = True
        return self

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
                    remove_tree(base.backup)
            return notes

    def __exit__(self, *exc: Any) -> None:
        self.release()


# ---------------------------------------------------------------- snapshot


def _take(claude: Path) -> _Baseline:
    base = _Baseline(claude=claude, backup=Path(tempfile.mkdtemp(prefix="benchtape-claude-home-")), existed=claude.is_dir())
    for name in _restored_names(claude):
        path = claude / name
        link = os.readlink(path) if path.is_symlink() else None
        copy: Path | None = None
        if path.exists():
            copy = base.backup / name
            if path.is_dir():
                shutil.copytree(path, copy, symlinks=True)
            else:
                shutil.copy2(path, copy)
        base.saved[name] = _Saved(name, link, copy)
    for name in CREATED_ENTRIES_DELETED:
        folder = claude / name
        base.entries[name] = set(os.listdir(folder)) if folder.is_dir() else None
    base.plugins = _manifest(claude / REPORTED)
    return base


def _restored_names(claude: Path) -> list[str]:
    if not claude.is_dir():
        return []
    names = {p.name for pattern in RESTORED_FILES for p in claude.glob(pattern)}
    names.update(n for n in RESTORED_TREES if os.path.lexists(claude / n))
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
    claude = base.claude
    if claude.is_dir():
        for name in _restored_names(claude):
            if name not in base.saved:
                _remove(claude / name)
    for saved in base.saved.values():
        path = claude / saved.name
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
    for name, before in base.entries.items():
        folder = claude / name
        if not folder.is_dir() or folder.is_symlink():
            if before is None and os.path.lexists(folder):
                _remove(folder)
            continue
        for entry in os.listdir(folder):
            if before is None or entry not in before:
                _remove(folder / entry)
        if before is None:
            _remove(folder)
    if not base.existed and claude.is_dir() and not os.listdir(claude):
        claude.rmdir()


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
    after = _manifest(base.claude / REPORTED)
    before = base.plugins
    if before == after:
        return []
    before, now = before or {}, after or {}
    added = sorted(set(now) - set(before))
    removed = sorted(set(before) - set(now))
    changed = sorted(k for k in set(now) & set(before) if now[k] != before[k])
    parts = [f"{what}: {', '.join(names[:MAX_LISTED])}{' ...' if len(names) > MAX_LISTED else ''}" for what, names in (("added", added), ("removed", removed), ("changed", changed)) if names]
    return [f"~/.claude/plugins changed during the session (reported, not undone; a concurrent session over the same HOME may share it): {'; '.join(parts)}"]
