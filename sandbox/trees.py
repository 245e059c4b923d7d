"""Walking and removing folder trees without recursion.

An agent can leave a workspace thousands of folders deep; `os.walk` (before Python 3.12)
and `shutil.rmtree` recurse once per level and raise RecursionError there, which would
abort a run and leave the folders behind. These walk with an explicit stack instead.
"""

from __future__ import annotations

import os
import stat
import threading
from collections import deque
from pathlib import Path
from typing import Callable, Iterator


def walk(root: Path | str) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(root)` top-down with sorted names, links to folders listed but not entered.

    Same order as os.walk with `dirnames.sort()` (a pre-order of sorted names), so a tar
    written from it is byte-identical to one written from os.walk. Unreadable folders are
    skipped, as os.walk skips them.
    """
    stack = [os.fspath(root)]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as it:
                entries = list(it)
        except OSError:
            continue
        dirnames: list[str] = []
        filenames: list[str] = []
        enter: set[str] = set()
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirnames if is_dir else filenames).append(entry.name)
            if is_dir and not entry.is_symlink():
                enter.add(entry.name)
        dirnames.sort()
        filenames.sort()
        yield top, dirnames, filenames
        stack.extend(os.path.join(top, d) for d in reversed(dirnames) if d in enter)


def remove_tree(path: Path | str) -> None:
    """Delete a folder and everything in it, however deep, never following a link.

    Best effort, like `shutil.rmtree(ignore_errors=True)`: what cannot be removed stays.
    Folders are opened relative to their parent's descriptor, so a deep path never
    exceeds PATH_MAX and a link swapped in meanwhile is removed, not followed.
    """
    path = os.fspath(path)
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode) or not os.path.isdir(path):
            os.unlink(path)
            return
    except OSError:
        return
    parent = os.path.dirname(os.path.abspath(path))
    try:
        parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    # Each frame: the folder's descriptor, its name in its parent, the parent's descriptor,
    # and the subfolders already entered (one that could not be emptied is not retried).
    base = os.path.basename(os.path.abspath(path))
    try:
        first = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)
    except OSError:
        os.close(parent_fd)
        return
    stack: list[tuple[int, str, int, set[str]]] = [(first, base, parent_fd, set())]
    while stack:
        fd, name, up, entered = stack[-1]
        child: tuple[int, str, int, set[str]] | None = None
        try:
            with os.scandir(fd) as it:
                entries = list(it)
        except OSError:
            entries = []
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if not is_dir:
                try:
                    os.unlink(entry.name, dir_fd=fd)
                except OSError:
                    pass
            elif entry.name not in entered:
                entered.add(entry.name)
                try:
                    child = (os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd), entry.name, fd, set())
                except OSError:
                    continue
                break
        if child is not None:
            stack.append(child)
            continue
        stack.pop()
        os.close(fd)
        try:
            os.rmdir(name, dir_fd=up)
        except OSError:
            pass
    os.close(parent_fd)


# ---------------------------------------------------------------- removing off the session's path

BACKLOG = 8  # removals waiting beyond this are done by whoever asks (the disk is the bottleneck then)
_jobs: deque[Callable[[], None]] = deque()
_guard = threading.Lock()
_changed = threading.Condition(_guard)  # a job was queued, or the last one done, or a run ended
_worker: threading.Thread | None = None
_busy = 0  # jobs queued or running
_holders = 0  # runs recording now (open `Cleanup`s): while any is, the cleanup thread waits for work


def later(job: Callable[[], None], *, optional: bool = False) -> bool:
    """Run a cleanup (removing a finished session's folder, say) on a thread of its own, in
    order, so the next session need not wait on the disk for it. The thread is not a daemon:
    the process does not exit before every cleanup asked for is done; `wait_later()` waits
    for them sooner. A cleanup that raises is dropped (removal is best effort anyway).
    `optional` (work done ahead, such as the next session's folder): with the backlog full it
    is not done at all, rather than done by the caller on its session's path: False then."""
    global _worker, _busy
    with _guard:
        if len(_jobs) < BACKLOG:
            _jobs.append(job)
            _busy += 1
            if _worker is None:
                _worker = threading.Thread(target=_work, name="benchtape-cleanup")
                _worker.start()
            else:
                _changed.notify_all()
            return True
    if optional:
        return False
    job()
    return True


class Cleanup:
    """One run's cleanups, on the shared cleanup thread (`later`), each run's its own: what a
    run parks waits for that run's next harness, and its end waits for its own cleanups only,
    so two runs in one process (the public API from a notebook) neither hold nor release each
    other's work.

    `park` is `later`, but not before the run's next harness has started (`release`):
    removing a finished session's folders takes the disk (~12 ms of unlinks for the demo's)
    while the next session opens, starts its harness and snapshots its staged tree, and while
    this one is graded; once a harness runs, the session only waits for it. From `open` to
    `close` the cleanup thread waits for its next job instead of ending when it has none:
    starting a thread waits for it to run (Thread.start), which cost a restore for grading
    ~0.2-0.7 ms on a loaded machine each time it asked for its pool to be refilled."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)  # the last of this run's cleanups is done
        self._parked: list[Callable[[], None]] = []
        self._parking = False
        self._pending = 0  # this run's cleanups queued or running

    def open(self) -> None:
        """The run records from now on: park, and keep the cleanup thread waiting for work."""
        global _holders
        with self._lock:
            if self._parking:
                return
            self._parking = True
        with _guard:
            _holders += 1

    def later(self, job: Callable[[], None], *, optional: bool = False) -> bool:
        """`later`, counted as this run's (its `close` waits for it)."""
        with self._lock:
            self._pending += 1
        if later(lambda: self._counted(job), optional=optional):
            return True
        self._done()
        return False

    def park(self, job: Callable[[], None], *, optional: bool = False) -> bool:
        """`later` once the run's next harness has started; outside a run's recording (or with
        a backlog) at once, `optional` as there."""
        with self._lock:
            if self._parking and len(self._parked) < BACKLOG:
                self._parked.append(job)
                return True
        return self.later(job, optional=optional)

    def release(self) -> None:
        """Hand the parked cleanups to the cleanup thread (a harness has started)."""
        with self._lock:
            jobs, self._parked = self._parked, []
        for job in jobs:
            self.later(job)

    def close(self) -> None:
        """The run has ended: what is parked goes now, and this returns once every cleanup the
        run asked for is done (the sessions' folders are gone when the run returns)."""
        global _holders
        with self._lock:
            was, self._parking = self._parking, False
        self.release()
        if was:
            with _guard:
                _holders -= 1
                _changed.notify_all()
        if _worker is threading.current_thread():
            return
        with self._lock:
            while self._pending:
                self._idle.wait()

    def _counted(self, job: Callable[[], None]) -> None:
        try:
            job()
        finally:
            self._done()

    def _done(self) -> None:
        with self._lock:
            self._pending -= 1
            if not self._pending:
                self._idle.notify_all()


def _work() -> None:
    global _worker, _busy
    while True:
        with _guard:
            while not _jobs and _holders:
                _changed.wait()
            if not _jobs:
                _worker = None
                return
            job = _jobs.popleft()
        try:
            job()
        except Exception:  # noqa: BLE001 - best effort, like remove_tree itself
            pass
        finally:
            with _guard:
                _busy -= 1
                if not _busy:
                    _changed.notify_all()


def wait_later() -> None:
    """Return once every cleanup asked for so far (by any run) is done."""
    with _guard:
        if _worker is threading.current_thread():
            return
        while _busy:
            _changed.wait()
