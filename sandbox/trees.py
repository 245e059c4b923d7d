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
        child = None
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


_parked: list[Callable[[], None]] = []
_parking = False


def park(job: Callable[[], None], *, optional: bool = False) -> bool:
    """`later`, but while a run records, not before its next harness has started
    (`release_parked`): removing a finished session's folders takes the disk (~12 ms of
    unlinks for the demo's) while the next session opens, starts its harness and snapshots
    its staged tree, and while this one is graded; once a harness runs, the session only
    waits for it. Outside a run (regrade, report), or with a backlog, it is `later`
    (`optional` as there)."""
    with _guard:
        if _parking and len(_parked) < BACKLOG:
            _parked.append(job)
            return True
    return later(job, optional=optional)


def parking(on: bool) -> None:
    """A run records (`on`) or has ended: then whatever is parked goes to the cleanup thread.
    While a run records, the cleanup thread waits for its next job instead of ending when it
    has none: starting a thread waits for it to run (Thread.start), which cost a restore for
    grading ~0.2-0.7 ms on a loaded machine each time it asked for its pool to be refilled."""
    global _parking
    with _guard:
        _parking = on
        _changed.notify_all()
    if not on:
        release_parked()


def release_parked() -> None:
    """Hand the parked cleanups to the cleanup thread (a harness has started)."""
    with _guard:
        jobs = _parked[:]
        _parked.clear()
    for job in jobs:
        later(job)


def _work() -> None:
    global _worker, _busy
    while True:
        with _guard:
            while not _jobs and _parking:
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
    """Return once every cleanup asked for so far is done."""
    with _guard:
        if _worker is threading.current_thread():
            return
        while _busy:
            _changed.wait()
