"""The next session's folder, made ahead while this one's harness runs (one run's, never shared).

A session folder is a dozen file creations (its lock, capture files and session.json, the
copy of the staged tree, tmp/, the harness's first-run JSON under HOME), ~0.25 ms each on a
slow disk: 1–7 ms a session. At concurrency 1 the run loop asks for the next session's once
this one's harness started, and the next session takes it if it is ready and made for the
same level, staged tree and HOME files; it is never waited for.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

from benchtape.core.errors import temp_room
from benchtape.sandbox.capture import SessionFolder
from benchtape.sandbox.trees import Cleanup

SpareKey = tuple[str, bool, "Path | None", dict[str, Any]]  # level, keep, the staged tree, the harness's home_json merged into HOME (level home: HOME is work/)


def lay_out(temp: Path, seed: Path | None) -> None:
    """work/ (a copy of the staged tree) and tmp/ in a session folder: the file creations a
    session folder costs, done ahead by a spare."""
    with temp_room("a session's workspace"):
        if seed is not None:
            shutil.copytree(seed, temp / "work", symlinks=True, copy_function=_copy)
        else:
            (temp / "work").mkdir()
        (temp / "tmp").mkdir()


def _copy(source: str, dest: str) -> object:
    """shutil.copy2, but a full disk stops the copy at once as the user's message: copytree
    gathers its copies' errors into one shutil.Error, their errno lost."""
    with temp_room("a session's workspace"):
        return shutil.copy2(source, dest)


class Spares:
    """One run's spare session folder, made on its cleanups (benchtape.sandbox.trees.Cleanup).

    A spare is an ordinary session folder, locked by this process and holding no session yet:
    if benchtape dies, the orphan sweep removes it as a folder whose session never began. One
    spare at most; `discard` (at the run's end) removes an unused one."""

    def __init__(self, cleanup: Cleanup) -> None:
        self.cleanup = cleanup
        self.lock = threading.Lock()
        self.spare: tuple[SpareKey, SessionFolder] | None = None
        self.generation = 0  # bumped by `discard`: a spare still being made for the ended run is dropped

    def make_later(self, key: SpareKey) -> None:
        with self.lock:
            generation = self.generation
        self.cleanup.later(lambda: self._make(key, generation), optional=True)

    def _make(self, key: SpareKey, generation: int) -> None:
        level, keep, seed, home_json = key
        folder = SessionFolder.create(level=level, keep=keep)
        try:
            lay_out(folder.path, seed)
            if home_json:
                from benchtape.sandbox.home_seed import seed_home

                seed_home(folder.path / "work", home_json)
        except BaseException:
            folder.close()
            raise
        with self.lock:
            if generation == self.generation:
                old, self.spare = self.spare, (key, folder)
            else:
                old = (key, folder)
        if old is not None:
            old[1].close()

    def take(self, key: SpareKey) -> SessionFolder | None:
        """The spare when it is ready and made for `key`; else None (the caller makes its own)."""
        with self.lock:
            if self.spare is None or self.spare[0] != key:
                return None
            folder, self.spare = self.spare[1], None
        return folder

    def discard(self) -> None:
        """Remove the spare (at a run's end: its staged trees go with the run), and any being made."""
        with self.lock:
            self.generation += 1
            old, self.spare = self.spare, None
        if old is not None:
            self.cleanup.later(old[1].close)
